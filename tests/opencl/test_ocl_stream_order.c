/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * Stream-ordered completion (MPIACC_ORDER = MPIACC_ORDER_STREAM) on cl_mem
 * buffers, 2 ranks, PoCL in CI.  The receive's (or send's) queue is held
 * back by a user event (a marker waiting for it), so mpiacc's unpack (pack)
 * cannot run; every assertion is about order, never about durations:
 *  - receive, staged (MPI_COMM_WORLD, and a communicator with the
 *    mpiacc_direct info key, which point-to-point ignores; also with the
 *    sender's data written behind a gate on its queue): MPI_Wait returns
 *    while the queue is held, the buffer
 *    still holds the old bytes (read through another queue), and once the
 *    gate opens a read enqueued on the same queue sees the message, as does
 *    another queue after clFinish of the first; MPIACC_ORDER_HOST keeps
 *    waiting; the status is complete;
 *  - send, staged (both communicators): MPI_Wait returns while the pack is
 *    held, and a kernel overwriting the buffer enqueued after it on the
 *    queue does not change what the receiver gets; a synchronous-mode send
 *    does not complete while it is held (documented);
 *  - MPI_Waitall / MPI_Waitany, MPI_Cancel before the message came;
 *  - an out-of-order queue (no dependency; the barrier orders later reads);
 *  - MPI_Wait in a second thread, MPI_Request_free before completion;
 *  - a failure after completion (the receive's MPIACC_EVENT fails): the
 *    next device call on the communicator fails with it, the one after
 *    works;
 *  - invalid values, host datatypes, OpenCL without a queue, inheritance;
 *  - MPI_Finalize with a stream-ordered receive still finishing in the
 *    background (a thread opens its gate while MPI_Finalize waits), and
 *    (--abandon) one whose gate stays closed: given up after
 *    MPIACC_FINALIZE_TIMEOUT, reported as abandoned.
 * Every early completion is asserted through mpiacc_rp_transitions (the
 * pseudo-target MPIACC_RP_T_EARLY, src/reqpool/op.c).
 */
#include <pthread.h>

#include "ocl_fixture.h"
#include "ocl_types.h"
#include "opencl/ocl_testhooks.h"
#include "attrs/attrs.h"
#include "reqpool/reqpool.h"

#define N 4096 /* ints: 16 KiB */
#define M 64   /* ints */
enum { TAG = 31, TAG_TOKEN = 32, TAG_NEVER = 33 };
static int rank, peer;
static MPI_Comm dcomm; /* with the mpiacc_direct info key: no different for point-to-point */

static long tr(int from, int to) { return atomic_load(&mpiacc_rp_transitions[from][to]); }

static void token_send(MPI_Comm c) { assert_int_equal(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_TOKEN, c), 0); }
static void token_recv(MPI_Comm c)
{
    assert_int_equal(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_TOKEN, c, MPI_STATUS_IGNORE), 0);
}

static cl_event gate_queue(cl_command_queue q)
{
    cl_int e;
    cl_event g = clCreateUserEvent(fx.ctx, &e);
    assert_int_equal(e, CL_SUCCESS);
    assert_int_equal(clEnqueueMarkerWithWaitList(q, 1, &g, NULL), CL_SUCCESS);
    clFlush(q);
    return g;
}

static void open_gate(cl_event g)
{
    assert_int_equal(clSetUserEventStatus(g, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(g);
}

/* n ints on queue q (NULL: none), with MPIACC_ORDER (NULL: not set) */
static MPI_Datatype so_ints(int n, cl_command_queue q, void *event, void *order)
{
    MPI_Datatype t = cl_ints(n, q, event);
    if (order) assert_int_equal(MPI_Type_set_attr(t, MPIACC_ORDER, order), MPI_SUCCESS);
    return t;
}

static void read_on(cl_command_queue q, cl_mem m, int n, int *v)
{
    assert_int_equal(clEnqueueReadBuffer(q, m, CL_TRUE, 0, (size_t)n * sizeof *v, v, 0, NULL, NULL), CL_SUCCESS);
}

static void check_seq(const int *v, int n, int v0, const char *what)
{
    for (int i = 0; i < n; i++)
        if (v[i] != v0 + i) fail_msg("rank %d, %s: element %d is %d, expected %d", rank, what, i, v[i], v0 + i);
}

static void check_all(const int *v, int n, int want, const char *what)
{
    for (int i = 0; i < n; i++)
        if (v[i] != want) fail_msg("rank %d, %s: element %d is %d, expected %d", rank, what, i, v[i], want);
}

static cl_mem filled(int n, int val)
{
    int *v = malloc((size_t)n * sizeof *v);
    cl_mem m;
    for (int i = 0; i < n; i++) v[i] = val;
    m = fx_buf((size_t)n * sizeof *v, v);
    free(v);
    return m;
}

static cl_mem seq(int n, int v0)
{
    int *v = malloc((size_t)n * sizeof *v);
    cl_mem m;
    for (int i = 0; i < n; i++) v[i] = v0 + i;
    m = fx_buf((size_t)n * sizeof *v, v);
    free(v);
    return m;
}

/* ---- receives --------------------------------------------------------------- */

/* One gated stream-ordered receive of n ints on c; the sender sends
 * v0 + i (host ints on MPI_COMM_WORLD, a cl_mem on the direct one; held:
 * v0 everywhere, written by a gated fill on its queue opened after the
 * send call). */
static void recv_stream_x(MPI_Comm c, int n, int v0, int early_from, int held)
{
    int *v = malloc((size_t)n * sizeof *v);
    if (rank == 1) {
        cl_int e;
        cl_command_queue q2 = clCreateCommandQueue(fx.ctx, fx.dev, 0, &e);
        cl_mem m = filled(n, -5);
        MPI_Datatype t = so_ints(n, fx.qin, NULL, MPIACC_ORDER_STREAM);
        cl_event g = gate_queue(fx.qin);
        long early0 = tr(early_from, MPIACC_RP_T_EARLY);
        MPI_Request r;
        MPI_Status st;
        int cnt = -1;
        assert_int_equal(MPI_Irecv(m, 1, t, 0, TAG, c, &r), MPI_SUCCESS);
        token_send(c);
        fx_req_wait(&r, &st); /* returns with the queue held back */
        assert_int_equal(st.MPI_SOURCE, 0);
        assert_int_equal(st.MPI_TAG, TAG);
        MPI_Get_count(&st, t, &cnt);
        assert_int_equal(cnt, 1);
        assert_int_equal(tr(early_from, MPIACC_RP_T_EARLY), early0 + 1);
        read_on(q2, m, n, v); /* another queue, no synchronisation: not there yet */
        check_all(v, n, -5, "another queue before the gate opened");
        open_gate(g);
        read_on(fx.qin, m, n, v); /* the same queue: ordered behind the unpack */
        (held ? check_all : check_seq)(v, n, v0, "the receive's queue");
        clFinish(fx.qin);
        read_on(q2, m, n, v); /* another queue after clFinish */
        (held ? check_all : check_seq)(v, n, v0, "another queue after clFinish");
        MPI_Type_free(&t);
        clReleaseMemObject(m);
        clReleaseCommandQueue(q2);
    } else {
        token_recv(c);
        if (c == MPI_COMM_WORLD) {
            for (int i = 0; i < n; i++) v[i] = v0 + i;
            assert_int_equal(MPI_Send(v, n, MPI_INT, 1, TAG, c), MPI_SUCCESS);
        } else if (held) { /* the data are written only after the send call */
            cl_mem m = filled(n, -1);
            MPI_Datatype t = so_ints(n, fx.qin, NULL, NULL);
            cl_event g = gate_queue(fx.qin);
            MPI_Request r;
            fx_fill(fx.qin, m, (size_t)n, v0, 0, NULL, NULL);
            assert_int_equal(MPI_Isend(m, 1, t, 1, TAG, c, &r), MPI_SUCCESS);
            fx_req_stays_pending(&r, 0.05, "its data were held back (MPIACC_ORDER_HOST)");
            open_gate(g);
            fx_req_wait(&r, MPI_STATUS_IGNORE);
            MPI_Type_free(&t);
            clReleaseMemObject(m);
        } else {
            cl_mem m = seq(n, v0);
            MPI_Datatype t = so_ints(n, fx.qin, NULL, NULL);
            assert_int_equal(MPI_Send(m, 1, t, 1, TAG, c), MPI_SUCCESS);
            MPI_Type_free(&t);
            clReleaseMemObject(m);
        }
    }
    free(v);
}

static void recv_stream_case(MPI_Comm c, int n, int v0, int early_from) { recv_stream_x(c, n, v0, early_from, 0); }

static void recv_staged(void **state) { recv_stream_case(MPI_COMM_WORLD, N, 100, MPIACC_RP_UNPACKING); }
static void recv_eager(void **state) { recv_stream_case(dcomm, M, 200, MPIACC_RP_UNPACKING); }
/* both sides held: the sender's pack waits for its queue, the receiver's unpack for its own */
static void recv_eager_held_sender(void **state) { recv_stream_x(dcomm, M, 250, MPIACC_RP_UNPACKING, 1); }

/* MPIACC_ORDER_HOST (and no attribute): today's completion. */
static void recv_host_order(void **state)
{
    for (int k = 0; k < 2; k++) {
        int *v = malloc(N * sizeof *v);
        if (rank == 1) {
            cl_mem m = filled(N, -5);
            MPI_Datatype t = so_ints(N, fx.qin, NULL, k ? MPIACC_ORDER_HOST : NULL);
            cl_event g = gate_queue(fx.qin);
            MPI_Request r;
            assert_int_equal(MPI_Irecv(m, 1, t, 0, TAG, MPI_COMM_WORLD, &r), MPI_SUCCESS);
            token_send(MPI_COMM_WORLD);
            token_recv(MPI_COMM_WORLD); /* sent */
            fx_req_stays_pending(&r, 0.2, "its data were held back (MPIACC_ORDER_HOST)");
            open_gate(g);
            fx_req_wait(&r, MPI_STATUS_IGNORE);
            assert_int_equal(clEnqueueReadBuffer(fx.qooo ? fx.qooo : fx.qin, m, CL_TRUE, 0, N * sizeof *v, v, 0,
                                                 NULL, NULL),
                             CL_SUCCESS); /* any queue, no synchronisation */
            check_seq(v, N, 400, "MPIACC_ORDER_HOST");
            MPI_Type_free(&t);
            clReleaseMemObject(m);
        } else {
            for (int i = 0; i < N; i++) v[i] = 400 + i;
            token_recv(MPI_COMM_WORLD);
            assert_int_equal(MPI_Send(v, N, MPI_INT, 1, TAG, MPI_COMM_WORLD), MPI_SUCCESS);
            token_send(MPI_COMM_WORLD);
        }
        free(v);
    }
}

/* MPI_Waitall and MPI_Waitany return while the queue is held. */
static void completion_calls(void **state)
{
    int *v = malloc(3 * M * sizeof *v);
    if (rank == 1) {
        cl_mem m[3] = {filled(M, -1), filled(M, -1), filled(M, -1)};
        MPI_Datatype t = so_ints(M, fx.qin, NULL, MPIACC_ORDER_STREAM);
        cl_event g = gate_queue(fx.qin);
        MPI_Request r[3];
        MPI_Status st[3];
        int idx = -1;
        for (int i = 0; i < 3; i++) assert_int_equal(MPI_Irecv(m[i], 1, t, 0, TAG + i, MPI_COMM_WORLD, &r[i]), 0);
        token_send(MPI_COMM_WORLD);
        assert_int_equal(MPI_Waitall(2, r, st), MPI_SUCCESS);
        assert_int_equal(st[1].MPI_TAG, TAG + 1);
        assert_int_equal(MPI_Waitany(1, &r[2], &idx, &st[2]), MPI_SUCCESS);
        assert_int_equal(idx, 0);
        assert_int_equal(st[2].MPI_TAG, TAG + 2);
        open_gate(g);
        for (int i = 0; i < 3; i++) {
            read_on(fx.qin, m[i], M, v);
            check_seq(v, M, 1000 * (i + 1), "Waitall / Waitany");
            clReleaseMemObject(m[i]);
        }
        MPI_Type_free(&t);
    } else {
        token_recv(MPI_COMM_WORLD);
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < M; k++) v[k] = 1000 * (i + 1) + k;
            assert_int_equal(MPI_Send(v, M, MPI_INT, 1, TAG + i, MPI_COMM_WORLD), MPI_SUCCESS);
        }
    }
    free(v);
}

/* MPI_Cancel before a message came: cancelled as usual. */
static void cancel_before(void **state)
{
    if (rank == 1) {
        cl_mem m = filled(M, -1);
        MPI_Datatype t = so_ints(M, fx.qin, NULL, MPIACC_ORDER_STREAM);
        MPI_Request r;
        MPI_Status st;
        int c = 0;
        assert_int_equal(MPI_Irecv(m, 1, t, 0, TAG_NEVER, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Cancel(&r), MPI_SUCCESS);
        fx_req_wait(&r, &st);
        MPI_Test_cancelled(&st, &c);
        assert_int_equal(c, 1);
        MPI_Type_free(&t);
        clReleaseMemObject(m);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* An out-of-order queue: no dependency (the unpack runs at once), but the
 * barrier still orders the queue's later commands: held back by a barrier
 * of the test's own, a read enqueued after the completion sees the data. */
static void recv_out_of_order_queue(void **state)
{
    int *v = malloc(M * sizeof *v);
    if (!fx.qooo) skip();
    if (rank == 1) {
        cl_int e;
        cl_mem m = filled(M, -1);
        MPI_Datatype t = so_ints(M, fx.qooo, NULL, MPIACC_ORDER_STREAM);
        cl_event g = clCreateUserEvent(fx.ctx, &e);
        long e0 = tr(MPIACC_RP_UNPACKING, MPIACC_RP_T_EARLY);
        MPI_Request r;
        assert_int_equal(clEnqueueBarrierWithWaitList(fx.qooo, 1, &g, NULL), CL_SUCCESS);
        assert_int_equal(MPI_Irecv(m, 1, t, 0, TAG, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        token_send(MPI_COMM_WORLD);
        fx_req_wait(&r, MPI_STATUS_IGNORE);
        assert_int_equal(tr(MPIACC_RP_UNPACKING, MPIACC_RP_T_EARLY), e0 + 1);
        open_gate(g);
        read_on(fx.qooo, m, M, v);
        check_seq(v, M, 800, "an out-of-order queue");
        MPI_Type_free(&t);
        clReleaseMemObject(m);
    } else {
        token_recv(MPI_COMM_WORLD);
        for (int i = 0; i < M; i++) v[i] = 800 + i;
        assert_int_equal(MPI_Send(v, M, MPI_INT, 1, TAG, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    free(v);
}

/* Threads: receives completed by MPI_Wait in a second thread, others freed
 * with MPI_Request_free right after posting (their memory then goes when
 * the pool is done with them), while the main thread drives progress.  The
 * data arrive in every buffer (read on the queue). */
#define NT 16
static MPI_Request thr_req[NT];
static void *wait_half(void *arg)
{
    (void)arg;
    for (int i = 0; i < NT; i += 2) MPI_Wait(&thr_req[i], MPI_STATUS_IGNORE);
    return NULL;
}

static void threads_and_free(void **state)
{
    int *v = malloc(M * sizeof *v);
    if (rank == 1) {
        cl_mem m[NT];
        MPI_Datatype t = so_ints(M, fx.qin, NULL, MPIACC_ORDER_STREAM);
        pthread_t th;
        for (int i = 0; i < NT; i++) {
            m[i] = filled(M, -1);
            assert_int_equal(MPI_Irecv(m[i], 1, t, 0, TAG + i, MPI_COMM_WORLD, &thr_req[i]), MPI_SUCCESS);
            if (i % 4 == 1) assert_int_equal(MPI_Request_free(&thr_req[i]), MPI_SUCCESS);
        }
        pthread_create(&th, NULL, wait_half, NULL);
        token_send(MPI_COMM_WORLD);
        for (int i = 1; i < NT; i += 2)
            if (thr_req[i] != MPI_REQUEST_NULL) fx_req_wait(&thr_req[i], MPI_STATUS_IGNORE);
        pthread_join(th, NULL);
        token_recv(MPI_COMM_WORLD); /* every message sent: the freed receives are matched */
        for (double t0 = fx_now(); mpiacc_rp_pending() > 0;) { /* the freed ones finish in the background */
            int flag;
            MPI_Iprobe(0, TAG_NEVER, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (fx_now() - t0 > 20) fail_msg("operations still pending after 20 s");
        }
        for (int i = 0; i < NT; i++) {
            read_on(fx.qin, m[i], M, v);
            check_seq(v, M, 100 * i, "threads / MPI_Request_free");
            clReleaseMemObject(m[i]);
        }
        MPI_Type_free(&t);
    } else {
        token_recv(MPI_COMM_WORLD);
        for (int i = 0; i < NT; i++) {
            for (int k = 0; k < M; k++) v[k] = 100 * i + k;
            assert_int_equal(MPI_Send(v, M, MPI_INT, 1, TAG + i, MPI_COMM_WORLD), MPI_SUCCESS);
        }
        token_send(MPI_COMM_WORLD);
    }
    free(v);
}

/* ---- sends -------------------------------------------------------------------- */

/* The data (7) are written by a kernel held back on the queue; the send
 * completes (stream order) or not (synchronous mode) while
 * it is held; a kernel writing 99 enqueued after
 * the completion call must not change what the receiver gets. */
static void send_case(MPI_Comm c, int n, int sync, int expect_early, int early_from)
{
    int *v = malloc((size_t)n * sizeof *v);
    if (rank == 0) {
        cl_mem m = filled(n, 1);
        MPI_Datatype t = so_ints(n, fx.qin, NULL, MPIACC_ORDER_STREAM);
        cl_event g;
        long early0 = tr(early_from, MPIACC_RP_T_EARLY);
        MPI_Request r;
        cl_int e;
        g = clCreateUserEvent(fx.ctx, &e);
        fx_fill(fx.qin, m, (size_t)n, 7, 0, g, NULL);
        assert_int_equal(sync ? MPI_Issend(m, 1, t, 1, TAG, c, &r) : MPI_Isend(m, 1, t, 1, TAG, c, &r), 0);
        if (expect_early == 1) {
            fx_req_wait(&r, MPI_STATUS_IGNORE);
            assert_int_equal(tr(early_from, MPIACC_RP_T_EARLY), early0 + 1);
            fx_fill(fx.qin, m, (size_t)n, 99, 0, NULL, NULL); /* after the completion call */
            assert_int_equal(clSetUserEventStatus(g, CL_COMPLETE), CL_SUCCESS);
        } else {
            fx_req_stays_pending(&r, 0.2, "its data were held back (MPIACC_ORDER_HOST)");
            assert_int_equal(clSetUserEventStatus(g, CL_COMPLETE), CL_SUCCESS);
            fx_req_wait(&r, MPI_STATUS_IGNORE);
            /* expect_early 2: in stream order, but only once the gate opened */
            assert_int_equal(tr(early_from, MPIACC_RP_T_EARLY), early0 + (expect_early == 2));
        }
        clReleaseEvent(g);
        clFinish(fx.qin);
        MPI_Type_free(&t);
        clReleaseMemObject(m);
    } else {
        if (c == MPI_COMM_WORLD) {
            assert_int_equal(MPI_Recv(v, n, MPI_INT, 0, TAG, c, MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else {
            cl_mem m = filled(n, 0);
            MPI_Datatype t = so_ints(n, fx.qin, NULL, NULL);
            assert_int_equal(MPI_Recv(m, 1, t, 0, TAG, c, MPI_STATUS_IGNORE), MPI_SUCCESS);
            read_on(fx.qin, m, n, v);
            MPI_Type_free(&t);
            clReleaseMemObject(m);
        }
        check_all(v, n, 7, "the send's data");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(v);
}

static void send_staged(void **state) { send_case(MPI_COMM_WORLD, N, 0, 1, MPIACC_RP_PACKING); }
static void send_eager(void **state) { send_case(dcomm, M, 0, 1, MPIACC_RP_PACKING); }
static void send_long(void **state) { send_case(dcomm, N, 0, 1, MPIACC_RP_PACKING); }
static void send_sync_host(void **state) { send_case(MPI_COMM_WORLD, N, 1, 0, MPIACC_RP_PACKING); }

/* ---- errors ------------------------------------------------------------------- */

/* The receive's unpack fails after its request completed (the backend's
 * fault injection: failing a user event that a barrier chain waits on
 * aborts inside PoCL): the next device call on the communicator fails with
 * that error (not posted), the following one works. */
static void late_error(void **state)
{
    int *v = malloc(M * sizeof *v);
    if (rank == 1) {
        cl_mem m = filled(M, -1), m2 = filled(M, -1);
        MPI_Datatype t = so_ints(M, fx.qin, NULL, MPIACC_ORDER_STREAM), t2 = so_ints(M, fx.qin, NULL, NULL);
        long err0 = tr(MPIACC_RP_UNPACKING, MPIACC_RP_T_ERROR), failed0;
        cl_event g = gate_queue(fx.qin);
        MPIACC_Stats st0 = {.size = sizeof st0}, st1 = {.size = sizeof st1};
        MPI_Request r;
        int cls = 0, rc;
        double t0;
        assert_int_equal(MPI_Irecv(m, 1, t, 0, TAG, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        token_send(MPI_COMM_WORLD);
        fx_req_wait(&r, MPI_STATUS_IGNORE); /* completed, successfully */
        MPIACC_Get_stats(&st0);
        failed0 = (long)st0.failed;
        mpiacc_ocl_fail_next_xfers(1);
        open_gate(g);
        for (t0 = fx_now(); tr(MPIACC_RP_UNPACKING, MPIACC_RP_T_ERROR) == err0;) {
            int flag;
            MPI_Iprobe(0, TAG_NEVER, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (fx_now() - t0 > 20) fail_msg("the failure was not seen in 20 s");
        }
        mpiacc_ocl_fail_next_xfers(0);
        MPIACC_Get_stats(&st1);
        assert_int_equal((long)st1.failed, failed0 + 1);
        rc = MPI_Recv(m2, 1, t2, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        assert_int_equal(cls, MPI_ERR_OTHER);
        assert_int_equal(MPI_Recv(m2, 1, t2, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        read_on(fx.qin, m2, M, v);
        check_seq(v, M, 600, "the call after the failure");
        MPI_Type_free(&t);
        MPI_Type_free(&t2);
        clReleaseMemObject(m);
        clReleaseMemObject(m2);
    } else {
        token_recv(MPI_COMM_WORLD);
        for (int i = 0; i < M; i++) v[i] = 500 + i;
        assert_int_equal(MPI_Send(v, M, MPI_INT, 1, TAG, MPI_COMM_WORLD), MPI_SUCCESS);
        for (int i = 0; i < M; i++) v[i] = 600 + i;
        assert_int_equal(MPI_Send(v, M, MPI_INT, 1, TAG, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(v);
}

static int cls_of(int rc)
{
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
}

/* Values, kinds without a stream, inheritance. */
static void arguments(void **state)
{
    MPI_Datatype t, h, t2, s;
    mpiacc_attrs_t a;
    MPI_Request r;
    int flag = 0;
    cl_mem m = filled(M, 0);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    t = so_ints(M, fx.qin, NULL, NULL);
    assert_int_equal(cls_of(MPI_Type_set_attr(t, MPIACC_ORDER, (void *)(intptr_t)7)), MPI_ERR_ARG);
    assert_int_equal(cls_of(MPI_Type_set_attr(t, MPIACC_ORDER, NULL)), MPI_ERR_ARG);
    /* a host datatype with an event: no stream */
    MPI_Type_contiguous(M, MPI_INT, &h);
    MPI_Type_commit(&h);
    MPI_Type_set_attr(h, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(h, MPIACC_EVENT, &flag);
    flag = 1;
    MPI_Type_set_attr(h, MPIACC_ORDER, MPIACC_ORDER_STREAM);
    {
        int hv[M];
        assert_int_equal(cls_of(MPI_Isend(hv, 1, h, peer, TAG, MPI_COMM_WORLD, &r)), MPI_ERR_ARG);
    }
    /* OpenCL without a queue */
    t2 = so_ints(M, NULL, NULL, MPIACC_ORDER_STREAM);
    assert_int_equal(cls_of(MPI_Irecv(m, 1, t2, peer, TAG, MPI_COMM_WORLD, &r)), MPI_ERR_ARG);
    MPI_Type_free(&t2);
    /* inheritance: a contiguous of a stream-ordered datatype is one; a
     * struct of a stream-ordered and a host-ordered one is refused */
    MPI_Type_set_attr(t, MPIACC_ORDER, MPIACC_ORDER_STREAM);
    MPI_Type_contiguous(2, t, &t2);
    MPI_Type_commit(&t2);
    assert_int_equal(mpiacc_attrs_get(t2, &a), MPI_SUCCESS);
    assert_int_equal(a.kind, MPIACC_KIND_OPENCL);
    assert_true(a.has_order && a.stream_order);
    {
        MPI_Datatype u = so_ints(M, fx.qin, NULL, MPIACC_ORDER_HOST);
        MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, M * sizeof(int)}, (MPI_Datatype[]){t, u}, &s);
        MPI_Type_commit(&s);
        assert_int_equal(cls_of(mpiacc_attrs_get(s, &a)), MPI_ERR_TYPE);
        MPI_Type_free(&s);
        MPI_Type_free(&u);
    }
    MPI_Type_free(&t2);
    MPI_Type_free(&t);
    MPI_Type_free(&h);
    clReleaseMemObject(m);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- MPI_Finalize with a background operation ------------------------------------ */

static cl_event fin_gate;
static void *open_later(void *arg)
{
    (void)arg;
    nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 300000000}, NULL);
    clSetUserEventStatus(fin_gate, CL_COMPLETE);
    return NULL;
}

/* Rank 1 leaves a completed stream-ordered receive whose unpack is held
 * back; a thread opens the gate while MPI_Finalize waits.  With abandon
 * (--abandon, run with MPIACC_FINALIZE_TIMEOUT=1) the gate stays closed:
 * MPI_Finalize gives the op up.  Returns the number of failed checks. */
static int finalize_background(int abandon)
{
    int bad = 0, v[M];
    if (rank == 1) {
        cl_mem m = filled(M, -1);
        MPI_Datatype t = so_ints(M, fx.qin, NULL, MPIACC_ORDER_STREAM);
        MPI_Request r;
        pthread_t th;
        fin_gate = gate_queue(fx.qin);
        MPI_Irecv(m, 1, t, 0, TAG, MPI_COMM_WORLD, &r);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_TOKEN, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Type_free(&t);
        if (!abandon) pthread_create(&th, NULL, open_later, NULL);
        MPI_Comm_free(&dcomm);
        MPI_Finalize(); /* the op is still held; OpenCL stays up (fx_fini would release it) */
        if (!abandon) pthread_join(th, NULL);
        else clSetUserEventStatus(fin_gate, CL_COMPLETE); /* let PoCL finish the abandoned unpack */
        clReleaseEvent(fin_gate);
        if (mpiacc_rp_last_finalize.background != 1 || mpiacc_rp_last_finalize.completed != !abandon ||
            mpiacc_rp_last_finalize.abandoned != abandon) {
            fprintf(stderr, "finalize report: background %d completed %d abandoned %d\n",
                    mpiacc_rp_last_finalize.background, mpiacc_rp_last_finalize.completed,
                    mpiacc_rp_last_finalize.abandoned);
            bad++;
        }
        clEnqueueReadBuffer(fx.qin, m, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
        for (int i = 0; i < M && !abandon; i++)
            if (v[i] != 700 + i) {
                fprintf(stderr, "after MPI_Finalize: element %d is %d\n", i, v[i]);
                bad++;
                break;
            }
        clReleaseMemObject(m);
    } else {
        for (int i = 0; i < M; i++) v[i] = 700 + i;
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(v, M, MPI_INT, 1, TAG, MPI_COMM_WORLD);
        MPI_Comm_free(&dcomm);
        MPI_Finalize();
    }
    printf("rank %d: MPI_Finalize with a stream-ordered operation in the background%s: %s\n", rank,
           abandon ? " (abandoned)" : "", bad ? "FAILED" : "ok");
    return bad;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recv_staged), cmocka_unit_test(recv_eager), cmocka_unit_test(recv_eager_held_sender),
        cmocka_unit_test(recv_host_order), cmocka_unit_test(completion_calls), cmocka_unit_test(cancel_before),
        cmocka_unit_test(send_staged), cmocka_unit_test(send_eager), cmocka_unit_test(send_long),
        cmocka_unit_test(send_sync_host), cmocka_unit_test(late_error), cmocka_unit_test(arguments),
        cmocka_unit_test(recv_out_of_order_queue), cmocka_unit_test(threads_and_free),
    };
    MPI_Info info;
    int failed;
    fx_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dcomm);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(dcomm, MPI_ERRORS_RETURN);
    int abandon = argc > 1 && !strcmp(argv[argc - 1], "--abandon");
    if (abandon) { /* only the end: MPI_Finalize gives a detached op up */
        failed = finalize_background(1);
        return failed ? 1 : 0;
    }
    failed = MPIACC_TEST_RUN("opencl_stream_order", tests, NULL, NULL);
    failed += finalize_background(0);
    return failed ? 1 : 0;
}
