/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * The nonblocking on-device collectives (src/coll/ipc_nb.c) through the
 * stand-in IPC table of coll_ipc_fake.h (the IPC engine of src/coll/comm.h:
 * one node, no collective engine for these buffers): several outstanding at once (Iallreduce one-shot and
 * two-phase, Ireduce, Ibcast, Iallgather(v), Ialltoall(v),
 * Ineighbor_alltoall(v,w)), mixed with blocking collectives on the device
 * and staged ones on the same communicator, completed by MPI_Waitall, by
 * MPI_Test loops and in reverse order by MPI_Wait; the values are checked
 * against what MPI's collectives define (computed here).  Then the
 * collective fallback (one process refuses its exports: every process
 * staged, right results), a failing import on one process (every process
 * completes every request with an error class, no hang; its reads refused,
 * or started and failing later), reads that complete a little later (the
 * operation polls them), and the arrows of
 * the state machine (mpiacc_rp_transitions).
 */
#include <pthread.h>
#include <time.h>

#include "coll_ipc_fake.h"
#include "reqpool/reqpool.h"

enum { NOPS = 11, MAXN = 5000 };

/* ---- asynchronous reads: the stand-in's copies done at once, but their
 * handles (the CPU backend's: an atomic flag, done when non-zero, failed
 * when negative) only set by a helper thread a little later, so that the
 * operation polls them (COPYING); `async_fails` on mode_rank: set to -1 */
enum { RING = 4096 };
static _Atomic int ring[RING], ring_final[RING];
static atomic_int ring_next, stop_flipper, async_fails;

static void *flipper(void *arg)
{
    struct timespec ts = {0, 200000};
    (void)arg;
    while (!atomic_load(&stop_flipper)) {
        nanosleep(&ts, NULL);
        for (int i = 0; i < RING; i++)
            if (atomic_load(&ring[i]) == 0) atomic_store(&ring[i], atomic_load(&ring_final[i]));
    }
    return NULL;
}

static void *handle(void)
{
    int i = atomic_fetch_add(&ring_next, 1) % RING;
    atomic_store(&ring_final[i], atomic_load(&async_fails) && rank == mode_rank ? -1 : 1);
    atomic_store(&ring[i], 0);
    return &ring[i];
}

static int async_import(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *x, const void *blob,
                        size_t blob_bytes, MPI_Count src_count, const mpiacc_xfer_desc_t *d, void **xfer)
{
    int err = fake_import(a, dep, x, blob, blob_bytes, src_count, d, xfer);
    if (err == MPI_SUCCESS) *xfer = handle();
    return err;
}

static int async_reduce(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int n, MPI_Aint disp,
                        MPI_Datatype type, MPI_Op op, MPI_Count count, void *dst, void **xfer)
{
    int err = fake_reduce(a, dep, xs, n, disp, type, op, count, dst, xfer);
    if (err == MPI_SUCCESS) *xfer = handle();
    return err;
}

static const struct mpiacc_backend_ipc fake_async = {.export_buf = fake_export,
                                                     .export_release = fake_release,
                                                     .import_copy = async_import,
                                                     .stats = fake_stats,
                                                     .reduce_supported = fake_supported,
                                                     .import_reduce = async_reduce};

/* The value rank r holds at element k of its send data for call j. */
static int val(int j, int r, int k, int salt) { return (j * 31 + r * 1009 + k * 7 + salt) % 20011 - 10000; }

typedef struct call {
    int kind, n;
    int *sb, *rb;
    int counts[8], displs[8];
    MPI_Aint wdispls[8];
    MPI_Datatype types[8];
} call_t;

static MPI_Datatype tt; /* MPI_INT tagged for the host (the stand-in table) */

static void post(call_t *c, int j, int n, int salt, MPI_Request *req)
{
    int root = j % size, m = n / size + 1, in_place = (j / NOPS) % 2;
    c->kind = j % NOPS;
    c->n = n;
    c->sb = malloc(sizeof(int) * (size_t)(n * size + 16));
    c->rb = malloc(sizeof(int) * (size_t)(n * size + 16));
    for (int k = 0; k < n * size + 16; k++) c->sb[k] = val(j, rank, k, salt), c->rb[k] = -7;
    for (int i = 0; i < 8; i++) c->types[i] = tt;
    switch (c->kind) {
    case 0: /* one-shot (or two-phase when in place) */
        if (in_place) memcpy(c->rb, c->sb, sizeof(int) * (size_t)n);
        assert_int_equal(MPI_Iallreduce(in_place ? MPI_IN_PLACE : c->sb, c->rb, n, tt, MPI_SUM, MPI_COMM_WORLD, req),
                         MPI_SUCCESS);
        break;
    case 1: /* two-phase: in place */
        memcpy(c->rb, c->sb, sizeof(int) * (size_t)n);
        assert_int_equal(MPI_Iallreduce(MPI_IN_PLACE, c->rb, n, tt, MPI_MAX, MPI_COMM_WORLD, req), MPI_SUCCESS);
        break;
    case 2: assert_int_equal(MPI_Ireduce(c->sb, c->rb, n, tt, MPI_MIN, root, MPI_COMM_WORLD, req), MPI_SUCCESS); break;
    case 3:
        if (rank != root) memset(c->sb, 0, sizeof(int) * (size_t)n);
        assert_int_equal(MPI_Ibcast(c->sb, n, tt, root, MPI_COMM_WORLD, req), MPI_SUCCESS);
        break;
    case 4: assert_int_equal(MPI_Iallgather(c->sb, m, tt, c->rb, m, tt, MPI_COMM_WORLD, req), MPI_SUCCESS); break;
    case 5:
        for (int i = 0, d = 0; i < size; i++) c->counts[i] = (i * 3 + j) % 5, c->displs[i] = d, d += c->counts[i] + 1;
        assert_int_equal(MPI_Iallgatherv(c->sb, c->counts[rank], tt, c->rb, c->counts, c->displs, tt, MPI_COMM_WORLD,
                                         req),
                         MPI_SUCCESS);
        break;
    case 6: assert_int_equal(MPI_Ialltoall(c->sb, m, tt, c->rb, m, tt, MPI_COMM_WORLD, req), MPI_SUCCESS); break;
    case 7: /* block to i: (rank + i) % 3 + 1 elements at i * 4, into i * 5 */
    {
        int sc[8], sd[8], rc[8], rd[8];
        for (int i = 0; i < size; i++)
            sc[i] = (rank + i) % 3 + 1, sd[i] = i * 4, rc[i] = (i + rank) % 3 + 1, rd[i] = i * 5;
        assert_int_equal(MPI_Ialltoallv(c->sb, sc, sd, tt, c->rb, rc, rd, tt, MPI_COMM_WORLD, req), MPI_SUCCESS);
        break;
    }
    case 8: assert_int_equal(MPI_Ineighbor_alltoall(c->sb, m, tt, c->rb, m, tt, cart, req), MPI_SUCCESS); break;
    case 9:
        for (int i = 0; i < 2; i++) c->counts[i] = m, c->displs[i] = (1 - i) * (m + 2);
        assert_int_equal(MPI_Ineighbor_alltoallv(c->sb, c->counts, c->displs, tt, c->rb, c->counts, c->displs, tt,
                                                 cart, req),
                         MPI_SUCCESS);
        break;
    default:
        for (int i = 0; i < 2; i++) c->counts[i] = m, c->wdispls[i] = (MPI_Aint)sizeof(int) * i * (m + 3);
        assert_int_equal(MPI_Ineighbor_alltoallw(c->sb, c->counts, c->wdispls, c->types, c->rb, c->counts,
                                                 c->wdispls, c->types, cart, req),
                         MPI_SUCCESS);
        break;
    }
}

#define EXPECT(got, want, what)                                                                                     \
    do {                                                                                                             \
        if ((got) != (want))                                                                                         \
            fail_msg("call %d (%s, n %d): %s: %d, expected %d on rank %d (seed %llu)", j, names[c->kind], c->n, what, \
                     (got), (want), rank, (unsigned long long)mpiacc_test_seed());                                   \
    } while (0)

static const char *const names[NOPS] = {"Iallreduce",  "Iallreduce in place", "Ireduce",
                                        "Ibcast",      "Iallgather",          "Iallgatherv",
                                        "Ialltoall",   "Ialltoallv",          "Ineighbor_alltoall",
                                        "Ineighbor_alltoallv", "Ineighbor_alltoallw"};

static void check(call_t *c, int j, int salt)
{
    int n = c->n, root = j % size, m = n / size + 1, in_place = (j / NOPS) % 2;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    switch (c->kind) {
    case 0:
    case 1:
        for (int k = 0; k < n; k++) {
            int want = val(j, 0, k, salt);
            for (int r = 1; r < size; r++) {
                int v = val(j, r, k, salt);
                want = c->kind == 0 ? want + v : (v > want ? v : want);
            }
            EXPECT(c->rb[k], want, "element");
        }
        (void)in_place;
        break;
    case 2:
        for (int k = 0; k < n && rank == root; k++) {
            int want = val(j, 0, k, salt);
            for (int r = 1; r < size; r++) want = val(j, r, k, salt) < want ? val(j, r, k, salt) : want;
            EXPECT(c->rb[k], want, "element");
        }
        break;
    case 3:
        for (int k = 0; k < n; k++) EXPECT(c->sb[k], val(j, root, k, salt), "element");
        break;
    case 4:
        for (int r = 0; r < size; r++)
            for (int k = 0; k < m; k++) EXPECT(c->rb[r * m + k], val(j, r, k, salt), "block element");
        break;
    case 5:
        for (int r = 0; r < size; r++) {
            for (int k = 0; k < c->counts[r]; k++) EXPECT(c->rb[c->displs[r] + k], val(j, r, k, salt), "block element");
            EXPECT(c->rb[c->displs[r] + c->counts[r]], -7, "gap");
        }
        break;
    case 6:
        for (int r = 0; r < size; r++)
            for (int k = 0; k < m; k++) EXPECT(c->rb[r * m + k], val(j, r, rank * m + k, salt), "block element");
        break;
    case 7:
        for (int r = 0; r < size; r++) {
            int cnt = (r + rank) % 3 + 1;
            for (int k = 0; k < cnt; k++) EXPECT(c->rb[r * 5 + k], val(j, r, rank * 4 + k, salt), "block element");
            EXPECT(c->rb[r * 5 + cnt], -7, "gap");
        }
        break;
    default: /* receive block 0 from the left (its block 1), block 1 from the right (its block 0) */
        for (int k = 0; k < m; k++) {
            int at0 = c->kind == 8 ? 0 : c->kind == 9 ? c->displs[0] : (int)(c->wdispls[0] / (MPI_Aint)sizeof(int));
            int at1 = c->kind == 8 ? m : c->kind == 9 ? c->displs[1] : (int)(c->wdispls[1] / (MPI_Aint)sizeof(int));
            EXPECT(c->rb[at0 + k], val(j, left, at1 + k, salt), "block 0 element");
            EXPECT(c->rb[at1 + k], val(j, right, at0 + k, salt), "block 1 element");
        }
        break;
    }
    free(c->sb), free(c->rb);
}

/* A blocking on-device Allreduce and a staged Gather (tagged, not an
 * on-device kind) in the middle of outstanding nonblocking calls. */
static long gathers; /* MPI_Gather calls: staged (no IPC algorithm) */

static void blocking_between(int salt)
{
    int v[40], w[40], *g = malloc(sizeof(int) * 40 * (size_t)size);
    for (int k = 0; k < 40; k++) v[k] = val(99, rank, k, salt);
    assert_int_equal(MPI_Allreduce(v, w, 40, tt, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int k = 0; k < 40; k++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(99, r, k, salt);
        assert_int_equal(w[k], want);
    }
    assert_int_equal(MPI_Gather(v, 40, tt, g, 40, tt, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    gathers++;
    for (int r = 0; r < size && rank == 0; r++)
        for (int k = 0; k < 40; k++) assert_int_equal(g[r * 40 + k], val(99, r, k, salt));
    free(g);
}

/* Rounds of `per` outstanding calls; how: 0 Waitall, 1 Test loops, 2 Wait in reverse order. */
static void rounds(int per, int how, int mixed, uint64_t *rs)
{
    call_t c[2 * NOPS];
    MPI_Request req[2 * NOPS];
    for (int round = 0; round < 2 * NOPS / per + 1; round++) {
        int salt = (int)(mpiacc_test_rand(rs) % 1000), base = round * per;
        for (int i = 0; i < per; i++) {
            int n = 1 + (int)((mpiacc_test_rand(rs) >> 7) % MAXN); /* the same seed everywhere */
            post(&c[i], base + i, n, salt, &req[i]);
            if (mixed && i == per / 2) blocking_between(salt);
        }
        if (how == 0) {
            assert_int_equal(MPI_Waitall(per, req, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        } else if (how == 1) {
            for (int i = 0; i < per; i++) {
                int flag = 0;
                while (!flag) assert_int_equal(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            }
        } else {
            for (int i = per - 1; i >= 0; i--) assert_int_equal(MPI_Wait(&req[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
        }
        for (int i = 0; i < per; i++) {
            int j = base + i;
            check(&c[i], j, salt);
        }
    }
}

static long tr(int from, int to) { return atomic_load(&mpiacc_rp_transitions[from][to]); }

static void test_outstanding(void **state)
{
    uint64_t rs = mpiacc_test_seed() * 3 + 1;
    long r0 = runs(), f0 = fallbacks(), g0 = gathers;
    rounds(NOPS, 0, 0, &rs);
    rounds(4, 1, 1, &rs);
    rounds(7, 2, 1, &rs);
    if (rank == 0) printf("outstanding: %ld calls on the device, %ld staged\n", runs() - r0, fallbacks() - f0);
    assert_int_equal(fallbacks() - f0, gathers - g0); /* only the MPI_Gather calls */
    assert_true(runs() - r0 >= 3 * NOPS);
}

static void test_outstanding_async(void **state)
{
    uint64_t rs = mpiacc_test_seed() * 7 + 3;
    long r0 = runs(), polled = tr(MPIACC_RP_COPYING, MPIACC_RP_IN_FLIGHT);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, &fake_async);
    rounds(NOPS, 0, 1, &rs);
    rounds(5, 1, 0, &rs);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, &fake);
    assert_true(runs() - r0 >= 2 * NOPS);
    assert_true(tr(MPIACC_RP_COPYING, MPIACC_RP_IN_FLIGHT) - polled >= 2 * NOPS);
}

/* The application frees the communicator while its nonblocking
 * collectives are pending (MPI lets them complete). */
static void test_comm_freed(void **state)
{
    MPI_Comm dup;
    MPI_Request req[2];
    int v[300], w[300], x[300];
    long r0 = runs();
    for (int k = 0; k < 300; k++) v[k] = val(7, rank, k, 1), x[k] = k + rank * 1000;
    assert_int_equal(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    assert_int_equal(MPI_Iallreduce(v, w, 300, tt, MPI_SUM, dup, &req[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Ibcast(x, 300, tt, 0, dup, &req[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_free(&dup), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int k = 0; k < 300; k++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(7, r, k, 1);
        assert_int_equal(w[k], want);
        assert_int_equal(x[k], k);
    }
    if (rank == 0) printf("comm freed: %ld of 2 calls on the device\n", runs() - r0);
}

static void test_transitions(void **state)
{
    long rx = tr(MPIACC_RP_READY, MPIACC_RP_EXCHANGING), xc = tr(MPIACC_RP_EXCHANGING, MPIACC_RP_COPYING);
    long cf = tr(MPIACC_RP_COPYING, MPIACC_RP_IN_FLIGHT), cx = tr(MPIACC_RP_COPYING, MPIACC_RP_EXCHANGING);
    long nr = tr(MPIACC_RP_NEW, MPIACC_RP_READY), fd = tr(MPIACC_RP_IN_FLIGHT, MPIACC_RP_DONE);
    call_t c;
    MPI_Request req;
    post(&c, 1, 100, 5, &req); /* Iallreduce in place: two phases */
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    check(&c, 1, 5);
    assert_int_equal(tr(MPIACC_RP_NEW, MPIACC_RP_READY) - nr, 1);
    assert_int_equal(tr(MPIACC_RP_READY, MPIACC_RP_EXCHANGING) - rx, 1);
    assert_int_equal(tr(MPIACC_RP_EXCHANGING, MPIACC_RP_COPYING) - xc, 2); /* records, then the middle exchange */
    assert_int_equal(tr(MPIACC_RP_COPYING, MPIACC_RP_EXCHANGING) - cx, 1);
    assert_int_equal(tr(MPIACC_RP_COPYING, MPIACC_RP_IN_FLIGHT) - cf, 1);
    assert_int_equal(tr(MPIACC_RP_IN_FLIGHT, MPIACC_RP_DONE) - fd, 1);
}

static void test_fallback(void **state)
{
    long f0 = fallbacks();
    long staged0 = tr(MPIACC_RP_EXCHANGING, MPIACC_RP_DEP_PENDING) + tr(MPIACC_RP_EXCHANGING, MPIACC_RP_PACKING) +
                   tr(MPIACC_RP_EXCHANGING, MPIACC_RP_READY);
    uint64_t rs = mpiacc_test_seed() * 5 + 2;
    mode = FAKE_NO_EXPORT;
    mode_rank = size - 1;
    rounds(NOPS, 0, 1, &rs);
    mode = FAKE_OK;
    mode_rank = -1;
    assert_true(fallbacks() - f0 >= NOPS - 2); /* (an Ibcast from another root may run on the device) */
    assert_true(tr(MPIACC_RP_EXCHANGING, MPIACC_RP_DEP_PENDING) + tr(MPIACC_RP_EXCHANGING, MPIACC_RP_PACKING) +
                    tr(MPIACC_RP_EXCHANGING, MPIACC_RP_READY) - staged0 >=
                NOPS - 2);
}

static void test_failure(void **state)
{
    call_t c[6];
    MPI_Request req[6];
    int err, cls, ks[6] = {4, 0, 1, 3, 6, 8};
    long fail0 = tr(MPIACC_RP_IN_FLIGHT, MPIACC_RP_T_ERROR);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    mode = FAKE_IMPORT_FAILS;
    mode_rank = 0;
    for (int i = 0; i < 6; i++) {
        int j = ks[i];
        while (ks[i] == 3 && j % size == 0) j += NOPS; /* the Ibcast's root is not the failing process */
        post(&c[i], j, 64, 3, &req[i]);
    }
    for (int i = 0; i < 6; i++) {
        err = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS) fail_msg("%s: no error on rank %d although rank 0 failed its reads", names[ks[i]], rank);
        MPI_Error_class(err, &cls);
        assert_int_not_equal(cls, MPI_SUCCESS);
        free(c[i].sb), free(c[i].rb);
    }
    /* the reads start but their handles report a failure later (the backend's test()) */
    mode = FAKE_OK;
    atomic_store(&async_fails, 1);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, &fake_async);
    for (int i = 0; i < 6; i++) {
        int j = ks[i];
        while (ks[i] == 3 && j % size == 0) j += NOPS;
        post(&c[i], j, 64, 4, &req[i]);
    }
    for (int i = 5; i >= 0; i--) {
        err = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS)
            fail_msg("%s: no error on rank %d although rank 0's reads failed", names[ks[i]], rank);
        MPI_Error_class(err, &cls);
        assert_int_not_equal(cls, MPI_SUCCESS);
        free(c[i].sb), free(c[i].rb);
    }
    atomic_store(&async_fails, 0);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, &fake);
    mode_rank = -1;
    assert_true(tr(MPIACC_RP_IN_FLIGHT, MPIACC_RP_T_ERROR) - fail0 >= 12);
    /* the communicator still works */
    {
        uint64_t rs = mpiacc_test_seed() + 11;
        rounds(NOPS, 0, 0, &rs);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int failed;
    mpiacc_test_init(&argc, &argv, "usage: %s\nNonblocking collectives of the IPC engine through a stand-in IPC "
                                   "table on host buffers: several outstanding, mixed with blocking ones, the "
                                   "fallback, a failing process, the state machine's arrows.\n",
                                   &rank, &size, 8, &cart);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, &fake);
    tt = tag_host(MPI_INT);
    pthread_t th;
    pthread_create(&th, NULL, flipper, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outstanding), cmocka_unit_test(test_outstanding_async),
        cmocka_unit_test(test_comm_freed), cmocka_unit_test(test_transitions), cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_failure),
    };
    failed = MPIACC_TEST_RUN("coll_ipc_nb", tests, NULL, NULL);
    atomic_store(&stop_flipper, 1);
    pthread_join(th, NULL);
    MPI_Type_free(&tt);
    MPI_Comm_free(&cart);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, NULL);
    failed |= fake_unbalanced();
    return mpiacc_test_end(failed);
}
