/*
 * streampool/op.c: the life of one operation.
 *
 * STATE MACHINE (every arrow is counted in mpiacc_sp_transitions and tested
 * in tests/streampool):
 *
 *  Device send (MPI_Isend & co. on a device-tagged datatype)
 *   NEW --(backend chains on the device: pack enqueued behind dep)--> PACKING
 *   NEW --(backend host_waits and dep pending)----------------------> DEP_PENDING
 *   NEW --(backend host_waits and no dep: pack now)-----------------> PACKING
 *   DEP_PENDING --(dep done: pack enqueued)-------------------------> PACKING
 *   PACKING --(pack done)-------------------------------------------> READY
 *   READY --(no earlier unissued send to the same (comm, dest):
 *            PMPI_Isend of the packed bytes as MPI_PACKED)----------> IN_FLIGHT
 *   IN_FLIGHT --(MPIX_Request_is_complete)--------------------------> DONE
 *
 *  Host send issued while a device send to the same (comm, dest) is still
 *  unissued (MPI's non-overtaking rule):
 *   NEW --------------------------------------------------------------> READY
 *   READY --> IN_FLIGHT --> DONE as above (sends the user's datatype)
 *
 *  Device receive (MPI_Irecv & co.)
 *   NEW --(PMPI_Irecv into staging, posted at call time)------------> IN_FLIGHT
 *   IN_FLIGHT --(bytes landed; backend chains: unpack behind dep)---> UNPACKING
 *   IN_FLIGHT --(bytes landed; host_waits, dep pending)-------------> DEP_PENDING
 *   IN_FLIGHT --(bytes landed; host_waits, no dep)------------------> UNPACKING
 *   DEP_PENDING --(dep done: unpack enqueued)-----------------------> UNPACKING
 *   UNPACKING --(unpack done)---------------------------------------> DONE
 *
 *  Error and cancel paths
 *   any state --(a backend or MPI failure)--> ERROR: resources released, the
 *       generalized request completes with the error in its status (the
 *       completion call returns it; Waitall reports MPI_ERR_IN_STATUS).
 *       A receive whose message is too long completes with MPI_ERR_TRUNCATE.
 *   receive IN_FLIGHT --(MPI_Cancel: PMPI_Cancel of the inner receive, which
 *       then completes cancelled)--> CANCELLED: status says cancelled.
 *       MPI_Cancel in any later state, and on sends, does nothing (the
 *       operation completes normally, as MPI allows).
 *
 * Entering DONE/ERROR/CANCELLED: the op leaves the pool's lists, releases
 * its handles, staging and type reference, then MPI_Grequest_complete; after
 * that only the generalized request's free callback touches the op (it puts
 * it back on the freelist).  A later protocol (chunked pipelining, CUDA IPC)
 * adds states between PACKING and IN_FLIGHT / IN_FLIGHT and UNPACKING.
 */
#include <sched.h>
#include <string.h>

#include "sp_internal.h"

atomic_long mpiacc_sp_transitions[8][8];

static void move(mpiacc_sp_op_t *op, int to)
{
    atomic_fetch_add_explicit(&mpiacc_sp_transitions[op->state][to], 1, memory_order_relaxed);
    if (to < MPIACC_SP_T_ERROR) op->state = (mpiacc_sp_state_t)to;
}

/* ---- generalized request callbacks ------------------------------------- */

static int query_fn(void *extra, MPI_Status *status)
{
    mpiacc_sp_op_t *op = extra;
    status->MPI_SOURCE = op->st_source;
    status->MPI_TAG = op->st_tag;
    status->MPI_ERROR = op->error;
    PMPI_Status_set_elements_x(status, MPI_BYTE, op->is_send ? 0 : op->bytes);
    PMPI_Status_set_cancelled(status, op->cancelled);
    return op->error;
}

static int free_fn(void *extra)
{
    mpiacc_sp_op_free(extra);
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    mpiacc_sp_op_t *op = extra;
    /* Only a flag: the poll function does the PMPI_Cancel under the pool
     * lock (taking that lock here, inside MPI, could deadlock). */
    if (!complete && !op->is_send) atomic_store(&op->cancel_req, 1);
    return MPI_SUCCESS;
}

/* MPICH's MPI_Waitall expects a generalized request that is not complete
 * to be completed by its wait function (it asserts otherwise when the array
 * also holds MPI_REQUEST_NULL), so the request is an extended one whose wait
 * function drives MPI's progress once; MPICH calls it (outside its lock)
 * until the request is complete, and the progress hook does the work. */
static int wait_fn(int count, void **states, double timeout, MPI_Status *status)
{
    int mpi_errno = MPIX_Stream_progress(MPIX_STREAM_NULL);
    /* The caller is blocked on device work anyway: let other threads run
     * (a CPU OpenCL device's workers, other ranks of an oversubscribed
     * node).  On an idle core this returns at once. */
    sched_yield();
    return mpi_errno;
}

/* Called by MPI_Test* / Waitany / Waitsome (outside MPICH's lock), which
 * then skip their own progress for this request: drive it here too. */
static int poll_fn(void *extra, MPI_Status *status)
{
    return MPIX_Stream_progress(MPIX_STREAM_NULL);
}

int mpiacc_sp_grequest_start(mpiacc_sp_op_t *op)
{
    return MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, op, &op->greq);
}

/* ---- completion ---------------------------------------------------------- */

static void release_resources(mpiacc_sp_op_t *op)
{
    if (op->be) {
        if (op->dep) op->be->release(op->dep);
        if (op->xfer) op->be->release(op->xfer);
    }
    op->dep = op->xfer = NULL;
    if (op->staging) mpiacc_sp_staging_put(op->attrs.kind, op->staging, op->staging_class);
    op->staging = NULL;
    if (op->type) mpiacc_pack_type_release(op->type);
    op->type = NULL;
    if (op->host_type != MPI_DATATYPE_NULL) PMPI_Type_free(&op->host_type);
}

/* to: MPIACC_SP_DONE, MPIACC_SP_T_ERROR or MPIACC_SP_T_CANCEL */
static void finish(mpiacc_sp_op_t *op, int to, int error)
{
    MPI_Request greq = op->greq;
    if (op->in_sendq) mpiacc_sp_sendq_remove(op);
    if (op->inner != MPI_REQUEST_NULL) {
        /* Only on error/cancel paths: the inner request was never waited. */
        PMPI_Request_free(&op->inner);
    }
    mpiacc_sp_unlink(op);
    release_resources(op);
    op->error = error;
    op->cancelled = (to == MPIACC_SP_T_CANCEL);
    move(op, to);
    op->state = MPIACC_SP_DONE;
    if (error != MPI_SUCCESS)
        MPIACC_LOG(MPIACC_LOG_INFO, "%s to/from %d tag %d failed", op->is_send ? "send" : "receive", op->peer,
                   op->tag);
    PMPI_Grequest_complete(greq); /* op may be freed from here on */
}

/* ---- the machine ----------------------------------------------------------- */

static int send_may_issue(mpiacc_sp_op_t *op)
{
    for (mpiacc_sp_op_t *o = mpiacc_sp_pool.shead; o && o != op; o = o->snext)
        if (o->comm == op->comm && o->peer == op->peer) return 0;
    return 1;
}

static int issue_send(mpiacc_sp_op_t *op)
{
    const void *buf = op->be ? op->staging : op->buf;
    MPI_Count n = op->be ? op->bytes : op->count;
    MPI_Datatype t = op->be ? MPI_PACKED : op->host_type;
    switch (op->mode) {
    case MPIACC_SEND_SYNC: return PMPI_Issend_c(buf, n, t, op->peer, op->tag, op->comm, &op->inner);
    case MPIACC_SEND_READY: return PMPI_Irsend_c(buf, n, t, op->peer, op->tag, op->comm, &op->inner);
    default: return PMPI_Isend_c(buf, n, t, op->peer, op->tag, op->comm, &op->inner);
    }
}

static mpiacc_xfer_desc_t desc_of(mpiacc_sp_op_t *op)
{
    return (mpiacc_xfer_desc_t){.buf = op->buf, .type = op->type, .count = op->count, .first = 0,
                                .last = op->bytes, .host = op->staging};
}

static int start_xfer(mpiacc_sp_op_t *op, void *dep)
{
    mpiacc_xfer_desc_t d = desc_of(op);
    return op->is_send ? op->be->pack(&op->attrs, dep, &d, &op->xfer)
                       : op->be->unpack(&op->attrs, dep, &d, &op->xfer);
}

/* After the data dependency: what comes next for a send or a receive. */
static int after_dep(mpiacc_sp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    int done = 1;
    if (op->be->host_waits) {
        if (op->dep) MPIACC_CHECK(op->be->test(op->dep, &done));
        if (!done) {
            if (op->state != MPIACC_SP_DEP_PENDING) move(op, MPIACC_SP_DEP_PENDING);
            goto fn_exit;
        }
        op->be->release(op->dep);
        op->dep = NULL;
    }
    MPIACC_CHECK(start_xfer(op, op->dep));
    move(op, op->is_send ? MPIACC_SP_PACKING : MPIACC_SP_UNPACKING);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_sp_start(mpiacc_sp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    if (!op->be) {
        move(op, MPIACC_SP_READY); /* host send queued for ordering */
    } else if (op->is_send) {
        MPIACC_CHECK(after_dep(op));
    } else {
        MPIACC_CHECK(PMPI_Irecv_c(op->staging, op->bytes, MPI_PACKED, op->peer, op->tag, op->comm, &op->inner));
        move(op, MPIACC_SP_IN_FLIGHT);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_sp_advance(mpiacc_sp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    int done;
    MPI_Status st;

    for (;;) {
        mpiacc_sp_state_t before = op->state;
        switch (op->state) {
        case MPIACC_SP_DEP_PENDING:
            MPIACC_CHECK(after_dep(op));
            break;
        case MPIACC_SP_PACKING:
            done = 1;
            if (op->xfer) MPIACC_CHECK(op->be->test(op->xfer, &done));
            if (!done) break;
            op->be->release(op->xfer);
            op->xfer = NULL;
            move(op, MPIACC_SP_READY);
            break;
        case MPIACC_SP_READY:
            if (!send_may_issue(op)) break;
            MPIACC_CHECK(issue_send(op));
            mpiacc_sp_sendq_remove(op);
            move(op, MPIACC_SP_IN_FLIGHT);
            break;
        case MPIACC_SP_IN_FLIGHT:
            if (!op->is_send && atomic_exchange(&op->cancel_req, 0)) PMPI_Cancel(&op->inner);
            if (!MPIX_Request_is_complete(op->inner)) break;
            /* Complete: waiting does not enter progress. */
            mpi_errno = PMPI_Wait(&op->inner, &st);
            op->inner = MPI_REQUEST_NULL;
            if (mpi_errno != MPI_SUCCESS) goto fn_fail; /* e.g. MPI_ERR_TRUNCATE */
            if (op->is_send) {
                finish(op, MPIACC_SP_DONE, MPI_SUCCESS);
                return 1;
            } else {
                int cancelled = 0;
                MPI_Count n = 0;
                PMPI_Test_cancelled(&st, &cancelled);
                if (cancelled) {
                    finish(op, MPIACC_SP_T_CANCEL, MPI_SUCCESS);
                    return 1;
                }
                PMPI_Get_count_c(&st, MPI_BYTE, &n);
                op->st_source = st.MPI_SOURCE;
                op->st_tag = st.MPI_TAG;
                op->bytes = n;
                MPIACC_CHECK(after_dep(op));
            }
            break;
        case MPIACC_SP_UNPACKING:
            done = 1;
            if (op->xfer) MPIACC_CHECK(op->be->test(op->xfer, &done));
            if (!done) break;
            finish(op, MPIACC_SP_DONE, MPI_SUCCESS);
            return 1;
        case MPIACC_SP_DONE:
            return 1;
        case MPIACC_SP_NEW: /* not in the pool yet */
            break;
        }
        if (op->state == before) break; /* nothing more to do now */
    }
    return 0;
fn_fail:
    finish(op, MPIACC_SP_T_ERROR, mpi_errno);
    return 1;
}
