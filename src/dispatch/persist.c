/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/persist.c: persistent point-to-point requests (MPI_Send_init,
 * MPI_Ssend_init, MPI_Rsend_init, MPI_Bsend_init, MPI_Recv_init and their
 * _c forms) on a datatype that needs the pool, and receives from
 * MPI_ANY_SOURCE where those are matched by a probe.
 *
 * The application holds a real MPI request: an inactive persistent PMPI
 * request with no data (a send or receive of nothing to MPI_PROC_NULL on
 * the same communicator), which MPI itself never starts.  mpiacc maps it to
 * a descriptor (this file's registry) holding the call's arguments and a
 * duplicate of the datatype (MPI lets the application free its datatype
 * after the init call; the duplicate keeps the mpiacc attributes, copied by
 * MPI_TYPE_DUP_FN).  Each MPI_Start makes one ordinary nonblocking
 * operation of the arguments (dispatch.c, bsend.c): the attributes are
 * those the datatype had at the init call, the dependency (stream, queue,
 * event, default-stream rule) is captured at that MPI_Start.  What does not
 * change between starts is resolved once, at the init call, for sends and
 * receives that move bytes: the arguments' checks, the attributes, the
 * datatype's analysis (held here), so that a start goes straight to the
 * dependency test and MPI's call or the pool (mpiacc_dispatch_start).  The
 * operation's request is the descriptor's `active` one; the completion
 * calls (src/interpose/completion.c) complete it in place of the handle and
 * leave the handle as it is: inactive again, startable, freeable.  While
 * inactive, every completion call sees MPI's own inactive persistent
 * request (it returns at once with an empty status).
 * Persistent requests on untagged datatypes are MPI's own, untouched,
 * except receives from MPI_ANY_SOURCE where those are matched by a probe
 * (mpiacc_core_wildcard_probe, MPICH's UCX netmod): one of these, each
 * MPI_Start a host receive of the dispatcher (dispatch.c, host_recv).
 */
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "memkind.h"

typedef struct prq {
    struct prq *next;
    MPI_Request handle; /* the application's (inactive PMPI persistent)  */
    MPI_Request active; /* the started operation's, or MPI_REQUEST_NULL  */
    int kind, mode;
    void *buf;
    MPI_Count count;
    MPI_Datatype type; /* a duplicate of the application's            */
    int peer, tag;
    MPI_Comm comm;
    mpiacc_err_saved_t call; /* the init call: each start's errors name it */
    mpiacc_attrs_t a;        /* resolved at the init call (t != NULL):     */
    mpiacc_pack_type_t *t;   /* the datatype's analysis, a reference       */
} prq_t;

#define NBUCKETS 64
static prq_t *buckets[NBUCKETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
atomic_int mpiacc_dispatch_prq_count, mpiacc_dispatch_prq_active;

static prq_t **bucket_of(MPI_Request r)
{
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    k ^= k >> 29;
    k *= 0x9e3779b97f4a7c15ull;
    return &buckets[k >> 58];
}

/* The descriptor of h (lock held), or NULL. */
static prq_t *find(MPI_Request h)
{
    prq_t *p;
    for (p = *bucket_of(h); p && p->handle != h; p = p->next) continue;
    return p;
}

static prq_t *lookup(MPI_Request h)
{
    prq_t *p;
    if (h == MPI_REQUEST_NULL || atomic_load_explicit(&mpiacc_dispatch_prq_count, memory_order_acquire) == 0)
        return NULL;
    pthread_mutex_lock(&lock);
    p = find(h);
    pthread_mutex_unlock(&lock);
    return p;
}

int mpiacc_dispatch_persist_init(int kind, int mode, const void *buf, MPI_Count count, MPI_Datatype dt, int peer,
                                 int tag, MPI_Comm comm, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS, is_send = kind != MPIACC_DISPATCH_P_RECV;
    mpiacc_attrs_t a;
    const mpiacc_backend_t *be;
    mpiacc_pack_type_t *t = NULL;
    MPI_Count bytes;
    prq_t *p = NULL;

    MPIACC_CHECK(mpiacc_dispatch_check_args(is_send, count, dt, peer, tag, comm, 1, req));
    MPIACC_CHECK(mpiacc_dispatch_attrs(dt, buf, comm, &a));
    if (mpiacc_core_disabled && mpiacc_dispatch_wants_pool(&a)) MPIACC_CHECK(mpiacc_dispatch_disabled_error(&a));
    /* What can fail at every start is checked once here too (MPI reports
     * argument errors at the init call). */
    if (peer != MPI_PROC_NULL && mpiacc_dispatch_wants_pool(&a)) {
        MPIACC_CHECK(mpiacc_dispatch_device_buf(&a, (void *)buf, count, dt, &be, &t, &bytes));
        if (!is_send && a.kind != MPIACC_KIND_HOST && bytes > 0) /* as device_op checks each start */
            MPIACC_CHECK(mpiacc_pack_check_receive(t, count, NULL));
    }
    if (!(p = calloc(1, sizeof *p))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a persistent request");
    p->handle = p->active = MPI_REQUEST_NULL;
    p->type = MPI_DATATYPE_NULL;
    p->kind = kind;
    p->mode = mode;
    p->buf = (void *)buf;
    p->count = count;
    p->peer = peer;
    p->tag = tag;
    p->comm = comm;
    mpiacc_err_save(&p->call);
    if (t && bytes > 0 && kind != MPIACC_DISPATCH_P_BSEND) { /* resolved once (the head comment) */
        p->a = a;
        p->t = t;
        t = NULL;
    }
    MPIACC_CHECK(PMPI_Type_dup(dt, &p->type));
    MPIACC_CHECK(is_send ? PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &p->handle)
                         : PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &p->handle));
    pthread_mutex_lock(&lock);
    p->next = *bucket_of(p->handle);
    *bucket_of(p->handle) = p;
    atomic_fetch_add_explicit(&mpiacc_dispatch_prq_count, 1, memory_order_release);
    pthread_mutex_unlock(&lock);
    *req = p->handle;
fn_exit:
    if (t) mpiacc_pack_type_release(t);
    return mpi_errno;
fn_fail:
    if (p) {
        if (p->type != MPI_DATATYPE_NULL) PMPI_Type_free(&p->type);
        if (p->t) mpiacc_pack_type_release(p->t);
        free(p);
    }
    mpi_errno = mpiacc_err_return_comm(comm, mpi_errno);
    goto fn_exit;
}

int mpiacc_dispatch_persist_start(MPI_Request *req, int *ours)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Request r = MPI_REQUEST_NULL;
    prq_t *p = req ? lookup(*req) : NULL;
    *ours = p != NULL;
    if (!p) return MPI_SUCCESS;
    if (p->active != MPI_REQUEST_NULL)
        return mpiacc_err_return_comm(p->comm, mpiacc_err(MPIACC_ERRK_ARG, "MPI_Start: the persistent request is "
                                                                           "already active"));
    /* Errors are raised on the communicator by the calls themselves, and
     * name the init call with its arguments (core.h). */
    mpiacc_err_call_t c = {p->call.sig, p->call.args, NULL, 1};
    mpiacc_err_enter(&c);
    if (p->t)
        mpi_errno = mpiacc_dispatch_start(p->kind == MPIACC_DISPATCH_P_SEND, p->buf, p->count, p->type, p->peer,
                                          p->tag, p->comm, p->mode, &p->a, p->t, &r);
    else switch (p->kind) {
    case MPIACC_DISPATCH_P_SEND:
        mpi_errno = mpiacc_dispatch_send(p->buf, p->count, p->type, p->peer, p->tag, p->comm, p->mode, 1, &r);
        break;
    case MPIACC_DISPATCH_P_BSEND:
        mpi_errno = mpiacc_dispatch_bsend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, 1, &r);
        break;
    default:
        mpi_errno = mpiacc_dispatch_recv(p->buf, p->count, p->type, p->peer, p->tag, p->comm, NULL, 1, &r);
        break;
    }
    mpiacc_err_leave(&c);
    if (mpi_errno == MPI_SUCCESS && r != MPI_REQUEST_NULL) {
        p->active = r;
        atomic_fetch_add_explicit(&mpiacc_dispatch_prq_active, 1, memory_order_release);
    }
    return mpi_errno;
}

MPI_Request mpiacc_dispatch_persist_active(MPI_Request h)
{
    prq_t *p = lookup(h);
    return p && p->active != MPI_REQUEST_NULL ? p->active : h;
}

void mpiacc_dispatch_persist_completed(MPI_Request h)
{
    prq_t *p = lookup(h);
    if (p && p->active != MPI_REQUEST_NULL) {
        p->active = MPI_REQUEST_NULL;
        atomic_fetch_sub_explicit(&mpiacc_dispatch_prq_active, 1, memory_order_release);
    }
}

int mpiacc_dispatch_persist_free(MPI_Request *req, int *ours)
{
    prq_t *p = req ? lookup(*req) : NULL, **pp;
    *ours = p != NULL;
    if (!p) return MPI_SUCCESS;
    pthread_mutex_lock(&lock);
    for (pp = bucket_of(p->handle); *pp != p; pp = &(*pp)->next) continue;
    *pp = p->next;
    atomic_fetch_sub_explicit(&mpiacc_dispatch_prq_count, 1, memory_order_release);
    pthread_mutex_unlock(&lock);
    if (p->active != MPI_REQUEST_NULL) {
        /* An active one completes on its own (MPI's rule for a freed
         * request); the pool keeps it until then. */
        PMPI_Request_free(&p->active);
        atomic_fetch_sub_explicit(&mpiacc_dispatch_prq_active, 1, memory_order_release);
    }
    PMPI_Type_free(&p->type);
    if (p->t) mpiacc_pack_type_release(p->t);
    free(p);
    return PMPI_Request_free(req);
}

int mpiacc_dispatch_persist_cancel(MPI_Request *req, int *ours)
{
    prq_t *p = req ? lookup(*req) : NULL;
    *ours = p != NULL && p->active != MPI_REQUEST_NULL;
    if (!*ours) return MPI_SUCCESS;
    return PMPI_Cancel(&p->active);
}
