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

static void dispatch_learn_platform(cl_platform_id p);
static int check_released; /* MPIACC_OCL_CHECK_RELEASED=1 (see validation) */
atomic_int mpiacc_ocl_inject_xfer_failures; /* ocl_testhooks.h: mpiacc_ocl_fail_next_xfers */

/* ---- start / stop ------------------------------------------------------ */

static int ocl_init(int *present)
{
    cl_uint np = 0, total = 0;
    cl_platform_id *plats = NULL;
    cl_int e = clGetPlatformIDs(0, NULL, &np);

    mpiacc_ocl_rect_policy = mpiacc_env_enum("MPIACC_OCL_RECT"); /* auto|never|always: 0|1|2 */
    mpiacc_ocl_rect_min = (long long)mpiacc_env_size("MPIACC_OCL_RECT_MIN");
    check_released = mpiacc_env_bool("MPIACC_OCL_CHECK_RELEASED");
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
            if (nd && check_released) dispatch_learn_platform(plats[i]);
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

/*
 * Released (or never valid) cl_mem handles.
 *
 * An OpenCL runtime can only say CL_INVALID_MEM_OBJECT if the call reaches
 * it, and with an ICD loader it does not: the loader (ocl-icd, Khronos)
 * requires every cl object to begin with a pointer to its vendor's dispatch
 * table and jumps through that pointer.  For a released object that word is
 * whatever the allocator left there (glibc puts its free-list link in the
 * first word of a freed block), so clGetMemObjectInfo on a released cl_mem
 * crashes inside the loader (use after free) before the runtime is asked.
 *
 * A debugging aid, off by default (MPIACC_OCL_CHECK_RELEASED=1 turns it
 * on): it reads memory the application may already have freed, which is
 * undefined behaviour and what AddressSanitizer and valgrind rightly
 * report, so it never runs unless asked for.  Without it, a released cl_mem
 * crashes in the ICD loader, as it does in any OpenCL program.
 *
 * The heuristic, applied before any cl* call on a cl_mem the application
 * gave us: its first word must equal the dispatch pointer of an object known to
 * be alive — the platforms found at init (for a platform whose platform and
 * device objects begin with the same word, i.e. whose vendor evidently uses
 * one table for all its objects), any cl_mem this backend validated earlier
 * through the runtime (remembered below, one word per vendor table), or the
 * command queue / event of the same call.  A mismatch is reported as
 * MPIACC_ERRK_BUFFER.  When nothing is known (no qualifying platform, first
 * call, no queue, no event) the check is skipped and the runtime's own
 * validation is all there is.  Limits, by nature: it reads the first word
 * of a freed block (valgrind reports that read for a released handle); a
 * freed block already reused for another OpenCL object passes (then the
 * runtime's validation applies); memory returned to the operating system
 * would fault (cl objects are small heap blocks, which glibc keeps).  Every
 * vendor we know of (PoCL, NVIDIA, Intel, AMD, Mesa) uses one dispatch table
 * for all its objects, which is what the comparisons rely on.
 *
 * When the runtime does answer for the handle, a reference count of 0 or a
 * context that is not alive also marks it released (a runtime may keep a
 * released object's record for a while).  What nobody can detect: a handle
 * whose object was freed and whose address was handed out again for a new
 * object (a runtime may recycle handles at once) — it then names that live
 * object, and if that is a big enough cl_mem the operation proceeds on it;
 * the runtime itself cannot tell either.  test_ocl_p2p_errors allocates
 * nothing between the release and the calls, probes whether the platform
 * still accepts the released handle, and only then reports that case
 * skipped, naming the platform.
 */
#define DISPATCH_SLOTS 8
static _Atomic(uintptr_t) dispatch_seen[DISPATCH_SLOTS];

static uintptr_t first_word(const void *obj)
{
    uintptr_t w;
    memcpy(&w, obj, sizeof w);
    return w;
}

static void dispatch_remember(uintptr_t w)
{
    for (int i = 0; i < DISPATCH_SLOTS; i++) {
        uintptr_t cur = atomic_load_explicit(&dispatch_seen[i], memory_order_acquire), zero = 0;
        if (cur == w) return;
        if (cur == 0 && atomic_compare_exchange_strong(&dispatch_seen[i], &zero, w)) return;
        if (atomic_load(&dispatch_seen[i]) == w) return; /* another thread stored it */
    }
}

/* At init: a platform with a device whose platform and first device begin
 * with the same dispatch pointer contributes it. */
static void dispatch_learn_platform(cl_platform_id p)
{
    cl_device_id d = NULL;
    if (!p || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS || !d) return;
    if (first_word(p) == first_word(d)) dispatch_remember(first_word(p));
}

/* 1: the handle's first word matches a known dispatch table or nothing is
 * known; 0: it matches none of them. */
static int dispatch_plausible(const void *obj, const mpiacc_attrs_t *a)
{
    uintptr_t w = first_word(obj);
    int known = 0;
    for (int i = 0; i < DISPATCH_SLOTS; i++) {
        uintptr_t d = atomic_load_explicit(&dispatch_seen[i], memory_order_acquire);
        if (!d) break;
        if (d == w) return 1;
        known = 1;
    }
    if (a && a->has_queue && a->queue) {
        if (first_word(a->queue) == w) return 1;
        known = 1;
    }
    if (a && a->has_event && a->event) {
        if (first_word(a->event) == w) return 1;
        known = 1;
    }
    return !known;
}

int mpiacc_ocl_mem_context(cl_mem m, const mpiacc_attrs_t *a, cl_context *ctx, size_t *size)
{
    int mpi_errno = MPI_SUCCESS;
    cl_uint refs = 0;
    cl_int e;
    if (!m) MPIACC_FAIL(MPIACC_ERRK_BUFFER, "OpenCL buffer is a NULL cl_mem");
    if (check_released && !dispatch_plausible(m, a))
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object (released?): it does not "
                                        "begin with the dispatch table of any live OpenCL object",
                    (void *)m);
    e = clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof *ctx, ctx, NULL);
    if (e == CL_INVALID_MEM_OBJECT)
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object (released?): "
                                        "clGetMemObjectInfo: CL_INVALID_MEM_OBJECT", (void *)m);
    MPIACC_OCL_CALL("clGetMemObjectInfo(CL_MEM_CONTEXT)", e);
    /* A runtime that keeps a released object's record for a while may
     * still answer: a reference count of 0, or a context that is no longer
     * valid, gives it away. */
    e = clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    if (e == CL_INVALID_MEM_OBJECT || (e == CL_SUCCESS && refs == 0))
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object (released?): %s",
                    (void *)m, e == CL_SUCCESS ? "its reference count is 0" : "CL_INVALID_MEM_OBJECT");
    /* (the context is asked only when it begins with the same dispatch
     * word as the cl_mem the runtime just answered for: a live context of
     * the same vendor does) */
    if (!*ctx || (check_released && first_word(*ctx) == first_word(m) &&
                  (clGetContextInfo(*ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL) != CL_SUCCESS ||
                   refs == 0)))
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object (released?): its "
                                        "context %p is not a live OpenCL context", (void *)m, (void *)*ctx);
    if (check_released) dispatch_remember(first_word(m)); /* the runtime vouched for it */
    if (size) MPIACC_OCL_CALL("clGetMemObjectInfo(CL_MEM_SIZE)",
                              clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof *size, size, NULL));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_ocl_attr_device(const mpiacc_attrs_t *a, cl_context ctx, cl_device_id *dev)
{
    int mpi_errno = MPI_SUCCESS;
    cl_command_queue q = (cl_command_queue)a->queue;
    cl_context qctx = NULL;
    cl_int e;
    *dev = NULL;
    if (!a->has_queue) goto fn_exit;
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
    if (a->stream_order && !(a->has_queue && a->queue))
        MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_ORDER_STREAM on an OpenCL datatype without MPIACC_CL_QUEUE: no queue "
                    "to order the completion on");
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
    if (a->has_queue && a->queue) {
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
    if (!h || !a->has_queue || !a->queue) return MPI_SUCCESS; /* validate refused a missing queue */
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
};

const mpiacc_backend_t *mpiacc_opencl_backend(void) { return &ocl_table; }
int mpiacc_opencl_compiled(void) { return 1; }
