#!/usr/bin/env bash
# scripts/stencil-scaling.sh — Stencil2D weak scaling: 1, 2, 4 ranks (grids 1x1, 1x2, 2x2), one rank per
# GPU where there are enough GPUs, per-rank sizes 1024^2 and 4096^2, single and double precision, three
# series: manual staging, mpiacc (default protocol), mpiacc --direct (direct protocol requested).
# Output: OUTDIR/stencil_scaling.csv (one row per point), OUTDIR/stencil_scaling.png (scripts/plot.py,
# when matplotlib is installed), the logs of every run under OUTDIR/logs. See docs/scaling.md.
set -u
usage() {
  cat <<'EOF'
usage: scripts/stencil-scaling.sh [options] BUILD_DIR OUTDIR

Runs BUILD_DIR/examples/stencil2d/stencil2d for every point of the sweep (two launches per point:
--variant both = manual + mpiacc with the default protocol; --variant mpiacc --direct) and writes
OUTDIR/stencil_scaling.csv with the parallel efficiency GFLOPS(n) / (n x GFLOPS(1)) of each series.

options:
  --ranks "LIST"     rank counts (default "1 2 4"; grid P x Q with P the largest divisor <= sqrt(n))
  --sizes "LIST"     per-rank sizes N (N x N per rank; default "1024 4096")
  --iters N          --num-iters of every run (default 200)
  --passes N         timed passes of every run, plus one warm-up (default 3)
  --iters-per-exchange N   halo width h of every run (default 1; messages grow with h)
  --gpus N           use the first N GPUs only (CUDA_VISIBLE_DEVICES); default: every visible GPU
  --backend B        cuda, opencl or auto (default cuda)
  --no-mps           never start MPS (ranks sharing a GPU then time-slice it)
  --timeout S        limit of one launch in seconds (default 300)
  --help, -h         print this help and exit

With more ranks than GPUs, the ranks share GPUs: the script then starts the CUDA MPS control daemon
(nvidia-cuda-mps-control -d) for that point and stops it after (echo quit | nvidia-cuda-mps-control),
when it runs as root with the CUDA backend; the CSV says so (columns gpus, ranks, mps). On a 1-GPU
machine every point with n > 1 is n ranks sharing one GPU.
Environment: MPI_HOME (default /opt/mpich): its bin/mpiexec launches the runs.
Exit status: 0 when every run validated, 1 when a run failed or did not validate, 2 on bad options.
EOF
}
die_usage() { echo "stencil-scaling.sh: $*" >&2; usage >&2; exit 2; }
posint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

ranks_list="1 2 4" sizes_list="1024 4096" iters=200 passes=3 h=1 gpus_opt="" backend=cuda use_mps=1 limit=300
args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --ranks|--sizes|--iters|--passes|--iters-per-exchange|--gpus|--backend|--timeout)
      [ $# -ge 2 ] || die_usage "option '$1' needs a value"
      case $1 in
        --ranks) ranks_list=$2 ;; --sizes) sizes_list=$2 ;; --iters) iters=$2 ;; --passes) passes=$2 ;; --iters-per-exchange) h=$2 ;;
        --gpus) gpus_opt=$2 ;; --backend) backend=$2 ;; --timeout) limit=$2 ;;
      esac
      shift 2 ;;
    --no-mps) use_mps=0; shift ;;
    --) shift; args+=("$@"); break ;;
    -*) die_usage "unknown option '$1'" ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -eq 2 ] || die_usage "expected BUILD_DIR and OUTDIR"
for v in $ranks_list $sizes_list $iters $passes $h $limit ${gpus_opt:+$gpus_opt}; do
  posint "$v" || die_usage "bad value '$v' (expected a positive integer)"
done
case $backend in cuda|opencl|auto) ;; *) die_usage "bad value '$backend' for --backend" ;; esac
build=${args[0]} out=${args[1]}
prog=$build/examples/stencil2d/stencil2d
here=$(cd "$(dirname "$0")" && pwd)
mpiexec=${MPI_HOME:-/opt/mpich}/bin/mpiexec
[ -x "$prog" ] || { echo "stencil-scaling.sh: $prog not found (build first)" >&2; exit 1; }
[ -x "$mpiexec" ] || mpiexec=$(command -v mpiexec) || { echo "stencil-scaling.sh: no mpiexec" >&2; exit 1; }
mkdir -p "$out/logs" "$out/raw"
rm -f "$out"/raw/*.csv

# GPUs: the visible ones (CUDA_VISIBLE_DEVICES or nvidia-smi), optionally only the first --gpus.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  IFS=, read -r -a visible <<<"$CUDA_VISIBLE_DEVICES"
elif command -v nvidia-smi >/dev/null 2>&1; then
  mapfile -t visible < <(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null)
else
  visible=()
fi
ngpu=${#visible[@]}
if [ -n "$gpus_opt" ]; then
  [ "$gpus_opt" -le "$ngpu" ] || { echo "stencil-scaling.sh: --gpus $gpus_opt but $ngpu visible" >&2; exit 1; }
  ngpu=$gpus_opt
  export CUDA_VISIBLE_DEVICES=$(IFS=,; echo "${visible[*]:0:$ngpu}")
fi
echo "stencil-scaling: $ngpu GPU(s) ${CUDA_VISIBLE_DEVICES:+(CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES) }ranks: $ranks_list;" \
     "sizes: $sizes_list; --num-iters $iters --passes $passes --iters-per-exchange $h; backend $backend" | tee "$out/logs/sweep.log"

# MPS, only while a point needs it; its pipes and logs in a private directory.
mps_dir="" mps_on=0
mps_start() {
  [ $mps_on -eq 1 ] && return 0
  mps_dir=$(mktemp -d /tmp/stencil-mps.XXXXXX)
  export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    mps_on=1
    sleep 1
  else
    echo "stencil-scaling: nvidia-cuda-mps-control -d failed; running without MPS" | tee -a "$out/logs/sweep.log"
  fi
}
mps_stop() {
  [ $mps_on -eq 1 ] || return 0
  echo quit | nvidia-cuda-mps-control
  sleep 1
  mps_on=0
  rm -rf "$mps_dir"
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
trap mps_stop EXIT

grid_of() { # n -> "PxQ", P the largest divisor of n not above sqrt(n)
  local n=$1 p=1 d=1
  while [ $((d * d)) -le "$n" ]; do
    [ $((n % d)) -eq 0 ] && p=$d
    d=$((d + 1))
  done
  echo "${p}x$((n / p))"
}

status=0
meta=$out/raw/points.txt # raw CSV name, mps yes/no/- (one line per launch)
: >"$meta"
for n in $ranks_list; do
  grid=$(grid_of "$n")
  mps=-
  if [ "$ngpu" -gt 0 ] && [ "$n" -gt "$ngpu" ]; then
    mps=no
    if [ $use_mps -eq 1 ] && [ "$backend" != opencl ] && [ "$(id -u)" -eq 0 ] &&
       command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
      mps_start
      [ $mps_on -eq 1 ] && mps=yes
    fi
    [ $mps = no ] && echo "stencil-scaling: $n ranks on $ngpu GPU(s) without MPS (time-slicing)" | tee -a "$out/logs/sweep.log"
  fi
  for size in $sizes_list; do
    for series in both direct; do
      name=n${n}_${size}_${series}
      extra=(--variant both)
      [ $series = direct ] && extra=(--variant mpiacc --direct)
      echo "=== $name: $mpiexec -n $n $prog --msize $grid --customSize $size,$size ${extra[*]}" | tee -a "$out/logs/sweep.log"
      t0=$(date +%s)
      timeout "$limit" "$mpiexec" -n "$n" "$prog" --backend "$backend" --msize "$grid" --customSize "$size,$size" \
        --num-iters "$iters" --passes "$passes" --iters-per-exchange "$h" --precision both "${extra[@]}" --csv "$out/raw/$name.csv" \
        >"$out/logs/$name.log" 2>&1
      rc=$?
      echo "    rc=$rc, $(($(date +%s) - t0)) s" | tee -a "$out/logs/sweep.log"
      if [ $rc -ne 0 ]; then
        status=1
        tail -5 "$out/logs/$name.log" | sed 's/^/    /'
      fi
      [ -s "$out/raw/$name.csv" ] && echo "$name.csv $mps" >>"$meta"
    done
  done
  mps_stop
done

# One CSV: the rows of every launch, labelled with the series and MPS, and the efficiencies against the
# same series, precision and size at 1 rank: efficiency = GFLOPS(n) / (n x GFLOPS(1)) with n = ranks, and
# efficiency_gpus with n = GPUs in use (on shared GPUs, how close n ranks come to the GPUs' 1-rank rate).
python3 - "$out/raw" "$out/stencil_scaling.csv" <<'PY' || status=1
import csv, os, sys
raw, dest = sys.argv[1], sys.argv[2]
rows = []
for line in open(os.path.join(raw, "points.txt")):
    name, mps = line.split()
    for r in csv.DictReader(open(os.path.join(raw, name))):
        direct = name.endswith("_direct.csv")
        r["series"] = "manual" if r["variant"] == "manual" else ("mpiacc-direct" if direct else "mpiacc")
        r["mps"], r["size"] = mps, r["rows"]
        rows.append(r)
order = {"manual": 0, "mpiacc": 1, "mpiacc-direct": 2, "sp": 0, "dp": 1}
rows.sort(key=lambda r: (int(r["size"]), order[r["precision"]], order[r["series"]], int(r["ranks"])))
base = {(r["series"], r["precision"], r["size"]): float(r["gflops_median"]) for r in rows if r["ranks"] == "1"}
cols = ["series", "precision", "size", "ranks", "gpus", "msize", "mps", "protocol", "backend", "h", "iters", "passes",
        "gflops_median", "gflops_min", "gflops_max", "exch_ms", "kernel_ms", "errors", "efficiency",
        "efficiency_gpus"]
with open(dest, "w", newline="") as f:
    w = csv.DictWriter(f, cols, extrasaction="ignore")
    w.writeheader()
    print("%-14s %4s %5s %5s %4s %4s %-8s %10s %7s %9s" % ("series", "prec", "size", "ranks", "gpus", "mps",
                                                          "protocol", "GFLOPS", "eff", "eff_gpus"))
    for r in rows:
        g1 = base.get((r["series"], r["precision"], r["size"]))
        g = float(r["gflops_median"])
        r["efficiency"] = "%.4f" % (g / (int(r["ranks"]) * g1)) if g1 else ""
        r["efficiency_gpus"] = "%.4f" % (g / (int(r["gpus"]) * g1)) if g1 else ""
        w.writerow(r)
        print("%-14s %4s %5s %5s %4s %4s %-8s %10.1f %7s %9s" % (r["series"], r["precision"], r["size"], r["ranks"],
              r["gpus"], r["mps"], r["protocol"], g, r["efficiency"], r["efficiency_gpus"]))
print("-> %s" % dest)
PY
python3 "$here/plot.py" "$out/stencil_scaling.csv" || echo "stencil-scaling: no PNG (see plot.py's message)"
exit $status
