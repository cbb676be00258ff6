/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_uva.c: the CUDA backend's pointer query (the table's classify entry,
 * used by MPIACC_UVA=1 and by mixed memory-kind assertions; see
 * src/dispatch/memkind.c for the cache in front of it).
 *
 * One driver call, cuPointerGetAttributes, asking for the memory type, the
 * managed flag and the device ordinal.  Unlike cuPointerGetAttribute it
 * succeeds on an address CUDA does not know (plain host memory), leaving
 * the attributes zero, and it needs no current context, so it never
 * creates one (the runtime's cudaPointerGetAttributes would create the
 * primary context of the current device in a rank that has not touched
 * CUDA yet).  The entry point comes through the runtime
 * (cudaGetDriverEntryPointByVersion), as in cuda_ipc.c: the library links
 * no libcuda.
 *
 * Classes (include/mpiacc.h, "Memory allocation kinds", says why):
 *   CU_MEMORYTYPE_DEVICE, managed  -> MANAGED (device path)
 *   CU_MEMORYTYPE_DEVICE           -> DEVICE  (device path)
 *   CU_MEMORYTYPE_HOST (cudaMallocHost, cudaHostRegister)
 *                                  -> PINNED  (device path: the kernels
 *                                     read it through its mapping)
 *   0 (unknown to CUDA)            -> HOST    (host path)
 */
#include <pthread.h>

#include <cuda.h> /* driver API types only */

#include "cuda_internal.h"

typedef CUresult (*getattrs_fn)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr);
static getattrs_fn drv_getattrs;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void drv_lookup(void)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint("cuPointerGetAttributes", &fn, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        fn = NULL;
    }
    drv_getattrs = (getattrs_fn)fn;
}

int mpiacc_cuda_classify(const void *p, int *mem, int *device)
{
    int mpi_errno = MPI_SUCCESS;
    CUpointer_attribute which[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    unsigned int type = 0;
    int managed = 0, ordinal = -1;
    void *data[3] = {&type, &managed, &ordinal};
    CUresult r;

    *mem = MPIACC_CORE_MEM_HOST;
    *device = -1;
    pthread_once(&drv_once, drv_lookup);
    if (!drv_getattrs)
        MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA: cuPointerGetAttributes is not available from the driver: "
                                      "MPIACC_UVA cannot classify buffers");
    r = drv_getattrs(3, which, data, (CUdeviceptr)(uintptr_t)p);
    if (r != CUDA_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA: cuPointerGetAttributes(%p) failed with CUresult %d", p, (int)r);
    if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) {
        *mem = managed ? MPIACC_CORE_MEM_MANAGED : MPIACC_CORE_MEM_DEVICE;
        *device = ordinal;
    } else if (type == CU_MEMORYTYPE_HOST) {
        *mem = managed ? MPIACC_CORE_MEM_MANAGED : MPIACC_CORE_MEM_PINNED;
        *device = managed ? ordinal : -1;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
