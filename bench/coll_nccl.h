/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_nccl.h: bench/coll's baseline, NCCL alone — the same collectives on
 * the same device buffers called straight on NCCL, each followed by
 * cudaStreamSynchronize (as an MPI call returns), in the same run.  NCCL is
 * loaded with dlopen (NCCL_ROOT/lib/libnccl.so.2, else the dynamic
 * linker's search), as mpiacc loads it: no link-time dependency.
 */
#ifndef BENCH_COLL_NCCL_H_INCLUDED
#define BENCH_COLL_NCCL_H_INCLUDED

#include <stddef.h>

#include <mpi.h>

/* The collectives bench/coll times (its OP_* order). */
enum { CN_ALLREDUCE, CN_BCAST, CN_ALLGATHER, CN_ALLTOALL, CN_ALLTOALLV, CN_NEIGHBOR };

/* Loads NCCL and makes one communicator over comm on the current device
 * (collective).  1: ready; 0: not (why says it; the bench leaves the
 * column out). */
int cn_open(MPI_Comm comm, char *why, size_t len);
/* warmup + iters calls of op on n floats per block (the buffers of
 * bench/coll's buffer layout) on stream st, MPI_Barrier between calls (not
 * timed), each followed by cudaStreamSynchronize; this rank's average us. */
double cn_timed(int op, void *sb, void *rb, int n, void *st, MPI_Comm comm, int warmup, int iters);
/* iters back-to-back 8 B (2 floats) ncclAllReduce on st, then one
 * synchronisation: us per call. */
double cn_back_to_back(void *sb, void *rb, int n, void *st, int iters);
void cn_close(void);

#endif
