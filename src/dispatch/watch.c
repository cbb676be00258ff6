/*
 * dispatch/watch.c: blocking waits that watch for the direct protocol's
 * contract breaches (include/mpiacc.h, "Direct protocol"), so that a
 * message of the wrong class never leaves a wait hanging without a word.
 *
 *  - A device receive on a direct communicator (blocking MPI_Recv, MPI_Wait,
 *    MPI_Waitall, MPI_Waitany, MPI_Waitsome on its request): every MPIACC_DIRECT_WARN seconds while it
 *    is unmatched, a host message it matches is looked for on the user's
 *    communicator; one there is received into the device buffer through
 *    host staging (src/protocol/direct_breach.c).
 *  - A host MPI_Irecv on a direct communicator (recorded at its call, on
 *    direct communicators only: a small table of the latest ones): MPI_Wait
 *    and MPI_Waitall on it warn once, MPIACC_DIRECT_WARN seconds or more
 *    into the wait, when a device message it matches waits on the hidden
 *    communicator, then wait on in MPI (the message is not taken).
 *
 * Until MPIACC_DIRECT_WARN the wait is MPI_Test in a loop (MPI's wait on
 * mpiacc's generalized requests polls the same way).  A host wait that
 * goes on longer tests every 100 us and looks for a device message every
 * MPIACC_DIRECT_WARN seconds (mpiacc_dispatch_watch_until; src/interpose/
 * probe.c's blocking host MPI_Recv uses it too), so that one arriving late
 * is seen without a core spent on it.  Nothing here runs in the progress
 * poll function.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "dispatch.h"
#include "protocol/direct.h"

/* ---- host receives: the wait ------------------------------------------------------ */

int mpiacc_dispatch_watch_until(int (*test)(void *ctx, int *done), void *ctx, int (*look)(void *lctx, int *found),
                                void *lctx, int *done, int *found)
{
    int rc = MPI_SUCCESS, slow = 0;
    double next = PMPI_Wtime() + mpiacc_proto_cfg.warn;
    const struct timespec pause = {0, 100000}; /* 100 us */
    *done = *found = 0;
    for (;;) {
        while (rc == MPI_SUCCESS && !*done && PMPI_Wtime() < next) {
            rc = test(ctx, done);
            if (!*done && slow) nanosleep(&pause, NULL);
        }
        if (rc != MPI_SUCCESS || *done) break;
        rc = look(lctx, found);
        if (rc != MPI_SUCCESS || *found) break;
        next = PMPI_Wtime() + mpiacc_proto_cfg.warn;
        slow = 1;
    }
    return rc;
}

/* ---- device receives --------------------------------------------------------- */

static int watching(void)
{
    return mpiacc_proto_cfg.warn > 0 && atomic_load_explicit(&mpiacc_proto_comm_any, memory_order_relaxed);
}

/* How many of the claimed ops are unmatched direct receives; with `take`,
 * each first gets a host message it matches, if one waits. */
static int unmatched(mpiacc_rp_claim_t *c, int n, int take)
{
    int left = 0, err, taken;
    pthread_mutex_lock(&mpiacc_rp_pool.lock);
    for (int i = 0; i < n; i++) {
        if (!c[i].op || !mpiacc_proto_direct_unmatched(c[i].op)) continue;
        if (take) {
            err = mpiacc_proto_direct_take_host(c[i].op, mpiacc_proto_cfg.warn, &taken);
            if (err != MPI_SUCCESS) mpiacc_rp_fail(c[i].op, err);
            if (err != MPI_SUCCESS || taken) continue;
        }
        left++;
    }
    pthread_mutex_unlock(&mpiacc_rp_pool.lock);
    return left;
}

int mpiacc_dispatch_watch_claimed(int n, mpiacc_rp_claim_t *c, int (*test)(void *ctx, int *done), void *ctx,
                                  int *done)
{
    int rc = MPI_SUCCESS;
    *done = 0;
    if (!watching() || !unmatched(c, n, 0)) return MPI_SUCCESS;
    for (;;) {
        double t0 = PMPI_Wtime();
        while (rc == MPI_SUCCESS && !*done && PMPI_Wtime() - t0 < mpiacc_proto_cfg.warn) {
            rc = test(ctx, done);
            if (!*done) sched_yield(); /* as MPI's wait on mpiacc's requests does (op.c's wait_fn) */
        }
        if (rc != MPI_SUCCESS || *done || !unmatched(c, n, 1)) break;
    }
    return rc;
}

typedef struct one {
    MPI_Request *r;
    MPI_Status *st;
} one_t;

static int test_one(void *ctx, int *done)
{
    one_t *o = ctx;
    return PMPI_Test(o->r, done, o->st);
}

int mpiacc_dispatch_watch_wait(MPI_Request *r, MPI_Status *st, int *op_err, MPI_Comm *comm)
{
    mpiacc_rp_claim_t c;
    one_t o = {r, st};
    int rc, done = 0;
    mpiacc_rp_claim(*r, &c);
    rc = mpiacc_dispatch_watch_claimed(1, &c, test_one, &o, &done);
    if (rc == MPI_SUCCESS && !done) rc = PMPI_Wait(r, st);
    *op_err = c.queried ? c.error : MPI_SUCCESS;
    *comm = c.comm;
    mpiacc_rp_unclaim(&c);
    return rc;
}

/* ---- host receives --------------------------------------------------------- */

#define HOST_SLOTS 64
typedef struct host_irecv {
    int used; /* (MPI_REQUEST_NULL is not 0 in every MPI) */
    MPI_Request req;
    MPI_Comm comm;
    int src, tag;
} host_irecv_t;

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static host_irecv_t host_slot[HOST_SLOTS];
static unsigned host_next;
atomic_int mpiacc_dispatch_host_watched;

void mpiacc_dispatch_watch_host_irecv(MPI_Request req, int src, int tag, MPI_Comm comm)
{
    int i, free_slot = -1;
    if (req == MPI_REQUEST_NULL || src == MPI_PROC_NULL) return;
    pthread_mutex_lock(&host_lock);
    for (i = 0; i < HOST_SLOTS; i++) {
        if (host_slot[i].used && host_slot[i].req == req) break; /* MPI reuses the handle of a freed request */
        if (free_slot < 0 && !host_slot[i].used) free_slot = i;
    }
    if (i == HOST_SLOTS) i = free_slot;
    if (i < 0) i = (int)(host_next++ % HOST_SLOTS); /* full: the oldest go first */
    if (!host_slot[i].used) atomic_fetch_add(&mpiacc_dispatch_host_watched, 1);
    host_slot[i] = (host_irecv_t){.used = 1, .req = req, .comm = comm, .src = src, .tag = tag};
    pthread_mutex_unlock(&host_lock);
}

/* Takes r's entry out of the table: 1 when there was one (*e). */
static int host_take(MPI_Request r, host_irecv_t *e)
{
    int found = 0;
    if (r == MPI_REQUEST_NULL) return 0;
    pthread_mutex_lock(&host_lock);
    for (int i = 0; i < HOST_SLOTS && !found; i++)
        if (host_slot[i].used && host_slot[i].req == r) {
            *e = host_slot[i];
            host_slot[i].used = 0;
            atomic_fetch_sub(&mpiacc_dispatch_host_watched, 1);
            found = 1;
        }
    pthread_mutex_unlock(&host_lock);
    return found;
}

void mpiacc_dispatch_watch_host_done(MPI_Request r)
{
    host_irecv_t e;
    host_take(r, &e);
}

/* Whether a device message e matches waits (*st: its status). */
static int host_look1(const host_irecv_t *e, int *found, MPI_Status *st)
{
    mpiacc_proto_comm_t *dc = mpiacc_proto_comm_lookup(e->comm);
    *found = 0;
    return dc ? mpiacc_proto_direct_iprobe(dc, e->comm, e->src, e->tag, found, NULL, st) : MPI_SUCCESS;
}

typedef struct host_set {
    host_irecv_t e[4];
    int k;
} host_set_t;

/* The warning for each recorded receive a device message matches. */
static int host_look(void *lctx, int *any)
{
    host_set_t *h = lctx;
    *any = 0;
    for (int i = 0; i < h->k; i++) {
        int found = 0, len = 0;
        char name[MPI_MAX_OBJECT_NAME] = "";
        MPI_Status st;
        MPI_Count n = 0;
        const host_irecv_t *e = &h->e[i];
        if (host_look1(e, &found, &st) != MPI_SUCCESS || !found) continue;
        *any = 1;
        PMPI_Comm_get_name(e->comm, name, &len);
        PMPI_Get_count_c(&st, MPI_BYTE, &n);
        MPIACC_LOG(MPIACC_LOG_WARN,
                   "direct protocol: a host MPI_Irecv (source %d, tag %d) on communicator \"%s\" has been waited "
                   "on for %d s or more while a device message from rank %d tag %d (%lld bytes) waits there that "
                   "it cannot take: device messages on a direct communicator must be received into device buffers "
                   "(include/mpiacc.h, \"Direct protocol\"; MPI_Mprobe + MPI_Mrecv take one into host memory)",
                   e->src, e->tag, len ? name : "(unnamed)", mpiacc_proto_cfg.warn, st.MPI_SOURCE, st.MPI_TAG,
                   (long long)n);
    }
    return MPI_SUCCESS;
}

typedef struct host_wait {
    int n;
    MPI_Request *reqs;
    MPI_Status *st;
} host_wait_t;

static int host_test(void *ctx, int *done)
{
    host_wait_t *w = ctx;
    return w->n == 1 ? PMPI_Test(&w->reqs[0], done, w->st) : PMPI_Testall(w->n, w->reqs, done, w->st);
}

int mpiacc_dispatch_watch_host(int n, MPI_Request reqs[], MPI_Status st[], int *flag)
{
    host_set_t h;
    host_wait_t w = {n, reqs, st};
    int found = 0;
    *flag = 0;
    h.k = 0;
    if (mpiacc_proto_cfg.warn <= 0) return MPI_SUCCESS;
    for (int i = 0; i < n; i++) /* every one leaves the table; the first 4 are watched */
        if (host_take(reqs[i], &h.e[h.k < 4 ? h.k : 3]) && h.k < 4) h.k++;
    if (!h.k) return MPI_SUCCESS;
    return mpiacc_dispatch_watch_until(host_test, &w, host_look, &h, flag, &found);
}
