/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opencl/kernels.cl: the generic pack / unpack kernels (OpenCL C 1.2).
 *
 * The library embeds this file right after src/pack/traverse.h (see
 * src/opencl/CMakeLists.txt), so the offsets come from the one traversal
 * source.  One work-item moves one word of WS bytes at a time (WS divides
 * the type's chunk and alignment and the range ends, chosen on the host),
 * in a grid-stride loop over the words of packed bytes [first, first +
 * nwords*WS).  `packed` holds those bytes starting at byte `poff`.
 */

#define MPIACC_OCL_KERNEL_PAIR(WS, T)                                                        \
    __kernel void mpiacc_pack_##WS(__global const mpiacc_tv_i64 *blob,                       \
                                   __global const uchar *buf, __global uchar *packed,        \
                                   long poff, long first, long nwords)                       \
    {                                                                                        \
        for (long w = (long)get_global_id(0); w < nwords; w += (long)get_global_size(0)) {   \
            long off = mpiacc_tv_offset(blob, first + w * WS);                               \
            *(__global T *)(packed + poff + w * WS) = *(__global const T *)(buf + off);      \
        }                                                                                    \
    }                                                                                        \
    __kernel void mpiacc_unpack_##WS(__global const mpiacc_tv_i64 *blob, __global uchar *buf, \
                                     __global const uchar *packed, long poff, long first,     \
                                     long nwords)                                            \
    {                                                                                        \
        for (long w = (long)get_global_id(0); w < nwords; w += (long)get_global_size(0)) {   \
            long off = mpiacc_tv_offset(blob, first + w * WS);                               \
            *(__global T *)(buf + off) = *(__global const T *)(packed + poff + w * WS);      \
        }                                                                                    \
    }

MPIACC_OCL_KERNEL_PAIR(1, uchar)
MPIACC_OCL_KERNEL_PAIR(2, ushort)
MPIACC_OCL_KERNEL_PAIR(4, uint)
MPIACC_OCL_KERNEL_PAIR(8, ulong)
MPIACC_OCL_KERNEL_PAIR(16, uint4)
