/*
 * protocol/direct_comm: which communicators are direct, and the hidden
 * communicators behind them.
 *
 * A communicator is direct when the application asserted, collectively,
 * that device messages on it are received into device buffers (info key
 * "mpiacc_direct", or MPIACC_DIRECT=1 for MPI_COMM_WORLD and everything made
 * from it; include/mpiacc.h states the contract).  Device messages on a
 * direct communicator then travel on communicators mpiacc owns:
 *
 *   data  one hidden duplicate per direct communicator: the first message
 *         of every device send (eager data or a ready-to-send), with the
 *         user's tag, so that MPI matches sources, tags, wildcards and keeps
 *         the non-overtaking order;
 *   ctl   ONE process-wide duplicate of MPI_COMM_WORLD, made at MPI_Init:
 *         the follow-ups of every operation (pipelined chunks, BLOB, FIN,
 *         CTS_PIPE), with tags derived from the sender's operation id
 *         (protocol/wire.h; ids are unique per process, so operations of
 *         different communicators never share a (source, tag) on it), the
 *         peer addressed by its rank in MPI_COMM_WORLD (ctl_rank).  Only a
 *         communicator whose group is not inside MPI_COMM_WORLD (dynamic
 *         processes) gets a ctl of its own.
 *
 * No user receive is ever posted on ctl, so a user's MPI_ANY_SOURCE /
 * MPI_ANY_TAG device receive (posted on data) never matches a follow-up.
 * The node map (which peers share this process's node, for CUDA IPC) and
 * the eager limit (the smallest MPIACC_EAGER_MAX of all processes) are
 * computed once at MPI_Init over MPI_COMM_WORLD, so making a communicator
 * direct costs one MPI_Comm_create (the data duplicate: one context id) and
 * the collective agreement on the info value where an info argument sets it
 * (mpiacc_proto_comm_set).
 *
 * The state lives in an mpiacc_proto_comm_t cached on the user's
 * communicator through a keyval.  Its delete callback (from MPI_Comm_free,
 * MPI_Comm_disconnect, MPI_Comm_set_info with the key off, or mpiacc's
 * MPI_Finalize for MPI_COMM_WORLD) drops the communicator's reference;
 * operations in flight hold their own, and the hidden communicator is freed
 * when the last reference goes, from an application call, never from inside
 * MPI's progress engine.
 */
#ifndef MPIACC_PROTO_DIRECT_COMM_H_INCLUDED
#define MPIACC_PROTO_DIRECT_COMM_H_INCLUDED

#include <stdatomic.h>

#include "../core/core.h"

typedef struct mpiacc_proto_comm {
    atomic_int refs;          /* the user's communicator + operations in flight */
    MPI_Comm data;            /* hidden duplicate (same group, same ranks)     */
    MPI_Comm ctl;             /* the process-wide ctl, or own_ctl              */
    MPI_Comm own_ctl;         /* only for a group not inside MPI_COMM_WORLD    */
    int *ctl_rank;            /* [size]: each rank's rank on ctl               */
    int rank, size;
    int tag_mod;              /* M: ctl tags are 2*(id mod M) and 2*(id mod M)+1 */
    MPI_Count eager_max;      /* agreed (smallest MPIACC_EAGER_MAX of all ranks) */
    unsigned char *same_node; /* [size]: 1 when that rank shares this node     */
    void *probe;              /* direct_probe.c: device messages probed, not received */
    struct mpiacc_proto_comm *zombie_next;
} mpiacc_proto_comm_t;

/* Settings of this process (environment, read once at MPI_Init). */
typedef struct mpiacc_proto_cfg {
    int world;           /* MPIACC_DIRECT: MPI_COMM_WORLD is direct                */
    int ipc;             /* MPIACC_IPC: CUDA IPC may be used (default 1)           */
    MPI_Count ipc_min;   /* MPIACC_IPC_MIN: smallest message sent by IPC (default 0) */
    MPI_Count eager_max; /* MPIACC_EAGER_MAX: largest eager message (default 64 KiB) */
    MPI_Count chunk;     /* MPIACC_PIPELINE_CHUNK: pipelined data bytes per chunk (default 1 MiB) */
    int warn;            /* MPIACC_DIRECT_WARN: seconds before a suspected breach is logged (0: never) */
} mpiacc_proto_cfg_t;

extern mpiacc_proto_cfg_t mpiacc_proto_cfg;

/* Set (for good) once any communicator was made direct: until then no
 * lookup is made at all. */
extern atomic_int mpiacc_proto_comm_any;
/* Direct states whose hidden communicators are not freed yet (tests). */
extern atomic_int mpiacc_proto_comm_live;

/* MPI_Init: the keyval, the settings, and MPI_COMM_WORLD when MPIACC_DIRECT
 * asks for it (collective over MPI_COMM_WORLD). */
int mpiacc_proto_comm_init(void);
/* MPI_Finalize (after the request pool accepted it): MPI_COMM_WORLD's hidden
 * communicators, those left over by freed communicators, the keyval. */
void mpiacc_proto_comm_finalize(void);

/* The direct state of comm (borrowed: valid during the caller's MPI call on
 * comm), or NULL when comm is not direct.  Without any direct communicator,
 * one atomic load. */
mpiacc_proto_comm_t *mpiacc_proto_comm_lookup_slow(MPI_Comm comm);
static inline mpiacc_proto_comm_t *mpiacc_proto_comm_lookup(MPI_Comm comm)
{
    if (!atomic_load_explicit(&mpiacc_proto_comm_any, memory_order_relaxed)) return NULL;
    return mpiacc_proto_comm_lookup_slow(comm);
}

/* References held by operations in flight. */
void mpiacc_proto_comm_ref(mpiacc_proto_comm_t *dc);
void mpiacc_proto_comm_unref(mpiacc_proto_comm_t *dc);
/* Frees the hidden communicators whose last reference went away inside
 * MPI's progress engine; called from application calls. */
void mpiacc_proto_comm_sweep(void);

/* The rank on dc->ctl of rank r of the direct communicator; MPI_ANY_SOURCE
 * and MPI_PROC_NULL (negative) stay as they are (a wildcard receive learns
 * its peer from its first message). */
static inline int mpiacc_proto_comm_ctl_rank(const mpiacc_proto_comm_t *dc, int r)
{
    return r < 0 ? r : dc->ctl_rank[r];
}

/* Makes comm direct (collective over comm; nothing when it already is).
 * An intercommunicator stays as it is (logged once at info). */
int mpiacc_proto_comm_make(MPI_Comm comm);
/* Makes comm not direct (nothing when it is not). */
int mpiacc_proto_comm_drop(MPI_Comm comm);
/* Where an info argument sets the protocol (MPI_Comm_set_info,
 * MPI_Comm_dup_with_info, constructors with info; collective over comm):
 * want (0 or 1) is compared over every process of comm first; when they
 * differ, every process returns an MPI_ERR_ARG-class error naming the
 * mismatch and comm stays as it was; else comm is made direct or not. */
int mpiacc_proto_comm_set(MPI_Comm comm, int want);

/* Reads the info key: *value = -1 when absent (or info is MPI_INFO_NULL),
 * 0 for false/0/no/off, 1 for true/1/yes/on (any case); another value is an
 * MPI_ERR_ARG-class error. */
int mpiacc_proto_comm_info(MPI_Info info, int *value);

/* direct_probe.c: drops the device messages probed on dc and not
 * received (their first messages were received; their senders' follow-ups
 * are not). */
void mpiacc_proto_probe_free(mpiacc_proto_comm_t *dc);
/* Before dc's data communicator is freed (an application call): every
 * device message still waiting there is received, reported (MPIACC_LOG
 * warning naming rank, tag and `where`), its follow-ups drained and its
 * sender told (FIN with an MPI_ERR_TYPE-class error), so that MPI never
 * frees a communicator with unmatched messages.  Returns their number. */
int mpiacc_proto_probe_drain(mpiacc_proto_comm_t *dc, const char *where);

/* Fallbacks and other notes logged once per cause at MPIACC_LOG=info. */
typedef enum {
    MPIACC_PROTO_NOTE_INTERCOMM, /* an intercommunicator asked to be direct */
    MPIACC_PROTO_NOTE_NO_IPC,    /* sender's backend has no IPC            */
    MPIACC_PROTO_NOTE_IPC_OFF,   /* MPIACC_IPC=0                           */
    MPIACC_PROTO_NOTE_REMOTE,    /* peer on another node                   */
    MPIACC_PROTO_NOTE_EXPORT,    /* the buffer could not be exported       */
    MPIACC_PROTO_NOTE_DECLINED,  /* the receiver declined IPC (CTS_PIPE)   */
    MPIACC_PROTO_NOTE_IMPORT,    /* the receiver's import was refused      */
    MPIACC_PROTO_NOTE_MAX
} mpiacc_proto_note_t;
void mpiacc_proto_note(mpiacc_proto_note_t cause, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
