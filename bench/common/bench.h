/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/common/bench: what the benchmarks share (not part of libmpiacc):
 * statistics, timing, checking macros, the report header and CSV files.
 *
 * Output follows the OSU micro-benchmarks: a header of '#' lines naming the
 * benchmark, mpiacc's version, the backend, the device and the date; then
 * one row per size with the units in the column names; --csv FILE writes
 * the same rows as comma-separated values (one header line of column names
 * with units, e.g. bytes,mpiacc_us).
 */
#ifndef MPIACC_BENCH_BENCH_H_INCLUDED
#define MPIACC_BENCH_BENCH_H_INCLUDED

#include <stddef.h>
#include <stdio.h>

#include <mpi.h>

#include "cli.h"

/* ---- statistics (each sorts v in place) ----------------------------------- */

/* The median: the middle value, the mean of the two middle ones for even n. */
double bench_median(double *v, size_t n);
/* Nearest-rank percentile p (0..100): sorted v[min(n-1, floor(p/100 * n))];
 * p = 50 is the upper median. */
double bench_percentile(double *v, size_t n, double p);
double bench_min(const double *v, size_t n);
double bench_max(const double *v, size_t n);
/* Ascending comparison of doubles, for qsort. */
int bench_cmp_double(const void *a, const void *b);

/* ---- timing ---------------------------------------------------------------- */

/* Seconds of CLOCK_MONOTONIC (usable without MPI). */
double bench_now(void);

/* ---- report ---------------------------------------------------------------- */

/* Prints the header on stdout (call on one rank, after MPI_Init):
 *   # mpiacc <name>: <what>
 *   # mpiacc <version>, <MPI library>
 *   # backend: <backend>, device: <device>
 *   # date: <ISO 8601>, host: <hostname>, ranks: <n> */
void bench_header(const char *name, const char *what, const char *backend, const char *device);

/* Opens path for writing and writes the column line; NULL path: returns
 * NULL.  Failure to open is fatal (message, MPI_Abort). */
FILE *bench_csv_open(const char *path, const char *columns);

/* ---- checking --------------------------------------------------------------- */

/* Aborts the job with the failing call, its location and its error string. */
void bench_fail(const char *file, int line, const char *call, const char *why);
void bench_fail_mpi(const char *file, int line, const char *call, int rc);

#define BENCH_MPI_CHECK(call_)                                                    \
    do {                                                                          \
        int bench_rc_ = (call_);                                                  \
        if (bench_rc_ != MPI_SUCCESS) bench_fail_mpi(__FILE__, __LINE__, #call_, bench_rc_); \
    } while (0)

/* With the CUDA runtime header included first. */
#ifdef CUDART_VERSION
#define BENCH_CUDA_CHECK(call_)                                                   \
    do {                                                                          \
        cudaError_t bench_e_ = (cudaError_t)(call_);                              \
        if (bench_e_ != cudaSuccess)                                              \
            bench_fail(__FILE__, __LINE__, #call_, cudaGetErrorString(bench_e_)); \
    } while (0)
#endif

#endif
