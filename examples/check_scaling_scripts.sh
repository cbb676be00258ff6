#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_scaling_scripts.sh BUILD_DIR
# scripts/stencil-scaling.sh and scripts/halo3d-scaling.sh on PoCL (the mpiacc stack only; ranks share the CPU
# device: --share): --help, bad values, --dry-run's estimate, and a tiny sweep of each with its CSV and summary.
set -u
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; for f in "$out"/*.txt "$out"/s/logs/sweep.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
for s in stencil-scaling.sh halo3d-scaling.sh; do
  "$root/scripts/$s" --help >"$out/help.txt" 2>&1 || fail "$s --help exited $?"
  grep -q -- "--quick" "$out/help.txt" || fail "$s --help does not list --quick"
  grep -q -- "--impi DIR" "$out/help.txt" || fail "$s --help does not list --impi"
  "$root/scripts/$s" --gpus x "$build" "$out/s" >"$out/bad.txt" 2>&1
  [ $? -eq 2 ] || fail "$s --gpus x did not exit 2"
  "$root/scripts/$s" --bogus "$build" "$out/s" >"$out/bad.txt" 2>&1
  [ $? -eq 2 ] || fail "$s --bogus did not exit 2"
done
[ -x "$build/examples/stencil2d/stencil2d" ] && [ -x "$build/examples/halo3d/halo3d" ] || {
  echo "SKIPPED: examples not built (OpenCL or CUDA missing)"; exit 77; }
# The GPU sweep's dry run needs the cuda-aware executables (a CUDA build).
if [ -x "$build/examples/stencil2d/stencil2d-cuda-aware" ]; then
  "$root/scripts/stencil-scaling.sh" --quick --dry-run --share "$build" "$out/d" >"$out/dry.txt" 2>&1 ||
    fail "stencil-scaling.sh --dry-run exited $?"
  grep -q "estimated [0-9]* s" "$out/dry.txt" || fail "no estimate"
  grep -q "n4_8192x8192" "$out/dry.txt" || fail "the 4-GPU 8192^2 point is not in the dry run"
  grep -q "n2_16384x8192" "$out/dry.txt" || fail "the strong 2-GPU point is not in the dry run"
else
  echo "note: no CUDA build: the GPU sweep's dry run is not checked"
fi
"$root/scripts/stencil-scaling.sh" --backend opencl --share --gpus "1 2" --weak 16 --strong 24 --iters 3 --passes 1 \
  "$build" "$out/s" >"$out/stencil.txt" 2>&1 || fail "stencil-scaling.sh exited $?"
grep -q "PASS every run validated" "$out/s/stencil_summary.md" || fail "stencil summary"
[ "$(grep -c '^weak,16,' "$out/s/stencil_scaling.csv")" -eq 12 ] || fail "expected 12 weak rows (3 series x 2 prec x 2)"
[ "$(grep -c '^strong,24,' "$out/s/stencil_scaling.csv")" -eq 12 ] || fail "expected 12 strong rows"
"$root/scripts/halo3d-scaling.sh" --backend opencl --share --gpus "1 2" --sizes 4 --iters 3 --passes 1 \
  "$build" "$out/s" >"$out/halo3d.txt" 2>&1 || fail "halo3d-scaling.sh exited $?"
grep -q "PASS every run validated" "$out/s/halo3d_summary.md" || fail "halo3d summary"
[ "$(grep -c '^weak,4,' "$out/s/halo3d_scaling.csv")" -eq 12 ] || fail "expected 12 halo3d rows"
python3 "$root/scripts/scaling_model.py" --fit "$out/s/stencil_scaling.csv" --gpus "8 64" >"$out/model.txt" 2>&1 ||
  fail "scaling_model.py --fit exited $?"
grep -q "refitted to" "$out/model.txt" || fail "scaling_model.py --fit printed no note"
echo "scaling scripts: passed"
