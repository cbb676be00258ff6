#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t seed_used;
static int seed_set;

void mpiacc_test_skip_all(const char *fmt, ...)
{
    int inited = 0, finalized = 0, rank = 0;
    va_list ap;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("SKIPPED: ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
    }
    if (inited && !finalized) MPI_Finalize();
    exit(MPIACC_TEST_SKIP);
}

uint64_t mpiacc_test_seed(void)
{
    int inited = 0, finalized = 0;
    if (seed_set) return seed_used;
    const char *s = getenv("MPIACC_TEST_SEED");
    seed_used = s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)clock();
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized)
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
    int inited = 0, finalized = 0, total = failed;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized)
        MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failed && seed_set)
        fprintf(stderr, "%s: failures with seed %llu (rerun with MPIACC_TEST_SEED=%llu)\n", name,
                (unsigned long long)seed_used, (unsigned long long)seed_used);
    return total;
}
