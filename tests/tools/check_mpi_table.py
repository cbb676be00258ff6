#!/usr/bin/env python3
"""Checks README.md's table of MPI functions taking a buffer and a datatype
against MPICH's header and libmpiacc.so:
  - every function of the header's list (scripts/mpi_buffer_calls.py) has a row;
  - the table, src/interpose/refuse_gen.c and tests/core/refuse_cases.h are what
    scripts/gen_mpi_calls.py makes of the header (statuses live there);
  - every function in the table is defined (exported) by the library (nm -D);
  - a "refused" row's functions are refusal wrappers, a "handled" row's are not.
--pending-layer TEXT: rows whose `where` column names TEXT may lack their
symbols (a layer on another branch, until it is merged)."""
import argparse
import os
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--pending-layer", action="append", default=[])
    o = ap.parse_args()
    sys.path.insert(0, os.path.join(o.root, "scripts"))
    from mpi_buffer_calls import calls
    bad = []
    gen = subprocess.run([sys.executable, os.path.join(o.root, "scripts/gen_mpi_calls.py"), "--header", o.header,
                          "--root", o.root, "--check"], capture_output=True, text=True)
    if gen.returncode != 0:
        bad.append("generated files out of date:\n" + gen.stdout + gen.stderr)
    readme = open(os.path.join(o.root, "README.md")).read()
    m = re.search(r"<!-- mpi-table:begin -->(.*?)<!-- mpi-table:end -->", readme, flags=re.S)
    if not m:
        print("README.md has no mpi-table markers")
        return 1
    rows = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`(MPI_\w+)`", cells[0]):
            rows[name] = (cells[2], cells[3])
    listed = calls(open(o.header).read())
    for n in listed:
        if n not in rows:
            bad.append("%s takes a buffer and a datatype but has no row" % n)
    nm = subprocess.run(["nm", "-D", "--defined-only", o.lib], capture_output=True, text=True, check=True).stdout
    exported = set(re.findall(r"\s[TW]\s+(MPI_\w+)$", nm, flags=re.M))
    refusers = set(re.findall(r"^MPIACC_INTERPOSE_EXPORT int (MPI_\w+)\(",
                              open(os.path.join(o.root, "src/interpose/refuse_gen.c")).read(), flags=re.M))
    pending = 0
    for n, (status, where) in sorted(rows.items()):
        if status not in ("handled", "refused", "host only"):
            bad.append("%s: unknown status '%s'" % (n, status))
        if n not in exported:
            if any(p in where for p in o.pending_layer):
                pending += 1
            else:
                bad.append("%s is not defined by %s" % (n, o.lib))
        if status == "refused" and "refuse_gen.c" in where and n not in refusers:
            bad.append("%s is marked refused but has no refusal wrapper" % n)
        if status == "handled" and n in refusers:
            bad.append("%s is marked handled but is a refusal wrapper" % n)
    for b in bad:
        print("FAIL: " + b)
    print("%d functions in the header's list, %d rows' functions, %d refused by wrappers, %d pending (%s)"
          % (len(listed), len(rows), len(refusers), pending, ", ".join(o.pending_layer) or "none"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
