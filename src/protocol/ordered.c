/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * protocol/ordered.c: a host send that must wait behind device sends to the
 * same (comm, dest) not yet handed to MPI (MPI's non-overtaking rule).  It
 * holds a dup of the user's datatype, waits in READY for its turn in the
 * send queue, and sends the user's buffer as is.
 */
#include "protocol.h"

static int start(mpiacc_rp_op_t *op)
{
    mpiacc_rp_move(op, MPIACC_RP_READY);
    return MPI_SUCCESS;
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    return mpiacc_err(MPIACC_ERRK_INTERN, "ordered protocol: unexpected state %d", (int)op->state);
}

static int issue(mpiacc_rp_op_t *op)
{
    return mpiacc_rp_isend(op, op->buf, op->count, op->host_type);
}

static int received(mpiacc_rp_op_t *op, int *complete)
{
    return mpiacc_err(MPIACC_ERRK_INTERN, "ordered protocol: a send cannot receive");
}

static void release(mpiacc_rp_op_t *op)
{
    if (op->host_type != MPI_DATATYPE_NULL) PMPI_Type_free(&op->host_type);
}

const mpiacc_proto_t mpiacc_proto_ordered = {
    .name = "ordered",
    .start = start,
    .advance = advance,
    .issue = issue,
    .received = received,
    .release = release,
};
