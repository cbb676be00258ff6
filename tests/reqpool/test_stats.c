/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPIACC_Get_stats after known traffic (2 ranks): rank 0 sends NMSG pooled
 * host messages of N ints, rank 1 receives them and cancels one receive
 * nothing matches.  The counts, bytes, pending operations and pool figures
 * must match, in the staged protocol's fixed column; a caller with an older (smaller) structure gets only the
 * fields it knows; bad arguments are refused.
 */
#include <stddef.h>
#include <string.h>

#include "pool_util.h"

#define N 100
#define NMSG 5
static int rank;

/* The staged protocol's column: fixed (MPIACC_PROTO_STAGED), and named. */
static int staged_col(const MPIACC_Stats *s)
{
    assert_string_equal(s->protocol[MPIACC_PROTO_STAGED], "staged");
    return MPIACC_PROTO_STAGED;
}

/* Every fixed column carries its name from the start, before any traffic
 * (the columns do not depend on the order of first use). */
static void fixed_columns(void **state)
{
    MPIACC_Stats s = {.size = sizeof s};
    static const struct { int col; const char *name; } cols[] = {
        {MPIACC_PROTO_STAGED, "staged"}, {MPIACC_PROTO_ORDERED, "ordered"}, {MPIACC_PROTO_DEVICE, "device"},
        {MPIACC_PROTO_MPI, "MPI"}, {MPIACC_PROTO_COLL, "coll"}};
    assert_true(MPIACC_PROTO_NFIXED <= MPIACC_STATS_PROTOCOLS);
    assert_int_equal(MPIACC_Get_stats(&s), MPI_SUCCESS);
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) assert_string_equal(s.protocol[cols[i].col], cols[i].name);
    for (int p = MPIACC_PROTO_NFIXED; p < MPIACC_STATS_PROTOCOLS; p++) assert_string_equal(s.protocol[p], "");
}

static void counts_after_traffic(void **state)
{
    MPIACC_Stats before = {.size = sizeof before}, after = {.size = sizeof after};
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 0, &gate);
    int buf[N], p;
    MPI_Request r;
    MPI_Status st;
    int cancelled = 0;

    assert_int_equal(MPIACC_Get_stats(&before), MPI_SUCCESS);
    assert_int_equal(before.version, MPIACC_STATS_VERSION);
    for (int i = 0; i < NMSG; i++) {
        fill_ints(buf, N, i);
        if (rank == 0) assert_int_equal(MPI_Send(buf, 1, t, 1, i, MPI_COMM_WORLD), MPI_SUCCESS);
        else assert_int_equal(MPI_Recv(buf, 1, t, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    if (rank == 1) {
        assert_int_equal(MPI_Irecv(buf, 1, t, 0, 999, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Cancel(&r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        MPI_Test_cancelled(&st, &cancelled);
        assert_true(cancelled);
    }
    assert_int_equal(MPIACC_Get_stats(&after), MPI_SUCCESS);
    p = staged_col(&after);
    assert_true(p >= 0);
    if (rank == 0) {
        assert_int_equal(after.sends[MPIACC_KIND_HOST][p] - (p == staged_col(&before) ? before.sends[MPIACC_KIND_HOST][p] : 0), NMSG);
        assert_int_equal(after.bytes_sent[MPIACC_KIND_HOST][p] -
                             (p == staged_col(&before) ? before.bytes_sent[MPIACC_KIND_HOST][p] : 0),
                         (unsigned long long)NMSG * N * sizeof(int));
        assert_int_equal(after.receives[MPIACC_KIND_HOST][p], 0);
    } else {
        assert_int_equal(after.receives[MPIACC_KIND_HOST][p] - (p == staged_col(&before) ? before.receives[MPIACC_KIND_HOST][p] : 0), NMSG);
        assert_int_equal(after.bytes_received[MPIACC_KIND_HOST][p] -
                             (p == staged_col(&before) ? before.bytes_received[MPIACC_KIND_HOST][p] : 0),
                         (unsigned long long)NMSG * N * sizeof(int));
        assert_int_equal(after.cancelled - before.cancelled, 1);
        assert_int_equal(after.sends[MPIACC_KIND_HOST][p], 0);
    }
    assert_int_equal(after.failed, before.failed);
    assert_int_equal(after.pending, 0);
    assert_true(after.ops_hwm >= 1);
    assert_true(after.staging_allocs[MPIACC_KIND_HOST] >= 1);
    assert_true(after.staging_allocs[MPIACC_KIND_HOST] + after.staging_reuses[MPIACC_KIND_HOST] >= NMSG);
    assert_true(after.staging_bytes_hwm[MPIACC_KIND_HOST] >= N * sizeof(int));
    assert_true(after.dep_wait_seconds >= 0 && after.pack_seconds >= 0 && after.unpack_seconds >= 0);
    assert_int_equal(after.ipc_opens + after.ipc_hits + after.ipc_evictions, 0);
    MPI_Type_free(&t);
}

static void older_struct_and_bad_args(void **state)
{
    MPIACC_Stats s;
    memset(&s, 0xab, sizeof s);
    s.size = offsetof(MPIACC_Stats, sends); /* a caller knowing fields up to protocol[] */
    assert_int_equal(MPIACC_Get_stats(&s), MPI_SUCCESS);
    assert_int_equal(s.version, MPIACC_STATS_VERSION);
    assert_int_equal(s.size, offsetof(MPIACC_Stats, sends));
    assert_int_equal(s.sends[0][0], 0xababababababababull); /* untouched */
    assert_int_equal(MPIACC_Get_stats(NULL), MPI_ERR_ARG);
    s.size = 4;
    assert_int_equal(MPIACC_Get_stats(&s), MPI_ERR_ARG);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_columns), cmocka_unit_test(counts_after_traffic),
        cmocka_unit_test(older_struct_and_bad_args),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return mpiacc_test_end(MPIACC_TEST_RUN("stats", tests, NULL, NULL));
}
