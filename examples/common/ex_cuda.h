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

#endif
