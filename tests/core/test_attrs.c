/* SPDX-License-Identifier: BSD-3-Clause */
/* Public attribute API, keyval lifetime, version, and the error table of
 * invalid attribute values (single rank). */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "core/core.h"
#include "attrs/attrs.h"

static MPI_Datatype tagged(void *buf_type)
{
    MPI_Datatype t;
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, buf_type);
    return t;
}

static void keyvals_valid_after_init(void **state)
{
    int kv[] = {MPIACC_BUF_TYPE, MPIACC_STREAM, MPIACC_CL_QUEUE, MPIACC_EVENT, MPIACC_DEVICE, MPIACC_ORDER};
    for (int i = 0; i < 6; i++) {
        assert_int_not_equal(kv[i], MPI_KEYVAL_INVALID);
        for (int j = 0; j < i; j++) assert_int_not_equal(kv[i], kv[j]);
    }
}

static void set_get_dup_free(void **state)
{
    MPI_Datatype t, d;
    void *v;
    int flag;
    MPI_Type_contiguous(8, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_STREAM, (void *)0x1234), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_CL_QUEUE, (void *)0x5678), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_EVENT, (void *)0x9abc), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_DEVICE, (void *)(intptr_t)3), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_ORDER, MPIACC_ORDER_STREAM), MPI_SUCCESS);
    MPI_Type_get_attr(t, MPIACC_BUF_TYPE, &v, &flag);
    assert_true(flag);
    assert_ptr_equal(v, MPIACC_BUF_CUDA);
    MPI_Type_get_attr(t, MPIACC_STREAM, &v, &flag);
    assert_ptr_equal(v, (void *)0x1234);
    /* MPI_Type_dup copies every mpiacc attribute */
    assert_int_equal(MPI_Type_dup(t, &d), MPI_SUCCESS);
    MPI_Type_get_attr(d, MPIACC_BUF_TYPE, &v, &flag);
    assert_true(flag);
    assert_ptr_equal(v, MPIACC_BUF_CUDA);
    MPI_Type_get_attr(d, MPIACC_CL_QUEUE, &v, &flag);
    assert_ptr_equal(v, (void *)0x5678);
    MPI_Type_get_attr(d, MPIACC_ORDER, &v, &flag);
    assert_true(flag);
    assert_ptr_equal(v, MPIACC_ORDER_STREAM);
    MPI_Type_get_attr(d, MPIACC_EVENT, &v, &flag);
    assert_ptr_equal(v, (void *)0x9abc);
    MPI_Type_get_attr(d, MPIACC_DEVICE, &v, &flag);
    assert_int_equal((int)(intptr_t)v, 3);
    /* freeing the original leaves the dup's attributes intact */
    assert_int_equal(MPI_Type_free(&t), MPI_SUCCESS);
    MPI_Type_get_attr(d, MPIACC_STREAM, &v, &flag);
    assert_true(flag);
    assert_ptr_equal(v, (void *)0x1234);
    assert_int_equal(MPI_Type_delete_attr(d, MPIACC_STREAM), MPI_SUCCESS);
    MPI_Type_get_attr(d, MPIACC_STREAM, &v, &flag);
    assert_false(flag);
    assert_int_equal(MPI_Type_free(&d), MPI_SUCCESS);
}

static void version(void **state)
{
    int major = -1, minor = -1;
    assert_int_equal(MPIACC_Get_version(&major, &minor), MPI_SUCCESS);
    assert_int_equal(major, MPIACC_VERSION_MAJOR);
    assert_int_equal(minor, MPIACC_VERSION_MINOR);
    assert_int_equal(MPIACC_Get_version(NULL, &minor), MPI_ERR_ARG);
}

/* Every interposed call rejects an unknown buffer type with MPI_ERR_ARG
 * (MPI_Type_set_attr refuses it; put behind mpiacc's back here). */
static void invalid_buffer_type(void **state)
{
    MPI_Datatype t = tagged(MPIACC_BUF_HOST);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    char buf[64], packed[64];
    int pos = 0;
    mpiacc_test_error(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, (void *)(intptr_t)99), MPI_ERR_ARG, "MPIACC_BUF_TYPE");
    PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, (void *)(intptr_t)99);
    mpiacc_test_error(MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "MPIACC_BUF_TYPE");
    mpiacc_test_error(MPI_Isend(buf, 1, t, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_ARG, "MPIACC_BUF_TYPE");
    mpiacc_test_error(MPI_Ssend(buf, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_ARG, NULL);
    mpiacc_test_error(MPI_Recv(buf, 1, t, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_ARG, NULL);
    mpiacc_test_error(MPI_Irecv(buf, 1, t, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_ARG, NULL);
    mpiacc_test_error(MPI_Sendrecv(buf, 1, t, 0, 0, packed, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_ARG, NULL);
    mpiacc_test_error(MPI_Pack(buf, 1, t, packed, 64, &pos, MPI_COMM_WORLD), MPI_ERR_ARG, NULL);
    mpiacc_test_error(MPI_Unpack(packed, 64, &pos, buf, 1, t, MPI_COMM_WORLD), MPI_ERR_ARG, NULL);
    assert_int_equal(r, MPI_REQUEST_NULL);
    MPI_Type_free(&t);
}

static void invalid_device_ordinal(void **state)
{
    MPI_Datatype t = tagged(MPIACC_BUF_CUDA);
    char buf[64];
    mpiacc_test_error(MPI_Type_set_attr(t, MPIACC_DEVICE, (void *)(intptr_t)-2), MPI_ERR_ARG, "MPIACC_DEVICE");
    PMPI_Type_set_attr(t, MPIACC_DEVICE, (void *)(intptr_t)-2);
    mpiacc_test_error(MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "MPIACC_DEVICE");
    MPI_Type_free(&t);
}

static void null_host_event(void **state)
{
    MPI_Datatype t = tagged(MPIACC_BUF_HOST);
    char buf[64];
    MPI_Type_set_attr(t, MPIACC_EVENT, NULL);
    mpiacc_test_error(MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "MPIACC_EVENT");
    MPI_Type_free(&t);
}

/* A device type whose backend is absent fails with an MPI_ERR_OTHER-class
 * error naming the backend; on a machine that has it, the case is moot. */
static void unavailable_backend(void **state)
{
    int kinds[] = {MPIACC_KIND_CUDA, MPIACC_KIND_OPENCL};
    void *vals[] = {MPIACC_BUF_CUDA, MPIACC_BUF_OPENCL};
    int checked = 0;
    for (int i = 0; i < 2; i++) {
        MPI_Datatype t;
        char buf[64];
        MPI_Request r;
        if (mpiacc_backend_get(kinds[i])) continue;
        t = tagged(vals[i]);
        mpiacc_test_error(MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_OTHER, mpiacc_kind_name(kinds[i]));
        mpiacc_test_error(MPI_Irecv(buf, 1, t, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_OTHER, "not available");
        MPI_Type_free(&t);
        checked++;
    }
    if (!checked) skip();
}

/* Host types are untouched: a tagged-host datatype without an event goes
 * to MPI directly. */
static void host_tagged_self(void **state)
{
    MPI_Datatype t = tagged(MPIACC_BUF_HOST);
    int in[4] = {1, 2, 3, 4}, out[4] = {0};
    MPI_Status st;
    assert_int_equal(MPI_Sendrecv(in, 1, t, 0, 5, out, 1, t, 0, 5, MPI_COMM_SELF, &st), MPI_SUCCESS);
    assert_memory_equal(in, out, sizeof in);
    MPI_Type_free(&t);
}

/* Predefined datatypes are looked up like any other: an attribute put on
 * one (through MPI or PMPI) counts at once. */
static void predefined_types(void **state)
{
    char buf[8];
    assert_true(mpiacc_attrs_is_builtin(MPI_CHAR));
    assert_int_equal(mpiacc_attrs_kind(MPI_CHAR), MPIACC_KIND_NONE);
    assert_int_equal(MPI_Type_set_attr(MPI_CHAR, MPIACC_BUF_TYPE, MPIACC_BUF_HOST), MPI_SUCCESS);
    assert_int_equal(mpiacc_attrs_kind(MPI_CHAR), MPIACC_KIND_HOST);
    PMPI_Type_set_attr(MPI_CHAR, MPIACC_BUF_TYPE, (void *)(intptr_t)77);
    mpiacc_test_error(MPI_Send(buf, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "MPIACC_BUF_TYPE");
    assert_int_equal(MPI_Type_delete_attr(MPI_CHAR, MPIACC_BUF_TYPE), MPI_SUCCESS);
    assert_int_equal(MPI_Sendrecv(buf, 1, MPI_CHAR, 0, 1, buf + 1, 1, MPI_CHAR, 0, 1, MPI_COMM_SELF,
                                  MPI_STATUS_IGNORE), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    int before = MPIACC_BUF_TYPE == MPI_KEYVAL_INVALID && MPIACC_STREAM == MPI_KEYVAL_INVALID &&
                 MPIACC_CL_QUEUE == MPI_KEYVAL_INVALID && MPIACC_EVENT == MPI_KEYVAL_INVALID &&
                 MPIACC_DEVICE == MPI_KEYVAL_INVALID;
    int failed;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keyvals_valid_after_init), cmocka_unit_test(set_get_dup_free), cmocka_unit_test(version),
        cmocka_unit_test(invalid_buffer_type), cmocka_unit_test(invalid_device_ordinal),
        cmocka_unit_test(null_host_event), cmocka_unit_test(unavailable_backend),
        cmocka_unit_test(host_tagged_self), cmocka_unit_test(predefined_types),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    failed = MPIACC_TEST_RUN("attrs", tests, NULL, NULL);
    MPI_Finalize();
    if (!before) {
        fprintf(stderr, "keyvals were valid before MPI_Init\n");
        failed++;
    }
    if (MPIACC_BUF_TYPE != MPI_KEYVAL_INVALID) {
        fprintf(stderr, "keyvals still valid after MPI_Finalize\n");
        failed++;
    }
    return failed ? 1 : 0;
}
