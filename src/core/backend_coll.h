/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_coll.h: the optional collective engine of a backend, reached
 * through mpiacc_backend_t.coll (like its IPC table): for CUDA, NCCL loaded
 * at run time (src/cuda/cuda_nccl*.c).  The collectives layer (src/coll)
 * keeps one engine communicator per MPI communicator, made collectively at
 * the communicator's first device collective (unique_id on rank 0, sent
 * with MPI, then comm_init on every process), and hands the engine one call
 * at a time as a small program on device memory:
 *
 *   packs     non-contiguous user data packed into the call's device
 *             temporary (mpiacc's pack kernels), after the dependencies;
 *   steps     ONE group of engine operations (a collective, or sends and
 *             receives: ncclGroupStart ... ncclGroupEnd), on packed or
 *             user memory;
 *   unpacks   the temporary unpacked back into user memory.
 *
 * Everything is enqueued on one stream (the attributes' MPIACC_STREAM, else
 * an internal stream made to wait GPU-side on the dependencies) in the MPI
 * call, in the order the communicator's collectives are called, so every
 * process enqueues its engine operations in the same order.
 *
 * Plain C, no engine types: data types and reductions are MPI's predefined
 * ones (reduce_supported says which the engine takes; data movement is
 * MPI_BYTE), errors are MPI error codes made with mpiacc_err.
 */
#ifndef MPIACC_BACKEND_COLL_H_INCLUDED
#define MPIACC_BACKEND_COLL_H_INCLUDED

#include <stddef.h>

#include "core.h"

#define MPIACC_BCOLL_ID_BYTES 128 /* the engine communicator's unique id (NCCL: ncclUniqueId) */
#define MPIACC_BCOLL_UUID_BYTES 16

/* Step kinds (what ONE engine operation of the group does). */
enum {
    MPIACC_BCOLL_ALLREDUCE,      /* src -> dst (may be equal), count elements, op          */
    MPIACC_BCOLL_REDUCE,         /* src -> dst at root `peer` (dst ignored elsewhere)     */
    MPIACC_BCOLL_BCAST,          /* src at root `peer` -> dst everywhere                  */
    MPIACC_BCOLL_ALLGATHER,      /* src (count) -> dst (nranks x count, rank order)       */
    MPIACC_BCOLL_REDUCE_SCATTER, /* src (nranks x count) -> dst (count), op               */
    MPIACC_BCOLL_SEND,           /* src, count, to `peer` (may be this process)           */
    MPIACC_BCOLL_RECV,           /* dst, count, from `peer`                               */
    MPIACC_BCOLL_NSTEPS
};

/* Where a step's data is: user memory at ptr (ptr != NULL), or `off` bytes
 * into the call's device temporary (ptr == NULL). */
typedef struct mpiacc_bcoll_ref {
    void *ptr;
    MPI_Count off;
} mpiacc_bcoll_ref_t;

typedef struct mpiacc_bcoll_step {
    int what;                     /* MPIACC_BCOLL_* */
    mpiacc_bcoll_ref_t src, dst;
    MPI_Count count;              /* elements of type */
    MPI_Datatype type;            /* a predefined type (MPI_BYTE for data movement) */
    MPI_Op op;                    /* reductions: a predefined operation */
    int peer;                     /* root (REDUCE, BCAST) or peer (SEND, RECV) */
} mpiacc_bcoll_step_t;

/* A pack (user memory -> temporary) or unpack (temporary -> user memory):
 * packed bytes [d.first, d.last) of d.count x d.type at d.buf are at
 * tmp + off + (byte - d.first).  d.host is unused. */
typedef struct mpiacc_bcoll_xfer {
    mpiacc_xfer_desc_t d;
    MPI_Count off;
} mpiacc_bcoll_xfer_t;

/* One call. */
typedef struct mpiacc_bcoll_call {
    const mpiacc_attrs_t *a;      /* the buffers' attributes: device, MPIACC_STREAM, MPIACC_ORDER */
    void *deps[2];                /* dependencies of the backend (capture; NULL: none) the work waits
                                   * for GPU-side; with MPIACC_STREAM work enqueued there before the
                                   * call needs none */
    MPI_Count tmp_bytes;          /* the device temporary (0: none) */
    int npack, nstep, nunpack;
    const mpiacc_bcoll_xfer_t *packs;
    const mpiacc_bcoll_step_t *steps;
    const mpiacc_bcoll_xfer_t *unpacks;
    /* MPIACC_ORDER_STREAM: nothing is left to wait for on the host: the
     * stream of the call (MPIACC_STREAM, else the legacy default stream)
     * is ordered after the work, the temporary is freed in stream order,
     * and *xfer is NULL. */
    int stream_order;
    const char *name;             /* MPI's name of the call, for messages */
} mpiacc_bcoll_call_t;

struct mpiacc_backend_coll {
    const char *name; /* "NCCL" */
    /* Loads the engine, once per process (thread-safe; later calls return
     * the first answer).  1: usable; 0: not (*why: a static string saying
     * why, also logged once at MPIACC_LOG=info by the caller). */
    int (*load)(const char **why);
    /* One or more lines for mpiacc-info ("  NCCL 2.28.9 (path)\n" or why
     * not); loads the engine. */
    int (*describe)(char *out, size_t len);
    /* The device a call with attributes a runs on (*dev) and its identity
     * (uuid: equal for two processes that share one GPU, MPS included). */
    int (*device)(const mpiacc_attrs_t *a, int *dev, unsigned char uuid[MPIACC_BCOLL_UUID_BYTES]);
    /* On one process: a new unique id for comm_init. */
    int (*unique_id)(unsigned char id[MPIACC_BCOLL_ID_BYTES]);
    /* Collective over the nranks processes of boot (the communicator's
     * hidden duplicate; the engine may use it or not): this process's engine
     * communicator, rank `rank`, bound to device dev.  Blocking. */
    int (*comm_init)(int dev, int nranks, int rank, const unsigned char id[MPIACC_BCOLL_ID_BYTES], MPI_Comm boot,
                     void **cc);
    /* Frees an engine communicator with no work in flight (local). */
    void (*comm_free)(void *cc);
    /* Frees an engine communicator after a failure, stopping its work on
     * the device (ncclCommAbort; local). */
    void (*comm_abort)(void *cc);
    /* 1 when the engine reduces (type, op): a predefined type and
     * operation.  Pure (the same answer on every process). */
    int (*reduce_supported)(MPI_Datatype type, MPI_Op op);
    /* Enqueues the call (packs, steps, unpacks) behind its dependencies;
     * *xfer (NULL: nothing to wait for) is tested with test() and released
     * with release().  A device other than the communicator's:
     * MPIACC_ERRK_ARG.  Engine errors: mpiacc_err with the engine's message
     * (ncclResult_t -> class: see cuda_nccl.c). */
    int (*run)(void *cc, const mpiacc_bcoll_call_t *call, void **xfer);
    /* Non-blocking test of *xfer; cc (NULL: do not look) is asked for an
     * asynchronous error now and then.  An error: the communicator must be
     * aborted (comm_abort). */
    int (*test)(void *cc, void *xfer, int *done);
    /* Releases a handle (NULL allowed; one not done is waited for). */
    void (*release)(void *xfer);
};

#endif /* MPIACC_BACKEND_COLL_H_INCLUDED */
