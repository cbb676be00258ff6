/*
 * protocol/direct_comm: which communicators are "direct", and the hidden
 * communicator behind each, for the on-device collectives of one node
 * (src/coll/ipc*.c).  Point-to-point no longer looks at it: the info key
 * "mpiacc_direct" and MPIACC_DIRECT=1 are accepted and, for point-to-point,
 * change nothing (device messages go through MPI's transport or staging on
 * every communicator alike).
 *
 * A communicator is direct when the info key says "true" (MPI_Comm_set_info,
 * MPI_Comm_dup_with_info and the constructors with an info argument; the
 * value is compared over the processes) or, for MPI_COMM_WORLD and what is
 * made from it, MPIACC_DIRECT=1.  Its state (mpiacc_proto_comm_t) is cached
 * on the user's communicator through a keyval: one hidden duplicate
 * (`data`, made by MPI_Comm_create: the collectives' records travel there)
 * and the node map (which peers share this process's node), computed once
 * at MPI_Init over MPI_COMM_WORLD.  Its delete callback (MPI_Comm_free,
 * MPI_Comm_disconnect, MPI_Comm_set_info with the key off, mpiacc's
 * MPI_Finalize for MPI_COMM_WORLD) drops the communicator's reference;
 * operations in flight hold their own, and the hidden communicator is freed
 * when the last one goes, from an application call, never from inside
 * MPI's progress engine.
 */
#ifndef MPIACC_PROTO_DIRECT_COMM_H_INCLUDED
#define MPIACC_PROTO_DIRECT_COMM_H_INCLUDED

#include <stdatomic.h>

#include "../core/core.h"

typedef struct mpiacc_proto_comm {
    atomic_int refs;          /* the user's communicator + operations in flight */
    MPI_Comm data;            /* hidden duplicate (same group, same ranks)     */
    int rank, size;
    unsigned char *same_node; /* [size]: 1 when that rank shares this node     */
    struct mpiacc_proto_comm *zombie_next;
} mpiacc_proto_comm_t;

/* Settings of this process (environment, read once at MPI_Init). */
typedef struct mpiacc_proto_cfg {
    int world; /* MPIACC_DIRECT: MPI_COMM_WORLD is direct                */
    int ipc;   /* MPIACC_IPC: CUDA IPC may be used (default 1)           */
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

/* Notes logged once per cause at MPIACC_LOG=info. */
typedef enum {
    MPIACC_PROTO_NOTE_INTERCOMM, /* an intercommunicator asked to be direct */
    MPIACC_PROTO_NOTE_MAX
} mpiacc_proto_note_t;
void mpiacc_proto_note(mpiacc_proto_note_t cause, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
