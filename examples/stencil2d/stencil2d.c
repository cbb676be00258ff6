/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stencil2d driver: options, 2D decomposition, CPU reference, the device
 * variants (manual staging, mpiacc, cuda-aware; mpiacc and cuda-aware with
 * and without --overlap), validation and the timeline of each run.
 *
 *   mpiexec -n 4 stencil2d --backend auto --customSize 256,256 --num-iters 100
 *   mpiexec -n 4 stencil2d --msize 2x2 --variant all --overlap-both
 *   mpiexec -n 4 stencil2d-cuda-aware --msize 2x2 --overlap
 *
 * One rank per device: each rank takes device (node-local rank) % (devices
 * on the node).  The same source builds stencil2d (ST_WITH_MPIACC = 1) and
 * stencil2d-cuda-aware (MPI and CUDA only: the cuda-aware variant).
 *
 * Exit status: 0 on success, 1 on a validation error, a mismatch between
 * the runs or any failure, 2 on bad options, 77 when the chosen backend
 * finds no device or no requested variant can run (CTest's "skipped").
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ST_WITH_MPIACC
#include <mpiacc.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"
#include "local_rank.h"
#include "st_run.h"

st_calls_t st_calls;

#if !ST_HAVE_CUDA
const st_backend_t *st_cuda_backend(void) { return NULL; }
#endif
#if !ST_HAVE_OPENCL
const st_backend_t *st_opencl_backend(void) { return NULL; }
#endif
/* The CUDA backend's MPIACC_BUF_TYPE value. */
void *st_cuda_buf_type(void)
{
#if ST_WITH_MPIACC
    return MPIACC_BUF_CUDA;
#else
    return NULL;
#endif
}

#if ST_WITH_MPIACC
#define ST_PROG "stencil2d"
#define ST_VARIANTS "manual|mpiacc|cuda-aware|both|all"
#define ST_DEFAULT_VARIANTS "both"
#else
#define ST_PROG "stencil2d-cuda-aware"
#define ST_VARIANTS "cuda-aware"
#define ST_DEFAULT_VARIANTS "cuda-aware"
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
    int size = 1, custom[2] = {0, 0}, prec = 2, backend = 0, overlap = 0, overlap_both = 0;
    const char *msize = NULL, *variants = ST_DEFAULT_VARIANTS;
    *o = (opts_t){.rows = 512, .cols = 512, .iters = 1000, .h = 1, .passes = 10, .prec_mask = 3,
                  .backend = "auto", .wc = 0.25, .wk = 0.15, .wd = 0.05, .thr = 0.01, .print_limit = 15};
    cli_opt_t opts[] = {
        {"size", CLI_INT, &size, "per-rank size 512^2, 1024^2, 2048^2, 4096^2", NULL, 1, 4},
        {"customSize", CLI_PAIR, custom, "per-rank rows and columns (overrides --size)", NULL, CLI_POSITIVE},
        {"num-iters", CLI_INT, &o->iters, "stencil iterations per pass", NULL, CLI_POSITIVE},
        {"iters-per-exchange", CLI_INT, &o->h, "halo width / iterations between exchanges", NULL, CLI_POSITIVE},
        {"msize", CLI_STRING, &msize, "process grid PxQ: P rows x Q columns of ranks (default 2 x N/2)", NULL,
         CLI_ANY},
        {"variant", CLI_STRING, &variants, "comma-separated list of " ST_VARIANTS, NULL, CLI_ANY},
        {"overlap", CLI_FLAG, &overlap,
         "mpiacc and cuda-aware: boundary band first on the high-priority stream, the exchange in flight while the "
         "interior runs on the low-priority one", NULL, CLI_ANY},
        {"overlap-both", CLI_FLAG, &overlap_both, "run mpiacc and cuda-aware without and with --overlap", NULL,
         CLI_ANY},
#if ST_WITH_MPIACC
        {"stream-ordered", CLI_FLAG, &o->stream_ordered,
         "mpiacc: MPIACC_ORDER_STREAM on the receive halo datatypes: receives complete once their data are ordered "
         "on the stream, the host does not wait for them (the default; kept for old command lines)", NULL, CLI_ANY},
        {"stream-ordered-sends", CLI_FLAG, &o->stream_ordered_sends,
         "mpiacc: MPIACC_ORDER_STREAM on the send halo datatypes too", NULL, CLI_ANY},
        {"host-order", CLI_FLAG, &o->host_order,
         "mpiacc: host-order receives (MPI_Waitall returns once the halo is in place) instead of stream order", NULL,
         CLI_ANY},
        {"persistent", CLI_FLAG, &o->persistent,
         "mpiacc: the exchange's requests made once (MPI_Recv_init / MPI_Send_init), each phase started with "
         "MPI_Startall (the packs of a phase share one launch)", NULL, CLI_ANY},
#endif
        {"direct", CLI_FLAG, &o->direct, "no effect (accepted for old command lines)", NULL, CLI_ANY},
        {"passes", CLI_INT, &o->passes, "timed passes after one warm-up pass", NULL, CLI_POSITIVE},
        {"precision", CLI_CHOICE, &prec, "single, double or both", "sp|dp|both", CLI_ANY},
        {"backend", CLI_CHOICE, &backend, "auto: CUDA when a CUDA device is present, else OpenCL",
         "auto|cuda|opencl", CLI_ANY},
        {"weight-center", CLI_DOUBLE, &o->wc, "stencil weight of the centre", NULL, CLI_ANY},
        {"weight-cardinal", CLI_DOUBLE, &o->wk, "stencil weight of the N, S, E, W neighbours", NULL, CLI_ANY},
        {"weight-diagonal", CLI_DOUBLE, &o->wd, "stencil weight of the diagonal neighbours", NULL, CLI_ANY},
        {"val-threshold", CLI_DOUBLE, &o->thr, "relative error threshold of the validation", NULL, 0, 1e300},
        {"val-print-limit", CLI_INT, &o->print_limit, "offending elements printed per rank", NULL, CLI_ANY},
        {"csv", CLI_FILE, &o->csv, "also write one row per precision and run to this CSV file", NULL, CLI_ANY},
    };
    const cli_prog_t prog = CLI_PROG(
        ST_PROG, "mpiexec -n 4 " ST_PROG " [options]",
#if ST_WITH_MPIACC
        "SHOC's Stencil2D on mpiacc: the halo exchange with manual staging through the host,\n"
        "with mpiacc's datatype attributes and (CUDA) as written for a CUDA-aware MPI, with and\n"
        "without overlap of exchange and interior, validated against a CPU reference.\n"
#else
        "SHOC's Stencil2D with the halo exchange written for a CUDA-aware MPI (device pointers,\n"
        "own pack kernels, synchronisations), no mpiacc: runs on any MPICH-ABI MPI (libmpi.so.12)\n"
        "that takes CUDA device memory; validated against a CPU reference.\n"
#endif
        "Exit status: 0 success, 1 validation error or failure, 2 bad options, 77 no device.",
        opts);
    cli_parse(&prog, argc, argv);
    if (msize && !parse_msize(msize, o->pdims)) {
        if (cli_rank0()) {
            fprintf(stderr, ST_PROG ": bad value '%s' for --msize (expected PxQ, e.g. 2x2)\n", msize);
            cli_usage(&prog, stderr);
        }
        exit(2);
    }
    if (!ex_parse_variants(variants, ST_WITH_MPIACC, &o->var_mask)) {
        if (cli_rank0()) {
            fprintf(stderr, ST_PROG ": bad value '%s' for --variant (expected a comma-separated list of %s)\n",
                    variants, ST_VARIANTS);
            cli_usage(&prog, stderr);
        }
        exit(2);
    }
    o->overlap = overlap_both ? 2 : overlap;
    o->prec_mask = prec + 1, o->backend = backends[backend];
    if (custom[0]) o->rows = custom[0], o->cols = custom[1];
    else o->rows = o->cols = sizes[size - 1];
}

/* Non-periodic 2D Cartesian communicator (default 2 x N/2). */
static int make_cart(const opts_t *o, MPI_Comm *cart, ctx_t *c)
{
    int n, periods[2] = {0, 0};
    c->dims[0] = o->pdims[0], c->dims[1] = o->pdims[1];
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (!c->dims[0]) {
        if (n % 2 == 0) c->dims[0] = 2, c->dims[1] = n / 2;
        else ST_MPI(MPI_Dims_create(n, 2, c->dims));
    }
    if ((long)c->dims[0] * c->dims[1] != n)
        return ex_error("--msize %dx%d does not match %d ranks", c->dims[0], c->dims[1], n);
    ST_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, c->dims, periods, 0, cart));
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
    if (o->rows < h || o->cols < h) return ex_error("the local block must be at least h x h");
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

/* One exchange of matrix buf by the run's variant. */
static int exchange(const st_grid_t *g, const st_backend_t *be, st_dev_t *d, const void *mx, int v, int buf)
{
#if ST_WITH_MPIACC
    if (v == V_MPIACC) return st_exchange_mpiacc(g, be, d, (const st_mpx_t *)mx, buf);
#else
    (void)mx;
#endif
    return v == V_MANUAL ? be->exchange_manual(d, buf) : st_exchange_cuda_aware(g, be, d, buf);
}

enum { PASS_FULL, PASS_KERNELS, PASS_EXCHANGES };

/* One pass from the initial matrices: barrier, the iterations (PASS_FULL),
 * only their steps (PASS_KERNELS) or only their exchanges (PASS_EXCHANGES),
 * device finish, barrier.  Returns the slowest rank's seconds in *t and
 * leaves the result in matrix *cur. */
static int pass(const opts_t *o, const st_grid_t *g, const st_backend_t *be, st_dev_t *d, const void *mx,
                const result_t *r, int what, double *t, int *cur)
{
    int rc, h = g->h;
    double t0;
    if ((rc = be->reset(d)) != 0) return rc;
    MPI_Barrier(g->cart);
    t0 = MPI_Wtime();
    *cur = 0;
    for (int it = 0; it < o->iters; it++) {
        int split = r->overlap && (it + 1) % h == 0 && it + 1 < o->iters;
        if (!r->overlap && it > 0 && it % h == 0 && what != PASS_KERNELS &&
            (rc = exchange(g, be, d, mx, r->variant, *cur)) != 0)
            return rc;
        if (what != PASS_EXCHANGES &&
            (rc = be->step(d, *cur, !r->overlap ? ST_STEP_PLAIN : split ? ST_STEP_SPLIT : ST_STEP_LOW)) != 0)
            return rc;
        /* overlap: the exchange of the matrix just written, behind its band */
        if (split && what != PASS_KERNELS && (rc = exchange(g, be, d, mx, r->variant, !*cur)) != 0) return rc;
        *cur = !*cur;
    }
    if ((rc = be->finish(d)) != 0) return rc;
    MPI_Barrier(g->cart);
    *t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, g->cart);
    return 0;
}

/* One run: warm-up pass, the kernels alone, the exchanges alone, o->passes
 * timed passes; the final matrix of the last one is downloaded into out. */
static int run(const opts_t *o, const st_grid_t *g, const st_backend_t *be, const void *init, void *out,
               result_t *res)
{
    st_dev_t *d = NULL;
    void *mx = NULL;
    double *gf = calloc((size_t)o->passes, sizeof *gf), *ts = calloc((size_t)o->passes, sizeof *ts), t, c[2];
    double flops = 11.0 * (g->R - 2) * (g->C - 2) * g->nranks * o->iters;
    long nexch = (o->iters - 1) / g->h;
    st_calls_t c0;
    int rc = 1, cur = 0;
#if ST_WITH_MPIACC
    st_mpx_t x = {.nowned = 0};
    mx = &x;
#endif
    if (!gf || !ts) rc = ex_error("out of memory");
    else rc = be->create(g, init, &d);
#if ST_WITH_MPIACC
    if (rc == 0 && res->variant == V_MPIACC) rc = st_mpx_setup(g, be, d, res->so_mask, o->persistent, &x);
#endif
    /* the passes start with collectives: every rank's set-up must have worked */
    if ((rc = ex_agree(g->cart, rc)) != 0) goto done;
    if ((rc = pass(o, g, be, d, mx, res, PASS_FULL, &t, &cur)) != 0 ||
        (rc = pass(o, g, be, d, mx, res, PASS_KERNELS, &t, &cur)) != 0)
        goto done;
    res->kernel_us = 1e6 * t / o->iters;
    if ((rc = pass(o, g, be, d, mx, res, PASS_EXCHANGES, &t, &cur)) != 0) goto done;
    res->exch_us = nexch ? 1e6 * t / nexch : 0;
    c0 = st_calls;
    for (int p = 0; p < o->passes; p++) {
        if ((rc = pass(o, g, be, d, mx, res, PASS_FULL, &ts[p], &cur)) != 0) goto done;
        gf[p] = flops / ts[p] / 1e9;
    }
    if ((rc = be->download(d, cur, out)) != 0) goto done;
    res->gflops_min = ex_min(gf, o->passes), res->gflops_max = ex_max(gf, o->passes);
    res->gflops_med = ex_median(gf, o->passes);
    res->iter_us = 1e6 * ex_median(ts, o->passes) / o->iters;
    c[0] = nexch ? (double)(st_calls.copies - c0.copies) / o->passes / nexch : 0;
    c[1] = nexch ? (double)(st_calls.syncs - c0.syncs) / o->passes / nexch : 0;
    MPI_Allreduce(MPI_IN_PLACE, c, 2, MPI_DOUBLE, MPI_MAX, g->cart);
    res->copies_x = c[0], res->syncs_x = c[1];
done:
#if ST_WITH_MPIACC
    if (res->variant == V_MPIACC) st_mpx_free(&x);
#endif
    if (d) be->destroy(d);
    free(gf), free(ts);
    return rc;
}

/* The runs of one precision, in order: manual, then mpiacc and cuda-aware
 * without and/or with overlap. */
static int plan(const opts_t *o, const ctx_t *c, result_t *r)
{
    int n = 0;
    for (int v = 0; v < V_COUNT; v++) {
        if (!(o->var_mask & (1 << v)) || (v == V_CUDA_AWARE && !c->be->pack_cols)) continue;
        for (int ov = 0; ov < 2; ov++) {
            if ((ov && (v == V_MANUAL || !o->overlap)) || (!ov && v != V_MANUAL && o->overlap == 1)) continue;
            memset(&r[n], 0, sizeof r[n]);
            r[n].variant = v, r[n].overlap = ov;
            r[n].so_mask = (o->stream_ordered_sends ? 1 : 0) | (!o->host_order ? 2 : 0);
            n++;
        }
    }
    return n;
}

/* One precision: CPU reference, the runs, validation, report. */
static int run_precision(const opts_t *o, MPI_Comm cart, int dp, const ctx_t *c, int first)
{
    st_grid_t g;
    result_t res[2 * V_COUNT];
    void *ref = NULL, *init = NULL, *out = NULL, *out0 = NULL;
    double maxdiff = 0, tref;
    size_t bytes;
    int rc, failed = 0, n = plan(o, c, res);
    if ((rc = make_grid(o, cart, c->local_rank, dp, &g)) != 0) return rc;
    if (first && g.rank == 0) st_print_header(o, &g, c);
    bytes = (size_t)g.R * g.P * g.es;
    ref = malloc(bytes), init = malloc(bytes), out = malloc(bytes), out0 = n > 1 ? malloc(bytes) : NULL;
    if (!ref || !init || !out || (n > 1 && !out0)) {
        rc = ex_error("out of host memory");
        goto done;
    }
    tref = MPI_Wtime();
    if ((rc = st_cpu_reference(&g, o->iters, ref)) != 0) goto done;
    tref = MPI_Wtime() - tref;
    /* The initial exchange, before the upload, on the host. */
    st_init_matrix(&g, init);
    if ((rc = st_host_exchange(&g, init)) != 0) goto done;
    for (int k = 0; k < n; k++) {
        char what[32];
        snprintf(what, sizeof what, "%s%s", ex_variant_name[res[k].variant], res[k].overlap ? "+overlap" : "");
        if ((rc = run(o, &g, c->be, init, out, &res[k])) != 0) {
            ex_error("%s failed", what);
            goto done;
        }
        res[k].errors = st_compare(&g, out, ref, o->thr, o->print_limit, what);
        MPI_Allreduce(MPI_IN_PLACE, &res[k].errors, 1, MPI_LONG, MPI_SUM, cart);
        if (res[k].errors) failed = 1;
        if (k == 0 && out0) memcpy(out0, out, bytes);
        else if (k > 0) {
            double dk = st_max_absdiff(&g, out, out0);
            if (!(dk <= maxdiff)) maxdiff = dk;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &maxdiff, 1, MPI_DOUBLE, MPI_MAX, cart);
    if (maxdiff != 0) failed = 1;
    if (g.rank == 0) {
        st_print_table(o, dp, res, n, maxdiff, !failed, tref);
        st_write_csv(o, &g, c, res, n);
    }
    rc = failed;
done:
    free(ref), free(init), free(out), free(out0);
    MPI_Type_free(&g.host_type[ST_ROWS]);
    MPI_Type_free(&g.host_type[ST_COLS]);
    return rc;
}

/* The node-local rank and size (bench/common/local_rank.h: the launcher's
 * word, else MPI_COMM_TYPE_SHARED), and the CPU reference's threads: the
 * node's processors shared among the node's ranks, unless OMP_NUM_THREADS
 * says otherwise. */
static int node_ranks(ctx_t *c)
{
    local_rank_size(MPI_COMM_WORLD, &c->local_rank, &c->local_size);
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
    result_t probe[2 * V_COUNT];
    int rank, rc, found, first = 1;
    ex_prog = "stencil2d";
    parse(argc, argv, &o);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(&c, 0, sizeof c);
    ex_mpi_name(c.mpi, sizeof c.mpi);
    if ((rc = node_ranks(&c)) != 0 || (rc = make_cart(&o, &cart, &c)) != 0) goto done;
    {
        const st_backend_t *be[2] = {st_cuda_backend(), st_opencl_backend()};
        ex_probe_fn *const probes[2] = {be[0] ? be[0]->probe : NULL, be[1] ? be[1]->probe : NULL};
        int k = ex_choose_backend(o.backend, probes, c.local_rank, c.desc, sizeof c.desc, &c.ndev, &found);
        c.be = k >= 0 ? be[k] : NULL;
    }
    MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!found) {
        if (rank == 0) printf("SKIPPED: %s\n", c.desc);
        rc = 77;
        goto done;
    }
    if (!plan(&o, &c, probe)) {
        if (rank == 0) printf("SKIPPED: the cuda-aware variant needs the CUDA backend (backend: %s)\n", c.be->name);
        rc = 77;
        goto done;
    }
    if (rank == 0 && (o.var_mask & (1 << V_CUDA_AWARE)) && !c.be->pack_cols)
        printf("note: the cuda-aware variant needs the CUDA backend: not run with %s\n", c.be->name);
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
