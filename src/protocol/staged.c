/*
 * protocol/staged.c: the staged protocol.  A send packs the device data
 * into host staging (on the device when the backend chains work, after the
 * data dependency) and sends the staging as MPI_PACKED; a receive posts
 * PMPI_Irecv into host staging at call time and unpacks it into the device
 * buffer once the bytes have landed.  States: op.c's comment block.
 */
#include "protocol.h"

static int prepare(mpiacc_rp_op_t *op)
{
    return mpiacc_proto_staging_get(op->attrs.kind, op->bytes, &op->staging, &op->staging_class);
}

static int start_xfer(mpiacc_rp_op_t *op, void *dep)
{
    mpiacc_xfer_desc_t d = {.buf = op->buf, .type = op->type, .count = op->count, .first = 0,
                            .last = op->bytes, .host = op->staging};
    return op->is_send ? op->be->pack(&op->attrs, dep, &d, &op->xfer)
                       : op->be->unpack(&op->attrs, dep, &d, &op->xfer);
}

/* After the data dependency: pack (send) or unpack (receive) enqueued, or
 * DEP_PENDING while a host-waiting backend's dependency is not done. */
static int after_dep(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    int done = 1;
    if (op->be->host_waits) {
        if (op->dep) MPIACC_CHECK(op->be->test(op->dep, &done));
        if (!done) {
            if (op->state != MPIACC_RP_DEP_PENDING) mpiacc_rp_move(op, MPIACC_RP_DEP_PENDING);
            goto fn_exit;
        }
        op->be->release(op->dep);
        op->dep = NULL;
    }
    MPIACC_CHECK(start_xfer(op, op->dep));
    mpiacc_rp_move(op, op->is_send ? MPIACC_RP_PACKING : MPIACC_RP_UNPACKING);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int start(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    if (op->is_send) {
        MPIACC_CHECK(after_dep(op));
    } else {
        MPIACC_CHECK(PMPI_Irecv_c(op->staging, op->bytes, MPI_PACKED, op->peer, op->tag, op->comm, &op->inner));
        mpiacc_rp_move(op, MPIACC_RP_IN_FLIGHT);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Whether the pack/unpack handle is done (then released). */
static int xfer_done(mpiacc_rp_op_t *op, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    *done = 1;
    if (op->xfer) MPIACC_CHECK(op->be->test(op->xfer, done));
    if (*done && op->xfer) {
        op->be->release(op->xfer);
        op->xfer = NULL;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS, done;
    switch (op->state) {
    case MPIACC_RP_DEP_PENDING:
        MPIACC_CHECK(after_dep(op));
        break;
    case MPIACC_RP_PACKING:
        MPIACC_CHECK(xfer_done(op, &done));
        if (done) mpiacc_rp_move(op, MPIACC_RP_READY);
        break;
    case MPIACC_RP_UNPACKING:
        MPIACC_CHECK(xfer_done(op, &done));
        *complete = done;
        break;
    default:
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "staged protocol: unexpected state %d", (int)op->state);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int issue(mpiacc_rp_op_t *op)
{
    return mpiacc_rp_isend(op, op->staging, op->bytes, MPI_PACKED);
}

static int received(mpiacc_rp_op_t *op, int *complete)
{
    *complete = 0;
    return after_dep(op);
}

static void release(mpiacc_rp_op_t *op)
{
    if (op->staging) mpiacc_proto_staging_put(op->attrs.kind, op->staging, op->staging_class);
    op->staging = NULL;
}

const mpiacc_proto_t mpiacc_proto_staged = {
    .name = "staged",
    .prepare = prepare,
    .start = start,
    .advance = advance,
    .issue = issue,
    .received = received,
    .release = release,
};
