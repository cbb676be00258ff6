/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/ipc.c: the framework of the IPC collective engine (see ipc.h): which calls may take the path, the
 * records and their exchange, the reads, the final synchronisation that
 * carries the error flag.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "dispatch/dispatch.h"

static const char *const cause_names[MPIACC_COLL_IPC_NCAUSES] = {
    [MPIACC_COLL_IPC_NO_TABLE] = "a buffer of a kind without IPC (host or OpenCL)",
    [MPIACC_COLL_IPC_EXPORT] = "a buffer could not be exported",
    [MPIACC_COLL_IPC_RECORD] = "the blocks and datatype blobs do not fit in the exchanged record",
    [MPIACC_COLL_IPC_SHAPE] = "a call shape the on-device algorithm does not handle",
    [MPIACC_COLL_IPC_REDUCE] = "a reduction the device does not compute (type or operation)",
    [MPIACC_COLL_IPC_MIXED] = "send and receive buffers of different kinds",
    [MPIACC_COLL_IPC_ERROR] = "a local error before the exchange",
};
static atomic_int noted[MPIACC_COLL_IPC_NCAUSES];

static const mpiacc_coll_ipc_alg_t *alg_of(int kind)
{
    const mpiacc_coll_ipc_alg_t *g = mpiacc_coll_ipc_move_alg(kind);
    return g ? g : mpiacc_coll_ipc_reduce_alg(kind);
}

int mpiacc_coll_ipc_has(int kind)
{
    return alg_of(kind) != NULL;
}

/* ---- records -------------------------------------------------------------------- */

const mpiacc_coll_ipc_hdr_t *mpiacc_coll_ipc_rec(const mpiacc_coll_ipc_t *ci, int r)
{
    return (const mpiacc_coll_ipc_hdr_t *)(ci->all + (size_t)r * ci->rec_bytes);
}

const mpiacc_coll_ipc_blk_t *mpiacc_coll_ipc_blk(const mpiacc_coll_ipc_t *ci, int r, int i)
{
    const mpiacc_coll_ipc_hdr_t *h = mpiacc_coll_ipc_rec(ci, r);
    if (i < 0 || i >= h->nblk) return NULL;
    return (const mpiacc_coll_ipc_blk_t *)((const unsigned char *)h + sizeof *h) + i;
}

int mpiacc_coll_ipc_offer(mpiacc_coll_ipc_t *ci, int side, MPI_Aint disp, MPI_Count count, MPI_Datatype type,
                          int dest)
{
    if (ci->noffer == ci->offer_cap) {
        int cap = ci->offer_cap ? 2 * ci->offer_cap : 8;
        void *p = realloc(ci->offers, sizeof *ci->offers * (size_t)cap);
        if (!p) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective");
        ci->offers = p;
        ci->offer_cap = cap;
    }
    ci->offers[ci->noffer++] = (mpiacc_coll_ipc_offer_t){.disp = disp, .count = count, .type = type, .dest = dest,
                                                         .side = side};
    return MPI_SUCCESS;
}

void mpiacc_coll_ipc_moved(const mpiacc_coll_ipc_t *ci, int r, int s, MPI_Aint disp, mpiacc_ipc_export_t *x)
{
    *x = mpiacc_coll_ipc_rec(ci, r)->x[s];
    x->offset += disp;
    x->lo -= disp;
    x->hi -= disp;
}

int mpiacc_coll_ipc_addressable(const mpiacc_coll_ipc_t *ci, int s)
{
    return ci->c->b[s].a.kind != MPIACC_KIND_OPENCL;
}

/* Exports side s of this process (the span of its offers, or [lo, hi)). */
static int export_side(mpiacc_coll_ipc_t *ci, int s, MPI_Aint lo, MPI_Aint hi, mpiacc_ipc_export_t *x, int *ok)
{
    mpiacc_coll_buf_t *b = &ci->c->b[s];
    int err;
    *ok = 0;
    if (hi <= lo) return MPI_SUCCESS;
    err = ci->ipc->export_buf(&b->a, b->dep, b->buf, lo, hi, x, &ci->token[s], ok);
    return err;
}

/* The span of side s's offers: *lo, *hi (hi <= lo: nothing offered). */
static int offers_span(mpiacc_coll_ipc_t *ci, int s, MPI_Aint *lo, MPI_Aint *hi)
{
    int mpi_errno = MPI_SUCCESS, any = 0;
    *lo = *hi = 0;
    for (int i = 0; i < ci->noffer; i++) {
        mpiacc_coll_ipc_offer_t *o = &ci->offers[i];
        mpiacc_pack_type_t *t = NULL;
        MPI_Count l, h;
        if (o->side != s || o->count <= 0 || mpiacc_coll_psize(o->type) == 0) continue;
        MPIACC_CHECK(mpiacc_pack_type_get(o->type, &t));
        mpi_errno = mpiacc_pack_span(t, o->count, &l, &h);
        mpiacc_pack_type_release(t);
        MPIACC_CHECK(mpi_errno);
        l += o->disp, h += o->disp;
        if (!any || l < *lo) *lo = (MPI_Aint)l;
        if (!any || h > *hi) *hi = (MPI_Aint)h;
        any = 1;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* This process's record: exports and offers (cause set when it cannot). */
static int fill_record(mpiacc_coll_ipc_t *ci)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_coll_ipc_hdr_t *h = (mpiacc_coll_ipc_hdr_t *)ci->mine;
    mpiacc_coll_ipc_blk_t *blk = (mpiacc_coll_ipc_blk_t *)(ci->mine + sizeof *h);
    size_t used = sizeof *h + (ci->spans_only ? 0 : sizeof *blk * (size_t)ci->noffer);
    if (used > ci->rec_bytes) {
        ci->cause = MPIACC_COLL_IPC_RECORD;
        return MPI_SUCCESS;
    }
    for (int s = 0; s < 2; s++) {
        MPI_Aint lo, hi;
        int ok = 0, err;
        MPIACC_CHECK(offers_span(ci, s, &lo, &hi));
        if (hi <= lo) continue;
        err = export_side(ci, s, lo, hi, &h->x[s], &ok);
        if (err != MPI_SUCCESS || !ok) {
            ci->cause = MPIACC_COLL_IPC_EXPORT;
            return MPI_SUCCESS;
        }
        ci->exported[s] = 1;
        h->has[s] = 1;
    }
    for (int i = 0; i < ci->noffer && !ci->spans_only; i++) {
        mpiacc_coll_ipc_offer_t *o = &ci->offers[i];
        mpiacc_pack_type_t *t = NULL;
        int dup = -1;
        blk[i] = (mpiacc_coll_ipc_blk_t){.disp = o->disp, .count = o->count, .dest = o->dest, .side = o->side};
        if (o->count <= 0 || o->type == MPI_DATATYPE_NULL) continue; /* nothing to read: no blob */
        for (int j = 0; j < i && dup < 0; j++)
            if (ci->offers[j].type == o->type && blk[j].blob_bytes) dup = j;
        if (dup >= 0) {
            blk[i].blob_off = blk[dup].blob_off;
            blk[i].blob_bytes = blk[dup].blob_bytes;
            continue;
        }
        MPIACC_CHECK(mpiacc_pack_type_get(o->type, &t));
        if (used + t->blob_bytes > ci->rec_bytes) {
            mpiacc_pack_type_release(t);
            ci->cause = MPIACC_COLL_IPC_RECORD;
            return MPI_SUCCESS;
        }
        memcpy(ci->mine + used, t->blob, t->blob_bytes);
        blk[i].blob_off = (uint32_t)used;
        blk[i].blob_bytes = (uint32_t)t->blob_bytes;
        used += (t->blob_bytes + 7) & ~(size_t)7;
        mpiacc_pack_type_release(t);
    }
    h->nblk = ci->spans_only ? 0 : ci->noffer;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- reads ------------------------------------------------------------------------ */

static void note_err(mpiacc_coll_ipc_t *ci, int err)
{
    if (err != MPI_SUCCESS && ci->err == MPI_SUCCESS) ci->err = err;
}

void mpiacc_coll_ipc_keep(mpiacc_coll_ipc_t *ci, const mpiacc_backend_t *be, void *xfer)
{
    if (!xfer) return;
    if (ci->nxfer == ci->xfer_cap) {
        int cap = ci->xfer_cap ? 2 * ci->xfer_cap : 8;
        void *p = realloc(ci->xfers, sizeof *ci->xfers * (size_t)cap);
        void *q = p ? realloc(ci->xfer_be, sizeof *ci->xfer_be * (size_t)cap) : NULL;
        if (p) ci->xfers = p;
        if (q) ci->xfer_be = q;
        if (!p || !q) { /* cannot keep it: wait for it now */
            int done = 0;
            while (!done && be->test(xfer, &done) == MPI_SUCCESS) sched_yield();
            be->release(xfer);
            note_err(ci, mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective"));
            return;
        }
        ci->xfer_cap = cap;
    }
    ci->xfers[ci->nxfer] = xfer;
    ci->xfer_be[ci->nxfer++] = be;
}

void mpiacc_coll_ipc_wait(mpiacc_coll_ipc_t *ci)
{
    for (int i = 0; i < ci->nxfer; i++) {
        int done = 0, err;
        while ((err = ci->xfer_be[i]->test(ci->xfers[i], &done)) == MPI_SUCCESS && !done) {
            MPIX_Stream_progress(MPIX_STREAM_NULL);
            sched_yield();
        }
        note_err(ci, err);
        ci->xfer_be[i]->release(ci->xfers[i]);
    }
    ci->nxfer = 0;
}

void mpiacc_coll_ipc_read(mpiacc_coll_ipc_t *ci, int r, int i, int slot)
{
    mpiacc_coll_op_t *c = ci->c;
    mpiacc_coll_buf_t *b = &c->b[MPIACC_COLL_R];
    const mpiacc_coll_ipc_blk_t *k = mpiacc_coll_ipc_blk(ci, r, i);
    mpiacc_coll_slot_t *sl;
    const unsigned char *blob;
    MPI_Count src_bytes, dst_bytes;
    mpiacc_ipc_export_t x;
    mpiacc_xfer_desc_t d;
    void *xfer = NULL;
    int err;
    if (slot < 0 || slot >= b->nslots) {
        note_err(ci, mpiacc_err(MPIACC_ERRK_INTERN, "%s: no receive block %d", mpiacc_coll_name(c->kind, 0), slot));
        return;
    }
    sl = &b->slots[slot];
    dst_bytes = sl->count > 0 ? sl->count * mpiacc_coll_psize(sl->type) : 0;
    if (!k) {
        if (dst_bytes > 0)
            note_err(ci, mpiacc_err(MPIACC_ERRK_INTERN, "%s: process %d offers no block for this process",
                                    mpiacc_coll_name(c->kind, 0), r));
        return;
    }
    blob = (const unsigned char *)mpiacc_coll_ipc_rec(ci, r) + k->blob_off;
    src_bytes = k->count > 0 && k->blob_bytes ? k->count * (MPI_Count)mpiacc_tv_size((const void *)blob) : 0;
    if (src_bytes > dst_bytes) {
        note_err(ci, mpiacc_err(MPIACC_ERRK_TRUNCATE,
                                "%s: process %d sends %lld bytes to a receive block of %lld bytes (block %d)",
                                mpiacc_coll_name(c->kind, 0), r, (long long)src_bytes, (long long)dst_bytes, slot));
        return;
    }
    if (src_bytes == 0) return;
    if (!sl->t) {
        err = mpiacc_pack_type_get(sl->type, &sl->t);
        if (err != MPI_SUCCESS) {
            note_err(ci, err);
            return;
        }
    }
    mpiacc_coll_ipc_moved(ci, r, k->side, (MPI_Aint)k->disp, &x);
    d = (mpiacc_xfer_desc_t){
        .buf = (char *)b->buf + sl->disp, .type = sl->t, .count = sl->count, .first = 0, .last = src_bytes};
    err = ci->ipc->import_copy(&b->a, b->dep, &x, blob, k->blob_bytes, k->count, &d, &xfer);
    note_err(ci, err);
    if (err == MPI_SUCCESS) mpiacc_coll_ipc_keep(ci, b->be, xfer);
}

/* ---- synchronisation --------------------------------------------------------------- */

int mpiacc_coll_ipc_error_flag(const mpiacc_coll_ipc_t *ci)
{
    return ci->err == MPI_SUCCESS ? 0 : mpiacc_err_class(ci->err);
}

/* The error flag of every process: *peer = the largest error class. */
static int flag_sync(mpiacc_coll_ipc_t *ci, int *peer)
{
    int mine = mpiacc_coll_ipc_error_flag(ci);
    *peer = 0;
    return PMPI_Allreduce(&mine, peer, 1, MPI_INT, MPI_MAX, ci->cs->hidden);
}

int mpiacc_coll_ipc_phase_post(mpiacc_coll_ipc_t *ci, int s, MPI_Aint lo, MPI_Aint hi, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS, P = ci->c->size, ok = 0;
    mpiacc_coll_ipc_phase_rec_t *mine = &ci->phase_mine;
    memset(mine, 0, sizeof *mine);
    ci->phase_token = NULL;
    ci->phase_ok = 0;
    if (ci->err == MPI_SUCCESS && hi > lo) {
        note_err(ci, ci->ipc->export_buf(&ci->c->b[s].a, ci->c->b[s].dep, ci->c->b[s].buf, lo, hi, &mine->x,
                                         &ci->phase_token, &ok));
        if (ci->err == MPI_SUCCESS && !ok)
            note_err(ci, mpiacc_err(MPIACC_ERRK_BUFFER, "%s: the buffer could not be exported again between phases",
                                    mpiacc_coll_name(ci->c->kind, 0)));
        mine->has = ok;
        ci->phase_ok = ok;
    }
    mine->cls = mpiacc_coll_ipc_error_flag(ci);
    if (!ci->phase_all && !(ci->phase_all = malloc(sizeof *ci->phase_all * (size_t)P)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a collective");
    if (req)
        MPIACC_CHECK(PMPI_Iallgather(mine, (int)sizeof *mine, MPI_BYTE, ci->phase_all, (int)sizeof *mine, MPI_BYTE,
                                     ci->cs->hidden, req));
    else
        MPIACC_CHECK(PMPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, ci->phase_all, (int)sizeof *mine, MPI_BYTE,
                                    ci->cs->hidden));
fn_exit:
    return mpi_errno;
fn_fail:
    /* the exchange failed: the new export goes */
    if (ci->phase_ok && ci->ipc->export_release) ci->ipc->export_release(ci->phase_token);
    ci->phase_ok = 0;
    goto fn_exit;
}

void mpiacc_coll_ipc_phase_end(mpiacc_coll_ipc_t *ci, int s, int *peer_err)
{
    *peer_err = 0;
    /* every process is done with the previous phase: the old export goes */
    if (ci->exported[s] && ci->ipc->export_release) ci->ipc->export_release(ci->token[s]);
    ci->exported[s] = ci->phase_ok;
    ci->token[s] = ci->phase_token;
    ci->phase_ok = 0;
    for (int r = 0; r < ci->c->size; r++) {
        mpiacc_coll_ipc_hdr_t *h = (mpiacc_coll_ipc_hdr_t *)(ci->all + (size_t)r * ci->rec_bytes);
        if (ci->phase_all[r].cls > *peer_err) *peer_err = ci->phase_all[r].cls;
        h->x[s] = ci->phase_all[r].x;
        h->has[s] = ci->phase_all[r].has;
    }
}

int mpiacc_coll_ipc_phase(mpiacc_coll_ipc_t *ci, int s, MPI_Aint lo, MPI_Aint hi, int *peer_err)
{
    int mpi_errno = mpiacc_coll_ipc_phase_post(ci, s, lo, hi, NULL);
    *peer_err = 0;
    if (mpi_errno == MPI_SUCCESS) mpiacc_coll_ipc_phase_end(ci, s, peer_err);
    return mpi_errno;
}

/* ---- the call ---------------------------------------------------------------------- */

/* This process's local checks: every used buffer of one kind with an IPC
 * table, MPIACC_IPC on; then the backend, the dependencies. */
static int local_checks(mpiacc_coll_ipc_t *ci)
{
    int mpi_errno = MPI_SUCCESS, kind = -1;
    mpiacc_coll_op_t *c = ci->c;
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        int any = 0;
        for (int i = 0; i < b->nslots; i++) {
            if (b->slots[i].count < 0) { /* the staged path reports it */
                ci->cause = MPIACC_COLL_IPC_ERROR;
                return MPI_SUCCESS;
            }
            if (b->slots[i].count > 0 && b->slots[i].type != MPI_DATATYPE_NULL) any = 1;
        }
        if (!b->used || !any) continue;
        if (kind >= 0 && b->a.kind != kind) {
            ci->cause = MPIACC_COLL_IPC_MIXED;
            return MPI_SUCCESS;
        }
        kind = b->a.kind;
        if (kind == MPIACC_KIND_NONE || kind == MPIACC_KIND_OPENCL || mpiacc_core_disabled) {
            ci->cause = MPIACC_COLL_IPC_NO_TABLE;
            return MPI_SUCCESS;
        }
        MPIACC_CHECK(mpiacc_dispatch_backend(&b->a, b->buf, &b->be));
        ci->ipc = mpiacc_coll_ipc_table(kind, b->be);
        if (!ci->ipc || !ci->ipc->export_buf || !ci->ipc->import_copy) {
            ci->cause = MPIACC_COLL_IPC_NO_TABLE;
            return MPI_SUCCESS;
        }
        /* the receive blocks lie in the buffer (the GPU writes them) */
        for (int i = 0; s == MPIACC_COLL_R && b->be->validate_span && i < b->nslots; i++) {
            mpiacc_coll_slot_t *sl = &b->slots[i];
            mpiacc_xfer_desc_t d;
            MPI_Count bytes;
            if (sl->count <= 0 || sl->type == MPI_DATATYPE_NULL) continue;
            if ((bytes = sl->count * mpiacc_coll_psize(sl->type)) == 0) continue;
            if (!sl->t) MPIACC_CHECK(mpiacc_pack_type_get(sl->type, &sl->t));
            d = (mpiacc_xfer_desc_t){.buf = (char *)b->buf + sl->disp, .type = sl->t, .count = sl->count, .first = 0,
                                     .last = bytes};
            MPIACC_CHECK(b->be->validate_span(&b->a, &d));
        }
        if (b->be->capture) MPIACC_CHECK(b->be->capture(&b->a, b->buf, &b->dep));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void release_exports(mpiacc_coll_ipc_t *ci)
{
    for (int s = 0; s < 2; s++)
        if (ci->exported[s] && ci->ipc && ci->ipc->export_release) ci->ipc->export_release(ci->token[s]);
    ci->exported[0] = ci->exported[1] = 0;
}

int mpiacc_coll_ipc_begin(mpiacc_coll_ipc_t *ci, mpiacc_coll_op_t *c)
{
    int mpi_errno = MPI_SUCCESS, P = c->size;
    ci->c = c;
    ci->g = alg_of(c->kind);
    ci->rec_bytes = ci->g->payload(ci);
    ci->spans_only = ci->rec_bytes == 0; /* the offers only say what to export */
    ci->rec_bytes = (sizeof(mpiacc_coll_ipc_hdr_t) + ci->rec_bytes + 63) & ~(size_t)63;
    if (!(ci->mine = calloc(1, ci->rec_bytes)) || !(ci->all = malloc(ci->rec_bytes * (size_t)P)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a collective");
    /* a local error before the exchange only makes this record not ok: the
     * staged path (which every process then takes) reports it */
    if (local_checks(ci) != MPI_SUCCESS) ci->cause = MPIACC_COLL_IPC_ERROR;
    if (ci->cause == MPIACC_COLL_IPC_OK && ci->g->prepare(ci) != MPI_SUCCESS) ci->cause = MPIACC_COLL_IPC_ERROR;
    if (ci->cause == MPIACC_COLL_IPC_OK && fill_record(ci) != MPI_SUCCESS) ci->cause = MPIACC_COLL_IPC_ERROR;
    ((mpiacc_coll_ipc_hdr_t *)ci->mine)->ok = ci->cause;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_coll_ipc_decide(mpiacc_coll_ipc_t *ci)
{
    int first_bad = -1, cause;
    for (int r = 0; r < ci->c->size && first_bad < 0; r++)
        if (mpiacc_coll_ipc_rec(ci, r)->ok != MPIACC_COLL_IPC_OK) first_bad = r;
    if (first_bad < 0) {
        atomic_fetch_add(&mpiacc_coll_device_runs, 1);
        return 1;
    }
    cause = mpiacc_coll_ipc_rec(ci, first_bad)->ok;
    if (cause <= 0 || cause >= MPIACC_COLL_IPC_NCAUSES) cause = MPIACC_COLL_IPC_SHAPE;
    if (mpiacc_log_level >= MPIACC_LOG_INFO && !atomic_exchange(&noted[cause], 1))
        mpiacc_log_write(MPIACC_LOG_INFO,
                         "collectives on the IPC engine staged through host memory: %s "
                         "(first: %s, process %d; reported once per cause)",
                         cause_names[cause], mpiacc_coll_name(ci->c->kind, ci->nb), first_bad);
    atomic_fetch_add(&mpiacc_coll_staged_runs, 1);
    return 0;
}

int mpiacc_coll_ipc_outcome(const mpiacc_coll_ipc_t *ci, int peer)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (ci->err != MPI_SUCCESS) return ci->err;
    if (peer == 0) return MPI_SUCCESS;
    PMPI_Error_string(peer, s, &len);
    return mpiacc_err(MPIACC_ERRK_BACKEND, "%s: another process failed its part of the on-device collective "
                                           "(error class %d: %s)",
                      mpiacc_coll_name(ci->c->kind, ci->nb), peer, s);
}

void mpiacc_coll_ipc_end(mpiacc_coll_ipc_t *ci)
{
    release_exports(ci);
    if (ci->phase_ok && ci->ipc && ci->ipc->export_release) ci->ipc->export_release(ci->phase_token);
    ci->phase_ok = 0;
    if (ci->t) mpiacc_pack_type_release(ci->t);
    ci->t = NULL;
    free(ci->offers);
    free(ci->xfers);
    free(ci->xfer_be);
    free(ci->mine);
    free(ci->all);
    free(ci->phase_all);
    ci->offers = NULL, ci->xfers = NULL, ci->xfer_be = NULL, ci->mine = ci->all = NULL, ci->phase_all = NULL;
}

int mpiacc_coll_ipc_run(mpiacc_coll_op_t *c, mpiacc_coll_comm_t *cs, int *done)
{
    int mpi_errno = MPI_SUCCESS, peer = 0;
    mpiacc_coll_ipc_t ci;
    memset(&ci, 0, sizeof ci);
    *done = 0;
    if (c->a.nonblocking || !alg_of(c->kind) || !cs || cs->hidden == MPI_COMM_NULL) return MPI_SUCCESS;
    ci.cs = cs;
    /* nonblocking calls of this communicator queued earlier exchange on
     * the duplicate too: MPI matches collectives in call order */
    mpiacc_coll_wait_turn(c->a.comm);
    MPIACC_CHECK(mpiacc_coll_ipc_begin(&ci, c));
    MPIACC_CHECK(PMPI_Allgather(ci.mine, (int)ci.rec_bytes, MPI_BYTE, ci.all, (int)ci.rec_bytes, MPI_BYTE,
                                ci.cs->hidden));
    if (!mpiacc_coll_ipc_decide(&ci)) goto fn_exit; /* staged, like every other process */
    *done = 1;
    note_err(&ci, ci.g->run(&ci));
    mpiacc_coll_ipc_wait(&ci);
    MPIACC_CHECK(flag_sync(&ci, &peer));
    mpi_errno = mpiacc_coll_ipc_outcome(&ci, peer);
fn_exit:
    mpiacc_coll_ipc_end(&ci);
    return mpi_errno;
fn_fail:
    if (ci.nxfer) mpiacc_coll_ipc_wait(&ci);
    *done = 1;
    goto fn_exit;
}
