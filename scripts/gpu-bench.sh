#!/usr/bin/env bash
# scripts/gpu-bench.sh BUILD_DIR OUTDIR — every benchmark on a GPU machine,
# each printing its same-run baseline and ratios; logs (and CSV) in OUTDIR,
# everything also concatenated into OUTDIR/bench.log.
# Environment: MPI_HOME (default /opt/mpich).
set -u
build=${1:?usage: scripts/gpu-bench.sh BUILD_DIR OUTDIR}
out=${2:?usage: scripts/gpu-bench.sh BUILD_DIR OUTDIR}
mkdir -p "$out"
mpiexec=${MPI_HOME:-/opt/mpich}/bin/mpiexec
b=$build/bench
run() { # NAME LIMIT COMMAND...
  local name=$1 limit=$2
  shift 2
  echo "=== $name: $*" | tee -a "$out/bench.log"
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  echo "rc=$?" >>"$out/$name.log"
  cat "$out/$name.log" >>"$out/bench.log"
}
run host_overhead 120 "$mpiexec" -n 2 -bind-to core "$b/host_overhead" --csv "$out/host_overhead.csv"
run type_commit 60 "$b/type_commit"
[ -x "$b/pingpong" ] && run pingpong 150 "$mpiexec" -n 2 "$b/pingpong" --quick --csv "$out/pingpong.csv"
[ -x "$b/ooo_cuda" ] && run ooo_cuda 120 "$mpiexec" -n 3 "$b/ooo_cuda" --csv "$out/ooo_cuda.csv"
for plat in nvidia portable; do
  [ -x "$b/ooo" ] && MPIACC_TEST_OPENCL_PLATFORM=$plat run "ooo_$plat" 120 "$mpiexec" -n 3 "$b/ooo" --csv "$out/ooo_$plat.csv"
  [ -x "$b/queue_semantics" ] && MPIACC_TEST_OPENCL_PLATFORM=$plat run "queue_semantics_$plat" 90 \
      "$mpiexec" -n 2 "$b/queue_semantics" --csv "$out/queue_semantics_$plat.csv"
done
exit 0
