/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/pool: a pool of reusable memory blocks.  Requests are rounded up to a
 * power-of-two size class; freed blocks go back on their class's freelist
 * (at most `keep` per class, the rest are returned to the allocator), so
 * steady-state traffic allocates nothing.  One lock per pool, never held
 * across the allocator's calls.  Statistics are kept for diagnostics.
 *
 * The blocks themselves are never written by the pool (the freelist is a
 * side array), so a pool can hold memory the CPU must not touch.
 */
#ifndef MPIACC_UTIL_POOL_H_INCLUDED
#define MPIACC_UTIL_POOL_H_INCLUDED

#include <pthread.h>
#include <stddef.h>

#define MPIACC_UTIL_POOL_MAXCLASSES 48

typedef struct mpiacc_util_pool_stats {
    long allocs;      /* blocks obtained from the allocator               */
    long reuses;      /* requests served from a freelist                  */
    long frees;       /* blocks returned to the allocator                 */
    size_t cur_bytes; /* bytes held now (in use plus on freelists)        */
    size_t hwm_bytes; /* highest cur_bytes seen                           */
    long cur_objs;    /* blocks held now                                  */
    long hwm_objs;    /* highest cur_objs seen                            */
} mpiacc_util_pool_stats_t;

typedef struct mpiacc_util_pool_bin {
    void **free; /* side array of free blocks */
    int n, cap;
} mpiacc_util_pool_bin_t;

typedef struct mpiacc_util_pool {
    const char *name;
    /* Allocator (returns an MPI error code) and its release; ctx is passed
     * through. */
    int (*alloc_fn)(void *ctx, size_t bytes, void **p);
    void (*free_fn)(void *ctx, void *p, size_t bytes);
    void *ctx;
    int min_log2; /* smallest class: 1 << min_log2 bytes               */
    int nclasses; /* classes min_log2 .. min_log2 + nclasses - 1         */
    int keep;     /* free blocks kept per class; 0: no limit            */
    pthread_mutex_t lock;
    mpiacc_util_pool_bin_t bins[MPIACC_UTIL_POOL_MAXCLASSES];
    mpiacc_util_pool_stats_t stats;
} mpiacc_util_pool_t;

/* Sets up an empty pool.  nclasses <= MPIACC_UTIL_POOL_MAXCLASSES. */
void mpiacc_util_pool_init(mpiacc_util_pool_t *p, const char *name, int min_log2, int nclasses, int keep,
                           int (*alloc_fn)(void *ctx, size_t bytes, void **out),
                           void (*free_fn)(void *ctx, void *ptr, size_t bytes), void *ctx);
/* A block of at least `bytes` bytes; *cls is its class (for put).
 * MPIACC_ERRK_COUNT when bytes exceeds the largest class. */
int mpiacc_util_pool_get(mpiacc_util_pool_t *p, size_t bytes, void **out, int *cls);
/* Gives a block of class cls back. */
void mpiacc_util_pool_put(mpiacc_util_pool_t *p, void *ptr, int cls);
/* Returns every free block to the allocator (blocks in use stay valid). */
void mpiacc_util_pool_drain(mpiacc_util_pool_t *p);
/* A consistent copy of the statistics. */
void mpiacc_util_pool_stats(mpiacc_util_pool_t *p, mpiacc_util_pool_stats_t *out);

/* malloc / free as a pool allocator (ctx unused). */
int mpiacc_util_pool_malloc(void *ctx, size_t bytes, void **out);
void mpiacc_util_pool_free(void *ctx, void *ptr, size_t bytes);

#endif
