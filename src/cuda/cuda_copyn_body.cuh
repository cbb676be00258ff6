/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_copyn_body.cuh: the body of the many-piece copy kernel
 * (cuda_copyn.cu, the kernel of import_copy_n) and its plan, as
 * host-and-device code, so that the kernel and its host emulation
 * (tests/cuda/test_cuda_copyn_emul.cu, outside the library) run the same
 * source.  C++ (nvcc) only; no MPI here.
 *
 * Plan: each piece (src, dst, bytes) gets a word size ws, the largest
 * power of two <= 16 with src = dst modulo ws that leaves at least one
 * whole word after the bytes before dst's first ws boundary (the "head");
 * the piece is then `head` single bytes, nw words of ws bytes and a tail
 * of single bytes (< ws).  Its work items are its words and its single
 * bytes; the items of all pieces are numbered one after the other (the
 * piece's `first`), so the grid is spread over the total work, not over
 * the pieces: a long piece gets many blocks, a short one a few threads.
 * Thread tid of nthr takes items tid, tid + nthr, ... (U of them per
 * pass, all loads before the stores); an item finds its piece by binary
 * search of `first` (consecutive items: the same piece, so a warp's search
 * is uniform).  The grid is sized to the items, at most MAXB_PER_SM
 * blocks per SM (one wave), grid-striding beyond that.  Launch parameters:
 * one args of at most MPIACC_CUDA_COPYN_MAXP pieces, whatever the bytes.
 */
#ifndef MPIACC_CUDA_COPYN_BODY_CUH_INCLUDED
#define MPIACC_CUDA_COPYN_BODY_CUH_INCLUDED

#include <stdint.h>
#include <string.h>

#include "cuda_coll.h"

namespace mpiacc_cuda_cn {

constexpr int NT = 256;        /* threads per block                  */
constexpr int U = 4;           /* items per thread per pass           */
constexpr int MAXB_PER_SM = 4; /* blocks per SM before grid-striding  */
constexpr int SMALL = 8;       /* pieces of the small parameter block */

struct piece {
    const char *src;
    char *dst;
    long long first; /* number of the piece's first item              */
    long long nw;    /* words of ws bytes after the head               */
    int head;        /* single bytes before the first word (< ws)      */
    int lws;         /* log2 of ws                                     */
};

template <int N> struct args {
    long long total; /* items of all pieces */
    int n;           /* pieces (each with at least one item) */
    piece p[N];
};

/* Items of piece p of `bytes` bytes. */
static inline __host__ __device__ long long items(const piece &p, long long bytes)
{
    return p.nw + (bytes - (p.nw << p.lws));
}

/* One item in registers: up to 16 bytes going to dst. */
struct item {
    char *dst;
    uint4 v;
    int ws; /* 0: no item */
};

static __host__ __device__ __forceinline__ uint4 load(const char *s, int ws)
{
    uint4 v = make_uint4(0, 0, 0, 0);
    switch (ws) {
    case 16: v = *(const uint4 *)s; break;
    case 8: {
        const uint2 t = *(const uint2 *)s;
        v.x = t.x, v.y = t.y;
        break;
    }
    case 4: v.x = *(const unsigned *)s; break;
    case 2: v.x = *(const unsigned short *)s; break;
    default: v.x = *(const unsigned char *)s; break;
    }
    return v;
}

static __host__ __device__ __forceinline__ void store(char *d, uint4 v, int ws)
{
    switch (ws) {
    case 16: *(uint4 *)d = v; break;
    case 8: *(uint2 *)d = make_uint2(v.x, v.y); break;
    case 4: *(unsigned *)d = v.x; break;
    case 2: *(unsigned short *)d = (unsigned short)v.x; break;
    default: *(unsigned char *)d = (unsigned char)v.x; break;
    }
}

/* Reads item g (< a.total) into *it. */
template <int N> __host__ __device__ __forceinline__ void fetch(const args<N> &a, long long g, item *it)
{
    int lo = 0, hi = a.n; /* p[lo].first <= g < p[hi].first (p[n].first: total) */
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (a.p[mid].first <= g) lo = mid;
        else hi = mid;
    }
    const piece &p = a.p[lo];
    const long long k = g - p.first;
    long long off;
    if (k < p.nw) { /* a word */
        off = p.head + (k << p.lws);
        it->ws = 1 << p.lws;
    } else { /* a single byte of the head or of the tail */
        const long long j = k - p.nw;
        off = j < p.head ? j : j + (p.nw << p.lws);
        it->ws = 1;
    }
    it->dst = p.dst + off;
    it->v = load(p.src + off, it->ws);
}

/* What thread tid of nthr does. */
template <int N> __host__ __device__ __forceinline__ void body(const args<N> &a, long long tid, long long nthr)
{
    for (long long b = tid; b < a.total; b += nthr * U) {
        item it[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long g = b + u * nthr;
            it[u].ws = 0;
            if (g < a.total) fetch<N>(a, g, &it[u]);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (it[u].ws) store(it[u].dst, it[u].v, it[u].ws);
    }
}

/* The plan of pieces c[0..n) (n <= N; empty ones dropped): *a filled,
 * *blocks the grid (0: nothing to do).  cudaErrorInvalidValue for n < 0
 * or > N, a negative size, or a non-empty piece with a NULL pointer. */
template <int N>
static inline int plan(const mpiacc_cuda_cpiece_t *c, int n, int nsm, args<N> *a, long long *blocks)
{
    *blocks = 0;
    if (n < 0 || n > N) return (int)cudaErrorInvalidValue;
    memset(a, 0, sizeof *a);
    for (int i = 0; i < n; i++) {
        const long long bytes = c[i].bytes;
        const uintptr_t s = (uintptr_t)c[i].src, d = (uintptr_t)c[i].dst;
        piece &p = a->p[a->n];
        int lws = 4;
        if (bytes < 0) return (int)cudaErrorInvalidValue;
        if (bytes == 0) continue;
        if (!c[i].src || !c[i].dst) return (int)cudaErrorInvalidValue;
        while (lws > 0 && ((s ^ d) & ((1u << lws) - 1))) lws--; /* src = dst modulo ws */
        for (;; lws--) { /* at least one whole word after the head (ws 1 always has one) */
            const long long ws = 1ll << lws, head = (long long)((ws - (long long)(d & (uintptr_t)(ws - 1))) & (ws - 1));
            if (lws == 0 || bytes - head >= ws) {
                p.head = (int)head;
                p.nw = (bytes - head) >> lws;
                break;
            }
        }
        p.lws = lws;
        p.src = (const char *)c[i].src;
        p.dst = (char *)c[i].dst;
        p.first = a->total;
        a->total += items(p, bytes);
        a->n++;
    }
    if (a->total == 0) return (int)cudaSuccess;
    *blocks = (a->total + NT - 1) / NT;
    if (nsm < 1) nsm = 1;
    if (*blocks > (long long)nsm * MAXB_PER_SM) *blocks = (long long)nsm * MAXB_PER_SM;
    return (int)cudaSuccess;
}

} /* namespace mpiacc_cuda_cn */

#endif
