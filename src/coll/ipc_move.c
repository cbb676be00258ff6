/* SPDX-License-Identifier: BSD-3-Clause */
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
 * offers its send blocks, and reads into its receive slots: every block
 * contiguous on both sides in ONE import_copy_n (one GPU launch per call
 * for dense layouts, the own block included), the others one import_copy
 * each.
 */
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "pack/traverse.h"

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

static int offer_slot(mpiacc_coll_ipc_t *ci, int s, int i, int dest)
{
    mpiacc_coll_slot_t *sl = &ci->c->b[s].slots[i];
    return mpiacc_coll_ipc_offer(ci, s, sl->disp, sl->count, sl->type, dest);
}

static int prepare(mpiacc_coll_ipc_t *ci)
{
    int mpi_errno = MPI_SUCCESS, *src = NULL, *dst, cart;
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
        MPIACC_CHECK(mpiacc_coll_neighbors(c, &src, &dst, &cart));
        for (int j = 0; j < c->nsend; j++) MPIACC_CHECK(offer_slot(ci, MPIACC_COLL_S, j, dst[j]));
        break;
    }
fn_exit:
    free(src); /* dst with it */
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

/* ---- the reads of one call ----------------------------------------------------------
 * A block that is one contiguous byte range on both sides (the sender's
 * count x datatype from its blob, the receive slot's from its analysis:
 * mpiacc_tv_dense) becomes a piece of ONE import_copy_n for the whole
 * call, this process's own block included (its own export); any other
 * block, or every block when the table has no import_copy_n, is read by
 * mpiacc_coll_ipc_read (one import_copy each), which also reports every
 * misfit (a missing block, truncation, a malformed blob). */
typedef struct reads {
    mpiacc_ipc_export_t *xs; /* the exports the pieces read */
    int *xi;                 /* [2 * process + side]: index in xs, or -1 */
    int nx;
    mpiacc_ipc_piece_t *p;
    int n, cap;
} reads_t;

/* Block i of process r into receive slot `slot` as a piece: 1 when added. */
static int as_piece(mpiacc_coll_ipc_t *ci, reads_t *R, int r, int i, int slot)
{
    mpiacc_coll_buf_t *b = &ci->c->b[MPIACC_COLL_R];
    const mpiacc_coll_ipc_blk_t *k = mpiacc_coll_ipc_blk(ci, r, i);
    const mpiacc_coll_ipc_hdr_t *h = mpiacc_coll_ipc_rec(ci, r);
    const mpiacc_tv_i64 *blob;
    mpiacc_coll_slot_t *sl;
    MPI_Count src_bytes, dst_bytes;
    mpiacc_tv_i64 sstart, dstart;
    int key;
    if (slot < 0 || slot >= b->nslots || !k || k->count <= 0 || k->side < 0 || k->side > 1 || !h->has[k->side])
        return 0;
    if (k->blob_bytes < MPIACC_TV_HDR_WORDS * sizeof *blob || k->blob_bytes % sizeof *blob ||
        (size_t)k->blob_off + k->blob_bytes > ci->rec_bytes)
        return 0;
    blob = (const mpiacc_tv_i64 *)((const unsigned char *)h + k->blob_off);
    if (blob[MPIACC_TV_H_MAGIC] != MPIACC_TV_MAGIC_VALUE ||
        (size_t)blob[MPIACC_TV_H_WORDS] * sizeof *blob != k->blob_bytes || blob[MPIACC_TV_H_SIZE] <= 0 ||
        __builtin_mul_overflow((MPI_Count)k->count, (MPI_Count)blob[MPIACC_TV_H_SIZE], &src_bytes))
        return 0;
    sl = &b->slots[slot];
    if (sl->count <= 0 || sl->type == MPI_DATATYPE_NULL ||
        __builtin_mul_overflow(sl->count, mpiacc_coll_psize(sl->type), &dst_bytes) || src_bytes > dst_bytes)
        return 0;
    if (!sl->t && mpiacc_pack_type_get(sl->type, &sl->t) != MPI_SUCCESS) return 0;
    if (!mpiacc_tv_dense(blob, (mpiacc_tv_i64)k->count, &sstart) || !mpiacc_tv_dense(sl->t->blob, sl->count, &dstart))
        return 0;
    if (R->n == R->cap) {
        int cap = R->cap ? 2 * R->cap : 16;
        void *q = realloc(R->p, sizeof *R->p * (size_t)cap);
        if (!q) return 0;
        R->p = q;
        R->cap = cap;
    }
    if (!R->xs) {
        int nk = 2 * ci->c->size;
        R->xs = malloc(sizeof *R->xs * (size_t)nk);
        R->xi = malloc(sizeof *R->xi * (size_t)nk);
        if (!R->xs || !R->xi) {
            free(R->xs), free(R->xi);
            R->xs = NULL, R->xi = NULL;
            return 0;
        }
        for (int j = 0; j < nk; j++) R->xi[j] = -1;
    }
    key = 2 * r + k->side;
    if (R->xi[key] < 0) {
        R->xs[R->nx] = h->x[k->side];
        R->xi[key] = R->nx++;
    }
    R->p[R->n++] = (mpiacc_ipc_piece_t){.src = R->xi[key],
                                        .disp = k->disp + sstart,
                                        .bytes = src_bytes,
                                        .dst = (char *)b->buf + sl->disp + dstart};
    return 1;
}

static void read_block(mpiacc_coll_ipc_t *ci, reads_t *R, int r, int i, int slot)
{
    /* (no table when this process uses no buffer: then it has nothing to read) */
    if (!ci->ipc || !ci->ipc->import_copy_n || !as_piece(ci, R, r, i, slot)) mpiacc_coll_ipc_read(ci, r, i, slot);
}

/* The one import_copy_n of the pieces. */
static int reads_flush(mpiacc_coll_ipc_t *ci, reads_t *R)
{
    mpiacc_coll_buf_t *b = &ci->c->b[MPIACC_COLL_R];
    void *xfer = NULL;
    int err = MPI_SUCCESS;
    if (R->n > 0) {
        err = ci->ipc->import_copy_n(&b->a, b->dep, R->xs, R->nx, R->p, R->n, &xfer);
        if (err == MPI_SUCCESS) mpiacc_coll_ipc_keep(ci, b->be, xfer);
    }
    free(R->xs), free(R->xi), free(R->p);
    memset(R, 0, sizeof *R);
    return err;
}

static int run(mpiacc_coll_ipc_t *ci)
{
    int mpi_errno = MPI_SUCCESS, *src = NULL, *dst, cart = 0, err;
    mpiacc_coll_op_t *c = ci->c;
    mpiacc_coll_buf_t *br = &c->b[MPIACC_COLL_R];
    int ip = c->a.sbuf == MPI_IN_PLACE, me = c->rank;
    reads_t R;
    memset(&R, 0, sizeof R);
    switch (c->kind) {
    case MPIACC_COLL_BCAST:
        if (me != c->a.root && br->nslots == 1) read_block(ci, &R, c->a.root, 0, 0);
        break;
    case MPIACC_COLL_ALLGATHER:
    case MPIACC_COLL_ALLGATHERV:
        for (int i = 0; i < c->size && i < br->nslots; i++)
            if (!(ip && i == me)) read_block(ci, &R, i, 0, i);
        break;
    case MPIACC_COLL_ALLTOALL:
    case MPIACC_COLL_ALLTOALLV:
        for (int i = 0; i < c->size && i < br->nslots; i++) read_block(ci, &R, i, me, i);
        break;
    default:
        MPIACC_CHECK(mpiacc_coll_neighbors(c, &src, &dst, &cart));
        for (int m = 0; m < c->nrecv && m < br->nslots; m++) {
            if (src[m] == MPI_PROC_NULL) continue; /* MPI leaves that block alone */
            if (src[m] < 0 || src[m] >= c->size)
                MPIACC_FAIL(MPIACC_ERRK_INTERN, "%s: neighbour %d out of range", mpiacc_coll_name(c->kind, 0), src[m]);
            read_block(ci, &R, src[m], neighbor_block(ci, src, cart, m), m);
        }
        break;
    }
fn_exit:
    err = reads_flush(ci, &R); /* what was gathered is read even after a failure (peers wait for the flag) */
    if (mpi_errno == MPI_SUCCESS) mpi_errno = err;
    free(src); /* dst with it */
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
