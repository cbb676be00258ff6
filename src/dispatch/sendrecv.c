/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/sendrecv.c: MPI_Sendrecv_replace, MPI_Isendrecv and
 * MPI_Isendrecv_replace when a datatype needs the pool.
 *
 * MPI_Isendrecv: the receive and the send are posted as two operations
 * (each its own protocol, or MPI's own request) and joined into
 * one request (a compound: a generalized request completed from MPI's
 * progress engine once both are; its status is the receive's, its error
 * the receive's, else the send's, raised by the completion calls on the
 * communicator with its own class, as for any mpiacc request).
 * *_replace: the send data is packed into host memory at the call
 * (hostcopy.c; after the call-time dependency) and sent from there as
 * MPI_PACKED, so that the receive may land in the buffer whenever it
 * arrives; the receive is an ordinary device receive into the buffer.  A
 * host buffer takes the same way when its receive must be mpiacc's (a
 * wildcard one where those are matched by a probe: replace_setup).
 * (MPICH's own MPI_Sendrecv_replace copies with the CPU: never handed
 * device memory.)
 * MPICH's own MPI_Isendrecv(_replace) are not used with device buffers
 * (they return garbage statuses and, replace, wrong data: mpich-notes).
 */
#include <sched.h>
#include <stdlib.h>

#include "dispatch.h"
#include "memkind.h"

/* ---- the compound request -------------------------------------------- */

typedef struct compound {
    MPI_Request greq;
    MPI_Request sub[2]; /* receive, send; MPI_REQUEST_NULL once completed */
    MPI_Status st;      /* the receive's                                   */
    int error, cancelled;
    atomic_int cancel_req;
    atomic_int busy; /* one progress pass at a time (threads)        */
    const mpiacc_backend_t *be; /* host copy of a *_replace's send data */
    void *host;
    MPI_Count bytes;
    /* Registered like a pool operation (reqpool's registry only: never on
     * the pool's lists), so that the completion calls claim the compound
     * and raise its error on its communicator with its own class. */
    mpiacc_rp_op_t *reg;
} compound_t;

static int c_query(void *extra, MPI_Status *status)
{
    compound_t *c = extra;
    MPI_Count n = 0;
    int err;
    PMPI_Get_elements_x(&c->st, MPI_BYTE, &n);
    status->MPI_SOURCE = c->st.MPI_SOURCE;
    status->MPI_TAG = c->st.MPI_TAG;
    PMPI_Status_set_elements_x(status, MPI_BYTE, n == MPI_UNDEFINED ? 0 : n);
    PMPI_Status_set_cancelled(status, c->cancelled);
    err = c->error;
    if (c->reg && mpiacc_rp_claim_result(c->reg, err)) err = MPI_SUCCESS; /* a completion call of ours raises it */
    status->MPI_ERROR = err;
    return err;
}

static int c_free(void *extra)
{
    compound_t *c = extra;
    if (c->reg) {
        mpiacc_rp_unregister(c->reg);
        mpiacc_rp_op_free(c->reg);
    }
    free(c);
    return MPI_SUCCESS;
}

static int c_cancel(void *extra, int complete)
{
    compound_t *c = extra;
    if (!complete) atomic_store(&c->cancel_req, 1);
    return MPI_SUCCESS;
}

/* Both drive the receives from MPI_ANY_SOURCE that look for their message
 * (reqpool.h), the compound's own among them, as the pool's requests do. */
static int c_wait(int count, void **states, double timeout, MPI_Status *status)
{
    (void)count, (void)states, (void)timeout, (void)status;
    mpiacc_rp_match_pending();
    int rc = MPIX_Stream_progress(MPIX_STREAM_NULL);
    sched_yield();
    return rc;
}

static int c_poll(void *extra, MPI_Status *status)
{
    (void)extra, (void)status;
    mpiacc_rp_match_pending();
    return MPIX_Stream_progress(MPIX_STREAM_NULL);
}

/* From MPI's progress engine: never a call that progresses (the parts are
 * waited only once MPIX_Request_is_complete says they are complete). */
static int c_async(MPIX_Async_thing thing)
{
    compound_t *c = MPIX_Async_get_state(thing);
    if (atomic_exchange(&c->busy, 1)) return MPIX_ASYNC_NOPROGRESS;
    if (atomic_exchange(&c->cancel_req, 0) && c->sub[0] != MPI_REQUEST_NULL) PMPI_Cancel(&c->sub[0]);
    for (int i = 0; i < 2; i++) {
        MPI_Status st;
        mpiacc_rp_claim_t cl;
        int rc, err, flag = 0;
        if (c->sub[i] == MPI_REQUEST_NULL || !MPIX_Request_is_complete(c->sub[i])) continue;
        mpiacc_rp_claim(c->sub[i], &cl); /* an mpiacc operation's error comes to us, not to MPI's handler */
        rc = PMPI_Wait(&c->sub[i], &st);
        err = cl.queried ? cl.error : rc;
        mpiacc_rp_unclaim(&cl);
        if (i == 0) {
            c->st = st;
            PMPI_Test_cancelled(&st, &flag);
            c->cancelled = flag;
        }
        if (err != MPI_SUCCESS && c->error == MPI_SUCCESS) c->error = err;
    }
    if (c->sub[0] != MPI_REQUEST_NULL || c->sub[1] != MPI_REQUEST_NULL) {
        atomic_store(&c->busy, 0);
        return MPIX_ASYNC_NOPROGRESS;
    }
    if (c->host) mpiacc_dispatch_host_free(c->be, c->host, c->bytes);
    c->host = NULL;
    PMPI_Grequest_complete(c->greq); /* c may be freed from here on */
    return MPIX_ASYNC_DONE;
}

/* Joins a posted receive and send into *req; on failure cancels and frees
 * both (and the host copy). */
static int compound_start(MPI_Request rreq, MPI_Request sreq, const mpiacc_backend_t *be, void *host,
                          MPI_Count bytes, MPI_Comm comm, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS;
    compound_t *c = calloc(1, sizeof *c);
    if (!c || !(c->reg = mpiacc_rp_op_alloc(0, MPIACC_RP_SEND_STD, NULL, 0, MPI_PROC_NULL, 0, comm)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an MPI_Isendrecv request");
    c->sub[0] = rreq;
    c->sub[1] = sreq;
    c->be = be;
    c->host = host;
    c->bytes = bytes;
    c->greq = MPI_REQUEST_NULL;
    PMPI_Status_set_elements_x(&c->st, MPI_BYTE, 0);
    c->st.MPI_SOURCE = MPI_ANY_SOURCE;
    c->st.MPI_TAG = MPI_ANY_TAG;
    c->st.MPI_ERROR = MPI_SUCCESS;
    MPIACC_CHECK(MPIX_Grequest_start(c_query, c_free, c_cancel, c_poll, c_wait, c, &c->greq));
    c->reg->greq = c->greq;
    mpiacc_rp_register(c->reg);
    *req = c->greq;
    mpi_errno = MPIX_Async_start(c_async, c, MPIX_STREAM_NULL);
    if (mpi_errno != MPI_SUCCESS) { /* the parts are waited here instead */
        MPI_Status st;
        PMPI_Wait(&c->sub[0], &c->st);
        PMPI_Wait(&c->sub[1], &st);
        if (c->host) mpiacc_dispatch_host_free(be, c->host, bytes);
        c->host = NULL;
        PMPI_Grequest_complete(c->greq);
        mpi_errno = MPI_SUCCESS;
    }
    return mpi_errno;
fn_fail:
    if (rreq != MPI_REQUEST_NULL) {
        PMPI_Cancel(&rreq);
        PMPI_Wait(&rreq, MPI_STATUS_IGNORE);
    }
    if (sreq != MPI_REQUEST_NULL) PMPI_Wait(&sreq, MPI_STATUS_IGNORE);
    if (host) mpiacc_dispatch_host_free(be, host, bytes);
    if (c && c->reg) mpiacc_rp_op_free(c->reg);
    free(c);
    return mpi_errno;
}

/* Receive then send (a send to self finds the receive posted), joined. */
static int post_pair(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                     MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                     const mpiacc_backend_t *be, void *host, MPI_Count bytes, MPI_Request *req)
{
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int mpi_errno = mpiacc_dispatch_recv(rbuf, rcount, rtype, src, rtag, comm, NULL, 1, &r[0]);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = mpiacc_dispatch_send(sbuf, scount, stype, dest, stag, comm, MPIACC_RP_SEND_STD, 1, &r[1]);
    if (mpi_errno != MPI_SUCCESS) { /* raised on comm already */
        if (r[0] != MPI_REQUEST_NULL) {
            PMPI_Cancel(&r[0]);
            PMPI_Wait(&r[0], MPI_STATUS_IGNORE);
        }
        if (host) mpiacc_dispatch_host_free(be, host, bytes);
        return mpi_errno;
    }
    mpi_errno = compound_start(r[0], r[1], be, host, bytes, comm, req);
    return mpi_errno == MPI_SUCCESS ? MPI_SUCCESS : mpiacc_err_return_comm(comm, mpi_errno);
}

int mpiacc_dispatch_isendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                              void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                              MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS;
    MPIACC_CHECK(mpiacc_dispatch_check_args(1, scount, stype, dest, stag, comm, 1, req));
    MPIACC_CHECK(mpiacc_dispatch_check_args(0, rcount, rtype, src, rtag, comm, 1, req));
    return post_pair(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, NULL, NULL, 0, req);
fn_fail:
    return mpiacc_err_return_comm(comm, mpi_errno);
}

/* The send data of a *_replace in host memory (*host NULL: host datatype,
 * nothing done).  A host datatype is copied too (by the CPU backend) when
 * its receive must be mpiacc's: from MPI_ANY_SOURCE where those are matched
 * by a probe, or while such a receive looks for its message (dispatch.c,
 * host_recv); MPI's own *_replace would post its receive itself. */
static int replace_setup(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                         MPI_Comm comm, int nonblocking, MPI_Request *req, const mpiacc_backend_t **be,
                         void **host, MPI_Count *bytes)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_attrs_t a;
    *host = NULL;
    MPIACC_CHECK(mpiacc_dispatch_check_args(1, count, dt, dest, stag, comm, nonblocking, req));
    MPIACC_CHECK(mpiacc_dispatch_check_args(0, count, dt, src, rtag, comm, nonblocking, req));
    MPIACC_CHECK(mpiacc_dispatch_attrs(dt, buf, comm, &a));
    if (!mpiacc_dispatch_wants_pool(&a)) {
        if (!mpiacc_dispatch_recv_matched(src, rtag, comm)) goto fn_exit;
        a = (mpiacc_attrs_t){.kind = MPIACC_KIND_HOST};
    } else if (mpiacc_core_disabled) {
        MPIACC_CHECK(mpiacc_dispatch_disabled_error(&a));
    }
    MPIACC_CHECK(mpiacc_dispatch_pack_to_host(&a, buf, count, dt, be, host, bytes));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* MPI_Sendrecv_replace (status) and MPI_Isendrecv_replace (nonblocking:
 * req): the device data packed into host memory, then an ordinary
 * MPI_Sendrecv / a pair of the host send and the receive into buf. */
static int replace(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag, MPI_Comm comm,
                   int nonblocking, MPI_Status *status, MPI_Request *req)
{
    int mpi_errno;
    const mpiacc_backend_t *be = NULL;
    void *host = NULL;
    MPI_Count bytes = 0;
    mpi_errno = replace_setup(buf, count, dt, dest, stag, src, rtag, comm, nonblocking, req, &be, &host, &bytes);
    if (mpi_errno != MPI_SUCCESS) return mpiacc_err_return_comm(comm, mpi_errno);
    if (!host) {
        mpiacc_dispatch_empty(&count, &dt); /* no bytes: 0 MPI_BYTE (empty.c) */
        mpiacc_dispatch_drain_peer(comm, dest);
        return nonblocking ? PMPI_Isendrecv_replace_c(buf, count, dt, dest, stag, src, rtag, comm, req)
                           : PMPI_Sendrecv_replace_c(buf, count, dt, dest, stag, src, rtag, comm, status);
    }
    if (nonblocking)
        return post_pair(host, bytes, MPI_PACKED, dest, stag, buf, count, dt, src, rtag, comm, be, host, bytes, req);
    mpi_errno = mpiacc_dispatch_sendrecv(host, bytes, MPI_PACKED, dest, stag, buf, count, dt, src, rtag, comm,
                                         status);
    mpiacc_dispatch_host_free(be, host, bytes);
    return mpi_errno;
}

int mpiacc_dispatch_sendrecv_replace(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src,
                                     int rtag, MPI_Comm comm, MPI_Status *status)
{
    return replace(buf, count, dt, dest, stag, src, rtag, comm, 0, status, NULL);
}

int mpiacc_dispatch_isendrecv_replace(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src,
                                      int rtag, MPI_Comm comm, MPI_Request *req)
{
    return replace(buf, count, dt, dest, stag, src, rtag, comm, 1, NULL, req);
}
