/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/ipc_nb.c: the nonblocking on-device collectives (MPI_Ibcast,
 * MPI_Iallreduce, ... on the IPC engine; ipc.h) as a
 * request-pool operation driven by MPI's progress (states and arrows:
 * src/reqpool/op.c, "Nonblocking collective on the device").
 *
 * At call time the process fills its record (local checks, exports, offers:
 * mpiacc_coll_ipc_begin) and captures the dependencies a staged fallback
 * would wait for.  The op is queued like every collective of the
 * communicator (MPIACC_RP_PEER_COLL) and, in its turn, posts the
 * PMPI_Iallgather of the records on the communicator's hidden duplicate.  It
 * keeps its place in the queue (sendq_hold) until it has posted its last
 * collective on the duplicate (the final PMPI_Iallreduce): later collectives of
 * the communicator, blocking on-device ones included, exchange on the duplicate
 * only after it, so every process posts the collectives of the duplicate in one
 * order, which MPI matches.
 *
 * Records in: every one ok, the algorithm's reads are enqueued (COPYING)
 * and polled with the backend's test(); a two-phase Allreduce exchanges
 * its flags and new exports (PMPI_Iallgather) between its phases; then the
 * PMPI_Iallreduce(MAX) of the error class, whose completion completes the
 * op with this process's error or a peer's.  A record not ok (on every
 * process alike): the exports are released and the op goes on as the
 * staged nonblocking collective (mpiacc_coll_proto), staging taken then.
 * Nothing here waits: MPIX_Request_is_complete and the backend's test().
 */
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "dispatch/dispatch.h"

static mpiacc_coll_op_t *coll_of(mpiacc_rp_op_t *op) { return op->pstate; }

void mpiacc_coll_ipc_nb_free(mpiacc_coll_ipc_t *ci)
{
    if (!ci) return;
    /* transfers still kept (an op failed or abandoned): released, not waited */
    for (int i = 0; i < ci->nxfer; i++) ci->xfer_be[i]->release(ci->xfers[i]);
    ci->nxfer = 0;
    mpiacc_coll_ipc_end(ci);
    if (ci->cs_ref) mpiacc_coll_comm_unref(ci->cs); /* may run in the progress hook: swept later */
    free(ci);
}

int mpiacc_coll_ipc_nb_prepare(mpiacc_coll_op_t *c, mpiacc_coll_comm_t *cs)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_coll_ipc_t *ci = calloc(1, sizeof *ci);
    if (!ci) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective");
    c->ipc = ci;
    ci->nb = 1;
    if (!cs || cs->hidden == MPI_COMM_NULL)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "%s: not a communicator of the IPC engine", mpiacc_coll_name(c->kind, 1));
    ci->cs = cs;
    /* the hidden duplicate stays until the op is done, even if the
     * application frees the communicator meanwhile (MPI lets pending
     * operations complete) */
    mpiacc_coll_comm_ref(cs);
    ci->cs_ref = 1;
    MPIACC_CHECK(mpiacc_coll_ipc_begin(ci, c));
    /* a staged fallback waits for the dependencies as they are now */
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        if (!b->staged || !b->used || b->dep) continue;
        MPIACC_CHECK(mpiacc_dispatch_backend(&b->a, b->buf, &b->be));
        if (b->be->capture) MPIACC_CHECK(b->be->capture(&b->a, b->buf, &b->dep));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Whether every kept transfer is done (released then); errors into ci->err. */
static int reads_done(mpiacc_coll_ipc_t *ci)
{
    int n = 0;
    for (int i = 0; i < ci->nxfer; i++) {
        int done = 1, err = ci->xfer_be[i]->test(ci->xfers[i], &done);
        if (err != MPI_SUCCESS) {
            if (ci->err == MPI_SUCCESS) ci->err = err;
            done = 1;
        }
        if (done) {
            ci->xfer_be[i]->release(ci->xfers[i]);
        } else {
            ci->xfers[n] = ci->xfers[i];
            ci->xfer_be[n++] = ci->xfer_be[i];
        }
    }
    ci->nxfer = n;
    return n == 0;
}

static void note(mpiacc_coll_ipc_t *ci, int err)
{
    if (err != MPI_SUCCESS && ci->err == MPI_SUCCESS) ci->err = err;
}

/* NEW: queued behind the communicator's earlier collectives. */
static int start(mpiacc_rp_op_t *op)
{
    mpiacc_rp_move(op, MPIACC_RP_READY);
    return MPI_SUCCESS;
}

/* READY, its turn: the records' exchange; the op keeps its place in the
 * queue until its last collective on the duplicate is posted. */
static int issue(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_coll_ipc_t *ci = coll_of(op)->ipc;
    MPIACC_CHECK(PMPI_Iallgather(ci->mine, (int)ci->rec_bytes, MPI_BYTE, ci->all, (int)ci->rec_bytes, MPI_BYTE,
                                 ci->cs->hidden, &op->inner));
    op->sendq_hold = 1;
    mpiacc_rp_move(op, MPIACC_RP_EXCHANGING);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* A record not ok: the staged collective from here (its first states). */
static int fallback(mpiacc_rp_op_t *op)
{
    mpiacc_coll_op_t *c = coll_of(op);
    mpiacc_coll_ipc_nb_free(c->ipc); /* nobody reads: the exports go */
    c->ipc = NULL;
    /* the analyses the local checks took; staging as a staged call's */
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < c->b[s].nslots; i++)
            if (c->b[s].slots[i].t) mpiacc_pack_type_release(c->b[s].slots[i].t), c->b[s].slots[i].t = NULL;
    op->proto = &mpiacc_coll_proto;
    op->sendq_hold = 0; /* still queued: READY issues in its turn */
    {
        int err = mpiacc_coll_stage_all(c);
        if (err != MPI_SUCCESS) return err;
    }
    return mpiacc_coll_proto.start(op);
}

/* The reads are done: the exchange between two phases, or the final flag
 * (the op leaves the queue: its collectives on the duplicate are all posted). */
static int after_reads(mpiacc_rp_op_t *op)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_coll_ipc_t *ci = coll_of(op)->ipc;
    if (ci->phase_wanted) {
        ci->phase_wanted = 0;
        MPIACC_CHECK(mpiacc_coll_ipc_phase_post(ci, ci->phase_side, ci->phase_lo, ci->phase_hi, &op->inner));
        ci->phase_wanted = -1; /* the exchange between the phases is posted */
        mpiacc_rp_move(op, MPIACC_RP_EXCHANGING);
        goto fn_exit;
    }
    ci->flag_mine = mpiacc_coll_ipc_error_flag(ci);
    ci->flag_peer = 0;
    MPIACC_CHECK(PMPI_Iallreduce(&ci->flag_mine, &ci->flag_peer, 1, MPI_INT, MPI_MAX, ci->cs->hidden, &op->inner));
    op->sendq_hold = 0;
    mpiacc_rp_sendq_remove(op);
    mpiacc_rp_move(op, MPIACC_RP_IN_FLIGHT);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    int mpi_errno = MPI_SUCCESS, peer = 0;
    mpiacc_coll_ipc_t *ci = coll_of(op)->ipc;
    *complete = 0;
    switch (op->state) {
    case MPIACC_RP_EXCHANGING:
        if (!MPIX_Request_is_complete(op->inner)) break;
        /* complete: waiting does not enter progress (as op.c's IN_FLIGHT) */
        mpi_errno = PMPI_Wait(&op->inner, MPI_STATUS_IGNORE);
        op->inner = MPI_REQUEST_NULL;
        MPIACC_CHECK(mpi_errno);
        if (ci->phase_wanted < 0) { /* between two phases */
            ci->phase_wanted = 0;
            mpiacc_coll_ipc_phase_end(ci, ci->phase_side, &peer);
            if (peer == 0 && ci->err == MPI_SUCCESS) note(ci, ci->g->finish(ci));
            mpiacc_rp_move(op, MPIACC_RP_COPYING);
        } else if (mpiacc_coll_ipc_decide(ci)) {
            note(ci, ci->g->run(ci));
            mpiacc_rp_move(op, MPIACC_RP_COPYING);
        } else {
            MPIACC_CHECK(fallback(op));
        }
        break;
    case MPIACC_RP_COPYING:
        if (reads_done(ci)) MPIACC_CHECK(after_reads(op));
        break;
    default: mpi_errno = mpiacc_err(MPIACC_ERRK_INTERN, "on-device collective: unexpected state %d", (int)op->state);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* IN_FLIGHT done: the final flag of every process is in. */
static int received(mpiacc_rp_op_t *op, int *complete)
{
    mpiacc_coll_op_t *c = coll_of(op);
    op->bytes = 0;
    if (op->error == MPI_SUCCESS) op->error = mpiacc_coll_ipc_outcome(c->ipc, c->ipc->flag_peer);
    mpiacc_coll_ipc_nb_free(c->ipc); /* every process is done reading: the exports go */
    c->ipc = NULL;
    *complete = 1;
    return MPI_SUCCESS;
}

const mpiacc_proto_t mpiacc_coll_ipc_proto = {
    .name = "collective on the device",
    .start = start,
    .advance = advance,
    .issue = issue,
    .received = received,
    .release = mpiacc_coll_proto_release,
};
