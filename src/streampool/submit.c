/*
 * streampool/submit.c: creating operations at MPI call time (capture of
 * attributes, datatype analysis and dependency), and the blocking
 * MPI_Pack / MPI_Unpack on device buffers.
 */
#include "sp_internal.h"

static int get_backend(const mpiacc_attrs_t *a, void *buf, const mpiacc_backend_t **be)
{
    int mpi_errno = MPI_SUCCESS;
    *be = mpiacc_backend_get(a->kind);
    if (!*be)
        MPIACC_FAIL(MPIACC_ERRK_BACKEND, "%s buffers are not available: %s", mpiacc_kind_name(a->kind),
                    mpiacc_backend_why_absent(a->kind));
    if ((*be)->validate) MPIACC_CHECK((*be)->validate(a, buf));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int packed_bytes(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *bytes)
{
    int mpi_errno = MPI_SUCCESS;
    if (count < 0) MPIACC_FAIL(MPIACC_ERRK_COUNT, "negative count %lld", (long long)count);
    if (t->size > 0 && count > ((MPI_Count)1 << 62) / t->size)
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "count %lld of a %lld-byte datatype overflows", (long long)count,
                    (long long)t->size);
    *bytes = t->size * count;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The backend's call-time check that buf holds count x t (optional). */
static int check_span(const mpiacc_backend_t *be, const mpiacc_attrs_t *a, void *buf, mpiacc_pack_type_t *t,
                      MPI_Count count, MPI_Count bytes)
{
    mpiacc_xfer_desc_t d = {.buf = buf, .type = t, .count = count, .first = 0, .last = bytes, .host = NULL};
    return be->validate_span ? be->validate_span(a, &d) : MPI_SUCCESS;
}

static void discard(mpiacc_sp_op_t *op, int free_op)
{
    if (!op) return;
    if (op->be && op->dep) op->be->release(op->dep);
    if (op->staging) mpiacc_sp_staging_put(op->attrs.kind, op->staging, op->staging_class);
    if (op->type) mpiacc_pack_type_release(op->type);
    if (op->host_type != MPI_DATATYPE_NULL) PMPI_Type_free(&op->host_type);
    op->dep = op->staging = NULL;
    op->type = NULL;
    if (free_op) mpiacc_sp_op_free(op);
}

/* Common tail: request, first transition, pool.  Lock held by caller.  On
 * failure, op has been disposed of. */
static int submit_locked(mpiacc_sp_op_t *op, MPI_Request *req)
{
    int mpi_errno = mpiacc_sp_grequest_start(op);
    if (mpi_errno != MPI_SUCCESS) {
        discard(op, 1);
        return mpi_errno;
    }
    mpi_errno = mpiacc_sp_start(op);
    if (mpi_errno == MPI_SUCCESS) mpi_errno = mpiacc_sp_enqueue(op);
    if (mpi_errno != MPI_SUCCESS) {
        MPI_Request r = op->greq;
        discard(op, 0);
        op->error = mpi_errno;
        PMPI_Grequest_complete(r);
        PMPI_Request_free(&r); /* frees op through the free callback */
        return mpi_errno;
    }
    *req = op->greq;
    mpiacc_sp_progress_locked(); /* the call itself is a progress point */
    return MPI_SUCCESS;
}

/* A device send or receive: the operation is set up at call time
 * (attributes, datatype analysis, dependency, staging) and handed to the
 * pool.  Empty and MPI_PROC_NULL operations go to MPI directly (an empty send
 * still keeps its place behind deferred sends to the same peer). */
static int submit_device(int is_send, void *buf, MPI_Count count, MPI_Datatype type, const mpiacc_attrs_t *a,
                         int peer, int tag, MPI_Comm comm, int mode, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS, locked = 0, submitted = 0, deferred = 0;
    const mpiacc_backend_t *be;
    mpiacc_sp_op_t *op = NULL;
    mpiacc_pack_type_t *t = NULL;
    MPI_Count bytes = 0;

    MPIACC_CHECK(get_backend(a, buf, &be));
    if (peer != MPI_PROC_NULL) {
        MPIACC_CHECK(mpiacc_pack_type_get(type, &t));
        MPIACC_CHECK(packed_bytes(t, count, &bytes));
    }
    if (bytes == 0) {
        if (is_send && peer != MPI_PROC_NULL)
            MPIACC_CHECK(mpiacc_sp_host_isend(NULL, 0, MPI_BYTE, peer, tag, comm, mode, req, &deferred));
        if (!deferred)
            MPIACC_CHECK(is_send ? PMPI_Isend_c(NULL, 0, MPI_BYTE, peer, tag, comm, req)
                                 : PMPI_Irecv_c(NULL, 0, MPI_BYTE, peer, tag, comm, req));
        if (t) mpiacc_pack_type_release(t);
        goto fn_exit;
    }
    MPIACC_CHECK(check_span(be, a, (void *)buf, t, count, bytes));
    if (!(op = mpiacc_sp_op_alloc())) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an operation");
    op->is_send = is_send;
    op->mode = mode;
    op->be = be;
    op->attrs = *a;
    op->type = t;
    t = NULL;
    op->count = count;
    op->buf = buf;
    op->bytes = bytes;
    op->peer = peer;
    op->tag = tag;
    op->comm = comm;
    if (is_send) {
        op->st_source = peer;
        op->st_tag = tag;
    }
    if (be->capture) MPIACC_CHECK(be->capture(a, buf, &op->dep));
    MPIACC_CHECK(mpiacc_sp_staging_get(a->kind, be, bytes, &op->staging, &op->staging_class));
    pthread_mutex_lock(&mpiacc_sp_pool.lock);
    locked = 1;
    submitted = 1; /* from here on, failures dispose of op through its request */
    MPIACC_CHECK(submit_locked(op, req));
fn_exit:
    if (locked) pthread_mutex_unlock(&mpiacc_sp_pool.lock);
    return mpi_errno;
fn_fail:
    if (t) mpiacc_pack_type_release(t);
    if (!submitted) discard(op, 1);
    goto fn_exit;
}

int mpiacc_sp_isend(const void *buf, MPI_Count count, MPI_Datatype type, const mpiacc_attrs_t *a, int dest,
                    int tag, MPI_Comm comm, int mode, MPI_Request *req)
{
    return submit_device(1, (void *)buf, count, type, a, dest, tag, comm, mode, req);
}

int mpiacc_sp_irecv(void *buf, MPI_Count count, MPI_Datatype type, const mpiacc_attrs_t *a, int source,
                    int tag, MPI_Comm comm, MPI_Request *req)
{
    return submit_device(0, buf, count, type, a, source, tag, comm, MPIACC_SEND_STD, req);
}

int mpiacc_sp_host_isend(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         int mode, MPI_Request *req, int *deferred)
{
    int mpi_errno = MPI_SUCCESS, found = 0, submitted = 0;
    mpiacc_sp_op_t *op = NULL;

    *deferred = 0;
    pthread_mutex_lock(&mpiacc_sp_pool.lock);
    for (mpiacc_sp_op_t *o = mpiacc_sp_pool.shead; o && !found; o = o->snext)
        found = o->comm == comm && o->peer == dest;
    if (!found) goto fn_exit;
    if (!(op = mpiacc_sp_op_alloc())) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an operation");
    /* Keep the datatype alive: the application may free it after the call. */
    MPIACC_CHECK(PMPI_Type_dup(type, &op->host_type));
    op->is_send = 1;
    op->mode = mode;
    op->buf = (void *)buf;
    op->count = count;
    op->peer = dest;
    op->tag = tag;
    op->comm = comm;
    op->st_source = dest;
    op->st_tag = tag;
    submitted = 1;
    MPIACC_CHECK(submit_locked(op, req));
    *deferred = 1;
fn_exit:
    pthread_mutex_unlock(&mpiacc_sp_pool.lock);
    return mpi_errno;
fn_fail:
    if (!submitted) discard(op, 1);
    goto fn_exit;
}

/* ---- MPI_Pack / MPI_Unpack on device buffers (blocking) ------------------- */

static int wait_dep(const mpiacc_backend_t *be, void **dep)
{
    int mpi_errno = MPI_SUCCESS, done = 0;
    if (!be->host_waits || !*dep) goto fn_exit;
    while (!done) MPIACC_CHECK(be->test(*dep, &done));
    be->release(*dep);
    *dep = NULL;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int pack_common(int packing, void *data, MPI_Count count, MPI_Datatype type, const mpiacc_attrs_t *a,
                       void *packed, MPI_Count packed_size, MPI_Count *position)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_backend_t *be;
    mpiacc_pack_type_t *t = NULL;
    void *dep = NULL;
    MPI_Count bytes;
    mpiacc_xfer_desc_t d;

    MPIACC_CHECK(get_backend(a, data, &be));
    MPIACC_CHECK(mpiacc_pack_type_get(type, &t));
    MPIACC_CHECK(packed_bytes(t, count, &bytes));
    if (*position < 0 || *position > packed_size || bytes > packed_size - *position)
        MPIACC_FAIL(MPIACC_ERRK_TRUNCATE, "%s %lld bytes at position %lld of a %lld-byte packed buffer",
                    packing ? "packing" : "unpacking", (long long)bytes, (long long)*position,
                    (long long)packed_size);
    if (bytes == 0) goto fn_exit;
    if (be->capture) MPIACC_CHECK(be->capture(a, data, &dep));
    MPIACC_CHECK(wait_dep(be, &dep));
    d = (mpiacc_xfer_desc_t){.buf = data, .type = t, .count = count, .first = 0, .last = bytes, .host = NULL};
    if (packing) MPIACC_CHECK(be->pack_dev(a, dep, &d, packed, (MPI_Aint)*position));
    else MPIACC_CHECK(be->unpack_dev(a, dep, &d, packed, (MPI_Aint)*position));
    *position += bytes;
fn_exit:
    if (dep) be->release(dep);
    if (t) mpiacc_pack_type_release(t);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_sp_pack(const void *inbuf, MPI_Count incount, MPI_Datatype type, const mpiacc_attrs_t *a, void *outbuf,
                   MPI_Count outsize, MPI_Count *position)
{
    return pack_common(1, (void *)inbuf, incount, type, a, outbuf, outsize, position);
}

int mpiacc_sp_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                     MPI_Datatype type, const mpiacc_attrs_t *a)
{
    return pack_common(0, outbuf, outcount, type, a, (void *)inbuf, insize, position);
}
