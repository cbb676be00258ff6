/* SPDX-License-Identifier: BSD-3-Clause */
/* core/core_testhooks.c: see core_testhooks.h; libmpiacc_internal.a only. */
#include <stdlib.h>
#include <string.h>

#include "core_testhooks.h"
#include "trace_store.h"

void mpiacc_backend_test_replace(int kind, const mpiacc_backend_t *table)
{
    if (kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX) mpiacc_backend_test_tables[kind] = table;
}

/* ---- core/trace.c's records (bench/pingpong --breakdown) ---- */

int mpiacc_core_trace_start(long capacity)
{
    mpiacc_core_trace_store_t *s = &mpiacc_core_trace_store;
    mpiacc_core_trace_rec_t *r = capacity > 0 ? calloc((size_t)capacity, sizeof *r) : NULL;
    if (capacity > 0 && !r) return 0;
    pthread_mutex_lock(&s->lock);
    free(s->recs);
    s->recs = r;
    s->cap = capacity > 0 ? capacity : 0;
    s->n = s->dropped = 0;
    pthread_mutex_unlock(&s->lock);
    atomic_store(&mpiacc_core_trace_on, capacity > 0);
    return 1;
}

long mpiacc_core_trace_take(mpiacc_core_trace_rec_t *out, long max, long *dropped)
{
    mpiacc_core_trace_store_t *s = &mpiacc_core_trace_store;
    long n;
    pthread_mutex_lock(&s->lock);
    n = s->n < max ? s->n : max;
    if (out && n > 0) memcpy(out, s->recs, sizeof *out * (size_t)n);
    if (dropped) *dropped = s->dropped + (s->n - n);
    s->n = s->dropped = 0;
    pthread_mutex_unlock(&s->lock);
    return n;
}
