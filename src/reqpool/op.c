/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reqpool/op.c: the life of one operation — the state machine, its
 * generalized request and the progress hook that drives it.
 *
 * STATE MACHINE (every arrow is counted in mpiacc_rp_transitions and tested
 * in tests/reqpool).  [generic] steps are taken here; [P] steps by the op's
 * protocol (op->proto; the protocol named in brackets).
 *
 *  Device send (MPI_Isend & co. on a device-tagged datatype) [staged]
 *   NEW --(backend chains on the device: pack enqueued behind dep)--> PACKING
 *   NEW --(backend host_waits and dep pending)----------------------> DEP_PENDING
 *   NEW --(backend host_waits and no dep: pack now)-----------------> PACKING
 *   DEP_PENDING --(dep done: pack enqueued)-------------------------> PACKING
 *   PACKING --(pack done)-------------------------------------------> READY
 *   READY --[generic](no earlier unissued send to the same
 *            (comm, dest); issue: PMPI_Isend of the packed bytes
 *            as MPI_PACKED)--------------------------------------------> IN_FLIGHT
 *   IN_FLIGHT --[generic](MPIX_Request_is_complete)------------------> DONE
 *
 *  Host send issued while a device send to the same (comm, dest) is still
 *  unissued (MPI's non-overtaking rule) [ordered]:
 *   NEW --------------------------------------------------------------> READY
 *   READY --> IN_FLIGHT --> DONE as above (issue sends the user's datatype)
 *
 *  Device receive (MPI_Irecv & co.) [staged]
 *   NEW --(PMPI_Irecv into staging, posted at call time)------------> IN_FLIGHT
 *   IN_FLIGHT --[generic: inner receive complete, then received():]
 *       (bytes landed; backend chains: unpack behind dep)-----------> UNPACKING
 *   IN_FLIGHT --(bytes landed; host_waits, dep pending)-------------> DEP_PENDING
 *   IN_FLIGHT --(bytes landed; host_waits, no dep)------------------> UNPACKING
 *   DEP_PENDING --(dep done: unpack enqueued)-----------------------> UNPACKING
 *   UNPACKING --(unpack done)---------------------------------------> DONE
 *  Matched device receive (MPI_Mrecv / MPI_Imrecv of a message
 *  MPI_Mprobe / MPI_Improbe matched) [staged (matched), protocol/mrecv.c]
 *   NEW --(PMPI_Imrecv of the message into staging, at call time)---> IN_FLIGHT
 *   then as a staged receive (same states and arrows)
 *
 *  Receive from MPI_ANY_SOURCE where mpiacc_core_wildcard_probe is set
 *  (MPICH's UCX netmod loses such a receive whose message already waits
 *  at UCX): matched by a probe [generic: mpiacc_rp_match_start at call
 *  time, mpiacc_rp_match_pending from waits and tests, never the progress
 *  hook; the protocol's matched() posts PMPI_Imrecv]: a device receive
 *  [staged, device] into its staging, a host one [wildcard,
 *  protocol/wildcard.c] into the user's buffer (then IN_FLIGHT --> DONE:
 *  MPI's status; MPI's truncation is the op's error).  Ops match in call
 *  order: one that an earlier MATCHING op could take a message from waits
 *  for it.  A host receive naming its source that is called behind such an
 *  op [wildcard] waits in MATCHING the same way, then posts PMPI_Irecv
 *  (matched() without a message: MPI loses no such receive).  match.c
 *  takes the MATCHING arrows.
 *   NEW --(PMPI_Improbe at call time found the message)-------------> IN_FLIGHT
 *   NEW --(not found, or behind an earlier MATCHING op)--------------> MATCHING
 *   MATCHING --(a later probe found it; named: its turn came)--------> IN_FLIGHT
 *   MATCHING --(MPI_Cancel)--------------------------------------> CANCELLED
 *   then as the protocol's receive (staged: UNPACKING ...; wildcard: DONE)
 *
 *  Device protocol (src/protocol/device.c; chosen by protocol/choose.c
 *  where MPI's transport takes the kind's device memory, src/engine, and
 *  the message cannot be from this process to itself).  MPI carries
 *  MPI_Pack's bytes as MPI_BYTE, in device memory.  A dense message whose
 *  dependency is met at the call never becomes an op: the dispatcher hands
 *  it to MPI as it is (MPI's own request; counted in MPIACC_PROTO_MPI).
 *   Send, one dense byte range, not stream-ordered [device]
 *    NEW --(dependency met: tested on the host, whatever the backend)--> READY
 *    NEW --(dependency pending)---------------------------------------> DEP_PENDING
 *    DEP_PENDING --(dependency met)-----------------------------------> READY
 *    READY --[generic](no earlier unissued send to the same (comm,
 *        dest); issue: PMPI_Isend of the user's bytes in the op's send
 *        mode)--------------------------------------------------------> IN_FLIGHT
 *    IN_FLIGHT --[generic](MPIX_Request_is_complete)------------------> DONE
 *   Send, any other layout, or stream-ordered [device]: as staged, into
 *   device staging on the buffer's device (pack kernels on the device)
 *    NEW / DEP_PENDING --> PACKING --> READY --> IN_FLIGHT --> DONE with
 *        the staged send's arrows (issue: PMPI_Isend of the staging)
 *   Receive, and a matched receive (MPI_Mrecv / MPI_Imrecv,
 *   mpiacc_proto_device_mrecv) [device]: as a staged receive, into device
 *   staging one byte larger than the receive
 *    NEW --(PMPI_Irecv / PMPI_Imrecv into device staging, at call time,
 *        so receives are posted in call order)-------------------------> IN_FLIGHT
 *    IN_FLIGHT --> (DEP_PENDING -->) UNPACKING --> DONE as staged (the
 *        unpack on the device, from device staging)
 *   Truncation as staged (below); MPI_Cancel as any receive.
 *   Messages to this process itself, receives from MPI_ANY_SOURCE on an
 *   intracommunicator and matched messages this process sent take the
 *   staged protocol (MPI crashes on device memory to oneself).
 *
 *  Nonblocking collective (MPI_Ibcast & co., src/coll) [collective]: a
 *  list of device parts to pack into host staging, the PMPI nonblocking
 *  collective on host pointers, a list of parts to unpack.  Queued like a
 *  send, under the peer MPIACC_RP_PEER_COLL, so that the collectives of a
 *  communicator reach MPI in the order they were called; a host collective
 *  called while one is queued on its communicator is queued too (no parts).
 *  (Blocking collectives take the same steps in the calling thread, around
 *  MPI's blocking collective: MPI does not match blocking with nonblocking.)
 *   NEW --(host_waits backend, a dependency pending)-----------------> DEP_PENDING
 *   NEW --(packs enqueued behind the dependencies)-------------------> PACKING
 *   NEW --(nothing to pack: a receiving side, a queued host call)----> READY
 *   DEP_PENDING --(dependencies done: packs enqueued)----------------> PACKING
 *   DEP_PENDING --(dependencies done, nothing to pack)---------------> READY
 *   PACKING --(every pack done; reductions: host copies in the
 *       datatype's layout made where needed)---------------------------> READY
 *   READY --[generic](no earlier unissued collective on the
 *       communicator; issue: the PMPI_I* collective)-------------------> IN_FLIGHT
 *   IN_FLIGHT --[generic: complete, then received():](unpacks
 *       enqueued, possibly none)---------------------------------------> UNPACKING
 *   UNPACKING --(every unpack done)---------------------------------> DONE
 *   A part whose dependency, pack or unpack fails does not stop the
 *   collective (the other processes would wait for it): the op records
 *   the error and completes with it (ERROR) after the collective.
 *  Nonblocking collective on NCCL (device buffers on a communicator whose
 *  engine is NCCL; src/coll/dev_run.c) [collective on NCCL]: packs, the NCCL
 *  group and unpacks enqueued on the GPU in the MPI call, in the order the
 *  communicator's collectives are called (no MPI message of mpiacc's)
 *   NEW --(start)---------------------------------------------------> COPYING
 *   COPYING --(the work's event done (the engine's test); the op left
 *       the send queue at its first step: later collectives need not
 *       wait for it; MPIACC_ORDER_STREAM on contiguous buffers: nothing
 *       to wait for, in the call itself)------------------------------> DONE
 *   COPYING --(the test failed, or NCCL reported an asynchronous error:
 *       the NCCL communicator aborted; later device collectives on the
 *       communicator fail with the same class)---------------------> ERROR
 *  Nonblocking collective on the IPC engine (a kind with an on-device
 *  algorithm on a one-node communicator whose engine is IPC;
 *  src/coll/ipc_nb.c) [collective on the device]: record (exports) filled at
 *  call time; queued like one above
 *   NEW --(start)---------------------------------------------------> READY
 *   READY --[generic](its turn; issue: PMPI_Iallgather of the records on
 *       the communicator's hidden duplicate; the op keeps its place in the
 *       queue, sendq_hold, until its last collective there)--------------> EXCHANGING
 *   EXCHANGING --(records in (MPIX_Request_is_complete), every one ok:
 *       the reads enqueued, a failure to enqueue recorded)--------------> COPYING
 *   EXCHANGING --(a record not ok, on every process alike: exports
 *       released, staging taken; the protocol becomes [collective] and
 *       takes its NEW arrows)--> DEP_PENDING / PACKING / READY, then as above
 *   COPYING --(every read done (the backend's test); two phases: the
 *       error flags and new exports gathered, PMPI_Iallgather)----------> EXCHANGING
 *   EXCHANGING --(that exchange in: the second phase's reads enqueued
 *       unless a process failed)-----------------------------------------> COPYING
 *   COPYING --(every read done: PMPI_Iallreduce(MAX) of the error class
 *       on the duplicate; the op leaves the queue)-----------------------> IN_FLIGHT
 *   IN_FLIGHT --[generic: complete, then received():] DONE, or ERROR
 *       with this process's failure or "another process failed" (the
 *       largest class); exports released
 *
 *  Error and cancel paths [generic]
 *   any state --(a backend or MPI failure; or mpiacc_rp_fail, a failed step
 *       an application call took on the op)--> ERROR: resources released, the
 *       generalized request completes with the error in its status (the
 *       completion call returns it; Waitall reports MPI_ERR_IN_STATUS).
 *       The error is raised with the handler MPI semantics name (the
 *       operation's communicator in MPI_Wait/MPI_Test and the blocking
 *       calls): the completion calls claim mpiacc's requests (complete.c)
 *       and the query callback hands the error to the claim.
 *   receive IN_FLIGHT --(message longer than the receive but not than
 *       the protocol's staging, which is larger: the inner receive got more
 *       bytes than op->bytes; staged and device protocols)--> the bytes
 *       that fit go on as received (UNPACKING...), then --> ERROR with
 *       MPI_ERR_TRUNCATE once they are unpacked, as MPI fills a host buffer
 *       with the part that fits.
 *   receive IN_FLIGHT --(message longer than the staging: MPI truncated
 *       the inner receive)--> ERROR at once with MPI's error: nothing
 *       delivered (MPICH's UCX netmod leaves a truncated buffer undefined),
 *       the status names the message (source, tag) with 0 bytes.
 *   receive IN_FLIGHT --(MPI_Cancel: PMPI_Cancel of the inner receive, which
 *       then completes cancelled)--> CANCELLED: status says cancelled.
 *       MPI_Cancel in any later state, on sends and on collectives, does
 *       nothing (the operation completes normally, as MPI allows).
 *
 *  Stream-ordered completion (MPIACC_ORDER_STREAM on a CUDA / OpenCL
 *  point-to-point op; not synchronous-mode sends) [generic: mpiacc_rp_early, early.c,
 *  called by the protocol]: the pseudo-target EARLY changes no state: the
 *  generalized request completes (successfully: an op that already has an
 *  error completes as usual) while the op goes on in the pool, detached.
 *  Each device transfer is first ordered before the user's later stream /
 *  queue work (mpiacc_rp_order_after, be->order_after).
 *   PACKING --(staged / device send: the pack (device: the copy
 *       into device staging, also of a dense buffer) enqueued)-------> EARLY
 *   UNPACKING --(staged / device receive: the unpack enqueued)----> EARLY
 *   A detached op then takes its usual arrows to DONE or ERROR; a
 *   detached ERROR is logged and kept for the application's communicator
 *   (early.c): the next device call there fails with it.  Its memory goes
 *   when both the pool and MPI (the request freed) are done with it.  A
 *   send never completes early while MPI still reads the user's buffer
 *   (the device protocol copies a stream-ordered dense send to staging).
 *   MPI_Finalize drains detached ops like pending ones (abandoned ones:
 *   ERROR, as above).
 *
 *  Batched launches (src/reqpool/batch.c): a pack or unpack started inside
 *  a batch (a pass of the progress engine, MPI_Startall) enters PACKING /
 *  UNPACKING queued (op->xfer == MPIACC_RP_XFER_QUEUED: not done for any
 *  test) and is launched with the batch's other transfers (the backend's
 *  xfer_many, one launch) when the thread's outermost batch ends (within
 *  the same MPI call; a lazy batch of nonblocking calls at the thread's
 *  next progress pass); no state changes then.  A failed launch is reported by
 *  the op's next step:
 *   PACKING / UNPACKING --(its launch failed, alone too)-----------> ERROR
 *
 * Entering DONE/ERROR/CANCELLED: the op leaves the pool's lists, releases
 * its handles, protocol resources and type reference, then
 * MPI_Grequest_complete; after that only the generalized request's free
 * callback touches the op (it gives it back to the op pool).
 *
 * A new protocol adds its states to the enum in reqpool.h and its arrows
 * here; sends that go through READY keep the send-ordering queue for free
 * (issue may move the op to a state of its own once its first message is
 * posted).
 *
 * Locking.  One mutex (mpiacc_rp_pool.lock) guards the pool's lists and
 * every op in them.  Application threads take it in the MPI calls and may
 * call PMPI functions while holding it (our lock, then MPI's).  The progress
 * poll function runs inside MPI (possibly holding MPI's lock), so it only
 * ever *tries* the mutex and returns "no progress" when it is busy: there is
 * never a wait in the other order, hence no deadlock.  The
 * generalized-request callbacks take no lock but the op pool's, inside
 * which no MPI function is called.
 */
#include <stdio.h>

#include "reqpool.h"
#include "core/stats.h"

_Static_assert(MPIACC_RP_T_ERROR >= MPIACC_RP_NSTATES && MPIACC_RP_T_CANCEL >= MPIACC_RP_NSTATES &&
                   MPIACC_RP_T_ERROR != MPIACC_RP_T_CANCEL && MPIACC_RP_T_CANCEL < MPIACC_RP_NTARGETS,
               "the pseudo-targets must not collide with a state");

atomic_long mpiacc_rp_transitions[MPIACC_RP_NSTATES][MPIACC_RP_NTARGETS];
_Static_assert(MPIACC_RP_NSTATES == 10, "a new state needs its name in mpiacc_rp_state_name");
_Static_assert(MPIACC_RP_NSTATES <= MPIACC_CORE_TR_OP_STATES, "core/trace.h has a slot per state");

const char *mpiacc_rp_state_name(int s)
{
    static const char *names[MPIACC_RP_NTARGETS] = {
        [MPIACC_RP_NEW] = "NEW",           [MPIACC_RP_DEP_PENDING] = "DEP_PENDING",
        [MPIACC_RP_PACKING] = "PACKING",   [MPIACC_RP_READY] = "READY",
        [MPIACC_RP_IN_FLIGHT] = "IN_FLIGHT", [MPIACC_RP_UNPACKING] = "UNPACKING",
        [MPIACC_RP_DONE] = "DONE",         [MPIACC_RP_COPYING] = "COPYING",
        [MPIACC_RP_EXCHANGING] = "EXCHANGING", [MPIACC_RP_MATCHING] = "MATCHING",
        [MPIACC_RP_T_ERROR] = "ERROR",     [MPIACC_RP_T_CANCEL] = "CANCELLED",
        [MPIACC_RP_T_EARLY] = "EARLY",
    };
    return s >= 0 && s < MPIACC_RP_NTARGETS && names[s] ? names[s] : "?";
}

/* What entering `to` means, for the debug log. */
static const char *transition_word(const mpiacc_rp_op_t *op, int to)
{
    switch (to) {
    case MPIACC_RP_DEP_PENDING: return "waiting on the host for the data dependency";
    case MPIACC_RP_PACKING: return "pack dispatched";
    case MPIACC_RP_READY:
        return op->state == MPIACC_RP_NEW         ? "queued behind earlier sends"
               : op->state == MPIACC_RP_PACKING ? "packed"
                                                  : "dependency met";
    case MPIACC_RP_IN_FLIGHT: return op->is_send ? "sent" : "receive posted";
    case MPIACC_RP_UNPACKING: return "received, unpack dispatched";
    case MPIACC_RP_COPYING: return "device work enqueued";
    case MPIACC_RP_EXCHANGING: return "exchanging records with the other processes";
    case MPIACC_RP_MATCHING: return "waiting for a message from any source (probed)";
    case MPIACC_RP_DONE: return "completed";
    case MPIACC_RP_T_ERROR: return "failed";
    case MPIACC_RP_T_CANCEL: return "cancelled";
    case MPIACC_RP_T_EARLY: return "request completed in stream order; the op goes on";
    default: return "protocol step";
    }
}

void mpiacc_rp_move(mpiacc_rp_op_t *op, int to)
{
    long long t = mpiacc_core_stats_now_ns();
    atomic_fetch_add_explicit(&mpiacc_rp_transitions[op->state][to], 1, memory_order_relaxed);
    /* time spent in the state being left */
    switch (op->state) {
    case MPIACC_RP_PACKING: mpiacc_core_stats_time(MPIACC_CORE_STATS_T_PACK, t - op->t_state); break;
    case MPIACC_RP_UNPACKING: mpiacc_core_stats_time(MPIACC_CORE_STATS_T_UNPACK, t - op->t_state); break;
    case MPIACC_RP_DEP_PENDING: mpiacc_core_stats_time(MPIACC_CORE_STATS_T_DEP, t - op->t_state); break;
    default: break;
    }
    if (mpiacc_core_tracing()) op->tr[op->state] += t - op->t_state;
    MPIACC_LOG(MPIACC_LOG_DEBUG, "op %llu: %s -> %s: %s (%s %d, tag %d, %lld bytes, %s, %s; %.1f us in %s)", op->id,
               mpiacc_rp_state_name(op->state), mpiacc_rp_state_name(to), transition_word(op, to),
               op->is_send ? "to" : "from", op->peer, op->tag, (long long)op->bytes, op->be ? op->be->name : "host",
               op->proto->name, 1e-3 * (double)(t - op->t_state), mpiacc_rp_state_name(op->state));
    op->t_state = t;
    if (to < MPIACC_RP_NSTATES) op->state = (mpiacc_rp_state_t)to;
}

int mpiacc_rp_isend(mpiacc_rp_op_t *op, const void *buf, MPI_Count n, MPI_Datatype t)
{
    switch (op->mode) {
    case MPIACC_RP_SEND_SYNC: return PMPI_Issend_c(buf, n, t, op->peer, op->tag, op->comm, &op->inner);
    case MPIACC_RP_SEND_READY: return PMPI_Irsend_c(buf, n, t, op->peer, op->tag, op->comm, &op->inner);
    default: return PMPI_Isend_c(buf, n, t, op->peer, op->tag, op->comm, &op->inner);
    }
}

/* ---- completion ---------------------------------------------------------- */

void mpiacc_rp_release_resources(mpiacc_rp_op_t *op)
{
    mpiacc_rp_batch_forget(op);
    if (op->xfer == MPIACC_RP_XFER_FAILED) op->xfer = NULL;
    if (op->be) {
        if (op->dep) op->be->release(op->dep);
        if (op->xfer) op->be->release(op->xfer);
    }
    op->dep = op->xfer = NULL;
    if (op->proto && op->proto->release) op->proto->release(op);
    if (op->type) mpiacc_pack_type_release(op->type);
    op->type = NULL;
}

void mpiacc_rp_discard(mpiacc_rp_op_t *op)
{
    if (!op) return;
    mpiacc_rp_release_resources(op);
    mpiacc_rp_op_free(op);
}

/* to: MPIACC_RP_DONE, MPIACC_RP_T_ERROR or MPIACC_RP_T_CANCEL */
void mpiacc_rp_finish(mpiacc_rp_op_t *op, int to, int error)
{
    MPI_Request greq = op->greq;
    if (op->state == MPIACC_RP_MATCHING) atomic_fetch_sub_explicit(&mpiacc_rp_matching, 1, memory_order_relaxed);
    if (op->detached) {
        mpiacc_rp_sendq_remove(op);
        if (op->inner != MPI_REQUEST_NULL) PMPI_Request_free(&op->inner);
        mpiacc_rp_unlink(op);
        mpiacc_rp_release_resources(op);
        mpiacc_rp_finish_detached(op, to, error, 1);
        return;
    }
    mpiacc_rp_sendq_remove(op);
    if (op->inner != MPI_REQUEST_NULL) {
        /* Only on error/cancel paths: the inner request was never waited. */
        PMPI_Request_free(&op->inner);
    }
    mpiacc_rp_unlink(op);
    mpiacc_rp_release_resources(op);
    op->error = error;
    op->cancelled = (to == MPIACC_RP_T_CANCEL);
    if (to == MPIACC_RP_DONE) mpiacc_core_stats_op_done(op->attrs.kind, op->proto->name, op->is_send, op->bytes);
    else if (to == MPIACC_RP_T_CANCEL) mpiacc_core_stats_op_cancelled();
    else mpiacc_core_stats_op_failed();
    mpiacc_rp_move(op, to);
    op->state = MPIACC_RP_DONE;
    mpiacc_core_trace_op(op->is_send, op->tr);
    if (error != MPI_SUCCESS)
        MPIACC_LOG(MPIACC_LOG_INFO, "%s to/from %d tag %d failed", op->is_send ? "send" : "receive", op->peer,
                   op->tag);
    /* Before completing: if the application already freed the request,
     * the free callback runs inside MPI_Grequest_complete. */
    mpiacc_rp_completed_add(op);
    atomic_store_explicit(&op->published, 1, memory_order_release);
    PMPI_Grequest_complete(greq); /* op may be freed from here on */
}

/* Done: with the error an earlier step left in op->error (a truncated
 * receive), else successfully. */
static void complete(mpiacc_rp_op_t *op)
{
    int err = op->error;
    mpiacc_rp_finish(op, err != MPI_SUCCESS ? MPIACC_RP_T_ERROR : MPIACC_RP_DONE, err);
}

void mpiacc_rp_fail(mpiacc_rp_op_t *op, int error)
{
    if (op->state != MPIACC_RP_DONE) mpiacc_rp_finish(op, MPIACC_RP_T_ERROR, error);
}

/* ---- the machine ----------------------------------------------------------- */

/* IN_FLIGHT: the inner request.  Returns 1 when op completed. */
static int in_flight(mpiacc_rp_op_t *op, int *mpi_errno)
{
    MPI_Status st;
    int cancelled = 0, done = 0;
    MPI_Count n = 0;

    if (!op->is_send && atomic_exchange(&op->cancel_req, 0)) PMPI_Cancel(&op->inner);
    if (!MPIX_Request_is_complete(op->inner)) return 0;
    /* Complete: waiting does not enter progress. */
    *mpi_errno = PMPI_Wait(&op->inner, &st);
    op->inner = MPI_REQUEST_NULL;
    if (op->is_send) {
        if (*mpi_errno != MPI_SUCCESS) return 0;
        complete(op);
        return 1;
    }
    if (*mpi_errno != MPI_SUCCESS && mpiacc_err_class(*mpi_errno) == MPI_ERR_TRUNCATE) {
        /* the status names the message even so; what MPI left in the
         * staging is not delivered (MPICH's UCX netmod writes nothing into
         * a truncated receive's buffer) */
        op->st_source = st.MPI_SOURCE;
        op->st_tag = st.MPI_TAG;
    } else if (*mpi_errno == MPI_SUCCESS) {
        PMPI_Get_count_c(&st, MPI_BYTE, &n);
    }
    if (*mpi_errno != MPI_SUCCESS) {
        op->bytes = 0; /* nothing delivered */
        return 0;
    }
    PMPI_Test_cancelled(&st, &cancelled);
    if (cancelled) {
        mpiacc_rp_finish(op, MPIACC_RP_T_CANCEL, MPI_SUCCESS);
        return 1;
    }
    op->st_source = st.MPI_SOURCE;
    op->st_tag = st.MPI_TAG;
    op->bytes = n;
    *mpi_errno = op->proto->received(op, &done);
    if (*mpi_errno == MPI_SUCCESS && done) {
        complete(op);
        return 1;
    }
    return 0;
}

/* Moves op as far along its state machine as it can go now; lock held.
 * Returns 1 when op completed (it must not be touched afterwards). */
static int advance_steps(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    int done;

    for (;;) {
        mpiacc_rp_state_t before = op->state;
        switch (op->state) {
        case MPIACC_RP_NEW: /* not in the pool yet */
            break;
        case MPIACC_RP_READY:
            if (mpiacc_rp_sendq_has_peer(op->comm, op->peer, op)) break;
            MPIACC_CHECK(op->proto->issue(op));
            if (!op->sendq_hold) mpiacc_rp_sendq_remove(op);
            if (op->state == MPIACC_RP_READY) mpiacc_rp_move(op, MPIACC_RP_IN_FLIGHT);
            break;
        case MPIACC_RP_IN_FLIGHT:
            if (in_flight(op, &mpi_errno)) return 1;
            if (mpi_errno != MPI_SUCCESS) goto fn_fail;
            break;
        case MPIACC_RP_DONE:
            return 1;
        case MPIACC_RP_MATCHING: /* probes progress MPI: not from here (mpiacc_rp_match_pending) */
            break;
        default: /* the protocol's own states */
            done = 0;
            MPIACC_CHECK(op->proto->advance(op, &done));
            if (done) {
                complete(op);
                return 1;
            }
            break;
        }
        if (op->state == before) break; /* nothing more to do now */
    }
    return 0;
fn_fail:
    mpiacc_rp_finish(op, MPIACC_RP_T_ERROR, mpi_errno);
    return 1;
}

/* advance_steps with the call that made op current for error messages
 * (core.h): an error found now, in whichever call's progress, names it. */
int mpiacc_rp_advance(mpiacc_rp_op_t *op)
{
    mpiacc_err_call_t c = {op->call.sig, op->call.args, NULL, 1};
    int done;
    mpiacc_err_enter(&c);
    done = advance_steps(op);
    mpiacc_err_leave(&c); /* op may be gone: c is only unlinked */
    return done;
}

/* Advances every active operation once; lock held. */
void mpiacc_rp_progress_locked(void)
{
    mpiacc_rp_op_t *op, *next;
    mpiacc_rp_batch_begin(); /* the transfers this pass starts share launches */
    for (op = mpiacc_rp_pool.head; op; op = next) {
        next = op->next;
        mpiacc_rp_advance(op);
    }
    mpiacc_rp_batch_end_locked();
}

/* ---- progress hook ------------------------------------------------------- */

static int async_poll_fn(MPIX_Async_thing thing)
{
    int done;
    (void)thing;
    if (pthread_mutex_trylock(&mpiacc_rp_pool.lock) != 0) return MPIX_ASYNC_NOPROGRESS;
    mpiacc_rp_batch_lazy_close_locked(); /* the packs this thread posted together start now (batch.c) */
    mpiacc_rp_progress_locked();
    done = mpiacc_rp_pool.nactive == 0;
    if (done) mpiacc_rp_pool.registered = 0;
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    return done ? MPIX_ASYNC_DONE : MPIX_ASYNC_NOPROGRESS;
}

/* ---- submission ---------------------------------------------------------- */

/* Lock held.  On failure, op has been disposed of. */
static int submit_locked(mpiacc_rp_op_t *op, MPI_Request *req)
{
    int mpi_errno = mpiacc_rp_greq_start(op);
    if (mpi_errno != MPI_SUCCESS) {
        mpiacc_rp_discard(op);
        return mpi_errno;
    }
    mpi_errno = op->proto->start(op);
    if (mpi_errno == MPI_SUCCESS && !mpiacc_rp_pool.registered) {
        mpi_errno = MPIX_Async_start(async_poll_fn, NULL, MPIX_STREAM_NULL);
        if (mpi_errno == MPI_SUCCESS) mpiacc_rp_pool.registered = 1;
    }
    if (mpi_errno != MPI_SUCCESS) {
        MPI_Request r = op->greq;
        mpiacc_rp_release_resources(op);
        if (op->detached) { /* completed early in start: the free below frees op */
            atomic_store(&op->holds, 1);
        } else {
            op->error = mpi_errno;
            atomic_store_explicit(&op->published, 1, memory_order_release);
            PMPI_Grequest_complete(r);
        }
        PMPI_Request_free(&r); /* frees op through the free callback */
        return mpi_errno;
    }
    mpiacc_rp_insert(op);
    mpiacc_rp_register(op);
    *req = op->greq;
    mpiacc_rp_progress_locked(); /* the call itself is a progress point */
    return MPI_SUCCESS;
}

/* The log lines of a new operation: its call (debug) and, the first time
 * this path is taken, the path (info). */
static void log_call(const mpiacc_rp_op_t *op)
{
    static const char *modes[] = {"", " (synchronous)", " (ready)"};
    const char *kind = op->be ? op->be->name : "host";
    char key[96];
    MPIACC_LOG(MPIACC_LOG_DEBUG,
               "op %llu: call: %s%s %s %d, tag %d, %lld x datatype = %lld bytes, %s backend, %s protocol, "
               "dependency %s",
               op->id, op->is_send ? "send" : "receive", op->is_send ? modes[op->mode % 3] : "",
               op->is_send ? "to" : "from", op->peer, op->tag, (long long)op->count, (long long)op->bytes, kind,
               op->proto->name, op->dep ? "captured" : "none");
    if (MPIACC_LOG_INFO <= mpiacc_log_level) {
        snprintf(key, sizeof key, "path %s %s %d", kind, op->proto->name, op->is_send);
        MPIACC_LOG_ONCE(MPIACC_LOG_INFO, key, "path: %s %s go through the %s protocol (first op %llu)", kind,
                        op->is_send ? "sends" : "receives", op->proto->name, op->id);
    }
}

int mpiacc_rp_submit(mpiacc_rp_op_t *op, MPI_Request *req, int locked)
{
    int mpi_errno = MPI_SUCCESS;
    log_call(op);
    if (op->proto->prepare && (mpi_errno = op->proto->prepare(op)) != MPI_SUCCESS) {
        mpiacc_rp_discard(op);
        return mpi_errno;
    }
    if (!locked) pthread_mutex_lock(&mpiacc_rp_pool.lock);
    mpi_errno = submit_locked(op, req);
    if (!locked) pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    return mpi_errno;
}
