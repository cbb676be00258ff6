#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_cli.sh PROGRAM MPIEXEC
# The command-line behaviour every program under bench/, examples/ and
# tools/ shares (bench/common/cli.h): --help prints the usage and exits 0 at
# once, without running anything, with and without mpiexec; an unknown
# option or a malformed value exits 2 with a message and the usage.
set -u
prog=$1 mpiexec=$2
name=$(basename "$prog")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL $name: $*"; for f in "$out"/*; do echo "--- $f"; cat "$f"; done; exit 1; }

timeout 20 "$prog" --help >"$out/help.out" 2>"$out/help.err"
rc=$?
[ $rc -eq 0 ] || fail "--help exited $rc"
grep -q '^usage: ' "$out/help.out" || fail "--help printed no usage line"
grep -q -- '--help' "$out/help.out" || fail "--help does not list --help"
# a benchmark that ran would have printed its header or a SKIPPED line
grep -qE '^# mpiacc |^SKIPPED|^run time:' "$out/help.out" && fail "--help ran the program"

timeout 30 "$mpiexec" -n 2 "$prog" --help >"$out/mpi-help.out" 2>"$out/mpi-help.err"
rc=$?
[ $rc -eq 0 ] || fail "mpiexec -n 2 ... --help exited $rc"
n=$(grep -c '^usage: ' "$out/mpi-help.out")
[ "$n" -eq 1 ] || fail "mpiexec -n 2 ... --help printed the usage $n times"

timeout 20 "$prog" --no-such-option >"$out/bad.out" 2>"$out/bad.err"
rc=$?
[ $rc -eq 2 ] || fail "an unknown option exited $rc (expected 2)"
grep -q "unknown option '--no-such-option'" "$out/bad.err" || fail "no message for an unknown option"
grep -q '^usage: ' "$out/bad.err" || fail "no usage after an unknown option"

# a malformed value: the first option that takes a number, if any
opt=$(grep -oE -- '--[a-zA-Z0-9-]+ (N|X|BYTES|A,B)( |$)' "$out/help.out" | head -1 | cut -d' ' -f1)
if [ -n "$opt" ]; then
  timeout 20 "$prog" "$opt" 12abc >"$out/val.out" 2>"$out/val.err"
  rc=$?
  [ $rc -eq 2 ] || fail "$opt 12abc exited $rc (expected 2)"
  grep -q "bad value '12abc' for $opt" "$out/val.err" || fail "no message for a malformed value of $opt"
fi
echo "cli $name: passed"
