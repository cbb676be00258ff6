/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cu_cases.h: strided test layouts shared by the CUDA tests.  Each case is
 * built twice: as an MPI datatype (hvector nesting, start offset, resized
 * extent; the oracle is MPICH's MPI_Pack/MPI_Unpack) and as a hand-made
 * analysis in canonical strided form (mpiacc_pack_type_t), so the backend is
 * tested independently of the datatype engine.
 */
#ifndef CU_CASES_H_INCLUDED
#define CU_CASES_H_INCLUDED

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack/pack.h"

typedef struct cu_case {
    const char *name;
    long long blk, start;
    int ndims; /* 0 with contig=1 for the contiguous case */
    long long counts[MPIACC_PACK_MAX_DIMS], strides[MPIACC_PACK_MAX_DIMS];
    int contig;
    int expect_ws; /* word size the plan must pick with 256-aligned buffers (0: contiguous copy) */
} cu_case_t;

static const cu_case_t cu_cases[] = {
    {"contiguous 1000 B at 24", 1000, 24, 0, {0}, {0}, 1, 0},
    {"2D blk 1 pitch 5", 1, 3, 1, {37}, {5}, 0, 1},
    {"2D blk 2 pitch 6", 2, 2, 1, {33}, {6}, 0, 2},
    {"2D blk 4 pitch 12", 4, 4, 1, {20}, {12}, 0, 4},
    {"2D blk 8 pitch 24", 8, 8, 1, {17}, {24}, 0, 8},
    {"2D blk 16 pitch 48", 16, 16, 1, {9}, {48}, 0, 16},
    {"2D blk 48 pitch 64 (3 words)", 48, 0, 1, {7}, {64}, 0, 16},
    {"2D blk 12 pitch 20 (3 words of 4)", 12, 0, 1, {10}, {20}, 0, 4},
    {"2D blk 1 pitch 512", 1, 0, 1, {300}, {512}, 0, 1},
    {"2D blk 8 pitch 512", 8, 0, 1, {200}, {512}, 0, 8},
    /* long enough for interior (unrolled) tiles of the constant-stride kernel */
    {"2D blk 1 pitch 3 long", 1, 0, 1, {1500}, {3}, 0, 1},
    {"2D blk 2 pitch 6 long", 2, 0, 1, {900}, {6}, 0, 2},
    {"2D blk 4 pitch 8 long", 4, 4, 1, {700}, {8}, 0, 4},
    {"2D blk 8 pitch 24 long", 8, 8, 1, {600}, {24}, 0, 8},
    {"2D blk 16 pitch 48 long", 16, 16, 1, {400}, {48}, 0, 16},
    {"3D blk 8", 8, 8, 2, {5, 4}, {40, 256}, 0, 8},
    {"3D blk 3", 3, 1, 2, {4, 3}, {7, 50}, 0, 1},
    {"4D blk 16", 16, 0, 3, {3, 2, 2}, {32, 128, 512}, 0, 16},
    {"5D blk 8", 8, 0, 4, {2, 2, 2, 2}, {16, 40, 104, 304}, 0, 8},
    {"dense inner dim (flattens)", 4, 0, 2, {8, 3}, {4, 64}, 0, 16},
};
#define CU_NCASES ((int)(sizeof cu_cases / sizeof cu_cases[0]))

/* Bytes of one element from the buffer start to one past its last byte. */
static inline long long cu_case_hi(const cu_case_t *c)
{
    long long hi = c->start + c->blk;
    for (int d = 0; d < c->ndims; d++) hi += (c->counts[d] - 1) * c->strides[d];
    return hi;
}

static inline long long cu_case_size(const cu_case_t *c)
{
    long long s = c->blk;
    for (int d = 0; d < c->ndims; d++) s *= c->counts[d];
    return s;
}

static inline long long cu_case_extent(const cu_case_t *c)
{
    return c->contig ? c->blk : (cu_case_hi(c) + 15) / 16 * 16 + 16;
}

/* Bytes a buffer holding `count` elements needs. */
static inline long long cu_case_span(const cu_case_t *c, int count)
{
    return (count - 1) * cu_case_extent(c) + cu_case_hi(c);
}

static inline int cu_case_mpi_type(const cu_case_t *c, MPI_Datatype *out)
{
    MPI_Datatype t, u;
    MPI_Aint disp = (MPI_Aint)c->start;
    int rc;
    if (c->contig) {
        rc = MPI_Type_create_hindexed_block(1, (int)c->blk, &disp, MPI_BYTE, out);
        return rc != MPI_SUCCESS ? rc : MPI_Type_commit(out);
    }
    if (c->ndims == 0) rc = MPI_Type_contiguous((int)c->blk, MPI_BYTE, &t);
    else rc = MPI_Type_create_hvector((int)c->counts[0], (int)c->blk, (MPI_Aint)c->strides[0], MPI_BYTE, &t);
    for (int d = 1; d < c->ndims && rc == MPI_SUCCESS; d++) {
        rc = MPI_Type_create_hvector((int)c->counts[d], 1, (MPI_Aint)c->strides[d], t, &u);
        MPI_Type_free(&t);
        t = u;
    }
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Type_create_hindexed_block(1, 1, &disp, t, &u);
    MPI_Type_free(&t);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Type_create_resized(u, 0, (MPI_Aint)cu_case_extent(c), out);
    MPI_Type_free(&u);
    return rc != MPI_SUCCESS ? rc : MPI_Type_commit(out);
}

/* The canonical analysis the engine would produce (no blob). */
static inline void cu_case_analysis(const cu_case_t *c, mpiacc_pack_type_t *t)
{
    memset(t, 0, sizeof *t);
    t->refcount = 1;
    t->size = cu_case_size(c);
    t->extent = cu_case_extent(c);
    t->lb = c->contig ? c->start : 0;
    t->true_lb = c->start;
    t->true_ub = cu_case_hi(c);
    t->data_lb = c->start;
    t->data_ub = cu_case_hi(c);
    t->contiguous = c->contig;
    t->strided = !c->contig;
    t->ndims = c->ndims;
    t->start = c->start;
    t->blk = c->blk;
    for (int d = 0; d < c->ndims; d++) t->counts[d] = c->counts[d], t->strides[d] = c->strides[d];
    t->unit = c->blk;
}

#include "cu_pattern.h"

static inline void cu_fill(unsigned char *p, long long n, unsigned seed)
{
    for (long long i = 0; i < n; i++) p[i] = cu_pattern(i, seed);
}

/* Index of the first differing byte, or -1. */
static inline long long cu_diff(const unsigned char *a, const unsigned char *b, long long n)
{
    for (long long i = 0; i < n; i++)
        if (a[i] != b[i]) return i;
    return -1;
}

#endif
