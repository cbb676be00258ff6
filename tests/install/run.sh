#!/usr/bin/env bash
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
#  2. the installed RUNPATHs name the prefix ($ORIGIN) and MPI's library
#     directory only as MPIACC_INSTALL_MPI_RPATH resolved, never the build
#     or source tree;
#  3. the installed mpiacc-info runs, --libdir is the installed library
#     directory, MPIACC_DISABLE=1 works; mpiacc-run --help, its exit status
#     without a program, the command line it builds (MPMD);
#  4. mpiacc-run with a missing or a broken libmpiacc.so (and its rank side
#     alone) fails with a message and a non-zero status, and the program
#     never runs.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) work=$3 cmake=$4 srcdir=$(cd "$5" && pwd)
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
pass=0
fail() { echo "FAIL: $*"; exit 1; }
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
if [ "$(sed -n 's/^MPIACC_INSTALL_MPI_RPATH_RESOLVED:INTERNAL=//p' "$build/CMakeCache.txt")" = OFF ]; then
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
mpi_libdir=$(sed -n 's/^mpi_libdir=//p' "$libdir/pkgconfig/mpiacc.pc")
mpi_rpath=$(sed -n 's/^MPIACC_INSTALL_MPI_RPATH_RESOLVED:INTERNAL=//p' "$build/CMakeCache.txt")

# 2. RUNPATH
for f in "$libdir/libmpiacc.so" "$prefix/bin/mpiacc-info"; do
  rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p; s/.*(RPATH).*\[\(.*\)\]/\1/p')
  echo "$(basename "$f"): RUNPATH $rp"
  case "$rp" in *'$ORIGIN'*) ;; *) fail "$f: RUNPATH lacks \$ORIGIN" ;; esac
  # Nothing of the build or source tree, except MPI's own library directory
  # (scripts/setup.sh puts the project's MPICH in the source tree's .venv/).
  IFS=: read -ra parts <<<"$rp"
  for p in "${parts[@]}"; do
    [ "$p" = "$mpi_libdir" ] && continue
    for bad in "$build" "$srcdir"; do
      case "$p" in *"$bad"*) fail "$f: RUNPATH names $bad" ;; esac
    done
  done
  seen_mpi=OFF
  for p in "${parts[@]}"; do
    case "$p" in
      '$ORIGIN'*) ;;
      "$mpi_libdir") seen_mpi=ON ;;
      *) fail "$f: RUNPATH entry $p" ;;
    esac
  done
  [ "$seen_mpi" = "$mpi_rpath" ] || fail "$f: MPI's $mpi_libdir in RUNPATH: $seen_mpi, MPIACC_INSTALL_MPI_RPATH resolved: $mpi_rpath"
done
ok "RUNPATHs: \$ORIGIN, MPI's directory $mpi_rpath"

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
dry=$(cd "$user" && "$prefix/bin/mpiacc-run" --dry-run -genv A 1 -n 1 ./app x : -n 1 ./app y)
case "$dry" in
  *"-genv A 1 -n 1 $prefix/bin/mpiacc-run --rank-exec -- ./app x : -n 1 $prefix/bin/mpiacc-run --rank-exec -- ./app y"*) ;;
  *) fail "mpiacc-run --dry-run (MPMD): $dry" ;;
esac
ok "mpiacc-run --help, no program, MPMD command line"

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
echo "install_consumable: $pass passed, 0 failed"
