/* SPDX-License-Identifier: BSD-3-Clause */
/* core/core_testhooks.h: knobs for tests (core_testhooks.c, built into
 * libmpiacc_internal.a only). */
#ifndef MPIACC_CORE_TESTHOOKS_H_INCLUDED
#define MPIACC_CORE_TESTHOOKS_H_INCLUDED

#include "core.h"
#include "trace.h"

/* Before MPI_Init: `table` serves buffers of `kind` instead of the
 * backend mpiacc would use (NULL: that backend again), e.g. a host backend
 * with device staging for the device protocol's CPU stand-in
 * (tests/reqpool/test_device_proto.c).  The table must outlive MPI_Finalize. */
void mpiacc_backend_test_replace(int kind, const mpiacc_backend_t *table);

/* core/trace.h's records: start (capacity records, tracing on; 0: off and
 * freed; returns 0 when out of memory) and take the records made so far
 * (up to max into out; *dropped: those that did not fit), emptying the
 * store. */
int mpiacc_core_trace_start(long capacity);
long mpiacc_core_trace_take(mpiacc_core_trace_rec_t *out, long max, long *dropped);

#endif
