/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_kernels.h: the interface between the CUDA backend's host code (C)
 * and its kernels (cuda_kernels.cu: generic, cuda_kernels_strided.cu:
 * strided).  No MPI here: plain C types only.
 */
#ifndef MPIACC_CUDA_KERNELS_H_INCLUDED
#define MPIACC_CUDA_KERNELS_H_INCLUDED

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dimensions of a strided transfer: the canonical form's dims, plus the
 * element dimension (count, extent) when count > 1. */
#define MPIACC_CUDA_MAXDIMS 6

/* A strided transfer, word-based.  Word w (global index, ws bytes) is word
 * (w % nwb) of block b = w / nwb; block b has index tuple (i0..i{nd-1})
 * with i0 fastest, i_d < counts[d], at base + sum_d i_d*strides[d].  The
 * kernel moves words [first_w, first_w + nwords) to / from packed[0..]. */
typedef struct mpiacc_cuda_strided {
    long long first_w, nwords; /* word range                         */
    long long nwb;             /* words per block (blk / ws)         */
    long long row_words;       /* nwb * counts[0]                    */
    int nd;                    /* dims in use, 1..MPIACC_CUDA_MAXDIMS  */
    int narrow;                /* set by the launcher: 32-bit index math suffices */
    long long counts[MPIACC_CUDA_MAXDIMS];
    long long strides[MPIACC_CUDA_MAXDIMS]; /* bytes, may be negative */
} mpiacc_cuda_strided_t;

/* Completion signal of a kernel (optional; count == NULL: none).  Each
 * block, once its stores are done, adds 1 to *count; the last one resets
 * *count to 0 and writes seq to *flag (mapped pinned host memory) after a
 * system-scope fence, so a host polling *flag sees the kernel's results
 * published device-wide without waiting for the stream to retire it.
 * One counter per kernel in flight: the caller owns count until it has
 * seen the flag. */
typedef struct mpiacc_cuda_signal {
    unsigned int *count;
    volatile unsigned int *flag;
    unsigned int seq;
} mpiacc_cuda_signal_t;

enum { MPIACC_CUDA_DIR_PACK = 0, MPIACC_CUDA_DIR_UNPACK = 1 };

/* Both kernels work on the packed side in aligned 16-byte vectors: each
 * thread gathers (pack) or scatters (unpack) the 16/ws words of a vector
 * and moves the vector with one 16-byte access, consecutive threads on
 * consecutive vectors (coalesced: a warp covers 512 contiguous bytes, which
 * is what makes one-shot writes into mapped host memory efficient).  The
 * at most two vectors cut by the range's ends are done word by word.
 * nsm (multiprocessors) bounds the grid, which strides over the range. */

/* Strided kernel, word size ws in {1,2,4,8,16}: pack moves base -> packed,
 * unpack packed -> base.  Every pointer handed in must be ws-aligned.
 * sig may be NULL.  Returns a cudaError_t (as int). */
int mpiacc_cuda_launch_strided(int ws, int dir, char *base, char *packed, const mpiacc_cuda_strided_t *s, int nsm,
                               const mpiacc_cuda_signal_t *sig, cudaStream_t st);

/* Generic point-based kernel over the blob of traverse.h: word w covers
 * packed bytes first + w*ws ... of the type at buf.  nsm sizes the grid. */
int mpiacc_cuda_launch_generic(int ws, int dir, const void *dblob, char *buf, char *packed, long long first,
                               long long nwords, int nsm, const mpiacc_cuda_signal_t *sig, cudaStream_t st);

/* Several transfers in one launch (the fused pack / unpack of a batch of
 * messages, src/reqpool's batches): item i moves nwords words of ws bytes
 * between packed bytes [first, first + nwords*ws) of the type whose device
 * blob is dblob at buf and packed[0..], in direction dir, with the generic
 * kernel's body; each item gets its own blocks of one grid, and sig (may be
 * NULL) is written once every item is done.  At most MPIACC_CUDA_MULTI_MAX
 * items. */
#define MPIACC_CUDA_MULTI_MAX 32
typedef struct mpiacc_cuda_multi_item {
    const void *dblob; /* device copy of the type's blob (host copy in the emulation) */
    char *buf;
    char *packed;
    long long first, nwords;
    int ws, dir;
} mpiacc_cuda_multi_item_t;
int mpiacc_cuda_launch_multi(const mpiacc_cuda_multi_item_t *items, int n, int nsm, const mpiacc_cuda_signal_t *sig,
                             cudaStream_t st);
/* Its host emulation (tests): the same item bodies, block by block. */
int mpiacc_cuda_emulate_multi(const mpiacc_cuda_multi_item_t *items, int n);

/* Host emulations of the two kernels (same code, run thread by thread on
 * the CPU; host pointers, host blob): tests check the index arithmetic
 * against MPI_Pack without a GPU.  The emulated grid is small (blocks of 32
 * threads, a grid bound of 8 blocks) so that the grid-stride loop, edge and
 * interior tiles are all exercised.  Variant bit 0: the unrolled
 * several-vectors-per-thread form the GPU uses for large transfers (else
 * one vector per thread and tile); bit 1 (strided only): the general
 * strided kernel even where the launcher picks the constant-stride one
 * (nd == 1, one word per block). */
int mpiacc_cuda_emulate_strided(int ws, int dir, char *base, char *packed, const mpiacc_cuda_strided_t *s, int variant);
int mpiacc_cuda_emulate_generic(int ws, int dir, const void *hblob, char *buf, char *packed, long long first,
                                long long nwords, int variant);

/* 1 (default): large transfers take the kernels' unrolled forms (several
 * vectors per thread); 0: never (set through cuda_testhooks.h, for A/B
 * timings of the two forms). */
extern int mpiacc_cuda_unroll;

#ifdef __cplusplus
}
#endif
#endif
