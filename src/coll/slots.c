/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/slots.c: the helpers the families (bcast.c, reduce.c, gather.c,
 * alltoall.c, neighbor.c) plan and post with: a call's blocks (slots) per
 * buffer side, array arguments, and what MPI gets for a staged side.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

MPI_Count mpiacc_coll_count_at(const mpiacc_coll_args_t *a, const void *arr, int i)
{
    return a->large ? ((const MPI_Count *)arr)[i] : ((const int *)arr)[i];
}

MPI_Aint mpiacc_coll_disp_at(const mpiacc_coll_args_t *a, const void *arr, int i)
{
    return a->large || a->aint_disps ? ((const MPI_Aint *)arr)[i] : ((const int *)arr)[i];
}

MPI_Aint mpiacc_coll_extent(MPI_Datatype t)
{
    MPI_Count lb = 0, ext = 0;
    if (t != MPI_DATATYPE_NULL) PMPI_Type_get_extent_c(t, &lb, &ext);
    return (MPI_Aint)ext;
}

MPI_Count mpiacc_coll_psize(MPI_Datatype t)
{
    MPI_Count sz = 0;
    if (t != MPI_DATATYPE_NULL) PMPI_Type_size_c(t, &sz);
    return sz;
}

int mpiacc_coll_slot_add(mpiacc_coll_op_t *c, int s, MPI_Count count, MPI_Aint disp, MPI_Datatype type,
                         MPI_Count hoff, int pack, int unpack)
{
    mpiacc_coll_buf_t *b = &c->b[s];
    mpiacc_coll_slot_t *sl;
    if (b->nslots == b->cap) {
        int cap = b->cap ? 2 * b->cap : 4;
        void *p = realloc(b->slots, sizeof *b->slots * (size_t)cap);
        if (!p) return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective");
        b->slots = p;
        b->cap = cap;
    }
    sl = &b->slots[b->nslots++];
    *sl = (mpiacc_coll_slot_t){.count = count, .disp = disp, .type = type, .hoff = hoff, .pack = pack,
                               .unpack = unpack, .tmp = MPI_DATATYPE_NULL};
    b->used = 1;
    return MPI_SUCCESS;
}

void *mpiacc_coll_hbuf(mpiacc_coll_op_t *c, int s)
{
    mpiacc_coll_buf_t *b = &c->b[s];
    return b->staged ? b->host : b->buf;
}

int mpiacc_coll_harrays(mpiacc_coll_op_t *c, int s, int n, int bytes)
{
    mpiacc_coll_buf_t *b = &c->b[s];
    size_t m = (size_t)(n > 0 ? n : 1);
    if (!c->hcounts[s]) {
        c->hcounts[s] = calloc(m, sizeof(MPI_Count));
        c->hdispls[s] = calloc(m, sizeof(MPI_Aint));
        c->htypes[s] = calloc(m, sizeof(MPI_Datatype));
        if (!c->hcounts[s] || !c->hdispls[s] || !c->htypes[s])
            return mpiacc_err(MPIACC_ERRK_NOMEM, "out of memory for a collective");
    }
    for (int i = 0; i < n; i++) {
        MPI_Datatype ut = s == MPIACC_COLL_S ? (c->stypes ? c->stypes[i] : c->a.stype)
                                             : (c->rtypes ? c->rtypes[i] : c->a.rtype);
        MPI_Count uc = s == MPIACC_COLL_S ? c->scounts[i] : c->rcounts[i];
        MPI_Aint ud = s == MPIACC_COLL_S ? (c->sdispls ? c->sdispls[i] : 0) : (c->rdispls ? c->rdispls[i] : 0);
        if (!b->staged || i >= b->nslots) {
            c->hcounts[s][i] = uc;
            c->hdispls[s][i] = ud;
            c->htypes[s][i] = ut;
        } else {
            mpiacc_coll_slot_t *sl = &b->slots[i];
            MPI_Count hext = sl->sig->mult ? sl->sig->size / sl->sig->mult : 0;
            c->hcounts[s][i] = sl->count * sl->sig->mult;
            c->htypes[s][i] = sl->sig->ht;
            c->hdispls[s][i] = bytes ? (MPI_Aint)sl->hoff : (hext ? (MPI_Aint)(sl->hoff / hext) : 0);
        }
    }
    return MPI_SUCCESS;
}

void mpiacc_coll_hscalar(mpiacc_coll_op_t *c, int s, MPI_Count count, MPI_Datatype type, MPI_Count *hc,
                         MPI_Datatype *ht)
{
    mpiacc_coll_buf_t *b = &c->b[s];
    *hc = count;
    *ht = type;
    for (int i = 0; b->staged && i < b->nslots; i++)
        if (b->slots[i].sig) {
            *hc = count * b->slots[i].sig->mult;
            *ht = b->slots[i].sig->ht;
            return;
        }
}

int mpiacc_coll_plan_blocks(mpiacc_coll_op_t *c, int s, int n, const MPI_Count *counts, const MPI_Aint *displs,
                            int bytes, MPI_Datatype type, const MPI_Datatype *types, int pack, int unpack, int own,
                            int own_pack, int own_unpack)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Count hoff = 0;
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = types ? types[i] : type;
        MPI_Aint ext = mpiacc_coll_extent(t), d;
        d = displs ? (bytes ? displs[i] : displs[i] * ext) : (MPI_Aint)i * counts[i] * ext;
        MPIACC_CHECK(mpiacc_coll_slot_add(c, s, counts[i], d, t, hoff, i == own ? own_pack : pack,
                                          i == own ? own_unpack : unpack));
        if (counts[i] > 0) hoff += counts[i] * mpiacc_coll_psize(t);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

