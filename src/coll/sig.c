/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/sig.c: the host description of staged packed bytes.  A staged
 * buffer's host copy is MPI_Pack's format (the elements' typemap entries
 * concatenated, no gaps); it is handed to MPI with a datatype of the same
 * type signature as the user's, so that a rank staging device data and a
 * rank using host buffers match (MPI only compares signatures).  Built once
 * per datatype from MPI_Type_get_envelope_c / get_contents_c and cached on
 * it (an attribute): most types collapse to n x one predefined type (then
 * that type itself, which reductions need: MPICH refuses a predefined
 * operation on a dup); others become a struct of runs with packed
 * displacements.  A predefined type whose size differs from its extent (the
 * pair types of MINLOC/MAXLOC) is resized to its size.
 */
#include <stdlib.h>

#include "coll_internal.h"

static int sig_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t keyval_lock = PTHREAD_MUTEX_INITIALIZER;

/* A node of the recursion: n x leaf (homogeneous) or a built datatype dt
 * (owned) whose extent is its size. */
typedef struct node {
    MPI_Datatype leaf, dt;
    MPI_Count n;
} node_t;

static int is_named_comb(int comb)
{
    return comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX ||
           comb == MPI_COMBINER_F90_INTEGER;
}

static void free_contents(MPI_Datatype *types, MPI_Count nd)
{
    for (MPI_Count i = 0; i < nd; i++) {
        MPI_Count ni, na, nc, ndd;
        int comb;
        if (PMPI_Type_get_envelope_c(types[i], &ni, &na, &nc, &ndd, &comb) == MPI_SUCCESS && !is_named_comb(comb))
            PMPI_Type_free(&types[i]);
    }
}

/* The two members of a pair type (MINLOC/MAXLOC), whose packed form puts
 * the second right after the first (no padding). */
static int pair_parts(MPI_Datatype t, MPI_Datatype *a, MPI_Datatype *b)
{
    *b = MPI_INT;
    if (t == MPI_FLOAT_INT) *a = MPI_FLOAT;
    else if (t == MPI_DOUBLE_INT) *a = MPI_DOUBLE;
    else if (t == MPI_LONG_INT) *a = MPI_LONG;
    else if (t == MPI_2INT) *a = MPI_INT;
    else if (t == MPI_SHORT_INT) *a = MPI_SHORT;
    else if (t == MPI_LONG_DOUBLE_INT) *a = MPI_LONG_DOUBLE;
    else return 0;
    return 1;
}

/* One leaf in its packed layout, as a datatype of extent = size: the leaf
 * itself, or for a pair type a struct of its two members, packed. */
static int leaf_type(MPI_Datatype leaf, MPI_Datatype *out, int *owned)
{
    MPI_Count size, lb, extent;
    MPI_Datatype pa[2];
    int mpi_errno = MPI_SUCCESS;
    PMPI_Type_size_c(leaf, &size);
    PMPI_Type_get_extent_c(leaf, &lb, &extent);
    *owned = 0;
    *out = leaf;
    if (pair_parts(leaf, &pa[0], &pa[1])) {
        MPI_Count bl[2] = {1, 1}, d[2] = {0, 0};
        MPI_Datatype s;
        PMPI_Type_size_c(pa[0], &d[1]);
        MPIACC_CHECK(PMPI_Type_create_struct_c(2, bl, d, pa, &s));
        mpi_errno = PMPI_Type_create_resized_c(s, 0, size, out);
        PMPI_Type_free(&s);
        MPIACC_CHECK(mpi_errno);
        MPIACC_CHECK(PMPI_Type_commit(out));
        *owned = 1;
    } else if (lb != 0 || extent != size) {
        MPIACC_CHECK(PMPI_Type_create_resized_c(leaf, 0, size, out));
        MPIACC_CHECK(PMPI_Type_commit(out));
        *owned = 1;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int build(MPI_Datatype t, node_t *out, int depth);

/* k x child into *out (child consumed). */
static int repeat(node_t *child, MPI_Count k, node_t *out)
{
    int mpi_errno = MPI_SUCCESS;
    if (child->dt == MPI_DATATYPE_NULL) {
        out->leaf = child->leaf;
        out->n = child->n * k;
        out->dt = MPI_DATATYPE_NULL;
        return MPI_SUCCESS;
    }
    MPIACC_CHECK(PMPI_Type_contiguous_c(k, child->dt, &out->dt));
    MPIACC_CHECK(PMPI_Type_commit(&out->dt));
    out->leaf = MPI_DATATYPE_NULL;
    out->n = 0;
fn_exit:
    if (child->dt != MPI_DATATYPE_NULL) PMPI_Type_free(&child->dt);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int build_struct(MPI_Count cnt, const MPI_Count *blens, MPI_Datatype *types, node_t *out, int depth)
{
    int mpi_errno = MPI_SUCCESS;
    node_t *kids = calloc((size_t)(cnt ? cnt : 1), sizeof *kids);
    MPI_Count *cl = calloc((size_t)(cnt ? cnt : 1), sizeof *cl);
    MPI_Count *dl = calloc((size_t)(cnt ? cnt : 1), sizeof *dl);
    MPI_Datatype *tl = calloc((size_t)(cnt ? cnt : 1), sizeof *tl);
    int *own = calloc((size_t)(cnt ? cnt : 1), sizeof *own);
    MPI_Count m = 0, off = 0;
    if (!kids || !cl || !dl || !tl || !own) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a datatype signature");
    for (MPI_Count i = 0; i < cnt; i++) kids[i].dt = MPI_DATATYPE_NULL;
    /* runs: adjacent homogeneous entries of one leaf merge */
    for (MPI_Count i = 0; i < cnt; i++) {
        node_t k;
        MPI_Count sz;
        if (blens[i] == 0) continue;
        MPIACC_CHECK(build(types[i], &k, depth + 1));
        MPIACC_CHECK(repeat(&k, blens[i], &kids[m]));
        if (kids[m].dt == MPI_DATATYPE_NULL) {
            PMPI_Type_size_c(kids[m].leaf, &sz);
            if (sz == 0 || kids[m].n == 0) continue;
            if (m > 0 && kids[m - 1].dt == MPI_DATATYPE_NULL && kids[m - 1].leaf == kids[m].leaf) {
                kids[m - 1].n += kids[m].n;
                continue;
            }
        }
        m++;
    }
    if (m == 0) {
        out->leaf = MPI_BYTE;
        out->n = 0;
        out->dt = MPI_DATATYPE_NULL;
        goto fn_exit;
    }
    if (m == 1) {
        *out = kids[0];
        kids[0].dt = MPI_DATATYPE_NULL;
        goto fn_exit;
    }
    for (MPI_Count i = 0; i < m; i++) {
        MPI_Count sz;
        if (kids[i].dt == MPI_DATATYPE_NULL) {
            MPIACC_CHECK(leaf_type(kids[i].leaf, &tl[i], &own[i]));
            cl[i] = kids[i].n;
        } else {
            tl[i] = kids[i].dt;
            cl[i] = 1;
        }
        dl[i] = off;
        PMPI_Type_size_c(tl[i], &sz);
        off += sz * cl[i];
    }
    {
        MPI_Datatype s;
        MPIACC_CHECK(PMPI_Type_create_struct_c(m, cl, dl, tl, &s));
        mpi_errno = PMPI_Type_create_resized_c(s, 0, off, &out->dt);
        PMPI_Type_free(&s);
        MPIACC_CHECK(mpi_errno);
        MPIACC_CHECK(PMPI_Type_commit(&out->dt));
        out->leaf = MPI_DATATYPE_NULL;
        out->n = 0;
    }
fn_exit:
    for (MPI_Count i = 0; kids && own && tl && i < cnt; i++) {
        if (kids[i].dt != MPI_DATATYPE_NULL) PMPI_Type_free(&kids[i].dt);
        if (own[i]) PMPI_Type_free(&tl[i]);
    }
    free(kids), free(cl), free(dl), free(tl), free(own);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int build(MPI_Datatype t, node_t *out, int depth)
{
    int mpi_errno = MPI_SUCCESS, comb;
    MPI_Count ni, na, nc, nd;
    int *ints = NULL;
    MPI_Aint *addrs = NULL;
    MPI_Count *larges = NULL;
    MPI_Datatype *types = NULL;

    out->dt = MPI_DATATYPE_NULL;
    if (depth > 64) MPIACC_FAIL(MPIACC_ERRK_TYPE, "datatype nested too deeply for its signature");
    MPIACC_CHECK(PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    if (is_named_comb(comb)) {
        out->leaf = t;
        out->n = 1;
        goto fn_exit;
    }
    ints = malloc(sizeof *ints * (size_t)(ni + 1));
    addrs = malloc(sizeof *addrs * (size_t)(na + 1));
    larges = malloc(sizeof *larges * (size_t)(nc + 1));
    types = malloc(sizeof *types * (size_t)(nd + 1));
    if (!ints || !addrs || !larges || !types)
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a datatype signature");
    MPIACC_CHECK(PMPI_Type_get_contents_c(t, ni, na, nc, nd, ints, addrs, larges, types));
    if (comb == MPI_COMBINER_STRUCT) {
        MPI_Count cnt = nc > 0 ? larges[0] : ints[0];
        MPI_Count *bl = malloc(sizeof *bl * (size_t)(cnt + 1));
        if (!bl) {
            free_contents(types, nd);
            MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a datatype signature");
        }
        for (MPI_Count i = 0; i < cnt; i++) bl[i] = nc > 0 ? larges[1 + i] : ints[1 + i];
        mpi_errno = build_struct(cnt, bl, types, out, depth);
        free(bl);
    } else {
        /* Every other constructor repeats its one old type k times. */
        MPI_Count size, osize;
        node_t k;
        PMPI_Type_size_c(t, &size);
        PMPI_Type_size_c(types[0], &osize);
        if (osize == 0 || size == 0) {
            out->leaf = MPI_BYTE;
            out->n = 0;
        } else if ((mpi_errno = build(types[0], &k, depth + 1)) == MPI_SUCCESS) {
            mpi_errno = repeat(&k, size / osize, out);
        }
    }
    free_contents(types, nd);
    MPIACC_CHECK(mpi_errno);
fn_exit:
    free(ints), free(addrs), free(larges), free(types);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void sig_release(mpiacc_coll_sig_t *s)
{
    if (!s || atomic_fetch_sub(&s->ref, 1) != 1) return;
    if (s->owned) PMPI_Type_free(&s->ht);
    free(s);
}

void mpiacc_coll_sig_release(mpiacc_coll_sig_t *s) { sig_release(s); }

static int sig_delete(MPI_Datatype type, int keyval, void *val, void *extra)
{
    sig_release(val);
    return MPI_SUCCESS;
}

static int sig_make(MPI_Datatype t, mpiacc_coll_sig_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    node_t nd;
    mpiacc_coll_sig_t *s = calloc(1, sizeof *s);
    if (!s) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a datatype signature");
    MPIACC_CHECK(build(t, &nd, 0));
    PMPI_Type_size_c(t, &s->size);
    if (nd.dt == MPI_DATATYPE_NULL) {
        MPI_Count lb, ext, lsz;
        s->leaf = nd.leaf;
        s->n = nd.n;
        PMPI_Type_size_c(nd.leaf, &lsz);
        PMPI_Type_get_extent_c(nd.leaf, &lb, &ext);
        s->pair = lb != 0 || ext != lsz;
        MPIACC_CHECK(leaf_type(nd.leaf, &s->ht, &s->owned));
        s->mult = nd.n;
    } else {
        s->leaf = MPI_DATATYPE_NULL;
        s->ht = nd.dt;
        s->owned = 1;
        s->mult = 1;
    }
    atomic_init(&s->ref, 1);
    *out = s;
    s = NULL;
fn_exit:
    free(s);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_coll_sig_get(MPI_Datatype t, mpiacc_coll_sig_t **out)
{
    int mpi_errno = MPI_SUCCESS, flag = 0, comb;
    void *v = NULL;
    MPI_Count ni, na, nc, nd;

    MPIACC_CHECK(PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    if (!is_named_comb(comb)) {
        pthread_mutex_lock(&keyval_lock);
        if (sig_keyval == MPI_KEYVAL_INVALID)
            mpi_errno = PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, sig_delete, &sig_keyval, NULL);
        pthread_mutex_unlock(&keyval_lock);
        MPIACC_CHECK(mpi_errno);
        if (PMPI_Type_get_attr(t, sig_keyval, &v, &flag) == MPI_SUCCESS && flag && v) {
            mpiacc_coll_sig_t *s = v;
            atomic_fetch_add(&s->ref, 1);
            *out = s;
            goto fn_exit;
        }
    }
    MPIACC_CHECK(sig_make(t, out));
    if (!is_named_comb(comb)) {
        atomic_fetch_add(&(*out)->ref, 1); /* the cache's reference */
        if (PMPI_Type_set_attr(t, sig_keyval, *out) != MPI_SUCCESS) sig_release(*out);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_coll_sig_finalize(void)
{
    pthread_mutex_lock(&keyval_lock);
    if (sig_keyval != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(&sig_keyval);
    sig_keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&keyval_lock);
}
