#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# MPICH's own collective tests (test/mpi/coll), each run plainly on MPICH's
# defaults and under mpiacc-run, and compared: scripts/mpich-tests.sh on the
# coll directory (its options, e.g. --max-ranks, --only, --timeout, --jobs,
# and an MPICH source tree; --help there).
exec bash "$(dirname "${BASH_SOURCE[0]}")/mpich-tests.sh" --dirs coll --work /tmp/mpiacc-mpich-coll "$@"
