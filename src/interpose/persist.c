/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/persist.c: MPI_Start, MPI_Startall, MPI_Request_free and
 * MPI_Cancel for persistent point-to-point requests.  MPI_Send_init & co.
 * are generated (p2p family): an untagged datatype makes MPI's own
 * persistent request; a datatype that needs the pool makes one of mpiacc's
 * (src/dispatch/persist.c: a real inactive MPI request the application
 * holds, each MPI_Start an ordinary pooled operation).  These calls forward
 * anything else to MPI; completion.c translates the completion calls.
 */
#include "interpose.h"

static inline int none_persistent(void)
{
    return atomic_load_explicit(&mpiacc_dispatch_prq_count, memory_order_acquire) == 0;
}

MPIACC_INTERPOSE_EXPORT int MPI_Start(MPI_Request *req)
{
    int ours, rc;
    if (none_persistent()) return PMPI_Start(req);
    rc = mpiacc_dispatch_persist_start(req, &ours);
    return ours ? rc : PMPI_Start(req);
}

/* One at a time, in array order (what MPI_Startall means); stops at the
 * first failure.  One batch (src/reqpool/batch.c): the packs the starts
 * need share one launch, made before the call returns. */
MPIACC_INTERPOSE_EXPORT int MPI_Startall(int n, MPI_Request reqs[])
{
    int rc = MPI_SUCCESS;
    if (none_persistent() || n <= 0 || !reqs) return PMPI_Startall(n, reqs);
    mpiacc_rp_batch_begin();
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) rc = MPI_Start(&reqs[i]);
    mpiacc_rp_batch_end();
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Request_free(MPI_Request *req)
{
    int ours, rc;
    if (none_persistent()) return PMPI_Request_free(req);
    rc = mpiacc_dispatch_persist_free(req, &ours);
    return ours ? rc : PMPI_Request_free(req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Cancel(MPI_Request *req)
{
    int ours, rc;
    if (atomic_load_explicit(&mpiacc_dispatch_prq_active, memory_order_acquire) == 0) return PMPI_Cancel(req);
    rc = mpiacc_dispatch_persist_cancel(req, &ours);
    return ours ? rc : PMPI_Cancel(req);
}
