/*
 * interpose/comm.c: the communicator calls mpiacc wraps, so that a
 * communicator's "direct" setting follows it: set with the info key
 * "mpiacc_direct" through MPI_Comm_set_info or MPI_Comm_dup_with_info (and
 * the constructors that take an info argument), or for MPI_COMM_WORLD by
 * MPIACC_DIRECT=1, and inherited by every communicator made from a direct
 * one.  Point-to-point ignores it (a direct communicator carries device
 * messages like any other); the on-device collectives of one node use it
 * (src/protocol/direct_comm.h, src/coll/ipc.c).  Also the MPI 4.1 memory
 * allocation kinds given in an info argument (src/dispatch/memkind.c).
 *
 * Each wrapper reads the info key first (a bad value fails before anything
 * is created), calls MPI, and then makes the new communicator direct when
 * its parent is (or the info asks for it) — a collective step over the new
 * communicator, so every process that gets one takes part.  Where an info
 * argument is given, the value is first compared over the new communicator
 * (one MPI_Allreduce of two ints, on every process, whether it set the key
 * or not): a mismatch is an MPI_ERR_ARG-class error everywhere.  For
 * programs that never set it the cost is one atomic load per call without
 * info, and an info lookup and that MPI_Allreduce with.
 * Not wrapped: MPI_Comm_idup / MPI_Comm_idup_with_info (non-blocking: their
 * communicators are never direct; MPI_Comm_set_info makes them so) and
 * intercommunicator constructors (intercommunicators are never direct:
 * mpiacc_proto_comm_make refuses them, so nothing made from one, e.g. by
 * MPI_Comm_dup or MPI_Comm_create, inherits anything).
 * MPI_Comm_free and MPI_Comm_disconnect need no wrapper: the attribute's
 * delete callback releases the hidden communicator.
 */
#include "interpose.h"
#include "protocol/direct.h"

static int active(void)
{
    return mpiacc_core_initialized && !mpiacc_core_disabled;
}

/* After a constructor of newcomm from parent without an info argument:
 * newcomm is direct when parent is (the same on every process, so no
 * agreement is needed).  Errors through parent's handler; on error newcomm
 * is freed. */
static int inherit(MPI_Comm parent, MPI_Comm *newcomm)
{
    int mpi_errno = MPI_SUCCESS;
    if (*newcomm == MPI_COMM_NULL || !mpiacc_proto_comm_lookup(parent)) return MPI_SUCCESS;
    mpi_errno = mpiacc_proto_comm_make(*newcomm);
    if (mpi_errno != MPI_SUCCESS) {
        PMPI_Comm_free(newcomm);
        mpi_errno = mpiacc_err_return_comm(parent, mpi_errno);
    }
    return mpi_errno;
}

/* After a constructor of newcomm from parent with an info argument:
 * info_value as read by mpiacc_proto_comm_info (-1: not given, inherit).
 * The value is compared over newcomm's processes, always (a process that
 * did not set the key must still take part: mpiacc_proto_comm_set), so a
 * mismatch is an error everywhere instead of a deadlock.  Errors through
 * parent's handler; on error newcomm is freed. */
static int agree(MPI_Comm parent, int info_value, MPI_Comm *newcomm)
{
    int mpi_errno = MPI_SUCCESS;
    int want = info_value >= 0 ? info_value : mpiacc_proto_comm_lookup(parent) != NULL;
    if (*newcomm == MPI_COMM_NULL) return MPI_SUCCESS;
    mpi_errno = mpiacc_proto_comm_set(*newcomm, want);
    if (mpi_errno != MPI_SUCCESS) {
        PMPI_Comm_free(newcomm);
        mpi_errno = mpiacc_err_return_comm(parent, mpi_errno);
    }
    return mpi_errno;
}

/* MPI 4.1 memory allocation kinds asserted by the info given to newcomm
 * (src/dispatch/memkind.c; replace: a constructor, whose info alone counts,
 * not MPI_Comm_set_info, where a missing key keeps the assertion); errors
 * through comm's handler, a new newcomm freed. */
static int memkinds(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, int replace)
{
    int mpi_errno = *newcomm == MPI_COMM_NULL ? MPI_SUCCESS : mpiacc_dispatch_memkind_assert(*newcomm, info, replace);
    if (mpi_errno == MPI_SUCCESS) return mpi_errno;
    if (*newcomm != comm) PMPI_Comm_free(newcomm);
    return mpiacc_err_return_comm(comm, mpi_errno);
}

/* Reads the info key of a constructor's info argument; errors through
 * comm's handler. */
static int read_info(MPI_Comm comm, MPI_Info info, int *value)
{
    int mpi_errno = mpiacc_proto_comm_info(info, value);
    return mpi_errno == MPI_SUCCESS ? mpi_errno : mpiacc_err_return_comm(comm, mpi_errno);
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int err = PMPI_Comm_dup(comm, newcomm);
    if (err != MPI_SUCCESS || !active()) return err;
    return inherit(comm, newcomm);
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    int err, v = -1;
    if (active() && (err = read_info(comm, info, &v)) != MPI_SUCCESS) return err;
    err = PMPI_Comm_dup_with_info(comm, info, newcomm);
    /* MPI 4.1 memory-kind assertion: the info's, never the parent's */
    if (err == MPI_SUCCESS) err = memkinds(comm, info, newcomm, 1);
    if (err != MPI_SUCCESS || !active()) return err;
    return agree(comm, v, newcomm);
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int err = PMPI_Comm_split(comm, color, key, newcomm);
    if (err != MPI_SUCCESS || !active()) return err;
    return inherit(comm, newcomm);
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    int err, v = -1;
    if (active() && (err = read_info(comm, info, &v)) != MPI_SUCCESS) return err;
    err = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    if (err == MPI_SUCCESS) err = memkinds(comm, info, newcomm, 1);
    if (err != MPI_SUCCESS || !active()) return err;
    return agree(comm, v, newcomm);
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    int err = PMPI_Comm_create(comm, group, newcomm);
    if (err != MPI_SUCCESS || !active()) return err;
    return inherit(comm, newcomm);
}

MPIACC_INTERPOSE_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    int err = PMPI_Comm_create_group(comm, group, tag, newcomm);
    if (err != MPI_SUCCESS || !active()) return err;
    return inherit(comm, newcomm);
}

MPIACC_INTERPOSE_EXPORT int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                  MPI_Comm *comm_cart)
{
    int err = PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
    if (err != MPI_SUCCESS || !active()) return err;
    return inherit(comm_old, comm_cart);
}

MPIACC_INTERPOSE_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    int err = PMPI_Cart_sub(comm, remain_dims, newcomm);
    if (err != MPI_SUCCESS || !active()) return err;
    return inherit(comm, newcomm);
}

MPIACC_INTERPOSE_EXPORT int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder,
                                   MPI_Comm *comm_graph)
{
    int err = PMPI_Graph_create(comm_old, nnodes, indx, edges, reorder, comm_graph);
    if (err != MPI_SUCCESS || !active()) return err;
    return inherit(comm_old, comm_graph);
}

MPIACC_INTERPOSE_EXPORT int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                        const int destinations[], const int weights[], MPI_Info info, int reorder,
                                        MPI_Comm *comm_dist_graph)
{
    int err, v = -1;
    if (active() && (err = read_info(comm_old, info, &v)) != MPI_SUCCESS) return err;
    err = PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder,
                                 comm_dist_graph);
    if (err == MPI_SUCCESS) err = memkinds(comm_old, info, comm_dist_graph, 1);
    if (err != MPI_SUCCESS || !active()) return err;
    return agree(comm_old, v, comm_dist_graph);
}

MPIACC_INTERPOSE_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                                 const int sourceweights[], int outdegree, const int destinations[],
                                                 const int destweights[], MPI_Info info, int reorder,
                                                 MPI_Comm *comm_dist_graph)
{
    int err, v = -1;
    if (active() && (err = read_info(comm_old, info, &v)) != MPI_SUCCESS) return err;
    err = PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                          destweights, info, reorder, comm_dist_graph);
    if (err == MPI_SUCCESS) err = memkinds(comm_old, info, comm_dist_graph, 1);
    if (err != MPI_SUCCESS || !active()) return err;
    return agree(comm_old, v, comm_dist_graph);
}

/* Collective, as MPI_Comm_set_info is: the key turns the protocol on or
 * off for comm (communicators made from it before keep theirs); the value
 * (absent: as it is) is compared over comm's processes, a mismatch is an
 * MPI_ERR_ARG-class error on every process and comm stays as it was. */
MPIACC_INTERPOSE_EXPORT int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    int err, v = -1;
    if (active() && (err = read_info(comm, info, &v)) != MPI_SUCCESS) return err;
    err = PMPI_Comm_set_info(comm, info);
    if (err == MPI_SUCCESS) err = memkinds(comm, info, &comm, 0); /* MPI 4.1 memory kinds */
    if (err != MPI_SUCCESS || !active()) return err;
    if (v < 0) v = mpiacc_proto_comm_lookup(comm) != NULL;
    err = mpiacc_proto_comm_set(comm, v);
    return mpiacc_err_return_comm(comm, err);
}

/* MPI may keep or drop unknown keys: mpiacc says what is in effect, on
 * every communicator ("true" or "false"), so that an info read here and
 * passed to MPI_Comm_dup_with_info gives the same protocol. */
MPIACC_INTERPOSE_EXPORT int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    int err = PMPI_Comm_get_info(comm, info_used);
    if (err != MPI_SUCCESS || !active()) return err;
    err = PMPI_Info_set(*info_used, MPIACC_DIRECT_INFO, mpiacc_proto_comm_lookup(comm) ? "true" : "false");
    if (err == MPI_SUCCESS) err = mpiacc_dispatch_memkind_info(comm, *info_used); /* MPI 4.1 memory kinds */
    if (err != MPI_SUCCESS) PMPI_Info_free(info_used); /* the caller gets no info to free */
    return mpiacc_err_return_comm(comm, err);
}
