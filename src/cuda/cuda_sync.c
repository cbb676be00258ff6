/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_sync.c: how a blocking call (pack_dev / unpack_dev: MPI_Pack and
 * MPI_Unpack on device buffers) waits for its one kernel or copy.
 * MPIACC_CUDA_SYNC (or the test hook mpiacc_cuda_set_sync) picks the method:
 *   stream  cudaStreamSynchronize
 *   query   busy loop on cudaStreamQuery
 *   event   cudaEventRecord (cudaEventDisableTiming) + busy loop on
 *           cudaEventQuery
 *   flag    (default) the kernel's last block writes a sequence number
 *           into mapped pinned memory after a system-scope fence (see
 *           mpiacc_cuda_signal_t); the host polls it with volatile reads, and
 *           every 256 polls asks cudaStreamQuery, so an asynchronous error
 *           or a finished stream ends the loop too.  Copies (no kernel)
 *           wait as in `query`.
 * bench/pack measures all four.  Slots (device counter, host flag word,
 * event) are per device, taken exclusively per call; when none is free the
 * call waits as in `query`.  A slot whose wait failed is never reused.
 * The slots of a device are set up by the first thread that needs them,
 * with no lock held (it allocates and synchronises); calls made meanwhile
 * by other threads wait as in `query`.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "core/env.h"

#define NSLOT 64
#define SLOT_STRIDE 32 /* unsigned ints: one 128-byte line per slot */

typedef struct sigdev {
    int state;              /* 0 not set up, 2 being set up, 1 ready, -1 unavailable */
    unsigned *dcount;       /* device counters                       */
    unsigned *hflag;        /* mapped pinned flags (host pointer)    */
    unsigned *dflag;        /* the same, device pointer              */
    cudaEvent_t ev[NSLOT];
    unsigned seq[NSLOT];
    int busy[NSLOT];        /* 0 free, 1 taken, 2 poisoned           */
} sigdev_t;

static sigdev_t sigs[MPIACC_CUDA_MAXDEV];
int mpiacc_cuda_sync_choice = -1; /* MPIACC_CUDA_SYNC_*, read from the environment at first use */

int mpiacc_cuda_sync_mode(void)
{
    int m = __atomic_load_n(&mpiacc_cuda_sync_choice, __ATOMIC_RELAXED);
    if (m < 0) {
        m = mpiacc_env_enum("MPIACC_CUDA_SYNC"); /* stream|query|event|flag: MPIACC_CUDA_SYNC_* */
        __atomic_store_n(&mpiacc_cuda_sync_choice, m, __ATOMIC_RELAXED);
    }
    return m;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* First use on dev (dev current; the caller moved state 0 -> 2, no lock
 * held).  Failure only disables slots. */
static void setup(int dev)
{
    sigdev_t *S = &sigs[dev];
    void *h = NULL, *dp = NULL, *dc = NULL;
    int nev = 0;
    const size_t bytes = (size_t)NSLOT * SLOT_STRIDE * sizeof(unsigned);
    if (cudaHostAlloc(&h, bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) goto fail;
    memset(h, 0, bytes);
    if (cudaHostGetDevicePointer(&dp, h, 0) != cudaSuccess) goto fail;
    /* on the non-blocking service stream: the legacy stream would wait for
     * the application's work on blocking streams */
    if (cudaMalloc(&dc, bytes) != cudaSuccess ||
        cudaMemsetAsync(dc, 0, bytes, mpiacc_cuda_devs[dev].service) != cudaSuccess ||
        cudaStreamSynchronize(mpiacc_cuda_devs[dev].service) != cudaSuccess)
        goto fail;
    for (nev = 0; nev < NSLOT; nev++)
        if (cudaEventCreateWithFlags(&S->ev[nev], cudaEventDisableTiming) != cudaSuccess) goto fail;
    S->hflag = h, S->dflag = dp, S->dcount = dc;
    memset(S->seq, 0, sizeof S->seq);
    memset(S->busy, 0, sizeof S->busy);
    __atomic_store_n(&S->state, 1, __ATOMIC_RELEASE);
    return;
fail:
    cudaGetLastError();
    MPIACC_LOG(MPIACC_LOG_WARN, "CUDA device %d: no completion slots; blocking calls poll the stream", dev);
    while (nev > 0) cudaEventDestroy(S->ev[--nev]);
    if (dc) cudaFree(dc);
    if (h) cudaFreeHost(h);
    __atomic_store_n(&S->state, -1, __ATOMIC_RELEASE);
}

void mpiacc_cuda_wait_prepare(int dev, mpiacc_cuda_wait_t *w)
{
    sigdev_t *S = &sigs[dev];
    static _Thread_local unsigned hint;
    memset(w, 0, sizeof *w);
    w->dev = dev, w->slot = -1;
    w->mode = mpiacc_cuda_sync_mode();
    if (w->mode != MPIACC_CUDA_SYNC_FLAG && w->mode != MPIACC_CUDA_SYNC_EVENT) return;
    if (__atomic_load_n(&S->state, __ATOMIC_ACQUIRE) == 0) {
        int expect = 0;
        if (__atomic_compare_exchange_n(&S->state, &expect, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) setup(dev);
    }
    if (__atomic_load_n(&S->state, __ATOMIC_ACQUIRE) != 1) return;
    for (unsigned i = 0; i < NSLOT; i++) {
        unsigned k = (hint + i) % NSLOT;
        int expect = 0;
        if (__atomic_compare_exchange_n(&S->busy[k], &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            hint = k;
            w->slot = (int)k;
            break;
        }
    }
    if (w->slot < 0 || w->mode != MPIACC_CUDA_SYNC_FLAG) return;
    if (++S->seq[w->slot] == 0) S->seq[w->slot] = 1; /* the flag starts at 0 */
    w->sig.count = S->dcount + (size_t)w->slot * SLOT_STRIDE;
    w->sig.flag = S->dflag + (size_t)w->slot * SLOT_STRIDE;
    w->sig.seq = S->seq[w->slot];
}

static void slot_put(mpiacc_cuda_wait_t *w, int ok)
{
    if (w->slot < 0) return;
    __atomic_store_n(&sigs[w->dev].busy[w->slot], ok ? 0 : 2, __ATOMIC_RELEASE);
    w->slot = -1;
}

static cudaError_t spin_stream(cudaStream_t st)
{
    cudaError_t e;
    while ((e = cudaStreamQuery(st)) == cudaErrorNotReady) cpu_relax();
    return e;
}

static cudaError_t spin_flag(const volatile unsigned *f, unsigned seq, cudaStream_t st)
{
    for (unsigned n = 1;; n++) {
        if (*f == seq) return cudaSuccess;
        if ((n & 255) == 0) {
            cudaError_t e = cudaStreamQuery(st);
            if (e != cudaErrorNotReady) return e; /* done (flag written before the end) or failed */
        }
        cpu_relax();
    }
}

int mpiacc_cuda_wait_finish(mpiacc_cuda_wait_t *w, cudaStream_t st, int kernel_signals)
{
    int mpi_errno = MPI_SUCCESS;
    sigdev_t *S = &sigs[w->dev];
    cudaError_t e;
    const char *what;
    if (w->mode == MPIACC_CUDA_SYNC_FLAG && w->slot >= 0 && kernel_signals) {
        what = "completion flag (cudaStreamQuery)";
        e = spin_flag(S->hflag + (size_t)w->slot * SLOT_STRIDE, w->sig.seq, st);
    } else if (w->mode == MPIACC_CUDA_SYNC_EVENT && w->slot >= 0) {
        what = "cudaEventRecord / cudaEventQuery";
        e = cudaEventRecord(S->ev[w->slot], st);
        if (e == cudaSuccess)
            while ((e = cudaEventQuery(S->ev[w->slot])) == cudaErrorNotReady) cpu_relax();
    } else if (w->mode == MPIACC_CUDA_SYNC_STREAM) {
        what = "cudaStreamSynchronize";
        e = cudaStreamSynchronize(st);
    } else {
        what = "cudaStreamQuery";
        e = spin_stream(st);
    }
    if (e != cudaSuccess) {
        mpi_errno = mpiacc_cuda_err(what, e);
        cudaStreamSynchronize(st);
    }
    slot_put(w, e == cudaSuccess);
    return mpi_errno;
}

void mpiacc_cuda_wait_abandon(mpiacc_cuda_wait_t *w, cudaStream_t st)
{
    if (st) cudaStreamSynchronize(st); /* nothing of ours may still run (with the slot) */
    slot_put(w, 0);
}

void mpiacc_cuda_sync_finalize(void)
{
    int old = -1;
    cudaGetDevice(&old);
    pthread_mutex_lock(&mpiacc_cuda_lock);
    for (int dev = 0; dev < MPIACC_CUDA_MAXDEV; dev++) {
        sigdev_t *S = &sigs[dev];
        if (S->state == 1 && cudaSetDevice(dev) == cudaSuccess) {
            for (int i = 0; i < NSLOT; i++) cudaEventDestroy(S->ev[i]);
            cudaFree(S->dcount);
            cudaFreeHost(S->hflag);
        }
        memset(S, 0, sizeof *S);
    }
    pthread_mutex_unlock(&mpiacc_cuda_lock);
    if (old >= 0) cudaSetDevice(old);
}
