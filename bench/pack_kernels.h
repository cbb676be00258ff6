/* bench/pack helper kernels (pack_kernels.cu); return a cudaError_t. */
#ifndef BENCH_PACK_KERNELS_H
#define BENCH_PACK_KERNELS_H
#include <cuda_runtime_api.h>
#ifdef __cplusplus
extern "C" {
#endif
int bench_launch_empty(cudaStream_t st);
int bench_launch_flag(volatile unsigned *flag, unsigned v, cudaStream_t st);
int bench_launch_gate(volatile int *go, cudaStream_t st);
#ifdef __cplusplus
}
#endif
#endif
