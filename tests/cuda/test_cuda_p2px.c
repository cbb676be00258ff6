/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_p2px: issue 21's point-to-point extras on CUDA device memory
 * (needs a GPU; skipped without one; 2 ranks may share it): persistent
 * send/receive restarted many times with the stream's position captured at
 * each MPI_Start (a gated fill shows the send waits for work queued before
 * MPI_Start, not before MPI_Send_init), MPI_Sendrecv_replace,
 * MPI_Isendrecv_replace, MPI_Isendrecv, MPI_Bsend + MPI_Mprobe / MPI_Mrecv,
 * MPI_Imrecv; a refused call (MPI_Put) on a CUDA datatype.
 */
#include "cu_p2p.h"

#define NB 256
#define NINT (2 * NB)              /* vector: NB ints, stride 2 */
#define BYTES (NINT * (int)sizeof(int))
static int right, left;
static unsigned seed32;
static MPI_Datatype vec, vtag;
static int *ds, *dr;
static unsigned char *hs, *hr, *hexp;
static cu_gate_t gate;

/* What dr holds after receiving from `from` a fill of pattern `seed`,
 * over a buffer that held 0xEE bytes. */
static void expected(unsigned seed)
{
    cu_hfill(hs, BYTES, seed);
    memset(hexp, 0xEE, BYTES);
    for (int i = 0; i < NB; i++) memcpy(hexp + 2 * i * sizeof(int), hs + 2 * i * sizeof(int), sizeof(int));
}

static int check_recv(unsigned seed, const char *what)
{
    expected(seed);
    cu_get(hr, dr, BYTES);
    return cu_differs(hr, hexp, BYTES, what);
}

static void persistent(void **state)
{
    (void)state;
    int bad = 0;
    MPI_Request q[2];
    cu_watchdog("persistent", 120);
    MPI_CK(MPI_Recv_init(dr, 1, vtag, left, 1, MPI_COMM_WORLD, &q[0]));
    MPI_CK(MPI_Send_init(ds, 1, vtag, right, 1, MPI_COMM_WORLD, &q[1]));
    for (int it = 0; it < 30; it++) {
        CU_CK(cudaMemsetAsync(dr, 0xEE, BYTES, cu_us));
        CU_CK(cu_k_fill(cu_us, ds, BYTES, seed32 + 100 * it + (unsigned)cu_rank));
        MPI_CK(MPI_Startall(2, q));
        MPI_CK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        if (q[0] == MPI_REQUEST_NULL || q[1] == MPI_REQUEST_NULL) CU_BAD(bad, "persistent handle freed");
        bad += check_recv(seed32 + 100 * it + (unsigned)left, "persistent");
    }
    /* The dependency is taken at MPI_Start: a fill queued after the init
     * call and held by a gate is what is sent. */
    if (!cu_sanitizer) {
        cu_gate_close(&gate);
        CU_CK(cudaMemsetAsync(dr, 0xEE, BYTES, cu_us));
        CU_CK(cu_k_gate_fill(cu_us, gate.d, ds, BYTES, seed32 + 7777 + (unsigned)cu_rank, 60.0));
        MPI_CK(MPI_Start(&q[0]));
        MPI_CK(MPI_Start(&q[1]));
        cu_gate_open(&gate);
        MPI_CK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
        MPI_CK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        if (cu_gate_timed_out(&gate)) CU_BAD(bad, "gate timed out");
        bad += check_recv(seed32 + 7777 + (unsigned)left, "persistent gated");
    }
    MPI_CK(MPI_Request_free(&q[0]));
    MPI_CK(MPI_Request_free(&q[1]));
    cu_all_ok(bad, "persistent");
}

static void sendrecv_replace(void **state)
{
    (void)state;
    int bad = 0;
    MPI_Status st;
    MPI_Request q;
    cu_watchdog("sendrecv_replace", 120);
    for (int k = 0; k < 3; k++) {
        unsigned mine = seed32 + 1000 * (unsigned)(k + 1) + (unsigned)cu_rank;
        unsigned theirs = seed32 + 1000 * (unsigned)(k + 1) + (unsigned)left;
        if (k < 2) {
            /* dr is the one buffer: filled with mine, the vector replaced. */
            CU_CK(cu_k_fill(cu_us, dr, BYTES, mine));
            if (k == 0) MPI_CK(MPI_Sendrecv_replace(dr, 1, vtag, right, 2, left, 2, MPI_COMM_WORLD, &st));
            else {
                MPI_CK(MPI_Isendrecv_replace(dr, 1, vtag, right, 2, left, 2, MPI_COMM_WORLD, &q));
                MPI_CK(MPI_Wait(&q, &st));
            }
            cu_hfill(hexp, BYTES, mine);
            cu_hfill(hs, BYTES, theirs);
            for (int i = 0; i < NB; i++) memcpy(hexp + 2 * i * sizeof(int), hs + 2 * i * sizeof(int), sizeof(int));
            cu_get(hr, dr, BYTES);
            bad += cu_differs(hr, hexp, BYTES, k == 0 ? "MPI_Sendrecv_replace" : "MPI_Isendrecv_replace");
        } else {
            CU_CK(cudaMemsetAsync(dr, 0xEE, BYTES, cu_us));
            CU_CK(cu_k_fill(cu_us, ds, BYTES, mine));
            MPI_CK(MPI_Isendrecv(ds, 1, vtag, right, 2, dr, 1, vtag, left, 2, MPI_COMM_WORLD, &q));
            MPI_CK(MPI_Wait(&q, &st));
            bad += check_recv(theirs, "MPI_Isendrecv");
        }
        if (st.MPI_SOURCE != left || st.MPI_TAG != 2) CU_BAD(bad, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    }
    cu_all_ok(bad, "sendrecv_replace");
}

static void bsend_mrecv(void **state)
{
    (void)state;
    int bad = 0, size = 0;
    void *att, *old;
    MPI_Message m;
    MPI_Status st;
    MPI_Request q;
    cu_watchdog("bsend_mrecv", 120);
    MPI_CK(MPI_Pack_size(1, vtag, MPI_COMM_WORLD, &size));
    att = malloc((size_t)size + MPI_BSEND_OVERHEAD);
    MPI_CK(MPI_Buffer_attach(att, size + MPI_BSEND_OVERHEAD));
    for (int k = 0; k < 2; k++) {
        CU_CK(cudaMemsetAsync(dr, 0xEE, BYTES, cu_us));
        CU_CK(cu_k_fill(cu_us, ds, BYTES, seed32 + 5000 + (unsigned)(10 * k + cu_rank)));
        MPI_CK(MPI_Bsend(ds, 1, vtag, right, 3, MPI_COMM_WORLD));
        CU_CK(cudaMemsetAsync(ds, 0x55, BYTES, cu_us)); /* buffered at the call */
        MPI_CK(MPI_Mprobe(left, 3, MPI_COMM_WORLD, &m, &st));
        if (k == 0) MPI_CK(MPI_Mrecv(dr, 1, vtag, &m, &st));
        else {
            MPI_CK(MPI_Imrecv(dr, 1, vtag, &m, &q));
            MPI_CK(MPI_Wait(&q, &st));
        }
        bad += check_recv(seed32 + 5000 + (unsigned)(10 * k + left), k ? "MPI_Imrecv" : "MPI_Mrecv");
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_CK(MPI_Buffer_detach(&old, &size));
    free(att);
    cu_all_ok(bad, "bsend_mrecv");
}

static void refused(void **state)
{
    (void)state;
    int bad = 0, cls = 0;
    MPI_Win win;
    MPI_CK(MPI_Win_create(hr, BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_CK(MPI_Win_fence(0, win));
    MPI_Error_class(MPI_Put(ds, 1, vtag, right, 0, 1, vec, win), &cls);
    if (cls != MPI_ERR_TYPE) CU_BAD(bad, "MPI_Put of a CUDA datatype: class %d", cls);
    MPI_CK(MPI_Win_fence(0, win));
    MPI_CK(MPI_Win_free(&win));
    cu_all_ok(bad, "refused");
}

int main(int argc, char **argv)
{
    int fails;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(persistent), cmocka_unit_test(sendrecv_replace), cmocka_unit_test(bsend_mrecv),
        cmocka_unit_test(refused),
    };
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: mpiexec -n 2 %s\nIssue 21's point-to-point extras on CUDA memory (skipped without a GPU).\n",
               argv[0]);
        return 0;
    }
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    right = (cu_rank + 1) % cu_size;
    left = (cu_rank + cu_size - 1) % cu_size;
    seed32 = (unsigned)mpiacc_test_seed();
    CU_CK(cudaMalloc((void **)&ds, BYTES));
    CU_CK(cudaMalloc((void **)&dr, BYTES));
    hs = malloc(BYTES), hr = malloc(BYTES), hexp = malloc(BYTES);
    if (!hs || !hr || !hexp) MPI_Abort(MPI_COMM_WORLD, 6);
    cu_gate_init(&gate);
    MPI_CK(MPI_Type_vector(NB, 1, 2, MPI_INT, &vec));
    MPI_CK(MPI_Type_commit(&vec));
    vtag = cu_tag(vec, CU_STREAM, cu_us);
    fails = MPIACC_TEST_RUN("cuda_p2px", tests, NULL, NULL);
    MPI_Type_free(&vtag);
    MPI_Type_free(&vec);
    cu_gate_free(&gate);
    CU_CK(cudaFree(ds));
    CU_CK(cudaFree(dr));
    free(hs), free(hr), free(hexp);
    return cu_fini(fails);
}
