/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_ipc.c: the CUDA backend's interprocess part (src/core/backend_ipc.h).
 *
 * Exporter: one driver call per message (cuPointerGetAttributes: memory
 * type, buffer ID, legacy-IPC capability, device) finds the allocation; a
 * cache keyed by buffer ID (unique for the process lifetime, so never
 * stale) keeps its base, size and cudaIpcMemHandle_t.  Interprocess events
 * (cudaEventInterprocess | cudaEventDisableTiming) come from a per-device
 * pool, their handles taken once at creation; one is recorded per message
 * behind the captured dependency on an internal stream and stays reserved
 * (not re-recorded) until export_release.
 *
 * Importer (caches in cuda_ipc_cache.c): the allocation is mapped once per
 * (owner, buffer ID, device) and referenced by the copy; the sender's
 * interprocess event is waited on GPU-side (cudaStreamWaitEvent), then one
 * layout-to-layout kernel (cuda_xcopy.cu) or one copy moves the data from
 * the mapping straight into the receive buffer.  A same-process export is
 * read through its address directly and its event taken from the pool.
 *
 * Locking: `lock` guards the exporter's tables and is never held across a
 * CUDA call that synchronises; waits on pool events are enqueued under it.
 * Driver entry points come through cudaGetDriverEntryPointByVersion, so the
 * library needs no libcuda link (it still loads where no driver exists).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h> /* driver API types only */

#include "cuda_ipc.h"
#include "core/env.h"
#include "cuda_xcopy.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) == 64 && sizeof(cudaIpcEventHandle_t) == 64,
               "mpiacc_ipc_export_t holds 64-byte CUDA IPC handles");

#define XMEM_CAP 256 /* exporter's cache of allocations and their handles */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&lock)
#define UNLOCK() pthread_mutex_unlock(&lock)
#define STAT(f_) MPIACC_CUDA_IPC_STAT(f_)

mpiacc_ipc_stats_t mpiacc_cuda_ipc_st;
static uint64_t self_owner;

int mpiacc_cuda_ipc_enabled_knob = -1; /* cuda_testhooks.c: mpiacc_cuda_ipc_set_enabled */

/* MPIACC_IPC=0 disables exports (the protocol then falls back); read once. */
static int ipc_enabled(void)
{
    static int env = -1;
    int v = __atomic_load_n(&mpiacc_cuda_ipc_enabled_knob, __ATOMIC_RELAXED);
    if (v >= 0) return v;
    if ((v = __atomic_load_n(&env, __ATOMIC_RELAXED)) < 0) {
        v = mpiacc_env_bool("MPIACC_IPC");
        __atomic_store_n(&env, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* ---- driver entry points ---------------------------------------------- */

typedef CUresult (*getattrs_fn)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr);
typedef CUresult (*addrrange_fn)(CUdeviceptr *, size_t *, CUdeviceptr);
static getattrs_fn drv_getattrs;
static addrrange_fn drv_range;
static int drv_state; /* 0 not looked up, 1 usable, -1 not available */

void *mpiacc_cuda_drv_symbol(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return fn;
}

static int drv_ready(void)
{
    int s;
    LOCK();
    if (drv_state == 0) {
        drv_getattrs = (getattrs_fn)mpiacc_cuda_drv_symbol("cuPointerGetAttributes");
        drv_range = (addrrange_fn)mpiacc_cuda_drv_symbol("cuMemGetAddressRange");
        drv_state = drv_getattrs && drv_range ? 1 : -1;
        if (drv_state < 0) MPIACC_LOG(MPIACC_LOG_WARN, "CUDA IPC: driver entry points not found; IPC disabled");
    }
    s = drv_state;
    UNLOCK();
    return s > 0;
}

/* ---- exporter ----------------------------------------------------------- */

typedef struct xmem { /* an exported allocation */
    uint64_t id, stamp;
    CUdeviceptr base;
    size_t bytes;
    cudaIpcMemHandle_t h;
} xmem_t;
static xmem_t xmem[XMEM_CAP];
static int nxmem;
static uint64_t xclock;

typedef struct xev { /* an interprocess event of the exporter's pool */
    struct xev *next_free, *next_all;
    cudaEvent_t ev;
    cudaIpcEventHandle_t h;
    uint64_t id;
    int dev, busy;
    int sidx; /* the stream it was recorded on, held until release: that stream
                 waits on the dependency, so no other work is queued behind it */
} xev_t;
static xev_t *xev_free[MPIACC_CUDA_MAXDEV], *xev_all;
static uint64_t xev_ids;

/* Cached allocation of buffer `id` (lock held), or NULL. */
static xmem_t *xmem_find_locked(uint64_t id)
{
    for (int i = 0; i < nxmem; i++)
        if (xmem[i].id == id) {
            xmem[i].stamp = ++xclock;
            return &xmem[i];
        }
    return NULL;
}

static void xmem_put_locked(const xmem_t *m)
{
    int at = nxmem;
    if (xmem_find_locked(m->id)) return;
    if (nxmem == XMEM_CAP) { /* replace the least recently used */
        at = 0;
        for (int i = 1; i < nxmem; i++)
            if (xmem[i].stamp < xmem[at].stamp) at = i;
    } else {
        nxmem++;
    }
    xmem[at] = *m;
    xmem[at].stamp = ++xclock;
}

/* A free interprocess event of device dev (current), reserved. */
static int xev_get(int dev, xev_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    xev_t *e;
    LOCK();
    e = xev_free[dev];
    if (e) xev_free[dev] = e->next_free, e->busy = 1;
    UNLOCK();
    if (!e) {
        if (!(e = calloc(1, sizeof *e))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
        cudaError_t ce = cudaEventCreateWithFlags(&e->ev, cudaEventInterprocess | cudaEventDisableTiming);
        if (ce == cudaSuccess && (ce = cudaIpcGetEventHandle(&e->h, e->ev)) != cudaSuccess) cudaEventDestroy(e->ev);
        if (ce != cudaSuccess) {
            free(e);
            e = NULL;
            MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA: creating an interprocess event on device %d failed: %s (%s)", dev,
                        cudaGetErrorName(ce), cudaGetErrorString(ce));
        }
        e->dev = dev;
        LOCK();
        e->id = ++xev_ids;
        e->busy = 1;
        e->next_all = xev_all;
        xev_all = e;
        UNLOCK();
        STAT(event_creates);
    }
    e->sidx = -1;
    *out = e;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void ipc_export_release(void *token)
{
    xev_t *e = token;
    if (!e) return;
    if (e->sidx >= 0) mpiacc_cuda_stream_put(e->dev, e->sidx);
    LOCK();
    e->sidx = -1;
    e->busy = 0;
    e->next_free = xev_free[e->dev];
    xev_free[e->dev] = e;
    UNLOCK();
}

static int fallback(int *ok, const char *why)
{
    MPIACC_LOG(MPIACC_LOG_DEBUG, "CUDA IPC: not exported (%s)", why);
    *ok = 0;
    STAT(export_fallbacks);
    return MPI_SUCCESS;
}

/* Whether the data the message depends on is already written (no event to
 * export: the receiver's copy need not wait, which spares it a
 * cross-process event wait and the sender an event record).  A query that
 * fails counts as not complete: export_event then reports the error. */
static int dep_complete(const mpiacc_cuda_h_t *dep)
{
    if (dep->done) return 1;
    for (int i = 0; i < dep->nev; i++)
        if (cudaEventQuery(dep->ev[i]) != cudaSuccess) return 0;
    return 1;
}

/* Records a reserved interprocess event behind dep (dep's device). */
static int export_event(mpiacc_cuda_h_t *dep, mpiacc_ipc_export_t *x, xev_t **out)
{
    int mpi_errno = MPI_SUCCESS, dev = dep->dev, old = -1;
    xev_t *e = NULL;
    cudaStream_t st;
    *out = NULL;
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    mpi_errno = xev_get(dev, &e);
    if (mpi_errno == MPI_SUCCESS) mpi_errno = mpiacc_cuda_stream_get(dev, &e->sidx);
    if (mpi_errno == MPI_SUCCESS) {
        cudaError_t ce = cudaSuccess;
        const char *call = "cudaStreamWaitEvent (dependency of an interprocess event)";
        st = mpiacc_cuda_devs[dev].streams[e->sidx];
        for (int i = 0; i < dep->nev && ce == cudaSuccess; i++) ce = cudaStreamWaitEvent(st, dep->ev[i], 0);
        if (ce == cudaSuccess) call = "cudaEventRecord (interprocess event)", ce = cudaEventRecord(e->ev, st);
        if (ce != cudaSuccess) mpi_errno = mpiacc_cuda_err(call, ce);
    }
    mpiacc_cuda_dev_leave(dev, old);
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    memcpy(x->event_handle, &e->h, sizeof e->h);
    x->event_id = e->id;
    x->flags |= MPIACC_IPC_F_EVENT;
    *out = e;
fn_exit:
    return mpi_errno;
fn_fail:
    if (e) ipc_export_release(e);
    goto fn_exit;
}

static int ipc_export_buf(const mpiacc_attrs_t *a, void *dep, void *buf, MPI_Aint lo, MPI_Aint hi,
                          mpiacc_ipc_export_t *x, void **token, int *ok)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0, bdev = -1;
    unsigned long long id = 0, memtype = 0, capable = 0, managed = 0;
    void *pool = NULL;
    char *probe = (char *)buf + lo;
    xmem_t m, *c;
    xev_t *e = NULL;
    CUresult r;
    memset(x, 0, sizeof *x);
    *token = NULL;
    *ok = 0;
    if (!ipc_enabled()) return fallback(ok, "MPIACC_IPC=0");
    if (hi <= lo) return fallback(ok, "no bytes");
    if (!drv_ready()) return fallback(ok, "no driver entry points");
    if (dep) dev = ((mpiacc_cuda_h_t *)dep)->dev;
    else MPIACC_CHECK(mpiacc_cuda_resolve_device(a, &dev));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    entered = 1;
    {
        CUpointer_attribute at[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
        void *data[] = {&memtype, &id, &bdev, &managed, &capable, &pool};
        r = drv_getattrs(6, at, data, (CUdeviceptr)(uintptr_t)probe);
        if (r != CUDA_SUCCESS) { /* a driver without the last two: cudaIpcGetMemHandle decides */
            capable = 1, pool = NULL;
            r = drv_getattrs(4, at, data, (CUdeviceptr)(uintptr_t)probe);
        }
    }
    if (r != CUDA_SUCCESS) {
        fallback(ok, "cuPointerGetAttributes failed");
        goto fn_exit;
    }
    if ((unsigned)memtype != CU_MEMORYTYPE_DEVICE || managed) {
        fallback(ok, managed ? "managed memory" : "not device memory");
        goto fn_exit;
    }
    if (!capable || pool) {
        fallback(ok, pool ? "stream-ordered pool memory" : "allocation without a legacy IPC handle");
        goto fn_exit;
    }
    LOCK();
    c = xmem_find_locked(id);
    if (c) m = *c;
    UNLOCK();
    if (!c) {
        cudaError_t ce;
        memset(&m, 0, sizeof m);
        m.id = id;
        if (drv_range(&m.base, &m.bytes, (CUdeviceptr)(uintptr_t)probe) != CUDA_SUCCESS) {
            fallback(ok, "cuMemGetAddressRange failed");
            goto fn_exit;
        }
        if (bdev != dev) cudaSetDevice(bdev);
        ce = cudaIpcGetMemHandle(&m.h, (void *)(uintptr_t)m.base);
        if (bdev != dev) cudaSetDevice(dev);
        if (ce != cudaSuccess) {
            cudaGetLastError();
            fallback(ok, "cudaIpcGetMemHandle refused the allocation");
            goto fn_exit;
        }
        LOCK();
        xmem_put_locked(&m);
        UNLOCK();
    }
    if ((uintptr_t)buf + lo < m.base || (uintptr_t)buf + hi > m.base + m.bytes) {
        /* a buffer over several allocations (or too small: the other path reports it) */
        fallback(ok, "the message's bytes are not inside one allocation");
        goto fn_exit;
    }
    memcpy(x->mem_handle, &m.h, sizeof m.h);
    x->owner = self_owner;
    x->buffer_id = id;
    x->base_addr = (uint64_t)m.base;
    x->offset = (int64_t)((uintptr_t)buf - (uintptr_t)m.base);
    x->alloc_bytes = m.bytes;
    x->lo = lo;
    x->hi = hi;
    x->device = bdev;
    if (dep && !((mpiacc_cuda_h_t *)dep)->done) {
        const int noquery = mpiacc_cuda_ipcv(MPIACC_CUDA_IPCV_NOQUERY);
        if (noquery) MPIACC_CUDA_IPCV_USED(3);
        if (noquery || !dep_complete(dep)) MPIACC_CHECK(export_event(dep, x, &e));
    }
    *token = e;
    *ok = 1;
    STAT(exports);
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    memset(x, 0, sizeof *x);
    goto fn_exit;
}

/* ---- import ------------------------------------------------------------------ */

/* Same-process import: st waits on the exporter's own (reserved) event. */
static int own_event_wait(const mpiacc_ipc_export_t *x, cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS, found = 0;
    cudaError_t ce = cudaSuccess;
    LOCK();
    for (xev_t *e = xev_all; e && !found; e = e->next_all)
        if (e->id == x->event_id && e->busy) {
            found = 1;
            ce = cudaStreamWaitEvent(st, e->ev, 0);
        }
    UNLOCK();
    if (!found)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA IPC: exported event %llu is not reserved (released before the import?)",
                    (unsigned long long)x->event_id);
    if (ce != cudaSuccess) mpi_errno = mpiacc_cuda_err("cudaStreamWaitEvent (exported event)", ce);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* A kernel on dev (current) reading memory of device peer of this process. */
static int peer_enable(int dev, int peer)
{
    int mpi_errno = MPI_SUCCESS, can = 0;
    cudaError_t ce;
    MPIACC_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, dev, peer));
    if (!can)
        MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA IPC: device %d cannot read device %d directly (no peer access)", dev, peer);
    ce = cudaDeviceEnablePeerAccess(peer, 0);
    if (ce == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError(), ce = cudaSuccess;
    if (ce != cudaSuccess) mpi_errno = mpiacc_cuda_err("cudaDeviceEnablePeerAccess", ce);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* A sender blob: whole, a traverse.h blob; *size: packed bytes of one element. */
static int blob_check(const void *blob, size_t bytes, long long *size)
{
    const mpiacc_tv_i64 *b = blob;
    if (!blob || bytes < MPIACC_TV_HDR_WORDS * sizeof *b || bytes % sizeof *b ||
        b[MPIACC_TV_H_MAGIC] != MPIACC_TV_MAGIC_VALUE || (size_t)b[MPIACC_TV_H_WORDS] * sizeof *b != bytes ||
        b[MPIACC_TV_H_SIZE] < 0)
        return mpiacc_err(MPIACC_ERRK_INTERN, "CUDA IPC: the sender's datatype description (%zu bytes) is malformed",
                          bytes);
    *size = b[MPIACC_TV_H_SIZE];
    return MPI_SUCCESS;
}

static int ipc_import_copy(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *x, const void *src_blob,
                           size_t src_blob_bytes, MPI_Count src_count, const mpiacc_xfer_desc_t *d, void **xfer)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0, same, rows = 0, flagged = 0;
    long long ssize = 0;
    MPI_Count stotal = 0, dtotal = 0;
    int64_t elo = 0, ehi = 0;
    void *mref = NULL, *bref = NULL;
    const void *sdblob = NULL, *ddblob = NULL;
    char *mbase = NULL;
    mpiacc_cuda_h_t *h = NULL, *dp = dep;
    cudaStream_t st = NULL;
    cudaError_t ce;
    mpiacc_cuda_xcopy_t k;
    mpiacc_cuda_xrows_t g;
    *xfer = NULL;
    if (!x || !d || !d->type) MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA IPC: import without export or destination");
    MPIACC_CHECK(blob_check(src_blob, src_blob_bytes, &ssize));
    /* overflow-checked: the counts and the export come from another process */
    if (d->first < 0 || d->last < d->first || src_count < 0 || __builtin_mul_overflow(src_count, ssize, &stotal) ||
        __builtin_mul_overflow(d->count, d->type->size, &dtotal) || d->last > stotal || d->last > dtotal)
        MPIACC_FAIL(MPIACC_ERRK_INTERN,
                    "CUDA IPC: packed range [%lld, %lld) beyond the sender's %lld x %lld or the receiver's %lld x %lld "
                    "bytes",
                    (long long)d->first, (long long)d->last, (long long)src_count, ssize, (long long)d->count,
                    (long long)d->type->size);
    if (d->last == d->first) goto fn_exit;
    if (x->hi <= x->lo || __builtin_add_overflow(x->offset, x->lo, &elo) ||
        __builtin_add_overflow(x->offset, x->hi, &ehi) || elo < 0 || (uint64_t)ehi > x->alloc_bytes)
        MPIACC_FAIL(MPIACC_ERRK_BUFFER,
                    "CUDA IPC: the exported bytes [%lld, %lld) + %lld lie outside the exported allocation of %llu "
                    "bytes",
                    (long long)x->lo, (long long)x->hi, (long long)x->offset, (unsigned long long)x->alloc_bytes);
    if (dp) dev = dp->dev;
    else MPIACC_CHECK(mpiacc_cuda_resolve_device(a, &dev));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    entered = 1;
    same = x->owner == self_owner;
    if (same) {
        mbase = (char *)(uintptr_t)x->base_addr;
        STAT(mem_same_process);
    } else {
        MPIACC_CHECK(mpiacc_cuda_ipcc_map_get(x, dev, &mbase, &mref));
    }
    memset(&k, 0, sizeof k);
    k.src.blob = src_blob, k.src.base = mbase + x->offset;
    k.dst.blob = d->type->blob, k.dst.base = d->buf;
    k.first = d->first, k.last = d->last;
    if (mpiacc_cuda_xcopy_plan(&k, src_count, d->count) != 0)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA IPC: a datatype description is not a traversal blob");
    if (mpiacc_cuda_ipcv(MPIACC_CUDA_IPCV_KERNEL) && k.src.dense && k.dst.dense)
        k.how = MPIACC_CUDA_XCOPY_KERNEL, MPIACC_CUDA_IPCV_USED(0);
    if (mpiacc_cuda_ipcv(MPIACC_CUDA_IPCV_ROWS) && (rows = mpiacc_cuda_xcopy_rows(&k, src_count, d->count, &g)))
        MPIACC_CUDA_IPCV_USED(4);
    /* device copies of the layouts the kernel traverses (a dense side is not read) */
    if (rows) k.src.dense = k.dst.dense = 1; /* no kernel: no blob needed */
    if (!k.src.dense) MPIACC_CHECK(mpiacc_cuda_ipcc_blob_get(dev, src_blob, src_blob_bytes, &sdblob, &bref));
    if (!k.dst.dense) MPIACC_CHECK(mpiacc_cuda_blob_get(dev, d->type, &ddblob));
    if (same && x->device != dev && (k.how == MPIACC_CUDA_XCOPY_KERNEL || !(k.src.dense && k.dst.dense)))
        MPIACC_CHECK(peer_enable(dev, x->device));
    MPIACC_CHECK(mpiacc_cuda_handle_get(dev, &h));
    h->is_xfer = 1;
    h->ipc_map = mref, h->ipc_blob = bref; /* dropped when the copy is done */
    mref = bref = NULL;
    MPIACC_CHECK(mpiacc_cuda_stream_get(dev, &h->sidx));
    st = mpiacc_cuda_devs[dev].streams[h->sidx];
    if (x->flags & MPIACC_IPC_F_EVENT)
        MPIACC_CHECK(same ? own_event_wait(x, st) : mpiacc_cuda_ipcc_event_wait(x, st));
    MPIACC_CHECK(mpiacc_cuda_handle_wait(st, dp));
    k.src.blob = sdblob, k.dst.blob = ddblob;
    if (rows) ce = (cudaError_t)mpiacc_cuda_launch_xrows(&g, st);
    else ce = (cudaError_t)mpiacc_cuda_launch_xcopy(&k, mpiacc_cuda_devs[dev].nsm, st);
    if (ce != cudaSuccess)
        MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA IPC: layout copy (%s, word %d B) failed to start: %s (%s)",
                    rows ? "memcpy2D" : k.src.dense && k.dst.dense && !k.how ? "memcpy" : "kernel", k.ws,
                    cudaGetErrorName(ce), cudaGetErrorString(ce));
    if (mpiacc_cuda_ipcv(MPIACC_CUDA_IPCV_FLAG)) MPIACC_CHECK(mpiacc_cuda_flag_signal(h, st, 1, &flagged));
    if (!flagged) MPIACC_CHECK(mpiacc_cuda_handle_record(h, st));
    *xfer = h;
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    mpiacc_cuda_handle_abandon(h, st); /* nothing enqueued may still read the mapping */
    if (mref || bref) mpiacc_cuda_ipc_unuse(mref, bref);
    goto fn_exit;
}

/* ---- for cuda_coll.c (import_reduce): same-process exports ------------------------ */

int mpiacc_cuda_ipc_is_own(const mpiacc_ipc_export_t *x) { return x->owner == self_owner; }

int mpiacc_cuda_ipc_own_event_wait(const mpiacc_ipc_export_t *x, cudaStream_t st) { return own_event_wait(x, st); }

int mpiacc_cuda_ipc_peer_enable(int dev, int peer) { return peer_enable(dev, peer); }

/* ---- table, init, finalize ------------------------------------------------------ */

static void ipc_stats(mpiacc_ipc_stats_t *s)
{
#define LD(f_) s->f_ = __atomic_load_n(&mpiacc_cuda_ipc_st.f_, __ATOMIC_RELAXED)
    LD(mem_opens), LD(mem_hits), LD(mem_evictions), LD(mem_closes), LD(mem_same_process), LD(event_opens);
    LD(event_hits), LD(event_creates), LD(exports), LD(export_fallbacks), LD(blob_uploads);
#undef LD
}

const struct mpiacc_backend_ipc mpiacc_cuda_ipc = {
    .export_buf = ipc_export_buf,
    .export_release = ipc_export_release,
    .import_copy = ipc_import_copy,
    .stats = ipc_stats,
    .reduce_supported = mpiacc_cuda_reduce_supported,
    .import_reduce = mpiacc_cuda_import_reduce,
    .import_copy_n = mpiacc_cuda_import_copy_n,
};

void mpiacc_cuda_ipc_init(void)
{
    struct timespec ts;
    uint64_t z;
    clock_gettime(CLOCK_REALTIME, &ts);
    z = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)(uintptr_t)&ts; /* splitmix64 of it */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    LOCK();
    self_owner = (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)z;
    memset(&mpiacc_cuda_ipc_st, 0, sizeof mpiacc_cuda_ipc_st);
    nxmem = 0;
    UNLOCK();
}

void mpiacc_cuda_ipc_finalize(void)
{
    int old = -1;
    cudaGetDevice(&old);
    for (int dev = 0; dev < mpiacc_cuda_ndev && dev < MPIACC_CUDA_MAXDEV; dev++) { /* copies reading mappings */
        mpiacc_cuda_dev_t *D = &mpiacc_cuda_devs[dev];
        if (!D->ready || cudaSetDevice(dev) != cudaSuccess) continue;
        for (int i = 0; i < D->nstreams; i++) cudaStreamSynchronize(D->streams[i]);
    }
    mpiacc_cuda_ipcc_finalize();
    mpiacc_cuda_flag_finalize();
    LOCK();
    while (xev_all) {
        xev_t *e = xev_all;
        xev_all = e->next_all;
        if (e->busy) MPIACC_LOG(MPIACC_LOG_WARN, "CUDA IPC finalize: exported event %llu never released",
                                (unsigned long long)e->id);
        if (cudaSetDevice(e->dev) == cudaSuccess) cudaEventDestroy(e->ev);
        free(e);
    }
    memset(xev_free, 0, sizeof xev_free);
    nxmem = 0;
    UNLOCK();
    if (old >= 0) cudaSetDevice(old);
}
