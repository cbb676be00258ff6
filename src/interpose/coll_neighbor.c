/*
 * interpose/coll_neighbor.c: the neighbourhood collectives
 * (MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w)), blocking and
 * nonblocking, int and MPI_Count forms.  Host fast path, else src/coll.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                   void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLGATHER,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                                    MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLGATHER,
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

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                                     MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Neighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLGATHER,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                                      MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Ineighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLGATHER,
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

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                    void *recvbuf, const int recvcounts[], const int displs[],
                                                    MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLGATHERV,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                     void *recvbuf, const int recvcounts[], const int displs[],
                                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                         request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLGATHERV,
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

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                      void *recvbuf, const MPI_Count recvcounts[],
                                                      const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Neighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLGATHERV,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                       void *recvbuf, const MPI_Count recvcounts[],
                                                       const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                                       MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast(sendtype, recvtype))
        return PMPI_Ineighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                           request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLGATHERV,
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

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_NEIGHBOR_ALLTOALL))
        return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALL,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                   void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                                   MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_NEIGHBOR_ALLTOALL))
        return PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALL,
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

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                                    MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_NEIGHBOR_ALLTOALL))
        return PMPI_Neighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALL,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                                     MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_NEIGHBOR_ALLTOALL))
        return PMPI_Ineighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALL,
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

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_NEIGHBOR_ALLTOALLV))
        return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                       comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALLV,
                                .nonblocking = 0,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = sdispls,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = rdispls,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                                    MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_NEIGHBOR_ALLTOALLV))
        return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                        comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALLV,
                                .nonblocking = 1,
                                .large = 0,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = sdispls,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = rdispls,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                                     MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_NEIGHBOR_ALLTOALLV))
        return PMPI_Neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                         comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALLV,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = sdispls,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = rdispls,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                      const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                                      const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_NEIGHBOR_ALLTOALLV))
        return PMPI_Ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                          recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALLV,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = sdispls,
                                .stype = sendtype,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = rdispls,
                                .rtype = recvtype,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                                   void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                                   const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_w(comm, 1, sendbuf, sendtypes, recvtypes) &&
        !mpiacc_coll_ipc_comm(comm, MPIACC_COLL_NEIGHBOR_ALLTOALLW))
        return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                       comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALLW,
                                .nonblocking = 0,
                                .large = 0,
                                .aint_disps = 1,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = sdispls,
                                .stypes = sendtypes,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = rdispls,
                                .rtypes = recvtypes,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                                    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                                    void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                                    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_w(comm, 1, sendbuf, sendtypes, recvtypes) &&
        !mpiacc_coll_ipc_comm(comm, MPIACC_COLL_NEIGHBOR_ALLTOALLW))
        return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                        recvtypes, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALLW,
                                .nonblocking = 1,
                                .large = 0,
                                .aint_disps = 1,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = sdispls,
                                .stypes = sendtypes,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = rdispls,
                                .rtypes = recvtypes,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                                     void *recvbuf, const MPI_Count recvcounts[],
                                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                                     MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_w(comm, 1, sendbuf, sendtypes, recvtypes) &&
        !mpiacc_coll_ipc_comm(comm, MPIACC_COLL_NEIGHBOR_ALLTOALLW))
        return PMPI_Neighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                         recvtypes, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALLW,
                                .nonblocking = 0,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = sdispls,
                                .stypes = sendtypes,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = rdispls,
                                .rtypes = recvtypes,
                                .comm = comm,
                                .req = NULL,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}

MPIACC_INTERPOSE_EXPORT int MPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                                      void *recvbuf, const MPI_Count recvcounts[],
                                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                                      MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_w(comm, 1, sendbuf, sendtypes, recvtypes) &&
        !mpiacc_coll_ipc_comm(comm, MPIACC_COLL_NEIGHBOR_ALLTOALLW))
        return PMPI_Ineighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                          recvtypes, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_NEIGHBOR_ALLTOALLW,
                                .nonblocking = 1,
                                .large = 1,
                                .sbuf = sendbuf,
                                .scounts = sendcounts,
                                .sdispls = sdispls,
                                .stypes = sendtypes,
                                .rbuf = recvbuf,
                                .rcounts = recvcounts,
                                .rdispls = rdispls,
                                .rtypes = recvtypes,
                                .comm = comm,
                                .req = request,
                                .op = MPI_OP_NULL,
                                .root = 0};
        return mpiacc_coll_call(&a);
    }
}
