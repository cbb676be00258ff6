/*
 * interpose/coll_persist_w.c: the persistent collectives of MPI 4.0
 * (MPI_Alltoall_init ... MPI_Neighbor_alltoallw_init, int and MPI_Count forms).
 * Not staged yet: a datatype tagged for device memory (or host memory with
 * MPIACC_EVENT) is refused with MPI_ERR_TYPE naming the call; others go to
 * MPI unchanged.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                              MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Alltoall_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                                MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Alltoall_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                               MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                   info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Alltoallv_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                               info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                 MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                     comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Alltoallv_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                 info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                               const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                               const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                               MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_coll_untagged_w(comm, 0, sendbuf, sendtypes, recvtypes))
        return PMPI_Alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                   comm, info, request);
    {
        int rc = mpiacc_interpose_coll_refuse_w("MPI_Alltoallw_init", comm, 0, sendbuf, sendtypes, recvtypes);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                               info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                                 void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                                 MPI_Request *request)
{
    if (mpiacc_interpose_coll_untagged_w(comm, 0, sendbuf, sendtypes, recvtypes))
        return PMPI_Alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                     comm, info, request);
    {
        int rc = mpiacc_interpose_coll_refuse_w("MPI_Alltoallw_init_c", comm, 0, sendbuf, sendtypes, recvtypes);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                                 info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Neighbor_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                            request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Neighbor_allgather_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                        request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount,
                                                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                          MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Neighbor_allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                              request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Neighbor_allgather_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                          request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                         void *recvbuf, const int recvcounts[], const int displs[],
                                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                         MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Neighbor_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                             info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Neighbor_allgatherv_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                         info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                                                           MPI_Datatype sendtype, void *recvbuf,
                                                           const MPI_Count recvcounts[], const MPI_Aint displs[],
                                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                           MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Neighbor_allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                               comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Neighbor_allgatherv_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                           info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                           request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Neighbor_alltoall_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount,
                                                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                         MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Neighbor_alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                             request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Neighbor_alltoall_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                         request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                                        const int recvcounts[], const int rdispls[],
                                                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                        MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                            recvtype, comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Neighbor_alltoallv_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                        comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                          const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                                          void *recvbuf, const MPI_Count recvcounts[],
                                                          const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                              recvtype, comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Neighbor_alltoallv_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                          recvtype, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                                        void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                                        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                                        MPI_Request *request)
{
    if (mpiacc_interpose_coll_untagged_w(comm, 1, sendbuf, sendtypes, recvtypes))
        return PMPI_Neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                            recvtypes, comm, info, request);
    {
        int rc = mpiacc_interpose_coll_refuse_w("MPI_Neighbor_alltoallw_init", comm, 1, sendbuf, sendtypes, recvtypes);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                        recvtypes, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                                          void *recvbuf, const MPI_Count recvcounts[],
                                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_coll_untagged_w(comm, 1, sendbuf, sendtypes, recvtypes))
        return PMPI_Neighbor_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                              recvtypes, comm, info, request);
    {
        int rc =
            mpiacc_interpose_coll_refuse_w("MPI_Neighbor_alltoallw_init_c", comm, 1, sendbuf, sendtypes, recvtypes);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Neighbor_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                          recvtypes, comm, info, request);
}
