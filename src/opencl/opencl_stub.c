/* SPDX-License-Identifier: BSD-3-Clause */
/* Selected by CMake when OpenCL is not built: the backend is absent. */
#include "core/core.h"
const mpiacc_backend_t *mpiacc_opencl_backend(void) { return NULL; }
int mpiacc_opencl_compiled(void) { return 0; }
