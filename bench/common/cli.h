/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/common/cli: the one command-line parser of the programs under
 * bench/, examples/ and tools/ (getopt_long underneath; not part of
 * libmpiacc).
 *
 * A program describes its options in a table and calls cli_parse() BEFORE
 * MPI_Init, so that it behaves the same with and without mpiexec:
 *   --help, -h        prints the usage on stdout (rank 0 of an mpiexec
 *                     launch only) and exits 0 without starting MPI
 *   unknown option,   prints "<prog>: <why>" and the usage on stderr and
 *   malformed value   exits 2
 * Options take their value as "--name value" or "--name=value".
 */
#ifndef MPIACC_BENCH_CLI_H_INCLUDED
#define MPIACC_BENCH_CLI_H_INCLUDED

#include <stdio.h>

typedef enum {
    CLI_FLAG,   /* no value; *(int *)dest = 1                               */
    CLI_INT,    /* *(int *)dest, within [lo, hi]                            */
    CLI_SIZE,   /* *(long long *)dest, bytes with optional K/M/G suffix, [lo, hi] */
    CLI_DOUBLE, /* *(double *)dest, within [lo, hi]                         */
    CLI_STRING, /* *(const char **)dest                                     */
    CLI_FILE,   /* the same, shown as FILE in the usage                     */
    CLI_CHOICE, /* *(int *)dest = index of the value in choices ("a|b|c")   */
    CLI_PAIR,   /* ((int *)dest)[0..1] from "a,b", both within [lo, hi]     */
    CLI_SIZES   /* *(cli_sizes_t *)dest from "a,b,...": BYTES values (K/M/G
                 * suffixes), each within [lo, hi], at most CLI_SIZES_MAX  */
} cli_kind_t;

#define CLI_SIZES_MAX 32
typedef struct cli_sizes {
    int n;
    long long v[CLI_SIZES_MAX];
} cli_sizes_t;

typedef struct cli_opt {
    const char *name;    /* long name without "--"                        */
    cli_kind_t kind;
    void *dest;
    const char *help;    /* one line; the default is printed after it     */
    const char *choices; /* CLI_CHOICE                                    */
    double lo, hi;       /* range of numbers; lo > hi: no range           */
} cli_opt_t;

/* Range helpers for the table. */
#define CLI_ANY 1, 0
#define CLI_POSITIVE 1, 2147483647.0

typedef struct cli_prog {
    const char *name;     /* program name, as in the usage line            */
    const char *synopsis; /* e.g. "mpiexec -n 2 host_overhead [options]"   */
    const char *about;    /* what it does (one or more lines)              */
    cli_opt_t *opts;
    int nopts;
} cli_prog_t;

/* The options' table entry of the usual --csv FILE, and a program's
 * description from its table (an array). */
#define CLI_OPT_CSV(dest_) {"csv", CLI_FILE, (dest_), "also write the rows to this CSV file", NULL, CLI_ANY}
#define CLI_PROG(name_, synopsis_, about_, opts_) \
    {(name_), (synopsis_), (about_), (opts_), (int)(sizeof(opts_) / sizeof((opts_)[0]))}

/* cli_parse of the program CLI_PROG describes. */
#define CLI_PARSE(argc_, argv_, name_, synopsis_, about_, opts_)                \
    do {                                                                       \
        const cli_prog_t cli_prog_ = CLI_PROG(name_, synopsis_, about_, opts_); \
        cli_parse(&cli_prog_, (argc_), (argv_));                               \
    } while (0)

/* Parses argv (returns only on success; --help and errors exit, see
 * above).  The defaults shown by --help are the values in *dest before the
 * call. */
void cli_parse(const cli_prog_t *p, int argc, char **argv);

/* Prints the usage (to f). */
void cli_usage(const cli_prog_t *p, FILE *f);

/* Non-zero when this process would be rank 0 of an mpiexec launch (or runs
 * without mpiexec); usable before MPI_Init. */
int cli_rank0(void);

#endif
