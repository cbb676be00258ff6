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
run init_cost 120 "$b/init_cost"
# issue 14: pack kernels against the roofline (sector bytes / D2D copy bandwidth) and the latency floors
[ -x "$b/pack" ] && run pack 400 "$b/pack" --quick --csv "$out/pack.csv"
if [ -x "$b/pingpong" ]; then
  # issue 29: contiguous and vector device ping-pong with nothing set, against a plain CUDA-aware
  # program on the same transport and host contiguous (run under mpiacc-run or the UCX environment
  # for the device path), and the staged path for comparison
  run pingpong 300 "$mpiexec" -n 2 "$b/pingpong" --quick --csv "$out/pingpong.csv"
  MPIACC_TRANSPORT=staged run pingpong_staged 300 "$mpiexec" -n 2 "$b/pingpong" --quick \
      --csv "$out/pingpong_staged.csv"
fi
# issue 21/24/31: collectives on device buffers against NCCL alone and host buffers, on the
# default engine (NCCL) and on the IPC engine (the keep-or-delete measurement)
if [ -x "$b/coll" ]; then
  run coll_np2 600 "$mpiexec" -n 2 "$b/coll" --max-size 16M --csv "$out/coll_np2.csv"
  run coll_np2_ipc 600 "$mpiexec" -n 2 "$b/coll" --max-size 16M --engine ipc --csv "$out/coll_np2_ipc.csv"
fi
h3=$build/examples/halo3d/halo3d
if [ -x "$h3" ]; then
  run halo3d_np2 300 "$mpiexec" -n 2 "$h3" --size 128 --iters 50 --csv "$out/halo3d_np2.csv"
  MPIACC_TRANSPORT=staged run halo3d_np2_staged 300 "$mpiexec" -n 2 "$h3" --size 128 --iters 50 \
      --csv "$out/halo3d_np2_staged.csv"
fi
[ -x "$b/ooo_cuda" ] && run ooo_cuda 120 "$mpiexec" -n 3 "$b/ooo_cuda" --csv "$out/ooo_cuda.csv"
for plat in nvidia portable; do
  [ -x "$b/ooo" ] && MPIACC_TEST_OPENCL_PLATFORM=$plat run "ooo_$plat" 120 "$mpiexec" -n 3 "$b/ooo" --csv "$out/ooo_$plat.csv"
  [ -x "$b/queue_semantics" ] && MPIACC_TEST_OPENCL_PLATFORM=$plat run "queue_semantics_$plat" 90 \
      "$mpiexec" -n 2 "$b/queue_semantics" --csv "$out/queue_semantics_$plat.csv"
done
exit 0
