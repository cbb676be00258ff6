/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * ooo: out-of-order completion (MPI-ACC, Aji et al., Fig 7 / Fig 4-5) with
 * OpenCL command queues.  3 ranks.  Rank 0 launches K0 on queue A and K1 on
 * queue B (K1 finishes first), then sends what K0 wrote to rank 1 and what
 * K1 wrote to rank 2.  Variants, same run, same buffers:
 *   simple    wait for A, MPI_Send; wait for B, MPI_Send (issue order);
 *   advanced  poll both kernels' events, MPI_Isend whichever is ready,
 *             MPI_Testany, MPI_Waitall (explicit, completion order);
 *   mpiacc    each datatype tagged with its queue, MPI_Isend both at once,
 *             MPI_Waitall (implicit: mpiacc waits for each queue).
 * The explicit variants also send the cl_mem through mpiacc, without a
 * queue attribute (the data is ready when they call MPI).  Time = from the
 * kernel launch until both receivers have acknowledged.
 * Sweep k0: K0's duration (K1 fixed), sizes equal; sweep size1: the size
 * sent after K1, with K0 at the overlap point of sweep k0; sweep fit: the
 * size sent after K1 from 1 to 32 x --size with K0 = K1 + tB (K0's
 * iterations set from K1's and A's kernel times alone and tB, measured just
 * before): B's send just fits under K0, where the ideal gain
 * tB / (K1 + tA + 2 tB) grows with B (sweeps k0 and size1 cannot pass 1/3
 * with one link).
 * Where the time goes, per row (medians in ms from the first launch):
 *   "#  phases": K1 and K0 done (the kernels' profiling end times, on the
 *   device clock from K0's enqueue) and per variant the time after the last
 *   kernel (total - max(K0, K1)): the communication the variant did not hide.
 *   "#  parts" and "#  ideal": tA, tB (each send alone, mpiacc with its
 *   queue attribute, data already produced, until the ack; median of the
 *   same reps) and tAB (both at once), the simple model, the ideal out-of-
 *   order schedule with one shared link and with two links, their gains,
 *   how much of them mpiacc reaches and the residual mpiacc - ideal: the
 *   formulas are in bench/ooo_model.h.
 * The closing lines name the overlap point (the k0 row with the largest
 * gain of mpiacc over simple), its gains and ideal gains, the gap to the
 * paper's 34.2 % split into the parameters' part (34.2 - ideal gain) and
 * mpiacc's part (ideal gain - mpiacc's gain), the largest ideal gain of all
 * sweeps and where, and the run time.
 * Usage: mpiexec -n 3 ooo [--k1-ms 20] [--size BYTES] [--reps 5] [--csv FILE] [--test-loop] [--help]
 */
#include "ocl_common.h"
#include "ooo_model.h"

/* What one round does: a variant, or one transfer of the data already
 * produced (A alone to rank 1, B alone to rank 2, both at once). */
enum { V_SIMPLE, V_ADVANCED, V_MPIACC, NV, X_A = NV, X_B, X_AB, NK };
enum { FIT_MAX = 32 }; /* the fit sweep's largest B, in units of --size */
static int use_testany = 1; /* MPI_Testany as in the paper's Fig 4b; --test-loop: MPI_Test each */

typedef struct ctl {
    int64_t stop, variant, iters0, iters1, s0, s1;
} ctl_t;

typedef struct st {
    bocl_t b;
    cl_command_queue qa, qb; /* in order, with profiling */
    cl_mem buf0, buf1;
} st_t;

/* One round's figures (ms; kernel ends from K0's enqueue). */
typedef struct res {
    double total, k0, k1;
} res_t;

static double prof_ms(cl_event ev, cl_profiling_info what, cl_ulong ref)
{
    cl_ulong t;
    OCL_OK(clGetEventProfilingInfo(ev, what, sizeof t, &t, NULL));
    return 1e-6 * (double)(t - ref);
}

/* Sends of the data already there, the mpiacc way (queue attribute). */
static double xfer_once(st_t *s, const ctl_t *c)
{
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Datatype t0 = bocl_type((size_t)c->s0, s->qa), t1 = bocl_type((size_t)c->s1, s->qb);
    double t = bench_now();
    if (c->variant != X_B) MPI_Isend(s->buf0, 1, t0, 1, 0, MPI_COMM_WORLD, &req[0]);
    if (c->variant != X_A) MPI_Isend(s->buf1, 1, t1, 2, 0, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    if (c->variant != X_B) MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (c->variant != X_A) MPI_Recv(NULL, 0, MPI_BYTE, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    t = bench_now() - t;
    MPI_Type_free(&t0);
    MPI_Type_free(&t1);
    return 1e3 * t;
}

static res_t run_once(st_t *s, const ctl_t *c)
{
    cl_event ev[2];
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Datatype t0, t1;
    size_t s0 = (size_t)c->s0, s1 = (size_t)c->s1;
    int with_q = c->variant == V_MPIACC;
    cl_ulong ref;
    res_t r;
    double t;

    t0 = bocl_type(s0, with_q ? s->qa : NULL);
    t1 = bocl_type(s1, with_q ? s->qb : NULL);
    t = bench_now();
    bocl_work(&s->b, s->qa, s->buf0, s0, (int)c->iters0, &ev[0]);
    bocl_work(&s->b, s->qb, s->buf1, s1, (int)c->iters1, &ev[1]);
    if (c->variant == V_SIMPLE) {
        OCL_OK(clWaitForEvents(1, &ev[0]));
        MPI_Send(s->buf0, 1, t0, 1, 0, MPI_COMM_WORLD);
        OCL_OK(clWaitForEvents(1, &ev[1]));
        MPI_Send(s->buf1, 1, t1, 2, 0, MPI_COMM_WORLD);
    } else if (c->variant == V_ADVANCED) {
        int issued[2] = {0, 0}, n = 0, idx, flag;
        while (n < 2) {
            for (int i = 0; i < 2; i++) {
                cl_int stt;
                if (issued[i]) continue;
                OCL_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof stt, &stt, NULL));
                if (stt != CL_COMPLETE) continue;
                MPI_Isend(i ? s->buf1 : s->buf0, 1, i ? t1 : t0, i + 1, 0, MPI_COMM_WORLD, &req[i]);
                issued[i] = 1;
                n++;
            }
            if (use_testany) {
                MPI_Testany(2, req, &idx, &flag, MPI_STATUS_IGNORE);
            } else { /* the same progress, one request at a time */
                for (int i = 0; i < 2; i++)
                    if (req[i] != MPI_REQUEST_NULL) MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
            }
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    } else {
        MPI_Isend(s->buf0, 1, t0, 1, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(s->buf1, 1, t1, 2, 0, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(NULL, 0, MPI_BYTE, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    r.total = 1e3 * (bench_now() - t);
    OCL_OK(clWaitForEvents(2, ev)); /* complete already; profiling needs it */
    OCL_OK(clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_QUEUED, sizeof ref, &ref, NULL));
    r.k0 = prof_ms(ev[0], CL_PROFILING_COMMAND_END, ref);
    r.k1 = prof_ms(ev[1], CL_PROFILING_COMMAND_END, ref);
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
    MPI_Type_free(&t0);
    MPI_Type_free(&t1);
    return r;
}

/* Medians of one point, ms. */
typedef struct pt {
    double v[NV], k0, k1, x[3]; /* x: tA, tB, tAB */
} pt_t;

/* Broadcasts c to the receivers and runs one round of kind k. */
static res_t round_(st_t *s, ctl_t c, int k)
{
    res_t r = {0, 0, 0};
    c.variant = k;
    MPI_Bcast(&c, 6, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (k < NV) return run_once(s, &c);
    r.total = xfer_once(s, &c);
    return r;
}

/* Median of reps transfers of kind k (X_A, X_B, X_AB), after one warm-up. */
static double xfer_ms(st_t *s, const ctl_t *c, int k, int reps)
{
    double v[64];
    OCL_OK(clFinish(s->qa)); /* no kernel running: the data is there */
    OCL_OK(clFinish(s->qb));
    round_(s, *c, k);
    for (int r = 0; r < reps; r++) v[r] = round_(s, *c, k).total;
    return bench_median(v, (size_t)reps);
}

/* One point: the variants `reps` times, interleaved (one warm-up round
 * each), then the transfers alone; medians. */
static pt_t point(st_t *s, const ctl_t *c, int reps)
{
    double v[NV][64], k[2][64];
    pt_t p;
    for (int i = 0; i < NV; i++) round_(s, *c, i);
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < NV; i++) {
            const res_t x = round_(s, *c, i);
            v[i][r] = x.total;
            if (i == V_SIMPLE) k[0][r] = x.k0, k[1][r] = x.k1; /* kernel ends do not depend on the variant */
        }
    for (int i = 0; i < NV; i++) p.v[i] = bench_median(v[i], (size_t)reps);
    p.k0 = bench_median(k[0], (size_t)reps);
    p.k1 = bench_median(k[1], (size_t)reps);
    for (int i = 0; i < 3; i++) p.x[i] = xfer_ms(s, c, X_A + i, reps);
    return p;
}

static void receiver(int rank)
{
    ctl_t c;
    char *host = NULL;
    size_t cap = 0;
    for (;;) {
        size_t n;
        MPI_Bcast(&c, 6, MPI_INT64_T, 0, MPI_COMM_WORLD);
        if (c.stop) break;
        if ((c.variant == X_A && rank == 2) || (c.variant == X_B && rank == 1)) continue; /* not this one's */
        n = (size_t)(rank == 1 ? c.s0 : c.s1);
        if (n > cap) {
            free(host);
            host = malloc(n);
            cap = n;
            if (!host) bench_fail(__FILE__, __LINE__, "malloc", "out of memory");
        }
        MPI_Recv(host, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
    free(host);
}

/* A kernel of iters alone on q writing bytes of buf: from its enqueue to
 * its end on the device clock (ms, median of 3). */
static double kernel_ms(st_t *s, cl_command_queue q, cl_mem buf, int iters, size_t bytes)
{
    double v[3];
    for (int r = 0; r < 3; r++) {
        cl_event ev;
        cl_ulong ref;
        bocl_work(&s->b, q, buf, bytes, iters, &ev);
        OCL_OK(clWaitForEvents(1, &ev));
        OCL_OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof ref, &ref, NULL));
        v[r] = prof_ms(ev, CL_PROFILING_COMMAND_END, ref);
        clReleaseEvent(ev);
    }
    return bench_median(v, 3);
}

/* Overlap point (sweep k0) and the largest ideal gains. */
static double best_gain = -1e9, best_f = 1.0, best_adv;
static ooo_ideal_t ov_ideal;
static ooo_summary_t summary;

static void report(FILE *csv, const char *sweep, double x, const ctl_t *c, const pt_t *p)
{
    const double *ms = p->v, last = p->k0 > p->k1 ? p->k0 : p->k1;
    const double ga = 100.0 * (ms[V_SIMPLE] - ms[V_ADVANCED]) / ms[V_SIMPLE];
    const double gm = 100.0 * (ms[V_SIMPLE] - ms[V_MPIACC]) / ms[V_SIMPLE];
    const ooo_parts_t parts = {p->k0, p->k1, p->x[0], p->x[1], p->x[2], ms[V_SIMPLE], ms[V_MPIACC]};
    const ooo_ideal_t m = ooo_ideal(&parts);
    char where[160];

    snprintf(where, sizeof where, "sweep %s x = %.2f (K0 done %.2f ms, B = %lld B)", sweep, x, p->k0,
             (long long)c->s1);
    ooo_summary_add(&summary, &m, where);
    if (!strcmp(sweep, "k0") && gm / 100 > best_gain) {
        best_gain = gm / 100, best_f = x, best_adv = ga / 100;
        ov_ideal = m;
    }
    printf("%-6s %8.2f %10lld %10lld %9.2f %9.2f %9.2f %8.1f%% %8.1f%% %8.3f\n", sweep, x, (long long)c->s0,
           (long long)c->s1, ms[V_SIMPLE], ms[V_ADVANCED], ms[V_MPIACC], ga, gm, ms[V_MPIACC] / ms[V_ADVANCED]);
    printf("#  phases: K1 done %.2f, K0 done %.2f; after the last kernel s/a/m %.2f/%.2f/%.2f ms\n", p->k1, p->k0,
           ms[V_SIMPLE] - last, ms[V_ADVANCED] - last, ms[V_MPIACC] - last);
    ooo_print_ideal(&parts, &m, "ms", 2);
    if (csv) {
        fprintf(csv, "%s,%g,%lld,%lld,%lld,%lld,%.4f,%.4f,%.4f,%.2f,%.2f,%.4f,%.4f,%.4f", sweep, x,
                (long long)c->iters0, (long long)c->iters1, (long long)c->s0, (long long)c->s1, ms[V_SIMPLE],
                ms[V_ADVANCED], ms[V_MPIACC], ga, gm, ms[V_MPIACC] / ms[V_ADVANCED], p->k0, p->k1);
        ooo_csv_ideal(csv, &parts, &m, 4);
        fputc('\n', csv);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int rank, size, reps = 5, have = 0, test_loop = 0;
    double k1_ms = 20, t_run;
    long long size0 = 4 << 20;
    size_t s0;
    const char *csvpath = NULL;
    st_t s;
    FILE *csv = NULL;
    static const double f0[] = {1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0};
    static const double fs[] = {0.25, 0.5, 1.0, 2.0, 4.0};
    static const int ff[] = {1, 2, 4, 8, 16, FIT_MAX};

    cli_opt_t opts[] = {
        {"k1-ms", CLI_DOUBLE, &k1_ms, "duration of kernel K1 (ms)", NULL, 0.01, 1e5},
        {"size", CLI_SIZE, &size0, "bytes sent after each kernel (sweeps size1 and fit scale the second, up to 32x)",
         NULL, 4, 32 << 20},
        {"reps", CLI_INT, &reps, "repetitions per point (median; at most 64)", NULL, 1, 64},
        CLI_OPT_CSV(&csvpath),
        {"test-loop", CLI_FLAG, &test_loop, "advanced variant: MPI_Test each request instead of MPI_Testany", NULL,
         CLI_ANY},
    };
    CLI_PARSE(argc, argv, "ooo", "mpiexec -n 3 ooo [options]",
              "MPI-ACC Fig 7 with OpenCL queues: out-of-order completion, simple and advanced\n"
              "explicit synchronisation against mpiacc's queue attribute, same run; the ideal\n"
              "out-of-order schedule from the kernel and transfer times measured alone.", opts);
    use_testany = !test_loop;
    s0 = (size_t)size0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    t_run = bench_now();
    if (size != 3) {
        if (!rank) fprintf(stderr, "ooo: run with exactly 3 ranks\n");
        MPI_Finalize();
        return 1;
    }
    memset(&s, 0, sizeof s);
    if (rank == 0) have = bocl_init(&s.b);
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!have) {
        if (!rank) printf("SKIPPED: no OpenCL device\n");
        MPI_Finalize();
        return 0;
    }
    if (rank != 0) {
        receiver(rank);
        MPI_Finalize();
        return 0;
    }
    {
        cl_int e;
        s.qa = clCreateCommandQueue(s.b.ctx, s.b.dev, CL_QUEUE_PROFILING_ENABLE, &e);
        OCL_OK(e);
        s.qb = clCreateCommandQueue(s.b.ctx, s.b.dev, CL_QUEUE_PROFILING_ENABLE, &e);
        OCL_OK(e);
    }
    s.buf0 = bocl_buf(&s.b, s0);
    s.buf1 = bocl_buf(&s.b, s0 * FIT_MAX);
    ooo_summary_init(&summary);
    csv = bench_csv_open(csvpath, "sweep,x,k0_iters,k1_iters,s0,s1,simple_ms,advanced_ms,mpiacc_ms,"
                                  "gain_advanced_pct,gain_mpiacc_pct,mpiacc_over_advanced,k0_done_ms,k1_done_ms,"
                                  OOO_CSV_COLUMNS("ms"));

    /* Calibrate the kernel: iterations per ms. */
    int probe = 20000;
    double pm = kernel_ms(&s, s.qa, s.buf0, probe, s0);
    while (pm < 5 && probe < (1 << 28)) {
        probe *= 4;
        pm = kernel_ms(&s, s.qa, s.buf0, probe, s0);
    }
    ctl_t c = {0, 0, 0, (int64_t)(probe * k1_ms / pm), (int64_t)s0, (int64_t)s0};
    bench_header("ooo", "MPI-ACC Fig 7, out-of-order completion with OpenCL queues", "OpenCL", s.b.name);
    printf("# %d reps, K1 %.1f ms (%lld iterations, measured alone %.2f ms), size %zu B\n", reps, k1_ms,
           (long long)c.iters1, kernel_ms(&s, s.qa, s.buf0, (int)c.iters1, s0), s0);
    printf("%-6s %8s %10s %10s %9s %9s %9s %9s %9s %8s\n", "sweep", "x", "size0 (B)", "size1 (B)", "simple ms",
           "advanc ms", "mpiacc ms", "gain_adv", "gain_acc", "acc/adv");

    /* Sweep k0: K0 = f x K1. */
    pt_t p;
    for (size_t i = 0; i < sizeof f0 / sizeof *f0; i++) {
        c.iters0 = (int64_t)(f0[i] * (double)c.iters1);
        p = point(&s, &c, reps);
        report(csv, "k0", f0[i], &c, &p);
    }
    printf("# overlap point (largest mpiacc gain of sweep k0): K0 = %.2f x K1: mpiacc %.1f%%, advanced %.1f%% "
           "faster than simple (paper: up to 34.2%%; target >= 30%%, mpiacc within 3%% of advanced)\n",
           best_f, 100 * best_gain, 100 * best_adv);
    /* Sweep size1: size sent after K1, K0 at the overlap point. */
    c.iters0 = (int64_t)(best_f * (double)c.iters1);
    for (size_t i = 0; i < sizeof fs / sizeof *fs; i++) {
        c.s1 = (int64_t)(fs[i] * (double)s0);
        p = point(&s, &c, reps);
        report(csv, "size1", fs[i], &c, &p);
    }
    /* Sweep fit: K0 = K1 + tB.  A kernel's time alone is w + iters / rate,
     * w: its time without a spin (launch and write). */
    {
        const double w0 = kernel_ms(&s, s.qa, s.buf0, 0, s0), per_iter = (pm - w0) / probe;
        for (size_t i = 0; i < sizeof ff / sizeof *ff; i++) {
            double tb, k1d, k0;
            c.s1 = (int64_t)s0 * ff[i];
            tb = xfer_ms(&s, &c, X_B, reps);
            k1d = kernel_ms(&s, s.qb, s.buf1, (int)c.iters1, (size_t)c.s1);
            k0 = k1d + tb;
            c.iters0 = per_iter > 0 && k0 > w0 ? (int64_t)((k0 - w0) / per_iter) : 0;
            p = point(&s, &c, reps);
            report(csv, "fit", ff[i], &c, &p);
        }
    }
    printf("# (x: K0/K1 for sweep k0, size1/size0 for sweeps size1 (K0 = %.2f x K1) and fit (K0 = K1 + tB); times in "
           "ms, medians; gain = (simple - variant) / simple)\n",
           best_f);
    ooo_print_summary(&summary, &ov_ideal);
    printf("# run time %.1f s\n", bench_now() - t_run);
    c.stop = 1;
    MPI_Bcast(&c, 6, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (csv) fclose(csv);
    clReleaseMemObject(s.buf0);
    clReleaseMemObject(s.buf1);
    clReleaseCommandQueue(s.qa);
    clReleaseCommandQueue(s.qb);
    bocl_fini(&s.b);
    MPI_Finalize();
    return 0;
}
