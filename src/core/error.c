/* core/error.c: MPI error codes with readable strings for mpiacc's errors. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "core.h"

static const int errk_class[MPIACC_ERRK_MAX] = {
    [MPIACC_ERRK_ARG] = MPI_ERR_ARG,         [MPIACC_ERRK_TYPE] = MPI_ERR_TYPE,
    [MPIACC_ERRK_BUFFER] = MPI_ERR_BUFFER,   [MPIACC_ERRK_COUNT] = MPI_ERR_COUNT,
    [MPIACC_ERRK_TRUNCATE] = MPI_ERR_TRUNCATE, [MPIACC_ERRK_NOMEM] = MPI_ERR_NO_MEM,
    [MPIACC_ERRK_BACKEND] = MPI_ERR_OTHER,   [MPIACC_ERRK_CUDA] = MPI_ERR_OTHER,
    [MPIACC_ERRK_OPENCL] = MPI_ERR_OTHER,    [MPIACC_ERRK_PENDING] = MPI_ERR_OTHER,
    [MPIACC_ERRK_INTERN] = MPI_ERR_INTERN,
};

/* One code per kind; its string is replaced by each new message of the kind
 * (MPI_Add_error_string replaces an existing string).  A mutex keeps
 * concurrent replacements whole. */
static int errk_code[MPIACC_ERRK_MAX];
static int errk_ready;
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;

int mpiacc_err_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    for (int k = 0; k < MPIACC_ERRK_MAX; k++) {
        MPIACC_CHECK(PMPI_Add_error_code(errk_class[k], &errk_code[k]));
        MPIACC_CHECK(PMPI_Add_error_string(errk_code[k], "mpiacc error"));
    }
    errk_ready = 1;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_err_finalize(void)
{
    /* The codes die with MPI; nothing to free. */
    errk_ready = 0;
}

int mpiacc_err(mpiacc_errk_t kind, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    int n;
    va_list ap;

    n = snprintf(msg, sizeof msg, "mpiacc: ");
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    /* once per cause (its format) at warn, every time at debug */
    MPIACC_LOG_ONCE(MPIACC_LOG_WARN, fmt, "error: %s", msg + n);
    if (!errk_ready) return errk_class[kind];
    pthread_mutex_lock(&err_lock);
    PMPI_Add_error_string(errk_code[kind], msg);
    pthread_mutex_unlock(&err_lock);
    return errk_code[kind];
}

int mpiacc_err_return_comm(MPI_Comm comm, int err)
{
    if (err == MPI_SUCCESS) return err;
    PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, err);
    return err;
}
