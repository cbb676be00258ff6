#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs everything mpiacc needs on a fresh Debian machine, idempotently
# (a second run downloads nothing and changes nothing):
#  - Debian packages: CMake, a C compiler, the OpenCL ICD loader and headers,
#    PoCL (OpenCL on the CPU), CMocka;
#  - MPICH 5.0.2 from PyPI into the project-local prefix .venv/ (ignored by git);
#  - beside it, UCX 1.22 with its CUDA transports (PyPI's libucx-cu13): MPICH's
#    UCX netmod runs on it under mpiacc-run (CUDA device memory on GPU
#    machines, host memory everywhere; CMake finds it, cmake/mpiacc_ucx.cmake);
#  - where a GPU can use it (the NVIDIA driver lists a device: nvidia-smi -L),
#    NCCL 2.28.9 from PyPI (nvidia-nccl-cu13, 200 MB:
#    .venv/lib/python3.*/site-packages/nvidia/nccl/{include,lib}); NCCL only
#    runs collectives on device buffers, so a machine with the CUDA toolkit
#    but no GPU gets none (the build then uses the toolkit's nccl.h if it has
#    one) and the set-up says so.
#  - MPICH's own test suite for scripts/mpich-tests.sh (test/mpi of the
#    distribution's MPICH source package, about 4 MB kept in .cache/mpich-tests:
#    scripts/mpich-source.sh); where it cannot be fetched (offline, not Debian
#    or Ubuntu) setup says why and goes on, and the test pass is skipped.
# Nothing is downloaded later, at build or run time.
# Set MPIACC_SKIP_APT=1 to skip the Debian part (e.g. on a cluster),
# MPI_HOME=/path to use an MPICH that is already installed instead of the
# wheel (UCX still goes into .venv/; a site's UCX is chosen at configure time
# with -DMPIACC_UCX_ROOT=DIR), MPIACC_SKIP_NCCL=1 to leave NCCL out,
# MPIACC_SKIP_NCCL=0 to install it wherever CUDA is (a build for GPU nodes
# on a machine without one).  --nccl-decision: print whether NCCL would be
# installed, and why, and exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
mpich_version=5.0.2
ucx_pkg=libucx-cu13 ucx_version=1.22.0
nccl_pkg=nvidia-nccl-cu13 nccl_version=2.28.9

# ---- NCCL: only where a GPU can use it ----------------------------------------
# CUDA present: a CUDA compiler, or the NVIDIA driver (its library or its kernel module)
cuda_present() {
  command -v nvcc >/dev/null && return 0
  compgen -G "/usr/local/cuda*/bin/nvcc" >/dev/null && return 0
  [ -e /proc/driver/nvidia/version ] && return 0
  ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && return 0
  return 1
}
# the GPUs the NVIDIA driver lists ("" when none can be used here)
gpus_usable() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -c '^GPU ' | grep -v '^0$' || true; }
# nccl_want (install|skip) and nccl_why: whether set-up installs NCCL, and why
nccl_decide() {
  local n
  n=$(gpus_usable)
  if [ "${MPIACC_SKIP_NCCL:-}" = 1 ]; then
    nccl_want=skip nccl_why="MPIACC_SKIP_NCCL=1"
  elif [ -n "$n" ]; then
    nccl_want=install nccl_why="the NVIDIA driver lists $n GPU(s): collectives on device buffers run on NCCL"
  elif [ "${MPIACC_SKIP_NCCL:-}" = 0 ] && cuda_present; then
    nccl_want=install nccl_why="MPIACC_SKIP_NCCL=0: installed although no GPU is usable here (a build for GPU nodes)"
  elif cuda_present; then
    nccl_want=skip nccl_why="the CUDA toolkit is here but no GPU the NVIDIA driver can use (nvidia-smi lists none), and NCCL only runs collectives on device buffers (MPIACC_SKIP_NCCL=0 installs it anyway)"
  else
    nccl_want=skip nccl_why="no CUDA here"
  fi
}
nccl_decide
if [ "${1:-}" = --nccl-decision ]; then
  echo "NCCL: $nccl_want: $nccl_why"
  exit 0
fi

need_pkgs=()
want_pkgs=(cmake make gcc g++ pkg-config ocl-icd-opencl-dev opencl-c-headers
           pocl-opencl-icd clinfo libcmocka-dev python3-venv clang-14 libclang-rt-14-dev)
if [ "${MPIACC_SKIP_APT:-0}" != 1 ] && command -v dpkg-query >/dev/null; then
  for p in "${want_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_pkgs+=("$p")
  done
  if [ ${#need_pkgs[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    echo "setup: installing Debian packages: ${need_pkgs[*]}"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  fi
fi

# tests/install moves .venv/ away for a moment (the install must stand alone);
# a run of it that was killed meanwhile leaves it here
if [ -d .venv.moved-by-install-test ] && [ ! -e .venv ]; then
  mv .venv.moved-by-install-test .venv
  echo "setup: .venv/ put back (moved away by an interrupted run of tests/install)"
fi

# .venv/: a Python environment used as an installation prefix for wheels
venv_ready() { [ -x .venv/bin/python3 ] || [ -x .venv/bin/python ]; }
if ! venv_ready; then
  python3 -m venv .venv 2>/dev/null || python3 -m venv --without-pip .venv
fi
# pip_install PKG==VERSION...: into .venv/ (its own pip, else the system pip
# with .venv as prefix)
pip_install() {
  if [ -x .venv/bin/pip ]; then
    .venv/bin/pip install -q --disable-pip-version-check "$@"
  else
    python3 -m pip install -q --disable-pip-version-check --prefix "$root/.venv" "$@"
  fi
}
# has_dist NAME VERSION: whether .venv/ holds that distribution (its dist-info)
has_dist() {
  local n=${1//-/_}
  compgen -G ".venv/lib/python3*/site-packages/${n}-$2.dist-info" >/dev/null
}

if [ -z "${MPI_HOME:-}" ]; then
  if [ ! -x .venv/bin/mpicc ] || ! .venv/bin/mpichversion 2>/dev/null | grep -q "$mpich_version"; then
    echo "setup: installing MPICH $mpich_version from PyPI into .venv/"
    pip_install "mpich==$mpich_version"
  fi
fi

if ! has_dist "$ucx_pkg" "$ucx_version"; then
  echo "setup: installing UCX $ucx_version with CUDA transports ($ucx_pkg) from PyPI into .venv/"
  pip_install "$ucx_pkg==$ucx_version"
fi
# the wheel's tools (ucx_info, ...) may come without the execute bit
for f in .venv/lib/python3*/site-packages/libucx/bin/*; do
  [ -f "$f" ] && [ ! -x "$f" ] && chmod +x "$f"
done
ucx_lib=$(compgen -G ".venv/lib/python3*/site-packages/libucx/lib/libucp.so.0" | head -1 || true)
[ -n "$ucx_lib" ] || { echo "setup: error: $ucx_pkg installed, but no libucp.so.0 found in .venv/" >&2; exit 1; }

if [ "$nccl_want" = install ]; then
  if ! has_dist "$nccl_pkg" "$nccl_version"; then
    echo "setup: installing NCCL $nccl_version ($nccl_pkg) from PyPI into .venv/: $nccl_why"
    pip_install "$nccl_pkg==$nccl_version"
  fi
elif ! has_dist "$nccl_pkg" "$nccl_version"; then
  echo "setup: NCCL not installed: $nccl_why"
fi
# (after the packages: the fetch needs nothing more than apt-get and tar)
err=$(mktemp)
if mpich_tests=$(bash scripts/mpich-source.sh --fetch 2>"$err"); then
  mpich_tests="MPICH's test suite in ${mpich_tests#"$root"/}"
else
  mpich_tests="no MPICH test suite: $(tail -1 "$err" | sed 's/^mpich-source: //')"
fi
rm -f "$err"
echo "setup: done (.venv/: MPICH $( [ -z "${MPI_HOME:-}" ] && echo "$mpich_version" || echo "from MPI_HOME=$MPI_HOME"), UCX $ucx_version in $(dirname "$ucx_lib")$(has_dist "$nccl_pkg" "$nccl_version" && echo ", NCCL $nccl_version"); $mpich_tests)"
