/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpu: the host backend (MPIACC_BUF_HOST), always present.  It is the
 * reference the device backends are tested against, and it lets host data
 * produced asynchronously go through the request pool: with MPIACC_EVENT set
 * to a pointer to an `int` flag, a send's data (a receive's buffer) is used
 * only once another thread has set the flag positive; a negative value fails
 * the operation.  Packing uses the datatype engine's host traversal.  Its
 * constructor, mpiacc_cpu_backend(), is declared in core/core.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pack/pack.h"

static int cpu_init(int *present)
{
    *present = 1;
    return MPI_SUCCESS;
}

static int cpu_finalize(void) { return MPI_SUCCESS; }

static int cpu_validate(const mpiacc_attrs_t *a, void *buf)
{
    int mpi_errno = MPI_SUCCESS;
    if (a->has_event && !a->event) MPIACC_FAIL(MPIACC_ERRK_ARG, "MPIACC_EVENT of a host datatype is NULL");
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The dep handle is the flag itself; xfers complete synchronously (NULL). */
static int cpu_capture(const mpiacc_attrs_t *a, void *buf, void **dep)
{
    *dep = a->has_event ? a->event : NULL;
    return MPI_SUCCESS;
}

/* Flag values: 0 pending, > 0 ready, < 0 the producer failed. */
static int cpu_test(void *h, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    int v = h ? atomic_load((_Atomic int *)h) : 1;
    *done = v != 0;
    if (v < 0) MPIACC_FAIL(MPIACC_ERRK_BACKEND, "the host data's MPIACC_EVENT flag reports a failure (%d)", v);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void cpu_release(void *h) { (void)h; }

static int cpu_pack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer)
{
    *xfer = NULL;
    return mpiacc_pack_cpu_pack(d->type, d->buf, d->count, d->first, d->last, d->host);
}

static int cpu_unpack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer)
{
    *xfer = NULL;
    return mpiacc_pack_cpu_unpack(d->type, d->buf, d->count, d->first, d->last, d->host);
}

static int cpu_pack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                        MPI_Aint off)
{
    return mpiacc_pack_cpu_pack(d->type, d->buf, d->count, d->first, d->last, (char *)packed + off);
}

static int cpu_unpack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                          MPI_Aint off)
{
    return mpiacc_pack_cpu_unpack(d->type, d->buf, d->count, d->first, d->last, (char *)packed + off);
}

/* Call-time check of count x type: offsets that overflow, or bytes farther
 * apart than any address space, fail the call (the host buffer's size is
 * not known). */
static int cpu_validate_span(const mpiacc_attrs_t *a, const mpiacc_xfer_desc_t *d)
{
    MPI_Count lo, hi;
    (void)a;
    return mpiacc_pack_span(d->type, d->count, &lo, &hi);
}

static int cpu_host_alloc(size_t bytes, void **p)
{
    int mpi_errno = MPI_SUCCESS;
    if (posix_memalign(p, 64, bytes) != 0) {
        *p = NULL;
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "cannot allocate %zu bytes of staging", bytes);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void cpu_host_free(void *p, size_t bytes) { free(p); }

static const mpiacc_backend_t cpu_backend = {
    .name = "host",
    .kind = MPIACC_KIND_HOST,
    .host_waits = 1,
    .init = cpu_init,
    .finalize = cpu_finalize,
    .validate = cpu_validate,
    .capture = cpu_capture,
    .pack = cpu_pack,
    .unpack = cpu_unpack,
    .pack_dev = cpu_pack_dev,
    .unpack_dev = cpu_unpack_dev,
    .test = cpu_test,
    .release = cpu_release,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .validate_span = cpu_validate_span,
};

const mpiacc_backend_t *mpiacc_cpu_backend(void) { return &cpu_backend; }
