/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_default_stream: CUDA buffers WITHOUT an MPIACC_STREAM attribute
 * are ordered after the application's work on the default stream (issue 10
 * item 0b).  2 ranks; rank r uses device (node-local rank % device count),
 * or device 0 for every rank with MPIACC_TEST_SHARED_GPU=1 (two ranks on
 * one GPU).  Datatypes carry MPIACC_BUF_CUDA only.
 *
 *  send_after_pageable_copy  cudaMemcpy(d, pageable h, H2D) then MPI_Send(d):
 *                            the copy may return before its DMA lands; the
 *                            receiver must get h (contiguous and strided
 *                            types, 100 000 ints packed); then the same with
 *                            a 20 ms kernel writing d on the default stream
 *  recv_after_memset         cudaMemset(d) then MPI_Recv(d): the memset must
 *                            land before the data (and a 20 ms writer
 *                            likewise); the result is read by a copy on a
 *                            non-blocking stream and on the default stream
 *  random_layouts            random datatypes (cu_randtype.h), device to
 *                            device, >= 100 000 ints each: sender fills by
 *                            pageable cudaMemcpy, receiver clears by
 *                            cudaMemset, blocking and non-blocking calls
 *  pack_unpack               MPI_Pack / MPI_Unpack on device buffers right
 *                            after default-stream writers
 *  other_thread              a writer that another thread enqueued on ITS
 *                            default stream, then MPI_Send from the main
 *                            thread (per-thread default streams are blocking
 *                            streams: the legacy stream orders after them)
 *
 * The same source is built twice: as is (--default-stream legacy: the
 * application's cudaMemcpy / cudaMemset / NULL-stream kernels go to the
 * legacy default stream), and with CUDA_API_PER_THREAD_DEFAULT_STREAM
 * defined (test_cuda_default_stream_ptds: they go to the calling thread's
 * per-thread default stream).  The library itself is compiled once.
 * MPIACC_TEST_ROUNDS scales the number of rounds (default 1).
 */
#include "cu_p2p.h"
#include "cu_randtype.h"
#include "test_kernels.h"

#include <pthread.h>

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define DEFSTREAM ((void *)cudaStreamPerThread) /* what stream 0 means in this build */
#define BUILD "per-thread default stream"
#else
#define DEFSTREAM NULL /* test_kernels.cu is built legacy: NULL is the legacy stream */
#define BUILD "legacy default stream"
#endif

#define NI 100000                   /* ints packed per message */
#define SPAN ((long long)NI * 8)    /* bytes of the strided layout (every other int) */
#define RMAX (16LL << 20)           /* largest random-layout buffer */
#define SPIN_MS 20.0

static unsigned char *dA, *dB, *dpk, *h1, *h2, *h3, *hp;
static MPI_Datatype contig, vec; /* NI ints dense / NI ints every other int */
static cudaStream_t nbs;         /* a non-blocking stream of the test's device */
static unsigned seed32;
static int dev, rounds = 1;

static const char *lname(int k) { return k ? "strided" : "contiguous"; }

/* Packed bytes of count x type over pattern(seed) of `span` bytes (host). */
static int packed_of(MPI_Datatype type, int count, unsigned seed, long long span, unsigned char *out)
{
    int pos = 0, size;
    cu_hfill(h3, span, seed);
    MPI_CK(MPI_Pack_size(count, type, MPI_COMM_SELF, &size));
    MPI_CK(MPI_Pack(h3, count, type, out, size, &pos, MPI_COMM_SELF));
    return pos;
}

/* Expected receive buffer: `init` (memset byte, or pattern(old) if
 * init < 0) overlaid by count x type unpacked from pattern(seed) (uses hp, h3). */
static void expect_recv(MPI_Datatype type, int count, int init, unsigned old, unsigned seed, long long span,
                        unsigned char *exp)
{
    int pos = 0, size = packed_of(type, count, seed, span, hp);
    if (init >= 0) memset(exp, init, (size_t)span);
    else cu_hfill(exp, span, old);
    MPI_CK(MPI_Unpack(hp, size, &pos, exp, count, type, MPI_COMM_SELF));
}

/* Receives host bytes and compares with the packing of pattern(seed). */
static int recv_packed_check(int from, int tag, MPI_Datatype type, int count, unsigned seed, long long span,
                             const char *what)
{
    int size = packed_of(type, count, seed, span, h2);
    return cu_recv_bytes_check(from, tag, h1, h2, size, what);
}

/* d (span bytes) read on a non-blocking stream and on the default stream,
 * compared with exp.  Returns the number of problems. */
static int check_device(const unsigned char *d, const unsigned char *exp, long long span, const char *what)
{
    char w[256];
    int bad = 0;
    CU_CK(cudaMemcpyAsync(h1, d, (size_t)span, cudaMemcpyDeviceToHost, nbs));
    CU_CK(cudaStreamSynchronize(nbs));
    snprintf(w, sizeof w, "%s (read on a non-blocking stream)", what);
    bad += cu_differs(h1, exp, span, w);
    cu_get(h1, d, span);
    snprintf(w, sizeof w, "%s (read on the default stream)", what);
    bad += cu_differs(h1, exp, span, w);
    return bad;
}

/* ------------------------------------------------------------------------- */

static void send_after_pageable_copy(void **state)
{
    int bad = 0, nbad = 0, nrun = 0;
    MPI_Datatype types[2] = {contig, vec};
    (void)state;
    cu_watchdog("send_after_pageable_copy", 240);
    for (int k = 0; k < 2; k++) {
        MPI_Datatype t = cu_tag(types[k], CU_NO_STREAM, NULL);
        const long long span = k ? SPAN : (long long)NI * 4;
        for (int r = 0; r < 50 * rounds + 3; r++) {
            const int spin = r >= 50 * rounds; /* the last 3: a slow kernel writer */
            const unsigned s = seed32 + 1000u * (unsigned)k + (unsigned)r;
            char what[160];
            int b = 0;
            if (spin && cu_sanitizer) continue;
            snprintf(what, sizeof what, "%s send after %s, round %d", lname(k),
                     spin ? "a 20 ms kernel writer on the default stream" : "a pageable cudaMemcpy", r);
            if (cu_rank == 0) {
                if (spin) {
                    CU_CK(cudaMemset(dA, 0, (size_t)span));
                    CU_CK(cu_test_spin_fill(DEFSTREAM, dA, span, s, SPIN_MS));
                } else {
                    cu_hfill(h1, span, s); /* h1: malloc'd, pageable */
                    CU_CK(cudaMemcpy(dA, h1, (size_t)span, cudaMemcpyHostToDevice));
                }
                if (r % 2) {
                    MPI_Request rq;
                    MPI_CK(MPI_Isend(dA, 1, t, 1, 100 + k, MPI_COMM_WORLD, &rq));
                    MPI_CK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                } else {
                    MPI_CK(MPI_Send(dA, 1, t, 1, 100 + k, MPI_COMM_WORLD));
                }
            } else if (cu_rank == 1) {
                b = recv_packed_check(0, 100 + k, types[k], 1, s, span, what);
            }
            nbad += b > 0, nrun++;
            bad += b;
        }
        MPI_CK(MPI_Type_free(&t));
    }
    if (nbad) fprintf(stderr, "[rank %d] %d of %d sends delivered stale bytes\n", cu_rank, nbad, nrun);
    cu_all_ok(bad, "send after default-stream writers, no stream attribute");
}

static void recv_after_memset(void **state)
{
    int bad = 0, nbad = 0, nrun = 0;
    MPI_Datatype types[2] = {contig, vec};
    (void)state;
    cu_watchdog("recv_after_memset", 240);
    for (int k = 0; k < 2; k++) {
        MPI_Datatype t = cu_tag(types[k], CU_NO_STREAM, NULL);
        const long long span = k ? SPAN : (long long)NI * 4;
        for (int r = 0; r < 50 * rounds + 3; r++) {
            const int spin = r >= 50 * rounds;
            const unsigned s = seed32 + 2000u + 1000u * (unsigned)k + (unsigned)r, old = s ^ 0x5a5au;
            const int byte = 0x11 + (r % 200);
            char what[160];
            int b = 0;
            if (spin && cu_sanitizer) continue;
            snprintf(what, sizeof what, "%s receive after %s, round %d", lname(k),
                     spin ? "a 20 ms kernel writer on the default stream" : "cudaMemset", r);
            if (cu_rank == 1) {
                MPI_Status st;
                CU_CK(cudaMemset(dB, byte, (size_t)span));
                if (spin) CU_CK(cu_test_spin_fill(DEFSTREAM, dB, span, old, SPIN_MS));
                if (r % 2) {
                    MPI_Request rq;
                    MPI_CK(MPI_Irecv(dB, 1, t, 0, 200 + k, MPI_COMM_WORLD, &rq));
                    MPI_CK(MPI_Wait(&rq, &st));
                } else {
                    MPI_CK(MPI_Recv(dB, 1, t, 0, 200 + k, MPI_COMM_WORLD, &st));
                }
                if (st.MPI_SOURCE != 0 || st.MPI_TAG != 200 + k)
                    CU_BAD(b, "%s: status source %d tag %d", what, st.MPI_SOURCE, st.MPI_TAG);
                expect_recv(types[k], 1, spin ? -1 : byte, old, s, span, h2);
                b += check_device(dB, h2, span, what);
            } else if (cu_rank == 0) {
                cu_hfill(h1, span, s);
                MPI_CK(MPI_Send(h1, 1, types[k], 1, 200 + k, MPI_COMM_WORLD));
            }
            nbad += b > 0, nrun++;
            bad += b;
        }
        MPI_CK(MPI_Type_free(&t));
    }
    if (nbad) fprintf(stderr, "[rank %d] %d of %d receives wrong\n", cu_rank, nbad, nrun);
    cu_all_ok(bad, "receive after default-stream writers, no stream attribute");
}

/* Whether count x type writes some byte twice: the number of distinct bytes
 * an unpack touches (MPI_Unpack of 0xFF bytes into zeros) is less than the
 * packed size.  Such layouts are erroneous receive buffers (skipped). */
static int overlapping(MPI_Datatype type, int count, int size, long long span)
{
    int pos = 0;
    long long touched = 0;
    memset(hp, 0xFF, (size_t)count * (size_t)size);
    memset(h3, 0, (size_t)span);
    MPI_CK(MPI_Unpack(hp, count * size, &pos, h3, count, type, MPI_COMM_SELF));
    for (long long i = 0; i < span; i++) touched += h3[i] != 0;
    return touched < (long long)count * size;
}

/* One random layout, sent device to device by rank `from` to the other. */
static int random_round(int i, uint64_t *st, int *ran)
{
    MPI_Datatype ht, dt;
    MPI_Aint lb, ext, tlb, text;
    int size = 0, count, bad = 0, from = i % 2, depth = 1 + (int)(mpiacc_test_rand(st) % 3);
    const unsigned s = seed32 + 3000u + (unsigned)i;
    const int byte = 0x21 + (i % 150);
    long long span;
    char what[200];
    *ran = 0;
    ht = cu_rand_type(st, depth);
    if (cu_is_named(ht)) return 0; /* the same draw on both ranks */
    MPI_CK(MPI_Type_commit(&ht));
    MPI_CK(MPI_Type_size(ht, &size));
    MPI_CK(MPI_Type_get_extent(ht, &lb, &ext));
    MPI_CK(MPI_Type_get_true_extent(ht, &tlb, &text));
    if (size <= 0 || ext <= 0 || tlb < 0) {
        MPI_CK(MPI_Type_free(&ht));
        return 0;
    }
    count = (int)((4LL * NI + size - 1) / size);
    span = tlb + (long long)(count - 1) * ext + text;
    if (span > RMAX) { /* very sparse: fewer elements, a smaller message */
        count = (int)((RMAX - tlb - text) / ext) + 1;
        span = tlb + (long long)(count - 1) * ext + text;
    }
    if (count < 1 || span > RMAX || (long long)count * size > RMAX || overlapping(ht, count, size, span)) {
        MPI_CK(MPI_Type_free(&ht)); /* decided alike on both ranks */
        return 0;
    }
    snprintf(what, sizeof what, "random layout %d (depth %d, %d x %d bytes, extent %ld, span %lld) %d -> %d", i,
             depth, count, size, (long)ext, span, from, 1 - from);
    dt = cu_tag(ht, CU_NO_STREAM, NULL);
    if (cu_rank == from) {
        cu_hfill(h1, span, s);
        CU_CK(cudaMemcpy(dA, h1, (size_t)span, cudaMemcpyHostToDevice)); /* pageable: may return early */
        if (i % 3 == 2) {
            MPI_Request rq;
            MPI_CK(MPI_Isend(dA, count, dt, 1 - from, 300, MPI_COMM_WORLD, &rq));
            MPI_CK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MPI_CK(MPI_Send(dA, count, dt, 1 - from, 300, MPI_COMM_WORLD));
        }
    } else if (cu_rank == 1 - from) {
        MPI_Status stt;
        int n = -1;
        CU_CK(cudaMemset(dB, byte, (size_t)span));
        if (i % 3 == 1) {
            MPI_Request rq;
            MPI_CK(MPI_Irecv(dB, count, dt, from, 300, MPI_COMM_WORLD, &rq));
            MPI_CK(MPI_Wait(&rq, &stt));
        } else {
            MPI_CK(MPI_Recv(dB, count, dt, from, 300, MPI_COMM_WORLD, &stt));
        }
        MPI_CK(MPI_Get_count(&stt, dt, &n));
        if (n != count) CU_BAD(bad, "%s: MPI_Get_count %d, expected %d", what, n, count);
        expect_recv(ht, count, byte, 0, s, span, h2);
        bad += check_device(dB, h2, span, what);
    }
    MPI_CK(MPI_Type_free(&dt));
    MPI_CK(MPI_Type_free(&ht));
    *ran = 1;
    return bad;
}

static void random_layouts(void **state)
{
    int bad = 0, nbad = 0, nrun = 0;
    uint64_t st = mpiacc_test_seed() ^ 0xd3fa17ull;
    (void)state;
    cu_watchdog("random_layouts", 480);
    for (int i = 0; i < 300 * rounds; i++) {
        int ran = 0, b = random_round(i, &st, &ran);
        nbad += b > 0, nrun += ran;
        bad += b;
    }
    if (cu_rank == 0) printf("random_layouts: %d layouts exchanged (%s)\n", nrun, BUILD);
    if (nbad) fprintf(stderr, "[rank %d] %d of %d random layouts wrong\n", cu_rank, nbad, nrun);
    cu_all_ok(bad, "random layouts device to device, no stream attribute");
}

static void pack_unpack(void **state)
{
    int bad = 0;
    MPI_Datatype types[2] = {contig, vec};
    (void)state;
    cu_watchdog("pack_unpack", 120);
    if (cu_rank > 1) goto done;
    for (int k = 0; k < 2; k++) {
        MPI_Datatype t = cu_tag(types[k], CU_NO_STREAM, NULL);
        const long long span = k ? SPAN : (long long)NI * 4;
        for (int r = 0; r < 10 * rounds; r++) {
            const int spin = r % 5 == 4 && !cu_sanitizer;
            const unsigned s = seed32 + 4000u + 100u * (unsigned)k + (unsigned)r;
            const int byte = 0x31 + r;
            int pos = 0, size = packed_of(types[k], 1, s, span, h2);
            char what[160];
            snprintf(what, sizeof what, "%s device MPI_Pack after %s, round %d", lname(k),
                     spin ? "a 20 ms writer" : "a pageable cudaMemcpy", r);
            CU_CK(cudaMemset(dpk, 0xEE, (size_t)size));
            if (spin) {
                CU_CK(cu_test_spin_fill(DEFSTREAM, dA, span, s, SPIN_MS));
            } else {
                cu_hfill(h1, span, s);
                CU_CK(cudaMemcpy(dA, h1, (size_t)span, cudaMemcpyHostToDevice));
            }
            MPI_CK(MPI_Pack(dA, 1, t, dpk, size, &pos, MPI_COMM_WORLD));
            if (pos != size) CU_BAD(bad, "%s: position %d, expected %d", what, pos, size);
            cu_get(h1, dpk, size);
            bad += cu_differs(h1, h2, size, what);
            /* unpack those packed bytes into a freshly cleared buffer */
            snprintf(what, sizeof what, "%s device MPI_Unpack after cudaMemset%s, round %d", lname(k),
                     spin ? " and a 20 ms writer" : "", r);
            CU_CK(cudaMemset(dB, byte, (size_t)span));
            if (spin) CU_CK(cu_test_spin_fill(DEFSTREAM, dB, span, s ^ 0x77u, SPIN_MS));
            pos = 0;
            MPI_CK(MPI_Unpack(dpk, size, &pos, dB, 1, t, MPI_COMM_WORLD));
            expect_recv(types[k], 1, spin ? -1 : byte, s ^ 0x77u, s, span, h2);
            bad += check_device(dB, h2, span, what);
        }
        MPI_CK(MPI_Type_free(&t));
    }
done:
    cu_all_ok(bad, "device MPI_Pack / MPI_Unpack after default-stream writers");
}

/* other_thread: the writer thread enqueues on its default stream, tells
 * the main thread, and stays alive until the send is done. */
typedef struct writer {
    pthread_mutex_t m;
    pthread_cond_t c;
    int enqueued, release;
    unsigned seed;
    long long span;
    cudaError_t err;
} writer_t;

static void *writer_main(void *p)
{
    writer_t *w = p;
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess) e = (cudaError_t)cu_test_spin_fill(DEFSTREAM, dA, w->span, w->seed, SPIN_MS);
    pthread_mutex_lock(&w->m);
    w->err = e;
    w->enqueued = 1;
    pthread_cond_broadcast(&w->c);
    while (!w->release) pthread_cond_wait(&w->c, &w->m);
    pthread_mutex_unlock(&w->m);
    return NULL;
}

static void other_thread(void **state)
{
    int bad = 0;
    (void)state;
    CU_SKIP_UNDER_SANITIZER();
    cu_watchdog("other_thread", 120);
    for (int r = 0; r < 5; r++) {
        const unsigned s = seed32 + 5000u + (unsigned)r;
        const long long span = SPAN;
        char what[160];
        snprintf(what, sizeof what, "strided send after a writer on another thread's %s, round %d", BUILD, r);
        if (cu_rank == 0) {
            MPI_Datatype t = cu_tag(vec, CU_NO_STREAM, NULL);
            writer_t w = {.enqueued = 0, .release = 0, .seed = s, .span = span, .err = cudaSuccess};
            pthread_t th;
            CU_CK(cudaMemset(dA, 0, (size_t)span));
            CU_CK(cudaDeviceSynchronize());
            pthread_mutex_init(&w.m, NULL);
            pthread_cond_init(&w.c, NULL);
            if (pthread_create(&th, NULL, writer_main, &w)) MPI_Abort(MPI_COMM_WORLD, 7);
            pthread_mutex_lock(&w.m);
            while (!w.enqueued) pthread_cond_wait(&w.c, &w.m);
            pthread_mutex_unlock(&w.m);
            CU_CK(w.err);
            MPI_CK(MPI_Send(dA, 1, t, 1, 400, MPI_COMM_WORLD));
            pthread_mutex_lock(&w.m);
            w.release = 1;
            pthread_cond_broadcast(&w.c);
            pthread_mutex_unlock(&w.m);
            pthread_join(th, NULL);
            pthread_mutex_destroy(&w.m);
            pthread_cond_destroy(&w.c);
            MPI_CK(MPI_Type_free(&t));
        } else if (cu_rank == 1) {
            bad += recv_packed_check(0, 400, vec, 1, s, span, what);
        }
    }
    cu_all_ok(bad, "send after another thread's default-stream writer");
}

int main(int argc, char **argv)
{
    int fails, lrank = 0, provided;
    const char *e;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(send_after_pageable_copy), cmocka_unit_test(recv_after_memset),
        cmocka_unit_test(random_layouts), cmocka_unit_test(pack_unpack), cmocka_unit_test(other_thread),
    };
    provided = cu_init(&argc, &argv, MPI_THREAD_FUNNELED, 2);
    (void)provided; /* the writer thread makes no MPI call */
    if (cu_size != 2) mpiacc_test_skip_all("runs on exactly 2 ranks, got %d", cu_size);
    if ((e = getenv("MPIACC_TEST_ROUNDS")) && atoi(e) > 0) rounds = atoi(e);
    local_rank_size(MPI_COMM_WORLD, &lrank, NULL); /* bench/common/local_rank.h */
    e = getenv("MPIACC_TEST_SHARED_GPU");
    dev = e && *e && strcmp(e, "0") != 0 ? 0 : lrank % cu_ndev;
    {
        int all[2] = {-1, -1};
        MPI_CK(MPI_Gather(&dev, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (cu_rank == 0)
            printf("test_cuda_default_stream (%s): rank 0 on device %d, rank 1 on device %d (%d devices)\n", BUILD,
                   all[0], all[1], cu_ndev);
    }
    CU_CK(cudaSetDevice(dev));
    CU_CK(cudaStreamCreateWithFlags(&nbs, cudaStreamNonBlocking));
    seed32 = (unsigned)mpiacc_test_seed();
    CU_CK(cudaMalloc((void **)&dA, RMAX));
    CU_CK(cudaMalloc((void **)&dB, RMAX));
    CU_CK(cudaMalloc((void **)&dpk, RMAX));
    h1 = malloc(RMAX), h2 = malloc(RMAX), h3 = malloc(RMAX), hp = malloc(RMAX);
    if (!h1 || !h2 || !h3 || !hp) MPI_Abort(MPI_COMM_WORLD, 6);
    MPI_CK(MPI_Type_contiguous(NI, MPI_INT, &contig));
    MPI_CK(MPI_Type_commit(&contig));
    vec = cu_vector_int(NI, 2);
    fails = MPIACC_TEST_RUN("cuda_default_stream", tests, NULL, NULL);
    MPI_Type_free(&vec);
    MPI_Type_free(&contig);
    CU_CK(cudaDeviceSynchronize());
    CU_CK(cudaFree(dA));
    CU_CK(cudaFree(dB));
    CU_CK(cudaFree(dpk));
    CU_CK(cudaStreamDestroy(nbs));
    free(h1), free(h2), free(h3), free(hp);
    CU_CK(cudaSetDevice(cu_dev)); /* cu_fini's streams live on cu_dev */
    return cu_fini(fails);
}
