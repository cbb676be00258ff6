/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opencl/ocl_backend.c: the backend table — start/stop, device listing,
 * argument validation, dependency capture and completion tests.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocl.h"
#include "core/env.h"

pthread_mutex_t mpiacc_ocl_lock = PTHREAD_MUTEX_INITIALIZER;
int mpiacc_ocl_rect_policy;
long long mpiacc_ocl_rect_min = 64;

atomic_int mpiacc_ocl_inject_xfer_failures; /* ocl_testhooks.h: mpiacc_ocl_fail_next_xfers */

/* ---- start / stop ------------------------------------------------------ */

static int ocl_init(int *present)
{
    cl_uint np = 0, total = 0;
    cl_platform_id *plats = NULL;
    cl_int e = clGetPlatformIDs(0, NULL, &np);

    mpiacc_ocl_rect_policy = mpiacc_env_enum("MPIACC_OCL_RECT"); /* auto|never|always: 0|1|2 */
    mpiacc_ocl_rect_min = (long long)mpiacc_env_size("MPIACC_OCL_RECT_MIN");
    *present = 0;
    if (e != CL_SUCCESS || np == 0) {
        /* No ICD at all (CL_PLATFORM_NOT_FOUND_KHR): the backend is absent. */
        MPIACC_LOG(MPIACC_LOG_INFO, "OpenCL: no platform (clGetPlatformIDs: %s)",
                   e == CL_SUCCESS ? "0 platforms" : mpiacc_ocl_errname(e));
        return MPI_SUCCESS;
    }
    plats = malloc(np * sizeof *plats);
    if (!plats) return mpiacc_err(MPIACC_ERRK_NOMEM, "OpenCL: no memory for %u platforms", np);
    if (clGetPlatformIDs(np, plats, NULL) == CL_SUCCESS) {
        for (cl_uint i = 0; i < np; i++) {
            cl_uint nd = 0;
            char name[128] = "";
            clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
            if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS) nd = 0;
            MPIACC_LOG(MPIACC_LOG_INFO, "OpenCL: platform %u \"%s\": %u device(s)", i, name, nd);
            mpiacc_ocl_valid_learn_platform(plats[i]); /* what its objects begin with */
            total += nd;
        }
    }
    free(plats);
    *present = total > 0;
    if (!total) MPIACC_LOG(MPIACC_LOG_INFO, "OpenCL: platforms found but no device");
    return MPI_SUCCESS;
}

static int ocl_finalize(void)
{
    pthread_mutex_lock(&mpiacc_ocl_lock);
    mpiacc_ocl_ctx_release_all();
    mpiacc_ocl_handle_pool_release();
    pthread_mutex_unlock(&mpiacc_ocl_lock);
    mpiacc_ocl_valid_finalize();
    return MPI_SUCCESS;
}

static void append(char *out, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *out, size_t len, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (*pos >= len) return;
    va_start(ap, fmt);
    n = vsnprintf(out + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n > 0) *pos = (*pos + (size_t)n < len) ? *pos + (size_t)n : len;
}

static int ocl_describe(char *out, size_t len)
{
    cl_uint np = 0;
    cl_platform_id plats[16];
    size_t pos = 0;
    if (len) out[0] = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) np = 0;
    if (np > 16) np = 16;
    for (cl_uint i = 0; i < np; i++) {
        char name[256] = "", vendor[256] = "", version[256] = "";
        cl_device_id devs[32];
        cl_uint nd = 0;
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        clGetPlatformInfo(plats[i], CL_PLATFORM_VENDOR, sizeof vendor, vendor, NULL);
        clGetPlatformInfo(plats[i], CL_PLATFORM_VERSION, sizeof version, version, NULL);
        append(out, len, &pos, "  platform %u: %s (%s), %s\n", i, name, vendor, version);
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 32, devs, &nd) != CL_SUCCESS) nd = 0;
        if (nd > 32) nd = 32;
        for (cl_uint j = 0; j < nd; j++) {
            cl_ulong mem = 0;
            cl_device_type type = 0;
            clGetDeviceInfo(devs[j], CL_DEVICE_NAME, sizeof name, name, NULL);
            clGetDeviceInfo(devs[j], CL_DEVICE_VENDOR, sizeof vendor, vendor, NULL);
            clGetDeviceInfo(devs[j], CL_DEVICE_VERSION, sizeof version, version, NULL);
            clGetDeviceInfo(devs[j], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
            clGetDeviceInfo(devs[j], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            append(out, len, &pos, "    device %u: %s (%s), %s, %s, %.1f GiB\n", j, name, vendor,
                   version,
                   (type & CL_DEVICE_TYPE_GPU)   ? "GPU"
                   : (type & CL_DEVICE_TYPE_CPU) ? "CPU"
                                                 : "accelerator",
                   (double)mem / (1024.0 * 1024.0 * 1024.0));
        }
    }
    if (!np) append(out, len, &pos, "  no OpenCL platform\n");
    return MPI_SUCCESS;
}

/* ---- validation ---------------------------------------------------------- */

/* (a cl_mem's own check, mpiacc_ocl_mem_context, is in ocl_valid.c) */

/* The queue attribute names a queue (not MPIACC_QUEUE_NONE). */
static int real_queue(const mpiacc_attrs_t *a) { return a->has_queue && a->queue && a->queue != MPIACC_QUEUE_NONE; }

int mpiacc_ocl_attr_device(const mpiacc_attrs_t *a, cl_context ctx, cl_device_id *dev)
{
    int mpi_errno = MPI_SUCCESS;
    cl_command_queue q = (cl_command_queue)a->queue;
    cl_context qctx = NULL;
    cl_int e;
    *dev = NULL;
    if (!a->has_queue || q == MPIACC_QUEUE_NONE) goto fn_exit;
    if (!q) MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_CL_QUEUE is a NULL cl_command_queue");
    e = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
    if (e == CL_INVALID_COMMAND_QUEUE)
        MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_CL_QUEUE %p is not a valid command queue "
                                     "(clGetCommandQueueInfo: CL_INVALID_COMMAND_QUEUE)", (void *)q);
    MPIACC_OCL_CALL("clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", e);
    if (qctx != ctx)
        MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_CL_QUEUE belongs to another OpenCL context than the "
                                     "buffer (queue context %p, buffer context %p)",
                    (void *)qctx, (void *)ctx);
    MPIACC_OCL_CALL("clGetCommandQueueInfo(CL_QUEUE_DEVICE)",
                    clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof *dev, dev, NULL));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int ocl_validate(const mpiacc_attrs_t *a, void *buf)
{
    int mpi_errno = MPI_SUCCESS;
    cl_context ctx, ectx = NULL;
    cl_device_id dev;
    cl_int e;
    MPIACC_CHECK(mpiacc_ocl_mem_context((cl_mem)buf, a, &ctx, NULL));
    MPIACC_CHECK(mpiacc_ocl_attr_device(a, ctx, &dev));
    /* No silent stale data: OpenCL has no default queue, so a datatype that
     * names neither a queue nor an event gives mpiacc nothing to wait for,
     * and a kernel still writing the buffer would be sent half done.  The
     * application says which: its queue, an event, or MPIACC_QUEUE_NONE
     * (the data is complete). */
    if (!a->has_queue && !(a->has_event && a->event))
        MPIACC_FAIL(MPIACC_ERRK_ARG, "the OpenCL datatype has no MPIACC_CL_QUEUE, so mpiacc cannot know when the "
                    "cl_mem's data is ready: set MPIACC_CL_QUEUE to the in-order cl_command_queue whose work "
                    "produces or uses the data (or MPIACC_EVENT to an event), or to MPIACC_QUEUE_NONE if the "
                    "data is complete (e.g. after clFinish)");
    if (a->stream_order && !real_queue(a))
        MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_ORDER_STREAM on an OpenCL datatype without a command queue (MPIACC_CL_QUEUE "
                    "%s): no queue to order the completion on", a->has_queue ? "is MPIACC_QUEUE_NONE" : "not set");
    if (a->has_event && a->event) {
        e = clGetEventInfo((cl_event)a->event, CL_EVENT_CONTEXT, sizeof ectx, &ectx, NULL);
        if (e == CL_INVALID_EVENT)
            MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_EVENT %p is not a valid cl_event", a->event);
        MPIACC_OCL_CALL("clGetEventInfo(CL_EVENT_CONTEXT)", e);
        if (ectx != ctx)
            MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_EVENT belongs to another OpenCL context than the buffer");
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- dependencies and handles ------------------------------------------------ */

static int ocl_capture(const mpiacc_attrs_t *a, void *buf, void **dep)
{
    int mpi_errno = MPI_SUCCESS;
    cl_event evs[2] = {NULL, NULL};
    int n = 0;
    mpiacc_ocl_handle_t *h;

    *dep = NULL;
    if (real_queue(a)) {
        cl_command_queue q = (cl_command_queue)a->queue;
        cl_command_queue_properties props = 0;
        MPIACC_OCL_CALL("clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)",
                        clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
        if (!(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {
            /* In-order: everything enqueued so far must finish first; a
             * marker completes exactly then, and later work does not delay
             * it.  Flush so that the runtime starts the queue's work. */
            MPIACC_OCL_CALL("clEnqueueMarkerWithWaitList", clEnqueueMarkerWithWaitList(q, 0, NULL, &evs[n]));
            n++;
            MPIACC_OCL_CALL("clFlush", clFlush(q));
        }
    }
    if (a->has_event && a->event) {
        MPIACC_OCL_CALL("clRetainEvent", clRetainEvent((cl_event)a->event));
        evs[n++] = (cl_event)a->event;
    }
    if (!n) goto fn_exit;
    pthread_mutex_lock(&mpiacc_ocl_lock);
    h = mpiacc_ocl_handle_new();
    pthread_mutex_unlock(&mpiacc_ocl_lock);
    if (!h) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "OpenCL: no memory for a dependency handle");
    h->ev[0] = evs[0];
    h->ev[1] = evs[1];
    *dep = h;
fn_exit:
    return mpi_errno;
fn_fail:
    for (int i = 0; i < n; i++) clReleaseEvent(evs[i]);
    goto fn_exit;
}

/* Flushes the queue holding ev (none for a user event).  clFlush only
 * submits what is already enqueued; it never waits.  Needed because a
 * command held back by a user event (or by a command of another queue) is
 * submitted by some implementations only at a flush after that event has
 * completed: the OpenCL specification guarantees that a command reaches
 * the device only after a flush of its queue, and a flush issued while its
 * dependency was still pending may not count (NVIDIA's runtime has been
 * seen to need one afterwards).  Cheap when there is nothing new. */
static void flush_queue_of(cl_event ev)
{
    cl_command_queue q = NULL;
    if (ev && clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS && q) clFlush(q);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int ocl_test(void *hv, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_ocl_handle_t *h = hv;
    cl_int evst[2] = {CL_COMPLETE, CL_COMPLETE}, depst[2] = {CL_COMPLETE, CL_COMPLETE};
    *done = 1;
    if (!h || h->done) goto fn_exit;
    for (int i = 0; i < 2; i++) {
        if (!h->ev[i]) continue;
        MPIACC_OCL_CALL("clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)",
                        clGetEventInfo(h->ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof evst[i], &evst[i], NULL));
        if (evst[i] < 0)
            MPIACC_FAIL(MPIACC_ERRK_OPENCL, "OpenCL command failed: execution status %s (%d)",
                        mpiacc_ocl_errname(evst[i]), (int)evst[i]);
        if (evst[i] != CL_COMPLETE) *done = 0;
    }
    /* A failed dependency: pending, it may stay so forever; complete, the
     * platform ran the command anyway (NVIDIA's OpenCL may), on data the
     * producer never wrote.  An error either way. */
    for (int i = 0; i < 2; i++) {
        if (!h->dep[i]) continue;
        MPIACC_OCL_CALL("clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)",
                        clGetEventInfo(h->dep[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof depst[i], &depst[i],
                                       NULL));
        if (depst[i] < 0)
            MPIACC_FAIL(MPIACC_ERRK_OPENCL, "OpenCL: the data dependency failed: execution status %s (%d)",
                        mpiacc_ocl_errname(depst[i]), (int)depst[i]);
    }
    if (!*done) {
        /* Keep the work moving (at most every 200 us per handle): flush the
         * queues of the commands still pending — the user's queue behind a
         * captured marker, our internal queue.  Only pending commands: their
         * queues are alive (a released queue lives until its commands have
         * finished), a completed command's queue may be gone. */
        if (now_s() - h->flushed > 200e-6) {
            for (int i = 0; i < 2; i++) {
                if (h->dep[i] && depst[i] != CL_COMPLETE) flush_queue_of(h->dep[i]);
                if (h->ev[i] && evst[i] != CL_COMPLETE) flush_queue_of(h->ev[i]);
            }
            h->flushed = now_s();
        }
        goto fn_exit;
    }
    if (h->cx && atomic_load_explicit(&mpiacc_ocl_inject_xfer_failures, memory_order_relaxed) > 0 &&
        atomic_fetch_sub(&mpiacc_ocl_inject_xfer_failures, 1) > 0) {
        h->done = 1;
        MPIACC_FAIL(MPIACC_ERRK_OPENCL, "OpenCL: injected failure of a completed transfer (test hook)");
    }
    h->done = 1;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void ocl_release(void *hv)
{
    if (!hv) return;
    pthread_mutex_lock(&mpiacc_ocl_lock);
    mpiacc_ocl_handle_free(hv);
    pthread_mutex_unlock(&mpiacc_ocl_lock);
}

/* Staging: ordinary page-aligned host memory (the runtime copies from any
 * host pointer; the protocol's staging pool pools these by size). */
static int ocl_host_alloc(size_t bytes, void **p)
{
    *p = NULL;
    if (posix_memalign(p, 4096, bytes ? bytes : 1) != 0)
        return mpiacc_err(MPIACC_ERRK_NOMEM, "OpenCL: no memory for %zu bytes of staging", bytes);
    return MPI_SUCCESS;
}

static void ocl_host_free(void *p, size_t bytes) { free(p); }

/* Stream-ordered completion: a barrier on MPIACC_CL_QUEUE waiting for the
 * transfer's commands (on mpiacc's internal queue).  A barrier holds back
 * every later command of the queue, in-order or out-of-order alike. */
static int ocl_order_after(const mpiacc_attrs_t *a, void *hv)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_ocl_handle_t *h = hv;
    cl_event evs[2];
    cl_uint n = 0;
    if (!h || !real_queue(a)) return MPI_SUCCESS; /* validate refused a missing queue */
    for (int i = 0; i < 2; i++)
        if (h->ev[i]) evs[n++] = h->ev[i];
    if (!n) return MPI_SUCCESS;
    MPIACC_OCL_CALL("clEnqueueBarrierWithWaitList",
                    clEnqueueBarrierWithWaitList((cl_command_queue)a->queue, n, evs, NULL));
    MPIACC_OCL_CALL("clFlush", clFlush((cl_command_queue)a->queue));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static const mpiacc_backend_t ocl_table = {
    .name = "OpenCL",
    .kind = MPIACC_KIND_OPENCL,
    .init = ocl_init,
    .finalize = ocl_finalize,
    .validate = ocl_validate,
    .capture = ocl_capture,
    .pack = mpiacc_ocl_pack,
    .unpack = mpiacc_ocl_unpack,
    .pack_dev = mpiacc_ocl_pack_dev,
    .unpack_dev = mpiacc_ocl_unpack_dev,
    .test = ocl_test,
    .release = ocl_release,
    .host_alloc = ocl_host_alloc,
    .host_free = ocl_host_free,
    .type_data_free = mpiacc_ocl_blob_free,
    .describe = ocl_describe,
    .validate_span = mpiacc_ocl_validate_span,
    .order_after = ocl_order_after,
    .is_live_handle = mpiacc_ocl_valid_is_live,
};

const mpiacc_backend_t *mpiacc_opencl_backend(void) { return &ocl_table; }
int mpiacc_opencl_compiled(void) { return 1; }
