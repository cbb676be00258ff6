/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/* Issue 10 item 4: error strings are per call.  Several threads raise
 * errors of the same class at the same time (MPI_Pack on a datatype whose
 * MPIACC_BUF_TYPE, put behind mpiacc's back, is an invalid value naming the
 * thread and round), wait until every thread has raised its own, then each
 * reads MPI_Error_string of its code: it must name its own thread and
 * round, never another's. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"

#define NTHREADS 8
#define ROUNDS 200

static pthread_barrier_t bar;
static int wrong[NTHREADS];

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    for (int r = 0; r < ROUNDS; r++) {
        char msg[MPI_MAX_ERROR_STRING], want[64], packed[64];
        int len, cls, code, pos = 0, data[2] = {0, 0};
        intptr_t value = 1000000 + (intptr_t)id * 10000 + r;
        PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, (void *)value);
        code = MPI_Pack(data, 1, t, packed, sizeof packed, &pos, MPI_COMM_SELF);
        pthread_barrier_wait(&bar); /* every thread has raised its error */
        MPI_Error_class(code, &cls);
        MPI_Error_string(code, msg, &len);
        snprintf(want, sizeof want, "%#lx", (unsigned long)value);
        if (cls != MPI_ERR_ARG || !strstr(msg, want)) {
            if (wrong[id]++ < 3)
                fprintf(stderr, "thread %d round %d: class %d, message \"%s\" lacks %s\n", id, r, cls, msg, want);
        }
        pthread_barrier_wait(&bar);
    }
    MPI_Type_free(&t);
    return NULL;
}

static void concurrent_errors_keep_their_strings(void **state)
{
    pthread_t th[NTHREADS];
    int bad = 0;
    MPI_Datatype any;
    /* tag one datatype through MPI so that mpiacc looks datatypes up */
    MPI_Type_contiguous(1, MPI_INT, &any);
    MPI_Type_set_attr(any, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_free(&any);
    pthread_barrier_init(&bar, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    for (int i = 0; i < NTHREADS; i++) bad += wrong[i];
    if (bad) fail_msg("%d error string(s) were another thread's", bad);
}

int main(int argc, char **argv)
{
    int provided;
    const struct CMUnitTest tests[] = {cmocka_unit_test(concurrent_errors_keep_their_strings)};
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) mpiacc_test_skip_all("MPI_THREAD_MULTIPLE not provided");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    return mpiacc_test_end(MPIACC_TEST_RUN("err_threads", tests, NULL, NULL));
}
