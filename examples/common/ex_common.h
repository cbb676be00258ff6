/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/common/ex_common.h: what the examples' programs share (halo3d,
 * stencil2d, and their cuda-aware twins, which link MPI and CUDA only):
 * error messages, statistics, the MPI library's name, the backend's choice.
 */
#ifndef EX_COMMON_H_INCLUDED
#define EX_COMMON_H_INCLUDED

#include <stddef.h>
#include <stdio.h>

#include <mpi.h>

/* The program's name in error messages (main sets it). */
extern const char *ex_prog;
/* "<ex_prog>: rank R: <message>" on stderr; returns 1 (a failure). */
int ex_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* ex_error of "<what> failed: <MPI's string of rc>". */
int ex_mpi_error(const char *what, int rc);
/* The CSV file path, opened on the first call (*f NULL) with its header
 * line; NULL without a path, or (ex_error said why) when it cannot be
 * written. */
FILE *ex_csv(FILE **f, const char *path, const char *header);
/* Collective over comm: 0 when rc is 0 on every process, else rc where it
 * failed and 1 elsewhere; so that a step that failed on one process (a
 * kernel build, an allocation) ends the run on all of them instead of
 * leaving the others waiting in the next collective. */
int ex_agree(MPI_Comm comm, int rc);

/* Statistics of n values (v is sorted by ex_median). */
double ex_median(double *v, int n);
double ex_min(const double *v, int n);
double ex_max(const double *v, int n);

/* The variants both examples compare (their V_* constants), and the
 * --variant option: a comma-separated list of their names, "both"
 * (manual,mpiacc) and "all" (every variant of the program: cuda-aware
 * only without mpiacc); the mask of variants, 0 on a bad token. */
extern const char *const ex_variant_name[3];
int ex_parse_variants(const char *s, int with_mpiacc, int *mask);

/* The MPI library in a few words ("mpich 5.0.2/ucx", "impi 2021.14"). */
void ex_mpi_name(char *out, size_t len);

/* A backend's probe: 1 when a device exists (*ndev visible, the one of
 * node-local rank local_rank described in desc). */
typedef int ex_probe_fn(int local_rank, char *desc, size_t len, int *ndev);
/* The backend asked for ("cuda", "opencl", or "auto": CUDA, else OpenCL),
 * of probe[0] (CUDA) and probe[1] (OpenCL), NULL when not compiled in:
 * its index (-1: none asked and compiled in), *found when it has a device;
 * otherwise desc says why. */
int ex_choose_backend(const char *want, ex_probe_fn *const probe[2], int local_rank, char *desc, size_t len,
                      int *ndev, int *found);

#endif
