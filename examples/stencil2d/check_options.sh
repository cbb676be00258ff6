#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_options.sh STENCIL2D MPIEXEC [STENCIL2D_CUDA_AWARE]
# stencil2d's own options: --help lists them; --msize PxQ (and P,Q) sets the process grid, a malformed or
# mismatched grid is refused; --variant takes a comma-separated list (bad tokens refused, cuda-aware alone on
# OpenCL skipped); --overlap and --direct (no effect) in the header; the CSV's columns and one row per run.
# With the cuda-aware executable: its --help, and its refusal of the mpiacc variants.
set -u
prog=$1 mpiexec=$2 peer=${3:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; for f in "$out"/*; do echo "--- $f"; cat "$f"; done; exit 1; }
small=(--backend opencl --customSize 16,16 --num-iters 3 --passes 1 --precision sp)

"$prog" --help >"$out/help" 2>&1 || fail "--help exited $?"
grep -q -- '--msize TEXT *process grid PxQ' "$out/help" || fail "--help does not describe --msize PxQ"
for o in --variant --overlap --overlap-both --host-order --direct --stream-ordered --stream-ordered-sends --csv; do
  grep -q -- "$o " "$out/help" || fail "--help does not list $o"
done
grep -q 'manual|mpiacc|cuda-aware|both|all' "$out/help" || fail "--help does not list the variants"

for bad in 2y2 0x4 x2 2x 2x2x2 -1x4 2x2junk; do
  "$prog" --msize "$bad" >"$out/bad" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "--msize $bad exited $rc (expected 2)"
  grep -q "bad value '$bad' for --msize" "$out/bad" || fail "no message for --msize $bad"
done
for bad in foo mpiacc,foo , manual,,x; do
  "$prog" --variant "$bad" >"$out/bad" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "--variant $bad exited $rc (expected 2)"
  grep -q "bad value '$bad' for --variant" "$out/bad" || fail "no message for --variant $bad"
done
"$prog" --overlap=yes >"$out/bad" 2>&1
[ $? -eq 2 ] || fail "--overlap=yes did not exit 2 (a flag takes no value)"

if [ -n "$peer" ]; then
  "$peer" --help >"$out/peer_help" 2>&1 || fail "cuda-aware --help exited $?"
  grep -q -- '--overlap ' "$out/peer_help" || fail "cuda-aware --help does not list --overlap"
  grep -q -- '--stream-ordered' "$out/peer_help" && fail "cuda-aware --help lists an mpiacc option"
  for bad in mpiacc manual both; do
    "$peer" --variant "$bad" >"$out/bad" 2>&1
    [ $? -eq 2 ] || fail "stencil2d-cuda-aware --variant $bad did not exit 2"
  done
  ldd "$peer" 2>/dev/null | grep -q libmpiacc && fail "stencil2d-cuda-aware links libmpiacc"
fi

timeout 60 "$mpiexec" -n 2 "$prog" "${small[@]}" --msize 2x2 >"$out/mismatch" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "--msize 2x2 on 2 ranks exited $rc (expected 1)"
grep -q "does not match 2 ranks" "$out/mismatch" || fail "no message for a grid that does not match"

timeout 60 "$mpiexec" -n 2 "$prog" "${small[@]}" --msize 1,2 >"$out/comma" 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "SKIPPED: no OpenCL device"; exit 77; }
[ $rc -eq 0 ] || fail "--msize 1,2 exited $rc"
grep -q "2 ranks as 1 x 2" "$out/comma" || fail "--msize 1,2 did not give a 1 x 2 grid"
grep -q "mpiacc completion: receives in stream order (MPIACC_ORDER_STREAM), sends in host order" "$out/comma" ||
  fail "no completion line"
grep -q "exchange routine lines" "$out/comma" || fail "no exchange routine lines in the header"

timeout 60 "$mpiexec" -n 2 "$prog" "${small[@]}" --variant cuda-aware >"$out/ca" 2>&1
rc=$?
[ $rc -eq 77 ] || fail "--variant cuda-aware on OpenCL exited $rc (expected 77)"
grep -q "SKIPPED: the cuda-aware variant needs the CUDA backend" "$out/ca" || fail "no reason for the skip"

timeout 90 "$mpiexec" -n 2 "$prog" "${small[@]}" --msize 2x1 --variant all --overlap-both --direct \
  --csv "$out/run.csv" >"$out/run" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "--variant all --overlap-both --direct exited $rc"
grep -q "2 ranks as 2 x 1" "$out/run" || fail "--msize 2x1 did not give a 2 x 1 grid"
grep -q -- "--direct: no effect" "$out/run" || fail "--direct not reported as a no-op"
grep -q "note: the cuda-aware variant needs the CUDA backend" "$out/run" || fail "no note on cuda-aware"
grep -q "overlap: boundary band" "$out/run" || fail "no overlap line in the header"
grep -q "^  mpiacc+overlap " "$out/run" || fail "no mpiacc+overlap row"
grep -q "validation: PASSED" "$out/run" || fail "not validated"
head -1 "$out/run.csv" | grep -q "^precision,variant,overlap,.*,iter_us,kernel_us,exch_us,exposed_us,hidden,.*,msize,gpus,mpi$" ||
  fail "CSV columns"
# sp: manual, mpiacc, mpiacc+overlap
[ "$(tail -n +2 "$out/run.csv" | wc -l)" -eq 3 ] || fail "expected 3 CSV rows"
grep -q "^sp,mpiacc,1,opencl,2,16,16,1,3,1," "$out/run.csv" || fail "no sp mpiacc overlap row"
gpus=$(sed -n 's/.*devices: \([0-9]*\) in use.*/\1/p' "$out/run" | head -1)
tail -n +2 "$out/run.csv" | grep -qv ",2x1,${gpus:-1},mpich" && fail "CSV rows do not end with msize,gpus,mpi = 2x1,${gpus:-1},mpich..."
echo "stencil2d options: passed"
