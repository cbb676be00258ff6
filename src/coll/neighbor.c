/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/neighbor.c: the neighbourhood collectives (MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w) and their I forms) on Cartesian, graph and
 * distributed-graph communicators: blocks per neighbour (in-degree on the
 * receive side, out-degree on the send side) packed one after the other.
 */
#include <stdlib.h>

#include "coll_internal.h"

int mpiacc_coll_neighbors(mpiacc_coll_op_t *c, int **src, int **dst, int *cart)
{
    int mpi_errno = MPI_SUCCESS, topo, nd;
    int nr = c->nrecv > 0 ? c->nrecv : 0, ns = c->nsend > 0 ? c->nsend : 0;
    *src = malloc(sizeof(int) * (size_t)(nr + ns + 1));
    *dst = *src ? *src + nr : NULL;
    if (!*src) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a collective");
    MPIACC_CHECK(PMPI_Topo_test(c->a.comm, &topo));
    *cart = topo == MPI_CART;
    if (topo == MPI_CART) {
        MPIACC_CHECK(PMPI_Cartdim_get(c->a.comm, &nd));
        for (int d = 0; d < nd; d++) {
            MPIACC_CHECK(PMPI_Cart_shift(c->a.comm, d, 1, &(*src)[2 * d], &(*src)[2 * d + 1]));
            (*dst)[2 * d] = (*src)[2 * d];
            (*dst)[2 * d + 1] = (*src)[2 * d + 1];
        }
    } else if (topo == MPI_GRAPH) {
        MPIACC_CHECK(PMPI_Graph_neighbors(c->a.comm, c->rank, c->nrecv, *src));
        for (int i = 0; i < c->nsend; i++) (*dst)[i] = (*src)[i];
    } else {
        MPIACC_CHECK(PMPI_Dist_graph_neighbors(c->a.comm, c->nrecv, *src, MPI_UNWEIGHTED, c->nsend, *dst,
                                               MPI_UNWEIGHTED));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Receive blocks from MPI_PROC_NULL neighbours (a non-periodic Cartesian
 * dimension, or a graph naming it) receive nothing: MPI leaves their part
 * of the buffer untouched, so the staging there is never unpacked. */
static int skip_null_sources(mpiacc_coll_op_t *c)
{
    int mpi_errno = MPI_SUCCESS, *src = NULL, *dst, cart;
    mpiacc_coll_buf_t *b = &c->b[MPIACC_COLL_R];
    if (c->nrecv <= 0 || b->nslots != c->nrecv) return MPI_SUCCESS;
    MPIACC_CHECK(mpiacc_coll_neighbors(c, &src, &dst, &cart));
    for (int i = 0; i < c->nrecv; i++)
        if (src[i] == MPI_PROC_NULL) b->slots[i].unpack = 0;
fn_exit:
    free(src); /* dst with it */
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int plan(mpiacc_coll_op_t *c)
{
    int mpi_errno = MPI_SUCCESS, w = c->kind == MPIACC_COLL_NEIGHBOR_ALLTOALLW;
    const mpiacc_coll_args_t *a = &c->a;
    if (c->kind == MPIACC_COLL_NEIGHBOR_ALLGATHER || c->kind == MPIACC_COLL_NEIGHBOR_ALLGATHERV)
        MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_S, a->scount, 0, a->stype, 0, 1, 0));
    else
        MPIACC_CHECK(mpiacc_coll_plan_blocks(c, MPIACC_COLL_S, c->nsend, c->scounts, c->sdispls, w, a->stype, c->stypes,
                                             1, 0, -1, 0, 0));
    MPIACC_CHECK(mpiacc_coll_plan_blocks(c, MPIACC_COLL_R, c->nrecv, c->rcounts, c->rdispls, w, a->rtype, c->rtypes, 0,
                                         1, -1, 0, 0));
    MPIACC_CHECK(skip_null_sources(c));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int post(mpiacc_coll_op_t *c, MPI_Request *r)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_coll_args_t *a = &c->a;
    MPI_Count sn, rn;
    MPI_Datatype st, rt;
    const void *sb = mpiacc_coll_hbuf(c, MPIACC_COLL_S);
    void *rb = mpiacc_coll_hbuf(c, MPIACC_COLL_R);
    mpiacc_coll_hscalar(c, MPIACC_COLL_S, a->scount, a->stype, &sn, &st);
    mpiacc_coll_hscalar(c, MPIACC_COLL_R, a->rcount, a->rtype, &rn, &rt);
    switch (c->kind) {
    case MPIACC_COLL_NEIGHBOR_ALLGATHER:
        return (r ? PMPI_Ineighbor_allgather_c(sb, sn, st, rb, rn, rt, a->comm, r)
                  : PMPI_Neighbor_allgather_c(sb, sn, st, rb, rn, rt, a->comm));
    case MPIACC_COLL_NEIGHBOR_ALLTOALL:
        return (r ? PMPI_Ineighbor_alltoall_c(sb, sn, st, rb, rn, rt, a->comm, r)
                  : PMPI_Neighbor_alltoall_c(sb, sn, st, rb, rn, rt, a->comm));
    case MPIACC_COLL_NEIGHBOR_ALLGATHERV:
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_R, c->nrecv, 0));
        mpiacc_coll_hscalar(c, MPIACC_COLL_R, 0, a->rtype, &rn, &rt);
        return (r ? PMPI_Ineighbor_allgatherv_c(sb, sn, st, rb, c->hcounts[1], c->hdispls[1], rt, a->comm, r)
                  : PMPI_Neighbor_allgatherv_c(sb, sn, st, rb, c->hcounts[1], c->hdispls[1], rt, a->comm));
    case MPIACC_COLL_NEIGHBOR_ALLTOALLV:
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_S, c->nsend, 0));
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_R, c->nrecv, 0));
        mpiacc_coll_hscalar(c, MPIACC_COLL_S, 0, a->stype, &sn, &st);
        mpiacc_coll_hscalar(c, MPIACC_COLL_R, 0, a->rtype, &rn, &rt);
        return (r ? PMPI_Ineighbor_alltoallv_c(sb, c->hcounts[0], c->hdispls[0], st, rb, c->hcounts[1], c->hdispls[1],
                                               rt, a->comm, r)
                  : PMPI_Neighbor_alltoallv_c(sb, c->hcounts[0], c->hdispls[0], st, rb, c->hcounts[1], c->hdispls[1],
                                              rt, a->comm));
    default:
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_S, c->nsend, 1));
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_R, c->nrecv, 1));
        return (r ? PMPI_Ineighbor_alltoallw_c(sb, c->hcounts[0], c->hdispls[0], c->htypes[0], rb, c->hcounts[1],
                                               c->hdispls[1], c->htypes[1], a->comm, r)
                  : PMPI_Neighbor_alltoallw_c(sb, c->hcounts[0], c->hdispls[0], c->htypes[0], rb, c->hcounts[1],
                                              c->hdispls[1], c->htypes[1], a->comm));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

const mpiacc_coll_family_t mpiacc_coll_neighbor_family = {.plan = plan, .post = post};
