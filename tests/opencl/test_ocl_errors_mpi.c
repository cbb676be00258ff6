/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/* Issue 10 error cases (tests/core/err_cases.h) on cl_mem buffers: the
 * datatypes carry MPIACC_BUF_OPENCL and the fixture's in-order queue.
 * 2 ranks; `--item N` picks the group; skipped without an OpenCL device. */
#include "ocl_fixture.h"
#include "err_cases.h"

static void *cl_alloc(size_t bytes, const int *init)
{
    int *tmp = NULL;
    cl_mem m;
    if (!init) {
        tmp = malloc(bytes);
        for (size_t i = 0; i < bytes / sizeof(int); i++) tmp[i] = -1;
    }
    m = fx_buf(bytes, init ? (const void *)init : tmp);
    free(tmp);
    return m;
}

static void cl_read(void *buf, size_t bytes, void *out) { fx_read((cl_mem)buf, bytes, out); }
static void cl_release(void *buf) { clReleaseMemObject((cl_mem)buf); }

static void cl_tag(MPI_Datatype t)
{
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    MPI_Type_set_attr(t, MPIACC_CL_QUEUE, (void *)fx.qin);
}

static const ec_dev_t cl_dev = {"opencl", cl_alloc, cl_read, cl_release, cl_tag};

int main(int argc, char **argv)
{
    int failed;
    fx_init(&argc, &argv);
    failed = ec_run(argc, argv, &cl_dev);
    fx_fini();
    return failed ? 1 : 0;
}
