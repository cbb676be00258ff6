/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_coll.h: the reduction kernel of the on-device collectives
 * (cuda_coll.cu) and its host side (cuda_coll.c: reduce_supported and
 * import_reduce of the IPC table, src/core/backend_ipc.h); the copy
 * kernel of import_copy_n (cuda_copyn.cu, at the end).  No MPI here:
 * cuda_coll.c maps (MPI_Datatype, MPI_Op) to an element kind and an
 * operation code below.
 *
 * The kernel computes, for k in [0, count):
 *     dst[k] = ((src[0][k] op src[1][k]) op src[2][k]) ... op src[n-1][k]
 * in this order whatever the word width, so every process that reduces
 * the same slice from the same sources gets bitwise the same result.
 * Operations follow MPICH's element functions with acc = the running
 * result, x = the next source: MIN acc < x ? acc : x, MAX acc > x ? acc : x
 * (so NaN and signed zeros behave as in MPI_Reduce_local(x, acc)), SUM and
 * PROD on integers in unsigned (wrapping) arithmetic, logical operations
 * giving 0 or 1.
 */
#ifndef MPIACC_CUDA_COLL_H_INCLUDED
#define MPIACC_CUDA_COLL_H_INCLUDED

#include <cuda_runtime_api.h>

#define MPIACC_CUDA_RED_MAXSRC 64 /* sources of one kernel (launch parameters stay fixed) */

/* Element kinds.  Signedness matters only for MIN and MAX: the other
 * operations use the unsigned kind of the same size. */
enum {
    MPIACC_CUDA_RED_I8,
    MPIACC_CUDA_RED_U8,
    MPIACC_CUDA_RED_I16,
    MPIACC_CUDA_RED_U16,
    MPIACC_CUDA_RED_I32,
    MPIACC_CUDA_RED_U32,
    MPIACC_CUDA_RED_I64,
    MPIACC_CUDA_RED_U64,
    MPIACC_CUDA_RED_F32,
    MPIACC_CUDA_RED_F64,
    MPIACC_CUDA_RED_NKIND
};

enum {
    MPIACC_CUDA_RED_SUM,
    MPIACC_CUDA_RED_PROD,
    MPIACC_CUDA_RED_MIN,
    MPIACC_CUDA_RED_MAX,
    MPIACC_CUDA_RED_LAND,
    MPIACC_CUDA_RED_LOR,
    MPIACC_CUDA_RED_LXOR,
    MPIACC_CUDA_RED_BAND,
    MPIACC_CUDA_RED_BOR,
    MPIACC_CUDA_RED_BXOR,
    MPIACC_CUDA_RED_NOP
};

#ifdef __cplusplus
extern "C" {
#endif

/* One reduction: n sources of count elements each. */
typedef struct mpiacc_cuda_red {
    const void *src[MPIACC_CUDA_RED_MAXSRC];
    void *dst;
    long long count;
    int n, kind, op;
} mpiacc_cuda_red_t;

/* Size in bytes of an element kind (0 for an unknown kind). */
int mpiacc_cuda_red_elem_size(int kind);

/* Enqueues the one kernel of r on st (current device with nsm SMs).
 * Returns a cudaError_t (as int); cudaErrorInvalidValue for an unknown
 * (kind, op), n outside [1, MPIACC_CUDA_RED_MAXSRC] or count < 0.  count
 * 0 enqueues nothing. */
int mpiacc_cuda_launch_reduce(const mpiacc_cuda_red_t *r, int nsm, cudaStream_t st);

/* The many-piece copy of import_copy_n (cuda_copyn.cu, body and plan in
 * cuda_copyn_body.cuh): one piece is `bytes` bytes from src to dst. */
typedef struct mpiacc_cuda_cpiece {
    const void *src;
    void *dst;
    long long bytes;
} mpiacc_cuda_cpiece_t;

#define MPIACC_CUDA_COPYN_MAXP 64 /* pieces of one launch (launch parameters stay fixed) */

/* Enqueues the copy of pieces p[0..n) on st (current device with nsm SMs):
 * one kernel per MPIACC_CUDA_COPYN_MAXP pieces (empty pieces dropped;
 * nothing at all when every piece is empty).  Returns a cudaError_t (as
 * int); cudaErrorInvalidValue for n < 0, bytes < 0 or a NULL pointer of a
 * non-empty piece (then nothing is enqueued). */
int mpiacc_cuda_launch_copyn(const mpiacc_cuda_cpiece_t *p, int n, int nsm, cudaStream_t st);

#ifdef __cplusplus
}
#endif

#endif
