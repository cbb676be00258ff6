/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/dev_run.c: one device collective on the collective engine (NCCL),
 * blocking or not: the program (dev.c), the dependencies, the engine's run
 * in the MPI call, then
 *   - MPIACC_ORDER_STREAM (contiguous buffers): nothing to wait for, the
 *     call returns once the work is enqueued (a nonblocking call's request
 *     is complete at once);
 *   - blocking: the calling thread waits for the work's event, driving
 *     MPI's progress meanwhile;
 *   - nonblocking: a request-pool operation with the table
 *     mpiacc_coll_dev_proto (NEW -> COPYING -> DONE / ERROR, src/reqpool/op.c)
 *     completed from the event, tested in MPI's progress.
 * Every process enqueues its engine operations in the order the
 * collectives of the communicator are called (each in its own call), which
 * is all the engine needs; collectives staged through MPI on the same
 * communicator keep their own order in the send queue.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "dispatch/dispatch.h"

atomic_long mpiacc_coll_device_runs, mpiacc_coll_staged_runs, mpiacc_coll_engine_runs;

/* Whether two sides' attributes order their data alike. */
static int same_order(const mpiacc_attrs_t *x, const mpiacc_attrs_t *y)
{
    return x->has_stream == y->has_stream && x->stream == y->stream && x->has_event == y->has_event &&
           x->event == y->event && x->has_device == y->has_device && (!x->has_device || x->device == y->device);
}

/* The sides' dependencies that the work must wait for GPU-side: none for a
 * side whose work is on the stream the call runs on (MPIACC_STREAM);
 * otherwise captured now (the default stream's, or MPIACC_EVENT's), once
 * for two sides ordered alike. */
static int deps(mpiacc_coll_op_t *c, const mpiacc_attrs_t *a)
{
    int mpi_errno = MPI_SUCCESS, on_stream = a->has_stream && a->stream != NULL, captured = -1;
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        if (!b->used || !b->be) continue;
        if (on_stream && b->a.has_stream && b->a.stream == a->stream && !b->a.has_event) continue;
        if (captured >= 0 && same_order(&b->a, &c->b[captured].a)) continue;
        if (b->be->capture && !b->dep) MPIACC_CHECK(b->be->capture(&b->a, b->buf, &b->dep));
        captured = s;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int wait_engine(mpiacc_coll_comm_t *cs, void *xfer)
{
    int err = MPI_SUCCESS, done = 0;
    for (unsigned i = 0;; i++) {
        pthread_mutex_lock(&cs->lock);
        err = cs->ct->test(cs->broken ? NULL : cs->cc, xfer, &done);
        if (err != MPI_SUCCESS) mpiacc_coll_comm_fail_locked(cs, err);
        pthread_mutex_unlock(&cs->lock);
        if (err != MPI_SUCCESS || done) break;
        /* other operations (a device send a peer waits for) need MPI's progress */
        if (i >= 32) {
            MPIX_Stream_progress(MPIX_STREAM_NULL);
            if (i % 64 == 63) sched_yield();
        }
    }
    return err;
}

/* The error of a call on a communicator whose engine failed earlier. */
static int broken_error(const mpiacc_coll_op_t *c, const mpiacc_coll_comm_t *cs)
{
    mpiacc_errk_t k = cs->broken == MPI_ERR_ARG      ? MPIACC_ERRK_ARG
                      : cs->broken == MPI_ERR_INTERN ? MPIACC_ERRK_INTERN
                                                     : MPIACC_ERRK_BACKEND;
    return mpiacc_err(k, "%s: this communicator's %s communicator failed earlier (error class %d): its device "
                         "collectives fail",
                      mpiacc_coll_name(c->kind, c->a.nonblocking), cs->ct->name, cs->broken);
}

/* ---- the nonblocking operation --------------------------------------------------- */

static int start(mpiacc_rp_op_t *op)
{
    mpiacc_rp_move(op, MPIACC_RP_COPYING);
    return MPI_SUCCESS;
}

static int advance(mpiacc_rp_op_t *op, int *complete)
{
    int err = MPI_SUCCESS, done = 1;
    mpiacc_coll_op_t *c = op->pstate;
    mpiacc_coll_comm_t *cs = c->cs;
    mpiacc_rp_sendq_remove(op); /* in flight on the engine: later collectives need not wait for it */
    *complete = 0;
    if (c->xfer) {
        pthread_mutex_lock(&cs->lock);
        err = cs->ct->test(cs->broken ? NULL : cs->cc, c->xfer, &done);
        if (err != MPI_SUCCESS) mpiacc_coll_comm_fail_locked(cs, err);
        pthread_mutex_unlock(&cs->lock);
    }
    if (err == MPI_SUCCESS && done) *complete = 1;
    return err;
}

const mpiacc_proto_t mpiacc_coll_dev_proto = {
    .name = "collective on NCCL",
    .start = start,
    .advance = advance,
    .received = NULL,
    .release = mpiacc_coll_proto_release,
};

/* ---- the call ---------------------------------------------------------------------- */

int mpiacc_coll_dev_call(mpiacc_coll_op_t *c, mpiacc_coll_comm_t *cs)
{
    int mpi_errno = MPI_SUCCESS, s = c->b[MPIACC_COLL_R].used ? MPIACC_COLL_R : MPIACC_COLL_S;
    const char *name = mpiacc_coll_name(c->kind, c->a.nonblocking);
    MPI_Request *req = c->a.req, r = MPI_REQUEST_NULL;
    mpiacc_coll_prog_t P;
    mpiacc_bcoll_call_t call;
    mpiacc_rp_op_t *op;
    memset(&P, 0, sizeof P);
    for (int k = 0; k < 2; k++)
        if (c->b[k].used) MPIACC_CHECK(mpiacc_dispatch_backend(&c->b[k].a, c->b[k].buf, &c->b[k].be));
    MPIACC_CHECK(mpiacc_coll_dev_build(c, &P));
    MPIACC_CHECK(deps(c, &c->b[s].a));
    memset(&call, 0, sizeof call);
    call.a = &c->b[s].a;
    call.deps[0] = c->b[0].dep;
    call.deps[1] = c->b[1].dep;
    call.tmp_bytes = P.tmp;
    call.npack = P.npack, call.packs = P.packs;
    call.nstep = P.nstep, call.steps = P.steps;
    call.nunpack = P.nunpack, call.unpacks = P.unpacks;
    /* stream order leaves nothing to wait for on the host with contiguous
     * buffers only: packs and unpacks need their datatypes' device copies
     * until they are done, so the host waits for those */
    call.stream_order = c->b[s].a.stream_order && P.npack == 0 && P.nunpack == 0 && P.tmp == 0;
    call.name = name;
    pthread_mutex_lock(&cs->lock);
    if (cs->broken) mpi_errno = broken_error(c, cs);
    else if ((mpi_errno = cs->ct->run(cs->cc, &call, &c->xfer)) != MPI_SUCCESS)
        mpiacc_coll_comm_fail_locked(cs, mpi_errno);
    pthread_mutex_unlock(&cs->lock);
    MPIACC_CHECK(mpi_errno);
    atomic_fetch_add(&mpiacc_coll_device_runs, 1);
    atomic_fetch_add(&mpiacc_coll_engine_runs, 1);
    c->cs = cs;
    if (!c->a.nonblocking) {
        if (c->xfer) mpi_errno = wait_engine(cs, c->xfer);
        goto fn_exit;
    }
    /* the operation holds the state: the communicator may be freed first */
    mpiacc_coll_comm_ref(cs);
    c->cs_ref = 1;
    if (!(op = mpiacc_rp_op_alloc(0, MPIACC_RP_SEND_STD, c->a.rbuf, 0, MPIACC_RP_PEER_COLL, c->kind, c->a.comm)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "%s: out of memory for an operation", name);
    op->is_coll = 1;
    op->st_source = MPI_ANY_SOURCE;
    op->st_tag = MPI_ANY_TAG;
    op->proto = &mpiacc_coll_dev_proto;
    op->be = c->b[s].be;
    op->attrs.kind = c->b[s].a.kind;
    op->pstate = c;
    c = NULL; /* the operation's: submit disposes of it on failure */
    MPIACC_CHECK(mpiacc_rp_submit(op, &r, 0));
    *req = r;
fn_exit:
    mpiacc_coll_prog_free(&P);
    mpiacc_coll_op_free(c);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
