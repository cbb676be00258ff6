/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * traverse.h compiled as OpenCL C 1.2 (the platform chosen by
 * MPIACC_TEST_OPENCL_PLATFORM, see tests/opencl/ocl_select.h) and run:
 * a kernel computing mpiacc_tv_offset for every packed byte must agree with
 * the host compilation of the same header.  Skipped when no OpenCL device
 * exists.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>

#include "ocl_select.h"
#include "testutil.h"
#include "pack/pack.h"

static cl_context ctx;
static cl_command_queue q;
static cl_kernel kern;
static cl_device_id dev;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *s;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    s[n] = 0;
    fclose(f);
    return s;
}

static const char *kernel_src =
    "__kernel void offsets(__global const long *blob, long first, __global long *out)\n"
    "{\n"
    "    long i = (long)get_global_id(0);\n"
    "    out[i] = mpiacc_tv_offset(blob, first + i);\n"
    "}\n";

static int setup(void **state)
{
    cl_platform_id plat;
    cl_int err;
    char *hdr, *src, why[256];
    cl_program prog;
    if (!ocl_select_device(&plat, &dev, why, sizeof why, NULL, 0)) mpiacc_test_skip_all("%s", why);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    q = clCreateCommandQueue(ctx, dev, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    hdr = slurp(MPIACC_TRAVERSE_H_PATH);
    assert_non_null(hdr);
    src = malloc(strlen(hdr) + strlen(kernel_src) + 1);
    strcpy(src, hdr); /* the header verbatim, then the kernel */
    strcat(src, kernel_src);
    prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    err = clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2 -Werror", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[16384];
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "OpenCL build log:\n%s\n", log);
    }
    assert_int_equal(err, CL_SUCCESS);
    kern = clCreateKernel(prog, "offsets", &err);
    assert_int_equal(err, CL_SUCCESS);
    clReleaseProgram(prog);
    free(hdr);
    free(src);
    return 0;
}

static int teardown(void **state)
{
    clReleaseKernel(kern);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

static void compare(MPI_Datatype ty, long count)
{
    mpiacc_pack_type_t *t;
    cl_int err;
    long total, first = 0;
    MPI_Type_commit(&ty);
    assert_int_equal(mpiacc_pack_type_get(ty, &t), MPI_SUCCESS);
    total = (long)(count * t->size);
    long *out = malloc(sizeof(long) * (size_t)total);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, t->blob_bytes, t->blob, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem o = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof(long) * (size_t)total, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    size_t gsz = (size_t)total;
    clSetKernelArg(kern, 0, sizeof b, &b);
    clSetKernelArg(kern, 1, sizeof first, &first);
    clSetKernelArg(kern, 2, sizeof o, &o);
    assert_int_equal(clEnqueueNDRangeKernel(q, kern, 1, NULL, &gsz, NULL, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(q, o, CL_TRUE, 0, sizeof(long) * gsz, out, 0, NULL, NULL), CL_SUCCESS);
    for (long p = 0; p < total; p++) assert_int_equal(out[p], mpiacc_tv_offset(t->blob, p));
    clReleaseMemObject(b);
    clReleaseMemObject(o);
    free(out);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&ty);
}

static void test_opencl_offsets(void **state)
{
    MPI_Datatype v, ty, types[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
    int bl[3] = {1, 2, 1}, ibl[4] = {1, 3, 2, 5}, idi[4] = {0, 4, 11, 20};
    MPI_Aint d[3] = {0, 8, 16};
    int sz[3] = {6, 5, 4}, sub[3] = {2, 3, 2}, st[3] = {1, 1, 2};
    MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &v); /* strided fast path */
    MPI_Type_vector(3, 2, 5, v, &ty);
    MPI_Type_free(&v);
    compare(ty, 2);
    MPI_Type_create_struct(3, bl, d, types, &v); /* struct / leaf merge */
    MPI_Type_create_resized(v, 0, 24, &ty);
    MPI_Type_free(&v);
    compare(ty, 3);
    MPI_Type_indexed(4, ibl, idi, MPI_FLOAT, &ty); /* binary search */
    compare(ty, 2);
    MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_SHORT_INT, &ty); /* struct leaves */
    compare(ty, 2);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_opencl_offsets)};
    MPI_Init(&argc, &argv);
    return mpiacc_test_end(MPIACC_TEST_RUN("traverse_opencl", tests, setup, teardown));
}
