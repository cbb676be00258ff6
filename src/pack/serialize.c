/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pack/serialize.c: canonical tree -> point-based blob (traverse.h
 * documents the layout).  Nodes are written in preorder as fixed-length
 * records, the variable-length data (prefix sums, displacements, struct
 * member links) in one lookaside area after them, all in one malloc'd array
 * of 64-bit words that a backend copies to its device verbatim.
 */
#include <stdlib.h>
#include <string.h>

#include "pack_internal.h"

typedef mpiacc_tv_i64 word_t;

static void measure(const mpiacc_pack_node_t *n, size_t *nodes, size_t *look)
{
    (*nodes)++;
    switch (n->kind) {
    case MPIACC_PACK_VEC: measure(n->child, nodes, look); break;
    case MPIACC_PACK_HIDX:
        *look += (size_t)n->count;
        measure(n->child, nodes, look);
        break;
    case MPIACC_PACK_IDX:
        *look += 2 * (size_t)n->count + 1;
        measure(n->child, nodes, look);
        break;
    case MPIACC_PACK_STRUCT:
        *look += 3 * (size_t)n->count + 1;
        for (MPI_Count i = 0; i < n->count; i++) measure(n->kids[i], nodes, look);
        break;
    default: break;
    }
}

static void emit(const mpiacc_pack_node_t *n, word_t *blob, size_t *at, size_t *look)
{
    word_t *w = blob + *at;
    MPI_Count i;
    *at += MPIACC_TV_NODE_WORDS;
    w[MPIACC_TV_N_KIND] = n->kind;
    w[MPIACC_TV_N_COUNT] = n->count;
    w[MPIACC_TV_N_OFF] = n->off;
    w[MPIACC_TV_N_SIZE] = n->size;
    w[MPIACC_TV_N_EXTENT] = n->extent;
    w[MPIACC_TV_N_CSIZE] = 0;
    w[MPIACC_TV_N_STRIDE] = n->stride;
    w[MPIACC_TV_N_LOOK] = 0;
    switch (n->kind) {
    case MPIACC_PACK_VEC:
        w[MPIACC_TV_N_CSIZE] = n->child->size;
        emit(n->child, blob, at, look);
        break;
    case MPIACC_PACK_HIDX:
        w[MPIACC_TV_N_CSIZE] = n->child->size;
        w[MPIACC_TV_N_LOOK] = (word_t)*look;
        for (i = 0; i < n->count; i++) blob[*look + i] = n->displs[i];
        *look += (size_t)n->count;
        emit(n->child, blob, at, look);
        break;
    case MPIACC_PACK_IDX: {
        word_t *pre = blob + *look;
        w[MPIACC_TV_N_CSIZE] = n->child->size;
        w[MPIACC_TV_N_LOOK] = (word_t)*look;
        pre[0] = 0;
        for (i = 0; i < n->count; i++) {
            pre[i + 1] = pre[i] + n->blens[i];
            pre[n->count + 1 + i] = n->displs[i];
        }
        *look += 2 * (size_t)n->count + 1;
        emit(n->child, blob, at, look);
        break;
    }
    case MPIACC_PACK_STRUCT: {
        size_t mine = *look;
        word_t *pre = blob + mine;
        w[MPIACC_TV_N_LOOK] = (word_t)mine;
        *look += 3 * (size_t)n->count + 1;
        pre[0] = 0;
        for (i = 0; i < n->count; i++) {
            pre[i + 1] = pre[i] + n->kids[i]->size;
            pre[n->count + 1 + i] = n->displs[i];
            pre[2 * n->count + 1 + i] = (word_t)*at;
            emit(n->kids[i], blob, at, look);
        }
        break;
    }
    default: break;
    }
}

int mpiacc_pack_serialize(const mpiacc_pack_node_t *root, mpiacc_pack_type_t *t, MPI_Count align)
{
    int mpi_errno = MPI_SUCCESS;
    size_t nodes = 0, look = 0, words, at = MPIACC_TV_HDR_WORDS, lk;
    word_t *b;

    measure(root, &nodes, &look);
    words = MPIACC_TV_HDR_WORDS + nodes * MPIACC_TV_NODE_WORDS + look;
    b = malloc(words * sizeof(word_t));
    if (!b) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory serialising a datatype (%zu words)", words);
    memset(b, 0, MPIACC_TV_HDR_WORDS * sizeof(word_t));
    b[MPIACC_TV_H_MAGIC] = MPIACC_TV_MAGIC_VALUE;
    b[MPIACC_TV_H_SIZE] = t->size;
    b[MPIACC_TV_H_EXTENT] = t->extent;
    b[MPIACC_TV_H_CHUNK] = t->unit;
    b[MPIACC_TV_H_ALIGN] = align;
    b[MPIACC_TV_H_ROOT] = MPIACC_TV_HDR_WORDS;
    b[MPIACC_TV_H_STRIDED] = t->strided;
    b[MPIACC_TV_H_NDIMS] = t->ndims;
    b[MPIACC_TV_H_START] = t->start;
    b[MPIACC_TV_H_BLK] = t->blk;
    for (int d = 0; d < MPIACC_TV_MAX_DIMS; d++) {
        b[MPIACC_TV_H_COUNTS + d] = t->strided ? t->counts[d] : 1;
        b[MPIACC_TV_H_STRIDES + d] = t->strided ? t->strides[d] : 0;
    }
    b[MPIACC_TV_H_WORDS] = (word_t)words;
    b[MPIACC_TV_H_NNODES] = (word_t)nodes;
    lk = MPIACC_TV_HDR_WORDS + nodes * MPIACC_TV_NODE_WORDS;
    emit(root, b, &at, &lk);
    t->blob = b;
    t->blob_bytes = words * sizeof(word_t);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
