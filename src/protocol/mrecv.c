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
    int mpi_errno = MPI_SUCCESS;
    MPI_Message *msg = op->pstate;
    op->pstate = NULL;
    if (!msg) MPIACC_FAIL(MPIACC_ERRK_INTERN, "matched receive without a message");
    MPIACC_CHECK(PMPI_Imrecv_c(op->staging, mpiacc_proto_staging_capacity(op->staging_class), MPI_PACKED, msg,
                               &op->inner));
    mpiacc_rp_move(op, MPIACC_RP_IN_FLIGHT);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
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
