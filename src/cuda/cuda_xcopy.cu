/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_xcopy.cu: the layout-to-layout copy of the direct protocol (see
 * cuda_xcopy.h).  Thread t moves the V = 16/ws consecutive words
 * [t*V, t*V + V) of the range (16 packed bytes; V = 1 where a side's
 * contiguous chunks are single words): it locates the first word
 * on each side with mpiacc_tv_locate() of src/pack/traverse.h (the one
 * traversal source), which also gives the contiguous run after it, so the
 * following words of the same chunk need no new traversal; it issues all
 * V loads, then all V stores.  A dense side (count elements forming one
 * block) skips the traversal; small blobs are first copied to shared
 * memory by each block.  The grid is bounded by the number of
 * multiprocessors and strides over the range.  The same body runs in the
 * host emulation used by the tests.
 */
#include <stdint.h>
#include <string.h>

#include "cuda_xcopy.h"
#include "pack/traverse.h"

#define HD __host__ __device__ __forceinline__
#define HD_SLOW __host__ __device__ __noinline__

#define XC_THREADS 256
#define XC_BLOCKS_PER_SM 8
#define XC_EMU_THREADS 32
#define XC_EMU_BLOCKS 4
#define XC_ONE_WORD_MAX 65536 /* bytes: see side_one_word */

template <typename W> static HD W xc_ld(const W *p)
{
#if defined(__CUDA_ARCH__)
    return __ldg(p);
#else
    return *p;
#endif
}

/* Kernel parameters: the plan with device blobs. */
struct xk {
    const mpiacc_tv_i64 *sb, *db;
    const char *s;
    char *d;
    long long sstart, dstart;
    int sdense, ddense;
    long long first, nwords;
    int sw, dw; /* words of sb / db staged in shared memory (0: read in place) */
};

static HD_SLOW mpiacc_tv_i64 xc_locate(const mpiacc_tv_i64 *blob, mpiacc_tv_i64 p, mpiacc_tv_i64 *run)
{
    return mpiacc_tv_locate(blob, p, run);
}

/* Offsets of the n (<= V) words from packed byte p0 on. */
template <typename W, int V>
static HD void xc_offsets(const mpiacc_tv_i64 *blob, int dense, long long start, mpiacc_tv_i64 p0, int n,
                          mpiacc_tv_i64 (&off)[V])
{
    const int ws = (int)sizeof(W);
    if (dense) {
#pragma unroll
        for (int m = 0; m < V; m++) off[m] = start + p0 + (mpiacc_tv_i64)m * ws;
        return;
    }
    mpiacc_tv_i64 run, o = mpiacc_tv_locate(blob, p0, &run);
    off[0] = o;
#pragma unroll
    for (int m = 1; m < V; m++) {
        if (m < n) {
            run -= ws;
            if (run > 0) o += ws; /* same contiguous chunk */
            else o = xc_locate(blob, p0 + (mpiacc_tv_i64)m * ws, &run);
        }
        off[m] = o;
    }
}

template <typename W, int V> static HD void xc_thread(const xk &k, long long t)
{
    const int ws = (int)sizeof(W);
    const long long w0 = t * V;
    if (w0 >= k.nwords) return;
    const int n = k.nwords - w0 < V ? (int)(k.nwords - w0) : V;
    const mpiacc_tv_i64 p0 = k.first + w0 * ws;
    mpiacc_tv_i64 so[V], dof[V];
    W v[V];
    xc_offsets<W, V>(k.sb, k.sdense, k.sstart, p0, n, so);
#pragma unroll
    for (int m = 0; m < V; m++)
        if (m < n) v[m] = xc_ld((const W *)(k.s + so[m]));
    xc_offsets<W, V>(k.db, k.ddense, k.dstart, p0, n, dof);
#pragma unroll
    for (int m = 0; m < V; m++)
        if (m < n) *(W *)(k.d + dof[m]) = v[m];
}

template <typename W, int V>
static HD void xc_body(const xk &k, unsigned bid, unsigned tid, unsigned nb, unsigned bd)
{
    const long long nt = (k.nwords + V - 1) / V;
    for (long long t = (long long)bid * bd + tid; t < nt; t += (long long)nb * bd) xc_thread<W, V>(k, t);
}

/* A traversal walks its blob with dependent loads: from shared memory
 * they cost a few cycles each instead of an L2 round trip, which is what
 * bounds small-block copies (a new traversal per block). */
template <typename W, int V> __global__ void __launch_bounds__(XC_THREADS) k_xcopy(const __grid_constant__ xk k)
{
    extern __shared__ mpiacc_tv_i64 xc_sm[];
    if (k.sw + k.dw == 0) {
        xc_body<W, V>(k, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
        return;
    }
    xk ks = k;
    for (int i = threadIdx.x; i < k.sw; i += blockDim.x) xc_sm[i] = k.sb[i];
    for (int i = threadIdx.x; i < k.dw; i += blockDim.x) xc_sm[k.sw + i] = k.db[i];
    __syncthreads();
    if (k.sw) ks.sb = xc_sm;
    if (k.dw) ks.db = xc_sm + k.sw;
    xc_body<W, V>(ks, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
}

static xk make_xk(const mpiacc_cuda_xcopy_t *c)
{
    xk k;
    k.sb = (const mpiacc_tv_i64 *)c->src.blob;
    k.db = (const mpiacc_tv_i64 *)c->dst.blob;
    k.s = c->src.base;
    k.d = c->dst.base;
    k.sstart = c->src.start;
    k.dstart = c->dst.start;
    k.sdense = c->src.dense;
    k.ddense = c->dst.dense;
    k.first = c->first;
    k.nwords = (c->last - c->first) / c->ws;
    k.sw = k.dw = 0;
    if ((c->src.words + c->dst.words) * (long long)sizeof(mpiacc_tv_i64) <= MPIACC_CUDA_XCOPY_SMEM) {
        k.sw = c->src.dense ? 0 : (int)c->src.words;
        k.dw = c->dst.dense ? 0 : (int)c->dst.words;
    }
    return k;
}

template <typename W, int V> static cudaError_t launch_v(const xk &k, int nsm, cudaStream_t st)
{
    const long long nt = (k.nwords + V - 1) / V, cap = (long long)(nsm > 0 ? nsm : 1) * XC_BLOCKS_PER_SM;
    long long g = (nt + XC_THREADS - 1) / XC_THREADS;
    if (g > cap) g = cap;
    if (g < 1) g = 1;
    void *args[] = {(void *)&k};
    return cudaLaunchKernel((const void *)k_xcopy<W, V>, dim3((unsigned)g), dim3(XC_THREADS), args,
                            (size_t)(k.sw + k.dw) * sizeof(mpiacc_tv_i64), st);
}

template <typename W> static cudaError_t launch_w(const xk &k, int one, int nsm, cudaStream_t st)
{
    return one ? launch_v<W, 1>(k, nsm, st) : launch_v<W, 16 / (int)sizeof(W)>(k, nsm, st);
}

template <typename W, int V> static void emulate_v(const xk &k)
{
    for (unsigned b = 0; b < XC_EMU_BLOCKS; b++)
        for (unsigned t = 0; t < XC_EMU_THREADS; t++) xc_body<W, V>(k, b, t, XC_EMU_BLOCKS, XC_EMU_THREADS);
}

template <typename W> static void emulate_w(const xk &k, int one)
{
    if (one) emulate_v<W, 1>(k);
    else emulate_v<W, 16 / (int)sizeof(W)>(k);
}

/* Largest power of two <= 16 dividing v (16 for 0). */
static int p2div(unsigned long long v)
{
    int w = 16;
    while (w > 1 && v % (unsigned)w) w >>= 1;
    return w;
}

static int blob_ok(const void *blob)
{
    return blob && ((const mpiacc_tv_i64 *)blob)[MPIACC_TV_H_MAGIC] == MPIACC_TV_MAGIC_VALUE;
}

/* Whether `count` elements of the layout in blob (host) are one dense
 * block; *start receives its offset from the buffer.  Reads the canonical
 * strided header of traverse.h. */
static int xcopy_dense(const void *blob, long long count, long long *start)
{
    return mpiacc_tv_dense((const mpiacc_tv_i64 *)blob, count, start);
}

/* Word-size bound of one side. */
static int side_ws(const mpiacc_cuda_xside_t *s)
{
    const mpiacc_tv_i64 *b = (const mpiacc_tv_i64 *)s->blob;
    int ws;
    if (s->dense) return p2div((unsigned long long)(uintptr_t)(s->base + s->start));
    ws = p2div((unsigned long long)b[MPIACC_TV_H_CHUNK]);
    if (ws > (int)b[MPIACC_TV_H_ALIGN]) ws = (int)b[MPIACC_TV_H_ALIGN];
    if (ws > p2div((unsigned long long)(uintptr_t)s->base)) ws = p2div((unsigned long long)(uintptr_t)s->base);
    return ws < 1 ? 1 : ws;
}

/* Whether one word per thread suits a side: a strided layout whose blocks
 * are single words (16 bytes per thread would mean one traversal per word,
 * serially), or, for a short copy, any layout with single-word chunks
 * (latency over throughput: its longer chunks would be traversed again for
 * each word). */
static int side_one_word(const mpiacc_cuda_xside_t *s, int ws, long long bytes)
{
    const mpiacc_tv_i64 *b = (const mpiacc_tv_i64 *)s->blob;
    if (s->dense || b[MPIACC_TV_H_CHUNK] > ws) return 0;
    if (b[MPIACC_TV_H_STRIDED]) return b[MPIACC_TV_H_BLK] <= ws;
    return bytes <= XC_ONE_WORD_MAX;
}

extern "C" int mpiacc_cuda_xcopy_plan(mpiacc_cuda_xcopy_t *k, long long src_count, long long dst_count)
{
    int ws;
    if (!blob_ok(k->src.blob) || !blob_ok(k->dst.blob)) return -1;
    const long long ab = ((const mpiacc_tv_i64 *)k->src.blob)[MPIACC_TV_H_ALIGN];
    const long long ad = ((const mpiacc_tv_i64 *)k->dst.blob)[MPIACC_TV_H_ALIGN];
    if (ab < 1 || ab > 16 || (ab & (ab - 1)) || ad < 1 || ad > 16 || (ad & (ad - 1))) return -1;
    k->src.dense = xcopy_dense(k->src.blob, src_count, &k->src.start);
    k->dst.dense = xcopy_dense(k->dst.blob, dst_count, &k->dst.start);
    k->src.words = k->src.dense ? 0 : ((const mpiacc_tv_i64 *)k->src.blob)[MPIACC_TV_H_WORDS];
    k->dst.words = k->dst.dense ? 0 : ((const mpiacc_tv_i64 *)k->dst.blob)[MPIACC_TV_H_WORDS];
    ws = side_ws(&k->src);
    if (side_ws(&k->dst) < ws) ws = side_ws(&k->dst);
    if (p2div((unsigned long long)k->first) < ws) ws = p2div((unsigned long long)k->first);
    if (p2div((unsigned long long)k->last) < ws) ws = p2div((unsigned long long)k->last);
    k->ws = ws;
    k->one_word = side_one_word(&k->src, ws, k->last - k->first) || side_one_word(&k->dst, ws, k->last - k->first);
    return 0;
}

extern "C" int mpiacc_cuda_launch_xcopy(const mpiacc_cuda_xcopy_t *c, int nsm, cudaStream_t st)
{
    if (c->last <= c->first) return (int)cudaSuccess;
    if (c->src.dense && c->dst.dense && c->how != MPIACC_CUDA_XCOPY_KERNEL)
        return (int)cudaMemcpyAsync(c->dst.base + c->dst.start + c->first, c->src.base + c->src.start + c->first,
                                    (size_t)(c->last - c->first), cudaMemcpyDefault, st);
    const xk k = make_xk(c);
    switch (c->ws) {
    case 1: return (int)launch_w<unsigned char>(k, c->one_word, nsm, st);
    case 2: return (int)launch_w<unsigned short>(k, c->one_word, nsm, st);
    case 4: return (int)launch_w<unsigned int>(k, c->one_word, nsm, st);
    case 8: return (int)launch_w<unsigned long long>(k, c->one_word, nsm, st);
    case 16: return (int)launch_w<uint4>(k, c->one_word, nsm, st);
    default: return (int)cudaErrorInvalidValue;
    }
}

/* One side as rows of width w from packed byte `first` on (see
 * mpiacc_cuda_xcopy_rows); *addr: the row holding `first`. */
static int side_rows(const mpiacc_cuda_xside_t *s, long long count, long long w, long long first, char **addr,
                     long long *pitch)
{
    const mpiacc_tv_i64 *b = (const mpiacc_tv_i64 *)s->blob;
    long long stride = w;
    int big = 0;
    if (s->dense) {
        *addr = s->base + s->start + first;
        *pitch = w;
        return 1;
    }
    if (count != 1 || !b[MPIACC_TV_H_STRIDED] || b[MPIACC_TV_H_BLK] != w) return 0;
    if (b[MPIACC_TV_H_NDIMS] < 0 || b[MPIACC_TV_H_NDIMS] > MPIACC_TV_MAX_DIMS) return 0;
    for (long long d = 0; d < b[MPIACC_TV_H_NDIMS]; d++)
        if (b[MPIACC_TV_H_COUNTS + d] != 1) big++, stride = b[MPIACC_TV_H_STRIDES + d];
    if (big > 1 || stride < w) return 0;
    *addr = s->base + b[MPIACC_TV_H_START] + first / w * stride;
    *pitch = stride;
    return 1;
}

extern "C" int mpiacc_cuda_xcopy_rows(const mpiacc_cuda_xcopy_t *k, long long src_count, long long dst_count,
                                      mpiacc_cuda_xrows_t *g)
{
    long long w;
    if (k->last <= k->first || (k->src.dense && k->dst.dense)) return 0;
    if (!blob_ok(k->src.blob) || !blob_ok(k->dst.blob)) return 0;
    w = !k->src.dense ? ((const mpiacc_tv_i64 *)k->src.blob)[MPIACC_TV_H_BLK]
                      : ((const mpiacc_tv_i64 *)k->dst.blob)[MPIACC_TV_H_BLK];
    if (w <= 0 || k->first % w || k->last % w || (k->last - k->first) / w > MPIACC_CUDA_XCOPY_ROWS_MAX) return 0;
    if (!side_rows(&k->src, src_count, w, k->first, &g->src, &g->spitch)) return 0;
    if (!side_rows(&k->dst, dst_count, w, k->first, &g->dst, &g->dpitch)) return 0;
    g->width = w;
    g->rows = (k->last - k->first) / w;
    return 1;
}

extern "C" int mpiacc_cuda_launch_xrows(const mpiacc_cuda_xrows_t *g, cudaStream_t st)
{
    return (int)cudaMemcpy2DAsync(g->dst, (size_t)g->dpitch, g->src, (size_t)g->spitch, (size_t)g->width,
                                  (size_t)g->rows, cudaMemcpyDefault, st);
}

extern "C" void mpiacc_cuda_emulate_xrows(const mpiacc_cuda_xrows_t *g)
{
    for (long long r = 0; r < g->rows; r++)
        memcpy(g->dst + r * g->dpitch, g->src + r * g->spitch, (size_t)g->width);
}

extern "C" int mpiacc_cuda_emulate_xcopy(const mpiacc_cuda_xcopy_t *c, int variant)
{
    if (c->last <= c->first) return (int)cudaSuccess;
    xk k = make_xk(c);
    k.sw = k.dw = 0; /* the host reads its blobs in place */
    if (variant & 1) k.sdense = k.ddense = 0;
    switch (c->ws) {
    case 1: emulate_w<unsigned char>(k, c->one_word); break;
    case 2: emulate_w<unsigned short>(k, c->one_word); break;
    case 4: emulate_w<unsigned int>(k, c->one_word); break;
    case 8: emulate_w<unsigned long long>(k, c->one_word); break;
    case 16: emulate_w<uint4>(k, c->one_word); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaSuccess;
}
