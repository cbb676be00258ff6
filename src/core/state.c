/* SPDX-License-Identifier: BSD-3-Clause */
/* core/state.c: the library state the entry layer sets (core.h). */
#include "core.h"

int mpiacc_core_disabled;
int mpiacc_core_initialized;
int mpiacc_core_thread_level = MPI_THREAD_SINGLE;
int mpiacc_core_classify;
int mpiacc_core_wildcard_probe;
