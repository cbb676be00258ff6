/*
 * protocol/ipc.c: the direct protocol through the backend's interprocess
 * memory (src/core/backend_ipc.h, CUDA IPC): for messages above the eager
 * limit to a peer on the same node, when the sender's backend has `ipc`,
 * MPIACC_IPC is not 0 and the buffer can be exported.
 *
 * Sender, at call time: export_buf (the allocation's handle and an
 * interprocess event recorded behind the data dependency — no waiting);
 * its first message, RTS_IPC on the data communicator with the user's tag,
 * carries the export, the message size, the pipelined chunking (for a
 * fallback), the sender's count and its datatype blob (inline when it fits
 * MPIACC_WIRE_RTS_INLINE_MAX, else a BLOB message on ctl right behind it).
 * It then waits (WAIT_FIN) for the receiver's answer on ctl: FIN (with the
 * receiver's failure, if any: the send completes with it) or CTS_PIPE (the
 * receiver cannot use IPC: the chooser, direct.c, hands the send to the
 * pipelined protocol, which streams it).  export_release once the
 * receiver is done.
 *
 * Receiver, once the RTS matched (direct.c): with the same buffer kind and
 * IPC in its own backend, import_copy moves packed bytes [0, min(sent,
 * capacity)) from the sender's layout straight into its own (COPYING),
 * then FIN (CLOSING); a truncated message completes with MPI_ERR_TRUNCATE,
 * the part that fits written.  Otherwise — another buffer kind, no IPC, or
 * import_copy refusing at call time — it answers CTS_PIPE and receives the
 * message pipelined (both decided by the chooser, direct.c).  A copy that
 * fails on the device completes both sides with the error.  Fallbacks are logged once per cause at MPIACC_LOG=info.
 */
#include <stdlib.h>

#include "core/backend_ipc.h"
#include "core/tstamp.h"
#include "direct.h"

typedef struct ipc_state {
    const struct mpiacc_backend_ipc *ipc;
    mpiacc_ipc_export_t x;
    void *token;          /* sender: the export's reservation          */
    void *blob;           /* BLOB message (send) / its buffer (receive) */
    int blob_cls;
    MPI_Request blob_req;
    size_t blob_bytes;
    int blob_inline;
    MPI_Count count;      /* the sender's count                         */
    void *xfer;           /* receiver: the copy                          */
    int copy_started;     /* receiver: import_copy called                */
    int fin_seen;         /* sender: the receiver's FIN arrived          */
} ipc_state_t;

static ipc_state_t *ipc_st(mpiacc_rp_op_t *op)
{
    return (ipc_state_t *)mpiacc_proto_dx(op)->ipc;
}

static void ipc_release(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ipc_state_t *is = ds->ipc;
    int kept;
    if (!is) return;
    if (is->xfer) op->be->release(is->xfer);
    is->xfer = NULL;
    if (is->token && is->ipc->export_release) is->ipc->export_release(is->token);
    is->token = NULL;
    kept = mpiacc_proto_dx_retire(op, &is->blob_req, &is->blob, is->blob_cls, !op->is_send);
    if (!kept) free(is);
    ds->ipc = NULL;
    ds->ipc_release = NULL;
}

static int ipc_state_new(mpiacc_rp_op_t *op, ipc_state_t **out)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ipc_state_t *is = calloc(1, sizeof *is);
    *out = is;
    if (!is) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for an IPC transfer");
    is->blob_req = MPI_REQUEST_NULL;
    is->ipc = mpiacc_proto_dx_ipc_of(op);
    ds->ipc = is;
    ds->ipc_release = ipc_release;
    return MPI_SUCCESS;
}

/* ---- send -------------------------------------------------------------------------- */

/* At call time: the export and the RTS; when the buffer cannot be
 * exported, the chooser's eager or pipelined protocol instead. */
static int send_prepare(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS, ok = 0, err;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ipc_state_t *is;
    mpiacc_wire_hdr_t h;
    MPI_Aint lo, hi;
    char *p;

    MPIACC_CHECK(ipc_state_new(op, &is));
    /* the bytes count x type touch, from the canonical form (never MPI's
     * true bounds: they need not be where the data is) */
    {
        MPI_Count clo, chi;
        MPIACC_CHECK(mpiacc_pack_span(op->type, op->count, &clo, &chi));
        lo = (MPI_Aint)clo;
        hi = (MPI_Aint)chi;
    }
    MPIACC_TS(MPIACC_TS_EXPORT_BEGIN);
    err = is->ipc->export_buf(&op->attrs, op->dep, op->buf, lo, hi, &is->x, &is->token, &ok);
    MPIACC_TS(MPIACC_TS_EXPORT_END);
    if (err != MPI_SUCCESS || !ok) {
        char why[MPI_MAX_ERROR_STRING] = "the memory cannot be exported";
        int len;
        if (err != MPI_SUCCESS) PMPI_Error_string(err, why, &len);
        mpiacc_proto_note(MPIACC_PROTO_NOTE_EXPORT, "IPC export refused (%s): eager or pipelined instead", why);
        ipc_release(op);
        return mpiacc_proto_dx_rechoose(op, MPIACC_PROTO_DX_NO_EXPORT, NULL, NULL);
    }
    mpiacc_proto_count(MPIACC_PROTO_N_IPC_SENT);
    is->blob_bytes = op->type->blob_bytes;
    is->blob_inline = sizeof is->x + is->blob_bytes <= MPIACC_WIRE_RTS_INLINE_MAX;
    ds->first_cap = MPIACC_WIRE_HDR + (MPI_Count)sizeof is->x + (is->blob_inline ? (MPI_Count)is->blob_bytes : 0);
    MPIACC_CHECK(mpiacc_proto_staging_get(op->attrs.kind, ds->first_cap, &ds->first, &ds->first_cls));
    mpiacc_wire_init(&h, MPIACC_WIRE_RTS_IPC, ds->id);
    h.flags = is->blob_inline ? MPIACC_WIRE_INLINE_BLOB : 0;
    h.total = ds->total;
    h.chunk = ds->chunk;
    h.index = ds->nchunks;
    h.count = op->count;
    h.blob_bytes = (uint32_t)is->blob_bytes;
    h.export_bytes = (uint32_t)sizeof is->x;
    h.extra_bytes = (uint32_t)(ds->first_cap - MPIACC_WIRE_HDR);
    h.buf_kind = (uint32_t)op->attrs.kind;
    p = ds->first;
    memcpy(p, &h, sizeof h);
    memcpy(p + MPIACC_WIRE_HDR, &is->x, sizeof is->x);
    if (is->blob_inline) {
        memcpy(p + MPIACC_WIRE_HDR + sizeof is->x, op->type->blob, is->blob_bytes);
    } else {
        MPIACC_CHECK(mpiacc_proto_staging_get(op->attrs.kind, MPIACC_WIRE_HDR + (MPI_Count)is->blob_bytes,
                                              &is->blob, &is->blob_cls));
        mpiacc_wire_init(&h, MPIACC_WIRE_BLOB, ds->id);
        h.blob_bytes = h.extra_bytes = (uint32_t)is->blob_bytes;
        memcpy(is->blob, &h, sizeof h);
        memcpy((char *)is->blob + MPIACC_WIRE_HDR, op->type->blob, is->blob_bytes);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* NEW -> READY: the RTS waits only for its turn. */
static int send_start(mpiacc_rp_op_t *op)
{
    mpiacc_rp_move(op, MPIACC_RP_READY);
    return MPI_SUCCESS;
}

/* READY -> WAIT_FIN: the RTS (and the blob) posted, the answer awaited. */
static int issue(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ipc_state_t *is = ipc_st(op);
    MPIACC_CHECK(mpiacc_rp_isend(op, ds->first, ds->first_cap, MPI_BYTE));
    ds->first_req = op->inner;
    op->inner = MPI_REQUEST_NULL;
    MPIACC_TS(MPIACC_TS_RTS_POSTED);
    if (!is->blob_inline)
        MPIACC_CHECK(PMPI_Isend_c(is->blob, MPIACC_WIRE_HDR + (MPI_Count)is->blob_bytes, MPI_BYTE, ds->ctl_peer,
                                  mpiacc_wire_tag_fwd(ds->id, ds->dc->tag_mod), ds->dc->ctl, &is->blob_req));
    MPIACC_CHECK(mpiacc_proto_dx_post_back(op));
    mpiacc_rp_move(op, MPIACC_RP_WAIT_FIN);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int send_advance(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS, done;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ipc_state_t *is = ipc_st(op);
    mpiacc_wire_hdr_t h;

    if (op->state != MPIACC_RP_WAIT_FIN)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "IPC send: unexpected state %d", (int)op->state);
    MPIACC_CHECK(mpiacc_proto_dx_test(&ds->first_req, NULL, &done));
    MPIACC_CHECK(mpiacc_proto_dx_test(&is->blob_req, NULL, &done));
    if (!is->fin_seen) {
        MPIACC_CHECK(mpiacc_proto_dx_back_arrived(op, &h, &done));
        if (!done) goto fn_exit;
        if (h.kind == MPIACC_WIRE_CTS_PIPE) {
            /* The receiver cannot use IPC: the export is not read; the
             * chooser hands the send to the pipelined protocol. */
            if (is->token && is->ipc->export_release) is->ipc->export_release(is->token);
            is->token = NULL;
            MPIACC_CHECK(mpiacc_proto_dx_rechoose(op, MPIACC_PROTO_DX_DECLINED, NULL, NULL));
            goto fn_exit;
        }
        MPIACC_CHECK(mpiacc_proto_dx_fin_arrived(op, &h));
        MPIACC_TS(MPIACC_TS_FIN_SEEN);
        is->fin_seen = 1;
    }
    /* answered: the RTS (and blob) were matched and complete soon */
    *complete = ds->first_req == MPI_REQUEST_NULL && is->blob_req == MPI_REQUEST_NULL;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- receive ----------------------------------------------------------------------- */

/* Enqueues the copy (the blob at hand); COPYING.  A failed dependency
 * leaves nothing to copy into: the FIN carries the failure (recv_advance). */
static int recv_copy(mpiacc_rp_op_t *op, const void *blob)
{
    int err, unused = 0;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ipc_state_t *is = ipc_st(op);
    mpiacc_xfer_desc_t d = {.buf = op->buf, .type = op->type, .count = op->count, .first = 0, .last = op->bytes};
    mpiacc_wire_hdr_t h;

    err = mpiacc_proto_dx_dep(op);
    if (err != MPI_SUCCESS) {
        op->error = err;
        ds->failed = is->copy_started = 1;
        return MPI_SUCCESS;
    }
    if (!ds->dep_ready) return MPI_SUCCESS; /* COPYING: the copy starts when the dependency is done */
    if (op->bytes > 0) {
        MPIACC_TS(MPIACC_TS_IMPORT_BEGIN);
        err = is->ipc->import_copy(&op->attrs, op->dep, &is->x, blob, is->blob_bytes, is->count, &d, &is->xfer);
        if (err != MPI_SUCCESS) {
            /* Nothing was enqueued: the message can still come pipelined. */
            char why[MPI_MAX_ERROR_STRING];
            int len = 0;
            PMPI_Error_string(err, why, &len);
            mpiacc_proto_note(MPIACC_PROTO_NOTE_IMPORT, "IPC import refused (%s): pipelined instead", why);
            mpiacc_wire_init(&h, MPIACC_WIRE_RTS_PIPE, ds->id);
            h.total = ds->total;
            h.chunk = ds->chunk;
            h.index = ds->nchunks;
            op->error = MPI_SUCCESS; /* the truncation, if any, is set again */
            return mpiacc_proto_dx_rechoose(op, MPIACC_PROTO_DX_NO_IMPORT, &h, &unused);
        }
    }
    is->copy_started = 1;
    mpiacc_proto_count(MPIACC_PROTO_N_IPC_RECV);
    /* MPIACC_ORDER_STREAM (no-ops otherwise): the copy is the message's
     * last device work; the FIN follows in the background */
    err = mpiacc_rp_order_after(op, is->xfer);
    if (err != MPI_SUCCESS) {
        op->error = err;
        ds->failed = 1;
    }
    mpiacc_rp_early(op);
    return MPI_SUCCESS;
}

/* The first message is an RTS_IPC: the offer read (and the blob's receive
 * posted when it travels apart: it comes first on ctl, whatever follows);
 * then the chooser says whether this side takes it (COPYING) or declines
 * (CTS_PIPE, pipelined). */
static int recv_begin(mpiacc_rp_op_t *op, const mpiacc_wire_hdr_t *h, int *complete)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ipc_state_t *is;
    int inl = (h->flags & MPIACC_WIRE_INLINE_BLOB) != 0;
    const char *p = ds->first;

    MPIACC_TS(MPIACC_TS_RTS_SEEN);
    if (h->export_bytes != sizeof(mpiacc_ipc_export_t) || h->total <= 0 || h->chunk <= 0 ||
        h->extra_bytes != h->export_bytes + (inl ? h->blob_bytes : 0) || op->bytes != MPIACC_WIRE_HDR + h->extra_bytes)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct protocol: a malformed IPC ready-to-send from rank %d", op->st_source);
    ds->total = h->total;
    ds->chunk = h->chunk;
    ds->nchunks = h->index;
    MPIACC_CHECK(ipc_state_new(op, &is));
    is->blob_bytes = h->blob_bytes;
    is->blob_inline = inl;
    is->count = h->count;
    memcpy(&is->x, p + MPIACC_WIRE_HDR, sizeof is->x);
    if (!inl) { /* the blob follows on ctl: received first, whatever comes next */
        MPIACC_CHECK(mpiacc_proto_staging_get(op->attrs.kind, MPIACC_WIRE_HDR + (MPI_Count)is->blob_bytes,
                                              &is->blob, &is->blob_cls));
        MPIACC_CHECK(PMPI_Irecv_c(is->blob, MPIACC_WIRE_HDR + (MPI_Count)is->blob_bytes, MPI_BYTE, ds->ctl_peer,
                                  mpiacc_wire_tag_fwd(ds->id, ds->dc->tag_mod), ds->dc->ctl, &is->blob_req));
    }
    MPIACC_CHECK(mpiacc_proto_dx_rechoose(op, MPIACC_PROTO_DX_IPC_OFFER, h, complete));
    if (op->proto != &mpiacc_proto_ipc.table) goto fn_exit; /* declined: pipelined */
    mpiacc_proto_dx_recv_fit(op, ds->total);
    mpiacc_rp_move(op, MPIACC_RP_COPYING);
    if (inl) MPIACC_CHECK(recv_copy(op, p + MPIACC_WIRE_HDR + sizeof is->x));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int recv_advance(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS, done, err;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ipc_state_t *is = ipc_st(op);
    MPI_Status st;
    MPI_Count n = 0;
    mpiacc_wire_hdr_t h;

    switch (op->state) {
    case MPIACC_RP_COPYING:
        if (!is->copy_started) { /* not enqueued yet: the blob, the dependency */
            if (!is->blob_inline) {
                MPIACC_CHECK(mpiacc_proto_dx_test(&is->blob_req, &st, &done));
                if (!done) break;
                PMPI_Get_count_c(&st, MPI_BYTE, &n);
                MPIACC_CHECK(mpiacc_wire_read(is->blob, n, &h));
                if (h.kind != MPIACC_WIRE_BLOB || h.blob_bytes != is->blob_bytes)
                    MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct protocol: a malformed datatype blob from rank %d",
                                ds->peer);
                is->blob_inline = 1; /* at hand now */
                memmove(is->blob, (char *)is->blob + MPIACC_WIRE_HDR, is->blob_bytes);
            }
            MPIACC_CHECK(recv_copy(op, is->blob ? is->blob : (char *)ds->first + MPIACC_WIRE_HDR + sizeof is->x));
            if (op->proto != &mpiacc_proto_ipc.table || !is->copy_started) break; /* declined, or waiting */
        }
        err = mpiacc_proto_xfer_done(op, &is->xfer, &done);
        if (err != MPI_SUCCESS) {
            op->error = err;
            ds->failed = 1;
        }
        if (!done) break;
        MPIACC_TS(MPIACC_TS_COPY_DONE);
        MPIACC_CHECK(mpiacc_proto_dx_close(op));
        MPIACC_TS(MPIACC_TS_FIN_POSTED);
        break;
    case MPIACC_RP_CLOSING:
        MPIACC_CHECK(mpiacc_proto_dx_test(&ds->back, NULL, complete));
        break;
    default:
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "IPC receive: unexpected state %d", (int)op->state);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- the table ------------------------------------------------------------------------ */

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    *complete = 0;
    return op->is_send ? send_advance(op, complete) : recv_advance(op, complete);
}

const mpiacc_proto_dx_t mpiacc_proto_ipc = {
    .table = {.name = "IPC",
              .prepare = send_prepare,
              .start = send_start,
              .advance = advance,
              .issue = issue,
              .received = mpiacc_proto_dx_no_received,
              .release = mpiacc_proto_dx_release},
    .recv_begin = recv_begin,
};
