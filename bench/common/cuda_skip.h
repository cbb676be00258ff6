/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/common/cuda_skip.h: whether a CUDA benchmark can run here, checked
 * the same way by each (header only; include the CUDA runtime header first,
 * and tests/cuda on the include path for cu_nodev.h).
 */
#ifndef MPIACC_BENCH_CUDA_SKIP_H
#define MPIACC_BENCH_CUDA_SKIP_H

#include <stdio.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "cu_nodev.h"

/* After MPI_Init: nonzero when the run must be skipped, because
 * MPI_COMM_WORLD has not exactly `ranks` processes or no CUDA device can be
 * used; rank 0 has then printed "SKIPPED: <why>" and the caller finalizes
 * MPI and exits 0.  *ndev: the CUDA devices cudaGetDeviceCount counts. */
static inline int bench_cuda_skip(int ranks, int *ndev)
{
    int rank, size;
    char why[160];
    cudaError_t e = cudaGetDeviceCount(ndev);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == ranks && e == cudaSuccess && *ndev != 0) return 0;
    if (rank == 0) {
        if (size != ranks)
            printf("SKIPPED: needs %d ranks\n", ranks);
        else
            printf("SKIPPED: %s\n", cu_nodev_why(e, *ndev, why, sizeof why));
    }
    return 1;
}

#endif
