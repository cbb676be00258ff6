/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/* Issue 21's point-to-point extras on cl_mem buffers (PoCL in CI): a
 * persistent send and receive restarted many times, each MPI_Start taking
 * the queue's position as its dependency (a fill kernel enqueued just
 * before); MPI_Sendrecv_replace, MPI_Isendrecv_replace, MPI_Isendrecv,
 * MPI_Bsend and MPI_Mprobe + MPI_Mrecv / MPI_Imrecv.  Ring over 2 ranks. */
#include "mpiacc.h"
#include "ocl_fixture.h"

#define NB 8
#define SPAN (NB * 3) /* vector: NB blocks of 2 ints, stride 3 */
static int me, np, right, left;
static MPI_Datatype vec;

static MPI_Datatype cl_vector(void)
{
    MPI_Datatype v, t;
    MPI_Type_vector(NB, 2, 3, MPI_INT, &v);
    MPI_Type_dup(v, &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    MPI_Type_set_attr(t, MPIACC_CL_QUEUE, fx.qin);
    return t;
}

/* r: the vector's elements are `in`, the gaps `gap`. */
static int check(const int *r, int in, int gap, const char *what)
{
    for (int i = 0; i < SPAN; i++) {
        int want = i % 3 != 2 ? in : gap;
        if (r[i] != want) {
            fprintf(stderr, "rank %d %s: element %d is %d, expected %d\n", me, what, i, r[i], want);
            return 0;
        }
    }
    return 1;
}

static void persistent(void **state)
{
    (void)state;
    cl_mem s = fx_buf(SPAN * sizeof(int), NULL), r = fx_buf(SPAN * sizeof(int), NULL);
    MPI_Request q[2];
    int out[SPAN];
    assert_int_equal(MPI_Recv_init(r, 1, vec, left, 1, MPI_COMM_WORLD, &q[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Send_init(s, 1, vec, right, 1, MPI_COMM_WORLD, &q[1]), MPI_SUCCESS);
    for (int it = 0; it < 20; it++) {
        fx_fill(fx.qin, r, SPAN, -5, 0, NULL, NULL); /* not -1: the kernel adds 1 to -1 */
        fx_fill(fx.qin, s, SPAN, it * 1000 + me, 3000, NULL, NULL); /* still running at MPI_Start */
        assert_int_equal(MPI_Startall(2, q), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        fx_read(r, sizeof out, out);
        if (!check(out, it * 1000 + left, -5, "persistent")) fprintf(stderr, "iteration %d\n", it), fail();
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    clReleaseMemObject(s);
    clReleaseMemObject(r);
}

static void sendrecv_replace(void **state)
{
    (void)state;
    cl_mem b = fx_buf(SPAN * sizeof(int), NULL), s = fx_buf(SPAN * sizeof(int), NULL);
    int out[SPAN];
    MPI_Status st;
    MPI_Request q;
    for (int k = 0; k < 3; k++) {
        fx_fill(fx.qin, b, SPAN, 100 * k + me, 2000, NULL, NULL);
        if (k == 0) {
            assert_int_equal(MPI_Sendrecv_replace(b, 1, vec, right, 2, left, 2, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        } else if (k == 1) {
            assert_int_equal(MPI_Isendrecv_replace(b, 1, vec, right, 2, left, 2, MPI_COMM_WORLD, &q), MPI_SUCCESS);
            assert_int_equal(MPI_Wait(&q, &st), MPI_SUCCESS);
        } else {
            fx_fill(fx.qin, s, SPAN, 100 * k + me, 2000, NULL, NULL);
            fx_fill(fx.qin, b, SPAN, -7, 0, NULL, NULL);
            assert_int_equal(MPI_Isendrecv(s, 1, vec, right, 2, b, 1, vec, left, 2, MPI_COMM_WORLD, &q),
                             MPI_SUCCESS);
            assert_int_equal(MPI_Wait(&q, &st), MPI_SUCCESS);
        }
        assert_int_equal(st.MPI_SOURCE, left);
        assert_int_equal(st.MPI_TAG, 2);
        fx_read(b, sizeof out, out);
        assert_true(check(out, 100 * k + left, k == 2 ? -7 : 100 * k + me, "sendrecv"));
    }
    clReleaseMemObject(b);
    clReleaseMemObject(s);
}

static void bsend_mrecv(void **state)
{
    (void)state;
    cl_mem s = fx_buf(SPAN * sizeof(int), NULL), r = fx_buf(SPAN * sizeof(int), NULL);
    int out[SPAN], size = 0;
    void *att, *old;
    MPI_Message m;
    MPI_Status st;
    MPI_Pack_size(1, vec, MPI_COMM_WORLD, &size);
    att = malloc((size_t)size + MPI_BSEND_OVERHEAD);
    MPI_Buffer_attach(att, size + MPI_BSEND_OVERHEAD);
    for (int k = 0; k < 2; k++) {
        MPI_Request q;
        fx_fill(fx.qin, s, SPAN, 50 + k * 10 + me, 2000, NULL, NULL);
        fx_fill(fx.qin, r, SPAN, -3, 0, NULL, NULL);
        assert_int_equal(MPI_Bsend(s, 1, vec, right, 3, MPI_COMM_WORLD), MPI_SUCCESS);
        fx_fill(fx.qin, s, SPAN, -9, 0, NULL, NULL); /* buffered at the call */
        assert_int_equal(MPI_Mprobe(left, 3, MPI_COMM_WORLD, &m, &st), MPI_SUCCESS);
        if (k == 0) {
            assert_int_equal(MPI_Mrecv(r, 1, vec, &m, &st), MPI_SUCCESS);
        } else {
            assert_int_equal(MPI_Imrecv(r, 1, vec, &m, &q), MPI_SUCCESS);
            assert_int_equal(MPI_Wait(&q, &st), MPI_SUCCESS);
        }
        fx_read(r, sizeof out, out);
        assert_true(check(out, 50 + k * 10 + left, -3, "bsend/mrecv"));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Buffer_detach(&old, &size);
    free(att);
    clReleaseMemObject(s);
    clReleaseMemObject(r);
}

/* A communicator with the mpiacc_direct info key behaves like any other
 * for point-to-point: persistent requests, MPI_Isendrecv and
 * MPI_Sendrecv_replace of a cl_mem datatype work there too. */
static void direct(void **state)
{
    (void)state;
    cl_mem s = fx_buf(SPAN * sizeof(int), NULL), r = fx_buf(SPAN * sizeof(int), NULL);
    MPI_Comm dc;
    MPI_Info info;
    MPI_Request q[2];
    int out[SPAN];
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dc);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(dc, MPI_ERRORS_RETURN);
    assert_int_equal(MPI_Recv_init(r, 1, vec, left, 1, dc, &q[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Send_init(s, 1, vec, right, 1, dc, &q[1]), MPI_SUCCESS);
    for (int it = 0; it < 5; it++) {
        fx_fill(fx.qin, r, SPAN, -5, 0, NULL, NULL);
        fx_fill(fx.qin, s, SPAN, 7000 + it * 10 + me, 2000, NULL, NULL);
        assert_int_equal(MPI_Startall(2, q), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        fx_read(r, sizeof out, out);
        assert_true(check(out, 7000 + it * 10 + left, -5, "direct persistent"));
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    fx_fill(fx.qin, r, SPAN, -5, 0, NULL, NULL);
    fx_fill(fx.qin, s, SPAN, 8000 + me, 0, NULL, NULL);
    assert_int_equal(MPI_Isendrecv(s, 1, vec, right, 2, r, 1, vec, left, 2, dc, &q[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&q[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
    fx_read(r, sizeof out, out);
    assert_true(check(out, 8000 + left, -5, "direct isendrecv"));
    fx_fill(fx.qin, r, SPAN, 9000 + me, 0, NULL, NULL);
    assert_int_equal(MPI_Sendrecv_replace(r, 1, vec, right, 3, left, 3, dc, MPI_STATUS_IGNORE), MPI_SUCCESS);
    fx_read(r, sizeof out, out);
    assert_true(check(out, 9000 + left, 9000 + me, "direct sendrecv_replace"));
    MPI_Comm_free(&dc);
    clReleaseMemObject(s);
    clReleaseMemObject(r);
}

int main(int argc, char **argv)
{
    int failed;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(persistent), cmocka_unit_test(sendrecv_replace), cmocka_unit_test(bsend_mrecv),
        cmocka_unit_test(direct),
    };
    if (mpiacc_test_help(argc, argv, "usage: mpiexec -n 2 %s\nPersistent requests, Sendrecv_replace, "
                                     "Isendrecv(_replace), Bsend, Mrecv on cl_mem buffers.\n"))
        return 0;
    fx_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    right = (me + 1) % np;
    left = (me + np - 1) % np;
    vec = cl_vector();
    failed = MPIACC_TEST_RUN("ocl_p2px", tests, NULL, NULL);
    MPI_Type_free(&vec);
    fx_fini(); /* MPI_Finalize too */
    return failed ? 1 : 0;
}
