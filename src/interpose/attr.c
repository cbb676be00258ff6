/*
 * interpose/attr.c: MPI_Type_set_attr, interposed so that an invalid value
 * of an mpiacc keyval is refused at once (MPI_ERR_ARG, raised where MPICH
 * raises datatype errors: no communicator, see mpiacc_err_return_comm) and
 * never read later as "untagged", and so that the fast check
 * (mpiacc_attrs_kind) learns when datatypes start carrying mpiacc
 * attributes (and when a predefined one does).
 */
#include "interpose.h"

MPIACC_INTERPOSE_EXPORT int MPI_Type_set_attr(MPI_Datatype type, int keyval, void *value)
{
    int err = mpiacc_attrs_check_set(type, keyval, value);
    if (err != MPI_SUCCESS) return mpiacc_err_return_comm(MPI_COMM_NULL, err);
    return PMPI_Type_set_attr(type, keyval, value);
}
