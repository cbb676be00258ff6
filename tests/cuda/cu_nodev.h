/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cu_nodev.h: why no CUDA device can be used, in words, for the
 * "SKIPPED: <reason>" line of a CUDA test or benchmark.
 *
 * On a machine without an NVIDIA driver cudaGetDeviceCount answers
 * cudaErrorInsufficientDriver, whose text ("CUDA driver version is
 * insufficient for CUDA runtime version") reads like a version problem; the
 * reason given here starts with "no CUDA device" and says which case it is.
 */
#ifndef CU_NODEV_H_INCLUDED
#define CU_NODEV_H_INCLUDED

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

/* e, n: what cudaGetDeviceCount returned.  Returns buf. */
static inline const char *cu_nodev_why(cudaError_t e, int n, char *buf, size_t len)
{
    int rt = 0;
    if (e == cudaSuccess && n <= 0) {
        snprintf(buf, len, "no CUDA device (the NVIDIA driver lists none)");
    } else if (e == cudaErrorNoDevice) {
        snprintf(buf, len, "no CUDA device (the NVIDIA driver lists none%s)",
                 getenv("CUDA_VISIBLE_DEVICES") ? "; CUDA_VISIBLE_DEVICES is set" : "");
    } else if (e == cudaErrorInsufficientDriver && access("/proc/driver/nvidia/version", F_OK) != 0) {
        snprintf(buf, len, "no CUDA device (no NVIDIA driver on this machine)");
    } else if (e == cudaErrorInsufficientDriver) {
        cudaRuntimeGetVersion(&rt);
        snprintf(buf, len, "no CUDA device usable: the NVIDIA driver is older than the CUDA %d.%d runtime",
                 rt / 1000, rt % 1000 / 10);
    } else {
        snprintf(buf, len, "no CUDA device (cudaGetDeviceCount: %s: %s)", cudaGetErrorName(e), cudaGetErrorString(e));
    }
    return buf;
}

#endif
