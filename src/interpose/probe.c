/*
 * interpose/probe.c: MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, and
 * the receive of a message handle they returned for a device message
 * (mpiacc_interpose_direct_mrecv, called by MPI_Mrecv / MPI_Imrecv).
 *
 * On a communicator that is not direct they are MPI's own (one atomic load
 * more).  On a direct one, device messages wait on the hidden data
 * communicator (src/protocol/direct_comm.h), so a probe looks at both:
 * the user's communicator (host messages, PMPI) and mpiacc's kept and
 * arriving device messages (src/protocol/direct_probe.c), taking turns
 * between the two from call to call so that neither class starves.  MPI
 * orders messages of one (source, tag) pair within each class; between a
 * host and a device message of the same pair there is no order to keep
 * (the direct protocol's contract: they never match the same receive).
 * The status of a device message says its source, its tag and its payload
 * (MPI_Get_count with the receive datatype), not mpiacc's header.
 */
#include <stdlib.h>

#include "interpose.h"
#include "protocol/direct.h"

static int active(void)
{
    return mpiacc_core_initialized && !mpiacc_core_disabled;
}

static _Thread_local unsigned turn;

/* One look at both classes; message != NULL for the matched probes. */
static int look(mpiacc_proto_comm_t *dc, int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    int err = MPI_SUCCESS;
    unsigned first = turn++ & 1;
    *flag = 0;
    for (unsigned i = 0; i < 2 && !*flag && err == MPI_SUCCESS; i++) {
        if ((first + i) & 1) err = mpiacc_proto_direct_iprobe(dc, comm, source, tag, flag, message, status);
        else if (message) err = PMPI_Improbe(source, tag, comm, flag, message, status);
        else err = PMPI_Iprobe(source, tag, comm, flag, status);
    }
    return err;
}

static mpiacc_proto_comm_t *direct_comm(int source, MPI_Comm comm)
{
    if (!active() || source == MPI_PROC_NULL) return NULL;
    return mpiacc_proto_comm_lookup(comm);
}

MPIACC_INTERPOSE_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    mpiacc_proto_comm_t *dc = direct_comm(source, comm);
    if (!dc) return PMPI_Iprobe(source, tag, comm, flag, status);
    return mpiacc_err_return_comm(comm, look(dc, source, tag, comm, flag, NULL, status));
}

MPIACC_INTERPOSE_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 0, err = MPI_SUCCESS;
    mpiacc_proto_comm_t *dc = direct_comm(source, comm);
    if (!dc) return PMPI_Probe(source, tag, comm, status);
    while (!flag && err == MPI_SUCCESS) err = look(dc, source, tag, comm, &flag, NULL, status);
    return mpiacc_err_return_comm(comm, err);
}

MPIACC_INTERPOSE_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                                        MPI_Status *status)
{
    mpiacc_proto_comm_t *dc = direct_comm(source, comm);
    if (!dc) return PMPI_Improbe(source, tag, comm, flag, message, status);
    return mpiacc_err_return_comm(comm, look(dc, source, tag, comm, flag, message, status));
}

MPIACC_INTERPOSE_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    int flag = 0, err = MPI_SUCCESS;
    mpiacc_proto_comm_t *dc = direct_comm(source, comm);
    if (!dc) return PMPI_Mprobe(source, tag, comm, message, status);
    while (!flag && err == MPI_SUCCESS) err = look(dc, source, tag, comm, &flag, message, status);
    return mpiacc_err_return_comm(comm, err);
}

/* ---- the receive of a device message's handle ------------------------------------- */

/* A completed request for MPI_Imrecv into host memory (received at once). */
static int done_query(void *state, MPI_Status *status)
{
    *status = *(MPI_Status *)state;
    return MPI_SUCCESS;
}
static int done_free(void *state)
{
    free(state);
    return MPI_SUCCESS;
}
static int done_cancel(void *state, int complete)
{
    return MPI_SUCCESS;
}

int mpiacc_interpose_direct_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
                                  MPI_Status *status, MPI_Request *req, int *handled)
{
    MPI_Comm comm;
    int source, tag, err;
    *handled = 0;
    if (!active() || !message || !mpiacc_proto_direct_owns(*message, &comm, &source, &tag)) return MPI_SUCCESS;
    *handled = 1;
    if (mpiacc_interpose_untagged(dt)) {
        /* a device message into host memory: mpiacc unpacks it there */
        MPI_Status *st = malloc(sizeof *st);
        if (!st) return mpiacc_err_return_comm(comm, mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory"));
        err = mpiacc_proto_direct_host_mrecv(*message, buf, count, dt, st);
        *message = MPI_MESSAGE_NULL;
        if (req) {
            if (PMPI_Grequest_start(done_query, done_free, done_cancel, st, req) == MPI_SUCCESS)
                PMPI_Grequest_complete(*req);
            else free(st);
        } else {
            if (status != MPI_STATUS_IGNORE) *status = *st;
            free(st);
        }
        return mpiacc_err_return_comm(comm, err);
    }
    mpiacc_proto_direct_mrecv_bind(*message);
    err = mpiacc_dispatch_recv(buf, count, dt, source, tag, comm, status, req != NULL, req);
    if (mpiacc_proto_direct_mrecv_unbind()) *message = MPI_MESSAGE_NULL;
    return err; /* through the handler already */
}

/* ---- a blocking host receive on a direct communicator ------------------------------ */

/* The name the warnings give comm. */
static const char *comm_name(MPI_Comm comm, char name[MPI_MAX_OBJECT_NAME])
{
    int len = 0;
    name[0] = '\0';
    PMPI_Comm_get_name(comm, name, &len);
    return len ? name : "(unnamed)";
}

typedef struct host_recv {
    MPI_Request *r;
    MPI_Status *status;
    mpiacc_proto_comm_t *dc;
    MPI_Comm comm;
    int src, tag;
    MPI_Status dst; /* the device message's */
} host_recv_t;

static int host_test(void *ctx, int *done)
{
    host_recv_t *h = ctx;
    return PMPI_Test(h->r, done, h->status);
}

static int device_look(void *ctx, int *found)
{
    host_recv_t *h = ctx;
    return mpiacc_proto_direct_iprobe(h->dc, h->comm, h->src, h->tag, found, NULL, &h->dst);
}

int mpiacc_interpose_host_recv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                               MPI_Status *status)
{
    int flag = 0, err, found = 0, cancelled = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st, dst;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Count bytes = 0;
    host_recv_t h;
    mpiacc_proto_comm_t *dc = direct_comm(src, comm);
    if (!dc || mpiacc_proto_cfg.warn <= 0) return PMPI_Recv_c(buf, count, dt, src, tag, comm, status);
    if (status == MPI_STATUS_IGNORE) status = &st;
    /* Under the contract a host receive takes host messages only.  One that
     * waits MPIACC_DIRECT_WARN seconds or more while a device message it
     * matches waits on the hidden communicator is a breach mpiacc mends:
     * the host receive is cancelled (when MPI still can: else a host
     * message matched it meanwhile, and that is its message) and the
     * device message is unpacked into the host buffer, its sender answered
     * as by any receive (mpiacc_proto_direct_host_mrecv: MPI_ERR_TRUNCATE
     * on both sides when it does not fit), with one warning.  The receive
     * tests MPI's request meanwhile, looking for a device message every
     * MPIACC_DIRECT_WARN seconds (src/dispatch/watch.c: after the first
     * period, tests 100 us apart). */
    err = PMPI_Irecv_c(buf, count, dt, src, tag, comm, &r);
    if (err != MPI_SUCCESS) goto fn_exit;
    h = (host_recv_t){.r = &r, .status = status, .dc = dc, .comm = comm, .src = src, .tag = tag};
    err = mpiacc_dispatch_watch_until(host_test, &h, device_look, &h, &flag, &found);
    if (err != MPI_SUCCESS || flag) goto fn_exit;
    PMPI_Cancel(&r);
    err = PMPI_Wait(&r, status);
    if (err == MPI_SUCCESS) PMPI_Test_cancelled(status, &cancelled);
    if (err != MPI_SUCCESS || !cancelled) goto fn_exit; /* a host message came first: the receive's */
    /* the oldest matching device message (another thread may have received it meanwhile) */
    err = mpiacc_proto_direct_iprobe(dc, comm, src, tag, &found, &m, &dst);
    if (err != MPI_SUCCESS) goto fn_exit;
    if (!found) {
        err = PMPI_Recv_c(buf, count, dt, src, tag, comm, status);
        goto fn_exit;
    }
    PMPI_Get_count_c(&dst, MPI_BYTE, &bytes);
    MPIACC_LOG(MPIACC_LOG_WARN,
               "direct protocol: a host MPI_Recv (source %d, tag %d) on communicator \"%s\" waited %d s or more "
               "while a device message from rank %d tag %d (%lld bytes) waited there: mpiacc takes the device "
               "message into the host buffer. Device messages on a direct communicator must be received into "
               "device buffers (include/mpiacc.h, \"Direct protocol\"; MPI_Mprobe + MPI_Mrecv take one into host "
               "memory)",
               src, tag, comm_name(comm, name), mpiacc_proto_cfg.warn, dst.MPI_SOURCE, dst.MPI_TAG,
               (long long)bytes);
    err = mpiacc_proto_direct_host_mrecv(m, buf, count, dt, status);
fn_exit:
    if (r != MPI_REQUEST_NULL) PMPI_Wait(&r, status); /* an error while it is posted: MPI's receive goes on */
    return mpiacc_err_return_comm(comm, err);
}

int mpiacc_interpose_host_irecv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                MPI_Request *req)
{
    int err = PMPI_Irecv_c(buf, count, dt, src, tag, comm, req);
    /* on a direct communicator only: recorded, so that waiting on it is watched */
    if (err == MPI_SUCCESS && mpiacc_proto_cfg.warn > 0 && direct_comm(src, comm))
        mpiacc_dispatch_watch_host_irecv(*req, src, tag, comm);
    return err;
}
