#define _POSIX_C_SOURCE 200809L
/*
 * The direct protocol with OpenCL buffers (2 ranks, PoCL in CI), on a
 * communicator made direct with the info key (or MPI_COMM_WORLD with
 * --world under MPIACC_DIRECT=1).  CMakeLists.txt runs it with a small
 * MPIACC_EAGER_MAX and MPIACC_PIPELINE_CHUNK, so that both the eager and
 * the pipelined protocol (with many chunks, at odd byte offsets) carry the
 * random datatype corpus, checked against host MPI_Pack / MPI_Unpack with
 * every send mode and receive call; and: statuses, wildcards, tags and
 * non-overtaking across protocols, truncation (the part that fits is
 * written), MPI_Cancel, empty messages and MPI_PROC_NULL, host and device
 * messages between the same pair on the same communicator, threads, and a
 * failure on either side completing both requests with an error.
 * MPIACC_TEST_NTYPES sets the corpus size (default 400), MPIACC_TEST_SEED
 * the seed.
 */
#include <pthread.h>

#include "ocl_fixture.h"
#include "ocl_types.h"
#include "p2p_ops.h"
#include "protocol/direct.h"
#include "reqpool/reqpool.h"

static int rank, peer, use_world;
static MPI_Comm comm;
enum { TAG = 7 }; /* 8: a ready send's handshake (p2p_ops.h) */

static long count_of(mpiacc_proto_count_t c) { return atomic_load(&mpiacc_proto_direct_count[c]); }

static int err_class(int err)
{
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
    return cls;
}

/* n ints on the device initialised with v0 + i */
static cl_mem ints_buf(int n, int v0)
{
    int *h = malloc((size_t)n * sizeof *h);
    cl_mem m;
    for (int i = 0; i < n; i++) h[i] = v0 + i;
    m = fx_buf((size_t)n * sizeof *h, h);
    free(h);
    return m;
}

/* Checks that m's first n ints are v0 + i and the next `tail` are untouched (-1). */
static void check_ints(cl_mem m, int n, int v0, int tail)
{
    int *h = malloc((size_t)(n + tail) * sizeof *h);
    fx_read(m, (size_t)(n + tail) * sizeof *h, h);
    for (int i = 0; i < n; i++)
        if (h[i] != v0 + i) fail_msg("rank %d: int %d is %d, expected %d", rank, i, h[i], v0 + i);
    for (int i = n; i < n + tail; i++)
        if (h[i] != -1) fail_msg("rank %d: int %d beyond the message was written (%d)", rank, i, h[i]);
    free(h);
}

/* ---- the corpus ------------------------------------------------------------- */

/* Whether the engine's host pack of count x dt from data gives MPI_Pack's
 * bytes (to tell a datatype engine fault from a protocol fault). */
static int engine_agrees(MPI_Datatype dt, int count, const void *data, const unsigned char *packed, int psize)
{
    mpiacc_pack_type_t *t = NULL;
    unsigned char *mine = malloc((size_t)psize + 1);
    int same = mpiacc_pack_type_get(dt, &t) == MPI_SUCCESS && t->size * count == psize &&
               mpiacc_pack_cpu_pack(t, data, count, 0, psize, mine) == MPI_SUCCESS &&
               memcmp(mine, packed, (size_t)psize) == 0;
    if (t) mpiacc_pack_type_release(t);
    free(mine);
    return same;
}

/* One message of count x dt, device to device.  Every third message is
 * received as its packed bytes (a contiguous OpenCL byte type): what
 * arrives must be MPI_Pack's bytes. */
static int one_message(long i, MPI_Datatype dt, int count)
{
    int op = (int)(i % NOPS), sender = (int)(i % 2), bad = 0, as_bytes = i % 3 == 2, psize = 0, pos = 0, n = -1;
    size_t span = span_of(dt, count);
    MPI_Datatype dtd = cl_type(dt, fx.qin, NULL), bytes_t = MPI_DATATYPE_NULL, rtype = dtd;
    unsigned sseed = (unsigned)(2 * i + 1 + rank), rseed = (unsigned)(7 * i + 5);
    unsigned char *sdata = malloc(span), *want, *packed, *got;
    cl_mem s, r;
    MPI_Status st;
    int rcount = count;

    MPI_Pack_size(count, dt, comm, &psize);
    if (as_bytes) {
        MPI_Datatype c;
        MPI_Type_contiguous(psize, MPI_BYTE, &c);
        MPI_Type_commit(&c);
        bytes_t = cl_type(c, fx.qin, NULL);
        MPI_Type_free(&c);
        rtype = bytes_t;
        rcount = 1;
    }
    fill_pattern(sdata, span, sseed);
    s = fx_buf(span, sdata);
    want = malloc(span + (size_t)psize + 1);
    fill_pattern(want, span + (size_t)psize + 1, rseed);
    r = fx_buf(span + (size_t)psize + 1, want);
    if (op == OP_SENDRECV) {
        bad += mpi_bad(MPI_Sendrecv(s, count, dtd, peer, TAG, r, rcount, rtype, peer, TAG, comm, &st), "MPI_Sendrecv");
        sseed = (unsigned)(2 * i + 1 + peer);
    } else if (rank == sender) {
        bad += mpi_bad(send_op(op, s, count, dtd, peer, TAG, comm), op_name[op]);
    } else {
        bad += mpi_bad(recv_op(op, i, r, rcount, rtype, peer, i % 4 == 1, TAG, comm, &st), "receive");
        sseed = (unsigned)(2 * i + 1 + peer);
    }
    if (!bad && (op == OP_SENDRECV || rank != sender)) {
        /* the oracle: host MPI_Pack of the sender's bytes, unpacked */
        packed = malloc((size_t)psize + 1);
        got = malloc(span + (size_t)psize + 1);
        fill_pattern(sdata, span, sseed);
        MPI_Pack(sdata, count, dt, packed, psize, &pos, comm);
        if (!as_bytes) {
            pos = 0;
            MPI_Unpack(packed, psize, &pos, want, count, dt, comm);
        } else {
            memcpy(want, packed, (size_t)psize);
        }
        fx_read(r, span + (size_t)psize + 1, got);
        if ((as_bytes || !overlapping_dt(dt, count)) && memcmp(got, want, span + (size_t)psize + 1) != 0) {
            size_t k = 0;
            while (got[k] == want[k]) k++;
            fprintf(stderr, "rank %d: received bytes differ from the oracle's at byte %zu of %zu (span %zu)%s\n",
                    rank, k, span + (size_t)psize + 1, span,
                    engine_agrees(dt, count, sdata, packed, psize)
                        ? " (the engine's host pack agrees with MPI_Pack)"
                        : " (the engine's host pack disagrees with MPI_Pack too: a datatype engine fault)");
            bad++;
        }
        MPI_Get_count(&st, rtype, &n);
        if (st.MPI_SOURCE != peer || st.MPI_TAG != TAG || n != rcount) {
            fprintf(stderr, "rank %d: status source %d tag %d count %d, expected %d %d %d\n", rank, st.MPI_SOURCE,
                    st.MPI_TAG, n, peer, TAG, rcount);
            bad++;
        }
        free(packed);
        free(got);
    }
    clReleaseMemObject(s);
    clReleaseMemObject(r);
    MPI_Type_free(&dtd);
    if (bytes_t != MPI_DATATYPE_NULL) MPI_Type_free(&bytes_t);
    free(sdata);
    free(want);
    return bad;
}

static void random_corpus(void **state)
{
    uint64_t seed = mpiacc_test_seed(), st = seed ^ 0xd1ec7;
    const char *e = getenv("MPIACC_TEST_NTYPES");
    long n = e ? atol(e) : 400, nbad = 0;
    long e0 = count_of(MPIACC_PROTO_N_EAGER_SENT) + count_of(MPIACC_PROTO_N_EAGER_RECV);
    long p0 = count_of(MPIACC_PROTO_N_PIPE_SENT) + count_of(MPIACC_PROTO_N_PIPE_RECV);
    tg_src_t src = {.state = seed, .max_size = 1 << 14, .max_span = 1 << 16};

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (long i = 0; i < n; i++) {
        int count = 1 + (int)(mpiacc_test_rand(&st) % 3), bad;
        MPI_Datatype raw, dt = random_placed(&src, count, &raw);
        wd_step("corpus message", 0);
        bad = one_message(i, dt, count);
        if (bad) {
            int size = 0;
            MPI_Type_size(dt, &size);
            fprintf(stderr, "rank %d: random type %ld (%s, size %d), count %d, %s: %d failed check(s)\n", rank, i,
                    tg_combiner_name(raw), size, count, op_name[i % NOPS], bad);
            nbad++;
        }
        MPI_Type_free(&dt);
        tg_free(&raw);
    }
    MPI_Allreduce(MPI_IN_PLACE, &nbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    assert_int_equal(nbad, 0);
    if (rank == 0)
        printf("corpus: %ld messages, %ld eager and %ld pipelined messages so far on rank 0\n", n,
               count_of(MPIACC_PROTO_N_EAGER_SENT) + count_of(MPIACC_PROTO_N_EAGER_RECV),
               count_of(MPIACC_PROTO_N_PIPE_SENT) + count_of(MPIACC_PROTO_N_PIPE_RECV));
    /* both protocols carried part of it (every message counts on both sides) */
    assert_true(count_of(MPIACC_PROTO_N_EAGER_SENT) + count_of(MPIACC_PROTO_N_EAGER_RECV) > e0);
    assert_true(count_of(MPIACC_PROTO_N_PIPE_SENT) + count_of(MPIACC_PROTO_N_PIPE_RECV) > p0);
}

/* ---- semantics ---------------------------------------------------------------- */

/* Sizes around the protocols: empty, eager, pipelined with many chunks. */
static const int sizes[] = {1, 100, 511, 4000, 20000};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

/* Tags received in another order than sent, a wildcard receive, and
 * non-overtaking across eager and pipelined messages of one tag. */
static void tags_wildcards_order(void **state)
{
    MPI_Datatype t[NSIZES];
    cl_mem m[NSIZES];
    MPI_Request r[2 * NSIZES];
    MPI_Status st[2 * NSIZES];
    for (int k = 0; k < NSIZES; k++) t[k] = cl_ints(sizes[k], fx.qin, NULL);
    if (rank == 0) {
        for (int k = 0; k < NSIZES; k++) m[k] = ints_buf(sizes[k], 1000 * k);
        /* distinct tags, then the same tag in size order */
        for (int k = 0; k < NSIZES; k++) assert_int_equal(MPI_Isend(m[k], 1, t[k], 1, 100 + k, comm, &r[k]), 0);
        for (int k = 0; k < NSIZES; k++)
            assert_int_equal(MPI_Isend(m[k], 1, t[k], 1, 50, comm, &r[NSIZES + k]), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(2 * NSIZES, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    } else {
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k] + 8;
            int *init = malloc((size_t)n * sizeof *init);
            for (int i = 0; i < n; i++) init[i] = -1;
            m[k] = fx_buf((size_t)n * sizeof *init, init);
            free(init);
        }
        /* tags in reverse order; the last one by MPI_ANY_TAG */
        for (int k = NSIZES - 1; k >= 0; k--)
            assert_int_equal(MPI_Irecv(m[k], 1, t[k], 0, k == 0 ? MPI_ANY_TAG : 100 + k, comm, &r[k]), 0);
        assert_int_equal(MPI_Waitall(NSIZES, r, st), MPI_SUCCESS);
        for (int k = 0; k < NSIZES; k++) {
            assert_int_equal(st[k].MPI_TAG, 100 + k);
            check_ints(m[k], sizes[k], 1000 * k, 8);
        }
        /* same tag: order kept whatever the protocol; wildcard source */
        for (int k = 0; k < NSIZES; k++)
            assert_int_equal(MPI_Irecv(m[k], 1, t[k], MPI_ANY_SOURCE, 50, comm, &r[k]), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(NSIZES, r, st), MPI_SUCCESS);
        for (int k = 0; k < NSIZES; k++) {
            assert_int_equal(st[k].MPI_SOURCE, 0);
            check_ints(m[k], sizes[k], 1000 * k, 8);
        }
    }
    for (int k = 0; k < NSIZES; k++) {
        clReleaseMemObject(m[k]);
        MPI_Type_free(&t[k]);
    }
}

/* The status of a truncated receive: the message's source and tag, and
 * the bytes written (none when MPI itself truncated the first message). */
static void check_truncated_status(const MPI_Status *st, int tag, MPI_Count written)
{
    MPI_Count n = -1;
    assert_int_equal(st->MPI_SOURCE, 0);
    assert_int_equal(st->MPI_TAG, tag);
    MPI_Get_count_c(st, MPI_BYTE, &n);
    assert_int_equal(n, written);
}

/* Longer than the receive: MPI_ERR_TRUNCATE, nothing beyond the receive
 * written, and the part that fits written (pipelined messages, and eager
 * ones up to the inline size; MPI itself truncates longer eager ones); the
 * send succeeds; the status names the message and counts what was written.
 * Eager and pipelined (with MPIACC_EAGER_MAX=64K, --truncation: an eager
 * message MPI truncates). */
static void truncation(void **state)
{
    static const int want[] = {300, 6000};
    for (int k = 0; k < 2; k++) {
        int n = want[k], rn = n / 2 - 3;
        MPI_Count bytes = (MPI_Count)n * 4;
        int fits = bytes > mpiacc_proto_comm_lookup(comm)->eager_max || bytes <= MPIACC_WIRE_RTS_INLINE_MAX;
        MPI_Datatype ts = cl_ints(n, fx.qin, NULL), tr = cl_ints(rn, fx.qin, NULL);
        MPI_Status st;
        MPI_Request r;
        if (rank == 0) {
            cl_mem m = ints_buf(n, 7);
            assert_int_equal(MPI_Send(m, 1, ts, 1, 20 + k, comm), MPI_SUCCESS);
            assert_int_equal(MPI_Isend(m, 1, ts, 1, 30 + k, comm, &r), MPI_SUCCESS);
            assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
            clReleaseMemObject(m);
        } else {
            int *init = malloc((size_t)n * sizeof *init);
            cl_mem m, m2;
            for (int i = 0; i < n; i++) init[i] = -1;
            m = fx_buf((size_t)n * sizeof *init, init);
            m2 = fx_buf((size_t)n * sizeof *init, init);
            assert_int_equal(err_class(MPI_Recv(m, 1, tr, 0, 20 + k, comm, &st)), MPI_ERR_TRUNCATE);
            check_ints(m, fits ? rn : 0, 7, fits ? n - rn : n);
            check_truncated_status(&st, 20 + k, fits ? (MPI_Count)rn * 4 : 0);
            assert_int_equal(MPI_Irecv(m2, 1, tr, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r), MPI_SUCCESS);
            assert_int_equal(err_class(MPI_Wait(&r, &st)), MPI_ERR_TRUNCATE);
            check_ints(m2, fits ? rn : 0, 7, fits ? n - rn : n);
            check_truncated_status(&st, 30 + k, fits ? (MPI_Count)rn * 4 : 0);
            clReleaseMemObject(m);
            clReleaseMemObject(m2);
            free(init);
        }
        MPI_Type_free(&ts);
        MPI_Type_free(&tr);
    }
    MPI_Barrier(comm);
}

/* A posted receive cancelled: completes cancelled, buffer untouched; the
 * message goes to the next receive.  Eager and pipelined. */
static void cancel_receive(void **state)
{
    for (int k = 0; k < 2; k++) {
        int n = k ? 5000 : 50, flag = 0;
        MPI_Datatype t = cl_ints(n, fx.qin, NULL);
        MPI_Request r;
        MPI_Status st;
        if (rank == 1) {
            cl_mem m = ints_buf(n, -1000000), m2 = ints_buf(n, -1000000);
            assert_int_equal(MPI_Irecv(m, 1, t, 0, 60, comm, &r), MPI_SUCCESS);
            assert_int_equal(MPI_Cancel(&r), MPI_SUCCESS);
            assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
            MPI_Test_cancelled(&st, &flag);
            assert_true(flag);
            MPI_Barrier(comm);
            assert_int_equal(MPI_Recv(m2, 1, t, 0, 60, comm, &st), MPI_SUCCESS);
            MPI_Test_cancelled(&st, &flag);
            assert_false(flag);
            check_ints(m, n, -1000000, 0);
            check_ints(m2, n, 3, 0);
            clReleaseMemObject(m);
            clReleaseMemObject(m2);
        } else {
            cl_mem m = ints_buf(n, 3);
            MPI_Barrier(comm);
            assert_int_equal(MPI_Send(m, 1, t, 1, 60, comm), MPI_SUCCESS);
            clReleaseMemObject(m);
        }
        MPI_Type_free(&t);
    }
}

/* An empty device message still travels (and matches a device receive);
 * MPI_PROC_NULL sends nothing. */
static void empty_and_proc_null(void **state)
{
    MPI_Datatype t = cl_ints(8, fx.qin, NULL);
    cl_mem m = ints_buf(8, 0);
    MPI_Status st;
    int n = -1;
    long e0 = count_of(MPIACC_PROTO_N_EAGER_SENT);
    assert_int_equal(MPI_Send(m, 1, t, MPI_PROC_NULL, 1, comm), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(m, 1, t, MPI_PROC_NULL, 1, comm, &st), MPI_SUCCESS);
    assert_int_equal(st.MPI_SOURCE, MPI_PROC_NULL);
    assert_int_equal(count_of(MPIACC_PROTO_N_EAGER_SENT), e0);
    if (rank == 0) {
        assert_int_equal(MPI_Send(m, 0, t, 1, 15, comm), MPI_SUCCESS);
        assert_int_equal(count_of(MPIACC_PROTO_N_EAGER_SENT), e0 + 1);
    } else {
        assert_int_equal(MPI_Recv(m, 1, t, 0, MPI_ANY_TAG, comm, &st), MPI_SUCCESS);
        MPI_Get_count(&st, t, &n);
        assert_int_equal(n, 0);
        assert_int_equal(st.MPI_TAG, 15);
        check_ints(m, 8, 0, 0);
    }
    clReleaseMemObject(m);
    MPI_Type_free(&t);
}

/* Host and device messages between the same pair with the same tag: each
 * kind of receive gets its own kind of message, in order. */
static void host_and_device(void **state)
{
    MPI_Datatype t = cl_ints(3000, fx.qin, NULL);
    int hv[4] = {1, 2, 3, 4}, hg[4];
    MPI_Request r[4];
    MPI_Status st;
    if (rank == 0) {
        cl_mem a = ints_buf(3000, 10), b = ints_buf(3000, 20);
        assert_int_equal(MPI_Isend(a, 1, t, 1, 70, comm, &r[0]), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(hv, 4, MPI_INT, 1, 70, comm, &r[1]), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(b, 1, t, 1, 70, comm, &r[2]), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(3, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    } else {
        cl_mem a = ints_buf(3000, 0), b = ints_buf(3000, 0);
        /* the host receive, posted first with wildcards, gets the host message */
        assert_int_equal(MPI_Recv(hg, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st), MPI_SUCCESS);
        assert_memory_equal(hg, hv, sizeof hv);
        assert_int_equal(MPI_Recv(a, 1, t, 0, 70, comm, &st), MPI_SUCCESS);
        assert_int_equal(MPI_Recv(b, 1, t, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st), MPI_SUCCESS);
        check_ints(a, 3000, 10, 0);
        check_ints(b, 3000, 20, 0);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    }
    MPI_Type_free(&t);
}

/* A failed dependency (an OpenCL user event set to an error) on either
 * side: both requests complete with an error, eager and pipelined (an
 * eager send completes when MPI has its bytes: a receiver's failure is the
 * receive's alone). */
static void failure_completes_both(void **state)
{
    for (int k = 0; k < 4; k++) {
        int n = k % 2 ? 5000 : 100, failing = k / 2; /* rank that fails */
        int piped = (MPI_Count)n * 4 > mpiacc_proto_comm_lookup(comm)->eager_max;
        cl_int e;
        cl_event bad = clCreateUserEvent(fx.ctx, &e);
        MPI_Datatype t = cl_ints(n, fx.qin, rank == failing ? bad : NULL);
        cl_mem m = ints_buf(n, 0);
        MPI_Request r;
        MPI_Status st;
        int err;
        clSetUserEventStatus(bad, -1);
        if (rank == 0) assert_int_equal(MPI_Isend(m, 1, t, 1, 80 + k, comm, &r), MPI_SUCCESS);
        else assert_int_equal(MPI_Irecv(m, 1, t, 0, 80 + k, comm, &r), MPI_SUCCESS);
        err = MPI_Wait(&r, &st);
        if (rank == failing || piped || rank == 1) assert_int_equal(err_class(err), MPI_ERR_OTHER);
        else assert_int_equal(err, MPI_SUCCESS);
        clReleaseMemObject(m);
        clReleaseEvent(bad);
        MPI_Type_free(&t);
    }
    MPI_Barrier(comm);
}

/* MPI_THREAD_MULTIPLE: 4 threads per rank, each with its own queue and
 * tag, eager and pipelined messages. */
#define NTHREADS 4
static void *thread_main(void *p)
{
    long id = (long)p, bad = 0;
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(fx.ctx, fx.dev, 0, &e);
    for (int it = 0; it < 12 && !bad; it++) {
        int n = it % 3 ? 700 * (int)(id + 1) : 40, *got = malloc((size_t)n * sizeof *got);
        MPI_Datatype t = cl_ints(n, q, NULL);
        int *v = malloc((size_t)n * sizeof *v);
        cl_mem s, r;
        MPI_Request rq[2];
        for (int i = 0; i < n; i++) v[i] = rank * 1000000 + (int)id * 10000 + it * 100 + i;
        s = clCreateBuffer(fx.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (size_t)n * sizeof *v, v, &e);
        r = clCreateBuffer(fx.ctx, CL_MEM_READ_WRITE, (size_t)n * sizeof *v, NULL, &e);
        bad += MPI_Irecv(r, 1, t, peer, (int)id, comm, &rq[0]) != MPI_SUCCESS;
        bad += MPI_Isend(s, 1, t, peer, (int)id, comm, &rq[1]) != MPI_SUCCESS;
        bad += MPI_Waitall(2, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS;
        clEnqueueReadBuffer(q, r, CL_TRUE, 0, (size_t)n * sizeof *got, got, 0, NULL, NULL);
        for (int i = 0; i < n && !bad; i++)
            bad += got[i] != peer * 1000000 + (int)id * 10000 + it * 100 + i;
        clReleaseMemObject(s);
        clReleaseMemObject(r);
        MPI_Type_free(&t);
        free(v);
        free(got);
    }
    clReleaseCommandQueue(q);
    return (void *)bad;
}

static void threads(void **state)
{
    pthread_t th[NTHREADS];
    long bad = 0;
    void *res;
    int level;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) skip();
    for (long i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], &res);
        bad += (long)res;
    }
    assert_int_equal(bad, 0);
}

/* The direct protocol's arrows of the state machine (src/reqpool/op.c),
 * counted in mpiacc_rp_transitions: one eager, one pipelined message, and
 * a sender failure of each. */
static long tr(int from, int to) { return atomic_load(&mpiacc_rp_transitions[from][to]); }

static void transitions(void **state)
{
    enum { S_NEW = MPIACC_RP_NEW, S_READY = MPIACC_RP_READY, S_FLIGHT = MPIACC_RP_IN_FLIGHT,
           S_PACK = MPIACC_RP_PACKING, S_UNPACK = MPIACC_RP_UNPACKING, S_STREAM = MPIACC_RP_STREAMING,
           S_FIN = MPIACC_RP_WAIT_FIN, S_CLOSE = MPIACC_RP_CLOSING, S_DONE = MPIACC_RP_DONE,
           S_ERR = MPIACC_RP_T_ERROR };
    MPI_Count emax = mpiacc_proto_comm_lookup(comm)->eager_max;
    int small = (int)(emax / 8), large = (int)(emax / 2) + 1000;
    for (int k = 0; k < 4; k++) {
        int n = k % 2 ? large : small, fails = k >= 2;
        cl_int e;
        cl_event bad = clCreateUserEvent(fx.ctx, &e);
        MPI_Datatype t = cl_ints(n, fx.qin, rank == 0 && fails ? bad : NULL);
        cl_mem m = ints_buf(n, 0);
        long a[12];
        const int arrows[12][2] = {{S_NEW, S_PACK},   {S_PACK, S_READY},  {S_READY, S_FLIGHT}, {S_FLIGHT, S_DONE},
                                   {S_FLIGHT, S_UNPACK}, {S_UNPACK, S_DONE}, {S_READY, S_STREAM}, {S_STREAM, S_FIN},
                                   {S_FIN, S_DONE},   {S_FLIGHT, S_STREAM}, {S_STREAM, S_CLOSE}, {S_CLOSE, S_DONE}};
        long want[12] = {0};
        int err;
        for (int i = 0; i < 12; i++) a[i] = tr(arrows[i][0], arrows[i][1]);
        long n_ready = tr(S_NEW, S_READY), n_ferr = tr(S_FLIGHT, S_ERR), n_fin_err = tr(S_FIN, S_ERR),
             n_close_err = tr(S_CLOSE, S_ERR);
        clSetUserEventStatus(bad, -1);
        if (rank == 0) err = MPI_Send(m, 1, t, 1, 90 + k, comm);
        else err = MPI_Recv(m, 1, t, 0, 90 + k, comm, MPI_STATUS_IGNORE);
        assert_int_equal(err_class(err), fails ? MPI_ERR_OTHER : MPI_SUCCESS);
        if (rank == 0 && !(k % 2)) { /* eager send */
            if (!fails) want[0] = want[1] = want[2] = want[3] = 1;
            else want[2] = 1;
        } else if (rank == 0) {      /* pipelined send */
            want[6] = want[7] = 1;
            want[8] = !fails;
        } else if (!(k % 2)) {       /* eager receive */
            want[4] = want[5] = !fails;
        } else {                     /* pipelined receive */
            want[9] = want[10] = 1;
            want[11] = !fails;
        }
        for (int i = 0; i < 12; i++)
            if (tr(arrows[i][0], arrows[i][1]) - a[i] != want[i])
                fail_msg("case %d rank %d: arrow %d -> %d taken %ld times, expected %ld", k, rank, arrows[i][0],
                         arrows[i][1], tr(arrows[i][0], arrows[i][1]) - a[i], want[i]);
        if (rank == 0 && fails && !(k % 2)) { /* the ABORT: at call time, then ERROR after sending it */
            assert_int_equal(tr(S_NEW, S_READY) - n_ready, 1);
            assert_int_equal(tr(S_FLIGHT, S_ERR) - n_ferr, 1);
        }
        if (rank == 0 && fails && k % 2) assert_int_equal(tr(S_FIN, S_ERR) - n_fin_err, 1);
        if (rank == 1 && fails && k % 2) assert_int_equal(tr(S_CLOSE, S_ERR) - n_close_err, 1);
        if (rank == 1 && fails && !(k % 2)) assert_int_equal(tr(S_FLIGHT, S_ERR) - n_ferr, 1);
        clReleaseMemObject(m);
        clReleaseEvent(bad);
        MPI_Type_free(&t);
        MPI_Barrier(comm);
    }
}

/* An operation's error raised by MPI_Wait / MPI_Test goes to the user's
 * communicator's handler (never the hidden communicators'), eager and
 * pipelined: the receive fails (a failed dependency) while it is pending. */
static int handler_calls;
static void count_handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
    handler_calls++;
}

static void errors_on_user_comm(void **state)
{
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    for (int k = 0; k < 4; k++) {
        int n = k % 2 ? 5000 : 100, use_test = k / 2, flag = 0, err, calls = handler_calls;
        cl_int e;
        cl_event bad = clCreateUserEvent(fx.ctx, &e);
        MPI_Datatype t = cl_ints(n, fx.qin, rank == 1 ? bad : NULL);
        cl_mem m = ints_buf(n, 0);
        MPI_Request r;
        clSetUserEventStatus(bad, -1);
        if (rank == 0) assert_int_equal(MPI_Isend(m, 1, t, 1, 90 + k, comm, &r), MPI_SUCCESS);
        else assert_int_equal(MPI_Irecv(m, 1, t, 0, 90 + k, comm, &r), MPI_SUCCESS);
        if (use_test) {
            do err = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            while (err == MPI_SUCCESS && !flag);
        } else {
            err = MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        if (rank == 1 || n * 4 > mpiacc_proto_comm_lookup(comm)->eager_max) {
            assert_int_equal(err_class(err), MPI_ERR_OTHER);
            assert_int_equal(handler_calls, calls + 1);
        } else {
            assert_int_equal(err, MPI_SUCCESS);
        }
        clReleaseMemObject(m);
        clReleaseEvent(bad);
        MPI_Type_free(&t);
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    MPI_Barrier(comm);
}

/* Without the assertion nothing changes: a plain communicator's device
 * messages take the staged protocol. */
static void plain_comm_unchanged(void **state)
{
    MPI_Comm plain;
    MPI_Info info;
    MPI_Datatype t = cl_ints(5000, fx.qin, NULL);
    cl_mem m = ints_buf(5000, rank ? 0 : 44);
    long e0 = count_of(MPIACC_PROTO_N_EAGER_SENT) + count_of(MPIACC_PROTO_N_PIPE_SENT) +
              count_of(MPIACC_PROTO_N_EAGER_RECV) + count_of(MPIACC_PROTO_N_PIPE_RECV);
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIACC_DIRECT_INFO, "false");
    MPI_Comm_dup_with_info(comm, info, &plain);
    MPI_Info_free(&info);
    if (rank == 0) assert_int_equal(MPI_Send(m, 1, t, 1, 1, plain), MPI_SUCCESS);
    else assert_int_equal(MPI_Recv(m, 1, t, 0, 1, plain, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (rank == 1) check_ints(m, 5000, 44, 0);
    assert_int_equal(count_of(MPIACC_PROTO_N_EAGER_SENT) + count_of(MPIACC_PROTO_N_PIPE_SENT) +
                         count_of(MPIACC_PROTO_N_EAGER_RECV) + count_of(MPIACC_PROTO_N_PIPE_RECV),
                     e0);
    MPI_Comm_free(&plain);
    clReleaseMemObject(m);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_and_proc_null),  cmocka_unit_test(tags_wildcards_order),
        cmocka_unit_test(truncation),           cmocka_unit_test(cancel_receive),
        cmocka_unit_test(host_and_device),      cmocka_unit_test(failure_completes_both),
        cmocka_unit_test(errors_on_user_comm),
        cmocka_unit_test(threads),              cmocka_unit_test(plain_comm_unchanged),
        cmocka_unit_test(transitions),
        cmocka_unit_test(random_corpus),
    };
    const struct CMUnitTest only_truncation[] = {cmocka_unit_test(truncation)};
    int failed, trunc = 0;
    for (int i = 1; i < argc; i++) {
        use_world |= !strcmp(argv[i], "--world");
        trunc |= !strcmp(argv[i], "--truncation");
    }
    fx_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    if (use_world) {
        comm = MPI_COMM_WORLD;
    } else {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
        MPI_Info_free(&info);
    }
    if (!mpiacc_proto_comm_lookup(comm)) {
        fprintf(stderr, "the test communicator is not direct\n");
        return 1;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    failed = trunc ? MPIACC_TEST_RUN("direct_ocl_truncation", only_truncation, NULL, NULL)
                   : MPIACC_TEST_RUN("direct_ocl", tests, NULL, NULL);
    if (!use_world) MPI_Comm_free(&comm);
    fx_fini();
    return failed ? 1 : 0;
}
