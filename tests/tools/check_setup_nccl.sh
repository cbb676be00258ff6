#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_setup_nccl.sh SOURCE_DIR
# Issue 38, item 6: scripts/setup.sh installs NCCL only where a GPU can use
# it (the NVIDIA driver lists one), or says why it installs it anyway
# (MPIACC_SKIP_NCCL=0), and says why it does not.  Asked with
# --nccl-decision (which decides and exits) under stand-ins for nvidia-smi
# (a GPU listed, none) and nvcc (the CUDA toolkit).
set -u
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
mkdir -p "$work/gpu" "$work/nogpu"
printf '#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: GPU-0)"\n' >"$work/gpu/nvidia-smi"
printf '#!/bin/sh\necho "No devices were found"; exit 6\n' >"$work/nogpu/nvidia-smi"
for d in gpu nogpu; do printf '#!/bin/sh\nexit 0\n' >"$work/$d/nvcc"; done
chmod +x "$work"/*/*
ask() { env -u MPIACC_SKIP_NCCL PATH="$work/$1:$PATH" "${@:2}" bash "$src/scripts/setup.sh" --nccl-decision; }
expect() { # what got pattern
  echo "$1: $2"
  grep -q -- "$3" <<<"$2" || fail "$1: expected '$3'"
}
expect "a GPU" "$(ask gpu)" '^NCCL: install: the NVIDIA driver lists 1 GPU'
expect "the toolkit, no GPU" "$(ask nogpu)" '^NCCL: skip: the CUDA toolkit is here but no GPU the NVIDIA driver can use'
expect "no GPU, MPIACC_SKIP_NCCL=0" "$(ask nogpu env MPIACC_SKIP_NCCL=0)" '^NCCL: install: MPIACC_SKIP_NCCL=0: installed although no GPU'
expect "a GPU, MPIACC_SKIP_NCCL=1" "$(ask gpu env MPIACC_SKIP_NCCL=1)" '^NCCL: skip: MPIACC_SKIP_NCCL=1'
[ $status -eq 0 ] && echo "setup's NCCL decision: passed"
exit $status
