#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: readme_commands.sh README.md BUILD_DIR MPIEXEC
# Runs the commands of an example README's ```sh blocks as written, from the repository root, with two
# substitutions: a leading "mpiacc-run" is BUILD_DIR/tools/mpiacc-run and "build/" is BUILD_DIR/.  Lines with
# "--backend opencl" run everywhere; the others need a CUDA GPU and are skipped without one.  On the GPU, every
# command gets the CUDA UCX environment of examples/mpiexec-ucx (the stacks of scripts/*-scaling.sh).  Each command
# must exit 0.  Exit 77 when nothing could run.
set -u
readme=$1 build=$(cd "$2" && pwd) mpiexec=$3
root=$(cd "$(dirname "$0")/.." && pwd)
gpu=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && gpu=1
export MPIEXEC=$mpiexec
if [ $gpu = 1 ]; then
  for d in "$(dirname "$(dirname "$mpiexec")")"/lib/python3*/site-packages/libucx/lib; do
    [ -e "$d/libucp.so.0" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      MPIR_CVAR_CH4_NETMOD=ucx MPIR_CVAR_NOLOCAL=1 UCX_WARN_UNUSED_ENV_VARS=n
  done
  unset UCX_ROOT
fi
ran=0 failed=0 skipped=0
while IFS= read -r line; do
  case "$line" in *"--backend opencl"*) ;; *) [ $gpu = 1 ] || { skipped=$((skipped + 1)); continue; } ;; esac
  cmd=${line//build\//$build/}
  [[ $cmd == mpiacc-run* ]] && cmd="$build/tools/mpiacc-run${cmd#mpiacc-run}"
  cmd=${cmd%%#*}
  echo "== $line"
  if (cd "$root" && timeout 300 bash -c "$cmd") </dev/null >/tmp/readme_cmd.$$ 2>&1; then
    ran=$((ran + 1)); tail -3 /tmp/readme_cmd.$$
  else
    failed=$((failed + 1)); echo "FAILED (exit $?)"; tail -20 /tmp/readme_cmd.$$
  fi
done < <(awk '/^```sh/ {on = 1; next} /^```/ {on = 0} on && NF && $1 !~ /^#/' "$readme")
rm -f /tmp/readme_cmd.$$
echo "README commands: $ran passed, $failed failed, $skipped skipped (no GPU)"
[ $failed = 0 ] || exit 1
[ $ran -gt 0 ] || { echo "SKIPPED: no command runs here"; exit 77; }
