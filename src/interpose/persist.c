/*
 * interpose/persist.c: persistent point-to-point requests.  An untagged
 * datatype makes MPI's own persistent request; a datatype that needs the
 * pool makes one of mpiacc's (src/dispatch/persist.c: a real inactive MPI
 * request the application holds, each MPI_Start an ordinary pooled
 * operation).  MPI_Start, MPI_Startall, MPI_Request_free and MPI_Cancel
 * forward anything else to MPI; completion.c translates the completion calls.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Send_init(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_SEND, MPIACC_RP_SEND_STD, buf, count, dt, dest, tag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Send_init_c(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_SEND, MPIACC_RP_SEND_STD, buf, count, dt, dest, tag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Ssend_init(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_SEND, MPIACC_RP_SEND_SYNC, buf, count, dt, dest, tag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Ssend_init_c(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_SEND, MPIACC_RP_SEND_SYNC, buf, count, dt, dest, tag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Rsend_init(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_SEND, MPIACC_RP_SEND_READY, buf, count, dt, dest, tag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Rsend_init_c(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_SEND, MPIACC_RP_SEND_READY, buf, count, dt, dest, tag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Bsend_init(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_BSEND, MPIACC_RP_SEND_STD, buf, count, dt, dest, tag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Bsend_init_c(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_BSEND, MPIACC_RP_SEND_STD, buf, count, dt, dest, tag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                       MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Recv_init(buf, count, dt, src, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_RECV, MPIACC_RP_SEND_STD, buf, count, dt, src, tag, comm,
                                        req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                       MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Recv_init_c(buf, count, dt, src, tag, comm, req);
    return mpiacc_dispatch_persist_init(MPIACC_DISPATCH_P_RECV, MPIACC_RP_SEND_STD, buf, count, dt, src, tag, comm,
                                        req);
}

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
 * first failure. */
MPIACC_INTERPOSE_EXPORT int MPI_Startall(int n, MPI_Request reqs[])
{
    int rc = MPI_SUCCESS;
    if (none_persistent() || n <= 0 || !reqs) return PMPI_Startall(n, reqs);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) rc = MPI_Start(&reqs[i]);
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
