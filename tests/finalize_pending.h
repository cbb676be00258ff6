/* SPDX-License-Identifier: BSD-3-Clause */
/* What the tests of MPI_Finalize with operations pending share
 * (tests/reqpool/test_finalize_pending.c, tests/opencl/test_ocl_finalize_pending.c):
 * a thread that opens a gate some time after MPI_Finalize was entered (so
 * the gated operation is pending when it starts, whatever the ranks' timing
 * before), MPI_Finalize with its log captured, and a CHECK that records a
 * failure and goes on (the checks run after MPI_Finalize: no cmocka). */
#ifndef MPIACC_FINALIZE_PENDING_H_INCLUDED
#define MPIACC_FINALIZE_PENDING_H_INCLUDED

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "stderr_capture.h"

/* On failure: prints the line (with the caller's `rank`) and sets `bad`. */
#define CHECK(cond_)                                                                      \
    do {                                                                                  \
        if (!(cond_)) {                                                                   \
            fprintf(stderr, "rank %d: check failed line %d: %s\n", rank, __LINE__, #cond_); \
            bad = 1;                                                                      \
        }                                                                                 \
    } while (0)

static atomic_int fp_finalizing;
static long fp_delay_ms;
static void (*fp_open)(void);

static void *fp_gate_thread(void *arg)
{
    struct timespec d = {fp_delay_ms / 1000, fp_delay_ms % 1000 * 1000 * 1000};
    (void)arg;
    while (!atomic_load(&fp_finalizing)) sched_yield();
    nanosleep(&d, NULL);
    fp_open();
    return NULL;
}

/* Starts the thread that calls open() delay_ms after fp_finalize entered
 * MPI_Finalize (join it after). */
static void fp_gate_start(pthread_t *th, long delay_ms, void (*open)(void))
{
    fp_delay_ms = delay_ms;
    fp_open = open;
    pthread_create(th, NULL, fp_gate_thread, NULL);
}

/* MPI_Finalize with stderr captured: its return; *log the captured text. */
static int fp_finalize(char **log)
{
    stderr_capture_t cap;
    int err;
    stderr_capture_begin(&cap);
    atomic_store(&fp_finalizing, 1);
    err = MPI_Finalize();
    *log = stderr_capture_end(&cap);
    return err;
}

#endif
