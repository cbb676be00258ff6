/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_memkind: untagged buffers under MPIACC_UVA=1 and the MPI 4.1 memory
 * allocation kinds info keys, on host memory (2 ranks; CPU-only machines:
 * the CUDA backend is absent or has no device, which the checks expect;
 * with a CUDA device the kinds list grows and the "cuda:device without a
 * device" case is skipped: tests/cuda/test_cuda_uva.c covers device memory).
 *
 *  query_support      MPIX_Query_cuda_support / MPIX_GPU_query_support say
 *                     CUDA exactly when MPIACC_UVA=1
 *  world_kinds        MPI_COMM_WORLD's mpi_memory_alloc_kinds: mpi, system,
 *                     and the cuda kinds iff a CUDA device works
 *  host_memory        ping-pong from stack, static, small and large (mmap)
 *                     heap, contiguous and strided: right data; with
 *                     MPIACC_UVA=1 the granules end up in the host cache
 *  tagged_first       a datatype tagged MPIACC_BUF_HOST keeps working
 *  assert_info        mpi_assert_memory_alloc_kinds through dup_with_info,
 *                     set_info, dup (kept), split (not kept), dup_with_info
 *                     without the key (cleared); get_info reports it
 *  assert_host_mixed  host traffic on communicators asserting "system" and
 *                     "system,cuda:device"
 *  assert_device      device kinds only ("cuda:device", "cuda:managed",
 *                     both) and no CUDA device: untagged Send/Recv/Irecv/
 *                     Pack fail (MPI_ERR_OTHER), never read host memory as
 *                     if it were device memory; empty messages work; world
 *                     and host-tagged datatypes untouched; kept by dup,
 *                     taken by split_type, undone by set_info("system")
 *  assert_host_lists  "mpi,system", "", "cuda:device,opencl" (query: host),
 *                     "cuda:host": host traffic
 *  pcache             the granule cache: put, has, collision, forget, clear
 */
#define _POSIX_C_SOURCE 200809L /* setenv, strtok_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "dispatch/memkind.h"

#define N 4096

static int rank, peer;

static int cuda_works(void) { return mpiacc_backend_get(MPIACC_KIND_CUDA) != NULL; }

static int has_kind(const char *list, const char *kind)
{
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save))
        if (!strcmp(k, kind)) return 1;
    return 0;
}

/* The value of key in comm's info ("" and 0 when absent). */
static int comm_info(MPI_Comm comm, const char *key, char *val, int len)
{
    MPI_Info info;
    int flag = 0;
    val[0] = 0;
    assert_int_equal(MPI_Comm_get_info(comm, &info), MPI_SUCCESS);
    assert_int_equal(MPI_Info_get(info, key, len - 1, val, &flag), MPI_SUCCESS);
    MPI_Info_free(&info);
    return flag;
}

static MPI_Comm dup_asserting(MPI_Comm comm, const char *kinds)
{
    MPI_Info info;
    MPI_Comm c;
    MPI_Info_create(&info);
    if (kinds) MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", kinds);
    assert_int_equal(MPI_Comm_dup_with_info(comm, info, &c), MPI_SUCCESS);
    MPI_Info_free(&info);
    return c;
}

static void test_query_support(void **state)
{
    int sup = -1;
    (void)state;
    assert_int_equal(MPIX_Query_cuda_support(), mpiacc_dispatch_uva ? 1 : 0);
    assert_int_equal(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &sup), MPI_SUCCESS);
    if (mpiacc_dispatch_uva) assert_int_equal(sup, 1);
}

static void test_world_kinds(void **state)
{
    char v[512];
    (void)state;
    assert_true(comm_info(MPI_COMM_WORLD, "mpi_memory_alloc_kinds", v, sizeof v));
    assert_true(has_kind(v, "mpi"));
    assert_true(has_kind(v, "system"));
    assert_int_equal(has_kind(v, "cuda:device"), cuda_works());
    assert_int_equal(has_kind(v, "cuda:managed"), cuda_works());
    assert_int_equal(has_kind(v, "cuda:host"), cuda_works());
    /* no assertion on MPI_COMM_WORLD */
    assert_false(comm_info(MPI_COMM_WORLD, "mpi_assert_memory_alloc_kinds", v, sizeof v));
}

static void fill(int *b, int n, int salt)
{
    for (int i = 0; i < n; i++) b[i] = salt * 100003 + i;
}

/* rank 0 sends, rank 1 receives and checks (every int, or every other). */
static void one_way(int *sbuf, int *rbuf, MPI_Datatype t, int count, int ints, int strided, MPI_Comm comm, int salt)
{
    if (rank == 0) {
        fill(sbuf, ints, salt);
        assert_int_equal(MPI_Send(sbuf, count, t, peer, salt, comm), MPI_SUCCESS);
    } else {
        MPI_Request r;
        int *e = malloc(sizeof(int) * (size_t)ints);
        memset(rbuf, 0xff, sizeof(int) * (size_t)ints);
        assert_int_equal(MPI_Irecv(rbuf, count, t, peer, salt, comm, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        fill(e, ints, salt);
        for (int i = 0; i < ints; i += 1 + strided) assert_int_equal(rbuf[i], e[i]);
        free(e);
    }
}

static int sbuf_static[N], rbuf_static[N];

/* Under MPIACC_UVA on MPI_COMM_WORLD (no memory-kind assertion), the buffer
 * this rank just used is a cached host granule.  Checked right after its own
 * call: the cache is direct-mapped, so a later buffer whose granule shares
 * the slot may replace it (seen once in CI, a stack granule), and that is
 * the cache working as designed, not a miss to report. */
static void expect_cached(MPI_Comm comm, const void *sbuf, const void *rbuf)
{
    if (mpiacc_dispatch_uva && comm == MPI_COMM_WORLD)
        assert_true(mpiacc_util_pcache_has(&mpiacc_dispatch_host_pages, rank == 0 ? sbuf : rbuf));
}

static void traffic(MPI_Comm comm, int salt)
{
    int sstack[256], rstack[256];
    int *small_s = malloc(256 * sizeof(int)), *small_r = malloc(256 * sizeof(int));
    size_t big = 4u << 20; /* ints: 16 MiB, mmap'ed by malloc */
    int *big_s = malloc(big * sizeof(int)), *big_r = malloc(big * sizeof(int));
    MPI_Datatype vec;
    assert_non_null(small_s);
    assert_non_null(big_s);
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    one_way(sstack, rstack, MPI_INT, 256, 256, 0, comm, salt + 1);
    expect_cached(comm, sstack, rstack);
    one_way(sbuf_static, rbuf_static, MPI_INT, N, N, 0, comm, salt + 2);
    one_way(sbuf_static, rbuf_static, vec, 1, N, 1, comm, salt + 3);
    one_way(small_s, small_r, MPI_INT, 256, 256, 0, comm, salt + 4);
    one_way(big_s, big_r, MPI_INT, (int)big, (int)big, 0, comm, salt + 5);
    expect_cached(comm, big_s, big_r);
    one_way(big_s + 1000, big_r + 1000, vec, 1, N, 1, comm, salt + 6);
    /* the other direction through MPI_Sendrecv */
    fill(small_s, 256, salt + 7);
    assert_int_equal(MPI_Sendrecv(small_s, 256, MPI_INT, peer, 9, small_r, 256, MPI_INT, peer, 9, comm,
                                  MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
    assert_memory_equal(small_r, small_s, 256 * sizeof(int));
    MPI_Type_free(&vec);
    free(small_s);
    free(small_r);
    free(big_s);
    free(big_r);
}

static void test_host_memory(void **state)
{
    (void)state;
    traffic(MPI_COMM_WORLD, 10);
}

static void test_tagged_first(void **state)
{
    MPI_Datatype t;
    (void)state;
    MPI_Type_contiguous(N, MPI_INT, &t);
    MPI_Type_commit(&t);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST), MPI_SUCCESS);
    one_way(sbuf_static, rbuf_static, t, 1, N, 0, MPI_COMM_WORLD, 40);
    MPI_Type_free(&t);
}

static void test_assert_info(void **state)
{
    char v[256];
    MPI_Comm a, b, c, d;
    MPI_Info info;
    (void)state;
    a = dup_asserting(MPI_COMM_WORLD, "system");
    assert_true(comm_info(a, "mpi_assert_memory_alloc_kinds", v, sizeof v));
    assert_string_equal(v, "system");
    assert_true(comm_info(a, "mpi_memory_alloc_kinds", v, sizeof v)); /* still there */
    assert_int_equal(MPI_Comm_dup(a, &b), MPI_SUCCESS); /* dup keeps hints */
    assert_true(comm_info(b, "mpi_assert_memory_alloc_kinds", v, sizeof v));
    assert_string_equal(v, "system");
    assert_int_equal(MPI_Comm_split(a, 0, rank, &c), MPI_SUCCESS); /* split does not */
    assert_false(comm_info(c, "mpi_assert_memory_alloc_kinds", v, sizeof v));
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "cuda:host,mpi:alloc_mem");
    assert_int_equal(MPI_Comm_set_info(c, info), MPI_SUCCESS);
    MPI_Info_free(&info);
    assert_true(comm_info(c, "mpi_assert_memory_alloc_kinds", v, sizeof v));
    assert_string_equal(v, "cuda:host,mpi:alloc_mem");
    d = dup_asserting(b, NULL); /* dup_with_info: the info's hints only */
    assert_false(comm_info(d, "mpi_assert_memory_alloc_kinds", v, sizeof v));
    traffic(c, 50);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Comm_free(&c);
    MPI_Comm_free(&d);
}

static void test_assert_host_mixed(void **state)
{
    MPI_Comm a = dup_asserting(MPI_COMM_WORLD, "system"), m = dup_asserting(MPI_COMM_WORLD, "system,cuda:device");
    (void)state;
    traffic(a, 60);
    if (!cuda_works()) traffic(m, 70); /* with a device: the query says host too (test_cuda_uva) */
    MPI_Comm_free(&a);
    MPI_Comm_free(&m);
}

/* Untagged calls on d fail (MPI_ERR_OTHER: no CUDA backend), never read
 * host memory as if it were device memory; an empty message needs no
 * backend. */
static void device_forced(MPI_Comm d)
{
    int cls = -1, x[8] = {0}, err, pos = 0;
    char packed[64];
    MPI_Request r;
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    err = rank == 0 ? MPI_Send(x, 8, MPI_INT, peer, 1, d) : MPI_Recv(x, 8, MPI_INT, peer, 1, d, MPI_STATUS_IGNORE);
    assert_int_not_equal(err, MPI_SUCCESS);
    MPI_Error_class(err, &cls);
    assert_int_equal(cls, MPI_ERR_OTHER);
    MPI_Error_class(MPI_Irecv(x, 8, MPI_INT, peer, 2, d, &r), &cls);
    assert_int_equal(cls, MPI_ERR_OTHER);
    MPI_Error_class(MPI_Pack(x, 8, MPI_INT, packed, sizeof packed, &pos, d), &cls);
    assert_int_equal(cls, MPI_ERR_OTHER);
    if (rank == 0) assert_int_equal(MPI_Send(NULL, 0, MPI_INT, peer, 3, d), MPI_SUCCESS);
    else assert_int_equal(MPI_Recv(NULL, 0, MPI_INT, peer, 3, d, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

/* Device kinds only ("cuda:device", "cuda:managed", both, spaces allowed)
 * and no CUDA device: untagged calls fail; MPI_COMM_WORLD and a datatype
 * tagged host keep working; MPI_Comm_dup keeps the assertion,
 * MPI_Comm_split_type takes its info's; MPI_Comm_set_info with "system"
 * undoes it. */
static void test_assert_device(void **state)
{
    const char *lists[] = {"cuda:device", "cuda:managed", "cuda:device, cuda:managed"};
    (void)state;
    if (cuda_works()) skip(); /* device memory is test_cuda_uva's */
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        MPI_Comm d = dup_asserting(MPI_COMM_WORLD, lists[i]), e, s;
        MPI_Datatype h;
        MPI_Info info;
        device_forced(d);
        one_way(sbuf_static, rbuf_static, MPI_INT, N, N, 0, MPI_COMM_WORLD, 80); /* world untouched */
        MPI_Type_contiguous(N, MPI_INT, &h);
        MPI_Type_commit(&h);
        assert_int_equal(MPI_Type_set_attr(h, MPIACC_BUF_TYPE, MPIACC_BUF_HOST), MPI_SUCCESS);
        one_way(sbuf_static, rbuf_static, h, 1, N, 0, d, 81); /* tagged first */
        MPI_Type_free(&h);
        assert_int_equal(MPI_Comm_dup(d, &e), MPI_SUCCESS); /* kept by dup */
        device_forced(e);
        MPI_Comm_free(&e);
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", lists[i]);
        assert_int_equal(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, info, &s), MPI_SUCCESS);
        if (s != MPI_COMM_NULL) {
            int n;
            MPI_Comm_size(s, &n);
            if (n == 2) device_forced(s);
            MPI_Comm_free(&s);
        }
        MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "system");
        assert_int_equal(MPI_Comm_set_info(d, info), MPI_SUCCESS); /* undone */
        MPI_Info_free(&info);
        traffic(d, 90);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm_free(&d);
    }
}

/* Lists that make no untagged buffer device memory without a device. */
static void test_assert_host_lists(void **state)
{
    const char *lists[] = {"mpi,system", "", "cuda:device,opencl", "cuda:host"};
    (void)state;
    if (cuda_works()) skip();
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        MPI_Comm c = dup_asserting(MPI_COMM_WORLD, lists[i]);
        one_way(sbuf_static, rbuf_static, MPI_INT, N, N, 0, c, 100 + (int)i);
        MPI_Comm_free(&c);
    }
}

static void test_pcache(void **state)
{
    static mpiacc_util_pcache_t c;
    char *p = (char *)(uintptr_t)0x7f0000001000u;
    /* a granule with the same slot: index mixes bits 0-11, 12-23, 24-35 of
     * the granule number; adding SLOTS << 12 granules flips only bit 24+... */
    char *q = p + ((uintptr_t)MPIACC_UTIL_PCACHE_SLOTS << MPIACC_UTIL_PCACHE_SHIFT) * 4097;
    (void)state;
    mpiacc_util_pcache_clear(&c);
    assert_false(mpiacc_util_pcache_has(&c, p));
    mpiacc_util_pcache_put(&c, p + 5);
    assert_true(mpiacc_util_pcache_has(&c, p));
    assert_true(mpiacc_util_pcache_has(&c, p + 4095));
    assert_false(mpiacc_util_pcache_has(&c, p + 4096));
    assert_false(mpiacc_util_pcache_has(&c, p - 1));
    if (mpiacc_util_pcache_index((uintptr_t)q >> 12) == mpiacc_util_pcache_index((uintptr_t)p >> 12)) {
        mpiacc_util_pcache_put(&c, q);
        assert_true(mpiacc_util_pcache_has(&c, q));
        assert_false(mpiacc_util_pcache_has(&c, p)); /* replaced */
        mpiacc_util_pcache_put(&c, p);
    }
    mpiacc_util_pcache_put(&c, p + 3 * 4096);
    mpiacc_util_pcache_forget(&c, p + 100, 2 * 4096); /* granules 0..2 */
    assert_false(mpiacc_util_pcache_has(&c, p));
    assert_true(mpiacc_util_pcache_has(&c, p + 3 * 4096));
    mpiacc_util_pcache_clear(&c);
    assert_false(mpiacc_util_pcache_has(&c, p + 3 * 4096));
}

int main(int argc, char **argv)
{
    int size;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_support), cmocka_unit_test(test_world_kinds),
        cmocka_unit_test(test_host_memory), cmocka_unit_test(test_tagged_first), cmocka_unit_test(test_assert_info),
        cmocka_unit_test(test_assert_host_mixed), cmocka_unit_test(test_assert_device),
        cmocka_unit_test(test_assert_host_lists), cmocka_unit_test(test_pcache),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) mpiacc_test_skip_all("test_memkind needs 2 ranks");
    peer = 1 - rank;
    return mpiacc_test_end(MPIACC_TEST_RUN(mpiacc_dispatch_uva ? "memkind (MPIACC_UVA=1)" : "memkind", tests, NULL, NULL));
}
