/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/mprobe.c: MPI_Mprobe and MPI_Improbe.  The probes are MPI's
 * own; they only note a message this process sent itself
 * (mpiacc_dispatch_mprobe_note), so that its receive never hands device
 * memory to MPI, which crashes on device memory to oneself.  MPI_Probe and
 * MPI_Iprobe are not interposed.  MPI_Mrecv and MPI_Imrecv are generated
 * (p2p family: mpiacc_interpose_host_mrecv, else mpiacc_dispatch_mrecv).
 */
#include "interpose.h"

/* Whether the probes need to look at the message at all (one load). */
static int noting(void)
{
    return mpiacc_core_initialized && !mpiacc_core_disabled;
}

MPIACC_INTERPOSE_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    MPI_Status st;
    int err;
    if (!noting()) return PMPI_Mprobe(source, tag, comm, message, status);
    err = PMPI_Mprobe(source, tag, comm, message, status == MPI_STATUS_IGNORE ? &st : status);
    if (err == MPI_SUCCESS) mpiacc_dispatch_mprobe_note(*message, comm, (status == MPI_STATUS_IGNORE ? &st : status)->MPI_SOURCE);
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                                        MPI_Status *status)
{
    MPI_Status st;
    int err;
    if (!noting()) return PMPI_Improbe(source, tag, comm, flag, message, status);
    err = PMPI_Improbe(source, tag, comm, flag, message, status == MPI_STATUS_IGNORE ? &st : status);
    if (err == MPI_SUCCESS && *flag)
        mpiacc_dispatch_mprobe_note(*message, comm, (status == MPI_STATUS_IGNORE ? &st : status)->MPI_SOURCE);
    return err;
}
