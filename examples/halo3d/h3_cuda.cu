/* SPDX-License-Identifier: BSD-3-Clause */
/* halo3d CUDA backend: on device (node-local rank) % (device count), a
 * main stream of the greatest priority (exchange, shell) and a
 * low-priority one (the core under --overlap), both non-blocking.  Built
 * into halo3d and halo3d-cuda-aware. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "ex_cuda.h"

extern "C" {
#include "halo3d.h"
}

struct h3_dev {
    const h3_grid_t *g;
    cudaStream_t s, lo;    /* main (greatest priority), low priority        */
    void *m[3], *stage[2]; /* arrays and init; device face buffers (send, receive) */
    char *host[2];         /* pinned host face buffers (send, receive)      */
    cudaEvent_t hs[2], lc[2]; /* after each shell / core (parity)          */
    long nshell, ncore;
};

/* The same arithmetic as h3_host.c's step, in the same order (exact
 * products: contraction into FMA changes no bit). */
template <typename T>
__device__ __forceinline__ void h3_point(const T *__restrict__ a, T *__restrict__ b, size_t i, int r, size_t sX,
                                         size_t sXY, T w)
{
    T s = 0;
    for (int k = 1; k <= r; k++)
        s = s + (((a[i - k] + a[i + k]) + (a[i - k * sX] + a[i + k * sX])) + (a[i - k * sXY] + a[i + k * sXY]));
    b[i] = ((T)0.5 * a[i] + w * s) + (T)1;
}

/* One box (array coordinates). */
template <typename T>
__global__ void h3_step_k(const T *__restrict__ a, T *__restrict__ b, h3_box_t bx, int r, int X, int Y, T w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x >= bx.nx || y >= bx.ny || z >= bx.nz) return;
    size_t sX = (size_t)X, sXY = (size_t)X * Y;
    h3_point(a, b, (size_t)(z + bx.z0) * sXY + (size_t)(y + bx.y0) * sX + (size_t)(x + bx.x0), r, sX, sXY, w);
}

/* Up to six boxes (the shell) in one launch: end[q] = prefix sums of their volumes. */
struct h3_boxes_k {
    int n;
    long end[6];
    h3_box_t b[6];
};

template <typename T>
__global__ void h3_shell_k(const T *__restrict__ a, T *__restrict__ b, h3_boxes_k bs, int r, int X, int Y, T w)
{
    long k = (long)blockIdx.x * blockDim.x + threadIdx.x;
    int q = 0;
    if (k >= bs.end[bs.n - 1]) return;
    while (k >= bs.end[q]) q++;
    k -= q ? bs.end[q - 1] : 0;
    const h3_box_t &bx = bs.b[q];
    int x = (int)(k % bx.nx), y = (int)(k / bx.nx % bx.ny), z = (int)(k / ((long)bx.nx * bx.ny));
    size_t sX = (size_t)X, sXY = (size_t)X * Y;
    h3_point(a, b, (size_t)(z + bx.z0) * sXY + (size_t)(y + bx.y0) * sX + (size_t)(x + bx.x0), r, sX, sXY, w);
}

/* H3-LOC-BEGIN faces */
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

/* H3-LOC-END */

static void cu_destroy(h3_dev_t *d)
{
    if (!d) return;
    for (int b = 0; b < 3; b++)
        if (d->m[b]) cudaFree(d->m[b]);
    for (int b = 0; b < 2; b++) {
        if (d->stage[b]) cudaFree(d->stage[b]);
        if (d->host[b]) cudaFreeHost(d->host[b]);
        if (d->hs[b]) cudaEventDestroy(d->hs[b]);
        if (d->lc[b]) cudaEventDestroy(d->lc[b]);
    }
    if (d->s) cudaStreamDestroy(d->s);
    if (d->lo) cudaStreamDestroy(d->lo);
    free(d);
}

static int cu_reset(h3_dev_t *d)
{
    d->nshell = d->ncore = 0;
    return ex_cu_reset(d->s, d->lo, d->m, d->g->elems * d->g->es);
}

static int cu_create(const h3_grid_t *g, const void *init, h3_dev_t **out)
{
    size_t fbytes = (size_t)g->face_total * g->es;
    h3_dev_t *d = (h3_dev_t *)calloc(1, sizeof *d);
    *out = d;
    if (!d) return ex_error("out of memory");
    d->g = g;
    if (ex_cu_setup(g->local_rank, &d->s, &d->lo, d->m, g->elems * g->es, init)) return 1;
    for (int b = 0; b < 2; b++) {
        CU_TRY(cudaMalloc(&d->stage[b], fbytes));
        CU_TRY(cudaMemset(d->stage[b], 0, fbytes));
        CU_TRY(cudaMallocHost((void **)&d->host[b], fbytes));
        memset(d->host[b], 0, fbytes);
        CU_TRY(cudaEventCreateWithFlags(&d->hs[b], cudaEventDisableTiming));
        CU_TRY(cudaEventCreateWithFlags(&d->lc[b], cudaEventDisableTiming));
    }
    return cu_reset(d);
}

static int cu_download(h3_dev_t *d, int buf, void *dst)
{
    CU_TRY(cudaStreamSynchronize(d->lo));
    CU_TRY(cudaMemcpyAsync(dst, d->m[buf], d->g->elems * d->g->es, cudaMemcpyDeviceToHost, d->s));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

template <typename T>
static int launch_box(h3_dev_t *d, int buf, const h3_box_t *bx, cudaStream_t st)
{
    const h3_grid_t *g = d->g;
    dim3 blk(32, 4, 1), grd((bx->nx + 31) / 32, (bx->ny + 3) / 4, bx->nz);
    if (bx->nx <= 0 || bx->ny <= 0 || bx->nz <= 0) return 0;
    h3_step_k<T><<<grd, blk, 0, st>>>((const T *)d->m[buf], (T *)d->m[!buf], *bx, g->r, g->X, g->Y,
                                      (T)h3_arm_weight(g->r));
    CU_TRY(cudaGetLastError());
    return 0;
}

template <typename T>
static int launch_shell(h3_dev_t *d, int buf)
{
    const h3_grid_t *g = d->g;
    h3_boxes_k bs;
    long tot = 0;
    memset(&bs, 0, sizeof bs);
    bs.n = h3_shell_boxes(g, bs.b);
    for (int q = 0; q < bs.n; q++) bs.end[q] = tot += (long)bs.b[q].nz * bs.b[q].ny * bs.b[q].nx;
    if (!tot) return 0;
    h3_shell_k<T><<<(unsigned)((tot + 255) / 256), 256, 0, d->s>>>((const T *)d->m[buf], (T *)d->m[!buf], bs, g->r,
                                                                   g->X, g->Y, (T)h3_arm_weight(g->r));
    CU_TRY(cudaGetLastError());
    return 0;
}

template <typename T>
static int step_t(h3_dev_t *d, int buf, int how)
{
    const h3_grid_t *g = d->g;
    h3_box_t all = {g->r, g->r, g->r, g->n[0], g->n[1], g->n[2]}, core;
    if (how == H3_STEP_PLAIN) return launch_box<T>(d, buf, &all, d->s);
    if (how == H3_STEP_CORE) { /* after the previous shell (it reads what that wrote) */
        if (d->nshell) CU_TRY(cudaStreamWaitEvent(d->lo, d->hs[(d->nshell - 1) & 1], 0));
        if (h3_core_box(g, &core) && launch_box<T>(d, buf, &core, d->lo)) return 1;
        CU_TRY(cudaEventRecord(d->lc[d->ncore & 1], d->lo));
        d->ncore++;
        return 0;
    }
    /* shell: after the core before the one just launched, and the exchange (same stream) */
    if (d->ncore >= 2) CU_TRY(cudaStreamWaitEvent(d->s, d->lc[(d->ncore - 2) & 1], 0));
    if (launch_shell<T>(d, buf)) return 1;
    CU_TRY(cudaEventRecord(d->hs[d->nshell & 1], d->s));
    d->nshell++;
    return 0;
}

static int cu_step(h3_dev_t *d, int buf, int how)
{
    return d->g->dp ? step_t<double>(d, buf, how) : step_t<float>(d, buf, how);
}

static int cu_finish(h3_dev_t *d)
{
    CU_TRY(cudaStreamSynchronize(d->lo));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

/* H3-LOC-BEGIN faces */
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

static int cu_pack(h3_dev_t *d, int buf) { return faces(d, buf, 0); }
static int cu_unpack(h3_dev_t *d, int buf) { return faces(d, buf, 1); }
/* H3-LOC-END */

/* H3-LOC-BEGIN manual */
static int cu_to_host(h3_dev_t *d)
{
    CU_TRY(cudaMemcpyAsync(d->host[0], d->stage[0], (size_t)d->g->face_total * d->g->es, cudaMemcpyDeviceToHost,
                           d->s));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int cu_to_device(h3_dev_t *d)
{
    CU_TRY(cudaMemcpyAsync(d->stage[1], d->host[1], (size_t)d->g->face_total * d->g->es, cudaMemcpyHostToDevice,
                           d->s));
    return 0;
}
/* H3-LOC-END */

/* H3-LOC-BEGIN cuda-aware */
static int cu_sync(h3_dev_t *d)
{
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

static int cu_self_copy(h3_dev_t *d, long roff, long soff, long n)
{
    size_t es = d->g->es;
    CU_TRY(cudaMemcpyAsync((char *)d->stage[1] + roff * es, (char *)d->stage[0] + soff * es, n * es,
                           cudaMemcpyDeviceToDevice, d->s));
    return 0;
}
/* H3-LOC-END */

static void *cu_face_buf(h3_dev_t *d, int dir) { return d->stage[dir]; }
static void *cu_host_send(h3_dev_t *d) { return d->host[0]; }
static void *cu_host_recv(h3_dev_t *d) { return d->host[1]; }
static void *cu_mpi_buf(h3_dev_t *d, int buf) { return d->m[buf]; }
static void *cu_queue(h3_dev_t *d) { return (void *)d->s; }

static h3_backend_t make_backend(void)
{
    h3_backend_t b;
    memset(&b, 0, sizeof b);
    b.name = "cuda";
    b.probe = ex_cu_probe;
    b.create = cu_create;
    b.destroy = cu_destroy;
    b.reset = cu_reset;
    b.download = cu_download;
    b.step = cu_step;
    b.finish = cu_finish;
    b.pack = cu_pack;
    b.unpack = cu_unpack;
    b.to_host = cu_to_host;
    b.to_device = cu_to_device;
    b.dev_face_buf = cu_face_buf;
    b.sync = cu_sync;
    b.self_copy = cu_self_copy;
    b.host_send = cu_host_send;
    b.host_recv = cu_host_recv;
    b.mpi_buf = cu_mpi_buf;
    b.queue = cu_queue;
    return b;
}

static h3_backend_t backend = make_backend();

extern "C" void *h3_cuda_buf_type(void); /* halo3d.c: MPIACC_BUF_CUDA, or NULL without mpiacc */

extern "C" const h3_backend_t *h3_cuda_backend(void)
{
    backend.buf_type = h3_cuda_buf_type();
    return &backend;
}
