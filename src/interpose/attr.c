/*
 * interpose/attr.c: MPI_Type_set_attr, interposed so the fast check
 * (mpiacc_attrs_kind) learns when datatypes start carrying mpiacc
 * attributes (and when a predefined one does).
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Type_set_attr(MPI_Datatype type, int keyval, void *value)
{
    mpiacc_attrs_note_set(type, keyval);
    return PMPI_Type_set_attr(type, keyval, value);
}
