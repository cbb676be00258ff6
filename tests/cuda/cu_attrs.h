/* SPDX-License-Identifier: BSD-3-Clause */
/* cu_attrs.h: the attributes of a CUDA datatype as the backend sees them
 * (the CUDA tests that call the backend's table directly). */
#ifndef CU_ATTRS_H_INCLUDED
#define CU_ATTRS_H_INCLUDED

#include <string.h>

#include <cuda_runtime_api.h>

#include "core/core.h"

/* MPIACC_BUF_CUDA with MPIACC_STREAM s. */
static inline mpiacc_attrs_t cu_stream_attrs(cudaStream_t s)
{
    mpiacc_attrs_t a;
    memset(&a, 0, sizeof a);
    a.kind = MPIACC_KIND_CUDA;
    a.stream = s;
    a.has_stream = 1;
    return a;
}

#endif
