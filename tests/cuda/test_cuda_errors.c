/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_errors: bad inputs on CUDA-tagged datatypes through the public
 * API (one process).  Every row of the table is tried with every call
 * (MPI_Isend and MPI_Send to self, MPI_Irecv, MPI_Recv, MPI_Sendrecv with
 * the bad type on either side, MPI_Pack, MPI_Unpack): each must return an
 * error of the expected class with a readable MPI_Error_string, at once
 * (a watchdog catches hangs).  Afterwards a valid exchange still works and
 * no operation is left pending (MPI_Finalize would have to report it).
 */
#include "cu_p2p.h"
#include "reqpool/reqpool.h"

#define NI 1024
static unsigned char *dbuf, *dpk;
static MPI_Datatype vec;

enum { C_ISEND, C_SEND, C_IRECV, C_RECV, C_SENDRECV_S, C_SENDRECV_R, C_PACK, C_UNPACK, NCALL };
static const char *call_name[NCALL] = {"MPI_Isend", "MPI_Send", "MPI_Irecv", "MPI_Recv", "MPI_Sendrecv (bad send type)",
                                       "MPI_Sendrecv (bad receive type)", "MPI_Pack", "MPI_Unpack"};

static int call(int c, MPI_Datatype t, int count)
{
    MPI_Request r = MPI_REQUEST_NULL;
    static int hostbuf[2 * NI];
    int pos = 0, err;
    switch (c) {
    case C_ISEND:
        err = MPI_Isend(dbuf, count, t, 0, 1, MPI_COMM_WORLD, &r);
        if (err == MPI_SUCCESS) MPI_Wait(&r, MPI_STATUS_IGNORE); /* unexpected: do not leave it behind */
        return err;
    case C_SEND: return MPI_Send(dbuf, count, t, 0, 2, MPI_COMM_WORLD);
    case C_IRECV:
        err = MPI_Irecv(dbuf, count, t, 0, 3, MPI_COMM_WORLD, &r);
        if (err == MPI_SUCCESS) {
            MPI_Cancel(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        return err;
    case C_RECV: return MPI_Recv(dbuf, count, t, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    case C_SENDRECV_S:
        return MPI_Sendrecv(dbuf, count, t, 0, 5, hostbuf, 2 * NI, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    case C_SENDRECV_R:
        return MPI_Sendrecv(hostbuf, 0, MPI_INT, 0, 6, dbuf, count, t, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    case C_PACK: return MPI_Pack(dbuf, count, t, dpk, 4 * NI, &pos, MPI_COMM_WORLD);
    default: return MPI_Unpack(dpk, 4 * NI, &pos, dbuf, count, t, MPI_COMM_WORLD);
    }
}

typedef struct row {
    const char *name;
    int cls;   /* expected error class */
    int count; /* count passed */
    void *buftype, *device, *event;
    int set_device, set_event, stream_dev; /* stream_dev >= 0: a stream of that device */
    int uncommitted;
} row_t;

static MPI_Datatype make(const row_t *w, cudaStream_t *made)
{
    MPI_Datatype t;
    *made = NULL;
    if (w->uncommitted) MPI_CK(MPI_Type_vector(NI / 2, 1, 2, MPI_INT, &t));
    else MPI_CK(MPI_Type_dup(vec, &t));
    MPI_CK(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA));
    /* Invalid values are refused by MPI_Type_set_attr (test_err_attrs); put
     * behind mpiacc's back, every call must still refuse them. */
    if (w->buftype) PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, w->buftype);
    if (w->set_device) PMPI_Type_set_attr(t, MPIACC_DEVICE, w->device);
    if (w->set_event) MPI_CK(MPI_Type_set_attr(t, MPIACC_EVENT, w->event));
    if (w->stream_dev >= 0) {
        CU_CK(cudaSetDevice(w->stream_dev));
        CU_CK(cudaStreamCreateWithFlags(made, cudaStreamNonBlocking));
        CU_CK(cudaSetDevice(cu_dev));
        MPI_CK(MPI_Type_set_attr(t, MPIACC_STREAM, (void *)*made));
    }
    return t;
}

static void bad_inputs(void **state)
{
    const row_t rows[] = {
        {"MPIACC_DEVICE beyond the device count", MPI_ERR_ARG, 1, NULL, (void *)(intptr_t)(cu_ndev + 3), NULL, 1, 0, -1, 0},
        {"MPIACC_DEVICE negative", MPI_ERR_ARG, 1, NULL, (void *)(intptr_t)-1, NULL, 1, 0, -1, 0},
        {"MPIACC_EVENT NULL", MPI_ERR_ARG, 1, NULL, NULL, NULL, 0, 1, -1, 0},
        {"MPIACC_BUF_TYPE not a valid value", MPI_ERR_ARG, 1, (void *)(intptr_t)99, NULL, NULL, 0, 0, -1, 0},
        {"MPIACC_STREAM of device 1 with MPIACC_DEVICE 0", MPI_ERR_ARG, 1, NULL, (void *)(intptr_t)0, NULL, 1, 0, 1, 0},
        {"negative count", MPI_ERR_COUNT, -1, NULL, NULL, NULL, 0, 0, -1, 0},
        {"uncommitted datatype", MPI_ERR_TYPE, 1, NULL, NULL, NULL, 0, 0, -1, 1},
    };
    int bad = 0, tried = 0;
    (void)state;
    cu_watchdog("bad_inputs", 60);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row_t *w = &rows[i];
        cudaStream_t made;
        MPI_Datatype t;
        if (w->stream_dev >= cu_ndev) {
            printf("row \"%s\": skipped (needs %d devices)\n", w->name, w->stream_dev + 1);
            continue;
        }
        t = make(w, &made);
        for (int c = 0; c < NCALL; c++) {
            char msg[MPI_MAX_ERROR_STRING] = "";
            int len = 0, err, cls;
            if (w->count < 0 && (c == C_SENDRECV_S || c == C_SENDRECV_R)) continue; /* MPI checks the int count */
            err = call(c, t, w->count);
            cls = cu_class(err);
            if (err != MPI_SUCCESS) MPI_Error_string(err, msg, &len);
            tried++;
            if (cls != w->cls || len == 0)
                CU_BAD(bad, "%s with %s: class %d (\"%s\"), expected class %d", call_name[c], w->name, cls, msg, w->cls);
            else if (c == C_ISEND)
                printf("%-50s -> %s\n", w->name, msg);
        }
        MPI_CK(MPI_Type_free(&t));
        if (made) CU_CK(cudaStreamDestroy(made));
    }
    /* packed-buffer bounds: MPI_Pack into too small a device buffer, MPI_Unpack past its end */
    {
        MPI_Datatype t = cu_tag(vec, CU_STREAM, cu_us);
        int pos = 0, err = MPI_Pack(dbuf, 1, t, dpk, 100, &pos, MPI_COMM_WORLD);
        if (cu_class(err) != MPI_ERR_TRUNCATE) CU_BAD(bad, "MPI_Pack into 100 bytes: class %d", cu_class(err));
        if (pos != 0) CU_BAD(bad, "failed MPI_Pack moved the position to %d", pos);
        pos = 4 * NI - 100;
        err = MPI_Unpack(dpk, 4 * NI, &pos, dbuf, 1, t, MPI_COMM_WORLD);
        if (cu_class(err) != MPI_ERR_TRUNCATE) CU_BAD(bad, "MPI_Unpack past the end: class %d", cu_class(err));
        tried += 2;
        MPI_CK(MPI_Type_free(&t));
    }
    /* still working, nothing left behind */
    {
        MPI_Datatype t = cu_tag(vec, CU_STREAM, cu_us);
        unsigned char *h = malloc(8 * NI), *g = malloc(8 * NI);
        cu_hfill(h, 8 * NI, 5);
        cu_put(dpk, h, 8 * NI);
        CU_CK(cudaMemsetAsync(dbuf, 0, 8 * NI, cu_us)); /* ordered by MPIACC_STREAM */
        MPI_CK(MPI_Sendrecv(dpk, 1, t, 0, 9, dbuf, 1, t, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        cu_get(g, dbuf, 8 * NI);
        for (int i = 0; i < NI / 2; i++)
            if (memcmp(g + 8 * i, h + 8 * i, 4) != 0) {
                CU_BAD(bad, "valid exchange after the errors: int %d wrong", 2 * i);
                break;
            }
        free(h), free(g);
        MPI_CK(MPI_Type_free(&t));
        if (mpiacc_rp_pending() != 0)
            CU_BAD(bad, "%d operations left pending after the errors", mpiacc_rp_pending());
    }
    printf("%d bad-input calls checked\n", tried);
    cu_all_ok(bad, "bad inputs");
}

int main(int argc, char **argv)
{
    int fails;
    const struct CMUnitTest tests[] = {cmocka_unit_test(bad_inputs)};
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 1);
    CU_CK(cudaMalloc((void **)&dbuf, 8 * NI));
    CU_CK(cudaMalloc((void **)&dpk, 8 * NI));
    vec = cu_vector_int(NI / 2, 2);
    fails = MPIACC_TEST_RUN("cuda_errors", tests, NULL, NULL);
    MPI_Type_free(&vec);
    CU_CK(cudaFree(dbuf));
    CU_CK(cudaFree(dpk));
    return cu_fini(fails);
}
