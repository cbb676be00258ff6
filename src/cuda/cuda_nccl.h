/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_nccl.h: the CUDA backend's collective engine, NCCL, loaded at run
 * time with dlopen (never linked): cuda_nccl.c (loader, communicators,
 * errors), cuda_nccl_run.c (one call: packs, the NCCL group, unpacks, its
 * completion).  nccl.h gives the prototypes and types at build time;
 * without it CMake builds cuda_nccl_stub.c, whose table says so.
 */
#ifndef MPIACC_CUDA_NCCL_H_INCLUDED
#define MPIACC_CUDA_NCCL_H_INCLUDED

#include <nccl.h>

#include "cuda_internal.h"
#include "core/backend_coll.h"

_Static_assert(sizeof(ncclUniqueId) == MPIACC_BCOLL_ID_BYTES, "ncclUniqueId size");

/* The entry points found in the library (NULL: absent in that version). */
typedef struct mpiacc_cuda_nccl_api {
    ncclResult_t (*GetVersion)(int *);
    const char *(*GetErrorString)(ncclResult_t);
    const char *(*GetLastError)(ncclComm_t);
    ncclResult_t (*GetUniqueId)(ncclUniqueId *);
    ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*CommDestroy)(ncclComm_t);
    ncclResult_t (*CommAbort)(ncclComm_t);
    ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t *);
    ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*Reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*Broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*AllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*ReduceScatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                  cudaStream_t);
    ncclResult_t (*Send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*Recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
} mpiacc_cuda_nccl_api_t;

/* Filled once by the loader (valid when it said yes). */
extern mpiacc_cuda_nccl_api_t mpiacc_cuda_nccl;

/* An engine communicator. */
typedef struct mpiacc_cuda_nccl_comm {
    ncclComm_t comm;
    int dev;
    unsigned polls; /* tests since the last asynchronous-error query */
} mpiacc_cuda_nccl_comm_t;

/* An MPI error code for NCCL's result r of `call` (MPI_SUCCESS for
 * ncclSuccess): the class by the table in cuda_nccl.c, the message naming
 * the call, NCCL's string for r and its last error (comm may be NULL). */
int mpiacc_cuda_nccl_err(int r, const char *call, ncclComm_t comm);
/* The MPI error class mpiacc_cuda_nccl_err gives r (tests). */
int mpiacc_cuda_nccl_class(int r);
/* NCCL's type for a predefined MPI type it reduces or moves (-1: none). */
int mpiacc_cuda_nccl_type(MPI_Datatype t);
/* cuda_nccl_run.c: the table's run, test and release. */
int mpiacc_cuda_nccl_run(void *cc, const mpiacc_bcoll_call_t *call, void **xfer);
int mpiacc_cuda_nccl_test(void *cc, void *xfer, int *done);
void mpiacc_cuda_nccl_release(void *xfer);

#endif
