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
  --impi DIR, --impi-env "V=X ..", --ucx DIR, --mpiexec PATH, --no-mpiacc-run, --backend B, --share, --mps,
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

gpus_list="1 2 4" sizes="256" method=persistent radius=1 iters="" passes=3
sc_value() { # this script's options with a value (sc_parse takes the others)
  case $1 in
    --gpus) gpus_list=$2 ;; --sizes) sizes=$2 ;; --method) method=$2 ;; --radius) radius=$2 ;;
    --iters) iters=$2 ;; --passes) passes=$2 ;;
    *) return 1 ;;
  esac
}
sc_parse "$@"
sc_posints $gpus_list $sizes $radius $passes $LIMIT ${iters:+$iters}
[ -n "$gpus_list" ] && [ -n "$sizes" ] || die_usage "--gpus and --sizes need at least one value"
case $method in persistent|alltoallw) ;; *) die_usage "bad value '$method' for --method" ;; esac
[ $quick = 1 ] && passes=2
[ -n "$iters" ] || iters=$([ $quick = 1 ] && echo 50 || echo 100)
sc_setup halo3d
stacks=(mpiacc)
[ "$backend" = cuda ] && [ -n "${UCX_LIB:-}" ] && [ "$method" = persistent ] && stacks+=(ucx)
[ -n "$IMPI_MPIEXEC" ] && [ "$method" = persistent ] && stacks+=(impi)

points=()
for n in $gpus_list; do
  sc_fits "$n" || continue
  for s in $sizes; do points+=("$n $s"); done
done
[ ${#points[@]} -gt 0 ] || sc_die "no point to run"

# The estimate (sc_estimate): the 7-point stencil at 1.7e11 (SP) and 1.0e11 (DP) cells per second, 40 us of
# exchange per iteration, the reference's checks 8 passes over the data.
estimate() {
  local tot=0 p
  for p in "${points[@]}"; do
    read -r n s <<<"$p"
    tot=$(sc_estimate "$tot" "$n" $((s * s * s)) "$iters" 1.7e11 1.0e11 8 40e-6)
  done
  echo "$tot"
}

sc_outdir halo3d
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
  sc_run_point "halo3d_$tag" "$n" "${common[@]}"
done
[ $dry = 1 ] && exit 0

sc_finish halo3d --gpus "$gpus_list" --weak "$sizes"
