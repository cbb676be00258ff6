#!/usr/bin/env bash
# Sets up a fresh machine (scripts/setup.sh), builds everything and runs the
# whole test suite.  Environment knobs: MPI_HOME (use that MPICH instead of
# .venv/), MPIACC_BUILD_DIR (default build), MPIACC_CMAKE_ARGS (extra flags).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh
build=${MPIACC_BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)
# shellcheck disable=SC2086
cmake -S . -B "$build" -DMPI_HOME="${MPI_HOME:-$root/.venv}" ${MPIACC_CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600
