/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_testhooks.c: see coll_testhooks.h (libmpiacc_internal.a only). */
#include "coll_testhooks.h"

void mpiacc_coll_test_tables(int kind, const struct mpiacc_backend_coll *coll, const struct mpiacc_backend_ipc *ipc)
{
    if (kind <= MPIACC_KIND_NONE || kind >= MPIACC_KIND_MAX) return;
    mpiacc_coll_test_coll[kind] = coll;
    mpiacc_coll_test_ipc[kind] = ipc;
}
