/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_reduce: the CUDA IPC table's reduction entries (issue 24,
 * src/core/backend_ipc.h: reduce_supported, import_reduce).
 *
 * - supported: reduce_supported equals the host reference's set
 *   (tests/common/ref_reduce.h) on every predefined type x operation, and
 *   refuses dups, derived types and the other operations.  Runs without a
 *   GPU too (before the skip).
 * - every supported (type, op) on 1..4 ranks (one GPU per rank where there
 *   are enough, else shared): each rank exports NB device allocations
 *   (same-process exports with one rank, real IPC between ranks, an
 *   interprocess event behind a fill still running on the user stream),
 *   every rank reduces source lists of n = 1..4 and all NB x size sources,
 *   counts 1, 7, 1000 (and 1 << 20 for a few types), 16-byte aligned,
 *   same misalignment everywhere, different misalignment, not even
 *   element-aligned; compared bytewise with the reference fold in the same
 *   order; dst aliasing the caller's own source (disjoint slices per rank).
 * - errors: bytes outside an export (MPI_ERR_BUFFER), unsupported pair,
 *   0 or 65 sources (MPI_ERR_INTERN), each with no handle.
 * - --bench: GB/s of import_reduce, float
 *   SUM, 16 MiB x 4 sources (one rank: its 4 allocations; several ranks:
 *   every rank its 1/size slice of the size sources at once, as a
 *   reduce-scatter does).  Prints, asserts nothing about speed.
 */
#include "cu_p2p.h"

#include <getopt.h>

#include "core/backend_ipc.h"
#include "ref_reduce.h"

int mpiacc_cuda_reduce_supported(MPI_Datatype type, MPI_Op op); /* src/cuda/cuda_coll.c (internal) */

#define NB 4                                        /* allocations per rank */
#define CAP ((long long)16 * 1024 * 1024 + 256)     /* bytes per allocation */
#define MAXS (NB * 8)

static const mpiacc_backend_t *B;
static const struct mpiacc_backend_ipc *I;
static int mydev, bench;
static cudaStream_t us;
static char *dbuf[NB], *dout;
static unsigned char *hsrc[MAXS]; /* host images of every rank's allocations: [rank * NB + b] */
static unsigned char *hgot, *hwant;
static uint64_t seed0;

static uint64_t img_seed(int round, int r, int b) { return seed0 ^ ((uint64_t)round << 40) ^ ((uint64_t)r << 20) ^ (uint64_t)b; }

/* ---- supported set ------------------------------------------------------- */

static int check_supported(void)
{
    ref_rd_type_t tab[REF_RD_MAXTYPES];
    int nt = ref_reduce_types(tab, REF_RD_MAXTYPES), bad = 0;
    MPI_Datatype dup, two;
    const MPI_Op other[] = {MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP, MPI_OP_NULL};
    for (int ti = 0; ti < nt; ti++) {
        for (int o = 0; o < REF_RD_NOPS; o++) {
            int want = ref_reduce_supported(tab[ti].t, ref_reduce_op(o));
            int got = mpiacc_cuda_reduce_supported(tab[ti].t, ref_reduce_op(o));
            if (got != want) CU_BAD(bad, "reduce_supported(%s, %s) = %d, expected %d", tab[ti].name, ref_reduce_op_name(o), got, want);
        }
        for (int o = 0; o < 5; o++)
            if (mpiacc_cuda_reduce_supported(tab[ti].t, other[o])) CU_BAD(bad, "reduce_supported(%s, other op %d) = 1", tab[ti].name, o);
    }
    MPI_Type_dup(MPI_INT, &dup);
    MPI_Type_contiguous(2, MPI_FLOAT, &two);
    if (mpiacc_cuda_reduce_supported(dup, MPI_SUM)) CU_BAD(bad, "a dup of MPI_INT is supported");
    if (mpiacc_cuda_reduce_supported(two, MPI_SUM)) CU_BAD(bad, "a contiguous type is supported");
    if (mpiacc_cuda_reduce_supported(MPI_LONG_DOUBLE, MPI_SUM)) CU_BAD(bad, "MPI_LONG_DOUBLE is supported");
    if (mpiacc_cuda_reduce_supported(MPI_C_DOUBLE_COMPLEX, MPI_SUM)) CU_BAD(bad, "complex is supported");
    if (mpiacc_cuda_reduce_supported(MPI_2INT, MPI_MINLOC)) CU_BAD(bad, "MPI_2INT MINLOC is supported");
    if (mpiacc_cuda_reduce_supported(MPI_DATATYPE_NULL, MPI_SUM)) CU_BAD(bad, "MPI_DATATYPE_NULL is supported");
    MPI_Type_free(&dup);
    MPI_Type_free(&two);
    return bad;
}

/* ---- one round: every rank fills and exports its NB allocations -------- */

typedef struct round {
    mpiacc_ipc_export_t x[MAXS]; /* [rank * NB + b] */
    void *tok[NB], *dep;
    long long bytes;
} round_t;

/* Fills bytes [0, bytes) of every allocation with t's values from byte
 * `shift` on (so that sources at disp = shift + k x size hold values the
 * reference accepts: finite floats), the same in the host images of every
 * rank's; copies them on the user stream and exports behind that (the
 * export carries an event); gathers the exports. */
static void round_begin_at(round_t *R, int round, const ref_rd_type_t *t, long long bytes, int shift)
{
    mpiacc_attrs_t a = cu_stream_attrs(us);
    int ok = 0;
    long long cnt = bytes / t->size + 1;
    memset(R, 0, sizeof *R);
    R->bytes = bytes;
    for (int r = 0; r < cu_size; r++)
        for (int b = 0; b < NB; b++) {
            memset(hsrc[r * NB + b], 0, (size_t)shift);
            ref_reduce_fill(t, hsrc[r * NB + b] + shift, cnt, img_seed(round, r, b));
        }
    for (int b = 0; b < NB; b++)
        CU_CK(cudaMemcpyAsync(dbuf[b], hsrc[cu_rank * NB + b], (size_t)bytes, cudaMemcpyHostToDevice, us));
    MPI_CK(B->capture(&a, dbuf[0], &R->dep));
    for (int b = 0; b < NB; b++) {
        MPI_CK(I->export_buf(&a, R->dep, dbuf[b], 0, (MPI_Aint)CAP, &R->x[cu_rank * NB + b], &R->tok[b], &ok));
        if (!ok) {
            fprintf(stderr, "[rank %d] export_buf refused a cudaMalloc allocation\n", cu_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_CK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, R->x, (int)(NB * sizeof R->x[0]), MPI_BYTE, MPI_COMM_WORLD));
}

static void round_begin(round_t *R, int round, const ref_rd_type_t *t, long long bytes)
{
    round_begin_at(R, round, t, bytes, 0);
}

static void round_end(round_t *R)
{
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody reads our allocations any more */
    for (int b = 0; b < NB; b++) I->export_release(R->tok[b]);
    B->release(R->dep);
    CU_CK(cudaStreamSynchronize(us));
}

/* import_reduce of sources list[0..n) (indices into R->x) at disp into
 * dst (device; may alias a source) for count elements, behind a dep
 * captured on the user stream; compares with the reference fold of the
 * host images (which dst never changes). */
static int one(round_t *R, const ref_rd_type_t *t, int o, const int *list, int n, MPI_Aint disp, long long count,
               char *dst, const char *what)
{
    int bad = 0, rc;
    mpiacc_ipc_export_t xs[MAXS];
    const void *srcs[MAXS];
    mpiacc_attrs_t a = cu_stream_attrs(us);
    void *xf = NULL, *dep = NULL;
    long long bytes = count * t->size;
    for (int i = 0; i < n; i++) {
        xs[i] = R->x[list[i]];
        srcs[i] = hsrc[list[i]] + disp;
    }
    MPI_CK(B->capture(&a, dst, &dep));
    rc = I->import_reduce(&a, dep, xs, n, disp, t->t, ref_reduce_op(o), (MPI_Count)count, dst, &xf);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int l = 0;
        MPI_Error_string(rc, s, &l);
        CU_BAD(bad, "%s %s %s n %d count %lld: import_reduce failed: %s", what, t->name, ref_reduce_op_name(o), n,
               count, s);
        B->release(dep);
        return bad;
    }
    if (cu_wait_handle(B, xf, 30)) CU_BAD(bad, "%s: not complete after 30 s", what);
    B->release(xf);
    B->release(dep);
    cu_get(hgot, dst, bytes);
    ref_reduce(t->t, ref_reduce_op(o), srcs, n, count, hwant);
    if (memcmp(hgot, hwant, (size_t)bytes) != 0) {
        long long k = 0;
        while (k < bytes && hgot[k] == hwant[k]) k++;
        CU_BAD(bad, "%s %s %s n %d count %lld disp %lld: byte %lld is 0x%02x, expected 0x%02x", what, t->name,
               ref_reduce_op_name(o), n, count, (long long)disp, k, hgot[k], hwant[k]);
    }
    return bad;
}

/* Source lists: n = 1..4 spread over the ranks (j-th source: rank j % size,
 * allocation j / size), then all NB x size sources in a shuffled order. */
static int lists(int list[][MAXS], int *len)
{
    int nl = 0, total = NB * cu_size;
    for (int n = 1; n <= 4 && n <= total; n++, nl++) {
        len[nl] = n;
        for (int j = 0; j < n; j++) list[nl][j] = (j % cu_size) * NB + j / cu_size;
    }
    len[nl] = total;
    for (int j = 0; j < total; j++) list[nl][j] = (j * 7 + 3) % total; /* 7 is prime to 4, 8, 12, 16 */
    if (total % 7 == 0)
        for (int j = 0; j < total; j++) list[nl][j] = total - 1 - j;
    return nl + 1;
}

static void all_pairs(void **state)
{
    ref_rd_type_t tab[REF_RD_MAXTYPES];
    int nt = ref_reduce_types(tab, REF_RD_MAXTYPES), bad = 0, round = 0, list[8][MAXS], len[8];
    int nl = lists(list, len);
    const long long counts[] = {1, 7, 1000};
    (void)state;
    for (int ti = 0; ti < nt; ti++) {
        const ref_rd_type_t *t = &tab[ti];
        for (int ci = 0; ci < 3; ci++) {
            long long count = counts[ci];
            /* disp / dst offset pairs: aligned, same misalignment, other misalignment, byte-misaligned */
            long long disp[4] = {0, 3 * t->size, 3 * t->size, 1};
            long long doff[4] = {0, 3 * t->size, 4 * t->size + (t->size == 1 ? 1 : 0), 1};
            int nv = t->size > 1 && count == 1000 ? 4 : count == 1000 ? 3 : 1;
            /* two rounds: data element-aligned for variants 0-2, shifted by one byte for variant 3 */
            for (int g = 0; g < (nv > 3 ? 2 : 1); g++) {
                round_t R;
                round_begin_at(&R, round++, t, 8 * count * t->size + 64, g);
                for (int o = 0; o < REF_RD_NOPS; o++) {
                    if (!ref_reduce_supported(t->t, ref_reduce_op(o))) continue;
                    for (int l = 0; l < nl; l++)
                        for (int v = g ? 3 : 0; v < (g ? 4 : nv < 3 ? nv : 3); v++)
                            bad += one(&R, t, o, list[l], len[l], (MPI_Aint)disp[v], count, dout + doff[v], "pairs");
                }
                round_end(&R);
            }
        }
    }
    cu_all_ok(bad, "every (type, op) pair");
}

/* 1 << 20 elements for a few pairs (every kernel path at size). */
static void large(void **state)
{
    static const struct { MPI_Datatype t; MPI_Op op; } cases[] = {
        {MPI_FLOAT, MPI_SUM}, {MPI_DOUBLE, MPI_MAX}, {MPI_INT, MPI_SUM},      {MPI_INT16_T, MPI_MIN},
        {MPI_UINT8_T, MPI_BXOR}, {MPI_INT64_T, MPI_PROD}, {MPI_C_BOOL, MPI_LXOR}, {MPI_UNSIGNED, MPI_LAND}};
    int bad = 0, list[8][MAXS], len[8], nl = lists(list, len);
    const long long count = 1 << 20;
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ref_rd_type_t t;
        round_t R;
        int o = ref_reduce_op_index(cases[c].op);
        assert_true(ref_reduce_type(cases[c].t, &t));
        round_begin(&R, 1000 + (int)c, &t, count * t.size + 64);
        for (int l = 0; l < nl; l++) {
            bad += one(&R, &t, o, list[l], len[l], 0, count, dout, "large");
            bad += one(&R, &t, o, list[l], len[l], (MPI_Aint)t.size, count - 1, dout + t.size, "large+1");
        }
        round_end(&R);
    }
    cu_all_ok(bad, "1 << 20 elements");
}

/* dst aliasing the caller's own source: allocation 0 of every rank, each
 * rank its slice (elements [rank * c, (rank + 1) * c)), written in place. */
static void in_place(void **state)
{
    ref_rd_type_t tab[REF_RD_MAXTYPES];
    int nt = ref_reduce_types(tab, REF_RD_MAXTYPES), bad = 0;
    const long long c = 1000;
    (void)state;
    for (int ti = 0; ti < nt; ti++) {
        const ref_rd_type_t *t = &tab[ti];
        for (int o = 0; o < REF_RD_NOPS; o++) {
            int list[MAXS], n = cu_size > 1 ? cu_size : NB, own = cu_size > 1 ? 0 : 2; /* own: the allocation written */
            MPI_Aint disp = (MPI_Aint)((long long)cu_rank * c * t->size + t->size);
            round_t R;
            if (!ref_reduce_supported(t->t, ref_reduce_op(o))) continue;
            for (int j = 0; j < n; j++) list[j] = cu_size > 1 ? j * NB : j;
            round_begin(&R, 2000 + ti * REF_RD_NOPS + o, t, (long long)(cu_size + 1) * c * t->size + 64);
            MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
            bad += one(&R, t, o, list, n, disp, c, dbuf[own] + disp, "in place");
            round_end(&R);
        }
    }
    cu_all_ok(bad, "dst aliasing the own source");
}

static void errors(void **state)
{
    ref_rd_type_t t;
    round_t R;
    int bad = 0, rc;
    void *xf = NULL;
    mpiacc_attrs_t a = cu_stream_attrs(us);
    mpiacc_ipc_export_t xs[2];
    (void)state;
    assert_true(ref_reduce_type(MPI_INT, &t));
    round_begin(&R, 3000, &t, 4096);
    xs[0] = R.x[0], xs[1] = R.x[cu_size > 1 ? NB : 1];
    rc = I->import_reduce(&a, NULL, xs, 2, (MPI_Aint)(CAP - 8), MPI_INT, MPI_SUM, 4, dout, &xf);
    if (cu_class(rc) != MPI_ERR_BUFFER || xf) CU_BAD(bad, "beyond hi: class %d, expected MPI_ERR_BUFFER", cu_class(rc));
    rc = I->import_reduce(&a, NULL, xs, 2, -4, MPI_INT, MPI_SUM, 4, dout, &xf);
    if (cu_class(rc) != MPI_ERR_BUFFER || xf) CU_BAD(bad, "below lo: class %d, expected MPI_ERR_BUFFER", cu_class(rc));
    xs[1].hi = (int64_t)xs[1].alloc_bytes + 64; /* an export claiming bytes beyond its allocation */
    rc = I->import_reduce(&a, NULL, xs, 2, 0, MPI_INT, MPI_SUM, 4, dout, &xf);
    if (cu_class(rc) != MPI_ERR_BUFFER || xf) CU_BAD(bad, "export beyond allocation: class %d, expected MPI_ERR_BUFFER", cu_class(rc));
    xs[1] = xs[0];
    rc = I->import_reduce(&a, NULL, xs, 2, 0, MPI_FLOAT, MPI_BAND, 4, dout, &xf);
    if (cu_class(rc) != MPI_ERR_INTERN || xf) CU_BAD(bad, "FLOAT BAND: class %d, expected MPI_ERR_INTERN", cu_class(rc));
    rc = I->import_reduce(&a, NULL, xs, 0, 0, MPI_INT, MPI_SUM, 4, dout, &xf);
    if (cu_class(rc) != MPI_ERR_INTERN || xf) CU_BAD(bad, "0 sources: class %d, expected MPI_ERR_INTERN", cu_class(rc));
    rc = I->import_reduce(&a, NULL, xs, 65, 0, MPI_INT, MPI_SUM, 4, dout, &xf);
    if (cu_class(rc) != MPI_ERR_INTERN || xf) CU_BAD(bad, "65 sources: class %d, expected MPI_ERR_INTERN", cu_class(rc));
    rc = I->import_reduce(&a, NULL, xs, 2, 0, MPI_INT, MPI_SUM, 0, dout, &xf); /* nothing to do */
    if (rc != MPI_SUCCESS || xf) CU_BAD(bad, "count 0: error %d or a handle", rc);
    round_end(&R);
    cu_all_ok(bad, "error paths");
}

/* ---- benchmark ----------------------------------------------------------- */

static void run_bench(void)
{
    ref_rd_type_t t;
    round_t R;
    const long long bytes = 16ll << 20, count = bytes / 4;
    int list[MAXS], n = cu_size > 1 ? cu_size : 4, iters = 50;
    long long c = cu_size > 1 ? count / cu_size : count;
    MPI_Aint disp = cu_size > 1 ? (MPI_Aint)(cu_rank * c * 4) : 0;
    double best = 1e30, sum = 0, tb = 0, tmax = 0;
    mpiacc_attrs_t a = cu_stream_attrs(us);
    ref_reduce_type(MPI_FLOAT, &t);
    for (int j = 0; j < n; j++) list[j] = cu_size > 1 ? j * NB : j;
    round_begin(&R, 4000, &t, bytes);
    CU_CK(cudaStreamSynchronize(us));
    for (int it = -5; it < iters; it++) {
        mpiacc_ipc_export_t xs[MAXS];
        void *xf = NULL;
        double t0, t1;
        for (int j = 0; j < n; j++) xs[j] = R.x[list[j]];
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = cu_now();
        MPI_CK(I->import_reduce(&a, NULL, xs, n, disp, MPI_FLOAT, MPI_SUM, c, dout + disp, &xf));
        if (cu_wait_handle(B, xf, 30)) fprintf(stderr, "[rank %d] bench: not complete after 30 s\n", cu_rank);
        t1 = cu_now();
        B->release(xf);
        if (it < 0) continue;
        tmax = t1 - t0;
        MPI_CK(MPI_Allreduce(MPI_IN_PLACE, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        if (tmax < best) best = tmax;
        sum += tmax;
    }
    { /* back to back: throughput without the per-call host wait */
        void *xf[20];
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = cu_now();
        for (int it = 0; it < 20; it++) {
            mpiacc_ipc_export_t xs[MAXS];
            for (int j = 0; j < n; j++) xs[j] = R.x[list[j]];
            MPI_CK(I->import_reduce(&a, NULL, xs, n, disp, MPI_FLOAT, MPI_SUM, c, dout + disp, &xf[it]));
        }
        for (int it = 0; it < 20; it++) cu_wait_handle(B, xf[it], 30), B->release(xf[it]);
        tb = (cu_now() - t0) / 20;
        MPI_CK(MPI_Allreduce(MPI_IN_PLACE, &tb, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    }
    if (cu_rank == 0) {
        double moved = (double)(n + 1) * (double)c * 4 * (cu_size > 1 ? cu_size : 1);
        printf("bench import_reduce float SUM, %d sources x %lld MiB (%s): best %.1f us (%.0f GB/s), mean %.1f us, "
               "20 back to back %.1f us each (%.0f GB/s); bytes counted: %d reads + 1 write\n",
               n, bytes >> 20, cu_size > 1 ? "every rank its slice at once" : "one rank", best * 1e6, moved / best / 1e9,
               sum / iters * 1e6, tb * 1e6, moved / tb / 1e9, n);
    }
    round_end(&R);
}

int main(int argc, char **argv)
{
    int fails = 0, bad;
    static const struct option lo[] = {{"bench", no_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'}, {0}};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_pairs), cmocka_unit_test(large), cmocka_unit_test(in_place), cmocka_unit_test(errors),
    };
    for (int c; (c = getopt_long(argc, argv, "bh", lo, NULL)) != -1;) {
        if (c == 'b') bench = 1;
        else {
            printf("usage: %s [--bench]  (1 to 8 ranks; --bench: import_reduce GB/s instead of the tests)\n", argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    cu_mpi_start(&argc, &argv, MPI_THREAD_SINGLE);
    bad = check_supported(); /* no GPU needed */
    MPI_CK(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (bad) {
        if (cu_rank == 0) fprintf(stderr, "test_cuda_reduce: reduce_supported differs from the reference\n");
        MPI_Finalize();
        return 1;
    }
    if (cu_size > MAXS / NB) mpiacc_test_skip_all("runs on 1 to %d ranks, got %d", MAXS / NB, cu_size);
    B = cu_device_start(" (reduce_supported checked)");
    if (!(I = B->ipc) || !I->import_reduce) {
        fprintf(stderr, "[rank %d] the CUDA backend has no IPC reductions\n", cu_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    mydev = cu_dev;
    cu_need_ipc_events();
    CU_CK(cudaStreamCreateWithFlags(&us, cudaStreamNonBlocking));
    for (int b = 0; b < NB; b++) CU_CK(cudaMalloc((void **)&dbuf[b], (size_t)CAP));
    CU_CK(cudaMalloc((void **)&dout, (size_t)CAP));
    for (int i = 0; i < NB * cu_size; i++) hsrc[i] = malloc((size_t)CAP + 64);
    hgot = malloc((size_t)CAP), hwant = malloc((size_t)CAP);
    seed0 = mpiacc_test_seed();
    if (bench) run_bench();
    else fails = MPIACC_TEST_RUN("cuda_reduce", tests, NULL, NULL);
    CU_CK(cudaDeviceSynchronize());
    for (int b = 0; b < NB; b++) CU_CK(cudaFree(dbuf[b]));
    CU_CK(cudaFree(dout));
    for (int i = 0; i < NB * cu_size; i++) free(hsrc[i]);
    free(hgot), free(hwant);
    CU_CK(cudaStreamDestroy(us));
    return cu_end(fails);
}
