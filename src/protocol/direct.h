/*
 * protocol/direct.h: what the on-device collectives (src/coll/ipc*.c) still
 * use of the former direct protocol: its communicators (direct_comm.h) and
 * the IPC table lookup.  Point-to-point no longer uses either (a direct
 * communicator carries point-to-point like any other); the collectives'
 * owner removes this once they no longer need it.
 */
#ifndef MPIACC_PROTO_DIRECT_H_INCLUDED
#define MPIACC_PROTO_DIRECT_H_INCLUDED

#include "direct_comm.h"
#include "protocol.h"

struct mpiacc_backend_ipc;
/* The IPC table used for buffers of `kind` handled by backend be (the
 * backend's, or a test's), or NULL when the kind has none. */
const struct mpiacc_backend_ipc *mpiacc_proto_dx_ipc_for(int kind, const mpiacc_backend_t *be);
/* Tests only: an IPC table used for buffers of `kind` instead of the
 * backend's (NULL: the backend's again), so that the collectives' IPC
 * steps can be exercised with a backend without IPC. */
void mpiacc_proto_dx_ipc_test_table(int kind, const struct mpiacc_backend_ipc *t);

#endif
