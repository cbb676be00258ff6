/* streampool internals shared by pool.c, op.c and blocking.c. */
#ifndef MPIACC_SP_INTERNAL_H_INCLUDED
#define MPIACC_SP_INTERNAL_H_INCLUDED

#include <pthread.h>

#include "streampool.h"
#include "pack/pack.h"

/* Operation states; op.c documents the machine. */
typedef enum {
    MPIACC_SP_DEP_PENDING, /* waiting on the host for the data dependency      */
    MPIACC_SP_PACKING,     /* send: pack into staging enqueued                 */
    MPIACC_SP_READY,       /* send: packed, waiting for its turn (ordering)    */
    MPIACC_SP_IN_FLIGHT,   /* PMPI request active (send or receive)            */
    MPIACC_SP_UNPACKING,   /* receive: unpack from staging enqueued            */
    MPIACC_SP_DONE,        /* generalized request completed (op being freed)   */
    MPIACC_SP_NEW          /* being set up in the MPI call                     */
} mpiacc_sp_state_t;

/* Indexes of mpiacc_sp_transitions[from][to]: states, plus these two
 * pseudo-targets (the op ends in DONE either way). */
#define MPIACC_SP_T_ERROR 6
#define MPIACC_SP_T_CANCEL 7

typedef struct mpiacc_sp_op {
    struct mpiacc_sp_op *next, *prev;   /* pool's active list, call order   */
    struct mpiacc_sp_op *snext, *sprev; /* pool's unissued-send queue        */
    mpiacc_sp_state_t state;
    int is_send;
    int mode;        /* MPIACC_SEND_*                                       */
    int in_sendq;
    const mpiacc_backend_t *be; /* NULL for a host send queued for ordering */
    mpiacc_attrs_t attrs;
    mpiacc_pack_type_t *type;
    MPI_Count count;
    void *buf;
    void *dep, *xfer;
    /* staging */
    void *staging;
    size_t staging_class;
    MPI_Count bytes; /* packed bytes: to send, or capacity / received     */
    /* host send queued behind device sends */
    MPI_Datatype host_type;
    /* matching */
    int peer, tag;
    MPI_Comm comm;
    MPI_Request inner; /* the PMPI request                                   */
    MPI_Request greq;  /* the application's generalized request            */
    /* result */
    int error;
    int st_source, st_tag, cancelled;
    atomic_int cancel_req;
    struct mpiacc_sp_op *free_next;
} mpiacc_sp_op_t;

typedef struct mpiacc_sp_pool {
    pthread_mutex_t lock; /* guards everything below except the freelist   */
    mpiacc_sp_op_t *head, *tail;   /* active operations                     */
    mpiacc_sp_op_t *shead, *stail; /* sends not yet handed to MPI           */
    int nactive;
    int registered; /* a poll function is registered with MPIX_Async_start */
    pthread_mutex_t free_lock; /* innermost lock: never held across MPI calls */
    mpiacc_sp_op_t *freelist;
    /* statistics, for tests and diagnostics */
    atomic_long nstaging_allocs;
} mpiacc_sp_pool_t;

extern mpiacc_sp_pool_t mpiacc_sp_pool;

/* pool.c */
mpiacc_sp_op_t *mpiacc_sp_op_alloc(void);
void mpiacc_sp_op_free(mpiacc_sp_op_t *op);
/* Adds op to the active list (and the send queue for sends); lock held.
 * Registers the poll function when needed. */
int mpiacc_sp_enqueue(mpiacc_sp_op_t *op);
void mpiacc_sp_unlink(mpiacc_sp_op_t *op);
void mpiacc_sp_sendq_remove(mpiacc_sp_op_t *op);
/* Advances every active operation once; lock held. */
void mpiacc_sp_progress_locked(void);
int mpiacc_sp_staging_get(int kind, const mpiacc_backend_t *be, MPI_Count bytes, void **p, size_t *cls);
void mpiacc_sp_staging_put(int kind, void *p, size_t cls);
void mpiacc_sp_staging_drain(void);

/* op.c */
/* Moves op as far along its state machine as it can go now; lock held.
 * Returns 1 when op completed (it must not be touched afterwards). */
int mpiacc_sp_advance(mpiacc_sp_op_t *op);
int mpiacc_sp_grequest_start(mpiacc_sp_op_t *op);
/* NEW -> first state (send: PACKING/DEP_PENDING, or READY for a host send;
 * receive: PMPI_Irecv, IN_FLIGHT).  On failure the op is untouched by MPI. */
int mpiacc_sp_start(mpiacc_sp_op_t *op);

/* Counters for tests: transitions taken since MPI_Init. */
extern atomic_long mpiacc_sp_transitions[8][8];

#endif
