#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check_readme_programs.sh SOURCE_DIR BUILD_DIR WORK_DIR CMAKE OPENCL(ON|OFF) [CUDA_HOME]
# README.md's complete programs, as a user meets them (README.md holds the OpenCL one, docs/guide.md
# its CUDA twin; both files are read, the README first):
#  - every ```c block after a "<!-- readme-program:NAME -->" line is written to NAME;
#  - the build is installed into WORK_DIR/prefix (cmake --install), PREFIX and PKG_CONFIG_PATH set as
#    README.md's install block sets them;
#  - the ```sh blocks after "<!-- readme-programs:commands -->" run as written, in one shell, from the
#    directory holding the programs, except: lines naming hello_opencl without an OpenCL build, lines
#    naming hello_cuda without a CUDA build (CUDA_HOME: the toolkit CMake found), and the run of
#    hello_cuda where nvidia-smi lists no GPU (it is then compiled only);
#  - each program run must print "NAME: rank 1 received ... ok"; both programs also compile with
#    -std=c11 -Wall -Wextra -Werror.
# Exit 77 when neither backend was built.
set -euo pipefail
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd) work=$3 cmake=$4 have_ocl=$5 cuda_home=${6:-}
readme="$src/README.md"
docs=("$src/README.md" "$src/docs/guide.md")
fail() { echo "FAIL: $*"; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
have_cuda=ON
[ -n "$cuda_home" ] || have_cuda=OFF
gpu=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && gpu=1
if [ "$have_ocl" != ON ] && [ "$have_cuda" != ON ]; then
  echo "SKIPPED: neither the OpenCL nor the CUDA backend is built"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work/user"
work=$(cd "$work" && pwd)
user="$work/user"

# the programs
names=$(sed -n 's/^<!-- readme-program:\([A-Za-z0-9_.]*\) -->$/\1/p' "${docs[@]}")
[ -n "$names" ] || fail "no <!-- readme-program:NAME --> block in ${docs[*]}"
for n in $names; do
  awk -v m="<!-- readme-program:$n -->" '$0 == m {want = 1; next}
       want && /^```c$/ {on = 1; next} on && /^```$/ {exit} on {print}' "${docs[@]}" >"$user/$n"
  [ -s "$user/$n" ] || fail "the block of $n is empty"
  echo "extracted $n ($(wc -l <"$user/$n") lines)"
done
grep -qx hello_opencl.c <<<"$(sed -n 's/^<!-- readme-program:\([A-Za-z0-9_.]*\) -->$/\1/p' "$readme")" ||
  fail "README.md has no hello_opencl.c"
grep -qx hello_cuda.c <<<"$names" || fail "neither README.md nor docs/guide.md has hello_cuda.c"

# the commands
cmds=$(for f in "${docs[@]}"; do
         awk '$0 == "<!-- readme-programs:commands -->" {want = 1; next}
              want && /^```sh$/ {on = 1; next} on && /^```$/ {on = 0; want = 0; next} on {print}' "$f"
       done)
[ -n "$cmds" ] || fail "no <!-- readme-programs:commands --> block in ${docs[*]}"
script="$work/commands.sh"
printf 'set -euo pipefail\n' >"$script"
while IFS= read -r line; do
  case "$line" in
    *hello_opencl*) [ "$have_ocl" = ON ] || { echo "not run (no OpenCL build): $line"; continue; } ;;
    *hello_cuda*)
      [ "$have_cuda" = ON ] || { echo "not run (no CUDA build): $line"; continue; }
      case "$line" in *mpiacc-run*) [ $gpu = 1 ] || { echo "not run (no CUDA GPU): $line"; continue; } ;; esac ;;
  esac
  printf '%s\n' "$line" >>"$script"
done <<<"$cmds"

# the install, as README.md's block makes it
prefix="$work/prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
export PREFIX="$prefix" PKG_CONFIG_PATH
PKG_CONFIG_PATH=$("$prefix/bin/mpiacc-info" --libdir)/pkgconfig
[ -z "$cuda_home" ] || export CUDA_HOME="$cuda_home"
unset LD_LIBRARY_PATH LD_PRELOAD MPIACC_LOG

echo "running README.md's commands:"
cat "$script"
(cd "$user" && bash -x "$script") >"$work/out" 2>"$work/err" || { cat "$work/out" "$work/err"; fail "the commands failed"; }
cat "$work/out"
ran=0
for p in hello_opencl hello_cuda; do
  grep -q "mpiacc-run.*$p" "$script" || continue
  grep -q "^$p: rank 1 received [0-9]* floats: ok$" "$work/out" || { cat "$work/err"; fail "$p did not report ok"; }
  echo "ok: $p ran on 2 ranks"
  ran=$((ran + 1))
done
[ $ran -gt 0 ] || fail "no program ran"

# the programs compile without a warning
mpicc=$(cache MPI_C_COMPILER)
[ "$have_ocl" != ON ] ||
  "$mpicc" -std=c11 -Wall -Wextra -Werror -c "$user/hello_opencl.c" -o "$work/w1.o" -I"$src/include" ||
  fail "hello_opencl.c has warnings"
[ "$have_cuda" != ON ] ||
  "$mpicc" -std=c11 -Wall -Wextra -Werror -c "$user/hello_cuda.c" -o "$work/w2.o" -I"$src/include" \
    -I"$cuda_home/include" || fail "hello_cuda.c has warnings"
echo "readme_programs: passed ($ran run, both compiled)"
