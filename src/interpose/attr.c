/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose/attr.c: MPI_Type_set_attr and MPI_Type_delete_attr,
 * interposed so that an invalid value of an mpiacc keyval is refused at
 * once (MPI_ERR_ARG, raised where MPICH raises datatype errors: no
 * communicator, see mpiacc_err_return_comm) and never read later as
 * "untagged", and so that a change of an mpiacc attribute makes the
 * inheritance decisions of derived datatypes be remade at their next use
 * (src/attrs/inherit.c).  mpiacc reads the attributes itself at each call:
 * values put with PMPI_Type_set_attr count as well.
 */
#include "interpose.h"

static int is_ours(int keyval)
{
    return keyval != MPI_KEYVAL_INVALID && (keyval == MPIACC_BUF_TYPE || keyval == MPIACC_STREAM ||
                                            keyval == MPIACC_CL_QUEUE || keyval == MPIACC_EVENT ||
                                            keyval == MPIACC_DEVICE || keyval == MPIACC_ORDER);
}

/* The check of a value of one of mpiacc's keyvals, whose error names the
 * call (core.h); apart, so that other keyvals pay nothing for it. */
static __attribute__((noinline)) int check_set(MPI_Datatype type, int keyval, void *value)
{
    static const mpiacc_err_sig_t sig = {"MPI_Type_set_attr", "datatype type_keyval attribute_val", "tip"};
    const mpiacc_err_arg_t args[] = {{.t = type}, {.i = keyval}, {.p = value}};
    mpiacc_err_call_t call = {&sig, args, NULL, 0};
    int err;
    mpiacc_err_enter(&call);
    err = mpiacc_attrs_check_set(type, keyval, value);
    mpiacc_err_leave(&call);
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Type_set_attr(MPI_Datatype type, int keyval, void *value)
{
    int err = is_ours(keyval) ? check_set(type, keyval, value) : MPI_SUCCESS;
    if (err != MPI_SUCCESS) return mpiacc_err_return_comm(MPI_COMM_NULL, err);
    err = PMPI_Type_set_attr(type, keyval, value);
    if (err == MPI_SUCCESS && is_ours(keyval)) mpiacc_attrs_changed(type, keyval);
    return err;
}

MPIACC_INTERPOSE_EXPORT int MPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
    int err = PMPI_Type_delete_attr(type, keyval);
    if (err == MPI_SUCCESS && is_ours(keyval)) mpiacc_attrs_changed(type, keyval);
    return err;
}
