/* SPDX-License-Identifier: BSD-3-Clause */
/* examples/common/ex_common.c: see ex_common.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "ex_common.h"

const char *ex_prog = "example";

int ex_error(const char *fmt, ...)
{
    int rank = -1, init = 0;
    va_list ap;
    MPI_Initialized(&init);
    if (init) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "%s: rank %d: ", ex_prog, rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int ex_mpi_error(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
    return ex_error("%s failed: %s", what, msg);
}

FILE *ex_csv(FILE **f, const char *path, const char *header)
{
    if (!path) return NULL;
    if (!*f) {
        if (!(*f = fopen(path, "w"))) {
            ex_error("cannot write %s", path);
            return NULL;
        }
        fprintf(*f, "%s\n", header);
    }
    return *f;
}

int ex_agree(MPI_Comm comm, int rc)
{
    int bad = rc != 0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    return bad ? (rc ? rc : 1) : 0;
}

const char *const ex_variant_name[3] = {"manual", "mpiacc", "cuda-aware"};

int ex_parse_variants(const char *s, int with_mpiacc, int *mask)
{
    enum { MANUAL, MPIACC, CUDA_AWARE };
    char buf[128], *tok, *save = NULL;
    *mask = 0;
    if (strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v = -1;
        for (int k = 0; k < 3; k++)
            if (!strcmp(tok, ex_variant_name[k])) v = k;
        if (v >= 0 && (with_mpiacc || v == CUDA_AWARE)) *mask |= 1 << v;
        else if (with_mpiacc && !strcmp(tok, "both")) *mask |= 1 << MANUAL | 1 << MPIACC;
        else if (!strcmp(tok, "all")) *mask |= with_mpiacc ? 7 : 1 << CUDA_AWARE;
        else return 0;
    }
    return *mask != 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ex_median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ex_min(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0;
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

double ex_max(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0;
    for (int i = 1; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

void ex_mpi_name(char *out, size_t n)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    const char *v, *nm = getenv("MPIR_CVAR_CH4_NETMOD");
    int len = 0;
    MPI_Get_library_version(lib, &len);
    if ((v = strstr(lib, "MPICH Version:"))) {
        v += strlen("MPICH Version:");
        while (*v == ' ' || *v == '\t') v++;
        snprintf(out, n, "mpich %.*s%s%s", (int)strcspn(v, " \t\n"), v, nm && *nm ? "/" : "", nm ? nm : "");
    } else if ((v = strstr(lib, "Intel(R) MPI Library"))) {
        v += strlen("Intel(R) MPI Library");
        while (*v == ' ') v++;
        snprintf(out, n, "impi %.*s", (int)strcspn(v, " \t\n,"), v);
    } else {
        snprintf(out, n, "%.*s", (int)strcspn(lib, "\n,"), lib);
    }
    for (char *p = out; *p; p++)
        if (*p == ',' || !isprint((unsigned char)*p)) *p = ' ';
}

int ex_choose_backend(const char *want, ex_probe_fn *const probe[2], int local_rank, char *desc, size_t len,
                      int *ndev, int *found)
{
    static const char *const names[2] = {"cuda", "opencl"};
    int chosen = -1;
    *found = 0;
    *ndev = 0;
    for (int k = 0; k < 2 && !*found; k++) {
        if (strcmp(want, names[k]) && strcmp(want, "auto")) continue;
        chosen = probe[k] ? k : -1;
        if (probe[k] && probe[k](local_rank, desc, len, ndev)) *found = 1;
    }
    if (chosen < 0) snprintf(desc, len, "backend '%s' not compiled in", want);
    else if (!*found) snprintf(desc, len, "no %s device found", names[chosen]);
    return chosen;
}
