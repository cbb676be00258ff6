/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/gather.c: MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v) and their
 * I forms.  The root's (or every process's) P blocks are packed one after
 * the other in the staging; with MPI_IN_PLACE the process's own block is
 * left alone (gather) or packed into its place first (allgather).
 */
#include "coll_internal.h"

static int plan(mpiacc_coll_op_t *c)
{
    int mpi_errno = MPI_SUCCESS, root = c->rank == c->a.root, P = c->size, me = c->rank;
    const mpiacc_coll_args_t *a = &c->a;
    int ip_s = a->sbuf == MPI_IN_PLACE, ip_r = a->rbuf == MPI_IN_PLACE;
    switch (c->kind) {
    case MPIACC_COLL_GATHER:
    case MPIACC_COLL_GATHERV:
        if (!(root && ip_s)) MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_S, a->scount, 0, a->stype, 0, 1, 0));
        if (root)
            MPIACC_CHECK(mpiacc_coll_plan_blocks(c, MPIACC_COLL_R, P, c->rcounts, c->rdispls, 0, a->rtype, NULL, 0, 1,
                                                 ip_s ? me : -1, 0, 0));
        break;
    case MPIACC_COLL_SCATTER:
    case MPIACC_COLL_SCATTERV:
        if (root)
            MPIACC_CHECK(mpiacc_coll_plan_blocks(c, MPIACC_COLL_S, P, c->scounts, c->sdispls, 0, a->stype, NULL, 1, 0,
                                                 ip_r ? me : -1, 0, 0));
        if (!(root && ip_r)) MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_R, a->rcount, 0, a->rtype, 0, 0, 1));
        break;
    default: /* allgather(v) */
        if (!ip_s) MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_S, a->scount, 0, a->stype, 0, 1, 0));
        MPIACC_CHECK(mpiacc_coll_plan_blocks(c, MPIACC_COLL_R, P, c->rcounts, c->rdispls, 0, a->rtype, NULL, 0, 1,
                                             ip_s ? me : -1, 1, 0));
        break;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int post(mpiacc_coll_op_t *c, MPI_Request *r)
{
    int mpi_errno = MPI_SUCCESS, root = c->rank == c->a.root;
    const mpiacc_coll_args_t *a = &c->a;
    MPI_Count sn, rn;
    MPI_Datatype st, rt;
    const void *sb = a->sbuf == MPI_IN_PLACE ? MPI_IN_PLACE : mpiacc_coll_hbuf(c, MPIACC_COLL_S);
    void *rb = a->rbuf == MPI_IN_PLACE ? MPI_IN_PLACE : mpiacc_coll_hbuf(c, MPIACC_COLL_R);
    mpiacc_coll_hscalar(c, MPIACC_COLL_S, a->scount, a->stype, &sn, &st);
    mpiacc_coll_hscalar(c, MPIACC_COLL_R, a->rcount, a->rtype, &rn, &rt);
    switch (c->kind) {
    case MPIACC_COLL_GATHER:
        return (r ? PMPI_Igather_c(sb, sn, st, rb, rn, rt, a->root, a->comm, r)
                  : PMPI_Gather_c(sb, sn, st, rb, rn, rt, a->root, a->comm));
    case MPIACC_COLL_SCATTER:
        return (r ? PMPI_Iscatter_c(sb, sn, st, rb, rn, rt, a->root, a->comm, r)
                  : PMPI_Scatter_c(sb, sn, st, rb, rn, rt, a->root, a->comm));
    case MPIACC_COLL_ALLGATHER:
        return (r ? PMPI_Iallgather_c(sb, sn, st, rb, rn, rt, a->comm, r)
                  : PMPI_Allgather_c(sb, sn, st, rb, rn, rt, a->comm));
    case MPIACC_COLL_GATHERV:
        if (root) {
            MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_R, c->size, 0));
            mpiacc_coll_hscalar(c, MPIACC_COLL_R, 0, a->rtype, &rn, &rt);
            return (r ? PMPI_Igatherv_c(sb, sn, st, rb, c->hcounts[1], c->hdispls[1], rt, a->root, a->comm, r)
                      : PMPI_Gatherv_c(sb, sn, st, rb, c->hcounts[1], c->hdispls[1], rt, a->root, a->comm));
        }
        return (r ? PMPI_Igatherv_c(sb, sn, st, rb, NULL, NULL, rt, a->root, a->comm, r)
                  : PMPI_Gatherv_c(sb, sn, st, rb, NULL, NULL, rt, a->root, a->comm));
    case MPIACC_COLL_SCATTERV:
        if (root) {
            MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_S, c->size, 0));
            return (r ? PMPI_Iscatterv_c(sb, c->hcounts[0], c->hdispls[0], st, rb, rn, rt, a->root, a->comm, r)
                      : PMPI_Scatterv_c(sb, c->hcounts[0], c->hdispls[0], st, rb, rn, rt, a->root, a->comm));
        }
        return (r ? PMPI_Iscatterv_c(sb, NULL, NULL, st, rb, rn, rt, a->root, a->comm, r)
                  : PMPI_Scatterv_c(sb, NULL, NULL, st, rb, rn, rt, a->root, a->comm));
    default: /* allgatherv */
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_R, c->size, 0));
        return (r ? PMPI_Iallgatherv_c(sb, sn, st, rb, c->hcounts[1], c->hdispls[1], rt, a->comm, r)
                  : PMPI_Allgatherv_c(sb, sn, st, rb, c->hcounts[1], c->hdispls[1], rt, a->comm));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

const mpiacc_coll_family_t mpiacc_coll_gather_family = {.plan = plan, .post = post};
