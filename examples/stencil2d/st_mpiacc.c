/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stencil2d's mpiacc exchange (stencil2d only): device buffers straight to
 * MPI with datatypes tagged once per precision.  The same routine serves
 * --overlap: its datatypes name the main (high-priority) stream, on which
 * the boundary band is computed, while the interior runs on the other one.
 *
 * The regions between ST-LOC-BEGIN <tag> and ST-LOC-END markers are
 * counted by CMake (non-blank, non-comment lines): the exchange routine
 * (mpiacc) and, apart, the datatype set-up done once per precision.
 */
#include <stdio.h>
#include <string.h>

#include <mpiacc.h>

#include "stencil2d.h"

/* ST-LOC-BEGIN mpiacc */
int st_exchange_mpiacc(const st_grid_t *g, const st_backend_t *be, st_dev_t *d, const st_mpx_t *x,
                       int buf)
{
    for (int ph = ST_ROWS; ph <= ST_COLS; ph++) {
        MPI_Request rq[4];
        if (x->persistent) { /* --persistent: the same four requests every time */
            MPI_Request *pq = (MPI_Request *)x->preq[buf][ph];
            ST_MPI(MPI_Startall(4, pq));
            ST_MPI(MPI_Waitall(4, pq, MPI_STATUSES_IGNORE));
            continue;
        }
        for (int s = 0; s < 2; s++)
            ST_MPI(MPI_Irecv(x->rbuf[buf][ph][s], 1, x->rtype[ph][s], g->nbr[ph][s],
                             g->recv_tag[ph][s], g->cart, &rq[s]));
        for (int s = 0; s < 2; s++)
            ST_MPI(MPI_Isend(x->sbuf[buf][ph][s], 1, x->stype[ph][s], g->nbr[ph][s],
                             g->send_tag[ph][s], g->cart, &rq[2 + s]));
        ST_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    }
    return be->ring(d, buf);
}
/* ST-LOC-END */

/* ST-LOC-BEGIN mpiacc-setup */
/* Tags t with where the data lives and what produces it: the stream or the
 * in-order queue the stencil kernels run on (be->queue(d)); with
 * stream_ordered, also the completion in the order of that stream. */
static int tag_type(const st_backend_t *be, st_dev_t *d, int stream_ordered, MPI_Datatype t)
{
    if (stream_ordered) ST_MPI(MPI_Type_set_attr(t, MPIACC_ORDER, MPIACC_ORDER_STREAM));
    if (be->buf_type == MPIACC_BUF_CUDA) {
        ST_MPI(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA));
        ST_MPI(MPI_Type_set_attr(t, MPIACC_STREAM, be->queue(d)));   /* cudaStream_t */
    } else {
        ST_MPI(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL));
        ST_MPI(MPI_Type_set_attr(t, MPIACC_CL_QUEUE, be->queue(d))); /* cl_command_queue */
    }
    return 0;
}

static int own(st_mpx_t *x, MPI_Datatype t)
{
    if (x->nowned >= (int)(sizeof x->owned / sizeof x->owned[0])) return ex_error("too many datatypes");
    x->owned[x->nowned++] = t;
    return 0;
}

/* Datatypes created once per precision: rows contiguous(h*P), columns
 * vector(R, h, P), tagged with the buffer type and the stream/queue.  With
 * CUDA the buffer arguments are base + offset device pointers; a cl_mem
 * cannot be offset, so for OpenCL each (phase, side, direction) gets a
 * one-block hindexed type whose displacement is the offset.  so_mask bit 0:
 * the send datatypes carry MPIACC_ORDER_STREAM, bit 1: the receive ones
 * (CUDA: a tagged dup of the unit type per direction). */
int st_mpx_setup(const st_grid_t *g, const st_backend_t *be, st_dev_t *d, int so_mask, int persistent,
                 st_mpx_t *x)
{
    MPI_Datatype unit[2], dirtype[2];
    memset(x, 0, sizeof *x);
    for (int b = 0; b < 2; b++)
        for (int ph = 0; ph < 2; ph++)
            for (int k = 0; k < 4; k++) x->preq[b][ph][k] = MPI_REQUEST_NULL;
    ST_MPI(MPI_Type_contiguous(g->h * g->P, g->base, &unit[ST_ROWS]));
    ST_MPI(MPI_Type_vector(g->R, g->h, g->P, g->base, &unit[ST_COLS]));
    for (int ph = ST_ROWS; ph <= ST_COLS; ph++) {
        ST_MPI(MPI_Type_commit(&unit[ph]));
        if (own(x, unit[ph])) return 1;
        if (!be->offsets_in_type && tag_type(be, d, 0, unit[ph])) return 1;
        for (int dir = 0; dir < 2; dir++) { /* stream order per direction: a tagged dup */
            dirtype[dir] = unit[ph];
            if (!be->offsets_in_type && (so_mask >> dir & 1)) {
                ST_MPI(MPI_Type_dup(unit[ph], &dirtype[dir]));
                if (own(x, dirtype[dir])) return 1;
                ST_MPI(MPI_Type_set_attr(dirtype[dir], MPIACC_ORDER, MPIACC_ORDER_STREAM));
            }
        }
        for (int s = 0; s < 2; s++)
            for (int dir = 0; dir < 2; dir++) {
                long off = dir ? g->recv_off[ph][s] : g->send_off[ph][s];
                MPI_Datatype t = dirtype[dir];
                if (be->offsets_in_type) {
                    MPI_Aint disp = (MPI_Aint)(off * (long)g->es);
                    ST_MPI(MPI_Type_create_hindexed_block(1, 1, &disp, unit[ph], &t));
                    if (own(x, t)) return 1;
                    ST_MPI(MPI_Type_commit(&t));
                    if (tag_type(be, d, so_mask >> dir & 1, t)) return 1;
                }
                for (int b = 0; b < 2; b++) {
                    char *p = be->mpi_buf(d, b);
                    if (!be->offsets_in_type) p += off * (long)g->es;
                    if (dir) x->rbuf[b][ph][s] = p;
                    else x->sbuf[b][ph][s] = p;
                }
                if (dir) x->rtype[ph][s] = t;
                else x->stype[ph][s] = t;
            }
    }
    x->persistent = persistent;
    for (int b = 0; persistent && b < 2; b++) /* receives first, as the nonblocking exchange posts them */
        for (int ph = ST_ROWS; ph <= ST_COLS; ph++)
            for (int s = 0; s < 2; s++) {
                ST_MPI(MPI_Recv_init(x->rbuf[b][ph][s], 1, x->rtype[ph][s], g->nbr[ph][s], g->recv_tag[ph][s],
                                     g->cart, &x->preq[b][ph][s]));
                ST_MPI(MPI_Send_init(x->sbuf[b][ph][s], 1, x->stype[ph][s], g->nbr[ph][s], g->send_tag[ph][s],
                                     g->cart, &x->preq[b][ph][2 + s]));
            }
    return 0;
}

/* ST-LOC-END */

void st_mpx_free(st_mpx_t *x)
{
    for (int b = 0; b < 2; b++)
        for (int ph = 0; ph < 2; ph++)
            for (int k = 0; k < 4; k++)
                if (x->preq[b][ph][k] != MPI_REQUEST_NULL) MPI_Request_free(&x->preq[b][ph][k]);
    for (int i = 0; i < x->nowned; i++)
        if (x->owned[i] != MPI_DATATYPE_NULL) MPI_Type_free(&x->owned[i]);
    x->nowned = 0;
}
