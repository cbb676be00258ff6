/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives on cl_mem buffers (PoCL in CI): random datatypes (true
 * lower bound >= 0, since a cl_mem has no address before its start) in
 * every data-moving collective, device buffers on a random subset of ranks
 * and sides, against the same call on host buffers; and reductions
 * (MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Scan in place, MPI_MINLOC
 * on MPI_DOUBLE_INT) on tagged dups of predefined types. */
#define _POSIX_C_SOURCE 200809L
#include "ocl_fixture.h"
#include "ocl_types.h"
#include "coll_harness.h"

static int rank, size;
static MPI_Comm cart;

static void run_one(MPI_Datatype t, int kind, uint64_t *rs, long iter)
{
    MPI_Aint lb, ext;
    MPI_Count lo, hi;
    shape_t sh;
    MPI_Comm comm = is_neighbor(kind) ? cart : MPI_COMM_WORLD;
    MPI_Datatype tt = cl_type(t, fx.qin, NULL);
    MPI_Request req;
    int mask, E, dev_s, dev_r;
    cl_mem cs = NULL, cr = NULL;
    MPI_Type_get_extent(t, &lb, &ext);
    make_shape(&sh, kind, rs, ext, rank, size);
    mask = (int)mpiacc_test_rand(rs);
    E = span_elems(&sh, sh.n) + 1;
    tg_bounds(t, E, &lo, &hi);
    size_t bytes = (size_t)hi + 8;
    unsigned char *m[4];
    for (int i = 0; i < 4; i++)
        m[i] = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        m[0][i] = (unsigned char)(i * 7 + rank * 13 + iter), m[1][i] = (unsigned char)(i * 3 + rank);
    memcpy(m[2], m[0], bytes);
    memcpy(m[3], m[1], bytes);
    assert_int_equal(coll_call(&sh, comm, m[0], t, m[1], t, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    dev_s = (mask >> rank) & 1;
    dev_r = (mask >> (rank + 8)) & 1;
    if (dev_s) cs = fx_buf(bytes, m[2]);
    if (dev_r) cr = fx_buf(bytes, m[3]);
    assert_int_equal(coll_call(&sh, comm, dev_s ? (void *)cs : m[2], dev_s ? tt : t, dev_r ? (void *)cr : m[3],
                               dev_r ? tt : t, &req),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (dev_s) fx_read(cs, bytes, m[2]), clReleaseMemObject(cs);
    if (dev_r) fx_read(cr, bytes, m[3]), clReleaseMemObject(cr);
    if (memcmp(m[0], m[2], bytes) || memcmp(m[1], m[3], bytes))
        fail_msg("%s (form %d, in place %d, device send %d recv %d, combiner %s, iter %ld): rank %d differs from MPI",
                 kind_names[kind], sh.form, sh.in_place, dev_s, dev_r, tg_combiner_name(t), iter, rank);
    for (int i = 0; i < 4; i++)
        free(m[i]);
    MPI_Type_free(&tt);
}

static void test_ocl_corpus(void **state)
{
    uint64_t seed = mpiacc_test_seed(), rs = seed;
    long n = tg_corpus_size(6, 60), done = 0;
    tg_src_t src = {.state = seed ^ 0x2545f491u, .large = 1, .max_size = 128, .max_span = 512};
    for (long i = 0; done < n; i++) {
        MPI_Datatype t = tg_make(&src, (int)(1 + i % 3));
        MPI_Count lo, hi, lo2, hi2;
        int bad;
        MPI_Type_commit(&t);
        tg_bounds(t, 1, &lo, &hi);
        tg_bounds(t, 2, &lo2, &hi2);
        /* non-negative bounds, and elements that do not overlap (receives) */
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        bad = lo < 0 || lo2 < 0 || ext < hi - lo || lb < 0 || tg_overlaps(t, 2); /* an element on its own too */
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!bad) {
            for (int k = 0; k < K_NKINDS; k++)
                run_one(t, k, &rs, i * K_NKINDS + k);
            done++;
        }
        tg_free(&t);
    }
    if (rank == 0)
        printf("OpenCL corpus: %ld types x %d collectives, seed %llu\n", n, K_NKINDS, (unsigned long long)seed);
}

static void test_ocl_reductions(void **state)
{
    enum { M = 1000 };
    int *h = malloc(sizeof(int) * M * 8), *o = malloc(sizeof(int) * M * 8);
    struct {
        double v;
        int i;
    } p[4], q[4];
    MPI_Datatype ti = cl_type(MPI_INT, fx.qin, NULL), tp = cl_type(MPI_DOUBLE_INT, fx.qin, NULL);
    cl_mem a, b;
    for (int i = 0; i < M * size; i++)
        h[i] = i + rank;
    a = fx_buf(sizeof(int) * M * size, h);
    b = fx_buf(sizeof(int) * M * size, NULL);
    assert_int_equal(MPI_Allreduce((void *)a, (void *)b, M, ti, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    fx_read(b, sizeof(int) * M, o);
    for (int i = 0; i < M; i++)
        assert_int_equal(o[i], size * i + size * (size - 1) / 2);
    assert_int_equal(MPI_Reduce_scatter_block((void *)a, (void *)b, M, ti, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
    fx_read(b, sizeof(int) * M, o);
    for (int i = 0; i < M; i++)
        assert_int_equal(o[i], rank * M + i + size - 1);
    assert_int_equal(MPI_Scan(MPI_IN_PLACE, (void *)a, M, ti, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    fx_read(a, sizeof(int) * M, o);
    for (int i = 0; i < M; i++)
        assert_int_equal(o[i], (rank + 1) * i + rank * (rank + 1) / 2);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    for (int i = 0; i < 4; i++)
        p[i].v = (double)((i + rank) % size), p[i].i = rank;
    a = fx_buf(sizeof p, p);
    b = fx_buf(sizeof q, NULL);
    assert_int_equal(MPI_Allreduce((void *)a, (void *)b, 4, tp, MPI_MINLOC, MPI_COMM_WORLD), MPI_SUCCESS);
    fx_read(b, sizeof q, q);
    for (int i = 0; i < 4; i++) {
        assert_true(q[i].v == 0.0);
        assert_int_equal(q[i].i, (size - i % size) % size);
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    MPI_Type_free(&ti);
    MPI_Type_free(&tp);
    free(h), free(o);
}

/* A receive datatype whose elements overlap (two ints every int) is
 * MPI_ERR_TYPE on every process whose receive buffer is a cl_mem, raised
 * through MPI_COMM_WORLD's handler, before anything moves. */
static void test_ocl_overlap(void **state)
{
    MPI_Datatype two, ov, tov;
    int in[4] = {1, 2, 3, 4}, cls = MPI_SUCCESS, rc;
    cl_mem r = fx_buf(64, NULL);
    (void)state;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_create_resized(two, 0, sizeof(int), &ov);
    MPI_Type_commit(&ov);
    tov = cl_type(ov, fx.qin, NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Allgather(in, 2, MPI_INT, r, 1, tov, MPI_COMM_WORLD); /* 2 x size ints land in size+1 ints */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (size > 1) assert_int_equal(cls, MPI_ERR_TYPE);
    clReleaseMemObject(r);
    MPI_Type_free(&tov), MPI_Type_free(&ov), MPI_Type_free(&two);
}

int main(int argc, char **argv)
{
    int failed;
    if (mpiacc_test_help(argc, argv, "usage: %s\nCollectives on cl_mem buffers against MPI on host buffers.\n"))
        return 0;
    fx_init(&argc, &argv);
    mpiacc_test_world(&rank, &size, 0, &cart);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ocl_corpus), cmocka_unit_test(test_ocl_reductions),
                                       cmocka_unit_test(test_ocl_overlap)};
    failed = MPIACC_TEST_RUN("coll_ocl", tests, NULL, NULL);
    MPI_Comm_free(&cart);
    return fx_end(failed);
}
