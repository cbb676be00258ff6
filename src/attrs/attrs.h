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

/* MPI_Type_set_attr(type, keyval, ...) is being called: notes what the
 * fast check below must know (src/interpose/attr.c). */
void mpiacc_attrs_note_set(MPI_Datatype type, int keyval);

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

/* Fast check used on every interposed call: the buffer kind only
 * (MPIACC_KIND_NONE when untagged).  Before any datatype was tagged, or for
 * a predefined datatype, one or two loads; otherwise one attribute lookup.
 * No lock. */
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
    if (PMPI_Type_get_attr(type, MPIACC_BUF_TYPE, &v, &flag) != MPI_SUCCESS || !flag)
        return MPIACC_KIND_NONE;
    return (int)(intptr_t)v;
}

#endif
