/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/init.c: MPI_Init / MPI_Init_thread / MPI_Finalize — starts the
 * modules in dependency order (stops them in reverse), hands the backend
 * tables to core (which starts each at its first use) and registers each
 * started backend's datatype-data hook with the datatype engine.  Also
 * MPIACC_Get_version.
 */
#include <stdlib.h>
#include <string.h>

#include "interpose.h"
#include "core/env.h"
#include "engine/engine.h"
#include "pack/pack.h"
#include "protocol/protocol.h"

_Static_assert(MPIACC_KIND_MAX <= MPIACC_PACK_NSLOTS, "a backend's data slot is its kind");

/* What a datatype is tagged with, for error texts (core.h). */
static const char *type_tag(MPI_Datatype t)
{
    int k = mpiacc_attrs_kind(t);
    return k > MPIACC_KIND_NONE && k < MPIACC_KIND_MAX ? mpiacc_kind_name(k) : NULL;
}

/* MPIACC_DISABLE=1: no backend, pool or protocol is started, but the
 * error codes and the keyvals are (so that tagging a datatype stays valid
 * and a tagged call fails instead of passing a device buffer to MPI as
 * host memory; see the dispatcher). */
static void read_env(void)
{
    mpiacc_env_hold(); /* the environment's warnings wait for the rank */
    mpiacc_core_disabled = mpiacc_env_bool("MPIACC_DISABLE");
    mpiacc_log_init();
    mpiacc_err_type_tag = type_tag;
}

/* After PMPI_Init (err: its result): log lines name the rank, and the
 * environment's warnings are printed by rank 0 only (every process of a
 * job normally has the same environment): once per job. */
static void mpi_started(int err)
{
    int rank = 0;
    if (err == MPI_SUCCESS) {
        mpiacc_log_start();
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    mpiacc_env_release(rank == 0);
}

/* MPIACC_EAGER_INIT=1: start every backend in MPI_Init instead of at the
 * first operation that needs it. */
static int eager_init(void)
{
    return mpiacc_env_bool("MPIACC_EAGER_INIT");
}

/* A backend that starts registers the free function of its slot. */
static void backend_started(const mpiacc_backend_t *be)
{
    if (be->type_data_free) mpiacc_pack_slot_register(be->kind, be->type_data_free);
}

static void unregister_slots(void)
{
    for (int k = MPIACC_KIND_HOST; k < MPIACC_KIND_MAX; k++) {
        const mpiacc_backend_t *be = mpiacc_backend_peek(k);
        if (be && be->type_data_free) mpiacc_pack_slot_register(k, NULL);
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
    /* Collective over MPI_COMM_WORLD, first, so that nothing before it can
     * fail on one process only: does MPI's transport take device memory? */
    MPIACC_CHECK(mpiacc_engine_mpi.probe());
    MPIACC_CHECK(mpiacc_attrs_init());
    MPIACC_CHECK(mpiacc_pack_init());
    /* Backends start lazily (backend.c), unless asked for now. */
    MPIACC_CHECK(mpiacc_backends_setup(cand, backend_started));
    if (eager_init()) mpiacc_backends_start_all();
    MPIACC_CHECK(mpiacc_dispatch_memkind_init()); /* MPIACC_UVA=1 starts the CUDA backend */
    MPIACC_CHECK(mpiacc_dispatch_facts_init());
    MPIACC_CHECK(mpiacc_proto_init());
    MPIACC_CHECK(mpiacc_rp_init());
    mpiacc_coll_init();
    mpiacc_core_initialized = 1;
    MPIACC_LOG(MPIACC_LOG_INFO, "mpiacc %d.%d initialised (thread level %d)", MPIACC_VERSION_MAJOR,
               MPIACC_VERSION_MINOR, mpiacc_core_thread_level);
fn_exit:
    return mpi_errno;
fn_fail:
    MPIACC_LOG(MPIACC_LOG_WARN, "mpiacc failed to initialise; device buffers are unavailable");
    goto fn_exit;
}

/* MPIACC_DISABLE: the error codes and the keyvals only. */
static int start_disabled(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIACC_CHECK(mpiacc_err_init());
    MPIACC_CHECK(mpiacc_attrs_init());
    MPIACC_LOG(MPIACC_LOG_INFO, "mpiacc disabled (MPIACC_DISABLE): device datatypes are refused");
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

MPIACC_INTERPOSE_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int mpi_errno;
    read_env();
    mpi_errno = PMPI_Init(argc, argv);
    mpi_started(mpi_errno);
    if (mpi_errno != MPI_SUCCESS) return mpi_errno;
    if (mpiacc_core_disabled) return mpiacc_err_return_comm(MPI_COMM_WORLD, start_disabled());
    PMPI_Query_thread(&mpiacc_core_thread_level);
    return mpiacc_err_return_comm(MPI_COMM_WORLD, start_modules());
}

MPIACC_INTERPOSE_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int mpi_errno;
    read_env();
    mpi_errno = PMPI_Init_thread(argc, argv, required, provided);
    mpi_started(mpi_errno);
    if (mpi_errno != MPI_SUCCESS) return mpi_errno;
    if (mpiacc_core_disabled) return mpiacc_err_return_comm(MPI_COMM_WORLD, start_disabled());
    mpiacc_core_thread_level = *provided;
    return mpiacc_err_return_comm(MPI_COMM_WORLD, start_modules());
}

MPIACC_INTERPOSE_EXPORT int MPI_Finalize(void)
{
    mpiacc_rp_finalize_report_t rep;
    if (mpiacc_core_disabled) {
        mpiacc_attrs_finalize();
        mpiacc_err_finalize();
        return PMPI_Finalize();
    }
    if (!mpiacc_core_initialized) return PMPI_Finalize();
    /* Operations still pending get a bounded time, then are cancelled or
     * abandoned (reported); MPI_Finalize itself always goes ahead. */
    mpiacc_rp_finalize(&rep);
    mpiacc_interpose_stats_summary();
    mpiacc_coll_finalize();
    mpiacc_proto_finalize();
    mpiacc_dispatch_memkind_finalize();
    mpiacc_dispatch_facts_finalize();
    MPIACC_LOG(MPIACC_LOG_DEBUG, "finalize: request pool released");
    mpiacc_pack_forget_named(); /* their slots' data goes while the backends are up */
    unregister_slots();
    mpiacc_backends_finalize(rep.busy_kinds);
    mpiacc_core_handle_forget();
    mpiacc_engine_mpi.finalize();
    mpiacc_pack_finalize();
    mpiacc_attrs_finalize();
    mpiacc_err_finalize();
    mpiacc_core_initialized = 0;
    MPIACC_LOG(MPIACC_LOG_DEBUG, "finalize: mpiacc released, calling PMPI_Finalize");
    return PMPI_Finalize();
}

MPIACC_INTERPOSE_EXPORT int MPIACC_Get_version(int *major, int *minor)
{
    if (!major || !minor) return MPI_ERR_ARG;
    *major = MPIACC_VERSION_MAJOR;
    *minor = MPIACC_VERSION_MINOR;
    return MPI_SUCCESS;
}
