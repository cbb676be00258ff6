/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/pack_floor: see pack_floor.h. */
#include <stdlib.h>
#include <string.h>

#include "pack_floor.h" /* the CUDA runtime first: BENCH_CUDA_CHECK */
#include "bench.h"

#define CK BENCH_CUDA_CHECK

static pack_roof_timer_t timer;
static FILE *csv;
#define NRATIO 256
static double ratio[NRATIO]; /* kdev/kmin of the rows with a floor */
static int nratio, nbad;
static double worst_ratio;
static char worst_row[96];

void pack_floor_init(const pack_roof_timer_t *tm, FILE *csv_file)
{
    timer = *tm;
    csv = csv_file;
}

void pack_floor_open(pack_floor_t *f, const mpiacc_pack_type_t *T, const char *dbuf, long long dbuf_bytes)
{
    memset(f, 0, sizeof *f);
    if (!T->strided || T->ndims != 1 || T->strides[0] < T->blk || T->blk < 1 || T->start < 0 ||
        T->start >= dbuf_bytes || (long long)T->counts[0] * (long long)T->blk != (long long)T->size)
        return;
    f->job.in = dbuf + T->start;
    f->job.in_bytes = dbuf_bytes - (long long)T->start;
    f->job.nb = (long long)T->counts[0];
    f->job.blk = (long long)T->blk;
    f->job.stride = (long long)T->strides[0];
    CK(cudaMalloc(&f->job.out, (size_t)T->size));
    f->on = 1;
}

void pack_floor_close(pack_floor_t *f)
{
    if (f->on) CK(cudaFree(f->job.out));
    memset(f, 0, sizeof *f);
}

/* 1 when variant v writes exactly the bytes at ref (see pack_floor_row). */
static int check(pack_floor_t *f, int v, const void *ref, cudaStream_t st)
{
    const size_t n = (size_t)(f->job.nb * f->job.blk);
    unsigned char *a = malloc(n), *b = malloc(n);
    int same = 1;
    if (!a || !b) bench_fail(__FILE__, __LINE__, "malloc", "out of memory");
    CK(cudaMemcpy(b, ref, n, cudaMemcpyDeviceToHost));
    for (int preset = 0; preset < 2 && same; preset++) {
        CK(cudaMemsetAsync(f->job.out, preset ? 0xff : 0x00, n, st));
        CK(bench_launch_floor(&f->job, v, st));
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(a, f->job.out, n, cudaMemcpyDeviceToHost));
        if (memcmp(a, b, n)) {
            size_t i = 0;
            while (a[i] == b[i]) i++;
            f->bad_at = (long long)i, f->bad_floor = a[i], f->bad_ref = b[i], same = 0;
        }
    }
    free(a), free(b);
    return same;
}

static void tag_of(const pack_floor_t *f, int v, char *buf, size_t n)
{
    const int w = bench_floor_word(&f->job);
    if (v == BENCH_FLOOR_WORD) snprintf(buf, n, "w%d", w);
    else if (v == BENCH_FLOOR_WORD4) snprintf(buf, n, "w%dx4", w);
    else snprintf(buf, n, "s16");
}

typedef struct launch {
    const pack_floor_t *f;
    int v;
} launch_t;

static void enqueue(void *arg, cudaStream_t st)
{
    const launch_t *l = arg;
    CK(bench_launch_floor(&l->f->job, l->v, st));
}

void pack_floor_header(void) { printf(" | %8s %6s %9s\n", "kmin", "via", "kdev/kmin"); }

void pack_floor_row(pack_floor_t *f, const void *ref, cudaStream_t st, const char *group, const char *name,
                    long long blk, double kdev)
{
    const long long size = f->job.nb * f->job.blk;
    double kmin = 0;
    char tag[16], best[16] = "";
    if (!f->on) {
        printf(" | %8s %6s %9s\n", "-", "-", "-");
        return;
    }
    for (int v = 0; v < BENCH_FLOOR_N; v++) {
        launch_t l = {f, v};
        if (!bench_floor_applies(&f->job, v)) continue;
        tag_of(f, v, tag, sizeof tag);
        if (!check(f, v, ref, st)) {
            printf(" | %8s %6s %9s\n", "BAD", tag, "-");
            printf("  BAD pattern floor %s: packed byte %lld is 0x%02x, mpiacc's pack has 0x%02x (%s %s %lld B)\n",
                   tag, f->bad_at, f->bad_floor, f->bad_ref, group, name, size);
            nbad++;
            return;
        }
        const double t = pack_roof_kernel_us(&timer, st, enqueue, &l);
        if (csv) fprintf(csv, "%s,%s,%lld,%lld,kmin_%s,%.3f,%.4f\n", group, name, size, blk, tag, t, size / t * 1e-3);
        if (!kmin || t < kmin) kmin = t, memcpy(best, tag, sizeof best);
    }
    if (!kmin) { /* no variant applies (a malformed form: cannot happen for an analysed type) */
        printf(" | %8s %6s %9s\n", "-", "-", "-");
        return;
    }
    printf(" | %8.2f %6s %8.2fx\n", kmin, best, kdev / kmin);
    if (csv) fprintf(csv, "%s,%s,%lld,%lld,kmin,%.3f,%.4f\n", group, name, size, blk, kmin, size / kmin * 1e-3);
    if (nratio < NRATIO) {
        if (!nratio || kdev / kmin > worst_ratio) {
            worst_ratio = kdev / kmin;
            snprintf(worst_row, sizeof worst_row, "%s %s %lld B blk %lld", group, name, size, blk);
        }
        ratio[nratio++] = kdev / kmin;
    }
}

void pack_floor_summary(void)
{
    if (nratio)
        printf("pattern floor: %d rows with kmin, kdev/kmin %.2fx (median), worst %.2fx (%s)\n", nratio,
               bench_median(ratio, (size_t)nratio), worst_ratio, worst_row);
    if (nbad) printf("pattern floor: %d rows BAD (a floor kernel's bytes differ from mpiacc's pack)\n", nbad);
}
