#!/usr/bin/env bash
# usage: run.sh BUILD_DIR DOWNSTREAM_SRC WORK_DIR CMAKE SOURCE_DIR
# Environment: MPIEXEC (full path), MPI_C_COMPILER (recorded in the build).
# Installs the build into a scratch prefix, then, with no .venv/bin on PATH:
#  1. the installed RUNPATHs name only the prefix ($ORIGIN), never the build
#     or source tree (nor MPI's directory unless MPIACC_INSTALL_MPI_RPATH=ON);
#  2. a consumer through CMake needs only CMAKE_PREFIX_PATH (MPI comes with
#     mpiacc::mpiacc);
#  3. a consumer through pkg-config builds with the plain C compiler;
#  4. the installed mpiacc-info runs, prints --libdir, works with
#     MPIACC_DISABLE=1;
#  5. LD_PRELOAD=$(mpiacc-info --libdir)/libmpiacc.so interposes a program
#     linked with MPI only.
set -euo pipefail
build=$(cd "$1" && pwd) src=$2 work=$3 cmake=$4 srcdir=$(cd "$5" && pwd)
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
# no .venv/bin (where MPICH's wrappers live in a clone) on PATH
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v '/\.venv/bin$' | paste -sd: -)
export PATH
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/mpiacc.h"
test -x "$prefix/bin/mpiacc-info"
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -1)
libdir=${libdir%/pkgconfig}
mpi_libdir=$(sed -n 's/^mpi_libdir=//p' "$libdir/pkgconfig/mpiacc.pc")
mpi_rpath=$(sed -n 's/^MPIACC_INSTALL_MPI_RPATH:BOOL=//p' "$build/CMakeCache.txt")

# 1. RUNPATH
for f in "$libdir/libmpiacc.so" "$prefix/bin/mpiacc-info"; do
  rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p; s/.*(RPATH).*\[\(.*\)\]/\1/p')
  echo "$(basename "$f"): RUNPATH $rp"
  case "$rp" in *'$ORIGIN'*) ;; *) echo "FAIL: $f: RUNPATH lacks \$ORIGIN"; exit 1 ;; esac
  for bad in "$build" "$srcdir"; do
    case ":$rp:" in *"$bad"*) echo "FAIL: $f: RUNPATH names $bad"; exit 1 ;; esac
  done
  IFS=: read -ra parts <<<"$rp"
  for p in "${parts[@]}"; do
    case "$p" in
      '$ORIGIN'*) ;;
      "$mpi_libdir") [ "$mpi_rpath" = ON ] || { echo "FAIL: $f: RUNPATH names MPI's $p without MPIACC_INSTALL_MPI_RPATH"; exit 1; } ;;
      *) echo "FAIL: $f: RUNPATH entry $p"; exit 1 ;;
    esac
  done
done

# 2. CMake package: only CMAKE_PREFIX_PATH
"$cmake" -S "$src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; exit 1; }
"$cmake" --build "$work/cmake-build" >/dev/null
"$MPIEXEC" -n 2 "$work/cmake-build/consumer"

# 3. pkg-config, plain C compiler
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc "$src/consumer.c" -o "$work/consumer-pc" $(pkg-config --cflags --libs mpiacc) \
    -Wl,-rpath,"$(pkg-config --variable=libdir mpiacc)" -Wl,-rpath,"$(pkg-config --variable=mpi_libdir mpiacc)"
"$MPIEXEC" -n 2 "$work/consumer-pc"

# 4. the installed mpiacc-info (libmpi through LD_LIBRARY_PATH unless the RUNPATH has it)
export LD_LIBRARY_PATH="$mpi_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
got=$("$prefix/bin/mpiacc-info" --libdir)
[ "$got" = "$(cd "$libdir" && pwd -P)" ] || { echo "FAIL: mpiacc-info --libdir: $got, expected $libdir"; exit 1; }
# (into a variable: `| grep -q` may close the pipe early, and pipefail would
# then report the writer's SIGPIPE)
info=$(MPIACC_DISABLE=1 "$prefix/bin/mpiacc-info")
grep -q 'disabled by MPIACC_DISABLE' <<<"$info" ||
  { echo "FAIL: mpiacc-info with MPIACC_DISABLE=1"; exit 1; }

# 5. LD_PRELOAD into a program linked with MPI only
cc "$src/preload.c" -o "$work/preload" $(pkg-config --cflags mpiacc) -L"$mpi_libdir" -lmpi -Wl,-rpath,"$mpi_libdir"
MPIACC_LOG=info LD_PRELOAD="$got/libmpiacc.so" "$MPIEXEC" -n 2 "$work/preload" 2>"$work/preload.err"
grep -q 'initialised' "$work/preload.err" || { cat "$work/preload.err"; echo "FAIL: LD_PRELOAD did not interpose"; exit 1; }
echo "install_consumable: 5 passed, 0 failed"
