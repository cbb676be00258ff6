/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine/ucx.c: does the UCX that MPICH loaded take CUDA device memory?
 * Only through dlsym on the libucp already in the process (dlopen with
 * RTLD_NOLOAD): mpiacc never loads or links a UCX of its own.  A probe
 * context of our own (ucp_init_version with the old API version 1.12, so
 * that a newer UCX does not warn, features TAG) reads the same UCX_*
 * environment as MPICH's, so what it reports (ucp_context_query,
 * UCP_ATTR_FIELD_MEMORY_TYPES) is what MPICH's context has: UCX_TLS without
 * a CUDA transport gives no CUDA memory type.  About a millisecond, once,
 * at MPI_Init.  Also the log handler that hides UCX's known false alarms
 * (engine.h, mpiacc_engine_ucx_quiet).  Compiled only with UCX's headers
 * (CMake variable MPIACC_UCX_INCLUDE_DIR); ucx_stub.c otherwise.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "engine.h"

typedef ucs_status_t (*config_read_fn)(const char *, const char *, ucp_config_t **);
typedef void (*config_release_fn)(ucp_config_t *);
typedef ucs_status_t (*init_fn)(unsigned, unsigned, const ucp_params_t *, const ucp_config_t *, ucp_context_h *);
typedef ucs_status_t (*query_fn)(ucp_context_h, ucp_context_attr_t *);
typedef void (*cleanup_fn)(ucp_context_h);
typedef void (*version_fn)(unsigned *, unsigned *, unsigned *);

int mpiacc_engine_ucx_probe(char *why, size_t len)
{
    void *lib = dlopen("libucp.so.0", RTLD_NOW | RTLD_NOLOAD);
    config_read_fn config_read;
    config_release_fn config_release;
    init_fn init;
    query_fn query;
    cleanup_fn cleanup;
    version_fn version;
    ucp_config_t *cfg = NULL;
    ucp_context_h ctx = NULL;
    ucp_params_t params = {0};
    ucp_context_attr_t attr = {0};
    unsigned maj = 0, min = 0, rel = 0;
    ucs_status_t s;
    int state = MPIACC_ENGINE_UCX_UNKNOWN;

    if (!lib) {
        snprintf(why, len, "libucp.so.0 is not loaded in this process");
        return state;
    }
    config_read = (config_read_fn)dlsym(lib, "ucp_config_read");
    config_release = (config_release_fn)dlsym(lib, "ucp_config_release");
    init = (init_fn)dlsym(lib, "ucp_init_version");
    query = (query_fn)dlsym(lib, "ucp_context_query");
    cleanup = (cleanup_fn)dlsym(lib, "ucp_cleanup");
    version = (version_fn)dlsym(lib, "ucp_get_version");
    if (!config_read || !config_release || !init || !query || !cleanup) {
        snprintf(why, len, "the loaded libucp lacks ucp_init_version or ucp_context_query");
        goto fn_exit;
    }
    if (version) version(&maj, &min, &rel);
    if ((s = config_read(NULL, NULL, &cfg)) != UCS_OK) {
        snprintf(why, len, "UCX %u.%u.%u: ucp_config_read failed (%d)", maj, min, rel, (int)s);
        goto fn_exit;
    }
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG;
    s = init(1, 12, &params, cfg, &ctx);
    config_release(cfg);
    if (s != UCS_OK) {
        snprintf(why, len, "UCX %u.%u.%u: a probe context could not be made (%d)", maj, min, rel, (int)s);
        goto fn_exit;
    }
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    s = query(ctx, &attr);
    cleanup(ctx);
    if (s != UCS_OK) {
        snprintf(why, len, "UCX %u.%u.%u: ucp_context_query failed (%d)", maj, min, rel, (int)s);
        goto fn_exit;
    }
    state = (attr.memory_types >> UCS_MEMORY_TYPE_CUDA) & 1 ? MPIACC_ENGINE_UCX_CUDA : MPIACC_ENGINE_UCX_NO_CUDA;
    snprintf(why, len, "UCX %u.%u.%u %s CUDA memory (memory types 0x%llx)", maj, min, rel,
             state == MPIACC_ENGINE_UCX_CUDA ? "takes" : "does not take", (unsigned long long)attr.memory_types);
fn_exit:
    dlclose(lib); /* the reference RTLD_NOLOAD took; MPICH keeps its own */
    return state;
}

/* ---- UCX's false alarms (engine.h) -------------------------------------------- */

/* UCX's log handler type and results (ucs/debug/log_def.h, the same since
 * UCX 1.9; that header is not C11: its inline assembly) */
enum { QUIET_STOP = 0, QUIET_CONTINUE = 1 };
typedef int (*quiet_fn)(const char *, unsigned, const char *, ucs_log_level_t, const void *, const char *, va_list);

static int quiet_handler(const char *file, unsigned line, const char *function, ucs_log_level_t level,
                         const void *comp, const char *message, va_list ap)
{
    char text[256];
    va_list aq;
    (void)function, (void)comp;
    if (level != UCS_LOG_LEVEL_ERROR || !message || strncmp(message, "cuIpcOpenMemHandle", 18))
        return QUIET_CONTINUE; /* (the cheap test first: every line of UCX passes here) */
    va_copy(aq, ap);
    vsnprintf(text, sizeof text, message, aq);
    va_end(aq);
    if (!mpiacc_engine_ucx_harmless(file, 1, text)) return QUIET_CONTINUE;
    MPIACC_LOG_ONCE(MPIACC_LOG_INFO, "ucx-ipc-already-mapped",
                    "UCX: \"%s\" (%s:%u) not printed: a peer freed device memory and allocated it again at the "
                    "same address; UCX maps it anew and the data are right (UCX 1.22's CUDA IPC cache, "
                    "openucx/ucx pull request 11216); a failure of that retry still stops the run (UCX Fatal)",
                    text, file, line);
    return QUIET_STOP;
}

typedef void (*push_fn)(quiet_fn);

static void quiet_once(void)
{
    void *ucs = dlopen("libucs.so.0", RTLD_NOW | RTLD_NOLOAD);
    push_fn push;
    if (!ucs) return; /* no UCX in this process */
    if ((push = (push_fn)dlsym(ucs, "ucs_log_push_handler"))) push(quiet_handler);
    dlclose(ucs); /* MPICH's reference keeps it loaded */
}

void mpiacc_engine_ucx_quiet(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, quiet_once);
}
