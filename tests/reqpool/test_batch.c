/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transfers started together share one launch (src/reqpool/batch.c), on the
 * device protocol's CPU stand-in (standin.h) given an xfer_many that
 * counts its calls and items (2 ranks):
 *  - MPI_Startall of K persistent vector sends: their packs go to the
 *    backend in one xfer_many call of K items; the receives' unpacks in
 *    calls of one or more items (those whose bytes landed in one progress
 *    pass), K items in all; data as sent;
 *  - MPI_Isend calls posted back to back (then MPI_Waitall) share one pack
 *    launch (MPIACC_BATCH=1, the default); with MPIACC_BATCH=0 (the _nobatch
 *    run) each pack is launched in its own call: no pack item;
 *  - a transfer over MPIACC_RP_BATCH_BYTES is launched on its own;
 *  - a failed batch launch: each op tries alone, and only an op whose own
 *    launch fails too ends in error (MPI_ERR_IN_STATUS from MPI_Waitall);
 *    nothing hangs.
 */
#include <string.h>

#include "standin.h"

#define N 64
#define K 6
static int rank, peer;
static atomic_int calls[2], items[2], fail_next;
static int batching; /* MPIACC_BATCH is not 0 */

/* The CPU backend's pack / unpack of each item; calls[d]: the calls holding
 * an item of direction d, items[d]: those items. */
static int standin_xfer_many(mpiacc_xfer_item_t *it, int n)
{
    const mpiacc_backend_t *cpu = mpiacc_cpu_backend();
    int has[2] = {0, 0};
    if (atomic_load(&fail_next) > 0 && atomic_fetch_sub(&fail_next, 1) > 0) /* the next fail_next calls fail */
        return mpiacc_err(MPIACC_ERRK_BACKEND, "stand-in: batch launch refused");
    for (int i = 0; i < n; i++) has[it[i].dir] = 1; /* a batch may hold packs and unpacks */
    for (int d = 0; d < 2; d++) atomic_fetch_add(&calls[d], has[d]);
    for (int i = 0; i < n; i++) {
        int rc;
        atomic_fetch_add(&items[it[i].dir], 1);
        rc = it[i].dir ? cpu->unpack(it[i].a, it[i].dep, &it[i].d, &it[i].xfer)
                       : cpu->pack(it[i].a, it[i].dep, &it[i].d, &it[i].xfer);
        if (rc != MPI_SUCCESS) {
            for (int j = 0; j < i; j++) cpu->release(it[j].xfer);
            return rc;
        }
    }
    return MPI_SUCCESS;
}

static void reset(void)
{
    for (int d = 0; d < 2; d++) atomic_store(&calls[d], 0), atomic_store(&items[d], 0);
}

static void startall_fuses(void **s)
{
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 1, &gate);
    static int a[K][2 * N], b[K][2 * N];
    MPI_Request q[2 * K];
    (void)s;
    for (int i = 0; i < K; i++) {
        MPI_Recv_init(b[i], 1, t, peer, i, MPI_COMM_WORLD, &q[i]);
        MPI_Send_init(a[i], 1, t, peer, i, MPI_COMM_WORLD, &q[K + i]);
    }
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < K; i++) fill_ints(a[i], 2 * N, 100 * it + 10 * i + rank);
        memset(b, 0, sizeof b);
        MPI_Barrier(MPI_COMM_WORLD);
        reset();
        assert_int_equal(MPI_Startall(2 * K, q), MPI_SUCCESS);
        assert_int_equal(atomic_load(&calls[0]), 1); /* every pack in one launch, within MPI_Startall */
        assert_int_equal(atomic_load(&items[0]), K);
        assert_int_equal(MPI_Waitall(2 * K, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        assert_int_equal(atomic_load(&items[1]), K);
        assert_true(atomic_load(&calls[1]) >= 1 && atomic_load(&calls[1]) <= K);
        for (int i = 0; i < K; i++) {
            int ref[2 * N];
            fill_ints(ref, 2 * N, 100 * it + 10 * i + peer);
            for (int j = 0; j < N; j++) assert_int_equal(b[i][2 * j], ref[2 * j]);
        }
    }
    for (int i = 0; i < 2 * K; i++) MPI_Request_free(&q[i]);
    MPI_Type_free(&t);
}

static void one_by_one_and_large(void **s)
{
    atomic_int gate = 1;
    enum { BIG = (1 << 20) / (int)sizeof(int) + 16 }; /* packed bytes over MPIACC_RP_BATCH_BYTES */
    MPI_Datatype t = pool_type(N, 1, &gate), big = pool_type(BIG, 1, &gate);
    int a[2][2 * N], b[2][2 * N], *x = calloc(2 * BIG, sizeof(int)), *y = calloc(2 * BIG, sizeof(int));
    MPI_Request q[4];
    (void)s;
    MPI_Barrier(MPI_COMM_WORLD);
    reset();
    for (int i = 0; i < 2; i++) MPI_Irecv(b[i], 1, t, peer, i, MPI_COMM_WORLD, &q[i]);
    for (int i = 0; i < 2; i++) MPI_Isend(a[i], 1, t, peer, i, MPI_COMM_WORLD, &q[2 + i]);
    assert_int_equal(atomic_load(&items[0]), 0); /* nothing launched before the next MPI progress */
    assert_int_equal(MPI_Waitall(4, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    if (batching) {
        assert_int_equal(atomic_load(&calls[0]), 1);
        assert_int_equal(atomic_load(&items[0]), 2);
    } else {
        assert_int_equal(atomic_load(&items[0]), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    reset();
    MPI_Send_init(x, 1, big, peer, 3, MPI_COMM_WORLD, &q[0]);
    MPI_Recv_init(y, 1, big, peer, 3, MPI_COMM_WORLD, &q[1]);
    assert_int_equal(MPI_Startall(2, q), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_int_equal(atomic_load(&items[0]) + atomic_load(&items[1]), 0);
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    free(x), free(y);
    MPI_Type_free(&t);
    MPI_Type_free(&big);
}

/* A batch whose launch fails: each op tries alone, and only the one whose
 * own launch fails too ends in error; the others are sent. */
static void failed_launch(void **s)
{
    atomic_int gate = 1;
    MPI_Datatype t = pool_type(N, 1, &gate);
    int a[3][2 * N], b[2 * N] = {0}, err[3];
    MPI_Status st[3];
    MPI_Request q[3];
    (void)s;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < 3; i++) MPI_Send_init(a[i], 1, t, peer, 20 + i, MPI_COMM_WORLD, &q[i]);
        atomic_store(&fail_next, 2); /* the batch's launch, then the first op's alone */
        assert_int_equal(MPI_Startall(3, q), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(3, q, st), MPI_ERR_IN_STATUS);
        for (int i = 0; i < 3; i++) MPI_Error_class(st[i].MPI_ERROR, &err[i]);
        assert_int_equal(err[0], MPI_ERR_OTHER);
        assert_int_equal(err[1], MPI_SUCCESS);
        assert_int_equal(err[2], MPI_SUCCESS);
        assert_int_equal(atomic_load(&fail_next), 0);
        for (int i = 0; i < 3; i++) MPI_Request_free(&q[i]);
    } else {
        for (int i = 1; i < 3; i++)
            assert_int_equal(MPI_Recv(b, 1, t, peer, 20 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    /* rank 1 got nothing for the failed one; its receive of the next message still works */
    if (rank == 0) assert_int_equal(MPI_Send(a[0], 1, t, peer, 23, MPI_COMM_WORLD), MPI_SUCCESS);
    else assert_int_equal(MPI_Recv(b, 1, t, peer, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    int failed, size;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(startall_fuses, pool_barrier),
        cmocka_unit_test_setup(one_by_one_and_large, pool_barrier),
        cmocka_unit_test_setup(failed_launch, pool_barrier),
    };
    if (mpiacc_test_help(argc, argv, "usage: mpiexec -n 2 %s\nBatched transfers (src/reqpool/batch.c) on a CPU "
                                     "stand-in of the device protocol.\n"))
        return 0;
    standin_install();
    standin.xfer_many = standin_xfer_many;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) mpiacc_test_skip_all("needs 2 ranks");
    peer = 1 - rank;
    batching = !getenv("MPIACC_BATCH") || strcmp(getenv("MPIACC_BATCH"), "0") != 0;
    failed = MPIACC_TEST_RUN("batch", tests, NULL, NULL);
    MPI_Finalize();
    assert_int_equal(atomic_load(&staging_live), 0);
    return failed ? 1 : 0;
}
