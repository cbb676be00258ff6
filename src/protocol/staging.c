/* SPDX-License-Identifier: BSD-3-Clause */
/* protocol/staging.c: pooled host staging memory per buffer kind. */
#include "protocol.h"

/* Power-of-two size classes from 4 KiB; a few free buffers kept per class
 * and kind, so steady-state traffic allocates nothing. */
#define STAGING_MIN_LOG2 12
#define STAGING_CLASSES 40
#define STAGING_KEEP 8

static mpiacc_util_pool_t staging[MPIACC_KIND_MAX];

/* ctx: the kind.  Its backend is up whenever its staging is used (the
 * dispatcher started it), so the lookup never starts one. */
static int staging_alloc(void *ctx, size_t bytes, void **p)
{
    const mpiacc_backend_t *be = mpiacc_backend_peek((int)(intptr_t)ctx);
    if (!be) return mpiacc_err(MPIACC_ERRK_INTERN, "staging for a backend that is not running");
    return be->host_alloc(bytes, p);
}

static void staging_free(void *ctx, void *p, size_t bytes)
{
    const mpiacc_backend_t *be = mpiacc_backend_peek((int)(intptr_t)ctx);
    if (be) be->host_free(p, bytes);
}

int mpiacc_proto_init(void)
{
    /* A kind's staging comes from its backend, started by then (a kind
     * without one never gets here: the dispatcher refuses it). */
    for (int k = 0; k < MPIACC_KIND_MAX; k++)
        mpiacc_util_pool_init(&staging[k], "staging", STAGING_MIN_LOG2, STAGING_CLASSES, STAGING_KEEP,
                              staging_alloc, staging_free, (void *)(intptr_t)k);
    return MPI_SUCCESS;
}

void mpiacc_proto_finalize(void)
{
    for (int k = 0; k < MPIACC_KIND_MAX; k++)
        if (staging[k].ctx) mpiacc_util_pool_drain(&staging[k]);
}

int mpiacc_proto_staging_get(int kind, MPI_Count bytes, void **p, int *cls)
{
    *p = NULL;
    if (bytes > ((MPI_Count)1 << (STAGING_MIN_LOG2 + STAGING_CLASSES - 1)))
        return mpiacc_err(MPIACC_ERRK_COUNT, "message of %lld bytes is too large", (long long)bytes);
    return mpiacc_util_pool_get(&staging[kind], (size_t)bytes, p, cls);
}

MPI_Count mpiacc_proto_staging_capacity(int cls)
{
    return (MPI_Count)1 << (STAGING_MIN_LOG2 + cls);
}

void mpiacc_proto_staging_put(int kind, void *p, int cls)
{
    mpiacc_util_pool_put(&staging[kind], p, cls);
}

void mpiacc_proto_staging_stats(int kind, mpiacc_util_pool_stats_t *out)
{
    mpiacc_util_pool_stats(&staging[kind], out);
}
