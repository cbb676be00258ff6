/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reqpool/finalize.c: the pool's start and end — mpiacc_rp_init, and
 * MPI_Finalize with operations still pending (a bounded wait, cancelled
 * receives, abandoned operations, requests the application never freed).
 * The state machine itself: op.c.
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "reqpool.h"
#include "core/env.h"
#include "core/stats.h"

int mpiacc_rp_init(void)
{
    atomic_store(&mpiacc_rp_deferred_sends, 0);
    return MPI_SUCCESS;
}

mpiacc_rp_finalize_report_t mpiacc_rp_last_finalize;

/* Seconds MPI_Finalize gives pending operations (MPIACC_FINALIZE_TIMEOUT,
 * default 10). */
static double finalize_timeout(void)
{
    return (double)mpiacc_env_int("MPIACC_FINALIZE_TIMEOUT");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long outcomes(int target)
{
    long n = 0;
    for (int s = 0; s < MPIACC_RP_NSTATES; s++) n += atomic_load(&mpiacc_rp_transitions[s][target]);
    return n;
}

/* One progress pass of the pool, then of MPI.  Afterwards *posted: every op
 * left is in MPI's hands (IN_FLIGHT); *only_recvs: every op left is a
 * receive waiting for its message.  Returns the number left. */
static int finalize_pass(int cancel_recvs, int *posted, int *only_recvs)
{
    int n;
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    mpiacc_rp_progress_locked();
    *posted = *only_recvs = 1;
    for (mpiacc_rp_op_t *op = mpiacc_rp_pool.head; op; op = op->next) {
        /* a receive from MPI_ANY_SOURCE still looking for its message
         * (MATCHING) waits like one MPI holds */
        int waiting = op->state == MPIACC_RP_IN_FLIGHT || op->state == MPIACC_RP_MATCHING;
        if (!waiting) *posted = 0;
        if (op->is_send || op->is_coll || !waiting) *only_recvs = 0;
        else if (cancel_recvs) atomic_store(&op->cancel_req, 1);
    }
    n = mpiacc_rp_pool.nactive;
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    mpiacc_rp_match_pending(); /* probes (and cancels) for them, outside the lock */
    MPIX_Stream_progress(MPIX_STREAM_NULL);
    if (n) sched_yield();
    return n;
}

/* Gives up on an op still busy: its request completes with an error.  Its
 * memory is released only when nothing can still touch it (no GPU work
 * enqueued, no PMPI request); otherwise it is left allocated.  Lock held. */
static void abandon(mpiacc_rp_op_t *op, mpiacc_rp_finalize_report_t *rep)
{
    /* PACKING, UNPACKING and every protocol state may have device work
     * enqueued */
    int device_busy = op->state != MPIACC_RP_NEW && op->state != MPIACC_RP_DEP_PENDING &&
                      op->state != MPIACC_RP_READY && op->state != MPIACC_RP_IN_FLIGHT;
    int mpi_busy = op->inner != MPI_REQUEST_NULL;
    MPI_Request greq = op->greq;

    MPIACC_LOG(MPIACC_LOG_WARN,
               "MPI_Finalize: abandoning op %llu, a %s %s peer %d tag %d (%lld bytes, %s, state %s)%s", op->id,
               op->be ? op->be->name : "host", op->is_send ? "send to" : "receive from", op->peer, op->tag,
               (long long)op->bytes, op->proto ? op->proto->name : "-", mpiacc_rp_state_name(op->state),
               device_busy || mpi_busy ? "; its memory is left allocated" : "");
    mpiacc_rp_sendq_remove(op);
    mpiacc_rp_unlink(op);
    if (mpi_busy) PMPI_Request_free(&op->inner); /* MPI carries it on alone */
    if (device_busy && op->be) rep->busy_kinds |= 1u << op->attrs.kind;
    if (!device_busy && !mpi_busy) mpiacc_rp_release_resources(op);
    if (op->detached) { /* its request completed already (stream order) */
        rep->abandoned++;
        mpiacc_rp_finish_detached(op, MPIACC_RP_T_ERROR,
                                  mpiacc_err(MPIACC_ERRK_PENDING, "operation abandoned by MPI_Finalize (%s)",
                                             mpiacc_rp_state_name(op->state)),
                                  0);
        rep->failed--; /* counted as abandoned only (its ERROR arrow counts in `outcomes`) */
        return;
    }
    op->error = mpiacc_err(MPIACC_ERRK_PENDING, "operation abandoned by MPI_Finalize (%s)", mpiacc_rp_state_name(op->state));
    op->state = MPIACC_RP_DONE;
    mpiacc_core_stats_op_failed();
    rep->abandoned++;
    mpiacc_rp_completed_add(op);
    atomic_store_explicit(&op->published, 1, memory_order_release);
    PMPI_Grequest_complete(greq);
}

void mpiacc_rp_finalize(mpiacc_rp_finalize_report_t *rep)
{
    const double quiet = 0.2; /* receives get this long after the last completion */
    double bound = finalize_timeout(), t0 = now_s(), last, t;
    long done0 = outcomes(MPIACC_RP_DONE), err0 = outcomes(MPIACC_RP_T_ERROR);
    long cancel0 = outcomes(MPIACC_RP_T_CANCEL);
    int n, prev, posted = 0, only_recvs = 0;
    mpiacc_rp_op_t *op;

    memset(rep, 0, sizeof *rep);
    mpiacc_rp_batch_lazy_close(); /* packs still queued in this thread's lazy batch start now */
    n = rep->pending = mpiacc_rp_pending();
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    for (op = mpiacc_rp_pool.head; op; op = op->next) rep->background += op->detached;
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    if (rep->background)
        MPIACC_LOG(MPIACC_LOG_INFO, "MPI_Finalize: %d operation(s) completed in stream order still finishing",
                   rep->background);
    if (n > rep->background)
        MPIACC_LOG(MPIACC_LOG_WARN,
                   "MPI_Finalize called with %d mpiacc operation(s) not complete (never waited, or freed with "
                   "MPI_Request_free); giving them up to %g s, then cancelling receives nothing matched",
                   n - rep->background, bound);
    /* 1: the work before MPI finishes: GPU work, dependencies, sends
     * waiting for their turn, unpacks of messages that arrived; until every
     * op left is in MPI's hands, or the time is up. */
    while (n > 0 && !posted && now_s() - t0 <= bound) n = finalize_pass(0, &posted, &only_recvs);
    /* 2: MPI_Finalize is collective: once every process is here, every
     * message a peer's pending send could post is posted.  Our operations
     * keep moving inside the barrier (MPI's progress runs the pool's
     * hook). */
    PMPI_Barrier(MPI_COMM_WORLD);
    /* 3: sends complete as peers receive them, receives whose message is
     * on its way complete; until only receives nothing matched are left
     * and nothing has completed for a while, or the time is up. */
    for (prev = n, last = now_s(); n > 0;) {
        n = finalize_pass(0, &posted, &only_recvs);
        t = now_s();
        if (n < prev) last = t, prev = n;
        if ((only_recvs && t - last > quiet) || t - t0 > bound) break;
    }
    /* 4: receives still waiting are cancelled (a receive being matched
     * right now completes normally instead); a second to settle. */
    for (t0 = now_s(); n > 0 && now_s() - t0 < 1.0;) n = finalize_pass(1, &posted, &only_recvs);
    /* 5: what is still busy is given up. */
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    while ((op = mpiacc_rp_pool.head)) abandon(op, rep);
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    rep->completed = (int)(outcomes(MPIACC_RP_DONE) - done0);
    rep->failed += (int)(outcomes(MPIACC_RP_T_ERROR) - err0);
    rep->cancelled = (int)(outcomes(MPIACC_RP_T_CANCEL) - cancel0);
    if (rep->pending)
        MPIACC_LOG(rep->pending > rep->background || rep->completed < rep->pending ? MPIACC_LOG_WARN : MPIACC_LOG_INFO,
                   "MPI_Finalize: of %d pending operation(s), %d completed, %d failed, %d receive(s) cancelled "
                   "(nothing matched them), %d abandoned",
                   rep->pending, rep->completed, rep->failed, rep->cancelled, rep->abandoned);
    /* Requests completed but never freed by the application: freed here
     * (MPI never calls the free callback for them). */
    while ((op = mpiacc_rp_completed_pop())) {
        MPI_Request r = op->greq;
        rep->unfreed++;
        PMPI_Request_free(&r); /* the free callback gives the op back */
    }
    if (rep->unfreed)
        MPIACC_LOG(MPIACC_LOG_DEBUG, "MPI_Finalize: freed %d completed request(s) the application never freed",
                   rep->unfreed);
    mpiacc_rp_late_drop_all();
    mpiacc_rp_last_finalize = *rep;
    /* Let the poll function see the empty pool and unregister itself. */
    for (long i = 0; i < 1000000; i++) {
        int flag, registered;
        pthread_mutex_lock(&mpiacc_rp_pool.lock);
        registered = mpiacc_rp_pool.registered;
        pthread_mutex_unlock(&mpiacc_rp_pool.lock);
        if (!registered) break;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    }
    mpiacc_rp_pool_release();
}
