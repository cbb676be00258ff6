/* SPDX-License-Identifier: BSD-3-Clause */
/* regress_types.h: the datatypes of issue 10's regressions, shared by the
 * CPU-path test (tests/pack/test_pack_regress.c) and the OpenCL one
 * (tests/opencl/test_ocl_pack.c).
 *
 *  - the darray that MPICH describes with true_lb 0 and true extent 48
 *    while its 16 bytes are [32, 48) (one dense block that does not start
 *    at true_lb), and hindexed_block types over it (the random corpus hit
 *    such a type with seed 4765764271299728489);
 *  - MPI_BYTE resized to an extent of 2^62: count >= 2 of it reaches past
 *    any address space, count >= 3 overflows 64-bit offsets.
 */
#ifndef MPIACC_REGRESS_TYPES_H_INCLUDED
#define MPIACC_REGRESS_TYPES_H_INCLUDED

#include <mpi.h>

/* One regression type: the committed datatype and, for `count` elements,
 * the buffer ranges its packed bytes come from, in packing order. */
typedef struct rg_type {
    const char *name;
    MPI_Datatype dt;
    int count;
    int nruns;
    MPI_Aint run_at[4], run_len[4];
    MPI_Aint span; /* bytes of buffer to allocate (all runs inside [0, span)) */
} rg_type_t;

#define RG_NTYPES 5

/* darray(4 procs, rank 0, 1 dim: gsize 1, CYCLIC(3), psize 4, Fortran) of
 * indexed(2, {1,1}, {4,5}, MPI_DOUBLE): MPI_Type_size 16, lb 0, extent 16,
 * bytes [32, 48). */
static MPI_Datatype rg_darray(void)
{
    MPI_Datatype idx, d;
    MPI_Type_indexed(2, (int[]){1, 1}, (int[]){4, 5}, MPI_DOUBLE, &idx);
    MPI_Type_create_darray(4, 0, 1, (int[]){1}, (int[]){MPI_DISTRIBUTE_CYCLIC}, (int[]){3}, (int[]){4},
                           MPI_ORDER_FORTRAN, idx, &d);
    MPI_Type_free(&idx);
    MPI_Type_commit(&d);
    return d;
}

static MPI_Datatype rg_hindexed_block(MPI_Datatype d, int n, const MPI_Aint *displs)
{
    MPI_Datatype h;
    MPI_Type_create_hindexed_block(n, 1, displs, d, &h);
    MPI_Type_commit(&h);
    return h;
}

/* The cases: the darray (1 and 3 elements: consecutive elements continue
 * the block), one hindexed_block element of it moved by 16 (bytes
 * [48, 64)), and two in reverse order ([96, 112) then [32, 48)). */
static void rg_make(rg_type_t out[RG_NTYPES])
{
    MPI_Datatype d = rg_darray(), d3;
    MPI_Type_dup(d, &d3);
    out[0] = (rg_type_t){"darray", d, 1, 1, {32}, {16}, 64};
    out[1] = (rg_type_t){"darray x3", d3, 3, 1, {32}, {48}, 96};
    out[2] = (rg_type_t){"hindexed_block(1, {16}) of darray", rg_hindexed_block(d, 1, (MPI_Aint[]){16}), 1, 1,
                         {48}, {16}, 80};
    out[3] = (rg_type_t){"hindexed_block(1, {16}) of darray x2",
                         rg_hindexed_block(d, 1, (MPI_Aint[]){16}), 2, 1, {48}, {32}, 96};
    out[4] = (rg_type_t){"hindexed_block(2, {64, 0}) of darray",
                         rg_hindexed_block(d, 2, (MPI_Aint[]){64, 0}), 1, 2, {96, 32}, {16, 16}, 128};
}

static void rg_free(rg_type_t t[RG_NTYPES])
{
    for (int i = 0; i < RG_NTYPES; i++) MPI_Type_free(&t[i].dt);
}

/* Expected packed bytes of t from buffer contents `buf` (returns the
 * number of bytes). */
static size_t rg_expected(const rg_type_t *t, const unsigned char *buf, unsigned char *out)
{
    size_t n = 0;
    for (int r = 0; r < t->nruns; r++)
        for (MPI_Aint i = 0; i < t->run_len[r]; i++) out[n++] = buf[t->run_at[r] + i];
    return n;
}

/* Whether buffer byte i belongs to one of t's runs. */
static int rg_touched(const rg_type_t *t, MPI_Aint i)
{
    for (int r = 0; r < t->nruns; r++)
        if (i >= t->run_at[r] && i < t->run_at[r] + t->run_len[r]) return 1;
    return 0;
}

/* MPI_BYTE with extent 2^62 (committed). */
static MPI_Datatype rg_huge_extent(void)
{
    MPI_Datatype r;
    MPI_Type_create_resized(MPI_BYTE, 0, (MPI_Aint)1 << 62, &r);
    MPI_Type_commit(&r);
    return r;
}

#endif
