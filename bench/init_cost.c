/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/init_cost: what MPI_Init + MPI_Finalize cost with mpiacc linked in,
 * against plain MPICH in the same run.  Each run starts a tiny program that
 * only calls MPI_Init and MPI_Finalize, under mpiexec, as a child process,
 * in four configurations interleaved run by run (so that drift hits them
 * alike): plain MPICH (init_cost_plain, not linked with mpiacc), mpiacc
 * (this program), mpiacc with MPIACC_DISABLE=1, and mpiacc with
 * MPIACC_EAGER_INIT=1 (every backend started in MPI_Init, the cost the lazy
 * start avoids).  Prints the median wall time of the whole launch and of
 * MPI_Init + MPI_Finalize inside the program (slowest rank), and their
 * ratios to plain MPICH.
 *
 *   bench/init_cost [--runs N] [--np N] [--help]    (default 10 runs, 2 ranks)
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "cli.h"

#ifndef INIT_COST_MPIEXEC
#define INIT_COST_MPIEXEC "mpiexec"
#endif

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* The measured program: prints the time of MPI_Init + MPI_Finalize. */
static int child(int argc, char **argv)
{
    double t0 = now_ms(), t1, t2;
    MPI_Init(&argc, &argv);
    t1 = now_ms();
    MPI_Finalize();
    t2 = now_ms();
    printf("init_ms %.3f finalize_ms %.3f\n", t1 - t0, t2 - t1);
    return 0;
}

typedef struct {
    const char *name;
    const char *exe;
    const char *env; /* a variable set to 1, or NULL */
    double *wall, *inproc;
} config_t;

/* One launch: mpiexec -n np exe --child; returns 0 on success. */
static int launch(const config_t *c, int np, double *wall, double *inproc)
{
    int fd[2], status;
    char nps[16], line[256];
    double t0 = now_ms(), worst = 0;
    pid_t pid;
    FILE *f;

    if (pipe(fd) != 0) return -1;
    snprintf(nps, sizeof nps, "%d", np);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        char *args[] = {(char *)INIT_COST_MPIEXEC, "-n", nps, (char *)c->exe, "--child", NULL};
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        unsetenv("MPIACC_DISABLE");
        unsetenv("MPIACC_EAGER_INIT");
        if (c->env) setenv(c->env, "1", 1);
        execvp(args[0], args);
        _exit(127);
    }
    close(fd[1]);
    f = fdopen(fd[0], "r");
    while (f && fgets(line, sizeof line, f)) {
        double i, fin;
        if (sscanf(line, "init_ms %lf finalize_ms %lf", &i, &fin) == 2 && i + fin > worst) worst = i + fin;
    }
    if (f) fclose(f);
    waitpid(pid, &status, 0);
    *wall = now_ms() - t0;
    *inproc = worst;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    int runs = 10, np = 2;
    char self[PATH_MAX], plain[PATH_MAX + 32];
    ssize_t n;
    config_t cfg[4];
    double base_wall, base_in;

    cli_opt_t opts[] = {
        {"runs", CLI_INT, &runs, "launches per configuration", NULL, CLI_POSITIVE},
        {"np", CLI_INT, &np, "ranks of each launch", NULL, CLI_POSITIVE},
    };
    /* --child: the measured program, started by launch() */
    if (argc == 2 && !strcmp(argv[1], "--child")) return child(argc, argv);
    CLI_PARSE(argc, argv, "init_cost", "init_cost [options]",
              "Times MPI_Init + MPI_Finalize of a small program under mpiexec in four configurations,\n"
              "interleaved run by run: plain MPICH, mpiacc, mpiacc with MPIACC_DISABLE=1, mpiacc\n"
              "with MPIACC_EAGER_INIT=1; prints medians and their ratios to plain MPICH.",
              opts);
    if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0) {
        fprintf(stderr, "%s: cannot find its own executable\n", argv[0]);
        return 1;
    }
    self[n] = 0;
    snprintf(plain, sizeof plain, "%s_plain", self);
    cfg[0] = (config_t){"plain MPICH", plain, NULL, NULL, NULL};
    cfg[1] = (config_t){"mpiacc", self, NULL, NULL, NULL};
    cfg[2] = (config_t){"mpiacc, MPIACC_DISABLE=1", self, "MPIACC_DISABLE", NULL, NULL};
    cfg[3] = (config_t){"mpiacc, MPIACC_EAGER_INIT=1", self, "MPIACC_EAGER_INIT", NULL, NULL};
    for (int c = 0; c < 4; c++) {
        cfg[c].wall = calloc((size_t)runs, sizeof(double));
        cfg[c].inproc = calloc((size_t)runs, sizeof(double));
        if (!cfg[c].wall || !cfg[c].inproc) return 1;
    }
    for (int r = 0; r < runs; r++)
        for (int c = 0; c < 4; c++)
            if (launch(&cfg[c], np, &cfg[c].wall[r], &cfg[c].inproc[r]) != 0) {
                fprintf(stderr, "%s: run %d of \"%s\" (%s) failed\n", argv[0], r, cfg[c].name, cfg[c].exe);
                return 1;
            }
    printf("MPI_Init + MPI_Finalize, %d ranks, median of %d runs\n", np, runs);
    printf("%-30s %12s %8s %16s %8s\n", "configuration", "launch ms", "ratio", "init+fin ms", "ratio");
    base_wall = median(cfg[0].wall, runs);
    base_in = median(cfg[0].inproc, runs);
    for (int c = 0; c < 4; c++) {
        double w = median(cfg[c].wall, runs), in = median(cfg[c].inproc, runs);
        printf("%-30s %12.1f %8.2f %16.1f %8.2f\n", cfg[c].name, w, w / base_wall, in, in / base_in);
        free(cfg[c].wall);
        free(cfg[c].inproc);
    }
    return 0;
}
