/*
 * streampool/pool.c: the pool of active operations and its hook into MPICH's
 * progress engine, the send-ordering queue, and pooled staging memory.
 *
 * Locking.  One mutex guards the lists.  Application threads take it in the
 * MPI calls and may call PMPI functions while holding it (our lock, then
 * MPI's).  The progress poll function runs inside MPI (possibly holding
 * MPI's lock), so it only ever *tries* the mutex and returns "no progress"
 * when it is busy: there is never a wait in the other order, hence no
 * deadlock.  The generalized-request callbacks take no lock but the
 * innermost freelist lock, inside which no MPI function is called.
 */
#include <stdlib.h>
#include <string.h>

#include "sp_internal.h"

mpiacc_sp_pool_t mpiacc_sp_pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .free_lock = PTHREAD_MUTEX_INITIALIZER,
};
atomic_int mpiacc_sp_deferred_sends;

/* ---- operations ---------------------------------------------------------- */

mpiacc_sp_op_t *mpiacc_sp_op_alloc(void)
{
    mpiacc_sp_op_t *op;
    pthread_mutex_lock(&mpiacc_sp_pool.free_lock);
    op = mpiacc_sp_pool.freelist;
    if (op) mpiacc_sp_pool.freelist = op->free_next;
    pthread_mutex_unlock(&mpiacc_sp_pool.free_lock);
    if (!op && !(op = malloc(sizeof *op))) return NULL;
    memset(op, 0, sizeof *op);
    op->state = MPIACC_SP_NEW;
    op->inner = MPI_REQUEST_NULL;
    op->greq = MPI_REQUEST_NULL;
    op->host_type = MPI_DATATYPE_NULL;
    op->st_source = MPI_ANY_SOURCE;
    op->st_tag = MPI_ANY_TAG;
    return op;
}

void mpiacc_sp_op_free(mpiacc_sp_op_t *op)
{
    pthread_mutex_lock(&mpiacc_sp_pool.free_lock);
    op->free_next = mpiacc_sp_pool.freelist;
    mpiacc_sp_pool.freelist = op;
    pthread_mutex_unlock(&mpiacc_sp_pool.free_lock);
}

/* ---- progress hook ------------------------------------------------------- */

static int poll_fn(MPIX_Async_thing thing)
{
    int done;
    (void)thing;
    if (pthread_mutex_trylock(&mpiacc_sp_pool.lock) != 0) return MPIX_ASYNC_NOPROGRESS;
    mpiacc_sp_progress_locked();
    done = mpiacc_sp_pool.nactive == 0;
    if (done) mpiacc_sp_pool.registered = 0;
    pthread_mutex_unlock(&mpiacc_sp_pool.lock);
    return done ? MPIX_ASYNC_DONE : MPIX_ASYNC_NOPROGRESS;
}

void mpiacc_sp_progress_locked(void)
{
    mpiacc_sp_op_t *op, *next;
    for (op = mpiacc_sp_pool.head; op; op = next) {
        next = op->next;
        mpiacc_sp_advance(op);
    }
}

int mpiacc_sp_enqueue(mpiacc_sp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_sp_pool_t *p = &mpiacc_sp_pool;

    if (!p->registered) {
        MPIACC_CHECK(MPIX_Async_start(poll_fn, NULL, MPIX_STREAM_NULL));
        p->registered = 1;
    }
    op->prev = p->tail;
    op->next = NULL;
    if (p->tail) p->tail->next = op;
    else p->head = op;
    p->tail = op;
    p->nactive++;
    if (op->is_send) {
        op->sprev = p->stail;
        op->snext = NULL;
        if (p->stail) p->stail->snext = op;
        else p->shead = op;
        p->stail = op;
        op->in_sendq = 1;
        atomic_fetch_add(&mpiacc_sp_deferred_sends, 1);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_sp_unlink(mpiacc_sp_op_t *op)
{
    mpiacc_sp_pool_t *p = &mpiacc_sp_pool;
    if (op->prev) op->prev->next = op->next;
    else p->head = op->next;
    if (op->next) op->next->prev = op->prev;
    else p->tail = op->prev;
    op->next = op->prev = NULL;
    p->nactive--;
}

void mpiacc_sp_sendq_remove(mpiacc_sp_op_t *op)
{
    mpiacc_sp_pool_t *p = &mpiacc_sp_pool;
    if (!op->in_sendq) return;
    if (op->sprev) op->sprev->snext = op->snext;
    else p->shead = op->snext;
    if (op->snext) op->snext->sprev = op->sprev;
    else p->stail = op->sprev;
    op->snext = op->sprev = NULL;
    op->in_sendq = 0;
    atomic_fetch_sub(&mpiacc_sp_deferred_sends, 1);
}

/* ---- staging ------------------------------------------------------------- */

/* Power-of-two size classes from 4 KiB; a few free buffers kept per class
 * and kind, so steady-state traffic allocates nothing. */
#define STAGING_MIN_LOG2 12
#define STAGING_CLASSES 40
#define STAGING_KEEP 8

typedef struct {
    void *buf[STAGING_KEEP];
    int n;
} staging_bin_t;

static staging_bin_t staging[MPIACC_KIND_MAX][STAGING_CLASSES];
static const mpiacc_backend_t *staging_owner[MPIACC_KIND_MAX];
static pthread_mutex_t staging_lock = PTHREAD_MUTEX_INITIALIZER;

static int class_of(MPI_Count bytes)
{
    int c = 0;
    while (((MPI_Count)1 << (c + STAGING_MIN_LOG2)) < bytes) c++;
    return c;
}

int mpiacc_sp_staging_get(int kind, const mpiacc_backend_t *be, MPI_Count bytes, void **p, size_t *cls)
{
    int mpi_errno = MPI_SUCCESS;
    int c = class_of(bytes);
    staging_bin_t *bin;

    if (c >= STAGING_CLASSES) MPIACC_FAIL(MPIACC_ERRK_COUNT, "message of %lld bytes is too large", (long long)bytes);
    bin = &staging[kind][c];
    *cls = (size_t)c;
    *p = NULL;
    pthread_mutex_lock(&staging_lock);
    staging_owner[kind] = be;
    if (bin->n > 0) *p = bin->buf[--bin->n];
    pthread_mutex_unlock(&staging_lock);
    if (!*p) {
        MPIACC_CHECK(be->host_alloc((size_t)1 << (c + STAGING_MIN_LOG2), p));
        mpiacc_sp_pool.nstaging_allocs++;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_sp_staging_put(int kind, void *p, size_t cls)
{
    staging_bin_t *bin = &staging[kind][cls];
    pthread_mutex_lock(&staging_lock);
    if (bin->n < STAGING_KEEP) {
        bin->buf[bin->n++] = p;
        p = NULL;
    }
    pthread_mutex_unlock(&staging_lock);
    if (p) staging_owner[kind]->host_free(p, (size_t)1 << (cls + STAGING_MIN_LOG2));
}

void mpiacc_sp_staging_drain(void)
{
    pthread_mutex_lock(&staging_lock);
    for (int k = 0; k < MPIACC_KIND_MAX; k++)
        for (int c = 0; c < STAGING_CLASSES; c++)
            while (staging[k][c].n > 0)
                staging_owner[k]->host_free(staging[k][c].buf[--staging[k][c].n],
                                            (size_t)1 << (c + STAGING_MIN_LOG2));
    pthread_mutex_unlock(&staging_lock);
}

/* ---- init / finalize ----------------------------------------------------- */

int mpiacc_streampool_init(void)
{
    atomic_store(&mpiacc_sp_deferred_sends, 0);
    return MPI_SUCCESS;
}

int mpiacc_streampool_pending(void)
{
    int n;
    pthread_mutex_lock(&mpiacc_sp_pool.lock);
    n = mpiacc_sp_pool.nactive;
    pthread_mutex_unlock(&mpiacc_sp_pool.lock);
    return n;
}

int mpiacc_streampool_finalize(void)
{
    int mpi_errno = MPI_SUCCESS;
    int n = mpiacc_streampool_pending();
    mpiacc_sp_op_t *op;

    if (n > 0)
        MPIACC_FAIL(MPIACC_ERRK_PENDING,
                    "MPI_Finalize called with %d mpiacc operation(s) pending; complete them (MPI_Wait...) first", n);
    /* Let the poll function see the empty pool and unregister itself. */
    for (long i = 0; i < 1000000 && mpiacc_sp_pool.registered; i++) {
        int flag;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    }
    mpiacc_sp_staging_drain();
    pthread_mutex_lock(&mpiacc_sp_pool.free_lock);
    while ((op = mpiacc_sp_pool.freelist)) {
        mpiacc_sp_pool.freelist = op->free_next;
        free(op);
    }
    pthread_mutex_unlock(&mpiacc_sp_pool.free_lock);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
