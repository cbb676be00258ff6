/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/pingpong: CUDA device-to-device ping-pong through mpiacc, as a user
 * gets it with nothing set (no MPIACC_* variable), against baselines
 * measured in the same run:
 *   plain   a plain CUDA-aware program on the same transport: device
 *           pointers handed straight to PMPI_Send / PMPI_Recv as MPI_BYTE,
 *           bypassing mpiacc (only where MPI's transport takes device
 *           memory: mpiacc's decision at MPI_Init, printed in the header;
 *           elsewhere MPI would crash, so the column says "-");
 *   host    host contiguous ping-pong of the same bytes (MPI alone).
 * Contiguous rows (--sizes): mpiacc's contiguous device datatype (tagged
 * MPIACC_BUF_CUDA), its ratios to plain (the issue-29 target: <= 0.90x
 * Intel MPI, whose figures plain approaches) and to host.  Vector rows
 * (--vec-sizes x --blocks): a vector of `block`-byte blocks at a pitch of
 * twice the block, the same payload, against mpiacc's contiguous row of
 * that payload (target: <= 1.5x).  The path column says how mpiacc carried
 * the timed messages (MPIACC_Get_stats: "MPI" = handed to MPI as they are,
 * "device" = device staging, "staged" = through host memory).
 *   uva     with --uva (or MPIACC_UVA=1 in the environment; contiguous rows): the
 *           plain program's calls (untagged device pointers as MPI_BYTE)
 *           through mpiacc's MPI_Send / MPI_Recv, classified by pointer
 *           query: an unmodified CUDA-aware program (issue 37's target:
 *           <= 1.05x plain); --breakdown gives its phases too.
 *   persist with --persistent: the same messages through persistent requests
 *           (MPI_Send_init / MPI_Recv_init once, MPI_Start + MPI_Wait each
 *           message), mpiacc's (tagged datatype) and, for contiguous rows,
 *           the plain program's (PMPI_Send_init_c / PMPI_Recv_init_c of the
 *           device bytes, pplain): issue 37's "MPI_Start costs about what a
 *           plain start does".
 * One-way time = median round trip / 2, after two warm-up round trips.
 *
 *   mpiexec -n 2 bench/pingpong [--sizes LIST] [--vec-sizes LIST]
 *       [--blocks LIST] [--stream nonblocking|default] [--iterations N]
 *       [--quick] [--uva] [--persistent] [--breakdown] [--csv FILE]
 * Ranks use CUDA device rank % devices (two GPUs: one each; one GPU: both
 * ranks on it, which wants the CUDA MPS daemon).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "bench.h"
#include "breakdown.h"
#include "cuda_skip.h"
#include "core/env.h"
#include "engine/engine.h"
#include "mpiacc.h"

#define CK BENCH_CUDA_CHECK

static int rank;
static int iters_opt, quick, breakdown, persistent;
static double plain_call_us[2]; /* --breakdown: median PMPI_Send_c, PMPI_Recv_c call of the last plain run */

enum { VIA_MPIACC, VIA_PLAIN, VIA_PERSIST, VIA_PLAIN_PERSIST };

static int iterations(long long bytes)
{
    int n = iters_opt > 0 ? iters_opt : bytes <= 65536 ? 1000 : bytes <= (1 << 20) ? 200 : 100;
    if (quick && iters_opt <= 0) n = n / 5 > 3 ? n / 5 : 3;
    return n;
}

/* One message of a persistent ping-pong: start r, then wait for it
 * (mpiacc's calls, or MPI's own for the plain program).  Separate
 * statements: the operands of | are unsequenced in C. */
static int start_wait(int via, MPI_Request *r)
{
    int rc;
    if (via == VIA_PLAIN_PERSIST) {
        rc = PMPI_Start(r);
        rc |= PMPI_Wait(r, MPI_STATUS_IGNORE);
    } else {
        rc = MPI_Start(r);
        rc |= MPI_Wait(r, MPI_STATUS_IGNORE);
    }
    return rc;
}

/* Median one-way time (us) of round trips of (buf, count, t), through
 * mpiacc's MPI_Send / MPI_Recv or straight to PMPI (plain), or through
 * persistent requests made once (mpiacc's, or MPI's own: plain). */
static double pingpong(int via, void *buf, MPI_Count count, MPI_Datatype t, int iters)
{
    double *v = malloc(sizeof(double) * (size_t)iters), us;
    double *pc = calloc((size_t)iters * 2, sizeof(double)); /* plain: send, recv call times */
    int peer = 1 - rank, rc = MPI_SUCCESS;
    MPI_Request sr = MPI_REQUEST_NULL, rr = MPI_REQUEST_NULL;
    if (!v || !pc) bench_fail(__FILE__, __LINE__, "malloc", "out of memory");
    if (via == VIA_PERSIST) {
        BENCH_MPI_CHECK(MPI_Send_init_c(buf, count, t, peer, 7, MPI_COMM_WORLD, &sr));
        BENCH_MPI_CHECK(MPI_Recv_init_c(buf, count, t, peer, 7, MPI_COMM_WORLD, &rr));
    } else if (via == VIA_PLAIN_PERSIST) {
        BENCH_MPI_CHECK(PMPI_Send_init_c(buf, count, t, peer, 7, MPI_COMM_WORLD, &sr));
        BENCH_MPI_CHECK(PMPI_Recv_init_c(buf, count, t, peer, 7, MPI_COMM_WORLD, &rr));
    }
    for (int i = -2; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), t1, t2;
        if (via == VIA_PERSIST || via == VIA_PLAIN_PERSIST) {
            /* rank 0 sends first, rank 1 receives first (in this order) */
            rc |= start_wait(via, rank == 0 ? &sr : &rr);
            rc |= start_wait(via, rank == 0 ? &rr : &sr);
        } else if (via == VIA_PLAIN) {
            if (rank == 0) {
                rc |= PMPI_Send_c(buf, count, t, peer, 7, MPI_COMM_WORLD);
                t1 = MPI_Wtime();
                rc |= PMPI_Recv_c(buf, count, t, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t2 = MPI_Wtime();
                if (i >= 0) pc[i] = t1 - t0, pc[iters + i] = t2 - t1;
            } else {
                rc |= PMPI_Recv_c(buf, count, t, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                rc |= PMPI_Send_c(buf, count, t, peer, 7, MPI_COMM_WORLD);
            }
        } else if (rank == 0) {
            rc |= MPI_Send_c(buf, count, t, peer, 7, MPI_COMM_WORLD);
            rc |= MPI_Recv_c(buf, count, t, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            rc |= MPI_Recv_c(buf, count, t, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rc |= MPI_Send_c(buf, count, t, peer, 7, MPI_COMM_WORLD);
        }
        if (i >= 0) v[i] = (MPI_Wtime() - t0) * 1e6 / 2;
    }
    if (sr != MPI_REQUEST_NULL) rc |= via == VIA_PLAIN_PERSIST ? PMPI_Request_free(&sr) : MPI_Request_free(&sr);
    if (rr != MPI_REQUEST_NULL) rc |= via == VIA_PLAIN_PERSIST ? PMPI_Request_free(&rr) : MPI_Request_free(&rr);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "bench/pingpong: an MPI call failed on rank %d\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    us = bench_percentile(v, (size_t)iters, 50);
    if (via == VIA_PLAIN && rank == 0) {
        plain_call_us[0] = 1e6 * bench_percentile(pc, (size_t)iters, 50);
        plain_call_us[1] = 1e6 * bench_percentile(pc + iters, (size_t)iters, 50);
    }
    free(v);
    free(pc);
    return us;
}

/* How mpiacc carried this rank's CUDA sends since *before (updated):
 * the MPIACC_Stats column that grew, "mixed" when several did. */
static const char *path_since(unsigned long long before[MPIACC_STATS_PROTOCOLS])
{
    static char name[16];
    MPIACC_Stats st = {.size = sizeof st};
    int n = 0;
    snprintf(name, sizeof name, "?");
    if (MPIACC_Get_stats(&st) != MPI_SUCCESS) return name;
    for (int p = 0; p < MPIACC_STATS_PROTOCOLS; p++) {
        unsigned long long now = st.sends[2][p]; /* row 2: MPIACC_BUF_CUDA */
        if (now > before[p]) snprintf(name, sizeof name, "%s", n++ ? "mixed" : st.protocol[p]);
        before[p] = now;
    }
    return name;
}

/* A device buffer of `span` bytes on this rank's device, filled. */
static char *dev_buf(long long span)
{
    char *p;
    CK(cudaMalloc((void **)&p, (size_t)span));
    CK(cudaMemset(p, rank + 1, (size_t)span));
    CK(cudaDeviceSynchronize());
    return p;
}

static void fmt(char s[32], double x, const char *f)
{
    if (x < 0) snprintf(s, 32, "-");
    else snprintf(s, 32, f, x);
}

static void csv_num(char s[32], double x)
{
    if (x < 0) s[0] = 0;
    else snprintf(s, 32, "%.4f", x);
}

int main(int argc, char **argv)
{
    int ndev = 0, stream_kind = 0, plain_ok, uva = 0;
    cli_sizes_t sizes = {4, {1 << 10, 64 << 10, 1 << 20, 4 << 20}};
    cli_sizes_t vsizes = {2, {1 << 10, 4 << 20}};
    cli_sizes_t blocks = {3, {8, 64, 512}};
    const char *csvpath = NULL, *bdcsvpath = NULL;
    FILE *csv = NULL, *bdcsv = NULL;
    unsigned long long before[MPIACC_STATS_PROTOCOLS] = {0};
    double contig_us[CLI_SIZES_MAX];
    cudaStream_t st = NULL;
    cli_opt_t opts[] = {
        {"sizes", CLI_SIZES, &sizes, "contiguous message sizes (bytes)", NULL, 1, 1LL << 31},
        {"vec-sizes", CLI_SIZES, &vsizes, "payloads of the vector rows (bytes; each also measured contiguous)", NULL, 1,
         1LL << 31},
        {"blocks", CLI_SIZES, &blocks, "block sizes of the vector rows (bytes; pitch: twice the block)", NULL, 1,
         1LL << 20},
        {"stream", CLI_CHOICE, &stream_kind,
         "the datatype's MPIACC_STREAM: an idle non-blocking stream, or none (the default-stream dependency)",
         "nonblocking|default", CLI_ANY},
        {"iterations", CLI_INT, &iters_opt, "timed round trips per measurement (0: 1000 / 200 / 100 by size)", NULL, 0,
         1000000},
        {"quick", CLI_FLAG, &quick, "a fifth of the iterations", NULL, CLI_ANY},
        {"breakdown", CLI_FLAG, &breakdown,
         "after each row, the median time of each phase of mpiacc's messages on rank 0, send and receive side "
         "(call: attr, check, dep, post, wait, call; pooled op: time in each state and in launches), and the plain "
         "program's PMPI call times",
         NULL, CLI_ANY},
        {"uva", CLI_FLAG, &uva,
         "also the plain program's calls through mpiacc in pointer-query mode (sets MPIACC_UVA=1 before MPI_Init)",
         NULL, CLI_ANY},
        {"persistent", CLI_FLAG, &persistent,
         "also the messages through persistent requests (MPI_Send_init / MPI_Recv_init, MPI_Start + MPI_Wait): "
         "mpiacc's, and the plain program's on contiguous rows",
         NULL, CLI_ANY},
        {"breakdown-csv", CLI_FILE, &bdcsvpath, "write --breakdown's medians to this CSV file", NULL, CLI_ANY},
        CLI_OPT_CSV(&csvpath),
    };
    CLI_PARSE(argc, argv, 
              "pingpong", "mpiexec -n 2 pingpong [options]",
              "CUDA device-to-device ping-pong through mpiacc with nothing set, one-way microseconds (median),\n"
              "against a plain CUDA-aware program on the same MPI transport (device pointers straight to MPI,\n"
              "without mpiacc) and host contiguous ping-pong, measured in the same run; vectors of small blocks\n"
              "against the contiguous message of the same payload.  The header says whether MPI's transport takes\n"
              "device memory (e.g. MPICH on a CUDA-enabled UCX: mpiacc-run, or LD_LIBRARY_PATH=<libucx-cu13 lib>\n"
              "MPIR_CVAR_CH4_NETMOD=ucx MPIR_CVAR_NOLOCAL=1) and why; without it mpiacc stages through host memory\n"
              "and the plain column is not measured.  With --uva (MPIACC_UVA=1) a uva column: the plain\n"
              "program's calls through mpiacc (pointer-query mode).  Two ranks; one GPU each, or both on one GPU\n"
              "(use MPS).", opts);
    if (uva) setenv("MPIACC_UVA", "1", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (bench_cuda_skip(2, &ndev)) {
        MPI_Finalize();
        return 0;
    }
    CK(cudaSetDevice(rank % ndev));
    if (stream_kind == 0) CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    plain_ok = mpiacc_engine_mpi.takes(MPIACC_KIND_CUDA);
    uva = mpiacc_env_bool("MPIACC_UVA"); /* --uva, or set by the caller (mpiacc's own parser) */
    if (rank == 0) {
        struct cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, 0));
        bench_header("pingpong", "CUDA device ping-pong through mpiacc vs a plain CUDA-aware program and host",
                     "CUDA", prop.name);
        printf("# transport: %s\n", mpiacc_engine_mpi.reason());
        printf("# devices: %d, ranks on devices %d and %d; MPIACC_STREAM: %s\n", ndev, 0, 1 % ndev,
               stream_kind == 0 ? "an idle non-blocking stream" : "not set (the default-stream dependency)");
        printf("# one-way us (median); path: how mpiacc carried the sends (MPIACC_Get_stats)%s\n",
               uva ? "; uva: the plain program's calls through mpiacc (MPIACC_UVA=1)" : "");
        printf("%-6s %10s %7s %12s %10s %9s %11s %10s %12s %-7s", "kind", "Size (B)", "blk (B)", "mpiacc (us)",
               "plain (us)", "host (us)", "mpiacc/plain", "mpiacc/host", "vec/contig", "path");
        if (uva) printf(" %9s %10s", "uva (us)", "uva/plain");
        if (persistent) printf(" %12s %11s %14s", "persist (us)", "pplain (us)", "persist/pplain");
        printf("\n");
        csv = bench_csv_open(csvpath, "kind,bytes,block,mpiacc_us,plain_us,host_us,mpiacc_plain,mpiacc_host,"
                                      "vec_contig,path,uva_us,uva_plain,persist_us,pplain_us,persist_pplain");
        if (breakdown) bdcsv = bench_csv_open(bdcsvpath, breakdown_csv_header());
    }
    for (int i = 0; i < vsizes.n; i++) contig_us[i] = -1;
    /* contiguous rows, then vector rows (their contiguous baseline first when not in --sizes) */
    for (int pass = 0; pass < 2; pass++) {
        int nrow = pass == 0 ? sizes.n : vsizes.n * blocks.n;
        for (int row = 0; row < nrow; row++) {
            long long bytes = pass == 0 ? sizes.v[row] : vsizes.v[row / blocks.n];
            long long blk = pass == 0 ? bytes : blocks.v[row % blocks.n];
            long long nb, span;
            int iters = iterations(bytes);
            double us, plain = -1, host, vc = -1, uus = -1, pus = -1, ppus = -1;
            const char *path;
            MPI_Datatype t;
            char *dbuf, *hbuf;
            if (blk > bytes) blk = bytes;
            nb = bytes / blk;
            bytes = nb * blk;
            span = pass == 0 ? bytes : (nb - 1) * 2 * blk + blk;
            if (pass == 0) BENCH_MPI_CHECK(MPI_Type_contiguous_c(bytes, MPI_BYTE, &t));
            else BENCH_MPI_CHECK(MPI_Type_vector_c(nb, blk, 2 * blk, MPI_BYTE, &t));
            BENCH_MPI_CHECK(MPI_Type_commit(&t));
            MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA);
            if (st) MPI_Type_set_attr(t, MPIACC_STREAM, (void *)st);
            dbuf = dev_buf(span);
            if (!(hbuf = calloc(1, (size_t)bytes))) bench_fail(__FILE__, __LINE__, "calloc", "out of memory");
            path_since(before);
            if (breakdown && !breakdown_start(8L * iters + 64))
                bench_fail(__FILE__, __LINE__, "breakdown_start", "out of memory");
            us = pingpong(VIA_MPIACC, dbuf, 1, t, iters);
            if (breakdown) {
                char label[64];
                snprintf(label, sizeof label, "%s/%lld/%lld", pass ? "vector" : "contig", bytes, blk);
                breakdown_report(label, bdcsv, rank == 0);
            }
            path = path_since(before);
            if (pass == 0 && plain_ok) plain = pingpong(VIA_PLAIN, dbuf, bytes, MPI_BYTE, iters);
            if (pass == 0 && uva) {
                if (breakdown && !breakdown_start(8L * iters + 64))
                    bench_fail(__FILE__, __LINE__, "breakdown_start", "out of memory");
                uus = pingpong(VIA_MPIACC, dbuf, bytes, MPI_BYTE, iters);
                if (breakdown) {
                    char label[64];
                    snprintf(label, sizeof label, "uva/%lld/%lld", bytes, blk);
                    breakdown_report(label, bdcsv, rank == 0);
                }
            }
            if (persistent) {
                pus = pingpong(VIA_PERSIST, dbuf, 1, t, iters);
                path_since(before);
                if (pass == 0 && plain_ok) ppus = pingpong(VIA_PLAIN_PERSIST, dbuf, bytes, MPI_BYTE, iters);
            }
            host = pingpong(VIA_MPIACC, hbuf, bytes, MPI_BYTE, iters);
            if (pass == 0) {
                for (int v = 0; v < vsizes.n; v++)
                    if (vsizes.v[v] == bytes) contig_us[v] = us;
            } else {
                int v = row / blocks.n;
                if (contig_us[v] < 0) { /* the contiguous message of this payload, once */
                    MPI_Datatype c;
                    BENCH_MPI_CHECK(MPI_Type_contiguous_c(bytes, MPI_BYTE, &c));
                    BENCH_MPI_CHECK(MPI_Type_commit(&c));
                    MPI_Type_set_attr(c, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA);
                    if (st) MPI_Type_set_attr(c, MPIACC_STREAM, (void *)st);
                    contig_us[v] = pingpong(VIA_MPIACC, dbuf, 1, c, iters);
                    path_since(before);
                    MPI_Type_free(&c);
                }
                vc = us / contig_us[v];
            }
            if (rank == 0) {
                char s[4][32], c[6][32];
                fmt(s[0], plain, "%.2f");
                fmt(s[1], plain > 0 ? us / plain : -1, "%.2f");
                fmt(s[2], vc, "%.2f");
                printf("%-6s %10lld %7lld %12.2f %10s %9.2f %11s %10.2f %12s %-7s", pass ? "vector" : "contig", bytes,
                       blk, us, s[0], host, s[1], us / host, s[2], path);
                if (uva) {
                    fmt(s[0], uus, "%.2f");
                    fmt(s[1], uus > 0 && plain > 0 ? uus / plain : -1, "%.2f");
                    printf(" %9s %10s", s[0], s[1]);
                }
                if (persistent) {
                    fmt(s[0], pus, "%.2f");
                    fmt(s[1], ppus, "%.2f");
                    fmt(s[2], pus > 0 && ppus > 0 ? pus / ppus : -1, "%.2f");
                    printf(" %12s %11s %14s", s[0], s[1], s[2]);
                }
                printf("\n");
                if (breakdown && plain > 0)
                    printf("#   plain PMPI calls on rank 0: send %.2f us, receive %.2f us (median)\n", plain_call_us[0],
                           plain_call_us[1]);
                if (csv) {
                    csv_num(c[0], plain);
                    csv_num(c[1], plain > 0 ? us / plain : -1);
                    csv_num(c[2], vc);
                    csv_num(c[3], uus);
                    csv_num(c[4], uus > 0 && plain > 0 ? uus / plain : -1);
                    csv_num(c[5], pus);
                    fprintf(csv, "%s,%lld,%lld,%.4f,%s,%.4f,%s,%.4f,%s,%s,%s,%s,%s,", pass ? "vector" : "contig", bytes,
                            blk, us, c[0], host, c[1], us / host, c[2], path, c[3], c[4], c[5]);
                    csv_num(c[5], ppus);
                    csv_num(c[0], pus > 0 && ppus > 0 ? pus / ppus : -1);
                    fprintf(csv, "%s,%s\n", c[5], c[0]);
                }
                fflush(stdout);
            }
            free(hbuf);
            CK(cudaFree(dbuf));
            MPI_Type_free(&t);
        }
    }
    if (rank == 0) {
        printf("# targets (issue 29): contiguous mpiacc <= 0.90x Intel MPI at 1 KiB, 64 KiB, 1 MiB, 4 MiB (Intel MPI is "
               "not run here: compare with scripts/clients/imb.sh); vectors of 8, 64, 512 B blocks <= 1.5x contiguous "
               "of the same payload (vec/contig)\n");
        if (!plain_ok) printf("# plain: not measured (MPI's transport does not take device memory here)\n");
    }
    if (csv) fclose(csv);
    if (bdcsv) fclose(bdcsv);
    if (st) CK(cudaStreamDestroy(st));
    MPI_Finalize();
    return 0;
}
