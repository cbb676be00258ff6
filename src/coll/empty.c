/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/empty.c: a collective's blocks of a datatype of size 0 go to MPI as
 * 0 MPI_BYTE (reductions: as count 0 of their datatype, which the
 * operation needs), like the point-to-point messages of
 * src/dispatch/empty.c: MPICH's UCX netmod dies of SIGFPE receiving into
 * such a datatype, and its collectives receive with the application's
 * datatype (MPI_Gather, MPI_Scatter, MPI_Allgather, MPI_Alltoall, their
 * nonblocking forms, MPI_Reduce with an operation of the application's...).
 * An empty block is the same to MPI either way: type signatures match as
 * empty ones, nothing is written.  The host fast path routes such a
 * datatype here (MPIACC_ATTRS_KIND_EMPTY); the persistent forms cannot be
 * rewritten (MPI keeps the arguments until the request is freed) and are
 * refused on that netmod instead (mpiacc_coll_refuse_empty).
 */
#include "coll_internal.h"
#include "dispatch/dispatch.h"

/* One datatype of size 0 (and committed: MPI's checks of anything else stay MPI's). */
static int empty_type(MPI_Datatype t)
{
    return t != MPI_DATATYPE_NULL && mpiacc_dispatch_no_bytes(1, t);
}

/* The side's n blocks (counts[], types[] or *type: the operation's copies). */
static void side(int reduction, int n, MPI_Count *scalar, MPI_Count *counts, MPI_Datatype *type, MPI_Datatype *types)
{
    int whole = empty_type(*type);
    if (whole) {
        *scalar = 0;
        if (!reduction) *type = MPI_BYTE;
    }
    for (int i = 0; counts && i < n; i++)
        if (types ? empty_type(types[i]) : whole) {
            counts[i] = 0;
            if (types && !reduction) types[i] = MPI_BYTE;
        }
}

void mpiacc_coll_empty_sides(mpiacc_coll_op_t *c, int ns, int nr)
{
    const int red = c->fam->reduction;
    if (c->a.sbuf != MPI_IN_PLACE) side(red, ns, &c->a.scount, c->scounts, &c->a.stype, c->stypes);
    side(red, nr, &c->a.rcount, c->rcounts, &c->a.rtype, c->rtypes);
}

int mpiacc_coll_refuse_empty(const char *name, int n, const MPI_Datatype *types)
{
    if (!mpiacc_core_wildcard_probe) return MPI_SUCCESS; /* not MPICH's UCX netmod */
    for (int i = 0; i < n; i++)
        if (empty_type(types[i]))
            return mpiacc_err(MPIACC_ERRK_TYPE,
                              "%s: a datatype of size 0 (with a non-zero extent) in a persistent collective on "
                              "MPICH's UCX netmod, which dies of a division by zero receiving into it; pass a count "
                              "of 0 of MPI_BYTE for a block that carries nothing (docs/semantics.md)",
                              name);
    return MPI_SUCCESS;
}
