#!/usr/bin/env bash
# usage: check_options.sh STENCIL2D MPIEXEC
# stencil2d's own options: --msize PxQ (and P,Q) sets the process grid, a
# malformed or mismatched grid is refused, --direct is reported in the
# header (the protocol in effect is what the communicator reports).
set -u
prog=$1 mpiexec=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; for f in "$out"/*; do echo "--- $f"; cat "$f"; done; exit 1; }
small=(--backend opencl --customSize 16,16 --num-iters 3 --passes 1 --precision sp)

"$prog" --help >"$out/help" 2>&1 || fail "--help exited $?"
grep -q -- '--msize TEXT *process grid PxQ' "$out/help" || fail "--help does not describe --msize PxQ"
grep -q -- '--direct ' "$out/help" || fail "--help does not list --direct"
grep -q -- '--stream-ordered ' "$out/help" || fail "--help does not list --stream-ordered"
grep -q -- '--stream-ordered-sends ' "$out/help" || fail "--help does not list --stream-ordered-sends"

for bad in 2y2 0x4 x2 2x 2x2x2 -1x4 2x2junk; do
  "$prog" --msize "$bad" >"$out/bad" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "--msize $bad exited $rc (expected 2)"
  grep -q "bad value '$bad' for --msize" "$out/bad" || fail "no message for --msize $bad"
done

timeout 60 "$mpiexec" -n 2 "$prog" "${small[@]}" --msize 2x2 >"$out/mismatch" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "--msize 2x2 on 2 ranks exited $rc (expected 1)"
grep -q "does not match 2 ranks" "$out/mismatch" || fail "no message for a grid that does not match"

timeout 60 "$mpiexec" -n 2 "$prog" "${small[@]}" --msize 1,2 >"$out/comma" 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "SKIPPED: no OpenCL device"; exit 77; }
[ $rc -eq 0 ] || fail "--msize 1,2 exited $rc"
grep -q "2 ranks as 1 x 2" "$out/comma" || fail "--msize 1,2 did not give a 1 x 2 grid"
grep -q "protocol: default requested" "$out/comma" || fail "no default protocol in the header"
grep -q "exchanges: receives in host order, sends in host order" "$out/comma" || fail "no host-order completion in the header"

timeout 60 "$mpiexec" -n 2 "$prog" "${small[@]}" --msize 2x1 --direct --csv "$out/direct.csv" >"$out/direct" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "--direct exited $rc"
grep -q "2 ranks as 2 x 1" "$out/direct" || fail "--msize 2x1 did not give a 2 x 1 grid"
grep -q "protocol: direct requested" "$out/direct" || fail "--direct not reported in the header"
# the protocol column is the one in effect: direct where the library knows the key
if grep -q "reports mpiacc_direct=true" "$out/direct"; then want=direct; else want=default; fi
[ "$(tail -n +2 "$out/direct.csv" | wc -l)" -eq 2 ] || fail "expected 2 CSV rows (sp: manual, mpiacc)"
# gpus: the devices in use, as the header reports them (1 on a one-GPU machine, 2 with two)
gpus=$(sed -n 's/.*devices: \([0-9]*\) in use.*/\1/p' "$out/direct" | head -1)
tail -n +2 "$out/direct.csv" | grep -qv ",2x1,${gpus:-1},$want\$" &&
  fail "CSV rows do not end with msize,gpus,protocol = 2x1,${gpus:-1},$want"
echo "stencil2d options: passed"
