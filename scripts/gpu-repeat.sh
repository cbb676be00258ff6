#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/gpu-repeat.sh — run one CTest test many times under several environments (optionally under an MPS
# daemon of the script's own) and count its failures: the tool for an intermittent failure on the GPU machine.
set -u
usage() {
  cat <<'EOF'
usage: scripts/gpu-repeat.sh [options] BUILD_DIR OUTDIR TEST [VARIANT ...]
Runs the CTest test TEST (an exact name) --runs times under each VARIANT, a label and environment
settings separated by spaces, e.g. "staged MPIACC_COLL_ENGINE=staged" (no variant: "default").
Prints one line per variant: runs, failures, seconds; each failing run's output is kept under
OUTDIR/fail-VARIANT-N.log, and the lines naming a failure are printed.
options:
  --runs N        runs per variant (default 5)
  --parallel P    P copies of the test at once (default 1): two copies mimic `ctest -j 2` next to itself
  --mps           start an MPS daemon for the runs (pipe and log directories under OUTDIR), stop it after
  --grep RE       what a failing run's lines of interest look like (default "differ|FAIL|error|Error")
  --help, -h      print this help and exit
The test's own environment (its ENVIRONMENT property) is kept; a variant's settings are added to it.
Exit status: 0 when no run failed, 1 otherwise, 2 on bad options.
EOF
}
runs=5 parallel=1 mps=0 re='differ|FAIL|error|Error'
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --mps) mps=1; shift ;;
    --grep) re=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "gpu-repeat.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
done
(($# >= 3)) || { usage >&2; exit 2; }
build=$1 out=$2 test=$3
shift 3
variants=("$@")
((${#variants[@]})) || variants=("default")
[[ $runs =~ ^[0-9]+$ && $parallel =~ ^[1-9][0-9]*$ ]] || { echo "gpu-repeat.sh: bad --runs or --parallel" >&2; exit 2; }
mkdir -p "$out"
if ((mps)); then
  export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || { echo "gpu-repeat.sh: the MPS daemon did not start" >&2; exit 1; }
  trap 'echo quit | nvidia-cuda-mps-control >/dev/null 2>&1' EXIT
fi
total=0
for v in "${variants[@]}"; do
  read -r label settings <<<"$v"
  fails=0 t0=$(date +%s)
  for ((i = 1; i <= runs; i++)); do
    pids=()
    for ((j = 1; j <= parallel; j++)); do
      # shellcheck disable=SC2086
      env $settings ctest --test-dir "$build" -R "^${test}\$" --output-on-failure --timeout 300 \
        >"$out/run-$label-$i-$j.log" 2>&1 &
      pids+=($!)
    done
    for ((j = 1; j <= parallel; j++)); do
      if ! wait "${pids[j - 1]}" || ! grep -q "100% tests passed" "$out/run-$label-$i-$j.log"; then
        fails=$((fails + 1))
        mv "$out/run-$label-$i-$j.log" "$out/fail-$label-$i-$j.log"
        grep -E "$re" "$out/fail-$label-$i-$j.log" | head -5 | sed "s/^/    [$label run $i.$j] /"
      else
        rm -f "$out/run-$label-$i-$j.log"
      fi
    done
  done
  total=$((total + fails))
  printf '%-14s %3d runs x %d  %3d failed  %4ds  (%s)\n' "$label" "$runs" "$parallel" "$fails" \
    $(($(date +%s) - t0)) "${settings:-no settings}"
done
((total == 0))
