/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stencil2d exchanges that need MPI only (built into both executables):
 * the host exchange (the manual variant's MPI part and the CPU reference)
 * and the cuda-aware variant's exchange, written as for any CUDA-aware MPI
 * (Intel MPI, Open MPI, MVAPICH, MPICH on a CUDA-enabled UCX): device
 * pointers with contiguous predefined types, the application's own column
 * pack/unpack kernels, a stream synchronisation before each send.
 *
 * The regions between ST-LOC-BEGIN <variant> and ST-LOC-END markers are the
 * exchange routines whose non-blank, non-comment lines CMake counts (with
 * the backend's regions of the same tag: staging copies for manual, the
 * column kernels for cuda-aware).
 */
#include <stdarg.h>
#include <stdio.h>

#include "stencil2d.h"

/* ST-LOC-BEGIN manual */
int st_host_exchange(const st_grid_t *g, void *m)
{
    char *b = m;
    for (int ph = ST_ROWS; ph <= ST_COLS; ph++) {
        MPI_Request rq[2];
        for (int s = 0; s < 2; s++)
            ST_MPI(MPI_Irecv(b + g->recv_off[ph][s] * g->es, 1, g->host_type[ph], g->nbr[ph][s],
                             g->recv_tag[ph][s], g->cart, &rq[s]));
        for (int s = 0; s < 2; s++)
            ST_MPI(MPI_Send(b + g->send_off[ph][s] * g->es, 1, g->host_type[ph], g->nbr[ph][s],
                            g->send_tag[ph][s], g->cart));
        ST_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    }
    return 0;
}
/* ST-LOC-END */

/* ST-LOC-BEGIN cuda-aware */
int st_exchange_cuda_aware(const st_grid_t *g, const st_backend_t *be, st_dev_t *d, int buf)
{
    char *m = be->mpi_buf(d, buf), *cb[2][2];
    int mask = (g->nbr[ST_COLS][0] != MPI_PROC_NULL) | (g->nbr[ST_COLS][1] != MPI_PROC_NULL) << 1;
    MPI_Request rq[4];
    for (int k = 0; k < 4; k++)
        if (!(cb[k / 2][k % 2] = be->col_buf(d, k / 2, k % 2))) return 1;
    if (be->sync(d)) return 1; /* the rows to send are computed */
    for (int s = 0; s < 2; s++)
        ST_MPI(MPI_Irecv(m + g->recv_off[ST_ROWS][s] * g->es, g->h * g->P, g->base, g->nbr[ST_ROWS][s],
                         g->recv_tag[ST_ROWS][s], g->cart, &rq[s]));
    for (int s = 0; s < 2; s++)
        ST_MPI(MPI_Isend(m + g->send_off[ST_ROWS][s] * g->es, g->h * g->P, g->base, g->nbr[ST_ROWS][s],
                         g->send_tag[ST_ROWS][s], g->cart, &rq[2 + s]));
    ST_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    /* the columns span all rows: the corners just received go with them */
    if (be->pack_cols(d, buf, mask) || be->sync(d)) return 1;
    for (int s = 0; s < 2; s++)
        ST_MPI(MPI_Irecv(cb[1][s], g->R * g->h, g->base, g->nbr[ST_COLS][s], g->recv_tag[ST_COLS][s], g->cart,
                         &rq[s]));
    for (int s = 0; s < 2; s++)
        ST_MPI(MPI_Isend(cb[0][s], g->R * g->h, g->base, g->nbr[ST_COLS][s], g->send_tag[ST_COLS][s], g->cart,
                         &rq[2 + s]));
    ST_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    if (be->unpack_cols(d, buf, mask)) return 1;
    return be->ring(d, buf);
}
/* ST-LOC-END */
