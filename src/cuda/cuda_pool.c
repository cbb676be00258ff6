/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_pool.c: CUDA backend resources — per-device setup, internal streams
 * (non-blocking, handed out least-busy first so independent operations do
 * not queue behind one another), events (cudaEventDisableTiming), handles,
 * device temp buffers (power-of-two classes) and the registry of pinned
 * mapped staging memory (device copies of datatype blobs: cuda_blob.c).
 *
 * Locking: mpiacc_cuda_lock guards the lists and counters only; no CUDA call
 * that may allocate, synchronise or wait is made with it held (streams,
 * events, device memory and blob uploads are made outside it and then
 * published under it; a thread that lost a race frees its spare copy
 * afterwards).  Device setup runs once per device under its own lock,
 * setup_lock, which nothing on the hot path takes once the device is ready.
 * Finalize (single-threaded by MPI's rules) is the exception.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

pthread_mutex_t mpiacc_cuda_lock = PTHREAD_MUTEX_INITIALIZER;
int mpiacc_cuda_ndev;
int mpiacc_cuda_mode;
int mpiacc_cuda_force_generic;
mpiacc_cuda_dev_t mpiacc_cuda_devs[MPIACC_CUDA_MAXDEV];

static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t freestream[MPIACC_CUDA_MAXDEV]; /* ordered frees of blobs */
static mpiacc_cuda_h_t *hfree, *hall;

typedef struct pinned { void *p; size_t bytes; } pinned_t;
static pinned_t *pinned;
static int npinned, cappinned;


#define LOCK() pthread_mutex_lock(&mpiacc_cuda_lock)
#define UNLOCK() pthread_mutex_unlock(&mpiacc_cuda_lock)

int mpiacc_cuda_err(const char *call, cudaError_t e)
{
    return mpiacc_err(MPIACC_ERRK_CUDA, "CUDA: %s failed: %s (%s)", call, cudaGetErrorName(e),
                      cudaGetErrorString(e));
}

/* ---- devices -------------------------------------------------------- */

int mpiacc_cuda_resolve_device(const mpiacc_attrs_t *a, int *dev)
{
    int mpi_errno = MPI_SUCCESS;
    cudaError_t e;
    if (a && a->has_stream && a->stream && a->checked && a->stream_dev >= 0) {
        *dev = a->stream_dev; /* established once (cuda_backend.c, cu_facts) */
    } else if (a && a->has_stream && a->stream) {
        e = cudaStreamGetDevice((cudaStream_t)a->stream, dev);
        if (e != cudaSuccess)
            MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_STREAM is not a usable CUDA stream: cudaStreamGetDevice: %s (%s)",
                        cudaGetErrorName(e), cudaGetErrorString(e));
    } else if (a && a->has_device) {
        *dev = a->device;
    } else {
        MPIACC_CUDA_CHECK(cudaGetDevice(dev));
    }
    if (*dev < 0 || *dev >= mpiacc_cuda_ndev || *dev >= MPIACC_CUDA_MAXDEV)
        MPIACC_FAIL(MPIACC_ERRK_ARG, "CUDA device ordinal %d is invalid (%d devices)", *dev, mpiacc_cuda_ndev);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* First use of a device (dev current, setup_lock held). */
static int dev_setup(int dev)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
    int v = 0, lo = 0;
    MPIACC_CUDA_CHECK(cudaDeviceGetAttribute(&D->nsm, cudaDevAttrMultiProcessorCount, dev));
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess) v = 0;
    D->mempools = v;
    MPIACC_CUDA_CHECK(cudaStreamCreateWithFlags(&D->service, cudaStreamNonBlocking));
    MPIACC_CUDA_CHECK(cudaStreamCreateWithFlags(&freestream[dev], cudaStreamNonBlocking));
    /* Halo work first: the work streams (packs, unpacks, copies of
     * messages) take the device's greatest priority, so that a message's
     * pack or unpack is scheduled ahead of the application's bulk kernels
     * (an interior update overlapping the exchange) instead of waiting for
     * them to drain the SMs. */
    if (cudaDeviceGetStreamPriorityRange(&lo, &D->prio) != cudaSuccess) {
        cudaGetLastError();
        D->prio = 0;
    }
    __atomic_store_n(&D->ready, 1, __ATOMIC_RELEASE);
    MPIACC_LOG(MPIACC_LOG_DEBUG, "CUDA device %d ready (%d SMs, memory pools %d, work stream priority %d)", dev,
               D->nsm, D->mempools, D->prio);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_cuda_dev_enter(int dev, int *old)
{
    int mpi_errno = MPI_SUCCESS;
    *old = -1;
    if (dev < 0 || dev >= mpiacc_cuda_ndev || dev >= MPIACC_CUDA_MAXDEV)
        MPIACC_FAIL(MPIACC_ERRK_ARG, "CUDA device ordinal %d is invalid (%d devices)", dev, mpiacc_cuda_ndev);
    MPIACC_CUDA_CHECK(cudaGetDevice(old));
    if (*old != dev) MPIACC_CUDA_CHECK(cudaSetDevice(dev));
    if (!__atomic_load_n(&mpiacc_cuda_devs[dev].ready, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&setup_lock);
        if (!mpiacc_cuda_devs[dev].ready) mpi_errno = dev_setup(dev);
        pthread_mutex_unlock(&setup_lock);
        if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    mpiacc_cuda_dev_leave(dev, *old);
    goto fn_exit;
}

void mpiacc_cuda_dev_leave(int dev, int old)
{
    if (old >= 0 && old != dev) cudaSetDevice(old);
}

/* ---- streams, events, handles (dev current) ------------------------- */

/* Picks the least busy stream; a new one is made when all are busy and
 * there is room.  The stream is created outside the lock and published
 * under it; if another thread filled the table meanwhile, ours is dropped. */
int mpiacc_cuda_stream_get(int dev, int *sidx)
{
    int mpi_errno = MPI_SUCCESS, best;
    mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
    cudaStream_t fresh = NULL;
    for (;;) {
        best = -1;
        LOCK();
        for (int i = 0; i < D->nstreams; i++)
            if (best < 0 || D->inflight[i] < D->inflight[best]) best = i;
        if ((best < 0 || D->inflight[best] > 0) && D->nstreams < MPIACC_CUDA_MAXSTREAMS) {
            if (!fresh) {
                UNLOCK();
                MPIACC_CUDA_CHECK(cudaStreamCreateWithPriority(&fresh, cudaStreamNonBlocking, D->prio));
                continue; /* look again: the table may have changed */
            }
            best = D->nstreams;
            D->streams[best] = fresh;
            D->inflight[best] = 0;
            D->nstreams++;
            fresh = NULL;
        }
        D->inflight[best]++;
        *sidx = best;
        UNLOCK();
        break;
    }
fn_exit:
    if (fresh) cudaStreamDestroy(fresh); /* not needed after all: nothing was enqueued on it */
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_cuda_stream_lane(int dev, int *lane, int *sidx)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
    if (lane && *lane >= 0) {
        LOCK();
        if (*lane < D->nstreams) {
            D->inflight[*lane]++;
            *sidx = *lane;
            UNLOCK();
            goto fn_exit;
        }
        UNLOCK();
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA: lane %d names no stream of device %d", *lane, dev);
    }
    MPIACC_CHECK(mpiacc_cuda_stream_get(dev, sidx));
    if (lane) *lane = *sidx;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void stream_put_locked(int dev, int sidx)
{
    if (sidx >= 0 && mpiacc_cuda_devs[dev].inflight[sidx] > 0) mpiacc_cuda_devs[dev].inflight[sidx]--;
}

void mpiacc_cuda_stream_put(int dev, int sidx)
{
    LOCK();
    stream_put_locked(dev, sidx);
    UNLOCK();
}

int mpiacc_cuda_event_get(int dev, cudaEvent_t *ev)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
    LOCK();
    if (D->nevents > 0) {
        *ev = D->events[--D->nevents];
        UNLOCK();
        goto fn_exit;
    }
    UNLOCK();
    MPIACC_CUDA_CHECK(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Out of memory for the free list: the event is destroyed (which never
 * waits: a pending event's resources are released when it completes). */
static void event_put_locked(int dev, cudaEvent_t ev)
{
    mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
    if (D->nevents == D->capevents) {
        int cap = D->capevents ? 2 * D->capevents : 64;
        cudaEvent_t *n = realloc(D->events, (size_t)cap * sizeof *n);
        if (!n) {
            cudaEventDestroy(ev);
            return;
        }
        D->events = n;
        D->capevents = cap;
    }
    D->events[D->nevents++] = ev;
}

int mpiacc_cuda_handle_get(int dev, mpiacc_cuda_h_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_h_t *h;
    LOCK();
    h = hfree;
    if (h) hfree = h->next;
    else if ((h = calloc(1, sizeof *h)) != NULL) {
        h->all = hall;
        hall = h;
    }
    UNLOCK();
    if (!h) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a CUDA handle");
    h->next = NULL;
    h->dev = dev;
    h->sidx = -1;
    h->nev = 0;
    h->done = 0;
    h->is_xfer = 0;
    h->refs = 1;
    h->tmp = NULL;
    h->ipc_map = h->ipc_blob = NULL;
    h->fslot = -1;
    h->fseq = h->fpolls = 0;
    h->fin = NULL;
    h->fin_arg = NULL;
    *out = h;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void buf_put_locked(int dev, mpiacc_cuda_buf_t *b);

void mpiacc_cuda_handle_finish(mpiacc_cuda_h_t *h)
{
    LOCK();
    for (int i = 0; i < h->nev; i++) event_put_locked(h->dev, h->ev[i]);
    h->nev = 0;
    stream_put_locked(h->dev, h->sidx);
    h->sidx = -1;
    if (h->tmp) buf_put_locked(h->dev, h->tmp);
    h->tmp = NULL;
    h->done = 1;
    UNLOCK();
    mpiacc_cuda_flag_put(h);
    if (h->ipc_map || h->ipc_blob) { /* the GPU is done with the mapping and blob */
        mpiacc_cuda_ipc_unuse(h->ipc_map, h->ipc_blob);
        h->ipc_map = h->ipc_blob = NULL;
    }
    if (h->fin) { /* once: cleared before the call */
        void (*fin)(void *) = h->fin;
        void *arg = h->fin_arg;
        h->fin = NULL;
        h->fin_arg = NULL;
        fin(arg);
    }
}

int mpiacc_cuda_handle_record(mpiacc_cuda_h_t *h, cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS;
    cudaEvent_t ev;
    MPIACC_CHECK(mpiacc_cuda_event_get(h->dev, &ev));
    h->ev[h->nev++] = ev; /* the handle owns it from here (put gives it back) */
    MPIACC_CUDA_CHECK(cudaEventRecord(ev, st));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_cuda_handle_abandon(mpiacc_cuda_h_t *h, cudaStream_t st)
{
    if (!h) return;
    if (st) cudaStreamSynchronize(st);
    h->done = 1;
    mpiacc_cuda_handle_put(h);
}

int mpiacc_cuda_handle_wait(cudaStream_t st, const mpiacc_cuda_h_t *dep)
{
    int mpi_errno = MPI_SUCCESS;
    if (!dep || dep->done) goto fn_exit;
    if (dep->fslot >= 0 && dep->nev == 0 && dep->sidx >= 0) { /* a flag, no event (IPCV_FLAG): record one now on
                                                                  the handle's stream, behind its copy */
        mpiacc_cuda_h_t *h = (mpiacc_cuda_h_t *)dep;
        MPIACC_CHECK(mpiacc_cuda_handle_record(h, mpiacc_cuda_devs[h->dev].streams[h->sidx]));
    }
    for (int i = 0; i < dep->nev; i++) MPIACC_CUDA_CHECK(cudaStreamWaitEvent(st, dep->ev[i], 0));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_cuda_handle_put(mpiacc_cuda_h_t *h)
{
    if (!h) return;
    /* An xfer released early: the GPU must be done with the buffers it
     * holds, whichever owner of a shared (fused) launch lets go first.  A
     * dep needs no wait (its events can be re-recorded safely). */
    if (!h->done && h->is_xfer) {
        for (int i = 0; i < h->nev; i++) cudaEventSynchronize(h->ev[i]);
        if (h->fslot >= 0 && h->sidx >= 0) /* a completion flag instead of an event */
            cudaStreamSynchronize(mpiacc_cuda_devs[h->dev].streams[h->sidx]);
    }
    if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) > 0) return; /* another owner remains */
    mpiacc_cuda_handle_finish(h);
    LOCK();
    h->next = hfree;
    hfree = h;
    UNLOCK();
}

/* ---- device memory -------------------------------------------------- */

int mpiacc_cuda_dev_alloc(int dev, size_t bytes, void **p)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
    cudaError_t e;
    if (D->mempools) {
        e = cudaMallocAsync(p, bytes, D->service);
        if (e == cudaSuccess) e = cudaStreamSynchronize(D->service);
    } else {
        e = cudaMalloc(p, bytes);
    }
    if (e != cudaSuccess)
        MPIACC_FAIL(e == cudaErrorMemoryAllocation ? MPIACC_ERRK_NOMEM : MPIACC_ERRK_CUDA,
                    "CUDA: allocating %zu bytes on device %d failed: %s (%s)", bytes, dev, cudaGetErrorName(e),
                    cudaGetErrorString(e));
fn_exit:
    return mpi_errno;
fn_fail:
    *p = NULL;
    goto fn_exit;
}

/* Frees after everything now enqueued on the work streams (dev current,
 * lock not held): no device-wide synchronisation on the way.  Streams are
 * never destroyed before finalize, so the handles taken under the lock stay
 * valid; a stream that gets work after the snapshot is waited for too,
 * which is merely early, never late. */
void mpiacc_cuda_dev_free_ordered(int dev, void *p)
{
    mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
    cudaStream_t busy[MPIACC_CUDA_MAXSTREAMS];
    int nbusy = 0;
    if (!p) return;
    if (!D->mempools) {
        cudaFree(p);
        return;
    }
    LOCK();
    for (int i = 0; i < D->nstreams; i++)
        if (D->inflight[i]) busy[nbusy++] = D->streams[i];
    UNLOCK();
    for (int i = 0; i < nbusy; i++) {
        cudaEvent_t ev;
        if (mpiacc_cuda_event_get(dev, &ev) != MPI_SUCCESS) {
            cudaStreamSynchronize(busy[i]);
            continue;
        }
        cudaEventRecord(ev, busy[i]);
        cudaStreamWaitEvent(freestream[dev], ev, 0);
        LOCK();
        event_put_locked(dev, ev); /* the wait took its snapshot: reusable at once */
        UNLOCK();
    }
    cudaFreeAsync(p, freestream[dev]);
}

void mpiacc_cuda_dev_free(int dev, void *p)
{
    if (!p) return;
    if (mpiacc_cuda_devs[dev].mempools) {
        cudaFreeAsync(p, mpiacc_cuda_devs[dev].service);
        cudaStreamSynchronize(mpiacc_cuda_devs[dev].service);
    } else {
        cudaFree(p);
    }
}

static int size_class(size_t bytes)
{
    int c = 8; /* at least 256 bytes */
    while (c < MPIACC_CUDA_NCLASS - 1 && ((size_t)1 << c) < bytes) c++;
    return c;
}

static int buf_get(int dev, size_t bytes, int ipc, mpiacc_cuda_buf_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
    mpiacc_cuda_buf_t **list = ipc ? D->ipcbufs : D->bufs;
    int c = size_class(bytes);
    mpiacc_cuda_buf_t *b;
    LOCK();
    b = list[c];
    if (b) list[c] = b->next;
    UNLOCK();
    if (!b) {
        if (!(b = calloc(1, sizeof *b))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
        b->cls = c;
        b->dev = dev;
        b->ipc = ipc;
        if (ipc) {
            cudaError_t e = cudaMalloc(&b->p, (size_t)1 << c);
            if (e != cudaSuccess) {
                free(b);
                MPIACC_FAIL(e == cudaErrorMemoryAllocation ? MPIACC_ERRK_NOMEM : MPIACC_ERRK_CUDA,
                            "CUDA: allocating %zu bytes of staging on device %d failed: %s (%s)", (size_t)1 << c, dev,
                            cudaGetErrorName(e), cudaGetErrorString(e));
            }
        } else {
            mpi_errno = mpiacc_cuda_dev_alloc(dev, (size_t)1 << c, &b->p);
            if (mpi_errno != MPI_SUCCESS) {
                free(b);
                goto fn_fail;
            }
        }
    }
    *out = b;
fn_exit:
    return mpi_errno;
fn_fail:
    *out = NULL;
    goto fn_exit;
}

int mpiacc_cuda_buf_get(int dev, size_t bytes, mpiacc_cuda_buf_t **out) { return buf_get(dev, bytes, 0, out); }

int mpiacc_cuda_buf_get_ipc(int dev, size_t bytes, mpiacc_cuda_buf_t **out) { return buf_get(dev, bytes, 1, out); }

static void buf_put_locked(int dev, mpiacc_cuda_buf_t *b)
{
    mpiacc_cuda_buf_t **list = b->ipc ? mpiacc_cuda_devs[dev].ipcbufs : mpiacc_cuda_devs[dev].bufs;
    b->next = list[b->cls];
    list[b->cls] = b;
}

void mpiacc_cuda_buf_put(mpiacc_cuda_buf_t *b)
{
    if (!b) return;
    LOCK();
    buf_put_locked(b->dev, b);
    UNLOCK();
}

/* ---- pinned mapped staging -------------------------------------------- */

int mpiacc_cuda_host_alloc(size_t bytes, void **p)
{
    int mpi_errno = MPI_SUCCESS;
    cudaError_t e = cudaHostAlloc(p, bytes ? bytes : 1, cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess)
        MPIACC_FAIL(e == cudaErrorMemoryAllocation ? MPIACC_ERRK_NOMEM : MPIACC_ERRK_CUDA,
                    "CUDA: cudaHostAlloc of %zu bytes failed: %s (%s)", bytes, cudaGetErrorName(e),
                    cudaGetErrorString(e));
    LOCK();
    if (npinned == cappinned) {
        int cap = cappinned ? 2 * cappinned : 32;
        pinned_t *n = realloc(pinned, (size_t)cap * sizeof *n);
        if (!n) {
            UNLOCK();
            cudaFreeHost(*p);
            MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
        }
        pinned = n;
        cappinned = cap;
    }
    pinned[npinned].p = *p;
    pinned[npinned].bytes = bytes ? bytes : 1;
    npinned++;
    UNLOCK();
fn_exit:
    return mpi_errno;
fn_fail:
    *p = NULL;
    goto fn_exit;
}

void mpiacc_cuda_host_free(void *p, size_t bytes)
{
    int found = 0;
    if (!p) return;
    LOCK();
    for (int i = 0; i < npinned; i++)
        if (pinned[i].p == p) {
            pinned[i] = pinned[--npinned];
            found = 1;
            break;
        }
    UNLOCK();
    if (!found) MPIACC_LOG(MPIACC_LOG_WARN, "CUDA host_free of %p (%zu bytes): not ours", p, bytes);
    else cudaFreeHost(p);
}

int mpiacc_cuda_host_is_pinned(const void *p, size_t bytes)
{
    int r = 0;
    const char *c = p;
    LOCK();
    for (int i = 0; i < npinned && !r; i++) {
        const char *s = pinned[i].p;
        r = c >= s && c + bytes <= s + pinned[i].bytes;
    }
    UNLOCK();
    return r;
}

/* ---- init / finalize ------------------------------------------------ */

int mpiacc_cuda_pool_init(void)
{
    memset(mpiacc_cuda_devs, 0, sizeof mpiacc_cuda_devs);
    memset(freestream, 0, sizeof freestream);
    hfree = hall = NULL;
    mpiacc_cuda_blob_init();
    return MPI_SUCCESS;
}

void mpiacc_cuda_pool_finalize(void)
{
    int old = -1;
    cudaGetDevice(&old);
    LOCK();
    for (int dev = 0; dev < MPIACC_CUDA_MAXDEV; dev++) {
        mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
        if (!D->ready) continue;
        cudaSetDevice(dev);
        for (int i = 0; i < D->nstreams; i++) {
            if (D->inflight[i]) MPIACC_LOG(MPIACC_LOG_WARN, "CUDA finalize: stream %d of device %d still busy", i, dev);
            cudaStreamSynchronize(D->streams[i]);
        }
        cudaStreamSynchronize(freestream[dev]);
        for (mpiacc_cuda_h_t *h = hall; h; h = h->all) { /* handles never released */
            if (h->dev != dev || h->done) continue;
            for (int i = 0; i < h->nev; i++) cudaEventDestroy(h->ev[i]);
            h->nev = 0;
            if (h->tmp) mpiacc_cuda_dev_free(dev, h->tmp->p), free(h->tmp), h->tmp = NULL;
        }
        mpiacc_cuda_blob_drop_dev(dev);
        for (int k = 0; k < MPIACC_CUDA_NCLASS; k++) {
            while (D->bufs[k]) {
                mpiacc_cuda_buf_t *b = D->bufs[k];
                D->bufs[k] = b->next;
                mpiacc_cuda_dev_free(dev, b->p);
                free(b);
            }
            while (D->ipcbufs[k]) {
                mpiacc_cuda_buf_t *b = D->ipcbufs[k];
                D->ipcbufs[k] = b->next;
                cudaFree(b->p);
                free(b);
            }
        }
        for (int i = 0; i < D->nevents; i++) cudaEventDestroy(D->events[i]);
        free(D->events);
        for (int i = 0; i < D->nstreams; i++) cudaStreamDestroy(D->streams[i]);
        cudaStreamDestroy(D->service);
        cudaStreamDestroy(freestream[dev]);
        memset(D, 0, sizeof *D);
        freestream[dev] = NULL;
    }
    mpiacc_cuda_blob_drop_all();
    while (hall) {
        mpiacc_cuda_h_t *h = hall;
        hall = h->all;
        free(h);
    }
    hfree = NULL;
    if (npinned) MPIACC_LOG(MPIACC_LOG_WARN, "CUDA finalize: %d staging buffers not returned; freeing", npinned);
    for (int i = 0; i < npinned; i++) cudaFreeHost(pinned[i].p);
    free(pinned);
    pinned = NULL;
    npinned = cappinned = 0;
    UNLOCK();
    if (old >= 0) cudaSetDevice(old);
}
