#!/usr/bin/env bash
# usage: check_options.sh HALO3D MPIEXEC
# halo3d's own options: --help describes them, --size's forms and errors,
# and a run's header and CSV (manual variant only: it needs nothing of
# mpiacc but host MPI, so this passes before device collectives exist).
set -u
prog=$1 mpiexec=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; for f in "$out"/*; do echo "--- $f"; cat "$f"; done; exit 1; }

"$prog" --help >"$out/help" 2>&1 || fail "--help exited $?"
for o in --size --radius --iters --passes --method --variant --precision --backend --open --direct --csv; do
  grep -q -- "$o " "$out/help" || fail "--help does not list $o"
done
for bad in 0 4,4 4,4,4,4 x 4,,4 -3; do
  "$prog" --size "$bad" >"$out/bad" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "--size $bad exited $rc (expected 2)"
  grep -q "bad value '$bad' for --size" "$out/bad" || fail "no message for --size $bad"
done
"$prog" --method bogus >"$out/bad" 2>&1
[ $? -eq 2 ] || fail "--method bogus did not exit 2"

timeout 90 "$mpiexec" -n 2 "$prog" --backend opencl --size 5,4,3 --iters 3 --passes 1 --variant manual \
  --csv "$out/run.csv" >"$out/run" 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "SKIPPED: no OpenCL device (or OpenCL not built)"; exit 77; }
[ $rc -eq 0 ] || fail "manual run exited $rc"
grep -q "2 ranks as 2 x 1 x 1 (z y x), periodic; 5 x 4 x 3 (x y z) per rank" "$out/run" || fail "header"
grep -q "validation: PASSED" "$out/run" || fail "no validation line"
# the stencil alone + alltoallw manual + persistent manual
[ "$(tail -n +2 "$out/run.csv" | wc -l)" -eq 3 ] || fail "expected 3 CSV rows"
head -1 "$out/run.csv" | grep -q "^precision,method,variant,.*,manual_over_mpiacc,errors,protocol$" || fail "CSV columns"
echo "halo3d options: passed"
