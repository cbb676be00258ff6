/*
 * interpose/mprobe.c: MPI_Mrecv and MPI_Imrecv.  A handle mpiacc's
 * MPI_Mprobe / MPI_Improbe returned for a device message on a direct
 * communicator is received by mpiacc (probe.c's
 * mpiacc_interpose_direct_mrecv); every other one goes to MPI.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                                      MPI_Status *status)
{
    int handled, err = mpiacc_interpose_direct_mrecv(buf, count, dt, message, status, NULL, &handled);
    return handled ? err : PMPI_Mrecv(buf, count, dt, message, status);
}

MPIACC_INTERPOSE_EXPORT int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
                                        MPI_Status *status)
{
    int handled, err = mpiacc_interpose_direct_mrecv(buf, count, dt, message, status, NULL, &handled);
    return handled ? err : PMPI_Mrecv_c(buf, count, dt, message, status);
}

MPIACC_INTERPOSE_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                                       MPI_Request *req)
{
    int handled, err = mpiacc_interpose_direct_mrecv(buf, count, dt, message, MPI_STATUS_IGNORE, req, &handled);
    return handled ? err : PMPI_Imrecv(buf, count, dt, message, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
                                         MPI_Request *req)
{
    int handled, err = mpiacc_interpose_direct_mrecv(buf, count, dt, message, MPI_STATUS_IGNORE, req, &handled);
    return handled ? err : PMPI_Imrecv_c(buf, count, dt, message, req);
}
