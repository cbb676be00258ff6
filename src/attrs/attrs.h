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

/* Reads the attributes of `type` into *a.  A type without MPIACC_BUF_TYPE,
 * or one mpiacc cannot inspect (MPI_DATATYPE_NULL...), gives
 * a->kind == MPIACC_KIND_NONE: the caller forwards to MPI.  An invalid
 * buffer type value gives an MPI_ERR_ARG-class error. */
int mpiacc_attrs_get(MPI_Datatype type, mpiacc_attrs_t *a);

/* MPI_Type_set_attr(type, keyval, value) is being called: checks the
 * value of an mpiacc keyval (an MPI_ERR_ARG-class error, not yet raised,
 * for a MPIACC_BUF_TYPE that is not an MPIACC_BUF_* value, NULL included,
 * or a negative MPIACC_DEVICE) and notes what the fast check below must
 * know (src/interpose/attr.c). */
int mpiacc_attrs_check_set(MPI_Datatype type, int keyval, void *value);

/* What mpiacc_attrs_kind returns for a MPIACC_BUF_TYPE value that is not a
 * kind (set with PMPI_Type_set_attr, bypassing the check): not
 * MPIACC_KIND_NONE, so that the call goes to the dispatcher, which fails
 * it instead of handing the buffer to MPI as host memory. */
#define MPIACC_ATTRS_KIND_INVALID (-1)

/* Set (for good) once an mpiacc attribute is put on a predefined datatype,
 * or when MPI's handles cannot be classified (see attrs.c): then predefined
 * datatypes are looked up like derived ones. */
extern atomic_int mpiacc_attrs_builtin_tagged;
/* Set (for good) once MPIACC_BUF_TYPE is set on any datatype through
 * MPI_Type_set_attr: until then no datatype can carry it and every lookup is
 * skipped (an application calling PMPI_Type_set_attr itself bypasses this). */
extern atomic_int mpiacc_attrs_any_tagged;

/* MPICH encodes the kind of object in a handle's top two bits; 1 is
 * "builtin" (MPI_INT, MPI_BYTE, ...; the pair types such as MPI_DOUBLE_INT
 * are not builtin and take the lookup).  Checked at MPI_Init. */
static inline int mpiacc_attrs_is_builtin(MPI_Datatype type)
{
    return ((uint32_t)(uintptr_t)type >> 30) == 1u;
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

/* Fast check used on every interposed call: the buffer kind only
 * (MPIACC_KIND_NONE when untagged, MPIACC_ATTRS_KIND_INVALID for a value
 * that is no kind).  Before any datatype was tagged, or for a predefined
 * datatype, one or two loads; otherwise one attribute lookup.  No lock. */
static inline int mpiacc_attrs_kind(MPI_Datatype type)
{
    void *v = NULL;
    int flag = 0;
    if (MPIACC_BUF_TYPE == MPI_KEYVAL_INVALID ||
        !atomic_load_explicit(&mpiacc_attrs_any_tagged, memory_order_relaxed))
        return MPIACC_KIND_NONE;
    if (mpiacc_attrs_is_builtin(type) &&
        !atomic_load_explicit(&mpiacc_attrs_builtin_tagged, memory_order_relaxed))
        return MPIACC_KIND_NONE;
    if (!mpiacc_attrs_lookup_ok(type)) return MPIACC_KIND_NONE;
    if (PMPI_Type_get_attr(type, MPIACC_BUF_TYPE, &v, &flag) != MPI_SUCCESS || !flag)
        return MPIACC_KIND_NONE;
    if ((intptr_t)v <= MPIACC_KIND_NONE || (intptr_t)v >= MPIACC_KIND_MAX) return MPIACC_ATTRS_KIND_INVALID;
    return (int)(intptr_t)v;
}

#endif
