/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_coll: collectives on CUDA buffers through the public API
 * (issue 21), every rank sharing GPU 0 (MPS advised), on each engine
 * (MPIACC_COLL_ENGINE).  Skipped without a
 * CUDA device.  Data are written on the user stream right before each call
 * (cudaMemcpyAsync, no synchronisation: the stream is the dependency) and
 * read back after completion.
 *  allreduce            MPI_Allreduce (MPI_SUM) and in place, MPI_Iallreduce_c
 *  bcast_mixed          MPI_Bcast from a device root to host buffers on odd ranks
 *                       (MPIACC_COLL_ENGINE=staged; else device buffers everywhere)
 *  alltoallw_vectors    MPI_Alltoallw of strided vectors, device on even ranks (the same)
 *  neighbor_halo        MPI_Neighbor_alltoallw of subarray faces on a periodic 1-D
 *                       Cartesian communicator (halo exchange)
 *  nonblocking_order    MPI_Iallgather + MPI_Ibcast + host MPI_Iallreduce, reverse Waitall
 */
#include "cu_p2p.h"
#include "core/env.h"

/* MPIACC_COLL_ENGINE=staged: ranks may mix device and host buffers in one
 * collective (otherwise every rank passes device buffers, or none). */
static int mixed;

#define M 4096

static int *dev_ints(size_t n)
{
    int *d = NULL;
    CU_CK(cudaMalloc((void **)&d, n * sizeof(int)));
    return d;
}

static void put(int *d, const int *h, size_t n)
{
    CU_CK(cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, cu_us));
}

static void get(int *h, const int *d, size_t n) { CU_CK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost)); }

static void allreduce(void **state)
{
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us);
    int *h = malloc(sizeof(int) * M), *o = malloc(sizeof(int) * M), *da = dev_ints(M), *db = dev_ints(M), bad = 0;
    MPI_Request r;
    for (int i = 0; i < M; i++) h[i] = i * (cu_rank + 1);
    put(da, h, M);
    MPI_CK(MPI_Allreduce(da, db, M, t, MPI_SUM, MPI_COMM_WORLD));
    get(o, db, M);
    for (int i = 0; i < M; i++)
        if (o[i] != i * cu_size * (cu_size + 1) / 2) CU_BAD(bad, "allreduce[%d] = %d", i, o[i]);
    put(da, h, M);
    MPI_CK(MPI_Allreduce(MPI_IN_PLACE, da, M, t, MPI_MAX, MPI_COMM_WORLD));
    get(o, da, M);
    for (int i = 0; i < M && !bad; i++)
        if (o[i] != i * cu_size) CU_BAD(bad, "in place max[%d] = %d", i, o[i]);
    put(da, h, M);
    MPI_CK(MPI_Iallreduce_c(da, db, M, t, MPI_SUM, MPI_COMM_WORLD, &r));
    MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    get(o, db, M);
    for (int i = 0; i < M && !bad; i++)
        if (o[i] != i * cu_size * (cu_size + 1) / 2) CU_BAD(bad, "iallreduce_c[%d] = %d", i, o[i]);
    cu_all_ok(bad, "allreduce");
    CU_CK(cudaFree(da));
    CU_CK(cudaFree(db));
    free(h), free(o);
    MPI_Type_free(&t);
}

static void bcast_mixed(void **state)
{
    MPI_Datatype v = cu_vector_int(M / 2, 2), tv = cu_tag(v, CU_STREAM, cu_us);
    int *h = malloc(sizeof(int) * M), *d = dev_ints(M), bad = 0, dev = !mixed || cu_rank % 2 == 0;
    for (int i = 0; i < M; i++) h[i] = cu_rank == 0 ? i + 7 : -1;
    if (dev) put(d, h, M);
    MPI_CK(MPI_Bcast(dev ? (void *)d : h, 1, dev ? tv : v, 0, MPI_COMM_WORLD));
    if (dev) get(h, d, M);
    for (int i = 0; i < M; i++) {
        int want = i % 2 == 0 || cu_rank == 0 ? i + 7 : -1;
        if (h[i] != want) {
            CU_BAD(bad, "bcast[%d] = %d, want %d", i, h[i], want);
            break;
        }
    }
    cu_all_ok(bad, "bcast_mixed");
    CU_CK(cudaFree(d));
    free(h);
    MPI_Type_free(&v);
    MPI_Type_free(&tv);
}

static void alltoallw_vectors(void **state)
{
    enum { B = 256 }; /* ints per block, every other one sent */
    MPI_Datatype v = cu_vector_int(B / 2, 2), tv = cu_tag(v, CU_STREAM, cu_us), *ts = malloc(sizeof *ts * cu_size);
    int *cnt = malloc(sizeof(int) * cu_size), *dsp = malloc(sizeof(int) * cu_size), bad = 0;
    int dev = !mixed || cu_rank % 2 == 0;
    int *hs = malloc(sizeof(int) * B * cu_size), *hr = malloc(sizeof(int) * B * cu_size);
    int *ds = dev_ints((size_t)B * cu_size), *dr = dev_ints((size_t)B * cu_size);
    for (int p = 0; p < cu_size; p++) ts[p] = dev ? tv : v, cnt[p] = 1, dsp[p] = p * B * (int)sizeof(int);
    for (int i = 0; i < B * cu_size; i++) hs[i] = cu_rank * 1000000 + i, hr[i] = -1;
    if (dev) put(ds, hs, (size_t)B * cu_size), put(dr, hr, (size_t)B * cu_size);
    MPI_CK(MPI_Alltoallw(dev ? (void *)ds : hs, cnt, dsp, ts, dev ? (void *)dr : hr, cnt, dsp, ts, MPI_COMM_WORLD));
    if (dev) get(hr, dr, (size_t)B * cu_size);
    for (int p = 0; p < cu_size && !bad; p++)
        for (int i = 0; i < B; i++) {
            int want = i % 2 == 0 ? p * 1000000 + cu_rank * B + i : -1;
            if (hr[p * B + i] != want) {
                CU_BAD(bad, "alltoallw from %d [%d] = %d, want %d", p, i, hr[p * B + i], want);
                break;
            }
        }
    cu_all_ok(bad, "alltoallw_vectors");
    CU_CK(cudaFree(ds));
    CU_CK(cudaFree(dr));
    free(hs), free(hr), free(ts), free(cnt), free(dsp);
    MPI_Type_free(&v);
    MPI_Type_free(&tv);
}

static void neighbor_halo(void **state)
{
    /* a 34 x 32 array of ints per rank: rows 1..32 interior, 0 and 33 halos */
    enum { R = 34, C = 32 };
    int sizes[2] = {R, C}, sub[2] = {1, C}, st[4][2] = {{1, 0}, {R - 2, 0}, {0, 0}, {R - 1, 0}};
    int dims[1] = {0}, per[1] = {1}, bad = 0, left, right;
    MPI_Datatype face[4], tf[4];
    MPI_Comm cart;
    MPI_Count cnt[2] = {1, 1};
    MPI_Aint dsp[2] = {0, 0};
    int *h = malloc(sizeof(int) * R * C), *d = dev_ints((size_t)R * C);
    MPI_CK(MPI_Dims_create(cu_size, 1, dims));
    MPI_CK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart));
    MPI_CK(MPI_Cart_shift(cart, 0, 1, &left, &right));
    for (int f = 0; f < 4; f++) {
        MPI_CK(MPI_Type_create_subarray(2, sizes, sub, st[f], MPI_ORDER_C, MPI_INT, &face[f]));
        MPI_CK(MPI_Type_commit(&face[f]));
        tf[f] = cu_tag(face[f], CU_STREAM, cu_us);
    }
    for (int i = 0; i < R * C; i++) h[i] = i / C == 0 || i / C == R - 1 ? -1 : cu_rank * 100000 + i;
    put(d, h, (size_t)R * C);
    /* send the first interior row left, the last right; receive the halos */
    MPI_CK(MPI_Neighbor_alltoallw_c(d, cnt, dsp, (MPI_Datatype[]){tf[0], tf[1]}, d, cnt, dsp,
                                    (MPI_Datatype[]){tf[2], tf[3]}, cart));
    get(h, d, (size_t)R * C);
    for (int j = 0; j < C; j++) {
        if (h[j] != left * 100000 + (R - 2) * C + j) CU_BAD(bad, "top halo[%d] = %d", j, h[j]);
        if (h[(R - 1) * C + j] != right * 100000 + C + j) CU_BAD(bad, "bottom halo[%d] = %d", j, h[(R - 1) * C + j]);
        if (bad) break;
    }
    cu_all_ok(bad, "neighbor_halo");
    for (int f = 0; f < 4; f++) MPI_Type_free(&face[f]), MPI_Type_free(&tf[f]);
    MPI_Comm_free(&cart);
    CU_CK(cudaFree(d));
    free(h);
}

static void nonblocking_order(void **state)
{
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us);
    int *dg = dev_ints((size_t)cu_size), *db = dev_ints(M), *hg = malloc(sizeof(int) * cu_size);
    int *hb = malloc(sizeof(int) * M), hs = cu_rank, hr = -1, bad = 0;
    MPI_Request r[3];
    for (int i = 0; i < M; i++) hb[i] = cu_rank == 0 ? 3 * i : 0;
    put(db, hb, M);
    MPI_CK(MPI_Iallgather(&cu_rank, 1, MPI_INT, dg, 1, t, MPI_COMM_WORLD, &r[0]));
    MPI_CK(MPI_Ibcast(db, M, t, 0, MPI_COMM_WORLD, &r[1]));
    MPI_CK(MPI_Iallreduce(&hs, &hr, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[2]));
    MPI_CK(MPI_Waitall(3, (MPI_Request[]){r[2], r[1], r[0]}, MPI_STATUSES_IGNORE));
    get(hg, dg, (size_t)cu_size);
    get(hb, db, M);
    for (int p = 0; p < cu_size; p++)
        if (hg[p] != p) CU_BAD(bad, "allgather[%d] = %d", p, hg[p]);
    for (int i = 0; i < M && !bad; i++)
        if (hb[i] != 3 * i) CU_BAD(bad, "ibcast[%d] = %d", i, hb[i]);
    if (hr != cu_size * (cu_size - 1) / 2) CU_BAD(bad, "iallreduce = %d", hr);
    cu_all_ok(bad, "nonblocking_order");
    CU_CK(cudaFree(dg));
    CU_CK(cudaFree(db));
    free(hg), free(hb);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    int failed;
    if (mpiacc_test_help(argc, argv, "usage: %s\nCollectives on CUDA buffers (skipped without a CUDA device).\n"))
        return 0;
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    mixed = mpiacc_env_enum("MPIACC_COLL_ENGINE") == 3; /* auto|nccl|ipc|staged */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(allreduce), cmocka_unit_test(bcast_mixed), cmocka_unit_test(alltoallw_vectors),
        cmocka_unit_test(neighbor_halo), cmocka_unit_test(nonblocking_order),
    };
    failed = MPIACC_TEST_RUN("cuda_coll", tests, NULL, NULL);
    return cu_fini(failed);
}
