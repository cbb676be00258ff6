/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/coll_internal.h: a collective operation inside the collectives
 * layer (core.c) and its families (bcast.c, reduce.c, gather.c,
 * alltoall.c, neighbor.c).
 */
#ifndef MPIACC_COLL_INTERNAL_H_INCLUDED
#define MPIACC_COLL_INTERNAL_H_INCLUDED

#include "coll.h"
#include "comm.h"

/* sig.c: the host datatype describing one element's packed bytes. */
typedef struct mpiacc_coll_sig {
    atomic_int ref;
    MPI_Count size;    /* packed bytes of one element                    */
    MPI_Datatype leaf; /* n x leaf (a predefined type), or DATATYPE_NULL  */
    MPI_Count n;
    int pair;          /* leaf's extent differs from its size (DOUBLE_INT) */
    MPI_Datatype ht;   /* one element = mult x ht, ht's extent its size   */
    MPI_Count mult;
    int owned;
} mpiacc_coll_sig_t;

int mpiacc_coll_sig_get(MPI_Datatype t, mpiacc_coll_sig_t **out);
void mpiacc_coll_sig_release(mpiacc_coll_sig_t *s);
void mpiacc_coll_sig_finalize(void);

/* One block of a buffer: count elements of type at disp bytes from the
 * buffer; staged, its packed bytes sit at hoff in the staging. */
typedef struct mpiacc_coll_slot {
    MPI_Count count;
    MPI_Aint disp;
    MPI_Datatype type;
    MPI_Count hoff;
    int pack, unpack;
    /* staged buffers (core.c) */
    mpiacc_pack_type_t *t;
    MPI_Datatype tmp; /* a type placing the block at disp, when disp is no whole extent */
    MPI_Count ecount, first, last;
    mpiacc_coll_sig_t *sig;
    void *xfer;
} mpiacc_coll_slot_t;

enum { MPIACC_COLL_S = 0, MPIACC_COLL_R = 1 };

typedef struct mpiacc_coll_buf {
    int used;   /* significant on this rank */
    int staged; /* copied through host staging */
    void *buf;
    const mpiacc_backend_t *be;
    mpiacc_attrs_t a;
    void *dep;
    int dep_done;
    int nslots, cap;
    mpiacc_coll_slot_t *slots;
    void *staging;
    int cls;
    MPI_Count sbytes;
    void *host;   /* what MPI gets for this buffer */
    void *mirror; /* reductions: natural-layout host copy (malloc) */
} mpiacc_coll_buf_t;

typedef struct mpiacc_coll_op mpiacc_coll_op_t;

/* A family: which slots a call has on this rank (plan), and the PMPI call
 * on host pointers (post): nonblocking into *r, blocking when r is NULL
 * (MPI does not match a blocking collective with a nonblocking one, so a
 * blocking call stays blocking); reduce_local computes at once. */
typedef struct mpiacc_coll_family {
    int (*plan)(mpiacc_coll_op_t *c);
    int (*post)(mpiacc_coll_op_t *c, MPI_Request *r);
    int reduction;
} mpiacc_coll_family_t;

struct mpiacc_coll_op {
    int kind;
    const mpiacc_coll_family_t *fam;
    mpiacc_coll_args_t a; /* arrays below replace the caller's */
    int rank, size, nsend, nrecv; /* nsend/nrecv: blocks per side (size, or neighbour degrees) */
    int in_place;
    MPI_Count *scounts, *rcounts;
    MPI_Aint *sdispls, *rdispls;
    MPI_Datatype *stypes, *rtypes;
    mpiacc_coll_buf_t b[2];
    /* what MPI gets, per side: one entry per block (hcount[s][i]...) */
    MPI_Count *hcounts[2];
    MPI_Aint *hdispls[2];
    MPI_Datatype *htypes[2];
    /* reductions: the datatype and count MPI reduces */
    MPI_Datatype red_type;
    MPI_Count red_count;
    int red_mirror; /* host copies in the datatype's memory layout */
    /* a nonblocking call on the IPC engine: its on-device state (ipc_nb.c)
     * until the exchange decides; NULL afterwards when staged */
    struct mpiacc_coll_ipc *ipc;
    /* a call on the collective engine (dev_run.c): the communicator's state
     * (a reference held when cs_ref), the engine's handle */
    mpiacc_coll_comm_t *cs;
    int cs_ref;
    void *xfer;
};

/* dev.c: the program of one call on the collective engine (backend_coll.h). */
typedef struct mpiacc_coll_prog {
    mpiacc_bcoll_xfer_t *packs, *unpacks;
    mpiacc_bcoll_step_t *steps;
    int npack, nunpack, nstep, cpack, cunpack, cstep;
    MPI_Count tmp; /* bytes of the device temporary */
} mpiacc_coll_prog_t;
/* Whether the engine ct takes c (the kind; a reduction's operation and
 * type): the same answer on every process. */
int mpiacc_coll_dev_takes(const mpiacc_coll_op_t *c, const struct mpiacc_backend_coll *ct);
int mpiacc_coll_dev_build(mpiacc_coll_op_t *c, mpiacc_coll_prog_t *P);
void mpiacc_coll_prog_free(mpiacc_coll_prog_t *P);
/* dev_run.c: c on the engine of cs, blocking or not (c is consumed: freed,
 * or the operation's; the error is returned, not raised). */
int mpiacc_coll_dev_call(mpiacc_coll_op_t *c, mpiacc_coll_comm_t *cs);
extern const mpiacc_proto_t mpiacc_coll_dev_proto;
/* check.c: MPIACC_COLL_CHECK's agreement (dk: this process's device kind,
 * 0 for none): MPI_ERR_ARG on every process when they differ. */
int mpiacc_coll_check_agree(mpiacc_coll_op_t *c, int dk);
void mpiacc_coll_check_finalize(void);

/* core.c, for the families */
/* Adds a block to buffer side s (a slot). */
int mpiacc_coll_slot_add(mpiacc_coll_op_t *c, int s, MPI_Count count, MPI_Aint disp, MPI_Datatype type,
                         MPI_Count hoff, int pack, int unpack);
/* count/displacement of block i of an array argument (int or large). */
MPI_Count mpiacc_coll_count_at(const mpiacc_coll_args_t *a, const void *arr, int i);
MPI_Aint mpiacc_coll_disp_at(const mpiacc_coll_args_t *a, const void *arr, int i);
/* Extent of a datatype (bytes). */
MPI_Aint mpiacc_coll_extent(MPI_Datatype t);
/* Packed bytes of count x t. */
MPI_Count mpiacc_coll_psize(MPI_Datatype t);
/* The host arguments of side s: pointer, and for block i count, type and
 * displacement (in the host type's extents; bytes when `bytes`). */
void *mpiacc_coll_hbuf(mpiacc_coll_op_t *c, int s);
int mpiacc_coll_harrays(mpiacc_coll_op_t *c, int s, int n, int bytes);

/* empty.c: the blocks of a datatype of size 0 made 0 MPI_BYTE (a
 * reduction's: count 0) in c's copies of the arguments (ns, nr: the
 * entries of its arrays), and the persistent forms' refusal of such a
 * datatype on MPICH's UCX netmod (an error, not yet raised). */
void mpiacc_coll_empty_sides(mpiacc_coll_op_t *c, int ns, int nr);
int mpiacc_coll_refuse_empty(const char *name, int n, const MPI_Datatype *types);

/* The scalar host count and type of side s (count x type as the user gave it). */
void mpiacc_coll_hscalar(mpiacc_coll_op_t *c, int s, MPI_Count count, MPI_Datatype type, MPI_Count *hc,
                         MPI_Datatype *ht);
/* n blocks on side s (one slot each, in block order): counts[i] elements of
 * type (or types[i]) at displs[i] (in extents, or bytes when `bytes`;
 * NULL: block i at i x counts[i] extents), packed one after the other in
 * the staging; pack/unpack flags, except for block `own` (-1: none). */
int mpiacc_coll_plan_blocks(mpiacc_coll_op_t *c, int s, int n, const MPI_Count *counts, const MPI_Aint *displs,
                            int bytes, MPI_Datatype type, const MPI_Datatype *types, int pack, int unpack, int own,
                            int own_pack, int own_unpack);
/* reduce.c: the datatype and count MPI reduces, mirrors (staged reductions). */
int mpiacc_coll_reduce_prepare(mpiacc_coll_op_t *c, const char *name);

/* ipc.c: a blocking call on the IPC engine (communicator state cs): the
 * record exchange and, when every process can, the on-device algorithm
 * (*done = 1: the call is over, its error to raise returned); else
 * (*done = 0) the staged path, like every other process. */
int mpiacc_coll_ipc_run(mpiacc_coll_op_t *c, mpiacc_coll_comm_t *cs, int *done);
/* ipc.c: whether the IPC engine has an algorithm for kind. */
int mpiacc_coll_ipc_has(int kind);
/* core.c: frees an operation's state (everything it holds). */
void mpiacc_coll_op_free(mpiacc_coll_op_t *c);
/* core.c: the staging of a staged call (buffers, reduction mirrors), for
 * a call that leaves the on-device path after the exchange (dependencies
 * already captured are kept). */
int mpiacc_coll_stage_all(mpiacc_coll_op_t *c);
/* ipc_nb.c: frees a nonblocking call's on-device state (NULL: nothing);
 * the protocol of a nonblocking call on a one-node direct communicator
 * (the records first, then on the device or mpiacc_coll_proto). */
void mpiacc_coll_ipc_nb_free(struct mpiacc_coll_ipc *ci);
/* ipc_nb.c: a nonblocking call's on-device state set up at call time
 * (c->ipc: local checks, exports, its record; dependencies captured; a
 * reference on cs). */
int mpiacc_coll_ipc_nb_prepare(mpiacc_coll_op_t *c, mpiacc_coll_comm_t *cs);
extern const mpiacc_proto_t mpiacc_coll_ipc_proto;
/* steps.c: until every collective on comm called earlier is posted to MPI
 * (a blocking call's turn; lock not held). */
void mpiacc_coll_wait_turn(MPI_Comm comm);
/* steps.c: the protocol of a nonblocking collective, and a blocking call's
 * steps in the calling thread (error raised on the communicator). */
extern const mpiacc_proto_t mpiacc_coll_proto;
/* steps.c: the release of every collective protocol (the op's mpiacc_coll_op_t). */
void mpiacc_coll_proto_release(mpiacc_rp_op_t *op);
int mpiacc_coll_blocking(mpiacc_coll_op_t *c, int pooled);

extern const mpiacc_coll_family_t mpiacc_coll_bcast_family, mpiacc_coll_barrier_family;
extern const mpiacc_coll_family_t mpiacc_coll_reduce_family;
extern const mpiacc_coll_family_t mpiacc_coll_gather_family;
extern const mpiacc_coll_family_t mpiacc_coll_alltoall_family;
extern const mpiacc_coll_family_t mpiacc_coll_neighbor_family;
/* neighbor.c: the neighbours of c's topology, src[nrecv] (in-neighbours,
 * receive block order) and dst[nsend] (out-neighbours, send block order),
 * one allocation (the caller frees src, also on failure); *cart for a
 * Cartesian topology. */
int mpiacc_coll_neighbors(mpiacc_coll_op_t *c, int **src, int **dst, int *cart);

/* reduce.c: before posting (host copies to natural layout) and after
 * (back to packed) for a reduction with mirrors. */
int mpiacc_coll_reduce_to_mirror(mpiacc_coll_op_t *c);
int mpiacc_coll_reduce_from_mirror(mpiacc_coll_op_t *c);

#endif
