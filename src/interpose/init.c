/*
 * interpose/init.c: MPI_Init / MPI_Init_thread / MPI_Finalize — starts the
 * modules in dependency order (stops them in reverse), hands the backend
 * tables to core and registers each backend's datatype-data hook with the
 * datatype engine.  Also MPIACC_Get_version.
 */
#include <stdlib.h>
#include <string.h>

#include "interpose.h"
#include "core/env.h"
#include "pack/pack.h"
#include "protocol/protocol.h"
#include "protocol/direct_comm.h"

_Static_assert(MPIACC_KIND_MAX <= MPIACC_PACK_NSLOTS, "a backend's data slot is its kind");

static void read_env(void)
{
    mpiacc_core_disabled = mpiacc_env_bool("MPIACC_DISABLE");
    mpiacc_log_init();
}

/* The backends present register the free function of their slot. */
static void register_slots(int on)
{
    for (int k = MPIACC_KIND_HOST; k < MPIACC_KIND_MAX; k++) {
        const mpiacc_backend_t *be = mpiacc_backend_get(k);
        if (be && be->type_data_free) mpiacc_pack_slot_register(k, on ? be->type_data_free : NULL);
    }
}

static int start_modules(void)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_backend_t *const cand[MPIACC_KIND_MAX] = {
        [MPIACC_KIND_HOST] = mpiacc_cpu_backend(),
        [MPIACC_KIND_CUDA] = mpiacc_cuda_backend(),
        [MPIACC_KIND_OPENCL] = mpiacc_opencl_backend(),
    };
    MPIACC_CHECK(mpiacc_err_init());
    MPIACC_CHECK(mpiacc_attrs_init());
    MPIACC_CHECK(mpiacc_pack_init());
    MPIACC_CHECK(mpiacc_backends_init(cand));
    register_slots(1);
    MPIACC_CHECK(mpiacc_proto_init());
    MPIACC_CHECK(mpiacc_rp_init());
    MPIACC_CHECK(mpiacc_proto_comm_init());
    mpiacc_core_initialized = 1;
    MPIACC_LOG(MPIACC_LOG_INFO, "mpiacc %d.%d initialised (thread level %d)", MPIACC_VERSION_MAJOR,
               MPIACC_VERSION_MINOR, mpiacc_core_thread_level);
fn_exit:
    return mpi_errno;
fn_fail:
    MPIACC_LOG(MPIACC_LOG_WARN, "mpiacc failed to initialise; device buffers are unavailable");
    goto fn_exit;
}

MPIACC_INTERPOSE_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int mpi_errno;
    read_env();
    mpi_errno = PMPI_Init(argc, argv);
    if (mpi_errno != MPI_SUCCESS || mpiacc_core_disabled) return mpi_errno;
    PMPI_Query_thread(&mpiacc_core_thread_level);
    return mpiacc_err_return_comm(MPI_COMM_WORLD, start_modules());
}

MPIACC_INTERPOSE_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int mpi_errno;
    read_env();
    mpi_errno = PMPI_Init_thread(argc, argv, required, provided);
    if (mpi_errno != MPI_SUCCESS || mpiacc_core_disabled) return mpi_errno;
    mpiacc_core_thread_level = *provided;
    return mpiacc_err_return_comm(MPI_COMM_WORLD, start_modules());
}

MPIACC_INTERPOSE_EXPORT int MPI_Finalize(void)
{
    int mpi_errno = MPI_SUCCESS;
    if (mpiacc_core_disabled || !mpiacc_core_initialized) return PMPI_Finalize();
    /* Refuses (and leaves MPI running) while operations are pending: the
     * application can complete them and call MPI_Finalize again. */
    MPIACC_CHECK(mpiacc_rp_finalize());
    mpiacc_proto_comm_finalize();
    mpiacc_proto_finalize();
    MPIACC_LOG(MPIACC_LOG_DEBUG, "finalize: request pool released");
    register_slots(0);
    mpiacc_backends_finalize();
    mpiacc_pack_finalize();
    mpiacc_attrs_finalize();
    mpiacc_err_finalize();
    mpiacc_core_initialized = 0;
    MPIACC_LOG(MPIACC_LOG_DEBUG, "finalize: mpiacc released, calling PMPI_Finalize");
    mpi_errno = PMPI_Finalize();
fn_exit:
    return mpi_errno;
fn_fail:
    mpi_errno = mpiacc_err_return_comm(MPI_COMM_WORLD, mpi_errno);
    goto fn_exit;
}

MPIACC_INTERPOSE_EXPORT int MPIACC_Get_version(int *major, int *minor)
{
    if (!major || !minor) return MPI_ERR_ARG;
    *major = MPIACC_VERSION_MAJOR;
    *minor = MPIACC_VERSION_MINOR;
    return MPI_SUCCESS;
}
