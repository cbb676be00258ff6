/* bench/pack helper kernels: an empty kernel, a kernel that writes a mapped
 * flag, and a gate that holds a stream until the host opens it (so that
 * launches queue up behind it and run back to back). */
#include <cuda_runtime.h>

#include "pack_kernels.h"

static __global__ void k_empty(void) {}

static __global__ void k_flag(volatile unsigned *f, unsigned v)
{
    __threadfence_system();
    *f = v;
}

static __global__ void k_gate(volatile int *go, long long max_cycles)
{
    const long long t0 = clock64();
    while (!*go && clock64() - t0 < max_cycles) {
    }
}

extern "C" int bench_launch_empty(cudaStream_t st)
{
    return (int)cudaLaunchKernel((const void *)k_empty, dim3(1), dim3(32), NULL, 0, st);
}

extern "C" int bench_launch_flag(volatile unsigned *flag, unsigned v, cudaStream_t st)
{
    void *args[] = {(void *)&flag, (void *)&v};
    return (int)cudaLaunchKernel((const void *)k_flag, dim3(1), dim3(1), args, 0, st);
}

extern "C" int bench_launch_gate(volatile int *go, cudaStream_t st)
{
    long long max_cycles = 4000000000LL; /* ~2 s: never hang the benchmark */
    void *args[] = {(void *)&go, (void *)&max_cycles};
    return (int)cudaLaunchKernel((const void *)k_gate, dim3(1), dim3(1), args, 0, st);
}
