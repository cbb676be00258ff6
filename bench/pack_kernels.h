/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/pack helper kernels (pack_kernels.cu); the launchers return a cudaError_t. */
#ifndef BENCH_PACK_KERNELS_H
#define BENCH_PACK_KERNELS_H
#include <stddef.h>

#include <cuda_runtime_api.h>
#ifdef __cplusplus
extern "C" {
#endif
int bench_launch_empty(cudaStream_t st);
int bench_launch_flag(volatile unsigned *flag, unsigned v, cudaStream_t st);
int bench_launch_gate(volatile int *go, cudaStream_t st);
/* Fills n bytes at p with a hash of each byte's offset (no two nearby
 * offsets alike), so that a pack that moves a wrong byte shows. */
int bench_launch_fill(void *p, size_t n, cudaStream_t st);

/* Pattern floor (bench/pack's kmin, pack_floor.h): a hand-specialised pack
 * of nb blocks of blk bytes, block q at in + q*stride, packed densely into
 * out (nb*blk bytes), without any datatype machinery.  Variants:
 *   WORD    one thread per word of w bytes, w the widest of 16, 8, 4, 2, 1
 *           dividing blk, stride and the addresses of in and out:
 *           out[i] = in[(i / wpb) * stride_w + i % wpb] (wpb = blk / w,
 *           shifts when wpb is a power of two)
 *   WORD4   the same words, 4 per thread (strided by the block size, so
 *           both sides stay coalesced): the 4 loads first, then the 4 stores
 *   SPAN16  blk in {1, 2, 4, 8}, stride <= 64 and a multiple of blk, in, out
 *           and nb*blk multiples of 16: one thread per 16-byte output
 *           vector; it loads, 16 bytes at a time, every aligned 16-byte word
 *           of its input span that holds one of its 16/blk blocks (each word
 *           once), then extracts the blocks and stores the vector at once */
enum { BENCH_FLOOR_WORD, BENCH_FLOOR_WORD4, BENCH_FLOOR_SPAN16, BENCH_FLOOR_N };
typedef struct bench_floor {
    const void *in;    /* device */
    void *out;         /* device, nb*blk bytes */
    long long nb, blk, stride;
    long long in_bytes; /* bytes readable from in (all of them in one allocation) */
} bench_floor_t;
/* 1 when variant v applies to f (always 0 for a malformed f: nb or blk < 1,
 * stride < blk, or blocks beyond in_bytes). */
int bench_floor_applies(const bench_floor_t *f, int v);
/* The word width WORD and WORD4 use for f (bytes). */
int bench_floor_word(const bench_floor_t *f);
/* Enqueues variant v on st; cudaErrorInvalidValue when it does not apply. */
int bench_launch_floor(const bench_floor_t *f, int v, cudaStream_t st);
#ifdef __cplusplus
}
#endif
#endif
