#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_env.sh SOURCE_DIR
# Every MPIACC_* variable is read through src/core/env.c's table and listed
# in README.md's "Environment" table, and the two lists are the same:
#  - a getenv("MPIACC_...") in src/ or tools/ outside env.c fails;
#  - a name passed to mpiacc_env_*() that the table or the README lacks fails;
#  - a README row that the table lacks, or a table entry the README lacks, fails;
#  - a default in the README that differs from the table's fails;
#  - MPIACC_LOG's levels are described in the same words by env.c (and so
#    mpiacc-info), the README's table and include/mpiacc.h.
# MPIACC_TEST_* variables (tests only) belong to tests/README.md's table "Variables of the tests".
# Every other MPIACC_* name the project itself sets or reads -- scripts (${MPIACC_X}),
# CTest environments, the tests' and benchmarks' getenv -- must be one the
# library does not warn about as unknown: a variable of the table, a
# reserved prefix (MPIACC_TEST_, MPIACC_BENCH_), or env.c's list of the
# scripts' names.
set -u
src=$1
cd "$src" || exit 1
status=0
table=$(grep -oE '^\s*\{"MPIACC_[A-Z0-9_]+", MPIACC_ENV_' src/core/env.c | grep -oE '"MPIACC_[A-Z0-9_]+"' | tr -d '"' | sort -u)
used=$(grep -rhoE 'mpiacc_env_(bool|enum|size|int)\("MPIACC_[A-Z0-9_]+"' src tools | grep -oE 'MPIACC_[A-Z0-9_]+' | sort -u)
readme=$(awk '/^## Environment/{on=1; next} /^## /{on=0} on' README.md |
         grep -oE '^\| *`MPIACC_[A-Z0-9_]+' | grep -oE 'MPIACC_[A-Z0-9_]+' | grep -v '^MPIACC_TEST_' | sort -u)
direct=$(grep -rnE 'getenv\("MPIACC_' src tools | grep -v '^src/core/env.c:')
if [ -n "$direct" ]; then
  echo "FAIL: MPIACC_* read with getenv outside src/core/env.c (use mpiacc_env_*):"
  echo "$direct"
  status=1
fi
for v in $used; do
  grep -qx "$v" <<<"$table" || { echo "FAIL: $v is read but not in src/core/env.c's table"; status=1; }
  grep -qx "$v" <<<"$readme" || { echo "FAIL: $v is read but not in README.md's Environment table"; status=1; }
done
for v in $readme; do
  grep -qx "$v" <<<"$table" || { echo "FAIL: README.md lists $v, which src/core/env.c's table lacks"; status=1; }
done
for v in $table; do
  grep -qx "$v" <<<"$readme" || { echo "FAIL: src/core/env.c's table has $v, which README.md lacks"; status=1; }
done
# names the project uses that the library would call unknown
foreign=$(sed -n '/foreign\[\] = {/,/};/p' src/core/env.c | grep -oE '"MPIACC_[A-Z0-9_]+"' | tr -d '"' | sort -u)
project=$( { grep -rhoE '\$\{?MPIACC_[A-Z0-9_]+' --include='*.sh' --include='*.in' --include=run scripts .ci tools 2>/dev/null
             grep -rhoE 'getenv\("MPIACC_[A-Z0-9_]+' tests bench examples 2>/dev/null
             grep -rhoE '(ENV|ENVIRONMENT)[^)]*' --include=CMakeLists.txt tests bench examples 2>/dev/null
             grep -rhoE 'genv +MPIACC_[A-Z0-9_]+' --include=CMakeLists.txt tests bench examples 2>/dev/null
           } | grep -oE 'MPIACC_[A-Z0-9_]+' | sort -u)
for v in $project; do
  case $v in MPIACC_TEST_* | MPIACC_BENCH_*) continue ;; esac
  grep -qx "$v" <<<"$table" && continue
  grep -qx "$v" <<<"$foreign" && continue
  echo "FAIL: $v is set or read by the project but the library would warn about it as unknown:" \
       "add it to src/core/env.c's foreign[] (scripts) or rename it MPIACC_TEST_*/MPIACC_BENCH_* (tests, benchmarks)"
  status=1
done
# the defaults: env.c's third field = README's second column
for v in $table; do
  def_c=$(grep -oE "\{\"$v\", MPIACC_ENV_[A-Z]+, \"[^\"]*\"" src/core/env.c | sed -E 's/.*, "([^"]*)"$/\1/')
  def_r=$(grep -E "^\| *\`$v\` *\|" README.md | head -1 | awk -F'|' '{print $3}' | tr -d ' `')
  [ "$def_c" = "$def_r" ] ||
    { echo "FAIL: $v: default '$def_c' in src/core/env.c, '$def_r' in README.md"; status=1; }
done
# MPIACC_LOG's levels are described once: env.c's meaning (what mpiacc-info
# prints) = README.md's table cell = include/mpiacc.h's words
norm() { tr -s ' \n' '  ' | sed 's/^ *//; s/ *$//'; }
log_c=$(awk '/\{"MPIACC_LOG", MPIACC_ENV_/ {on = 1; next} on && /^ *\{"MPIACC_/ {exit} on' src/core/env.c |
        grep -oE '"[^"]*"' | sed 's/^"//; s/"$//' | tr -d '\n' | norm)
log_r=$(grep -E '^\| *`MPIACC_LOG` *\|' README.md | sed 's/\\|/\x01/g' | awk -F'|' '{print $5}' | norm)
log_h=$(awk '/^ \*  - MPIACC_LOG=off\|warn\|info\|debug/ {on = 1} on && /^ \*  - / && !/MPIACC_LOG=/ {exit} on' include/mpiacc.h |
        sed 's/^ \*  - //; s/^ \*    //' | norm | sed 's/^MPIACC_LOG=off|warn|info|debug (default warn): //; s/\.$//')
[ -n "$log_c" ] && [ "$log_c" = "$log_r" ] ||
  { echo "FAIL: MPIACC_LOG: README.md says '$log_r', src/core/env.c '$log_c'"; status=1; }
[ "$log_c" = "$log_h" ] || { echo "FAIL: MPIACC_LOG: include/mpiacc.h says '$log_h', src/core/env.c '$log_c'"; status=1; }
echo "env: $(wc -w <<<"$table") variables in the table, $(wc -w <<<"$used") read, $(wc -w <<<"$readme") in README.md"
[ $status -eq 0 ] && echo "env: passed"
exit $status
