/*
 * coll/ipc_move.c: the on-device collectives that move data (ipc.h):
 *   Bcast              every non-root reads the root's buffer;
 *   Allgather(v)       every process reads each peer's block (its send
 *                      buffer, or its own block of the receive buffer in place);
 *   Alltoall(v)        every process reads, from each peer, the block that
 *                      peer sends it (not in place: peers would read a buffer
 *                      that is being written — staged then);
 *   Neighbor_alltoall(v,w)  every process reads, from each in-neighbour, the
 *                      send block that neighbour addresses to it, with that
 *                      neighbour's datatype (any datatypes: its blob).
 * The blocks are the families' plans (the slots of core.c): each process
 * offers its send blocks, and reads into its receive slots.
 */
#include <stdlib.h>

#include "ipc.h"

#define BLOB_ROOM 2048 /* bytes of datatype blobs per record (one send datatype) */
#define BLOB_ROOM_W 8192 /* neighbourhood: one datatype per block */

static int is_alltoall(int k)
{
    return k == MPIACC_COLL_ALLTOALL || k == MPIACC_COLL_ALLTOALLV;
}

static int is_neighbor(int k)
{
    return k == MPIACC_COLL_NEIGHBOR_ALLTOALL || k == MPIACC_COLL_NEIGHBOR_ALLTOALLV ||
           k == MPIACC_COLL_NEIGHBOR_ALLTOALLW;
}

static size_t payload(mpiacc_coll_ipc_t *ci)
{
    int k = ci->c->kind;
    if (is_neighbor(k)) return BLOB_ROOM_W;
    return sizeof(mpiacc_coll_ipc_blk_t) * (size_t)(is_alltoall(k) ? ci->c->size : 1) + BLOB_ROOM;
}

/* The neighbours: src[nrecv] (in-neighbours, receive block order) and
 * dst[nsend] (out-neighbours, send block order); *cart for a Cartesian
 * topology. */
static int neighbors(mpiacc_coll_op_t *c, int **src, int **dst, int *cart)
{
    int mpi_errno = MPI_SUCCESS, topo, nd;
    *src = malloc(sizeof(int) * (size_t)(c->nrecv > 0 ? c->nrecv : 1));
    *dst = malloc(sizeof(int) * (size_t)(c->nsend > 0 ? c->nsend : 1));
    if (!*src || !*dst) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a collective");
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

static int offer_slot(mpiacc_coll_ipc_t *ci, int s, int i, int dest)
{
    mpiacc_coll_slot_t *sl = &ci->c->b[s].slots[i];
    return mpiacc_coll_ipc_offer(ci, s, sl->disp, sl->count, sl->type, dest);
}

static int prepare(mpiacc_coll_ipc_t *ci)
{
    int mpi_errno = MPI_SUCCESS, *src = NULL, *dst = NULL, cart;
    mpiacc_coll_op_t *c = ci->c;
    mpiacc_coll_buf_t *bs = &c->b[MPIACC_COLL_S], *br = &c->b[MPIACC_COLL_R];
    int ip = c->a.sbuf == MPI_IN_PLACE;
    if (!mpiacc_coll_ipc_addressable(ci, MPIACC_COLL_S) || !mpiacc_coll_ipc_addressable(ci, MPIACC_COLL_R)) {
        ci->cause = MPIACC_COLL_IPC_NO_TABLE;
        return MPI_SUCCESS;
    }
    switch (c->kind) {
    case MPIACC_COLL_BCAST:
        if (c->rank == c->a.root && br->nslots == 1) MPIACC_CHECK(offer_slot(ci, MPIACC_COLL_R, 0, -1));
        break;
    case MPIACC_COLL_ALLGATHER:
    case MPIACC_COLL_ALLGATHERV:
        if (ip) {
            if (br->nslots != c->size) goto shape;
            MPIACC_CHECK(offer_slot(ci, MPIACC_COLL_R, c->rank, -1));
        } else {
            if (bs->nslots != 1) goto shape;
            MPIACC_CHECK(offer_slot(ci, MPIACC_COLL_S, 0, -1));
        }
        break;
    case MPIACC_COLL_ALLTOALL:
    case MPIACC_COLL_ALLTOALLV:
        if (ip || bs->nslots != c->size) goto shape;
        for (int j = 0; j < c->size; j++) MPIACC_CHECK(offer_slot(ci, MPIACC_COLL_S, j, j));
        break;
    default: /* neighbourhood alltoall(v,w) */
        if (bs->nslots != c->nsend) goto shape;
        MPIACC_CHECK(neighbors(c, &src, &dst, &cart));
        for (int j = 0; j < c->nsend; j++) MPIACC_CHECK(offer_slot(ci, MPIACC_COLL_S, j, dst[j]));
        break;
    }
fn_exit:
    free(src);
    free(dst);
    return mpi_errno;
fn_fail:
    goto fn_exit;
shape:
    ci->cause = MPIACC_COLL_IPC_SHAPE;
    goto fn_exit;
}

/* Neighbourhood: the block of in-neighbour src[m] addressed to this
 * process.  Cartesian: receive block 2d comes from the negative neighbour's
 * send block 2d+1 and block 2d+1 from the positive one's block 2d (MPI's
 * rule, also right when both neighbours are one process).  Graphs: the q-th
 * edge from a process to this one matches the q-th block it addresses here. */
static int neighbor_block(mpiacc_coll_ipc_t *ci, const int *src, int cart, int m)
{
    int q = 0, r = src[m];
    const mpiacc_coll_ipc_hdr_t *h = mpiacc_coll_ipc_rec(ci, r);
    if (cart) return m ^ 1;
    for (int i = 0; i < m; i++)
        if (src[i] == r) q++;
    for (int i = 0; i < h->nblk; i++) {
        const mpiacc_coll_ipc_blk_t *k = mpiacc_coll_ipc_blk(ci, r, i);
        if (k->dest == ci->c->rank && q-- == 0) return i;
    }
    return -1;
}

static int run(mpiacc_coll_ipc_t *ci)
{
    int mpi_errno = MPI_SUCCESS, *src = NULL, *dst = NULL, cart = 0;
    mpiacc_coll_op_t *c = ci->c;
    mpiacc_coll_buf_t *br = &c->b[MPIACC_COLL_R];
    int ip = c->a.sbuf == MPI_IN_PLACE, me = c->rank;
    switch (c->kind) {
    case MPIACC_COLL_BCAST:
        if (me != c->a.root && br->nslots == 1) mpiacc_coll_ipc_read(ci, c->a.root, 0, 0);
        break;
    case MPIACC_COLL_ALLGATHER:
    case MPIACC_COLL_ALLGATHERV:
        for (int i = 0; i < c->size && i < br->nslots; i++)
            if (!(ip && i == me)) mpiacc_coll_ipc_read(ci, i, 0, i);
        break;
    case MPIACC_COLL_ALLTOALL:
    case MPIACC_COLL_ALLTOALLV:
        for (int i = 0; i < c->size && i < br->nslots; i++) mpiacc_coll_ipc_read(ci, i, me, i);
        break;
    default:
        MPIACC_CHECK(neighbors(c, &src, &dst, &cart));
        for (int m = 0; m < c->nrecv && m < br->nslots; m++) {
            if (src[m] == MPI_PROC_NULL) continue; /* MPI leaves that block alone */
            if (src[m] < 0 || src[m] >= c->size)
                MPIACC_FAIL(MPIACC_ERRK_INTERN, "%s: neighbour %d out of range", mpiacc_coll_name(c->kind, 0), src[m]);
            mpiacc_coll_ipc_read(ci, src[m], neighbor_block(ci, src, cart, m), m);
        }
        break;
    }
fn_exit:
    free(src);
    free(dst);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static const mpiacc_coll_ipc_alg_t move = {.payload = payload, .prepare = prepare, .run = run};

const mpiacc_coll_ipc_alg_t *mpiacc_coll_ipc_move_alg(int kind)
{
    if (kind == MPIACC_COLL_BCAST || kind == MPIACC_COLL_ALLGATHER || kind == MPIACC_COLL_ALLGATHERV ||
        is_alltoall(kind) || is_neighbor(kind))
        return &move;
    return NULL;
}
