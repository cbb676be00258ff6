/*
 * protocol: how a pooled operation's data travels.  Each protocol is a
 * table (mpiacc_proto_t, src/reqpool/reqpool.h) the dispatcher puts in the
 * op; the generic state machine (src/reqpool/op.c) calls it for the
 * protocol-specific steps.  Adding a protocol: a new file here with its
 * table, its states in reqpool.h and op.c's comment block, and the
 * dispatcher's choice (src/dispatch/dispatch.c).
 */
#ifndef MPIACC_PROTOCOL_H_INCLUDED
#define MPIACC_PROTOCOL_H_INCLUDED

#include "reqpool/reqpool.h"
#include "util/pool.h"

/* staged.c: pack on the device into host staging, send MPI_PACKED;
 * receive into host staging, unpack on the device. */
extern const mpiacc_proto_t mpiacc_proto_staged;
/* ordered.c: a host send queued behind unissued device sends to the same
 * peer; sends the user's datatype when its turn comes. */
extern const mpiacc_proto_t mpiacc_proto_ordered;

/* staging.c: host staging memory, one pool per buffer kind, allocated by
 * that kind's backend (host_alloc: pinned where it helps). */
int mpiacc_proto_init(void);
void mpiacc_proto_finalize(void);
int mpiacc_proto_staging_get(int kind, MPI_Count bytes, void **p, int *cls);
void mpiacc_proto_staging_put(int kind, void *p, int cls);
void mpiacc_proto_staging_stats(int kind, mpiacc_util_pool_stats_t *out);

#endif
