/* SPDX-License-Identifier: BSD-3-Clause */
/* A watchdog for the OpenCL tests: a hang becomes a named failure.
 * wd_arm() starts an alarm of MPIACC_TEST_WATCHDOG seconds (set per test
 * in CMakeLists.txt below the CTest timeout; default 50, 0 = none); when it
 * fires, the program prints its name, rank and last step (wd_step) to
 * stderr and exits with status 124.  wd_step also prints the step to
 * stderr (unbuffered) when `loud` is set, so a hang can be located. */
#ifndef MPIACC_OCL_WATCHDOG_H_INCLUDED
#define MPIACC_OCL_WATCHDOG_H_INCLUDED

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *volatile wd_where = "start";
static char wd_prog[64] = "test";
static int wd_rank = -1;
static int wd_secs = 50;

static void wd_put(const char *s) { (void)!write(2, s, strlen(s)); }

static void wd_fire(int sig)
{
    char n[16];
    int r = wd_rank < 0 ? 0 : wd_rank, k = 0;
    char d[12];
    (void)sig;
    do d[k++] = (char)('0' + r % 10); while ((r /= 10) && k < 11);
    for (int i = 0; i < k; i++) n[i] = d[k - 1 - i];
    n[k] = 0;
    wd_put("\nWATCHDOG: ");
    wd_put(wd_prog);
    wd_put(" rank ");
    wd_put(n);
    wd_put(" made no progress past step \"");
    wd_put((const char *)wd_where);
    wd_put("\" before the watchdog expired (hang): failing\n");
    _exit(124);
}

static void wd_arm(const char *prog, int rank)
{
    const char *e = getenv("MPIACC_TEST_WATCHDOG");
    const char *slash = strrchr(prog, '/');
    snprintf(wd_prog, sizeof wd_prog, "%s", slash ? slash + 1 : prog);
    wd_rank = rank;
    if (e && *e) wd_secs = atoi(e);
    if (wd_secs <= 0) return;
    signal(SIGALRM, wd_fire);
    alarm((unsigned)wd_secs);
}

static void wd_step(const char *what, int loud)
{
    wd_where = what;
    if (loud) fprintf(stderr, "[rank %d] %s\n", wd_rank, what);
}

#endif
