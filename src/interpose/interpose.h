/*
 * interpose: the MPI_* entry points mpiacc defines (one file per family).
 * Each one first takes the host fast path — a datatype without an mpiacc
 * attribute (and, for sends, no device send waiting for its turn) goes
 * straight to PMPI: one attribute lookup and one atomic load, no lock, no
 * allocation, no driver call — and otherwise hands the call to the
 * dispatcher (src/dispatch).
 */
#ifndef MPIACC_INTERPOSE_H_INCLUDED
#define MPIACC_INTERPOSE_H_INCLUDED

#include "dispatch/dispatch.h"
#include "protocol/direct_comm.h"

/* Marks the MPI_* entry points (the library is built with hidden
 * visibility; MPICH's header does not mark them). */
#define MPIACC_INTERPOSE_EXPORT __attribute__((visibility("default")))

/* The fast-path tests: a send, and any other call (receive, pack). */
static inline int mpiacc_interpose_send_fast(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE && mpiacc_dispatch_no_deferred();
}

/* stats.c: the per-rank summary MPI_Finalize logs (MPIACC_LOG=info). */
void mpiacc_interpose_stats_summary(void);

/* probe.c: MPI_Mrecv / MPI_Imrecv (req != NULL) of a message handle that
 * mpiacc's MPI_Mprobe / MPI_Improbe returned for a device message on a
 * direct communicator: *handled = 1 and the receive done (or started),
 * *message set to MPI_MESSAGE_NULL, errors through the communicator's
 * handler; otherwise *handled = 0 and nothing is done. */
int mpiacc_interpose_direct_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
                                  MPI_Status *status, MPI_Request *req, int *handled);

/* No communicator was ever made direct (one relaxed atomic load): a host
 * receive is MPI's own. */
static inline int mpiacc_interpose_plain_comms(void)
{
    return !atomic_load_explicit(&mpiacc_proto_comm_any, memory_order_relaxed);
}
/* probe.c: a blocking host receive (MPI_Recv) once some communicator is
 * direct: on a direct one, MPI's receive, watched for a suspected breach
 * (MPIACC_DIRECT_WARN). */
int mpiacc_interpose_host_recv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                               MPI_Status *status);

static inline int mpiacc_interpose_untagged(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE;
}

#endif
