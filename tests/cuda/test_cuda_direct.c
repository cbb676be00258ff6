/*
 * test_cuda_direct: the direct protocol with CUDA buffers (2 ranks, one GPU
 * each when there are two; needs a GPU, skipped without one).  The ranks
 * talk on a duplicate of MPI_COMM_WORLD with the info key mpiacc_direct;
 * CMakeLists.txt sets a small MPIACC_EAGER_MAX so that most messages are
 * offered by IPC (one case with MPIACC_IPC_MIN=2K: messages up to 1 KiB
 * eager; one with the default 0: all of them IPC).
 *
 *  - corpus: the engine's random datatypes (tests/pack/typegen), counts
 *    scaled above the eager limit, through IPC (receiver copies from the
 *    sender's layout into its own), against host MPI_Pack / MPI_Unpack;
 *  - a buffer in the middle of an allocation (the export sends the
 *    allocation and the offset);
 *  - free and re-allocate at the same address between messages: the
 *    receiver must not read through a stale mapping;
 *  - stream-ordered pool memory (cudaMallocAsync) cannot be exported: the
 *    message goes pipelined, counted as a fallback;
 *  - the sender's producing kernel still running when the receive is
 *    posted (a gate kernel): the receive completes only after it, with its
 *    data.
 *  - layouts (issue 23): vector <-> vector / contiguous, blocks 8 / 64 /
 *    512 B, 1 KiB and 64 KiB, sender and receiver types differing, direct
 *    and default protocol, the receive compared with MPI_Unpack of the
 *    sender's MPI_Pack.
 * `--variant SET` (cuda_testhooks.h names joined by '+') runs the corpus,
 * the running producer and the layouts under that IPC-path variant on both
 * ranks and checks, after the layouts,
 * that each variant in the set took effect (kernel, rows, capq must; flag,
 * xflag and noquery print a NOTE when they did not: a device refusing
 * stream memory operations, a dependency already known done).
 * MPIACC_TEST_NTYPES sets the corpus size (default 200), MPIACC_TEST_SEED
 * the seed.
 */
#include "cu_p2p.h"
#include "cuda/cuda_testhooks.h"
#include "pack/pack.h"
#include "protocol/direct.h"
#include "typegen.h"

static MPI_Comm comm;
static int variant = -1; /* --variant: MPIACC_CUDA_IPCV_* bits; -1: the library's default */

static long cnt(mpiacc_proto_count_t c) { return atomic_load(&mpiacc_proto_direct_count[c]); }

/* count x dt from byte 0 of a buffer: the bytes it spans. */
static long long span_bytes(MPI_Datatype dt, int count)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(dt, &lb, &ext);
    MPI_Type_get_true_extent(dt, &tlb, &text);
    return (long long)(tlb + text + (ext > 0 ? (count - 1) * ext : 0));
}

/* A random type placed so that count of it touch bytes >= 0 only. */
static MPI_Datatype placed(tg_src_t *src, int *count, MPI_Datatype *raw, long long emax)
{
    MPI_Datatype dt;
    MPI_Aint lb, ext, tlb, text, shift;
    int size = 0;
    *raw = tg_make(src, 3);
    MPI_Type_size(*raw, &size);
    *count = size > 0 ? (int)(emax / size) + 1 + (int)(src->state % 3) : 1;
    if (*count > 64) *count = 64;
    MPI_Type_get_extent(*raw, &lb, &ext);
    MPI_Type_get_true_extent(*raw, &tlb, &text);
    shift = -(tlb + (ext < 0 ? (*count - 1) * ext : 0));
    if (shift < 0) shift = 0;
    MPI_Type_create_hindexed(1, (int[]){1}, (MPI_Aint[]){shift}, *raw, &dt);
    MPI_Type_commit(&dt);
    return dt;
}

/* Sends count x dt from rank 0's device buffer at sbuf to rank 1's at
 * rbuf (both of `span` bytes, filled here with seeds); rank 1 compares the
 * whole receive buffer with the oracle.  Returns the mismatches. */
static int one(MPI_Datatype dt, int count, unsigned char *sbuf, unsigned char *rbuf, long long span, unsigned seed)
{
    MPI_Datatype t = cu_tag(dt, CU_STREAM, cu_us);
    unsigned char *hs = malloc((size_t)span + 1), *hr = malloc((size_t)span + 1), *pk, *got;
    int psize = 0, pos = 0, bad = 0;
    MPI_Status st;
    MPI_Pack_size(count, dt, MPI_COMM_SELF, &psize);
    pk = malloc((size_t)psize + 1);
    cu_hfill(hs, span, seed);
    cu_hfill(hr, span, seed ^ 0x5a5a5a5au);
    if (cu_rank == 0) {
        CU_CK(cudaMemcpyAsync(sbuf, hs, (size_t)span, cudaMemcpyHostToDevice, cu_us)); /* ordered by the stream */
        MPI_CK(MPI_Send(sbuf, count, t, 1, 1, comm));
    } else {
        CU_CK(cudaMemcpyAsync(rbuf, hr, (size_t)span, cudaMemcpyHostToDevice, cu_us));
        MPI_CK(MPI_Recv(rbuf, count, t, 0, 1, comm, &st));
        got = malloc((size_t)span + 1);
        CU_CK(cudaMemcpy(got, rbuf, (size_t)span, cudaMemcpyDeviceToHost));
        MPI_CK(MPI_Pack(hs, count, dt, pk, psize, &pos, MPI_COMM_SELF));
        pos = 0;
        MPI_CK(MPI_Unpack(pk, psize, &pos, hr, count, dt, MPI_COMM_SELF));
        if (memcmp(got, hr, (size_t)span) != 0) CU_BAD(bad, "received bytes differ from MPI_Unpack's");
        free(got);
    }
    free(hs);
    free(hr);
    free(pk);
    MPI_Type_free(&t);
    return bad;
}

static void corpus(void **state)
{
    uint64_t seed = mpiacc_test_seed();
    const char *e = getenv("MPIACC_TEST_NTYPES");
    long n = e ? atol(e) : 200;
    long long emax = mpiacc_proto_comm_lookup(comm)->eager_max;
    long r0 = cnt(MPIACC_PROTO_N_IPC_RECV);
    tg_src_t src = {.state = seed, .max_size = 1 << 14, .max_span = 1 << 16};
    int bad = 0;
    cu_watchdog("corpus", 240);
    for (long i = 0; i < n; i++) {
        int count;
        MPI_Datatype raw, dt = placed(&src, &count, &raw, emax);
        long long span = span_bytes(dt, count) + 1;
        unsigned char *sbuf, *rbuf;
        CU_CK(cudaMalloc((void **)&sbuf, (size_t)span));
        CU_CK(cudaMalloc((void **)&rbuf, (size_t)span));
        bad += one(dt, count, sbuf, rbuf, span, (unsigned)i + 1);
        CU_CK(cudaFree(sbuf));
        CU_CK(cudaFree(rbuf));
        MPI_Type_free(&dt);
        tg_free(&raw);
    }
    if (cu_rank == 1 && cnt(MPIACC_PROTO_N_IPC_RECV) == r0) CU_BAD(bad, "no message went through IPC");
    cu_all_ok(bad, "IPC corpus");
}

/* The buffer in the middle of a larger allocation. */
static void inside_allocation(void **state)
{
    MPI_Datatype v = cu_vector_int(4096, 3);
    unsigned char *base;
    int bad = 0;
    const long long off = 4096 + 52, span = 3 * 4096 * 4;
    cu_watchdog("inside_allocation", 60);
    CU_CK(cudaMalloc((void **)&base, (size_t)(off + span + 8192)));
    bad += one(v, 1, base + off, base + off, span, 77);
    CU_CK(cudaFree(base));
    MPI_Type_free(&v);
    cu_all_ok(bad, "buffer inside an allocation");
}

/* Free and allocate again (often at the same address, with a new handle)
 * between messages: every message must carry its own data. */
static void reallocated(void **state)
{
    MPI_Datatype v = cu_vector_int(8192, 2);
    const long long span = 2 * 8192 * 4;
    int bad = 0, same = 0;
    void *prev = NULL;
    cu_watchdog("reallocated", 60);
    for (int k = 0; k < 8; k++) {
        unsigned char *s, *r;
        CU_CK(cudaMalloc((void **)&s, (size_t)span));
        CU_CK(cudaMalloc((void **)&r, (size_t)span));
        same += s == prev;
        prev = s;
        bad += one(v, 1, s, r, span, 1000u + (unsigned)k);
        CU_CK(cudaFree(s));
        CU_CK(cudaFree(r));
    }
    if (cu_rank == 0) printf("reallocated: %d of 7 allocations at the previous address\n", same);
    MPI_Type_free(&v);
    cu_all_ok(bad, "free and re-allocate between messages");
}

/* Pool memory from cudaMallocAsync cannot be exported: pipelined.  (Not
 * under compute-sanitizer, whose allocator replaces the stream-ordered pool
 * with memory that can be exported.) */
static void pool_memory_falls_back(void **state)
{
    MPI_Datatype v;
    const long long span = 2 * 8192 * 4;
    long f0 = cnt(MPIACC_PROTO_N_IPC_FALLBACK), p0 = cnt(MPIACC_PROTO_N_PIPE_RECV);
    unsigned char *s, *r;
    int bad = 0;
    CU_SKIP_UNDER_SANITIZER();
    v = cu_vector_int(8192, 2);
    cu_watchdog("pool_memory", 60);
    CU_CK(cudaMallocAsync((void **)&s, (size_t)span, cu_us));
    CU_CK(cudaMallocAsync((void **)&r, (size_t)span, cu_us));
    bad += one(v, 1, s, r, span, 4242);
    if (cu_rank == 0 && cnt(MPIACC_PROTO_N_IPC_FALLBACK) != f0 + 1) CU_BAD(bad, "the export did not fall back");
    if (cu_rank == 1 && cnt(MPIACC_PROTO_N_PIPE_RECV) != p0 + 1) CU_BAD(bad, "the message was not pipelined");
    CU_CK(cudaFreeAsync(s, cu_us));
    CU_CK(cudaFreeAsync(r, cu_us));
    CU_CK(cudaStreamSynchronize(cu_us));
    MPI_Type_free(&v);
    cu_all_ok(bad, "cudaMallocAsync memory");
}

/* The sender's kernel is still filling the buffer when the receive is
 * posted: the receive waits for it (GPU-side), then has its data. */
static void producer_still_running(void **state)
{
    const long long n = 1 << 20;
    MPI_Datatype c, t;
    unsigned char *buf, *h = malloc((size_t)n);
    cu_gate_t g;
    MPI_Request r;
    int bad = 0;
    CU_SKIP_UNDER_SANITIZER();
    cu_watchdog("producer_still_running", 60);
    MPI_CK(MPI_Type_contiguous((int)n, MPI_BYTE, &c));
    MPI_CK(MPI_Type_commit(&c));
    t = cu_tag(c, CU_STREAM, cu_us);
    CU_CK(cudaMalloc((void **)&buf, (size_t)n));
    CU_CK(cudaMemset(buf, 0, (size_t)n));
    CU_CK(cudaDeviceSynchronize());
    cu_gate_init(&g);
    if (cu_rank == 0) {
        CU_CK(cu_k_gate_fill(cu_us, g.d, buf, n, 99, 20.0));
        MPI_CK(MPI_Isend(buf, 1, t, 1, 2, comm, &r));
        MPI_CK(MPI_Barrier(comm)); /* the receive is posted */
        MPI_CK(MPI_Barrier(comm)); /* and found incomplete */
        cu_gate_open(&g);
        MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        MPI_CK(MPI_Irecv(buf, 1, t, 0, 2, comm, &r));
        MPI_CK(MPI_Barrier(comm));
        if (cu_completes_early(&r, 0.5, "IPC receive")) bad++;
        MPI_CK(MPI_Barrier(comm));
        MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CU_CK(cudaMemcpy(h, buf, (size_t)n, cudaMemcpyDeviceToHost));
        for (long long i = 0; i < n && !bad; i++)
            if (h[i] != cu_pattern(i, 99)) CU_BAD(bad, "byte %lld is %u, expected %u", i, h[i], cu_pattern(i, 99));
    }
    if (cu_gate_timed_out(&g)) CU_BAD(bad, "the gate kernel timed out");
    cu_gate_free(&g);
    CU_CK(cudaFree(buf));
    MPI_Type_free(&t);
    MPI_Type_free(&c);
    free(h);
    cu_all_ok(bad, "producer still running");
}

/* Rank 0 sends count x sdt from a device buffer of sspan bytes, rank 1
 * receives rcount x rdt into one of rspan bytes; rank 1 checks every byte
 * of its buffer against MPI_Unpack of rank 0's MPI_Pack.  Returns the
 * mismatches. */
static int two(MPI_Comm cm, MPI_Datatype sdt, int scount, long long sspan, MPI_Datatype rdt, int rcount,
               long long rspan, unsigned seed)
{
    MPI_Datatype st = cu_tag(sdt, CU_STREAM, cu_us), rt = cu_tag(rdt, CU_STREAM, cu_us);
    unsigned char *hs = malloc((size_t)sspan), *hr = malloc((size_t)rspan), *got = malloc((size_t)rspan), *pk;
    unsigned char *d;
    int psize = 0, pos = 0, bad = 0;
    const long long span = cu_rank == 0 ? sspan : rspan;
    MPI_Pack_size(scount, sdt, MPI_COMM_SELF, &psize);
    pk = malloc((size_t)psize + 1);
    cu_hfill(hs, sspan, seed);
    cu_hfill(hr, rspan, seed ^ 0xa5a5a5a5u);
    CU_CK(cudaMalloc((void **)&d, (size_t)span));
    CU_CK(cudaMemcpyAsync(d, cu_rank == 0 ? hs : hr, (size_t)span, cudaMemcpyHostToDevice, cu_us));
    if (seed & 1) CU_CK(cudaStreamSynchronize(cu_us)); /* an idle stream at the call (capq), or a busy one */
    if (cu_rank == 0) {
        MPI_CK(MPI_Send(d, scount, st, 1, 3, cm));
    } else {
        MPI_CK(MPI_Recv(d, rcount, rt, 0, 3, cm, MPI_STATUS_IGNORE));
        CU_CK(cudaMemcpy(got, d, (size_t)rspan, cudaMemcpyDeviceToHost));
        MPI_CK(MPI_Pack(hs, scount, sdt, pk, psize, &pos, MPI_COMM_SELF));
        pos = 0;
        MPI_CK(MPI_Unpack(pk, psize, &pos, hr, rcount, rdt, MPI_COMM_SELF));
        if (memcmp(got, hr, (size_t)rspan) != 0) CU_BAD(bad, "received bytes differ from MPI_Unpack's");
    }
    CU_CK(cudaFree(d));
    free(hs), free(hr), free(got), free(pk);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    return bad;
}

/* Vectors of MPI_BYTE blocks (pitch 512 B, or the block when larger) and
 * contiguous bytes, every pairing, 1 KiB and 64 KiB packed; on the direct
 * communicator (IPC) and on MPI_COMM_WORLD (the default protocol). */
static void layouts(void **state)
{
    static const long long sizes[] = {1024, 65536}, blocks[] = {8, 64, 512};
    int bad = 0;
    unsigned seed = 500;
    long used0[MPIACC_CUDA_IPCV_NBITS], used1[MPIACC_CUDA_IPCV_NBITS];
    mpiacc_cuda_ipc_variant_used(used0);
    cu_watchdog("layouts", 120);
    for (int si = 0; si < 2; si++)
        for (int bi = 0; bi < 3; bi++) {
            const long long n = sizes[si], blk = blocks[bi], nb = n / blk, pitch = blk < 512 ? 512 : blk;
            const long long vspan = (nb - 1) * pitch + blk;
            MPI_Datatype v, c;
            MPI_CK(MPI_Type_vector((int)nb, (int)blk, (int)pitch, MPI_BYTE, &v));
            MPI_CK(MPI_Type_commit(&v));
            MPI_CK(MPI_Type_contiguous((int)n, MPI_BYTE, &c));
            MPI_CK(MPI_Type_commit(&c));
            for (int w = 0; w < 2; w++) {
                MPI_Comm cm = w ? MPI_COMM_WORLD : comm;
                bad += two(cm, v, 1, vspan, v, 1, vspan, seed++);
                bad += two(cm, v, 1, vspan, c, 1, n, seed++);
                bad += two(cm, c, 1, n, v, 1, vspan, seed++);
                bad += two(cm, c, 1, n, c, 1, n, seed++);
                bad += two(cm, MPI_BYTE, (int)n, n, MPI_BYTE, (int)n, n, seed++);
                bad += two(cm, v, 1, vspan, c, 1, n + 100, seed++); /* a larger receive buffer */
            }
            MPI_Type_free(&v);
            MPI_Type_free(&c);
        }
    mpiacc_cuda_ipc_variant_used(used1);
    if (variant > 0) {
        static const char *const names[] = {"kernel", "flag", "capq", "noquery", "rows", "xflag"};
        /* who does it: kernel, flag, rows at the receiver; noquery at the
         * sender; capq on both; xflag on both (the default protocol's pack and unpack) */
        static const int by[] = {1, 1, -1, 0, 1, -1};
        for (int i = 0; i < MPIACC_CUDA_IPCV_NBITS; i++) {
            if (!(variant & 1 << i) || (by[i] >= 0 && by[i] != cu_rank)) continue;
            if (i == 3 && (variant & MPIACC_CUDA_IPCV_CAPQ)) continue; /* capq may leave nothing to query */
            if (used1[i] > used0[i]) continue;
            if (i == 1 || i == 5 || i == 3)
                printf("[rank %d] NOTE: variant %s never took effect (%s)\n", cu_rank, names[i],
                       i == 3 ? "every dependency already known done at the export?"
                              : "stream memory operations refused? MPIACC_LOG=warn says");
            else
                CU_BAD(bad, "variant %s never took effect", names[i]);
        }
    }
    cu_all_ok(bad, "vector and contiguous layouts");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus),         cmocka_unit_test(inside_allocation),
        cmocka_unit_test(reallocated),    cmocka_unit_test(pool_memory_falls_back),
        cmocka_unit_test(producer_still_running), cmocka_unit_test(layouts),
    };
    int failed;
    MPI_Info info;
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--variant") && (variant = mpiacc_cuda_ipc_variant_parse(argv[i + 1])) < 0) {
            fprintf(stderr, "test_cuda_direct: --variant: unknown name in '%s'\n", argv[i + 1]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    if (variant >= 0) mpiacc_cuda_set_ipc_variant(variant);
    if (cu_size != 2) mpiacc_test_skip_all("needs exactly 2 MPI processes");
    CU_CK(cudaSetDevice(cu_rank % cu_ndev));
    CU_CK(cudaStreamDestroy(cu_us));
    CU_CK(cudaStreamDestroy(cu_us2));
    CU_CK(cudaStreamCreateWithFlags(&cu_us, cudaStreamNonBlocking));
    CU_CK(cudaStreamCreateWithFlags(&cu_us2, cudaStreamNonBlocking));
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
    MPI_CK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm));
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (variant >= 0) { /* what the variants change: copies, completion, dependencies */
        const struct CMUnitTest vtests[] = {cmocka_unit_test(corpus), cmocka_unit_test(producer_still_running),
                                            cmocka_unit_test(layouts)};
        failed = MPIACC_TEST_RUN("cuda_direct_variant", vtests, NULL, NULL);
    } else {
        failed = MPIACC_TEST_RUN("cuda_direct", tests, NULL, NULL);
    }
    MPI_Comm_free(&comm);
    return cu_fini(failed);
}
