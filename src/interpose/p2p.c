/*
 * interpose/p2p.c: the MPI point-to-point and pack entry points mpiacc
 * defines.  Each one first takes the host fast path: a datatype without an
 * mpiacc attribute, while no device send is deferred, goes straight to PMPI
 * (one attribute lookup and one atomic load; no lock, no allocation, no
 * driver call).  Everything else goes through the request pool.
 */
#include "attrs/attrs.h"
#include "streampool/streampool.h"

#define NO_DEFERRED() (atomic_load_explicit(&mpiacc_sp_deferred_sends, memory_order_relaxed) == 0)

/* A datatype needs the pool: a device kind, or a host kind with an event. */
static int wants_pool(const mpiacc_attrs_t *a)
{
    return a->kind != MPIACC_KIND_NONE && (a->kind != MPIACC_KIND_HOST || a->has_event);
}

static int pmpi_isend(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                      int mode, MPI_Request *req)
{
    switch (mode) {
    case MPIACC_SEND_SYNC: return PMPI_Issend_c(buf, count, dt, dest, tag, comm, req);
    case MPIACC_SEND_READY: return PMPI_Irsend_c(buf, count, dt, dest, tag, comm, req);
    default: return PMPI_Isend_c(buf, count, dt, dest, tag, comm, req);
    }
}

static int pmpi_send(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, int mode)
{
    switch (mode) {
    case MPIACC_SEND_SYNC: return PMPI_Ssend_c(buf, count, dt, dest, tag, comm);
    case MPIACC_SEND_READY: return PMPI_Rsend_c(buf, count, dt, dest, tag, comm);
    default: return PMPI_Send_c(buf, count, dt, dest, tag, comm);
    }
}

/* Any send that missed the fast path; req == NULL means blocking. */
static int send_slow(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                     int mode, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS, deferred = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    mpiacc_attrs_t a;

    MPIACC_CHECK(mpiacc_attrs_get(dt, &a));
    if (wants_pool(&a)) {
        MPIACC_CHECK(mpiacc_sp_isend(buf, count, dt, &a, dest, tag, comm, mode, &r));
    } else {
        if (!NO_DEFERRED())
            MPIACC_CHECK(mpiacc_sp_host_isend(buf, count, dt, dest, tag, comm, mode, &r, &deferred));
        if (!deferred) {
            /* Nothing to order behind: plain MPI (its own error handling). */
            return req ? pmpi_isend(buf, count, dt, dest, tag, comm, mode, req)
                       : pmpi_send(buf, count, dt, dest, tag, comm, mode);
        }
    }
    if (req) *req = r;
    else return PMPI_Wait(&r, MPI_STATUS_IGNORE);
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

static int recv_slow(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                     MPI_Status *status, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Request r = MPI_REQUEST_NULL;
    mpiacc_attrs_t a;

    MPIACC_CHECK(mpiacc_attrs_get(dt, &a));
    if (!wants_pool(&a))
        return req ? PMPI_Irecv_c(buf, count, dt, src, tag, comm, req)
                   : PMPI_Recv_c(buf, count, dt, src, tag, comm, status);
    MPIACC_CHECK(mpiacc_sp_irecv(buf, count, dt, &a, src, tag, comm, &r));
    if (req) *req = r;
    else return PMPI_Wait(&r, status);
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

#define SEND_FAST(dt) (mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE && NO_DEFERRED())
#define RECV_FAST(dt) (mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE)

/* ---- blocking and nonblocking sends, int and MPI_Count flavours ---------- */

#define DEFINE_SEND(NAME, CNT, MODE)                                                                   \
    MPIACC_PUBLIC int MPI_##NAME(const void *buf, CNT count, MPI_Datatype dt, int dest, int tag,        \
                                 MPI_Comm comm)                                                      \
    {                                                                                                \
        if (SEND_FAST(dt)) return PMPI_##NAME(buf, count, dt, dest, tag, comm);                      \
        return send_slow(buf, count, dt, dest, tag, comm, MODE, NULL);                               \
    }
#define DEFINE_ISEND(NAME, CNT, MODE)                                                                  \
    MPIACC_PUBLIC int MPI_##NAME(const void *buf, CNT count, MPI_Datatype dt, int dest, int tag,        \
                                 MPI_Comm comm, MPI_Request *req)                                    \
    {                                                                                                \
        if (SEND_FAST(dt)) return PMPI_##NAME(buf, count, dt, dest, tag, comm, req);                 \
        return send_slow(buf, count, dt, dest, tag, comm, MODE, req);                                \
    }

DEFINE_SEND(Send, int, MPIACC_SEND_STD)
DEFINE_SEND(Ssend, int, MPIACC_SEND_SYNC)
DEFINE_SEND(Rsend, int, MPIACC_SEND_READY)
DEFINE_SEND(Send_c, MPI_Count, MPIACC_SEND_STD)
DEFINE_SEND(Ssend_c, MPI_Count, MPIACC_SEND_SYNC)
DEFINE_SEND(Rsend_c, MPI_Count, MPIACC_SEND_READY)
DEFINE_ISEND(Isend, int, MPIACC_SEND_STD)
DEFINE_ISEND(Issend, int, MPIACC_SEND_SYNC)
DEFINE_ISEND(Irsend, int, MPIACC_SEND_READY)
DEFINE_ISEND(Isend_c, MPI_Count, MPIACC_SEND_STD)
DEFINE_ISEND(Issend_c, MPI_Count, MPIACC_SEND_SYNC)
DEFINE_ISEND(Irsend_c, MPI_Count, MPIACC_SEND_READY)

/* ---- receives -------------------------------------------------------------- */

#define DEFINE_RECV(NAME, CNT)                                                                        \
    MPIACC_PUBLIC int MPI_##NAME(void *buf, CNT count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, \
                                 MPI_Status *status)                                                 \
    {                                                                                                \
        if (RECV_FAST(dt)) return PMPI_##NAME(buf, count, dt, src, tag, comm, status);               \
        return recv_slow(buf, count, dt, src, tag, comm, status, NULL);                              \
    }
#define DEFINE_IRECV(NAME, CNT)                                                                       \
    MPIACC_PUBLIC int MPI_##NAME(void *buf, CNT count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, \
                                 MPI_Request *req)                                                   \
    {                                                                                                \
        if (RECV_FAST(dt)) return PMPI_##NAME(buf, count, dt, src, tag, comm, req);                  \
        return recv_slow(buf, count, dt, src, tag, comm, NULL, req);                                 \
    }

DEFINE_RECV(Recv, int)
DEFINE_RECV(Recv_c, MPI_Count)
DEFINE_IRECV(Irecv, int)
DEFINE_IRECV(Irecv_c, MPI_Count)

/* ---- MPI_Sendrecv ------------------------------------------------------------ */

static int sendrecv_slow(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                         MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status *status)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[2];

    /* Receive first so that a send to self finds it posted. */
    mpi_errno = recv_slow(rbuf, rcount, rtype, src, rtag, comm, NULL, &reqs[0]);
    if (mpi_errno != MPI_SUCCESS) return mpi_errno;
    mpi_errno = send_slow(sbuf, scount, stype, dest, stag, comm, MPIACC_SEND_STD, &reqs[1]);
    if (mpi_errno != MPI_SUCCESS) {
        PMPI_Cancel(&reqs[0]);
        PMPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        return mpi_errno;
    }
    mpi_errno = PMPI_Waitall(2, reqs, st);
    if (status != MPI_STATUS_IGNORE) *status = st[0];
    if (mpi_errno == MPI_ERR_IN_STATUS)
        mpi_errno = st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
    return mpi_errno;
}

MPIACC_PUBLIC int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                               int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status *status)
{
    if (SEND_FAST(stype) && RECV_FAST(rtype))
        return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
    return sendrecv_slow(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
}

MPIACC_PUBLIC int MPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                                 void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                                 MPI_Status *status)
{
    if (SEND_FAST(stype) && RECV_FAST(rtype))
        return PMPI_Sendrecv_c(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
    return sendrecv_slow(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
}

/* ---- MPI_Pack / MPI_Unpack ------------------------------------------------- */

static int pack_slow(int packing, const void *inbuf, MPI_Count insize_or_count, MPI_Datatype dt, void *outbuf,
                     MPI_Count outsize_or_count, MPI_Count *position, MPI_Comm comm, int *fallthrough)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_attrs_t a;
    *fallthrough = 0;
    MPIACC_CHECK(mpiacc_attrs_get(dt, &a));
    if (!wants_pool(&a)) {
        *fallthrough = 1;
        goto fn_exit;
    }
    if (packing)
        MPIACC_CHECK(mpiacc_sp_pack(inbuf, insize_or_count, dt, &a, outbuf, outsize_or_count, position));
    else
        MPIACC_CHECK(mpiacc_sp_unpack(inbuf, insize_or_count, position, outbuf, outsize_or_count, dt, &a));
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

MPIACC_PUBLIC int MPI_Pack(const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize,
                           int *position, MPI_Comm comm)
{
    int err, fall;
    MPI_Count pos;
    if (RECV_FAST(dt)) return PMPI_Pack(inbuf, incount, dt, outbuf, outsize, position, comm);
    pos = *position;
    err = pack_slow(1, inbuf, incount, dt, outbuf, outsize, &pos, comm, &fall);
    if (fall) return PMPI_Pack(inbuf, incount, dt, outbuf, outsize, position, comm);
    if (err == MPI_SUCCESS) *position = (int)pos;
    return err;
}

MPIACC_PUBLIC int MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype dt, void *outbuf,
                             MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    int err, fall;
    if (RECV_FAST(dt)) return PMPI_Pack_c(inbuf, incount, dt, outbuf, outsize, position, comm);
    err = pack_slow(1, inbuf, incount, dt, outbuf, outsize, position, comm, &fall);
    if (fall) return PMPI_Pack_c(inbuf, incount, dt, outbuf, outsize, position, comm);
    return err;
}

MPIACC_PUBLIC int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                             MPI_Datatype dt, MPI_Comm comm)
{
    int err, fall;
    MPI_Count pos;
    if (RECV_FAST(dt)) return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, dt, comm);
    pos = *position;
    err = pack_slow(0, inbuf, insize, dt, outbuf, outcount, &pos, comm, &fall);
    if (fall) return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, dt, comm);
    if (err == MPI_SUCCESS) *position = (int)pos;
    return err;
}

MPIACC_PUBLIC int MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                               MPI_Count outcount, MPI_Datatype dt, MPI_Comm comm)
{
    int err, fall;
    if (RECV_FAST(dt)) return PMPI_Unpack_c(inbuf, insize, position, outbuf, outcount, dt, comm);
    err = pack_slow(0, inbuf, insize, dt, outbuf, outcount, position, comm, &fall);
    if (fall) return PMPI_Unpack_c(inbuf, insize, position, outbuf, outcount, dt, comm);
    return err;
}
