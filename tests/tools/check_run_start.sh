#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_run_start.sh BUILD_DIR
# What mpiacc-run cut from its start-up (issue 38, item 8; the times are in
# docs/performance.md, measured with hyperfine, never asserted here):
#  - ranks on this node start without a script of their own: the command
#    line is mpiexec -genv LD_PRELOAD ... PROGRAM (no --rank-exec);
#  - the ranks' UCX, when it has the setting (UCX 1.22), waits 5 ms instead
#    of 50 ms per function its memory hooks patch
#    (UCX_MEM_BISTRO_GRACE_DURATION=5ms in --print-env), unless the user set
#    it; a UCX without the setting does not get it (it would warn).
set -u
build=$1
run=$build/tools/mpiacc-run
status=0
fail() { echo "FAIL: $*"; status=1; }
dry=$(env -u UCX_MEM_BISTRO_GRACE_DURATION "$run" --dry-run -n 2 /bin/true)
echo "$dry"
grep -q -- '--rank-exec' <<<"$dry" && fail "ranks on this node go through the rank-side script"
grep -q -- ' -genv LD_PRELOAD [^ ]*libmpiacc.so ' <<<"$dry" || fail "no -genv LD_PRELOAD in the command line"
pe=$(env -u UCX_MEM_BISTRO_GRACE_DURATION -u LD_LIBRARY_PATH "$run" --print-env)
ucx=$(sed -n 's/^LD_LIBRARY_PATH=\([^:]*\).*/\1/p' <<<"$pe")
if [ -n "$ucx" ] && grep -q BISTRO_GRACE_DURATION "$ucx/libucs.so.0" 2>/dev/null; then
  grep -qx 'UCX_MEM_BISTRO_GRACE_DURATION=5ms' <<<"$pe" || fail "UCX $ucx has the grace setting, --print-env does not set it: $pe"
  pe=$(env UCX_MEM_BISTRO_GRACE_DURATION=20ms "$run" --print-env)
  grep -q UCX_MEM_BISTRO_GRACE_DURATION <<<"$pe" && fail "the user's UCX_MEM_BISTRO_GRACE_DURATION not kept: $pe"
else
  grep -q UCX_MEM_BISTRO_GRACE_DURATION <<<"$pe" && fail "a UCX without the grace setting ($ucx) gets it: $pe"
fi
[ $status -eq 0 ] && echo "mpiacc-run start: passed (no script per local rank; UCX's patch grace 5 ms where it has the setting)"
exit $status
