/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opencl/ocl_ctx.c: what the backend keeps per OpenCL context (program,
 * kernels, internal queues, device temporaries), the datatype blob cache
 * and the handle pool.  Callers hold mpiacc_ocl_lock unless said otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "ocl.h"

static mpiacc_ocl_ctx_t *ctx_list;
static mpiacc_ocl_handle_t *handle_free_list;
static unsigned queue_rr; /* round robin when every queue is busy */

static const int ws_of[MPIACC_OCL_NWS] = {1, 2, 4, 8, 16};

int mpiacc_ocl_ctx_get(cl_context ctx, mpiacc_ocl_ctx_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_ocl_ctx_t *cx;
    cl_device_type type = 0;

    for (cx = ctx_list; cx; cx = cx->next)
        if (cx->ctx == ctx) goto fn_exit;
    cx = calloc(1, sizeof *cx);
    if (!cx) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "OpenCL: no memory for a context record");
    MPIACC_OCL_CALL("clGetContextInfo(CL_CONTEXT_DEVICES)",
                    clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof cx->dev0, &cx->dev0, NULL));
    MPIACC_OCL_CALL("clGetDeviceInfo(CL_DEVICE_TYPE)",
                    clGetDeviceInfo(cx->dev0, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    cx->dev0_is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    MPIACC_OCL_CALL("clRetainContext", clRetainContext(ctx));
    cx->ctx = ctx;
    cx->next = ctx_list;
    ctx_list = cx;
fn_exit:
    *out = cx;
    return mpi_errno;
fn_fail:
    free(cx);
    cx = NULL;
    goto fn_exit;
}

enum { BUILD_TRIES = 3 }; /* mpiacc_ocl_ctx_program */

int mpiacc_ocl_ctx_program(mpiacc_ocl_ctx_t *cx)
{
    int mpi_errno = MPI_SUCCESS;
    const char *src = mpiacc_ocl_kernel_source;
    cl_program prog = NULL;
    cl_int e;
    char name[32];
    size_t wg = 0;

    if (cx->prog) goto fn_exit;
    /* PoCL, its kernel cache cold, now and then fails a build (with an
     * empty log) while other processes compile the same program: a failed
     * build is tried again with a new program, BUILD_TRIES builds in all. */
    for (int t = 1;; t++) {
        char log[2048] = "";
        prog = clCreateProgramWithSource(cx->ctx, 1, &src, NULL, &e);
        MPIACC_OCL_CALL("clCreateProgramWithSource", e);
        e = clBuildProgram(prog, 0, NULL, "-cl-std=CL1.2", NULL, NULL);
        if (e == CL_SUCCESS) break;
        clGetProgramBuildInfo(prog, cx->dev0, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        if (t == BUILD_TRIES) {
            MPIACC_LOG(MPIACC_LOG_WARN, "OpenCL: building the pack kernels failed:\n%s", log);
            MPIACC_FAIL(MPIACC_ERRK_OPENCL, "clBuildProgram failed: %s (%d): %.300s", mpiacc_ocl_errname(e),
                        (int)e, log);
        }
        MPIACC_LOG(MPIACC_LOG_INFO, "OpenCL: building the pack kernels failed (%s, build %d of %d): again",
                   mpiacc_ocl_errname(e), t, BUILD_TRIES);
        clReleaseProgram(prog);
        prog = NULL;
    }
    for (int i = 0; i < MPIACC_OCL_NWS; i++) {
        snprintf(name, sizeof name, "mpiacc_pack_%d", ws_of[i]);
        cx->kpack[i] = clCreateKernel(prog, name, &e);
        MPIACC_OCL_CALL("clCreateKernel", e);
        snprintf(name, sizeof name, "mpiacc_unpack_%d", ws_of[i]);
        cx->kunpack[i] = clCreateKernel(prog, name, &e);
        MPIACC_OCL_CALL("clCreateKernel", e);
    }
    MPIACC_OCL_CALL("clGetKernelWorkGroupInfo",
                    clGetKernelWorkGroupInfo(cx->kpack[3], cx->dev0, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg,
                                             &wg, NULL));
    cx->wg = wg < 256 ? (wg ? wg : 1) : 256;
    cx->prog = prog;
    MPIACC_LOG(MPIACC_LOG_DEBUG, "OpenCL: pack kernels built for context %p (work-group %zu)",
               (void *)cx->ctx, cx->wg);
fn_exit:
    return mpi_errno;
fn_fail:
    for (int i = 0; i < MPIACC_OCL_NWS; i++) {
        if (cx->kpack[i]) clReleaseKernel(cx->kpack[i]);
        if (cx->kunpack[i]) clReleaseKernel(cx->kunpack[i]);
        cx->kpack[i] = cx->kunpack[i] = NULL;
    }
    if (prog) clReleaseProgram(prog);
    goto fn_exit;
}

int mpiacc_ocl_queue_pick(mpiacc_ocl_ctx_t *cx, cl_device_id dev, mpiacc_ocl_queue_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_ocl_queue_t *mine[MPIACC_OCL_MAXQ];
    int n = 0;
    cl_int e;

    *out = NULL;
    if (!dev) dev = cx->dev0;
    for (int i = 0; i < cx->nqueues; i++) {
        mpiacc_ocl_queue_t *qs = &cx->queues[i];
        cl_int st = CL_COMPLETE;
        if (qs->dev != dev) continue;
        mine[n++] = qs;
        if (qs->last && clGetEventInfo(qs->last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                                       NULL) != CL_SUCCESS)
            st = CL_QUEUED;
        if (st == CL_COMPLETE || st < 0) {
            *out = qs; /* idle: nothing we enqueued there is pending */
            goto fn_exit;
        }
    }
    if (cx->nqueues < MPIACC_OCL_MAXQ) {
        mpiacc_ocl_queue_t *qs = &cx->queues[cx->nqueues];
        qs->q = clCreateCommandQueue(cx->ctx, dev, 0, &e);
        MPIACC_OCL_CALL("clCreateCommandQueue", e);
        qs->dev = dev;
        qs->last = NULL;
        cx->nqueues++;
        *out = qs;
        goto fn_exit;
    }
    if (!n) MPIACC_FAIL(MPIACC_ERRK_OPENCL, "OpenCL: no internal queue left for device %p", (void *)dev);
    *out = mine[queue_rr++ % (unsigned)n];
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_ocl_queue_enqueued(mpiacc_ocl_queue_t *qs, cl_event ev)
{
    int mpi_errno = MPI_SUCCESS;
    MPIACC_OCL_CALL("clRetainEvent", clRetainEvent(ev));
    if (qs->last) clReleaseEvent(qs->last);
    qs->last = ev;
    MPIACC_OCL_CALL("clFlush", clFlush(qs->q));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_ocl_tmp_get(mpiacc_ocl_ctx_t *cx, size_t bytes, mpiacc_ocl_tmp_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_ocl_tmp_t **best = NULL, *t = NULL;
    size_t want = 4096;
    cl_int e;

    while (want < bytes) want *= 2;
    /* Smallest pooled buffer that fits. */
    for (mpiacc_ocl_tmp_t **pp = &cx->tmp_free; *pp; pp = &(*pp)->next)
        if ((*pp)->bytes >= want && (!best || (*pp)->bytes < (*best)->bytes)) best = pp;
    if (best) {
        t = *best;
        *best = t->next;
        t->next = NULL;
        goto fn_exit;
    }
    t = calloc(1, sizeof *t);
    if (!t) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "OpenCL: no memory for a temporary record");
    t->mem = clCreateBuffer(cx->ctx, CL_MEM_READ_WRITE, want, NULL, &e);
    MPIACC_OCL_CALL("clCreateBuffer (pack temporary)", e);
    t->bytes = want;
fn_exit:
    *out = t;
    return mpi_errno;
fn_fail:
    free(t);
    t = NULL;
    goto fn_exit;
}

void mpiacc_ocl_tmp_put(mpiacc_ocl_ctx_t *cx, mpiacc_ocl_tmp_t *t)
{
    if (!t) return;
    t->next = cx->tmp_free;
    cx->tmp_free = t;
}

/* ---- datatype blobs ------------------------------------------------------ */

typedef struct blob_entry {
    struct blob_entry *next;
    cl_context ctx;
    cl_mem mem;
} blob_entry_t;

int mpiacc_ocl_blob_get(mpiacc_ocl_ctx_t *cx, const mpiacc_pack_type_t *tc, cl_mem *out)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_pack_type_t *t = tc;
    blob_entry_t *b, *head;
    cl_int e;

    *out = NULL;
    head = mpiacc_pack_slot_get(t, MPIACC_KIND_OPENCL);
    for (b = head; b; b = b->next)
        if (b->ctx == cx->ctx) {
            *out = b->mem;
            goto fn_exit;
        }
    if (!t->blob || !t->blob_bytes) MPIACC_FAIL(MPIACC_ERRK_INTERN, "datatype has no traversal blob");
    b = calloc(1, sizeof *b);
    if (!b) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "OpenCL: no memory for a blob record");
    /* COPY_HOST_PTR: copied at creation, no queue needed. */
    b->mem = clCreateBuffer(cx->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, t->blob_bytes, t->blob, &e);
    if (e != CL_SUCCESS) {
        free(b);
        MPIACC_OCL_CALL("clCreateBuffer (datatype blob)", e);
    }
    b->ctx = cx->ctx;
    b->next = head;
    /* The list only changes under mpiacc_ocl_lock, so this cannot fail. */
    if (!mpiacc_pack_slot_set(t, MPIACC_KIND_OPENCL, head, b)) {
        clReleaseMemObject(b->mem);
        free(b);
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "OpenCL: the datatype's blob list changed under the lock");
    }
    *out = b->mem;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_ocl_blob_free(void *data)
{
    blob_entry_t *b, *nb;
    pthread_mutex_lock(&mpiacc_ocl_lock);
    for (b = data; b; b = nb) {
        nb = b->next;
        /* OpenCL frees it once the kernels using it have finished. */
        clReleaseMemObject(b->mem);
        free(b);
    }
    pthread_mutex_unlock(&mpiacc_ocl_lock);
}

/* ---- handles ---------------------------------------------------------------- */

mpiacc_ocl_handle_t *mpiacc_ocl_handle_new(void)
{
    mpiacc_ocl_handle_t *h = handle_free_list;
    if (h) {
        handle_free_list = h->next;
        h->next = NULL;
        return h;
    }
    return calloc(1, sizeof *h);
}

/* Whether one of the events failed (negative execution status). */
static int any_failed(const cl_event *ev, int n)
{
    for (int i = 0; i < n; i++) {
        cl_int st = CL_COMPLETE;
        if (ev[i] && clGetEventInfo(ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS &&
            st < 0)
            return 1;
    }
    return 0;
}

void mpiacc_ocl_handle_free(mpiacc_ocl_handle_t *h)
{
    if (h->tmp && !h->done) {
        if (any_failed(h->dep, 2) || any_failed(h->ev, 2)) {
            /* A dependency failed: the commands may never run (a runtime
             * may keep them queued forever), so do not wait for them; the
             * temporary is not reused but released (OpenCL deletes it once
             * no enqueued command uses it). */
            clReleaseMemObject(h->tmp->mem);
            free(h->tmp);
            h->tmp = NULL;
        } else {
            /* Released before completion (cancel, error path): the
             * temporary cannot be reused while the device may still touch
             * it. */
            for (int i = 0; i < 2; i++)
                if (h->ev[i]) clWaitForEvents(1, &h->ev[i]);
        }
    }
    for (int i = 0; i < 2; i++) {
        if (h->ev[i]) clReleaseEvent(h->ev[i]);
        if (h->dep[i]) clReleaseEvent(h->dep[i]);
    }
    if (h->tmp) mpiacc_ocl_tmp_put(h->cx, h->tmp);
    memset(h, 0, sizeof *h);
    h->next = handle_free_list;
    handle_free_list = h;
}

void mpiacc_ocl_handle_pool_release(void)
{
    while (handle_free_list) {
        mpiacc_ocl_handle_t *h = handle_free_list;
        handle_free_list = h->next;
        free(h);
    }
}

void mpiacc_ocl_ctx_release_all(void)
{
    while (ctx_list) {
        mpiacc_ocl_ctx_t *cx = ctx_list;
        ctx_list = cx->next;
        for (int i = 0; i < cx->nqueues; i++) {
            /* No operation is pending at finalize, so the last command is
             * normally complete.  Wait for it a bounded time only: a
             * clFinish here was seen to block forever on NVIDIA's OpenCL
             * after the application released its own context. */
            if (cx->queues[i].last) {
                struct timespec t0, t;
                cl_int st = CL_QUEUED;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                do {
                    if (clGetEventInfo(cx->queues[i].last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                                       NULL) != CL_SUCCESS)
                        break;
                    clock_gettime(CLOCK_MONOTONIC, &t);
                } while (st > CL_COMPLETE && (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000000000L);
                if (st > CL_COMPLETE)
                    MPIACC_LOG(MPIACC_LOG_WARN, "OpenCL: an internal queue still has work at MPI_Finalize");
                clReleaseEvent(cx->queues[i].last);
            }
            clReleaseCommandQueue(cx->queues[i].q);
        }
        for (int i = 0; i < MPIACC_OCL_NWS; i++) {
            if (cx->kpack[i]) clReleaseKernel(cx->kpack[i]);
            if (cx->kunpack[i]) clReleaseKernel(cx->kunpack[i]);
        }
        if (cx->prog) clReleaseProgram(cx->prog);
        while (cx->tmp_free) {
            mpiacc_ocl_tmp_t *t = cx->tmp_free;
            cx->tmp_free = t->next;
            clReleaseMemObject(t->mem);
            free(t);
        }
        clReleaseContext(cx->ctx);
        free(cx);
    }
}
