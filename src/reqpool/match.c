/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reqpool/match.c: receives from MPI_ANY_SOURCE through a matched probe (MPICH 5.0.2's UCX
 * netmod loses wildcard receives whose message already waits at UCX; see
 * docs/semantics.md).  The MATCHING state of op.c's machine: an op waits
 * here, in call order, until MPI_Improbe finds its message, then takes it
 * with the protocol's matched step (IN_FLIGHT) and advances as any other.
 * Probes are made from MPI calls (match_start, the waits below, the probes
 * and blocking calls of the interposition), never from the progress hook.
 */
#include "reqpool.h"

/* ---- receives from MPI_ANY_SOURCE through a matched probe ------------------ */

atomic_int mpiacc_rp_matching;

/* op (NEW or MATCHING) receives msg (NULL: op names its source, its
 * receive is posted): IN_FLIGHT.  Lock held. */
static int take(mpiacc_rp_op_t *op, MPI_Message *msg)
{
    int mpi_errno = MPI_SUCCESS;
    if (!op->proto->matched) MPIACC_FAIL(MPIACC_ERRK_INTERN, "%s protocol: no matched step", op->proto->name);
    MPIACC_CHECK(op->proto->matched(op, msg));
    if (op->state == MPIACC_RP_MATCHING) atomic_fetch_sub_explicit(&mpiacc_rp_matching, 1, memory_order_relaxed);
    mpiacc_rp_move(op, MPIACC_RP_IN_FLIGHT);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* One probe for op's message; *found: received (IN_FLIGHT).  A receive
 * naming its source (behind a wildcard one until now) has nothing to fear
 * from MPI: its receive is posted (the matched step without a message).
 * Lock held. */
static int match_once(mpiacc_rp_op_t *op, int *found)
{
    int mpi_errno = MPI_SUCCESS, flag = 1;
    MPI_Message msg = MPI_MESSAGE_NULL;
    *found = 0;
    if (op->peer == MPI_ANY_SOURCE)
        MPIACC_CHECK(PMPI_Improbe(MPI_ANY_SOURCE, op->tag, op->comm, &flag, &msg, MPI_STATUS_IGNORE));
    if (!flag) goto fn_exit;
    MPIACC_CHECK(take(op, op->peer == MPI_ANY_SOURCE ? &msg : NULL));
    *found = 1;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Whether a message that a receive of (src, tag, comm) could take could
 * match op too: the same communicator, sources equal or one of them
 * MPI_ANY_SOURCE, tags equal or one of them MPI_ANY_TAG. */
static int overlaps(const mpiacc_rp_op_t *op, int src, int tag, MPI_Comm comm)
{
    return op->comm == comm && (op->peer == src || op->peer == MPI_ANY_SOURCE || src == MPI_ANY_SOURCE) &&
           (op->tag == tag || op->tag == MPI_ANY_TAG || tag == MPI_ANY_TAG);
}

/* Whether an op before `end` (NULL: any) that overlaps (src, tag, comm)
 * is still MATCHING; lock held. */
static int earlier_unmatched(const mpiacc_rp_op_t *end, int src, int tag, MPI_Comm comm)
{
    for (const mpiacc_rp_op_t *o = mpiacc_rp_pool.head; o && o != end; o = o->next)
        if (o->state == MPIACC_RP_MATCHING && overlaps(o, src, tag, comm)) return 1;
    return 0;
}

int mpiacc_rp_match_behind(int src, int tag, MPI_Comm comm)
{
    int behind;
    if (!mpiacc_rp_matching_now()) return 0;
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    behind = earlier_unmatched(NULL, src, tag, comm);
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    return behind;
}

int mpiacc_rp_match_start(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS, found = 0;
    /* behind an earlier receive that could take the same message: wait */
    if (!earlier_unmatched(NULL, op->peer, op->tag, op->comm)) MPIACC_CHECK(match_once(op, &found));
    if (found) goto fn_exit;
    atomic_fetch_add_explicit(&mpiacc_rp_matching, 1, memory_order_relaxed);
    mpiacc_rp_move(op, MPIACC_RP_MATCHING);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* One sweep in call order.  A probe progresses MPI, so a message can
 * arrive between two probes: an op whose earlier overlapping op found
 * nothing in this sweep does not probe (it would take a message MPI's
 * order of posted receives gives to the earlier one). */
int mpiacc_rp_match_pending_for(int src, int tag, MPI_Comm comm)
{
    mpiacc_rp_op_t *op, *next;
    int blocked;
    if (atomic_load_explicit(&mpiacc_rp_matching, memory_order_relaxed) == 0) return 0;
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    for (op = mpiacc_rp_pool.head; op; op = next) {
        int found = 0, mpi_errno;
        next = op->next;
        if (op->state != MPIACC_RP_MATCHING) continue;
        if (atomic_exchange(&op->cancel_req, 0)) {
            mpiacc_rp_finish(op, MPIACC_RP_T_CANCEL, MPI_SUCCESS);
            continue;
        }
        if (earlier_unmatched(op, op->peer, op->tag, op->comm)) continue;
        mpi_errno = match_once(op, &found);
        if (mpi_errno != MPI_SUCCESS) {
            mpiacc_rp_finish(op, MPIACC_RP_T_ERROR, mpi_errno);
        } else if (found) {
            mpiacc_rp_advance(op);
        }
    }
    blocked = comm != MPI_COMM_NULL && earlier_unmatched(NULL, src, tag, comm);
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    return blocked;
}

int mpiacc_rp_match_offer(MPI_Message *msg, int src, int tag, MPI_Comm comm)
{
    int taken = 0, mpi_errno = MPI_SUCCESS;
    mpiacc_rp_op_t *op;
    if (!mpiacc_rp_matching_now() || src == MPI_PROC_NULL || *msg == MPI_MESSAGE_NO_PROC) return 0;
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    for (op = mpiacc_rp_pool.head; op; op = op->next) {
        if (op->state != MPIACC_RP_MATCHING || op->comm != comm || (op->peer != MPI_ANY_SOURCE && op->peer != src) ||
            (op->tag != MPI_ANY_TAG && op->tag != tag))
            continue;
        if ((mpi_errno = take(op, msg)) != MPI_SUCCESS) mpiacc_rp_finish(op, MPIACC_RP_T_ERROR, mpi_errno);
        else mpiacc_rp_advance(op);
        taken = 1;
        break;
    }
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    return taken;
}

void mpiacc_rp_match_pending(void)
{
    (void)mpiacc_rp_match_pending_for(MPI_ANY_SOURCE, 0, MPI_COMM_NULL);
}

int mpiacc_rp_pmpi_wait(MPI_Request *r, MPI_Status *st)
{
    int rc, flag = 0;
    if (!mpiacc_rp_matching_now()) return PMPI_Wait(r, st);
    do {
        mpiacc_rp_match_pending();
        rc = PMPI_Test(r, &flag, st);
    } while (rc == MPI_SUCCESS && !flag);
    return rc;
}

int mpiacc_rp_pmpi_waitall(int n, MPI_Request r[], MPI_Status st[])
{
    int rc, flag = 0;
    if (!mpiacc_rp_matching_now()) return PMPI_Waitall(n, r, st);
    do {
        mpiacc_rp_match_pending();
        rc = PMPI_Testall(n, r, &flag, st);
    } while (rc == MPI_SUCCESS && !flag);
    return rc;
}

int mpiacc_rp_pmpi_waitany(int n, MPI_Request r[], int *idx, MPI_Status *st)
{
    int rc, flag = 0;
    if (!mpiacc_rp_matching_now()) return PMPI_Waitany(n, r, idx, st);
    do {
        mpiacc_rp_match_pending();
        rc = PMPI_Testany(n, r, idx, &flag, st);
    } while (rc == MPI_SUCCESS && !flag);
    return rc;
}

int mpiacc_rp_pmpi_waitsome(int n, MPI_Request r[], int *nout, int idx[], MPI_Status st[])
{
    int rc;
    if (!mpiacc_rp_matching_now()) return PMPI_Waitsome(n, r, nout, idx, st);
    do {
        mpiacc_rp_match_pending();
        rc = PMPI_Testsome(n, r, nout, idx, st);
    } while (rc == MPI_SUCCESS && *nout == 0);
    return rc;
}
