#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/stencil-scaling.sh — Stencil2D on 1, 2, 4 GPUs (one rank per GPU): weak scaling (1024², 4096², 8192² per
# GPU) and strong scaling (16384² in total), single and double precision, every variant: manual staging, mpiacc,
# mpiacc --overlap (examples/stencil2d), and the same exchange written for a CUDA-aware MPI with and without overlap
# (stencil2d-cuda-aware, no mpiacc) on MPICH with the CUDA-enabled UCX and, given --impi, on Intel MPI.
# Output under OUTDIR: stencil_scaling.csv, stencil_scaling.png (scripts/plot.py), stencil_summary.md (tables and the
# issue-32 targets), logs/ (one log per launch, sweep.log), raw/ (the programs' own CSV files).  See docs/scaling.md.
set -u
SC_NAME=stencil-scaling.sh
usage() {
  cat <<'EOF'
usage: scripts/stencil-scaling.sh [options] BUILD_DIR OUTDIR

Per point (GPUs x per-rank size) two launches, three with --impi:
  stencil2d --variant manual,mpiacc --overlap-both        (mpiacc stack)
  stencil2d-cuda-aware --overlap-both                     (MPICH + CUDA UCX, no mpiacc)
  stencil2d-cuda-aware --overlap-both                     (Intel MPI, with --impi)
each with --precision both; every run is validated against the CPU reference (0 errors required).

options:
  --gpus "LIST"       GPU counts = ranks, one rank per GPU (default "1 2 4"; grid P x Q, P the largest
                      divisor <= sqrt(n)); a count above the GPUs visible is skipped unless --share
  --weak "LIST"       per-GPU sizes N (N x N per rank; default "1024 4096 8192"; "" for none)
  --strong "LIST"     total sizes S (S x S split over the grid; default "16384"; "" for none)
  --iters N           --num-iters of every run (default: 200 up to 2048^2 per rank, 100 up to 4096^2, 50 up to
                      8192^2, 20 beyond)
  --passes N          timed passes (default 3; plus a warm-up, a kernels-alone and an exchanges-alone pass)
  --quick             half the iterations, 2 passes (the whole sweep of both examples in ~6 minutes on 4 GPUs)
  --iters-per-exchange N   halo width h (default 1)
  --impi DIR          also run the cuda-aware executable on Intel MPI (DIR: bin/mpiexec[.hydra],
                      lib[/release]/libmpi.so.12; e.g. a virtual environment with the impi-rt wheel)
  --impi-env "V=X .." extra environment of the Intel MPI launches
  --ucx DIR           directory of the CUDA-enabled UCX's libucp.so.0 (default: $UCX_ROOT/lib, else the libucx wheel beside MPICH)
  --mpiexec PATH      MPICH's mpiexec (default: $MPI_HOME/bin, the repository's .venv, PATH)
  --no-mpiacc-run     launch stencil2d with mpiexec instead of BUILD_DIR/tools/mpiacc-run
  --backend B         cuda (default), or opencl/auto: the mpiacc stack only (no cuda-aware runs; with --share,
                      a check of the sweep on PoCL)
  --share             run points with more ranks than GPUs (ranks then share GPUs; start the CUDA MPS
                      daemon first, nvidia-cuda-mps-control -d, or they time-slice the GPU)
  --mps               --share with an MPS daemon of the script's own (under OUTDIR/mps), stopped at the end
  --timeout S         limit of one launch in seconds (default 300)
  --dry-run           print the estimate and the launches, run nothing
  --help, -h          print this help and exit

Environment: PYTHON (default python3) runs scripts/scaling_summary.py and scripts/plot.py (the PNG needs
matplotlib: pip install matplotlib).
Exit status: 0 when every launch ran and validated, 1 otherwise, 2 on bad options.
EOF
}
die_usage() { echo "$SC_NAME: $*" >&2; usage >&2; exit 2; }
. "$(dirname "$0")/scaling-lib.sh"

gpus_list="1 2 4" weak="1024 4096 8192" strong="16384" iters="" passes=3 h=1
sc_value() { # this script's options with a value (sc_parse takes the others)
  case $1 in
    --gpus) gpus_list=$2 ;; --weak) weak=$2 ;; --strong) strong=$2 ;; --iters) iters=$2 ;;
    --passes) passes=$2 ;; --iters-per-exchange) h=$2 ;;
    *) return 1 ;;
  esac
}
sc_parse "$@"
sc_posints $gpus_list $weak $strong $passes $h $LIMIT ${iters:+$iters}
[ -n "$gpus_list" ] || die_usage "--gpus needs at least one count"
[ -n "$weak$strong" ] || die_usage "nothing to run (--weak and --strong both empty)"
[ $quick = 1 ] && passes=2
sc_setup stencil2d

grid_of() { # n -> "P Q", P the largest divisor of n not above sqrt(n)
  local n=$1 p=1 d=1
  while [ $((d * d)) -le "$n" ]; do
    [ $((n % d)) -eq 0 ] && p=$d
    d=$((d + 1))
  done
  echo "$p $((n / p))"
}
iters_of() { # rows cols -> iterations
  local a=$(($1 * $2)) it
  if [ -n "$iters" ]; then it=$iters
  elif [ $a -le $((2048 * 2048)) ]; then it=200
  elif [ $a -le $((4096 * 4096)) ]; then it=100
  elif [ $a -le $((8192 * 8192)) ]; then it=50
  else it=20; fi
  [ $quick = 1 ] && [ -z "$iters" ] && it=$((it / 2))
  echo "$it"
}

# The points: "n rows cols scaling label" (a weak and a strong point of the same shape run once).
points=() seen=" "
for n in $gpus_list; do
  sc_fits "$n" || continue
  read -r P Q <<<"$(grid_of "$n")"
  for s in $weak; do points+=("$n $s $s weak $s"); seen+="$n:$s:$s "; done
  for S in $strong; do
    r=$((S / P)) c=$((S / Q))
    if [[ $seen == *" $n:$r:$c "* ]]; then points+=("$n $r $c strong-only $S"); else points+=("$n $r $c strong $S"); fi
    seen+="$n:$r:$c "
  done
done
[ ${#points[@]} -gt 0 ] || sc_die "no point to run"
stacks=(mpiacc)
[ "$backend" = cuda ] && [ -n "${UCX_LIB:-}" ] && stacks+=(ucx)
[ "$backend" = cuda ] && [ -n "$IMPI_MPIEXEC" ] && stacks+=(impi)

# The estimate (sc_estimate): Stencil2D at 2.2e11 (SP) and 1.4e11 (DP) cells per second, 30 us of exchange per
# iteration, the reference's checks 12 passes over the data.
estimate() {
  local tot=0 p
  for p in "${points[@]}"; do
    read -r n r c kind _ <<<"$p"
    [ "$kind" = strong-only ] && continue
    tot=$(sc_estimate "$tot" "$n" $((r * c)) "$(iters_of "$r" "$c")" 2.2e11 1.4e11 12 30e-6)
  done
  echo "$tot"
}

sc_outdir stencil
{
  echo "stencil-scaling: $GPUS GPU(s) visible; GPUs: $gpus_list; weak: ${weak:-none}; strong: ${strong:-none};" \
       "passes $passes; h $h${iters:+; iters $iters}$([ $quick = 1 ] && echo "; --quick")"
  sc_describe
  echo "  ${#points[@]} point(s), $(( ${#points[@]} * ${#stacks[@]} )) launch(es) at most; estimated $(estimate) s" \
       "(H100 rates; see logs/sweep.log for the real seconds)"
} | tee -a "$OUT/logs/sweep.log"

SC_STATUS=0
for p in "${points[@]}"; do
  read -r n r c kind label <<<"$p"
  [ "$kind" = strong-only ] && continue # the weak point of that shape serves the strong sweep
  read -r P Q <<<"$(grid_of "$n")"
  it=$(iters_of "$r" "$c")
  common=(--backend "$backend" --msize "${P}x$Q" --customSize "$r,$c" --num-iters "$it" --passes "$passes"
          --iters-per-exchange "$h" --precision both --overlap-both)
  tag=n${n}_${r}x$c
  if [ $dry = 1 ]; then
    echo "  $tag ($kind $label): stencil2d/stencil2d-cuda-aware ${common[*]} on ${stacks[*]}"
    continue
  fi
  echo "--- $n GPU(s), ${r}x$c per rank ($kind $label), $it iterations" | tee -a "$OUT/logs/sweep.log"
  sc_run_point "stencil_$tag" "$n" "${common[@]}"
done
[ $dry = 1 ] && exit 0

# One CSV, the summary and the plot.
sc_finish stencil --gpus "$gpus_list" --weak "$weak" --strong "$strong"
