/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * test_cuda_nccl_unit: the NCCL engine's parts that need no GPU
 * (src/cuda/cuda_nccl.c):
 *   - every ncclResult_t becomes an MPI error code of the documented class
 *     whose string names the NCCL call and the result;
 *   - the loader: with --absent (NCCL_ROOT naming a directory without
 *     lib/libnccl.so.2) the engine is absent, says why (naming NCCL_ROOT),
 *     logs it once at MPIACC_LOG=info, and mpiacc-info's description says
 *     so; otherwise, where the dynamic linker finds NCCL, it loads and
 *     describes itself with its version and path.
 * What the collectives then do without NCCL (their other paths) is
 * test_coll_dev's (a stand-in engine that is absent) and the GPU tests'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "stderr_capture.h"
#include "cuda_nccl.h"

static int absent;

static void test_errors(void **state)
{
    static const struct {
        int r, cls;
        const char *name;
    } want[] = {
        {ncclUnhandledCudaError, MPI_ERR_OTHER, "ncclUnhandledCudaError"},
        {ncclSystemError, MPI_ERR_OTHER, "ncclSystemError"},
        {ncclInternalError, MPI_ERR_INTERN, "ncclInternalError"},
        {ncclInvalidArgument, MPI_ERR_ARG, "ncclInvalidArgument"},
        {ncclInvalidUsage, MPI_ERR_ARG, "ncclInvalidUsage"},
        {ncclRemoteError, MPI_ERR_OTHER, "ncclRemoteError"},
        {ncclInProgress, MPI_ERR_INTERN, "unexpected"},
        {99, MPI_ERR_INTERN, "unexpected"},
    };
    assert_int_equal(mpiacc_cuda_nccl_err(ncclSuccess, "ncclAllReduce", NULL), MPI_SUCCESS);
    assert_int_equal(mpiacc_cuda_nccl_class(ncclSuccess), MPI_SUCCESS);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0, cls = -1, code = mpiacc_cuda_nccl_err(want[i].r, "ncclAllReduce", NULL);
        assert_int_equal(mpiacc_cuda_nccl_class(want[i].r), want[i].cls);
        MPI_Error_class(code, &cls);
        assert_int_equal(cls, want[i].cls);
        MPI_Error_string(code, s, &len);
        if (!strstr(s, "ncclAllReduce") || !strstr(s, want[i].name))
            fail_msg("result %d: \"%s\" names neither the call nor %s", want[i].r, s, want[i].name);
    }
}

static void test_loader(void **state)
{
    const char *why = NULL;
    char desc[1024] = "", *log;
    int ok, lvl = mpiacc_log_level;
    stderr_capture_t cap;
    mpiacc_log_level = MPIACC_LOG_INFO;
    stderr_capture_begin(&cap);
    ok = mpiacc_cuda_coll.load(&why);
    log = stderr_capture_end(&cap);
    mpiacc_log_level = lvl;
    mpiacc_cuda_coll.describe(desc, sizeof desc);
    printf("loader: %s", desc);
    if (absent) {
        assert_false(ok);
        assert_non_null(why);
        assert_non_null(strstr(why, "NCCL_ROOT="));
        assert_non_null(strstr(log, "NCCL not loaded"));
        assert_non_null(strstr(desc, "NCCL not found"));
    } else if (ok) {
        assert_null(why);
        assert_non_null(strstr(log, "loaded from"));
        assert_non_null(strstr(desc, "NCCL 2."));
        assert_non_null(strstr(desc, "libnccl"));
        /* every type the engine reduces has an NCCL type; MPI_BYTE only moves */
        assert_true(mpiacc_cuda_coll.reduce_supported(MPI_FLOAT, MPI_SUM));
        assert_true(mpiacc_cuda_coll.reduce_supported(MPI_INT64_T, MPI_MAX));
        assert_false(mpiacc_cuda_coll.reduce_supported(MPI_BYTE, MPI_SUM));
        assert_false(mpiacc_cuda_coll.reduce_supported(MPI_SHORT, MPI_SUM));
        assert_false(mpiacc_cuda_coll.reduce_supported(MPI_FLOAT, MPI_BAND));
        assert_int_equal(mpiacc_cuda_nccl_type(MPI_BYTE), ncclUint8);
    } else {
        printf("loader: NCCL not found here (%s): the loaded case is not checked\n", why);
    }
    /* the second call gives the first answer */
    assert_int_equal(mpiacc_cuda_coll.load(&why), ok);
    free(log);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--absent")) absent = 1;
        if (!strcmp(argv[i], "--help")) {
            printf("usage: %s [--absent]\nNCCL's errors as MPI error classes, and the loader (--absent: NCCL_ROOT "
                   "names a directory without NCCL).  No GPU needed.\n",
                   argv[0]);
            return 0;
        }
    }
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_errors), cmocka_unit_test(test_loader)};
    return mpiacc_test_end(MPIACC_TEST_RUN("cuda_nccl_unit", tests, NULL, NULL));
}
