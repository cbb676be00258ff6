/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/stats: the counters behind MPIACC_Get_stats and the MPI_Finalize
 * summary (MPIACC_LOG=info).  Only pooled operations and device messages
 * handed to MPI as they are touch them (the host fast path never does);
 * every counter is a relaxed atomic, so updates from
 * any thread are cheap and a reader sees each value whole.
 */
#ifndef MPIACC_CORE_STATS_H_INCLUDED
#define MPIACC_CORE_STATS_H_INCLUDED

#include "core.h"

/* Times accumulated by operations (nanoseconds). */
enum {
    MPIACC_CORE_STATS_T_PACK,   /* PACKING: pack enqueued until seen done    */
    MPIACC_CORE_STATS_T_UNPACK, /* UNPACKING: unpack enqueued until seen done */
    MPIACC_CORE_STATS_T_DEP,    /* DEP_PENDING: host wait for the dependency  */
    MPIACC_CORE_STATS_NT
};

/* Monotonic clock in nanoseconds. */
long long mpiacc_core_stats_now_ns(void);
/* An operation of buffer kind `kind` (0: untagged host data) carried by
 * protocol `proto` (its name: a string that lives as long as the program)
 * completed successfully after moving `bytes` packed bytes. */
void mpiacc_core_stats_op_done(int kind, const char *proto, int is_send, long long bytes);
/* A device message handed to MPI as it is at its call (no pool operation:
 * column MPIACC_PROTO_MPI, counted at the call since mpiacc never sees it
 * complete). */
void mpiacc_core_stats_passed(int kind, int is_send, long long bytes);
void mpiacc_core_stats_op_failed(void);
void mpiacc_core_stats_op_cancelled(void);
void mpiacc_core_stats_time(int which, long long ns);
/* Fills the counters of *s (the full structure; memory figures are the
 * caller's). */
void mpiacc_core_stats_read(MPIACC_Stats *s);

#endif
