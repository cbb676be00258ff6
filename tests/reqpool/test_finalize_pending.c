/* MPI_Finalize with an operation pending returns an MPI_ERR_OTHER-class
 * error and leaves MPI usable; once the operation completes, MPI_Finalize
 * succeeds (2 ranks). */
#include <stdio.h>
#include <string.h>

#include "pool_util.h"

int main(int argc, char **argv)
{
    int rank, err, cls, buf[16] = {0}, bad = 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    atomic_int gate = 0;
    MPI_Request r;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Datatype t = pool_type(16, 0, &gate);
        MPI_Isend(buf, 1, t, 1, 0, MPI_COMM_WORLD, &r);
        MPI_Type_free(&t);
        err = MPI_Finalize();
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
        if (err == MPI_SUCCESS || cls != MPI_ERR_OTHER || !strstr(msg, "pending")) {
            fprintf(stderr, "MPI_Finalize with a pending operation returned %d (class %d): %s\n", err, cls, msg);
            bad = 1;
        }
        atomic_store(&gate, 1);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, 16, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    err = MPI_Finalize();
    if (err != MPI_SUCCESS) bad = 1;
    if (rank == 0) printf("finalize_pending: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
