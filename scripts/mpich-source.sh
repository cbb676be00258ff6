#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/mpich-source.sh [--fetch]: prints the directory that holds MPICH's
# own test suite (DIR/test/mpi: util, include, dtpools and the pt2pt, comm,
# datatype and coll programs) for scripts/mpich-tests.sh, or says on stderr
# why there is none and exits 77.
#   1. $MPIACC_TEST_MPICH_SRC, when set (an MPICH source tree, or a copy of its
#      test/mpi under DIR/test/mpi);
#   2. the cache, $MPIACC_TEST_MPICH_CACHE (default: .cache/mpich-tests in the
#      repository, ignored by git; copy it to a machine without a network);
#   3. with --fetch (scripts/setup.sh): the distribution's MPICH source package
#      (Debian, Ubuntu: apt-get source --download-only mpich, through a
#      deb-src entry of our own, apt's private lists under the cache; no root
#      needed, nothing of the system's apt changed), of which only those
#      directories of test/mpi are kept (about 4 MB; the package's MPICH
#      version: 4.0.2 on Debian 12), then printed.
# Idempotent: a second run finds the cache and downloads nothing.  Nothing of
# MPICH's is kept in the repository itself.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${MPIACC_TEST_MPICH_CACHE:-$root/.cache/mpich-tests}
keep=(util include dtpools pt2pt comm datatype coll)

skip() { echo "mpich-source: $*" >&2; exit 77; }
found() { [ -f "$1/test/mpi/util/mtest.c" ] && [ -d "$1/test/mpi/pt2pt" ]; }

if [ -n "${MPIACC_TEST_MPICH_SRC:-}" ]; then
  found "$MPIACC_TEST_MPICH_SRC" || skip "MPIACC_TEST_MPICH_SRC=$MPIACC_TEST_MPICH_SRC holds no test/mpi/util/mtest.c"
  (cd "$MPIACC_TEST_MPICH_SRC" && pwd)
  exit 0
fi
for d in "$cache"/mpich-*; do
  if found "$d"; then echo "$d"; exit 0; fi
done
[ "${1:-}" = --fetch ] || skip "no MPICH test suite in $cache (scripts/setup.sh fetches it; or set MPIACC_TEST_MPICH_SRC)"

# ---- fetch: the distribution's source package ---------------------------------------
command -v apt-get >/dev/null || skip "no apt-get: cannot fetch MPICH's source package (set MPIACC_TEST_MPICH_SRC to an MPICH source tree)"
# shellcheck disable=SC1091
. /etc/os-release
case "${ID:-}" in
debian) uri=http://deb.debian.org/debian comps=main keyring=/usr/share/keyrings/debian-archive-keyring.gpg ;;
ubuntu) uri=http://archive.ubuntu.com/ubuntu comps=universe keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg ;;
*) skip "not Debian or Ubuntu (ID=${ID:-unknown}): set MPIACC_TEST_MPICH_SRC to an MPICH source tree" ;;
esac
[ -n "${VERSION_CODENAME:-}" ] || skip "no VERSION_CODENAME in /etc/os-release"
apt=$cache/apt
mkdir -p "$apt/sources.d" "$apt/lists/partial" "$apt/archives/partial"
{
  echo "Types: deb-src"
  echo "URIs: $uri"
  echo "Suites: $VERSION_CODENAME"
  echo "Components: $comps"
  [ -f "$keyring" ] && echo "Signed-By: $keyring"
} >"$apt/sources.d/mpich-src.sources"
opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt/sources.d" -o "Dir::State::Lists=$apt/lists"
      -o "Dir::Cache::Archives=$apt/archives" -o "Debug::NoLocking=1" -q)
echo "mpich-source: fetching MPICH's test suite from $ID $VERSION_CODENAME's source package (apt-get source mpich) into $cache" >&2
apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 ||
  skip "apt-get update of the deb-src entry failed (offline?): see $apt/update.log"
dl=$apt/download
rm -rf "$dl"
mkdir -p "$dl"
(cd "$dl" && apt-get "${opts[@]}" source --download-only mpich) >"$apt/source.log" 2>&1 ||
  skip "apt-get source --download-only mpich failed (offline?): see $apt/source.log"
orig=$(compgen -G "$dl/mpich_*.orig.tar.*" | head -1 || true)
[ -n "$orig" ] || skip "no mpich_*.orig.tar.* in the source package (see $apt/source.log)"
top=$(set +o pipefail; tar -tf "$orig" | head -1 | cut -d/ -f1)
case "$top" in mpich-*) ;; *) skip "unexpected layout of $orig (top directory '$top')" ;; esac
rm -rf "${cache:?}/$top.partial"
mkdir -p "$cache/$top.partial"
tar -xf "$orig" -C "$cache/$top.partial" --strip-components=1 "${keep[@]/#/$top/test/mpi/}"
rm -rf "${cache:?}/$top"
mv "$cache/$top.partial" "$cache/$top"
rm -rf "$apt" # the lists and the package: 20 MB of nothing needed now
found "$cache/$top" || skip "the source package's test/mpi lacks util/mtest.c or pt2pt"
echo "$cache/$top"
