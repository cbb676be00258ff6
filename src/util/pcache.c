/* SPDX-License-Identifier: BSD-3-Clause */
/* util/pcache.c: forgetting granules (the lookups are inline, pcache.h). */
#include <stddef.h>

#include "pcache.h"

void mpiacc_util_pcache_forget(mpiacc_util_pcache_t *c, const void *p, size_t len)
{
    uintptr_t g0 = (uintptr_t)p >> MPIACC_UTIL_PCACHE_SHIFT;
    uintptr_t g1 = len ? ((uintptr_t)p + len - 1) >> MPIACC_UTIL_PCACHE_SHIFT : g0;
    if (g1 - g0 >= MPIACC_UTIL_PCACHE_SLOTS) { /* cheaper to drop it all */
        mpiacc_util_pcache_clear(c);
        return;
    }
    for (uintptr_t g = g0; g <= g1; g++) {
        uintptr_t want = (g << 1) | 1u;
        _Atomic uintptr_t *s = &c->slot[mpiacc_util_pcache_index(g)];
        uintptr_t e = atomic_load_explicit(s, memory_order_relaxed);
        if (e == want) atomic_compare_exchange_strong_explicit(s, &e, 0, memory_order_relaxed, memory_order_relaxed);
    }
}

void mpiacc_util_pcache_clear(mpiacc_util_pcache_t *c)
{
    for (unsigned i = 0; i < MPIACC_UTIL_PCACHE_SLOTS; i++)
        atomic_store_explicit(&c->slot[i], 0, memory_order_relaxed);
}
