/* SPDX-License-Identifier: BSD-3-Clause */
/* stencil2d driver internals shared by stencil2d.c (options, runs) and
 * st_report.c (header, table, CSV). */
#ifndef ST_RUN_H_INCLUDED
#define ST_RUN_H_INCLUDED

#include "stencil2d.h"

/* ST_WITH_MPIACC: 1 in stencil2d (linked with mpiacc), 0 in
 * stencil2d-cuda-aware (MPI and CUDA only). */
#ifndef ST_WITH_MPIACC
#define ST_WITH_MPIACC 0
#endif

enum { V_MANUAL, V_MPIACC, V_CUDA_AWARE, V_COUNT };

typedef struct opts {
    int rows, cols, iters, h, passes, pdims[2];
    int prec_mask;   /* bit 0 single, bit 1 double                               */
    int var_mask;    /* bits V_*                                                 */
    int overlap;     /* 0: off, 1: --overlap, 2: --overlap-both (off, then on)   */
    const char *backend;
    const char *csv; /* --csv FILE */
    double wc, wk, wd, thr;
    int print_limit;
    int direct;               /* --direct: accepted, no effect (kept for old command lines) */
    int stream_ordered;       /* --stream-ordered: accepted (stream-order receives are the default) */
    int stream_ordered_sends; /* ... and on the send ones                                  */
    int host_order;           /* host-order receives instead of MPIACC_ORDER_STREAM        */
    int persistent;           /* mpiacc: persistent requests, MPI_Startall per phase       */
} opts_t;

/* What main finds out once. */
typedef struct ctx {
    const st_backend_t *be;
    char desc[256];
    int local_rank, local_size; /* on this node (MPI_COMM_TYPE_SHARED)              */
    int ndev;                   /* devices this rank sees                            */
    int gpus, nodes;            /* devices in use (sum over nodes of min(ranks, ndev)) */
    int dims[2];                /* process grid                                      */
    char mpi[64];               /* the MPI library, short ("mpich 5.0.2/ucx", "impi 2021.19") */
} ctx_t;

/* One run: a variant, with or without overlap. */
typedef struct result {
    int variant, overlap, so_mask;
    double gflops_med, gflops_min, gflops_max;
    double iter_us;            /* median loop time per iteration                       */
    double kernel_us;          /* the same steps alone (no exchange), per iteration    */
    double exch_us;            /* the exchanges alone (no stencil), per exchange       */
    double copies_x, syncs_x;  /* calls per exchange (max over ranks)                  */
    long errors;
} result_t;

/* Exposed exchange per iteration (iteration minus the kernels alone) and
 * the fraction of the exchange hidden behind the kernels (0..1). */
double st_exposed_us(const result_t *r);
double st_hidden(const result_t *r, int h);

void st_print_header(const opts_t *o, const st_grid_t *g, const ctx_t *c);
void st_print_table(const opts_t *o, int dp, const result_t *r, int n, double maxdiff, int ok, double tref);
void st_write_csv(const opts_t *o, const st_grid_t *g, const ctx_t *c, const result_t *r, int n);
/* The MPI library in a few words (c->mpi). */

#endif
