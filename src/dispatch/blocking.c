/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/blocking.c: MPI_Pack / MPI_Unpack with a device-tagged datatype,
 * done at once (device to device through the backend's pack_dev /
 * unpack_dev); no request, no pool.
 */
#include "dispatch.h"

/* For a backend that waits on the host: waits for dep and drops it. */
static int wait_dep(const mpiacc_backend_t *be, void **dep)
{
    int mpi_errno = MPI_SUCCESS, done = 0;
    if (!be->host_waits || !*dep) goto fn_exit;
    while (!done) MPIACC_CHECK(be->test(*dep, &done));
    be->release(*dep);
    *dep = NULL;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_dispatch_pack_device(int packing, void *data, MPI_Count count, MPI_Datatype type,
                                const mpiacc_attrs_t *a, void *packed, MPI_Count packed_size,
                                MPI_Count *position)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_backend_t *be = NULL;
    mpiacc_pack_type_t *t = NULL;
    void *dep = NULL;
    MPI_Count bytes;
    mpiacc_xfer_desc_t d;

    MPIACC_CHECK(mpiacc_pack_type_get(type, &t));
    MPIACC_CHECK(mpiacc_dispatch_packed_bytes(t, count, &bytes));
    if (*position < 0 || *position > packed_size || bytes > packed_size - *position)
        MPIACC_FAIL(MPIACC_ERRK_TRUNCATE, "%s %lld bytes at position %lld of a %lld-byte packed buffer",
                    packing ? "packing" : "unpacking", (long long)bytes, (long long)*position,
                    (long long)packed_size);
    if (bytes == 0) goto fn_exit; /* nothing moves: any buffer will do, as in MPI */
    MPIACC_CHECK(mpiacc_dispatch_backend(a, data, &be));
    /* The packed side too, before anything is allocated: a released cl_mem's
     * memory could otherwise be reused by the capture's own objects and then
     * pass for a live one (the backend checks it again in pack_dev). */
    if (be->validate) MPIACC_CHECK(be->validate(a, packed));
    if (be->capture) MPIACC_CHECK(be->capture(a, data, &dep));
    MPIACC_CHECK(wait_dep(be, &dep));
    d = (mpiacc_xfer_desc_t){.buf = data, .type = t, .count = count, .first = 0, .last = bytes, .host = NULL};
    if (packing) MPIACC_CHECK(be->pack_dev(a, dep, &d, packed, (MPI_Aint)*position));
    else MPIACC_CHECK(be->unpack_dev(a, dep, &d, packed, (MPI_Aint)*position));
    *position += bytes;
fn_exit:
    if (dep) be->release(dep);
    if (t) mpiacc_pack_type_release(t);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
