#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_options.sh HALO3D MPIEXEC [HALO3D_CUDA_AWARE]
# halo3d's own options: --help describes them, --size's and --variant's forms and errors, and a run's
# header and CSV (manual and mpiacc with --overlap-both: the CSV rows of each run).  With the cuda-aware
# executable: its --help, its refusal of the mpiacc variants, and that it does not link mpiacc.
set -u
prog=$1 mpiexec=$2 peer=${3:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; for f in "$out"/*; do echo "--- $f"; cat "$f"; done; exit 1; }

"$prog" --help >"$out/help" 2>&1 || fail "--help exited $?"
for o in --size --radius --iters --passes --method --variant --overlap --overlap-both --host-order --precision \
         --backend --open --direct --csv; do
  grep -q -- "$o " "$out/help" || fail "--help does not list $o"
done
for bad in 0 4,4 4,4,4,4 x 4,,4 -3; do
  "$prog" --size "$bad" >"$out/bad" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "--size $bad exited $rc (expected 2)"
  grep -q "bad value '$bad' for --size" "$out/bad" || fail "no message for --size $bad"
done
for bad in bogus mpiacc,x ,; do
  "$prog" --variant "$bad" >"$out/bad" 2>&1
  [ $? -eq 2 ] || fail "--variant $bad did not exit 2"
  grep -q "bad value '$bad' for --variant" "$out/bad" || fail "no message for --variant $bad"
done
"$prog" --method bogus >"$out/bad" 2>&1
[ $? -eq 2 ] || fail "--method bogus did not exit 2"
if [ -n "$peer" ]; then
  "$peer" --help >"$out/peer_help" 2>&1 || fail "halo3d-cuda-aware --help exited $?"
  grep -q -- '--overlap ' "$out/peer_help" || fail "halo3d-cuda-aware --help does not list --overlap"
  "$peer" --variant mpiacc >"$out/bad" 2>&1
  [ $? -eq 2 ] || fail "halo3d-cuda-aware --variant mpiacc did not exit 2"
  ldd "$peer" 2>/dev/null | grep -q libmpiacc && fail "halo3d-cuda-aware links libmpiacc"
fi

timeout 120 "$mpiexec" -n 2 "$prog" --backend opencl --size 5,4,3 --iters 3 --passes 1 --overlap-both --direct \
  --method persistent --csv "$out/run.csv" >"$out/run" 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "SKIPPED: no OpenCL device (or OpenCL not built)"; exit 77; }
[ $rc -eq 0 ] || fail "run exited $rc"
grep -q "2 ranks as 2 x 1 x 1 (z y x), periodic; 5 x 4 x 3 (x y z) per rank" "$out/run" || fail "header"
grep -q -- "--direct: no effect" "$out/run" || fail "--direct not reported as a no-op"
grep -q "exchange routine lines" "$out/run" || fail "no exchange routine lines"
grep -q "validation: PASSED" "$out/run" || fail "no validation line"
# persistent: manual, mpiacc, mpiacc+overlap
[ "$(tail -n +2 "$out/run.csv" | wc -l)" -eq 3 ] || fail "expected 3 CSV rows"
grep -q "^sp,persistent,mpiacc,1,opencl,2,2x1x1,1,5,4,3,1," "$out/run.csv" || fail "no mpiacc overlap row"
head -1 "$out/run.csv" | grep -q "^precision,method,variant,overlap,.*,kernel_us,exch_us,exposed_us,hidden,errors,mpi$" ||
  fail "CSV columns"
echo "halo3d options: passed"
