# SPDX-License-Identifier: BSD-3-Clause
# scripts/scaling-lib.sh: shared by scripts/stencil-scaling.sh and scripts/halo3d-scaling.sh (sourced, not
# run): the options both take, the MPI stacks a launch runs on, the GPUs, the points' launches with their logs,
# the time estimate, and the summary and plot at the end.  The script defines usage, die_usage and sc_value, and
# owns its points, the stacks array and the common arguments of a launch; this file does the rest.
#
# Stacks (the environment of one launch):
#   mpiacc  the program linked with mpiacc (stencil2d, halo3d) on MPICH; through BUILD/tools/mpiacc-run when it
#           exists (it preloads the library the program already links, and sets what mpiacc needs), with the
#           UCX environment below
#   ucx     a cuda-aware program (no mpiacc) on the same MPICH with the CUDA-enabled UCX:
#           LD_LIBRARY_PATH=<libucx lib> MPIR_CVAR_CH4_NETMOD=ucx MPIR_CVAR_NOLOCAL=1
#   impi    a cuda-aware program on Intel MPI: its libmpi.so.12 first on LD_LIBRARY_PATH (the programs carry
#           a RUNPATH, which LD_LIBRARY_PATH overrides), its mpiexec, I_MPI_OFFLOAD=1
# Both MPICH stacks get the same UCX environment, so mpiacc and its peer move device data on the same transport.

SC_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

sc_die() { echo "$SC_NAME: $*" >&2; exit 1; }
sc_posint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
# sc_posints VALUE...: each a positive integer, else a usage error.
sc_posints() {
  local v
  for v in "$@"; do sc_posint "$v" || die_usage "bad value '$v' (expected a positive integer)"; done
}

# sc_parse "$@": the command line.  The options both scripts take are handled here (defaults: --timeout 300,
# --backend cuda); an option that takes a value and only this script has goes to the script's
# `sc_value OPTION VALUE`, which sets it and returns 0, or returns 1 for an unknown option.  Then BUILD and OUT.
sc_parse() {
  LIMIT=300 backend=cuda quick=0 share=0 dry=0 mps=0
  IMPI_DIR="" IMPI_ENV="" UCX_LIB="" MPIEXEC="" SC_NO_MPIACC_RUN=0
  local args=()
  while [ $# -gt 0 ]; do
    case $1 in
      -h|--help) usage; exit 0 ;;
      --impi|--impi-env|--ucx|--mpiexec|--timeout|--backend)
        [ $# -ge 2 ] || die_usage "option '$1' needs a value"
        case $1 in
          --impi) IMPI_DIR=$2 ;; --impi-env) IMPI_ENV=$2 ;; --ucx) UCX_LIB=$2 ;; --mpiexec) MPIEXEC=$2 ;;
          --timeout) LIMIT=$2 ;; --backend) backend=$2 ;;
        esac
        shift 2 ;;
      --quick) quick=1; shift ;;
      --share) share=1; shift ;;
      --mps) mps=1 share=1; shift ;;
      --dry-run) dry=1; shift ;;
      --no-mpiacc-run) SC_NO_MPIACC_RUN=1; shift ;;
      --) shift; args+=("$@"); break ;;
      -*)
        sc_value "$1" "${2-}" || die_usage "unknown option '$1'"
        [ $# -ge 2 ] || die_usage "option '$1' needs a value"
        shift 2 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  [ ${#args[@]} -eq 2 ] || die_usage "expected BUILD_DIR and OUTDIR"
  BUILD=${args[0]} OUT=${args[1]}
}

# sc_setup EXAMPLE: prog and peer (BUILD/examples/EXAMPLE/EXAMPLE and its -cuda-aware twin, which the cuda backend
# needs), --backend checked, then the MPI stacks and the GPUs.
sc_setup() {
  prog=$BUILD/examples/$1/$1
  peer=$BUILD/examples/$1/$1-cuda-aware
  [ -x "$prog" ] || sc_die "$prog not found (build first)"
  case $backend in cuda|opencl|auto) ;; *) die_usage "bad value '$backend' for --backend" ;; esac
  [ "$backend" != cuda ] || [ -x "$peer" ] || sc_die "$peer not found (configure with CUDA: MPIACC_WITH_CUDA)"
  sc_setup_mpi
  sc_gpus
  [ "$mps" = 1 ] && [ "$dry" = 0 ] && sc_mps_start
  return 0
}

# sc_mps_start (--mps): a CUDA MPS daemon of the sweep's own (pipe and log under OUT/mps), stopped when the script
# exits; the ranks sharing a GPU then run their kernels side by side instead of time-slicing it.
sc_mps_start() {
  command -v nvidia-cuda-mps-control >/dev/null || sc_die "--mps: nvidia-cuda-mps-control not found"
  export CUDA_MPS_PIPE_DIRECTORY=$OUT/mps/pipe CUDA_MPS_LOG_DIRECTORY=$OUT/mps/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || sc_die "--mps: the MPS daemon did not start (log: $CUDA_MPS_LOG_DIRECTORY)"
  trap 'echo quit | nvidia-cuda-mps-control >/dev/null 2>&1' EXIT
  echo "$SC_NAME: MPS daemon started (pipe $CUDA_MPS_PIPE_DIRECTORY), stopped at the end"
}

# sc_setup_mpi: MPIEXEC (MPICH's: --mpiexec, $MPI_HOME/bin, the repository's .venv, PATH), UCX_LIB (--ucx, else
# $UCX_ROOT/lib, else the libucx wheel next to MPICH), IMPI_MPIEXEC / IMPI_LIB / IMPI_PROV (--impi DIR), SC_RUNNER.
sc_setup_mpi() {
  local repo cand
  repo=$(cd "$SC_HERE/.." && pwd)
  if [ -z "${MPIEXEC:-}" ]; then
    for cand in "${MPI_HOME:+$MPI_HOME/bin/mpiexec}" "$repo/.venv/bin/mpiexec" "$(command -v mpiexec 2>/dev/null)"; do
      [ -n "$cand" ] && [ -x "$cand" ] && { MPIEXEC=$cand; break; }
    done
  fi
  [ -n "${MPIEXEC:-}" ] && [ -x "$MPIEXEC" ] || sc_die "no MPICH mpiexec (give --mpiexec or MPI_HOME)"
  if [ -z "${UCX_LIB:-}" ]; then
    for cand in "${UCX_ROOT:+$UCX_ROOT/lib}" "$(dirname "$(dirname "$MPIEXEC")")"/lib/python3*/site-packages/libucx/lib; do
      [ -e "$cand/libucp.so.0" ] || [ -e "$cand/libucp.so" ] && { UCX_LIB=$cand; break; }
    done
  fi
  SC_RUNNER=""
  [ -x "$BUILD/tools/mpiacc-run" ] && [ "${SC_NO_MPIACC_RUN:-0}" = 0 ] && SC_RUNNER=$BUILD/tools/mpiacc-run
  IMPI_MPIEXEC="" IMPI_LIB="" IMPI_PROV=""
  if [ -n "${IMPI_DIR:-}" ]; then
    for cand in "$IMPI_DIR/bin/mpiexec.hydra" "$IMPI_DIR/bin/mpiexec"; do
      [ -x "$cand" ] && { IMPI_MPIEXEC=$cand; break; }
    done
    for cand in "$IMPI_DIR/lib/release" "$IMPI_DIR/lib" "$IMPI_DIR/lib64"; do
      [ -e "$cand/libmpi.so.12" ] && { IMPI_LIB=$cand; break; }
    done
    for cand in "$IMPI_DIR/lib/libfabric" "$IMPI_DIR/lib/prov" "$IMPI_DIR/libfabric/lib/prov" "$IMPI_DIR/opt/mpi/libfabric/lib/prov"; do
      ls "$cand"/*fi*.so >/dev/null 2>&1 && { IMPI_PROV=$cand; break; }
    done
    [ -n "$IMPI_MPIEXEC" ] || sc_die "--impi $IMPI_DIR: no bin/mpiexec.hydra or bin/mpiexec"
    [ -n "$IMPI_LIB" ] || sc_die "--impi $IMPI_DIR: no libmpi.so.12 under lib/release, lib or lib64"
  fi
}

# sc_gpus: GPUS = the CUDA GPUs visible (CUDA_VISIBLE_DEVICES, else nvidia-smi), 0 without.
sc_gpus() {
  GPUS=0
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    GPUS=$(awk -F, '{print NF}' <<<"$CUDA_VISIBLE_DEVICES")
  elif command -v nvidia-smi >/dev/null 2>&1; then
    GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  fi
}

# sc_describe: one line per stack.
sc_describe() {
  echo "  mpiacc: ${SC_RUNNER:-$MPIEXEC}${UCX_LIB:+ with UCX from $UCX_LIB}"
  if [ -n "${UCX_LIB:-}" ]; then echo "  ucx:    $MPIEXEC, LD_LIBRARY_PATH=$UCX_LIB MPIR_CVAR_CH4_NETMOD=ucx MPIR_CVAR_NOLOCAL=1"
  else echo "  ucx:    not run (no CUDA-enabled UCX found: give --ucx DIR, the directory of libucp.so.0)"; fi
  if [ -n "$IMPI_MPIEXEC" ]; then echo "  impi:   $IMPI_MPIEXEC, LD_LIBRARY_PATH=$IMPI_LIB${IMPI_PROV:+ FI_PROVIDER_PATH=$IMPI_PROV} I_MPI_OFFLOAD=1"
  else echo "  impi:   not run (no --impi DIR)"; fi
}

# sc_launch NAME STACK N PROGRAM ARGS...: one launch, its output in $OUT/logs/NAME.log, its rc in SC_RC; a line
# with the seconds in $OUT/logs/sweep.log.  A failed launch sets SC_STATUS=1.
sc_launch() {
  local name=$1 stack=$2 n=$3 t0 envs=() cmd=()
  shift 3
  envs=(-u UCX_ROOT UCX_WARN_UNUSED_ENV_VARS=n)
  case $stack in
    mpiacc|ucx)
      [ -n "${UCX_LIB:-}" ] && envs+=("LD_LIBRARY_PATH=$UCX_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
                                        MPIR_CVAR_CH4_NETMOD=ucx MPIR_CVAR_NOLOCAL=1)
      if [ "$stack" = mpiacc ] && [ -n "$SC_RUNNER" ]; then cmd=("$SC_RUNNER" --mpiexec "$MPIEXEC" -n "$n")
      else cmd=("$MPIEXEC" -n "$n"); fi ;;
    impi)
      envs+=("LD_LIBRARY_PATH=$IMPI_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" I_MPI_OFFLOAD=1 "I_MPI_ROOT=$IMPI_DIR")
      [ -n "$IMPI_PROV" ] && envs+=("FI_PROVIDER_PATH=$IMPI_PROV")
      for e in ${IMPI_ENV:-}; do envs+=("$e"); done
      cmd=("$IMPI_MPIEXEC" -n "$n") ;;
  esac
  echo "=== $name: ${cmd[*]} $*" >>"$OUT/logs/sweep.log"
  t0=$(date +%s.%N)
  timeout "$LIMIT" env "${envs[@]}" "${cmd[@]}" "$@" >"$OUT/logs/$name.log" 2>&1
  SC_RC=$?
  printf '    %-40s rc=%d %6.1f s\n' "$name" "$SC_RC" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')" |
    tee -a "$OUT/logs/sweep.log"
  if [ "$SC_RC" -ne 0 ]; then
    SC_STATUS=1
    tail -5 "$OUT/logs/$name.log" | sed 's/^/      /'
  fi
}

# sc_fits N: whether N ranks run here: no more than the GPUs visible, or --share; otherwise says that N is skipped.
sc_fits() {
  if [ "$1" -gt "$GPUS" ] && [ "$share" = 0 ]; then
    echo "$SC_NAME: $1 GPUs: skipped ($GPUS visible; --share runs ranks on shared GPUs)"
    return 1
  fi
  # ranks sharing a GPU without MPS time-slice it: figures of another kind (said once)
  if [ "$1" -gt "$GPUS" ] && [ "$backend" = cuda ] && [ -z "${SC_MPS_SAID:-}" ] &&
    [ ! -e "${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/control" ]; then
    echo "$SC_NAME: WARNING: no CUDA MPS daemon found (${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/control): ranks sharing" \
      "a GPU time-slice it; use --mps, or start one (nvidia-cuda-mps-control -d), for the figures of docs/performance.md"
    SC_MPS_SAID=1
  fi
}

# sc_estimate TOTAL N CELLS ITERS SP_RATE DP_RATE CHECKS EXCHANGE: TOTAL plus the seconds of one point (N ranks of
# CELLS cells, ITERS iterations per pass), single and double precision, every stack: start-up, the CPU reference
# (host memory bound, shared by the ranks of the node) and its CHECKS passes over the data, device memory set-up,
# and passes x iterations at the H100 rates SP_RATE / DP_RATE (cells per second) plus EXCHANGE seconds per iteration.
sc_estimate() {
  awk -v t="$1" -v n="$2" -v cells="$3" -v it="$4" -v rsp="$5" -v rdp="$6" -v ck="$7" -v ex="$8" -v pa="$passes" \
      -v ns="${#stacks[@]}" 'BEGIN {
    s = 0
    for (dp = 0; dp < 2; dp++) {
      es = dp ? 8 : 4; rate = dp ? rdp : rsp
      ref = cells * n * it * es * 2 / 60e9 + cells * n * es * ck / 20e9
      run = 0.2 + cells * es * 3 / 10e9 + (pa + 3) * it * (cells / rate + ex)
      s += ns * ref + (3 + 2 * (ns - 1)) * run
    }
    printf "%.0f", t + 3 * ns + s }'
}

# sc_outdir EXAMPLE: OUT/logs and OUT/raw, without the raw CSV files of an earlier sweep of EXAMPLE.
sc_outdir() {
  mkdir -p "$OUT/logs" "$OUT/raw"
  rm -f "$OUT"/raw/"$1"_*.csv
  : >>"$OUT/logs/sweep.log"
}

# sc_run_point NAME N ARGS...: the launches of one point, one per stack: prog with the manual and mpiacc variants
# on the mpiacc stack, peer on the others; each writes OUT/raw/NAME_STACK.csv.
sc_run_point() {
  local name=$1 n=$2 st
  shift 2
  for st in "${stacks[@]}"; do
    if [ "$st" = mpiacc ]; then
      sc_launch "${name}_mpiacc" mpiacc "$n" "$prog" "$@" --variant manual,mpiacc --csv "$OUT/raw/${name}_mpiacc.csv"
    else
      sc_launch "${name}_$st" "$st" "$n" "$peer" "$@" --csv "$OUT/raw/${name}_$st.csv"
    fi
  done
}

# sc_finish EXAMPLE ARGS...: one CSV (OUT/EXAMPLE_scaling.csv) and the summary (OUT/EXAMPLE_summary.md) from the raw
# files by scripts/scaling_summary.py EXAMPLE with ARGS (the sweep), the plot of the CSV; exits with SC_STATUS.
sc_finish() {
  local ex=$1
  shift
  "${PYTHON:-python3}" "$SC_HERE/scaling_summary.py" "$ex" --raw "$OUT/raw" "$@" --csv "$OUT/${ex}_scaling.csv" \
    --md "$OUT/${ex}_summary.md" || SC_STATUS=1
  [ -s "$OUT/${ex}_scaling.csv" ] && { "${PYTHON:-python3}" "$SC_HERE/plot.py" "$OUT/${ex}_scaling.csv" ||
    echo "$SC_NAME: no PNG (see plot.py's message)"; }
  exit $SC_STATUS
}
