/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CU_TEST_KERNELS_H_INCLUDED
#define CU_TEST_KERNELS_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif
/* Enqueues on `stream` a kernel that spins for `ms` milliseconds and then
 * writes cu_pattern(i, seed) to buf[i], i < n.  Returns a cudaError_t. */
int cu_test_spin_fill(void *stream, void *buf, long long n, unsigned seed, double ms);
#ifdef __cplusplus
}
#endif
#endif
