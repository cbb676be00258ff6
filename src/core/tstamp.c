/*
 * tstamp.c: the switch and slots of tstamp.h (the hooks that turn them on
 * and read them are in core_testhooks.c).
 */
#include <time.h>

#include "tstamp.h"

int mpiacc_ts_on;
uint64_t mpiacc_ts_v[MPIACC_TS_N];

void mpiacc_ts_mark(int phase)
{
    struct timespec ts;
    if (phase < 0 || phase >= MPIACC_TS_N) return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    __atomic_store_n(&mpiacc_ts_v[phase], (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
                     __ATOMIC_RELAXED);
}
