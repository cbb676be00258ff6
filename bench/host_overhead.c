/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/host_overhead: what mpiacc's interposition costs host traffic
 * (MPI-ACC Fig 3).  2 ranks ping-pong 0 B, 8 B and 1 KiB with plain MPICH
 * (PMPI_Send/PMPI_Recv: exactly MPICH's path) and through mpiacc's MPI_Send /
 * MPI_Recv (no attributes set), in one run, interleaving blocks of both so
 * that drift hits them alike.  Prints median one-way latencies and the ratio.
 * Target: <= 2 % overhead.  With --uva the process sets MPIACC_UVA=1 before
 * MPI_Init: the mpiacc column is then the pointer-query mode's host path
 * (tag check, classification flag, one host-cache load; rows marked "/uva").
 * The cache's lookup alone: bench/uva_lookup.  With --clmem (built with
 * OpenCL) each process first passes one cl_mem to mpiacc with an OpenCL
 * datatype, so that the host path then also checks that its buffer is not
 * a cl_mem mpiacc knows (issue 38: a handle filter load per call; rows
 * marked "/clmem"); without it, that check costs nothing (never armed).
 * With --coll the same
 * comparison for the collectives' host path (8 B MPI_Bcast, MPI_Allreduce,
 * MPI_Gather, MPI_Iallreduce + MPI_Wait: the entry points generated from
 * src/interpose/mpi_calls.txt) instead of the ping-pong.
 *
 *   mpiexec -n 2 bench/host_overhead [--iters N] [--rounds R] [--uva] [--coll] [--csv FILE] [--help]
 * (bind the ranks to cores for stable figures: mpiexec -bind-to core)
 */
#define _POSIX_C_SOURCE 200809L /* setenv, strtok_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "mpiacc.h"
#ifdef HOST_OVERHEAD_OPENCL
#include "ocl_common.h"

/* --clmem: one cl_mem, sent to this process with an OpenCL datatype, so
 * that mpiacc knows it (and checks host buffers against it from now on). */
static int see_clmem(int rank)
{
    static bocl_t b;
    cl_mem m, back;
    MPI_Datatype t;
    if (!bocl_init(&b)) return 0;
    m = bocl_buf(&b, 64);
    back = bocl_buf(&b, 64);
    t = bocl_type(64, NULL);
    MPI_Sendrecv((void *)m, 1, t, rank, 0, (void *)back, 1, t, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    clReleaseMemObject(back); /* m stays alive: the check stays armed */
    return 1;
}
#else
static int see_clmem(int rank)
{
    (void)rank;
    fprintf(stderr, "host_overhead: --clmem needs a build with OpenCL\n");
    return 0;
}
#endif

/* One block of `iters` round trips; returns the one-way latency in us. */
static double block(int plain, char *buf, int count, MPI_Datatype t, int iters, int rank)
{
    double t0;
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            if (plain) {
                PMPI_Send(buf, count, t, peer, 1, MPI_COMM_WORLD);
                PMPI_Recv(buf, count, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(buf, count, t, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, count, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else {
            if (plain) {
                PMPI_Recv(buf, count, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                PMPI_Send(buf, count, t, peer, 1, MPI_COMM_WORLD);
            } else {
                MPI_Recv(buf, count, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, count, t, peer, 1, MPI_COMM_WORLD);
            }
        }
    }
    return (MPI_Wtime() - t0) / iters / 2 * 1e6;
}

/* --coll: the collectives compared, on 2 MPI_INT (8 B). */
static const char *const coll_names[] = {"Bcast", "Allreduce", "Gather", "Iallreduce"};
enum { NCOLL = sizeof coll_names / sizeof coll_names[0] };

/* One block of `iters` calls of collective k; returns the time of one call in us. */
static double coll_block(int plain, int k, int *v, int iters)
{
    double t0;
    MPI_Request rq;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        switch (k) {
        case 0:
            plain ? PMPI_Bcast(v, 2, MPI_INT, 0, MPI_COMM_WORLD) : MPI_Bcast(v, 2, MPI_INT, 0, MPI_COMM_WORLD);
            break;
        case 1:
            plain ? PMPI_Allreduce(v, v + 2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
                  : MPI_Allreduce(v, v + 2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            break;
        case 2:
            plain ? PMPI_Gather(v, 2, MPI_INT, v + 4, 2, MPI_INT, 0, MPI_COMM_WORLD)
                  : MPI_Gather(v, 2, MPI_INT, v + 4, 2, MPI_INT, 0, MPI_COMM_WORLD);
            break;
        default:
            if (plain) {
                PMPI_Iallreduce(v, v + 2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
                PMPI_Wait(&rq, MPI_STATUS_IGNORE);
            } else {
                MPI_Iallreduce(v, v + 2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            }
        }
    }
    return (MPI_Wtime() - t0) / iters * 1e6;
}

/* One block of case c: a ping-pong of count elements of t, or (coll) collective c. */
static double run_block(int coll, int plain, size_t c, char *buf, int count, MPI_Datatype t, int iters, int rank)
{
    static int v[8];
    return coll ? coll_block(plain, (int)c, v, iters) : block(plain, buf, count, t, iters, rank);
}

int main(int argc, char **argv)
{
    int rank, nranks, iters = 2000, rounds = 101, uva = 0, coll = 0, clmem = 0;
    const char *csv = NULL;
    /* bytes, and whether to send them as one element of a derived (untagged)
     * datatype, which takes the attribute lookup instead of the shortcut
     * predefined datatypes get */
    /* the last two rows run after an unrelated datatype was tagged, so that
     * derived datatypes take the attribute lookup */
    const struct { int bytes, derived, tagged; } cases[] = {{0, 0, 0}, {8, 0, 0}, {1024, 0, 0}, {8, 1, 0},
                                                            {1024, 1, 0}, {8, 1, 1}, {1024, 1, 1}};
    MPI_Datatype dummy;
    char buf[1024] = {0};
    FILE *f = NULL;
    cli_opt_t opts[] = {
        {"iters", CLI_INT, &iters, "round trips per block (warm-up: iters/4)", NULL, 4, 1e9},
        {"rounds", CLI_INT, &rounds, "rounds (pairs of blocks)", NULL, 1, 1e6},
        CLI_OPT_CSV(&csv),
        {"uva", CLI_FLAG, &uva, "run mpiacc in pointer-query mode (sets MPIACC_UVA=1 before MPI_Init)", NULL, CLI_ANY},
        {"coll", CLI_FLAG, &coll, "compare 8 B collectives (Bcast, Allreduce, Gather, Iallreduce+Wait) instead", NULL,
         CLI_ANY},
        {"clmem", CLI_FLAG, &clmem, "pass one cl_mem to mpiacc first: host calls then check for cl_mem (OpenCL)",
         NULL, CLI_ANY},
    };
    CLI_PARSE(argc, argv, "host_overhead", "mpiexec -n 2 host_overhead [options]",
              "Cost of mpiacc's interposition on host ping-pong (MPI-ACC Fig 3): plain MPICH\n"
              "(PMPI_*) against mpiacc's MPI_Send/MPI_Recv, one-way latency, same run;\n"
              "--coll: the same for 8 B host collectives (time per call).", opts);
    if (uva) setenv("MPIACC_UVA", "1", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) {
        if (rank == 0) fprintf(stderr, "host_overhead needs exactly 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    if (clmem && !see_clmem(rank)) {
        if (rank == 0) printf("SKIPPED: --clmem: no OpenCL device\n");
        MPI_Finalize();
        return 77;
    }
    if (rank == 0) {
        bench_header("host_overhead", "host ping-pong, plain MPICH vs mpiacc interposition", "host", "-");
        printf("# %s: %d rounds, each one block of %d %s with plain MPICH\n"
               "# and one through mpiacc, in alternating order; medians over rounds, and the median of the\n"
               "# per-round ratios (paired, so drift between rounds cancels)\n",
               coll ? "time per collective call" : "one-way latency", rounds, iters, coll ? "calls" : "round trips");
        if (clmem)
            printf("# a cl_mem was passed to mpiacc first: every host call checks it is not one (handle filter)\n");
        if (uva)
            printf("# mpiacc in pointer-query mode (MPIACC_UVA=1): untagged buffers are classified, host answers\n"
                   "# cached per 4 KiB granule; MPIX_Query_cuda_support() = %d\n", MPIX_Query_cuda_support());
        printf("%8s %-12s %14s %14s %12s\n", "Size (B)", "datatype", "MPICH (us)", "mpiacc (us)", "overhead");
        f = bench_csv_open(csv, "bytes,datatype,plain_us,mpiacc_us,median_ratio");
    }
    for (size_t c = 0; c < (coll ? NCOLL : sizeof cases / sizeof cases[0]); c++) {
        double *tp = malloc(sizeof(double) * rounds), *tm = malloc(sizeof(double) * rounds);
        double *ratio = malloc(sizeof(double) * rounds);
        MPI_Datatype t = MPI_BYTE;
        int count = cases[c].bytes;
        if (!coll && cases[c].tagged && (c == 0 || !cases[c - 1].tagged)) {
            MPI_Type_contiguous(4, MPI_INT, &dummy);
            MPI_Type_commit(&dummy);
            MPI_Type_set_attr(dummy, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
        }
        if (!coll && cases[c].derived) {
            MPI_Type_contiguous(cases[c].bytes, MPI_BYTE, &t);
            MPI_Type_commit(&t);
            count = 1;
        }
        run_block(coll, 1, c, buf, count, t, iters / 4, rank); /* warm-up */
        run_block(coll, 0, c, buf, count, t, iters / 4, rank);
        for (int r = 0; r < rounds; r++) {
            if (r % 2) {
                tp[r] = run_block(coll, 1, c, buf, count, t, iters, rank);
                tm[r] = run_block(coll, 0, c, buf, count, t, iters, rank);
            } else {
                tm[r] = run_block(coll, 0, c, buf, count, t, iters, rank);
                tp[r] = run_block(coll, 1, c, buf, count, t, iters, rank);
            }
            ratio[r] = tm[r] / tp[r];
        }
        /* upper median (the middle value for the default odd rounds) */
        double mp = bench_percentile(tp, rounds, 50), mm = bench_percentile(tm, rounds, 50);
        double mr = bench_percentile(ratio, rounds, 50);
        if (rank == 0) {
            char dt[32];
            int bytes = coll ? 8 : cases[c].bytes;
            snprintf(dt, sizeof dt, "%s%s%s",
                     coll             ? coll_names[c]
                     : cases[c].tagged ? "derived*"
                     : cases[c].derived ? "derived"
                                        : "MPI_BYTE",
                     uva ? "/uva" : "", clmem ? "/clmem" : "");
            printf("%8d %-12s %14.3f %14.3f %+11.2f%%\n", bytes, dt, mp, mm, (mr - 1) * 100);
            if (f) fprintf(f, "%d,%s,%.4f,%.4f,%.4f\n", bytes, dt, mp, mm, mr);
        }
        if (!coll && cases[c].derived) MPI_Type_free(&t);
        free(tp);
        free(tm);
        free(ratio);
    }
    if (rank == 0 && !coll)
        printf("# derived*: after another datatype was tagged with MPIACC_BUF_TYPE (attribute lookup)\n");
    if (f) fclose(f);
    if (!coll) MPI_Type_free(&dummy);
    MPI_Finalize();
    return 0;
}
