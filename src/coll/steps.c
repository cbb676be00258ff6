/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/steps.c: the steps of a collective operation — dependencies, packs
 * into staging, unpacks — as the request pool's protocol for a
 * nonblocking call (mpiacc_coll_proto; states in src/reqpool/op.c) and in
 * the calling thread for a blocking one (mpiacc_coll_blocking).
 */
#include <sched.h>

#include "coll_internal.h"

/* ---- the protocol ------------------------------------------------------------- */

static mpiacc_coll_op_t *state_of(mpiacc_rp_op_t *op) { return op->pstate; }

/* Records the first error of a part (the collective still goes on). */
static void note_error(int *errp, int err)
{
    if (err != MPI_SUCCESS && *errp == MPI_SUCCESS) *errp = err;
}

/* Host-waiting backends' dependencies: *ready once every one is done. */
static void deps_ready(mpiacc_coll_op_t *c, int *errp, int *ready)
{
    *ready = 1;
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        int done = 1, err;
        if (!b->staged || b->dep_done || !b->be->host_waits || !b->dep) continue;
        err = b->be->test(b->dep, &done);
        if (err != MPI_SUCCESS) {
            note_error(errp, err);
            done = 1;
        }
        if (done) {
            b->be->release(b->dep);
            b->dep = NULL;
            b->dep_done = 1;
        } else {
            *ready = 0;
        }
    }
}

/* Enqueues the packs (packing) or unpacks of every staged slot. */
static int launch(mpiacc_coll_op_t *c, int *errp, int packing)
{
    int n = 0;
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        if (!b->staged) continue;
        for (int i = 0; i < b->nslots; i++) {
            mpiacc_coll_slot_t *sl = &b->slots[i];
            mpiacc_xfer_desc_t d;
            int err;
            if (!(packing ? sl->pack : sl->unpack) || !sl->t || sl->last == sl->first) continue;
            d = (mpiacc_xfer_desc_t){.buf = b->buf, .type = sl->t, .count = sl->ecount, .first = sl->first,
                                     .last = sl->last, .host = (char *)b->staging + sl->hoff};
            err = packing ? b->be->pack(&b->a, b->dep, &d, &sl->xfer) : b->be->unpack(&b->a, b->dep, &d, &sl->xfer);
            if (err != MPI_SUCCESS) note_error(errp, err);
            else n++;
        }
    }
    return n;
}

/* Whether every transfer enqueued is done (released then). */
static int all_done(mpiacc_coll_op_t *c, int *errp)
{
    int all = 1;
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        for (int i = 0; i < b->nslots; i++) {
            mpiacc_coll_slot_t *sl = &b->slots[i];
            int done = 1, err;
            if (!sl->xfer) continue;
            err = b->be->test(sl->xfer, &done);
            if (err != MPI_SUCCESS) {
                note_error(errp, err);
                done = 1;
            }
            if (done) {
                b->be->release(sl->xfer);
                sl->xfer = NULL;
            } else {
                all = 0;
            }
        }
    }
    return all;
}

static void packed(mpiacc_rp_op_t *op)
{
    mpiacc_coll_op_t *c = state_of(op);
    if (c->red_mirror) note_error(&op->error, mpiacc_coll_reduce_to_mirror(c));
    mpiacc_rp_move(op, MPIACC_RP_READY);
}

/* NEW or DEP_PENDING: packs after the dependencies. */
static void begin(mpiacc_rp_op_t *op)
{
    int ready;
    deps_ready(state_of(op), &op->error, &ready);
    if (!ready) {
        if (op->state != MPIACC_RP_DEP_PENDING) mpiacc_rp_move(op, MPIACC_RP_DEP_PENDING);
        return;
    }
    if (launch(state_of(op), &op->error, 1) > 0) mpiacc_rp_move(op, MPIACC_RP_PACKING);
    else packed(op);
}

static int start(mpiacc_rp_op_t *op)
{
    begin(op);
    return MPI_SUCCESS;
}

/* The collective is done on the host: unpacks (UNPACKING). */
static void unpack_all(mpiacc_rp_op_t *op)
{
    mpiacc_coll_op_t *c = state_of(op);
    if (c->red_mirror) note_error(&op->error, mpiacc_coll_reduce_from_mirror(c));
    launch(c, &op->error, 0);
    mpiacc_rp_move(op, MPIACC_RP_UNPACKING);
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    switch (op->state) {
    case MPIACC_RP_DEP_PENDING: begin(op); break;
    case MPIACC_RP_PACKING:
        if (all_done(state_of(op), &op->error)) packed(op);
        break;
    case MPIACC_RP_UNPACKING: *complete = all_done(state_of(op), &op->error); break;
    default: return mpiacc_err(MPIACC_ERRK_INTERN, "collective: unexpected state %d", (int)op->state);
    }
    return MPI_SUCCESS;
}

static int issue(mpiacc_rp_op_t *op)
{
    mpiacc_coll_op_t *c = state_of(op);
    return c->fam->post(c, &op->inner);
}

static int received(mpiacc_rp_op_t *op, int *complete)
{
    *complete = 0;
    op->bytes = 0;
    unpack_all(op);
    return MPI_SUCCESS;
}

void mpiacc_coll_proto_release(mpiacc_rp_op_t *op)
{
    mpiacc_coll_op_free(op->pstate);
    op->pstate = NULL;
}

const mpiacc_proto_t mpiacc_coll_proto = {
    .name = "collective",
    .start = start,
    .advance = advance,
    .issue = issue,
    .received = received,
    .release = mpiacc_coll_proto_release,
};

/* While a blocking call waits for device work or its turn. */
static void idle(void)
{
    MPIX_Stream_progress(MPIX_STREAM_NULL);
    sched_yield();
}

void mpiacc_coll_wait_turn(MPI_Comm comm)
{
    for (;;) {
        int busy;
        pthread_mutex_lock(&mpiacc_rp_pool.lock);
        busy = mpiacc_rp_sendq_has_peer(comm, MPIACC_RP_PEER_COLL, NULL);
        pthread_mutex_unlock(&mpiacc_rp_pool.lock);
        if (!busy) return;
        idle();
    }
}

/* A blocking call: packs (after the dependencies), its turn, MPI's
 * blocking collective, unpacks, all in the calling thread.  A part's error
 * is raised on the communicator once the collective is done. */
int mpiacc_coll_blocking(mpiacc_coll_op_t *c, int pooled)
{
    int err = MPI_SUCCESS, rc, ready;
    if (pooled) {
        for (deps_ready(c, &err, &ready); !ready; deps_ready(c, &err, &ready)) idle();
        launch(c, &err, 1);
        while (!all_done(c, &err)) idle();
        if (c->red_mirror) note_error(&err, mpiacc_coll_reduce_to_mirror(c));
    }
    mpiacc_coll_wait_turn(c->a.comm);
    rc = c->fam->post(c, NULL);
    if (rc != MPI_SUCCESS) return rc; /* raised by MPI */
    if (pooled) {
        if (c->red_mirror) note_error(&err, mpiacc_coll_reduce_from_mirror(c));
        launch(c, &err, 0);
        while (!all_done(c, &err)) idle();
    }
    return mpiacc_err_return_comm(c->a.comm, err);
}

