/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/comm.c: the communicator calls that take an info argument, for
 * the MPI 4.1 memory allocation kinds it may assert
 * (mpi_assert_memory_alloc_kinds, src/dispatch/memkind.c: MPI_Comm_set_info,
 * MPI_Comm_dup_with_info, MPI_Comm_split_type, MPI_Dist_graph_create[_adjacent];
 * MPI_Comm_dup keeps the assertion through the keyval's copy callback), and
 * MPI_Comm_get_info, which reports the kinds.  The former direct protocol's
 * info key "mpiacc_direct" (MPIACC_DIRECT_INFO) is accepted and ignored, as
 * MPI ignores keys it does not know: device messages take the same path on
 * every communicator.
 */
#include "interpose.h"

static int active(void)
{
    return mpiacc_core_initialized && !mpiacc_core_disabled;
}

/* MPI 4.1 memory allocation kinds asserted by the info given to newcomm
 * (replace: a constructor, whose info alone counts, not MPI_Comm_set_info,
 * where a missing key keeps the assertion); errors through comm's handler,
 * a new newcomm freed. */
static int memkinds(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, int replace)
{
    int mpi_errno;
    if (!active() || *newcomm == MPI_COMM_NULL) return MPI_SUCCESS;
    mpi_errno = mpiacc_dispatch_memkind_assert(*newcomm, info, replace);
    if (mpi_errno == MPI_SUCCESS) return mpi_errno;
    if (*newcomm != comm) PMPI_Comm_free(newcomm);
    return mpiacc_err_return_comm(comm, mpi_errno);
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    int err = PMPI_Comm_dup_with_info(comm, info, newcomm);
    /* the info's assertion, never the parent's */
    return err == MPI_SUCCESS ? memkinds(comm, info, newcomm, 1) : err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    int err = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    return err == MPI_SUCCESS ? memkinds(comm, info, newcomm, 1) : err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                        const int destinations[], const int weights[], MPI_Info info, int reorder,
                                        MPI_Comm *comm_dist_graph)
{
    int err = PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder,
                                     comm_dist_graph);
    return err == MPI_SUCCESS ? memkinds(comm_old, info, comm_dist_graph, 1) : err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                                 const int sourceweights[], int outdegree, const int destinations[],
                                                 const int destweights[], MPI_Info info, int reorder,
                                                 MPI_Comm *comm_dist_graph)
{
    int err = PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                              destweights, info, reorder, comm_dist_graph);
    return err == MPI_SUCCESS ? memkinds(comm_old, info, comm_dist_graph, 1) : err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    int err = PMPI_Comm_set_info(comm, info);
    return err == MPI_SUCCESS ? memkinds(comm, info, &comm, 0) : err;
}

/* The memory allocation kinds (mpi_memory_alloc_kinds, and an assertion
 * in effect) added to MPI's info. */
MPIACC_INTERPOSE_EXPORT int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    int err = PMPI_Comm_get_info(comm, info_used);
    if (err != MPI_SUCCESS || !active()) return err;
    err = mpiacc_dispatch_memkind_info(comm, *info_used);
    if (err != MPI_SUCCESS) PMPI_Info_free(info_used); /* the caller gets no info to free */
    return mpiacc_err_return_comm(comm, err);
}
