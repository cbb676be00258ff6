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
} mpiacc_cuda_xcopy_t;

/* Completes a plan: k->src/dst blob (host), base and the range set; fills
 * dense/start of both sides (counts given) and ws.  Returns 0, or -1 for a
 * blob that is not a traverse.h blob. */
int mpiacc_cuda_xcopy_plan(mpiacc_cuda_xcopy_t *k, long long src_count, long long dst_count);

/* Enqueues the copy of plan k (blobs replaced by device copies; both
 * sides dense: one cudaMemcpyAsync) on st.  nsm bounds the grid.  Blobs
 * that fit MPIACC_CUDA_XCOPY_SMEM bytes together are staged in shared
 * memory by each block before it traverses them.  Returns a cudaError_t
 * (as int). */
int mpiacc_cuda_launch_xcopy(const mpiacc_cuda_xcopy_t *k, int nsm, cudaStream_t st);

/* Host emulation of the same kernel body (host blobs and buffers), thread
 * by thread over a small grid; variant 1 forces the traversal on dense
 * sides too.  For tests without a GPU.  Returns a cudaError_t (as int). */
int mpiacc_cuda_emulate_xcopy(const mpiacc_cuda_xcopy_t *k, int variant);

#ifdef __cplusplus
}
#endif
#endif
