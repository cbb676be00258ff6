/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * Dependencies and ordering of cl_mem messages through the public MPI API
 * (2 ranks).  Kernels are held back by user events (clCreateUserEvent) that
 * the test opens itself, so every assertion is about order, never about
 * durations:
 *  - implicit sync, send: a slow kernel writing the send buffer, enqueued on
 *    the in-order MPIACC_CL_QUEUE just before MPI_Isend (no clFinish): the
 *    receiver gets its values, and nothing completes while it is held;
 *  - implicit sync, receive: a slow kernel still reading the receive buffer,
 *    enqueued before MPI_Irecv, reads the old bytes (the unpack waits);
 *  - out-of-order queue: no implied dependency, unless MPIACC_EVENT names it;
 *  - the MPI-ACC Fig 5 loop (Type_dup, attributes, Isend, Type_free; Waitall);
 *  - non-overtaking: a send held by its dependency, then a ready cl_mem send
 *    (or a plain host send) with the same tag: the first receive gets the
 *    first message.
 */
#include "ocl_fixture.h"
#include "ocl_types.h"

#define N 4096 /* ints per message */
#define SPIN 2000
enum { TAG_DATA = 21, TAG_TOKEN = 22 };
static int rank, peer;

static void token_send(void) { assert_int_equal(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_TOKEN, MPI_COMM_WORLD), 0); }
static void token_recv(void)
{
    assert_int_equal(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE), 0);
}

static void check_ints(const int *v, int n, int want)
{
    for (int i = 0; i < n; i++)
        if (v[i] != want) fail_msg("rank %d: element %d is %d, expected %d", rank, i, v[i], want);
}

static cl_event user_event(void)
{
    cl_int e;
    cl_event g = clCreateUserEvent(fx.ctx, &e);
    assert_int_equal(e, CL_SUCCESS);
    return g;
}

static void open_gate(cl_event g)
{
    assert_int_equal(clSetUserEventStatus(g, CL_COMPLETE), CL_SUCCESS);
}

/* Send side: the kernel producing the data is enqueued (held, then slow)
 * right before MPI_Isend; the receiver sees its values. */
static void implicit_sync_send(void **state)
{
    MPI_Datatype t = cl_ints(N, fx.qin, NULL);
    int *v = calloc(N, sizeof *v);
    MPI_Request r;
    if (rank == 0) {
        cl_mem m = fx_buf(N * sizeof *v, NULL);
        cl_event gate = user_event();
        fx_fill(fx.qin, m, N, 1, 0, NULL, NULL);
        fx_fill(fx.qin, m, N, 7, SPIN, gate, NULL); /* no clFinish */
        assert_int_equal(MPI_Isend(m, 1, t, 1, TAG_DATA, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        fx_req_stays_pending(&r, 0.1, "its dependency was held back");
        token_recv(); /* the receiver has seen nothing either */
        open_gate(gate);
        fx_req_wait(&r, MPI_STATUS_IGNORE);
        clReleaseEvent(gate);
        clReleaseMemObject(m);
    } else {
        assert_int_equal(MPI_Irecv(v, N, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        fx_req_stays_pending(&r, 0.1, "its dependency was held back");
        token_send();
        fx_req_wait(&r, MPI_STATUS_IGNORE);
        check_ints(v, N, 7);
    }
    free(v);
    MPI_Type_free(&t);
}

/* Receive side: a kernel reading the receive buffer, enqueued before
 * MPI_Irecv and held back, must read the old bytes: the unpack waits for
 * it even though the message has been matched (Ssend completed). */
static void implicit_sync_recv(void **state)
{
    MPI_Datatype t = cl_ints(N, fx.qin, NULL);
    int *v = malloc(N * sizeof *v);
    MPI_Request r;
    if (rank == 1) {
        cl_mem m, out;
        cl_event gate = user_event();
        for (int i = 0; i < N; i++) v[i] = 3;
        m = fx_buf(N * sizeof *v, v);
        out = fx_buf(N * sizeof *v, NULL);
        fx_copy(fx.qin, m, out, N, SPIN, gate, NULL);
        assert_int_equal(MPI_Irecv(m, 1, t, 0, TAG_DATA, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        token_send(); /* posted */
        token_recv(); /* the sender's MPI_Ssend has completed: matched */
        fx_req_stays_pending(&r, 0.1, "its dependency was held back");
        open_gate(gate);
        fx_req_wait(&r, MPI_STATUS_IGNORE);
        fx_read(out, N * sizeof *v, v);
        check_ints(v, N, 3); /* the kernel read the old bytes */
        fx_read(m, N * sizeof *v, v);
        check_ints(v, N, 9);
        clReleaseEvent(gate);
        clReleaseMemObject(m);
        clReleaseMemObject(out);
    } else {
        for (int i = 0; i < N; i++) v[i] = 9;
        token_recv();
        assert_int_equal(MPI_Ssend(v, N, MPI_INT, 1, TAG_DATA, MPI_COMM_WORLD), MPI_SUCCESS);
        token_send();
    }
    free(v);
    MPI_Type_free(&t);
}

/* Out-of-order queue (MPI-ACC Fig 8): work pending on it is not a
 * dependency — the send goes out while a held kernel that would overwrite
 * the buffer waits; with MPIACC_EVENT naming that kernel, it is. */
static void out_of_order_queue(void **state)
{
    int *v = malloc(N * sizeof *v);
    if (!fx.qooo) skip();
    for (int round = 0; round < 2; round++) {
        MPI_Request r;
        if (rank == 0) {
            cl_event gate = user_event(), filled;
            cl_mem m;
            MPI_Datatype t;
            for (int i = 0; i < N; i++) v[i] = 5;
            m = fx_buf(N * sizeof *v, v);
            fx_fill(fx.qooo, m, N, 9, SPIN, gate, &filled);
            t = cl_ints(N, fx.qooo, round ? filled : NULL);
            assert_int_equal(MPI_Isend(m, 1, t, 1, TAG_DATA, MPI_COMM_WORLD, &r), MPI_SUCCESS);
            if (round == 0) {
                fx_req_wait(&r, MPI_STATUS_IGNORE); /* the held kernel does not delay it */
                open_gate(gate);
            } else {
                fx_req_stays_pending(&r, 0.1, "its dependency was held back");
                open_gate(gate);
                fx_req_wait(&r, MPI_STATUS_IGNORE);
            }
            clFinish(fx.qooo);
            clReleaseEvent(filled);
            clReleaseEvent(gate);
            clReleaseMemObject(m);
            MPI_Type_free(&t);
        } else {
            assert_int_equal(MPI_Recv(v, N, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE), 0);
            check_ints(v, N, round ? 9 : 5);
        }
    }
    free(v);
}

/* MPI-ACC Fig 5: per iteration a kernel, MPI_Type_dup, the attributes,
 * MPI_Isend, MPI_Type_free; MPI_Waitall at the end (the receiver does the
 * same with MPI_Irecv).  Noncontiguous: every other int. */
#define FIG5_ITERS 16
#define FIG5_N 1024
static void fig5_loop(void **state)
{
    MPI_Datatype base, t;
    MPI_Request r[FIG5_ITERS];
    MPI_Status st[FIG5_ITERS];
    cl_mem m[FIG5_ITERS];
    int *v = malloc(2 * FIG5_N * sizeof *v);

    MPI_Type_vector(FIG5_N, 1, 2, MPI_INT, &base);
    MPI_Type_commit(&base);
    for (int i = 0; i < FIG5_ITERS; i++) {
        for (int k = 0; k < 2 * FIG5_N; k++) v[k] = -1;
        m[i] = fx_buf(2 * FIG5_N * sizeof *v, v);
        if (rank == 0) fx_fill(fx.qin, m[i], 2 * FIG5_N, 100 + i, SPIN / 10, NULL, NULL);
        MPI_Type_dup(base, &t);
        MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
        MPI_Type_set_attr(t, MPIACC_CL_QUEUE, (void *)fx.qin);
        if (rank == 0) assert_int_equal(MPI_Isend(m[i], 1, t, 1, i, MPI_COMM_WORLD, &r[i]), MPI_SUCCESS);
        else assert_int_equal(MPI_Irecv(m[i], 1, t, 0, i, MPI_COMM_WORLD, &r[i]), MPI_SUCCESS);
        MPI_Type_free(&t);
    }
    assert_int_equal(MPI_Waitall(FIG5_ITERS, r, st), MPI_SUCCESS);
    for (int i = 0; i < FIG5_ITERS; i++) {
        if (rank == 1) {
            fx_read(m[i], 2 * FIG5_N * sizeof *v, v);
            for (int k = 0; k < 2 * FIG5_N; k++)
                if (v[k] != (k % 2 ? -1 : 100 + i)) fail_msg("message %d: int %d is %d", i, k, v[k]);
        }
        clReleaseMemObject(m[i]);
    }
    MPI_Type_free(&base);
    free(v);
}

/* Non-overtaking: message 1 waits for a held kernel, message 2 (same peer,
 * communicator and tag) is ready at once — a cl_mem without dependency, or
 * a plain host buffer.  The first receive must get message 1. */
static void non_overtaking(void **state)
{
    int *v1 = malloc(N * sizeof *v1), *v2 = malloc(N * sizeof *v2);
    for (int second_host = 0; second_host < 2; second_host++) {
        MPI_Request r[2];
        if (rank == 0) {
            cl_event gate = user_event();
            cl_mem m1 = fx_buf(N * sizeof *v1, NULL), m2 = NULL;
            MPI_Datatype t1 = cl_ints(N, fx.qin, NULL), t2 = cl_ints(N, NULL, NULL);
            fx_fill(fx.qin, m1, N, 1, SPIN, gate, NULL);
            assert_int_equal(MPI_Isend(m1, 1, t1, 1, TAG_DATA, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
            for (int i = 0; i < N; i++) v2[i] = 2;
            if (second_host) {
                assert_int_equal(MPI_Isend(v2, N, MPI_INT, 1, TAG_DATA, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
            } else {
                m2 = fx_buf(N * sizeof *v2, v2);
                assert_int_equal(MPI_Isend(m2, 1, t2, 1, TAG_DATA, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
            }
            token_recv(); /* the receiver saw nothing arrive while message 1 was held */
            open_gate(gate);
            assert_int_equal(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            clReleaseEvent(gate);
            clReleaseMemObject(m1);
            if (m2) clReleaseMemObject(m2);
            MPI_Type_free(&t1);
            MPI_Type_free(&t2);
        } else {
            MPI_Datatype t = cl_ints(N, fx.qin, NULL);
            cl_mem m1 = fx_buf(N * sizeof *v1, NULL);
            assert_int_equal(MPI_Irecv(m1, 1, t, 0, TAG_DATA, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
            assert_int_equal(MPI_Irecv(v2, N, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
            fx_req_stays_pending(&r[0], 0.05, "its dependency was held back");
            fx_req_stays_pending(&r[1], 0.05, "its dependency was held back"); /* message 2 did not overtake */
            token_send();
            assert_int_equal(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            fx_read(m1, N * sizeof *v1, v1);
            check_ints(v1, N, 1);
            check_ints(v2, N, 2);
            clReleaseMemObject(m1);
            MPI_Type_free(&t);
        }
    }
    free(v1);
    free(v2);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(implicit_sync_send), cmocka_unit_test(implicit_sync_recv),
        cmocka_unit_test(out_of_order_queue), cmocka_unit_test(fig5_loop), cmocka_unit_test(non_overtaking),
    };
    fx_init_pair(&argc, &argv, &rank, &peer);
    return fx_end(MPIACC_TEST_RUN("opencl_order", tests, NULL, NULL));
}
