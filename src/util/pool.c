/* SPDX-License-Identifier: BSD-3-Clause */
/* util/pool.c: size-classed block pool with freelists and statistics. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pool.h"

void mpiacc_util_pool_init(mpiacc_util_pool_t *p, const char *name, int min_log2, int nclasses, int keep,
                           int (*alloc_fn)(void *ctx, size_t bytes, void **out),
                           void (*free_fn)(void *ctx, void *ptr, size_t bytes), void *ctx)
{
    memset(p, 0, sizeof *p);
    p->name = name;
    p->alloc_fn = alloc_fn;
    p->free_fn = free_fn;
    p->ctx = ctx;
    p->min_log2 = min_log2;
    p->nclasses = nclasses < MPIACC_UTIL_POOL_MAXCLASSES ? nclasses : MPIACC_UTIL_POOL_MAXCLASSES;
    p->keep = keep;
    pthread_mutex_init(&p->lock, NULL);
}

static size_t class_bytes(const mpiacc_util_pool_t *p, int cls)
{
    return (size_t)1 << (cls + p->min_log2);
}

static int class_of(const mpiacc_util_pool_t *p, size_t bytes)
{
    int c = 0;
    while (c < p->nclasses && class_bytes(p, c) < bytes) c++;
    return c;
}

/* Accounts for a block now held by the pool; lock held. */
static void count_held(mpiacc_util_pool_t *p, size_t bytes)
{
    p->stats.cur_bytes += bytes;
    p->stats.cur_objs++;
    if (p->stats.cur_bytes > p->stats.hwm_bytes) p->stats.hwm_bytes = p->stats.cur_bytes;
    if (p->stats.cur_objs > p->stats.hwm_objs) p->stats.hwm_objs = p->stats.cur_objs;
}

/* Accounts for a block returned to the allocator; lock held. */
static void count_freed(mpiacc_util_pool_t *p, size_t bytes)
{
    p->stats.cur_bytes -= bytes;
    p->stats.cur_objs--;
    p->stats.frees++;
}

int mpiacc_util_pool_get(mpiacc_util_pool_t *p, size_t bytes, void **out, int *cls)
{
    int mpi_errno = MPI_SUCCESS;
    int c = class_of(p, bytes);
    mpiacc_util_pool_bin_t *bin;

    *out = NULL;
    if (c >= p->nclasses)
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "%s: a block of %zu bytes is too large", p->name, bytes);
    *cls = c;
    bin = &p->bins[c];
    pthread_mutex_lock(&p->lock);
    if (bin->n > 0) {
        *out = bin->free[--bin->n];
        p->stats.reuses++;
    }
    pthread_mutex_unlock(&p->lock);
    if (*out) goto fn_exit;
    MPIACC_CHECK(p->alloc_fn(p->ctx, class_bytes(p, c), out));
    pthread_mutex_lock(&p->lock);
    p->stats.allocs++;
    count_held(p, class_bytes(p, c));
    pthread_mutex_unlock(&p->lock);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_util_pool_put(mpiacc_util_pool_t *p, void *ptr, int cls)
{
    mpiacc_util_pool_bin_t *bin = &p->bins[cls];
    pthread_mutex_lock(&p->lock);
    if (bin->n == bin->cap && (p->keep == 0 || bin->cap < p->keep)) {
        int cap = bin->cap ? 2 * bin->cap : 8;
        void **a;
        if (p->keep && cap > p->keep) cap = p->keep;
        if ((a = realloc(bin->free, (size_t)cap * sizeof *a))) {
            bin->free = a;
            bin->cap = cap;
        }
    }
    if (bin->n < bin->cap) {
        bin->free[bin->n++] = ptr;
        ptr = NULL;
    } else {
        count_freed(p, class_bytes(p, cls));
    }
    pthread_mutex_unlock(&p->lock);
    if (ptr) p->free_fn(p->ctx, ptr, class_bytes(p, cls));
}

void mpiacc_util_pool_drain(mpiacc_util_pool_t *p)
{
    pthread_mutex_lock(&p->lock);
    for (int c = 0; c < p->nclasses; c++) {
        mpiacc_util_pool_bin_t *bin = &p->bins[c];
        while (bin->n > 0) {
            p->free_fn(p->ctx, bin->free[--bin->n], class_bytes(p, c));
            count_freed(p, class_bytes(p, c));
        }
        free(bin->free);
        bin->free = NULL;
        bin->cap = 0;
    }
    pthread_mutex_unlock(&p->lock);
}

void mpiacc_util_pool_stats(mpiacc_util_pool_t *p, mpiacc_util_pool_stats_t *out)
{
    pthread_mutex_lock(&p->lock);
    *out = p->stats;
    pthread_mutex_unlock(&p->lock);
}

int mpiacc_util_pool_malloc(void *ctx, size_t bytes, void **out)
{
    (void)ctx;
    if (!(*out = malloc(bytes))) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory (%zu bytes)", bytes);
    return MPI_SUCCESS;
}

void mpiacc_util_pool_free(void *ctx, void *ptr, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    free(ptr);
}
