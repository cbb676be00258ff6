/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_copyn_emul: the many-piece copy kernel's body and plan
 * (src/cuda/cuda_copyn_body.cuh, the source cuda_copyn.cu launches) run
 * on the host, thread by thread over the planned grid (and over grids
 * smaller than the work: grid-stride), against memcpy: 1 to 64 pieces of
 * 0 B to 1 MiB, every mutual alignment of source and destination (16-byte
 * words, 8, 4, 2, single bytes), heads and tails, empty pieces, and
 * nothing written outside the pieces.  Also the plan's refusals and its
 * grid for one long piece.  Needs no GPU.  Host code compiled by nvcc (C++).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_copyn_body.cuh"
extern "C" {
#include "testutil.h"
}

using namespace mpiacc_cuda_cn;

namespace {

struct stats_t {
    long runs, small, strides, ws[5], heads, tails;
} st;

/* Plans pieces c[0..n) with the parameter block of N pieces and runs the
 * body over the grid (or over `blocks_override` blocks when > 0 and
 * smaller than planned: grid-stride). */
template <int N> int emulate_n(const mpiacc_cuda_cpiece_t *c, int n, int nsm, long long blocks_override)
{
    args<N> a;
    long long blocks = 0;
    int e = plan<N>(c, n, nsm, &a, &blocks);
    if (e != (int)cudaSuccess || blocks == 0) return e;
    if (blocks_override > 0 && blocks_override < blocks) blocks = blocks_override;
    st.runs++;
    st.small += N == SMALL;
    st.strides += blocks * NT < a.total;
    for (int i = 0, j = 0; i < n; i++) {
        if (c[i].bytes == 0) continue; /* dropped by the plan */
        const piece &p = a.p[j++];
        st.ws[p.lws] += p.nw > 0;
        st.heads += p.head > 0;
        st.tails += items(p, c[i].bytes) > p.nw + p.head;
    }
    const long long nthr = blocks * NT;
    for (long long t = 0; t < nthr; t++) body<N>(a, t, nthr);
    return 0;
}

/* As mpiacc_cuda_launch_copyn chooses (up to SMALL pieces: the small block). */
int emulate(const mpiacc_cuda_cpiece_t *c, int n, int nsm, long long blocks_override)
{
    return n <= SMALL ? emulate_n<SMALL>(c, n, nsm, blocks_override)
                      : emulate_n<MPIACC_CUDA_COPYN_MAXP>(c, n, nsm, blocks_override);
}

uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void body_vs_memcpy(void **state)
{
    const long long CAP = 4 << 20;
    unsigned char *src = (unsigned char *)malloc((size_t)CAP), *dst = (unsigned char *)malloc((size_t)CAP),
                  *want = (unsigned char *)malloc((size_t)CAP);
    uint64_t seed = mpiacc_test_seed(), rs = seed;
    int bad = 0;
    (void)state;
    for (long long i = 0; i < CAP; i++) src[i] = (unsigned char)(i * 131 + (i >> 9) + 7);
    for (int round = 0; round < 400 && !bad; round++) {
        mpiacc_cuda_cpiece_t c[MPIACC_CUDA_COPYN_MAXP];
        const int big = round % 20 == 0;
        const int n = round < 64 || big ? 1 + round % 4 : 1 + (int)(rnd(&rs) % MPIACC_CUDA_COPYN_MAXP);
        const long long maxb = big ? 1 << 20 : round % 3 == 0 ? 4096 : 64;
        long long at = 0;
        /* pieces laid one after the other in dst (gaps between), sources anywhere */
        for (int i = 0; i < n; i++) {
            long long b = (long long)(rnd(&rs) % (uint64_t)(maxb + 1));
            long long gap = (long long)(rnd(&rs) % 40);
            long long so = (long long)(rnd(&rs) % (uint64_t)(CAP - maxb - 64));
            if (round % 5 == 0) so = (so & ~15ll) + (at + gap) % 16; /* same alignment: 16-byte words */
            if (rnd(&rs) % 16 == 0) b = 0;                           /* empty piece */
            if (at + gap + b > CAP) b = 0, gap = 0;
            c[i].src = src + so;
            c[i].dst = dst + at + gap;
            c[i].bytes = b;
            at += gap + b;
        }
        memset(dst, 0xAB, (size_t)CAP);
        memset(want, 0xAB, (size_t)CAP);
        for (int i = 0; i < n; i++) memcpy((unsigned char *)c[i].dst - dst + want, c[i].src, (size_t)c[i].bytes);
        if (emulate(c, n, 1 + round % 3, round % 7 == 1 ? 1 + round % 3 : 0) != 0) {
            printf("round %d: refused\n", round);
            bad++;
            continue;
        }
        if (memcmp(dst, want, (size_t)CAP) != 0) {
            long long k = 0;
            while (dst[k] == want[k]) k++;
            printf("round %d (%d pieces, seed %llu): byte %lld is 0x%02x, expected 0x%02x\n", round, n,
                   (unsigned long long)seed, k, dst[k], want[k]);
            bad++;
        }
    }
    printf("test_cuda_copyn_emul: %ld grids (%ld of the small block, grid-stride %ld; pieces with words of 1/2/4/8/16 B: %ld/%ld/%ld/%ld/%ld, "
           "heads %ld, tails %ld)\n",
           st.runs, st.small, st.strides, st.ws[0], st.ws[1], st.ws[2], st.ws[3], st.ws[4], st.heads, st.tails);
    free(src), free(dst), free(want);
    assert_int_equal(bad, 0);
    assert_true(st.small > 0 && st.small < st.runs && st.strides > 0 && st.heads > 0 && st.tails > 0);
    for (int w = 0; w < 5; w++) assert_true(st.ws[w] > 0); /* every word size ran */
}

void plan_cases(void **state)
{
    args<MPIACC_CUDA_COPYN_MAXP> a;
    args<SMALL> s;
    long long blocks = -1;
    char buf[64];
    mpiacc_cuda_cpiece_t c[MPIACC_CUDA_COPYN_MAXP + 1];
    (void)state;
    memset(c, 0, sizeof c);
    c[0].src = buf, c[0].dst = buf + 32, c[0].bytes = 4;
    assert_int_equal(plan<SMALL>(c, SMALL + 1, 1, &s, &blocks), (int)cudaErrorInvalidValue);
    assert_int_equal(plan<MPIACC_CUDA_COPYN_MAXP>(c, -1, 1, &a, &blocks), (int)cudaErrorInvalidValue);
    c[0].bytes = -1;
    assert_int_equal(plan<MPIACC_CUDA_COPYN_MAXP>(c, 1, 1, &a, &blocks), (int)cudaErrorInvalidValue);
    c[0].bytes = 4, c[0].dst = NULL;
    assert_int_equal(plan<MPIACC_CUDA_COPYN_MAXP>(c, 1, 1, &a, &blocks), (int)cudaErrorInvalidValue);
    c[0].bytes = 0; /* empty: nothing to do, its NULL accepted */
    assert_int_equal(plan<MPIACC_CUDA_COPYN_MAXP>(c, 1, 1, &a, &blocks), (int)cudaSuccess);
    assert_int_equal(blocks, 0);
    /* 16 MiB, both 16-byte aligned, 132 SMs: all words, the whole wave */
    c[0].src = (void *)(uintptr_t)4096, c[0].dst = (void *)(uintptr_t)(1 << 30), c[0].bytes = 16 << 20;
    assert_int_equal(plan<MPIACC_CUDA_COPYN_MAXP>(c, 1, 132, &a, &blocks), (int)cudaSuccess);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.p[0].lws, 4);
    assert_int_equal(a.p[0].head, 0);
    assert_int_equal(a.p[0].nw, 1 << 20);
    assert_int_equal(a.total, 1 << 20);
    assert_int_equal(blocks, 132 * MAXB_PER_SM);
    /* 8 bytes at dst = 8 mod 16: one 8-byte word, not 8 single bytes */
    c[0].src = (void *)(uintptr_t)(4096 + 8), c[0].dst = (void *)(uintptr_t)(8192 + 8), c[0].bytes = 8;
    assert_int_equal(plan<MPIACC_CUDA_COPYN_MAXP>(c, 1, 132, &a, &blocks), (int)cudaSuccess);
    assert_int_equal(a.p[0].lws, 3);
    assert_int_equal(a.p[0].nw, 1);
    assert_int_equal(a.total, 1);
    assert_int_equal(blocks, 1);
    /* mutual alignment 4, head 2 */
    c[0].src = (void *)(uintptr_t)(4096 + 6), c[0].dst = (void *)(uintptr_t)(8192 + 2), c[0].bytes = 100;
    assert_int_equal(plan<MPIACC_CUDA_COPYN_MAXP>(c, 1, 132, &a, &blocks), (int)cudaSuccess);
    assert_int_equal(a.p[0].lws, 2);
    assert_int_equal(a.p[0].head, 2);
    assert_int_equal(a.p[0].nw, 24);
    assert_int_equal(a.total, 24 + 2 + 2);
    /* empty pieces are dropped: first items follow each other */
    c[0].bytes = 0;
    c[1] = c[0], c[1].bytes = 1;
    c[2] = c[1], c[2].bytes = 3;
    assert_int_equal(plan<MPIACC_CUDA_COPYN_MAXP>(c, 3, 132, &a, &blocks), (int)cudaSuccess);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.p[0].first, 0);
    assert_int_equal(a.p[1].first, 1);
    assert_int_equal(a.p[1].lws, 1); /* 3 bytes at dst = 2 mod 4: one 2-byte word and a tail byte */
    assert_int_equal(a.p[1].nw, 1);
    assert_int_equal(a.total, 1 + 2);
}

} /* namespace */

int main(int argc, char **argv)
{
    int fails;
    const struct CMUnitTest tests[] = {cmocka_unit_test(body_vs_memcpy), cmocka_unit_test(plan_cases)};
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help")) {
            printf("usage: %s\nThe many-piece copy kernel's body on the host against memcpy (no GPU needed).\n",
                   argv[0]);
            return 0;
        }
    MPI_Init(&argc, &argv);
    fails = MPIACC_TEST_RUN("cuda_copyn_emul", tests, NULL, NULL);
    MPI_Finalize();
    return fails ? 1 : 0;
}
