/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/check.c: MPIACC_COLL_CHECK=1, the agreement check of device
 * collectives (comm.h): before a collective of a kind with a device path,
 * every process says whether its buffers are device memory (and which
 * kind) in one MPI_Allreduce; a mismatch is MPI_ERR_ARG on every process
 * instead of some processes entering NCCL and the others MPI, which hangs.
 *
 * The MPI_Allreduce runs on a duplicate of the communicator kept for the
 * checks (an attribute, made at the communicator's first checked call), so
 * it needs no place among the communicator's own collectives (some may
 * still be queued behind their dependencies): the checks of a
 * communicator are posted in the order its collectives are called, on
 * every process.  It is a blocking call: with the check, every collective
 * synchronises its processes (a debugging aid, off by default).
 */
#include <stdlib.h>

#include "coll_internal.h"

typedef struct check_comm {
    MPI_Comm user, dup;
    struct check_comm *next;
} check_comm_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int keyval = MPI_KEYVAL_INVALID;
static check_comm_t *all;

static int delete_fn(MPI_Comm comm, int kv, void *val, void *extra)
{
    check_comm_t *k = val;
    (void)comm, (void)kv, (void)extra;
    pthread_mutex_lock(&lock);
    for (check_comm_t **p = &all; *p; p = &(*p)->next)
        if (*p == k) {
            *p = k->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    PMPI_Comm_free(&k->dup);
    free(k);
    return MPI_SUCCESS;
}

/* The check duplicate of comm, made at its first check. */
static int dup_of(MPI_Comm comm, MPI_Comm *dup)
{
    int mpi_errno = MPI_SUCCESS, flag = 0, kv;
    check_comm_t *k = NULL;
    void *val = NULL;
    pthread_mutex_lock(&lock);
    if (keyval == MPI_KEYVAL_INVALID) mpi_errno = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL);
    kv = keyval;
    pthread_mutex_unlock(&lock);
    MPIACC_CHECK(mpi_errno);
    MPIACC_CHECK(PMPI_Comm_get_attr(comm, kv, &val, &flag));
    if (flag) {
        *dup = ((check_comm_t *)val)->dup;
        goto fn_exit;
    }
    if (!(k = calloc(1, sizeof *k))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    k->user = comm;
    mpiacc_coll_wait_turn(comm); /* the duplicate is a collective of comm: after those queued */
    MPIACC_CHECK(PMPI_Comm_dup(comm, &k->dup));
    MPIACC_CHECK(PMPI_Comm_set_attr(comm, kv, k));
    pthread_mutex_lock(&lock);
    k->next = all;
    all = k;
    pthread_mutex_unlock(&lock);
    *dup = k->dup;
    k = NULL;
fn_exit:
    if (k && k->dup != MPI_COMM_NULL) PMPI_Comm_free(&k->dup);
    free(k);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_coll_check_agree(mpiacc_coll_op_t *c, int dk)
{
    int mpi_errno = MPI_SUCCESS, v[2] = {dk, -dk};
    MPI_Comm dup = MPI_COMM_NULL;
    MPIACC_CHECK(dup_of(c->a.comm, &dup));
    MPIACC_CHECK(PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, dup));
    if (v[0] != -v[1])
        MPIACC_FAIL(MPIACC_ERRK_ARG,
                    "%s: MPIACC_COLL_CHECK: this process's buffers are %s, another process's are %s: a collective's "
                    "buffers must be device memory on every process or on none",
                    mpiacc_coll_name(c->kind, c->a.nonblocking), dk ? mpiacc_kind_name(dk) : "not all device memory",
                    dk == v[0] ? (-v[1] ? mpiacc_kind_name(-v[1]) : "not all device memory")
                               : mpiacc_kind_name(v[0]));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_coll_check_finalize(void)
{
    for (;;) {
        MPI_Comm user;
        pthread_mutex_lock(&lock);
        user = all ? all->user : MPI_COMM_NULL;
        pthread_mutex_unlock(&lock);
        if (user == MPI_COMM_NULL) break;
        if (PMPI_Comm_delete_attr(user, keyval) != MPI_SUCCESS) { /* not expected: drop it anyway */
            pthread_mutex_lock(&lock);
            all = all->next;
            pthread_mutex_unlock(&lock);
        }
    }
    if (keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&keyval);
    keyval = MPI_KEYVAL_INVALID;
}
