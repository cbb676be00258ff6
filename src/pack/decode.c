/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pack/decode.c: MPI datatype -> internal tree, through
 * MPI_Type_get_envelope_c / MPI_Type_get_contents_c (large-count variants,
 * so types built with the *_c constructors decode too).  Every combiner is
 * covered; each node is canonicalised as soon as its children are
 * (mpiacc_pack_canon), so the tree never holds more than the canonical form.
 */
#include <string.h>

#include "pack_internal.h"

typedef struct contents {
    MPI_Count ni, na, nc, nd;
    int comb;
    int *ints;
    MPI_Aint *addrs;
    MPI_Count *counts;
    MPI_Datatype *types;
} contents_t;

static int is_named_like(int comb)
{
    return comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX ||
           comb == MPI_COMBINER_F90_INTEGER
#ifdef MPI_COMBINER_VALUE_INDEX
           || comb == MPI_COMBINER_VALUE_INDEX
#endif
        ;
}

static int get_extent(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
    if (PMPI_Type_get_extent_c(type, lb, extent) != MPI_SUCCESS)
        return mpiacc_err(MPIACC_ERRK_TYPE, "cannot query the extent of a datatype");
    return MPI_SUCCESS;
}

/*
 * A named type whose bytes are not one dense run from offset 0 (the pair
 * types MPI_SHORT_INT, MPI_DOUBLE_INT..., value-index types): its layout is
 * learnt from MPI itself by packing a buffer whose bytes hold their own
 * offsets, then described as a struct of the contiguous runs found.
 */
static int probe_named(MPI_Datatype type, MPI_Count size, MPI_Count extent, mpiacc_pack_arena_t *a,
                       mpiacc_pack_node_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Count tlb, text, pos = 0;
    unsigned char in[256], packed[256];
    if (PMPI_Type_get_true_extent_c(type, &tlb, &text) != MPI_SUCCESS || tlb < 0 || tlb + text > 256 ||
        size > 256)
        MPIACC_FAIL(MPIACC_ERRK_TYPE, "unsupported predefined datatype layout (size %lld, extent %lld)",
                    (long long)size, (long long)extent);
    for (int i = 0; i < 256; i++) in[i] = (unsigned char)i;
    if (PMPI_Pack_c(in, 1, type, packed, (MPI_Count)sizeof packed, &pos, MPI_COMM_SELF) != MPI_SUCCESS ||
        pos != size)
        MPIACC_FAIL(MPIACC_ERRK_TYPE, "cannot probe a predefined datatype");
    {
        int nruns = 0;
        MPI_Count starts[256], lens[256];
        for (MPI_Count p = 0; p < size; p++) {
            if (nruns && starts[nruns - 1] + lens[nruns - 1] == packed[p])
                lens[nruns - 1]++;
            else {
                starts[nruns] = packed[p];
                lens[nruns++] = 1;
            }
        }
        mpiacc_pack_node_t *s = mpiacc_pack_new_node(a, MPIACC_PACK_STRUCT);
        if (!s) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype");
        s->count = nruns;
        s->displs = mpiacc_pack_arena_alloc(a, sizeof(MPI_Count) * nruns);
        s->kids = mpiacc_pack_arena_alloc(a, sizeof(mpiacc_pack_node_t *) * nruns);
        if (!s->displs || !s->kids) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype");
        for (int i = 0; i < nruns; i++) {
            mpiacc_pack_node_t *l = mpiacc_pack_new_node(a, MPIACC_PACK_LEAF);
            if (!l) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype");
            l->size = l->extent = lens[i];
            s->kids[i] = l;
            s->displs[i] = starts[i];
        }
        s->size = size;
        s->extent = extent;
        *out = mpiacc_pack_canon(a, s);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int decode_named(MPI_Datatype type, mpiacc_pack_arena_t *a, mpiacc_pack_node_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Count size, lb, extent;
    if (PMPI_Type_size_c(type, &size) != MPI_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_TYPE, "cannot query the size of a datatype");
    MPIACC_CHECK(get_extent(type, &lb, &extent));
    if (lb == 0 && size == extent) {
        mpiacc_pack_node_t *l = mpiacc_pack_new_node(a, MPIACC_PACK_LEAF);
        if (!l) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype");
        l->size = l->extent = size;
        *out = l;
    } else {
        MPIACC_CHECK(probe_named(type, size, extent, a, out));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* New VEC of count x child at stride; canonicalised. */
static mpiacc_pack_node_t *mkvec(mpiacc_pack_arena_t *a, MPI_Count count, MPI_Count stride, MPI_Count off,
                                 mpiacc_pack_node_t *child, int *err)
{
    mpiacc_pack_node_t *v = mpiacc_pack_new_node(a, MPIACC_PACK_VEC);
    if (!v) {
        *err = mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype");
        return NULL;
    }
    v->count = count;
    v->stride = stride;
    v->off = off;
    v->child = child;
    if (mpiacc_pack_mul(count, child->size, &v->size)) {
        *err = mpiacc_err(MPIACC_ERRK_COUNT, "datatype size overflows MPI_Count");
        return NULL;
    }
    return mpiacc_pack_canon(a, v);
}

#define NOMEM() MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype")
#define OVERFLOW() MPIACC_FAIL(MPIACC_ERRK_COUNT, "datatype size overflows MPI_Count")

/* Parameters of a combiner: classic constructors keep counts in ints[] and
 * byte displacements in addrs[]; the large-count (_c) ones keep all of them
 * in counts[] (MPI 4.1, Table 5.1). */
#define LARGE (c->nc > 0)

/* Builds a subarray (C or Fortran order) over child: one VEC per dimension,
 * outermost first in the tree. */
static int decode_subarray(const contents_t *c, mpiacc_pack_node_t *child, mpiacc_pack_arena_t *a,
                           mpiacc_pack_node_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    int nd = c->ints[0];
    int order = LARGE ? c->ints[1] : c->ints[3 * nd + 1];
    MPI_Count stride = child->extent, sz, sub, st;
    mpiacc_pack_node_t *n = child;
    for (int k = 0; k < nd; k++) {
        int d = order == MPI_ORDER_C ? nd - 1 - k : k; /* fastest dimension first */
        sz = LARGE ? c->counts[d] : c->ints[1 + d];
        sub = LARGE ? c->counts[nd + d] : c->ints[1 + nd + d];
        st = LARGE ? c->counts[2 * nd + d] : c->ints[1 + 2 * nd + d];
        MPI_Count off;
        if (mpiacc_pack_mul(st, stride, &off)) OVERFLOW();
        n = mkvec(a, sub, stride, off, n, &mpi_errno);
        if (!n) goto fn_fail;
        if (mpiacc_pack_mul(stride, sz, &stride)) OVERFLOW();
    }
    *out = n;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* One dimension of a darray: my blocks of `darg` elements (child extent
 * cext) of a dimension of gsize elements cyclically dealt to psize
 * processes, me being coordinate r.  BLOCK is the case of at most one block
 * per process, NONE the case of one process. */
static mpiacc_pack_node_t *darray_dim(mpiacc_pack_arena_t *a, MPI_Count gsize, MPI_Count darg, MPI_Count psize,
                                      MPI_Count r, MPI_Count cext, mpiacc_pack_node_t *child, int *err)
{
    /* gsize, darg, psize >= 1 and 0 <= r < psize (checked by MPI), so the
     * block counts below stay within gsize; the byte offsets are checked */
    MPI_Count nblocks = darg > 0 ? gsize / darg + (gsize % darg != 0) : 0;
    MPI_Count mine = nblocks > r ? (nblocks - r - 1) / psize + 1 : 0; /* my blocks */
    MPI_Count last = r + (mine - 1) * psize;                          /* my last block (< nblocks) */
    MPI_Count rem = (mine > 0 && last >= gsize / darg) ? gsize - last * darg : 0;
    MPI_Count nfull = rem ? mine - 1 : mine, bstride, boff, poff;
    mpiacc_pack_node_t *full, *part, *s;
    if (mine == 0) return mkvec(a, 0, cext, 0, child, err);
    if (mpiacc_pack_mul(darg, cext, &bstride) || mpiacc_pack_mul(r, bstride, &boff) ||
        mpiacc_pack_mul(last, bstride, &poff) || mpiacc_pack_mul(psize, bstride, &bstride)) {
        *err = mpiacc_err(MPIACC_ERRK_COUNT, "darray displacements overflow MPI_Count");
        return NULL;
    }
    full = mkvec(a, darg, cext, 0, child, err);
    if (!full) return NULL;
    full = mkvec(a, nfull, bstride, boff, full, err);
    if (!full || !rem) return full;
    part = mkvec(a, rem, cext, poff, child, err);
    if (!part) return NULL;
    s = mpiacc_pack_new_node(a, MPIACC_PACK_STRUCT);
    if (s) {
        s->kids = mpiacc_pack_arena_alloc(a, 2 * sizeof(mpiacc_pack_node_t *));
        s->displs = mpiacc_pack_arena_alloc(a, 2 * sizeof(MPI_Count));
    }
    if (!s || !s->kids || !s->displs) {
        *err = mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype");
        return NULL;
    }
    s->count = 2;
    s->kids[0] = full;
    s->kids[1] = part;
    s->displs[0] = s->displs[1] = 0;
    s->size = full->size + part->size;
    return mpiacc_pack_canon(a, s);
}

static int decode_darray(const contents_t *c, mpiacc_pack_node_t *child, mpiacc_pack_arena_t *a,
                         mpiacc_pack_node_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    int rank = c->ints[1], nd = c->ints[2];
    const int *distribs, *dargs, *psizes;
    int order;
    MPI_Count coords[64], stride = child->extent;
    mpiacc_pack_node_t *n = child;
    if (nd > 64) MPIACC_FAIL(MPIACC_ERRK_TYPE, "darray with %d dimensions is not supported", nd);
    if (LARGE) {
        distribs = c->ints + 3;
        dargs = c->ints + 3 + nd;
        psizes = c->ints + 3 + 2 * nd;
        order = c->ints[3 + 3 * nd];
    } else {
        distribs = c->ints + 3 + nd;
        dargs = c->ints + 3 + 2 * nd;
        psizes = c->ints + 3 + 3 * nd;
        order = c->ints[3 + 4 * nd];
    }
    /* the process grid is row-major whatever the array order */
    for (int d = nd - 1; d >= 0; d--) {
        coords[d] = rank % psizes[d];
        rank /= psizes[d];
    }
    for (int k = 0; k < nd; k++) {
        int d = order == MPI_ORDER_C ? nd - 1 - k : k;
        MPI_Count gsize = LARGE ? c->counts[d] : c->ints[3 + d];
        MPI_Count darg = dargs[d], psize = psizes[d], r = coords[d];
        if (distribs[d] == MPI_DISTRIBUTE_NONE) {
            darg = gsize;
            psize = 1;
            r = 0;
        } else if (darg == MPI_DISTRIBUTE_DFLT_DARG) {
            darg = distribs[d] == MPI_DISTRIBUTE_BLOCK ? gsize / psize + (gsize % psize != 0) : 1;
        }
        n = darray_dim(a, gsize, darg, psize, r, stride, n, &mpi_errno);
        if (!n) goto fn_fail;
        if (mpiacc_pack_mul(stride, gsize, &stride)) OVERFLOW();
    }
    *out = n;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int decode_combiner(const contents_t *c, MPI_Count extent, mpiacc_pack_arena_t *a, mpiacc_pack_node_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_pack_node_t **kids = NULL, *n = NULL;
    MPI_Count count, blen, stride, cext, nkids = c->comb == MPI_COMBINER_STRUCT ? c->nd : 1;

    if (c->nd < 1 && c->comb != MPI_COMBINER_STRUCT)
        MPIACC_FAIL(MPIACC_ERRK_TYPE, "datatype combiner %d without a base type", c->comb);
    if (c->nd < 1) { /* an empty struct */
        if (!(n = mpiacc_pack_new_node(a, MPIACC_PACK_LEAF))) NOMEM();
        *out = n;
        goto fn_exit;
    }
    kids = mpiacc_pack_arena_alloc(a, sizeof(mpiacc_pack_node_t *) * (size_t)nkids);
    if (!kids) NOMEM();
    for (MPI_Count i = 0; i < nkids; i++) MPIACC_CHECK(mpiacc_pack_decode(c->types[i], a, &kids[i]));
    cext = kids[0]->extent;

    switch (c->comb) {
    case MPI_COMBINER_DUP:
        n = kids[0];
        break;
    case MPI_COMBINER_RESIZED:
        n = mpiacc_pack_new_node(a, kids[0]->kind);
        if (!n) NOMEM();
        *n = *kids[0]; /* same bytes, another extent (set by the caller) */
        break;
    case MPI_COMBINER_CONTIGUOUS:
        count = LARGE ? c->counts[0] : c->ints[0];
        n = mkvec(a, count, cext, 0, kids[0], &mpi_errno);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_HVECTOR_INTEGER:
        count = LARGE ? c->counts[0] : c->ints[0];
        blen = LARGE ? c->counts[1] : c->ints[1];
        if (LARGE)
            stride = c->counts[2];
        else
            stride = c->comb == MPI_COMBINER_VECTOR ? c->ints[2] : c->addrs[0];
        if (c->comb == MPI_COMBINER_VECTOR && mpiacc_pack_mul(stride, cext, &stride)) OVERFLOW();
        n = mkvec(a, blen, cext, 0, kids[0], &mpi_errno);
        if (n) n = mkvec(a, count, stride, 0, n, &mpi_errno);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_HINDEXED_INTEGER: {
        int block = c->comb == MPI_COMBINER_INDEXED_BLOCK || c->comb == MPI_COMBINER_HINDEXED_BLOCK;
        int bytes = c->comb != MPI_COMBINER_INDEXED_BLOCK && c->comb != MPI_COMBINER_INDEXED;
        MPI_Count total = 0;
        count = LARGE ? c->counts[0] : c->ints[0];
        n = mpiacc_pack_new_node(a, MPIACC_PACK_IDX);
        if (!n) NOMEM();
        n->count = count;
        n->stride = cext;
        n->child = kids[0];
        n->blens = mpiacc_pack_arena_alloc(a, sizeof(MPI_Count) * (size_t)(count + 1));
        n->displs = mpiacc_pack_arena_alloc(a, sizeof(MPI_Count) * (size_t)(count + 1));
        if (!n->blens || !n->displs) NOMEM();
        for (MPI_Count i = 0; i < count; i++) {
            MPI_Count d;
            if (LARGE) {
                n->blens[i] = block ? c->counts[1] : c->counts[1 + i];
                d = block ? c->counts[2 + i] : c->counts[1 + count + i];
            } else {
                n->blens[i] = block ? c->ints[1] : c->ints[1 + i];
                if (bytes)
                    d = c->addrs[i];
                else
                    d = block ? c->ints[2 + i] : c->ints[1 + count + i];
            }
            if (!bytes && mpiacc_pack_mul(d, cext, &d)) OVERFLOW();
            n->displs[i] = d;
            if (mpiacc_pack_add(total, n->blens[i], &total)) OVERFLOW();
        }
        if (mpiacc_pack_mul(total, kids[0]->size, &n->size)) OVERFLOW();
        n = mpiacc_pack_canon(a, n);
        break;
    }
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_STRUCT_INTEGER:
        count = LARGE ? c->counts[0] : c->ints[0];
        n = mpiacc_pack_new_node(a, MPIACC_PACK_STRUCT);
        if (!n) NOMEM();
        n->count = count;
        n->kids = mpiacc_pack_arena_alloc(a, sizeof(mpiacc_pack_node_t *) * (size_t)(count + 1));
        n->displs = mpiacc_pack_arena_alloc(a, sizeof(MPI_Count) * (size_t)(count + 1));
        if (!n->kids || !n->displs) NOMEM();
        for (MPI_Count i = 0; i < count; i++) {
            blen = LARGE ? c->counts[1 + i] : c->ints[1 + i];
            n->displs[i] = LARGE ? c->counts[1 + count + i] : c->addrs[i];
            n->kids[i] = mkvec(a, blen, kids[i]->extent, 0, kids[i], &mpi_errno);
            if (!n->kids[i]) goto fn_fail;
            if (mpiacc_pack_add(n->size, n->kids[i]->size, &n->size)) OVERFLOW();
        }
        n = mpiacc_pack_canon(a, n);
        break;
    case MPI_COMBINER_SUBARRAY:
        MPIACC_CHECK(decode_subarray(c, kids[0], a, &n));
        break;
    case MPI_COMBINER_DARRAY:
        MPIACC_CHECK(decode_darray(c, kids[0], a, &n));
        break;
    default:
        MPIACC_FAIL(MPIACC_ERRK_TYPE, "unsupported datatype combiner %d", c->comb);
    }
    if (!n) goto fn_fail;
    *out = n;
fn_exit:
    return mpi_errno;
fn_fail:
    if (mpi_errno == MPI_SUCCESS) mpi_errno = mpiacc_err(MPIACC_ERRK_INTERN, "datatype analysis failed");
    goto fn_exit;
}

int mpiacc_pack_decode(MPI_Datatype type, mpiacc_pack_arena_t *a, mpiacc_pack_node_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    contents_t c = {0};
    MPI_Count lb, extent;

    *out = NULL;
    if (PMPI_Type_get_envelope_c(type, &c.ni, &c.na, &c.nc, &c.nd, &c.comb) != MPI_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_TYPE, "MPI_Type_get_envelope_c failed");
    if (is_named_like(c.comb)) {
        MPIACC_CHECK(decode_named(type, a, out));
        goto fn_exit;
    }
    c.ints = mpiacc_pack_arena_alloc(a, sizeof(int) * (size_t)(c.ni + 1));
    c.addrs = mpiacc_pack_arena_alloc(a, sizeof(MPI_Aint) * (size_t)(c.na + 1));
    c.counts = mpiacc_pack_arena_alloc(a, sizeof(MPI_Count) * (size_t)(c.nc + 1));
    c.types = mpiacc_pack_arena_alloc(a, sizeof(MPI_Datatype) * (size_t)(c.nd + 1));
    if (!c.ints || !c.addrs || !c.counts || !c.types) {
        c.types = NULL;
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype");
    }
    for (MPI_Count i = 0; i < c.nd; i++) c.types[i] = MPI_DATATYPE_NULL;
    if (PMPI_Type_get_contents_c(type, c.ni, c.na, c.nc, c.nd, c.ints, c.addrs, c.counts, c.types) != MPI_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_TYPE, "MPI_Type_get_contents_c failed");
    MPIACC_CHECK(get_extent(type, &lb, &extent));
    MPIACC_CHECK(decode_combiner(&c, extent, a, out));
    (*out)->extent = extent;

fn_exit:
    /* get_contents returned new handles for derived types: free them */
    for (MPI_Count i = 0; c.types && i < c.nd; i++) {
        MPI_Count xi, xa, xc, xd;
        int comb;
        if (c.types[i] == MPI_DATATYPE_NULL) continue;
        if (PMPI_Type_get_envelope_c(c.types[i], &xi, &xa, &xc, &xd, &comb) == MPI_SUCCESS &&
            comb != MPI_COMBINER_NAMED)
            PMPI_Type_free(&c.types[i]);
    }
    return mpi_errno;
fn_fail:
    *out = NULL;
    goto fn_exit;
}
