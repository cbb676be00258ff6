/*
 * protocol/direct_breach.c: a host message that meets a device receive on
 * a direct communicator (the contract's breach the other way round: a
 * device receive takes device messages only, which travel on the hidden
 * data communicator, so a host message sent to it on the user's
 * communicator never matches).
 *
 * The dispatcher's blocking waits (src/dispatch/watch.c: MPI_Recv,
 * MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome on a device receive) call
 * mpiacc_proto_direct_take_host once MPIACC_DIRECT_WARN seconds have passed
 * with the receive still unmatched.  When a host message it matches waits
 * on the user's communicator, the receive becomes what the default
 * protocol does with a host message: the first message's receive on data
 * is cancelled (if it matched meanwhile the receive goes on unchanged),
 * the host message is taken (PMPI_Improbe) and received as the staged
 * protocol's matched receive (protocol/mrecv.c: MPI_PACKED into host
 * staging, then the backend unpacks it into the device buffer), with one
 * warning naming peer, tag, communicator and the contract.  The sender's
 * host send completes as any host send.
 *
 * Runs in application calls with the pool lock held, never in the
 * progress poll function: PMPI_Iprobe, PMPI_Improbe and
 * PMPI_Request_get_status are allowed (the poll function only tries the
 * lock).  States: src/reqpool/op.c (the direct receive's IN_FLIGHT -->
 * IN_FLIGHT arrows).
 */
#include <stdlib.h>

#include "direct.h"

int mpiacc_proto_direct_unmatched(const mpiacc_rp_op_t *op)
{
    return op->proto == &mpiacc_proto_direct_recv && op->state == MPIACC_RP_IN_FLIGHT &&
           op->inner != MPI_REQUEST_NULL;
}

static void warn(const mpiacc_rp_op_t *op, const MPI_Status *st, int seconds)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    MPI_Count n = 0;
    PMPI_Comm_get_name(op->user_comm, name, &len);
    PMPI_Get_count_c(st, MPI_BYTE, &n);
    MPIACC_LOG(MPIACC_LOG_WARN,
               "direct protocol: a device receive (source %d, tag %d) on communicator \"%s\" waited %d s while a "
               "host message from rank %d tag %d (%lld bytes) waited there: mpiacc receives the host message into "
               "the device buffer through host staging. Host messages on a direct communicator must be received "
               "into host buffers (include/mpiacc.h, \"Direct protocol\")",
               op->peer, op->tag, len ? name : "(unnamed)", seconds, st->MPI_SOURCE, st->MPI_TAG, (long long)n);
}

int mpiacc_proto_direct_take_host(mpiacc_rp_op_t *op, int seconds, int *taken)
{
    int mpi_errno = MPI_SUCCESS, found = 0, flag = 0, cancelled = 0;
    MPI_Status st, cst;
    MPI_Message m = MPI_MESSAGE_NULL;

    *taken = 0;
    if (!mpiacc_proto_direct_unmatched(op)) goto fn_exit;
    MPIACC_CHECK(PMPI_Iprobe(op->peer, op->tag, op->user_comm, &found, &st));
    if (!found) goto fn_exit;
    /* the first message's receive, unless a device message matched it */
    PMPI_Cancel(&op->inner);
    while (!flag) MPIACC_CHECK(PMPI_Request_get_status(op->inner, &flag, &cst));
    PMPI_Test_cancelled(&cst, &cancelled);
    if (!cancelled) goto fn_exit; /* the device message came first: in_flight (op.c) takes it */
    MPIACC_CHECK(PMPI_Wait(&op->inner, MPI_STATUS_IGNORE));
    op->inner = MPI_REQUEST_NULL;
    MPIACC_CHECK(PMPI_Improbe(op->peer, op->tag, op->user_comm, &found, &m, &st));
    if (!found) { /* another receive took it meanwhile: the first message's receive again */
        MPIACC_CHECK(op->proto->start(op));
        goto fn_exit;
    }
    warn(op, &st, seconds);
    /* the direct receive's state goes; the op is a staged matched receive */
    mpiacc_proto_dx_release(op);
    op->proto = &mpiacc_proto_mrecv;
    op->pstate = &m; /* taken by start */
    MPIACC_CHECK(op->proto->prepare(op));
    MPIACC_CHECK(op->proto->start(op)); /* IN_FLIGHT --> IN_FLIGHT */
    *taken = 1;
fn_exit:
    return mpi_errno;
fn_fail:
    if (m != MPI_MESSAGE_NULL) { /* a host message nobody can take now: received and dropped */
        MPI_Count n = 0;
        void *junk;
        PMPI_Get_count_c(&st, MPI_BYTE, &n);
        junk = malloc(n > 0 ? (size_t)n : 1);
        if (junk) PMPI_Mrecv_c(junk, n, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        free(junk);
    }
    if (op->proto == &mpiacc_proto_mrecv) op->pstate = NULL;
    goto fn_exit;
}
