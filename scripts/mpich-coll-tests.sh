#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds MPICH's own collective tests (test/mpi/coll of an MPICH source tree
# that the user names; none of their code is kept in this repository) with
# MPICH's mpicc, runs each test of test/mpi/coll/testlist.in twice — plain
# MPICH, and through mpiacc (LD_PRELOAD of libmpiacc.so: every MPI call
# interposed, host buffers) — and compares: a test that passes plainly must
# pass through mpiacc.  Exit status 0 when no test regresses.
set -u

usage() {
    cat <<USAGE
usage: $0 [options] MPICH_SOURCE_TREE
  MPICH_SOURCE_TREE     holds test/mpi (e.g. git -C mpich archive HEAD test/mpi | tar -x -C DIR)
options:
  --build DIR           libmpiacc.so's build directory (default: ./build)
  --mpi PREFIX          MPICH prefix with bin/mpicc and bin/mpiexec (default: ./.venv)
  --work DIR            where the tests are built (default: /tmp/mpiacc-mpich-coll)
  --max-np N            skip tests that need more than N processes (default: 4)
  --filter REGEX        only tests whose name matches
  --exclude REGEX       leave out tests whose name matches (e.g. coll_large: GiB buffers)
  --timeout S           seconds per run (default: 120)
  --help                this text
USAGE
}

BUILD=./build MPI=./.venv WORK=/tmp/mpiacc-mpich-coll MAXNP=4 FILTER=. EXCLUDE='^$' TMO=120 SRC=
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --mpi) MPI=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --max-np) MAXNP=$2; shift 2 ;;
    --filter) FILTER=$2; shift 2 ;;
    --exclude) EXCLUDE=$2; shift 2 ;;
    --timeout) TMO=$2; shift 2 ;;
    --help|-h) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) SRC=$1; shift ;;
    esac
done
[ -n "$SRC" ] && [ -d "$SRC/test/mpi/coll" ] || { usage >&2; exit 2; }
LIB=$(readlink -f "$BUILD/libmpiacc.so")
[ -f "$LIB" ] || { echo "no libmpiacc.so in $BUILD" >&2; exit 2; }
MPICC=$(readlink -f "$MPI/bin/mpicc") MPIEXEC=$(readlink -f "$MPI/bin/mpiexec")
T=$(readlink -f "$SRC/test/mpi")
mkdir -p "$WORK/include" "$WORK/bin"

# The configure-generated headers the tests include: a minimal POSIX set.
cat > "$WORK/include/mpitestconf.h" <<CONF
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_STDLIB_H 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_INT64_T 1
#define HAVE_PTHREAD_H 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
CONF
: > "$WORK/include/mtest_mpix.h"
CFLAGS="-O1 -w -I$WORK/include -I$T/include"
for u in mtest mtest_common mtest_single run_mpitests; do
    [ -f "$WORK/$u.o" ] || "$MPICC" $CFLAGS -c "$T/util/$u.c" -o "$WORK/$u.o" || exit 1
done

pass=0 fail=0 regress=0 skipped=0 both_fail=0
report="$WORK/report.txt"
: > "$report"
run_one() { # $1 env-file $2 np $3.. program and args ; prints PASS/FAIL
    local out rc
    out=$(env $1 timeout "$TMO" "$MPIEXEC" -n "$2" "${@:3}" < /dev/null 2>&1); rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q "No Errors"; then echo PASS; else echo "FAIL(rc=$rc)"; fi
}
while read -r name np rest; do
    case "$name" in ''|\#*) continue ;; esac
    echo "$name" | grep -Eq "$FILTER" || continue
    echo "$name" | grep -Eq "$EXCLUDE" && { skipped=$((skipped + 1)); continue; }
    [ "$np" -le "$MAXNP" ] 2>/dev/null || { skipped=$((skipped + 1)); continue; }
    src="$T/coll/$name.c"
    [ -f "$src" ] || { skipped=$((skipped + 1)); continue; }
    if grep -q "mtest_dtp\|dtpools" "$src"; then skipped=$((skipped + 1)); continue; fi
    case "$rest" in *mpiversion=*|*xfail=*|*env=MPIR_CVAR*) skipped=$((skipped + 1)); continue ;; esac
    bin="$WORK/bin/$name"
    if [ ! -x "$bin" ]; then
        # tests written as run() get MPICH's driver (util/run_mpitests.c) as main
        drv=""; grep -Eq "^int main|^main\(" "$src" || drv="$WORK/run_mpitests.o"
        "$MPICC" $CFLAGS "$src" $drv "$WORK/mtest_single.o" "$WORK/mtest.o" "$WORK/mtest_common.o" -o "$bin" -lm \
            2> "$WORK/bin/$name.log" || { skipped=$((skipped + 1)); echo "$name: does not build (skipped)" >> "$report"; continue; }
    fi
    args=() envs=""
    for f in $rest; do
        case "$f" in arg=*) args+=("${f#arg=}") ;; env=*) envs="$envs ${f#env=}" ;; esac
    done
    plain=$(run_one "$envs" "$np" "$bin" "${args[@]}")
    acc=$(run_one "$envs LD_PRELOAD=$LIB" "$np" "$bin" "${args[@]}")
    line="$name np=$np ${args[*]}: MPICH $plain, mpiacc $acc"
    echo "$line" >> "$report"
    if [ "$plain" = PASS ] && [ "$acc" = PASS ]; then pass=$((pass + 1));
    elif [ "$plain" = PASS ]; then regress=$((regress + 1)); echo "REGRESSION: $line";
    elif [ "$acc" = PASS ]; then pass=$((pass + 1));
    else both_fail=$((both_fail + 1)); fi
done < "$T/coll/testlist.in"
echo "mpich-coll-tests: $pass passed through mpiacc as plainly, $regress regressions, $both_fail failing with plain MPICH too, $skipped skipped (np > $MAXNP, dtpools, MPICH-internal variables, not building); details in $report"
[ $regress -eq 0 ]
