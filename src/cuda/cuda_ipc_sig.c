/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_ipc_sig.c: the IPC path's variants of issue 23 (bits
 * MPIACC_CUDA_IPCV_* in cuda_internal.h, chosen through the test hook
 * mpiacc_cuda_set_ipc_variant so that bench/pingpong --variant can sweep
 * them) and the completion flags of IPCV_FLAG:
 *
 * A slot is one 32-bit word of mapped pinned host memory (one 64-byte line
 * each, process-wide, portable to every device).  After an import's copy the
 * stream writes the slot's next sequence number there with
 * cuStreamWriteValue32 (default flags: the write is ordered after the
 * copy's memory writes); the handle's test is then a plain load compared
 * with that number (no cudaEventQuery, no event recorded).  Every 64th
 * test also asks cudaStreamQuery on the handle's stream, so an
 * asynchronous error (the flag is then never written) ends the wait.  No
 * slot free, no driver entry point, or a write refused: the caller records
 * an event as before (a refused write turns the flags off for the process,
 * logged once).
 */
#include <stdlib.h>
#include <string.h>

#include <cuda.h> /* driver API types only */

#include "cuda_ipc.h"

#define NSLOT 256
#define STRIDE 16 /* 32-bit words per slot: one 64-byte line */

int mpiacc_cuda_ipc_variant = MPIACC_CUDA_IPCV_DEFAULT;
long mpiacc_cuda_ipcv_used[MPIACC_CUDA_IPCV_NBITS];

typedef CUresult (*wv32_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

static struct {
    int state; /* 0 not set up, 2 being set up, 1 ready, -1 unavailable */
    wv32_fn wv32;
    volatile unsigned *host;
    CUdeviceptr dev;
    unsigned seq[NSLOT];
    int busy[NSLOT];
    unsigned hint;
} F;

static void setup(void)
{
    void *h = NULL, *dp = NULL;
    const size_t bytes = (size_t)NSLOT * STRIDE * sizeof(unsigned);
    F.wv32 = (wv32_fn)mpiacc_cuda_drv_symbol("cuStreamWriteValue32");
    if (!F.wv32) goto fail;
    if (cudaHostAlloc(&h, bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) goto fail;
    memset(h, 0, bytes);
    if (cudaHostGetDevicePointer(&dp, h, 0) != cudaSuccess) goto fail;
    F.host = h;
    F.dev = (CUdeviceptr)(uintptr_t)dp;
    memset(F.seq, 0, sizeof F.seq);
    memset(F.busy, 0, sizeof F.busy);
    __atomic_store_n(&F.state, 1, __ATOMIC_RELEASE);
    return;
fail:
    cudaGetLastError();
    if (h) cudaFreeHost(h);
    MPIACC_LOG(MPIACC_LOG_WARN, "CUDA IPC: no completion flags (cuStreamWriteValue32 or mapped memory unavailable); "
                                "imports complete through events");
    __atomic_store_n(&F.state, -1, __ATOMIC_RELEASE);
}

int mpiacc_cuda_flag_signal(mpiacc_cuda_h_t *h, cudaStream_t st, int bitno, int *used)
{
    int slot = -1;
    unsigned seq;
    CUresult r;
    *used = 0;
    if (__atomic_load_n(&F.state, __ATOMIC_ACQUIRE) == 0) {
        int expect = 0;
        if (__atomic_compare_exchange_n(&F.state, &expect, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) setup();
    }
    if (__atomic_load_n(&F.state, __ATOMIC_ACQUIRE) != 1) return MPI_SUCCESS;
    for (unsigned i = 0, hint = __atomic_load_n(&F.hint, __ATOMIC_RELAXED); i < NSLOT; i++) {
        unsigned k = (hint + i) % NSLOT;
        int expect = 0;
        if (__atomic_compare_exchange_n(&F.busy[k], &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            __atomic_store_n(&F.hint, k + 1, __ATOMIC_RELAXED);
            slot = (int)k;
            break;
        }
    }
    if (slot < 0) return MPI_SUCCESS;
    if ((seq = ++F.seq[slot]) == 0) seq = F.seq[slot] = 1; /* the word starts at 0 */
    r = F.wv32((CUstream)st, F.dev + (CUdeviceptr)slot * STRIDE * sizeof(unsigned), seq, 0);
    if (r != CUDA_SUCCESS) {
        __atomic_store_n(&F.busy[slot], 0, __ATOMIC_RELEASE);
        if (__atomic_exchange_n(&F.state, -1, __ATOMIC_ACQ_REL) == 1)
            MPIACC_LOG(MPIACC_LOG_WARN, "CUDA IPC: cuStreamWriteValue32 refused (CUresult %d); completion flags off, "
                                        "imports complete through events", (int)r);
        return MPI_SUCCESS;
    }
    h->fslot = slot, h->fseq = seq, h->fpolls = 0;
    *used = 1;
    MPIACC_CUDA_IPCV_USED(bitno);
    return MPI_SUCCESS;
}

int mpiacc_cuda_flag_test(mpiacc_cuda_h_t *h, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    *done = 0;
    if (F.host[(size_t)h->fslot * STRIDE] == h->fseq) {
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        *done = 1;
    } else if ((++h->fpolls & 63) == 0 && h->sidx >= 0) {
        cudaError_t e = cudaStreamQuery(mpiacc_cuda_devs[h->dev].streams[h->sidx]);
        if (e == cudaSuccess) *done = 1; /* the write is behind the copy on that stream */
        else if (e != cudaErrorNotReady) mpi_errno = mpiacc_cuda_err("cudaStreamQuery (IPC copy)", e);
    }
    return mpi_errno;
}

void mpiacc_cuda_flag_put(mpiacc_cuda_h_t *h)
{
    if (h->fslot < 0) return;
    __atomic_store_n(&F.busy[h->fslot], 0, __ATOMIC_RELEASE);
    h->fslot = -1;
}

void mpiacc_cuda_flag_finalize(void)
{
    if (__atomic_load_n(&F.state, __ATOMIC_ACQUIRE) == 1) cudaFreeHost((void *)F.host);
    memset(&F, 0, sizeof F);
}
