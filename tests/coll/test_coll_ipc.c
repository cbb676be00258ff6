/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * The IPC engine's on-device collectives (src/coll/ipc*.c) without a GPU:
 * the CPU backend's buffers (MPIACC_BUF_HOST + MPIACC_EVENT) get a stand-in
 * IPC table (coll_ipc_fake.h, mpiacc_coll_test_tables) and no collective
 * engine, so the communicators of one node take the IPC engine
 * (src/coll/comm.h): export_buf copies the exported
 * span into a POSIX shared-memory segment, import_copy reads it through the
 * exporter's datatype blob (mpiacc_tv_offset) and writes it through the
 * receiver's, import_copy_n copies contiguous pieces with memcpy (a
 * second table without it reads every block through import_copy),
 * import_reduce reduces on the host.  What runs is the
 * collective layer's: records, the exchange, the block matching, the
 * one-shot and two-phase reductions, the final error flag.  Checked against
 * MPI's own collective on plain host datatypes (tests/coll/coll_harness.h):
 * every moving kind with random datatypes, all four forms (nonblocking ones
 * too: src/coll/ipc_nb.c; more of them in test_coll_ipc_nb.c), the reductions, the collective fallback (one process
 * refuses its export: every process staged, right results), a failing
 * import on one process (every process returns an error class), and
 * which path reads a block (test_copy_n: dense layouts through
 * import_copy_n only, a vector through import_copy only, a resized type
 * through both, a table without import_copy_n).
 */
#include "coll_harness.h"
#include "coll_ipc_fake.h"

static int moves_on_device(int k)
{
    return k == K_BCAST || k == K_ALLGATHER || k == K_ALLGATHERV || k == K_ALLTOALL || k == K_ALLTOALLV ||
           k == K_NALLTOALL || k == K_NALLTOALLV || k == K_NALLTOALLW;
}

/* One call of kind under test against the oracle; mixed: tagged on a random
 * subset of the sides, the same on every rank (the processes agree: a
 * process whose buffers are not all device memory is staged, as is every
 * other then). */
static void run_one(MPI_Datatype t, int kind, uint64_t *rs, long iter, int mixed, int expect, long *ran)
{
    MPI_Count lo;
    shape_t sh;
    int mask, E;
    MPI_Comm comm = is_neighbor(kind) ? cart : MPI_COMM_WORLD;
    MPI_Datatype tt = tag_host(t), ts, tr;
    MPI_Request req;
    long r0;
    unsigned char *m[4];
    size_t bytes = coll_oracle(&sh, kind, rs, t, comm, iter, rank, size, &E, &lo, m);
    mask = (int)mpiacc_test_rand(rs);
    ts = !mixed || (mask & 1) ? tt : t;
    tr = !mixed || (mask & 2) ? tt : t;
    r0 = runs();
    if (coll_call(&sh, comm, m[2] - lo, ts, m[3] - lo, tr, &req) != MPI_SUCCESS)
        fail_msg("%s form %d: error (iter %ld)", kind_names[kind], sh.form, iter);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    *ran += runs() - r0;
    if (expect && moves_on_device(kind) &&
        !(sh.in_place && (kind == K_ALLTOALL || kind == K_ALLTOALLV)) && runs() == r0)
        fail_msg("%s form %d in place %d: staged, expected on the device (iter %ld)", kind_names[kind], sh.form,
                 sh.in_place, iter);
    if (memcmp(m[0], m[2], bytes) || memcmp(m[1], m[3], bytes))
        fail_msg("%s (form %d, in place %d, root %d, cnt %d, tagged send %d recv %d, combiner %s, iter %ld, seed "
                 "%llu): rank %d's buffers differ from MPI's",
                 kind_names[kind], sh.form, sh.in_place, sh.root, sh.cnt, ts == tt, tr == tt, tg_combiner_name(t),
                 iter, (unsigned long long)mpiacc_test_seed(), rank);
    for (int i = 0; i < 4; i++)
        free(m[i]);
    MPI_Type_free(&tt);
}

static void corpus(int mixed)
{
    uint64_t seed = mpiacc_test_seed(), rs = seed + (uint64_t)mixed;
    long n = tg_corpus_size(8, 100), done = 0, ran = 0;
    tg_src_t src = {.state = seed ^ 0x51ed27u, .large = 1, .max_size = 160, .max_span = 640};
    for (long i = 0; done < n; i++) {
        MPI_Datatype t = tg_make(&src, (int)(1 + i % 4));
        int bad;
        MPI_Type_commit(&t);
        bad = tg_overlaps(t, 2); /* a receive type must not write a byte twice */
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!bad) {
            for (int k = 0; k < K_NKINDS; k++)
                if (moves_on_device(k)) run_one(t, k, &rs, i * K_NKINDS + k, mixed, !mixed, &ran);
            done++;
        }
        tg_free(&t);
    }
    if (rank == 0)
        printf("%s corpus: %ld types, %ld calls on the device, seed %llu\n", mixed ? "mixed" : "device", n, ran,
               (unsigned long long)seed);
    if (!mixed) assert_true(ran > 0);
}

static void test_corpus(void **state) { corpus(0); }
static void test_corpus_mixed(void **state) { corpus(1); }

/* ---- reductions ------------------------------------------------------------------ */

/* Allreduce / Reduce of n elements (int or double), in place or not, on
 * tagged buffers against the values computed here. */
static void reduce_one(int allreduce, int dbl, MPI_Op op, int n, int ip, int root, int expect_device)
{
    size_t esz = dbl ? sizeof(double) : sizeof(int);
    MPI_Datatype base = dbl ? MPI_DOUBLE : MPI_INT, tt = tag_host(base);
    unsigned char *sb = malloc(esz * (size_t)n + 1), *rb = malloc(esz * (size_t)n + 1);
    long r0 = runs();
    int me_root = rank == root, err;
    for (int k = 0; k < n; k++) {
        int v = (k * 7 + rank * 13) % 23 - 11;
        if (dbl) ((double *)sb)[k] = v * 0.5;
        else ((int *)sb)[k] = v;
    }
    if (ip && (allreduce || me_root)) memcpy(rb, sb, esz * (size_t)n);
    else memset(rb, 0x5a, esz * (size_t)n);
    if (allreduce) err = MPI_Allreduce(ip ? MPI_IN_PLACE : sb, rb, n, tt, op, MPI_COMM_WORLD);
    else err = MPI_Reduce(ip && me_root ? MPI_IN_PLACE : sb, rb, n, tt, op, root, MPI_COMM_WORLD);
    assert_int_equal(err, MPI_SUCCESS);
    if (expect_device && runs() == r0)
        fail_msg("%s of %d: staged, expected on the device", allreduce ? "Allreduce" : "Reduce", n);
    if (allreduce || me_root)
        for (int k = 0; k < n; k++) {
            double want = 0;
            for (int r = 0; r < size; r++) {
                int v = (k * 7 + r * 13) % 23 - 11;
                double x = dbl ? v * 0.5 : v;
                if (r == 0) want = x;
                else want = op == MPI_SUM ? want + x : op == MPI_MAX ? (want > x ? want : x) : (want < x ? want : x);
            }
            double got = dbl ? ((double *)rb)[k] : ((int *)rb)[k];
            if (got != want)
                fail_msg("%s (%s, n %d, in place %d, root %d): element %d is %g, expected %g on rank %d",
                         allreduce ? "Allreduce" : "Reduce", dbl ? "double" : "int", n, ip, root, k, got, want, rank);
        }
    free(sb), free(rb);
    MPI_Type_free(&tt);
}

static void test_reductions(void **state)
{
    /* one-shot, two-phase (in place, or above MPIACC_COLL_ONE_SHOT_MAX from 3
     * ranks: the two_phase case sets it to 1K), counts not divisible by the ranks, empty */
    int ns[] = {1, 7, 1000, 70001, 0};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (int ip = 0; ip < 2; ip++) {
            reduce_one(1, 0, MPI_SUM, ns[i], ip, 0, ns[i] > 0);
            reduce_one(1, 1, MPI_MAX, ns[i], ip, 0, ns[i] > 0);
            reduce_one(0, 0, MPI_MIN, ns[i], ip, (int)(i % (size_t)size), ns[i] > 0);
        }
    /* an operation the device does not compute: staged, right */
    {
        int v = rank + 1, w = 0;
        MPI_Datatype tt = tag_host(MPI_INT);
        long f0 = fallbacks();
        assert_int_equal(MPI_Allreduce(&v, &w, 1, tt, MPI_PROD, MPI_COMM_WORLD), MPI_SUCCESS);
        int want = 1;
        for (int r = 0; r < size; r++) want *= r + 1;
        assert_int_equal(w, want);
        assert_true(fallbacks() > f0);
        MPI_Type_free(&tt);
    }
}

/* ---- fallback and failure ---------------------------------------------------------- */

static void test_fallback(void **state)
{
    long f0 = fallbacks(), r0 = runs();
    uint64_t rs = mpiacc_test_seed() + 99;
    long ran = 0;
    mode = FAKE_NO_EXPORT;
    mode_rank = size - 1;
    /* every moving kind and the reductions, with int elements */
    for (int k = 0; k < K_NKINDS; k++)
        if (moves_on_device(k)) run_one(MPI_INT, k, &rs, 5000 + k, 0 /* all tagged */, 0, &ran);
    reduce_one(1, 0, MPI_SUM, 100, 0, 0, 0);
    mode_rank = -1;
    mode = FAKE_OK;
    /* (a kind where the refusing process exports nothing, a Bcast from
     * another root, may still run on the device) */
    assert_true(fallbacks() > f0);
    if (rank == 0) printf("fallback: %ld of the calls ran on the device\n", runs() - r0);
}

static void test_failure(void **state)
{
    int v[64], w[64], cls, err;
    MPI_Datatype tt = tag_host(MPI_INT);
    long r0 = runs();
    for (int i = 0; i < 64; i++) v[i] = i + rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mode = FAKE_IMPORT_FAILS;
    mode_rank = 0;
    err = MPI_Allgather(v, 64 / size, tt, w, 64 / size, tt, MPI_COMM_WORLD);
    assert_int_not_equal(err, MPI_SUCCESS);
    MPI_Error_class(err, &cls);
    assert_int_not_equal(cls, MPI_SUCCESS);
    err = MPI_Allreduce(v, w, 64, tt, MPI_SUM, MPI_COMM_WORLD);
    assert_int_not_equal(err, MPI_SUCCESS);
    err = MPI_Bcast(v, 64, tt, 1 % size, MPI_COMM_WORLD);
    if (size > 1) assert_int_not_equal(err, MPI_SUCCESS); /* the root reads nothing, but learns of the failure */
    mode = FAKE_OK;
    mode_rank = -1;
    assert_true(runs() > r0);
    /* and the communicator still works (the Bcast wrote v where it could) */
    for (int i = 0; i < 64; i++) v[i] = i + rank;
    assert_int_equal(MPI_Allreduce(v, w, 64, tt, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(w[3], 3 * size + size * (size - 1) / 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&tt);
}

/* ---- contiguous blocks: one import_copy_n per call ------------------------------- */

/* Every moving kind, iters random shapes each, with datatype t; the
 * process-wide import_copy / import_copy_n calls and pieces it made. */
static void moves_with(MPI_Datatype t, int iters, uint64_t *rs, long *copies, long *calls, long *pieces)
{
    long c0 = copy_calls, n0 = copyn_calls, p0 = copyn_pieces, ran = 0;
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < K_NKINDS; k++)
            if (moves_on_device(k)) run_one(t, k, rs, 7000 + it * K_NKINDS + k, 0, 1, &ran);
    *copies = copy_calls - c0, *calls = copyn_calls - n0, *pieces = copyn_pieces - p0;
    MPI_Allreduce(MPI_IN_PLACE, copies, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, calls, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, pieces, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
}

static void test_copy_n(void **state)
{
    uint64_t rs = mpiacc_test_seed() + 24;
    long copies, calls, pieces;
    MPI_Datatype c3, vec, rsz;
    (void)state;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &rsz); /* dense for one element only */
    MPI_Type_commit(&c3), MPI_Type_commit(&vec), MPI_Type_commit(&rsz);
    /* dense layouts (a contiguous type of count > 1 too): pieces only */
    moves_with(MPI_INT, 12, &rs, &copies, &calls, &pieces);
    if (rank == 0) printf("copy_n: MPI_INT: %ld import_copy_n calls (%ld pieces), %ld import_copy\n", calls, pieces, copies);
    assert_true(calls > 0 && pieces >= calls);
    assert_int_equal(copies, 0);
    moves_with(c3, 12, &rs, &copies, &calls, &pieces);
    assert_true(calls > 0);
    assert_int_equal(copies, 0);
    moves_with(MPI_BYTE, 6, &rs, &copies, &calls, &pieces); /* odd lengths and addresses */
    assert_true(calls > 0);
    assert_int_equal(copies, 0);
    /* one row of a 3 x 4 int array (true lower bound 16, extent 48): a piece
     * at a start offset for one element, import_copy for two */
    {
        int sizes[2] = {3, 4}, sub[2] = {1, 4}, start[2] = {1, 0};
        MPI_Datatype row;
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &row);
        MPI_Type_commit(&row);
        moves_with(row, 12, &rs, &copies, &calls, &pieces);
        if (rank == 0) printf("copy_n: subarray row: %ld pieces, %ld import_copy\n", pieces, copies);
        assert_true(pieces > 0);
        MPI_Type_free(&row);
    }
    /* not contiguous: one import_copy per block, no piece */
    moves_with(vec, 8, &rs, &copies, &calls, &pieces);
    if (rank == 0) printf("copy_n: vector: %ld import_copy_n calls, %ld import_copy\n", calls, copies);
    assert_true(copies > 0);
    assert_int_equal(pieces, 0);
    /* one element dense, several not (extent > size): both paths in the same corpus */
    moves_with(rsz, 12, &rs, &copies, &calls, &pieces);
    if (rank == 0) printf("copy_n: resized: %ld pieces, %ld import_copy\n", pieces, copies);
    assert_true(copies > 0 && pieces > 0);
    /* a table without import_copy_n: dense blocks one by one */
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, &fake_no_n);
    moves_with(MPI_INT, 6, &rs, &copies, &calls, &pieces);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, &fake);
    assert_true(copies > 0);
    assert_int_equal(calls, 0);
    MPI_Type_free(&c3), MPI_Type_free(&vec), MPI_Type_free(&rsz);
}

int main(int argc, char **argv)
{
    int failed;
    mpiacc_test_init(&argc, &argv, "usage: %s\nThe IPC engine's on-device collectives through a stand-in IPC table "
                                   "on host buffers (MPIACC_BUF_HOST + MPIACC_EVENT), against MPI.\n",
                                   &rank, &size, 0, &cart);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, &fake);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus), cmocka_unit_test(test_corpus_mixed), cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_fallback), cmocka_unit_test(test_failure), cmocka_unit_test(test_copy_n),
    };
    failed = MPIACC_TEST_RUN("coll_ipc", tests, NULL, NULL);
    MPI_Comm_free(&cart);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, NULL);
    failed |= fake_unbalanced();
    return mpiacc_test_end(failed);
}
