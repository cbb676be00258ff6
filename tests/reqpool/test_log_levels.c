/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * What each MPIACC_LOG level prints (2 ranks; run once per level with the
 * level as argument and MPIACC_LOG set to it).  The program captures its own
 * stderr from MPI_Init to after MPI_Finalize and checks:
 *   warn:  nothing (the same misuse, an invalid MPIACC_BUF_TYPE, twice,
 *          fails under MPI_ERRORS_RETURN: its code says it); nothing per
 *          operation, no summary;
 *   info:  the misuse once, naming the call, the path line of the first
 *          pooled operation and the MPI_Finalize summary; nothing per
 *          operation;
 *   debug: the misuse every time, each operation's call line and its
 *          transitions (sent / receive posted, completed).
 */
#include <stdio.h>
#include <string.h>

#include "pool_util.h"
#include "stderr_capture.h"

static int count(const char *log, const char *what)
{
    int n = 0;
    for (const char *p = log; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

int main(int argc, char **argv)
{
    const char *level = argc > 1 ? argv[1] : "warn";
    int rank, bad = 0, buf[32], dbg = !strcmp(level, "debug"), info = dbg || !strcmp(level, "info");
    atomic_int gate = 1;
    stderr_capture_t cap;
    MPI_Datatype t, wrong;
    char *log;

    stderr_capture_begin(&cap);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    t = pool_type(32, 0, &gate);
    MPI_Type_contiguous(32, MPI_INT, &wrong);
    MPI_Type_commit(&wrong);
    /* bypasses the check MPI_Type_set_attr makes, so the calls meet the bad value */
    PMPI_Type_set_attr(wrong, MPIACC_BUF_TYPE, (void *)(intptr_t)42);
    for (int i = 0; i < 2; i++)
        if (MPI_Send(buf, 1, wrong, 1 - rank, 0, MPI_COMM_WORLD) == MPI_SUCCESS) bad = 1;
    fill_ints(buf, 32, 1);
    if (rank == 0) MPI_Send(buf, 1, t, 1, 3, MPI_COMM_WORLD);
    else MPI_Recv(buf, 1, t, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    MPI_Type_free(&wrong);
    MPI_Finalize();
    log = stderr_capture_end(&cap);
    if (!log) return 1;
#define EXPECT(cond_)                                                                          \
    do {                                                                                       \
        if (!(cond_)) {                                                                        \
            printf("rank %d, MPIACC_LOG=%s: check failed: %s\n", rank, level, #cond_);         \
            bad = 1;                                                                           \
        }                                                                                      \
    } while (0)
    /* An error raised under MPI_ERRORS_RETURN prints nothing (the returned
     * code's string says it all) unless logging asks: once per cause at
     * info, every time at debug, naming the call. */
    EXPECT(count(log, "invalid MPIACC_BUF_TYPE value") == (dbg ? 2 : info ? 1 : 0));
    EXPECT(count(log, "] error: MPI_Send(buf=") == (dbg ? 2 : info ? 1 : 0));
    EXPECT(count(log, "[mpiacc warn rank") == 0);
    EXPECT((count(log, rank == 0 ? "path: host sends go through the staged protocol"
                                 : "path: host receives go through the staged protocol") == 1) == info);
    EXPECT((count(log, "summary: 1 operation(s) completed") == 1) == info);
    EXPECT((count(log, "summary: host/staged: ") == 1) == info);
    EXPECT((count(log, rank == 0 ? ": call: send to 1, tag 3, 1 x datatype = 128 bytes, host backend, staged"
                                 : ": call: receive from 0, tag 3, 1 x datatype = 128 bytes, host backend, staged") ==
            1) == dbg);
    EXPECT((count(log, rank == 0 ? "READY -> IN_FLIGHT: sent" : "NEW -> IN_FLIGHT: receive posted") == 1) == dbg);
    EXPECT((count(log, "-> DONE: completed (") == 1) == dbg);
    printf("rank %d log_levels %s: %s\n", rank, level, bad ? "FAILED" : "ok");
    free(log);
    return bad;
}
