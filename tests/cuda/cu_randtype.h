/* cu_randtype.h: seeded random MPI datatypes for the CUDA tests (nested
 * contiguous / vector / hvector / indexed / struct / resized / subarray over
 * named types; non-negative displacements; small sizes). */
#ifndef CU_RANDTYPE_H_INCLUDED
#define CU_RANDTYPE_H_INCLUDED

#include "testutil.h"

static inline int cu_r(uint64_t *st, int n) { return (int)(mpiacc_test_rand(st) % (uint64_t)n); }

static inline int cu_is_named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    return comb == MPI_COMBINER_NAMED;
}

static inline MPI_Datatype cu_rand_named(uint64_t *st)
{
    static const MPI_Datatype named[] = {MPI_BYTE, MPI_CHAR, MPI_SHORT, MPI_INT, MPI_FLOAT, MPI_DOUBLE, MPI_INT64_T};
    return named[cu_r(st, (int)(sizeof named / sizeof named[0]))];
}

/* Uncommitted random type; free with MPI_Type_free unless cu_is_named. */
static inline MPI_Datatype cu_rand_type(uint64_t *st, int depth)
{
    MPI_Datatype in, out = MPI_DATATYPE_NULL;
    MPI_Aint lb, ext;
    if (depth <= 0) return cu_rand_named(st);
    in = cu_rand_type(st, depth - 1 - cu_r(st, 2));
    MPI_Type_get_extent(in, &lb, &ext);
    switch (cu_r(st, 7)) {
    case 0: MPI_Type_contiguous(1 + cu_r(st, 4), in, &out); break;
    case 1: {
        int bl = 1 + cu_r(st, 3);
        MPI_Type_vector(1 + cu_r(st, 4), bl, bl + cu_r(st, 3), in, &out);
        break;
    }
    case 2: {
        int bl = 1 + cu_r(st, 3);
        MPI_Type_create_hvector(1 + cu_r(st, 4), bl, bl * ext + cu_r(st, 17), in, &out);
        break;
    }
    case 3: {
        int n = 1 + cu_r(st, 4), bls[4], disp[4], at = cu_r(st, 3);
        for (int i = 0; i < n; i++) {
            bls[i] = 1 + cu_r(st, 3);
            disp[i] = at;
            at += bls[i] + cu_r(st, 3);
        }
        MPI_Type_indexed(n, bls, disp, in, &out);
        break;
    }
    case 4: {
        int bls[2] = {1 + cu_r(st, 2), 1 + cu_r(st, 3)};
        MPI_Datatype ts[2] = {in, cu_rand_named(st)};
        MPI_Aint d[2];
        d[0] = cu_r(st, 9);
        d[1] = d[0] + bls[0] * ext + cu_r(st, 9);
        MPI_Type_create_struct(2, bls, d, ts, &out);
        break;
    }
    case 5: MPI_Type_create_resized(in, lb, ext + cu_r(st, 9), &out); break;
    default: {
        int sizes[2] = {2 + cu_r(st, 4), 2 + cu_r(st, 4)}, sub[2], starts[2];
        for (int i = 0; i < 2; i++) {
            sub[i] = 1 + cu_r(st, sizes[i]);
            starts[i] = cu_r(st, sizes[i] - sub[i] + 1);
        }
        MPI_Type_create_subarray(2, sizes, sub, starts, cu_r(st, 2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, in, &out);
        break;
    }
    }
    if (!cu_is_named(in)) MPI_Type_free(&in);
    return out;
}

#endif
