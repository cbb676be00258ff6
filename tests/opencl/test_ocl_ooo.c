/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * Out-of-order completion through the public MPI API (3 ranks, MPI-ACC
 * Fig 7).  Two in-order queues A and B on rank 0: the kernel producing A's
 * data is held back by a user event, B's runs at once.  Rank 0 sends A's
 * buffer to rank 1 first, then B's to rank 2: B's operation must complete
 * first (MPI_Waitany, MPI_Waitsome, MPI_Testany) — an order, asserted
 * without any timing.  The receive side too: rank 2 receives two messages
 * into cl_mem buffers whose queues are A' (a held kernel still reading the
 * buffer) and B' (idle): the second receive completes first.
 */
#include "ocl_fixture.h"
#include "ocl_types.h"

#define N 4096
enum { TAG_A = 31, TAG_B = 32 };
static int rank;
static cl_command_queue qb; /* second in-order queue; A is fx.qin */

static cl_event user_event(void)
{
    cl_int e;
    cl_event g = clCreateUserEvent(fx.ctx, &e);
    assert_int_equal(e, CL_SUCCESS);
    return g;
}

static void check_ints(const int *v, int want)
{
    for (int i = 0; i < N; i++)
        if (v[i] != want) fail_msg("rank %d: element %d is %d, expected %d", rank, i, v[i], want);
}

/* The first completion reported on rank 0 for {A's send, B's send}, by the
 * completion call of `how` (0 Waitany, 1 Waitsome, 2 Testany); then the
 * rest once A's kernel is released. */
static void send_side(int how)
{
    int *v = malloc(N * sizeof *v), idx = -1, n = 0, idxs[2];
    if (rank == 0) {
        cl_event gate = user_event();
        cl_mem ma = fx_buf(N * sizeof *v, NULL), mb = fx_buf(N * sizeof *v, NULL);
        MPI_Datatype ta = cl_ints(N, fx.qin, NULL), tb = cl_ints(N, qb, NULL);
        MPI_Request r[2];
        int flag = 0;
        fx_fill(fx.qin, ma, N, 10 + how, 2000, gate, NULL); /* slow and held */
        fx_fill(qb, mb, N, 20 + how, 0, NULL, NULL);       /* fast */
        assert_int_equal(MPI_Isend(ma, 1, ta, 1, TAG_A, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(mb, 1, tb, 2, TAG_B, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
        switch (how) {
        case 0:
            assert_int_equal(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
            assert_int_equal(idx, 1);
            break;
        case 1:
            assert_int_equal(MPI_Waitsome(2, r, &n, idxs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            assert_int_equal(n, 1);
            assert_int_equal(idxs[0], 1);
            break;
        default:
            while (!flag) assert_int_equal(MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            assert_int_equal(idx, 1);
        }
        assert_int_equal(r[0] == MPI_REQUEST_NULL, 0); /* A still pending */
        clSetUserEventStatus(gate, CL_COMPLETE);
        assert_int_equal(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(idx, 0);
        clReleaseEvent(gate);
        clReleaseMemObject(ma);
        clReleaseMemObject(mb);
        MPI_Type_free(&ta);
        MPI_Type_free(&tb);
    } else {
        int a = rank == 1;
        assert_int_equal(MPI_Recv(v, N, MPI_INT, 0, a ? TAG_A : TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE), 0);
        check_ints(v, a ? 10 + how : 20 + how);
    }
    free(v);
}

static void send_waitany(void **state) { send_side(0); }
static void send_waitsome(void **state) { send_side(1); }
static void send_testany(void **state) { send_side(2); }

/* Receive side on rank 2: two messages from rank 0 (A then B); A's cl_mem
 * is still read by a held kernel on its queue, B's queue is idle. */
static void recv_side(void **state)
{
    int *v = malloc(N * sizeof *v), idx = -1;
    if (rank == 2) {
        cl_event gate = user_event();
        cl_mem ma, mb, out = fx_buf(N * sizeof *v, NULL);
        MPI_Datatype ta = cl_ints(N, fx.qin, NULL), tb = cl_ints(N, qb, NULL);
        MPI_Request r[2];
        for (int i = 0; i < N; i++) v[i] = 4;
        ma = fx_buf(N * sizeof *v, v);
        mb = fx_buf(N * sizeof *v, v);
        fx_copy(fx.qin, ma, out, N, 2000, gate, NULL);
        assert_int_equal(MPI_Irecv(ma, 1, ta, 0, TAG_A, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
        assert_int_equal(MPI_Irecv(mb, 1, tb, 0, TAG_B, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD); /* posted */
        assert_int_equal(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(idx, 1);
        clSetUserEventStatus(gate, CL_COMPLETE);
        assert_int_equal(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(idx, 0);
        fx_read(out, N * sizeof *v, v);
        check_ints(v, 4);
        fx_read(ma, N * sizeof *v, v);
        check_ints(v, 1);
        fx_read(mb, N * sizeof *v, v);
        check_ints(v, 2);
        clReleaseEvent(gate);
        clReleaseMemObject(ma);
        clReleaseMemObject(mb);
        clReleaseMemObject(out);
        MPI_Type_free(&ta);
        MPI_Type_free(&tb);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < N; i++) v[i] = 1;
            assert_int_equal(MPI_Send(v, N, MPI_INT, 2, TAG_A, MPI_COMM_WORLD), MPI_SUCCESS);
            for (int i = 0; i < N; i++) v[i] = 2;
            assert_int_equal(MPI_Send(v, N, MPI_INT, 2, TAG_B, MPI_COMM_WORLD), MPI_SUCCESS);
        }
    }
    free(v);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(send_waitany), cmocka_unit_test(send_waitsome), cmocka_unit_test(send_testany),
        cmocka_unit_test(recv_side),
    };
    int failed, size;
    cl_int e;
    fx_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) mpiacc_test_skip_all("test_ocl_ooo needs exactly 3 ranks");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    qb = clCreateCommandQueue(fx.ctx, fx.dev, 0, &e);
    failed = MPIACC_TEST_RUN("opencl_ooo", tests, NULL, NULL);
    clReleaseCommandQueue(qb);
    fx_fini();
    return failed ? 1 : 0;
}
