/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/mrecv.c: MPI_Mrecv / MPI_Imrecv of a message that MPI_Mprobe /
 * MPI_Improbe matched, into a datatype that needs the pool.
 *
 * Where MPI's transport takes the buffer's device memory (src/engine) and
 * the message did not come from this process itself: a dense receive whose
 * dependency is met goes to MPI as it is (PMPI_Mrecv / PMPI_Imrecv of the
 * user's bytes: MPI's own request and errors); otherwise a pooled receive
 * whose inner receive is PMPI_Imrecv of the message into staging — device
 * staging (src/protocol/device.c, mpiacc_proto_device_mrecv) or host
 * staging (src/protocol/mrecv.c, the staged protocol) — unpacked into the
 * buffer like any receive of that protocol (truncation, status, errors,
 * completion calls alike).  A message this process sent itself is never
 * received into device memory by MPI (MPI crashes there): the probes note
 * such messages (src/interpose/probe.c -> mpiacc_dispatch_mprobe_note) and
 * their receive takes host staging.  MPI_Mrecv has no communicator
 * argument: errors found by mpiacc are raised where MPI raises those of
 * calls without one (MPI_COMM_SELF's handler, else MPI_COMM_WORLD's).
 */
#include <stdlib.h>

#include "dispatch.h"
#include "memkind.h"
#include "core/stats.h"
#include "engine/engine.h"
#include "protocol/protocol.h"

/* ---- messages a probe matched from this process itself ---------------- */

atomic_int mpiacc_dispatch_self_msgs;
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Message *self_msgs;
static int nself, capself;

static int any_device_to_mpi(void)
{
    for (int k = MPIACC_KIND_HOST; k < MPIACC_KIND_MAX; k++)
        if (mpiacc_engine_mpi.takes(k)) return 1;
    return 0;
}

void mpiacc_dispatch_mprobe_note(MPI_Message m, MPI_Comm comm, int source)
{
    int inter = 0, rank = -1;
    if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC || !any_device_to_mpi()) return;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != source) return;
    pthread_mutex_lock(&self_lock);
    if (nself == capself) {
        int cap = capself ? 2 * capself : 16;
        MPI_Message *n = realloc(self_msgs, sizeof *n * (size_t)cap);
        if (!n) { /* forgotten: its receive would hand device memory to MPI, so say so */
            pthread_mutex_unlock(&self_lock);
            MPIACC_LOG(MPIACC_LOG_WARN, "out of memory noting a message probed from this process itself");
            return;
        }
        self_msgs = n;
        capself = cap;
    }
    self_msgs[nself++] = m;
    atomic_fetch_add(&mpiacc_dispatch_self_msgs, 1);
    pthread_mutex_unlock(&self_lock);
}

/* 1 when m was noted (and is no more). */
static int take_self(MPI_Message m)
{
    int found = 0;
    if (!atomic_load_explicit(&mpiacc_dispatch_self_msgs, memory_order_acquire)) return 0;
    pthread_mutex_lock(&self_lock);
    for (int i = 0; i < nself; i++)
        if (self_msgs[i] == m) {
            self_msgs[i] = self_msgs[--nself];
            atomic_fetch_sub(&mpiacc_dispatch_self_msgs, 1);
            found = 1;
            break;
        }
    if (!nself) { /* nothing left: give the memory back */
        free(self_msgs);
        self_msgs = NULL;
        capself = 0;
    }
    pthread_mutex_unlock(&self_lock);
    return found;
}

void mpiacc_dispatch_mprobe_forget(MPI_Message m)
{
    (void)take_self(m);
}

/* ---- the receive ----------------------------------------------------------- */

static int pmpi_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status,
                      int nonblocking, MPI_Request *req)
{
    return nonblocking ? PMPI_Imrecv_c(buf, count, dt, msg, req) : PMPI_Mrecv_c(buf, count, dt, msg, status);
}

int mpiacc_dispatch_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status,
                          int nonblocking, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS, from_self = 0, ready = 0;
    mpiacc_attrs_t a;
    const mpiacc_backend_t *be;
    mpiacc_pack_type_t *t = NULL;
    mpiacc_rp_op_t *op = NULL;
    MPI_Count bytes = 0, start = 0;
    MPI_Request r = MPI_REQUEST_NULL;

    /* MPI's own checks of the message and the request come first. */
    if (!msg || *msg == MPI_MESSAGE_NULL || *msg == MPI_MESSAGE_NO_PROC || dt == MPI_DATATYPE_NULL || count < 0 ||
        (nonblocking && !req))
        return pmpi_mrecv(buf, count, dt, msg, status, nonblocking, req);
    from_self = take_self(*msg);
    /* no communicator: the pointer query applies, no assertion does */
    MPIACC_CHECK(mpiacc_dispatch_attrs(dt, buf, MPI_COMM_NULL, &a));
    if (!mpiacc_dispatch_wants_pool(&a)) {
        mpiacc_dispatch_empty(&count, &dt); /* no bytes: 0 MPI_BYTE (empty.c) */
        return pmpi_mrecv(buf, count, dt, msg, status, nonblocking, req);
    }
    if (mpiacc_core_disabled) MPIACC_CHECK(mpiacc_dispatch_disabled_error(&a));
    MPIACC_CHECK(mpiacc_dispatch_device_buf(&a, buf, count, dt, &be, &t, &bytes));
    if (bytes == 0) { /* nothing lands in the buffer: MPI's receive (a longer message is truncated by MPI) */
        mpiacc_pack_type_release(t);
        return pmpi_mrecv(NULL, 0, MPI_BYTE, msg, status, nonblocking, req);
    }
    if (a.kind != MPIACC_KIND_HOST) MPIACC_CHECK(mpiacc_pack_check_receive(t, count, NULL));
    if (!from_self && mpiacc_proto_device_takes(be, a.kind) && mpiacc_proto_dense(t, count, &start) &&
        be->dep_ready(&a, buf, &ready) == MPI_SUCCESS && ready) { /* as it is: MPI's own receive */
        mpiacc_pack_type_release(t);
        mpiacc_core_stats_passed(a.kind, 0, bytes);
        return pmpi_mrecv((char *)buf + start, bytes, MPI_BYTE, msg, status, nonblocking, req);
    }
    if (!(op = mpiacc_rp_op_alloc(0, MPIACC_RP_SEND_STD, buf, count, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_NULL)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an operation");
    op->be = be;
    op->attrs = a;
    op->type = t;
    t = NULL;
    op->bytes = bytes;
    mpiacc_proto_choose(op, 1, from_self); /* src/protocol/choose.c */
    op->pstate = msg; /* taken by the protocol's start, inside submit */
    if (be->capture) MPIACC_CHECK(be->capture(&a, buf, &op->dep));
    mpi_errno = mpiacc_rp_submit(op, &r, 0);
    op = NULL;
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    if (nonblocking) {
        *req = r;
        return MPI_SUCCESS;
    }
    return mpiacc_dispatch_wait(&r, status, MPI_COMM_NULL);
fn_fail:
    if (t) mpiacc_pack_type_release(t);
    mpiacc_rp_discard(op);
    return mpiacc_err_return_comm(MPI_COMM_NULL, mpi_errno);
}
