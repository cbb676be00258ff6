/* SPDX-License-Identifier: BSD-3-Clause */
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
 * turn, and no receive from MPI_ANY_SOURCE is looking for its message (a
 * blocking send must then keep looking for it while it waits:
 * mpiacc_rp_pmpi_wait); two relaxed atomic loads. */
static inline int mpiacc_dispatch_no_deferred(void)
{
    return atomic_load_explicit(&mpiacc_rp_deferred_sends, memory_order_relaxed) == 0 && !mpiacc_rp_matching_now();
}

/* A send (mode: MPIACC_RP_SEND_*), blocking or nonblocking (into *req;
 * a NULL req is then an error, as in MPI). */
int mpiacc_dispatch_send(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                         int mode, int nonblocking, MPI_Request *req);
/* A receive, blocking (status filled) or nonblocking (into *req). */
int mpiacc_dispatch_recv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                         MPI_Status *status, int nonblocking, MPI_Request *req);
/* MPI_Start of a persistent send or receive whose datatype needs the pool
 * and moves bytes (persist.c): the arguments were checked, the attributes
 * read and the datatype analysed (t, borrowed) at the init call, so only
 * what belongs to this start happens (dependency, fast path or pool).
 * Nonblocking, into *req; errors raised on comm. */
int mpiacc_dispatch_start(int is_send, void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                          int mode, const mpiacc_attrs_t *a, mpiacc_pack_type_t *t, MPI_Request *req);
/* MPI_Sendrecv: receive posted first, then the send, both waited. */
int mpiacc_dispatch_sendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                             void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                             MPI_Status *status);
/* MPI_Pack (packing) / MPI_Unpack: *host = 1 (nothing done) when the
 * datatype is a host one and the caller forwards to MPI. */
int mpiacc_dispatch_pack(int packing, const void *inbuf, MPI_Count insize_or_count, MPI_Datatype dt,
                         void *outbuf, MPI_Count outsize_or_count, MPI_Count *position, MPI_Comm comm, int *host);

/* facts.c: a datatype's attributes (as mpiacc_attrs_get, with the
 * backend's facts: a->checked) and its analysis (*t borrowed, valid while
 * dt is; NULL for predefined datatypes), read once per datatype and
 * attribute change and kept on the datatype.  init / finalize: MPI_Init,
 * MPI_Finalize. */
int mpiacc_dispatch_facts(MPI_Datatype dt, mpiacc_attrs_t *a, mpiacc_pack_type_t **t);
int mpiacc_dispatch_facts_init(void);
void mpiacc_dispatch_facts_finalize(void);

/* dispatch.c, shared with blocking.c */
/* The present backend for a's kind, checked against the call's attributes
 * and buffer. */
int mpiacc_dispatch_backend(const mpiacc_attrs_t *a, void *buf, const mpiacc_backend_t **be);
/* The call-time checks of count x dt on a device buffer: the datatype's
 * analysis (*t, a reference the caller releases), its packed size, and,
 * when anything moves, the backend's checks of the buffer and its span (an
 * empty message accepts any buffer, NULL included, as in MPI; *be is then
 * the backend if present, else NULL). */
int mpiacc_dispatch_device_buf(const mpiacc_attrs_t *a, void *buf, MPI_Count count, MPI_Datatype dt,
                               const mpiacc_backend_t **be, mpiacc_pack_type_t **t, MPI_Count *bytes);
/* count x t in packed bytes, refusing negative counts and overflow. */
int mpiacc_dispatch_packed_bytes(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *bytes);

/* blocking.c: MPI_Pack / MPI_Unpack with a device-tagged datatype (the
 * packed buffer is in the same memory space).  Error codes not yet through
 * an error handler. */
int mpiacc_dispatch_pack_device(int packing, void *data, MPI_Count count, MPI_Datatype type,
                                const mpiacc_attrs_t *a, void *packed, MPI_Count packed_size,
                                MPI_Count *position);

/* dispatch.c, for the other files of this module */
/* MPI's own argument checks of a point-to-point call (MPI's classes). */
int mpiacc_dispatch_check_args(int is_send, MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                               int nonblocking, const MPI_Request *req);
/* The datatype needs the pool (a device kind, or host with an event). */
int mpiacc_dispatch_wants_pool(const mpiacc_attrs_t *a);
/* The error for such a datatype while MPIACC_DISABLE is set. */
int mpiacc_dispatch_disabled_error(const mpiacc_attrs_t *a);
/* Waits for r; an operation's error is raised on comm. */
int mpiacc_dispatch_wait(MPI_Request *r, MPI_Status *st, MPI_Comm comm);
/* Whether a host receive of (src, tag, comm) must be mpiacc's (a matched
 * probe, or behind a receive that is: reqpool.h), not MPI's own. */
int mpiacc_dispatch_recv_matched(int src, int tag, MPI_Comm comm);

/* hostcopy.c: blocking copies of a device buffer into host memory. */
/* Device data described by (buf, count, type analysis t) packed into
 * host[0, bytes), after the call-time dependency of a (captured here);
 * returns once the bytes are in host. */
int mpiacc_dispatch_copy_out(const mpiacc_backend_t *be, const mpiacc_attrs_t *a, void *buf,
                             const mpiacc_pack_type_t *t, MPI_Count count, void *host, MPI_Count bytes);
/* For the calls that pack a device buffer at once (MPI_Bsend,
 * MPI_Sendrecv_replace...): checks the call (backend, analysis, size,
 * span), allocates host memory (backend's host_alloc) and packs into it.
 * *host / *bytes to be given back with mpiacc_dispatch_host_free. */
int mpiacc_dispatch_pack_to_host(const mpiacc_attrs_t *a, const void *buf, MPI_Count count, MPI_Datatype dt,
                                 const mpiacc_backend_t **be, void **host, MPI_Count *bytes);
void mpiacc_dispatch_host_free(const mpiacc_backend_t *be, void *host, MPI_Count bytes);
/* Waits (driving MPI's progress) until no unissued device send to
 * (comm, dest) is queued: a send that MPI takes at once (buffered) then
 * keeps MPI's order. */
void mpiacc_dispatch_drain_peer(MPI_Comm comm, int dest);

/* empty.c: whether count x dt carries no byte (and dt is a datatype MPI
 * accepts: committed); mpiacc_dispatch_empty then makes the pair 0 x
 * MPI_BYTE, which the host paths hand to MPI instead (MPICH's UCX netmod
 * dies of SIGFPE receiving into a datatype of size 0; see there). */
int mpiacc_dispatch_no_bytes(MPI_Count count, MPI_Datatype dt);
void mpiacc_dispatch_empty(MPI_Count *count, MPI_Datatype *dt);

/* bsend.c: MPI_Bsend / MPI_Ibsend (nonblocking: into *req). */
int mpiacc_dispatch_bsend(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                          int nonblocking, MPI_Request *req);

/* sendrecv.c: MPI_Sendrecv_replace, MPI_Isendrecv, MPI_Isendrecv_replace. */
int mpiacc_dispatch_sendrecv_replace(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src,
                                     int rtag, MPI_Comm comm, MPI_Status *status);
int mpiacc_dispatch_isendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                              void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                              MPI_Request *req);
int mpiacc_dispatch_isendrecv_replace(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src,
                                      int rtag, MPI_Comm comm, MPI_Request *req);

/* mrecv.c: MPI_Mrecv / MPI_Imrecv of a device datatype (PMPI_Imrecv of
 * the message: into the user's buffer as it is, or into staging unpacked
 * by the pool; see there). */
int mpiacc_dispatch_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status,
                          int nonblocking, MPI_Request *req);
/* mrecv.c: after MPI_Mprobe / MPI_Improbe matched message m from rank
 * `source` of comm: a message this process sent itself is noted, so that
 * its MPI_Mrecv never hands device memory to MPI (no-op when MPI takes no
 * device memory: one load).  mpiacc_dispatch_mprobe_forget: m received
 * some other way (MPI_Mrecv of a host datatype). */
void mpiacc_dispatch_mprobe_note(MPI_Message m, MPI_Comm comm, int source);
void mpiacc_dispatch_mprobe_forget(MPI_Message m);
/* Messages noted and not yet received (0: the lookups are skipped). */
extern atomic_int mpiacc_dispatch_self_msgs;

/* persist.c: persistent point-to-point requests with device datatypes, and
 * receives from MPI_ANY_SOURCE where those are matched by a probe. */
enum { MPIACC_DISPATCH_P_SEND, MPIACC_DISPATCH_P_RECV, MPIACC_DISPATCH_P_BSEND };
/* Persistent requests of mpiacc that exist / are active (started, not yet
 * completed by a completion call); while zero the entry points skip the
 * lookups. */
extern atomic_int mpiacc_dispatch_prq_count, mpiacc_dispatch_prq_active;
/* MPI_Send_init & co. (kind: MPIACC_DISPATCH_P_*, mode MPIACC_RP_SEND_*)
 * for a datatype that needs the pool, MPI_Recv_init from MPI_ANY_SOURCE for
 * any datatype (the interposer's choice). */
int mpiacc_dispatch_persist_init(int kind, int mode, const void *buf, MPI_Count count, MPI_Datatype dt, int peer,
                                 int tag, MPI_Comm comm, MPI_Request *req);
/* MPI_Start on one of ours (*ours = 0: not ours, nothing done). */
int mpiacc_dispatch_persist_start(MPI_Request *req, int *ours);
/* The request standing for h in a completion call: the started
 * operation's while h is one of ours and active, else h. */
MPI_Request mpiacc_dispatch_persist_active(MPI_Request h);
/* After a completion call on the active operation of h: `done` says the
 * operation's request was completed (and freed) by it; h becomes inactive. */
void mpiacc_dispatch_persist_completed(MPI_Request h);
/* MPI_Request_free / MPI_Cancel on one of ours (*ours = 0 otherwise). */
int mpiacc_dispatch_persist_free(MPI_Request *req, int *ours);
int mpiacc_dispatch_persist_cancel(MPI_Request *req, int *ours);

#endif
