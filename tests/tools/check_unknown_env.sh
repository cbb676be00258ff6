#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_unknown_env.sh MPIACC_INFO MPIEXEC
# A misspelt MPIACC_* variable is warned about at start-up, naming the right
# one (issue 30), once per job (issue 38): mpiacc-info alone (no MPI_Init:
# once) and under mpiexec -n 2 (MPI_Init: once, by rank 0, whose rank the
# line names -- never "rank -1"); the reserved MPIACC_TEST_* names and
# MPIACC_LOG=off give none.
set -u
info=$1 mpiexec=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
want='MPIACC_LOGG is not an mpiacc variable and is ignored: did you mean MPIACC_LOG?'
fail() { echo "FAIL: $*"; for f in "$out"/*; do echo "--- $f"; cat "$f"; done; exit 1; }
count() { grep -cF "$want" "$1"; }

MPIACC_LOGG=info MPIACC_TEST_ANYTHING=1 timeout 60 "$info" --env >"$out/one.out" 2>"$out/one.err" ||
  fail "mpiacc-info --env failed"
[ "$(count "$out/one.err")" -eq 1 ] || fail "mpiacc-info: expected the warning once on stderr"
grep -q MPIACC_TEST_ANYTHING "$out/one.err" && fail "a reserved MPIACC_TEST_ name was warned about"

timeout 120 "$mpiexec" -n 2 -genv MPIACC_LOGG info "$info" >"$out/mpi.out" 2>"$out/mpi.err" ||
  fail "mpiexec -n 2 mpiacc-info failed"
[ "$(count "$out/mpi.err")" -eq 1 ] || fail "mpiexec -n 2: expected the warning once (by rank 0)"
grep -qF "[mpiacc warn rank 0] $want" "$out/mpi.err" || fail "mpiexec -n 2: the warning does not name rank 0"
grep -q 'rank -1' "$out/mpi.err" && fail "mpiexec -n 2: a line says rank -1"

MPIACC_LOGG=info MPIACC_LOG=off timeout 60 "$info" --env >"$out/off.out" 2>"$out/off.err" ||
  fail "mpiacc-info --env failed with MPIACC_LOG=off"
[ "$(count "$out/off.err")" -eq 0 ] || fail "MPIACC_LOG=off still warned"
echo "unknown variables: passed"
