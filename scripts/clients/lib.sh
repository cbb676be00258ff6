# SPDX-License-Identifier: BSD-3-Clause
# scripts/clients/lib.sh: shared by the client scripts (sourced, not run).
# Finds the MPI launcher and mpiacc's library, runs ranks with mpiacc
# preloaded (LD_PRELOAD applied to the ranks only, through mpiexec -genv,
# so the launcher itself never loads mpiacc) in the environment mpiacc-run
# gives its ranks (MPICH's UCX netmod on the CUDA-enabled UCX: the
# build's tools/mpiacc-run --print-env, when it is there), and reports
# SKIPPED; the options every client takes and the CUDA toolkit they use.
# Exit status 77 = skipped (CTest's SKIP_RETURN_CODE).

CLIENTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$CLIENTS_DIR/../.." && pwd)

skip() { echo "SKIPPED: $*"; exit 77; }
die() { echo "ERROR: $*" >&2; exit 1; }

# MPIEXEC: --mpiexec, $MPIEXEC, the project's .venv, or PATH.
find_mpiexec() {
  if [ -z "${MPIEXEC:-}" ]; then
    if [ -x "$REPO/.venv/bin/mpiexec" ]; then MPIEXEC=$REPO/.venv/bin/mpiexec
    else MPIEXEC=$(command -v mpiexec || true); fi
  fi
  [ -n "$MPIEXEC" ] && [ -x "$MPIEXEC" ] || skip "no mpiexec (give --mpiexec or put MPICH's bin in PATH)"
  MPI_BIN=$(dirname "$MPIEXEC")
}

# LIBMPIACC: --lib, $LIBMPIACC, or the build tree's libmpiacc.so.
find_lib() {
  if [ -z "${LIBMPIACC:-}" ]; then
    for b in "$REPO/build" "$REPO"/build*; do
      for f in "$b"/libmpiacc.so.0 "$b"/libmpiacc.so; do
        [ -e "$f" ] && { LIBMPIACC=$(readlink -f "$f"); break 2; }
      done
    done
  fi
  [ -n "${LIBMPIACC:-}" ] && [ -e "$LIBMPIACC" ] || skip "no libmpiacc.so (build mpiacc first, or give --lib)"
}

# Whether a CUDA GPU is usable here.
have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

# CUDA_DIR: --cuda, else the toolkit of nvcc in PATH, else /usr/local/cuda.
find_cuda() {
  if [ -z "$CUDA_DIR" ]; then
    if command -v nvcc >/dev/null; then CUDA_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
    else CUDA_DIR=/usr/local/cuda; fi
  fi
}

# common_option "$@": the options every client script takes (--lib, --mpiexec, --cuda, --host-only, --help);
# anything else is an unknown option (exit 2).  Called from the script's option loop, after its own options;
# returns 0 when the option took the next word as its value (the loop shifts it), 1 otherwise.
common_option() {
  case $1 in
    --lib) LIBMPIACC=$2 ;;
    --mpiexec) MPIEXEC=$2 ;;
    --cuda) CUDA_DIR=$2 ;;
    --host-only) HOST_ONLY=1; return 1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
}

# run_ranks N [VAR=VALUE...] -- program args...: N ranks through mpiacc.
run_ranks() {
  local n=$1 runner kv; shift
  local envs=(-genv LD_PRELOAD "$LIBMPIACC")
  runner=$(dirname "$LIBMPIACC")/tools/mpiacc-run
  if [ -x "$runner" ]; then
    while IFS= read -r kv; do [ -n "$kv" ] && envs+=(-genv "${kv%%=*}" "${kv#*=}"); done < <("$runner" --print-env 2>/dev/null)
  fi
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=(-genv "${1%%=*}" "${1#*=}"); shift; done
  shift
  "$MPIEXEC" -n "$n" "${envs[@]}" "$@"
}
