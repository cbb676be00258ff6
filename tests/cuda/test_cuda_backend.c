/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_backend: the CUDA backend table called directly after MPI_Init
 * (needs a GPU; skipped without one).  Oracle: MPICH's MPI_Pack/MPI_Unpack
 * on host copies.  Covers: pack/unpack device<->pinned host in every mode
 * (auto, oneshot, device, memcpy2d) on whole and partial ranges, pack_dev /
 * unpack_dev, contiguous and strided layouts of every word size, GPU-side
 * dependency chaining on a stream and on an event, independent operations
 * not waiting on each other, and the error table.  With the datatype
 * engine merged, also random types (seeded) through the generic kernel, the
 * issue 10 regressions, and the engine's random corpus (tests/pack/typegen,
 * 20000 types; MPIACC_TEST_NTYPES / MPIACC_TEST_LONG) through every mode.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "cuda/cuda_testhooks.h"
#include "cu_attrs.h"
#include "cu_cases.h"
#include "cu_nodev.h"
#include "cu_randtype.h"
#include "regress_types.h"
#include "test_kernels.h"

static const mpiacc_backend_t *B;
static cudaStream_t ustream, ustream2;
static unsigned seed32;

#define CK(call_)                                                                                     \
    do {                                                                                              \
        cudaError_t e_ = (call_);                                                                     \
        if (e_ != cudaSuccess) fail_msg("%s:%d: %s: %s", __FILE__, __LINE__, #call_, cudaGetErrorString(e_)); \
    } while (0)
#define MK(call_) MPIACC_TEST_MPI_OK(call_)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void wait_h(void *h, const char *what)
{
    int done = 0;
    double t0 = now();
    while (!done) {
        MK(B->test(h, &done));
        if (!done && now() - t0 > 30) fail_msg("%s: not complete after 30 s", what);
    }
}

static const char *mode_name(int m)
{
    static const char *n[] = {"auto", "oneshot", "device", "memcpy2d"};
    return n[m];
}

/* One type x count x mode: pack in 3 pieces, unpack in 3 pieces, pack_dev,
 * unpack_dev.  Returns the number of mismatches (reported on stderr). */
static int run_type(const char *name, MPI_Datatype mt, const mpiacc_pack_type_t *T, int count, long long off,
                    long long span, int mode)
{
    long long total = (long long)count * T->size, alloc = (off + span + 255) / 256 * 256;
    long long cuts[4] = {0, total / 3 / 16 * 16, total * 2 / 3 + 1, total};
    unsigned char *in = malloc((size_t)alloc), *exp = malloc((size_t)total + 1), *ref = calloc(1, (size_t)alloc);
    unsigned char *back = malloc((size_t)alloc + (size_t)total + 64);
    char *dbuf = NULL, *dout = NULL, *dpk = NULL;
    mpiacc_attrs_t a = cu_stream_attrs(ustream);
    mpiacc_xfer_desc_t d = {0};
    int pos = 0, bad = 0;
    if (cuts[2] > total) cuts[2] = total;
    cu_fill(in, alloc, seed32);
    MK(MPI_Pack(in + off, count, mt, exp, (int)total + 1, &pos, MPI_COMM_WORLD));
    pos = 0;
    MK(MPI_Unpack(exp, (int)total, &pos, ref + off, count, mt, MPI_COMM_WORLD));
    CK(cudaMalloc((void **)&dbuf, (size_t)alloc));
    CK(cudaMalloc((void **)&dout, (size_t)alloc));
    CK(cudaMalloc((void **)&dpk, (size_t)total + 64));
    CK(cudaMemcpy(dbuf, in, (size_t)alloc, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0, (size_t)alloc));
    CK(cudaDeviceSynchronize()); /* the legacy stream is not ordered with ustream */
    mpiacc_cuda_set_mode(mode, 0);
    d.type = T, d.count = count;
    for (int k = 0; k < 3; k++) {
        void *dep = NULL, *x = NULL, *stg = NULL;
        long long n = cuts[k + 1] - cuts[k], at;
        if (n <= 0) continue;
        d.first = cuts[k], d.last = cuts[k + 1];
        MK(B->host_alloc((size_t)n, &stg));
        /* pack */
        d.buf = dbuf, d.host = stg;
        memset(stg, 0xEE, (size_t)n);
        MK(B->capture(&a, dbuf, &dep));
        MK(B->pack(&a, dep, &d, &x));
        const char *method = mpiacc_cuda_last_method();
        wait_h(x, "pack");
        B->release(x);
        B->release(dep);
        if ((at = cu_diff(stg, exp + d.first, n)) >= 0) {
            fprintf(stderr, "%s count %d mode %s: pack [%lld,%lld) by %s differs at packed byte %lld\n", name,
                    count, mode_name(mode), (long long)d.first, (long long)d.last, method, d.first + at);
            bad++;
        }
        /* a strided form whose range collapses to one dense block is copied
         * (memcpy) in every mode */
        if (!T->contiguous && (mode == MPIACC_CUDA_MODE_ONESHOT || mode == MPIACC_CUDA_MODE_DEVICE) &&
            strcmp(method, mode_name(mode)) != 0 && strcmp(method, "memcpy") != 0) {
            fprintf(stderr, "%s: mode %s but the pack used %s\n", name, mode_name(mode), method);
            bad++;
        }
        /* unpack the same piece into dout */
        memcpy(stg, exp + d.first, (size_t)n);
        d.buf = dout;
        MK(B->capture(&a, dout, &dep));
        MK(B->unpack(&a, dep, &d, &x));
        wait_h(x, "unpack");
        B->release(x);
        B->release(dep);
        B->host_free(stg, (size_t)n);
    }
    CK(cudaMemcpy(back, dout, (size_t)alloc, cudaMemcpyDeviceToHost));
    long long at = cu_diff(back, ref, alloc);
    if (at >= 0) {
        fprintf(stderr, "%s count %d mode %s: unpack (3 pieces) differs from MPI_Unpack at buffer byte %lld\n",
                name, count, mode_name(mode), at - off);
        bad++;
    }
    /* device to device */
    d.first = 0, d.last = total, d.host = NULL, d.buf = dbuf;
    CK(cudaMemset(dpk, 0xEE, (size_t)total + 64));
    CK(cudaDeviceSynchronize()); /* the legacy stream is not ordered with ustream */
    MK(B->pack_dev(&a, NULL, &d, dpk, 16));
    CK(cudaMemcpy(back, dpk, (size_t)total + 64, cudaMemcpyDeviceToHost));
    if ((at = cu_diff(back + 16, exp, total)) >= 0) {
        fprintf(stderr, "%s count %d mode %s: pack_dev differs at packed byte %lld\n", name, count,
                mode_name(mode), at);
        bad++;
    }
    if (back[15] != 0xEE || back[16 + total] != 0xEE) {
        fprintf(stderr, "%s count %d: pack_dev wrote outside its range\n", name, count);
        bad++;
    }
    CK(cudaMemset(dout, 0, (size_t)alloc));
    CK(cudaDeviceSynchronize()); /* the legacy stream is not ordered with ustream */
    d.buf = dout;
    MK(B->unpack_dev(&a, NULL, &d, dpk, 16));
    CK(cudaMemcpy(back, dout, (size_t)alloc, cudaMemcpyDeviceToHost));
    if ((at = cu_diff(back, ref, alloc)) >= 0) {
        fprintf(stderr, "%s count %d mode %s: unpack_dev differs at buffer byte %lld\n", name, count,
                mode_name(mode), at - off);
        bad++;
    }
    CK(cudaFree(dbuf));
    CK(cudaFree(dout));
    CK(cudaFree(dpk));
    free(in), free(exp), free(ref), free(back);
    mpiacc_cuda_set_mode(MPIACC_CUDA_MODE_AUTO, 0);
    return bad;
}

static void test_strided(void **state)
{
    int bad = 0;
    (void)state;
    for (int i = 0; i < CU_NCASES; i++)
        for (int count = 1; count <= 2; count++)
            for (int mode = 0; mode < 4; mode++) {
                MPI_Datatype mt;
                mpiacc_pack_type_t T;
                MK(cu_case_mpi_type(&cu_cases[i], &mt));
                cu_case_analysis(&cu_cases[i], &T);
                bad += run_type(cu_cases[i].name, mt, &T, count, 0, cu_case_span(&cu_cases[i], count), mode);
                MPI_Type_free(&mt);
            }
    assert_int_equal(bad, 0);
}

/* A larger 2D layout, used for the dependency tests. */
static const cu_case_t dep_case = {"2D blk 8 pitch 24 x 4096", 8, 0, 1, {4096}, {24}, 0, 8};

static void test_dependency(void **state)
{
    MPI_Datatype mt;
    mpiacc_pack_type_t T;
    long long span = cu_case_span(&dep_case, 1), total = cu_case_size(&dep_case);
    unsigned char *h = malloc((size_t)span), *exp = malloc((size_t)total), *back = malloc((size_t)span);
    char *dbuf;
    void *stg, *dep, *x;
    cudaEvent_t uev;
    mpiacc_xfer_desc_t d = {0};
    int pos;
    (void)state;
    MK(cu_case_mpi_type(&dep_case, &mt));
    cu_case_analysis(&dep_case, &T);
    CK(cudaMalloc((void **)&dbuf, (size_t)span));
    CK(cudaEventCreateWithFlags(&uev, cudaEventDisableTiming));
    MK(B->host_alloc((size_t)total, &stg));
    d.buf = dbuf, d.type = &T, d.count = 1, d.first = 0, d.last = total, d.host = stg;
    for (int variant = 0; variant < 4; variant++) {
        /* 0,1: stream dependency; 2,3: event dependency; odd: device mode */
        unsigned seed = seed32 + 17u * (unsigned)variant;
        mpiacc_attrs_t a = cu_stream_attrs(ustream);
        CK(cudaMemset(dbuf, 0, (size_t)span));
        CK(cudaDeviceSynchronize()); /* the legacy stream is not ordered with ustream */
        CK(cudaDeviceSynchronize());
        cu_fill(h, span, seed);
        pos = 0;
        MK(MPI_Pack(h, 1, mt, exp, (int)total, &pos, MPI_COMM_WORLD));
        mpiacc_cuda_set_mode(variant & 1 ? MPIACC_CUDA_MODE_DEVICE : MPIACC_CUDA_MODE_ONESHOT, 0);
        if (variant < 2) {
            CK(cu_test_spin_fill(ustream, dbuf, span, seed, 150));
        } else {
            CK(cu_test_spin_fill(ustream2, dbuf, span, seed, 150));
            CK(cudaEventRecord(uev, ustream2));
            a.has_stream = 0, a.stream = NULL, a.has_event = 1, a.event = uev;
        }
        MK(B->capture(&a, dbuf, &dep));
        MK(B->pack(&a, dep, &d, &x));
        int done = 1;
        MK(B->test(x, &done));
        if (done) fprintf(stderr, "dependency variant %d: pack reported done while the writer still spins\n", variant);
        assert_false(done);
        wait_h(x, "pack after dependency");
        B->release(x);
        B->release(dep);
        long long at = cu_diff(stg, exp, total);
        if (at >= 0) fail_msg("dependency variant %d: pack did not see the final values (byte %lld)", variant, at);
    }
    /* unpack after a writer: the final buffer is the writer's values with
     * the unpacked bytes on top */
    {
        unsigned seed = seed32 + 99u;
        mpiacc_attrs_t a = cu_stream_attrs(ustream);
        cu_fill(h, span, seed);
        memcpy(stg, exp, (size_t)total);
        pos = 0;
        MK(MPI_Unpack(exp, (int)total, &pos, h, 1, mt, MPI_COMM_WORLD));
        CK(cu_test_spin_fill(ustream, dbuf, span, seed, 150));
        MK(B->capture(&a, dbuf, &dep));
        MK(B->unpack(&a, dep, &d, &x));
        wait_h(x, "unpack after dependency");
        B->release(x);
        B->release(dep);
        CK(cudaMemcpy(back, dbuf, (size_t)span, cudaMemcpyDeviceToHost));
        long long at = cu_diff(back, h, span);
        if (at >= 0) fail_msg("unpack after a writer on the stream: byte %lld wrong", at);
    }
    /* independent operations: a pack waiting on a long writer must not
     * hold up a pack with no dependency */
    {
        mpiacc_attrs_t a = cu_stream_attrs(ustream), none = cu_stream_attrs(ustream2);
        void *dep2, *x2, *stg2;
        int done1 = 0, done2 = 0;
        double t0;
        MK(B->host_alloc((size_t)total, &stg2));
        mpiacc_cuda_set_mode(MPIACC_CUDA_MODE_AUTO, 0);
        CK(cu_test_spin_fill(ustream, dbuf, span, seed32, 500));
        MK(B->capture(&a, dbuf, &dep));
        MK(B->pack(&a, dep, &d, &x));
        MK(B->capture(&none, dbuf, &dep2)); /* ustream2 is idle */
        d.host = stg2;
        MK(B->pack(&none, dep2, &d, &x2));
        d.host = stg;
        t0 = now();
        while (!done2 && now() - t0 < 30) MK(B->test(x2, &done2));
        MK(B->test(x, &done1));
        if (!done2 || done1)
            fail_msg("independent pack: done2=%d (want 1) done1=%d (want 0) after %.3f s: false dependency between "
                     "internal streams", done2, done1, now() - t0);
        wait_h(x, "pack behind the long writer");
        B->release(x), B->release(dep), B->release(x2), B->release(dep2);
        /* the same two packs on one lane (a pipelined message's chunks): the
         * second runs behind the first, though it has no dependency */
        {
            int lane = -1;
            d.lane = &lane;
            CK(cu_test_spin_fill(ustream, dbuf, span, seed32, 100));
            MK(B->capture(&a, dbuf, &dep));
            MK(B->pack(&a, dep, &d, &x));
            MK(B->capture(&none, dbuf, &dep2));
            d.host = stg2;
            MK(B->pack(&none, dep2, &d, &x2));
            d.host = stg, d.lane = NULL;
            if (lane < 0) fail_msg("lane: the backend kept no stream in the lane");
            MK(B->test(x2, &done2));
            if (done2) fail_msg("lane: the second pack finished while the first still waits for its writer");
            wait_h(x2, "second pack of a lane");
            MK(B->test(x, &done1));
            if (!done1) fail_msg("lane: the second pack finished before the first");
            B->release(x), B->release(dep), B->release(x2), B->release(dep2);
        }
        B->host_free(stg2, (size_t)total);
    }
    mpiacc_cuda_set_mode(MPIACC_CUDA_MODE_AUTO, 0);
    B->host_free(stg, (size_t)total);
    CK(cudaEventDestroy(uev));
    CK(cudaFree(dbuf));
    MPI_Type_free(&mt);
    free(h), free(exp), free(back);
}

static void expect_class(int err, int cls, const char *what)
{
    int c = -1;
    if (err == MPI_SUCCESS) fail_msg("%s: succeeded, expected error class %d", what, cls);
    MPI_Error_class(err, &c);
    if (c != cls) fail_msg("%s: error class %d, expected %d", what, c, cls);
}

static void test_errors(void **state)
{
    mpiacc_attrs_t a;
    int ndev = 0;
    void *dep = NULL, *x = NULL;
    mpiacc_pack_type_t T;
    mpiacc_xfer_desc_t d = {0};
    char desc[4096];
    (void)state;
    CK(cudaGetDeviceCount(&ndev));
    memset(&a, 0, sizeof a);
    a.kind = MPIACC_KIND_CUDA;
    a.has_device = 1, a.device = ndev + 7;
    expect_class(B->validate(&a, NULL), MPI_ERR_ARG, "validate bad device ordinal");
    cu_case_analysis(&cu_cases[1], &T);
    d.type = &T, d.count = 1, d.first = 0, d.last = T.size, d.host = desc;
    expect_class(B->pack(&a, NULL, &d, &x), MPI_ERR_ARG, "pack with bad device ordinal");
    expect_class(B->pack_dev(&a, NULL, &d, desc, 0), MPI_ERR_ARG, "pack_dev with bad device ordinal");
    a.device = -1;
    expect_class(B->validate(&a, NULL), MPI_ERR_ARG, "validate device -1");
    memset(&a, 0, sizeof a);
    a.kind = MPIACC_KIND_CUDA;
    a.has_event = 1, a.event = NULL;
    expect_class(B->validate(&a, NULL), MPI_ERR_ARG, "validate NULL event");
    a = cu_stream_attrs(ustream);
    MK(B->validate(&a, NULL));
    a = cu_stream_attrs(NULL); /* the legacy default stream is a valid stream */
    MK(B->validate(&a, NULL));
    MK(B->capture(&a, NULL, &dep));
    wait_h(dep, "capture on the default stream");
    B->release(dep);
    if (ndev > 1) {
        a = cu_stream_attrs(ustream);
        a.has_device = 1, a.device = 1; /* ustream lives on device 0 */
        expect_class(B->validate(&a, NULL), MPI_ERR_ARG, "stream and MPIACC_DEVICE disagree");
    }
    B->release(NULL);
    int done = 0;
    MK(B->test(NULL, &done));
    assert_int_equal(done, 1);
    desc[0] = 0;
    MK(B->describe(desc, sizeof desc));
    printf("describe:\n%s", desc);
    assert_non_null(strstr(desc, "device 0"));
}

/* Whether two packed bytes of count x T read the same buffer byte (then an
 * unpack's result depends on the order of the writes). */
static int overlapping(const mpiacc_pack_type_t *T, int count, long long off, long long alloc)
{
    unsigned char *seen = calloc((size_t)alloc, 1);
    int ov = 0;
    for (long long p = 0; p < count * T->size && !ov; p++) ov = seen[off + mpiacc_tv_offset(T->blob, p)]++;
    free(seen);
    return ov;
}

#define CORPUS_MAX (1ll << 20)

/* The engine's random corpus (tests/pack/typegen: every constructor,
 * nesting depth 1..5) through the backend table on the GPU, every mode in
 * turn (and the generic kernel forced for every seventh type): pack to
 * pinned staging and unpack from it in 1-3 pieces, device-to-device for
 * every fourth, against MPI_Pack / MPI_Unpack.  Buffers are allocated once.
 * MPIACC_TEST_NTYPES=n types (default 20000, 200 with MPIACC_TEST_SANITIZER
 * set), MPIACC_TEST_LONG=1: 100000. */
static void test_corpus(void **state)
{
    uint64_t seed = mpiacc_test_seed() ^ 0xc0de5ull, st = seed;
    const char *san = getenv("MPIACC_TEST_SANITIZER"); /* under compute-sanitizer: a short run */
    long n = tg_corpus_size(san && *san && strcmp(san, "0") ? 200 : 20000, 100000);
    long derived = 0, skipped = 0, ndev = 0, nover = 0, i;
    int bad = 0;
    double t0 = now();
    unsigned char *in = malloc(CORPUS_MAX), *exp = malloc(CORPUS_MAX), *ref = malloc(CORPUS_MAX);
    unsigned char *back = malloc(CORPUS_MAX);
    char *dbuf = NULL, *dout = NULL, *dpk = NULL;
    void *stg = NULL;
    mpiacc_attrs_t a = cu_stream_attrs(ustream);
    (void)state;
    CK(cudaMalloc((void **)&dbuf, CORPUS_MAX));
    CK(cudaMalloc((void **)&dout, CORPUS_MAX));
    CK(cudaMalloc((void **)&dpk, CORPUS_MAX + 64));
    MK(B->host_alloc(CORPUS_MAX, &stg));
    for (i = 0; derived < n && bad < 20; i++) { /* n derived types (named ones are skipped) */
        MPI_Datatype mt = cu_rand_type(&st, 1 + (int)(i % 5));
        mpiacc_pack_type_t *T = NULL;
        mpiacc_xfer_desc_t d = {0};
        int count = 1 + (int)(mpiacc_test_rand(&st) % 3), mode = (int)(i % 4), pieces = 1 + (int)(i / 4 % 3);
        int pos = 0, ov;
        long long off, span, alloc, total, at;
        void *dep = NULL, *x = NULL;
        const char *method;
        if (cu_is_named(mt)) continue;
        MPI_Type_commit(&mt);
        derived++;
        MK(mpiacc_pack_type_analyze(mt, &T));
        cu_place(mt, count, 16, &off, &span);
        alloc = off + span, total = (long long)count * T->size;
        if (alloc > CORPUS_MAX || total > CORPUS_MAX || total == 0) {
            skipped++;
            goto next;
        }
        ov = overlapping(T, count, off, alloc);
        nover += ov;
        cu_fill(in, alloc, seed32 + (unsigned)i);
        MK(MPI_Pack(in + off, count, mt, exp, (int)total, &pos, MPI_COMM_WORLD));
        memset(ref, 0, (size_t)alloc);
        pos = 0;
        if (!ov) MK(MPI_Unpack(exp, (int)total, &pos, ref + off, count, mt, MPI_COMM_WORLD));
        mpiacc_cuda_set_mode(mode, i % 7 == 0);
        d.type = T, d.count = count;
        /* pack in pieces: the data is written on the user stream right before */
        CK(cudaMemcpyAsync(dbuf, in, (size_t)alloc, cudaMemcpyHostToDevice, ustream));
        d.buf = dbuf + off;
        for (int k = 0; k < pieces; k++) {
            d.first = total * k / pieces, d.last = total * (k + 1) / pieces, d.host = (char *)stg + d.first;
            MK(B->capture(&a, d.buf, &dep));
            MK(B->pack(&a, dep, &d, &x));
            method = mpiacc_cuda_last_method();
            if (x) wait_h(x, "corpus pack");
            B->release(x), B->release(dep);
            x = NULL;
        }
        if ((at = cu_diff(stg, exp, total)) >= 0) {
            fprintf(stderr, "corpus type %ld (%s) count %d mode %s: pack by %s differs at packed byte %lld of %lld\n",
                    i, tg_combiner_name(mt), count, mode_name(mode), method, at, total);
            bad++;
        }
        if (!ov) { /* unpack into zeroed memory */
            CK(cudaMemsetAsync(dout, 0, (size_t)alloc, ustream));
            memcpy(stg, exp, (size_t)total);
            d.buf = dout + off;
            for (int k = 0; k < pieces; k++) {
                d.first = total * k / pieces, d.last = total * (k + 1) / pieces, d.host = (char *)stg + d.first;
                MK(B->capture(&a, d.buf, &dep));
                MK(B->unpack(&a, dep, &d, &x));
                if (x) wait_h(x, "corpus unpack");
                B->release(x), B->release(dep);
                x = NULL;
            }
            CK(cudaMemcpy(back, dout, (size_t)alloc, cudaMemcpyDeviceToHost));
            if ((at = cu_diff(back, ref, alloc)) >= 0) {
                fprintf(stderr, "corpus type %ld (%s) count %d mode %s: unpack differs at buffer byte %lld\n", i,
                        tg_combiner_name(mt), count, mode_name(mode), at - off);
                bad++;
            }
        }
        if (i % 4 == 0) { /* device to device */
            CK(cudaStreamSynchronize(ustream));
            d.buf = dbuf + off, d.host = NULL, d.first = 0, d.last = total;
            MK(B->pack_dev(&a, NULL, &d, dpk, 8));
            CK(cudaMemcpy(back, dpk + 8, (size_t)total, cudaMemcpyDeviceToHost));
            if ((at = cu_diff(back, exp, total)) >= 0) {
                fprintf(stderr, "corpus type %ld (%s) count %d: pack_dev differs at packed byte %lld\n", i,
                        tg_combiner_name(mt), count, at);
                bad++;
            }
            if (!ov) {
                CK(cudaMemset(dout, 0, (size_t)alloc));
                CK(cudaDeviceSynchronize()); /* the legacy stream is not ordered with ustream */
                d.buf = dout + off;
                MK(B->unpack_dev(&a, NULL, &d, dpk, 8));
                CK(cudaMemcpy(back, dout, (size_t)alloc, cudaMemcpyDeviceToHost));
                if ((at = cu_diff(back, ref, alloc)) >= 0) {
                    fprintf(stderr, "corpus type %ld (%s) count %d: unpack_dev differs at buffer byte %lld\n", i,
                            tg_combiner_name(mt), count, at - off);
                    bad++;
                }
            }
            ndev++;
        }
    next:
        mpiacc_pack_type_release(T);
        MPI_Type_free(&mt);
    }
    mpiacc_cuda_set_mode(MPIACC_CUDA_MODE_AUTO, 0);
    printf("corpus: %ld derived random types (%ld too large skipped, %ld overlapping pack-only, %ld also "
           "device-to-device) in %.2f s, seed %llu\n",
           derived, skipped, nover, ndev, now() - t0, (unsigned long long)seed);
    B->host_free(stg, CORPUS_MAX);
    CK(cudaFree(dbuf));
    CK(cudaFree(dout));
    CK(cudaFree(dpk));
    free(in), free(exp), free(ref), free(back);
    assert_int_equal(bad, 0);
}

/* Issue 10 regressions on the GPU: the darray whose one dense block is
 * [32, 48) while MPICH reports true_lb 0 (and hindexed_block over it)
 * moves exactly those bytes; MPI_BYTE resized to extent 2^62 with counts
 * 2, 3, 5 fails at the call. */
static void test_regress(void **state)
{
    rg_type_t ts[RG_NTYPES];
    mpiacc_attrs_t a = cu_stream_attrs(ustream);
    unsigned char buf[256], want[256], back[256];
    char *dbuf = NULL, *dpk = NULL;
    void *stg = NULL;
    MPI_Datatype r = rg_huge_extent();
    mpiacc_pack_type_t *T = NULL;
    (void)state;
    CK(cudaMalloc((void **)&dbuf, sizeof buf));
    CK(cudaMalloc((void **)&dpk, sizeof buf));
    MK(B->host_alloc(sizeof buf, &stg));
    rg_make(ts);
    for (int i = 0; i < RG_NTYPES; i++) {
        const rg_type_t *g = &ts[i];
        mpiacc_xfer_desc_t d = {0};
        void *x = NULL;
        size_t nb;
        cu_fill(buf, sizeof buf, (unsigned)i);
        nb = rg_expected(g, buf, want);
        MK(mpiacc_pack_type_analyze(g->dt, &T));
        CK(cudaMemcpy(dbuf, buf, sizeof buf, cudaMemcpyHostToDevice));
        /* a pageable copy may return before its DMA lands, and pack is given
         * no captured dependency here */
        CK(cudaDeviceSynchronize());
        d.buf = dbuf, d.type = T, d.count = g->count, d.first = 0, d.last = (MPI_Count)nb, d.host = stg;
        MK(B->pack(&a, NULL, &d, &x));
        wait_h(x, "regress pack");
        B->release(x);
        if (memcmp(stg, want, nb) != 0) fail_msg("%s: pack moved other bytes", g->name);
        CK(cudaMemset(dbuf, 0, sizeof buf));
        CK(cudaDeviceSynchronize()); /* the legacy stream is not ordered with the backend's */
        MK(B->unpack(&a, NULL, &d, &x));
        wait_h(x, "regress unpack");
        B->release(x);
        CK(cudaMemcpy(back, dbuf, sizeof buf, cudaMemcpyDeviceToHost));
        for (int k = 0; k < (int)sizeof back; k++)
            if (back[k] != (rg_touched(g, k) ? buf[k] : 0)) fail_msg("%s: unpack wrote byte %d", g->name, k);
        d.host = NULL;
        MK(B->pack_dev(&a, NULL, &d, dpk, 0));
        CK(cudaMemcpy(back, dpk, nb, cudaMemcpyDeviceToHost));
        if (memcmp(back, want, nb) != 0) fail_msg("%s: pack_dev moved other bytes", g->name);
        mpiacc_pack_type_release(T);
    }
    rg_free(ts);
    MK(mpiacc_pack_type_analyze(r, &T));
    for (int count = 2; count <= 5; count++) {
        mpiacc_xfer_desc_t d = {.buf = dbuf, .type = T, .count = count, .first = 0, .last = count, .host = stg};
        void *x = NULL;
        int c1 = MPI_SUCCESS, c2 = MPI_SUCCESS, e1 = B->pack(&a, NULL, &d, &x), e2 = B->pack_dev(&a, NULL, &d, dpk, 0);
        if (e1 != MPI_SUCCESS) MPI_Error_class(e1, &c1);
        if (e2 != MPI_SUCCESS) MPI_Error_class(e2, &c2);
        if ((c1 != MPI_ERR_COUNT && c1 != MPI_ERR_BUFFER) || (c2 != MPI_ERR_COUNT && c2 != MPI_ERR_BUFFER))
            fail_msg("count %d of a 2^62-extent type: pack class %d, pack_dev class %d", count, c1, c2);
    }
    mpiacc_pack_type_release(T);
    MPI_Type_free(&r);
    B->host_free(stg, sizeof buf);
    CK(cudaFree(dbuf));
    CK(cudaFree(dpk));
}

int main(int argc, char **argv)
{
    int fails, n = 0;
    cudaError_t e;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    B = mpiacc_backend_get(MPIACC_KIND_CUDA);
    if (!B) {
        e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess || n <= 0) mpiacc_test_skip_all("%s", cu_nodev_why(e, n, (char[160]){0}, 160));
        mpiacc_test_skip_all("no CUDA device: %s", mpiacc_backend_why_absent(MPIACC_KIND_CUDA));
    }
    seed32 = (unsigned)mpiacc_test_seed();
    e = cudaSetDevice(0);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&ustream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&ustream2, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        fprintf(stderr, "test_cuda_backend: cannot create streams: %s\n", cudaGetErrorString(e));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors), cmocka_unit_test(test_strided), cmocka_unit_test(test_dependency),
        cmocka_unit_test(test_regress), cmocka_unit_test(test_corpus),
    };
    fails = MPIACC_TEST_RUN("cuda_backend", tests, NULL, NULL);
    cudaStreamDestroy(ustream);
    cudaStreamDestroy(ustream2);
    MPI_Finalize();
    return fails ? 1 : 0;
}
