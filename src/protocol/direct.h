/*
 * protocol/direct.h: what the direct protocol's family shares (names
 * mpiacc_proto_dx_* / MPIACC_PROTO_DX_*).  direct.c: THE choice of a
 * protocol per message (mpiacc_proto_choose and its re-choice), the
 * per-operation state, the receive until its first message, the shared
 * steps; eager.c, pipeline.c, ipc.c: one protocol each, one table each,
 * none naming another.  Messages: protocol/wire.h; communicators:
 * protocol/direct_comm.h; states and arrows: the comment block of
 * src/reqpool/op.c.
 */
#ifndef MPIACC_PROTO_DIRECT_H_INCLUDED
#define MPIACC_PROTO_DIRECT_H_INCLUDED

#include "direct_comm.h"
#include "protocol.h"
#include "wire.h"

/* Staging slots of a pipelined transfer, per side. */
#define MPIACC_PROTO_DX_RING 4

typedef enum {
    MPIACC_PROTO_DX_SLOT_FREE,
    MPIACC_PROTO_DX_SLOT_XFER,   /* backend pack / unpack of the chunk enqueued */
    MPIACC_PROTO_DX_SLOT_MPI,    /* PMPI send / receive of the chunk active      */
    MPIACC_PROTO_DX_SLOT_LANDED, /* receive: chunk arrived, unpack not started   */
    MPIACC_PROTO_DX_SLOT_PACKED  /* send: chunk packed, not sent yet (order)     */
} mpiacc_proto_dx_slot_state_t;

typedef struct mpiacc_proto_dx_slot {
    void *buf; /* header + chunk bytes of staging (NULL until first used) */
    int cls;
    mpiacc_proto_dx_slot_state_t state;
    int64_t index; /* the chunk it holds */
    void *xfer;
    MPI_Request req;
} mpiacc_proto_dx_slot_t;

/* op->pstate of every operation of the direct protocol. */
typedef struct mpiacc_proto_dx_state {
    mpiacc_proto_comm_t *dc; /* reference held                                  */
    uint32_t id;              /* the sender's operation id                       */
    int peer;                 /* the peer's rank (on data and the user's)        */
    int ctl_peer;             /* the peer's rank on ctl (mpiacc_proto_comm_ctl_rank) */
    MPI_Count rbytes;         /* receive: capacity in packed bytes               */
    MPI_Count total;          /* packed bytes of the message                     */
    MPI_Count chunk;          /* pipelined: data bytes per chunk                 */
    int64_t nchunks;
    /* first message: send: eager data / RTS / ABORT; receive: its buffer */
    void *first;
    int first_cls;
    MPI_Count first_cap;
    MPI_Request first_req; /* send: the first message once the op left READY */
    /* back channel on ctl: send: the receive of FIN / CTS_PIPE; receive:
     * the send of FIN / CTS_PIPE */
    MPI_Request back;
    unsigned char backbuf[MPIACC_WIRE_HDR + MPIACC_WIRE_FIN_TEXT];
    int dep_ready; /* pack/unpack may start (dependency done or chained)      */
    int failed;    /* a local failure (op->error): no more device work       */
    int stopped;   /* pipelined: no more chunks (aborted)                    */
    /* pipelined */
    mpiacc_proto_dx_slot_t slot[MPIACC_PROTO_DX_RING];
    int64_t next_xfer; /* send: next chunk to pack; receive: next to post    */
    int64_t next_mpi;  /* send: next chunk to send; receive: next to land    */
    int lane;          /* the chunks' device order (mpiacc_xfer_desc_t.lane) */
    void *ipc;         /* ipc.c's state                                      */
    void (*ipc_release)(mpiacc_rp_op_t *op);
} mpiacc_proto_dx_state_t;

static inline mpiacc_proto_dx_state_t *mpiacc_proto_dx(mpiacc_rp_op_t *op)
{
    return (mpiacc_proto_dx_state_t *)op->pstate;
}

/* Messages per protocol since MPI_Init (tests, benchmarks, diagnostics). */
typedef enum {
    MPIACC_PROTO_N_EAGER_SENT,
    MPIACC_PROTO_N_PIPE_SENT,
    MPIACC_PROTO_N_IPC_SENT,     /* offered by IPC (RTS_IPC)                   */
    MPIACC_PROTO_N_IPC_FALLBACK, /* sender: IPC wanted, export not possible    */
    MPIACC_PROTO_N_EAGER_RECV,
    MPIACC_PROTO_N_PIPE_RECV,
    MPIACC_PROTO_N_IPC_RECV,     /* copied through IPC                         */
    MPIACC_PROTO_N_IPC_DECLINED, /* receiver answered CTS_PIPE to an RTS_IPC   */
    MPIACC_PROTO_N_MAX
} mpiacc_proto_count_t;
extern atomic_long mpiacc_proto_direct_count[MPIACC_PROTO_N_MAX];
static inline void mpiacc_proto_count(mpiacc_proto_count_t c)
{
    atomic_fetch_add_explicit(&mpiacc_proto_direct_count[c], 1, memory_order_relaxed);
}

/* The table of a protocol of the direct family (eager.c, pipeline.c,
 * ipc.c): the usual table, which op->proto points to (its first member),
 * and the two ways an operation enters the protocol after its call, both
 * taken only by mpiacc_proto_dx_rechoose (direct.c).  Each protocol file
 * fills its own table and never names another protocol's functions or
 * table: a fallback asks the chooser again.  prepare and start are the
 * send side's (a receive starts as mpiacc_proto_direct_recv); received
 * is never called (the first message is the direct receive's). */
typedef struct mpiacc_proto_dx {
    mpiacc_proto_t table;
    /* Receive: the first message (header h; op->st_* set) named this
     * protocol, or the receive moved here (h then carries the message's
     * size and chunking): checks h, sets up and moves the op on; sets
     * *complete when nothing is left to do. */
    int (*recv_begin)(mpiacc_rp_op_t *op, const mpiacc_wire_hdr_t *h, int *complete);
    /* Send, optional: the op's first message went out under another
     * protocol, whose peer asked for this one instead (an IPC offer
     * answered with CTS_PIPE): carries the message on from there. */
    int (*send_resume)(mpiacc_rp_op_t *op);
} mpiacc_proto_dx_t;

/* The protocols.  A direct receive starts as mpiacc_proto_direct_recv and
 * becomes the protocol its first message names. */
extern const mpiacc_proto_t mpiacc_proto_direct_recv;
extern const mpiacc_proto_dx_t mpiacc_proto_eager;
extern const mpiacc_proto_dx_t mpiacc_proto_pipeline;
extern const mpiacc_proto_dx_t mpiacc_proto_ipc;

/* ---- direct.c: the choice ----------------------------------------------------
 * mpiacc_proto_choose (protocol.h, the dispatcher's call) picks an
 * operation's protocol at its call.  Later the message itself may decide;
 * the direct family's files then ask again here, saying why: */
typedef enum {
    MPIACC_PROTO_DX_FIRST,     /* direct receive: its first message arrived (h) */
    MPIACC_PROTO_DX_NO_EXPORT, /* IPC send, prepare: the buffer cannot be exported
                                * (the IPC state already released)           */
    MPIACC_PROTO_DX_DECLINED,  /* IPC send: the receiver answered CTS_PIPE      */
    MPIACC_PROTO_DX_IPC_OFFER, /* IPC receive: the RTS_IPC read (h; the blob's
                                * receive posted): can this side import?     */
    MPIACC_PROTO_DX_NO_IMPORT  /* IPC receive: import_copy refused at call time
                                * (h: an RTS_PIPE with the chunking)         */
} mpiacc_proto_dx_why_t;
/* Chooses op's protocol again (direct.c's one choice function) and, when
 * it changes, enters the new one: its send prepare (NO_EXPORT), its
 * send_resume (DECLINED), its recv_begin (FIRST; IPC_OFFER / NO_IMPORT
 * after a CTS_PIPE sent to the sender).  Unchanged (an IPC offer this side
 * takes): nothing is done. */
int mpiacc_proto_dx_rechoose(mpiacc_rp_op_t *op, mpiacc_proto_dx_why_t why, const mpiacc_wire_hdr_t *h,
                             int *complete);
struct mpiacc_backend_ipc;
/* The IPC table used for op's buffers (the backend's, or a test's), or
 * NULL when the buffer kind has none. */
const struct mpiacc_backend_ipc *mpiacc_proto_dx_ipc_of(const mpiacc_rp_op_t *op);
/* The same for buffers of `kind` handled by backend be (the collectives). */
const struct mpiacc_backend_ipc *mpiacc_proto_dx_ipc_for(int kind, const mpiacc_backend_t *be);
/* Tests only: an IPC table used for buffers of `kind` instead of the
 * backend's (NULL: the backend's again), so that the IPC protocol's
 * messages can be exercised with a backend without IPC. */
void mpiacc_proto_dx_ipc_test_table(int kind, const struct mpiacc_backend_ipc *t);

/* direct_probe.c: probes of device messages (see there).
 * MPI_Iprobe / MPI_Improbe (message != NULL) on direct communicator
 * user_comm (its state dc): *flag when a device message from source with
 * tag (wildcards allowed) is there; status gets its source, tag and
 * payload in bytes; *message a handle only MPI_Mrecv / MPI_Imrecv take. */
int mpiacc_proto_direct_iprobe(mpiacc_proto_comm_t *dc, MPI_Comm user_comm, int source, int tag, int *flag,
                               MPI_Message *message, MPI_Status *status);
/* Whether m is a handle mpiacc_proto_direct_iprobe returned (and not yet
 * received): its communicator, source and tag. */
int mpiacc_proto_direct_owns(MPI_Message m, MPI_Comm *user_comm, int *source, int *tag);
/* Around a device receive of message m on this thread (MPI_Mrecv): the
 * receive's start takes m's message.  unbind returns 1 when it did. */
void mpiacc_proto_direct_mrecv_bind(MPI_Message m);
int mpiacc_proto_direct_mrecv_unbind(void);
/* A receive's start (direct.c): the bound message, else the oldest kept
 * one that source and tag match: its buffer (malloc'ed, *len bytes) and
 * the request of its first message; 0 when none. */
int mpiacc_proto_probe_take(mpiacc_proto_comm_t *dc, int source, int tag, void **buf, MPI_Count *len,
                            MPI_Request *req);
/* MPI_Mrecv of handle m into host memory (blocking, an application call):
 * the message's bytes unpacked into buf as count x type (eager, or the
 * pipelined chunks, an IPC offer answered with CTS_PIPE), the sender told
 * with its FIN; status as for a receive.  Errors not yet through a
 * handler. */
int mpiacc_proto_direct_host_mrecv(MPI_Message m, void *buf, MPI_Count count, MPI_Datatype type,
                                   MPI_Status *status);

/* direct_breach.c: a host message meeting a device receive (see there).
 * Pool lock held.  Whether op is a direct receive whose first message's
 * receive has not completed (IN_FLIGHT, nothing matched it yet). */
int mpiacc_proto_direct_unmatched(const mpiacc_rp_op_t *op);
/* An application call waited `seconds` on op: if op is unmatched and a
 * host message it matches waits on its user communicator, the first
 * message's receive is cancelled and op becomes the staged receive of
 * that host message (*taken; warned once).  On failure the caller fails
 * op (mpiacc_rp_fail). */
int mpiacc_proto_direct_take_host(mpiacc_rp_op_t *op, int seconds, int *taken);

/* ---- direct.c: the family's shared steps ------------------------------------ */
/* Every table's release: the op's direct state (and, through
 * ds->ipc_release, the IPC state) released. */
void mpiacc_proto_dx_release(mpiacc_rp_op_t *op);
/* Every table's received: an error (the op completes no receive of its
 * own: the first message is the direct receive's). */
int mpiacc_proto_dx_no_received(mpiacc_rp_op_t *op, int *complete);
/* Non-blocking completion of *r (MPI_REQUEST_NULL: done): *done, and the
 * status and MPI's error once done (*r becomes MPI_REQUEST_NULL). */
int mpiacc_proto_dx_test(MPI_Request *r, MPI_Status *st, int *done);
/* Cancels (receives) or gives up (sends) a request of an op that ends
 * early and returns *buf (a staging block of class cls, or NULL) to
 * staging; a buffer MPI may still use is not: returns 1 then. */
int mpiacc_proto_dx_retire(mpiacc_rp_op_t *op, MPI_Request *r, void **buf, int cls, int is_recv);
/* The dependency: ds->dep_ready once pack/unpack may start (host-waiting
 * backends test it here; chaining ones pass op->dep to every call). */
int mpiacc_proto_dx_dep(mpiacc_rp_op_t *op);
/* Sender: posts the receive of the receiver's FIN / CTS_PIPE. */
int mpiacc_proto_dx_post_back(mpiacc_rp_op_t *op);
/* Receiver: sends FIN (with op's failure, if any) or CTS_PIPE. */
int mpiacc_proto_dx_send_back(mpiacc_rp_op_t *op, mpiacc_wire_kind_t kind);
/* Receiver: FIN (with op's failure, if any) sent: CLOSING. */
int mpiacc_proto_dx_close(mpiacc_rp_op_t *op);
/* Sender: whether the receiver's answer (FIN / CTS_PIPE) on ds->back has
 * arrived (*done); its header read into *h then. */
int mpiacc_proto_dx_back_arrived(mpiacc_rp_op_t *op, mpiacc_wire_hdr_t *h, int *done);
/* Sender: the answer h must be a FIN; the receiver's failure it carries
 * becomes op's error (unless op has one). */
int mpiacc_proto_dx_fin_arrived(mpiacc_rp_op_t *op, const mpiacc_wire_hdr_t *h);
/* Receiver: the message holds `total` packed bytes: ds->total, op->bytes
 * (what fits the receive) and MPI_ERR_TRUNCATE in op->error when not all
 * of it fits. */
void mpiacc_proto_dx_recv_fit(mpiacc_rp_op_t *op, MPI_Count total);
/* Fills an ABORT / FIN header with err (an MPI error code) and its text,
 * at most `room` bytes of text; returns the message length. */
MPI_Count mpiacc_proto_dx_fill_error(void *msg, mpiacc_wire_kind_t kind, uint32_t id, int err, MPI_Count room);
/* The error a peer reported: a code of this process with the same class
 * and the peer's text. */
int mpiacc_proto_dx_peer_error(const mpiacc_wire_hdr_t *h, const void *msg, int peer, const char *who);
#endif
