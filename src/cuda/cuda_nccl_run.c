/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_nccl_run.c: one collective on NCCL (backend_coll.h's run): on the
 * call's stream — MPIACC_STREAM, else one of the backend's internal
 * streams made to wait GPU-side on the captured dependencies (cu_capture:
 * the default-stream dependency) — the packs of non-contiguous user data
 * into a device temporary (the pack kernels of cuda_xfer.c), the NCCL group
 * (ncclGroupStart, the steps, ncclGroupEnd), the unpacks, then either an
 * event (a handle tested like a transfer's: cu_test, plus NCCL's
 * asynchronous error now and then) or, for MPIACC_ORDER_STREAM, nothing to
 * wait for: the temporary is freed in stream order (cudaFreeAsync) and,
 * without MPIACC_STREAM, the legacy default stream waits for the work.
 */
#include <string.h>

#include "cuda_nccl.h"

#define ASYNC_POLL 64 /* tests between two ncclCommGetAsyncError queries */

static ncclRedOp_t red_op(MPI_Op op)
{
    if (op == MPI_SUM) return ncclSum;
    if (op == MPI_PROD) return ncclProd;
    if (op == MPI_MIN) return ncclMin;
    return ncclMax;
}

static void *at(const mpiacc_bcoll_ref_t *r, char *tmp)
{
    return r->ptr ? r->ptr : tmp ? tmp + r->off : NULL;
}

/* One pack or unpack, device to device, on st. */
static int xfer_dev(int dev, const mpiacc_bcoll_xfer_t *x, char *tmp, int dir, cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_plan_t P;
    char *pk = tmp + x->off;
    if (x->d.last <= x->d.first) goto fn_exit;
    MPIACC_CHECK(mpiacc_cuda_plan_make(&x->d, pk, &P));
    if (P.kind == MPIACC_CUDA_PLAN_COPY) MPIACC_CHECK(mpiacc_cuda_plan_copy(&P, &x->d, dir, pk, st));
    else MPIACC_CHECK(mpiacc_cuda_plan_kernel(dev, &P, &x->d, dir, pk, NULL, st));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The group of steps on st. */
static int steps(mpiacc_cuda_nccl_comm_t *cc, const mpiacc_bcoll_call_t *call, char *tmp, cudaStream_t st)
{
    const mpiacc_cuda_nccl_api_t *N = &mpiacc_cuda_nccl;
    int r = ncclSuccess, e;
    const char *what = "ncclGroupStart";
    if (call->nstep == 0) return MPI_SUCCESS;
    if (call->nstep > 1) r = N->GroupStart();
    for (int i = 0; i < call->nstep && r == ncclSuccess; i++) {
        const mpiacc_bcoll_step_t *s = &call->steps[i];
        void *src = at(&s->src, tmp), *dst = at(&s->dst, tmp);
        size_t n = (size_t)s->count;
        int t = mpiacc_cuda_nccl_type(s->type);
        if (t < 0) return mpiacc_err(MPIACC_ERRK_INTERN, "%s: NCCL takes no such type", call->name);
        switch (s->what) {
        case MPIACC_BCOLL_ALLREDUCE:
            what = "ncclAllReduce";
            r = N->AllReduce(src, dst, n, (ncclDataType_t)t, red_op(s->op), cc->comm, st);
            break;
        case MPIACC_BCOLL_REDUCE:
            what = "ncclReduce";
            r = N->Reduce(src, dst, n, (ncclDataType_t)t, red_op(s->op), s->peer, cc->comm, st);
            break;
        case MPIACC_BCOLL_BCAST:
            what = "ncclBroadcast";
            r = N->Broadcast(src, dst, n, (ncclDataType_t)t, s->peer, cc->comm, st);
            break;
        case MPIACC_BCOLL_ALLGATHER:
            what = "ncclAllGather";
            r = N->AllGather(src, dst, n, (ncclDataType_t)t, cc->comm, st);
            break;
        case MPIACC_BCOLL_REDUCE_SCATTER:
            what = "ncclReduceScatter";
            r = N->ReduceScatter(src, dst, n, (ncclDataType_t)t, red_op(s->op), cc->comm, st);
            break;
        case MPIACC_BCOLL_SEND:
            what = "ncclSend";
            r = N->Send(src, n, (ncclDataType_t)t, s->peer, cc->comm, st);
            break;
        case MPIACC_BCOLL_RECV:
            what = "ncclRecv";
            r = N->Recv(dst, n, (ncclDataType_t)t, s->peer, cc->comm, st);
            break;
        default: r = ncclInternalError, what = "a step";
        }
    }
    if (call->nstep > 1) {
        e = N->GroupEnd(); /* ends the group even after a failed step */
        if (r == ncclSuccess && e != ncclSuccess) r = e, what = "ncclGroupEnd";
    }
    return r == ncclSuccess ? MPI_SUCCESS : mpiacc_cuda_nccl_err(r, what, cc->comm);
}

/* NCCL's asynchronous error of cc (MPI_SUCCESS: none). */
static int async_error(mpiacc_cuda_nccl_comm_t *cc)
{
    ncclResult_t a = ncclSuccess;
    int r = mpiacc_cuda_nccl.CommGetAsyncError(cc->comm, &a);
    if (r != ncclSuccess) return mpiacc_cuda_nccl_err(r, "ncclCommGetAsyncError", cc->comm);
    if (a != ncclSuccess && a != ncclInProgress)
        return mpiacc_cuda_nccl_err(a, "a collective (asynchronous error)", cc->comm);
    return MPI_SUCCESS;
}

int mpiacc_cuda_nccl_run(void *ccv, const mpiacc_bcoll_call_t *call, void **xfer)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0, ordered = 0, pooled_tmp = 0, enqueued = 0;
    mpiacc_cuda_nccl_comm_t *cc = ccv;
    const mpiacc_attrs_t *a = call->a;
    mpiacc_cuda_h_t *h = NULL;
    cudaStream_t st = NULL;
    char *tmp = NULL;
    int user = a->has_stream && a->stream;
    *xfer = NULL;
    MPIACC_CHECK(mpiacc_cuda_resolve_device(a, &dev));
    if (dev != cc->dev)
        MPIACC_FAIL(MPIACC_ERRK_ARG,
                    "%s: the buffers are on CUDA device %d, the communicator's collectives on device %d (its first "
                    "device collective's): one device per process and communicator",
                    call->name, dev, cc->dev);
    MPIACC_CHECK(async_error(cc));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    entered = 1;
    /* stream order needs a temporary freed in stream order (memory pools) */
    ordered = call->stream_order && (call->tmp_bytes == 0 || mpiacc_cuda_devs[dev].mempools);
    pooled_tmp = call->tmp_bytes > 0 && !ordered;
    MPIACC_CHECK(mpiacc_cuda_handle_get(dev, &h));
    h->is_xfer = !ordered;
    if (user) {
        st = (cudaStream_t)a->stream;
    } else {
        MPIACC_CHECK(mpiacc_cuda_stream_get(dev, &h->sidx));
        st = mpiacc_cuda_devs[dev].streams[h->sidx];
    }
    for (int i = 0; i < 2; i++) MPIACC_CHECK(mpiacc_cuda_handle_wait(st, (mpiacc_cuda_h_t *)call->deps[i]));
    if (pooled_tmp) {
        MPIACC_CHECK(mpiacc_cuda_buf_get(dev, (size_t)call->tmp_bytes, &h->tmp));
        tmp = h->tmp->p;
    } else if (call->tmp_bytes > 0) {
        cudaError_t e = cudaMallocAsync((void **)&tmp, (size_t)call->tmp_bytes, st);
        if (e != cudaSuccess) {
            tmp = NULL;
            MPIACC_FAIL(e == cudaErrorMemoryAllocation ? MPIACC_ERRK_NOMEM : MPIACC_ERRK_CUDA,
                        "%s: a device temporary of %lld bytes: cudaMallocAsync: %s (%s)", call->name,
                        (long long)call->tmp_bytes, cudaGetErrorName(e), cudaGetErrorString(e));
        }
    }
    enqueued = 1;
    for (int i = 0; i < call->npack; i++) MPIACC_CHECK(xfer_dev(dev, &call->packs[i], tmp, MPIACC_CUDA_DIR_PACK, st));
    MPIACC_CHECK(steps(cc, call, tmp, st));
    for (int i = 0; i < call->nunpack; i++)
        MPIACC_CHECK(xfer_dev(dev, &call->unpacks[i], tmp, MPIACC_CUDA_DIR_UNPACK, st));
    if (!ordered) {
        MPIACC_CHECK(mpiacc_cuda_handle_record(h, st));
        *xfer = h;
        h = NULL;
        goto fn_exit;
    }
    if (tmp) MPIACC_CUDA_CHECK(cudaFreeAsync(tmp, st));
    tmp = NULL;
    if (!user) { /* the legacy default stream waits for the work */
        MPIACC_CHECK(mpiacc_cuda_handle_record(h, st));
        MPIACC_CHECK(mpiacc_cuda_handle_wait(cudaStreamLegacy, h));
    }
fn_exit:
    if (h) mpiacc_cuda_handle_put(h); /* a dependency-like handle: its wait took the events' state */
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    /* Never a host wait here: an NCCL operation enqueued may wait for the
     * other processes forever (the collectives layer aborts the NCCL
     * communicator, which ends it).  The temporary: freed in stream order,
     * or, pooled and possibly still in use, left allocated. */
    if (tmp && !pooled_tmp) cudaFreeAsync(tmp, st);
    if (h) {
        if (enqueued && h->tmp) {
            MPIACC_LOG(MPIACC_LOG_WARN, "%s: a device temporary of %lld bytes is left allocated after the failure",
                       call->name, (long long)call->tmp_bytes);
            h->tmp = NULL;
        }
        h->done = 1;
        mpiacc_cuda_handle_put(h);
        h = NULL;
    }
    goto fn_exit;
}

int mpiacc_cuda_nccl_test(void *ccv, void *xfer, int *done)
{
    mpiacc_cuda_nccl_comm_t *cc = ccv;
    int mpi_errno = mpiacc_cuda_backend()->test(xfer, done);
    if (mpi_errno != MPI_SUCCESS || *done || !cc) return mpi_errno;
    if (++cc->polls >= ASYNC_POLL) {
        cc->polls = 0;
        mpi_errno = async_error(cc);
    }
    return mpi_errno;
}

void mpiacc_cuda_nccl_release(void *xfer)
{
    if (xfer) mpiacc_cuda_backend()->release(xfer);
}
