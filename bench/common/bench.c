/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/common/bench.c: see bench.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "mpiacc.h"

int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_percentile(double *v, size_t n, double p)
{
    size_t i;
    if (!n) return 0;
    qsort(v, n, sizeof *v, bench_cmp_double);
    i = (size_t)(p / 100.0 * (double)n);
    return v[i < n ? i : n - 1];
}

double bench_min(const double *v, size_t n)
{
    double m = n ? v[0] : 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

double bench_max(const double *v, size_t n)
{
    double m = n ? v[0] : 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_header(const char *name, const char *what, const char *backend, const char *device)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "", date[64] = "?", host[256] = "?";
    int len = 0, n = 1, major = 0, minor = 0;
    time_t now = time(NULL);
    struct tm tm;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = 0;
    {
        char *w = lib; /* squeeze runs of blanks */
        for (const char *r = lib; *r; r++)
            if (!(*r == ' ' && w > lib && w[-1] == ' ')) *w++ = *r;
        *w = 0;
    }
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPIACC_Get_version(&major, &minor);
    if (localtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", &tm);
    gethostname(host, sizeof host - 1);
    printf("# mpiacc %s: %s\n", name, what);
    printf("# mpiacc %d.%d, %s\n", major, minor, lib);
    printf("# backend: %s, device: %s\n", backend, device && *device ? device : "-");
    printf("# date: %s, host: %s, ranks: %d\n", date, host, n);
    fflush(stdout);
}

FILE *bench_csv_open(const char *path, const char *columns)
{
    FILE *f;
    if (!path) return NULL;
    if (!(f = fopen(path, "w"))) {
        fprintf(stderr, "cannot write %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return NULL;
    }
    fprintf(f, "%s\n", columns);
    return f;
}

void bench_fail(const char *file, int line, const char *call, const char *why)
{
    fprintf(stderr, "%s:%d: %s: %s\n", file, line, call, why);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

void bench_fail_mpi(const char *file, int line, const char *call, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
    bench_fail(file, line, call, s);
}
