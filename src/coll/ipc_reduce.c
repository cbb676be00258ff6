/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/ipc_reduce.c: the on-device reductions (ipc.h), for a predefined
 * operation on a (tagged duplicate of a) predefined type that the
 * backend's reduce_supported accepts:
 *   Reduce     the root reduces every process's send buffer into its
 *              receive buffer (import_reduce: one kernel reading all of
 *              them, sources in rank order);
 *   Allreduce  one-shot (2 processes, or up to MPIACC_COLL_ONE_SHOT_MAX
 *              bytes): every process does the same into its own receive
 *              buffer; larger, or in place (peers read a buffer that is
 *              being written), reduce-scatter +
 *              all-gather: process r reduces slice r of every process's
 *              buffer into its own receive buffer, the processes
 *              synchronise (an error flag and a new export of the receive
 *              buffers), then each reads every other slice from its owner.
 * Every process computes a slice from the same sources in the same order,
 * so every process gets bitwise the same result.
 */
#include <stdlib.h>

#include "ipc.h"
#include "core/env.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static MPI_Count one_shot_max; /* MPIACC_COLL_ONE_SHOT_MAX */

static void read_env(void)
{
    one_shot_max = (MPI_Count)mpiacc_env_size("MPIACC_COLL_ONE_SHOT_MAX");
}

static size_t payload(mpiacc_coll_ipc_t *ci)
{
    (void)ci;
    return 0; /* exports only: every process reduces the same predefined type */
}

static int prepare(mpiacc_coll_ipc_t *ci)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_coll_op_t *c = ci->c;
    mpiacc_coll_sig_t *sig = NULL;
    MPI_Count lb = 0, ext = 0;
    int ip = c->a.sbuf == MPI_IN_PLACE, root = c->kind == MPIACC_COLL_REDUCE && c->rank == c->a.root;
    if (!ci->ipc) return MPI_SUCCESS; /* no data on this process (count 0, as everywhere) */
    if (!ci->ipc->reduce_supported || !ci->ipc->import_reduce) {
        ci->cause = MPIACC_COLL_IPC_REDUCE;
        return MPI_SUCCESS;
    }
    if (!mpiacc_coll_ipc_addressable(ci, MPIACC_COLL_S) || !mpiacc_coll_ipc_addressable(ci, MPIACC_COLL_R)) {
        ci->cause = MPIACC_COLL_IPC_NO_TABLE;
        return MPI_SUCCESS;
    }
    MPIACC_CHECK(mpiacc_coll_sig_get(c->a.rtype, &sig));
    MPIACC_CHECK(PMPI_Type_get_true_extent_c(c->a.rtype, &lb, &ext));
    if (sig->leaf == MPI_DATATYPE_NULL || sig->n != 1 || sig->pair || lb != 0 || ext != sig->size ||
        mpiacc_coll_extent(c->a.rtype) != sig->size || !ci->ipc->reduce_supported(sig->leaf, c->a.op)) {
        ci->cause = MPIACC_COLL_IPC_REDUCE;
        goto fn_exit;
    }
    ci->base = sig->leaf;
    ci->esz = sig->size;
    MPIACC_CHECK(mpiacc_pack_type_get(c->a.rtype, &ci->t));
    /* this process's vote for two phases (the records decide: any vote) */
    pthread_once(&once, read_env);
    ((mpiacc_coll_ipc_hdr_t *)ci->mine)->vote =
        c->kind == MPIACC_COLL_ALLREDUCE && (ip || (c->size > 2 && c->a.rcount * ci->esz > one_shot_max));
    /* the buffer peers read: the send buffer, or in place the receive buffer */
    if (ip && (c->kind == MPIACC_COLL_ALLREDUCE || root))
        MPIACC_CHECK(mpiacc_coll_ipc_offer(ci, MPIACC_COLL_R, 0, c->a.rcount, c->a.rtype, -1));
    else if (!ip)
        MPIACC_CHECK(mpiacc_coll_ipc_offer(ci, MPIACC_COLL_S, 0, c->a.rcount, c->a.rtype, -1));
    else
        ci->cause = MPIACC_COLL_IPC_SHAPE; /* MPI_IN_PLACE on a non-root: erroneous, MPI says so */
fn_exit:
    if (sig) mpiacc_coll_sig_release(sig);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The export each process offered (its send buffer, or in place its
 * receive buffer), in rank order. */
static int sources(mpiacc_coll_ipc_t *ci, mpiacc_ipc_export_t **xs, int *two_phase)
{
    int P = ci->c->size;
    /* decided from the records alone (the same everywhere) before anything can fail */
    *two_phase = 0;
    for (int r = 0; r < P; r++) {
        const mpiacc_coll_ipc_hdr_t *h = mpiacc_coll_ipc_rec(ci, r);
        if (!h->has[MPIACC_COLL_S] || h->vote) *two_phase = 1;
    }
    if (ci->c->kind == MPIACC_COLL_REDUCE) *two_phase = 0;
    if (!(*xs = malloc(sizeof **xs * (size_t)P))) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory");
    for (int r = 0; r < P; r++) {
        const mpiacc_coll_ipc_hdr_t *h = mpiacc_coll_ipc_rec(ci, r);
        (*xs)[r] = h->x[h->has[MPIACC_COLL_S] ? MPIACC_COLL_S : MPIACC_COLL_R];
    }
    return MPI_SUCCESS;
}

/* Reduces elements [lo, lo + n) of every source into the receive buffer. */
static int reduce_into(mpiacc_coll_ipc_t *ci, const mpiacc_ipc_export_t *xs, MPI_Count lo, MPI_Count n)
{
    mpiacc_coll_op_t *c = ci->c;
    mpiacc_coll_buf_t *b = &c->b[MPIACC_COLL_R];
    void *xfer = NULL;
    int err;
    if (n <= 0) return MPI_SUCCESS;
    err = ci->ipc->import_reduce(&b->a, b->dep, xs, c->size, (MPI_Aint)(lo * ci->esz), ci->base, c->a.op, n,
                                 (char *)b->buf + lo * ci->esz, &xfer);
    if (err == MPI_SUCCESS) mpiacc_coll_ipc_keep(ci, b->be, xfer);
    return err;
}

static MPI_Count slice_lo(MPI_Count count, int P, int r)
{
    return count * r / P;
}

/* All-gather (second phase): every other slice from its owner. */
static int gather_slices(mpiacc_coll_ipc_t *ci)
{
    int P = ci->c->size, me = ci->c->rank;
    mpiacc_coll_op_t *c = ci->c;
    mpiacc_coll_buf_t *b = &c->b[MPIACC_COLL_R];
    MPI_Count count = c->a.rcount;
    if (count <= 0) return MPI_SUCCESS; /* an empty call has no table (ci->ipc) */
    if (ci->ipc->import_copy_n && P <= MPIACC_IPC_COPYN_PIECES + 1) {
        /* the slices are contiguous (a predefined type): one launch for all */
        mpiacc_ipc_export_t xs[MPIACC_IPC_COPYN_PIECES];
        mpiacc_ipc_piece_t pc[MPIACC_IPC_COPYN_PIECES];
        void *xfer = NULL;
        int n = 0, err;
        for (int r = 0; r < P; r++) {
            MPI_Count lo = slice_lo(count, P, r), k = slice_lo(count, P, r + 1) - lo;
            if (r == me || k <= 0) continue;
            xs[n] = mpiacc_coll_ipc_rec(ci, r)->x[MPIACC_COLL_R];
            pc[n] = (mpiacc_ipc_piece_t){.src = n,
                                         .disp = (int64_t)(lo * ci->esz),
                                         .bytes = (int64_t)(k * ci->esz),
                                         .dst = (char *)b->buf + lo * ci->esz};
            n++;
        }
        if (n == 0) return MPI_SUCCESS;
        err = ci->ipc->import_copy_n(&b->a, b->dep, xs, n, pc, n, &xfer);
        if (err == MPI_SUCCESS) mpiacc_coll_ipc_keep(ci, b->be, xfer);
        return err;
    }
    for (int r = 0; r < P; r++) {
        MPI_Count lo = slice_lo(count, P, r), n = slice_lo(count, P, r + 1) - lo;
        mpiacc_ipc_export_t x;
        mpiacc_xfer_desc_t d;
        void *xfer = NULL;
        int err;
        if (r == me || n <= 0) continue;
        mpiacc_coll_ipc_moved(ci, r, MPIACC_COLL_R, (MPI_Aint)(lo * ci->esz), &x);
        d = (mpiacc_xfer_desc_t){
            .buf = (char *)b->buf + lo * ci->esz, .type = ci->t, .count = n, .first = 0, .last = n * ci->esz};
        err = ci->ipc->import_copy(&b->a, b->dep, &x, ci->t->blob, ci->t->blob_bytes, n, &d, &xfer);
        if (err != MPI_SUCCESS) return err;
        mpiacc_coll_ipc_keep(ci, b->be, xfer);
    }
    return MPI_SUCCESS;
}

static int run(mpiacc_coll_ipc_t *ci)
{
    int mpi_errno = MPI_SUCCESS, P = ci->c->size, me = ci->c->rank, two_phase, peer = 0;
    mpiacc_coll_op_t *c = ci->c;
    MPI_Count count = c->a.rcount;
    mpiacc_ipc_export_t *xs = NULL;
    mpi_errno = sources(ci, &xs, &two_phase);
    if (two_phase && ci->nb) { /* the exchange between the phases is ipc_nb.c's, after the reads */
        ci->phase_wanted = 1;
        ci->phase_side = MPIACC_COLL_R;
        ci->phase_lo = 0;
        ci->phase_hi = (MPI_Aint)(count * ci->esz);
    }
    MPIACC_CHECK(mpi_errno);
    if (c->kind == MPIACC_COLL_REDUCE) {
        if (me == c->a.root) MPIACC_CHECK(reduce_into(ci, xs, 0, count));
        goto fn_exit;
    }
    if (!two_phase) {
        MPIACC_CHECK(reduce_into(ci, xs, 0, count));
        goto fn_exit;
    }
    /* reduce-scatter: my slice of everyone's buffer into mine */
    {
        MPI_Count lo = slice_lo(count, P, me), hi = slice_lo(count, P, me + 1);
        int err = reduce_into(ci, xs, lo, hi - lo);
        if (err != MPI_SUCCESS && ci->err == MPI_SUCCESS) ci->err = err;
    }
    if (ci->nb) goto fn_exit;
    mpiacc_coll_ipc_wait(ci);
    /* everyone's slice is reduced: the receive buffers exported again */
    MPIACC_CHECK(mpiacc_coll_ipc_phase(ci, MPIACC_COLL_R, 0, (MPI_Aint)(count * ci->esz), &peer));
    if (peer != 0 || ci->err != MPI_SUCCESS) goto fn_exit; /* the final flag reports it */
    mpi_errno = gather_slices(ci);
    if (mpi_errno != MPI_SUCCESS && ci->err == MPI_SUCCESS) ci->err = mpi_errno;
    mpi_errno = MPI_SUCCESS;
fn_exit:
    free(xs);
    if (ci->t && !ci->phase_wanted) mpiacc_pack_type_release(ci->t), ci->t = NULL;
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static const mpiacc_coll_ipc_alg_t reduce = {.payload = payload, .prepare = prepare, .run = run, .finish = gather_slices};

const mpiacc_coll_ipc_alg_t *mpiacc_coll_ipc_reduce_alg(int kind)
{
    return kind == MPIACC_COLL_REDUCE || kind == MPIACC_COLL_ALLREDUCE ? &reduce : NULL;
}
