/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reqpool/complete.c: recognising mpiacc's requests in the MPI completion
 * calls and taking their results out of MPI's hands (see reqpool.h).
 *
 * The registry maps a generalized request handle to its op: a fixed table
 * of buckets, each a chain under its own mutex (no MPI call is made while
 * one is held, so the free callback, which MPI calls with its own locks
 * held, can take it safely).  mpiacc_rp_live counts the registered ops so
 * that, with none, the completion calls skip the registry altogether.
 */
#include <string.h>

#include "reqpool.h"

#define NBUCKETS 256

typedef struct bucket {
    pthread_mutex_t lock;
    mpiacc_rp_op_t *head;
} bucket_t;

static bucket_t buckets[NBUCKETS];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;
atomic_int mpiacc_rp_live;

static void buckets_init(void)
{
    for (int i = 0; i < NBUCKETS; i++) {
        pthread_mutex_init(&buckets[i].lock, NULL);
        buckets[i].head = NULL;
    }
}

/* MPI_Request is an integer handle in MPICH's ABI and a pointer in
 * others: hash its bytes. */
static bucket_t *bucket_of(MPI_Request r)
{
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    k ^= k >> 29;
    k *= 0x9e3779b97f4a7c15ull;
    return &buckets[k >> 56];
}

void mpiacc_rp_register(mpiacc_rp_op_t *op)
{
    bucket_t *b;
    pthread_once(&buckets_once, buckets_init);
    b = bucket_of(op->greq);
    op->claim = NULL;
    pthread_mutex_lock(&b->lock);
    op->rnext = b->head;
    b->head = op;
    pthread_mutex_unlock(&b->lock);
    atomic_fetch_add_explicit(&mpiacc_rp_live, 1, memory_order_release);
}

void mpiacc_rp_unregister(mpiacc_rp_op_t *op)
{
    bucket_t *b = bucket_of(op->greq);
    mpiacc_rp_op_t **p;
    int found = 0;
    pthread_mutex_lock(&b->lock);
    for (p = &b->head; *p; p = &(*p)->rnext)
        if (*p == op) {
            *p = op->rnext;
            found = 1;
            break;
        }
    if (op->claim) op->claim->freed = 1; /* under the lock: see mpiacc_rp_unclaim */
    op->claim = NULL;
    pthread_mutex_unlock(&b->lock);
    if (found) atomic_fetch_sub_explicit(&mpiacc_rp_live, 1, memory_order_release);
}

int mpiacc_rp_claim(MPI_Request r, mpiacc_rp_claim_t *c)
{
    bucket_t *b;
    mpiacc_rp_op_t *op;
    memset(c, 0, sizeof *c);
    c->comm = MPI_COMM_NULL;
    if (r == MPI_REQUEST_NULL || mpiacc_rp_none_live()) return 0;
    pthread_once(&buckets_once, buckets_init);
    b = bucket_of(r);
    pthread_mutex_lock(&b->lock);
    for (op = b->head; op && op->greq != r; op = op->rnext) continue;
    if (op) {
        c->op = op;
        c->req = r;
        c->comm = op->user_comm; /* op->comm may be a protocol's, and changes */
        op->claim = c;
    }
    pthread_mutex_unlock(&b->lock);
    return op != NULL;
}

/* The op may be freed by another thread meanwhile (c->freed, set under
 * the bucket's lock): the bucket comes from the request claimed, never
 * from the op. */
void mpiacc_rp_unclaim(mpiacc_rp_claim_t *c)
{
    if (c->op) {
        bucket_t *b = bucket_of(c->req);
        pthread_mutex_lock(&b->lock);
        if (!c->freed) c->op->claim = NULL;
        pthread_mutex_unlock(&b->lock);
    }
    c->op = NULL;
}

int mpiacc_rp_claim_result(mpiacc_rp_op_t *op, int error)
{
    bucket_t *b = bucket_of(op->greq);
    int claimed;
    pthread_mutex_lock(&b->lock);
    claimed = op->claim != NULL;
    if (claimed) {
        op->claim->error = error;
        op->claim->queried = 1;
    }
    pthread_mutex_unlock(&b->lock);
    return claimed;
}

int mpiacc_rp_wait(MPI_Request *r, MPI_Status *st, int *op_err, MPI_Comm *comm)
{
    mpiacc_rp_claim_t c;
    int rc;
    mpiacc_rp_claim(*r, &c);
    rc = mpiacc_rp_pmpi_wait(r, st);
    *op_err = c.queried ? c.error : MPI_SUCCESS;
    *comm = c.comm;
    mpiacc_rp_unclaim(&c);
    return rc;
}
