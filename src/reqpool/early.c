/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reqpool/early.c: stream-ordered completion (MPIACC_ORDER_STREAM): the
 * request completed before the op ends (mpiacc_rp_early; the arrows are
 * in op.c's comment block), the end of such a detached op, and the
 * failures of ops whose request had already completed.  Nothing can
 * report them on that request any more, so each is kept for the
 * application's communicator of the op and handed to the next device call
 * on it (src/dispatch), which fails with it before doing anything.  At
 * most LATE_MAX are kept (the oldest go first, logged); MPI_Finalize
 * drops, and logs, what no call took.
 */
#include "reqpool.h"
#include "core/stats.h"

/* ---- stream-ordered completion ------------------------------------------ */

int mpiacc_rp_order_after(mpiacc_rp_op_t *op, void *h)
{
    if (!op->attrs.stream_order || !op->be || !op->be->order_after || op->detached) return MPI_SUCCESS;
    return op->be->order_after(&op->attrs, h);
}

void mpiacc_rp_early(mpiacc_rp_op_t *op)
{
    MPI_Request greq = op->greq;
    if (!op->attrs.stream_order || !op->be || !op->be->order_after || op->detached || op->error != MPI_SUCCESS ||
        greq == MPI_REQUEST_NULL ||
        (op->is_send && op->mode == MPIACC_RP_SEND_SYNC) || op->is_coll)
        return;
    atomic_fetch_add_explicit(&mpiacc_rp_transitions[op->state][MPIACC_RP_T_EARLY], 1, memory_order_relaxed);
    MPIACC_LOG(MPIACC_LOG_DEBUG,
               "op %llu: %s -> %s: request completed in stream order; the op goes on (%s %d, tag %d, %lld bytes)",
               op->id, mpiacc_rp_state_name(op->state), mpiacc_rp_state_name(MPIACC_RP_T_EARLY),
               op->is_send ? "to" : "from", op->peer, op->tag, (long long)op->bytes);
    /* The status fields are final (a receive's message has arrived); the
     * query callback reads nothing the op changes from here on. */
    op->detached = 1;
    atomic_store(&op->holds, 2);
    atomic_store_explicit(&op->published, 1, memory_order_release);
    PMPI_Grequest_complete(greq); /* the free callback may run from here on */
}

/* The end of an op whose request completed early: nothing is reported on
 * the request any more; a failure is kept for the communicator (below).
 * The op's memory goes when both the pool and MPI are done with it. */
void mpiacc_rp_finish_detached(mpiacc_rp_op_t *op, int to, int error, int keep)
{
    if (to == MPIACC_RP_DONE && op->error != MPI_SUCCESS) error = op->error, to = MPIACC_RP_T_ERROR;
    if (to == MPIACC_RP_DONE) mpiacc_core_stats_op_done(op->attrs.kind, op->proto->name, op->is_send, op->bytes);
    else mpiacc_core_stats_op_failed();
    if (to != MPIACC_RP_DONE && keep) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        msg[0] = 0;
        PMPI_Error_string(error, msg, &len);
        MPIACC_LOG(MPIACC_LOG_WARN,
                   "%s %d tag %d failed after its request completed (MPIACC_ORDER_STREAM): %s; the next device "
                   "call on its communicator fails with this error",
                   op->is_send ? "send to" : "receive from", op->peer, op->tag, msg);
        mpiacc_rp_late_put(op->user_comm, error);
    }
    mpiacc_rp_move(op, to);
    op->state = MPIACC_RP_DONE;
    mpiacc_rp_completed_add(op); /* until MPI frees the request (MPI_Finalize frees what is left) */
    if (atomic_fetch_sub(&op->holds, 1) == 1) {
        mpiacc_rp_completed_remove(op);
        mpiacc_rp_op_free(op);
    }
}

/* ---- late failures ------------------------------------------------------ */

#define LATE_MAX 64

typedef struct {
    MPI_Comm comm;
    int err;
} late_t;

static pthread_mutex_t late_lock = PTHREAD_MUTEX_INITIALIZER;
static late_t late[LATE_MAX];
static atomic_int nlate;

static void log_dropped(const late_t *l, const char *why)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = 0;
    PMPI_Error_string(l->err, msg, &len);
    MPIACC_LOG(MPIACC_LOG_WARN, "a failure after stream-ordered completion was never reported (%s): %s", why, msg);
}

void mpiacc_rp_late_put(MPI_Comm comm, int err)
{
    int n;
    pthread_mutex_lock(&late_lock);
    n = atomic_load(&nlate);
    if (n == LATE_MAX) {
        log_dropped(&late[0], "too many kept");
        for (int i = 1; i < n; i++) late[i - 1] = late[i];
        n--;
    }
    late[n].comm = comm;
    late[n].err = err;
    atomic_store(&nlate, n + 1);
    pthread_mutex_unlock(&late_lock);
}

int mpiacc_rp_late_take(MPI_Comm comm)
{
    int err = MPI_SUCCESS, n;
    if (atomic_load_explicit(&nlate, memory_order_relaxed) == 0) return MPI_SUCCESS;
    pthread_mutex_lock(&late_lock);
    n = atomic_load(&nlate);
    for (int i = 0; i < n; i++) {
        if (late[i].comm != comm) continue;
        err = late[i].err;
        for (int j = i + 1; j < n; j++) late[j - 1] = late[j];
        atomic_store(&nlate, n - 1);
        break;
    }
    pthread_mutex_unlock(&late_lock);
    return err;
}

void mpiacc_rp_late_drop_all(void)
{
    pthread_mutex_lock(&late_lock);
    for (int i = 0; i < atomic_load(&nlate); i++) log_dropped(&late[i], "MPI_Finalize");
    atomic_store(&nlate, 0);
    pthread_mutex_unlock(&late_lock);
}
