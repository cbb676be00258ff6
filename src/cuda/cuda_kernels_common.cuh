/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_kernels_common.cuh: what the pack/unpack kernels of the CUDA backend
 * share, included by cuda_kernels.cu (the generic point-based kernel) and
 * cuda_kernels_strided.cu (the strided and constant-stride kernels).
 *
 * Both kernels work in aligned 16-byte vectors of the packed side.  The
 * thread of vector j handles words kk = j*V - leadw + m (m < V = 16/ws) of
 * the range: it computes their V input addresses, issues its V loads
 * together and moves the vector with one 16-byte store (pack) or load
 * (unpack).  Warps cover 512 contiguous packed bytes per access, so
 * one-shot transfers write (or read) full lines of mapped host memory.
 * Tiles of U*blockDim vectors whose vectors are all complete take the
 * unrolled path with U vectors per thread in flight (U > 1 only for large
 * transfers, where the grid is bound by the number of multiprocessors);
 * the first and last tiles check each vector and move cut vectors word by
 * word.  The same bodies run in the host emulations used by tests.
 */
#ifndef MPIACC_CUDA_KERNELS_COMMON_CUH_INCLUDED
#define MPIACC_CUDA_KERNELS_COMMON_CUH_INCLUDED

#include <stdint.h>

#include "cuda_kernels.h"

#define HD __host__ __device__ __forceinline__
#define HD_SLOW __host__ __device__ __noinline__

#define THREADS 256     /* threads per block on the device          */
#define BLOCKS_PER_SM 8 /* grid bound: one full wave (2048 threads) */
#define EMU_THREADS 32  /* emulation: small blocks, more tiles      */
#define EMU_NSM 1

/* ---- register helpers ------------------------------------------------ */

template <typename W> static HD W ld_ro(const W *p)
{
#if defined(__CUDA_ARCH__)
    return __ldg(p);
#else
    return *p;
#endif
}

/* A 16-byte vector in registers; word m of a W-typed view lives in r[]. */
struct vec16 {
    unsigned r[4];
};
static HD void vput(vec16 &v, int m, unsigned char x) { v.r[m >> 2] |= (unsigned)x << ((m & 3) * 8); }
static HD void vput(vec16 &v, int m, unsigned short x) { v.r[m >> 1] |= (unsigned)x << ((m & 1) * 16); }
static HD void vput(vec16 &v, int m, unsigned int x) { v.r[m] = x; }
static HD void vput(vec16 &v, int m, unsigned long long x)
{
    v.r[2 * m] = (unsigned)x;
    v.r[2 * m + 1] = (unsigned)(x >> 32);
}
static HD void vput(vec16 &v, int, uint4 x) { v.r[0] = x.x, v.r[1] = x.y, v.r[2] = x.z, v.r[3] = x.w; }
static HD void vget(const vec16 &v, int m, unsigned char &x) { x = (unsigned char)(v.r[m >> 2] >> ((m & 3) * 8)); }
static HD void vget(const vec16 &v, int m, unsigned short &x) { x = (unsigned short)(v.r[m >> 1] >> ((m & 1) * 16)); }
static HD void vget(const vec16 &v, int m, unsigned int &x) { x = v.r[m]; }
static HD void vget(const vec16 &v, int m, unsigned long long &x)
{
    x = (unsigned long long)v.r[2 * m] | (unsigned long long)v.r[2 * m + 1] << 32;
}
static HD void vget(const vec16 &v, int, uint4 &x) { x = make_uint4(v.r[0], v.r[1], v.r[2], v.r[3]); }
static HD vec16 ld16(const char *p)
{
    const uint4 q = ld_ro((const uint4 *)p);
    vec16 v;
    v.r[0] = q.x, v.r[1] = q.y, v.r[2] = q.z, v.r[3] = q.w;
    return v;
}
static HD void st16(char *p, const vec16 &v) { *(uint4 *)p = make_uint4(v.r[0], v.r[1], v.r[2], v.r[3]); }

/* Vectors per thread in the unrolled path: about 8 loads in flight. */
template <typename W> struct shape {
    static const int V = 16 / (int)sizeof(W);
    static const int UMAX = V >= 8 ? 1 : 8 / V;
};

/* Packed-side geometry shared by both kernels: vector j starts at
 * vb + 16*j (16-aligned) and holds range words j*V - leadw ... */
struct vgeom {
    char *vb;
    long long leadw, nv, nwords;
};
static inline vgeom make_vgeom(char *packed, long long nwords, int ws)
{
    vgeom g;
    const long long lead = (long long)((uintptr_t)packed & 15);
    g.vb = packed - lead;
    g.leadw = lead / ws;
    g.nwords = nwords;
    g.nv = (lead + nwords * ws + 15) / 16;
    return g;
}

/* One 16-byte packed piece <-> V words at the addresses ad[0..V-1]. */
template <typename W, int V, int DIR> static HD void move_piece(char *pv, char *const *ad)
{
    if (DIR == MPIACC_CUDA_DIR_PACK) {
        vec16 v = {{0, 0, 0, 0}};
#pragma unroll
        for (int m = 0; m < V; m++) vput(v, m, ld_ro((const W *)ad[m]));
        st16(pv, v);
    } else {
        const vec16 v = ld16(pv);
#pragma unroll
        for (int m = 0; m < V; m++) vget(v, m, *(W *)ad[m]);
    }
}

/* An interior tile: U 16-byte packed pieces per thread, piece u at
 * vb + 16 * (j0 + u*bd), each <-> V words at the addresses ad[u][0..V-1].
 * Every load of the tile is issued before any store (the unrolled forms of
 * the strided and generic kernels). */
template <typename W, int U, int V, int DIR>
static HD void move_tile(char *vb, long long j0, unsigned bd, char *const (&ad)[U][V])
{
    if (DIR == MPIACC_CUDA_DIR_PACK) {
        W val[U][V];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int m = 0; m < V; m++) val[u][m] = ld_ro((const W *)ad[u][m]);
#pragma unroll
        for (int u = 0; u < U; u++) {
            vec16 v = {{0, 0, 0, 0}};
#pragma unroll
            for (int m = 0; m < V; m++) vput(v, m, val[u][m]);
            st16(vb + 16 * (j0 + (long long)u * bd), v);
        }
    } else {
        vec16 in[U];
#pragma unroll
        for (int u = 0; u < U; u++) in[u] = ld16(vb + 16 * (j0 + (long long)u * bd));
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int m = 0; m < V; m++) vget(in[u], m, *(W *)ad[u][m]);
    }
}

/* Grid: tiles of u*bd vectors, at most nsm*BLOCKS_PER_SM blocks (the
 * kernels stride over the rest). */
static inline unsigned grid_for(long long nv, int u, int bd, int nsm)
{
    const long long tile = (long long)u * bd, cap = (long long)(nsm > 0 ? nsm : 1) * BLOCKS_PER_SM;
    long long g = (nv + tile - 1) / tile;
    if (g > cap) g = cap;
    return (unsigned)(g > 0 ? g : 1);
}

/* ---- completion signal (device only) ---------------------------------- */

static __device__ __forceinline__ void signal_done(const mpiacc_cuda_signal_t &sig)
{
    if (sig.count == NULL) return; /* uniform */
    __syncthreads();               /* the block's stores happen before ... */
    if (threadIdx.x == 0 && gridDim.x == 1) { /* one block: no counter round trip */
        __threadfence_system();
        *sig.flag = sig.seq;
    } else if (threadIdx.x == 0) {
        __threadfence(); /* ... they are published device-wide (cumulative) */
        const unsigned t = atomicAdd(sig.count, 1u);
        if (t == gridDim.x - 1) { /* last block: every block's stores are visible */
            __threadfence();
            atomicExch(sig.count, 0u);
            __threadfence_system();
            *sig.flag = sig.seq;
        }
    }
}

#endif
