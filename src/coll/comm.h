/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/comm.h: what the collectives layer keeps per MPI communicator that
 * saw a device collective (comm.c), and the engine choice (choice.c).
 *
 * A collective is a DEVICE collective on a process when every buffer it
 * passes (the significant ones: a non-root's receive buffer of MPI_Gather
 * is not) is memory of one kind that has a collective engine — CUDA device
 * memory, tagged MPIACC_BUF_CUDA or classified so under MPIACC_UVA / a
 * memory-kind assertion — whatever the counts.  Each process decides from
 * its own buffers, with no message; the application must give every
 * process of a collective device buffers or none (MPIACC_COLL_CHECK=1
 * verifies it: one small MPI_Allreduce per collective, a mismatch is
 * MPI_ERR_ARG on every process instead of a hang).  So the host buffers of
 * a collective cost nothing new, and every process of a device collective
 * is in it, which lets the communicator's facts be established at its first
 * device collective, collectively, once:
 *
 *   - a hidden duplicate, on which the facts and the engine's unique id
 *     travel, kept only for the IPC engine's record exchanges (freed
 *     otherwise: MPICH has 2048 context ids);
 *   - which processes share a node (MPI_Comm_split_type SHARED) and a GPU
 *     (the device's UUID, MPS included), whether every process loaded the
 *     engine (NCCL) and has an IPC table;
 *   - the engine, the same on every process (choice.c):
 *       MPIACC_COLL_ENGINE=auto (default): NCCL when every process has it
 *         and no two processes share a GPU (NCCL refuses that); else, on one
 *         node, the IPC engine (src/coll/ipc*.c); else staged;
 *       nccl / ipc: that engine when it can serve, else staged (logged);
 *       staged: host staging around MPI's collective (diagnosis, benchmarks);
 *   - for NCCL, the engine communicator (unique id on rank 0, MPI_Bcast on
 *     the hidden duplicate, comm_init everywhere, an MPI_Allreduce of the
 *     outcome: a failure anywhere makes every process take the next engine).
 * One NCCL communicator per MPI communicator, made with ncclCommInitRank
 * (not ncclCommSplit: a parent's other processes are not in the child's
 * first device collective), bound to the device of that first call's
 * buffers.  The state is an attribute of the communicator: freed with it
 * (the delete callback; operations in flight hold references, the last one
 * frees it from an application call) or at MPI_Finalize.  A failure of the
 * engine (an NCCL error, returned or asynchronous) aborts the engine
 * communicator: every later device collective on the communicator fails
 * with that error class.
 */
#ifndef MPIACC_COLL_COMM_H_INCLUDED
#define MPIACC_COLL_COMM_H_INCLUDED

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/backend_coll.h"
#include "core/backend_ipc.h"

/* Engines (MPIACC_COLL_ENGINE's words, in this order). */
enum { MPIACC_COLL_ENGINE_AUTO, MPIACC_COLL_ENGINE_NCCL, MPIACC_COLL_ENGINE_IPC, MPIACC_COLL_ENGINE_STAGED };

/* One process's facts, gathered at the first device collective. */
typedef struct mpiacc_coll_facts {
    int32_t node;    /* rank (in the communicator) of its node's first process */
    int32_t want;    /* MPIACC_COLL_ENGINE */
    int32_t has_coll; /* the engine (NCCL) loaded */
    int32_t has_ipc;  /* an IPC table for the buffers' kind */
    int32_t dev_ok;   /* uuid is valid */
    int32_t pad;
    unsigned char uuid[MPIACC_BCOLL_UUID_BYTES];
} mpiacc_coll_facts_t;

/* choice.c: the engine for these facts (f[0..n), every process's), the same
 * on every process; *why says why not NCCL (a static string, NULL when it
 * is NCCL). */
int mpiacc_coll_engine_choose(const mpiacc_coll_facts_t *f, int n, const char **why);
/* Its name ("NCCL", "IPC", "staged"). */
const char *mpiacc_coll_engine_name(int engine);

typedef struct mpiacc_coll_comm {
    atomic_int refs;     /* the communicator's attribute + operations in flight */
    MPI_Comm user;       /* the application's communicator (finalize) */
    MPI_Comm hidden;     /* duplicate of user (the IPC engine's; MPI_COMM_NULL for the others) */
    int rank, size, kind; /* kind: the buffer kind of the first device collective */
    int engine;          /* MPIACC_COLL_ENGINE_NCCL, _IPC or _STAGED */
    int one_node;
    const struct mpiacc_backend_coll *ct;
    const struct mpiacc_backend_ipc *ipc;
    pthread_mutex_t lock; /* guards cc and broken: run, test and abort take it */
    void *cc;            /* the engine communicator (NULL after a failure) */
    int broken;          /* the engine failed: this MPI error class for every later call */
    struct mpiacc_coll_comm *next; /* every state (finalize), or the zombie list */
    int listed, zombie;
} mpiacc_coll_comm_t;

/* The state of c's communicator for a device collective of buffer kind
 * `kind`, made (collectively: every process of the communicator is in this
 * call) at the communicator's first one; borrowed for the call.  A
 * communicator's first device collective of another kind later: NULL
 * (staged).  Errors: MPI calls, memory. */
struct mpiacc_coll_op;
int mpiacc_coll_comm_get(struct mpiacc_coll_op *c, int kind, mpiacc_coll_comm_t **out);
/* References of operations in flight; the last unref from inside MPI's
 * progress (an op finishing) leaves the state to mpiacc_coll_comm_sweep. */
void mpiacc_coll_comm_ref(mpiacc_coll_comm_t *cs);
void mpiacc_coll_comm_unref(mpiacc_coll_comm_t *cs);
/* Frees the states whose last reference went inside MPI's progress. */
void mpiacc_coll_comm_sweep(void);
/* An engine failure (err) on cs: the engine communicator aborted (once),
 * later calls fail with err's class.  Lock held. */
void mpiacc_coll_comm_fail_locked(mpiacc_coll_comm_t *cs, int err);
/* MPI_Finalize: every state's resources. */
void mpiacc_coll_comm_finalize(void);

/* The tables the collectives layer uses for buffers of `kind` handled by
 * backend be: the backend's, or a test's (coll_testhooks.h). */
const struct mpiacc_backend_coll *mpiacc_coll_table(int kind, const mpiacc_backend_t *be);
const struct mpiacc_backend_ipc *mpiacc_coll_ipc_table(int kind, const mpiacc_backend_t *be);
extern const struct mpiacc_backend_coll *mpiacc_coll_test_coll[MPIACC_KIND_MAX];
extern const struct mpiacc_backend_ipc *mpiacc_coll_test_ipc[MPIACC_KIND_MAX];

#endif
