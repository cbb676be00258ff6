/* SPDX-License-Identifier: BSD-3-Clause */
// Compile-only check: traverse.h as CUDA device code (built when
// MPIACC_HAVE_CUDA; nothing runs it).  The real kernels live in src/cuda.
#include "pack/traverse.h"

__global__ void mpiacc_test_traverse_offsets(const mpiacc_tv_i64 *blob, mpiacc_tv_i64 first, mpiacc_tv_i64 n,
                                             mpiacc_tv_i64 *out)
{
    mpiacc_tv_i64 i = (mpiacc_tv_i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        mpiacc_tv_i64 run;
        out[i] = mpiacc_tv_offset(blob, first + i) + 0 * mpiacc_tv_locate(blob, first + i, &run) +
                 mpiacc_tv_chunk(blob) * 0 + mpiacc_tv_align(blob) * 0 + mpiacc_tv_size(blob) * 0 +
                 mpiacc_tv_extent(blob) * 0;
    }
}
