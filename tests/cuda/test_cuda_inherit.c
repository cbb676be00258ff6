/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_inherit: attributes through derived datatypes on CUDA device
 * buffers (2 ranks sharing or not a GPU; skipped without one).  A vector
 * tagged MPIACC_BUF_CUDA + MPIACC_STREAM is wrapped (contiguous, struct +
 * resized, subarray, nested) and sent from device memory that a gated
 * kernel on that stream is still writing: the send must wait for it
 * (inherited stream) and the peer gets MPI_Pack's bytes of a host copy,
 * into host memory and into a device receive that inherits too.  Also:
 * disagreeing streams (MPI_ERR_TYPE naming both types), a CUDA tag put
 * with PMPI_Type_set_attr (first test, before any MPI_Type_set_attr),
 * empty messages from a NULL device pointer.
 */
#include "cu_p2p.h"

#define NB 8192 /* bytes of every buffer */
static unsigned char *dsrc, *ddst;
static cu_gate_t gate;

/* vector(16, 3, 5) of MPI_INT tagged CUDA on stream s (through PMPI when
 * pmpi), untagged when tag is 0. */
static MPI_Datatype vec(int tag, cudaStream_t s, int pmpi, const char *name)
{
    MPI_Datatype t;
    MPI_CK(MPI_Type_vector(16, 3, 5, MPI_INT, &t));
    MPI_CK(MPI_Type_commit(&t));
    if (name) MPI_CK(MPI_Type_set_name(t, name));
    if (tag && pmpi) {
        MPI_CK(PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA));
        MPI_CK(PMPI_Type_set_attr(t, MPIACC_STREAM, (void *)s));
    } else if (tag) {
        MPI_CK(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA));
        MPI_CK(MPI_Type_set_attr(t, MPIACC_STREAM, (void *)s));
    }
    return t;
}

enum { W_CONTIG, W_STRUCT_RESIZED, W_SUBARRAY, W_NESTED, W_COUNT };
static MPI_Datatype wrap(int w, MPI_Datatype b)
{
    MPI_Datatype t, u, v;
    MPI_Aint lb, ext;
    MPI_CK(MPI_Type_get_extent(b, &lb, &ext));
    switch (w) {
    case W_CONTIG: MPI_CK(MPI_Type_contiguous(2, b, &t)); break;
    case W_STRUCT_RESIZED: {
        int bl[2] = {1, 2};
        MPI_Aint d[2] = {16, ext + 16};
        MPI_Datatype ty[2] = {b, MPI_INT};
        MPI_CK(MPI_Type_create_struct(2, bl, d, ty, &u));
        MPI_CK(MPI_Type_create_resized(u, 0, ext + 40, &t));
        MPI_CK(MPI_Type_free(&u));
        break;
    }
    case W_SUBARRAY: {
        int sizes[2] = {3, 3}, sub[2] = {2, 2}, start[2] = {1, 0};
        MPI_CK(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, b, &t));
        break;
    }
    default:
        u = wrap(W_CONTIG, b);
        MPI_CK(MPI_Type_get_extent(u, &lb, &ext));
        MPI_CK(MPI_Type_create_hvector(2, 1, 2 * ext, u, &v));
        MPI_CK(MPI_Type_free(&u));
        MPI_CK(MPI_Type_contiguous(2, v, &t));
        MPI_CK(MPI_Type_free(&v));
        break;
    }
    MPI_CK(MPI_Type_commit(&t));
    return t;
}

/* Rank 0 fills dsrc behind a closed gate on cu_us and sends `t` from it at
 * once; the send must not complete before the gate opens.  Rank 1 receives
 * into `rt` (device memory when rdev) and compares with MPI_Pack/MPI_Unpack
 * of the untagged layout `h` on host copies.  Returns problems found. */
static int exchange(MPI_Datatype t, MPI_Datatype rt, MPI_Datatype h, int rdev, unsigned seed, int gated)
{
    static unsigned char src[NB], got[NB], want[NB], packed[NB];
    int bad = 0, pos = 0;
    MPI_Aint lb, ext;
    MPI_Request r;
    MPI_CK(MPI_Type_get_extent(h, &lb, &ext));
    if (lb < 0 || lb + ext > NB) fail_msg("layout too large for the test buffers");
    cu_hfill(src, NB, seed);
    if (cu_rank == 0) {
        if (gated) cu_gate_close(&gate);
        CU_CK(cu_k_gate_fill(cu_us, gated ? gate.d : NULL, dsrc, NB, seed, 20.0));
        MPI_CK(MPI_Isend(dsrc, 1, t, 1, (int)seed, MPI_COMM_WORLD, &r));
        if (gated && cu_completes_early(&r, 0.3, "send of an inherited-stream datatype")) bad++;
        if (gated) cu_gate_open(&gate);
        MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CU_CK(cudaStreamSynchronize(cu_us));
        if (gated && cu_gate_timed_out(&gate)) CU_BAD(bad, "gate timed out");
    } else {
        memset(got, 0xee, NB);
        memset(want, 0xee, NB);
        if (rdev) {
            cu_put(ddst, got, NB);
            MPI_CK(MPI_Recv(ddst, 1, rt, 0, (int)seed, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            cu_get(got, ddst, NB);
        } else {
            MPI_CK(MPI_Recv(got, 1, rt, 0, (int)seed, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        MPI_CK(PMPI_Pack(src, 1, h, packed, NB, &pos, MPI_COMM_SELF));
        pos = 0;
        MPI_CK(PMPI_Unpack(packed, NB, &pos, want, 1, h, MPI_COMM_SELF));
        bad += cu_differs(got, want, NB, rdev ? "device receive" : "host receive");
    }
    return bad;
}

/* A CUDA tag put through PMPI before any MPI_Type_set_attr: honoured at
 * the first call, also through a wrapper. */
static void pmpi_tag_first(void **state)
{
    MPI_Datatype v = vec(1, cu_us, 1, NULL), u = vec(0, NULL, 0, NULL), t = wrap(W_CONTIG, v),
                 h = wrap(W_CONTIG, u);
    int bad = exchange(v, u, u, 0, 1, 0);
    bad += exchange(t, h, h, 0, 2, 0);
    cu_all_ok(bad, "PMPI-tagged CUDA datatype");
    MPI_CK(MPI_Type_free(&t));
    MPI_CK(MPI_Type_free(&h));
    MPI_CK(MPI_Type_free(&v));
    MPI_CK(MPI_Type_free(&u));
}

static void wrappers(void **state)
{
    MPI_Datatype v = vec(1, cu_us, 0, "vecCUDA"), u = vec(0, NULL, 0, NULL);
    int bad = 0, gated = !cu_sanitizer;
    for (int w = 0; w < W_COUNT; w++) {
        MPI_Datatype t = wrap(w, v), h = wrap(w, u);
        bad += exchange(t, h, h, 0, 10 + w, gated);
        bad += exchange(t, t, h, 1, 20 + w, gated);
        MPI_CK(MPI_Type_free(&t));
        MPI_CK(MPI_Type_free(&h));
    }
    cu_all_ok(bad, "wrappers of a CUDA-tagged vector");
    MPI_CK(MPI_Type_free(&v));
    MPI_CK(MPI_Type_free(&u));
}

static void disagreeing_streams(void **state)
{
    MPI_Datatype a = vec(1, cu_us, 0, "vecS1"), b = vec(1, cu_us2, 0, "vecS2"), s;
    int bl[2] = {1, 1}, err, len;
    MPI_Aint lb, ext, d[2];
    MPI_Datatype ty[2] = {a, b};
    char msg[MPI_MAX_ERROR_STRING];
    MPI_CK(MPI_Type_get_extent(a, &lb, &ext));
    d[0] = 0, d[1] = ext;
    MPI_CK(MPI_Type_create_struct(2, bl, d, ty, &s));
    MPI_CK(MPI_Type_commit(&s));
    err = MPI_Send(dsrc, 1, s, 1 - cu_rank, 0, MPI_COMM_WORLD);
    assert_int_equal(cu_class(err), MPI_ERR_TYPE);
    MPI_Error_string(err, msg, &len);
    assert_non_null(strstr(msg, "vecS1"));
    assert_non_null(strstr(msg, "vecS2"));
    assert_non_null(strstr(msg, "MPIACC_STREAM"));
    MPI_CK(MPI_Type_free(&s));
    MPI_CK(MPI_Type_free(&a));
    MPI_CK(MPI_Type_free(&b));
}

static void empty_null_pointer(void **state)
{
    MPI_Datatype v = vec(1, cu_us, 0, NULL), t = wrap(W_CONTIG, v);
    int pos = 0;
    if (cu_rank == 0) MPI_CK(MPI_Send(NULL, 0, t, 1, 40, MPI_COMM_WORLD));
    else MPI_CK(MPI_Recv(NULL, 0, t, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CK(MPI_Pack(NULL, 0, t, NULL, 0, &pos, MPI_COMM_SELF));
    MPI_CK(MPI_Unpack(NULL, 0, &pos, NULL, 0, t, MPI_COMM_SELF));
    assert_int_equal(pos, 0);
    MPI_CK(MPI_Type_free(&t));
    MPI_CK(MPI_Type_free(&v));
}

int main(int argc, char **argv)
{
    int fails;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pmpi_tag_first), cmocka_unit_test(wrappers), cmocka_unit_test(disagreeing_streams),
        cmocka_unit_test(empty_null_pointer),
    };
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    CU_CK(cudaMalloc((void **)&dsrc, NB));
    CU_CK(cudaMalloc((void **)&ddst, NB));
    cu_gate_init(&gate);
    cu_gate_open(&gate);
    fails = MPIACC_TEST_RUN("cuda_inherit", tests, NULL, NULL);
    cu_gate_free(&gate);
    CU_CK(cudaFree(dsrc));
    CU_CK(cudaFree(ddst));
    return cu_fini(fails);
}
