/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/env: the one parser of the MPIACC_* environment variables.
 *
 * env.c holds ONE table of every variable the library reads (name, kind,
 * default, accepted values, meaning).  The environment is read once, at the
 * first call of any function here (thread-safe; usable before MPI_Init),
 * and cached.  A value that does not parse is reported by one warning
 * through the logger naming the variable and the accepted values, and the
 * default is used.  Kinds:
 *   bool   1/0, true/false, yes/no, on/off (any case)
 *   enum   one of the listed words (any case); the functions return its
 *          index in the list
 *   size   a byte count with an optional K, M or G suffix (powers of 1024)
 *   int    a decimal integer within the table's range
 * An empty value counts as unset.  When the environment is read, every
 * MPIACC_* name in it (prefix in any case) that the table lacks gives one
 * warning naming the closest name of the table (a retired variable: why it
 * is gone); the tests' and benchmarks' prefixes MPIACC_TEST_ and
 * MPIACC_BENCH_ and the scripts' own names (env.c) are left alone.
 * Asking for a name the table lacks, or
 * for the wrong kind, is a programming error: the functions return 0 and
 * log a warning (tests/tools/check_env.sh keeps the call sites and the
 * table in step).
 */
#ifndef MPIACC_CORE_ENV_H_INCLUDED
#define MPIACC_CORE_ENV_H_INCLUDED

#include <stddef.h>

typedef enum { MPIACC_ENV_BOOL, MPIACC_ENV_ENUM, MPIACC_ENV_SIZE, MPIACC_ENV_INT } mpiacc_env_kind_t;

/* One variable, as mpiacc-info prints it. */
typedef struct mpiacc_env_desc {
    const char *name;
    mpiacc_env_kind_t kind;
    const char *kind_name; /* "bool", "enum", "size", "int"                     */
    const char *def;       /* default, as text                                  */
    const char *accepted;  /* accepted values, as text                          */
    const char *meaning;   /* one line                                          */
    const char *raw;       /* value in the environment; NULL when unset/empty   */
    int valid;             /* 0 when raw did not parse (the default is used)    */
    long long value;       /* the value in effect (enum: index; bool: 0/1)      */
} mpiacc_env_desc_t;

int mpiacc_env_bool(const char *name);
int mpiacc_env_enum(const char *name);
size_t mpiacc_env_size(const char *name);
long long mpiacc_env_int(const char *name);

/* The warnings of the first read (bad values, unknown names) are printed
 * at once, unless mpiacc_env_hold() was called before it: they are then
 * kept until mpiacc_env_release(print), which prints them when print is
 * non-zero and forgets them.  MPI_Init holds them across PMPI_Init and
 * lets rank 0 print them, with its rank: one of each per job. */
void mpiacc_env_hold(void);
void mpiacc_env_release(int print);

/* Iteration over the table: 0 <= i < mpiacc_env_count().  Returns 0 on
 * success, -1 when i is out of range. */
int mpiacc_env_count(void);
int mpiacc_env_info(int i, mpiacc_env_desc_t *d);

#endif
