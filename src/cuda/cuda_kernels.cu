/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_kernels.cu: the generic point-based pack/unpack kernel of the CUDA
 * backend (after Jenkins), in the vector scheme of cuda_kernels_common.cuh
 * (the strided kernels are in cuda_kernels_strided.cu).
 *
 * k_generic: word offsets come from mpiacc_tv_locate() of
 * src/pack/traverse.h (the one traversal source, included verbatim); a
 * located word also gives the contiguous run after it, so the next words
 * of the same leaf chunk need no new traversal.  Large transfers of 4-, 8-
 * and 16-byte words take unrolled tiles as the strided kernel does: U
 * vectors per thread, every traversal first, then all U*V loads in flight,
 * then the U stores.
 *
 * mpiacc_cuda_unroll = 0 (a test/benchmark knob, cuda_testhooks.h) makes
 * every launch of both files take the one-vector-per-thread forms, for A/B
 * timings.
 */
#include "cuda_kernels_common.cuh"
#include "pack/traverse.h"

extern "C" {
int mpiacc_cuda_unroll = 1;
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
        move_tile<W, U, V, DIR>(k.g.vb, t0 + tid, bd, ad);
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

/* ---- several transfers in one launch ----------------------------------- */

/* The launch's parameters: the items and where each one's blocks start in
 * the one-dimensional grid (start[n] = the grid). */
struct mparams {
    int n;
    unsigned start[MPIACC_CUDA_MULTI_MAX + 1];
    struct {
        gkp k;
        int ws, dir;
    } it[MPIACC_CUDA_MULTI_MAX];
};

template <int DIR> static HD void multi_body_dir(const gkp &k, int ws, unsigned bid, unsigned tid, unsigned nb, unsigned bd)
{
    switch (ws) {
    case 1: generic_body<unsigned char, 1, DIR>(k, bid, tid, nb, bd); break;
    case 2: generic_body<unsigned short, 1, DIR>(k, bid, tid, nb, bd); break;
    case 4: generic_body<unsigned int, 1, DIR>(k, bid, tid, nb, bd); break;
    case 8: generic_body<unsigned long long, 1, DIR>(k, bid, tid, nb, bd); break;
    default: generic_body<uint4, 1, DIR>(k, bid, tid, nb, bd); break;
    }
}

/* Block `b` of the grid: its item's body, the item's own block numbering. */
static HD void multi_block(const mparams &P, unsigned b, unsigned tid, unsigned bd)
{
    int i = 0;
    while (i + 1 < P.n && b >= P.start[i + 1]) i++;
    const unsigned nb = P.start[i + 1] - P.start[i], bid = b - P.start[i];
    if (P.it[i].dir == MPIACC_CUDA_DIR_PACK) multi_body_dir<MPIACC_CUDA_DIR_PACK>(P.it[i].k, P.it[i].ws, bid, tid, nb, bd);
    else multi_body_dir<MPIACC_CUDA_DIR_UNPACK>(P.it[i].k, P.it[i].ws, bid, tid, nb, bd);
}

__global__ void __launch_bounds__(THREADS) k_multi(const __grid_constant__ mparams P, const mpiacc_cuda_signal_t sig)
{
    multi_block(P, blockIdx.x, threadIdx.x, blockDim.x);
    signal_done(sig);
}

/* The parameters of n items; blocks per item as the single launch would
 * size them (bd threads, nsm multiprocessors).  0 when an item is unusable. */
static int multi_params(const mpiacc_cuda_multi_item_t *items, int n, int bd, int nsm, mparams *P)
{
    unsigned at = 0;
    if (n <= 0 || n > MPIACC_CUDA_MULTI_MAX) return 0;
    P->n = n;
    for (int i = 0; i < n; i++) {
        const int ws = items[i].ws;
        if (!(ws == 1 || ws == 2 || ws == 4 || ws == 8 || ws == 16)) return 0;
        P->it[i].k = make_gkp(items[i].dblob, items[i].buf, items[i].packed, items[i].first, items[i].nwords, ws);
        P->it[i].ws = ws;
        P->it[i].dir = items[i].dir;
        P->start[i] = at;
        at += items[i].nwords > 0 ? grid_for(P->it[i].k.g.nv, 1, bd, nsm) : 0;
    }
    P->start[n] = at;
    return 1;
}

extern "C" int mpiacc_cuda_launch_multi(const mpiacc_cuda_multi_item_t *items, int n, int nsm,
                                        const mpiacc_cuda_signal_t *sig, cudaStream_t st)
{
    mparams P;
    mpiacc_cuda_signal_t sg = {NULL, NULL, 0};
    if (!multi_params(items, n, THREADS, nsm, &P)) return (int)cudaErrorInvalidValue;
    if (P.start[n] == 0) return (int)cudaSuccess; /* nothing to move (no signal wanted then) */
    if (sig) sg = *sig;
    void *args[] = {(void *)&P, (void *)&sg};
    return cudaLaunchKernel((const void *)k_multi, dim3(P.start[n]), dim3(THREADS), args, 0, st);
}

extern "C" int mpiacc_cuda_emulate_multi(const mpiacc_cuda_multi_item_t *items, int n)
{
    mparams P;
    if (!multi_params(items, n, EMU_THREADS, EMU_NSM, &P)) return (int)cudaErrorInvalidValue;
    for (unsigned b = 0; b < P.start[n]; b++)
        for (unsigned t = 0; t < EMU_THREADS; t++) multi_block(P, b, t, EMU_THREADS);
    return (int)cudaSuccess;
}
