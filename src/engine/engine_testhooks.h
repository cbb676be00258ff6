/* SPDX-License-Identifier: BSD-3-Clause */
/* engine/engine_testhooks.h: knobs for tests (libmpiacc_internal.a only). */
#ifndef MPIACC_ENGINE_TESTHOOKS_H_INCLUDED
#define MPIACC_ENGINE_TESTHOOKS_H_INCLUDED

/* Before MPI_Init: MPI is said to take the device memory of the kinds in
 * `kinds` (bit 1 << MPIACC_KIND_*) whatever the probe finds (0: the probe
 * decides).  tests/reqpool's CPU stand-in sets 1 << MPIACC_KIND_HOST, with
 * a host backend that has device staging (mpiacc_backend_test_replace). */
void mpiacc_engine_test_force(unsigned kinds);

#endif
