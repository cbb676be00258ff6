/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * No silent stale data (issue 30): a kernel is still to write a cl_mem (it
 * waits behind a user event, so it has certainly not run) when the
 * application sends the buffer.  2 ranks, MPI_ERRORS_RETURN.
 *  - no MPIACC_CL_QUEUE (and no MPIACC_EVENT): every call is refused with
 *    MPI_ERR_ARG and a message naming MPIACC_CL_QUEUE and MPIACC_QUEUE_NONE
 *    -- sends, receives, MPI_Pack, a collective -- and nothing is sent;
 *  - MPIACC_QUEUE_NONE: the application says the data is complete, and
 *    mpiacc waits for nothing: the bytes sent are the buffer's bytes at the
 *    call (here the old ones, since the kernel is still gated); after the
 *    gate opens and clFinish, the same send carries the kernel's bytes;
 *  - the kernel's queue as MPIACC_CL_QUEUE: the send waits for the kernel
 *    and carries its bytes (the gate opens after the call).
 * The old default ("no queue: no dependency") delivered the old bytes of
 * the first case silently.
 */
#include "ocl_fixture.h"
#include "ocl_types.h"
#include "reqpool/reqpool.h"

#define N 1024
enum { OLD = -1, NEW = 7 };
static int rank, peer;

static void expect_refused(int err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (fx_class(err) != MPI_ERR_ARG) fail_msg("%s: error class %d, expected MPI_ERR_ARG", what, fx_class(err));
    MPI_Error_string(err, msg, &len);
    if (!strstr(msg, "MPIACC_CL_QUEUE") || !strstr(msg, "MPIACC_QUEUE_NONE"))
        fail_msg("%s: the message does not say what to set: \"%s\"", what, msg);
    if (mpiacc_rp_pending() != 0) fail_msg("%s left an operation pending", what);
}

/* rank 0: a cl_mem of OLD ints and a fill(NEW) kernel on fx.qin behind a
 * closed gate. */
static cl_mem gated_buffer(cl_event *gate)
{
    int v[N];
    cl_int e;
    cl_mem m;
    for (int i = 0; i < N; i++) v[i] = OLD;
    m = fx_buf(sizeof v, v);
    *gate = clCreateUserEvent(fx.ctx, &e);
    assert_int_equal(e, CL_SUCCESS);
    fx_fill(fx.qin, m, N, NEW, 0, *gate, NULL);
    return m;
}

/* rank 1: receives N ints into host memory and checks they are all `want`. */
static void recv_all(int tag, int want, const char *what)
{
    int v[N];
    assert_int_equal(MPI_Recv(v, N, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < N; i++)
        if (v[i] != want) fail_msg("%s: int %d received is %d, expected %d", what, i, v[i], want);
}

static void no_queue_is_refused(void **state)
{
    MPI_Datatype t = cl_type_noqueue(MPI_INT);
    cl_event gate;
    cl_mem m = gated_buffer(&gate);
    MPI_Request r = MPI_REQUEST_NULL;
    char packed[4 * N];
    int pos = 0, flag = 0;
    MPI_Status st;
    if (rank == 0) {
        expect_refused(MPI_Send(m, N, t, peer, 1, MPI_COMM_WORLD), "MPI_Send");
        expect_refused(MPI_Isend(m, N, t, peer, 1, MPI_COMM_WORLD, &r), "MPI_Isend");
        assert_int_equal(r, MPI_REQUEST_NULL);
        expect_refused(MPI_Pack(m, N, t, packed, sizeof packed, &pos, MPI_COMM_WORLD), "MPI_Pack");
        assert_int_equal(pos, 0);
    } else {
        expect_refused(MPI_Recv(m, N, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        expect_refused(MPI_Irecv(m, N, t, peer, 1, MPI_COMM_WORLD, &r), "MPI_Irecv");
    }
    /* a collective: refused on both ranks at the call */
    expect_refused(MPI_Bcast(m, N, t, 0, MPI_COMM_WORLD), "MPI_Bcast");
    /* an empty message needs no dependency */
    if (rank == 0) assert_int_equal(MPI_Send(m, 0, t, peer, 2, MPI_COMM_WORLD), MPI_SUCCESS);
    else assert_int_equal(MPI_Recv(m, 0, t, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    /* nothing was sent */
    MPI_Barrier(MPI_COMM_WORLD);
    assert_int_equal(MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
    assert_false(flag);
    clSetUserEventStatus(gate, CL_COMPLETE);
    clFinish(fx.qin);
    clReleaseEvent(gate);
    clReleaseMemObject(m);
    MPI_Type_free(&t);
}

static void queue_none_sends_what_is_there(void **state)
{
    MPI_Datatype t = cl_type(MPI_INT, NULL, NULL); /* MPIACC_QUEUE_NONE */
    void *q = NULL;
    int flag = 0;
    cl_event gate;
    cl_mem m = gated_buffer(&gate);
    assert_int_equal(MPI_Type_get_attr(t, MPIACC_CL_QUEUE, &q, &flag), MPI_SUCCESS);
    assert_true(flag && q == MPIACC_QUEUE_NONE);
    if (rank == 0) {
        /* the application said "complete": mpiacc waits for nothing */
        assert_int_equal(MPI_Send(m, N, t, peer, 3, MPI_COMM_WORLD), MPI_SUCCESS);
        clSetUserEventStatus(gate, CL_COMPLETE);
        clFinish(fx.qin);
        /* now it is */
        assert_int_equal(MPI_Send(m, N, t, peer, 4, MPI_COMM_WORLD), MPI_SUCCESS);
    } else {
        recv_all(3, OLD, "MPIACC_QUEUE_NONE before the kernel ran");
        recv_all(4, NEW, "MPIACC_QUEUE_NONE after clFinish");
        clSetUserEventStatus(gate, CL_COMPLETE);
        clFinish(fx.qin);
    }
    /* a receive with MPIACC_QUEUE_NONE: the bytes land in the cl_mem */
    if (rank == 0) {
        int v[N];
        for (int i = 0; i < N; i++) v[i] = 100 + i;
        assert_int_equal(MPI_Send(v, N, MPI_INT, peer, 5, MPI_COMM_WORLD), MPI_SUCCESS);
    } else {
        int v[N];
        assert_int_equal(MPI_Recv(m, N, t, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        fx_read(m, sizeof v, v);
        for (int i = 0; i < N; i++) assert_int_equal(v[i], 100 + i);
    }
    clReleaseEvent(gate);
    clReleaseMemObject(m);
    MPI_Type_free(&t);
}

static void queue_gives_the_kernels_bytes(void **state)
{
    MPI_Datatype t = cl_type(MPI_INT, fx.qin, NULL);
    cl_event gate;
    cl_mem m = gated_buffer(&gate);
    MPI_Request r;
    if (rank == 0) {
        int flag = 0;
        assert_int_equal(MPI_Isend(m, N, t, peer, 6, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        /* the send waits for the kernel, which waits for the gate */
        for (int i = 0; i < 20; i++) assert_int_equal(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_false(flag);
        clSetUserEventStatus(gate, CL_COMPLETE);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else {
        recv_all(6, NEW, "MPIACC_CL_QUEUE = the kernel's queue");
        clSetUserEventStatus(gate, CL_COMPLETE);
    }
    clFinish(fx.qin);
    clReleaseEvent(gate);
    clReleaseMemObject(m);
    MPI_Type_free(&t);
}

static int meet(void **state)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(no_queue_is_refused, meet),
        cmocka_unit_test_setup(queue_none_sends_what_is_there, meet),
        cmocka_unit_test_setup(queue_gives_the_kernels_bytes, meet),
    };
    fx_init_pair(&argc, &argv, &rank, &peer);
    return fx_end(MPIACC_TEST_RUN("opencl_ready", tests, NULL, NULL));
}
