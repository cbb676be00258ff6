/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/pack helper kernels: an empty kernel, a kernel that writes a mapped
 * flag, a gate that holds a stream until the host opens it (so that
 * launches queue up behind it and run back to back), a pattern fill, and
 * the pattern-floor packs of 1-D strided layouts (pack_kernels.h). */
#include <climits>
#include <cstdint>

#include <cuda_runtime.h>

#include "pack_kernels.h"

static __global__ void k_empty(void) {}

static __global__ void k_flag(volatile unsigned *f, unsigned v)
{
    __threadfence_system();
    *f = v;
}

static __global__ void k_gate(volatile int *go, long long max_cycles)
{
    const long long t0 = clock64();
    while (!*go && clock64() - t0 < max_cycles) {
    }
}

extern "C" int bench_launch_empty(cudaStream_t st)
{
    return (int)cudaLaunchKernel((const void *)k_empty, dim3(1), dim3(32), NULL, 0, st);
}

extern "C" int bench_launch_flag(volatile unsigned *flag, unsigned v, cudaStream_t st)
{
    void *args[] = {(void *)&flag, (void *)&v};
    return (int)cudaLaunchKernel((const void *)k_flag, dim3(1), dim3(1), args, 0, st);
}

extern "C" int bench_launch_gate(volatile int *go, cudaStream_t st)
{
    long long max_cycles = 4000000000LL; /* ~2 s: never hang the benchmark */
    void *args[] = {(void *)&go, (void *)&max_cycles};
    return (int)cudaLaunchKernel((const void *)k_gate, dim3(1), dim3(1), args, 0, st);
}

/* ---- pattern fill ------------------------------------------------------- */

static __global__ void k_fill(unsigned char *p, unsigned long long n)
{
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull; /* a 64-bit mix of the offset */
        x ^= x >> 33;
        x *= 0xFF51AFD7ED558CCDull;
        x ^= x >> 33;
        p[i] = (unsigned char)x;
    }
}

extern "C" int bench_launch_fill(void *p, size_t n, cudaStream_t st)
{
    const unsigned long long blocks = (n + 255) / 256;
    if (!n) return (int)cudaSuccess;
    k_fill<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, st>>>((unsigned char *)p, n);
    return (int)cudaGetLastError();
}

/* ---- pattern floor: WORD and WORD4 -------------------------------------- */

template <int W> struct floor_word;
template <> struct floor_word<1> { typedef unsigned char t; };
template <> struct floor_word<2> { typedef unsigned short t; };
template <> struct floor_word<4> { typedef unsigned int t; };
template <> struct floor_word<8> { typedef unsigned long long t; };
template <> struct floor_word<16> { typedef uint4 t; };

/* Input word of packed word i: block i / wpb, word i % wpb of it. */
template <bool P2>
static __device__ __forceinline__ unsigned long long floor_src(unsigned long long i, unsigned long long wpb, unsigned sh,
                                                               unsigned long long sw)
{
    if (P2) return (i >> sh) * sw + (i & (wpb - 1));
    const unsigned long long q = i / wpb;
    return q * sw + (i - q * wpb);
}

template <typename T, bool P2>
static __global__ void k_floor_word(const T *__restrict__ in, T *__restrict__ out, unsigned long long nw,
                                    unsigned long long wpb, unsigned sh, unsigned long long sw)
{
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < nw; i += step)
        out[i] = in[floor_src<P2>(i, wpb, sh, sw)];
}

/* 4 words per thread: i0 + k*blockDim.x, k < 4, within a tile of
 * 4*blockDim.x words per block (a warp's accesses stay consecutive). */
template <typename T, bool P2>
static __global__ void k_floor_word4(const T *__restrict__ in, T *__restrict__ out, unsigned long long nw,
                                     unsigned long long wpb, unsigned sh, unsigned long long sw)
{
    const unsigned long long tile = 4ull * blockDim.x, step = tile * gridDim.x;
    for (unsigned long long i0 = blockIdx.x * tile + threadIdx.x; i0 < nw; i0 += step) {
        T v[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const unsigned long long i = i0 + (unsigned long long)k * blockDim.x;
            if (i < nw) v[k] = in[floor_src<P2>(i, wpb, sh, sw)];
        }
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const unsigned long long i = i0 + (unsigned long long)k * blockDim.x;
            if (i < nw) out[i] = v[k];
        }
    }
}

static unsigned floor_grid(unsigned long long n, unsigned long long per_block)
{
    const unsigned long long g = (n + per_block - 1) / per_block;
    return (unsigned)(g < (unsigned long long)INT_MAX ? g : (unsigned long long)INT_MAX);
}

template <int W> static void floor_launch_words(const bench_floor_t *f, int four, cudaStream_t st)
{
    typedef typename floor_word<W>::t T;
    const unsigned threads = 256;
    const unsigned long long nw = (unsigned long long)(f->nb * (f->blk / W)), wpb = (unsigned long long)(f->blk / W);
    const unsigned long long sw = (unsigned long long)(f->stride / W);
    const bool p2 = (wpb & (wpb - 1)) == 0;
    unsigned sh = 0;
    while (p2 && (1ull << sh) < wpb) sh++;
    const T *in = (const T *)f->in;
    T *out = (T *)f->out;
    const unsigned grid = floor_grid(nw, four ? 4ull * threads : threads);
    if (four && p2) k_floor_word4<T, true><<<grid, threads, 0, st>>>(in, out, nw, wpb, sh, sw);
    else if (four) k_floor_word4<T, false><<<grid, threads, 0, st>>>(in, out, nw, wpb, sh, sw);
    else if (p2) k_floor_word<T, true><<<grid, threads, 0, st>>>(in, out, nw, wpb, sh, sw);
    else k_floor_word<T, false><<<grid, threads, 0, st>>>(in, out, nw, wpb, sh, sw);
}

/* ---- pattern floor: SPAN16 ---------------------------------------------- */

/* 32-bit component s (0..3) of a 16-byte word (selects, no local memory). */
static __device__ __forceinline__ unsigned floor_comp(const uint4 &w, unsigned s)
{
    return s == 0 ? w.x : s == 1 ? w.y : s == 2 ? w.z : w.w;
}

/* Puts block k (blk bytes at byte pos of word w, pos a multiple of blk) at
 * bytes [k*blk, (k+1)*blk) of the output vector o (little-endian). */
template <int BLK> struct floor_put;
template <> struct floor_put<8> {
    static __device__ __forceinline__ void f(unsigned (&o)[4], int k, const uint4 &w, unsigned pos)
    {
        o[2 * k] = floor_comp(w, pos >> 2);
        o[2 * k + 1] = floor_comp(w, (pos >> 2) + 1);
    }
};
template <> struct floor_put<4> {
    static __device__ __forceinline__ void f(unsigned (&o)[4], int k, const uint4 &w, unsigned pos)
    {
        o[k] = floor_comp(w, pos >> 2);
    }
};
template <> struct floor_put<2> {
    static __device__ __forceinline__ void f(unsigned (&o)[4], int k, const uint4 &w, unsigned pos)
    {
        o[k / 2] |= ((floor_comp(w, pos >> 2) >> ((pos & 2) * 8)) & 0xffffu) << ((k % 2) * 16);
    }
};
template <> struct floor_put<1> {
    static __device__ __forceinline__ void f(unsigned (&o)[4], int k, const uint4 &w, unsigned pos)
    {
        o[k / 4] |= ((floor_comp(w, pos >> 2) >> ((pos & 3) * 8)) & 0xffu) << ((k % 4) * 8);
    }
};

/* Output vector j holds blocks j*NB .. j*NB+NB-1 (NB = 16/BLK), the first
 * at input byte j*NB*stride, a multiple of 16 (stride is a multiple of
 * BLK); block k of it at k*stride from there, never across a 16-byte word
 * (BLK-aligned, BLK divides 16).  vw = NB*stride/16. */
template <int BLK>
static __global__ void k_floor_span16(const uint4 *__restrict__ in, uint4 *__restrict__ out, unsigned long long nv,
                                      unsigned long long stride, unsigned long long vw)
{
    enum { NB = 16 / BLK };
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long j = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; j < nv; j += step) {
        const uint4 *base = in + j * vw;
        uint4 w[NB];
        unsigned o[4] = {0, 0, 0, 0};
#pragma unroll
        for (int k = 0; k < NB; k++) { /* loads: each word once */
            const unsigned long long wi = ((unsigned long long)k * stride) >> 4;
            if (k > 0 && wi == (((unsigned long long)(k - 1) * stride) >> 4)) w[k] = w[k > 0 ? k - 1 : 0];
            else w[k] = base[wi];
        }
#pragma unroll
        for (int k = 0; k < NB; k++) floor_put<BLK>::f(o, k, w[k], (unsigned)(((unsigned long long)k * stride) & 15));
        out[j] = make_uint4(o[0], o[1], o[2], o[3]);
    }
}

/* ---- pattern floor: planning and launch --------------------------------- */

extern "C" int bench_floor_word(const bench_floor_t *f)
{
    const uintptr_t a = (uintptr_t)f->in | (uintptr_t)f->out;
    for (int w = 16; w > 1; w /= 2)
        if (f->blk % w == 0 && f->stride % w == 0 && a % (uintptr_t)w == 0) return w;
    return 1;
}

extern "C" int bench_floor_applies(const bench_floor_t *f, int v)
{
    const long long last = f->nb >= 1 ? (f->nb - 1) * f->stride + f->blk : 0; /* one past the last input byte */
    if (!f->in || !f->out || f->nb < 1 || f->blk < 1 || f->stride < f->blk || last > f->in_bytes) return 0;
    switch (v) {
    case BENCH_FLOOR_WORD:
    case BENCH_FLOOR_WORD4: return 1;
    case BENCH_FLOOR_SPAN16:
        /* the 16-byte word holding the last block lies within in_bytes */
        return (f->blk == 1 || f->blk == 2 || f->blk == 4 || f->blk == 8) && f->stride <= 64 &&
               f->stride % f->blk == 0 && (uintptr_t)f->in % 16 == 0 && (uintptr_t)f->out % 16 == 0 &&
               (f->nb * f->blk) % 16 == 0 && (last + 15) / 16 * 16 <= f->in_bytes;
    default: return 0;
    }
}

extern "C" int bench_launch_floor(const bench_floor_t *f, int v, cudaStream_t st)
{
    if (!bench_floor_applies(f, v)) return (int)cudaErrorInvalidValue;
    if (v == BENCH_FLOOR_SPAN16) {
        const unsigned long long nv = (unsigned long long)(f->nb * f->blk / 16), stride = (unsigned long long)f->stride;
        const unsigned long long vw = (unsigned long long)(16 / f->blk) * stride / 16;
        const unsigned grid = floor_grid(nv, 256);
        const uint4 *in = (const uint4 *)f->in;
        uint4 *out = (uint4 *)f->out;
        switch (f->blk) {
        case 1: k_floor_span16<1><<<grid, 256, 0, st>>>(in, out, nv, stride, vw); break;
        case 2: k_floor_span16<2><<<grid, 256, 0, st>>>(in, out, nv, stride, vw); break;
        case 4: k_floor_span16<4><<<grid, 256, 0, st>>>(in, out, nv, stride, vw); break;
        default: k_floor_span16<8><<<grid, 256, 0, st>>>(in, out, nv, stride, vw); break;
        }
    } else {
        const int four = v == BENCH_FLOOR_WORD4;
        switch (bench_floor_word(f)) {
        case 16: floor_launch_words<16>(f, four, st); break;
        case 8: floor_launch_words<8>(f, four, st); break;
        case 4: floor_launch_words<4>(f, four, st); break;
        case 2: floor_launch_words<2>(f, four, st); break;
        default: floor_launch_words<1>(f, four, st); break;
        }
    }
    return (int)cudaGetLastError();
}
