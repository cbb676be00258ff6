#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks src/interpose/mpi_calls.txt (the description of every MPI function
mpiacc defines) against MPICH's header, the generated files, the hand-written
ones and libmpiacc.so:
  - docs/mpi-calls.md is what scripts/gen_mpi_calls.py makes of the
    description and the header, and README.md links to it;
  - every function of the header taking a buffer and a datatype
    (scripts/mpi_buffer_calls.py) is described;
  - the build's generated files (--gen-dir) are what the generator makes now;
  - the MPI_*/MPIX_* functions libmpiacc.so defines (nm -D) are exactly the
    described ones;
  - a function described `hand` is defined in the file its line names, and a
    generated one in no hand-written file of src/interpose;
  - a "refused" row's functions are refusal wrappers, a "handled" row's are not.
--pending-layer TEXT: rows whose `where` column names TEXT may lack their
symbols (a layer on another branch, until it is merged)."""
import argparse
import glob
import os
import re
import subprocess
import sys


def defines(path):
    return set(re.findall(r"^(?:MPIACC_INTERPOSE_EXPORT\s+)?int\s+(MPIX?_\w+)\s*\([^;]*?\)\s*\{",
                          open(path).read(), flags=re.M | re.S))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--gen-dir", required=True, help="the build's generated entry points (src/interpose/gen)")
    ap.add_argument("--pending-layer", action="append", default=[])
    o = ap.parse_args()
    sys.dont_write_bytecode = True  # nothing written into the source tree
    sys.path.insert(0, os.path.join(o.root, "scripts"))
    import gen_mpi_calls as gen
    from mpi_buffer_calls import calls
    bad = []
    lines, text = gen.load(o.header, os.path.join(o.root, "src", "interpose", "mpi_calls.txt"))
    forms = {f.name: f for line in lines for f in line.forms_}

    page = os.path.join(o.root, "docs", "mpi-calls.md")
    if not os.path.exists(page) or open(page).read() != gen.docs(lines, text):
        bad.append("docs/mpi-calls.md is out of date: scripts/gen_mpi_calls.py --header %s --docs docs/mpi-calls.md"
                   % o.header)
    if "docs/mpi-calls.md" not in open(os.path.join(o.root, "README.md")).read():
        bad.append("README.md does not link docs/mpi-calls.md")

    listed = calls(text)
    for n in listed:
        if n not in forms:
            bad.append("%s takes a buffer and a datatype but src/interpose/mpi_calls.txt does not describe it" % n)

    for name, content in gen.sources(lines).items():
        path = os.path.join(o.gen_dir, name)
        if not os.path.exists(path) or open(path).read() != content:
            bad.append("%s is not what the description makes now (rebuild)" % path)

    nm = subprocess.run(["nm", "-D", "--defined-only", o.lib], capture_output=True, text=True, check=True).stdout
    exported = set(re.findall(r"\s[TW]\s+(MPIX?_\w+)$", nm, flags=re.M))
    for n in sorted(exported - set(forms)):
        bad.append("%s is defined by %s but not described in src/interpose/mpi_calls.txt" % (n, o.lib))

    hand_files = [p for p in glob.glob(os.path.join(o.root, "src", "interpose", "*.c"))]
    by_hand = {os.path.basename(p): defines(p) for p in hand_files}
    refusers = defines(os.path.join(o.gen_dir, "refuse_gen.c")) if os.path.exists(
        os.path.join(o.gen_dir, "refuse_gen.c")) else set()
    pending = 0
    for buffers, group, names, status, where in gen.rows(lines, text):
        for n in names:
            f = forms[n]
            if n not in exported:
                if any(p in where for p in o.pending_layer):
                    pending += 1
                else:
                    bad.append("%s is described but not defined by %s" % (n, o.lib))
            if f.line.family == "hand":
                fname = f.line.keys["file"]
                if n not in by_hand.get(fname, set()):
                    bad.append("%s (%s) is described as written by hand in src/interpose/%s, which does not define it"
                               % (n, f.line.where, fname))
            else:
                for fname, names_there in sorted(by_hand.items()):
                    if n in names_there:
                        bad.append("%s is generated (%s) and also written in src/interpose/%s" % (n, f.line.where,
                                                                                                  fname))
            if status == "refused" and "refuse.c" in where and n not in refusers:
                bad.append("%s is marked refused but has no refusal wrapper" % n)
            if status == "handled" and n in refusers:
                bad.append("%s is marked handled but is a refusal wrapper" % n)
    for b in bad:
        print("FAIL: " + b)
    families = {}
    for f in forms.values():
        families[f.line.family] = families.get(f.line.family, 0) + 1
    print("%d functions described (%s), %d in the header's buffer list, %d exported, %d pending (%s)"
          % (len(forms), ", ".join("%s %d" % kv for kv in sorted(families.items())), len(listed), len(exported),
             pending, ", ".join(o.pending_layer) or "none"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
