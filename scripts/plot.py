#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turn the benchmarks' CSV files (--csv FILE) into PNG figures like the
MPI-ACC and TEMPI papers' ones.  The kind of each file is recognised from
its column names:

  stencil2d        GFLOPS of each run (manual staging, mpiacc, cuda-aware, with and
                   without overlap), per precision
  scaling          Stencil2D scaling (scripts/stencil-scaling.sh): GFLOPS and
                   parallel efficiency against GPUs, one column per weak size /
                   strong total and precision, one line per series, the issue-32
                   targets dashed
  halo3d_scaling   halo3d scaling (scripts/halo3d-scaling.sh): time per iteration and
                   the exposed exchange's share of it against GPUs (target 10 %)
  pack (bench/pack) packed GB/s against block size, one panel per object size;
                   below, when the file has the roofline rows, the fraction of the
                   roofline (sector bytes at the device copy bandwidth) the
                   kernel-only time reaches, for every group and type; and, when
                   it has the pattern-floor rows (method kmin), kdev/kmin: the
                   kernel-only time over that of the fastest hand-specialised
                   kernel for the same 1-D strided pattern
  pingpong         one-way time: mpiacc vs a plain CUDA-aware program and host
                   contiguous, vectors by block (older files: against block size)
  ooo, ooo_cuda    MPI-ACC Fig 7: total time of simple / advanced / mpiacc, and the
                   ideal out-of-order schedule (one link, two links) when the file has it
  queue_semantics  MPI-ACC Fig 8: send time against the write before it
  host_overhead    interposition overhead per message size

usage: scripts/plot.py [-o OUTDIR] FILE.csv...
Each FILE.csv gives OUTDIR/FILE.png (OUTDIR defaults to the CSV's directory).
Needs matplotlib (pip install matplotlib).
"""
import argparse
import csv
import os
import sys


def load(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f)]


def kind_of(cols):
    c = set(cols)
    if {"series", "efficiency", "ranks", "iter_us_median"} <= c:
        return "halo3d_scaling"
    if {"series", "efficiency", "ranks", "gflops_median"} <= c:
        return "scaling"
    if {"gflops_median", "variant", "precision"} <= c:
        return "stencil2d"
    if {"group", "method", "GBps"} <= c:
        return "pack"
    if {"block", "host_us"} <= c and c & {"mpiacc_us", "default_us", "direct_us"}:
        return "pingpong"
    if {"simple_ms", "advanced_ms", "mpiacc_ms"} <= c or {"simple_us", "advanced_us", "mpiacc_us"} <= c:
        return "ooo"
    if {"write_bytes", "send_inorder_ms", "send_ooo_ms"} <= c:
        return "queue_semantics"
    if {"plain_us", "mpiacc_us", "median_ratio"} <= c:
        return "host_overhead"
    return None


def human(b):
    b = int(float(b))
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d %s" % (b >> shift, unit)
    return "%d B" % b


def plot_stencil2d(plt, rows, title):
    precs = [p for p in ("sp", "dp") if any(r["precision"] == p for r in rows)]
    name = lambda r: r["variant"] + ("+overlap" if r.get("overlap") == "1" else "")
    runs = []
    for r in rows:
        if name(r) not in runs:
            runs.append(name(r))
    fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(runs)), 4))
    width = 0.8 / max(1, len(runs))
    for i, v in enumerate(runs):
        med, lo, hi = [], [], []
        for p in precs:
            r = next((r for r in rows if r["precision"] == p and name(r) == v), None)
            m = float(r["gflops_median"]) if r else 0.0
            med.append(m)
            lo.append(m - float(r["gflops_min"]) if r else 0.0)
            hi.append(float(r["gflops_max"]) - m if r else 0.0)
        xs = [k + (i - (len(runs) - 1) / 2) * width for k in range(len(precs))]
        ax.bar(xs, med, width, yerr=[lo, hi], capsize=4, label=v)
    r0 = rows[0]
    ax.set_xticks(range(len(precs)))
    ax.set_xticklabels(["single" if p == "sp" else "double" for p in precs])
    ax.set_ylabel("GFLOPS (median; bars: min-max)")
    ax.set_title("%s: %s, %s ranks, %sx%s per rank, h=%s" % (title, r0["backend"], r0["ranks"], r0["rows"],
                                                             r0["cols"], r0["h"]))
    ax.legend(fontsize="small")
    return fig


SERIES = ["manual", "mpiacc", "mpiacc-direct", "mpiacc+overlap", "cuda-aware/ucx", "cuda-aware/ucx+overlap",
          "cuda-aware/impi", "cuda-aware/impi+overlap"]
STENCIL_TARGETS = {("weak", 4096): 0.90, ("weak", 1024): 0.75, ("strong", 16384): 0.80}


def series_style(s):
    """mpiacc solid, cuda-aware dashed (Intel MPI dash-dot), manual dotted; overlap with filled squares."""
    ls = ":" if s == "manual" else "-" if s.startswith("mpiacc") else "-." if "impi" in s else "--"
    return ls, "s" if s.endswith("+overlap") else "o"


def scaling_panels(rows):
    panels = []
    for r in rows:
        key = (r.get("scaling", "weak"), int(r["size"]), r["precision"])
        if key not in panels:
            panels.append(key)
    return panels


def gpus_axis(axes, xs):
    """The GPU counts xs on a scaling column's panels: a log2 x axis with ticks at xs only, as plain numbers."""
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.minorticks_off()
        ax.grid(True, alpha=0.3)


def plot_scaling(plt, rows, title):
    """Top row: total GFLOPS against GPUs; bottom row: efficiency (weak: GFLOPS(n) / (n GFLOPS(1)); strong:
    T(1) / (n T(n))).  One column per (weak per-GPU size or strong total, precision), one line per series."""
    panels = scaling_panels(rows)
    series = [s for s in SERIES if any(r["series"] == s for r in rows)]
    fig, axes = plt.subplots(2, len(panels), figsize=(4 * len(panels), 7.5), squeeze=False)
    for col, (scaling, size, prec) in enumerate(panels):
        top, bot = axes[0][col], axes[1][col]
        sel = [r for r in rows if r.get("scaling", "weak") == scaling and int(r["size"]) == size and r["precision"] == prec]
        xs = sorted({int(r["ranks"]) for r in sel})
        for s in series:
            pts = sorted((int(r["ranks"]), float(r["gflops_median"]), float(r["efficiency"]) if r["efficiency"] else None)
                         for r in sel if r["series"] == s)
            if not pts:
                continue
            ls, mk = series_style(s)
            line = top.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=ls, marker=mk, label=s)[0]
            eff = [p for p in pts if p[2] is not None]
            bot.plot([p[0] for p in eff], [p[2] for p in eff], linestyle=ls, marker=mk, color=line.get_color(), label=s)
        goal = STENCIL_TARGETS.get((scaling, size))
        if goal:
            bot.axhline(goal, color="red", linewidth=0.8, linestyle="--", label="target %.0f %%" % (100 * goal))
        bot.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
        gpus_axis((top, bot), xs)
        bot.set_ylim(0, 1.1)
        what = "%dx%d per GPU" % (size, size) if scaling == "weak" else "%dx%d in total" % (size, size)
        top.set_title("%s: %s, %s %s" % (title, scaling, what, "single" if prec == "sp" else "double"), fontsize="medium")
        top.set_ylabel("GFLOPS (median, all GPUs)")
        bot.set_ylabel("weak: GFLOPS(n)/(n GFLOPS(1))" if scaling == "weak" else "strong: T(1)/(n T(n))")
        bot.set_xlabel("GPUs (one rank each)")
    axes[0][0].legend(fontsize="x-small")
    axes[1][0].legend(fontsize="x-small")
    return fig


def plot_halo3d_scaling(plt, rows, title):
    """Top: time per iteration against GPUs; bottom: exposed exchange / iteration (target: 10 %)."""
    panels = scaling_panels(rows)
    series = [s for s in SERIES if any(r["series"] == s for r in rows)]
    fig, axes = plt.subplots(2, len(panels), figsize=(4.5 * len(panels), 7.5), squeeze=False)
    for col, (scaling, size, prec) in enumerate(panels):
        top, bot = axes[0][col], axes[1][col]
        sel = [r for r in rows if int(r["size"]) == size and r["precision"] == prec]
        xs = sorted({int(r["ranks"]) for r in sel})
        for s in series:
            pts = sorted((int(r["ranks"]), float(r["iter_us_median"]), float(r["exposed_frac"] or 0))
                         for r in sel if r["series"] == s)
            if not pts:
                continue
            ls, mk = series_style(s)
            line = top.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=ls, marker=mk, label=s)[0]
            bot.plot([p[0] for p in pts], [max(0.0, p[2]) for p in pts], linestyle=ls, marker=mk,
                     color=line.get_color(), label=s)
        bot.axhline(0.10, color="red", linewidth=0.8, linestyle="--", label="target 10 %")
        gpus_axis((top, bot), xs)
        top.set_title("%s: %d^3 per GPU, %s" % (title, size, "single" if prec == "sp" else "double"), fontsize="medium")
        top.set_ylabel("us per iteration (median)")
        bot.set_ylabel("exposed exchange / iteration")
        bot.set_xlabel("GPUs (one rank each)")
    axes[0][0].legend(fontsize="x-small")
    axes[1][0].legend(fontsize="x-small")
    return fig


def roof_fractions(rows):
    """{(group, type, bytes, block): roof_us / kdev_us} from a pack CSV."""
    key = lambda r: (r["group"], r["type"], int(r["bytes"]), int(r["block"]))
    roof = {key(r): float(r["us"]) for r in rows if r["method"] == "roof"}
    return {key(r): roof[key(r)] / float(r["us"]) for r in rows
            if r["method"] == "kdev" and key(r) in roof and float(r["us"]) > 0}


def floor_ratios(rows):
    """{(group, type, bytes, block): kdev_us / kmin_us} from a pack CSV ({} without kmin rows)."""
    key = lambda r: (r["group"], r["type"], int(r["bytes"]), int(r["block"]))
    kmin = {key(r): float(r["us"]) for r in rows if r["method"] == "kmin" and float(r["us"]) > 0}
    return {key(r): float(r["us"]) / kmin[key(r)] for r in rows if r["method"] == "kdev" and key(r) in kmin}


def plot_series(ax, values):
    """values {(group, type, bytes, block): y}: one line per 2D (type, size), Jenkins' types as points."""
    series = {}
    for (g, t, b, blk), y in values.items():
        series.setdefault((g, t, b), []).append((blk, y))
    for (g, t, b), pts in sorted(series.items()):
        pts.sort()
        if g == "2D":
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label="%s %s" % (t, human(b)))
        else:  # Jenkins' types: one point each, at their block label
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker="x")
            for p in pts:
                ax.annotate(t, p, fontsize="xx-small", rotation=20)


def sweep_axes(ax, xlabel, ylabel, title, ylog=True):
    """Axes of a sweep over sizes: x in powers of two, y logarithmic unless ylog is False,
    grid lines at every tick; the same look on every size sweep's panel."""
    ax.set_xscale("log", base=2)
    if ylog:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)


def ratio_panel(ax, series, ref, ylabel, title, ylog):
    """A per-block-size ratio panel (one line per (group, type, size)) with
    a reference line at ref."""
    plot_series(ax, series)
    ax.axhline(ref, color="black", linewidth=0.8)
    sweep_axes(ax, "contiguous block (B)", ylabel, title, ylog)
    ax.legend(fontsize="x-small")


def plot_roof(ax, fr, title):
    """Fraction of the roofline against block size."""
    ratio_panel(ax, {k: 100 * f for k, f in fr.items()}, 100, "% of roofline (kernel-only)",
                "%s: sector bytes / copy bandwidth over kdev" % title, False)


def plot_floor(ax, fl, title):
    """kdev / kmin against block size."""
    ratio_panel(ax, fl, 1, "kdev / kmin (kernel-only)", "%s: mpiacc kernel over the pattern floor" % title, True)


def plot_pack(plt, rows, title):
    below = []  # the second row's panels: (function, data)
    fr, fl = roof_fractions(rows), floor_ratios(rows)
    if fr:
        below.append((plot_roof, fr))
    if fl:
        below.append((plot_floor, fl))
    rows = [r for r in rows if r["group"] == "2D" and r["type"] == "vector"]
    sizes = sorted({int(r["bytes"]) for r in rows})
    methods = ["dev", "kdev", "1shot", "k1shot", "dma", "d2h", "2D", "2Dh", "blk", "host", "kmin"]
    nr = 2 if below else 1
    nc = max(1, len(sizes), len(below))
    fig, axes = plt.subplots(nr, nc, figsize=(5 * nc, 4 * nr), squeeze=False)
    for ax in axes[0][len(sizes):]:
        ax.remove()
    if below:
        for ax in axes[1][len(below):]:
            ax.remove()
        for ax, (fn, data) in zip(axes[1], below):
            fn(ax, data, title)
    for ax, size in zip(axes[0], sizes):
        for m in methods:
            pts = sorted((int(r["block"]), float(r["GBps"])) for r in rows
                         if int(r["bytes"]) == size and r["method"] == m)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=m)
        sweep_axes(ax, "contiguous block (B), pitch 512 B", "packed GB/s", "%s: 2D vector, %s" % (title, human(size)))
    if sizes:
        axes[0][0].legend(fontsize="small")
    return fig


def plot_pingpong_transport(plt, rows, title):
    # bench/pingpong since issue 29: kind (contig / vector), bytes, block, mpiacc_us, plain_us, host_us
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    cont = sorted((r for r in rows if r["kind"] == "contig"), key=lambda r: int(r["bytes"]))
    for col, lab, style in (("mpiacc_us", "mpiacc", "-"), ("plain_us", "plain CUDA-aware MPI", "-."),
                            ("host_us", "host contiguous", "--"),
                            ("uva_us", "plain program through mpiacc (MPIACC_UVA=1)", ":")):
        pts = [(int(r["bytes"]), float(r[col])) for r in cont if r.get(col)]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle=style, label=lab)
    for blk in sorted({int(r["block"]) for r in rows if r["kind"] == "vector"}):
        pts = sorted((int(r["bytes"]), float(r["mpiacc_us"])) for r in rows if r["kind"] == "vector" and
                     int(r["block"]) == blk)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="x", linestyle=":", label="mpiacc, vector of %d B" % blk)
    sweep_axes(ax, "message (B)", "one-way time (us)", "%s: device ping-pong" % title)
    ax.legend(fontsize="x-small")
    return fig


def plot_pingpong(plt, rows, title):
    if "kind" in rows[0]:
        return plot_pingpong_transport(plt, rows, title)
    sizes = sorted({int(r["bytes"]) for r in rows})
    # older files: mpiacc_us; now: default_us and direct_us (empty when not measured)
    series = [(c, lab) for c, lab in (("mpiacc_us", "mpiacc"), ("default_us", "default"), ("direct_us", "direct"))
              if c in rows[0] and any(r[c] for r in rows)]
    styles = {"mpiacc": "-", "default": "-", "direct": "-."}
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for size in sizes:
        rs = sorted((r for r in rows if int(r["bytes"]) == size), key=lambda r: int(r["block"]))
        color = None
        for col, lab in series:
            pts = [(int(r["block"]), float(r[col])) for r in rs if r[col]]
            if not pts:
                continue
            proto = {r["direct_protocol"] for r in rs if r.get("direct_protocol")} if col == "direct_us" else set()
            name = "%s%s, %s" % (lab, " (%s)" % "/".join(sorted(proto)) if proto else "", human(size))
            line = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle=styles[lab],
                           color=color, label=name)
            color = line[0].get_color()
        ax.plot([int(r["block"]) for r in rs], [float(r["host_us"]) for r in rs], linestyle="--", color=color,
                label="host contiguous, %s" % human(size))
    sweep_axes(ax, "contiguous block (B), pitch 512 B", "one-way time (us)",
               "%s: device ping-pong of 2D vectors" % title)
    ax.legend(fontsize="x-small")
    return fig


def plot_ooo(plt, rows, title):
    ms = "simple_ms" in rows[0]
    unit = "ms" if ms else "us"
    sweeps = []
    for r in rows:
        if r["sweep"] not in sweeps:
            sweeps.append(r["sweep"])
    fig, axes = plt.subplots(1, len(sweeps), figsize=(5.5 * len(sweeps), 4), squeeze=False)
    for ax, sw in zip(axes[0], sweeps):
        rs = [r for r in rows if r["sweep"] == sw]
        if ms:
            xs = [float(r["x"]) for r in rs]
            xl = "K0 / K1" if sw == "k0" else "size sent after K1 / size sent after K0"
        elif sw == "K0":
            xs = [float(r["k0_us"]) / float(r["k1_us"]) for r in rs]
            xl = "K0 / K1"
        else:
            xs = [float(r["bytes_b"]) / float(r["bytes_a"]) for r in rs]
            xl = "bytes sent after K1 / bytes sent after K0"
        for v in ("simple", "advanced", "mpiacc"):
            ax.plot(xs, [float(r["%s_%s" % (v, unit)]) for r in rs], marker="o", label=v)
        # the ideal out-of-order schedule from the parts measured alone (bench/ooo_model.h), when the file has it
        for col, lab in (("ideal_one_link", "ideal, one link"), ("ideal_two_links", "ideal, two links")):
            if "%s_%s" % (col, unit) in rs[0]:
                ax.plot(xs, [float(r["%s_%s" % (col, unit)]) for r in rs], linestyle="--", label=lab)
        ax.set_xlabel(xl)
        ax.set_ylabel("total time (%s, median)" % unit)
        ax.set_title("%s: sweep %s" % (title, sw))
        ax.grid(True, alpha=0.3)
        ax.legend()
    return fig


def plot_queue_semantics(plt, rows, title):
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [int(r["write_bytes"]) / 2**20 for r in rows]
    for col, lab in (("send_inorder_ms", "send, in-order queue"), ("send_ooo_ms", "send, out-of-order queue"),
                     ("send_alone_ms", "send alone"), ("write_ms", "write alone")):
        ax.plot(xs, [float(r[col]) for r in rows], marker="o", label=lab)
    ax.set_xlabel("bytes written before the send (MiB)")
    ax.set_ylabel("time (ms, median)")
    ax.set_title("%s: message %s" % (title, human(rows[0]["msg_bytes"])))
    ax.grid(True, alpha=0.3)
    ax.legend()
    return fig


def plot_host_overhead(plt, rows, title):
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = ["%s %s" % (human(r["bytes"]), r["datatype"]) for r in rows]
    ax.bar(range(len(rows)), [(float(r["median_ratio"]) - 1) * 100 for r in rows])
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylabel("mpiacc over plain MPICH (%, median ratio)")
    ax.set_title("%s: interposition overhead" % title)
    fig.tight_layout()
    return fig


PLOTS = {"stencil2d": plot_stencil2d, "scaling": plot_scaling, "halo3d_scaling": plot_halo3d_scaling, "pack": plot_pack, "pingpong": plot_pingpong, "ooo": plot_ooo,
         "queue_semantics": plot_queue_semantics, "host_overhead": plot_host_overhead}


def main():
    ap = argparse.ArgumentParser(description="Plot the benchmarks' CSV files (see the module docstring).")
    ap.add_argument("-o", "--outdir", help="directory of the PNG files (default: next to each CSV)")
    ap.add_argument("csv", nargs="+", help="CSV files written with a benchmark's --csv")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("plot.py: matplotlib is not installed; install it with\n"
                         "    python3 -m pip install --user matplotlib\n"
                         "(or in a virtual environment: python3 -m venv v && v/bin/pip install matplotlib)\n")
        return 2
    status = 0
    for path in args.csv:
        rows = load(path)
        kind = kind_of(rows[0].keys()) if rows else None
        if not kind:
            sys.stderr.write("plot.py: %s: not a CSV file of a known benchmark\n" % path)
            status = 1
            continue
        base = os.path.splitext(os.path.basename(path))[0]
        fig = PLOTS[kind](plt, rows, base)
        fig.tight_layout()
        out = os.path.join(args.outdir or os.path.dirname(os.path.abspath(path)), base + ".png")
        fig.savefig(out, dpi=100)
        plt.close(fig)
        print("%s (%s) -> %s" % (path, kind, out))
    return status


if __name__ == "__main__":
    sys.exit(main())
