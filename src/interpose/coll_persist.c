/*
 * interpose/coll_persist.c: the persistent collectives of MPI 4.0
 * (MPI_Bcast_init ... MPI_Allgatherv_init, int and MPI_Count forms).
 * Not staged yet: a datatype tagged for device memory (or host memory with
 * MPIACC_EVENT) is refused with MPI_ERR_TYPE naming the call; others go to
 * MPI unchanged.
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                           MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype)) return PMPI_Bcast_init(buffer, count, datatype, root, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Bcast_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Bcast_init(buffer, count, datatype, root, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                                             MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Bcast_init_c(buffer, count, datatype, root, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Bcast_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Bcast_init_c(buffer, count, datatype, root, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                            MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Reduce_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                                              MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Reduce_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Allreduce_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                 MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Allreduce_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Allreduce_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Allreduce_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                    MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Reduce_scatter_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                      MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Reduce_scatter_init_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Reduce_scatter_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Reduce_scatter_init_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                          MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Reduce_scatter_block_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                            MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Reduce_scatter_block_init_c(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Reduce_scatter_block_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Reduce_scatter_block_init_c(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Scan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Scan_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Scan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                            MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Scan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Scan_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Scan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                            MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Exscan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Exscan_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Exscan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                              MPI_Request *request)
{
    if (mpiacc_interpose_untagged(datatype))
        return PMPI_Exscan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    {
        MPI_Datatype t[2] = {datatype, MPI_DATATYPE_NULL};
        int rc = mpiacc_coll_refuse("MPI_Exscan_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Exscan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                            MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Gather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Gather_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Gather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                              MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Gather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                                  request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Gather_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Gather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                             const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                             int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Gatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info,
                                 request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Gatherv_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Gatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info,
                             request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                               MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Gatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                                   info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Gatherv_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Gatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info,
                               request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                             MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Scatter_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Scatter_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Scatter_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Scatter_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                                   request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Scatter_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Scatter_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                              MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Scatterv_init(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                                  request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Scatterv_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Scatterv_init(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                              request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                                const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                                                MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                                MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Scatterv_init_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                    info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Scatterv_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Scatterv_init_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                                request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                               MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Allgather_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Allgather_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                void *recvbuf, const int recvcounts[], const int displs[],
                                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                    request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Allgatherv_init", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                request);
}

MPIACC_INTERPOSE_EXPORT int MPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                  void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                  MPI_Request *request)
{
    if (mpiacc_interpose_untagged(sendtype) && mpiacc_interpose_untagged(recvtype))
        return PMPI_Allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                      request);
    {
        MPI_Datatype t[2] = {sendtype, recvtype};
        int rc = mpiacc_coll_refuse("MPI_Allgatherv_init_c", comm, 2, t);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                  request);
}
