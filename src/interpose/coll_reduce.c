/*
 * interpose/coll_reduce.c: MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan,
 * blocking and nonblocking, int and MPI_Count forms.  Host fast path, else
 * src/coll.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_SCATTER,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_SCATTER,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = request,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_SCATTER,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_SCATTER,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = request,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_SCATTER_BLOCK,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                      MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_SCATTER_BLOCK,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = request,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_SCATTER_BLOCK,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                        MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_SCATTER_BLOCK,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = request,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCAN,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                      MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCAN,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = request,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCAN,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCAN,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = request,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                       MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_EXSCAN,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                        MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_EXSCAN,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = request,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_EXSCAN,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_EXSCAN,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = comm,
                                .req = request,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}
