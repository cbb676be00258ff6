#!/usr/bin/env python3
"""Plot bench/pack's CSV: packed GB/s against block size, one panel per
object size, one line per method (2D vector rows).  Needs matplotlib.

    python3 bench/plot_pack.py pack.csv pack.png
"""
import csv
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_pack.py PACK.csv OUT.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_pack.py: matplotlib is not installed (pip install matplotlib)")
    rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["group"] == "2D" and r["type"] == "vector"]
    sizes = sorted({int(r["bytes"]) for r in rows})
    methods = ["dev", "kdev", "1shot", "k1shot", "dma", "d2h", "2D", "2Dh", "blk", "host"]
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        for m in methods:
            pts = sorted((int(r["block"]), float(r["GBps"])) for r in rows if int(r["bytes"]) == size and r["method"] == m)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=m)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("contiguous block (B), pitch 512 B")
        ax.set_ylabel("packed GB/s")
        ax.set_title("2D vector, %s" % (f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"))
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)
    print("wrote", sys.argv[2])


if __name__ == "__main__":
    main()
