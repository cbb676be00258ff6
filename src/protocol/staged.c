/* SPDX-License-Identifier: BSD-3-Clause */
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
    /* A receive's staging has room for at least one byte more than the
     * receive: a longer message is then always seen as such (see start). */
    return mpiacc_proto_staging_get(op->attrs.kind, op->is_send ? op->bytes : op->bytes + 1, &op->staging,
                                    &op->staging_class);
}

/* After the data dependency: pack (send) or unpack (receive) enqueued, or
 * DEP_PENDING while a host-waiting backend's dependency is not done. */
static int after_dep(mpiacc_rp_op_t *op)
{
    int ready = 0; /* op->dep is NULL once released: tested again at no cost */
    return mpiacc_proto_xfer_after_dep(op, &ready, op->staging, 0, op->bytes);
}

/* A receive: the whole staging buffer receives, so that a message longer
 * than the receive but not than the staging arrives without an MPI error
 * (no error handler called inside mpiacc's progress), and received()
 * reports the truncation after unpacking the bytes that fit.  A longer one
 * is truncated by MPI itself, which raises it on the communicator there,
 * and the op fails with MPI's error, delivering nothing (op.c). */
static int start(mpiacc_rp_op_t *op)
{
    return op->is_send ? after_dep(op)
                       : mpiacc_proto_post_recv(op, mpiacc_proto_staging_capacity(op->staging_class), MPI_PACKED, 0);
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    return mpiacc_proto_advance_xfer(op, complete, after_dep);
}

static int issue(mpiacc_rp_op_t *op)
{
    return mpiacc_rp_isend(op, op->staging, op->bytes, MPI_PACKED);
}

/* The staging buffer holds more than the receive (so that a longer message
 * is seen): deliver what fits, then fail with MPI_ERR_TRUNCATE. */
static int received(mpiacc_rp_op_t *op, int *complete)
{
    *complete = 0;
    mpiacc_proto_truncate(op);
    return after_dep(op);
}

/* A receive from MPI_ANY_SOURCE whose message a probe found (or, msg NULL,
 * one naming its source whose turn came): into the whole staging, as start
 * would have posted it. */
static int matched(mpiacc_rp_op_t *op, MPI_Message *msg)
{
    MPI_Count cap = mpiacc_proto_staging_capacity(op->staging_class);
    if (!msg) return PMPI_Irecv_c(op->staging, cap, MPI_PACKED, op->peer, op->tag, op->comm, &op->inner);
    return PMPI_Imrecv_c(op->staging, cap, MPI_PACKED, msg, &op->inner);
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
    .matched = matched,
    .release = release,
};
