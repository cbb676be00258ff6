/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/coll_types.c: the host fast-path test of the collectives that
 * take one datatype per process (MPI_Alltoallw, MPI_Neighbor_alltoallw and
 * their I and _init forms).  Until any datatype was tagged it costs one
 * load; then one attribute lookup per datatype.
 */
#include <stdlib.h>

#include "interpose.h"

/* Blocks per side: the communicator's size (remote group of an
 * intercommunicator), or the topology's degrees; -1 when unknown (then the
 * caller leaves the checks to MPI). */
static void degrees(MPI_Comm comm, int neighbor, int *ns, int *nr)
{
    int inter = 0, topo, rank, w;
    *ns = *nr = -1;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return;
    if (!neighbor) {
        if ((inter ? PMPI_Comm_remote_size(comm, ns) : PMPI_Comm_size(comm, ns)) == MPI_SUCCESS) *nr = *ns;
        return;
    }
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return;
    if (topo == MPI_CART) {
        int nd;
        if (PMPI_Cartdim_get(comm, &nd) == MPI_SUCCESS) *ns = *nr = 2 * nd;
    } else if (topo == MPI_GRAPH) {
        if (PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && PMPI_Graph_neighbors_count(comm, rank, ns) == MPI_SUCCESS)
            *nr = *ns;
    } else if (topo == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, nr, ns, &w);
    }
}

int mpiacc_interpose_coll_untagged_w(MPI_Comm comm, int neighbor, const void *sbuf, const MPI_Datatype st[],
                                     const MPI_Datatype rt[])
{
    int ns, nr;
    degrees(comm, neighbor, &ns, &nr);
    if (sbuf == MPI_IN_PLACE || !st) ns = 0;
    if (!rt) nr = 0;
    for (int i = 0; i < ns; i++)
        if (!mpiacc_interpose_msg_untagged(st[i])) return 0;
    for (int i = 0; i < nr; i++)
        if (!mpiacc_interpose_msg_untagged(rt[i])) return 0;
    return 1;
}

int mpiacc_interpose_coll_fast_w(MPI_Comm comm, int neighbor, const void *sbuf, const MPI_Datatype st[],
                                 const MPI_Datatype rt[])
{
    return mpiacc_coll_none_deferred() && mpiacc_interpose_coll_untagged_w(comm, neighbor, sbuf, st, rt);
}

int mpiacc_interpose_coll_refuse_w(const char *name, MPI_Comm comm, int neighbor, const void *sbuf,
                                   const MPI_Datatype st[], const MPI_Datatype rt[])
{
    int ns, nr, rc;
    MPI_Datatype *all;
    degrees(comm, neighbor, &ns, &nr);
    if (sbuf == MPI_IN_PLACE || !st || ns < 0) ns = 0;
    if (!rt || nr < 0) nr = 0;
    if (!(all = malloc(sizeof *all * (size_t)(ns + nr + 1))))
        return mpiacc_err_return_comm(comm, mpiacc_err(MPIACC_ERRK_NOMEM, "%s: out of memory", name));
    for (int i = 0; i < ns; i++) all[i] = st[i];
    for (int i = 0; i < nr; i++) all[ns + i] = rt[i];
    rc = mpiacc_coll_refuse(name, comm, ns + nr, all);
    free(all);
    return rc;
}
