/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/hostcopy.c: blocking copies of a device buffer into host
 * memory, for the calls whose semantics need the data out of (or into) the
 * application's buffer before they return: MPI_Bsend / MPI_Ibsend (the
 * data is buffered at the call), MPI_Sendrecv_replace and
 * MPI_Isendrecv_replace (the send data is taken before the receive may
 * overwrite the buffer).  No request and no pool: the backend's pack into
 * host memory, waited for here (the caller is in an MPI call,
 * not in a progress poll).
 */
#include <sched.h>

#include "dispatch.h"

/* Waits for a backend handle and releases it. */
static int wait_handle(const mpiacc_backend_t *be, void **h)
{
    int mpi_errno = MPI_SUCCESS, done = 0;
    if (!*h) goto fn_exit;
    while (!done) {
        MPIACC_CHECK(be->test(*h, &done));
        if (!done) sched_yield();
    }
fn_exit:
    if (*h) be->release(*h);
    *h = NULL;
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_dispatch_copy_out(const mpiacc_backend_t *be, const mpiacc_attrs_t *a, void *buf,
                             const mpiacc_pack_type_t *t, MPI_Count count, void *host, MPI_Count bytes)
{
    int mpi_errno = MPI_SUCCESS;
    void *dep = NULL, *xfer = NULL;
    mpiacc_xfer_desc_t d = {.buf = buf, .type = t, .count = count, .first = 0, .last = bytes, .host = host};
    if (bytes == 0) goto fn_exit;
    /* The dependency is the call's: captured now. */
    if (be->capture) MPIACC_CHECK(be->capture(a, buf, &dep));
    if (be->host_waits) MPIACC_CHECK(wait_handle(be, &dep));
    MPIACC_CHECK(be->pack(a, dep, &d, &xfer));
    MPIACC_CHECK(wait_handle(be, &xfer));
fn_exit:
    if (dep) be->release(dep);
    if (xfer) be->release(xfer);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_dispatch_pack_to_host(const mpiacc_attrs_t *a, const void *buf, MPI_Count count, MPI_Datatype dt,
                                 const mpiacc_backend_t **bep, void **host, MPI_Count *bytes)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_backend_t *be = NULL;
    mpiacc_pack_type_t *t = NULL;
    *host = NULL;
    *bytes = 0;
    MPIACC_CHECK(mpiacc_dispatch_device_buf(a, (void *)buf, count, dt, &be, &t, bytes));
    if (!be) /* an empty message from a kind whose backend is absent */
        MPIACC_FAIL(MPIACC_ERRK_BACKEND, "%s buffers are not available: %s", mpiacc_kind_name(a->kind),
                    mpiacc_backend_why_absent(a->kind));
    /* One byte at least: a valid pointer for MPI even when empty. */
    if (be->host_alloc((size_t)*bytes + 1, host) != MPI_SUCCESS || !*host)
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of host memory for %lld bytes", (long long)*bytes);
    if (*bytes > 0) MPIACC_CHECK(mpiacc_dispatch_copy_out(be, a, (void *)buf, t, count, *host, *bytes));
    *bep = be;
fn_exit:
    if (t) mpiacc_pack_type_release(t);
    return mpi_errno;
fn_fail:
    if (*host) be->host_free(*host, (size_t)*bytes + 1);
    *host = NULL;
    goto fn_exit;
}

void mpiacc_dispatch_host_free(const mpiacc_backend_t *be, void *host, MPI_Count bytes)
{
    if (host) be->host_free(host, (size_t)bytes + 1);
}

void mpiacc_dispatch_drain_peer(MPI_Comm comm, int dest)
{
    for (;;) {
        int queued;
        if (mpiacc_dispatch_no_deferred()) return;
        pthread_mutex_lock(&mpiacc_rp_pool.lock);
        queued = mpiacc_rp_sendq_has_peer(comm, dest, NULL);
        pthread_mutex_unlock(&mpiacc_rp_pool.lock);
        if (!queued) return;
        MPIX_Stream_progress(MPIX_STREAM_NULL);
        sched_yield();
    }
}
