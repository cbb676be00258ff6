/*
 * streampool: the request pool hooked into MPICH's progress engine.  Holds
 * each device operation until the GPU work it depends on is done, packs,
 * hands the bytes to MPI, unpacks, and completes the generalized request
 * given to the application.  The operation's state machine is documented in
 * op.c.
 */
#ifndef MPIACC_STREAMPOOL_H_INCLUDED
#define MPIACC_STREAMPOOL_H_INCLUDED

#include <stdatomic.h>

#include "../core/core.h"

/* Send modes of the interposed calls. */
enum { MPIACC_SEND_STD, MPIACC_SEND_SYNC, MPIACC_SEND_READY };

int mpiacc_streampool_init(void);
/* Fails with an MPIACC_ERRK_PENDING error while operations are pending. */
int mpiacc_streampool_finalize(void);
/* Number of operations not yet complete. */
int mpiacc_streampool_pending(void);

/* Sends whose PMPI_Isend is deferred (waiting for their data); while it is
 * zero, host sends need no ordering check at all. */
extern atomic_int mpiacc_sp_deferred_sends;

/* Device send / receive through the pool; *req is a generalized request. */
int mpiacc_sp_isend(const void *buf, MPI_Count count, MPI_Datatype type, const mpiacc_attrs_t *a,
                    int dest, int tag, MPI_Comm comm, int mode, MPI_Request *req);
int mpiacc_sp_irecv(void *buf, MPI_Count count, MPI_Datatype type, const mpiacc_attrs_t *a,
                    int source, int tag, MPI_Comm comm, MPI_Request *req);
/* A host send issued while device sends are deferred: returns with
 * *deferred = 0 and nothing done when no deferred send goes to (comm, dest);
 * otherwise queues it behind them (*req is a generalized request). */
int mpiacc_sp_host_isend(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, int mode, MPI_Request *req, int *deferred);

/* Blocking MPI_Pack / MPI_Unpack with a device-tagged datatype. */
int mpiacc_sp_pack(const void *inbuf, MPI_Count incount, MPI_Datatype type, const mpiacc_attrs_t *a,
                   void *outbuf, MPI_Count outsize, MPI_Count *position);
int mpiacc_sp_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                     MPI_Count outcount, MPI_Datatype type, const mpiacc_attrs_t *a);

#endif
