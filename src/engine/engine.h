/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine: the transports mpiacc hands data to instead of moving it itself.
 * One for now: MPI's own transport, when it takes CUDA device memory
 * (MPICH on its UCX netmod over a UCX built with CUDA).  Each engine is
 * reached through one table; this layer sits below protocol and dispatch,
 * above core, and calls nothing above it.
 *
 * The decision (engine.c) is made ONCE, in MPI_Init after PMPI_Init, the
 * same way on every process of MPI_COMM_WORLD:
 *  - MPIACC_TRANSPORT is not "staged";
 *  - the MPI is MPICH with the ch4 device and its netmod in use is UCX (the
 *    MPI_T control variable MPIR_CVAR_CH4_NETMOD when it reads back, else
 *    the variable in the environment, else the build's first netmod:
 *    MPI_Get_library_version's "MPICH Device: ch4:ucx ofi"; MPICH 5.0.2's
 *    MPI_T reads that string variable back as "" whatever it is set to, so
 *    the environment decides there); any other MPI cannot tell: no;
 *  - MPICH's own shared-memory path, which copies device memory with the
 *    CPU, is not in the way: MPIR_CVAR_NOLOCAL=1, or every process is alone
 *    on its node (MPI_Comm_split_type MPI_COMM_TYPE_SHARED);
 *  - libucp is loaded in the process and a probe context of our own
 *    (ucx.c, through dlsym on that library: never a second UCX) reports
 *    the CUDA memory type; it reads the same UCX_* environment as MPICH's
 *    context, so UCX_TLS=tcp,self says no (asked only when the rest says
 *    yes: it costs about a millisecond);
 *  - the answers of all processes are combined with one PMPI_Allreduce
 *    (MIN) on MPI_COMM_WORLD: one process that says no (or cannot tell)
 *    makes it no everywhere.
 * MPIACC_LOG=info logs the decision and its reason (rank 0; a process whose
 * own answer was no logs its reason too); mpiacc-info prints it.
 */
#ifndef MPIACC_ENGINE_H_INCLUDED
#define MPIACC_ENGINE_H_INCLUDED

#include <stddef.h>

#include "core/core.h"

/* The MPI transport as an engine. */
typedef struct mpiacc_engine_mpi {
    const char *name;
    /* MPI_Init, after PMPI_Init: makes the decision (collective over
     * MPI_COMM_WORLD: every process calls it).  Never fails: a process
     * that cannot tell says no. */
    int (*probe)(void);
    /* Whether MPI takes device memory of buffer kind `kind` (MPIACC_KIND_*)
     * as it is (one load; 0 before probe and after finalize). */
    int (*takes)(int kind);
    /* The decision in words, and why (static storage; never NULL). */
    const char *(*reason)(void);
    /* MPI_Finalize: forgets the decision. */
    void (*finalize)(void);
} mpiacc_engine_mpi_t;

extern const mpiacc_engine_mpi_t mpiacc_engine_mpi;

/* ---- the rule, apart from how the facts are found (unit tests) ---------- */

/* What a UCX probe found. */
enum {
    MPIACC_ENGINE_UCX_UNKNOWN = -1, /* cannot tell (not loaded, no headers, probe failed) */
    MPIACC_ENGINE_UCX_NO_CUDA = 0,  /* UCX without the CUDA memory type                   */
    MPIACC_ENGINE_UCX_CUDA = 1      /* UCX takes CUDA device memory                       */
};

typedef struct mpiacc_engine_facts {
    int staged;        /* MPIACC_TRANSPORT=staged                                   */
    int mpich_ch4;     /* MPICH with the ch4 device (MPI_Get_library_version)        */
    char netmod[16];   /* the netmod in use, lower case ("" unknown)                */
    char netmod_from[48]; /* where it was read (for the reason)                     */
    int ucx;           /* MPIACC_ENGINE_UCX_*                                        */
    char ucx_why[128]; /* what the probe found, in words                             */
    int nolocal;       /* MPIR_CVAR_NOLOCAL: 1, 0, or -1 unknown                    */
    int alone;         /* this process is alone on its node                         */
} mpiacc_engine_facts_t;

/* This process's answer (1 yes, 0 no) from its facts, and why (one line
 * into why[len]). */
int mpiacc_engine_rule(const mpiacc_engine_facts_t *f, char *why, size_t len);
/* The answer of every process of comm from each one's `mine` (one
 * PMPI_Allreduce MIN; collective): 1 only when all say 1; an MPI failure
 * counts as no. */
int mpiacc_engine_agree(int mine, MPI_Comm comm);

/* ucx.c (ucx_stub.c when built without UCX's headers): the probe of the
 * UCX already loaded in the process; what it found in why[len]. */
int mpiacc_engine_ucx_probe(char *why, size_t len);

/* ---- UCX's false alarms ---------------------------------------------------- */

/* Whether a UCX log line (its source file, whether it is of level ERROR,
 * its text) is one mpiacc knows to be harmless, so that mpiacc hides it
 * (and explains it once at MPIACC_LOG=info).  One such line today: UCX
 * 1.22's CUDA IPC cache reports "cuIpcOpenMemHandle() failed: resource
 * already mapped" (cuda_ipc_cache.c) when a peer frees device memory and
 * allocates it again at the same address between two messages; UCX then
 * unmaps the stale mapping and maps again, and the data are right (a
 * failure after that retry is ucs_fatal, which no log handler sees).
 * Upstream fix: openucx/ucx pull request 11216. */
int mpiacc_engine_ucx_harmless(const char *file, int is_error, const char *text);

/* ucx.c: puts a log handler in front of UCX's (ucs_log_push_handler of
 * the libucs already loaded, once per process) that drops the lines
 * mpiacc_engine_ucx_harmless names; every other line goes on to UCX's own
 * handler untouched.  ucx_stub.c: nothing. */
void mpiacc_engine_ucx_quiet(void);

/* Test hooks' state (engine_testhooks.h sets it; libmpiacc_internal.a
 * only): kinds (bit 1 << kind) MPI is said to take whatever the probe
 * finds, e.g. MPIACC_BUF_HOST for the device protocol's CPU stand-in; 0:
 * the probe decides. */
extern unsigned mpiacc_engine_test_kinds;

#endif
