/*
 * attrs: the public keyvals (MPIACC_BUF_TYPE, ...) and reading them from a
 * datatype at call time.
 */
#ifndef MPIACC_ATTRS_H_INCLUDED
#define MPIACC_ATTRS_H_INCLUDED

#include "../core/core.h"

/* Create / free the public keyvals (MPI_Init / MPI_Finalize). */
int mpiacc_attrs_init(void);
void mpiacc_attrs_finalize(void);

/* Reads the attributes of `type` into *a.  A type without MPIACC_BUF_TYPE,
 * or one mpiacc cannot inspect (MPI_DATATYPE_NULL...), gives
 * a->kind == MPIACC_KIND_NONE: the caller forwards to MPI.  An invalid
 * buffer type value gives an MPI_ERR_ARG-class error. */
int mpiacc_attrs_get(MPI_Datatype type, mpiacc_attrs_t *a);

/* Fast check used on every interposed call: the buffer kind only
 * (MPIACC_KIND_NONE when untagged).  One attribute lookup, no lock. */
static inline int mpiacc_attrs_kind(MPI_Datatype type)
{
    void *v = NULL;
    int flag = 0;
    if (MPIACC_BUF_TYPE == MPI_KEYVAL_INVALID) return MPIACC_KIND_NONE;
    if (PMPI_Type_get_attr(type, MPIACC_BUF_TYPE, &v, &flag) != MPI_SUCCESS || !flag)
        return MPIACC_KIND_NONE;
    return (int)(intptr_t)v;
}

#endif
