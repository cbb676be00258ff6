/* SPDX-License-Identifier: BSD-3-Clause */
/* Issue 10 error cases (tests/core/err_cases.h) on CUDA device pointers
 * (MPIACC_BUF_CUDA, MPIACC_STREAM = a user stream).  2 ranks; `--item N`
 * picks the group; skipped without a CUDA device. */
#include "cu_p2p.h"
#include "err_cases.h"
#include "engine/engine.h"

static void *cuda_alloc(size_t bytes, const int *init)
{
    void *d;
    int *tmp = NULL;
    CU_CK(cudaMalloc(&d, bytes));
    if (!init) {
        tmp = malloc(bytes);
        for (size_t i = 0; i < bytes / sizeof(int); i++) tmp[i] = -1;
    }
    CU_CK(cudaMemcpy(d, init ? (const void *)init : tmp, bytes, cudaMemcpyHostToDevice));
    CU_CK(cudaStreamSynchronize(cudaStreamLegacy)); /* pageable: the DMA may land later (cu_put) */
    free(tmp);
    return d;
}

static void cuda_read(void *buf, size_t bytes, void *out)
{
    CU_CK(cudaMemcpy(out, buf, bytes, cudaMemcpyDeviceToHost));
}

static void cuda_release(void *buf) { CU_CK(cudaFree(buf)); }

static void cuda_tag(MPI_Datatype t)
{
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA);
    MPI_Type_set_attr(t, MPIACC_STREAM, (void *)cu_us);
}

static const ec_dev_t cuda_dev = {"cuda", cuda_alloc, cuda_read, cuda_release, cuda_tag};

int main(int argc, char **argv)
{
    int failed;
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    /* Device messages to MPI: a truncated receive's bytes are MPI's (item 3). */
    ec_trunc_undefined = mpiacc_engine_mpi.takes(MPIACC_KIND_CUDA);
    failed = ec_run(argc, argv, &cuda_dev);
    return cu_fini(failed);
}
