/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_reduce_emul: the reduction kernel's body and plan
 * (src/cuda/cuda_coll_body.cuh, the source cuda_coll.cu launches) run on
 * the host, thread by thread over the planned grid, against the host
 * reference (tests/common/ref_reduce.h): every kernel (kind, op), n = 1..5
 * and 64 sources, counts around the 16-byte word, the word path, a head
 * before the first word, one source misaligned (element path), pointers
 * not aligned to the element (byte copies), dst aliasing a source, grids
 * smaller than the work (grid-stride), and nothing written outside dst.
 * Needs no GPU.  Host code compiled by nvcc (C++).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_coll_body.cuh"
extern "C" {
#include "testutil.h"
}
#include "ref_reduce.h"

using namespace mpiacc_cuda_rd;

namespace {

struct emul {
    args a;
    long long blocks;
    template <typename T, int OP> int run()
    {
        const long long nthr = blocks * NT;
        for (long long t = 0; t < nthr; t++) body<T, OP>(a, t, nthr);
        return 0;
    }
};

struct stats_t {
    long runs, words, heads, strides, unaligned;
} st;

/* Plans and emulates r as mpiacc_cuda_launch_reduce would launch it. */
int emulate(const mpiacc_cuda_red_t *r, int nsm)
{
    emul E;
    int e = plan(r, nsm, &E.a, &E.blocks);
    if (e != (int)cudaSuccess) return e;
    if (E.blocks == 0) return 0;
    st.runs++;
    st.words += E.a.nvec > 0;
    st.heads += E.a.nvec > 0 && E.a.head > 0;
    st.strides += E.blocks * NT * U < E.a.nvec || E.blocks * NT < E.a.count - E.a.nvec * (16 / elem_size(r->kind));
    st.unaligned += !E.a.elem_aligned;
    return dispatch(r->kind, r->op, E);
}

const MPI_Datatype *kind_types()
{
    static MPI_Datatype kt[MPIACC_CUDA_RED_NKIND];
    kt[MPIACC_CUDA_RED_I8] = MPI_INT8_T, kt[MPIACC_CUDA_RED_U8] = MPI_UINT8_T;
    kt[MPIACC_CUDA_RED_I16] = MPI_INT16_T, kt[MPIACC_CUDA_RED_U16] = MPI_UINT16_T;
    kt[MPIACC_CUDA_RED_I32] = MPI_INT32_T, kt[MPIACC_CUDA_RED_U32] = MPI_UINT32_T;
    kt[MPIACC_CUDA_RED_I64] = MPI_INT64_T, kt[MPIACC_CUDA_RED_U64] = MPI_UINT64_T;
    kt[MPIACC_CUDA_RED_F32] = MPI_FLOAT, kt[MPIACC_CUDA_RED_F64] = MPI_DOUBLE;
    return kt;
}

void body_vs_reference(void **state)
{
    const MPI_Datatype *kt = kind_types();
    const long long counts[] = {0, 1, 2, 7, 15, 16, 17, 100, 1000, 4099, 40000};
    const int ns[] = {1, 2, 3, 4, 5, 64};
    const long long CAPB = 40000 * 8 + 256;
    unsigned char *src[64], *dst = (unsigned char *)malloc((size_t)CAPB + 256), *want = (unsigned char *)malloc((size_t)CAPB);
    uint64_t seed = mpiacc_test_seed();
    int bad = 0;
    (void)state;
    for (int i = 0; i < 64; i++) src[i] = (unsigned char *)malloc((size_t)CAPB + 256);
    for (int kind = 0; kind < MPIACC_CUDA_RED_NKIND; kind++)
        for (int o = 0; o < MPIACC_CUDA_RED_NOP; o++) {
            ref_rd_type_t t;
            mpiacc_cuda_red_t r;
            assert_true(ref_reduce_type(kt[kind], &t));
            memset(&r, 0, sizeof r);
            r.n = 1, r.count = 1, r.kind = kind, r.op = o, r.src[0] = src[0], r.dst = dst;
            if (!ref_reduce_supported(kt[kind], ref_reduce_op(o))) { /* the kernel set is the reference's set */
                if (emulate(&r, 1) != (int)cudaErrorInvalidValue) {
                    printf("kind %d op %s: not refused\n", kind, ref_reduce_op_name(o));
                    bad++;
                }
                continue;
            }
            for (int ci = 0; ci < (int)(sizeof counts / sizeof counts[0]); ci++)
                for (int ni = 0; ni < (int)(sizeof ns / sizeof ns[0]); ni++)
                    for (int v = 0; v < 5; v++) {
                        /* v: 0 aligned, 1 same misalignment, 2 one source differs, 3 byte-misaligned, 4 in place */
                        const long long count = counts[ci], es = t.size;
                        const int n = ns[ni];
                        const long long so = v == 0 ? 0 : v == 3 ? 1 : 3 * es, dso = v == 2 ? 5 * es : so;
                        const void *srcs[64];
                        unsigned char *d;
                        if (count > 5000 && (n > 3 || v > 1)) continue;
                        memset(&r, 0, sizeof r);
                        for (int i = 0; i < n; i++) {
                            const long long off = (v == 2 && i == n - 1) ? so + es : so;
                            ref_reduce_fill(&t, src[i] + off, count + 1, seed + (uint64_t)(i * 77 + ci * 1000 + v));
                            srcs[i] = src[i] + off;
                            r.src[i] = src[i] + off;
                        }
                        memset(dst, 0xAB, (size_t)CAPB + 256);
                        ref_reduce(kt[kind], ref_reduce_op(o), srcs, n, count, want);
                        d = v == 4 ? src[n / 2] + so : dst + dso;
                        r.dst = d, r.count = count, r.n = n, r.kind = kind, r.op = o;
                        if (emulate(&r, 1 + (ci & 1)) != 0) {
                            printf("kind %d op %s count %lld n %d v %d: refused\n", kind, ref_reduce_op_name(o), count, n, v);
                            bad++;
                            continue;
                        }
                        if (memcmp(d, want, (size_t)(count * es)) != 0) {
                            printf("kind %d op %s count %lld n %d v %d: differs from the reference\n", kind,
                                   ref_reduce_op_name(o), count, n, v);
                            bad++;
                        }
                        if (v != 4)
                            for (long long b = 0; b < CAPB + 256; b++)
                                if ((b < dso || b >= dso + count * es) && dst[b] != 0xAB) {
                                    printf("kind %d op %s count %lld n %d v %d: byte %lld outside dst written\n", kind,
                                           ref_reduce_op_name(o), count, n, v, b);
                                    bad++;
                                    break;
                                }
                    }
        }
    printf("test_cuda_reduce_emul: %ld grids (word path %ld, with a head %ld, grid-stride %ld, byte copies %ld)\n",
           st.runs, st.words, st.heads, st.strides, st.unaligned);
    for (int i = 0; i < 64; i++) free(src[i]);
    free(dst), free(want);
    assert_int_equal(bad, 0);
    assert_true(st.words > 0 && st.heads > 0 && st.strides > 0 && st.unaligned > 0); /* every path ran */
}

void plan_refusals(void **state)
{
    mpiacc_cuda_red_t r;
    args a;
    long long blocks = -1;
    char buf[64];
    (void)state;
    memset(&r, 0, sizeof r);
    r.kind = MPIACC_CUDA_RED_F32, r.op = MPIACC_CUDA_RED_SUM, r.src[0] = buf, r.dst = buf, r.count = 4;
    r.n = 0;
    assert_int_equal(plan(&r, 1, &a, &blocks), (int)cudaErrorInvalidValue);
    r.n = MPIACC_CUDA_RED_MAXSRC + 1;
    assert_int_equal(plan(&r, 1, &a, &blocks), (int)cudaErrorInvalidValue);
    r.n = 1, r.count = -1;
    assert_int_equal(plan(&r, 1, &a, &blocks), (int)cudaErrorInvalidValue);
    r.count = 0;
    assert_int_equal(plan(&r, 1, &a, &blocks), (int)cudaSuccess);
    assert_int_equal(blocks, 0);
    r.kind = MPIACC_CUDA_RED_NKIND, r.count = 4;
    assert_int_equal(plan(&r, 1, &a, &blocks), (int)cudaErrorInvalidValue);
    /* 16 MiB of floats on 132 SMs: all words, at most 8 blocks per SM */
    r.kind = MPIACC_CUDA_RED_F32, r.count = 4 << 20, r.src[0] = (void *)(uintptr_t)4096, r.dst = (void *)(uintptr_t)8192;
    assert_int_equal(plan(&r, 132, &a, &blocks), (int)cudaSuccess);
    assert_int_equal(a.head, 0);
    assert_int_equal(a.nvec, 1 << 20);
    assert_int_equal(blocks, 132 * MAXB_PER_SM);
}

} /* namespace */

int main(int argc, char **argv)
{
    int fails;
    const struct CMUnitTest tests[] = {cmocka_unit_test(body_vs_reference), cmocka_unit_test(plan_refusals)};
    MPI_Init(&argc, &argv);
    fails = MPIACC_TEST_RUN("cuda_reduce_emul", tests, NULL, NULL);
    MPI_Finalize();
    return fails ? 1 : 0;
}
