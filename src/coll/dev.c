/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/dev.c: a device collective on the collective engine (NCCL): which
 * calls the engine takes (mpiacc_coll_dev_takes), and the program it runs
 * for one call (backend_coll.h: packs, one group of steps, unpacks), built
 * from the family's plan (core.c's slots).
 *
 * Each side (send, receive) is seen as its packed blocks laid out as the
 * plan's staging would hold them (slot i at its hoff): the VIEW.  When every
 * block is one dense byte range of the user's buffer placed so (a
 * contiguous datatype, blocks in order), the view IS the user's memory and
 * the engine reads and writes it directly; otherwise the view is a region
 * of the call's device temporary, packed before the group (slots with
 * `pack`) and unpacked after it (slots with `unpack`), with mpiacc's
 * kernels.  Then per kind:
 *
 *   Allreduce, Reduce         one ncclAllReduce / ncclReduce of the
 *                             predefined type under the datatype
 *   Reduce_scatter_block      ncclReduceScatter; Reduce_scatter: one
 *                             ncclReduce per rank's block (grouped)
 *   Bcast                     ncclBroadcast of the packed bytes
 *   Allgather                 ncclAllGather (in place: the own block)
 *   Allgatherv, Gather(v),    grouped ncclSend / ncclRecv of packed bytes
 *   Scatter(v), Alltoall(v,w),  (a process's own block: to itself); in place
 *   neighbourhood              Alltoall sends from a packed copy
 * In-place reduce-scatters reduce into a temporary block copied to the
 * front of the buffer afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

typedef struct view {
    char *base;    /* user memory: view byte x at base + x; NULL: temporary */
    MPI_Count off; /* temporary: view byte x at tmp + off + x */
} view_t;

enum { V_TMP = 1, V_NOPACK = 2, V_NOUNPACK = 4 };

static mpiacc_bcoll_ref_t ref(const view_t *v, MPI_Count x)
{
    mpiacc_bcoll_ref_t r = {NULL, 0};
    if (v->base) r.ptr = v->base + x;
    else r.off = v->off + x;
    return r;
}

static int grow(void **p, int n, int *cap, size_t each)
{
    if (n < *cap) return MPI_SUCCESS;
    {
        int c = *cap ? 2 * *cap : 8;
        void *q = realloc(*p, each * (size_t)c);
        if (!q) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective");
        *p = q;
        *cap = c;
    }
    return MPI_SUCCESS;
}

static int add_xfer(mpiacc_coll_prog_t *P, int unpack, mpiacc_coll_slot_t *sl, void *buf, MPI_Count off,
                    MPI_Count bytes)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_bcoll_xfer_t *x;
    if (!sl->t) MPIACC_CHECK(mpiacc_pack_type_get(sl->type, &sl->t));
    if (unpack) {
        MPIACC_CHECK(grow((void **)&P->unpacks, P->nunpack, &P->cunpack, sizeof *P->unpacks));
        x = &P->unpacks[P->nunpack++];
    } else {
        MPIACC_CHECK(grow((void **)&P->packs, P->npack, &P->cpack, sizeof *P->packs));
        x = &P->packs[P->npack++];
    }
    memset(x, 0, sizeof *x);
    x->d.buf = (char *)buf + sl->disp;
    x->d.type = sl->t;
    x->d.count = sl->count;
    x->d.first = 0;
    x->d.last = bytes;
    x->off = off;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int step(mpiacc_coll_prog_t *P, int what, mpiacc_bcoll_ref_t src, mpiacc_bcoll_ref_t dst, MPI_Count count,
                MPI_Datatype type, MPI_Op op, int peer)
{
    int mpi_errno = MPI_SUCCESS;
    /* nothing to move (the same on every process: MPI's counts agree), or
     * MPI_PROC_NULL (MPI moves nothing there) */
    if (count <= 0 || ((what == MPIACC_BCOLL_SEND || what == MPIACC_BCOLL_RECV) && peer == MPI_PROC_NULL))
        return MPI_SUCCESS;
    MPIACC_CHECK(grow((void **)&P->steps, P->nstep, &P->cstep, sizeof *P->steps));
    P->steps[P->nstep++] = (mpiacc_bcoll_step_t){
        .what = what, .src = src, .dst = dst, .count = count, .type = type, .op = op, .peer = peer};
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Packed bytes of slot i of side s (0 when there is none). */
static MPI_Count slot_bytes(const mpiacc_coll_op_t *c, int s, int i)
{
    const mpiacc_coll_slot_t *sl;
    if (i < 0 || i >= c->b[s].nslots) return 0;
    sl = &c->b[s].slots[i];
    if (sl->count <= 0 || sl->type == MPI_DATATYPE_NULL) return 0;
    return sl->count * mpiacc_coll_psize(sl->type);
}

static MPI_Count slot_at(const mpiacc_coll_op_t *c, int s, int i)
{
    return i >= 0 && i < c->b[s].nslots ? c->b[s].slots[i].hoff : 0;
}

/* The view of slots [i0, i1) of side s: the user's memory when allowed
 * and every block with data is dense and in place, else a region of the
 * temporary with its packs and unpacks. */
static int side_view(mpiacc_coll_op_t *c, mpiacc_coll_prog_t *P, int s, int i0, int i1, int flags, view_t *v)
{
    int mpi_errno = MPI_SUCCESS, direct = !(flags & V_TMP);
    mpiacc_coll_buf_t *b = &c->b[s];
    char *base = NULL;
    MPI_Count top = 0;
    memset(v, 0, sizeof *v);
    for (int i = i0; i < i1 && i < b->nslots; i++) {
        mpiacc_coll_slot_t *sl = &b->slots[i];
        MPI_Count bytes = slot_bytes(c, s, i);
        mpiacc_tv_i64 start = 0;
        char *p;
        if (bytes <= 0) continue;
        if (!sl->t) MPIACC_CHECK(mpiacc_pack_type_get(sl->type, &sl->t));
        if (sl->hoff + bytes > top) top = sl->hoff + bytes;
        if (!direct) continue;
        if (!(sl->t->contiguous ? (start = sl->t->start, 1)
                                : sl->t->blob && mpiacc_tv_dense(sl->t->blob, sl->count, &start))) {
            direct = 0;
            continue;
        }
        p = (char *)b->buf + sl->disp + start - sl->hoff;
        if (!base) base = p;
        else if (p != base) direct = 0;
    }
    if (direct) {
        v->base = base ? base : (char *)b->buf;
        if (!v->base) v->base = (char *)&c->kind; /* nothing is read or written: any non-NULL address */
        goto fn_exit;
    }
    v->off = P->tmp;
    P->tmp += (top + 255) & ~(MPI_Count)255;
    for (int i = i0; i < i1 && i < b->nslots; i++) {
        mpiacc_coll_slot_t *sl = &b->slots[i];
        MPI_Count bytes = slot_bytes(c, s, i);
        if (bytes <= 0) continue;
        if (sl->pack && !(flags & V_NOPACK)) MPIACC_CHECK(add_xfer(P, 0, sl, b->buf, v->off + sl->hoff, bytes));
        if (sl->unpack && !(flags & V_NOUNPACK)) MPIACC_CHECK(add_xfer(P, 1, sl, b->buf, v->off + sl->hoff, bytes));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* A temporary region of n bytes. */
static view_t region(mpiacc_coll_prog_t *P, MPI_Count n)
{
    view_t v = {NULL, P->tmp};
    P->tmp += (n + 255) & ~(MPI_Count)255;
    return v;
}

/* ---- reductions ------------------------------------------------------------------ */

int mpiacc_coll_dev_takes(const mpiacc_coll_op_t *c, const struct mpiacc_backend_coll *ct)
{
    int ok = 0;
    mpiacc_coll_sig_t *sig = NULL;
    if (!ct || !ct->run) return 0;
    switch (c->kind) {
    case MPIACC_COLL_SCAN:
    case MPIACC_COLL_EXSCAN:
    case MPIACC_COLL_REDUCE_LOCAL:
    case MPIACC_COLL_BARRIER: return 0;
    case MPIACC_COLL_REDUCE:
    case MPIACC_COLL_ALLREDUCE:
    case MPIACC_COLL_REDUCE_SCATTER:
    case MPIACC_COLL_REDUCE_SCATTER_BLOCK:
        /* a predefined operation on n x one predefined type (no pair type):
         * the same answer on every process (MPI: one operation, one type
         * signature) */
        if (mpiacc_coll_sig_get(c->a.rtype, &sig) != MPI_SUCCESS) return 0;
        ok = sig->leaf != MPI_DATATYPE_NULL && !sig->pair && ct->reduce_supported &&
             ct->reduce_supported(sig->leaf, c->a.op);
        mpiacc_coll_sig_release(sig);
        return ok;
    default: return 1;
    }
}

static int reduction(mpiacc_coll_op_t *c, mpiacc_coll_prog_t *P)
{
    int mpi_errno = MPI_SUCCESS, ip = c->a.sbuf == MPI_IN_PLACE, me = c->rank, R = MPIACC_COLL_R, S = MPIACC_COLL_S;
    mpiacc_coll_sig_t *sig = NULL;
    MPI_Count per, esz;
    view_t in, out;
    MPIACC_CHECK(mpiacc_coll_sig_get(c->a.rtype, &sig));
    per = sig->n;                        /* leaf elements per element of the datatype */
    esz = sig->n ? sig->size / sig->n : 1; /* bytes of one leaf */
    switch (c->kind) {
    case MPIACC_COLL_ALLREDUCE:
    case MPIACC_COLL_REDUCE: {
        int root = c->kind == MPIACC_COLL_ALLREDUCE || me == c->a.root;
        int what = c->kind == MPIACC_COLL_ALLREDUCE ? MPIACC_BCOLL_ALLREDUCE : MPIACC_BCOLL_REDUCE;
        if (root) MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, 0, &out));
        if (!ip) MPIACC_CHECK(side_view(c, P, S, 0, c->b[S].nslots, 0, &in));
        else in = out;
        if (!root) out = in; /* a non-root's receive buffer: not significant */
        MPIACC_CHECK(step(P, what, ref(&in, 0), ref(&out, 0), c->a.rcount * per, sig->leaf, c->a.op, c->a.root));
        break;
    }
    case MPIACC_COLL_REDUCE_SCATTER_BLOCK:
    case MPIACC_COLL_REDUCE_SCATTER: {
        int split = ip && c->b[R].nslots > 1; /* in place: input whole, output the first block */
        MPI_Count obytes = slot_bytes(c, R, split ? 1 : 0), at = 0;
        if (ip) MPIACC_CHECK(side_view(c, P, R, 0, 1, split ? V_NOUNPACK : 0, &in));
        else MPIACC_CHECK(side_view(c, P, S, 0, c->b[S].nslots, 0, &in));
        if (!ip) MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, 0, &out));
        else if (!split) out = in;
        else {
            out = region(P, obytes); /* reduced here, then copied to the buffer's front */
            if (obytes > 0) MPIACC_CHECK(add_xfer(P, 1, &c->b[R].slots[1], c->b[R].buf, out.off, obytes));
        }
        if (c->kind == MPIACC_COLL_REDUCE_SCATTER_BLOCK) {
            MPIACC_CHECK(step(P, MPIACC_BCOLL_REDUCE_SCATTER, ref(&in, 0), ref(&out, 0), c->a.rcount * per,
                              sig->leaf, c->a.op, 0));
            break;
        }
        for (int i = 0; i < c->size; i++) {
            MPI_Count n = c->rcounts[i] * per;
            if (n > 0)
                MPIACC_CHECK(step(P, MPIACC_BCOLL_REDUCE, ref(&in, at), i == me ? ref(&out, 0) : ref(&in, at), n,
                                  sig->leaf, c->a.op, i));
            at += n * esz;
        }
        break;
    }
    default: MPIACC_FAIL(MPIACC_ERRK_INTERN, "%s: no engine program", mpiacc_coll_name(c->kind, c->a.nonblocking));
    }
fn_exit:
    if (sig) mpiacc_coll_sig_release(sig);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- data movement ------------------------------------------------------------- */

/* Neighbourhood collectives: block k to dst[k], block m from src[m].  The
 * engine matches the sends and receives between two processes in order;
 * MPI's rule for Cartesian topologies (receive block 2d from the negative
 * neighbour's send block 2d+1, block 2d+1 from the positive one's block 2d,
 * right also when both neighbours are one process) is kept by receiving
 * block 2d+1 before block 2d; graphs: the q-th edge matches the q-th. */
static int neighborhood(mpiacc_coll_op_t *c, mpiacc_coll_prog_t *P, const view_t *in, const view_t *out)
{
    int mpi_errno = MPI_SUCCESS, *src = NULL, *dst, cart = 0, S = MPIACC_COLL_S, R = MPIACC_COLL_R;
    int one = c->kind == MPIACC_COLL_NEIGHBOR_ALLGATHER || c->kind == MPIACC_COLL_NEIGHBOR_ALLGATHERV;
    MPIACC_CHECK(mpiacc_coll_neighbors(c, &src, &dst, &cart));
    for (int k = 0; k < c->nsend; k++)
        MPIACC_CHECK(step(P, MPIACC_BCOLL_SEND, ref(in, slot_at(c, S, one ? 0 : k)), ref(in, 0),
                          slot_bytes(c, S, one ? 0 : k), MPI_BYTE, MPI_OP_NULL, dst[k]));
    for (int j = 0; j < c->nrecv; j++) {
        int m = cart ? j ^ 1 : j;
        if (m >= c->nrecv) m = j;
        MPIACC_CHECK(step(P, MPIACC_BCOLL_RECV, ref(out, 0), ref(out, slot_at(c, R, m)), slot_bytes(c, R, m),
                          MPI_BYTE, MPI_OP_NULL, src[m]));
    }
fn_exit:
    free(src); /* dst with it */
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int movement(mpiacc_coll_op_t *c, mpiacc_coll_prog_t *P)
{
    int mpi_errno = MPI_SUCCESS, S = MPIACC_COLL_S, R = MPIACC_COLL_R, me = c->rank, P_ = c->size;
    int ip = c->a.sbuf == MPI_IN_PLACE || c->a.rbuf == MPI_IN_PLACE, root = me == c->a.root;
    view_t in = {0}, out = {0};
    mpiacc_bcoll_ref_t nil = {NULL, 0};
    switch (c->kind) {
    case MPIACC_COLL_BCAST:
        MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, 0, &out));
        MPIACC_CHECK(step(P, MPIACC_BCOLL_BCAST, ref(&out, 0), ref(&out, 0), slot_bytes(c, R, 0), MPI_BYTE,
                          MPI_OP_NULL, c->a.root));
        break;
    case MPIACC_COLL_ALLGATHER:
    case MPIACC_COLL_ALLGATHERV: {
        int uniform = c->kind == MPIACC_COLL_ALLGATHER;
        MPI_Count sb;
        MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, 0, &out));
        if (!ip) MPIACC_CHECK(side_view(c, P, S, 0, c->b[S].nslots, 0, &in));
        sb = ip ? slot_bytes(c, R, me) : slot_bytes(c, S, 0);
        for (int i = 0; i < P_ && uniform; i++) uniform = slot_bytes(c, R, i) == sb && slot_at(c, R, i) == i * sb;
        if (uniform) {
            MPIACC_CHECK(step(P, MPIACC_BCOLL_ALLGATHER, ip ? ref(&out, slot_at(c, R, me)) : ref(&in, 0),
                              ref(&out, 0), sb, MPI_BYTE, MPI_OP_NULL, 0));
            break;
        }
        for (int j = 0; j < P_; j++) {
            if (ip && j == me) continue;
            MPIACC_CHECK(step(P, MPIACC_BCOLL_SEND, ip ? ref(&out, slot_at(c, R, me)) : ref(&in, 0), nil, sb,
                              MPI_BYTE, MPI_OP_NULL, j));
            MPIACC_CHECK(step(P, MPIACC_BCOLL_RECV, nil, ref(&out, slot_at(c, R, j)), slot_bytes(c, R, j), MPI_BYTE,
                              MPI_OP_NULL, j));
        }
        break;
    }
    case MPIACC_COLL_GATHER:
    case MPIACC_COLL_GATHERV:
        if (!(root && ip)) MPIACC_CHECK(side_view(c, P, S, 0, c->b[S].nslots, 0, &in));
        if (root) MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, 0, &out));
        if (!(root && ip))
            MPIACC_CHECK(step(P, MPIACC_BCOLL_SEND, ref(&in, 0), nil, slot_bytes(c, S, 0), MPI_BYTE, MPI_OP_NULL,
                              c->a.root));
        for (int j = 0; root && j < P_; j++)
            if (!(ip && j == me))
                MPIACC_CHECK(step(P, MPIACC_BCOLL_RECV, nil, ref(&out, slot_at(c, R, j)), slot_bytes(c, R, j),
                                  MPI_BYTE, MPI_OP_NULL, j));
        break;
    case MPIACC_COLL_SCATTER:
    case MPIACC_COLL_SCATTERV:
        if (root) MPIACC_CHECK(side_view(c, P, S, 0, c->b[S].nslots, 0, &in));
        if (!(root && ip)) MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, 0, &out));
        for (int j = 0; root && j < P_; j++)
            if (!(ip && j == me))
                MPIACC_CHECK(step(P, MPIACC_BCOLL_SEND, ref(&in, slot_at(c, S, j)), nil, slot_bytes(c, S, j),
                                  MPI_BYTE, MPI_OP_NULL, j));
        if (!(root && ip))
            MPIACC_CHECK(step(P, MPIACC_BCOLL_RECV, nil, ref(&out, 0), slot_bytes(c, R, 0), MPI_BYTE, MPI_OP_NULL,
                              c->a.root));
        break;
    case MPIACC_COLL_ALLTOALL:
    case MPIACC_COLL_ALLTOALLV:
    case MPIACC_COLL_ALLTOALLW:
        /* in place: the sends read a packed copy of the receive buffer */
        if (ip) MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, V_TMP | V_NOUNPACK, &in));
        else MPIACC_CHECK(side_view(c, P, S, 0, c->b[S].nslots, 0, &in));
        MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, ip ? V_NOPACK : 0, &out));
        for (int j = 0; j < P_; j++) {
            int s = ip ? R : S;
            MPIACC_CHECK(step(P, MPIACC_BCOLL_SEND, ref(&in, slot_at(c, s, j)), nil, slot_bytes(c, s, j), MPI_BYTE,
                              MPI_OP_NULL, j));
            MPIACC_CHECK(step(P, MPIACC_BCOLL_RECV, nil, ref(&out, slot_at(c, R, j)), slot_bytes(c, R, j), MPI_BYTE,
                              MPI_OP_NULL, j));
        }
        break;
    default: /* neighbourhood */
        MPIACC_CHECK(side_view(c, P, S, 0, c->b[S].nslots, 0, &in));
        MPIACC_CHECK(side_view(c, P, R, 0, c->b[R].nslots, 0, &out));
        MPIACC_CHECK(neighborhood(c, P, &in, &out));
        break;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_coll_dev_build(mpiacc_coll_op_t *c, mpiacc_coll_prog_t *P)
{
    switch (c->kind) {
    case MPIACC_COLL_REDUCE:
    case MPIACC_COLL_ALLREDUCE:
    case MPIACC_COLL_REDUCE_SCATTER:
    case MPIACC_COLL_REDUCE_SCATTER_BLOCK: return reduction(c, P);
    default: return movement(c, P);
    }
}

void mpiacc_coll_prog_free(mpiacc_coll_prog_t *P)
{
    free(P->packs), free(P->unpacks), free(P->steps);
    memset(P, 0, sizeof *P);
}
