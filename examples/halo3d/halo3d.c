/*
 * halo3d driver: options, the 3D Cartesian decomposition, the CPU
 * references, the device variants (manual staging vs mpiacc, for each
 * exchange method), bitwise validation, the report and the CSV.
 *
 *   mpiexec -n 8 halo3d --size 128 --iters 50
 *   mpiexec -n 2 halo3d --backend opencl --custom-size 12,10,8 --iters 5 --passes 1
 *   mpiexec -n 4 halo3d --backend cuda --direct --method alltoallw
 *
 * The anchor is TEMPI's 3D halo exchange benchmark (a periodic 3D domain
 * decomposition exchanging subarray faces of a device array); this one
 * adds the persistent point-to-point method, OpenCL, a stencil per
 * iteration and a bitwise CPU reference.
 *
 * Exit status: 0 when everything validated, 1 on a validation error or a
 * failure (failures abort the job), 2 on a bad option, 77 when the chosen
 * backend finds no device (CTest's "skipped").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpiacc.h>

#include "bench.h"
#include "halo3d.h"

enum { V_KERNEL = -1, V_MANUAL = 0, V_MPIACC = 1, V_COUNT };
static const char *vname[V_COUNT] = {"manual", "mpiacc"};

typedef struct opts {
    int n[3];                       /* nz, ny, nx per rank           */
    int r, iters, passes, open, direct, print_limit;
    int prec_mask, var_mask, meth_mask;
    const char *backend, *csv;
} opts_t;

typedef struct ctx {
    const h3_backend_t *be;
    char desc[256];
    int local_rank, local_size, ndev;
    int dims[3];
    char info[32];
    const char *protocol;
} ctx_t;

typedef struct result {
    int ran;
    double med, min, max; /* microseconds per iteration (slowest rank per pass) */
    long errors;
} result_t;

#if !H3_HAVE_CUDA
const h3_backend_t *h3_cuda_backend(void) { return NULL; }
#endif
#if !H3_HAVE_OPENCL
const h3_backend_t *h3_opencl_backend(void) { return NULL; }
#endif

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

static void parse(int argc, char **argv, opts_t *o)
{
    static const char *const backends[] = {"auto", "cuda", "opencl"};
    int prec = 0, var = 2, meth = 2, backend = 0;
    const char *size = "64";
    *o = (opts_t){.r = 1, .iters = 50, .passes = 5, .print_limit = 10};
    cli_opt_t opts[] = {
        {"size", CLI_STRING, &size, "interior per rank: N (a cube) or X,Y,Z", NULL, CLI_ANY},
        {"radius", CLI_INT, &o->r, "stencil radius = halo width", NULL, 1, 16},
        {"iters", CLI_INT, &o->iters, "iterations (exchange + stencil) per pass", NULL, CLI_POSITIVE},
        {"passes", CLI_INT, &o->passes, "timed passes after one warm-up pass", NULL, CLI_POSITIVE},
        {"method", CLI_CHOICE, &meth, "exchange through MPI_Neighbor_alltoallw, persistent requests, or both",
         "alltoallw|persistent|both", CLI_ANY},
        {"variant", CLI_CHOICE, &var, "manual staging, mpiacc or both", "manual|mpiacc|both", CLI_ANY},
        {"precision", CLI_CHOICE, &prec, "single, double or both", "sp|dp|both", CLI_ANY},
        {"backend", CLI_CHOICE, &backend, "auto: CUDA when a CUDA device is present, else OpenCL",
         "auto|cuda|opencl", CLI_ANY},
        {"open", CLI_FLAG, &o->open, "non-periodic domain (default: periodic in all three dimensions)", NULL,
         CLI_ANY},
        {"direct", CLI_FLAG, &o->direct,
         "request mpiacc's direct protocol (info " MPIACC_DIRECT_INFO "=true on the Cartesian communicator)", NULL,
         CLI_ANY},
        {"val-print-limit", CLI_INT, &o->print_limit, "differing elements printed per rank", NULL, CLI_ANY},
        {"csv", CLI_FILE, &o->csv, "also write one row per variant to this CSV file", NULL, CLI_ANY},
    };
    const cli_prog_t prog = {
        "halo3d", "mpiexec -n 8 halo3d [options]",
        "3D halo exchange of subarray faces on a Cartesian communicator (MPI_Dims_create), through\n"
        "MPI_Neighbor_alltoallw and through persistent requests (MPI_Send_init/MPI_Recv_init once,\n"
        "MPI_Startall/MPI_Waitall per iteration), with manual staging through the host and with mpiacc\n"
        "(tagged subarrays on the device array), a 7-point star stencil per iteration; validated bitwise\n"
        "against the same exchange on host arrays.  Times per iteration; ratio manual/mpiacc.\n"
        "Exit status: 0 success, 1 validation error or failure, 2 bad options, 77 no device.",
        opts, sizeof opts / sizeof opts[0]};
    cli_parse(&prog, argc, argv);
    if (!parse_size(size, o->n)) {
        if (cli_rank0()) {
            fprintf(stderr, "halo3d: bad value '%s' for --size (expected N or X,Y,Z)\n", size);
            cli_usage(&prog, stderr);
        }
        exit(2);
    }
    o->prec_mask = prec + 1, o->var_mask = var + 1, o->meth_mask = meth + 1, o->backend = backends[backend];
}

static int make_cart(const opts_t *o, MPI_Comm *cart, ctx_t *c)
{
    int n, flag = 0, len = (int)sizeof c->info, periods[3];
    MPI_Info used;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    c->dims[0] = c->dims[1] = c->dims[2] = 0;
    H3_MPI(MPI_Dims_create(n, 3, c->dims));
    for (int d = 0; d < 3; d++) periods[d] = !o->open;
    H3_MPI(MPI_Cart_create(MPI_COMM_WORLD, 3, c->dims, periods, 0, cart));
    H3_MPI(MPI_Comm_set_errhandler(*cart, MPI_ERRORS_RETURN));
    if (o->direct) {
        MPI_Info info;
        H3_MPI(MPI_Info_create(&info));
        H3_MPI(MPI_Info_set(info, MPIACC_DIRECT_INFO, "true"));
        H3_MPI(MPI_Comm_set_info(*cart, info));
        MPI_Info_free(&info);
    }
    H3_MPI(MPI_Comm_get_info(*cart, &used));
    c->info[0] = 0;
    if (MPI_Info_get_string(used, MPIACC_DIRECT_INFO, &len, c->info, &flag) != MPI_SUCCESS || !flag) c->info[0] = 0;
    MPI_Info_free(&used);
    c->protocol = !strcmp(c->info, "true") ? "direct" : "default";
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
        if (g->n[d] < g->r) return h3_error("the interior (%d) must be at least the radius (%d)", g->n[d], g->r);
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

/* Times (median/min/max over passes of the slowest rank's loop time per
 * iteration) of one variant; v == V_KERNEL: the stencil alone.  The final
 * array is downloaded into out (not for V_KERNEL). */
static int run_variant(const opts_t *o, const h3_grid_t *g, const h3_backend_t *be, int method, int v,
                       const void *init, void *out, result_t *res)
{
    h3_dev_t *d = NULL;
    h3_xchg_t x;
    double *t = calloc((size_t)o->passes, sizeof *t);
    int rc = 1, cur = 0, have_x = 0;
    if (!t) return h3_error("out of memory");
    if ((rc = be->create(g, &d)) != 0) goto done;
    if (v == V_MANUAL) rc = h3_xchg_staged(g, method, be->host_send(d), be->host_recv(d), &x);
    else if (v == V_MPIACC) rc = h3_xchg_mpiacc(g, method, be, d, &x);
    if (rc) goto done;
    have_x = v != V_KERNEL;
    for (int p = 0; p <= o->passes; p++) {
        double t0, dt;
        if ((rc = be->upload(d, 0, init) || be->upload(d, 1, init)) != 0) goto done;
        MPI_Barrier(g->cart);
        t0 = MPI_Wtime();
        cur = 0;
        for (int it = 0; it < o->iters; it++) {
            if (v == V_MANUAL) rc = be->pack(d, cur) || h3_xchg_run(g, &x, cur) || be->unpack(d, cur);
            else if (v == V_MPIACC) rc = h3_xchg_run(g, &x, cur);
            if (rc || (rc = be->step(d, cur)) != 0) goto done;
            cur = !cur;
        }
        if ((rc = be->finish(d)) != 0) goto done;
        MPI_Barrier(g->cart);
        dt = (MPI_Wtime() - t0) * 1e6 / o->iters;
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, g->cart);
        if (p > 0) t[p - 1] = dt; /* pass 0: warm-up */
    }
    if (out && (rc = be->download(d, cur, out)) != 0) goto done;
    res->ran = 1;
    res->min = bench_min(t, (size_t)o->passes), res->max = bench_max(t, (size_t)o->passes);
    res->med = bench_median(t, (size_t)o->passes);
done:
    if (have_x) h3_xchg_free(&x);
    if (d) be->destroy(d);
    free(t);
    return rc;
}

static int choose_backend(const char *want, ctx_t *c)
{
    const h3_backend_t *cu = h3_cuda_backend(), *cl = h3_opencl_backend();
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

static void print_header(const opts_t *o, const h3_grid_t *g, const ctx_t *c)
{
    printf("halo3d (3D halo exchange on mpiacc %d.%d)\n", MPIACC_VERSION_MAJOR, MPIACC_VERSION_MINOR);
    printf("  %d ranks as %d x %d x %d (z y x), %s; %d x %d x %d (x y z) per rank, radius %d, 6 faces = %d "
           "elements per rank per exchange\n",
           g->nranks, c->dims[0], c->dims[1], c->dims[2], o->open ? "non-periodic" : "periodic", g->n[2], g->n[1],
           g->n[0], g->r, g->face_total);
    printf("  %d iterations (exchange + stencil), %d timed passes + 1 warm-up; backend %s (rank 0: %s), %d rank(s) "
           "per node, each on device (node-local rank %% %d)\n",
           o->iters, o->passes, c->be->name, c->desc, c->local_size, c->ndev);
    printf("  protocol: %s requested; the communicator reports %s%s -> %s protocol\n",
           o->direct ? "direct" : "default", c->info[0] ? MPIACC_DIRECT_INFO "=" : "no " MPIACC_DIRECT_INFO " key",
           c->info, c->protocol);
    printf("  times: microseconds per iteration, slowest rank, median (min, max) over passes; exch = iteration "
           "minus the stencil alone\n");
}

static void write_csv(const opts_t *o, const h3_grid_t *g, const ctx_t *c, int method, int v, const result_t *r,
                      const result_t *kern, double ratio)
{
    static FILE *f;
    char rs[32] = "";
    if (!o->csv) return;
    if (!f)
        f = bench_csv_open(o->csv, "precision,method,variant,backend,ranks,dims,periodic,nx,ny,nz,radius,face_bytes,"
                                   "iters,passes,iter_us_median,iter_us_min,iter_us_max,kernel_us,exch_us,"
                                   "manual_over_mpiacc,errors,protocol");
    if (!f) return;
    if (ratio > 0) snprintf(rs, sizeof rs, "%.4f", ratio);
    fprintf(f, "%s,%s,%s,%s,%d,%dx%dx%d,%d,%d,%d,%d,%d,%zu,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%ld,%s\n",
            g->dp ? "dp" : "sp", method < 0 ? "none" : h3_method_name[method], v < 0 ? "kernel" : vname[v],
            c->be->name, g->nranks, c->dims[0], c->dims[1], c->dims[2], !o->open, g->n[2], g->n[1], g->n[0], g->r,
            (size_t)g->face_total * g->es, o->iters, o->passes, r->med, r->min, r->max, kern->med,
            v < 0 ? 0.0 : r->med - kern->med, rs, r->errors, c->protocol);
    fflush(f);
}

/* One precision: references, the stencil alone, the variants, report.
 * Returns 0, 1 (validation error, the same on every rank) or 2 (a failure
 * on this rank). */
static int run_precision(const opts_t *o, MPI_Comm cart, int dp, const ctx_t *c, int first)
{
    h3_grid_t g;
    result_t res[H3_NMETHODS][V_COUNT], kern = {0};
    void *init = NULL, *ref[H3_NMETHODS] = {NULL, NULL}, *out = NULL;
    size_t bytes;
    long refdiff = 0;
    int rc, failed = 0;
    memset(res, 0, sizeof res);
    if ((rc = make_grid(o, cart, c->local_rank, dp, &g)) != 0) return 2;
    if (first && g.rank == 0) print_header(o, &g, c);
    bytes = g.elems * g.es;
    if (!(init = malloc(bytes)) || !(out = malloc(bytes))) {
        rc = h3_error("out of host memory");
        goto done;
    }
    h3_init(&g, init);
    for (int m = 0; m < H3_NMETHODS; m++) {
        if (!(o->meth_mask & (1 << m))) continue;
        if (!(ref[m] = malloc(bytes))) {
            rc = h3_error("out of host memory");
            goto done;
        }
        if ((rc = h3_cpu_reference(&g, m, o->iters, ref[m])) != 0) goto done;
    }
    if (ref[0] && ref[1]) { /* the two host exchanges must agree */
        refdiff = h3_compare(&g, ref[1], ref[0], o->print_limit, "host persistent vs host alltoallw");
        MPI_Allreduce(MPI_IN_PLACE, &refdiff, 1, MPI_LONG, MPI_SUM, cart);
        if (refdiff) failed = 1;
    }
    if ((rc = run_variant(o, &g, c->be, 0, V_KERNEL, init, NULL, &kern)) != 0) goto done;
    for (int m = 0; m < H3_NMETHODS; m++)
        for (int v = 0; v < V_COUNT; v++) {
            char what[64];
            if (!(o->meth_mask & (1 << m)) || !(o->var_mask & (1 << v))) continue;
            if ((rc = run_variant(o, &g, c->be, m, v, init, out, &res[m][v])) != 0) {
                h3_error("%s %s variant failed", h3_method_name[m], vname[v]);
                goto done;
            }
            snprintf(what, sizeof what, "%s %s", h3_method_name[m], vname[v]);
            res[m][v].errors = h3_compare(&g, out, ref[m], o->print_limit, what);
            MPI_Allreduce(MPI_IN_PLACE, &res[m][v].errors, 1, MPI_LONG, MPI_SUM, cart);
            if (res[m][v].errors) failed = 1;
        }
    if (g.rank == 0) {
        printf("\n%s %-11s %-8s %11s %11s %11s %11s %9s\n", dp ? "DP" : "SP", "method", "variant", "iter us",
               "min", "max", "exch us", "errors");
        printf("   %-11s %-8s %11.2f %11.2f %11.2f %11s %9s\n", "-", "stencil", kern.med, kern.min, kern.max, "-",
               "-");
        write_csv(o, &g, c, -1, V_KERNEL, &kern, &kern, 0);
        for (int m = 0; m < H3_NMETHODS; m++) {
            const result_t *rm = res[m];
            double ratio = rm[V_MANUAL].ran && rm[V_MPIACC].ran ? rm[V_MANUAL].med / rm[V_MPIACC].med : 0;
            for (int v = 0; v < V_COUNT; v++) {
                if (!rm[v].ran) continue;
                printf("   %-11s %-8s %11.2f %11.2f %11.2f %11.2f %9ld\n", h3_method_name[m], vname[v], rm[v].med,
                       rm[v].min, rm[v].max, rm[v].med - kern.med, rm[v].errors);
                write_csv(o, &g, c, m, v, &rm[v], &kern, ratio);
            }
            if (ratio > 0) {
                double em = rm[V_MANUAL].med - kern.med, ex = rm[V_MPIACC].med - kern.med;
                printf("   %-11s manual/mpiacc: %.3fx per iteration", h3_method_name[m], ratio);
                if (em > 0 && ex > 0) printf(", %.3fx per exchange", em / ex);
                printf("\n");
            }
        }
        if (refdiff) printf("   the host references of the two methods differ in %ld elements\n", refdiff);
        printf("   validation: %s (bitwise against the same exchange on host arrays)\n", failed ? "FAILED" : "PASSED");
        {
            MPIACC_Stats st;
            memset(&st, 0, sizeof st);
            st.size = sizeof st;
            if (MPIACC_Get_stats(&st) == MPI_SUCCESS && (st.coll_device || st.coll_staged))
                printf("   MPI_Neighbor_alltoallw on the direct communicator (rank 0, so far): %llu on the device "
                       "(IPC), %llu staged (host arrays, or a process that cannot)\n",
                       st.coll_device, st.coll_staged);
        }
        fflush(stdout);
    }
done:
    free(init), free(out), free(ref[0]), free(ref[1]);
    return rc ? 2 : failed; /* 2: a failure, 1: a validation error */
}

int main(int argc, char **argv)
{
    opts_t o;
    ctx_t c;
    MPI_Comm cart = MPI_COMM_NULL, node;
    int rank, rc = 0, found, first = 1;
    parse(argc, argv, &o);
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(&c, 0, sizeof c);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &c.local_rank);
    MPI_Comm_size(node, &c.local_size);
    MPI_Comm_free(&node);
    if (make_cart(&o, &cart, &c) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    found = choose_backend(o.backend, &c);
    MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!found) {
        if (rank == 0) printf("SKIPPED: %s\n", c.desc);
        rc = 77;
        goto done;
    }
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
