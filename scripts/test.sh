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
# Fuzz smoke run of the datatype engine (libFuzzer needs clang; its build is
# instrumented with ASan/UBSan, so it lives in its own directory).
if command -v clang-14 >/dev/null; then
  # shellcheck disable=SC2086
  CC=clang-14 cmake -S . -B "$build-fuzz" -DMPI_HOME="${MPI_HOME:-$root/.venv}" -DMPIACC_BUILD_FUZZ=ON \
      -DMPIACC_WITH_CUDA=OFF -DMPIACC_WITH_OPENCL=OFF >/dev/null
  cmake --build "$build-fuzz" -j "$jobs" --target fuzz_datatype >/dev/null
  ctest --test-dir "$build-fuzz" -R fuzz_datatype_smoke --output-on-failure
fi
# The whole suite, then every skipped test with its reason (the
# "SKIPPED: <reason>" line it printed; CTest keeps each test's output in
# Testing/Temporary/LastTest.log) and CTest's summary line again.
set +e
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600 | tee "$build/ctest.out"
rc=${PIPESTATUS[0]}
set -e
skipped=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$build/ctest.out")
if [ -n "$skipped" ]; then
  echo
  echo "Skipped tests and why:"
  for t in $skipped; do
    why=$(awk -v t="$t" '$0 ~ "^[0-9]+/[0-9]+ Testing: " {cur = $3}
                         cur == t && /SKIPPED: / {sub(/.*SKIPPED: /, ""); print; exit}' \
          "$build/Testing/Temporary/LastTest.log")
    printf '  %-36s %s\n' "$t" "${why:-(no reason printed)}"
  done
fi
grep -E '^[0-9]+% tests passed' "$build/ctest.out" || true
exit "$rc"
