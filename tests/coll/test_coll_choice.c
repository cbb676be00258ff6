/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The path decision of device collectives, as pure functions (one rank):
 *   - per communicator (src/coll/choice.c, mpiacc_coll_engine_choose): the
 *     engine from every process's facts — NCCL loaded everywhere, processes
 *     sharing a GPU (on one node, not across nodes), one node or several,
 *     IPC tables, MPIACC_COLL_ENGINE (rank 0's), the reason given;
 *   - per call (src/coll/dev.c, mpiacc_coll_dev_takes): which kinds the
 *     engine runs, and for reductions which (type, operation): predefined
 *     ones the engine reduces, derived types made of one of them, not pair
 *     types, user operations, MPI_BAND, scans.
 * The decisions that need buffers (device on every process, in place, the
 * datatypes' layouts) are exercised end to end by test_coll_dev.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "coll/coll_internal.h"

static mpiacc_coll_facts_t F[8];

/* n processes on `nodes` nodes (round robin), GPU uuid = gpu[i] */
static void facts(int n, int nodes, const int *gpu, int want, int has_coll, int has_ipc)
{
    memset(F, 0, sizeof F);
    for (int i = 0; i < n; i++) {
        F[i].node = i % nodes; /* the node's first rank */
        F[i].want = want;
        F[i].has_coll = has_coll;
        F[i].has_ipc = has_ipc;
        F[i].dev_ok = 1;
        F[i].uuid[0] = (unsigned char)gpu[i];
        F[i].uuid[1] = (unsigned char)(i % nodes); /* GPUs of different nodes differ */
    }
}

static int choose(int n, const char **why)
{
    return mpiacc_coll_engine_choose(F, n, why);
}

static void test_engine(void **state)
{
    const int distinct[4] = {0, 1, 2, 3}, one_gpu[4] = {0, 0, 0, 0}, pairs[4] = {0, 0, 1, 1};
    const char *why;
    /* auto: NCCL whenever every process has it and no GPU is shared */
    facts(4, 1, distinct, MPIACC_COLL_ENGINE_AUTO, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_NCCL);
    assert_null(why);
    facts(4, 2, distinct, MPIACC_COLL_ENGINE_AUTO, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_NCCL);
    /* several nodes, the "same" GPU index on each: not shared */
    facts(4, 2, pairs, MPIACC_COLL_ENGINE_AUTO, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_NCCL);
    /* sharing a GPU on one node (MPS): IPC; on several nodes: staged */
    facts(4, 1, one_gpu, MPIACC_COLL_ENGINE_AUTO, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_IPC);
    assert_non_null(strstr(why, "share a GPU"));
    facts(4, 1, pairs, MPIACC_COLL_ENGINE_AUTO, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_IPC);
    facts(4, 1, one_gpu, MPIACC_COLL_ENGINE_AUTO, 1, 0);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_STAGED);
    facts(4, 2, one_gpu, MPIACC_COLL_ENGINE_AUTO, 1, 1);
    F[2].uuid[1] = F[0].uuid[1], F[2].node = F[0].node; /* ranks 0 and 2 share a node and its GPU */
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_STAGED);
    /* NCCL missing on one process */
    facts(3, 1, distinct, MPIACC_COLL_ENGINE_AUTO, 1, 1);
    F[2].has_coll = 0;
    assert_int_equal(choose(3, &why), MPIACC_COLL_ENGINE_IPC);
    assert_non_null(strstr(why, "not loaded"));
    F[1].node = 1;
    assert_int_equal(choose(3, &why), MPIACC_COLL_ENGINE_STAGED);
    /* a device without identity counts as no NCCL */
    facts(2, 2, distinct, MPIACC_COLL_ENGINE_AUTO, 1, 1);
    F[1].dev_ok = 0;
    assert_int_equal(choose(2, &why), MPIACC_COLL_ENGINE_STAGED);
    /* forced engines */
    facts(4, 1, one_gpu, MPIACC_COLL_ENGINE_NCCL, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_STAGED); /* NCCL cannot serve: not IPC either */
    facts(4, 1, distinct, MPIACC_COLL_ENGINE_IPC, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_IPC);
    facts(4, 2, distinct, MPIACC_COLL_ENGINE_IPC, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_STAGED);
    facts(4, 1, distinct, MPIACC_COLL_ENGINE_STAGED, 1, 1);
    assert_int_equal(choose(4, &why), MPIACC_COLL_ENGINE_STAGED);
    /* rank 0's setting decides */
    facts(2, 1, distinct, MPIACC_COLL_ENGINE_STAGED, 1, 1);
    F[1].want = MPIACC_COLL_ENGINE_NCCL;
    assert_int_equal(choose(2, &why), MPIACC_COLL_ENGINE_STAGED);
    F[0].want = MPIACC_COLL_ENGINE_AUTO;
    assert_int_equal(choose(2, &why), MPIACC_COLL_ENGINE_NCCL);
    /* one process */
    facts(1, 1, one_gpu, MPIACC_COLL_ENGINE_AUTO, 1, 0);
    assert_int_equal(choose(1, &why), MPIACC_COLL_ENGINE_NCCL);
    assert_string_equal(mpiacc_coll_engine_name(MPIACC_COLL_ENGINE_NCCL), "NCCL");
}

/* ---- per call ---------------------------------------------------------------------- */

static int stub_supported(MPI_Datatype t, MPI_Op op)
{
    return (t == MPI_INT || t == MPI_DOUBLE || t == MPI_FLOAT) &&
           (op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX);
}
static int stub_run(void *cc, const mpiacc_bcoll_call_t *call, void **xfer) { return MPI_SUCCESS; }
static const struct mpiacc_backend_coll stub = {.name = "stub", .reduce_supported = stub_supported, .run = stub_run};

static int takes(int kind, MPI_Datatype t, MPI_Op op)
{
    mpiacc_coll_op_t c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.a.rtype = t;
    c.a.stype = t;
    c.a.op = op;
    return mpiacc_coll_dev_takes(&c, &stub);
}

static int user_fn_called;
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *t) { user_fn_called++; }

static void test_call(void **state)
{
    MPI_Datatype c3, vec, dup, mixed, tags;
    MPI_Op mine;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_contiguous(3, MPI_DOUBLE, &c3);
    MPI_Type_vector(4, 1, 3, MPI_INT, &vec);
    MPI_Type_dup(MPI_FLOAT, &dup);
    MPI_Type_create_struct(2, bl, d, ts, &mixed);
    MPI_Type_dup(vec, &tags);
    MPI_Type_commit(&c3), MPI_Type_commit(&vec), MPI_Type_commit(&dup), MPI_Type_commit(&mixed);
    MPI_Type_commit(&tags);
    MPI_Op_create(user_fn, 1, &mine);
    /* every data-moving kind, whatever the datatypes */
    int moves[] = {MPIACC_COLL_BCAST,          MPIACC_COLL_GATHER,         MPIACC_COLL_GATHERV,
                   MPIACC_COLL_SCATTER,        MPIACC_COLL_SCATTERV,       MPIACC_COLL_ALLGATHER,
                   MPIACC_COLL_ALLGATHERV,     MPIACC_COLL_ALLTOALL,       MPIACC_COLL_ALLTOALLV,
                   MPIACC_COLL_ALLTOALLW,      MPIACC_COLL_NEIGHBOR_ALLGATHER, MPIACC_COLL_NEIGHBOR_ALLGATHERV,
                   MPIACC_COLL_NEIGHBOR_ALLTOALL, MPIACC_COLL_NEIGHBOR_ALLTOALLV, MPIACC_COLL_NEIGHBOR_ALLTOALLW};
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
        assert_true(takes(moves[i], MPI_BYTE, MPI_OP_NULL));
        assert_true(takes(moves[i], mixed, MPI_OP_NULL));
    }
    /* not the engine's: scans, the local reduction, the barrier */
    assert_false(takes(MPIACC_COLL_SCAN, MPI_INT, MPI_SUM));
    assert_false(takes(MPIACC_COLL_EXSCAN, MPI_INT, MPI_SUM));
    assert_false(takes(MPIACC_COLL_REDUCE_LOCAL, MPI_INT, MPI_SUM));
    assert_false(takes(MPIACC_COLL_BARRIER, MPI_DATATYPE_NULL, MPI_OP_NULL));
    /* reductions: the engine's (type, op), under derived types too */
    int reds[] = {MPIACC_COLL_REDUCE, MPIACC_COLL_ALLREDUCE, MPIACC_COLL_REDUCE_SCATTER,
                  MPIACC_COLL_REDUCE_SCATTER_BLOCK};
    for (size_t i = 0; i < sizeof reds / sizeof reds[0]; i++) {
        int k = reds[i];
        assert_true(takes(k, MPI_INT, MPI_SUM));
        assert_true(takes(k, MPI_DOUBLE, MPI_PROD));
        assert_true(takes(k, MPI_FLOAT, MPI_MIN));
        assert_true(takes(k, c3, MPI_MAX));
        assert_true(takes(k, vec, MPI_SUM));
        assert_true(takes(k, dup, MPI_SUM));
        assert_true(takes(k, tags, MPI_MAX));
        assert_false(takes(k, MPI_INT, MPI_BAND));
        assert_false(takes(k, MPI_INT, MPI_LXOR));
        assert_false(takes(k, MPI_SHORT, MPI_SUM)); /* a type the engine does not reduce */
        assert_false(takes(k, MPI_2INT, MPI_MINLOC));
        assert_false(takes(k, MPI_DOUBLE_INT, MPI_MAXLOC));
        assert_false(takes(k, mixed, MPI_SUM)); /* no single predefined type under it */
        assert_false(takes(k, MPI_INT, mine));
    }
    /* no engine, or one without run */
    {
        mpiacc_coll_op_t c;
        struct mpiacc_backend_coll none = {.name = "none"};
        memset(&c, 0, sizeof c);
        c.kind = MPIACC_COLL_BCAST;
        assert_false(mpiacc_coll_dev_takes(&c, NULL));
        assert_false(mpiacc_coll_dev_takes(&c, &none));
    }
    MPI_Op_free(&mine);
    MPI_Type_free(&c3), MPI_Type_free(&vec), MPI_Type_free(&dup), MPI_Type_free(&mixed), MPI_Type_free(&tags);
}

int main(int argc, char **argv)
{
    mpiacc_test_init(&argc, &argv, "usage: %s\nThe engine chosen per communicator from every process's facts, and "
                                   "which calls the engine takes (pure functions, one rank).\n", NULL, NULL, 0, NULL);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_engine), cmocka_unit_test(test_call)};
    return mpiacc_test_end(MPIACC_TEST_RUN("coll_choice", tests, NULL, NULL));
}
