#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: sets up a fresh machine, builds (with visible progress),
# shows what mpiacc found, the lines of the Stencil2D port that carry the
# datatype attributes, then runs Stencil2D with manual staging and with
# mpiacc side by side (CUDA when a GPU is present, else OpenCL on PoCL),
# launched by mpiacc-run as a user's program would be (MPICH's UCX netmod on
# the CUDA-enabled UCX), and says what the numbers mean here.  Extra
# arguments go to stencil2d.
# Environment: MPI_HOME (default .venv/), MPIACC_BUILD_DIR (default build),
# MPIACC_CMAKE_ARGS (extra configure flags).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh
build=${MPIACC_BUILD_DIR:-build}
mpi_home=${MPI_HOME:-$root/.venv}
mpiexec="$mpi_home/bin/mpiexec"
run="$build/tools/mpiacc-run" # the build's mpiacc-run: the ranks' transport as for a user's program
jobs=$(nproc 2>/dev/null || echo 2)
section() { printf '\n== %s\n' "$*"; }

section "1/4 Building mpiacc (cmake, $jobs jobs)"
mkdir -p "$build"
# shellcheck disable=SC2086
cmake -S . -B "$build" -DMPI_HOME="$mpi_home" ${MPIACC_CMAKE_ARGS:-} >"$build/demo-configure.log" 2>&1 ||
  { cat "$build/demo-configure.log"; exit 1; }
grep -E '^-- mpiacc:' "$build/demo-configure.log" | sed 's/^-- /   /' || true
start=$SECONDS
# one progress line (percent and the target being built), updated in place
# on a terminal, every 10 % otherwise
set +e
cmake --build "$build" -j "$jobs" 2>&1 | tee "$build/demo-build.log" | awk -v tty="$([ -t 1 ] && echo 1 || echo 0)" '
  match($0, /^\[ *[0-9]+%\]/) {
    pct = substr($0, RSTART + 1, RLENGTH - 3) + 0
    if ($0 ~ /Built target /) { n = split($0, w, " "); last = w[n] }
    if (tty) printf "\r   %3d%%  %-50s", pct, last
    else if (pct >= next_pct) { printf "   %3d%%  %s\n", pct, last; next_pct = pct - pct % 10 + 10 }
  }
  END { if (tty) printf "\r   100%%  %-50s\n", "done" }'
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  grep -E 'error|Error' "$build/demo-build.log" | head -20
  echo "build failed (full log: $build/demo-build.log)"
  exit "$rc"
fi
echo "   built in $((SECONDS - start)) s (log: $build/demo-build.log)"

section "2/4 What mpiacc found on this machine (mpiacc-info, started by mpiacc-run; --help for more)"
"$run" --mpiexec "$mpiexec" -n 1 "$build/tools/mpiacc-info" |
  sed -n '/^  backends compiled in/p; /^run time:/,/^environment/{/^environment/d; p}'
echo "   transport: how CUDA device messages travel. By default they go to MPI as device memory where"
echo "   MPI's transport takes it (MPICH's UCX netmod on a CUDA-enabled UCX, as mpiacc-run starts the"
echo "   ranks; needs a GPU), else they are staged through host memory; OpenCL buffers are always staged."

st=examples/stencil2d
if [ ! -x "$build/$st/stencil2d" ]; then
  echo "stencil2d was not built (neither OpenCL nor CUDA found); see README.md"
  exit 0
fi

if nvidia-smi -L >/dev/null 2>&1; then
  backend=cuda attrs='MPIACC_BUF_CUDA|MPIACC_STREAM'
else
  backend=opencl attrs='MPIACC_BUF_OPENCL|MPIACC_CL_QUEUE'
fi
section "3/4 The Stencil2D port: what the application writes ($st/st_mpiacc.c)"
echo "   The halo datatypes are tagged once with where the data lives and what produces it"
echo "   (the $backend lines; MPIACC_BUF_TYPE says the buffer kind, the second attribute the"
echo "   stream or in-order queue whose work the data depends on):"
grep -n 'MPI_Type_set_attr(t, ' "$st/st_mpiacc.c" | grep -E "$attrs" |
  sed 's/^\([0-9]*\):[[:space:]]*/   \1: /'
if [ "$backend" = opencl ]; then
  echo "   A cl_mem cannot be offset, so each halo's byte offset is in its datatype"
  echo "   (MPI_Type_create_hindexed_block around the row or column type, tagged the same way)."
fi
echo "   and the exchange passes the device buffer to MPI as it is (no copy, no synchronisation):"
grep -n -A1 'MPI_Isend(x->sbuf' "$st/st_mpiacc.c" | sed 's/^\([0-9]*\)[:-][[:space:]]*/   \1: /'
echo "   The manual variant stages every halo through the host with explicit copies and waits"
echo "   ($st/st_mpi.c, stencil_opencl.c and stencil_cuda.cu, between ST-LOC-BEGIN manual and ST-LOC-END)."

cores=$(nproc 2>/dev/null || echo 1)
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0) # before the run: other programs' share
if [ "$backend" = cuda ]; then
  ranks=2
  section "4/4 Stencil2D, CUDA, $ranks ranks: manual staging vs mpiacc"
  "$run" --mpiexec "$mpiexec" -n "$ranks" "$build/$st/stencil2d" --backend cuda --size 4 --num-iters 200 --passes 3 "$@"
else
  # 4 ranks (a 2 x 2 grid: halos in both directions) when the cores allow,
  # else 2 (2 x 1): more ranks than cores measures the scheduler, not mpiacc
  ranks=4
  [ "$cores" -ge 4 ] || ranks=2
  section "4/4 Stencil2D, OpenCL (no GPU found), $ranks ranks on $cores cores: manual staging vs mpiacc"
  "$run" --mpiexec "$mpiexec" -n "$ranks" "$build/$st/stencil2d" --backend opencl --customSize 256,256 --num-iters 100 --passes 3 "$@"
fi

section "What the numbers mean here"
if [ "$ranks" -gt "$cores" ]; then
  cat <<EOF
   $ranks ranks share $cores CPU cores here: the ratio of the two variants is not meaningful.
   While an exchange waits, each rank polls (MPICH's progress engine, and mpiacc's request
   pool inside it), so ranks take cores from each other and from the device's work; which
   variant loses more depends on the scheduler. Run with at least one core per rank.
EOF
elif [ "$backend" = opencl ]; then
  cat <<EOF
   $ranks ranks on $cores cores: one core per rank, but PoCL runs each rank's kernels on
   threads of the same cores.
EOF
fi
if awk -v l="$load" -v c="$cores" 'BEGIN {exit !(l >= c)}'; then
  cat <<EOF
   The machine was busy before the run (load average $load on $cores cores): other programs
   took cores from the ranks, so timings and ratios vary from run to run.
EOF
fi
if [ "$backend" = opencl ]; then
  cat <<'EOF'
   OpenCL runs on the CPU here (PoCL): "device" memory is host memory and a kernel is a
   thread pool, so there is no PCIe copy to save and no GPU to overlap with. Speed is not
   where mpiacc shows on this machine; read the copies/x and syncs/x columns instead (the
   manual variant's copy and wait calls per exchange, which mpiacc's variant does not
   write) and the validation line (both variants match the CPU reference, and each other
   exactly). The GPU measurements are in README.md, section "Performance", and in
   docs/performance.md.
EOF
else
  cat <<'EOF'
   On a GPU the mpiacc variant moves halos without the application's staging copies and
   host synchronisation: where the transport line above says "MPICH's UCX netmod", its halos
   go to MPI as device memory (packed on the GPU), else they are staged through host memory
   by mpiacc. Compare the GFLOPS and exch ms/x columns of the two rows. The other benchmarks
   (scripts/gpu-bench.sh) are described in docs/performance.md, section "The benchmarks".
EOF
fi

section "Where to look next"
cat <<EOF
   README.md              the user's guide: "Install and launch", "A complete program", the
                          attributes, "Environment", "Troubleshooting" (docs/guide.md: in full)
   include/mpiacc.h       the public API (the attributes and buffer kinds)
   $st     the whole port (README.md there); $build/$st/stencil2d --help
   scripts/test.sh        builds and runs the test suite (skipped tests listed with the reason)
EOF
