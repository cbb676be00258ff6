/* SPDX-License-Identifier: BSD-3-Clause */
/* core/stats.c: operation counters (stats.h). */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "stats.h"

_Static_assert(MPIACC_KIND_MAX <= MPIACC_STATS_KINDS, "MPIACC_Stats has a row per buffer kind");

typedef struct {
    atomic_ullong ops, bytes;
} cell_t;

static _Atomic(const char *) proto_names[MPIACC_STATS_PROTOCOLS];
static cell_t cells[2][MPIACC_STATS_KINDS][MPIACC_STATS_PROTOCOLS]; /* [is_send][kind][protocol] */
static atomic_ullong failed, cancelled, overflow;
static atomic_llong times[MPIACC_CORE_STATS_NT];

long long mpiacc_core_stats_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The fixed columns (MPIACC_PROTO_* in mpiacc.h) by the name of the
 * protocol table that carries the operation; "coll..." is the collectives
 * layer's column. */
static const char *const fixed_names[MPIACC_PROTO_NFIXED] = {
    [MPIACC_PROTO_STAGED] = "staged", [MPIACC_PROTO_ORDERED] = "ordered", [MPIACC_PROTO_DEVICE] = "device",
    [MPIACC_PROTO_MPI] = "MPI", [MPIACC_PROTO_COLL] = "coll"};

_Static_assert(MPIACC_PROTO_NFIXED <= MPIACC_STATS_PROTOCOLS, "MPIACC_Stats has a column per fixed protocol");

/* The column of a protocol: its fixed column, else a spare one found by its
 * name pointer (then by its text), else claimed; -1 when every spare column
 * is taken. */
static int proto_index(const char *name)
{
    for (int i = 0; i < MPIACC_PROTO_NFIXED; i++)
        if (name == fixed_names[i] || !strcmp(name, fixed_names[i])) return i;
    if (!strncmp(name, "coll", 4)) return MPIACC_PROTO_COLL;
    for (int i = MPIACC_PROTO_NFIXED; i < MPIACC_STATS_PROTOCOLS; i++) {
        const char *cur = atomic_load_explicit(&proto_names[i], memory_order_acquire);
        if (!cur) {
            const char *expected = NULL;
            if (atomic_compare_exchange_strong(&proto_names[i], &expected, name)) return i;
            cur = expected; /* another thread claimed it: compare with its name */
        }
        if (cur == name || !strcmp(cur, name)) return i;
    }
    return -1;
}

void mpiacc_core_stats_op_done(int kind, const char *proto, int is_send, long long bytes)
{
    int p = proto_index(proto ? proto : "?");
    cell_t *c;
    if (p < 0 || kind < 0 || kind >= MPIACC_STATS_KINDS) {
        atomic_fetch_add_explicit(&overflow, 1, memory_order_relaxed);
        return;
    }
    c = &cells[is_send ? 1 : 0][kind][p];
    atomic_fetch_add_explicit(&c->ops, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->bytes, (unsigned long long)(bytes > 0 ? bytes : 0), memory_order_relaxed);
}

void mpiacc_core_stats_passed(int kind, int is_send, long long bytes)
{
    cell_t *c;
    if (kind < 0 || kind >= MPIACC_STATS_KINDS) return;
    c = &cells[is_send ? 1 : 0][kind][MPIACC_PROTO_MPI];
    atomic_fetch_add_explicit(&c->ops, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->bytes, (unsigned long long)(bytes > 0 ? bytes : 0), memory_order_relaxed);
}

void mpiacc_core_stats_op_failed(void) { atomic_fetch_add_explicit(&failed, 1, memory_order_relaxed); }

void mpiacc_core_stats_op_cancelled(void) { atomic_fetch_add_explicit(&cancelled, 1, memory_order_relaxed); }

void mpiacc_core_stats_time(int which, long long ns)
{
    if (which >= 0 && which < MPIACC_CORE_STATS_NT && ns > 0)
        atomic_fetch_add_explicit(&times[which], ns, memory_order_relaxed);
}

void mpiacc_core_stats_read(MPIACC_Stats *s)
{
    for (int p = 0; p < MPIACC_STATS_PROTOCOLS; p++) {
        const char *n = p < MPIACC_PROTO_NFIXED ? fixed_names[p]
                                                : atomic_load_explicit(&proto_names[p], memory_order_acquire);
        memset(s->protocol[p], 0, sizeof s->protocol[p]);
        if (n) strncpy(s->protocol[p], n, sizeof s->protocol[p] - 1);
        for (int k = 0; k < MPIACC_STATS_KINDS; k++) {
            s->receives[k][p] = atomic_load_explicit(&cells[0][k][p].ops, memory_order_relaxed);
            s->bytes_received[k][p] = atomic_load_explicit(&cells[0][k][p].bytes, memory_order_relaxed);
            s->sends[k][p] = atomic_load_explicit(&cells[1][k][p].ops, memory_order_relaxed);
            s->bytes_sent[k][p] = atomic_load_explicit(&cells[1][k][p].bytes, memory_order_relaxed);
        }
    }
    s->failed = atomic_load_explicit(&failed, memory_order_relaxed);
    s->cancelled = atomic_load_explicit(&cancelled, memory_order_relaxed);
    s->uncounted = atomic_load_explicit(&overflow, memory_order_relaxed);
    s->pack_seconds = 1e-9 * (double)atomic_load_explicit(&times[MPIACC_CORE_STATS_T_PACK], memory_order_relaxed);
    s->unpack_seconds =
        1e-9 * (double)atomic_load_explicit(&times[MPIACC_CORE_STATS_T_UNPACK], memory_order_relaxed);
    s->dep_wait_seconds =
        1e-9 * (double)atomic_load_explicit(&times[MPIACC_CORE_STATS_T_DEP], memory_order_relaxed);
}
