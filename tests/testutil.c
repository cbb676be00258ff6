/* SPDX-License-Identifier: BSD-3-Clause */
#include "testutil.h"
#include "mpiacc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t seed_used;
static int seed_set;

/* MPI is initialised and not finalised. */
static int mpi_live(void)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    return inited && !finalized;
}

const char *mpiacc_test_mpi_error(int code)
{
    static _Thread_local char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error code %d", code);
    return msg;
}

MPI_Datatype mpiacc_test_host_tagged(MPI_Datatype t, void *flag)
{
    static int ready = 1;
    MPI_Datatype d;
    assert_int_equal(MPI_Type_dup(t, &d), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(d, MPIACC_BUF_TYPE, MPIACC_BUF_HOST), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(d, MPIACC_EVENT, flag ? flag : &ready), MPI_SUCCESS);
    return d;
}

MPI_Datatype mpiacc_test_host_ints(int n, void *flag)
{
    MPI_Datatype c, d;
    assert_int_equal(MPI_Type_contiguous(n, MPI_INT, &c), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&c), MPI_SUCCESS);
    d = mpiacc_test_host_tagged(c, flag);
    MPI_Type_free(&c);
    return d;
}

int mpiacc_test_self_bytes(const void *buf, int count, MPI_Datatype dt, int tag, void *got, int cap)
{
    MPI_Request req;
    MPI_Status st;
    int cnt = -1;
    memset(got, 0xee, (size_t)cap);
    assert_int_equal(MPI_Isend(buf, count, dt, 0, tag, MPI_COMM_SELF, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(got, cap, MPI_BYTE, 0, tag, MPI_COMM_SELF, &st), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    return cnt;
}

void mpiacc_test_error(int code, int cls, const char *needle)
{
    int got = MPI_SUCCESS;
    const char *msg;
    assert_int_not_equal(code, MPI_SUCCESS);
    MPI_Error_class(code, &got);
    msg = mpiacc_test_mpi_error(code);
    if (got != cls) fail_msg("error class %d (\"%s\"), expected %d", got, msg, cls);
    if (needle && !strstr(msg, needle)) fail_msg("error string \"%s\" lacks \"%s\"", msg, needle);
}

int mpiacc_test_help(int argc, char **argv, const char *usage)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(usage, argv[0]);
            return 1;
        }
    return 0;
}

void mpiacc_test_world(int *rank, int *size, int max_ranks, MPI_Comm *ring)
{
    int r, n, dims[1] = {0}, periods[1] = {1};
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (rank) *rank = r;
    if (size) *size = n;
    if (max_ranks > 0 && n > max_ranks) mpiacc_test_skip_all("over %d ranks", max_ranks);
    if (!ring) return;
    MPI_Dims_create(n, 1, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, ring);
}

void mpiacc_test_init(int *argc, char ***argv, const char *usage, int *rank, int *size, int max_ranks,
                      MPI_Comm *ring)
{
    if (mpiacc_test_help(*argc, *argv, usage)) exit(0);
    MPI_Init(argc, argv);
    mpiacc_test_world(rank, size, max_ranks, ring);
}

int mpiacc_test_end(int failed)
{
    if (mpi_live()) MPI_Finalize();
    return failed ? 1 : 0;
}

void mpiacc_test_skip_all(const char *fmt, ...)
{
    int live = mpi_live(), rank = 0;
    va_list ap;
    if (live) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("SKIPPED: ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
    }
    if (live) MPI_Finalize();
    exit(MPIACC_TEST_SKIP);
}

uint64_t mpiacc_test_seed(void)
{
    if (seed_set) return seed_used;
    const char *s = getenv("MPIACC_TEST_SEED");
    seed_used = s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)clock();
    if (mpi_live())
        MPI_Bcast(&seed_used, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    seed_set = 1;
    return seed_used;
}

uint64_t mpiacc_test_rand(uint64_t *state)
{
    /* splitmix64 */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int mpiacc_test_finish(const char *name, int failed)
{
    int total = failed;
    if (mpi_live())
        MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failed && seed_set)
        fprintf(stderr, "%s: failures with seed %llu (rerun with MPIACC_TEST_SEED=%llu)\n", name,
                (unsigned long long)seed_used, (unsigned long long)seed_used);
    return total;
}
