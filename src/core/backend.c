/* SPDX-License-Identifier: BSD-3-Clause */
/* core/backend.c: the backend registry (CPU always, CUDA/OpenCL if built
 * and a device exists).  The entry layer hands over the candidate tables at
 * MPI_Init; a backend starts only when first asked for (the first operation
 * on a buffer of its kind, mpiacc-info) or, with MPIACC_EAGER_INIT=1, all of
 * them at MPI_Init.  So a program that never tags a datatype never loads a
 * device runtime.
 *
 * Starting is thread-safe: per kind an atomic "tried" flag, read with
 * acquire ordering on every lookup, and one mutex around the start itself
 * (the table is written before the flag is released). */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "core.h"

static const mpiacc_backend_t *cands[MPIACC_KIND_MAX];
const mpiacc_backend_t *mpiacc_backend_test_tables[MPIACC_KIND_MAX];
static const mpiacc_backend_t *tables[MPIACC_KIND_MAX];
static const char *why_absent[MPIACC_KIND_MAX];
static void (*on_start)(const mpiacc_backend_t *be);
static atomic_int tried[MPIACC_KIND_MAX]; /* 1: start attempted (tables/why_absent final) */
static atomic_int set_up;                 /* between setup and finalize */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

const char *mpiacc_kind_name(int kind)
{
    switch (kind) {
    case MPIACC_KIND_HOST: return "host";
    case MPIACC_KIND_CUDA: return "CUDA";
    case MPIACC_KIND_OPENCL: return "OpenCL";
    default: return "unknown";
    }
}

int mpiacc_backends_setup(const mpiacc_backend_t *const cand[MPIACC_KIND_MAX],
                          void (*started)(const mpiacc_backend_t *be))
{
    pthread_mutex_lock(&start_lock);
    for (int k = 0; k < MPIACC_KIND_MAX; k++) {
        cands[k] = mpiacc_backend_test_tables[k] ? mpiacc_backend_test_tables[k] : cand[k];
        tables[k] = NULL;
        why_absent[k] = NULL;
        atomic_store(&tried[k], 0);
    }
    on_start = started;
    atomic_store(&set_up, 1);
    pthread_mutex_unlock(&start_lock);
    return MPI_SUCCESS;
}

/* Starts the candidate of kind k; start_lock held. */
static void start_kind(int k)
{
    int present = 0;
    const mpiacc_backend_t *c = cands[k];
    if (!c) {
        why_absent[k] = "the backend was not compiled into this build of mpiacc";
        return;
    }
    if (c->init(&present) != MPI_SUCCESS) {
        /* A backend failing to start must not break host MPI. */
        MPIACC_LOG(MPIACC_LOG_WARN, "%s backend failed to initialise; disabled", c->name);
        why_absent[k] = "the backend failed to initialise (MPIACC_LOG=debug tells why)";
        return;
    }
    if (!present) {
        c->finalize();
        why_absent[k] = "no device of this kind was found";
        MPIACC_LOG(MPIACC_LOG_INFO, "%s backend: no device", c->name);
        return;
    }
    tables[k] = c;
    if (on_start) on_start(c);
    MPIACC_LOG(MPIACC_LOG_INFO, "%s backend ready", c->name);
}

/* Makes sure kind k was started (once). */
static void ensure(int k)
{
    if (atomic_load_explicit(&tried[k], memory_order_acquire)) return;
    pthread_mutex_lock(&start_lock);
    if (atomic_load(&set_up) && !atomic_load(&tried[k])) {
        start_kind(k);
        atomic_store_explicit(&tried[k], 1, memory_order_release);
    }
    pthread_mutex_unlock(&start_lock);
}

void mpiacc_backends_start_all(void)
{
    for (int k = MPIACC_KIND_HOST; k < MPIACC_KIND_MAX; k++) ensure(k);
}

unsigned mpiacc_backends_started(void)
{
    unsigned mask = 0;
    for (int k = MPIACC_KIND_HOST; k < MPIACC_KIND_MAX; k++)
        if (atomic_load_explicit(&tried[k], memory_order_acquire)) mask |= 1u << k;
    return mask;
}

void mpiacc_backends_finalize(unsigned busy_kinds)
{
    pthread_mutex_lock(&start_lock);
    atomic_store(&set_up, 0);
    for (int k = MPIACC_KIND_MAX - 1; k >= MPIACC_KIND_HOST; k--) {
        if (tables[k] && (busy_kinds & (1u << k))) {
            MPIACC_LOG(MPIACC_LOG_WARN, "finalize: %s backend left running (device work was abandoned)",
                       tables[k]->name);
        } else if (tables[k]) {
            MPIACC_LOG(MPIACC_LOG_DEBUG, "finalize: %s backend", tables[k]->name);
            tables[k]->finalize();
        }
        tables[k] = NULL;
        atomic_store(&tried[k], 0);
    }
    pthread_mutex_unlock(&start_lock);
}

const mpiacc_backend_t *mpiacc_backend_get(int kind)
{
    if (kind <= MPIACC_KIND_NONE || kind >= MPIACC_KIND_MAX) return NULL;
    ensure(kind);
    return mpiacc_backend_peek(kind);
}

const mpiacc_backend_t *mpiacc_backend_peek(int kind)
{
    if (kind <= MPIACC_KIND_NONE || kind >= MPIACC_KIND_MAX) return NULL;
    if (!atomic_load_explicit(&tried[kind], memory_order_acquire)) return NULL;
    return tables[kind];
}

const char *mpiacc_backend_why_absent(int kind)
{
    if (kind <= MPIACC_KIND_NONE || kind >= MPIACC_KIND_MAX) return "unknown buffer type";
    if (!atomic_load(&set_up)) return "MPI is not initialised";
    ensure(kind);
    return tables[kind] ? "present" : why_absent[kind];
}
