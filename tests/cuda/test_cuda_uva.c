/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_uva: unmodified "CUDA-aware MPI" usage through MPIACC_UVA=1
 * (issue 22): untagged datatypes (MPI_BYTE, a vector of MPI_INT) on
 * cudaMalloc, cudaMallocManaged and cudaMallocHost buffers, 2 ranks (device
 * node-local rank % device count).  Run with MPIACC_UVA=1 (CTest sets it).
 * Skipped without a CUDA device.
 *
 *  support        MPIX_Query_cuda_support() = 1; MPI_COMM_WORLD's
 *                 mpi_memory_alloc_kinds lists cuda:device/host/managed
 *  device_default the sender's data are written by a 20 ms kernel on the
 *                 legacy default stream and sent at once (no synchronize):
 *                 default-stream ordering must deliver them; contiguous
 *                 and strided, blocking and nonblocking, D->D, D->H, H->D
 *  managed        the same with cudaMallocManaged buffers (CUDA path)
 *  pinned         cudaMallocHost buffers take the CUDA path (read through
 *                 their device mapping)
 *  asserted       a communicator with mpi_assert_memory_alloc_kinds =
 *                 "cuda:device": device buffers, no query
 *  refused        MPI_Put from an untagged device buffer: MPI_ERR_TYPE
 */
#include "cu_p2p.h"
#include "test_kernels.h"
#include "dispatch/memkind.h"

#define NB (1 << 20) /* bytes per buffer */

static int dev, peer;
static unsigned char *href, *hexp, *hgot;

enum { MEM_DEV, MEM_MANAGED, MEM_PINNED, MEM_PAGEABLE };
static const char *mname[] = {"device", "managed", "pinned", "pageable"};

static void *mem_alloc(int m)
{
    void *p = NULL;
    switch (m) {
    case MEM_DEV: CU_CK(cudaMalloc(&p, NB)); break;
    case MEM_MANAGED: CU_CK(cudaMallocManaged(&p, NB, cudaMemAttachGlobal)); break;
    case MEM_PINNED: CU_CK(cudaMallocHost(&p, NB)); break;
    default: p = malloc(NB); break;
    }
    return p;
}

static void mem_free(int m, void *p)
{
    switch (m) {
    case MEM_DEV:
    case MEM_MANAGED: CU_CK(cudaFree(p)); break;
    case MEM_PINNED: CU_CK(cudaFreeHost(p)); break;
    default: free(p); break;
    }
}

/* Sender: pattern(seed) written by a default-stream kernel after 20 ms
 * (device memory) or by the CPU (host memory); nothing synchronised. */
static void fill(int m, void *p, unsigned seed)
{
    if (m == MEM_DEV || m == MEM_MANAGED) CU_CK(cu_test_spin_fill(NULL, p, NB, seed, 20.0));
    else
        for (long long i = 0; i < NB; i++) ((unsigned char *)p)[i] = cu_pattern(i, seed);
}

/* Receiver: zeroes (default stream for device memory), then after the
 * receive reads everything back. */
static void clear(int m, void *p)
{
    if (m == MEM_DEV || m == MEM_MANAGED) CU_CK(cudaMemset(p, 0, NB));
    else memset(p, 0, NB);
}

static void readback(int m, void *p)
{
    if (m == MEM_DEV || m == MEM_MANAGED) CU_CK(cudaMemcpy(hgot, p, NB, cudaMemcpyDefault));
    else memcpy(hgot, p, NB);
}

/* One message rank 0 -> rank 1: sender memory sm, receiver memory rm, the
 * datatype (count x t), blocking or not; the receiver checks against
 * MPI_Pack/MPI_Unpack on host buffers (the oracle). */
static int one(int sm, int rm, MPI_Datatype t, int count, int nonblocking, MPI_Comm comm, unsigned seed)
{
    int bad = 0, pos = 0, size = 0;
    void *buf = mem_alloc(cu_rank == 0 ? sm : rm);
    MPI_Request r;
    if (cu_rank == 0) {
        fill(sm, buf, seed);
        if (nonblocking) {
            MPI_CK(MPI_Isend(buf, count, t, peer, 7, comm, &r));
            MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            MPI_CK(MPI_Send(buf, count, t, peer, 7, comm));
        }
    } else {
        clear(rm, buf);
        if (nonblocking) {
            MPI_CK(MPI_Irecv(buf, count, t, peer, 7, comm, &r));
            MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            MPI_CK(MPI_Recv(buf, count, t, peer, 7, comm, MPI_STATUS_IGNORE));
        }
        readback(rm, buf);
        for (long long i = 0; i < NB; i++) href[i] = cu_pattern(i, seed);
        memset(hexp, 0, NB);
        MPI_CK(MPI_Pack_size(count, t, MPI_COMM_SELF, &size));
        {
            unsigned char *packed = malloc((size_t)size);
            MPI_CK(MPI_Pack(href, count, t, packed, size, &pos, MPI_COMM_SELF));
            pos = 0;
            MPI_CK(MPI_Unpack(packed, size, &pos, hexp, count, t, MPI_COMM_SELF));
            free(packed);
        }
        if (memcmp(hgot, hexp, NB))
            CU_BAD(bad, "%s -> %s, %s, %s: wrong data", mname[sm], mname[rm], t == MPI_BYTE ? "MPI_BYTE" : "vector",
                   nonblocking ? "Isend/Irecv" : "Send/Recv");
    }
    CU_CK(cudaDeviceSynchronize());
    mem_free(cu_rank == 0 ? sm : rm, buf);
    return bad;
}

static void support(void **state)
{
    MPI_Info info;
    char v[512] = "";
    int flag = 0;
    (void)state;
    assert_int_equal(MPIX_Query_cuda_support(), 1);
    MPI_CK(MPI_Comm_get_info(MPI_COMM_WORLD, &info));
    MPI_CK(MPI_Info_get(info, "mpi_memory_alloc_kinds", (int)sizeof v - 1, v, &flag));
    MPI_Info_free(&info);
    assert_true(flag);
    assert_non_null(strstr(v, "cuda:device"));
    assert_non_null(strstr(v, "cuda:managed"));
    assert_non_null(strstr(v, "cuda:host"));
}

static void run_pairs(const int (*pairs)[2], int npairs, MPI_Comm comm, const char *what)
{
    MPI_Datatype vec = cu_vector_int(NB / 8, 2); /* every other int over the whole buffer */
    int bad = 0;
    unsigned seed = 1;
    cu_watchdog(what, 120);
    for (int p = 0; p < npairs; p++)
        for (int nb = 0; nb < 2; nb++) {
            bad += one(pairs[p][0], pairs[p][1], MPI_BYTE, NB, nb, comm, seed++);
            bad += one(pairs[p][0], pairs[p][1], vec, 1, nb, comm, seed++);
        }
    MPI_Type_free(&vec);
    cu_all_ok(bad, what);
}

static void device_default(void **state)
{
    static const int pairs[][2] = {{MEM_DEV, MEM_DEV}, {MEM_DEV, MEM_PAGEABLE}, {MEM_PAGEABLE, MEM_DEV}};
    (void)state;
    run_pairs(pairs, 3, MPI_COMM_WORLD, "device_default");
}

static void managed(void **state)
{
    static const int pairs[][2] = {{MEM_MANAGED, MEM_MANAGED}, {MEM_MANAGED, MEM_DEV}, {MEM_DEV, MEM_MANAGED}};
    (void)state;
    run_pairs(pairs, 3, MPI_COMM_WORLD, "managed");
}

static void pinned(void **state)
{
    static const int pairs[][2] = {{MEM_PINNED, MEM_PINNED}, {MEM_PINNED, MEM_DEV}, {MEM_DEV, MEM_PINNED}};
    void *p;
    int mem = -1, d = -1;
    (void)state;
    run_pairs(pairs, 3, MPI_COMM_WORLD, "pinned");
    /* the backend's classification itself: pinned host memory */
    p = mem_alloc(MEM_PINNED);
    assert_int_equal(mpiacc_backend_get(MPIACC_KIND_CUDA)->classify(p, &mem, &d), MPI_SUCCESS);
    assert_int_equal(mem, MPIACC_CORE_MEM_PINNED);
    mem_free(MEM_PINNED, p);
    p = mem_alloc(MEM_MANAGED);
    assert_int_equal(mpiacc_backend_get(MPIACC_KIND_CUDA)->classify(p, &mem, &d), MPI_SUCCESS);
    assert_int_equal(mem, MPIACC_CORE_MEM_MANAGED);
    mem_free(MEM_MANAGED, p);
    p = mem_alloc(MEM_DEV);
    assert_int_equal(mpiacc_backend_get(MPIACC_KIND_CUDA)->classify((char *)p + 4096, &mem, &d), MPI_SUCCESS);
    assert_int_equal(mem, MPIACC_CORE_MEM_DEVICE);
    assert_int_equal(d, dev);
    mem_free(MEM_DEV, p);
}

static void asserted(void **state)
{
    static const int pairs[][2] = {{MEM_DEV, MEM_DEV}, {MEM_MANAGED, MEM_DEV}};
    MPI_Info info;
    MPI_Comm c;
    (void)state;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "cuda:device,cuda:managed");
    MPI_CK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    run_pairs(pairs, 2, c, "asserted");
    MPI_Comm_free(&c);
}

/* Calls that refuse device datatypes (RMA, here MPI_Put) refuse an
 * untagged device buffer too (MPI_ERR_TYPE through the window's handler),
 * rather than hand it to MPI as host memory; a host one still works. */
static void refused(void **state)
{
    int *win_mem = calloc(64, sizeof(int)), host[64] = {0}, cls = -1;
    void *p = mem_alloc(MEM_DEV);
    MPI_Win win;
    (void)state;
    MPI_CK(MPI_Win_create(win_mem, 64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_CK(MPI_Win_fence(0, win));
    MPI_Error_class(MPI_Put(p, 64, MPI_INT, peer, 0, 64, MPI_INT, win), &cls);
    assert_int_equal(cls, MPI_ERR_TYPE);
    MPI_CK(MPI_Put(host, 64, MPI_INT, peer, 0, 64, MPI_INT, win));
    MPI_CK(MPI_Win_fence(0, win));
    MPI_CK(MPI_Win_free(&win));
    mem_free(MEM_DEV, p);
    free(win_mem);
}

int main(int argc, char **argv)
{
    int fails, lrank = 0;
        const struct CMUnitTest tests[] = {
        cmocka_unit_test(support), cmocka_unit_test(device_default), cmocka_unit_test(managed),
        cmocka_unit_test(pinned), cmocka_unit_test(asserted), cmocka_unit_test(refused),
    };
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    if (cu_size != 2) mpiacc_test_skip_all("runs on exactly 2 ranks, got %d", cu_size);
    if (!mpiacc_dispatch_uva) mpiacc_test_skip_all("run with MPIACC_UVA=1 (CTest sets it)");
    local_rank_size(MPI_COMM_WORLD, &lrank, NULL); /* bench/common/local_rank.h */
    dev = lrank % cu_ndev;
    CU_CK(cudaSetDevice(dev));
    peer = 1 - cu_rank;
    href = malloc(NB);
    hexp = malloc(NB);
    hgot = malloc(NB);
    fails = MPIACC_TEST_RUN("cuda_uva", tests, NULL, NULL);
    free(href);
    free(hexp);
    free(hgot);
    return cu_fini(fails);
}
