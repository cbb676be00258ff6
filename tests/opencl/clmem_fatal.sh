#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: clmem_fatal.sh MPIEXEC TEST_OCL_HOST_CLMEM
# Issue 38, items 1 and 4: a cl_mem mpiacc knows, received with MPI_INT
# under MPI_ERRORS_ARE_FATAL.  The run must fail, and its error output
# must start with mpiacc's words in the user's terms -- "mpiacc: MPI_Recv:"
# and why (tag the datatype with MPIACC_BUF_OPENCL), then the call with its
# arguments and the rank -- with MPI's abort after them; the reason is
# printed once.
set -u
mpiexec=$1 prog=$2
out=$(env -u MPIACC_LOG timeout 50 "$mpiexec" -n 1 "$prog" --fatal 2>&1)
rc=$?
printf '%s\n' "$out"
case "$out" in *"SKIPPED: "*) exit 77 ;; esac
status=0
fail() { echo "FAIL: $*"; status=1; }
[ $rc -ne 0 ] || fail "the run succeeded"
first=$(printf '%s\n' "$out" | grep -n -m1 '^mpiacc: ' | cut -d: -f1)
abort=$(printf '%s\n' "$out" | grep -n -m1 -i 'abort' | cut -d: -f1)
[ -n "$first" ] || fail "no line starts with 'mpiacc: '"
printf '%s\n' "$out" | grep -q '^mpiacc: MPI_Recv: the buffer 0x[0-9a-f]* is a live OpenCL memory object (cl_mem), but the datatype is a host datatype (untagged): tag the datatype with MPIACC_BUF_TYPE = MPIACC_BUF_OPENCL' ||
  fail "the first line does not name MPI_Recv and say to tag the datatype with MPIACC_BUF_OPENCL"
printf '%s\n' "$out" | grep -q '^mpiacc:   on rank 0, in MPI_Recv(buf=0x[0-9a-f]*, count=256, datatype=MPI_INT, source=0, tag=4, comm=MPI_COMM_WORLD, status=MPI_STATUS_IGNORE)$' ||
  fail "no line with the call, its arguments and the rank"
[ -n "$abort" ] && [ -n "$first" ] && [ "$abort" -gt "$first" ] || fail "MPI's abort does not follow mpiacc's lines"
n=$(printf '%s\n' "$out" | grep -c 'is a live OpenCL memory object')
[ "$n" -eq 1 ] || fail "the reason printed $n times (expected once)"
[ $status -eq 0 ] && echo "ok: mpiacc's error first, in the user's call's words, then MPI's abort"
exit $status
