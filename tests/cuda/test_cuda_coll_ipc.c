/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_coll_ipc: the IPC collective engine (issue 24; run with
 * MPIACC_COLL_ENGINE=ipc, every rank on GPU 0, MPS advised — the engine
 * chosen anyway where ranks share a GPU) on CUDA buffers: each blocking
 * collective's result, and that it ran on the device (MPIACC_Get_stats:
 * coll_device; reductions only when the CUDA backend's IPC table reduces).
 * Data are written on the user stream right before each call (no
 * synchronisation: the stream is the dependency).  Skipped without a CUDA
 * device or another MPIACC_COLL_ENGINE.
 *  bcast          MPI_Bcast of ints and of a strided vector, root 1
 *  allgather      MPI_Allgather, in place too; MPI_Allgatherv with gaps
 *  alltoall       MPI_Alltoall; MPI_Alltoallv with per-pair counts
 *  neighbor_halo  MPI_Neighbor_alltoallw of subarray faces, periodic ring
 *  reductions     MPI_Allreduce one-shot, two-phase (4 MiB + 12 B) and in place;
 *                 MPI_Reduce (root last, and in place)
 *  fallback       every rank with a host send buffer and a device receive
 *                 buffer: staged everywhere, right; one rank with host
 *                 buffers under MPIACC_COLL_CHECK: MPI_ERR_ARG everywhere
 *  nonblocking    MPI_Ibcast, MPI_Iallgather, MPI_Ialltoall, MPI_Iallreduce
 *                 (one-shot, in place), MPI_Ireduce outstanding together with
 *                 a blocking MPI_Allreduce among them; MPI_Waitall, MPI_Test
 */
#include "cu_p2p.h"
#include "core/backend_ipc.h"
#include "core/env.h"
#include "coll/coll.h"

static unsigned long long dev_runs(void)
{
    MPIACC_Stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    MPIACC_Get_stats(&st);
    return st.coll_device;
}

static int reduces_on_device(void)
{
    const mpiacc_backend_t *be = mpiacc_backend_get(MPIACC_KIND_CUDA);
    return be && be->ipc && be->ipc->import_reduce && be->ipc->reduce_supported;
}

/* *bad when the call did not run on the device although it should have. */
static void on_device(unsigned long long before, int want, const char *what, int *bad)
{
    unsigned long long now = dev_runs();
    if (want && now != before + 1) CU_BAD(*bad, "%s: did not run on the device (%llu runs)", what, now - before);
    if (!want && now != before) CU_BAD(*bad, "%s: ran on the device", what);
}

static int *dints(size_t n)
{
    int *d = NULL;
    CU_CK(cudaMalloc((void **)&d, (n ? n : 1) * sizeof(int)));
    return d;
}

static void put(int *d, const int *h, size_t n)
{
    CU_CK(cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, cu_us));
}

static void get(int *h, const int *d, size_t n) { CU_CK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost)); }

static int check(const int *got, const int *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "[rank %d] %s[%zu] = %d, want %d\n", cu_rank, what, i, got[i], want[i]);
            return 1;
        }
    return 0;
}

static void bcast(void **state)
{
    enum { M = 100000 };
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us), v = cu_vector_int(M / 2, 2), tv = cu_tag(v, CU_STREAM, cu_us);
    int *h = malloc(sizeof(int) * M), *w = malloc(sizeof(int) * M), *d = dints(M), bad = 0, root = 1 % cu_size;
    unsigned long long r0;
    for (int i = 0; i < M; i++) h[i] = cu_rank == root ? 3 * i + 1 : -1, w[i] = 3 * i + 1;
    put(d, h, M);
    r0 = dev_runs();
    MPI_CK(MPI_Bcast(d, M, t, root, MPI_COMM_WORLD));
    on_device(r0, 1, "bcast", &bad);
    get(h, d, M);
    bad += check(h, w, M, "bcast");
    for (int i = 0; i < M; i++) h[i] = cu_rank == root ? i : -2, w[i] = i % 2 == 0 || cu_rank == root ? i : -2;
    put(d, h, M);
    r0 = dev_runs();
    MPI_CK(MPI_Bcast(d, 1, tv, root, MPI_COMM_WORLD));
    on_device(r0, 1, "bcast vector", &bad);
    get(h, d, M);
    bad += check(h, w, M, "bcast vector");
    cu_all_ok(bad, "bcast");
    CU_CK(cudaFree(d));
    free(h), free(w);
    MPI_Type_free(&t), MPI_Type_free(&v), MPI_Type_free(&tv);
}

static void allgather(void **state)
{
    enum { K = 3000 };
    int P = cu_size, n = K * P + 64 * P, bad = 0, *cnt = malloc(sizeof(int) * P), *dsp = malloc(sizeof(int) * P);
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us);
    int *hs = malloc(sizeof(int) * K), *hr = malloc(sizeof(int) * n), *w = malloc(sizeof(int) * n);
    int *ds = dints(K), *dr = dints((size_t)n);
    unsigned long long r0;
    for (int i = 0; i < K; i++) hs[i] = cu_rank * 100000 + i;
    for (int i = 0; i < n; i++) hr[i] = -1;
    put(ds, hs, K), put(dr, hr, (size_t)n);
    r0 = dev_runs();
    MPI_CK(MPI_Allgather(ds, K, t, dr, K, t, MPI_COMM_WORLD));
    on_device(r0, 1, "allgather", &bad);
    get(hr, dr, (size_t)K * P);
    for (int i = 0; i < K * P; i++) w[i] = (i / K) * 100000 + i % K;
    bad += check(hr, w, (size_t)K * P, "allgather");
    /* in place: this rank's block already in the receive buffer */
    for (int i = 0; i < K * P; i++) hr[i] = i / K == cu_rank ? w[i] : -1;
    put(dr, hr, (size_t)K * P);
    r0 = dev_runs();
    MPI_CK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, dr, K, t, MPI_COMM_WORLD));
    on_device(r0, 1, "allgather in place", &bad);
    get(hr, dr, (size_t)K * P);
    bad += check(hr, w, (size_t)K * P, "allgather in place");
    /* allgatherv: rank p sends p + 1 hundred ints, blocks 64 ints apart */
    for (int p = 0, at = 0; p < P; p++) cnt[p] = 100 * (p + 1), dsp[p] = at, at += cnt[p] + 64;
    for (int i = 0; i < n; i++) hr[i] = -1, w[i] = -1;
    for (int p = 0; p < P; p++)
        for (int i = 0; i < cnt[p]; i++) w[dsp[p] + i] = p * 100000 + i;
    put(dr, hr, (size_t)n);
    r0 = dev_runs();
    MPI_CK(MPI_Allgatherv(ds, cnt[cu_rank], t, dr, cnt, dsp, t, MPI_COMM_WORLD));
    on_device(r0, 1, "allgatherv", &bad);
    get(hr, dr, (size_t)n);
    bad += check(hr, w, (size_t)n, "allgatherv");
    cu_all_ok(bad, "allgather");
    CU_CK(cudaFree(ds));
    CU_CK(cudaFree(dr));
    free(hs), free(hr), free(w), free(cnt), free(dsp);
    MPI_Type_free(&t);
}

static void alltoall(void **state)
{
    enum { K = 2000 };
    int P = cu_size, bad = 0, *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us);
    int *hs = malloc(sizeof(int) * K * P), *hr = malloc(sizeof(int) * K * P), *w = malloc(sizeof(int) * K * P);
    int *ds = dints((size_t)K * P), *dr = dints((size_t)K * P);
    unsigned long long r0;
    for (int i = 0; i < K * P; i++) hs[i] = cu_rank * 1000000 + i, hr[i] = -1;
    put(ds, hs, (size_t)K * P), put(dr, hr, (size_t)K * P);
    r0 = dev_runs();
    MPI_CK(MPI_Alltoall(ds, K, t, dr, K, t, MPI_COMM_WORLD));
    on_device(r0, 1, "alltoall", &bad);
    get(hr, dr, (size_t)K * P);
    for (int p = 0; p < P; p++)
        for (int i = 0; i < K; i++) w[p * K + i] = p * 1000000 + cu_rank * K + i;
    bad += check(hr, w, (size_t)K * P, "alltoall");
    /* alltoallv: a -> b carries 10 (a + b + 1) ints */
    for (int p = 0, s = 0, r = 0; p < P; p++) {
        sc[p] = rc[p] = 10 * (cu_rank + p + 1);
        sd[p] = s, rd[p] = r + 5;
        s += sc[p], r += rc[p] + 5;
    }
    for (int i = 0; i < K * P; i++) hr[i] = -1, w[i] = -1;
    /* (p's block for this rank starts after its blocks for ranks < this one) */
    for (int p = 0; p < P; p++) {
        int off = 0;
        for (int q = 0; q < cu_rank; q++) off += 10 * (p + q + 1);
        for (int i = 0; i < rc[p]; i++) w[rd[p] + i] = p * 1000000 + off + i;
    }
    put(dr, hr, (size_t)K * P);
    r0 = dev_runs();
    MPI_CK(MPI_Alltoallv(ds, sc, sd, t, dr, rc, rd, t, MPI_COMM_WORLD));
    on_device(r0, 1, "alltoallv", &bad);
    get(hr, dr, (size_t)K * P);
    bad += check(hr, w, (size_t)K * P, "alltoallv");
    cu_all_ok(bad, "alltoall");
    CU_CK(cudaFree(ds));
    CU_CK(cudaFree(dr));
    free(hs), free(hr), free(w), free(sc), free(sd), free(rc), free(rd);
    MPI_Type_free(&t);
}

static void neighbor_halo(void **state)
{
    enum { R = 34, C = 64 };
    int sizes[2] = {R, C}, sub[2] = {1, C}, st[4][2] = {{1, 0}, {R - 2, 0}, {0, 0}, {R - 1, 0}};
    int dims[1] = {0}, per[1] = {1}, bad = 0, left, right;
    MPI_Datatype face[4], tf[4];
    MPI_Comm cart;
    MPI_Count cnt[2] = {1, 1};
    MPI_Aint dsp[2] = {0, 0};
    int *h = malloc(sizeof(int) * R * C), *d = dints((size_t)R * C);
    unsigned long long r0;
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
    r0 = dev_runs();
    MPI_CK(MPI_Neighbor_alltoallw_c(d, cnt, dsp, (MPI_Datatype[]){tf[0], tf[1]}, d, cnt, dsp,
                                    (MPI_Datatype[]){tf[2], tf[3]}, cart));
    on_device(r0, 1, "neighbor_alltoallw", &bad);
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

static void reductions(void **state)
{
    enum { NMAX = (1 << 20) + 3 }; /* above MPIACC_COLL_ONE_SHOT_MAX's 4 MiB: two phases from 3 ranks */
    int ns[] = {1, 4096, NMAX}, bad = 0, dev = reduces_on_device(), root = cu_size - 1;
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us);
    int *h = malloc(sizeof(int) * NMAX), *o = malloc(sizeof(int) * NMAX), *da = dints(NMAX), *db = dints(NMAX);
    unsigned long long r0;
    if (cu_rank == 0) printf("reductions on the device: %s\n", dev ? "yes" : "no (the IPC table does not reduce)");
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k];
        for (int i = 0; i < n; i++) h[i] = (i % 1000) * (cu_rank + 1);
        put(da, h, (size_t)n);
        r0 = dev_runs();
        MPI_CK(MPI_Allreduce(da, db, n, t, MPI_SUM, MPI_COMM_WORLD));
        on_device(r0, dev, "allreduce", &bad);
        get(o, db, (size_t)n);
        for (int i = 0; i < n && !bad; i++)
            if (o[i] != (i % 1000) * cu_size * (cu_size + 1) / 2) CU_BAD(bad, "allreduce(%d)[%d] = %d", n, i, o[i]);
        put(da, h, (size_t)n);
        r0 = dev_runs();
        MPI_CK(MPI_Allreduce(MPI_IN_PLACE, da, n, t, MPI_MAX, MPI_COMM_WORLD));
        on_device(r0, dev, "allreduce in place", &bad);
        get(o, da, (size_t)n);
        for (int i = 0; i < n && !bad; i++)
            if (o[i] != (i % 1000) * cu_size) CU_BAD(bad, "allreduce in place(%d)[%d] = %d", n, i, o[i]);
        put(da, h, (size_t)n);
        r0 = dev_runs();
        MPI_CK(MPI_Reduce(cu_rank == root && k == 1 ? MPI_IN_PLACE : (void *)da, cu_rank == root && k == 1 ? da : db,
                          n, t, MPI_SUM, root, MPI_COMM_WORLD));
        on_device(r0, dev, "reduce", &bad);
        if (cu_rank == root) {
            get(o, k == 1 ? da : db, (size_t)n);
            for (int i = 0; i < n && !bad; i++)
                if (o[i] != (i % 1000) * cu_size * (cu_size + 1) / 2) CU_BAD(bad, "reduce(%d)[%d] = %d", n, i, o[i]);
        }
    }
    cu_all_ok(bad, "reductions");
    CU_CK(cudaFree(da));
    CU_CK(cudaFree(db));
    free(h), free(o);
    MPI_Type_free(&t);
}

static void fallback(void **state)
{
    enum { K = 500 };
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us);
    int P = cu_size, bad = 0, err, cls;
    int *hs = malloc(sizeof(int) * K), *hr = malloc(sizeof(int) * K * P), *w = malloc(sizeof(int) * K * P);
    int *ds = dints(K), *dr = dints((size_t)K * P);
    unsigned long long r0;
    for (int i = 0; i < K; i++) hs[i] = cu_rank * 1000 + i;
    for (int i = 0; i < K * P; i++) hr[i] = -1, w[i] = (i / K) * 1000 + i % K;
    put(ds, hs, K), put(dr, hr, (size_t)K * P);
    /* a host send buffer on every rank: not a device collective anywhere */
    r0 = dev_runs();
    MPI_CK(MPI_Allgather(hs, K, MPI_INT, dr, K, t, MPI_COMM_WORLD));
    on_device(r0, 0, "allgather from host buffers", &bad);
    get(hr, dr, (size_t)K * P);
    bad += check(hr, w, (size_t)K * P, "allgather from host buffers");
    /* one rank with host buffers: erroneous; MPIACC_COLL_CHECK says so everywhere */
    mpiacc_coll_check = 1;
    err = MPI_Allgather(cu_rank ? (void *)ds : hs, K, cu_rank ? t : MPI_INT, cu_rank ? (void *)dr : hr, K,
                        cu_rank ? t : MPI_INT, MPI_COMM_WORLD);
    mpiacc_coll_check = 0;
    MPI_Error_class(err, &cls);
    if (P > 1 && cls != MPI_ERR_ARG) CU_BAD(bad, "a host rank under MPIACC_COLL_CHECK: class %d", cls);
    cu_all_ok(bad, "fallback");
    CU_CK(cudaFree(ds));
    CU_CK(cudaFree(dr));
    free(hs), free(hr), free(w);
    MPI_Type_free(&t);
}

/* The nonblocking forms (src/coll/ipc_nb.c): six outstanding at once with
 * a blocking on-device Allreduce among them, completed by MPI_Waitall, then
 * again by MPI_Test loops in reverse order; each ran on the device. */
static void nonblocking(void **state)
{
    enum { M = 50000, K = 3000, N = 4096, NOPS = 6 };
    int P = cu_size, bad = 0, dev = reduces_on_device(), root = 1 % cu_size, rroot = cu_size - 1;
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us);
    int *h = malloc(sizeof(int) * (size_t)(M + K * P + N)), *o = malloc(sizeof(int) * (size_t)(M + K * P + N));
    int *db = dints(M), *dgs = dints(K), *dgr = dints((size_t)K * P), *das = dints((size_t)K * P);
    int *dar = dints((size_t)K * P), *dra = dints(N), *drb = dints(N), *drc = dints(N), *drd = dints(N);
    int *dx = dints(N), *dy = dints(N);
    MPI_Request req[NOPS];
    unsigned long long r0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < M; i++) h[i] = cu_rank == root ? 3 * i + 1 + pass : -1;
        put(db, h, M);
        for (int i = 0; i < K; i++) h[i] = cu_rank * 100000 + i + pass;
        put(dgs, h, K);
        for (int i = 0; i < K * P; i++) h[i] = cu_rank * 1000000 + i + pass;
        put(das, h, (size_t)K * P);
        for (int i = 0; i < N; i++) h[i] = (i % 1000) * (cu_rank + 1) + pass;
        put(dra, h, N), put(drc, h, N), put(dx, h, N);
        r0 = dev_runs();
        MPI_CK(MPI_Ibcast(db, M, t, root, MPI_COMM_WORLD, &req[0]));
        MPI_CK(MPI_Iallgather(dgs, K, t, dgr, K, t, MPI_COMM_WORLD, &req[1]));
        MPI_CK(MPI_Ialltoall(das, K, t, dar, K, t, MPI_COMM_WORLD, &req[2]));
        MPI_CK(MPI_Iallreduce(dra, drb, N, t, MPI_SUM, MPI_COMM_WORLD, &req[3]));
        MPI_CK(MPI_Allreduce(dx, dy, N, t, MPI_SUM, MPI_COMM_WORLD)); /* blocking, among them */
        MPI_CK(MPI_Iallreduce(MPI_IN_PLACE, drc, N, t, MPI_MAX, MPI_COMM_WORLD, &req[4]));
        MPI_CK(MPI_Ireduce(dra, drd, N, t, MPI_SUM, rroot, MPI_COMM_WORLD, &req[5]));
        if (pass == 0) {
            MPI_CK(MPI_Waitall(NOPS, req, MPI_STATUSES_IGNORE));
        } else {
            for (int i = NOPS - 1; i >= 0; i--) {
                int done = 0;
                while (!done) MPI_CK(MPI_Test(&req[i], &done, MPI_STATUS_IGNORE));
            }
        }
        if (dev_runs() - r0 != (unsigned long long)(3 + (dev ? 4 : 0)))
            CU_BAD(bad, "nonblocking pass %d: %llu calls on the device", pass, dev_runs() - r0);
        get(o, db, M);
        for (int i = 0; i < M && !bad; i++)
            if (o[i] != 3 * i + 1 + pass) CU_BAD(bad, "ibcast[%d] = %d", i, o[i]);
        get(o, dgr, (size_t)K * P);
        for (int i = 0; i < K * P && !bad; i++)
            if (o[i] != (i / K) * 100000 + i % K + pass) CU_BAD(bad, "iallgather[%d] = %d", i, o[i]);
        get(o, dar, (size_t)K * P);
        for (int i = 0; i < K * P && !bad; i++)
            if (o[i] != (i / K) * 1000000 + cu_rank * K + i % K + pass) CU_BAD(bad, "ialltoall[%d] = %d", i, o[i]);
        get(o, drb, N);
        for (int i = 0; i < N && !bad; i++)
            if (o[i] != (i % 1000) * P * (P + 1) / 2 + P * pass) CU_BAD(bad, "iallreduce[%d] = %d", i, o[i]);
        get(o, dy, N);
        for (int i = 0; i < N && !bad; i++)
            if (o[i] != (i % 1000) * P * (P + 1) / 2 + P * pass) CU_BAD(bad, "allreduce among them[%d] = %d", i, o[i]);
        get(o, drc, N);
        for (int i = 0; i < N && !bad; i++)
            if (o[i] != (i % 1000) * P + pass) CU_BAD(bad, "iallreduce in place[%d] = %d", i, o[i]);
        if (cu_rank == rroot) {
            get(o, drd, N);
            for (int i = 0; i < N && !bad; i++)
                if (o[i] != (i % 1000) * P * (P + 1) / 2 + P * pass) CU_BAD(bad, "ireduce[%d] = %d", i, o[i]);
        }
    }
    cu_all_ok(bad, "nonblocking");
    int *all[] = {db, dgs, dgr, das, dar, dra, drb, drc, drd, dx, dy};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) CU_CK(cudaFree(all[i]));
    free(h), free(o);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    int failed;
    if (mpiacc_test_help(argc, argv, "usage: MPIACC_COLL_ENGINE=ipc mpiexec -n N %s\nThe IPC collective engine on "
                                     "CUDA buffers (skipped without a CUDA device).\n"))
        return 0;
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    if (mpiacc_env_enum("MPIACC_COLL_ENGINE") != 2 /* auto|nccl|ipc|staged */)
        mpiacc_test_skip_all("MPIACC_COLL_ENGINE is not ipc");
    cu_watchdog("test_cuda_coll_ipc", 280);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bcast), cmocka_unit_test(allgather), cmocka_unit_test(alltoall),
        cmocka_unit_test(neighbor_halo), cmocka_unit_test(reductions), cmocka_unit_test(fallback),
        cmocka_unit_test(nonblocking),
    };
    failed = MPIACC_TEST_RUN("cuda_coll_ipc", tests, NULL, NULL);
    return cu_fini(failed);
}
