#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: anysource_runs.sh 1node|2nodes MPIACC_RUN ANYSOURCE [RUNS [NP [ROUNDS]]]
# Runs the plain MPI program ANYSOURCE (tests/reqpool/anysource.c: receives
# from MPI_ANY_SOURCE of messages already at MPI, in every form) RUNS times
# (default: $MPIACC_TEST_ANYSOURCE_RUNS, else 50) under MPIACC_RUN (mpiacc-run:
# mpiacc preloaded, MPICH's UCX netmod, MPIR_CVAR_NOLOCAL=1), NP processes
# (default 3), ROUNDS rounds (default 2); 2nodes: as two simulated nodes
# (MPIR_CVAR_NUM_CLIQUES=2, UCX over TCP only, as scripts/gpu-check.sh's
# two-node steps).  A run that does not end within 60 s counts as hung (its
# log is kept).  Passes when every run ends with "anysource: ... ok"; skips
# (77) where MPICH has no UCX netmod.  MPICH alone hangs in this program on
# that netmod (docs/semantics.md): run it with plain mpiexec to see it.
set -u
where=$1 run=$2 prog=$3 runs=${4:-${MPIACC_TEST_ANYSOURCE_RUNS:-50}} np=${5:-3} rounds=${6:-2}
grep -qx 'MPIR_CVAR_CH4_NETMOD=ucx' < <("$run" --print-env 2>/dev/null) || {
  echo "SKIPPED: mpiacc-run does not put the ranks on MPICH's UCX netmod (no UCX netmod, or MPIR_CVAR_CH4_NETMOD set)"
  exit 77
}
env=()
# shellcheck disable=SC2054
case $where in
1node) ;;
2nodes) env=(MPIR_CVAR_NUM_CLIQUES=2 UCX_TLS=tcp,self) ;;
*) echo "usage: $0 1node|2nodes MPIACC_RUN ANYSOURCE [RUNS [NP [ROUNDS]]]" >&2; exit 2 ;;
esac
log=$(mktemp "${TMPDIR:-/tmp}/anysource.XXXXXX")
ok=0 hung=0 failed=0 t0=$(date +%s)
for ((i = 1; i <= runs; i++)); do
  env "${env[@]}" timeout -k 5 60 "$run" -n "$np" "$prog" "$rounds" >"$log" 2>&1
  rc=$?
  if ((rc == 0)) && grep -q '^anysource: .* ok ' "$log"; then
    ok=$((ok + 1))
  else
    if ((rc == 124 || rc == 137)); then hung=$((hung + 1)); what=hung; else failed=$((failed + 1)); what="failed (rc $rc)"; fi
    echo "--- run $i $what; its output:"
    tail -40 "$log"
    cp "$log" "$log.run$i"
  fi
done
rm -f "$log"
echo "anysource $where: $ok of $runs runs ended, $hung hung, $failed failed ($np processes, $rounds rounds, $(($(date +%s) - t0)) s${env:+; ${env[*]}})"
((ok == runs))
