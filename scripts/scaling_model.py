#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Stencil2D weak scaling beyond one node, on paper (docs/scaling.md).

Predicts the parallel efficiency GFLOPS(n) / (n GFLOPS(1)) of examples/stencil2d at n GPUs (one rank
per GPU, 2D grid) from measured per-message costs and the 1-GPU compute rate:

  T_iter(n) = T_comp + T_exch / h            (no overlap: what stencil2d does)
  T_iter(n) = max(T_comp, T_exch / h)        (perfect overlap: an upper bound; needs an interior /
                                              boundary split stencil2d does not have)
  efficiency = T_comp / T_iter(n),   T_comp = 11 (N+2h-2)^2 / GFLOPS(1)

T_exch is the exchange of the slowest rank: two phases (rows, then columns), each phase the slower
of its two sides (a rank's two messages of a phase travel at once); messages of h*P elements (rows,
P = N+2h rounded up to 16) and of (N+2h)*h elements (columns, vector(R, h, P), packed).  Ranks fill
nodes in tiles (default 2 x 4 ranks = 8 GPUs per node), so a message is intranode or internode.

Per-message time of each path (b bytes):
  host_shm(b), ipc(b)   measured curves (piecewise linear in b; --costs CSV or the built-in table)
  net(b)                = net_alpha + b / net_beta                                  (host network)
  staged(b, T)          = stage_alpha + 2 b / pcie + T(b)
                          device -> host staging of the whole message, transport T, host -> device
                          (mpiacc's default protocol, src/protocol/staged.c)
  pipelined(b, T)       = stage_alpha + 2 min(b, chunk) / pcie + max(T(b), b / pcie if b > chunk)
                          the direct protocol's eager (one chunk) and pipelined staging: chunks
                          overlap the transport once b exceeds one chunk
  gdr(b)                = gdr_alpha + net(b)  (GPU-direct RDMA: the NIC reads device memory; the
                          host still waits for the producing kernel before it posts the send)
Variants:
  manual          per exchange: 2 copy+sync round trips (sync_us) + the staging copies (rows at pcie,
                  columns at row_copy_ns per row, both ways) + per phase the host transport of the
                  slower side (host_shm or net)
  mpiacc          default protocol: every message staged(b, host_shm | net)
  mpiacc-direct   intranode: b >= ipc_min: ipc(b), else pipelined (eager = one chunk; src/protocol/
                  direct.c sends CUDA messages from MPIACC_IPC_MIN bytes by IPC, smaller ones eagerly);
                  internode: pipelined over the network (no IPC between nodes)
  gdr             what a GPU-direct-RDMA-capable MPICH would give internode (intranode: as direct)

Refit to a sweep (--fit stencil_scaling.csv, scripts/stencil-scaling.sh's CSV; every series of it, overlap
and the cuda-aware peers included): the model's inputs then come from the run on one node instead of the
built-in curves:
  T_comp          kernel_us of the series at 1 GPU (the steps alone, per iteration), per size and precision
  message(b)      alpha + b / beta per message inside the node, fitted (least squares over the weak sizes) to
                  exch_us at the largest GPU count: one exchange = rows then columns, each phase the slower of
                  its two messages, so exch_us = 2 (alpha + b / beta) with b the message bytes of that size
  between nodes   message(b) + net_alpha + b / net_gbs (the series' own cost plus the network's)
  residual        iter_us - kernel_us - exch_us / h at that GPU count (launch and completion costs the
                  exchange alone does not show), kept per size for the non-overlapped series
  overlap         series "+overlap": the exchange hides behind the interior up to a capacity
                  c = exch_us - exposed_us at that GPU count (when part of it showed), else kernel_us there
                  (all of it hidden): T_iter = T_comp + max(0, T_exch(n) / h - c)
  T_iter(n)       T_comp + T_exch(n) / h + residual (not overlapped); efficiency = T_iter(1) / T_iter(n)
with T_exch(n) the slowest rank's exchange on n GPUs (the same node tiles as below).  Printed per series,
size and precision: the fitted alpha, beta, and the predicted efficiency at --gpus.

usage: scripts/scaling_model.py [--costs FILE.csv] [--sweep stencil_scaling.csv] [options]
       scripts/scaling_model.py --fit stencil_scaling.csv [--gpus "16 64 512"] [--format md]
       scripts/scaling_model.py --dump-costs > costs.csv     (the built-in inputs, to edit)
"""
import argparse
import csv
import math
import sys

# Built-in inputs: ONLY figures from /work/shared/reference/ (see docs/scaling.md); replace them with
# fresh measurements (--costs, --sweep and the options below).
SRC_DP = "measured on 2xH200 NVLink, 2026-11-22 (reference/direct-protocol.md, bare IPC prototype table)"
DEFAULT_COSTS = [  # path, bytes, one-way us, source
    ("ipc", 8, 13.0), ("ipc", 1024, 13.6), ("ipc", 65536, 13.7), ("ipc", 1048576, 17.2),
    ("ipc", 4194304, 25.2), ("ipc", 16777216, 59.0), ("ipc", 67108864, 187.4),
    ("host_shm", 8, 1.2), ("host_shm", 1024, 1.6), ("host_shm", 65536, 13.7), ("host_shm", 1048576, 152.9),
    ("host_shm", 4194304, 531.6), ("host_shm", 16777216, 2543.5), ("host_shm", 67108864, 15509.6),
]
SRC_MB = "measured on H200, 2026-11-21 (reference/machine-baselines.md)"
SRC_SHOC = "measured on H200, 2026-11-21 (reference/stencil2d.md: SHOC's own Stencil2D, 1 rank, 4096^2)"
# GFLOPS(1) per (size, precision).  1024^2 has no reference figure: the 4096^2 rate is ASSUMED for it
# (a smaller grid runs slower per point, so this underestimates T_comp and the 1024^2 efficiency).
DEFAULT_RATES = {(4096, "sp"): 2756.0, (4096, "dp"): 1742.0, (1024, "sp"): 2756.0, (1024, "dp"): 1742.0}


class Curve:
    """Piecewise-linear one-way time against bytes; flat below the first point, the last segment's
    slope beyond the last."""

    def __init__(self, pts):
        self.pts = sorted(pts)
        if not self.pts:
            raise ValueError("empty curve")

    def __call__(self, b):
        p = self.pts
        if b <= p[0][0] or len(p) == 1:
            return p[0][1]
        for (b0, t0), (b1, t1) in zip(p, p[1:]):
            if b <= b1:
                return t0 + (t1 - t0) * (b - b0) / (b1 - b0)
        (b0, t0), (b1, t1) = p[-2], p[-1]
        return t1 + (t1 - t0) * (b - b1) / (b1 - b0)


def load_costs(path):
    curves = {}
    rows = DEFAULT_COSTS if path is None else [
        (r["path"], float(r["bytes"]), float(r["us"])) for r in csv.DictReader(open(path, newline=""))]
    for name, b, us in rows:
        curves.setdefault(name, []).append((float(b), float(us)))
    missing = {"ipc", "host_shm"} - set(curves)
    if missing:
        sys.exit("scaling_model.py: %s: no rows for path(s) %s" % (path, ", ".join(sorted(missing))))
    return {k: Curve(v) for k, v in curves.items()}


def load_rates(path, series):
    """GFLOPS at 1 rank per (size, precision) from scripts/stencil-scaling.sh's CSV (weak rows)."""
    rates = {}
    for r in csv.DictReader(open(path, newline="")):
        if r["ranks"] == "1" and r["series"] == series and r.get("scaling", "weak") == "weak":
            rates[(int(r["size"]), r["precision"])] = float(r["gflops_median"])
    return rates


def msg_bytes(size, h, es):
    """Rows and columns message bytes of an N x N block with halo h."""
    R, P = size + 2 * h, (size + 2 * h + 15) // 16 * 16
    return h * P * es, R * h * es


def fit_line(pts):
    """Least squares y = alpha + x / beta over (x, y); beta in bytes per us (inf when flat)."""
    n = len(pts)
    if n == 1:
        return pts[0][1], math.inf
    mx, my = sum(p[0] for p in pts) / n, sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else 0.0
    slope = max(slope, 1e-12)
    return max(0.0, my - slope * mx), 1.0 / slope


def refit(a, gpus):
    """The --fit mode: the sweep's series refitted (see the module docstring); returns the table lines."""
    rows = [r for r in csv.DictReader(open(a.fit, newline="")) if r.get("scaling", "weak") == "weak"]
    if not rows:
        sys.exit("scaling_model.py: %s: no weak-scaling rows" % a.fit)
    nfit = max(int(r["ranks"]) for r in rows)
    h = int(rows[0].get("h") or a.h)
    lines = []
    keys = []
    for r in rows:
        k = (r["series"], r["precision"])
        if k not in keys:
            keys.append(k)
    for series, prec in keys:
        es = 4 if prec == "sp" else 8
        sel = [r for r in rows if r["series"] == series and r["precision"] == prec]
        at = {(int(r["size"]), int(r["ranks"])): r for r in sel}
        sizes = sorted({int(r["size"]) for r in sel})
        pts = []
        for size in sizes:
            r = at.get((size, nfit))
            if r and float(r["exch_us"]) > 0:
                b = max(msg_bytes(size, h, es))
                pts.append((b, float(r["exch_us"]) / 2))
        if not pts or nfit < 2:
            continue
        alpha, beta = fit_line(pts)
        msg = lambda b, inter: alpha + b / beta + (a.net_alpha + b / (a.net_gbs * 1e3) if inter else 0.0)
        for size in sizes:
            one, top = at.get((size, 1)), at.get((size, nfit))
            if not one or not top:
                continue
            tcomp = float(one["kernel_us"])
            t1 = float(one["iter_us"])
            if series.endswith("+overlap"):
                exposed = float(top["exposed_us"])
                cap = max(0.0, float(top["exch_us"]) - exposed if exposed > 0.05 * float(top["exch_us"])
                          else float(top["kernel_us"]))
                iter_of = lambda tx: tcomp + max(0.0, tx / h - cap)
                how = "capacity %.1f us" % cap
            else:
                resid = max(0.0, float(top["iter_us"]) - float(top["kernel_us"]) - float(top["exch_us"]) / h)
                iter_of = lambda tx: tcomp + tx / h + resid
                how = "residual %.1f us" % resid
            cells = []
            for n in gpus:
                tx = exchange_time(a, n, size, h, es, msg)
                cells.append("%.2f (%.0f us)" % (t1 / iter_of(tx), tx))
            lines.append(["%d^2" % size, prec, series, "%.2f" % alpha, "%.1f" % (beta / 1e3),
                          "%.1f" % tcomp, how] + cells)
    head = ["size", "prec", "series", "alpha us", "beta GB/s", "T_comp us", "fit"] + ["%d GPUs" % n for n in gpus]
    note = ("refitted to %s (%d GPUs on one node): predicted weak-scaling efficiency T_iter(1) / T_iter(n) "
            "(slowest rank's exchange per exchange); h = %d; network %.1f us + %.0f GB/s per NIC, node tile %s"
            % (a.fit, nfit, h, a.net_alpha, a.net_gbs, a.node_tile))
    return head, lines, note


def exchange_time(a, n, size, h, es, msg):
    """Slowest rank's exchange on n GPUs (2D grid, node tiles), each phase the slower of its two messages."""
    rb, cb = msg_bytes(size, h, es)
    pr, pc = grid_of(n)
    tr, tc = min(a.tile[0], pr), min(a.tile[1], pc)
    node = lambda i, j: (i // tr, j // tc)
    worst = 0.0
    for i in range(pr):
        for j in range(pc):
            t = 0.0
            for b, nb in ((rb, [(i - 1, j), (i + 1, j)]), (cb, [(i, j - 1), (i, j + 1)])):
                side = 0.0
                for (x, y) in nb:
                    if 0 <= x < pr and 0 <= y < pc:
                        side = max(side, msg(b, node(x, y) != node(i, j)))
                t += side
            worst = max(worst, t)
    return worst


def grid_of(n):
    p = max(d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0)
    return p, n // p


class Model:
    def __init__(self, a, curves):
        self.a, self.c = a, curves

    def net(self, b):
        return self.a.net_alpha + b / (self.a.net_gbs * 1e3)  # GB/s -> bytes per us

    def staged(self, b, transport, chunk=math.inf):
        a = self.a
        pcie = a.pcie_gbs * 1e3
        first = min(b, chunk)
        rest = max(transport(b), b / pcie) if b > chunk else transport(b)
        return a.stage_alpha + 2 * first / pcie + rest

    def message(self, variant, b, inter, nic_share):
        """One-way time of one device message of b bytes; nic_share >= 1 divides the network rate."""
        a, c = self.a, self.c
        net = lambda x: self.net(x * nic_share)
        host = net if inter else c["host_shm"]
        if variant == "mpiacc":
            return self.staged(b, host)
        if variant in ("mpiacc-direct", "gdr"):
            if inter:
                return a.gdr_alpha + net(b) if variant == "gdr" else self.staged(b, host, a.chunk)
            return c["ipc"](b) if b >= a.ipc_min else self.staged(b, host, a.chunk)
        raise ValueError(variant)

    def exchange(self, variant, n, size, es):
        """Exchange time (us) of the slowest rank, and the node layout used."""
        a = self.a
        h = a.h
        R, P = size + 2 * h, (size + 2 * h + 15) // 16 * 16
        nbytes = {0: h * P * es, 1: R * h * es}  # rows, columns
        pr, pc = grid_of(n)
        tr, tc = a.tile
        if tr * tc != a.gpus_per_node:
            sys.exit("scaling_model.py: --node-tile %dx%d is not --gpus-per-node %d" % (tr, tc, a.gpus_per_node))
        tr, tc = min(tr, pr), min(tc, pc)
        node = lambda i, j: (i // tr, j // tc)
        # internode messages per node and phase: they share the node's NICs
        load = {}
        for i in range(pr):
            for j in range(pc):
                for ph, nb in ((0, [(i - 1, j), (i + 1, j)]), (1, [(i, j - 1), (i, j + 1)])):
                    for (x, y) in nb:
                        if 0 <= x < pr and 0 <= y < pc and node(x, y) != node(i, j):
                            load[(node(i, j), ph)] = load.get((node(i, j), ph), 0) + 1
        worst = 0.0
        for i in range(pr):
            for j in range(pc):
                t = 0.0
                if variant == "manual":
                    t += 2 * a.sync_us
                for ph, nb in ((0, [(i - 1, j), (i + 1, j)]), (1, [(i, j - 1), (i, j + 1)])):
                    side = 0.0
                    share = max(1.0, load.get((node(i, j), ph), 0) / a.nics_per_node)
                    for (x, y) in nb:
                        if not (0 <= x < pr and 0 <= y < pc):
                            continue
                        inter = node(x, y) != node(i, j)
                        b = nbytes[ph]
                        if variant == "manual":  # staging copies: D2H before, H2D after, both counted here
                            copy = 2 * (b / (a.pcie_gbs * 1e3) if ph == 0 else R * a.row_copy_ns * 1e-3)
                            t += copy
                            m = self.net(b * share) if inter else self.c["host_shm"](b)
                        else:
                            m = self.message(variant, b, inter, share)
                        side = max(side, m)
                    t += side
                worst = max(worst, t)
        return worst, (pr, pc, tr, tc)


VARIANTS = ("manual", "mpiacc", "mpiacc-direct", "gdr")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Defaults: see docs/scaling.md for their sources.")
    ap.add_argument("--costs", help="CSV path,bytes,us (paths ipc and host_shm) replacing the built-in curves")
    ap.add_argument("--sweep", help="scripts/stencil-scaling.sh's CSV: GFLOPS(1) of each built-in series from it")
    ap.add_argument("--fit", help="scripts/stencil-scaling.sh's CSV: refit every series of it (see above)")
    ap.add_argument("--rate", action="append", default=[], metavar="SIZE:PREC=GFLOPS",
                    help="GFLOPS(1) of one size and precision, e.g. 4096:sp=2756 (repeatable)")
    ap.add_argument("--gpus", default="16 64 512", help="GPU counts to predict (default '16 64 512')")
    ap.add_argument("--sizes", default="1024 4096", help="per-rank sizes N (N x N per rank)")
    ap.add_argument("--precisions", default="sp dp")
    ap.add_argument("--h", type=int, default=1, help="iterations per exchange (halo width), default 1")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--node-tile", default="2x4", help="ranks per node as rows x columns of the grid")
    ap.add_argument("--nics-per-node", type=float, default=8, help="NICs per node, one per GPU by default")
    ap.add_argument("--net-alpha", type=float, default=1.5, help="network latency, us (InfiniBand HDR/NDR: 1-2)")
    ap.add_argument("--net-gbs", type=float, default=24.0, help="network GB/s per direction per NIC (HDR: ~24)")
    ap.add_argument("--stage-alpha", type=float, default=14.0,
                    help="fixed cost of staging one message through the host, us (2 x copy+sync)")
    ap.add_argument("--pcie-gbs", type=float, default=55.0, help="pinned host<->device GB/s each way")
    ap.add_argument("--chunk", type=float, default=1 << 20, help="pipelining chunk, bytes (MPIACC_PIPELINE_CHUNK)")
    ap.add_argument("--ipc-min", type=float, default=0,
                    help="direct protocol: smallest message sent by IPC inside a node, bytes (MPIACC_IPC_MIN)")
    ap.add_argument("--sync-us", type=float, default=7.0, help="manual: one copy + stream synchronize, us")
    ap.add_argument("--row-copy-ns", type=float, default=1.25, help="manual: 2D copy cost per row, ns")
    ap.add_argument("--gdr-alpha", type=float, default=9.0,
                    help="GPU-direct RDMA: host waits for the producer before posting, us (launch+sync)")
    ap.add_argument("--format", choices=("text", "md"), default="text")
    ap.add_argument("--dump-costs", action="store_true", help="print the built-in cost curves as CSV and exit")
    a = ap.parse_args()
    if a.dump_costs:
        print("path,bytes,us,source")
        for name, b, us in DEFAULT_COSTS:
            print("%s,%d,%g,%s" % (name, b, us, SRC_DP))
        return 0
    try:
        a.tile = tuple(int(x) for x in a.node_tile.lower().split("x"))
        gpus = [int(x) for x in a.gpus.split()]
        sizes = [int(x) for x in a.sizes.split()]
        assert len(a.tile) == 2 and min(a.tile) > 0 and min(gpus) > 0 and min(sizes) > 0 and a.h > 0
    except (ValueError, AssertionError):
        ap.error("bad --node-tile, --gpus, --sizes or --h")
    precs = a.precisions.split()
    if a.fit:
        head, lines, note = refit(a, gpus)
        print_table(a.format == "md", head, lines, note)
        return 0
    model = Model(a, load_costs(a.costs))
    rates = {v: dict(DEFAULT_RATES) for v in VARIANTS}
    for v in VARIANTS:
        if a.sweep:
            rates[v].update(load_rates(a.sweep, "mpiacc" if v == "gdr" else v))
    for spec in a.rate:
        try:
            k, g = spec.split("=")
            s, p = k.split(":")
            for v in VARIANTS:
                rates[v][(int(s), p)] = float(g)
        except ValueError:
            ap.error("bad --rate %r (SIZE:PREC=GFLOPS)" % spec)

    md = a.format == "md"
    head = ["size", "prec", "variant", "GFLOPS(1)", "T_comp us"] + ["%d GPUs" % n for n in gpus]
    lines = []
    for size in sizes:
        for p in precs:
            es = 4 if p == "sp" else 8
            for v in VARIANTS:
                g1 = rates[v].get((size, p))
                if not g1:
                    continue
                tcomp = 11.0 * (size + 2 * a.h - 2) ** 2 / (g1 * 1e3)  # GFLOPS -> flop per us
                cells = []
                for n in gpus:
                    tx, _ = model.exchange(v, n, size, es)
                    no = tcomp / (tcomp + tx / a.h)
                    ov = tcomp / max(tcomp, tx / a.h)
                    cells.append("%.2f / %.2f (%.0f us)" % (no, ov, tx))
                lines.append(["%d^2" % size, p, v, "%.0f" % g1, "%.1f" % tcomp] + cells)
    layouts = ", ".join("%d = %dx%d grid, node tile %dx%d" % ((n,) + model.exchange("mpiacc", n, sizes[0], 4)[1])
                        for n in gpus)
    note = ("efficiency without overlap / with perfect overlap (exchange time of the slowest rank per "
            "exchange); h = %d; %s; network %.1f us + %.0f GB/s, %g NIC(s) per node"
            % (a.h, layouts, a.net_alpha, a.net_gbs, a.nics_per_node))
    print_table(md, head, lines, note)
    return 0


def print_table(md, head, lines, note):
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for l in lines:
            print("| " + " | ".join(l) + " |")
        print("\n" + note)
    else:
        w = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
        for l in [head] + lines:
            print("  ".join(str(x).ljust(k) for x, k in zip(l, w)))
        print(note)


if __name__ == "__main__":
    sys.exit(main())
