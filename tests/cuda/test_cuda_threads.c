/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_threads: MPI_THREAD_MULTIPLE with CUDA buffers (2 ranks).  On
 * each rank 4 threads, each with its own stream, buffers and tagged
 * datatypes, exchange tagged device messages with the same thread of the
 * other rank concurrently: a kernel writes the send buffer on the thread's
 * stream, then MPI_Irecv + MPI_Isend + MPI_Waitall (MPI_Sendrecv every
 * third iteration), strided and contiguous types alternating, with no
 * stream synchronisation.  Every received buffer is checked.
 */
#include "cu_p2p.h"

#include <pthread.h>

#define NT 4
#define ITERS 40
#define NI 8192 /* ints per buffer */
#define BYTES ((long long)NI * 4)

static MPI_Datatype vec, contig; /* NI/2 ints, strided / dense */
static unsigned seed32;

typedef struct targ {
    int id, bad;
} targ_t;

#define TBAD(ta_, ...)                                               \
    do {                                                             \
        fprintf(stderr, "[rank %d thread %d] ", cu_rank, (ta_)->id); \
        fprintf(stderr, __VA_ARGS__);                                \
        fprintf(stderr, "\n");                                       \
        (ta_)->bad++;                                                \
    } while (0)

static void *worker(void *p)
{
    targ_t *ta = p;
    const int peer = 1 - cu_rank;
    cudaStream_t s;
    unsigned char *ds, *dr, *h = malloc(BYTES), *exp = malloc(BYTES), *pk = malloc(BYTES);
    MPI_Datatype tv, tc;
    CU_CK(cudaSetDevice(cu_dev)); /* a new thread starts on device 0 */
    CU_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CU_CK(cudaMalloc((void **)&ds, BYTES));
    CU_CK(cudaMalloc((void **)&dr, BYTES));
    tv = cu_tag(vec, CU_STREAM, s);
    tc = cu_tag(contig, CU_STREAM, s);
    for (int it = 0; it < ITERS && ta->bad < 5; it++) {
        const int tag = ta->id * 1000 + it;
        MPI_Datatype t = it % 2 ? tc : tv, ht = it % 2 ? contig : vec;
        unsigned mine = seed32 + 100u * (unsigned)cu_rank + 10000u * (unsigned)ta->id + (unsigned)it;
        unsigned theirs = mine - 100u * (unsigned)cu_rank + 100u * (unsigned)peer, old = mine ^ 0xabcdu;
        MPI_Request rq[2];
        int pos = 0, size;
        CU_CK(cu_k_fill(s, ds, BYTES, mine));
        CU_CK(cu_k_fill(s, dr, BYTES, old));
        if (it % 3 == 2) {
            MPI_Status st;
            MPI_CK(MPI_Sendrecv(ds, 1, t, peer, tag, dr, 1, t, peer, tag, MPI_COMM_WORLD, &st));
            if (st.MPI_TAG != tag || st.MPI_SOURCE != peer) TBAD(ta, "iteration %d: status tag %d source %d", it, st.MPI_TAG, st.MPI_SOURCE);
        } else {
            MPI_CK(MPI_Irecv(dr, 1, t, peer, tag, MPI_COMM_WORLD, &rq[0]));
            MPI_CK(MPI_Isend(ds, 1, t, peer, tag, MPI_COMM_WORLD, &rq[1]));
            MPI_CK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        }
        /* expected: old pattern with the peer's data at the type's places */
        cu_hfill(h, BYTES, theirs);
        MPI_CK(MPI_Type_size(ht, &size));
        MPI_CK(MPI_Pack(h, 1, ht, pk, size, &pos, MPI_COMM_SELF));
        cu_hfill(exp, BYTES, old);
        pos = 0;
        MPI_CK(MPI_Unpack(pk, size, &pos, exp, 1, ht, MPI_COMM_SELF));
        CU_CK(cudaMemcpyAsync(h, dr, BYTES, cudaMemcpyDeviceToHost, s));
        CU_CK(cudaStreamSynchronize(s));
        for (long long i = 0; i < BYTES; i++)
            if (h[i] != exp[i]) {
                TBAD(ta, "iteration %d (%s%s): byte %lld is 0x%02x, expected 0x%02x", it, it % 2 ? "contiguous" : "strided",
                     it % 3 == 2 ? ", MPI_Sendrecv" : "", i, h[i], exp[i]);
                break;
            }
    }
    MPI_CK(MPI_Type_free(&tv));
    MPI_CK(MPI_Type_free(&tc));
    CU_CK(cudaFree(ds));
    CU_CK(cudaFree(dr));
    CU_CK(cudaStreamDestroy(s));
    free(h), free(exp), free(pk);
    return NULL;
}

static void threads(void **state)
{
    pthread_t th[NT];
    targ_t ta[NT];
    int bad = 0;
    (void)state;
    cu_watchdog("threads", 180);
    for (int i = 0; i < NT; i++) {
        ta[i] = (targ_t){.id = i};
        if (pthread_create(&th[i], NULL, worker, &ta[i])) MPI_Abort(MPI_COMM_WORLD, 7);
    }
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        bad += ta[i].bad;
    }
    cu_all_ok(bad, "4 threads exchanging device messages");
}

int main(int argc, char **argv)
{
    int fails, provided;
    const struct CMUnitTest tests[] = {cmocka_unit_test(threads)};
    provided = cu_init(&argc, &argv, MPI_THREAD_MULTIPLE, 2);
    if (cu_size != 2) mpiacc_test_skip_all("runs on exactly 2 ranks, got %d", cu_size);
    if (provided < MPI_THREAD_MULTIPLE) mpiacc_test_skip_all("MPI_THREAD_MULTIPLE not provided (%d)", provided);
    seed32 = (unsigned)mpiacc_test_seed();
    vec = cu_vector_int(NI / 2, 2);
    MPI_CK(MPI_Type_contiguous(NI / 2, MPI_INT, &contig));
    MPI_CK(MPI_Type_commit(&contig));
    fails = MPIACC_TEST_RUN("cuda_threads", tests, NULL, NULL);
    MPI_Type_free(&vec);
    MPI_Type_free(&contig);
    return cu_fini(fails);
}
