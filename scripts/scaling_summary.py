#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Merge the raw CSV files of scripts/stencil-scaling.sh or scripts/halo3d-scaling.sh into one CSV with the
scaling efficiencies and the mpiacc / cuda-aware ratios, and write a Markdown summary with the issue-32 targets.

  scaling_summary.py stencil --raw OUT/raw --gpus "1 2 4" --weak "1024 4096 8192" --strong 16384 \\
      --csv OUT/stencil_scaling.csv --md OUT/stencil_summary.md
  scaling_summary.py halo3d --raw OUT/raw --gpus "1 2 4" --weak 256 --csv OUT/halo3d_scaling.csv --md OUT/halo3d_summary.md

Raw files: raw/<example>_<point>_<stack>.csv, stack mpiacc (stencil2d/halo3d: manual, mpiacc), ucx or impi
(the cuda-aware executable on MPICH + CUDA UCX or on Intel MPI).  Series: manual, mpiacc, mpiacc+overlap,
cuda-aware/ucx, cuda-aware/ucx+overlap, cuda-aware/impi, cuda-aware/impi+overlap.

Efficiency: weak = rate(n) / (n rate(1)) (stencil: GFLOPS; halo3d: 1 / iteration time), strong = T(1) / (n T(n))
with T the time per iteration; both against the same series, precision and size at 1 GPU.  vs_cuda_aware: the
series' rate over cuda-aware/ucx's with the same overlap setting at the same point (mpiacc series only; above 1:
mpiacc faster); vs_cuda_aware_impi likewise against Intel MPI.  Exit status 1 when a run did not validate.
"""
import argparse
import csv
import glob
import math
import os

import sys

ORDER = ["manual", "mpiacc", "mpiacc+overlap", "cuda-aware/ucx", "cuda-aware/ucx+overlap", "cuda-aware/impi",
         "cuda-aware/impi+overlap"]
TARGETS = {"weak": {4096: 0.90, 1024: 0.75}, "strong": {16384: 0.80}}


def grid_of(n):
    p = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return p, n // p


def series_of(stack, variant, overlap):
    if variant in ("manual", "mpiacc"):
        name = variant
    else:
        name = "cuda-aware/%s" % ("impi" if stack == "impi" else "ucx")
    return name + ("+overlap" if overlap == "1" else "")


def load(raw, example):
    rows = []
    for path in sorted(glob.glob(os.path.join(raw, "%s_*.csv" % example))):
        stack = os.path.splitext(path)[0].rsplit("_", 1)[1]
        for r in csv.DictReader(open(path, newline="")):
            r["series"] = series_of(stack, r["variant"], r["overlap"])
            r["stack"] = stack
            if stack == "impi" and not r.get("mpi", "").startswith("impi"):
                sys.stderr.write("scaling_summary.py: %s: the MPI library is '%s', not Intel MPI (LD_LIBRARY_PATH?)\n"
                                 % (path, r.get("mpi")))
            rows.append(r)
    return rows


def fnum(x):
    return float(x) if x not in (None, "") else None


def stencil_points(rows, gpus, weak, strong):
    """(scaling, size, n) -> rows of that point."""
    out = []
    for r in rows:
        n, rr, cc = int(r["ranks"]), int(r["rows"]), int(r["cols"])
        if rr == cc and rr in weak and n in gpus:
            out.append(dict(r, scaling="weak", size=str(rr)))
        for s in strong:
            p, q = grid_of(n)
            if n in gpus and rr == s // p and cc == s // q:
                out.append(dict(r, scaling="strong", size=str(s)))
    return out


def add_metrics(rows, example):
    key = lambda r: (r["scaling"], r["size"], r["series"], r["precision"], r.get("method", ""))
    one = {key(r): r for r in rows if r["ranks"] == "1"}
    it = "iter_us" if example == "stencil" else "iter_us_median"
    for r in rows:
        base, n = one.get(key(r)), int(r["ranks"])
        r["efficiency"] = ""
        if base:
            if example == "stencil" and r["scaling"] == "weak":
                r["efficiency"] = "%.4f" % (float(r["gflops_median"]) / (n * float(base["gflops_median"])))
            else:
                r["efficiency"] = "%.4f" % (float(base[it]) / (n * float(r[it])))
        r["exposed_frac"] = "%.4f" % (float(r["exposed_us"]) / float(r[it])) if float(r[it]) > 0 else ""
        for stack, col in (("ucx", "vs_cuda_aware"), ("impi", "vs_cuda_aware_impi")):
            r[col] = ""
            if not r["series"].startswith("mpiacc"):
                continue
            peer = "cuda-aware/%s%s" % (stack, "+overlap" if r["series"].endswith("+overlap") else "")
            for p in rows:
                if (p["series"] == peer and p["scaling"] == r["scaling"] and p["size"] == r["size"] and
                        p["ranks"] == r["ranks"] and p["precision"] == r["precision"] and
                        p.get("method", "") == r.get("method", "")):
                    r[col] = "%.4f" % (float(p[it]) / float(r[it]))


def sort_rows(rows):
    o = {s: i for i, s in enumerate(ORDER)}
    rows.sort(key=lambda r: (r["scaling"] != "weak", int(r["size"]), r["precision"] != "sp",
                             r.get("method", ""), o.get(r["series"], 99), int(r["ranks"])))


def timeline(r, it):
    return ("iteration %.1f us = kernels %.1f us + exposed exchange %.1f us; the exchange alone %.1f us, %.0f %% of it "
            "hidden" % (float(r[it]), float(r["kernel_us"]), float(r["exposed_us"]), float(r["exch_us"]),
                        100 * float(r["hidden"])))


def markdown(example, rows, gpus):
    it = "iter_us" if example == "stencil" else "iter_us_median"
    out = []
    mpis = sorted({r["mpi"] for r in rows})
    out.append("MPI libraries: %s; GPU counts: %s\n" % (", ".join(mpis), " ".join(str(g) for g in gpus)))
    groups = []
    for r in rows:
        g = (r["scaling"], r["size"], r["precision"], r.get("method", ""))
        if g not in groups:
            groups.append(g)
    for g in groups:
        sel = [r for r in rows if (r["scaling"], r["size"], r["precision"], r.get("method", "")) == g]
        ns = sorted({int(r["ranks"]) for r in sel})
        what = ("%s scaling, %s^%s %s" % (g[0], g[1], "2 per GPU" if example == "stencil" and g[0] == "weak" else
                                          "2 in total" if example == "stencil" else "3 per GPU", g[2].upper()))
        if g[3]:
            what += ", method %s" % g[3]
        out.append("### %s\n" % what)
        rate = "GFLOPS" if example == "stencil" else "us/iter"
        head = ["series"] + ["%s @%d" % (rate, n) for n in ns] + ["eff @%d" % n for n in ns if n > 1] + \
               ["vs cuda-aware/ucx @%d" % ns[-1], "timeline @%d: iter / kernel / exch / exposed us, hidden" % ns[-1]]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for s in ORDER:
            rs = {int(r["ranks"]): r for r in sel if r["series"] == s}
            if not rs:
                continue
            cells = [s]
            for n in ns:
                r = rs.get(n)
                cells.append("" if not r else "%.1f" % float(r["gflops_median"] if example == "stencil" else r[it]))
            for n in ns:
                if n > 1:
                    r = rs.get(n)
                    cells.append("%.0f %%" % (100 * float(r["efficiency"])) if r and r["efficiency"] else "")
            last = rs.get(ns[-1])
            cells.append("%.3fx" % float(last["vs_cuda_aware"]) if last and last["vs_cuda_aware"] else "")
            cells.append("%.1f / %.1f / %.1f / %.1f, %.0f %%" % (float(last[it]), float(last["kernel_us"]),
                         float(last["exch_us"]), float(last["exposed_us"]), 100 * float(last["hidden"]))
                         if last else "")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out


def targets(example, rows, gpus):
    """Lines 'PASS/FAIL/MISSING target: measured' with the timeline of what limits each."""
    it = "iter_us" if example == "stencil" else "iter_us_median"
    nmax = max(gpus)
    out = ["## Targets (issue 32; %d GPUs)\n" % nmax]
    if example == "stencil":
        for scaling, sizes in TARGETS.items():
            for size, goal in sizes.items():
                for prec in ("sp", "dp"):
                    cand = [r for r in rows if r["scaling"] == scaling and r["size"] == str(size) and
                            r["precision"] == prec and int(r["ranks"]) == nmax and r["series"].startswith("mpiacc")
                            and r["efficiency"]]
                    if not cand:
                        out.append("- MISSING %s %d^2 %s: efficiency >= %.0f %% (no run)" % (scaling, size, prec, 100 * goal))
                        continue
                    best = max(cand, key=lambda r: float(r["efficiency"]))
                    e = float(best["efficiency"])
                    out.append("- %s %s %d^2 %s, %s: efficiency %.0f %% (target >= %.0f %%)%s" % (
                        "PASS" if e >= goal else "FAIL", scaling, size, prec.upper(), best["series"], 100 * e,
                        100 * goal, "" if e >= goal else "; " + timeline(best, it)))
    else:
        for prec in ("sp", "dp"):
            cand = [r for r in rows if r["size"] == "256" and r["precision"] == prec and int(r["ranks"]) == nmax and
                    r["series"].startswith("mpiacc")]
            if not cand:
                out.append("- MISSING 256^3 %s on %d GPUs: exposed exchange <= 10 %% of an iteration (no run)" % (prec, nmax))
                continue
            best = min(cand, key=lambda r: float(r["exposed_frac"] or 1))
            f = float(best["exposed_frac"])
            out.append("- %s 256^3 %s, %s %s: exposed exchange %.0f %% of an iteration (target <= 10 %%); %s" % (
                "PASS" if f <= 0.10 else "FAIL", prec.upper(), best.get("method", ""), best["series"], 100 * f,
                timeline(best, it)))
    worst = {}
    for r in rows:
        for col, peer in (("vs_cuda_aware", "ucx"), ("vs_cuda_aware_impi", "impi")):
            if r[col] and (peer not in worst or float(r[col]) < float(worst[peer][col])):
                worst[peer] = r
    for peer, col in (("ucx", "vs_cuda_aware"), ("impi", "vs_cuda_aware_impi")):
        if peer not in worst:
            out.append("- MISSING mpiacc >= 1.0x cuda-aware on %s at every point (no %s runs)" %
                       ("MPICH + UCX" if peer == "ucx" else "Intel MPI", peer))
            continue
        r = worst[peer]
        v = float(r[col])
        out.append("- %s mpiacc >= 1.0x cuda-aware on %s at every point (same overlap setting): lowest %.3fx (%s, %s %s "
                   "%s, %s GPUs)%s" % ("PASS" if v >= 1.0 else "FAIL", "MPICH + UCX" if peer == "ucx" else "Intel MPI",
                                       v, r["series"], r["scaling"], r["size"], r["precision"].upper(), r["ranks"],
                                       "" if v >= 1.0 else "; mpiacc " + timeline(r, it)))
    bad = [r for r in rows if r["errors"] not in ("0", "")]
    out.append("- %s every run validated (%d rows, %d with errors)" % ("PASS" if not bad else "FAIL", len(rows), len(bad)))
    return out, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("example", choices=("stencil", "halo3d"))
    ap.add_argument("--raw", required=True)
    ap.add_argument("--gpus", default="1 2 4")
    ap.add_argument("--weak", default="")
    ap.add_argument("--strong", default="")
    ap.add_argument("--csv", required=True)
    ap.add_argument("--md")
    a = ap.parse_args()
    gpus = [int(x) for x in a.gpus.split()]
    weak = [int(x) for x in a.weak.split()]
    strong = [int(x) for x in a.strong.split()]
    rows = load(a.raw, a.example)
    if not rows:
        sys.exit("scaling_summary.py: no %s_*.csv under %s" % (a.example, a.raw))
    if a.example == "stencil":
        rows = stencil_points(rows, gpus, weak, strong)
    else:
        rows = [dict(r, scaling="weak", size=r["nx"]) for r in rows
                if r["nx"] == r["ny"] == r["nz"] and int(r["nx"]) in weak and int(r["ranks"]) in gpus]
    add_metrics(rows, a.example)
    sort_rows(rows)
    if a.example == "stencil":
        cols = ["scaling", "size", "series", "precision", "ranks", "gpus", "msize", "rows", "cols", "h", "iters",
                "passes", "gflops_median", "gflops_min", "gflops_max", "iter_us", "kernel_us", "exch_us", "exposed_us",
                "hidden", "exposed_frac", "efficiency", "vs_cuda_aware", "vs_cuda_aware_impi", "errors", "mpi"]
    else:
        cols = ["scaling", "size", "series", "method", "precision", "ranks", "dims", "periodic", "radius",
                "face_bytes", "iters", "passes", "iter_us_median", "iter_us_min", "iter_us_max", "kernel_us", "exch_us",
                "exposed_us", "hidden", "exposed_frac", "efficiency", "vs_cuda_aware", "vs_cuda_aware_impi", "errors",
                "mpi"]
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    md = ["# %s scaling\n" % ("Stencil2D" if a.example == "stencil" else "halo3d")] + markdown(a.example, rows, gpus)
    tl, bad = targets(a.example, rows, gpus)
    md += tl
    text = "\n".join(md) + "\n"
    if a.md:
        open(a.md, "w").write(text)
    print(text)
    print("-> %s%s" % (a.csv, ", " + a.md if a.md else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
