/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_coll_body.cuh: the body of the reduction kernel (cuda_coll.cu) and
 * its plan, as host-and-device code, so that the kernel and its host
 * emulation (tests/cuda/test_cuda_reduce_emul.cu, outside the library)
 * run the same source.  C++ (nvcc) only; no MPI here.
 *
 * Plan: when every source and dst have the same address modulo 16 (a
 * multiple of the element size), the elements from the first 16-byte
 * boundary on are read and written as 16-byte words, each thread folding
 * U words at once (U independent loads per source in flight); the few
 * elements before the boundary ("head") and after the last whole word
 * ("tail") are done one by one.  Otherwise every element is done one by
 * one (through byte copies when a pointer is not even aligned to the
 * element size).  The grid is sized to the work, at most MAXB_PER_SM
 * blocks per SM (one wave), with a grid-stride loop beyond that.  Each element is
 * read from every source before it is written, so dst may alias a source
 * at the same elements, and the fold order is the same in both paths.
 */
#ifndef MPIACC_CUDA_COLL_BODY_CUH_INCLUDED
#define MPIACC_CUDA_COLL_BODY_CUH_INCLUDED

#include <stdint.h>
#include <string.h>

#include "cuda_coll.h"

namespace mpiacc_cuda_rd {

constexpr int NT = 256;        /* threads per block                 */
constexpr int U = 4;           /* 16-byte words per thread per pass */
constexpr int MAXB_PER_SM = 4; /* blocks per SM before grid-striding: all resident at once
                                  (ptxas, CUDA 13, sm_90: 40 to 64 registers, no spills) */

struct args {
    const char *src[MPIACC_CUDA_RED_MAXSRC];
    char *dst;
    long long head;   /* elements done one by one before the words */
    long long nvec;   /* 16-byte words from element head on         */
    long long count;  /* all elements                               */
    int n;
    int elem_aligned; /* every pointer aligned to the element size  */
};

/* Bytes of an element kind (0: unknown). */
static inline __host__ __device__ int elem_size(int kind)
{
    switch (kind) {
    case MPIACC_CUDA_RED_I8:
    case MPIACC_CUDA_RED_U8: return 1;
    case MPIACC_CUDA_RED_I16:
    case MPIACC_CUDA_RED_U16: return 2;
    case MPIACC_CUDA_RED_I32:
    case MPIACC_CUDA_RED_U32:
    case MPIACC_CUDA_RED_F32: return 4;
    case MPIACC_CUDA_RED_I64:
    case MPIACC_CUDA_RED_U64:
    case MPIACC_CUDA_RED_F64: return 8;
    default: return 0;
    }
}

/* Integer promotion would make u8/u16 arithmetic signed int (whose
 * overflow is undefined): compute in unsigned. */
template <typename T> struct arith { typedef T type; };
template <> struct arith<uint8_t> { typedef unsigned type; };
template <> struct arith<uint16_t> { typedef unsigned type; };

/* acc op x.  Floating point takes SUM, PROD, MIN, MAX only (the others are
 * never instantiated for it). */
template <typename T, int OP> struct op {
    static __host__ __device__ __forceinline__ T apply(T a, T x)
    {
        typedef typename arith<T>::type A;
        switch (OP) {
        case MPIACC_CUDA_RED_SUM: return (T)((A)a + (A)x);
        case MPIACC_CUDA_RED_PROD: return (T)((A)a * (A)x);
        case MPIACC_CUDA_RED_MIN: return a < x ? a : x;
        case MPIACC_CUDA_RED_MAX: return a > x ? a : x;
        case MPIACC_CUDA_RED_LAND: return (T)(a != (T)0 && x != (T)0);
        case MPIACC_CUDA_RED_LOR: return (T)(a != (T)0 || x != (T)0);
        case MPIACC_CUDA_RED_LXOR: return (T)((a != (T)0) != (x != (T)0));
        case MPIACC_CUDA_RED_BAND: return (T)((A)a & (A)x);
        case MPIACC_CUDA_RED_BOR: return (T)((A)a | (A)x);
        default: return (T)((A)a ^ (A)x);
        }
    }
};
template <int OP> struct fop {
    template <typename F> static __host__ __device__ __forceinline__ F apply(F a, F x)
    {
        switch (OP) {
        case MPIACC_CUDA_RED_SUM: return a + x;
        case MPIACC_CUDA_RED_PROD: return a * x;
        case MPIACC_CUDA_RED_MIN: return a < x ? a : x;
        default: return a > x ? a : x; /* MAX */
        }
    }
};
template <int OP> struct op<float, OP> {
    static __host__ __device__ __forceinline__ float apply(float a, float x) { return fop<OP>::apply(a, x); }
};
template <int OP> struct op<double, OP> {
    static __host__ __device__ __forceinline__ double apply(double a, double x) { return fop<OP>::apply(a, x); }
};

template <typename T> union vec {
    uint4 u;
    T t[16 / sizeof(T)];
};

template <typename T> __host__ __device__ __forceinline__ T load1(const char *p, long long e, int aligned)
{
    T v;
    if (aligned) v = ((const T *)p)[e];
    else memcpy(&v, p + e * (long long)sizeof(T), sizeof(T));
    return v;
}

template <typename T> __host__ __device__ __forceinline__ void store1(char *p, long long e, T v, int aligned)
{
    if (aligned) ((T *)p)[e] = v;
    else memcpy(p + e * (long long)sizeof(T), &v, sizeof(T));
}

/* What thread tid of nthr does. */
template <typename T, int OP> __host__ __device__ __forceinline__ void body(const args &a, long long tid, long long nthr)
{
    constexpr int W = 16 / sizeof(T);
    const long long hb = a.head * (long long)sizeof(T); /* byte offset of the first word */
    /* words: thread tid takes words b, b + nthr, ..., b + (U-1) nthr of each pass */
    for (long long b = tid; b < a.nvec; b += nthr * U) {
        vec<T> acc[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long j = b + u * nthr;
            acc[u].u = make_uint4(0, 0, 0, 0);
            if (j < a.nvec) acc[u].u = ((const uint4 *)(a.src[0] + hb))[j];
        }
        for (int i = 1; i < a.n; i++) {
            const uint4 *s = (const uint4 *)(a.src[i] + hb);
            vec<T> x[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long long j = b + u * nthr;
                x[u].u = make_uint4(0, 0, 0, 0);
                if (j < a.nvec) x[u].u = s[j];
            }
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int w = 0; w < W; w++) acc[u].t[w] = op<T, OP>::apply(acc[u].t[w], x[u].t[w]);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long j = b + u * nthr;
            if (j < a.nvec) ((uint4 *)(a.dst + hb))[j] = acc[u].u;
        }
    }
    /* head and tail, element by element */
    const long long nsc = a.count - a.nvec * W;
    for (long long s = tid; s < nsc; s += nthr) {
        const long long e = s < a.head ? s : s + a.nvec * W;
        T acc = load1<T>(a.src[0], e, a.elem_aligned);
        for (int i = 1; i < a.n; i++) acc = op<T, OP>::apply(acc, load1<T>(a.src[i], e, a.elem_aligned));
        store1<T>(a.dst, e, acc, a.elem_aligned);
    }
}

/* Calls f.template run<T, OP>() for the kernel that (kind, op) uses (signed
 * kinds use the unsigned kernel except for MIN / MAX); returns
 * cudaErrorInvalidValue for a pair without one. */
template <class F> int dispatch(int kind, int o, F &f)
{
#define MPIACC_RD_OPS_ARITH(T_)                                                           \
    case MPIACC_CUDA_RED_SUM: return f.template run<T_, MPIACC_CUDA_RED_SUM>();            \
    case MPIACC_CUDA_RED_PROD: return f.template run<T_, MPIACC_CUDA_RED_PROD>();
#define MPIACC_RD_OPS_MINMAX(T_)                                                          \
    case MPIACC_CUDA_RED_MIN: return f.template run<T_, MPIACC_CUDA_RED_MIN>();            \
    case MPIACC_CUDA_RED_MAX: return f.template run<T_, MPIACC_CUDA_RED_MAX>();
#define MPIACC_RD_OPS_BITS(T_)                                                            \
    case MPIACC_CUDA_RED_LAND: return f.template run<T_, MPIACC_CUDA_RED_LAND>();          \
    case MPIACC_CUDA_RED_LOR: return f.template run<T_, MPIACC_CUDA_RED_LOR>();            \
    case MPIACC_CUDA_RED_LXOR: return f.template run<T_, MPIACC_CUDA_RED_LXOR>();          \
    case MPIACC_CUDA_RED_BAND: return f.template run<T_, MPIACC_CUDA_RED_BAND>();          \
    case MPIACC_CUDA_RED_BOR: return f.template run<T_, MPIACC_CUDA_RED_BOR>();            \
    case MPIACC_CUDA_RED_BXOR: return f.template run<T_, MPIACC_CUDA_RED_BXOR>();
#define MPIACC_RD_INT(S_, U_)                                                             \
    switch (o) {                                                                          \
        MPIACC_RD_OPS_ARITH(U_)                                                           \
        MPIACC_RD_OPS_BITS(U_)                                                            \
    case MPIACC_CUDA_RED_MIN: return f.template run<S_, MPIACC_CUDA_RED_MIN>();            \
    case MPIACC_CUDA_RED_MAX: return f.template run<S_, MPIACC_CUDA_RED_MAX>();            \
    default: return (int)cudaErrorInvalidValue;                                           \
    }
    switch (kind) {
    case MPIACC_CUDA_RED_I8: MPIACC_RD_INT(int8_t, uint8_t)
    case MPIACC_CUDA_RED_U8: MPIACC_RD_INT(uint8_t, uint8_t)
    case MPIACC_CUDA_RED_I16: MPIACC_RD_INT(int16_t, uint16_t)
    case MPIACC_CUDA_RED_U16: MPIACC_RD_INT(uint16_t, uint16_t)
    case MPIACC_CUDA_RED_I32: MPIACC_RD_INT(int32_t, uint32_t)
    case MPIACC_CUDA_RED_U32: MPIACC_RD_INT(uint32_t, uint32_t)
    case MPIACC_CUDA_RED_I64: MPIACC_RD_INT(int64_t, uint64_t)
    case MPIACC_CUDA_RED_U64: MPIACC_RD_INT(uint64_t, uint64_t)
    case MPIACC_CUDA_RED_F32:
        switch (o) {
            MPIACC_RD_OPS_ARITH(float)
            MPIACC_RD_OPS_MINMAX(float)
        default: return (int)cudaErrorInvalidValue;
        }
    case MPIACC_CUDA_RED_F64:
        switch (o) {
            MPIACC_RD_OPS_ARITH(double)
            MPIACC_RD_OPS_MINMAX(double)
        default: return (int)cudaErrorInvalidValue;
        }
    default: return (int)cudaErrorInvalidValue;
    }
#undef MPIACC_RD_OPS_ARITH
#undef MPIACC_RD_OPS_MINMAX
#undef MPIACC_RD_OPS_BITS
#undef MPIACC_RD_INT
}

/* The plan of r: *a filled, *blocks the grid (0: nothing to do).  Returns
 * cudaErrorInvalidValue for n outside [1, MPIACC_CUDA_RED_MAXSRC], count
 * < 0 or an unknown kind. */
static inline int plan(const mpiacc_cuda_red_t *r, int nsm, args *a, long long *blocks)
{
    const long long es = elem_size(r->kind);
    long long W, need, nsc;
    uintptr_t m, all;
    int same = 1;
    *blocks = 0;
    if (es == 0 || r->n < 1 || r->n > MPIACC_CUDA_RED_MAXSRC || r->count < 0) return (int)cudaErrorInvalidValue;
    memset(a, 0, sizeof *a);
    if (r->count == 0) return (int)cudaSuccess;
    W = 16 / es;
    m = (uintptr_t)r->dst % 16;
    all = (uintptr_t)r->dst;
    for (int i = 0; i < r->n; i++) {
        a->src[i] = (const char *)r->src[i];
        all |= (uintptr_t)r->src[i];
        same &= (uintptr_t)r->src[i] % 16 == m;
    }
    a->dst = (char *)r->dst;
    a->count = r->count;
    a->n = r->n;
    a->elem_aligned = all % (uintptr_t)es == 0;
    if (same && a->elem_aligned) { /* words from the first 16-byte boundary on */
        a->head = (long long)((16 - m) % 16) / es;
        if (a->head > r->count) a->head = r->count;
        a->nvec = (r->count - a->head) / W;
    } else {
        a->head = r->count;
        a->nvec = 0;
    }
    nsc = r->count - a->nvec * W;
    need = a->nvec > nsc ? a->nvec : nsc;
    *blocks = (need + NT - 1) / NT;
    if (nsm < 1) nsm = 1;
    if (*blocks > (long long)nsm * MAXB_PER_SM) *blocks = (long long)nsm * MAXB_PER_SM;
    if (*blocks < 1) *blocks = 1;
    return (int)cudaSuccess;
}

} /* namespace mpiacc_cuda_rd */

#endif
