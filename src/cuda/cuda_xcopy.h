/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_xcopy.h: the layout-to-layout copy kernel (cuda_xcopy.cu) — reads
 * one datatype layout and writes another with no packed intermediate:
 * for packed positions p in [first, last)
 *     dst[tv_offset(dst_blob, p)] = src[tv_offset(src_blob, p)]
 * in words of ws bytes (the widest power of two <= 16 dividing both
 * sides' contiguous unit and alignment, the two base pointers and the
 * range ends).  Offsets come only from src/pack/traverse.h.  No MPI here.
 */
#ifndef MPIACC_CUDA_XCOPY_H_INCLUDED
#define MPIACC_CUDA_XCOPY_H_INCLUDED

#include <cuda_runtime_api.h>

#define MPIACC_CUDA_XCOPY_SMEM 16384

#ifdef __cplusplus
extern "C" {
#endif

/* One side of a copy. */
typedef struct mpiacc_cuda_xside {
    const void *blob; /* traverse.h blob: host copy for the plan and the
                         emulation, device copy for a launch            */
    char *base;       /* the buffer as passed to MPI (offsets relative)  */
    int dense;        /* count elements form one dense block: byte p at
                         base + start + p, no traversal needed           */
    long long start;  /* dense only                                      */
    long long words;  /* set by the plan: the blob's size in 8-byte words
                         (0 for a dense side: not read)                  */
} mpiacc_cuda_xside_t;

typedef struct mpiacc_cuda_xcopy {
    mpiacc_cuda_xside_t src, dst;
    long long first, last; /* packed byte range                          */
    int ws;                /* word size (1, 2, 4, 8, 16), set by the plan */
    int one_word;          /* set by the plan: a side's contiguous chunks are
                              single words, so each thread moves one word (one
                              traversal per side) instead of 16 bytes (a
                              traversal per word, one after the other)    */
    int how;               /* MPIACC_CUDA_XCOPY_*, set by the caller (0: AUTO) */
} mpiacc_cuda_xcopy_t;

/* How a plan is enqueued (mpiacc_cuda_xcopy_t.how).  AUTO: one
 * cudaMemcpyAsync when both sides are dense, else the kernel.  KERNEL: the
 * kernel always (dense sides too).  ROWS: one cudaMemcpy2DAsync (copy
 * engine, no kernel launch) when both sides are rows of the same width
 * (see mpiacc_cuda_xcopy_rows) and there are at most MPIACC_CUDA_XCOPY_ROWS_MAX
 * of them, else as AUTO. */
enum { MPIACC_CUDA_XCOPY_AUTO = 0, MPIACC_CUDA_XCOPY_KERNEL, MPIACC_CUDA_XCOPY_ROWS };
/* Measured (H200, MPS): one cudaMemcpy2DAsync beats the kernel up to ~1024
 * rows (1 KiB-64 KiB of 64 B rows: 0.8-1.5 us less one-way) and loses above
 * (8192 rows of 8 B: +3.6 us; 16384 rows of 64 B: +8.5 us). */
#define MPIACC_CUDA_XCOPY_ROWS_MAX 1024

/* Rows geometry of a plan: packed bytes [first, last) are `rows` rows of
 * `width` bytes, row r at src + r * spitch and dst + r * dpitch. */
typedef struct mpiacc_cuda_xrows {
    char *src, *dst;
    long long spitch, dpitch, width, rows;
} mpiacc_cuda_xrows_t;

/* Whether plan k (planned; host blobs; src_count / dst_count elements) is
 * rows on both sides: a side is dense, or one element (count 1) of the
 * canonical strided form with one dimension of count > 1 (a vector) whose
 * stride is >= its block; the strided sides' blocks are equal (the width)
 * and divide first and last.  Fills *g; returns 1, or 0 when not rows
 * (both sides dense counts as not rows: that is one plain copy). */
int mpiacc_cuda_xcopy_rows(const mpiacc_cuda_xcopy_t *k, long long src_count, long long dst_count,
                           mpiacc_cuda_xrows_t *g);

/* Completes a plan: k->src/dst blob (host), base and the range set; fills
 * dense/start of both sides (counts given) and ws.  Returns 0, or -1 for a
 * blob that is not a traverse.h blob. */
int mpiacc_cuda_xcopy_plan(mpiacc_cuda_xcopy_t *k, long long src_count, long long dst_count);

/* Enqueues the copy of plan k (blobs replaced by device copies; both
 * sides dense: one cudaMemcpyAsync unless k->how is KERNEL; k->how ROWS
 * is decided by the caller, which calls mpiacc_cuda_launch_xrows) on st.  nsm bounds the grid.  Blobs
 * that fit MPIACC_CUDA_XCOPY_SMEM bytes together are staged in shared
 * memory by each block before it traverses them.  Returns a cudaError_t
 * (as int). */
int mpiacc_cuda_launch_xcopy(const mpiacc_cuda_xcopy_t *k, int nsm, cudaStream_t st);

/* Enqueues the rows copy g (cudaMemcpy2DAsync, cudaMemcpyDefault) on st. */
int mpiacc_cuda_launch_xrows(const mpiacc_cuda_xrows_t *g, cudaStream_t st);

/* Host emulation of a rows copy (memcpy per row), for tests. */
void mpiacc_cuda_emulate_xrows(const mpiacc_cuda_xrows_t *g);

/* Host emulation of the same kernel body (host blobs and buffers), thread
 * by thread over a small grid; variant 1 forces the traversal on dense
 * sides too.  For tests without a GPU.  Returns a cudaError_t (as int). */
int mpiacc_cuda_emulate_xcopy(const mpiacc_cuda_xcopy_t *k, int variant);

#ifdef __cplusplus
}
#endif
#endif
