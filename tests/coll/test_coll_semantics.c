/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives' semantics on the CPU backend (MPIACC_BUF_HOST with an
 * MPIACC_EVENT flag that another thread sets late: a slow dependency):
 *  - order: a device MPI_Ibcast waiting for its dependency, then host
 *    collectives on the same communicator (nonblocking and blocking), which
 *    must not be posted before it on any process;
 *  - nonblocking collectives completed out of order (MPI_Waitany, reverse
 *    MPI_Waitall), MPI_Reduce_local, and every state transition of a
 *    collective (mpiacc_rp_transitions);
 *  - errors through MPI_ERRORS_RETURN: persistent collectives refuse tagged
 *    datatypes (MPI_ERR_TYPE naming the call), bad count and root, a
 *    predefined operation on a mixed datatype, mixed buffer kinds;
 *  - MPI_THREAD_MULTIPLE: collectives on different communicators from
 *    different threads. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "mpiacc.h"
#include "reqpool/reqpool.h"

#define N 64
static int rank, size;
static atomic_int ready_now = 1;
/* The state a collective's staged steps start from: NEW, or on a direct
 * MPI_COMM_WORLD (the direct case) EXCHANGING, where an operation of a kind
 * with an on-device algorithm goes staged after the records' exchange
 * (src/coll/ipc_nb.c: these buffers have no IPC table). */
static const int first = MPIACC_RP_NEW;

static void *set_later(void *p)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store((atomic_int *)p, 1);
    return NULL;
}

static long tr(int from, int to)
{
    return atomic_load(&mpiacc_rp_transitions[from][to]);
}

static void test_order_slow_dependency(void **state)
{
    atomic_int flag = 0;
    MPI_Datatype t = mpiacc_test_host_tagged(MPI_INT, &flag);
    int b[N], s[N], r[N], r2[N], exp_sum = size * (size - 1) / 2;
    MPI_Request req[2];
    pthread_t th;
    long dep0 = tr(first, MPIACC_RP_DEP_PENDING), dp = tr(MPIACC_RP_DEP_PENDING, MPIACC_RP_PACKING),
         dr = tr(MPIACC_RP_DEP_PENDING, MPIACC_RP_READY), pr = tr(MPIACC_RP_PACKING, MPIACC_RP_READY),
         ri = tr(MPIACC_RP_READY, MPIACC_RP_IN_FLIGHT), iu = tr(MPIACC_RP_IN_FLIGHT, MPIACC_RP_UNPACKING),
         ud = tr(MPIACC_RP_UNPACKING, MPIACC_RP_DONE), nr = tr(MPIACC_RP_NEW, MPIACC_RP_READY);
    for (int i = 0; i < N; i++)
        b[i] = rank == 0 ? 1000 + i : -1, s[i] = rank, r[i] = r2[i] = -7;
    /* ranks start together (a GPU machine creates its CUDA contexts in
     * MPI_Init one rank after the other): on a direct communicator the
     * Ibcast's record exchange must be over well before set_later's flag */
    assert_int_equal(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    /* every rank's device Ibcast waits for its flag; the host collectives
     * behind it must wait too */
    assert_int_equal(MPI_Ibcast(b, N, t, 0, MPI_COMM_WORLD, &req[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Iallreduce(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]), MPI_SUCCESS);
    pthread_create(&th, NULL, set_later, &flag);
    /* a blocking host collective waits for its turn as well */
    assert_int_equal(MPI_Allreduce(s, r2, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, (MPI_Request[]){req[1], req[0]}, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    pthread_join(th, NULL);
    for (int i = 0; i < N; i++) {
        assert_int_equal(b[i], 1000 + i);
        assert_int_equal(r[i], exp_sum);
        assert_int_equal(r2[i], size - 1);
    }
    /* the collective's arrows */
    assert_true(tr(first, MPIACC_RP_DEP_PENDING) > dep0);
    if (rank == 0)
        assert_true(tr(MPIACC_RP_DEP_PENDING, MPIACC_RP_PACKING) > dp);
    else
        assert_true(tr(MPIACC_RP_DEP_PENDING, MPIACC_RP_READY) > dr);
    if (rank == 0) assert_true(tr(MPIACC_RP_PACKING, MPIACC_RP_READY) > pr);
    assert_true(tr(MPIACC_RP_NEW, MPIACC_RP_READY) > nr);            /* the Iallreduce queued behind */
    assert_true(tr(MPIACC_RP_READY, MPIACC_RP_IN_FLIGHT) >= ri + 2); /* the Ibcast and the queued Iallreduce */
    assert_true(tr(MPIACC_RP_IN_FLIGHT, MPIACC_RP_UNPACKING) >= iu + 2);
    assert_true(tr(MPIACC_RP_UNPACKING, MPIACC_RP_DONE) >= ud + 2);
    MPI_Type_free(&t);
}

static void test_out_of_order_completion(void **state)
{
    MPI_Datatype t = mpiacc_test_host_tagged(MPI_INT, &ready_now);
    int a_s[8 * N], a_r[8 * N], g_r[8], rs_s[8 * 4], rs_r[4], loc_in[4] = {1, 2, 3, 4}, loc_io[4] = {10, 20, 30, 40};
    MPI_Request req[3];
    int done = 0, idx;
    long np = tr(MPIACC_RP_NEW, MPIACC_RP_PACKING) + tr(first, MPIACC_RP_PACKING) * (first != MPIACC_RP_NEW);
    for (int i = 0; i < size * N; i++)
        a_s[i] = rank * 100000 + i, a_r[i] = -1;
    for (int i = 0; i < size * 4; i++)
        rs_s[i] = i;
    assert_int_equal(MPI_Ialltoall(a_s, N, t, a_r, N, t, MPI_COMM_WORLD, &req[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Iallgather(&rank, 1, MPI_INT, g_r, 1, MPI_INT, MPI_COMM_WORLD, &req[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Ireduce_scatter_block(rs_s, rs_r, 4, t, MPI_SUM, MPI_COMM_WORLD, &req[2]), MPI_SUCCESS);
    while (done < 3) {
        assert_int_equal(MPI_Waitany(3, req, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
        done++;
    }
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            assert_int_equal(a_r[p * N + i], p * 100000 + rank * N + i);
    for (int p = 0; p < size; p++)
        assert_int_equal(g_r[p], p);
    /* the Ialltoall (after the exchange on a direct communicator), the Ireduce_scatter_block */
    assert_true(tr(MPIACC_RP_NEW, MPIACC_RP_PACKING) + tr(first, MPIACC_RP_PACKING) * (first != MPIACC_RP_NEW) >=
                np + 2);
    for (int i = 0; i < 4; i++)
        assert_int_equal(rs_r[i], size * (rank * 4 + i));
    /* MPI_Reduce_local (blocking: staged in the calling thread) */
    assert_int_equal(MPI_Reduce_local(loc_in, loc_io, 4, t, MPI_SUM), MPI_SUCCESS);
    for (int i = 0; i < 4; i++)
        assert_int_equal(loc_io[i], 11 * (i + 1));
    MPI_Type_free(&t);
}

static void expect_error(int rc, int cls, const char *words)
{
    int c = -1, l = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &c);
    MPI_Error_string(rc, msg, &l);
    if (c != cls || !strstr(msg, words))
        fail_msg("error class %d (want %d), message \"%s\" (want \"%s\")", c, cls, msg, words);
}

static void test_errors(void **state)
{
    MPI_Comm comm;
    MPI_Datatype t = mpiacc_test_host_tagged(MPI_INT, &ready_now), st, ts[8];
    MPI_Request req = MPI_REQUEST_NULL;
    int buf[64] = {0}, cnt[8], dsp[8];
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype m[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    expect_error(MPI_Bcast_init(buf, 4, t, 0, comm, MPI_INFO_NULL, &req), MPI_ERR_TYPE, "MPI_Bcast_init");
    for (int i = 0; i < 8; i++)
        ts[i] = i == size - 1 ? t : MPI_INT, cnt[i] = 1, dsp[i] = 4 * i;
    expect_error(MPI_Alltoallw_init(buf, cnt, dsp, ts, buf + 32, cnt, dsp, ts, comm, MPI_INFO_NULL, &req), MPI_ERR_TYPE,
                 "MPI_Alltoallw_init");
    expect_error(MPI_Bcast(buf, -1, t, 0, comm), MPI_ERR_COUNT, "negative count");
    expect_error(MPI_Ibcast(buf, 1, t, size, comm, &req), MPI_ERR_ROOT, "invalid root");
    /* a struct mixing int and double cannot take MPI_SUM */
    MPI_Type_create_struct(2, bl, d, m, &st);
    MPI_Type_commit(&st);
    MPI_Type_set_attr(st, MPIACC_BUF_TYPE, (void *)(intptr_t)MPIACC_BUF_HOST);
    MPI_Type_set_attr(st, MPIACC_EVENT, (void *)&ready_now);
    expect_error(MPI_Allreduce(MPI_IN_PLACE, buf, 1, st, MPI_SUM, comm), MPI_ERR_OP, "predefined operation");
    /* one buffer described by tagged and untagged datatypes */
    expect_error(MPI_Alltoallw(buf, cnt, dsp, ts, buf + 32, cnt, dsp, ts, comm), MPI_ERR_TYPE, "mix buffer kinds");
    /* intercommunicators: device collectives refused */
    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        expect_error(MPI_Bcast(buf, 1, t, rank == 0 ? MPI_ROOT : (rank % 2 ? 0 : MPI_PROC_NULL), inter), MPI_ERR_COMM,
                     "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Type_free(&st);
    MPI_Type_free(&t);
    MPI_Comm_free(&comm);
}

static void *thread_body(void *p)
{
    MPI_Comm comm = *(MPI_Comm *)p;
    MPI_Datatype t = mpiacc_test_host_tagged(MPI_INT, &ready_now);
    int s[4], r[4], *bad = malloc(sizeof *bad), a_s[8], a_r[8];
    MPI_Request req[2];
    *bad = 0;
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < 4; i++)
            s[i] = rank + it + i;
        for (int i = 0; i < size; i++)
            a_s[i] = rank * 100 + i + it;
        MPI_Iallreduce(s, r, 4, t, MPI_SUM, comm, &req[0]);
        MPI_Ialltoall(a_s, 1, t, a_r, 1, t, comm, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 4; i++)
            *bad += r[i] != size * (size - 1) / 2 + size * (it + i);
        for (int i = 0; i < size; i++)
            *bad += a_r[i] != i * 100 + rank + it;
    }
    MPI_Type_free(&t);
    return bad;
}

static void test_threads(void **state)
{
    int provided;
    MPI_Comm c[2];
    pthread_t th[2];
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) skip();
    MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &c[1]);
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, thread_body, &c[i]);
    for (int i = 0; i < 2; i++) {
        void *bad;
        pthread_join(th[i], &bad);
        assert_int_equal(*(int *)bad, 0);
        free(bad);
    }
    MPI_Comm_free(&c[0]);
    MPI_Comm_free(&c[1]);
}

int main(int argc, char **argv)
{
    int provided;
    if (mpiacc_test_help(argc, argv, "usage: %s\nOrder, completion, errors and threads of the collectives (CPU "
                                     "backend).\n"))
        return 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_slow_dependency), cmocka_unit_test(test_out_of_order_completion),
        cmocka_unit_test(test_errors), cmocka_unit_test(test_threads),
    };
    return mpiacc_test_end(MPIACC_TEST_RUN("coll_semantics", tests, NULL, NULL));
}
