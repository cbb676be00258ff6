/*
 * protocol/pipeline.c: the direct protocol's pipelined staging, for
 * messages above the eager limit without IPC.  The sender's first message
 * is a ready-to-send (RTS_PIPE: total bytes, chunk bytes, number of chunks)
 * on the hidden data communicator with the user's tag; right behind it the
 * chunks follow on the ctl communicator (tag 2*(id mod M)), each one
 * mpiacc's header + the packed bytes [k*chunk, (k+1)*chunk), through a ring
 * of MPIACC_PROTO_DX_RING staging slots: chunk k+1 is packed on the device
 * while chunk k is in MPI, in order (one lane: chunk k's pack ends before
 * chunk k+1's starts, rather than all of the ring sharing PCIe and ending
 * together).  The receiver, once the RTS matched,
 * posts receives for the chunks into its own ring and unpacks chunk k while
 * chunk k+1 arrives; it receives every chunk (nothing stays unmatched on
 * ctl) but unpacks only what fits its buffer (then MPI_ERR_TRUNCATE), and
 * ends with a FIN (tag 2*(id mod M)+1) carrying its failure, if any: the
 * send completes when the FIN arrives.  A sender that fails sends an ABORT
 * in place of the next chunk and stops; the receiver cancels its remaining
 * chunk receives and completes with the error.
 *
 * Chunk size: MPIACC_PIPELINE_CHUNK data bytes per chunk message, plus
 * the header (default 1 MiB: one rank per GPU on two H200, 4 MiB took
 * 551-592 us with 1 MiB chunks and 628-695 us with 256 KiB chunks in the
 * same session).  States (src/reqpool/op.c): send NEW -> READY -> STREAMING ->
 * WAIT_FIN -> DONE; receive (from direct.c's IN_FLIGHT) -> STREAMING ->
 * CLOSING -> DONE.  The table's prepare and start are the send's; a
 * receive enters at recv_begin, a declined IPC send at send_resume (both
 * from the chooser, direct.c).
 */
#include "direct.h"

/* A local failure: no more device work; the peer hears of it. */
static void fail(mpiacc_rp_op_t *op, int err)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    if (ds->failed) return;
    op->error = err;
    ds->failed = 1;
    MPIACC_LOG(MPIACC_LOG_INFO, "direct pipelined %s rank %d tag %d failed; telling the peer",
               op->is_send ? "send to" : "receive from", ds->peer, op->tag);
}

static int chunk_tag(mpiacc_proto_dx_state_t *ds)
{
    return mpiacc_wire_tag_fwd(ds->id, ds->dc->tag_mod);
}

static int slot_buf(mpiacc_rp_op_t *op, mpiacc_proto_dx_slot_t *s)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    if (s->buf) return MPI_SUCCESS;
    return mpiacc_proto_staging_get(op->attrs.kind, MPIACC_WIRE_HDR + ds->chunk, &s->buf, &s->cls);
}

/* Packed bytes [*lo, *hi) of chunk k. */
static void chunk_range(const mpiacc_proto_dx_state_t *ds, int64_t k, MPI_Count *lo, MPI_Count *hi)
{
    *lo = k * ds->chunk;
    *hi = *lo + ds->chunk < ds->total ? *lo + ds->chunk : ds->total;
}

static int any_landed(const mpiacc_proto_dx_state_t *ds)
{
    for (int i = 0; i < MPIACC_PROTO_DX_RING; i++)
        if (ds->slot[i].state == MPIACC_PROTO_DX_SLOT_LANDED) return 1;
    return 0;
}

static int all_free(const mpiacc_proto_dx_state_t *ds)
{
    for (int i = 0; i < MPIACC_PROTO_DX_RING; i++)
        if (ds->slot[i].state != MPIACC_PROTO_DX_SLOT_FREE) return 0;
    return 1;
}

/* ---- send -------------------------------------------------------------------- */

static int send_prepare(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ds->first_cap = MPIACC_WIRE_HDR;
    return mpiacc_proto_staging_get(op->attrs.kind, ds->first_cap, &ds->first, &ds->first_cls);
}

/* NEW -> READY: the RTS needs no data. */
static int send_start(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    mpiacc_wire_hdr_t h;
    mpiacc_wire_init(&h, MPIACC_WIRE_RTS_PIPE, ds->id);
    h.total = ds->total;
    h.chunk = ds->chunk;
    h.index = ds->nchunks;
    h.buf_kind = (uint32_t)op->attrs.kind;
    memcpy(ds->first, &h, sizeof h);
    mpiacc_rp_move(op, MPIACC_RP_READY);
    return MPI_SUCCESS;
}

/* -> STREAMING: the chunks start (from issue, or — the send_resume of the
 * table — after an IPC offer the receiver answered with CTS_PIPE, whose
 * FIN receive is posted already). */
static int stream(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    ds->next_xfer = ds->next_mpi = 0;
    if (ds->back == MPI_REQUEST_NULL) MPIACC_CHECK(mpiacc_proto_dx_post_back(op));
    mpiacc_rp_move(op, MPIACC_RP_STREAMING);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* READY -> STREAMING: the RTS is posted (the op leaves the send queue: its
 * chunks travel on ctl, where no other send's message can match them). */
static int issue(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    MPIACC_CHECK(mpiacc_rp_isend(op, ds->first, MPIACC_WIRE_HDR, MPI_BYTE));
    ds->first_req = op->inner;
    op->inner = MPI_REQUEST_NULL;
    MPIACC_CHECK(stream(op));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Starts the pack of the next chunk into its slot; 1 when one started. */
static int send_pack_next(mpiacc_rp_op_t *op)
{
    int err;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    int64_t k = ds->next_xfer;
    mpiacc_proto_dx_slot_t *s = &ds->slot[k % MPIACC_PROTO_DX_RING];
    mpiacc_wire_hdr_t h;
    mpiacc_xfer_desc_t d = {.buf = op->buf, .type = op->type, .count = op->count, .lane = &ds->lane};

    if (ds->failed || ds->stopped || !ds->dep_ready || k >= ds->nchunks || s->state != MPIACC_PROTO_DX_SLOT_FREE)
        return 0;
    if ((err = slot_buf(op, s)) != MPI_SUCCESS) {
        fail(op, err);
        return 0;
    }
    chunk_range(ds, k, &d.first, &d.last);
    d.host = (char *)s->buf + MPIACC_WIRE_HDR;
    mpiacc_wire_init(&h, MPIACC_WIRE_CHUNK, ds->id);
    h.total = ds->total;
    h.chunk = d.first;
    h.index = k;
    h.extra_bytes = (uint32_t)(d.last - d.first);
    memcpy(s->buf, &h, sizeof h);
    if ((err = op->be->pack(&op->attrs, op->dep, &d, &s->xfer)) != MPI_SUCCESS) {
        fail(op, err);
        return 0;
    }
    /* MPIACC_ORDER_STREAM (a no-op otherwise): later stream work waits for every chunk's pack */
    if ((err = mpiacc_rp_order_after(op, s->xfer)) != MPI_SUCCESS) fail(op, err);
    s->state = MPIACC_PROTO_DX_SLOT_XFER;
    s->index = k;
    ds->next_xfer++;
    return 1;
}

/* In place of chunk next_mpi, once the device is done with every slot: an
 * ABORT with the failure.  1 when sent. */
static int send_abort(mpiacc_rp_op_t *op, int *mpi_errno)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    mpiacc_proto_dx_slot_t *s = &ds->slot[ds->next_mpi % MPIACC_PROTO_DX_RING];
    MPI_Count n;
    for (int i = 0; i < MPIACC_PROTO_DX_RING; i++)
        if (ds->slot[i].state == MPIACC_PROTO_DX_SLOT_XFER) return 0;
    if (s->state == MPIACC_PROTO_DX_SLOT_MPI) return 0; /* an earlier chunk is still going out */
    for (int i = 0; i < MPIACC_PROTO_DX_RING; i++) /* packed but not sent: dropped */
        if (ds->slot[i].state == MPIACC_PROTO_DX_SLOT_PACKED) ds->slot[i].state = MPIACC_PROTO_DX_SLOT_FREE;
    if ((*mpi_errno = slot_buf(op, s)) != MPI_SUCCESS) return 0;
    n = mpiacc_proto_dx_fill_error(s->buf, MPIACC_WIRE_ABORT, ds->id, op->error,
                                ds->chunk < MPIACC_WIRE_FIN_TEXT ? ds->chunk : MPIACC_WIRE_FIN_TEXT);
    *mpi_errno = PMPI_Isend_c(s->buf, n, MPI_BYTE, ds->ctl_peer, chunk_tag(ds), ds->dc->ctl, &s->req);
    if (*mpi_errno != MPI_SUCCESS) return 0;
    s->state = MPIACC_PROTO_DX_SLOT_MPI;
    s->index = ds->next_mpi;
    ds->stopped = 1;
    return 1;
}

/* One pass over the ring; *moved when anything happened. */
static int send_pass(mpiacc_rp_op_t *op, int *moved)
{
    int mpi_errno = MPI_SUCCESS, done, err;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);

    MPIACC_CHECK(mpiacc_proto_dx_test(&ds->first_req, NULL, &done));
    if (!ds->failed && !ds->dep_ready) {
        if ((err = mpiacc_proto_dx_dep(op)) != MPI_SUCCESS) fail(op, err);
        *moved |= ds->dep_ready;
    }
    for (int i = 0; i < MPIACC_PROTO_DX_RING; i++) {
        mpiacc_proto_dx_slot_t *s = &ds->slot[i];
        if (s->state == MPIACC_PROTO_DX_SLOT_MPI) {
            MPIACC_CHECK(mpiacc_proto_dx_test(&s->req, NULL, &done));
            if (done) s->state = MPIACC_PROTO_DX_SLOT_FREE, *moved = 1;
        }
    }
    /* packs in chunk order, up to the first one still running: the chunks
     * go out in that order anyway (and on one lane they also finish in it),
     * so a later pack's query would only delay the earlier chunk's send */
    for (int64_t k = ds->next_mpi; k < ds->next_xfer; k++) {
        mpiacc_proto_dx_slot_t *s = &ds->slot[k % MPIACC_PROTO_DX_RING];
        if (s->state != MPIACC_PROTO_DX_SLOT_XFER) continue;
        err = mpiacc_proto_xfer_done(op, &s->xfer, &done);
        if (err != MPI_SUCCESS) fail(op, err);
        if (!done) break;
        s->state = err == MPI_SUCCESS ? MPIACC_PROTO_DX_SLOT_PACKED : MPIACC_PROTO_DX_SLOT_FREE, *moved = 1;
    }
    /* packed chunks go out in order, before more packs are launched (a
     * launch costs microseconds the chunk would wait) */
    while (!ds->failed && ds->next_mpi < ds->next_xfer) {
        mpiacc_proto_dx_slot_t *s = &ds->slot[ds->next_mpi % MPIACC_PROTO_DX_RING];
        MPI_Count lo, hi;
        if (s->state != MPIACC_PROTO_DX_SLOT_PACKED) break;
        chunk_range(ds, ds->next_mpi, &lo, &hi);
        MPIACC_CHECK(PMPI_Isend_c(s->buf, MPIACC_WIRE_HDR + hi - lo, MPI_BYTE, ds->ctl_peer, chunk_tag(ds),
                                  ds->dc->ctl, &s->req));
        s->state = MPIACC_PROTO_DX_SLOT_MPI;
        ds->next_mpi++;
        *moved = 1;
    }
    while (send_pack_next(op)) *moved = 1;
    /* the last chunk's pack enqueued: MPIACC_ORDER_STREAM's request
     * completes (no-op otherwise, or after a failure) */
    if (!ds->failed && ds->next_xfer == ds->nchunks) mpiacc_rp_early(op);
    if (ds->failed && !ds->stopped && ds->next_mpi < ds->nchunks) {
        *moved |= send_abort(op, &mpi_errno);
        if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int send_advance(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS, done, moved;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    mpiacc_wire_hdr_t h;

    switch (op->state) {
    case MPIACC_RP_STREAMING:
        do {
            moved = 0;
            MPIACC_CHECK(send_pass(op, &moved));
        } while (moved);
        if (ds->first_req == MPI_REQUEST_NULL && all_free(ds) && (ds->next_mpi == ds->nchunks || ds->stopped))
            mpiacc_rp_move(op, MPIACC_RP_WAIT_FIN);
        break;
    case MPIACC_RP_WAIT_FIN:
        MPIACC_CHECK(mpiacc_proto_dx_back_arrived(op, &h, &done));
        if (!done) break;
        MPIACC_CHECK(mpiacc_proto_dx_fin_arrived(op, &h));
        *complete = 1;
        break;
    default:
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "pipelined send: unexpected state %d", (int)op->state);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- receive ------------------------------------------------------------------ */

/* The first message is an RTS_PIPE, or the receive declined an IPC offer
 * (h: the RTS_IPC or one made for it, with the chunking). */
static int recv_begin(mpiacc_rp_op_t *op, const mpiacc_wire_hdr_t *h, int *complete)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);

    if (h->total <= 0 || h->chunk <= 0 || h->index != (h->total + h->chunk - 1) / h->chunk)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct protocol: an RTS for %lld bytes in %lld chunks of %lld",
                    (long long)h->total, (long long)h->index, (long long)h->chunk);
    ds->chunk = h->chunk;
    ds->nchunks = h->index;
    ds->next_xfer = ds->next_mpi = 0;
    mpiacc_proto_dx_recv_fit(op, h->total);
    mpiacc_rp_move(op, MPIACC_RP_STREAMING);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Chunk next_mpi landed in s (status st): LANDED to be unpacked, or FREE
 * (nothing of it fits, or a failure: drained).  An ABORT stops the
 * transfer. */
static int recv_landed(mpiacc_rp_op_t *op, mpiacc_proto_dx_slot_t *s, MPI_Status *st)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    mpiacc_wire_hdr_t h;
    MPI_Count n = 0, lo, hi;

    PMPI_Get_count_c(st, MPI_BYTE, &n);
    MPIACC_CHECK(mpiacc_wire_read(s->buf, n, &h));
    s->state = MPIACC_PROTO_DX_SLOT_FREE;
    if (h.kind == MPIACC_WIRE_ABORT) {
        if (!ds->failed) op->error = mpiacc_proto_dx_peer_error(&h, s->buf, ds->peer, "sender");
        ds->failed = ds->stopped = 1;
        goto fn_exit;
    }
    chunk_range(ds, ds->next_mpi, &lo, &hi);
    if (h.kind != MPIACC_WIRE_CHUNK || h.index != ds->next_mpi || h.chunk != lo || n != MPIACC_WIRE_HDR + hi - lo)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct protocol: chunk %lld from rank %d is malformed (kind %u index %lld)",
                    (long long)ds->next_mpi, ds->peer, (unsigned)h.kind, (long long)h.index);
    if (!ds->failed && lo < op->bytes) s->state = MPIACC_PROTO_DX_SLOT_LANDED;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int recv_pass(mpiacc_rp_op_t *op, int *moved)
{
    int mpi_errno = MPI_SUCCESS, done, err;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    MPI_Status st;

    if (!ds->failed && !ds->dep_ready) {
        if ((err = mpiacc_proto_dx_dep(op)) != MPI_SUCCESS) fail(op, err);
        *moved |= ds->dep_ready;
    }
    /* receives for the next chunks, in order */
    while (!ds->stopped && ds->next_xfer < ds->nchunks) {
        mpiacc_proto_dx_slot_t *s = &ds->slot[ds->next_xfer % MPIACC_PROTO_DX_RING];
        if (s->state != MPIACC_PROTO_DX_SLOT_FREE) break;
        MPIACC_CHECK(slot_buf(op, s));
        MPIACC_CHECK(PMPI_Irecv_c(s->buf, MPIACC_WIRE_HDR + ds->chunk, MPI_BYTE, ds->ctl_peer, chunk_tag(ds),
                                  ds->dc->ctl, &s->req));
        s->state = MPIACC_PROTO_DX_SLOT_MPI;
        s->index = ds->next_xfer++;
        *moved = 1;
    }
    /* chunks land in order */
    while (!ds->stopped && ds->next_mpi < ds->next_xfer) {
        mpiacc_proto_dx_slot_t *s = &ds->slot[ds->next_mpi % MPIACC_PROTO_DX_RING];
        if (s->state != MPIACC_PROTO_DX_SLOT_MPI) break;
        MPIACC_CHECK(mpiacc_proto_dx_test(&s->req, &st, &done));
        if (!done) break;
        MPIACC_CHECK(recv_landed(op, s, &st));
        ds->next_mpi++;
        *moved = 1;
    }
    for (int i = 0; i < MPIACC_PROTO_DX_RING; i++) {
        mpiacc_proto_dx_slot_t *s = &ds->slot[i];
        if (s->state == MPIACC_PROTO_DX_SLOT_MPI && ds->stopped) {
            /* after an ABORT: the chunks posted beyond it never come */
            if (s->req != MPI_REQUEST_NULL) PMPI_Cancel(&s->req);
            MPIACC_CHECK(mpiacc_proto_dx_test(&s->req, NULL, &done));
            if (done) s->state = MPIACC_PROTO_DX_SLOT_FREE, *moved = 1;
        } else if (s->state == MPIACC_PROTO_DX_SLOT_LANDED && ds->failed) {
            s->state = MPIACC_PROTO_DX_SLOT_FREE;
            *moved = 1;
        } else if (s->state == MPIACC_PROTO_DX_SLOT_LANDED && ds->dep_ready) {
            mpiacc_xfer_desc_t d = {.buf = op->buf, .type = op->type, .count = op->count,
                                    .host = (char *)s->buf + MPIACC_WIRE_HDR, .lane = &ds->lane};
            chunk_range(ds, s->index, &d.first, &d.last);
            if (d.last > op->bytes) d.last = op->bytes; /* truncation: what fits */
            err = op->be->unpack(&op->attrs, op->dep, &d, &s->xfer);
            if (err != MPI_SUCCESS) fail(op, err);
            s->state = err == MPI_SUCCESS ? MPIACC_PROTO_DX_SLOT_XFER : MPIACC_PROTO_DX_SLOT_FREE;
            /* MPIACC_ORDER_STREAM (a no-op otherwise): every chunk's unpack */
            if (err == MPI_SUCCESS && (err = mpiacc_rp_order_after(op, s->xfer)) != MPI_SUCCESS) fail(op, err);
            *moved = 1;
        } else if (s->state == MPIACC_PROTO_DX_SLOT_XFER) {
            err = mpiacc_proto_xfer_done(op, &s->xfer, &done);
            if (err != MPI_SUCCESS) fail(op, err);
            if (done) s->state = MPIACC_PROTO_DX_SLOT_FREE, *moved = 1;
        }
    }
    /* every chunk in and every unpack enqueued: MPIACC_ORDER_STREAM's
     * request completes (no-op otherwise, or after a failure) */
    if (!ds->failed && ds->next_mpi == ds->nchunks && !any_landed(ds)) mpiacc_rp_early(op);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int recv_advance(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS, done, moved;
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);

    switch (op->state) {
    case MPIACC_RP_STREAMING:
        do {
            moved = 0;
            MPIACC_CHECK(recv_pass(op, &moved));
        } while (moved);
        if ((ds->next_mpi == ds->nchunks || ds->stopped) && all_free(ds)) {
            /* a CTS_PIPE (a declined IPC offer) may still be going out */
            MPIACC_CHECK(mpiacc_proto_dx_test(&ds->back, NULL, &done));
            if (!done) break;
            MPIACC_CHECK(mpiacc_proto_dx_close(op));
        }
        break;
    case MPIACC_RP_CLOSING:
        MPIACC_CHECK(mpiacc_proto_dx_test(&ds->back, NULL, complete));
        break;
    default:
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "pipelined receive: unexpected state %d", (int)op->state);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- the table ------------------------------------------------------------------ */

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    *complete = 0;
    return op->is_send ? send_advance(op, complete) : recv_advance(op, complete);
}

const mpiacc_proto_dx_t mpiacc_proto_pipeline = {
    .table = {.name = "pipelined",
              .prepare = send_prepare,
              .start = send_start,
              .advance = advance,
              .issue = issue,
              .received = mpiacc_proto_dx_no_received,
              .release = mpiacc_proto_dx_release},
    .recv_begin = recv_begin,
    .send_resume = stream,
};
