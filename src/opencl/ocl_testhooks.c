/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ocl_testhooks.c: the knobs of ocl_testhooks.h (tests and benchmarks only;
 * built into libmpiacc_internal.a, not into libmpiacc.so).
 */
#include "ocl_testhooks.h"

int mpiacc_ocl_set_rect_policy(int policy)
{
    int old = mpiacc_ocl_rect_policy;
    mpiacc_ocl_rect_policy = policy;
    return old;
}

const char *mpiacc_ocl_last_method(void) { return mpiacc_ocl_xfer_method; }

void mpiacc_ocl_fail_next_xfers(int n) { atomic_store(&mpiacc_ocl_inject_xfer_failures, n); }

int mpiacc_ocl_set_mem_check(int on)
{
    int old = mpiacc_ocl_mem_check;
    mpiacc_ocl_mem_check = on;
    return old;
}

int mpiacc_ocl_live_handles(void) { return mpiacc_ocl_valid_live_count(); }

void mpiacc_ocl_note_released(void *m) { mpiacc_ocl_valid_note_released((cl_mem)m); }
