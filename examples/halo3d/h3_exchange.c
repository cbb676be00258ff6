/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * halo3d exchanges: the six face datatypes and the two exchange methods
 * (MPI_Neighbor_alltoallw; persistent MPI_Send_init / MPI_Recv_init
 * started with MPI_Startall), each on host arrays (CPU reference), on
 * device arrays through mpiacc (tagged subarrays) and on the manual
 * variant's contiguous host staging buffers.
 *
 * Tags of the persistent method: a face sent towards neighbour f carries
 * tag f and arrives at that neighbour as its face f^1 (the opposite side),
 * which is what it receives with tag f^1 from its neighbour f^1.  The tags
 * keep the two sides apart when both neighbours of a periodic dimension of
 * size 1 or 2 are the same rank.
 *
 * MPI only (built into halo3d and halo3d-cuda-aware); mpiacc's tagging is
 * in h3_mpiacc.c.  Regions between H3-LOC-BEGIN <tag> and H3-LOC-END are
 * counted by CMake (the exchange routine lines the header prints).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "halo3d.h"

const char *const h3_method_name[H3_NMETHODS] = {"alltoallw", "persistent"};

void h3_face_box(const h3_grid_t *g, int f, int recv, int sub[3], int start[3])
{
    int d = f / 2, upper = f % 2;
    for (int k = 0; k < 3; k++) sub[k] = g->n[k], start[k] = g->r;
    sub[d] = g->r;
    if (recv) start[d] = upper ? g->n[d] + g->r : 0;
    else start[d] = upper ? g->n[d] : g->r;
}

static int own(h3_xchg_t *x, MPI_Datatype t)
{
    if (x->nowned >= 2 * H3_FACES) return ex_error("too many datatypes");
    x->owned[x->nowned++] = t;
    return 0;
}

/* The twelve subarray types (send and receive per face), committed. */
static int subarrays(const h3_grid_t *g, h3_xchg_t *x, MPI_Datatype stype[H3_FACES],
                     MPI_Datatype rtype[H3_FACES])
{
    int sizes[3] = {g->Z, g->Y, g->X};
    for (int f = 0; f < H3_FACES; f++)
        for (int recv = 0; recv < 2; recv++) {
            int sub[3], start[3];
            MPI_Datatype t;
            h3_face_box(g, f, recv, sub, start);
            H3_MPI(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, g->base, &t));
            H3_MPI(MPI_Type_commit(&t));
            if (own(x, t)) return 1;
            if (recv) rtype[f] = t;
            else stype[f] = t;
        }
    return 0;
}

/* Persistent requests of array b: the receives, then the sends, of the
 * faces not in skip (x->nstart of them); buffer arguments sbuf / rbuf (+
 * offsets in bytes when offs is not NULL). */
int h3_persistent(const h3_grid_t *g, h3_xchg_t *x, int b, char *sbuf, char *rbuf, const MPI_Aint *offs, int skip)
{
    int n = 0;
    for (int f = 0; f < H3_FACES; f++)
        if (!(skip >> f & 1))
            H3_MPI(MPI_Recv_init(rbuf + (offs ? offs[f] : 0), x->counts[f], x->rtype[f], g->nbr[f], f ^ 1, g->cart,
                                 &x->req[b][n++]));
    for (int f = 0; f < H3_FACES; f++)
        if (!(skip >> f & 1))
            H3_MPI(MPI_Send_init(sbuf + (offs ? offs[f] : 0), x->counts[f], x->stype[f], g->nbr[f], f, g->cart,
                                 &x->req[b][n++]));
    x->nstart = n;
    return 0;
}

static void xchg_clear(h3_xchg_t *x, int method)
{
    memset(x, 0, sizeof *x);
    x->method = method;
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 2 * H3_FACES; i++) x->req[b][i] = MPI_REQUEST_NULL;
}

int h3_xchg_host(const h3_grid_t *g, int method, void *a0, void *a1, h3_xchg_t *x)
{
    xchg_clear(x, method);
    if (subarrays(g, x, x->stype, x->rtype)) return 1;
    x->buf[0] = a0, x->buf[1] = a1;
    for (int f = 0; f < H3_FACES; f++) x->counts[f] = 1, x->displs[f] = 0;
    if (method == H3_PERSIST) {
        x->nreq = 2;
        for (int b = 0; b < 2; b++)
            if (h3_persistent(g, x, b, x->buf[b], x->buf[b], NULL, 0)) return 1;
    }
    return 0;
}

int h3_xchg_staged(const h3_grid_t *g, int method, void *send, void *recv, int skip_mask, h3_xchg_t *x)
{
    xchg_clear(x, method);
    x->staged = 1;
    x->buf[0] = send, x->buf[1] = recv; /* alltoallw: send from buf[0], receive into buf[1] */
    for (int f = 0; f < H3_FACES; f++) {
        x->stype[f] = x->rtype[f] = g->base;
        x->counts[f] = skip_mask >> f & 1 ? 0 : g->face_elems[f];
        x->displs[f] = (MPI_Aint)g->face_off[f] * (MPI_Aint)g->es;
    }
    if (method == H3_PERSIST) {
        x->nreq = 1; /* the same face buffers for both arrays */
        if (h3_persistent(g, x, 0, send, recv, x->displs, skip_mask)) return 1;
    }
    return 0;
}

int h3_self_mask(const h3_grid_t *g)
{
    int m = 0;
    for (int f = 0; f < H3_FACES; f++)
        if (g->nbr[f] == g->rank) m |= 1 << f;
    return m;
}

/* H3-LOC-BEGIN run */
int h3_xchg_run(const h3_grid_t *g, h3_xchg_t *x, int buf)
{
    if (x->method == H3_A2AW) {
        /* staged: buf[0] is the send staging, buf[1] the receive staging */
        void *s = x->staged ? x->buf[0] : x->buf[buf], *r = x->staged ? x->buf[1] : x->buf[buf];
        H3_MPI(MPI_Neighbor_alltoallw(s, x->counts, x->displs, x->stype, r, x->counts, x->displs, x->rtype,
                                      g->cart));
    } else {
        MPI_Request *rq = x->req[x->nreq == 2 ? buf : 0];
        H3_MPI(MPI_Startall(x->nstart, rq));
        H3_MPI(MPI_Waitall(x->nstart, rq, MPI_STATUSES_IGNORE));
    }
    return 0;
}
/* H3-LOC-END */

/* H3-LOC-BEGIN manual */
int h3_exchange_manual(const h3_grid_t *g, const h3_backend_t *be, h3_dev_t *d, h3_xchg_t *x, int buf)
{
    if (be->pack(d, buf) || be->to_host(d) || h3_xchg_run(g, x, buf) || be->to_device(d)) return 1;
    return be->unpack(d, buf);
}
/* H3-LOC-END */

/* H3-LOC-BEGIN cuda-aware */
int h3_exchange_cuda_aware(const h3_grid_t *g, const h3_backend_t *be, h3_dev_t *d, h3_xchg_t *x, int buf)
{
    int self = h3_self_mask(g);
    if (be->pack(d, buf)) return 1;
    for (int f = 0; f < H3_FACES; f++) /* from oneself: face f is what goes out on the other side */
        if (self >> f & 1 && be->self_copy(d, g->face_off[f], g->face_off[f ^ 1], g->face_elems[f])) return 1;
    if (be->sync(d) || h3_xchg_run(g, x, buf)) return 1;
    return be->unpack(d, buf);
}
/* H3-LOC-END */

void h3_xchg_free(h3_xchg_t *x)
{
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 2 * H3_FACES; i++)
            if (x->req[b][i] != MPI_REQUEST_NULL) MPI_Request_free(&x->req[b][i]);
    for (int i = 0; i < x->nowned; i++) MPI_Type_free(&x->owned[i]);
    x->nowned = 0;
}
