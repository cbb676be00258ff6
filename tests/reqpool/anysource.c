/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * anysource: receives from MPI_ANY_SOURCE of messages that reached MPI
 * before the receive was called, in every form a program can write them:
 * blocking, after a probe, nonblocking with every completion call,
 * persistent (restarted every round, started one by one and with
 * MPI_Startall, freed while active, cancelled), MPI_Sendrecv,
 * MPI_Sendrecv_replace, MPI_Isendrecv(_replace) and their _c forms,
 * matched probes, and a receive naming its source called behind a
 * wildcard one (MPI's order of posted receives).
 *
 * A plain MPI program (MPI and CMocka only, no mpiacc): MPICH 5.0.2 on its
 * UCX netmod (MPIR_CVAR_CH4_NETMOD=ucx MPIR_CVAR_NOLOCAL=1, as mpiacc-run
 * starts ranks) never completes such a receive (docs/semantics.md), and
 * mpiacc-run, which preloads mpiacc, must run it to the end every time:
 * anysource_runs.sh runs it many times that way (CTest
 * anysource_runs_1node / _2nodes), scripts/gpu-check.sh too, and plainly.
 *
 * Every round another rank receives; every other rank sends it NSEQ
 * messages per case, then a marker; the receiver sees the marker with a
 * probe naming its source (so the messages before it are at MPI) before
 * calling any receive.  Each message says who sent it and its sequence
 * number: the status, the count, the bytes and MPI's order of messages from
 * one source are checked.  Odd rounds send messages of BIG ints (beyond
 * UCX's eager sizes), even ones SMALL.
 * usage: anysource [ROUNDS]  (default 20; 2 or more processes)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSEQ 2            /* messages per sender per case                 */
#define SMALL 8           /* ints                                          */
#define BIG (40 * 1024)   /* ints: 160 KiB                                 */
#define TAG 11            /* the data                                      */
#define TAG_MARK 12       /* "everything before me is sent"                */
#define TAG_REPLY 13      /* the send half of the sendrecv cases           */
#define TAG_NEVER 14      /* nobody sends it: cancelled receives           */
#define MAXP 64

static int rank, size, rounds = 20, round_, root, kase;
static MPI_Comm marks; /* the markers' communicator (a receive of MPI_ANY_TAG must not see them) */
static int passed;     /* the test function ran to its end */

static int nints(void) { return (round_ & 1) ? BIG : SMALL; }
static int value(int src, int seq, int i) { return src * 1000003 + round_ * 7919 + kase * 131 + seq * 17 + i; }
static int nothers(void) { return size - 1; }
static int nmsgs(void) { return NSEQ * nothers(); }
/* the j-th other rank of this round's root */
static int other(int j) { return (root + 1 + j % nothers()) % size; }

static int *ints(int n)
{
    int *b = malloc((size_t)n * sizeof *b);
    assert_non_null(b);
    return b;
}

static void fill(int *b, int src, int seq, int n)
{
    b[0] = src;
    b[1] = seq;
    for (int i = 2; i < n; i++) b[i] = value(src, seq, i);
}

/* ---- the senders' side --------------------------------------------------- */

typedef struct sent {
    MPI_Request r[NSEQ + 1];
    int *b[NSEQ + 1];
    int n;
} sent_t;

/* A sender: its messages (seq 0..nseq-1, tag TAG), then the marker. */
static void send_first(sent_t *s, int nseq)
{
    s->n = nseq;
    for (int q = 0; q <= nseq; q++) {
        int n = q < nseq ? nints() : 1;
        s->b[q] = ints(n);
        fill(s->b[q], rank, q, n);
        assert_int_equal(MPI_Isend(s->b[q], n, MPI_INT, root, q < nseq ? TAG : TAG_MARK,
                                   q < nseq ? MPI_COMM_WORLD : marks, &s->r[q]),
                         MPI_SUCCESS);
    }
}

static void sends_done(sent_t *s)
{
    assert_int_equal(MPI_Waitall(s->n + 1, s->r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int q = 0; q <= s->n; q++) free(s->b[q]);
}

/* ---- the receiver's side ------------------------------------------------- */

static int seen[MAXP]; /* messages received from each rank in this case */

/* Every sender's marker is at MPI (a probe naming its source), so are the
 * messages sent before it. */
static void all_arrived(void)
{
    memset(seen, 0, sizeof seen);
    for (int j = 0; j < nothers(); j++)
        assert_int_equal(MPI_Probe(other(j), TAG_MARK, marks, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

static void markers_in(void)
{
    int m;
    for (int j = 0; j < nothers(); j++)
        assert_int_equal(MPI_Recv(&m, 1, MPI_INT, other(j), TAG_MARK, marks, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

/* A received message: the status names its sender, the count is right, the
 * bytes are its sender's, and it comes in its sender's order. */
static void check(const int *b, const MPI_Status *st)
{
    int count = -1, src = st->MPI_SOURCE, n = nints();
    assert_true(src >= 0 && src < size && src != root);
    assert_int_equal(st->MPI_TAG, TAG);
    MPI_Get_count(st, MPI_INT, &count);
    assert_int_equal(count, n);
    assert_int_equal(b[0], src);
    assert_int_equal(b[1], seen[src]);
    for (int i = 2; i < n; i++)
        if (b[i] != value(src, b[1], i)) fail_msg("round %d case %d: int %d from %d: %d, not %d", round_, kase, i, src,
                                                  b[i], value(src, b[1], i));
    seen[src]++;
}

/* Every message of every sender received. */
static void all_seen(void)
{
    for (int j = 0; j < nothers(); j++) assert_int_equal(seen[other(j)], NSEQ);
}

/* One case: the senders send first, the receiver runs recv() once all is at
 * MPI; everyone then waits for the sends (and the replies of the sendrecv
 * cases, reply()). */
static void one_case(void (*recv)(int method), int method, void (*reply)(void))
{
    sent_t s;
    kase++;
    if (rank == root) {
        all_arrived();
        recv(method);
        markers_in();
        all_seen();
    } else {
        send_first(&s, NSEQ);
        if (reply) reply();
        sends_done(&s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every round, every method (0..nmethods-1) of a case. */
static void every_round(void (*recv)(int method), int nmethods, void (*reply)(void))
{
    for (round_ = 0; round_ < rounds; round_++) {
        root = round_ % size;
        for (int m = 0; m < nmethods; m++) one_case(recv, m, reply);
    }
}

/* ---- blocking receives ------------------------------------------------------- */

/* MPI_Recv, MPI_Recv_c, with MPI_ANY_TAG too */
static void recv_blocking(int method)
{
    MPI_Status st;
    int *b = ints(nints());
    for (int k = 0; k < nmsgs(); k++) {
        int tag = method & 1 ? MPI_ANY_TAG : TAG;
        if (method & 2) assert_int_equal(MPI_Recv_c(b, nints(), MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st), 0);
        else assert_int_equal(MPI_Recv(b, nints(), MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st), 0);
        check(b, &st);
    }
    free(b);
}

/* The pattern MPICH loses every time: a probe (blocking, or a loop of
 * MPI_Iprobe), then the receive from MPI_ANY_SOURCE of the tag it saw. */
static void recv_after_probe(int method)
{
    MPI_Status st;
    int *b = ints(nints()), flag = 0;
    for (int k = 0; k < nmsgs(); k++) {
        if (method) {
            for (flag = 0; !flag;)
                assert_int_equal(MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
        } else {
            assert_int_equal(MPI_Probe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        }
        assert_int_equal(MPI_Recv(b, nints(), MPI_INT, MPI_ANY_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st), 0);
        check(b, &st);
    }
    free(b);
}

static void blocking(void **state)
{
    (void)state;
    every_round(recv_blocking, 4, NULL);
    every_round(recv_after_probe, 2, NULL);
    passed = 1;
}

/* ---- completion of n active requests ----------------------------------------- */

enum { M_WAITALL, M_WAIT, M_WAITANY, M_WAITSOME, M_TESTALL, M_TEST, M_TESTANY, M_TESTSOME, NMETHODS };

/* Completes the n requests r (receives into b[k]) with `method`, then
 * checks the messages in the order of the receives' calls (MPI's order
 * within one source; completion may come in another); the requests stay in
 * r (persistent ones inactive again). */
static void complete(int method, int n, MPI_Request r[], int *b[])
{
    MPI_Status st[2 * MAXP], one[2 * MAXP];
    int done[2 * MAXP] = {0}, left = n, idx[2 * MAXP], nout, flag, k;
    while (left > 0) {
        switch (method) {
        case M_WAITALL:
            assert_int_equal(MPI_Waitall(n, r, st), MPI_SUCCESS);
            left = 0;
            break;
        case M_TESTALL:
            assert_int_equal(MPI_Testall(n, r, &flag, st), MPI_SUCCESS);
            if (flag) left = 0;
            break;
        case M_WAIT:
        case M_TEST:
            for (k = 0; k < n; k++) {
                if (method == M_WAIT) assert_int_equal(MPI_Wait(&r[k], &st[k]), MPI_SUCCESS);
                else do assert_int_equal(MPI_Test(&r[k], &flag, &st[k]), MPI_SUCCESS);
                    while (!flag);
            }
            left = 0;
            break;
        case M_WAITANY:
        case M_TESTANY:
            flag = 1;
            if (method == M_WAITANY) assert_int_equal(MPI_Waitany(n, r, &k, &one[0]), MPI_SUCCESS);
            else assert_int_equal(MPI_Testany(n, r, &k, &flag, &one[0]), MPI_SUCCESS);
            if (!flag) break;
            assert_true(k >= 0 && k < n && !done[k]);
            done[k] = 1;
            st[k] = one[0];
            left--;
            break;
        default: /* M_WAITSOME, M_TESTSOME */
            if (method == M_WAITSOME) assert_int_equal(MPI_Waitsome(n, r, &nout, idx, one), MPI_SUCCESS);
            else assert_int_equal(MPI_Testsome(n, r, &nout, idx, one), MPI_SUCCESS);
            assert_true(nout != MPI_UNDEFINED);
            for (int j = 0; j < nout; j++) {
                assert_true(idx[j] >= 0 && idx[j] < n && !done[idx[j]]);
                done[idx[j]] = 1;
                st[idx[j]] = one[j];
            }
            left -= nout;
            break;
        }
    }
    for (k = 0; k < n; k++) check(b[k], &st[k]);
}

/* ---- nonblocking receives -------------------------------------------------------- */

static void recv_nonblocking(int method)
{
    MPI_Request r[2 * MAXP];
    int *b[2 * MAXP], n = nmsgs();
    for (int k = 0; k < n; k++) {
        b[k] = ints(nints());
        assert_int_equal(k & 1 ? MPI_Irecv_c(b[k], nints(), MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &r[k])
                               : MPI_Irecv(b[k], nints(), MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &r[k]),
                         MPI_SUCCESS);
    }
    complete(method, n, r, b);
    for (int k = 0; k < n; k++) free(b[k]);
}

static void nonblocking(void **state)
{
    (void)state;
    every_round(recv_nonblocking, NMETHODS, NULL);
    passed = 1;
}

/* ---- persistent receives --------------------------------------------------------- */

/* Made once, started every round (MPI_Start one by one for the even
 * methods, MPI_Startall for the odd ones); buffers of BIG ints. */
static MPI_Request preq[2 * MAXP];
static int *pbuf[2 * MAXP];

static void recv_persistent(int method)
{
    int n = nmsgs();
    if (method & 1) assert_int_equal(MPI_Startall(n, preq), MPI_SUCCESS);
    else for (int k = 0; k < n; k++) assert_int_equal(MPI_Start(&preq[k]), MPI_SUCCESS);
    complete(method, n, preq, pbuf);
}

/* A persistent receive freed while active takes the first message of its
 * sender; the receive called after it the second (only one sender). */
static void recv_freed_active(int method)
{
    static int first[BIG];
    MPI_Request r;
    MPI_Status st;
    int *b = ints(nints());
    (void)method;
    assert_int_equal(MPI_Recv_init(first, nints(), MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    assert_int_equal(MPI_Start(&r), MPI_SUCCESS);
    assert_int_equal(MPI_Request_free(&r), MPI_SUCCESS);
    assert_true(r == MPI_REQUEST_NULL);
    memset(seen, 0, sizeof seen);
    seen[other(0)] = 1; /* the freed receive took seq 0 */
    assert_int_equal(MPI_Recv(b, nints(), MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(b, &st);
    free(b);
}

/* A started receive nobody sends to, cancelled: persistent (restarted
 * after each cancel) and not. */
static void cancelled(MPI_Request *r)
{
    MPI_Status st;
    int c = 0;
    assert_int_equal(MPI_Cancel(r), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(r, &st), MPI_SUCCESS);
    MPI_Test_cancelled(&st, &c);
    assert_true(c);
}

static void persistent(void **state)
{
    MPI_Request never;
    int nb, n;
    (void)state;
    n = NSEQ * (size - 1);
    for (int k = 0; k < n; k++) {
        pbuf[k] = ints(BIG);
        /* the count is BIG: a SMALL message fits (its count is checked) */
        assert_int_equal(k & 1 ? MPI_Recv_init_c(pbuf[k], BIG, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &preq[k])
                               : MPI_Recv_init(pbuf[k], BIG, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &preq[k]),
                         MPI_SUCCESS);
    }
    assert_int_equal(MPI_Recv_init(&nb, 1, MPI_INT, MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &never), MPI_SUCCESS);
    for (round_ = 0; round_ < rounds; round_++) {
        MPI_Request r;
        root = round_ % size;
        for (int m = 0; m < NMETHODS; m++) one_case(recv_persistent, m, NULL);
        /* a receive freed while active: one sender this time */
        kase++;
        if (rank == root) {
            assert_int_equal(MPI_Probe(other(0), TAG_MARK, marks, MPI_STATUS_IGNORE), MPI_SUCCESS);
            recv_freed_active(0);
            assert_int_equal(MPI_Recv(&nb, 1, MPI_INT, other(0), TAG_MARK, marks, MPI_STATUS_IGNORE), 0);
        } else if (rank == other(0)) {
            sent_t s;
            send_first(&s, NSEQ);
            sends_done(&s);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == root) {
            assert_int_equal(MPI_Start(&never), MPI_SUCCESS);
            cancelled(&never);
            assert_int_equal(MPI_Irecv(&nb, 1, MPI_INT, MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &r), MPI_SUCCESS);
            cancelled(&r);
        }
    }
    for (int k = 0; k < n; k++) {
        assert_int_equal(MPI_Request_free(&preq[k]), MPI_SUCCESS);
        free(pbuf[k]);
    }
    assert_int_equal(MPI_Request_free(&never), MPI_SUCCESS);
    passed = 1;
}

/* ---- MPI_Sendrecv & co. ------------------------------------------------------------ */

enum { S_SENDRECV, S_SENDRECV_C, S_REPLACE, S_REPLACE_C, S_ISENDRECV, S_ISENDRECV_C, S_IREPLACE, S_IREPLACE_C, NS };

/* The root: every message received by a sendrecv of the form `method`
 * whose send half answers the senders in turn (each gets NSEQ replies). */
static void recv_sendrecv(int method)
{
    int n = nints();
    int *sb = ints(n), *rb = ints(n);
    for (int k = 0; k < nmsgs(); k++) {
        int dest = other(k), flag = 0;
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Status st;
        int *b = method == S_REPLACE || method == S_REPLACE_C || method >= S_IREPLACE ? sb : rb;
        fill(sb, rank, k / nothers(), n);
        switch (method) {
        case S_SENDRECV:
            assert_int_equal(MPI_Sendrecv(sb, n, MPI_INT, dest, TAG_REPLY, rb, n, MPI_INT, MPI_ANY_SOURCE, TAG,
                                          MPI_COMM_WORLD, &st), MPI_SUCCESS);
            break;
        case S_SENDRECV_C:
            assert_int_equal(MPI_Sendrecv_c(sb, n, MPI_INT, dest, TAG_REPLY, rb, n, MPI_INT, MPI_ANY_SOURCE, TAG,
                                            MPI_COMM_WORLD, &st), MPI_SUCCESS);
            break;
        case S_REPLACE:
            assert_int_equal(MPI_Sendrecv_replace(sb, n, MPI_INT, dest, TAG_REPLY, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD,
                                                  &st), MPI_SUCCESS);
            break;
        case S_REPLACE_C:
            assert_int_equal(MPI_Sendrecv_replace_c(sb, n, MPI_INT, dest, TAG_REPLY, MPI_ANY_SOURCE, TAG,
                                                    MPI_COMM_WORLD, &st), MPI_SUCCESS);
            break;
        case S_ISENDRECV:
            assert_int_equal(MPI_Isendrecv(sb, n, MPI_INT, dest, TAG_REPLY, rb, n, MPI_INT, MPI_ANY_SOURCE, TAG,
                                           MPI_COMM_WORLD, &r), MPI_SUCCESS);
            break;
        case S_ISENDRECV_C:
            assert_int_equal(MPI_Isendrecv_c(sb, n, MPI_INT, dest, TAG_REPLY, rb, n, MPI_INT, MPI_ANY_SOURCE, TAG,
                                             MPI_COMM_WORLD, &r), MPI_SUCCESS);
            break;
        case S_IREPLACE:
            assert_int_equal(MPI_Isendrecv_replace(sb, n, MPI_INT, dest, TAG_REPLY, MPI_ANY_SOURCE, TAG,
                                                   MPI_COMM_WORLD, &r), MPI_SUCCESS);
            break;
        default:
            assert_int_equal(MPI_Isendrecv_replace_c(sb, n, MPI_INT, dest, TAG_REPLY, MPI_ANY_SOURCE, TAG,
                                                     MPI_COMM_WORLD, &r), MPI_SUCCESS);
            break;
        }
        if (method >= S_ISENDRECV) { /* the nonblocking forms: waited (even rounds) or tested */
            if (round_ & 1) do assert_int_equal(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
                while (!flag);
            else assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
            /* MPICH 5.0.2's own MPI_Isendrecv(_replace) returns a wrong
             * status (MPI_SOURCE, MPI_TAG, count; the program runs plainly
             * too): the message says who sent it */
            st.MPI_SOURCE = b[0];
            st.MPI_TAG = TAG;
            MPI_Status_set_elements(&st, MPI_INT, n);
        }
        check(b, &st);
    }
    free(sb);
    free(rb);
}

/* A sender: the root's NSEQ replies. */
static void replies(void)
{
    int n = nints(), *b = ints(n);
    MPI_Status st;
    for (int q = 0; q < NSEQ; q++) {
        assert_int_equal(MPI_Recv(b, n, MPI_INT, root, TAG_REPLY, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        assert_int_equal(b[0], root);
        assert_int_equal(b[n - 1], value(root, b[1], n - 1));
    }
    free(b);
}

static void sendrecv(void **state)
{
    (void)state;
    every_round(recv_sendrecv, NS, replies);
    passed = 1;
}

/* ---- matched probes; a named receive behind a wildcard one -------------------------- */

static void recv_mprobe(int method)
{
    MPI_Message m;
    MPI_Status st;
    MPI_Request r;
    int *b = ints(nints()), flag = 0;
    for (int k = 0; k < nmsgs(); k++) {
        if (method) {
            for (flag = 0; !flag;)
                assert_int_equal(MPI_Improbe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &m, &st), MPI_SUCCESS);
            assert_int_equal(MPI_Imrecv(b, nints(), MPI_INT, &m, &r), MPI_SUCCESS);
            assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        } else {
            assert_int_equal(MPI_Mprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &m, &st), MPI_SUCCESS);
            assert_int_equal(MPI_Mrecv(b, nints(), MPI_INT, &m, &st), MPI_SUCCESS);
        }
        check(b, &st);
    }
    free(b);
}

/* A wildcard receive called before its sender sent, then a receive naming
 * that sender (blocking for the odd methods): the first gets seq 0, the
 * second seq 1, whatever the order the messages reach MPI in. */
static void named_behind(int method)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int *b[2] = {ints(nints()), ints(nints())}, s = other(0);
    if (rank == root)
        assert_int_equal(MPI_Irecv(b[0], nints(), MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    kase++;
    if (rank == root) {
        memset(seen, 0, sizeof seen);
        if (method & 1) {
            assert_int_equal(MPI_Recv(b[1], nints(), MPI_INT, s, TAG, MPI_COMM_WORLD, &st[1]), MPI_SUCCESS);
            assert_int_equal(MPI_Wait(&r[0], &st[0]), MPI_SUCCESS);
        } else {
            if (method & 2) /* its messages at MPI first: a probe (which lets the wildcard one look) */
                assert_int_equal(MPI_Probe(s, TAG_MARK, marks, MPI_STATUS_IGNORE), MPI_SUCCESS);
            assert_int_equal(MPI_Irecv(b[1], nints(), MPI_INT, s, TAG, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
            assert_int_equal(MPI_Waitall(2, r, st), MPI_SUCCESS);
        }
        check(b[0], &st[0]);
        check(b[1], &st[1]);
        assert_int_equal(MPI_Recv(&s, 1, MPI_INT, s, TAG_MARK, marks, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else if (rank == s) {
        sent_t sent;
        send_first(&sent, NSEQ);
        sends_done(&sent);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(b[0]);
    free(b[1]);
}

static void probes_and_order(void **state)
{
    (void)state;
    every_round(recv_mprobe, 2, NULL);
    for (round_ = 0; round_ < rounds; round_++) {
        root = round_ % size;
        for (int m = 0; m < 4; m++) named_behind(m);
    }
    passed = 1;
}

/* A failed check leaves the other processes waiting for this one: the run
 * ends here, with the failure CMocka printed. */
static int start(void **state)
{
    (void)state;
    passed = 0;
    return 0;
}

static int end(void **state)
{
    (void)state;
    if (!passed) {
        fprintf(stderr, "anysource: rank %d failed in round %d, case %d: aborting\n", rank, round_, kase);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(blocking, start, end),
        cmocka_unit_test_setup_teardown(nonblocking, start, end),
        cmocka_unit_test_setup_teardown(persistent, start, end),
        cmocka_unit_test_setup_teardown(sendrecv, start, end),
        cmocka_unit_test_setup_teardown(probes_and_order, start, end),
    };
    int fails, all = 0;
    double t0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) rounds = atoi(argv[1]);
    if (size < 2 || size > MAXP || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "anysource: 2 to %d processes and ROUNDS >= 1 (got %d, %d)\n", MAXP, size, rounds);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &marks);
    t0 = MPI_Wtime();
    fails = cmocka_run_group_tests_name("anysource", tests, NULL, NULL);
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("anysource: %d rounds on %d processes, %s (%.2f s)\n", rounds, size, all ? "FAILED" : "ok",
               MPI_Wtime() - t0);
    MPI_Comm_free(&marks);
    MPI_Finalize();
    return all != 0;
}
