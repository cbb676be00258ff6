/* SPDX-License-Identifier: BSD-3-Clause */
/* core/env.c: the table of MPIACC_* environment variables and their parser
 * (see env.h).  README.md's "Environment" table lists the same variables;
 * tests/tools/check_env.sh fails when the two disagree.  Also the names
 * mpiacc knows but does not read (retired ones, the tests' and scripts'),
 * for the warning about unknown MPIACC_* names. */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core.h"
#include "env.h"
#include "number.h"

typedef struct env_var {
    const char *name;
    mpiacc_env_kind_t kind;
    const char *def;      /* default, in the variable's own syntax */
    const char *accepted; /* enum: the words, '|'-separated; else a description */
    long long min, max;   /* size and int: range */
    const char *meaning;
} env_var_t;

#define SIZE_MAX_LL ((long long)1 << 40) /* 1024G; accepted_text says so */

static const env_var_t table[] = {
    /* library-wide */
    {"MPIACC_DISABLE", MPIACC_ENV_BOOL, "0", NULL, 0, 1,
     "forward every MPI call to MPI untouched (mpiacc does nothing)"},
    /* the one description of the levels: README.md's table and mpiacc.h say
     * the same words (tests/tools/check_env.sh) */
    {"MPIACC_LOG", MPIACC_ENV_ENUM, "warn", "off|warn|info|debug", 0, 0,
     "diagnostics on stderr: off = none; warn = misuse and environment warnings, each cause once (errors "
     "go to the error handler; under a fatal one mpiacc prints them first); info = + each error once, each "
     "path's first use, the transport chosen at MPI_Init and a summary per rank at MPI_Finalize; debug = + "
     "every error, MPI call and state transition"},
    {"MPIACC_EAGER_INIT", MPIACC_ENV_BOOL, "0", NULL, 0, 1,
     "start the device backends at MPI_Init (default: lazily, at the first tagged operation)"},
    {"MPIACC_FINALIZE_TIMEOUT", MPIACC_ENV_INT, "10", NULL, 0, 86400,
     "seconds MPI_Finalize lets pending operations finish before cancelling or abandoning them"},
    {"MPIACC_UVA", MPIACC_ENV_BOOL, "0", NULL, 0, 1,
     "pointer-query mode: an untagged buffer in CUDA device, managed or pinned memory takes the CUDA path "
     "(default-stream ordering); host answers cached per 4 KiB; starts the CUDA backend at MPI_Init"},
    {"MPIACC_TRANSPORT", MPIACC_ENV_ENUM, "auto", "auto|staged", 0, 0,
     "auto: CUDA device messages go to MPI as device memory where MPI's transport takes it (MPICH on a CUDA-enabled "
     "UCX netmod, decided at MPI_Init), else staged through host memory; staged: always staged (diagnosis)"},
    {"MPIACC_BATCH", MPIACC_ENV_BOOL, "1", NULL, 0, 1,
     "nonblocking device calls posted back to back start their packs together (one launch) at the thread's next "
     "MPI progress, e.g. as MPI_Waitall starts; 0: each pack starts in its own call (for a program that computes "
     "on the CPU between posting and its next MPI call)"},
    {"MPIACC_HOST_STAGING_MAX", MPIACC_ENV_SIZE, "64K", NULL, 0, SIZE_MAX_LL,
     "device messages of at most this many packed bytes that need staging (a non-contiguous layout, a receive "
     "whose dependency is pending) go through pinned host memory: copy engines and host bytes, no SM work "
     "queued behind the application's kernels; larger ones through device staging; 0: never"},
    {"MPIACC_DIRECT", MPIACC_ENV_BOOL, "0", NULL, 0, 1,
     "accepted and ignored: the former opt-in of the direct protocol (device messages need no setting now)"},
    {"MPIACC_IPC", MPIACC_ENV_BOOL, "1", NULL, 0, 1, "allow CUDA IPC (the IPC collective engine)"},
    {"MPIACC_IPC_CACHE", MPIACC_ENV_INT, "64", NULL, 0, 1 << 20, "cached CUDA IPC mappings per peer"},
    /* collectives */
    {"MPIACC_COLL_ENGINE", MPIACC_ENV_ENUM, "auto", "auto|nccl|ipc|staged", 0, 0,
     "engine of collectives on device buffers, per communicator (rank 0's setting): auto = NCCL, else (ranks "
     "sharing a GPU on one node) mpiacc's IPC collectives, else host staging; nccl / ipc / staged force one "
     "(staged where it cannot serve)"},
    {"MPIACC_COLL_CHECK", MPIACC_ENV_BOOL, "0", NULL, 0, 1,
     "check that every process of a collective passes device buffers or none (one small MPI_Allreduce per "
     "collective; a mismatch is MPI_ERR_ARG everywhere instead of a hang)"},
    {"MPIACC_COLL_ONE_SHOT_MAX", MPIACC_ENV_SIZE, "8M", NULL, 0, SIZE_MAX_LL,
     "largest MPI_Allreduce (bytes per process) that more than 2 processes reduce one-shot on the IPC engine "
     "(each reads every buffer); above it, and in place, reduce-scatter + all-gather"},
    /* CUDA backend */
    {"MPIACC_CUDA_PACK", MPIACC_ENV_ENUM, "auto", "auto|oneshot|device|memcpy2d", 0, 0,
     "CUDA pack to host: model-based choice, kernel into mapped host memory, kernel + DMA, or cudaMemcpy2D"},
    {"MPIACC_CUDA_GENERIC", MPIACC_ENV_BOOL, "0", NULL, 0, 1,
     "CUDA: always use the generic pack kernel (no strided fast paths)"},
    {"MPIACC_CUDA_SYNC", MPIACC_ENV_ENUM, "flag", "stream|query|event|flag", 0, 0,
     "CUDA: how a blocking MPI_Pack/MPI_Unpack waits for its kernel"},
    /* OpenCL backend */
    {"MPIACC_OCL_RECT", MPIACC_ENV_ENUM, "auto", "auto|never|always", 0, 0,
     "OpenCL: pack strided data with clEnqueueCopyBufferRect (auto: CPU devices and large blocks)"},
    {"MPIACC_OCL_RECT_MIN", MPIACC_ENV_SIZE, "64", NULL, 0, SIZE_MAX_LL,
     "OpenCL, MPIACC_OCL_RECT=auto: smallest block (bytes) copied by rect copies on a GPU"},
};

/* Variables mpiacc no longer reads: setting one gives a warning saying why
 * (instead of "unknown"). */
static const struct {
    const char *name, *why;
} retired[] = {
    {"MPIACC_OCL_CHECK_RELEASED",
     "since mpiacc 0.2.0 every cl_mem is checked, always (a released cl_mem or a host pointer is MPI_ERR_BUFFER, "
     "never a crash; about 6 ns per call)"},
#define DIRECT_GONE                                                                                           \
    "the direct protocol is gone: CUDA device messages go through MPI's own transport where it takes device " \
    "memory, on every communicator (MPIACC_TRANSPORT; mpiacc-info says which path is in effect)"
    {"MPIACC_EAGER_MAX", DIRECT_GONE},
    {"MPIACC_PIPELINE_CHUNK", DIRECT_GONE},
    {"MPIACC_IPC_MIN", DIRECT_GONE},
    {"MPIACC_DIRECT_WARN", DIRECT_GONE},
#undef DIRECT_GONE
};

/* MPIACC_* names that are not the library's and are never warned about:
 * the tests' and benchmarks' variables (prefixes MPIACC_TEST_ and
 * MPIACC_BENCH_, reserved for them; tests/README.md lists them) and those
 * the project's scripts read (scripts/, .ci/). */
static const char *const foreign_prefix[] = {"MPIACC_TEST_", "MPIACC_BENCH_"};
static const char *const foreign[] = {"MPIACC_BUILD_DIR",     "MPIACC_CMAKE_ARGS", "MPIACC_SKIP_APT",
                                      "MPIACC_SANITIZE_JOBS", "MPIACC_SKIP_NCCL",  "MPIACC_UCX_PASS_MAX"};

enum { NVAR = sizeof table / sizeof table[0] };

static const char *const kind_names[] = {"bool", "enum", "size", "int"};

static struct {
    const char *raw; /* NULL: unset or empty */
    int valid;
    long long value;
    char accepted[96]; /* accepted values, as text */
} cache[NVAR];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The warnings of the first read (bad values, unknown names).  Printed
 * there and then, unless mpiacc_env_hold() asked to keep them: MPI_Init
 * reads the environment before PMPI_Init, and prints them after it, from
 * rank 0 only (mpiacc_env_release), so that a job gets each once. */
#define HELD_MAX 16
static int holding;
static char held[HELD_MAX][512];
static int nheld;

static void warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!holding) {
        char line[512];
        vsnprintf(line, sizeof line, fmt, ap);
        mpiacc_log_write(MPIACC_LOG_WARN, "%s", line);
    } else if (nheld < HELD_MAX) {
        vsnprintf(held[nheld++], sizeof held[0], fmt, ap);
    }
    va_end(ap);
}

/* ---- parsing ------------------------------------------------------------ */

static int parse_bool(const char *s, long long *v)
{
    static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) return *v = 1, 1;
        if (!strcasecmp(s, no[i])) return *v = 0, 1;
    }
    return 0;
}

static int parse_enum(const char *s, const char *words, long long *v)
{
    size_t n = strlen(s);
    long long i = 0;
    for (const char *w = words; *w; i++) {
        const char *bar = strchr(w, '|');
        size_t len = bar ? (size_t)(bar - w) : strlen(w);
        if (len == n && !strncasecmp(s, w, n)) return *v = i, 1;
        if (!bar) break;
        w = bar + 1;
    }
    return 0;
}

/* Integer with an optional K/M/G suffix (size) or none (int), in range. */
static int parse_number(const char *s, int suffixes, long long min, long long max, long long *v)
{
    long long x;
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s) && !(*s == '-' && !suffixes)) return 0;
    if (!mpiacc_env_number(s, suffixes, &x) || x < min || x > max) return 0; /* sizes never negative here */
    *v = x;
    return 1;
}

static int parse_value(const env_var_t *e, const char *s, long long *v)
{
    switch (e->kind) {
    case MPIACC_ENV_BOOL: return parse_bool(s, v);
    case MPIACC_ENV_ENUM: return parse_enum(s, e->accepted, v);
    case MPIACC_ENV_SIZE: return parse_number(s, 1, e->min, e->max, v);
    default: return parse_number(s, 0, e->min, e->max, v);
    }
}

/* The accepted values of e, as text, into buf. */
static void accepted_text(const env_var_t *e, char *buf, size_t len)
{
    switch (e->kind) {
    case MPIACC_ENV_BOOL: snprintf(buf, len, "1/0, true/false, yes/no, on/off"); break;
    case MPIACC_ENV_ENUM: snprintf(buf, len, "%s", e->accepted); break;
    case MPIACC_ENV_SIZE: snprintf(buf, len, "byte count %lld..1024G, suffix K, M or G", e->min); break;
    default: snprintf(buf, len, "integer %lld..%lld", e->min, e->max); break;
    }
}

/* ---- unknown variables ----------------------------------------------------- */

/* Edit distance of a and b (ASCII case ignored), capped at 99. */
static int distance(const char *a, size_t la, const char *b, size_t lb)
{
    int row[64], diag, up;
    if (la >= 64 || lb >= 64) return 99;
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int sub = diag + (toupper((unsigned char)a[i - 1]) != toupper((unsigned char)b[j - 1]));
            up = row[j];
            row[j] = sub;
            if (up + 1 < row[j]) row[j] = up + 1;
            if (row[j - 1] + 1 < row[j]) row[j] = row[j - 1] + 1;
            diag = up;
        }
    }
    return row[lb];
}

/* One warning per MPIACC_* name in the environment (prefix in any case)
 * that mpiacc does not read, naming the closest variable it does read. */
static void warn_unknown(void)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        const char *v = *e, *why = NULL, *best = NULL;
        size_t len = strcspn(v, "="), n;
        int known = 0, bestd = 99;
        if (len < 7 || strncasecmp(v, "MPIACC_", 7)) continue;
        for (size_t i = 0; i < sizeof foreign_prefix / sizeof *foreign_prefix; i++)
            if (!strncmp(v, foreign_prefix[i], strlen(foreign_prefix[i]))) known = 1;
        for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++)
            if (strlen(foreign[i]) == len && !strncmp(v, foreign[i], len)) known = 1;
        for (int i = 0; i < NVAR && !known; i++) {
            int d;
            n = strlen(table[i].name);
            if (n == len && !strncmp(v, table[i].name, len)) known = 1;
            d = distance(v, len, table[i].name, n);
            if (d < bestd) bestd = d, best = table[i].name;
        }
        for (size_t i = 0; i < sizeof retired / sizeof *retired && !known; i++)
            if (strlen(retired[i].name) == len && !strncmp(v, retired[i].name, len)) why = retired[i].why;
        if (known) continue;
        if (why)
            warn("%.*s is set but no longer read: %s", (int)len, v, why);
        else if (best && bestd == 0)
            warn("%.*s is not an mpiacc variable and is ignored: did you mean %s? (names are upper case)", (int)len,
                 v, best);
        else if (best && bestd <= 3)
            warn("%.*s is not an mpiacc variable and is ignored: did you mean %s? (mpiacc-info lists every variable)",
                 (int)len, v, best);
        else
            warn("%.*s is not an mpiacc variable and is ignored (the closest is %s; mpiacc-info lists every "
                 "variable)", (int)len, v, best ? best : "none");
    }
}

static void read_all(void)
{
    int level = MPIACC_LOG_WARN;
    for (int i = 0; i < NVAR; i++) {
        const char *s = getenv(table[i].name);
        long long def = 0;
        if (!parse_value(&table[i], table[i].def, &def)) def = 0; /* tests/tools/test_env checks the defaults */
        cache[i].value = def;
        cache[i].valid = 1;
        cache[i].raw = s && *s ? s : NULL;
        if (cache[i].raw && !parse_value(&table[i], s, &cache[i].value)) {
            cache[i].valid = 0;
            cache[i].value = def;
        }
        accepted_text(&table[i], cache[i].accepted, sizeof cache[i].accepted);
        /* MPIACC_LOG decides whether the warnings below are printed */
        if (!strcmp(table[i].name, "MPIACC_LOG")) level = (int)cache[i].value;
    }
    for (int i = 0; i < NVAR; i++) {
        if (cache[i].valid || level < MPIACC_LOG_WARN) continue;
        warn("%s=%s not understood (accepted: %s); using the default %s", table[i].name, cache[i].raw,
             cache[i].accepted, table[i].def);
    }
    if (level >= MPIACC_LOG_WARN) warn_unknown();
}

static int lookup(const char *name, mpiacc_env_kind_t kind)
{
    pthread_once(&once, read_all);
    for (int i = 0; i < NVAR; i++)
        if (!strcmp(table[i].name, name)) {
            if (table[i].kind == kind) return i;
            break;
        }
    MPIACC_LOG(MPIACC_LOG_WARN, "internal: environment variable %s is not in the table as a %s", name,
               kind_names[kind]);
    return -1;
}

/* ---- interface ------------------------------------------------------------ */

int mpiacc_env_bool(const char *name)
{
    int i = lookup(name, MPIACC_ENV_BOOL);
    return i < 0 ? 0 : (int)cache[i].value;
}

int mpiacc_env_enum(const char *name)
{
    int i = lookup(name, MPIACC_ENV_ENUM);
    return i < 0 ? 0 : (int)cache[i].value;
}

size_t mpiacc_env_size(const char *name)
{
    int i = lookup(name, MPIACC_ENV_SIZE);
    return i < 0 ? 0 : (size_t)cache[i].value;
}

long long mpiacc_env_int(const char *name)
{
    int i = lookup(name, MPIACC_ENV_INT);
    return i < 0 ? 0 : cache[i].value;
}

void mpiacc_env_hold(void) { holding = 1; }

void mpiacc_env_release(int print)
{
    pthread_once(&once, read_all);
    for (int i = 0; i < nheld && print; i++) mpiacc_log_write(MPIACC_LOG_WARN, "%s", held[i]);
    nheld = 0;
    holding = 0;
}

int mpiacc_env_count(void) { return NVAR; }

int mpiacc_env_info(int i, mpiacc_env_desc_t *d)
{
    if (i < 0 || i >= NVAR) return -1;
    pthread_once(&once, read_all);
    d->name = table[i].name;
    d->kind = table[i].kind;
    d->kind_name = kind_names[table[i].kind];
    d->def = table[i].def;
    d->accepted = cache[i].accepted;
    d->meaning = table[i].meaning;
    d->raw = cache[i].raw;
    d->valid = cache[i].valid;
    d->value = cache[i].value;
    return 0;
}
