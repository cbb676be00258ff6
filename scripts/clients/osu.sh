#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/clients/osu.sh: the OSU micro-benchmarks, unmodified, through mpiacc.
# Run with --help for the options.  OSU's code never enters this repository:
# the user names a source tree (get it from https://mvapich.cse.ohio-state.edu/benchmarks/,
# e.g. osu-micro-benchmarks-7.4.tar.gz); it is built out of tree with MPICH's mpicc.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  cat <<'USAGE'
usage: scripts/clients/osu.sh --src DIR [options]

Builds the OSU micro-benchmarks from the source tree DIR (./configure CC=mpicc,
plus --enable-cuda --with-cuda=CUDA when a GPU and the CUDA toolkit are there)
and runs them unmodified, 2 ranks, through the mpiacc-run of the library
(a build tree's tools/, an install's bin/; none: an error), which preloads
mpiacc into the ranks and gives them its transport (named in the output):

  check pass (OSU's -c validation, every run must say Pass):
    host buffers     osu_latency osu_bw osu_allreduce osu_bcast osu_alltoall
    -d cuda (GPU)    the same with device buffers, MPIACC_UVA=1 (pointer-query
                     mode; not OSU 7.4's -D vect option: it aborts in OSU
                     itself)
  --table: timing pass, one table side by side: osu_latency, osu_bw and
    osu_allreduce with host buffers next to -d cuda D D through mpiacc
    (pointer-query mode)

Without a GPU the device runs are reported SKIPPED; without --src (or
$OSU_SRC) the whole script prints SKIPPED and exits 77.

options:
  --src DIR        OSU source tree (or $OSU_SRC)
  --build DIR      build directory (default: ${TMPDIR:-/tmp}/mpiacc-osu-$USER)
  --cuda DIR       CUDA toolkit for --with-cuda (default: the one of nvcc in PATH, or /usr/local/cuda)
  --host-only      no device runs, build without CUDA
  --lib FILE       libmpiacc.so of a build tree or an install (default: the repository's build tree)
  --mpiexec FILE   MPICH's mpiexec (default: the repository's .venv, else PATH)
  --sizes MIN:MAX  message sizes of the timing pass (default 1:4194304)
  --iters N        timing iterations per size (default 1000; warm-up N/10)
  --table          also run the timing pass and print the side-by-side table
  --quick          check pass only, sizes 1:65536, 20 iterations (CI)
  --no-check       skip the check pass (with --table: the timing pass only)
  -h, --help       this text
USAGE
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${OSU_SRC:-}; BUILD=${TMPDIR:-/tmp}/mpiacc-osu-${USER:-user}; CUDA_DIR=; HOST_ONLY=0
SIZES=1:4194304; ITERS=1000; TABLE=0; QUICK=0; CHECK=1
while [ $# -gt 0 ]; do
  case $1 in
    --src) SRC=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --iters) ITERS=$2; shift ;;
    --table) TABLE=1 ;;
    --quick) QUICK=1 ;;
    --no-check) CHECK=0 ;;
    *) common_option "$@" && shift ;;
  esac
  shift
done

[ -n "$SRC" ] || skip "no OSU source tree given (--src DIR or OSU_SRC; get it from https://mvapich.cse.ohio-state.edu/benchmarks/)"
[ -x "$SRC/configure" ] || skip "$SRC has no configure script: not an OSU micro-benchmarks source tree"
SRC=$(cd "$SRC" && pwd) # the build runs in another directory
find_mpiexec
find_lib

GPU=0
if [ "$HOST_ONLY" = 0 ] && have_gpu; then
  find_cuda
  [ -e "$CUDA_DIR/include/cuda_runtime.h" ] && GPU=1 || echo "note: no CUDA toolkit at $CUDA_DIR: host buffers only"
fi
# OSU dlopens nothing: its CUDA build links libcudart (toolkit's lib64) dynamically.
[ "$GPU" = 1 ] && export LD_LIBRARY_PATH=$CUDA_DIR/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ---- build (out of tree; once per configuration) -------------------------
tag=host; [ "$GPU" = 1 ] && tag=cuda
B=$BUILD/$tag
if [ ! -x "$B/c/mpi/collective/blocking/osu_alltoall" ]; then
  mkdir -p "$B" || die "cannot create $B"
  cfg=(CC="$MPI_BIN/mpicc" CXX="$MPI_BIN/mpicxx")
  [ "$GPU" = 1 ] && cfg+=(--enable-cuda "--with-cuda=$CUDA_DIR")
  # OSU's configure links -lcuda: without an unversioned libcuda.so from the
  # driver, link against the toolkit's stub (the real driver is loaded at run time)
  if [ "$GPU" = 1 ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so '; then
    [ -e "$CUDA_DIR/lib64/stubs/libcuda.so" ] && cfg+=("--with-cuda-libpath=$CUDA_DIR/lib64/stubs")
  fi
  echo "== building OSU in $B (${cfg[*]})"
  ( cd "$B" && "$SRC/configure" "${cfg[@]}" >configure.log 2>&1 ) ||
    { tail -15 "$B/configure.log"; die "OSU configure failed: $B/configure.log"; }
  # OSU 7.4 predates CUDA 13's cudaMemPrefetchAsync: a shim force-included
  # at build time (not into configure's link tests) maps its calls
  # (osu_cuda13.h); OSU's sources are not changed
  mk=()
  if [ "$GPU" = 1 ] && grep -qE 'define CUDART_VERSION +1[3-9][0-9]{3}' "$CUDA_DIR/include/cuda_runtime_api.h"; then
    mk=("CFLAGS=$(sed -n 's/^CFLAGS = //p' "$B/Makefile") -include $HERE/osu_cuda13.h")
  fi
  for d in c/util c/mpi/pt2pt/standard c/mpi/collective/blocking; do
    [ -f "$B/$d/Makefile" ] || continue
    make -C "$B/$d" -j"${OSU_JOBS:-2}" "${mk[@]}" >>"$B/make.log" 2>&1 ||
      { grep -m5 ' error' "$B/make.log"; die "OSU build failed in $d: $B/make.log"; }
  done
fi
P2P=$B/c/mpi/pt2pt/standard; COLL=$B/c/mpi/collective/blocking
for p in "$P2P/osu_latency" "$P2P/osu_bw" "$COLL/osu_allreduce" "$COLL/osu_bcast" "$COLL/osu_alltoall"; do
  [ -x "$p" ] || die "$p was not built (see $B/make.log)"
done

# ---- check pass ------------------------------------------------------------
fails=0; runs=0
# check LABEL ENV... -- PROGRAM ARGS...: one validated run; every data line must say Pass.
check() {
  local label=$1; shift
  local out; runs=$((runs + 1))
  out=$(run_ranks 2 "$@" 2>&1); local rc=$?
  local lines; lines=$(grep -cE '^[0-9]+ ' <<<"$out")
  if [ $rc -eq 0 ] && [ "$lines" -gt 0 ] && ! grep -qiE '^[0-9]+ .*fail' <<<"$out"; then
    printf '%-58s PASS (%d sizes validated)\n' "$label" "$lines"
  else
    printf '%-58s FAIL (rc %d)\n' "$label" "$rc"; sed 's/^/    /' <<<"$out" | tail -15
    fails=$((fails + 1))
  fi
}
CK_SIZES=1:1048576; CK_IT=(-i 50 -x 5); [ "$QUICK" = 1 ] && { CK_SIZES=1:65536; CK_IT=(-i 20 -x 2); }
check_pass() {
echo "== check pass: 2 ranks, mpiacc preloaded ($LIBMPIACC), OSU -c validation, sizes $CK_SIZES"
echo "#  $(ranks_transport)"
check "osu_latency   host" -- "$P2P/osu_latency" -c -m "$CK_SIZES" "${CK_IT[@]}"
check "osu_bw        host" -- "$P2P/osu_bw" -c -m "$CK_SIZES" "${CK_IT[@]}" -W 8
check "osu_allreduce host" -- "$COLL/osu_allreduce" -c -m "4:${CK_SIZES#*:}" "${CK_IT[@]}"
check "osu_bcast     host" -- "$COLL/osu_bcast" -c -m "$CK_SIZES" "${CK_IT[@]}"
check "osu_alltoall  host" -- "$COLL/osu_alltoall" -c -m "1:65536" "${CK_IT[@]}"
check "osu_latency   host, MPIACC_UVA=1" MPIACC_UVA=1 -- "$P2P/osu_latency" -c -m "$CK_SIZES" "${CK_IT[@]}"
if [ "$GPU" = 1 ]; then
  U=(MPIACC_UVA=1)
  check "osu_latency   -d cuda D D, UVA" "${U[@]}" -- "$P2P/osu_latency" -c -m "$CK_SIZES" "${CK_IT[@]}" -d cuda D D
  check "osu_latency   -d cuda D H, UVA" "${U[@]}" -- "$P2P/osu_latency" -c -m "$CK_SIZES" "${CK_IT[@]}" -d cuda D H
  # (OSU 7.4's -D vect:N:M option aborts in its own option parsing: "*** buffer overflow
  # detected ***", on the H200 machine; mpiacc's own tests cover derived datatypes)
  check "osu_bw        -d cuda D D, UVA" "${U[@]}" -- "$P2P/osu_bw" -c -m "$CK_SIZES" "${CK_IT[@]}" -W 8 -d cuda D D
  check "osu_allreduce -d cuda, UVA" "${U[@]}" -- "$COLL/osu_allreduce" -c -m "4:${CK_SIZES#*:}" "${CK_IT[@]}" -d cuda
  check "osu_bcast     -d cuda, UVA" "${U[@]}" -- "$COLL/osu_bcast" -c -m "$CK_SIZES" "${CK_IT[@]}" -d cuda
  check "osu_alltoall  -d cuda, UVA" "${U[@]}" -- "$COLL/osu_alltoall" -c -m "1:65536" "${CK_IT[@]}" -d cuda
else
  echo "-d cuda runs: SKIPPED: $([ "$HOST_ONLY" = 1 ] && echo "--host-only" || echo "no CUDA GPU here (nvidia-smi lists none)")"
fi
}
[ "$CHECK" = 1 ] && check_pass

# ---- timing pass: one table --------------------------------------------------
# series NAME ENV... -- PROGRAM ARGS...: collects "size value" into $TMPT/NAME.
table() {
  local TMPT; TMPT=$(mktemp -d)
  local W=$((ITERS / 10)); [ "$W" -lt 1 ] && W=1
  series() {
    local name=$1; shift
    run_ranks 2 "$@" 2>&1 | awk '/^[0-9]+ / {print $1, $2}' >"$TMPT/$name"
    [ -s "$TMPT/$name" ] || echo "note: $name produced no data" >&2
  }
  local cols=(lat_host bw_host ar_host) labels=("lat host" "bw host" "allred host")
  series lat_host -- "$P2P/osu_latency" -m "$SIZES" -i "$ITERS" -x "$W"
  series bw_host -- "$P2P/osu_bw" -m "$SIZES" -i "$ITERS" -x "$W"
  series ar_host -- "$COLL/osu_allreduce" -m "4:${SIZES#*:}" -i "$ITERS" -x "$W"
  if [ "$GPU" = 1 ]; then
    series lat_dd MPIACC_UVA=1 -- "$P2P/osu_latency" -m "$SIZES" -i "$ITERS" -x "$W" -d cuda D D
    series bw_dd MPIACC_UVA=1 -- "$P2P/osu_bw" -m "$SIZES" -i "$ITERS" -x "$W" -d cuda D D
    series ar_dd MPIACC_UVA=1 -- "$COLL/osu_allreduce" -m "4:${SIZES#*:}" -i "$ITERS" -x "$W" -d cuda
    cols=(lat_host lat_dd bw_host bw_dd ar_host ar_dd)
    labels=("lat host" "lat D-D" "bw host" "bw D-D" "allred host" "allred D")
  fi
  echo
  echo "== OSU side by side: $(date -u +%Y-%m-%dT%H:%MZ), $(hostname), 2 ranks, mpiacc preloaded, $ITERS iterations"
  echo "#  lat: osu_latency one-way us; bw: osu_bw MB/s; allred: osu_allreduce avg us"
  echo "#  host: host buffers; D-D: -d cuda D D with MPIACC_UVA=1"
  echo "#  $(ranks_transport MPIACC_UVA=1)"
  [ "$GPU" = 1 ] && echo "#  GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  printf '%10s' "size(B)"; for l in "${labels[@]}"; do printf ' %12s' "$l"; done; echo
  local sizes; sizes=$(cat "$TMPT"/* | awk '{print $1}' | sort -n -u)
  for s in $sizes; do
    printf '%10s' "$s"
    for c in "${cols[@]}"; do
      v=$(awk -v s="$s" '$1 == s {print $2}' "$TMPT/$c" 2>/dev/null)
      printf ' %12s' "${v:--}"
    done
    echo
  done
  rm -rf "$TMPT"
}
[ "$TABLE" = 1 ] && [ "$QUICK" = 0 ] && table

echo "== OSU: $runs check run(s), $fails failed"
[ "$fails" = 0 ]
