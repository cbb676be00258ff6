/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_copyn.cu: the many-piece copy kernel of import_copy_n (cuda_coll.h):
 * one launch copies up to MPIACC_CUDA_COPYN_MAXP contiguous pieces.  Its
 * body and plan are in cuda_copyn_body.cuh (shared with the host
 * emulation test).
 */
#include "cuda_copyn_body.cuh"

namespace {

using namespace mpiacc_cuda_cn;

template <int N> __global__ void __launch_bounds__(NT) copyn_kernel(const __grid_constant__ args<N> a)
{
    body<N>(a, (long long)blockIdx.x * NT + threadIdx.x, (long long)gridDim.x * NT);
}

/* Plans and launches pieces c[0..n) (n <= N). */
template <int N> int launch(const mpiacc_cuda_cpiece_t *c, int n, int nsm, cudaStream_t st)
{
    args<N> a;
    long long blocks = 0;
    int e = plan<N>(c, n, nsm, &a, &blocks);
    if (e != (int)cudaSuccess || blocks == 0) return e;
    void *p[1] = {&a};
    return (int)cudaLaunchKernel((const void *)copyn_kernel<N>, dim3((unsigned)blocks), dim3(NT), p, 0, st);
}

} /* namespace */

static_assert(sizeof(args<MPIACC_CUDA_COPYN_MAXP>) <= 4000, "the kernel's parameters stay within 4 KiB");

extern "C" int mpiacc_cuda_launch_copyn(const mpiacc_cuda_cpiece_t *p, int n, int nsm, cudaStream_t st)
{
    if (n < 0 || (n > 0 && !p)) return (int)cudaErrorInvalidValue;
    for (int i = 0; i < n; i++) /* checked first: nothing enqueued when one is wrong */
        if (p[i].bytes < 0 || (p[i].bytes > 0 && (!p[i].src || !p[i].dst))) return (int)cudaErrorInvalidValue;
    for (int i = 0; i < n; i += MPIACC_CUDA_COPYN_MAXP) {
        const int m = n - i < MPIACC_CUDA_COPYN_MAXP ? n - i : MPIACC_CUDA_COPYN_MAXP;
        const int e = m <= SMALL ? launch<SMALL>(p + i, m, nsm, st) : launch<MPIACC_CUDA_COPYN_MAXP>(p + i, m, nsm, st);
        if (e != (int)cudaSuccess) return e;
    }
    return (int)cudaSuccess;
}
