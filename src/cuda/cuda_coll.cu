/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_coll.cu: the reduction kernel of the on-device collectives
 * (cuda_coll.h): one launch reads n sources and writes dst.  Its body and
 * plan are in cuda_coll_body.cuh (shared with the host emulation test).
 */
#include "cuda_coll_body.cuh"

namespace {

using namespace mpiacc_cuda_rd;

template <typename T, int OP> __global__ void __launch_bounds__(NT) red_kernel(const args a)
{
    body<T, OP>(a, (long long)blockIdx.x * NT + threadIdx.x, (long long)gridDim.x * NT);
}

struct launcher {
    args a;
    long long blocks;
    cudaStream_t st;
    template <typename T, int OP> int run()
    {
        void *p[1] = {&a};
        return (int)cudaLaunchKernel((const void *)red_kernel<T, OP>, dim3((unsigned)blocks), dim3(NT), p, 0, st);
    }
};

/* count 0: only the pair is checked */
struct nothing {
    template <typename T, int OP> int run() { return (int)cudaSuccess; }
};

} /* namespace */

extern "C" int mpiacc_cuda_red_elem_size(int kind) { return elem_size(kind); }

extern "C" int mpiacc_cuda_launch_reduce(const mpiacc_cuda_red_t *r, int nsm, cudaStream_t st)
{
    launcher L;
    int e = plan(r, nsm, &L.a, &L.blocks);
    if (e != (int)cudaSuccess) return e;
    if (L.blocks == 0) {
        nothing n;
        return dispatch(r->kind, r->op, n);
    }
    L.st = st;
    return dispatch(r->kind, r->op, L);
}
