#define _POSIX_C_SOURCE 200809L
/*
 * MPI_Finalize with cl_mem operations pending (2 ranks): rank 0's MPI_Isend
 * waits for a kernel held back by a user event, rank 1's MPI_Irecv waits
 * for that message.  MPI_Finalize returns an MPI_ERR_OTHER-class error
 * naming the pending operations on both ranks and leaves MPI usable; once
 * the kernel runs and the operations complete, MPI_Finalize succeeds.
 * Every step is printed to stderr (a hang is then located; the watchdog
 * names the last step).
 */
#include "ocl_fixture.h"
#include "ocl_types.h"

#define N 1024

int main(int argc, char **argv)
{
    int rank, err, cls, len, bad = 0, *v = calloc(N, sizeof *v);
    char msg[MPI_MAX_ERROR_STRING] = "";
    cl_int e;
    cl_event gate, filled = NULL;
    double t0;
    int flag = 0, said = 0;
    cl_mem m;
    MPI_Datatype t;
    MPI_Request r;

    fx_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wd_step("start: user event, buffer", 1);
    gate = clCreateUserEvent(fx.ctx, &e);
    m = fx_buf(N * sizeof *v, v);
    t = cl_ints(N, fx.qin, NULL);
    if (rank == 0) {
        wd_step("rank 0: fill kernel gated on the user event", 1);
        fx_fill(fx.qin, m, N, 5, 0, gate, &filled);
        wd_step("rank 0: MPI_Isend", 1);
        MPI_Isend(m, 1, t, 1, 0, MPI_COMM_WORLD, &r);
    } else {
        wd_step("rank 1: MPI_Irecv", 1);
        MPI_Irecv(m, 1, t, 0, 0, MPI_COMM_WORLD, &r);
    }
    wd_step("MPI_Finalize with the operation pending (must refuse)", 1);
    err = MPI_Finalize();
    cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS) {
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
    }
    if (cls != MPI_ERR_OTHER || !strstr(msg, "pending")) {
        fprintf(stderr, "rank %d: MPI_Finalize with a pending operation returned class %d: %s\n", rank, cls, msg);
        bad = 1;
    }
    wd_step("MPI_Finalize refused; opening the gate (rank 0)", 1);
    /* every rank completes its user event: NVIDIA's OpenCL was seen to hang
     * in the final context release while an (unused) user event of the
     * context was never completed */
    clSetUserEventStatus(gate, CL_COMPLETE);
    wd_step("MPI_Test until complete", 1);
    /* Polled, so that a stall is described (the state of the gate and of
     * the gated kernel) before the watchdog fires. */
    for (t0 = fx_now(); !flag;) {
        if (MPI_Test(&r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            bad = 1;
            break;
        }
        if (!flag && !said && fx_now() - t0 > 5) {
            cl_int sg = 99, sf = 99;
            clGetEventInfo(gate, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof sg, &sg, NULL);
            if (filled) clGetEventInfo(filled, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof sf, &sf, NULL);
            fprintf(stderr, "[rank %d] still pending after 5 s: gate status %d, gated kernel status %d "
                            "(0 complete, 1 running, 2 submitted, 3 queued)\n", rank, (int)sg, (int)sf);
            said = 1;
        }
    }
    wd_step("MPI_Wait done; checking the data", 1);
    if (rank == 1) {
        fx_read(m, N * sizeof *v, v);
        for (int i = 0; i < N; i++) bad |= v[i] != 5;
    }
    wd_step("MPI_Allreduce of the verdicts", 1);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Type_free(&t);
    wd_step("releasing the OpenCL objects", 1);
    clFinish(fx.qin);
    clReleaseMemObject(m);
    clReleaseEvent(gate);
    if (filled) clReleaseEvent(filled);
    free(v);
    clReleaseKernel(fx.fill);
    clReleaseKernel(fx.copy);
    clReleaseProgram(fx.prog);
    if (fx.qooo) clReleaseCommandQueue(fx.qooo);
    clReleaseCommandQueue(fx.qin);
    clReleaseContext(fx.ctx);
    wd_step("final MPI_Finalize", 1);
    if (MPI_Finalize() != MPI_SUCCESS) bad = 1;
    alarm(0);
    if (rank == 0) printf("ocl_finalize_pending: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
