/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * traverse.h — the ONE datatype traversal source of mpiacc.
 *
 * Portable code that compiles as C99/C11 (host reference pack/unpack), as
 * CUDA device code (nvcc) and as OpenCL C 1.2 (included verbatim into the
 * kernel source).  It reads a "blob": the point-based representation of an
 * analysed datatype (after Jenkins et al.), one contiguous array of 64-bit
 * words that is copied to a device unchanged.
 *
 * Blob layout (word indices; all values are byte counts unless noted):
 *
 *   header  [0, MPIACC_TV_HDR_WORDS)
 *     MAGIC, SIZE (packed bytes of one element), EXTENT, CHUNK, ALIGN,
 *     ROOT (word index of the root node), STRIDED (1: the canonical strided
 *     fast path below describes the whole element), NDIMS, START, BLK,
 *     COUNTS[4], STRIDES[4], WORDS (total words), NNODES.
 *   nodes   preorder-serialised fixed-length nodes of MPIACC_TV_NODE_WORDS:
 *     KIND, COUNT, OFF (added to the input offset when the node is entered),
 *     SIZE (packed bytes of the node), EXTENT, CSIZE (packed bytes of one
 *     child element / of one block), STRIDE, LOOK (word index of the node's
 *     lookaside data).  A single-child node's child follows it directly.
 *   lookaside  variable-length data after all nodes:
 *     HIDX   displs[count]                         (uniform blocks)
 *     IDX    pre[count+1] (prefix-summed block lengths in child elements),
 *            displs[count]
 *     STRUCT pre[count+1] (prefix-summed packed bytes), displs[count],
 *            child[count] (word index of each member's node)
 *
 * Node kinds:
 *   LEAF    SIZE contiguous input bytes at OFF (the largest contiguous chunk
 *           found: the unit of the traversal, never a single primitive).
 *   VEC     COUNT child elements, element i at OFF + i*STRIDE.
 *   HIDX    COUNT child elements, element i at OFF + displs[i].
 *   IDX     COUNT blocks; block h holds pre[h+1]-pre[h] child elements, its
 *           j-th at OFF + displs[h] + j*STRIDE (binary search on pre).
 *   STRUCT  COUNT members; member h covers packed bytes [pre[h], pre[h+1])
 *           and is the node child[h] placed at OFF + displs[h].
 *
 * mpiacc_tv_offset(blob, p) maps packed byte p (of any number of elements)
 * to its input byte offset in O(depth + log n) with no loop over blocks and
 * no dependency on other p.
 */
#ifndef MPIACC_TRAVERSE_H_INCLUDED
#define MPIACC_TRAVERSE_H_INCLUDED

#if defined(__OPENCL_VERSION__)
#define MPIACC_TV_GLOBAL __global
#define MPIACC_TV_FN static inline
#define MPIACC_TV_PRIVATE __private
typedef long mpiacc_tv_i64;
#elif defined(__CUDACC__)
#define MPIACC_TV_GLOBAL
#define MPIACC_TV_FN static __host__ __device__ __forceinline__
#define MPIACC_TV_PRIVATE
typedef long long mpiacc_tv_i64;
#else
#define MPIACC_TV_GLOBAL
#define MPIACC_TV_FN static inline
#define MPIACC_TV_PRIVATE
typedef long long mpiacc_tv_i64;
#endif

/* header words */
#define MPIACC_TV_MAGIC_VALUE 0x4d50494143430001LL /* "MPIACC" v1 */
#define MPIACC_TV_H_MAGIC 0
#define MPIACC_TV_H_SIZE 1
#define MPIACC_TV_H_EXTENT 2
#define MPIACC_TV_H_CHUNK 3
#define MPIACC_TV_H_ALIGN 4
#define MPIACC_TV_H_ROOT 5
#define MPIACC_TV_H_STRIDED 6
#define MPIACC_TV_H_NDIMS 7
#define MPIACC_TV_H_START 8
#define MPIACC_TV_H_BLK 9
#define MPIACC_TV_H_COUNTS 10 /* 4 words */
#define MPIACC_TV_H_STRIDES 14 /* 4 words */
#define MPIACC_TV_H_WORDS 18
#define MPIACC_TV_H_NNODES 19
#define MPIACC_TV_HDR_WORDS 20
#define MPIACC_TV_MAX_DIMS 4

/* node words */
#define MPIACC_TV_N_KIND 0
#define MPIACC_TV_N_COUNT 1
#define MPIACC_TV_N_OFF 2
#define MPIACC_TV_N_SIZE 3
#define MPIACC_TV_N_EXTENT 4
#define MPIACC_TV_N_CSIZE 5
#define MPIACC_TV_N_STRIDE 6
#define MPIACC_TV_N_LOOK 7
#define MPIACC_TV_NODE_WORDS 8

/* node kinds */
#define MPIACC_TV_LEAF 1
#define MPIACC_TV_VEC 2
#define MPIACC_TV_HIDX 3
#define MPIACC_TV_IDX 4
#define MPIACC_TV_STRUCT 5

MPIACC_TV_FN mpiacc_tv_i64 mpiacc_tv_size(MPIACC_TV_GLOBAL const mpiacc_tv_i64 *blob)
{
    return blob[MPIACC_TV_H_SIZE];
}

MPIACC_TV_FN mpiacc_tv_i64 mpiacc_tv_extent(MPIACC_TV_GLOBAL const mpiacc_tv_i64 *blob)
{
    return blob[MPIACC_TV_H_EXTENT];
}

MPIACC_TV_FN mpiacc_tv_i64 mpiacc_tv_chunk(MPIACC_TV_GLOBAL const mpiacc_tv_i64 *blob)
{
    return blob[MPIACC_TV_H_CHUNK];
}

MPIACC_TV_FN mpiacc_tv_i64 mpiacc_tv_align(MPIACC_TV_GLOBAL const mpiacc_tv_i64 *blob)
{
    return blob[MPIACC_TV_H_ALIGN];
}

#if !defined(__OPENCL_VERSION__)
/* Whether `count` elements of the layout in blob are one dense block
 * (packed byte p at input offset *start + p), from the canonical strided
 * header: the dimensions continue the block, and with count > 1 the
 * extent equals the size.  No bytes (size or count 0): dense, *start 0. */
MPIACC_TV_FN int mpiacc_tv_dense(MPIACC_TV_GLOBAL const mpiacc_tv_i64 *blob, mpiacc_tv_i64 count,
                                 MPIACC_TV_PRIVATE mpiacc_tv_i64 *start)
{
    const mpiacc_tv_i64 size = blob[MPIACC_TV_H_SIZE], nd = blob[MPIACC_TV_H_NDIMS];
    mpiacc_tv_i64 blk = blob[MPIACC_TV_H_BLK];
    *start = 0;
    if (size <= 0 || count <= 0) return 1;
    if (!blob[MPIACC_TV_H_STRIDED] || nd < 0 || nd > MPIACC_TV_MAX_DIMS) return 0;
    for (mpiacc_tv_i64 d = 0; d < nd; d++) {
        const mpiacc_tv_i64 c = blob[MPIACC_TV_H_COUNTS + d];
        if (c == 1) continue;
        if (blob[MPIACC_TV_H_STRIDES + d] != blk) return 0;
        blk *= c;
    }
    if (blk != size || (count > 1 && blob[MPIACC_TV_H_EXTENT] != size)) return 0;
    *start = blob[MPIACC_TV_H_START];
    return 1;
}
#endif

/* Largest h in [0, n) with a[h] <= x, for a non-decreasing a with
 * a[0] <= x < a[n]: the block holding x (empty blocks are skipped). */
MPIACC_TV_FN mpiacc_tv_i64 mpiacc_tv_search(MPIACC_TV_GLOBAL const mpiacc_tv_i64 *a, mpiacc_tv_i64 n,
                                            mpiacc_tv_i64 x)
{
    mpiacc_tv_i64 lo = 0, hi = n; /* a[lo] <= x < a[hi] */
    while (hi - lo > 1) {
        mpiacc_tv_i64 mid = lo + (hi - lo) / 2;
        if (a[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/*
 * The traversal.  Returns the input offset of packed byte p and stores in
 * *run the number of bytes from p on that are contiguous in the input (up
 * to the end of the leaf chunk holding p), so a host loop can copy whole
 * chunks.  Requires 0 <= p < count*size and size > 0.
 */
MPIACC_TV_FN mpiacc_tv_i64 mpiacc_tv_locate(MPIACC_TV_GLOBAL const mpiacc_tv_i64 *blob, mpiacc_tv_i64 p,
                                            MPIACC_TV_PRIVATE mpiacc_tv_i64 *run)
{
    mpiacc_tv_i64 size = blob[MPIACC_TV_H_SIZE];
    mpiacc_tv_i64 e, r, off, at;
    if (size <= 0) {
        *run = 0;
        return 0;
    }
    e = p / size;
    r = p - e * size;
    off = e * blob[MPIACC_TV_H_EXTENT];
    if (blob[MPIACC_TV_H_STRIDED]) {
        /* canonical strided form: r = q*blk + w, q decomposed over counts */
        mpiacc_tv_i64 blk = blob[MPIACC_TV_H_BLK];
        mpiacc_tv_i64 q = r / blk, w = r - q * blk;
        mpiacc_tv_i64 nd = blob[MPIACC_TV_H_NDIMS], d;
        off += blob[MPIACC_TV_H_START] + w;
        for (d = 0; d < nd; d++) {
            mpiacc_tv_i64 c = blob[MPIACC_TV_H_COUNTS + d];
            mpiacc_tv_i64 qd = q / c;
            off += (q - qd * c) * blob[MPIACC_TV_H_STRIDES + d];
            q = qd;
        }
        *run = blk - w;
        return off;
    }
    at = blob[MPIACC_TV_H_ROOT];
    for (;;) {
        MPIACC_TV_GLOBAL const mpiacc_tv_i64 *n = blob + at;
        mpiacc_tv_i64 kind = n[MPIACC_TV_N_KIND];
        off += n[MPIACC_TV_N_OFF];
        if (kind == MPIACC_TV_LEAF) {
            *run = n[MPIACC_TV_N_SIZE] - r;
            return off + r;
        } else if (kind == MPIACC_TV_VEC) {
            mpiacc_tv_i64 cs = n[MPIACC_TV_N_CSIZE];
            mpiacc_tv_i64 i = r / cs;
            r -= i * cs;
            off += i * n[MPIACC_TV_N_STRIDE];
            at += MPIACC_TV_NODE_WORDS;
        } else if (kind == MPIACC_TV_HIDX) {
            mpiacc_tv_i64 cs = n[MPIACC_TV_N_CSIZE];
            mpiacc_tv_i64 i = r / cs;
            r -= i * cs;
            off += blob[n[MPIACC_TV_N_LOOK] + i];
            at += MPIACC_TV_NODE_WORDS;
        } else if (kind == MPIACC_TV_IDX) {
            MPIACC_TV_GLOBAL const mpiacc_tv_i64 *pre = blob + n[MPIACC_TV_N_LOOK];
            mpiacc_tv_i64 cnt = n[MPIACC_TV_N_COUNT];
            mpiacc_tv_i64 cs = n[MPIACC_TV_N_CSIZE];
            mpiacc_tv_i64 el = r / cs, h;
            r -= el * cs;
            h = mpiacc_tv_search(pre, cnt, el);
            off += pre[cnt + 1 + h] + (el - pre[h]) * n[MPIACC_TV_N_STRIDE];
            at += MPIACC_TV_NODE_WORDS;
        } else { /* MPIACC_TV_STRUCT */
            MPIACC_TV_GLOBAL const mpiacc_tv_i64 *pre = blob + n[MPIACC_TV_N_LOOK];
            mpiacc_tv_i64 cnt = n[MPIACC_TV_N_COUNT];
            mpiacc_tv_i64 h = mpiacc_tv_search(pre, cnt, r);
            r -= pre[h];
            off += pre[cnt + 1 + h];
            at = pre[2 * cnt + 1 + h];
        }
    }
}

/* Input byte offset (relative to the buffer passed to MPI; may be
 * negative) of packed byte p, 0 <= p < count*size. */
MPIACC_TV_FN mpiacc_tv_i64 mpiacc_tv_offset(MPIACC_TV_GLOBAL const mpiacc_tv_i64 *blob, mpiacc_tv_i64 p)
{
    mpiacc_tv_i64 run;
    return mpiacc_tv_locate(blob, p, &run);
}

#endif /* MPIACC_TRAVERSE_H_INCLUDED */
