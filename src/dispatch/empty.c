/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/empty.c: a point-to-point message that carries no bytes goes to
 * MPI as 0 MPI_BYTE, whatever the application's datatype.
 *
 * Why: MPICH 5.0.2's UCX netmod (the engine mpiacc-run puts every program
 * on) receives into a non-contiguous datatype after dividing the
 * datatype's size by its number of contiguous blocks.  A derived datatype
 * of size 0 with a non-zero extent (MPI_Type_contiguous(0, ...) resized, a
 * struct of zero-length blocks...) has no block, so the receive dies of
 * SIGFPE, whatever its count (docs/semantics.md has the plain-MPI
 * reproducer).  Such a message is the same message to MPI as 0 MPI_BYTE:
 * it matches the same sends, a longer message is truncated alike
 * (MPI_ERR_TRUNCATE), and its status holds a byte count of 0, from which
 * MPI_Get_count and MPI_Get_elements on the application's datatype give
 * what MPI gives for the original call (0; MPICH keeps a status's count in
 * bytes, so there is nothing else to mend).
 *
 * Which calls: the host fast path routes an untagged derived datatype of
 * size 0 to the dispatcher (MPIACC_ATTRS_KIND_EMPTY, decided once per
 * datatype: src/attrs), whose host paths call mpiacc_dispatch_empty before
 * they hand the call to MPI (sends, receives, MPI_Sendrecv(_replace),
 * MPI_Bsend, MPI_Mrecv, and the persistent requests' starts); device
 * datatypes of no bytes already go as 0 MPI_BYTE (dispatch.c, device_op;
 * mrecv.c).  A count of 0 of any other datatype is handed over the same way
 * where the call reaches the dispatcher (the fast path leaves it to MPI,
 * which has no trouble with it).
 */
#include "dispatch.h"

int mpiacc_dispatch_no_bytes(MPI_Count count, MPI_Datatype dt)
{
    MPI_Count size = -1;
    int route;
    if (count < 0 || dt == MPI_DATATYPE_NULL) return 0; /* MPI's own errors */
    if (mpiacc_attrs_handles_checked && mpiacc_attrs_is_builtin(dt)) return count == 0;
    if (count != 0) {
        route = mpiacc_attrs_route(dt); /* the decision made for the fast path: no query */
        if (route == MPIACC_KIND_NONE) return 0;
        if (route != MPIACC_ATTRS_KIND_EMPTY && (PMPI_Type_size_c(dt, &size) != MPI_SUCCESS || size != 0))
            return 0;
    }
    /* MPI checks the datatype whatever the count: an uncommitted one is
     * left to MPI, which says so */
    return mpiacc_pack_type_usable(dt);
}

void mpiacc_dispatch_empty(MPI_Count *count, MPI_Datatype *dt)
{
    if (mpiacc_dispatch_no_bytes(*count, *dt)) {
        *count = 0;
        *dt = MPI_BYTE;
    }
}
