/*
 * cuda_kernels.cu: the CUDA backend's pack/unpack kernels.
 *
 *  - k_strided: canonical strided form (TEMPI), one thread per word of ws
 *    bytes (ws = 1, 2, 4, 8 or 16, chosen by the host from the alignment of
 *    blocks, strides, buffers and range).  x covers the words of one "row"
 *    (the innermost dimension of blocks), y covers rows; the block shape is
 *    fitted to the row length so short rows do not idle threads.
 *  - k_generic: point-based (Jenkins): each word finds its input offset on
 *    its own through mpiacc_tv_offset() of src/pack/traverse.h (the one
 *    traversal source, included verbatim).
 * Writes to the packed side are always coalesced (consecutive threads,
 * consecutive packed words), which is what makes "one-shot" writes into
 * mapped host memory efficient.
 */
#include <stdint.h>

#include "cuda_kernels.h"
#include "pack/traverse.h"

#define MPIACC_CU_THREADS 256

/* The work of thread (t.x, t.y) of block (b.x, b.y) in a grid g of blocks
 * of shape bd: shared by the kernel and the host emulation used in tests. */
template <typename W, int DIR>
static __host__ __device__ __forceinline__ void strided_body(char *__restrict__ base, char *__restrict__ packed,
                                                             const mpiacc_cu_strided_t &s, uint3 b, uint3 t,
                                                             dim3 g, dim3 bd)
{
    const long long wend = s.first_w + s.nwords;
    const long long r0 = s.first_w / s.row_words;
    const long long r1 = (wend - 1) / s.row_words + 1;
    const bool narrow = s.row_words <= 0x7fffffffLL;
    for (long long r = r0 + (long long)b.y * bd.y + t.y; r < r1; r += (long long)g.y * bd.y) {
        long long q = r, rowoff = 0;
#pragma unroll
        for (int d = 1; d < MPIACC_CU_MAXDIMS; d++) {
            if (d < s.nd) {
                const long long c = s.counts[d];
                const long long i = q % c;
                q /= c;
                rowoff += i * s.strides[d];
            }
        }
        const long long wrow = r * s.row_words;
        const long long x0 = s.first_w > wrow ? s.first_w - wrow : 0;
        const long long x1 = wend - wrow < s.row_words ? wend - wrow : s.row_words;
        char *const rowbase = base + rowoff;
        W *const pk = (W *)packed + (wrow - s.first_w);
        for (long long x = x0 + (long long)b.x * bd.x + t.x; x < x1; x += (long long)g.x * bd.x) {
            long long i0, wi;
            if (s.nwb == 1) {
                i0 = x;
                wi = 0;
            } else if (narrow) {
                const unsigned xu = (unsigned)x, nu = (unsigned)s.nwb;
                const unsigned iu = xu / nu;
                i0 = iu;
                wi = xu - iu * nu;
            } else {
                i0 = x / s.nwb;
                wi = x - i0 * s.nwb;
            }
            W *in = (W *)(rowbase + i0 * s.strides[0]) + wi;
            if (DIR == MPIACC_CU_DIR_PACK)
                pk[x] = *in;
            else
                *in = pk[x];
        }
    }
}

template <typename W, int DIR>
__global__ void __launch_bounds__(MPIACC_CU_THREADS)
    k_strided(char *__restrict__ base, char *__restrict__ packed, const mpiacc_cu_strided_t s)
{
    strided_body<W, DIR>(base, packed, s, blockIdx, threadIdx, gridDim, blockDim);
}

/* Launch shape: x fitted to the row length (power of two <= 256), y rows. */
static void strided_config(const mpiacc_cu_strided_t *s, dim3 *grid, dim3 *block)
{
    const long long wend = s->first_w + s->nwords;
    const long long rows = (wend - 1) / s->row_words + 1 - s->first_w / s->row_words;
    const long long xr = s->row_words < s->nwords ? s->row_words : s->nwords;
    unsigned bx = 1;
    while (bx < MPIACC_CU_THREADS && (long long)bx < xr) bx <<= 1;
    const unsigned by = MPIACC_CU_THREADS / bx;
    long long gx = (xr + bx - 1) / bx, gy = (rows + by - 1) / by;
    if (gx > 0x7fffffffLL) gx = 0x7fffffffLL;
    if (gy > 65535) gy = 65535;
    *grid = dim3((unsigned)gx, (unsigned)gy, 1);
    *block = dim3(bx, by, 1);
}

template <typename W>
static cudaError_t launch_strided_w(int dir, char *base, char *packed, const mpiacc_cu_strided_t *s,
                                    cudaStream_t st)
{
    dim3 grid, block;
    strided_config(s, &grid, &block);
    void *args[] = {(void *)&base, (void *)&packed, (void *)s};
    const void *fn = dir == MPIACC_CU_DIR_PACK ? (const void *)k_strided<W, MPIACC_CU_DIR_PACK>
                                               : (const void *)k_strided<W, MPIACC_CU_DIR_UNPACK>;
    return cudaLaunchKernel(fn, grid, block, args, 0, st);
}

/* Host emulation: runs every thread of the same grid in turn. */
template <typename W>
static cudaError_t emulate_strided_w(int dir, char *base, char *packed, const mpiacc_cu_strided_t *s)
{
    dim3 g, bd;
    strided_config(s, &g, &bd);
    for (unsigned by = 0; by < g.y; by++)
        for (unsigned bx = 0; bx < g.x; bx++)
            for (unsigned ty = 0; ty < bd.y; ty++)
                for (unsigned tx = 0; tx < bd.x; tx++) {
                    uint3 b = make_uint3(bx, by, 0), t = make_uint3(tx, ty, 0);
                    if (dir == MPIACC_CU_DIR_PACK)
                        strided_body<W, MPIACC_CU_DIR_PACK>(base, packed, *s, b, t, g, bd);
                    else
                        strided_body<W, MPIACC_CU_DIR_UNPACK>(base, packed, *s, b, t, g, bd);
                }
    return cudaSuccess;
}

extern "C" int mpiacc_cu_emulate_strided(int ws, int dir, char *base, char *packed, const mpiacc_cu_strided_t *s)
{
    if (s->nwords <= 0) return (int)cudaSuccess;
    if (s->row_words <= 0 || s->nd < 1 || s->nd > MPIACC_CU_MAXDIMS) return (int)cudaErrorInvalidValue;
    switch (ws) {
    case 1: return (int)emulate_strided_w<unsigned char>(dir, base, packed, s);
    case 2: return (int)emulate_strided_w<unsigned short>(dir, base, packed, s);
    case 4: return (int)emulate_strided_w<unsigned int>(dir, base, packed, s);
    case 8: return (int)emulate_strided_w<unsigned long long>(dir, base, packed, s);
    case 16: return (int)emulate_strided_w<uint4>(dir, base, packed, s);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int mpiacc_cu_launch_strided(int ws, int dir, char *base, char *packed,
                                        const mpiacc_cu_strided_t *s, cudaStream_t st)
{
    if (s->nwords <= 0) return (int)cudaSuccess;
    if (s->row_words <= 0 || s->nd < 1 || s->nd > MPIACC_CU_MAXDIMS) return (int)cudaErrorInvalidValue;
    switch (ws) {
    case 1: return (int)launch_strided_w<unsigned char>(dir, base, packed, s, st);
    case 2: return (int)launch_strided_w<unsigned short>(dir, base, packed, s, st);
    case 4: return (int)launch_strided_w<unsigned int>(dir, base, packed, s, st);
    case 8: return (int)launch_strided_w<unsigned long long>(dir, base, packed, s, st);
    case 16: return (int)launch_strided_w<uint4>(dir, base, packed, s, st);
    default: return (int)cudaErrorInvalidValue;
    }
}

/* ---- generic point-based kernel ------------------------------------- */

#if defined(MPIACC_TV_FN)

template <typename W, int DIR>
static __host__ __device__ __forceinline__ void generic_body(const mpiacc_tv_i64 *__restrict__ blob, char *buf,
                                                             char *__restrict__ packed, long long first,
                                                             long long nwords, long long tid, long long nthreads)
{
    for (long long w = tid; w < nwords; w += nthreads) {
        const mpiacc_tv_i64 off = mpiacc_tv_offset(blob, (mpiacc_tv_i64)(first + w * (long long)sizeof(W)));
        W *io = (W *)(buf + off);
        if (DIR == MPIACC_CU_DIR_PACK)
            ((W *)packed)[w] = *io;
        else
            *io = ((const W *)packed)[w];
    }
}

template <typename W, int DIR>
__global__ void __launch_bounds__(MPIACC_CU_THREADS)
    k_generic(const mpiacc_tv_i64 *__restrict__ blob, char *buf, char *__restrict__ packed, long long first,
              long long nwords)
{
    generic_body<W, DIR>(blob, buf, packed, first, nwords, (long long)blockIdx.x * blockDim.x + threadIdx.x,
                         (long long)gridDim.x * blockDim.x);
}

template <typename W>
static cudaError_t emulate_generic_w(int dir, const void *hblob, char *buf, char *packed, long long first,
                                     long long nwords)
{
    const mpiacc_tv_i64 *blob = (const mpiacc_tv_i64 *)hblob;
    const long long nthreads = 3 * MPIACC_CU_THREADS; /* any grid; a small one */
    for (long long t = 0; t < nthreads; t++) {
        if (dir == MPIACC_CU_DIR_PACK)
            generic_body<W, MPIACC_CU_DIR_PACK>(blob, buf, packed, first, nwords, t, nthreads);
        else
            generic_body<W, MPIACC_CU_DIR_UNPACK>(blob, buf, packed, first, nwords, t, nthreads);
    }
    return cudaSuccess;
}

extern "C" int mpiacc_cu_emulate_generic(int ws, int dir, const void *hblob, char *buf, char *packed,
                                         long long first, long long nwords)
{
    switch (ws) {
    case 1: return (int)emulate_generic_w<unsigned char>(dir, hblob, buf, packed, first, nwords);
    case 2: return (int)emulate_generic_w<unsigned short>(dir, hblob, buf, packed, first, nwords);
    case 4: return (int)emulate_generic_w<unsigned int>(dir, hblob, buf, packed, first, nwords);
    case 8: return (int)emulate_generic_w<unsigned long long>(dir, hblob, buf, packed, first, nwords);
    case 16: return (int)emulate_generic_w<uint4>(dir, hblob, buf, packed, first, nwords);
    default: return (int)cudaErrorInvalidValue;
    }
}

template <typename W>
static cudaError_t launch_generic_w(int dir, const void *dblob, char *buf, char *packed, long long first,
                                    long long nwords, int nsm, cudaStream_t st)
{
    long long blocks = (nwords + MPIACC_CU_THREADS - 1) / MPIACC_CU_THREADS;
    const long long cap = (long long)(nsm > 0 ? nsm : 1) * 32;
    if (blocks > cap) blocks = cap;
    const mpiacc_tv_i64 *blob = (const mpiacc_tv_i64 *)dblob;
    void *args[] = {(void *)&blob, (void *)&buf, (void *)&packed, (void *)&first, (void *)&nwords};
    const void *fn = dir == MPIACC_CU_DIR_PACK ? (const void *)k_generic<W, MPIACC_CU_DIR_PACK>
                                               : (const void *)k_generic<W, MPIACC_CU_DIR_UNPACK>;
    return cudaLaunchKernel(fn, dim3((unsigned)blocks), dim3(MPIACC_CU_THREADS), args, 0, st);
}

extern "C" int mpiacc_cu_launch_generic(int ws, int dir, const void *dblob, char *buf, char *packed,
                                        long long first, long long nwords, int nsm, cudaStream_t st)
{
    if (nwords <= 0) return (int)cudaSuccess;
    switch (ws) {
    case 1: return (int)launch_generic_w<unsigned char>(dir, dblob, buf, packed, first, nwords, nsm, st);
    case 2: return (int)launch_generic_w<unsigned short>(dir, dblob, buf, packed, first, nwords, nsm, st);
    case 4: return (int)launch_generic_w<unsigned int>(dir, dblob, buf, packed, first, nwords, nsm, st);
    case 8: return (int)launch_generic_w<unsigned long long>(dir, dblob, buf, packed, first, nwords, nsm, st);
    case 16: return (int)launch_generic_w<uint4>(dir, dblob, buf, packed, first, nwords, nsm, st);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int mpiacc_cu_generic_available(void) { return 1; }

#else /* traverse.h is still the placeholder: no generic kernel */

extern "C" int mpiacc_cu_launch_generic(int ws, int dir, const void *dblob, char *buf, char *packed,
                                        long long first, long long nwords, int nsm, cudaStream_t st)
{
    (void)ws, (void)dir, (void)dblob, (void)buf, (void)packed, (void)first, (void)nwords, (void)nsm, (void)st;
    return (int)cudaErrorNotSupported;
}

extern "C" int mpiacc_cu_emulate_generic(int ws, int dir, const void *hblob, char *buf, char *packed,
                                         long long first, long long nwords)
{
    (void)ws, (void)dir, (void)hblob, (void)buf, (void)packed, (void)first, (void)nwords;
    return (int)cudaErrorNotSupported;
}

extern "C" int mpiacc_cu_generic_available(void) { return 0; }

#endif
