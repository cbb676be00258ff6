/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * protocol/choose.c: THE protocol choice for a device point-to-point
 * operation, and the two tests it rests on (dense layout, device memory
 * allowed at MPI), which the dispatcher's fast path asks too.
 *
 * The device protocol (device.c) when MPI's transport takes the buffer
 * kind's device memory (src/engine) and the backend has device staging,
 * except for a message this process could send to itself: a send to its
 * own rank, a receive from its own rank or from MPI_ANY_SOURCE on an
 * intracommunicator, a matched message that came from itself.  Device
 * memory to oneself through MPI segfaults in every combination measured
 * (MPICH 5.0.2 on UCX 1.22, device->device, host->device with an
 * MPI_ANY_SOURCE receive, device->host), so those take the staged protocol
 * (host staging on this side; MPI still matches).  Everything else (OpenCL
 * buffers, host buffers with an event, no engine): staged.
 *
 * Small messages that need staging — a send that is not one dense byte
 * range of the user's buffer (or is stream-ordered), any receive that gets
 * here (the dispatcher passes a dense one whose dependency is met to MPI)
 * — take the staged protocol too, up to MPIACC_HOST_STAGING_MAX packed
 * bytes: the pack or unpack goes to pinned host memory (copy engines, or a
 * kernel at the greatest priority, fused with the others of its batch) and
 * MPI moves host bytes, which for small messages beats device staging's
 * kernel, its completion and MPI's device path, and never queues a copy
 * behind the application's kernels on the GPU (UCX copies device memory
 * on streams of the least priority).
 */
#include "engine/engine.h"
#include "core/env.h"
#include "protocol.h"

int mpiacc_proto_dense(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *start)
{
    mpiacc_tv_i64 s = 0;
    *start = 0;
    if (t->contiguous) {
        *start = t->start;
        return 1;
    }
    if (t->blob && mpiacc_tv_dense((const mpiacc_tv_i64 *)t->blob, (mpiacc_tv_i64)count, &s)) {
        *start = (MPI_Count)s;
        return 1;
    }
    return 0;
}

/* Whether the message could have this process at both ends. */
static int maybe_self(int is_send, int peer, MPI_Comm comm)
{
    int inter = 0, rank = -1;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 1;
    if (inter) return 0; /* peers are in the remote group */
    if (!is_send && peer == MPI_ANY_SOURCE) return 1;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return 1;
    return peer == rank;
}

int mpiacc_proto_device_takes(const mpiacc_backend_t *be, int kind)
{
    return be && be->dev_staging_get && be->dev_staging_put && be->dep_ready && mpiacc_engine_mpi.takes(kind);
}

int mpiacc_proto_device_ok(const mpiacc_backend_t *be, int kind, int is_send, int peer, MPI_Comm comm)
{
    if (!mpiacc_proto_device_takes(be, kind)) return 0;
    if (maybe_self(is_send, peer, comm)) {
        MPIACC_LOG_ONCE(MPIACC_LOG_INFO, "device self",
                        "path: %s messages to this process itself (and receives from MPI_ANY_SOURCE) are staged "
                        "through host memory: MPI crashes on device memory sent to oneself",
                        mpiacc_kind_name(kind));
        return 0;
    }
    return 1;
}

/* MPIACC_HOST_STAGING_MAX, read once (0 until then). */
static MPI_Count host_max(void)
{
    static _Atomic long long v = -1;
    long long x = atomic_load_explicit(&v, memory_order_relaxed);
    if (x < 0) atomic_store_explicit(&v, x = (long long)mpiacc_env_size("MPIACC_HOST_STAGING_MAX"), memory_order_relaxed);
    return (MPI_Count)x;
}

/* A small message that would need device staging: host staging serves it. */
static int small_staged(const mpiacc_rp_op_t *op)
{
    MPI_Count start;
    if (op->bytes > host_max()) return 0;
    if (!op->is_send) return 1;
    return !mpiacc_proto_dense(op->type, op->count, &start) || op->attrs.stream_order;
}

void mpiacc_proto_choose(mpiacc_rp_op_t *op, int matched, int from_self)
{
    if (matched) {
        int device = mpiacc_proto_device_takes(op->be, op->attrs.kind) && !from_self && !small_staged(op);
        op->proto = device ? &mpiacc_proto_device_mrecv : &mpiacc_proto_mrecv;
        return;
    }
    op->proto = mpiacc_proto_device_ok(op->be, op->attrs.kind, op->is_send, op->peer, op->comm) && !small_staged(op)
                    ? &mpiacc_proto_device
                    : &mpiacc_proto_staged;
}
