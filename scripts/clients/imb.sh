#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/clients/imb.sh: Intel MPI Benchmarks for GPU buffers (IMB-MPI1-GPU,
# from the PyPI wheel impi-rt) run unmodified on MPICH through mpiacc.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WHEEL_SPEC=impi-rt==2021.19.0
usage() {
  cat <<USAGE
usage: scripts/clients/imb.sh [options]

Runs IMB-MPI1-GPU (Intel MPI Benchmarks, GPU build; it uses only MPICH-ABI
calls) on MPICH's libmpi.so.12 through the mpiacc-run of the library (a
build tree's tools/, an install's bin/; none: an error), which preloads
mpiacc into the 2 ranks and gives them its transport (named in the output):
PingPong, Allreduce, Alltoall, Bcast with -mem_alloc_type cpu, and on a
machine with a CUDA GPU with -mem_alloc_type device and MPIACC_UVA=1
(pointer-query mode).  IMB-MPI1-GPU dlopens the unversioned libcudart.so:
the CUDA toolkit's lib64 is put on LD_LIBRARY_PATH for the device runs.

Where the binary comes from (first found):
  --imb FILE        the IMB-MPI1-GPU binary (or \$IMB_MPI1_GPU)
  --wheel FILE      an impi-rt wheel: bin/IMB-MPI1-GPU is extracted into the cache
  the cache         \${XDG_CACHE_HOME:-~/.cache}/mpiacc-clients/IMB-MPI1-GPU
  download          pip download $WHEEL_SPEC (129 MB) into the cache,
                    unless --no-download (then: SKIPPED)

options:
  --lib FILE        libmpiacc.so of a build tree or an install (default: the repository's build tree)
  --mpiexec FILE    MPICH's mpiexec (default: the repository's .venv, else PATH)
  --cuda DIR        CUDA toolkit (default: the one of nvcc in PATH, or /usr/local/cuda)
  --host-only       no device runs
  --msglog A:B      message sizes 2^A..2^B (default 0:22)
  --iter N          repetitions per size (default 200)
  --no-download     never download the wheel (CI)
  -h, --help        this text
USAGE
}

IMB=${IMB_MPI1_GPU:-}; WHEEL=; CUDA_DIR=; HOST_ONLY=0; MSGLOG=0:22; ITER=200; DOWNLOAD=1
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mpiacc-clients
while [ $# -gt 0 ]; do
  case $1 in
    --imb) IMB=$2; shift ;;
    --wheel) WHEEL=$2; shift ;;
    --msglog) MSGLOG=$2; shift ;;
    --iter) ITER=$2; shift ;;
    --no-download) DOWNLOAD=0 ;;
    *) common_option "$@" && shift ;;
  esac
  shift
done

extract() { # wheel -> $CACHE/IMB-MPI1-GPU
  mkdir -p "$CACHE" || die "cannot create $CACHE"
  python3 - "$1" "$CACHE/IMB-MPI1-GPU" <<'PY' || die "no bin/IMB-MPI1-GPU in $1"
import sys, zipfile, os, shutil
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith("/bin/IMB-MPI1-GPU") or n == "bin/IMB-MPI1-GPU"]
    if not names:
        sys.exit(1)
    with z.open(names[0]) as src, open(out + ".tmp", "wb") as dst:
        shutil.copyfileobj(src, dst)
os.chmod(out + ".tmp", 0o755)
os.replace(out + ".tmp", out)
PY
}

if [ -z "$IMB" ]; then
  if [ -n "$WHEEL" ]; then extract "$WHEEL"
  elif [ ! -x "$CACHE/IMB-MPI1-GPU" ]; then
    [ "$DOWNLOAD" = 1 ] || skip "IMB-MPI1-GPU not found (give --imb, --wheel, or run without --no-download to fetch $WHEEL_SPEC)"
    command -v pip >/dev/null || command -v pip3 >/dev/null || skip "no pip to download $WHEEL_SPEC"
    mkdir -p "$CACHE/wheels" && echo "== downloading $WHEEL_SPEC into $CACHE/wheels"
    $(command -v pip || command -v pip3) download --no-deps -d "$CACHE/wheels" "$WHEEL_SPEC" >/dev/null ||
      skip "pip download $WHEEL_SPEC failed (offline?)"
    extract "$(ls "$CACHE"/wheels/impi_rt-*.whl | head -1)"
  fi
  IMB=$CACHE/IMB-MPI1-GPU
fi
[ -x "$IMB" ] || skip "IMB-MPI1-GPU not found at $IMB"
find_mpiexec
find_lib
MPI_LIB=$(cd "$MPI_BIN/../lib" && pwd)
[ -e "$MPI_LIB/libmpi.so.12" ] || skip "no libmpi.so.12 next to $MPIEXEC"

GPU=0
if [ "$HOST_ONLY" = 0 ] && have_gpu; then
  find_cuda
  [ -e "$CUDA_DIR/lib64/libcudart.so" ] && GPU=1 || echo "note: no $CUDA_DIR/lib64/libcudart.so (IMB dlopens it): host buffers only"
fi

fails=0; runs=0
# one LABEL ENV... -- ARGS: IMB through mpiacc; each benchmark must print its table.
one() {
  local label=$1; shift
  local out rc; runs=$((runs + 1))
  local ldp=$MPI_LIB; [ "$GPU" = 1 ] && ldp=$ldp:$CUDA_DIR/lib64
  out=$(run_ranks 2 LD_LIBRARY_PATH="$ldp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@" 2>&1); rc=$?
  local n; n=$(grep -c '^# Benchmarking' <<<"$out")
  if [ $rc -eq 0 ] && [ "$n" -eq 4 ] && grep -q 'All processes entering MPI_Finalize' <<<"$out"; then
    echo "$label: PASS (4 benchmarks)"
    # 1 KiB and 1 MiB rows: PingPong t[usec] Mbytes/sec; collectives t_min t_max t_avg
    awk '/^# Benchmarking/ {b=$3} /^ +[0-9]+ +[0-9]+ / && ($1 == 1024 || $1 == 1048576) {printf "    %-10s", b; for (i = 1; i <= NF; i++) printf " %10s", $i; print ""}' <<<"$out"
  else
    echo "$label: FAIL (rc $rc, $n of 4 benchmarks)"; sed 's/^/    /' <<<"$out" | tail -15
    fails=$((fails + 1))
  fi
}
BENCH=(PingPong Allreduce Alltoall Bcast -npmin 2 -msglog "$MSGLOG" -iter "$ITER" -time 10)
echo "== IMB-MPI1-GPU ($IMB) on $MPI_LIB/libmpi.so.12, mpiacc preloaded ($LIBMPIACC)"
echo "#  $(ranks_transport LD_LIBRARY_PATH="$MPI_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")"
one "host buffers (-mem_alloc_type cpu)" -- "$IMB" "${BENCH[@]}" -mem_alloc_type cpu
one "host buffers, MPIACC_UVA=1" MPIACC_UVA=1 -- "$IMB" "${BENCH[@]}" -mem_alloc_type cpu
if [ "$GPU" = 1 ]; then
  one "device buffers (-mem_alloc_type device), MPIACC_UVA=1" MPIACC_UVA=1 -- "$IMB" "${BENCH[@]}" -mem_alloc_type device
else
  echo "device buffers: SKIPPED: $([ "$HOST_ONLY" = 1 ] && echo "--host-only" || echo "no CUDA GPU here")"
fi
echo "== IMB: $runs run(s), $fails failed"
[ "$fails" = 0 ]
