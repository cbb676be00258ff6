/*
 * interpose/p2p_extra.c: MPI_Bsend, MPI_Ibsend, MPI_Sendrecv_replace,
 * MPI_Isendrecv, MPI_Isendrecv_replace (int and MPI_Count forms): host fast
 * path, else the dispatcher (src/dispatch/bsend.c, sendrecv.c).
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Bsend(buf, count, dt, dest, tag, comm);
    return mpiacc_dispatch_bsend(buf, count, dt, dest, tag, comm, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                                     MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Ibsend(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_bsend(buf, count, dt, dest, tag, comm, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
                                                 int rtag, MPI_Comm comm, MPI_Status *status)
{
    if (mpiacc_interpose_send_fast(dt))
        return PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status);
    return mpiacc_dispatch_sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status);
}

MPIACC_INTERPOSE_EXPORT int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
                                                  int rtag, MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt))
        return PMPI_Isendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, req);
    return mpiacc_dispatch_isendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                                          void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                                          MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(stype) && mpiacc_interpose_recv_fast(rtype, src))
        return PMPI_Isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, req);
    return mpiacc_dispatch_isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Bsend_c(buf, count, dt, dest, tag, comm);
    return mpiacc_dispatch_bsend(buf, count, dt, dest, tag, comm, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                                     MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt)) return PMPI_Ibsend_c(buf, count, dt, dest, tag, comm, req);
    return mpiacc_dispatch_bsend(buf, count, dt, dest, tag, comm, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src,
                                                 int rtag, MPI_Comm comm, MPI_Status *status)
{
    if (mpiacc_interpose_send_fast(dt))
        return PMPI_Sendrecv_replace_c(buf, count, dt, dest, stag, src, rtag, comm, status);
    return mpiacc_dispatch_sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status);
}

MPIACC_INTERPOSE_EXPORT int MPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src,
                                                  int rtag, MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(dt))
        return PMPI_Isendrecv_replace_c(buf, count, dt, dest, stag, src, rtag, comm, req);
    return mpiacc_dispatch_isendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Isendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                                          void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag,
                                          MPI_Comm comm, MPI_Request *req)
{
    if (mpiacc_interpose_send_fast(stype) && mpiacc_interpose_recv_fast(rtype, src))
        return PMPI_Isendrecv_c(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, req);
    return mpiacc_dispatch_isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, req);
}
