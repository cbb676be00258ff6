/*
 * test_cuda_stream_order: stream-ordered completion (MPIACC_ORDER =
 * MPIACC_ORDER_STREAM) on CUDA buffers, 2 ranks (one GPU each, or both on
 * one).  The user stream is held by a gate kernel (p2p_kernels.h), so
 * mpiacc's unpack / pack / IPC copy cannot run; assertions are about order:
 *
 *  recv_staged        MPI_COMM_WORLD: MPI_Wait returns while the stream is
 *                     held; the buffer still holds the old bytes (read on
 *                     another stream); once the gate opens, a copy enqueued
 *                     on the same stream sees the message; so does another
 *                     stream after cudaStreamSynchronize of the first
 *  recv_direct_small  the same on a direct communicator, eager (512 B)
 *                     or IPC; every case's buffers are set with cu_put,
 *                     which waits for its pageable copy to land
 *  recv_direct_held_sender  the same, the sender's data written by a gated
 *                     kernel on its MPIACC_STREAM, opened after the send
 *                     call: both sides' dependencies are honoured
 *  recv_direct_large  the same, 768 KiB: IPC (the import copy), or with
 *                     MPIACC_IPC=0 (case noipc) pipelined in 3 chunks
 *  recv_default_stream no MPIACC_STREAM: ordered on the legacy default
 *                     stream (the gate kernel runs there)
 *  recv_host_order    MPIACC_ORDER_HOST: MPI_Wait waits for the unpack
 *  send_staged        MPI_Wait on a staged send returns while its pack is
 *                     held; a kernel overwriting the buffer enqueued after it
 *                     does not change what the receiver gets
 *  send_direct_small  the same, eager on the direct communicator
 *  send_direct_large  768 KiB on the direct communicator: IPC (the user's
 *                     stream waits GPU-side on the "read done" flag the
 *                     receiver's GPU writes after its copy); with
 *                     MPIACC_IPC=0 pipelined in 3 chunks
 *  send_direct_ipc    the same with 4 KiB (IPC; MPIACC_IPC=0: one chunk)
 *                     In IPC mode both also check that the sender's stream
 *                     gets past its wait without any MPI call of the sender
 *                     (the receiver's GPU released it).
 *  --abandon          (case abandon) a stream-ordered IPC send never
 *                     received: MPI_Finalize abandons it and releases the
 *                     wait on the sender's stream (work enqueued after it runs)
 * Every early completion is counted in mpiacc_rp_transitions (the
 * pseudo-target MPIACC_RP_T_EARLY, src/reqpool/op.c).  Skipped ("SKIPPED:")
 * without a GPU; gated cases skipped under compute-sanitizer.  Watchdogs
 * are short (a wrong wait value would hold a stream for ever).
 */
#include "cu_p2p.h"
#include "reqpool/reqpool.h"

#define SMALL 512
#define IPC_SMALL 4096 /* above MPIACC_IPC_MIN=2K and MPIACC_EAGER_MAX=1K */
#define LARGE (768 * 1024)
#define TMO 20.0
enum { TAG = 41, TAG_TOKEN = 42 };

static MPI_Comm dcomm;
static cu_gate_t gate;
static unsigned char *dA, *dB, *dS, *h1, *h2;
static int noipc;

static long early_total(void)
{
    long n = 0;
    for (int s = 0; s < MPIACC_RP_NSTATES; s++) n += atomic_load(&mpiacc_rp_transitions[s][MPIACC_RP_T_EARLY]);
    return n;
}

static MPI_Datatype bytes_type(int n, int with_stream, cudaStream_t s, void *order)
{
    MPI_Datatype c, t;
    MPI_CK(MPI_Type_contiguous(n, MPI_BYTE, &c));
    MPI_CK(MPI_Type_commit(&c));
    t = cu_tag(c, with_stream, s);
    if (order) MPI_CK(MPI_Type_set_attr(t, MPIACC_ORDER, order));
    MPI_CK(MPI_Type_free(&c));
    return t;
}

static void token(MPI_Comm c, int to_peer)
{
    int peer = 1 - cu_rank;
    if (to_peer) MPI_CK(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_TOKEN, c));
    else MPI_CK(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_TOKEN, c, MPI_STATUS_IGNORE));
}

/* Waits for stream s, driving MPI progress meanwhile (a stream-ordered
 * send's wait may be released by this process's progress: pipelined, or
 * an IPC receiver that could not write the flag).  0 on timeout. */
static int sync_progress(cudaStream_t s, double secs)
{
    int flag;
    double t0 = cu_now();
    cudaError_t e;
    while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
        if (cu_now() - t0 > secs) return 0;
        MPI_CK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_TOKEN + 100, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    }
    CU_CK(e);
    return 1;
}

/* Waits for stream s without any MPI call.  0 on timeout. */
static int sync_quiet(cudaStream_t s, double secs)
{
    double t0 = cu_now();
    cudaError_t e;
    while ((e = cudaStreamQuery(s)) == cudaErrorNotReady)
        if (cu_now() - t0 > secs) return 0;
    CU_CK(e);
    return 1;
}

static int wait_within(MPI_Request *r, MPI_Status *st, double secs)
{
    int flag = 0;
    double t0 = cu_now();
    while (!flag && cu_now() - t0 < secs) MPI_CK(MPI_Test(r, &flag, st));
    return flag;
}

/* Rank 1 receives n bytes of pattern(seed) from rank 0 on c with
 * MPIACC_ORDER_STREAM while its stream (s; NULL: the legacy default
 * stream, no MPIACC_STREAM) is held; rank 0 sends from host memory (world)
 * or device memory (direct; held_sender: written by a kernel on cu_us,
 * held until after the send call). */
static void recv_case_x(MPI_Comm c, int n, cudaStream_t s, int with_stream, unsigned seed, int held_sender,
                        const char *what)
{
    int bad = 0;
    CU_SKIP_UNDER_SANITIZER();
    cu_watchdog(what, 60);
    if (cu_rank == 1) {
        MPI_Datatype t = bytes_type(n, with_stream, s, MPIACC_ORDER_STREAM);
        MPI_Request r;
        MPI_Status st;
        long e0 = early_total();
        int cnt = -1;
        cu_hfill(h1, n, seed + 1);
        cu_put(dB, h1, n); /* old contents */
        cu_gate_close(&gate);
        CU_CK(cu_k_gate_fill(with_stream ? s : NULL, gate.d, dS, 64, 1, TMO)); /* holds the stream */
        MPI_CK(MPI_Irecv(dB, 1, t, 0, TAG, c, &r));
        token(c, 1);
        if (!wait_within(&r, &st, 10.0)) CU_BAD(bad, "%s: MPI_Wait did not return while the stream was held", what);
        else {
            MPI_CK(MPI_Get_count(&st, t, &cnt));
            if (cnt != 1 || st.MPI_SOURCE != 0 || st.MPI_TAG != TAG) CU_BAD(bad, "%s: status", what);
            if (early_total() != e0 + 1) CU_BAD(bad, "%s: no early completion counted", what);
            if (with_stream) { /* another stream, no synchronisation: not there yet */
                CU_CK(cudaMemcpyAsync(h2, dB, (size_t)n, cudaMemcpyDeviceToHost, cu_us2));
                CU_CK(cudaStreamSynchronize(cu_us2));
                if (cu_differs(h2, h1, n, "another stream before the gate opened")) bad++;
            }
        }
        if (cu_gate_timed_out(&gate)) CU_BAD(bad, "%s: the gate timed out", what);
        cu_gate_open(&gate);
        if (r != MPI_REQUEST_NULL) MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        cu_hfill(h1, n, seed);
        memset(h2, 0, (size_t)n);
        CU_CK(cudaMemcpyAsync(h2, dB, (size_t)n, cudaMemcpyDeviceToHost, with_stream ? s : cudaStreamLegacy));
        CU_CK(cudaStreamSynchronize(with_stream ? s : cudaStreamLegacy));
        if (cu_differs(h2, h1, n, "the receive's stream")) bad++;
        memset(h2, 0, (size_t)n);
        CU_CK(cudaMemcpyAsync(h2, dB, (size_t)n, cudaMemcpyDeviceToHost, cu_us2));
        CU_CK(cudaStreamSynchronize(cu_us2));
        if (cu_differs(h2, h1, n, "another stream after synchronising")) bad++;
        MPI_CK(MPI_Type_free(&t));
    } else {
        token(c, 0);
        cu_hfill(h1, n, seed);
        if (c == MPI_COMM_WORLD) {
            MPI_CK(MPI_Send(h1, n, MPI_BYTE, 1, TAG, c));
        } else if (held_sender) { /* the data land only after the send call */
            MPI_Datatype t = bytes_type(n, CU_STREAM, cu_us, NULL);
            MPI_Request r;
            int flag = 0;
            double t0;
            cu_gate_close(&gate);
            CU_CK(cu_k_gate_fill(cu_us, gate.d, dA, n, seed, TMO));
            MPI_CK(MPI_Isend(dA, 1, t, 1, TAG, c, &r));
            for (t0 = cu_now(); !flag && cu_now() - t0 < 0.05;) MPI_CK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            if (flag) CU_BAD(bad, "%s: the send completed before its data were written", what);
            if (cu_gate_timed_out(&gate)) CU_BAD(bad, "%s: the sender's gate timed out", what);
            cu_gate_open(&gate);
            if (r != MPI_REQUEST_NULL) MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CU_CK(cudaStreamSynchronize(cu_us));
            MPI_CK(MPI_Type_free(&t));
        } else {
            MPI_Datatype t = bytes_type(n, CU_STREAM, cu_us, NULL);
            cu_put(dA, h1, n);
            MPI_CK(MPI_Send(dA, 1, t, 1, TAG, c));
            MPI_CK(MPI_Type_free(&t));
        }
    }
    cu_all_ok(bad, what);
}

static void recv_case(MPI_Comm c, int n, cudaStream_t s, int with_stream, unsigned seed, const char *what)
{
    recv_case_x(c, n, s, with_stream, seed, 0, what);
}

static void recv_staged(void **state) { recv_case(MPI_COMM_WORLD, LARGE, cu_us, CU_STREAM, 11, "recv_staged"); }
static void recv_direct_small(void **state) { recv_case(dcomm, SMALL, cu_us, CU_STREAM, 12, "recv_direct_small"); }
static void recv_direct_large(void **state) { recv_case(dcomm, LARGE, cu_us, CU_STREAM, 13, "recv_direct_large"); }
static void recv_direct_held_sender(void **state)
{
    recv_case_x(dcomm, SMALL, cu_us, CU_STREAM, 16, 1, "recv_direct_held_sender");
}
static void recv_default_stream(void **state)
{
    recv_case(MPI_COMM_WORLD, LARGE, NULL, CU_NO_STREAM, 14, "recv_default_stream");
}

static void recv_host_order(void **state)
{
    int bad = 0;
    CU_SKIP_UNDER_SANITIZER();
    cu_watchdog("recv_host_order", 60);
    if (cu_rank == 1) {
        MPI_Datatype t = bytes_type(SMALL, CU_STREAM, cu_us, MPIACC_ORDER_HOST);
        MPI_Request r;
        cu_gate_close(&gate);
        CU_CK(cu_k_gate_fill(cu_us, gate.d, dS, 64, 1, TMO));
        MPI_CK(MPI_Irecv(dB, 1, t, 0, TAG, MPI_COMM_WORLD, &r));
        token(MPI_COMM_WORLD, 1);
        token(MPI_COMM_WORLD, 0); /* sent */
        if (cu_completes_early(&r, 0.3, "MPIACC_ORDER_HOST receive")) bad++;
        cu_gate_open(&gate);
        if (r != MPI_REQUEST_NULL) MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        cu_hfill(h1, SMALL, 15);
        cu_get(h2, dB, SMALL); /* no stream synchronisation needed */
        if (cu_differs(h2, h1, SMALL, "MPIACC_ORDER_HOST")) bad++;
        MPI_CK(MPI_Type_free(&t));
    } else {
        token(MPI_COMM_WORLD, 0);
        cu_hfill(h1, SMALL, 15);
        MPI_CK(MPI_Send(h1, SMALL, MPI_BYTE, 1, TAG, MPI_COMM_WORLD));
        token(MPI_COMM_WORLD, 1);
    }
    cu_all_ok(bad, "recv_host_order");
}

/* Rank 0's data (pattern(seed)) are written by a gated kernel on cu_us;
 * the send completes while it is held (IPC: the user's stream then waits
 * on the receiver's flag); a fill enqueued afterwards on cu_us must not
 * reach the receiver.  gpu_release: the stream must get past that wait
 * without any MPI call of this process (IPC: the receiver's GPU writes
 * the flag). */
static void send_case(MPI_Comm c, int n, unsigned seed, int gpu_release, const char *what)
{
    int bad = 0;
    CU_SKIP_UNDER_SANITIZER();
    cu_watchdog(what, 40);
    if (cu_rank == 0) {
        MPI_Datatype t = bytes_type(n, CU_STREAM, cu_us, MPIACC_ORDER_STREAM);
        MPI_Request r;
        long e0 = early_total();
        int filled = 0;
        cu_gate_close(&gate);
        CU_CK(cu_k_gate_fill(cu_us, gate.d, dA, n, seed, TMO));
        MPI_CK(MPI_Isend(dA, 1, t, 1, TAG, c, &r));
        if (!wait_within(&r, MPI_STATUS_IGNORE, 10.0)) {
            CU_BAD(bad, "%s: MPI_Wait did not return while the data were held", what);
        } else {
            if (early_total() != e0 + 1) CU_BAD(bad, "%s: no early completion counted", what);
            CU_CK(cu_k_fill(cu_us, dA, n, seed + 7)); /* after the completion call */
            filled = 1;
        }
        if (cu_gate_timed_out(&gate)) CU_BAD(bad, "%s: the gate timed out", what);
        cu_gate_open(&gate);
        if (r != MPI_REQUEST_NULL) MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (gpu_release && filled && !sync_quiet(cu_us, 10.0))
            CU_BAD(bad, "%s: the stream did not get past its wait without this process's MPI progress (was the "
                        "receiver's flag written?)", what);
        if (!sync_progress(cu_us, 10.0)) CU_BAD(bad, "%s: the stream stays held after the send", what);
        if (filled) { /* the fill ran, after the send's read */
            cu_hfill(h1, n, seed + 7);
            cu_get(h2, dA, n);
            if (cu_differs(h2, h1, n, "the fill enqueued after MPI_Wait")) bad++;
        }
        MPI_CK(MPI_Type_free(&t));
    } else {
        cu_hfill(h1, n, seed);
        if (c == MPI_COMM_WORLD) {
            bad += cu_recv_bytes_check(0, TAG, h2, h1, n, what);
        } else {
            MPI_Datatype t = bytes_type(n, CU_STREAM, cu_us, NULL);
            MPI_CK(MPI_Recv(dB, 1, t, 0, TAG, c, MPI_STATUS_IGNORE));
            cu_get(h2, dB, n);
            if (cu_differs(h2, h1, n, what)) bad++;
            MPI_CK(MPI_Type_free(&t));
        }
    }
    cu_all_ok(bad, what);
}

static void send_staged(void **state) { send_case(MPI_COMM_WORLD, LARGE, 21, 0, "send_staged"); }
static void send_direct_small(void **state) { send_case(dcomm, SMALL, 22, 0, "send_direct_small"); }
/* IPC: the stream waits on the receiver's flag; MPIACC_IPC=0: pipelined, 3 chunks */
static void send_direct_large(void **state) { send_case(dcomm, LARGE, 23, !noipc, "send_direct_large"); }
static void send_direct_ipc(void **state) { send_case(dcomm, IPC_SMALL, 24, !noipc, "send_direct_ipc"); }

/* Every path once, ungated (host order), in both directions, so that
 * nothing is set up for the first time (modules, staging, temporaries,
 * IPC mappings) while a stream is held by a gate. */
static void warm_up(void)
{
    for (int dir = 0; dir < 2; dir++)
        for (int k = 0; k < 4; k++) {
            MPI_Comm c = k < 2 ? MPI_COMM_WORLD : dcomm;
            int n = k % 2 ? SMALL : LARGE, from = dir, to = 1 - dir;
            MPI_Datatype t = bytes_type(n, CU_STREAM, cu_us, NULL);
            if (cu_rank == from) MPI_CK(MPI_Send(dA, 1, t, to, TAG, c));
            else MPI_CK(MPI_Recv(dB, 1, t, from, TAG, c, MPI_STATUS_IGNORE));
            MPI_CK(MPI_Type_free(&t));
        }
    /* stream-ordered IPC sends (flag arrays, their mappings) */
    for (int dir = 0; dir < 2; dir++) {
        MPI_Datatype t = bytes_type(LARGE, CU_STREAM, cu_us, cu_rank == dir ? MPIACC_ORDER_STREAM : NULL);
        if (cu_rank == dir) {
            MPI_CK(MPI_Send(dA, 1, t, 1 - dir, TAG, dcomm));
            if (!sync_progress(cu_us, 20.0)) {
                fprintf(stderr, "[rank %d] warm-up: a stream-ordered send's stream stays held\n", cu_rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        } else {
            MPI_CK(MPI_Recv(dB, 1, t, dir, TAG, dcomm, MPI_STATUS_IGNORE));
        }
        MPI_CK(MPI_Type_free(&t));
    }
    CU_CK(cudaDeviceSynchronize());
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
}

/* --abandon: rank 0 sends LARGE bytes stream-ordered to rank 1, which
 * never receives them; a fill is enqueued on the stream after the
 * completion.  MPI_Finalize (MPIACC_FINALIZE_TIMEOUT=1) abandons the send
 * and releases the stream's wait: the fill runs.  Returns failed checks. */
static int abandon_case(void)
{
    int bad = 0;
    cu_watchdog("abandon", 40);
    if (cu_rank == 0) {
        MPI_Datatype t = bytes_type(LARGE, CU_STREAM, cu_us, MPIACC_ORDER_STREAM);
        MPI_Request r;
        long e0 = early_total();
        MPI_CK(MPI_Isend(dA, 1, t, 1, TAG + 50, dcomm, &r));
        if (!wait_within(&r, MPI_STATUS_IGNORE, 10.0)) CU_BAD(bad, "abandon: the send did not complete early");
        else if (early_total() != e0 + 1) CU_BAD(bad, "abandon: no early completion counted");
        CU_CK(cu_k_fill(cu_us, dA, LARGE, 77)); /* behind the wait */
        MPI_CK(MPI_Type_free(&t));
    }
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Comm_free(&dcomm);
    MPI_Finalize(); /* rank 0: the send abandoned, its stream released */
    if (cu_rank == 0) {
        if (!sync_quiet(cu_us, 20.0)) {
            CU_BAD(bad, "abandon: the stream still waits after MPI_Finalize");
        } else {
            cu_hfill(h1, LARGE, 77);
            cu_get(h2, dA, LARGE);
            if (cu_differs(h2, h1, LARGE, "abandon: the fill after the wait")) bad++;
        }
        if (mpiacc_rp_last_finalize.abandoned != 1) CU_BAD(bad, "abandon: %d op(s) abandoned, 1 expected",
                                                           mpiacc_rp_last_finalize.abandoned);
    }
    alarm(0);
    printf("rank %d: a stream-ordered IPC send never received, abandoned by MPI_Finalize: %s\n", cu_rank,
           bad ? "FAILED" : "ok");
    return bad;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recv_staged),         cmocka_unit_test(recv_direct_small),
        cmocka_unit_test(recv_direct_large),   cmocka_unit_test(recv_direct_held_sender),
        cmocka_unit_test(recv_default_stream),
        cmocka_unit_test(recv_host_order),     cmocka_unit_test(send_staged),
        cmocka_unit_test(send_direct_small),   cmocka_unit_test(send_direct_large),
        cmocka_unit_test(send_direct_ipc),
    };
    int failed;
    MPI_Info info;
    const char *ipc = getenv("MPIACC_IPC");
    noipc = ipc && strcmp(ipc, "0") == 0;
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    if (cu_size != 2) mpiacc_test_skip_all("needs exactly 2 MPI processes");
    CU_CK(cudaSetDevice(cu_rank % cu_ndev));
    CU_CK(cudaStreamDestroy(cu_us));
    CU_CK(cudaStreamDestroy(cu_us2));
    CU_CK(cudaStreamCreateWithFlags(&cu_us, cudaStreamNonBlocking));
    CU_CK(cudaStreamCreateWithFlags(&cu_us2, cudaStreamNonBlocking));
    CU_CK(cudaMalloc((void **)&dA, LARGE));
    CU_CK(cudaMalloc((void **)&dB, LARGE));
    CU_CK(cudaMalloc((void **)&dS, 4096));
    h1 = malloc(LARGE);
    h2 = malloc(LARGE);
    cu_gate_init(&gate);
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
    MPI_CK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dcomm));
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(dcomm, MPI_ERRORS_RETURN);
    warm_up();
    if (argc > 1 && !strcmp(argv[argc - 1], "--abandon")) {
        if (noipc) mpiacc_test_skip_all("--abandon needs IPC (MPIACC_IPC=0 set)");
        return abandon_case() ? 1 : 0; /* ends with MPI_Finalize; CUDA left as it is */
    }
    if (cu_rank == 0) printf("direct large messages: %s\n", noipc ? "pipelined (MPIACC_IPC=0)" : "IPC");
    failed = MPIACC_TEST_RUN("cuda_stream_order", tests, NULL, NULL);
    cu_watchdog("device synchronize at the end", 30);
    CU_CK(cudaDeviceSynchronize());
    MPI_Comm_free(&dcomm);
    cu_gate_free(&gate);
    CU_CK(cudaFree(dA));
    CU_CK(cudaFree(dB));
    CU_CK(cudaFree(dS));
    free(h1);
    free(h2);
    return cu_fini(failed);
}
