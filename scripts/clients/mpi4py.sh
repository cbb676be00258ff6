#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/clients/mpi4py.sh: mpi4py (PyPI wheel) through mpiacc on MPICH:
# point-to-point and Allreduce on CUDA arrays (__cuda_array_interface__).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  cat <<'USAGE'
usage: scripts/clients/mpi4py.sh [options]

Runs scripts/clients/mpi4py_cuda.py on 2 ranks through the mpiacc-run of
the library (a build tree's tools/, an install's bin/; none: an error;
its transport is named in the output) with MPIACC_UVA=1: Send/Recv,
Isend/Irecv, Sendrecv and Allreduce, data checked on the host.
  host part    NumPy arrays (always)
  device part  CuPy arrays when CuPy works, else cudaMalloc'd arrays through
               ctypes over libcudart (the CUDA toolkit's lib64); SKIPPED
               without a CUDA GPU
mpi4py is not a dependency of mpiacc: give a Python that has it (e.g. a venv
with `pip install mpi4py numpy`); without one the script prints SKIPPED.

options:
  --python FILE    Python with mpi4py and NumPy (default: $PYTHON, else python3)
  --lib FILE       libmpiacc.so of a build tree or an install (default: the repository's build tree)
  --mpiexec FILE   MPICH's mpiexec (default: the repository's .venv, else PATH)
  --cuda DIR       CUDA toolkit for libcudart (default: nvcc's, or /usr/local/cuda)
  --n N            floats per array (default 262144)
  --host-only      no device part
  -h, --help       this text
USAGE
}

PY=${PYTHON:-python3}; CUDA_DIR=; N=262144; HOST_ONLY=0
while [ $# -gt 0 ]; do
  case $1 in
    --python) PY=$2; shift ;;
    --n) N=$2; shift ;;
    *) common_option "$@" && shift ;;
  esac
  shift
done
find_mpiexec
find_lib
MPI_LIB=$(cd "$MPI_BIN/../lib" && pwd)
command -v "$PY" >/dev/null || skip "no Python at $PY"
LD_LIBRARY_PATH=$MPI_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$PY" -c 'import numpy; from mpi4py import MPI' 2>/dev/null ||
  skip "$PY has no mpi4py/NumPy working with $MPI_LIB/libmpi.so.12 (pip install mpi4py numpy into a venv, give --python)"

LDP=$MPI_LIB
find_cuda
[ -d "$CUDA_DIR/lib64" ] && LDP=$LDP:$CUDA_DIR/lib64
ENVS=(LD_LIBRARY_PATH="$LDP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" MPIACC_UVA=1)
PROG=$CLIENTS_DIR/mpi4py_cuda.py
fails=0
echo "== mpi4py ($PY) on $MPI_LIB/libmpi.so.12, mpiacc preloaded ($LIBMPIACC), MPIACC_UVA=1"
echo "#  $(ranks_transport "${ENVS[@]}")"
printf "host part:   "; run_ranks 2 "${ENVS[@]}" -- "$PY" "$PROG" --arrays host --n "$N" 2>&1 | tail -5
[ "${PIPESTATUS[0]}" = 0 ] || fails=$((fails + 1))
if [ "$HOST_ONLY" = 0 ] && have_gpu; then
  printf 'device part: '; run_ranks 2 "${ENVS[@]}" -- "$PY" "$PROG" --arrays auto --cudart "$CUDA_DIR/lib64/libcudart.so" --n "$N" 2>&1 | tail -5
  [ "${PIPESTATUS[0]}" = 0 ] || fails=$((fails + 1))
else
  echo "device part: SKIPPED: $([ "$HOST_ONLY" = 1 ] && echo "--host-only" || echo "no CUDA GPU here")"
fi
echo "== mpi4py: $fails failure(s)"
[ "$fails" = 0 ]
