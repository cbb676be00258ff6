/* SPDX-License-Identifier: BSD-3-Clause */
/* cu_randtype.h: seeded random MPI datatypes for the CUDA tests — the
 * engine's generator (tests/pack/typegen.c: every constructor, darray,
 * subarray with non-zero starts, hindexed_block, resized bounds, negative
 * displacements, nested), the same one the CPU and OpenCL corpora use.
 * The generator is part of the tests' mpiacc_testutil library. */
#ifndef CU_RANDTYPE_H_INCLUDED
#define CU_RANDTYPE_H_INCLUDED

#include "testutil.h"
#include "typegen.h"

/* A uniform integer in [0, n). */
static inline int cu_r(uint64_t *st, int n) { return (int)(mpiacc_test_rand(st) % (uint64_t)n); }

static inline int cu_is_named(MPI_Datatype t) { return tg_combiner(t) == MPI_COMBINER_NAMED; }

/* Uncommitted random type of nesting depth <= depth, drawn from *st; free
 * with MPI_Type_free unless cu_is_named. */
static inline MPI_Datatype cu_rand_type(uint64_t *st, int depth)
{
    tg_src_t src = {.state = mpiacc_test_rand(st), .large = 1, .max_size = 1 << 14, .max_span = 1 << 16};
    return tg_make(&src, depth);
}

/* Where count x t lies in a test buffer: the buffer pointer is base + *off
 * (*off >= 0) and [base, base + *off + *span) holds every byte count x t
 * covers according to MPI (true bounds, which hold the data), plus `pad`. */
static inline void cu_place(MPI_Datatype t, int count, long long pad, long long *off, long long *span)
{
    MPI_Count lo, hi;
    tg_bounds(t, count, &lo, &hi);
    *off = lo < 0 ? -(long long)lo : 0;
    *span = (hi > 0 ? (long long)hi : 0) + pad;
}

#endif
