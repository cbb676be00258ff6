/* SPDX-License-Identifier: BSD-3-Clause */
/* A program that knows nothing of mpiacc (linked with MPI only): run by
 * mpiacc-run, its MPI_Init is mpiacc's, which MPIACC_LOG=info reports.
 * Prints "plain_mpi: rank N ran" (the install test checks that it did not
 * run when preloading fails). */
#include <stdio.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) x = 7;
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    printf("plain_mpi: rank %d ran\n", rank);
    MPI_Finalize();
    return x == 7 ? 0 : 1;
}
