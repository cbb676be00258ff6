/* SPDX-License-Identifier: BSD-3-Clause */
/* The point-to-point calls the message-corpus tests cycle through (send
 * and receive kinds, a ready send's handshake), shared by
 * tests/opencl/test_ocl_p2p.c and tests/direct/test_direct_ocl.c. */
#ifndef MPIACC_P2P_OPS_H_INCLUDED
#define MPIACC_P2P_OPS_H_INCLUDED

#include <mpi.h>
#include <stdio.h>

enum { OP_SEND, OP_ISEND, OP_SSEND, OP_ISSEND, OP_RSEND, OP_IRSEND, OP_SENDRECV, NOPS };
static const char *op_name[NOPS] = {"MPI_Send",  "MPI_Isend",  "MPI_Ssend",   "MPI_Issend",
                                    "MPI_Rsend", "MPI_Irsend", "MPI_Sendrecv"};

/* Reports a failed MPI call with its error string (and the rank in
 * MPI_COMM_WORLD); returns 1 if failed. */
static int mpi_bad(int err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len, me = -1;
    if (err == MPI_SUCCESS) return 0;
    MPI_Error_string(err, msg, &len);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    fprintf(stderr, "rank %d: %s failed: %s\n", me, what, msg);
    return 1;
}

/* Sends count x t to dest with `tag` by the call op names (not
 * OP_SENDRECV); a ready send first waits for the receiver's empty message
 * on tag + 1 (its receive is posted then). */
static int send_op(int op, void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    int err = MPI_SUCCESS;
    if (op == OP_RSEND || op == OP_IRSEND) /* the receive is posted when this arrives */
        err = MPI_Recv(NULL, 0, MPI_BYTE, dest, tag + 1, comm, MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS) return err;
    switch (op) {
    case OP_SEND: return MPI_Send(buf, count, t, dest, tag, comm);
    case OP_SSEND: return MPI_Ssend(buf, count, t, dest, tag, comm);
    case OP_RSEND: return MPI_Rsend(buf, count, t, dest, tag, comm);
    case OP_ISEND: err = MPI_Isend(buf, count, t, dest, tag, comm, &r); break;
    case OP_ISSEND: err = MPI_Issend(buf, count, t, dest, tag, comm, &r); break;
    default: err = MPI_Irsend(buf, count, t, dest, tag, comm, &r); break;
    }
    return err != MPI_SUCCESS ? err : MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* The receive matching send_op(op): blocking MPI_Recv for even i (unless
 * a ready send comes), else MPI_Irecv (from MPI_ANY_SOURCE when any_src)
 * + MPI_Wait, with the ready send's empty message to src on tag + 1 once
 * the receive is posted. */
static int recv_op(int op, long i, void *buf, int count, MPI_Datatype t, int src, int any_src, int tag, MPI_Comm comm,
                   MPI_Status *st)
{
    MPI_Request r;
    int err;
    if (op != OP_RSEND && op != OP_IRSEND && i % 2 == 0) return MPI_Recv(buf, count, t, src, tag, comm, st);
    err = MPI_Irecv(buf, count, t, any_src ? MPI_ANY_SOURCE : src, tag, comm, &r);
    if (err == MPI_SUCCESS && (op == OP_RSEND || op == OP_IRSEND)) err = MPI_Send(NULL, 0, MPI_BYTE, src, tag + 1, comm);
    return err != MPI_SUCCESS ? err : MPI_Wait(&r, st);
}

#endif
