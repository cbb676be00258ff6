/*
 * cuda_kernels.cu: the CUDA backend's pack/unpack kernels.
 *
 *  - k_strided: canonical strided form (TEMPI), words of ws bytes (1, 2, 4,
 *    8 or 16, chosen by the host from the alignment of blocks, strides,
 *    buffers and range).
 *  - k_generic: point-based (Jenkins): word offsets come from
 *    mpiacc_tv_locate() of src/pack/traverse.h (the one traversal source,
 *    included verbatim); a located word also gives the contiguous run after
 *    it, so the next words of the same leaf chunk need no new traversal.
 *    Large transfers of 4-, 8- and 16-byte words take the same unrolled
 *    tiles as the strided kernel: U vectors per thread, every traversal
 *    first, then all U*V loads in flight, then the U stores.
 *
 * Both work in aligned 16-byte vectors of the packed side.  The thread of
 * vector j handles words kk = j*V - leadw + m (m < V = 16/ws) of the range:
 * it computes their V input addresses (one full index decomposition, then
 * strength-reduced steps: +ws within a block, +jump to the next block, a
 * new decomposition only where a row ends), issues its V loads together and
 * moves the vector with one 16-byte store (pack) or load (unpack).  Warps
 * cover 512 contiguous packed bytes per access, so one-shot transfers write
 * (or read) full lines of mapped host memory.  Tiles of U*blockDim vectors
 * whose vectors are all complete take the unrolled path with U vectors per
 * thread in flight (U > 1 only for large transfers, where the grid is bound
 * by the number of multiprocessors); the first and last tiles check each
 * vector and move cut vectors word by word.
 *
 * Index math is 32-bit when the range allows it (s.narrow), 64-bit
 * otherwise.  The same bodies run in the host emulation used by tests.
 * mpiacc_cuda_unroll = 0 (a test/benchmark knob, cuda_testhooks.h) makes
 * every launch take the one-vector-per-thread forms, for A/B timings.
 */
#include <stdint.h>

#include "cuda_kernels.h"
#include "pack/traverse.h"

#define HD __host__ __device__ __forceinline__
#define HD_SLOW __host__ __device__ __noinline__

#define THREADS 256     /* threads per block on the device          */
#define BLOCKS_PER_SM 8 /* grid bound: one full wave (2048 threads) */
#define EMU_THREADS 32  /* emulation: small blocks, more tiles      */
#define EMU_NSM 1

extern "C" {
int mpiacc_cuda_unroll = 1;
}

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
static vgeom make_vgeom(char *packed, long long nwords, int ws)
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

/* Grid: tiles of u*bd vectors, at most nsm*BLOCKS_PER_SM blocks (the
 * kernels stride over the rest). */
static unsigned grid_for(long long nv, int u, int bd, int nsm)
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

/* ---- strided kernel ------------------------------------------------- */

struct skp {
    char *base;
    vgeom g;
    mpiacc_cuda_strided_t s;
};

/* Where word w of the strided range is: address, position x in its row,
 * word index wi within its block. */
struct sloc {
    char *p;
    long long x, wi;
};

static HD sloc s_locate(char *base, const mpiacc_cuda_strided_t &s, long long w, int ws)
{
    long long r, x, off = 0, i0, wi;
    if (w < s.row_words) { /* first row (every word of a one-row range) */
        r = 0, x = w;
    } else if (s.narrow) {
        const unsigned wu = (unsigned)w, rw = (unsigned)s.row_words, ru = wu / rw;
        r = ru, x = wu - ru * rw;
    } else {
        r = w / s.row_words, x = w - r * s.row_words;
    }
#pragma unroll
    for (int d = 1; d < MPIACC_CUDA_MAXDIMS; d++) {
        if (d < s.nd) {
            long long i;
            if (s.narrow) {
                const unsigned qu = (unsigned)r, cu = (unsigned)s.counts[d], qd = qu / cu;
                i = qu - qd * cu, r = qd;
            } else {
                const long long qd = r / s.counts[d];
                i = r - qd * s.counts[d], r = qd;
            }
            off += i * s.strides[d];
        }
    }
    if (s.nwb == 1) {
        i0 = x, wi = 0;
    } else if (s.narrow) {
        const unsigned xu = (unsigned)x, nu = (unsigned)s.nwb, iu = xu / nu;
        i0 = iu, wi = xu - iu * nu;
    } else {
        i0 = x / s.nwb, wi = x - i0 * s.nwb;
    }
    sloc L;
    L.p = base + off + i0 * s.strides[0] + wi * ws;
    L.x = x, L.wi = wi;
    return L;
}

static HD_SLOW sloc s_locate_slow(char *base, const mpiacc_cuda_strided_t &s, long long w, int ws)
{
    return s_locate(base, s, w, ws);
}

/* Input addresses of the V words from global word w0 on. */
template <typename W>
static HD void s_addrs(char *base, const mpiacc_cuda_strided_t &s, long long w0, char *(&ad)[shape<W>::V])
{
    const int ws = (int)sizeof(W), V = shape<W>::V;
    sloc L = s_locate(base, s, w0, ws);
    const long long jump = s.strides[0] - (s.nwb - 1) * ws;
    char *p = L.p;
    long long x = L.x, wi = L.wi;
    ad[0] = p;
#pragma unroll
    for (int m = 1; m < V; m++) {
        if (++x == s.row_words) { /* next row: decompose again (rare for long rows) */
            L = s_locate_slow(base, s, w0 + m, ws);
            p = L.p, x = L.x, wi = L.wi;
        } else {
            const bool nb = ++wi == s.nwb;
            wi = nb ? 0 : wi;
            p += nb ? jump : ws;
        }
        ad[m] = p;
    }
}

/* Vector j, checked: complete vectors in one access, cut ones by words. */
template <typename W, int DIR> static HD void s_vec_one(const skp &k, long long j)
{
    const int V = shape<W>::V;
    const long long k0 = j * V - k.g.leadw;
    char *pv = k.g.vb + 16 * j;
    if (k0 >= 0 && k0 + V <= k.g.nwords) {
        char *ad[V];
        s_addrs<W>(k.base, k.s, k.s.first_w + k0, ad);
        move_piece<W, V, DIR>(pv, ad);
        return;
    }
    for (int m = 0; m < V; m++) {
        const long long kk = k0 + m;
        if (kk < 0 || kk >= k.g.nwords) continue;
        W *io = (W *)s_locate_slow(k.base, k.s, k.s.first_w + kk, (int)sizeof(W)).p;
        W *pk = (W *)(pv + m * (int)sizeof(W));
        if (DIR == MPIACC_CUDA_DIR_PACK) *pk = ld_ro(io);
        else *io = *pk;
    }
}

/* The work of thread tid of block bid (nb blocks of bd threads). */
template <typename W, int U, int DIR>
static HD void strided_body(const skp &k, unsigned bid, unsigned tid, unsigned nb, unsigned bd)
{
    const int V = shape<W>::V;
    const long long tile = (long long)U * bd;
    for (long long t0 = (long long)bid * tile; t0 < k.g.nv; t0 += (long long)nb * tile) {
        if (t0 * V - k.g.leadw < 0 || (t0 + tile) * V - k.g.leadw > k.g.nwords) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long long j = t0 + (long long)u * bd + tid;
                if (j < k.g.nv) s_vec_one<W, DIR>(k, j);
            }
            continue;
        }
        /* interior tile: every vector complete; U vectors per thread */
        char *ad[U][V];
        if (DIR == MPIACC_CUDA_DIR_PACK) {
            W val[U][V];
#pragma unroll
            for (int u = 0; u < U; u++)
                s_addrs<W>(k.base, k.s, k.s.first_w + (t0 + (long long)u * bd + tid) * V - k.g.leadw, ad[u]);
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int m = 0; m < V; m++) val[u][m] = ld_ro((const W *)ad[u][m]);
#pragma unroll
            for (int u = 0; u < U; u++) {
                vec16 v = {{0, 0, 0, 0}};
#pragma unroll
                for (int m = 0; m < V; m++) vput(v, m, val[u][m]);
                st16(k.g.vb + 16 * (t0 + (long long)u * bd + tid), v);
            }
        } else {
            vec16 in[U];
#pragma unroll
            for (int u = 0; u < U; u++) in[u] = ld16(k.g.vb + 16 * (t0 + (long long)u * bd + tid));
#pragma unroll
            for (int u = 0; u < U; u++) {
                s_addrs<W>(k.base, k.s, k.s.first_w + (t0 + (long long)u * bd + tid) * V - k.g.leadw, ad[u]);
#pragma unroll
                for (int m = 0; m < V; m++) vget(in[u], m, *(W *)ad[u][m]);
            }
        }
    }
}

template <typename W, int U, int DIR>
__global__ void __launch_bounds__(THREADS) k_strided(const __grid_constant__ skp k, const mpiacc_cuda_signal_t sig)
{
    strided_body<W, U, DIR>(k, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
    signal_done(sig);
}

/* ---- constant-stride form: nd == 1, nwb == 1 ------------------------ */
/* Word w of the range is at base + w*strides[0] (blocks of one word: the
 * small-block vectors).  No decomposition, no per-word branches: a vector's
 * V addresses are p + m*stride, so a thread holds one pointer and its
 * loaded words, and the kernel fits in 32 registers (launch bound: a full
 * 2048 threads per multiprocessor, every load of a grid-sized range in
 * flight at once).  U vectors per thread, all loads before any store. */
template <typename W, int U, int DIR>
static HD void const_body(const skp &k, unsigned bid, unsigned tid, unsigned nb, unsigned bd)
{
    const int V = shape<W>::V;
    const long long st = k.s.strides[0], tile = (long long)U * bd;
    for (long long t0 = (long long)bid * tile; t0 < k.g.nv; t0 += (long long)nb * tile) {
        if (t0 * V - k.g.leadw < 0 || (t0 + tile) * V - k.g.leadw > k.g.nwords) {
            for (int u = 0; u < U; u++) { /* edge tile: vector by vector, cut ones by words */
                const long long j = t0 + (long long)u * bd + tid, k0 = j * V - k.g.leadw;
                if (j >= k.g.nv) continue;
                char *pv = k.g.vb + 16 * j;
                for (int m = 0; m < V; m++) {
                    const long long kk = k0 + m;
                    if (kk < 0 || kk >= k.g.nwords) continue;
                    W *io = (W *)(k.base + (k.s.first_w + kk) * st), *pk = (W *)(pv + m * (int)sizeof(W));
                    if (DIR == MPIACC_CUDA_DIR_PACK) *pk = ld_ro(io);
                    else *io = *pk;
                }
            }
            continue;
        }
        if (DIR == MPIACC_CUDA_DIR_PACK) {
            W val[U][V];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const char *p = k.base + (k.s.first_w + (t0 + (long long)u * bd + tid) * V - k.g.leadw) * st;
#pragma unroll
                for (int m = 0; m < V; m++) val[u][m] = ld_ro((const W *)(p + m * st));
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                vec16 v = {{0, 0, 0, 0}};
#pragma unroll
                for (int m = 0; m < V; m++) vput(v, m, val[u][m]);
                st16(k.g.vb + 16 * (t0 + (long long)u * bd + tid), v);
            }
        } else {
            vec16 in[U];
#pragma unroll
            for (int u = 0; u < U; u++) in[u] = ld16(k.g.vb + 16 * (t0 + (long long)u * bd + tid));
#pragma unroll
            for (int u = 0; u < U; u++) {
                char *p = k.base + (k.s.first_w + (t0 + (long long)u * bd + tid) * V - k.g.leadw) * st;
#pragma unroll
                for (int m = 0; m < V; m++) vget(in[u], m, *(W *)(p + m * st));
            }
        }
    }
}

template <typename W, int U, int DIR>
__global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM) k_const(const __grid_constant__ skp k,
                                                                  const mpiacc_cuda_signal_t sig)
{
    const_body<W, U, DIR>(k, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
    signal_done(sig);
}

/* Vectors per thread of the constant-stride kernel for ranges beyond one
 * full wave: two for 8- and 16-byte words (more spills at 32 registers). */
template <typename W> struct cshape {
    static const int U = shape<W>::V >= 4 ? 1 : 2;
};

static bool const_form(const mpiacc_cuda_strided_t *s) { return s->nd == 1 && s->nwb == 1; }

static skp make_skp(char *base, char *packed, const mpiacc_cuda_strided_t *s, int ws)
{
    skp k;
    const long long lim = 0x7fffffffLL;
    k.base = base;
    k.g = make_vgeom(packed, s->nwords, ws);
    k.s = *s;
    k.s.narrow = s->first_w + s->nwords <= lim && s->row_words <= lim && s->nwb <= lim;
    for (int d = 1; d < s->nd; d++) k.s.narrow = k.s.narrow && s->counts[d] <= lim;
    return k;
}

template <typename W, int U> static const void *strided_fn(int dir)
{
    return dir == MPIACC_CUDA_DIR_PACK ? (const void *)k_strided<W, U, MPIACC_CUDA_DIR_PACK>
                                     : (const void *)k_strided<W, U, MPIACC_CUDA_DIR_UNPACK>;
}

template <typename W, int U> static const void *const_fn(int dir)
{
    return dir == MPIACC_CUDA_DIR_PACK ? (const void *)k_const<W, U, MPIACC_CUDA_DIR_PACK>
                                     : (const void *)k_const<W, U, MPIACC_CUDA_DIR_UNPACK>;
}

template <typename W>
static cudaError_t launch_strided_w(int dir, char *base, char *packed, const mpiacc_cuda_strided_t *s, int nsm,
                                    const mpiacc_cuda_signal_t *sig, cudaStream_t st)
{
    const int UM = shape<W>::UMAX;
    skp k = make_skp(base, packed, s, (int)sizeof(W));
    mpiacc_cuda_signal_t sg = {NULL, NULL, 0};
    if (sig) sg = *sig;
    /* unrolled form only when the grid bound leaves work for it */
    const long long wave = (long long)(nsm > 0 ? nsm : 1) * BLOCKS_PER_SM * THREADS;
    void *args[] = {(void *)&k, (void *)&sg};
    if (const_form(s)) {
        const int UC = cshape<W>::U;
        const bool cbig = UC > 1 && mpiacc_cuda_unroll && k.g.nv >= wave * UC;
        const void *fn = cbig ? const_fn<W, cshape<W>::U>(dir) : const_fn<W, 1>(dir);
        return cudaLaunchKernel(fn, dim3(grid_for(k.g.nv, cbig ? UC : 1, THREADS, nsm)), dim3(THREADS), args, 0, st);
    }
    const bool big = UM > 1 && mpiacc_cuda_unroll && k.g.nv >= wave * UM;
    const unsigned grid = grid_for(k.g.nv, big ? UM : 1, THREADS, nsm);
    const void *fn = big ? strided_fn<W, shape<W>::UMAX>(dir) : strided_fn<W, 1>(dir);
    return cudaLaunchKernel(fn, dim3(grid), dim3(THREADS), args, 0, st);
}

/* Host emulation: every thread of the (small) grid in turn. */
template <typename W, int U> static void emulate_strided_wu(int dir, const skp &k)
{
    const unsigned grid = grid_for(k.g.nv, U, EMU_THREADS, EMU_NSM);
    for (unsigned b = 0; b < grid; b++)
        for (unsigned t = 0; t < EMU_THREADS; t++) {
            if (dir == MPIACC_CUDA_DIR_PACK) strided_body<W, U, MPIACC_CUDA_DIR_PACK>(k, b, t, grid, EMU_THREADS);
            else strided_body<W, U, MPIACC_CUDA_DIR_UNPACK>(k, b, t, grid, EMU_THREADS);
        }
}

template <typename W, int U> static void emulate_const_wu(int dir, const skp &k)
{
    const unsigned grid = grid_for(k.g.nv, U, EMU_THREADS, EMU_NSM);
    for (unsigned b = 0; b < grid; b++)
        for (unsigned t = 0; t < EMU_THREADS; t++) {
            if (dir == MPIACC_CUDA_DIR_PACK) const_body<W, U, MPIACC_CUDA_DIR_PACK>(k, b, t, grid, EMU_THREADS);
            else const_body<W, U, MPIACC_CUDA_DIR_UNPACK>(k, b, t, grid, EMU_THREADS);
        }
}

template <typename W>
static cudaError_t emulate_strided_w(int dir, char *base, char *packed, const mpiacc_cuda_strided_t *s, int variant)
{
    const skp k = make_skp(base, packed, s, (int)sizeof(W));
    if (const_form(s) && !(variant & 2)) { /* the kernel the launcher picks */
        if (variant & 1) emulate_const_wu<W, cshape<W>::U>(dir, k);
        else emulate_const_wu<W, 1>(dir, k);
    } else if (variant & 1) {
        emulate_strided_wu<W, shape<W>::UMAX>(dir, k);
    } else {
        emulate_strided_wu<W, 1>(dir, k);
    }
    return cudaSuccess;
}

static int strided_ok(const mpiacc_cuda_strided_t *s)
{
    return s->row_words > 0 && s->nwb > 0 && s->nd >= 1 && s->nd <= MPIACC_CUDA_MAXDIMS;
}

extern "C" int mpiacc_cuda_emulate_strided(int ws, int dir, char *base, char *packed, const mpiacc_cuda_strided_t *s,
                                           int variant)
{
    if (s->nwords <= 0) return (int)cudaSuccess;
    if (!strided_ok(s)) return (int)cudaErrorInvalidValue;
    switch (ws) {
    case 1: return (int)emulate_strided_w<unsigned char>(dir, base, packed, s, variant);
    case 2: return (int)emulate_strided_w<unsigned short>(dir, base, packed, s, variant);
    case 4: return (int)emulate_strided_w<unsigned int>(dir, base, packed, s, variant);
    case 8: return (int)emulate_strided_w<unsigned long long>(dir, base, packed, s, variant);
    case 16: return (int)emulate_strided_w<uint4>(dir, base, packed, s, variant);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int mpiacc_cuda_launch_strided(int ws, int dir, char *base, char *packed, const mpiacc_cuda_strided_t *s,
                                          int nsm, const mpiacc_cuda_signal_t *sig, cudaStream_t st)
{
    if (s->nwords <= 0) return (int)cudaSuccess;
    if (!strided_ok(s)) return (int)cudaErrorInvalidValue;
    switch (ws) {
    case 1: return (int)launch_strided_w<unsigned char>(dir, base, packed, s, nsm, sig, st);
    case 2: return (int)launch_strided_w<unsigned short>(dir, base, packed, s, nsm, sig, st);
    case 4: return (int)launch_strided_w<unsigned int>(dir, base, packed, s, nsm, sig, st);
    case 8: return (int)launch_strided_w<unsigned long long>(dir, base, packed, s, nsm, sig, st);
    case 16: return (int)launch_strided_w<uint4>(dir, base, packed, s, nsm, sig, st);
    default: return (int)cudaErrorInvalidValue;
    }
}

/* ---- generic point-based kernel ------------------------------------- */

struct gkp {
    const mpiacc_tv_i64 *blob;
    char *buf;
    long long first; /* packed byte of range word 0 */
    vgeom g;
};

struct gloc {
    mpiacc_tv_i64 off, run;
};

static HD_SLOW gloc g_locate_slow(const mpiacc_tv_i64 *blob, mpiacc_tv_i64 p)
{
    gloc L;
    mpiacc_tv_i64 run;
    L.off = mpiacc_tv_locate(blob, p, &run);
    L.run = run;
    return L;
}

/* Input addresses of the V words of a complete vector from range word k0. */
template <typename W> static HD void g_addrs(const gkp &k, long long k0, char *(&ad)[shape<W>::V])
{
    const int V = shape<W>::V, ws = (int)sizeof(W);
    const mpiacc_tv_i64 p = k.first + k0 * ws;
    mpiacc_tv_i64 run, off = mpiacc_tv_locate(k.blob, p, &run);
    ad[0] = k.buf + off;
#pragma unroll
    for (int m = 1; m < V; m++) {
        run -= ws;
        if (run > 0) {
            off += ws; /* same leaf chunk */
        } else {
            const gloc L = g_locate_slow(k.blob, p + (mpiacc_tv_i64)m * ws);
            off = L.off, run = L.run;
        }
        ad[m] = k.buf + off;
    }
}

template <typename W, int DIR> static HD void g_vec_one(const gkp &k, long long j)
{
    const int V = shape<W>::V, ws = (int)sizeof(W);
    const long long k0 = j * V - k.g.leadw;
    char *pv = k.g.vb + 16 * j;
    if (k0 >= 0 && k0 + V <= k.g.nwords) {
        char *ad[V];
        g_addrs<W>(k, k0, ad);
        move_piece<W, V, DIR>(pv, ad);
        return;
    }
    for (int m = 0; m < V; m++) {
        const long long kk = k0 + m;
        if (kk < 0 || kk >= k.g.nwords) continue;
        W *io = (W *)(k.buf + g_locate_slow(k.blob, k.first + kk * ws).off);
        W *pk = (W *)(pv + m * ws);
        if (DIR == MPIACC_CUDA_DIR_PACK) *pk = ld_ro(io);
        else *io = *pk;
    }
}

/* U == 1: one vector per thread and step.  U > 1: tiles of U*bd vectors;
 * interior tiles locate U vectors, then load (pack) or scatter (unpack)
 * them together; the edge tiles go vector by vector. */
template <typename W, int U, int DIR>
static HD void generic_body(const gkp &k, unsigned bid, unsigned tid, unsigned nb, unsigned bd)
{
    const int V = shape<W>::V;
    if (U == 1) {
        for (long long j = (long long)bid * bd + tid; j < k.g.nv; j += (long long)nb * bd) g_vec_one<W, DIR>(k, j);
        return;
    }
    const long long tile = (long long)U * bd;
    for (long long t0 = (long long)bid * tile; t0 < k.g.nv; t0 += (long long)nb * tile) {
        if (t0 * V - k.g.leadw < 0 || (t0 + tile) * V - k.g.leadw > k.g.nwords) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long long j = t0 + (long long)u * bd + tid;
                if (j < k.g.nv) g_vec_one<W, DIR>(k, j);
            }
            continue;
        }
        char *ad[U][V];
#pragma unroll
        for (int u = 0; u < U; u++) g_addrs<W>(k, (t0 + (long long)u * bd + tid) * V - k.g.leadw, ad[u]);
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
                st16(k.g.vb + 16 * (t0 + (long long)u * bd + tid), v);
            }
        } else {
            vec16 in[U];
#pragma unroll
            for (int u = 0; u < U; u++) in[u] = ld16(k.g.vb + 16 * (t0 + (long long)u * bd + tid));
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int m = 0; m < V; m++) vget(in[u], m, *(W *)ad[u][m]);
        }
    }
}

template <typename W, int U, int DIR>
__global__ void __launch_bounds__(THREADS) k_generic(const __grid_constant__ gkp k, const mpiacc_cuda_signal_t sig)
{
    generic_body<W, U, DIR>(k, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
    signal_done(sig);
}

/* Vectors per thread of the generic kernel's unrolled form: at most 4
 * (each vector holds a traversal's state while the loads are in flight). */
template <typename W> struct gshape {
    static const int U = shape<W>::UMAX < 4 ? shape<W>::UMAX : 4;
};

static gkp make_gkp(const void *blob, char *buf, char *packed, long long first, long long nwords, int ws)
{
    gkp k;
    k.blob = (const mpiacc_tv_i64 *)blob;
    k.buf = buf;
    k.first = first;
    k.g = make_vgeom(packed, nwords, ws);
    return k;
}

template <typename W, int U> static void emulate_generic_wu(int dir, const gkp &k)
{
    const unsigned grid = grid_for(k.g.nv, U, EMU_THREADS, EMU_NSM);
    for (unsigned b = 0; b < grid; b++)
        for (unsigned t = 0; t < EMU_THREADS; t++) {
            if (dir == MPIACC_CUDA_DIR_PACK) generic_body<W, U, MPIACC_CUDA_DIR_PACK>(k, b, t, grid, EMU_THREADS);
            else generic_body<W, U, MPIACC_CUDA_DIR_UNPACK>(k, b, t, grid, EMU_THREADS);
        }
}

template <typename W>
static cudaError_t emulate_generic_w(int dir, const void *hblob, char *buf, char *packed, long long first,
                                     long long nwords, int variant)
{
    const gkp k = make_gkp(hblob, buf, packed, first, nwords, (int)sizeof(W));
    if (variant & 1) emulate_generic_wu<W, gshape<W>::U>(dir, k);
    else emulate_generic_wu<W, 1>(dir, k);
    return cudaSuccess;
}

extern "C" int mpiacc_cuda_emulate_generic(int ws, int dir, const void *hblob, char *buf, char *packed,
                                           long long first, long long nwords, int variant)
{
    if (nwords <= 0) return (int)cudaSuccess;
    switch (ws) {
    case 1: return (int)emulate_generic_w<unsigned char>(dir, hblob, buf, packed, first, nwords, variant);
    case 2: return (int)emulate_generic_w<unsigned short>(dir, hblob, buf, packed, first, nwords, variant);
    case 4: return (int)emulate_generic_w<unsigned int>(dir, hblob, buf, packed, first, nwords, variant);
    case 8: return (int)emulate_generic_w<unsigned long long>(dir, hblob, buf, packed, first, nwords, variant);
    case 16: return (int)emulate_generic_w<uint4>(dir, hblob, buf, packed, first, nwords, variant);
    default: return (int)cudaErrorInvalidValue;
    }
}

template <typename W>
static cudaError_t launch_generic_w(int dir, const void *dblob, char *buf, char *packed, long long first,
                                    long long nwords, int nsm, const mpiacc_cuda_signal_t *sig, cudaStream_t st)
{
    gkp k = make_gkp(dblob, buf, packed, first, nwords, (int)sizeof(W));
    mpiacc_cuda_signal_t sg = {NULL, NULL, 0};
    if (sig) sg = *sig;
    void *args[] = {(void *)&k, (void *)&sg};
    const int UG = gshape<W>::U;
    const long long wave = (long long)(nsm > 0 ? nsm : 1) * BLOCKS_PER_SM * THREADS;
    const bool big = UG > 1 && mpiacc_cuda_unroll && k.g.nv >= wave * UG;
    const void *fn;
    if (big)
        fn = dir == MPIACC_CUDA_DIR_PACK ? (const void *)k_generic<W, gshape<W>::U, MPIACC_CUDA_DIR_PACK>
                                         : (const void *)k_generic<W, gshape<W>::U, MPIACC_CUDA_DIR_UNPACK>;
    else
        fn = dir == MPIACC_CUDA_DIR_PACK ? (const void *)k_generic<W, 1, MPIACC_CUDA_DIR_PACK>
                                         : (const void *)k_generic<W, 1, MPIACC_CUDA_DIR_UNPACK>;
    return cudaLaunchKernel(fn, dim3(grid_for(k.g.nv, big ? UG : 1, THREADS, nsm)), dim3(THREADS), args, 0, st);
}

extern "C" int mpiacc_cuda_launch_generic(int ws, int dir, const void *dblob, char *buf, char *packed,
                                          long long first, long long nwords, int nsm, const mpiacc_cuda_signal_t *sig,
                                          cudaStream_t st)
{
    if (nwords <= 0) return (int)cudaSuccess;
    switch (ws) {
    case 1: return (int)launch_generic_w<unsigned char>(dir, dblob, buf, packed, first, nwords, nsm, sig, st);
    case 2: return (int)launch_generic_w<unsigned short>(dir, dblob, buf, packed, first, nwords, nsm, sig, st);
    case 4: return (int)launch_generic_w<unsigned int>(dir, dblob, buf, packed, first, nwords, nsm, sig, st);
    case 8: return (int)launch_generic_w<unsigned long long>(dir, dblob, buf, packed, first, nwords, nsm, sig, st);
    case 16: return (int)launch_generic_w<uint4>(dir, dblob, buf, packed, first, nwords, nsm, sig, st);
    default: return (int)cudaErrorInvalidValue;
    }
}
