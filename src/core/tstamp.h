/*
 * tstamp.h: phase timestamps of the direct protocol's IPC path, for
 * bench/pingpong --breakdown.  Off by default: a mark is one load and a
 * not-taken branch (MPIACC_TS), and with MPIACC_TS_COMPILED_OUT defined at
 * build time nothing at all.  On (mpiacc_ts_enable, a test hook), a mark
 * stores CLOCK_MONOTONIC in nanoseconds into its phase's slot (the last
 * value wins; one message in flight at a time is what makes them
 * meaningful).  Processes on one node share that clock, so a sender's and a
 * receiver's marks can be subtracted.
 *
 * The hooks (enable, reset, read, now) are in core_testhooks.c, built into
 * libmpiacc_internal.a only; the library keeps just the switch and slots.
 */
#ifndef MPIACC_TSTAMP_H_INCLUDED
#define MPIACC_TSTAMP_H_INCLUDED

#include <stdint.h>

/* Phases, in the order one IPC message passes them. */
enum {
    /* sender (src/protocol/ipc.c) */
    MPIACC_TS_EXPORT_BEGIN = 0, /* send_prepare: before export_buf              */
    MPIACC_TS_EXPORT_END,       /* after export_buf (dependency query / event)  */
    MPIACC_TS_RTS_POSTED,       /* issue: the RTS_IPC's PMPI_Isend returned     */
    MPIACC_TS_FIN_SEEN,         /* send_advance: the receiver's FIN read        */
    /* receiver (ipc.c, src/cuda/cuda_ipc.c) */
    MPIACC_TS_RTS_SEEN,     /* recv_begin: the RTS_IPC matched and read          */
    MPIACC_TS_IMPORT_BEGIN, /* recv_copy: dependency ready, import_copy called   */
    MPIACC_TS_MAPPED,       /* import_copy: mapping and blobs at hand            */
    MPIACC_TS_WAITED,       /* import_copy: GPU-side waits enqueued              */
    MPIACC_TS_LAUNCHED,     /* import_copy: copy and completion signal enqueued  */
    MPIACC_TS_COPY_DONE,    /* recv_advance: the copy seen complete              */
    MPIACC_TS_FIN_POSTED,   /* recv_advance: the FIN posted                      */
    MPIACC_TS_N
};

extern int mpiacc_ts_on;
extern uint64_t mpiacc_ts_v[MPIACC_TS_N];
void mpiacc_ts_mark(int phase);

#ifdef MPIACC_TS_COMPILED_OUT
#define MPIACC_TS(p_) ((void)0)
#else
#define MPIACC_TS(p_)                                                                    \
    do {                                                                                 \
        if (__builtin_expect(__atomic_load_n(&mpiacc_ts_on, __ATOMIC_RELAXED), 0))       \
            mpiacc_ts_mark(p_);                                                          \
    } while (0)
#endif

/* ---- test hooks (core_testhooks.c, libmpiacc_internal.a only) ---- */
void mpiacc_ts_enable(int on);
/* Sets every slot to 0 ("not passed"). */
void mpiacc_ts_reset(void);
/* Copies the MPIACC_TS_N slots (ns; 0: not passed since the reset). */
void mpiacc_ts_read(uint64_t v[MPIACC_TS_N]);
/* The marks' clock now (ns). */
uint64_t mpiacc_ts_now(void);
/* Short name of a phase. */
const char *mpiacc_ts_name(int phase);

#endif
