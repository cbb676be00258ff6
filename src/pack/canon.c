/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pack/canon.c: canonicalisation of the internal tree (after TEMPI, Pearson
 * et al., §3.2) and the facts derived from the canonical tree: strided-block
 * form, largest contiguous chunk, alignment.
 *
 * Rewrites, applied to a node whose children are already canonical, until
 * none applies:
 *   - dense folding: a VEC whose stride equals the byte length of its LEAF
 *     child is one larger LEAF;
 *   - stream elision: a stream of one element (VEC/HIDX/IDX/STRUCT with one
 *     entry) is its child, shifted;
 *   - stream flattening: VEC(c1, s1) of VEC(c2, s2) with s1 == c2*s2 is
 *     VEC(c1*c2, s2);
 *   - index normalisation: empty blocks/members dropped, adjacent dense
 *     blocks and adjacent leaf members merged, uniform IDX -> HIDX,
 *     arithmetic HIDX -> VEC, STRUCT of equal leaves -> HIDX;
 * so every composition of contiguous/vector/hvector/subarray (and indexed
 * types that happen to be regular) ends as VEC^k of LEAF: the strided form.
 *
 * Deliberate difference from TEMPI: nested streams are NOT reordered by
 * stride.  MPI_Pack's byte order is the type-map order, so swapping two
 * streams would change the packed bytes (it is only valid when a count is
 * 1, which elision already handles).  The strided form therefore lists the
 * dimensions in packing order, fastest first; equivalent constructions of
 * the same object (the paper's Figure 2) still reduce to the same form.
 *
 * Canonicalisation never fails: when memory runs out, or an offset of the
 * rewritten node would not fit in 64 bits, the rewrite is skipped and the
 * node stays valid (mpiacc_pack_describe then rejects offsets that far).
 */
#include <stdlib.h>
#include <string.h>

#include "pack_internal.h"

/* ---- arena ------------------------------------------------------------ */

void mpiacc_pack_arena_init(mpiacc_pack_arena_t *a)
{
    a->head = NULL;
    a->first_used = 0;
}

void *mpiacc_pack_arena_alloc(mpiacc_pack_arena_t *a, size_t bytes)
{
    void *p;
    bytes = (bytes + 15) & ~(size_t)15;
    if (!a->head && a->first_used + bytes <= sizeof a->first_mem) {
        p = a->first_mem + a->first_used;
        a->first_used += bytes;
        return p;
    }
    if (!a->head || a->head->used + bytes > a->head->cap) {
        size_t cap = bytes > 65536 ? bytes : 65536;
        mpiacc_pack_arena_blk_t *b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    p = (unsigned char *)(a->head + 1) + a->head->used;
    a->head->used += bytes;
    return p;
}

void mpiacc_pack_arena_free(mpiacc_pack_arena_t *a)
{
    while (a->head) {
        mpiacc_pack_arena_blk_t *n = a->head->next;
        free(a->head);
        a->head = n;
    }
    a->first_used = 0;
}

mpiacc_pack_node_t *mpiacc_pack_new_node(mpiacc_pack_arena_t *a, int kind)
{
    mpiacc_pack_node_t *n = mpiacc_pack_arena_alloc(a, sizeof *n);
    if (n) {
        memset(n, 0, sizeof *n);
        n->kind = kind;
    }
    return n;
}

/* ---- rewrites ----------------------------------------------------------- */

/* A copy of c moved by delta and given another extent (c itself may be
 * shared and is never modified).  NULL when out of memory or when the
 * offset overflows. */
static mpiacc_pack_node_t *shifted(mpiacc_pack_arena_t *a, const mpiacc_pack_node_t *c, MPI_Count delta,
                                   MPI_Count extent)
{
    MPI_Count off;
    mpiacc_pack_node_t *n;
    if (mpiacc_pack_add(c->off, delta, &off) || !(n = mpiacc_pack_new_node(a, c->kind))) return NULL;
    *n = *c;
    n->off = off;
    n->extent = extent;
    return n;
}

static int canon_vec(mpiacc_pack_node_t *n, mpiacc_pack_node_t **out, mpiacc_pack_arena_t *a)
{
    mpiacc_pack_node_t *c = n->child;
    MPI_Count span, off;
    if (n->count == 1 && (*out = shifted(a, c, n->off, n->extent))) return 0;
    /* dense folding */
    if (c->kind == MPIACC_PACK_LEAF && c->size == n->stride && !mpiacc_pack_add(n->off, c->off, &off)) {
        n->kind = MPIACC_PACK_LEAF;
        n->off = off;
        n->child = NULL;
        n->count = 0;
        n->stride = 0;
        *out = n;
        return 0;
    }
    if (c->kind == MPIACC_PACK_VEC && !mpiacc_pack_mul(c->count, c->stride, &span) && span == n->stride &&
        !mpiacc_pack_add(n->off, c->off, &off)) { /* flattening */
        n->count *= c->count; /* <= n->size: no overflow */
        n->stride = c->stride;
        n->off = off;
        n->child = c->child;
        return 1; /* again */
    }
    *out = n;
    return 0;
}

static int canon_hidx(mpiacc_pack_node_t *n, mpiacc_pack_node_t **out, mpiacc_pack_arena_t *a)
{
    mpiacc_pack_node_t *c = n->child;
    MPI_Count i, s, d, off;
    if (n->count == 1) {
        if (mpiacc_pack_add(n->off, n->displs[0], &off) || !(*out = shifted(a, c, off, n->extent))) *out = n;
        return 0;
    }
    if (!mpiacc_pack_sub(n->displs[1], n->displs[0], &s)) {
        for (i = 2; i < n->count && !mpiacc_pack_sub(n->displs[i], n->displs[i - 1], &d) && d == s; i++)
            ;
        if (i == n->count && !mpiacc_pack_add(n->off, n->displs[0], &off)) { /* arithmetic displacements: a vector */
            n->kind = MPIACC_PACK_VEC;
            n->off = off;
            n->stride = s;
            n->displs = NULL;
            return 1;
        }
    }
    if (c->kind == MPIACC_PACK_LEAF) { /* adjacent leaf blocks merge through IDX */
        for (i = 1; i < n->count && (mpiacc_pack_add(n->displs[i - 1], c->size, &d) || d != n->displs[i]); i++)
            ;
        if (i < n->count) {
            MPI_Count *bl = mpiacc_pack_arena_alloc(a, sizeof(MPI_Count) * (size_t)n->count);
            if (bl) {
                for (i = 0; i < n->count; i++) bl[i] = 1;
                n->kind = MPIACC_PACK_IDX;
                n->blens = bl;
                n->stride = c->size;
                return 1;
            }
        }
    }
    *out = n;
    return 0;
}

static int canon_idx(mpiacc_pack_node_t *n, mpiacc_pack_node_t **out, mpiacc_pack_arena_t *a)
{
    mpiacc_pack_node_t *c = n->child, *v;
    int dense = c->kind == MPIACC_PACK_LEAF && c->size == n->stride;
    MPI_Count i, j = 0, end;
    for (i = 0; i < n->count; i++) {
        if (n->blens[i] == 0) continue;
        /* (blens * stride <= the node's size when dense) */
        if (dense && j > 0 && !mpiacc_pack_add(n->displs[j - 1], n->blens[j - 1] * n->stride, &end) &&
            end == n->displs[i]) {
            n->blens[j - 1] += n->blens[i];
            continue;
        }
        n->blens[j] = n->blens[i];
        n->displs[j] = n->displs[i];
        j++;
    }
    n->count = j;
    for (i = 1; i < n->count && n->blens[i] == n->blens[0]; i++)
        ;
    if (i == n->count) { /* uniform blocks: HIDX of a VEC block */
        v = mpiacc_pack_new_node(a, MPIACC_PACK_VEC);
        if (v) {
            v->count = n->blens[0];
            v->stride = n->stride;
            v->child = c;
            v->size = n->blens[0] * c->size;
            n->kind = MPIACC_PACK_HIDX;
            n->child = mpiacc_pack_canon(a, v);
            n->blens = NULL;
            n->stride = 0;
            return 1;
        }
    }
    *out = n;
    return 0;
}

static int canon_struct(mpiacc_pack_node_t *n, mpiacc_pack_node_t **out, mpiacc_pack_arena_t *a)
{
    MPI_Count i, j = 0, end;
    mpiacc_pack_node_t *l;
    for (i = 0; i < n->count; i++) {
        mpiacc_pack_node_t *k = n->kids[i];
        if (k->size == 0) continue;
        if (j > 0 && k->kind == MPIACC_PACK_LEAF && n->kids[j - 1]->kind == MPIACC_PACK_LEAF) {
            mpiacc_pack_node_t *p = n->kids[j - 1];
            MPI_Count pstart, pend, kstart;
            if (!mpiacc_pack_add(n->displs[j - 1], p->off, &pstart) && !mpiacc_pack_add(pstart, p->size, &pend) &&
                !mpiacc_pack_add(n->displs[i], k->off, &kstart) && pend == kstart &&
                (l = mpiacc_pack_new_node(a, MPIACC_PACK_LEAF))) {
                l->size = l->extent = p->size + k->size;
                n->displs[j - 1] = pstart;
                n->kids[j - 1] = l;
                continue;
            }
        }
        n->kids[j] = k;
        n->displs[j] = n->displs[i];
        j++;
    }
    n->count = j;
    if (n->count == 1 && !mpiacc_pack_add(n->off, n->displs[0], &end) && (*out = shifted(a, n->kids[0], end, n->extent)))
        return 0;
    for (i = 0; i < n->count && n->kids[i]->kind == MPIACC_PACK_LEAF && n->kids[i]->size == n->kids[0]->size &&
                !mpiacc_pack_add(n->displs[i], n->kids[i]->off, &end);
         i++)
        ;
    if (i == n->count && (l = mpiacc_pack_new_node(a, MPIACC_PACK_LEAF))) { /* equal leaves: HIDX */
        l->size = l->extent = n->kids[0]->size;
        for (i = 0; i < n->count; i++) n->displs[i] += n->kids[i]->off; /* checked above */
        n->kind = MPIACC_PACK_HIDX;
        n->child = l;
        n->kids = NULL;
        return 1;
    }
    *out = n;
    return 0;
}

mpiacc_pack_node_t *mpiacc_pack_canon(mpiacc_pack_arena_t *a, mpiacc_pack_node_t *n)
{
    mpiacc_pack_node_t *out = n;
    int again = 1;
    while (again) {
        if (n->size == 0) { /* nothing to move: an empty leaf */
            n->kind = MPIACC_PACK_LEAF;
            n->off = n->count = n->stride = 0;
            n->child = NULL;
            n->kids = NULL;
            return n;
        }
        switch (n->kind) {
        case MPIACC_PACK_VEC: again = canon_vec(n, &out, a); break;
        case MPIACC_PACK_HIDX: again = canon_hidx(n, &out, a); break;
        case MPIACC_PACK_IDX: again = canon_idx(n, &out, a); break;
        case MPIACC_PACK_STRUCT: again = canon_struct(n, &out, a); break;
        default: out = n; again = 0; break;
        }
    }
    return out;
}

/* ---- bounds ------------------------------------------------------------- */

/* What a node reaches, relative to its parent's origin (its own `off`
 * included): the bytes it touches, [lo, hi) (none when `empty`), and the
 * range [rlo, rhi] holding every partial offset the traversal computes
 * inside it (node origins included), so that bounding rlo/rhi bounds all of
 * traverse.h's index arithmetic. */
typedef struct bounds {
    MPI_Count lo, hi, rlo, rhi;
    int empty;
} bounds_t;

static MPI_Count count_min(MPI_Count a, MPI_Count b) { return a < b ? a : b; }
static MPI_Count count_max(MPI_Count a, MPI_Count b) { return a > b ? a : b; }

/* b moved by [dlo, dhi] (every shift in between happens); nonzero on
 * overflow. */
static int spread(bounds_t *b, MPI_Count dlo, MPI_Count dhi)
{
    return mpiacc_pack_add(b->lo, dlo, &b->lo) || mpiacc_pack_add(b->hi, dhi, &b->hi) ||
           mpiacc_pack_add(b->rlo, dlo, &b->rlo) || mpiacc_pack_add(b->rhi, dhi, &b->rhi);
}

/* acc := acc union b */
static void unite(bounds_t *acc, const bounds_t *b, int *first)
{
    if (*first) {
        *acc = *b;
        *first = 0;
        return;
    }
    if (acc->empty) acc->lo = b->lo, acc->hi = b->hi;
    else if (!b->empty) acc->lo = count_min(acc->lo, b->lo), acc->hi = count_max(acc->hi, b->hi);
    acc->empty = acc->empty && b->empty;
    acc->rlo = count_min(acc->rlo, b->rlo);
    acc->rhi = count_max(acc->rhi, b->rhi);
}

/* Range of k*step for 0 <= k < n (n >= 1); nonzero on overflow. */
static int steps(MPI_Count n, MPI_Count step, MPI_Count *lo, MPI_Count *hi)
{
    MPI_Count last;
    if (mpiacc_pack_mul(n - 1, step, &last)) return 1;
    *lo = count_min(0, last);
    *hi = count_max(0, last);
    return 0;
}

static int bounds_of(const mpiacc_pack_node_t *n, bounds_t *b)
{
    bounds_t c;
    MPI_Count i, lo, hi;
    int first = 1;
    b->lo = b->hi = b->rlo = b->rhi = 0;
    b->empty = 1;
    switch (n->kind) {
    case MPIACC_PACK_LEAF:
        if (n->size > 0) {
            b->empty = 0;
            b->hi = b->rhi = n->size;
        }
        break;
    case MPIACC_PACK_VEC:
        if (n->count < 1) break;
        if (bounds_of(n->child, b) || steps(n->count, n->stride, &lo, &hi) || spread(b, lo, hi)) return 1;
        break;
    case MPIACC_PACK_HIDX:
        if (n->count < 1) break;
        if (bounds_of(n->child, &c)) return 1;
        lo = hi = n->displs[0];
        for (i = 1; i < n->count; i++) lo = count_min(lo, n->displs[i]), hi = count_max(hi, n->displs[i]);
        *b = c;
        if (spread(b, lo, hi)) return 1;
        break;
    case MPIACC_PACK_IDX:
        if (bounds_of(n->child, &c)) return 1;
        for (i = 0; i < n->count; i++) {
            bounds_t k = c;
            if (n->blens[i] < 1) continue;
            if (steps(n->blens[i], n->stride, &lo, &hi) || mpiacc_pack_add(lo, n->displs[i], &lo) ||
                mpiacc_pack_add(hi, n->displs[i], &hi) || spread(&k, lo, hi))
                return 1;
            unite(b, &k, &first);
        }
        break;
    case MPIACC_PACK_STRUCT:
        for (i = 0; i < n->count; i++) {
            if (bounds_of(n->kids[i], &c) || spread(&c, n->displs[i], n->displs[i])) return 1;
            unite(b, &c, &first);
        }
        break;
    }
    /* the node's origin and its offset */
    b->rlo = count_min(b->rlo, 0);
    b->rhi = count_max(b->rhi, 0);
    if (spread(b, n->off, n->off)) return 1;
    b->rlo = count_min(b->rlo, 0);
    b->rhi = count_max(b->rhi, 0);
    return 0;
}

/* ---- derived facts ------------------------------------------------------ */

static MPI_Count gcd(MPI_Count a, MPI_Count b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        MPI_Count t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* gcd of the lengths of the contiguous runs (0 for an empty node); *bits
 * collects (by OR) every offset a run can start at, for the alignment. */
static MPI_Count chunk_of(const mpiacc_pack_node_t *n, MPI_Count *bits)
{
    MPI_Count g = 0, i;
    *bits |= n->off;
    switch (n->kind) {
    case MPIACC_PACK_LEAF: return n->size;
    case MPIACC_PACK_VEC:
        *bits |= n->stride;
        return chunk_of(n->child, bits);
    case MPIACC_PACK_HIDX:
        for (i = 0; i < n->count; i++) *bits |= n->displs[i];
        return chunk_of(n->child, bits);
    case MPIACC_PACK_IDX:
        *bits |= n->stride;
        for (i = 0; i < n->count; i++) *bits |= n->displs[i];
        if (n->child->kind == MPIACC_PACK_LEAF && n->child->size == n->stride) {
            *bits |= n->child->off;
            for (i = 0; i < n->count; i++) g = gcd(g, n->blens[i] * n->stride);
            return g;
        }
        return chunk_of(n->child, bits);
    case MPIACC_PACK_STRUCT:
        for (i = 0; i < n->count; i++) {
            *bits |= n->displs[i];
            g = gcd(g, chunk_of(n->kids[i], bits));
        }
        return g;
    }
    return 1;
}

int mpiacc_pack_describe(const mpiacc_pack_node_t *root, mpiacc_pack_type_t *t, MPI_Count *align)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Count bits = t->extent, chunk, start = 0;
    MPI_Count counts[MPIACC_PACK_MAX_DIMS], strides[MPIACC_PACK_MAX_DIMS];
    int nd = 0;
    const mpiacc_pack_node_t *n = root;
    bounds_t b;

    if (bounds_of(root, &b) || b.rlo < -MPIACC_PACK_OFF_MAX || b.rhi > MPIACC_PACK_OFF_MAX)
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "the datatype's displacements reach past 2^61 bytes from the buffer");
    t->data_lb = b.empty ? 0 : b.lo;
    t->data_ub = b.empty ? 0 : b.hi;

    chunk = chunk_of(root, &bits);
    if (chunk <= 0) chunk = 1; /* empty type */
    t->unit = chunk;
    bits |= chunk | 16;
    *align = bits & -bits;
    t->align = *align;

    t->strided = 0;
    t->ndims = 0;
    while (n->kind == MPIACC_PACK_VEC && nd < MPIACC_PACK_MAX_DIMS + 1) {
        if (nd < MPIACC_PACK_MAX_DIMS) {
            counts[nd] = n->count;
            strides[nd] = n->stride;
        }
        nd++;
        start += n->off;
        n = n->child;
    }
    if (n->kind == MPIACC_PACK_LEAF && nd <= MPIACC_PACK_MAX_DIMS) {
        t->strided = 1;
        t->ndims = nd;
        t->start = start + n->off;
        t->blk = n->size;
        /* the tree lists the slowest dimension first; the form fastest first */
        for (int d = 0; d < nd; d++) {
            t->counts[d] = counts[nd - 1 - d];
            t->strides[d] = strides[nd - 1 - d];
        }
        for (int d = nd; d < MPIACC_PACK_MAX_DIMS; d++) {
            t->counts[d] = 1;
            t->strides[d] = 0;
        }
    }
    t->contiguous = t->size == 0 || (root->kind == MPIACC_PACK_LEAF && root->size == t->extent);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
