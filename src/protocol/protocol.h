/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * protocol: how a pooled operation's data travels.  Each protocol is a
 * table (mpiacc_proto_t, src/reqpool/reqpool.h) the dispatcher puts in the
 * op; the generic state machine (src/reqpool/op.c) calls it for the
 * protocol-specific steps.  Adding a protocol: a new file here with its
 * table, its states in reqpool.h and op.c's comment block, and its place
 * in the one choice function (choose.c, mpiacc_proto_choose).
 */
#ifndef MPIACC_PROTOCOL_H_INCLUDED
#define MPIACC_PROTOCOL_H_INCLUDED

#include "reqpool/reqpool.h"
#include "util/pool.h"

/* staged.c: pack on the device into host staging, send MPI_PACKED;
 * receive into host staging, unpack on the device. */
extern const mpiacc_proto_t mpiacc_proto_staged;
/* mrecv.c: the staged receive of a message matched by MPI_Mprobe /
 * MPI_Improbe (PMPI_Imrecv; op->pstate holds the MPI_Message * until start). */
extern const mpiacc_proto_t mpiacc_proto_mrecv;
/* ordered.c: a host send queued behind unissued device sends to the same
 * peer; sends the user's datatype when its turn comes. */
extern const mpiacc_proto_t mpiacc_proto_ordered;
/* wildcard.c: a host receive from MPI_ANY_SOURCE matched by a probe
 * (mpiacc_core_wildcard_probe); op->host_type: a dup of the user's type. */
extern const mpiacc_proto_t mpiacc_proto_wildcard;

/* device.c: the device protocol — the message handed to MPI as device
 * memory (the user's bytes when dense, else packed on the device into
 * device staging; receives through device staging), for the kinds MPI's
 * transport takes (src/engine).  _mrecv: the receive of a matched message
 * (PMPI_Imrecv; op->pstate holds the MPI_Message * until start). */
extern const mpiacc_proto_t mpiacc_proto_device;
extern const mpiacc_proto_t mpiacc_proto_device_mrecv;

/* choose.c: THE protocol choice of a device operation (set up, not
 * submitted; the dispatcher's one call): op->proto becomes the device
 * protocol where MPI takes the kind's device memory and the message cannot
 * be this process's to itself, else the staged one.  matched: a receive of
 * a message MPI_Mprobe / MPI_Improbe matched (op->peer is then
 * MPI_ANY_SOURCE and from_self says whether this process sent it). */
void mpiacc_proto_choose(mpiacc_rp_op_t *op, int matched, int from_self);
/* Whether device memory of `kind` (backend be) may go to MPI as it is for
 * a message to (is_send) or from peer on comm: the engine takes the kind,
 * be has device staging, and the message cannot be from this process to
 * itself (a send to its own rank; a receive from it or MPI_ANY_SOURCE on
 * an intracommunicator). */
int mpiacc_proto_device_ok(const mpiacc_backend_t *be, int kind, int is_send, int peer, MPI_Comm comm);
/* The first half of that: the engine takes the kind and be has device
 * staging (a matched receive knows its sender otherwise). */
int mpiacc_proto_device_takes(const mpiacc_backend_t *be, int kind);
/* Whether count elements of t are one dense byte range; *start: the
 * offset of its first byte from the buffer. */
int mpiacc_proto_dense(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *start);

/* staging.c: host staging memory, one pool per buffer kind, allocated by
 * that kind's backend (host_alloc: pinned where it helps). */
int mpiacc_proto_init(void);
void mpiacc_proto_finalize(void);
int mpiacc_proto_staging_get(int kind, MPI_Count bytes, void **p, int *cls);
void mpiacc_proto_staging_put(int kind, void *p, int cls);
/* Bytes a staging buffer of class cls holds (>= the bytes asked for). */
MPI_Count mpiacc_proto_staging_capacity(int cls);
void mpiacc_proto_staging_stats(int kind, mpiacc_util_pool_stats_t *out);

/* steps.c: steps the protocols share. */
/* The data dependency: *ready once pack/unpack may start (a host-waiting
 * backend's op->dep tested, and released once done; a chaining backend's
 * passed to every pack/unpack).  *ready stays as it was while not done. */
int mpiacc_proto_dep_test(mpiacc_rp_op_t *op, int *ready);
/* The same test made on the host whatever the backend (the device
 * protocol's dense send waits for its dependency before MPI reads the
 * user's bytes): *ready once op->dep is done (then released). */
int mpiacc_proto_dep_test_host(mpiacc_rp_op_t *op, int *ready);
/* After the dependency (*ready, tested here while 0): the pack (send) or
 * unpack (receive) of packed bytes [0, n) between op's buffer and staging
 * (host memory, or device staging when on_device) enqueued into op->xfer:
 * PACKING / UNPACKING; DEP_PENDING while the dependency is not done. */
int mpiacc_proto_xfer_after_dep(mpiacc_rp_op_t *op, int *ready, void *host, int on_device, MPI_Count n);
/* A receive whose message (op->bytes, received into staging larger than
 * the receive) is longer than the receive: MPI_ERR_TRUNCATE in op->error,
 * naming both sizes, and op->bytes cut to what fits (delivered, as MPI
 * fills a host buffer). */
void mpiacc_proto_truncate(mpiacc_rp_op_t *op);
/* A receive posted into the whole of op's staging (n elements of t: the
 * device protocol's MPI_BYTE, the staged one's MPI_PACKED) -- of the
 * message MPI_Mprobe matched when `matched` (op->pstate: the dispatcher's
 * MPI_Message *, taken) -- : IN_FLIGHT. */
int mpiacc_proto_post_recv(mpiacc_rp_op_t *op, MPI_Count n, MPI_Datatype t, int matched);
/* The protocol's own states of a protocol that packs / unpacks behind the
 * dependency: DEP_PENDING (after_dep again), PACKING (-> READY once done),
 * UNPACKING (*complete once done). */
int mpiacc_proto_advance_xfer(mpiacc_rp_op_t *op, int *complete, int (*after_dep)(mpiacc_rp_op_t *op));
/* Whether the pack/unpack handle *xfer is done (then released, *xfer
 * NULL); a failed one counts as done, and its error is returned. */
int mpiacc_proto_xfer_done(mpiacc_rp_op_t *op, void **xfer, int *done);

#endif
