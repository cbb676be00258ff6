/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/bsend.c: MPI_Bsend and MPI_Ibsend (and the persistent
 * MPI_Bsend_init's starts) with a device datatype.
 *
 * Buffered semantics: the call packs the device data into host memory at
 * once (after the call-time dependency; hostcopy.c) and hands the packed
 * bytes to PMPI_Bsend / PMPI_Ibsend as MPI_PACKED, which copies them into
 * the space the application attached with MPI_Buffer_attach (MPI's own
 * accounting: MPI_Pack_size of the tagged datatype is the packed size, so
 * the usual MPI_Pack_size + MPI_BSEND_OVERHEAD sizing holds); the host
 * copy is freed before returning.  The device buffer is therefore free
 * when the call returns, and the request of MPI_Ibsend is MPI's own.
 * Order: a buffered send waits (locally, driving progress) until the
 * device sends queued before it to the same (comm, dest) were handed to
 * MPI.  (MPICH copies a buffered send's bytes with the CPU: device memory
 * is never handed to it here.)
 */
#include "dispatch.h"
#include "memkind.h"

static int pmpi_bsend(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                      int nonblocking, MPI_Request *req)
{
    return nonblocking ? PMPI_Ibsend_c(buf, count, dt, dest, tag, comm, req)
                       : PMPI_Bsend_c(buf, count, dt, dest, tag, comm);
}

int mpiacc_dispatch_bsend(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                          int nonblocking, MPI_Request *req)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_attrs_t a;
    const mpiacc_backend_t *be = NULL;
    void *host = NULL;
    MPI_Count bytes = 0;

    MPIACC_CHECK(mpiacc_dispatch_check_args(1, count, dt, dest, tag, comm, nonblocking, req));
    if (dest == MPI_PROC_NULL) return pmpi_bsend(buf, count, dt, dest, tag, comm, nonblocking, req);
    MPIACC_CHECK(mpiacc_dispatch_attrs(dt, buf, comm, &a));
    if (!mpiacc_dispatch_wants_pool(&a)) {
        mpiacc_dispatch_empty(&count, &dt); /* no bytes: 0 MPI_BYTE (empty.c) */
        mpiacc_dispatch_drain_peer(comm, dest);
        return pmpi_bsend(buf, count, dt, dest, tag, comm, nonblocking, req);
    }
    if (mpiacc_core_disabled) MPIACC_CHECK(mpiacc_dispatch_disabled_error(&a));
    MPIACC_CHECK(mpiacc_dispatch_pack_to_host(&a, buf, count, dt, &be, &host, &bytes));
    mpiacc_dispatch_drain_peer(comm, dest);
    /* MPI's own errors (no buffer attached, not enough space) are raised by
     * MPI on comm. */
    mpi_errno = pmpi_bsend(host, bytes, MPI_PACKED, dest, tag, comm, nonblocking, req);
    mpiacc_dispatch_host_free(be, host, bytes);
    return mpi_errno;
fn_fail:
    return mpiacc_err_return_comm(comm, mpi_errno);
}
