#!/usr/bin/env bash
# usage: run.sh BUILD_DIR DOWNSTREAM_SRC WORK_DIR CMAKE
set -euo pipefail
build=$1 src=$2 work=$3 cmake=$4
rm -rf "$work"
prefix="$work/prefix"
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/mpiacc.h"
test -x "$prefix/bin/mpiacc-info"
# 1. CMake package
"$cmake" -S "$src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$MPI_C_COMPILER" >/dev/null
"$cmake" --build "$work/cmake-build" >/dev/null
"$MPIEXEC" -n 2 "$work/cmake-build/consumer"
# 2. pkg-config
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -1)
export PKG_CONFIG_PATH="$libdir"
"$MPI_C_COMPILER" "$src/consumer.c" -o "$work/consumer-pc" $(pkg-config --cflags --libs mpiacc) \
    -Wl,-rpath,"$(pkg-config --variable=libdir mpiacc)"
"$MPIEXEC" -n 2 "$work/consumer-pc"
echo "install_consumable: 2 passed, 0 failed"
