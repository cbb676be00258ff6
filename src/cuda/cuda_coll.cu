/*
 * cuda_coll.cu: the reduction kernel of the on-device collectives
 * (cuda_coll.h).  One launch reads n sources and writes dst.
 *
 * Layout of the work: when every source and dst have the same address
 * modulo 16 (and that is a multiple of the element size), the elements
 * from the first 16-byte boundary on are read and written as 16-byte
 * words (uint4), each thread folding U words at once (U independent loads
 * per source in flight); the few elements before the boundary ("head")
 * and after the last whole word ("tail") are done one by one.  Otherwise
 * every element is done one by one (through byte copies when a pointer is
 * not even aligned to the element size).  The grid is sized to the work,
 * at most MAXB_PER_SM blocks per SM, with a grid-stride loop beyond that.
 * Each element is read from every source before it is written, so dst may
 * alias a source at the same elements.  The fold order is the same in
 * both paths: element k of the result never depends on the path taken.
 */
#include <stdint.h>
#include <string.h>

#include "cuda_coll.h"

namespace {

constexpr int NT = 256;         /* threads per block            */
constexpr int U = 4;            /* 16-byte words per thread per pass */
constexpr int MAXB_PER_SM = 8;  /* blocks per SM before grid-striding */

struct red_args {
    const char *src[MPIACC_CUDA_RED_MAXSRC];
    char *dst;
    long long head;  /* elements done one by one before the words  */
    long long nvec;  /* 16-byte words from element head on          */
    long long count; /* all elements                                */
    int n;
    int elem_aligned; /* every pointer aligned to the element size  */
};

/* Integer promotion would make u8/u16 arithmetic signed int (whose
 * overflow is undefined): compute in unsigned. */
template <typename T> struct arith { typedef T type; };
template <> struct arith<uint8_t> { typedef unsigned type; };
template <> struct arith<uint16_t> { typedef unsigned type; };

template <typename T, int OP> __device__ __forceinline__ T apply(T a, T x)
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
    default: return (T)((A)a ^ (A)x); /* BXOR (bitwise operations are instantiated for integers only) */
    }
}

/* Floating point: the bitwise and logical cases are never instantiated,
 * but the switch must compile. */
template <> __device__ __forceinline__ float apply<float, MPIACC_CUDA_RED_SUM>(float a, float x) { return a + x; }
template <> __device__ __forceinline__ float apply<float, MPIACC_CUDA_RED_PROD>(float a, float x) { return a * x; }
template <> __device__ __forceinline__ float apply<float, MPIACC_CUDA_RED_MIN>(float a, float x) { return a < x ? a : x; }
template <> __device__ __forceinline__ float apply<float, MPIACC_CUDA_RED_MAX>(float a, float x) { return a > x ? a : x; }
template <> __device__ __forceinline__ double apply<double, MPIACC_CUDA_RED_SUM>(double a, double x) { return a + x; }
template <> __device__ __forceinline__ double apply<double, MPIACC_CUDA_RED_PROD>(double a, double x) { return a * x; }
template <> __device__ __forceinline__ double apply<double, MPIACC_CUDA_RED_MIN>(double a, double x)
{
    return a < x ? a : x;
}
template <> __device__ __forceinline__ double apply<double, MPIACC_CUDA_RED_MAX>(double a, double x)
{
    return a > x ? a : x;
}

template <typename T> union vec {
    uint4 u;
    T t[16 / sizeof(T)];
};

template <typename T> __device__ __forceinline__ T load1(const char *p, long long e, int aligned)
{
    T v;
    if (aligned) v = ((const T *)p)[e];
    else memcpy(&v, p + e * (long long)sizeof(T), sizeof(T));
    return v;
}

template <typename T> __device__ __forceinline__ void store1(char *p, long long e, T v, int aligned)
{
    if (aligned) ((T *)p)[e] = v;
    else memcpy(p + e * (long long)sizeof(T), &v, sizeof(T));
}

template <typename T, int OP> __global__ void __launch_bounds__(NT) red_kernel(const red_args a)
{
    constexpr int W = 16 / sizeof(T);
    const long long tid = (long long)blockIdx.x * NT + threadIdx.x;
    const long long nthr = (long long)gridDim.x * NT;
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
                for (int w = 0; w < W; w++) acc[u].t[w] = apply<T, OP>(acc[u].t[w], x[u].t[w]);
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
        for (int i = 1; i < a.n; i++) acc = apply<T, OP>(acc, load1<T>(a.src[i], e, a.elem_aligned));
        store1<T>(a.dst, e, acc, a.elem_aligned);
    }
}

typedef const void *kfn_t;

template <typename T> kfn_t pick_arith(int op)
{
    switch (op) {
    case MPIACC_CUDA_RED_SUM: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_SUM>;
    case MPIACC_CUDA_RED_PROD: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_PROD>;
    default: return nullptr;
    }
}

template <typename T> kfn_t pick_minmax(int op)
{
    switch (op) {
    case MPIACC_CUDA_RED_MIN: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_MIN>;
    case MPIACC_CUDA_RED_MAX: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_MAX>;
    default: return nullptr;
    }
}

/* Unsigned integers: every operation but MIN/MAX (those are per signedness). */
template <typename T> kfn_t pick_uint(int op)
{
    switch (op) {
    case MPIACC_CUDA_RED_SUM:
    case MPIACC_CUDA_RED_PROD: return pick_arith<T>(op);
    case MPIACC_CUDA_RED_LAND: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_LAND>;
    case MPIACC_CUDA_RED_LOR: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_LOR>;
    case MPIACC_CUDA_RED_LXOR: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_LXOR>;
    case MPIACC_CUDA_RED_BAND: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_BAND>;
    case MPIACC_CUDA_RED_BOR: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_BOR>;
    case MPIACC_CUDA_RED_BXOR: return (kfn_t)red_kernel<T, MPIACC_CUDA_RED_BXOR>;
    default: return nullptr;
    }
}

kfn_t pick(int kind, int op)
{
    const int mm = op == MPIACC_CUDA_RED_MIN || op == MPIACC_CUDA_RED_MAX;
    switch (kind) {
    case MPIACC_CUDA_RED_I8: return mm ? pick_minmax<int8_t>(op) : pick_uint<uint8_t>(op);
    case MPIACC_CUDA_RED_U8: return mm ? pick_minmax<uint8_t>(op) : pick_uint<uint8_t>(op);
    case MPIACC_CUDA_RED_I16: return mm ? pick_minmax<int16_t>(op) : pick_uint<uint16_t>(op);
    case MPIACC_CUDA_RED_U16: return mm ? pick_minmax<uint16_t>(op) : pick_uint<uint16_t>(op);
    case MPIACC_CUDA_RED_I32: return mm ? pick_minmax<int32_t>(op) : pick_uint<uint32_t>(op);
    case MPIACC_CUDA_RED_U32: return mm ? pick_minmax<uint32_t>(op) : pick_uint<uint32_t>(op);
    case MPIACC_CUDA_RED_I64: return mm ? pick_minmax<int64_t>(op) : pick_uint<uint64_t>(op);
    case MPIACC_CUDA_RED_U64: return mm ? pick_minmax<uint64_t>(op) : pick_uint<uint64_t>(op);
    case MPIACC_CUDA_RED_F32: return mm ? pick_minmax<float>(op) : pick_arith<float>(op);
    case MPIACC_CUDA_RED_F64: return mm ? pick_minmax<double>(op) : pick_arith<double>(op);
    default: return nullptr;
    }
}

} /* namespace */

extern "C" int mpiacc_cuda_red_elem_size(int kind)
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

extern "C" int mpiacc_cuda_launch_reduce(const mpiacc_cuda_red_t *r, int nsm, cudaStream_t st)
{
    red_args a;
    kfn_t fn = pick(r->kind, r->op);
    const long long es = mpiacc_cuda_red_elem_size(r->kind);
    long long W, blocks, need, nsc;
    uintptr_t m, all = 0;
    int same = 1;
    void *args[1] = {&a};
    if (!fn || es == 0 || r->n < 1 || r->n > MPIACC_CUDA_RED_MAXSRC || r->count < 0) return (int)cudaErrorInvalidValue;
    if (r->count == 0) return (int)cudaSuccess;
    memset(&a, 0, sizeof a);
    W = 16 / es;
    m = (uintptr_t)r->dst % 16;
    all = (uintptr_t)r->dst;
    for (int i = 0; i < r->n; i++) {
        a.src[i] = (const char *)r->src[i];
        all |= (uintptr_t)r->src[i];
        same &= (uintptr_t)r->src[i] % 16 == m;
    }
    a.dst = (char *)r->dst;
    a.count = r->count;
    a.n = r->n;
    a.elem_aligned = all % (uintptr_t)es == 0;
    if (same && a.elem_aligned) { /* words from the first 16-byte boundary on */
        a.head = (long long)((16 - m) % 16) / es;
        if (a.head > r->count) a.head = r->count;
        a.nvec = (r->count - a.head) / W;
    } else {
        a.head = r->count;
        a.nvec = 0;
    }
    nsc = r->count - a.nvec * W;
    need = (a.nvec > nsc ? a.nvec : nsc);
    blocks = (need + NT - 1) / NT;
    if (nsm < 1) nsm = 1;
    if (blocks > (long long)nsm * MAXB_PER_SM) blocks = (long long)nsm * MAXB_PER_SM;
    if (blocks < 1) blocks = 1;
    return (int)cudaLaunchKernel(fn, dim3((unsigned)blocks), dim3(NT), args, 0, st);
}
