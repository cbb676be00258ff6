/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/alltoall.c: MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw and their I
 * forms.  Each side's P blocks are packed one after the other in its
 * staging (Alltoallw: byte displacements there too, one host datatype per
 * block); with MPI_IN_PLACE the receive buffer is packed whole first.
 */
#include "coll_internal.h"

static int plan(mpiacc_coll_op_t *c)
{
    int mpi_errno = MPI_SUCCESS, P = c->size, w = c->kind == MPIACC_COLL_ALLTOALLW;
    const mpiacc_coll_args_t *a = &c->a;
    int ip = a->sbuf == MPI_IN_PLACE;
    if (!ip)
        MPIACC_CHECK(mpiacc_coll_plan_blocks(c, MPIACC_COLL_S, P, c->scounts, c->sdispls, w, a->stype, c->stypes, 1, 0,
                                             -1, 0, 0));
    MPIACC_CHECK(
        mpiacc_coll_plan_blocks(c, MPIACC_COLL_R, P, c->rcounts, c->rdispls, w, a->rtype, c->rtypes, ip, 1, -1, 0, 0));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int post(mpiacc_coll_op_t *c, MPI_Request *r)
{
    int mpi_errno = MPI_SUCCESS, P = c->size;
    const mpiacc_coll_args_t *a = &c->a;
    int ip = a->sbuf == MPI_IN_PLACE;
    MPI_Count sn, rn;
    MPI_Datatype st, rt;
    const void *sb = ip ? MPI_IN_PLACE : mpiacc_coll_hbuf(c, MPIACC_COLL_S);
    void *rb = mpiacc_coll_hbuf(c, MPIACC_COLL_R);
    switch (c->kind) {
    case MPIACC_COLL_ALLTOALL:
        mpiacc_coll_hscalar(c, MPIACC_COLL_S, a->scount, a->stype, &sn, &st);
        mpiacc_coll_hscalar(c, MPIACC_COLL_R, a->rcount, a->rtype, &rn, &rt);
        return (r ? PMPI_Ialltoall_c(sb, sn, st, rb, rn, rt, a->comm, r)
                  : PMPI_Alltoall_c(sb, sn, st, rb, rn, rt, a->comm));
    case MPIACC_COLL_ALLTOALLV:
        if (!ip) MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_S, P, 0));
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_R, P, 0));
        mpiacc_coll_hscalar(c, MPIACC_COLL_S, 0, a->stype, &sn, &st);
        mpiacc_coll_hscalar(c, MPIACC_COLL_R, 0, a->rtype, &rn, &rt);
        return (r ? PMPI_Ialltoallv_c(sb, ip ? NULL : c->hcounts[0], ip ? NULL : c->hdispls[0], st, rb, c->hcounts[1],
                                      c->hdispls[1], rt, a->comm, r)
                  : PMPI_Alltoallv_c(sb, ip ? NULL : c->hcounts[0], ip ? NULL : c->hdispls[0], st, rb, c->hcounts[1],
                                     c->hdispls[1], rt, a->comm));
    default:
        if (!ip) MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_S, P, 1));
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_R, P, 1));
        return (r ? PMPI_Ialltoallw_c(sb, ip ? NULL : c->hcounts[0], ip ? NULL : c->hdispls[0],
                                      ip ? NULL : c->htypes[0], rb, c->hcounts[1], c->hdispls[1], c->htypes[1], a->comm,
                                      r)
                  : PMPI_Alltoallw_c(sb, ip ? NULL : c->hcounts[0], ip ? NULL : c->hdispls[0], ip ? NULL : c->htypes[0],
                                     rb, c->hcounts[1], c->hdispls[1], c->htypes[1], a->comm));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

const mpiacc_coll_family_t mpiacc_coll_alltoall_family = {.plan = plan, .post = post};
