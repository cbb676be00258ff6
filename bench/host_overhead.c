/*
 * bench/host_overhead: what mpiacc's interposition costs host traffic
 * (MPI-ACC Fig 3).  2 ranks ping-pong 0 B, 8 B and 1 KiB with plain MPICH
 * (PMPI_Send/PMPI_Recv: exactly MPICH's path) and through mpiacc's MPI_Send /
 * MPI_Recv (no attributes set), in one run, interleaving blocks of both so
 * that drift hits them alike.  Prints median one-way latencies and the ratio.
 * Target: <= 2 % overhead.
 *
 *   mpiexec -n 2 bench/host_overhead [--iters N] [--rounds R] [--csv FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One block of `iters` round trips; returns the one-way latency in us. */
static double block(int plain, char *buf, int bytes, int iters, int rank)
{
    double t0;
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            if (plain) {
                PMPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                PMPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else {
            if (plain) {
                PMPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                PMPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
    }
    return (MPI_Wtime() - t0) / iters / 2 * 1e6;
}

int main(int argc, char **argv)
{
    int rank, nranks, iters = 20000, rounds = 21;
    const char *csv = NULL;
    const int sizes[] = {0, 8, 1024};
    char buf[1024] = {0};
    FILE *f = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    }
    if (nranks != 2) {
        if (rank == 0) fprintf(stderr, "host_overhead needs exactly 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    if (rank == 0) {
        printf("host ping-pong, one-way latency (median of %d interleaved blocks of %d round trips)\n", rounds,
               iters);
        printf("%8s %14s %14s %10s\n", "bytes", "plain MPICH us", "mpiacc us", "ratio");
        if (csv && (f = fopen(csv, "w"))) fprintf(f, "bytes,plain_us,mpiacc_us,ratio\n");
    }
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        double *tp = malloc(sizeof(double) * rounds), *tm = malloc(sizeof(double) * rounds);
        block(1, buf, sizes[s], iters / 10, rank); /* warm-up */
        block(0, buf, sizes[s], iters / 10, rank);
        for (int r = 0; r < rounds; r++) {
            /* alternate which goes first */
            if (r % 2) {
                tp[r] = block(1, buf, sizes[s], iters, rank);
                tm[r] = block(0, buf, sizes[s], iters, rank);
            } else {
                tm[r] = block(0, buf, sizes[s], iters, rank);
                tp[r] = block(1, buf, sizes[s], iters, rank);
            }
        }
        qsort(tp, rounds, sizeof(double), cmp_double);
        qsort(tm, rounds, sizeof(double), cmp_double);
        if (rank == 0) {
            double p = tp[rounds / 2], m = tm[rounds / 2];
            printf("%8d %14.3f %14.3f %9.2f%%\n", sizes[s], p, m, (m / p - 1) * 100);
            if (f) fprintf(f, "%d,%.4f,%.4f,%.4f\n", sizes[s], p, m, m / p);
        }
        free(tp);
        free(tm);
    }
    if (f) fclose(f);
    MPI_Finalize();
    return 0;
}
