/*
 * interpose/coll.c: MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Reduce_local,
 * blocking and nonblocking, int and MPI_Count forms; MPI_Barrier and
 * MPI_Ibarrier (ordering only).  Host fast path, else src/coll.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Barrier(MPI_Comm comm)
{
    if (mpiacc_coll_none_deferred()) return PMPI_Barrier(comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_BARRIER, .op = MPI_OP_NULL, .comm = comm};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_coll_none_deferred()) return PMPI_Ibarrier(comm, request);
    {
        mpiacc_coll_args_t a = {
            .kind = MPIACC_COLL_BARRIER, .nonblocking = 1, .op = MPI_OP_NULL, .comm = comm, .req = request};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_BCAST))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_BCAST,
                                .nonblocking = 0,
                                .large = 0,
                                .rbuf = buffer,
                                .rcount = count,
                                .rtype = datatype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                       MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_BCAST))
        return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_BCAST,
                                .nonblocking = 1,
                                .large = 0,
                                .rbuf = buffer,
                                .rcount = count,
                                .rtype = datatype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_BCAST))
        return PMPI_Bcast_c(buffer, count, datatype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_BCAST,
                                .nonblocking = 0,
                                .large = 1,
                                .rbuf = buffer,
                                .rcount = count,
                                .rtype = datatype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                         MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_BCAST))
        return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_BCAST,
                                .nonblocking = 1,
                                .large = 1,
                                .rbuf = buffer,
                                .rcount = count,
                                .rtype = datatype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                       int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_REDUCE))
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .root = root,
                                .comm = comm,
                                .req = NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                        int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_REDUCE))
        return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .root = root,
                                .comm = comm,
                                .req = request};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                         MPI_Op op, int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_REDUCE))
        return PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .root = root,
                                .comm = comm,
                                .req = NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                          MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_REDUCE))
        return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .rbuf = recvbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .root = root,
                                .comm = comm,
                                .req = request};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_ALLREDUCE))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLREDUCE,
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

MPIACC_INTERPOSE_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                           MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_ALLREDUCE))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLREDUCE,
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

MPIACC_INTERPOSE_EXPORT int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                            MPI_Op op, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_ALLREDUCE))
        return PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLREDUCE,
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

MPIACC_INTERPOSE_EXPORT int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                             MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(datatype, MPI_DATATYPE_NULL, comm, MPIACC_COLL_ALLREDUCE))
        return PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLREDUCE,
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

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                                             MPI_Op op)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Reduce_local(inbuf, inoutbuf, count, datatype, op);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_LOCAL,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = inbuf,
                                .rbuf = inoutbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = MPI_COMM_SELF,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count,
                                               MPI_Datatype datatype, MPI_Op op)
{
    if (mpiacc_interpose_coll_fast(datatype, MPI_DATATYPE_NULL))
        return PMPI_Reduce_local_c(inbuf, inoutbuf, count, datatype, op);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_REDUCE_LOCAL,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = inbuf,
                                .rbuf = inoutbuf,
                                .rcount = count,
                                .rtype = datatype,
                                .stype = datatype,
                                .op = op,
                                .comm = MPI_COMM_SELF,
                                .req = NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}
