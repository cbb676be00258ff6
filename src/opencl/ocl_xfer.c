/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opencl/ocl_xfer.c: pack / unpack between a cl_mem and host staging (or a
 * packed cl_mem), chained on the device after the captured dependency.
 *
 * Strategies, chosen per call (mpiacc_ocl_xfer_method names the last one):
 *  copy    the bytes are one dense block: clEnqueueRead/Write/CopyBuffer;
 *  rect    the canonical strided form folds to at most 2 strided dimensions
 *          of blk-byte rows and the range covers whole rows: a few
 *          clEnqueue*BufferRect commands (and plain copies of single rows)
 *          planned by ocl_rect.c under rules every implementation accepts,
 *          or the kernel when the plan cannot (used where they win: CPU
 *          devices, or rows of at least MPIACC_OCL_RECT_MIN bytes, default
 *          64);
 *  kernel  the generic kernel walking the traversal blob, through a pooled
 *          device temporary for host transfers (kernel + one contiguous
 *          copy).
 * All commands of one transfer go to one internal in-order queue, the first
 * one waiting for the captured events; the handle keeps the first and last.
 */
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

_Thread_local const char *mpiacc_ocl_xfer_method = "none";

typedef struct xf {
    int unpack;          /* 0: buf -> packed side; 1: packed side -> buf */
    cl_mem buf;
    const mpiacc_pack_type_t *t;
    cl_long count, first, last;
    void *host;          /* host packed side, or NULL */
    cl_mem dpk;          /* device packed side (pack_dev / unpack_dev) */
    cl_long dpk_off;
    cl_long memsize, dpk_size; /* sizes of buf and dpk */
    cl_device_id dev;
    cl_context ctx;
    mpiacc_ocl_ctx_t *cx;
    mpiacc_ocl_queue_t *qs;
    cl_event wait[2];
    cl_uint nwait;
    cl_event ev[2]; /* first and last command enqueued (ev[1] may be NULL) */
    mpiacc_ocl_tmp_t *tmp;
} xf_t;

static int enq_done(xf_t *x, cl_event ev)
{
    if (!x->ev[0]) x->ev[0] = ev;
    else {
        if (x->ev[1]) clReleaseEvent(x->ev[1]);
        x->ev[1] = ev;
    }
    return MPI_SUCCESS;
}

/* Wait list for the next command: the captured events for the first one
 * (the queue is in order afterwards). */
#define WAITN(x_) ((x_)->ev[0] ? 0 : (x_)->nwait)
#define WAITL(x_) ((x_)->ev[0] || !(x_)->nwait ? NULL : (x_)->wait)

static int do_contig(xf_t *x, cl_long base)
{
    int mpi_errno = MPI_SUCCESS;
    cl_command_queue q = x->qs->q;
    size_t off = (size_t)(base + x->first), n = (size_t)(x->last - x->first);
    cl_event ev = NULL;
    if (x->host && !x->unpack)
        MPIACC_OCL_CALL("clEnqueueReadBuffer",
                        clEnqueueReadBuffer(q, x->buf, CL_FALSE, off, n, x->host, WAITN(x), WAITL(x), &ev));
    else if (x->host)
        MPIACC_OCL_CALL("clEnqueueWriteBuffer",
                        clEnqueueWriteBuffer(q, x->buf, CL_FALSE, off, n, x->host, WAITN(x), WAITL(x), &ev));
    else if (!x->unpack)
        MPIACC_OCL_CALL("clEnqueueCopyBuffer", clEnqueueCopyBuffer(q, x->buf, x->dpk, off, (size_t)x->dpk_off,
                                                                   n, WAITN(x), WAITL(x), &ev));
    else
        MPIACC_OCL_CALL("clEnqueueCopyBuffer", clEnqueueCopyBuffer(q, x->dpk, x->buf, (size_t)x->dpk_off, off,
                                                                   n, WAITN(x), WAITL(x), &ev));
    enq_done(x, ev);
    mpiacc_ocl_xfer_method = "copy";
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The planned rect commands (mpiacc_ocl_rect_cmds: every one already
 * checked against the rules there). */
static int do_rect(xf_t *x, const mpiacc_ocl_rcmd_t *cmds, int n)
{
    int mpi_errno = MPI_SUCCESS;
    cl_command_queue q = x->qs->q;
    static const size_t ho[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        const mpiacc_ocl_rcmd_t *c = &cmds[i];
        char *h = x->host ? (char *)x->host + c->poff : NULL;
        cl_event ev = NULL;
        if (c->linear && h && !x->unpack)
            MPIACC_OCL_CALL("clEnqueueReadBuffer", clEnqueueReadBuffer(q, x->buf, CL_FALSE, c->bo[0], c->bytes, h,
                                                                       WAITN(x), WAITL(x), &ev));
        else if (c->linear && h)
            MPIACC_OCL_CALL("clEnqueueWriteBuffer", clEnqueueWriteBuffer(q, x->buf, CL_FALSE, c->bo[0], c->bytes,
                                                                         h, WAITN(x), WAITL(x), &ev));
        else if (c->linear && !x->unpack)
            MPIACC_OCL_CALL("clEnqueueCopyBuffer", clEnqueueCopyBuffer(q, x->buf, x->dpk, c->bo[0], c->po[0],
                                                                       c->bytes, WAITN(x), WAITL(x), &ev));
        else if (c->linear)
            MPIACC_OCL_CALL("clEnqueueCopyBuffer", clEnqueueCopyBuffer(q, x->dpk, x->buf, c->po[0], c->bo[0],
                                                                       c->bytes, WAITN(x), WAITL(x), &ev));
        else if (h && !x->unpack)
            MPIACC_OCL_CALL("clEnqueueReadBufferRect",
                            clEnqueueReadBufferRect(q, x->buf, CL_FALSE, c->bo, ho, c->region, c->brow, c->bslice,
                                                    c->prow, c->pslice, h, WAITN(x), WAITL(x), &ev));
        else if (h)
            MPIACC_OCL_CALL("clEnqueueWriteBufferRect",
                            clEnqueueWriteBufferRect(q, x->buf, CL_FALSE, c->bo, ho, c->region, c->brow, c->bslice,
                                                     c->prow, c->pslice, h, WAITN(x), WAITL(x), &ev));
        else if (!x->unpack)
            MPIACC_OCL_CALL("clEnqueueCopyBufferRect",
                            clEnqueueCopyBufferRect(q, x->buf, x->dpk, c->bo, c->po, c->region, c->brow, c->bslice,
                                                    c->prow, c->pslice, WAITN(x), WAITL(x), &ev));
        else
            MPIACC_OCL_CALL("clEnqueueCopyBufferRect",
                            clEnqueueCopyBufferRect(q, x->dpk, x->buf, c->po, c->bo, c->region, c->prow, c->pslice,
                                                    c->brow, c->bslice, WAITN(x), WAITL(x), &ev));
        enq_done(x, ev);
    }
    mpiacc_ocl_xfer_method = "rect";
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int launch(xf_t *x, cl_kernel k, cl_mem blob, cl_mem packed, cl_long poff, cl_long ws)
{
    int mpi_errno = MPI_SUCCESS;
    cl_long nwords = (x->last - x->first) / ws;
    size_t wg = x->cx->wg, groups = ((size_t)nwords + wg - 1) / wg, global;
    cl_event ev = NULL;
    if (groups > 4096) groups = 4096; /* grid-stride loop covers the rest */
    global = groups * wg;
    MPIACC_OCL_CALL("clSetKernelArg", clSetKernelArg(k, 0, sizeof blob, &blob));
    MPIACC_OCL_CALL("clSetKernelArg", clSetKernelArg(k, 1, sizeof x->buf, &x->buf));
    MPIACC_OCL_CALL("clSetKernelArg", clSetKernelArg(k, 2, sizeof packed, &packed));
    MPIACC_OCL_CALL("clSetKernelArg", clSetKernelArg(k, 3, sizeof poff, &poff));
    MPIACC_OCL_CALL("clSetKernelArg", clSetKernelArg(k, 4, sizeof x->first, &x->first));
    MPIACC_OCL_CALL("clSetKernelArg", clSetKernelArg(k, 5, sizeof nwords, &nwords));
    MPIACC_OCL_CALL("clEnqueueNDRangeKernel",
                    clEnqueueNDRangeKernel(x->qs->q, k, 1, NULL, &global, &wg, WAITN(x), WAITL(x), &ev));
    enq_done(x, ev);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int do_kernel(xf_t *x)
{
    int mpi_errno = MPI_SUCCESS;
    const MPIACC_TV_GLOBAL mpiacc_tv_i64 *hb = x->t->blob;
    cl_long n = x->last - x->first, m, ws;
    cl_mem blob;
    int wi = 0;
    cl_event ev = NULL;

    MPIACC_CHECK(mpiacc_ocl_ctx_program(x->cx));
    MPIACC_CHECK(mpiacc_ocl_blob_get(x->cx, x->t, &blob));
    /* Widest word dividing the chunk, the alignment and both ends. */
    m = (cl_long)mpiacc_tv_chunk(hb) | (cl_long)mpiacc_tv_align(hb) | x->first | x->last |
        (x->host ? 0 : x->dpk_off) | 16;
    ws = m & -m;
    while ((1 << wi) < ws) wi++;
    if (!x->host) {
        MPIACC_CHECK(launch(x, x->unpack ? x->cx->kunpack[wi] : x->cx->kpack[wi], blob, x->dpk, x->dpk_off, ws));
    } else {
        MPIACC_CHECK(mpiacc_ocl_tmp_get(x->cx, (size_t)n, &x->tmp));
        if (!x->unpack) {
            MPIACC_CHECK(launch(x, x->cx->kpack[wi], blob, x->tmp->mem, 0, ws));
            MPIACC_OCL_CALL("clEnqueueReadBuffer", clEnqueueReadBuffer(x->qs->q, x->tmp->mem, CL_FALSE, 0,
                                                                       (size_t)n, x->host, 0, NULL, &ev));
        } else {
            MPIACC_OCL_CALL("clEnqueueWriteBuffer",
                            clEnqueueWriteBuffer(x->qs->q, x->tmp->mem, CL_FALSE, 0, (size_t)n, x->host,
                                                 WAITN(x), WAITL(x), &ev));
            enq_done(x, ev);
            ev = NULL;
            MPIACC_CHECK(launch(x, x->cx->kunpack[wi], blob, x->tmp->mem, 0, ws));
        }
        if (ev) enq_done(x, ev);
    }
    mpiacc_ocl_xfer_method = "kernel";
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* MPIACC_ERRK_BUFFER when count x t touches bytes outside [0, memsize)
 * (the bytes of the canonical form, overflow-checked: mpiacc_pack_span). */
static int check_span(const mpiacc_pack_type_t *t, cl_long count, size_t memsize)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Count lo, hi;
    MPIACC_CHECK(mpiacc_pack_span(t, (MPI_Count)count, &lo, &hi));
    if (lo < hi && (lo < 0 || (uint64_t)hi > (uint64_t)memsize))
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "OpenCL buffer of %zu bytes too small for the datatype: it "
                    "touches bytes [%lld, %lld) of the cl_mem", memsize, (long long)lo, (long long)hi);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_ocl_validate_span(const mpiacc_attrs_t *a, const mpiacc_xfer_desc_t *d)
{
    int mpi_errno = MPI_SUCCESS;
    cl_context ctx;
    size_t memsize = 0;
    if (!d->type) MPIACC_FAIL(MPIACC_ERRK_INTERN, "OpenCL: no datatype analysis");
    MPIACC_CHECK(mpiacc_ocl_mem_context((cl_mem)d->buf, a, &ctx, &memsize));
    MPIACC_CHECK(check_span(d->type, (cl_long)d->count, memsize));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Checks the call, collects the wait list; no lock held. */
static int xf_setup(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, xf_t *x)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_pack_type_t *t = d->type;
    size_t memsize = 0;
    cl_long total;
    mpiacc_ocl_handle_t *dh = dep;

    x->buf = (cl_mem)d->buf;
    x->t = t;
    x->count = (cl_long)d->count;
    x->first = (cl_long)d->first;
    x->last = (cl_long)d->last;
    MPIACC_CHECK(mpiacc_ocl_mem_context(x->buf, a, &x->ctx, &memsize));
    MPIACC_CHECK(mpiacc_ocl_attr_device(a, x->ctx, &x->dev));
    if (!t) MPIACC_FAIL(MPIACC_ERRK_INTERN, "OpenCL pack: no datatype analysis");
    if (x->count < 0 || __builtin_mul_overflow(x->count, (cl_long)t->size, &total) || x->first < 0 ||
        x->last < x->first || x->last > total)
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "OpenCL pack: bad range [%lld, %lld) of %lld x %lld bytes",
                    (long long)x->first, (long long)x->last, (long long)x->count, (long long)t->size);
    MPIACC_CHECK(check_span(t, x->count, memsize));
    x->memsize = (cl_long)memsize;
    /* The captured events: a complete one is left out; a failed one fails
     * the transfer now — OpenCL leaves a command behind an event that has
     * already failed to the implementation (PoCL keeps it queued forever,
     * which would also block our internal queue). */
    for (int i = 0; dh && !dh->done && i < 2; i++) {
        cl_int st = CL_COMPLETE;
        if (!dh->ev[i]) continue;
        MPIACC_OCL_CALL("clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)",
                        clGetEventInfo(dh->ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        if (st < 0)
            MPIACC_FAIL(MPIACC_ERRK_OPENCL, "OpenCL: the data dependency failed: execution status %s (%d)",
                        mpiacc_ocl_errname(st), (int)st);
        if (st != CL_COMPLETE) x->wait[x->nwait++] = dh->ev[i];
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Enqueues the transfer (lock held by the caller). */
static int xf_enqueue(xf_t *x)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_pack_type_t *t = x->t;
    mpiacc_ocl_rect_t r;
    mpiacc_ocl_rcmd_t cmds[MPIACC_OCL_RECT_MAXCMD];
    int isrect = !t->contiguous && mpiacc_ocl_rect_plan(t, x->count, &r), ncmd = 0;

    MPIACC_CHECK(mpiacc_ocl_ctx_get(x->ctx, &x->cx));
    MPIACC_CHECK(mpiacc_ocl_queue_pick(x->cx, x->dev, &x->qs));
    /* Rect commands are planned (and checked) before anything is
     * enqueued; a copy within one cl_mem is left to the kernel (a rect copy
     * there needs equal pitches on both sides). */
    if (isrect && r.nd > 0 && mpiacc_ocl_rect_policy != 1 && x->dpk != x->buf &&
        (mpiacc_ocl_rect_policy == 2 || x->cx->dev0_is_cpu || r.blk >= mpiacc_ocl_rect_min))
        ncmd = mpiacc_ocl_rect_cmds(&r, x->first, x->last, x->memsize, x->host ? 0 : x->dpk_off,
                                    x->host ? -1 : x->dpk_size, cmds, MPIACC_OCL_RECT_MAXCMD);
    if (t->contiguous) { /* one dense block: packed byte 0 at `start` */
        MPIACC_CHECK(do_contig(x, (cl_long)t->start));
    } else if (isrect && r.nd == 0) {
        MPIACC_CHECK(do_contig(x, r.start));
    } else if (ncmd > 0) {
        MPIACC_CHECK(do_rect(x, cmds, ncmd));
    } else {
        MPIACC_CHECK(do_kernel(x));
    }
    MPIACC_CHECK(mpiacc_ocl_queue_enqueued(x->qs, x->ev[1] ? x->ev[1] : x->ev[0]));
fn_exit:
    return mpi_errno;
fn_fail:
    /* Some commands may be enqueued: let them finish before recycling. */
    for (int i = 0; i < 2; i++)
        if (x->ev[i]) {
            clWaitForEvents(1, &x->ev[i]);
            clReleaseEvent(x->ev[i]);
            x->ev[i] = NULL;
        }
    if (x->tmp) mpiacc_ocl_tmp_put(x->cx, x->tmp);
    x->tmp = NULL;
    goto fn_exit;
}

static int xf_async(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, int unpack, void **xfer)
{
    int mpi_errno = MPI_SUCCESS;
    xf_t x;
    mpiacc_ocl_handle_t *h = NULL;

    memset(&x, 0, sizeof x);
    *xfer = NULL;
    x.unpack = unpack;
    x.host = d->host;
    MPIACC_CHECK(xf_setup(a, dep, d, &x));
    if (x.last == x.first) goto fn_exit;
    if (!x.host) MPIACC_FAIL(MPIACC_ERRK_INTERN, "OpenCL pack: no host staging");
    pthread_mutex_lock(&mpiacc_ocl_lock);
    h = mpiacc_ocl_handle_new();
    if (!h) mpi_errno = mpiacc_err(MPIACC_ERRK_NOMEM, "OpenCL: no memory for a transfer handle");
    else mpi_errno = xf_enqueue(&x);
    if (mpi_errno == MPI_SUCCESS) {
        h->ev[0] = x.ev[0];
        h->ev[1] = x.ev[1];
        h->cx = x.cx;
        h->tmp = x.tmp;
        for (cl_uint i = 0; i < x.nwait; i++) /* watched by test() */
            if (clRetainEvent(x.wait[i]) == CL_SUCCESS) h->dep[i] = x.wait[i];
        *xfer = h;
    } else if (h) {
        mpiacc_ocl_handle_free(h);
    }
    pthread_mutex_unlock(&mpiacc_ocl_lock);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_ocl_pack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer)
{
    return xf_async(a, dep, d, 0, xfer);
}

int mpiacc_ocl_unpack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer)
{
    return xf_async(a, dep, d, 1, xfer);
}

static int xf_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, int unpack, cl_mem packed,
                  MPI_Aint packed_off)
{
    int mpi_errno = MPI_SUCCESS;
    xf_t x;
    cl_context pctx;
    size_t psize = 0;
    cl_int st = CL_COMPLETE;

    memset(&x, 0, sizeof x);
    x.unpack = unpack;
    x.dpk = packed;
    x.dpk_off = (cl_long)packed_off;
    MPIACC_CHECK(xf_setup(a, dep, d, &x));
    if (x.last == x.first) goto fn_exit;
    MPIACC_CHECK(mpiacc_ocl_mem_context(packed, a, &pctx, &psize));
    if (pctx != x.ctx)
        MPIACC_FAIL(MPIACC_ERRK_ARG, "packed cl_mem belongs to another OpenCL context than the data");
    if (packed_off < 0 || (uint64_t)(x.last - x.first) > (uint64_t)psize ||
        (uint64_t)packed_off > (uint64_t)psize - (uint64_t)(x.last - x.first))
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "packed cl_mem of %zu bytes too small for %lld bytes at offset %lld",
                    psize, (long long)(x.last - x.first), (long long)packed_off);
    x.dpk_size = (cl_long)psize;
    pthread_mutex_lock(&mpiacc_ocl_lock);
    mpi_errno = xf_enqueue(&x);
    pthread_mutex_unlock(&mpiacc_ocl_lock);
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    for (int i = 0; i < 2; i++) {
        if (!x.ev[i]) continue;
        clWaitForEvents(1, &x.ev[i]);
        MPIACC_OCL_CALL("clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)",
                        clGetEventInfo(x.ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        if (st < 0)
            MPIACC_FAIL(MPIACC_ERRK_OPENCL, "OpenCL %s command failed: %s (%d)", unpack ? "unpack" : "pack",
                        mpiacc_ocl_errname(st), (int)st);
    }
fn_exit:
    for (int i = 0; i < 2; i++)
        if (x.ev[i]) clReleaseEvent(x.ev[i]);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_ocl_pack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                        MPI_Aint packed_off)
{
    return xf_dev(a, dep, d, 0, (cl_mem)packed, packed_off);
}

int mpiacc_ocl_unpack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                          MPI_Aint packed_off)
{
    return xf_dev(a, dep, d, 1, (cl_mem)packed, packed_off);
}
