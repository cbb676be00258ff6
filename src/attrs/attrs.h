/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attrs: the public keyvals (MPIACC_BUF_TYPE, ...) and reading them from a
 * datatype at call time.
 */
#ifndef MPIACC_ATTRS_H_INCLUDED
#define MPIACC_ATTRS_H_INCLUDED

#include <stdatomic.h>

#include "core/core.h"

/* Create / free the public keyvals (MPI_Init / MPI_Finalize). */
int mpiacc_attrs_init(void);
void mpiacc_attrs_finalize(void);

/* Reads the attributes of `type` into *a: its own when it carries
 * MPIACC_BUF_TYPE, else those it inherits from its constituents (inherit.c).
 * An untagged type, or one mpiacc cannot inspect (MPI_DATATYPE_NULL...),
 * gives a->kind == MPIACC_KIND_NONE: the caller forwards to MPI.  An
 * invalid buffer type value gives an MPI_ERR_ARG-class error, constituents
 * that disagree an MPI_ERR_TYPE-class one. */
int mpiacc_attrs_get(MPI_Datatype type, mpiacc_attrs_t *a);

/* MPI_Type_set_attr(type, keyval, value) is being called: checks the
 * value of an mpiacc keyval (an MPI_ERR_ARG-class error, not yet raised,
 * for a MPIACC_BUF_TYPE that is not an MPIACC_BUF_* value, NULL included,
 * or a negative MPIACC_DEVICE; src/interpose/attr.c). */
int mpiacc_attrs_check_set(MPI_Datatype type, int keyval, void *value);

/* MPI_Type_set_attr / MPI_Type_delete_attr changed an mpiacc attribute of
 * `type` (called after the change): when a derived datatype's decision was
 * made from it, every decision is remade at its datatype's next use
 * (inherit.c). */
void mpiacc_attrs_changed(MPI_Datatype type, int keyval);

/* What mpiacc_attrs_kind returns for a datatype the dispatcher must refuse:
 * a MPIACC_BUF_TYPE value that is not a kind (set with PMPI_Type_set_attr,
 * bypassing the check), or constituents whose attributes disagree.  Not
 * MPIACC_KIND_NONE, so that the call goes to the dispatcher, which fails it
 * (mpiacc_attrs_get) instead of handing the buffer to MPI as host memory. */
#define MPIACC_ATTRS_KIND_INVALID (-1)

/* MPICH encodes the kind of object in a handle's top two bits; 1 is
 * "builtin" (MPI_INT, MPI_BYTE, ...; the pair types such as MPI_DOUBLE_INT
 * are not builtin and take the lookup).  Checked at MPI_Init. */
static inline int mpiacc_attrs_is_builtin(MPI_Datatype type)
{
    return ((uint32_t)(uintptr_t)type >> 30) == 1u;
}

/* Set (for good) once MPI_Type_set_attr put an mpiacc attribute on a
 * predefined datatype (src/interpose/attr.c).  Until then a predefined
 * datatype is host data without a lookup: the host fast path costs two
 * loads there.  An attribute put on a predefined datatype with
 * PMPI_Type_set_attr (bypassing mpiacc) is therefore not seen, unlike one
 * put on a derived datatype (include/mpiacc.h says so). */
extern atomic_int mpiacc_attrs_builtin_tagged;
extern int mpiacc_attrs_handles_checked;
static inline int mpiacc_attrs_skip_builtin(MPI_Datatype type)
{
    return mpiacc_attrs_handles_checked && mpiacc_attrs_is_builtin(type) &&
           !atomic_load_explicit(&mpiacc_attrs_builtin_tagged, memory_order_relaxed);
}

/* Whether a datatype handle can be looked up: not MPI_DATATYPE_NULL and,
 * when MPI's handles classify as expected (see attrs.c), of MPICH's
 * datatype kind (bits 26-29 = 3) and not of its "invalid" handle kind.
 * Anything else is left to MPI, which reports it as it would without
 * mpiacc (an attribute lookup would raise its own error elsewhere). */
extern int mpiacc_attrs_handles_checked;
static inline int mpiacc_attrs_lookup_ok(MPI_Datatype type)
{
    uint32_t h = (uint32_t)(uintptr_t)type;
    if (type == MPI_DATATYPE_NULL) return 0;
    return !mpiacc_attrs_handles_checked || ((h >> 30) != 0 && ((h >> 26) & 0xfu) == 3u);
}

/*
 * Inheritance through derived datatypes (inherit.c).  A derived datatype
 * without MPIACC_BUF_TYPE of its own takes its constituents' attributes
 * when they agree; the decision is made once per datatype and cached on it
 * (an internal attribute) and, for the fast check, in a table indexed by
 * the handle: a slot holds the handle (high 32 bits), the generation of the
 * decision (bits 4-31, MPIACC_ATTRS_GEN_MASK) and the kind + 2 (bits 0-3;
 * MPIACC_ATTRS_KIND_INVALID for disagreeing constituents,
 * MPIACC_ATTRS_KIND_EMPTY for an untagged datatype of size 0).  The generation
 * counts the changes made through MPI_Type_set_attr/MPI_Type_delete_attr:
 * a slot of an older generation is stale.
 */
#define MPIACC_ATTRS_NSLOTS (1u << 15)
#define MPIACC_ATTRS_GEN_MASK 0x0fffffffu
extern _Atomic(uint64_t) mpiacc_attrs_slots[MPIACC_ATTRS_NSLOTS];
extern atomic_uint mpiacc_attrs_gen;
/* Every change of an mpiacc attribute through MPI_Type_set_attr or
 * MPI_Type_delete_attr, on any datatype (and MPI_Finalize): what callers
 * cache per datatype (src/dispatch/facts.c) is stale once it moved. */
extern atomic_uint mpiacc_attrs_changes;

static inline unsigned mpiacc_attrs_slot_of(uint32_t h)
{
    return ((h & 0x03ffffffu) + ((h >> 30) == 2u ? MPIACC_ATTRS_NSLOTS / 2 : 0u)) & (MPIACC_ATTRS_NSLOTS - 1);
}

/* The inherited kind of a derived datatype without MPIACC_BUF_TYPE (decides
 * it when not decided yet): MPIACC_KIND_NONE, a kind,
 * MPIACC_ATTRS_KIND_INVALID, or MPIACC_ATTRS_KIND_EMPTY (nothing inherited,
 * size 0). */
int mpiacc_attrs_inherited_kind(MPI_Datatype type);

/* What mpiacc_attrs_route returns for an untagged derived datatype of
 * size 0 (no attribute of its own, none inherited): such a datatype moves
 * no byte, and MPICH's UCX netmod divides by its number of contiguous
 * blocks (0) when it receives into it (SIGFPE), so point-to-point calls
 * with it take the dispatcher, which hands MPI 0 MPI_BYTE instead
 * (src/dispatch/empty.c, docs/semantics.md).  Decided once per datatype
 * with its inheritance (inherit.c); stored in the slot as 0. */
#define MPIACC_ATTRS_KIND_EMPTY (-2)

/* Fast check used on every interposed point-to-point call: the buffer kind
 * (MPIACC_KIND_NONE when untagged, MPIACC_ATTRS_KIND_INVALID for a value
 * that is no kind or disagreeing constituents, MPIACC_ATTRS_KIND_EMPTY
 * for an untagged derived datatype of size 0).  A predefined datatype
 * that no MPI_Type_set_attr ever tagged: two loads, no lookup (most host
 * traffic; mpiacc_attrs_builtin_tagged).  Otherwise one attribute lookup
 * (MPIACC_BUF_TYPE on the datatype itself, so that a value put on a
 * derived datatype with PMPI_Type_set_attr counts from the first call on);
 * for a derived datatype without it, one load of its slot (a decision
 * already made).  No lock. */
static inline int mpiacc_attrs_route(MPI_Datatype type)
{
    void *v = NULL;
    int flag = 0;
    if (MPIACC_BUF_TYPE == MPI_KEYVAL_INVALID || !mpiacc_attrs_lookup_ok(type)) return MPIACC_KIND_NONE;
    if (mpiacc_attrs_skip_builtin(type)) return MPIACC_KIND_NONE;
    if (PMPI_Type_get_attr(type, MPIACC_BUF_TYPE, &v, &flag) != MPI_SUCCESS) return MPIACC_KIND_NONE;
    if (flag) {
        if ((intptr_t)v <= MPIACC_KIND_NONE || (intptr_t)v >= MPIACC_KIND_MAX) return MPIACC_ATTRS_KIND_INVALID;
        return (int)(intptr_t)v;
    }
    if (mpiacc_attrs_handles_checked) {
        uint32_t h = (uint32_t)(uintptr_t)type;
        uint64_t s;
        if (mpiacc_attrs_is_builtin(type)) return MPIACC_KIND_NONE;
        s = atomic_load_explicit(&mpiacc_attrs_slots[mpiacc_attrs_slot_of(h)], memory_order_relaxed);
        if ((uint32_t)(s >> 32) == h &&
            (((uint32_t)s >> 4) & MPIACC_ATTRS_GEN_MASK) ==
                (atomic_load_explicit(&mpiacc_attrs_gen, memory_order_relaxed) & MPIACC_ATTRS_GEN_MASK))
            return (int)(s & 0xfu) - 2;
    }
    return mpiacc_attrs_inherited_kind(type);
}

/* The buffer kind alone, for the calls other than point-to-point
 * (collectives, MPI_Pack, refusals): an untagged datatype of size 0 is
 * untagged (MPIACC_KIND_NONE) there. */
static inline int mpiacc_attrs_kind(MPI_Datatype type)
{
    int k = mpiacc_attrs_route(type);
    return k == MPIACC_ATTRS_KIND_EMPTY ? MPIACC_KIND_NONE : k;
}

/* inherit.c, for attrs.c: keyval of the cached decisions, and the full
 * attributes of a datatype without MPIACC_BUF_TYPE of its own (inherited,
 * with the datatype's own MPIACC_STREAM... taking precedence), or an
 * MPI_ERR_TYPE-class error for disagreeing constituents. */
int mpiacc_attrs_inherit_init(void);
void mpiacc_attrs_inherit_finalize(void);
int mpiacc_attrs_inherited(MPI_Datatype type, mpiacc_attrs_t *a);
/* attrs.c, for inherit.c: the attributes on `type` itself (*has_kind:
 * MPIACC_BUF_TYPE present); an MPI_ERR_ARG-class error for invalid values. */
int mpiacc_attrs_read_own(MPI_Datatype type, mpiacc_attrs_t *a, int *has_kind);

/* Untagged buffers (pointer query, MPI 4.1 memory allocation kinds) are
 * classified a layer up: src/dispatch/memkind.h. */

#endif
