/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/common/local_rank.h: this process's rank and the number of processes
 * on its node, for choosing a GPU (node-local rank % devices).  Shared by
 * the benchmarks, the examples and the CUDA tests.
 *
 * The launcher's word where it gives one (MPICH's and Intel MPI's hydra:
 * MPI_LOCALRANKID, MPI_LOCALNRANKS; Open MPI: OMPI_COMM_WORLD_LOCAL_RANK,
 * OMPI_COMM_WORLD_LOCAL_SIZE; Slurm: SLURM_LOCALID, SLURM_NTASKS_PER_NODE),
 * else MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).  The launcher comes first
 * because MPICH answers the split with one process per node under
 * MPIR_CVAR_NOLOCAL=1 — the setting mpiacc-run uses for its UCX transport —
 * which would put every rank on device 0.  Call it on every process of comm
 * (the fallback is collective).
 */
#ifndef MPIACC_BENCH_LOCAL_RANK_H
#define MPIACC_BENCH_LOCAL_RANK_H

#include <stdlib.h>

#include <mpi.h>

static inline int local_rank_env(const char *const names[], int n)
{
    for (int i = 0; i < n; i++) {
        const char *s = getenv(names[i]);
        if (s && *s) return atoi(s);
    }
    return -1;
}

static inline void local_rank_size(MPI_Comm comm, int *rank, int *size)
{
    static const char *const r[] = {"MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};
    static const char *const s[] = {"MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"};
    int lr = local_rank_env(r, 3), ls = local_rank_env(s, 3);
    if (lr < 0 || ls <= 0) {
        MPI_Comm node;
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &lr);
        MPI_Comm_size(node, &ls);
        MPI_Comm_free(&node);
    }
    *rank = lr;
    if (size) *size = ls;
}

#endif
