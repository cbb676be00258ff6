/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Backends start lazily: a program doing only host MPI (untagged datatypes,
 * and a datatype tagged MPIACC_BUF_HOST without an event, which goes
 * straight to MPI) never starts any backend; the first pooled host
 * operation starts the host backend and only it.  With --eager (run with
 * MPIACC_EAGER_INIT=1) every backend was started by MPI_Init.  (2 ranks.)
 */
#include <stdatomic.h>
#include <string.h>

#include "testutil.h"
#include "core/core.h"

static int rank, eager;

static void exchange(MPI_Datatype t, int n)
{
    int buf[64];
    for (int i = 0; i < n; i++) buf[i] = rank * 1000 + i;
    if (rank == 0) {
        assert_int_equal(MPI_Send(buf, 1, t, 1, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    } else {
        assert_int_equal(MPI_Recv(buf, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int i = 0; i < n; i++) assert_int_equal(buf[i], i);
    }
}

static void host_only_starts_nothing(void **state)
{
    MPI_Datatype t;
    unsigned all = 0;
    for (int k = MPIACC_KIND_HOST; k < MPIACC_KIND_MAX; k++) all |= 1u << k;
    if (eager) {
        assert_int_equal(mpiacc_backends_started(), all);
        return;
    }
    assert_int_equal(mpiacc_backends_started(), 0);
    MPI_Type_contiguous(64, MPI_INT, &t);
    MPI_Type_commit(&t);
    exchange(t, 64);
    assert_int_equal(mpiacc_backends_started(), 0);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    exchange(t, 64);
    MPI_Barrier(MPI_COMM_WORLD);
    assert_int_equal(mpiacc_backends_started(), 0);
    MPI_Type_free(&t);
}

static void pooled_host_op_starts_host_backend(void **state)
{
    MPI_Datatype t;
    atomic_int gate = 1;
    MPI_Type_contiguous(64, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&gate);
    exchange(t, 64);
    if (!eager) assert_int_equal(mpiacc_backends_started(), 1u << MPIACC_KIND_HOST);
    assert_non_null(mpiacc_backend_peek(MPIACC_KIND_HOST));
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_only_starts_nothing), cmocka_unit_test(pooled_host_op_starts_host_backend),
    };
    eager = argc > 1 && !strcmp(argv[1], "--eager");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return mpiacc_test_end(MPIACC_TEST_RUN("lazy_init", tests, NULL, NULL));
}
