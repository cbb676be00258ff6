/*
 * cuda_ipc_order.c: stream-ordered IPC sends (MPIACC_ORDER_STREAM; the
 * order_* entries of src/core/backend_ipc.h, used by protocol/ipc.c).
 *
 * Each device has, once used, an array of NSLOT "read done" flags in device
 * memory (cudaMalloc, one 64-byte line per slot, zeroed), exported once with
 * a cudaIpcMemHandle_t.  A stream-ordered IPC send takes a free slot and the
 * slot's next sequence value (never 0) and puts cuStreamWaitValue32(slot,
 * seq, GEQ) on the user's stream: GEQ compares cyclically ((int32_t)(*addr -
 * seq) >= 0), so a value written for a later use of the slot also releases
 * an older wait the stream has not reached yet.  The receiver, right after
 * its import copy and before the copy's own completion signal, enqueues
 * cuStreamWriteValue32(mapped slot, seq) on the copy's stream (the write runs
 * once the copy has read the data; the mapping of a peer's array is opened
 * once per (owner, device) and kept until finalize).  When the sender's op
 * ends without a FIN saying the receiver wrote it, order_release writes the
 * value itself on a stream of its own (cuStreamWriteValue32, synchronised:
 * the slot may be reused right after), so the user's stream never waits for
 * ever; MPI_Finalize does the same for slots still held (abandoned sends)
 * and then leaves the array allocated (a stream may not have passed its
 * wait yet).
 *
 * Fallbacks (logged once; the send keeps host order): the driver entry
 * points missing, the array's setup failing, every slot busy, the wait or
 * the write refused by the driver (stream memory operations unsupported).
 */
#include <stdlib.h>
#include <string.h>

#include <cuda.h> /* driver API types only */

#include "cuda_ipc.h"

#define NSLOT 256
#define STRIDE 16 /* 32-bit words per slot: one 64-byte line */
#define PEERS 64  /* mapped arrays of other processes */

typedef CUresult (*wv32_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

typedef struct {
    int state; /* 0 not set up, 1 ready, -1 unavailable */
    CUdeviceptr base;
    cudaIpcMemHandle_t h;
    cudaStream_t rel; /* order_release's writes */
    unsigned seq[NSLOT];
    unsigned char busy[NSLOT];
    unsigned hint;
} odev_t;

typedef struct {
    uint64_t owner;
    int odev, dev; /* the exporter's device, the importer's */
    char *base;    /* mapped on dev */
} opeer_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static odev_t D[MPIACC_CUDA_MAXDEV];
static opeer_t P[PEERS];
static int npeer;
static int drv_state; /* 0 not looked up, 1 ready, -1 unavailable */
static wv32_fn wv32, wait32;
static int off_logged;

static void off(const char *why, int r)
{
    if (__atomic_exchange_n(&off_logged, 1, __ATOMIC_RELAXED)) return;
    MPIACC_LOG(MPIACC_LOG_WARN,
               "CUDA IPC: stream-ordered sends keep host order (%s, %d): their requests complete on the receiver's "
               "answer",
               why, r);
}

/* Driver entry points (lock held). */
static int drv_locked(void)
{
    if (drv_state == 0) {
        wv32 = (wv32_fn)mpiacc_cuda_drv_symbol("cuStreamWriteValue32");
        wait32 = (wv32_fn)mpiacc_cuda_drv_symbol("cuStreamWaitValue32");
        drv_state = wv32 && wait32 ? 1 : -1;
        if (drv_state < 0) off("cuStreamWriteValue32 / cuStreamWaitValue32 not found", 0);
    }
    return drv_state > 0;
}

/* The flag array of dev (current; lock held). */
static int dev_ready_locked(int dev)
{
    odev_t *d = &D[dev];
    void *p = NULL;
    cudaError_t ce;
    const size_t bytes = (size_t)NSLOT * STRIDE * sizeof(unsigned);
    if (d->state) return d->state > 0;
    if (!drv_locked()) return d->state = -1, 0;
    d->state = -1;
    if ((ce = cudaStreamCreateWithFlags(&d->rel, cudaStreamNonBlocking)) != cudaSuccess) goto fail;
    if ((ce = cudaMalloc(&p, bytes)) != cudaSuccess) goto fail;
    if ((ce = cudaMemsetAsync(p, 0, bytes, d->rel)) != cudaSuccess ||
        (ce = cudaStreamSynchronize(d->rel)) != cudaSuccess || (ce = cudaIpcGetMemHandle(&d->h, p)) != cudaSuccess)
        goto fail;
    d->base = (CUdeviceptr)(uintptr_t)p;
    memset(d->seq, 0, sizeof d->seq);
    memset(d->busy, 0, sizeof d->busy);
    d->state = 1;
    return 1;
fail:
    cudaGetLastError();
    if (p) cudaFree(p);
    if (d->rel) cudaStreamDestroy(d->rel);
    d->rel = NULL;
    off(cudaGetErrorName(ce), (int)ce);
    return 0;
}

/* gate = 1 + dev * NSLOT + slot */
static void *gate_of(int dev, int slot) { return (void *)(uintptr_t)(1 + (uintptr_t)dev * NSLOT + (uintptr_t)slot); }

int mpiacc_cuda_order_arm(const mpiacc_attrs_t *a, void *dep, mpiacc_ipc_export_t *x, void **gate)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, slot = -1;
    unsigned seq = 0;
    cudaStream_t st = a->has_stream && a->stream ? (cudaStream_t)a->stream : cudaStreamLegacy;
    CUresult r;
    *gate = NULL;
    if (dep) dev = ((mpiacc_cuda_h_t *)dep)->dev;
    else MPIACC_CHECK(mpiacc_cuda_resolve_device(a, &dev));
    if (dev < 0 || dev >= MPIACC_CUDA_MAXDEV) goto fn_exit;
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    pthread_mutex_lock(&lock);
    if (dev_ready_locked(dev)) {
        odev_t *d = &D[dev];
        for (unsigned i = 0; i < NSLOT; i++) {
            unsigned k = (d->hint + i) % NSLOT;
            if (!d->busy[k]) {
                d->busy[k] = 1, d->hint = k + 1, slot = (int)k;
                break;
            }
        }
        if (slot >= 0) {
            if ((seq = ++d->seq[slot]) == 0) seq = d->seq[slot] = 1; /* the word starts at 0 */
            /* under the lock: waits of one slot enqueued in sequence order */
            r = wait32((CUstream)st, d->base + (CUdeviceptr)slot * STRIDE * sizeof(unsigned), seq,
                       CU_STREAM_WAIT_VALUE_GEQ);
            if (r != CUDA_SUCCESS) {
                d->busy[slot] = 0;
                d->state = -1; /* refused: not tried again on this device */
                slot = -1;
                cudaGetLastError();
                off("cuStreamWaitValue32 refused", (int)r);
            }
        } else {
            MPIACC_LOG(MPIACC_LOG_DEBUG, "CUDA IPC: every stream-order slot of device %d busy: host order", dev);
        }
        if (slot >= 0) {
            memcpy(x->order_handle, &d->h, sizeof d->h);
            x->order_base = (uint64_t)d->base;
        }
    }
    pthread_mutex_unlock(&lock);
    mpiacc_cuda_dev_leave(dev, old);
    if (slot < 0) goto fn_exit;
    x->order_device = dev;
    x->order_slot = (uint32_t)slot;
    x->order_seq = seq;
    x->flags |= MPIACC_IPC_F_ORDER;
    *gate = gate_of(dev, slot);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Writes slot's current value from the host side (lock held, dev current). */
static void host_write_locked(int dev, int slot)
{
    odev_t *d = &D[dev];
    CUresult r = wv32((CUstream)d->rel, d->base + (CUdeviceptr)slot * STRIDE * sizeof(unsigned), d->seq[slot], 0);
    cudaError_t ce = r == CUDA_SUCCESS ? cudaStreamSynchronize(d->rel) : cudaSuccess;
    if (r != CUDA_SUCCESS || ce != cudaSuccess) { /* a plain copy then */
        unsigned v = d->seq[slot];
        cudaGetLastError();
        ce = cudaMemcpyAsync((void *)(uintptr_t)(d->base + (CUdeviceptr)slot * STRIDE * sizeof(unsigned)), &v,
                             sizeof v, cudaMemcpyHostToDevice, d->rel);
        if (ce == cudaSuccess) ce = cudaStreamSynchronize(d->rel);
        if (ce != cudaSuccess)
            MPIACC_LOG(MPIACC_LOG_WARN,
                       "CUDA IPC: releasing a stream-ordered send's wait failed (%s): its stream may wait for ever",
                       cudaGetErrorName(ce));
    }
}

void mpiacc_cuda_order_release(void *gate, int signaled)
{
    uintptr_t g = (uintptr_t)gate - 1;
    int dev = (int)(g / NSLOT), slot = (int)(g % NSLOT), old = -1;
    if (!gate || dev >= MPIACC_CUDA_MAXDEV) return;
    if (!signaled && mpiacc_cuda_dev_enter(dev, &old) != MPI_SUCCESS) old = -2;
    pthread_mutex_lock(&lock);
    if (!signaled && old != -2) host_write_locked(dev, slot);
    D[dev].busy[slot] = 0;
    pthread_mutex_unlock(&lock);
    if (!signaled && old != -2) mpiacc_cuda_dev_leave(dev, old);
}

/* The receiver's side, from import_copy (cuda_ipc.c): st (device dev,
 * current) has the copy enqueued; the flag write goes behind it. */
void mpiacc_cuda_order_signal(const mpiacc_ipc_export_t *x, int dev, cudaStream_t st, mpiacc_cuda_h_t *h)
{
    char *base = NULL;
    CUresult r;
    if (!(x->flags & MPIACC_IPC_F_ORDER) || x->order_slot >= NSLOT || x->order_seq == 0) return;
    pthread_mutex_lock(&lock);
    if (!drv_locked()) goto out;
    if (mpiacc_cuda_ipc_is_own(x)) {
        if (x->order_device == dev) base = (char *)(uintptr_t)x->order_base; /* else: the sender writes it */
    } else {
        for (int i = 0; i < npeer && !base; i++)
            if (P[i].owner == x->owner && P[i].odev == x->order_device && P[i].dev == dev) base = P[i].base;
        if (!base && npeer < PEERS) {
            void *p = NULL;
            cudaIpcMemHandle_t hh;
            memcpy(&hh, x->order_handle, sizeof hh);
            if (cudaIpcOpenMemHandle(&p, hh, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess) {
                P[npeer].owner = x->owner, P[npeer].odev = x->order_device, P[npeer].dev = dev;
                P[npeer++].base = base = p;
            } else {
                cudaGetLastError();
                MPIACC_LOG(MPIACC_LOG_DEBUG, "CUDA IPC: a sender's stream-order flags cannot be mapped; it writes "
                                             "them itself");
            }
        }
    }
    if (!base) goto out;
    r = wv32((CUstream)st, (CUdeviceptr)(uintptr_t)(base + (size_t)x->order_slot * STRIDE * sizeof(unsigned)),
             x->order_seq, 0);
    if (r == CUDA_SUCCESS) h->osig = 1;
    else cudaGetLastError();
out:
    pthread_mutex_unlock(&lock);
}

int mpiacc_cuda_order_signaled(void *xfer)
{
    const mpiacc_cuda_h_t *h = xfer;
    return h && h->osig;
}

/* MPI_Finalize, after the pool's drain and abandon, even when the backend
 * is left running (core/backend.c): slots still held are released from the
 * host and reported. */
void mpiacc_cuda_order_abandon(void)
{
    int old = -1;
    cudaGetDevice(&old);
    pthread_mutex_lock(&lock);
    for (int dev = 0; dev < MPIACC_CUDA_MAXDEV; dev++) {
        odev_t *d = &D[dev];
        int held = 0;
        if (!d->base || !d->rel || cudaSetDevice(dev) != cudaSuccess) continue;
        for (int s = 0; s < NSLOT; s++)
            if (d->busy[s]) {
                host_write_locked(dev, s);
                d->busy[s] = 0, held++;
            }
        if (held)
            MPIACC_LOG(MPIACC_LOG_WARN,
                       "MPI_Finalize: %d stream-ordered IPC send(s) on device %d never read by their receiver: "
                       "mpiacc released the wait on their streams (the data were not delivered)",
                       held, dev);
    }
    pthread_mutex_unlock(&lock);
    cudaGetLastError();
    if (old >= 0) cudaSetDevice(old);
}

/* The backend's finalize (its streams synchronised): peers' arrays
 * unmapped.  A stream may not have passed its wait yet: the process's own
 * arrays stay allocated (the process's end frees them). */
void mpiacc_cuda_order_finalize(void)
{
    int old = -1;
    cudaGetDevice(&old);
    pthread_mutex_lock(&lock);
    for (int dev = 0; dev < MPIACC_CUDA_MAXDEV; dev++) {
        odev_t *d = &D[dev];
        if (d->rel && cudaSetDevice(dev) == cudaSuccess) cudaStreamDestroy(d->rel);
        memset(d, 0, sizeof *d);
    }
    for (int i = 0; i < npeer; i++)
        if (cudaSetDevice(P[i].dev) == cudaSuccess) cudaIpcCloseMemHandle(P[i].base);
    npeer = 0;
    drv_state = 0;
    off_logged = 0;
    pthread_mutex_unlock(&lock);
    cudaGetLastError();
    if (old >= 0) cudaSetDevice(old);
}
