/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * protocol/mrecv.c: the staged protocol's receive of a message already
 * matched by MPI_Mprobe / MPI_Improbe (MPI_Mrecv, MPI_Imrecv of a device
 * datatype on the default protocol).  The staged protocol in every step
 * but the first: start posts PMPI_Imrecv of the message handle (in
 * op->pstate until then: the dispatcher's MPI_Message *, set to
 * MPI_MESSAGE_NULL by MPI) into the staging instead of PMPI_Irecv.
 * States and arrows: those of a staged receive (op.c).
 */
#include "protocol.h"

static int prepare(mpiacc_rp_op_t *op)
{
    return mpiacc_proto_staged.prepare(op);
}

static int start(mpiacc_rp_op_t *op)
{
    return mpiacc_proto_post_recv(op, mpiacc_proto_staging_capacity(op->staging_class), MPI_PACKED, 1);
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    return mpiacc_proto_staged.advance(op, complete);
}

static int issue(mpiacc_rp_op_t *op)
{
    return mpiacc_proto_staged.issue(op);
}

static int received(mpiacc_rp_op_t *op, int *complete)
{
    return mpiacc_proto_staged.received(op, complete);
}

static void release(mpiacc_rp_op_t *op)
{
    op->pstate = NULL;
    mpiacc_proto_staged.release(op);
}

const mpiacc_proto_t mpiacc_proto_mrecv = {
    .name = "staged (matched)",
    .prepare = prepare,
    .start = start,
    .advance = advance,
    .issue = issue,
    .received = received,
    .release = release,
};
