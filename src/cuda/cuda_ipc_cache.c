/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_ipc_cache.c: the importer's caches of the CUDA IPC path (see
 * cuda_ipc.c for the design): mappings of other processes' allocations,
 * their opened interprocess events, and device copies of sender datatype
 * blobs.
 *
 * Mappings are kept per exporting process ("owner") and keyed by (buffer
 * ID, importing device); a copy in flight holds a reference, and only
 * unreferenced mappings are closed: as stale (a cached mapping of the owner
 * overlapping a new allocation's address range belongs to a freed
 * allocation, since two live allocations never overlap) or as the least
 * recently used beyond MPIACC_IPC_CACHE per owner.  Opened events are
 * cached per owner by event ID (LRU beyond 4 x MPIACC_IPC_CACHE); a stream
 * waits on a cached event under the lock, so an eviction never destroys an
 * event between its lookup and the wait.
 *
 * Locking: `lock` guards the tables and is never held across opening,
 * closing or synchronising.  `open_lock` serialises opening and closing: a
 * thread that misses takes it, looks again (another thread may have opened
 * the handle meanwhile: then it uses that one) and only then opens, so each
 * key is opened once.  Order: open_lock, then lock.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_ipc.h"
#include "core/env.h"

#define SBLOB_CAP 64 /* device copies of sender blobs, all devices */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER, open_lock = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&lock)
#define UNLOCK() pthread_mutex_unlock(&lock)
#define STAT(f_) MPIACC_CUDA_IPC_STAT(f_)

int mpiacc_cuda_ipc_cache_knob; /* cuda_testhooks.c: mpiacc_cuda_ipc_set_cache */

/* MPIACC_IPC_CACHE: mappings kept per exporting process (default 64); read once. */
static int ipc_cache_cap(void)
{
    static int env;
    int v = __atomic_load_n(&mpiacc_cuda_ipc_cache_knob, __ATOMIC_RELAXED);
    if (v > 0) return v;
    if ((v = __atomic_load_n(&env, __ATOMIC_RELAXED)) == 0) {
        long long e = mpiacc_env_int("MPIACC_IPC_CACHE"); /* validated by the parser */
        v = e >= 1 ? (int)e : 1;
        __atomic_store_n(&env, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* ---- mappings ------------------------------------------------------------ */

typedef struct imap { /* a mapping of another process's allocation */
    struct imap *prev, *next;
    uint64_t id, base, bytes;
    int dev, refs;
    void *ptr;
} imap_t;

typedef struct iev { /* an opened interprocess event */
    struct iev *prev, *next;
    uint64_t id;
    cudaEvent_t ev;
} iev_t;

typedef struct iowner {
    struct iowner *next;
    uint64_t owner;
    imap_t *maps; /* most recently used first */
    iev_t *evs;
    int nmaps, nevs;
} iowner_t;
static iowner_t *owners;

/* Unlinks n from a doubly linked list with head *h (generic over imap/iev). */
#define DL_UNLINK(h_, n_)                                  \
    do {                                                   \
        if ((n_)->prev) (n_)->prev->next = (n_)->next;     \
        else *(h_) = (n_)->next;                           \
        if ((n_)->next) (n_)->next->prev = (n_)->prev;     \
        (n_)->prev = (n_)->next = NULL;                    \
    } while (0)
#define DL_PUSH(h_, n_)                          \
    do {                                         \
        (n_)->prev = NULL;                       \
        (n_)->next = *(h_);                      \
        if (*(h_)) (*(h_))->prev = (n_);         \
        *(h_) = (n_);                            \
    } while (0)

static iowner_t *owner_get_locked(uint64_t owner)
{
    iowner_t *o;
    for (o = owners; o; o = o->next)
        if (o->owner == owner) return o;
    if ((o = calloc(1, sizeof *o)) != NULL) {
        o->owner = owner;
        o->next = owners;
        owners = o;
    }
    return o;
}

/* Cached mapping (referenced), lock held. */
static imap_t *imap_find_locked(iowner_t *o, uint64_t id, int dev)
{
    for (imap_t *m = o->maps; m; m = m->next)
        if (m->id == id && m->dev == dev) {
            DL_UNLINK(&o->maps, m);
            DL_PUSH(&o->maps, m);
            m->refs++;
            return m;
        }
    return NULL;
}

static void imap_close(imap_t *m)
{
    int old = -1;
    cudaGetDevice(&old);
    if (old != m->dev) cudaSetDevice(m->dev);
    if (cudaIpcCloseMemHandle(m->ptr) != cudaSuccess) cudaGetLastError();
    if (old >= 0 && old != m->dev) cudaSetDevice(old);
    STAT(mem_closes);
    free(m);
}

int mpiacc_cuda_ipcc_map_get(const mpiacc_ipc_export_t *x, int dev, char **base, void **ref)
{
    int mpi_errno = MPI_SUCCESS, cap = ipc_cache_cap();
    iowner_t *o;
    imap_t *m, *victims = NULL, *n;
    cudaIpcMemHandle_t h;
    cudaError_t ce;
    void *ptr = NULL;
    LOCK();
    o = owner_get_locked(x->owner);
    m = o ? imap_find_locked(o, x->buffer_id, dev) : NULL;
    UNLOCK();
    if (!o) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    if (m) goto hit;
    pthread_mutex_lock(&open_lock);
    LOCK();
    if ((m = imap_find_locked(o, x->buffer_id, dev)) != NULL) { /* another thread opened it meanwhile */
        UNLOCK();
        pthread_mutex_unlock(&open_lock);
        goto hit;
    }
    for (m = o->maps; m; m = n) { /* stale: overlaps the new allocation, so it was freed */
        n = m->next;
        if (m->refs == 0 && m->id != x->buffer_id && m->base < x->base_addr + x->alloc_bytes && x->base_addr < m->base + m->bytes) {
            DL_UNLINK(&o->maps, m);
            o->nmaps--;
            m->next = victims, victims = m;
        }
    }
    while (o->nmaps >= cap) { /* least recently used unreferenced one */
        imap_t *lru = NULL;
        for (m = o->maps; m; m = m->next)
            if (m->refs == 0) lru = m;
        if (!lru) break; /* all in use: above the bound until they are released */
        DL_UNLINK(&o->maps, lru);
        o->nmaps--;
        lru->next = victims, victims = lru;
    }
    UNLOCK();
    for (m = victims; m; m = n) {
        n = m->next;
        STAT(mem_evictions);
        imap_close(m);
    }
    memcpy(&h, x->mem_handle, sizeof h);
    ce = cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess);
    if (ce != cudaSuccess) {
        cudaGetLastError();
        pthread_mutex_unlock(&open_lock);
        MPIACC_FAIL(MPIACC_ERRK_CUDA,
                    "CUDA IPC: cannot map the device buffer of process %u (allocation of %llu bytes, buffer id %llu, "
                    "its device %d) on device %d: cudaIpcOpenMemHandle: %s (%s)",
                    (unsigned)(x->owner >> 32), (unsigned long long)x->alloc_bytes, (unsigned long long)x->buffer_id,
                    (int)x->device, dev, cudaGetErrorName(ce), cudaGetErrorString(ce));
    }
    if (!(m = calloc(1, sizeof *m))) {
        cudaIpcCloseMemHandle(ptr);
        pthread_mutex_unlock(&open_lock);
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    }
    m->id = x->buffer_id, m->base = x->base_addr, m->bytes = x->alloc_bytes;
    m->dev = dev, m->refs = 1, m->ptr = ptr;
    LOCK();
    DL_PUSH(&o->maps, m);
    o->nmaps++;
    UNLOCK();
    pthread_mutex_unlock(&open_lock);
    STAT(mem_opens);
    goto found;
hit:
    STAT(mem_hits);
found:
    *base = m->ptr;
    *ref = m;
fn_exit:
    return mpi_errno;
fn_fail:
    *base = NULL;
    *ref = NULL;
    goto fn_exit;
}


/* ---- events --------------------------------------------------------------- */

/* Cached event of o with this ID, made most recent (lock held), or NULL. */
static iev_t *iev_find_locked(iowner_t *o, uint64_t id)
{
    for (iev_t *e = o->evs; e; e = e->next)
        if (e->id == id) {
            DL_UNLINK(&o->evs, e);
            DL_PUSH(&o->evs, e);
            return e;
        }
    return NULL;
}

static int wait_locked(cudaStream_t st, iev_t *e)
{
    cudaError_t ce = cudaStreamWaitEvent(st, e->ev, 0);
    return ce == cudaSuccess ? MPI_SUCCESS : mpiacc_cuda_err("cudaStreamWaitEvent (interprocess event)", ce);
}

int mpiacc_cuda_ipcc_event_wait(const mpiacc_ipc_export_t *x, cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS, cap = 4 * ipc_cache_cap();
    iowner_t *o;
    iev_t *e, *victim = NULL;
    cudaIpcEventHandle_t h;
    cudaEvent_t ev;
    cudaError_t ce;
    LOCK();
    o = owner_get_locked(x->owner);
    e = o ? iev_find_locked(o, x->event_id) : NULL;
    if (e) mpi_errno = wait_locked(st, e);
    UNLOCK();
    if (!o) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    if (e) {
        STAT(event_hits);
        goto fn_exit;
    }
    pthread_mutex_lock(&open_lock);
    LOCK();
    if ((e = iev_find_locked(o, x->event_id)) != NULL) mpi_errno = wait_locked(st, e);
    UNLOCK();
    if (e) {
        pthread_mutex_unlock(&open_lock);
        STAT(event_hits);
        goto fn_exit;
    }
    memcpy(&h, x->event_handle, sizeof h);
    ce = cudaIpcOpenEventHandle(&ev, h);
    if (ce != cudaSuccess) {
        cudaGetLastError();
        pthread_mutex_unlock(&open_lock);
        MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA IPC: cannot open the interprocess event of process %u: "
                    "cudaIpcOpenEventHandle: %s (%s)", (unsigned)(x->owner >> 32), cudaGetErrorName(ce),
                    cudaGetErrorString(ce));
    }
    if (!(e = calloc(1, sizeof *e))) {
        cudaEventDestroy(ev);
        pthread_mutex_unlock(&open_lock);
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    }
    e->id = x->event_id;
    e->ev = ev;
    LOCK();
    DL_PUSH(&o->evs, e);
    if (++o->nevs > cap) { /* the least recently used one (not e: the list has > 4 entries) */
        for (victim = o->evs; victim->next; victim = victim->next) continue;
        DL_UNLINK(&o->evs, victim);
        o->nevs--;
    }
    mpi_errno = wait_locked(st, e);
    UNLOCK();
    pthread_mutex_unlock(&open_lock);
    STAT(event_opens);
    if (victim) { /* waits already enqueued on it are not affected */
        cudaEventDestroy(victim->ev);
        free(victim);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- sender blobs ------------------------------------------------------------ */

typedef struct sblob {
    struct sblob *prev, *next; /* most recently used first */
    uint64_t hash;
    size_t bytes;
    void *host, *d;
    int dev, refs;
} sblob_t;
static sblob_t *sblobs;
static int nsblobs;

static uint64_t blob_hash(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static sblob_t *sblob_find_locked(int dev, uint64_t hash, const void *blob, size_t bytes)
{
    for (sblob_t *b = sblobs; b; b = b->next)
        if (b->dev == dev && b->hash == hash && b->bytes == bytes && memcmp(b->host, blob, bytes) == 0) {
            DL_UNLINK(&sblobs, b);
            DL_PUSH(&sblobs, b);
            b->refs++;
            return b;
        }
    return NULL;
}

static void sblob_free(sblob_t *b)
{
    int old = -1;
    cudaGetDevice(&old);
    if (old != b->dev) cudaSetDevice(b->dev);
    mpiacc_cuda_dev_free(b->dev, b->d);
    if (old >= 0 && old != b->dev) cudaSetDevice(old);
    free(b->host);
    free(b);
}

int mpiacc_cuda_ipcc_blob_get(int dev, const void *blob, size_t bytes, const void **dblob, void **ref)
{
    int mpi_errno = MPI_SUCCESS;
    const uint64_t hash = blob_hash(blob, bytes);
    sblob_t *b, *nb = NULL, *victim = NULL;
    cudaError_t ce;
    LOCK();
    b = sblob_find_locked(dev, hash, blob, bytes);
    UNLOCK();
    if (b) goto found;
    if (!(nb = calloc(1, sizeof *nb)) || !(nb->host = malloc(bytes)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    memcpy(nb->host, blob, bytes);
    nb->hash = hash, nb->bytes = bytes, nb->dev = dev, nb->refs = 1;
    MPIACC_CHECK(mpiacc_cuda_dev_alloc(dev, bytes, &nb->d));
    ce = cudaMemcpyAsync(nb->d, blob, bytes, cudaMemcpyHostToDevice, mpiacc_cuda_devs[dev].service);
    if (ce == cudaSuccess) ce = cudaStreamSynchronize(mpiacc_cuda_devs[dev].service);
    if (ce != cudaSuccess) MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA: uploading a sender's datatype blob failed: %s (%s)",
                                       cudaGetErrorName(ce), cudaGetErrorString(ce));
    STAT(blob_uploads);
    LOCK();
    if ((b = sblob_find_locked(dev, hash, blob, bytes)) == NULL) { /* no other thread was quicker */
        b = nb, nb = NULL;
        DL_PUSH(&sblobs, b);
        if (++nsblobs > SBLOB_CAP) {
            for (sblob_t *c = sblobs; c; c = c->next)
                if (c->refs == 0) victim = c; /* the least recently used unreferenced one */
            if (victim) {
                DL_UNLINK(&sblobs, victim);
                nsblobs--;
            }
        }
    }
    UNLOCK();
    if (victim) sblob_free(victim);
    if (nb) sblob_free(nb);
found:
    *dblob = b->d;
    *ref = b;
fn_exit:
    return mpi_errno;
fn_fail:
    if (nb) {
        if (nb->d) sblob_free(nb);
        else free(nb->host), free(nb);
    }
    goto fn_exit;
}

/* ---- references, finalize ---------------------------------------------------- */

void mpiacc_cuda_ipc_unuse(void *map, void *blob)
{
    LOCK();
    if (map) ((imap_t *)map)->refs--;
    if (blob) ((sblob_t *)blob)->refs--;
    UNLOCK();
}

void mpiacc_cuda_ipcc_finalize(void)
{
    pthread_mutex_lock(&open_lock);
    LOCK();
    while (owners) {
        iowner_t *o = owners;
        owners = o->next;
        while (o->maps) {
            imap_t *m = o->maps;
            DL_UNLINK(&o->maps, m);
            if (m->refs) MPIACC_LOG(MPIACC_LOG_WARN, "CUDA IPC finalize: a mapping still referenced by %d copies", m->refs);
            imap_close(m);
        }
        while (o->evs) {
            iev_t *e = o->evs;
            DL_UNLINK(&o->evs, e);
            cudaEventDestroy(e->ev);
            free(e);
        }
        free(o);
    }
    while (sblobs) {
        sblob_t *b = sblobs;
        DL_UNLINK(&sblobs, b);
        sblob_free(b);
    }
    nsblobs = 0;
    UNLOCK();
    pthread_mutex_unlock(&open_lock);
}
