/*
 * interpose/pack.c: MPI_Pack / MPI_Unpack (int and MPI_Count forms): host
 * fast path, else the dispatcher (a device datatype packs device to
 * device; a host one is forwarded).
 */
#include "interpose.h"

/* The dispatcher reads and writes *position: a NULL one is refused here
 * (MPI_ERR_ARG on comm, as MPI does). */
static int null_position(MPI_Comm comm)
{
    return mpiacc_err_return_comm(comm, mpiacc_err(MPIACC_ERRK_ARG, "NULL position"));
}

MPIACC_INTERPOSE_EXPORT int MPI_Pack(const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize,
                                     int *position, MPI_Comm comm)
{
    int err, host;
    MPI_Count pos;
    if (mpiacc_interpose_untagged(dt)) return PMPI_Pack(inbuf, incount, dt, outbuf, outsize, position, comm);
    if (!position) return null_position(comm);
    pos = *position;
    err = mpiacc_dispatch_pack(1, inbuf, incount, dt, outbuf, outsize, &pos, comm, &host);
    if (host) return PMPI_Pack(inbuf, incount, dt, outbuf, outsize, position, comm);
    if (err == MPI_SUCCESS) *position = (int)pos;
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype dt, void *outbuf,
                                       MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    int err, host;
    if (mpiacc_interpose_untagged(dt)) return PMPI_Pack_c(inbuf, incount, dt, outbuf, outsize, position, comm);
    if (!position) return null_position(comm);
    err = mpiacc_dispatch_pack(1, inbuf, incount, dt, outbuf, outsize, position, comm, &host);
    if (host) return PMPI_Pack_c(inbuf, incount, dt, outbuf, outsize, position, comm);
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                                       MPI_Datatype dt, MPI_Comm comm)
{
    int err, host;
    MPI_Count pos;
    if (mpiacc_interpose_untagged(dt)) return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, dt, comm);
    if (!position) return null_position(comm);
    pos = *position;
    err = mpiacc_dispatch_pack(0, inbuf, insize, dt, outbuf, outcount, &pos, comm, &host);
    if (host) return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, dt, comm);
    if (err == MPI_SUCCESS) *position = (int)pos;
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                                         MPI_Count outcount, MPI_Datatype dt, MPI_Comm comm)
{
    int err, host;
    if (mpiacc_interpose_untagged(dt)) return PMPI_Unpack_c(inbuf, insize, position, outbuf, outcount, dt, comm);
    if (!position) return null_position(comm);
    err = mpiacc_dispatch_pack(0, inbuf, insize, dt, outbuf, outcount, position, comm, &host);
    if (host) return PMPI_Unpack_c(inbuf, insize, position, outbuf, outcount, dt, comm);
    return err;
}
