/* SPDX-License-Identifier: BSD-3-Clause */
/* Issue 10 item 3, MPIACC_DISABLE=1 (set by CTest): the keyvals are valid,
 * untagged and plain host-tagged traffic goes to MPI, and every call on a
 * datatype whose buffer mpiacc would have handled (device kinds, host with
 * an event) fails with a message naming MPIACC_DISABLE instead of handing
 * the buffer to MPI as host memory.  Invalid attribute values are refused
 * as when enabled.  One rank; no device needed. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"

static void expect(int err, int cls, const char *words, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len, got = MPI_SUCCESS;
    if (err != MPI_SUCCESS) {
        MPI_Error_class(err, &got);
        MPI_Error_string(err, msg, &len);
    }
    if (got != cls) fail_msg("%s: class %d (%s), expected %d", what, got, msg, cls);
    if (words && !strstr(msg, words)) fail_msg("%s: message \"%s\" lacks \"%s\"", what, msg, words);
}
#define EXPECT(call_, cls_, words_) expect((call_), (cls_), (words_), #call_)

static MPI_Datatype tagged(void *kind)
{
    MPI_Datatype t;
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, kind), MPI_SUCCESS);
    return t;
}

static void keyvals_valid(void **s)
{
    assert_int_not_equal(MPIACC_BUF_TYPE, MPI_KEYVAL_INVALID);
    assert_int_not_equal(MPIACC_EVENT, MPI_KEYVAL_INVALID);
}

static void device_types_refused(void **s)
{
    void *kinds[] = {MPIACC_BUF_OPENCL, MPIACC_BUF_CUDA};
    static atomic_int ready = 1;
    for (int k = 0; k < 3; k++) {
        MPI_Datatype t = tagged(k < 2 ? kinds[k] : MPIACC_BUF_HOST);
        int buf[64] = {0}, pos = 0;
        char packed[256];
        MPI_Request r = MPI_REQUEST_NULL;
        if (k == 2) MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&ready);
        EXPECT(MPI_Isend(buf, 1, t, 0, 0, MPI_COMM_SELF, &r), MPI_ERR_OTHER, "MPIACC_DISABLE");
        EXPECT(MPI_Send(buf, 1, t, 0, 0, MPI_COMM_SELF), MPI_ERR_OTHER, "MPIACC_DISABLE");
        EXPECT(MPI_Irecv(buf, 1, t, 0, 0, MPI_COMM_SELF, &r), MPI_ERR_OTHER, "MPIACC_DISABLE");
        EXPECT(MPI_Recv(buf, 1, t, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_ERR_OTHER, "MPIACC_DISABLE");
        EXPECT(MPI_Sendrecv(buf, 1, t, 0, 0, buf + 8, 4, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE),
               MPI_ERR_OTHER, "MPIACC_DISABLE");
        EXPECT(MPI_Pack(buf, 1, t, packed, 256, &pos, MPI_COMM_SELF), MPI_ERR_OTHER, "MPIACC_DISABLE");
        EXPECT(MPI_Unpack(packed, 256, &pos, buf, 1, t, MPI_COMM_SELF), MPI_ERR_OTHER, "MPIACC_DISABLE");
        assert_int_equal(r, MPI_REQUEST_NULL);
        MPI_Type_free(&t);
    }
}

static void host_traffic_works(void **s)
{
    MPI_Datatype t = tagged(MPIACC_BUF_HOST);
    int in[4] = {1, 2, 3, 4}, out[4] = {0}, out2[4] = {0};
    assert_int_equal(MPI_Sendrecv(in, 1, t, 0, 5, out, 1, t, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_memory_equal(in, out, sizeof in);
    assert_int_equal(MPI_Sendrecv(in, 4, MPI_INT, 0, 6, out2, 4, MPI_INT, 0, 6, MPI_COMM_SELF, MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
    assert_memory_equal(in, out2, sizeof in);
    MPI_Type_free(&t);
}

static void invalid_values_refused(void **s)
{
    MPI_Datatype t;
    MPI_Type_contiguous(4, MPI_INT, &t);
    EXPECT(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, NULL), MPI_ERR_ARG, "MPIACC_BUF_TYPE");
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keyvals_valid), cmocka_unit_test(device_types_refused),
        cmocka_unit_test(host_traffic_works), cmocka_unit_test(invalid_values_refused),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    return mpiacc_test_end(MPIACC_TEST_RUN("err_disable", tests, NULL, NULL));
}
