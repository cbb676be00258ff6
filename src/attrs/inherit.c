/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attrs/inherit.c: attributes through derived datatypes.
 *
 * A derived datatype that carries no MPIACC_BUF_TYPE of its own takes the
 * attributes (buffer type, MPIACC_STREAM, MPIACC_CL_QUEUE, MPIACC_EVENT,
 * MPIACC_DEVICE, MPIACC_ORDER) of its constituents — the datatypes MPI_Type_get_contents
 * names, at any depth, whatever the constructor — when those agree:
 *  - a constituent's own attributes are its attributes when it carries
 *    MPIACC_BUF_TYPE; otherwise a derived constituent counts with what it
 *    inherits (plus its own dependency attributes, as below) and an
 *    untagged predefined one only describes layout (neutral);
 *  - all constituents that are not neutral must carry the same buffer type
 *    and the same dependency attributes (each set on all with the same
 *    value, or on none); otherwise — different buffer types, a host-tagged
 *    and a device-tagged one, different queues or streams... — the datatype
 *    is refused at the call with an MPI_ERR_TYPE-class error naming two
 *    constituents that disagree;
 *  - dependency attributes set on the derived datatype itself (without
 *    MPIACC_BUF_TYPE) take precedence over the inherited ones.
 *
 * The decision (what a datatype inherits, or why it cannot) is made at the
 * datatype's first use and cached on it as an internal attribute (not
 * copied by MPI_Type_dup: a dup decides again, from the original, and gets
 * the same answer; freed with the datatype), and, for the fast check
 * (mpiacc_attrs_kind, attrs.h), in a slot indexed by the handle.  A change
 * of an mpiacc attribute through MPI_Type_set_attr or MPI_Type_delete_attr
 * on a datatype that a decision was made from (marked as a constituent
 * when the decision read it; any predefined datatype counts as marked)
 * starts a new generation: each decision is remade at its datatype's next
 * use, so changed constituents are seen, and changes on other datatypes
 * (an MPIACC_EVENT set before each send...) cost the derived datatypes
 * nothing.  A change made through PMPI_Type_set_attr on a constituent after
 * the derived datatype was first used is not seen until a generation
 * change.
 *
 * Decisions are made under one lock (first use only); the fast check reads
 * the slot without it.  Logged once per decision that inherits (info).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"

_Atomic(uint64_t) mpiacc_attrs_slots[MPIACC_ATTRS_NSLOTS];
atomic_uint mpiacc_attrs_gen, mpiacc_attrs_changes;

/* A decision: what the datatype inherits (kind MPIACC_KIND_NONE: nothing),
 * or why it cannot. */
typedef struct {
    mpiacc_attrs_t a;
    int decided;     /* 0: only the constituent mark below */
    int empty;       /* nothing inherited and size 0 (MPIACC_ATTRS_KIND_EMPTY) */
    int constituent; /* some decision read this datatype's attributes */
    int conflict;
    unsigned gen;
    char *why; /* when conflict (allocated) */
} rec_t;

/* What a constituent contributes (effective_locked). */
typedef struct {
    mpiacc_attrs_t a;
    int conflict;
    const char *why; /* the record's message, or buf */
    char buf[256];
} eff_t;

#define WHY_MAX 768

static int cache_kv = MPI_KEYVAL_INVALID;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int mark_failed; /* a constituent could not be marked: every change counts */

static void slot_clear(MPI_Datatype type)
{
    uint32_t h = (uint32_t)(uintptr_t)type;
    _Atomic(uint64_t) *s = &mpiacc_attrs_slots[mpiacc_attrs_slot_of(h)];
    uint64_t cur = atomic_load_explicit(s, memory_order_relaxed);
    if ((uint32_t)(cur >> 32) == h) atomic_compare_exchange_strong(s, &cur, 0);
}

static void slot_set(MPI_Datatype type, unsigned gen, int kind)
{
    uint32_t h = (uint32_t)(uintptr_t)type;
    if (!mpiacc_attrs_handles_checked) return;
    atomic_store_explicit(&mpiacc_attrs_slots[mpiacc_attrs_slot_of(h)],
                          ((uint64_t)h << 32) | ((uint64_t)(gen & MPIACC_ATTRS_GEN_MASK) << 4) |
                              (uint64_t)(kind + 2),
                          memory_order_relaxed);
}

/* MPI_Type_dup does not copy a decision; freeing the datatype drops it. */
static int copy_fn(MPI_Datatype old, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)kv, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype type, int kv, void *val, void *extra)
{
    (void)kv, (void)extra;
    slot_clear(type);
    if (val) free(((rec_t *)val)->why);
    free(val);
    return MPI_SUCCESS;
}

int mpiacc_attrs_inherit_init(void)
{
    return PMPI_Type_create_keyval(copy_fn, delete_fn, &cache_kv, NULL);
}

void mpiacc_attrs_inherit_finalize(void)
{
    if (cache_kv != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(&cache_kv);
    for (unsigned i = 0; i < MPIACC_ATTRS_NSLOTS; i++) atomic_store(&mpiacc_attrs_slots[i], 0);
    atomic_fetch_add(&mpiacc_attrs_gen, 1);
    atomic_fetch_add(&mpiacc_attrs_changes, 1);
}

/* Only a change on a datatype some decision was made from starts a new
 * generation (predefined datatypes are not marked: a change on one always
 * does).  Under the lock, so that a decision being made either reads the
 * new value or is made stale by it. */
void mpiacc_attrs_changed(MPI_Datatype type, int keyval)
{
    rec_t *r = NULL;
    int flag = 0;
    (void)keyval;
    atomic_fetch_add(&mpiacc_attrs_changes, 1);
    if (cache_kv == MPI_KEYVAL_INVALID) return;
    pthread_mutex_lock(&lock);
    if (mark_failed || !mpiacc_attrs_handles_checked || mpiacc_attrs_is_builtin(type) ||
        (PMPI_Type_get_attr(type, cache_kv, &r, &flag) == MPI_SUCCESS && flag && r->constituent))
        atomic_fetch_add(&mpiacc_attrs_gen, 1);
    pthread_mutex_unlock(&lock);
}

/* Marks a tagged derived constituent (an untagged one is marked in its
 * decision); under the lock, as mpiacc_attrs_changed reads the mark, so a
 * change either is read by the decision or makes it stale. */
static void mark_locked(MPI_Datatype t)
{
    rec_t *r = NULL;
    int flag = 0;
    if (mpiacc_attrs_handles_checked && mpiacc_attrs_is_builtin(t)) return;
    if (PMPI_Type_get_attr(t, cache_kv, &r, &flag) == MPI_SUCCESS && flag) {
        r->constituent = 1;
        return;
    }
    if (!(r = calloc(1, sizeof *r)) || PMPI_Type_set_attr(t, cache_kv, r) != MPI_SUCCESS) {
        free(r);
        mark_failed = 1;
        return;
    }
    r->constituent = 1;
}

static const char *combiner_name(int c)
{
    switch (c) {
    case MPI_COMBINER_NAMED: return "predefined";
    case MPI_COMBINER_DUP: return "MPI_Type_dup";
    case MPI_COMBINER_CONTIGUOUS: return "MPI_Type_contiguous";
    case MPI_COMBINER_VECTOR: return "MPI_Type_vector";
    case MPI_COMBINER_HVECTOR: return "MPI_Type_create_hvector";
    case MPI_COMBINER_INDEXED: return "MPI_Type_indexed";
    case MPI_COMBINER_HINDEXED: return "MPI_Type_create_hindexed";
    case MPI_COMBINER_INDEXED_BLOCK: return "MPI_Type_create_indexed_block";
    case MPI_COMBINER_HINDEXED_BLOCK: return "MPI_Type_create_hindexed_block";
    case MPI_COMBINER_STRUCT: return "MPI_Type_create_struct";
    case MPI_COMBINER_SUBARRAY: return "MPI_Type_create_subarray";
    case MPI_COMBINER_DARRAY: return "MPI_Type_create_darray";
    case MPI_COMBINER_RESIZED: return "MPI_Type_create_resized";
    default: return "derived";
    }
}

/* The datatype's name (MPI_Type_get_name) when it has one, else its
 * constructor and handle. */
static void type_name(MPI_Datatype t, char *buf, size_t n)
{
    char nm[MPI_MAX_OBJECT_NAME];
    int len = 0, comb = -1;
    MPI_Count ni, na, nc, nd;
    if (PMPI_Type_get_name(t, nm, &len) == MPI_SUCCESS && len > 0) {
        snprintf(buf, n, "'%s'", nm);
        return;
    }
    PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb);
    snprintf(buf, n, "the %s datatype 0x%x", combiner_name(comb), (unsigned)(uintptr_t)t);
}

static void describe(const mpiacc_attrs_t *a, char *buf, size_t n)
{
    static const char *const kinds[] = {"none", "MPIACC_BUF_HOST", "MPIACC_BUF_CUDA", "MPIACC_BUF_OPENCL"};
    int k = snprintf(buf, n, "%s", a->kind >= 0 && a->kind < MPIACC_KIND_MAX ? kinds[a->kind] : "?");
    if (a->has_stream && k < (int)n) k += snprintf(buf + k, n - k, ", MPIACC_STREAM %p", a->stream);
    if (a->has_queue && k < (int)n) k += snprintf(buf + k, n - k, ", MPIACC_CL_QUEUE %p", a->queue);
    if (a->has_event && k < (int)n) k += snprintf(buf + k, n - k, ", MPIACC_EVENT %p", a->event);
    if (a->has_device && k < (int)n) k += snprintf(buf + k, n - k, ", MPIACC_DEVICE %d", a->device);
    if (a->has_order && k < (int)n)
        snprintf(buf + k, n - k, ", MPIACC_ORDER %s", a->stream_order ? "MPIACC_ORDER_STREAM" : "MPIACC_ORDER_HOST");
}

static int same(const mpiacc_attrs_t *x, const mpiacc_attrs_t *y)
{
    return x->kind == y->kind && x->has_stream == y->has_stream && (!x->has_stream || x->stream == y->stream) &&
           x->has_queue == y->has_queue && (!x->has_queue || x->queue == y->queue) &&
           x->has_event == y->has_event && (!x->has_event || x->event == y->event) &&
           x->has_device == y->has_device && (!x->has_device || x->device == y->device) &&
           x->has_order == y->has_order && (!x->has_order || x->stream_order == y->stream_order);
}

/* The datatype's own dependency attributes replace inherited ones. */
static void override(mpiacc_attrs_t *a, const mpiacc_attrs_t *own)
{
    if (own->has_stream) a->stream = own->stream, a->has_stream = 1;
    if (own->has_queue) a->queue = own->queue, a->has_queue = 1;
    if (own->has_event) a->event = own->event, a->has_event = 1;
    if (own->has_device) a->device = own->device, a->has_device = 1;
    if (own->has_order) a->stream_order = own->stream_order, a->has_order = 1;
}

static const rec_t *decided_locked(MPI_Datatype t);

/* What the fast check reads for a decision (attrs.h). */
static int kind_of(const rec_t *r)
{
    return r->conflict ? MPIACC_ATTRS_KIND_INVALID : r->empty ? MPIACC_ATTRS_KIND_EMPTY : r->a.kind;
}

/* What a constituent contributes (its own attributes, or what it inherits
 * plus its own dependencies); kind MPIACC_KIND_NONE: neutral. */
static void effective_locked(MPI_Datatype t, eff_t *e)
{
    mpiacc_attrs_t own = {.kind = MPIACC_KIND_NONE};
    int has_kind = 0;
    const rec_t *r = NULL;
    char nm[MPI_MAX_OBJECT_NAME + 64];

    void *v = NULL;
    int flag = 0;

    e->a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    e->conflict = 0;
    e->why = NULL;
    /* the common case first: no MPIACC_BUF_TYPE on a predefined datatype */
    if (PMPI_Type_get_attr(t, MPIACC_BUF_TYPE, &v, &flag) != MPI_SUCCESS) return;
    if (!flag && mpiacc_attrs_handles_checked && mpiacc_attrs_is_builtin(t)) return;
    if (flag || (r = decided_locked(t)) == NULL || (r->a.kind != MPIACC_KIND_NONE && !r->conflict)) {
        if (mpiacc_attrs_read_own(t, &own, &has_kind) != MPI_SUCCESS) {
            type_name(t, nm, sizeof nm);
            e->conflict = 1;
            snprintf(e->buf, sizeof e->buf, "%s carries an invalid MPIACC_BUF_TYPE or MPIACC_DEVICE value", nm);
            e->why = e->buf;
            return;
        }
    }
    if (flag) {
        e->a = own;
        mark_locked(t);
        return;
    }
    if (!r) return;
    ((rec_t *)r)->constituent = 1; /* see mpiacc_attrs_changed */
    e->a = r->a;
    e->conflict = r->conflict;
    e->why = r->why;
    if (!e->conflict && e->a.kind != MPIACC_KIND_NONE) override(&e->a, &own);
}

/* The datatype's decision, made now when none of this generation exists
 * (NULL when MPI cannot describe the datatype). */
static const rec_t *decided_locked(MPI_Datatype t)
{
    rec_t *r = NULL, *old = NULL, *nr = NULL;
    int flag = 0, comb, first = -1;
    unsigned gen = atomic_load(&mpiacc_attrs_gen);
    MPI_Count ni, na, nc, nd;
    int *ints = NULL, ints_s[32];
    MPI_Aint *addrs = NULL, addrs_s[32];
    MPI_Count *counts = NULL, counts_s[32];
    MPI_Datatype *types = NULL, types_s[32];
    char n1[MPI_MAX_OBJECT_NAME + 64], n2[MPI_MAX_OBJECT_NAME + 64], n3[MPI_MAX_OBJECT_NAME + 64];
    char d1[160], d2[160];

    if (PMPI_Type_get_attr(t, cache_kv, &r, &flag) == MPI_SUCCESS && flag) {
        if (r->decided && r->gen == gen) return r;
        old = r;
    }
    if (PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb) != MPI_SUCCESS) return NULL;
    if (!(nr = calloc(1, sizeof *nr))) return NULL;
    nr->gen = gen;
    nr->decided = 1;
    nr->constituent = old && old->constituent;
    nr->a.kind = MPIACC_KIND_NONE;
    if (comb != MPI_COMBINER_NAMED && nd > 0) {
        /* small constructors (all but long struct/indexed lists) on the stack */
        ints = ni <= 32 ? ints_s : malloc(sizeof *ints * (size_t)ni);
        addrs = na <= 32 ? addrs_s : malloc(sizeof *addrs * (size_t)na);
        counts = nc <= 32 ? counts_s : malloc(sizeof *counts * (size_t)nc);
        types = nd <= 32 ? types_s : malloc(sizeof *types * (size_t)nd);
        if (types) memset(types, 0, sizeof *types * (size_t)nd);
        if (!ints || !addrs || !counts || !types ||
            PMPI_Type_get_contents_c(t, ni, na, nc, nd, ints, addrs, counts, types) != MPI_SUCCESS) {
            free(nr);
            nr = NULL;
            nd = 0;
            goto fn_exit;
        }
        for (MPI_Count i = 0; i < nd; i++) {
            eff_t e;
            if (i > 0 && types[i] == types[i - 1]) continue;
            effective_locked(types[i], &e);
            if (e.conflict) {
                type_name(t, n1, sizeof n1);
                nr->conflict = 1;
                if ((nr->why = malloc(WHY_MAX)))
                    snprintf(nr->why, WHY_MAX, "%.400s (a constituent of %.200s)", e.why ? e.why : "?", n1);
                break;
            }
            if (e.a.kind == MPIACC_KIND_NONE) continue;
            if (first < 0) {
                nr->a = e.a;
                first = (int)i;
            } else if (!same(&nr->a, &e.a)) {
                type_name(t, n1, sizeof n1);
                type_name(types[first], n2, sizeof n2);
                type_name(types[i], n3, sizeof n3);
                describe(&nr->a, d1, sizeof d1);
                describe(&e.a, d2, sizeof d2);
                nr->conflict = 1;
                nr->a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
                if ((nr->why = malloc(WHY_MAX)))
                snprintf(nr->why, WHY_MAX,
                         "%.80s carries no MPIACC_BUF_TYPE and its constituents' mpiacc attributes disagree: %.80s has "
                         "%.100s, %.80s has %.100s (set the attributes on %.80s itself, or build it from datatypes "
                         "that agree)",
                         n1, n2, d1, n3, d2, n1);
                break;
            }
        }
    }
    if (nr->a.kind != MPIACC_KIND_NONE && !nr->conflict &&
        (!old || !old->decided || old->conflict || !same(&old->a, &nr->a))) {
        type_name(t, n1, sizeof n1);
        type_name(types[first], n2, sizeof n2);
        describe(&nr->a, d1, sizeof d1);
        MPIACC_LOG(MPIACC_LOG_INFO, "%s carries no MPIACC_BUF_TYPE: it inherits %s from its constituent %s", n1, d1,
                   n2);
    }
    /* untagged and of size 0: point-to-point calls route it (attrs.h) */
    if (nr->a.kind == MPIACC_KIND_NONE && !nr->conflict && comb != MPI_COMBINER_NAMED) {
        MPI_Count sz = -1;
        nr->empty = PMPI_Type_size_c(t, &sz) == MPI_SUCCESS && sz == 0;
    }
    /* replaces (and frees, through delete_fn) an older decision */
    if (PMPI_Type_set_attr(t, cache_kv, nr) != MPI_SUCCESS) {
        free(nr);
        nr = NULL;
        goto fn_exit;
    }
    slot_set(t, gen, kind_of(nr));
fn_exit:
    /* get_contents returned handles for derived constituents: release them */
    for (MPI_Count i = 0; types && i < nd; i++) {
        MPI_Count xi, xa, xc, xd;
        int c;
        if (types[i] == MPI_DATATYPE_NULL) continue;
        if (PMPI_Type_get_envelope_c(types[i], &xi, &xa, &xc, &xd, &c) == MPI_SUCCESS && c != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[i]);
    }
    if (ints != ints_s) free(ints);
    if (addrs != addrs_s) free(addrs);
    if (counts != counts_s) free(counts);
    if (types != types_s) free(types);
    return nr;
}

int mpiacc_attrs_inherited_kind(MPI_Datatype type)
{
    const rec_t *r;
    int k;
    if (cache_kv == MPI_KEYVAL_INVALID) return MPIACC_KIND_NONE;
    pthread_mutex_lock(&lock);
    r = decided_locked(type);
    k = r ? kind_of(r) : MPIACC_KIND_NONE;
    pthread_mutex_unlock(&lock);
    return k;
}

int mpiacc_attrs_inherited(MPI_Datatype type, mpiacc_attrs_t *a)
{
    int mpi_errno = MPI_SUCCESS, has_kind = 0, conflict = 0;
    mpiacc_attrs_t own;
    const rec_t *r;
    char why[WHY_MAX];

    *a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    if (cache_kv == MPI_KEYVAL_INVALID) goto fn_exit;
    pthread_mutex_lock(&lock);
    r = decided_locked(type);
    if (r) {
        *a = r->a;
        conflict = r->conflict;
        if (conflict) snprintf(why, sizeof why, "%s", r->why ? r->why : "constituents disagree");
    }
    pthread_mutex_unlock(&lock);
    if (conflict) MPIACC_FAIL(MPIACC_ERRK_TYPE, "%s", why);
    if (a->kind == MPIACC_KIND_NONE) goto fn_exit;
    /* the datatype's own dependency attributes take precedence */
    MPIACC_CHECK(mpiacc_attrs_read_own(type, &own, &has_kind));
    override(a, &own);
fn_exit:
    return mpi_errno;
fn_fail:
    *a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    goto fn_exit;
}
