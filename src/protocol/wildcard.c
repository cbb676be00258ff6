/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * protocol/wildcard.c: a host receive from MPI_ANY_SOURCE where
 * mpiacc_core_wildcard_probe is set (MPICH on its UCX netmod).  MPICH
 * 5.0.2's ch4 posts such a receive on its shared-memory module and its
 * netmod at once; when the message is already waiting at UCX the receive
 * never completes (seen on every run of a message probed for and then
 * received from MPI_ANY_SOURCE, with MPIR_CVAR_NOLOCAL=1 or between
 * nodes; MPI_Improbe + MPI_Mrecv of the same message completes).  So the
 * message is matched with PMPI_Improbe (at the call, then from waits and
 * tests: src/reqpool/op.c, mpiacc_rp_match_pending) and received with
 * PMPI_Imrecv into the user's buffer and datatype; MPI's status and
 * errors (a truncation) are the op's; op->host_type is a dup of the
 * user's datatype (the dispatcher's).  A host receive naming its source
 * that is called while an earlier wildcard one could still take its
 * message is an op of this protocol too: it waits for its turn (MPI's
 * order of posted receives), then posts PMPI_Irecv.  States: op.c's
 * comment block.
 */
#include "protocol.h"

static int start(mpiacc_rp_op_t *op)
{
    return mpiacc_rp_match_start(op);
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    return mpiacc_err(MPIACC_ERRK_INTERN, "wildcard protocol: unexpected state %d", (int)op->state);
}

static int issue(mpiacc_rp_op_t *op)
{
    return mpiacc_err(MPIACC_ERRK_INTERN, "wildcard protocol: a receive cannot send");
}

static int matched(mpiacc_rp_op_t *op, MPI_Message *msg)
{
    if (!msg) return PMPI_Irecv_c(op->buf, op->count, op->host_type, op->peer, op->tag, op->comm, &op->inner);
    return PMPI_Imrecv_c(op->buf, op->count, op->host_type, msg, &op->inner);
}

static int received(mpiacc_rp_op_t *op, int *complete)
{
    *complete = 1;
    return MPI_SUCCESS;
}

static void release(mpiacc_rp_op_t *op)
{
    if (op->host_type != MPI_DATATYPE_NULL) PMPI_Type_free(&op->host_type);
}

const mpiacc_proto_t mpiacc_proto_wildcard = {
    .name = "wildcard",
    .start = start,
    .advance = advance,
    .issue = issue,
    .received = received,
    .matched = matched,
    .release = release,
};
