/* halo3d CUDA backend: one non-blocking stream per rank on device
 * (node-local rank) % (device count). */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <mpiacc.h>

extern "C" {
#include "halo3d.h"
}

struct h3_dev {
    const h3_grid_t *g;
    cudaStream_t s;
    void *m[2], *stage[2]; /* arrays; device face buffers (send, receive) */
    char *host[2];         /* pinned host face buffers (send, receive)    */
};

#define CU_TRY(call_)                                                                                    \
    do {                                                                                                 \
        cudaError_t e_ = (call_);                                                                        \
        if (e_ != cudaSuccess)                                                                           \
            return h3_error("%s failed: %s (%s)", #call_, cudaGetErrorName(e_), cudaGetErrorString(e_)); \
    } while (0)

/* The same arithmetic as h3_host.c's step, in the same order. */
template <typename T>
__global__ void h3_step_k(const T *__restrict__ a, T *__restrict__ b, int nz, int ny, int nx, int r, int X, int Y,
                          T w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    size_t sX = (size_t)X, sXY = (size_t)X * Y;
    size_t i = (size_t)(z + r) * sXY + (size_t)(y + r) * sX + (size_t)(x + r);
    T s = 0;
    for (int k = 1; k <= r; k++)
        s = s + (((a[i - k] + a[i + k]) + (a[i - k * sX] + a[i + k * sX])) + (a[i - k * sXY] + a[i + k * sXY]));
    b[i] = ((T)0.5 * a[i] + w * s) + (T)1;
}

/* The six faces in order f = 0..5, z slowest, x fastest (the subarrays'
 * order); unpack writes the halo boxes of the faces in mask. */
template <typename T>
__global__ void h3_faces_k(T *a, T *st, int nz, int ny, int nx, int r, int X, int Y, int unpack, int mask,
                           int total)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= total) return;
    int n[3] = {nz, ny, nx}, sub[3], f, i = g;
    for (f = 0; f < 6; f++) {
        sub[0] = nz, sub[1] = ny, sub[2] = nx, sub[f / 2] = r;
        int cnt = sub[0] * sub[1] * sub[2];
        if (i < cnt) break;
        i -= cnt;
    }
    int d = f / 2, up = f % 2, c[3];
    c[2] = i % sub[2], c[1] = i / sub[2] % sub[1], c[0] = i / (sub[2] * sub[1]);
    for (int k = 0; k < 3; k++) c[k] += r;
    c[d] += unpack ? (up ? n[d] : -r) : (up ? n[d] - r : 0);
    size_t idx = ((size_t)c[0] * Y + c[1]) * X + c[2];
    if (!unpack) st[g] = a[idx];
    else if (mask >> f & 1) a[idx] = st[g];
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

static void cu_destroy(h3_dev_t *d)
{
    if (!d) return;
    for (int b = 0; b < 2; b++) {
        if (d->m[b]) cudaFree(d->m[b]);
        if (d->stage[b]) cudaFree(d->stage[b]);
        if (d->host[b]) cudaFreeHost(d->host[b]);
    }
    if (d->s) cudaStreamDestroy(d->s);
    free(d);
}

static int cu_create(const h3_grid_t *g, h3_dev_t **out)
{
    int n = 0;
    size_t fbytes = (size_t)g->face_total * g->es;
    h3_dev_t *d = (h3_dev_t *)calloc(1, sizeof *d);
    *out = d;
    if (!d) return h3_error("out of memory");
    d->g = g;
    CU_TRY(cudaGetDeviceCount(&n));
    CU_TRY(cudaSetDevice(g->local_rank % n));
    CU_TRY(cudaStreamCreateWithFlags(&d->s, cudaStreamNonBlocking));
    for (int b = 0; b < 2; b++) {
        CU_TRY(cudaMalloc(&d->m[b], g->elems * g->es));
        CU_TRY(cudaMalloc(&d->stage[b], fbytes));
        CU_TRY(cudaMallocHost((void **)&d->host[b], fbytes));
        memset(d->host[b], 0, fbytes);
    }
    return 0;
}

static int cu_upload(h3_dev_t *d, int buf, const void *src)
{
    CU_TRY(cudaMemcpyAsync(d->m[buf], src, d->g->elems * d->g->es, cudaMemcpyHostToDevice, d->s));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int cu_download(h3_dev_t *d, int buf, void *dst)
{
    CU_TRY(cudaMemcpyAsync(dst, d->m[buf], d->g->elems * d->g->es, cudaMemcpyDeviceToHost, d->s));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int cu_step(h3_dev_t *d, int buf)
{
    const h3_grid_t *g = d->g;
    dim3 blk(32, 4, 1), grd((g->n[2] + 31) / 32, (g->n[1] + 3) / 4, g->n[0]);
    if (g->dp)
        h3_step_k<double><<<grd, blk, 0, d->s>>>((const double *)d->m[buf], (double *)d->m[!buf], g->n[0], g->n[1],
                                                 g->n[2], g->r, g->X, g->Y, h3_arm_weight(g->r));
    else
        h3_step_k<float><<<grd, blk, 0, d->s>>>((const float *)d->m[buf], (float *)d->m[!buf], g->n[0], g->n[1],
                                                g->n[2], g->r, g->X, g->Y, (float)h3_arm_weight(g->r));
    CU_TRY(cudaGetLastError());
    return 0;
}

static int cu_finish(h3_dev_t *d)
{
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int faces(h3_dev_t *d, int buf, int unpack)
{
    const h3_grid_t *g = d->g;
    int t = g->face_total, nb = (t + 255) / 256;
    if (g->dp)
        h3_faces_k<double><<<nb, 256, 0, d->s>>>((double *)d->m[buf], (double *)d->stage[unpack], g->n[0], g->n[1],
                                                g->n[2], g->r, g->X, g->Y, unpack, g->recv_mask, t);
    else
        h3_faces_k<float><<<nb, 256, 0, d->s>>>((float *)d->m[buf], (float *)d->stage[unpack], g->n[0], g->n[1],
                                               g->n[2], g->r, g->X, g->Y, unpack, g->recv_mask, t);
    CU_TRY(cudaGetLastError());
    return 0;
}

/* Manual staging: one pack kernel, one copy, a synchronize; one copy, one
 * unpack kernel (the next pack's synchronize orders the copy before the
 * host buffer is received into again). */
static int cu_pack(h3_dev_t *d, int buf)
{
    if (faces(d, buf, 0)) return 1;
    CU_TRY(cudaMemcpyAsync(d->host[0], d->stage[0], (size_t)d->g->face_total * d->g->es, cudaMemcpyDeviceToHost,
                           d->s));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int cu_unpack(h3_dev_t *d, int buf)
{
    CU_TRY(cudaMemcpyAsync(d->stage[1], d->host[1], (size_t)d->g->face_total * d->g->es, cudaMemcpyHostToDevice,
                           d->s));
    return faces(d, buf, 1);
}

static void *cu_host_send(h3_dev_t *d) { return d->host[0]; }
static void *cu_host_recv(h3_dev_t *d) { return d->host[1]; }
static void *cu_mpi_buf(h3_dev_t *d, int buf) { return d->m[buf]; }
static void *cu_queue(h3_dev_t *d) { return (void *)d->s; }

static h3_backend_t make_backend(void)
{
    h3_backend_t b;
    memset(&b, 0, sizeof b);
    b.name = "cuda";
    b.probe = cu_probe;
    b.create = cu_create;
    b.destroy = cu_destroy;
    b.upload = cu_upload;
    b.download = cu_download;
    b.step = cu_step;
    b.finish = cu_finish;
    b.pack = cu_pack;
    b.unpack = cu_unpack;
    b.host_send = cu_host_send;
    b.host_recv = cu_host_recv;
    b.mpi_buf = cu_mpi_buf;
    b.queue = cu_queue;
    b.buf_type = MPIACC_BUF_CUDA;
    return b;
}

static const h3_backend_t backend = make_backend();

extern "C" const h3_backend_t *h3_cuda_backend(void) { return &backend; }
