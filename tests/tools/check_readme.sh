#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_readme.sh SOURCE_DIR
# README.md as a newcomer meets it (issue 38, item 5):
#  - the first screen, 24 lines of 80 columns after the title, says what
#    mpiacc is and shows the set-up, test and demo commands (the two that set
#    up a fresh machine themselves, demo.sh and test.sh, with their time
#    estimates, and setup.sh), each line within 80 columns;
#  - the README is a user's guide of at most 250 lines;
#  - its time estimates are docs/performance.md's measured ones (section
#    "Set-up, test and demo times": "~N min" there and here);
#  - every relative link it holds leads to a file of the tree (and a
#    #fragment to a heading of that file).
set -u
src=$1
cd "$src" || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }
screen=$(sed -n 2,25p README.md)
n=$(wc -l <README.md)
[ "$n" -le 250 ] || fail "README.md has $n lines (at most 250)"
while IFS= read -r l; do
  [ "${#l}" -le 80 ] || fail "first screen: a line of ${#l} columns: $l"
done <<<"$screen"
grep -q 'mpiacc makes MPICH accelerator-aware' <<<"$screen" || fail "first screen: does not say what mpiacc is"
for c in './scripts/demo.sh' './scripts/test.sh' './scripts/setup.sh' 'cmake --install' 'mpiacc-run -n'; do
  grep -qF -- "$c" <<<"$screen" || fail "first screen: no '$c'"
done
# the two commands that set a fresh machine up, each with its time
demo_t=$(grep -oE '^\./scripts/demo\.sh +# ~[0-9]+ min' <<<"$screen" | grep -oE '[0-9]+ min')
test_t=$(grep -oE '^\./scripts/test\.sh +# ~[0-9]+ min' <<<"$screen" | grep -oE '[0-9]+ min')
[ -n "$demo_t" ] && [ -n "$test_t" ] || fail "first screen: demo.sh and test.sh without '# ~N min'"
times=$(awk '/^## Set-up, test and demo times/ {on = 1; next} /^## / {on = 0} on' docs/performance.md)
[ -n "$times" ] || fail "docs/performance.md has no section 'Set-up, test and demo times'"
grep -q "demo.sh.*~$demo_t" <<<"$times" || fail "README's demo ~$demo_t is not the measured one in docs/performance.md"
grep -q "test.sh.*~$test_t" <<<"$times" || fail "README's test ~$test_t is not the measured one in docs/performance.md"
# relative links
while IFS= read -r link; do
  file=${link%%#*} frag=""
  [ "$file" != "$link" ] && frag=${link#*#}
  [ -e "$file" ] || { fail "link to $link: no $file"; continue; }
  if [ -n "$frag" ]; then
    grep -E '^#+ ' "$file" | sed -E 's/^#+ //' | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g' |
      grep -qx -- "$frag" || fail "link to $link: no heading #$frag in $file"
  fi
done < <(grep -oE '\]\([^)]+\)' README.md | sed -E 's/^\]\(//; s/\)$//' | grep -vE '^(https?:|mailto:)' | sort -u)
[ $status -eq 0 ] && echo "README.md: passed ($n lines; first screen: what mpiacc is, demo ~$demo_t, test ~$test_t, set-up)"
exit $status
