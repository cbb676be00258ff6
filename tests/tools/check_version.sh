#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_version.sh SOURCE_DIR BUILD_DIR MPIACC_INFO LIBMPIACC
# One version everywhere: include/mpiacc.h's MPIACC_VERSION_* macros = CMake's
# project version (CMake refuses to configure otherwise) = what mpiacc-info
# --version prints = the pkg-config file's Version = the soname (0.x: major.minor,
# else major) = a "## [X.Y.Z]" section of CHANGELOG.md.
set -u
src=$1 build=$2 info=$3 lib=$4
status=0
fail() { echo "FAIL: $*"; status=1; }
h() { sed -nE "s/^#define MPIACC_VERSION_$1 ([0-9]+).*/\1/p" "$src/include/mpiacc.h"; }
v="$(h MAJOR).$(h MINOR).$(h PATCH)"
[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: no version in include/mpiacc.h ($v)"; exit 1; }
got=$("$info" --version) || fail "mpiacc-info --version failed"
[ "$got" = "mpiacc-info (mpiacc) $v" ] || fail "mpiacc-info --version says '$got', mpiacc.h $v"
pc=$(sed -nE 's/^Version: *//p' "$build/mpiacc.pc")
[ "$pc" = "$v" ] || fail "mpiacc.pc says Version '$pc', mpiacc.h $v"
maj=${v%%.*} min=${v#*.}; min=${min%%.*}
if [ "$maj" = 0 ]; then so=libmpiacc.so.0.$min; else so=libmpiacc.so.$maj; fi
soname=$(objdump -p "$lib" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "$so" ] || fail "libmpiacc's soname is '$soname', expected $so for version $v"
grep -qE "^## \[$v\]" "$src/CHANGELOG.md" || fail "CHANGELOG.md has no '## [$v]' section"
[ $status = 0 ] && echo "version $v: mpiacc.h, CMake, mpiacc-info, pkg-config, soname $so, CHANGELOG.md agree"
exit $status
