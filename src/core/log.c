/* core/log.c: the MPIACC_LOG logger, the only place the library prints. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "env.h"

int mpiacc_log_level = MPIACC_LOG_WARN;

/* MPIACC_LOG=off|warn|info|debug: the words' indices are the levels. */
void mpiacc_log_init(void) { mpiacc_log_level = mpiacc_env_enum("MPIACC_LOG"); }

void mpiacc_log_write(int level, const char *fmt, ...)
{
    static const char *names[] = {"", "warn", "info", "debug"};
    char line[1024];
    int rank = -1, inited = 0, finalized = 0;
    va_list ap;

    PMPI_Initialized(&inited);
    PMPI_Finalized(&finalized);
    if (inited && !finalized) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* one fprintf per line so that lines of different threads do not mix */
    fprintf(stderr, "[mpiacc %s rank %d] %s\n", names[level & 3], rank, line);
}
