/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_paths: which path each CUDA point-to-point case takes (issue
 * 29), asserted through MPIACC_Get_stats' columns, with the data checked.
 * Where MPI's transport takes CUDA memory (src/engine: MPICH's UCX netmod
 * on a UCX with CUDA, MPIR_CVAR_NOLOCAL=1), expected:
 *   contig        a dense buffer, stream idle: handed to MPI as it is ("MPI")
 *   vector        a strided one: device staging ("device")
 *   held          a dense send whose stream is busy: the pool waits for it,
 *                 then hands the user's bytes to MPI ("device")
 *   self          a message to oneself: staged both ways ("staged")
 *   any_source    an MPI_ANY_SOURCE receive: staged; its sender "MPI"
 *   persistent    each MPI_Start as a plain call ("MPI")
 *   sendrecv      MPI_Sendrecv dense ("MPI"), MPI_Isendrecv strided ("device")
 *   mrecv         MPI_Mprobe + MPI_Mrecv dense ("MPI"), MPI_Imrecv into a
 *                 held buffer ("device"), of a message from oneself ("staged")
 *   host_device   device -> host and host -> device (the device side "MPI")
 *   truncation    a dense receive as it is: MPI's MPI_ERR_TRUNCATE; a strided
 *                 one: the part that fits, then MPI_ERR_TRUNCATE
 *   cancel        MPI_Cancel of a receive as it is and of one through staging
 *   get_count     MPI_Get_count / MPI_Get_elements with the receive datatype
 * Elsewhere every device column is "staged".  --require-device fails when
 * MPI does not take CUDA memory (the CTest case run under the UCX
 * environment, so that a wrong set-up cannot pass as staged).  CUDA <->
 * OpenCL: test_cuda_hetero (the OpenCL side is always staged).  Two ranks
 * (device rank % devices); skipped without a GPU.
 */
#include "cu_p2p.h"
#include "engine/engine.h"

#define N 4096 /* ints */
#define TMO 20.0

static int peer, dev_path;
static int *dA, *dB;
static unsigned char *h1, *h2, *h3, *hs, *hp; /* hs, hp: expect_bytes' scratch */
static cu_gate_t gate;
static MPI_Datatype contig, vec; /* N ints dense / N ints every other */

/* The MPIACC_Stats CUDA columns. */
typedef struct {
    unsigned long long s[MPIACC_STATS_PROTOCOLS], r[MPIACC_STATS_PROTOCOLS], matched;
} cols_t;

static cols_t cols(void)
{
    MPIACC_Stats st = {.size = sizeof st};
    cols_t c = {{0}};
    MPI_CK(MPIACC_Get_stats(&st));
    for (int p = 0; p < MPIACC_STATS_PROTOCOLS; p++) {
        c.s[p] = st.sends[MPIACC_KIND_CUDA][p];
        c.r[p] = st.receives[MPIACC_KIND_CUDA][p];
        if (!strncmp(st.protocol[p], "staged (matched)", sizeof st.protocol[p] - 1)) c.matched = c.r[p];
    }
    return c;
}

static const char *col_name(int p)
{
    static const char *names[] = {"staged", "ordered", "device", "MPI", "coll"};
    return p >= 0 && p < 5 ? names[p] : "?";
}

/* The column a device message is expected in when MPI takes CUDA memory
 * (else staged). */
static int want(int p) { return dev_path ? p : MPIACC_PROTO_STAGED; }

static void expect_grew(const cols_t *a, const cols_t *b, int send, int p, unsigned long long n, const char *what,
                        int *bad)
{
    unsigned long long d = send ? b->s[p] - a->s[p] : b->r[p] - a->r[p];
    if (d != n)
        CU_BAD(*bad, "%s: %s %s column grew by %llu, expected %llu", what, send ? "send" : "receive", col_name(p), d,
               n);
}

static MPI_Datatype tagged(MPI_Datatype base) { return cu_tag(base, CU_STREAM, cu_us); }

static void fill_dev(int *d, unsigned seed)
{
    cu_hfill(h1, N * 8, seed);
    cu_put(d, h1, N * 8);
}

/* The host bytes count x t of pattern(seed) unpacks to (MPI's own unpack). */
static void expect_bytes(MPI_Datatype base, unsigned seed, unsigned char *out)
{
    int pos = 0;
    cu_hfill(hs, N * 8, seed);
    memset(out, 0, N * 8);
    MPI_CK(MPI_Pack(hs, 1, base, hp, N * 8, &pos, MPI_COMM_WORLD));
    pos = 0;
    MPI_CK(MPI_Unpack(hp, N * 8, &pos, out, 1, base, MPI_COMM_WORLD));
}

/* Rank 0 -> 1 of (base tagged) on both sides; the columns each side grows. */
static int one_way(MPI_Datatype base, unsigned seed, int send_col, int recv_col, const char *what)
{
    int bad = 0;
    MPI_Datatype t = tagged(base);
    cols_t a = cols(), b;
    if (cu_rank == 0) {
        fill_dev(dA, seed);
        MPI_CK(MPI_Send(dA, 1, t, 1, 1, MPI_COMM_WORLD));
    } else {
        CU_CK(cudaMemset(dB, 0, N * 8));
        CU_CK(cudaDeviceSynchronize());
        MPI_CK(MPI_Recv(dB, 1, t, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        cu_get(h1, dB, N * 8);
        expect_bytes(base, seed, h3);
        if (cu_differs(h1, h3, N * 8, what)) bad++;
    }
    b = cols();
    expect_grew(&a, &b, cu_rank == 0, cu_rank == 0 ? send_col : recv_col, 1, what, &bad);
    MPI_CK(MPI_Type_free(&t));
    return bad;
}

static void contig_and_vector(void **state)
{
    int bad = 0;
    cu_watchdog("contig_and_vector", 60);
    bad += one_way(contig, 1, want(MPIACC_PROTO_MPI), want(MPIACC_PROTO_MPI), "contig");
    bad += one_way(vec, 2, want(MPIACC_PROTO_DEVICE), want(MPIACC_PROTO_DEVICE), "vector");
    cu_all_ok(bad, "contig_and_vector");
}

/* A dense send whose stream is held by a gate kernel writing the data: the
 * pool waits for it (the data written after the call travel). */
static void held(void **state)
{
    int bad = 0;
    CU_SKIP_UNDER_SANITIZER();
    cu_watchdog("held", 60);
    MPI_Datatype t = tagged(contig);
    cols_t a = cols(), b;
    if (cu_rank == 0) {
        MPI_Request r;
        int flag = 0;
        cu_gate_close(&gate);
        CU_CK(cu_k_gate_fill(cu_us, gate.d, dA, N * 4, 3, TMO));
        MPI_CK(MPI_Isend(dA, 1, t, 1, 2, MPI_COMM_WORLD, &r));
        for (double t0 = cu_now(); !flag && cu_now() - t0 < 0.05;) MPI_CK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        if (flag) CU_BAD(bad, "held: the send completed before its data were written");
        cu_gate_open(&gate);
        if (r != MPI_REQUEST_NULL) MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        b = cols();
        expect_grew(&a, &b, 1, want(MPIACC_PROTO_DEVICE), 1, "held", &bad);
    } else {
        MPI_CK(MPI_Recv(dB, 1, t, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        cu_get(h1, dB, N * 4);
        cu_hfill(h3, N * 4, 3);
        if (cu_differs(h1, h3, N * 4, "held")) bad++;
    }
    MPI_CK(MPI_Type_free(&t));
    cu_all_ok(bad, "held");
}

/* To and from oneself: staged both ways; MPI_ANY_SOURCE: staged receive. */
static void self_and_any_source(void **state)
{
    int bad = 0;
    MPI_Datatype t = tagged(contig);
    MPI_Request r;
    MPI_Status st;
    cols_t a = cols(), b;
    cu_watchdog("self_and_any_source", 60);
    fill_dev(dA, 10 + cu_rank);
    MPI_CK(MPI_Irecv(dB, 1, t, cu_rank, 3, MPI_COMM_WORLD, &r));
    MPI_CK(MPI_Send(dA, 1, t, cu_rank, 3, MPI_COMM_WORLD));
    MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    cu_get(h1, dB, N * 4);
    cu_hfill(h3, N * 4, 10 + cu_rank);
    if (cu_differs(h1, h3, N * 4, "self")) bad++;
    b = cols();
    expect_grew(&a, &b, 1, MPIACC_PROTO_STAGED, 1, "self", &bad);
    expect_grew(&a, &b, 0, MPIACC_PROTO_STAGED, 1, "self", &bad);
    MPI_CK(MPI_Irecv(dB, 1, t, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &r));
    /* posted before the message comes: MPICH 5.0.2 on UCX with NOLOCAL=1 can
     * hang an MPI_ANY_SOURCE receive of a message already at UCX (mpiacc or not) */
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CK(MPI_Send(dA, 1, t, peer, 4, MPI_COMM_WORLD));
    MPI_CK(MPI_Wait(&r, &st));
    if (st.MPI_SOURCE != peer) CU_BAD(bad, "any_source: source %d", st.MPI_SOURCE);
    cu_get(h1, dB, N * 4);
    cu_hfill(h3, N * 4, 10 + peer);
    if (cu_differs(h1, h3, N * 4, "any_source")) bad++;
    a = b;
    b = cols();
    expect_grew(&a, &b, 0, MPIACC_PROTO_STAGED, 1, "any_source", &bad);
    expect_grew(&a, &b, 1, want(MPIACC_PROTO_MPI), 1, "any_source's sender", &bad);
    MPI_CK(MPI_Type_free(&t));
    cu_all_ok(bad, "self_and_any_source");
}

/* Persistent requests, MPI_Sendrecv, MPI_Isendrecv. */
static void persistent_and_sendrecv(void **state)
{
    int bad = 0;
    MPI_Datatype t = tagged(contig), tv = tagged(vec);
    MPI_Request q[2];
    MPI_Status st;
    cols_t a = cols(), b;
    cu_watchdog("persistent_and_sendrecv", 60);
    MPI_CK(MPI_Recv_init(dB, 1, t, peer, 5, MPI_COMM_WORLD, &q[0]));
    MPI_CK(MPI_Send_init(dA, 1, t, peer, 5, MPI_COMM_WORLD, &q[1]));
    for (int it = 0; it < 3; it++) {
        fill_dev(dA, 20 + 2 * it + cu_rank);
        MPI_CK(MPI_Startall(2, q));
        MPI_CK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        cu_get(h1, dB, N * 4);
        cu_hfill(h3, N * 4, 20 + 2 * it + peer);
        if (cu_differs(h1, h3, N * 4, "persistent")) bad++;
    }
    MPI_CK(MPI_Request_free(&q[0]));
    MPI_CK(MPI_Request_free(&q[1]));
    b = cols();
    expect_grew(&a, &b, 1, want(MPIACC_PROTO_MPI), 3, "persistent", &bad);
    expect_grew(&a, &b, 0, want(MPIACC_PROTO_MPI), 3, "persistent", &bad);
    fill_dev(dA, 30 + cu_rank);
    MPI_CK(MPI_Sendrecv(dA, 1, t, peer, 6, dB, 1, t, peer, 6, MPI_COMM_WORLD, &st));
    cu_get(h1, dB, N * 4);
    cu_hfill(h3, N * 4, 30 + peer);
    if (cu_differs(h1, h3, N * 4, "sendrecv")) bad++;
    a = b;
    b = cols();
    expect_grew(&a, &b, 1, want(MPIACC_PROTO_MPI), 1, "sendrecv", &bad);
    fill_dev(dA, 40 + cu_rank);
    CU_CK(cudaMemset(dB, 0, N * 8));
    CU_CK(cudaDeviceSynchronize());
    MPI_CK(MPI_Isendrecv(dA, 1, tv, peer, 7, dB, 1, tv, peer, 7, MPI_COMM_WORLD, &q[0]));
    MPI_CK(MPI_Wait(&q[0], &st));
    if (st.MPI_SOURCE != peer || st.MPI_TAG != 7) CU_BAD(bad, "isendrecv: status %d %d", st.MPI_SOURCE, st.MPI_TAG);
    cu_get(h1, dB, N * 8);
    expect_bytes(vec, 40 + peer, h3);
    if (cu_differs(h1, h3, N * 8, "isendrecv")) bad++;
    a = b;
    b = cols();
    expect_grew(&a, &b, 1, want(MPIACC_PROTO_DEVICE), 1, "isendrecv", &bad);
    expect_grew(&a, &b, 0, want(MPIACC_PROTO_DEVICE), 1, "isendrecv", &bad);
    MPI_CK(MPI_Type_free(&t));
    MPI_CK(MPI_Type_free(&tv));
    cu_all_ok(bad, "persistent_and_sendrecv");
}

/* Matched probes: a dense buffer as it is, a held buffer through staging,
 * a message from oneself staged. */
static void mrecv(void **state)
{
    int bad = 0;
    MPI_Datatype t = tagged(contig);
    MPI_Message m;
    MPI_Request r, sq[2];
    MPI_Status st;
    cols_t a, b;
    CU_SKIP_UNDER_SANITIZER();
    cu_watchdog("mrecv", 60);
    cu_hfill(h1, N * 4, 50 + cu_rank);
    MPI_CK(MPI_Isend(h1, N, MPI_INT, peer, 8, MPI_COMM_WORLD, &sq[0]));
    MPI_CK(MPI_Isend(h1, N, MPI_INT, peer, 9, MPI_COMM_WORLD, &sq[1]));
    a = cols();
    MPI_CK(MPI_Mprobe(peer, 8, MPI_COMM_WORLD, &m, &st));
    MPI_CK(MPI_Mrecv(dB, 1, t, &m, &st));
    cu_get(h2, dB, N * 4);
    cu_hfill(h3, N * 4, 50 + peer);
    if (cu_differs(h2, h3, N * 4, "mrecv")) bad++;
    cu_gate_close(&gate);
    CU_CK(cu_k_gate_fill(cu_us, gate.d, dB, 64, 1, TMO)); /* the buffer's stream is busy */
    MPI_CK(MPI_Mprobe(peer, 9, MPI_COMM_WORLD, &m, &st));
    MPI_CK(MPI_Imrecv(dB, 1, t, &m, &r));
    cu_gate_open(&gate);
    MPI_CK(MPI_Wait(&r, &st));
    cu_get(h2, dB, N * 4);
    if (cu_differs(h2, h3, N * 4, "imrecv behind a busy stream")) bad++;
    MPI_CK(MPI_Waitall(2, sq, MPI_STATUSES_IGNORE));
    b = cols();
    if (dev_path) {
        expect_grew(&a, &b, 0, MPIACC_PROTO_MPI, 1, "mrecv", &bad);
        expect_grew(&a, &b, 0, MPIACC_PROTO_DEVICE, 1, "imrecv", &bad);
    } else if (b.matched - a.matched != 2) { /* the staged protocol's matched receive */
        CU_BAD(bad, "mrecv, imrecv: %llu staged matched receives, expected 2", b.matched - a.matched);
    }
    MPI_CK(MPI_Isend(h1, N, MPI_INT, cu_rank, 10, MPI_COMM_WORLD, &r));
    MPI_CK(MPI_Mprobe(cu_rank, 10, MPI_COMM_WORLD, &m, &st));
    MPI_CK(MPI_Mrecv(dB, 1, t, &m, &st));
    MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    cu_get(h2, dB, N * 4);
    cu_hfill(h3, N * 4, 50 + cu_rank);
    if (cu_differs(h2, h3, N * 4, "mrecv from oneself")) bad++;
    a = b;
    b = cols();
    if (b.matched - a.matched != 1) CU_BAD(bad, "mrecv from oneself: not staged");
    MPI_CK(MPI_Type_free(&t));
    cu_all_ok(bad, "mrecv");
}

/* device -> host, host -> device. */
static void host_device(void **state)
{
    int bad = 0;
    MPI_Datatype t = tagged(contig);
    cols_t a = cols(), b;
    cu_watchdog("host_device", 60);
    if (cu_rank == 0) {
        fill_dev(dA, 60);
        MPI_CK(MPI_Send(dA, 1, t, 1, 11, MPI_COMM_WORLD));
        cu_hfill(h1, N * 4, 61);
        MPI_CK(MPI_Send(h1, N, MPI_INT, 1, 12, MPI_COMM_WORLD));
    } else {
        bad += cu_recv_bytes_check(0, 11, h2, (cu_hfill(h3, N * 4, 60), h3), N * 4, "device -> host");
        MPI_CK(MPI_Recv(dB, 1, t, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        cu_get(h2, dB, N * 4);
        cu_hfill(h3, N * 4, 61);
        if (cu_differs(h2, h3, N * 4, "host -> device")) bad++;
    }
    b = cols();
    expect_grew(&a, &b, cu_rank == 0, want(MPIACC_PROTO_MPI), 1, "host_device", &bad);
    MPI_CK(MPI_Type_free(&t));
    cu_all_ok(bad, "host_device");
}

/* Truncation, cancel, MPI_Get_count. */
static void truncation_cancel_count(void **state)
{
    int bad = 0, cnt = -1, flag = 0, pos = 0;
    MPI_Datatype half, hv, tc = tagged(contig);
    MPI_Datatype small_c, small_v;
    MPI_Request r;
    MPI_Status st;
    cu_watchdog("truncation_cancel_count", 60);
    MPI_CK(MPI_Type_contiguous(N / 2, MPI_INT, &small_c));
    MPI_CK(MPI_Type_commit(&small_c));
    MPI_CK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &small_v));
    MPI_CK(MPI_Type_commit(&small_v));
    half = tagged(small_c);
    hv = tagged(small_v);
    if (cu_rank == 0) {
        fill_dev(dA, 70);
        MPI_CK(MPI_Send(dA, 1, tc, 1, 13, MPI_COMM_WORLD)); /* N ints into N/2 */
        MPI_CK(MPI_Send(dA, 1, tc, 1, 14, MPI_COMM_WORLD));
        MPI_CK(MPI_Send(dA, 1, half, 1, 15, MPI_COMM_WORLD));
    } else {
        if (cu_class(MPI_Recv(dB, 1, half, 0, 13, MPI_COMM_WORLD, &st)) != MPI_ERR_TRUNCATE)
            CU_BAD(bad, "dense receive as it is: no MPI_ERR_TRUNCATE");
        CU_CK(cudaMemset(dB, 0, N * 8));
        CU_CK(cudaDeviceSynchronize());
        if (cu_class(MPI_Recv(dB, 1, hv, 0, 14, MPI_COMM_WORLD, &st)) != MPI_ERR_TRUNCATE)
            CU_BAD(bad, "strided receive through staging: no MPI_ERR_TRUNCATE");
        cu_get(h2, dB, N * 4);
        cu_hfill(h1, N * 8, 70); /* the message's first N/2 ints, every other int of the receive */
        memset(h3, 0, N * 8);
        MPI_CK(MPI_Unpack(h1, N * 2, &pos, h3, 1, small_v, MPI_COMM_WORLD));
        if (cu_differs(h2, h3, N * 4, "the part that fits")) bad++;
        MPI_CK(MPI_Recv(dB, 1, tc, 0, 15, MPI_COMM_WORLD, &st));
        MPI_CK(MPI_Get_count(&st, half, &cnt));
        if (cnt != 1) CU_BAD(bad, "MPI_Get_count with the sent type: %d", cnt);
        MPI_CK(MPI_Get_elements(&st, MPI_INT, &cnt));
        if (cnt != N / 2) CU_BAD(bad, "MPI_Get_elements: %d", cnt);
        MPI_CK(MPI_Get_count(&st, tc, &cnt));
        if (cnt != MPI_UNDEFINED) CU_BAD(bad, "MPI_Get_count of a partial element: %d", cnt);
    }
    /* cancel: as it is, then through staging (a busy stream) */
    MPI_CK(MPI_Irecv(dB, 1, half, peer, 999, MPI_COMM_WORLD, &r));
    MPI_CK(MPI_Cancel(&r));
    MPI_CK(MPI_Wait(&r, &st));
    MPI_CK(MPI_Test_cancelled(&st, &flag));
    if (!flag) CU_BAD(bad, "cancel (as it is): not cancelled");
    MPI_CK(MPI_Irecv(dB, 1, hv, peer, 999, MPI_COMM_WORLD, &r));
    MPI_CK(MPI_Cancel(&r));
    MPI_CK(MPI_Wait(&r, &st));
    MPI_CK(MPI_Test_cancelled(&st, &flag));
    if (!flag) CU_BAD(bad, "cancel (staging): not cancelled");
    MPI_CK(MPI_Type_free(&half));
    MPI_CK(MPI_Type_free(&hv));
    MPI_CK(MPI_Type_free(&tc));
    MPI_CK(MPI_Type_free(&small_c));
    MPI_CK(MPI_Type_free(&small_v));
    cu_all_ok(bad, "truncation_cancel_count");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(contig_and_vector), cmocka_unit_test(held), cmocka_unit_test(self_and_any_source),
        cmocka_unit_test(persistent_and_sendrecv), cmocka_unit_test(mrecv), cmocka_unit_test(host_device),
        cmocka_unit_test(truncation_cancel_count),
    };
    int failed, require = argc > 1 && !strcmp(argv[argc - 1], "--require-device");
    /* the device protocol's paths, at every size: small strided messages
     * would go through host memory (here, not in the CTest cases: the
     * sanitizer steps of gpu-check.sh run the program as it is) */
    setenv("MPIACC_HOST_STAGING_MAX", "0", 0);
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    if (cu_size != 2) mpiacc_test_skip_all("needs exactly 2 MPI processes");
    peer = 1 - cu_rank;
    dev_path = mpiacc_engine_mpi.takes(MPIACC_KIND_CUDA);
    if (cu_rank == 0) printf("transport: %s\n", mpiacc_engine_mpi.reason());
    if (require && !dev_path) {
        if (cu_rank == 0)
            fprintf(stderr, "--require-device: MPI does not take CUDA memory here (%s)\n", mpiacc_engine_mpi.reason());
        MPI_Finalize();
        return 1;
    }
    CU_CK(cudaSetDevice(cu_rank % cu_ndev));
    CU_CK(cudaStreamDestroy(cu_us));
    CU_CK(cudaStreamDestroy(cu_us2));
    CU_CK(cudaStreamCreateWithFlags(&cu_us, cudaStreamNonBlocking));
    CU_CK(cudaStreamCreateWithFlags(&cu_us2, cudaStreamNonBlocking));
    CU_CK(cudaMalloc((void **)&dA, N * 8));
    CU_CK(cudaMalloc((void **)&dB, N * 8));
    h1 = malloc(N * 8);
    h2 = malloc(N * 8);
    h3 = malloc(N * 8);
    hs = malloc(N * 8);
    hp = malloc(N * 8);
    cu_gate_init(&gate);
    MPI_CK(MPI_Type_contiguous(N, MPI_INT, &contig));
    MPI_CK(MPI_Type_commit(&contig));
    MPI_CK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    MPI_CK(MPI_Type_commit(&vec));
    failed = MPIACC_TEST_RUN("cuda_paths", tests, NULL, NULL);
    MPI_CK(MPI_Type_free(&contig));
    MPI_CK(MPI_Type_free(&vec));
    cu_gate_free(&gate);
    CU_CK(cudaFree(dA));
    CU_CK(cudaFree(dB));
    free(h1);
    free(h2);
    free(h3);
    free(hs);
    free(hp);
    return cu_fini(failed);
}
