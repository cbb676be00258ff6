# SPDX-License-Identifier: BSD-3-Clause
# scripts/scaling-lib.sh: shared by scripts/stencil-scaling.sh and scripts/halo3d-scaling.sh (sourced, not
# run): the MPI stacks a launch runs on, the GPUs, one launch with its log, and the time budget.
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
