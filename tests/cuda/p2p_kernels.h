/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_kernels.h: kernels the public-API CUDA tests use to create GPU work
 * the library must order against: fills, and "gates" (a one-thread kernel
 * spinning on a flag in mapped pinned host memory that the test sets later,
 * so a dependency is held open for exactly as long as the test wants).
 * Every function enqueues on `stream` and returns a cudaError_t. */
#ifndef CU_P2P_KERNELS_H_INCLUDED
#define CU_P2P_KERNELS_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif
/* buf[i] = cu_pattern(i, seed), i < n. */
int cu_k_fill(void *stream, void *buf, long long n, unsigned seed);
/* Waits until gate[0] != 0 (device pointer of mapped host memory; NULL: no
 * wait), then fills as cu_k_fill.  If timeout_s passes first, gate[1] is
 * set to 1 and the kernel goes on (a failing test never hangs the GPU). */
int cu_k_gate_fill(void *stream, int *gate, void *buf, long long n, unsigned seed, double timeout_s);
/* Waits like cu_k_gate_fill, then copies n bytes src -> dst (a slow reader
 * of src: dst is its snapshot). */
int cu_k_gate_copy(void *stream, int *gate, void *dst, const void *src, long long n, double timeout_s);
#ifdef __cplusplus
}
#endif
#endif
