/* SPDX-License-Identifier: BSD-3-Clause */
/* attrs/attrs.c: the public keyvals and their capture at call time (the
 * inheritance through derived datatypes is inherit.c's). */
#include "attrs.h"

int MPIACC_BUF_TYPE = MPI_KEYVAL_INVALID;
int MPIACC_STREAM = MPI_KEYVAL_INVALID;
int MPIACC_CL_QUEUE = MPI_KEYVAL_INVALID;
int MPIACC_EVENT = MPI_KEYVAL_INVALID;
int MPIACC_DEVICE = MPI_KEYVAL_INVALID;
int MPIACC_ORDER = MPI_KEYVAL_INVALID;

static int *const keyvals[] = {&MPIACC_BUF_TYPE, &MPIACC_STREAM, &MPIACC_CL_QUEUE, &MPIACC_EVENT,
                               &MPIACC_DEVICE, &MPIACC_ORDER};
#define NKEYVALS (int)(sizeof keyvals / sizeof keyvals[0])

int mpiacc_attrs_handles_checked;

/* The predefined-datatype shortcut of mpiacc_attrs_kind is only used when
 * MPI's handles classify as expected: predefined ones as builtin, a derived
 * one not. */
static int handles_classify(void)
{
    MPI_Datatype d;
    int ok = mpiacc_attrs_is_builtin(MPI_BYTE) && mpiacc_attrs_is_builtin(MPI_INT) &&
             mpiacc_attrs_is_builtin(MPI_DOUBLE) &&
             mpiacc_attrs_is_builtin(MPI_PACKED);
    if (PMPI_Type_contiguous(2, MPI_INT, &d) != MPI_SUCCESS) return 0;
    ok = ok && !mpiacc_attrs_is_builtin(d);
    PMPI_Type_free(&d);
    return ok;
}

static int is_ours(int keyval)
{
    for (int i = 0; i < NKEYVALS; i++)
        if (keyval == *keyvals[i] && keyval != MPI_KEYVAL_INVALID) return 1;
    return 0;
}

atomic_int mpiacc_attrs_builtin_tagged;

int mpiacc_attrs_check_set(MPI_Datatype type, int keyval, void *value)
{
    int mpi_errno = MPI_SUCCESS;
    if (!is_ours(keyval)) goto fn_exit;
    if (keyval == MPIACC_BUF_TYPE && ((intptr_t)value <= MPIACC_KIND_NONE || (intptr_t)value >= MPIACC_KIND_MAX))
        MPIACC_FAIL(MPIACC_ERRK_ARG,
                    "invalid MPIACC_BUF_TYPE value %p (use MPIACC_BUF_HOST, MPIACC_BUF_CUDA or MPIACC_BUF_OPENCL)",
                    value);
    if (keyval == MPIACC_DEVICE && ((intptr_t)value < 0 || (intptr_t)value > INT32_MAX))
        MPIACC_FAIL(MPIACC_ERRK_ARG, "invalid MPIACC_DEVICE value %lld (a CUDA device ordinal >= 0)",
                    (long long)(intptr_t)value);
    if (keyval == MPIACC_ORDER && value != MPIACC_ORDER_HOST && value != MPIACC_ORDER_STREAM)
        MPIACC_FAIL(MPIACC_ERRK_ARG, "invalid MPIACC_ORDER value %p (use MPIACC_ORDER_HOST or MPIACC_ORDER_STREAM)",
                    value);
    if (mpiacc_attrs_is_builtin(type)) atomic_store(&mpiacc_attrs_builtin_tagged, 1);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_attrs_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_attrs_handles_checked = handles_classify();
    for (int i = 0; i < NKEYVALS; i++) {
        /* The values are plain handles: a dup shares them (MPI_TYPE_DUP_FN
         * copies the pointer), deleting needs nothing. */
        MPIACC_CHECK(PMPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, keyvals[i], NULL));
    }
    MPIACC_CHECK(mpiacc_attrs_inherit_init());
fn_exit:
    return mpi_errno;
fn_fail:
    mpiacc_attrs_finalize();
    goto fn_exit;
}

void mpiacc_attrs_finalize(void)
{
    mpiacc_attrs_inherit_finalize();
    for (int i = 0; i < NKEYVALS; i++)
        if (*keyvals[i] != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(keyvals[i]);
}

static int get(MPI_Datatype type, int keyval, void **v)
{
    int flag = 0;
    *v = NULL;
    if (PMPI_Type_get_attr(type, keyval, v, &flag) != MPI_SUCCESS) return 0;
    return flag;
}

int mpiacc_attrs_read_own(MPI_Datatype type, mpiacc_attrs_t *a, int *has_kind)
{
    int mpi_errno = MPI_SUCCESS;
    void *v;

    *a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    *has_kind = get(type, MPIACC_BUF_TYPE, &v);
    if (*has_kind) {
        if ((intptr_t)v <= MPIACC_KIND_NONE || (intptr_t)v >= MPIACC_KIND_MAX)
            MPIACC_FAIL(MPIACC_ERRK_ARG,
                        "invalid MPIACC_BUF_TYPE value %p (use MPIACC_BUF_HOST, MPIACC_BUF_CUDA or MPIACC_BUF_OPENCL)",
                        v);
        a->kind = (int)(intptr_t)v;
    }
    if (get(type, MPIACC_STREAM, &v)) { a->stream = v; a->has_stream = 1; }
    if (get(type, MPIACC_CL_QUEUE, &v)) { a->queue = v; a->has_queue = 1; }
    if (get(type, MPIACC_EVENT, &v)) { a->event = v; a->has_event = 1; }
    if (get(type, MPIACC_DEVICE, &v)) {
        if ((intptr_t)v < 0 || (intptr_t)v > INT32_MAX)
            MPIACC_FAIL(MPIACC_ERRK_ARG, "invalid MPIACC_DEVICE value %lld", (long long)(intptr_t)v);
        a->device = (int)(intptr_t)v;
        a->has_device = 1;
    }
    if (get(type, MPIACC_ORDER, &v)) {
        if (v != MPIACC_ORDER_HOST && v != MPIACC_ORDER_STREAM)
            MPIACC_FAIL(MPIACC_ERRK_ARG, "invalid MPIACC_ORDER value %p (use MPIACC_ORDER_HOST or MPIACC_ORDER_STREAM)",
                        v);
        a->stream_order = v == MPIACC_ORDER_STREAM;
        a->has_order = 1;
    }
fn_exit:
    return mpi_errno;
fn_fail:
    *a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    goto fn_exit;
}

int mpiacc_attrs_get(MPI_Datatype type, mpiacc_attrs_t *a)
{
    int mpi_errno = MPI_SUCCESS, has_kind = 0;
    void *v;

    *a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    if (MPIACC_BUF_TYPE == MPI_KEYVAL_INVALID || !mpiacc_attrs_lookup_ok(type)) goto fn_exit;
    if (mpiacc_attrs_skip_builtin(type)) goto fn_exit; /* as mpiacc_attrs_kind */
    if (get(type, MPIACC_BUF_TYPE, &v)) { /* the datatype's own attributes */
        MPIACC_CHECK(mpiacc_attrs_read_own(type, a, &has_kind));
        goto fn_exit;
    }
    /* Untagged: a predefined datatype is host data; a derived one may
     * inherit (the same decision mpiacc_attrs_kind reads). */
    if (mpiacc_attrs_handles_checked && mpiacc_attrs_is_builtin(type)) goto fn_exit;
    MPIACC_CHECK(mpiacc_attrs_inherited(type, a));
fn_exit:
    return mpi_errno;
fn_fail:
    *a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    goto fn_exit;
}
