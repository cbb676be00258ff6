/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll: the collectives layer.  Every MPI collective that takes buffers and
 * datatypes (blocking, nonblocking, int and MPI_Count forms) reaches it
 * when its host fast path fails (a tagged datatype, an untagged buffer to
 * classify, a collective on some communicator still waiting to be posted,
 * or MPIACC_COLL_CHECK).  A collective whose buffers are all CUDA device
 * memory on this process runs on its communicator's engine (comm.h): NCCL
 * (dev.c, dev_run.c), mpiacc's IPC collectives (ipc*.c) where NCCL cannot
 * serve on one node, else staged.  A staged collective is a request-pool
 * operation (src/reqpool) whose protocol is this layer: the device parts are
 * packed into pinned host staging behind the captured dependency (the
 * backends' pack), the PMPI nonblocking collective is posted on host
 * pointers once every earlier collective on the communicator is posted,
 * and received parts are unpacked back.  One file per family (bcast.c,
 * reduce.c, gather.c, alltoall.c, neighbor.c) says which parts a call has
 * and posts its PMPI call; core.c owns the rest.
 */
#ifndef MPIACC_COLL_H_INCLUDED
#define MPIACC_COLL_H_INCLUDED

#include "reqpool/reqpool.h"

typedef enum {
    MPIACC_COLL_BCAST,
    MPIACC_COLL_REDUCE,
    MPIACC_COLL_ALLREDUCE,
    MPIACC_COLL_REDUCE_LOCAL,
    MPIACC_COLL_REDUCE_SCATTER,
    MPIACC_COLL_REDUCE_SCATTER_BLOCK,
    MPIACC_COLL_SCAN,
    MPIACC_COLL_EXSCAN,
    MPIACC_COLL_GATHER,
    MPIACC_COLL_GATHERV,
    MPIACC_COLL_SCATTER,
    MPIACC_COLL_SCATTERV,
    MPIACC_COLL_ALLGATHER,
    MPIACC_COLL_ALLGATHERV,
    MPIACC_COLL_ALLTOALL,
    MPIACC_COLL_ALLTOALLV,
    MPIACC_COLL_ALLTOALLW,
    MPIACC_COLL_NEIGHBOR_ALLGATHER,
    MPIACC_COLL_NEIGHBOR_ALLGATHERV,
    MPIACC_COLL_NEIGHBOR_ALLTOALL,
    MPIACC_COLL_NEIGHBOR_ALLTOALLV,
    MPIACC_COLL_NEIGHBOR_ALLTOALLW,
    MPIACC_COLL_BARRIER, /* no data: only ordered behind deferred collectives */
    MPIACC_COLL_NKINDS
} mpiacc_coll_kind_t;

/* The arguments of one call.  Arrays are the caller's: `large` says whether
 * counts are MPI_Count and displacements MPI_Aint (the _c forms) or int.
 * Unused fields are zero / NULL.  Bcast uses the receive side (rbuf,
 * rcount, rtype); reductions use sbuf, rbuf, rcount (or rcounts), rtype. */
typedef struct mpiacc_coll_args {
    int kind;
    int nonblocking;
    int large;
    int aint_disps; /* displacements are MPI_Aint although counts are int (MPI_Neighbor_alltoallw) */
    const void *sbuf;
    MPI_Count scount;
    const void *scounts, *sdispls;
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    void *rbuf;
    MPI_Count rcount;
    const void *rcounts, *rdispls;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    MPI_Request *req;
} mpiacc_coll_args_t;

/* MPIACC_COLL_CHECK (read at MPI_Init): every collective of a kind with a
 * device path enters mpiacc_coll_call, which checks that the processes
 * agree on device buffers or not (one MPI_Allreduce). */
extern int mpiacc_coll_check;

/* The host fast path's test: no collective waits to be posted to MPI on
 * any communicator (one relaxed atomic load; the reqpool's counter), and
 * no check asked for. */
static inline int mpiacc_coll_none_deferred(void)
{
    return atomic_load_explicit(&mpiacc_rp_deferred_colls, memory_order_relaxed) == 0 && !mpiacc_coll_check;
}

/* The call (error raised through the communicator's handler). */
int mpiacc_coll_call(const mpiacc_coll_args_t *a);
/* A persistent collective's initialisation whose datatype is tagged for a
 * buffer that MPI would read as host memory, or is of size 0 on MPICH's
 * UCX netmod (src/coll/empty.c): MPI_ERR_TYPE naming the call (raised on
 * comm).  Returns MPI_SUCCESS when every datatype given (list of n) is
 * untagged or host-tagged without event, and not of size 0 there. */
int mpiacc_coll_refuse(const char *name, MPI_Comm comm, int n, const MPI_Datatype *types);
/* MPI's name of a kind ("MPI_Ibcast" when nonblocking). */
const char *mpiacc_coll_name(int kind, int nonblocking);
/* Since MPI_Init (tests, benchmarks, MPIACC_Stats): collectives with device
 * buffers that ran on the device (either engine), that were staged through
 * host memory, and of the first those that ran on the collective engine
 * (NCCL). */
extern atomic_long mpiacc_coll_device_runs, mpiacc_coll_staged_runs, mpiacc_coll_engine_runs;
/* MPI_Init: reads MPIACC_COLL_CHECK. */
void mpiacc_coll_init(void);
/* MPI_Finalize. */
void mpiacc_coll_finalize(void);

#endif
