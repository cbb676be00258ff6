/* SPDX-License-Identifier: BSD-3-Clause */
/* core/trace.c: the phase records of bench/pingpong --breakdown (trace.h). */
#include <pthread.h>
#include <string.h>

#include "stats.h"
#include "trace.h"
#include "trace_store.h"

atomic_int mpiacc_core_trace_on;

static _Thread_local struct {
    int active;
    long long start, last;
    mpiacc_core_trace_rec_t rec;
} cur;

mpiacc_core_trace_store_t mpiacc_core_trace_store = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void push(const mpiacc_core_trace_rec_t *r)
{
    mpiacc_core_trace_store_t *s = &mpiacc_core_trace_store;
    pthread_mutex_lock(&s->lock);
    if (s->recs && s->n < s->cap) s->recs[s->n++] = *r;
    else s->dropped++;
    pthread_mutex_unlock(&s->lock);
}

void mpiacc_core_trace_begin(void)
{
    if (!mpiacc_core_tracing()) return;
    memset(&cur.rec, 0, sizeof cur.rec);
    cur.active = 1;
    cur.start = cur.last = mpiacc_core_stats_now_ns();
}

void mpiacc_core_trace_mark(int phase)
{
    long long t;
    if (!cur.active) return;
    t = mpiacc_core_stats_now_ns();
    cur.rec.ns[phase] += t - cur.last;
    cur.last = t;
}

void mpiacc_core_trace_pooled(void)
{
    cur.rec.pooled = 1;
}

void mpiacc_core_trace_end(int is_send)
{
    if (!cur.active) return;
    cur.active = 0;
    cur.rec.op = 0;
    cur.rec.is_send = is_send;
    cur.rec.ns[MPIACC_CORE_TR_CALL] = mpiacc_core_stats_now_ns() - cur.start;
    push(&cur.rec);
}

void mpiacc_core_trace_op(int is_send, const long long *ns)
{
    mpiacc_core_trace_rec_t r = {.op = 1, .is_send = is_send, .pooled = 1};
    if (!mpiacc_core_tracing()) return;
    memcpy(r.ns, ns, sizeof(long long) * MPIACC_CORE_TR_NOP);
    push(&r);
}
