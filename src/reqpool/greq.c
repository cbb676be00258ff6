/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * greq.c: the callbacks of the MPI generalized request behind every pooled
 * operation (an extended request, MPIX_Grequest_start) -- what MPI asks of
 * the request: its status, its free, a cancel, and how a wait or a test
 * drives progress.  The operation's states and arrows are in op.c.
 */
#include <sched.h>

#include "reqpool.h"

static int query_fn(void *extra, MPI_Status *status)
{
    mpiacc_rp_op_t *op = extra;
    int err;
    (void)atomic_load_explicit(&op->published, memory_order_acquire);
    /* completed early: with no error (mpiacc_rp_early); later failures are
     * the communicator's (early.c), and op->error may still change */
    err = op->detached ? MPI_SUCCESS : op->error;
    status->MPI_SOURCE = op->st_source;
    status->MPI_TAG = op->st_tag;
    PMPI_Status_set_elements_x(status, MPI_BYTE, op->is_send ? 0 : op->bytes);
    PMPI_Status_set_cancelled(status, op->cancelled);
    if (mpiacc_rp_claim_result(op, err)) err = MPI_SUCCESS; /* a completion call of ours raises it (complete.c) */
    status->MPI_ERROR = err;
    return err;
}

/* MPI calls this once the request is complete and freed by the
 * application (in either order). */
static int free_fn(void *extra)
{
    mpiacc_rp_op_t *op = extra;
    (void)atomic_load_explicit(&op->published, memory_order_acquire);
    if (op->detached) {
        /* Completed early: the pool may still hold the op (finish_detached). */
        mpiacc_rp_unregister(op);
        if (atomic_fetch_sub(&op->holds, 1) == 1) {
            mpiacc_rp_completed_remove(op);
            mpiacc_rp_op_free(op);
        }
        return MPI_SUCCESS;
    }
    mpiacc_rp_completed_remove(extra);
    mpiacc_rp_unregister(extra);
    mpiacc_rp_op_free(extra);
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    mpiacc_rp_op_t *op = extra;
    /* Only a flag: the poll function does the PMPI_Cancel under the pool
     * lock (taking that lock here, inside MPI, could deadlock). */
    if (!complete && !op->is_send && !op->is_coll) atomic_store(&op->cancel_req, 1);
    return MPI_SUCCESS;
}

/* MPICH's MPI_Waitall expects a generalized request that is not complete
 * to be completed by its wait function (it asserts otherwise when the array
 * also holds MPI_REQUEST_NULL), so the request is an extended one whose wait
 * function drives MPI's progress once; MPICH calls it (outside its lock)
 * until the request is complete, and the progress hook does the work. */
static int wait_fn(int count, void **states, double timeout, MPI_Status *status)
{
    int mpi_errno;
    mpiacc_rp_batch_lazy_close(); /* packs posted together start (batch.c) */
    mpiacc_rp_match_pending(); /* receives from MPI_ANY_SOURCE looking for their message (match.c) */
    mpi_errno = MPIX_Stream_progress(MPIX_STREAM_NULL);
    /* The caller is blocked on device work anyway: let other threads run
     * (a CPU OpenCL device's workers, other ranks of an oversubscribed
     * node).  On an idle core this returns at once. */
    sched_yield();
    return mpi_errno;
}

/* Called by MPI_Test* / Waitany / Waitsome (outside MPICH's lock), which
 * then skip their own progress for this request: drive it here too. */
static int greq_poll_fn(void *extra, MPI_Status *status)
{
    mpiacc_rp_batch_lazy_close();
    mpiacc_rp_match_pending();
    return MPIX_Stream_progress(MPIX_STREAM_NULL);
}

int mpiacc_rp_greq_start(mpiacc_rp_op_t *op)
{
    return MPIX_Grequest_start(query_fn, free_fn, cancel_fn, greq_poll_fn, wait_fn, op, &op->greq);
}
