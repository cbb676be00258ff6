/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device protocol's CPU stand-in (test_device_proto, test_batch): before
 * MPI_Init, the engine is told that MPI takes the "device" memory of
 * MPIACC_BUF_HOST datatypes and the host backend is replaced by the CPU
 * backend plus the device protocol's entries (dep_ready: the MPIACC_EVENT
 * flag; device staging: malloc), so that gated host datatypes
 * (pool_util.h) take exactly the paths CUDA buffers take where MPI's
 * transport takes CUDA memory.
 */
#ifndef STANDIN_H
#define STANDIN_H

#include <stdlib.h>

#include "pool_util.h"
#include "core/core_testhooks.h"
#include "engine/engine.h"
#include "engine/engine_testhooks.h"

static mpiacc_backend_t standin;
static atomic_int staging_live, dep_asked;

static int standin_dep_ready(const mpiacc_attrs_t *a, void *buf, int *ready)
{
    (void)buf;
    atomic_fetch_add(&dep_asked, 1);
    *ready = !a->has_event || atomic_load((_Atomic int *)a->event) > 0;
    return MPI_SUCCESS;
}

/* Powers of two, as CUDA's pool gives. */
static int standin_staging_get(const mpiacc_attrs_t *a, size_t bytes, void **p, size_t *cap, void **tok)
{
    (void)a;
    for (*cap = 256; *cap < bytes; *cap *= 2) continue;
    if (!(*p = malloc(*cap))) return mpiacc_err(MPIACC_ERRK_NOMEM, "stand-in staging");
    *tok = *p;
    atomic_fetch_add(&staging_live, 1);
    return MPI_SUCCESS;
}

static void standin_staging_put(void *tok)
{
    free(tok);
    atomic_fetch_sub(&staging_live, 1);
}

/* Fills `standin` and puts it in place of the host backend (before MPI_Init). */
static inline void standin_install(void)
{
    standin = *mpiacc_cpu_backend();
    standin.name = "host (device protocol stand-in)";
    standin.dep_ready = standin_dep_ready;
    standin.dev_staging_get = standin_staging_get;
    standin.dev_staging_put = standin_staging_put;
    mpiacc_backend_test_replace(MPIACC_KIND_HOST, &standin);
    mpiacc_engine_test_force(1u << MPIACC_KIND_HOST);
}

#endif
