/*
 * reqpool/late.c: failures of operations whose request had already
 * completed (stream-ordered completion, MPIACC_ORDER_STREAM).  Nothing can
 * report them on that request any more, so each is kept for the
 * application's communicator of the op and handed to the next device call
 * on it (src/dispatch), which fails with it before doing anything.  At
 * most LATE_MAX are kept (the oldest go first, logged); MPI_Finalize
 * drops, and logs, what no call took.
 */
#include "reqpool.h"

#define LATE_MAX 64

typedef struct {
    MPI_Comm comm;
    int err;
} late_t;

static pthread_mutex_t late_lock = PTHREAD_MUTEX_INITIALIZER;
static late_t late[LATE_MAX];
static atomic_int nlate;

static void log_dropped(const late_t *l, const char *why)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = 0;
    PMPI_Error_string(l->err, msg, &len);
    MPIACC_LOG(MPIACC_LOG_WARN, "a failure after stream-ordered completion was never reported (%s): %s", why, msg);
}

void mpiacc_rp_late_put(MPI_Comm comm, int err)
{
    int n;
    pthread_mutex_lock(&late_lock);
    n = atomic_load(&nlate);
    if (n == LATE_MAX) {
        log_dropped(&late[0], "too many kept");
        for (int i = 1; i < n; i++) late[i - 1] = late[i];
        n--;
    }
    late[n].comm = comm;
    late[n].err = err;
    atomic_store(&nlate, n + 1);
    pthread_mutex_unlock(&late_lock);
}

int mpiacc_rp_late_take(MPI_Comm comm)
{
    int err = MPI_SUCCESS, n;
    if (atomic_load_explicit(&nlate, memory_order_relaxed) == 0) return MPI_SUCCESS;
    pthread_mutex_lock(&late_lock);
    n = atomic_load(&nlate);
    for (int i = 0; i < n; i++) {
        if (late[i].comm != comm) continue;
        err = late[i].err;
        for (int j = i + 1; j < n; j++) late[j - 1] = late[j];
        atomic_store(&nlate, n - 1);
        break;
    }
    pthread_mutex_unlock(&late_lock);
    return err;
}

void mpiacc_rp_late_drop_all(void)
{
    pthread_mutex_lock(&late_lock);
    for (int i = 0; i < atomic_load(&nlate); i++) log_dropped(&late[i], "MPI_Finalize");
    atomic_store(&nlate, 0);
    pthread_mutex_unlock(&late_lock);
}
