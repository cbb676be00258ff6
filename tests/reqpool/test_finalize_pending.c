/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * MPI_Finalize with operations pending (2 ranks, MPIACC_FINALIZE_TIMEOUT=1):
 * it succeeds, warns, finishes what can finish, cancels receives nothing
 * matched, abandons what cannot finish, frees requests the application
 * never freed, and leaves no operation or staging memory behind.
 *
 *  rank 0: a send gated by a thread until 50 ms into MPI_Finalize (its request freed): delivered
 *          during MPI_Finalize; a send gated for ever (freed): abandoned
 *          after the timeout.
 *  rank 1: the matching receive (freed): its data arrives during
 *          MPI_Finalize; a receive never matched (freed) and one never
 *          matched and kept by the application: both cancelled.
 */
#include <string.h>

#include "pool_util.h"
#include "finalize_pending.h"

#define N 64
static atomic_int gate_soon, gate_never;

static void open_gate(void)
{
    atomic_store(&gate_soon, 1);
}

int main(int argc, char **argv)
{
    int rank, provided, bad = 0, out[N], in[N], other[N], err;
    MPI_Request r, kept;
    MPI_Datatype t_soon, t_never, t_plain;
    pthread_t th;
    char *log;
    const mpiacc_rp_finalize_report_t *rep = &mpiacc_rp_last_finalize;
    mpiacc_util_pool_stats_t ops, staging;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    t_soon = pool_type(N, 0, &gate_soon);
    t_never = pool_type(N, 0, &gate_never);
    t_plain = pool_type(N, 0, NULL);
    fill_ints(out, N, 7);
    memset(in, 0, sizeof in);
    if (rank == 0) {
        MPI_Isend(out, 1, t_soon, 1, 1, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        MPI_Isend(out, 1, t_never, 1, 9, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        CHECK(r == MPI_REQUEST_NULL);
        fp_gate_start(&th, 50, open_gate);
    } else {
        /* host-tagged without a gate still goes through the pool only with
         * an event: use the soon gate, open from the start here */
        atomic_store(&gate_soon, 1);
        MPI_Irecv(in, 1, t_soon, 0, 1, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        MPI_Irecv(other, 1, t_soon, 0, 5, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        MPI_Irecv(other, 1, t_soon, 0, 6, MPI_COMM_WORLD, &kept);
    }
    MPI_Type_free(&t_soon);
    MPI_Type_free(&t_never);
    MPI_Type_free(&t_plain);
    MPI_Barrier(MPI_COMM_WORLD);
    err = fp_finalize(&log);
    CHECK(err == MPI_SUCCESS);
    CHECK(log && strstr(log, "MPI_Finalize called with") && strstr(log, "not complete"));
    if (rank == 0) {
        pthread_join(th, NULL);
        CHECK(rep->pending == 2);
        CHECK(rep->completed == 1);
        CHECK(rep->abandoned == 1);
        CHECK(rep->cancelled == 0);
        CHECK(log && strstr(log, "abandoning"));
    } else {
        /* the matched receive is pending too unless its message beat this
         * rank into MPI_Finalize (50 ms) */
        CHECK(rep->pending == 3 || rep->pending == 2);
        CHECK(rep->completed == rep->pending - 2);
        CHECK(rep->cancelled == 2);
        CHECK(rep->abandoned == 0);
        CHECK(rep->unfreed == 1); /* `kept` */
        for (int i = 0; i < N; i++) CHECK(in[i] == out[i] || (i = N, 0));
    }
    /* nothing left: every operation given back, staging drained */
    mpiacc_rp_pool_stats(&ops);
    mpiacc_proto_staging_stats(MPIACC_KIND_HOST, &staging);
    CHECK(ops.cur_objs == 0);
    CHECK(staging.cur_bytes == 0);
    printf("rank %d finalize_pending: %s (pending %d, completed %d, cancelled %d, abandoned %d, unfreed %d)\n",
           rank, bad ? "FAILED" : "ok", rep->pending, rep->completed, rep->cancelled, rep->abandoned, rep->unfreed);
    free(log);
    (void)kept;
    return bad;
}
