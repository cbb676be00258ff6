/* SPDX-License-Identifier: BSD-3-Clause */
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

/* For the test calls: 0 when nothing of mpiacc's is alive (MPI's call
 * then, at once); else first one sweep of the receives from MPI_ANY_SOURCE
 * that look for their message (reqpool.h: nothing else probes for them, and
 * a program that tests only MPI's own requests, e.g. a send the peer
 * receives once this process's wildcard receive took its message, must not
 * spin for ever; one load when none looks). */
static int sweep_then(int n, const MPI_Request reqs[])
{
    if (mpiacc_rp_none_live() || n <= 0 || !reqs) return 0;
    mpiacc_rp_match_pending();
    return 1;
}

static int impl_wait(MPI_Request *r, MPI_Status *st)
{
    int rc, err;
    MPI_Comm comm;
    if (mpiacc_rp_none_live() || !r) return PMPI_Wait(r, st); /* nothing live: nothing MATCHING */
    rc = mpiacc_rp_wait(r, st, &err, &comm);
    if (rc == MPI_SUCCESS && err != MPI_SUCCESS) rc = mpiacc_err_return_comm(comm, err);
    return rc;
}

static int impl_test(MPI_Request *r, int *flag, MPI_Status *st)
{
    mpiacc_rp_claim_t c;
    int rc;
    if (mpiacc_rp_none_live() || !r) return PMPI_Test(r, flag, st);
    mpiacc_rp_match_pending(); /* see sweep_then */
    if (!mpiacc_rp_claim(*r, &c)) return PMPI_Test(r, flag, st);
    rc = PMPI_Test(r, flag, st);
    if (rc == MPI_SUCCESS && c.queried && c.error != MPI_SUCCESS) rc = mpiacc_err_return_comm(c.comm, c.error);
    mpiacc_rp_unclaim(&c);
    return rc;
}

static int impl_request_get_status(MPI_Request r, int *flag, MPI_Status *st)
{
    mpiacc_rp_claim_t c;
    int rc;
    if (mpiacc_rp_none_live()) return PMPI_Request_get_status(r, flag, st);
    mpiacc_rp_match_pending(); /* see sweep_then */
    if (!mpiacc_rp_claim(r, &c)) return PMPI_Request_get_status(r, flag, st);
    rc = PMPI_Request_get_status(r, flag, st);
    if (rc == MPI_SUCCESS && c.queried && c.error != MPI_SUCCESS)
        rc = mpiacc_err_return_comm(MPI_COMM_NULL, c.error);
    mpiacc_rp_unclaim(&c);
    return rc;
}

static int impl_waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    claims_t cl;
    int rc;
    /* none of ours: MPI's wait, which still looks for pending MPI_ANY_SOURCE receives (reqpool.h) */
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs))
        return mpiacc_rp_pmpi_waitany(n, reqs, idx, st);
    rc = mpiacc_rp_pmpi_waitany(n, reqs, idx, st);
    if (rc == MPI_SUCCESS && idx && *idx >= 0 && *idx < n && claim_error(&cl, *idx) != MPI_SUCCESS)
        rc = mpiacc_err_return_comm(MPI_COMM_NULL, claim_error(&cl, *idx));
    claims_give(&cl);
    return rc;
}

static int impl_testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    claims_t cl;
    int rc;
    if (!sweep_then(n, reqs) || !claims_take(&cl, n, reqs)) return PMPI_Testany(n, reqs, idx, flag, st);
    rc = PMPI_Testany(n, reqs, idx, flag, st);
    if (rc == MPI_SUCCESS && flag && *flag && idx && *idx >= 0 && *idx < n && claim_error(&cl, *idx) != MPI_SUCCESS)
        rc = mpiacc_err_return_comm(MPI_COMM_NULL, claim_error(&cl, *idx));
    claims_give(&cl);
    return rc;
}

static int impl_waitall(int n, MPI_Request reqs[], MPI_Status st[])
{
    claims_t cl;
    int rc;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs))
        return mpiacc_rp_pmpi_waitall(n, reqs, st); /* as in impl_waitany */
    rc = mpiacc_rp_pmpi_waitall(n, reqs, st);
    rc = in_status(&cl, n, NULL, st, rc);
    claims_give(&cl);
    return rc;
}

static int impl_testall(int n, MPI_Request reqs[], int *flag, MPI_Status st[])
{
    claims_t cl;
    int rc;
    if (!sweep_then(n, reqs) || !claims_take(&cl, n, reqs)) return PMPI_Testall(n, reqs, flag, st);
    rc = PMPI_Testall(n, reqs, flag, st);
    rc = in_status(&cl, flag && *flag ? n : 0, NULL, st, rc);
    claims_give(&cl);
    return rc;
}

/* MPI_Waitsome and MPI_Testsome (some: PMPI_Waitsome or PMPI_Testsome, one
 * signature). */
typedef int some_fn(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[]);

static int impl_some(some_fn *some, int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    claims_t cl;
    int rc;
    if (!sweep_then(n, reqs) || !claims_take(&cl, n, reqs)) return some(n, reqs, nout, idx, st);
    rc = some(n, reqs, nout, idx, st);
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
    XLAT_CALL(n, reqs, 1, impl_some(mpiacc_rp_pmpi_waitsome, n, r_, nout, idx, st));
}

MPIACC_INTERPOSE_EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    XLAT_CALL(n, reqs, 1, impl_some(PMPI_Testsome, n, r_, nout, idx, st));
}

/* MPI 4.1's non-destructive forms: nothing completes, nothing to write back
 * (MPI's errors of mpiacc operations are raised by MPI there); the receives
 * that look for their message get one sweep first, as in the test calls. */
MPIACC_INTERPOSE_EXPORT int MPI_Request_get_status_any(int n, const MPI_Request reqs[], int *idx, int *flag,
                                                       MPI_Status *st)
{
    XLAT_CALL(n, (MPI_Request *)reqs, 0,
              (mpiacc_rp_match_pending(), PMPI_Request_get_status_any(n, r_, idx, flag, st)));
}

MPIACC_INTERPOSE_EXPORT int MPI_Request_get_status_all(int n, const MPI_Request reqs[], int *flag, MPI_Status st[])
{
    XLAT_CALL(n, (MPI_Request *)reqs, 0, (mpiacc_rp_match_pending(), PMPI_Request_get_status_all(n, r_, flag, st)));
}

MPIACC_INTERPOSE_EXPORT int MPI_Request_get_status_some(int n, const MPI_Request reqs[], int *nout, int idx[],
                                                        MPI_Status st[])
{
    XLAT_CALL(n, (MPI_Request *)reqs, 0,
              (mpiacc_rp_match_pending(), PMPI_Request_get_status_some(n, r_, nout, idx, st)));
}
