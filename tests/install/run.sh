#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: run.sh BUILD_DIR DOWNSTREAM_SRC WORK_DIR CMAKE SOURCE_DIR
# Environment: MPI_C_COMPILER (recorded in the build; builds the plain MPI
# program, as a user builds theirs).
# A user's install, as the README says it: with no .venv/bin (where MPICH's
# wrappers live in a clone) on PATH, no LD_LIBRARY_PATH (unless the build
# asked for a relocatable install, MPIACC_INSTALL_MPI_RPATH=OFF), HOME in a
# scratch directory:
#  1. the README's block between <!-- readme-verbatim:begin --> and
#     <!-- readme-verbatim:end -->, run as it stands from a directory holding
#     `build` (this build), `app` (an MPI program that knows nothing of
#     mpiacc) and `myapp/` (a CMake project using mpiacc): installs into
#     $HOME/opt/mpiacc, runs ./app through mpiacc-run (preload), builds and
#     runs myapp through CMake and pkg-config; every rank of every run must
#     report mpiacc initialised (MPIACC_LOG=info), and the programs pass;
#  2. the installed RUNPATHs name the prefix ($ORIGIN, and the install's own
#     copy of MPICH when it carries one, MPIACC_INSTALL_BUNDLE) and an
#     external MPI's library directory only as MPIACC_INSTALL_MPI_RPATH
#     resolved, never the build or source tree; no installed text file
#     (mpiacc-run, the CMake package, pkg-config) names the source tree;
#  3. the installed mpiacc-info runs, --libdir is the installed library
#     directory, it reports where it is installed, the paths of --config lie
#     in the install or are marked "build time", MPIACC_DISABLE=1 works; the
#     client scripts (scripts/clients/lib.sh) find the installed mpiacc-run;
#     mpiacc-run --help, its exit status without a program, the command lines
#     it builds (this node; other nodes: MPMD, one voice), an error printed
#     once, the ranks' environment (UCX netmod, UCX library first, --shm,
#     --ucx none/DIR, the user's own settings kept);
#  4. mpiacc-run with a missing or a broken libmpiacc.so (and its rank side
#     alone) fails with a message and a non-zero status, and the program
#     never runs;
#  5. the install stands alone: when the build's MPI or UCX lies in the
#     source tree's .venv/ (scripts/setup.sh's), .venv/ is moved away (and
#     put back when the test ends, however it ends) and the installed
#     mpiacc-info, mpiacc-run -n 2 ./app (ranks on the install's UCX) and a
#     program built through pkg-config against the install still run.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) work=$3 cmake=$4 srcdir=$(cd "$5" && pwd)
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
pass=0
fail() { echo "FAIL: $*"; exit 1; }
# Section 5 moves the source tree's .venv/ away; put it back if a run of this
# test was killed before it could (CTest runs this test alone: RUN_SERIAL).
restore_venv() {
  if [ -d "$srcdir/.venv.moved-by-install-test" ] && [ ! -e "$srcdir/.venv" ]; then
    mv "$srcdir/.venv.moved-by-install-test" "$srcdir/.venv" && echo "standalone: $srcdir/.venv put back"
  fi
}
restore_venv
ok() { echo "ok: $*"; pass=$((pass + 1)); }

# the user's environment: no directory holding MPI's compiler wrappers or
# mpiexec on PATH (the project's .venv/bin), but the cmake this build used
# (on some machines it lives in a Python virtual environment's bin/ too)
mpi_bindir=$(dirname "$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")")
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v '/\.venv/bin$' | grep -vx "$mpi_bindir" | paste -sd: -)
if ! command -v cmake >/dev/null; then
  cmake_dir=$(mkdir -p "$work/cmake-bin" && cd "$work/cmake-bin" && pwd)
  ln -sf "$cmake" "$cmake_dir/cmake"
  PATH=$cmake_dir:$PATH
fi
export PATH
unset LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_PATH CMAKE_PREFIX_PATH MPIACC_LOG
export HOME="$work/home"
mkdir -p "$HOME"
case ":$PATH:" in *"/.venv/bin:"*) fail "PATH still has .venv/bin" ;; esac

# A relocatable install (MPIACC_INSTALL_MPI_RPATH=OFF, or AUTO with MPI in a
# system directory) finds libmpi the way MPI is normally found: then, and
# only then, LD_LIBRARY_PATH names MPI's directory, as README.md says.
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
bundle_mpi=$(cache MPIACC_BUNDLE_MPI)
bundle_ucx=$(cache MPIACC_BUNDLE_UCX)
echo "the install carries MPICH: ${bundle_mpi:-?}, UCX: ${bundle_ucx:-?} (MPIACC_INSTALL_BUNDLE=$(cache MPIACC_INSTALL_BUNDLE))"
if [ "$bundle_mpi" != ON ] && [ "$(cache MPIACC_INSTALL_MPI_RPATH_RESOLVED)" = OFF ]; then
  export LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$(sed -n 's/^mpi_libdir=//p' "$build/mpiacc.pc")
  echo "MPIACC_INSTALL_MPI_RPATH resolved OFF (relocatable install): LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
fi

# 1. the README's block, verbatim
readme="$srcdir/README.md"
block=$(awk '/<!-- readme-verbatim:end -->/ {on = 0} on && !/^```/ {print} /<!-- readme-verbatim:begin -->/ {on = 1}' "$readme")
[ -n "$block" ] || fail "no readme-verbatim block in $readme"
user="$work/user"
mkdir -p "$user/myapp"
ln -s "$build" "$user/build"
cp "$src/CMakeLists.txt" "$src/app.c" "$user/myapp/"
"$MPI_C_COMPILER" "$src/plain_mpi.c" -o "$user/app"
printf 'set -euo pipefail\n%s\n' "$block" >"$work/readme-block.sh"
echo "running README.md's verbatim block ($(grep -c . <<<"$block") lines) in $user:"
(cd "$user" && bash -x "$work/readme-block.sh") >"$work/readme.out" 2>"$work/readme.err" ||
  { cat "$work/readme.out" "$work/readme.err"; fail "README block failed"; }
cat "$work/readme.out"
runs=$(grep -c 'mpiacc-run -n 2' <<<"$block")
inits=$(grep -c 'mpiacc .* initialised' "$work/readme.err" || true)
# the block sets MPIACC_LOG=info for its first run; the others are checked by
# what they print (app exits 1 unless mpiacc's MPI_Init ran)
[ "$inits" -ge 2 ] || { cat "$work/readme.err"; fail "mpiacc-run ./app: $inits of 2 ranks reported mpiacc initialised"; }
[ "$(grep -c '^plain_mpi: rank [01] ran' "$work/readme.out")" = 2 ] || fail "./app did not run on 2 ranks"
[ "$(grep -c '^app: mpiacc [0-9.]* ok' "$work/readme.out")" = 2 ] ||
  fail "the CMake and pkg-config builds did not both report mpiacc ok"
ok "README block: $runs mpiacc-run launches, mpiacc initialised on every rank of the preloaded one"
# the same block again with MPIACC_LOG=info for every run: each rank of each
# run reports mpiacc (the linked programs are launched by mpiacc-run too)
(cd "$user" && MPIACC_LOG=info bash "$work/readme-block.sh") >/dev/null 2>"$work/readme-info.err" ||
  { cat "$work/readme-info.err"; fail "README block failed with MPIACC_LOG=info"; }
inits=$(grep -c 'mpiacc .* initialised' "$work/readme-info.err" || true)
[ "$inits" = $((2 * runs)) ] || fail "MPIACC_LOG=info: $inits of $((2 * runs)) ranks reported mpiacc initialised"
ok "README block with MPIACC_LOG=info: $inits of $((2 * runs)) ranks ran with mpiacc"

prefix="$HOME/opt/mpiacc"
test -f "$prefix/include/mpiacc.h"
test -x "$prefix/bin/mpiacc-info"
test -x "$prefix/bin/mpiacc-run"
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -1)
libdir=${libdir%/pkgconfig}
mpi_libdir=$(pkg-config --variable=mpi_libdir "$libdir/pkgconfig/mpiacc.pc" 2>/dev/null ||
             sed -n 's/^mpi_libdir=//p' "$libdir/pkgconfig/mpiacc.pc")
mpi_rpath=$(cache MPIACC_INSTALL_MPI_RPATH_RESOLVED)

# 2. RUNPATH
for f in "$libdir/libmpiacc.so" "$prefix/bin/mpiacc-info"; do
  rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p; s/.*(RPATH).*\[\(.*\)\]/\1/p')
  echo "$(basename "$f"): RUNPATH $rp"
  case "$rp" in *'$ORIGIN'*) ;; *) fail "$f: RUNPATH lacks \$ORIGIN" ;; esac
  IFS=: read -ra parts <<<"$rp"
  seen_mpi=OFF seen_copy=OFF
  for p in "${parts[@]}"; do
    case "$p" in
      '$ORIGIN'*/mpiacc/mpich/lib) seen_copy=ON ;;
      '$ORIGIN'*) ;;
      "$mpi_libdir")
        # an external MPI's directory: never the build or source tree, except
        # MPI's own library directory when the install does not carry it
        seen_mpi=ON ;;
      *) fail "$f: RUNPATH entry $p" ;;
    esac
  done
  if [ "$bundle_mpi" = ON ]; then
    [ "$seen_copy" = ON ] && [ "$seen_mpi" = OFF ] || fail "$f: RUNPATH should name the install's MPICH only (\$ORIGIN-relative)"
  else
    [ "$seen_mpi" = "$mpi_rpath" ] || fail "$f: MPI's $mpi_libdir in RUNPATH: $seen_mpi, MPIACC_INSTALL_MPI_RPATH resolved: $mpi_rpath"
  fi
done
ok "RUNPATHs: \$ORIGIN, the install's MPICH $bundle_mpi, an external MPI's directory ${mpi_rpath}"
# the installed scripts and package files: nothing of the build tree, and
# nothing of the source tree except what lies outside the install's copies
# (an external MPI or UCX the build was told to use)
for f in "$prefix/bin/mpiacc-run" "$libdir/pkgconfig/mpiacc.pc" "$libdir"/cmake/mpiacc/*.cmake; do
  grep -qF "$build/" "$f" && fail "$f names the build tree $build"
  if [ "$(cache MPIACC_INSTALL_BUNDLE)" != OFF ] && grep -qF "$srcdir/" "$f"; then
    fail "$f names the source tree $srcdir: $(grep -F "$srcdir/" "$f" | head -2)"
  fi
done
ok "installed scripts and package files name neither the build tree nor the source tree"

# 3. the installed mpiacc-info
got=$("$prefix/bin/mpiacc-info" --libdir)
[ "$got" = "$(cd "$libdir" && pwd -P)" ] || fail "mpiacc-info --libdir: $got, expected $libdir"
# (into a variable: `| grep -q` may close the pipe early, and pipefail would
# then report the writer's SIGPIPE)
info=$(MPIACC_DISABLE=1 "$prefix/bin/mpiacc-info")
grep -q 'disabled by MPIACC_DISABLE' <<<"$info" || fail "mpiacc-info with MPIACC_DISABLE=1"
ok "mpiacc-info --libdir, MPIACC_DISABLE=1"
help=$("$prefix/bin/mpiacc-run" --help)
grep -q '^usage: mpiacc-run' <<<"$help" || fail "mpiacc-run --help printed no usage"
grep -q -- "$(cd "$libdir" && pwd -P)/libmpiacc.so" <<<"$help" || fail "mpiacc-run --help does not name the installed library"
rc=0
"$prefix/bin/mpiacc-run" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "mpiacc-run without a program exited $rc (expected 2)"
# ranks on this node: the programs as they are, the library preloaded by -genv
dry=$(cd "$user" && "$prefix/bin/mpiacc-run" --dry-run -genv A 1 -n 1 ./app x : -n 1 ./app y)
case "$dry" in
  *"-genv LD_PRELOAD $(cd "$libdir" && pwd -P)/libmpiacc.so -genv A 1 -n 1 ./app x : -n 1 ./app y"*) ;;
  *) fail "mpiacc-run --dry-run (MPMD): $dry" ;;
esac
# ranks that may run on other nodes: each behind the rank side, which
# checks there (one voice per node when all run one program)
dry=$(cd "$user" && "$prefix/bin/mpiacc-run" --dry-run -hosts localhost -genv A 1 -n 1 ./app x : -n 1 ./app y)
case "$dry" in
  *"-hosts localhost -genv A 1 -n 1 $prefix/bin/mpiacc-run --rank-exec "*"-- ./app x : -n 1 $prefix/bin/mpiacc-run --rank-exec "*"-- ./app y"*) ;;
  *) fail "mpiacc-run --dry-run -hosts (MPMD): $dry" ;;
esac
dry=$(cd "$user" && "$prefix/bin/mpiacc-run" --dry-run -hosts localhost -n 2 ./app)
case "$dry" in *"--rank-exec --one-voice "*"-- ./app"*) ;; *) fail "mpiacc-run --dry-run -hosts: $dry" ;; esac
# an error is printed once (issue 38), whether the launcher or the ranks find it
for where in "" "-hosts localhost"; do
  rc=0
  # shellcheck disable=SC2086
  (cd "$user" && "$prefix/bin/mpiacc-run" $where -n 2 ./nosuch) >"$work/nosuch.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] || fail "mpiacc-run $where -n 2 ./nosuch succeeded"
  [ "$(grep -c 'mpiacc-run: error: .*nosuch: program not found' "$work/nosuch.out")" = 1 ] ||
    { cat "$work/nosuch.out"; fail "mpiacc-run $where -n 2 ./nosuch: the error not printed exactly once"; }
done
ok "mpiacc-run --help, no program, command lines (this node; other nodes: MPMD, one voice), each error once"
config=$("$prefix/bin/mpiacc-info" --config)
grep -qx "  installed in          $prefix" <<<"$config" || fail "mpiacc-info --config does not say it is installed in $prefix: $config"
# every path it names lies in the install, or is marked as the build's (issue 38)
while IFS= read -r l; do
  for p in $(grep -oE '(^| )/[^ ,:()]+' <<<"$l"); do
    case "$p" in "$prefix" | "$prefix"/* | "$(cd "$prefix" && pwd -P)"/*) continue ;; esac
    grep -q '(build time' <<<"$l" || grep -q '^  MPI library loaded\|^  UCX loaded' <<<"$l" ||
      fail "mpiacc-info --config names $p, outside the install, without marking it build time: $l"
  done
done <<<"$config"
ok "mpiacc-info --config: installed in $prefix; paths outside it marked build time"
# the client scripts find the install's mpiacc-run from its library (issue 38)
got=$(LIBMPIACC=$libdir/libmpiacc.so; . "$srcdir/scripts/clients/lib.sh"; find_runner; echo "$RUNNER") ||
  fail "scripts/clients/lib.sh with the installed library: $got"
[ "$got" = "$(cd "$prefix/bin" && pwd)/mpiacc-run" ] || fail "scripts/clients/lib.sh found '$got', not $prefix/bin/mpiacc-run"
ok "the client scripts run the install's mpiacc-run"

# the ranks' environment (mpiacc-run --print-env: what the rank side sets)
ucx_run=$(sed -n 's/^  UCX for mpiacc-run *\([^ ]*\).*/\1/p' <<<"$config")
netmods=$(sed -n 's/^  MPICH netmods *//p' <<<"$config")
[ "$bundle_ucx" != ON ] || [ "$ucx_run" = "$libdir/mpiacc/ucx/lib" ] ||
  fail "mpiacc-info: UCX for mpiacc-run is $ucx_run, expected the install's copy $libdir/mpiacc/ucx/lib"
penv() { (cd "$user" && env -u MPIR_CVAR_CH4_NETMOD -u MPIR_CVAR_NOLOCAL "$@") | tr '\n' ' '; }
pe=$(penv "$prefix/bin/mpiacc-run" --print-env)
echo "mpiacc-run --print-env: $pe"
case " $netmods " in
  *" ch4:ucx "* | *" ucx "*)
    case "$pe" in *"MPIR_CVAR_CH4_NETMOD=ucx "*"MPIR_CVAR_NOLOCAL=1 "*) ;; *) fail "--print-env: $pe" ;; esac
    pe=$(penv "$prefix/bin/mpiacc-run" --shm --print-env)
    case "$pe" in *NOLOCAL*) fail "--shm --print-env sets NOLOCAL: $pe" ;; *NETMOD=ucx*) ;; *) fail "--shm: $pe" ;; esac
    pe=$(penv MPIR_CVAR_NOLOCAL=0 MPIR_CVAR_CH4_NETMOD=ofi "$prefix/bin/mpiacc-run" --print-env)
    case "$pe" in *MPIR_CVAR*) fail "the user's MPIR_CVAR_* not kept: $pe" ;; esac
    ;;
  *) echo "MPICH netmods '$netmods' lack ucx: no netmod variables expected" ;;
esac
if [ "${ucx_run:0:1}" = / ]; then
  pe=$(penv LD_LIBRARY_PATH= "$prefix/bin/mpiacc-run" --print-env)
  case "$pe" in "LD_LIBRARY_PATH=$ucx_run"[:\ ]*) ;; *) fail "--print-env: LD_LIBRARY_PATH does not start with $ucx_run: $pe" ;; esac
  mkdir -p "$work/fake-ucx/lib"
  : >"$work/fake-ucx/lib/libucp.so.0"
  pe=$(penv LD_LIBRARY_PATH="$work/fake-ucx/lib" "$prefix/bin/mpiacc-run" --print-env)
  case "$pe" in *"$ucx_run"*) fail "a UCX on the user's LD_LIBRARY_PATH not kept: $pe" ;; esac
  pe=$(penv LD_LIBRARY_PATH= "$prefix/bin/mpiacc-run" --ucx none --print-env)
  case "$pe" in *"$ucx_run"*) fail "--ucx none: $pe" ;; esac
  pe=$(penv LD_LIBRARY_PATH= "$prefix/bin/mpiacc-run" --ucx "$work/fake-ucx" --print-env)
  case "$pe" in "LD_LIBRARY_PATH=$work/fake-ucx/lib"[:\ ]*) ;; *) fail "--ucx DIR: $pe" ;; esac
  # the ranks load that UCX (LD_LIBRARY_PATH wins over MPICH's RUNPATH), and
  # UCX_ROOT does not reach them (UCX would warn about it)
  ranks=$(cd "$user" && UCX_ROOT=/nonexistent "$prefix/bin/mpiacc-run" -n 2 "$prefix/bin/mpiacc-info" 2>&1)
  [ "$(grep -c "^  UCX loaded  *$ucx_run/libucp.so.0" <<<"$ranks")" = 2 ] ||
    { echo "$ranks"; fail "mpiacc-run -n 2 mpiacc-info: the ranks did not load $ucx_run/libucp.so.0"; }
  ! grep -q 'UCX  WARN' <<<"$ranks" || { echo "$ranks"; fail "UCX warned in the ranks"; }
  ok "the ranks' environment: UCX $ucx_run first (loaded by both ranks), the user's LD_LIBRARY_PATH UCX, --ucx none|DIR, netmod variables as the user left them"
else
  ok "the ranks' environment: netmod variables (no UCX recorded: LD_LIBRARY_PATH left alone)"
fi

# 4. preloading that cannot work fails loudly
expect_refused() { # what dir args...
  local what=$1 dir=$2 rc=0
  shift 2
  (cd "$user" && MPIACC_LOG=info "$@") >"$work/neg.out" 2>"$work/neg.err" || rc=$?
  [ "$rc" != 0 ] || { cat "$work/neg.out" "$work/neg.err"; fail "$what: exit status 0"; }
  grep -q 'mpiacc-run: error:' "$work/neg.err" || { cat "$work/neg.err"; fail "$what: no error message"; }
  ! grep -q 'plain_mpi: rank' "$work/neg.out" || fail "$what: the program ran"
  echo "$what: exit status $rc, $(grep -m1 'mpiacc-run: error:' "$work/neg.err")"
}
neg="$work/neg-prefix"
cp -a "$prefix" "$neg"
neglib=$(ls -d "$neg"/lib*/libmpiacc.so)
rm -f "$neglib"
expect_refused "missing libmpiacc.so" "$neg" "$neg/bin/mpiacc-run" -n 2 ./app
echo 'not a shared object' >"$neglib"
expect_refused "broken libmpiacc.so" "$neg" "$neg/bin/mpiacc-run" -n 2 ./app
expect_refused "broken libmpiacc.so, rank side" "$neg" "$neg/bin/mpiacc-run" --rank-exec -- ./app
# a library whose own dependency cannot be found (as libmpiacc.so without
# MPI's directory in its RUNPATH on a node without LD_LIBRARY_PATH)
echo 'int neg_dep(void) { return 0; }' >"$work/neg_dep.c"
echo 'int neg_dep(void); int neg_use(void) { return neg_dep(); }' >"$work/neg_lib.c"
cc -shared -fPIC "$work/neg_dep.c" -o "$work/libneg_dep.so"
cc -shared -fPIC "$work/neg_lib.c" -o "$neglib" -L"$work" -lneg_dep
expect_refused "libmpiacc.so whose dependency is missing" "$neg" "$neg/bin/mpiacc-run" -n 2 ./app
expect_refused "libmpiacc.so whose dependency is missing, rank side" "$neg" "$neg/bin/mpiacc-run" --rank-exec -- ./app
ok "mpiacc-run refuses a missing or broken libmpiacc.so, or one whose dependency is missing"

# 5. the install stands alone: the source tree's .venv/ moved away
venv="$srcdir/.venv" moved="$srcdir/.venv.moved-by-install-test"
in_venv=""
for v in MPI_C_COMPILER MPIACC_UCX_LIBRARY_DIR; do
  case "$(cache "$v")" in "$venv"/*) in_venv="$in_venv $v" ;; esac
done
if [ -z "$in_venv" ] || [ ! -d "$venv" ]; then
  echo "standalone: skipped (neither MPI nor UCX of this build lies in $venv: the install references them where they are)"
elif [ "$(cache MPIACC_INSTALL_BUNDLE)" = OFF ]; then
  echo "standalone: skipped (MPIACC_INSTALL_BUNDLE=OFF: the install uses$in_venv in $venv)"
else
  trap restore_venv EXIT INT TERM
  mv "$venv" "$moved"
  echo "standalone: $venv moved to $moved"
  out=$("$prefix/bin/mpiacc-info" 2>&1) || { echo "$out"; fail "mpiacc-info with $venv moved away"; }
  grep -q '^  mpiacc  *active' <<<"$out" || { echo "$out"; fail "mpiacc-info: mpiacc not active"; }
  grep "installed in\|MPI library loaded\|^  mpiexec\|UCX" <<<"$out"
  if [ "$bundle_mpi" = ON ]; then
    grep -q "^  MPI library loaded  *$libdir/mpiacc/mpich/lib/libmpi.so" <<<"$out" ||
      fail "mpiacc-info does not load the install's MPICH"
  fi
  (cd "$user" && MPIACC_LOG=info "$prefix/bin/mpiacc-run" -n 2 ./app) >"$work/alone.out" 2>"$work/alone.err" ||
    { cat "$work/alone.out" "$work/alone.err"; fail "mpiacc-run -n 2 ./app with $venv moved away"; }
  [ "$(grep -c '^plain_mpi: rank [01] ran' "$work/alone.out")" = 2 ] &&
    [ "$(grep -c 'mpiacc .* initialised' "$work/alone.err")" = 2 ] ||
    { cat "$work/alone.out" "$work/alone.err"; fail "mpiacc-run -n 2 ./app: not both ranks ran with mpiacc"; }
  if [ "$bundle_mpi" = ON ]; then
    # a program built now, against the install alone (pkg-config; the
    # install's copy of MPICH's compiler wrapper)
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    # shellcheck disable=SC2046
    cc "$src/app.c" -o "$work/app-alone" $(pkg-config --cflags --libs mpiacc) \
      -Wl,-rpath,"$(pkg-config --variable=libdir mpiacc)" -Wl,-rpath,"$(pkg-config --variable=mpi_libdir mpiacc)"
    "$libdir/mpiacc/mpich/bin/mpicc" "$src/plain_mpi.c" -o "$work/app-mpicc"
    out=$(cd "$user" && "$prefix/bin/mpiacc-run" -n 2 "$work/app-alone" && "$prefix/bin/mpiacc-run" -n 2 "$work/app-mpicc") ||
      { echo "$out"; fail "programs built against the install"; }
    grep -q '^app: mpiacc [0-9.]* ok' <<<"$out" && [ "$(grep -c '^plain_mpi: rank [01] ran' <<<"$out")" = 2 ] ||
      { echo "$out"; fail "programs built against the install did not pass"; }
  fi
  restore_venv
  trap - EXIT INT TERM
  ok "standalone (${in_venv# } in $venv moved away): mpiacc-info, mpiacc-run -n 2 ./app, programs built against the install"
fi
echo "install_consumable: $pass passed, 0 failed"
