/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receives from MPI_ANY_SOURCE through a matched probe (src/protocol/
 * wildcard.c, the MATCHING arrows of src/reqpool/op.c).  CTest runs it on
 * MPICH's UCX netmod with MPIR_CVAR_NOLOCAL=1, where MPICH 5.0.2 loses a
 * wildcard receive whose message already waits at UCX (the messages here
 * are made to wait with MPI_Iprobe of another tag first: MPI's own wildcard
 * receive hangs on every run of that pattern), and with the environment
 * as it is (the same where MPICH's first netmod is UCX, as in the PyPI
 * wheel; where it is not, receives are MPI's own and the arrows are
 * asserted absent).  2 ranks: rank 0 sends, rank 1 receives.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pool_util.h"
#include "core/core.h"

#define N 64
#define S_MATCH MPIACC_RP_MATCHING
static int rank;

/* Rank 0: one message of N ints (seed) with tag; rank 1 lets it reach MPI
 * (probes of another tag progress MPI) before the case posts its receive. */
static void sent(int tag, int seed)
{
    int b[N], flag = 0, other;
    if (rank == 0) {
        fill_ints(b, N, seed);
        assert_int_equal(MPI_Send(b, N, MPI_INT, 1, tag, MPI_COMM_WORLD), MPI_SUCCESS);
    } else {
        double t0 = MPI_Wtime();
        do MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        while (!flag && MPI_Wtime() - t0 < 10);
        assert_true(flag);
        for (int i = 0; i < 5; i++) MPI_Iprobe(0, 999, MPI_COMM_WORLD, &other, MPI_STATUS_IGNORE);
    }
}

static void check_src(const int *b, int seed, const MPI_Status *st, int tag, int src)
{
    int want[N], count = -1;
    fill_ints(want, N, seed);
    assert_memory_equal(b, want, sizeof want);
    assert_int_equal(st->MPI_SOURCE, src);
    assert_int_equal(st->MPI_TAG, tag);
    MPI_Get_count(st, MPI_INT, &count);
    assert_int_equal(count, N);
}

static void check(const int *b, int seed, const MPI_Status *st, int tag)
{
    check_src(b, seed, st, tag, 0);
}

/* The message waits at MPI: found at the call (NEW -> IN_FLIGHT). */
static void waiting_message(void **state)
{
    int b[N];
    long f0 = transitions(S_NEW, S_FLIGHT), m0 = transitions(S_NEW, S_MATCH);
    MPI_Request r;
    MPI_Status st;
    (void)state;
    sent(1, 11);
    if (rank != 1) return;
    assert_int_equal(MPI_Irecv(b, N, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
    check(b, 11, &st, 1);
    assert_int_equal(transitions(S_NEW, S_FLIGHT) - f0, mpiacc_core_wildcard_probe ? 1 : 0);
    assert_int_equal(transitions(S_NEW, S_MATCH) - m0, 0);
}

/* Posted before its message: MATCHING until a wait's probe finds it. */
static void posted_first(void **state)
{
    int b[N], flag = 0;
    long m0 = transitions(S_NEW, S_MATCH), mf0 = transitions(S_MATCH, S_FLIGHT);
    long d0 = transitions(S_FLIGHT, S_DONE);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    (void)state;
    if (rank == 1) assert_int_equal(MPI_Irecv(b, N, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        fill_ints(b, N, 22);
        assert_int_equal(MPI_Send(b, N, MPI_INT, 1, 2, MPI_COMM_WORLD), MPI_SUCCESS);
        return;
    }
    while (!flag) assert_int_equal(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
    check(b, 22, &st, 2);
    if (mpiacc_core_wildcard_probe) {
        assert_int_equal(transitions(S_NEW, S_MATCH) - m0, 1);
        assert_int_equal(transitions(S_MATCH, S_FLIGHT) - mf0, 1);
        assert_int_equal(transitions(S_FLIGHT, S_DONE) - d0, 1);
    }
}

/* A blocking wildcard receive after a pending one of the same tag: the
 * earlier call gets the first message (MPI's order of posted receives). */
static void order_kept(void **state)
{
    int a[N], b[N];
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    (void)state;
    if (rank == 1) assert_int_equal(MPI_Irecv(a, N, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        fill_ints(a, N, 31);
        assert_int_equal(MPI_Send(a, N, MPI_INT, 1, 3, MPI_COMM_WORLD), MPI_SUCCESS);
        fill_ints(a, N, 32);
        assert_int_equal(MPI_Send(a, N, MPI_INT, 1, 3, MPI_COMM_WORLD), MPI_SUCCESS);
        return;
    }
    assert_int_equal(MPI_Recv(b, N, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(b, 32, &st, 3);
    assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
    check(a, 31, &st, 3);
}

/* MPI_Cancel of a receive still looking for its message (MATCHING ->
 * CANCELLED); a gated host datatype (the staged protocol) from any source
 * is matched the same way and delivers its bytes. */
static void cancel_and_staged(void **state)
{
    int b[N];
    atomic_int gate = 1;
    long c0 = transitions(S_MATCH, S_CANCEL);
    MPI_Request r;
    MPI_Status st;
    MPI_Datatype t = pool_type(N, 0, &gate);
    int cancelled = 0;
    (void)state;
    if (rank == 1) {
        assert_int_equal(MPI_Irecv(b, N, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Cancel(&r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        MPI_Test_cancelled(&st, &cancelled);
        assert_true(cancelled);
        if (mpiacc_core_wildcard_probe) assert_int_equal(transitions(S_MATCH, S_CANCEL) - c0, 1);
    }
    sent(5, 55);
    if (rank == 1) {
        assert_int_equal(MPI_Recv(b, 1, t, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        check(b, 55, &st, 5);
    }
    MPI_Type_free(&t);
}

/* Both ranks: a wildcard receive posted, then a blocking send of a
 * rendezvous-size message to the other, then the wait; the same with
 * MPI_Isend + MPI_Waitall over both requests; then MPI_Waitall and
 * MPI_Waitany over MPI's own send request alone.  Each send waits for the
 * other rank's receive, which only a probe can find: the blocking calls
 * keep looking for it (mpiacc_rp_pmpi_wait). */
static void blocking_calls_look(void **state)
{
    enum { BIG = 1 << 20 };
    int *in = malloc(BIG * sizeof(int)), *out = malloc(BIG * sizeof(int)), peer = 1 - rank;
    MPI_Request r[2];
    MPI_Status st;
    (void)state;
    for (int i = 0; i < BIG; i++) out[i] = rank * 7 + i;
    assert_int_equal(MPI_Irecv(in, BIG, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Send(out, BIG, MPI_INT, peer, 7, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r[0], &st), MPI_SUCCESS);
    assert_int_equal(st.MPI_SOURCE, peer);
    assert_int_equal(in[BIG - 1], peer * 7 + BIG - 1);
    assert_int_equal(MPI_Irecv(in, BIG, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Isend(out, BIG, MPI_INT, peer, 8, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_int_equal(in[0], peer * 7);
    /* waits on MPI's own requests alone look for the pending receive too */
    for (int any = 0; any < 2; any++) {
        int idx = -1;
        assert_int_equal(MPI_Irecv(in, BIG, MPI_INT, MPI_ANY_SOURCE, 9 + any, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(out, BIG, MPI_INT, peer, 9 + any, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
        if (any) assert_int_equal(MPI_Waitany(1, &r[1], &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
        else assert_int_equal(MPI_Waitall(1, &r[1], MPI_STATUSES_IGNORE), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r[0], &st), MPI_SUCCESS);
        assert_int_equal(st.MPI_SOURCE, peer);
        assert_int_equal(in[BIG / 2], peer * 7 + BIG / 2);
    }
    free(in);
    free(out);
}

/* A longer message: MPI's truncation, the op's error. */
static void truncated(void **state)
{
    int b[N];
    MPI_Request r;
    MPI_Status st;
    int cls = MPI_SUCCESS;
    (void)state;
    sent(6, 66);
    if (rank != 1) return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    assert_int_equal(MPI_Irecv(b, N / 2, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    MPI_Error_class(MPI_Wait(&r, &st), &cls);
    assert_int_equal(cls, MPI_ERR_TRUNCATE);
}

/* Issue 36: a persistent receive from MPI_ANY_SOURCE (mpiacc's persistent
 * request, each MPI_Start a matched receive), restarted: its message at
 * MPI before the start (NEW -> IN_FLIGHT), then sent after it (NEW ->
 * MATCHING -> IN_FLIGHT). */
static void persistent(void **state)
{
    int b[N], flag = 0;
    long f0 = transitions(S_NEW, S_FLIGHT), m0 = transitions(S_NEW, S_MATCH);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    (void)state;
    if (rank == 1) assert_int_equal(MPI_Recv_init(b, N, MPI_INT, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &r), 0);
    for (int i = 0; i < 3; i++) {
        sent(12, 120 + i);
        if (rank != 1) continue;
        assert_int_equal(MPI_Start(&r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        check(b, 120 + i, &st, 12);
    }
    if (rank == 1) assert_int_equal(MPI_Start(&r), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        fill_ints(b, N, 130);
        assert_int_equal(MPI_Send(b, N, MPI_INT, 1, 12, MPI_COMM_WORLD), MPI_SUCCESS);
        return;
    }
    while (!flag) assert_int_equal(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
    check(b, 130, &st, 12);
    assert_int_equal(MPI_Request_free(&r), MPI_SUCCESS);
    assert_int_equal(transitions(S_NEW, S_FLIGHT) - f0, mpiacc_core_wildcard_probe ? 3 : 0);
    assert_int_equal(transitions(S_NEW, S_MATCH) - m0, mpiacc_core_wildcard_probe ? 1 : 0);
}

/* A receive naming its source called behind a wildcard one still looking
 * for its message waits for it (MATCHING too): the wildcard one gets the
 * first message, whatever reaches MPI first; then a matched probe (and a
 * blocking receive) behind a wildcard one: the probe's message goes to
 * the earlier receive, the probe takes the next one. */
static void named_behind(void **state)
{
    int a[N], b[N], c[N];
    long m0 = transitions(S_NEW, S_MATCH);
    MPI_Request r[2];
    MPI_Status st[2];
    MPI_Message msg;
    (void)state;
    if (rank == 1) {
        assert_int_equal(MPI_Irecv(a, N, MPI_INT, MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
        assert_int_equal(MPI_Irecv(b, N, MPI_INT, 0, 13, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
        if (mpiacc_core_wildcard_probe) assert_int_equal(transitions(S_NEW, S_MATCH) - m0, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++) {
        if (rank == 0) {
            fill_ints(a, N, 131 + i);
            assert_int_equal(MPI_Send(a, N, MPI_INT, 1, 13, MPI_COMM_WORLD), MPI_SUCCESS);
        }
    }
    if (rank != 1) return;
    assert_int_equal(MPI_Waitall(2, r, st), MPI_SUCCESS);
    check(a, 131, &st[0], 13);
    check(b, 132, &st[1], 13);
    assert_int_equal(MPI_Irecv(a, N, MPI_INT, MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
    { /* a matched probe of MPI_PROC_NULL is MPI's, whatever waits */
        int flag = 0;
        assert_int_equal(MPI_Improbe(MPI_PROC_NULL, 13, MPI_COMM_WORLD, &flag, &msg, &st[1]), MPI_SUCCESS);
        assert_true(flag);
        assert_true(msg == MPI_MESSAGE_NO_PROC);
        assert_int_equal(MPI_Mrecv(c, N, MPI_INT, &msg, &st[1]), MPI_SUCCESS);
        assert_int_equal(st[1].MPI_SOURCE, MPI_PROC_NULL);
    }
    assert_int_equal(MPI_Mprobe(0, 13, MPI_COMM_WORLD, &msg, &st[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Mrecv(c, N, MPI_INT, &msg, &st[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r[0], &st[0]), MPI_SUCCESS);
    check(a, 133, &st[0], 13);
    check(c, 134, &st[1], 13);
}

/* While a wildcard receive waits for a rendezvous-size message, blocking
 * probes and tests of MPI's own requests keep looking for it: the sender
 * sends that message first (its MPI_Send returns once it is matched), then
 * the one probed for; the receiver tests only its own send to the peer. */
static void probes_look(void **state)
{
    enum { BIG = 1 << 18 };
    int *big = malloc(BIG * sizeof(int)), small = 5, flag = 0, any = 0;
    MPI_Request r, s;
    MPI_Status st;
    (void)state;
    for (int i = 0; i < 2; i++) {
        if (rank == 0) {
            for (int k = 0; k < BIG; k++) big[k] = k + i;
            assert_int_equal(MPI_Send(big, BIG, MPI_INT, 1, 14, MPI_COMM_WORLD), MPI_SUCCESS);
            assert_int_equal(MPI_Send(&small, 1, MPI_INT, 1, 15, MPI_COMM_WORLD), MPI_SUCCESS);
            assert_int_equal(MPI_Recv(&small, 1, MPI_INT, 1, 16, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            continue;
        }
        assert_int_equal(MPI_Irecv(big, BIG, MPI_INT, MPI_ANY_SOURCE, 14, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        if (i == 0) {
            assert_int_equal(MPI_Probe(0, 15, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        } else {
            do assert_int_equal(MPI_Iprobe(0, 15, MPI_COMM_WORLD, &any, &st), MPI_SUCCESS);
            while (!any);
        }
        assert_int_equal(MPI_Recv(&small, 1, MPI_INT, 0, 15, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(&small, 1, MPI_INT, 0, 16, MPI_COMM_WORLD, &s), MPI_SUCCESS);
        for (flag = 0; !flag;) assert_int_equal(MPI_Test(&s, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        assert_int_equal(big[BIG - 1], BIG - 1 + i);
    }
    free(big);
}

/* MPI_Sendrecv_replace and MPI_Isendrecv_replace (tested to the end) of a
 * host buffer from MPI_ANY_SOURCE, its message at MPI before the call. */
static void replace(void **state)
{
    int b[N], flag = 0;
    MPI_Request r;
    MPI_Status st;
    (void)state;
    for (int i = 0; i < 2; i++) {
        sent(17, 170 + i);
        if (rank == 0) {
            assert_int_equal(MPI_Recv(b, N, MPI_INT, 1, 18, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            check_src(b, 180 + i, &st, 18, 1);
            continue;
        }
        fill_ints(b, N, 180 + i);
        if (i == 0) {
            assert_int_equal(MPI_Sendrecv_replace(b, N, MPI_INT, 0, 18, MPI_ANY_SOURCE, 17, MPI_COMM_WORLD, &st), 0);
        } else {
            assert_int_equal(MPI_Isendrecv_replace(b, N, MPI_INT, 0, 18, MPI_ANY_SOURCE, 17, MPI_COMM_WORLD, &r), 0);
            while (!flag) assert_int_equal(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
        }
        check(b, 170 + i, &st, 17);
    }
}

int main(int argc, char **argv)
{
    int size, fails;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(waiting_message, pool_barrier),
        cmocka_unit_test_setup(posted_first, pool_barrier),
        cmocka_unit_test_setup(order_kept, pool_barrier),
        cmocka_unit_test_setup(cancel_and_staged, pool_barrier),
        cmocka_unit_test_setup(blocking_calls_look, pool_barrier),
        cmocka_unit_test_setup(truncated, pool_barrier),
        cmocka_unit_test_setup(persistent, pool_barrier),
        cmocka_unit_test_setup(named_behind, pool_barrier),
        cmocka_unit_test_setup(probes_look, pool_barrier),
        cmocka_unit_test_setup(replace, pool_barrier),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) mpiacc_test_skip_all("runs on 2 ranks, got %d", size);
    if (rank == 0) printf("wildcard receives through a matched probe: %s\n", mpiacc_core_wildcard_probe ? "yes" : "no");
    fails = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return fails ? 1 : 0;
}
