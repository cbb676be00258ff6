/* SPDX-License-Identifier: BSD-3-Clause */
/* Issue 10 item 3: no attribute value is read as "untagged".  An invalid
 * MPIACC_BUF_TYPE (NULL, unknown) or MPIACC_DEVICE is refused by
 * MPI_Type_set_attr (MPI_ERR_ARG, raised where MPICH raises datatype
 * errors: MPI_COMM_SELF) and leaves no attribute; one put there behind
 * mpiacc's back (PMPI_Type_set_attr) makes every call fail instead of
 * sending the buffer's bytes as host data.  One rank. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"

static int self_calls, self_class;

static void on_self(MPI_Comm *c, int *code, ...)
{
    self_calls++;
    MPI_Error_class(*code, &self_class);
}

static int cls_of(int err)
{
    int c = MPI_SUCCESS;
    if (err != MPI_SUCCESS) MPI_Error_class(err, &c);
    return c;
}

static MPI_Datatype ints4(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void refused_at_set_attr(void **s)
{
    MPI_Datatype t = ints4();
    void *vals[] = {NULL, (void *)(intptr_t)4, (void *)(intptr_t)-1, (void *)(intptr_t)0x100000002};
    void *v;
    int flag;
    for (int i = 0; i < 4; i++) {
        self_calls = 0;
        assert_int_equal(cls_of(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, vals[i])), MPI_ERR_ARG);
        assert_int_equal(self_calls, 1);
        assert_int_equal(self_class, MPI_ERR_ARG);
        MPI_Type_get_attr(t, MPIACC_BUF_TYPE, &v, &flag);
        assert_false(flag);
    }
    self_calls = 0;
    assert_int_equal(cls_of(MPI_Type_set_attr(t, MPIACC_DEVICE, (void *)(intptr_t)-3)), MPI_ERR_ARG);
    assert_int_equal(self_calls, 1);
    /* valid ones still pass */
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_DEVICE, (void *)(intptr_t)2), MPI_SUCCESS);
    MPI_Type_free(&t);
}

/* Behind mpiacc's back: still an error at every call, never host bytes. */
static void bypassed_values_fail_the_call(void **s)
{
    void *vals[] = {NULL, (void *)(intptr_t)7};
    MPI_Datatype tagged = ints4();
    MPI_Type_set_attr(tagged, MPIACC_BUF_TYPE, MPIACC_BUF_HOST); /* mpiacc now looks types up */
    for (int i = 0; i < 2; i++) {
        MPI_Datatype t = ints4();
        int buf[4] = {1, 2, 3, 4}, got[4] = {0}, pos = 0, flag = 0;
        char packed[64];
        MPI_Request r = MPI_REQUEST_NULL;
        PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, vals[i]);
        assert_int_equal(cls_of(MPI_Isend(buf, 1, t, 0, 3, MPI_COMM_SELF, &r)), MPI_ERR_ARG);
        assert_int_equal(r, MPI_REQUEST_NULL);
        assert_int_equal(cls_of(MPI_Send(buf, 1, t, 0, 3, MPI_COMM_SELF)), MPI_ERR_ARG);
        assert_int_equal(cls_of(MPI_Recv(got, 1, t, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE)), MPI_ERR_ARG);
        assert_int_equal(cls_of(MPI_Pack(buf, 1, t, packed, 64, &pos, MPI_COMM_SELF)), MPI_ERR_ARG);
        assert_int_equal(pos, 0);
        MPI_Iprobe(0, 3, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
        assert_false(flag); /* nothing was sent */
        MPI_Type_free(&t);
    }
    MPI_Type_free(&tagged);
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_at_set_attr), cmocka_unit_test(bypassed_values_fail_the_call),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_create_errhandler(on_self, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    MPI_Errhandler_free(&eh);
    return mpiacc_test_end(MPIACC_TEST_RUN("err_attrs", tests, NULL, NULL));
}
