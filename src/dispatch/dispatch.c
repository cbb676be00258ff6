/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/dispatch.c: the interposed point-to-point calls that missed the
 * host fast path.  Reads the datatype's attributes; a host datatype goes to
 * MPI (or, while a device send to the same peer waits for its turn, behind
 * it: the ordered protocol); a device datatype is checked (backend present
 * and happy with the attributes and buffer, datatype analysable, size
 * representable, buffer large enough) and then either goes to MPI as it is
 * (the device protocol's fast path: one dense byte range of device memory
 * MPI's transport takes, its dependency already met, nothing queued before
 * it: MPI's own request) or becomes a pooled operation of the protocol
 * mpiacc_proto_choose picks (src/protocol/choose.c: device or staged).
 */
#include "dispatch.h"
#include "memkind.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/env.h"
#include "protocol/protocol.h"

/* A datatype needs the pool: a device kind, or a host kind with an event. */
static int wants_pool(const mpiacc_attrs_t *a)
{
    return a->kind != MPIACC_KIND_NONE && (a->kind != MPIACC_KIND_HOST || a->has_event);
}

int mpiacc_dispatch_backend(const mpiacc_attrs_t *a, void *buf, const mpiacc_backend_t **be)
{
    int mpi_errno = MPI_SUCCESS;
    *be = mpiacc_backend_get(a->kind);
    if (!*be)
        MPIACC_FAIL(MPIACC_ERRK_BACKEND, "%s buffers are not available: %s", mpiacc_kind_name(a->kind),
                    mpiacc_backend_why_absent(a->kind));
    if ((*be)->validate) MPIACC_CHECK((*be)->validate(a, buf));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_dispatch_packed_bytes(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *bytes)
{
    int mpi_errno = MPI_SUCCESS;
    if (count < 0) MPIACC_FAIL(MPIACC_ERRK_COUNT, "negative count %lld", (long long)count);
    if (t->size > 0 && count > ((MPI_Count)1 << 62) / t->size)
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "count %lld of a %lld-byte datatype overflows", (long long)count,
                    (long long)t->size);
    *bytes = t->size * count;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The backend's call-time check that buf holds count x t (optional). */
static int check_span(const mpiacc_backend_t *be, const mpiacc_attrs_t *a, void *buf, mpiacc_pack_type_t *t,
                      MPI_Count count, MPI_Count bytes)
{
    mpiacc_xfer_desc_t d = {.buf = buf, .type = t, .count = count, .first = 0, .last = bytes, .host = NULL};
    return be->validate_span ? be->validate_span(a, &d) : MPI_SUCCESS;
}

int mpiacc_dispatch_device_buf(const mpiacc_attrs_t *a, void *buf, MPI_Count count, MPI_Datatype dt,
                               const mpiacc_backend_t **be, mpiacc_pack_type_t **t, MPI_Count *bytes)
{
    int mpi_errno = MPI_SUCCESS;
    *be = NULL;
    *t = NULL;
    *bytes = 0;
    MPIACC_CHECK(mpiacc_pack_type_get(dt, t));
    MPIACC_CHECK(mpiacc_dispatch_packed_bytes(*t, count, bytes));
    if (*bytes == 0) { /* nothing moves: any buffer will do, as in MPI */
        *be = mpiacc_backend_get(a->kind);
        goto fn_exit;
    }
    MPIACC_CHECK(mpiacc_dispatch_backend(a, buf, be));
    MPIACC_CHECK(check_span(*be, a, buf, *t, count, *bytes));
fn_exit:
    return mpi_errno;
fn_fail:
    if (*t) mpiacc_pack_type_release(*t);
    *t = NULL;
    goto fn_exit;
}

/* A host send while device sends are deferred: with *deferred = 0 and
 * nothing done when no unissued send goes to (comm, dest); otherwise queued
 * behind them (ordered protocol; *req is a generalized request). */
static int host_send_ordered(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                             MPI_Comm comm, int mode, MPI_Request *req, int *deferred)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_rp_op_t *op = NULL;

    *deferred = 0;
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    if (!mpiacc_rp_sendq_has_peer(comm, dest, NULL)) goto fn_exit;
    if (!(op = mpiacc_rp_op_alloc(1, mode, (void *)buf, count, dest, tag, comm)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an operation");
    op->proto = &mpiacc_proto_ordered;
    /* Keep the datatype alive: the application may free it after the call. */
    MPIACC_CHECK(PMPI_Type_dup(type, &op->host_type));
    mpi_errno = mpiacc_rp_submit(op, req, 1);
    op = NULL; /* disposed of by submit on failure */
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    *deferred = 1;
fn_exit:
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    return mpi_errno;
fn_fail:
    mpiacc_rp_discard(op);
    goto fn_exit;
}

static int pmpi_isend(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                      int mode, MPI_Request *req)
{
    switch (mode) {
    case MPIACC_RP_SEND_SYNC: return PMPI_Issend_c(buf, count, dt, dest, tag, comm, req);
    case MPIACC_RP_SEND_READY: return PMPI_Irsend_c(buf, count, dt, dest, tag, comm, req);
    default: return PMPI_Isend_c(buf, count, dt, dest, tag, comm, req);
    }
}

/* A blocking receive of MPI's; while receives from MPI_ANY_SOURCE look
 * for their message it waits as a blocking send does (below). */
static int pmpi_recv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    MPI_Request r;
    int rc;
    if (!mpiacc_rp_matching_now()) return PMPI_Recv_c(buf, count, dt, src, tag, comm, st);
    rc = PMPI_Irecv_c(buf, count, dt, src, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : mpiacc_rp_pmpi_wait(&r, st);
}

/* A blocking send; while receives from MPI_ANY_SOURCE look for their
 * message (reqpool.h, MATCHING) it waits with mpiacc_rp_pmpi_wait, which
 * keeps looking for them (the peer may need one of them first). */
static int pmpi_send(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, int mode)
{
    if (mpiacc_rp_matching_now()) {
        MPI_Request r;
        int rc = pmpi_isend(buf, count, dt, dest, tag, comm, mode, &r);
        return rc != MPI_SUCCESS ? rc : mpiacc_rp_pmpi_wait(&r, MPI_STATUS_IGNORE);
    }
    switch (mode) {
    case MPIACC_RP_SEND_SYNC: return PMPI_Ssend_c(buf, count, dt, dest, tag, comm);
    case MPIACC_RP_SEND_READY: return PMPI_Rsend_c(buf, count, dt, dest, tag, comm);
    default: return PMPI_Send_c(buf, count, dt, dest, tag, comm);
    }
}

/* What the caller of device_op asked for: the envelope, and where a call
 * that goes to MPI as it is puts its result. */
typedef struct call {
    int is_send, peer, tag, mode, nonblocking;
    MPI_Comm comm;
    MPI_Request *req;   /* nonblocking: the application's request */
    MPI_Status *status; /* blocking receive */
} call_t;

/* MPIACC_BATCH (src/reqpool/batch.c), read once. */
static int batch_posts(void)
{
    static atomic_int v = -1;
    int x = atomic_load_explicit(&v, memory_order_relaxed);
    if (x < 0) atomic_store_explicit(&v, x = mpiacc_env_bool("MPIACC_BATCH"), memory_order_relaxed);
    return x;
}

/* The device protocol's fast path (the speed target leaves it well under a
 * microsecond): a dense message of device memory MPI's transport takes
 * (choose.c: not to or from this process itself), whose dependency is met
 * right now (be->dep_ready: one stream query, or an event recorded and
 * queried) and, for a send, with no unissued send to the same peer queued
 * before it, goes to MPI as it is: the application gets MPI's own request
 * (a blocking call is MPI's blocking call), errors are MPI's own (raised by
 * MPI), no pool operation exists.  *taken says it went; the statistics
 * count it under MPIACC_PROTO_MPI at the call. */
static int pass_to_mpi(const call_t *c, void *buf, const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count bytes,
                       const mpiacc_attrs_t *a, const mpiacc_backend_t *be, int *taken)
{
    MPI_Count start = 0;
    int ready = 0, queued = 0, rc;
    char *p;
    *taken = 0;
    if (!mpiacc_proto_dense(t, count, &start) || !mpiacc_proto_device_ok(be, a->kind, c->is_send, c->peer, c->comm))
        return MPI_SUCCESS;
    /* a receive from MPI_ANY_SOURCE on an intercommunicator where those are
     * matched by a probe, or behind one that is (reqpool.h): the protocol's */
    if (!c->is_send && mpiacc_rp_match_wanted(c->peer)) return MPI_SUCCESS;
    if (c->is_send && !mpiacc_dispatch_no_deferred()) {
        pthread_mutex_lock(&mpiacc_rp_pool.lock);
        queued = mpiacc_rp_sendq_has_peer(c->comm, c->peer, NULL);
        pthread_mutex_unlock(&mpiacc_rp_pool.lock);
        if (queued) return MPI_SUCCESS;
    }
    if (be->dep_ready(a, buf, &ready) != MPI_SUCCESS || !ready) return MPI_SUCCESS;
    mpiacc_core_trace_mark(MPIACC_CORE_TR_DEP);
    *taken = 1;
    mpiacc_core_stats_passed(a->kind, c->is_send, bytes);
    p = (char *)buf + start;
    if (c->is_send)
        rc = c->nonblocking ? pmpi_isend(p, bytes, MPI_BYTE, c->peer, c->tag, c->comm, c->mode, c->req)
                            : pmpi_send(p, bytes, MPI_BYTE, c->peer, c->tag, c->comm, c->mode);
    else
        rc = c->nonblocking ? PMPI_Irecv_c(p, bytes, MPI_BYTE, c->peer, c->tag, c->comm, c->req)
                            : pmpi_recv(p, bytes, MPI_BYTE, c->peer, c->tag, c->comm, c->status);
    mpiacc_core_trace_mark(MPIACC_CORE_TR_POST);
    return rc;
}

/* A device send or receive: the operation is set up at call time
 * (attributes, datatype analysis, dependency) and handed to MPI as it is
 * (pass_to_mpi: *passed, the result is MPI's) or to the pool (*r: its
 * request).  Empty and MPI_PROC_NULL operations go to MPI directly (an
 * empty send still keeps its place behind deferred sends to the same
 * peer), into *r.  bt: the datatype's analysis from its facts (borrowed),
 * or NULL (looked up here). */
static int device_op(const call_t *c, void *buf, MPI_Count count, MPI_Datatype type, const mpiacc_attrs_t *a,
                     mpiacc_pack_type_t *bt, MPI_Request *r, int *passed)
{
    int mpi_errno = MPI_SUCCESS, deferred = 0;
    const mpiacc_backend_t *be = NULL;
    mpiacc_rp_op_t *op = NULL;
    mpiacc_pack_type_t *t = NULL; /* a reference of ours (bt: borrowed) */
    MPI_Count bytes = 0;

    *passed = 0;
    /* A failure of an earlier stream-ordered op on this communicator,
     * found after its request completed (reqpool/early.c). */
    MPIACC_CHECK(mpiacc_rp_late_take(c->comm));
    if (c->peer != MPI_PROC_NULL) {
        if (!bt) MPIACC_CHECK(mpiacc_pack_type_get(type, &t));
        MPIACC_CHECK(mpiacc_dispatch_packed_bytes(bt ? bt : t, count, &bytes));
    }
    /* An empty message accepts any buffer (MPI's rule: a NULL cl_mem or
     * device pointer included), so the backend's buffer check is skipped. */
    if (bytes > 0) MPIACC_CHECK(mpiacc_dispatch_backend(a, buf, &be));
    if (a->stream_order) {
        const mpiacc_backend_t *sb = be ? be : mpiacc_backend_get(a->kind);
        if (sb && !sb->order_after)
            MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_ORDER_STREAM on a %s datatype: it has no stream or queue to order "
                        "the completion on (CUDA and OpenCL datatypes only)", mpiacc_kind_name(a->kind));
    }
    if (bytes == 0) {
        if (c->is_send && c->peer != MPI_PROC_NULL)
            MPIACC_CHECK(host_send_ordered(NULL, 0, MPI_BYTE, c->peer, c->tag, c->comm, c->mode, r, &deferred));
        if (!deferred)
            MPIACC_CHECK(c->is_send ? PMPI_Isend_c(NULL, 0, MPI_BYTE, c->peer, c->tag, c->comm, r)
                                    : PMPI_Irecv_c(NULL, 0, MPI_BYTE, c->peer, c->tag, c->comm, r));
        goto fn_exit;
    }
    if (bt) { /* from here on a reference of our own */
        t = bt;
        mpiacc_pack_type_ref(t);
    }
    MPIACC_CHECK(check_span(be, a, buf, t, count, bytes));
    if (!c->is_send && a->kind != MPIACC_KIND_HOST) /* (the host unpack writes in MPI's order) */
        MPIACC_CHECK(mpiacc_pack_check_receive(t, count, NULL));
    mpiacc_core_trace_mark(MPIACC_CORE_TR_CHECK);
    mpi_errno = pass_to_mpi(c, buf, t, count, bytes, a, be, passed);
    if (*passed) goto fn_exit; /* MPI's result, raised by MPI */
    if (!(op = mpiacc_rp_op_alloc(c->is_send, c->mode, buf, count, c->peer, c->tag, c->comm)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an operation");
    op->be = be;
    op->attrs = *a;
    op->type = t;
    t = NULL;
    op->bytes = bytes;
    mpiacc_proto_choose(op, 0, 0); /* src/protocol/choose.c */
    if (be->capture) MPIACC_CHECK(be->capture(a, buf, &op->dep));
    mpiacc_core_trace_mark(MPIACC_CORE_TR_DEP);
    if (c->nonblocking && batch_posts()) mpiacc_rp_batch_lazy_open(); /* posted together: one pack launch */
    mpi_errno = mpiacc_rp_submit(op, r, 0);
    op = NULL; /* disposed of by submit on failure */
    mpiacc_core_trace_mark(MPIACC_CORE_TR_POST);
    mpiacc_core_trace_pooled();
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
fn_exit:
    if (t) mpiacc_pack_type_release(t);
    return mpi_errno;
fn_fail:
    mpiacc_rp_discard(op);
    goto fn_exit;
}

/* ---- call-time checks -------------------------------------------------------- */

/* MPI_TAG_UB (the same on every communicator in MPICH), read once. */
static atomic_int tag_ub;

static int get_tag_ub(void)
{
    int ub = atomic_load_explicit(&tag_ub, memory_order_relaxed);
    if (ub == 0) {
        int *v = NULL, flag = 0;
        if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag) == MPI_SUCCESS && flag && v) ub = *v;
        else ub = 32767; /* the least MPI guarantees */
        atomic_store_explicit(&tag_ub, ub, memory_order_relaxed);
    }
    return ub;
}

/* What MPI checks in a point-to-point call before anything happens, in
 * MPICH's order, with MPI's classes: communicator, count, datatype, rank,
 * tag, request pointer (nonblocking calls).  Wrong arguments therefore
 * fail in the call, never later in a completion call. */
static int check_args(int is_send, MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                      int nonblocking, const MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS, inter = 0, size = 0, ub;
    if (comm == MPI_COMM_NULL) MPIACC_FAIL(MPIACC_ERRK_COMM, "the communicator is MPI_COMM_NULL");
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_size(comm, &size) : PMPI_Comm_size(comm, &size)) != MPI_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_COMM, "invalid communicator");
    if (count < 0) MPIACC_FAIL(MPIACC_ERRK_COUNT, "negative count %lld", (long long)count);
    if (dt == MPI_DATATYPE_NULL) MPIACC_FAIL(MPIACC_ERRK_TYPE, "the datatype is MPI_DATATYPE_NULL");
    if (peer != MPI_PROC_NULL && !(peer >= 0 && peer < size) && (is_send || peer != MPI_ANY_SOURCE))
        MPIACC_FAIL(MPIACC_ERRK_RANK, "invalid %s rank %d: the %scommunicator has %d process%s",
                    is_send ? "destination" : "source", peer, inter ? "remote group of the " : "", size,
                    size == 1 ? "" : "es");
    ub = get_tag_ub();
    if (!(tag >= 0 && tag <= ub) && (is_send || tag != MPI_ANY_TAG))
        MPIACC_FAIL(MPIACC_ERRK_TAG, "invalid tag %d: must be in [0, %d]%s", tag, ub,
                    is_send ? "" : " or MPI_ANY_TAG");
    if (nonblocking && !req) MPIACC_FAIL(MPIACC_ERRK_ARG, "the request argument is NULL");
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* A device datatype (or a host one with an event) while mpiacc is switched
 * off: its buffer cannot be handed to MPI as host memory. */
static int disabled_error(const mpiacc_attrs_t *a)
{
    return mpiacc_err(MPIACC_ERRK_DISABLED,
                      "the datatype is tagged MPIACC_BUF_TYPE %s%s but mpiacc is disabled (MPIACC_DISABLE is set): "
                      "its buffer cannot be communicated",
                      mpiacc_kind_name(a->kind), a->kind == MPIACC_KIND_HOST ? " with MPIACC_EVENT" : "");
}

/* Blocking calls: waits for the request; an operation's error is raised
 * with the communicator's error handler. */
static int wait_on(MPI_Request *r, MPI_Status *st, MPI_Comm comm)
{
    int err;
    MPI_Comm c;
    int rc = mpiacc_rp_wait(r, st, &err, &c);
    mpiacc_core_trace_mark(MPIACC_CORE_TR_WAIT);
    if (rc == MPI_SUCCESS && err != MPI_SUCCESS) rc = mpiacc_err_return_comm(comm, err);
    return rc;
}

/* ---- entry points ---------------------------------------------------------- */

static int send_call(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, int mode,
                     int nonblocking, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS, deferred = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    mpiacc_attrs_t a;
    mpiacc_pack_type_t *bt = NULL;

    /* Classification on (memkind.h): an untagged host buffer goes to MPI
     * here, before any check, as on the interposer's fast path. */
    if (mpiacc_core_classify && mpiacc_dispatch_no_deferred() && mpiacc_dispatch_untagged_host(dt, buf, comm)) {
        mpiacc_dispatch_empty(&count, &dt); /* no bytes: 0 MPI_BYTE (empty.c) */
        return nonblocking ? pmpi_isend(buf, count, dt, dest, tag, comm, mode, req)
                           : pmpi_send(buf, count, dt, dest, tag, comm, mode);
    }
    MPIACC_CHECK(check_args(1, count, dt, dest, tag, comm, nonblocking, req));
    mpiacc_core_trace_mark(MPIACC_CORE_TR_CHECK);
    if (dest == MPI_PROC_NULL) /* no data moves: MPI's own semantics */
        return nonblocking ? pmpi_isend(buf, count, dt, dest, tag, comm, mode, req)
                           : pmpi_send(buf, count, dt, dest, tag, comm, mode);
    MPIACC_CHECK(mpiacc_dispatch_attrs_type(dt, buf, comm, &a, &bt));
    mpiacc_core_trace_mark(MPIACC_CORE_TR_ATTR);
    if (wants_pool(&a) && mpiacc_core_disabled) MPIACC_CHECK(disabled_error(&a));
    if (wants_pool(&a)) {
        const call_t c = {.is_send = 1, .peer = dest, .tag = tag, .mode = mode, .nonblocking = nonblocking,
                          .comm = comm, .req = req};
        int passed;
        mpi_errno = device_op(&c, (void *)buf, count, dt, &a, bt, &r, &passed);
        if (passed) return mpi_errno; /* MPI's own call (and result) */
        if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    } else {
        mpiacc_dispatch_empty(&count, &dt);
        if (!mpiacc_dispatch_no_deferred())
            MPIACC_CHECK(host_send_ordered(buf, count, dt, dest, tag, comm, mode, &r, &deferred));
        if (!deferred) {
            /* Nothing to order behind: plain MPI (its own error handling). */
            return nonblocking ? pmpi_isend(buf, count, dt, dest, tag, comm, mode, req)
                               : pmpi_send(buf, count, dt, dest, tag, comm, mode);
        }
    }
    if (nonblocking) *req = r;
    else return wait_on(&r, MPI_STATUS_IGNORE, comm);
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

int mpiacc_dispatch_recv_matched(int src, int tag, MPI_Comm comm)
{
    return src != MPI_PROC_NULL && ((src == MPI_ANY_SOURCE && mpiacc_core_wildcard_probe) ||
                                    mpiacc_rp_match_behind(src, tag, comm));
}

/* A host receive: MPI's own, except one from MPI_ANY_SOURCE while those go
 * through a matched probe (mpiacc_core_wildcard_probe: MPICH's UCX netmod
 * loses a wildcard receive whose message already waits at UCX), and one
 * called while such a receive of the pool could still take its message
 * (MPI would give the message to the receive called first).  Blocking:
 * the pool's earlier receives get their chance first, then a wildcard
 * call probes until its message is there and receives it (PMPI_Mrecv:
 * MPI's result, raised by MPI), a named one is MPI's.  Nonblocking: an op
 * of the wildcard protocol (src/protocol/wildcard.c) holding a dup of the
 * datatype. */
static int host_recv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                     MPI_Status *status, int nonblocking, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS, flag = 0;
    MPI_Message msg = MPI_MESSAGE_NULL;
    mpiacc_rp_op_t *op = NULL;
    mpiacc_dispatch_empty(&count, &dt);
    if (!mpiacc_dispatch_recv_matched(src, tag, comm))
        return nonblocking ? PMPI_Irecv_c(buf, count, dt, src, tag, comm, req)
                           : pmpi_recv(buf, count, dt, src, tag, comm, status);
    if (!nonblocking) {
        while (!flag) {
            if (mpiacc_rp_match_pending_for(src, tag, comm)) continue; /* an earlier receive comes first */
            if (src != MPI_ANY_SOURCE) return pmpi_recv(buf, count, dt, src, tag, comm, status);
            if ((mpi_errno = PMPI_Improbe(MPI_ANY_SOURCE, tag, comm, &flag, &msg, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return mpi_errno; /* raised by MPI */
        }
        return PMPI_Mrecv_c(buf, count, dt, &msg, status);
    }
    if (!req) MPIACC_FAIL(MPIACC_ERRK_ARG, "the request argument is NULL");
    if (!(op = mpiacc_rp_op_alloc(0, MPIACC_RP_SEND_STD, buf, count, src, tag, comm)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an operation");
    op->proto = &mpiacc_proto_wildcard;
    MPIACC_CHECK(PMPI_Type_dup(dt, &op->host_type)); /* the application may free dt now */
    mpi_errno = mpiacc_rp_submit(op, req, 0);
    op = NULL; /* disposed of by submit on failure */
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
fn_exit:
    return mpi_errno;
fn_fail:
    mpiacc_rp_discard(op);
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

static int recv_call(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *status,
                     int nonblocking, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Request r = MPI_REQUEST_NULL;
    mpiacc_attrs_t a;
    mpiacc_pack_type_t *bt = NULL;

    if (mpiacc_core_classify && mpiacc_dispatch_untagged_host(dt, buf, comm)) /* see mpiacc_dispatch_send */
        return host_recv(buf, count, dt, src, tag, comm, status, nonblocking, req);
    MPIACC_CHECK(check_args(0, count, dt, src, tag, comm, nonblocking, req));
    mpiacc_core_trace_mark(MPIACC_CORE_TR_CHECK);
    if (src != MPI_PROC_NULL) {
        MPIACC_CHECK(mpiacc_dispatch_attrs_type(dt, buf, comm, &a, &bt));
        mpiacc_core_trace_mark(MPIACC_CORE_TR_ATTR);
        if (wants_pool(&a) && mpiacc_core_disabled) MPIACC_CHECK(disabled_error(&a));
    }
    /* MPI_PROC_NULL, or no byte to move (empty.c: 0 MPI_BYTE, wildcards
     * matched as for host receives): MPI's receive */
    if (src == MPI_PROC_NULL || !wants_pool(&a) || mpiacc_dispatch_no_bytes(count, dt))
        return host_recv(buf, count, dt, src, tag, comm, status, nonblocking, req);
    {
        const call_t c = {.is_send = 0, .peer = src, .tag = tag, .mode = MPIACC_RP_SEND_STD,
                          .nonblocking = nonblocking, .comm = comm, .req = req, .status = status};
        int passed;
        mpi_errno = device_op(&c, buf, count, dt, &a, bt, &r, &passed);
        if (passed) return mpi_errno; /* MPI's own call (and result) */
        if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    }
    if (nonblocking) *req = r;
    else return wait_on(&r, status, comm);
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

/* The entry points, each one call record of core/trace.h (bench/pingpong
 * --breakdown; nothing when tracing is off). */
int mpiacc_dispatch_send(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                         int mode, int nonblocking, MPI_Request *req)
{
    int rc;
    mpiacc_core_trace_begin();
    rc = send_call(buf, count, dt, dest, tag, comm, mode, nonblocking, req);
    mpiacc_core_trace_end(1);
    return rc;
}

int mpiacc_dispatch_recv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                         MPI_Status *status, int nonblocking, MPI_Request *req)
{
    int rc;
    mpiacc_core_trace_begin();
    rc = recv_call(buf, count, dt, src, tag, comm, status, nonblocking, req);
    mpiacc_core_trace_end(0);
    return rc;
}

int mpiacc_dispatch_start(int is_send, void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                          int mode, const mpiacc_attrs_t *a, mpiacc_pack_type_t *t, MPI_Request *req)
{
    int mpi_errno, passed;
    MPI_Request r = MPI_REQUEST_NULL;
    const call_t c = {.is_send = is_send, .peer = peer, .tag = tag, .mode = mode, .nonblocking = 1, .comm = comm,
                      .req = req};
    mpiacc_core_trace_begin();
    mpi_errno = device_op(&c, buf, count, dt, a, t, &r, &passed);
    if (!passed) {
        if (mpi_errno == MPI_SUCCESS) *req = r;
        else mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    }
    mpiacc_core_trace_end(is_send);
    return mpi_errno;
}

int mpiacc_dispatch_sendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                             void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                             MPI_Status *status)
{
    int mpi_errno = MPI_SUCCESS, err;
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Comm c;

    /* Both halves' arguments first, as MPI_Sendrecv does. */
    MPIACC_CHECK(check_args(1, scount, stype, dest, stag, comm, 0, NULL));
    MPIACC_CHECK(check_args(0, rcount, rtype, src, rtag, comm, 0, NULL));
    /* Receive first so that a send to self finds it posted. */
    mpi_errno = mpiacc_dispatch_recv(rbuf, rcount, rtype, src, rtag, comm, NULL, 1, &reqs[0]);
    if (mpi_errno != MPI_SUCCESS) return mpi_errno;
    mpi_errno = mpiacc_dispatch_send(sbuf, scount, stype, dest, stag, comm, MPIACC_RP_SEND_STD, 1, &reqs[1]);
    if (mpi_errno != MPI_SUCCESS) {
        PMPI_Cancel(&reqs[0]);
        PMPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        return mpi_errno;
    }
    /* One error raised, on comm: the receive's, else the send's. */
    mpi_errno = wait_on(&reqs[0], status, comm);
    if (mpi_errno == MPI_SUCCESS) return wait_on(&reqs[1], MPI_STATUS_IGNORE, comm);
    mpiacc_rp_wait(&reqs[1], MPI_STATUS_IGNORE, &err, &c);
    return mpi_errno;
fn_fail:
    return mpiacc_err_return_comm(comm, mpi_errno);
}

int mpiacc_dispatch_pack(int packing, const void *inbuf, MPI_Count insize_or_count, MPI_Datatype dt,
                         void *outbuf, MPI_Count outsize_or_count, MPI_Count *position, MPI_Comm comm, int *host)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_attrs_t a;
    *host = 0;
    MPIACC_CHECK(mpiacc_dispatch_attrs(dt, packing ? inbuf : outbuf, comm, &a));
    if (!wants_pool(&a)) {
        *host = 1;
        goto fn_exit;
    }
    if (mpiacc_core_disabled) MPIACC_CHECK(disabled_error(&a));
    if (packing)
        MPIACC_CHECK(mpiacc_dispatch_pack_device(1, (void *)inbuf, insize_or_count, dt, &a, outbuf,
                                                 outsize_or_count, position));
    else
        MPIACC_CHECK(mpiacc_dispatch_pack_device(0, outbuf, outsize_or_count, dt, &a, (void *)inbuf,
                                                 insize_or_count, position));
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

/* ---- shared with persist.c, bsend.c, sendrecv.c, mrecv.c ------------------ */

int mpiacc_dispatch_check_args(int is_send, MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                               int nonblocking, const MPI_Request *req)
{
    return check_args(is_send, count, dt, peer, tag, comm, nonblocking, req);
}

int mpiacc_dispatch_wants_pool(const mpiacc_attrs_t *a)
{
    return wants_pool(a);
}

int mpiacc_dispatch_disabled_error(const mpiacc_attrs_t *a)
{
    return disabled_error(a);
}

int mpiacc_dispatch_wait(MPI_Request *r, MPI_Status *st, MPI_Comm comm)
{
    return wait_on(r, st, comm);
}
