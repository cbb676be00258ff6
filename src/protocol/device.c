/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * protocol/device.c: the device protocol — a device message handed to MPI
 * as device memory, for a buffer kind whose device memory MPI's transport
 * takes (src/engine; chosen in choose.c).  The bytes MPI carries are
 * exactly MPI_Pack's, sent as MPI_BYTE, so a peer on any protocol (staged,
 * OpenCL, host datatypes) matches and reads them.
 *  - send, one dense byte range (and not a stream-ordered one): after the
 *    data dependency (DEP_PENDING while a host test says it is not done),
 *    PMPI_Isend of the user's own bytes in the op's send mode;
 *  - send, any other layout (or stream-ordered): packed on the device into
 *    pooled device staging behind the dependency (be->pack with
 *    host_on_device), then PMPI_Isend of the staging;
 *  - receive: PMPI_Irecv (PMPI_Imrecv for a matched message,
 *    mpiacc_proto_device_mrecv) into the whole of a device staging buffer
 *    at least one byte larger than the receive, posted at call time (so
 *    receives match in call order), then unpacked on the device into the
 *    user's buffer behind the dependency.  A longer message that fits the
 *    staging: the part that fits, then MPI_ERR_TRUNCATE, as staged; one
 *    longer than the staging: MPI's MPI_ERR_TRUNCATE, nothing delivered.
 * A dense call whose dependency is already met never gets here: the
 * dispatcher hands it to MPI as it is (src/dispatch/dispatch.c).
 * States and arrows: the comment block of src/reqpool/op.c.
 */
#include "protocol.h"

/* A send straight from the user's bytes: dense and not stream-ordered (a
 * stream-ordered send completes once a copy of its bytes is enqueued;
 * synchronous ones never complete early, so they may). */
static void *send_from(const mpiacc_rp_op_t *op)
{
    MPI_Count start = 0;
    if (!mpiacc_proto_dense(op->type, op->count, &start)) return NULL;
    if (op->attrs.stream_order && op->mode != MPIACC_RP_SEND_SYNC) return NULL;
    return (char *)op->buf + start;
}

static int prepare(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    size_t cap = 0;
    if (!op->be->dev_staging_get)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "device protocol: the %s backend has no device staging", op->be->name);
    if (op->is_send && (op->send_from = send_from(op))) goto fn_exit;
    /* a receive: one byte more at least, so that a longer message is seen */
    MPIACC_CHECK(op->be->dev_staging_get(&op->attrs, (size_t)(op->is_send ? op->bytes : op->bytes + 1), &op->staging,
                                         &cap, &op->staging_tok));
    op->staging_cap = (MPI_Count)cap;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* After the dependency: a dense send is READY (DEP_PENDING until then);
 * any other send or a receive has its pack / unpack enqueued (steps.c). */
static int after_dep(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS, ready = 0;
    if (op->is_send && op->send_from) {
        MPIACC_CHECK(mpiacc_proto_dep_test_host(op, &ready));
        if (ready) mpiacc_rp_move(op, MPIACC_RP_READY);
        else if (op->state != MPIACC_RP_DEP_PENDING) mpiacc_rp_move(op, MPIACC_RP_DEP_PENDING);
        goto fn_exit;
    }
    MPIACC_CHECK(mpiacc_proto_xfer_after_dep(op, &ready, op->staging, 1, op->bytes));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int start(mpiacc_rp_op_t *op)
{
    return op->is_send ? after_dep(op) : mpiacc_proto_post_recv(op, op->staging_cap, MPI_BYTE, 0);
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    return mpiacc_proto_advance_xfer(op, complete, after_dep);
}

static int issue(mpiacc_rp_op_t *op)
{
    return mpiacc_rp_isend(op, op->send_from ? op->send_from : op->staging, op->bytes, MPI_BYTE);
}

/* As staged: deliver what fits of a longer message that fit the staging,
 * then MPI_ERR_TRUNCATE. */
static int received(mpiacc_rp_op_t *op, int *complete)
{
    *complete = 0;
    mpiacc_proto_truncate(op);
    return after_dep(op);
}

/* A receive from MPI_ANY_SOURCE on an intercommunicator (the device
 * protocol's; an intracommunicator's is staged) whose message a probe
 * found, or (msg NULL) one naming its source whose turn came (op.c,
 * MATCHING): into the device staging, as start would have posted it. */
static int matched(mpiacc_rp_op_t *op, MPI_Message *msg)
{
    if (!msg) return PMPI_Irecv_c(op->staging, op->staging_cap, MPI_BYTE, op->peer, op->tag, op->comm, &op->inner);
    return PMPI_Imrecv_c(op->staging, op->staging_cap, MPI_BYTE, msg, &op->inner);
}

static void release(mpiacc_rp_op_t *op)
{
    if (op->staging_tok && op->be && op->be->dev_staging_put) op->be->dev_staging_put(op->staging_tok);
    op->staging = op->staging_tok = op->send_from = NULL;
}

const mpiacc_proto_t mpiacc_proto_device = {
    .name = "device",
    .prepare = prepare,
    .start = start,
    .advance = advance,
    .issue = issue,
    .received = received,
    .matched = matched,
    .release = release,
};

/* ---- the receive of a matched message (MPI_Mrecv / MPI_Imrecv) ------------ */

/* As the receive above, but its message is the one MPI_Mprobe /
 * MPI_Improbe matched: op->pstate holds the dispatcher's MPI_Message *
 * until start. */
static int mrecv_start(mpiacc_rp_op_t *op)
{
    return mpiacc_proto_post_recv(op, op->staging_cap, MPI_BYTE, 1);
}

static void mrecv_release(mpiacc_rp_op_t *op)
{
    op->pstate = NULL;
    release(op);
}

const mpiacc_proto_t mpiacc_proto_device_mrecv = {
    .name = "device",
    .prepare = prepare,
    .start = mrecv_start,
    .advance = advance,
    .issue = issue,
    .received = received,
    .release = mrecv_release,
};
