#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_info.sh BUILD_DIR
# Issue 38, item 2: mpiacc-info says what mpiacc-run gives, and separately
# what the bare process has when the two differ.
#  - started bare, its transport line is the one of a rank started by
#    mpiacc-run (the same words as `mpiacc-run -n 1 mpiacc-info` prints), and
#    its UCX line names the UCX that rank loads; when this process loaded
#    another UCX (MPICH's own), a separate "this process" line says so;
#  - started by mpiacc-run, no "this process" line and no "as mpiacc-run
#    starts a rank" (it is such a rank);
#  - --config: one UCX version per line (headers: the API; for mpiacc-run:
#    the version that environment loads; loaded: this process's), and the
#    "UCX for mpiacc-run" version is the one the rank reports.
set -u
build=$1
info=$build/tools/mpiacc-info run=$build/tools/mpiacc-run
status=0
fail() { echo "FAIL: $*"; status=1; }
# (MPIR_CVAR_* and LD_LIBRARY_PATH as a user's shell has them: unset)
bare=$(env -u MPIR_CVAR_CH4_NETMOD -u MPIR_CVAR_NOLOCAL -u LD_LIBRARY_PATH timeout 120 "$info") || fail "mpiacc-info failed"
ranked=$(timeout 120 "$run" -n 1 "$info") || fail "mpiacc-run -n 1 mpiacc-info failed"
config=$(env -u MPIR_CVAR_CH4_NETMOD -u MPIR_CVAR_NOLOCAL -u LD_LIBRARY_PATH timeout 60 "$info" --config) ||
  fail "mpiacc-info --config failed"
printf '%s\n' "--- bare" "$bare" | grep -E '^---|UCX|transport|this process'
printf '%s\n' "--- under mpiacc-run" "$ranked" | grep -E '^---|UCX|transport|this process'
rank_t=$(sed -n 's/^  transport  *//p' <<<"$ranked")
rank_u=$(sed -n 's/^  UCX loaded  *//p' <<<"$ranked")
[ -n "$rank_t" ] && [ -n "$rank_u" ] || fail "mpiacc-run -n 1 mpiacc-info printed no transport or UCX line"
grep -q '^  this process' <<<"$ranked" && fail "under mpiacc-run: a 'this process' line"
grep -q 'as mpiacc-run starts a rank' <<<"$ranked" && fail "under mpiacc-run: 'as mpiacc-run starts a rank'"
bare_t=$(sed -n 's/^  transport  *\(.*\) (as mpiacc-run starts a rank)$/\1/p' <<<"$bare")
bare_u=$(sed -n 's/^  UCX  *\(.*\) (as mpiacc-run starts a rank)$/\1/p' <<<"$bare")
[ "$bare_t" = "$rank_t" ] || fail "bare: transport '$bare_t', a rank of mpiacc-run: '$rank_t'"
[ "$bare_u" = "$rank_u" ] || fail "bare: UCX '$bare_u', a rank of mpiacc-run: '$rank_u'"
here=$(sed -n 's/^  UCX loaded  *\([^ ,]*\).*/\1/p' <<<"$config")
if [ -n "$here" ] && [ "$here" != "${rank_u%%,*}" ]; then
  grep -q "^  this process          not started by mpiacc-run: transport .*; UCX $here" <<<"$bare" ||
    fail "bare: this process loaded $here, not mpiacc-run's UCX, and no 'this process' line says so"
  grep -q "^  UCX loaded .*(this process, not started by mpiacc-run" <<<"$config" ||
    fail "--config: this process's UCX is not marked as this process's"
fi
while IFS= read -r l; do
  n=$(grep -oE '(version|API) [0-9]' <<<"$l" | wc -l)
  [ "$n" -le 1 ] || fail "--config: more than one UCX version on a line: $l"
done < <(grep '^  UCX' <<<"$config")
want_v=${rank_u##*, version }
grep -q "^  UCX for mpiacc-run .* (version $want_v" <<<"$config" ||
  fail "--config: 'UCX for mpiacc-run' does not say version $want_v (what a rank loads)"
# NCCL: the one the build found (scripts/setup.sh's first), not a CUDA
# toolkit's lib/ copy that the loader's search would find (issue 38.6)
nccl=$(sed -n 's/^MPIACC_NCCL_BUILD_LIB:FILEPATH=//p' "$build/CMakeCache.txt")
if [ -n "$nccl" ] && [ -e "$nccl" ] && [ -z "${NCCL_ROOT:-}" ]; then
  got=$(sed -n 's/^  NCCL [0-9.]* (\([^)]*\)).*/\1/p' <<<"$bare" | head -1)
  [ "$(readlink -f "$got")" = "$(readlink -f "$nccl")" ] || fail "NCCL loaded from '$got', not the build's $nccl"
  grep -q '^  CUDA  *unavailable' <<<"$bare" && ! grep -q '^  NCCL .*unused without a device' <<<"$bare" &&
    fail "no CUDA device, yet NCCL is not said to be unused"
fi
[ $status -eq 0 ] && echo "mpiacc-info: passed (mpiacc-run's transport and UCX, this process's apart)"
exit $status
