/* SPDX-License-Identifier: BSD-3-Clause */
/* halo3d OpenCL backend: two in-order queues per rank, the main one
 * (exchange, shell) and a second one (the core under --overlap), ordered by
 * events (GPU devices preferred: the (node-local rank % count)-th; else the
 * first device, e.g. PoCL on the CPU). */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <mpiacc.h>

#include "ex_opencl.h"

#include "halo3d.h"

/* The same arithmetic as h3_host.c's step, in the same order. */
static const char *kernel_src =
    "#ifdef H3_DP\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "typedef double T;\n"
    "#else\n"
    "typedef float T;\n"
    "#endif\n"
    /* one box of the interior, array coordinates */
    "__kernel void h3_step(__global const T *a, __global T *b, int z0, int y0, int x0, int nz, int ny, int nx,\n"
    "                      int r, int X, int Y, T w)\n"
    "{\n"
    "    int x = (int)get_global_id(0), y = (int)get_global_id(1), z = (int)get_global_id(2);\n"
    "    if (x >= nx || y >= ny || z >= nz) return;\n"
    "    size_t sX = (size_t)X, sXY = (size_t)X * Y;\n"
    "    size_t i = (size_t)(z + z0) * sXY + (size_t)(y + y0) * sX + (size_t)(x + x0);\n"
    "    T s = 0;\n"
    "    for (int k = 1; k <= r; k++)\n"
    "        s = s + (((a[i - k] + a[i + k]) + (a[i - k * sX] + a[i + k * sX])) + (a[i - k * sXY] + a[i + k * sXY]));\n"
    "    b[i] = ((T)0.5 * a[i] + w * s) + (T)1;\n"
    "}\n"
    /* faces: the six faces in order f = 0..5, z slowest, x fastest (the
     * subarrays' order); unpack writes the halo boxes of faces in mask. */
    "__kernel void h3_faces(__global T *a, __global T *st, int nz, int ny, int nx, int r, int X, int Y,\n"
    "                       int unpack, int mask, int total)\n"
    "{\n"
    "    int g = (int)get_global_id(0);\n"
    "    if (g >= total) return;\n"
    "    int n[3] = {nz, ny, nx}, sub[3], f, i = g;\n"
    "    for (f = 0; f < 6; f++) {\n"
    "        sub[0] = nz, sub[1] = ny, sub[2] = nx, sub[f / 2] = r;\n"
    "        int cnt = sub[0] * sub[1] * sub[2];\n"
    "        if (i < cnt) break;\n"
    "        i -= cnt;\n"
    "    }\n"
    "    int d = f / 2, up = f % 2, c[3];\n"
    "    c[2] = i % sub[2], c[1] = i / sub[2] % sub[1], c[0] = i / (sub[2] * sub[1]);\n"
    "    for (int k = 0; k < 3; k++) c[k] += r;\n"
    "    c[d] += unpack ? (up ? n[d] : -r) : (up ? n[d] - r : 0);\n"
    "    size_t idx = ((size_t)c[0] * Y + c[1]) * X + c[2];\n"
    "    if (!unpack) st[g] = a[idx];\n"
    "    else if (mask >> f & 1) a[idx] = st[g];\n"
    "}\n";

struct h3_dev {
    const h3_grid_t *g;
    cl_context ctx;
    cl_command_queue q, ql; /* main (exchange, shell) and second (core) in-order queues */
    cl_program prog;
    cl_kernel kstep, kfaces;
    cl_mem m[3], stage[2]; /* arrays and init; device face buffers (send, receive) */
    char *host[2];         /* host face buffers (send, receive)           */
    int gpu;
    cl_event hs[2], lc[2]; /* after each shell / core (parity)            */
    long nshell, ncore;
};

static void cl_destroy(h3_dev_t *d)
{
    if (!d) return;
    if (d->ql) clFinish(d->ql);
    if (d->q) clFinish(d->q);
    for (int b = 0; b < 3; b++)
        if (d->m[b]) clReleaseMemObject(d->m[b]);
    for (int b = 0; b < 2; b++) {
        if (d->stage[b]) clReleaseMemObject(d->stage[b]);
        if (d->hs[b]) clReleaseEvent(d->hs[b]);
        if (d->lc[b]) clReleaseEvent(d->lc[b]);
        free(d->host[b]);
    }
    if (d->ql) clReleaseCommandQueue(d->ql);
    if (d->kstep) clReleaseKernel(d->kstep);
    if (d->kfaces) clReleaseKernel(d->kfaces);
    if (d->prog) clReleaseProgram(d->prog);
    if (d->q) clReleaseCommandQueue(d->q);
    if (d->ctx) clReleaseContext(d->ctx);
    free(d);
}

static int build(h3_dev_t *d, cl_device_id dev)
{
    const h3_grid_t *g = d->g;
    cl_int e;
    char log[4096];
    int a[6] = {g->n[0], g->n[1], g->n[2], g->r, g->X, g->Y};
    double w = h3_arm_weight(g->r);
    float wf = (float)w;
    if (ex_cl_build(d->ctx, dev, kernel_src, g->dp ? "-DH3_DP" : "", &d->prog, log, sizeof log) != CL_SUCCESS)
        return ex_error("OpenCL kernel build failed:\n%s", log);
    d->kstep = clCreateKernel(d->prog, "h3_step", &e);
    CL_TRY(e);
    d->kfaces = clCreateKernel(d->prog, "h3_faces", &e);
    CL_TRY(e);
    for (int k = 0; k < 6; k++) CL_TRY(clSetKernelArg(d->kfaces, 2 + k, sizeof(int), &a[k]));
    for (int k = 3; k < 6; k++) CL_TRY(clSetKernelArg(d->kstep, 5 + k, sizeof(int), &a[k])); /* r, X, Y */
    CL_TRY(clSetKernelArg(d->kstep, 11, g->es, g->dp ? (void *)&w : (void *)&wf));
    CL_TRY(clSetKernelArg(d->kfaces, 10, sizeof(int), &g->face_total));
    return 0;
}

static int cl_reset(h3_dev_t *d)
{
    d->nshell = d->ncore = 0;
    return ex_cl_reset(d->q, d->ql, d->m, d->g->elems * d->g->es);
}

static int cl_create(const h3_grid_t *g, const void *init, h3_dev_t **out)
{
    cl_device_id dev;
    cl_int e;
    size_t fbytes = (size_t)g->face_total * g->es;
    h3_dev_t *d = calloc(1, sizeof *d);
    *out = d;
    if (!d) return ex_error("out of memory");
    d->g = g;
    if (ex_cl_setup(g->local_rank, &dev, &d->gpu, &d->ctx, &d->q, &d->ql, d->m, g->elems * g->es, init)) return 1;
    for (int b = 0; b < 2; b++) {
        d->stage[b] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, fbytes, NULL, &e);
        CL_TRY(e);
        d->host[b] = calloc(1, fbytes);
        if (!d->host[b]) return ex_error("out of host memory");
    }
    if (build(d, dev)) return 1;
    return cl_reset(d);
}

static int cl_download(h3_dev_t *d, int buf, void *dst)
{
    CL_TRY(clFinish(d->ql));
    CL_TRY(clEnqueueReadBuffer(d->q, d->m[buf], CL_TRUE, 0, d->g->elems * d->g->es, dst, 0, NULL, NULL));
    return 0;
}

/* One box on queue q after the events in wait; its event in *ev (may be NULL). */
static int enqueue_box(h3_dev_t *d, int buf, const h3_box_t *bx, cl_command_queue q, cl_uint nw,
                       const cl_event *wait, cl_event *ev)
{
    size_t lws[3] = {32, 4, 1}, gws[3] = {(size_t)bx->nx, (size_t)bx->ny, (size_t)bx->nz};
    int v[6] = {bx->z0, bx->y0, bx->x0, bx->nz, bx->ny, bx->nx};
    if (bx->nx <= 0 || bx->ny <= 0 || bx->nz <= 0) {
        CL_TRY(clEnqueueMarkerWithWaitList(q, nw, nw ? wait : NULL, ev));
        return 0;
    }
    if (d->gpu)
        for (int k = 0; k < 3; k++) gws[k] = (gws[k] + lws[k] - 1) / lws[k] * lws[k];
    CL_TRY(clSetKernelArg(d->kstep, 0, sizeof(cl_mem), &d->m[buf]));
    CL_TRY(clSetKernelArg(d->kstep, 1, sizeof(cl_mem), &d->m[!buf]));
    for (int k = 0; k < 6; k++) CL_TRY(clSetKernelArg(d->kstep, 2 + k, sizeof(int), &v[k]));
    CL_TRY(clEnqueueNDRangeKernel(q, d->kstep, 3, NULL, gws, d->gpu ? lws : NULL, nw, nw ? wait : NULL, ev));
    return 0;
}

static int cl_step(h3_dev_t *d, int buf, int how)
{
    const h3_grid_t *g = d->g;
    h3_box_t all = {g->r, g->r, g->r, g->n[0], g->n[1], g->n[2]}, bx[6];
    cl_event ev = NULL;
    if (how == H3_STEP_PLAIN) return enqueue_box(d, buf, &all, d->q, 0, NULL, NULL);
    if (how == H3_STEP_CORE) { /* after the previous shell */
        cl_uint nw = d->nshell ? 1 : 0;
        if (!h3_core_box(g, &bx[0])) bx[0].nx = 0;
        if (enqueue_box(d, buf, &bx[0], d->ql, nw, nw ? &d->hs[(d->nshell - 1) & 1] : NULL, &ev)) return 1;
        ex_cl_keep(&d->lc[d->ncore++ & 1], ev);
        return 0;
    }
    /* shell: after the core before the one just enqueued; one box per kernel */
    int n = h3_shell_boxes(g, bx);
    for (int q = 0; q < n; q++) {
        cl_uint nw = q == 0 && d->ncore >= 2 ? 1 : 0;
        if (enqueue_box(d, buf, &bx[q], d->q, nw, nw ? &d->lc[(d->ncore - 2) & 1] : NULL, q == n - 1 ? &ev : NULL))
            return 1;
    }
    ex_cl_keep(&d->hs[d->nshell++ & 1], ev);
    return 0;
}

static int cl_finish(h3_dev_t *d)
{
    CL_TRY(clFinish(d->ql));
    CL_TRY(clFinish(d->q));
    return 0;
}

/* H3-LOC-BEGIN faces */
static int faces(h3_dev_t *d, int buf, int unpack)
{
    size_t l = 128, gws = (size_t)d->g->face_total;
    int mask = d->g->recv_mask;
    if (d->gpu) gws = (gws + l - 1) / l * l;
    CL_TRY(clSetKernelArg(d->kfaces, 0, sizeof(cl_mem), &d->m[buf]));
    CL_TRY(clSetKernelArg(d->kfaces, 1, sizeof(cl_mem), &d->stage[unpack]));
    CL_TRY(clSetKernelArg(d->kfaces, 8, sizeof(int), &unpack));
    CL_TRY(clSetKernelArg(d->kfaces, 9, sizeof(int), &mask));
    CL_TRY(clEnqueueNDRangeKernel(d->q, d->kfaces, 1, NULL, &gws, d->gpu ? &l : NULL, 0, NULL, NULL));
    return 0;
}

static int cl_pack(h3_dev_t *d, int buf) { return faces(d, buf, 0); }
static int cl_unpack(h3_dev_t *d, int buf) { return faces(d, buf, 1); }
/* H3-LOC-END */

/* H3-LOC-BEGIN manual */
static int cl_to_host(h3_dev_t *d)
{
    size_t n = (size_t)d->g->face_total * d->g->es;
    CL_TRY(clEnqueueReadBuffer(d->q, d->stage[0], CL_FALSE, 0, n, d->host[0], 0, NULL, NULL));
    CL_TRY(clFinish(d->q));
    return 0;
}

static int cl_to_device(h3_dev_t *d)
{
    size_t n = (size_t)d->g->face_total * d->g->es;
    CL_TRY(clEnqueueWriteBuffer(d->q, d->stage[1], CL_FALSE, 0, n, d->host[1], 0, NULL, NULL));
    return 0;
}
/* H3-LOC-END */

static void *cl_host_send(h3_dev_t *d) { return d->host[0]; }
static void *cl_host_recv(h3_dev_t *d) { return d->host[1]; }
static void *cl_mpi_buf(h3_dev_t *d, int buf) { return (void *)d->m[buf]; }
static void *cl_queue(h3_dev_t *d) { return (void *)d->q; }

static const h3_backend_t backend = {
    .name = "opencl",
    .probe = ex_cl_probe,
    .create = cl_create,
    .destroy = cl_destroy,
    .reset = cl_reset,
    .download = cl_download,
    .step = cl_step,
    .finish = cl_finish,
    .pack = cl_pack,
    .unpack = cl_unpack,
    .to_host = cl_to_host,
    .to_device = cl_to_device,
    .host_send = cl_host_send,
    .host_recv = cl_host_recv,
    .mpi_buf = cl_mpi_buf,
    .queue = cl_queue,
    .buf_type = MPIACC_BUF_OPENCL,
};

const h3_backend_t *h3_opencl_backend(void) { return &backend; }
