/*
 * interpose/mprobe.c: MPI_Mrecv and MPI_Imrecv (int and MPI_Count forms).
 * An untagged datatype goes to MPI; otherwise mpiacc_dispatch_mrecv
 * (src/dispatch/mrecv.c): the direct protocol's hook first (messages
 * probed on direct communicators), else the default protocol's staged
 * receive of the matched message.  The probe calls themselves
 * (MPI_Mprobe, MPI_Improbe) are in probe.c.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Mrecv(buf, count, dt, msg, status);
    return mpiacc_dispatch_mrecv(buf, count, dt, msg, status, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Imrecv(buf, count, dt, msg, req);
    return mpiacc_dispatch_mrecv(buf, count, dt, msg, NULL, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Mrecv_c(buf, count, dt, msg, status);
    return mpiacc_dispatch_mrecv(buf, count, dt, msg, status, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return PMPI_Imrecv_c(buf, count, dt, msg, req);
    return mpiacc_dispatch_mrecv(buf, count, dt, msg, NULL, 1, req);
}
