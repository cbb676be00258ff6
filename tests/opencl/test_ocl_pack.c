/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/* OpenCL backend: pack / unpack of cl_mem buffers (host staging and
 * device-to-device) against MPICH's MPI_Pack / MPI_Unpack on a host copy,
 * whole and split ranges, every strategy (copy, rect, kernel), and several
 * threads packing at once. */
#include <pthread.h>

#include "ocl_fixture.h"
#include "opencl/ocl_testhooks.h"
#include "ocl_types.h"
#include "regress_types.h"

/* The engine's analysis of an MPI datatype. */
static mpiacc_pack_type_t *analyze(MPI_Datatype dt)
{
    mpiacc_pack_type_t *t = NULL;
    int err = mpiacc_pack_type_analyze(dt, &t);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        fail_msg("mpiacc_pack_type_analyze: %s", msg);
    }
    return t;
}

static int skip_unpack_check; /* set for types whose packed bytes overlap */

/* Thread-safe checks (cmocka's asserts are not): print and count. */
#define CHK(cond_)                                                                     \
    do {                                                                               \
        if (!(cond_)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond_); \
            bad++;                                                                     \
            goto out;                                                                  \
        }                                                                              \
    } while (0)

static int wait_quiet(void *h)
{
    int done = 0;
    double t0 = fx_now();
    while (!done) {
        if (fx.be->test(h, &done) != MPI_SUCCESS || fx_now() - t0 > 20) return 1;
    }
    fx.be->release(h);
    return 0;
}

/* Piece k of `pieces` of the packed bytes [0, bytes) of count x t in buf,
 * its ends rounded down to the type's unit (the last piece ends at bytes),
 * staged at the same offset of host. */
static mpiacc_xfer_desc_t piece(mpiacc_pack_type_t *t, cl_mem buf, int count, int bytes, int k, int pieces,
                                unsigned char *host)
{
    MPI_Count unit = t->unit > 0 ? t->unit : 1;
    MPI_Count first = (MPI_Count)bytes * k / pieces / unit * unit;
    MPI_Count last = k + 1 == pieces ? bytes : (MPI_Count)bytes * (k + 1) / pieces / unit * unit;
    mpiacc_xfer_desc_t d = {.buf = buf, .type = t, .count = count, .first = first, .last = last,
                            .host = host + first};
    return d;
}

/* Packs count x dt from a cl_mem into host staging in `pieces` ranges and
 * compares with MPI_Pack; then unpacks MPI_Pack's bytes into a zeroed cl_mem
 * and compares with MPI_Unpack into zeroed host memory.  Returns the
 * strategy used by the last pack; returns the number of failed checks. */
static int roundtrip_q(MPI_Datatype dt, int count, int pieces, const char **strategy)
{
    mpiacc_pack_type_t *t = NULL;
    int bad = 0;
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    size_t span = span_of(dt, count);
    int psize = 0, pos = 0;
    unsigned char *host = malloc(span), *want, *got, *back;
    cl_mem buf = NULL;
    void *staging = NULL, *x;

    MPI_Pack_size(count, dt, MPI_COMM_WORLD, &psize);
    want = calloc((size_t)psize + 1, 1);
    back = calloc(span, 1);
    CHK(mpiacc_pack_type_analyze(dt, &t) == MPI_SUCCESS);
    fill_pattern(host, span, (unsigned)count);
    buf = fx_buf(span, host);
    MPI_Pack(host, count, dt, want, psize, &pos, MPI_COMM_WORLD);
    CHK(fx.be->host_alloc((size_t)pos + 1, &staging) == MPI_SUCCESS);
    got = staging;
    /* pack in pieces */
    for (int k = 0; k < pieces; k++) {
        mpiacc_xfer_desc_t d = piece(t, buf, count, pos, k, pieces, got);
        x = NULL;
        CHK(fx.be->pack(&a, NULL, &d, &x) == MPI_SUCCESS);
        if (d.last > d.first) *strategy = mpiacc_ocl_last_method();
        CHK(wait_quiet(x) == 0);
    }
    CHK(memcmp(got, want, (size_t)pos) == 0);
    /* unpack MPI_Pack's bytes into a zeroed cl_mem */
    clReleaseMemObject(buf);
    buf = fx_buf(span, back);
    memcpy(got, want, (size_t)pos);
    for (int k = 0; k < pieces; k++) {
        mpiacc_xfer_desc_t d = piece(t, buf, count, pos, k, pieces, got);
        x = NULL;
        CHK(fx.be->unpack(&a, NULL, &d, &x) == MPI_SUCCESS);
        CHK(wait_quiet(x) == 0);
    }
    CHK(clEnqueueReadBuffer(fx.qin, buf, CL_TRUE, 0, span, host, 0, NULL, NULL) == CL_SUCCESS);
    pos = 0;
    MPI_Unpack(want, psize, &pos, back, count, dt, MPI_COMM_WORLD);
    if (!skip_unpack_check) CHK(memcmp(host, back, span) == 0);
out:
    if (staging) fx.be->host_free(staging, (size_t)psize + 1);
    if (buf) clReleaseMemObject(buf);
    if (t) mpiacc_pack_type_release(t);
    free(host);
    free(want);
    free(back);
    return bad;
}

static void roundtrip(MPI_Datatype dt, int count, int pieces, const char **strategy)
{
    assert_int_equal(roundtrip_q(dt, count, pieces, strategy), 0);
}

/* MPI_Pack / MPI_Unpack device-to-device into a packed cl_mem at an offset. */
static void roundtrip_dev(MPI_Datatype dt, int count, int offset)
{
    mpiacc_pack_type_t *t = analyze(dt);
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    size_t span = span_of(dt, count);
    int psize = 0, pos = 0;
    unsigned char *host = malloc(span), *want, *got, *back = calloc(span, 1);
    cl_mem buf, packed;
    mpiacc_xfer_desc_t d = {.type = t, .count = count, .first = 0, .host = NULL};

    MPI_Pack_size(count, dt, MPI_COMM_WORLD, &psize);
    want = calloc((size_t)psize + 1, 1);
    got = calloc((size_t)psize + (size_t)offset + 1, 1);
    fill_pattern(host, span, 3);
    buf = fx_buf(span, host);
    MPI_Pack(host, count, dt, want, psize, &pos, MPI_COMM_WORLD);
    packed = fx_buf((size_t)pos + (size_t)offset + 1, got);
    d.buf = buf;
    d.last = pos;
    assert_int_equal(fx.be->pack_dev(&a, NULL, &d, packed, offset), MPI_SUCCESS);
    fx_read(packed, (size_t)pos + (size_t)offset, got);
    assert_memory_equal(got + offset, want, (size_t)pos);
    clReleaseMemObject(buf);
    buf = fx_buf(span, back);
    d.buf = buf;
    assert_int_equal(fx.be->unpack_dev(&a, NULL, &d, packed, offset), MPI_SUCCESS);
    fx_read(buf, span, host);
    pos = 0;
    MPI_Unpack(want, psize, &pos, back, count, dt, MPI_COMM_WORLD);
    if (!skip_unpack_check) assert_memory_equal(host, back, span);
    clReleaseMemObject(buf);
    clReleaseMemObject(packed);
    mpiacc_pack_type_release(t);
    free(host);
    free(want);
    free(got);
    free(back);
}

static MPI_Datatype commit(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

static MPI_Datatype vector_bytes(int nb, int blk, int stride)
{
    MPI_Datatype t;
    MPI_Type_vector(nb, blk, stride, MPI_BYTE, &t);
    return commit(t);
}

static MPI_Datatype resized(MPI_Datatype in, MPI_Aint extent)
{
    MPI_Datatype t;
    MPI_Type_create_resized(in, 0, extent, &t);
    MPI_Type_free(&in);
    return commit(t);
}

static MPI_Datatype subarray3d(int z, int y, int x, int sz, int sy, int sx, int oz, int oy, int ox)
{
    MPI_Datatype t;
    int sizes[3] = {z, y, x}, sub[3] = {sz, sy, sx}, st[3] = {oz, oy, ox};
    MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t);
    return commit(t);
}

static void contiguous(void **state)
{
    MPI_Datatype t;
    const char *s = "none";
    MPI_Type_contiguous(1000, MPI_INT, &t);
    MPI_Type_commit(&t);
    for (int pieces = 1; pieces <= 3; pieces++) {
        roundtrip(t, 1, pieces, &s);
        assert_string_equal(s, "copy");
        roundtrip(t, 3, pieces, &s);
        assert_string_equal(s, "copy");
    }
    roundtrip_dev(t, 2, 0);
    roundtrip_dev(t, 2, 12);
    MPI_Type_free(&t);
}

/* The rect tests force the rect strategy (the automatic choice takes the
 * kernel for short rows on GPUs). */
static void vector_rect(void **state)
{
    MPI_Datatype t = vector_bytes(100, 96, 256);
    MPI_Datatype r = resized(vector_bytes(50, 128, 512), 50 * 512);
    const char *s = "none";
    mpiacc_ocl_set_rect_policy(2);
    for (int pieces = 1; pieces <= 3; pieces++) {
        roundtrip(t, 1, pieces, &s);
        assert_string_equal(s, "rect");
        roundtrip(r, 3, pieces, &s); /* elements continue the row pattern */
        assert_string_equal(s, "rect");
    }
    roundtrip_dev(t, 1, 0);
    roundtrip_dev(t, 1, 96 * 3);
    roundtrip_dev(t, 1, 13); /* MPI_Pack at an odd position: the kernel */
    roundtrip_dev(r, 2, 40);
    roundtrip_dev(r, 3, 128);
    mpiacc_ocl_set_rect_policy(0);
    MPI_Type_free(&t);
    MPI_Type_free(&r);
}

static void subarray_rect(void **state)
{
    MPI_Datatype t = subarray3d(10, 12, 16, 4, 5, 8, 3, 2, 4);
    MPI_Datatype u = subarray3d(6, 7, 8, 3, 3, 4, 3, 4, 4); /* touches the last plane and row */
    const char *s = "none";
    mpiacc_ocl_set_rect_policy(2);
    for (int pieces = 1; pieces <= 4; pieces++) {
        roundtrip(t, 1, pieces, &s);
        assert_string_equal(s, "rect");
        roundtrip(t, 2, pieces, &s);
    }
    for (int pieces = 1; pieces <= 3; pieces++) {
        roundtrip(u, 1, pieces, &s);
        assert_string_equal(s, "rect");
    }
    roundtrip_dev(t, 1, 8);
    roundtrip_dev(t, 1, 32 * 5);
    roundtrip_dev(u, 1, 0);
    roundtrip_dev(u, 1, 7);
    mpiacc_ocl_set_rect_policy(0);
    MPI_Type_free(&t);
    MPI_Type_free(&u);
}

/* Shapes the rect path cannot take (or ranges not on row boundaries) go
 * through the generic kernel. */
static void kernel_path(void **state)
{
    MPI_Datatype t = vector_bytes(100, 6, 20), v;
    const char *s = "none";
    MPI_Type_vector(7, 3, 5, MPI_INT, &v);
    MPI_Type_commit(&v);
    roundtrip(t, 3, 1, &s); /* 3 elements: extent not on the row grid */
    assert_string_equal(s, "kernel");
    mpiacc_ocl_set_rect_policy(1); /* never rect: the kernel for every shape */
    MPI_Type_free(&t);
    t = vector_bytes(10, 64, 128);
    roundtrip(t, 1, 2, &s);
    assert_string_equal(s, "kernel");
    roundtrip(t, 2, 3, &s);
    roundtrip(v, 5, 2, &s);
    roundtrip_dev(t, 3, 2);
    roundtrip_dev(v, 2, 4);
    mpiacc_ocl_set_rect_policy(0);
    MPI_Type_free(&t);
    MPI_Type_free(&v);
}

/* Several threads packing and testing at once. */
typedef struct {
    MPI_Datatype dt;
    int iters, bad;
} thr_arg_t;

static void *thr_main(void *p)
{
    thr_arg_t *ta = p;
    const char *s;
    for (int i = 0; i < ta->iters; i++) ta->bad += roundtrip_q(ta->dt, 1 + i % 3, 1 + i % 2, &s);
    return NULL;
}

static void threads(void **state)
{
    MPI_Datatype t[4] = {vector_bytes(64, 64, 128), resized(vector_bytes(8, 256, 512), 4096), 0, 0};
    pthread_t th[4];
    thr_arg_t ta[4];
    MPI_Type_contiguous(333, MPI_SHORT, &t[2]);
    MPI_Type_commit(&t[2]);
    t[3] = subarray3d(6, 7, 8, 3, 3, 4, 1, 2, 3);
    for (int i = 0; i < 4; i++) {
        ta[i] = (thr_arg_t){t[i], 20, 0};
        assert_int_equal(pthread_create(&th[i], NULL, thr_main, &ta[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) assert_int_equal(ta[i].bad, 0);
    for (int i = 0; i < 4; i++) MPI_Type_free(&t[i]);
}

/* Issue 10 regression: a darray whose one dense block is [32, 48) while
 * MPICH reports true_lb 0, and hindexed_block types over it.  Through the
 * backend (host staging and device-to-device) and the MPI API (self send
 * and receive, MPI_Pack / MPI_Unpack into a packed cl_mem): exactly the
 * type map's bytes move. */
static void check_unpacked(const rg_type_t *r, cl_mem m, const unsigned char *src, const char *what)
{
    unsigned char got[256];
    fx_read(m, (size_t)r->span, got);
    for (MPI_Aint k = 0; k < r->span; k++)
        if (got[k] != (rg_touched(r, k) ? src[k] : 0))
            fail_msg("%s, %s: byte %ld of the cl_mem is %d, expected %d", r->name, what, (long)k, got[k],
                     rg_touched(r, k) ? src[k] : 0);
}

static void darray_regress(void **state)
{
    rg_type_t ts[RG_NTYPES];
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    (void)state;
    rg_make(ts);
    for (int i = 0; i < RG_NTYPES; i++) {
        const rg_type_t *r = &ts[i];
        unsigned char buf[256], zero[256] = {0}, want[256], got[256];
        mpiacc_pack_type_t *t = analyze(r->dt);
        size_t n;
        void *staging = NULL, *x = NULL;
        cl_mem m, pk;
        MPI_Datatype ct = cl_type(r->dt, fx.qin, NULL);
        MPI_Request req;
        int pos = 0;
        fill_pattern(buf, sizeof buf, 11u + (unsigned)i);
        n = rg_expected(r, buf, want);
        /* backend: pack to host staging, unpack from it */
        m = fx_buf((size_t)r->span, buf);
        assert_int_equal(fx.be->host_alloc(n, &staging), MPI_SUCCESS);
        mpiacc_xfer_desc_t d = {.buf = m, .type = t, .count = r->count, .first = 0, .last = (MPI_Count)n,
                                .host = staging};
        assert_int_equal(fx.be->pack(&a, NULL, &d, &x), MPI_SUCCESS);
        fx_wait(x);
        if (memcmp(staging, want, n) != 0) fail_msg("%s: backend pack moved other bytes", r->name);
        clReleaseMemObject(m);
        m = fx_buf((size_t)r->span, zero);
        d.buf = m;
        x = NULL;
        assert_int_equal(fx.be->unpack(&a, NULL, &d, &x), MPI_SUCCESS);
        fx_wait(x);
        check_unpacked(r, m, buf, "backend unpack");
        fx.be->host_free(staging, n);
        /* backend: device-to-device at an offset */
        clReleaseMemObject(m);
        m = fx_buf((size_t)r->span, buf);
        memset(got, 0, sizeof got);
        pk = fx_buf(n + 8, got);
        d.buf = m;
        assert_int_equal(fx.be->pack_dev(&a, NULL, &d, pk, 8), MPI_SUCCESS);
        fx_read(pk, n + 8, got);
        if (memcmp(got + 8, want, n) != 0) fail_msg("%s: backend pack_dev moved other bytes", r->name);
        clReleaseMemObject(m);
        m = fx_buf((size_t)r->span, zero);
        d.buf = m;
        assert_int_equal(fx.be->unpack_dev(&a, NULL, &d, pk, 8), MPI_SUCCESS);
        check_unpacked(r, m, buf, "backend unpack_dev");
        clReleaseMemObject(pk);
        /* MPI API: send from the cl_mem, receive bytes */
        clReleaseMemObject(m);
        m = fx_buf((size_t)r->span, buf);
        assert_int_equal(mpiacc_test_self_bytes(m, r->count, ct, 40 + i, got, sizeof got), (int)n);
        if (memcmp(got, want, n) != 0) fail_msg("%s: MPI_Isend from the cl_mem sent other bytes", r->name);
        /* MPI_Pack into a packed cl_mem, MPI_Unpack from it */
        memset(got, 0, sizeof got);
        pk = fx_buf(n, got);
        assert_int_equal(MPI_Pack(m, r->count, ct, pk, (int)n, &pos, MPI_COMM_SELF), MPI_SUCCESS);
        assert_int_equal(pos, (int)n);
        fx_read(pk, n, got);
        if (memcmp(got, want, n) != 0) fail_msg("%s: MPI_Pack of the cl_mem packed other bytes", r->name);
        clReleaseMemObject(m);
        m = fx_buf((size_t)r->span, zero);
        pos = 0;
        assert_int_equal(MPI_Unpack(pk, (int)n, &pos, m, r->count, ct, MPI_COMM_SELF), MPI_SUCCESS);
        check_unpacked(r, m, buf, "MPI_Unpack");
        clReleaseMemObject(pk);
        /* MPI API: receive into the cl_mem */
        clReleaseMemObject(m);
        m = fx_buf((size_t)r->span, zero);
        assert_int_equal(MPI_Irecv(m, r->count, ct, 0, 60 + i, MPI_COMM_SELF, &req), MPI_SUCCESS);
        assert_int_equal(MPI_Send(want, (int)n, MPI_BYTE, 0, 60 + i, MPI_COMM_SELF), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        check_unpacked(r, m, buf, "MPI_Irecv into the cl_mem");
        clReleaseMemObject(m);
        MPI_Type_free(&ct);
        mpiacc_pack_type_release(t);
    }
    rg_free(ts);
}

/* err: MPI_ERR_COUNT or MPI_ERR_BUFFER, no negative number in the message. */
static void expect_clean_failure(int err, const char *what, int count)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = fx_class(err);
    if (err == MPI_SUCCESS) fail_msg("%s with count %d of a 2^62-extent type succeeded", what, count);
    MPI_Error_string(err, msg, &len);
    printf("  %s, count %d: %s\n", what, count, msg);
    if (cls != MPI_ERR_COUNT && cls != MPI_ERR_BUFFER)
        fail_msg("%s, count %d: error class %d, expected MPI_ERR_COUNT or MPI_ERR_BUFFER", what, count, cls);
    for (int k = 0; k + 1 < len; k++)
        if (msg[k] == '-' && msg[k + 1] >= '0' && msg[k + 1] <= '9')
            fail_msg("%s, count %d: negative number in the message: %s", what, count, msg);
}

/* Issue 10 regression: MPI_BYTE resized to an extent of 2^62 on a cl_mem,
 * counts 2, 3 and 5: every call fails at once (no kernel touching bytes
 * 2^62 apart, no negative span in the message). */
static void huge_extent(void **state)
{
    MPI_Datatype r = rg_huge_extent(), ct = cl_type(r, fx.qin, NULL);
    mpiacc_pack_type_t *t = analyze(r);
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    unsigned char host[64] = {42}, got[64] = {0};
    cl_mem m = fx_buf(sizeof host, host), pk = fx_buf(sizeof got, got);
    const int counts[] = {2, 3, 5};
    MPI_Request req;
    int pos;
    (void)state;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < 3; i++) {
        mpiacc_xfer_desc_t d = {.buf = m, .type = t, .count = counts[i], .first = 0, .last = counts[i],
                                .host = got};
        void *x = NULL;
        expect_clean_failure(fx.be->pack(&a, NULL, &d, &x), "backend pack", counts[i]);
        assert_null(x);
        expect_clean_failure(fx.be->unpack(&a, NULL, &d, &x), "backend unpack", counts[i]);
        expect_clean_failure(fx.be->pack_dev(&a, NULL, &d, pk, 0), "backend pack_dev", counts[i]);
        req = MPI_REQUEST_NULL;
        expect_clean_failure(MPI_Isend(m, counts[i], ct, 0, 1, MPI_COMM_SELF, &req), "MPI_Isend", counts[i]);
        assert_true(req == MPI_REQUEST_NULL);
        expect_clean_failure(MPI_Irecv(m, counts[i], ct, 0, 1, MPI_COMM_SELF, &req), "MPI_Irecv", counts[i]);
        assert_true(req == MPI_REQUEST_NULL);
        pos = 0;
        expect_clean_failure(MPI_Pack(m, counts[i], ct, pk, (int)sizeof got, &pos, MPI_COMM_SELF), "MPI_Pack",
                             counts[i]);
        expect_clean_failure(MPI_Unpack(pk, (int)sizeof got, &pos, m, counts[i], ct, MPI_COMM_SELF), "MPI_Unpack",
                             counts[i]);
    }
    /* one element: one byte */
    assert_int_equal(MPI_Isend(m, 1, ct, 0, 2, MPI_COMM_SELF, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(got, 1, MPI_BYTE, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_int_equal(got[0], 42);
    clReleaseMemObject(m);
    clReleaseMemObject(pk);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&ct);
    MPI_Type_free(&r);
}

/* Random datatypes of the engine's generator (every constructor, nesting
 * depth 1..5), shifted so that their lowest byte is at offset >= 0 of the
 * cl_mem, through every rect policy (auto / kernel only / rect whenever
 * possible): pack and unpack in pieces through host staging, and
 * device-to-device, against MPI_Pack / MPI_Unpack.  MPIACC_TEST_NTYPES=n
 * types (default 20000), MPIACC_TEST_LONG=1: 100000. */
static void random_types(void **state)
{
    uint64_t seed = mpiacc_test_seed(), st = seed;
    static const char *const strategies[3] = {"copy", "rect", "kernel"};
    long n = tg_corpus_size(20000, 100000), by_strategy[3] = {0}, ndev = 0, noverlap = 0;
    double t0 = fx_now();
    tg_src_t src = {.state = seed, .max_size = 1 << 16, .max_span = 1 << 20};
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (long i = 0; i < n; i++) {
        int count = 1 + (int)(mpiacc_test_rand(&st) % 3), pieces = 1 + (int)(mpiacc_test_rand(&st) % 3);
        const char *s = "none";
        MPI_Datatype raw, dt = random_placed_depth(&src, count, 1 + (int)(i % 5), &raw);
        mpiacc_pack_type_t *t = NULL;
        assert_int_equal(mpiacc_pack_type_analyze(dt, &t), MPI_SUCCESS);
        skip_unpack_check = t->size > 0 && overlapping(t, count, span_of(dt, count));
        noverlap += skip_unpack_check;
        mpiacc_ocl_set_rect_policy((int)(i % 3));
        if (roundtrip_q(dt, count, pieces, &s)) fail_msg("random type %ld (%s), count %d, pieces %d, policy %d", i,
                                                         tg_combiner_name(raw), count, pieces, (int)(i % 3));
        for (int k = 0; k < 3; k++) by_strategy[k] += strcmp(s, strategies[k]) == 0;
        if (t->size > 0) {
            roundtrip_dev(dt, count, (int)(mpiacc_test_rand(&st) % 3) * 4);
            ndev++;
        }
        mpiacc_pack_type_release(t);
        MPI_Type_free(&dt);
        tg_free(&raw);
    }
    mpiacc_ocl_set_rect_policy(0);
    skip_unpack_check = 0;
    printf("random types on %s: %ld in %.2f s (seed %llu): strategies copy %ld, rect %ld, kernel %ld; %ld "
           "device-to-device; %ld overlapping (unpack not compared)\n",
           fx.name, n, fx_now() - t0, (unsigned long long)seed, by_strategy[0], by_strategy[1],
           by_strategy[2], ndev, noverlap);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(contiguous), cmocka_unit_test(vector_rect), cmocka_unit_test(subarray_rect),
        cmocka_unit_test(kernel_path), cmocka_unit_test(threads), cmocka_unit_test(darray_regress),
        cmocka_unit_test(huge_extent), cmocka_unit_test(random_types),
    };
    fx_init(&argc, &argv);
    return fx_end(MPIACC_TEST_RUN("opencl_pack", tests, NULL, NULL));
}
