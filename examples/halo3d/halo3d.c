/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * halo3d driver: options, the 3D Cartesian decomposition, the CPU
 * references, the device runs (manual staging, mpiacc, cuda-aware; mpiacc
 * and cuda-aware with and without --overlap; for each exchange method),
 * bitwise validation, the timeline of each run and the CSV.
 *
 *   mpiexec -n 8 halo3d --size 128 --iters 50
 *   mpiexec -n 2 halo3d --backend opencl --size 12,10,8 --iters 5 --passes 1
 *   mpiexec -n 4 halo3d --backend cuda --size 256 --variant all --overlap-both --method persistent
 *   mpiexec -n 4 halo3d-cuda-aware --size 256 --overlap
 *
 * The anchor is TEMPI's 3D halo exchange benchmark (a periodic 3D domain
 * decomposition exchanging subarray faces of a device array); this one
 * adds the persistent point-to-point method, OpenCL, a stencil per
 * iteration, overlap and a bitwise CPU reference.
 *
 * Exit status: 0 when everything validated, 1 on a validation error or a
 * failure (failures abort the job), 2 on a bad option, 77 when the chosen
 * backend finds no device or no requested variant can run (CTest's
 * "skipped").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if H3_WITH_MPIACC
#include <mpiacc.h>
#endif

#include "cli.h"
#include "local_rank.h"
#include "halo3d.h"

#if H3_WITH_MPIACC
#define H3_PROG "halo3d"
#define H3_VARIANTS "manual|mpiacc|cuda-aware|both|all"
#define H3_DEFAULT_VARIANTS "both"
#else
#define H3_PROG "halo3d-cuda-aware"
#define H3_VARIANTS "cuda-aware"
#define H3_DEFAULT_VARIANTS "cuda-aware"
#endif
#ifndef H3_LOC_RUN
#define H3_LOC_RUN 0
#endif
#ifndef H3_LOC_FACES
#define H3_LOC_FACES 0
#endif
#ifndef H3_LOC_MANUAL
#define H3_LOC_MANUAL 0
#endif
#ifndef H3_LOC_CUDA_AWARE
#define H3_LOC_CUDA_AWARE 0
#endif
#ifndef H3_LOC_MPIACC_SETUP
#define H3_LOC_MPIACC_SETUP 0
#endif

enum { V_MANUAL = 0, V_MPIACC = 1, V_CUDA_AWARE = 2, V_COUNT };

typedef struct opts {
    int n[3]; /* nz, ny, nx per rank */
    int r, iters, passes, open, direct, print_limit, overlap, host_order;
    int prec_mask, var_mask, meth_mask;
    const char *backend, *csv;
} opts_t;

typedef struct ctx {
    const h3_backend_t *be;
    char desc[256], mpi[64];
    int local_rank, local_size, ndev;
    int dims[3];
} ctx_t;

typedef struct result {
    int method, variant, overlap;
    double med, min, max; /* microseconds per iteration (slowest rank per pass) */
    double kernel_us;     /* the same steps alone, per iteration                */
    double exch_us;       /* the exchanges alone, per exchange                  */
    long errors;
} result_t;

#if !H3_HAVE_CUDA
const h3_backend_t *h3_cuda_backend(void) { return NULL; }
#endif
#if !H3_HAVE_OPENCL
const h3_backend_t *h3_opencl_backend(void) { return NULL; }
#endif
void *h3_cuda_buf_type(void)
{
#if H3_WITH_MPIACC
    return MPIACC_BUF_CUDA;
#else
    return NULL;
#endif
}

/* "N" (a cube) or "X,Y,Z": 1 on success; n in z, y, x order. */
static int parse_size(const char *s, int n[3])
{
    int v[3], k = 0;
    char *end;
    for (;;) {
        long x = strtol(s, &end, 10);
        if (end == s || x < 1 || x > 1 << 20 || k == 3) return 0;
        v[k++] = (int)x;
        if (!*end) break;
        if (*end != ',') return 0;
        s = end + 1;
    }
    if (k == 1) v[1] = v[2] = v[0];
    else if (k != 3) return 0;
    n[0] = v[2], n[1] = v[1], n[2] = v[0];
    return 1;
}

static void bad_value(const cli_prog_t *prog, const char *opt, const char *v, const char *expected)
{
    if (cli_rank0()) {
        fprintf(stderr, H3_PROG ": bad value '%s' for --%s (expected %s)\n", v, opt, expected);
        cli_usage(prog, stderr);
    }
    exit(2);
}

static void parse(int argc, char **argv, opts_t *o)
{
    static const char *const backends[] = {"auto", "cuda", "opencl"};
    int prec = 0, meth = 2, backend = 0, overlap = 0, overlap_both = 0;
    const char *size = "64", *variants = H3_DEFAULT_VARIANTS;
    *o = (opts_t){.r = 1, .iters = 50, .passes = 5, .print_limit = 10};
    cli_opt_t opts[] = {
        {"size", CLI_STRING, &size, "interior per rank: N (a cube) or X,Y,Z", NULL, CLI_ANY},
        {"radius", CLI_INT, &o->r, "stencil radius = halo width", NULL, 1, 16},
        {"iters", CLI_INT, &o->iters, "iterations (exchange + stencil) per pass", NULL, CLI_POSITIVE},
        {"passes", CLI_INT, &o->passes, "timed passes after one warm-up pass", NULL, CLI_POSITIVE},
        {"method", CLI_CHOICE, &meth, "exchange through MPI_Neighbor_alltoallw, persistent requests, or both",
         "alltoallw|persistent|both", CLI_ANY},
        {"variant", CLI_STRING, &variants, "comma-separated list of " H3_VARIANTS, NULL, CLI_ANY},
        {"overlap", CLI_FLAG, &overlap,
         "mpiacc and cuda-aware: the core (cells that do not read the halo) on the low-priority stream while the "
         "exchange is in flight, then the shell on the high-priority one", NULL, CLI_ANY},
        {"overlap-both", CLI_FLAG, &overlap_both, "run mpiacc and cuda-aware without and with --overlap", NULL,
         CLI_ANY},
#if H3_WITH_MPIACC
        {"host-order", CLI_FLAG, &o->host_order,
         "mpiacc: host-order receives (the exchange returns once the faces are in place) instead of stream order "
         "(MPIACC_ORDER_STREAM, the default)", NULL, CLI_ANY},
#endif
        {"precision", CLI_CHOICE, &prec, "single, double or both", "sp|dp|both", CLI_ANY},
        {"backend", CLI_CHOICE, &backend, "auto: CUDA when a CUDA device is present, else OpenCL",
         "auto|cuda|opencl", CLI_ANY},
        {"open", CLI_FLAG, &o->open, "non-periodic domain (default: periodic in all three dimensions)", NULL,
         CLI_ANY},
        {"direct", CLI_FLAG, &o->direct, "no effect (accepted for old command lines)", NULL, CLI_ANY},
        {"val-print-limit", CLI_INT, &o->print_limit, "differing elements printed per rank", NULL, CLI_ANY},
        {"csv", CLI_FILE, &o->csv, "also write one row per run to this CSV file", NULL, CLI_ANY},
    };
    const cli_prog_t prog = CLI_PROG(
        H3_PROG, "mpiexec -n 8 " H3_PROG " [options]",
        "3D halo exchange of subarray faces on a Cartesian communicator (MPI_Dims_create), through\n"
        "MPI_Neighbor_alltoallw and through persistent requests (MPI_Send_init/MPI_Recv_init once,\n"
        "MPI_Startall/MPI_Waitall per iteration), with manual staging through the host, with mpiacc\n"
        "(tagged subarrays on the device array) and as written for a CUDA-aware MPI (own pack kernel,\n"
        "device pointers), a 7-point star stencil per iteration, with and without overlap; validated\n"
        "bitwise against the same exchange on host arrays.  Times per iteration and their timeline.\n"
        "Exit status: 0 success, 1 validation error or failure, 2 bad options, 77 no device.", opts);
    cli_parse(&prog, argc, argv);
    if (!parse_size(size, o->n)) bad_value(&prog, "size", size, "N or X,Y,Z");
    if (!ex_parse_variants(variants, H3_WITH_MPIACC, &o->var_mask))
        bad_value(&prog, "variant", variants, "a comma-separated list of " H3_VARIANTS);
    o->overlap = overlap_both ? 2 : overlap;
    o->prec_mask = prec + 1, o->meth_mask = meth + 1, o->backend = backends[backend];
}

static int make_cart(const opts_t *o, MPI_Comm *cart, ctx_t *c)
{
    int n, periods[3];
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    c->dims[0] = c->dims[1] = c->dims[2] = 0;
    H3_MPI(MPI_Dims_create(n, 3, c->dims));
    for (int d = 0; d < 3; d++) periods[d] = !o->open;
    H3_MPI(MPI_Cart_create(MPI_COMM_WORLD, 3, c->dims, periods, 0, cart));
    H3_MPI(MPI_Comm_set_errhandler(*cart, MPI_ERRORS_RETURN));
    return 0;
}

static int make_grid(const opts_t *o, MPI_Comm cart, int local_rank, int dp, h3_grid_t *g)
{
    memset(g, 0, sizeof *g);
    for (int d = 0; d < 3; d++) g->n[d] = o->n[d];
    g->r = o->r, g->dp = dp;
    g->Z = g->n[0] + 2 * g->r, g->Y = g->n[1] + 2 * g->r, g->X = g->n[2] + 2 * g->r;
    g->es = dp ? sizeof(double) : sizeof(float);
    g->elems = (size_t)g->Z * g->Y * g->X;
    g->base = dp ? MPI_DOUBLE : MPI_FLOAT;
    g->cart = cart, g->local_rank = local_rank;
    MPI_Comm_rank(cart, &g->rank);
    MPI_Comm_size(cart, &g->nranks);
    for (int d = 0; d < 3; d++)
        if (g->n[d] < g->r) return ex_error("the interior (%d) must be at least the radius (%d)", g->n[d], g->r);
    H3_MPI(MPI_Cart_coords(cart, g->rank, 3, g->coords));
    for (int d = 0; d < 3; d++) H3_MPI(MPI_Cart_shift(cart, d, 1, &g->nbr[2 * d], &g->nbr[2 * d + 1]));
    for (int f = 0; f < H3_FACES; f++) {
        int sub[3], start[3];
        h3_face_box(g, f, 0, sub, start);
        g->face_elems[f] = sub[0] * sub[1] * sub[2];
        g->face_off[f] = g->face_total;
        g->face_total += g->face_elems[f];
        if (g->nbr[f] != MPI_PROC_NULL) g->recv_mask |= 1 << f;
    }
    return 0;
}

static int exchange(const h3_grid_t *g, const h3_backend_t *be, h3_dev_t *d, h3_xchg_t *x, int v, int buf)
{
    if (v == V_MANUAL) return h3_exchange_manual(g, be, d, x, buf);
    if (v == V_CUDA_AWARE) return h3_exchange_cuda_aware(g, be, d, x, buf);
    return h3_xchg_run(g, x, buf);
}

enum { PASS_FULL, PASS_KERNELS, PASS_EXCHANGES };

/* One pass from the initial arrays: barrier, iterations (exchange +
 * stencil; with overlap: core, exchange, shell), or only their steps or
 * exchanges, device finish, barrier; the slowest rank's seconds in *t. */
static int pass(const opts_t *o, const h3_grid_t *g, const h3_backend_t *be, h3_dev_t *d, h3_xchg_t *x,
                const result_t *r, int what, double *t, int *cur)
{
    int rc;
    double t0;
    if ((rc = be->reset(d)) != 0) return rc;
    MPI_Barrier(g->cart);
    t0 = MPI_Wtime();
    *cur = 0;
    for (int it = 0; it < o->iters; it++) {
        if (r->overlap && what != PASS_EXCHANGES && (rc = be->step(d, *cur, H3_STEP_CORE)) != 0) return rc;
        if (what != PASS_KERNELS && (rc = exchange(g, be, d, x, r->variant, *cur)) != 0) return rc;
        if (what != PASS_EXCHANGES && (rc = be->step(d, *cur, r->overlap ? H3_STEP_SHELL : H3_STEP_PLAIN)) != 0)
            return rc;
        *cur = !*cur;
    }
    if ((rc = be->finish(d)) != 0) return rc;
    MPI_Barrier(g->cart);
    *t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, g->cart);
    return 0;
}

/* One run: warm-up, the steps alone, the exchanges alone, the timed
 * passes; the final array of the last one is downloaded into out. */
static int run(const opts_t *o, const h3_grid_t *g, const h3_backend_t *be, const void *init, void *out,
               result_t *res)
{
    h3_dev_t *d = NULL;
    h3_xchg_t x;
    double *t = calloc((size_t)o->passes, sizeof *t), tk;
    int rc = 1, cur = 0, have_x = 0, m = res->method;
    if (!t) rc = ex_error("out of memory");
    else rc = be->create(g, init, &d);
    if (rc) {
        /* set-up failed: nothing to exchange */
    } else if (res->variant == V_MANUAL) {
        rc = h3_xchg_staged(g, m, be->host_send(d), be->host_recv(d), 0, &x);
    } else if (res->variant == V_CUDA_AWARE) {
        rc = h3_xchg_staged(g, m, be->dev_face_buf(d, 0), be->dev_face_buf(d, 1), h3_self_mask(g), &x);
    }
#if H3_WITH_MPIACC
    else rc = h3_xchg_mpiacc(g, m, be, d, !o->host_order, &x);
#endif
    have_x = rc == 0;
    /* the passes start with collectives: every rank's set-up must have worked */
    if ((rc = ex_agree(g->cart, rc)) != 0) goto done;
    if ((rc = pass(o, g, be, d, &x, res, PASS_FULL, &tk, &cur)) != 0 ||
        (rc = pass(o, g, be, d, &x, res, PASS_KERNELS, &tk, &cur)) != 0)
        goto done;
    res->kernel_us = tk * 1e6 / o->iters;
    if ((rc = pass(o, g, be, d, &x, res, PASS_EXCHANGES, &tk, &cur)) != 0) goto done;
    res->exch_us = tk * 1e6 / o->iters;
    for (int p = 0; p < o->passes; p++) {
        if ((rc = pass(o, g, be, d, &x, res, PASS_FULL, &t[p], &cur)) != 0) goto done;
        t[p] *= 1e6 / o->iters;
    }
    if ((rc = be->download(d, cur, out)) != 0) goto done;
    res->min = ex_min(t, o->passes), res->max = ex_max(t, o->passes), res->med = ex_median(t, o->passes);
done:
    if (have_x) h3_xchg_free(&x);
    if (d) be->destroy(d);
    free(t);
    return rc;
}

/* The runs of one precision: per method, manual, then mpiacc and
 * cuda-aware without and/or with overlap. */
static int plan(const opts_t *o, const ctx_t *c, result_t *r)
{
    int n = 0;
    for (int m = 0; m < H3_NMETHODS; m++)
        for (int v = 0; v < V_COUNT && (o->meth_mask >> m & 1); v++) {
            if (!(o->var_mask >> v & 1) || (v == V_CUDA_AWARE && !c->be->self_copy)) continue;
            for (int ov = 0; ov < 2; ov++) {
                if ((ov && (v == V_MANUAL || !o->overlap)) || (!ov && v != V_MANUAL && o->overlap == 1)) continue;
                memset(&r[n], 0, sizeof r[n]);
                r[n].method = m, r[n].variant = v, r[n].overlap = ov;
                n++;
            }
        }
    return n;
}

static void print_header(const opts_t *o, const h3_grid_t *g, const ctx_t *c)
{
    int cuda = !strcmp(c->be->name, "cuda");
#if H3_WITH_MPIACC
    printf("halo3d (3D halo exchange on mpiacc %d.%d; MPI: %s)\n", MPIACC_VERSION_MAJOR, MPIACC_VERSION_MINOR, c->mpi);
#else
    printf("halo3d-cuda-aware (3D halo exchange for a CUDA-aware MPI, no mpiacc; MPI: %s)\n", c->mpi);
#endif
    printf("  %d ranks as %d x %d x %d (z y x), %s; %d x %d x %d (x y z) per rank, radius %d, 6 faces = %d "
           "elements per rank per exchange\n",
           g->nranks, c->dims[0], c->dims[1], c->dims[2], o->open ? "non-periodic" : "periodic", g->n[2], g->n[1],
           g->n[0], g->r, g->face_total);
    printf("  %d iterations (exchange + stencil), %d timed passes + 1 warm-up; backend %s (rank 0: %s), %d rank(s) "
           "per node, each on device (node-local rank %% %d)\n",
           o->iters, o->passes, c->be->name, c->desc, c->local_size, c->ndev);
    if (o->direct) printf("  --direct: no effect (accepted for old command lines)\n");
    if (H3_WITH_MPIACC && (o->var_mask & (1 << V_MPIACC)))
        printf("  mpiacc completion: receives in %s\n",
               o->host_order ? "host order (--host-order)" : "stream order (MPIACC_ORDER_STREAM)");
    if (o->overlap)
        printf("  overlap: core (%d cells from the halo and more) on the %s while the exchange runs, then the shell "
               "on the %s%s\n", g->r, cuda ? "least-priority stream" : "second queue",
               cuda ? "greatest-priority stream" : "main queue (OpenCL 1.2: no queue priorities)",
               o->var_mask & 1 ? "; manual staging runs without overlap" : "");
    printf("  exchange routine lines (non-blank, non-comment): manual %d, cuda-aware %d, mpiacc %d (plus %d lines of "
           "datatype tagging, once)\n", H3_LOC_RUN + H3_LOC_FACES + H3_LOC_MANUAL,
           H3_LOC_RUN + H3_LOC_FACES + H3_LOC_CUDA_AWARE, H3_LOC_RUN, H3_LOC_MPIACC_SETUP);
    printf("  times: microseconds per iteration, slowest rank, median (min, max) over passes; kernel = the steps "
           "alone, exch = the exchanges alone,\n  exposed = iter - kernel, hidden = 1 - exposed / exch\n");
}

static double hidden(const result_t *r)
{
    double f = r->exch_us > 0 ? 1.0 - (r->med - r->kernel_us) / r->exch_us : 0;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

static void write_csv(const opts_t *o, const h3_grid_t *g, const ctx_t *c, const result_t *r)
{
    static FILE *csv;
    FILE *f = ex_csv(&csv, o->csv,
                     "precision,method,variant,overlap,backend,ranks,dims,periodic,nx,ny,nz,radius,face_bytes,iters,"
                     "passes,iter_us_median,iter_us_min,iter_us_max,kernel_us,exch_us,exposed_us,hidden,errors,mpi");
    if (!f) return;
    fprintf(f, "%s,%s,%s,%d,%s,%d,%dx%dx%d,%d,%d,%d,%d,%d,%zu,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%ld,%s\n",
            g->dp ? "dp" : "sp", h3_method_name[r->method], ex_variant_name[r->variant], r->overlap, c->be->name, g->nranks,
            c->dims[0], c->dims[1], c->dims[2], !o->open, g->n[2], g->n[1], g->n[0], g->r,
            (size_t)g->face_total * g->es, o->iters, o->passes, r->med, r->min, r->max, r->kernel_us, r->exch_us,
            r->med - r->kernel_us, hidden(r), r->errors, c->mpi);
    fflush(f);
}

static void print_table(const h3_grid_t *g, const result_t *r, int n, long refdiff, int failed)
{
    printf("\n%s %-11s %-19s %9s %9s %9s %9s %9s %9s %6s %7s\n", g->dp ? "DP" : "SP", "method", "variant", "iter us",
           "min", "max", "kernel us", "exch us", "exposed", "hidden", "errors");
    for (int k = 0; k < n; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "%s%s", ex_variant_name[r[k].variant], r[k].overlap ? "+overlap" : "");
        printf("   %-11s %-19s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %5.0f%% %7ld\n", h3_method_name[r[k].method], nm,
               r[k].med, r[k].min, r[k].max, r[k].kernel_us, r[k].exch_us, r[k].med - r[k].kernel_us,
               100 * hidden(&r[k]), r[k].errors);
    }
    for (int k = 0; k < n; k++) /* mpiacc against the others of the same method and overlap setting */
        for (int j = 0; j < n; j++)
            if (r[k].variant == V_MPIACC && r[j].variant != V_MPIACC && r[j].method == r[k].method &&
                (r[j].variant == V_MANUAL ? !r[k].overlap : r[j].overlap == r[k].overlap))
                printf("   %-11s %s%s / mpiacc%s: %.3fx per iteration (above 1: mpiacc faster)\n",
                       h3_method_name[r[k].method], ex_variant_name[r[j].variant], r[j].overlap ? "+overlap" : "",
                       r[k].overlap ? "+overlap" : "", r[j].med / r[k].med);
    if (refdiff) printf("   the host references of the two methods differ in %ld elements\n", refdiff);
    printf("   validation: %s (bitwise against the same exchange on host arrays)\n", failed ? "FAILED" : "PASSED");
    fflush(stdout);
}

/* One precision: references, the runs, report.  Returns 0, 1 (validation
 * error, the same on every rank) or 2 (a failure on this rank). */
static int run_precision(const opts_t *o, MPI_Comm cart, int dp, const ctx_t *c, int first)
{
    h3_grid_t g;
    result_t res[H3_NMETHODS * 2 * V_COUNT];
    void *init = NULL, *ref[H3_NMETHODS] = {NULL, NULL}, *out = NULL;
    size_t bytes;
    long refdiff = 0;
    int rc, failed = 0, n = plan(o, c, res);
    if ((rc = make_grid(o, cart, c->local_rank, dp, &g)) != 0) return 2;
    if (first && g.rank == 0) print_header(o, &g, c);
    bytes = g.elems * g.es;
    if (!(init = malloc(bytes)) || !(out = malloc(bytes))) {
        rc = ex_error("out of host memory");
        goto done;
    }
    h3_init(&g, init);
    for (int m = 0; m < H3_NMETHODS; m++) {
        if (!(o->meth_mask & (1 << m))) continue;
        if (!(ref[m] = malloc(bytes))) {
            rc = ex_error("out of host memory");
            goto done;
        }
        if ((rc = h3_cpu_reference(&g, m, o->iters, ref[m])) != 0) goto done;
    }
    if (ref[0] && ref[1]) { /* the two host exchanges must agree */
        refdiff = h3_compare(&g, ref[1], ref[0], o->print_limit, "host persistent vs host alltoallw");
        MPI_Allreduce(MPI_IN_PLACE, &refdiff, 1, MPI_LONG, MPI_SUM, cart);
        if (refdiff) failed = 1;
    }
    for (int k = 0; k < n; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s %s%s", h3_method_name[res[k].method], ex_variant_name[res[k].variant],
                 res[k].overlap ? "+overlap" : "");
        if ((rc = run(o, &g, c->be, init, out, &res[k])) != 0) {
            ex_error("%s failed", what);
            goto done;
        }
        res[k].errors = h3_compare(&g, out, ref[res[k].method], o->print_limit, what);
        MPI_Allreduce(MPI_IN_PLACE, &res[k].errors, 1, MPI_LONG, MPI_SUM, cart);
        if (res[k].errors) failed = 1;
    }
    if (g.rank == 0) {
        print_table(&g, res, n, refdiff, failed);
        for (int k = 0; k < n; k++) write_csv(o, &g, c, &res[k]);
    }
done:
    free(init), free(out), free(ref[0]), free(ref[1]);
    return rc ? 2 : failed; /* 2: a failure, 1: a validation error */
}

int main(int argc, char **argv)
{
    opts_t o;
    ctx_t c;
    MPI_Comm cart = MPI_COMM_NULL;
    result_t probe[H3_NMETHODS * 2 * V_COUNT];
    int rank, rc = 0, found, first = 1;
    ex_prog = "halo3d";
    parse(argc, argv, &o);
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(&c, 0, sizeof c);
    ex_mpi_name(c.mpi, sizeof c.mpi);
    local_rank_size(MPI_COMM_WORLD, &c.local_rank, &c.local_size); /* bench/common/local_rank.h */
    if (make_cart(&o, &cart, &c) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    {
        const h3_backend_t *be[2] = {h3_cuda_backend(), h3_opencl_backend()};
        ex_probe_fn *const probes[2] = {be[0] ? be[0]->probe : NULL, be[1] ? be[1]->probe : NULL};
        int k = ex_choose_backend(o.backend, probes, c.local_rank, c.desc, sizeof c.desc, &c.ndev, &found);
        c.be = k >= 0 ? be[k] : NULL;
    }
    MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!found || !plan(&o, &c, probe)) {
        if (rank == 0)
            printf("SKIPPED: %s\n", !found ? c.desc : "the cuda-aware variant needs the CUDA backend");
        rc = 77;
        goto done;
    }
    if (rank == 0 && (o.var_mask >> V_CUDA_AWARE & 1) && !c.be->self_copy)
        printf("note: the cuda-aware variant needs the CUDA backend: not run with %s\n", c.be->name);
    for (int dp = 0; dp < 2; dp++) {
        int r;
        if (!(o.prec_mask & (1 << dp))) continue;
        r = run_precision(&o, cart, dp, &c, first);
        first = 0;
        if (r > 1) MPI_Abort(MPI_COMM_WORLD, 1); /* a failure: the other ranks may be waiting */
        if (r) rc = 1;
    }
done:
    if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
    MPI_Finalize();
    return rc;
}
