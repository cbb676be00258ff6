/* SPDX-License-Identifier: BSD-3-Clause */
/* test_kernels.cu: kernels the CUDA tests use to create dependencies: a
 * one-block kernel that spins for a given time and then fills a buffer. */
#include <cuda_runtime_api.h>

#include "cu_pattern.h"
#include "test_kernels.h"

static __device__ unsigned long long now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __global__ void k_spin_fill(unsigned char *buf, long long n, unsigned seed, unsigned long long ns)
{
    if (threadIdx.x == 0) {
        const unsigned long long t0 = now_ns();
        while (now_ns() - t0 < ns) {
        }
    }
    __syncthreads();
    for (long long i = threadIdx.x; i < n; i += blockDim.x) buf[i] = cu_pattern(i, seed);
}

extern "C" int cu_test_spin_fill(void *stream, void *buf, long long n, unsigned seed, double ms)
{
    k_spin_fill<<<1, 1024, 0, (cudaStream_t)stream>>>((unsigned char *)buf, n, seed,
                                                     (unsigned long long)(ms * 1e6));
    return (int)cudaGetLastError();
}
