/* SPDX-License-Identifier: BSD-3-Clause */
/* stencil2d CUDA backend: on device (node-local rank) % (device count), a
 * main stream of the greatest priority (boundary work and the exchange) and
 * a low-priority one (the interior under --overlap), both non-blocking;
 * ranks beyond the device count share devices (with MPS, see
 * docs/scaling.md).  Built into stencil2d and stencil2d-cuda-aware. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "ex_cuda.h"

extern "C" {
#include "stencil2d.h"
}

struct st_dev {
    const st_grid_t *g;
    cudaStream_t s, lo;  /* main (greatest priority), low priority          */
    void *m[3];          /* the two matrices and the initial one            */
    char *host;          /* pinned staging matrix of the manual variant (lazy) */
    void *cb[2][2];      /* cuda-aware column buffers [dir][side] (lazy)    */
    cudaEvent_t hb[2];   /* after the boundary band of a split step (parity) */
    cudaEvent_t le[2];   /* after each kernel on the low stream (parity)     */
    cudaEvent_t mark;    /* the main stream before a ST_STEP_LOW step        */
    long nsplit, nlow;
};

/* One point, rounded as written (no contraction into FMA): every kernel
 * computing it gives the same bits. */
__device__ __forceinline__ float st_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float st_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double st_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double st_add(double a, double b) { return __dadd_rn(a, b); }

template <typename T>
__device__ __forceinline__ T st_point(const T *__restrict__ a, int i, int j, int P, T wc, T wk, T wd)
{
    const T *n = a + (size_t)(i - 1) * P, *c = n + P, *s = c + P;
    T card = st_add(st_add(st_add(n[j], s[j]), c[j - 1]), c[j + 1]);
    T diag = st_add(st_add(st_add(n[j - 1], n[j + 1]), s[j - 1]), s[j + 1]);
    return st_add(st_add(st_mul(wc, c[j]), st_mul(wk, card)), st_mul(wd, diag));
}

/* A rectangle of rows [i0, i0 + nr) x columns [j0, j0 + nc). */
template <typename T>
__global__ void st_step_k(const T *__restrict__ a, T *__restrict__ b, int i0, int j0, int nr, int nc, int P, T wc,
                          T wk, T wd)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nr || j >= nc) return;
    b[(size_t)(i + i0) * P + j + j0] = st_point(a, i + i0, j + j0, P, wc, wk, wd);
}

/* Up to four rectangles (the boundary band) in one launch. */
struct st_rects_k {
    int n, start[5];
    st_rect_t r[4];
};

template <typename T>
__global__ void st_band_k(const T *__restrict__ a, T *__restrict__ b, st_rects_k rs, int P, T wc, T wk, T wd)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x, q = 0;
    if (k >= rs.start[rs.n]) return;
    while (k >= rs.start[q + 1]) q++;
    k -= rs.start[q];
    int i = rs.r[q].i0 + k / rs.r[q].nc, j = rs.r[q].j0 + k % rs.r[q].nc;
    b[(size_t)i * P + j] = st_point(a, i, j, P, wc, wk, wd);
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

static void cu_destroy(st_dev_t *d)
{
    if (!d) return;
    for (int b = 0; b < 3; b++)
        if (d->m[b]) cudaFree(d->m[b]);
    for (int k = 0; k < 4; k++)
        if (d->cb[k / 2][k % 2]) cudaFree(d->cb[k / 2][k % 2]);
    for (int k = 0; k < 2; k++) {
        if (d->hb[k]) cudaEventDestroy(d->hb[k]);
        if (d->le[k]) cudaEventDestroy(d->le[k]);
    }
    if (d->mark) cudaEventDestroy(d->mark);
    if (d->host) cudaFreeHost(d->host);
    if (d->s) cudaStreamDestroy(d->s);
    if (d->lo) cudaStreamDestroy(d->lo);
    free(d);
}

static int cu_reset(st_dev_t *d)
{
    d->nsplit = d->nlow = 0;
    return ex_cu_reset(d->s, d->lo, d->m, (size_t)d->g->R * d->g->P * d->g->es);
}

static int cu_create(const st_grid_t *g, const void *init, st_dev_t **out)
{
    size_t bytes = (size_t)g->R * g->P * g->es;
    st_dev_t *d = (st_dev_t *)calloc(1, sizeof *d);
    *out = d;
    if (!d) return ex_error("out of memory");
    d->g = g;
    if (ex_cu_setup(g->local_rank, &d->s, &d->lo, d->m, bytes, init)) return 1;
    for (int k = 0; k < 2; k++) {
        CU_TRY(cudaEventCreateWithFlags(&d->hb[k], cudaEventDisableTiming));
        CU_TRY(cudaEventCreateWithFlags(&d->le[k], cudaEventDisableTiming));
    }
    CU_TRY(cudaEventCreateWithFlags(&d->mark, cudaEventDisableTiming));
    return cu_reset(d);
}

static int cu_download(st_dev_t *d, int buf, void *dst)
{
    CU_TRY(cudaStreamSynchronize(d->lo));
    CU_TRY(cudaMemcpyAsync(dst, d->m[buf], (size_t)d->g->R * d->g->P * d->g->es, cudaMemcpyDeviceToHost,
                           d->s));
    CU_TRY(cudaStreamSynchronize(d->s));
    return 0;
}

template <typename T>
static int launch_rect(st_dev_t *d, int buf, const st_rect_t *r, cudaStream_t st)
{
    const st_grid_t *g = d->g;
    dim3 blk(32, 8), grd((r->nc + 31) / 32, (r->nr + 7) / 8);
    st_step_k<T><<<grd, blk, 0, st>>>((const T *)d->m[buf], (T *)d->m[!buf], r->i0, r->j0, r->nr, r->nc, g->P,
                                      (T)g->wc, (T)g->wk, (T)g->wd);
    CU_TRY(cudaGetLastError());
    return 0;
}

template <typename T>
static int launch_band(st_dev_t *d, int buf)
{
    const st_grid_t *g = d->g;
    st_rects_k rs;
    memset(&rs, 0, sizeof rs);
    rs.n = st_band_rects(g, rs.r);
    for (int q = 0; q < rs.n; q++) rs.start[q + 1] = rs.start[q] + rs.r[q].nr * rs.r[q].nc;
    for (int q = rs.n + 1; q < 5; q++) rs.start[q] = rs.start[rs.n];
    if (rs.start[rs.n] == 0) return 0;
    st_band_k<T><<<(rs.start[rs.n] + 255) / 256, 256, 0, d->s>>>((const T *)d->m[buf], (T *)d->m[!buf], rs, g->P,
                                                                 (T)g->wc, (T)g->wk, (T)g->wd);
    CU_TRY(cudaGetLastError());
    return 0;
}

template <typename T>
static int step_t(st_dev_t *d, int buf, int how)
{
    const st_grid_t *g = d->g;
    st_rect_t all = {1, 1, g->R - 2, g->C - 2}, in;
    if (how == ST_STEP_PLAIN) return launch_rect<T>(d, buf, &all, d->s);
    if (how == ST_STEP_LOW) { /* after everything on the main stream (the exchange) */
        CU_TRY(cudaEventRecord(d->mark, d->s));
        CU_TRY(cudaStreamWaitEvent(d->lo, d->mark, 0));
        if (launch_rect<T>(d, buf, &all, d->lo)) return 1;
    } else {
        /* boundary band: after the low stream's last kernel (it reads and
         * writes what that kernel wrote and read) */
        if (d->nlow) CU_TRY(cudaStreamWaitEvent(d->s, d->le[(d->nlow - 1) & 1], 0));
        if (launch_band<T>(d, buf)) return 1;
        CU_TRY(cudaEventRecord(d->hb[d->nsplit & 1], d->s));
        /* interior: after the previous split's band, not its exchange */
        if (d->nsplit) CU_TRY(cudaStreamWaitEvent(d->lo, d->hb[(d->nsplit - 1) & 1], 0));
        if (st_interior_rect(g, &in) && launch_rect<T>(d, buf, &in, d->lo)) return 1;
        d->nsplit++;
    }
    CU_TRY(cudaEventRecord(d->le[d->nlow & 1], d->lo));
    d->nlow++;
    return 0;
}

static int cu_step(st_dev_t *d, int buf, int how)
{
    return d->g->dp ? step_t<double>(d, buf, how) : step_t<float>(d, buf, how);
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

static int cu_finish(st_dev_t *d)
{
    CU_TRY(cudaStreamSynchronize(d->lo));
    CU_TRY(cudaStreamSynchronize(d->s));
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
    if (!d->host) { /* the pinned staging matrix, at the first exchange */
        CU_TRY(cudaMallocHost((void **)&d->host, (size_t)g->R * g->P * g->es));
        memset(d->host, 0, (size_t)g->R * g->P * g->es);
    }
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

/* ST-LOC-BEGIN cuda-aware */
/* Columns [off, off + h) of all R rows <-> a contiguous R x h buffer, for
 * the two sides at once (sides not in mask skipped). */
template <typename T>
__global__ void st_cols_k(T *m, T *b0, T *b1, long off0, long off1, int R, int h, int P, int unpack, int mask)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x, side = k / (R * h), e = k % (R * h);
    if (side > 1 || !(mask >> side & 1)) return;
    T *b = side ? b1 : b0;
    size_t x = (size_t)(e / h) * P + (side ? off1 : off0) + e % h;
    if (unpack) m[x] = b[e];
    else b[e] = m[x];
}

static int cols(st_dev_t *d, int buf, int mask, int unpack)
{
    const st_grid_t *g = d->g;
    int n = 2 * g->R * g->h, dir = unpack;
    long off0 = unpack ? g->recv_off[ST_COLS][0] : g->send_off[ST_COLS][0];
    long off1 = unpack ? g->recv_off[ST_COLS][1] : g->send_off[ST_COLS][1];
    if (g->dp)
        st_cols_k<double><<<(n + 255) / 256, 256, 0, d->s>>>((double *)d->m[buf], (double *)d->cb[dir][0],
            (double *)d->cb[dir][1], off0, off1, g->R, g->h, g->P, unpack, mask);
    else
        st_cols_k<float><<<(n + 255) / 256, 256, 0, d->s>>>((float *)d->m[buf], (float *)d->cb[dir][0],
            (float *)d->cb[dir][1], off0, off1, g->R, g->h, g->P, unpack, mask);
    CU_TRY(cudaGetLastError());
    return 0;
}

static int cu_pack_cols(st_dev_t *d, int buf, int mask) { return cols(d, buf, mask, 0); }
static int cu_unpack_cols(st_dev_t *d, int buf, int mask) { return cols(d, buf, mask, 1); }
/* ST-LOC-END */

static void *cu_col_buf(st_dev_t *d, int dir, int s)
{
    if (!d->cb[dir][s] && cudaMalloc(&d->cb[dir][s], (size_t)d->g->R * d->g->h * d->g->es) != cudaSuccess) {
        ex_error("cudaMalloc of a column buffer failed");
        return NULL;
    }
    return d->cb[dir][s];
}

static int cu_sync(st_dev_t *d) { return sync_stream(d); }
static void *cu_mpi_buf(st_dev_t *d, int buf) { return d->m[buf]; }
static void *cu_queue(st_dev_t *d) { return (void *)d->s; }

extern "C" void *st_cuda_buf_type(void); /* stencil2d.c */

static st_backend_t make_backend(void)
{
    st_backend_t b;
    memset(&b, 0, sizeof b);
    b.name = "cuda";
    b.offsets_in_type = 0;
    b.probe = ex_cu_probe;
    b.create = cu_create;
    b.destroy = cu_destroy;
    b.reset = cu_reset;
    b.download = cu_download;
    b.step = cu_step;
    b.ring = cu_ring;
    b.finish = cu_finish;
    b.exchange_manual = cu_exchange_manual;
    b.mpi_buf = cu_mpi_buf;
    b.queue = cu_queue;
    b.sync = cu_sync;
    b.col_buf = cu_col_buf;
    b.pack_cols = cu_pack_cols;
    b.unpack_cols = cu_unpack_cols;
    return b;
}

static st_backend_t backend = make_backend();

extern "C" const st_backend_t *st_cuda_backend(void)
{
    backend.buf_type = st_cuda_buf_type(); /* MPIACC_BUF_CUDA in stencil2d, NULL without mpiacc */
    return &backend;
}
