/*
 * bench/pack: pack throughput of the CUDA backend (TEMPI bench-mpi-pack grid
 * and Jenkins' types), with same-run baselines.
 *
 * Rows: 2D objects (vector, hvector, subarray) of 1 KiB, 1 MiB, 4 MiB packed
 * bytes, blocks 1..512 B, pitch 512 B; then Jenkins' types (4D subarray in a
 * 64^4 volume of bytes, indexed / indexed_block with vector layout, struct
 * {double;int;int;char}, 3D-array faces of 256^3 doubles).
 * Columns (median wall time of one blocking call, us):
 *   dev      pack_dev into device memory (= MPI_Pack to a device buffer)
 *   udev     unpack_dev from device memory
 *   1shot    pack to mapped pinned host (one-shot kernel), incl. completion
 *   dma      pack to host through device temp + DMA ("device" mode)
 *   2D       cudaMemcpy2DAsync device->device + sync (1-D strided forms)
 *   2Dh      cudaMemcpy2DAsync device->pinned host + sync
 *   blk      per-block cudaMemcpyAsync device->device (~: extrapolated
 *            from the first 20000 blocks)
 *   host     MPICH MPI_Pack on a host copy
 * and ratios: 2D/dev (kernel speed-up over cudaMemcpy2D), 1shot GB/s as a
 * fraction of pinned cudaMemcpy D2H bandwidth measured in the same run.
 *
 *   bench/pack [--csv FILE] [--iters N] [--quick]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/cuda_internal.h"

static const mpiacc_backend_t *B;
static int iters = 50;
static FILE *csv;
static double pcie_bw; /* pinned D2H bytes/s */

#define CK(call_)                                                                                        \
    do {                                                                                                 \
        cudaError_t e_ = (call_);                                                                        \
        if (e_ != cudaSuccess) {                                                                         \
            fprintf(stderr, "bench/pack:%d: %s: %s\n", __LINE__, #call_, cudaGetErrorString(e_));        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
        }                                                                                                \
    } while (0)
#define MK(call_)                                                                                        \
    do {                                                                                                 \
        int m_ = (call_);                                                                                \
        if (m_ != MPI_SUCCESS) {                                                                         \
            char s_[MPI_MAX_ERROR_STRING];                                                               \
            int l_;                                                                                      \
            MPI_Error_string(m_, s_, &l_);                                                               \
            fprintf(stderr, "bench/pack:%d: %s: %s\n", __LINE__, #call_, s_);                            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
        }                                                                                                \
    } while (0)

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct ctx {
    mpiacc_pack_type_t *T;
    MPI_Datatype mt;
    char *dbuf, *dpk, *hbuf, *hpk;
    void *stg;
    long long span, size;
    cudaStream_t st;
    mpiacc_attrs_t a;
    long long nblk, cap; /* per-block copies: count, cap measured */
    long long *boff;     /* block offsets (unit chunks) */
} ctx_t;

enum { M_DEV, M_UDEV, M_1SHOT, M_DMA, M_2D, M_2DH, M_BLK, M_HOST, M_N };
static const char *mname[M_N] = {"dev", "udev", "1shot", "dma", "2D", "2Dh", "blk", "host"};

static void run_once(ctx_t *c, int m)
{
    mpiacc_xfer_desc_t d = {.buf = c->dbuf, .type = c->T, .count = 1, .first = 0, .last = c->size, .host = c->stg};
    void *x = NULL;
    int done = 0, pos = 0;
    switch (m) {
    case M_DEV: MK(B->pack_dev(&c->a, NULL, &d, c->dpk, 0)); break;
    case M_UDEV: MK(B->unpack_dev(&c->a, NULL, &d, c->dpk, 0)); break;
    case M_1SHOT:
    case M_DMA:
        mpiacc_cuda_set_mode(m == M_1SHOT ? MPIACC_CU_MODE_ONESHOT : MPIACC_CU_MODE_DEVICE, 0);
        MK(B->pack(&c->a, NULL, &d, &x));
        while (!done) MK(B->test(x, &done));
        B->release(x);
        mpiacc_cuda_set_mode(MPIACC_CU_MODE_AUTO, 0);
        break;
    case M_2D:
    case M_2DH:
        CK(cudaMemcpy2DAsync(m == M_2D ? (void *)c->dpk : c->stg, (size_t)c->T->blk, c->dbuf + c->T->start,
                             (size_t)c->T->strides[0], (size_t)c->T->blk, (size_t)c->T->counts[0],
                             cudaMemcpyDefault, c->st));
        CK(cudaStreamSynchronize(c->st));
        break;
    case M_BLK: {
        long long n = c->nblk < c->cap ? c->nblk : c->cap, u = c->T->unit;
        for (long long k = 0; k < n; k++)
            CK(cudaMemcpyAsync(c->dpk + k * u, c->dbuf + c->boff[k], (size_t)u, cudaMemcpyDefault, c->st));
        CK(cudaStreamSynchronize(c->st));
        break;
    }
    default: MK(MPI_Pack(c->hbuf, 1, c->mt, c->hpk, (int)c->size, &pos, MPI_COMM_SELF)); break;
    }
}

static double time_us(ctx_t *c, int m)
{
    int n = m == M_HOST || m == M_BLK ? (iters < 7 ? iters : 7) : iters;
    double *t = malloc(sizeof(double) * (size_t)n), r;
    run_once(c, m); /* warm-up (and model measurement, blob upload) */
    for (int i = 0; i < n; i++) {
        double t0 = MPI_Wtime();
        run_once(c, m);
        t[i] = (MPI_Wtime() - t0) * 1e6;
    }
    qsort(t, (size_t)n, sizeof *t, cmpd);
    r = t[n / 2];
    free(t);
    if (m == M_BLK && c->nblk > c->cap) r *= (double)c->nblk / (double)c->cap;
    return r;
}

/* Benchmarks one committed type (count 1). */
static void bench_type(const char *group, const char *name, MPI_Datatype mt, long long blk_label)
{
    ctx_t c;
    MPI_Count lb, ext, tlb, text;
    double us[M_N];
    int have[M_N];
    memset(&c, 0, sizeof c);
    c.mt = mt;
    MK(mpiacc_pack_type_analyze(mt, &c.T));
    MPI_Type_get_true_extent_x(mt, &tlb, &text);
    MPI_Type_get_extent_x(mt, &lb, &ext);
    c.span = tlb + text;
    c.size = c.T->size;
    c.a.kind = MPIACC_KIND_CUDA;
    c.cap = 20000;
    CK(cudaStreamCreateWithFlags(&c.st, cudaStreamNonBlocking));
    CK(cudaMalloc((void **)&c.dbuf, (size_t)c.span));
    CK(cudaMalloc((void **)&c.dpk, (size_t)c.size));
    CK(cudaMemset(c.dbuf, 1, (size_t)c.span));
    MK(B->host_alloc((size_t)c.size, &c.stg));
    c.hbuf = calloc(1, (size_t)c.span);
    c.hpk = malloc((size_t)c.size);
    c.nblk = c.T->unit > 0 ? c.size / c.T->unit : 0;
    long long nb = c.nblk < c.cap ? c.nblk : c.cap;
    c.boff = malloc(sizeof(long long) * (size_t)(nb ? nb : 1));
    for (long long k = 0; k < nb; k++)
        c.boff[k] = mpiacc_tv_offset((const mpiacc_tv_i64 *)c.T->blob, k * c.T->unit);
    for (int m = 0; m < M_N; m++) {
        have[m] = 1;
        if ((m == M_2D || m == M_2DH) && !(c.T->strided && c.T->ndims == 1 && c.T->strides[0] >= c.T->blk))
            have[m] = 0;
        if (m == M_BLK && !c.T->blob) have[m] = 0;
        us[m] = have[m] ? time_us(&c, m) : 0;
    }
    printf("%-9s %-22s %8lld %5lld", group, name, c.size, blk_label);
    for (int m = 0; m < M_N; m++) {
        if (!have[m]) printf(" %9s", "-");
        else printf(" %8.1f%s", us[m], m == M_BLK && c.nblk > c.cap ? "~" : " ");
        if (csv && have[m])
            fprintf(csv, "%s,%s,%lld,%lld,%s,%.3f,%.4f\n", group, name, c.size, blk_label, mname[m], us[m],
                    c.size / us[m] * 1e-3);
    }
    double gbs = c.size / us[M_1SHOT] * 1e-3;
    printf(" | %6.1fx %5.0f%%\n", have[M_2D] ? us[M_2D] / us[M_DEV] : 0.0, gbs * 1e9 / pcie_bw * 100);
    free(c.boff), free(c.hbuf), free(c.hpk);
    B->host_free(c.stg, (size_t)c.size);
    CK(cudaFree(c.dbuf));
    CK(cudaFree(c.dpk));
    CK(cudaStreamDestroy(c.st));
    mpiacc_pack_type_release(c.T);
}

static double pinned_bw(void)
{
    const size_t n = 256u << 20;
    void *d, *h;
    cudaEvent_t e0, e1;
    float ms, best = 1e30f;
    CK(cudaMalloc(&d, n));
    CK(cudaHostAlloc(&h, n, cudaHostAllocDefault));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 4; i++) {
        CK(cudaEventRecord(e0, 0));
        CK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i && ms < best) best = ms;
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    return n / (best * 1e-3);
}

int main(int argc, char **argv)
{
    int quick = 0, n = 0;
    const long long totals[] = {1 << 10, 1 << 20, 4 << 20};
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = fopen(argv[++i], "w");
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
    }
    B = mpiacc_backend_get(MPIACC_KIND_CUDA);
    if (!B) {
        cudaError_t e = cudaGetDeviceCount(&n);
        printf("SKIPPED: no CUDA device: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "none");
        MPI_Finalize();
        return 0;
    }
    CK(cudaSetDevice(0));
    if (csv) fprintf(csv, "group,type,bytes,block,method,us,GBps\n");
    pcie_bw = pinned_bw();
    char desc[2048];
    B->describe(desc, sizeof desc);
    printf("%s", desc);
    printf("pinned cudaMemcpy D2H (256 MiB): %.1f GB/s; times: median us of one blocking call\n", pcie_bw * 1e-9);
    printf("%-9s %-22s %8s %5s", "group", "type", "bytes", "blk");
    for (int m = 0; m < M_N; m++) printf(" %9s", mname[m]);
    printf(" | 2D/dev 1shot/PCIe\n");
    /* TEMPI grid: 2D objects, pitch 512 */
    for (int ti = 0; ti < 3; ti++)
        for (int blk = 1; blk <= 512; blk *= 2)
            for (int ctor = 0; ctor < 3; ctor++) {
                long long nb = totals[ti] / blk;
                MPI_Datatype t;
                const char *cn[] = {"vector", "hvector", "subarray"};
                if (quick && ctor) continue;
                if (ctor == 0) MPI_Type_vector((int)nb, blk, 512, MPI_BYTE, &t);
                else if (ctor == 1) MPI_Type_create_hvector((int)nb, blk, 512, MPI_BYTE, &t);
                else {
                    int sz[2] = {(int)nb, 512}, sub[2] = {(int)nb, blk}, st[2] = {0, 0};
                    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_BYTE, &t);
                }
                MPI_Type_commit(&t);
                bench_type("2D", cn[ctor], t, blk);
                MPI_Type_free(&t);
            }
    /* Jenkins: 4D subarray (hypercube of side s in 64^4 bytes) */
    for (int s = 8; s <= 32; s *= 2) {
        MPI_Datatype t;
        int sz[4] = {64, 64, 64, 64}, sub[4] = {s, s, s, s}, st[4] = {0, 0, 0, 0};
        char nm[32];
        MPI_Type_create_subarray(4, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        snprintf(nm, sizeof nm, "subarray4d s=%d", s);
        bench_type("jenkins", nm, t, 8 * s);
        MPI_Type_free(&t);
    }
    /* indexed / indexed_block with a vector layout: 8 B blocks, pitch 512 */
    {
        const int nb = 65536;
        int *bl = malloc(sizeof(int) * nb), *disp = malloc(sizeof(int) * nb);
        MPI_Datatype t;
        for (int i = 0; i < nb; i++) bl[i] = 1, disp[i] = i * 64;
        MPI_Type_indexed(nb, bl, disp, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        bench_type("jenkins", "indexed 8B/512", t, 8);
        MPI_Type_free(&t);
        MPI_Type_create_indexed_block(nb, 1, disp, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        bench_type("jenkins", "idxblock 8B/512", t, 8);
        MPI_Type_free(&t);
        free(bl), free(disp);
    }
    /* struct {double; int; int; char} (extent 24) x 65536 */
    {
        MPI_Datatype s, t;
        int bl[4] = {1, 1, 1, 1};
        MPI_Aint d[4] = {0, 8, 12, 16};
        MPI_Datatype ty[4] = {MPI_DOUBLE, MPI_INT, MPI_INT, MPI_CHAR};
        MPI_Type_create_struct(4, bl, d, ty, &s);
        MPI_Type_create_resized(s, 0, 24, &t);
        MPI_Type_free(&s);
        MPI_Type_contiguous(65536, t, &s);
        MPI_Type_commit(&s);
        bench_type("jenkins", "struct d,i,i,c x64Ki", s, 17);
        MPI_Type_free(&s);
        MPI_Type_free(&t);
    }
    /* 3D faces of an n^3 array of doubles (x fastest) */
    for (int nn = 64; nn <= (quick ? 64 : 256); nn *= 2) {
        MPI_Datatype t;
        char nm[32];
        MPI_Type_vector(1, nn * nn, 1, MPI_DOUBLE, &t); /* X-Y face: z fixed */
        MPI_Type_commit(&t);
        snprintf(nm, sizeof nm, "face X-Y %d^3", nn);
        bench_type("jenkins", nm, t, 8LL * nn * nn);
        MPI_Type_free(&t);
        MPI_Type_vector(nn, nn, nn * nn, MPI_DOUBLE, &t); /* X-Z: y fixed */
        MPI_Type_commit(&t);
        snprintf(nm, sizeof nm, "face X-Z %d^3", nn);
        bench_type("jenkins", nm, t, 8LL * nn);
        MPI_Type_free(&t);
        MPI_Type_vector(nn * nn, 1, nn, MPI_DOUBLE, &t); /* Y-Z: x fixed */
        MPI_Type_commit(&t);
        snprintf(nm, sizeof nm, "face Y-Z %d^3", nn);
        bench_type("jenkins", nm, t, 8);
        MPI_Type_free(&t);
    }
    printf("targets: 4 MiB dev <= 12 us (8 B blocks), <= 8 us (>= 16 B); 2D/dev >= 20x (<= 2 B), >= 5x (8 B);\n"
           "         1shot/PCIe >= 90%% for blocks >= 2 B; 1 KiB dev <= 8 us\n");
    if (csv) fclose(csv);
    MPI_Finalize();
    return 0;
}
