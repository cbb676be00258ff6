/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Sendrecv_replace, MPI_Isendrecv, MPI_Isendrecv_replace, MPI_Bsend,
 * MPI_Ibsend, MPI_Mprobe + MPI_Mrecv / MPI_Imrecv (int and _c forms) with
 * datatypes that need the pool (MPIACC_BUF_HOST with an MPIACC_EVENT flag:
 * the CPU backend), over the random datatype corpus (typegen), against
 * oracles on host copies: the blocking MPI_Sendrecv_replace / MPI_Sendrecv
 * and plain MPI_Send / MPI_Recv of untagged datatypes (MPICH's own
 * nonblocking forms are not oracles: mpich-notes).  Ring over 2 or 3 ranks;
 * MPIACC_TEST_SEED, MPIACC_TEST_NTYPES. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiacc.h"
#include "testutil.h"
#include "typegen.h"

static int me, np, right, left, ready = 1;
static MPI_Comm comm;
static uint64_t seed;

typedef struct bufs {
    MPI_Count lo, hi;
    unsigned char *o, *d; /* oracle's and mpiacc's, same layout */
} bufs_t;

static void bufs_make(bufs_t *b, MPI_Datatype t, MPI_Count count, int who, int salt)
{
    tg_bounds(t, count, &b->lo, &b->hi);
    b->o = malloc((size_t)(b->hi - b->lo) + 1);
    b->d = malloc((size_t)(b->hi - b->lo) + 1);
    for (MPI_Count i = 0; i < b->hi - b->lo; i++) b->o[i] = b->d[i] = (unsigned char)(who * 31 + salt * 7 + i * 13);
}

static void bufs_fill(bufs_t *b, unsigned char v)
{
    memset(b->o, v, (size_t)(b->hi - b->lo));
    memset(b->d, v, (size_t)(b->hi - b->lo));
}

static void *at(unsigned char *p, const bufs_t *b) { return p - b->lo; }

static int same(const bufs_t *b, const char *what, MPI_Datatype t)
{
    for (MPI_Count i = 0; i < b->hi - b->lo; i++)
        if (b->o[i] != b->d[i]) {
            fprintf(stderr, "rank %d: %s (%s): byte %lld is %d, oracle %d\n", me, what, tg_combiner_name(t),
                    (long long)i, b->d[i], b->o[i]);
            return 0;
        }
    return 1;
}

static int same_status(const MPI_Status *a, const MPI_Status *b, MPI_Datatype t, MPI_Datatype u)
{
    MPI_Count n1 = -1, n2 = -2;
    (void)t, (void)u; /* MPICH's MPI_Get_elements_x divides by zero on some corpus types: bytes compared */
    MPI_Get_elements_x(a, MPI_BYTE, &n1);
    MPI_Get_elements_x(b, MPI_BYTE, &n2);
    if (a->MPI_SOURCE != b->MPI_SOURCE || a->MPI_TAG != b->MPI_TAG || n1 != n2) {
        fprintf(stderr, "rank %d: status %d/%d/%lld, oracle %d/%d/%lld\n", me, b->MPI_SOURCE, b->MPI_TAG,
                (long long)n2, a->MPI_SOURCE, a->MPI_TAG, (long long)n1);
        return 0;
    }
    return 1;
}

static void bufs_free(bufs_t *b)
{
    free(b->o);
    free(b->d);
}

static void corpus(void **state)
{
    (void)state;
    tg_src_t src = {.state = seed, .max_size = 1 << 13, .max_span = 1 << 15};
    long n = tg_corpus_size(12, 300);
    int bad = 0;
    /* After the corpus, four rounds (both variants, Mrecv and Imrecv) of a
     * fixed 48 KiB vector, whatever the seed: over MPICH/UCX's rendezvous
     * threshold (8 KiB here), where an unsafe ordering of the oracle's sends
     * deadlocks (seed 3004 once did). */
    for (long k = 0; k < n + 4 && !bad; k++) {
        MPI_Datatype t, T;
        MPI_Count count;
        if (k < n) {
            t = tg_make(&src, 3);
            count = 1 + (MPI_Count)tg_next(&src, 3);
        } else {
            MPI_Type_vector(1024, 3, 4, MPI_INT, &t);
            count = 4;
        }
        int c = (int)count, variant = (int)(k % 2);
        bufs_t a, s, r;
        MPI_Status so, sd;
        MPI_Request q;
        MPI_Type_commit(&t);
        T = mpiacc_test_host_tagged(t, NULL);
        /* Sendrecv_replace: blocking, then nonblocking, against the blocking oracle. */
        bufs_make(&a, t, count, me, 1);
        MPI_Sendrecv_replace(at(a.o, &a), c, t, right, 1, left, 1, comm, &so);
        if (variant) MPI_Sendrecv_replace_c(at(a.d, &a), count, T, right, 1, left, 1, comm, &sd);
        else MPI_Sendrecv_replace(at(a.d, &a), c, T, right, 1, left, 1, comm, &sd);
        bad |= !same(&a, "MPI_Sendrecv_replace", t) || !same_status(&so, &sd, t, T);
        bufs_free(&a);
        bufs_make(&a, t, count, me, 2);
        MPI_Sendrecv_replace(at(a.o, &a), c, t, right, 2, left, 2, comm, &so);
        if (variant) MPI_Isendrecv_replace_c(at(a.d, &a), count, T, right, 2, left, 2, comm, &q);
        else MPI_Isendrecv_replace(at(a.d, &a), c, T, right, 2, left, 2, comm, &q);
        MPI_Wait(&q, &sd);
        bad |= !same(&a, "MPI_Isendrecv_replace", t) || !same_status(&so, &sd, t, T);
        bufs_free(&a);
        /* Isendrecv: tagged on both sides, on one side, on the other. */
        for (int side = 0; side < 3 && !bad; side++) {
            MPI_Datatype st = side == 2 ? t : T, rt = side == 1 ? t : T;
            bufs_make(&s, t, count, me, 3 + side);
            bufs_make(&r, t, count, me, 9);
            bufs_fill(&r, 0xEE);
            MPI_Sendrecv(at(s.o, &s), c, t, right, 3, at(r.o, &r), c, t, left, 3, comm, &so);
            if (variant)
                MPI_Isendrecv_c(at(s.d, &s), count, st, right, 3, at(r.d, &r), count, rt, left, 3, comm, &q);
            else MPI_Isendrecv(at(s.d, &s), c, st, right, 3, at(r.d, &r), c, rt, left, 3, comm, &q);
            MPI_Wait(&q, &sd);
            bad |= !same(&r, "MPI_Isendrecv", t) || !same_status(&so, &sd, t, rt);
            bufs_free(&s);
            bufs_free(&r);
        }
        /* Bsend / Ibsend from the tagged datatype: the same bytes as a plain send. */
        {
            int size = 0;
            void *att, *old;
            bufs_make(&s, t, count, me, 5);
            bufs_make(&r, t, count, me, 9);
            bufs_fill(&r, 0x11);
            MPI_Pack_size(c, T, comm, &size);
            att = malloc((size_t)size + MPI_BSEND_OVERHEAD);
            MPI_Buffer_attach(att, size + MPI_BSEND_OVERHEAD);
            if (variant) {
                MPI_Ibsend(at(s.d, &s), c, T, right, 4, comm, &q);
                memset(s.d, 0x77, (size_t)(s.hi - s.lo)); /* buffered at the call */
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else {
                MPI_Bsend_c(at(s.d, &s), count, T, right, 4, comm);
                memset(s.d, 0x77, (size_t)(s.hi - s.lo));
            }
            /* The oracle's plain message travels as a Sendrecv: a ring of
             * MPI_Send before any receive is unsafe (MPICH/UCX sends from
             * 8 KiB up by rendezvous, and every rank waited in MPI_Send). */
            MPI_Sendrecv(at(s.o, &s), c, t, right, 5, at(r.o, &r), c, t, left, 5, comm, &so);
            MPI_Recv(at(r.d, &r), c, t, left, 4, comm, &sd);
            bad |= !same(&r, variant ? "MPI_Ibsend" : "MPI_Bsend", t);
            MPI_Buffer_detach(&old, &size);
            free(att);
            bufs_free(&s);
            bufs_free(&r);
        }
        /* Mprobe + Mrecv / Imrecv into the tagged datatype (sent tagged, i.e.
         * staged, and untagged on alternate rounds). */
        {
            MPI_Message m;
            bufs_make(&s, t, count, me, 6);
            bufs_make(&r, t, count, me, 9);
            bufs_fill(&r, 0x22);
            MPI_Isend(at(s.d, &s), c, variant ? T : t, right, 6, comm, &q);
            MPI_Sendrecv(at(s.o, &s), c, t, right, 7, at(r.o, &r), c, t, left, 7, comm, &so);
            MPI_Mprobe(left, 6, comm, &m, &sd);
            if (k % 4 < 2) {
                MPI_Mrecv_c(at(r.d, &r), count, T, &m, &sd);
            } else {
                MPI_Request rq;
                MPI_Imrecv(at(r.d, &r), c, T, &m, &rq);
                MPI_Wait(&rq, &sd);
            }
            assert_int_equal(m, MPI_MESSAGE_NULL);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            so.MPI_TAG = 6;
            bad |= !same(&r, "MPI_Mrecv", t) || !same_status(&so, &sd, t, T);
            bufs_free(&s);
            bufs_free(&r);
        }
        MPI_Type_free(&T);
        tg_free(&t);
    }
    assert_int_equal(bad, 0);
}

/* Errors: a truncated MPI_Sendrecv_replace / MPI_Mrecv; MPI_Bsend with no
 * buffer attached (MPI's own error, raised on comm). */
static void errors(void **state)
{
    (void)state;
    int b[8] = {0}, rb4[4] = {0}, cls = 0;
    MPI_Request sq;
    MPI_Datatype T = mpiacc_test_host_tagged(MPI_INT, NULL), T2 = mpiacc_test_host_ints(2, &ready);
    MPI_Message m;
    MPI_Status st;
    MPI_Error_class(MPI_Bsend(b, 1, T, right, 30, comm), &cls);
    assert_int_equal(cls, MPI_ERR_BUFFER);
    MPI_Isend(b, 4, MPI_INT, right, 31, comm, &sq); /* a ring: no rank's send may wait for its receiver */
    MPI_Mprobe(left, 31, comm, &m, &st);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Error_class(MPI_Mrecv(rb4, 1, T2, &m, &st), &cls);
    assert_int_equal(cls, MPI_ERR_TRUNCATE);
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    /* A truncated receive inside MPI_Isendrecv: MPI_Wait raises it on comm
     * with its own class; MPI_Waitall reports it in the status. */
    for (int k = 0; k < 2; k++) {
        MPI_Request q;
        MPI_Status sts[1];
        int rb[2], rc;
        MPI_Isendrecv(b, 4, T, right, 32, rb, 1, T2, left, 32, comm, &q);
        if (k == 0) {
            rc = MPI_Wait(&q, &st);
            MPI_Error_class(rc, &cls);
            assert_int_equal(cls, MPI_ERR_TRUNCATE);
        } else {
            rc = MPI_Waitall(1, &q, sts);
            MPI_Error_class(rc, &cls);
            assert_int_equal(cls, MPI_ERR_IN_STATUS);
            MPI_Error_class(sts[0].MPI_ERROR, &cls);
            assert_int_equal(cls, MPI_ERR_TRUNCATE);
        }
        assert_int_equal(q, MPI_REQUEST_NULL);
    }
    MPI_Barrier(comm);
    MPI_Type_free(&T);
    MPI_Type_free(&T2);
}

int main(int argc, char **argv)
{
    int failed;
    const struct CMUnitTest tests[] = {cmocka_unit_test(corpus), cmocka_unit_test(errors)};
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: mpiexec -n 2|3 %s\nSendrecv_replace, Isendrecv(_replace), Bsend/Ibsend, Mrecv/Imrecv with "
               "pooled datatypes against host oracles (MPIACC_TEST_SEED, MPIACC_TEST_NTYPES).\n",
               argv[0]);
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    right = (me + 1) % np;
    left = (me + np - 1) % np;
    seed = mpiacc_test_seed();
    failed = MPIACC_TEST_RUN("sendrecv_x", tests, NULL, NULL);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
