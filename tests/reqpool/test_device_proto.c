/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device protocol (src/protocol/device.c) and its fast path
 * (src/dispatch/dispatch.c) without a GPU: a CPU stand-in.  Before
 * MPI_Init the engine is told that MPI takes the "device" memory of
 * MPIACC_BUF_HOST datatypes (mpiacc_engine_test_force) and the host backend
 * is replaced by the CPU backend plus the device protocol's entries
 * (dep_ready: the MPIACC_EVENT flag; device staging: malloc), so gated
 * host datatypes (tests/reqpool/pool_util.h) take exactly the paths CUDA
 * buffers take where MPI's transport takes CUDA memory.  Every arrow of the
 * device protocol (src/reqpool/op.c) is asserted through
 * mpiacc_rp_transitions, every path through MPIACC_Get_stats' columns
 * (MPI: handed to MPI as it is; device; staged: to or from oneself).
 * Needs 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "standin.h"
#include "dispatch/dispatch.h"

#define N 256
static int rank, peer;
/* ---- helpers ------------------------------------------------------------------- */

typedef struct {
    unsigned long long s[MPIACC_STATS_PROTOCOLS], r[MPIACC_STATS_PROTOCOLS];
    unsigned long long matched_staged; /* receives of the "staged (matched)" column (a spare one) */
} cols_t;

static cols_t cols(void)
{
    MPIACC_Stats st = {.size = sizeof st};
    cols_t c = {{0}};
    assert_int_equal(MPIACC_Get_stats(&st), MPI_SUCCESS);
    for (int p = 0; p < MPIACC_STATS_PROTOCOLS; p++) {
        c.s[p] = st.sends[MPIACC_KIND_HOST][p];
        c.r[p] = st.receives[MPIACC_KIND_HOST][p];
        if (!strncmp(st.protocol[p], "staged (matched)", sizeof st.protocol[p] - 1)) c.matched_staged = c.r[p];
    }
    return c;
}

/* Every transition counter summed: unchanged when nothing went through the pool. */
static long all_transitions(void)
{
    long n = 0;
    for (int f = 0; f < MPIACC_RP_NSTATES; f++)
        for (int t = 0; t < MPIACC_RP_NTARGETS; t++) n += transitions(f, t);
    return n;
}

static void check_ints(const int *got, int n, int seed, int stride)
{
    int ref[2 * N];
    fill_ints(ref, n, seed);
    for (int i = 0; i < n; i++) assert_int_equal(got[i * stride], ref[i]);
}

/* ---- the cases ------------------------------------------------------------------- */

/* Dense, dependency met, nothing queued: MPI's own send and receive, no op. */
static void fast_path(void **s)
{
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 0, &gate);
    int buf[N], n = 0;
    long tr0 = all_transitions();
    cols_t c0 = cols();
    MPI_Status st;
    if (rank == 0) {
        fill_ints(buf, N, 1);
        assert_int_equal(MPI_Send(buf, 1, t, peer, 1, MPI_COMM_WORLD), MPI_SUCCESS);
        assert_int_equal(cols().s[MPIACC_PROTO_MPI], c0.s[MPIACC_PROTO_MPI] + 1);
    } else {
        memset(buf, 0, sizeof buf);
        assert_int_equal(MPI_Recv(buf, 1, t, peer, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        check_ints(buf, N, 1, 1);
        assert_int_equal(MPI_Get_count(&st, t, &n), MPI_SUCCESS);
        assert_int_equal(n, 1);
        assert_int_equal(MPI_Get_elements(&st, t, &n), MPI_SUCCESS);
        assert_int_equal(n, N);
        assert_int_equal(st.MPI_SOURCE, peer);
        assert_int_equal(cols().r[MPIACC_PROTO_MPI], c0.r[MPIACC_PROTO_MPI] + 1);
    }
    assert_int_equal(all_transitions(), tr0);
    MPI_Type_free(&t);
}

/* Dense send, dependency pending: NEW -> DEP_PENDING -> READY -> IN_FLIGHT
 * -> DONE, the user's bytes as they are when the dependency is met; a host
 * receive takes them (device -> host). */
static void dense_send_waits(void **s)
{
    atomic_int gate = 0;
    int buf[N];
    if (rank == 0) {
        MPI_Datatype t = pool_type(N, 0, &gate);
        long d0 = transitions(S_NEW, S_DEP), r0 = transitions(S_DEP, S_READY);
        long f0 = transitions(S_READY, S_FLIGHT), e0 = transitions(S_FLIGHT, S_DONE);
        cols_t c0 = cols();
        MPI_Request r;
        fill_ints(buf, N, 2);
        assert_int_equal(MPI_Isend(buf, 1, t, peer, 2, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(transitions(S_NEW, S_DEP), d0 + 1);
        pool_not_done(&r, 50);
        fill_ints(buf, N, 3); /* written before the dependency is met: these travel */
        atomic_store(&gate, 1);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(transitions(S_DEP, S_READY), r0 + 1);
        assert_int_equal(transitions(S_READY, S_FLIGHT), f0 + 1);
        assert_int_equal(transitions(S_FLIGHT, S_DONE), e0 + 1);
        assert_int_equal(cols().s[MPIACC_PROTO_DEVICE], c0.s[MPIACC_PROTO_DEVICE] + 1);
        MPI_Type_free(&t);
    } else {
        assert_int_equal(MPI_Recv(buf, N, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        check_ints(buf, N, 3, 1);
    }
}

/* A dense send whose dependency is met but that must follow a queued send
 * to the same peer: pooled (NEW -> READY), and the messages keep their order. */
static void dense_send_behind_queued(void **s)
{
    atomic_int slow = 0, fast = 1;
    int a[N], b[N];
    if (rank == 0) {
        MPI_Datatype ts = pool_type(N, 0, &slow), tf = pool_type(N, 0, &fast);
        MPI_Request rq[2];
        long nr0 = transitions(S_NEW, S_READY);
        cols_t c0 = cols();
        fill_ints(a, N, 4);
        fill_ints(b, N, 5);
        MPI_Isend(a, 1, ts, peer, 3, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(b, 1, tf, peer, 3, MPI_COMM_WORLD, &rq[1]);
        assert_int_equal(transitions(S_NEW, S_READY), nr0 + 1);
        assert_int_equal(cols().s[MPIACC_PROTO_MPI], c0.s[MPIACC_PROTO_MPI]); /* not handed over at once */
        atomic_store(&slow, 1);
        assert_int_equal(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        assert_int_equal(cols().s[MPIACC_PROTO_DEVICE], c0.s[MPIACC_PROTO_DEVICE] + 2);
        MPI_Type_free(&ts);
        MPI_Type_free(&tf);
    } else {
        MPI_Recv(a, N, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(b, N, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_ints(a, N, 4, 1);
        check_ints(b, N, 5, 1);
    }
}

/* A strided send: packed into device staging, MPI_Pack's bytes (a host
 * receive of N contiguous ints reads them): NEW -> DEP_PENDING -> PACKING
 * -> READY with a pending dependency, NEW -> PACKING without. */
static void packed_send(void **s)
{
    int buf[2 * N], out[N];
    if (rank == 0) {
        atomic_int gate = 0, open = 1;
        MPI_Datatype t = pool_type(N, 1, &gate), t1 = pool_type(N, 1, &open);
        long d0 = transitions(S_NEW, S_DEP), p0 = transitions(S_DEP, S_PACK), np0 = transitions(S_NEW, S_PACK);
        long pr0 = transitions(S_PACK, S_READY);
        int live0 = atomic_load(&staging_live);
        MPI_Request r;
        fill_ints(buf, 2 * N, 6);
        MPI_Isend(buf, 1, t, peer, 4, MPI_COMM_WORLD, &r);
        assert_int_equal(transitions(S_NEW, S_DEP), d0 + 1);
        assert_int_equal(atomic_load(&staging_live), live0 + 1);
        atomic_store(&gate, 1);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(transitions(S_DEP, S_PACK), p0 + 1);
        fill_ints(buf, 2 * N, 7);
        assert_int_equal(MPI_Send(buf, 1, t1, peer, 4, MPI_COMM_WORLD), MPI_SUCCESS);
        assert_int_equal(transitions(S_NEW, S_PACK), np0 + 1);
        assert_int_equal(transitions(S_PACK, S_READY), pr0 + 2);
        assert_int_equal(atomic_load(&staging_live), live0);
        MPI_Type_free(&t);
        MPI_Type_free(&t1);
    } else {
        for (int k = 6; k <= 7; k++) {
            MPI_Recv(out, N, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fill_ints(buf, 2 * N, k);
            for (int i = 0; i < N; i++) assert_int_equal(out[i], buf[2 * i]);
        }
    }
}

/* Receives through device staging, posted at the call: a dense one whose
 * dependency is pending (NEW -> IN_FLIGHT -> DEP_PENDING -> UNPACKING ->
 * DONE) and a strided one (IN_FLIGHT -> UNPACKING); host senders
 * (host -> device); the status counts the receive's datatype. */
static void device_receives(void **s)
{
    int buf[2 * N];
    if (rank == 1) {
        atomic_int gate = 0, open = 1;
        MPI_Datatype t = pool_type(N, 0, &gate), tv = pool_type(N, 1, &open);
        long f0 = transitions(S_NEW, S_FLIGHT), fd0 = transitions(S_FLIGHT, S_DEP);
        long du0 = transitions(S_DEP, S_UNPACK), fu0 = transitions(S_FLIGHT, S_UNPACK);
        long ud0 = transitions(S_UNPACK, S_DONE);
        int live0 = atomic_load(&staging_live), n = 0;
        cols_t c0 = cols();
        MPI_Request r;
        MPI_Status st;
        memset(buf, 0, sizeof buf);
        MPI_Irecv(buf, 1, t, peer, 5, MPI_COMM_WORLD, &r);
        assert_int_equal(transitions(S_NEW, S_FLIGHT), f0 + 1);
        pool_until_moved(&r, S_FLIGHT, S_DEP, fd0);
        for (int i = 0; i < N; i++) assert_int_equal(buf[i], 0); /* not written before the dependency */
        atomic_store(&gate, 1);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        check_ints(buf, N, 8, 1);
        assert_int_equal(transitions(S_DEP, S_UNPACK), du0 + 1);
        MPI_Get_count(&st, t, &n);
        assert_int_equal(n, 1);
        assert_int_equal(st.MPI_TAG, 5);
        memset(buf, 0, sizeof buf);
        assert_int_equal(MPI_Recv(buf, 1, tv, peer, 6, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        check_ints(buf, N, 9, 2);
        assert_int_equal(buf[1], 0); /* the gaps are not written */
        assert_int_equal(transitions(S_FLIGHT, S_UNPACK), fu0 + 1);
        assert_int_equal(transitions(S_UNPACK, S_DONE), ud0 + 2);
        assert_int_equal(cols().r[MPIACC_PROTO_DEVICE], c0.r[MPIACC_PROTO_DEVICE] + 2);
        assert_int_equal(atomic_load(&staging_live), live0);
        MPI_Type_free(&t);
        MPI_Type_free(&tv);
    } else {
        fill_ints(buf, N, 8);
        MPI_Send(buf, N, MPI_INT, peer, 5, MPI_COMM_WORLD);
        fill_ints(buf, N, 9);
        MPI_Send(buf, N, MPI_INT, peer, 6, MPI_COMM_WORLD);
    }
}

/* A message longer than the receive: through device staging (twice the
 * receive here), the part that fits, then MPI_ERR_TRUNCATE (UNPACKING ->
 * ERROR); longer than the staging too, MPI's MPI_ERR_TRUNCATE at once and
 * nothing delivered (IN_FLIGHT -> ERROR); handed to MPI as it is, MPI's own
 * MPI_ERR_TRUNCATE. */
static void truncation(void **s)
{
    int big[4 * N], small[2 * N];
    if (rank == 0) {
        fill_ints(big, 4 * N, 10);
        MPI_Send(big, 2 * N, MPI_INT, peer, 7, MPI_COMM_WORLD);
        MPI_Send(big, 2 * N, MPI_INT, peer, 8, MPI_COMM_WORLD);
        MPI_Send(big, 4 * N, MPI_INT, peer, 18, MPI_COMM_WORLD);
    } else {
        atomic_int gate = 0, open = 1;
        MPI_Datatype t = pool_type(N, 0, &gate), t1 = pool_type(N, 0, &open), tv = pool_type(N, 1, &open);
        long e0 = transitions(S_UNPACK, S_ERROR), fe0 = transitions(S_FLIGHT, S_ERROR);
        MPI_Request r;
        MPI_Status st;
        int err, cls;
        memset(small, 0, sizeof small);
        MPI_Irecv(small, 1, t, peer, 7, MPI_COMM_WORLD, &r);
        atomic_store(&gate, 1);
        err = MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Error_class(err, &cls);
        assert_int_equal(cls, MPI_ERR_TRUNCATE);
        assert_int_equal(transitions(S_UNPACK, S_ERROR), e0 + 1);
        check_ints(small, N, 10, 1);
        assert_int_equal(small[N], 0);
        err = MPI_Recv(small, 1, t1, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Error_class(err, &cls);
        assert_int_equal(cls, MPI_ERR_TRUNCATE);
        memset(small, 0, sizeof small);
        err = MPI_Recv(small, 1, tv, peer, 18, MPI_COMM_WORLD, &st);
        MPI_Error_class(err, &cls);
        assert_int_equal(cls, MPI_ERR_TRUNCATE);
        assert_int_equal(transitions(S_FLIGHT, S_ERROR), fe0 + 1);
        assert_int_equal(small[0], 0); /* nothing delivered */
        MPI_Type_free(&t);
        MPI_Type_free(&t1);
        MPI_Type_free(&tv);
    }
}

/* A receive of 1 x t from the peer with a tag no message has, cancelled:
 * MPI_Wait completes it and its status says cancelled. */
static void cancelled_recv(MPI_Datatype t)
{
    int buf[N], flag = 0;
    MPI_Request r;
    MPI_Status st;
    MPI_Irecv(buf, 1, t, peer, 999, MPI_COMM_WORLD, &r);
    assert_int_equal(MPI_Cancel(&r), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
    MPI_Test_cancelled(&st, &flag);
    assert_true(flag);
}

/* MPI_Cancel of a receive through device staging (IN_FLIGHT -> CANCELLED),
 * and of one handed to MPI as it is (MPI's own). */
static void cancel(void **s)
{
    atomic_int gate = 0, open = 1;
    MPI_Datatype t = pool_type(N, 0, &gate), t1 = pool_type(N, 0, &open);
    long c0 = transitions(S_FLIGHT, S_CANCEL);
    cancelled_recv(t);
    assert_int_equal(transitions(S_FLIGHT, S_CANCEL), c0 + 1);
    cancelled_recv(t1);
    assert_int_equal(transitions(S_FLIGHT, S_CANCEL), c0 + 1);
    MPI_Type_free(&t);
    MPI_Type_free(&t1);
}

/* Never device memory at MPI for a message to or from oneself: a send to
 * one's own rank, a receive from it or from MPI_ANY_SOURCE are staged. */
static void self_and_any_source(void **s)
{
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 0, &gate);
    int a[N], b[N];
    cols_t c0 = cols();
    MPI_Request r;
    MPI_Status st;
    fill_ints(a, N, 11 + rank);
    MPI_Irecv(b, 1, t, rank, 9, MPI_COMM_WORLD, &r);
    assert_int_equal(MPI_Send(a, 1, t, rank, 9, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    check_ints(b, N, 11 + rank, 1);
    assert_int_equal(cols().s[MPIACC_PROTO_STAGED], c0.s[MPIACC_PROTO_STAGED] + 1);
    assert_int_equal(cols().r[MPIACC_PROTO_STAGED], c0.r[MPIACC_PROTO_STAGED] + 1);
    /* from anyone: the peer sends (as it is), this side receives staged */
    MPI_Irecv(b, 1, t, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &r);
    /* posted before the message comes: MPICH 5.0.2 on UCX with NOLOCAL=1 can
     * hang an MPI_ANY_SOURCE receive of a message already at UCX (mpiacc or not) */
    MPI_Barrier(MPI_COMM_WORLD);
    assert_int_equal(MPI_Send(a, 1, t, peer, 10, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
    assert_int_equal(st.MPI_SOURCE, peer);
    check_ints(b, N, 11 + peer, 1);
    assert_int_equal(cols().r[MPIACC_PROTO_STAGED], c0.r[MPIACC_PROTO_STAGED] + 2);
    assert_int_equal(cols().s[MPIACC_PROTO_MPI], c0.s[MPIACC_PROTO_MPI] + 1);
    MPI_Type_free(&t);
}

/* Issue 36: on an intercommunicator (no message from oneself) a receive
 * from MPI_ANY_SOURCE takes the device protocol, never MPI as it is where
 * those are matched by a probe (MPICH's UCX netmod): its message, at MPI
 * before the call, is found by the probe (dense and strided). */
static void intercomm_any_source(void **s)
{
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 0, &gate), tv = pool_type(N, 1, &gate);
    MPI_Comm half, inter;
    int buf[2 * N], flag = 0;
    cols_t c0 = cols();
    MPI_Status st;
    (void)s;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, peer, 30, &inter);
    if (rank == 0) {
        fill_ints(buf, N, 31);
        assert_int_equal(MPI_Send(buf, N, MPI_INT, 0, 31, inter), MPI_SUCCESS);
        fill_ints(buf, N, 32);
        assert_int_equal(MPI_Send(buf, N, MPI_INT, 0, 32, inter), MPI_SUCCESS);
    } else {
        long f0 = transitions(S_NEW, S_FLIGHT);
        while (!flag) MPI_Iprobe(0, 32, inter, &flag, MPI_STATUS_IGNORE); /* both at MPI */
        memset(buf, 0, sizeof buf);
        assert_int_equal(MPI_Recv(buf, 1, t, MPI_ANY_SOURCE, 31, inter, &st), MPI_SUCCESS);
        check_ints(buf, N, 31, 1);
        assert_int_equal(st.MPI_SOURCE, 0);
        assert_int_equal(MPI_Recv(buf, 1, tv, MPI_ANY_SOURCE, 32, inter, &st), MPI_SUCCESS);
        check_ints(buf, N, 32, 2);
        if (mpiacc_core_wildcard_probe) {
            assert_int_equal(cols().r[MPIACC_PROTO_DEVICE], c0.r[MPIACC_PROTO_DEVICE] + 2);
            assert_int_equal(transitions(S_NEW, S_FLIGHT), f0 + 2);
        }
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Type_free(&t);
    MPI_Type_free(&tv);
}

/* Persistent requests: each MPI_Start goes as a plain call would (handed to
 * MPI as it is here); Sendrecv and Isendrecv (dense and strided). */
static void persistent_and_sendrecv(void **s)
{
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 0, &gate), tv = pool_type(N, 1, &gate);
    int a[2 * N], b[2 * N];
    MPI_Request q[2];
    cols_t c0 = cols();
    MPI_Status st;
    MPI_Recv_init(b, 1, t, peer, 11, MPI_COMM_WORLD, &q[0]);
    MPI_Send_init(a, 1, t, peer, 11, MPI_COMM_WORLD, &q[1]);
    for (int it = 0; it < 3; it++) {
        fill_ints(a, N, 20 + it * 2 + rank);
        assert_int_equal(MPI_Startall(2, q), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        check_ints(b, N, 20 + it * 2 + peer, 1);
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    assert_int_equal(cols().s[MPIACC_PROTO_MPI], c0.s[MPIACC_PROTO_MPI] + 3);
    assert_int_equal(cols().r[MPIACC_PROTO_MPI], c0.r[MPIACC_PROTO_MPI] + 3);
    fill_ints(a, N, 30 + rank);
    assert_int_equal(MPI_Sendrecv(a, 1, t, peer, 12, b, 1, t, peer, 12, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check_ints(b, N, 30 + peer, 1);
    fill_ints(a, 2 * N, 40 + rank);
    memset(b, 0, sizeof b);
    assert_int_equal(MPI_Isendrecv(a, 1, tv, peer, 13, b, 1, tv, peer, 13, MPI_COMM_WORLD, &q[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&q[0], &st), MPI_SUCCESS);
    assert_int_equal(st.MPI_SOURCE, peer);
    {
        int ref[2 * N];
        fill_ints(ref, 2 * N, 40 + peer);
        for (int i = 0; i < N; i++) assert_int_equal(b[2 * i], ref[2 * i]);
    }
    MPI_Type_free(&t);
    MPI_Type_free(&tv);
}

/* Matched probes: MPI_Mrecv into a dense buffer whose dependency is pending
 * (device staging: the matched receive's NEW -> IN_FLIGHT), into one whose
 * dependency is met (MPI's own), and of a message this process sent itself
 * (staged). */
static void matched_receives(void **s)
{
    atomic_int gate = 0, open = 1;
    MPI_Datatype t = pool_type(N, 0, &gate), t1 = pool_type(N, 0, &open);
    int a[N], b[N];
    MPI_Message m;
    MPI_Request r;
    MPI_Status st;
    cols_t c0 = cols();
    fill_ints(a, N, 50 + rank);
    MPI_Send(a, N, MPI_INT, peer, 14, MPI_COMM_WORLD);
    MPI_Send(a, N, MPI_INT, peer, 15, MPI_COMM_WORLD);
    {
        long f0 = transitions(S_NEW, S_FLIGHT);
        assert_int_equal(MPI_Mprobe(peer, 14, MPI_COMM_WORLD, &m, &st), MPI_SUCCESS);
        assert_int_equal(MPI_Imrecv(b, 1, t, &m, &r), MPI_SUCCESS);
        assert_int_equal(transitions(S_NEW, S_FLIGHT), f0 + 1);
        atomic_store(&gate, 1);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        check_ints(b, N, 50 + peer, 1);
    }
    assert_int_equal(MPI_Mprobe(peer, 15, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_int_equal(MPI_Mrecv(b, 1, t1, &m, &st), MPI_SUCCESS);
    check_ints(b, N, 50 + peer, 1);
    assert_int_equal(cols().r[MPIACC_PROTO_DEVICE], c0.r[MPIACC_PROTO_DEVICE] + 1);
    assert_int_equal(cols().r[MPIACC_PROTO_MPI], c0.r[MPIACC_PROTO_MPI] + 1);
    /* from oneself */
    MPI_Isend(a, N, MPI_INT, rank, 16, MPI_COMM_WORLD, &r);
    assert_int_equal(MPI_Mprobe(MPI_ANY_SOURCE, 16, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_int_equal(MPI_Mrecv(b, 1, t1, &m, &st), MPI_SUCCESS);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    check_ints(b, N, 50 + rank, 1);
    assert_int_equal(cols().matched_staged, c0.matched_staged + 1);
    assert_int_equal(atomic_load(&mpiacc_dispatch_self_msgs), 0);
    MPI_Type_free(&t);
    MPI_Type_free(&t1);
}

/* The dependency of a dense send fails: DEP_PENDING -> ERROR; MPI never
 * saw the message, the receiver gets the next one. */
static void dependency_failure(void **s)
{
    int buf[N];
    if (rank == 0) {
        atomic_int gate = 0;
        MPI_Datatype t = pool_type(N, 0, &gate);
        long e0 = transitions(S_DEP, S_ERROR);
        MPI_Request r;
        int err, cls;
        fill_ints(buf, N, 60);
        MPI_Isend(buf, 1, t, peer, 17, MPI_COMM_WORLD, &r);
        atomic_store(&gate, -3);
        err = MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Error_class(err, &cls);
        assert_int_equal(cls, MPI_ERR_OTHER);
        assert_int_equal(transitions(S_DEP, S_ERROR), e0 + 1);
        MPI_Send(buf, N, MPI_INT, peer, 17, MPI_COMM_WORLD);
        MPI_Type_free(&t);
    } else {
        MPI_Recv(buf, N, MPI_INT, peer, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_ints(buf, N, 60, 1);
    }
}

/* The engine's answer for each kind, and that the fast path asked the
 * backend about the dependency. */
static void engine_answer(void **s)
{
    assert_true(mpiacc_engine_mpi.takes(MPIACC_KIND_HOST));
    assert_false(mpiacc_engine_mpi.takes(MPIACC_KIND_OPENCL));
    assert_false(mpiacc_engine_mpi.takes(MPIACC_KIND_NONE));
    assert_non_null(strstr(mpiacc_engine_mpi.reason(), "test hook"));
    assert_true(atomic_load(&dep_asked) > 0);
}

/* MPIACC_HOST_STAGING_MAX (run by itself, with the default 64K; the other
 * cases run with 0): a small message that needs staging goes through host
 * staging (staged column) — a strided send, a receive whose dependency is
 * pending, a strided receive — while a dense send whose dependency is
 * pending is still sent from the user's buffer (device column), and one
 * whose dependency is met is still MPI's own. */
static void small_messages_host(void **s)
{
    atomic_int gate = 0, open = 1;
    MPI_Datatype t = pool_type(N, 0, &gate), tv = pool_type(N, 1, &open), to = pool_type(N, 0, &open);
    int a[2 * N], b[2 * N];
    MPI_Request r;
    cols_t c0 = cols();
    if (rank == 0) {
        fill_ints(a, 2 * N, 50);
        assert_int_equal(MPI_Send(a, 1, tv, peer, 30, MPI_COMM_WORLD), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(a, 1, t, peer, 31, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        atomic_store(&gate, 1);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(MPI_Send(a, 1, to, peer, 32, MPI_COMM_WORLD), MPI_SUCCESS);
        assert_int_equal(cols().s[MPIACC_PROTO_STAGED], c0.s[MPIACC_PROTO_STAGED] + 1);
        assert_int_equal(cols().s[MPIACC_PROTO_DEVICE], c0.s[MPIACC_PROTO_DEVICE] + 1);
        assert_int_equal(cols().s[MPIACC_PROTO_MPI], c0.s[MPIACC_PROTO_MPI] + 1);
    } else {
        memset(b, 0, sizeof b);
        assert_int_equal(MPI_Recv(b, 1, tv, peer, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        fill_ints(a, 2 * N, 50); /* what the sender's vector holds */
        for (int i = 0; i < N; i++) assert_int_equal(b[2 * i], a[2 * i]);
        assert_int_equal(MPI_Irecv(b, 1, t, peer, 31, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        atomic_store(&gate, 1);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        check_ints(b, N, 50, 1);
        assert_int_equal(MPI_Recv(b, 1, to, peer, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(cols().r[MPIACC_PROTO_STAGED], c0.r[MPIACC_PROTO_STAGED] + 2);
        assert_int_equal(cols().r[MPIACC_PROTO_MPI], c0.r[MPIACC_PROTO_MPI] + 1);
    }
    MPI_Type_free(&t);
    MPI_Type_free(&tv);
    MPI_Type_free(&to);
}

int main(int argc, char **argv)
{
    int failed, size;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(fast_path, pool_barrier), cmocka_unit_test_setup(dense_send_waits, pool_barrier),
        cmocka_unit_test_setup(dense_send_behind_queued, pool_barrier),
        cmocka_unit_test_setup(packed_send, pool_barrier), cmocka_unit_test_setup(device_receives, pool_barrier),
        cmocka_unit_test_setup(truncation, pool_barrier), cmocka_unit_test_setup(cancel, pool_barrier),
        cmocka_unit_test_setup(self_and_any_source, pool_barrier),
        cmocka_unit_test_setup(intercomm_any_source, pool_barrier),
        cmocka_unit_test_setup(persistent_and_sendrecv, pool_barrier),
        cmocka_unit_test_setup(matched_receives, pool_barrier),
        cmocka_unit_test_setup(dependency_failure, pool_barrier),
        cmocka_unit_test_setup(engine_answer, pool_barrier),
    };
    standin_install();
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) mpiacc_test_skip_all("needs 2 ranks");
    peer = 1 - rank;
    if (argc > 1 && !strcmp(argv[1], "--small")) {
        const struct CMUnitTest small[] = {cmocka_unit_test_setup(small_messages_host, pool_barrier)};
        failed = MPIACC_TEST_RUN("device_proto_small", small, NULL, NULL);
    } else {
        failed = MPIACC_TEST_RUN("device_proto", tests, NULL, NULL);
    }
    MPI_Finalize();
    assert_int_equal(atomic_load(&staging_live), 0);
    return failed ? 1 : 0;
}
