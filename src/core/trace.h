/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/trace: where the time of a device message goes, phase by phase
 * (bench/pingpong --breakdown).  Off unless a benchmark switches it on
 * through core_testhooks.h (no user knob): then each dispatched
 * point-to-point call leaves one CALL record (the phases of the call
 * itself) and each pooled operation one OP record (the time it spent in
 * each state, and in its pack / unpack launches), read back by the
 * benchmark.  Off, every hook is one relaxed load and a branch.
 */
#ifndef MPIACC_CORE_TRACE_H_INCLUDED
#define MPIACC_CORE_TRACE_H_INCLUDED

#include <stdatomic.h>

#include "core.h"

/* The phases of one call (a CALL record), in call order. */
enum {
    MPIACC_CORE_TR_ATTR,   /* datatype attributes read (and the buffer classified)        */
    MPIACC_CORE_TR_CHECK,  /* call-time checks: arguments, datatype analysis, buffer span */
    MPIACC_CORE_TR_DEP,    /* dependency test (fast path) or capture (pooled op)          */
    MPIACC_CORE_TR_POST,   /* MPI's call (fast path; blocking: the whole transfer) or the
                            * op's submission (pool: prepare, generalized request, start) */
    MPIACC_CORE_TR_WAIT,   /* blocking call of a pooled op: waiting for it                */
    MPIACC_CORE_TR_CALL,   /* the whole call, from the dispatcher's entry                 */
    MPIACC_CORE_TR_NCALL
};

/* OP records: ns spent in each reqpool state (indexes: mpiacc_rp_state_t)
 * plus, at MPIACC_CORE_TR_OP_LAUNCH, the host time of pack / unpack
 * launches (be->pack / be->unpack calls). */
#define MPIACC_CORE_TR_OP_STATES 16
#define MPIACC_CORE_TR_OP_LAUNCH MPIACC_CORE_TR_OP_STATES
#define MPIACC_CORE_TR_NOP (MPIACC_CORE_TR_OP_STATES + 1)

typedef struct mpiacc_core_trace_rec {
    int op;      /* 0: a CALL record, 1: an OP record                       */
    int is_send;
    int pooled;  /* CALL: the call made a pool operation (0: MPI's own)     */
    long long ns[MPIACC_CORE_TR_NOP > MPIACC_CORE_TR_NCALL ? MPIACC_CORE_TR_NOP : MPIACC_CORE_TR_NCALL];
} mpiacc_core_trace_rec_t;

extern atomic_int mpiacc_core_trace_on;

static inline int mpiacc_core_tracing(void)
{
    return atomic_load_explicit(&mpiacc_core_trace_on, memory_order_relaxed);
}

/* The calling thread's CALL record: begin at the dispatcher's entry, mark
 * the end of each phase (the time since the previous mark goes to it),
 * end when the call returns (records it).  No-ops when tracing is off. */
void mpiacc_core_trace_begin(void);
void mpiacc_core_trace_mark(int phase);
void mpiacc_core_trace_end(int is_send);
/* The call made a pool operation. */
void mpiacc_core_trace_pooled(void);
/* Records a finished op's times (ns[] as an OP record's). */
void mpiacc_core_trace_op(int is_send, const long long *ns);

#endif
