/*
 * interpose/mprobe.c: MPI_Mprobe, MPI_Improbe, MPI_Mrecv and MPI_Imrecv
 * (int and MPI_Count forms).  The probes are MPI's own; they only note a
 * message this process sent itself (mpiacc_dispatch_mprobe_note), so that
 * its receive never hands device memory to MPI, which crashes on device
 * memory to oneself.  MPI_Probe and MPI_Iprobe are not interposed.  An
 * untagged receive goes to MPI; a device one to mpiacc_dispatch_mrecv
 * (src/dispatch/mrecv.c).
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

/* An untagged receive: MPI's (a noted message is forgotten first). */
static int host_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status,
                      MPI_Request *req)
{
    if (msg && atomic_load_explicit(&mpiacc_dispatch_self_msgs, memory_order_relaxed)) mpiacc_dispatch_mprobe_forget(*msg);
    return req ? PMPI_Imrecv_c(buf, count, dt, msg, req) : PMPI_Mrecv_c(buf, count, dt, msg, status);
}

MPIACC_INTERPOSE_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status)
{
    if (mpiacc_interpose_untagged(dt)) return host_mrecv(buf, count, dt, msg, status, NULL);
    return mpiacc_dispatch_mrecv(buf, count, dt, msg, status, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return host_mrecv(buf, count, dt, msg, MPI_STATUS_IGNORE, req);
    return mpiacc_dispatch_mrecv(buf, count, dt, msg, NULL, 1, req);
}

MPIACC_INTERPOSE_EXPORT int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status)
{
    if (mpiacc_interpose_untagged(dt)) return host_mrecv(buf, count, dt, msg, status, NULL);
    return mpiacc_dispatch_mrecv(buf, count, dt, msg, status, 0, NULL);
}

MPIACC_INTERPOSE_EXPORT int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
    if (mpiacc_interpose_untagged(dt)) return host_mrecv(buf, count, dt, msg, MPI_STATUS_IGNORE, req);
    return mpiacc_dispatch_mrecv(buf, count, dt, msg, NULL, 1, req);
}
