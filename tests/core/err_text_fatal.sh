#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: err_text_fatal.sh MPIEXEC TEST_ERR_TEXT CASE
# Runs `TEST_ERR_TEXT --fatal CASE` on one rank, whose failing call meets
# MPI_ERRORS_ARE_FATAL: the run must fail, and its output must start with
# mpiacc's error in the user's terms (issue 38): "mpiacc: MPI_Isend: why",
# then the call with its arguments (datatypes by name and what they are)
# and the rank; MPI's abort follows.  The reason and the arguments are
# printed once each, and mpiacc prints no log line of its own ("[mpiacc").
set -u
mpiexec=$1 prog=$2 case=$3
type="'[a-z0-9_]*' (derived: contiguous, tagged host)"
case $case in
isend) call='MPI_Isend' args="(buf=0x[0-9a-f]*, count=4, datatype=$type, dest=0, tag=7, comm=MPI_COMM_WORLD, request=0x[0-9a-f]*)"
       why='the datatype is not committed' ;;
bcast) call='MPI_Bcast' args="(buffer=0x[0-9a-f]*, count=-2, datatype=$type, root=0, comm=MPI_COMM_WORLD)"
       why='negative count -2' ;;
pack)  call='MPI_Pack' args="(inbuf=0x[0-9a-f]*, incount=1, datatype=$type, outbuf=0x[0-9a-f]*, outsize=16,"
       why='packing 32 bytes at position 0 of a 16-byte packed buffer' ;;
*) echo "unknown case $case"; exit 2 ;;
esac
out=$(env -u MPIACC_LOG "$mpiexec" -n 1 "$prog" --fatal "$case" 2>&1)
rc=$?
printf '%s\n' "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }
[ $rc -ne 0 ] || fail "the run succeeded"
first=$(printf '%s\n' "$out" | grep -v '^ *$' | head -1)
case "$first" in "mpiacc: $call: $why"*) ;; *) fail "the first line is not 'mpiacc: $call: $why...': $first" ;; esac
printf '%s\n' "$out" | grep -q "^mpiacc:   on rank 0, in $call$args" || fail "no line with the call and its arguments"
abort=$(printf '%s\n' "$out" | grep -n -m1 '^Abort' | cut -d: -f1)
[ -n "$abort" ] && [ "$abort" -gt 2 ] || fail "MPI's abort does not follow mpiacc's two lines"
for pattern in "$why" "$call$args"; do
  n=$(printf '%s\n' "$out" | grep -o -- "$pattern" | wc -l)
  [ "$n" -eq 1 ] || fail "'$pattern' printed $n times (expected once)"
done
if printf '%s\n' "$out" | grep -q '\[mpiacc '; then fail "mpiacc printed a log line"; fi
[ $status -eq 0 ] && echo "ok: the error printed once, as the user's call's, then MPI's abort"
exit $status
