/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/reduce.c: the reductions — MPI_Reduce, MPI_Allreduce,
 * MPI_Reduce_local, MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan and
 * their I forms.  MPI reduces host copies.  A predefined operation gets the
 * predefined type underneath the user's (a tagged datatype is a dup, which
 * MPICH refuses with MPI_SUM & co.) with the count scaled: the staging is
 * then reduced as it is, except for the pair types of MINLOC/MAXLOC, whose
 * packed form has no padding, so they are unpacked into a host copy in
 * their memory layout first (a mirror) and packed back after.  A
 * user-defined operation gets the user's datatype and mirrors: its function
 * sees host memory in the datatype's layout.
 */
#include <stdlib.h>

#include "coll_internal.h"

static int is_predefined(MPI_Op op)
{
    static const MPI_Op ops[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,    MPI_LOR,
                                 MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op == ops[i]) return 1;
    return 0;
}

/* Elements of the user's datatype the reduction covers (the send side;
 * Reduce_scatter: the sum of the counts). */
static MPI_Count total_in(const mpiacc_coll_op_t *c)
{
    MPI_Count n = 0;
    switch (c->kind) {
    case MPIACC_COLL_REDUCE_SCATTER_BLOCK:
        return c->a.rcount * c->size;
    case MPIACC_COLL_REDUCE_SCATTER:
        for (int i = 0; i < c->size; i++)
            n += c->rcounts[i];
        return n;
    default:
        return c->a.rcount;
    }
}

static MPI_Count my_out(const mpiacc_coll_op_t *c)
{
    return c->kind == MPIACC_COLL_REDUCE_SCATTER ? c->rcounts[c->rank] : c->a.rcount;
}

static int plan(mpiacc_coll_op_t *c)
{
    int mpi_errno = MPI_SUCCESS, ip = c->a.sbuf == MPI_IN_PLACE;
    MPI_Datatype t = c->a.rtype;
    MPI_Count in = total_in(c), out = my_out(c);
    int recv = c->kind != MPIACC_COLL_REDUCE || c->rank == c->a.root;
    int unpack = !(c->kind == MPIACC_COLL_EXSCAN && c->rank == 0); /* undefined there: left alone */
    c->in_place = ip;
    if (!ip) MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_S, in, 0, t, 0, 1, 0));
    if (!recv) goto fn_exit;
    if (c->kind == MPIACC_COLL_REDUCE_LOCAL) {
        MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_R, out, 0, t, 0, 1, 1));
    } else if (ip && in != out) { /* reduce_scatter in place: input whole, output first block */
        MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_R, in, 0, t, 0, 1, 0));
        MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_R, out, 0, t, 0, 0, unpack));
    } else {
        MPIACC_CHECK(mpiacc_coll_slot_add(c, MPIACC_COLL_R, out, 0, t, 0, ip, unpack));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* The staged signature of the reduction's datatype. */
static const mpiacc_coll_sig_t *sig_of(const mpiacc_coll_op_t *c)
{
    for (int s = 0; s < 2; s++)
        for (int i = 0; c->b[s].staged && i < c->b[s].nslots; i++)
            if (c->b[s].slots[i].sig) return c->b[s].slots[i].sig;
    return NULL;
}

int mpiacc_coll_reduce_prepare(mpiacc_coll_op_t *c, const char *name)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_coll_sig_t *sig = sig_of(c);
    if (!sig) goto fn_exit;
    if (is_predefined(c->a.op)) {
        if (sig->leaf == MPI_DATATYPE_NULL)
            MPIACC_FAIL(MPIACC_ERRK_OP,
                        "%s: a predefined operation on a datatype that is not made of one predefined type", name);
        c->red_type = sig->leaf;
        c->red_count = sig->n; /* per element of the user's datatype */
        c->red_mirror = sig->pair;
    } else {
        c->red_type = c->a.rtype;
        c->red_count = 1;
        c->red_mirror = 1;
    }
    if (!c->red_mirror) goto fn_exit;
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        MPI_Count most = 0, lo = 0, hi = 0, tlb, text;
        if (!b->staged || !b->used) continue;
        for (int i = 0; i < b->nslots; i++)
            if (b->slots[i].count > most) most = b->slots[i].count;
        most *= c->red_count;
        PMPI_Type_get_true_extent_c(c->red_type, &tlb, &text);
        if (most > 0) {
            MPI_Count ext = mpiacc_coll_extent(c->red_type);
            lo = tlb + (ext < 0 ? (most - 1) * ext : 0);
            hi = tlb + text + (ext > 0 ? (most - 1) * ext : 0);
        }
        if (!(b->mirror = malloc((size_t)(hi - lo > 0 ? hi - lo : 1))))
            MPIACC_FAIL(MPIACC_ERRK_NOMEM, "%s: out of memory for a host copy", name);
        b->host = (char *)b->mirror - lo;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Staging (packed) <-> mirror (the datatype's layout), through MPI's own
 * host pack engine (no progress involved). */
static int convert(mpiacc_coll_op_t *c, int to_mirror)
{
    int mpi_errno = MPI_SUCCESS;
    for (int s = 0; s < 2; s++) {
        mpiacc_coll_buf_t *b = &c->b[s];
        if (!b->staged || !b->mirror) continue;
        for (int i = 0; i < b->nslots; i++) {
            mpiacc_coll_slot_t *sl = &b->slots[i];
            MPI_Count pos = 0, n = sl->count * c->red_count;
            if (!(to_mirror ? sl->pack : sl->unpack) || n == 0) continue;
            if (to_mirror)
                MPIACC_CHECK(PMPI_Unpack_c(b->staging, b->sbytes, &pos, b->host, n, c->red_type, MPI_COMM_SELF));
            else
                MPIACC_CHECK(PMPI_Pack_c(b->host, n, c->red_type, b->staging, b->sbytes, &pos, MPI_COMM_SELF));
        }
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_coll_reduce_to_mirror(mpiacc_coll_op_t *c)
{
    return convert(c, 1);
}
int mpiacc_coll_reduce_from_mirror(mpiacc_coll_op_t *c)
{
    return convert(c, 0);
}

static int post(mpiacc_coll_op_t *c, MPI_Request *r)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_coll_args_t *a = &c->a;
    if (c->red_type == MPI_DATATYPE_NULL && is_predefined(a->op) && a->rtype != MPI_DATATYPE_NULL) {
        /* nothing staged on this process (blocks of 0 elements): MPI still
         * needs the predefined type under the user's (MPICH refuses MPI_SUM
         * & co. on a dup of one, which a tagged datatype is) */
        mpiacc_coll_sig_t *own = NULL;
        MPIACC_CHECK(mpiacc_coll_sig_get(a->rtype, &own));
        if (own->leaf != MPI_DATATYPE_NULL) {
            c->red_type = own->leaf;
            c->red_count = own->n;
        }
        mpiacc_coll_sig_release(own);
    }
    MPI_Datatype t = c->red_type != MPI_DATATYPE_NULL ? c->red_type : a->rtype;
    MPI_Count k = c->red_type != MPI_DATATYPE_NULL ? c->red_count : 1, n = a->rcount * k;
    const void *sb = c->in_place ? MPI_IN_PLACE : mpiacc_coll_hbuf(c, MPIACC_COLL_S);
    void *rb = mpiacc_coll_hbuf(c, MPIACC_COLL_R);
    switch (c->kind) {
    case MPIACC_COLL_REDUCE:
        return (r ? PMPI_Ireduce_c(sb, rb, n, t, a->op, a->root, a->comm, r)
                  : PMPI_Reduce_c(sb, rb, n, t, a->op, a->root, a->comm));
    case MPIACC_COLL_ALLREDUCE:
        return (r ? PMPI_Iallreduce_c(sb, rb, n, t, a->op, a->comm, r)
                  : PMPI_Allreduce_c(sb, rb, n, t, a->op, a->comm));
    case MPIACC_COLL_SCAN:
        return (r ? PMPI_Iscan_c(sb, rb, n, t, a->op, a->comm, r) : PMPI_Scan_c(sb, rb, n, t, a->op, a->comm));
    case MPIACC_COLL_EXSCAN:
        return (r ? PMPI_Iexscan_c(sb, rb, n, t, a->op, a->comm, r) : PMPI_Exscan_c(sb, rb, n, t, a->op, a->comm));
    case MPIACC_COLL_REDUCE_SCATTER_BLOCK:
        return (r ? PMPI_Ireduce_scatter_block_c(sb, rb, n, t, a->op, a->comm, r)
                  : PMPI_Reduce_scatter_block_c(sb, rb, n, t, a->op, a->comm));
    case MPIACC_COLL_REDUCE_LOCAL:
        if (r) *r = MPI_REQUEST_NULL;
        return PMPI_Reduce_local_c(mpiacc_coll_hbuf(c, MPIACC_COLL_S), rb, n, t, a->op);
    default: { /* reduce_scatter */
        /* the counts live as long as the operation (MPI may read them until then) */
        MPIACC_CHECK(mpiacc_coll_harrays(c, MPIACC_COLL_R, c->size, 0));
        for (int i = 0; i < c->size; i++)
            c->hcounts[1][i] = c->rcounts[i] * k;
        return (r ? PMPI_Ireduce_scatter_c(sb, rb, c->hcounts[1], t, a->op, a->comm, r)
                  : PMPI_Reduce_scatter_c(sb, rb, c->hcounts[1], t, a->op, a->comm));
    }
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

const mpiacc_coll_family_t mpiacc_coll_reduce_family = {.plan = plan, .post = post, .reduction = 1};
