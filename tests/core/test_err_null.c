/* SPDX-License-Identifier: BSD-3-Clause */
/* Issue 10 item 5: null handles and MPI_PROC_NULL behave exactly as in
 * MPICH once datatypes carry mpiacc attributes: MPICH's recvnull pattern
 * (MPI_DATATYPE_NULL, count 0, MPI_PROC_NULL), completion calls over
 * MPI_REQUEST_NULL while an mpiacc operation is alive, and a tagged
 * datatype to MPI_PROC_NULL (no buffer touched, no backend needed).
 * One rank; no device needed. */
#include <stdatomic.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "reqpool/reqpool.h"

static void proc_null_status(const MPI_Status *st)
{
    int n = -1;
    assert_int_equal(st->MPI_SOURCE, MPI_PROC_NULL);
    assert_int_equal(st->MPI_TAG, MPI_ANY_TAG);
    MPI_Get_count(st, MPI_INT, &n);
    assert_int_equal(n, 0);
}

static void recvnull_after_tagging(void **s)
{
    MPI_Datatype t;
    MPI_Request r;
    MPI_Status st;
    int flag = 0;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    proc_null_status(&st);
    assert_int_equal(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
    proc_null_status(&st);
    assert_int_equal(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    assert_int_equal(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, NULL, 0, MPI_DATATYPE_NULL,
                                  MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    proc_null_status(&st);
    /* a tagged type to MPI_PROC_NULL: no data, whatever the buffer */
    assert_int_equal(MPI_Send((void *)0x1234, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Recv((void *)0x1234, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    proc_null_status(&st);
    MPI_Type_free(&t);
}

/* Completion calls over null requests while a pooled (gated) operation is
 * alive, so the calls take mpiacc's path. */
static void null_requests_with_live_ops(void **s)
{
    atomic_int gate = 0;
    MPI_Datatype t;
    MPI_Request live, r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[3];
    int buf[4] = {1, 2, 3, 4}, got[4], flag = -1, idx = -2, out = -3, ind[3];
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&gate);
    assert_int_equal(MPI_Isend(buf, 1, t, 0, 9, MPI_COMM_SELF, &live), MPI_SUCCESS);
    assert_int_not_equal(atomic_load(&mpiacc_rp_live), 0);
    assert_int_equal(MPI_Waitall(3, r, st), MPI_SUCCESS);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(st[i].MPI_SOURCE, MPI_ANY_SOURCE);
        assert_int_equal(st[i].MPI_TAG, MPI_ANY_TAG);
    }
    assert_int_equal(MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(MPI_Waitany(3, r, &idx, &st[0]), MPI_SUCCESS);
    assert_int_equal(idx, MPI_UNDEFINED);
    assert_int_equal(MPI_Testany(3, r, &idx, &flag, &st[0]), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(idx, MPI_UNDEFINED);
    assert_int_equal(MPI_Waitsome(3, r, &out, ind, st), MPI_SUCCESS);
    assert_int_equal(out, MPI_UNDEFINED);
    assert_int_equal(MPI_Testsome(3, r, &out, ind, st), MPI_SUCCESS);
    assert_int_equal(out, MPI_UNDEFINED);
    assert_int_equal(MPI_Wait(&r[0], &st[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Test(&r[0], &flag, &st[0]), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st[0]), MPI_SUCCESS);
    assert_true(flag);
    /* the live op is still fine */
    atomic_store(&gate, 1);
    assert_int_equal(MPI_Recv(got, 4, MPI_INT, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&live, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_memory_equal(buf, got, sizeof buf);
    assert_int_equal(atomic_load(&mpiacc_rp_live), 0);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recvnull_after_tagging), cmocka_unit_test(null_requests_with_live_ops),
    };
    MPI_Init(&argc, &argv);
    return mpiacc_test_end(MPIACC_TEST_RUN("err_null", tests, NULL, NULL));
}
