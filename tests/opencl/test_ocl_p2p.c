/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * OpenCL buffers through the public MPI API (2 ranks): the datatype engine's
 * random corpus sent cl_mem -> cl_mem, cl_mem -> host and host -> cl_mem
 * with every send mode and receive call, checked against what MPI_Pack /
 * MPI_Unpack give on the host; MPI_Pack / MPI_Unpack / MPI_Pack_size on
 * cl_mem (packed side a cl_mem); and what the receive status says (count,
 * elements, wildcards, truncation, empty messages, MPI_PROC_NULL, cancel).
 * MPIACC_TEST_NTYPES sets the corpus size (default 300), MPIACC_TEST_SEED
 * the seed.
 */
#include "ocl_fixture.h"
#include "ocl_types.h"
#include "p2p_ops.h"
#include "reqpool/reqpool.h"

static int rank, peer;
enum { TAG_DATA = 7 }; /* 8: a ready send's handshake (p2p_ops.h) */
enum { DIR_DD, DIR_DH, DIR_HD, NDIRS };
static const char *dir_name[NDIRS] = {"cl_mem->cl_mem", "cl_mem->host", "host->cl_mem"};

/* A message buffer: host memory, or a cl_mem with the same initial bytes. */
typedef struct side {
    int dev;
    size_t span;
    unsigned char *host;
    cl_mem mem;
} side_t;

static side_t side_new(int dev, size_t span, unsigned seed)
{
    side_t s = {.dev = dev, .span = span, .host = malloc(span)};
    fill_pattern(s.host, span, seed);
    if (dev) s.mem = fx_buf(span, s.host);
    return s;
}

static void *side_ptr(side_t *s) { return s->dev ? (void *)s->mem : (void *)s->host; }

/* The buffer's bytes now (read back from the device for a cl_mem). */
static unsigned char *side_bytes(side_t *s)
{
    if (s->dev) fx_read(s->mem, s->span, s->host);
    return s->host;
}

static void side_free(side_t *s)
{
    if (s->dev) clReleaseMemObject(s->mem);
    free(s->host);
}

/* Checks a received buffer against host MPI_Pack + MPI_Unpack of the
 * sender's bytes into the receive buffer's initial bytes; and the status. */
static int check_recv(side_t *rs, unsigned sseed, unsigned rseed, MPI_Datatype dt, MPI_Datatype rtype, int count,
                      int src, const MPI_Status *st)
{
    int bad = 0, psize = 0, pos = 0, n = -1;
    unsigned char *sdata = malloc(rs->span), *want = malloc(rs->span), *packed;
    fill_pattern(sdata, rs->span, sseed);
    fill_pattern(want, rs->span, rseed);
    MPI_Pack_size(count, dt, MPI_COMM_WORLD, &psize);
    packed = malloc((size_t)psize + 1);
    MPI_Pack(sdata, count, dt, packed, psize, &pos, MPI_COMM_WORLD);
    pos = 0;
    MPI_Unpack(packed, psize, &pos, want, count, dt, MPI_COMM_WORLD);
    if (!overlapping_dt(dt, count) && memcmp(side_bytes(rs), want, rs->span) != 0) {
        size_t k = 0;
        while (rs->host[k] == want[k]) k++;
        fprintf(stderr, "rank %d: received bytes differ from MPI_Unpack's at byte %zu of %zu\n", rank, k, rs->span);
        bad++;
    }
    MPI_Get_count(st, rtype, &n);
    if (st->MPI_SOURCE != src || st->MPI_TAG != TAG_DATA || n != count) {
        fprintf(stderr, "rank %d: status source %d tag %d count %d, expected %d %d %d\n", rank, st->MPI_SOURCE,
                st->MPI_TAG, n, src, TAG_DATA, count);
        bad++;
    }
    free(sdata);
    free(want);
    free(packed);
    return bad;
}

/* One message of count x dt: op, direction, sender chosen by i. */
static int one_message(long i, MPI_Datatype dt, int count)
{
    int op = (int)(i % NOPS), dir = (int)(i / NOPS % NDIRS), sender = (int)(i % 2), bad = 0;
    size_t span = span_of(dt, count);
    /* a receive that writes some bytes twice is MPI_ERR_TYPE on a cl_mem
     * (test_ocl_errors_mpi): such a datatype is received into host memory */
    if (overlapping_dt(dt, count)) dir = DIR_DH;
    MPI_Datatype dtd = cl_type(dt, fx.qin, NULL);
    MPI_Datatype stype = dir == DIR_HD ? dt : dtd, rtype = dir == DIR_DH ? dt : dtd;
    unsigned sseed[2] = {(unsigned)(2 * i + 1), (unsigned)(2 * i + 2)}, rseed = (unsigned)(7 * i + 5);
    side_t s = side_new(dir != DIR_HD, span, sseed[rank]), r = side_new(dir != DIR_DH, span, rseed);
    MPI_Status st;

    if (op == OP_SENDRECV) { /* both ranks send their bytes and receive the peer's */
        bad += mpi_bad(MPI_Sendrecv(side_ptr(&s), count, stype, peer, TAG_DATA, side_ptr(&r), count, rtype, peer,
                                    TAG_DATA, MPI_COMM_WORLD, &st),
                       "MPI_Sendrecv");
        if (!bad) bad += check_recv(&r, sseed[peer], rseed, dt, rtype, count, peer, &st);
    } else if (rank == sender) {
        bad += mpi_bad(send_op(op, side_ptr(&s), count, stype, peer, TAG_DATA, MPI_COMM_WORLD), op_name[op]);
    } else {
        bad += mpi_bad(recv_op(op, i, side_ptr(&r), count, rtype, peer, 0, TAG_DATA, MPI_COMM_WORLD, &st), "receive");
        if (!bad) bad += check_recv(&r, sseed[peer], rseed, dt, rtype, count, peer, &st);
    }
    side_free(&s);
    side_free(&r);
    MPI_Type_free(&dtd);
    return bad;
}

/* MPI_Pack / MPI_Unpack of count x dt between a cl_mem and a packed cl_mem
 * at an odd position, against the host calls; MPI_Pack_size unchanged. */
static int pack_unpack(long i, MPI_Datatype dt, int count)
{
    int bad = 0, hs = 0, ds = 0, off = (int)(i % 5), outsize, pos, dpos;
    size_t span = span_of(dt, count);
    MPI_Datatype dtd = cl_type(dt, i % 2 ? fx.qin : NULL, NULL);
    unsigned char *data = malloc(span), *hpk, *dpk, *want = malloc(span), *got = malloc(span);
    cl_mem dmem, pmem, omem;

    MPI_Pack_size(count, dt, MPI_COMM_WORLD, &hs);
    MPI_Pack_size(count, dtd, MPI_COMM_WORLD, &ds);
    if (hs != ds) {
        fprintf(stderr, "MPI_Pack_size: %d on the host type, %d on the OpenCL type\n", hs, ds);
        bad++;
    }
    outsize = off + hs + 3;
    hpk = malloc((size_t)outsize);
    dpk = malloc((size_t)outsize);
    memset(hpk, 0xab, (size_t)outsize);
    fill_pattern(data, span, (unsigned)i);
    dmem = fx_buf(span, data);
    pmem = fx_buf((size_t)outsize, hpk);
    pos = dpos = off;
    MPI_Pack(data, count, dt, hpk, outsize, &pos, MPI_COMM_WORLD);
    bad += mpi_bad(MPI_Pack(dmem, count, dtd, pmem, outsize, &dpos, MPI_COMM_WORLD), "MPI_Pack (cl_mem)");
    fx_read(pmem, (size_t)outsize, dpk);
    if (dpos != pos || memcmp(hpk, dpk, (size_t)outsize) != 0) {
        fprintf(stderr, "MPI_Pack on cl_mem: position %d (host %d) or bytes differ\n", dpos, pos);
        bad++;
    }
    fill_pattern(want, span, (unsigned)i + 99);
    omem = fx_buf(span, want);
    pos = dpos = off;
    MPI_Unpack(hpk, outsize, &pos, want, count, dt, MPI_COMM_WORLD);
    bad += mpi_bad(MPI_Unpack(pmem, outsize, &dpos, omem, count, dtd, MPI_COMM_WORLD), "MPI_Unpack (cl_mem)");
    fx_read(omem, span, got);
    if (dpos != pos || (!overlapping_dt(dt, count) && memcmp(want, got, span) != 0)) {
        fprintf(stderr, "MPI_Unpack on cl_mem: position %d (host %d) or bytes differ\n", dpos, pos);
        bad++;
    }
    clReleaseMemObject(dmem);
    clReleaseMemObject(pmem);
    clReleaseMemObject(omem);
    MPI_Type_free(&dtd);
    free(data);
    free(hpk);
    free(dpk);
    free(want);
    free(got);
    return bad;
}

/* ---- status ---------------------------------------------------------------- */

static int err_class(int err)
{
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
    return cls;
}

/* Source, tag, MPI_Get_count and MPI_Get_elements on the user's datatype,
 * for whole and partial messages (noncontiguous receive type). */
static void status_counts(void **state)
{
    int ints[24], n, e, base[24];
    MPI_Datatype v, tv, t3, c3;
    MPI_Status st;
    cl_mem m;

    MPI_Type_vector(3, 1, 2, MPI_INT, &v); /* 3 ints of 5: extent 5 ints */
    MPI_Type_commit(&v);
    tv = cl_type(v, fx.qin, NULL);
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_commit(&c3);
    t3 = cl_type(c3, NULL, NULL);
    for (int i = 0; i < 24; i++) ints[i] = 1000 + i, base[i] = -1 - i;
    if (rank == 0) {
        assert_int_equal(MPI_Send(ints, 9, MPI_INT, 1, 11, MPI_COMM_WORLD), MPI_SUCCESS);
        assert_int_equal(MPI_Send(ints, 7, MPI_INT, 1, 12, MPI_COMM_WORLD), MPI_SUCCESS);
    } else {
        m = fx_buf(sizeof base, base);
        /* 9 ints into 4 x vector: 3 whole elements, 9 basic elements */
        assert_int_equal(MPI_Recv(m, 4, tv, 0, 11, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        assert_int_equal(st.MPI_SOURCE, 0);
        assert_int_equal(st.MPI_TAG, 11);
        MPI_Get_count(&st, tv, &n);
        MPI_Get_elements(&st, tv, &e);
        assert_int_equal(n, 3);
        assert_int_equal(e, 9);
        MPI_Get_count(&st, MPI_INT, &n);
        assert_int_equal(n, 9);
        fx_read(m, sizeof ints, ints);
        for (int i = 0; i < 24; i++) /* vector elements at ints 0,2,4, 5,7,9, 10,12,14 */
            assert_int_equal(ints[i], i < 15 && i % 5 % 2 == 0 ? 1000 + i / 5 * 3 + i % 5 / 2 : -1 - i);
        clReleaseMemObject(m);
        /* 7 ints into 4 x contiguous(3): not a whole number of elements */
        m = fx_buf(sizeof base, base);
        assert_int_equal(MPI_Recv(m, 4, t3, 0, 12, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        MPI_Get_count(&st, t3, &n);
        MPI_Get_elements(&st, t3, &e);
        assert_int_equal(n, MPI_UNDEFINED);
        assert_int_equal(e, 7);
        fx_read(m, sizeof ints, ints);
        for (int i = 0; i < 24; i++) assert_int_equal(ints[i], i < 7 ? 1000 + i : -1 - i);
        clReleaseMemObject(m);
    }
    MPI_Type_free(&tv);
    MPI_Type_free(&t3);
    MPI_Type_free(&v);
    MPI_Type_free(&c3);
}

/* MPI_ANY_SOURCE / MPI_ANY_TAG into a cl_mem; the status names the sender. */
static void wildcards(void **state)
{
    int v[64], got[64];
    MPI_Datatype t = cl_ints(64, fx.qin, NULL);
    MPI_Request r;
    MPI_Status st;
    fill_pattern((unsigned char *)v, sizeof v, 5);
    if (rank == 0) {
        cl_mem m = fx_buf(sizeof v, v);
        assert_int_equal(MPI_Send(m, 1, t, 1, 42, MPI_COMM_WORLD), MPI_SUCCESS);
        clReleaseMemObject(m);
    } else {
        cl_mem m = fx_buf(sizeof v, NULL);
        assert_int_equal(MPI_Irecv(m, 1, t, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        assert_int_equal(st.MPI_SOURCE, 0);
        assert_int_equal(st.MPI_TAG, 42);
        fx_read(m, sizeof got, got);
        assert_memory_equal(got, v, sizeof v);
        clReleaseMemObject(m);
    }
    MPI_Type_free(&t);
}

/* A message longer than the cl_mem receive: MPI_ERR_TRUNCATE from
 * MPI_Recv and from MPI_Wait after MPI_Irecv. */
static void truncation(void **state)
{
    int v[32] = {0};
    MPI_Datatype t = cl_ints(16, fx.qin, NULL);
    MPI_Request r;
    MPI_Status st;
    if (rank == 0) {
        assert_int_equal(MPI_Send(v, 32, MPI_INT, 1, 13, MPI_COMM_WORLD), MPI_SUCCESS);
        assert_int_equal(MPI_Send(v, 32, MPI_INT, 1, 14, MPI_COMM_WORLD), MPI_SUCCESS);
    } else {
        cl_mem m = fx_buf(sizeof v, NULL);
        assert_int_equal(err_class(MPI_Recv(m, 1, t, 0, 13, MPI_COMM_WORLD, &st)), MPI_ERR_TRUNCATE);
        assert_int_equal(MPI_Irecv(m, 1, t, 0, 14, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(err_class(MPI_Wait(&r, &st)), MPI_ERR_TRUNCATE);
        assert_int_equal(r, MPI_REQUEST_NULL);
        clReleaseMemObject(m);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&t);
}

/* Zero count and MPI_PROC_NULL: no device work, nothing in the pool, the
 * status of an empty message. */
static void empty_and_proc_null(void **state)
{
    MPI_Datatype t = cl_ints(8, fx.qin, NULL);
    cl_mem m = fx_buf(64, NULL);
    MPI_Request r;
    MPI_Status st;
    int flag = 0, n = -1;

    assert_int_equal(MPI_Isend(m, 1, t, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    assert_int_equal(mpiacc_rp_pending(), 0);
    assert_int_equal(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(MPI_Irecv(m, 1, t, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    assert_int_equal(mpiacc_rp_pending(), 0);
    assert_int_equal(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(st.MPI_SOURCE, MPI_PROC_NULL);
    assert_int_equal(st.MPI_TAG, MPI_ANY_TAG);
    MPI_Get_count(&st, t, &n);
    assert_int_equal(n, 0);
    assert_int_equal(MPI_Recv(m, 1, t, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    assert_int_equal(MPI_Send(m, 1, t, MPI_PROC_NULL, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    /* zero count: an empty message still matches */
    if (rank == 0) {
        assert_int_equal(MPI_Isend(m, 0, t, 1, 15, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(mpiacc_rp_pending(), 0);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else {
        assert_int_equal(MPI_Irecv(m, 0, t, 0, 15, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(mpiacc_rp_pending(), 0);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        MPI_Get_count(&st, t, &n);
        assert_int_equal(n, 0);
        assert_int_equal(st.MPI_SOURCE, 0);
        assert_int_equal(st.MPI_TAG, 15);
    }
    clReleaseMemObject(m);
    MPI_Type_free(&t);
}

/* MPI_Cancel of a posted cl_mem receive: completes cancelled, the buffer
 * is untouched, and a later message with that tag goes to a later receive. */
static void cancel_receive(void **state)
{
    int init[16], v[16], got[16], flag = 0;
    MPI_Datatype t = cl_ints(16, fx.qin, NULL);
    MPI_Request r;
    MPI_Status st;
    for (int i = 0; i < 16; i++) init[i] = -i, v[i] = 77 + i;
    if (rank == 1) {
        cl_mem m = fx_buf(sizeof init, init), m2 = fx_buf(sizeof init, init);
        assert_int_equal(MPI_Irecv(m, 1, t, 0, 16, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Cancel(&r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        MPI_Test_cancelled(&st, &flag);
        assert_true(flag);
        assert_int_equal(mpiacc_rp_pending(), 0);
        MPI_Barrier(MPI_COMM_WORLD);
        assert_int_equal(MPI_Recv(m2, 1, t, 0, 16, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        MPI_Test_cancelled(&st, &flag);
        assert_false(flag);
        fx_read(m, sizeof got, got);
        assert_memory_equal(got, init, sizeof init);
        fx_read(m2, sizeof got, got);
        assert_memory_equal(got, v, sizeof v);
        clReleaseMemObject(m);
        clReleaseMemObject(m2);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        assert_int_equal(MPI_Send(v, 16, MPI_INT, 1, 16, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    MPI_Type_free(&t);
}

/* ---- the corpus ---------------------------------------------------------- */

static void random_corpus(void **state)
{
    uint64_t seed = mpiacc_test_seed(), st = seed ^ 0x5eed;
    const char *e = getenv("MPIACC_TEST_NTYPES");
    long n = e ? atol(e) : 300, nbad = 0;
    tg_src_t src = {.state = seed, .max_size = 1 << 14, .max_span = 1 << 16};
    int bad;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (long i = 0; i < n; i++) {
        int count = 1 + (int)(mpiacc_test_rand(&st) % 3);
        MPI_Datatype raw, dt = random_placed(&src, count, &raw);
        bad = one_message(i, dt, count);
        if (i % 2 == rank) bad += pack_unpack(i, dt, count);
        if (bad) {
            int size = 0;
            MPI_Type_size(dt, &size);
            fprintf(stderr, "rank %d: random type %ld (%s, size %d), count %d, %s, %s: %d failed check(s)\n", rank, i,
                    tg_combiner_name(raw), size, count, op_name[i % NOPS],
                    overlapping_dt(dt, count) ? dir_name[DIR_DH] : dir_name[i / NOPS % NDIRS], bad);
            nbad++;
        }
        MPI_Type_free(&dt);
        tg_free(&raw);
    }
    MPI_Allreduce(MPI_IN_PLACE, &nbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    assert_int_equal(nbad, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_counts), cmocka_unit_test(wildcards), cmocka_unit_test(truncation),
        cmocka_unit_test(empty_and_proc_null), cmocka_unit_test(cancel_receive), cmocka_unit_test(random_corpus),
    };
    fx_init_pair(&argc, &argv, &rank, &peer);
    return fx_end(MPIACC_TEST_RUN("opencl_p2p", tests, NULL, NULL));
}
