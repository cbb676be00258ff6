/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* RTLD_NOLOAD */
/*
 * Issue 36, item 6: no false alarm.  After MPI_Init (mpiacc's), UCX's log
 * goes through mpiacc's handler first: the line UCX 1.22's CUDA IPC cache
 * logs when a peer reallocated device memory at a reused address
 * ("cuIpcOpenMemHandle() failed: resource already mapped", ERROR, from
 * cuda_ipc_cache.c) is not printed, and is explained once at
 * MPIACC_LOG=info; any other ERROR line of UCX still is (real errors are
 * never hidden).  The lines are handed to UCX's own dispatcher
 * (ucs_log_dispatch of the libucs MPICH loaded), as UCX's code does; no
 * GPU needed.  --info: expects mpiacc's explanation once.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <ucp/api/ucp.h> /* ucs_log_level_t, ucs_log_component_config_t */

typedef void (*dispatch_fn)(const char *, unsigned, const char *, ucs_log_level_t, ucs_log_component_config_t *,
                            const char *, ...);

static int failed;
#define CHECK(cond_, ...)                         \
    do {                                          \
        if (!(cond_)) {                           \
            fprintf(stderr, "FAIL: " __VA_ARGS__); \
            fputc('\n', stderr);                  \
            failed = 1;                           \
        }                                         \
    } while (0)

/* What one dispatched line printed (stdout and stderr: UCX logs to stdout). */
static char *dispatched(dispatch_fn d, ucs_log_component_config_t *comp, const char *file, const char *what)
{
    char path[] = "/tmp/test_ucx_quiet_XXXXXX";
    int fd = mkstemp(path), out = dup(1), err = dup(2);
    long n;
    char *s;
    FILE *f;
    fflush(stdout);
    fflush(stderr);
    dup2(fd, 1);
    dup2(fd, 2);
    d(file, 285, "uct_cuda_ipc_open_memhandle_legacy", UCS_LOG_LEVEL_ERROR, comp, "cuIpcOpenMemHandle() failed: %s",
      what);
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    f = fdopen(fd, "r");
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    s = calloc((size_t)n + 1, 1);
    if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
    fclose(f);
    unlink(path);
    fputs(s, stderr); /* kept in the test's output */
    return s;
}

int main(int argc, char **argv)
{
    int info = argc > 1 && !strcmp(argv[1], "--info");
    const char *file = "/src/uct/cuda/cuda_ipc/cuda_ipc_cache.c";
    ucs_log_component_config_t comp = {UCS_LOG_LEVEL_WARN, "UCX", "*"};
    void *ucs;
    dispatch_fn d;
    char *a, *b, *c;
    MPI_Init(&argc, &argv);
    ucs = dlopen("libucs.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!ucs || !(d = (dispatch_fn)dlsym(ucs, "ucs_log_dispatch"))) {
        printf("SKIPPED: no UCX in this process (MPICH's netmod is not ucx)\n");
        MPI_Finalize();
        return 77;
    }
    a = dispatched(d, &comp, file, "resource already mapped");
    b = dispatched(d, &comp, file, "resource already mapped");
    c = dispatched(d, &comp, file, "invalid argument");
    CHECK(!strstr(a, "UCX  ERROR") && !strstr(b, "UCX  ERROR"), "UCX's \"resource already mapped\" line was printed");
    CHECK(strstr(c, "cuIpcOpenMemHandle() failed: invalid argument") != NULL,
          "another UCX error line was hidden: \"%s\"", c);
    if (info) {
        CHECK(strstr(a, "[mpiacc info rank 0] UCX: \"cuIpcOpenMemHandle() failed: resource already mapped\"") &&
                  strstr(a, "the data are right"),
              "MPIACC_LOG=info: the first one is not explained");
        CHECK(!strstr(b, "[mpiacc"), "MPIACC_LOG=info: explained more than once");
    } else {
        CHECK(!strstr(a, "[mpiacc"), "MPIACC_LOG=warn: mpiacc printed a line");
    }
    free(a);
    free(b);
    free(c);
    MPI_Finalize();
    printf("test_ucx_quiet: %s\n", failed ? "FAILED" : "passed");
    return failed;
}
