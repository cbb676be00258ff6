/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/common/ex_cuda.h: what the examples' CUDA backends share
 * (halo3d/h3_cuda.cu, stencil2d/stencil_cuda.cu): a rank's device is
 * (node-local rank) % (device count).
 */
#ifndef EX_CUDA_H_INCLUDED
#define EX_CUDA_H_INCLUDED

#include <cstdio>

#include <cuda_runtime.h>

extern "C" {
#include "ex_common.h"
}

/* Returns ex_error's 1 from the calling function when a CUDA call fails. */
#define CU_TRY(call_)                                                                                    \
    do {                                                                                                 \
        cudaError_t e_ = (call_);                                                                        \
        if (e_ != cudaSuccess)                                                                           \
            return ex_error("%s failed: %s (%s)", #call_, cudaGetErrorName(e_), cudaGetErrorString(e_)); \
    } while (0)

/* The backends' probe: 1 and the device described in desc, *ndev the
 * devices of the node; 0 without one. */
static inline int ex_cu_probe(int local_rank, char *desc, size_t len, int *ndev)
{
    int n = 0;
    cudaDeviceProp p;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return 0;
    }
    if (cudaGetDeviceProperties(&p, local_rank % n) != cudaSuccess) return 0;
    snprintf(desc, len, "CUDA device %d of %d: %s", local_rank % n, n, p.name);
    *ndev = n;
    return 1;
}

/* Node-local rank local_rank's device, a main stream of the greatest
 * priority (*s) and a low-priority one (*lo), both non-blocking, and three
 * arrays of `bytes`, the third a copy of init: 0, or ex_error's 1. */
static inline int ex_cu_setup(int local_rank, cudaStream_t *s, cudaStream_t *lo, void *m[3], size_t bytes,
                              const void *init)
{
    int n = 0, least = 0, greatest = 0;
    CU_TRY(cudaGetDeviceCount(&n));
    CU_TRY(cudaSetDevice(local_rank % n));
    CU_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CU_TRY(cudaStreamCreateWithPriority(s, cudaStreamNonBlocking, greatest));
    CU_TRY(cudaStreamCreateWithPriority(lo, cudaStreamNonBlocking, least));
    for (int b = 0; b < 3; b++) CU_TRY(cudaMalloc(&m[b], bytes));
    CU_TRY(cudaMemcpy(m[2], init, bytes, cudaMemcpyHostToDevice));
    return 0;
}

/* Both arrays m[0], m[1] = the copy of init (m[2]), both streams idle. */
static inline int ex_cu_reset(cudaStream_t s, cudaStream_t lo, void *m[3], size_t bytes)
{
    for (int b = 0; b < 2; b++) CU_TRY(cudaMemcpyAsync(m[b], m[2], bytes, cudaMemcpyDeviceToDevice, s));
    CU_TRY(cudaStreamSynchronize(s));
    CU_TRY(cudaStreamSynchronize(lo));
    return 0;
}

#endif
