/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * MPI_Request_free on a pooled receive that is never matched, then
 * MPI_Finalize: it succeeds (as with plain MPI) and does not take long; the
 * receive is cancelled and reported.  Also a freed send that completes.
 * (2 ranks.)
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pool_util.h"

int main(int argc, char **argv)
{
    int rank, bad = 0, buf[16], err;
    atomic_int gate = 1;
    MPI_Request r;
    MPI_Datatype t;
    struct timespec t0, t1;
    double secs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    t = pool_type(16, 0, &gate);
    fill_ints(buf, 16, rank);
    if (rank == 1) {
        MPI_Irecv(buf, 1, t, 0, 42, MPI_COMM_WORLD, &r); /* nobody sends tag 42 */
        MPI_Request_free(&r);
    } else {
        MPI_Isend(buf, 1, t, 1, 1, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
    }
    if (rank == 1) MPI_Recv(buf, 16, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    err = MPI_Finalize();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (err != MPI_SUCCESS) bad = 1;
    if (secs > 5) bad = 1;
    if (rank == 1 && mpiacc_rp_last_finalize.cancelled != 1) bad = 1;
    printf("rank %d request_free: %s (MPI_Finalize returned %d after %.2f s, %d cancelled)\n", rank,
           bad ? "FAILED" : "ok", err, secs, mpiacc_rp_last_finalize.cancelled);
    return bad;
}
