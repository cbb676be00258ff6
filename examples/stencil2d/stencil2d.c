/*
 * stencil2d driver: options, 2D decomposition, CPU reference, the two
 * device variants (manual staging vs mpiacc), validation and the report.
 *
 *   mpiexec -n 4 stencil2d --backend auto --customSize 256,256 --num-iters 100
 *   mpiexec -n 4 stencil2d --msize 2x2 --direct
 *   mpiexec -n 2 stencil2d --msize 1x2 --direct --stream-ordered
 *
 * One rank per device: each rank takes device (node-local rank) % (devices
 * on the node); --direct asks for mpiacc's direct protocol on the
 * Cartesian communicator (info key mpiacc_direct); --stream-ordered sets
 * MPIACC_ORDER_STREAM on the mpiacc variant's halo datatypes, so that
 * MPI_Waitall returns once the exchange's GPU work is enqueued and the next
 * stencil kernel is launched without the host waiting for the unpacks.
 *
 * Exit status: 0 on success, 1 on a validation error, a mismatch between
 * the variants or any failure, 2 on bad options, 77 when the chosen backend
 * finds no device (CTest's "skipped").
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpiacc.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench.h"
#include "stencil2d.h"

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

st_calls_t st_calls;

enum { V_MANUAL, V_MPIACC, V_COUNT };
static const char *vname[V_COUNT] = {"manual", "mpiacc"};

typedef struct opts {
    int rows, cols, iters, h, passes, pdims[2];
    int prec_mask; /* bit 0 single, bit 1 double */
    int var_mask;  /* bit V_MANUAL, bit V_MPIACC */
    const char *backend;
    const char *csv; /* --csv FILE */
    double wc, wk, wd, thr;
    int print_limit;
    int direct; /* --direct: info mpiacc_direct=true on the Cartesian communicator */
    int stream_ordered; /* --stream-ordered: MPIACC_ORDER_STREAM on the receive halo datatypes */
    int stream_ordered_sends; /* --stream-ordered-sends: on the send halo datatypes */
} opts_t;

/* What main finds out once: the backend and its device, the ranks per
 * node, the devices in use and the protocol of the Cartesian communicator. */
typedef struct ctx {
    const st_backend_t *be;
    char desc[256];
    int local_rank, local_size; /* on this node (MPI_COMM_TYPE_SHARED)              */
    int ndev;                   /* devices this rank sees                            */
    int gpus, nodes;            /* devices in use (sum over nodes of min(ranks, ndev)) */
    int dims[2];                /* process grid                                      */
    char info[32];              /* mpiacc_direct as MPI_Comm_get_info reports it, or "" */
    const char *protocol;       /* in effect: "direct" when the communicator says so */
} ctx_t;

#define ST_INFO_KEY "mpiacc_direct"

typedef struct result {
    int ran;
    double gflops_med, gflops_min, gflops_max;
    double exch_ms, kern_ms;       /* per exchange, per iteration (pass average) */
    double copies_x, syncs_x;      /* calls per exchange (max over ranks)        */
    long errors;
} result_t;

#if !ST_HAVE_CUDA
const st_backend_t *st_cuda_backend(void) { return NULL; }
#endif
#if !ST_HAVE_OPENCL
const st_backend_t *st_opencl_backend(void) { return NULL; }
#endif

/* --msize PxQ (SHOC's form; "P,Q" also accepted): 1 on success. */
static int parse_msize(const char *s, int d[2])
{
    char *end;
    long v[2];
    for (int k = 0; k < 2; k++) {
        if (!isdigit((unsigned char)*s)) return 0;
        v[k] = strtol(s, &end, 10);
        if (v[k] < 1 || v[k] > INT_MAX) return 0;
        if (k == 0 && *end != 'x' && *end != 'X' && *end != ',') return 0;
        s = end + 1;
    }
    if (*end) return 0;
    d[0] = (int)v[0], d[1] = (int)v[1];
    return 1;
}

/* Fills o from the command line (before MPI_Init; --help and bad options
 * exit, see bench/common/cli.h). */
static void parse(int argc, char **argv, opts_t *o)
{
    static const int sizes[] = {512, 1024, 2048, 4096};
    static const char *const backends[] = {"auto", "cuda", "opencl"};
    int size = 1, custom[2] = {0, 0}, prec = 2, var = 2, backend = 0;
    const char *msize = NULL;
    *o = (opts_t){.rows = 512, .cols = 512, .iters = 1000, .h = 1, .passes = 10, .prec_mask = 3,
                  .var_mask = 3, .backend = "auto", .wc = 0.25, .wk = 0.15, .wd = 0.05, .thr = 0.01,
                  .print_limit = 15};
    cli_opt_t opts[] = {
        {"size", CLI_INT, &size, "per-rank size 512^2, 1024^2, 2048^2, 4096^2", NULL, 1, 4},
        {"customSize", CLI_PAIR, custom, "per-rank rows and columns (overrides --size)", NULL, CLI_POSITIVE},
        {"num-iters", CLI_INT, &o->iters, "stencil iterations per pass", NULL, CLI_POSITIVE},
        {"iters-per-exchange", CLI_INT, &o->h, "halo width / iterations between exchanges", NULL, CLI_POSITIVE},
        {"msize", CLI_STRING, &msize, "process grid PxQ: P rows x Q columns of ranks (default 2 x N/2)", NULL,
         CLI_ANY},
        {"direct", CLI_FLAG, &o->direct, "request mpiacc's direct protocol (info " ST_INFO_KEY "=true on the grid)",
         NULL, CLI_ANY},
        {"stream-ordered", CLI_FLAG, &o->stream_ordered,
         "mpiacc variant: MPIACC_ORDER_STREAM on the receive halo datatypes (receives complete once their unpacks "
         "are enqueued; the next kernel is ordered after them on the stream, the host does not wait for them)",
         NULL, CLI_ANY},
        {"stream-ordered-sends", CLI_FLAG, &o->stream_ordered_sends,
         "mpiacc variant: MPIACC_ORDER_STREAM on the send halo datatypes too (staged and eager sends complete once "
         "their packs are enqueued; their messages leave at the next MPI call)",
         NULL, CLI_ANY},
        {"passes", CLI_INT, &o->passes, "timed passes after one warm-up pass", NULL, CLI_POSITIVE},
        {"precision", CLI_CHOICE, &prec, "single, double or both", "sp|dp|both", CLI_ANY},
        {"backend", CLI_CHOICE, &backend, "auto: CUDA when a CUDA device is present, else OpenCL",
         "auto|cuda|opencl", CLI_ANY},
        {"variant", CLI_CHOICE, &var, "manual staging, mpiacc or both", "manual|mpiacc|both", CLI_ANY},
        {"weight-center", CLI_DOUBLE, &o->wc, "stencil weight of the centre", NULL, CLI_ANY},
        {"weight-cardinal", CLI_DOUBLE, &o->wk, "stencil weight of the N, S, E, W neighbours", NULL, CLI_ANY},
        {"weight-diagonal", CLI_DOUBLE, &o->wd, "stencil weight of the diagonal neighbours", NULL, CLI_ANY},
        {"val-threshold", CLI_DOUBLE, &o->thr, "relative error threshold of the validation", NULL, 0, 1e300},
        {"val-print-limit", CLI_INT, &o->print_limit, "offending elements printed per rank", NULL, CLI_ANY},
        {"csv", CLI_FILE, &o->csv, "also write one row per precision and variant to this CSV file", NULL, CLI_ANY},
    };
    const cli_prog_t prog = {"stencil2d", "mpiexec -n 4 stencil2d [options]",
                             "SHOC's Stencil2D on mpiacc: the halo exchange with manual staging through the host\n"
                             "and with mpiacc's datatype attributes, validated against a CPU reference.\n"
                             "Exit status: 0 success, 1 validation error or failure, 2 bad options, 77 no device.",
                             opts, sizeof opts / sizeof opts[0]};
    cli_parse(&prog, argc, argv);
    if (msize && !parse_msize(msize, o->pdims)) {
        if (cli_rank0()) {
            fprintf(stderr, "stencil2d: bad value '%s' for --msize (expected PxQ, e.g. 2x2)\n", msize);
            cli_usage(&prog, stderr);
        }
        exit(2);
    }
    o->prec_mask = prec + 1, o->var_mask = var + 1, o->backend = backends[backend];
    if (custom[0]) o->rows = custom[0], o->cols = custom[1];
    else o->rows = o->cols = sizes[size - 1];
}

/* Non-periodic 2D Cartesian communicator (default 2 x N/2); with --direct
 * the info key asking for the direct protocol is set on it at once.  What
 * the communicator then reports for the key decides the protocol printed
 * (an mpiacc without the direct protocol drops the unknown key: default). */
static int make_cart(const opts_t *o, MPI_Comm *cart, ctx_t *c)
{
    int n, flag = 0, len = (int)sizeof c->info, periods[2] = {0, 0};
    MPI_Info used;
    c->dims[0] = o->pdims[0], c->dims[1] = o->pdims[1];
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (!c->dims[0]) {
        if (n % 2 == 0) c->dims[0] = 2, c->dims[1] = n / 2;
        else ST_MPI(MPI_Dims_create(n, 2, c->dims));
    }
    if ((long)c->dims[0] * c->dims[1] != n)
        return st_error("--msize %dx%d does not match %d ranks", c->dims[0], c->dims[1], n);
    ST_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, c->dims, periods, 0, cart));
    if (o->direct) {
        MPI_Info info;
        int rc;
        ST_MPI(MPI_Info_create(&info));
        rc = MPI_Info_set(info, ST_INFO_KEY, "true");
        if (rc == MPI_SUCCESS) rc = MPI_Comm_set_info(*cart, info);
        MPI_Info_free(&info);
        if (rc != MPI_SUCCESS) return st_mpi_error("MPI_Comm_set_info(" ST_INFO_KEY "=true)", rc);
    }
    ST_MPI(MPI_Comm_get_info(*cart, &used));
    c->info[0] = 0;
    if (MPI_Info_get_string(used, ST_INFO_KEY, &len, c->info, &flag) != MPI_SUCCESS || !flag) c->info[0] = 0;
    MPI_Info_free(&used);
    c->protocol = !strcmp(c->info, "true") ? "direct" : "default";
    return 0;
}

static int make_grid(const opts_t *o, MPI_Comm cart, int local_rank, int dp, st_grid_t *g)
{
    int h = o->h;
    memset(g, 0, sizeof *g);
    g->rows = o->rows, g->cols = o->cols, g->h = h, g->dp = dp;
    g->R = o->rows + 2 * h, g->C = o->cols + 2 * h, g->P = (g->C + 15) / 16 * 16;
    g->es = dp ? sizeof(double) : sizeof(float);
    g->base = dp ? MPI_DOUBLE : MPI_FLOAT;
    g->wc = o->wc, g->wk = o->wk, g->wd = o->wd;
    g->cart = cart;
    g->local_rank = local_rank;
    MPI_Comm_rank(cart, &g->rank);
    MPI_Comm_size(cart, &g->nranks);
    if (o->rows < h || o->cols < h) return st_error("the local block must be at least h x h");
    ST_MPI(MPI_Cart_shift(cart, 0, 1, &g->nbr[ST_ROWS][0], &g->nbr[ST_ROWS][1])); /* north, south */
    ST_MPI(MPI_Cart_shift(cart, 1, 1, &g->nbr[ST_COLS][0], &g->nbr[ST_COLS][1])); /* west, east */
    /* rows: send row h north (tag 7) into its rows R-h..; send rows R-2h south (tag 8) */
    g->send_off[ST_ROWS][0] = (long)h * g->P, g->recv_off[ST_ROWS][0] = 0;
    g->send_off[ST_ROWS][1] = (long)(g->R - 2 * h) * g->P, g->recv_off[ST_ROWS][1] = (long)(g->R - h) * g->P;
    g->send_tag[ST_ROWS][0] = 7, g->recv_tag[ST_ROWS][0] = 8;
    g->send_tag[ST_ROWS][1] = 8, g->recv_tag[ST_ROWS][1] = 7;
    /* columns over all R rows: west (tag 10) and east (tag 9) */
    g->send_off[ST_COLS][0] = h, g->recv_off[ST_COLS][0] = 0;
    g->send_off[ST_COLS][1] = g->C - 2 * h, g->recv_off[ST_COLS][1] = g->C - h;
    g->send_tag[ST_COLS][0] = 10, g->recv_tag[ST_COLS][0] = 9;
    g->send_tag[ST_COLS][1] = 9, g->recv_tag[ST_COLS][1] = 10;
    ST_MPI(MPI_Type_contiguous(h * g->P, g->base, &g->host_type[ST_ROWS]));
    ST_MPI(MPI_Type_vector(g->R, h, g->P, g->base, &g->host_type[ST_COLS]));
    ST_MPI(MPI_Type_commit(&g->host_type[ST_ROWS]));
    ST_MPI(MPI_Type_commit(&g->host_type[ST_COLS]));
    return 0;
}

/* One variant: warm-up pass + o->passes timed passes of the iteration loop
 * (the timed region: barrier, all iterations and exchanges, device finish,
 * barrier); the final matrix is downloaded into out. */
static int run_variant(const opts_t *o, const st_grid_t *g, const st_backend_t *be, int v,
                       const void *init, void *out, result_t *res)
{
    st_dev_t *d = NULL;
    st_mpx_t mx = {.nowned = 0};
    double *gf = calloc(o->passes, sizeof *gf), exch_s = 0, kern_s = 0, junk = 0;
    double flops = 11.0 * (g->R - 2) * (g->C - 2) * g->nranks * o->iters;
    long nexch = (o->iters - 1) / g->h, copies = 0, syncs = 0;
    int rc = 1, cur = 0;
    if (!gf) return st_error("out of memory");
    if ((rc = be->create(g, &d)) != 0) goto done;
    if (v == V_MPIACC && (rc = st_mpx_setup(g, be, d, (o->stream_ordered ? 2 : 0) | (o->stream_ordered_sends ? 1 : 0), &mx)) != 0) goto done;
    for (int p = 0; p <= o->passes; p++) {
        double kern = 0, t0, t[2];
        st_calls_t c0 = st_calls;
        if ((rc = be->upload(d, 0, init) || be->upload(d, 1, init) || be->finish(d, &junk)) != 0) goto done;
        MPI_Barrier(g->cart);
        t0 = MPI_Wtime();
        cur = 0;
        for (int it = 0; it < o->iters; it++) {
            if (it > 0 && it % g->h == 0) {
                rc = v == V_MANUAL ? be->exchange_manual(d, cur) : st_exchange_mpiacc(g, be, d, &mx, cur);
                if (rc) goto done;
            }
            if ((rc = be->step(d, cur)) != 0) goto done;
            cur = !cur;
        }
        if ((rc = be->finish(d, &kern)) != 0) goto done;
        MPI_Barrier(g->cart);
        t[0] = MPI_Wtime() - t0, t[1] = kern;
        MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, g->cart);
        if (p == 0) continue; /* warm-up */
        gf[p - 1] = flops / t[0] / 1e9;
        exch_s += t[0] - t[1], kern_s += t[1];
        copies += st_calls.copies - c0.copies, syncs += st_calls.syncs - c0.syncs;
    }
    if ((rc = be->download(d, cur, out)) != 0) goto done;
    res->ran = 1;
    res->gflops_min = bench_min(gf, o->passes), res->gflops_max = bench_max(gf, o->passes);
    res->gflops_med = bench_median(gf, o->passes);
    res->exch_ms = nexch ? 1e3 * exch_s / o->passes / nexch : 0;
    res->kern_ms = 1e3 * kern_s / o->passes / o->iters;
    {
        double c[2] = {nexch ? (double)copies / o->passes / nexch : 0, nexch ? (double)syncs / o->passes / nexch : 0};
        MPI_Allreduce(MPI_IN_PLACE, c, 2, MPI_DOUBLE, MPI_MAX, g->cart);
        res->copies_x = c[0], res->syncs_x = c[1];
    }
done:
    if (v == V_MPIACC) st_mpx_free(&mx);
    if (d) be->destroy(d);
    free(gf);
    return rc;
}

/* The backend (c->be) and this rank's device (c->desc, c->ndev); 1 when
 * a device was found. */
static int choose_backend(const char *want, ctx_t *c)
{
    const st_backend_t *cu = st_cuda_backend(), *cl = st_opencl_backend();
    int found = 0;
    c->be = NULL, c->ndev = 0;
    if (!strcmp(want, "cuda") || !strcmp(want, "auto")) {
        c->be = cu;
        if (cu && cu->probe(c->local_rank, c->desc, sizeof c->desc, &c->ndev)) found = 1;
    }
    if (!found && (!strcmp(want, "opencl") || !strcmp(want, "auto"))) {
        c->be = cl;
        if (cl && cl->probe(c->local_rank, c->desc, sizeof c->desc, &c->ndev)) found = 1;
    }
    if (!c->be) snprintf(c->desc, sizeof c->desc, "backend '%s' not compiled in", want);
    else if (!found) snprintf(c->desc, sizeof c->desc, "no %s device found", c->be->name);
    return found;
}

static void print_header(const opts_t *o, const st_grid_t *g, const ctx_t *c)
{
    const st_backend_t *be = c->be;
    int loc_manual = ST_LOC_HOST + (!strcmp(be->name, "cuda") ? ST_LOC_MANUAL_CUDA : ST_LOC_MANUAL_OPENCL);
    printf("stencil2d (SHOC Stencil2D on mpiacc %d.%d)\n", MPIACC_VERSION_MAJOR, MPIACC_VERSION_MINOR);
    printf("  %d ranks as %d x %d, %d x %d per rank (with halo %d x %d, row pitch %d), h = %d\n", g->nranks,
           c->dims[0], c->dims[1], g->rows, g->cols, g->R, g->C, g->P, g->h);
    printf("  %d iterations, %d timed passes + 1 warm-up, weights %g %g %g, backend %s (rank 0: %s)\n",
           o->iters, o->passes, g->wc, g->wk, g->wd, be->name, c->desc);
    printf("  devices: %d in use by %d ranks on %d node(s); each rank takes device (node-local rank %% %d)%s\n",
           c->gpus, g->nranks, c->nodes, c->ndev,
           c->gpus >= g->nranks ? "" : strcmp(be->name, "cuda") ? "; ranks share devices" : "; ranks share devices (MPS advised)");
    printf("  protocol: %s requested%s; the communicator reports %s%s -> %s protocol\n",
           o->direct ? "direct" : "default", o->direct ? " (--direct: " ST_INFO_KEY "=true set on the grid)" : "",
           c->info[0] ? ST_INFO_KEY "=" : "no " ST_INFO_KEY " key", c->info, c->protocol);
    printf("  completion of the mpiacc variant's exchanges: receives in %s, sends in %s\n",
           o->stream_ordered ? "stream order (--stream-ordered)" : "host order", o->stream_ordered_sends
               ? "stream order (--stream-ordered-sends; IPC sends: host order)" : "host order");
    printf("  exchange routine lines (non-blank, non-comment): manual %d (host MPI %d + device staging %d),"
           " mpiacc %d (%+.0f %%; plus %d lines of datatype set-up, once per precision)\n",
           loc_manual, ST_LOC_HOST, loc_manual - ST_LOC_HOST, ST_LOC_MPIACC,
           loc_manual ? 100.0 * (ST_LOC_MPIACC - loc_manual) / loc_manual : 0.0, ST_LOC_MPIACC_SETUP);
}

static void print_table(const char *label, const result_t r[V_COUNT], double maxdiff, int both, int ok,
                        double thr)
{
    printf("\n%-10s %9s %9s %9s %12s %13s %9s %9s %7s\n", label, "GFLOPS", "min", "max", "exch ms/x",
           "kernel ms/it", "copies/x", "syncs/x", "errors");
    for (int v = 0; v < V_COUNT; v++)
        if (r[v].ran)
            printf("  %-8s %9.3f %9.3f %9.3f %12.4f %13.4f %9.1f %9.1f %7ld\n", vname[v], r[v].gflops_med,
                   r[v].gflops_min, r[v].gflops_max, r[v].exch_ms, r[v].kern_ms, r[v].copies_x,
                   r[v].syncs_x, r[v].errors);
    if (both)
        printf("  speedup mpiacc / manual: %.3fx (median GFLOPS)   max |manual - mpiacc| = %g\n",
               r[V_MPIACC].gflops_med / r[V_MANUAL].gflops_med, maxdiff);
    printf("  validation: %s (errors: elements off the CPU reference by more than %g relative%s)\n",
           ok ? "PASSED" : "FAILED", thr, both ? "; the two variants must agree exactly" : "");
}

/* Rows of --csv (rank 0): one per variant run; the file is opened at the
 * first row. */
static void write_csv(const opts_t *o, const st_grid_t *g, const ctx_t *c, int dp, const result_t r[V_COUNT])
{
    static FILE *f;
    if (!o->csv) return;
    if (!f)
        f = bench_csv_open(o->csv, "precision,variant,backend,ranks,rows,cols,h,iters,passes,gflops_median,"
                                   "gflops_min,gflops_max,exch_ms,kernel_ms,copies_per_exch,syncs_per_exch,errors,"
                                   "msize,gpus,protocol");
    if (!f) return;
    for (int v = 0; v < V_COUNT; v++)
        if (r[v].ran)
            fprintf(f, "%s,%s,%s,%d,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.2f,%.2f,%ld,%dx%d,%d,%s\n",
                    dp ? "dp" : "sp", vname[v], c->be->name, g->nranks, g->rows, g->cols, g->h, o->iters,
                    o->passes, r[v].gflops_med, r[v].gflops_min, r[v].gflops_max, r[v].exch_ms, r[v].kern_ms,
                    r[v].copies_x, r[v].syncs_x, r[v].errors, c->dims[0], c->dims[1], c->gpus, c->protocol);
    fflush(f);
}

/* One precision: CPU reference, the variants, validation, report. */
static int run_precision(const opts_t *o, MPI_Comm cart, int dp, const ctx_t *c, int first)
{
    const st_backend_t *be = c->be;
    st_grid_t g;
    result_t res[V_COUNT];
    void *ref = NULL, *init = NULL, *outm[V_COUNT] = {NULL, NULL};
    double maxdiff = 0, tref;
    size_t bytes;
    int rc, failed = 0, both = (o->var_mask & 3) == 3;
    memset(res, 0, sizeof res);
    if ((rc = make_grid(o, cart, c->local_rank, dp, &g)) != 0) return rc;
    if (first && g.rank == 0) print_header(o, &g, c);
    bytes = (size_t)g.R * g.P * g.es;
    ref = malloc(bytes), init = malloc(bytes), outm[0] = malloc(bytes), outm[1] = malloc(bytes);
    if (!ref || !init || !outm[0] || !outm[1]) {
        rc = st_error("out of host memory");
        goto done;
    }
    tref = MPI_Wtime();
    if ((rc = st_cpu_reference(&g, o->iters, ref)) != 0) goto done;
    tref = MPI_Wtime() - tref;
    /* The initial exchange, before the upload, on the host. */
    st_init_matrix(&g, init);
    if ((rc = st_host_exchange(&g, init)) != 0) goto done;
    for (int v = 0; v < V_COUNT; v++) {
        if (!(o->var_mask & (1 << v))) continue;
        if ((rc = run_variant(o, &g, be, v, init, outm[v], &res[v])) != 0) {
            st_error("%s variant failed", vname[v]);
            goto done;
        }
        res[v].errors = st_compare(&g, outm[v], ref, o->thr, o->print_limit, vname[v]);
        MPI_Allreduce(MPI_IN_PLACE, &res[v].errors, 1, MPI_LONG, MPI_SUM, cart);
        if (res[v].errors) failed = 1;
    }
    if (both) {
        maxdiff = st_max_absdiff(&g, outm[V_MANUAL], outm[V_MPIACC]);
        MPI_Allreduce(MPI_IN_PLACE, &maxdiff, 1, MPI_DOUBLE, MPI_MAX, cart);
        if (maxdiff != 0) failed = 1;
    }
    if (g.rank == 0) {
        print_table(dp ? "DP_Sten2D" : "SP_Sten2D", res, maxdiff, both, !failed, o->thr);
        printf("  (CPU reference: %.2f s; exch = loop time minus device kernel time, per exchange)\n", tref);
        for (int v = 0; v < V_COUNT; v++)
            if (res[v].errors) printf("  %ld validation errors (%s)\n", res[v].errors, vname[v]);
        if (both && maxdiff != 0) printf("  the two device variants differ (max %g)\n", maxdiff);
        fflush(stdout);
        write_csv(o, &g, c, dp, res);
    }
    rc = failed;
done:
    free(ref), free(init), free(outm[0]), free(outm[1]);
    MPI_Type_free(&g.host_type[ST_ROWS]);
    MPI_Type_free(&g.host_type[ST_COLS]);
    return rc;
}

/* The node-local rank and size (MPI_COMM_TYPE_SHARED, ordered by world
 * rank), and the CPU reference's threads: the node's processors shared
 * among the node's ranks, unless OMP_NUM_THREADS says otherwise. */
static int node_ranks(ctx_t *c)
{
    MPI_Comm node;
    ST_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &c->local_rank);
    MPI_Comm_size(node, &c->local_size);
    MPI_Comm_free(&node);
#ifdef _OPENMP
    if (!getenv("OMP_NUM_THREADS"))
        omp_set_num_threads(omp_get_num_procs() / c->local_size > 1 ? omp_get_num_procs() / c->local_size : 1);
#endif
    return 0;
}

/* Devices in use: per node, min(ranks on the node, devices seen), summed. */
static void count_devices(ctx_t *c)
{
    int v[2] = {c->local_rank == 0 ? (c->local_size < c->ndev ? c->local_size : c->ndev) : 0, c->local_rank == 0};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    c->gpus = v[0], c->nodes = v[1];
}

int main(int argc, char **argv)
{
    opts_t o;
    ctx_t c;
    MPI_Comm cart = MPI_COMM_NULL;
    int rank, rc, found, first = 1;
    parse(argc, argv, &o);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(&c, 0, sizeof c);
    if ((rc = node_ranks(&c)) != 0 || (rc = make_cart(&o, &cart, &c)) != 0) goto done;
    found = choose_backend(o.backend, &c);
    MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!found) {
        if (rank == 0) printf("SKIPPED: %s\n", c.desc);
        rc = 77;
        goto done;
    }
    count_devices(&c);
    for (int dp = 0; dp < 2; dp++) {
        int r;
        if (!(o.prec_mask & (1 << dp))) continue;
        r = run_precision(&o, cart, dp, &c, first);
        first = 0;
        MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (r) rc = 1;
    }
done:
    if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
    MPI_Finalize();
    return rc;
}
