/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ocl_testhooks.h: the OpenCL backend's knobs for tests and benchmarks (it
 * also gives them the internals of ocl.h).  ocl_testhooks.c is built
 * into libmpiacc_internal.a only: libmpiacc.so has none of these functions,
 * and the library never calls them.
 */
#ifndef MPIACC_OCL_TESTHOOKS_H_INCLUDED
#define MPIACC_OCL_TESTHOOKS_H_INCLUDED

#include "ocl.h"

/* Rect policy (as MPIACC_OCL_RECT: 0 auto, 1 never, 2 always when the
 * shape allows); returns the previous one. */
int mpiacc_ocl_set_rect_policy(int policy);

/* The strategy the calling thread's last pack/unpack used: "copy", "rect",
 * "kernel"; "none" before any. */
const char *mpiacc_ocl_last_method(void);

/* Fault injection: the next n transfer handles (pack / unpack) whose
 * commands have completed are reported failed by the backend's test()
 * (MPIACC_ERRK_OPENCL, "injected failure"), e.g. to fail an operation
 * after its request completed in stream order. */
void mpiacc_ocl_fail_next_xfers(int n);

/* The cl_mem check of ocl_valid.c (1: on, the library's only setting; 0:
 * off, to measure what it costs); returns the previous setting. */
int mpiacc_ocl_set_mem_check(int on);

/* How many cl_mem handles the check remembers as live (vouched for by the
 * runtime and not released since). */
int mpiacc_ocl_live_handles(void);

/* Remembers the address m as a released cl_mem with the bytes it holds now
 * (what the destructor callback of a handle the check vouched for does),
 * so that a test can show such a handle is refused without a cl* call. */
void mpiacc_ocl_note_released(void *m);

#endif
