/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Force-included (-include) into the OSU micro-benchmarks' C sources by
 * scripts/clients/osu.sh when they are built against CUDA 13 or later: OSU
 * 7.4 calls cudaMemPrefetchAsync with CUDA 12's signature (a device
 * ordinal), which CUDA 13 replaced by the cudaMemLocation form.  This maps
 * the old call onto the new one; OSU's sources stay untouched.
 */
#ifndef MPIACC_OSU_CUDA13_H
#define MPIACC_OSU_CUDA13_H
#include <cuda_runtime_api.h>
#if CUDART_VERSION >= 13000
#define cudaMemPrefetchAsync(ptr, count, dev, stream)                                                         \
    cudaMemPrefetchAsync((ptr), (count),                                                                      \
                         (struct cudaMemLocation){.type = ((dev) == cudaCpuDeviceId ? cudaMemLocationTypeHost    \
                                                                                    : cudaMemLocationTypeDevice), \
                                                  .id = ((dev) == cudaCpuDeviceId ? 0 : (dev))},                 \
                         0, (stream))
#endif
#endif
