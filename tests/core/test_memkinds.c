/*
 * MPI 4.1 memory allocation kinds (2 ranks, CPU): MPI_COMM_WORLD's info
 * lists the kinds mpiacc supports here (CUDA kinds only with a running
 * CUDA backend); mpi_assert_memory_alloc_kinds naming CUDA kinds only makes
 * the untagged buffers of that communicator CUDA memory (here, without a
 * CUDA backend, the calls fail with MPI_ERR_OTHER instead of giving the
 * buffer to MPI as host memory), is kept by MPI_Comm_dup, and is undone by
 * MPI_Comm_set_info with host kinds; other lists change nothing, tagged
 * datatypes keep their attributes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "core/core.h"
#include "attrs/attrs.h"

static int rank;

static int has_kind(const char *list, const char *kind)
{
    char copy[512], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, kind)) return 1;
    return 0;
}

static void world_lists_kinds(void **state)
{
    MPI_Info info;
    char v[512];
    int len = sizeof v, flag = 0, cuda = mpiacc_backend_get(MPIACC_KIND_CUDA) != NULL;
    assert_int_equal(MPI_Comm_get_info(MPI_COMM_WORLD, &info), MPI_SUCCESS);
    assert_int_equal(MPI_Info_get_string(info, "mpi_memory_alloc_kinds", &len, v, &flag), MPI_SUCCESS);
    assert_true(flag);
    assert_true(has_kind(v, "system"));
    assert_true(has_kind(v, "mpi"));
    assert_int_equal(has_kind(v, "cuda:device"), cuda);
    assert_int_equal(has_kind(v, "cuda:managed"), cuda);
    MPI_Info_free(&info);
}

static MPI_Comm asserting(MPI_Comm parent, const char *kinds)
{
    MPI_Info info;
    MPI_Comm c;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", kinds);
    assert_int_equal(MPI_Comm_dup_with_info(parent, info, &c), MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* A host exchange on c works (and moves the data). */
static void host_works(MPI_Comm c, MPI_Datatype t, int tag)
{
    int buf[4] = {rank, 2, 3, 4}, got[4] = {0};
    assert_int_equal(MPI_Sendrecv(buf, 4, t, 1 - rank, tag, got, 4, t, 1 - rank, tag, c, MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
    assert_int_equal(got[0], 1 - rank);
}

/* Untagged calls on c are CUDA calls. */
static void cuda_forced(MPI_Comm c)
{
    int buf[4] = {0}, cls, pos = 0;
    char packed[64];
    MPI_Request r;
    if (mpiacc_backend_get(MPIACC_KIND_CUDA)) {
        print_message("CUDA backend present: the refusal checks need a machine without one\n");
        return;
    }
    MPI_Error_class(MPI_Send(buf, 4, MPI_INT, 1 - rank, 0, c), &cls);
    assert_int_equal(cls, MPI_ERR_OTHER);
    MPI_Error_class(MPI_Irecv(buf, 4, MPI_INT, 1 - rank, 0, c, &r), &cls);
    assert_int_equal(cls, MPI_ERR_OTHER);
    MPI_Error_class(MPI_Pack(buf, 4, MPI_INT, packed, sizeof packed, &pos, c), &cls);
    assert_int_equal(cls, MPI_ERR_OTHER);
    /* an empty message needs no backend */
    if (rank == 0) assert_int_equal(MPI_Send(NULL, 0, MPI_INT, 1, 1, c), MPI_SUCCESS);
    else assert_int_equal(MPI_Recv(NULL, 0, MPI_INT, 0, 1, c, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

static void assert_cuda_kinds(void **state)
{
    const char *lists[] = {"cuda:device", "cuda", "cuda:device, cuda:managed", "cuda:host"};
    int base = atomic_load(&mpiacc_attrs_untagged_classify);
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        MPI_Comm c = asserting(MPI_COMM_WORLD, lists[i]), d;
        MPI_Datatype h;
        assert_int_equal(mpiacc_attrs_untagged_kind(c, NULL), MPIACC_KIND_CUDA);
        cuda_forced(c);
        /* MPI_COMM_WORLD is untouched */
        host_works(MPI_COMM_WORLD, MPI_INT, 2);
        /* a datatype tagged host keeps its own attributes */
        MPI_Type_dup(MPI_INT, &h);
        MPI_Type_set_attr(h, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
        host_works(c, h, 3);
        MPI_Type_free(&h);
        /* kept by MPI_Comm_dup */
        assert_int_equal(MPI_Comm_dup(c, &d), MPI_SUCCESS);
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        assert_int_equal(mpiacc_attrs_untagged_kind(d, NULL), MPIACC_KIND_CUDA);
        cuda_forced(d);
        MPI_Comm_free(&d);
        /* undone by MPI_Comm_set_info with a host kind */
        {
            MPI_Info info;
            MPI_Info_create(&info);
            MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "system");
            assert_int_equal(MPI_Comm_set_info(c, info), MPI_SUCCESS);
            MPI_Info_free(&info);
        }
        assert_int_equal(mpiacc_attrs_untagged_kind(c, NULL), MPIACC_KIND_NONE);
        host_works(c, MPI_INT, 4);
        MPI_Comm_free(&c);
        assert_int_equal(atomic_load(&mpiacc_attrs_untagged_classify), base);
    }
}

static void host_lists_change_nothing(void **state)
{
    const char *lists[] = {"system", "mpi,system", "system,cuda:device", "", "cuda:device,opencl"};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        MPI_Comm c = asserting(MPI_COMM_WORLD, lists[i]);
        assert_int_equal(mpiacc_attrs_untagged_kind(c, NULL), MPIACC_KIND_NONE);
        host_works(c, MPI_INT, 5);
        MPI_Comm_free(&c);
    }
    assert_int_equal(atomic_load(&mpiacc_attrs_untagged_classify), 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_lists_kinds),
        cmocka_unit_test(assert_cuda_kinds),
        cmocka_unit_test(host_lists_change_nothing),
    };
    int failed;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    failed = MPIACC_TEST_RUN("memkinds", tests, NULL, NULL);
    MPI_Finalize();
    return failed ? 1 : 0;
}
