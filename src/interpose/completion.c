/*
 * interpose/completion.c: the MPI completion calls, so that the error of
 * an mpiacc operation is raised where MPI raises the errors of its own
 * requests (MPICH's choice, checked against host requests):
 *   - MPI_Wait, MPI_Test: the operation's communicator;
 *   - MPI_Waitany, MPI_Testany, MPI_Request_get_status: no communicator
 *     (MPI_COMM_SELF, or MPI_COMM_WORLD while MPI_COMM_SELF has no handler
 *     of its own), returning the operation's error code;
 *   - MPI_Waitall, MPI_Testall, MPI_Waitsome, MPI_Testsome: no
 *     communicator likewise, returning MPI_ERR_IN_STATUS with the real
 *     error (its own class) in the MPI_ERROR field of each completed
 *     request's status.
 * With no mpiacc request alive (one atomic load) every call goes straight
 * to PMPI; otherwise the requests that are ours are claimed (see
 * src/reqpool/reqpool.h) around the PMPI call.
 *
 * Persistent requests of mpiacc (src/dispatch/persist.c): while one is
 * active (a second atomic load), each handle is translated to its started
 * operation's request for the call; when the call completed that request,
 * the handle becomes inactive, and it stays in the application's array
 * (MPI's rule for persistent requests).  An inactive one is MPI's own
 * inactive persistent request: MPI returns at once with an empty status.
 */
#include <stdlib.h>
#include <string.h>

#include "interpose.h"

/* Claims for the requests of one call (on the stack when few). */
#define LOCAL_CLAIMS 16
typedef struct claims {
    mpiacc_rp_claim_t *c;
    mpiacc_rp_claim_t local[LOCAL_CLAIMS];
    int n, ours;
} claims_t;

/* Returns 0 (nothing claimed; call PMPI plainly) when none is ours or no
 * memory for the claims. */
static int claims_take(claims_t *cl, int n, const MPI_Request reqs[])
{
    cl->n = n;
    cl->ours = 0;
    cl->c = n <= LOCAL_CLAIMS ? cl->local : malloc((size_t)n * sizeof *cl->c);
    if (!cl->c) return 0;
    for (int i = 0; i < n; i++) cl->ours += mpiacc_rp_claim(reqs[i], &cl->c[i]);
    if (!cl->ours && cl->c != cl->local) free(cl->c);
    return cl->ours;
}

static void claims_give(claims_t *cl)
{
    for (int i = 0; i < cl->n; i++) mpiacc_rp_unclaim(&cl->c[i]);
    if (cl->c != cl->local) free(cl->c);
}

/* The error of claimed request i, if it completed in this call. */
static int claim_error(const claims_t *cl, int i)
{
    return cl->c[i].queried ? cl->c[i].error : MPI_SUCCESS;
}

/* After a multiple-completion call over n requests that completed nout
 * (index idx[k] for status k; idx NULL: status k is request k) and
 * returned rc: MPI_ERR_IN_STATUS with every completed status's MPI_ERROR
 * set when one of ours failed; rc otherwise.  Whether one of ours failed
 * comes from the claims alone: when MPI fails the call itself (an invalid
 * handle...) it completes nothing and may leave nout, idx and the flag
 * unwritten, even while returning MPI_SUCCESS (MPICH does after a user
 * error handler returned). */
static int in_status(const claims_t *cl, int nout, const int *idx, MPI_Status st[], int rc)
{
    int failed = 0, mpi_in_status = mpiacc_err_class(rc) == MPI_ERR_IN_STATUS;
    for (int i = 0; i < cl->n && !failed; i++) failed = claim_error(cl, i) != MPI_SUCCESS;
    if (!failed || nout < 0 || nout > cl->n) return rc;
    if (st != MPI_STATUSES_IGNORE)
        for (int k = 0; k < nout; k++) {
            int i = idx ? idx[k] : k;
            if (i >= 0 && i < cl->n && cl->c[i].queried) st[k].MPI_ERROR = cl->c[i].error;
            else if (!mpi_in_status) st[k].MPI_ERROR = MPI_SUCCESS;
        }
    /* An MPI_ERR_IN_STATUS of MPI's own was raised already. */
    return mpi_in_status ? rc : mpiacc_err_return_comm(MPI_COMM_NULL, MPI_ERR_IN_STATUS);
}

/* Whether a host MPI_Irecv on a direct communicator is recorded (src/dispatch/watch.c). */
static int host_watched(void)
{
    return atomic_load_explicit(&mpiacc_dispatch_host_watched, memory_order_relaxed) != 0;
}

/* Around a call that may complete some of n requests while host receives
 * are recorded: the records of those it completed go (a handle MPI
 * reuses must not look like a recorded receive). */
#define HOST_SEEN_LOCAL 16
typedef struct host_seen {
    MPI_Request *was, local[HOST_SEEN_LOCAL];
    int n;
} host_seen_t;

static void host_seen_begin(host_seen_t *h, int n, const MPI_Request reqs[])
{
    h->n = 0;
    h->was = n <= HOST_SEEN_LOCAL ? h->local : malloc((size_t)n * sizeof *h->was);
    if (!h->was) return;
    memcpy(h->was, reqs, (size_t)n * sizeof *h->was);
    h->n = n;
}

static void host_seen_end(host_seen_t *h, const MPI_Request reqs[])
{
    for (int i = 0; i < h->n; i++)
        if (h->was[i] != reqs[i]) mpiacc_dispatch_watch_host_done(h->was[i]);
    if (h->was && h->was != h->local) free(h->was);
}

#define HOST_SEEN(n_, reqs_, call_)                                                \
    do {                                                                           \
        if (host_watched() && (n_) > 0 && (reqs_)) {                               \
            host_seen_t h_;                                                        \
            int rc_;                                                               \
            host_seen_begin(&h_, (n_), (reqs_));                                   \
            rc_ = call_;                                                           \
            host_seen_end(&h_, (reqs_));                                           \
            return rc_;                                                            \
        }                                                                          \
    } while (0)

static int impl_wait(MPI_Request *r, MPI_Status *st)
{
    int rc, err, flag = 0;
    MPI_Comm comm;
    if (r && host_watched()) { /* a host receive on a direct communicator: watched, then MPI's wait */
        rc = mpiacc_dispatch_watch_host(1, r, st, &flag);
        if (rc != MPI_SUCCESS || flag) return rc;
    }
    if (mpiacc_rp_none_live() || !r) return PMPI_Wait(r, st);
    rc = mpiacc_dispatch_watch_wait(r, st, &err, &comm);
    if (rc == MPI_SUCCESS && err != MPI_SUCCESS) rc = mpiacc_err_return_comm(comm, err);
    return rc;
}

static int impl_test_1(MPI_Request *r, int *flag, MPI_Status *st);
static int impl_test(MPI_Request *r, int *flag, MPI_Status *st)
{
    MPI_Request was;
    int rc;
    if (!r || !host_watched()) return impl_test_1(r, flag, st);
    was = *r;
    rc = impl_test_1(r, flag, st);
    if (rc == MPI_SUCCESS && *flag) mpiacc_dispatch_watch_host_done(was);
    return rc;
}

static int impl_test_1(MPI_Request *r, int *flag, MPI_Status *st)
{
    mpiacc_rp_claim_t c;
    int rc;
    if (mpiacc_rp_none_live() || !r || !mpiacc_rp_claim(*r, &c)) return PMPI_Test(r, flag, st);
    rc = PMPI_Test(r, flag, st);
    if (rc == MPI_SUCCESS && c.queried && c.error != MPI_SUCCESS) rc = mpiacc_err_return_comm(c.comm, c.error);
    mpiacc_rp_unclaim(&c);
    return rc;
}

static int impl_request_get_status(MPI_Request r, int *flag, MPI_Status *st)
{
    mpiacc_rp_claim_t c;
    int rc;
    if (mpiacc_rp_none_live() || !mpiacc_rp_claim(r, &c)) return PMPI_Request_get_status(r, flag, st);
    rc = PMPI_Request_get_status(r, flag, st);
    if (rc == MPI_SUCCESS && c.queried && c.error != MPI_SUCCESS)
        rc = mpiacc_err_return_comm(MPI_COMM_NULL, c.error);
    mpiacc_rp_unclaim(&c);
    return rc;
}

/* The MPI_Test* form of a multiple wait, for the direct protocol's watch
 * (src/dispatch/watch.c: a device receive still unmatched after
 * MPIACC_DIRECT_WARN takes a host message). */
typedef struct waitset {
    int n;
    MPI_Request *reqs;
    MPI_Status *st;
    int *idx, *nout;
} waitset_t;

static int test_all(void *ctx, int *done)
{
    waitset_t *w = ctx;
    return PMPI_Testall(w->n, w->reqs, done, w->st);
}

static int test_any(void *ctx, int *done)
{
    waitset_t *w = ctx;
    return PMPI_Testany(w->n, w->reqs, w->idx, done, w->st);
}

static int test_some(void *ctx, int *done)
{
    waitset_t *w = ctx;
    int rc = PMPI_Testsome(w->n, w->reqs, w->nout, w->idx, w->st);
    *done = *w->nout != 0; /* MPI_UNDEFINED: none active, as MPI_Waitsome returns */
    return rc;
}

static int impl_waitany_1(int n, MPI_Request reqs[], int *idx, MPI_Status *st);
static int impl_waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    HOST_SEEN(n, reqs, impl_waitany_1(n, reqs, idx, st));
    return impl_waitany_1(n, reqs, idx, st);
}

static int impl_waitany_1(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    claims_t cl;
    int rc;
    waitset_t w = {n, reqs, st, idx, NULL};
    int done = 0;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs)) return PMPI_Waitany(n, reqs, idx, st);
    rc = mpiacc_dispatch_watch_claimed(n, cl.c, test_any, &w, &done);
    if (rc == MPI_SUCCESS && !done) rc = PMPI_Waitany(n, reqs, idx, st);
    if (rc == MPI_SUCCESS && idx && *idx >= 0 && *idx < n && claim_error(&cl, *idx) != MPI_SUCCESS)
        rc = mpiacc_err_return_comm(MPI_COMM_NULL, claim_error(&cl, *idx));
    claims_give(&cl);
    return rc;
}

static int impl_testany_1(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st);
static int impl_testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    HOST_SEEN(n, reqs, impl_testany_1(n, reqs, idx, flag, st));
    return impl_testany_1(n, reqs, idx, flag, st);
}

static int impl_testany_1(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    claims_t cl;
    int rc;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs))
        return PMPI_Testany(n, reqs, idx, flag, st);
    rc = PMPI_Testany(n, reqs, idx, flag, st);
    if (rc == MPI_SUCCESS && flag && *flag && idx && *idx >= 0 && *idx < n && claim_error(&cl, *idx) != MPI_SUCCESS)
        rc = mpiacc_err_return_comm(MPI_COMM_NULL, claim_error(&cl, *idx));
    claims_give(&cl);
    return rc;
}

/* Watched (src/dispatch/watch.c): host receives on direct communicators
 * (a warning), device receives on them (a host message taken). */
static int impl_waitall(int n, MPI_Request reqs[], MPI_Status st[])
{
    claims_t cl;
    int rc = MPI_SUCCESS, flag = 0, host = n > 0 && reqs && host_watched();
    int ours = !mpiacc_rp_none_live() && n > 0 && reqs && claims_take(&cl, n, reqs);
    if (!ours && !host) return PMPI_Waitall(n, reqs, st);
    if (host) rc = mpiacc_dispatch_watch_host(n, reqs, st, &flag);
    if (ours && rc == MPI_SUCCESS && !flag) {
        waitset_t w = {n, reqs, st, NULL, NULL};
        rc = mpiacc_dispatch_watch_claimed(n, cl.c, test_all, &w, &flag);
    }
    if (rc == MPI_SUCCESS && !flag) rc = PMPI_Waitall(n, reqs, st);
    if (ours) {
        rc = in_status(&cl, n, NULL, st, rc);
        claims_give(&cl);
    }
    return rc;
}

static int impl_testall_1(int n, MPI_Request reqs[], int *flag, MPI_Status st[]);
static int impl_testall(int n, MPI_Request reqs[], int *flag, MPI_Status st[])
{
    HOST_SEEN(n, reqs, impl_testall_1(n, reqs, flag, st));
    return impl_testall_1(n, reqs, flag, st);
}

static int impl_testall_1(int n, MPI_Request reqs[], int *flag, MPI_Status st[])
{
    claims_t cl;
    int rc;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs)) return PMPI_Testall(n, reqs, flag, st);
    rc = PMPI_Testall(n, reqs, flag, st);
    rc = in_status(&cl, flag && *flag ? n : 0, NULL, st, rc);
    claims_give(&cl);
    return rc;
}

static int impl_waitsome_1(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[]);
static int impl_waitsome(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    HOST_SEEN(n, reqs, impl_waitsome_1(n, reqs, nout, idx, st));
    return impl_waitsome_1(n, reqs, nout, idx, st);
}

static int impl_waitsome_1(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    claims_t cl;
    int rc;
    waitset_t w = {n, reqs, st, idx, nout};
    int done = 0;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs))
        return PMPI_Waitsome(n, reqs, nout, idx, st);
    rc = mpiacc_dispatch_watch_claimed(n, cl.c, test_some, &w, &done);
    if (rc == MPI_SUCCESS && !done) rc = PMPI_Waitsome(n, reqs, nout, idx, st);
    rc = in_status(&cl, nout && *nout != MPI_UNDEFINED ? *nout : 0, idx, st, rc);
    claims_give(&cl);
    return rc;
}

static int impl_testsome_1(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[]);
static int impl_testsome(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    HOST_SEEN(n, reqs, impl_testsome_1(n, reqs, nout, idx, st));
    return impl_testsome_1(n, reqs, nout, idx, st);
}

static int impl_testsome_1(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    claims_t cl;
    int rc;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs))
        return PMPI_Testsome(n, reqs, nout, idx, st);
    rc = PMPI_Testsome(n, reqs, nout, idx, st);
    rc = in_status(&cl, nout && *nout != MPI_UNDEFINED ? *nout : 0, idx, st, rc);
    claims_give(&cl);
    return rc;
}

/* ---- persistent requests: translation ------------------------------------ */

static inline int none_active_persistent(void)
{
    return atomic_load_explicit(&mpiacc_dispatch_prq_active, memory_order_acquire) == 0;
}

typedef struct xlat {
    MPI_Request *r;  /* what the call sees                     */
    char *mapped;    /* r[i] is the operation of reqs[i]          */
    MPI_Request local_r[LOCAL_CLAIMS];
    char local_m[LOCAL_CLAIMS];
} xlat_t;

/* The array the call sees: reqs itself when nothing is translated (or no
 * memory: then the call sees the handles, as before persistent requests). */
static MPI_Request *xlat_in(int n, MPI_Request reqs[], xlat_t *x)
{
    int any = 0;
    x->r = n <= LOCAL_CLAIMS ? x->local_r : malloc((size_t)n * sizeof *x->r);
    x->mapped = n <= LOCAL_CLAIMS ? x->local_m : malloc((size_t)n);
    if (!x->r || !x->mapped) goto plain;
    for (int i = 0; i < n; i++) {
        x->r[i] = mpiacc_dispatch_persist_active(reqs[i]);
        x->mapped[i] = x->r[i] != reqs[i];
        any |= x->mapped[i];
    }
    if (any) return x->r;
plain:
    if (x->r != x->local_r) free(x->r);
    if (x->mapped != x->local_m) free(x->mapped);
    x->r = NULL;
    return reqs;
}

/* Back to the application's array: handles stay, completed operations
 * make their handle inactive; other entries are what MPI left. */
static void xlat_out(int n, MPI_Request reqs[], xlat_t *x, int completes)
{
    if (!x->r) return;
    for (int i = 0; i < n; i++) {
        if (!x->mapped[i]) {
            if (completes) reqs[i] = x->r[i];
        }
        else if (completes && x->r[i] == MPI_REQUEST_NULL) mpiacc_dispatch_persist_completed(reqs[i]);
    }
    if (x->r != x->local_r) free(x->r);
    if (x->mapped != x->local_m) free(x->mapped);
}

MPIACC_INTERPOSE_EXPORT int MPI_Wait(MPI_Request *r, MPI_Status *st)
{
    MPI_Request a;
    int rc;
    if (none_active_persistent() || !r || (a = mpiacc_dispatch_persist_active(*r)) == *r) return impl_wait(r, st);
    rc = impl_wait(&a, st);
    if (a == MPI_REQUEST_NULL) mpiacc_dispatch_persist_completed(*r);
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Test(MPI_Request *r, int *flag, MPI_Status *st)
{
    MPI_Request a;
    int rc;
    if (none_active_persistent() || !r || (a = mpiacc_dispatch_persist_active(*r)) == *r)
        return impl_test(r, flag, st);
    rc = impl_test(&a, flag, st);
    if (a == MPI_REQUEST_NULL) mpiacc_dispatch_persist_completed(*r);
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Request_get_status(MPI_Request r, int *flag, MPI_Status *st)
{
    if (!none_active_persistent()) r = mpiacc_dispatch_persist_active(r);
    return impl_request_get_status(r, flag, st);
}

#define XLAT_CALL(n_, reqs_, completes_, call_)                                    \
    do {                                                                           \
        xlat_t x_;                                                                 \
        MPI_Request *r_;                                                           \
        int rc_;                                                                   \
        if (none_active_persistent() || (n_) <= 0 || !(reqs_)) {                   \
            r_ = (reqs_);                                                          \
            return call_;                                                          \
        }                                                                          \
        r_ = xlat_in((n_), (reqs_), &x_);                                          \
        rc_ = call_;                                                               \
        xlat_out((n_), (reqs_), &x_, (completes_));                                \
        return rc_;                                                                \
    } while (0)

MPIACC_INTERPOSE_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    XLAT_CALL(n, reqs, 1, impl_waitany(n, r_, idx, st));
}

MPIACC_INTERPOSE_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    XLAT_CALL(n, reqs, 1, impl_testany(n, r_, idx, flag, st));
}

MPIACC_INTERPOSE_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status st[])
{
    XLAT_CALL(n, reqs, 1, impl_waitall(n, r_, st));
}

MPIACC_INTERPOSE_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status st[])
{
    XLAT_CALL(n, reqs, 1, impl_testall(n, r_, flag, st));
}

MPIACC_INTERPOSE_EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    XLAT_CALL(n, reqs, 1, impl_waitsome(n, r_, nout, idx, st));
}

MPIACC_INTERPOSE_EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    XLAT_CALL(n, reqs, 1, impl_testsome(n, r_, nout, idx, st));
}

/* MPI 4.1's non-destructive forms: nothing completes, nothing to write back
 * (MPI's errors of mpiacc operations are raised by MPI there). */
MPIACC_INTERPOSE_EXPORT int MPI_Request_get_status_any(int n, const MPI_Request reqs[], int *idx, int *flag,
                                                       MPI_Status *st)
{
    XLAT_CALL(n, (MPI_Request *)reqs, 0, PMPI_Request_get_status_any(n, r_, idx, flag, st));
}

MPIACC_INTERPOSE_EXPORT int MPI_Request_get_status_all(int n, const MPI_Request reqs[], int *flag, MPI_Status st[])
{
    XLAT_CALL(n, (MPI_Request *)reqs, 0, PMPI_Request_get_status_all(n, r_, flag, st));
}

MPIACC_INTERPOSE_EXPORT int MPI_Request_get_status_some(int n, const MPI_Request reqs[], int *nout, int idx[],
                                                        MPI_Status st[])
{
    XLAT_CALL(n, (MPI_Request *)reqs, 0, PMPI_Request_get_status_some(n, r_, nout, idx, st));
}
