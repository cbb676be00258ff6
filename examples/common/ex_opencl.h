/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/common/ex_opencl.h: what the examples' OpenCL backends share
 * (halo3d/h3_opencl.c, stencil2d/stencil_opencl.c): the device a rank
 * uses and its kernels' build.  GPU devices are preferred: the
 * (node-local rank % count)-th; else the first device of the first
 * platform that has one (e.g. PoCL on the CPU), for every rank of the node.
 */
#ifndef EX_OPENCL_H_INCLUDED
#define EX_OPENCL_H_INCLUDED

#include <stdio.h>

#include <CL/cl.h>

#include "ex_common.h"

/* Returns ex_error's 1 from the calling function when an OpenCL call fails. */
#define CL_TRY(call_)                                                                        \
    do {                                                                                     \
        cl_int e_ = (call_);                                                                 \
        if (e_ != CL_SUCCESS) return ex_error("%s failed: OpenCL error %d", #call_, (int)e_); \
    } while (0)

/* The device of node-local rank local_rank: 1 and *dev, *gpu (a GPU) and
 * *ndev (how many ranks of a node may have a device each); 0 without one. */
static inline int ex_cl_pick(int local_rank, cl_device_id *dev, int *gpu, int *ndev)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) return 0;
    for (int want_gpu = 1; want_gpu >= 0; want_gpu--) {
        cl_device_id devs[64];
        cl_uint total = 0;
        for (cl_uint p = 0; p < np && total < 64; p++) {
            cl_uint n = 0;
            cl_device_type ty = want_gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
            if (clGetDeviceIDs(plats[p], ty, 64 - total, devs + total, &n) == CL_SUCCESS) total += n;
        }
        if (total > 0) {
            *dev = want_gpu ? devs[local_rank % total] : devs[0];
            *gpu = want_gpu;
            *ndev = want_gpu ? (int)total : 1;
            return 1;
        }
    }
    return 0;
}

/* The backends' probe: ex_cl_pick, and the device described in desc. */
static inline int ex_cl_probe(int local_rank, char *desc, size_t len, int *ndev)
{
    cl_device_id dev;
    cl_platform_id plat;
    char pname[128] = "?", dname[128] = "?";
    int gpu;
    if (!ex_cl_pick(local_rank, &dev, &gpu, ndev)) return 0;
    clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
    clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    snprintf(desc, len, "OpenCL %s: %s", pname, dname);
    return 1;
}

/* The program of src built for dev with options (*prog); on a failed
 * build, its log in log[0, len).  A failed build is tried twice more with a
 * new program: PoCL, its kernel cache cold, now and then fails one (with an
 * empty log) while other processes compile the same source. */
static inline cl_int ex_cl_build(cl_context ctx, cl_device_id dev, const char *src, const char *options,
                                 cl_program *prog, char *log, size_t len)
{
    cl_int e = CL_SUCCESS;
    for (int t = 0; t < 3; t++) {
        log[0] = 0;
        if (t) clReleaseProgram(*prog);
        *prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
        if (e != CL_SUCCESS) return e;
        e = clBuildProgram(*prog, 1, &dev, options, NULL, NULL);
        if (e == CL_SUCCESS) break;
        clGetProgramBuildInfo(*prog, dev, CL_PROGRAM_BUILD_LOG, len - 1, log, NULL);
    }
    return e;
}

/* The device of node-local rank local_rank (ex_cl_pick: *dev, *gpu), its
 * context, two in-order queues -- the main one (q) and a second one (ql):
 * OpenCL 1.2 has no queue priorities, they are ordered by events only --
 * and three buffers of `bytes`, the third a copy of init: 0, or
 * ex_error's 1. */
static inline int ex_cl_setup(int local_rank, cl_device_id *dev, int *gpu, cl_context *ctx, cl_command_queue *q,
                              cl_command_queue *ql, cl_mem m[3], size_t bytes, const void *init)
{
    cl_int e;
    int ndev;
    if (!ex_cl_pick(local_rank, dev, gpu, &ndev)) return ex_error("no OpenCL device");
    *ctx = clCreateContext(NULL, 1, dev, NULL, NULL, &e);
    CL_TRY(e);
    *q = clCreateCommandQueue(*ctx, *dev, 0, &e);
    CL_TRY(e);
    *ql = clCreateCommandQueue(*ctx, *dev, 0, &e);
    CL_TRY(e);
    for (int b = 0; b < 3; b++) {
        m[b] = clCreateBuffer(*ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
        CL_TRY(e);
    }
    CL_TRY(clEnqueueWriteBuffer(*q, m[2], CL_TRUE, 0, bytes, init, 0, NULL, NULL));
    return 0;
}

/* Both buffers m[0], m[1] = the copy of init (m[2]), both queues idle. */
static inline int ex_cl_reset(cl_command_queue q, cl_command_queue ql, cl_mem m[3], size_t bytes)
{
    CL_TRY(clFinish(ql));
    for (int b = 0; b < 2; b++) CL_TRY(clEnqueueCopyBuffer(q, m[2], m[b], 0, 0, bytes, 0, NULL, NULL));
    CL_TRY(clFinish(q));
    return 0;
}

/* Keeps ev in *slot (releasing what was there). */
static inline void ex_cl_keep(cl_event *slot, cl_event ev)
{
    if (*slot) clReleaseEvent(*slot);
    *slot = ev;
}

#endif
