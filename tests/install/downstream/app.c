/* SPDX-License-Identifier: BSD-3-Clause */
/* A downstream program: uses the installed header and library; exits 1
 * unless mpiacc's MPI_Init ran (its keyvals exist). */
#include <stdio.h>

#include <mpiacc.h>

int main(int argc, char **argv)
{
    int major, minor, rank, x = 0, err = 0;
    MPI_Datatype t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPIACC_Get_version(&major, &minor);
    if (MPIACC_BUF_TYPE == MPI_KEYVAL_INVALID) err = 1; /* interposed MPI_Init ran */
    MPI_Type_contiguous(1, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    if (rank == 0) {
        x = 42;
        MPI_Send(&x, 1, t, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(&x, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (x != 42) err = 1;
    }
    MPI_Type_free(&t);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("app: mpiacc %d.%d %s\n", major, minor, err ? "FAILED" : "ok");
    MPI_Finalize();
    return err;
}
