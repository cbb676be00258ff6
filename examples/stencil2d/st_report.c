/* SPDX-License-Identifier: BSD-3-Clause */
/* stencil2d report: header, per-precision table with the timeline of each
 * run (exchange alone, kernels alone, exposed exchange, hidden fraction),
 * the CSV rows. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ST_WITH_MPIACC
#include <mpiacc.h>
#endif

#include "st_run.h"

#ifndef ST_LOC_HOST
#define ST_LOC_HOST 0
#endif
#ifndef ST_LOC_MPIACC
#define ST_LOC_MPIACC 0
#endif
#ifndef ST_LOC_MPIACC_SETUP
#define ST_LOC_MPIACC_SETUP 0
#endif
#ifndef ST_LOC_MANUAL_CUDA
#define ST_LOC_MANUAL_CUDA 0
#endif
#ifndef ST_LOC_MANUAL_OPENCL
#define ST_LOC_MANUAL_OPENCL 0
#endif
#ifndef ST_LOC_CUDA_AWARE_MPI
#define ST_LOC_CUDA_AWARE_MPI 0
#endif
#ifndef ST_LOC_CUDA_AWARE_KERNELS
#define ST_LOC_CUDA_AWARE_KERNELS 0
#endif


double st_exposed_us(const result_t *r) { return r->iter_us - r->kernel_us; }

double st_hidden(const result_t *r, int h)
{
    double per_it = r->exch_us / h, f;
    if (per_it <= 0) return 0;
    f = 1.0 - st_exposed_us(r) / per_it;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

void st_print_header(const opts_t *o, const st_grid_t *g, const ctx_t *c)
{
    const st_backend_t *be = c->be;
    int cuda = !strcmp(be->name, "cuda");
    int loc_manual = ST_LOC_HOST + (cuda ? ST_LOC_MANUAL_CUDA : ST_LOC_MANUAL_OPENCL);
    int loc_ca = ST_LOC_CUDA_AWARE_MPI + ST_LOC_CUDA_AWARE_KERNELS;
#if ST_WITH_MPIACC
    printf("stencil2d (SHOC Stencil2D on mpiacc %d.%d; MPI: %s)\n", MPIACC_VERSION_MAJOR, MPIACC_VERSION_MINOR, c->mpi);
#else
    printf("stencil2d-cuda-aware (SHOC Stencil2D, the exchange for a CUDA-aware MPI, no mpiacc; MPI: %s)\n", c->mpi);
#endif
    printf("  %d ranks as %d x %d, %d x %d per rank (with halo %d x %d, row pitch %d), h = %d\n", g->nranks,
           c->dims[0], c->dims[1], g->rows, g->cols, g->R, g->C, g->P, g->h);
    printf("  %d iterations, %d timed passes + 1 warm-up, weights %g %g %g, backend %s (rank 0: %s)\n",
           o->iters, o->passes, g->wc, g->wk, g->wd, be->name, c->desc);
    printf("  devices: %d in use by %d ranks on %d node(s); each rank takes device (node-local rank %% %d)%s\n",
           c->gpus, g->nranks, c->nodes, c->ndev,
           c->gpus >= g->nranks ? "" : cuda ? "; ranks share devices (MPS advised)" : "; ranks share devices");
    if (o->direct)
        printf("  --direct: no effect (the transport of device messages is the MPI library's own; the option is "
               "accepted for old command lines)\n");
    if (o->var_mask & (1 << V_MPIACC))
        printf("  mpiacc completion: receives in %s, sends in %s\n",
               o->host_order ? "host order (--host-order)" : "stream order (MPIACC_ORDER_STREAM)",
               o->stream_ordered_sends ? "stream order" : "host order");
    if ((o->var_mask & (1 << V_MPIACC)) && o->persistent)
        printf("  mpiacc exchange: persistent requests (MPI_Recv_init / MPI_Send_init once, MPI_Startall per phase)\n");
    if (o->overlap)
        printf("  overlap: boundary band (%d rows/columns from each edge) on the %s, exchange ordered on it, interior"
               " on the %s%s\n", 2 * g->h - 1, cuda ? "greatest-priority stream" : "main queue",
               cuda ? "least-priority stream" : "second queue (OpenCL 1.2: no queue priorities)",
               o->var_mask & (1 << V_MANUAL) ? "; manual staging runs without overlap" : "");
    printf("  exchange routine lines (non-blank, non-comment): manual %d (host MPI %d + staging %d)", loc_manual,
           ST_LOC_HOST, loc_manual - ST_LOC_HOST);
    if (cuda) printf(", cuda-aware %d (MPI %d + pack/unpack kernels %d)", loc_ca, ST_LOC_CUDA_AWARE_MPI,
                     ST_LOC_CUDA_AWARE_KERNELS);
#if ST_WITH_MPIACC
    printf(", mpiacc %d (plus %d lines of datatype set-up, once per precision)", ST_LOC_MPIACC, ST_LOC_MPIACC_SETUP);
#endif
    printf("\n  timeline: iter = loop time per iteration; kernel = the same steps alone; exch = the exchanges alone"
           " (per exchange);\n  exposed = iter - kernel; hidden = share of exch/h covered by the kernels"
           " (1 - exposed / (exch / h))\n");
}

static void run_name(const result_t *r, char *s, size_t n)
{
    snprintf(s, n, "%s%s", ex_variant_name[r->variant], r->overlap ? "+overlap" : "");
}

void st_print_table(const opts_t *o, int dp, const result_t *r, int n, double maxdiff, int ok, double tref)
{
    char nm[32];
    printf("\n%-20s %9s %9s %9s %9s %9s %9s %9s %6s %6s %6s %6s\n", dp ? "DP_Sten2D" : "SP_Sten2D", "GFLOPS", "min",
           "max", "iter us", "kernel us", "exch us", "exposed", "hidden", "cp/x", "sync/x", "errors");
    for (int k = 0; k < n; k++) {
        run_name(&r[k], nm, sizeof nm);
        printf("  %-18s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %5.0f%% %6.1f %6.1f %6ld\n", nm, r[k].gflops_med,
               r[k].gflops_min, r[k].gflops_max, r[k].iter_us, r[k].kernel_us, r[k].exch_us, st_exposed_us(&r[k]),
               100 * st_hidden(&r[k], o->h), r[k].copies_x, r[k].syncs_x, r[k].errors);
    }
    for (int k = 0; k < n; k++) /* mpiacc against the others of the same overlap setting */
        for (int j = 0; j < n; j++)
            if (r[k].variant == V_MPIACC && r[j].variant != V_MPIACC &&
                (r[j].variant == V_MANUAL ? !r[k].overlap : r[j].overlap == r[k].overlap)) {
                char a[32];
                run_name(&r[k], nm, sizeof nm);
                run_name(&r[j], a, sizeof a);
                printf("  speedup %s / %s: %.3fx (median GFLOPS)\n", nm, a, r[k].gflops_med / r[j].gflops_med);
            }
    if (n > 1) printf("  max |difference| between the device results: %g (must be 0)\n", maxdiff);
    printf("  validation: %s (errors: elements off the CPU reference by more than %g relative; CPU reference %.2f s)\n",
           ok ? "PASSED" : "FAILED", o->thr, tref);
    fflush(stdout);
}

void st_write_csv(const opts_t *o, const st_grid_t *g, const ctx_t *c, const result_t *r, int n)
{
    static FILE *csv;
    FILE *f = ex_csv(&csv, o->csv,
                     "precision,variant,overlap,backend,ranks,rows,cols,h,iters,passes,gflops_median,gflops_min,"
                     "gflops_max,iter_us,kernel_us,exch_us,exposed_us,hidden,copies_per_exch,syncs_per_exch,errors,"
                     "msize,gpus,mpi");
    if (!f) return;
    for (int k = 0; k < n; k++)
        fprintf(f, "%s,%s,%d,%s,%d,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.3f,%.3f,%.3f,%.3f,%.4f,%.2f,%.2f,%ld,%dx%d,%d,%s\n",
                g->dp ? "dp" : "sp", ex_variant_name[r[k].variant], r[k].overlap, c->be->name, g->nranks, g->rows, g->cols,
                g->h, o->iters, o->passes, r[k].gflops_med, r[k].gflops_min, r[k].gflops_max, r[k].iter_us,
                r[k].kernel_us, r[k].exch_us, st_exposed_us(&r[k]), st_hidden(&r[k], g->h), r[k].copies_x,
                r[k].syncs_x, r[k].errors, c->dims[0], c->dims[1], c->gpus, c->mpi);
    fflush(f);
}
