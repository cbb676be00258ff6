/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_dev_fake.h: a stand-in collective engine (src/core/backend_coll.h)
 * that "runs" the collectives layer's programs on host memory, so that the
 * NCCL path's framework (engine choice, programs for every kind, packs and
 * unpacks, the nonblocking operation, errors, communicator life cycle) runs
 * in CI without a GPU: the CPU backend's buffers (MPIACC_BUF_HOST +
 * MPIACC_EVENT) get it through mpiacc_coll_test_tables.  Each engine
 * communicator is a duplicate of the boot communicator; a call's packs and
 * unpacks use the CPU backend's pack_dev / unpack_dev into a malloc'd
 * temporary, its steps become nonblocking MPI calls (ncclAllReduce ->
 * MPI_Iallreduce, ncclSend -> MPI_Isend, ...) completed in test(), where the
 * unpacks then run.  dev_mode on dev_mode_rank makes that process's engine
 * absent, share a GPU with the others, fail its communicator's creation, or
 * fail a call's completion (an MPI_ERR_ARG-class error, like
 * ncclInvalidUsage). */
#ifndef COLL_DEV_FAKE_H_INCLUDED
#define COLL_DEV_FAKE_H_INCLUDED

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll_testhooks.h"
#include "core/backend_coll.h"

enum { DEV_OK, DEV_ABSENT, DEV_SHARED_GPU, DEV_INIT_FAILS, DEV_TEST_FAILS, DEV_SLOW };
static int dev_mode, dev_mode_rank = -1;
static long dev_inits, dev_frees, dev_aborts, dev_runs, dev_polls;

static int dev_my_mode(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return dev_mode_rank < 0 || r == dev_mode_rank ? dev_mode : DEV_OK;
}

typedef struct fake_cc {
    MPI_Comm comm;
    int rank, size;
} fake_cc_t;

typedef struct fake_x {
    char *tmp;
    MPI_Request req[256];
    int nreq, slow, fails;
    mpiacc_bcoll_xfer_t *unpacks;
    int nunpack;
    mpiacc_attrs_t a;
} fake_x_t;

static int fake_load(const char **why)
{
    if (dev_my_mode() == DEV_ABSENT) {
        *why = "the stand-in engine is absent (DEV_ABSENT)";
        return 0;
    }
    *why = NULL;
    return 1;
}

static int fake_describe(char *out, size_t len)
{
    snprintf(out, len, "  stand-in engine\n");
    return MPI_SUCCESS;
}

static int fake_device(const mpiacc_attrs_t *a, int *dev, unsigned char uuid[MPIACC_BCOLL_UUID_BYTES])
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    *dev = 0;
    memset(uuid, 0, MPIACC_BCOLL_UUID_BYTES);
    if (dev_mode != DEV_SHARED_GPU) memcpy(uuid, &r, sizeof r); /* one GPU per process, or all on one */
    return MPI_SUCCESS;
}

static int fake_unique_id(unsigned char id[MPIACC_BCOLL_ID_BYTES])
{
    memset(id, 0, MPIACC_BCOLL_ID_BYTES);
    memcpy(id, "stand-in", 8);
    return MPI_SUCCESS;
}

static int fake_comm_init(int dev, int nranks, int rank, const unsigned char id[MPIACC_BCOLL_ID_BYTES], MPI_Comm boot,
                          void **ccp)
{
    fake_cc_t *cc = calloc(1, sizeof *cc);
    int err = MPI_SUCCESS;
    *ccp = NULL;
    if (memcmp(id, "stand-in", 8)) err = mpiacc_err(MPIACC_ERRK_INTERN, "stand-in engine: the unique id did not arrive");
    if (!cc || PMPI_Comm_dup(boot, &cc->comm) != MPI_SUCCESS) {
        free(cc);
        return mpiacc_err(MPIACC_ERRK_NOMEM, "stand-in engine: no communicator");
    }
    PMPI_Comm_rank(cc->comm, &cc->rank);
    PMPI_Comm_size(cc->comm, &cc->size);
    if (cc->rank != rank || cc->size != nranks)
        err = mpiacc_err(MPIACC_ERRK_INTERN, "stand-in engine: rank %d of %d, told %d of %d", cc->rank, cc->size, rank,
                         nranks);
    if (err == MPI_SUCCESS && dev_my_mode() == DEV_INIT_FAILS)
        err = mpiacc_err(MPIACC_ERRK_BACKEND, "stand-in engine: communicator refused (DEV_INIT_FAILS)");
    if (err != MPI_SUCCESS) {
        PMPI_Comm_free(&cc->comm);
        free(cc);
        return err;
    }
    dev_inits++;
    *ccp = cc;
    return MPI_SUCCESS;
}

static void fake_comm_free(void *ccv)
{
    fake_cc_t *cc = ccv;
    PMPI_Comm_free(&cc->comm);
    free(cc);
    dev_frees++;
}

static void fake_comm_abort(void *ccv)
{
    dev_aborts++;
    fake_comm_free(ccv);
}

static int fake_reduce_supported(MPI_Datatype t, MPI_Op op)
{
    return (t == MPI_INT || t == MPI_DOUBLE) && (op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX);
}

static MPI_Count tsize(MPI_Datatype t)
{
    MPI_Count s = 0;
    PMPI_Type_size_c(t, &s);
    return s;
}

static void *ref_at(const mpiacc_bcoll_ref_t *r, char *tmp) { return r->ptr ? r->ptr : tmp + r->off; }

static int fake_run(void *ccv, const mpiacc_bcoll_call_t *call, void **xfer)
{
    fake_cc_t *cc = ccv;
    const mpiacc_backend_t *be = mpiacc_backend_get(MPIACC_KIND_HOST);
    fake_x_t *x = calloc(1, sizeof *x);
    int err = MPI_SUCCESS;
    *xfer = NULL;
    if (!x) return MPI_ERR_NO_MEM;
    x->a = *call->a;
    x->tmp = malloc((size_t)call->tmp_bytes + 1);
    /* the dependencies: the CPU backend waits for them on the host */
    for (int i = 0; i < 2; i++) {
        int done = 0;
        while (call->deps[i] && be->test(call->deps[i], &done) == MPI_SUCCESS && !done) sched_yield();
    }
    for (int i = 0; i < call->npack && err == MPI_SUCCESS; i++)
        err = be->pack_dev(call->a, NULL, &call->packs[i].d, x->tmp, call->packs[i].off);
    for (int i = 0; i < call->nstep && err == MPI_SUCCESS; i++) {
        const mpiacc_bcoll_step_t *s = &call->steps[i];
        char *src = ref_at(&s->src, x->tmp), *dst = ref_at(&s->dst, x->tmp);
        MPI_Count n = s->count, es = tsize(s->type);
        MPI_Request *r = &x->req[x->nreq++];
        if (x->nreq > 256) return mpiacc_err(MPIACC_ERRK_INTERN, "stand-in engine: too many steps");
        switch (s->what) {
        case MPIACC_BCOLL_ALLREDUCE:
            err = PMPI_Iallreduce_c(src == dst ? MPI_IN_PLACE : src, dst, n, s->type, s->op, cc->comm, r);
            break;
        case MPIACC_BCOLL_REDUCE:
            err = PMPI_Ireduce_c(src == dst && cc->rank == s->peer ? MPI_IN_PLACE : src, dst, n, s->type, s->op,
                                 s->peer, cc->comm, r);
            break;
        case MPIACC_BCOLL_BCAST:
            if (cc->rank == s->peer && src != dst) memcpy(dst, src, (size_t)(n * es));
            err = PMPI_Ibcast_c(dst, n, s->type, s->peer, cc->comm, r);
            break;
        case MPIACC_BCOLL_ALLGATHER:
            err = PMPI_Iallgather_c(src == dst + cc->rank * n * es ? MPI_IN_PLACE : src, n, s->type, dst, n, s->type,
                                    cc->comm, r);
            break;
        case MPIACC_BCOLL_REDUCE_SCATTER:
            if (dst == src + cc->rank * n * es) { /* NCCL's in place: the result in the rank's block */
                err = PMPI_Ireduce_scatter_block_c(MPI_IN_PLACE, src, n, s->type, s->op, cc->comm, r);
                if (err == MPI_SUCCESS) err = PMPI_Wait(r, MPI_STATUS_IGNORE);
                if (err == MPI_SUCCESS && cc->rank) memmove(dst, src, (size_t)(n * es));
                *r = MPI_REQUEST_NULL;
            } else {
                err = PMPI_Ireduce_scatter_block_c(src, dst, n, s->type, s->op, cc->comm, r);
            }
            break;
        case MPIACC_BCOLL_SEND: err = PMPI_Isend_c(src, n, s->type, s->peer, 0, cc->comm, r); break;
        case MPIACC_BCOLL_RECV: err = PMPI_Irecv_c(dst, n, s->type, s->peer, 0, cc->comm, r); break;
        default: err = mpiacc_err(MPIACC_ERRK_INTERN, "stand-in engine: step %d", s->what);
        }
    }
    if (err != MPI_SUCCESS) {
        free(x->tmp);
        free(x);
        return err;
    }
    if (call->nunpack) {
        x->unpacks = malloc(sizeof *x->unpacks * (size_t)call->nunpack);
        memcpy(x->unpacks, call->unpacks, sizeof *x->unpacks * (size_t)call->nunpack);
        x->nunpack = call->nunpack;
    }
    x->slow = dev_my_mode() == DEV_SLOW ? 20 : 0;
    x->fails = dev_my_mode() == DEV_TEST_FAILS;
    dev_runs++;
    *xfer = x;
    return MPI_SUCCESS;
}

static int fake_test(void *ccv, void *xv, int *done)
{
    fake_x_t *x = xv;
    const mpiacc_backend_t *be = mpiacc_backend_get(MPIACC_KIND_HOST);
    int err = MPI_SUCCESS;
    *done = 0;
    dev_polls++;
    for (int i = 0; i < x->nreq; i++)
        if (!MPIX_Request_is_complete(x->req[i])) return MPI_SUCCESS;
    if (x->slow > 0 && x->slow--) return MPI_SUCCESS;
    if (x->nreq) err = PMPI_Waitall(x->nreq, x->req, MPI_STATUSES_IGNORE); /* complete: no progress */
    x->nreq = 0;
    for (int i = 0; i < x->nunpack && err == MPI_SUCCESS; i++)
        err = be->unpack_dev(&x->a, NULL, &x->unpacks[i].d, x->tmp, x->unpacks[i].off);
    x->nunpack = 0;
    if (err == MPI_SUCCESS && x->fails) err = mpiacc_err(MPIACC_ERRK_ARG, "stand-in engine: the call failed (DEV_TEST_FAILS)");
    *done = err == MPI_SUCCESS;
    return err;
}

static void engine_release(void *xv)
{
    fake_x_t *x = xv;
    if (!x) return;
    if (x->nreq) PMPI_Waitall(x->nreq, x->req, MPI_STATUSES_IGNORE);
    free(x->unpacks);
    free(x->tmp);
    free(x);
}

static const struct mpiacc_backend_coll fake_engine = {.name = "stand-in",
                                                      .load = fake_load,
                                                      .describe = fake_describe,
                                                      .device = fake_device,
                                                      .unique_id = fake_unique_id,
                                                      .comm_init = fake_comm_init,
                                                      .comm_free = fake_comm_free,
                                                      .comm_abort = fake_comm_abort,
                                                      .reduce_supported = fake_reduce_supported,
                                                      .run = fake_run,
                                                      .test = fake_test,
                                                      .release = engine_release};

static long engine_runs(void) { return atomic_load(&mpiacc_coll_engine_runs); }

#endif
