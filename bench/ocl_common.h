/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by the OpenCL benchmarks (not part of the library):
 * device set-up and a busy kernel that also writes its output (statistics,
 * timing, header and CSV: bench/common/bench.h). */
#ifndef MPIACC_BENCH_OCL_COMMON_H_INCLUDED
#define MPIACC_BENCH_OCL_COMMON_H_INCLUDED

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "mpiacc.h"
#include "ocl_select.h" /* tests/opencl: MPIACC_TEST_OPENCL_PLATFORM */

#define OCL_OK(call_)                                                                     \
    do {                                                                                  \
        cl_int e_ = (call_);                                                              \
        if (e_ != CL_SUCCESS) {                                                           \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call_, (int)e_); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                 \
        }                                                                                 \
    } while (0)

typedef struct bocl {
    cl_platform_id plat;
    cl_device_id dev;
    cl_context ctx;
    cl_program prog;
    cl_kernel work; /* work(out, iters, nfloats): spins `iters`, then writes out */
    char name[256];
} bocl_t;

/* A kernel whose duration grows with iters (one small work-group, so two of
 * them can run at once) and that writes its whole output buffer. */
static const char *bocl_src =
    "__kernel void work(__global float *out, int iters, int n) {\n"
    "  size_t i = get_global_id(0); float x = (float)i;\n"
    "  for (int k = 0; k < iters; k++) x = x * 0.9999f + 0.5f;\n"
    "  for (size_t j = i; j < (size_t)n; j += get_global_size(0)) out[j] = x + (float)j;\n"
    "}\n";

/* Returns 0 when no OpenCL device exists (on the platform chosen by
 * MPIACC_TEST_OPENCL_PLATFORM, see tests/opencl/ocl_select.h). */
static int bocl_init(bocl_t *b)
{
    cl_int e;
    char why[256];
    if (!ocl_select_device(&b->plat, &b->dev, why, sizeof why, NULL, 0)) {
        fprintf(stderr, "%s\n", why);
        return 0;
    }
    clGetDeviceInfo(b->dev, CL_DEVICE_NAME, sizeof b->name, b->name, NULL);
    b->ctx = clCreateContext(NULL, 1, &b->dev, NULL, NULL, &e);
    OCL_OK(e);
    b->prog = clCreateProgramWithSource(b->ctx, 1, &bocl_src, NULL, &e);
    OCL_OK(e);
    OCL_OK(clBuildProgram(b->prog, 0, NULL, NULL, NULL, NULL));
    b->work = clCreateKernel(b->prog, "work", &e);
    OCL_OK(e);
    return 1;
}

static void bocl_fini(bocl_t *b)
{
    clReleaseKernel(b->work);
    clReleaseProgram(b->prog);
    clReleaseContext(b->ctx);
}

static cl_command_queue bocl_queue(bocl_t *b, int out_of_order)
{
    cl_int e;
    cl_command_queue q =
        clCreateCommandQueue(b->ctx, b->dev, out_of_order ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, &e);
    OCL_OK(e);
    return q;
}

static cl_mem bocl_buf(bocl_t *b, size_t bytes)
{
    cl_int e;
    cl_mem m = clCreateBuffer(b->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &e);
    OCL_OK(e);
    return m;
}

/* Enqueues work(out, iters) on q (64 work-items) and flushes. */
static void bocl_work(bocl_t *b, cl_command_queue q, cl_mem out, size_t bytes, int iters, cl_event *ev)
{
    size_t g = 64, l = 64;
    int n = (int)(bytes / sizeof(float));
    OCL_OK(clSetKernelArg(b->work, 0, sizeof out, &out));
    OCL_OK(clSetKernelArg(b->work, 1, sizeof iters, &iters));
    OCL_OK(clSetKernelArg(b->work, 2, sizeof n, &n));
    OCL_OK(clEnqueueNDRangeKernel(q, b->work, 1, NULL, &g, &l, 0, NULL, ev));
    OCL_OK(clFlush(q));
}

/* A committed MPI_BYTE x n datatype tagged as an OpenCL buffer, with the
 * queue attribute q, or MPIACC_QUEUE_NONE when q is NULL (the caller has
 * waited for the data). */
static MPI_Datatype bocl_type(size_t n, cl_command_queue q)
{
    MPI_Datatype t;
    MPI_Type_contiguous((int)n, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    MPI_Type_set_attr(t, MPIACC_CL_QUEUE, q ? (void *)q : MPIACC_QUEUE_NONE);
    return t;
}

#endif
