/*
 * protocol/eager.c: the direct protocol's eager messages (packed bytes up
 * to the communicator's eager limit, MPIACC_EAGER_MAX; empty messages too).
 * The sender packs into host staging behind mpiacc's header, after the
 * data dependency, and sends header + bytes as ONE message on the hidden
 * data communicator with the user's tag; the receiver's first-message
 * receive (direct.c) holds them, and it unpacks the part that fits.
 * Its table's prepare and start are the send's (a receive enters at
 * recv_begin, from the chooser in direct.c).  A
 * sender whose pack fails sends an ABORT header in place of the data, so
 * the receive completes with the error too.  States: src/reqpool/op.c.
 */
#include "direct.h"

/* After the dependency: pack (send) or unpack (receive) of bytes [0, n)
 * enqueued: PACKING / UNPACKING; or DEP_PENDING while a host-waiting
 * backend's dependency is not done. */
static int after_dep(mpiacc_rp_op_t *op, MPI_Count n)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    return mpiacc_proto_xfer_after_dep(op, &ds->dep_ready, (char *)ds->first + MPIACC_WIRE_HDR, n);
}

/* ---- send -------------------------------------------------------------------- */

static int send_prepare(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    /* room for the data, or for an ABORT's text */
    ds->first_cap = MPIACC_WIRE_HDR + (op->bytes > MPIACC_WIRE_FIN_TEXT ? op->bytes : MPIACC_WIRE_FIN_TEXT);
    return mpiacc_proto_staging_get(op->attrs.kind, ds->first_cap, &ds->first, &ds->first_cls);
}

/* The pack failed (or its dependency): the message becomes an ABORT with
 * the error, sent in the data's place when the op's turn comes; the send
 * then completes with the error. */
static int send_abort(mpiacc_rp_op_t *op, int err)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    if (op->xfer) {
        int done = 0;
        if (op->be->test(op->xfer, &done) == MPI_SUCCESS && !done) {
            /* still writing into the staging: keep it out of the pool */
            ds->first = NULL;
            if (mpiacc_proto_staging_get(op->attrs.kind, MPIACC_WIRE_HDR + MPIACC_WIRE_FIN_TEXT, &ds->first,
                                         &ds->first_cls) != MPI_SUCCESS)
                return err; /* nothing to send the abort in: the send fails at once */
        }
        op->be->release(op->xfer);
        op->xfer = NULL;
    }
    op->error = err;
    ds->failed = 1;
    ds->total = mpiacc_proto_dx_fill_error(ds->first, MPIACC_WIRE_ABORT, ds->id, err, MPIACC_WIRE_FIN_TEXT);
    MPIACC_LOG(MPIACC_LOG_INFO, "direct eager send to %d tag %d: sending an abort", op->peer, op->tag);
    mpiacc_rp_move(op, MPIACC_RP_READY);
    return MPI_SUCCESS;
}

/* NEW -> PACKING / DEP_PENDING, or READY for an empty message. */
static int send_start(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    mpiacc_wire_hdr_t h;
    int err;
    mpiacc_wire_init(&h, MPIACC_WIRE_EAGER, ds->id);
    h.total = op->bytes;
    h.extra_bytes = (uint32_t)op->bytes;
    memcpy(ds->first, &h, sizeof h);
    ds->total = MPIACC_WIRE_HDR + op->bytes; /* the message's length */
    if (op->bytes == 0) {
        mpiacc_rp_move(op, MPIACC_RP_READY);
        return MPI_SUCCESS;
    }
    err = after_dep(op, op->bytes);
    return err == MPI_SUCCESS ? err : send_abort(op, err);
}

static int send_advance(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS, done;
    switch (op->state) {
    case MPIACC_RP_DEP_PENDING:
        MPIACC_CHECK(after_dep(op, op->bytes));
        break;
    case MPIACC_RP_PACKING:
        MPIACC_CHECK(mpiacc_proto_xfer_done(op, &op->xfer, &done));
        if (done) mpiacc_rp_move(op, MPIACC_RP_READY);
        break;
    default:
        return mpiacc_err(MPIACC_ERRK_INTERN, "eager send: unexpected state %d", (int)op->state);
    }
    return MPI_SUCCESS;
fn_fail:
    return send_abort(op, mpi_errno);
}

static int issue(mpiacc_rp_op_t *op)
{
    mpiacc_proto_dx_state_t *ds = mpiacc_proto_dx(op);
    return mpiacc_rp_isend(op, ds->first, ds->total, MPI_BYTE);
}

/* ---- receive ------------------------------------------------------------------ */

/* The first message is the eager message: header + bytes, in ds->first. */
static int recv_begin(mpiacc_rp_op_t *op, const mpiacc_wire_hdr_t *h, int *complete)
{
    int mpi_errno = MPI_SUCCESS;

    if (op->bytes != MPIACC_WIRE_HDR + h->total || h->extra_bytes != (uint64_t)h->total)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct protocol: an eager message of %lld bytes says it holds %lld",
                    (long long)op->bytes, (long long)h->total);
    mpiacc_proto_dx_recv_fit(op, h->total);
    if (op->bytes == 0) {
        *complete = 1;
        goto fn_exit;
    }
    MPIACC_CHECK(after_dep(op, op->bytes));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int recv_advance(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS;
    switch (op->state) {
    case MPIACC_RP_DEP_PENDING:
        MPIACC_CHECK(after_dep(op, op->bytes));
        break;
    case MPIACC_RP_UNPACKING:
        MPIACC_CHECK(mpiacc_proto_xfer_done(op, &op->xfer, complete));
        break;
    default:
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "eager receive: unexpected state %d", (int)op->state);
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

const mpiacc_proto_dx_t mpiacc_proto_eager = {
    .table = {.name = "eager",
              .prepare = send_prepare,
              .start = send_start,
              .advance = advance,
              .issue = issue,
              .received = mpiacc_proto_dx_no_received,
              .release = mpiacc_proto_dx_release},
    .recv_begin = recv_begin,
};
