#!/usr/bin/env bash
# scripts/pingpong-sweep.sh BUILD OUTDIR — issue 23's measurement on a GPU
# machine: bench/pingpong --direct over the IPC path's variants
# (src/cuda/cuda_testhooks.h), 1 KiB / 64 KiB / 1 MiB / 4 MiB, 2D vectors of
# 8 / 64 / 512 B blocks (pitch 512 B: the 512 B rows are contiguous): first
# one run per variant with --breakdown (per-phase medians; a variant that
# fails costs only its own rows), then all variants in one plain run (the
# figures; where it has no row, the breakdown run's figure is used), plus
# the default protocol at 1 KiB; then OUTDIR/summary.txt: a table of the
# direct one-way medians (variant per column, the best of each row marked
# '*'), each variant's slowest row per size against the targets (1 KiB <= 12,
# 64 KiB <= 14, 4 MiB <= 16 us; default 1 KiB <= 16 us), and the breakdown
# lines.  Two ranks on one node; start the MPS daemon first when both share
# one GPU.  About 2-3 minutes; every run has its own time limit.
# Environment: MPI_HOME (default /opt/mpich), SWEEP_VARIANTS and
# SWEEP_DEFAULT_VARIANTS (the sets for the direct and the default-protocol
# runs, defaults below), SWEEP_ITERS (timed round trips per row, default 200).
set -u
build=${1:?usage: scripts/pingpong-sweep.sh BUILD OUTDIR}
out=${2:?usage: scripts/pingpong-sweep.sh BUILD OUTDIR}
mkdir -p "$out"
mpiexec=${MPI_HOME:-/opt/mpich}/bin/mpiexec
pp=$build/bench/pingpong
variants=${SWEEP_VARIANTS:-none,base,kernel,flag,capq,rows,flag+rows,flag+capq+rows}
dvariants=${SWEEP_DEFAULT_VARIANTS:-none,base,xflag,capq+xflag}
iters=${SWEEP_ITERS:-200}
common=(--sizes 1K,64K,1M,4M --blocks 8,64,512 --iterations "$iters")
summary=$out/summary.txt
[ -x "$pp" ] || { echo "no $pp (configure with -DMPIACC_WITH_CUDA=ON)" >&2; exit 1; }

run() { # NAME LIMIT ARGS...
  local name=$1 limit=$2 rc
  shift 2
  echo "=== $name: $pp $*"
  timeout -k 5 "$limit" "$mpiexec" -n 2 "$pp" "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "rc=$rc" >>"$out/$name.log"
  echo "    rc=$rc ($(grep -c '^ *[0-9]' "$out/$name.log") rows)"
}

t0=$(date +%s)
IFS=, read -ra vs <<<"$variants"
: >"$out/breakdown.log"
for v in "${vs[@]}"; do
  run "bd_$v" 40 --direct --breakdown "${common[@]}" --variant "$v"
  cat "$out/bd_$v.log" >>"$out/breakdown.log"
done
run direct 100 --direct "${common[@]}" --variant "$variants" --csv "$out/direct.csv"
run default1k 40 --protocols default --sizes 1K --blocks 8,64,512 --iterations "$iters" --variant "$dvariants" \
  --csv "$out/default1k.csv"
# for comparison: 1 KiB by the direct protocol's eager path (MPIACC_IPC_MIN above it)
MPIACC_IPC_MIN=2K run eager1k 40 --direct --sizes 1K --blocks 8,64,512 --iterations "$iters" --variant "$dvariants"

{
  echo "pingpong-sweep $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), \
iterations $iters, $(($(date +%s) - t0)) s"
  echo
  echo "## direct one-way median (us); '*' = fastest variant of the row"
  awk -v vl="$variants" '
    BEGIN { nv = split(vl, V, ","); printf "%8s %5s", "bytes", "blk"; for (i = 1; i <= nv; i++) printf " %14s", substr(V[i], 1, 14); print "" }
    /^ *[0-9]/ && NF >= 10 && !(($1 " " $2, $10) in t) {
      t[$1 " " $2, $10] = $4 (FILENAME ~ /breakdown/ ? "b" : "")
      if (!(($1 " " $2) in seen)) { seen[$1 " " $2] = 1; R[++nr] = $1 " " $2 }
    }
    END {
      for (r = 1; r <= nr; r++) {
        split(R[r], k, " "); best = ""
        for (i = 1; i <= nv; i++) { x = t[R[r], V[i]]; if (x != "" && x !~ /^-/ && (best == "" || x + 0 < best + 0)) best = x }
        printf "%8s %5s", k[1], k[2]
        for (i = 1; i <= nv; i++) { x = t[R[r], V[i]]; if (x == "") x = "?"; printf " %13s%s", x, (x == best ? "*" : " ") }
        print ""
      }
    }' "$out/direct.log" "$out/breakdown.log"
  echo "(a 'b' after a figure: from the --breakdown run, the plain run had no such row)"
  echo
  echo "## per variant: slowest row per size against the targets; geometric mean over all rows"
  awk -v vl="$variants" '
    function tgt(b) { return b == 1024 ? 12 : b == 65536 ? 14 : b == 4194304 ? 16 : 0 }
    /^ *[0-9]/ && NF >= 10 && $4 != "-" && !(($1 " " $2, $10) in got) {
      got[$1 " " $2, $10] = 1
      v = $10; key = v " " $1; if ($4 + 0 > w[key] + 0) w[key] = $4
      lg[v] += log($4); n[v]++
      if ($5 != "IPC") np[v]++
    }
    END {
      nv = split(vl, V, ",")
      printf "%-26s %10s %10s %10s %10s %8s %s\n", "variant", "1K<=12", "64K<=14", "1M", "4M<=16", "geomean", "notes"
      for (i = 1; i <= nv; i++) {
        v = V[i]; printf "%-26s", v
        split("1024 65536 1048576 4194304", S, " ")
        for (j = 1; j <= 4; j++) {
          x = w[v " " S[j]]; m = tgt(S[j])
          printf " %9s%s", (x == "" ? "-" : x), (x == "" || !m ? " " : (x + 0 <= m ? " " : "!"))
        }
        printf " %8.2f %s\n", n[v] ? exp(lg[v] / n[v]) : 0, np[v] ? np[v] " rows not IPC" : ""
      }
      print "('!': target missed)"
    }' "$out/direct.log" "$out/breakdown.log"
  echo
  echo "## default protocol, 1 KiB (target <= 16 us)"
  awk '/^ *[0-9]/ && NF >= 10 { printf "  blk %4s  %-26s %s us%s\n", $2, $10, $3, ($3 + 0 > 16 ? "  !" : "") }' \
    "$out/default1k.log"
  echo
  echo "## direct protocol, 1 KiB through eager instead of IPC (MPIACC_IPC_MIN=2K), for comparison"
  awk '/^ *[0-9]/ && NF >= 10 { printf "  blk %4s  %-26s %s us (%s)\n", $2, $10, $4, $5 }' "$out/eager1k.log"
  echo
  echo "## breakdown (us, medians; rank 0 -> 1): call [export] | rts | enqueue = dep + map + wait + launch |"
  echo "##   copy_done (GPU copy + completion seen) | fin_post | fin | recv_ret | oneway | send_done"
  grep '^# bd' "$out/breakdown.log" | sed 's/^# bd //'
  echo
  echo "## the last lines of each run"
  for f in direct default1k eager1k "${vs[@]/#/bd_}"; do echo "-- $f"; grep -v '^ *[0-9]\|^# bd' "$out/$f.log" | tail -3; done
} >"$summary"
cat "$summary"
