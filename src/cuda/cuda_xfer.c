/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_xfer.c: pack / unpack between a device buffer and host staging, or
 * device staging when the descriptor says so (host_on_device: the device
 * protocol), asynchronous, chained on the GPU after the captured
 * dependency; and device-to-device pack / unpack (blocking; MPI_Pack /
 * MPI_Unpack).
 *
 * Method per transfer:
 *  - contiguous type (or a strided form that collapses to one block):
 *    one cudaMemcpyAsync;
 *  - strided canonical form: the strided kernel, word size from alignment;
 *    cudaMemcpy2DAsync for one-dimensional forms in memcpy2d mode, or in
 *    auto mode when rows are long (>= 2 KiB: the copy engine is as fast and
 *    leaves the SMs to the application);
 *  - anything else: the generic point-based kernel over the blob.
 * To / from host: "one-shot" (the kernel reads/writes the mapped staging
 * directly) or "device" (kernel into a pooled device buffer + DMA), chosen
 * by cuda_model.c unless MPIACC_CUDA_PACK says otherwise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

#define MEMCPY2D_AUTO_MIN_ROW 2048

_Thread_local const char *mpiacc_cuda_xfer_method = "none";

/* Largest power of two <= 16 dividing v (16 for 0). */
static int p2div(unsigned long long v)
{
    int w = 16;
    while (w > 1 && v % (unsigned)w) w >>= 1;
    return w;
}

static int imin(int a, int b) { return a < b ? a : b; }

static int tv_align_of(const mpiacc_pack_type_t *T)
{
    return T->blob ? (int)mpiacc_tv_align((const mpiacc_tv_i64 *)T->blob) : 1;
}

/* The word size of the generic kernel for d (every address and range end
 * a multiple of it). */
static int generic_ws(const mpiacc_xfer_desc_t *d, const char *packed)
{
    const mpiacc_pack_type_t *T = d->type;
    return imin(imin(p2div((unsigned long long)T->unit), tv_align_of(T)),
                imin(imin(p2div((uintptr_t)d->buf), p2div((uintptr_t)packed)),
                     imin(p2div((unsigned long long)d->first), p2div((unsigned long long)d->last))));
}

int mpiacc_cuda_multi_item(const mpiacc_xfer_desc_t *d, char *packed, const void *dblob, int dir,
                           mpiacc_cuda_multi_item_t *it)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Count lo, hi, total;
    /* the span checks of mpiacc_cuda_plan_make */
    MPIACC_CHECK(mpiacc_pack_span(d->type, d->count, &lo, &hi));
    if (__builtin_mul_overflow(d->count, d->type->size, &total) || d->first < 0 || d->last < d->first ||
        d->last > total)
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "CUDA: bad range [%lld, %lld) of %lld x %lld bytes", (long long)d->first,
                    (long long)d->last, (long long)d->count, (long long)d->type->size);
    if (!d->type->blob) MPIACC_FAIL(MPIACC_ERRK_TYPE, "CUDA: datatype has no point-based representation");
    it->dblob = dblob;
    it->buf = d->buf;
    it->packed = packed;
    it->ws = generic_ws(d, packed);
    it->first = d->first;
    it->nwords = (d->last - d->first) / it->ws;
    it->dir = dir;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_cuda_plan_make(const mpiacc_xfer_desc_t *d, const char *packed, mpiacc_cuda_plan_t *P)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_pack_type_t *T = d->type;
    char *buf = d->buf;
    const long long first = d->first, last = d->last;
    MPI_Count lo, hi, total;
    /* Every address below is buf + an offset inside the touched span, so
     * checking the span (overflow, address-space size) first keeps all the
     * index arithmetic of the plans and kernels in range. */
    MPIACC_CHECK(mpiacc_pack_span(T, d->count, &lo, &hi));
    if (__builtin_mul_overflow(d->count, T->size, &total) || first < 0 || last < first || last > total)
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "CUDA: bad range [%lld, %lld) of %lld x %lld bytes", first, last,
                    (long long)d->count, (long long)T->size);
    if (T->contiguous) { /* one dense block: packed byte 0 at `start` */
        P->kind = MPIACC_CUDA_PLAN_COPY;
        P->base = buf + T->start;
        goto fn_exit;
    }
    if (T->strided && !mpiacc_cuda_force_generic && T->blk > 0 && T->ndims >= 0 &&
        T->ndims <= MPIACC_PACK_MAX_DIMS) {
        long long blk = T->blk, cnt[MPIACC_CUDA_MAXDIMS], str[MPIACC_CUDA_MAXDIMS];
        int nd = 0, ws;
        for (int i = 0; i < T->ndims; i++)
            if (T->counts[i] != 1) cnt[nd] = T->counts[i], str[nd] = T->strides[i], nd++;
        if (d->count != 1) cnt[nd] = d->count, str[nd] = T->extent, nd++;
        while (nd > 0 && str[0] == blk) { /* dense innermost dimension */
            blk *= cnt[0];
            for (int i = 1; i < nd; i++) cnt[i - 1] = cnt[i], str[i - 1] = str[i];
            nd--;
        }
        for (int i = 0; i + 1 < nd;) { /* stream flattening */
            if (str[i + 1] == cnt[i] * str[i]) {
                cnt[i] *= cnt[i + 1];
                for (int j = i + 2; j < nd; j++) cnt[j - 1] = cnt[j], str[j - 1] = str[j];
                nd--;
            } else {
                i++;
            }
        }
        if (nd == 0) {
            P->kind = MPIACC_CUDA_PLAN_COPY;
            P->base = buf + T->start;
            goto fn_exit;
        }
        ws = imin(p2div((unsigned long long)blk), p2div((uintptr_t)(buf + T->start)));
        for (int i = 0; i < nd; i++) ws = imin(ws, p2div((unsigned long long)llabs(str[i])));
        ws = imin(ws, imin(p2div((uintptr_t)packed), imin(p2div(first), p2div(last))));
        P->kind = MPIACC_CUDA_PLAN_STRIDED;
        P->ws = ws;
        P->base = buf + T->start;
        P->blk = blk;
        P->s.nd = nd;
        for (int i = 0; i < MPIACC_CUDA_MAXDIMS; i++)
            P->s.counts[i] = i < nd ? cnt[i] : 1, P->s.strides[i] = i < nd ? str[i] : 0;
        P->s.nwb = blk / ws;
        P->s.row_words = P->s.nwb * cnt[0];
        P->s.first_w = first / ws;
        P->s.nwords = (last - first) / ws;
        goto fn_exit;
    }
    if (!T->blob) MPIACC_FAIL(MPIACC_ERRK_TYPE, "CUDA: datatype has no point-based representation");
    P->kind = MPIACC_CUDA_PLAN_GENERIC;
    P->base = buf;
    P->blk = T->unit;
    P->ws = generic_ws(d, packed);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* One-dimensional strided plan whose range is whole rows: memcpy2D-able. */
static int can_2d(const mpiacc_cuda_plan_t *P, const mpiacc_xfer_desc_t *d)
{
    if (P->kind != MPIACC_CUDA_PLAN_STRIDED || P->s.nd != 1 || P->s.strides[0] < P->blk) return 0;
    return d->first % P->blk == 0 && d->last % P->blk == 0;
}

static int enqueue_2d(const mpiacc_cuda_plan_t *P, const mpiacc_xfer_desc_t *d, int dir, char *packed, cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS;
    const size_t w = (size_t)P->blk, pitch = (size_t)P->s.strides[0];
    const size_t rows = (size_t)((d->last - d->first) / P->blk);
    char *src = P->base + (d->first / P->blk) * P->s.strides[0];
    if (dir == MPIACC_CUDA_DIR_PACK)
        MPIACC_CUDA_CHECK(cudaMemcpy2DAsync(packed, w, src, pitch, w, rows, cudaMemcpyDefault, st));
    else
        MPIACC_CUDA_CHECK(cudaMemcpy2DAsync(src, pitch, packed, w, w, rows, cudaMemcpyDefault, st));
    mpiacc_cuda_xfer_method = "memcpy2d";
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_cuda_plan_copy(const mpiacc_cuda_plan_t *P, const mpiacc_xfer_desc_t *d, int dir, char *packed,
                          cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS;
    char *dev = P->base + d->first;
    size_t n = (size_t)(d->last - d->first);
    if (dir == MPIACC_CUDA_DIR_PACK)
        MPIACC_CUDA_CHECK(cudaMemcpyAsync(packed, dev, n, cudaMemcpyDefault, st));
    else
        MPIACC_CUDA_CHECK(cudaMemcpyAsync(dev, packed, n, cudaMemcpyDefault, st));
    mpiacc_cuda_xfer_method = "memcpy";
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_cuda_plan_kernel(int dev, const mpiacc_cuda_plan_t *P, const mpiacc_xfer_desc_t *d, int dir,
                            char *packed, const mpiacc_cuda_signal_t *sig, cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS;
    const int nsm = mpiacc_cuda_devs[dev].nsm;
    cudaError_t e;
    if (P->kind == MPIACC_CUDA_PLAN_STRIDED) {
        e = (cudaError_t)mpiacc_cuda_launch_strided(P->ws, dir, P->base, packed, &P->s, nsm, sig, st);
        if (e != cudaSuccess)
            MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA: strided %s kernel launch (word %d B) failed: %s (%s)",
                        dir == MPIACC_CUDA_DIR_PACK ? "pack" : "unpack", P->ws, cudaGetErrorName(e),
                        cudaGetErrorString(e));
    } else {
        const void *dblob = NULL;
        MPIACC_CHECK(mpiacc_cuda_blob_get(dev, d->type, &dblob));
        e = (cudaError_t)mpiacc_cuda_launch_generic(P->ws, dir, dblob, P->base, packed, d->first,
                                                    (d->last - d->first) / P->ws, nsm, sig, st);
        if (e != cudaSuccess)
            MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA: generic %s kernel launch (word %d B) failed: %s (%s)",
                        dir == MPIACC_CUDA_DIR_PACK ? "pack" : "unpack", P->ws, cudaGetErrorName(e),
                        cudaGetErrorString(e));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int call_device(const mpiacc_attrs_t *a, void *dep, int *dev)
{
    if (dep) {
        *dev = ((mpiacc_cuda_h_t *)dep)->dev;
        return MPI_SUCCESS;
    }
    return mpiacc_cuda_resolve_device(a, dev);
}

/* How a transfer between a device buffer and host staging moves (P its
 * plan): one cudaMemcpyAsync (COPY), one cudaMemcpy2DAsync (the copy
 * engine, for one-dimensional strided layouts of long rows or of few rows:
 * measured on an H200 under MPS, 128-1024 rows of 4-64 B in 7.6-8.7 us from
 * the call to done against 9.5 us for the kernel's launch and run, and
 * 16384 rows in 27 us against 15), the kernel in device staging (STAGING),
 * a kernel reading or writing the pinned host staging itself (ONESHOT) or
 * a kernel into a device temporary and a DMA (DEVICE), as the model says. */
enum { METHOD_COPY, METHOD_2D, METHOD_STAGING, METHOD_ONESHOT, METHOD_DEVICE };
#define MEMCPY2D_AUTO_MAX_ROWS 4096

static int host_method(int dev, const mpiacc_cuda_plan_t *P, const mpiacc_xfer_desc_t *d, int dir)
{
    const size_t n = (size_t)(d->last - d->first);
    if (P->kind == MPIACC_CUDA_PLAN_COPY) return METHOD_COPY;
    if (can_2d(P, d) &&
        (mpiacc_cuda_mode == MPIACC_CUDA_MODE_MEMCPY2D ||
         (mpiacc_cuda_mode == MPIACC_CUDA_MODE_AUTO &&
          (P->blk >= MEMCPY2D_AUTO_MIN_ROW || (!d->host_on_device && (long long)n / P->blk <= MEMCPY2D_AUTO_MAX_ROWS)))))
        return METHOD_2D;
    if (d->host_on_device) return METHOD_STAGING;
    if (!mpiacc_cuda_host_is_pinned(d->host, n)) return METHOD_DEVICE; /* never let a kernel touch pageable memory */
    if (mpiacc_cuda_mode == MPIACC_CUDA_MODE_ONESHOT) return METHOD_ONESHOT;
    if (mpiacc_cuda_mode == MPIACC_CUDA_MODE_DEVICE) return METHOD_DEVICE;
    if (mpiacc_cuda_model_ensure(dev) != MPI_SUCCESS) return METHOD_DEVICE;
    return mpiacc_cuda_model_oneshot(dev, dir, (double)n, (double)P->blk, P->ws) ? METHOD_ONESHOT : METHOD_DEVICE;
}

/* Enqueues the whole transfer between d->buf and host staging d->host on st;
 * h receives the device temp buffer if one is used. */
static int enqueue_host(int dev, mpiacc_cuda_h_t *h, const mpiacc_xfer_desc_t *d, int dir, cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS, method;
    const size_t n = (size_t)(d->last - d->first);
    char *host = d->host;
    mpiacc_cuda_plan_t P;
    MPIACC_CHECK(mpiacc_cuda_plan_make(d, host, &P));
    method = host_method(dev, &P, d, dir);
    if (method == METHOD_COPY) {
        MPIACC_CHECK(mpiacc_cuda_plan_copy(&P, d, dir, host, st));
        goto fn_exit;
    }
    if (method == METHOD_2D) {
        MPIACC_CHECK(enqueue_2d(&P, d, dir, host, st));
        goto fn_exit;
    }
    if (method == METHOD_STAGING) { /* device staging (the device protocol): the kernel reads / writes it directly */
        MPIACC_CHECK(mpiacc_cuda_plan_kernel(dev, &P, d, dir, host, NULL, st));
        mpiacc_cuda_xfer_method = "staging";
        goto fn_exit;
    }
    if (method == METHOD_ONESHOT) {
        MPIACC_CHECK(mpiacc_cuda_plan_kernel(dev, &P, d, dir, host, NULL, st));
        mpiacc_cuda_xfer_method = "oneshot";
        goto fn_exit;
    }
    MPIACC_CHECK(mpiacc_cuda_buf_get(dev, n, &h->tmp));
    MPIACC_CHECK(mpiacc_cuda_plan_make(d, h->tmp->p, &P));
    if (dir == MPIACC_CUDA_DIR_PACK) {
        MPIACC_CHECK(mpiacc_cuda_plan_kernel(dev, &P, d, dir, h->tmp->p, NULL, st));
        MPIACC_CUDA_CHECK(cudaMemcpyAsync(host, h->tmp->p, n, cudaMemcpyDefault, st));
    } else {
        MPIACC_CUDA_CHECK(cudaMemcpyAsync(h->tmp->p, host, n, cudaMemcpyDefault, st));
        MPIACC_CHECK(mpiacc_cuda_plan_kernel(dev, &P, d, dir, h->tmp->p, NULL, st));
    }
    mpiacc_cuda_xfer_method = "device";
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int xfer_host(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer, int dir)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0, flagged = 0;
    mpiacc_cuda_h_t *h = NULL;
    cudaStream_t st = NULL;
    *xfer = NULL;
    if (d->last <= d->first) goto fn_exit;
    if (!d->type || !d->host) MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA: transfer without type or staging");
    MPIACC_CHECK(call_device(a, dep, &dev));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    entered = 1;
    MPIACC_CHECK(mpiacc_cuda_handle_get(dev, &h));
    h->is_xfer = 1;
    MPIACC_CHECK(mpiacc_cuda_stream_lane(dev, d->lane, &h->sidx));
    st = mpiacc_cuda_devs[dev].streams[h->sidx];
    MPIACC_CHECK(mpiacc_cuda_handle_wait(st, dep));
    MPIACC_CHECK(enqueue_host(dev, h, d, dir, st));
    if (mpiacc_cuda_ipcv(MPIACC_CUDA_IPCV_XFLAG)) MPIACC_CHECK(mpiacc_cuda_flag_signal(h, st, 5, &flagged));
    if (!flagged) MPIACC_CHECK(mpiacc_cuda_handle_record(h, st));
    *xfer = h;
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    mpiacc_cuda_handle_abandon(h, st); /* whatever was enqueued must end before reuse */
    goto fn_exit;
}

int mpiacc_cuda_pack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer)
{
    return xfer_host(a, dep, d, xfer, MPIACC_CUDA_DIR_PACK);
}

int mpiacc_cuda_unpack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer)
{
    return xfer_host(a, dep, d, xfer, MPIACC_CUDA_DIR_UNPACK);
}

/* Whether item x can go into the fused launch on dev: a non-empty
 * transfer of a call on dev to or from device staging, or to or from
 * pinned (mapped) host staging where a kernel would move it alone too (the
 * one-shot choice of cuda_model.c; a copy engine's DMA or cudaMemcpy2D
 * otherwise).  Others take their own launch (xfer_host). */
static int fusable(const mpiacc_xfer_item_t *x, int dev)
{
    int xdev = -1;
    size_t n = (size_t)(x->d.last - x->d.first);
    mpiacc_cuda_plan_t P;
    if (x->d.last <= x->d.first || !x->d.type || !x->d.host || x->d.lane) return 0;
    if (call_device(x->a, x->dep, &xdev) != MPI_SUCCESS) {
        cudaGetLastError();
        return 0;
    }
    if (xdev != dev) return 0;
    if (x->d.host_on_device) return 1;
    if (!mpiacc_cuda_host_is_pinned(x->d.host, n) || mpiacc_cuda_plan_make(&x->d, x->d.host, &P) != MPI_SUCCESS ||
        host_method(dev, &P, &x->d, x->dir ? MPIACC_CUDA_DIR_UNPACK : MPIACC_CUDA_DIR_PACK) != METHOD_ONESHOT)
        return 0;
    return 1;
}

int mpiacc_cuda_xfer_many(mpiacc_xfer_item_t *items, int n)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0, flagged = 0, nk = 0, i;
    int fused[MPIACC_CORE_BATCH_MAX];
    mpiacc_cuda_multi_item_t it[MPIACC_CUDA_MULTI_MAX];
    mpiacc_cuda_h_t *h = NULL;
    cudaStream_t st = NULL;
    cudaError_t e;
    _Static_assert(MPIACC_CORE_BATCH_MAX <= MPIACC_CUDA_MULTI_MAX, "a batch fits one fused launch");

    for (i = 0; i < n; i++) items[i].xfer = NULL;
    if (n < 1 || n > MPIACC_CORE_BATCH_MAX) MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA: a batch of %d transfers", n);
    MPIACC_CHECK(call_device(items[0].a, items[0].dep, &dev));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old)); /* before fusable: its model is measured on dev */
    entered = 1;
    for (i = 0; i < n; i++) nk += fused[i] = fusable(&items[i], dev);
    if (nk >= 2) {
        const void *last_dep = NULL;
        MPIACC_CHECK(mpiacc_cuda_handle_get(dev, &h));
        h->is_xfer = 1;
        MPIACC_CHECK(mpiacc_cuda_stream_get(dev, &h->sidx));
        st = mpiacc_cuda_devs[dev].streams[h->sidx];
        nk = 0;
        for (i = 0; i < n; i++) {
            const void *dblob = NULL;
            if (!fused[i]) continue;
            if (items[i].dep && items[i].dep != last_dep) /* a run of one dependency: one wait */
                MPIACC_CHECK(mpiacc_cuda_handle_wait(st, items[i].dep));
            last_dep = items[i].dep;
            MPIACC_CHECK(mpiacc_cuda_blob_get(dev, items[i].d.type, &dblob));
            MPIACC_CHECK(mpiacc_cuda_multi_item(&items[i].d, items[i].d.host, dblob,
                                                items[i].dir ? MPIACC_CUDA_DIR_UNPACK : MPIACC_CUDA_DIR_PACK, &it[nk]));
            nk++;
        }
        e = (cudaError_t)mpiacc_cuda_launch_multi(it, nk, mpiacc_cuda_devs[dev].nsm, NULL, st);
        if (e != cudaSuccess)
            MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA: fused launch of %d transfers failed: %s (%s)", nk, cudaGetErrorName(e),
                        cudaGetErrorString(e));
        if (mpiacc_cuda_ipcv(MPIACC_CUDA_IPCV_XFLAG)) MPIACC_CHECK(mpiacc_cuda_flag_signal(h, st, 5, &flagged));
        if (!flagged) MPIACC_CHECK(mpiacc_cuda_handle_record(h, st));
        h->refs = nk;
        for (i = 0; i < n; i++)
            if (fused[i]) items[i].xfer = h;
        h = NULL;
        mpiacc_cuda_xfer_method = "fused";
    }
    for (i = 0; i < n; i++)
        if (!items[i].xfer)
            MPIACC_CHECK(xfer_host(items[i].a, items[i].dep, &items[i].d, &items[i].xfer,
                                   items[i].dir ? MPIACC_CUDA_DIR_UNPACK : MPIACC_CUDA_DIR_PACK));
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    mpiacc_cuda_handle_abandon(h, st);
    for (i = 0; i < n; i++) { /* what did start ends before its buffers are reused */
        if (items[i].xfer) mpiacc_cuda_handle_put(items[i].xfer);
        items[i].xfer = NULL;
    }
    goto fn_exit;
}

/* Fast path: no stream, event or device attribute and the current device
 * already set up: one cudaGetDevice (a thread-local read in the runtime). */
int mpiacc_cuda_enter_call_device(const mpiacc_attrs_t *a, void *dep, int *dev, int *old)
{
    int mpi_errno = MPI_SUCCESS, cur = -1;
    if (!dep && !(a && (a->has_stream || a->has_device))) {
        MPIACC_CUDA_CHECK(cudaGetDevice(&cur));
        if (cur >= 0 && cur < mpiacc_cuda_ndev && cur < MPIACC_CUDA_MAXDEV &&
            __atomic_load_n(&mpiacc_cuda_devs[cur].ready, __ATOMIC_ACQUIRE)) {
            *dev = *old = cur;
            goto fn_exit;
        }
    }
    MPIACC_CHECK(call_device(a, dep, dev));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(*dev, old));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Blocking device-to-device: byte p of the packed stream is at
 * packed + packed_off + (p - first).  One kernel (or copy) and one wait
 * (cuda_sync.c): nothing else reaches the driver on the way once the
 * device, its streams and completion slots are set up. */
static int xfer_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                    MPI_Aint packed_off, int dir)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0, sidx = -1, waiting = 0, signals = 0;
    cudaStream_t st = NULL;
    char *pk = (char *)packed + packed_off;
    mpiacc_cuda_wait_t w;
    mpiacc_cuda_plan_t P;
    if (d->last <= d->first) goto fn_exit;
    if (!d->type) MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA: transfer without type");
    MPIACC_CHECK(mpiacc_cuda_enter_call_device(a, dep, &dev, &old));
    entered = 1;
    MPIACC_CHECK(mpiacc_cuda_plan_make(d, pk, &P));
    MPIACC_CHECK(mpiacc_cuda_stream_get(dev, &sidx));
    st = mpiacc_cuda_devs[dev].streams[sidx];
    MPIACC_CHECK(mpiacc_cuda_handle_wait(st, dep));
    mpiacc_cuda_wait_prepare(dev, &w);
    waiting = 1;
    if (P.kind == MPIACC_CUDA_PLAN_COPY) {
        MPIACC_CHECK(mpiacc_cuda_plan_copy(&P, d, dir, pk, st));
    } else if (mpiacc_cuda_mode == MPIACC_CUDA_MODE_MEMCPY2D && can_2d(&P, d)) {
        MPIACC_CHECK(enqueue_2d(&P, d, dir, pk, st));
    } else {
        MPIACC_CHECK(mpiacc_cuda_plan_kernel(dev, &P, d, dir, pk, &w.sig, st));
        signals = w.sig.count != NULL;
        mpiacc_cuda_xfer_method = "kernel";
    }
    waiting = 0;
    MPIACC_CHECK(mpiacc_cuda_wait_finish(&w, st, signals));
fn_exit:
    if (sidx >= 0) mpiacc_cuda_stream_put(dev, sidx);
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    if (waiting) mpiacc_cuda_wait_abandon(&w, st);
    else if (st) cudaStreamSynchronize(st);
    goto fn_exit;
}

int mpiacc_cuda_pack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                         MPI_Aint packed_off)
{
    return xfer_dev(a, dep, d, packed, packed_off, MPIACC_CUDA_DIR_PACK);
}

int mpiacc_cuda_unpack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                           MPI_Aint packed_off)
{
    return xfer_dev(a, dep, d, packed, packed_off, MPIACC_CUDA_DIR_UNPACK);
}
