/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reqpool/pool.c: the pool's data structures — the list of active
 * operations, the queue of sends not yet handed to MPI (MPI's
 * non-overtaking rule), and the memory of operations (a util pool).  Calls
 * nothing of op.c: the machine (op.c) uses these under mpiacc_rp_pool.lock.
 */
#include <string.h>

#include "reqpool.h"
#include "core/stats.h"
#include "util/pool.h"

mpiacc_rp_pool_t mpiacc_rp_pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
};
atomic_int mpiacc_rp_deferred_sends;
atomic_int mpiacc_rp_deferred_colls;
static atomic_ullong next_id;

/* ---- operations ---------------------------------------------------------- */

/* One size class holding an op; free ops are all kept. */
static mpiacc_util_pool_t op_mem;
static pthread_once_t op_mem_once = PTHREAD_ONCE_INIT;

static void op_mem_init(void)
{
    int l = 0;
    while (((size_t)1 << l) < sizeof(mpiacc_rp_op_t)) l++;
    mpiacc_util_pool_init(&op_mem, "operations", l, 1, 0, mpiacc_util_pool_malloc, mpiacc_util_pool_free, NULL);
}

mpiacc_rp_op_t *mpiacc_rp_op_alloc(int is_send, int mode, void *buf, MPI_Count count, int peer, int tag,
                                   MPI_Comm comm)
{
    mpiacc_rp_op_t *op;
    void *p;
    int cls;
    pthread_once(&op_mem_once, op_mem_init);
    if (mpiacc_util_pool_get(&op_mem, sizeof *op, &p, &cls) != MPI_SUCCESS) return NULL;
    op = p;
    memset(op, 0, sizeof *op);
    op->state = MPIACC_RP_NEW;
    op->id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed) + 1;
    op->inner = MPI_REQUEST_NULL;
    op->greq = MPI_REQUEST_NULL;
    op->host_type = MPI_DATATYPE_NULL;
    op->is_send = is_send;
    op->mode = mode;
    op->buf = buf;
    op->count = count;
    op->peer = peer;
    op->tag = tag;
    op->comm = op->user_comm = comm;
    /* A send's status names its destination; a receive's is set on arrival. */
    op->st_source = is_send ? peer : MPI_ANY_SOURCE;
    op->st_tag = is_send ? tag : MPI_ANY_TAG;
    op->t_state = mpiacc_core_stats_now_ns();
    mpiacc_err_save(&op->call);
    return op;
}

void mpiacc_rp_op_free(mpiacc_rp_op_t *op)
{
    mpiacc_util_pool_put(&op_mem, op, 0);
}

/* ---- lists --------------------------------------------------------------- */

void mpiacc_rp_insert(mpiacc_rp_op_t *op)
{
    mpiacc_rp_pool_t *p = &mpiacc_rp_pool;
    op->prev = p->tail;
    op->next = NULL;
    if (p->tail) p->tail->next = op;
    else p->head = op;
    p->tail = op;
    p->nactive++;
    if (op->is_send || op->is_coll) {
        op->sprev = p->stail;
        op->snext = NULL;
        if (p->stail) p->stail->snext = op;
        else p->shead = op;
        p->stail = op;
        op->in_sendq = 1;
        atomic_fetch_add(op->is_coll ? &mpiacc_rp_deferred_colls : &mpiacc_rp_deferred_sends, 1);
    }
}

void mpiacc_rp_unlink(mpiacc_rp_op_t *op)
{
    mpiacc_rp_pool_t *p = &mpiacc_rp_pool;
    if (op->prev) op->prev->next = op->next;
    else p->head = op->next;
    if (op->next) op->next->prev = op->prev;
    else p->tail = op->prev;
    op->next = op->prev = NULL;
    p->nactive--;
}

void mpiacc_rp_sendq_remove(mpiacc_rp_op_t *op)
{
    mpiacc_rp_pool_t *p = &mpiacc_rp_pool;
    if (!op->in_sendq) return;
    if (op->sprev) op->sprev->snext = op->snext;
    else p->shead = op->snext;
    if (op->snext) op->snext->sprev = op->sprev;
    else p->stail = op->sprev;
    op->snext = op->sprev = NULL;
    op->in_sendq = 0;
    atomic_fetch_sub(op->is_coll ? &mpiacc_rp_deferred_colls : &mpiacc_rp_deferred_sends, 1);
}

int mpiacc_rp_sendq_has_peer(MPI_Comm comm, int peer, const mpiacc_rp_op_t *before)
{
    for (mpiacc_rp_op_t *o = mpiacc_rp_pool.shead; o && o != before; o = o->snext)
        if (o->comm == comm && o->peer == peer) return 1;
    return 0;
}

int mpiacc_rp_pending(void)
{
    int n;
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    n = mpiacc_rp_pool.nactive;
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    return n;
}

/* Frees the memory of operations no longer in use (MPI_Finalize). */
void mpiacc_rp_pool_release(void)
{
    pthread_once(&op_mem_once, op_mem_init);
    mpiacc_util_pool_drain(&op_mem);
}

void mpiacc_rp_pool_stats(mpiacc_util_pool_stats_t *out)
{
    pthread_once(&op_mem_once, op_mem_init);
    mpiacc_util_pool_stats(&op_mem, out);
}

/* ---- completed operations not yet freed ---------------------------------- */

static pthread_mutex_t completed_lock = PTHREAD_MUTEX_INITIALIZER;
static mpiacc_rp_op_t *completed_head;

void mpiacc_rp_completed_add(mpiacc_rp_op_t *op)
{
    pthread_mutex_lock(&completed_lock);
    op->prev = NULL;
    op->next = completed_head;
    if (completed_head) completed_head->prev = op;
    completed_head = op;
    op->on_completed = 1;
    pthread_mutex_unlock(&completed_lock);
}

void mpiacc_rp_completed_remove(mpiacc_rp_op_t *op)
{
    pthread_mutex_lock(&completed_lock);
    if (op->on_completed) {
        if (op->prev) op->prev->next = op->next;
        else completed_head = op->next;
        if (op->next) op->next->prev = op->prev;
        op->next = op->prev = NULL;
        op->on_completed = 0;
    }
    pthread_mutex_unlock(&completed_lock);
}

mpiacc_rp_op_t *mpiacc_rp_completed_pop(void)
{
    mpiacc_rp_op_t *op;
    pthread_mutex_lock(&completed_lock);
    op = completed_head;
    if (op) {
        completed_head = op->next;
        if (completed_head) completed_head->prev = NULL;
        op->next = op->prev = NULL;
        op->on_completed = 0;
    }
    pthread_mutex_unlock(&completed_lock);
    return op;
}
