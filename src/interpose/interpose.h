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

#include "dispatch/dispatch.h"
#include "dispatch/memkind.h"

/* Marks the MPI_* entry points (the library is built with hidden
 * visibility; MPICH's header does not mark them). */
#define MPIACC_INTERPOSE_EXPORT __attribute__((visibility("default")))

/* The fast-path tests: a send, and any other call (receive, pack).  While
 * untagged buffers may need classifying (mpiacc_core_classify: MPIACC_UVA=1
 * or a memory-kind assertion, src/dispatch/memkind.h) every call takes the
 * dispatcher, whose entry points test the buffer first
 * (mpiacc_dispatch_untagged_host) and hand host buffers to MPI at once. */
static inline int mpiacc_interpose_send_fast(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE && !mpiacc_core_classify && mpiacc_dispatch_no_deferred();
}

/* stats.c: the per-rank summary MPI_Finalize logs (MPIACC_LOG=info). */
void mpiacc_interpose_stats_summary(void);

static inline int mpiacc_interpose_untagged(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE && !mpiacc_core_classify;
}

#endif
