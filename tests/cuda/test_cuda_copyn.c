/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_copyn: the CUDA IPC table's import_copy_n (issue 24,
 * src/core/backend_ipc.h; the kernel of src/cuda/cuda_copyn.cu) on 1, 2
 * and 4 ranks (one GPU per rank where there are enough, else shared; one
 * rank: same-process exports).  Every rank exports NB device allocations
 * behind a fill still queued on its user stream (the exports carry an
 * interprocess event), the exports are gathered, and every rank copies
 * pieces of them into its own device buffer, compared bytewise with the
 * host images (bytes outside the pieces must stay as they were):
 * - one piece of 1 B to 16 MiB, from a peer, source and destination
 *   16-byte aligned, equally misaligned, differently misaligned (8, 4, 2,
 *   1-byte words);
 * - one piece from every rank's allocation, the caller's own included (an
 *   all-to-all), of 8 B to 4 MiB each;
 * - 64 pieces (one launch), 200 pieces (several launches), random sizes
 *   0 to 5000 B, random exports, offsets and gaps, empty pieces among them;
 * - errors, each with no handle: a piece beyond its export's hi or below
 *   its lo, an export claiming bytes beyond its allocation
 *   (MPI_ERR_BUFFER), a piece naming no export, a negative size
 *   (MPI_ERR_INTERN); only empty pieces: success and no handle.
 * --bench: one import_copy_n of one piece per rank (an Alltoall's reads)
 * timed per call from 8 B to 16 MiB per piece; prints, asserts nothing.
 */
#include "cu_p2p.h"

#include <getopt.h>

#include "core/backend_ipc.h"

#define NB 2                                      /* allocations per rank */
#define CAP ((long long)16 * 1024 * 1024 + 256)   /* bytes per allocation */
#define DCAP ((long long)16 * 1024 * 1024 + 8192) /* destination bytes    */
#define MAXR 8

static const mpiacc_backend_t *B;
static const struct mpiacc_backend_ipc *I;
static int mydev, bench;
static cudaStream_t us;
static char *dbuf[NB], *dout;
static unsigned char *himg[MAXR * NB]; /* host images of every rank's allocations: [rank * NB + b] */
static unsigned char *hgot, *hwant;
static mpiacc_ipc_export_t X[MAXR * NB];
static void *tok[NB], *xdep;
static uint64_t seed0;
static uint64_t rs;

static uint64_t rnd(void)
{
    uint64_t z = (rs += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Every rank fills its allocations (queued on the user stream), exports
 * them behind that, and gathers every rank's exports into X. */
static void setup_exports(void)
{
    mpiacc_attrs_t a = cu_stream_attrs(us);
    int ok = 0;
    for (int r = 0; r < cu_size; r++)
        for (int b = 0; b < NB; b++) cu_hfill(himg[r * NB + b], CAP, (unsigned)(seed0 + (uint64_t)(r * NB + b) * 7919));
    for (int b = 0; b < NB; b++)
        CU_CK(cudaMemcpyAsync(dbuf[b], himg[cu_rank * NB + b], (size_t)CAP, cudaMemcpyHostToDevice, us));
    MPI_CK(B->capture(&a, dbuf[0], &xdep));
    for (int b = 0; b < NB; b++) {
        MPI_CK(I->export_buf(&a, xdep, dbuf[b], 0, (MPI_Aint)CAP, &X[cu_rank * NB + b], &tok[b], &ok));
        if (!ok) {
            fprintf(stderr, "[rank %d] export_buf refused a cudaMalloc allocation\n", cu_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_CK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, X, (int)(NB * sizeof X[0]), MPI_BYTE, MPI_COMM_WORLD));
}

static void teardown_exports(void)
{
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody reads our allocations any more */
    for (int b = 0; b < NB; b++) I->export_release(tok[b]);
    B->release(xdep);
    CU_CK(cudaStreamSynchronize(us));
}

/* A piece in test terms: dst is an offset into dout. */
typedef struct tpiece {
    int src;
    long long disp, bytes, doff;
} tpiece_t;

/* import_copy_n of pieces t[0..n) behind a dep captured after dout was
 * set to 0xAB on the user stream; compares all of dout with the images. */
static int run_pieces(const tpiece_t *t, int n, const char *what)
{
    mpiacc_ipc_piece_t *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    mpiacc_attrs_t a = cu_stream_attrs(us);
    void *xf = NULL, *dep = NULL;
    int bad = 0, rc;
    memset(hwant, 0xAB, (size_t)DCAP);
    for (int i = 0; i < n; i++) {
        p[i] = (mpiacc_ipc_piece_t){.src = t[i].src, .disp = t[i].disp, .bytes = t[i].bytes, .dst = dout + t[i].doff};
        memcpy(hwant + t[i].doff, himg[t[i].src] + t[i].disp, (size_t)t[i].bytes);
    }
    CU_CK(cudaMemsetAsync(dout, 0xAB, (size_t)DCAP, us));
    MPI_CK(B->capture(&a, dout, &dep));
    rc = I->import_copy_n(&a, dep, X, NB * cu_size, p, n, &xf);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int l = 0;
        MPI_Error_string(rc, s, &l);
        CU_BAD(bad, "%s (%d pieces): import_copy_n failed: %s", what, n, s);
    } else {
        if (xf && cu_wait_handle(B, xf, 30)) CU_BAD(bad, "%s: not complete after 30 s", what);
        if (xf) B->release(xf);
        cu_get(hgot, dout, DCAP);
        if (memcmp(hgot, hwant, (size_t)DCAP) != 0) {
            long long k = 0;
            int in = -1;
            while (hgot[k] == hwant[k]) k++;
            for (int i = 0; i < n; i++)
                if (k >= t[i].doff && k < t[i].doff + t[i].bytes) in = i;
            CU_BAD(bad, "%s (%d pieces): byte %lld of dout is 0x%02x, expected 0x%02x (%s %d: src %d disp %lld bytes %lld)",
                   what, n, k, hgot[k], hwant[k], in >= 0 ? "piece" : "outside every piece, after", in,
                   in >= 0 ? t[in].src : -1, in >= 0 ? t[in].disp : -1, in >= 0 ? t[in].bytes : -1);
        }
    }
    B->release(dep);
    free(p);
    return bad;
}

static int peer_alloc(int b) { return ((cu_rank + 1) % cu_size) * NB + b; }

static void one_piece(void **state)
{
    const long long sizes[] = {1, 2, 7, 8, 15, 16, 17, 100, 4096, 65536 + 3, 1 << 20, 16 << 20};
    /* (disp, doff): aligned; the same misalignment; 8, 4, 2, 1-byte mutual alignment */
    const long long disp[] = {0, 5, 8, 4, 2, 1, 3}, doff[] = {0, 5, 0, 8, 4, 0, 6};
    int bad = 0;
    (void)state;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t v = 0; v < sizeof disp / sizeof disp[0]; v++) {
            tpiece_t t = {.src = peer_alloc((int)(v % NB)), .disp = disp[v], .bytes = sizes[si], .doff = doff[v]};
            char what[64];
            if (t.disp + t.bytes > CAP || t.doff + t.bytes > DCAP) continue;
            snprintf(what, sizeof what, "one piece of %lld B, variant %zu", sizes[si], v);
            bad += run_pieces(&t, 1, what);
        }
    cu_all_ok(bad, "one piece");
}

static void alltoall(void **state)
{
    const long long sizes[] = {8, 1024, 65536, 1 << 20, 4 << 20};
    int bad = 0;
    (void)state;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        tpiece_t t[MAXR];
        long long s = sizes[si];
        char what[64];
        if (s * cu_size > DCAP) continue;
        for (int r = 0; r < cu_size; r++) /* from rank r: its block for this rank; into block r */
            t[r] = (tpiece_t){.src = r * NB, .disp = cu_rank * s, .bytes = s, .doff = r * s};
        snprintf(what, sizeof what, "all-to-all of %lld B per rank", s);
        bad += run_pieces(t, cu_size, what);
    }
    cu_all_ok(bad, "one piece from every rank");
}

static int random_pieces(int n, const char *what)
{
    tpiece_t *t = calloc((size_t)n, sizeof *t);
    long long at = 0;
    int bad;
    for (int i = 0; i < n; i++) {
        long long b = (long long)(rnd() % 5001), gap = (long long)(rnd() % 24);
        if (rnd() % 10 == 0) b = 0;
        t[i].src = (int)(rnd() % (uint64_t)(NB * cu_size));
        t[i].disp = (long long)(rnd() % (uint64_t)(CAP - b));
        t[i].doff = at + gap;
        t[i].bytes = b;
        at = t[i].doff + b;
    }
    bad = run_pieces(t, n, what);
    free(t);
    return bad;
}

static void many(void **state)
{
    int bad = 0;
    (void)state;
    for (int k = 0; k < 3; k++) {
        bad += random_pieces(MPIACC_IPC_COPYN_PIECES, "64 random pieces");
        bad += random_pieces(200, "200 random pieces");
        bad += random_pieces(3, "3 random pieces");
    }
    cu_all_ok(bad, "many pieces");
}

static void errors(void **state)
{
    int bad = 0, rc;
    void *xf = NULL;
    mpiacc_attrs_t a = cu_stream_attrs(us);
    mpiacc_ipc_export_t xs[2];
    mpiacc_ipc_piece_t p[2];
    (void)state;
    xs[0] = X[0], xs[1] = X[peer_alloc(1)];
    p[0] = (mpiacc_ipc_piece_t){.src = 0, .disp = 0, .bytes = 64, .dst = dout};
    p[1] = (mpiacc_ipc_piece_t){.src = 1, .disp = CAP - 8, .bytes = 16, .dst = dout + 64};
    rc = I->import_copy_n(&a, NULL, xs, 2, p, 2, &xf);
    if (cu_class(rc) != MPI_ERR_BUFFER || xf) CU_BAD(bad, "beyond hi: class %d, expected MPI_ERR_BUFFER", cu_class(rc));
    p[1].disp = -1;
    rc = I->import_copy_n(&a, NULL, xs, 2, p, 2, &xf);
    if (cu_class(rc) != MPI_ERR_BUFFER || xf) CU_BAD(bad, "below lo: class %d, expected MPI_ERR_BUFFER", cu_class(rc));
    p[1].disp = 0;
    xs[1].hi = (int64_t)xs[1].alloc_bytes + 64; /* an export claiming bytes beyond its allocation */
    rc = I->import_copy_n(&a, NULL, xs, 2, p, 2, &xf);
    if (cu_class(rc) != MPI_ERR_BUFFER || xf)
        CU_BAD(bad, "export beyond allocation: class %d, expected MPI_ERR_BUFFER", cu_class(rc));
    xs[1] = X[peer_alloc(1)];
    p[1].src = 2;
    rc = I->import_copy_n(&a, NULL, xs, 2, p, 2, &xf);
    if (cu_class(rc) != MPI_ERR_INTERN || xf) CU_BAD(bad, "export 2 of 2: class %d, expected MPI_ERR_INTERN", cu_class(rc));
    p[1].src = -1;
    rc = I->import_copy_n(&a, NULL, xs, 2, p, 2, &xf);
    if (cu_class(rc) != MPI_ERR_INTERN || xf) CU_BAD(bad, "export -1: class %d, expected MPI_ERR_INTERN", cu_class(rc));
    p[1].src = 1, p[1].bytes = -1;
    rc = I->import_copy_n(&a, NULL, xs, 2, p, 2, &xf);
    if (cu_class(rc) != MPI_ERR_INTERN || xf) CU_BAD(bad, "bytes -1: class %d, expected MPI_ERR_INTERN", cu_class(rc));
    p[0].bytes = p[1].bytes = 0, p[1].dst = NULL; /* nothing to do */
    rc = I->import_copy_n(&a, NULL, xs, 2, p, 2, &xf);
    if (rc != MPI_SUCCESS || xf) CU_BAD(bad, "empty pieces: error %d or a handle", rc);
    rc = I->import_copy_n(&a, NULL, xs, 2, p, 0, &xf);
    if (rc != MPI_SUCCESS || xf) CU_BAD(bad, "no piece: error %d or a handle", rc);
    cu_all_ok(bad, "error paths");
}

/* ---- benchmark ----------------------------------------------------------- */

static void run_bench(void)
{
    mpiacc_attrs_t a = cu_stream_attrs(us);
    if (cu_rank == 0) printf("bench import_copy_n: one piece from every rank (%d ranks), host time per call\n", cu_size);
    for (long long s = 8; s <= (16 << 20) && s * cu_size <= DCAP && s * cu_size <= CAP; s *= 8) {
        mpiacc_ipc_piece_t p[MAXR];
        double best = 1e30, sum = 0;
        const int iters = 50;
        for (int r = 0; r < cu_size; r++)
            p[r] = (mpiacc_ipc_piece_t){.src = r * NB, .disp = cu_rank * s, .bytes = s, .dst = dout + r * s};
        for (int it = -5; it < iters; it++) {
            void *xf = NULL;
            double t0, t;
            MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
            t0 = cu_now();
            MPI_CK(I->import_copy_n(&a, NULL, X, NB * cu_size, p, cu_size, &xf));
            if (xf && cu_wait_handle(B, xf, 30)) fprintf(stderr, "[rank %d] bench: not complete after 30 s\n", cu_rank);
            t = cu_now() - t0;
            if (xf) B->release(xf);
            if (it < 0) continue;
            MPI_CK(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
            if (t < best) best = t;
            sum += t;
        }
        if (cu_rank == 0)
            printf("  %9lld B per piece: best %.1f us, mean %.1f us (slowest rank)\n", s, best * 1e6, sum / iters * 1e6);
    }
}

int main(int argc, char **argv)
{
    int fails = 0;
    static const struct option lo[] = {{"bench", no_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'}, {0}};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_piece), cmocka_unit_test(alltoall), cmocka_unit_test(many), cmocka_unit_test(errors),
    };
    for (int c; (c = getopt_long(argc, argv, "bh", lo, NULL)) != -1;) {
        if (c == 'b') bench = 1;
        else {
            printf("usage: %s [--bench]  (1 to %d ranks; --bench: import_copy_n time per call instead of the tests)\n",
                   argv[0], MAXR);
            return c == 'h' ? 0 : 2;
        }
    }
    cu_mpi_start(&argc, &argv, MPI_THREAD_SINGLE);
    if (cu_size > MAXR) mpiacc_test_skip_all("runs on 1 to %d ranks, got %d", MAXR, cu_size);
    B = cu_device_start("");
    if (!(I = B->ipc) || !I->import_copy_n) {
        fprintf(stderr, "[rank %d] the CUDA backend has no import_copy_n\n", cu_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    mydev = cu_dev;
    cu_need_ipc_events();
    CU_CK(cudaStreamCreateWithFlags(&us, cudaStreamNonBlocking));
    for (int b = 0; b < NB; b++) CU_CK(cudaMalloc((void **)&dbuf[b], (size_t)CAP));
    CU_CK(cudaMalloc((void **)&dout, (size_t)DCAP));
    for (int i = 0; i < NB * cu_size; i++) himg[i] = malloc((size_t)CAP);
    hgot = malloc((size_t)DCAP), hwant = malloc((size_t)DCAP);
    seed0 = mpiacc_test_seed();
    rs = seed0 ^ ((uint64_t)cu_rank << 32);
    setup_exports();
    if (bench) run_bench();
    else fails = MPIACC_TEST_RUN("cuda_copyn", tests, NULL, NULL);
    teardown_exports();
    CU_CK(cudaDeviceSynchronize());
    for (int b = 0; b < NB; b++) CU_CK(cudaFree(dbuf[b]));
    CU_CK(cudaFree(dout));
    for (int i = 0; i < NB * cu_size; i++) free(himg[i]);
    free(hgot), free(hwant);
    CU_CK(cudaStreamDestroy(us));
    return cu_end(fails);
}
