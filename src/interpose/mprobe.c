/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/mprobe.c: the probes.  They are MPI's own, with two additions:
 *  - the matched probes (MPI_Mprobe, MPI_Improbe) note a message this
 *    process sent itself (mpiacc_dispatch_mprobe_note), so that its receive
 *    never hands device memory to MPI, which crashes on device memory to
 *    oneself;
 *  - while receives of mpiacc's pool look for their message (MPI_ANY_SOURCE
 *    receives matched by a probe on MPICH's UCX netmod: reqpool.h,
 *    MATCHING), every probe first gives them their chance (one sweep), a
 *    blocking probe is a loop of the nonblocking one and sweeps (MPI's
 *    blocking probe would never match a rendezvous message such a receive
 *    waits for, which the peer may need before it sends what is probed
 *    for), and a message a matched probe takes that an earlier such
 *    receive could take goes to that receive (MPI's order of posted
 *    receives; mpiacc_rp_match_offer).  Otherwise one relaxed load.
 * MPI_Mrecv and MPI_Imrecv are generated (p2p family:
 * mpiacc_interpose_host_mrecv, else mpiacc_dispatch_mrecv).
 */
#include "interpose.h"

/* Whether the matched probes need to look at the message at all (one load). */
static int noting(void)
{
    return mpiacc_core_initialized && !mpiacc_core_disabled;
}

static int iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    mpiacc_rp_match_pending();
    return PMPI_Iprobe(source, tag, comm, flag, status);
}

/* MPI_Improbe while ops are MATCHING: a message an earlier receive takes
 * is not this probe's (look again: each round takes one message). */
static int improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *st)
{
    int err;
    do {
        mpiacc_rp_match_pending();
        err = PMPI_Improbe(source, tag, comm, flag, message, st);
    } while (err == MPI_SUCCESS && *flag && mpiacc_rp_match_offer(message, st->MPI_SOURCE, st->MPI_TAG, comm));
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (!mpiacc_rp_matching_now()) return PMPI_Iprobe(source, tag, comm, flag, status);
    return iprobe(source, tag, comm, flag, status);
}

MPIACC_INTERPOSE_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int err = MPI_SUCCESS, flag = 0;
    while (err == MPI_SUCCESS && !flag) {
        if (!mpiacc_rp_matching_now()) return PMPI_Probe(source, tag, comm, status);
        err = iprobe(source, tag, comm, &flag, status);
    }
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    MPI_Status st, *s = status == MPI_STATUS_IGNORE ? &st : status;
    int err = MPI_SUCCESS, flag = 0;
    if (!noting()) return PMPI_Mprobe(source, tag, comm, message, status);
    while (err == MPI_SUCCESS && !flag) {
        if (!mpiacc_rp_matching_now()) {
            err = PMPI_Mprobe(source, tag, comm, message, s);
            flag = 1;
        } else {
            err = improbe(source, tag, comm, &flag, message, s);
        }
    }
    if (err == MPI_SUCCESS) mpiacc_dispatch_mprobe_note(*message, comm, s->MPI_SOURCE);
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                                        MPI_Status *status)
{
    MPI_Status st, *s = status == MPI_STATUS_IGNORE ? &st : status;
    int err;
    if (!noting()) return PMPI_Improbe(source, tag, comm, flag, message, status);
    err = mpiacc_rp_matching_now() ? improbe(source, tag, comm, flag, message, s)
                                   : PMPI_Improbe(source, tag, comm, flag, message, s);
    if (err == MPI_SUCCESS && *flag) mpiacc_dispatch_mprobe_note(*message, comm, s->MPI_SOURCE);
    return err;
}
