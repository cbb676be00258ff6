/*
 * interpose: the MPI_* entry points mpiacc defines (one file per family).
 * Each one first takes the host fast path — a datatype without an mpiacc
 * attribute (and, for sends, no device send waiting for its turn) goes
 * straight to PMPI: one attribute lookup and one atomic load, no lock, no
 * allocation, no driver call — and otherwise hands the call to the
 * dispatcher (src/dispatch).
 */
#ifndef MPIACC_INTERPOSE_H_INCLUDED
#define MPIACC_INTERPOSE_H_INCLUDED

#include "coll/coll.h"
#include "dispatch/dispatch.h"

/* Marks the MPI_* entry points (the library is built with hidden
 * visibility; MPICH's header does not mark them). */
#define MPIACC_INTERPOSE_EXPORT __attribute__((visibility("default")))

/* The fast-path tests: a send, and any other call (receive, pack). */
static inline int mpiacc_interpose_send_fast(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE && mpiacc_dispatch_no_deferred();
}

/* stats.c: the per-rank summary MPI_Finalize logs (MPIACC_LOG=info). */
void mpiacc_interpose_stats_summary(void);

static inline int mpiacc_interpose_untagged(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE;
}

/* Collectives: both datatypes untagged (MPI_DATATYPE_NULL counts as
 * untagged) and no collective waiting to be posted anywhere. */
static inline int mpiacc_interpose_coll_fast(MPI_Datatype st, MPI_Datatype rt)
{
    return mpiacc_interpose_untagged(st) && mpiacc_interpose_untagged(rt) && mpiacc_coll_none_deferred();
}

/* coll_types.c: the same for the datatype arrays of MPI_Alltoallw and
 * MPI_Neighbor_alltoallw (neighbor: the topology's degrees), and the
 * persistent forms' refusal. */
int mpiacc_interpose_coll_untagged_w(MPI_Comm comm, int neighbor, const void *sbuf, const MPI_Datatype st[],
                                     const MPI_Datatype rt[]);
int mpiacc_interpose_coll_fast_w(MPI_Comm comm, int neighbor, const void *sbuf, const MPI_Datatype st[],
                                 const MPI_Datatype rt[]);
int mpiacc_interpose_coll_refuse_w(const char *name, MPI_Comm comm, int neighbor, const void *sbuf,
                                   const MPI_Datatype st[], const MPI_Datatype rt[]);

#endif
