/* SPDX-License-Identifier: BSD-3-Clause */
/* Pool requests with every MPI completion call, the MPI-ACC Fig 5 loop,
 * MPI_Pack/MPI_Unpack through a backend, steady-state allocation, and
 * MPI_THREAD_MULTIPLE (2 ranks). */
#include <pthread.h>
#include <string.h>

#include "pool_util.h"

#define N 128
#define NREQ 6
static int rank, provided;

/* rank 0 sends NREQ gated messages, rank 1 receives them; each completion
 * call in turn must see them complete.  The request arrays hold
 * MPI_REQUEST_NULL at both ends, as applications' arrays do. */
static void exchange(int which)
{
    int bufs[NREQ][N], ref[N];
    atomic_int gate = 0;
    MPI_Request all[NREQ + 2], *r = all + 1;
    MPI_Status st[NREQ + 2];
    MPI_Datatype t = pool_type(N, 0, &gate);
    int flag = 0, idx, outcount, indices[NREQ + 2], done = 0;

    all[0] = all[NREQ + 1] = MPI_REQUEST_NULL;
    for (int i = 0; i < NREQ; i++) {
        if (rank == 0) {
            fill_ints(bufs[i], N, which * 100 + i);
            MPI_Isend(bufs[i], 1, t, 1, i, MPI_COMM_WORLD, &r[i]);
        } else {
            memset(bufs[i], 0, sizeof bufs[i]);
            MPI_Irecv(bufs[i], 1, t, 0, i, MPI_COMM_WORLD, &r[i]);
        }
    }
    atomic_store(&gate, 1);
    switch (which) {
    case 0: assert_int_equal(MPI_Waitall(NREQ + 2, all, st), MPI_SUCCESS); break;
    case 1:
        for (int k = 0; k < NREQ; k++) {
            assert_int_equal(MPI_Waitany(NREQ + 2, all, &idx, st), MPI_SUCCESS);
            assert_true(idx >= 1 && idx <= NREQ);
        }
        MPI_Waitany(NREQ + 2, all, &idx, st);
        assert_int_equal(idx, MPI_UNDEFINED);
        break;
    case 2:
        while (done < NREQ) {
            MPI_Waitsome(NREQ + 2, all, &outcount, indices, st);
            done += outcount;
        }
        break;
    case 3:
        for (int k = 0; k < NREQ; k++) {
            do MPI_Test(&r[k], &flag, &st[k]);
            while (!flag);
        }
        break;
    case 4:
        do MPI_Testall(NREQ + 2, all, &flag, st);
        while (!flag);
        break;
    case 5:
        while (done < NREQ) {
            MPI_Testany(NREQ + 2, all, &idx, &flag, st);
            if (flag && idx != MPI_UNDEFINED) done++;
        }
        break;
    case 6:
        while (done < NREQ) {
            MPI_Testsome(NREQ + 2, all, &outcount, indices, st);
            done += outcount;
        }
        break;
    case 7:
        /* MPI_Request_get_status does not free; then MPI_Request_free */
        for (int k = 0; k < NREQ; k++) {
            do MPI_Request_get_status(r[k], &flag, &st[k]);
            while (!flag);
            MPI_Request_free(&r[k]);
            assert_int_equal(r[k], MPI_REQUEST_NULL);
        }
        break;
    }
    if (rank == 1) {
        for (int i = 0; i < NREQ; i++) {
            fill_ints(ref, N, which * 100 + i);
            assert_memory_equal(bufs[i], ref, sizeof ref);
        }
    }
    for (int i = 0; i < NREQ + 2; i++) assert_int_equal(all[i], MPI_REQUEST_NULL);
    MPI_Type_free(&t);
}

static void completion_calls(void **s)
{
    for (int which = 0; which < 8; which++) exchange(which);
}

/* Request freed before completion: the operation still completes. */
static void free_before_completion(void **s)
{
    int buf[N], ref[N];
    atomic_int gate = 0;
    MPI_Datatype t = pool_type(N, 0, &gate);
    MPI_Request r;
    if (rank == 0) {
        fill_ints(buf, N, 77);
        MPI_Isend(buf, 1, t, 1, 50, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        atomic_store(&gate, 1);
    } else {
        MPI_Recv(buf, N, MPI_INT, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fill_ints(ref, N, 77);
        assert_memory_equal(buf, ref, sizeof ref);
    }
    for (int total = 1; total > 0;) {
        int mine = mpiacc_rp_pending();
        MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Type_free(&t);
}

/* MPI-ACC Fig 5: dup, set attributes, Isend, free the type, every
 * iteration; Waitall at the end. */
static void fig5_loop(void **s)
{
    enum { ITERS = 16 };
    static int bufs[ITERS][N];
    atomic_int gate = 0;
    MPI_Request r[ITERS];
    MPI_Datatype base;
    int ref[N];
    MPI_Type_contiguous(N, MPI_INT, &base);
    MPI_Type_commit(&base);
    for (int i = 0; i < ITERS; i++) {
        MPI_Datatype t;
        MPI_Type_dup(base, &t);
        MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
        MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&gate);
        if (rank == 0) {
            fill_ints(bufs[i], N, 500 + i);
            MPI_Isend(bufs[i], 1, t, 1, 60 + i, MPI_COMM_WORLD, &r[i]);
        } else {
            MPI_Irecv(bufs[i], 1, t, 0, 60 + i, MPI_COMM_WORLD, &r[i]);
        }
        MPI_Type_free(&t);
    }
    atomic_store(&gate, 1);
    assert_int_equal(MPI_Waitall(ITERS, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    if (rank == 1)
        for (int i = 0; i < ITERS; i++) {
            fill_ints(ref, N, 500 + i);
            assert_memory_equal(bufs[i], ref, sizeof ref);
        }
    MPI_Type_free(&base);
}

/* MPI_Pack / MPI_Unpack on a pool datatype equal MPICH's own. */
static void pack_unpack_through_backend(void **s)
{
    int in[2 * N], out[2 * N];
    char mine[N * 4], ref[N * 4];
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 1, &gate), plain;
    int pos = 0, rpos = 0;
    MPI_Type_vector(N, 1, 2, MPI_INT, &plain);
    MPI_Type_commit(&plain);
    fill_ints(in, 2 * N, 8);
    assert_int_equal(MPI_Pack(in, 1, t, mine, sizeof mine, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    PMPI_Pack(in, 1, plain, ref, sizeof ref, &rpos, MPI_COMM_WORLD);
    assert_int_equal(pos, rpos);
    assert_memory_equal(mine, ref, sizeof ref);
    memset(out, 0, sizeof out);
    pos = 0;
    assert_int_equal(MPI_Unpack(mine, sizeof mine, &pos, out, 1, t, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int i = 0; i < N; i++) assert_int_equal(out[2 * i], in[2 * i]);
    pos = 8;
    assert_int_not_equal(MPI_Pack(in, 1, t, mine, sizeof mine, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    MPI_Type_free(&t);
    MPI_Type_free(&plain);
}

/* After warm-up, steady traffic allocates no staging. */
static void steady_state_no_allocation(void **s)
{
    mpiacc_util_pool_stats_t before, after;
    exchange(0);
    mpiacc_proto_staging_stats(MPIACC_KIND_HOST, &before);
    for (int i = 0; i < 5; i++) exchange(0);
    mpiacc_proto_staging_stats(MPIACC_KIND_HOST, &after);
    assert_int_equal(after.allocs, before.allocs);
    assert_true(after.reuses > before.reuses);
    assert_int_equal(after.cur_objs, before.cur_objs);
}

/* MPI_THREAD_MULTIPLE: 4 threads each send and receive tagged buffers. */
#define THREADS 4
#define TMSGS 50
static void *thread_body(void *arg)
{
    int id = (int)(intptr_t)arg, peer = 1 - rank, bad = 0;
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 1, &gate);
    static _Thread_local int sbuf[2 * N], rbuf[2 * N], ref[2 * N];
    for (int m = 0; m < TMSGS; m++) {
        MPI_Request r[2];
        fill_ints(sbuf, 2 * N, rank * 10000 + id * 100 + m);
        memset(rbuf, 0, sizeof rbuf);
        MPI_Irecv(rbuf, 1, t, peer, 1000 + id, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(sbuf, 1, t, peer, 1000 + id, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        fill_ints(ref, 2 * N, peer * 10000 + id * 100 + m);
        for (int i = 0; i < N; i++) bad += rbuf[2 * i] != ref[2 * i];
    }
    MPI_Type_free(&t);
    return (void *)(intptr_t)bad;
}

static void threads(void **s)
{
    pthread_t th[THREADS];
    if (provided < MPI_THREAD_MULTIPLE) skip();
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, thread_body, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) {
        void *bad;
        pthread_join(th[i], &bad);
        assert_int_equal((int)(intptr_t)bad, 0);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(completion_calls, pool_barrier),
        cmocka_unit_test_setup(free_before_completion, pool_barrier),
        cmocka_unit_test_setup(fig5_loop, pool_barrier),
        cmocka_unit_test_setup(pack_unpack_through_backend, pool_barrier),
        cmocka_unit_test_setup(steady_state_no_allocation, pool_barrier),
        cmocka_unit_test_setup(threads, pool_barrier),
    };
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return mpiacc_test_end(MPIACC_TEST_RUN("pool_api", tests, NULL, NULL));
}
