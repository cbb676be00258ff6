/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/trace.h, the records behind bench/pingpong --breakdown (2 ranks):
 * nothing is recorded while tracing is off; with it on, a pooled host
 * message (MPIACC_BUF_HOST with an event) leaves one call record per call
 * on each side (pooled, its phases adding up to no more than the call) and
 * one op record per operation (time in IN_FLIGHT, and in UNPACKING or
 * PACKING on the side that copies), and an untagged message leaves none.
 */
#include <string.h>

#include "pool_util.h"
#include "core/core_testhooks.h"

#define N 64
#define CAP 64
static mpiacc_core_trace_rec_t recs[CAP];

static long exchange(MPI_Datatype t, int rounds)
{
    int rank, buf[2 * N];
    long n, dropped = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 2 * N; i++) buf[i] = rank * 1000 + i;
    for (int r = 0; r < rounds; r++) {
        if (rank == 0) MPIACC_TEST_MPI_OK(MPI_Send(buf, 1, t, 1, 5, MPI_COMM_WORLD));
        else MPIACC_TEST_MPI_OK(MPI_Recv(buf, 1, t, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    n = mpiacc_core_trace_take(recs, CAP, &dropped);
    assert_int_equal(dropped, 0);
    return n;
}

static void off_records_nothing(void **state)
{
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 1, &gate);
    (void)state;
    assert_int_equal(mpiacc_core_trace_start(0), 1);
    assert_int_equal(exchange(t, 2), 0);
    MPI_Type_free(&t);
}

static void pooled_and_untagged(void **state)
{
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 1, &gate);
    int rank, rounds = 3, calls = 0, ops = 0;
    long n;
    (void)state;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    assert_int_equal(mpiacc_core_trace_start(CAP), 1);
    n = exchange(t, rounds);
    for (long i = 0; i < n; i++) {
        const mpiacc_core_trace_rec_t *r = &recs[i];
        assert_int_equal(r->is_send, rank == 0);
        if (r->op) {
            ops++;
            assert_true(r->ns[MPIACC_RP_IN_FLIGHT] > 0);
            assert_true(r->ns[rank == 0 ? MPIACC_RP_PACKING : MPIACC_RP_UNPACKING] > 0);
        } else {
            long long sum = 0;
            calls++;
            assert_int_equal(r->pooled, 1);
            for (int p = 0; p < MPIACC_CORE_TR_CALL; p++) sum += r->ns[p];
            assert_true(r->ns[MPIACC_CORE_TR_CALL] > 0 && sum <= r->ns[MPIACC_CORE_TR_CALL]);
            assert_true(r->ns[MPIACC_CORE_TR_POST] > 0);
        }
    }
    assert_int_equal(calls, rounds);
    assert_int_equal(ops, rounds);
    MPI_Type_free(&t);
    /* untagged: the host fast path, never the dispatcher */
    assert_int_equal(exchange(MPI_INT, 2), 0);
    assert_int_equal(mpiacc_core_trace_start(0), 1);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(off_records_nothing),
    cmocka_unit_test(pooled_and_untagged),
};

MPIACC_TEST_MAIN("usage: mpiexec -n 2 %s\nThe phase records of bench/pingpong --breakdown (core/trace.h).\n",
                 "trace", tests)
