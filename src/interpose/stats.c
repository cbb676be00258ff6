/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/stats.c: MPIACC_Get_stats (include/mpiacc.h) and the per-rank
 * summary MPI_Finalize prints with MPIACC_LOG=info: the operation counters
 * of core/stats plus the memory pools' high-water marks (operations,
 * staging per kind).
 */
#include <string.h>

#include "interpose.h"
#include "core/stats.h"
#include "core/backend_ipc.h"
#include "protocol/protocol.h"

static void gather(MPIACC_Stats *s)
{
    mpiacc_util_pool_stats_t ps;
    memset(s, 0, sizeof *s);
    s->size = sizeof *s;
    s->version = MPIACC_STATS_VERSION;
    mpiacc_core_stats_read(s);
    s->pending = (unsigned long long)mpiacc_rp_pending();
    mpiacc_rp_pool_stats(&ps);
    s->ops_hwm = (unsigned long long)ps.hwm_objs;
    for (int k = 0; k < MPIACC_KIND_MAX; k++) {
        mpiacc_proto_staging_stats(k, &ps);
        s->staging_bytes_hwm[k] = ps.hwm_bytes;
        s->staging_allocs[k] = (unsigned long long)ps.allocs;
        s->staging_reuses[k] = (unsigned long long)ps.reuses;
    }
    s->coll_device = (unsigned long long)atomic_load(&mpiacc_coll_device_runs);
    s->coll_staged = (unsigned long long)atomic_load(&mpiacc_coll_staged_runs);
    s->coll_engine = (unsigned long long)atomic_load(&mpiacc_coll_engine_runs);
    /* IPC caches of the backends already started (never starts one) */
    for (int k = MPIACC_KIND_HOST; k < MPIACC_KIND_MAX; k++) {
        const mpiacc_backend_t *be = mpiacc_backend_peek(k);
        mpiacc_ipc_stats_t is;
        if (!be || !be->ipc || !be->ipc->stats) continue;
        memset(&is, 0, sizeof is);
        be->ipc->stats(&is);
        s->ipc_opens += (unsigned long long)(is.mem_opens + is.event_opens);
        s->ipc_hits += (unsigned long long)(is.mem_hits + is.event_hits);
        s->ipc_evictions += (unsigned long long)is.mem_evictions;
    }
}

MPIACC_INTERPOSE_EXPORT int MPIACC_Get_stats(MPIACC_Stats *stats)
{
    MPIACC_Stats all;
    size_t n;
    if (!stats || stats->size < offsetof(MPIACC_Stats, version) + sizeof stats->version) return MPI_ERR_ARG;
    n = stats->size < sizeof all ? stats->size : sizeof all;
    gather(&all);
    /* everything after `size`, up to what the caller has room for */
    memcpy((char *)stats + sizeof all.size, (char *)&all + sizeof all.size, n - sizeof all.size);
    return MPI_SUCCESS;
}

static double kib(unsigned long long b) { return (double)b / 1024.0; }

static const char *row_name(int k)
{
    return k == 0 ? "host (untagged)" : mpiacc_kind_name(k);
}

void mpiacc_interpose_stats_summary(void)
{
    MPIACC_Stats s;
    unsigned long long done = 0;
    if (MPIACC_LOG_INFO > mpiacc_log_level) return;
    gather(&s);
    for (int k = 0; k < MPIACC_STATS_KINDS; k++)
        for (int p = 0; p < MPIACC_STATS_PROTOCOLS; p++) done += s.sends[k][p] + s.receives[k][p];
    MPIACC_LOG(MPIACC_LOG_INFO, "summary: %llu operation(s) completed, %llu failed, %llu cancelled, %llu pending",
               done, s.failed, s.cancelled, s.pending);
    for (int k = 0; k < MPIACC_STATS_KINDS; k++)
        for (int p = 0; p < MPIACC_STATS_PROTOCOLS; p++)
            if (s.sends[k][p] || s.receives[k][p])
                MPIACC_LOG(MPIACC_LOG_INFO, "summary: %s/%s: %llu send(s) %.1f KiB, %llu receive(s) %.1f KiB",
                           row_name(k), s.protocol[p], s.sends[k][p], kib(s.bytes_sent[k][p]), s.receives[k][p],
                           kib(s.bytes_received[k][p]));
    MPIACC_LOG(MPIACC_LOG_INFO, "summary: time in pack %.3f ms, unpack %.3f ms, waiting on dependencies %.3f ms",
               1e3 * s.pack_seconds, 1e3 * s.unpack_seconds, 1e3 * s.dep_wait_seconds);
    MPIACC_LOG(MPIACC_LOG_INFO, "summary: pools: at most %llu operation(s) alive", s.ops_hwm);
    for (int k = 1; k < MPIACC_STATS_KINDS; k++)
        if (s.staging_allocs[k] || s.staging_reuses[k])
            MPIACC_LOG(MPIACC_LOG_INFO,
                       "summary: pools: %s staging at most %.1f KiB, %llu allocation(s), %llu reuse(s)",
                       row_name(k), kib(s.staging_bytes_hwm[k]), s.staging_allocs[k], s.staging_reuses[k]);
    MPIACC_LOG(MPIACC_LOG_INFO, "summary: IPC cache: %llu open(s), %llu hit(s), %llu eviction(s)", s.ipc_opens,
               s.ipc_hits, s.ipc_evictions);
    if (s.coll_device || s.coll_staged)
        MPIACC_LOG(MPIACC_LOG_INFO, "summary: collectives with device buffers: %llu on the device (%llu of them on "
                   "NCCL), %llu staged", s.coll_device, s.coll_engine, s.coll_staged);
}
