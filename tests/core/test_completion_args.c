/* SPDX-License-Identifier: BSD-3-Clause */
/* The completion wrappers (src/interpose/completion.c) while an mpiacc
 * operation is alive:
 *  - a call MPI itself fails (an invalid request handle) returns MPI's
 *    error and reads none of the outputs MPI did not write (outcount,
 *    indices, flag hold garbage then);
 *  - MPI_Waitall / Waitsome over a user generalized request that fails and
 *    an mpiacc operation that fails: one MPI_ERR_IN_STATUS (MPI's), each
 *    status with its own request's error;
 *  - a device-tagged MPI_Pack / MPI_Unpack with a NULL position is an
 *    MPI_ERR_ARG error, not a crash.
 * One rank; pooled host operations (MPIACC_BUF_HOST + MPIACC_EVENT flag)
 * stand in for device ones. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "reqpool/reqpool.h"

static int handled, handled_class;

static void record(MPI_Comm *c, int *code, ...)
{
    (void)c;
    handled++;
    MPI_Error_class(*code, &handled_class);
}

static int cls(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

/* A gated pooled send to self (complete after *gate is set). */
static MPI_Datatype gated_type(atomic_int *gate)
{
    MPI_Datatype t;
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(t, MPIACC_EVENT, (void *)gate);
    return t;
}

static MPI_Request bad_request(void)
{
    MPI_Request r;
    memset(&r, 0x5a, sizeof r); /* no request MPI ever made */
    return r;
}

static MPI_Errhandler recorder;

static void set_handlers(MPI_Errhandler eh)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
}

/* MPI fails the call (an invalid handle next to a live operation).  With
 * MPI_ERRORS_RETURN MPI returns its error; after a user handler that
 * returns, MPICH returns MPI_SUCCESS, outputs still unwritten. */
static void pmpi_error_outputs_untouched(void **s)
{
    atomic_int gate = 0;
    MPI_Datatype t = gated_type(&gate);
    MPI_Request r[2];
    MPI_Status st[2];
    int buf[4] = {1, 2, 3, 4}, got[4], out, ind[2], flag, idx;
    assert_int_equal(MPI_Isend(buf, 1, t, 0, 3, MPI_COMM_SELF, &r[0]), MPI_SUCCESS);
    r[1] = bad_request();
    for (int round = 0; round < 4; round++) {
        int user = round >= 2, rc[4];
        set_handlers(user ? recorder : MPI_ERRORS_RETURN);
        /* garbage outputs: a huge count, indices far outside the array */
        out = 1 << 30;
        ind[0] = ind[1] = 1 << 30;
        flag = 1;
        idx = 1 << 30;
        handled = 0;
        rc[0] = round & 1 ? MPI_Testsome(2, r, &out, ind, st) : MPI_Waitsome(2, r, &out, ind, st);
        rc[1] = MPI_Testall(2, r, &flag, st);
        rc[2] = MPI_Waitall(2, r, st);
        rc[3] = MPI_Testany(2, r, &idx, &flag, &st[0]);
        for (int i = 0; i < 4; i++) {
            if (user) assert_int_equal(rc[i], MPI_SUCCESS);
            else assert_int_equal(cls(rc[i]), MPI_ERR_REQUEST);
        }
        assert_int_equal(handled, user ? 4 : 0); /* MPI's own errors, raised once each */
        if (user) assert_int_equal(handled_class, MPI_ERR_REQUEST);
        assert_int_equal(out, 1 << 30);
        assert_int_equal(flag, 1);
    }
    set_handlers(recorder);
    assert_int_not_equal(r[0], MPI_REQUEST_NULL);
    atomic_store(&gate, 1);
    assert_int_equal(MPI_Recv(got, 4, MPI_INT, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Type_free(&t);
}

/* A generalized request of the application's that fails with MPI_ERR_OTHER. */
static int user_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_ERR_OTHER;
}
static int user_free(void *extra) { (void)extra; return MPI_SUCCESS; }
static int user_cancel(void *extra, int done) { (void)extra; (void)done; return MPI_SUCCESS; }

static MPI_Request user_failed(void)
{
    MPI_Request r;
    assert_int_equal(MPI_Grequest_start(user_query, user_free, user_cancel, NULL, &r), MPI_SUCCESS);
    assert_int_equal(MPI_Grequest_complete(r), MPI_SUCCESS);
    return r;
}

static void both_fail_in_status(void **s)
{
    atomic_int gate = 0; /* set to -1 after each call: fails the operation */
    MPI_Datatype t = gated_type(&gate);
    MPI_Request r[2];
    MPI_Status st[2];
    int buf[4] = {0}, out = 0, ind[2] = {-1, -1}, rc;

    /* MPICH completes the requests of MPI_Waitall in order and leaves those
     * after a failed one pending (MPI_ERR_PENDING): ours first. */
    assert_int_equal(MPI_Isend(buf, 1, t, 0, 4, MPI_COMM_SELF, &r[0]), MPI_SUCCESS);
    r[1] = user_failed();
    atomic_store(&gate, -1);
    st[0].MPI_ERROR = st[1].MPI_ERROR = -12345;
    set_handlers(MPI_ERRORS_RETURN); /* MPICH returns MPI_SUCCESS after a user handler */
    rc = MPI_Waitall(2, r, st);
    assert_int_equal(cls(rc), MPI_ERR_IN_STATUS);
    assert_int_equal(cls(st[0].MPI_ERROR), MPI_ERR_OTHER);
    assert_int_equal(cls(st[1].MPI_ERROR), MPI_ERR_OTHER);
    assert_int_not_equal(st[0].MPI_ERROR, MPI_ERR_OTHER); /* mpiacc's own code, with its message */
    assert_int_equal(r[0], MPI_REQUEST_NULL);
    assert_int_equal(r[1], MPI_REQUEST_NULL);

    r[0] = user_failed();
    atomic_store(&gate, 0);
    assert_int_equal(MPI_Isend(buf, 1, t, 0, 5, MPI_COMM_SELF, &r[1]), MPI_SUCCESS);
    atomic_store(&gate, -1);
    while (out < 2) {
        int o = 0;
        rc = MPI_Waitsome(2, r, &o, ind + out, st + out);
        assert_int_equal(cls(rc), MPI_ERR_IN_STATUS);
        out += o;
    }
    /* ours (index 1) carries its error; MPICH itself leaves MPI_SUCCESS in
     * the status of a generalized request that failed in MPI_Waitsome */
    assert_true(ind[0] != ind[1]);
    for (int k = 0; k < 2; k++)
        if (ind[k] == 1) assert_int_equal(cls(st[k].MPI_ERROR), MPI_ERR_OTHER);
    set_handlers(recorder);
    assert_int_equal(atomic_load(&mpiacc_rp_live), 0);
    MPI_Type_free(&t);
}

static void pack_null_position(void **s)
{
    MPI_Datatype t;
    char in[64], packed[64];
    MPI_Count cpos = 0;
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    handled = 0;
    assert_int_equal(cls(MPI_Pack(in, 1, t, packed, sizeof packed, NULL, MPI_COMM_WORLD)), MPI_ERR_ARG);
    assert_int_equal(cls(MPI_Unpack(packed, sizeof packed, NULL, in, 1, t, MPI_COMM_WORLD)), MPI_ERR_ARG);
    assert_int_equal(cls(MPI_Pack_c(in, 1, t, packed, sizeof packed, NULL, MPI_COMM_WORLD)), MPI_ERR_ARG);
    assert_int_equal(cls(MPI_Unpack_c(packed, sizeof packed, NULL, in, 1, t, MPI_COMM_WORLD)), MPI_ERR_ARG);
    assert_int_equal(handled, 4);
    assert_int_equal(cpos, 0);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    int failed;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pmpi_error_outputs_untouched), cmocka_unit_test(both_fail_in_status),
        cmocka_unit_test(pack_null_position),
    };
    MPIACC_Stats st = {.size = sizeof st};
    /* MPIACC_Get_stats: "callable at any time" */
    if (MPIACC_Get_stats(&st) != MPI_SUCCESS || st.version != MPIACC_STATS_VERSION) return 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_create_errhandler(record, &recorder);
    set_handlers(recorder);
    failed = MPIACC_TEST_RUN("completion_args", tests, NULL, NULL);
    MPI_Errhandler_free(&recorder);
    MPI_Finalize();
    st.version = 0;
    if (MPIACC_Get_stats(&st) != MPI_SUCCESS || st.version != MPIACC_STATS_VERSION || st.pending != 0 ||
        st.failed != 2) { /* the two operations both_fail_in_status fails */
        fprintf(stderr, "after MPI_Finalize: version %d pending %llu failed %llu\n", st.version, st.pending, st.failed);
        return 1;
    }
    return failed ? 1 : 0;
}
