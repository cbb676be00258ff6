/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/host.c: the processes of a communicator that run on this host.
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) answers MPICH's view, which
 * MPIR_CVAR_NOLOCAL=1 (the setting of the UCX transport, mpiacc-run) and
 * MPIR_CVAR_NUM_CLIQUES change; what shares a GPU or can map a peer's
 * device memory is the host itself, named by MPI_Get_processor_name.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

int mpiacc_core_host_split(MPI_Comm comm, MPI_Comm *host)
{
    int mpi_errno = MPI_SUCCESS, rank = 0, size = 0, len = 0, color;
    char me[MPI_MAX_PROCESSOR_NAME] = {0}, *all = NULL;
    *host = MPI_COMM_NULL;
    MPIACC_CHECK(PMPI_Comm_rank(comm, &rank));
    MPIACC_CHECK(PMPI_Comm_size(comm, &size));
    MPIACC_CHECK(PMPI_Get_processor_name(me, &len));
    if (!(all = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for %d host names", size);
    MPIACC_CHECK(PMPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm));
    color = rank; /* the lowest rank on this host */
    for (int i = 0; i < rank; i++)
        if (!strncmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, me, MPI_MAX_PROCESSOR_NAME)) {
            color = i;
            break;
        }
    MPIACC_CHECK(PMPI_Comm_split(comm, color, rank, host));
fn_exit:
    free(all);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
