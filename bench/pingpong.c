/*
 * bench/pingpong: device-to-device ping-pong of 2D vector objects through
 * mpiacc's public API (TEMPI bench-mpi-pingpong-nd): the datatype is tagged
 * MPIACC_BUF_TYPE=MPIACC_BUF_CUDA + MPIACC_STREAM and MPI_Send / MPI_Recv get
 * device pointers.  Objects of 1 KiB, 1 MiB, 4 MiB packed bytes, blocks 1..512
 * B, pitch 512 B (the 512 B row is a contiguous object).  One-way time =
 * median round trip / 2.
 *
 * One run measures, per (size, block) row and in the same run:
 *   default   the default protocol (packed into host staging, MPI_PACKED on
 *             MPI_COMM_WORLD);
 *   direct    the direct protocol (a duplicate of MPI_COMM_WORLD with the
 *             info key mpiacc_direct=true), with the protocol that carried
 *             the messages (MPIACC_Direct_counts: eager / IPC / pipelined);
 *   host      the baseline: host contiguous ping-pong of the same packed size;
 * the ratios direct/host and default/host, and the CUDA IPC handles opened
 * per message during the timed iterations (MPIACC_Get_stats ipc_opens,
 * both ranks, after the warm-up): 0.00 in steady state.
 *
 * Targets (issue 12), checked on the last line ("# targets:"):
 *   1 KiB device ping-pong one-way <= 12 us (direct);
 *   4 MiB <= 40 us, >= 10x faster than host contiguous (direct through IPC);
 *   pipelined staging (MPIACC_IPC=0): 4 MiB <= 1.10x host contiguous;
 *   IPC opens per message after the warm-up: 0.
 *
 * Issue 23 (white-box: links libmpiacc_internal.a for the test hooks):
 *   --variant LIST  runs every row once per IPC-path variant (sets of
 *                   cuda_testhooks.h names joined by '+', e.g.
 *                   base,flag,flag+capq); the rows say which;
 *   --breakdown     per-phase medians of the direct protocol's IPC messages
 *                   (rank 0 -> 1 direction) from the library's phase
 *                   timestamps (src/core/tstamp.h): a "# bd" line under each
 *                   direct row.  Rank 0 then sends with MPI_Isend + MPI_Wait
 *                   (the call's return is a phase) instead of MPI_Send.
 *
 *   mpiexec -n 2 bench/pingpong [--protocols default,direct|default|direct]
 *       [--direct] [--sizes LIST] [--blocks LIST] [--csv FILE] [--quick]
 *       [--iterations N] [--variant LIST] [--breakdown]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "bench.h"
#include "core/tstamp.h"
#include "cuda/cuda_testhooks.h"
#include "mpiacc.h"

#define CK BENCH_CUDA_CHECK

typedef struct {
    double us;           /* one-way, median                                  */
    const char *proto;   /* direct only: the protocol that carried the data  */
    double opens;        /* direct only: IPC opens per timed message         */
} pp_t;

/* --breakdown: per iteration, rank 0's marks (its send) and the bench's
 * stamps, and rank 1's marks (its receive of that message). */
enum { BD_T0 = MPIACC_TS_N, BD_CALL_RET, BD_SEND_DONE, BD_RECV_RET, BD_N };
typedef struct {
    uint64_t *v; /* iters x BD_N: rank 0's send-side slots, rank 1's receive-side ones (merged on rank 0) */
} bd_t;
static int breakdown;

static unsigned long long ipc_opens(void)
{
    MPIACC_Stats st = {.size = sizeof st};
    return MPIACC_Get_stats(&st) == MPI_SUCCESS ? st.ipc_opens : 0;
}

/* The protocol that received the device messages since *before (updated). */
static const char *protocol_since(long before[3])
{
    long now[3], n = 0;
    const char *name = "staged", *names[3] = {"eager", "pipelined", "IPC"};
    MPIACC_Direct_counts(&now[0], &now[1], &now[2]);
    for (int i = 0; i < 3; i++)
        if (now[i] > before[i]) name = n++ ? "mixed" : names[i];
    memcpy(before, now, sizeof now);
    return name;
}

/* `iters` timed round trips of (buf, count, t) after two for warm-up; the
 * median one-way time and the IPC opens per timed message (both ranks). */
static pp_t pingpong(int rank, MPI_Comm comm, void *buf, int count, MPI_Datatype t, int iters, bd_t *bd)
{
    double *v = malloc(sizeof(double) * (size_t)iters);
    unsigned long long o0 = 0, d = 0;
    int peer = 1 - rank, rc = MPI_SUCCESS;
    pp_t r = {0, NULL, 0};
    if (!v) bench_fail(__FILE__, __LINE__, "malloc", "out of memory");
    if (bd && !(bd->v = calloc((size_t)iters * BD_N, sizeof *bd->v)))
        bench_fail(__FILE__, __LINE__, "calloc", "out of memory");
    for (int i = -2; i < iters; i++) {
        if (i == 0) o0 = ipc_opens();
        if (bd) mpiacc_ts_reset();
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (bd && i >= 0) { /* timestamped: rank 0 -> 1 with the call's return */
            uint64_t *s = bd->v + (size_t)i * BD_N;
            MPI_Request rq;
            if (rank == 0) {
                s[BD_T0] = mpiacc_ts_now();
                rc |= MPI_Isend(buf, count, t, peer, 7, comm, &rq);
                s[BD_CALL_RET] = mpiacc_ts_now();
                rc |= MPI_Wait(&rq, MPI_STATUS_IGNORE);
                s[BD_SEND_DONE] = mpiacc_ts_now();
                mpiacc_ts_read(s); /* before the receive: only send-side slots are used */
                rc |= MPI_Recv(buf, count, t, peer, 7, comm, MPI_STATUS_IGNORE);
            } else {
                rc |= MPI_Recv(buf, count, t, peer, 7, comm, MPI_STATUS_IGNORE);
                s[BD_RECV_RET] = mpiacc_ts_now();
                mpiacc_ts_read(s);
                rc |= MPI_Send(buf, count, t, peer, 7, comm);
            }
        } else if (rank == 0) {
            rc |= MPI_Send(buf, count, t, peer, 7, comm);
            rc |= MPI_Recv(buf, count, t, peer, 7, comm, MPI_STATUS_IGNORE);
        } else {
            rc |= MPI_Recv(buf, count, t, peer, 7, comm, MPI_STATUS_IGNORE);
            rc |= MPI_Send(buf, count, t, peer, 7, comm);
        }
        if (i >= 0) v[i] = (MPI_Wtime() - t0) * 1e6 / 2;
    }
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "bench/pingpong: an MPI call failed on rank %d\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (bd) { /* rank 1's receive-side slots and its return join rank 0's rows */
        uint64_t *r = rank == 1 ? bd->v : malloc(sizeof *r * (size_t)iters * BD_N);
        if (!r) bench_fail(__FILE__, __LINE__, "malloc", "out of memory");
        if (rank == 1) BENCH_MPI_CHECK(MPI_Send(r, iters * BD_N, MPI_UINT64_T, 0, 8, MPI_COMM_WORLD));
        else {
            BENCH_MPI_CHECK(MPI_Recv(r, iters * BD_N, MPI_UINT64_T, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < iters; i++) {
                uint64_t *s = bd->v + (size_t)i * BD_N, *q = r + (size_t)i * BD_N;
                for (int k = MPIACC_TS_RTS_SEEN; k <= MPIACC_TS_FIN_POSTED; k++) s[k] = q[k];
                s[BD_RECV_RET] = q[BD_RECV_RET];
            }
            free(r);
        }
    }
    d = ipc_opens() - o0;
    BENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    r.opens = (double)d / (2.0 * iters);
    r.us = bench_percentile(v, (size_t)iters, 50); /* upper median */
    free(v);
    return r;
}

/* Median over the iterations of mark b - mark a (us); -1 when no
 * iteration passed both. */
static double bd_phase(const bd_t *bd, int iters, int a, int b)
{
    double *v = malloc(sizeof *v * (size_t)iters), m = -1;
    size_t n = 0;
    if (!v) bench_fail(__FILE__, __LINE__, "malloc", "out of memory");
    for (int i = 0; i < iters; i++) {
        const uint64_t *s = bd->v + (size_t)i * BD_N;
        if (s[a] && s[b] && s[b] >= s[a]) v[n++] = (double)(s[b] - s[a]) / 1e3;
    }
    if (n) m = bench_percentile(v, n, 50);
    free(v);
    return m;
}

/* The "# bd" line of one row: the phases of docs/performance.md. */
static void bd_print(const bd_t *bd, int iters, long long bytes, long long blk, const char *variant)
{
    static const struct {
        const char *name;
        int a, b;
    } ph[] = {
        {"call", BD_T0, BD_CALL_RET},                              /* sender's MPI_Isend            */
        {"export", MPIACC_TS_EXPORT_BEGIN, MPIACC_TS_EXPORT_END},  /*   of which export_buf         */
        {"to_rts", BD_T0, MPIACC_TS_RTS_POSTED},                   /*   call entry -> RTS posted    */
        {"rts", MPIACC_TS_RTS_POSTED, MPIACC_TS_RTS_SEEN},         /* RTS delivered to the receiver */
        {"enqueue", MPIACC_TS_RTS_SEEN, MPIACC_TS_LAUNCHED},       /* receiver's copy enqueue:     */
        {"dep", MPIACC_TS_RTS_SEEN, MPIACC_TS_IMPORT_BEGIN},       /*   dependency, state           */
        {"map", MPIACC_TS_IMPORT_BEGIN, MPIACC_TS_MAPPED},         /*   mapping, blobs, plan        */
        {"wait", MPIACC_TS_MAPPED, MPIACC_TS_WAITED},              /*   stream, GPU-side waits      */
        {"launch", MPIACC_TS_WAITED, MPIACC_TS_LAUNCHED},          /*   copy launch + signal/record */
        {"copy_done", MPIACC_TS_LAUNCHED, MPIACC_TS_COPY_DONE},    /* GPU copy + completion seen    */
        {"fin_post", MPIACC_TS_COPY_DONE, MPIACC_TS_FIN_POSTED},   /* FIN posted                    */
        {"fin", MPIACC_TS_FIN_POSTED, MPIACC_TS_FIN_SEEN},         /* FIN delivered to the sender   */
        {"recv_ret", MPIACC_TS_COPY_DONE, BD_RECV_RET},            /* receiver's MPI_Recv returns   */
        {"oneway", BD_T0, BD_RECV_RET},                            /* call -> receive returned      */
        {"send_done", BD_T0, BD_SEND_DONE},                        /* call -> sender's Wait returned */
    };
    printf("# bd %lld %lld %s:", bytes, blk, variant);
    for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++) {
        double m = bd_phase(bd, iters, ph[i].a, ph[i].b);
        if (m < 0) printf(" %s=-", ph[i].name);
        else printf(" %s=%.2f", ph[i].name, m);
    }
    printf("\n");
}

/* What the "# targets:" line needs, collected over the rows. */
typedef struct {
    double k1_worst, k1_def_worst;     /* 1 KiB: slowest direct / default row  */
    int k1_blk, k1_n;
    double m4_worst, m4_host, m4_ratio; /* 4 MiB direct: slowest row, its host */
    int m4_blk, m4_ipc, m4_pipe, m4_n;
    double opens_max;
    int opens_n;
} targets_t;

static void targets_add(targets_t *g, long long bytes, int blk, const pp_t *dir, const pp_t *def, double host)
{
    if (def && bytes == 1024 && def->us > g->k1_def_worst) g->k1_def_worst = def->us;
    if (!dir) return;
    if (dir->opens > g->opens_max || !g->opens_n) g->opens_max = dir->opens;
    g->opens_n++;
    if (bytes == 1024) {
        if (dir->us > g->k1_worst) g->k1_worst = dir->us, g->k1_blk = blk;
        g->k1_n++;
    }
    if (bytes == 4 << 20) {
        if (dir->us > g->m4_worst) g->m4_worst = dir->us, g->m4_host = host, g->m4_blk = blk;
        if (dir->us / host > g->m4_ratio) g->m4_ratio = dir->us / host;
        g->m4_ipc += !strcmp(dir->proto, "IPC");
        g->m4_pipe += !strcmp(dir->proto, "pipelined");
        g->m4_n++;
    }
}

static const char *verdict(int ok) { return ok ? "ok" : "MISSED"; }

static void targets_print(const targets_t *g, int nvar)
{
    if (nvar > 1) printf("# targets (the slowest rows over all %d variants):\n", nvar);
    else printf("# targets:\n");
    if (g->k1_n)
        printf("#   1 KiB direct one-way <= 12 us: slowest block %d B: %.1f us [%s]\n", g->k1_blk, g->k1_worst,
               verdict(g->k1_worst <= 12));
    else
        printf("#   1 KiB direct one-way <= 12 us: not measured (needs --protocols with direct and 1K in --sizes)\n");
    if (g->k1_def_worst > 0) printf("#   (1 KiB default protocol, slowest block: %.1f us)\n", g->k1_def_worst);
    if (!g->m4_n)
        printf("#   4 MiB: not measured (needs direct and 4M in --sizes)\n");
    else if (g->m4_ipc == g->m4_n)
        printf("#   4 MiB IPC <= 40 us and >= 10x faster than host contiguous: slowest block %d B: %.1f us, host "
               "%.1f us (%.1fx faster) [%s]\n",
               g->m4_blk, g->m4_worst, g->m4_host, g->m4_host / g->m4_worst,
               verdict(g->m4_worst <= 40 && g->m4_host >= 10 * g->m4_worst));
    else if (g->m4_pipe == g->m4_n)
        printf("#   4 MiB pipelined (MPIACC_IPC=0) <= 1.10x host contiguous: worst ratio %.2f [%s]\n", g->m4_ratio,
               verdict(g->m4_ratio <= 1.10));
    else
        printf("#   4 MiB: the rows mix protocols (%d IPC, %d pipelined of %d); slowest %.1f us, worst ratio %.2f to "
               "host\n",
               g->m4_ipc, g->m4_pipe, g->m4_n, g->m4_worst, g->m4_ratio);
    if (g->opens_n)
        printf("#   IPC opens per message after warm-up = 0: largest %.2f [%s]\n", g->opens_max,
               verdict(g->opens_max == 0));
}

/* A figure for the table ("-" when not measured: x < 0) and for the CSV
 * (empty when not measured). */
static void fmt_num(char s[32], double x, const char *fmt)
{
    if (x < 0)
        snprintf(s, 32, "-");
    else
        snprintf(s, 32, fmt, x);
}
static void fmt_csv(char s[32], double x)
{
    if (x < 0)
        s[0] = 0;
    else
        snprintf(s, 32, "%.4f", x);
}

int main(int argc, char **argv)
{
    int rank, size, ndev = 0, quick = 0, direct_only = 0, which = 0, iters_opt = 0, nvar = 1;
    int vbits[16];
    char vname[16][64];
    const char *variants = NULL;
    long counts[3];
    long long pitch = 512;
    MPI_Comm dcomm = MPI_COMM_NULL;
    FILE *csv = NULL;
    const char *csvpath = NULL;
    cli_sizes_t sizes = {3, {1 << 10, 1 << 20, 4 << 20}};
    cli_sizes_t blocks = {10, {1, 2, 4, 8, 16, 32, 64, 128, 256, 512}};
    targets_t g = {0};
    cudaStream_t st;
    cli_opt_t opts[] = {
        {"pitch", CLI_SIZE, &pitch, "distance between block starts (bytes)", NULL, 1, 1 << 20},
        {"sizes", CLI_SIZES, &sizes, "packed sizes of the objects (bytes)", NULL, 1, 1LL << 30},
        {"blocks", CLI_SIZES, &blocks, "contiguous block sizes (bytes; a block >= the pitch: a contiguous object)", NULL, 1,
         1LL << 30},
        {"protocols", CLI_CHOICE, &which, "protocols measured against host contiguous",
         "default,direct|default|direct", CLI_ANY},
        {"direct", CLI_FLAG, &direct_only, "the direct protocol only (same as --protocols direct)", NULL, CLI_ANY},
        {"csv", CLI_FILE, &csvpath, "also write the rows to this CSV file", NULL, CLI_ANY},
        {"quick", CLI_FLAG, &quick, "a fifth of the iterations", NULL, CLI_ANY},
        {"iterations", CLI_INT, &iters_opt, "timed round trips per row (0: by size, 500 / 60 / 30)", NULL, 0,
         1000000},
        {"variant", CLI_STRING, &variants,
         "IPC-path variants, each row run once per variant: a comma-separated list of sets, each set names "
         "joined by '+' from base, none, kernel (dense copies by the copy kernel), flag (completion by a "
         "host-mapped flag, cuStreamWriteValue32), capq (capture by cudaStreamQuery), noquery (export without "
         "a dependency query), rows (vectors by cudaMemcpy2DAsync), xflag (flags for staged packs / unpacks "
         "too); base = the library's default",
         NULL, CLI_ANY},
        {"breakdown", CLI_FLAG, &breakdown,
         "per-phase medians of the direct protocol's IPC messages (a '# bd' line under each row: call, "
         "export, rts, enqueue = dep + map + wait + launch, copy_done, fin_post, fin, recv_ret, oneway, "
         "send_done; us)", NULL, CLI_ANY},
    };
    const cli_prog_t prog = {
        "pingpong", "mpiexec -n 2 pingpong [options]",
        "Device-to-device ping-pong of 2D vector objects through mpiacc (CUDA): the default protocol and\n"
        "the direct protocol (eager / IPC / pipelined), against host contiguous ping-pong of the same\n"
        "packed size, same run; IPC handles opened per message after warm-up; issue 12's targets.\n"
        "Issue 23: --variant sweeps the IPC path's variants (src/cuda/cuda_testhooks.h), --breakdown prints\n"
        "the direct protocol's per-phase medians (src/core/tstamp.h) under each row.",
        opts, sizeof opts / sizeof opts[0]};
    cli_parse(&prog, argc, argv);
    if (direct_only) which = 2;
    vbits[0] = mpiacc_cuda_set_ipc_variant(0);
    mpiacc_cuda_set_ipc_variant(vbits[0]);
    snprintf(vname[0], sizeof vname[0], "base");
    if (variants) { /* "a+b,c" */
        char *dup = strdup(variants), *save = NULL;
        nvar = 0;
        for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int b = mpiacc_cuda_ipc_variant_parse(tok);
            if (b < 0 || nvar == 16) {
                fprintf(stderr, "pingpong: --variant: %s '%s'\n", b < 0 ? "unknown name in" : "more than 16 sets at",
                        tok);
                return 2;
            }
            vbits[nvar] = b;
            snprintf(vname[nvar++], sizeof vname[0], "%s", tok);
        }
        free(dup);
        if (!nvar) {
            fprintf(stderr, "pingpong: --variant: no set given\n");
            return 2;
        }
    }
    int run_def = which != 2, run_dir = which != 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (size != 2 || e != cudaSuccess || ndev == 0) {
        if (rank == 0)
            printf("SKIPPED: needs 2 ranks and a CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "ok");
        MPI_Finalize();
        return 0;
    }
    if (run_dir) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
        BENCH_MPI_CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dcomm));
        MPI_Info_free(&info);
        MPI_Comm_set_errhandler(dcomm, MPI_ERRORS_RETURN);
    }
    MPIACC_Direct_counts(&counts[0], &counts[1], &counts[2]);
    CK(cudaSetDevice(rank % ndev));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    if (rank == 0) {
        struct cudaDeviceProp prop;
        const char *ipc = getenv("MPIACC_IPC"), *eager = getenv("MPIACC_EAGER_MAX");
        char what[256];
        CK(cudaGetDeviceProperties(&prop, rank % ndev));
        snprintf(what, sizeof what, "device<->device ping-pong via mpiacc (2D vector, pitch %lld B): %s vs host contiguous",
                 pitch, which == 0 ? "default and direct protocols" : which == 1 ? "default protocol" : "direct protocol");
        bench_header("pingpong", what, "CUDA", prop.name);
        printf("# environment: MPIACC_IPC=%s MPIACC_EAGER_MAX=%s MPIACC_PIPELINE_CHUNK=%s\n", ipc ? ipc : "(unset)",
               eager ? eager : "(unset)", getenv("MPIACC_PIPELINE_CHUNK") ? getenv("MPIACC_PIPELINE_CHUNK") : "(unset)");
        printf("# one-way us (median); opens/msg: CUDA IPC handles opened per message in the timed iterations\n");
        printf("%9s %7s %12s %11s %9s %9s %12s %13s %9s %s\n", "Size (B)", "blk (B)", "default (us)", "direct (us)",
               "protocol", "host (us)", "direct/host", "default/host", "opens/msg", "variant");
        csv = bench_csv_open(csvpath, "bytes,block,default_us,direct_us,direct_protocol,host_us,direct_ratio,"
                                      "default_ratio,ipc_opens_per_msg,ipc_variant");
    }
    if (breakdown) mpiacc_ts_enable(1);
    for (int row = 0; row < nvar * sizes.n * blocks.n; row++) {
        const int vi = row / (sizes.n * blocks.n), si = row / blocks.n % sizes.n, bi = row % blocks.n;
        long long total = sizes.v[si], blk = blocks.v[bi] < total ? blocks.v[bi] : total;
        long long nb = total / blk, packed = nb * blk, p = blk < pitch ? pitch : blk;
        long long span = (nb - 1) * p + blk;
        int iters = iters_opt > 0 ? iters_opt : total <= 65536 ? 500 : total <= (1 << 20) ? 60 : 30;
        MPI_Datatype t;
        char *dbuf, *hbuf;
        pp_t def = {0, NULL, 0}, dir = {0, NULL, 0};
        bd_t bd = {NULL};
        if (quick && iters_opt <= 0) iters = iters / 5 > 3 ? iters / 5 : 3;
        mpiacc_cuda_set_ipc_variant(vbits[vi]); /* between messages, on both ranks */
        if (nb > 2147483647LL || packed > 2147483647LL) continue;
        BENCH_MPI_CHECK(MPI_Type_vector((int)nb, (int)blk, (int)p, MPI_BYTE, &t));
        MPI_Type_commit(&t);
        MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA);
        MPI_Type_set_attr(t, MPIACC_STREAM, (void *)st);
        CK(cudaMalloc((void **)&dbuf, (size_t)span));
        CK(cudaMemset(dbuf, rank, (size_t)span));
        CK(cudaDeviceSynchronize());
        if (!(hbuf = calloc(1, (size_t)packed))) bench_fail(__FILE__, __LINE__, "calloc", "out of memory");
        if (run_def) def = pingpong(rank, MPI_COMM_WORLD, dbuf, 1, t, iters, NULL);
        if (run_dir) {
            protocol_since(counts);
            dir = pingpong(rank, dcomm, dbuf, 1, t, iters, breakdown ? &bd : NULL);
            dir.proto = protocol_since(counts);
        }
        double host = pingpong(rank, MPI_COMM_WORLD, hbuf, (int)packed, MPI_BYTE, iters, NULL).us;
        if (rank == 0) {
            const pp_t *pd = run_def ? &def : NULL, *pr = run_dir ? &dir : NULL;
            char s[5][32], c[5][32];
            fmt_num(s[0], pd ? pd->us : -1, "%.1f");
            fmt_num(s[1], pr ? pr->us : -1, "%.1f");
            fmt_num(s[2], pr ? pr->us / host : -1, "%.2f");
            fmt_num(s[3], pd ? pd->us / host : -1, "%.2f");
            fmt_num(s[4], pr ? pr->opens : -1, "%.2f");
            printf("%9lld %7lld %12s %11s %9s %9.1f %12s %13s %9s %s\n", packed, blk, s[0], s[1],
                   pr ? pr->proto : "-", host, s[2], s[3], s[4], vname[vi]);
            if (bd.v) bd_print(&bd, iters, packed, blk, vname[vi]);
            if (csv) {
                fmt_csv(c[0], pd ? pd->us : -1);
                fmt_csv(c[1], pr ? pr->us : -1);
                fmt_csv(c[2], pr ? pr->us / host : -1);
                fmt_csv(c[3], pd ? pd->us / host : -1);
                fmt_csv(c[4], pr ? pr->opens : -1);
                fprintf(csv, "%lld,%lld,%s,%s,%s,%.3f,%s,%s,%s,%s\n", packed, blk, c[0], c[1],
                        pr ? pr->proto : "", host, c[2], c[3], c[4], vname[vi]);
            }
            targets_add(&g, packed, (int)blk, pr, pd, host);
            fflush(stdout);
        }
        free(bd.v);
        free(hbuf);
        CK(cudaFree(dbuf));
        MPI_Type_free(&t);
    }
    if (rank == 0) targets_print(&g, nvar);
    if (csv) fclose(csv);
    CK(cudaStreamDestroy(st));
    if (dcomm != MPI_COMM_NULL) MPI_Comm_free(&dcomm);
    MPI_Finalize();
    return 0;
}
