/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/memkind.c: what a CUDA-aware program asks MPI before handing
 * it device pointers.  With MPIACC_UVA=1 (src/dispatch/memkind.h) mpiacc
 * makes the PyPI MPICH CUDA-aware, so MPICH's own queries say so:
 * MPIX_Query_cuda_support() returns 1 and MPIX_GPU_query_support reports
 * CUDA.  Callable before MPI_Init (the environment is read then).
 */
#include "interpose.h"
#include "core/env.h"

static int uva_mode(void)
{
    if (mpiacc_core_initialized) return mpiacc_dispatch_uva;
    return !mpiacc_env_bool("MPIACC_DISABLE") && mpiacc_env_bool("MPIACC_UVA");
}

MPIACC_INTERPOSE_EXPORT int MPIX_Query_cuda_support(void)
{
    return uva_mode() ? 1 : PMPIX_Query_cuda_support();
}

MPIACC_INTERPOSE_EXPORT int MPIX_GPU_query_support(int gpu_type, int *is_supported)
{
    int err = PMPIX_GPU_query_support(gpu_type, is_supported);
    if (err == MPI_SUCCESS && gpu_type == MPIX_GPU_SUPPORT_CUDA && is_supported && uva_mode()) *is_supported = 1;
    return err;
}
