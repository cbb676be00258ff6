#!/usr/bin/env bash
# Installs everything mpiacc needs on a fresh Debian machine, idempotently:
#  - Debian packages: CMake, a C compiler, the OpenCL ICD loader and headers,
#    PoCL (OpenCL on the CPU), CMocka;
#  - MPICH 5.0.2 from PyPI into the project-local prefix .venv/ (ignored by git).
# Set MPIACC_SKIP_APT=1 to skip the Debian part (e.g. on a cluster), or
# MPI_HOME=/path to use an MPICH that is already installed instead of the wheel.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

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

if [ -z "${MPI_HOME:-}" ]; then
  if [ ! -x .venv/bin/mpicc ] || ! .venv/bin/mpichversion 2>/dev/null | grep -q '5.0.2'; then
    echo "setup: installing MPICH 5.0.2 from PyPI into .venv/"
    python3 -m venv .venv 2>/dev/null || python3 -m venv --without-pip .venv
    if [ -x .venv/bin/pip ]; then
      .venv/bin/pip install -q --disable-pip-version-check mpich==5.0.2
    else
      python3 -m pip install -q --disable-pip-version-check --prefix "$root/.venv" mpich==5.0.2
    fi
  fi
fi
echo "setup: done"
