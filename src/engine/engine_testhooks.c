/* SPDX-License-Identifier: BSD-3-Clause */
/* engine/engine_testhooks.c: see engine_testhooks.h. */
#include "engine.h"
#include "engine_testhooks.h"

void mpiacc_engine_test_force(unsigned kinds) { mpiacc_engine_test_kinds = kinds; }
