/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_stream_order: stream-ordered completion (MPIACC_ORDER =
 * MPIACC_ORDER_STREAM) on CUDA buffers, 2 ranks (one GPU each, or both on
 * one).  The user stream is held by a gate kernel (p2p_kernels.h), so
 * mpiacc's unpack / pack / copy into staging cannot run; assertions are
 * about order.  Device-to-device messages take the device protocol where
 * MPI's transport takes CUDA memory (src/engine; the held stream sends them
 * through device staging), else the staged protocol: the same assertions
 * hold for both.
 *
 *  recv_staged        MPI_COMM_WORLD, a host sender: MPI_Wait returns while
 *                     the stream is held; the buffer still holds the old
 *                     bytes (read on another stream); once the gate opens,
 *                     a copy enqueued on the same stream sees the message;
 *                     so does another stream after cudaStreamSynchronize of
 *                     the first
 *  recv_dev_small     the same, a device sender (512 B), on a communicator
 *                     with the mpiacc_direct info key (no different for
 *                     point-to-point any more); every case's buffers are
 *                     set with cu_put, which waits for its pageable copy
 *  recv_dev_held_sender  the same, the sender's data written by a gated
 *                     kernel on its MPIACC_STREAM, opened after the send
 *                     call: both sides' dependencies are honoured
 *  recv_dev_large     the same, 768 KiB
 *  recv_default_stream no MPIACC_STREAM: ordered on the legacy default
 *                     stream (the gate kernel runs there)
 *  recv_host_order    MPIACC_ORDER_HOST: MPI_Wait waits for the unpack
 *  send_staged        MPI_Wait on a send to a host receive returns while
 *                     its pack (device protocol: the copy of the dense
 *                     buffer into device staging) is held; a kernel
 *                     overwriting the buffer enqueued after it does not
 *                     change what the receiver gets
 *  send_dev_small     the same to a device receive
 *  send_dev_large     the same, 768 KiB
 * Every early completion is counted in mpiacc_rp_transitions (the
 * pseudo-target MPIACC_RP_T_EARLY, src/reqpool/op.c).  Skipped ("SKIPPED:")
 * without a GPU; gated cases skipped under compute-sanitizer.
 */
#include "cu_p2p.h"
#include "reqpool/reqpool.h"

#define SMALL 512
#define LARGE (768 * 1024)
#define TMO 20.0
enum { TAG = 41, TAG_TOKEN = 42 };

static MPI_Comm dcomm;
static cu_gate_t gate;
static unsigned char *dA, *dB, *dS, *h1, *h2;

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
 * or device memory (dcomm; held_sender: written by a kernel on cu_us,
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
static void recv_dev_small(void **state) { recv_case(dcomm, SMALL, cu_us, CU_STREAM, 12, "recv_dev_small"); }
static void recv_dev_large(void **state) { recv_case(dcomm, LARGE, cu_us, CU_STREAM, 13, "recv_dev_large"); }
static void recv_dev_held_sender(void **state)
{
    recv_case_x(dcomm, SMALL, cu_us, CU_STREAM, 16, 1, "recv_dev_held_sender");
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
 * the send completes while it is held; a fill enqueued afterwards on
 * cu_us must not reach the receiver. */
static void send_case(MPI_Comm c, int n, unsigned seed, int host_order, const char *what)
{
    int bad = 0;
    CU_SKIP_UNDER_SANITIZER();
    cu_watchdog(what, 60);
    if (cu_rank == 0) {
        MPI_Datatype t = bytes_type(n, CU_STREAM, cu_us, MPIACC_ORDER_STREAM);
        MPI_Request r;
        long e0 = early_total();
        cu_gate_close(&gate);
        CU_CK(cu_k_gate_fill(cu_us, gate.d, dA, n, seed, TMO));
        MPI_CK(MPI_Isend(dA, 1, t, 1, TAG, c, &r));
        if (host_order) { /* synchronous-mode-like cases: no early completion */
            if (cu_completes_early(&r, 0.3, what)) bad++;
        } else if (!wait_within(&r, MPI_STATUS_IGNORE, 10.0)) {
            CU_BAD(bad, "%s: MPI_Wait did not return while the pack was held", what);
        } else {
            if (early_total() != e0 + 1) CU_BAD(bad, "%s: no early completion counted", what);
            CU_CK(cu_k_fill(cu_us, dA, n, seed + 7)); /* after the completion call */
        }
        if (cu_gate_timed_out(&gate)) CU_BAD(bad, "%s: the gate timed out", what);
        cu_gate_open(&gate);
        if (r != MPI_REQUEST_NULL) MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CU_CK(cudaStreamSynchronize(cu_us));
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
static void send_dev_small(void **state) { send_case(dcomm, SMALL, 22, 0, "send_dev_small"); }
static void send_dev_large(void **state) { send_case(dcomm, LARGE, 23, 0, "send_dev_large"); }

/* Every path once, ungated (host order), in both directions, so that
 * nothing is set up for the first time (modules, staging, temporaries)
 * while a stream is held by a gate. */
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
    CU_CK(cudaDeviceSynchronize());
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recv_staged), cmocka_unit_test(recv_dev_small), cmocka_unit_test(recv_dev_large),
        cmocka_unit_test(recv_dev_held_sender), cmocka_unit_test(recv_default_stream),
        cmocka_unit_test(recv_host_order), cmocka_unit_test(send_staged), cmocka_unit_test(send_dev_small),
        cmocka_unit_test(send_dev_large),
    };
    int failed;
    MPI_Info info;
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
    failed = MPIACC_TEST_RUN("cuda_stream_order", tests, NULL, NULL);
    MPI_Comm_free(&dcomm);
    cu_gate_free(&gate);
    CU_CK(cudaFree(dA));
    CU_CK(cudaFree(dB));
    CU_CK(cudaFree(dS));
    free(h1);
    free(h2);
    return cu_fini(failed);
}
