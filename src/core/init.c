/* core/init.c: MPI_Init / MPI_Init_thread / MPI_Finalize interposition —
 * starts and stops every module in dependency order. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "attrs/attrs.h"
#include "pack/pack.h"
#include "streampool/streampool.h"
#include "protocol/direct_comm.h"

int mpiacc_disabled;
int mpiacc_initialized;
int mpiacc_thread_level = MPI_THREAD_SINGLE;

static void read_env(void)
{
    const char *d = getenv("MPIACC_DISABLE");
    mpiacc_disabled = d && *d && strcmp(d, "0") != 0;
    mpiacc_log_init();
}

static int start_modules(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIACC_CHECK(mpiacc_err_init());
    MPIACC_CHECK(mpiacc_attrs_init());
    MPIACC_CHECK(mpiacc_pack_init());
    MPIACC_CHECK(mpiacc_backends_init());
    MPIACC_CHECK(mpiacc_streampool_init());
    MPIACC_CHECK(mpiacc_direct_init());
    mpiacc_initialized = 1;
    MPIACC_LOG(MPIACC_LOG_INFO, "mpiacc %d.%d initialised (thread level %d)", MPIACC_VERSION_MAJOR,
               MPIACC_VERSION_MINOR, mpiacc_thread_level);
fn_exit:
    return mpi_errno;
fn_fail:
    MPIACC_LOG(MPIACC_LOG_WARN, "mpiacc failed to initialise; device buffers are unavailable");
    goto fn_exit;
}

MPIACC_PUBLIC int MPI_Init(int *argc, char ***argv)
{
    int mpi_errno;
    read_env();
    mpi_errno = PMPI_Init(argc, argv);
    if (mpi_errno != MPI_SUCCESS || mpiacc_disabled) return mpi_errno;
    PMPI_Query_thread(&mpiacc_thread_level);
    return mpiacc_err_return_comm(MPI_COMM_WORLD, start_modules());
}

MPIACC_PUBLIC int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int mpi_errno;
    read_env();
    mpi_errno = PMPI_Init_thread(argc, argv, required, provided);
    if (mpi_errno != MPI_SUCCESS || mpiacc_disabled) return mpi_errno;
    mpiacc_thread_level = *provided;
    return mpiacc_err_return_comm(MPI_COMM_WORLD, start_modules());
}

MPIACC_PUBLIC int MPI_Finalize(void)
{
    int mpi_errno = MPI_SUCCESS;
    if (mpiacc_disabled || !mpiacc_initialized) return PMPI_Finalize();
    /* Refuses (and leaves MPI running) while operations are pending: the
     * application can complete them and call MPI_Finalize again. */
    MPIACC_CHECK(mpiacc_streampool_finalize());
    MPIACC_LOG(MPIACC_LOG_DEBUG, "finalize: request pool released");
    mpiacc_direct_finalize();
    mpiacc_backends_finalize();
    mpiacc_pack_finalize();
    mpiacc_attrs_finalize();
    mpiacc_err_finalize();
    mpiacc_initialized = 0;
    MPIACC_LOG(MPIACC_LOG_DEBUG, "finalize: mpiacc released, calling PMPI_Finalize");
    mpi_errno = PMPI_Finalize();
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(MPI_COMM_WORLD, mpi_errno);
    goto fn_exit;
}

int MPIACC_Get_version(int *major, int *minor)
{
    if (!major || !minor) return MPI_ERR_ARG;
    *major = MPIACC_VERSION_MAJOR;
    *minor = MPIACC_VERSION_MINOR;
    return MPI_SUCCESS;
}
