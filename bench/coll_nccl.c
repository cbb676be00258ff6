/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_nccl.c: NCCL alone, bench/coll's baseline (see coll_nccl.h). */
#include "coll_nccl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "bench.h"

static struct {
    ncclResult_t (*GetUniqueId)(ncclUniqueId *);
    ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*CommDestroy)(ncclComm_t);
    ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*Broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*AllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*Send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*Recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
} N;
static void *lib;
static ncclComm_t comm_;
static int rank_, size_;

#define NCCL_OK(call_)                                                                       \
    do {                                                                                     \
        ncclResult_t r_ = (call_);                                                           \
        if (r_ != ncclSuccess) {                                                             \
            char m_[64];                                                                     \
            snprintf(m_, sizeof m_, "ncclResult_t %d", (int)r_);                             \
            bench_fail(__FILE__, __LINE__, #call_, m_);                                      \
        }                                                                                    \
    } while (0)

int cn_open(MPI_Comm comm, char *why, size_t len)
{
    const char *root = getenv("NCCL_ROOT");
    char file[4096];
    ncclUniqueId id;
    int ok;
    snprintf(file, sizeof file, "%s%s", root && *root ? root : "", root && *root ? "/lib/libnccl.so.2" : "libnccl.so.2");
    lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    ok = lib != NULL;
#define S(f, n) ok = ok && (*(void **)&N.f = dlsym(lib, n)) != NULL
    S(GetUniqueId, "ncclGetUniqueId");
    S(CommInitRank, "ncclCommInitRank");
    S(CommDestroy, "ncclCommDestroy");
    S(AllReduce, "ncclAllReduce");
    S(Broadcast, "ncclBroadcast");
    S(AllGather, "ncclAllGather");
    S(Send, "ncclSend");
    S(Recv, "ncclRecv");
    S(GroupStart, "ncclGroupStart");
    S(GroupEnd, "ncclGroupEnd");
#undef S
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        snprintf(why, len, "NCCL not loaded (%s)", lib ? "a symbol is missing" : dlerror());
        if (lib) dlclose(lib), lib = NULL;
        return 0;
    }
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
    if (rank_ == 0) NCCL_OK(N.GetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
    NCCL_OK(N.CommInitRank(&comm_, size_, id, rank_));
    return 1;
}

static void one(int op, void *sb, void *rb, size_t n, cudaStream_t st)
{
    float *s = sb, *r = rb;
    switch (op) {
    case CN_ALLREDUCE: NCCL_OK(N.AllReduce(s, r, n, ncclFloat32, ncclSum, comm_, st)); break;
    case CN_BCAST: NCCL_OK(N.Broadcast(s, s, n, ncclFloat32, 0, comm_, st)); break;
    case CN_ALLGATHER: NCCL_OK(N.AllGather(s, r, n, ncclFloat32, comm_, st)); break;
    case CN_ALLTOALL:
    case CN_ALLTOALLV:
        NCCL_OK(N.GroupStart());
        for (int p = 0; p < size_; p++) {
            NCCL_OK(N.Send(s + (size_t)p * n, n, ncclFloat32, p, comm_, st));
            NCCL_OK(N.Recv(r + (size_t)p * n, n, ncclFloat32, p, comm_, st));
        }
        NCCL_OK(N.GroupEnd());
        break;
    default: { /* the periodic ring: block 0 to / from the left, block 1 to / from the right */
        int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
        NCCL_OK(N.GroupStart());
        NCCL_OK(N.Send(s, n, ncclFloat32, left, comm_, st));
        NCCL_OK(N.Send(s + n, n, ncclFloat32, right, comm_, st));
        NCCL_OK(N.Recv(r + n, n, ncclFloat32, right, comm_, st));
        NCCL_OK(N.Recv(r, n, ncclFloat32, left, comm_, st));
        NCCL_OK(N.GroupEnd());
    }
    }
}

double cn_timed(int op, void *sb, void *rb, int n, void *st, MPI_Comm comm, int warmup, int iters)
{
    double sum = 0;
    for (int i = -warmup; i < iters; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        one(op, sb, rb, (size_t)n, (cudaStream_t)st);
        BENCH_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)st));
        if (i >= 0) sum += MPI_Wtime() - t0;
    }
    return sum * 1e6 / iters;
}

double cn_back_to_back(void *sb, void *rb, int n, void *st, int iters)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) one(CN_ALLREDUCE, sb, rb, (size_t)n, (cudaStream_t)st);
    BENCH_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)st));
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

void cn_close(void)
{
    if (comm_) N.CommDestroy(comm_);
    comm_ = NULL;
    if (lib) dlclose(lib);
    lib = NULL;
}
