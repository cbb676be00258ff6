/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * Regressions of issue 10 through the host paths: the engine's reference
 * pack/unpack and the CPU backend reached through the public MPI API (a
 * datatype tagged MPIACC_BUF_HOST with an MPIACC_EVENT flag goes through
 * mpiacc's request pool and the CPU backend).
 *
 *  - a darray whose one dense block starts at byte 32 while MPICH reports
 *    true_lb 0 (and hindexed_block types over it): the bytes moved must be
 *    exactly the type map's, [32, 48) for one element;
 *  - MPI_BYTE resized to an extent of 2^62 with counts 2, 3 and 5: every
 *    call fails cleanly (MPI_ERR_COUNT or MPI_ERR_BUFFER, a message without
 *    negative offsets) instead of crashing.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "pack/pack.h"
#include "regress_types.h"


static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 29u + seed * 101u + 1u);
}

/* The engine's analysis and its host reference pack/unpack. */
static void darray_engine(void **state)
{
    rg_type_t ts[RG_NTYPES];
    MPI_Count size, lb, ext;
    (void)state;
    rg_make(ts);
    MPI_Type_size_c(ts[0].dt, &size);
    MPI_Type_get_extent_c(ts[0].dt, &lb, &ext);
    assert_int_equal(size, 16);
    assert_int_equal(ext, 16);
    for (int i = 0; i < RG_NTYPES; i++) {
        const rg_type_t *r = &ts[i];
        mpiacc_pack_type_t *t = NULL;
        unsigned char buf[256], want[256], got[256], mpi[256], back[256];
        size_t n;
        int pos = 0;
        fill(buf, sizeof buf, (unsigned)i);
        n = rg_expected(r, buf, want);
        assert_int_equal(mpiacc_pack_type_get(r->dt, &t), MPI_SUCCESS);
        assert_int_equal(t->size * r->count, (MPI_Count)n);
        assert_int_equal(mpiacc_pack_cpu_pack(t, buf, r->count, 0, (MPI_Count)n, got), MPI_SUCCESS);
        assert_memory_equal(got, want, n);
        assert_int_equal(MPI_Pack(buf, r->count, r->dt, mpi, sizeof mpi, &pos, MPI_COMM_SELF), MPI_SUCCESS);
        assert_int_equal(pos, (int)n);
        assert_memory_equal(mpi, want, n); /* MPICH agrees on the bytes */
        memset(back, 0, sizeof back);
        assert_int_equal(mpiacc_pack_cpu_unpack(t, back, r->count, 0, (MPI_Count)n, want), MPI_SUCCESS);
        for (int k = 0; k < (int)sizeof back; k++)
            if (back[k] != (rg_touched(r, k) ? buf[k] : 0)) fail_msg("%s: unpack wrote byte %d wrongly", r->name, k);
        mpiacc_pack_type_release(t);
    }
    rg_free(ts);
}

/* MPI_Pack / MPI_Unpack and self send/receive through the CPU backend. */
static void darray_cpu_backend(void **state)
{
    rg_type_t ts[RG_NTYPES];
    (void)state;
    rg_make(ts);
    for (int i = 0; i < RG_NTYPES; i++) {
        const rg_type_t *r = &ts[i];
        MPI_Datatype h = mpiacc_test_host_tagged(r->dt, NULL);
        unsigned char buf[256], want[256], got[256], back[256];
        size_t n;
        int pos = 0;
        MPI_Request req;
        fill(buf, sizeof buf, 7u + (unsigned)i);
        n = rg_expected(r, buf, want);
        /* MPI_Pack / MPI_Unpack (host packed buffer) */
        memset(got, 0xee, sizeof got);
        assert_int_equal(MPI_Pack(buf, r->count, h, got, sizeof got, &pos, MPI_COMM_SELF), MPI_SUCCESS);
        assert_int_equal(pos, (int)n);
        assert_memory_equal(got, want, n);
        memset(back, 0, sizeof back);
        pos = 0;
        assert_int_equal(MPI_Unpack(want, (int)n, &pos, back, r->count, h, MPI_COMM_SELF), MPI_SUCCESS);
        for (int k = 0; k < (int)sizeof back; k++)
            if (back[k] != (rg_touched(r, k) ? buf[k] : 0))
                fail_msg("%s: MPI_Unpack wrote byte %d wrongly", r->name, k);
        /* send with the tagged type, receive plain bytes */
        assert_int_equal(mpiacc_test_self_bytes(buf, r->count, h, 10 + i, got, sizeof got), (int)n);
        assert_memory_equal(got, want, n);
        /* receive with the tagged type */
        memset(back, 0, sizeof back);
        assert_int_equal(MPI_Irecv(back, r->count, h, 0, 20 + i, MPI_COMM_SELF, &req), MPI_SUCCESS);
        assert_int_equal(MPI_Send(want, (int)n, MPI_BYTE, 0, 20 + i, MPI_COMM_SELF), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int k = 0; k < (int)sizeof back; k++)
            if (back[k] != (rg_touched(r, k) ? buf[k] : 0)) fail_msg("%s: receive wrote byte %d wrongly", r->name, k);
        MPI_Type_free(&h);
    }
    rg_free(ts);
}

/* err must be an MPI_ERR_COUNT or MPI_ERR_BUFFER error whose message shows
 * no negative number. */
static void expect_clean_failure(int err, const char *what, int count)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;
    if (err == MPI_SUCCESS) fail_msg("%s with count %d of a 2^62-extent type succeeded", what, count);
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
    printf("  %s, count %d: %s\n", what, count, msg);
    if (cls != MPI_ERR_COUNT && cls != MPI_ERR_BUFFER)
        fail_msg("%s, count %d: error class %d, expected MPI_ERR_COUNT or MPI_ERR_BUFFER", what, count, cls);
    for (int i = 0; i + 1 < len; i++)
        if (msg[i] == '-' && isdigit((unsigned char)msg[i + 1]))
            fail_msg("%s, count %d: negative number in the message: %s", what, count, msg);
}

static void huge_extent(void **state)
{
    MPI_Datatype r = rg_huge_extent(), h = mpiacc_test_host_tagged(r, NULL);
    mpiacc_pack_type_t *t = NULL;
    unsigned char buf[64] = {42}, out[64] = {0};
    const int counts[] = {2, 3, 5};
    int pos;
    MPI_Request req;
    (void)state;
    /* the engine's host reference */
    assert_int_equal(mpiacc_pack_type_get(r, &t), MPI_SUCCESS);
    for (int i = 0; i < 3; i++) {
        expect_clean_failure(mpiacc_pack_cpu_pack(t, buf, counts[i], 0, counts[i], out), "engine pack", counts[i]);
        expect_clean_failure(mpiacc_pack_cpu_unpack(t, out, counts[i], 0, counts[i], buf), "engine unpack",
                             counts[i]);
    }
    mpiacc_pack_type_release(t);
    /* the CPU backend through the MPI API: each call fails at once */
    for (int i = 0; i < 3; i++) {
        req = MPI_REQUEST_NULL;
        expect_clean_failure(MPI_Isend(buf, counts[i], h, 0, 1, MPI_COMM_SELF, &req), "MPI_Isend", counts[i]);
        assert_true(req == MPI_REQUEST_NULL);
        expect_clean_failure(MPI_Send(buf, counts[i], h, 0, 1, MPI_COMM_SELF), "MPI_Send", counts[i]);
        expect_clean_failure(MPI_Irecv(buf, counts[i], h, 0, 1, MPI_COMM_SELF, &req), "MPI_Irecv", counts[i]);
        assert_true(req == MPI_REQUEST_NULL);
        pos = 0;
        expect_clean_failure(MPI_Pack(buf, counts[i], h, out, sizeof out, &pos, MPI_COMM_SELF), "MPI_Pack",
                             counts[i]);
        assert_int_equal(pos, 0);
        expect_clean_failure(MPI_Unpack(out, sizeof out, &pos, buf, counts[i], h, MPI_COMM_SELF), "MPI_Unpack",
                             counts[i]);
    }
    /* one element is an ordinary byte */
    out[0] = 0;
    assert_int_equal(MPI_Sendrecv(buf, 1, h, 0, 2, out, 1, h, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
    assert_int_equal(out[0], 42);
    MPI_Type_free(&h);
    MPI_Type_free(&r);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(darray_engine), cmocka_unit_test(darray_cpu_backend), cmocka_unit_test(huge_extent),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return mpiacc_test_end(MPIACC_TEST_RUN("pack_regress", tests, NULL, NULL));
}
