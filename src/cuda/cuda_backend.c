/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_backend.c: the CUDA backend table (MPIACC_KIND_CUDA) — init,
 * validation, dependency capture, completion tests, staging, description.
 *
 * Dependencies: capture() runs in the calling thread at MPI call time and
 * always records a pooled event, so every pack and unpack is ordered after
 * the application's work that the buffer may depend on:
 *  - MPIACC_STREAM set to a stream: the event is recorded on that stream
 *    (and only there: the application said which work matters);
 *  - otherwise (no MPIACC_STREAM, or MPIACC_STREAM = NULL): on the legacy
 *    default stream, cudaStreamLegacy.  See cu_capture() for why this
 *    also covers code built with --default-stream per-thread.
 * When MPIACC_EVENT is set, an internal stream also waits on it and records
 * a second event, which snapshots "the event as recorded now".  Packs and
 * unpacks wait for these on the GPU (cudaStreamWaitEvent), never on the
 * host.  Completion: a pack or unpack handle is done once cudaEventQuery
 * reports its final event complete (cu_test); the request pool completes a
 * receive only after that, so the data are then in device memory and
 * visible to any work the application enqueues afterwards, on any stream.
 * Devices: the stream's device, else MPIACC_DEVICE, else the current one;
 * the device is made current for the call and restored afterwards.
 * The library links the static CUDA runtime: without a driver,
 * cudaGetDeviceCount fails and the backend reports no device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h> /* driver API types only */

#include "cuda_internal.h"
#include "cuda_ipc.h"
#include "core/env.h"
#include "core/backend_ipc.h"
#include "core/backend_coll.h"

/* The driver's cuStreamQuery, when it can be had: the dependency test of a
 * message on a known non-blocking stream.  Measured inside an MPI ping-pong
 * on an H200 under MPS, one call adds 1.2 us to the one-way time where the
 * runtime's cudaStreamQuery adds 2.6 us (the runtime's own per-call work,
 * paid with cold caches between messages). */
typedef CUresult (*stream_query_fn)(CUstream);
typedef CUresult (*event_query_fn)(CUevent);
static stream_query_fn drv_stream_query;
static event_query_fn drv_event_query; /* the same for completion tests (cu_test) */

static int cu_init(int *present)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    *present = 0;
    if (e != cudaSuccess || n <= 0) {
        MPIACC_LOG(MPIACC_LOG_INFO, "CUDA: no device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        cudaGetLastError();
        return MPI_SUCCESS;
    }
    if (n > MPIACC_CUDA_MAXDEV) {
        MPIACC_LOG(MPIACC_LOG_WARN, "CUDA: %d devices, using the first %d", n, MPIACC_CUDA_MAXDEV);
        n = MPIACC_CUDA_MAXDEV;
    }
    mpiacc_cuda_pool_init();
    mpiacc_cuda_ipc_init();
    drv_stream_query = (stream_query_fn)mpiacc_cuda_drv_symbol("cuStreamQuery");
    drv_event_query = (event_query_fn)mpiacc_cuda_drv_symbol("cuEventQuery");
    mpiacc_cuda_ndev = n;
    mpiacc_cuda_mode = mpiacc_env_enum("MPIACC_CUDA_PACK"); /* auto|oneshot|device|memcpy2d: MPIACC_CUDA_MODE_* */
    mpiacc_cuda_force_generic = mpiacc_env_bool("MPIACC_CUDA_GENERIC");
    *present = 1;
    return MPI_SUCCESS;
}

static int cu_finalize(void)
{
    if (mpiacc_cuda_ndev > 0) {
        mpiacc_cuda_sync_finalize();
        mpiacc_cuda_ipc_finalize();
        mpiacc_cuda_pool_finalize();
    }
    mpiacc_cuda_model_reset();
    mpiacc_cuda_ndev = 0;
    return MPI_SUCCESS;
}

/* The attribute checks (validate and facts share them): a valid
 * MPIACC_DEVICE, a non-NULL MPIACC_EVENT, a usable MPIACC_STREAM on
 * MPIACC_DEVICE's device; *sdev, *nb: the stream's device and whether it is
 * non-blocking (-1, 0 without a stream). */
static int check_attrs(const mpiacc_attrs_t *a, int *sdev, int *nb)
{
    int mpi_errno = MPI_SUCCESS;
    unsigned fl = 0;
    *sdev = -1;
    *nb = 0;
    if (a->has_device && (a->device < 0 || a->device >= mpiacc_cuda_ndev))
        MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_DEVICE %d is not a valid CUDA device ordinal (%d devices)", a->device,
                    mpiacc_cuda_ndev);
    if (a->has_event && !a->event) MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_EVENT is NULL (not a cudaEvent_t)");
    if (a->has_stream && a->stream) {
        cudaError_t e = cudaStreamGetDevice((cudaStream_t)a->stream, sdev);
        if (e == cudaSuccess && (cudaStream_t)a->stream != cudaStreamLegacy &&
            (cudaStream_t)a->stream != cudaStreamPerThread)
            e = cudaStreamGetFlags((cudaStream_t)a->stream, &fl);
        if (e != cudaSuccess) {
            cudaGetLastError();
            MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_STREAM is not a usable CUDA stream: %s (%s)", cudaGetErrorName(e),
                        cudaGetErrorString(e));
        }
        *nb = (fl & cudaStreamNonBlocking) != 0;
        if (a->has_device && *sdev != a->device)
            MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_DEVICE %d differs from the device %d of MPIACC_STREAM", a->device,
                        *sdev);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int cu_validate(const mpiacc_attrs_t *a, void *buf)
{
    int sdev, nb;
    (void)buf;
    return a->checked ? MPI_SUCCESS : check_attrs(a, &sdev, &nb);
}

/* Once per datatype and attribute change: the checks above, and what the
 * dependency test needs of the stream (cu_dep_ready). */
static int cu_facts(mpiacc_attrs_t *a)
{
    int sdev = -1, nb = 0, mpi_errno = check_attrs(a, &sdev, &nb);
    if (mpi_errno == MPI_SUCCESS) {
        a->checked = 1;
        a->stream_nb = (unsigned)nb;
        a->stream_dev = sdev;
    }
    return mpi_errno;
}

/*
 * capture(): the data dependency of a call, recorded on MPIACC_STREAM, or,
 * without one, the "default stream" dependency:
 * The event is recorded on cudaStreamLegacy explicitly (the library's own
 * notion of the NULL handle does not matter then).  Recording is an action
 * on the legacy default stream, and such an action first waits for all
 * prior work of every blocking stream of the context (CUDA runtime
 * documentation, "Stream synchronization behavior": the legacy stream
 * synchronises with all streams of the context except those created with
 * cudaStreamNonBlocking).  The per-thread default stream of every thread is
 * a blocking stream ("not a non-blocking stream ... will synchronize with
 * the legacy default stream").  So this one event completes only after:
 *  - work on the legacy default stream (code built with the default
 *    --default-stream legacy: cudaMemcpy from pageable memory whose DMA is
 *    still in flight when it returns, cudaMemset, kernel<<<g, b>>>...);
 *  - work on the per-thread default stream of this thread and of every
 *    other thread (code built with --default-stream per-thread, or passing
 *    cudaStreamPerThread);
 *  - work on streams created with cudaStreamCreate (blocking).
 * A record on cudaStreamPerThread would add nothing: it orders only after
 * the calling thread's per-thread stream (and, that stream being blocking,
 * after the legacy stream), a subset of the above.  Work on non-blocking
 * streams is not covered: that is what MPIACC_STREAM / MPIACC_EVENT are for.
 * The record waits for nothing on the host.  It is refused while another
 * thread captures a CUDA graph in cudaStreamCaptureModeGlobal (legacy-stream
 * work is illegal then): the call fails with the CUDA error.
 */
static int cu_capture(const mpiacc_attrs_t *a, void *buf, void **dep)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0;
    mpiacc_cuda_h_t *h = NULL;
    (void)buf;
    *dep = NULL;
    MPIACC_CHECK(mpiacc_cuda_resolve_device(a, &dev));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    entered = 1;
    MPIACC_CHECK(mpiacc_cuda_handle_get(dev, &h));
    if (a->has_stream && a->stream && (cudaStream_t)a->stream != cudaStreamLegacy &&
        (cudaStream_t)a->stream != cudaStreamPerThread && !(a->has_event && a->event) &&
        mpiacc_cuda_ipcv(MPIACC_CUDA_IPCV_CAPQ)) {
        /* IPCV_CAPQ: a non-blocking stream idle now means everything the call
         * depends on is written.  Blocking streams and the special handles
         * keep the record, whose implicit ordering after the legacy stream
         * (documented above) a query of the stream alone would not give. */
        unsigned fl = 0;
        cudaError_t e = cudaStreamGetFlags((cudaStream_t)a->stream, &fl);
        if (e == cudaSuccess) e = (fl & cudaStreamNonBlocking) ? cudaStreamQuery((cudaStream_t)a->stream)
                                                               : cudaErrorNotReady;
        if (e == cudaSuccess) {
            MPIACC_CUDA_IPCV_USED(2);
            h->done = 1;
            *dep = h;
            goto fn_exit;
        }
        if (e != cudaErrorNotReady) cudaGetLastError(); /* the record below decides (and reports) */
    }
    MPIACC_CHECK(mpiacc_cuda_handle_record(h, a->has_stream && a->stream ? (cudaStream_t)a->stream
                                                                         : cudaStreamLegacy));
    if (a->has_event && a->event) {
        cudaStream_t st;
        MPIACC_CHECK(mpiacc_cuda_stream_get(dev, &h->sidx));
        st = mpiacc_cuda_devs[dev].streams[h->sidx];
        MPIACC_CUDA_CHECK(cudaStreamWaitEvent(st, (cudaEvent_t)a->event, 0));
        MPIACC_CHECK(mpiacc_cuda_handle_record(h, st));
    }
    *dep = h;
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    mpiacc_cuda_handle_abandon(h, NULL); /* an event that failed to record must not be synchronised on */
    goto fn_exit;
}

static int cu_test(void *hv, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_h_t *h = hv;
    *done = 1;
    if (!h || h->done) goto fn_exit;
    if (h->fslot >= 0) { /* IPCV_FLAG: the flag the stream writes, no event */
        MPIACC_CHECK(mpiacc_cuda_flag_test(h, done));
        if (!*done) goto fn_exit;
    }
    for (int i = 0; i < h->nev; i++) {
        cudaError_t e;
        if (drv_event_query) { /* the driver's answer, as the runtime's */
            CUresult r = drv_event_query((CUevent)h->ev[i]);
            e = r == CUDA_SUCCESS ? cudaSuccess : r == CUDA_ERROR_NOT_READY ? cudaErrorNotReady : cudaEventQuery(h->ev[i]);
        } else {
            e = cudaEventQuery(h->ev[i]);
        }
        if (e == cudaErrorNotReady) {
            *done = 0;
            goto fn_exit;
        }
        if (e != cudaSuccess) {
            *done = 0;
            MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA: cudaEventQuery failed: %s (%s)", cudaGetErrorName(e),
                        cudaGetErrorString(e));
        }
    }
    mpiacc_cuda_handle_finish(h);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void cu_release(void *h) { mpiacc_cuda_handle_put(h); }

static int cu_host_alloc(size_t bytes, void **p) { return mpiacc_cuda_host_alloc(bytes, p); }

static void cu_host_free(void *p, size_t bytes) { mpiacc_cuda_host_free(p, bytes); }

static int cu_describe(char *out, size_t len)
{
    int n = 0, rt = 0, drv = 0;
    size_t off = 0;
    if (!out || !len) return MPI_SUCCESS;
    out[0] = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    off += (size_t)snprintf(out + off, len - off, "  CUDA runtime %d.%d (static), driver %d.%d\n", rt / 1000,
                            rt % 1000 / 10, drv / 1000, drv % 1000 / 10);
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    for (int i = 0; i < n && off < len; i++) {
        struct cudaDeviceProp p;
        char bus[32] = "?";
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
        cudaDeviceGetPCIBusId(bus, (int)sizeof bus, i);
        off += (size_t)snprintf(out + off, len - off,
                                "  device %d: %s, compute capability %d.%d, %.1f GiB, %d SMs, PCI %s\n", i, p.name,
                                p.major, p.minor, (double)p.totalGlobalMem / (1 << 30), p.multiProcessorCount, bus);
    }
    if (off < len) {
        off += (size_t)snprintf(out + off, len - off, "  pack mode: %s\n",
                 mpiacc_cuda_mode == MPIACC_CUDA_MODE_ONESHOT    ? "oneshot"
                 : mpiacc_cuda_mode == MPIACC_CUDA_MODE_DEVICE   ? "device"
                 : mpiacc_cuda_mode == MPIACC_CUDA_MODE_MEMCPY2D ? "memcpy2d"
                                                                 : "auto (model measured at first use)");
    }
    if (off < len) mpiacc_cuda_coll.describe(out + off, len - off); /* the NCCL found, or why none */
    return MPI_SUCCESS;
}

/* Stream-ordered completion: MPIACC_STREAM (else the legacy default
 * stream of the transfer's device) waits GPU-side for the transfer's
 * events (cudaStreamWaitEvent takes the event's state now: the pooled
 * events may be recorded again later). */
static int cu_order_after(const mpiacc_attrs_t *a, void *hv)
{
    int mpi_errno = MPI_SUCCESS, old = -1;
    mpiacc_cuda_h_t *h = hv;
    cudaStream_t st = a->has_stream && a->stream ? (cudaStream_t)a->stream : cudaStreamLegacy;
    /* no shortcut on h->nev == 0: a handle completed through a flag (IPCV_FLAG,
     * XFLAG) has no event until mpiacc_cuda_handle_wait records one */
    if (!h || h->done) return MPI_SUCCESS;
    MPIACC_CHECK(mpiacc_cuda_dev_enter(h->dev, &old));
    mpi_errno = mpiacc_cuda_handle_wait(st, h);
    mpiacc_cuda_dev_leave(h->dev, old);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The device protocol's check at the call: is the dependency met now?
 * MPIACC_EVENT: cudaEventQuery of it.  A non-blocking MPIACC_STREAM: one
 * cudaStreamQuery (0.3 us measured on an H100).  The default-stream rule or
 * a blocking stream: a pooled event recorded where cu_capture records its
 * own and queried at once (0.7-0.95 us): it completes after what the
 * capture's would.  Any error: not ready (the pool's capture reports it). */
static int cu_dep_ready(const mpiacc_attrs_t *a, void *buf, int *ready)
{
    int dev = -1, old = -1, done = 0;
    cudaStream_t st = a->has_stream && a->stream ? (cudaStream_t)a->stream : cudaStreamLegacy;
    mpiacc_cuda_h_t *h = NULL;
    cudaError_t e;
    (void)buf;
    *ready = 0;
    if (a->has_event && a->event) {
        e = cudaEventQuery((cudaEvent_t)a->event);
        if (e != cudaSuccess) goto fn_exit;
    }
    if (a->checked && a->stream_nb) { /* known non-blocking (cu_facts): one query */
        *ready = drv_stream_query ? drv_stream_query((CUstream)st) == CUDA_SUCCESS : cudaStreamQuery(st) == cudaSuccess;
        goto fn_exit;
    }
    if (st != cudaStreamLegacy && st != cudaStreamPerThread && !a->checked) {
        unsigned fl = 0;
        e = cudaStreamGetFlags(st, &fl);
        if (e == cudaSuccess && (fl & cudaStreamNonBlocking)) {
            *ready = cudaStreamQuery(st) == cudaSuccess;
            goto fn_exit;
        }
        if (e != cudaSuccess) goto fn_exit;
    }
    if (mpiacc_cuda_enter_call_device(a, NULL, &dev, &old) != MPI_SUCCESS) goto fn_exit;
    if (mpiacc_cuda_handle_get(dev, &h) == MPI_SUCCESS) {
        if (mpiacc_cuda_handle_record(h, st) == MPI_SUCCESS && cu_test(h, &done) == MPI_SUCCESS) *ready = done;
        mpiacc_cuda_handle_put(h);
    }
    mpiacc_cuda_dev_leave(dev, old);
fn_exit:
    if (!*ready) cudaGetLastError(); /* a non-sticky error of a query is the pool's to report */
    return MPI_SUCCESS;
}

/* Device staging of the device protocol: a pooled device buffer
 * (cuda_pool.c) on the call's device; the token is the buffer. */
static int cu_dev_staging_get(const mpiacc_attrs_t *a, size_t bytes, void **p, size_t *cap, void **tok)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0;
    mpiacc_cuda_buf_t *b = NULL;
    *p = *tok = NULL;
    *cap = 0;
    MPIACC_CHECK(mpiacc_cuda_enter_call_device(a, NULL, &dev, &old));
    entered = 1;
    MPIACC_CHECK(mpiacc_cuda_buf_get_ipc(dev, bytes ? bytes : 1, &b));
    *p = b->p;
    *cap = (size_t)1 << b->cls;
    *tok = b;
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void cu_dev_staging_put(void *tok) { mpiacc_cuda_buf_put(tok); }

static const mpiacc_backend_t cuda_backend = {
    .name = "CUDA",
    .kind = MPIACC_KIND_CUDA,
    .init = cu_init,
    .finalize = cu_finalize,
    .validate = cu_validate,
    .facts = cu_facts,
    .capture = cu_capture,
    .pack = mpiacc_cuda_pack,
    .unpack = mpiacc_cuda_unpack,
    .xfer_many = mpiacc_cuda_xfer_many,
    .pack_dev = mpiacc_cuda_pack_dev,
    .unpack_dev = mpiacc_cuda_unpack_dev,
    .test = cu_test,
    .release = cu_release,
    .host_alloc = cu_host_alloc,
    .host_free = cu_host_free,
    .type_data_free = mpiacc_cuda_blob_free,
    .describe = cu_describe,
    .ipc = &mpiacc_cuda_ipc,
    .coll = &mpiacc_cuda_coll,
    .classify = mpiacc_cuda_classify,
    .order_after = cu_order_after,
    .dep_ready = cu_dep_ready,
    .dev_staging_get = cu_dev_staging_get,
    .dev_staging_put = cu_dev_staging_put,
};

const mpiacc_backend_t *mpiacc_cuda_backend(void) { return &cuda_backend; }

int mpiacc_cuda_compiled(void) { return 1; }
