/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the test programs (not part of the library). */
#ifndef MPIACC_TESTUTIL_H_INCLUDED
#define MPIACC_TESTUTIL_H_INCLUDED

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <mpi.h>

/* Exit status that CTest reports as "skipped" (SKIP_RETURN_CODE). */
#define MPIACC_TEST_SKIP 77

/* Prints "SKIPPED: <reason>" (rank 0) and ends the program with status 77
 * on every rank, finalizing MPI if it was initialised. */
void mpiacc_test_skip_all(const char *fmt, ...);

/* A seeded generator for random tests: the seed comes from MPIACC_TEST_SEED
 * (environment) or the clock, is printed by mpiacc_test_seed_report on
 * failure, and is the same on every rank when MPI is initialised. */
uint64_t mpiacc_test_seed(void);
uint64_t mpiacc_test_rand(uint64_t *state);
/* Runs a cmocka group (an array of CMUnitTest) through CMocka's public
 * cmocka_run_group_tests_name; prints the seed if any test failed.
 * Evaluates to the number of failures (summed over ranks when MPI is
 * initialised). */
int mpiacc_test_finish(const char *name, int failed);
#define MPIACC_TEST_RUN(name_, tests_, setup_, teardown_) \
    mpiacc_test_finish((name_), cmocka_run_group_tests_name((name_), tests_, (setup_), (teardown_)))

/* MPI's string of an error code (a per-thread buffer, valid until the
 * thread's next call). */
const char *mpiacc_test_mpi_error(int code);
/* Fails the CMocka test, naming the call and MPI's string, unless call_
 * returns MPI_SUCCESS. */
#define MPIACC_TEST_MPI_OK(call_)                                                                            \
    do {                                                                                                     \
        int m_ = (call_);                                                                                    \
        if (m_ != MPI_SUCCESS) fail_msg("%s:%d: %s: %s", __FILE__, __LINE__, #call_, mpiacc_test_mpi_error(m_)); \
    } while (0)

/* A duplicate of t tagged MPIACC_BUF_HOST with MPIACC_EVENT flag (an int
 * or atomic_int; NULL: a flag that is always set), so that it goes through
 * the request pool's CPU backend. */
MPI_Datatype mpiacc_test_host_tagged(MPI_Datatype t, void *flag);
/* A committed contiguous(n, MPI_INT) tagged as by mpiacc_test_host_tagged. */
MPI_Datatype mpiacc_test_host_ints(int n, void *flag);
/* Sends count x dt from buf to this process (MPI_Isend on MPI_COMM_SELF
 * with tag) and receives it as plain bytes into got (cap bytes, set to 0xee
 * first); fails the CMocka test unless each call succeeds.  Returns the
 * number of bytes received. */
int mpiacc_test_self_bytes(const void *buf, int count, MPI_Datatype dt, int tag, void *got, int cap);
/* Fails the CMocka test unless code is an error of class cls whose string
 * holds needle (when not NULL). */
void mpiacc_test_error(int code, int cls, const char *needle);

/* A program's --help (or -h) among its arguments: prints usage (a printf
 * format whose one %s is the program's name) and returns 1: main then
 * returns 0.  Otherwise 0. */
int mpiacc_test_help(int argc, char **argv, const char *usage);
/* After MPI_Init: this process's rank and the size of MPI_COMM_WORLD (either
 * pointer may be NULL); every rank exits SKIPPED over max_ranks processes
 * (0: no limit); *ring (when not NULL): a periodic one-dimensional
 * Cartesian communicator of every process (the neighbour collectives'). */
void mpiacc_test_world(int *rank, int *size, int max_ranks, MPI_Comm *ring);
/* A program's start: --help (usage; exits 0), MPI_Init, mpiacc_test_world. */
void mpiacc_test_init(int *argc, char ***argv, const char *usage, int *rank, int *size, int max_ranks,
                      MPI_Comm *ring);
/* A program's end: MPI_Finalize (while MPI is initialised and not
 * finalised) and main's status for `failed` failures:
 *     return mpiacc_test_end(MPIACC_TEST_RUN("name", tests, NULL, NULL)); */
int mpiacc_test_end(int failed);
/* The whole main of a program that is one CMocka group on MPI_COMM_WORLD
 * (tests_: a CMUnitTest array at file scope). */
#define MPIACC_TEST_MAIN(usage_, name_, tests_)                                \
    int main(int argc, char **argv)                                           \
    {                                                                         \
        mpiacc_test_init(&argc, &argv, (usage_), NULL, NULL, 0, NULL);        \
        return mpiacc_test_end(MPIACC_TEST_RUN((name_), (tests_), NULL, NULL)); \
    }

#endif
