/* SPDX-License-Identifier: BSD-3-Clause */
/* Issue 10 error cases (err_cases.h) on host buffers that go through
 * mpiacc's request pool: MPIACC_BUF_HOST datatypes with an MPIACC_EVENT
 * flag (already set), which the CPU backend takes as the dependency.
 * Runs everywhere; 2 ranks; `--item N` picks the group. */
#include <stdatomic.h>

#include "err_cases.h"

static atomic_int ready = 1;

static void *host_alloc(size_t bytes, const int *init)
{
    int *p = malloc(bytes);
    for (size_t i = 0; i < bytes / sizeof(int); i++) p[i] = init ? init[i] : -1;
    return p;
}

static void host_read(void *buf, size_t bytes, void *out) { memcpy(out, buf, bytes); }
static void host_release(void *buf) { free(buf); }

static void host_tag(MPI_Datatype t)
{
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&ready);
}

static const ec_dev_t host_dev = {"host", host_alloc, host_read, host_release, host_tag};

int main(int argc, char **argv)
{
    int failed;
    MPI_Init(&argc, &argv);
    failed = ec_run(argc, argv, &host_dev);
    MPI_Finalize();
    return failed ? 1 : 0;
}
