/* core/backend.c: the backend registry (CPU always, CUDA/OpenCL if built
 * and a device exists).  The entry layer passes the candidate tables. */
#include <stddef.h>

#include "core.h"

static const mpiacc_backend_t *tables[MPIACC_KIND_MAX];
static const char *why_absent[MPIACC_KIND_MAX];

const char *mpiacc_kind_name(int kind)
{
    switch (kind) {
    case MPIACC_KIND_HOST: return "host";
    case MPIACC_KIND_CUDA: return "CUDA";
    case MPIACC_KIND_OPENCL: return "OpenCL";
    default: return "unknown";
    }
}

int mpiacc_backends_init(const mpiacc_backend_t *const cand[MPIACC_KIND_MAX])
{
    int mpi_errno = MPI_SUCCESS;
    for (int k = MPIACC_KIND_HOST; k < MPIACC_KIND_MAX; k++) {
        int present = 0;
        tables[k] = NULL;
        if (!cand[k]) {
            why_absent[k] = "the backend was not compiled into this build of mpiacc";
            continue;
        }
        mpi_errno = cand[k]->init(&present);
        if (mpi_errno != MPI_SUCCESS) {
            /* A backend failing to start must not break host MPI. */
            MPIACC_LOG(MPIACC_LOG_WARN, "%s backend failed to initialise; disabled", cand[k]->name);
            why_absent[k] = "the backend failed to initialise (MPIACC_LOG=debug tells why)";
            mpi_errno = MPI_SUCCESS;
            continue;
        }
        if (!present) {
            cand[k]->finalize();
            why_absent[k] = "no device of this kind was found";
            continue;
        }
        tables[k] = cand[k];
        MPIACC_LOG(MPIACC_LOG_INFO, "%s backend ready", cand[k]->name);
    }
    return mpi_errno;
}

void mpiacc_backends_finalize(void)
{
    for (int k = MPIACC_KIND_MAX - 1; k >= MPIACC_KIND_HOST; k--) {
        if (tables[k]) {
            MPIACC_LOG(MPIACC_LOG_DEBUG, "finalize: %s backend", tables[k]->name);
            tables[k]->finalize();
        }
        tables[k] = NULL;
    }
}

const mpiacc_backend_t *mpiacc_backend_get(int kind)
{
    if (kind <= MPIACC_KIND_NONE || kind >= MPIACC_KIND_MAX) return NULL;
    return tables[kind];
}

const char *mpiacc_backend_why_absent(int kind)
{
    if (kind <= MPIACC_KIND_NONE || kind >= MPIACC_KIND_MAX) return "unknown buffer type";
    if (!mpiacc_core_initialized) return "MPI is not initialised";
    return tables[kind] ? "present" : why_absent[kind];
}
