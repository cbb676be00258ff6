/*
 * protocol/direct.c: the protocol choice — `choose`, the one function that
 * decides which protocol carries an operation: at its call (staged, or on
 * a direct communicator eager, IPC or pipelined), and again when the
 * message decides (a receive's first message, an IPC export or import
 * refused, a receiver that declines IPC) — and the direct family's common
 * part: the per-operation state, the receive until its first message, and
 * the steps eager.c, pipeline.c and ipc.c share (mpiacc_proto_dx_*).
 * States: src/reqpool/op.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/backend_ipc.h"
#include "direct.h"

static atomic_uint next_id;
atomic_long mpiacc_proto_direct_count[MPIACC_PROTO_N_MAX];

/* ---- the choice ------------------------------------------------------------ */

static const struct mpiacc_backend_ipc *test_table[MPIACC_KIND_MAX];

void mpiacc_proto_dx_ipc_test_table(int kind, const struct mpiacc_backend_ipc *t)
{
    if (kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX) test_table[kind] = t;
}

const struct mpiacc_backend_ipc *mpiacc_proto_dx_ipc_of(const mpiacc_rp_op_t *op)
{
    if (test_table[op->attrs.kind]) return test_table[op->attrs.kind];
    return op->be ? op->be->ipc : NULL;
}

const struct mpiacc_backend_ipc *mpiacc_proto_dx_ipc_for(int kind, const mpiacc_backend_t *be)
{
    if (kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX && test_table[kind]) return test_table[kind];
    return be ? be->ipc : NULL;
}

/* Whether a send should be offered by IPC (the backend has IPC, MPIACC_IPC
 * is not 0, the peer shares the node); logs the reason once when not. */
static int ipc_wanted(const mpiacc_rp_op_t *op, const mpiacc_proto_comm_t *dc)
{
    if (!mpiacc_proto_dx_ipc_of(op)) {
        mpiacc_proto_note(MPIACC_PROTO_NOTE_NO_IPC, "%s buffers have no IPC: large messages are pipelined",
                          mpiacc_kind_name(op->attrs.kind));
        return 0;
    }
    if (!mpiacc_proto_cfg.ipc) {
        mpiacc_proto_note(MPIACC_PROTO_NOTE_IPC_OFF, "MPIACC_IPC=0: large messages are pipelined");
        return 0;
    }
    if (op->peer < 0 || op->peer >= dc->size || !dc->same_node[op->peer]) {
        mpiacc_proto_note(MPIACC_PROTO_NOTE_REMOTE, "peers on other nodes: large messages to them are pipelined");
        return 0;
    }
    return 1;
}

/* Whether this receive can take an IPC offer h (the same buffer kind, IPC
 * here, MPIACC_IPC not 0); logs the reason once when not. */
static int ipc_importable(const mpiacc_rp_op_t *op, const mpiacc_wire_hdr_t *h)
{
    const struct mpiacc_backend_ipc *ipc = mpiacc_proto_dx_ipc_of(op);
    if (ipc && h->buf_kind == (uint32_t)op->attrs.kind && mpiacc_proto_cfg.ipc) return 1;
    mpiacc_proto_note(MPIACC_PROTO_NOTE_DECLINED, "IPC offered to a %s receive %s: pipelined instead",
                      mpiacc_kind_name(op->attrs.kind),
                      !ipc ? "without IPC" : !mpiacc_proto_cfg.ipc ? "with MPIACC_IPC=0" : "of another buffer kind");
    return 0;
}

/* Eager up to the communicator's eager limit, else pipelined staging
 * (counted: the message is sent so). */
static const mpiacc_proto_t *eager_or_pipelined(const mpiacc_rp_op_t *op, const mpiacc_proto_comm_t *dc)
{
    if (op->bytes <= dc->eager_max) {
        mpiacc_proto_count(MPIACC_PROTO_N_EAGER_SENT);
        return &mpiacc_proto_eager.table;
    }
    mpiacc_proto_count(MPIACC_PROTO_N_PIPE_SENT);
    return &mpiacc_proto_pipeline.table;
}

/* The reason `choose` is asked at an operation's call (the dispatcher's). */
#define AT_CALL (-1)

/* THE choice: the protocol that carries op (at its call: AT_CALL), or
 * carries it on when its message decides (why).  Every protocol choice of
 * the library is made here; NULL: a first message of no known kind.
 *  - not direct (no per-op state): staged;
 *  - a direct send at its call: IPC for CUDA messages of at least
 *    MPIACC_IPC_MIN bytes (default 0: all) when the peer and the memory
 *    allow it (measured on an H200: one GPU operation per message, the
 *    receiver's copy, beats eager's two, pack and unpack, from 64 B up),
 *    else eager up to the communicator's eager limit (an empty message
 *    always: nothing to export), else pipelined;
 *  - a direct receive at its call: the direct receive, until its first
 *    message names the protocol (EAGER, RTS_PIPE, RTS_IPC);
 *  - an IPC send whose buffer cannot be exported: eager or pipelined by
 *    size; whose receiver declines (CTS_PIPE): pipelined;
 *  - an IPC receive: IPC when this side can import, else pipelined (the
 *    sender is told with CTS_PIPE); an import refused: pipelined. */
static const mpiacc_proto_t *choose(const mpiacc_rp_op_t *op, int why, const mpiacc_wire_hdr_t *h)
{
    const mpiacc_proto_dx_state_t *ds = op->pstate;
    if (why == AT_CALL && !ds) return &mpiacc_proto_staged;
    switch (why) {
    case MPIACC_PROTO_DX_FIRST:
        switch (h->kind) {
        case MPIACC_WIRE_EAGER: mpiacc_proto_count(MPIACC_PROTO_N_EAGER_RECV); return &mpiacc_proto_eager.table;
        case MPIACC_WIRE_RTS_PIPE: mpiacc_proto_count(MPIACC_PROTO_N_PIPE_RECV); return &mpiacc_proto_pipeline.table;
        case MPIACC_WIRE_RTS_IPC: return &mpiacc_proto_ipc.table; /* it reads the offer, then asks again */
        default: return NULL;
        }
    case MPIACC_PROTO_DX_NO_EXPORT:
        mpiacc_proto_count(MPIACC_PROTO_N_IPC_FALLBACK);
        return eager_or_pipelined(op, ds->dc);
    case MPIACC_PROTO_DX_DECLINED:
        mpiacc_proto_note(MPIACC_PROTO_NOTE_DECLINED, "a receiver declined IPC (another buffer kind, no IPC there, "
                                                      "or the import failed): pipelined instead");
        return &mpiacc_proto_pipeline.table;
    case MPIACC_PROTO_DX_IPC_OFFER:
        if (ipc_importable(op, h)) return &mpiacc_proto_ipc.table;
        mpiacc_proto_count(MPIACC_PROTO_N_IPC_DECLINED);
        return &mpiacc_proto_pipeline.table;
    case MPIACC_PROTO_DX_NO_IMPORT:
        mpiacc_proto_count(MPIACC_PROTO_N_IPC_DECLINED);
        return &mpiacc_proto_pipeline.table;
    default: /* AT_CALL */
        if (!op->is_send) return &mpiacc_proto_direct_recv;
        if (op->bytes > 0 && (op->bytes > ds->dc->eager_max || op->bytes >= mpiacc_proto_cfg.ipc_min) &&
            ipc_wanted(op, ds->dc))
            return &mpiacc_proto_ipc.table; /* counted once exported (ipc.c) */
        return eager_or_pipelined(op, ds->dc);
    }
}

/* The direct protocol's per-op state, and a reference on dc. */
static int dx_setup(mpiacc_rp_op_t *op, mpiacc_proto_comm_t *dc)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = calloc(1, sizeof *ds);
    MPI_Count small;

    if (!ds) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a direct operation");
    mpiacc_proto_comm_ref(dc);
    ds->dc = dc;
    ds->peer = op->peer;
    ds->ctl_peer = mpiacc_proto_comm_ctl_rank(dc, op->peer);
    ds->first_req = ds->back = MPI_REQUEST_NULL;
    ds->lane = -1;
    for (int i = 0; i < MPIACC_PROTO_DX_RING; i++) {
        ds->slot[i].req = MPI_REQUEST_NULL;
        ds->slot[i].index = -1;
    }
    op->pstate = ds;
    op->comm = dc->data; /* the first message; also the send queue's key */
    if (op->is_send) {
        ds->id = atomic_fetch_add(&next_id, 1);
        ds->total = op->bytes;
        /* MPIACC_PIPELINE_CHUNK bytes of data per chunk (the header comes
         * on top, so a power-of-two message is a whole number of chunks,
         * not one more with its last few bytes) */
        ds->chunk = mpiacc_proto_cfg.chunk;
        ds->nchunks = (ds->total + ds->chunk - 1) / ds->chunk;
    } else {
        ds->rbytes = op->bytes;
        small = ds->rbytes < dc->eager_max ? ds->rbytes : dc->eager_max;
        ds->first_cap = MPIACC_WIRE_HDR + (small > MPIACC_WIRE_RTS_INLINE_MAX ? small : MPIACC_WIRE_RTS_INLINE_MAX);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_choose(mpiacc_rp_op_t *op, mpiacc_proto_comm_t *dc)
{
    int mpi_errno = MPI_SUCCESS;
    if (dc) MPIACC_CHECK(dx_setup(op, dc));
    op->proto = choose(op, AT_CALL, NULL);
    if (dc)
        MPIACC_LOG(MPIACC_LOG_DEBUG, "direct %s of %lld bytes %s %d tag %d: %s", op->is_send ? "send" : "receive",
                   (long long)op->bytes, op->is_send ? "to" : "from", op->peer, op->tag, op->proto->name);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_dx_rechoose(mpiacc_rp_op_t *op, mpiacc_proto_dx_why_t why, const mpiacc_wire_hdr_t *h,
                             int *complete)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_proto_t *p = choose(op, why, h);
    const mpiacc_proto_dx_t *dx = (const mpiacc_proto_dx_t *)p; /* the table is its first member */

    if (!p)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct protocol: a first message of kind %u from rank %d", (unsigned)h->kind,
                    op->st_source);
    if (p == op->proto) goto fn_exit; /* an IPC offer this side takes */
    op->proto = p;
    switch (why) {
    case MPIACC_PROTO_DX_NO_EXPORT: /* at call time: the new protocol's staging */
        MPIACC_CHECK(p->prepare ? p->prepare(op) : MPI_SUCCESS);
        break;
    case MPIACC_PROTO_DX_DECLINED:
        MPIACC_CHECK(dx->send_resume(op));
        break;
    case MPIACC_PROTO_DX_IPC_OFFER:
    case MPIACC_PROTO_DX_NO_IMPORT: /* the sender streams the message once it reads CTS_PIPE */
        MPIACC_CHECK(mpiacc_proto_dx_send_back(op, MPIACC_WIRE_CTS_PIPE));
        /* fall through */
    case MPIACC_PROTO_DX_FIRST:
        MPIACC_CHECK(dx->recv_begin(op, h, complete));
        break;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- helpers ----------------------------------------------------------------- */

int mpiacc_proto_dx_test(MPI_Request *r, MPI_Status *st, int *done)
{
    MPI_Status ignored;
    *done = 1;
    if (*r == MPI_REQUEST_NULL) return MPI_SUCCESS;
    if (!MPIX_Request_is_complete(*r)) {
        *done = 0;
        return MPI_SUCCESS;
    }
    return PMPI_Wait(r, st ? st : &ignored); /* complete: no progress entered */
}

int mpiacc_proto_dx_retire(mpiacc_rp_op_t *op, MPI_Request *r, void **buf, int cls, int is_recv)
{
    int kept = 0;
    if (*r != MPI_REQUEST_NULL) {
        if (is_recv) PMPI_Cancel(r);
        if (MPIX_Request_is_complete(*r)) {
            PMPI_Wait(r, MPI_STATUS_IGNORE);
        } else {
            /* MPI may still use the buffer: it is not recycled. */
            PMPI_Request_free(r);
            MPIACC_LOG(MPIACC_LOG_DEBUG, "direct: a message to/from %d was given up; its buffer is not reused",
                       op->peer);
            kept = 1;
            if (buf) *buf = NULL;
        }
    }
    if (buf && *buf && cls < 0) free(*buf); /* a probed message's (direct_probe.c) */
    else if (buf && *buf) mpiacc_proto_staging_put(op->attrs.kind, *buf, cls);
    if (buf) *buf = NULL;
    return kept;
}

int mpiacc_proto_dx_dep(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    return ds->dep_ready ? MPI_SUCCESS : mpiacc_proto_dep_test(op, &ds->dep_ready);
}

int mpiacc_proto_dx_post_back(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    return PMPI_Irecv(ds->backbuf, (int)sizeof ds->backbuf, MPI_BYTE, ds->ctl_peer,
                      mpiacc_wire_tag_back(ds->id, ds->dc->tag_mod), ds->dc->ctl, &ds->back);
}

MPI_Count mpiacc_proto_dx_fill_error(void *msg, mpiacc_wire_kind_t kind, uint32_t id, int err, MPI_Count room)
{
    mpiacc_wire_hdr_t h;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;
    mpiacc_wire_init(&h, kind, id);
    if (err != MPI_SUCCESS) {
        PMPI_Error_class(err, &cls);
        if (PMPI_Error_string(err, text, &len) != MPI_SUCCESS) len = 0;
        if (len > MPIACC_WIRE_FIN_TEXT) len = MPIACC_WIRE_FIN_TEXT;
        if (len > room) len = (int)room;
        memcpy((char *)msg + MPIACC_WIRE_HDR, text, (size_t)len);
    }
    h.err_class = cls;
    h.extra_bytes = (uint32_t)len;
    memcpy(msg, &h, sizeof h);
    return MPIACC_WIRE_HDR + len;
}

int mpiacc_proto_dx_send_back(mpiacc_rp_op_t *op, mpiacc_wire_kind_t kind)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    MPI_Count n = mpiacc_proto_dx_fill_error(ds->backbuf, kind, ds->id, ds->failed ? op->error : MPI_SUCCESS,
                                          MPIACC_WIRE_FIN_TEXT);
    return PMPI_Isend(ds->backbuf, (int)n, MPI_BYTE, ds->ctl_peer, mpiacc_wire_tag_back(ds->id, ds->dc->tag_mod),
                      ds->dc->ctl, &ds->back);
}

int mpiacc_proto_dx_close(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    MPIACC_CHECK(mpiacc_proto_dx_send_back(op, MPIACC_WIRE_FIN));
    mpiacc_rp_move(op, MPIACC_RP_CLOSING);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_dx_back_arrived(mpiacc_rp_op_t *op, mpiacc_wire_hdr_t *h, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    MPI_Status st;
    MPI_Count n = 0;
    MPIACC_CHECK(mpiacc_proto_dx_test(&ds->back, &st, done));
    if (!*done) goto fn_exit;
    PMPI_Get_count_c(&st, MPI_BYTE, &n);
    MPIACC_CHECK(mpiacc_wire_read(ds->backbuf, n, h));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_dx_fin_arrived(mpiacc_rp_op_t *op, const mpiacc_wire_hdr_t *h)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    if (h->kind != MPIACC_WIRE_FIN)
        return mpiacc_err(MPIACC_ERRK_INTERN, "direct %s send: answer of kind %u from rank %d", op->proto->name,
                          (unsigned)h->kind, ds->peer);
    if (h->err_class != MPI_SUCCESS && op->error == MPI_SUCCESS)
        op->error = mpiacc_proto_dx_peer_error(h, ds->backbuf, ds->peer, "receiver");
    return MPI_SUCCESS;
}

void mpiacc_proto_dx_recv_fit(mpiacc_rp_op_t *op, MPI_Count total)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ds->total = total;
    op->bytes = total < ds->rbytes ? total : ds->rbytes;
    if (total > ds->rbytes)
        op->error = mpiacc_err(MPIACC_ERRK_TRUNCATE,
                               "message of %lld packed bytes from rank %d tag %d truncated to the receive's %lld",
                               (long long)total, op->st_source, op->st_tag, (long long)ds->rbytes);
}

static mpiacc_errk_t kind_of_class(int cls)
{
    switch (cls) {
    case MPI_ERR_ARG: return MPIACC_ERRK_ARG;
    case MPI_ERR_TYPE: return MPIACC_ERRK_TYPE;
    case MPI_ERR_BUFFER: return MPIACC_ERRK_BUFFER;
    case MPI_ERR_COUNT: return MPIACC_ERRK_COUNT;
    case MPI_ERR_TRUNCATE: return MPIACC_ERRK_TRUNCATE;
    case MPI_ERR_NO_MEM: return MPIACC_ERRK_NOMEM;
    case MPI_ERR_INTERN: return MPIACC_ERRK_INTERN;
    default: return MPIACC_ERRK_BACKEND; /* MPI_ERR_OTHER */
    }
}

int mpiacc_proto_dx_peer_error(const mpiacc_wire_hdr_t *h, const void *msg, int peer, const char *who)
{
    int len = (int)(h->extra_bytes < MPIACC_WIRE_FIN_TEXT ? h->extra_bytes : MPIACC_WIRE_FIN_TEXT);
    return mpiacc_err(kind_of_class(h->err_class), "direct protocol: the %s (rank %d) failed: %.*s", who, peer, len,
                      (const char *)msg + MPIACC_WIRE_HDR);
}

/* ---- the tables' shared entries ------------------------------------------------ */

int mpiacc_proto_dx_no_received(mpiacc_rp_op_t *op, int *complete)
{
    *complete = 0;
    return mpiacc_err(MPIACC_ERRK_INTERN, "%s protocol: unexpected receive completion", op->proto->name);
}

void mpiacc_proto_dx_release(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    int kept;
    if (!ds) return;
    if (ds->ipc_release) ds->ipc_release(op);
    for (int i = 0; i < MPIACC_PROTO_DX_RING; i++) {
        mpiacc_proto_dx_slot_t *s = &ds->slot[i];
        if (s->xfer) {
            int done = 0;
            if (op->be->test(s->xfer, &done) != MPI_SUCCESS) done = 1; /* failed: nothing runs */
            op->be->release(s->xfer);
            s->xfer = NULL;
            if (!done) s->buf = NULL; /* the device may still use it: not reused */
        }
        mpiacc_proto_dx_retire(op, &s->req, &s->buf, s->cls, !op->is_send);
    }
    mpiacc_proto_dx_retire(op, &ds->first_req, &ds->first, ds->first_cls, 0);
    kept = mpiacc_proto_dx_retire(op, &ds->back, NULL, 0, op->is_send);
    op->comm = op->user_comm;
    mpiacc_proto_comm_unref(ds->dc);
    if (!kept) free(ds); /* else MPI may still use ds->backbuf: not freed */
    op->pstate = NULL;
}

/* ---- the receive, until its first message has arrived ----------------------- */

static int recv_prepare(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    return mpiacc_proto_staging_get(op->attrs.kind, ds->first_cap, &ds->first, &ds->first_cls);
}

/* NEW -> IN_FLIGHT: the first message's receive, posted at call time on
 * the data communicator with the user's source and tag (or the one a
 * probe already took, direct_probe.c). */
static int recv_start(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    void *probed;
    MPI_Count len;
    if (mpiacc_proto_probe_take(ds->dc, op->peer, op->tag, &probed, &len, &op->inner)) {
        /* a probe took the message already: its first message is (being)
         * received into a buffer of its own */
        mpiacc_proto_staging_put(op->attrs.kind, ds->first, ds->first_cls);
        ds->first = probed;
        ds->first_cls = -1;
        ds->first_cap = len;
    } else {
        MPIACC_CHECK(PMPI_Irecv_c(ds->first, ds->first_cap, MPI_BYTE, op->peer, op->tag, op->comm, &op->inner));
    }
    mpiacc_rp_move(op, MPIACC_RP_IN_FLIGHT);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The first message landed (op->bytes of it): its header says how the
 * message travels. */
static int recv_received(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    mpiacc_wire_hdr_t h;

    *complete = 0;
    MPIACC_CHECK(mpiacc_wire_read(ds->first, op->bytes, &h));
    ds->id = h.op_id;
    ds->peer = op->st_source;
    ds->ctl_peer = mpiacc_proto_comm_ctl_rank(ds->dc, op->st_source);
    if (h.kind == MPIACC_WIRE_ABORT) { /* the sender failed before sending its data */
        op->bytes = 0;
        op->error = mpiacc_proto_dx_peer_error(&h, ds->first, op->st_source, "sender");
        *complete = 1;
        goto fn_exit;
    }
    MPIACC_CHECK(mpiacc_proto_dx_rechoose(op, MPIACC_PROTO_DX_FIRST, &h, complete));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int recv_advance(mpiacc_rp_op_t *op, int *complete)
{
    return mpiacc_err(MPIACC_ERRK_INTERN, "direct receive: unexpected state %d", (int)op->state);
}

static int recv_issue(mpiacc_rp_op_t *op)
{
    return mpiacc_err(MPIACC_ERRK_INTERN, "direct receive: a receive cannot send");
}

const mpiacc_proto_t mpiacc_proto_direct_recv = {
    .name = "direct receive",
    .prepare = recv_prepare,
    .start = recv_start,
    .advance = recv_advance,
    .issue = recv_issue,
    .received = recv_received,
    .release = mpiacc_proto_dx_release,
};
