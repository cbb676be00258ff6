/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The OpenCL platform and device used by the tests and the benchmarks (one
 * place, so that every program of the suite agrees).
 *
 * MPIACC_TEST_OPENCL_PLATFORM  a case-insensitive substring of the platform's
 *     name or vendor (e.g. "nvidia", "pocl", "portable"); unset or empty: the
 *     first platform that has a device.  The first device of the chosen
 *     platform is used.
 *
 * Header only (static functions), needs the OpenCL headers and nothing from
 * mpiacc; the includer defines CL_TARGET_OPENCL_VERSION.
 */
#ifndef MPIACC_OCL_SELECT_H_INCLUDED
#define MPIACC_OCL_SELECT_H_INCLUDED

#include <CL/cl.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether `needle` occurs in `hay`, ignoring case. */
static int ocl_select_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

/* Fills *plat and *dev and returns 1; returns 0 with the reason in `why`
 * when no platform (matching MPIACC_TEST_OPENCL_PLATFORM) has a device.
 * `name`, when not NULL, receives "platform / device" for messages. */
static int ocl_select_device(cl_platform_id *plat, cl_device_id *dev, char *why, size_t whylen, char *name,
                             size_t namelen)
{
    const char *want = getenv("MPIACC_TEST_OPENCL_PLATFORM");
    cl_platform_id plats[16];
    cl_uint np = 0;

    if (want && !*want) want = NULL;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) {
        snprintf(why, whylen, "no OpenCL platform");
        return 0;
    }
    if (np > 16) np = 16;
    for (cl_uint i = 0; i < np; i++) {
        char pname[256] = "", vendor[256] = "", dname[256] = "";
        cl_uint nd = 0;
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        clGetPlatformInfo(plats[i], CL_PLATFORM_VENDOR, sizeof vendor, vendor, NULL);
        if (want && !ocl_select_contains(pname, want) && !ocl_select_contains(vendor, want)) continue;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, dev, &nd) != CL_SUCCESS || nd == 0) continue;
        *plat = plats[i];
        if (name) {
            clGetDeviceInfo(*dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
            snprintf(name, namelen, "%s / %s", pname, dname);
        }
        return 1;
    }
    if (want)
        snprintf(why, whylen, "no OpenCL platform with a device matches MPIACC_TEST_OPENCL_PLATFORM=\"%s\"", want);
    else
        snprintf(why, whylen, "no OpenCL platform has a device");
    return 0;
}

#endif
