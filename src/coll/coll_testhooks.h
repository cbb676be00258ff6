/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_testhooks.h: the collectives layer's knobs for tests (built into
 * libmpiacc_internal.a only, from coll_testhooks.c; the library keeps just
 * the state they set: mpiacc_coll_test_coll / _ipc, comm.c).
 */
#ifndef MPIACC_COLL_TESTHOOKS_H_INCLUDED
#define MPIACC_COLL_TESTHOOKS_H_INCLUDED

#include "coll_internal.h"

/* Stand-in tables for buffers of `kind` (e.g. the CPU backend's
 * MPIACC_BUF_HOST + MPIACC_EVENT): the collective engine and / or the IPC
 * table used instead of the backend's (NULL: the backend's again).  Set
 * them the same on every process, before a communicator's first device
 * collective (its engine is chosen then). */
void mpiacc_coll_test_tables(int kind, const struct mpiacc_backend_coll *coll, const struct mpiacc_backend_ipc *ipc);

#endif
