#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# MPICH's own test programs (test/mpi of an MPICH source tree), each run twice
# the way MPICH's harness (runtests) runs it -- plain MPICH on its defaults,
# and the same program under mpiacc-run (libmpiacc preloaded, MPICH's UCX
# netmod on the CUDA-enabled UCX, MPIR_CVAR_NOLOCAL=1) -- and compared.
# Prints a line per testlist entry and a summary; exits 1 when an entry does
# worse under mpiacc-run than plainly (entries MPICH marks xfail= are reported,
# never counted), 77 when there is no MPICH test suite (the reason on stderr).
# Nothing of MPICH's is copied into this repository: the sources are read
# from the tree given (scripts/mpich-source.sh fetches and caches one), the
# objects, programs and logs go to a work directory.
set -u

usage() {
    cat <<'EOF'
usage: scripts/mpich-tests.sh [options] [MPICH_SOURCE_TREE]

MPICH_SOURCE_TREE   holds test/mpi (an MPICH checkout or release, or a copy of
                    its test/mpi); default: what scripts/mpich-source.sh prints
                    (the distribution's source package, fetched by scripts/setup.sh
                    into .cache/mpich-tests)
options:
  --build DIR       mpiacc's build tree (default: $MPIACC_BUILD_DIR, else build)
  --mpi-home DIR    MPICH (bin/mpicc, bin/mpiexec; default: $MPI_HOME, else .venv)
  --mpiacc-run P    the launcher (default: BUILD/tools/mpiacc-run; an installed
                    PREFIX/bin/mpiacc-run works as well)
  --work DIR        objects, programs and logs (default: /tmp/mpiacc-mpich-tests)
  --dirs "D ..."    test/mpi directories (default: "pt2pt comm datatype coll")
  --max-ranks N     leave out entries asking for more processes (default: 4)
  --only REGEX      only entries that match (grep -E on "DIR/PROGRAM ARGS ENV", e.g.
                    "pt2pt/probe_unexp " or "^coll/")
  --exclude REGEX   leave out entries that match (the same text)
  --first           only the first testlist line of each program (default: every line)
  --xfail           run the entries MPICH marks xfail= too (default: left out, as
                    MPICH's harness does unless configured to run them)
  --timeout S       at most S seconds per run (default: the testlist's timeLimit,
                    else 180 as MPICH's harness; a shorter --timeout wins)
  --jobs N          entries run at once (default: 1)
  --max-time S      start no entry after S seconds; each one left unstarted counts
                    as a difference (a cap for CI; default: none)
  -h, --help        this text

Each testlist entry (process count, arg=, env=, mpiexecarg=, timeLimit=) runs
  plain       MPICH's mpiexec, the program as MPICH builds it (not linked with
              mpiacc), the caller's environment without LD_PRELOAD,
              MPIR_CVAR_CH4_NETMOD and MPIR_CVAR_NOLOCAL: MPICH's defaults;
  mpiacc-run  the same program under mpiacc-run (mpiacc preloaded, the ranks'
              environment of mpiacc-run --print-env).
A run passes as in MPICH's runtests: exit status 0, one line "No Errors" (or
"No errors"), and no other output but "Test Passed" lines.  Results: PASS,
FAIL (with why), TIMEOUT.  The verdict is "same", "better" (passes under
mpiacc-run only: MPICH on its defaults failed or hung; the exit status stays
0, the line says why) or "DIFFERENT" (worse under mpiacc-run: the exit status
is 1); for an entry with xfail= (MPICH's known failures, run with --xfail)
"xfail", whatever the results.  Entries are left out when they ask for more processes than
--max-ranks, for more memory (mem=, GB) than this machine has, are xfail
(without --xfail) or are disabled by MPICH's configure (@...@ lines);
programs that do not build are listed as "not built".
EOF
}

root=$(cd "$(dirname "$0")/.." && pwd)
build=${MPIACC_BUILD_DIR:-$root/build}
mpi_home=${MPI_HOME:-$root/.venv}
run=
work=/tmp/mpiacc-mpich-tests
dirs="pt2pt comm datatype coll"
max_ranks=4
only=
exclude='^$'
first=0
xfail=0
cap=
jobs=1
max_time=
src=

while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --mpi-home | --mpi) mpi_home=$2; shift 2 ;;
    --mpiacc-run) run=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --dirs) dirs=$2; shift 2 ;;
    --max-ranks | --max-np) max_ranks=$2; shift 2 ;;
    --only | --filter) only=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    --first) first=1; shift ;;
    --xfail) xfail=1; shift ;;
    --timeout) cap=$2; shift 2 ;;
    --jobs | -j) jobs=$2; shift 2 ;;
    --max-time) max_time=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "mpich-tests: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) src=$1; shift ;;
    esac
done
if [ -z "$src" ]; then
    src=$(bash "$root/scripts/mpich-source.sh") || exit 77
fi
t=$src/test/mpi
[ -f "$t/util/mtest.c" ] || { echo "mpich-tests: no test/mpi/util/mtest.c under $src" >&2; exit 2; }
t=$(cd "$t" && pwd)
[ -n "$run" ] || run=$build/tools/mpiacc-run
[ -x "$run" ] || { echo "mpich-tests: no mpiacc-run at $run (build mpiacc first, or --mpiacc-run)" >&2; exit 2; }
run=$(cd "$(dirname "$run")" && pwd)/$(basename "$run") # (the programs run in their own directories)
[ -d "$mpi_home" ] || { echo "mpich-tests: no MPI at $mpi_home (--mpi-home, MPI_HOME)" >&2; exit 2; }
mpi_home=$(cd "$mpi_home" && pwd)
mpicc=$mpi_home/bin/mpicc
mpiexec=$mpi_home/bin/mpiexec
[ -x "$mpicc" ] && [ -x "$mpiexec" ] || { echo "mpich-tests: no bin/mpicc and bin/mpiexec in $mpi_home" >&2; exit 2; }
mkdir -p "$work/include" "$work/dtp/include" "$work/obj" "$work/bin" "$work/log" || exit 2
work=$(cd "$work" && pwd)
mem_gb=$(awk '/^MemTotal:/ {printf "%d", $2 / 1048576}' /proc/meminfo 2>/dev/null || echo 0)

# ---- MPICH's test library, as its configure and makefiles would build it -------------
# (the few settings mtest.c and the programs look at, Linux with GCC)
conf=$work/include/mpitestconf.h
cat >"$conf.new" <<'EOF'
/* written by mpiacc's scripts/mpich-tests.sh in place of MPICH's configure */
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_USLEEP 1
#define HAVE_STRDUP 1
#define HAVE_PTHREAD_H 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define HAVE__BOOL 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_IO 1
#define HAVE_MPI_SPAWN 1
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_SHORT 2
#define SIZEOF_VOID_P 8
#define POINTERINT_t long
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
# (configure's check: the optional Fortran type MPI_INTEGER16 compiles)
printf '#include <mpi.h>\nMPI_Datatype t_ = MPI_INTEGER16;\n' >"$work/obj/int16.c"
"$mpicc" -c "$work/obj/int16.c" -o "$work/obj/int16.o" >/dev/null 2>&1 && echo '#define HAVE_MPI_INTEGER16 1' >>"$conf.new"
if cmp -s "$conf.new" "$conf"; then rm -f "$conf.new"; else mv -f "$conf.new" "$conf" && rm -f "$work"/libmtest.a "$work"/bin/*; fi
[ -f "$t/include/mtest_mpix.h" ] || : >"$work/include/mtest_mpix.h" # generated by MPICH's autogen
# dtpools (some programs draw their datatypes from it): its headers beside a
# configuration header of ours, where dtpools_internal.h looks for it
if [ -d "$t/dtpools/include" ]; then
    cp "$t"/dtpools/include/*.h "$work/dtp/include/"
    printf '#define HAVE_%s 1\n' STDLIB_H STRING_H STDINT_H INTTYPES_H LIMITS_H MEMSET STRDUP >"$work/dtp/dtpoolsconf.h"
fi
cflags="-O0 -w -I$work/include -I$t/include -I$work/dtp/include"
lib=$work/libmtest.a
if [ ! -f "$lib" ] || [ "$t/util/mtest.c" -nt "$lib" ]; then
    objs=()
    for f in "$t"/util/{mtest,mtest_common,mtest_single,dtypes}.c "$t"/dtpools/src/*.c "$t"/util/run_mpitests.c; do
        [ -f "$f" ] || continue
        o=$work/obj/$(basename "$f" .c).o
        "$mpicc" $cflags -c "$f" -o "$o" || { echo "mpich-tests: $f does not build" >&2; exit 2; }
        [ "$(basename "$f")" = run_mpitests.c ] || objs+=("$o")
    done
    rm -f "$lib"
    ar rcs "$lib" "${objs[@]}" || exit 2
fi

# ---- the entries ----------------------------------------------------------------------
# one per line, |-separated: dir|prog|np|timelimit|xfail|args(;)|envs(;)|mpiexec args(;)|why left out
entries() {
    local d list line prog np w tl xf args envs mx why
    for d in $dirs; do
        list=$t/$d/testlist.in
        [ -f "$list" ] || list=$t/$d/testlist
        [ -f "$list" ] || continue
        while read -r line; do
            case "$line" in '' | '#'* | '@'*) continue ;; esac # @...@: disabled by configure
            read -r prog np rest <<<"$line"
            case "$np" in '' | *=*) rest="$np $rest" np=2 ;; esac
            tl=${cap:-180} xf='' args='' envs='' mx='' why=
            for w in $rest; do
                case "$w" in
                arg=*) args="$args${args:+;}${w#arg=}" ;;
                env=*) envs="$envs${envs:+;}${w#env=}" ;;
                mpiexecarg=*) mx="$mx${mx:+;}${w#mpiexecarg=}" ;;
                xfail=*) xf="$xf${xf:+ }${w#xfail=}" ;;
                timeLimit=*) tl=${w#timeLimit=}; [ -n "$cap" ] && [ "$tl" -gt "$cap" ] && tl=$cap ;;
                mem=*) awk -v m="${w#mem=}" -v t="$mem_gb" 'BEGIN {exit !(m > t)}' && why="needs ${w#mem=} GB" ;;
                resultTest=*) why="${w} (not MPICH's default check)" ;;
                esac
            done
            [ -n "$xf" ] && [ $xfail = 0 ] && why="xfail $xf (MPICH's known failure; --xfail runs it)"
            [ "$np" -gt "$max_ranks" ] && why="$np processes"
            printf '%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$d" "$prog" "$np" "$tl" "$xf" "$args" "$envs" "$mx" "$why"
        done <"$list"
    done
}

# ---- one run, read as runtests reads it ------------------------------------------------
# verdict LOG RC -> PASS | TIMEOUT | FAIL (why)
verdict() {
    local log=$1 rc=$2 ne un
    # (mpiexec's own limit, MPIEXEC_TIMEOUT, exits 0 after its message)
    if [ "$rc" = 124 ] || [ "$rc" = 137 ] || grep -q 'APPLICATION TIMED OUT' "$log"; then echo TIMEOUT; return; fi
    # "No Errors" once (a second one is unexpected output, as there), "Test
    # Passed" and checkpoint lines allowed, FORTRAN STOP ignored
    read -r ne un < <(awk '/FORTRAN STOP/ {next}
        /^[ \t]*No [Ee]rrors[ \t]*$/ && !ne {ne = 1; next}
        /^[ \t]*Test Passed[ \t]*$/ || /requesting checkpoint[ \t]*$/ || /checkpoint completed[ \t]*$/ {next}
        {un++} END {print ne + 0, un + 0}' "$log")
    if [ "$ne" = 0 ]; then echo "FAIL (no \"No Errors\"; exit $rc)"
    elif [ "$un" != 0 ]; then echo "FAIL ($un unexpected line$([ "$un" = 1 ] || echo s); exit $rc)"
    elif [ "$rc" != 0 ]; then echo "FAIL (exit $rc)"
    else echo PASS; fi
}

# What DIR/Makefile.am says about PROG: its source (PROG_SOURCES, else PROG.c)
# and preprocessor flags (PROG_CPPFLAGS, without the make variables), as
# automake builds irecv_any from recv_any.c with -DTEST_NB.
prog_src() {
    local v
    v=$(awk -v k="$2_SOURCES" '$1 == k && $2 == "=" {for (i = 3; i <= NF; i++) if ($i ~ /\.c$/) {print $i; exit}}' \
        "$t/$1/Makefile.am" 2>/dev/null)
    echo "$t/$1/${v:-$2.c}"
}
prog_cppflags() {
    awk -v k="$2_CPPFLAGS" '$1 == k && $2 == "=" {for (i = 3; i <= NF; i++) if ($i !~ /^\$/) printf "%s ", $i; exit}' \
        "$t/$1/Makefile.am" 2>/dev/null
}

# run_entry N ENTRY: builds the program if needed, runs it both ways, prints its line
run_entry() {
    local n=$1 d prog np tl xf args envs mx why exe r0 r1 v c0 c1 s0=$SECONDS
    IFS='|' read -r d prog np tl xf args envs mx why <<<"$2"
    local -a a=() e=() m=()
    [ -n "$args" ] && IFS=';' read -r -a a <<<"$args"
    [ -n "$envs" ] && IFS=';' read -r -a e <<<"$envs"
    [ -n "$mx" ] && IFS=';' read -r -a m <<<"$mx"
    local label="$prog${args:+ ${args//;/ }}${envs:+ [${envs//;/ }]}"
    if [ -n "$why" ]; then
        printf '%-8s %-44s %3s  %-12s %-12s %s\n' "$d" "$label" "$np" - - "left out: $why"
        return
    fi
    exe=$work/bin/$d-$prog
    local c
    c=$(prog_src "$d" "$prog")
    if [ ! -x "$exe" ] || [ "$c" -nt "$exe" ]; then
        local drv=
        [ -f "$work/obj/run_mpitests.o" ] && ! grep -qE '^(int )?main *\(' "$c" && drv=$work/obj/run_mpitests.o
        # shellcheck disable=SC2086,SC2046
        if ! "$mpicc" $cflags $(prog_cppflags "$d" "$prog") "$c" $drv "$lib" -lm -lpthread -o "$exe.tmp.$n" \
            >"$work/log/$d-$prog.build" 2>&1 ||
            ! mv -f "$exe.tmp.$n" "$exe"; then
            rm -f "$exe.tmp.$n"
            printf '%-8s %-44s %3s  %-12s %-12s %s\n' "$d" "$label" "$np" - - "not built (log/$d-$prog.build)"
            return
        fi
    fi
    # the program's directory as its working directory, as runtests
    (cd "$t/$d" && env -u LD_PRELOAD -u MPIR_CVAR_CH4_NETMOD -u MPIR_CVAR_NOLOCAL "${e[@]}" MPIEXEC_TIMEOUT="$tl" \
        timeout -k 10 $((tl + 10)) "$mpiexec" -n "$np" "${m[@]}" "$exe" "${a[@]}" </dev/null) >"$work/log/$n.plain" 2>&1
    r0=$(verdict "$work/log/$n.plain" $?)
    (cd "$t/$d" && env -u LD_PRELOAD "${e[@]}" MPIEXEC_TIMEOUT="$tl" \
        timeout -k 10 $((tl + 10)) "$run" -n "$np" "${m[@]}" "$exe" "${a[@]}" </dev/null) >"$work/log/$n.mpiacc" 2>&1
    r1=$(verdict "$work/log/$n.mpiacc" $?)
    c0=${r0%% *} c1=${r1%% *}
    if [ -n "$xf" ]; then v="xfail ($xf)"
    elif [ "$c0" = "$c1" ]; then v=same
    elif [ "$c1" = PASS ]; then v=better
    else v=DIFFERENT; fi
    printf '%-8s %-44s %3s  %-12s %-12s %s  [log/%s.*, %d s]\n' "$d" "$label" "$np" "$c0" "$c1" "$v" "$n" $((SECONDS - s0))
    [ "$r0" = "$c0" ] || echo "           plain: $r0"
    [ "$r1" = "$c1" ] || echo "           mpiacc-run: $r1"
}

declare -A seen
out=$work/results.txt
: >"$out"
echo "mpich-tests: $t ($dirs; at most $max_ranks processes), plain: $mpiexec, under: $run" | tee -a "$out"
printf '%-8s %-44s %3s  %-12s %-12s %s\n' dir "program [args] [env]" np plain mpiacc-run verdict | tee -a "$out"
n=0
t0=$(date +%s)
while IFS= read -r entry; do
    IFS='|' read -r d prog _ _ _ args envs _ <<<"$entry"
    match="$d/$prog ${args//;/ } ${envs//;/ }"
    grep -qE "${only:-.}" <<<"$match" || continue
    grep -qE "$exclude" <<<"$match" && continue
    if [ $first = 1 ]; then [ -n "${seen[$d/$prog]:-}" ] && continue; seen[$d/$prog]=1; fi
    n=$((n + 1))
    if [ -n "$max_time" ] && [ $(($(date +%s) - t0)) -ge "$max_time" ]; then
        printf '%-8s %-44s %3s  %-12s %-12s %s\n' "$d" "$prog" - - - "NOT RUN (--max-time $max_time s reached)" | tee -a "$out"
        continue
    fi
    if [ "$jobs" -le 1 ]; then
        run_entry "$n" "$entry" | tee -a "$out"
    else
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        run_entry "$n" "$entry" >"$work/log/$n.line" && cat "$work/log/$n.line" | tee -a "$out" &
    fi
done < <(entries)
wait
count() { grep -cE "$1" "$out" || true; }
same=$(count ' same  \[') differ=$(count 'DIFFERENT  \[') better=$(count ' better  \[')
xfailed=$(count ' xfail \(.*\[log') unrun=$(count 'NOT RUN \(--max-time')
passed=$(count ' PASS +PASS +same') notbuilt=$(count 'not built') left=$(count 'left out: ')
echo "summary: $((same + better + differ + xfailed)) entries run both ways in $(($(date +%s) - t0)) s: $same same" \
    "($passed passed both ways), $better better under mpiacc-run, $differ DIFFERENT, $xfailed xfail (MPICH's known" \
    "failures); $notbuilt not built, $left left out$([ "$unrun" = 0 ] || echo ", $unrun NOT RUN (--max-time)");" \
    "lines in $out, logs in $work/log" | tee -a "$out"
# for scripts/test.sh: run, same or better, different or not run, xfail, not built, left out
echo "$((same + better + differ + xfailed + unrun)) $((same + better)) $((differ + unrun)) $xfailed $notbuilt $left" \
    >"$work/counts"
[ "$differ" = 0 ] && [ "$unrun" = 0 ]
