/* SPDX-License-Identifier: BSD-3-Clause */
/* cu_pattern.h: the seeded byte pattern of the CUDA tests, for C and CUDA. */
#ifndef CU_PATTERN_H_INCLUDED
#define CU_PATTERN_H_INCLUDED
#if defined(__CUDACC__)
#define CU_HD static __host__ __device__ inline
#else
#define CU_HD static inline
#endif
CU_HD unsigned char cu_pattern(long long i, unsigned seed)
{
    unsigned x = (unsigned)i * 2654435761u + seed * 40503u;
    return (unsigned char)(x >> 13 ^ x >> 24 ^ (unsigned)i);
}
#endif
