#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/halo3d-scaling.sh — halo3d on 1, 2, 4 GPUs (one rank per GPU, MPI_Dims_create grid, periodic), weak scaling
# of 256³ per GPU, single and double precision, every variant: manual staging, mpiacc, mpiacc --overlap (halo3d),
# and the exchange written for a CUDA-aware MPI with and without overlap (halo3d-cuda-aware, no mpiacc) on MPICH
# with the CUDA-enabled UCX and, given --impi, on Intel MPI.  Output under OUTDIR: halo3d_scaling.csv,
# halo3d_scaling.png, halo3d_summary.md (tables, the timeline, the issue-32 target: exchange hidden to <= 10 % of an
# iteration at 256³ on 4 GPUs), logs/, raw/.  See docs/scaling.md.
set -u
SC_NAME=halo3d-scaling.sh
usage() {
  cat <<'EOF'
usage: scripts/halo3d-scaling.sh [options] BUILD_DIR OUTDIR

Per point (GPUs x per-rank size) two launches, three with --impi:
  halo3d --variant manual,mpiacc --overlap-both      (mpiacc stack)
  halo3d-cuda-aware --overlap-both                   (MPICH + CUDA UCX, no mpiacc)
  halo3d-cuda-aware --overlap-both                   (Intel MPI, with --impi)
each with --precision both --method METHOD; every run is validated bitwise against the CPU reference.

options:
  --gpus "LIST"       GPU counts = ranks (default "1 2 4"); above the GPUs visible: skipped unless --share
  --sizes "LIST"      per-rank cube edges (default "256")
  --method M          persistent (default) or alltoallw (MPI_Neighbor_alltoallw: not run on the cuda-aware
                      executable, whose MPI then moves device memory inside a collective)
  --radius R          stencil radius = halo width (default 1)
  --iters N           iterations per pass (default 100; --quick 50)
  --passes N          timed passes (default 3; --quick 2)
  --quick             the preset of the ~6-minute budget
  --impi DIR, --impi-env "V=X ..", --ucx DIR, --mpiexec PATH, --no-mpiacc-run, --backend B, --share,
  --timeout S, --dry-run
                      as in scripts/stencil-scaling.sh
  --help, -h          print this help and exit

Environment: PYTHON (default python3) runs scripts/scaling_summary.py and scripts/plot.py (the PNG needs
matplotlib: pip install matplotlib).
Exit status: 0 when every launch ran and validated, 1 otherwise, 2 on bad options.
EOF
}
die_usage() { echo "$SC_NAME: $*" >&2; usage >&2; exit 2; }
. "$(dirname "$0")/scaling-lib.sh"

gpus_list="1 2 4" sizes="256" method=persistent radius=1 iters="" passes=3 quick=0 LIMIT=300 share=0 dry=0 backend=cuda
IMPI_DIR="" IMPI_ENV="" UCX_LIB="" MPIEXEC="" SC_NO_MPIACC_RUN=0
args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --gpus|--sizes|--method|--radius|--iters|--passes|--impi|--impi-env|--ucx|--mpiexec|--timeout|--backend)
      [ $# -ge 2 ] || die_usage "option '$1' needs a value"
      case $1 in
        --gpus) gpus_list=$2 ;; --sizes) sizes=$2 ;; --method) method=$2 ;; --radius) radius=$2 ;;
        --iters) iters=$2 ;; --passes) passes=$2 ;; --impi) IMPI_DIR=$2 ;; --impi-env) IMPI_ENV=$2 ;;
        --ucx) UCX_LIB=$2 ;; --mpiexec) MPIEXEC=$2 ;; --timeout) LIMIT=$2 ;; --backend) backend=$2 ;;
      esac
      shift 2 ;;
    --quick) quick=1; shift ;;
    --share) share=1; shift ;;
    --dry-run) dry=1; shift ;;
    --no-mpiacc-run) SC_NO_MPIACC_RUN=1; shift ;;
    --) shift; args+=("$@"); break ;;
    -*) die_usage "unknown option '$1'" ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -eq 2 ] || die_usage "expected BUILD_DIR and OUTDIR"
for v in $gpus_list $sizes $radius $passes $LIMIT ${iters:+$iters}; do
  sc_posint "$v" || die_usage "bad value '$v' (expected a positive integer)"
done
[ -n "$gpus_list" ] && [ -n "$sizes" ] || die_usage "--gpus and --sizes need at least one value"
case $method in persistent|alltoallw) ;; *) die_usage "bad value '$method' for --method" ;; esac
BUILD=${args[0]} OUT=${args[1]}
[ $quick = 1 ] && passes=2
[ -n "$iters" ] || iters=$([ $quick = 1 ] && echo 50 || echo 100)
prog=$BUILD/examples/halo3d/halo3d
peer=$BUILD/examples/halo3d/halo3d-cuda-aware
[ -x "$prog" ] || sc_die "$prog not found (build first)"
case $backend in cuda|opencl|auto) ;; *) die_usage "bad value '$backend' for --backend" ;; esac
[ "$backend" != cuda ] || [ -x "$peer" ] || sc_die "$peer not found (configure with CUDA: MPIACC_WITH_CUDA)"
sc_setup_mpi
sc_gpus
stacks=(mpiacc)
[ "$backend" = cuda ] && [ -n "${UCX_LIB:-}" ] && [ "$method" = persistent ] && stacks+=(ucx)
[ -n "$IMPI_MPIEXEC" ] && [ "$method" = persistent ] && stacks+=(impi)

points=()
for n in $gpus_list; do
  if [ "$n" -gt "$GPUS" ] && [ $share = 0 ]; then
    echo "$SC_NAME: $n GPUs: skipped ($GPUS visible; --share runs ranks on shared GPUs)"
    continue
  fi
  for s in $sizes; do points+=("$n $s"); done
done
[ ${#points[@]} -gt 0 ] || sc_die "no point to run"

estimate() { # as stencil-scaling.sh: start-up, CPU reference, set-up, passes (stencil at ~1.7e11 cells/s SP)
  local tot=0 p
  for p in "${points[@]}"; do
    read -r n s <<<"$p"
    tot=$(awk -v t="$tot" -v n="$n" -v s="$s" -v it="$iters" -v pa="$passes" -v ns="${#stacks[@]}" 'BEGIN {
      cells = s * s * s; x = 0
      for (dp = 0; dp < 2; dp++) {
        es = dp ? 8 : 4; rate = dp ? 1.0e11 : 1.7e11
        ref = cells * n * it * es * 2 / 60e9 + cells * n * es * 8 / 20e9
        run = 0.2 + cells * es * 3 / 10e9 + (pa + 3) * it * (cells / rate + 40e-6)
        x += ns * ref + (3 + 2 * (ns - 1)) * run
      }
      printf "%.0f", t + 3 * ns + x }')
  done
  echo "$tot"
}

mkdir -p "$OUT/logs" "$OUT/raw"
rm -f "$OUT"/raw/halo3d_*.csv
: >>"$OUT/logs/sweep.log"
{
  echo "halo3d-scaling: $GPUS GPU(s) visible; GPUs: $gpus_list; sizes: $sizes per rank; method $method; radius" \
       "$radius; $iters iterations, $passes passes$([ $quick = 1 ] && echo "; --quick")"
  sc_describe
  [ "$method" = persistent ] || echo "  (--method $method: the cuda-aware executables are not run)"
  echo "  ${#points[@]} point(s), $(( ${#points[@]} * ${#stacks[@]} )) launch(es); estimated $(estimate) s (H100 rates)"
} | tee -a "$OUT/logs/sweep.log"

SC_STATUS=0
for p in "${points[@]}"; do
  read -r n s <<<"$p"
  common=(--backend "$backend" --size "$s" --radius "$radius" --iters "$iters" --passes "$passes" --precision both
          --method "$method" --overlap-both)
  tag=n${n}_$s
  if [ $dry = 1 ]; then
    echo "  $tag: halo3d/halo3d-cuda-aware ${common[*]} on ${stacks[*]}"
    continue
  fi
  echo "--- $n GPU(s), ${s}^3 per rank" | tee -a "$OUT/logs/sweep.log"
  for st in "${stacks[@]}"; do
    if [ "$st" = mpiacc ]; then
      sc_launch "halo3d_${tag}_mpiacc" mpiacc "$n" "$prog" "${common[@]}" --variant manual,mpiacc \
        --csv "$OUT/raw/halo3d_${tag}_mpiacc.csv"
    else
      sc_launch "halo3d_${tag}_$st" "$st" "$n" "$peer" "${common[@]}" --csv "$OUT/raw/halo3d_${tag}_$st.csv"
    fi
  done
done
[ $dry = 1 ] && exit 0

"${PYTHON:-python3}" "$SC_HERE/scaling_summary.py" halo3d --raw "$OUT/raw" --gpus "$gpus_list" --weak "$sizes" \
  --csv "$OUT/halo3d_scaling.csv" --md "$OUT/halo3d_summary.md" || SC_STATUS=1
[ -s "$OUT/halo3d_scaling.csv" ] && { "${PYTHON:-python3}" "$SC_HERE/plot.py" "$OUT/halo3d_scaling.csv" ||
  echo "$SC_NAME: no PNG (see plot.py's message)"; }
exit $SC_STATUS
