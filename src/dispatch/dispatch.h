/*
 * dispatch: the call-time decisions for every interposed call that missed
 * the host fast path — attributes, backend choice and validation, datatype
 * analysis, packed size checks, the buffer span check, and which protocol
 * (src/protocol) carries the operation — and the blocking device
 * MPI_Pack / MPI_Unpack (blocking.c).  Functions return the MPI error code
 * after the communicator's error handler has seen it.
 */
#ifndef MPIACC_DISPATCH_H_INCLUDED
#define MPIACC_DISPATCH_H_INCLUDED

#include "attrs/attrs.h"
#include "reqpool/reqpool.h"

/* The host fast path's test for a send: no device send is waiting for its
 * turn (one relaxed atomic load). */
static inline int mpiacc_dispatch_no_deferred(void)
{
    return atomic_load_explicit(&mpiacc_rp_deferred_sends, memory_order_relaxed) == 0;
}

/* A send (mode: MPIACC_RP_SEND_*); req == NULL: blocking. */
int mpiacc_dispatch_send(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                         int mode, MPI_Request *req);
/* A receive; req == NULL: blocking (status filled). */
int mpiacc_dispatch_recv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                         MPI_Status *status, MPI_Request *req);
/* MPI_Sendrecv: receive posted first, then the send, both waited. */
int mpiacc_dispatch_sendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                             void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                             MPI_Status *status);
/* MPI_Pack (packing) / MPI_Unpack: *host = 1 (nothing done) when the
 * datatype is a host one and the caller forwards to MPI. */
int mpiacc_dispatch_pack(int packing, const void *inbuf, MPI_Count insize_or_count, MPI_Datatype dt,
                         void *outbuf, MPI_Count outsize_or_count, MPI_Count *position, MPI_Comm comm, int *host);

/* dispatch.c, shared with blocking.c */
/* The present backend for a's kind, checked against the call's attributes
 * and buffer. */
int mpiacc_dispatch_backend(const mpiacc_attrs_t *a, void *buf, const mpiacc_backend_t **be);
/* count x t in packed bytes, refusing negative counts and overflow. */
int mpiacc_dispatch_packed_bytes(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *bytes);

/* blocking.c: MPI_Pack / MPI_Unpack with a device-tagged datatype (the
 * packed buffer is in the same memory space).  Error codes not yet through
 * an error handler. */
int mpiacc_dispatch_pack_device(int packing, void *data, MPI_Count count, MPI_Datatype type,
                                const mpiacc_attrs_t *a, void *packed, MPI_Count packed_size,
                                MPI_Count *position);

#endif
