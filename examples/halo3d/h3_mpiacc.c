/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * halo3d's mpiacc exchange (halo3d only): the host exchange's subarray
 * types, tagged once with where the buffer lives and the stream (CUDA) or
 * in-order queue (OpenCL) its data depend on; the buffer argument is the
 * device array itself (device pointer or cl_mem), the face offsets are in
 * the types.  The exchange is then h3_xchg_run, as on host arrays.  With
 * --overlap the receive types also carry MPIACC_ORDER_STREAM (unless
 * --host-order): a receive completes once its data are ordered on the
 * stream, which the shell kernel then follows.
 */
#include <mpiacc.h>

#include "halo3d.h"

/* H3-LOC-BEGIN mpiacc-setup */
int h3_xchg_mpiacc(const h3_grid_t *g, int method, const h3_backend_t *be, h3_dev_t *d, int recv_stream_order,
                   h3_xchg_t *x)
{
    int key = be->buf_type == MPIACC_BUF_CUDA ? MPIACC_STREAM : MPIACC_CL_QUEUE;
    if (h3_xchg_host(g, H3_A2AW, be->mpi_buf(d, 0), be->mpi_buf(d, 1), x)) return 1;
    x->method = method;
    for (int i = 0; i < x->nowned; i++) {
        H3_MPI(MPI_Type_set_attr(x->owned[i], MPIACC_BUF_TYPE, be->buf_type));
        H3_MPI(MPI_Type_set_attr(x->owned[i], key, be->queue(d)));
    }
    for (int f = 0; recv_stream_order && f < H3_FACES; f++)
        H3_MPI(MPI_Type_set_attr(x->rtype[f], MPIACC_ORDER, MPIACC_ORDER_STREAM));
    if (method == H3_PERSIST) {
        x->nreq = 2;
        for (int b = 0; b < 2; b++)
            if (h3_persistent(g, x, b, x->buf[b], x->buf[b], NULL, 0)) return 1;
    }
    return 0;
}
/* H3-LOC-END */
