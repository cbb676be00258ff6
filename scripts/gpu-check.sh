#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/gpu-check.sh OUTDIR — the whole check on a GPU machine, in one go
# (source .device-kit/setup.sh first: MPI_HOME, UCX_ROOT, NCCL_ROOT).
#
# Every MPI run below uses the ENGINE ENVIRONMENT: what mpiacc-run gives its
# ranks (the build's tools/mpiacc-run --print-env): LD_LIBRARY_PATH with the
# CUDA-enabled UCX first ($UCX_ROOT/lib, found by CMake as MPIACC_UCX_ROOT),
# MPIR_CVAR_CH4_NETMOD=ucx, MPIR_CVAR_NOLOCAL=1; UCX_ROOT itself is removed
# (UCX warns about it).  Steps, most important first:
#   configure, build          CUDA architectures native (GPU_CHECK_CUDA_ARCH)
#   mpiacc-info, -2ranks      the build, then 2 ranks: the transport mpiacc chose
#   cuda-ipc-realloc-np2/4    issue 36.6: device buffers freed and allocated
#                             again between exchanges, under mpiacc-run
#                             (MPIACC_LOG=info): right data, and UCX's "resource
#                             already mapped" never printed (the summary counts
#                             mpiacc's one-line explanations: 0 = UCX raised
#                             no false alarm in that run)
#   probe-anysource           plain MPI programs (no mpiacc) receiving from
#                             MPI_ANY_SOURCE, on the engine environment and on
#                             two simulated nodes: a probe program, 8 runs
#                             plainly (MPICH hangs in some: tells an MPICH/UCX
#                             hang from one of ours; not a failure) and 8 under
#                             mpiacc-run; tests/reqpool/anysource (every form
#                             of wildcard receive) GPU_CHECK_ANYSOURCE_RUNS
#                             (default 50) times under mpiacc-run and once
#                             plainly; every mpiacc-run run must finish
#   ctest-all                 the whole CTest suite; one GPU: without MPS (the
#                             CUDA tests then run again under MPS below);
#                             several GPUs: as the tests place their ranks
#   ctest-cuda-p2p-2nodes     the CUDA point-to-point tests again as on two
#                             nodes: MPIR_CVAR_NUM_CLIQUES=2,
#                             UCX_TLS=tcp,cuda_copy,self (no peer mapping)
#   ctest-cuda-coll-nccl-net  the CUDA collective tests on NCCL's network path:
#                             NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
#                             NCCL_SOCKET_IFNAME=lo, MPIR_CVAR_NUM_CLIQUES=2
#                             (the summary counts NCCL's "NET/Socket" lines)
#   ctest-cuda-mps            one GPU only: the 2-4-rank CUDA tests under an
#                             MPS daemon of the script's own (stopped afterwards);
#                             test_cuda_kinds_corpus_np2 among them: the datatype
#                             corpus between CUDA, host and PoCL buffers
#   ctest-opencl-nvidia       the OpenCL tests on NVIDIA's OpenCL (no MPS), the
#                             kinds corpus among them (CUDA x NVIDIA's OpenCL)
#   memcheck-*, racecheck-*   compute-sanitizer on the GPU tests (a test that
#                             is not built any more is skipped, not failed)
# and writes every log plus OUTDIR/summary.txt (one line per step: name, exit
# status, seconds, log file; under it the CTest counts, failed and skipped
# tests).  Every step has its own time limit and the script keeps going after
# a failed step; the whole run stays within GPU_CHECK_BUDGET seconds (default
# 560: one device call of 600 s).  Environment: MPI_HOME (default
# /opt/mpich), UCX_ROOT (the kit's CUDA UCX; without it the run is marked
# failed: MPICH's own UCX has no CUDA), MPIACC_BUILD_DIR (default build-dev),
# GPU_CHECK_JOBS (ctest parallelism, default 8), GPU_CHECK_CUDA_ARCH (default
# native), GPU_CHECK_SKIP (an extended regular expression: steps whose name
# matches are skipped, e.g. 'memcheck|racecheck' for a first call and
# 'configure|build|probe|ctest' for a second call that runs only the
# sanitizer steps within a second budget), GPU_CHECK_CTEST_EXCLUDE (a CTest
# -E expression for ctest-all, e.g. the CPU-only tests CI already runs, to fit
# a short device budget), GPU_CHECK_MPS (0: no MPS step on a multi-GPU machine),
# GPU_CHECK_ANYSOURCE_RUNS (runs of tests/reqpool/anysource per setting in
# probe-anysource, default 50).
# Exit status: 0 when every step succeeded, 1 otherwise.
set -u
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
MPI_HOME=${MPI_HOME:-/opt/mpich}
build=${MPIACC_BUILD_DIR:-build-dev}
budget=${GPU_CHECK_BUDGET:-560}
cjobs=${GPU_CHECK_JOBS:-8}
arch=${GPU_CHECK_CUDA_ARCH:-native}
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
section() { note ""; note "== $*"; }

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
    step_skipped=1
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
  note "$(printf '%-34s' "$name") $( ((rc == 0)) && echo ok || echo FAILED) rc=$rc ${dt}s$why  (log: $name.log)"
  return $rc
}

note "gpu-check $(date -u +%FT%TZ) in $root, build dir $build, MPI_HOME $MPI_HOME, UCX_ROOT ${UCX_ROOT:-unset}, budget ${budget}s"

# ---- environment ------------------------------------------------------------
{
  nvidia-smi -L 2>&1 || true
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode --format=csv 2>&1 || true
  nvidia-smi topo -m 2>&1 || true
  command -v nvcc && nvcc --version | tail -2
  cmake --version | head -1
  command -v ninja && ninja --version
  "$mpiexec" --version 2>&1 | head -3
  command -v clinfo >/dev/null && clinfo -l 2>&1
  env | grep -E '^(UCX_|NCCL_|MPIR_CVAR_|LD_LIBRARY_PATH|CUDA_)' | sort
} >"$out/environment.log" 2>&1
sanitizer=$(command -v compute-sanitizer 2>/dev/null)
[[ -z $sanitizer && -n $(command -v nvcc) ]] && sanitizer=$(dirname "$(command -v nvcc)")/compute-sanitizer
[[ -x ${sanitizer:-/nonexistent} ]] || sanitizer=""
devices=$(nvidia-smi -L 2>/dev/null | tr '\n' ';')
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
note "devices: ${devices:-none found (nvidia-smi missing or no GPU)}"

# ---- configure, build ------------------------------------------------------------
section "configure and build"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
ucx_arg=()
[[ -n ${UCX_ROOT:-} ]] && ucx_arg=(-DMPIACC_UCX_ROOT="$UCX_ROOT")
step configure 120 cmake -S . -B "$build" "${gen[@]}" -DMPI_HOME="$MPI_HOME" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${ucx_arg[@]}"
grep -E "^-- mpiacc:" "$out/configure.log" 2>/dev/null | sed 's/^/    /' >>"$summary"
step build 240 cmake --build "$build" -j "$jobs" || grep -E "error|FAILED" "$out/build.log" | head -20 >>"$summary"

# ---- the engine environment --------------------------------------------------------
# What mpiacc-run gives its ranks, for the CTest runs (their mpiexec is plain).
engine_env=()
if [[ -x $build/tools/mpiacc-run ]]; then
  mapfile -t engine_env < <(env -u MPIR_CVAR_CH4_NETMOD -u MPIR_CVAR_NOLOCAL "$build/tools/mpiacc-run" --print-env)
fi
run_env=(env -u UCX_ROOT -u MPIR_CVAR_CH4_NETMOD -u MPIR_CVAR_NOLOCAL "${engine_env[@]}")
section "engine environment (every MPI run below): ${engine_env[*]:-none}"
if ! printf '%s\n' "${engine_env[@]}" | grep -q "^LD_LIBRARY_PATH=${UCX_ROOT:-/nonexistent}/lib"; then
  note "    WARNING: the ranks' UCX is not \$UCX_ROOT/lib (UCX_ROOT=${UCX_ROOT:-unset}): device memory will not go through UCX"
  failed=1
fi
if [[ -x $build/tools/mpiacc-info ]]; then
  step mpiacc-info 30 "${run_env[@]}" "$build/tools/mpiacc-info"
  grep -E "^  (UCX|MPI library loaded|MPICH netmods|CUDA|transport)" "$out/mpiacc-info.log" | sed 's/^/    /' >>"$summary"
  step mpiacc-info-2ranks 40 "${run_env[@]}" "$mpiexec" -n 2 "$build/tools/mpiacc-info"
  grep -E "^  (UCX loaded|transport)" "$out/mpiacc-info-2ranks.log" | sort | uniq -c | sed 's/^/    /' >>"$summary"
fi

# ---- no false alarm: device buffers reallocated between exchanges (issue 36.6) --------
# under mpiacc-run itself (not only its environment), 2 and 4 ranks
if [[ -x $build/tests/cuda/test_cuda_realloc && -x $build/tools/mpiacc-run ]]; then
  for n in 2 4; do
    step cuda-ipc-realloc-np$n 60 env -u UCX_ROOT MPIACC_LOG=info "$build/tools/mpiacc-run" --mpiexec "$mpiexec" -n $n \
      "$build/tests/cuda/test_cuda_realloc"
    l=$out/cuda-ipc-realloc-np$n.log
    note "    $(grep -m1 '^test_cuda_realloc:' "$l"); UCX error lines: $(grep -c 'UCX  ERROR' "$l"); mpiacc's explanations: $(grep -c 'resource already mapped" (' "$l")"
  done
fi

# ---- a plain MPI probe: MPI_ANY_SOURCE on the UCX netmod ------------------------------
# 8 runs of 100 rounds (two sends; a receive from rank 0, then one from
# MPI_ANY_SOURCE) per setting and launcher; a run that does not finish in 6 s
# counts as hung.
probe_src=$out/probe_anysource.c
cat >"$probe_src" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, buf[256], flag;
    MPI_Request r;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int it = 0; it < 100; it++) {
        if (rank == 0) {
            MPI_Send(buf, 256, MPI_INT, 1, 3, MPI_COMM_WORLD);
            MPI_Send(buf, 256, MPI_INT, 1, 4, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Irecv(buf, 256, MPI_INT, 0, 3, MPI_COMM_WORLD, &r);
            for (int i = 0; i < 100; i++) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            MPI_Wait(&r, &st);
            MPI_Recv(buf, 256, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) printf("probe_anysource: 100 rounds ok\n");
    MPI_Finalize();
    return 0;
}
EOF
# probe WHO VAR=value...: 8 runs of the probe program, WHO: plain (MPICH's
# mpiexec in the engine environment, no mpiacc) or mpiacc-run (mpiacc preloaded)
probe() {
  local who=$1 ok=0 hung=0 _ launch
  shift
  if [[ $who == plain ]]; then launch=("${run_env[@]}" "$@" "$mpiexec"); else launch=(env -u UCX_ROOT "$@" "$run"); fi
  for _ in 1 2 3 4 5 6 7 8; do
    if timeout -k 2 6 "${launch[@]}" -n 2 "$out/probe_anysource" >/dev/null 2>&1; then
      ok=$((ok + 1))
    else
      hung=$((hung + 1))
    fi
  done
  echo "probe_anysource $who $*: $ok of 8 runs finished, $hung hung or failed"
  ((hung == 0))
}
# Plain MPICH hangs in some runs (its defect, which mpiacc works around: not a
# failure of this step); under mpiacc-run every run must finish, the probe
# program's and GPU_CHECK_ANYSOURCE_RUNS (default 50) runs per setting of
# tests/reqpool/anysource (every form of wildcard receive, 3 processes, 2
# rounds), and one plain run per setting for comparison.
probe_all() {
  # shellcheck disable=SC2054
  local rc=0 two=(MPIR_CVAR_NUM_CLIQUES=2 UCX_TLS=tcp,cuda_copy,self) n=${GPU_CHECK_ANYSOURCE_RUNS:-50}
  local any=$build/tests/reqpool/anysource runs=tests/reqpool/anysource_runs.sh
  "$MPI_HOME/bin/mpicc" "$probe_src" -o "$out/probe_anysource" || return 1
  probe plain
  probe plain "${two[@]}"
  probe mpiacc-run || rc=1
  probe mpiacc-run "${two[@]}" || rc=1
  if [[ -x $any ]]; then
    bash "$runs" 1node "$run" "$any" "$n" || rc=1
    bash "$runs" 2nodes "$run" "$any" "$n" || rc=1
    for where in "" "${two[*]}"; do
      local ok=0
      # shellcheck disable=SC2086
      timeout -k 2 10 "${run_env[@]}" $where "$mpiexec" -n 3 "$any" 2 >/dev/null 2>&1 && ok=1
      echo "anysource plain ${where:-(one node)}: $ok of 1 run finished (MPICH alone)"
    done
  else
    echo "anysource: $any is not built"
    rc=1
  fi
  return $rc
}
run=$build/tools/mpiacc-run
section "MPI_ANY_SOURCE receives on the UCX netmod: plain MPI (no mpiacc) and under mpiacc-run"
step probe-anysource 300 bash -c "$(declare -p out mpiexec run_env MPI_HOME probe_src build run); $(declare -f probe probe_all); probe_all"
((step_skipped)) || grep -E '^(probe_anysource|anysource)' "$out/probe-anysource.log" | sed 's/^/    /' >>"$summary"

# ---- the whole suite ---------------------------------------------------------------
ctest_summary() { # log file: counts, failed and skipped tests
  [[ -f $1 ]] || return 0
  {
    grep -E "tests passed|tests failed|No tests were found" "$1" | tail -1 | sed 's/^/    /'
    sed -n '/The following tests FAILED/,/^$/p' "$1" | sed 's/^/    /'
    grep -E "\((Skipped|Not Run|Disabled)\)" "$1" | sed 's/^[[:space:]]*/    not passed: /'
  } >>"$summary"
}
cuda_coll='^(test_cuda_(coll|reduce|copyn)[a-z0-9_]*_np[0-9]+|halo3d_cuda_.*)$' # collectives (NCCL, ours)
cuda_p2p='^test_cuda_[a-z0-9_]*_np[0-9]+$'                                      # less cuda_coll
if [[ -d $build ]]; then
  section "the whole suite ($ngpu GPU(s)$( ((ngpu == 1)) && echo ', no MPS: the CUDA tests run again under MPS below'))"
  # the JUnit files keep every test's output (skip reasons, timings printed by tests)
  # (anysource_runs: run by the probe step)
  excl=(-E "^anysource_runs${GPU_CHECK_CTEST_EXCLUDE:+|$GPU_CHECK_CTEST_EXCLUDE}")
  [[ -n ${GPU_CHECK_CTEST_EXCLUDE:-} ]] && note "    (left out: $GPU_CHECK_CTEST_EXCLUDE)"
  step ctest-all 300 "${run_env[@]}" ctest --test-dir "$build" "${excl[@]}" --output-on-failure -j "$cjobs" --timeout 200 \
    --output-junit "$out/ctest-all.xml"
  ctest_summary "$out/ctest-all.log"
  grep -hoE "(SKIPPED[^<&]*|WATCHDOG[^<&]*|corpus: [^<&]*)" "$out/ctest-all.log" "$out/ctest-all.xml" 2>/dev/null |
    sort -u | head -30 | sed 's/^/    /' >>"$summary"

  section "two simulated nodes: CUDA point-to-point over UCX tcp + cuda_copy (MPIR_CVAR_NUM_CLIQUES=2)"
  # (MPIEXEC_TIMEOUT: a hung run ends after 100 s, not the step)
  step ctest-cuda-p2p-2nodes 150 "${run_env[@]}" MPIR_CVAR_NUM_CLIQUES=2 UCX_TLS=tcp,cuda_copy,self MPIEXEC_TIMEOUT=100 \
    ctest --test-dir "$build" -R "$cuda_p2p" -E "$cuda_coll" --output-on-failure -j 4 --timeout 140 \
    --output-junit "$out/ctest-cuda-p2p-2nodes.xml"
  ctest_summary "$out/ctest-cuda-p2p-2nodes.log"

  section "two simulated nodes: CUDA collectives on NCCL's socket network (loopback)"
  step ctest-cuda-coll-nccl-net 150 "${run_env[@]}" MPIR_CVAR_NUM_CLIQUES=2 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 \
    NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET MPIEXEC_TIMEOUT=100 \
    ctest --test-dir "$build" -R "$cuda_coll" --output-on-failure -j 2 --timeout 140 \
    --output-junit "$out/ctest-cuda-coll-nccl-net.xml"
  ctest_summary "$out/ctest-cuda-coll-nccl-net.log"
  ((step_skipped)) ||
    echo "    NCCL lines naming NET/Socket: $(cat "$out/ctest-cuda-coll-nccl-net.log" "$out/ctest-cuda-coll-nccl-net.xml" \
      2>/dev/null | grep -c 'NET/Socket'); naming P2P or SHM transports: $(cat "$out/ctest-cuda-coll-nccl-net.log" \
      "$out/ctest-cuda-coll-nccl-net.xml" 2>/dev/null | grep -cE 'via P2P|via SHM')" >>"$summary"
fi

# ---- the multi-rank CUDA tests again under MPS (one GPU only) ----------------------------
# Two to four ranks on one GPU without MPS time-slice it; with MPS they run
# as on separate GPUs.  Not for the OpenCL tests (NVIDIA's OpenCL fails
# under MPS, which the README runs also try: they run in ctest-all) nor
# test_cuda_sync (its gate-kernel case times out under MPS).
if [[ -d $build ]] && ((ngpu == 1 || ${GPU_CHECK_MPS:-1} == 1)) && command -v nvidia-cuda-mps-control >/dev/null; then
  section "one GPU: 2-4 ranks under MPS$( ((ngpu > 1)) && echo " (CUDA_VISIBLE_DEVICES=0 of $ngpu GPUs)")"
  ((ngpu > 1)) && export CUDA_VISIBLE_DEVICES=0
  export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d >>"$out/mps.log" 2>&1; then
    step ctest-cuda-mps 240 "${run_env[@]}" ctest --test-dir "$build" -R '^(test_cuda_.*_np[234]|halo3d_cuda_.*)$' \
      -E 'hetero|test_cuda_sync|_readme' --output-on-failure -j 2 --timeout 120 --output-junit "$out/ctest-cuda-mps.xml"
    ctest_summary "$out/ctest-cuda-mps.log"
    echo quit | nvidia-cuda-mps-control >>"$out/mps.log" 2>&1
  else
    note "MPS daemon did not start: ctest-cuda-mps NOT RUN"
    failed=1
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_VISIBLE_DEVICES
fi

if [[ -d $build ]]; then
  section "OpenCL tests on NVIDIA's OpenCL"
  step ctest-opencl-nvidia 90 "${run_env[@]}" MPIACC_TEST_OPENCL_PLATFORM=nvidia \
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
    # the engine and NCCL work removes tests; a build failure shows in "build"
    note "$(printf '%-34s' "$name") skipped ($(basename "$bin") is not built)"
    return
  fi
  # UCX probes CUDA with calls that fail on purpose (cuCtxSetFlags without a context): API errors are not
  # reported, memory errors are
  local cmd=("$sanitizer" --tool "$tool" --error-exitcode 1 --report-api-errors no "${sopts[@]}" "$bin")
  ((np > 0)) && cmd=("$mpiexec" -n "$np" "${cmd[@]}")
  step "$name" "$limit" "${run_env[@]}" MPIACC_TEST_SANITIZER=1 "${envs[@]}" "${cmd[@]}"
  ((step_skipped)) && return
  errs=$(grep -Eo "ERROR SUMMARY: [0-9]+" "$out/$name.log" | awk '{s += $3} END {print s + 0}')
  echo "    sanitizer errors: $errs; $(grep -cE "^=+ +(Invalid|Race|Program hit|Error)" "$out/$name.log") report lines" \
    >>"$summary"
}
t=$build/tests/cuda
section "compute-sanitizer (memcheck, racecheck) on the GPU tests"
if [[ -z $sanitizer ]]; then
  note "compute-sanitizer not found: sanitizer steps NOT RUN"
  failed=1
elif [[ -d $t ]]; then
  # test_cuda_ipc opens bad IPC handles on purpose: the API errors it
  # provokes are not reported.
  noapi=()
  san memcheck-p2p_corpus memcheck 70 2 "$t/test_cuda_p2p_corpus" MPIACC_TEST_NTYPES=40
  san memcheck-cuda_p2px memcheck 90 2 "$t/test_cuda_p2px"
  san memcheck-cuda_semantics memcheck 60 3 "$t/test_cuda_semantics"
  san memcheck-cuda_coll memcheck 90 2 "$t/test_cuda_coll"
  san memcheck-cuda_errors memcheck 40 0 "$t/test_cuda_errors"
  san memcheck-cuda_sync memcheck 50 3 "$t/test_cuda_sync"
  san memcheck-cuda_backend memcheck 60 0 "$t/test_cuda_backend"
  san racecheck-p2p_corpus racecheck 60 2 "$t/test_cuda_p2p_corpus" MPIACC_TEST_NTYPES=25
  san memcheck-cuda_threads memcheck 60 2 "$t/test_cuda_threads"
  san racecheck-cuda_backend racecheck 60 0 "$t/test_cuda_backend"
  san memcheck-cuda_ipc memcheck 90 2 "$t/test_cuda_ipc" "${noapi[@]}"
  san racecheck-cuda_ipc racecheck 90 2 "$t/test_cuda_ipc" "${noapi[@]}"
  # the device protocol's paths (device staging, the pack kernels into it,
  # MPI's own requests)
  san memcheck-cuda_paths memcheck 90 2 "$t/test_cuda_paths" CUDA_MODULE_LOADING=EAGER
  # on-device collectives (their reduction and many-piece copy kernels, the
  # nonblocking form), stream-ordered completion
  san memcheck-cuda_coll_ipc memcheck 90 3 "$t/test_cuda_coll_ipc" MPIACC_COLL_ENGINE=ipc
  san memcheck-cuda_reduce memcheck 90 2 "$t/test_cuda_reduce"
  san memcheck-cuda_copyn memcheck 90 2 "$t/test_cuda_copyn"
  san memcheck-cuda_stream_order memcheck 60 2 "$t/test_cuda_stream_order" CUDA_MODULE_LOADING=EAGER
  # the kinds corpus (issue 36): every pairing of CUDA, host and PoCL buffers
  san memcheck-kinds_corpus memcheck 90 2 "$build/tests/core/test_kinds_corpus" MPIACC_TEST_NTYPES=4 \
    MPIACC_TEST_OPENCL_PLATFORM=pocl
  # test_cuda_stream_order gates its streams, so under the tool it skips its
  # cases: stream-ordered completion runs here ungated, in Stencil2D's halo
  # exchanges (receives in stream order; staged sends and receives)
  sten=$build/examples/stencil2d/stencil2d
  for mode in stream_order overlap; do
    mflag=(--stream-ordered --stream-ordered-sends)
    [[ $mode == overlap ]] && mflag=(--overlap)
    step "memcheck-stencil_$mode" 120 "${run_env[@]}" MPIACC_TEST_SANITIZER=1 "$mpiexec" -n 2 \
      "$sanitizer" --tool memcheck --error-exitcode 1 --report-api-errors no "$sten" --backend cuda --customSize 64,64 --num-iters 20 \
      --passes 1 --msize 1x2 "${mflag[@]}"
    ((step_skipped)) ||
      echo "    sanitizer errors: $(grep -Eo "ERROR SUMMARY: [0-9]+" "$out/memcheck-stencil_$mode.log" |
        awk '{s += $3} END {print s + 0}')" >>"$summary"
  done
fi

note ""
note "total $(($(date +%s) - t_start))s of ${budget}s; overall: $([[ $failed == 0 ]] && echo OK || echo 'SOME STEPS FAILED (see above)')"
exit $failed
