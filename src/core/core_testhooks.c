/*
 * core_testhooks.c: the phase timestamps' hooks (tstamp.h), for
 * bench/pingpong --breakdown and tests; libmpiacc_internal.a only.
 */
#include <time.h>

#include "tstamp.h"

void mpiacc_ts_enable(int on) { __atomic_store_n(&mpiacc_ts_on, on != 0, __ATOMIC_RELAXED); }

void mpiacc_ts_reset(void)
{
    for (int i = 0; i < MPIACC_TS_N; i++) __atomic_store_n(&mpiacc_ts_v[i], 0, __ATOMIC_RELAXED);
}

void mpiacc_ts_read(uint64_t v[MPIACC_TS_N])
{
    for (int i = 0; i < MPIACC_TS_N; i++) v[i] = __atomic_load_n(&mpiacc_ts_v[i], __ATOMIC_RELAXED);
}

uint64_t mpiacc_ts_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *mpiacc_ts_name(int phase)
{
    static const char *const names[MPIACC_TS_N] = {"export_begin", "export_end", "rts_posted", "fin_seen",
                                                   "rts_seen",     "import_begin", "mapped",   "waited",
                                                   "launched",     "copy_done",  "fin_posted"};
    return phase >= 0 && phase < MPIACC_TS_N ? names[phase] : "?";
}
