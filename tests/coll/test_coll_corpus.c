/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives on the CPU backend (MPIACC_BUF_HOST + MPIACC_EVENT: the
 * staged path, packed into host staging) against the same call on plain
 * host datatypes (MPI itself): every data-moving collective with random
 * datatypes (tests/pack/typegen), tagged on a random subset of ranks and
 * sides, all four forms (blocking / nonblocking, int / MPI_Count),
 * MPI_IN_PLACE where MPI allows it; the reductions with predefined
 * operations on dups and derived types of one predefined type (the pair
 * type MPI_DOUBLE_INT with MINLOC included) and with a user-defined
 * operation.  MPIACC_TEST_NTYPES / MPIACC_TEST_LONG size the corpus. */
#include <stdatomic.h>
#include <stdio.h>

#include "coll_harness.h"

static int rank, size;
static MPI_Comm cart;
static long ncalls, ntagged;

static void run_one(MPI_Datatype t, int kind, uint64_t *rs, long iter)
{
    MPI_Aint lb, ext;
    MPI_Count lo;
    shape_t sh;
    int mask, E, err;
    MPI_Comm comm = is_neighbor(kind) ? cart : MPI_COMM_WORLD;
    MPI_Datatype tt = tag_host(t), ts, tr;
    MPI_Request req;
    unsigned char *m[4];
    size_t bytes = coll_oracle(&sh, kind, rs, t, comm, iter, rank, size, &E, &lo, m);
    MPI_Type_get_extent(t, &lb, &ext);
    if (getenv("COLL_TEST_TRACE"))
        fprintf(stderr, "rank %d: %s form %d in place %d cnt %d iter %ld: oracle done (root %d)\n", rank,
                kind_names[kind], sh.form, sh.in_place, sh.cnt, iter, sh.root);
    mask = (int)mpiacc_test_rand(rs);
    /* under test: tagged on some ranks and sides */
    ts = (mask >> rank) & 1 ? tt : t;
    tr = (mask >> (rank + 8)) & 1 ? tt : t;
    ntagged += (ts == tt) + (tr == tt);
    err = coll_call(&sh, comm, m[2] - lo, ts, m[3] - lo, tr, &req);
    if (err != MPI_SUCCESS) fail_msg("%s form %d: error %d (iter %ld)", kind_names[kind], sh.form, err, iter);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (memcmp(m[0], m[2], bytes) || memcmp(m[1], m[3], bytes)) {
        for (size_t b = 0; b < bytes; b++)
            if (m[0][b] != m[2][b] || m[1][b] != m[3][b]) {
                fprintf(stderr, "rank %d: first difference at byte %zu of %zu (lo %lld) in the %s buffer\n", rank, b,
                        bytes, (long long)lo, m[0][b] != m[2][b] ? "send" : "receive");
                {
                    MPI_Count tsz, tlb, text;
                    MPI_Type_size_c(t, &tsz);
                    MPI_Type_get_true_extent_c(t, &tlb, &text);
                    fprintf(stderr,
                            "type: size %lld extent %ld lb %ld true lb %lld true extent %lld, E %d; "
                            "oracle/test bytes from there:",
                            (long long)tsz, (long)ext, (long)lb, (long long)tlb, (long long)text, E);
                    for (size_t q = b; q < b + 24 && q < bytes; q++)
                        fprintf(stderr, " %02x/%02x", m[1][q], m[3][q]);
                    fprintf(stderr, "\n");
                    {
                        unsigned char *p0 = malloc((size_t)(tsz * E)), *p1 = malloc((size_t)(tsz * E));
                        int q0 = 0, q1 = 0;
                        MPI_Pack(m[1] - lo, E - 1, t, p0, (int)(tsz * E), &q0, MPI_COMM_SELF);
                        MPI_Pack(m[3] - lo, E - 1, t, p1, (int)(tsz * E), &q1, MPI_COMM_SELF);
                        for (int q = 0; q < q0; q++)
                            if (p0[q] != p1[q]) {
                                fprintf(stderr, "packed differ at %d (element %lld)\n", q, (long long)(q / tsz));
                                break;
                            }
                        fprintf(stderr, "combiner chain: %s overlaps %d\n", tg_combiner_name(t), tg_overlaps(t, 2));
                    }
                }
                break;
            }
        fail_msg("%s (form %d, in place %d, root %d, cnt %d, tagged send %d recv %d, combiner %s, iter %ld): "
                 "rank %d's buffers differ from MPI's",
                 kind_names[kind], sh.form, sh.in_place, sh.root, sh.cnt, ts == tt, tr == tt, tg_combiner_name(t), iter,
                 rank);
    }
    ncalls++;
    for (int i = 0; i < 4; i++)
        free(m[i]);
    MPI_Type_free(&tt);
}

static void test_corpus(void **state)
{
    uint64_t seed = mpiacc_test_seed(), rs = seed;
    long n = tg_corpus_size(20, 200), done = 0;
    tg_src_t src = {.state = seed ^ 0x9e3779b9u, .large = 1, .max_size = 192, .max_span = 768};
    for (long i = 0; done < n; i++) {
        MPI_Datatype t = tg_make(&src, (int)(1 + i % 4));
        int ov;
        MPI_Type_commit(&t);
        ov = tg_overlaps(t, 2);
        /* every rank decides alike (same seed) */
        MPI_Allreduce(MPI_IN_PLACE, &ov, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!ov) {
            for (int k = 0; k < K_NKINDS; k++)
                run_one(t, k, &rs, i * K_NKINDS + k);
            done++;
        }
        tg_free(&t);
    }
    if (rank == 0)
        printf("corpus: %ld types, %ld calls checked on rank 0 (%ld tagged sides), seed %llu\n", n, ncalls, ntagged,
               (unsigned long long)seed);
}

/* ---- reductions ------------------------------------------------------------ */

enum { R_REDUCE, R_ALLREDUCE, R_LOCAL, R_RS, R_RSB, R_SCAN, R_EXSCAN, R_NKINDS };
static const char *const red_names[R_NKINDS] = {
    "Reduce", "Allreduce", "Reduce_local", "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan"};
static MPI_Datatype user_type_seen;

static void lsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    long *a = in, *b = inout;
    MPI_Count sz;
    user_type_seen = *dt;
    MPI_Type_size_c(*dt, &sz);
    for (long i = 0; i < *len * (long)(sz / (MPI_Count)sizeof(long)); i++)
        b[i] += a[i];
}

static int red_call(int k, int form, int ip, void *sb, void *rb, int cnt, MPI_Datatype t, MPI_Op op, int root,
                    MPI_Request *req)
{
    int nb = form & 1, c = form & 2, rcs[8];
    MPI_Count rcc[8];
    const void *s = ip ? MPI_IN_PLACE : sb;
    for (int i = 0; i < 8; i++)
        rcs[i] = rcc[i] = cnt;
    *req = MPI_REQUEST_NULL;
    switch (k) {
    case R_REDUCE:
        if (ip && rank != root) s = sb;
        return COLL_FORMS(Reduce, Ireduce, (s, rb, cnt, t, op, root, MPI_COMM_WORLD),
                          (s, rb, cnt, t, op, root, MPI_COMM_WORLD));
    case R_ALLREDUCE:
        return COLL_FORMS(Allreduce, Iallreduce, (s, rb, cnt, t, op, MPI_COMM_WORLD),
                          (s, rb, cnt, t, op, MPI_COMM_WORLD));
    case R_LOCAL:
        return c ? MPI_Reduce_local_c(sb, rb, cnt, t, op) : MPI_Reduce_local(sb, rb, cnt, t, op);
    case R_RS:
        return COLL_FORMS(Reduce_scatter, Ireduce_scatter, (s, rb, rcs, t, op, MPI_COMM_WORLD),
                          (s, rb, rcc, t, op, MPI_COMM_WORLD));
    case R_RSB:
        return COLL_FORMS(Reduce_scatter_block, Ireduce_scatter_block, (s, rb, cnt, t, op, MPI_COMM_WORLD),
                          (s, rb, cnt, t, op, MPI_COMM_WORLD));
    case R_SCAN:
        return COLL_FORMS(Scan, Iscan, (s, rb, cnt, t, op, MPI_COMM_WORLD), (s, rb, cnt, t, op, MPI_COMM_WORLD));
    default:
        return COLL_FORMS(Exscan, Iexscan, (s, rb, cnt, t, op, MPI_COMM_WORLD), (s, rb, cnt, t, op, MPI_COMM_WORLD));
    }
}

/* Values that keep sums exact and make MINLOC/MAXLOC ties rare. */
static void fill_values(void *p, MPI_Datatype base, MPI_Count nbase, MPI_Aint stride, uint64_t seed)
{
    for (MPI_Count i = 0; i < nbase; i++) {
        char *e = (char *)p + i * stride;
        long v = (long)((seed * 2654435761u + (uint64_t)i * 40503u) % 1000);
        if (base == MPI_INT)
            *(int *)e = (int)v;
        else if (base == MPI_LONG)
            *(long *)e = v;
        else if (base == MPI_DOUBLE)
            *(double *)e = (double)v * 0.5;
        else { /* MPI_DOUBLE_INT */
            *(double *)e = (double)(v % 7);
            *(int *)(e + sizeof(double)) = (int)(v + rank);
        }
    }
}

static void run_red(MPI_Datatype t, MPI_Datatype ot, MPI_Datatype base, MPI_Op op, int k, uint64_t *rs, long iter)
{
    int cnt = 1 + (int)(mpiacc_test_rand(rs) % 3), form = (int)(mpiacc_test_rand(rs) % 4);
    int root = (int)(mpiacc_test_rand(rs) % (uint64_t)size), mask = (int)mpiacc_test_rand(rs);
    int ip = (int)(mpiacc_test_rand(rs) % 3) == 0 && k != R_LOCAL;
    int tagged = (mask >> rank) & 1, total = k == R_RS || k == R_RSB ? cnt * size : cnt;
    MPI_Aint lb, ext, bext;
    MPI_Count lo, hi, tsz, bsz;
    MPI_Request req;
    MPI_Datatype tt = tag_host(t);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_extent(base, &lb, &bext);
    MPI_Type_size_c(t, &tsz);
    MPI_Type_size_c(base, &bsz);
    tg_bounds(t, total, &lo, &hi);
    size_t bytes = (size_t)(hi - lo);
    unsigned char *m[4], *pk[2];
    for (int i = 0; i < 4; i++) {
        m[i] = calloc(bytes, 1);
        /* every base element of the span gets a value (gaps included) */
        fill_values(m[i], base, (MPI_Count)(bytes / (size_t)bext), bext,
                    (uint64_t)iter * 31 + (uint64_t)rank * 7 + (uint64_t)(i & 1));
    }
    memcpy(m[2], m[0], bytes);
    memcpy(m[3], m[1], bytes);
    {
        int e = red_call(k, form, ip, m[0] - lo, m[1] - lo, cnt, ot, op, root, &req), l = 0;
        char msg[MPI_MAX_ERROR_STRING] = "";
        if (e != MPI_SUCCESS) {
            MPI_Error_string(e, msg, &l);
            fail_msg("oracle %s (form %d, in place %d): %s", red_names[k], form, ip, msg);
        }
    }
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    user_type_seen = MPI_DATATYPE_NULL;
    {
        int e = red_call(k, form, ip, m[2] - lo, m[3] - lo, cnt, tagged ? tt : ot, op, root, &req), l = 0;
        char msg[MPI_MAX_ERROR_STRING] = "";
        if (e != MPI_SUCCESS) {
            MPI_Error_string(e, msg, &l);
            fail_msg("%s (form %d, in place %d, tagged %d): %s", red_names[k], form, ip, tagged, msg);
        }
    }
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (op != MPI_SUM && op != MPI_MAX && op != MPI_MINLOC && user_type_seen != MPI_DATATYPE_NULL && tagged)
        assert_true(user_type_seen == tt); /* the user function sees the user's datatype */
    /* compare the received elements through MPI_Pack (padding aside) */
    if (!(k == R_EXSCAN && rank == 0) && !(k == R_REDUCE && rank != root)) {
        int n = k == R_RS || k == R_RSB ? cnt : total, p0 = 0, p1 = 0;
        pk[0] = malloc((size_t)(tsz * n + 1));
        pk[1] = malloc((size_t)(tsz * n + 1));
        MPI_Pack(m[1] - lo, n, t, pk[0], (int)(tsz * n + 1), &p0, MPI_COMM_SELF);
        MPI_Pack(m[3] - lo, n, t, pk[1], (int)(tsz * n + 1), &p1, MPI_COMM_SELF);
        if (memcmp(pk[0], pk[1], (size_t)p0))
            fail_msg("%s (form %d, in place %d, cnt %d, tagged %d, iter %ld): rank %d's result differs from MPI's",
                     red_names[k], form, ip, cnt, tagged, iter, rank);
        free(pk[0]), free(pk[1]);
    }
    ncalls++;
    for (int i = 0; i < 4; i++)
        free(m[i]);
    MPI_Type_free(&tt);
}

static void test_reductions(void **state)
{
    uint64_t rs = mpiacc_test_seed() ^ 0x1234;
    MPI_Datatype vec, pairs, dupi, sub;
    MPI_Op usr;
    int sizes[2] = {4, 3}, subs[2] = {2, 2}, starts[2] = {1, 1};
    /* (MPICH refuses predefined operations on derived datatypes: the
     * derived one gets the user-defined operation) */
    MPI_Type_contiguous(3, MPI_LONG, &vec); /* the user function reads it as longs in a row */
    MPI_Type_dup(MPI_DOUBLE_INT, &pairs);
    MPI_Type_dup(MPI_INT, &dupi);
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_LONG, &sub);
    MPI_Type_commit(&vec), MPI_Type_commit(&sub);
    MPI_Op_create(lsum, 1, &usr);
    long rounds = tg_corpus_size(4, 40);
    ncalls = 0;
    for (long r = 0; r < rounds; r++)
        for (int k = 0; k < R_NKINDS; k++) {
            long it = r * R_NKINDS + k;
            /* (the oracle of the dup is MPI_INT: MPICH refuses MPI_SUM on a dup) */
            run_red(MPI_INT, MPI_INT, MPI_INT, MPI_SUM, k, &rs, it);
            run_red(dupi, MPI_INT, MPI_INT, MPI_SUM, k, &rs, it);
            run_red(MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_MAX, k, &rs, it);
            run_red(MPI_DOUBLE_INT, MPI_DOUBLE_INT, MPI_DOUBLE_INT, MPI_MINLOC, k, &rs, it);
            run_red(pairs, MPI_DOUBLE_INT, MPI_DOUBLE_INT, MPI_MAXLOC, k, &rs, it);
            run_red(vec, vec, MPI_LONG, usr, k, &rs, it);
            run_red(MPI_LONG, MPI_LONG, MPI_LONG, usr, k, &rs, it);
        }
    if (rank == 0) printf("reductions: %ld calls checked on rank 0\n", ncalls);
    MPI_Op_free(&usr);
    MPI_Type_free(&vec), MPI_Type_free(&pairs), MPI_Type_free(&dupi), MPI_Type_free(&sub);
}

int main(int argc, char **argv)
{
    int failed;
    mpiacc_test_init(&argc, &argv, "usage: %s\nThe collectives' staged path against MPI's own on random datatypes "
                                   "(MPIACC_TEST_SEED, MPIACC_TEST_NTYPES, MPIACC_TEST_LONG).\n",
                                   &rank, &size, 0, &cart);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_corpus), cmocka_unit_test(test_reductions)};
    failed = MPIACC_TEST_RUN("coll_corpus", tests, NULL, NULL);
    MPI_Comm_free(&cart);
    return mpiacc_test_end(failed);
}
