/*
 * interpose/coll_alltoall.c: MPI_Alltoall(v,w), blocking and nonblocking,
 * int and MPI_Count forms.  Host fast path, else src/coll.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLTOALL))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALL,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLTOALL))
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALL,
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

MPIACC_INTERPOSE_EXPORT int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                           void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLTOALL))
        return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALL,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                            void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                            MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLTOALL))
        return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALL,
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

MPIACC_INTERPOSE_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLTOALLV))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALLV,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                           MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLTOALLV))
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                               request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALLV,
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

MPIACC_INTERPOSE_EXPORT int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                            MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                            const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLTOALLV))
        return PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALLV,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                             const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_on(sendtype, recvtype, comm, MPIACC_COLL_ALLTOALLV))
        return PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                 request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALLV,
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

MPIACC_INTERPOSE_EXPORT int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                          const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_w(comm, 0, sendbuf, sendtypes, recvtypes))
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALLW,
                                .nonblocking = 0,
                                .large = 0,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                           MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_w(comm, 0, sendbuf, sendtypes, recvtypes))
        return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                               request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALLW,
                                .nonblocking = 1,
                                .large = 0,
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

MPIACC_INTERPOSE_EXPORT int MPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                            const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (mpiacc_interpose_coll_fast_w(comm, 0, sendbuf, sendtypes, recvtypes))
        return PMPI_Alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALLW,
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

MPIACC_INTERPOSE_EXPORT int MPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                                             const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                             const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    if (mpiacc_interpose_coll_fast_w(comm, 0, sendbuf, sendtypes, recvtypes))
        return PMPI_Ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                                 request);
    {
        mpiacc_coll_args_t a = {.kind = MPIACC_COLL_ALLTOALLW,
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
