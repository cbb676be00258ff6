/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/ooo_kernels.cu: a kernel of controllable duration that produces the
 * data a send needs (one block spins, then the grid writes the buffer). */
#include <cuda_runtime_api.h>

static __device__ unsigned long long now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __global__ void k_produce(unsigned *buf, long long n, unsigned v, unsigned long long ns)
{
    const unsigned long long t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        buf[i] = v + (unsigned)i;
}

extern "C" int bench_produce(void *stream, void *buf, long long bytes, unsigned v, double us)
{
    k_produce<<<8, 256, 0, (cudaStream_t)stream>>>((unsigned *)buf, bytes / 4, v, (unsigned long long)(us * 1e3));
    return (int)cudaGetLastError();
}
