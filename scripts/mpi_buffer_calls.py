#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""List the MPI functions of an mpi.h (or mpi_proto.h) that take a buffer and a
datatype: prototypes of MPI_* (not PMPI_*) with a by-value MPI_Datatype parameter
and a `void *` parameter that is a data buffer (attribute values and extra
states are not).  One name per line, sorted.  Usage: mpi_buffer_calls.py HEADER..."""
import re
import sys

NOT_BUFFERS = {"attribute_val", "extra_state", "attribute_val_in", "attribute_val_out"}


def calls(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    found = set()
    for m in re.finditer(r"\bint\s+(MPI_\w+)\s*\(([^;{]*?)\)", text):
        name, params = m.group(1), m.group(2)
        ps = [p.strip() for p in params.split(",")]
        has_type = any(re.match(r"^(const\s+)?MPI_Datatype\s+\w+(\s*\[\])?$", p) for p in ps)
        bufs = [p for p in ps if re.match(r"^(const\s+)?void\s*\*\s*\w+$", p)
                and re.search(r"(\w+)$", p).group(1) not in NOT_BUFFERS]
        if has_type and bufs:
            found.add(name)
    return sorted(found)


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    text = "".join(open(f).read() for f in sys.argv[1:])
    for n in calls(text):
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
