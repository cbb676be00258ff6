/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_model.c: chooses between "one-shot" (the kernel reads/writes mapped
 * pinned host memory directly) and "device" (kernel into a device temp
 * buffer, then a DMA copy) for non-contiguous transfers to or from host
 * staging — TEMPI §4/§6.3, reduced to a latency + bandwidth model whose
 * parameters are measured once per device at first use (a few ms):
 *   kernel copy device->device, pinned DMA each way, and kernels writing /
 *   reading mapped host memory with 16-byte and 1-byte words.
 * Estimates, for n packed bytes in blocks of b bytes (a block narrower than
 * a 32-byte sector still moves a sector):
 *   strided side   = n * max(1, 32/b) / bw_dev
 *   one-shot pack  = lat_zcw + max(n / bw_zcw(ws), strided side)
 *   device pack    = lat_k + strided side + n / bw_dev + lat_d2h + n / bw_d2h + launch
 * and symmetrically for unpack.  MPIACC_CUDA_PACK overrides the choice.
 */
#include <stdlib.h>

#include "cuda_internal.h"

static int state[MPIACC_CUDA_MAXDEV]; /* 0 not measured, 1 measuring, 2 done */
static char *model_host[MPIACC_CUDA_MAXDEV]; /* measurement buffer, freed at finalize */

static void defaults(mpiacc_cuda_model_t *M)
{
    /* Orientation figures of an H100/H200 PCIe machine (machine-baselines). */
    M->lat_k = 3e-6, M->bw_dev = 1.5e12;
    M->lat_d2h = 3e-6, M->bw_d2h = 50e9;
    M->lat_h2d = 3e-6, M->bw_h2d = 50e9;
    M->lat_zcw = 3e-6, M->bw_zcw16 = 50e9, M->bw_zcw1 = 20e9;
    M->lat_zcr = 3e-6, M->bw_zcr16 = 20e9, M->bw_zcr1 = 5e9;
}

/* A contiguous copy through the strided kernel (n a multiple of ws). */
static cudaError_t kcopy(int ws, int dir, void *dev, void *packed, size_t n, int nsm, cudaStream_t st)
{
    mpiacc_cuda_strided_t s = {0};
    s.nd = 1;
    s.counts[0] = (long long)(n / (size_t)ws);
    s.strides[0] = ws;
    s.nwb = 1;
    s.row_words = s.counts[0];
    s.first_w = 0;
    s.nwords = s.counts[0];
    return (cudaError_t)mpiacc_cuda_launch_strided(ws, dir, dev, packed, &s, nsm, NULL, st);
}

enum { OP_D2H, OP_H2D, OP_KDEV, OP_ZCW16, OP_ZCW1, OP_ZCR16, OP_ZCR1, OP_N };

static cudaError_t run_op(int op, size_t n, char *d, char *h, int nsm, cudaStream_t st)
{
    size_t half = n; /* d holds 2n bytes */
    switch (op) {
    case OP_D2H: return cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, st);
    case OP_H2D: return cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, st);
    case OP_KDEV: return kcopy(16, MPIACC_CUDA_DIR_PACK, d, d + half, n, nsm, st);
    case OP_ZCW16: return kcopy(16, MPIACC_CUDA_DIR_PACK, d, h, n, nsm, st);
    case OP_ZCW1: return kcopy(1, MPIACC_CUDA_DIR_PACK, d, h, n, nsm, st);
    case OP_ZCR16: return kcopy(16, MPIACC_CUDA_DIR_UNPACK, d, h, n, nsm, st);
    default: return kcopy(1, MPIACC_CUDA_DIR_UNPACK, d, h, n, nsm, st);
    }
}

static cudaError_t time_op(int op, size_t n, char *d, char *h, int nsm, cudaStream_t st, cudaEvent_t e0,
                           cudaEvent_t e1, double *secs)
{
    cudaError_t e = cudaSuccess;
    float ms;
    *secs = 1e30;
    for (int rep = 0; rep < 4 && e == cudaSuccess; rep++) {
        if ((e = cudaEventRecord(e0, st)) != cudaSuccess) break;
        if ((e = run_op(op, n, d, h, nsm, st)) != cudaSuccess) break;
        if ((e = cudaEventRecord(e1, st)) != cudaSuccess) break;
        if ((e = cudaEventSynchronize(e1)) != cudaSuccess) break;
        if ((e = cudaEventElapsedTime(&ms, e0, e1)) != cudaSuccess) break;
        if (rep > 0 && ms * 1e-3 < *secs) *secs = ms * 1e-3; /* rep 0 warms up */
    }
    return e;
}

/* Fits lat + n/bw through two sizes; keeps the default when the fit is silly. */
static void fit(double n1, double t1, double n2, double t2, double *lat, double *bw)
{
    if (t2 <= t1 || t1 <= 0) return;
    double b = (n2 - n1) / (t2 - t1), l = t1 - n1 / b;
    *bw = b;
    *lat = l > 0 ? l : 0;
}

static int measure(int dev, mpiacc_cuda_model_t *M)
{
    int mpi_errno = MPI_SUCCESS;
    const size_t n1 = 64 << 10, n2 = 4 << 20;
    cudaStream_t st = mpiacc_cuda_devs[dev].service;
    cudaEvent_t e0 = NULL, e1 = NULL;
    char *d = NULL, *h = NULL;
    double t[OP_N][2];
    double *lat[OP_N] = {&M->lat_d2h, &M->lat_h2d, &M->lat_k, &M->lat_zcw, NULL, &M->lat_zcr, NULL};
    double *bw[OP_N] = {&M->bw_d2h, &M->bw_h2d, &M->bw_dev, &M->bw_zcw16, &M->bw_zcw1, &M->bw_zcr16, &M->bw_zcr1};

    MPIACC_CHECK(mpiacc_cuda_dev_alloc(dev, 2 * n2, (void **)&d));
    MPIACC_CUDA_CHECK(cudaHostAlloc((void **)&h, n2, cudaHostAllocMapped | cudaHostAllocPortable));
    MPIACC_CUDA_CHECK(cudaEventCreate(&e0));
    MPIACC_CUDA_CHECK(cudaEventCreate(&e1));
    MPIACC_CUDA_CHECK(cudaMemsetAsync(d, 0, 2 * n2, st));
    for (int op = 0; op < OP_N; op++) {
        MPIACC_CUDA_CHECK(time_op(op, n1, d, h, mpiacc_cuda_devs[dev].nsm, st, e0, e1, &t[op][0]));
        MPIACC_CUDA_CHECK(time_op(op, n2, d, h, mpiacc_cuda_devs[dev].nsm, st, e0, e1, &t[op][1]));
        double l = 0, b = *bw[op];
        fit((double)n1, t[op][0], (double)n2, t[op][1], &l, &b);
        *bw[op] = b;
        if (lat[op]) *lat[op] = l;
    }
    MPIACC_LOG(MPIACC_LOG_INFO,
               "CUDA device %d model: kernel %.2f us + %.0f GB/s; D2H %.2f us + %.1f GB/s; H2D %.2f us + %.1f "
               "GB/s; zero-copy write %.1f/%.1f GB/s (16 B/1 B words), read %.1f/%.1f GB/s",
               dev, M->lat_k * 1e6, M->bw_dev * 1e-9, M->lat_d2h * 1e6, M->bw_d2h * 1e-9, M->lat_h2d * 1e6,
               M->bw_h2d * 1e-9, M->bw_zcw16 * 1e-9, M->bw_zcw1 * 1e-9, M->bw_zcr16 * 1e-9, M->bw_zcr1 * 1e-9);
fn_exit:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    /* cudaFreeHost waits for the whole device (the application's kernels
     * too): keep the buffer until MPI_Finalize. */
    if (h) model_host[dev] = h;
    if (d) mpiacc_cuda_dev_free(dev, d);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_cuda_model_ensure(int dev)
{
    int mpi_errno = MPI_SUCCESS, expect = 0;
    mpiacc_cuda_model_t *M = &mpiacc_cuda_devs[dev].model;
    if (__atomic_load_n(&state[dev], __ATOMIC_ACQUIRE) == 2) return MPI_SUCCESS;
    if (!__atomic_compare_exchange_n(&state[dev], &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return MPI_SUCCESS; /* another thread measures; defaults meanwhile */
    mpiacc_cuda_model_t m;
    defaults(&m);
    mpi_errno = measure(dev, &m);
    if (mpi_errno != MPI_SUCCESS) {
        MPIACC_LOG(MPIACC_LOG_WARN, "CUDA device %d: measuring the pack model failed; using defaults", dev);
        defaults(&m);
        mpi_errno = MPI_SUCCESS;
    }
    m.done = 1;
    *M = m; /* published by the release below; never written again until finalize */
    __atomic_store_n(&state[dev], 2, __ATOMIC_RELEASE);
    return mpi_errno;
}

void mpiacc_cuda_model_reset(void)
{
    for (int i = 0; i < MPIACC_CUDA_MAXDEV; i++) {
        __atomic_store_n(&state[i], 0, __ATOMIC_RELEASE);
        if (model_host[i]) cudaFreeHost(model_host[i]);
        model_host[i] = NULL;
    }
}

int mpiacc_cuda_model_oneshot(int dev, int dir, double n, double b, int ws)
{
    mpiacc_cuda_model_t M;
    if (__atomic_load_n(&state[dev], __ATOMIC_ACQUIRE) == 2) M = mpiacc_cuda_devs[dev].model; /* immutable now */
    else defaults(&M);
    int k = ws >= 16 ? 4 : ws >= 8 ? 3 : ws >= 4 ? 2 : ws >= 2 ? 1 : 0;
    double sect = b < 32 ? 32.0 / (b > 0 ? b : 1) : 1.0;
    double strided = n * sect / M.bw_dev, launch = 2e-6;
    double t_one, t_dev;
    if (dir == MPIACC_CUDA_DIR_PACK) {
        double bwz = M.bw_zcw1 + (M.bw_zcw16 - M.bw_zcw1) * k / 4.0;
        t_one = M.lat_zcw + (n / bwz > strided ? n / bwz : strided);
        t_dev = M.lat_k + strided + n / M.bw_dev + M.lat_d2h + n / M.bw_d2h + launch;
    } else {
        double bwz = M.bw_zcr1 + (M.bw_zcr16 - M.bw_zcr1) * k / 4.0;
        t_one = M.lat_zcr + (n / bwz > strided ? n / bwz : strided);
        t_dev = M.lat_h2d + n / M.bw_h2d + M.lat_k + strided + n / M.bw_dev + launch;
    }
    return t_one <= t_dev;
}
