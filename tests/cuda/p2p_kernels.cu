/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_kernels.cu: fills and gated kernels for the public-API CUDA tests. */
#include <cuda_runtime_api.h>

#include "cu_pattern.h"
#include "p2p_kernels.h"

static __device__ unsigned long long now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* One thread: spin on gate[0] (host-mapped, read through volatile loads). */
static __global__ void k_gate(volatile int *gate, unsigned long long timeout_ns)
{
    const unsigned long long t0 = now_ns();
    while (gate[0] == 0) {
        if (now_ns() - t0 > timeout_ns) {
            gate[1] = 1;
            __threadfence_system();
            break;
        }
        __nanosleep(1000);
    }
}

static __global__ void k_fill(unsigned char *buf, long long n, unsigned seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        buf[i] = cu_pattern(i, seed);
}

static __global__ void k_copy(unsigned char *dst, const unsigned char *src, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

static int grid_for(long long n)
{
    long long b = (n + 255) / 256;
    return (int)(b < 1 ? 1 : b > 1024 ? 1024 : b);
}

static int gate(cudaStream_t st, int *g, double timeout_s)
{
    if (!g) return (int)cudaSuccess;
    k_gate<<<1, 1, 0, st>>>(g, (unsigned long long)(timeout_s * 1e9));
    return (int)cudaGetLastError();
}

extern "C" int cu_k_fill(void *stream, void *buf, long long n, unsigned seed)
{
    if (n <= 0) return (int)cudaSuccess;
    k_fill<<<grid_for(n), 256, 0, (cudaStream_t)stream>>>((unsigned char *)buf, n, seed);
    return (int)cudaGetLastError();
}

extern "C" int cu_k_gate_fill(void *stream, int *g, void *buf, long long n, unsigned seed, double timeout_s)
{
    int e = gate((cudaStream_t)stream, g, timeout_s);
    return e != (int)cudaSuccess ? e : cu_k_fill(stream, buf, n, seed);
}

extern "C" int cu_k_gate_copy(void *stream, int *g, void *dst, const void *src, long long n, double timeout_s)
{
    int e = gate((cudaStream_t)stream, g, timeout_s);
    if (e != (int)cudaSuccess || n <= 0) return e;
    k_copy<<<grid_for(n), 256, 0, (cudaStream_t)stream>>>((unsigned char *)dst, (const unsigned char *)src, n);
    return (int)cudaGetLastError();
}
