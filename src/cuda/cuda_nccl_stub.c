/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_nccl_stub.c: the CUDA backend's collective engine when nccl.h was
 * not found at build time (CMake selects this file instead of
 * cuda_nccl.c and cuda_nccl_run.c): the engine is absent, and says why.
 */
#include <stdio.h>

#include "cuda_internal.h"
#include "core/backend_coll.h"

static const char why[] = "built without NCCL headers (nccl.h not found at configure time; set NCCL_ROOT)";

static int stub_load(const char **w)
{
    if (w) *w = why;
    return 0;
}

static int stub_describe(char *out, size_t len)
{
    if (out && len) snprintf(out, len, "  NCCL not available: %s\n", why);
    return MPI_SUCCESS;
}

const struct mpiacc_backend_coll mpiacc_cuda_coll = {.name = "NCCL", .load = stub_load, .describe = stub_describe};
