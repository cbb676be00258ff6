/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/pack_roof: see pack_roof.h. */
#include <stdint.h>
#include <stdlib.h>

#include "pack_roof.h" /* the CUDA runtime first: BENCH_CUDA_CHECK */
#include "bench.h"
#include "pack_kernels.h"

#define CK BENCH_CUDA_CHECK

static void spin_event(cudaEvent_t ev)
{
    cudaError_t e;
    while ((e = cudaEventQuery(ev)) == cudaErrorNotReady) {
    }
    CK(e);
}

static const char *fname[F_N] = {
    "launch only (host time of cudaLaunchKernel, empty kernel)", "empty kernel + cudaStreamSynchronize",
    "empty kernel + cudaStreamQuery loop", "empty kernel + cudaEventRecord + cudaEventQuery loop",
    "1-thread kernel writing a mapped flag + host polling it"};
static const char *fkey[F_N] = {"launch", "sync", "query", "event", "flag"};

void pack_roof_floors(double floor_us[F_N], FILE *csv)
{
    const int n = 300;
    double t[300], *r = floor_us;
    cudaStream_t st;
    cudaEvent_t ev;
    volatile unsigned *flag;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CK(cudaHostAlloc((void **)&flag, 64, cudaHostAllocMapped));
    *flag = 0;
    for (int f = 0; f < F_N; f++) {
        for (int i = -10; i < n; i++) { /* 10 warm-up calls */
            double t0 = bench_now() * 1e6, t1 = t0;
            cudaError_t e;
            switch (f) {
            case F_LAUNCH:
                CK(bench_launch_empty(st));
                t1 = bench_now() * 1e6;
                CK(cudaStreamSynchronize(st));
                break;
            case F_SYNC:
                CK(bench_launch_empty(st));
                CK(cudaStreamSynchronize(st));
                break;
            case F_QUERY:
                CK(bench_launch_empty(st));
                while ((e = cudaStreamQuery(st)) == cudaErrorNotReady) {
                }
                CK(e);
                break;
            case F_EVENT:
                CK(bench_launch_empty(st));
                CK(cudaEventRecord(ev, st));
                spin_event(ev);
                break;
            default: {
                const unsigned v = (unsigned)(i + 11) + 1000u * (unsigned)f;
                CK(bench_launch_flag(flag, v, st));
                while (*flag != v) {
                }
            }
            }
            if (f != F_LAUNCH) t1 = bench_now() * 1e6;
            if (i >= 0) t[i] = t1 - t0;
        }
        CK(cudaStreamSynchronize(st));
        r[f] = bench_percentile(t, (size_t)n, 50);
        printf("  %-62s %6.2f us\n", fname[f], r[f]);
        if (csv) fprintf(csv, "floor,%s,0,0,us,%.3f,0\n", fkey[f], r[f]);
    }
    CK(cudaFreeHost((void *)flag));
    CK(cudaEventDestroy(ev));
    CK(cudaStreamDestroy(st));
}


/* The shortest of reps - 1 timed cudaMemcpyAsync(dst, src, n, kind) on the
 * default stream after one warm-up, in ms between events e0 and e1. */
static float best_copy_ms(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, int reps, cudaEvent_t e0,
                          cudaEvent_t e1)
{
    float ms, best = 1e30f;
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(e0, 0));
        CK(cudaMemcpyAsync(dst, src, n, kind, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i && ms < best) best = ms;
    }
    return best;
}

double pack_roof_pinned_bw(cudaEvent_t tev0, cudaEvent_t tev1)
{
    const size_t n = 256u << 20;
    void *d, *h;
    float best;
    CK(cudaMalloc(&d, n));
    CK(cudaHostAlloc(&h, n, cudaHostAllocDefault));
    best = best_copy_ms(h, d, n, cudaMemcpyDeviceToHost, 4, tev0, tev1);
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    return n / (best * 1e-3);
}

/* Sectors of the byte range [a, a + n) of absolute addresses. */
static long long sectors_of(uintptr_t a, long long n)
{
    return n > 0 ? (long long)((a + (uintptr_t)n - 1) / PACK_ROOF_SECTOR - a / PACK_ROOF_SECTOR) + 1 : 0;
}

long long pack_roof_sector_bytes(const mpiacc_pack_type_t *T, const char *buf, const char *packed)
{
    const mpiacc_tv_i64 *blob = (const mpiacc_tv_i64 *)T->blob;
    const uintptr_t lo = (uintptr_t)buf + (uintptr_t)(intptr_t)T->data_lb;
    const long long size = (long long)T->size;
    long long nbits, input = 0;
    unsigned char *seen;
    if (size <= 0) return 0;
    if (!blob || T->data_ub <= T->data_lb) return -1;
    /* one bit per sector of the span [data_lb, data_ub): every block's
     * sectors are marked, so a sector shared by blocks counts once */
    nbits = sectors_of(lo, (long long)(T->data_ub - T->data_lb)) + 1;
    if (!(seen = calloc((size_t)(nbits + 7) / 8, 1))) bench_fail(__FILE__, __LINE__, "calloc", "out of memory");
    for (long long p = 0; p < size;) {
        mpiacc_tv_i64 run, off = mpiacc_tv_locate(blob, p, &run);
        const uintptr_t a = (uintptr_t)buf + (uintptr_t)(intptr_t)off;
        long long n = run < size - p ? run : size - p;
        if (n <= 0) n = 1; /* never stall on a malformed run */
        for (uintptr_t s = a / PACK_ROOF_SECTOR; s <= (a + (uintptr_t)n - 1) / PACK_ROOF_SECTOR; s++) {
            const long long b = (long long)(s - lo / PACK_ROOF_SECTOR);
            if (b < 0 || b >= nbits) continue; /* outside the span: cannot happen for a consistent analysis */
            if (!(seen[b / 8] & (1u << (b % 8)))) seen[b / 8] |= (unsigned char)(1u << (b % 8)), input++;
        }
        p += n;
    }
    free(seen);
    return PACK_ROOF_SECTOR * (input + sectors_of((uintptr_t)packed, size));
}

double pack_roof_copy_bw(cudaEvent_t e0, cudaEvent_t e1)
{
    const size_t n = 256u << 20;
    void *a, *b;
    float best;
    CK(cudaMalloc(&a, n));
    CK(cudaMalloc(&b, n));
    CK(cudaMemset(a, 1, n));
    best = best_copy_ms(b, a, n, cudaMemcpyDeviceToDevice, 5, e0, e1);
    CK(cudaFree(a));
    CK(cudaFree(b));
    return 2.0 * (double)n / (best * 1e-3);
}

double pack_roof_kernel_us(const pack_roof_timer_t *tm, cudaStream_t st, pack_roof_enqueue_fn enq, void *arg)
{
    float ms, best = 1e30f;
    for (int rep = 0; rep < 3; rep++) {
        *tm->gate = 0;
        CK(bench_launch_gate(tm->gate, st));
        CK(cudaEventRecord(tm->e0, st));
        for (int i = 0; i < tm->n; i++) enq(arg, st);
        CK(cudaEventRecord(tm->e1, st));
        *tm->gate = 1;
        CK(cudaEventSynchronize(tm->e1));
        CK(cudaEventElapsedTime(&ms, tm->e0, tm->e1));
        if (ms < best) best = ms;
    }
    return best * 1e3 / tm->n;
}

static void enqueue_empty(void *arg, cudaStream_t st)
{
    (void)arg;
    CK(bench_launch_empty(st));
}

double pack_roof_empty_kernel_us(const pack_roof_timer_t *tm, cudaStream_t st)
{
    return pack_roof_kernel_us(tm, st, enqueue_empty, NULL);
}
