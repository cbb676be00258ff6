/* attrs/attrs.c: the public keyvals and their capture at call time. */
#include "attrs.h"

int MPIACC_BUF_TYPE = MPI_KEYVAL_INVALID;
int MPIACC_STREAM = MPI_KEYVAL_INVALID;
int MPIACC_CL_QUEUE = MPI_KEYVAL_INVALID;
int MPIACC_EVENT = MPI_KEYVAL_INVALID;
int MPIACC_DEVICE = MPI_KEYVAL_INVALID;

static int *const keyvals[] = {&MPIACC_BUF_TYPE, &MPIACC_STREAM, &MPIACC_CL_QUEUE, &MPIACC_EVENT,
                               &MPIACC_DEVICE};
#define NKEYVALS (int)(sizeof keyvals / sizeof keyvals[0])

atomic_int mpiacc_attrs_builtin_tagged;
atomic_int mpiacc_attrs_any_tagged;

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

void mpiacc_attrs_note_set(MPI_Datatype type, int keyval)
{
    if (keyval == MPIACC_BUF_TYPE && keyval != MPI_KEYVAL_INVALID) atomic_store(&mpiacc_attrs_any_tagged, 1);
    if (mpiacc_attrs_is_builtin(type) && is_ours(keyval)) atomic_store(&mpiacc_attrs_builtin_tagged, 1);
}

int mpiacc_attrs_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    atomic_store(&mpiacc_attrs_builtin_tagged, !handles_classify());
    atomic_store(&mpiacc_attrs_any_tagged, 0);
    for (int i = 0; i < NKEYVALS; i++) {
        /* The values are plain handles: a dup shares them (MPI_TYPE_DUP_FN
         * copies the pointer), deleting needs nothing. */
        MPIACC_CHECK(PMPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, keyvals[i], NULL));
    }
fn_exit:
    return mpi_errno;
fn_fail:
    mpiacc_attrs_finalize();
    goto fn_exit;
}

void mpiacc_attrs_finalize(void)
{
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

int mpiacc_attrs_get(MPI_Datatype type, mpiacc_attrs_t *a)
{
    int mpi_errno = MPI_SUCCESS;
    void *v;

    *a = (mpiacc_attrs_t){.kind = MPIACC_KIND_NONE};
    if (MPIACC_BUF_TYPE == MPI_KEYVAL_INVALID || !get(type, MPIACC_BUF_TYPE, &v)) goto fn_exit;
    a->kind = (int)(intptr_t)v;
    if (a->kind <= MPIACC_KIND_NONE || a->kind >= MPIACC_KIND_MAX)
        MPIACC_FAIL(MPIACC_ERRK_ARG,
                    "invalid MPIACC_BUF_TYPE value %p (use MPIACC_BUF_HOST, MPIACC_BUF_CUDA or MPIACC_BUF_OPENCL)",
                    v);
    if (get(type, MPIACC_STREAM, &v)) { a->stream = v; a->has_stream = 1; }
    if (get(type, MPIACC_CL_QUEUE, &v)) { a->queue = v; a->has_queue = 1; }
    if (get(type, MPIACC_EVENT, &v)) { a->event = v; a->has_event = 1; }
    if (get(type, MPIACC_DEVICE, &v)) {
        a->device = (int)(intptr_t)v;
        a->has_device = 1;
        if (a->device < 0) MPIACC_FAIL(MPIACC_ERRK_ARG, "invalid MPIACC_DEVICE value %d", a->device);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    a->kind = MPIACC_KIND_NONE;
    goto fn_exit;
}
