/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/ipc.h: the IPC collective engine: on-device collectives on
 * communicators whose processes share one node (comm.h: chosen where NCCL
 * cannot serve, e.g. processes sharing a GPU, or by MPIACC_COLL_ENGINE=ipc) (ipc.c: the framework; ipc_move.c: Bcast,
 * Allgather(v), Alltoall(v), Neighbor_alltoallw; ipc_reduce.c: Reduce and
 * Allreduce).  Pull-based over the backend's IPC table
 * (src/core/backend_ipc.h):
 *
 *   1. every process fills one record: "ok" (or why not), the exports of
 *      the buffers peers will read (export_buf, once per buffer per call),
 *      and the blocks it offers (displacement, count, destination, the
 *      datatype blob);
 *   2. one PMPI_Allgather of the records on the communicator's hidden
 *      duplicate (comm.h).  Any record not ok: every process takes the staged path (the
 *      decision is the same everywhere, logged once per cause at info);
 *   3. each process reads what it needs from the peers' buffers with its
 *      GPU (import_copy: one kernel from the peer's layout into its own;
 *      import_reduce for reductions) and waits for its copies;
 *   4. a final PMPI_Allreduce(MAX) of an error flag on the duplicate: nobody
 *      returns (and reuses a buffer peers read) before every process is
 *      done reading, and every process returns an error class when any
 *      failed.
 *
 * Blocking calls take these steps in the calling thread (ipc.c:
 * mpiacc_coll_ipc_run); nonblocking ones as a pooled operation driven by
 * MPI's progress (ipc_nb.c: PMPI_Iallgather, the backend's test() on the
 * reads, PMPI_Iallreduce; states in src/reqpool/op.c).  Every process of
 * a device collective takes part in step 2 (comm.h: device buffers on
 * every process or on none).
 */
#ifndef MPIACC_COLL_IPC_H_INCLUDED
#define MPIACC_COLL_IPC_H_INCLUDED

#include <stdint.h>

#include "coll_internal.h"
#include "core/backend_ipc.h"

/* Why a process cannot take the IPC path (the record's `ok` is
 * MPIACC_COLL_IPC_OK, else one of these). */
enum {
    MPIACC_COLL_IPC_OK = 0,
    MPIACC_COLL_IPC_NO_TABLE,  /* a buffer of a kind without IPC (host, OpenCL) */
    MPIACC_COLL_IPC_EXPORT,    /* export_buf refused or failed */
    MPIACC_COLL_IPC_RECORD,    /* blocks and blobs do not fit in the record */
    MPIACC_COLL_IPC_SHAPE,     /* a call shape the algorithm does not handle (in place alltoall...) */
    MPIACC_COLL_IPC_REDUCE,    /* (type, op) not reduced by the backend, or not a predefined type */
    MPIACC_COLL_IPC_MIXED,     /* the send and receive buffers' kinds differ */
    MPIACC_COLL_IPC_ERROR,     /* a local error before the exchange (the staged path reports it) */
    MPIACC_COLL_IPC_NCAUSES
};

/* One block a process offers: count elements of its datatype blob at disp
 * bytes from the buffer of export `side`, for destination `dest` (-1: any). */
typedef struct mpiacc_coll_ipc_blk {
    int64_t disp, count;
    int32_t dest, side;
    uint32_t blob_off, blob_bytes; /* in the record's payload */
} mpiacc_coll_ipc_blk_t;

typedef struct mpiacc_coll_ipc_hdr {
    int32_t ok;     /* MPIACC_COLL_IPC_OK or a cause */
    int32_t nblk;   /* blocks offered */
    int32_t has[2]; /* x[s] is valid */
    int32_t vote;   /* algorithm's choice of this process (ipc_reduce.c: two phases) */
    int32_t pad;
    mpiacc_ipc_export_t x[2];
} mpiacc_coll_ipc_hdr_t;

/* An offer before it is written into the record. */
typedef struct mpiacc_coll_ipc_offer {
    MPI_Aint disp;
    MPI_Count count;
    MPI_Datatype type;
    int dest, side;
} mpiacc_coll_ipc_offer_t;

/* A process's part of the exchange between two phases. */
typedef struct mpiacc_coll_ipc_phase_rec {
    int32_t cls, has;
    mpiacc_ipc_export_t x;
} mpiacc_coll_ipc_phase_rec_t;

typedef struct mpiacc_coll_ipc_alg mpiacc_coll_ipc_alg_t;

typedef struct mpiacc_coll_ipc {
    mpiacc_coll_op_t *c;
    const mpiacc_coll_ipc_alg_t *g;
    mpiacc_coll_comm_t *cs; /* the communicator's state: its hidden duplicate carries the exchanges */
    const struct mpiacc_backend_ipc *ipc;
    int cause;                 /* this process's record */
    size_t rec_bytes;          /* the same on every process */
    unsigned char *mine, *all; /* records: this process's, everyone's */
    int noffer, offer_cap;
    mpiacc_coll_ipc_offer_t *offers;
    void *token[2];
    int exported[2];
    void **xfers;
    const mpiacc_backend_t **xfer_be;
    int nxfer, xfer_cap;
    int err;        /* first local error */
    int spans_only; /* the record carries exports only (payload 0) */
    /* reductions (ipc_reduce.c) */
    MPI_Datatype base; /* the predefined type reduced */
    MPI_Count esz;     /* its size */
    mpiacc_pack_type_t *t;
    /* nonblocking calls (ipc_nb.c): run() asks for the exchange between
     * two phases (side, span) instead of taking it; the records of that
     * exchange; the final flags */
    int nb, phase_wanted, phase_side;
    MPI_Aint phase_lo, phase_hi;
    mpiacc_coll_ipc_phase_rec_t phase_mine, *phase_all;
    void *phase_token;
    int phase_ok;
    int flag_mine, flag_peer;
    int cs_ref; /* holds a reference to cs (mpiacc_coll_comm_ref) */
} mpiacc_coll_ipc_t;

/* A family of IPC algorithms: size of a record's payload (the same on
 * every process; 0: exports only, the offers just say what to export),
 * local checks and offers before the exchange, and the
 * reads after it (every record ok). */
struct mpiacc_coll_ipc_alg {
    size_t (*payload)(mpiacc_coll_ipc_t *ci);
    int (*prepare)(mpiacc_coll_ipc_t *ci); /* sets ci->cause, adds offers */
    int (*run)(mpiacc_coll_ipc_t *ci);     /* reads; errors into ci->err */
    /* Two phases, nonblocking (ci->nb): run() sets ci->phase_wanted and
     * returns after the first phase's reads; once they are done and the
     * exchange between the phases is over without a failure anywhere,
     * finish() enqueues the second phase's reads.  NULL: one phase. */
    int (*finish)(mpiacc_coll_ipc_t *ci);
};

/* ipc_move.c / ipc_reduce.c: the algorithm for a kind, or NULL. */
const mpiacc_coll_ipc_alg_t *mpiacc_coll_ipc_move_alg(int kind);
const mpiacc_coll_ipc_alg_t *mpiacc_coll_ipc_reduce_alg(int kind);

/* ipc.c, for the algorithms */
/* Adds an offer (exported with side s's buffer). */
int mpiacc_coll_ipc_offer(mpiacc_coll_ipc_t *ci, int side, MPI_Aint disp, MPI_Count count, MPI_Datatype type,
                          int dest);
/* Record of process r; its block i; its blob. */
const mpiacc_coll_ipc_hdr_t *mpiacc_coll_ipc_rec(const mpiacc_coll_ipc_t *ci, int r);
const mpiacc_coll_ipc_blk_t *mpiacc_coll_ipc_blk(const mpiacc_coll_ipc_t *ci, int r, int i);
/* Copies block i of process r into receive slot `slot` of this process
 * (nothing when both are empty; more bytes than the slot: MPI_ERR_TRUNCATE
 * class).  Errors go to ci->err. */
void mpiacc_coll_ipc_read(mpiacc_coll_ipc_t *ci, int r, int i, int slot);
/* The export of side s of process r, moved by disp bytes. */
void mpiacc_coll_ipc_moved(const mpiacc_coll_ipc_t *ci, int r, int s, MPI_Aint disp, mpiacc_ipc_export_t *x);
/* Keeps a transfer handle of backend be to wait for. */
void mpiacc_coll_ipc_keep(mpiacc_coll_ipc_t *ci, const mpiacc_backend_t *be, void *xfer);
/* Waits for every kept transfer (errors into ci->err). */
void mpiacc_coll_ipc_wait(mpiacc_coll_ipc_t *ci);
/* Between two phases: every process's error flag and a new export of side
 * s of its buffer (span [lo, hi)), gathered (replaces x[s] of every
 * record).  Returns the exchange's MPI error; *peer_err when a process
 * failed. */
int mpiacc_coll_ipc_phase(mpiacc_coll_ipc_t *ci, int s, MPI_Aint lo, MPI_Aint hi, int *peer_err);
/* The exchange between two phases in two halves (ipc_nb.c; the blocking
 * mpiacc_coll_ipc_phase calls both): this process's flag and new export
 * of side s, gathered into *req (NULL: blocking); then, once complete, the
 * records updated (*peer_err as above). */
int mpiacc_coll_ipc_phase_post(mpiacc_coll_ipc_t *ci, int s, MPI_Aint lo, MPI_Aint hi, MPI_Request *req);
void mpiacc_coll_ipc_phase_end(mpiacc_coll_ipc_t *ci, int s, int *peer_err);

/* The steps of a call (mpiacc_coll_ipc_run, ipc_nb.c).  begin: records
 * allocated, local checks, offers, exports, this process's record filled
 * (a local error only makes it not ok); returns MPI_SUCCESS or an
 * allocation failure.  decide: after the exchange, 1 when every record is
 * ok (counted as a run), else 0 (the staged path: logged once per cause,
 * counted).  error_flag: this process's error class (0: none); outcome:
 * the call's error from it and the largest class of every process.  end:
 * exports released, memory freed (ci itself is the caller's). */
int mpiacc_coll_ipc_begin(mpiacc_coll_ipc_t *ci, mpiacc_coll_op_t *c);
int mpiacc_coll_ipc_decide(mpiacc_coll_ipc_t *ci);
int mpiacc_coll_ipc_error_flag(const mpiacc_coll_ipc_t *ci);
int mpiacc_coll_ipc_outcome(const mpiacc_coll_ipc_t *ci, int peer);
void mpiacc_coll_ipc_end(mpiacc_coll_ipc_t *ci);


/* Whether buffer side s's kind may be addressed with pointer arithmetic
 * (device pointers: not an OpenCL cl_mem handle). */
int mpiacc_coll_ipc_addressable(const mpiacc_coll_ipc_t *ci, int s);

#endif
