/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_nccl: collectives on CUDA buffers on their engine (issue 31):
 * NCCL with one rank per GPU (rank r on device node-local rank % devices),
 * the IPC engine or staging where NCCL cannot serve (MPIACC_TEST_SHARED_GPU=1:
 * every rank on device 0, e.g. under MPS).  Each call's result is compared
 * with MPI's collective on host copies of the same data.
 *   moves        the 15 data-moving kinds (all four forms, in place where MPI
 *                allows it) on int, byte, vector and random datatypes
 *   reductions   Allreduce, Reduce, Reduce_scatter(_block) of float, double,
 *                int and int64 with sum, prod, min, max, on contiguous and
 *                vector datatypes, in place, nonblocking; MINLOC staged
 *   streams      MPIACC_STREAM as the dependency (a gated producer kernel,
 *                nonblocking), the default stream's, and MPIACC_ORDER_STREAM:
 *                1000 back-to-back 8 B Allreduces on one stream (the return
 *                time per call printed), a nonblocking one complete at once
 *   errors       MPIACC_COLL_CHECK with one rank on host buffers (MPI_ERR_ARG
 *                everywhere); buffers on another device than the
 *                communicator's NCCL communicator (MPI_ERR_ARG, then the
 *                communicator's device collectives fail)
 *   comm_free    a communicator freed with collectives pending
 * MPIACC_TEST_COLL_ENGINE=nccl|ipc|staged: the engine expected (checked with
 * MPIACC_Get_stats); unset: any.  Skipped without a CUDA device.
 */
#include "cu_p2p.h"
#include "p2p_kernels.h"
#include "coll_harness.h"
#include "coll/coll.h"

static int expect = -1; /* 0 nccl, 1 ipc, 2 staged; -1 any */
static int dev;
static MPI_Comm cart;

static void stats(unsigned long long *engine, unsigned long long *device, unsigned long long *staged)
{
    MPIACC_Stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    MPIACC_Get_stats(&st);
    *engine = st.coll_engine, *device = st.coll_device, *staged = st.coll_staged;
}

/* After n device collectives that all engines run (the counters since e0...). */
static void expect_engine(unsigned long long e0, unsigned long long d0, long n, const char *what, int *bad)
{
    unsigned long long e, d, s;
    stats(&e, &d, &s);
    if (expect == 0 && (long)(e - e0) != n) CU_BAD(*bad, "%s: %llu of %ld calls on NCCL", what, e - e0, n);
    if (expect == 1 && (e != e0 || d == d0)) CU_BAD(*bad, "%s: expected the IPC engine (%llu NCCL)", what, e - e0);
    if (expect == 2 && d != d0) CU_BAD(*bad, "%s: expected staging, %llu on the device", what, d - d0);
}

static void *dalloc(size_t n)
{
    void *p = NULL;
    CU_CK(cudaMalloc(&p, n ? n : 1));
    return p;
}

static void fillh(unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)((seed >> (i % 7)) + i * 131 + (i >> 5));
}

/* ---- moves -------------------------------------------------------------------------- */

static int move_one(MPI_Datatype t, int kind, uint64_t *rs, long iter)
{
    MPI_Count lo, hi;
    MPI_Aint lb, ext;
    shape_t sh;
    MPI_Comm comm = is_neighbor(kind) ? cart : MPI_COMM_WORLD;
    MPI_Datatype tt = cu_tag(t, CU_NO_STREAM, NULL);
    MPI_Request req;
    unsigned char *m[4], *d[2];
    int bad = 0;
    MPI_Type_get_extent(t, &lb, &ext);
    make_shape(&sh, kind, rs, ext, cu_rank, cu_size);
    tg_bounds(t, span_elems(&sh, sh.n) + 1, &lo, &hi);
    size_t bytes = (size_t)(hi - lo) + 8;
    for (int i = 0; i < 4; i++) m[i] = malloc(bytes);
    fillh(m[0], bytes, (uint64_t)iter * 977 + (uint64_t)cu_rank);
    fillh(m[1], bytes, (uint64_t)iter * 1013 + (uint64_t)cu_rank * 7);
    for (int i = 0; i < 2; i++) {
        d[i] = dalloc(bytes);
        cu_put(d[i], m[i], (long long)bytes);
    }
    MPI_CK(coll_call(&sh, comm, m[0] - lo, t, m[1] - lo, t, &req));
    MPI_CK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (coll_call(&sh, comm, d[0] - lo, tt, d[1] - lo, tt, &req) != MPI_SUCCESS ||
        MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        CU_BAD(bad, "%s form %d: error (iter %ld)", kind_names[kind], sh.form, iter);
    for (int i = 0; i < 2; i++) CU_CK(cudaMemcpy(m[2 + i], d[i], bytes, cudaMemcpyDeviceToHost));
    if (memcmp(m[0], m[2], bytes) || memcmp(m[1], m[3], bytes))
        CU_BAD(bad, "%s (form %d, in place %d, root %d, cnt %d, %s, iter %ld, seed %llu): buffers differ from MPI's",
               kind_names[kind], sh.form, sh.in_place, sh.root, sh.cnt, tg_combiner_name(t), iter,
               (unsigned long long)mpiacc_test_seed());
    for (int i = 0; i < 4; i++) free(m[i]);
    for (int i = 0; i < 2; i++) CU_CK(cudaFree(d[i]));
    MPI_Type_free(&tt);
    return bad;
}

static void moves(void **state)
{
    uint64_t seed = mpiacc_test_seed(), rs = seed + 31;
    tg_src_t src = {.state = seed ^ 0x31u, .large = 1, .max_size = 160, .max_span = 640};
    unsigned long long e0, d0, s0;
    long calls = 0;
    int bad = 0;
    MPI_Datatype vec = cu_vector_int(3, 2);
    stats(&e0, &d0, &s0);
    for (int i = 0; i < 3 + (int)tg_corpus_size(4, 40); i++) {
        MPI_Datatype t = i == 0 ? MPI_INT : i == 1 ? MPI_BYTE : i == 2 ? vec : tg_make(&src, 1 + i % 4);
        int ov = 0;
        if (i > 2) MPI_Type_commit(&t);
        /* a receive type must not write a byte twice (erroneous in MPI; mpiacc: MPI_ERR_TYPE, see errors) */
        if (i > 2) ov = tg_overlaps(t, 2);
        MPI_Allreduce(MPI_IN_PLACE, &ov, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int k = 0; k < K_NKINDS && !ov; k++, calls++) bad += move_one(t, k, &rs, i * K_NKINDS + k);
        if (i > 2) tg_free(&t);
    }
    expect_engine(e0, d0, calls, "moves", &bad);
    if (cu_rank == 0) printf("moves: %ld calls, seed %llu\n", calls, (unsigned long long)seed);
    MPI_Type_free(&vec);
    cu_all_ok(bad, "moves");
}

/* ---- reductions ------------------------------------------------------------------ */

enum { R_ALLREDUCE, R_REDUCE, R_RSB, R_RS, R_N };

static void call_red(int kind, const void *sb, void *rb, int n, const int *counts, MPI_Datatype t, MPI_Op op,
                     int root, int nb)
{
    MPI_Request req = MPI_REQUEST_NULL;
    switch (kind) {
    case R_ALLREDUCE:
        MPI_CK(nb ? MPI_Iallreduce(sb, rb, n, t, op, MPI_COMM_WORLD, &req) : MPI_Allreduce(sb, rb, n, t, op, MPI_COMM_WORLD));
        break;
    case R_REDUCE:
        MPI_CK(nb ? MPI_Ireduce(sb, rb, n, t, op, root, MPI_COMM_WORLD, &req)
                  : MPI_Reduce(sb, rb, n, t, op, root, MPI_COMM_WORLD));
        break;
    case R_RSB:
        MPI_CK(nb ? MPI_Ireduce_scatter_block(sb, rb, n, t, op, MPI_COMM_WORLD, &req)
                  : MPI_Reduce_scatter_block(sb, rb, n, t, op, MPI_COMM_WORLD));
        break;
    default:
        MPI_CK(nb ? MPI_Ireduce_scatter(sb, rb, counts, t, op, MPI_COMM_WORLD, &req)
                  : MPI_Reduce_scatter(sb, rb, counts, t, op, MPI_COMM_WORLD));
    }
    MPI_CK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/* kind on n elements of t (built on base: per elements each), tagged CUDA,
 * against MPI on host copies (packed to base when t is derived). */
static int red_one(int kind, MPI_Datatype t, MPI_Datatype base, int per, MPI_Op op, int n, int ip, int root, int nb)
{
    MPI_Aint lb, ext;
    int bsz, counts[64], in_n = 0, out, bad = 0, pos;
    int in_place = ip && (kind != R_REDUCE || cu_rank == root), significant = kind != R_REDUCE || cu_rank == root;
    MPI_Datatype tt = cu_tag(t, CU_STREAM, cu_us);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_size(base, &bsz);
    for (int i = 0; i < cu_size; i++) counts[i] = kind == R_RS ? (n + i) % 4 : n;
    for (int i = 0; i < cu_size; i++) in_n += kind == R_RS || kind == R_RSB ? counts[i] : 0;
    if (kind == R_ALLREDUCE || kind == R_REDUCE) in_n = n;
    out = kind == R_RS ? counts[cu_rank] : n;
    size_t bytes = (size_t)ext * (size_t)(in_n + 1) + 16, pb = (size_t)bsz * per * (size_t)(in_n + 1);
    unsigned char *hs = malloc(bytes), *hr = malloc(bytes), *gr = malloc(bytes), *ps = malloc(pb), *pr = malloc(pb);
    unsigned char *ds = dalloc(bytes), *dr = dalloc(bytes);
    for (size_t k = 0; k < bytes / (size_t)bsz; k++) { /* small integers: exact in any reduction order */
        double x = (double)((k * 7 + (size_t)cu_rank * 13) % 5 + 1);
        if (base == MPI_FLOAT) ((float *)hs)[k] = (float)x, ((float *)hr)[k] = (float)x + 1;
        else if (base == MPI_DOUBLE) ((double *)hs)[k] = x, ((double *)hr)[k] = x + 1;
        else if (base == MPI_INT) ((int *)hs)[k] = (int)x, ((int *)hr)[k] = (int)x + 1;
        else ((long long *)hs)[k] = (long long)x, ((long long *)hr)[k] = (long long)x + 1;
    }
    cu_put(ds, hs, (long long)bytes);
    cu_put(dr, hr, (long long)bytes);
    /* the oracle: MPI on host copies, packed to the predefined type */
    pos = 0;
    MPI_CK(MPI_Pack(in_place ? hr : hs, in_n, t, in_place ? pr : ps, (int)pb, &pos, MPI_COMM_SELF));
    {
        int rc[64];
        for (int i = 0; i < cu_size; i++) rc[i] = counts[i] * per;
        call_red(kind, in_place ? MPI_IN_PLACE : ps, pr, n * per, rc, base, op, root, 0);
    }
    pos = 0;
    if (significant) MPI_CK(MPI_Unpack(pr, (int)pb, &pos, hr, out, t, MPI_COMM_SELF));
    call_red(kind, in_place ? MPI_IN_PLACE : (void *)ds, dr, n, counts, tt, op, root, nb);
    CU_CK(cudaMemcpy(gr, dr, bytes, cudaMemcpyDeviceToHost));
    if (memcmp(gr, hr, bytes))
        CU_BAD(bad, "reduction %d (n %d, in place %d, root %d, nonblocking %d): differs from MPI", kind, n, ip, root,
               nb);
    free(hs), free(hr), free(gr), free(ps), free(pr);
    CU_CK(cudaFree(ds));
    CU_CK(cudaFree(dr));
    MPI_Type_free(&tt);
    return bad;
}

static void reductions(void **state)
{
    MPI_Datatype vec, bases[4] = {MPI_FLOAT, MPI_DOUBLE, MPI_INT, MPI_INT64_T};
    MPI_Op ops[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    int ns[] = {1, 9, 100000, 0}, bad = 0;
    unsigned long long e0, d0, s0, e1, d1, s1;
    long calls = 0;
    MPI_CK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &vec));
    MPI_CK(MPI_Type_commit(&vec));
    stats(&e0, &d0, &s0);
    for (int k = 0; k < R_N; k++)
        for (int b = 0; b < 4; b++)
            for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
                int ip = (int)((i + (size_t)b) % 2), nb = (int)(i % 2), root = (int)(i % (size_t)cu_size);
                MPI_Op op = ops[(i + (size_t)b) % 4];
                if (op == MPI_PROD && ns[i] > 9) op = MPI_SUM; /* no overflow */
                bad += red_one(k, bases[b], bases[b], 1, op, ns[i], ip, root, nb), calls++;
                if (b == 1) bad += red_one(k, vec, MPI_DOUBLE, 2, MPI_MAX, ns[i], ip, root, !nb), calls++;
            }
    expect_engine(e0, d0, calls, "reductions", &bad);
    /* MPI_MINLOC: staged, right */
    {
        int v[8], w[8];
        MPI_Datatype t2 = cu_tag(MPI_2INT, CU_NO_STREAM, NULL);
        int *dv = dalloc(sizeof v), *dw = dalloc(sizeof w);
        /* element i: value 0 on rank (size - i) mod size, the one MINLOC names */
        for (int i = 0; i < 4; i++) v[2 * i] = (cu_rank + i) % cu_size, v[2 * i + 1] = cu_rank;
        cu_put(dv, v, (long long)sizeof v);
        stats(&e1, &d1, &s1);
        MPI_CK(MPI_Allreduce(dv, dw, 4, t2, MPI_MINLOC, MPI_COMM_WORLD));
        stats(&e0, &d0, &s0);
        if (s0 != s1 + 1) CU_BAD(bad, "MPI_MINLOC: not staged");
        CU_CK(cudaMemcpy(w, dw, sizeof w, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 4; i++)
            if (w[2 * i] != 0 || w[2 * i + 1] != ((cu_size - i) % cu_size + cu_size) % cu_size) CU_BAD(bad, "MPI_MINLOC: element %d", i);
        CU_CK(cudaFree(dv));
    CU_CK(cudaFree(dw));
        MPI_Type_free(&t2);
    }
    MPI_Type_free(&vec);
    cu_all_ok(bad, "reductions");
}

/* ---- streams ------------------------------------------------------------------------ */

static MPI_Datatype ordered(MPI_Datatype base, cudaStream_t s)
{
    MPI_Datatype t = cu_tag(base, CU_STREAM, s);
    MPI_CK(MPI_Type_set_attr(t, MPIACC_ORDER, MPIACC_ORDER_STREAM));
    return t;
}

static void streams(void **state)
{
    enum { N = 1 << 16, B2B = 1000 };
    int bad = 0, P = cu_size, flag = 0;
    unsigned char *din = dalloc(N), *dall = dalloc((size_t)N * P), *h = malloc((size_t)N * P), *w = malloc(N);
    unsigned char *out = dalloc(8 * B2B), *hout = malloc(8 * B2B);
    MPI_Datatype tb = cu_tag(MPI_BYTE, CU_STREAM, cu_us), td = cu_tag(MPI_UNSIGNED_CHAR, CU_NO_STREAM, NULL);
    MPI_Datatype to = ordered(MPI_UNSIGNED_CHAR, cu_us);
    MPI_Request req;
    cu_gate_t g;
    double t0, t1;
    /* MPIACC_STREAM is the dependency: the input is written behind a gate */
    if (!cu_sanitizer) {
        cu_gate_init(&g);
        cu_gate_close(&g);
        if (cu_k_gate_fill(cu_us, g.d, din, N, 100u + (unsigned)cu_rank, 20.0)) CU_BAD(bad, "gate kernel launch");
        MPI_CK(MPI_Iallgather(din, N, tb, dall, N, tb, MPI_COMM_WORLD, &req));
        cu_gate_open(&g);
        MPI_CK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CU_CK(cudaMemcpy(h, dall, (size_t)N * P, cudaMemcpyDeviceToHost));
        for (int r = 0; r < P; r++) {
            cu_hfill(w, N, 100u + (unsigned)r);
            if (cu_differs(h + (size_t)r * N, w, N, "allgather behind a gated producer")) bad++;
        }
        if (cu_gate_timed_out(&g)) CU_BAD(bad, "gate timed out");
        cu_gate_free(&g);
    }
    /* the default stream's dependency (no MPIACC_STREAM) */
    CU_CK(cudaMemsetAsync(din, 3 + cu_rank, N, cudaStreamLegacy));
    MPI_CK(MPI_Allreduce(din, dall, N, td, MPI_SUM, MPI_COMM_WORLD));
    CU_CK(cudaMemcpy(h, dall, N, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        if (h[i] != (unsigned char)(3 * P + P * (P - 1) / 2)) {
            CU_BAD(bad, "default-stream dependency: byte %d is %d", i, h[i]);
            break;
        }
    /* MPIACC_ORDER_STREAM: back-to-back 8 B Allreduces on one stream */
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    for (int i = 0; i < B2B; i++) {
        CU_CK(cudaMemsetAsync(din, (i + cu_rank) % 30, 8, cu_us));
        MPI_CK(MPI_Allreduce(din, out + 8 * i, 8, to, MPI_SUM, MPI_COMM_WORLD));
    }
    t1 = MPI_Wtime();
    CU_CK(cudaStreamSynchronize(cu_us));
    {
        double t2 = MPI_Wtime();
        if (cu_rank == 0)
            printf("stream order: %d back-to-back 8 B MPI_Allreduce: %.2f us per call to return, %.2f us each with "
                   "the stream drained\n",
                   B2B, (t1 - t0) * 1e6 / B2B, (t2 - t0) * 1e6 / B2B);
    }
    CU_CK(cudaMemcpy(hout, out, 8 * B2B, cudaMemcpyDeviceToHost));
    for (int i = 0; i < B2B; i++) {
        int want = 0;
        for (int r = 0; r < P; r++) want += (i + r) % 30;
        for (int b = 0; b < 8; b++)
            if (hout[8 * i + b] != (unsigned char)want) {
                CU_BAD(bad, "stream order: call %d byte %d is %d, expected %d", i, b, hout[8 * i + b], want);
                i = B2B;
                break;
            }
    }
    /* nonblocking: complete at once on NCCL (nothing to wait for on the host) */
    CU_CK(cudaMemsetAsync(din, 1, 8, cu_us));
    MPI_CK(MPI_Iallreduce(din, out, 8, to, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_CK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    if (expect == 0 && !flag) CU_BAD(bad, "MPI_Iallreduce with MPIACC_ORDER_STREAM: not complete at once");
    MPI_CK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CU_CK(cudaStreamSynchronize(cu_us));
    CU_CK(cudaMemcpy(hout, out, 8, cudaMemcpyDeviceToHost));
    if (hout[0] != (unsigned char)P) CU_BAD(bad, "ordered Iallreduce: %d", hout[0]);
    CU_CK(cudaFree(din));
    CU_CK(cudaFree(dall));
    CU_CK(cudaFree(out));
    free(h), free(w), free(hout);
    MPI_Type_free(&tb), MPI_Type_free(&td), MPI_Type_free(&to);
    cu_all_ok(bad, "streams");
}

/* ---- errors ------------------------------------------------------------------------- */

static void errors(void **state)
{
    int bad = 0, cls, err, v[16], ndev = cu_ndev;
    int *dv = dalloc(sizeof v), *dw = dalloc(sizeof v);
    MPI_Datatype t = cu_tag(MPI_INT, CU_NO_STREAM, NULL);
    MPI_Comm dup;
    for (int i = 0; i < 16; i++) v[i] = i;
    cu_put(dv, v, (long long)sizeof v);
    /* MPIACC_COLL_CHECK: rank 0 passes host buffers, the others device ones */
    mpiacc_coll_check = 1;
    err = MPI_Allreduce(cu_rank == 0 ? (void *)v : dv, cu_rank == 0 ? (void *)v : dw, 16,
                        cu_rank == 0 ? MPI_INT : t, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    if (cu_size > 1 && cls != MPI_ERR_ARG) CU_BAD(bad, "check: class %d, expected MPI_ERR_ARG", cls);
    mpiacc_coll_check = 0;
    /* receive blocks that write some bytes twice (two ints every int, one
     * block per rank): MPI_ERR_TYPE on every rank, before anything moves */
    {
        MPI_Datatype two, ovt, tov;
        MPI_Type_contiguous(2, MPI_INT, &two);
        MPI_Type_create_resized(two, 0, sizeof(int), &ovt);
        MPI_Type_commit(&ovt);
        tov = cu_tag(ovt, CU_NO_STREAM, NULL);
        err = MPI_Allgather(dv, 2, t, dw, 1, tov, MPI_COMM_WORLD);
        MPI_Error_class(err, &cls);
        if (cu_size > 1 && cls != MPI_ERR_TYPE)
            CU_BAD(bad, "overlapping receive blocks: class %d, expected MPI_ERR_TYPE", cls);
        MPI_Type_free(&tov), MPI_Type_free(&ovt), MPI_Type_free(&two);
    }
    /* a device other than the communicator's NCCL communicator's, on every rank */
    if (expect == 0 && ndev > 1 && !getenv("MPIACC_TEST_SHARED_GPU")) {
        int other = (dev + 1) % ndev, *ov;
        MPI_CK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        MPI_CK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
        MPI_CK(MPI_Allreduce(dv, dw, 16, t, MPI_SUM, dup));
        CU_CK(cudaSetDevice(other));
        ov = dalloc(sizeof v);
        err = MPI_Allreduce(MPI_IN_PLACE, ov, 16, t, MPI_SUM, dup);
        MPI_Error_class(err, &cls);
        if (cls != MPI_ERR_ARG) CU_BAD(bad, "another device: class %d, expected MPI_ERR_ARG", cls);
        CU_CK(cudaFree(ov));
        CU_CK(cudaSetDevice(dev));
        err = MPI_Allreduce(dv, dw, 16, t, MPI_SUM, dup); /* the communicator's device collectives fail now */
        MPI_Error_class(err, &cls);
        if (cls != MPI_ERR_ARG) CU_BAD(bad, "after the failure: class %d, expected MPI_ERR_ARG", cls);
        MPI_CK(MPI_Comm_free(&dup));
    }
    CU_CK(cudaFree(dv));
    CU_CK(cudaFree(dw));
    MPI_Type_free(&t);
    cu_all_ok(bad, "errors");
}

/* A communicator freed with its collectives pending. */
static void comm_free(void **state)
{
    enum { N = 100000 };
    int bad = 0, *h = malloc(sizeof(int) * N), *dv = dalloc(sizeof(int) * N), *dw = dalloc(sizeof(int) * N);
    MPI_Datatype t = cu_tag(MPI_INT, CU_STREAM, cu_us);
    MPI_Request req[2];
    MPI_Comm dup;
    for (int i = 0; i < N; i++) h[i] = i % 1000 + cu_rank;
    cu_put(dv, h, (long long)(sizeof(int) * N));
    MPI_CK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CK(MPI_Iallreduce(dv, dw, N, t, MPI_SUM, dup, &req[0]));
    MPI_CK(MPI_Ibcast(dv, N, t, 0, dup, &req[1]));
    MPI_CK(MPI_Comm_free(&dup));
    MPI_CK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    CU_CK(cudaMemcpy(h, dw, sizeof(int) * N, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        if (h[i] != (i % 1000) * cu_size + cu_size * (cu_size - 1) / 2) {
            CU_BAD(bad, "comm freed: element %d", i);
            break;
        }
    CU_CK(cudaFree(dv));
    CU_CK(cudaFree(dw));
    free(h);
    MPI_Type_free(&t);
    cu_all_ok(bad, "comm_free");
}

int main(int argc, char **argv)
{
    int failed, local;
    const char *e = getenv("MPIACC_TEST_COLL_ENGINE");
    if (mpiacc_test_help(argc, argv, "usage: mpiexec -n N %s\nCollectives on CUDA buffers on their engine (NCCL with "
                                     "one rank per GPU; MPIACC_TEST_SHARED_GPU=1: every rank on device 0) against "
                                     "MPI on host copies; MPIACC_TEST_COLL_ENGINE=nccl|ipc|staged checks the engine "
                                     "that ran. Skipped without a CUDA device.\n"))
        return 0;
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 1);
    if (e && *e) expect = !strcmp(e, "nccl") ? 0 : !strcmp(e, "ipc") ? 1 : !strcmp(e, "staged") ? 2 : -1;
    local_rank_size(MPI_COMM_WORLD, &local, NULL); /* bench/common/local_rank.h */
    dev = getenv("MPIACC_TEST_SHARED_GPU") ? 0 : local % cu_ndev;
    CU_CK(cudaStreamDestroy(cu_us));
    CU_CK(cudaStreamDestroy(cu_us2));
    CU_CK(cudaSetDevice(dev));
    CU_CK(cudaStreamCreateWithFlags(&cu_us, cudaStreamNonBlocking));
    CU_CK(cudaStreamCreateWithFlags(&cu_us2, cudaStreamNonBlocking));
    mpiacc_test_world(NULL, NULL, 0, &cart);
    cu_watchdog("test_cuda_nccl", 580);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moves), cmocka_unit_test(reductions), cmocka_unit_test(streams), cmocka_unit_test(errors),
        cmocka_unit_test(comm_free),
    };
    failed = MPIACC_TEST_RUN("cuda_nccl", tests, NULL, NULL);
    MPI_Comm_free(&cart);
    {
        unsigned long long en, d, s;
        stats(&en, &d, &s);
        if (cu_rank == 0)
            printf("cuda_nccl: rank 0 on device %d: %llu collectives on the device (%llu on NCCL), %llu staged\n", dev,
                   d, en, s);
    }
    return cu_fini(failed);
}
