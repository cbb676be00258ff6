/* stencil2d CUDA backend: one non-blocking stream per rank on device
 * (node-local rank) % (device count); ranks beyond the device count share
 * devices (with MPS, see docs/scaling.md). */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <mpiacc.h>

extern "C" {
#include "stencil2d.h"
}

struct st_dev {
    const st_grid_t *g;
    cudaStream_t s;
    void *m[2];
    char *host; /* pinned staging matrix of the manual variant */
    cudaEvent_t *ev; /* start/stop pairs of the kernels since the last finish() */
    int nev, cap;
};

#define CU_TRY(call_)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (call_);                                                              \
        if (e_ != cudaSuccess)                                                                 \
            return st_error("%s failed: %s (%s)", #call_, cudaGetErrorName(e_), cudaGetErrorString(e_)); \
    } while (0)

template <typename T>
__global__ void st_step_k(const T *__restrict__ a, T *__restrict__ b, int R, int C, int P, T wc, T wk,
                          T wd)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1, i = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i >= R - 1 || j >= C - 1) return;
    const T *n = a + (size_t)(i - 1) * P, *c = n + P, *s = c + P;
    b[(size_t)i * P + j] = wc * c[j] + wk * (n[j] + s[j] + c[j - 1] + c[j + 1]) +
                           wd * (n[j - 1] + n[j + 1] + s[j - 1] + s[j + 1]);
}

template <typename T>
__global__ void st_ring_k(const T *__restrict__ a, T *__restrict__ b, int R, int C, int P)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    size_t x;
    if (k < C) x = (size_t)k;
    else if (k < 2 * C) x = (size_t)(R - 1) * P + (k - C);
    else if (k < 2 * C + R) x = (size_t)(k - 2 * C) * P;
    else if (k < 2 * C + 2 * R) x = (size_t)(k - 2 * C - R) * P + C - 1;
    else return;
    b[x] = a[x];
}

static int cu_probe(int local_rank, char *desc, size_t len, int *ndev)
{
    int n = 0;
    cudaDeviceProp p;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return 0;
    }
    if (cudaGetDeviceProperties(&p, local_rank % n) != cudaSuccess) return 0;
    snprintf(desc, len, "CUDA device %d of %d: %s", local_rank % n, n, p.name);
    *ndev = n;
    return 1;
}

static void cu_destroy(st_dev_t *d)
{
    if (!d) return;
    for (int i = 0; i < d->cap; i++) cudaEventDestroy(d->ev[i]);
    for (int b = 0; b < 2; b++)
        if (d->m[b]) cudaFree(d->m[b]);
    if (d->host) cudaFreeHost(d->host);
    if (d->s) cudaStreamDestroy(d->s);
    free(d->ev);
    free(d);
}

static int cu_create(const st_grid_t *g, st_dev_t **out)
{
    int n = 0;
    size_t bytes = (size_t)g->R * g->P * g->es;
    st_dev_t *d = (st_dev_t *)calloc(1, sizeof *d);
    *out = d;
    if (!d) return st_error("out of memory");
    d->g = g;
    CU_TRY(cudaGetDeviceCount(&n));
    CU_TRY(cudaSetDevice(g->local_rank % n));
    CU_TRY(cudaStreamCreateWithFlags(&d->s, cudaStreamNonBlocking));
    for (int b = 0; b < 2; b++) {
        CU_TRY(cudaMalloc(&d->m[b], bytes));
        CU_TRY(cudaMemset(d->m[b], 0, bytes));
    }
    CU_TRY(cudaMallocHost((void **)&d->host, bytes));
    memset(d->host, 0, bytes);
    return 0;
}

static int cu_upload(st_dev_t *d, int buf, const void *src)
{
    CU_TRY(cudaMemcpyAsync(d->m[buf], src, (size_t)d->g->R * d->g->P * d->g->es, cudaMemcpyHostToDevice,
                           d->s));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int cu_download(st_dev_t *d, int buf, void *dst)
{
    CU_TRY(cudaMemcpyAsync(dst, d->m[buf], (size_t)d->g->R * d->g->P * d->g->es, cudaMemcpyDeviceToHost,
                           d->s));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int cu_step(st_dev_t *d, int buf)
{
    const st_grid_t *g = d->g;
    dim3 blk(32, 8), grd((g->C - 2 + 31) / 32, (g->R - 2 + 7) / 8);
    if (d->nev + 2 > d->cap) {
        int cap = d->cap ? 2 * d->cap : 512;
        cudaEvent_t *ev = (cudaEvent_t *)realloc(d->ev, cap * sizeof *ev);
        if (!ev) return st_error("out of memory");
        d->ev = ev;
        for (; d->cap < cap; d->cap++) CU_TRY(cudaEventCreate(&d->ev[d->cap]));
    }
    CU_TRY(cudaEventRecord(d->ev[d->nev++], d->s));
    if (g->dp)
        st_step_k<double><<<grd, blk, 0, d->s>>>((const double *)d->m[buf], (double *)d->m[!buf], g->R, g->C,
                                                 g->P, g->wc, g->wk, g->wd);
    else
        st_step_k<float><<<grd, blk, 0, d->s>>>((const float *)d->m[buf], (float *)d->m[!buf], g->R, g->C,
                                                g->P, (float)g->wc, (float)g->wk, (float)g->wd);
    CU_TRY(cudaGetLastError());
    CU_TRY(cudaEventRecord(d->ev[d->nev++], d->s));
    return 0;
}

static int cu_ring(st_dev_t *d, int buf)
{
    const st_grid_t *g = d->g;
    int n = 2 * g->C + 2 * g->R;
    if (g->dp)
        st_ring_k<double><<<(n + 255) / 256, 256, 0, d->s>>>((const double *)d->m[buf], (double *)d->m[!buf],
                                                            g->R, g->C, g->P);
    else
        st_ring_k<float><<<(n + 255) / 256, 256, 0, d->s>>>((const float *)d->m[buf], (float *)d->m[!buf],
                                                           g->R, g->C, g->P);
    CU_TRY(cudaGetLastError());
    return 0;
}

static int cu_finish(st_dev_t *d, double *kernel_s)
{
    CU_TRY(cudaStreamSynchronize(d->s));
    for (int i = 0; i + 1 < d->nev; i += 2) {
        float ms = 0;
        CU_TRY(cudaEventElapsedTime(&ms, d->ev[i], d->ev[i + 1]));
        *kernel_s += ms * 1e-3;
    }
    d->nev = 0;
    return 0;
}

/* ST-LOC-BEGIN manual */
/* h full rows at element offset off, device <-> host staging matrix. */
static int copy_rows(st_dev_t *d, int buf, long off, int to_device)
{
    size_t o = (size_t)off * d->g->es, n = (size_t)d->g->h * d->g->P * d->g->es;
    char *dev = (char *)d->m[buf] + o;
    st_calls.copies++;
    if (to_device) CU_TRY(cudaMemcpyAsync(dev, d->host + o, n, cudaMemcpyHostToDevice, d->s));
    else CU_TRY(cudaMemcpyAsync(d->host + o, dev, n, cudaMemcpyDeviceToHost, d->s));
    return 0;
}

/* h columns at element offset off over all R rows. */
static int copy_cols(st_dev_t *d, int buf, long off, int to_device)
{
    size_t o = (size_t)off * d->g->es, pitch = (size_t)d->g->P * d->g->es, w = d->g->h * d->g->es;
    char *dev = (char *)d->m[buf] + o;
    st_calls.copies++;
    if (to_device)
        CU_TRY(cudaMemcpy2DAsync(dev, pitch, d->host + o, pitch, w, d->g->R, cudaMemcpyHostToDevice, d->s));
    else
        CU_TRY(cudaMemcpy2DAsync(d->host + o, pitch, dev, pitch, w, d->g->R, cudaMemcpyDeviceToHost, d->s));
    return 0;
}

static int sync_stream(st_dev_t *d)
{
    st_calls.syncs++;
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int cu_exchange_manual(st_dev_t *d, int buf)
{
    const st_grid_t *g = d->g;
    for (int s = 0; s < 2; s++) { /* device -> host: the blocks to send */
        if (g->nbr[ST_ROWS][s] != MPI_PROC_NULL && copy_rows(d, buf, g->send_off[ST_ROWS][s], 0)) return 1;
        if (g->nbr[ST_COLS][s] != MPI_PROC_NULL && copy_cols(d, buf, g->send_off[ST_COLS][s], 0)) return 1;
    }
    if (sync_stream(d) || st_host_exchange(g, d->host)) return 1;
    for (int s = 0; s < 2; s++) { /* host -> device: the halos received */
        if (g->nbr[ST_ROWS][s] != MPI_PROC_NULL && copy_rows(d, buf, g->recv_off[ST_ROWS][s], 1)) return 1;
        if (g->nbr[ST_COLS][s] != MPI_PROC_NULL && copy_cols(d, buf, g->recv_off[ST_COLS][s], 1)) return 1;
    }
    if (sync_stream(d)) return 1;
    return cu_ring(d, buf);
}
/* ST-LOC-END */

static void *cu_mpi_buf(st_dev_t *d, int buf) { return d->m[buf]; }
static void *cu_queue(st_dev_t *d) { return (void *)d->s; }

static st_backend_t make_backend(void)
{
    st_backend_t b;
    memset(&b, 0, sizeof b);
    b.name = "cuda";
    b.offsets_in_type = 0;
    b.probe = cu_probe;
    b.create = cu_create;
    b.destroy = cu_destroy;
    b.upload = cu_upload;
    b.download = cu_download;
    b.step = cu_step;
    b.ring = cu_ring;
    b.finish = cu_finish;
    b.exchange_manual = cu_exchange_manual;
    b.mpi_buf = cu_mpi_buf;
    b.queue = cu_queue;
    b.buf_type = MPIACC_BUF_CUDA;
    return b;
}

static const st_backend_t backend = make_backend();

extern "C" const st_backend_t *st_cuda_backend(void) { return &backend; }
