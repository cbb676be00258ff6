/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * The NCCL path of the collectives layer (src/coll/dev.c, dev_run.c,
 * comm.c) without a GPU: the CPU backend's buffers (MPIACC_BUF_HOST +
 * MPIACC_EVENT) get the stand-in engine of coll_dev_fake.h, which runs the
 * layer's programs (packs, one group of steps, unpacks) with MPI on host
 * memory.  Checked against MPI's own collectives on the plain datatypes:
 *   - every moving kind (15, all four forms, in place where MPI allows it)
 *     with random datatypes, contiguous or not (packed into the temporary);
 *   - the reductions (Allreduce, Reduce, Reduce_scatter(_block)) of int and
 *     double, contiguous and not, every operation the engine takes, in
 *     place, nonblocking; those it does not take (MPI_BAND, MPI_MINLOC, a
 *     user operation) are staged;
 *   - the nonblocking operation's arrows (NEW -> COPYING -> DONE, a late
 *     completion, COPYING -> ERROR with the engine's error class, later
 *     calls failing at once on the broken communicator);
 *   - the engine's choice per communicator: engine absent on one process
 *     (staged, logged), processes sharing a GPU (the IPC engine with an IPC
 *     table, else staged), a communicator refused by one process (staged);
 *   - a communicator freed with calls pending; MPIACC_COLL_CHECK.
 */
#include <stdio.h>

#include "coll_harness.h"
#include "coll_ipc_fake.h"
#include "coll_dev_fake.h"
#include "stderr_capture.h"

static long tr(int from, int to) { return atomic_load(&mpiacc_rp_transitions[from][to]); }
static long staged(void) { return atomic_load(&mpiacc_coll_staged_runs); }

/* ---- every moving kind ------------------------------------------------------------ */

static void move_one(MPI_Datatype t, int kind, uint64_t *rs, long iter)
{
    MPI_Count lo;
    shape_t sh;
    MPI_Comm comm = is_neighbor(kind) ? cart : MPI_COMM_WORLD;
    MPI_Datatype tt = tag_host(t);
    MPI_Request req;
    unsigned char *m[4];
    long e0;
    int E;
    size_t bytes = coll_oracle(&sh, kind, rs, t, comm, iter, rank, size, &E, &lo, m);
    e0 = engine_runs();
    if (coll_call(&sh, comm, m[2] - lo, tt, m[3] - lo, tt, &req) != MPI_SUCCESS)
        fail_msg("%s form %d: error (iter %ld)", kind_names[kind], sh.form, iter);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (engine_runs() != e0 + 1)
        fail_msg("%s form %d in place %d: not on the engine (iter %ld)", kind_names[kind], sh.form, sh.in_place, iter);
    if (memcmp(m[0], m[2], bytes) || memcmp(m[1], m[3], bytes))
        fail_msg("%s (form %d, in place %d, root %d, cnt %d, combiner %s, iter %ld, seed %llu): rank %d's buffers "
                 "differ from MPI's",
                 kind_names[kind], sh.form, sh.in_place, sh.root, sh.cnt, tg_combiner_name(t), iter,
                 (unsigned long long)mpiacc_test_seed(), rank);
    for (int i = 0; i < 4; i++) free(m[i]);
    MPI_Type_free(&tt);
}

static void test_corpus(void **state)
{
    uint64_t seed = mpiacc_test_seed(), rs = seed + 5;
    long n = tg_corpus_size(8, 100), done = 0, p0 = dev_runs;
    tg_src_t src = {.state = seed ^ 0x2718u, .large = 1, .max_size = 160, .max_span = 640};
    for (long i = 0; done < n; i++) {
        MPI_Datatype t = i < 2 ? (i ? MPI_BYTE : MPI_INT) : tg_make(&src, (int)(1 + i % 4));
        int bad;
        if (i >= 2) MPI_Type_commit(&t);
        bad = tg_overlaps(t, 2); /* a receive type must not write a byte twice */
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!bad) {
            for (int k = 0; k < K_NKINDS; k++) move_one(t, k, &rs, i * K_NKINDS + k);
            done++;
        }
        if (i >= 2) tg_free(&t);
    }
    if (rank == 0) printf("corpus: %ld types x %d kinds on the engine, seed %llu\n", n, K_NKINDS,
                          (unsigned long long)seed);
    assert_true(dev_runs > p0);
}

/* ---- reductions ------------------------------------------------------------------ */

enum { R_ALLREDUCE, R_REDUCE, R_RSB, R_RS, R_N };

/* The oracle of a reduction on a derived datatype: MPI_Pack, the same call
 * on the predefined base type, MPI_Unpack of the result. */
static void oracle_packed(int kind, MPI_Datatype t, MPI_Datatype base, MPI_Op op, int elems, const int *counts, int in_n,
                          int ip, int root, void *s, void *r)
{
    int tsz, bsz, pos, per, rc[16], out = kind == R_RS ? counts[rank] : elems;
    MPI_Type_size(t, &tsz);
    MPI_Type_size(base, &bsz);
    per = tsz / bsz;
    char *ps = calloc((size_t)tsz * (size_t)(in_n + 1), 1), *pr = calloc((size_t)tsz * (size_t)(in_n + 1), 1);
    int in_place = ip && (kind != R_REDUCE || rank == root);
    pos = 0;
    MPI_Pack(in_place ? r : s, in_n, t, in_place ? pr : ps, tsz * (in_n + 1), &pos, MPI_COMM_SELF);
    for (int i = 0; i < size; i++) rc[i] = counts[i] * per;
    switch (kind) {
    case R_ALLREDUCE: MPI_Allreduce(in_place ? MPI_IN_PLACE : ps, pr, elems * per, base, op, MPI_COMM_WORLD); break;
    case R_REDUCE: MPI_Reduce(in_place ? MPI_IN_PLACE : ps, pr, elems * per, base, op, root, MPI_COMM_WORLD); break;
    case R_RSB: MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : ps, pr, elems * per, base, op, MPI_COMM_WORLD); break;
    default: MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : ps, pr, rc, base, op, MPI_COMM_WORLD); break;
    }
    pos = 0;
    if (kind != R_REDUCE || rank == root) MPI_Unpack(pr, tsz * (in_n + 1), &pos, r, out, t, MPI_COMM_SELF);
    free(ps), free(pr);
}

/* One reduction of kind on elems elements of t (built on base), tagged,
 * against the same call on plain t; expect_engine: run by the engine. */
static void red_one(int kind, MPI_Datatype t, MPI_Datatype base, MPI_Op op, int elems, int ip, int root, int nb,
                    int expect_engine)
{
    MPI_Aint lb, ext;
    MPI_Datatype tt = tag_host(t);
    int in_n = kind == R_RSB || kind == R_RS ? elems * size : elems, err;
    int counts[16];
    size_t bytes;
    unsigned char *s[2], *r[2];
    long e0 = engine_runs(), s0 = staged();
    MPI_Type_get_extent(t, &lb, &ext);
    for (int i = 0; i < size; i++) counts[i] = kind == R_RS ? (elems + i) % 3 : elems;
    if (kind == R_RS) {
        in_n = 0;
        for (int i = 0; i < size; i++) in_n += counts[i];
    }
    bytes = (size_t)ext * (size_t)(in_n + 1) + 16;
    for (int v = 0; v < 2; v++) {
        s[v] = calloc(bytes, 1), r[v] = calloc(bytes, 1);
        /* small integers: every order of reduction gives the same bits */
        for (size_t k = 0; k < bytes / (base == MPI_INT ? sizeof(int) : sizeof(double)); k++) {
            int x = (int)((k * 7 + (size_t)rank * 13) % 5) + 1;
            if (base == MPI_INT) ((int *)s[v])[k] = x, ((int *)r[v])[k] = x + 1;
            else ((double *)s[v])[k] = x, ((double *)r[v])[k] = x + 1;
        }
    }
    for (int v = 0; v < 2; v++) {
        MPI_Datatype d = v ? tt : t;
        const void *sb = ip && (kind != R_REDUCE || rank == root) ? MPI_IN_PLACE : s[v];
        MPI_Request req = MPI_REQUEST_NULL;
        if (v == 0 && t != base && op != MPI_MINLOC) { /* MPI reduces predefined types only: the oracle packs */
            oracle_packed(kind, t, base, op, elems, counts, in_n, ip, root, s[0], r[0]);
            continue;
        }
        switch (kind) {
        case R_ALLREDUCE:
            err = nb ? MPI_Iallreduce(sb, r[v], elems, d, op, MPI_COMM_WORLD, &req)
                     : MPI_Allreduce(sb, r[v], elems, d, op, MPI_COMM_WORLD);
            break;
        case R_REDUCE:
            err = nb ? MPI_Ireduce(sb, r[v], elems, d, op, root, MPI_COMM_WORLD, &req)
                     : MPI_Reduce(sb, r[v], elems, d, op, root, MPI_COMM_WORLD);
            break;
        case R_RSB:
            err = nb ? MPI_Ireduce_scatter_block(sb, r[v], elems, d, op, MPI_COMM_WORLD, &req)
                     : MPI_Reduce_scatter_block(sb, r[v], elems, d, op, MPI_COMM_WORLD);
            break;
        default:
            err = nb ? MPI_Ireduce_scatter(sb, r[v], counts, d, op, MPI_COMM_WORLD, &req)
                     : MPI_Reduce_scatter(sb, r[v], counts, d, op, MPI_COMM_WORLD);
            break;
        }
        assert_int_equal(err, MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    if (memcmp(r[0], r[1], bytes) || memcmp(s[0], s[1], bytes))
        fail_msg("reduction %d (elems %d, in place %d, root %d, nonblocking %d): rank %d differs from MPI", kind,
                 elems, ip, root, nb, rank);
    if (expect_engine && engine_runs() != e0 + 1) fail_msg("reduction %d: not on the engine", kind);
    if (!expect_engine && (engine_runs() != e0 || staged() != s0 + 1)) fail_msg("reduction %d: not staged", kind);
    for (int v = 0; v < 2; v++) free(s[v]), free(r[v]);
    MPI_Type_free(&tt);
}

static void test_reductions(void **state)
{
    MPI_Datatype c3, vec, pair = MPI_2INT;
    MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    int ns[] = {1, 7, 1000, 0};
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &vec); /* not contiguous: packed into the temporary */
    MPI_Type_commit(&c3), MPI_Type_commit(&vec);
    for (int k = 0; k < R_N; k++)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (int ip = 0; ip < 2; ip++) {
                int nb = (int)((i + (size_t)ip) % 2), root = (int)(i % (size_t)size);
                red_one(k, MPI_INT, MPI_INT, ops[(i + (size_t)k) % 4], ns[i], ip, root, nb, 1);
                red_one(k, MPI_DOUBLE, MPI_DOUBLE, ops[(i + 1) % 4], ns[i], ip, root, !nb, 1);
                red_one(k, c3, MPI_INT, MPI_SUM, ns[i], ip, root, nb, 1);
                red_one(k, vec, MPI_DOUBLE, MPI_MAX, ns[i], ip, root, nb, 1);
            }
    /* what the engine does not reduce: staged, right */
    red_one(R_ALLREDUCE, MPI_INT, MPI_INT, MPI_BAND, 10, 0, 0, 0, 0);
    red_one(R_ALLREDUCE, pair, MPI_INT, MPI_MINLOC, 10, 0, 0, 1, 0);
    MPI_Type_free(&c3), MPI_Type_free(&vec);
}

/* ---- the nonblocking operation ------------------------------------------------------- */

static void test_transitions(void **state)
{
    int v[64], w[64], cls, err, flag = 0, tests = 0;
    MPI_Datatype tt = tag_host(MPI_INT);
    MPI_Request req;
    MPI_Comm dup;
    long nc = tr(MPIACC_RP_NEW, MPIACC_RP_COPYING), cd = tr(MPIACC_RP_COPYING, MPIACC_RP_DONE);
    long ce = tr(MPIACC_RP_COPYING, MPIACC_RP_T_ERROR), a0 = dev_aborts;
    for (int k = 0; k < 64; k++) v[k] = k + rank;
    /* a late completion: MPI_Test says no a few times */
    dev_mode = DEV_SLOW, dev_mode_rank = -1;
    assert_int_equal(MPI_Iallreduce(v, w, 64, tt, MPI_SUM, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    while (!flag) {
        assert_int_equal(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        tests++;
    }
    dev_mode = DEV_OK;
    assert_true(tests > 1);
    assert_int_equal(w[5], 5 * size + size * (size - 1) / 2);
    assert_int_equal(tr(MPIACC_RP_NEW, MPIACC_RP_COPYING) - nc, 1);
    assert_int_equal(tr(MPIACC_RP_COPYING, MPIACC_RP_DONE) - cd, 1);
    /* a failure on rank 0: its request fails with the engine's class, the
     * engine communicator is aborted and later calls fail at once */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    assert_int_equal(MPI_Allreduce(v, w, 64, tt, MPI_SUM, dup), MPI_SUCCESS); /* the engine communicator */
    dev_mode = DEV_TEST_FAILS, dev_mode_rank = 0;
    assert_int_equal(MPI_Iallreduce(v, w, 64, tt, MPI_SUM, dup, &req), MPI_SUCCESS);
    err = MPI_Wait(&req, MPI_STATUS_IGNORE);
    dev_mode = DEV_OK, dev_mode_rank = -1;
    if (rank == 0) {
        MPI_Error_class(err, &cls);
        assert_int_equal(cls, MPI_ERR_ARG);
        assert_int_equal(tr(MPIACC_RP_COPYING, MPIACC_RP_T_ERROR) - ce, 1);
        assert_int_equal(dev_aborts - a0, 1);
        err = MPI_Allreduce(v, w, 64, tt, MPI_SUM, dup); /* only here: nothing is posted any more */
        MPI_Error_class(err, &cls);
        assert_int_equal(cls, MPI_ERR_ARG);
    } else {
        assert_int_equal(err, MPI_SUCCESS);
    }
    MPI_Comm_free(&dup);
    MPI_Type_free(&tt);
}

/* ---- the engine per communicator ---------------------------------------------------- */

static void allreduce_on(MPI_Comm comm, long *engine, long *device, long *stg)
{
    int v[32], w[32];
    MPI_Datatype tt = tag_host(MPI_INT);
    long e0 = engine_runs(), d0 = runs(), s0 = staged();
    for (int k = 0; k < 32; k++) v[k] = k * rank;
    assert_int_equal(MPI_Allreduce(v, w, 32, tt, MPI_SUM, comm), MPI_SUCCESS);
    for (int k = 0; k < 32; k++) assert_int_equal(w[k], k * size * (size - 1) / 2);
    *engine = engine_runs() - e0, *device = runs() - d0, *stg = staged() - s0;
    MPI_Type_free(&tt);
}

static void test_choice(void **state)
{
    MPI_Comm dup;
    long e, d, s;
    stderr_capture_t cap;
    char *log;
    int lvl = mpiacc_log_level;
    /* the engine on one process only: staged everywhere, logged at info */
    dev_mode = DEV_ABSENT, dev_mode_rank = size - 1;
    mpiacc_log_level = MPIACC_LOG_INFO;
    stderr_capture_begin(&cap);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    allreduce_on(dup, &e, &d, &s);
    log = stderr_capture_end(&cap);
    mpiacc_log_level = lvl;
    if (rank == size - 1 && !strstr(log, "unavailable")) fail_msg("no log line for the absent engine: %s", log);
    free(log);
    assert_int_equal(e, 0), assert_int_equal(s, 1);
    MPI_Comm_free(&dup);
    /* processes sharing a GPU (one process alone shares nothing): no NCCL;
     * the IPC engine where there is a table, else staged */
    dev_mode = DEV_SHARED_GPU, dev_mode_rank = -1;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    allreduce_on(dup, &e, &d, &s);
    assert_int_equal(e, size > 1 ? 0 : 1), assert_int_equal(s, size > 1 ? 1 : 0);
    MPI_Comm_free(&dup);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, &fake_engine, &fake);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    allreduce_on(dup, &e, &d, &s);
    assert_int_equal(e, size > 1 ? 0 : 1), assert_int_equal(d, 1);
    MPI_Comm_free(&dup);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, &fake_engine, NULL);
    /* a communicator one process cannot make: every process falls back */
    dev_mode = DEV_INIT_FAILS, dev_mode_rank = size > 1 ? 1 : 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    allreduce_on(dup, &e, &d, &s);
    assert_int_equal(e, 0), assert_int_equal(s, 1);
    MPI_Comm_free(&dup);
    dev_mode = DEV_OK, dev_mode_rank = -1;
    /* and the engine again on a new communicator */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    allreduce_on(dup, &e, &d, &s);
    assert_int_equal(e, 1);
    MPI_Comm_free(&dup);
}

/* The application frees the communicator while its calls are pending. */
static void test_comm_freed(void **state)
{
    MPI_Comm dup;
    MPI_Request req[2];
    MPI_Datatype tt = tag_host(MPI_INT);
    int v[300], w[300], x[300];
    long f0, i0 = dev_inits;
    for (int k = 0; k < 300; k++) v[k] = k + rank, x[k] = rank == 0 ? k : -1;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    f0 = dev_frees;
    dev_mode = DEV_SLOW, dev_mode_rank = -1;
    assert_int_equal(MPI_Iallreduce(v, w, 300, tt, MPI_SUM, dup, &req[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Ibcast(x, 300, tt, 0, dup, &req[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_free(&dup), MPI_SUCCESS);
    assert_int_equal(dev_frees, f0); /* the calls hold the engine communicator */
    assert_int_equal(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    dev_mode = DEV_OK;
    for (int k = 0; k < 300; k++) {
        assert_int_equal(w[k], k * size + size * (size - 1) / 2);
        assert_int_equal(x[k], k);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    { /* the next collective sweeps what the last completion left */
        long e, d, s;
        allreduce_on(MPI_COMM_WORLD, &e, &d, &s);
    }
    assert_int_equal(dev_inits - i0, 1);
    assert_int_equal(dev_frees - f0, 1);
    MPI_Type_free(&tt);
}

/* MPIACC_COLL_CHECK: one process with host buffers, the others device ones. */
static void test_check(void **state)
{
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[8], err, cls;
    MPI_Datatype tt = tag_host(MPI_INT);
    mpiacc_coll_check = 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    err = MPI_Allreduce(v, w, 8, rank == 0 ? MPI_INT : tt, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    if (size > 1) assert_int_equal(cls, MPI_ERR_ARG);
    assert_int_equal(MPI_Allreduce(v, w, 8, tt, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(w[2], 3 * size);
    assert_int_equal(MPI_Allreduce(v, w, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mpiacc_coll_check = 0;
    MPI_Type_free(&tt);
}

int main(int argc, char **argv)
{
    int failed;
    mpiacc_test_init(&argc, &argv, "usage: %s\nThe NCCL path of the collectives layer through a stand-in engine "
                                   "that runs its programs with MPI on host buffers (MPIACC_BUF_HOST + "
                                   "MPIACC_EVENT), against MPI.\n", &rank, &size, 8, &cart);
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, &fake_engine, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus), cmocka_unit_test(test_reductions), cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_choice), cmocka_unit_test(test_comm_freed), cmocka_unit_test(test_check),
    };
    failed = MPIACC_TEST_RUN("coll_dev", tests, NULL, NULL);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    /* every engine communicator was freed (MPI_COMM_WORLD's at MPI_Finalize) */
    if (dev_inits != dev_frees) {
        fprintf(stderr, "rank %d: %ld engine communicators made, %ld freed\n", rank, dev_inits, dev_frees);
        failed = 1;
    }
    mpiacc_coll_test_tables(MPIACC_KIND_HOST, NULL, NULL);
    return failed ? 1 : 0;
}
