#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_lib.sh BUILD_DIR MPIEXEC
# Issue 38, item 7: the client scripts (scripts/clients/lib.sh) run their
# ranks through the mpiacc-run that goes with the library, in a build tree
# (<build>/tools/) as in an install (<prefix>/bin/ beside lib/, lib64/ or
# lib/<triplet>/), stop with an error when there is none (or when it preloads
# another library) instead of running on MPICH's defaults, and name the
# transport the ranks use.  The installed case against a real install:
# tests/install/run.sh.
set -u
build=$(cd "$1" && pwd) mpiexec=$2
clients=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts/clients" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
lib=$(readlink -f "$build/libmpiacc.so")
# runner LIB: what find_runner finds for LIB (or its error, status 1)
runner() { (LIBMPIACC=$1; . "$clients/lib.sh"; find_runner; echo "$RUNNER") 2>&1; }

got=$(runner "$build/libmpiacc.so") || fail "build tree: $got"
[ "$got" = "$(readlink -f "$build/tools/mpiacc-run")" ] || fail "build tree: found '$got'"
for layout in lib lib64 lib/x86_64-linux-gnu; do
  p=$work/prefix-${layout//\//_}
  mkdir -p "$p/$layout" "$p/bin"
  ln -s "$lib" "$p/$layout/libmpiacc.so"
  printf '#!/bin/sh\necho "library: %s"\n' "$p/$layout/libmpiacc.so" >"$p/bin/mpiacc-run"
  chmod +x "$p/bin/mpiacc-run"
  got=$(runner "$p/$layout/libmpiacc.so") || fail "install ($layout): $got"
  [ "$got" = "$p/bin/mpiacc-run" ] || fail "install ($layout): found '$got'"
done
mkdir -p "$work/alone"
cp "$lib" "$work/alone/libmpiacc.so"
got=$(runner "$work/alone/libmpiacc.so") && fail "no mpiacc-run beside the library, yet: $got"
grep -q "no mpiacc-run beside" <<<"$got" || fail "no mpiacc-run: no error saying so: $got"
printf '#!/bin/sh\necho "library: /elsewhere/libmpiacc.so"\n' >"$work/prefix-lib/bin/mpiacc-run"
got=$(runner "$work/prefix-lib/lib/libmpiacc.so") && fail "an mpiacc-run of another library was taken: $got"
grep -q "preloads /elsewhere/libmpiacc.so" <<<"$got" || fail "another library: no error saying so: $got"
# the transport, as the ranks have it
line=$(LIBMPIACC=$build/libmpiacc.so MPIEXEC=$mpiexec; . "$clients/lib.sh"; find_runner; ranks_transport)
echo "$line"
case "$line" in
  *"ranks started by $(readlink -f "$build/tools/mpiacc-run"): transport: "*"; UCX: "*) ;;
  *) fail "ranks_transport: $line" ;;
esac
grep -q 'unknown (mpiacc-info failed)' <<<"$line" && fail "ranks_transport could not ask the ranks"
[ $status -eq 0 ] && echo "clients' mpiacc-run: passed (build tree, installs, none, another library; transport named)"
exit $status
