/* SPDX-License-Identifier: BSD-3-Clause */
/* core/trace_store.h: the records of core/trace.c, for trace.c and
 * core_testhooks.c only. */
#ifndef MPIACC_CORE_TRACE_STORE_H_INCLUDED
#define MPIACC_CORE_TRACE_STORE_H_INCLUDED

#include <pthread.h>

#include "trace.h"

typedef struct mpiacc_core_trace_store {
    pthread_mutex_t lock;
    mpiacc_core_trace_rec_t *recs;
    long n, cap, dropped;
} mpiacc_core_trace_store_t;

extern mpiacc_core_trace_store_t mpiacc_core_trace_store;

#endif
