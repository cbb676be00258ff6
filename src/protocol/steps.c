/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * protocol/steps.c: steps several protocols take the same way — the data
 * dependency, the pack / unpack between the user's buffer and staging
 * (host, or the device protocol's device staging) behind it, the test of a
 * pack / unpack handle, a receive posted into staging, the truncation of a
 * longer message, and the advance through those states (staged.c,
 * device.c, mrecv.c).  States: src/reqpool/op.c.
 */
#include "protocol.h"
#include "core/stats.h"

int mpiacc_proto_dep_test_host(mpiacc_rp_op_t *op, int *ready)
{
    int mpi_errno = MPI_SUCCESS, done = 1;
    if (op->dep) {
        MPIACC_CHECK(op->be->test(op->dep, &done));
        if (!done) goto fn_exit;
        op->be->release(op->dep);
        op->dep = NULL;
    }
    *ready = 1;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_dep_test(mpiacc_rp_op_t *op, int *ready)
{
    if (op->be->host_waits) return mpiacc_proto_dep_test_host(op, ready);
    *ready = 1; /* a chaining backend passes op->dep to every pack/unpack */
    return MPI_SUCCESS;
}

void mpiacc_proto_truncate(mpiacc_rp_op_t *op)
{
    MPI_Count want = op->type ? op->type->size * op->count : 0; /* checked at the call */
    if (op->bytes <= want) return;
    op->error = mpiacc_err(MPIACC_ERRK_TRUNCATE,
                           "message truncated: the message from rank %d (tag %d) is %lld bytes, the receive takes "
                           "%lld bytes",
                           op->st_source, op->st_tag, (long long)op->bytes, (long long)want);
    op->bytes = want;
}

int mpiacc_proto_xfer_after_dep(mpiacc_rp_op_t *op, int *ready, void *host, int on_device, MPI_Count n)
{
    int mpi_errno = MPI_SUCCESS;
    long long t0;
    mpiacc_xfer_desc_t d = {.buf = op->buf, .type = op->type, .count = op->count, .first = 0, .last = n,
                            .host = host, .host_on_device = on_device};

    if (!*ready) MPIACC_CHECK(mpiacc_proto_dep_test(op, ready));
    if (!*ready) {
        if (op->state != MPIACC_RP_DEP_PENDING) mpiacc_rp_move(op, MPIACC_RP_DEP_PENDING);
        goto fn_exit;
    }
    if (mpiacc_rp_batch_queue_ok(op, &d)) { /* launched with the batch's others (src/reqpool/batch.c) */
        mpiacc_rp_move(op, op->is_send ? MPIACC_RP_PACKING : MPIACC_RP_UNPACKING);
        mpiacc_rp_batch_queue(op, &d);
        goto fn_exit;
    }
    t0 = mpiacc_core_tracing() ? mpiacc_core_stats_now_ns() : 0;
    MPIACC_CHECK(op->is_send ? op->be->pack(&op->attrs, op->dep, &d, &op->xfer)
                             : op->be->unpack(&op->attrs, op->dep, &d, &op->xfer));
    if (t0) op->tr[MPIACC_CORE_TR_OP_LAUNCH] += mpiacc_core_stats_now_ns() - t0;
    mpiacc_rp_move(op, op->is_send ? MPIACC_RP_PACKING : MPIACC_RP_UNPACKING);
    /* MPIACC_ORDER_STREAM: the whole message in one transfer, so its
     * request completes now (no-ops otherwise) */
    MPIACC_CHECK(mpiacc_rp_order_after(op, op->xfer));
    mpiacc_rp_early(op);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_xfer_done(mpiacc_rp_op_t *op, void **xfer, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    *done = 1;
    if (*xfer == MPIACC_RP_XFER_QUEUED) { /* not launched yet: its batch's launch comes (batch.c) */
        *done = 0;
        return MPI_SUCCESS;
    }
    if (*xfer == MPIACC_RP_XFER_FAILED) { /* its launch failed (in its batch, then alone) */
        *xfer = NULL;
        return op->xerr;
    }
    if (*xfer) mpi_errno = op->be->test(*xfer, done);
    if (mpi_errno != MPI_SUCCESS) *done = 1; /* a failed transfer runs no more */
    if (*done && *xfer) {
        op->be->release(*xfer);
        *xfer = NULL;
    }
    return mpi_errno;
}

int mpiacc_proto_post_recv(mpiacc_rp_op_t *op, MPI_Count n, MPI_Datatype t, int matched)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Message *msg = op->pstate;
    if (matched) {
        op->pstate = NULL;
        if (!msg) MPIACC_FAIL(MPIACC_ERRK_INTERN, "matched receive without a message");
        MPIACC_CHECK(PMPI_Imrecv_c(op->staging, n, t, msg, &op->inner));
    } else if (mpiacc_rp_match_wanted(op->peer)) {
        /* matched by a probe (reqpool.h), or behind an op that is: IN_FLIGHT
         * through the protocol's matched step, or MATCHING until a wait's
         * probe finds it (its turn comes) */
        MPIACC_CHECK(mpiacc_rp_match_start(op));
        goto fn_exit;
    } else {
        MPIACC_CHECK(PMPI_Irecv_c(op->staging, n, t, op->peer, op->tag, op->comm, &op->inner));
    }
    mpiacc_rp_move(op, MPIACC_RP_IN_FLIGHT);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_advance_xfer(mpiacc_rp_op_t *op, int *complete, int (*after_dep)(mpiacc_rp_op_t *op))
{
    int mpi_errno = MPI_SUCCESS, done;
    switch (op->state) {
    case MPIACC_RP_DEP_PENDING:
        MPIACC_CHECK(after_dep(op));
        break;
    case MPIACC_RP_PACKING:
        MPIACC_CHECK(mpiacc_proto_xfer_done(op, &op->xfer, &done));
        if (done) mpiacc_rp_move(op, MPIACC_RP_READY);
        break;
    case MPIACC_RP_UNPACKING:
        MPIACC_CHECK(mpiacc_proto_xfer_done(op, &op->xfer, &done));
        *complete = done;
        break;
    default:
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "%s protocol: unexpected state %d", op->proto->name, (int)op->state);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
