/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reqpool/batch.c: transfers started together share one launch.
 *
 * While a thread is inside a batch (mpiacc_rp_batch_begin ... end: one pass
 * of the progress engine over the pool, MPI_Startall), the pack or unpack a
 * protocol starts (steps.c, mpiacc_proto_xfer_after_dep) of a backend with
 * xfer_many is queued instead of launched: the op takes its state
 * (PACKING / UNPACKING) with op->xfer == MPIACC_RP_XFER_QUEUED.  When the
 * outermost batch of the thread ends, or MPIACC_CORE_BATCH_MAX transfers
 * wait, every queued transfer of a backend goes to it in one xfer_many call
 * (CUDA: one fused kernel), in queue order; then each op takes the steps
 * that follow a launch (stream-ordered completion, src/reqpool/early.c).
 * So the sends of one MPI_Startall share one pack launch, and the receives
 * whose bytes landed in one progress pass one unpack launch; each op then
 * goes on by itself (a send is handed to MPI as soon as its bytes are
 * ready).  Nothing waits for a batch: MPI_Startall's and a progress pass's
 * end within that call; a lazy one (below) at the thread's next progress
 * pass.  Large transfers (over MPIACC_RP_BATCH_BYTES) are not queued:
 * their launch costs little next to their copy.
 *
 * The queue is the pool's (under the pool lock); a flush by any thread
 * launches what any thread queued, which only starts work sooner.
 *
 * Posted together: a nonblocking device call (MPI_Isend, MPI_Irecv...)
 * opens a lazy batch of its thread (mpiacc_rp_batch_lazy_open, with
 * MPIACC_BATCH=1, the default) that the calls posted after it join and the
 * thread's next pass of MPI's progress engine closes (the progress hook, a
 * generalized request's wait or test, MPI_Finalize): the halo exchange's
 * MPI_Isend calls followed by MPI_Waitall share one pack launch, made as
 * MPI_Waitall starts.  A program that computes on the CPU between posting
 * and any other MPI call delays its packs by that long: MPIACC_BATCH=0 then
 * starts each pack in its own call.
 */
#include "reqpool.h"
#include "core/stats.h"

static _Thread_local int depth, lazy;

char mpiacc_rp_xfer_queued, mpiacc_rp_xfer_failed;

void mpiacc_rp_batch_begin(void)
{
    depth++;
}

/* Takes op off the queue (lock held). */
static void unqueue(mpiacc_rp_op_t *op)
{
    mpiacc_rp_op_t **pp = &mpiacc_rp_pool.bhead;
    while (*pp && *pp != op) pp = &(*pp)->bnext;
    if (!*pp) return;
    *pp = op->bnext;
    if (mpiacc_rp_pool.btail == op) {
        mpiacc_rp_op_t *t = mpiacc_rp_pool.bhead;
        while (t && t->bnext) t = t->bnext;
        mpiacc_rp_pool.btail = t;
    }
    op->bnext = NULL;
    mpiacc_rp_pool.nbatch--;
}

void mpiacc_rp_batch_forget(mpiacc_rp_op_t *op)
{
    if (op->xfer != MPIACC_RP_XFER_QUEUED) return;
    unqueue(op);
    op->xfer = NULL;
}

/* Whether a and b wait for the same thing: the same stream (or default-
 * stream rule), queue and event.  Transfers of different dependencies are
 * never launched together: one would wait for the other's work, and
 * operations on independent streams complete in the order their GPU work
 * does. */
static int same_dependency(const mpiacc_rp_op_t *a, const mpiacc_rp_op_t *b)
{
    const mpiacc_attrs_t *x = &a->attrs, *y = &b->attrs;
    return a->be == b->be && x->has_stream == y->has_stream && x->stream == y->stream &&
           x->has_queue == y->has_queue && x->queue == y->queue && x->has_event == y->has_event &&
           x->event == y->event && x->has_device == y->has_device && x->device == y->device;
}

/* The queued ops of one backend and dependency (the first's), at most
 * BATCH_MAX, in queue order, off the queue: launched together; every op then takes its
 * post-launch steps.  A failure is left in the op (MPIACC_RP_XFER_FAILED,
 * op->xerr) for its next step to report (steps.c): no op ends here, so a
 * flush never pulls an op from under a caller that is advancing one. */
static void launch_group(void)
{
    mpiacc_rp_op_t *ops[MPIACC_CORE_BATCH_MAX], **pp = &mpiacc_rp_pool.bhead;
    mpiacc_xfer_item_t items[MPIACC_CORE_BATCH_MAX];
    const mpiacc_rp_op_t *first = mpiacc_rp_pool.bhead;
    const mpiacc_backend_t *be = first->be;
    int n = 0, rc;
    long long t0 = mpiacc_core_tracing() ? mpiacc_core_stats_now_ns() : 0;
    while (*pp && n < MPIACC_CORE_BATCH_MAX) {
        mpiacc_rp_op_t *op = *pp;
        if (op != first && !same_dependency(op, first)) {
            pp = &op->bnext;
            continue;
        }
        *pp = op->bnext;
        op->bnext = NULL;
        mpiacc_rp_pool.nbatch--;
        items[n] = (mpiacc_xfer_item_t){.a = &op->attrs, .dep = op->dep, .d = op->xd, .dir = !op->is_send};
        ops[n++] = op;
    }
    for (mpiacc_rp_pool.btail = mpiacc_rp_pool.bhead; mpiacc_rp_pool.btail && mpiacc_rp_pool.btail->bnext;)
        mpiacc_rp_pool.btail = mpiacc_rp_pool.btail->bnext;
    rc = be->xfer_many(items, n);
    for (int i = 0; i < n; i++) {
        mpiacc_rp_op_t *op = ops[i];
        /* xfer_many is all or nothing: after a failure each op tries alone,
         * so one op's failure (a pinned allocation, its stream) stays its own */
        int err = rc == MPI_SUCCESS || n == 1 ? rc : be->xfer_many(&items[i], 1);
        op->xfer = err == MPI_SUCCESS ? items[i].xfer : NULL;
        if (t0) op->tr[MPIACC_CORE_TR_OP_LAUNCH] += (mpiacc_core_stats_now_ns() - t0) / n;
        if (err == MPI_SUCCESS) err = mpiacc_rp_order_after(op, op->xfer);
        if (err == MPI_SUCCESS) {
            mpiacc_rp_early(op);
        } else {
            if (op->xfer) op->be->release(op->xfer); /* waits for what it started (a shared launch too) */
            op->xfer = MPIACC_RP_XFER_FAILED;
            op->xerr = err;
        }
    }
}

void mpiacc_rp_batch_flush_locked(void)
{
    while (mpiacc_rp_pool.bhead) launch_group();
}

int mpiacc_rp_batch_queue_ok(const mpiacc_rp_op_t *op, const mpiacc_xfer_desc_t *d)
{
    return depth > 0 && op->be && op->be->xfer_many && !d->lane && d->last - d->first <= MPIACC_RP_BATCH_BYTES;
}

void mpiacc_rp_batch_queue(mpiacc_rp_op_t *op, const mpiacc_xfer_desc_t *d)
{
    op->xd = *d;
    op->xfer = MPIACC_RP_XFER_QUEUED;
    op->bnext = NULL;
    if (mpiacc_rp_pool.btail) mpiacc_rp_pool.btail->bnext = op;
    else mpiacc_rp_pool.bhead = op;
    mpiacc_rp_pool.btail = op;
    if (++mpiacc_rp_pool.nbatch >= MPIACC_CORE_BATCH_MAX) mpiacc_rp_batch_flush_locked();
}

void mpiacc_rp_batch_end_locked(void)
{
    if (depth > 0 && --depth == 0) mpiacc_rp_batch_flush_locked();
}

void mpiacc_rp_batch_end(void)
{
    if (depth != 1) {
        if (depth > 0) depth--;
        return;
    }
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    mpiacc_rp_batch_end_locked();
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
}

void mpiacc_rp_batch_lazy_open(void)
{
    if (lazy || depth > 0) return; /* open already, or inside a batch that ends within this call */
    lazy = 1;
    depth++;
}

void mpiacc_rp_batch_lazy_close_locked(void)
{
    if (!lazy) return;
    lazy = 0;
    mpiacc_rp_batch_end_locked();
}

void mpiacc_rp_batch_lazy_close(void)
{
    if (!lazy) return;
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    mpiacc_rp_batch_lazy_close_locked();
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
}
