#!/usr/bin/env bash
# The main job: sets up a fresh machine, builds, prints what mpiacc found
# (mpiacc-info), then runs the Stencil2D demo: CUDA when a GPU is present,
# else OpenCL (PoCL on the CPU).  Extra arguments go to stencil2d.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh
build=${MPIACC_BUILD_DIR:-build}
mpi_home=${MPI_HOME:-$root/.venv}
# shellcheck disable=SC2086
cmake -S . -B "$build" -DMPI_HOME="$mpi_home" ${MPIACC_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
mpiexec="$mpi_home/bin/mpiexec"
echo "== mpiacc-info"
"$mpiexec" -n 1 "$build/tools/mpiacc-info"
if [ -x "$build/examples/stencil2d/stencil2d" ]; then
  if nvidia-smi -L >/dev/null 2>&1; then
    echo "== Stencil2D, CUDA, 2 ranks"
    "$mpiexec" -n 2 "$build/examples/stencil2d/stencil2d" --backend cuda --size 4 --num-iters 200 --passes 3 "$@"
  else
    echo "== Stencil2D, OpenCL (no GPU found), 4 ranks"
    "$mpiexec" -n 4 "$build/examples/stencil2d/stencil2d" --backend opencl --customSize 256,256 \
        --num-iters 100 --passes 3 "$@"
  fi
fi
