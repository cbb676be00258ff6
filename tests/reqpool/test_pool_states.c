/* SPDX-License-Identifier: BSD-3-Clause */
/* Every transition of the operation state machine (src/reqpool/op.c),
 * driven through the CPU backend with gated host datatypes.  Needs >= 2
 * ranks; the out-of-order test uses a third when present. */
#include <string.h>

#include "pool_util.h"

#define N 256
static int rank, size;

/* NEW -> DEP_PENDING -> PACKING -> READY -> IN_FLIGHT -> DONE */
static void send_waits_for_dependency(void **s)
{
    int buf[N], out[N];
    atomic_int gate = 0;
    MPI_Request r;
    if (rank == 0) {
        MPI_Datatype t = pool_type(N, 0, &gate);
        long dep0 = transitions(S_NEW, S_DEP), pk0 = transitions(S_DEP, S_PACK);
        long rd0 = transitions(S_PACK, S_READY), fl0 = transitions(S_READY, S_FLIGHT);
        long dn0 = transitions(S_FLIGHT, S_DONE);
        fill_ints(buf, N, 1);
        assert_int_equal(MPI_Isend(buf, 1, t, 1, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        MPI_Type_free(&t); /* the operation keeps what it needs */
        assert_int_equal(transitions(S_NEW, S_DEP), dep0 + 1);
        pool_not_done(&r, 100);
        assert_int_equal(transitions(S_DEP, S_PACK), pk0);
        fill_ints(buf, N, 2); /* written before the dependency is met: must travel */
        atomic_store(&gate, 1);
        assert_int_equal(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(transitions(S_DEP, S_PACK), pk0 + 1);
        assert_int_equal(transitions(S_PACK, S_READY), rd0 + 1);
        assert_int_equal(transitions(S_READY, S_FLIGHT), fl0 + 1);
        assert_int_equal(transitions(S_FLIGHT, S_DONE), dn0 + 1);
    } else if (rank == 1) {
        MPI_Recv(out, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fill_ints(buf, N, 2);
        assert_memory_equal(out, buf, sizeof buf);
    }
}

/* NEW -> PACKING when there is nothing to wait for; strided data. */
static void send_without_dependency(void **s)
{
    int buf[2 * N], out[N];
    atomic_int gate = 1;
    MPI_Request r;
    if (rank == 0) {
        MPI_Datatype t = pool_type(N, 1, &gate);
        long p0 = transitions(S_NEW, S_PACK), d0 = transitions(S_NEW, S_DEP);
        fill_ints(buf, 2 * N, 3);
        MPI_Isend(buf, 1, t, 1, 2, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        /* an already-set gate: the CPU backend still reports it, then it is
         * found done on the first test */
        assert_true(transitions(S_NEW, S_PACK) + transitions(S_NEW, S_DEP) == p0 + d0 + 1);
        MPI_Type_free(&t);
    } else if (rank == 1) {
        MPI_Recv(out, N, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fill_ints(buf, 2 * N, 3);
        for (int i = 0; i < N; i++) assert_int_equal(out[i], buf[2 * i]);
    }
}

/* Receive: NEW -> IN_FLIGHT -> DEP_PENDING -> UNPACKING -> DONE, and
 * IN_FLIGHT -> UNPACKING without a pending dependency. */
static void receive_paths(void **s)
{
    int buf[2 * N], ref[2 * N];
    atomic_int gate = 0;
    MPI_Request r;
    MPI_Status st;
    int n;
    if (rank == 0) {
        fill_ints(buf, N, 4);
        MPI_Send(buf, N, MPI_INT, 1, 3, MPI_COMM_WORLD);
        fill_ints(buf, N, 5);
        MPI_Send(buf, N, MPI_INT, 1, 4, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Datatype t = pool_type(N, 1, &gate);
        long f0 = transitions(S_NEW, S_FLIGHT), d0 = transitions(S_FLIGHT, S_DEP);
        long u0 = transitions(S_DEP, S_UNPACK), e0 = transitions(S_UNPACK, S_DONE);
        memset(buf, 0, sizeof buf);
        MPI_Irecv(buf, 1, t, 0, 3, MPI_COMM_WORLD, &r);
        assert_int_equal(transitions(S_NEW, S_FLIGHT), f0 + 1);
        pool_until_moved(&r, S_FLIGHT, S_DEP, d0);
        for (int i = 0; i < N; i++) assert_int_equal(buf[2 * i], 0); /* not unpacked yet */
        atomic_store(&gate, 1);
        MPI_Wait(&r, &st);
        assert_int_equal(transitions(S_DEP, S_UNPACK), u0 + 1);
        assert_int_equal(transitions(S_UNPACK, S_DONE), e0 + 1);
        fill_ints(ref, N, 4);
        for (int i = 0; i < N; i++) assert_int_equal(buf[2 * i], ref[i]);
        assert_int_equal(st.MPI_SOURCE, 0);
        assert_int_equal(st.MPI_TAG, 3);
        MPI_Get_count(&st, t, &n);
        assert_int_equal(n, 1);
        MPI_Get_elements(&st, t, &n);
        assert_int_equal(n, N);
        /* no pending dependency: straight to unpacking */
        {
            long fu0 = transitions(S_FLIGHT, S_UNPACK);
            MPI_Recv(buf, 1, t, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            assert_int_equal(st.MPI_TAG, 4);
            assert_int_equal(transitions(S_FLIGHT, S_UNPACK), fu0 + 1);
            fill_ints(ref, N, 5);
            for (int i = 0; i < N; i++) assert_int_equal(buf[2 * i], ref[i]);
        }
        MPI_Type_free(&t);
    }
}

/* Non-overtaking: the slow-dependency message, sent first, is the one the
 * first receive gets; then the same with a plain host send second. */
static void non_overtaking(void **s)
{
    int a[N], b[N], r1[N], r2[N];
    atomic_int slow = 0, fast = 1;
    MPI_Request rq[2];
    if (rank == 0) {
        MPI_Datatype ts = pool_type(N, 0, &slow), tf = pool_type(N, 0, &fast);
        fill_ints(a, N, 10);
        fill_ints(b, N, 11);
        MPI_Isend(a, 1, ts, 1, 7, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(b, 1, tf, 1, 7, MPI_COMM_WORLD, &rq[1]);
        for (int i = 0; i < 50; i++) {
            int flag;
            MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE);
            assert_false(flag); /* packed, but may not overtake */
        }
        atomic_store(&slow, 1);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        /* host send behind a deferred device send */
        atomic_store(&slow, 0);
        MPI_Isend(a, 1, ts, 1, 8, MPI_COMM_WORLD, &rq[0]);
        assert_int_not_equal(atomic_load(&mpiacc_rp_deferred_sends), 0);
        {
            long h0 = transitions(S_NEW, S_READY);
            MPI_Isend(b, N, MPI_INT, 1, 8, MPI_COMM_WORLD, &rq[1]);
            assert_int_equal(transitions(S_NEW, S_READY), h0 + 1); /* queued behind */
        }
        atomic_store(&slow, 1);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        assert_int_equal(atomic_load(&mpiacc_rp_deferred_sends), 0);
        MPI_Type_free(&ts);
        MPI_Type_free(&tf);
    } else if (rank == 1) {
        for (int tag = 7; tag <= 8; tag++) {
            MPI_Recv(r1, N, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(r2, N, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fill_ints(a, N, 10);
            fill_ints(b, N, 11);
            assert_memory_equal(r1, a, sizeof a);
            assert_memory_equal(r2, b, sizeof b);
        }
    }
}

/* Operations complete in the order their dependencies are met, across
 * peers: the fast one (to the last rank) before the slow one (to rank 1). */
static void out_of_order_completion(void **s)
{
    int a[N], b[N], out[N];
    atomic_int slow = 0, fast = 0;
    int last = size - 1;
    if (size < 3) skip();
    if (rank == 0) {
        MPI_Datatype ts = pool_type(N, 0, &slow), tf = pool_type(N, 0, &fast);
        MPI_Request rq[2];
        int idx;
        fill_ints(a, N, 20);
        fill_ints(b, N, 21);
        MPI_Isend(a, 1, ts, 1, 9, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(b, 1, tf, last, 9, MPI_COMM_WORLD, &rq[1]);
        atomic_store(&fast, 1);
        MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
        assert_int_equal(idx, 1);
        atomic_store(&slow, 1);
        MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
        assert_int_equal(idx, 0);
        MPI_Type_free(&ts);
        MPI_Type_free(&tf);
    } else if (rank == 1 || rank == last) {
        MPI_Recv(out, N, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fill_ints(a, N, rank == 1 ? 20 : 21);
        assert_memory_equal(out, a, sizeof a);
    }
}

/* ERROR path: a message longer than the receive -> MPI_ERR_TRUNCATE, after
 * the bytes that fit are unpacked (IN_FLIGHT -> UNPACKING -> ERROR). */
static void truncation_error(void **s)
{
    int big[2 * N], small[N];
    if (rank == 0) {
        fill_ints(big, 2 * N, 30);
        MPI_Send(big, 2 * N, MPI_INT, 1, 10, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Datatype t = pool_type(N, 0, NULL);
        atomic_int gate = 1;
        MPI_Status st;
        int cls, err;
        long e0 = transitions(S_UNPACK, S_ERROR);
        MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&gate);
        err = MPI_Recv(small, 1, t, 0, 10, MPI_COMM_WORLD, &st);
        assert_int_not_equal(err, MPI_SUCCESS);
        MPI_Error_class(err, &cls);
        assert_int_equal(cls, MPI_ERR_TRUNCATE);
        assert_int_equal(transitions(S_UNPACK, S_ERROR), e0 + 1);
        fill_ints(big, 2 * N, 30);
        assert_memory_equal(small, big, sizeof small);
        MPI_Type_free(&t);
    }
}

/* CANCELLED path: cancelling a receive nobody sends to. */
static void cancel_receive(void **s)
{
    atomic_int gate = 1;
    int buf[N], flag = 0;
    MPI_Datatype t = pool_type(N, 0, &gate);
    MPI_Request r;
    MPI_Status st;
    long c0 = transitions(S_FLIGHT, S_CANCEL);
    MPI_Irecv(buf, 1, t, 0, 999, MPI_COMM_WORLD, &r);
    assert_int_equal(MPI_Cancel(&r), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
    MPI_Test_cancelled(&st, &flag);
    assert_true(flag);
    assert_int_equal(transitions(S_FLIGHT, S_CANCEL), c0 + 1);
    MPI_Type_free(&t);
}

/* ERROR from DEP_PENDING: the producer of a send's data, or of a receive
 * buffer's previous contents, fails. */
static void dependency_failure(void **s)
{
    int buf[N];
    atomic_int gate = 0;
    MPI_Datatype t = pool_type(N, 0, &gate);
    int err, cls;
    if (rank == 0) {
        long e0 = transitions(S_DEP, S_ERROR);
        MPI_Request r;
        MPI_Isend(buf, 1, t, 1, 12, MPI_COMM_WORLD, &r);
        atomic_store(&gate, -5);
        err = MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Error_class(err, &cls);
        assert_int_equal(cls, MPI_ERR_OTHER);
        assert_int_equal(transitions(S_DEP, S_ERROR), e0 + 1);
        /* the receiver still gets a message, from a host send */
        MPI_Send(buf, N, MPI_INT, 1, 12, MPI_COMM_WORLD);
    } else if (rank == 1) {
        long e0 = transitions(S_DEP, S_ERROR), d0 = transitions(S_FLIGHT, S_DEP);
        MPI_Request r;
        MPI_Irecv(buf, 1, t, 0, 12, MPI_COMM_WORLD, &r);
        while (transitions(S_FLIGHT, S_DEP) == d0) MPI_Test(&r, &err, MPI_STATUS_IGNORE);
        atomic_store(&gate, -1);
        err = MPI_Wait(&r, MPI_STATUS_IGNORE);
        assert_int_not_equal(err, MPI_SUCCESS);
        assert_int_equal(transitions(S_DEP, S_ERROR), e0 + 1);
    }
    MPI_Type_free(&t);
}

/* PROC_NULL peers and zero counts complete at once. */
static void trivial_operations(void **s)
{
    atomic_int gate = 0;
    MPI_Datatype t = pool_type(N, 0, &gate);
    MPI_Request r[3];
    MPI_Status st;
    int buf[N], flag;
    MPI_Isend(buf, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(buf, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(buf, 0, t, rank, 11, MPI_COMM_WORLD, &r[2]);
    MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
    assert_true(flag);
    MPI_Recv(buf, 0, t, rank, 11, MPI_COMM_WORLD, &st);
    MPI_Wait(&r[2], MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(send_waits_for_dependency, pool_barrier),
        cmocka_unit_test_setup(send_without_dependency, pool_barrier),
        cmocka_unit_test_setup(receive_paths, pool_barrier), cmocka_unit_test_setup(non_overtaking, pool_barrier),
        cmocka_unit_test_setup(out_of_order_completion, pool_barrier),
        cmocka_unit_test_setup(truncation_error, pool_barrier),
        cmocka_unit_test_setup(cancel_receive, pool_barrier),
        cmocka_unit_test_setup(dependency_failure, pool_barrier),
        cmocka_unit_test_setup(trivial_operations, pool_barrier),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return mpiacc_test_end(MPIACC_TEST_RUN("pool_states", tests, NULL, NULL));
}
