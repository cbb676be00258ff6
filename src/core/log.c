/* SPDX-License-Identifier: BSD-3-Clause */
/* core/log.c: the MPIACC_LOG logger, the only place the library prints. */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "env.h"

int mpiacc_log_level = MPIACC_LOG_WARN;

/* MPIACC_LOG=off|warn|info|debug (default warn): the words' indices are the levels. */
void mpiacc_log_init(void) { mpiacc_log_level = mpiacc_env_enum("MPIACC_LOG"); }

/* The process's rank in MPI_COMM_WORLD, from MPI_Init on (and after
 * MPI_Finalize): lines printed then name it; before, "rank -1". */
static int world_rank = -1;

void mpiacc_log_start(void)
{
    int inited = 0;
    PMPI_Initialized(&inited);
    if (inited) PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
}

static void write_line(int level, const char *line)
{
    static const char *names[] = {"", "warn", "info", "debug"};
    /* one fprintf per line so that lines of different threads do not mix */
    fprintf(stderr, "[mpiacc %s rank %d] %s\n", names[level & 3], world_rank, line);
}

void mpiacc_log_error(const char *reason, const char *call)
{
    /* MPI's abort follows (the error handler is fatal): the user's call
     * first, then where */
    if (mpiacc_log_level < MPIACC_LOG_WARN) return;
    fprintf(stderr, "mpiacc: %s\nmpiacc:   on rank %d, in %s\n", reason, world_rank, call);
}

/* Causes already reported by mpiacc_log_once: hashes of their keys.  When
 * the table is full, further causes are reported every time (never lost). */
#define ONCE_SLOTS 256
static uint64_t once_seen[ONCE_SLOTS];
static int once_n;
static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 the first time key is seen. */
static int first_time(const char *key)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    int first = 1;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 1099511628211ull;
    pthread_mutex_lock(&once_lock);
    for (int i = 0; i < once_n; i++)
        if (once_seen[i] == h) {
            first = 0;
            break;
        }
    if (first && once_n < ONCE_SLOTS) once_seen[once_n++] = h;
    pthread_mutex_unlock(&once_lock);
    return first;
}

void mpiacc_log_once(int level, const char *key, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (level > mpiacc_log_level) return;
    /* at debug level every occurrence is worth a line */
    if (mpiacc_log_level < MPIACC_LOG_DEBUG && !first_time(key)) return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    write_line(level, line);
}

void mpiacc_log_write(int level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    write_line(level, line);
}
