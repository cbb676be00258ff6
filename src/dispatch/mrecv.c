/*
 * dispatch/mrecv.c: MPI_Mrecv / MPI_Imrecv of a message that MPI_Mprobe /
 * MPI_Improbe matched, into a datatype that needs the pool.
 *
 * Default protocol: the sender's staged message is MPI_PACKED bytes; the
 * receive is a pooled staged operation whose inner receive is posted with
 * PMPI_Imrecv into host staging (src/protocol/mrecv.c) and unpacked into
 * the device buffer like any staged receive (truncation, status, errors,
 * completion calls alike).  MPI_Mrecv has no communicator argument: errors
 * found by mpiacc are raised where MPI raises those of calls without one
 * (MPI_COMM_SELF's handler, else MPI_COMM_WORLD's).
 *
 * Direct communicators: a device message probed there starts with the
 * direct protocol's header and may be followed by more messages; the entry
 * points (src/interpose/mprobe.c) hand the handles the probes produced
 * there to the direct protocol before this file is reached.
 */
#include "dispatch.h"
#include "memkind.h"
#include "protocol/protocol.h"

static int pmpi_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status,
                      int nonblocking, MPI_Request *req)
{
    return nonblocking ? PMPI_Imrecv_c(buf, count, dt, msg, req) : PMPI_Mrecv_c(buf, count, dt, msg, status);
}

int mpiacc_dispatch_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status,
                          int nonblocking, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_attrs_t a;
    const mpiacc_backend_t *be;
    mpiacc_pack_type_t *t = NULL;
    mpiacc_rp_op_t *op = NULL;
    MPI_Count bytes = 0;
    MPI_Request r = MPI_REQUEST_NULL;

    /* MPI's own checks of the message and the request come first. */
    if (!msg || *msg == MPI_MESSAGE_NULL || *msg == MPI_MESSAGE_NO_PROC || dt == MPI_DATATYPE_NULL || count < 0 ||
        (nonblocking && !req))
        return pmpi_mrecv(buf, count, dt, msg, status, nonblocking, req);
    /* no communicator: the pointer query applies, no assertion does */
    MPIACC_CHECK(mpiacc_dispatch_attrs(dt, buf, MPI_COMM_NULL, &a));
    if (!mpiacc_dispatch_wants_pool(&a)) return pmpi_mrecv(buf, count, dt, msg, status, nonblocking, req);
    if (mpiacc_core_disabled) MPIACC_CHECK(mpiacc_dispatch_disabled_error(&a));
    MPIACC_CHECK(mpiacc_dispatch_device_buf(&a, buf, count, dt, &be, &t, &bytes));
    if (bytes == 0) { /* nothing lands in the buffer: MPI's receive (a longer message is truncated by MPI) */
        mpiacc_pack_type_release(t);
        return pmpi_mrecv(NULL, 0, MPI_BYTE, msg, status, nonblocking, req);
    }
    if (!(op = mpiacc_rp_op_alloc(0, MPIACC_RP_SEND_STD, buf, count, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_NULL)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an operation");
    op->be = be;
    op->attrs = a;
    op->type = t;
    t = NULL;
    op->bytes = bytes;
    op->proto = &mpiacc_proto_mrecv;
    op->pstate = msg; /* taken by the protocol's start, inside submit */
    if (be->capture) MPIACC_CHECK(be->capture(&a, buf, &op->dep));
    mpi_errno = mpiacc_rp_submit(op, &r, 0);
    op = NULL;
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    if (nonblocking) {
        *req = r;
        return MPI_SUCCESS;
    }
    return mpiacc_dispatch_wait(&r, status, MPI_COMM_NULL);
fn_fail:
    if (t) mpiacc_pack_type_release(t);
    mpiacc_rp_discard(op);
    return mpiacc_err_return_comm(MPI_COMM_NULL, mpi_errno);
}
