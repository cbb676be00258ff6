/* SPDX-License-Identifier: BSD-3-Clause */
/* stencil2d OpenCL backend: two in-order queues per rank, the main one
 * (exchange, boundary band) and a second one (the interior under
 * --overlap), ordered by events (GPU devices preferred: the (node-local
 * rank % count)-th; else the first device, e.g. PoCL on the CPU). */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <mpiacc.h>

#include "ex_opencl.h"

#include "stencil2d.h"

static const char *kernel_src =
    "#ifdef ST_DP\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "typedef double T;\n"
    "#else\n"
    "typedef float T;\n"
    "#endif\n"
    /* every kernel computes a point the same way: no contraction into FMA */
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "T st_point(__global const T *a, int i, int j, int P, T wc, T wk, T wd)\n"
    "{\n"
    "    __global const T *n = a + (size_t)(i - 1) * P, *c = n + P, *s = c + P;\n"
    "    return wc * c[j] + wk * (n[j] + s[j] + c[j - 1] + c[j + 1]) +\n"
    "           wd * (n[j - 1] + n[j + 1] + s[j - 1] + s[j + 1]);\n"
    "}\n"
    /* rows [i0, i0 + nr) x columns [j0, j0 + nc) */
    "__kernel void st_step(__global const T *a, __global T *b, int P, T wc, T wk, T wd,\n"
    "                      int i0, int j0, int nr, int nc)\n"
    "{\n"
    "    int j = (int)get_global_id(0), i = (int)get_global_id(1);\n"
    "    if (i >= nr || j >= nc) return;\n"
    "    b[(size_t)(i + i0) * P + j + j0] = st_point(a, i + i0, j + j0, P, wc, wk, wd);\n"
    "}\n"
    /* up to four rectangles (i0, j0, nr, nc), end[q] = prefix sums of their areas */
    "__kernel void st_band(__global const T *a, __global T *b, int P, T wc, T wk, T wd, int4 end,\n"
    "                      int4 r0, int4 r1, int4 r2, int4 r3)\n"
    "{\n"
    "    int k = (int)get_global_id(0);\n"
    "    int4 r;\n"
    "    if (k >= end.w) return;\n"
    "    if (k < end.x) r = r0;\n"
    "    else if (k < end.y) { r = r1; k -= end.x; }\n"
    "    else if (k < end.z) { r = r2; k -= end.y; }\n"
    "    else { r = r3; k -= end.z; }\n"
    "    int i = r.x + k / r.w, j = r.y + k % r.w;\n"
    "    b[(size_t)i * P + j] = st_point(a, i, j, P, wc, wk, wd);\n"
    "}\n"
    "__kernel void st_ring(__global const T *a, __global T *b, int R, int C, int P)\n"
    "{\n"
    "    int k = (int)get_global_id(0);\n"
    "    size_t x;\n"
    "    if (k < C) x = (size_t)k;\n"
    "    else if (k < 2 * C) x = (size_t)(R - 1) * P + (k - C);\n"
    "    else if (k < 2 * C + R) x = (size_t)(k - 2 * C) * P;\n"
    "    else if (k < 2 * C + 2 * R) x = (size_t)(k - 2 * C - R) * P + C - 1;\n"
    "    else return;\n"
    "    b[x] = a[x];\n"
    "}\n";

struct st_dev {
    const st_grid_t *g;
    cl_context ctx;
    cl_command_queue q, ql; /* main (exchange, boundary) and second (interior) in-order queues */
    cl_program prog;
    cl_kernel kstep, kband, kring;
    cl_mem m[3];            /* the two matrices and the initial one */
    char *host;
    int gpu;
    cl_event hb[2];         /* after the boundary band of a split step (parity) */
    cl_event le[2];         /* after each kernel on the second queue (parity)   */
    long nsplit, nlow;
};

static void cl_destroy(st_dev_t *d)
{
    if (!d) return;
    if (d->ql) clFinish(d->ql);
    if (d->q) clFinish(d->q);
    for (int k = 0; k < 2; k++) {
        if (d->hb[k]) clReleaseEvent(d->hb[k]);
        if (d->le[k]) clReleaseEvent(d->le[k]);
    }
    for (int b = 0; b < 3; b++)
        if (d->m[b]) clReleaseMemObject(d->m[b]);
    if (d->kstep) clReleaseKernel(d->kstep);
    if (d->kband) clReleaseKernel(d->kband);
    if (d->kring) clReleaseKernel(d->kring);
    if (d->prog) clReleaseProgram(d->prog);
    if (d->q) clReleaseCommandQueue(d->q);
    if (d->ql) clReleaseCommandQueue(d->ql);
    if (d->ctx) clReleaseContext(d->ctx);
    free(d->host);
    free(d);
}

static int build(st_dev_t *d, cl_device_id dev)
{
    const st_grid_t *g = d->g;
    cl_int e;
    char log[4096];
    int R = g->R, C = g->C, P = g->P;
    double w[3] = {g->wc, g->wk, g->wd};
    float wf[3] = {(float)g->wc, (float)g->wk, (float)g->wd};
    if (ex_cl_build(d->ctx, dev, kernel_src, g->dp ? "-DST_DP" : "", &d->prog, log, sizeof log) != CL_SUCCESS)
        return ex_error("OpenCL kernel build failed:\n%s", log);
    d->kstep = clCreateKernel(d->prog, "st_step", &e);
    CL_TRY(e);
    d->kband = clCreateKernel(d->prog, "st_band", &e);
    CL_TRY(e);
    d->kring = clCreateKernel(d->prog, "st_ring", &e);
    CL_TRY(e);
    CL_TRY(clSetKernelArg(d->kring, 2, sizeof R, &R));
    CL_TRY(clSetKernelArg(d->kring, 3, sizeof C, &C));
    CL_TRY(clSetKernelArg(d->kring, 4, sizeof P, &P));
    for (int n = 0; n < 2; n++) {
        cl_kernel kn = n ? d->kband : d->kstep;
        CL_TRY(clSetKernelArg(kn, 2, sizeof P, &P));
        for (int k = 0; k < 3; k++) CL_TRY(clSetKernelArg(kn, 3 + k, g->es, g->dp ? (void *)&w[k] : (void *)&wf[k]));
    }
    return 0;
}

static int cl_reset(st_dev_t *d)
{
    d->nsplit = d->nlow = 0;
    return ex_cl_reset(d->q, d->ql, d->m, (size_t)d->g->R * d->g->P * d->g->es);
}

static int cl_create(const st_grid_t *g, const void *init, st_dev_t **out)
{
    cl_device_id dev;
    size_t bytes = (size_t)g->R * g->P * g->es;
    st_dev_t *d = calloc(1, sizeof *d);
    *out = d;
    if (!d) return ex_error("out of memory");
    d->g = g;
    /* the main queue gets the boundary and the exchange, the second one the
     * interior (OpenCL 1.2 has no queue priorities: ordered by events) */
    if (ex_cl_setup(g->local_rank, &dev, &d->gpu, &d->ctx, &d->q, &d->ql, d->m, bytes, init)) return 1;
    d->host = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!d->host) return ex_error("out of host memory");
    memset(d->host, 0, bytes);
    if (build(d, dev)) return 1;
    return cl_reset(d);
}

static int cl_download(st_dev_t *d, int buf, void *dst)
{
    CL_TRY(clFinish(d->ql));
    CL_TRY(clEnqueueReadBuffer(d->q, d->m[buf], CL_TRUE, 0, (size_t)d->g->R * d->g->P * d->g->es, dst,
                               0, NULL, NULL));
    return 0;
}

static int enqueue_rect(st_dev_t *d, int buf, const st_rect_t *r, cl_command_queue q, cl_uint nw,
                        const cl_event *wait, cl_event *ev)
{
    size_t lws[2] = {32, 8}, gws[2] = {(size_t)r->nc, (size_t)r->nr};
    if (d->gpu)
        for (int k = 0; k < 2; k++) gws[k] = (gws[k] + lws[k] - 1) / lws[k] * lws[k];
    CL_TRY(clSetKernelArg(d->kstep, 0, sizeof(cl_mem), &d->m[buf]));
    CL_TRY(clSetKernelArg(d->kstep, 1, sizeof(cl_mem), &d->m[!buf]));
    CL_TRY(clSetKernelArg(d->kstep, 6, sizeof(int), &r->i0));
    CL_TRY(clSetKernelArg(d->kstep, 7, sizeof(int), &r->j0));
    CL_TRY(clSetKernelArg(d->kstep, 8, sizeof(int), &r->nr));
    CL_TRY(clSetKernelArg(d->kstep, 9, sizeof(int), &r->nc));
    CL_TRY(clEnqueueNDRangeKernel(q, d->kstep, 2, NULL, gws, d->gpu ? lws : NULL, nw, nw ? wait : NULL, ev));
    return 0;
}

static int enqueue_band(st_dev_t *d, int buf, cl_uint nw, const cl_event *wait, cl_event *ev)
{
    st_rect_t r[4];
    int n = st_band_rects(d->g, r);
    cl_int4 end, rv[4];
    size_t l = 128, gws;
    memset(rv, 0, sizeof rv);
    for (int q = 0; q < 4; q++) {
        int area = q < n ? r[q].nr * r[q].nc : 0;
        end.s[q] = (q ? end.s[q - 1] : 0) + area;
        if (q < n) rv[q].s[0] = r[q].i0, rv[q].s[1] = r[q].j0, rv[q].s[2] = r[q].nr, rv[q].s[3] = r[q].nc;
    }
    gws = (size_t)end.s[3];
    if (!gws) return clEnqueueMarkerWithWaitList(d->q, nw, nw ? wait : NULL, ev) == CL_SUCCESS ? 0 : ex_error("marker failed");
    if (d->gpu) gws = (gws + l - 1) / l * l;
    CL_TRY(clSetKernelArg(d->kband, 0, sizeof(cl_mem), &d->m[buf]));
    CL_TRY(clSetKernelArg(d->kband, 1, sizeof(cl_mem), &d->m[!buf]));
    CL_TRY(clSetKernelArg(d->kband, 6, sizeof end, &end));
    for (int q = 0; q < 4; q++) CL_TRY(clSetKernelArg(d->kband, 7 + q, sizeof rv[q], &rv[q]));
    CL_TRY(clEnqueueNDRangeKernel(d->q, d->kband, 1, NULL, &gws, d->gpu ? &l : NULL, nw, nw ? wait : NULL, ev));
    return 0;
}

static int cl_step(st_dev_t *d, int buf, int how)
{
    const st_grid_t *g = d->g;
    st_rect_t all = {1, 1, g->R - 2, g->C - 2}, in;
    cl_event ev = NULL, mark = NULL;
    if (how == ST_STEP_PLAIN) return enqueue_rect(d, buf, &all, d->q, 0, NULL, NULL);
    if (how == ST_STEP_LOW) { /* after everything on the main queue (the exchange) */
        CL_TRY(clEnqueueMarkerWithWaitList(d->q, 0, NULL, &mark));
        int rc = enqueue_rect(d, buf, &all, d->ql, 1, &mark, &ev);
        clReleaseEvent(mark);
        if (rc) return rc;
    } else {
        /* boundary band: after the second queue's last kernel */
        cl_event hb = NULL;
        if (enqueue_band(d, buf, d->nlow ? 1 : 0, d->nlow ? &d->le[(d->nlow - 1) & 1] : NULL, &hb)) return 1;
        ex_cl_keep(&d->hb[d->nsplit & 1], hb);
        /* interior: after the previous split's band, not its exchange */
        cl_uint nw = d->nsplit ? 1 : 0;
        const cl_event *prev = nw ? &d->hb[(d->nsplit - 1) & 1] : NULL;
        if (!st_interior_rect(g, &in)) CL_TRY(clEnqueueMarkerWithWaitList(d->ql, nw, prev, &ev));
        else if (enqueue_rect(d, buf, &in, d->ql, nw, prev, &ev)) return 1;
        d->nsplit++;
    }
    ex_cl_keep(&d->le[d->nlow & 1], ev);
    d->nlow++;
    return 0;
}

static int cl_ring(st_dev_t *d, int buf)
{
    size_t gws = 2 * (size_t)d->g->C + 2 * (size_t)d->g->R;
    CL_TRY(clSetKernelArg(d->kring, 0, sizeof(cl_mem), &d->m[buf]));
    CL_TRY(clSetKernelArg(d->kring, 1, sizeof(cl_mem), &d->m[!buf]));
    CL_TRY(clEnqueueNDRangeKernel(d->q, d->kring, 1, NULL, &gws, NULL, 0, NULL, NULL));
    return 0;
}

static int cl_finish(st_dev_t *d)
{
    CL_TRY(clFinish(d->ql));
    CL_TRY(clFinish(d->q));
    return 0;
}

/* ST-LOC-BEGIN manual */
/* h full rows at element offset off, device <-> host staging matrix. */
static int copy_rows(st_dev_t *d, int buf, long off, int to_device)
{
    size_t o = (size_t)off * d->g->es, n = (size_t)d->g->h * d->g->P * d->g->es;
    st_calls.copies++;
    if (to_device)
        CL_TRY(clEnqueueWriteBuffer(d->q, d->m[buf], CL_FALSE, o, n, d->host + o, 0, NULL, NULL));
    else
        CL_TRY(clEnqueueReadBuffer(d->q, d->m[buf], CL_FALSE, o, n, d->host + o, 0, NULL, NULL));
    return 0;
}

/* h columns at element offset off over all R rows. */
static int copy_cols(st_dev_t *d, int buf, long off, int to_device)
{
    size_t org[3] = {(size_t)off * d->g->es, 0, 0}, reg[3] = {d->g->h * d->g->es, d->g->R, 1};
    size_t pitch = (size_t)d->g->P * d->g->es;
    st_calls.copies++;
    if (to_device)
        CL_TRY(clEnqueueWriteBufferRect(d->q, d->m[buf], CL_FALSE, org, org, reg, pitch, 0, pitch, 0,
                                        d->host, 0, NULL, NULL));
    else
        CL_TRY(clEnqueueReadBufferRect(d->q, d->m[buf], CL_FALSE, org, org, reg, pitch, 0, pitch, 0,
                                       d->host, 0, NULL, NULL));
    return 0;
}

static int sync_queue(st_dev_t *d)
{
    st_calls.syncs++;
    CL_TRY(clFinish(d->q));
    return 0;
}

static int cl_exchange_manual(st_dev_t *d, int buf)
{
    const st_grid_t *g = d->g;
    for (int s = 0; s < 2; s++) { /* device -> host: the blocks to send */
        if (g->nbr[ST_ROWS][s] != MPI_PROC_NULL && copy_rows(d, buf, g->send_off[ST_ROWS][s], 0)) return 1;
        if (g->nbr[ST_COLS][s] != MPI_PROC_NULL && copy_cols(d, buf, g->send_off[ST_COLS][s], 0)) return 1;
    }
    if (sync_queue(d) || st_host_exchange(g, d->host)) return 1;
    for (int s = 0; s < 2; s++) { /* host -> device: the halos received */
        if (g->nbr[ST_ROWS][s] != MPI_PROC_NULL && copy_rows(d, buf, g->recv_off[ST_ROWS][s], 1)) return 1;
        if (g->nbr[ST_COLS][s] != MPI_PROC_NULL && copy_cols(d, buf, g->recv_off[ST_COLS][s], 1)) return 1;
    }
    if (sync_queue(d)) return 1;
    return cl_ring(d, buf);
}
/* ST-LOC-END */

static void *cl_mpi_buf(st_dev_t *d, int buf) { return (void *)d->m[buf]; }
static void *cl_queue(st_dev_t *d) { return (void *)d->q; }

static const st_backend_t backend = {
    .name = "opencl",
    .offsets_in_type = 1,
    .probe = ex_cl_probe,
    .create = cl_create,
    .destroy = cl_destroy,
    .reset = cl_reset,
    .download = cl_download,
    .step = cl_step,
    .ring = cl_ring,
    .finish = cl_finish,
    .exchange_manual = cl_exchange_manual,
    .mpi_buf = cl_mpi_buf,
    .queue = cl_queue,
    .buf_type = MPIACC_BUF_OPENCL,
};

const st_backend_t *st_opencl_backend(void) { return &backend; }
