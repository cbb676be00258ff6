/* SPDX-License-Identifier: BSD-3-Clause */
/* Selected by CMake when CUDA is not built: the backend is absent. */
#include "core/core.h"
const mpiacc_backend_t *mpiacc_cuda_backend(void) { return NULL; }
int mpiacc_cuda_compiled(void) { return 0; }
