/*
 * protocol/direct_probe.c: probes that see device messages on direct
 * communicators, and the receives of what they saw.
 *
 * A device message's first message (protocol/wire.h) waits on the hidden
 * data communicator with the user's source and tag, so MPI's own probe
 * there finds it; but its length is mpiacc's, not the payload's (an RTS
 * holds no data at all).  So a probe that finds one takes it out of MPI's
 * queue (PMPI_Improbe + PMPI_Imrecv into a buffer of its exact length) and
 * keeps it here, in arrival order, per direct communicator; once it has
 * landed, its header gives the payload (packed bytes), and the probe
 * reports source, tag and that count (MPI_Get_count with the receive
 * datatype divides it by the type's size, as for any message).
 *
 * Receives look here before they post anything (direct.c's recv_start):
 * the oldest kept message their source and tag match is theirs, so the
 * non-overtaking order of one (source, tag) pair stays MPI's; a posted
 * receive always wins over a probe in MPI itself, so nothing kept here
 * could have gone to an earlier receive.  A message a matched probe
 * (MPI_Mprobe / MPI_Improbe) took is kept for the MPI_Message it returned
 * (a value MPICH never makes: its top bits are MPICH's "invalid" handle
 * kind) and only the receive bound to that handle takes it
 * (mpiacc_proto_direct_mrecv_bind, a thread-local binding around the
 * dispatcher's receive).  mpiacc_proto_direct_host_recv delivers a kept
 * message into a host buffer (the contract's breach that mpiacc can mend).
 *
 * Everything here runs in application calls (probes, receives), never in
 * the progress poll function: PMPI_Improbe and PMPI_Wait are allowed.
 */
#include <pthread.h>
#include <stdlib.h>

#include "direct.h"

typedef struct probed {
    struct probed *next;   /* the communicator's list, arrival order        */
    struct probed *hnext;  /* the list of messages taken by a matched probe */
    int source, tag;       /* on data (= the user's communicator's ranks)   */
    void *buf;             /* the whole first message                        */
    MPI_Count len;
    MPI_Request req;       /* its PMPI_Imrecv (handed to the receive)        */
    int landed;            /* req complete, header in h                      */
    mpiacc_wire_hdr_t h;
    MPI_Message handle;    /* MPI_MESSAGE_NULL unless a matched probe took it */
    mpiacc_proto_comm_t *dc;
    MPI_Comm user_comm;
} probed_t;

typedef struct stash {
    probed_t *head;
} stash_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned next_handle;
static probed_t *taken;               /* by handle */
static _Thread_local probed_t *bound; /* mpiacc_proto_direct_mrecv_bind */

#define HANDLE_BASE 0x04000000 /* top two bits 00: never an MPICH handle */

static int matches(const probed_t *p, int source, int tag)
{
    return p->handle == MPI_MESSAGE_NULL && (source == MPI_ANY_SOURCE || source == p->source) &&
           (tag == MPI_ANY_TAG || tag == p->tag);
}

/* Whether p's first message has landed (its header read into p->h). */
static int landed(probed_t *p)
{
    if (!p->landed && MPIX_Request_is_complete(p->req)) {
        if (mpiacc_wire_read(p->buf, p->len, &p->h) != MPI_SUCCESS) {
            memset(&p->h, 0, sizeof p->h);
            p->h.kind = MPIACC_WIRE_ABORT; /* reported when received */
            p->h.err_class = MPI_ERR_INTERN;
        }
        p->landed = 1;
    }
    return p->landed;
}

/* Payload bytes the message carries. */
static MPI_Count payload(const probed_t *p)
{
    return p->h.kind == MPIACC_WIRE_ABORT ? 0 : (MPI_Count)p->h.total;
}

static void fill_status(const probed_t *p, MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = p->source;
    status->MPI_TAG = p->tag;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements_x(status, MPI_BYTE, payload(p));
    PMPI_Status_set_cancelled(status, 0);
}

static void unlink_from(probed_t **head, probed_t *p, int by_handle)
{
    for (probed_t **q = head; *q; q = by_handle ? &(*q)->hnext : &(*q)->next)
        if (*q == p) {
            *q = by_handle ? p->hnext : p->next;
            return;
        }
}

static void drop(probed_t *p)
{
    if (p->req != MPI_REQUEST_NULL) {
        if (MPIX_Request_is_complete(p->req)) PMPI_Wait(&p->req, MPI_STATUS_IGNORE);
        else {
            PMPI_Request_free(&p->req);
            p->buf = NULL; /* MPI may still write it */
        }
    }
    free(p->buf);
    free(p);
}

/* Takes a message MPI's probe finds on dc->data into the stash (appended). */
static int pull(mpiacc_proto_comm_t *dc, MPI_Comm user_comm, int source, int tag, probed_t **out)
{
    int mpi_errno = MPI_SUCCESS, flag = 0;
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    probed_t *p = NULL, **tail;
    stash_t *s = dc->probe;

    *out = NULL;
    MPIACC_CHECK(PMPI_Improbe(source, tag, dc->data, &flag, &m, &st));
    if (!flag) goto fn_exit;
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a probe list");
        dc->probe = s;
    }
    if (!(p = calloc(1, sizeof *p))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a probed message");
    PMPI_Get_count_c(&st, MPI_BYTE, &p->len);
    p->source = st.MPI_SOURCE;
    p->tag = st.MPI_TAG;
    p->handle = MPI_MESSAGE_NULL;
    p->req = MPI_REQUEST_NULL;
    p->dc = dc;
    p->user_comm = user_comm;
    if (!(p->buf = malloc(p->len > 0 ? (size_t)p->len : 1)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a probed message of %lld bytes", (long long)p->len);
    MPIACC_CHECK(PMPI_Imrecv_c(p->buf, p->len, MPI_BYTE, &m, &p->req));
    for (tail = &s->head; *tail; tail = &(*tail)->next) {}
    *tail = p;
    *out = p;
    p = NULL;
fn_exit:
    if (p) drop(p);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_direct_iprobe(mpiacc_proto_comm_t *dc, MPI_Comm user_comm, int source, int tag, int *flag,
                               MPI_Message *message, MPI_Status *status)
{
    int mpi_errno = MPI_SUCCESS;
    probed_t *p = NULL;
    stash_t *s;

    *flag = 0;
    pthread_mutex_lock(&lock);
    s = dc->probe;
    for (p = s ? s->head : NULL; p && !matches(p, source, tag); p = p->next) {}
    if (!p) MPIACC_CHECK(pull(dc, user_comm, source, tag, &p));
    /* the oldest match is the answer; until it has landed there is none */
    if (!p || !landed(p)) goto fn_exit;
    *flag = 1;
    fill_status(p, status);
    if (message) { /* the message now belongs to the handle */
        p->handle = (MPI_Message)(HANDLE_BASE | (int)(next_handle++ & 0x00ffffffu));
        p->user_comm = user_comm;
        p->hnext = taken;
        taken = p;
        *message = p->handle;
    }
fn_exit:
    pthread_mutex_unlock(&lock);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The entry of handle m (lock held), or NULL. */
static probed_t *of_handle(MPI_Message m)
{
    probed_t *p;
    if (((unsigned)m & 0xff000000u) != HANDLE_BASE) return NULL;
    for (p = taken; p && p->handle != m; p = p->hnext) {}
    return p;
}

int mpiacc_proto_direct_owns(MPI_Message m, MPI_Comm *user_comm, int *source, int *tag)
{
    probed_t *p;
    pthread_mutex_lock(&lock);
    p = of_handle(m);
    if (p) {
        *user_comm = p->user_comm;
        *source = p->source;
        *tag = p->tag;
    }
    pthread_mutex_unlock(&lock);
    return p != NULL;
}

void mpiacc_proto_direct_mrecv_bind(MPI_Message m)
{
    pthread_mutex_lock(&lock);
    bound = of_handle(m);
    pthread_mutex_unlock(&lock);
}

int mpiacc_proto_direct_mrecv_unbind(void)
{
    int used = bound == NULL;
    bound = NULL;
    return used;
}

int mpiacc_proto_probe_take(mpiacc_proto_comm_t *dc, int source, int tag, void **buf, MPI_Count *len,
                            MPI_Request *req)
{
    probed_t *p = NULL;
    stash_t *s;
    *buf = NULL;
    if (!bound && !dc->probe) return 0; /* never probed: no lock */
    pthread_mutex_lock(&lock);
    s = dc->probe;
    if (bound && bound->dc == dc) {
        p = bound;
        bound = NULL;
        unlink_from(&taken, p, 1);
    } else if (s) {
        for (p = s->head; p && !matches(p, source, tag); p = p->next) {}
    }
    if (p) {
        unlink_from(&s->head, p, 0);
        *buf = p->buf;
        *len = p->len;
        *req = p->req;
        free(p);
    }
    pthread_mutex_unlock(&lock);
    return *buf != NULL;
}

void mpiacc_proto_probe_free(mpiacc_proto_comm_t *dc)
{
    stash_t *s = dc->probe;
    if (!s) return;
    pthread_mutex_lock(&lock);
    while (s->head) {
        probed_t *p = s->head;
        s->head = p->next;
        if (p->handle != MPI_MESSAGE_NULL) unlink_from(&taken, p, 1);
        MPIACC_LOG(MPIACC_LOG_WARN,
                   "direct protocol: a device message from rank %d tag %d was probed but never received before "
                   "its communicator was freed; dropped",
                   p->source, p->tag);
        drop(p);
    }
    pthread_mutex_unlock(&lock);
    free(s);
    dc->probe = NULL;
}

/* ---- a kept message into host memory ------------------------------------------- */

/* The packed bytes of p's message (its first message already landed), into
 * *packed (malloc'ed, or inside p->buf for eager: *own = 0); the sender's
 * follow-ups received from ctl. */
static int gather(probed_t *p, void **packed, int *own)
{
    int mpi_errno = MPI_SUCCESS, peer = mpiacc_proto_comm_ctl_rank(p->dc, p->source);
    mpiacc_proto_comm_t *dc = p->dc;
    int fwd = mpiacc_wire_tag_fwd(p->h.op_id, dc->tag_mod);
    char *chunk = NULL;
    MPI_Status st;
    MPI_Count n, total = p->h.total;

    *packed = NULL;
    *own = 0;
    if (p->h.kind == MPIACC_WIRE_RTS_IPC) { /* declined: the sender streams as pipelined */
        unsigned char cts[MPIACC_WIRE_HDR];
        if (!(p->h.flags & MPIACC_WIRE_INLINE_BLOB)) { /* the blob comes first: not needed */
            void *blob = malloc(MPIACC_WIRE_HDR + (size_t)p->h.blob_bytes);
            if (!blob) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a datatype blob");
            mpi_errno = PMPI_Recv_c(blob, MPIACC_WIRE_HDR + (MPI_Count)p->h.blob_bytes, MPI_BYTE, peer, fwd,
                                    dc->ctl, MPI_STATUS_IGNORE);
            free(blob);
            MPIACC_CHECK(mpi_errno);
        }
        mpiacc_proto_dx_fill_error(cts, MPIACC_WIRE_CTS_PIPE, p->h.op_id, MPI_SUCCESS, 0);
        MPIACC_CHECK(PMPI_Send(cts, MPIACC_WIRE_HDR, MPI_BYTE, peer, mpiacc_wire_tag_back(p->h.op_id, dc->tag_mod),
                               dc->ctl));
        mpiacc_proto_count(MPIACC_PROTO_N_IPC_DECLINED);
    }
    switch (p->h.kind) {
    case MPIACC_WIRE_EAGER: *packed = (char *)p->buf + MPIACC_WIRE_HDR; goto fn_exit;
    case MPIACC_WIRE_ABORT:
        mpi_errno = mpiacc_proto_dx_peer_error(&p->h, p->buf, p->source, "sender");
        goto fn_fail;
    case MPIACC_WIRE_RTS_IPC:
    case MPIACC_WIRE_RTS_PIPE: {
        mpiacc_wire_hdr_t h;
        if (!(*packed = malloc(total > 0 ? (size_t)total : 1)) ||
            !(chunk = malloc(MPIACC_WIRE_HDR + (size_t)p->h.chunk)))
            MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a message of %lld bytes", (long long)total);
        *own = 1;
        for (int64_t k = 0; k < p->h.index; k++) {
            MPIACC_CHECK(PMPI_Recv_c(chunk, MPIACC_WIRE_HDR + p->h.chunk, MPI_BYTE, peer, fwd, dc->ctl, &st));
            PMPI_Get_count_c(&st, MPI_BYTE, &n);
            MPIACC_CHECK(mpiacc_wire_read(chunk, n, &h));
            if (h.kind == MPIACC_WIRE_ABORT) {
                mpi_errno = mpiacc_proto_dx_peer_error(&h, chunk, p->source, "sender");
                goto fn_fail;
            }
            if (h.kind != MPIACC_WIRE_CHUNK || h.index != k || h.chunk < 0 || h.chunk + (n - MPIACC_WIRE_HDR) > total)
                MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct protocol: chunk %lld from rank %d is malformed", (long long)k,
                            p->source);
            memcpy((char *)*packed + h.chunk, chunk + MPIACC_WIRE_HDR, (size_t)(n - MPIACC_WIRE_HDR));
        }
        break;
    }
    default:
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct protocol: a first message of kind %u from rank %d",
                    (unsigned)p->h.kind, p->source);
    }
fn_exit:
    free(chunk);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_direct_host_mrecv(MPI_Message m, void *buf, MPI_Count count, MPI_Datatype type,
                                   MPI_Status *status)
{
    int mpi_errno = MPI_SUCCESS, own = 0, fin;
    probed_t *p;
    void *packed = NULL;
    MPI_Count tsize = 0, n = 0, total, pos = 0;

    pthread_mutex_lock(&lock);
    if ((p = of_handle(m))) {
        unlink_from(&taken, p, 1);
        unlink_from(&((stash_t *)p->dc->probe)->head, p, 0);
    }
    pthread_mutex_unlock(&lock);
    if (!p) return mpiacc_err(MPIACC_ERRK_ARG, "not a message handle of mpiacc's");
    MPIACC_CHECK(PMPI_Wait(&p->req, MPI_STATUS_IGNORE));
    landed(p);
    if (!p->landed) MPIACC_CHECK(mpiacc_wire_read(p->buf, p->len, &p->h));
    fin = p->h.kind == MPIACC_WIRE_RTS_PIPE || p->h.kind == MPIACC_WIRE_RTS_IPC;
    total = payload(p);
    mpi_errno = gather(p, &packed, &own);
    if (mpi_errno == MPI_SUCCESS) {
        MPIACC_CHECK(PMPI_Type_size_c(type, &tsize));
        n = tsize > 0 ? total / tsize : 0;
        if (n > count) n = count;
        if (n > 0) MPIACC_CHECK(PMPI_Unpack_c(packed, total, &pos, buf, n, type, MPI_COMM_SELF));
        if (total > count * tsize)
            mpi_errno = mpiacc_err(MPIACC_ERRK_TRUNCATE,
                                   "message of %lld packed bytes from rank %d tag %d truncated to the receive's %lld",
                                   (long long)total, p->source, p->tag, (long long)(count * tsize));
        else if (total % tsize != 0) /* a part of an element: nothing mpiacc can unpack it into */
            mpi_errno = mpiacc_err(MPIACC_ERRK_TYPE,
                                   "message of %lld packed bytes from rank %d tag %d is not a whole number of the "
                                   "receive datatype's %lld bytes (a device message received into host memory is "
                                   "unpacked element by element)",
                                   (long long)total, p->source, p->tag, (long long)tsize);
    }
    if (fin) { /* the sender waits for it, with our failure if any */
        unsigned char msg[MPIACC_WIRE_HDR + MPIACC_WIRE_FIN_TEXT];
        MPI_Count len = mpiacc_proto_dx_fill_error(msg, MPIACC_WIRE_FIN, p->h.op_id, mpi_errno, MPIACC_WIRE_FIN_TEXT);
        int err = PMPI_Send_c(msg, len, MPI_BYTE, mpiacc_proto_comm_ctl_rank(p->dc, p->source),
                              mpiacc_wire_tag_back(p->h.op_id, p->dc->tag_mod), p->dc->ctl);
        if (mpi_errno == MPI_SUCCESS) mpi_errno = err;
    }
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = p->source;
        status->MPI_TAG = p->tag;
        status->MPI_ERROR = mpi_errno;
        PMPI_Status_set_elements_x(status, MPI_BYTE, pos);
        PMPI_Status_set_cancelled(status, 0);
    }
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
fn_exit:
    if (own) free(packed);
    if (p) drop(p);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- device messages nobody received ------------------------------------------- */

int mpiacc_proto_probe_drain(mpiacc_proto_comm_t *dc, const char *where)
{
    int n = 0;
    probed_t *p;
    for (;;) {
        stash_t *s;
        void *packed = NULL;
        int own = 0, err;
        pthread_mutex_lock(&lock);
        s = dc->probe;
        p = s ? s->head : NULL;
        if (p) {
            s->head = p->next;
            if (p->handle != MPI_MESSAGE_NULL) unlink_from(&taken, p, 1);
        }
        pthread_mutex_unlock(&lock);
        if (!p) { /* one more from MPI's queue, out of the list again */
            if (pull(dc, MPI_COMM_NULL, MPI_ANY_SOURCE, MPI_ANY_TAG, &p) != MPI_SUCCESS || !p) break;
            pthread_mutex_lock(&lock);
            unlink_from(&((stash_t *)dc->probe)->head, p, 0);
            pthread_mutex_unlock(&lock);
        }
        n++;
        if (PMPI_Wait(&p->req, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
            mpiacc_wire_read(p->buf, p->len, &p->h) != MPI_SUCCESS) {
            drop(p);
            continue;
        }
        MPIACC_LOG(MPIACC_LOG_WARN,
                   "direct protocol: a device message of %lld bytes from rank %d tag %d on a direct communicator "
                   "was never received (%s); drained. Device messages on a direct communicator must be received "
                   "into device buffers (include/mpiacc.h, \"Direct protocol\")",
                   (long long)payload(p), p->source, p->tag, where);
        /* the sender's follow-ups are taken in, and it hears why */
        err = gather(p, &packed, &own);
        if (own) free(packed);
        if (p->h.kind == MPIACC_WIRE_RTS_PIPE || p->h.kind == MPIACC_WIRE_RTS_IPC) {
            unsigned char msg[MPIACC_WIRE_HDR + MPIACC_WIRE_FIN_TEXT];
            int why = err != MPI_SUCCESS ? err
                                         : mpiacc_err(MPIACC_ERRK_TYPE,
                                                      "the receiver never posted a device receive for this device "
                                                      "message (%s)",
                                                      where);
            MPI_Count len = mpiacc_proto_dx_fill_error(msg, MPIACC_WIRE_FIN, p->h.op_id, why, MPIACC_WIRE_FIN_TEXT);
            PMPI_Send_c(msg, len, MPI_BYTE, mpiacc_proto_comm_ctl_rank(dc, p->source),
                        mpiacc_wire_tag_back(p->h.op_id, dc->tag_mod), dc->ctl);
        }
        drop(p);
    }
    return n;
}
