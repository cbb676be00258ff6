/*
 * protocol: how a pooled operation's data travels.  Each protocol is a
 * table (mpiacc_proto_t, src/reqpool/reqpool.h) the dispatcher puts in the
 * op; the generic state machine (src/reqpool/op.c) calls it for the
 * protocol-specific steps.  Adding a protocol: a new file here with its
 * table, its states in reqpool.h and op.c's comment block, and its place
 * in the one choice function (direct.c, `choose`).
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

struct mpiacc_proto_comm;
/* direct.c: THE protocol choice, the dispatcher's call for a device op (set
 * up, not submitted): staged when dc is NULL; on direct communicator dc
 * (its state) the op becomes one of the direct protocol's (per-op state,
 * a reference on dc, the hidden communicator) and gets its protocol: a
 * send's by size, backend and peer (eager, IPC or pipelined), a receive's
 * from its first message (it starts as the direct receive).  On failure
 * op->proto may be set: mpiacc_rp_discard releases what was made. */
int mpiacc_proto_choose(mpiacc_rp_op_t *op, struct mpiacc_proto_comm *dc);

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
/* After the dependency (*ready, tested here while 0): the pack (send) or
 * unpack (receive) of packed bytes [0, n) between op's buffer and host
 * enqueued into op->xfer: PACKING / UNPACKING; DEP_PENDING while the
 * dependency is not done. */
int mpiacc_proto_xfer_after_dep(mpiacc_rp_op_t *op, int *ready, void *host, MPI_Count n);
/* Whether the pack/unpack handle *xfer is done (then released, *xfer
 * NULL); a failed one counts as done, and its error is returned. */
int mpiacc_proto_xfer_done(mpiacc_rp_op_t *op, void **xfer, int *done);

#endif
