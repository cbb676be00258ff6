/*
 * interpose: the MPI_* entry points mpiacc defines (one file per family).
 * Each one first takes the host fast path — a datatype without an mpiacc
 * attribute, own or inherited (and, for sends, no device send waiting for
 * its turn) goes straight to PMPI: one attribute lookup (MPIACC_BUF_TYPE)
 * and, for a derived datatype, one load of its cached inheritance decision
 * (the first use of a derived datatype makes the decision, see
 * src/attrs/inherit.c), plus one atomic load for sends; no lock, no
 * allocation, no driver call — and otherwise hands the call to the
 * dispatcher (src/dispatch).
 */
#ifndef MPIACC_INTERPOSE_H_INCLUDED
#define MPIACC_INTERPOSE_H_INCLUDED

#include "dispatch/dispatch.h"

/* Marks the MPI_* entry points (the library is built with hidden
 * visibility; MPICH's header does not mark them). */
#define MPIACC_INTERPOSE_EXPORT __attribute__((visibility("default")))

/* The fast-path tests: a send, and any other call (receive, pack). */
static inline int mpiacc_interpose_send_fast(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE && mpiacc_dispatch_no_deferred() &&
           !atomic_load_explicit(&mpiacc_attrs_untagged_classify, memory_order_relaxed);
}

/* stats.c: the per-rank summary MPI_Finalize logs (MPIACC_LOG=info). */
void mpiacc_interpose_stats_summary(void);

/* (Untagged buffers that may be device memory — a communicator asserting
 * device memory allocation kinds — take the dispatcher.) */
static inline int mpiacc_interpose_untagged(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE &&
           !atomic_load_explicit(&mpiacc_attrs_untagged_classify, memory_order_relaxed);
}

#endif
