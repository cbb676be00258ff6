#define _POSIX_C_SOURCE 200809L
/*
 * The IPC protocol's message flow without a GPU (2 ranks, PoCL in CI).
 * OpenCL has no IPC, so this test gives the protocol a stand-in IPC table
 * for OpenCL buffers (mpiacc_proto_dx_ipc_test_table): its export copies
 * the touched bytes of the cl_mem into a POSIX shared-memory segment (after
 * the data dependency, on the host), its import reads them through the
 * sender's datatype blob (mpiacc_tv_offset) and unpacks them with the
 * OpenCL backend into the receiver's buffer.  What runs is the protocol's:
 * RTS_IPC with the export and the blob (inline, or as a BLOB follow-up for
 * a large blob), FIN, export_release, truncation, wildcards, cancel, and
 * every fallback — the export refused (pipelined), the receiver without IPC
 * or its import refused (CTS_PIPE, then pipelined), a copy that fails on
 * the device (both requests complete with an error).  The phase
 * timestamps of bench/pingpong --breakdown (src/core/tstamp.h) are checked
 * here too: every phase of one message passed, in order, and none when off.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ocl_fixture.h"
#include "ocl_types.h"
#include "core/backend_ipc.h"
#include "core/tstamp.h"
#include "protocol/direct.h"
#include "reqpool/reqpool.h"

static int rank, peer;
static MPI_Comm comm;

/* ---- the stand-in IPC table -------------------------------------------------- */

enum { FAKE_OK, FAKE_NO_EXPORT, FAKE_IMPORT_REFUSES, FAKE_COPY_FAILS };
static int mode;
static long exports, releases, imports, next_seg;
static void *held_packed[64]; /* host bytes of copies left pending (FAKE_COPY_FAILS) */
static int nheld;

static void seg_name(char *out, size_t len, uint64_t owner, uint64_t id)
{
    snprintf(out, len, "/mpiacc_test_ipc_%llu_%llu", (unsigned long long)owner, (unsigned long long)id);
}

static void wait_handle(void *h)
{
    int done = 0;
    while (h && !done && fx.be->test(h, &done) == MPI_SUCCESS) {}
}

static int fake_export(const mpiacc_attrs_t *a, void *dep, void *buf, MPI_Aint lo, MPI_Aint hi,
                       mpiacc_ipc_export_t *x, void **token, int *ok)
{
    char name[96];
    int fd;
    void *p;
    *ok = 0;
    if (mode == FAKE_NO_EXPORT) return MPI_SUCCESS;
    wait_handle(dep); /* a real export records an event instead */
    memset(x, 0, sizeof *x);
    x->owner = (uint64_t)getpid();
    x->buffer_id = (uint64_t)next_seg++;
    x->lo = lo;
    x->hi = hi;
    x->alloc_bytes = (uint64_t)(hi - lo);
    seg_name(name, sizeof name, x->owner, x->buffer_id);
    fd = shm_open(name, O_CREAT | O_RDWR | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, hi - lo) != 0) return MPI_ERR_OTHER;
    p = mmap(NULL, (size_t)(hi - lo), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return MPI_ERR_OTHER;
    clEnqueueReadBuffer(fx.qin, (cl_mem)buf, CL_TRUE, (size_t)lo, (size_t)(hi - lo), p, 0, NULL, NULL);
    munmap(p, (size_t)(hi - lo));
    *token = (void *)(intptr_t)(x->buffer_id + 1);
    exports++;
    *ok = 1;
    return MPI_SUCCESS;
}

static void fake_release(void *token)
{
    char name[96];
    seg_name(name, sizeof name, (uint64_t)getpid(), (uint64_t)(intptr_t)token - 1);
    shm_unlink(name);
    releases++;
}

static int fake_import(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *x, const void *blob,
                       size_t blob_bytes, MPI_Count src_count, const mpiacc_xfer_desc_t *d, void **xfer)
{
    char name[96];
    int fd, err;
    const unsigned char *src;
    unsigned char *packed;
    mpiacc_xfer_desc_t d2 = *d;
    void *gate_dep = NULL;
    cl_event gate = NULL;

    *xfer = NULL;
    if (mode == FAKE_IMPORT_REFUSES) return MPI_ERR_OTHER;
    seg_name(name, sizeof name, x->owner, x->buffer_id);
    if ((fd = shm_open(name, O_RDONLY, 0)) < 0) return MPI_ERR_OTHER;
    src = mmap(NULL, (size_t)x->alloc_bytes, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (src == MAP_FAILED) return MPI_ERR_OTHER;
    packed = malloc((size_t)(d->last - d->first) + 1);
    for (MPI_Count p = d->first; p < d->last; p++)
        packed[p - d->first] = src[mpiacc_tv_offset(blob, p) - x->lo];
    munmap((void *)src, (size_t)x->alloc_bytes);
    imports++;
    d2.host = packed;
    if (mode == FAKE_COPY_FAILS) {
        /* the copy waits for an event that then fails: test() reports it */
        mpiacc_attrs_t ga = *a;
        cl_int e;
        gate = clCreateUserEvent(fx.ctx, &e);
        ga.event = gate;
        ga.has_event = 1;
        fx.be->capture(&ga, d->buf, &gate_dep);
        err = fx.be->unpack(a, gate_dep, &d2, xfer);
        /* let PoCL's workers take in the enqueue before the failure
         * propagates: failing the event at once was seen to abort inside
         * PoCL's event locking about once in 400 runs */
        nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 2000000}, NULL);
        clSetUserEventStatus(gate, -1);
        clReleaseEvent(gate);
        fx.be->release(gate_dep);
        held_packed[nheld++ % 64] = packed;
        return err;
    }
    err = fx.be->unpack(a, dep, &d2, xfer);
    wait_handle(*xfer); /* packed is freed below */
    if (*xfer) fx.be->release(*xfer);
    *xfer = NULL;
    free(packed);
    return err;
}

static void fake_stats(mpiacc_ipc_stats_t *s) { memset(s, 0, sizeof *s); }

static const struct mpiacc_backend_ipc fake = {
    .export_buf = fake_export, .export_release = fake_release, .import_copy = fake_import, .stats = fake_stats};

/* ---- helpers ------------------------------------------------------------------- */

static long cnt(mpiacc_proto_count_t c) { return atomic_load(&mpiacc_proto_direct_count[c]); }

/* Transitions of the state machine (src/reqpool/op.c) taken so far. */
static long tr(int from, int to) { return atomic_load(&mpiacc_rp_transitions[from][to]); }
enum { S_READY = MPIACC_RP_READY, S_FLIGHT = MPIACC_RP_IN_FLIGHT, S_STREAM = MPIACC_RP_STREAMING,
       S_FIN = MPIACC_RP_WAIT_FIN, S_COPY = MPIACC_RP_COPYING, S_CLOSE = MPIACC_RP_CLOSING, S_DONE = MPIACC_RP_DONE,
       S_ERR = MPIACC_RP_T_ERROR };

static int err_class(int err)
{
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
    return cls;
}

/* Sends n ints (v0 + i) from rank 0 to rank 1 with the given tag; rank 1
 * receives rn ints and returns the received values' check; *err gets each
 * side's completion code. */
static void exchange(int n, int rn, int v0, int tag, int src, int rtag, int *err, int check)
{
    MPI_Datatype ts = cl_ints(n, fx.qin, NULL), tr = cl_ints(rn, fx.qin, NULL);
    int *h = malloc((size_t)(n > rn ? n : rn) * sizeof *h);
    MPI_Request r;
    MPI_Status st;
    cl_mem m;
    if (rank == 0) {
        for (int i = 0; i < n; i++) h[i] = v0 + i;
        m = fx_buf((size_t)n * sizeof *h, h);
        *err = MPI_Isend(m, 1, ts, 1, tag, comm, &r);
    } else {
        for (int i = 0; i < rn; i++) h[i] = -1;
        m = fx_buf((size_t)rn * sizeof *h, h);
        *err = MPI_Irecv(m, 1, tr, src, rtag, comm, &r);
    }
    if (*err == MPI_SUCCESS) *err = MPI_Wait(&r, &st);
    if (rank == 1 && check) {
        int w = n < rn ? n : rn;
        fx_read(m, (size_t)rn * sizeof *h, h);
        for (int i = 0; i < rn; i++)
            if (h[i] != (i < w ? v0 + i : -1)) fail_msg("int %d is %d, expected %d", i, h[i], i < w ? v0 + i : -1);
        if (*err == MPI_SUCCESS) {
            assert_int_equal(st.MPI_SOURCE, 0);
            assert_int_equal(st.MPI_TAG, tag);
        }
    }
    clReleaseMemObject(m);
    free(h);
    MPI_Type_free(&ts);
    MPI_Type_free(&tr);
}

/* ---- cases ------------------------------------------------------------------------ */

static void through_ipc(void **state)
{
    long s0 = cnt(MPIACC_PROTO_N_IPC_SENT), r0 = cnt(MPIACC_PROTO_N_IPC_RECV);
    long a0 = tr(S_READY, S_FIN), a1 = tr(S_FIN, S_DONE), b0 = tr(S_FLIGHT, S_COPY), b1 = tr(S_COPY, S_CLOSE),
         b2 = tr(S_CLOSE, S_DONE);
    int err;
    mode = FAKE_OK;
    exchange(5000, 5000, 11, 1, 0, 1, &err, 1);
    assert_int_equal(err, MPI_SUCCESS);
    /* wildcards */
    exchange(3000, 3000, 12, 2, MPI_ANY_SOURCE, MPI_ANY_TAG, &err, 1);
    assert_int_equal(err, MPI_SUCCESS);
    if (rank == 0) {
        assert_int_equal(cnt(MPIACC_PROTO_N_IPC_SENT), s0 + 2);
        assert_int_equal(tr(S_READY, S_FIN), a0 + 2);
        assert_int_equal(tr(S_FIN, S_DONE), a1 + 2);
    } else {
        assert_int_equal(cnt(MPIACC_PROTO_N_IPC_RECV), r0 + 2);
        assert_int_equal(tr(S_FLIGHT, S_COPY), b0 + 2);
        assert_int_equal(tr(S_COPY, S_CLOSE), b1 + 2);
        assert_int_equal(tr(S_CLOSE, S_DONE), b2 + 2);
    }
}

/* One IPC message with the timestamps on: each side passes its phases in
 * order (the fake import has no mapping / wait / launch marks of its own:
 * those are the CUDA backend's); with them off, nothing is marked. */
static void phase_marks(void **state)
{
    uint64_t v[MPIACC_TS_N];
    int err;
    static const int send_order[] = {MPIACC_TS_EXPORT_BEGIN, MPIACC_TS_EXPORT_END, MPIACC_TS_RTS_POSTED,
                                     MPIACC_TS_FIN_SEEN};
    static const int recv_order[] = {MPIACC_TS_RTS_SEEN, MPIACC_TS_IMPORT_BEGIN, MPIACC_TS_COPY_DONE,
                                     MPIACC_TS_FIN_POSTED};
    const int *order = rank == 0 ? send_order : recv_order;
    mode = FAKE_OK;
    mpiacc_ts_reset();
    mpiacc_ts_enable(1);
    exchange(5000, 5000, 21, 7, 0, 7, &err, 1);
    mpiacc_ts_enable(0);
    assert_int_equal(err, MPI_SUCCESS);
    mpiacc_ts_read(v);
    for (int i = 0; i < 4; i++) {
        if (!v[order[i]]) fail_msg("phase %s not marked", mpiacc_ts_name(order[i]));
        if (i && v[order[i]] < v[order[i - 1]])
            fail_msg("phase %s before %s", mpiacc_ts_name(order[i]), mpiacc_ts_name(order[i - 1]));
    }
    for (int i = 0; i < 4; i++) { /* the other side's phases are not this rank's */
        int other = rank == 0 ? recv_order[i] : send_order[i];
        if (v[other]) fail_msg("phase %s marked on rank %d", mpiacc_ts_name(other), rank);
    }
    mpiacc_ts_reset();
    exchange(5000, 5000, 22, 8, 0, 8, &err, 1);
    assert_int_equal(err, MPI_SUCCESS);
    mpiacc_ts_read(v);
    for (int i = 0; i < MPIACC_TS_N; i++)
        if (v[i]) fail_msg("phase %s marked while the timestamps are off", mpiacc_ts_name(i));
    assert_true(mpiacc_ts_now() > 0);
}

static void truncated(void **state)
{
    int err;
    mode = FAKE_OK;
    exchange(5000, 2222, 13, 3, 0, 3, &err, 1);
    assert_int_equal(err_class(err), rank == 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
}

/* A datatype whose blob does not fit the RTS: it follows as a BLOB. */
static void large_blob(void **state)
{
    enum { NB = 700 };
    int bl[NB], dp[NB], *h = malloc(4 * NB * sizeof *h), *g = malloc(4 * NB * sizeof *g);
    MPI_Datatype idx, t;
    mpiacc_pack_type_t *pt = NULL;
    MPI_Status st;
    cl_mem m;
    mode = FAKE_OK;
    for (int i = 0; i < NB; i++) bl[i] = 1 + i % 2, dp[i] = 4 * i + (i % 3);
    MPI_Type_indexed(NB, bl, dp, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    t = cl_type(idx, fx.qin, NULL);
    assert_int_equal(mpiacc_pack_type_get(t, &pt), MPI_SUCCESS);
    assert_true(pt->blob_bytes + sizeof(mpiacc_ipc_export_t) > MPIACC_WIRE_RTS_INLINE_MAX);
    mpiacc_pack_type_release(pt);
    for (int i = 0; i < 4 * NB; i++) h[i] = rank ? -1 : 7 * i;
    m = fx_buf(4 * NB * sizeof *h, h);
    if (rank == 0) {
        assert_int_equal(MPI_Send(m, 1, t, 1, 4, comm), MPI_SUCCESS);
    } else {
        assert_int_equal(MPI_Recv(m, 1, t, 0, 4, comm, &st), MPI_SUCCESS);
        fx_read(m, 4 * NB * sizeof *g, g);
        for (int i = 0, k = 0; i < 4 * NB; i++) {
            int in = k < NB && i >= dp[k] && i < dp[k] + bl[k];
            assert_int_equal(g[i], in ? 7 * i : -1);
            if (k < NB && i + 1 == dp[k] + bl[k]) k++;
        }
    }
    /* and declined with a blob apart: received, then pipelined */
    if (rank == 1) mpiacc_proto_dx_ipc_test_table(MPIACC_KIND_OPENCL, NULL);
    for (int i = 0; i < 4 * NB; i++) h[i] = rank ? -1 : 9 * i;
    clReleaseMemObject(m);
    m = fx_buf(4 * NB * sizeof *h, h);
    if (rank == 0) {
        assert_int_equal(MPI_Send(m, 1, t, 1, 5, comm), MPI_SUCCESS);
    } else {
        assert_int_equal(MPI_Recv(m, 1, t, 0, 5, comm, &st), MPI_SUCCESS);
        fx_read(m, 4 * NB * sizeof *g, g);
        for (int i = 0, k = 0; i < 4 * NB; i++) {
            int in = k < NB && i >= dp[k] && i < dp[k] + bl[k];
            assert_int_equal(g[i], in ? 9 * i : -1);
            if (k < NB && i + 1 == dp[k] + bl[k]) k++;
        }
        mpiacc_proto_dx_ipc_test_table(MPIACC_KIND_OPENCL, &fake);
    }
    clReleaseMemObject(m);
    MPI_Type_free(&t);
    MPI_Type_free(&idx);
    free(h);
    free(g);
}

static void export_refused(void **state)
{
    long f0 = cnt(MPIACC_PROTO_N_IPC_FALLBACK), p0 = cnt(MPIACC_PROTO_N_PIPE_RECV);
    int err;
    mode = rank == 0 ? FAKE_NO_EXPORT : FAKE_OK;
    exchange(4000, 4000, 14, 6, 0, 6, &err, 1);
    assert_int_equal(err, MPI_SUCCESS);
    if (rank == 0) assert_int_equal(cnt(MPIACC_PROTO_N_IPC_FALLBACK), f0 + 1);
    else assert_int_equal(cnt(MPIACC_PROTO_N_PIPE_RECV), p0 + 1);
}

/* The receiver has no IPC, or its import refuses: CTS_PIPE, pipelined. */
static void receiver_declines(void **state)
{
    long d0 = cnt(MPIACC_PROTO_N_IPC_DECLINED);
    long a0 = tr(S_FIN, S_STREAM), a1 = tr(S_STREAM, S_FIN), b0 = tr(S_FLIGHT, S_STREAM), b1 = tr(S_COPY, S_STREAM);
    int err;
    mode = FAKE_OK;
    if (rank == 1) mpiacc_proto_dx_ipc_test_table(MPIACC_KIND_OPENCL, NULL);
    exchange(4000, 4000, 15, 7, 0, 7, &err, 1);
    assert_int_equal(err, MPI_SUCCESS);
    if (rank == 0) assert_int_equal(tr(S_FIN, S_STREAM), a0 + 1); /* CTS_PIPE: streamed */
    if (rank == 0) assert_int_equal(tr(S_STREAM, S_FIN), a1 + 1);
    if (rank == 1) assert_int_equal(tr(S_FLIGHT, S_STREAM), b0 + 1); /* declined at once */
    if (rank == 1) mpiacc_proto_dx_ipc_test_table(MPIACC_KIND_OPENCL, &fake);
    mode = rank == 1 ? FAKE_IMPORT_REFUSES : FAKE_OK;
    exchange(4000, 3000, 16, 8, 0, 8, &err, 1); /* truncated on the way */
    assert_int_equal(err_class(err), rank == 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    if (rank == 1) assert_int_equal(cnt(MPIACC_PROTO_N_IPC_DECLINED), d0 + 2);
    if (rank == 1) assert_int_equal(tr(S_COPY, S_STREAM), b1 + 1); /* the import refused */
}

/* The copy fails on the device: both requests complete with an error. */
static void copy_fails(void **state)
{
    int err;
    long a0 = tr(S_FIN, S_ERR), b0 = tr(S_CLOSE, S_ERR);
    mode = rank == 1 ? FAKE_COPY_FAILS : FAKE_OK;
    exchange(4000, 4000, 17, 9, 0, 9, &err, 0);
    assert_int_equal(err_class(err), MPI_ERR_OTHER);
    if (rank == 0) assert_int_equal(tr(S_FIN, S_ERR), a0 + 1);
    else assert_int_equal(tr(S_CLOSE, S_ERR), b0 + 1);
    MPI_Barrier(comm);
}

/* A cancelled receive, then the message goes to the next one. */
static void cancel_then_receive(void **state)
{
    int err, flag = 0;
    MPI_Datatype t = cl_ints(4000, fx.qin, NULL);
    MPI_Request r;
    MPI_Status st;
    mode = FAKE_OK;
    if (rank == 1) {
        cl_mem m = fx_buf(16000, NULL);
        assert_int_equal(MPI_Irecv(m, 1, t, 0, 10, comm, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Cancel(&r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        MPI_Test_cancelled(&st, &flag);
        assert_true(flag);
        clReleaseMemObject(m);
    }
    MPI_Barrier(comm);
    exchange(4000, 4000, 18, 10, 0, 10, &err, 1);
    assert_int_equal(err, MPI_SUCCESS);
    MPI_Type_free(&t);
}

/* An empty message with MPIACC_IPC_MIN=0: nothing to export, it goes
 * eager at once (no export tried and refused). */
static void empty_not_ipc(void **state)
{
    MPI_Count saved = mpiacc_proto_cfg.ipc_min;
    long s0 = cnt(MPIACC_PROTO_N_IPC_SENT), e0 = cnt(MPIACC_PROTO_N_EAGER_SENT);
    long f0 = cnt(MPIACC_PROTO_N_IPC_FALLBACK), x0 = exports;
    MPI_Datatype t = cl_ints(0, fx.qin, NULL);
    cl_mem m = fx_buf(16, NULL);
    MPI_Status st;
    MPI_Count n = -1;
    mode = FAKE_OK;
    mpiacc_proto_cfg.ipc_min = 0;
    if (rank == 0) {
        assert_int_equal(MPI_Send(m, 1, t, 1, 11, comm), MPI_SUCCESS);
        assert_int_equal(cnt(MPIACC_PROTO_N_IPC_SENT), s0);
        assert_int_equal(cnt(MPIACC_PROTO_N_EAGER_SENT), e0 + 1);
        assert_int_equal(cnt(MPIACC_PROTO_N_IPC_FALLBACK), f0);
        assert_int_equal(exports, x0);
    } else {
        assert_int_equal(MPI_Recv(m, 1, t, 0, 11, comm, &st), MPI_SUCCESS);
        MPI_Get_count_c(&st, MPI_BYTE, &n);
        assert_int_equal(n, 0);
    }
    mpiacc_proto_cfg.ipc_min = saved;
    clReleaseMemObject(m);
    MPI_Type_free(&t);
    MPI_Barrier(comm);
}

/* Every export was released once its receiver was done. */
static void exports_released(void **state)
{
    MPI_Barrier(comm);
    assert_true(rank == 1 || exports > 0);
    assert_int_equal(releases, exports);
}

/* Issue 23: a receive with MPIACC_ORDER_STREAM completes once the import
 * copy is enqueued (COPYING --> EARLY, src/reqpool/op.c); the FIN follows
 * in the background, and the data are there for the receive's queue.  (The
 * stand-in's copy is synchronous: the gated cases are in
 * tests/opencl/test_ocl_stream_order.c.) */
static void stream_ordered_receive(void **state)
{
    long e0 = tr(S_COPY, MPIACC_RP_T_EARLY), f0 = tr(S_FIN, S_DONE);
    int *h = malloc(5000 * sizeof *h);
    MPI_Datatype t = cl_ints(5000, fx.qin, NULL);
    MPI_Request r;
    cl_mem m;
    mode = FAKE_OK;
    for (int i = 0; i < 5000; i++) h[i] = rank == 0 ? 70 + i : -1;
    m = fx_buf(5000 * sizeof *h, h);
    if (rank == 0) {
        assert_int_equal(MPI_Send(m, 1, t, 1, 9, comm), MPI_SUCCESS);
        assert_int_equal(tr(S_FIN, S_DONE), f0 + 1); /* the FIN came */
    } else {
        assert_int_equal(MPI_Type_set_attr(t, MPIACC_ORDER, MPIACC_ORDER_STREAM), MPI_SUCCESS);
        assert_int_equal(MPI_Irecv(m, 1, t, 0, 9, comm, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(tr(S_COPY, MPIACC_RP_T_EARLY), e0 + 1);
        fx_read(m, 5000 * sizeof *h, h);
        for (int i = 0; i < 5000; i++)
            if (h[i] != 70 + i) fail_msg("int %d is %d, expected %d", i, h[i], 70 + i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    clReleaseMemObject(m);
    MPI_Type_free(&t);
    free(h);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(through_ipc),      cmocka_unit_test(truncated),    cmocka_unit_test(large_blob),
        cmocka_unit_test(export_refused),   cmocka_unit_test(receiver_declines), cmocka_unit_test(copy_fails),
        cmocka_unit_test(cancel_then_receive), cmocka_unit_test(empty_not_ipc),
        cmocka_unit_test(exports_released), cmocka_unit_test(phase_marks),
        cmocka_unit_test(stream_ordered_receive),
    };
    int failed;
    MPI_Info info;
    fx_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    mpiacc_proto_dx_ipc_test_table(MPIACC_KIND_OPENCL, &fake);
    failed = MPIACC_TEST_RUN("direct_ipc_flow", tests, NULL, NULL);
    mpiacc_proto_dx_ipc_test_table(MPIACC_KIND_OPENCL, NULL);
    MPI_Comm_free(&comm);
    for (int i = 0; i < nheld && i < 64; i++) free(held_packed[i]);
    fx_fini();
    return failed ? 1 : 0;
}
