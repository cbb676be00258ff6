/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared set-up for the OpenCL tests: one context on the device chosen by
 * ocl_select.h (MPIACC_TEST_OPENCL_PLATFORM), an in-order and an
 * out-of-order queue, a "fill" kernel that can be gated on a user event,
 * and helpers to drive handles. */
#ifndef MPIACC_OCL_FIXTURE_H_INCLUDED
#define MPIACC_OCL_FIXTURE_H_INCLUDED

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocl_select.h"
#include "ocl_watchdog.h"
#include "testutil.h"
#include "core/core.h"
#include "pack/pack.h"

typedef struct ocl_fx {
    const mpiacc_backend_t *be;
    cl_platform_id plat;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue qin, qooo;
    cl_program prog;
    cl_kernel fill; /* fill(__global int *b, int v): b[i] = v (+ some spinning) */
    cl_kernel copy; /* copy(__global int *src, __global int *dst, spin): spins, then dst[i] = src[i] */
    char name[512];  /* "platform / device" */
} ocl_fx_t;

static ocl_fx_t fx;

static const char *fx_src =
    "__kernel void fill(__global int *b, int v, int spin) {\n"
    "  size_t i = get_global_id(0); int x = v;\n"
    "  for (int k = 0; k < spin; k++) x = (x * 7 + 3) % 1000003;\n"
    "  b[i] = v + (x == -1);\n"
    "}\n"
    "__kernel void copy(__global const int *src, __global int *dst, int spin) {\n"
    "  size_t i = get_global_id(0); int x = (int)i;\n"
    "  for (int k = 0; k < spin; k++) x = (x * 7 + 3) % 1000003;\n"
    "  dst[i] = src[i] + (x == -1);\n"
    "}\n";

/* MPI_Init, then the backend and an OpenCL context (skips without one). */
static void fx_init(int *argc, char ***argv)
{
    cl_int e;
    int provided;
    char why[256];
    int rank = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wd_arm(*argc > 0 ? (*argv)[0] : "test", rank);
    fx.be = mpiacc_backend_get(MPIACC_KIND_OPENCL);
    if (!fx.be) mpiacc_test_skip_all("no OpenCL device: %s", mpiacc_backend_why_absent(MPIACC_KIND_OPENCL));
    if (!ocl_select_device(&fx.plat, &fx.dev, why, sizeof why, fx.name, sizeof fx.name))
        mpiacc_test_skip_all("no OpenCL device: %s", why);
    fx.ctx = clCreateContext(NULL, 1, &fx.dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) mpiacc_test_skip_all("no OpenCL device: clCreateContext %d", e);
    fx.qin = clCreateCommandQueue(fx.ctx, fx.dev, 0, &e);
    fx.qooo = clCreateCommandQueue(fx.ctx, fx.dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    if (e != CL_SUCCESS) fx.qooo = NULL; /* device without out-of-order queues */
    /* three tries: PoCL's cold kernel cache now and then fails a build
     * while other processes compile the same source */
    for (int t = 0;; t++) {
        fx.prog = clCreateProgramWithSource(fx.ctx, 1, &fx_src, NULL, &e);
        if (clBuildProgram(fx.prog, 0, NULL, NULL, NULL, NULL) == CL_SUCCESS) break;
        if (t == 2) {
            fprintf(stderr, "fixture kernel does not build\n");
            exit(1);
        }
        clReleaseProgram(fx.prog);
    }
    fx.fill = clCreateKernel(fx.prog, "fill", &e);
    fx.copy = clCreateKernel(fx.prog, "copy", &e);
}

/* fx_init, then this process's rank and the other one's (two ranks), and
 * errors returned on MPI_COMM_WORLD. */
static void fx_init_pair(int *argc, char ***argv, int *rank, int *peer)
{
    fx_init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    *peer = 1 - *rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* The fixture's OpenCL objects released (MPI left running). */
static void fx_release(void)
{
    clReleaseKernel(fx.fill);
    clReleaseKernel(fx.copy);
    clReleaseProgram(fx.prog);
    if (fx.qooo) clReleaseCommandQueue(fx.qooo);
    clReleaseCommandQueue(fx.qin);
    clReleaseContext(fx.ctx);
}

static void fx_fini(void)
{
    fx_release();
    MPI_Finalize();
}

/* The end of a program: fx_fini, and main's status for `failed` failures
 * (return fx_end(MPIACC_TEST_RUN(...))). */
static int fx_end(int failed)
{
    fx_fini();
    return failed ? 1 : 0;
}

static cl_mem fx_buf(size_t bytes, const void *init)
{
    cl_int e;
    cl_mem m = clCreateBuffer(fx.ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              (void *)init, &e);
    assert_int_equal(e, CL_SUCCESS);
    return m;
}

static void fx_read(cl_mem m, size_t bytes, void *out)
{
    assert_int_equal(clEnqueueReadBuffer(fx.qin, m, CL_TRUE, 0, bytes, out, 0, NULL, NULL), CL_SUCCESS);
}

/* Enqueues kernel k (its arguments set) on q over n items, after `gate`
 * if not NULL. */
static void fx_enqueue(cl_kernel k, cl_command_queue q, size_t n, cl_event gate, cl_event *done)
{
    assert_int_equal(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, gate ? 1 : 0, gate ? &gate : NULL, done),
                     CL_SUCCESS);
    clFlush(q);
}

/* Enqueues fill(b, v) on q over n ints, after `gate` if not NULL. */
static void fx_fill(cl_command_queue q, cl_mem b, size_t n, int v, int spin, cl_event gate, cl_event *done)
{
    clSetKernelArg(fx.fill, 0, sizeof b, &b);
    clSetKernelArg(fx.fill, 1, sizeof v, &v);
    clSetKernelArg(fx.fill, 2, sizeof spin, &spin);
    fx_enqueue(fx.fill, q, n, gate, done);
}

/* Enqueues copy(src -> dst) on q over n ints, after `gate` if not NULL. */
static void fx_copy(cl_command_queue q, cl_mem src, cl_mem dst, size_t n, int spin, cl_event gate, cl_event *done)
{
    clSetKernelArg(fx.copy, 0, sizeof src, &src);
    clSetKernelArg(fx.copy, 1, sizeof dst, &dst);
    clSetKernelArg(fx.copy, 2, sizeof spin, &spin);
    fx_enqueue(fx.copy, q, n, gate, done);
}

static double fx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Polls h until done (fails after 20 s); releases it. */
static void fx_wait(void *h)
{
    int done = 0;
    double t0 = fx_now();
    while (!done) {
        assert_int_equal(fx.be->test(h, &done), MPI_SUCCESS);
        if (fx_now() - t0 > 20) fail_msg("handle not complete after 20 s");
    }
    fx.be->release(h);
}

/* Polls h for `secs` and asserts it stays pending. */
static void fx_stays_pending(void *h, double secs)
{
    int done = 0;
    double t0 = fx_now();
    assert_non_null(h);
    while (fx_now() - t0 < secs) {
        assert_int_equal(fx.be->test(h, &done), MPI_SUCCESS);
        assert_false(done);
    }
}

/* MPI_Test on r for `secs` seconds, failing if it completes (its data or
 * dependency is held back: why). */
static void fx_req_stays_pending(MPI_Request *r, double secs, const char *why)
{
    double t0 = fx_now();
    int flag = 0, rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    while (fx_now() - t0 < secs) {
        assert_int_equal(MPI_Test(r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        if (flag) fail_msg("rank %d: the operation completed while %s", rank, why);
    }
}

/* MPI_Wait, failing after 20 s instead of hanging. */
static void fx_req_wait(MPI_Request *r, MPI_Status *st)
{
    double t0 = fx_now();
    int flag = 0, rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    while (!flag) {
        assert_int_equal(MPI_Test(r, &flag, st), MPI_SUCCESS);
        if (!flag && fx_now() - t0 > 20) fail_msg("rank %d: operation not complete after 20 s", rank);
    }
}

/* Under valgrind (its preload library is in LD_PRELOAD), a freed block
 * keeps its bytes, so a released cl_mem still begins with its dispatch
 * pointer and the backend's released-handle check cannot see it (the
 * runtime then works on freed memory): the released-cl_mem cases skip. */
static int fx_under_valgrind(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload") != NULL;
}

/* The attributes of an OpenCL datatype on queue q; q NULL: MPIACC_CL_QUEUE
 * is MPIACC_QUEUE_NONE (the data is complete). */
static mpiacc_attrs_t fx_attrs(cl_command_queue q)
{
    mpiacc_attrs_t a;
    memset(&a, 0, sizeof a);
    a.kind = MPIACC_KIND_OPENCL;
    a.queue = q ? (void *)q : MPIACC_QUEUE_NONE;
    a.has_queue = 1;
    return a;
}

static int fx_class(int code)
{
    int cls = MPI_SUCCESS;
    if (code != MPI_SUCCESS) MPI_Error_class(code, &cls);
    return cls;
}

#endif
