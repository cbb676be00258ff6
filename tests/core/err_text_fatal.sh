#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: err_text_fatal.sh MPIEXEC TEST_ERR_TEXT CASE
# Runs `TEST_ERR_TEXT --fatal CASE` on one rank, whose failing call meets
# MPI_ERRORS_ARE_FATAL: the run must fail, and its output must hold the
# error exactly once, naming the call with its arguments (MPI's handler
# prints it; mpiacc prints nothing of its own at the default log level).
set -u
mpiexec=$1 prog=$2 case=$3
case $case in
isend) call='MPI_Isend(buf=0x' args="count=4, datatype=0x[0-9a-f]* 'halo_col', dest=0, tag=7, comm=MPI_COMM_WORLD, request=0x"
       why='the datatype is not committed' ;;
bcast) call='MPI_Bcast(buffer=0x' args="count=-2, datatype=0x[0-9a-f]* 'block8', root=0, comm=MPI_COMM_WORLD)"
       why='negative count -2' ;;
pack)  call='MPI_Pack(inbuf=0x' args="incount=1, datatype=0x[0-9a-f]* 'block8', outbuf=0x[0-9a-f]*, outsize=16,"
       why='packing 32 bytes at position 0 of a 16-byte packed buffer' ;;
*) echo "unknown case $case"; exit 2 ;;
esac
out=$(env -u MPIACC_LOG "$mpiexec" -n 1 "$prog" --fatal "$case" 2>&1)
rc=$?
printf '%s\n' "$out"
status=0
[ $rc -ne 0 ] || { echo "FAIL: the run succeeded"; status=1; }
for pattern in "$call" "$args" "$why"; do
  n=$(printf '%s\n' "$out" | grep -o -- "$pattern" | wc -l)
  [ "$n" -eq 1 ] || { echo "FAIL: '$pattern' printed $n times (expected once)"; status=1; }
done
if printf '%s\n' "$out" | grep -q '\[mpiacc '; then echo "FAIL: mpiacc printed a line of its own"; status=1; fi
[ $status -eq 0 ] && echo "ok: the error printed once, by the handler"
exit $status
