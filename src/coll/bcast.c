/* SPDX-License-Identifier: BSD-3-Clause */
/* coll/bcast.c: MPI_Bcast / MPI_Ibcast (one buffer: packed at the root,
 * unpacked elsewhere) and MPI_Barrier / MPI_Ibarrier (no data; they only
 * keep their place behind deferred collectives). */
#include "coll_internal.h"

static int bcast_plan(mpiacc_coll_op_t *c)
{
    int root = c->rank == c->a.root;
    return mpiacc_coll_slot_add(c, MPIACC_COLL_R, c->a.rcount, 0, c->a.rtype, 0, root, !root);
}

static int bcast_post(mpiacc_coll_op_t *c, MPI_Request *r)
{
    MPI_Count n;
    MPI_Datatype t;
    mpiacc_coll_hscalar(c, MPIACC_COLL_R, c->a.rcount, c->a.rtype, &n, &t);
    return (r ? PMPI_Ibcast_c(mpiacc_coll_hbuf(c, MPIACC_COLL_R), n, t, c->a.root, c->a.comm, r)
              : PMPI_Bcast_c(mpiacc_coll_hbuf(c, MPIACC_COLL_R), n, t, c->a.root, c->a.comm));
}

const mpiacc_coll_family_t mpiacc_coll_bcast_family = {.plan = bcast_plan, .post = bcast_post};

static int barrier_plan(mpiacc_coll_op_t *c)
{
    return MPI_SUCCESS;
}

static int barrier_post(mpiacc_coll_op_t *c, MPI_Request *r)
{
    return r ? PMPI_Ibarrier(c->a.comm, r) : PMPI_Barrier(c->a.comm);
}

const mpiacc_coll_family_t mpiacc_coll_barrier_family = {.plan = barrier_plan, .post = barrier_post};
