/*
 * interpose/coll_gather.c: MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v),
 * blocking and nonblocking, int and MPI_Count forms.
 * Host fast path, else src/coll.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_GATHER,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                        MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_GATHER,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_GATHER,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                          MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_GATHER,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                        MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_GATHERV,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = displs,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                         MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_GATHERV,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = displs,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                          MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_GATHERV,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = displs,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Igatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                               request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_GATHERV,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = displs,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCATTER,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                         MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCATTER,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                          MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCATTER,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                           void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                           MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCATTER,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                         MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                         int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCATTERV,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = displs,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                          MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                          int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCATTERV,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = displs,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                           MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                           MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCATTERV,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = displs,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                            MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Iscatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_SCATTERV,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = displs,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .root = root,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLGATHER))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLGATHER,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLGATHER))
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLGATHER,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                            void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLGATHER))
        return PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLGATHER,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                             MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLGATHER))
        return PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLGATHER,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcount = recvcount,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                           MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLGATHERV))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLGATHERV,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = displs,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                            const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                            MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLGATHERV))
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLGATHERV,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = displs,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                             void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                             MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLGATHERV))
        return PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLGATHERV,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = displs,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                              void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLGATHERV))
        return PMPI_Iallgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLGATHERV,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scount = sendcount,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = displs,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}
