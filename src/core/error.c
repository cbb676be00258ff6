/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/error.c: MPI error codes with readable strings for mpiacc's errors.
 *
 * Every error gets a code of its own: per MPI error class, a ring of
 * MPIACC_ERR_RING codes made with MPI_Add_error_code (lazily, so that an
 * application that never errs spends none of MPI's dynamic codes) is used
 * round-robin, and the message is attached to the code handed out with
 * MPI_Add_error_string.  A code's message therefore stays what it was until
 * MPIACC_ERR_RING more errors of the same class have been raised in the
 * process, whichever threads raise them: a thread reading
 * MPI_Error_string of its own error never sees another thread's message in
 * any realistic use (the ring would have to wrap between the failing call
 * and the MPI_Error_string).
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "errcall.h"

static const int errk_class[MPIACC_ERRK_MAX] = {
    [MPIACC_ERRK_ARG] = MPI_ERR_ARG,         [MPIACC_ERRK_TYPE] = MPI_ERR_TYPE,
    [MPIACC_ERRK_BUFFER] = MPI_ERR_BUFFER,   [MPIACC_ERRK_COUNT] = MPI_ERR_COUNT,
    [MPIACC_ERRK_TRUNCATE] = MPI_ERR_TRUNCATE, [MPIACC_ERRK_NOMEM] = MPI_ERR_NO_MEM,
    [MPIACC_ERRK_BACKEND] = MPI_ERR_OTHER,   [MPIACC_ERRK_CUDA] = MPI_ERR_OTHER,
    [MPIACC_ERRK_OPENCL] = MPI_ERR_OTHER,    [MPIACC_ERRK_PENDING] = MPI_ERR_OTHER,
    [MPIACC_ERRK_INTERN] = MPI_ERR_INTERN,   [MPIACC_ERRK_RANK] = MPI_ERR_RANK,
    [MPIACC_ERRK_TAG] = MPI_ERR_TAG,         [MPIACC_ERRK_COMM] = MPI_ERR_COMM,
    [MPIACC_ERRK_DISABLED] = MPI_ERR_OTHER,  [MPIACC_ERRK_OP] = MPI_ERR_OP,
    [MPIACC_ERRK_ROOT] = MPI_ERR_ROOT,
};

/* MPI's dynamic error codes and strings are process-global tables that MPICH
 * does not guard for concurrent callers of MPI_Add_error_code /
 * MPI_Add_error_string under MPI_THREAD_MULTIPLE; mpiacc calls them only
 * under this lock (rarely: a code is made once per ring slot, a string set
 * once per error). */
static pthread_mutex_t mpi_err_lock = PTHREAD_MUTEX_INITIALIZER;

/* One ring per distinct class (several kinds share MPI_ERR_OTHER's).  A
 * slot holds 0 (no code yet), CREATING, or the code. */
#define CREATING (-1)
typedef struct ring {
    int cls;
    atomic_uint next;
    atomic_int code[MPIACC_ERR_RING];
    atomic_int call_len[MPIACC_ERR_RING]; /* length of the message's call text (0: none) */
} ring_t;

static ring_t rings[MPIACC_ERRK_MAX];
static int nrings;
static int errk_ring[MPIACC_ERRK_MAX];
static atomic_int errk_ready;

int mpiacc_err_init(void)
{
    nrings = 0;
    for (int k = 0; k < MPIACC_ERRK_MAX; k++) {
        int r;
        for (r = 0; r < nrings && rings[r].cls != errk_class[k]; r++) continue;
        if (r == nrings) {
            rings[r].cls = errk_class[k];
            atomic_store(&rings[r].next, 0);
            for (int i = 0; i < MPIACC_ERR_RING; i++) {
                atomic_store(&rings[r].code[i], 0);
                atomic_store(&rings[r].call_len[i], 0);
            }
            nrings++;
        }
        errk_ring[k] = r;
    }
    atomic_store(&errk_ready, 1);
    return MPI_SUCCESS;
}

void mpiacc_err_finalize(void)
{
    /* The codes die with MPI; nothing to free. */
    atomic_store(&errk_ready, 0);
}

/* The code of slot i, made on first use; 0 when MPI has no code left. */
static int slot_code(ring_t *r, unsigned i)
{
    int c = atomic_load(&r->code[i]), expect = 0;
    while (c <= 0) {
        if (c == 0 && atomic_compare_exchange_strong(&r->code[i], &expect, CREATING)) {
            pthread_mutex_lock(&mpi_err_lock);
            if (PMPI_Add_error_code(r->cls, &c) != MPI_SUCCESS || c <= 0) c = 0;
            pthread_mutex_unlock(&mpi_err_lock);
            atomic_store(&r->code[i], c);
            return c;
        }
        /* Another thread is making this slot's code (the ring wrapped). */
        sched_yield();
        c = atomic_load(&r->code[i]);
        expect = 0;
    }
    return c;
}

/* A reason that starts with the name of an MPI function ("MPI_Bcast: negative
 * count", as src/coll words them) without it: the call is named already. */
static const char *without_name(const char *why)
{
    const char *p = why + 4;
    if (strncmp(why, "MPI_", 4)) return why;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
    return p[0] == ':' && p[1] == ' ' ? p + 2 : why;
}

int mpiacc_err(mpiacc_errk_t kind, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING], why[MPI_MAX_ERROR_STRING];
    int n, code;
    unsigned slot;
    ring_t *r;
    va_list ap;

    /* "MPI_Isend(buf=..., ...): why", or "mpiacc: why" outside a call */
    n = (int)mpiacc_err_call_text(msg, sizeof msg - 64, kind);
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(msg + n, sizeof msg - (size_t)n, "%s%s", n ? ": " : "mpiacc: ", n ? without_name(why) : why);
    /* Printed by the error handler it is raised with, not here: logged
     * only when asked, once per cause (its format) at info, every time at
     * debug. */
    MPIACC_LOG_ONCE(MPIACC_LOG_INFO, fmt, "error: %s", msg);
    if (!atomic_load(&errk_ready)) return errk_class[kind];
    r = &rings[errk_ring[kind]];
    slot = atomic_fetch_add(&r->next, 1) % MPIACC_ERR_RING;
    code = slot_code(r, slot);
    if (code == 0) return errk_class[kind];
    pthread_mutex_lock(&mpi_err_lock);
    PMPI_Add_error_string(code, msg);
    atomic_store(&r->call_len[slot], n);
    pthread_mutex_unlock(&mpi_err_lock);
    return code;
}

/* ---- raising ---------------------------------------------------------------- */

/* The length of the call text of err's message when err is one of mpiacc's
 * codes (0: a message without a call), -1 when it is not. */
static int ours(int err)
{
    if (err == MPI_SUCCESS || !atomic_load(&errk_ready)) return -1;
    for (int r = 0; r < nrings; r++)
        for (int i = 0; i < MPIACC_ERR_RING; i++)
            if (atomic_load(&rings[r].code[i]) == err) return atomic_load(&rings[r].call_len[i]);
    return -1;
}

/* MPI's handlers that end the job (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT). */
static int is_fatal(MPI_Errhandler eh)
{
#ifdef MPI_ERRORS_ABORT
    if (eh == MPI_ERRORS_ABORT) return 1;
#endif
    return eh == MPI_ERRORS_ARE_FATAL;
}

void mpiacc_err_before_raise(MPI_Errhandler eh, int err)
{
    char msg[MPI_MAX_ERROR_STRING], reason[MPI_MAX_ERROR_STRING + 64], call[MPI_MAX_ERROR_STRING];
    int len = 0, n;
    if (!is_fatal(eh) || mpiacc_log_level < MPIACC_LOG_WARN || (n = ours(err)) < 0) return;
    if (PMPI_Error_string(err, msg, &len) != MPI_SUCCESS) return;
    msg[len < (int)sizeof msg ? len : (int)sizeof msg - 1] = 0;
    if (n > 0 && n + 2 <= len) {
        /* "MPI_Irecv(buf=..., ...): why" -> "MPI_Irecv: why" and the call */
        snprintf(call, sizeof call, "%.*s", n, msg);
        snprintf(reason, sizeof reason, "%.*s: %s", (int)strcspn(call, "("), call, msg + n + 2);
        mpiacc_log_error(reason, call);
        snprintf(reason, sizeof reason, "mpiacc: %.*s failed: the \"mpiacc: %.*s\" lines above say why",
                 (int)strcspn(call, "("), call, (int)strcspn(call, "("), call);
    } else {
        /* "mpiacc: why" (no call) */
        mpiacc_log_error(strncmp(msg, "mpiacc: ", 8) ? msg : msg + 8, "no MPI call");
        snprintf(reason, sizeof reason, "mpiacc: the \"mpiacc:\" lines above say what failed");
    }
    /* MPI's abort prints the code's string: not the same words again */
    pthread_mutex_lock(&mpi_err_lock);
    PMPI_Add_error_string(err, reason);
    pthread_mutex_unlock(&mpi_err_lock);
}

/* Where MPICH raises an error that belongs to no communicator: on
 * MPI_COMM_SELF, or, while MPI_COMM_SELF has no handler of its own (it
 * reads as MPI_ERRORS_ARE_FATAL then), on MPI_COMM_WORLD. */
static MPI_Comm no_comm_target(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm c = MPI_COMM_SELF;
    if (PMPI_Comm_get_errhandler(MPI_COMM_SELF, &eh) == MPI_SUCCESS) {
        if (eh == MPI_ERRORS_ARE_FATAL) c = MPI_COMM_WORLD;
        if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
    }
    return c;
}

int mpiacc_err_return_comm(MPI_Comm comm, int err)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (err == MPI_SUCCESS) return err;
    if (comm == MPI_COMM_NULL) comm = no_comm_target();
    if (PMPI_Comm_get_errhandler(comm, &eh) == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL) {
        mpiacc_err_before_raise(eh, err);
        PMPI_Errhandler_free(&eh);
    }
    PMPI_Comm_call_errhandler(comm, err);
    return err;
}

int mpiacc_err_class(int err)
{
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS && PMPI_Error_class(err, &cls) != MPI_SUCCESS) cls = MPI_ERR_UNKNOWN;
    return cls;
}
