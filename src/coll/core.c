/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/core.c: the collective operation — call-time checks, the buffers'
 * blocks (slots) that a family planned, their staging, and the protocol
 * table the request pool drives (states: src/reqpool/op.c, "Collective").
 * A device part that fails to pack or unpack does not stop the collective:
 * the PMPI collective is still posted (the other processes would wait
 * forever otherwise) and the operation completes with the error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "dispatch/dispatch.h"
#include "dispatch/memkind.h"
#include "protocol/protocol.h"
#include "core/env.h"

static const char *const names[MPIACC_COLL_NKINDS] = {
    [MPIACC_COLL_BCAST] = "Bcast",
    [MPIACC_COLL_REDUCE] = "Reduce",
    [MPIACC_COLL_ALLREDUCE] = "Allreduce",
    [MPIACC_COLL_REDUCE_LOCAL] = "Reduce_local",
    [MPIACC_COLL_REDUCE_SCATTER] = "Reduce_scatter",
    [MPIACC_COLL_REDUCE_SCATTER_BLOCK] = "Reduce_scatter_block",
    [MPIACC_COLL_SCAN] = "Scan",
    [MPIACC_COLL_EXSCAN] = "Exscan",
    [MPIACC_COLL_GATHER] = "Gather",
    [MPIACC_COLL_GATHERV] = "Gatherv",
    [MPIACC_COLL_SCATTER] = "Scatter",
    [MPIACC_COLL_SCATTERV] = "Scatterv",
    [MPIACC_COLL_ALLGATHER] = "Allgather",
    [MPIACC_COLL_ALLGATHERV] = "Allgatherv",
    [MPIACC_COLL_ALLTOALL] = "Alltoall",
    [MPIACC_COLL_ALLTOALLV] = "Alltoallv",
    [MPIACC_COLL_ALLTOALLW] = "Alltoallw",
    [MPIACC_COLL_NEIGHBOR_ALLGATHER] = "Neighbor_allgather",
    [MPIACC_COLL_NEIGHBOR_ALLGATHERV] = "Neighbor_allgatherv",
    [MPIACC_COLL_NEIGHBOR_ALLTOALL] = "Neighbor_alltoall",
    [MPIACC_COLL_NEIGHBOR_ALLTOALLV] = "Neighbor_alltoallv",
    [MPIACC_COLL_NEIGHBOR_ALLTOALLW] = "Neighbor_alltoallw",
    [MPIACC_COLL_BARRIER] = "Barrier",
};

static char full_names[MPIACC_COLL_NKINDS][2][40];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_init(void)
{
    for (int k = 0; k < MPIACC_COLL_NKINDS; k++) {
        snprintf(full_names[k][0], sizeof full_names[k][0], "MPI_%s", names[k]);
        snprintf(full_names[k][1], sizeof full_names[k][1], "MPI_I%c%s", names[k][0] - 'A' + 'a', names[k] + 1);
    }
}

const char *mpiacc_coll_name(int kind, int nonblocking)
{
    if (kind < 0 || kind >= MPIACC_COLL_NKINDS) return "MPI collective";
    pthread_once(&names_once, names_init);
    return full_names[kind][nonblocking ? 1 : 0];
}

static const mpiacc_coll_family_t *family_of(int kind)
{
    switch (kind) {
    case MPIACC_COLL_BCAST: return &mpiacc_coll_bcast_family;
    case MPIACC_COLL_BARRIER: return &mpiacc_coll_barrier_family;
    case MPIACC_COLL_REDUCE:
    case MPIACC_COLL_ALLREDUCE:
    case MPIACC_COLL_REDUCE_LOCAL:
    case MPIACC_COLL_REDUCE_SCATTER:
    case MPIACC_COLL_REDUCE_SCATTER_BLOCK:
    case MPIACC_COLL_SCAN:
    case MPIACC_COLL_EXSCAN: return &mpiacc_coll_reduce_family;
    case MPIACC_COLL_GATHER:
    case MPIACC_COLL_GATHERV:
    case MPIACC_COLL_SCATTER:
    case MPIACC_COLL_SCATTERV:
    case MPIACC_COLL_ALLGATHER:
    case MPIACC_COLL_ALLGATHERV: return &mpiacc_coll_gather_family;
    case MPIACC_COLL_ALLTOALL:
    case MPIACC_COLL_ALLTOALLV:
    case MPIACC_COLL_ALLTOALLW: return &mpiacc_coll_alltoall_family;
    default: return &mpiacc_coll_neighbor_family;
    }
}

/* ---- buffers ------------------------------------------------------------------ */

/* MPI_ERR_TYPE when the device receive blocks surely write some byte twice:
 * a block on its own, or, in a collective that moves data, all of them
 * together (more bytes than their span holds).  MPI makes such a call
 * erroneous; on a device the writes land in no fixed order (the host
 * unpack keeps MPI's order: host buffers are not checked). */
static int receive_once(const mpiacc_coll_op_t *c, mpiacc_coll_buf_t *b)
{
    int mpi_errno = MPI_SUCCESS, any = 0;
    MPI_Count total = 0, lo = 0, hi = 0;
    for (int i = 0; i < b->nslots; i++) {
        mpiacc_coll_slot_t *sl = &b->slots[i];
        mpiacc_pack_type_t *t = NULL;
        MPI_Count l, h, bytes;
        if (sl->count <= 0 || sl->type == MPI_DATATYPE_NULL) continue;
        MPIACC_CHECK(mpiacc_pack_type_get(sl->type, &t));
        /* (no span: the transfer reports it; each block's bytes below 2^62 then) */
        if (t->size > 0 && mpiacc_pack_span(t, sl->count, &l, &h) == MPI_SUCCESS) {
            bytes = t->size * sl->count;
            if (bytes > h - l) { /* this block on its own: the message names it */
                char what[32] = "";
                if (b->nslots > 1) snprintf(what, sizeof what, " of block %d", i);
                mpi_errno = mpiacc_pack_check_receive(t, sl->count, what);
            }
            if (__builtin_add_overflow(total, bytes, &total)) total = INT64_MAX;
            if (!any || sl->disp + l < lo) lo = sl->disp + l;
            if (!any || sl->disp + h > hi) hi = sl->disp + h;
            any = 1;
        }
        mpiacc_pack_type_release(t);
        MPIACC_CHECK(mpi_errno);
    }
    if (any && !c->fam->reduction && total > hi - lo) /* (a reduction's blocks describe its vector) */
        MPIACC_FAIL(MPIACC_ERRK_TYPE,
                    "the receive blocks write %lld bytes within %lld, some twice (MPI: no location of a "
                    "collective's receive buffer may be written more than once)",
                    (long long)total, (long long)(hi - lo));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Whether buffer s is staged: its blocks' datatypes (those with data) are
 * all of one kind; a device kind (or host with an event; in a reduction
 * any tagged kind, whose datatype MPI would refuse) is staged. */
static int classify(mpiacc_coll_op_t *c, int s, const char *name)
{
    int mpi_errno = MPI_SUCCESS, seen = 0;
    mpiacc_coll_buf_t *b = &c->b[s];
    for (int i = 0; i < b->nslots; i++) {
        mpiacc_attrs_t a;
        if (b->slots[i].count == 0 || b->slots[i].type == MPI_DATATYPE_NULL) continue;
        MPIACC_CHECK(mpiacc_dispatch_attrs(b->slots[i].type, b->buf, c->a.comm, &a));
        if (!seen) {
            b->a = a;
            seen = 1;
        } else if (a.kind != b->a.kind) {
            MPIACC_FAIL(MPIACC_ERRK_TYPE, "%s: the %s datatypes of one buffer mix buffer kinds (%s and %s)", name,
                        s == MPIACC_COLL_S ? "send" : "receive", mpiacc_kind_name(b->a.kind),
                        mpiacc_kind_name(a.kind));
        }
    }
    if (!seen) return MPI_SUCCESS;
    b->staged = mpiacc_dispatch_wants_pool(&b->a) || (c->fam->reduction && b->a.kind != MPIACC_KIND_NONE);
    if (s == MPIACC_COLL_R && b->staged && b->a.kind != MPIACC_KIND_HOST) MPIACC_CHECK(receive_once(c, b));
    if (b->staged && mpiacc_core_disabled)
        MPIACC_FAIL(MPIACC_ERRK_DISABLED,
                    "%s: the datatype is tagged MPIACC_BUF_TYPE %s but mpiacc is disabled (MPIACC_DISABLE is set): "
                    "its buffer cannot be communicated",
                    name, mpiacc_kind_name(b->a.kind));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* A staged buffer's analyses, signatures, staging and dependency. */
static int stage(mpiacc_coll_op_t *c, int s, const char *name)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_coll_buf_t *b = &c->b[s];
    MPI_Count top = 0;
    MPIACC_CHECK(mpiacc_dispatch_backend(&b->a, b->buf, &b->be));
    for (int i = 0; i < b->nslots; i++) {
        mpiacc_coll_slot_t *sl = &b->slots[i];
        MPI_Count bytes, ext;
        if (sl->type == MPI_DATATYPE_NULL) continue;
        MPIACC_CHECK(mpiacc_coll_sig_get(sl->type, &sl->sig));
        if (sl->count < 0) MPIACC_FAIL(MPIACC_ERRK_COUNT, "%s: negative count %lld", name, (long long)sl->count);
        if (sl->count == 0) continue;
        ext = mpiacc_coll_extent(sl->type);
        if (sl->disp >= 0 && (sl->disp == 0 || (ext > 0 && sl->disp % ext == 0))) {
            /* block = elements [disp/ext, disp/ext + count) of the buffer */
            MPI_Count first = sl->disp ? sl->disp / ext : 0;
            MPIACC_CHECK(mpiacc_pack_type_get(sl->type, &sl->t));
            sl->ecount = first + sl->count;
            sl->first = first * sl->t->size;
        } else {
            /* a displacement in bytes that is no whole extent: a type placing it */
            MPI_Count one = 1;
            MPI_Count d = sl->disp;
            MPI_Datatype h;
            MPIACC_CHECK(PMPI_Type_contiguous_c(sl->count, sl->type, &h));
            mpi_errno = PMPI_Type_create_hindexed_c(1, &one, &d, h, &sl->tmp);
            PMPI_Type_free(&h);
            MPIACC_CHECK(mpi_errno);
            MPIACC_CHECK(PMPI_Type_commit(&sl->tmp));
            MPIACC_CHECK(mpiacc_pack_type_analyze(sl->tmp, &sl->t));
            sl->ecount = 1;
            sl->first = 0;
        }
        MPIACC_CHECK(mpiacc_dispatch_packed_bytes(sl->t, sl->ecount, &bytes));
        sl->last = bytes;
        if (b->be->validate_span) {
            mpiacc_xfer_desc_t d = {.buf = b->buf, .type = sl->t, .count = sl->ecount, .first = 0, .last = bytes};
            MPIACC_CHECK(b->be->validate_span(&b->a, &d));
        }
        if (sl->hoff + (sl->last - sl->first) > top) top = sl->hoff + (sl->last - sl->first);
    }
    b->sbytes = top;
    MPIACC_CHECK(mpiacc_proto_staging_get(b->a.kind, top ? top : 1, &b->staging, &b->cls));
    b->host = b->staging;
    if (b->be->capture && !b->dep) MPIACC_CHECK(b->be->capture(&b->a, b->buf, &b->dep));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_coll_stage_all(mpiacc_coll_op_t *c)
{
    int mpi_errno = MPI_SUCCESS;
    const char *name = mpiacc_coll_name(c->kind, c->a.nonblocking);
    if (!c->b[0].staged && !c->b[1].staged) return MPI_SUCCESS;
    for (int s = 0; s < 2; s++)
        if (c->b[s].staged && c->b[s].used) MPIACC_CHECK(stage(c, s, name));
    if (c->fam->reduction) MPIACC_CHECK(mpiacc_coll_reduce_prepare(c, name));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_coll_op_free(mpiacc_coll_op_t *c)
{
    if (!c) return;
    mpiacc_coll_ipc_nb_free(c->ipc);
    if (c->xfer) c->cs->ct->release(c->xfer); /* waited for when not done (after a failure: aborted) */
    if (c->cs_ref) mpiacc_coll_comm_unref(c->cs); /* may run in the progress hook: swept later */
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        for (int i = 0; i < b->nslots; i++) {
            mpiacc_coll_slot_t *sl = &b->slots[i];
            if (sl->xfer && b->be) b->be->release(sl->xfer);
            if (sl->t) mpiacc_pack_type_release(sl->t);
            if (sl->tmp != MPI_DATATYPE_NULL) PMPI_Type_free(&sl->tmp);
            if (sl->sig) mpiacc_coll_sig_release(sl->sig);
        }
        free(b->slots);
        if (b->dep && b->be) b->be->release(b->dep);
        if (b->staging) mpiacc_proto_staging_put(b->a.kind, b->staging, b->cls);
        free(b->mirror);
        free(c->hcounts[s]), free(c->hdispls[s]), free(c->htypes[s]);
    }
    free(c->scounts), free(c->rcounts), free(c->sdispls), free(c->rdispls), free(c->stypes), free(c->rtypes);
    free(c);
}

/* ---- the call ------------------------------------------------------------------ */

/* Copies an array argument into MPI_Count / MPI_Aint form. */
static int copy_counts(const mpiacc_coll_args_t *a, const void *arr, int n, MPI_Count **out)
{
    if (!arr) return MPI_SUCCESS;
    *out = malloc(sizeof **out * (size_t)(n > 0 ? n : 1));
    if (!*out) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective");
    for (int i = 0; i < n; i++) (*out)[i] = mpiacc_coll_count_at(a, arr, i);
    return MPI_SUCCESS;
}

static int copy_disps(const mpiacc_coll_args_t *a, const void *arr, int n, MPI_Aint **out)
{
    if (!arr) return MPI_SUCCESS;
    *out = malloc(sizeof **out * (size_t)(n > 0 ? n : 1));
    if (!*out) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective");
    for (int i = 0; i < n; i++) (*out)[i] = mpiacc_coll_disp_at(a, arr, i);
    return MPI_SUCCESS;
}

static int copy_types(const MPI_Datatype *arr, int n, MPI_Datatype **out)
{
    if (!arr) return MPI_SUCCESS;
    *out = malloc(sizeof **out * (size_t)(n > 0 ? n : 1));
    if (!*out) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective");
    memcpy(*out, arr, sizeof **out * (size_t)n);
    return MPI_SUCCESS;
}

static int is_neighbor(int kind)
{
    return kind >= MPIACC_COLL_NEIGHBOR_ALLGATHER && kind <= MPIACC_COLL_NEIGHBOR_ALLTOALLW;
}

/* Rank, size, and the blocks per side (neighbourhood degrees). */
static int shape(mpiacc_coll_op_t *c, const char *name)
{
    int mpi_errno = MPI_SUCCESS, inter = 0, topo;
    MPI_Comm comm = c->a.comm;
    if (comm == MPI_COMM_NULL) MPIACC_FAIL(MPIACC_ERRK_COMM, "%s: the communicator is MPI_COMM_NULL", name);
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || PMPI_Comm_rank(comm, &c->rank) != MPI_SUCCESS ||
        PMPI_Comm_size(comm, &c->size) != MPI_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_COMM, "%s: invalid communicator", name);
    if (inter)
        MPIACC_FAIL(MPIACC_ERRK_COMM, "%s: device-tagged datatypes on an intercommunicator are not supported yet",
                    name);
    c->nsend = c->nrecv = c->size;
    if (is_neighbor(c->kind)) {
        MPIACC_CHECK(PMPI_Topo_test(comm, &topo));
        if (topo == MPI_CART) {
            int nd;
            MPIACC_CHECK(PMPI_Cartdim_get(comm, &nd));
            c->nsend = c->nrecv = 2 * nd;
        } else if (topo == MPI_GRAPH) {
            int nn;
            MPIACC_CHECK(PMPI_Graph_neighbors_count(comm, c->rank, &nn));
            c->nsend = c->nrecv = nn;
        } else if (topo == MPI_DIST_GRAPH) {
            int w;
            MPIACC_CHECK(PMPI_Dist_graph_neighbors_count(comm, &c->nrecv, &c->nsend, &w));
        } else {
            mpi_errno = mpiacc_err(MPIACC_ERRK_COMM, "%s: the communicator has no topology", name);
            goto fn_fail;
        }
    }
    if (c->kind == MPIACC_COLL_REDUCE || c->kind == MPIACC_COLL_BCAST || c->kind == MPIACC_COLL_GATHER ||
        c->kind == MPIACC_COLL_GATHERV || c->kind == MPIACC_COLL_SCATTER || c->kind == MPIACC_COLL_SCATTERV) {
        if (c->a.root < 0 || c->a.root >= c->size)
            MPIACC_FAIL(MPIACC_ERRK_ROOT, "%s: invalid root %d: the communicator has %d processes", name, c->a.root,
                        c->size);
    }
    if (c->a.nonblocking && !c->a.req) MPIACC_FAIL(MPIACC_ERRK_ARG, "%s: the request argument is NULL", name);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Arrays in MPI_Count / MPI_Aint form: counts and displacements per block
 * (scalar forms: scount/rcount repeated, so that every family reads arrays). */
static int normalise(mpiacc_coll_op_t *c)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_coll_args_t *a = &c->a;
    int ns = c->nsend, nr = c->nrecv;
    int root = c->rank == a->root;
    if (c->kind == MPIACC_COLL_REDUCE_SCATTER) nr = c->size;
    /* arrays that are not significant on this process may be anything */
    if ((c->kind == MPIACC_COLL_GATHERV && !root) || c->kind == MPIACC_COLL_BARRIER) nr = 0;
    if ((c->kind == MPIACC_COLL_SCATTERV && !root) || a->sbuf == MPI_IN_PLACE || c->kind == MPIACC_COLL_BARRIER)
        ns = 0;
    MPIACC_CHECK(copy_counts(a, a->scounts, ns, &c->scounts));
    MPIACC_CHECK(copy_counts(a, a->rcounts, nr, &c->rcounts));
    MPIACC_CHECK(copy_disps(a, a->sdispls, ns, &c->sdispls));
    MPIACC_CHECK(copy_disps(a, a->rdispls, nr, &c->rdispls));
    MPIACC_CHECK(copy_types(a->stypes, ns, &c->stypes));
    MPIACC_CHECK(copy_types(a->rtypes, nr, &c->rtypes));
    if (!c->scounts) {
        if (!(c->scounts = malloc(sizeof(MPI_Count) * (size_t)(ns > 0 ? ns : 1))))
            MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a collective");
        for (int i = 0; i < ns; i++) c->scounts[i] = a->scount;
    }
    if (!c->rcounts) {
        if (!(c->rcounts = malloc(sizeof(MPI_Count) * (size_t)(nr > 0 ? nr : 1))))
            MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a collective");
        for (int i = 0; i < nr; i++) c->rcounts[i] = a->rcount;
    }
    mpiacc_coll_empty_sides(c, ns, nr); /* empty.c: datatypes of size 0 */
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int has_arrays(const mpiacc_coll_op_t *c)
{
    switch (c->kind) {
    case MPIACC_COLL_GATHERV:
    case MPIACC_COLL_SCATTERV:
    case MPIACC_COLL_ALLGATHERV:
    case MPIACC_COLL_ALLTOALLV:
    case MPIACC_COLL_ALLTOALLW:
    case MPIACC_COLL_REDUCE_SCATTER:
    case MPIACC_COLL_NEIGHBOR_ALLGATHERV:
    case MPIACC_COLL_NEIGHBOR_ALLTOALLV:
    case MPIACC_COLL_NEIGHBOR_ALLTOALLW: return 1;
    default: return 0;
    }
}

static int staged_only; /* MPIACC_COLL_ENGINE=staged */

/* The buffer kind of a device collective on this process (comm.h): every
 * significant buffer's datatypes, whatever the counts, are of one kind whose
 * backend has a collective engine or IPC collectives; else 0. */
static int device_kind(mpiacc_coll_op_t *c)
{
    int kind = 0;
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        for (int i = 0; i < b->nslots; i++) {
            mpiacc_attrs_t a;
            if (b->slots[i].type == MPI_DATATYPE_NULL) continue;
            if (mpiacc_dispatch_attrs(b->slots[i].type, b->buf, c->a.comm, &a) != MPI_SUCCESS) return 0;
            if (a.kind == MPIACC_KIND_NONE || (kind && a.kind != kind)) return 0;
            kind = a.kind;
            if (b->a.kind == MPIACC_KIND_NONE) b->a = a; /* a side without data: classify saw none */
        }
    }
    if (kind && !mpiacc_core_disabled) {
        const mpiacc_backend_t *be = mpiacc_backend_get(kind);
        if (be && (mpiacc_coll_table(kind, be) || mpiacc_coll_ipc_table(kind, be))) return kind;
    }
    return 0;
}

static int checked(int kind)
{
    return kind != MPIACC_COLL_BARRIER && kind != MPIACC_COLL_SCAN && kind != MPIACC_COLL_EXSCAN &&
           kind != MPIACC_COLL_REDUCE_LOCAL;
}

int mpiacc_coll_call(const mpiacc_coll_args_t *args)
{
    int mpi_errno = MPI_SUCCESS, pooled, locked = 0, dk;
    const char *name = mpiacc_coll_name(args->kind, args->nonblocking);
    const mpiacc_proto_t *proto = &mpiacc_coll_proto;
    mpiacc_coll_op_t *c = calloc(1, sizeof *c);
    mpiacc_coll_comm_t *cs = NULL;
    mpiacc_rp_op_t *op = NULL;
    MPI_Request r = MPI_REQUEST_NULL;

    if (!c) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "%s: out of memory", name);
    c->kind = args->kind;
    c->fam = family_of(args->kind);
    c->a = *args;
    c->red_type = MPI_DATATYPE_NULL;
    MPIACC_CHECK(shape(c, name));
    MPIACC_CHECK(normalise(c));
    c->b[MPIACC_COLL_S].buf = (void *)args->sbuf;
    c->b[MPIACC_COLL_R].buf = args->rbuf;
    MPIACC_CHECK(c->fam->plan(c));
    MPIACC_CHECK(classify(c, MPIACC_COLL_S, name));
    MPIACC_CHECK(classify(c, MPIACC_COLL_R, name));
    dk = checked(c->kind) ? device_kind(c) : 0;
    if (mpiacc_coll_check && checked(c->kind)) MPIACC_CHECK(mpiacc_coll_check_agree(c, dk));
    if (dk) {
        /* the communicator's engine (made at its first device collective;
         * none at all with MPIACC_COLL_ENGINE=staged, which every process
         * then has: processes may mix device and host buffers again) */
        if (!staged_only) MPIACC_CHECK(mpiacc_coll_comm_get(c, dk, &cs));
        if (cs && cs->engine == MPIACC_COLL_ENGINE_NCCL && mpiacc_coll_dev_takes(c, cs->ct)) {
            mpi_errno = mpiacc_coll_dev_call(c, cs); /* consumes c */
            return mpiacc_err_return_comm(args->comm, mpi_errno);
        }
        if (cs && cs->engine == MPIACC_COLL_ENGINE_IPC && mpiacc_coll_ipc_has(c->kind)) {
            if (args->nonblocking) {
                /* the records exchange first (ipc_nb.c): the op is on the device
                 * or staged once every process's record is in */
                MPIACC_CHECK(mpiacc_coll_ipc_nb_prepare(c, cs));
                proto = &mpiacc_coll_ipc_proto;
                goto submit;
            } else {
                int done = 0;
                mpi_errno = mpiacc_coll_ipc_run(c, cs, &done);
                if (done) {
                    mpiacc_coll_op_free(c);
                    return mpiacc_err_return_comm(args->comm, mpi_errno);
                }
                MPIACC_CHECK(mpi_errno);
                /* staged: the dependencies captured and the analyses taken for the
                 * exchange are taken again */
                for (int s = 0; s < 2; s++) {
                    if (c->b[s].dep && c->b[s].be) c->b[s].be->release(c->b[s].dep), c->b[s].dep = NULL;
                    for (int i = 0; i < c->b[s].nslots; i++)
                        if (c->b[s].slots[i].t)
                            mpiacc_pack_type_release(c->b[s].slots[i].t), c->b[s].slots[i].t = NULL;
                }
            }
        } else {
            atomic_fetch_add(&mpiacc_coll_staged_runs, 1);
            MPIACC_LOG_ONCE(MPIACC_LOG_INFO, name,
                            "%s with device buffers staged through host memory (%s: %s; reported once per call)",
                            name, cs ? mpiacc_coll_engine_name(cs->engine) : "no engine",
                            staged_only ? "MPIACC_COLL_ENGINE=staged"
                            : !cs ? "another buffer kind than the communicator's first device collective"
                            : cs->engine == MPIACC_COLL_ENGINE_NCCL ? "a call, operation or type NCCL does not take"
                            : cs->engine == MPIACC_COLL_ENGINE_IPC  ? "a call without an IPC algorithm"
                                                                    : "the communicator's engine");
        }
    }
    pooled = c->b[0].staged || c->b[1].staged;
    MPIACC_CHECK(mpiacc_coll_stage_all(c));
    if (!args->nonblocking) {
        mpi_errno = mpiacc_coll_blocking(c, pooled);
        mpiacc_coll_op_free(c);
        return mpi_errno;
    }
    if (!pooled) {
        /* Host buffers: MPI's own call, unless a deferred collective on the
         * communicator must be posted first (a call with arrays goes through
         * the pool, which keeps the arrays handed to MPI alive until it
         * completes). */
        pthread_mutex_lock(&mpiacc_rp_pool.lock);
        locked = 1;
        if (!mpiacc_rp_sendq_has_peer(args->comm, MPIACC_RP_PEER_COLL, NULL) && !has_arrays(c)) {
            pthread_mutex_unlock(&mpiacc_rp_pool.lock);
            locked = 0;
            mpi_errno = c->fam->post(c, args->req);
            mpiacc_coll_op_free(c);
            return mpi_errno; /* MPI raised its errors itself */
        }
    }
submit:
    if (!(op = mpiacc_rp_op_alloc(0, MPIACC_RP_SEND_STD, args->rbuf, 0, MPIACC_RP_PEER_COLL, args->kind,
                                  args->comm)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "%s: out of memory for an operation", name);
    op->is_coll = 1;
    op->st_source = MPI_ANY_SOURCE;
    op->st_tag = MPI_ANY_TAG;
    op->proto = proto;
    op->pstate = c;
    op->attrs.kind = c->b[MPIACC_COLL_R].staged ? c->b[MPIACC_COLL_R].a.kind
                                                : c->b[MPIACC_COLL_S].staged ? c->b[MPIACC_COLL_S].a.kind : 0;
    c = NULL;
    mpi_errno = mpiacc_rp_submit(op, &r, locked);
    op = NULL; /* disposed of by submit on failure */
    if (locked) pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    locked = 0;
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    *args->req = r;
fn_exit:
    return mpi_errno;
fn_fail:
    if (locked) pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    if (op) mpiacc_rp_discard(op);
    mpiacc_coll_op_free(c);
    mpi_errno = mpiacc_err_return_comm(args->comm, mpi_errno);
    goto fn_exit;
}

int mpiacc_coll_refuse(const char *name, MPI_Comm comm, int n, const MPI_Datatype *types)
{
    int mpi_errno = MPI_SUCCESS;
    MPIACC_CHECK(mpiacc_coll_refuse_empty(name, n, types));
    for (int i = 0; i < n; i++) {
        mpiacc_attrs_t a;
        if (types[i] == MPI_DATATYPE_NULL) continue;
        MPIACC_CHECK(mpiacc_attrs_get(types[i], &a));
        if (mpiacc_dispatch_wants_pool(&a))
            MPIACC_FAIL(MPIACC_ERRK_TYPE,
                        "%s: persistent collectives do not take %s-tagged datatypes yet (the buffer would be "
                        "handed to MPI as host memory)",
                        name, mpiacc_kind_name(a.kind));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

int mpiacc_coll_check;

void mpiacc_coll_init(void)
{
    mpiacc_coll_check = mpiacc_env_bool("MPIACC_COLL_CHECK");
    staged_only = mpiacc_env_enum("MPIACC_COLL_ENGINE") == MPIACC_COLL_ENGINE_STAGED; /* auto|nccl|ipc|staged */
}

void mpiacc_coll_finalize(void)
{
    mpiacc_coll_comm_finalize();
    mpiacc_coll_check_finalize();
    mpiacc_coll_sig_finalize();
    mpiacc_coll_check = 0;
}
