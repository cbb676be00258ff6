/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reqpool: the request pool hooked into MPICH's progress engine.  Owns the
 * life of every pooled operation: its generalized request, its state, the
 * generic steps of the state machine (send ordering, the inner PMPI request,
 * completion) and the lists it sits on.  The protocol-specific steps (what
 * is packed where, what is sent, what happens when bytes land) belong to the
 * operation's protocol (op->proto, src/protocol).  The states and every
 * transition are documented once, in op.c.
 */
#ifndef MPIACC_REQPOOL_H_INCLUDED
#define MPIACC_REQPOOL_H_INCLUDED

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "core/core.h"
#include "core/trace.h"
#include "pack/pack.h"
#include "util/pool.h"

/* Send modes of the interposed calls. */
enum { MPIACC_RP_SEND_STD, MPIACC_RP_SEND_SYNC, MPIACC_RP_SEND_READY };

/* Operation states; op.c documents the machine.  A protocol needing more
 * states adds them here (before MPIACC_RP_NSTATES) and in op.c's comment. */
typedef enum {
    MPIACC_RP_NEW,         /* being set up in the MPI call                     */
    MPIACC_RP_DEP_PENDING, /* waiting on the host for the data dependency      */
    MPIACC_RP_PACKING,     /* send: pack into staging enqueued                 */
    MPIACC_RP_READY,       /* send: data ready, waiting for its turn (ordering) */
    MPIACC_RP_IN_FLIGHT,   /* PMPI request active (send or receive)            */
    MPIACC_RP_UNPACKING,   /* receive: unpack from staging enqueued            */
    MPIACC_RP_DONE,        /* generalized request completed (op being freed)   */
    /* on-device collectives (src/coll/ipc_nb.c) */
    MPIACC_RP_COPYING,     /* collective: reads of the peers' memory enqueued   */
    MPIACC_RP_EXCHANGING,  /* collective: records or a phase's flags being gathered on `data` */
    /* receives from MPI_ANY_SOURCE through a matched probe (mpiacc_core_wildcard_probe) */
    MPIACC_RP_MATCHING,    /* receive: its message not found yet (PMPI_Improbe) */
    MPIACC_RP_NSTATES
} mpiacc_rp_state_t;

/* Indexes of mpiacc_rp_transitions[from][to]: states, plus these
 * pseudo-targets (the op ends in DONE either way).  MPIACC_RP_T_EARLY
 * changes no state: the application's request completed (stream-ordered
 * completion, MPIACC_ORDER_STREAM) while the op goes on in `from`. */
#define MPIACC_RP_T_ERROR MPIACC_RP_NSTATES
#define MPIACC_RP_T_CANCEL (MPIACC_RP_NSTATES + 1)
#define MPIACC_RP_T_EARLY (MPIACC_RP_NSTATES + 2)
#define MPIACC_RP_NTARGETS (MPIACC_RP_NSTATES + 3)

struct mpiacc_rp_op;

/*
 * A protocol: how an operation's data travels.  The generic machine (op.c)
 * calls these under the pool lock, except prepare.  All return MPI error
 * codes; a failure sends the op to ERROR.  A protocol changes the op's state
 * only through mpiacc_rp_move().
 */
typedef struct mpiacc_proto {
    const char *name;
    /* Optional.  At call time, before the pool lock and before the
     * generalized request exists: allocations (staging...).  On failure the
     * op is discarded (release is called). */
    int (*prepare)(struct mpiacc_rp_op *op);
    /* NEW -> the first state (a send eventually reaches READY, a receive
     * IN_FLIGHT with op->inner posted). */
    int (*start)(struct mpiacc_rp_op *op);
    /* One step of the op in one of the protocol's own states (any state but
     * NEW, READY, IN_FLIGHT and DONE); sets *complete when the op is
     * finished (the machine then completes it). */
    int (*advance)(struct mpiacc_rp_op *op, int *complete);
    /* READY, the op's turn: starts the PMPI send of its data into
     * op->inner (in op->mode; mpiacc_rp_isend does that).  The op then
     * leaves the send queue and goes to IN_FLIGHT, unless issue moved it to
     * a state of its own (its first message posted, the rest of the message
     * on its own). */
    int (*issue)(struct mpiacc_rp_op *op);
    /* Receive IN_FLIGHT: the inner receive completed (op->bytes holds the
     * received count, op->st_* its status); sets *complete when the op is
     * finished, else moves it on.  The protocol compares the count with
     * what the receive holds (truncation is its call).  A message longer
     * than the inner receive's buffer (MPI's truncation) never gets here:
     * the op fails with MPI's error, nothing delivered. */
    int (*received)(struct mpiacc_rp_op *op, int *complete);
    /* Optional: a receive from MPI_ANY_SOURCE matched by a probe
     * (mpiacc_rp_match_start, mpiacc_rp_match_pending): posts
     * PMPI_Imrecv of *msg into op->inner (op.c then moves it to
     * IN_FLIGHT).  msg NULL: a receive naming its source whose turn came
     * (no earlier MATCHING op could take its message), posted with
     * PMPI_Irecv as start would have posted it. */
    int (*matched)(struct mpiacc_rp_op *op, MPI_Message *msg);
    /* Frees what the protocol holds (staging, datatype copies); may be
     * called on a partly set-up op; idempotent. */
    void (*release)(struct mpiacc_rp_op *op);
} mpiacc_proto_t;

typedef struct mpiacc_rp_op {
    /* pool's active list (call order) while pending; the completed list
     * (guarded by the completed list's own lock) once complete */
    struct mpiacc_rp_op *next, *prev;
    struct mpiacc_rp_op *snext, *sprev; /* pool's unissued-send queue        */
    mpiacc_rp_state_t state;
    const mpiacc_proto_t *proto;
    int is_send;
    int is_coll; /* a collective (src/coll): queued like a send, completes like a receive */
    int mode; /* MPIACC_RP_SEND_*                                          */
    int in_sendq;
    int sendq_hold; /* issue keeps the op in the send queue: its protocol takes it out (src/coll/ipc_nb.c) */
    int on_completed; /* on the completed list (its lock)                */
    unsigned long long id; /* for the log: numbered from 1 per process     */
    long long t_state;     /* when the op entered its state (ns, stats)   */
    long long tr[MPIACC_CORE_TR_NOP]; /* core/trace.h, while tracing: ns per state, launches */
    const mpiacc_backend_t *be; /* NULL when no device is involved          */
    mpiacc_attrs_t attrs;
    mpiacc_pack_type_t *type; /* analysis (reference held), device ops   */
    MPI_Count count;
    void *buf;
    void *dep, *xfer; /* backend handles (xfer: or a batch's marker, batch.c) */
    mpiacc_xfer_desc_t xd;      /* batch.c: the queued transfer              */
    struct mpiacc_rp_op *bnext; /* batch.c: the pool's queue of transfers    */
    int xerr;                   /* batch.c: the launch's error (XFER_FAILED) */
    MPI_Count bytes;  /* packed bytes: to send, or capacity / received   */
    /* protocol data */
    void *staging;
    int staging_class;
    void *staging_tok; /* device staging's token (device protocol: be->dev_staging_put) */
    MPI_Count staging_cap; /* bytes the device staging holds (device protocol) */
    void *send_from;   /* device protocol: a dense send's first byte in the user's buffer (NULL: staging) */
    MPI_Datatype host_type; /* a host send's datatype (a dup)           */
    /* matching */
    int peer, tag;
    MPI_Comm comm;      /* where its message travels (a protocol may change it) */
    MPI_Comm user_comm; /* the application's: errors, claims (never changes) */
    MPI_Request inner; /* the PMPI request                                   */
    MPI_Request greq;  /* the application's generalized request            */
    void *pstate; /* the protocol's own per-operation state (a matched receive's message; collectives) */
    /* result; a protocol may set error before the op completes: the op then
     * completes with it (after the protocol finished talking to its peer) */
    int error;
    int st_source, st_tag, cancelled;
    atomic_int cancel_req;
    /* Set (release) just before MPI_Grequest_complete; the generalized
     * request callbacks, which may run in another thread, read it (acquire)
     * before the result fields.  MPI orders the two already; this makes the
     * order explicit in the C memory model (and visible to ThreadSanitizer,
     * which does not see inside MPI). */
    atomic_int published;
    /* Stream-ordered completion (op.c, mpiacc_rp_early): the generalized
     * request was completed while the op goes on in the pool; `holds`
     * counts the two owners of its memory then (the request until MPI
     * frees it, the pool until the op finishes). */
    int detached;
    atomic_int holds;
    /* The user's call that made the op (core.h): error messages found
     * while the pool advances it name that call (op.c, advance). */
    mpiacc_err_saved_t call;
    /* completion (complete.c) */
    struct mpiacc_rp_op *rnext;      /* registry bucket chain            */
    struct mpiacc_rp_claim *claim;   /* set during a completion call     */
} mpiacc_rp_op_t;

/* ---- pool.c: lists, queues, operation memory ------------------------- */

typedef struct mpiacc_rp_pool {
    pthread_mutex_t lock;          /* guards everything below            */
    mpiacc_rp_op_t *head, *tail;   /* active operations                  */
    mpiacc_rp_op_t *shead, *stail; /* sends not yet handed to MPI        */
    mpiacc_rp_op_t *bhead, *btail; /* transfers queued in a batch (batch.c) */
    int nbatch;
    int nactive;
    int registered; /* a poll function is registered with MPIX_Async_start */
} mpiacc_rp_pool_t;

extern mpiacc_rp_pool_t mpiacc_rp_pool;

/* Sends not yet handed to MPI; while it is zero, host sends need no
 * ordering check at all. */
extern atomic_int mpiacc_rp_deferred_sends;
/* Collectives not yet handed to MPI (src/coll), queued in the same queue
 * under the peer MPIACC_RP_PEER_COLL: MPI requires every process to post
 * the collectives of a communicator in one order. */
extern atomic_int mpiacc_rp_deferred_colls;
#define MPIACC_RP_PEER_COLL INT_MIN

/* A new op (state NEW, handles null) for this envelope (mode:
 * MPIACC_RP_SEND_*, ignored for a receive), or NULL when out of memory. */
mpiacc_rp_op_t *mpiacc_rp_op_alloc(int is_send, int mode, void *buf, MPI_Count count, int peer, int tag,
                                   MPI_Comm comm);
void mpiacc_rp_op_free(mpiacc_rp_op_t *op);
/* Adds op to the active list, and a send or a collective to the send
 * queue; lock held. */
void mpiacc_rp_insert(mpiacc_rp_op_t *op);
/* Takes op off the active list; lock held. */
void mpiacc_rp_unlink(mpiacc_rp_op_t *op);
/* Takes a send off the send queue (no-op when not on it); lock held. */
void mpiacc_rp_sendq_remove(mpiacc_rp_op_t *op);
/* Whether an unissued send to (comm, peer) queued before `before` exists
 * (before == NULL: anywhere in the queue); lock held. */
int mpiacc_rp_sendq_has_peer(MPI_Comm comm, int peer, const mpiacc_rp_op_t *before);
/* Number of operations not yet complete. */
int mpiacc_rp_pending(void);
void mpiacc_rp_pool_release(void);
/* Statistics of the operations' memory (blocks held: ops alive). */
void mpiacc_rp_pool_stats(mpiacc_util_pool_stats_t *out);

/* Completed operations whose generalized request the application has not
 * freed yet (MPI calls the free callback only then).  A leaf lock: nothing
 * is called while it is held.  MPI_Finalize frees what is left. */
void mpiacc_rp_completed_add(mpiacc_rp_op_t *op);
void mpiacc_rp_completed_remove(mpiacc_rp_op_t *op);
/* Takes one op off the completed list (NULL: empty). */
mpiacc_rp_op_t *mpiacc_rp_completed_pop(void);

/* ---- finalize.c: start and end ---------------------------------------- */

int mpiacc_rp_init(void);

/* What MPI_Finalize found and did (mpiacc_rp_finalize). */
typedef struct mpiacc_rp_finalize_report {
    int pending;   /* operations not complete when MPI_Finalize was called  */
    int completed; /* of those, completed normally during the bounded wait  */
    int cancelled; /* receives never matched, cancelled                     */
    int failed;    /* completed with an error during the wait               */
    int abandoned; /* still busy at the end (GPU work or a send MPI holds):
                    * completed with an error, their memory left allocated */
    int unfreed;   /* completed requests the application never freed        */
    int background; /* of `pending`, ops whose request had completed already
                     * (stream-ordered completion) */
    /* kinds (bit 1 << kind) with device work abandoned: their backend must
     * not be stopped (its queues/streams still hold that work) */
    unsigned busy_kinds;
} mpiacc_rp_finalize_report_t;

/* MPI_Finalize: never fails and never hangs.  Operations still pending
 * (including those whose request was freed with MPI_Request_free) get a
 * bounded time to finish (MPIACC_FINALIZE_TIMEOUT seconds, default 10);
 * receives that nothing matched are then cancelled, and whatever is still
 * busy is abandoned; each outcome is logged (warn).  Completed requests the
 * application never freed are freed.  Then the pool's memory is released. */
void mpiacc_rp_finalize(mpiacc_rp_finalize_report_t *rep);
/* A copy of the last report (for tests). */
extern mpiacc_rp_finalize_report_t mpiacc_rp_last_finalize;

/* ---- op.c: the state machine ----------------------------------------- */

/* Hands a set-up op (NEW, op->proto set) to the pool: prepare, generalized
 * request, start, pool, one progress pass.  Takes the pool lock unless
 * `locked`.  On failure the op is disposed of and *req is untouched. */
int mpiacc_rp_submit(mpiacc_rp_op_t *op, MPI_Request *req, int locked);
/* Disposes of an op that was never submitted (protocol release, handles,
 * type reference, memory). */
void mpiacc_rp_discard(mpiacc_rp_op_t *op);
/* Counts and takes a transition (to: a state or MPIACC_RP_T_*). */
void mpiacc_rp_move(mpiacc_rp_op_t *op, int to);
/* Lock held: op (in the pool, not complete) fails with error now (ERROR),
 * as a failed step of its own would (an application call's step on it). */
void mpiacc_rp_fail(mpiacc_rp_op_t *op, int error);
/* PMPI_Isend / Issend / Irsend (op->mode) to op's peer into op->inner. */
int mpiacc_rp_isend(mpiacc_rp_op_t *op, const void *buf, MPI_Count n, MPI_Datatype t);
/* For finalize.c: advances every active op once (lock held); releases an
 * op's handles, protocol resources and type reference; a state's name (or
 * a pseudo-target's) for the log. */
void mpiacc_rp_progress_locked(void);
void mpiacc_rp_release_resources(mpiacc_rp_op_t *op);
const char *mpiacc_rp_state_name(int s);

/* ---- batch.c: transfers started together share one launch -------------
 *
 * Inside a batch (begin ... end, nested per thread: a progress pass, an
 * MPI_Startall), a protocol's pack or unpack that mpiacc_rp_batch_queue_ok
 * accepts (a batch is open, the backend has xfer_many, no lane, at most
 * MPIACC_RP_BATCH_BYTES) is queued with mpiacc_rp_batch_queue (its op
 * already moved to PACKING / UNPACKING) instead of launched; op->xfer is then
 * MPIACC_RP_XFER_QUEUED until the thread's outermost batch ends (or the
 * queue is full), when each backend's queued transfers start in one
 * xfer_many call and each op takes its post-launch steps (early.c).  A
 * failed launch leaves MPIACC_RP_XFER_FAILED and the error in op->xerr,
 * which the op's next step reports (src/protocol/steps.c).  Lock held,
 * except begin / end. */
#define MPIACC_RP_BATCH_BYTES ((MPI_Count)1 << 20)
extern char mpiacc_rp_xfer_queued, mpiacc_rp_xfer_failed;
#define MPIACC_RP_XFER_QUEUED ((void *)&mpiacc_rp_xfer_queued)
#define MPIACC_RP_XFER_FAILED ((void *)&mpiacc_rp_xfer_failed)
void mpiacc_rp_batch_begin(void);
void mpiacc_rp_batch_end(void);        /* takes the pool lock to flush */
void mpiacc_rp_batch_end_locked(void);
int mpiacc_rp_batch_queue_ok(const mpiacc_rp_op_t *op, const mpiacc_xfer_desc_t *d);
void mpiacc_rp_batch_queue(mpiacc_rp_op_t *op, const mpiacc_xfer_desc_t *d);
void mpiacc_rp_batch_flush_locked(void);
/* An op ending with its transfer still queued: off the queue (op->xfer
 * NULL); a no-op otherwise. */
void mpiacc_rp_batch_forget(mpiacc_rp_op_t *op);
/* The calling thread's lazy batch (batch.c): opened by a nonblocking
 * device call (a no-op when open), closed (flushed) by the thread's next
 * pass of MPI's progress engine (op.c's hook, greq.c's wait and test,
 * MPI_Finalize). */
void mpiacc_rp_batch_lazy_open(void);
void mpiacc_rp_batch_lazy_close(void);
void mpiacc_rp_batch_lazy_close_locked(void);

/* ---- complete.c: mpiacc requests in the MPI completion calls --------
 *
 * Every generalized request of an op is registered (handle -> op) from its
 * submission until MPI frees it.  A completion call claims each of its
 * requests that is ours before calling PMPI: while claimed, the op's result
 * goes to the claim instead of to MPI (the query callback returns
 * MPI_SUCCESS, so MPI raises nothing on a handler of its choosing), and the
 * caller raises it where MPI semantics put it. */

typedef struct mpiacc_rp_claim {
    mpiacc_rp_op_t *op; /* NULL: not an mpiacc request                   */
    MPI_Request req;    /* the request claimed (its registry bucket)      */
    MPI_Comm comm;      /* the application's communicator of the op      */
    int error;          /* the op's result, once queried                  */
    int queried;        /* MPI asked for the status (the op completed)    */
    int freed;          /* MPI freed the request (the op is gone)         */
} mpiacc_rp_claim_t;

/* Generalized requests of mpiacc not yet freed by MPI; while zero, the
 * completion calls go straight to PMPI. */
extern atomic_int mpiacc_rp_live;

static inline int mpiacc_rp_none_live(void)
{
    return atomic_load_explicit(&mpiacc_rp_live, memory_order_acquire) == 0;
}

/* Registers / forgets op->greq (op.c: at submission / in the free callback). */
void mpiacc_rp_register(mpiacc_rp_op_t *op);
void mpiacc_rp_unregister(mpiacc_rp_op_t *op);
/* Claims r for one completion call when it is an mpiacc request (returns
 * 1 and fills *c); returns 0 (c->op = NULL) otherwise.  MPI forbids two
 * calls completing one request at once, so a claim has no competition. */
int mpiacc_rp_claim(MPI_Request r, mpiacc_rp_claim_t *c);
/* After the call: gives back a claim whose request MPI did not free. */
void mpiacc_rp_unclaim(mpiacc_rp_claim_t *c);
/* The op's side of a claim (query callback): its result handed to the
 * claim; 0 when no completion call of ours holds one.  The claim fields
 * are read and written under the registry bucket's lock: the op may
 * complete, and MPI free it, in another thread than the one that claimed
 * it (the free callback marks the claim freed, under the same lock). */
int mpiacc_rp_claim_result(mpiacc_rp_op_t *op, int error);

/* greq.c: starts op's generalized request (op->greq) with the pool's
 * callbacks (status, free, cancel, the wait and poll that drive progress). */
int mpiacc_rp_greq_start(mpiacc_rp_op_t *op);
/* PMPI_Wait on r, an mpiacc request or not.  *op_err: the op's error (not
 * raised anywhere yet), *comm its communicator; returns PMPI_Wait's code
 * (already raised by MPI when it is an error). */
int mpiacc_rp_wait(MPI_Request *r, MPI_Status *st, int *op_err, MPI_Comm *comm);

/* ---- stream-ordered completion (early.c) ------------------------
 *
 * An op whose attributes ask for MPIACC_ORDER_STREAM: its protocol calls
 * mpiacc_rp_order_after for each transfer handle that writes (receive) or
 * reads (send) the user's buffer once it is enqueued, which makes the
 * attributes' stream / queue wait for it on the device (be->order_after),
 * and mpiacc_rp_early once the last one is enqueued, which completes the
 * application's request (MPIACC_RP_T_EARLY) while the op goes on in the
 * pool.  Both are no-ops for other ops; mpiacc_rp_early also for an op
 * that already has an error (it completes with it later, as usual) and
 * for synchronous-mode sends.  Lock held. */
int mpiacc_rp_order_after(mpiacc_rp_op_t *op, void *h);
void mpiacc_rp_early(mpiacc_rp_op_t *op);
/* A failure of an op after its request completed early: logged, and kept
 * for the application's communicator until mpiacc_rp_late_take hands it
 * to the next device call there (early.c).  mpiacc_rp_late_take returns
 * MPI_SUCCESS when none is kept; cheap (one atomic load) when none is
 * kept anywhere.  mpiacc_rp_late_drop_all: at MPI_Finalize (logs each). */
/* The end of an op that completed early (op.c; finalize.c's abandon):
 * to is MPIACC_RP_DONE or MPIACC_RP_T_ERROR; off the pool's lists and
 * resources released already.  keep: a failure is logged and kept for the
 * communicator (0: MPI_Finalize's abandon, which logs it itself). */
void mpiacc_rp_finish_detached(mpiacc_rp_op_t *op, int to, int error, int keep);
void mpiacc_rp_late_put(MPI_Comm comm, int err);
int mpiacc_rp_late_take(MPI_Comm comm);
void mpiacc_rp_late_drop_all(void);

/* op.c's machine, for match.c: mpiacc_rp_finish ends op (to: DONE,
 * MPIACC_RP_T_ERROR or MPIACC_RP_T_CANCEL) and completes its request;
 * mpiacc_rp_advance runs op's steps as far as they go (1: op is done).
 * Lock held. */
void mpiacc_rp_finish(mpiacc_rp_op_t *op, int to, int error);
int mpiacc_rp_advance(mpiacc_rp_op_t *op);

/* ---- receives from MPI_ANY_SOURCE through a matched probe (match.c) ---
 *
 * Where mpiacc_core_wildcard_probe is set (MPICH on its UCX netmod: an
 * MPI_ANY_SOURCE receive whose message is already waiting at UCX never
 * completes in MPICH 5.0.2), such a receive is matched with PMPI_Improbe
 * and received with PMPI_Imrecv.  Its protocol's start calls
 * mpiacc_rp_match_start (lock held): one probe now, the message received
 * (IN_FLIGHT) or the op waiting in MATCHING.  Probes progress MPI, so they
 * are never made from the progress hook: mpiacc_rp_match_pending (lock
 * not held) probes for every waiting op, in call order, from the waits and
 * tests of the generalized requests (greq.c) and the blocking receives. */
int mpiacc_rp_match_start(mpiacc_rp_op_t *op);
void mpiacc_rp_match_pending(void);
/* The same sweep, then whether a waiting op could still take a message of
 * (src, tag, comm): a blocking receive from MPI_ANY_SOURCE probes for
 * itself only once none can (MPI's order of posted receives).  Matches in
 * call order: an op behind an overlapping one that found nothing waits. */
int mpiacc_rp_match_pending_for(int src, int tag, MPI_Comm comm);
/* Whether a waiting op could take a message of (src, tag, comm) now, with
 * no probe (0 at once while none waits): a receive naming its source
 * called then must wait for it too (dispatch.c, host_recv). */
int mpiacc_rp_match_behind(int src, int tag, MPI_Comm comm);
/* A message (src, tag, comm) that an application's matched probe took
 * (MPI_Mprobe, MPI_Improbe) while ops are MATCHING: the first op it matches
 * receives it (MPI's order: that receive was called before the probe) and
 * 1 is returned; 0: no op takes it (nothing done). */
int mpiacc_rp_match_offer(MPI_Message *msg, int src, int tag, MPI_Comm comm);
/* Ops in MATCHING (one relaxed load for the callers above). */
extern atomic_int mpiacc_rp_matching;
static inline int mpiacc_rp_matching_now(void)
{
    return atomic_load_explicit(&mpiacc_rp_matching, memory_order_relaxed) > 0;
}
/* Whether a receive from src (not MPI_PROC_NULL) goes through
 * mpiacc_rp_match_start: one from MPI_ANY_SOURCE where those are matched by
 * a probe, and any receive while an op is MATCHING (it may have to wait
 * behind that op: MPI's order of posted receives). */
static inline int mpiacc_rp_match_wanted(int src)
{
    return (src == MPI_ANY_SOURCE && mpiacc_core_wildcard_probe) || mpiacc_rp_matching_now();
}
/* MPI's blocking completions while ops are MATCHING: MPI's wait would not
 * look for their messages (a peer's rendezvous send to one of them, which
 * this wait may need, would never be matched), so these are loops of the
 * matching test and mpiacc_rp_match_pending; MPI's own call otherwise. */
int mpiacc_rp_pmpi_wait(MPI_Request *r, MPI_Status *st);
int mpiacc_rp_pmpi_waitall(int n, MPI_Request r[], MPI_Status st[]);
int mpiacc_rp_pmpi_waitany(int n, MPI_Request r[], int *idx, MPI_Status *st);
int mpiacc_rp_pmpi_waitsome(int n, MPI_Request r[], int *nout, int idx[], MPI_Status st[]);

/* Counters for tests: transitions taken since MPI_Init. */
extern atomic_long mpiacc_rp_transitions[MPIACC_RP_NSTATES][MPIACC_RP_NTARGETS];

#endif
