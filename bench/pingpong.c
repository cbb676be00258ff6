/*
 * bench/pingpong: device-to-device ping-pong of 2D vector objects through
 * mpiacc's public API (TEMPI bench-mpi-pingpong-nd): the datatype is tagged
 * MPIACC_BUF_TYPE=MPIACC_BUF_CUDA + MPIACC_STREAM and MPI_Send / MPI_Recv get
 * device pointers.  Objects of 1 KiB, 1 MiB, 4 MiB packed bytes, blocks 1..512
 * B, pitch 512 B.  Baseline in the same run: host contiguous ping-pong of the
 * same packed size.  One-way time = median round trip / 2.
 * Targets: 1 KiB <= 25 us one-way; 4 MiB <= 1.15x host contiguous.
 * With --direct the ping-pong runs on a duplicate of MPI_COMM_WORLD with the
 * info key mpiacc_direct=true (the direct protocol) and each row names the
 * protocol that carried the device messages (MPIACC_Direct_counts).
 *
 *   mpiexec -n 2 bench/pingpong [--direct] [--csv FILE] [--quick] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "bench.h"
#include "mpiacc.h"

#define CK BENCH_CUDA_CHECK

/* Median one-way time (us) of `iters` round trips of (buf, 1, t). */
static double pingpong(int rank, MPI_Comm comm, void *buf, int count, MPI_Datatype t, int iters)
{
    double *v = malloc(sizeof(double) * (size_t)iters), r;
    int peer = 1 - rank, rc = MPI_SUCCESS;
    for (int i = -2; i < iters; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (rank == 0) {
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
    r = bench_percentile(v, (size_t)iters, 50); /* upper median */
    free(v);
    return r;
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

int main(int argc, char **argv)
{
    int rank, size, ndev = 0, quick = 0, direct = 0;
    long counts[3];
    MPI_Comm comm = MPI_COMM_WORLD;
    FILE *csv = NULL;
    const char *csvpath = NULL;
    const long long totals[] = {1 << 10, 1 << 20, 4 << 20};
    cudaStream_t st;
    cli_opt_t opts[] = {
        {"csv", CLI_FILE, &csvpath, "also write the rows to this CSV file", NULL, CLI_ANY},
        {"quick", CLI_FLAG, &quick, "a fifth of the iterations", NULL, CLI_ANY},
        {"direct", CLI_FLAG, &direct, "the direct protocol (info key mpiacc_direct on a dup of MPI_COMM_WORLD)",
         NULL, CLI_ANY},
    };
    const cli_prog_t prog = {"pingpong", "mpiexec -n 2 pingpong [options]",
                             "Device-to-device ping-pong of 2D vector objects through mpiacc (CUDA), against\n"
                             "host contiguous ping-pong of the same packed size, same run.",
                             opts, sizeof opts / sizeof opts[0]};
    cli_parse(&prog, argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (size != 2 || e != cudaSuccess || ndev == 0) {
        if (rank == 0) printf("SKIPPED: needs 2 ranks and a CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "ok");
        MPI_Finalize();
        return 0;
    }
    if (direct) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
        MPI_Info_free(&info);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }
    MPIACC_Direct_counts(&counts[0], &counts[1], &counts[2]);
    CK(cudaSetDevice(rank % ndev));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    if (rank == 0) {
        struct cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, rank % ndev));
        bench_header("pingpong",
                     direct ? "device<->device ping-pong via mpiacc, direct protocol (2D vector, pitch 512 B) vs host "
                              "contiguous"
                            : "device<->device ping-pong via mpiacc (2D vector, pitch 512 B) vs host contiguous",
                     "CUDA", prop.name);
        printf("%8s %8s %12s %12s %8s %10s\n", "Size (B)", "blk (B)", "mpiacc (us)", "host (us)", "ratio",
               "protocol");
        csv = bench_csv_open(csvpath, "bytes,block,mpiacc_us,host_us,ratio,protocol");
    }
    for (int ti = 0; ti < 3; ti++)
        for (int blk = 1; blk <= 512; blk *= 2) {
            long long nb = totals[ti] / blk, span = (nb - 1) * 512 + blk;
            int iters = ti == 0 ? 500 : ti == 1 ? 60 : 30;
            MPI_Datatype t;
            char *dbuf, *hbuf;
            if (quick) iters /= 5;
            MPI_Type_vector((int)nb, blk, 512, MPI_BYTE, &t);
            MPI_Type_commit(&t);
            MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA);
            MPI_Type_set_attr(t, MPIACC_STREAM, (void *)st);
            CK(cudaMalloc((void **)&dbuf, (size_t)span));
            CK(cudaMemset(dbuf, rank, (size_t)span));
            CK(cudaDeviceSynchronize());
            hbuf = calloc(1, (size_t)totals[ti]);
            double dev = pingpong(rank, comm, dbuf, 1, t, iters);
            const char *proto = protocol_since(counts);
            double host = pingpong(rank, comm, hbuf, (int)totals[ti], MPI_BYTE, iters);
            if (rank == 0) {
                printf("%8lld %8d %12.1f %12.1f %8.2f %10s\n", totals[ti], blk, dev, host, dev / host, proto);
                if (csv)
                    fprintf(csv, "%lld,%d,%.3f,%.3f,%.4f,%s\n", totals[ti], blk, dev, host, dev / host, proto);
                fflush(stdout);
            }
            free(hbuf);
            CK(cudaFree(dbuf));
            MPI_Type_free(&t);
        }
    if (rank == 0) printf("# targets: 1 KiB <= 25 us one-way; 4 MiB ratio <= 1.15\n");
    if (csv) fclose(csv);
    CK(cudaStreamDestroy(st));
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
