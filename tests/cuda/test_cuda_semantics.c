/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_semantics: MPI semantics of CUDA operations through the public
 * API (2 or 3 ranks sharing one GPU).
 *
 *  fig5_loop          MPI-ACC Fig 5: per iteration a kernel writes chunk i
 *                     on the user stream, then MPI_Type_dup + set_attr +
 *                     MPI_Isend + MPI_Type_free (no synchronisation);
 *                     MPI_Waitall at the end; the receiver does the same
 *                     with MPI_Irecv
 *  non_overtaking     same peer and tag: a send held by a gated kernel is
 *                     received before a later fast device send, and before
 *                     a later plain host MPI_Isend; a blocking host MPI_Send
 *                     behind a slow device send keeps the order too
 *  status_elements    a 3-element message into a 5-element device receive:
 *                     MPI_Get_count 3, MPI_Get_elements, the rest untouched;
 *                     a message ending inside an element: MPI_UNDEFINED count
 *                     and the exact element count and data
 *  any_source         MPI_ANY_SOURCE / MPI_ANY_TAG device receives
 *                     (nonblocking and blocking) get every sender once with
 *                     the right status and data
 *  truncation         too long a message -> MPI_ERR_TRUNCATE from MPI_Recv,
 *                     MPI_Wait and (as MPI_ERR_IN_STATUS) MPI_Waitall; the
 *                     library keeps working afterwards
 *  cancel             MPI_Cancel of a posted device receive (cancelled,
 *                     buffer untouched), of a completed one (not cancelled),
 *                     MPI_Request_free of an active device send
 *  zero_and_proc_null count 0 and MPI_PROC_NULL complete with empty status
 */
#include "cu_p2p.h"
#include "test_kernels.h"

#define N (1 << 16) /* ints per device buffer */
#define BYTES ((long long)N * 4)
#define TMO 20.0
enum { TAG_ACK = 990 };

static unsigned char *dA, *dB, *h1, *h2, *h3;
static MPI_Datatype v256; /* vector(256, 1, 2, MPI_INT): 1 KiB packed, extent 511 ints */
static cu_gate_t gate;
static unsigned seed32;

/* packed bytes of count x type over pattern(seed), via host MPI_Pack */
static int packed_of(MPI_Datatype type, int count, unsigned seed, unsigned char *out)
{
    int pos = 0, size;
    cu_hfill(h3, BYTES, seed);
    MPI_CK(MPI_Pack_size(count, type, MPI_COMM_SELF, &size));
    MPI_CK(MPI_Pack(h3, count, type, out, size, &pos, MPI_COMM_SELF));
    return pos;
}

/* expected device contents: pattern(old) with count x type of pattern(new_) */
static void expect_unpacked(MPI_Datatype type, int count, unsigned old, unsigned new_, unsigned char *out)
{
    int pos = 0, size = packed_of(type, count, new_, h2);
    cu_hfill(out, BYTES, old);
    MPI_CK(MPI_Unpack(h2, size, &pos, out, count, type, MPI_COMM_SELF));
}

/* Receives one message as bytes on the host; compares it with the packed
 * count x type of pattern(seed). */
static int recv_bytes_check(int from, int tag, MPI_Datatype type, int count, unsigned seed, const char *what)
{
    int size = packed_of(type, count, seed, h2), n = -1;
    MPI_Status st;
    MPI_CK(MPI_Recv(h1, (int)BYTES, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st));
    MPI_CK(MPI_Get_count(&st, MPI_BYTE, &n));
    if (n != size) {
        fprintf(stderr, "[rank %d] %s: %d bytes, expected %d\n", cu_rank, what, n, size);
        return 1;
    }
    return cu_differs(h1, h2, size, what);
}

static void fill_sync(unsigned char *d, unsigned seed)
{
    CU_CK(cu_k_fill(cu_us, d, BYTES, seed));
    CU_CK(cudaStreamSynchronize(cu_us));
}

/* ------------------------------------------------------------------------- */

static void fig5_loop(void **state)
{
    enum { K = 16 };
    const long long chunk = BYTES / K; /* 16 KiB: one v256 spans 2044 bytes */
    MPI_Request rq[K];
    MPI_Status st[K];
    int bad = 0;
    (void)state;
    cu_watchdog("fig5_loop", 120);
    if (cu_rank == 0) {
        for (int i = 0; i < K; i++) {
            MPI_Datatype t;
            MPI_CK(MPI_Type_dup(v256, &t));
            MPI_CK(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA));
            MPI_CK(MPI_Type_set_attr(t, MPIACC_STREAM, (void *)cu_us));
            CU_CK(cu_k_fill(cu_us, dA + i * chunk, chunk, seed32 + (unsigned)i));
            MPI_CK(MPI_Isend(dA + i * chunk, 1, t, 1, 100 + i, MPI_COMM_WORLD, &rq[i]));
            MPI_CK(MPI_Type_free(&t));
        }
        MPI_CK(MPI_Waitall(K, rq, st));
    } else if (cu_rank == 1) {
        fill_sync(dB, seed32 + 99);
        for (int i = 0; i < K; i++) {
            MPI_Datatype t;
            MPI_CK(MPI_Type_dup(v256, &t));
            MPI_CK(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA));
            MPI_CK(MPI_Type_set_attr(t, MPIACC_STREAM, (void *)cu_us));
            MPI_CK(MPI_Irecv(dB + i * chunk, 1, t, 0, 100 + i, MPI_COMM_WORLD, &rq[i]));
            MPI_CK(MPI_Type_free(&t));
        }
        MPI_CK(MPI_Waitall(K, rq, st));
        cu_hfill(h1, BYTES, seed32 + 99);
        for (int i = 0; i < K; i++) { /* chunk i: pattern indices restart at the chunk */
            int pos = 0, size = packed_of(v256, 1, seed32 + (unsigned)i, h2);
            MPI_CK(MPI_Unpack(h2, size, &pos, h1 + i * chunk, 1, v256, MPI_COMM_SELF));
            if (st[i].MPI_TAG != 100 + i || st[i].MPI_SOURCE != 0)
                CU_BAD(bad, "Fig 5 receive %d: status source %d tag %d", i, st[i].MPI_SOURCE, st[i].MPI_TAG);
        }
        cu_get(h3, dB, BYTES);
        bad += cu_differs(h3, h1, BYTES, "Fig 5 loop: received chunks");
    }
    cu_all_ok(bad, "Fig 5 loop");
}

static void non_overtaking(void **state)
{
    int bad = 0;
    const unsigned s1 = seed32 + 201, s2 = seed32 + 202;
    (void)state;
    cu_watchdog("non_overtaking", 120);
    for (int v = 0; v < 3; v++) { /* second message: 0 fast device, 1 host Isend, 2 blocking host Send */
        const int tag = 7 + v, gated = v < 2;
        char what[96];
        if (gated && cu_sanitizer) continue;
        snprintf(what, sizeof what, "non-overtaking (%s second)",
                 v == 0 ? "fast device send" : v == 1 ? "host MPI_Isend" : "blocking host MPI_Send");
        if (cu_rank == 0) {
            MPI_Datatype ta = cu_tag(v256, CU_STREAM, cu_us), tb = cu_tag(v256, CU_STREAM, cu_us2);
            MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
            fill_sync(dB, s2);
            cu_hfill(h1, BYTES, s2);
            if (gated) {
                cu_gate_close(&gate);
                CU_CK(cu_k_gate_fill(cu_us, gate.d, dA, BYTES, s1, TMO));
            } else {
                CU_CK(cu_test_spin_fill(cu_us, dA, BYTES, s1, 100));
            }
            MPI_CK(MPI_Isend(dA, 1, ta, 1, tag, MPI_COMM_WORLD, &rq[0]));
            if (v == 0) MPI_CK(MPI_Isend(dB, 1, tb, 1, tag, MPI_COMM_WORLD, &rq[1]));
            else if (v == 1) MPI_CK(MPI_Isend(h1, 1, v256, 1, tag, MPI_COMM_WORLD, &rq[1]));
            else MPI_CK(MPI_Send(h1, 1, v256, 1, tag, MPI_COMM_WORLD));
            if (gated) {
                double t0 = cu_now();
                while (cu_now() - t0 < 0.2) { /* a wrong library would deliver the second message now */
                    int flag;
                    MPI_CK(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
                    if (flag) {
                        CU_BAD(bad, "%s: the held send completed", what);
                        break;
                    }
                }
                cu_gate_open(&gate);
            }
            MPI_CK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            MPI_CK(MPI_Type_free(&ta));
            MPI_CK(MPI_Type_free(&tb));
            CU_CK(cudaDeviceSynchronize());
            if (gated && cu_gate_timed_out(&gate)) CU_BAD(bad, "%s: gate timed out", what);
        } else if (cu_rank == 1) {
            char w[128];
            snprintf(w, sizeof w, "%s: first message received", what);
            bad += recv_bytes_check(0, tag, v256, 1, s1, w);
            snprintf(w, sizeof w, "%s: second message received", what);
            bad += recv_bytes_check(0, tag, v256, 1, s2, w);
        }
    }
    cu_all_ok(bad, "non-overtaking");
}

static void status_elements(void **state)
{
    int bad = 0;
    const unsigned olds = seed32 + 300, s = seed32 + 301;
    (void)state;
    cu_watchdog("status_elements", 60);
    if (cu_rank == 0) {
        MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
        fill_sync(dA, s);
        MPI_CK(MPI_Send(dA, 3, t, 1, 60, MPI_COMM_WORLD));
        cu_hfill(h1, BYTES, s);
        MPI_CK(MPI_Send(h1, 3 * 256 + 1, MPI_INT, 1, 61, MPI_COMM_WORLD));
        MPI_CK(MPI_Type_free(&t));
    } else if (cu_rank == 1) {
        MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
        MPI_Request r;
        MPI_Status st;
        MPI_Count ex = -1;
        int n = -1;
        /* 3 elements into 5 */
        fill_sync(dB, olds);
        MPI_CK(MPI_Irecv(dB, 5, t, 0, 60, MPI_COMM_WORLD, &r));
        MPI_CK(MPI_Wait(&r, &st));
        if (st.MPI_SOURCE != 0 || st.MPI_TAG != 60) CU_BAD(bad, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        MPI_CK(MPI_Get_count(&st, t, &n));
        if (n != 3) CU_BAD(bad, "MPI_Get_count %d, expected 3", n);
        MPI_CK(MPI_Get_elements(&st, t, &n));
        if (n != 768) CU_BAD(bad, "MPI_Get_elements %d, expected 768", n);
        MPI_CK(MPI_Get_elements_x(&st, t, &ex));
        if (ex != 768) CU_BAD(bad, "MPI_Get_elements_x %lld, expected 768", (long long)ex);
        MPI_CK(MPI_Get_count(&st, MPI_BYTE, &n));
        if (n != 3 * 1024) CU_BAD(bad, "MPI_Get_count(MPI_BYTE) %d, expected 3072", n);
        expect_unpacked(v256, 3, olds, s, h1);
        cu_get(h3, dB, BYTES);
        bad += cu_differs(h3, h1, BYTES, "3 of 5 elements received (the rest must stay untouched)");
        /* 769 ints into 5 elements: the last element is partial */
        fill_sync(dB, olds);
        MPI_CK(MPI_Recv(dB, 5, t, 0, 61, MPI_COMM_WORLD, &st));
        MPI_CK(MPI_Get_count(&st, t, &n));
        if (n != MPI_UNDEFINED) CU_BAD(bad, "partial element: MPI_Get_count %d, expected MPI_UNDEFINED", n);
        MPI_CK(MPI_Get_elements(&st, t, &n));
        if (n != 769) CU_BAD(bad, "partial element: MPI_Get_elements %d, expected 769", n);
        cu_hfill(h1, BYTES, olds);
        cu_hfill(h2, BYTES, s);
        for (int j = 0; j < 769; j++) /* element j/256, int j%256 of vector(256,1,2): int (j/256)*511 + 2*(j%256) */
            memcpy(h1 + 4 * ((j / 256) * 511 + 2 * (j % 256)), h2 + 4 * j, 4);
        cu_get(h3, dB, BYTES);
        bad += cu_differs(h3, h1, BYTES, "message ending inside an element");
        MPI_CK(MPI_Type_free(&t));
    }
    cu_all_ok(bad, "status count and elements");
}

static void any_source(void **state)
{
    const long long slot = 16384; /* one v256 spans 2044 bytes */
    const int nsend = cu_size - 1;
    int bad = 0;
    (void)state;
    cu_watchdog("any_source", 60);
    if (cu_rank != 1) {
        MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
        for (int round = 0; round < 2; round++) {
            /* round 1 only once rank 1 has all of round 0 (else ANY_SOURCE could match it early) */
            if (round) MPI_CK(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CU_CK(cu_k_fill(cu_us, dA, slot, seed32 + 400u + 10u * (unsigned)round + (unsigned)cu_rank));
            MPI_CK(MPI_Send(dA, 1, t, 1, 70 + cu_rank, MPI_COMM_WORLD));
        }
        MPI_CK(MPI_Type_free(&t));
    } else {
        MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
        MPI_Request rq[16];
        MPI_Status st[16];
        int seen[16] = {0};
        for (int round = 0; round < 2; round++) {
            CU_CK(cudaMemsetAsync(dB, 0, (size_t)(slot * nsend), cu_us));
            for (int k = 0; k < nsend; k++) {
                if (round == 0) MPI_CK(MPI_Irecv(dB + k * slot, 1, t, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[k]));
                else MPI_CK(MPI_Recv(dB + k * slot, 1, t, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st[k]));
            }
            if (round == 0) MPI_CK(MPI_Waitall(nsend, rq, st));
            for (int k = 0; k < nsend; k++) {
                int src = st[k].MPI_SOURCE, n = -1, pos = 0, size;
                char what[96];
                MPI_CK(MPI_Get_count(&st[k], t, &n));
                if (src < 0 || src >= cu_size || src == 1 || st[k].MPI_TAG != 70 + src || n != 1) {
                    CU_BAD(bad, "ANY_SOURCE round %d receive %d: source %d tag %d count %d", round, k, src,
                           st[k].MPI_TAG, n);
                    continue;
                }
                if (seen[src]++ != round) CU_BAD(bad, "ANY_SOURCE round %d: source %d seen twice", round, src);
                size = packed_of(v256, 1, seed32 + 400u + 10u * (unsigned)round + (unsigned)src, h2);
                cu_get(h1, dB + k * slot, slot);
                MPI_CK(MPI_Pack(h1, 1, v256, h3, size, &pos, MPI_COMM_SELF));
                snprintf(what, sizeof what, "ANY_SOURCE round %d: data from rank %d", round, src);
                bad += cu_differs(h3, h2, size, what);
            }
            if (round == 0)
                for (int r = 0; r < cu_size; r++)
                    if (r != 1) MPI_CK(MPI_Send(NULL, 0, MPI_BYTE, r, TAG_ACK, MPI_COMM_WORLD));
        }
        MPI_CK(MPI_Type_free(&t));
    }
    cu_all_ok(bad, "MPI_ANY_SOURCE / MPI_ANY_TAG");
}

static void expect_truncate(int err, const char *what, int *bad)
{
    if (cu_class(err) != MPI_ERR_TRUNCATE) CU_BAD(*bad, "%s: error class %d, expected MPI_ERR_TRUNCATE", what, cu_class(err));
}

static void truncation(void **state)
{
    int bad = 0;
    (void)state;
    cu_watchdog("truncation", 60);
    if (cu_rank == 0) {
        MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
        cu_hfill(h1, BYTES, seed32 + 500);
        MPI_CK(MPI_Send(h1, 512, MPI_INT, 1, 80, MPI_COMM_WORLD));
        MPI_CK(MPI_Send(h1, 512, MPI_INT, 1, 81, MPI_COMM_WORLD));
        fill_sync(dA, seed32 + 501);
        MPI_CK(MPI_Send(dA, 2, t, 1, 82, MPI_COMM_WORLD)); /* device send, too long too */
        MPI_CK(MPI_Send(h1, 512, MPI_INT, 1, 84, MPI_COMM_WORLD));
        MPI_CK(MPI_Send(dA, 1, t, 1, 85, MPI_COMM_WORLD));
        MPI_CK(MPI_Send(dA, 1, t, 1, 86, MPI_COMM_WORLD));
        MPI_CK(MPI_Type_free(&t));
    } else if (cu_rank == 1) {
        MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
        MPI_Request r, rq[2];
        MPI_Status st[2];
        int err;
        expect_truncate(MPI_Recv(dB, 1, t, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv", &bad);
        MPI_CK(MPI_Irecv(dB, 1, t, 0, 81, MPI_COMM_WORLD, &r));
        expect_truncate(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait", &bad);
        expect_truncate(MPI_Recv(dB, 1, t, 0, 82, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv of a device send",
                        &bad);
        MPI_CK(MPI_Irecv(dB, 1, t, 0, 84, MPI_COMM_WORLD, &rq[0]));
        MPI_CK(MPI_Irecv(dB + 16384, 1, t, 0, 85, MPI_COMM_WORLD, &rq[1]));
        err = MPI_Waitall(2, rq, st);
        if (cu_class(err) != MPI_ERR_IN_STATUS) CU_BAD(bad, "MPI_Waitall: class %d, expected MPI_ERR_IN_STATUS", cu_class(err));
        else {
            /* MPICH's Waitall reports a generalized request's error as an
             * MPI_ERR_OTHER-class code wrapping ours ("**userquery"), stops
             * at the first error and leaves the rest MPI_ERR_PENDING (still
             * active: wait for them again). */
            int c0 = cu_class(st[0].MPI_ERROR);
            if (c0 != MPI_ERR_TRUNCATE && c0 != MPI_ERR_OTHER)
                CU_BAD(bad, "MPI_Waitall status 0: error class %d, expected MPI_ERR_TRUNCATE or OTHER", c0);
            if (st[1].MPI_ERROR == MPI_ERR_PENDING) MPI_CK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
            else if (st[1].MPI_ERROR != MPI_SUCCESS) CU_BAD(bad, "MPI_Waitall status 1: error %d", st[1].MPI_ERROR);
        }
        /* still working */
        fill_sync(dB, 1);
        MPI_CK(MPI_Recv(dB, 1, t, 0, 86, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        expect_unpacked(v256, 1, 1, seed32 + 501, h1);
        cu_get(h3, dB, BYTES);
        bad += cu_differs(h3, h1, BYTES, "receive after truncation errors");
        MPI_CK(MPI_Type_free(&t));
    }
    cu_all_ok(bad, "truncation");
}

static void cancel(void **state)
{
    int bad = 0;
    (void)state;
    cu_watchdog("cancel", 60);
    if (cu_rank == 1) {
        MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
        MPI_Request r;
        MPI_Status st;
        int flag = 0;
        fill_sync(dB, seed32 + 600);
        MPI_CK(MPI_Irecv(dB, 1, t, 0, 999, MPI_COMM_WORLD, &r));
        MPI_CK(MPI_Cancel(&r));
        MPI_CK(MPI_Wait(&r, &st));
        MPI_CK(MPI_Test_cancelled(&st, &flag));
        if (!flag) CU_BAD(bad, "cancelled device receive: MPI_Test_cancelled false");
        cu_hfill(h1, BYTES, seed32 + 600);
        cu_get(h3, dB, BYTES);
        bad += cu_differs(h3, h1, BYTES, "cancelled device receive left the buffer alone");
        /* completed (not yet freed) receive: cancel is a no-op */
        MPI_CK(MPI_Irecv(dB, 1, t, 0, 91, MPI_COMM_WORLD, &r));
        MPI_CK(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD));
        for (flag = 0; !flag;) MPI_CK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
        MPI_CK(MPI_Cancel(&r));
        MPI_CK(MPI_Wait(&r, &st));
        MPI_CK(MPI_Test_cancelled(&st, &flag));
        if (flag) CU_BAD(bad, "a completed device receive reports cancelled");
        expect_unpacked(v256, 1, seed32 + 600, seed32 + 601, h1);
        cu_get(h3, dB, BYTES);
        bad += cu_differs(h3, h1, BYTES, "completed receive, cancel after completion");
        /* a freed active send still delivers */
        bad += recv_bytes_check(0, 92, v256, 1, seed32 + 602, "MPI_Request_free'd device send");
        MPI_CK(MPI_Type_free(&t));
    } else if (cu_rank == 0) {
        MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
        MPI_Request r;
        MPI_CK(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fill_sync(dA, seed32 + 601);
        MPI_CK(MPI_Send(dA, 1, t, 1, 91, MPI_COMM_WORLD));
        CU_CK(cu_k_fill(cu_us, dB, BYTES, seed32 + 602));
        MPI_CK(MPI_Isend(dB, 1, t, 1, 92, MPI_COMM_WORLD, &r));
        MPI_CK(MPI_Request_free(&r));
        if (r != MPI_REQUEST_NULL) CU_BAD(bad, "MPI_Request_free left the handle set");
        MPI_CK(MPI_Type_free(&t));
    }
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD)); /* rank 1 has the freed send's data: rank 0 may reuse dB */
    cu_all_ok(bad, "cancel and request free");
}

static void zero_and_proc_null(void **state)
{
    int bad = 0, flag = 0, n = -1;
    MPI_Datatype t = cu_tag(v256, CU_STREAM, cu_us);
    MPI_Request rq[2];
    MPI_Status st[2];
    (void)state;
    cu_watchdog("zero_and_proc_null", 60);
    MPI_CK(MPI_Isend(dA, 1, t, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &rq[0]));
    MPI_CK(MPI_Irecv(dB, 1, t, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &rq[1]));
    MPI_CK(MPI_Testall(2, rq, &flag, st));
    if (!flag) CU_BAD(bad, "MPI_PROC_NULL operations not complete at once");
    else {
        MPI_CK(MPI_Get_count(&st[1], t, &n));
        if (st[1].MPI_SOURCE != MPI_PROC_NULL || st[1].MPI_TAG != MPI_ANY_TAG || n != 0)
            CU_BAD(bad, "MPI_PROC_NULL receive status: source %d tag %d count %d", st[1].MPI_SOURCE, st[1].MPI_TAG, n);
    }
    if (cu_rank == 0) {
        MPI_CK(MPI_Send(dA, 0, t, 1, 95, MPI_COMM_WORLD));
        MPI_CK(MPI_Isend(NULL, 0, t, 1, 96, MPI_COMM_WORLD, &rq[0]));
        MPI_CK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    } else if (cu_rank == 1) {
        MPI_CK(MPI_Irecv(dB, 0, t, 0, 95, MPI_COMM_WORLD, &rq[0]));
        MPI_CK(MPI_Wait(&rq[0], &st[0]));
        MPI_CK(MPI_Get_count(&st[0], t, &n));
        if (n != 0 || st[0].MPI_SOURCE != 0 || st[0].MPI_TAG != 95)
            CU_BAD(bad, "zero-count device receive: count %d source %d tag %d", n, st[0].MPI_SOURCE, st[0].MPI_TAG);
        MPI_CK(MPI_Recv(h1, 0, MPI_INT, 0, 96, MPI_COMM_WORLD, &st[0]));
        MPI_CK(MPI_Get_count(&st[0], MPI_INT, &n));
        if (n != 0) CU_BAD(bad, "zero-count device send to a host receive: count %d", n);
    }
    MPI_CK(MPI_Type_free(&t));
    cu_all_ok(bad, "zero count and MPI_PROC_NULL");
}

int main(int argc, char **argv)
{
    int fails;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fig5_loop), cmocka_unit_test(non_overtaking), cmocka_unit_test(status_elements),
        cmocka_unit_test(any_source), cmocka_unit_test(truncation), cmocka_unit_test(cancel),
        cmocka_unit_test(zero_and_proc_null),
    };
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    seed32 = (unsigned)mpiacc_test_seed();
    CU_CK(cudaMalloc((void **)&dA, BYTES));
    CU_CK(cudaMalloc((void **)&dB, BYTES));
    h1 = malloc(BYTES), h2 = malloc(BYTES), h3 = malloc(BYTES);
    if (!h1 || !h2 || !h3) MPI_Abort(MPI_COMM_WORLD, 6);
    if (cu_size > 16) mpiacc_test_skip_all("at most 16 ranks");
    cu_gate_init(&gate);
    v256 = cu_vector_int(256, 2);
    fails = MPIACC_TEST_RUN("cuda_semantics", tests, NULL, NULL);
    cu_gate_free(&gate);
    MPI_Type_free(&v256);
    CU_CK(cudaFree(dA));
    CU_CK(cudaFree(dB));
    free(h1), free(h2), free(h3);
    return cu_fini(fails);
}
