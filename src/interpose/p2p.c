/*
 * interpose/p2p.c: MPI point-to-point entry points (blocking and
 * nonblocking sends in every mode, receives, MPI_Sendrecv; int and
 * MPI_Count forms): host fast path, else the dispatcher.
 */
#include "interpose.h"

/* ---- blocking sends ------------------------------------------------------ */

MPIACC_INTERPOSE_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Send(buf, count, dt, dest, tag, comm);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_STD, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Ssend(buf, count, dt, dest, tag, comm);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_SYNC, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Rsend(buf, count, dt, dest, tag, comm);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_READY, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Send_c(buf, count, dt, dest, tag, comm);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_STD, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                        MPI_Comm comm)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Ssend_c(buf, count, dt, dest, tag, comm);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_SYNC, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                        MPI_Comm comm)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Rsend_c(buf, count, dt, dest, tag, comm);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_READY, 0, NULL);
}

/* ---- nonblocking sends --------------------------------------------------- */

MPIACC_INTERPOSE_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                                      MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Isend(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_STD, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Issend(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_SYNC, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                                       MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Irsend(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_READY, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                        MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Isend_c(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_STD, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                         MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Issend_c(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_SYNC, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                                         MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Irsend_c(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_send(buf, count, dt, dest, tag, comm, MPIACC_RP_SEND_READY, 1, req);
}

/* ---- receives -------------------------------------------------------------- */

MPIACC_INTERPOSE_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                     MPI_Status *status)
{
    if (mpiacc_interpose_recv_fast(dt, src)) return PMPI_Recv(buf, count, dt, src, tag, comm, status);
    return mpiacc_dispatch_recv(buf, count, dt, src, tag, comm, status, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                       MPI_Status *status)
{
    if (mpiacc_interpose_recv_fast(dt, src)) return PMPI_Recv_c(buf, count, dt, src, tag, comm, status);
    return mpiacc_dispatch_recv(buf, count, dt, src, tag, comm, status, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                      MPI_Request *req)
{
    if (mpiacc_interpose_recv_fast(dt, src)) return PMPI_Irecv(buf, count, dt, src, tag, comm, req);
    return mpiacc_dispatch_recv(buf, count, dt, src, tag, comm, NULL, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag,
                                        MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_recv_fast(dt, src)) return PMPI_Irecv_c(buf, count, dt, src, tag, comm, req);
    return mpiacc_dispatch_recv(buf, count, dt, src, tag, comm, NULL, 1, req);
}

/* ---- MPI_Sendrecv ------------------------------------------------------------ */

MPIACC_INTERPOSE_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                                         void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                                         MPI_Comm comm, MPI_Status *status)
{
    if (mpiacc_interpose_send_fast(stype) && mpiacc_interpose_recv_fast(rtype, src))
        return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
    return mpiacc_dispatch_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
}

MPIACC_INTERPOSE_EXPORT int MPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest,
                                           int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src,
                                           int rtag, MPI_Comm comm, MPI_Status *status)
{
    if (mpiacc_interpose_send_fast(stype) && mpiacc_interpose_recv_fast(rtype, src))
        return PMPI_Sendrecv_c(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
    return mpiacc_dispatch_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
}
