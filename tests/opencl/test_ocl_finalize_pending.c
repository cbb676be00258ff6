/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * MPI_Finalize with cl_mem operations pending (2 ranks).  Rank 0's
 * MPI_Isend waits for a kernel held back by a user event that a thread
 * completes 100 ms after MPI_Finalize starts; its request was freed (MPI_Request_free).  Rank 1
 * posted the matching MPI_Irecv (request freed) and a receive nothing ever
 * matches (request kept).  MPI_Finalize succeeds on both ranks after the
 * GPU work finishes: it warns about the pending operations, the message is
 * delivered (rank 1 reads the data after MPI_Finalize), the unmatched
 * receive is cancelled, and no operation or staging memory is left.  Every
 * step is printed to stderr (the watchdog names the last step of a hang).
 */
#include "finalize_pending.h"
#include "ocl_fixture.h"
#include "ocl_types.h"
#include "reqpool/reqpool.h"
#include "protocol/protocol.h"

#define N 1024
static cl_event gate;

static void open_gate(void)
{
    clSetUserEventStatus(gate, CL_COMPLETE);
}

int main(int argc, char **argv)
{
    int rank, err, bad = 0, *v = calloc(N, sizeof *v);
    cl_int e;
    cl_event filled = NULL;
    cl_mem m, m2;
    MPI_Datatype t;
    MPI_Request r, kept = MPI_REQUEST_NULL;
    pthread_t th;
    char *log;
    const mpiacc_rp_finalize_report_t *rep = &mpiacc_rp_last_finalize;
    mpiacc_util_pool_stats_t ops, staging;

    fx_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wd_step("start: user event, buffers", 1);
    gate = clCreateUserEvent(fx.ctx, &e);
    m = fx_buf(N * sizeof *v, v);
    m2 = fx_buf(N * sizeof *v, v);
    t = cl_ints(N, fx.qin, NULL);
    if (rank == 0) {
        wd_step("rank 0: fill kernel gated on the user event, MPI_Isend, MPI_Request_free", 1);
        fx_fill(fx.qin, m, N, 5, 0, gate, &filled);
        MPI_Isend(m, 1, t, 1, 0, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        fp_gate_start(&th, 100, open_gate);
    } else {
        wd_step("rank 1: MPI_Irecv (freed) and an unmatched MPI_Irecv (kept)", 1);
        clSetUserEventStatus(gate, CL_COMPLETE); /* unused on this rank */
        MPI_Irecv(m, 1, t, 0, 0, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        MPI_Irecv(m2, 1, t, 0, 3, MPI_COMM_WORLD, &kept);
    }
    MPI_Type_free(&t);
    MPI_Barrier(MPI_COMM_WORLD);
    wd_step("MPI_Finalize with operations pending", 1);
    err = fp_finalize(&log);
    wd_step("MPI_Finalize returned; checking", 1);
    CHECK(err == MPI_SUCCESS);
    CHECK(log && strstr(log, "MPI_Finalize called with") && strstr(log, "not complete"));
    CHECK(rep->abandoned == 0);
    CHECK(rep->busy_kinds == 0);
    if (rank == 0) {
        pthread_join(th, NULL);
        CHECK(rep->pending == 1);
        CHECK(rep->completed == 1);
    } else {
        /* the matched receive is pending too unless its message beat
         * this rank into MPI_Finalize (100 ms) */
        CHECK(rep->pending == 2 || rep->pending == 1);
        CHECK(rep->completed == rep->pending - 1);
        CHECK(rep->cancelled == 1);
        CHECK(rep->unfreed == 1);
        fx_read(m, N * sizeof *v, v);
        for (int i = 0; i < N; i++)
            if (v[i] != 5) {
                CHECK(v[i] == 5);
                break;
            }
    }
    mpiacc_rp_pool_stats(&ops);
    mpiacc_proto_staging_stats(MPIACC_KIND_OPENCL, &staging);
    CHECK(ops.cur_objs == 0);
    CHECK(staging.cur_bytes == 0);
    wd_step("releasing the OpenCL objects", 1);
    clFinish(fx.qin);
    clReleaseMemObject(m);
    clReleaseMemObject(m2);
    clReleaseEvent(gate);
    if (filled) clReleaseEvent(filled);
    free(v);
    free(log);
    fx_release();
    alarm(0);
    (void)kept;
    printf("rank %d ocl_finalize_pending: %s (pending %d, completed %d, cancelled %d)\n", rank,
           bad ? "FAILED" : "ok", rep->pending, rep->completed, rep->cancelled);
    return bad;
}
