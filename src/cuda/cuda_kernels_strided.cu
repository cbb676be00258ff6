/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_kernels_strided.cu: the strided pack/unpack kernels of the CUDA
 * backend (canonical strided form, after TEMPI), words of ws bytes (1, 2,
 * 4, 8 or 16, chosen by the host from the alignment of blocks, strides,
 * buffers and range), in the vector scheme of cuda_kernels_common.cuh.
 *
 *  - k_strided: a vector's V input addresses come from one full index
 *    decomposition, then strength-reduced steps: +ws within a block, +jump
 *    to the next block, a new decomposition only where a row ends.
 *  - k_const: nd == 1 with blocks of one word (constant stride), no
 *    decomposition at all.
 *
 * Index math is 32-bit when the range allows it (s.narrow), 64-bit
 * otherwise.
 */
#include "cuda_kernels_common.cuh"

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
#pragma unroll
        for (int u = 0; u < U; u++)
            s_addrs<W>(k.base, k.s, k.s.first_w + (t0 + (long long)u * bd + tid) * V - k.g.leadw, ad[u]);
        move_tile<W, U, V, DIR>(k.g.vb, t0 + tid, bd, ad);
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
