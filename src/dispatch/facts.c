/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/facts.c: what every device call needs of its datatype — the
 * attributes (own or inherited, checked: mpiacc_attrs_get), the backend's
 * checks of them that do not depend on the buffer (its `facts` entry: for
 * CUDA the stream's device and flags) and the datatype analysis — read
 * once per datatype and kept on it, instead of at every call (seven
 * attribute lookups, an analysis lookup and two CUDA queries before).
 *
 * The record is an attribute of ours on the datatype (a dup gets its own;
 * MPI_Type_free frees it and drops its reference to the analysis).  It is
 * current while no mpiacc attribute changed anywhere since it was read
 * (mpiacc_attrs_changes: MPI_Type_set_attr / MPI_Type_delete_attr of an
 * mpiacc keyval) and the datatype's own MPIACC_BUF_TYPE value is the one
 * it was read with (the interposer reads that attribute at every call, so
 * a buffer type put with PMPI_Type_set_attr counts at once); otherwise it
 * is read again.  Other attributes put with PMPI_Type_set_attr after the
 * datatype's first device call are not seen (include/mpiacc.h).
 *
 * Readers take no lock: the record's attributes are guarded by a sequence
 * counter (odd while a writer, under `lock`, replaces them) and held as
 * atomic words (the writer's release stores, the readers' acquire loads),
 * so that a reader racing a writer reads words, not torn bytes, and then
 * sees the counter moved and takes the lock.  The
 * analysis pointer never changes once the record exists.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

#define NWORDS ((sizeof(mpiacc_attrs_t) + sizeof(uint64_t) - 1) / sizeof(uint64_t))
typedef union {
    mpiacc_attrs_t a;
    uint64_t w[NWORDS];
} words_t;

typedef struct facts {
    atomic_uint seq;           /* even: the fields below stable                 */
    atomic_uint changes;       /* mpiacc_attrs_changes when read                */
    atomic_int own;            /* the datatype's MPIACC_BUF_TYPE value when read (-1: none) */
    atomic_int valid;          /* attrs were read without error                 */
    _Atomic(uint64_t) attrs[NWORDS];
    mpiacc_pack_type_t *type;  /* analysis, one reference held; constant        */
} facts_t;

static int facts_kv = MPI_KEYVAL_INVALID;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int facts_delete(MPI_Datatype type, int keyval, void *val, void *extra)
{
    facts_t *f = val;
    (void)type, (void)keyval, (void)extra;
    if (f) mpiacc_pack_type_release(f->type);
    free(f);
    return MPI_SUCCESS;
}

int mpiacc_dispatch_facts_init(void)
{
    return PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, facts_delete, &facts_kv, NULL);
}

void mpiacc_dispatch_facts_finalize(void)
{
    if (facts_kv != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(&facts_kv);
}

/* The datatype's own MPIACC_BUF_TYPE value, -1 when it has none. */
static int own_kind(MPI_Datatype dt)
{
    void *v = NULL;
    int flag = 0;
    if (PMPI_Type_get_attr(dt, MPIACC_BUF_TYPE, &v, &flag) != MPI_SUCCESS || !flag) return -1;
    return (int)(intptr_t)v;
}

/* Reads the attributes and the backend's facts into f (lock held). */
static int refresh_locked(MPI_Datatype dt, facts_t *f, int own)
{
    int mpi_errno = MPI_SUCCESS;
    unsigned changes = atomic_load(&mpiacc_attrs_changes); /* before the reads: a change meanwhile makes f stale */
    mpiacc_attrs_t a;
    const mpiacc_backend_t *be;
    MPIACC_CHECK(mpiacc_attrs_get(dt, &a));
    /* the backend's facts where this call starts it anyway: a datatype that
     * needs the pool (a host one without an event goes to MPI untouched) */
    if (mpiacc_dispatch_wants_pool(&a) && (be = mpiacc_backend_get(a.kind)) && be->facts) MPIACC_CHECK(be->facts(&a));
    words_t w;
    memset(&w, 0, sizeof w);
    w.a = a;
    /* release stores: each is seen only after the odd count before it */
    atomic_fetch_add_explicit(&f->seq, 1, memory_order_relaxed); /* odd */
    for (size_t i = 0; i < NWORDS; i++) atomic_store_explicit(&f->attrs[i], w.w[i], memory_order_release);
    atomic_store_explicit(&f->own, own, memory_order_release);
    atomic_store_explicit(&f->changes, changes, memory_order_release);
    atomic_store_explicit(&f->valid, 1, memory_order_release);
    atomic_fetch_add_explicit(&f->seq, 1, memory_order_release); /* even */
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* A consistent copy of f's attributes if they are current for `own`. */
static int read_current(facts_t *f, int own, mpiacc_attrs_t *a)
{
    unsigned s1 = atomic_load_explicit(&f->seq, memory_order_acquire), s2;
    words_t w;
    int ok;
    if (s1 & 1) return 0;
    /* acquire loads: the second reading of the count comes after them all */
    ok = atomic_load_explicit(&f->valid, memory_order_acquire) && atomic_load_explicit(&f->own, memory_order_acquire) == own &&
         atomic_load_explicit(&f->changes, memory_order_acquire) ==
             atomic_load_explicit(&mpiacc_attrs_changes, memory_order_relaxed);
    for (size_t i = 0; ok && i < NWORDS; i++) w.w[i] = atomic_load_explicit(&f->attrs[i], memory_order_acquire);
    s2 = atomic_load_explicit(&f->seq, memory_order_relaxed);
    if (!ok || s1 != s2) return 0;
    *a = w.a;
    return 1;
}

int mpiacc_dispatch_facts(MPI_Datatype dt, mpiacc_attrs_t *a, mpiacc_pack_type_t **t)
{
    int mpi_errno = MPI_SUCCESS, flag = 0, own, locked = 0;
    facts_t *f = NULL;

    *t = NULL;
    /* Predefined datatypes (tagged ones are rare) and handles MPI would
     * refuse: the attributes the slow way, the analysis by the caller. */
    if (facts_kv == MPI_KEYVAL_INVALID || !mpiacc_attrs_lookup_ok(dt) || mpiacc_attrs_is_builtin(dt))
        return mpiacc_attrs_get(dt, a);
    own = own_kind(dt);
    if (PMPI_Type_get_attr(dt, facts_kv, &f, &flag) == MPI_SUCCESS && flag && read_current(f, own, a)) {
        *t = f->type;
        goto fn_exit;
    }
    pthread_mutex_lock(&lock);
    locked = 1;
    if (PMPI_Type_get_attr(dt, facts_kv, &f, &flag) != MPI_SUCCESS || !flag) {
        mpiacc_pack_type_t *pt = NULL;
        /* an uncommitted or invalid datatype fails here, as before */
        MPIACC_CHECK(mpiacc_attrs_get(dt, a));
        MPIACC_CHECK(mpiacc_pack_type_get(dt, &pt));
        if (!(f = calloc(1, sizeof *f))) {
            mpiacc_pack_type_release(pt);
            MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a datatype's facts");
        }
        f->type = pt;
        if (PMPI_Type_set_attr(dt, facts_kv, f) != MPI_SUCCESS) {
            facts_delete(dt, facts_kv, f, NULL);
            MPIACC_FAIL(MPIACC_ERRK_INTERN, "cannot keep a datatype's facts on it");
        }
    }
    if (!read_current(f, own, a)) {
        MPIACC_CHECK(refresh_locked(dt, f, own));
        if (!read_current(f, own, a)) MPIACC_CHECK(mpiacc_attrs_get(dt, a)); /* changed meanwhile */
    }
    *t = f->type;
fn_exit:
    if (locked) pthread_mutex_unlock(&lock);
    return mpi_errno;
fn_fail:
    *a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    goto fn_exit;
}
