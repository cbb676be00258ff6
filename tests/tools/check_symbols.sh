#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_symbols.sh LIBMPIACC LIST
# The MPI_*, MPIX_* and MPIACC_* symbols LIBMPIACC defines (nm -D --defined-only)
# are exactly those of LIST (tests/tools/exported_symbols.txt: one a line, `#`
# comments): an entry point lost (or added) by accident fails here.
set -u
lib=$1 list=$2
want=$(grep -v '^#' "$list" | sed '/^$/d' | LC_ALL=C sort -u)
got=$(nm -D --defined-only "$lib" | awk '$3 ~ /^(MPI_|MPIX_|MPIACC_)/ {print $3}' | LC_ALL=C sort -u)
[ -n "$got" ] || { echo "FAIL: nm -D found no MPI_* symbol in $lib"; exit 1; }
missing=$(LC_ALL=C comm -23 <(echo "$want") <(echo "$got"))
extra=$(LC_ALL=C comm -13 <(echo "$want") <(echo "$got"))
status=0
for s in $missing; do echo "FAIL: $s is in $list but not defined by $lib"; status=1; done
for s in $extra; do echo "FAIL: $s is defined by $lib but not in $list"; status=1; done
echo "$(echo "$got" | wc -l) symbols defined, $(echo "$want" | wc -l) listed"
exit $status
