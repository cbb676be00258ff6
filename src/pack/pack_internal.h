/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pack_internal.h: the datatype engine's internal tree, shared by
 * decode.c (MPI datatype -> tree), canon.c (TEMPI canonicalisation, strided
 * form, chunk/alignment), serialize.c (tree -> blob) and pack.c (cache, host
 * pack/unpack).  Not part of the module's API.
 */
#ifndef MPIACC_PACK_INTERNAL_H_INCLUDED
#define MPIACC_PACK_INTERNAL_H_INCLUDED

#include "pack.h"

/* Tree node kinds share the values of the serialised kinds (traverse.h). */
enum {
    MPIACC_PACK_LEAF = MPIACC_TV_LEAF,
    MPIACC_PACK_VEC = MPIACC_TV_VEC,
    MPIACC_PACK_HIDX = MPIACC_TV_HIDX,
    MPIACC_PACK_IDX = MPIACC_TV_IDX,
    MPIACC_PACK_STRUCT = MPIACC_TV_STRUCT
};

/*
 * A node describes `size` packed bytes placed at input offset `off` (plus
 * whatever its kind adds).  `extent` is the MPI extent of the datatype the
 * node stands for (used only when a parent replicates it by extent).
 *   LEAF:   `size` contiguous bytes.
 *   VEC:    count x child, element i at i*stride.
 *   HIDX:   count x child, element i at displs[i].
 *   IDX:    count blocks, block h = blens[h] child elements at
 *           displs[h] + j*stride.
 *   STRUCT: count members, member h = kids[h] at displs[h].
 */
typedef struct mpiacc_pack_node {
    int kind;
    MPI_Count count, off, size, extent, stride;
    MPI_Count *displs; /* HIDX, IDX, STRUCT */
    MPI_Count *blens;  /* IDX: child elements per block */
    struct mpiacc_pack_node *child;
    struct mpiacc_pack_node **kids; /* STRUCT */
} mpiacc_pack_node_t;

/* Bump allocator for one analysis (freed all at once). */
typedef struct mpiacc_pack_arena_blk {
    struct mpiacc_pack_arena_blk *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
} mpiacc_pack_arena_blk_t;

typedef struct mpiacc_pack_arena {
    mpiacc_pack_arena_blk_t *head;
    _Alignas(16) unsigned char first_mem[4096]; /* first block lives inline */
    size_t first_used;
} mpiacc_pack_arena_t;

void mpiacc_pack_arena_init(mpiacc_pack_arena_t *a);
void *mpiacc_pack_arena_alloc(mpiacc_pack_arena_t *a, size_t bytes);
void mpiacc_pack_arena_free(mpiacc_pack_arena_t *a);

/* Safe arithmetic: returns nonzero on overflow. */
static inline int mpiacc_pack_mul(MPI_Count a, MPI_Count b, MPI_Count *r) { return __builtin_mul_overflow(a, b, r); }
static inline int mpiacc_pack_add(MPI_Count a, MPI_Count b, MPI_Count *r) { return __builtin_add_overflow(a, b, r); }
static inline int mpiacc_pack_sub(MPI_Count a, MPI_Count b, MPI_Count *r) { return __builtin_sub_overflow(a, b, r); }

/* decode.c: the tree of one element of `type` (canonicalised bottom-up as it
 * is built). */
int mpiacc_pack_decode(MPI_Datatype type, mpiacc_pack_arena_t *a, mpiacc_pack_node_t **out);

/* canon.c */
mpiacc_pack_node_t *mpiacc_pack_new_node(mpiacc_pack_arena_t *a, int kind);
/* Canonicalises n in place (its children are already canonical); returns
 * the node that replaces it.  Never fails. */
mpiacc_pack_node_t *mpiacc_pack_canon(mpiacc_pack_arena_t *a, mpiacc_pack_node_t *n);
/* Fills t's touched bounds, strided form, contiguous flag, unit (chunk)
 * and alignment.  MPI_ERR_COUNT when an offset the traversal computes can
 * leave [-MPIACC_PACK_OFF_MAX, MPIACC_PACK_OFF_MAX]. */
int mpiacc_pack_describe(const mpiacc_pack_node_t *root, mpiacc_pack_type_t *t, MPI_Count *align);

/* serialize.c: builds t->blob from the canonical tree. */
int mpiacc_pack_serialize(const mpiacc_pack_node_t *root, mpiacc_pack_type_t *t, MPI_Count align);

#endif
