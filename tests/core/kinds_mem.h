/* SPDX-License-Identifier: BSD-3-Clause */
/* kinds_mem.h: the buffer kinds of test_kinds_corpus -- host, host tagged
 * MPIACC_BUF_HOST, host + MPIACC_EVENT, OpenCL (KC_WITH_OPENCL; the
 * platform of ocl_select.h), CUDA (KC_WITH_CUDA) -- their buffers, copies
 * into and out of them, and the datatype each kind passes for a layout. */
#ifndef KINDS_MEM_H_INCLUDED
#define KINDS_MEM_H_INCLUDED

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiacc.h"
#include "testutil.h"
#include "core/core.h"

#ifdef KC_WITH_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include "ocl_select.h"
#endif
#ifdef KC_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cu_nodev.h"
#endif

enum { K_HOST, K_HOSTTAG, K_EVENT, K_OPENCL, K_CUDA, NKIND };
static const char *kind_name[NKIND] = {"host", "host-tag", "host+event", "OpenCL", "CUDA"};
#define MAXBUF (4 << 20) /* bytes of each buffer */
static int usable[NKIND]; /* on both ranks (else why_not[k]) */
static char why_not[NKIND][256], platform[256] = "-";
static void *dsend[NKIND], *drecv[NKIND]; /* each kind's send and receive buffers (a cl_mem for OpenCL) */

#ifdef KC_WITH_OPENCL
static cl_context cl_ctx;
static cl_command_queue cl_q;
#endif

/* ---- the kinds' memory ------------------------------------------------ */

static void kinds_setup(int rank, int require_cuda)
{
    int all[NKIND];
    usable[K_HOST] = usable[K_HOSTTAG] = usable[K_EVENT] = 1;
    for (int k = K_HOST; k <= K_EVENT; k++) {
        dsend[k] = malloc(MAXBUF);
        drecv[k] = malloc(MAXBUF);
    }
    snprintf(why_not[K_OPENCL], sizeof why_not[0], "built without OpenCL");
    snprintf(why_not[K_CUDA], sizeof why_not[0], "built without CUDA");
#ifdef KC_WITH_OPENCL
    {
        cl_platform_id plat;
        cl_device_id dev;
        cl_int e = CL_SUCCESS;
        if (!mpiacc_backend_get(MPIACC_KIND_OPENCL))
            snprintf(why_not[K_OPENCL], sizeof why_not[0], "%s", mpiacc_backend_why_absent(MPIACC_KIND_OPENCL));
        else if (!ocl_select_device(&plat, &dev, why_not[K_OPENCL], sizeof why_not[0], platform, sizeof platform))
            ;
        else if (!(cl_ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e)) ||
                 !(cl_q = clCreateCommandQueue(cl_ctx, dev, 0, &e)) ||
                 !(dsend[K_OPENCL] = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, MAXBUF, NULL, &e)) ||
                 !(drecv[K_OPENCL] = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, MAXBUF, NULL, &e)))
            snprintf(why_not[K_OPENCL], sizeof why_not[0], "%s: OpenCL set-up failed (error %d)", platform, e);
        else
            usable[K_OPENCL] = 1;
    }
#endif
#ifdef KC_WITH_CUDA
    {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess || n <= 0) cu_nodev_why(e, n, why_not[K_CUDA], sizeof why_not[0]);
        else if (!mpiacc_backend_get(MPIACC_KIND_CUDA))
            snprintf(why_not[K_CUDA], sizeof why_not[0], "%s", mpiacc_backend_why_absent(MPIACC_KIND_CUDA));
        else if ((e = cudaSetDevice(rank % n)) != cudaSuccess || (e = cudaMalloc(&dsend[K_CUDA], MAXBUF)) ||
                 (e = cudaMalloc(&drecv[K_CUDA], MAXBUF)))
            snprintf(why_not[K_CUDA], sizeof why_not[0], "cudaMalloc: %s", cudaGetErrorString(e));
        else
            usable[K_CUDA] = 1;
    }
#endif
    MPI_Allreduce(usable, all, NKIND, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* the pairings both ranks have */
    for (int k = 0; k < NKIND; k++) {
        if (usable[k] && !all[k]) snprintf(why_not[k], sizeof why_not[0], "not usable on the other rank");
        usable[k] = all[k];
    }
    if (require_cuda && !usable[K_CUDA]) mpiacc_test_skip_all("%s", why_not[K_CUDA]);
    if (rank == 0) {
        printf("kinds_corpus: OpenCL platform %s\n", usable[K_OPENCL] ? platform : "none");
        for (int k = 0; k < NKIND; k++)
            if (!usable[k]) printf("kinds_corpus: pairings with %s skipped: %s\n", kind_name[k], why_not[k]);
    }
}

static void kinds_teardown(void)
{
    for (int k = K_HOST; k <= K_EVENT; k++) free(dsend[k]), free(drecv[k]);
#ifdef KC_WITH_OPENCL
    if (usable[K_OPENCL]) {
        clReleaseMemObject(dsend[K_OPENCL]);
        clReleaseMemObject(drecv[K_OPENCL]);
        clReleaseCommandQueue(cl_q);
        clReleaseContext(cl_ctx);
    }
#endif
#ifdef KC_WITH_CUDA
    if (usable[K_CUDA]) cudaFree(dsend[K_CUDA]), cudaFree(drecv[K_CUDA]);
#endif
}

/* host[0, n) into (to 1) or out of (to 0) kind k's buffer d, synchronously */
static void kcopy(int k, void *d, unsigned char *host, long long n, int to)
{
    if (k <= K_EVENT) {
        if (to) memcpy(d, host, (size_t)n);
        else memcpy(host, d, (size_t)n);
    }
#ifdef KC_WITH_OPENCL
    if (k == K_OPENCL) {
        cl_int e = to ? clEnqueueWriteBuffer(cl_q, d, CL_TRUE, 0, (size_t)n, host, 0, NULL, NULL)
                      : clEnqueueReadBuffer(cl_q, d, CL_TRUE, 0, (size_t)n, host, 0, NULL, NULL);
        if (e != CL_SUCCESS) fail_msg("clEnqueue%sBuffer: %d", to ? "Write" : "Read", e);
    }
#endif
#ifdef KC_WITH_CUDA
    if (k == K_CUDA) {
        cudaError_t e = cudaMemcpy(to ? d : host, to ? host : d, (size_t)n, to ? cudaMemcpyHostToDevice
                                                                                : cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) fail_msg("cudaMemcpy: %s", cudaGetErrorString(e));
    }
#endif
}

/* The datatype kind k passes for the layout (t, off) and the pointer it
 * passes (base d): host and CUDA at d + off with t; OpenCL the cl_mem
 * with t shifted by off. */
static MPI_Datatype side_type(int k, MPI_Datatype t, long long off, void *d, void **ptr)
{
    MPI_Datatype r, s;
    *ptr = (char *)d + off;
    if (k == K_HOST) return t;
    if (k == K_EVENT) return mpiacc_test_host_tagged(t, NULL);
    if (k == K_OPENCL) {
        MPI_Aint disp = (MPI_Aint)off;
        MPIACC_TEST_MPI_OK(MPI_Type_create_hindexed(1, (int[]){1}, &disp, t, &s));
        MPIACC_TEST_MPI_OK(MPI_Type_commit(&s));
        *ptr = d;
    } else {
        MPIACC_TEST_MPI_OK(MPI_Type_dup(t, &s));
    }
    MPIACC_TEST_MPI_OK(MPI_Type_dup(s, &r));
    MPI_Type_free(&s);
    MPIACC_TEST_MPI_OK(MPI_Type_set_attr(r, MPIACC_BUF_TYPE, k == K_HOSTTAG  ? MPIACC_BUF_HOST
                                                            : k == K_OPENCL ? MPIACC_BUF_OPENCL
                                                                            : MPIACC_BUF_CUDA));
#ifdef KC_WITH_OPENCL
    if (k == K_OPENCL) MPIACC_TEST_MPI_OK(MPI_Type_set_attr(r, MPIACC_CL_QUEUE, cl_q));
#endif
    return r;
}

#endif
