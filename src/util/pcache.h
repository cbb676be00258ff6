/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/pcache: a lock-free cache of 4 KiB address granules known to be host
 * memory (the host side of MPIACC_UVA's pointer classification,
 * src/dispatch/memkind.c).  Direct-mapped: MPIACC_UTIL_PCACHE_SLOTS words,
 * each holding one granule's address with a valid bit; a lookup is a shift,
 * a hash, one relaxed atomic load and a compare.  A collision simply
 * replaces the older granule (the next lookup of it misses and queries
 * again).  Any thread may look up, insert and clear at any time.
 *
 * 4 KiB is at most the page size on every Linux platform, so a granule
 * never straddles two mappings.  What may be cached, and when an entry
 * goes stale, is the user's rule (memkind.c documents it).
 */
#ifndef MPIACC_UTIL_PCACHE_H_INCLUDED
#define MPIACC_UTIL_PCACHE_H_INCLUDED

#include <stdatomic.h>
#include <stdint.h>

#define MPIACC_UTIL_PCACHE_SHIFT 12
#define MPIACC_UTIL_PCACHE_SLOTS 4096 /* a power of two: 32 KiB of words */

typedef struct mpiacc_util_pcache {
    _Atomic uintptr_t slot[MPIACC_UTIL_PCACHE_SLOTS];
} mpiacc_util_pcache_t;

static inline unsigned mpiacc_util_pcache_index(uintptr_t granule)
{
    return (unsigned)((granule ^ (granule >> 12) ^ (granule >> 24)) & (MPIACC_UTIL_PCACHE_SLOTS - 1));
}

/* Whether p's granule is in the cache. */
static inline int mpiacc_util_pcache_has(mpiacc_util_pcache_t *c, const void *p)
{
    uintptr_t g = (uintptr_t)p >> MPIACC_UTIL_PCACHE_SHIFT;
    uintptr_t e = atomic_load_explicit(&c->slot[mpiacc_util_pcache_index(g)], memory_order_relaxed);
    return e == ((g << 1) | 1u);
}

/* Records p's granule (replacing whatever shared its slot). */
static inline void mpiacc_util_pcache_put(mpiacc_util_pcache_t *c, const void *p)
{
    uintptr_t g = (uintptr_t)p >> MPIACC_UTIL_PCACHE_SHIFT;
    atomic_store_explicit(&c->slot[mpiacc_util_pcache_index(g)], (g << 1) | 1u, memory_order_relaxed);
}

/* Forgets every granule of [p, p + len) (len 0: p's granule). */
void mpiacc_util_pcache_forget(mpiacc_util_pcache_t *c, const void *p, size_t len);
/* Forgets everything. */
void mpiacc_util_pcache_clear(mpiacc_util_pcache_t *c);

#endif
