/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ref_reduce: the host reference of the on-device reductions
 * (tests/common/ref_reduce.h) against MPICH: every pair it supports is
 * accepted by MPI_Reduce_local, and its fold over n = 1..4 sources equals,
 * bitwise, the chain acc = src0; MPI_Reduce_local(src_i, acc) for i = 1..n-1
 * (the order the IPC reduction promises), with signed zeros among the
 * floating-point data (MIN / MAX ties) and unaligned buffers.  One rank,
 * host memory only.  Seeded (MPIACC_TEST_SEED).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "ref_reduce.h"

static uint64_t rng;

static void against_mpich(void **state)
{
    ref_rd_type_t tab[REF_RD_MAXTYPES];
    int nt = ref_reduce_types(tab, REF_RD_MAXTYPES), bad = 0, pairs = 0, extra = 0;
    const long long counts[] = {1, 7, 1000};
    (void)state;
    for (int ti = 0; ti < nt; ti++) {
        const ref_rd_type_t *t = &tab[ti];
        int ts = 0;
        assert_int_equal(MPI_Type_size(t->t, &ts), MPI_SUCCESS);
        assert_int_equal(ts, t->size);
        for (int o = 0; o < REF_RD_NOPS; o++) {
            MPI_Op op = ref_reduce_op(o);
            unsigned char in[16] = {0}, io[16] = {0};
            int mpich_ok = MPI_Reduce_local(in, io, 1, t->t, op) == MPI_SUCCESS;
            if (!ref_reduce_supported(t->t, op)) {
                extra += mpich_ok;
                continue;
            }
            pairs++;
            if (!mpich_ok) {
                printf("FAIL %s %s: supported by the reference, refused by MPICH\n", t->name, ref_reduce_op_name(o));
                bad++;
                continue;
            }
            for (int ci = 0; ci < 3; ci++)
                for (int n = 1; n <= 4; n++) {
                    long long count = counts[ci], bytes = count * t->size;
                    int shift = (ci + n) % 3; /* unaligned buffers too */
                    unsigned char *src[4], *want = malloc((size_t)bytes), *got = malloc((size_t)bytes + 3);
                    const void *srcs[4];
                    for (int i = 0; i < n; i++) {
                        src[i] = malloc((size_t)bytes + 3);
                        ref_reduce_fill(t, src[i] + shift, count, mpiacc_test_rand(&rng));
                        srcs[i] = src[i] + shift;
                    }
                    memcpy(want, srcs[0], (size_t)bytes);
                    for (int i = 1; i < n; i++)
                        assert_int_equal(MPI_Reduce_local(srcs[i], want, (int)count, t->t, op), MPI_SUCCESS);
                    assert_int_equal(ref_reduce(t->t, op, srcs, n, count, got + (3 - shift)), 1);
                    if (memcmp(got + (3 - shift), want, (size_t)bytes) != 0) {
                        printf("FAIL %s %s count %lld n %d: the reference differs from MPI_Reduce_local\n", t->name,
                               ref_reduce_op_name(o), count, n);
                        bad++;
                    }
                    /* dst aliasing source 0 */
                    assert_int_equal(ref_reduce(t->t, op, srcs, n, count, src[0] + shift), 1);
                    if (memcmp(src[0] + shift, want, (size_t)bytes) != 0) {
                        printf("FAIL %s %s count %lld n %d: in place differs\n", t->name, ref_reduce_op_name(o),
                               count, n);
                        bad++;
                    }
                    for (int i = 0; i < n; i++) free(src[i]);
                    free(want), free(got);
                }
        }
    }
    printf("test_ref_reduce: %d (type, op) pairs checked against MPICH; %d more that MPICH accepts stay staged\n",
           pairs, extra);
    assert_int_equal(bad, 0);
    /* refusals: not predefined, not a basic type, not a supported operation */
    {
        MPI_Datatype dup, two;
        assert_int_equal(MPI_Type_dup(MPI_INT, &dup), MPI_SUCCESS);
        assert_int_equal(MPI_Type_contiguous(2, MPI_INT, &two), MPI_SUCCESS);
        assert_false(ref_reduce_supported(dup, MPI_SUM));
        assert_false(ref_reduce_supported(two, MPI_SUM));
        assert_false(ref_reduce_supported(MPI_LONG_DOUBLE, MPI_SUM));
        assert_false(ref_reduce_supported(MPI_C_FLOAT_COMPLEX, MPI_SUM));
        assert_false(ref_reduce_supported(MPI_2INT, MPI_MINLOC));
        assert_false(ref_reduce_supported(MPI_INT, MPI_MINLOC));
        assert_false(ref_reduce_supported(MPI_INT, MPI_REPLACE));
        assert_false(ref_reduce_supported(MPI_FLOAT, MPI_BAND));
        assert_false(ref_reduce_supported(MPI_C_BOOL, MPI_MAX));
        assert_false(ref_reduce_supported(MPI_BYTE, MPI_SUM));
        MPI_Type_free(&dup);
        MPI_Type_free(&two);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(against_mpich)};
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rng = mpiacc_test_seed();
    return mpiacc_test_end(MPIACC_TEST_RUN("ref_reduce", tests, NULL, NULL));
}
