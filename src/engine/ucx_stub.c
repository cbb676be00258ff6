/* SPDX-License-Identifier: BSD-3-Clause */
/* engine/ucx_stub.c: mpiacc built without UCX's headers (CMake variable
 * MPIACC_UCX_INCLUDE_DIR unset) cannot ask UCX: it cannot tell. */
#include <stdio.h>

#include "engine.h"

int mpiacc_engine_ucx_probe(char *why, size_t len)
{
    snprintf(why, len, "mpiacc was built without UCX's headers (MPIACC_UCX_INCLUDE_DIR), so it cannot ask UCX");
    return MPIACC_ENGINE_UCX_UNKNOWN;
}

void mpiacc_engine_ucx_quiet(void) {}
