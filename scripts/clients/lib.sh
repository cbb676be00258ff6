# SPDX-License-Identifier: BSD-3-Clause
# scripts/clients/lib.sh: shared by the client scripts (sourced, not run).
# Finds the MPI launcher, mpiacc's library and the mpiacc-run that goes
# with it (a build tree's tools/mpiacc-run, an install's bin/mpiacc-run;
# none: an error, never a run on MPICH's defaults), runs ranks through that
# mpiacc-run (mpiacc preloaded into the ranks only, on the transport it
# gives them: MPICH's UCX netmod on the CUDA-enabled UCX), says which
# transport the ranks use (ranks_transport: the words of mpiacc-info run
# the same way), and reports SKIPPED; the options every client takes and
# the CUDA toolkit they use.  Exit status 77 = skipped (CTest's
# SKIP_RETURN_CODE).

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

# LIBMPIACC: --lib, $LIBMPIACC, or the build tree's libmpiacc.so; RUNNER:
# the mpiacc-run beside it (find_runner).
find_lib() {
  if [ -z "${LIBMPIACC:-}" ]; then
    for b in "$REPO/build" "$REPO"/build*; do
      for f in "$b"/libmpiacc.so.0 "$b"/libmpiacc.so; do
        [ -e "$f" ] && { LIBMPIACC=$(readlink -f "$f"); break 2; }
      done
    done
  fi
  [ -n "${LIBMPIACC:-}" ] && [ -e "$LIBMPIACC" ] || skip "no libmpiacc.so (build mpiacc first, or give --lib)"
  find_runner
}

# RUNNER: the mpiacc-run of LIBMPIACC's build tree (<build>/tools/) or
# install (<prefix>/bin/, the library in <prefix>/lib or lib64 or
# lib/<triplet>), and INFO, the mpiacc-info beside it.  Stops with an error
# when there is none, or when it preloads another library.
find_runner() {
  local d c want got
  d=$(cd "$(dirname "$LIBMPIACC")" && pwd) # as given (a link into a build tree: see below)
  RUNNER=""
  for c in "$d/tools/mpiacc-run" "$d/../bin/mpiacc-run" "$d/../../bin/mpiacc-run" \
    "$(dirname "$(readlink -f "$LIBMPIACC")")/tools/mpiacc-run"; do
    [ -x "$c" ] && { RUNNER=$(cd "$(dirname "$c")" && pwd)/mpiacc-run; break; }
  done
  [ -n "$RUNNER" ] || die "no mpiacc-run beside $LIBMPIACC (looked in $d/tools and $d/../bin): give the libmpiacc.so of a build tree or of an install (--lib)"
  INFO=$(dirname "$RUNNER")/mpiacc-info
  want=$(readlink -f "$LIBMPIACC")
  got=$("$RUNNER" --help 2>/dev/null | sed -n 's/^library: //p')
  [ -n "$got" ] && [ "$(readlink -f "$got")" = "$want" ] ||
    die "$RUNNER preloads ${got:-an unknown library}, not $LIBMPIACC"
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

# run_ranks N [VAR=VALUE...] -- program args...: N ranks through mpiacc-run,
# each VAR=VALUE in its environment, which mpiexec hands to the ranks (not
# -genv: mpiacc-run completes an LD_LIBRARY_PATH given so, e.g. with its UCX
# first, where -genv would replace what it sets).
run_ranks() {
  local n=$1 envs=(); shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$RUNNER" --mpiexec "$MPIEXEC" -n "$n" "$@"
}

# ranks_transport [VAR=VALUE...]: one line naming the transport of 2 ranks
# started as run_ranks starts them (mpiacc-info's "transport" and "UCX
# loaded" lines of rank 0), for the clients' tables.
ranks_transport() {
  local out t u
  out=$(run_ranks 2 "$@" -- "$INFO" 2>/dev/null) || true
  t=$(sed -n 's/^  transport  *//p' <<<"$out" | head -1)
  u=$(sed -n 's/^  UCX loaded  *//p' <<<"$out" | head -1)
  echo "ranks started by $RUNNER: transport: ${t:-unknown (mpiacc-info failed)}; UCX: ${u:-none}"
}