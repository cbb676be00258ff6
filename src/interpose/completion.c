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

MPIACC_INTERPOSE_EXPORT int MPI_Wait(MPI_Request *r, MPI_Status *st)
{
    int rc, err;
    MPI_Comm comm;
    if (mpiacc_rp_none_live() || !r) return PMPI_Wait(r, st);
    rc = mpiacc_rp_wait(r, st, &err, &comm);
    if (rc == MPI_SUCCESS && err != MPI_SUCCESS) rc = mpiacc_err_return_comm(comm, err);
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Test(MPI_Request *r, int *flag, MPI_Status *st)
{
    mpiacc_rp_claim_t c;
    int rc;
    if (mpiacc_rp_none_live() || !r || !mpiacc_rp_claim(*r, &c)) return PMPI_Test(r, flag, st);
    rc = PMPI_Test(r, flag, st);
    if (rc == MPI_SUCCESS && c.queried && c.error != MPI_SUCCESS) rc = mpiacc_err_return_comm(c.comm, c.error);
    mpiacc_rp_unclaim(&c);
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Request_get_status(MPI_Request r, int *flag, MPI_Status *st)
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

MPIACC_INTERPOSE_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    claims_t cl;
    int rc;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs)) return PMPI_Waitany(n, reqs, idx, st);
    rc = PMPI_Waitany(n, reqs, idx, st);
    if (rc == MPI_SUCCESS && idx && *idx >= 0 && *idx < n && claim_error(&cl, *idx) != MPI_SUCCESS)
        rc = mpiacc_err_return_comm(MPI_COMM_NULL, claim_error(&cl, *idx));
    claims_give(&cl);
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
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

MPIACC_INTERPOSE_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status st[])
{
    claims_t cl;
    int rc;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs)) return PMPI_Waitall(n, reqs, st);
    rc = PMPI_Waitall(n, reqs, st);
    rc = in_status(&cl, n, NULL, st, rc);
    claims_give(&cl);
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status st[])
{
    claims_t cl;
    int rc;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs)) return PMPI_Testall(n, reqs, flag, st);
    rc = PMPI_Testall(n, reqs, flag, st);
    rc = in_status(&cl, flag && *flag ? n : 0, NULL, st, rc);
    claims_give(&cl);
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
{
    claims_t cl;
    int rc;
    if (mpiacc_rp_none_live() || n <= 0 || !reqs || !claims_take(&cl, n, reqs))
        return PMPI_Waitsome(n, reqs, nout, idx, st);
    rc = PMPI_Waitsome(n, reqs, nout, idx, st);
    rc = in_status(&cl, nout && *nout != MPI_UNDEFINED ? *nout : 0, idx, st, rc);
    claims_give(&cl);
    return rc;
}

MPIACC_INTERPOSE_EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *nout, int idx[], MPI_Status st[])
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
