/* SPDX-License-Identifier: BSD-3-Clause */
/* Persistent point-to-point requests on datatypes that need the pool
 * (MPIACC_BUF_HOST with an MPIACC_EVENT flag: the CPU backend, the same
 * path as CUDA and OpenCL): every init call, MPI_Start / MPI_Startall,
 * restarting many times, the dependency captured at each MPI_Start, the
 * attributes taken at the init call,
 * inactive requests in every completion call, MPI_Request_free of active
 * and inactive requests, MPI_Cancel, MPI_Request_get_status, arrays mixing
 * persistent, mpiacc and plain MPI requests, errors.  Ring over 2 or 3
 * ranks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiacc.h"
#include "testutil.h"

#define NB 4       /* vector: NB blocks of 2 ints, stride 3 */
#define SPAN (NB * 3)
static int me, np, right, left;
static MPI_Comm comm;
static MPI_Datatype vec; /* tagged */
static int flag_ok = 1;

static MPI_Datatype tagged_vector(int *flag)
{
    MPI_Datatype v, t;
    MPI_Type_vector(NB, 2, 3, MPI_INT, &v);
    MPI_Type_commit(&v);
    t = mpiacc_test_host_tagged(v, flag);
    MPI_Type_free(&v);
    return t;
}

static void fill(int *b, int who, int it)
{
    for (int i = 0; i < SPAN; i++) b[i] = who * 100000 + it * 100 + i;
}

/* The vector's elements of a buffer filled by fill(who, it) landed in r;
 * the gaps kept their -1. */
static int check(const int *r, int who, int it)
{
    for (int i = 0; i < SPAN; i++) {
        int in = i % 3 != 2;
        int want = in ? who * 100000 + it * 100 + i : -1;
        if (r[i] != want) {
            fprintf(stderr, "rank %d it %d: element %d is %d, expected %d\n", me, it, i, r[i], want);
            return 0;
        }
    }
    return 1;
}

static int is_empty(const MPI_Status *st)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0;
}

static void restart_many(void **state)
{
    (void)state;
    int sb[SPAN], rb[SPAN];
    MPI_Request r[2];
    MPI_Status st;
    int (*init[4])(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = {
        MPI_Send_init, MPI_Ssend_init, MPI_Send_init, MPI_Rsend_init};
    for (int k = 0; k < 3; k++) {
        MPI_Request h0;
        assert_int_equal(MPI_Recv_init(rb, 1, vec, left, 5, comm, &r[0]), MPI_SUCCESS);
        assert_int_equal(init[k](sb, 1, vec, right, 5, comm, &r[1]), MPI_SUCCESS);
        h0 = r[0];
        for (int it = 0; it < 40; it++) {
            fill(sb, me, it);
            for (int i = 0; i < SPAN; i++) rb[i] = -1;
            if (it % 2) {
                assert_int_equal(MPI_Startall(2, r), MPI_SUCCESS);
            } else {
                assert_int_equal(MPI_Start(&r[0]), MPI_SUCCESS);
                assert_int_equal(MPI_Start(&r[1]), MPI_SUCCESS);
            }
            if (it % 3 == 0) {
                MPI_Status sts[2];
                assert_int_equal(MPI_Waitall(2, r, sts), MPI_SUCCESS);
                st = sts[0];
            } else {
                int done = 0;
                while (!done) assert_int_equal(MPI_Test(&r[0], &done, &st), MPI_SUCCESS);
                assert_int_equal(MPI_Wait(&r[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
            }
            assert_int_equal(r[0], h0); /* the handle stays */
            assert_int_equal(st.MPI_SOURCE, left);
            assert_int_equal(st.MPI_TAG, 5);
            {
                int n = -1;
                MPI_Get_count(&st, vec, &n);
                assert_int_equal(n, 1);
            }
            assert_true(check(rb, left, it));
            MPI_Barrier(comm); /* the ready send (k == 3) needs posted receives */
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
        assert_int_equal(r[0], MPI_REQUEST_NULL);
        assert_int_equal(r[1], MPI_REQUEST_NULL);
    }
}

/* Inactive requests: every completion call returns at once with an empty
 * status and leaves the handle. */
static void inactive(void **state)
{
    (void)state;
    int b[SPAN], f = 0, idx = 7, n = 7, ix[2];
    MPI_Request h[2];
    MPI_Status st, sts[2];
    assert_int_equal(MPI_Recv_init(b, 1, vec, left, 6, comm, &h[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Send_init(b, 1, vec, right, 6, comm, &h[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&h[0], &st), MPI_SUCCESS);
    assert_true(is_empty(&st));
    assert_int_equal(MPI_Test(&h[1], &f, &st), MPI_SUCCESS);
    assert_true(f && is_empty(&st));
    f = 0;
    assert_int_equal(MPI_Request_get_status(h[0], &f, &st), MPI_SUCCESS);
    assert_true(f);
    assert_int_equal(MPI_Waitall(2, h, sts), MPI_SUCCESS);
    assert_true(is_empty(&sts[0]) && is_empty(&sts[1]));
    assert_int_equal(MPI_Waitany(2, h, &idx, &st), MPI_SUCCESS);
    assert_int_equal(idx, MPI_UNDEFINED);
    assert_int_equal(MPI_Testany(2, h, &idx, &f, &st), MPI_SUCCESS);
    assert_true(f && idx == MPI_UNDEFINED);
    assert_int_equal(MPI_Waitsome(2, h, &n, ix, sts), MPI_SUCCESS);
    assert_int_equal(n, MPI_UNDEFINED);
    assert_int_equal(MPI_Testall(2, h, &f, sts), MPI_SUCCESS);
    assert_true(f);
    assert_true(h[0] != MPI_REQUEST_NULL && h[1] != MPI_REQUEST_NULL);
    /* Started once after all that: works. */
    fill(b, me, 1);
    {
        int rb[SPAN];
        MPI_Request rr;
        for (int i = 0; i < SPAN; i++) rb[i] = -1;
        MPI_Irecv(rb, 1, vec, left, 6, comm, &rr);
        assert_int_equal(MPI_Start(&h[1]), MPI_SUCCESS);
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
        MPI_Wait(&h[1], MPI_STATUS_IGNORE);
        assert_true(check(rb, left, 1));
    }
    MPI_Request_free(&h[0]);
    MPI_Request_free(&h[1]);
}

/* Persistent (ours and MPI's), mpiacc nonblocking and plain requests in one
 * array, through Waitsome, Testsome, Waitany and Testany. */
static void mixed_arrays(void **state)
{
    (void)state;
    int sb[SPAN], rb[SPAN], hs = me, hr = -1, ps = me + 10, pr = -1, ms[SPAN], mr[SPAN];
    MPI_Request r[8];
    for (int round = 0; round < 8; round++) {
        int left_n = 7, got[8] = {0}, n, idx[8], f;
        MPI_Status sts[8];
        fill(sb, me, round);
        fill(ms, me, round + 50);
        for (int i = 0; i < SPAN; i++) rb[i] = mr[i] = -1;
        if (round == 0) {
            MPI_Recv_init(rb, 1, vec, left, 7, comm, &r[0]);
            MPI_Send_init(sb, 1, vec, right, 7, comm, &r[1]);
            MPI_Recv_init(&pr, 1, MPI_INT, left, 8, comm, &r[2]); /* MPI's own */
            MPI_Send_init(&ps, 1, MPI_INT, right, 8, comm, &r[3]);
        }
        MPI_Startall(4, r);
        MPI_Irecv(mr, 1, vec, left, 9, comm, &r[4]);
        MPI_Isend(ms, 1, vec, right, 9, comm, &r[5]);
        MPI_Irecv(&hr, 1, MPI_INT, left, 10, comm, &r[6]);
        MPI_Isend(&hs, 1, MPI_INT, right, 10, comm, &r[7]);
        /* r[0..6] go through the multiple-completion calls, r[7] alone below. */
        while (left_n > 0) {
            switch (round % 4) {
            case 0: assert_int_equal(MPI_Waitsome(7, r, &n, idx, sts), MPI_SUCCESS); break;
            case 1: assert_int_equal(MPI_Testsome(7, r, &n, idx, sts), MPI_SUCCESS); break;
            case 2:
                assert_int_equal(MPI_Waitany(7, r, &idx[0], &sts[0]), MPI_SUCCESS);
                n = idx[0] == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
                break;
            default:
                f = 0;
                assert_int_equal(MPI_Testany(7, r, &idx[0], &f, &sts[0]), MPI_SUCCESS);
                n = f && idx[0] != MPI_UNDEFINED ? 1 : 0;
                break;
            }
            assert_true(n != MPI_UNDEFINED);
            for (int k = 0; k < n; k++) {
                assert_false(got[idx[k]]);
                got[idx[k]] = 1;
                left_n--;
                if (idx[k] == 0 || idx[k] == 4) assert_int_equal(sts[k].MPI_SOURCE, left);
            }
        }
        MPI_Wait(&r[7], MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) assert_true(r[i] != MPI_REQUEST_NULL); /* persistent: stay */
        for (int i = 4; i < 8; i++) assert_int_equal(r[i], MPI_REQUEST_NULL);
        assert_true(check(rb, left, round));
        assert_true(check(mr, left, round + 50));
        assert_int_equal(pr, left + 10);
        assert_int_equal(hr, left);
    }
    for (int i = 0; i < 4; i++) MPI_Request_free(&r[i]);
}

/* The dependency is the one at MPI_Start: data written after MPI_Init
 * (and after the init call) while the flag is down is what is sent. */
static void dependency_at_start(void **state)
{
    (void)state;
    int sb[SPAN], rb[SPAN], flag = 1;
    MPI_Datatype t = tagged_vector(&flag);
    MPI_Request s, r;
    MPI_Send_init(sb, 1, t, right, 11, comm, &s);
    MPI_Recv_init(rb, 1, vec, left, 11, comm, &r);
    MPI_Type_free(&t); /* allowed: the request keeps what it needs */
    for (int it = 0; it < 10; it++) {
        for (int i = 0; i < SPAN; i++) rb[i] = -1;
        fill(sb, me, 0);
        __atomic_store_n(&flag, 0, __ATOMIC_SEQ_CST);
        MPI_Start(&r);
        MPI_Start(&s);
        fill(sb, me, it + 1); /* the producer's work, before the flag goes up */
        __atomic_store_n(&flag, 1, __ATOMIC_SEQ_CST);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        assert_true(check(rb, left, it + 1));
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

/* The attributes are the init call's (resolved there once): an MPIACC_EVENT
 * set on the application's datatype afterwards does not reach the request,
 * whose starts keep waiting for the init call's flag (up), not for the new
 * one (down). */
static void attrs_of_init(void **state)
{
    int sb[SPAN], rb[SPAN], flag = 1, down = 0, done = 0;
    MPI_Datatype t = tagged_vector(&flag);
    MPI_Request s, r;
    (void)state;
    assert_int_equal(MPI_Send_init(sb, 1, t, right, 18, comm, &s), MPI_SUCCESS);
    assert_int_equal(MPI_Recv_init(rb, 1, vec, left, 18, comm, &r), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_EVENT, &down), MPI_SUCCESS);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < SPAN; i++) rb[i] = -1;
        fill(sb, me, it + 20);
        assert_int_equal(MPI_Start(&r), MPI_SUCCESS);
        assert_int_equal(MPI_Start(&s), MPI_SUCCESS);
        done = 0;
        for (double t0 = MPI_Wtime(); !done && MPI_Wtime() - t0 < 10;) MPI_Test(&s, &done, MPI_STATUS_IGNORE);
        if (!done) { /* it waits for the new flag: release it, so that both ranks finish, then fail */
            __atomic_store_n(&down, 1, __ATOMIC_SEQ_CST);
            MPI_Wait(&s, MPI_STATUS_IGNORE);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        assert_true(done);
        assert_true(check(rb, left, it + 20));
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    MPI_Type_free(&t);
}

/* Freeing an active request: the operation still completes (the peer gets
 * its data); freeing an inactive one; cancel of a started receive. */
static void free_and_cancel(void **state)
{
    (void)state;
    int sb[SPAN], rb[SPAN], f = 0;
    MPI_Request s, r, c;
    MPI_Status st;
    fill(sb, me, 3);
    for (int i = 0; i < SPAN; i++) rb[i] = -1;
    MPI_Send_init(sb, 1, vec, right, 12, comm, &s);
    MPI_Start(&s);
    MPI_Request_free(&s); /* active */
    assert_int_equal(s, MPI_REQUEST_NULL);
    MPI_Recv(rb, 1, vec, left, 12, comm, MPI_STATUS_IGNORE);
    assert_true(check(rb, left, 3));
    MPI_Recv_init(rb, 1, vec, left, 13, comm, &r);
    MPI_Request_free(&r); /* inactive */
    assert_int_equal(r, MPI_REQUEST_NULL);
    /* Cancel: a receive nothing matches. */
    MPI_Recv_init(rb, 1, vec, left, 14, comm, &c);
    MPI_Start(&c);
    assert_int_equal(MPI_Cancel(&c), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&c, &st), MPI_SUCCESS);
    MPI_Test_cancelled(&st, &f);
    assert_true(f);
    assert_true(c != MPI_REQUEST_NULL);
    /* Restarted after the cancel: receives normally. */
    fill(sb, me, 4);
    for (int i = 0; i < SPAN; i++) rb[i] = -1;
    MPI_Start(&c);
    MPI_Send(sb, 1, vec, right, 14, comm);
    MPI_Wait(&c, MPI_STATUS_IGNORE);
    assert_true(check(rb, left, 4));
    MPI_Request_free(&c);
    MPI_Barrier(comm);
}

static void errors(void **state)
{
    (void)state;
    int b[SPAN], cls = 0, small[2];
    MPI_Request r, s;
    MPI_Status st;
    /* Argument errors at the init call, MPI's classes. */
    assert_int_not_equal(MPI_Send_init(b, 1, vec, np + 3, 0, comm, &r), MPI_SUCCESS);
    assert_int_not_equal(MPI_Recv_init(b, -1, vec, left, 0, comm, &r), MPI_SUCCESS);
    MPI_Error_class(MPI_Recv_init(b, 1, vec, left, -5, comm, &r), &cls);
    assert_int_equal(cls, MPI_ERR_TAG);
    /* Starting an active request. */
    MPI_Recv_init(b, 1, vec, left, 15, comm, &r);
    assert_int_equal(MPI_Start(&r), MPI_SUCCESS);
    MPI_Error_class(MPI_Start(&r), &cls);
    assert_int_equal(cls, MPI_ERR_ARG);
    /* Truncation through the started operation, raised by MPI_Wait. */
    MPI_Send_init(b, 1, vec, right, 15, comm, &s);
    MPI_Start(&s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    {
        MPI_Datatype t = mpiacc_test_host_ints(2, &flag_ok);
        MPI_Request rs;
        MPI_Recv_init(small, 1, t, left, 16, comm, &rs);
        MPI_Start(&rs);
        MPI_Send(b, 1, vec, right, 16, comm);
        MPI_Error_class(MPI_Wait(&rs, &st), &cls);
        assert_int_equal(cls, MPI_ERR_TRUNCATE);
        assert_true(rs != MPI_REQUEST_NULL);
        MPI_Request_free(&rs);
        MPI_Type_free(&t);
    }
    MPI_Request_free(&r);
    MPI_Request_free(&s);
    MPI_Barrier(comm);
}

/* MPI_Bsend_init: buffered, the data taken at each MPI_Start. */
static void bsend_init(void **state)
{
    (void)state;
    int sb[SPAN], rb[SPAN], size = 0;
    void *att, *old;
    MPI_Request s;
    MPI_Pack_size(1, vec, comm, &size);
    att = malloc((size_t)size * 4 + 4 * MPI_BSEND_OVERHEAD);
    MPI_Buffer_attach(att, size * 4 + 4 * MPI_BSEND_OVERHEAD);
    MPI_Bsend_init(sb, 1, vec, right, 17, comm, &s);
    for (int it = 0; it < 5; it++) {
        fill(sb, me, it);
        assert_int_equal(MPI_Start(&s), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
        fill(sb, me, 99); /* buffered already */
        for (int i = 0; i < SPAN; i++) rb[i] = -1;
        MPI_Recv(rb, 1, vec, left, 17, comm, MPI_STATUS_IGNORE);
        assert_true(check(rb, left, it));
    }
    MPI_Request_free(&s);
    MPI_Buffer_detach(&old, &size);
    free(att);
}

/* MPI_THREAD_MULTIPLE: threads with persistent pairs of their own (one
 * tag each) start and complete them concurrently. */
#define NTHREADS 3
static int thread_bad;

static void *thread_body(void *arg)
{
    int tid = (int)(intptr_t)arg, sb[SPAN], rb[SPAN];
    MPI_Request q[2];
    MPI_Recv_init(rb, 1, vec, left, 40 + tid, comm, &q[0]);
    MPI_Send_init(sb, 1, vec, right, 40 + tid, comm, &q[1]);
    for (int it = 0; it < 30; it++) {
        fill(sb, me, tid * 1000 + it);
        for (int i = 0; i < SPAN; i++) rb[i] = -1;
        if (MPI_Startall(2, q) != MPI_SUCCESS || MPI_Waitall(2, q, MPI_STATUSES_IGNORE) != MPI_SUCCESS ||
            !check(rb, left, tid * 1000 + it))
            __atomic_add_fetch(&thread_bad, 1, __ATOMIC_SEQ_CST);
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    return NULL;
}

static void threads(void **state)
{
    (void)state;
    int provided = 0;
    pthread_t th[NTHREADS];
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) skip();
    for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, thread_body, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
    assert_int_equal(thread_bad, 0);
}

int main(int argc, char **argv)
{
    int failed;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(restart_many), cmocka_unit_test(inactive), cmocka_unit_test(mixed_arrays),
        cmocka_unit_test(dependency_at_start), cmocka_unit_test(attrs_of_init), cmocka_unit_test(free_and_cancel),
        cmocka_unit_test(errors),
        cmocka_unit_test(bsend_init), cmocka_unit_test(threads),
    };
    int provided;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: mpiexec -n 2|3 %s\nPersistent point-to-point requests with pooled datatypes.\n", argv[0]);
        return 0;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    right = (me + 1) % np;
    left = (me + np - 1) % np;
    vec = tagged_vector(&flag_ok);
    failed = MPIACC_TEST_RUN("persist", tests, NULL, NULL);
    MPI_Type_free(&vec);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
