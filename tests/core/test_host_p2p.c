/* SPDX-License-Identifier: BSD-3-Clause */
/* Host traffic through every interposed call is byte-exact and unaffected
 * (2-4 ranks in a ring).  With --expect-disabled (MPIACC_DISABLE=1) the
 * same holds; the keyvals are still valid there (test_err_disable checks
 * what tagged datatypes do then). */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"

#define N 1000

static int rank, size, next, prev, expect_disabled;
static MPI_Datatype vec; /* strided: every other int, with a foreign attribute */
static int foreign_kv = MPI_KEYVAL_INVALID;

static void fill(int *b, int from, int call)
{
    for (int i = 0; i < 2 * N; i++) b[i] = from * 1000003 + call * 7919 + i;
}

static void check_contig(const int *b, int from, int call)
{
    int e[2 * N];
    fill(e, from, call);
    assert_memory_equal(b, e, N * sizeof(int));
}

static void check_vec(const int *b, int from, int call)
{
    int e[2 * N];
    fill(e, from, call);
    for (int i = 0; i < N; i++) assert_int_equal(b[2 * i], e[2 * i]);
}

enum { C_SEND, C_SSEND, C_RSEND, C_ISEND, C_ISSEND, C_IRSEND, C_SEND_C, C_ISEND_C, C_NCALLS };

static void ring_call(int call, MPI_Datatype t, int count)
{
    static int sbuf[2 * N], rbuf[2 * N];
    MPI_Request rr, sr;
    MPI_Status st;
    int n;
    fill(sbuf, rank, call);
    memset(rbuf, 0xff, sizeof rbuf);
    if (call % 2 == 0) assert_int_equal(MPI_Irecv(rbuf, count, t, prev, call, MPI_COMM_WORLD, &rr), MPI_SUCCESS);
    else assert_int_equal(MPI_Irecv_c(rbuf, count, t, prev, call, MPI_COMM_WORLD, &rr), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD); /* receives posted: ready sends are legal */
    switch (call) {
    case C_SEND: assert_int_equal(MPI_Send(sbuf, count, t, next, call, MPI_COMM_WORLD), MPI_SUCCESS); break;
    case C_SSEND: assert_int_equal(MPI_Ssend(sbuf, count, t, next, call, MPI_COMM_WORLD), MPI_SUCCESS); break;
    case C_RSEND: assert_int_equal(MPI_Rsend(sbuf, count, t, next, call, MPI_COMM_WORLD), MPI_SUCCESS); break;
    case C_SEND_C: assert_int_equal(MPI_Send_c(sbuf, count, t, next, call, MPI_COMM_WORLD), MPI_SUCCESS); break;
    default:
        if (call == C_ISEND) assert_int_equal(MPI_Isend(sbuf, count, t, next, call, MPI_COMM_WORLD, &sr), 0);
        if (call == C_ISSEND) assert_int_equal(MPI_Issend(sbuf, count, t, next, call, MPI_COMM_WORLD, &sr), 0);
        if (call == C_IRSEND) assert_int_equal(MPI_Irsend(sbuf, count, t, next, call, MPI_COMM_WORLD, &sr), 0);
        if (call == C_ISEND_C) assert_int_equal(MPI_Isend_c(sbuf, count, t, next, call, MPI_COMM_WORLD, &sr), 0);
        assert_int_equal(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    assert_int_equal(MPI_Wait(&rr, &st), MPI_SUCCESS);
    assert_int_equal(st.MPI_SOURCE, prev);
    assert_int_equal(st.MPI_TAG, call);
    MPI_Get_count(&st, t, &n);
    assert_int_equal(n, count);
    if (t == MPI_INT) check_contig(rbuf, prev, call);
    else check_vec(rbuf, prev, call);
}

static void every_send_call_contig(void **s)
{
    for (int c = 0; c < C_NCALLS; c++) ring_call(c, MPI_INT, N);
}

static void every_send_call_vector(void **s)
{
    for (int c = 0; c < C_NCALLS; c++) ring_call(c, vec, 1);
}

static void blocking_recv_and_sendrecv(void **s)
{
    int sbuf[2 * N], rbuf[2 * N];
    MPI_Status st;
    fill(sbuf, rank, 20);
    assert_int_equal(MPI_Sendrecv(sbuf, 1, vec, next, 20, rbuf, 1, vec, prev, 20, MPI_COMM_WORLD, &st), 0);
    check_vec(rbuf, prev, 20);
    assert_int_equal(st.MPI_SOURCE, prev);
    fill(sbuf, rank, 21);
    assert_int_equal(MPI_Sendrecv_c(sbuf, N, MPI_INT, next, 21, rbuf, N, MPI_INT, prev, 21, MPI_COMM_WORLD, &st), 0);
    check_contig(rbuf, prev, 21);
    /* blocking receive, any source / any tag, with a Send ordered before */
    fill(sbuf, rank, 22);
    if (rank % 2 == 0) {
        MPI_Send(sbuf, N, MPI_INT, next, 22, MPI_COMM_WORLD);
        MPI_Recv(rbuf, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(rbuf, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Send(sbuf, N, MPI_INT, next, 22, MPI_COMM_WORLD);
    }
    assert_int_equal(st.MPI_TAG, 22);
    check_contig(rbuf, st.MPI_SOURCE, 22);
    MPI_Recv_c(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    assert_int_equal(st.MPI_SOURCE, MPI_PROC_NULL);
}

static void pack_unpack(void **s)
{
    int in[2 * N], out[2 * N], ref[N];
    char packed[N * sizeof(int)];
    int pos = 0, size_pack;
    MPI_Count posc = 0;
    fill(in, rank, 30);
    assert_int_equal(MPI_Pack_size(1, vec, MPI_COMM_WORLD, &size_pack), MPI_SUCCESS);
    assert_int_equal(size_pack, (int)sizeof packed);
    assert_int_equal(MPI_Pack(in, 1, vec, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(pos, (int)sizeof packed);
    for (int i = 0; i < N; i++) ref[i] = in[2 * i];
    assert_memory_equal(packed, ref, sizeof ref);
    memset(out, 0, sizeof out);
    pos = 0;
    assert_int_equal(MPI_Unpack(packed, sizeof packed, &pos, out, 1, vec, MPI_COMM_WORLD), MPI_SUCCESS);
    check_vec(out, rank, 30);
    assert_int_equal(MPI_Pack_c(in, N, MPI_INT, packed, sizeof packed, &posc, MPI_COMM_WORLD), MPI_SUCCESS);
    posc = 0;
    assert_int_equal(MPI_Unpack_c(packed, sizeof packed, &posc, out, N, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
    check_contig(out, rank, 30);
}

static void keyvals_state(void **s)
{
    (void)expect_disabled;
    assert_int_not_equal(MPIACC_BUF_TYPE, MPI_KEYVAL_INVALID);
}

int main(int argc, char **argv)
{
    int failed;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keyvals_state), cmocka_unit_test(every_send_call_contig),
        cmocka_unit_test(every_send_call_vector), cmocka_unit_test(blocking_recv_and_sendrecv),
        cmocka_unit_test(pack_unpack),
    };
    expect_disabled = argc > 1 && !strcmp(argv[1], "--expect-disabled");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &foreign_kv, NULL);
    MPI_Type_set_attr(vec, foreign_kv, (void *)0x42);
    failed = MPIACC_TEST_RUN("host_p2p", tests, NULL, NULL);
    MPI_Type_free(&vec);
    MPI_Type_free_keyval(&foreign_kv);
    MPI_Finalize();
    return failed ? 1 : 0;
}
