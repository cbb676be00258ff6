#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/gpu-bench.sh BUILD_DIR OUTDIR [SECTION...] — the benchmarks of a GPU machine, each beside its
# same-run baseline, on the ranks' environment of mpiacc-run (MPICH on its UCX netmod with a
# CUDA-enabled UCX); logs and CSV in OUTDIR, everything also in OUTDIR/bench.log.
#
# Sections (all when none is named):
#   p2p       bench/pingpong, 2 ranks on GPUs 0 and 1 (default and staged path), and on one GPU under
#             MPS; Intel MPI's IMB-MPI1-GPU PingPong beside it when IMPI_DIR is set
#   coll      bench/coll with 2 and 4 ranks (NCCL alone in the same run; the IPC engine with
#             --engine ipc), the stream-ordered Allreduce; IMB-MPI1-GPU collectives on Intel MPI
#   host      host-only IMB-MPI1 (PingPong, Allreduce, Bcast, Alltoall; 2 and 4 ranks) under mpiacc-run
#             against MPICH's default (shared memory), when IMPI_DIR gives the IMB binaries
#   misc      host_overhead, type_commit, init_cost, ooo_cuda, queue semantics, OpenCL validation
# Environment: MPI_HOME (default /opt/mpich); IMPI_DIR: an Intel MPI runtime (bin/mpiexec.hydra,
# lib/libmpi.so.12, bin/IMB-MPI1(-GPU)), run with I_MPI_FABRICS=shm I_MPI_OFFLOAD=1; BENCH_QUICK=1
# for fewer iterations.  Every run has a time limit; the script always exits 0 (read the logs).
set -u
build=$(cd "${1:?usage: scripts/gpu-bench.sh BUILD_DIR OUTDIR [SECTION...]}" && pwd)
out=${2:?usage: scripts/gpu-bench.sh BUILD_DIR OUTDIR [SECTION...]}
shift 2
sections=${*:-p2p coll host misc}
mkdir -p "$out"
out=$(cd "$out" && pwd)
MPI_HOME=${MPI_HOME:-/opt/mpich}
mpiexec=$MPI_HOME/bin/mpiexec
b=$build/bench
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
mapfile -t engine_env < <(env -u MPIR_CVAR_CH4_NETMOD -u MPIR_CVAR_NOLOCAL "$build/tools/mpiacc-run" --print-env 2>/dev/null)
E=(env -u UCX_ROOT "${engine_env[@]}")
quick=()
[ "${BENCH_QUICK:-0}" = 1 ] && quick=(--quick)
want() { [[ " $sections " == *" $1 "* ]]; }
run() { # NAME LIMIT COMMAND...
  local name=$1 limit=$2 t0 rc
  shift 2
  echo "=== $name: $*" | tee -a "$out/bench.log"
  t0=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "rc=$rc $(($(date +%s) - t0))s" >>"$out/$name.log"
  cat "$out/$name.log" >>"$out/bench.log"
  echo "    rc=$rc $(($(date +%s) - t0))s" | tee -a "$out/bench.log"
}
impi=()
if [ -n "${IMPI_DIR:-}" ] && [ -x "$IMPI_DIR/bin/mpiexec.hydra" ]; then
  impi=(env -u UCX_ROOT "I_MPI_ROOT=$IMPI_DIR" "LD_LIBRARY_PATH=$IMPI_DIR/lib:${CUDA_HOME:-/usr/local/cuda}/lib64:${LD_LIBRARY_PATH:-}"
        I_MPI_FABRICS=shm I_MPI_OFFLOAD=1 "$IMPI_DIR/bin/mpiexec.hydra")
fi
mps_start() { # one GPU shared by the ranks: CUDA_VISIBLE_DEVICES=0 and an MPS daemon of our own
  export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d >>"$out/mps.log" 2>&1
}
mps_stop() {
  echo quit | nvidia-cuda-mps-control >>"$out/mps.log" 2>&1
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
echo "gpu-bench $(date -u +%FT%TZ): $ngpu GPU(s); ranks' environment: ${engine_env[*]:-none}; sections: $sections" |
  tee "$out/bench.log"
nvidia-smi -L >>"$out/bench.log" 2>&1

if want p2p && [ -x "$b/pingpong" ]; then
  run pingpong 120 "${E[@]}" "$mpiexec" -n 2 "$b/pingpong" "${quick[@]}" --csv "$out/pingpong.csv"
  run pingpong_default_stream 90 "${E[@]}" "$mpiexec" -n 2 "$b/pingpong" --quick --stream default \
    --csv "$out/pingpong_default_stream.csv"
  run pingpong_staged 120 "${E[@]}" MPIACC_TRANSPORT=staged "$mpiexec" -n 2 "$b/pingpong" --quick \
    --csv "$out/pingpong_staged.csv"
  if [ ${#impi[@]} -gt 0 ] && [ -x "$IMPI_DIR/bin/IMB-MPI1-GPU" ]; then
    run imb_pingpong_gpu 90 "${impi[@]}" -n 2 "$IMPI_DIR/bin/IMB-MPI1-GPU" PingPong -mem_alloc_type device \
      -msglog 10:22 -iter 1000 -time 10
  fi
  if command -v nvidia-cuda-mps-control >/dev/null && mps_start; then
    CUDA_VISIBLE_DEVICES=0 run pingpong_mps 120 "${E[@]}" "$mpiexec" -n 2 "$b/pingpong" "${quick[@]}" \
      --csv "$out/pingpong_mps.csv"
    if [ ${#impi[@]} -gt 0 ] && [ -x "$IMPI_DIR/bin/IMB-MPI1-GPU" ]; then
      CUDA_VISIBLE_DEVICES=0 run imb_pingpong_gpu_mps 90 "${impi[@]}" -n 2 "$IMPI_DIR/bin/IMB-MPI1-GPU" PingPong \
        -mem_alloc_type device -msglog 10:22 -iter 1000 -time 10
    fi
    mps_stop
  fi
fi

if want coll && [ -x "$b/coll" ]; then
  cargs=(--min-size 8 --max-size 16M --ops allreduce,bcast,allgather,alltoall --iterations 300 --warmup 50
         --iterations-large 60 --warmup-large 5)
  for n in 2 4; do
    ((ngpu >= n)) || continue
    run "coll_np$n" 200 "${E[@]}" "$mpiexec" -n "$n" "$b/coll" "${cargs[@]}" --csv "$out/coll_np$n.csv"
    run "coll_np${n}_ipc" 200 "${E[@]}" "$mpiexec" -n "$n" "$b/coll" "${cargs[@]}" --engine ipc --no-nccl \
      --csv "$out/coll_np${n}_ipc.csv"
    if [ ${#impi[@]} -gt 0 ] && [ -x "$IMPI_DIR/bin/IMB-MPI1-GPU" ]; then
      run "imb_coll_gpu_np$n" 150 "${impi[@]}" -n "$n" "$IMPI_DIR/bin/IMB-MPI1-GPU" Allreduce Bcast Allgather Alltoall \
        -mem_alloc_type device -msglog 3:24 -iter 200 -time 5 -npmin "$n"
    fi
  done
  ((ngpu >= 4)) && run coll_stream_ordered 90 "${E[@]}" "$mpiexec" -n 4 "$b/coll" --stream-ordered --min-size 8 \
    --max-size 8 --iterations 1000 --csv "$out/coll_stream_ordered.csv"
fi

if want host && [ ${#impi[@]} -gt 0 ] && [ -x "$IMPI_DIR/bin/IMB-MPI1" ]; then
  # IMB-MPI1 uses only MPICH-ABI calls: it runs on MPICH's libmpi.so.12 (host buffers)
  for n in 2 4; do
    run "imb_host_np${n}_mpich" 120 env -u UCX_ROOT "$mpiexec" -n "$n" "$IMPI_DIR/bin/IMB-MPI1" PingPong Allreduce \
      Bcast Alltoall -msglog 3:22 -iter 200 -time 5 -npmin "$n"
    run "imb_host_np${n}_mpiacc_run" 120 "$build/tools/mpiacc-run" --mpiexec "$mpiexec" -n "$n" \
      "$IMPI_DIR/bin/IMB-MPI1" PingPong Allreduce Bcast Alltoall -msglog 3:22 -iter 200 -time 5 -npmin "$n"
  done
fi

if want misc; then
  run host_overhead 120 "$mpiexec" -n 2 -bind-to core "$b/host_overhead" --csv "$out/host_overhead.csv"
  [ -x "$b/ooo_cuda" ] && run ooo_cuda 120 "${E[@]}" "$mpiexec" -n 3 "$b/ooo_cuda" --csv "$out/ooo_cuda.csv"
  [ -x "$b/ocl_validate" ] && MPIACC_TEST_OPENCL_PLATFORM=nvidia run ocl_validate 60 "$b/ocl_validate" --rounds 21 \
    --iters 2000
fi
exit 0
