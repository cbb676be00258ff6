/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * queue_semantics: OpenCL queue semantics (MPI-ACC, Aji et al., Fig 8).
 * 2 ranks.  Rank 0 enqueues an asynchronous host->device write of W bytes
 * on a queue, then MPI_Sends an independent cl_mem (tagged with the same
 * queue) to rank 1.  With an in-order queue mpiacc must wait for the write
 * (the send's data depends on everything enqueued before it); with an
 * out-of-order queue it need not.  Sweep W; baselines in the same run: the
 * write alone and the send alone.
 * Usage: mpiexec -n 2 queue_semantics [--msg BYTES] [--max-mib 64] [--reps 5] [--csv FILE] [--help]
 */
#include "ocl_common.h"

/* Time (s) of MPI_Send of msg from sbuf after a W-byte write on q (W = 0:
 * no write); the write is waited for afterwards. */
static double send_after_write(cl_command_queue q, cl_mem wbuf, const char *src, size_t w, cl_mem sbuf,
                               MPI_Datatype t)
{
    double t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = bench_now();
    if (w) {
        OCL_OK(clEnqueueWriteBuffer(q, wbuf, CL_FALSE, 0, w, src, 0, NULL, NULL));
        OCL_OK(clFlush(q));
    }
    MPI_Send(sbuf, 1, t, 1, 0, MPI_COMM_WORLD);
    t0 = bench_now() - t0;
    OCL_OK(clFinish(q));
    return t0;
}

static double write_alone(cl_command_queue q, cl_mem wbuf, const char *src, size_t w)
{
    double t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = bench_now();
    if (w) OCL_OK(clEnqueueWriteBuffer(q, wbuf, CL_FALSE, 0, w, src, 0, NULL, NULL));
    OCL_OK(clFinish(q));
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    int rank, size, reps = 5, have = 0, maxmib = 64;
    long long msgll = 1 << 20;
    size_t msg;
    const char *csvpath = NULL;
    FILE *csv = NULL;
    bocl_t b;

    cli_opt_t opts[] = {
        {"msg", CLI_SIZE, &msgll, "bytes of the message sent after the write", NULL, 1, 1 << 30},
        {"max-mib", CLI_INT, &maxmib, "largest write (MiB); writes of 0, 1, 4, 16, ... MiB", NULL, 1, 4096},
        {"reps", CLI_INT, &reps, "repetitions per point (median; at most 64)", NULL, 1, 64},
        CLI_OPT_CSV(&csvpath),
    };
    CLI_PARSE(argc, argv, "queue_semantics", "mpiexec -n 2 queue_semantics [options]",
              "MPI-ACC Fig 8: MPI_Send of a cl_mem tagged with an in-order or an out-of-order\n"
              "queue behind an independent write, against the send alone, same run.", opts);
    msg = (size_t)msgll;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (!rank) fprintf(stderr, "queue_semantics: run with exactly 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    memset(&b, 0, sizeof b);
    if (rank == 0) have = bocl_init(&b);
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!have) {
        if (!rank) printf("SKIPPED: no OpenCL device\n");
        MPI_Finalize();
        return 0;
    }

    size_t maxw = (size_t)maxmib << 20, sizes[16];
    int ns = 0;
    sizes[ns++] = 0;
    for (size_t w = 1 << 20; w <= maxw && ns < 16; w *= 4) sizes[ns++] = w;

    if (rank == 1) {
        char *host = malloc(msg);
        for (int i = 0; i < ns; i++)
            for (int r = 0; r < reps; r++)
                for (int k = 0; k < 4; k++) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    if (k < 3) MPI_Recv(host, (int)msg, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
        free(host);
        MPI_Finalize();
        return 0;
    }

    cl_command_queue qin = bocl_queue(&b, 0), qooo = bocl_queue(&b, 1);
    cl_mem wbuf = bocl_buf(&b, maxw), sbuf = bocl_buf(&b, msg);
    char *src = malloc(maxw ? maxw : 1);
    MPI_Datatype tin = bocl_type(msg, qin), tooo = bocl_type(msg, qooo);
    memset(src, 1, maxw);
    bocl_work(&b, qin, sbuf, msg, 1, NULL); /* give the message defined contents */
    clFinish(qin);
    csv = bench_csv_open(csvpath,
                         "write_bytes,msg_bytes,write_ms,send_alone_ms,send_inorder_ms,send_ooo_ms,inorder_over_ooo");
    bench_header("queue_semantics", "MPI-ACC Fig 8, send behind a write on an in-order vs out-of-order queue",
                 "OpenCL", b.name);
    printf("# message %zu B, %d reps (medians)\n", msg, reps);
    printf("%12s %10s %12s %12s %12s %10s\n", "write (B)", "write ms", "alone ms", "inorder ms", "ooo ms",
           "inord/ooo");
    for (int i = 0; i < ns; i++) {
        double vw[64], va[64], vi[64], vo[64];
        for (int r = 0; r < reps; r++) {
            va[r] = send_after_write(qin, wbuf, src, 0, sbuf, tin);
            vi[r] = send_after_write(qin, wbuf, src, sizes[i], sbuf, tin);
            vo[r] = send_after_write(qooo, wbuf, src, sizes[i], sbuf, tooo);
            vw[r] = write_alone(qin, wbuf, src, sizes[i]);
        }
        double mw = 1e3 * bench_median(vw, (size_t)reps), ma = 1e3 * bench_median(va, (size_t)reps);
        double mi = 1e3 * bench_median(vi, (size_t)reps), mo = 1e3 * bench_median(vo, (size_t)reps);
        printf("%12zu %10.3f %12.3f %12.3f %12.3f %10.2f\n", sizes[i], mw, ma, mi, mo, mi / mo);
        if (csv) fprintf(csv, "%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.4f\n", sizes[i], msg, mw, ma, mi, mo, mi / mo);
    }
    if (csv) fclose(csv);
    MPI_Type_free(&tin);
    MPI_Type_free(&tooo);
    free(src);
    clReleaseMemObject(wbuf);
    clReleaseMemObject(sbuf);
    clReleaseCommandQueue(qin);
    clReleaseCommandQueue(qooo);
    bocl_fini(&b);
    MPI_Finalize();
    return 0;
}
