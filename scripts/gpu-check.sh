#!/usr/bin/env bash
# scripts/gpu-check.sh OUTDIR — the whole check on a GPU machine, in one go:
#   configure build-dev (CUDA architectures: native), build, run the whole
#   CTest suite, run the OpenCL-labelled tests again on NVIDIA's OpenCL
#   platform, run the GPU tests under compute-sanitizer (memcheck, racecheck),
#   and write every log plus OUTDIR/summary.txt.  The suite runs without the
#   CUDA MPS daemon (NVIDIA's OpenCL fails under MPS); on a machine with one
#   GPU the two-rank CUDA tests run once more under an MPS daemon of the
#   script's own, which it stops afterwards.
# Every step has its own time limit and the script keeps going after a
# failed step; the whole run stays within GPU_CHECK_BUDGET seconds (default
# 470).  Environment: MPI_HOME (default /opt/mpich), MPIACC_BUILD_DIR
# (default build-dev), GPU_CHECK_JOBS (ctest parallelism, default 8),
# GPU_CHECK_SKIP (an extended regular expression: steps whose name matches
# are skipped, e.g. 'ctest-all|opencl' for a second call that runs only the
# sanitizer and MPS steps within the budget).
# Exit status: 0 when every step succeeded, 1 otherwise.
set -u
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
MPI_HOME=${MPI_HOME:-/opt/mpich}
build=${MPIACC_BUILD_DIR:-build-dev}
budget=${GPU_CHECK_BUDGET:-470}
cjobs=${GPU_CHECK_JOBS:-8}
skip=${GPU_CHECK_SKIP:-}
jobs=$(nproc 2>/dev/null || echo 4)
mpiexec=$MPI_HOME/bin/mpiexec
summary=$out/summary.txt
t_start=$(date +%s)
failed=0
step_skipped=0
: >"$summary"

left() { echo $((budget - ($(date +%s) - t_start))); }
note() { echo "$*" | tee -a "$summary"; }

# step NAME LIMIT_SECONDS COMMAND...: runs with a timeout, log in OUTDIR/NAME.log
step() {
  local name=$1 limit=$2 l t0 rc dt why=""
  shift 2
  if [[ -n $skip && $name =~ $skip ]]; then
    note "$(printf '%-34s' "$name") skipped (GPU_CHECK_SKIP)"
    step_skipped=1
    return 0
  fi
  step_skipped=0
  l=$(left)
  if ((l < 20)); then
    note "$(printf '%-34s' "$name") NOT RUN (time budget spent)"
    failed=1
    return 1
  fi
  ((limit > l - 10)) && limit=$((l - 10))
  t0=$(date +%s)
  { echo "+ $*"; echo; } >"$out/$name.log"
  timeout -k 10 "$limit" "$@" >>"$out/$name.log" 2>&1
  rc=$?
  dt=$(($(date +%s) - t0))
  ((rc == 124 || rc == 137)) && why=" TIMEOUT after ${limit}s"
  ((rc != 0)) && failed=1
  note "$(printf '%-34s' "$name") rc=$rc ${dt}s$why  (log: $name.log)"
  return $rc
}

note "gpu-check $(date -u +%FT%TZ) in $root, build dir $build, MPI_HOME $MPI_HOME, budget ${budget}s"

# ---- environment ------------------------------------------------------------
{
  nvidia-smi -L 2>&1 || true
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode --format=csv 2>&1 || true
  command -v nvcc && nvcc --version | tail -2
  cmake --version | head -1
  command -v ninja && ninja --version
  "$mpiexec" --version 2>&1 | head -3
  command -v clinfo >/dev/null && clinfo -l 2>&1
} >"$out/environment.log" 2>&1
sanitizer=$(command -v compute-sanitizer 2>/dev/null)
[[ -z $sanitizer && -n $(command -v nvcc) ]] && sanitizer=$(dirname "$(command -v nvcc)")/compute-sanitizer
[[ -x ${sanitizer:-/nonexistent} ]] || sanitizer=""
devices=$(nvidia-smi -L 2>/dev/null | tr '\n' ';')
note "devices: ${devices:-none found (nvidia-smi missing or no GPU)}"

# ---- configure, build ------------------------------------------------------------
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
step configure 120 cmake -S . -B "$build" "${gen[@]}" -DMPI_HOME="$MPI_HOME" -DCMAKE_CUDA_ARCHITECTURES=native \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
grep -E "^-- mpiacc:" "$out/configure.log" >>"$summary" 2>/dev/null
step build 240 cmake --build "$build" -j "$jobs" || grep -E "error|FAILED" "$out/build.log" | head -20 >>"$summary"
[[ -x $build/tools/mpiacc-info ]] && step mpiacc-info 30 "$build/tools/mpiacc-info"

# ---- the whole suite ---------------------------------------------------------------
ctest_summary() { # log file: counts, failed and skipped tests
  [[ -f $1 ]] || return 0
  {
    grep -E "tests passed|tests failed" "$1" | tail -1 | sed 's/^/    /'
    sed -n '/The following tests FAILED/,/^$/p' "$1" | sed 's/^/    /'
    grep -E "\((Skipped|Not Run|Disabled)\)" "$1" | sed 's/^[[:space:]]*/    not passed: /'
  } >>"$summary"
}
if [[ -d $build ]]; then
  # the JUnit files keep every test's output (skip reasons, timings printed by tests)
  step ctest-all 300 ctest --test-dir "$build" --output-on-failure -j "$cjobs" --timeout 200 \
    --output-junit "$out/ctest-all.xml"
  ctest_summary "$out/ctest-all.log"
  grep -hoE "(SKIPPED[^<&]*|WATCHDOG[^<&]*|corpus: [^<&]*)" "$out/ctest-all.log" "$out/ctest-all.xml" 2>/dev/null |
    sort -u | head -30 | sed 's/^/    /' >>"$summary"
  step ctest-opencl-nvidia 90 env MPIACC_TEST_OPENCL_PLATFORM=nvidia \
    ctest --test-dir "$build" -L opencl --output-on-failure -j 4 --timeout 80 --output-junit "$out/ctest-opencl-nvidia.xml"
  ctest_summary "$out/ctest-opencl-nvidia.log"
fi

# ---- compute-sanitizer ---------------------------------------------------------------
# Under the sanitizer kernel launches may be serialised: MPIACC_TEST_SANITIZER=1
# makes the tests skip what holds a dependency open with a gate kernel.
# "sanitizer errors" counts the tool's ERROR SUMMARY; rc also reflects the
# test's own verdict (timing-sensitive checks may fail under the tool).
san() { # NAME TOOL LIMIT NP(0: no mpiexec) BINARY [--sanitizer-option value...] [VAR=value...]
  local name=$1 tool=$2 limit=$3 np=$4 bin=$5 errs sopts=() envs=()
  shift 5
  while (($#)); do
    if [[ $1 == --* ]]; then
      sopts+=("$1" "$2")
      shift 2
    else
      envs+=("$1")
      shift
    fi
  done
  if [[ ! -x $bin ]]; then
    note "$(printf '%-34s' "$name") NOT RUN ($bin missing)"
    failed=1
    return
  fi
  local cmd=("$sanitizer" --tool "$tool" --error-exitcode 1 "${sopts[@]}" "$bin")
  ((np > 0)) && cmd=("$mpiexec" -n "$np" "${cmd[@]}")
  step "$name" "$limit" env MPIACC_TEST_SANITIZER=1 "${envs[@]}" "${cmd[@]}"
  ((step_skipped)) && return
  errs=$(grep -Eo "ERROR SUMMARY: [0-9]+" "$out/$name.log" | awk '{s += $3} END {print s + 0}')
  echo "    sanitizer errors: $errs; $(grep -cE "^=+ +(Invalid|Race|Program hit|Error)" "$out/$name.log") report lines" \
    >>"$summary"
}
t=$build/tests/cuda
if [[ -z $sanitizer ]]; then
  note "compute-sanitizer not found: sanitizer steps NOT RUN"
  failed=1
elif [[ -d $t ]]; then
  # test_cuda_ipc opens bad IPC handles on purpose: the API errors it
  # provokes are not reported.
  noapi=(--report-api-errors no)
  san memcheck-cuda_ipc memcheck 90 2 "$t/test_cuda_ipc" "${noapi[@]}"
  san racecheck-cuda_ipc racecheck 90 2 "$t/test_cuda_ipc" "${noapi[@]}"
  # the device protocol's paths (device staging, pack kernels into it); on
  # MPICH's UCX netmod when the run's environment selects it
  san memcheck-cuda_paths memcheck 90 2 "$t/test_cuda_paths" CUDA_MODULE_LOADING=EAGER
  san memcheck-cuda_errors memcheck 40 0 "$t/test_cuda_errors"
  san memcheck-p2p_corpus memcheck 70 2 "$t/test_cuda_p2p_corpus" MPIACC_TEST_NTYPES=40
  san memcheck-cuda_semantics memcheck 60 3 "$t/test_cuda_semantics"
  san memcheck-cuda_sync memcheck 50 3 "$t/test_cuda_sync"
  san memcheck-cuda_backend memcheck 60 0 "$t/test_cuda_backend"
  san racecheck-p2p_corpus racecheck 60 2 "$t/test_cuda_p2p_corpus" MPIACC_TEST_NTYPES=25
  san memcheck-cuda_threads memcheck 60 2 "$t/test_cuda_threads"
  san racecheck-cuda_backend racecheck 60 0 "$t/test_cuda_backend"
  san memcheck-cuda_coll memcheck 90 2 "$t/test_cuda_coll"
  san memcheck-cuda_p2px memcheck 90 2 "$t/test_cuda_p2px"
  # this round's kernels and paths: on-device collectives (their reduction and
  # many-piece copy kernels, the nonblocking form), stream-ordered completion
  san memcheck-cuda_coll_ipc memcheck 90 3 "$t/test_cuda_coll_ipc" MPIACC_DIRECT=1
  san memcheck-cuda_reduce memcheck 90 2 "$t/test_cuda_reduce"
  san memcheck-cuda_copyn memcheck 90 2 "$t/test_cuda_copyn"
  san memcheck-cuda_stream_order memcheck 60 2 "$t/test_cuda_stream_order" CUDA_MODULE_LOADING=EAGER
  # test_cuda_stream_order gates its streams, so under the tool it skips its
  # cases: stream-ordered completion runs here ungated, in Stencil2D's halo
  # exchanges (IPC receives in stream order; staged sends and receives)
  sten=$build/examples/stencil2d/stencil2d
  for proto in direct default; do
    pflag=()
    [[ $proto == direct ]] && pflag=(--direct)
    step "memcheck-stencil_stream_order_$proto" 120 env MPIACC_TEST_SANITIZER=1 "$mpiexec" -n 2 "$sanitizer" --tool memcheck \
      --error-exitcode 1 "$sten" --backend cuda --customSize 64,64 --num-iters 20 --passes 1 --msize 1x2 \
      "${pflag[@]}" --stream-ordered --stream-ordered-sends
    ((step_skipped)) ||
      echo "    sanitizer errors: $(grep -Eo "ERROR SUMMARY: [0-9]+" "$out/memcheck-stencil_stream_order_$proto.log" |
        awk '{s += $3} END {print s + 0}')" >>"$summary"
  done
fi

# ---- the multi-rank CUDA tests again under MPS (one GPU only) ----------------------------
# Two to four ranks on one GPU without MPS time-slice it; with MPS they run
# as on separate GPUs.  Not for the OpenCL tests (NVIDIA's OpenCL fails
# under MPS) nor test_cuda_sync (its gate-kernel case times out under MPS).
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [[ -d $build ]] && ((ngpu == 1)) && command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d >>"$out/mps.log" 2>&1; then
    step ctest-cuda-mps 240 ctest --test-dir "$build" -R '^(test_cuda_.*_np[234]|halo3d_cuda_.*)$' \
      -E 'hetero|test_cuda_sync' --output-on-failure -j 2 --timeout 120 --output-junit "$out/ctest-cuda-mps.xml"
    ctest_summary "$out/ctest-cuda-mps.log"
    echo quit | nvidia-cuda-mps-control >>"$out/mps.log" 2>&1
  else
    note "MPS daemon did not start: ctest-cuda-mps NOT RUN"
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

note "total $(($(date +%s) - t_start))s; overall: $([[ $failed == 0 ]] && echo OK || echo 'SOME STEPS FAILED (see above)')"
exit $failed
