/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/pack: pack throughput of the CUDA backend (TEMPI bench-mpi-pack grid
 * and Jenkins' types), with same-run baselines.
 *
 * First, latency floors of this machine (median of 300 calls): the host
 * time of a kernel launch, and an empty kernel plus each way of waiting for
 * it; then MPI_Pack to device (pack_dev) of a few types under each
 * completion method of cuda_sync.c (MPIACC_CUDA_SYNC), next to the
 * kernel-only time.
 * Then the table.  Rows: 2D objects (vector, hvector, subarray) of 1 KiB,
 * 1 MiB, 4 MiB packed bytes, blocks 1..512 B, pitch 512 B; 4 MiB vectors of
 * 8 B blocks at stride 16 ("vector s16": 8 MiB read, 4 MiB written) and of
 * 16 B at stride 32 ("vector s32"); then Jenkins' types (4D subarray in a
 * 64^4 volume of bytes, indexed / indexed_block with vector layout, struct
 * {double;int;int;char}, 3D-array faces of n^3 doubles).  Columns, median wall time of one blocking call in us, unless
 * marked k (kernel-only):
 *   dev      pack_dev into device memory (= MPI_Pack to a device buffer),
 *            completion method as printed in the header
 *   kdev     kernel-only GPU time of the same pack: 20 packs launched back to
 *            back behind a gate kernel, CUDA events around them, / 20 (no
 *            host synchronisation in between: launch and wait costs gone)
 *   udev     unpack_dev from device memory
 *   1shot    pack to mapped pinned host (one-shot kernel), incl. completion
 *            (backend pack + test loop, i.e. cudaEventQuery)
 *   k1shot   kernel-only time of the one-shot pack (as kdev)
 *   dma      pack to host through device temp + DMA ("device" mode)
 *   d2h      the same number of bytes, contiguous, pinned cudaMemcpyAsync
 *            device->host + cudaEventQuery loop (what one-shot competes with)
 *   2D       cudaMemcpy2DAsync device->device + sync (1-D strided forms)
 *   2Dh      cudaMemcpy2DAsync device->pinned host + sync
 *   blk      per-block cudaMemcpyAsync device->device (~: extrapolated
 *            from the first 20000 blocks)
 *   host     MPICH MPI_Pack on a host copy
 * Ratios: 2D/dev (blocking calls), k2D/kdev (kernel-only, the 2D copy timed
 * like kdev), 1shot/PCIe (blocking one-shot bandwidth over pinned D2H
 * bandwidth of 256 MiB), k1shot/PCIe (kernel-only one-shot bandwidth over
 * the same), d2h/1shot (same bytes, both blocking).
 * Roofline (pack_roof.h), per row: sectKB, the KiB of 32 B sectors the pack
 * must read (input blocks) and write (packed side); roof, the time those
 * bytes take at the device's copy bandwidth (cudaMemcpy D2D 256 MiB, read +
 * written, measured in this run), at least the kernel-only time of an empty
 * kernel; %roof = roof / kdev (100 %: at the roofline); at: "bw" when the
 * sector bytes decide, "lat" when the case is below the empty-kernel floor;
 * dev-flr: dev minus the floor of a blocking call (empty kernel + event
 * record + query loop, this run).
 * Pattern floor (pack_floor.h), rows of a 1-D strided form (where 2D
 * applies; "-" elsewhere): kmin, kernel-only us (timed as kdev) of the
 * fastest hand-specialised pack of the same blocks, stride and alignment,
 * no datatype machinery; via, its variant: w<W> (one thread per W-byte
 * word, W the widest of 16..1 dividing block, stride and addresses),
 * w<W>x4 (4 such words per thread, loads then stores), s16 (blocks of
 * 1..8 B at stride <= 64: one thread per 16-byte output vector from
 * 16-byte loads); kdev/kmin, how far mpiacc's kernel is from it.  Each
 * variant's output is compared once per row with mpiacc's pack of a hashed
 * input: BAD (and a note line) instead of a time when the bytes differ.
 * CSV methods kmin (the fastest) and kmin_<variant>; the closing lines give
 * the median and worst kdev/kmin next to the roofline summary.
 * unroll A/B: 64 MiB objects, where the kernels' unrolled forms apply,
 * kernel-only with them and with one vector per thread (mpiacc_cuda_set_unroll).
 * Timings are warm (the same buffers every call; sectors a pack reads can
 * stay in L2 between calls); --cold evicts L2 (a 256 MiB memset) before
 * every timed blocking call.
 *
 *   bench/pack [--csv FILE] [--iters N] [--quick] [--cold] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench.h"
#include "cu_nodev.h"
#include "cuda/cuda_testhooks.h"
#include "pack_floor.h"
#include "pack_kernels.h"
#include "pack_roof.h"

static const mpiacc_backend_t *B;
static int iters = 50, cold;
static FILE *csv;
static double pcie_bw; /* pinned D2H bytes/s */
static double copy_bw, kempty; /* D2D bytes read+written/s; empty kernel, kernel-only us */
#define NROOF 256
static double roof_frac[NROOF]; /* %roof of the bandwidth-bound rows */
static int nroof;
static char roof_worst[96];
static double floor_us[F_N];
static volatile int *gate;   /* mapped pinned: opens bench_launch_gate */
static pack_roof_timer_t ktm; /* kernel-only timing: gate, tev0/tev1, NK */
static void *flush_buf;      /* --cold: L2 eviction */
static cudaEvent_t tev0, tev1; /* timing events */

#define CK BENCH_CUDA_CHECK
#define MK BENCH_MPI_CHECK

/* upper median (the middle value for odd n) */
static double median(double *t, int n) { return bench_percentile(t, (size_t)n, 50); }

static double now_us(void) { return MPI_Wtime() * 1e6; }

typedef struct ctx {
    mpiacc_pack_type_t *T;
    MPI_Datatype mt;
    char *dbuf, *dpk, *hbuf, *hpk;
    void *stg;
    long long span, dbytes, size; /* dbytes: dbuf's size, span rounded up to 16 */
    cudaStream_t st;
    cudaEvent_t ev;
    mpiacc_attrs_t a;
    long long nblk, cap; /* per-block copies: count, cap measured */
    long long *boff;     /* block offsets (unit chunks) */
    int is2d;            /* 1-D strided form: memcpy2D applies */
    pack_floor_t fl;     /* pattern floor (is2d rows) */
} ctx_t;

enum { M_DEV, M_KDEV, M_UDEV, M_1SHOT, M_K1SHOT, M_DMA, M_D2H, M_2D, M_2DH, M_BLK, M_HOST, M_N, M_K2D = M_N };
static const char *mname[M_N + 1] = {"dev", "kdev", "udev", "1shot", "k1shot", "dma", "d2h",
                                     "2D",  "2Dh",  "blk",  "host",  "k2D"};

static void ctx_open(ctx_t *c, MPI_Datatype mt)
{
    MPI_Count lb, ext, tlb, text;
    memset(c, 0, sizeof *c);
    c->mt = mt;
    MK(mpiacc_pack_type_analyze(mt, &c->T));
    MPI_Type_get_true_extent_x(mt, &tlb, &text);
    MPI_Type_get_extent_x(mt, &lb, &ext);
    c->span = tlb + text;
    c->dbytes = (c->span + 15) / 16 * 16;
    c->size = c->T->size;
    c->a.kind = MPIACC_KIND_CUDA;
    c->cap = 20000;
    c->is2d = c->T->strided && c->T->ndims == 1 && c->T->strides[0] >= c->T->blk;
    CK(cudaStreamCreateWithFlags(&c->st, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&c->ev, cudaEventDisableTiming));
    CK(cudaMalloc((void **)&c->dbuf, (size_t)c->dbytes));
    CK(cudaMalloc((void **)&c->dpk, (size_t)c->size));
    CK(cudaMemset(c->dbuf, 1, (size_t)c->dbytes));
    if (c->is2d) pack_floor_open(&c->fl, c->T, c->dbuf, c->dbytes);
    MK(B->host_alloc((size_t)c->size, &c->stg));
    c->hbuf = calloc(1, (size_t)c->span);
    c->hpk = malloc((size_t)c->size);
    c->nblk = c->T->unit > 0 ? c->size / c->T->unit : 0;
    long long nb = c->nblk < c->cap ? c->nblk : c->cap;
    c->boff = malloc(sizeof(long long) * (size_t)(nb ? nb : 1));
    for (long long k = 0; k < nb; k++)
        c->boff[k] = mpiacc_tv_offset((const mpiacc_tv_i64 *)c->T->blob, k * c->T->unit);
}

static void ctx_close(ctx_t *c)
{
    pack_floor_close(&c->fl);
    free(c->boff), free(c->hbuf), free(c->hpk);
    B->host_free(c->stg, (size_t)c->size);
    CK(cudaFree(c->dbuf));
    CK(cudaFree(c->dpk));
    CK(cudaEventDestroy(c->ev));
    CK(cudaStreamDestroy(c->st));
    mpiacc_pack_type_release(c->T);
}

static void spin_event(cudaEvent_t ev)
{
    cudaError_t e;
    while ((e = cudaEventQuery(ev)) == cudaErrorNotReady) {
    }
    CK(e);
}

static void enqueue_2d(ctx_t *c, void *dst)
{
    CK(cudaMemcpy2DAsync(dst, (size_t)c->T->blk, c->dbuf + c->T->start, (size_t)c->T->strides[0],
                         (size_t)c->T->blk, (size_t)c->T->counts[0], cudaMemcpyDefault, c->st));
}

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
        mpiacc_cuda_set_mode(m == M_1SHOT ? MPIACC_CUDA_MODE_ONESHOT : MPIACC_CUDA_MODE_DEVICE, 0);
        MK(B->pack(&c->a, NULL, &d, &x));
        while (!done) MK(B->test(x, &done));
        B->release(x);
        mpiacc_cuda_set_mode(MPIACC_CUDA_MODE_AUTO, 0);
        break;
    case M_D2H:
        CK(cudaMemcpyAsync(c->stg, c->dpk, (size_t)c->size, cudaMemcpyDeviceToHost, c->st));
        CK(cudaEventRecord(c->ev, c->st));
        spin_event(c->ev);
        break;
    case M_2D:
    case M_2DH:
        enqueue_2d(c, m == M_2D ? (void *)c->dpk : c->stg);
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

static void evict_l2(void)
{
    CK(cudaMemsetAsync(flush_buf, 0x5a, 256u << 20, 0));
    CK(cudaStreamSynchronize(0));
}

/* Median wall time of one blocking call. */
static double time_us(ctx_t *c, int m)
{
    int n = m == M_HOST || m == M_BLK ? (iters < 7 ? iters : 7) : iters;
    double *t = malloc(sizeof(double) * (size_t)n), r;
    run_once(c, m); /* warm-up (and model measurement, blob upload) */
    for (int i = 0; i < n; i++) {
        if (cold && m != M_HOST) evict_l2();
        double t0 = now_us();
        run_once(c, m);
        t[i] = now_us() - t0;
    }
    r = median(t, n);
    free(t);
    if (m == M_BLK && c->nblk > c->cap) r *= (double)c->nblk / (double)c->cap;
    return r;
}

/* Kernel-only (pack_roof_kernel_us): NK operations queued behind a gate,
 * events around them. */
#define NK 20
typedef struct kjob {
    ctx_t *c;
    int m;
} kjob_t;

static void kern_enqueue(void *arg, cudaStream_t st)
{
    const kjob_t *j = arg;
    ctx_t *c = j->c;
    mpiacc_xfer_desc_t d = {.buf = c->dbuf, .type = c->T, .count = 1, .first = 0, .last = c->size};
    if (j->m == M_K2D) enqueue_2d(c, c->dpk); /* on c->st == st */
    else MK(mpiacc_cuda_enqueue_xfer(&d, j->m == M_KDEV ? (void *)c->dpk : c->stg, MPIACC_CUDA_DIR_PACK, st));
}

static double kern_us(ctx_t *c, int m)
{
    kjob_t j = {c, m};
    return pack_roof_kernel_us(&ktm, c->st, kern_enqueue, &j);
}

static void csv_row(const char *group, const char *name, long long bytes, long long blk, const char *method,
                    double us)
{
    if (csv) fprintf(csv, "%s,%s,%lld,%lld,%s,%.3f,%.4f\n", group, name, bytes, blk, method, us, bytes / us * 1e-3);
}

/* The roofline columns of a row (see the header comment). */
static void roof_row(const ctx_t *c, const char *group, const char *name, long long blk, double kdev, double dev)
{
    const long long sb = pack_roof_sector_bytes(c->T, c->dbuf, c->dpk);
    const double t_bw = sb > 0 ? (double)sb / copy_bw * 1e6 : 0, roof = t_bw > kempty ? t_bw : kempty;
    const double frac = roof / kdev * 100;
    const int bw = t_bw >= kempty;
    if (sb < 0) {
        printf(" | %8s %7s %6s %4s %8.1f", "-", "-", "-", "-", dev - floor_us[F_EVENT]);
        return;
    }
    printf(" | %8.1f %7.2f %5.0f%% %4s %8.1f", sb / 1024.0, roof, frac, bw ? "bw" : "lat", dev - floor_us[F_EVENT]);
    if (csv) {
        fprintf(csv, "%s,%s,%lld,%lld,roof,%.3f,%.4f\n", group, name, (long long)c->size, blk, roof,
                (double)c->size / roof * 1e-3);
        fprintf(csv, "%s,%s,%lld,%lld,sector_bytes,0,%lld\n", group, name, (long long)c->size, blk, sb);
    }
    if (bw && nroof < NROOF) {
        if (!nroof || frac < bench_min(roof_frac, (size_t)nroof))
            snprintf(roof_worst, sizeof roof_worst, "%s %s %lld B blk %lld: %.0f%%", group, name,
                     (long long)c->size, blk, frac);
        roof_frac[nroof++] = frac;
    }
}

/* Benchmarks one committed type (count 1): a table row. */
static void bench_type(const char *group, const char *name, MPI_Datatype mt, long long blk_label)
{
    ctx_t c;
    double us[M_N + 1];
    int have[M_N + 1];
    ctx_open(&c, mt);
    for (int m = 0; m <= M_N; m++) {
        have[m] = 1;
        if ((m == M_2D || m == M_2DH || m == M_K2D) && !c.is2d) have[m] = 0;
        if (m == M_BLK && !c.T->blob) have[m] = 0;
        if (!have[m]) us[m] = 0;
        else if (m == M_KDEV || m == M_K1SHOT || m == M_K2D) us[m] = kern_us(&c, m);
        else us[m] = time_us(&c, m);
        if (have[m]) csv_row(group, name, c.size, blk_label, mname[m], us[m]);
    }
    printf("%-9s %-21s %8lld %5lld", group, name, c.size, blk_label);
    for (int m = 0; m < M_N; m++) {
        if (!have[m]) printf(" %8s", "-");
        else if (us[m] >= 1e5) printf(" %7.0f%s", us[m], m == M_BLK && c.nblk > c.cap ? "~" : " ");
        else printf(" %7.1f%s", us[m], m == M_BLK && c.nblk > c.cap ? "~" : " ");
    }
    double bw1 = c.size / us[M_1SHOT] * 1e6, bwk = c.size / us[M_K1SHOT] * 1e6;
    if (c.is2d) printf(" | %5.1fx %7.1fx", us[M_2D] / us[M_DEV], us[M_K2D] / us[M_KDEV]);
    else printf(" | %6s %8s", "-", "-");
    printf(" %9.0f%% %10.0f%% %9.2f", bw1 / pcie_bw * 100, bwk / pcie_bw * 100, us[M_D2H] / us[M_1SHOT]);
    roof_row(&c, group, name, blk_label, us[M_KDEV], us[M_DEV]);
    if (c.fl.on) { /* the floor's reference: mpiacc's pack of a hashed input */
        CK(bench_launch_fill(c.dbuf, (size_t)c.dbytes, c.st));
        CK(cudaStreamSynchronize(c.st));
        run_once(&c, M_DEV);
    }
    pack_floor_row(&c.fl, c.dpk, c.st, group, name, blk_label, us[M_KDEV]);
    fflush(stdout);
    ctx_close(&c);
}

static double host1k, kdev1k; /* 1 KiB: host us from call to launch return; kernel-only us */

/* pack_dev of a few 2D vectors under each completion method. */
static void sync_modes(void)
{
    const long long cases[][2] = {{1 << 10, 8}, {4 << 20, 1}, {4 << 20, 8}, {4 << 20, 16}, {4 << 20, 512}};
    const int ncase = (int)(sizeof cases / sizeof cases[0]);
    const int dflt = mpiacc_cuda_get_sync();
    printf("MPI_Pack to device (pack_dev), 2D vector pitch 512, median us by completion method (default: %s):\n",
           mpiacc_cuda_sync_name(dflt));
    printf("  %8s %5s", "bytes", "blk");
    for (int s = 0; s < MPIACC_CUDA_SYNC_N; s++) printf(" %8s", mpiacc_cuda_sync_name(s));
    printf(" %8s\n", "kdev");
    for (int k = 0; k < ncase; k++) {
        MPI_Datatype t;
        ctx_t c;
        char nm[32];
        MPI_Type_vector((int)(cases[k][0] / cases[k][1]), (int)cases[k][1], 512, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        ctx_open(&c, t);
        snprintf(nm, sizeof nm, "vector %lld B", cases[k][1]);
        printf("  %8lld %5lld", cases[k][0], cases[k][1]);
        for (int s = 0; s < MPIACC_CUDA_SYNC_N; s++) {
            mpiacc_cuda_set_sync(s);
            double us = time_us(&c, M_DEV);
            printf(" %8.2f", us);
            csv_row("sync", nm, c.size, cases[k][1], mpiacc_cuda_sync_name(s), us);
        }
        mpiacc_cuda_set_sync(dflt);
        double kd = kern_us(&c, M_KDEV);
        printf(" %8.2f\n", kd);
        csv_row("sync", nm, c.size, cases[k][1], "kdev", kd);
        if (k == 0) { /* host time of plan + launch (the bench hook: pack_dev less its stream/slot pick and wait) */
            mpiacc_xfer_desc_t d = {.buf = c.dbuf, .type = c.T, .count = 1, .first = 0, .last = c.size};
            double t[300];
            for (int i = -10; i < 300; i++) {
                const double t0 = now_us();
                MK(mpiacc_cuda_enqueue_xfer(&d, c.dpk, MPIACC_CUDA_DIR_PACK, c.st));
                const double t1 = now_us();
                CK(cudaStreamSynchronize(c.st));
                if (i >= 0) t[i] = t1 - t0;
            }
            host1k = median(t, 300), kdev1k = kd;
            csv_row("sync", nm, c.size, cases[k][1], "host_to_launch", host1k);
        }
        ctx_close(&c);
        MPI_Type_free(&t);
    }
}

/* A/B of the kernels' unrolled forms (several vectors per thread, taken
 * only when a transfer exceeds U full waves of the device, so not by the
 * table's sizes): 64 MiB 2D vectors, pitch 64, kernel-only time with the
 * unrolled forms allowed (the default) and with one vector per thread, on
 * the strided kernel and forced onto the generic one. */
static void unroll_ab(void)
{
    const long long total = 64ll << 20, blks[] = {4, 8, 16, 32};
    printf("unrolled kernel forms vs one vector per thread: 64 MiB 2D vector, pitch 64, kernel-only us (%%roof)\n");
    printf("  %5s %-8s %14s %14s %7s\n", "blk", "kernel", "unrolled", "one/thread", "ratio");
    for (int i = 0; i < 4; i++) {
        MPI_Datatype t;
        ctx_t c;
        MPI_Type_vector((int)(total / blks[i]), (int)blks[i], 64, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        ctx_open(&c, t);
        const double sb = (double)pack_roof_sector_bytes(c.T, c.dbuf, c.dpk), roof = sb / copy_bw * 1e6;
        for (int gen = 0; gen < 2; gen++) {
            double us[2];
            char nm[32];
            mpiacc_cuda_set_mode(MPIACC_CUDA_MODE_AUTO, gen);
            for (int u = 0; u < 2; u++) {
                mpiacc_cuda_set_unroll(!u);
                us[u] = kern_us(&c, M_KDEV);
            }
            mpiacc_cuda_set_unroll(1);
            mpiacc_cuda_set_mode(MPIACC_CUDA_MODE_AUTO, 0);
            printf("  %5lld %-8s %8.1f (%3.0f%%) %8.1f (%3.0f%%) %7.2f\n", blks[i], gen ? "generic" : "strided", us[0],
                   roof / us[0] * 100, us[1], roof / us[1] * 100, us[1] / us[0]);
            snprintf(nm, sizeof nm, "vector %lld B pitch 64", blks[i]);
            csv_row(gen ? "unroll_generic" : "unroll_strided", nm, c.size, blks[i], "kdev", us[0]);
            csv_row(gen ? "unroll_generic" : "unroll_strided", nm, c.size, blks[i], "kdev_one", us[1]);
            csv_row(gen ? "unroll_generic" : "unroll_strided", nm, c.size, blks[i], "roof", roof);
        }
        fflush(stdout);
        ctx_close(&c);
        MPI_Type_free(&t);
    }
}

int main(int argc, char **argv)
{
    int quick = 0, n = 0;
    const long long totals[] = {1 << 10, 1 << 20, 4 << 20};
    double t_start;
    const char *csvpath = NULL;
    cli_opt_t opts[] = {
        {"csv", CLI_FILE, &csvpath, "also write every measurement to this CSV file", NULL, CLI_ANY},
        {"iters", CLI_INT, &iters, "timed calls per measurement (median)", NULL, 1, 1e6},
        {"quick", CLI_FLAG, &quick, "vector rows only, 3D faces up to 64^3", NULL, CLI_ANY},
        {"cold", CLI_FLAG, &cold, "evict L2 (256 MiB memset) before every timed blocking call", NULL, CLI_ANY},
    };
    CLI_PARSE(argc, argv, "pack", "pack [options]",
              "Pack/unpack throughput of the CUDA backend (TEMPI grid, Jenkins' types) against\n"
              "cudaMemcpy2D, per-block copies, MPICH's MPI_Pack and a hand-specialised pack of\n"
              "each 1-D strided pattern (kmin), same run.", opts);
    MPI_Init(&argc, &argv);
    t_start = MPI_Wtime();
    B = mpiacc_backend_get(MPIACC_KIND_CUDA);
    if (!B) {
        cudaError_t e = cudaGetDeviceCount(&n);
        printf("SKIPPED: %s\n", e != cudaSuccess || n <= 0 ? cu_nodev_why(e, n, (char[160]){0}, 160)
                                                          : "mpiacc's CUDA backend did not start");
        MPI_Finalize();
        return 0;
    }
    CK(cudaSetDevice(0));
    CK(cudaEventCreate(&tev0));
    CK(cudaEventCreate(&tev1));
    CK(cudaHostAlloc((void **)&gate, 64, cudaHostAllocMapped));
    ktm = (pack_roof_timer_t){gate, tev0, tev1, NK};
    if (cold) CK(cudaMalloc(&flush_buf, 256u << 20));
    csv = bench_csv_open(csvpath, "group,type,bytes,block,method,us,GBps");
    pack_floor_init(&ktm, csv);
    pcie_bw = pack_roof_pinned_bw(tev0, tev1);
    copy_bw = pack_roof_copy_bw(tev0, tev1);
    char desc[2048];
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    bench_header("pack", "pack/unpack of the CUDA backend vs cudaMemcpy2D, per-block copies, MPI_Pack", "CUDA",
                 prop.name);
    B->describe(desc, sizeof desc);
    printf("%s", desc);
    printf("latency floors, median of 300 calls:\n");
    pack_roof_floors(floor_us, csv);
    {
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        kempty = pack_roof_empty_kernel_us(&ktm, st);
        CK(cudaStreamDestroy(st));
    }
    printf("  %-62s %6.2f us\n", "empty kernel, kernel-only (back to back, events)", kempty);
    printf("roofline: device copy bandwidth (cudaMemcpy D2D 256 MiB) %.0f GB/s read+written; 32 B sectors\n",
           copy_bw * 1e-9);
    csv_row("floor", "kempty", 0, 0, "us", kempty);
    if (csv) fprintf(csv, "floor,copy_rw,0,0,GBps,0,%.4f\n", copy_bw * 1e-9);
    sync_modes();
    unroll_ab();
    printf("pinned cudaMemcpy D2H (256 MiB): %.1f GB/s; times: median us of one blocking call (%s), "
           "k*: kernel-only GPU us per pack (%d back-to-back, events)%s\n",
           pcie_bw * 1e-9, mpiacc_cuda_sync_name(mpiacc_cuda_get_sync()), NK, cold ? "; L2 evicted before each call" : "");
    printf("%-9s %-21s %8s %5s", "group", "type", "bytes", "blk");
    for (int m = 0; m < M_N; m++) printf(" %8s", mname[m]);
    printf(" | 2D/dev k2D/kdev 1shot/PCIe k1shot/PCIe d2h/1shot | %8s %7s %6s %4s %8s", "sectKB", "roof",
           "%roof", "at", "dev-flr");
    pack_floor_header();
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
    /* the headline case, 4 MiB of 8 B blocks at stride 16 (8 MiB read, 4 MiB written); 16 B at 32 */
    for (int blk = 8; blk <= 16; blk *= 2) {
        MPI_Datatype t;
        MPI_Type_vector((int)((4 << 20) / blk), blk, 2 * blk, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        bench_type("2D", blk == 8 ? "vector s16" : "vector s32", t, blk);
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
    printf("floors:  any blocking call >= %.2f us (1-thread kernel + mapped flag), so dev <= 8 us needs a kernel\n"
           "         of <= %.2f us GPU time beyond the empty one; 4 MiB one-shot to host: zero-copy kernel writes\n"
           "         reach ~93%% of the DMA rate and a blocking call adds the floor: %.1f us = %.0f%% of PCIe at best\n",
           floor_us[F_FLAG], 8.0 - floor_us[F_FLAG], 4194304.0 / (0.93 * pcie_bw) * 1e6 + floor_us[F_FLAG],
           100.0 * (4194304.0 / pcie_bw * 1e6) / (4194304.0 / (0.93 * pcie_bw) * 1e6 + floor_us[F_FLAG]));
    printf("1 KiB pack_dev split: host to launch return %.2f us (of which cudaLaunchKernel ~%.2f), "
           "kernel-only %.2f us, flag floor %.2f us\n", host1k, floor_us[F_LAUNCH], kdev1k, floor_us[F_FLAG]);
    if (nroof) {
        const double worst = bench_min(roof_frac, (size_t)nroof), med = bench_median(roof_frac, (size_t)nroof);
        printf("roofline: %d bandwidth-bound rows, kdev at %.0f%% of the roofline (median), worst %s (min %.0f%%)\n",
               nroof, med, roof_worst, worst);
    }
    pack_floor_summary();
    printf("bench/pack: %.1f s\n", MPI_Wtime() - t_start);
    if (csv) fclose(csv);
    if (flush_buf) CK(cudaFree(flush_buf));
    CK(cudaFreeHost((void *)gate));
    CK(cudaEventDestroy(tev0));
    CK(cudaEventDestroy(tev1));
    MPI_Finalize();
    return 0;
}
