/* SPDX-License-Identifier: BSD-3-Clause */
/* core/core_testhooks.c: see core_testhooks.h; libmpiacc_internal.a only. */
#include "core_testhooks.h"

void mpiacc_backend_test_replace(int kind, const mpiacc_backend_t *table)
{
    if (kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX) mpiacc_backend_test_tables[kind] = table;
}
