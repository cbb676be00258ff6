/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error cases through the public MPI API, shared by the host, OpenCL and
 * CUDA programs (tests/core/test_errors_mpi.c, tests/opencl/
 * test_ocl_errors_mpi.c, tests/cuda/test_cuda_errors_mpi.c): each program
 * fills an ec_dev_t (how to allocate, read back and tag a buffer of its
 * kind) and runs one group of cases, chosen by `--item N` (issue 10):
 *
 *   1  errors of an operation are raised with the right error handler:
 *      the operation's communicator for the blocking calls, MPI_Wait and
 *      MPI_Test; MPI_COMM_SELF for the multiple-completion calls and
 *      MPI_Request_get_status, with MPI_ERR_IN_STATUS and the real class
 *      in each status (what MPICH does with its own requests).  A
 *      truncation's message names the call that posted the receive and
 *      both sizes (issue 30).
 *   2  argument errors (rank, tag, communicator, request pointer, count)
 *      are returned by the call itself, with MPI's class, through the
 *      communicator's handler, and their message is the call with its
 *      arguments, then a reason naming no internal call (issue 30).
 *   3  a truncated receive fills the part that fits, as MPICH does for
 *      host buffers, and completes with MPI_ERR_TRUNCATE.  Where the
 *      device message went to MPI as device memory (src/engine: the CUDA
 *      program sets ec_trunc_undefined), MPI leaves the buffer's contents
 *      undefined (UCX writes nothing): only the error class is checked.
 *   5  MPI_PROC_NULL with a tagged datatype behaves as in MPICH.
 *
 * Two ranks: rank 0 receives into its device buffer, rank 1 sends host
 * data (which rank 0's device datatype receives).  Every communicator has
 * a recording error handler; the cases run on a duplicate of
 * MPI_COMM_WORLD.
 */
#ifndef MPIACC_TEST_ERR_CASES_H
#define MPIACC_TEST_ERR_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "reqpool/reqpool.h"

typedef struct ec_dev {
    const char *name;
    /* A buffer of `bytes`, holding init (or -1 in every int when NULL). */
    void *(*alloc)(size_t bytes, const int *init);
    void (*read)(void *buf, size_t bytes, void *out);
    void (*release)(void *buf);
    /* Makes t a datatype of this kind (MPIACC_BUF_TYPE and what it needs). */
    void (*tag)(MPI_Datatype t);
} ec_dev_t;

static const ec_dev_t *ec;
/* Set by a program whose receives went to MPI as device memory (item 3). */
static int ec_trunc_undefined;
static int ec_rank;
static MPI_Comm ec_comm;

typedef struct ec_rec {
    int calls, cls;
    char msg[MPI_MAX_ERROR_STRING];
} ec_rec_t;
static ec_rec_t ec_world, ec_self, ec_dup;

static void ec_record(ec_rec_t *r, int code)
{
    int len;
    r->calls++;
    MPI_Error_class(code, &r->cls);
    MPI_Error_string(code, r->msg, &len);
}
static void ec_h_world(MPI_Comm *c, int *code, ...) { ec_record(&ec_world, *code); }
static void ec_h_self(MPI_Comm *c, int *code, ...) { ec_record(&ec_self, *code); }
static void ec_h_dup(MPI_Comm *c, int *code, ...) { ec_record(&ec_dup, *code); }

static int ec_class(int code)
{
    int cls = MPI_SUCCESS;
    if (code != MPI_SUCCESS) MPI_Error_class(code, &cls);
    return cls;
}

/* A completion call's return code: class cls.  Where the receive went to
 * MPI as it is (ec_trunc_undefined: the request is MPI's own), its error is
 * MPI's to raise, and MPICH returns MPI_SUCCESS once a user-defined error
 * handler (the recording ones here) has been called: accepted then (the
 * handler checks that follow still require exactly one call, with cls). */
static void ec_rc_class(int rc, int cls, int line)
{
    int got = ec_class(rc);
    if (got == cls || (ec_trunc_undefined && rc == MPI_SUCCESS)) return;
    fail_msg("line %d: the call returned class %d, expected %d%s", line, got, cls,
             ec_trunc_undefined ? " (or MPI_SUCCESS: MPI's own request and a user handler)" : "");
}
#define EC_RC_CLASS(rc_, cls_) ec_rc_class((rc_), (cls_), __LINE__)

static void ec_reset(void)
{
    memset(&ec_world, 0, sizeof ec_world);
    memset(&ec_self, 0, sizeof ec_self);
    memset(&ec_dup, 0, sizeof ec_dup);
}

/* Exactly one handler call, on `who`, of class cls; none elsewhere. */
static void ec_handled_by(const ec_rec_t *who, int cls, int line)
{
    const ec_rec_t *all[3] = {&ec_world, &ec_self, &ec_dup};
    const char *names[3] = {"MPI_COMM_WORLD", "MPI_COMM_SELF", "the operation's communicator"};
    for (int i = 0; i < 3; i++) {
        int want = all[i] == who ? 1 : 0;
        if (all[i]->calls != want)
            fail_msg("line %d: %s's error handler called %d time(s) (expected %d; last class %d: %s)", line, names[i],
                     all[i]->calls, want, all[i]->cls, all[i]->msg);
    }
    if (who->cls != cls) fail_msg("line %d: handler saw class %d (%s), expected %d", line, who->cls, who->msg, cls);
}
#define EC_HANDLED_BY(who_, cls_) ec_handled_by((who_), (cls_), __LINE__)

static void ec_setup_comms(void)
{
    MPI_Errhandler eh;
    MPI_Comm_dup(MPI_COMM_WORLD, &ec_comm);
    MPI_Comm_create_errhandler(ec_h_world, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Errhandler_free(&eh);
    MPI_Comm_create_errhandler(ec_h_self, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    MPI_Errhandler_free(&eh);
    MPI_Comm_create_errhandler(ec_h_dup, &eh);
    MPI_Comm_set_errhandler(ec_comm, eh);
    MPI_Errhandler_free(&eh);
}

static void ec_free_comms(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_free(&ec_comm);
}

/* n ints of the program's kind (vector(n, 1, stride) when stride > 1). */
static MPI_Datatype ec_ints(int n, int stride)
{
    MPI_Datatype t;
    if (stride > 1) MPI_Type_vector(n, 1, stride, MPI_INT, &t);
    else MPI_Type_contiguous(n, MPI_INT, &t);
    MPI_Type_commit(&t);
    ec->tag(t);
    return t;
}

static void ec_values(int *v, int n, int seed)
{
    for (int i = 0; i < n; i++) v[i] = seed * 1000003 + i;
}

/* Rank 1: sends n values (seed) to rank 0 on ec_comm with tag. */
static void ec_send_host(int n, int seed, int tag)
{
    int *v = malloc((size_t)n * sizeof *v);
    ec_values(v, n, seed);
    assert_int_equal(MPI_Send(v, n, MPI_INT, 0, tag, ec_comm), MPI_SUCCESS);
    free(v);
}

static int ec_before(void **state)
{
    MPI_Barrier(MPI_COMM_WORLD);
    ec_reset();
    return 0;
}

static int ec_after(void **state)
{
    if (mpiacc_rp_pending() != 0) fail_msg("an mpiacc operation is still pending after the case");
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

#define N 256

/* ---- item 1: which handler ------------------------------------------------ */

/* Rank 0 posts a device receive of N ints that rank 1's 2N ints truncate. */
static MPI_Request ec_trunc_irecv(void **buf, MPI_Datatype *t, int tag)
{
    MPI_Request r = MPI_REQUEST_NULL;
    *t = ec_ints(N, 1);
    *buf = ec->alloc(N * sizeof(int), NULL);
    assert_int_equal(MPI_Irecv(*buf, 1, *t, 1, tag, ec_comm, &r), MPI_SUCCESS);
    return r;
}

static void ec_trunc_done(void *buf, MPI_Datatype t)
{
    ec->release(buf);
    MPI_Type_free(&t);
}

/* The truncation's message names the call that posted the receive, with
 * its arguments, and both sizes: the message's (2N ints) and the
 * receive's (N).  Where MPI took the device message (ec_trunc_undefined),
 * the error is MPI's own. */
static void ec_trunc_text(const ec_rec_t *who, const char *call, int line)
{
    char sizes[96];
    snprintf(sizes, sizeof sizes, "is %zu bytes, the receive takes %zu bytes", 2 * N * sizeof(int), N * sizeof(int));
    if (ec_trunc_undefined) return;
    if (strncmp(who->msg, call, strlen(call)) || !strstr(who->msg, "source=1, ") || !strstr(who->msg, sizes))
        fail_msg("line %d: the truncation does not read \"%s...source=1, ...: ...%s\": %s", line, call, sizes,
                 who->msg);
}

static void wait_on_comm(void **state)
{
    void *b;
    MPI_Datatype t;
    MPI_Request r;
    MPI_Status st;
    if (ec_rank == 1) return ec_send_host(2 * N, 1, 10);
    r = ec_trunc_irecv(&b, &t, 10);
    EC_RC_CLASS(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE);
    EC_HANDLED_BY(&ec_dup, MPI_ERR_TRUNCATE);
    ec_trunc_text(&ec_dup, "MPI_Irecv(", __LINE__);
    assert_int_equal(r, MPI_REQUEST_NULL);
    ec_trunc_done(b, t);
}

static void test_on_comm(void **state)
{
    void *b;
    MPI_Datatype t;
    MPI_Request r;
    int flag = 0, rc = MPI_SUCCESS;
    if (ec_rank == 1) return ec_send_host(2 * N, 2, 11);
    r = ec_trunc_irecv(&b, &t, 11);
    while (!flag) rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    EC_RC_CLASS(rc, MPI_ERR_TRUNCATE);
    EC_HANDLED_BY(&ec_dup, MPI_ERR_TRUNCATE);
    ec_trunc_done(b, t);
}

static void blocking_recv_on_comm(void **state)
{
    void *b;
    MPI_Datatype t;
    MPI_Status st;
    if (ec_rank == 1) {
        ec_send_host(2 * N, 3, 12);
        ec_send_host(2 * N, 3, 13);
        return;
    }
    t = ec_ints(N, 1);
    b = ec->alloc(N * sizeof(int), NULL);
    EC_RC_CLASS(MPI_Recv(b, 1, t, 1, 12, ec_comm, &st), MPI_ERR_TRUNCATE);
    EC_HANDLED_BY(&ec_dup, MPI_ERR_TRUNCATE);
    ec_trunc_text(&ec_dup, "MPI_Recv(", __LINE__);
    ec_reset();
    EC_RC_CLASS(MPI_Sendrecv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, b, 1, t, 1, 13, ec_comm, &st), MPI_ERR_TRUNCATE);
    EC_HANDLED_BY(&ec_dup, MPI_ERR_TRUNCATE);
    ec_trunc_text(&ec_dup, "MPI_Sendrecv(", __LINE__);
    ec_trunc_done(b, t);
}

/* Waitall over {NULL, truncated device receive, good host receive}. */
static void waitall_in_status(void **state)
{
    void *b;
    MPI_Datatype t;
    MPI_Request r[3];
    MPI_Status st[3];
    int h[4];
    if (ec_rank == 1) {
        ec_send_host(2 * N, 4, 14);
        ec_send_host(4, 4, 15);
        ec_send_host(2 * N, 5, 16);
        return;
    }
    r[0] = MPI_REQUEST_NULL;
    r[1] = ec_trunc_irecv(&b, &t, 14);
    MPI_Irecv(h, 4, MPI_INT, 1, 15, ec_comm, &r[2]);
    for (int i = 0; i < 3; i++) st[i].MPI_ERROR = -12345;
    EC_RC_CLASS(MPI_Waitall(3, r, st), MPI_ERR_IN_STATUS);
    EC_HANDLED_BY(&ec_self, MPI_ERR_IN_STATUS);
    assert_int_equal(ec_class(st[1].MPI_ERROR), MPI_ERR_TRUNCATE);
    assert_int_equal(st[0].MPI_ERROR, MPI_SUCCESS);
    /* MPI lets a request that was neither done nor failed when the error
     * was found be reported MPI_ERR_PENDING and stay active (MPICH does so
     * when the device receive fails while the host one is in flight) */
    if (st[2].MPI_ERROR == MPI_ERR_PENDING) {
        assert_int_not_equal(r[2], MPI_REQUEST_NULL);
        assert_int_equal(MPI_Wait(&r[2], &st[2]), MPI_SUCCESS);
    } else {
        assert_int_equal(st[2].MPI_ERROR, MPI_SUCCESS);
    }
    assert_int_equal(st[2].MPI_SOURCE, 1);
    for (int i = 0; i < 3; i++) assert_int_equal(r[i], MPI_REQUEST_NULL);
    /* statuses ignored: still MPI_ERR_IN_STATUS, as MPICH */
    ec_reset();
    r[1] = MPI_REQUEST_NULL;
    assert_int_equal(MPI_Irecv(b, 1, t, 1, 16, ec_comm, &r[1]), MPI_SUCCESS);
    EC_RC_CLASS(MPI_Waitall(3, r, MPI_STATUSES_IGNORE), MPI_ERR_IN_STATUS);
    EC_HANDLED_BY(&ec_self, MPI_ERR_IN_STATUS);
    ec_trunc_done(b, t);
}

static void waitany_waitsome(void **state)
{
    void *b;
    MPI_Datatype t;
    MPI_Request r[2];
    MPI_Status st[2];
    int idx = -1, out = 0, ind[2];
    if (ec_rank == 1) {
        ec_send_host(2 * N, 6, 17);
        ec_send_host(2 * N, 7, 18);
        return;
    }
    r[0] = MPI_REQUEST_NULL;
    r[1] = ec_trunc_irecv(&b, &t, 17);
    EC_RC_CLASS(MPI_Waitany(2, r, &idx, &st[0]), MPI_ERR_TRUNCATE);
    assert_int_equal(idx, 1);
    EC_HANDLED_BY(&ec_self, MPI_ERR_TRUNCATE);
    ec_reset();
    assert_int_equal(MPI_Irecv(b, 1, t, 1, 18, ec_comm, &r[1]), MPI_SUCCESS);
    EC_RC_CLASS(MPI_Waitsome(2, r, &out, ind, st), MPI_ERR_IN_STATUS);
    assert_int_equal(out, 1);
    assert_int_equal(ind[0], 1);
    assert_int_equal(ec_class(st[0].MPI_ERROR), MPI_ERR_TRUNCATE);
    EC_HANDLED_BY(&ec_self, MPI_ERR_IN_STATUS);
    ec_trunc_done(b, t);
}

static void test_family(void **state)
{
    void *b;
    MPI_Datatype t;
    MPI_Request r[2];
    MPI_Status st[2];
    int flag = 0, idx = -1, out = 0, ind[2], rc = MPI_SUCCESS;
    if (ec_rank == 1) {
        for (int i = 0; i < 3; i++) ec_send_host(2 * N, 8 + i, 19 + i);
        return;
    }
    r[0] = MPI_REQUEST_NULL;
    r[1] = ec_trunc_irecv(&b, &t, 19);
    while (!flag) rc = MPI_Testall(2, r, &flag, st);
    EC_RC_CLASS(rc, MPI_ERR_IN_STATUS);
    assert_int_equal(ec_class(st[1].MPI_ERROR), MPI_ERR_TRUNCATE);
    assert_int_equal(st[0].MPI_ERROR, MPI_SUCCESS);
    EC_HANDLED_BY(&ec_self, MPI_ERR_IN_STATUS);

    ec_reset();
    flag = 0;
    assert_int_equal(MPI_Irecv(b, 1, t, 1, 20, ec_comm, &r[1]), MPI_SUCCESS);
    while (!flag) rc = MPI_Testany(2, r, &idx, &flag, &st[0]);
    EC_RC_CLASS(rc, MPI_ERR_TRUNCATE);
    assert_int_equal(idx, 1);
    EC_HANDLED_BY(&ec_self, MPI_ERR_TRUNCATE);

    ec_reset();
    assert_int_equal(MPI_Irecv(b, 1, t, 1, 21, ec_comm, &r[1]), MPI_SUCCESS);
    while (out == 0) rc = MPI_Testsome(2, r, &out, ind, st);
    EC_RC_CLASS(rc, MPI_ERR_IN_STATUS);
    assert_int_equal(out, 1);
    assert_int_equal(ind[0], 1);
    assert_int_equal(ec_class(st[0].MPI_ERROR), MPI_ERR_TRUNCATE);
    EC_HANDLED_BY(&ec_self, MPI_ERR_IN_STATUS);
    ec_trunc_done(b, t);
}

/* MPI_Request_get_status reports on MPI_COMM_SELF and leaves the request;
 * the MPI_Wait that frees it reports again, on the communicator. */
static void get_status_then_wait(void **state)
{
    void *b;
    MPI_Datatype t;
    MPI_Request r;
    MPI_Status st;
    int flag = 0, rc = MPI_SUCCESS;
    if (ec_rank == 1) return ec_send_host(2 * N, 11, 22);
    r = ec_trunc_irecv(&b, &t, 22);
    while (!flag) rc = MPI_Request_get_status(r, &flag, &st);
    EC_RC_CLASS(rc, MPI_ERR_TRUNCATE);
    EC_HANDLED_BY(&ec_self, MPI_ERR_TRUNCATE);
    assert_int_not_equal(r, MPI_REQUEST_NULL);
    ec_reset();
    EC_RC_CLASS(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE);
    EC_HANDLED_BY(&ec_dup, MPI_ERR_TRUNCATE);
    ec_trunc_done(b, t);
}

static const struct CMUnitTest ec_item1[] = {
    cmocka_unit_test_setup_teardown(wait_on_comm, ec_before, ec_after),
    cmocka_unit_test_setup_teardown(test_on_comm, ec_before, ec_after),
    cmocka_unit_test_setup_teardown(blocking_recv_on_comm, ec_before, ec_after),
    cmocka_unit_test_setup_teardown(waitall_in_status, ec_before, ec_after),
    cmocka_unit_test_setup_teardown(waitany_waitsome, ec_before, ec_after),
    cmocka_unit_test_setup_teardown(test_family, ec_before, ec_after),
    cmocka_unit_test_setup_teardown(get_status_then_wait, ec_before, ec_after),
};

/* ---- item 2: argument errors at the call ------------------------------------ */

/* err is an error of class cls, raised once on `who`, whose message names
 * no internal call; r was left alone. */
static void ec_arg_error(int err, int cls, const ec_rec_t *who, MPI_Request r, const char *what, int line)
{
    if (err == MPI_SUCCESS || ec_class(err) != cls) {
        if (r != MPI_REQUEST_NULL) {
            int flag = 0;
            MPI_Cancel(&r);
            for (int i = 0; i < 100000 && !flag; i++) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        }
        fail_msg("line %d: %s returned class %d at the call, expected %d", line, what, ec_class(err), cls);
    }
    size_t name = strcspn(what, "(");
    const char *why = strstr(who->msg, "): ");
    ec_handled_by(who, cls, line);
    /* "MPI_Isend(buf=..., ...): why": the user's call with its arguments,
     * then a reason that names no internal call */
    if (strncmp(who->msg, what, name) || who->msg[name] != '(' || !why)
        fail_msg("line %d: %s: the message does not start with the call and its arguments: %s", line, what,
                 who->msg);
    if (strstr(why, "MPI_Isend_c") || strstr(why, "MPI_Irecv_c") || strstr(why, "MPI_PACKED"))
        fail_msg("line %d: %s: the message names an internal call: %s", line, what, who->msg);
    assert_int_equal(r, MPI_REQUEST_NULL);
    assert_int_equal(mpiacc_rp_pending(), 0);
    ec_reset();
}
#define EC_ARG(call_, cls_, who_)                                    \
    do {                                                             \
        int err_;                                                    \
        r = MPI_REQUEST_NULL;                                        \
        err_ = (call_);                                              \
        ec_arg_error(err_, (cls_), (who_), r, #call_, __LINE__);     \
    } while (0)

static void arguments_at_the_call(void **state)
{
    MPI_Datatype t = ec_ints(N, 1);
    void *b = ec->alloc(N * sizeof(int), NULL);
    MPI_Request r = MPI_REQUEST_NULL;
    int *ub, flag, size;
    MPI_Comm_size(ec_comm, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    EC_ARG(MPI_Isend(b, 1, t, size + 3, 0, ec_comm, &r), MPI_ERR_RANK, &ec_dup);
    EC_ARG(MPI_Isend(b, 1, t, -7, 0, ec_comm, &r), MPI_ERR_RANK, &ec_dup);
    EC_ARG(MPI_Isend(b, 1, t, MPI_ANY_SOURCE, 0, ec_comm, &r), MPI_ERR_RANK, &ec_dup);
    EC_ARG(MPI_Irecv(b, 1, t, size + 3, 0, ec_comm, &r), MPI_ERR_RANK, &ec_dup);
    EC_ARG(MPI_Send(b, 1, t, size, 0, ec_comm), MPI_ERR_RANK, &ec_dup);
    EC_ARG(MPI_Recv(b, 1, t, size, 0, ec_comm, MPI_STATUS_IGNORE), MPI_ERR_RANK, &ec_dup);
    EC_ARG(MPI_Isend(b, 1, t, 1 - ec_rank, -3, ec_comm, &r), MPI_ERR_TAG, &ec_dup);
    EC_ARG(MPI_Isend(b, 1, t, 1 - ec_rank, MPI_ANY_TAG, ec_comm, &r), MPI_ERR_TAG, &ec_dup);
    if (*ub < 0x7fffffff) EC_ARG(MPI_Issend(b, 1, t, 1 - ec_rank, *ub + 1, ec_comm, &r), MPI_ERR_TAG, &ec_dup);
    EC_ARG(MPI_Irecv(b, 1, t, 1 - ec_rank, -5, ec_comm, &r), MPI_ERR_TAG, &ec_dup);
    EC_ARG(MPI_Ssend(b, 1, t, 1 - ec_rank, -3, ec_comm), MPI_ERR_TAG, &ec_dup);
    EC_ARG(MPI_Isend(b, 1, t, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM, &ec_self);
    EC_ARG(MPI_Recv(b, 1, t, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE), MPI_ERR_COMM, &ec_self);
    EC_ARG(MPI_Isend(b, 1, t, 1 - ec_rank, 0, ec_comm, NULL), MPI_ERR_ARG, &ec_dup);
    EC_ARG(MPI_Irecv(b, 1, t, 1 - ec_rank, 0, ec_comm, NULL), MPI_ERR_ARG, &ec_dup);
    EC_ARG(MPI_Isend_c(b, 1, t, 1 - ec_rank, 0, ec_comm, NULL), MPI_ERR_ARG, &ec_dup);
    EC_ARG(MPI_Isend(b, -1, t, 1 - ec_rank, 0, ec_comm, &r), MPI_ERR_COUNT, &ec_dup);
    EC_ARG(MPI_Irecv_c(b, -2, t, 1 - ec_rank, 0, ec_comm, &r), MPI_ERR_COUNT, &ec_dup);
    EC_ARG(MPI_Sendrecv(b, 1, t, size + 1, 0, b, 1, t, 1 - ec_rank, 0, ec_comm, MPI_STATUS_IGNORE), MPI_ERR_RANK,
           &ec_dup);
    /* a device receive whose entries overlap (two ints every int: 3
     * elements write 24 bytes within 16) is MPI_ERR_TYPE, not bytes in no
     * fixed order (the host unpack keeps MPI's order: allowed there) */
    if (strcmp(ec->name, "host") != 0) {
        MPI_Datatype two, ov;
        MPI_Type_contiguous(2, MPI_INT, &two);
        MPI_Type_create_resized(two, 0, sizeof(int), &ov);
        MPI_Type_free(&two);
        MPI_Type_commit(&ov);
        ec->tag(ov);
        EC_ARG(MPI_Irecv(b, 3, ov, 1 - ec_rank, 0, ec_comm, &r), MPI_ERR_TYPE, &ec_dup);
        EC_ARG(MPI_Recv(b, 3, ov, 1 - ec_rank, 0, ec_comm, MPI_STATUS_IGNORE), MPI_ERR_TYPE, &ec_dup);
        EC_ARG(MPI_Recv_init(b, 3, ov, 1 - ec_rank, 0, ec_comm, &r), MPI_ERR_TYPE, &ec_dup); /* at the init call */
        MPI_Type_free(&ov);
    }
    ec->release(b);
    MPI_Type_free(&t);
}

static const struct CMUnitTest ec_item2[] = {
    cmocka_unit_test_setup_teardown(arguments_at_the_call, ec_before, ec_after),
};

/* ---- item 3: a truncated receive fills what fits ---------------------------- */

static void ec_trunc_fill(int n, int stride, int tag)
{
    MPI_Datatype t;
    void *b;
    int *got, *want;
    size_t span = (size_t)(stride > 1 ? (n - 1) * stride + 1 : n);
    MPI_Request r;
    if (ec_rank == 1) return ec_send_host(2 * n, 30 + tag, tag);
    t = ec_ints(n, stride);
    b = ec->alloc(span * sizeof(int), NULL);
    got = malloc(span * sizeof(int));
    want = malloc(2 * (size_t)n * sizeof(int));
    assert_int_equal(MPI_Irecv(b, 1, t, 1, tag, ec_comm, &r), MPI_SUCCESS);
    EC_RC_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    ec->read(b, span * sizeof(int), got);
    ec_values(want, 2 * n, 30 + tag);
    for (size_t i = 0; i < span && !ec_trunc_undefined; i++) {
        int expect = stride > 1 ? (i % (size_t)stride == 0 ? want[i / (size_t)stride] : -1) : want[i];
        if (got[i] != expect) fail_msg("int %zu of %zu: %d, expected %d", i, span, got[i], expect);
    }
    free(got);
    free(want);
    ec->release(b);
    MPI_Type_free(&t);
}

static void truncated_contiguous(void **state) { ec_trunc_fill(N, 1, 40); }
static void truncated_strided(void **state) { ec_trunc_fill(N, 3, 41); }
static void truncated_large(void **state) { ec_trunc_fill(1 << 18, 1, 42); }

static const struct CMUnitTest ec_item3[] = {
    cmocka_unit_test_setup_teardown(truncated_contiguous, ec_before, ec_after),
    cmocka_unit_test_setup_teardown(truncated_strided, ec_before, ec_after),
    cmocka_unit_test_setup_teardown(truncated_large, ec_before, ec_after),
};

/* ---- item 5: MPI_PROC_NULL with a tagged datatype --------------------------- */

static void proc_null_tagged(void **state)
{
    MPI_Datatype t = ec_ints(N, 1);
    void *b = ec->alloc(N * sizeof(int), NULL);
    int *got = malloc(N * sizeof(int)), n = -1;
    MPI_Request r[2];
    MPI_Status st;
    assert_int_equal(MPI_Send(b, 1, t, MPI_PROC_NULL, 0, ec_comm), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(b, 1, t, MPI_PROC_NULL, 0, ec_comm, &st), MPI_SUCCESS);
    assert_int_equal(st.MPI_SOURCE, MPI_PROC_NULL);
    assert_int_equal(st.MPI_TAG, MPI_ANY_TAG);
    MPI_Get_count(&st, t, &n);
    assert_int_equal(n, 0);
    assert_int_equal(MPI_Isend(b, 1, t, MPI_PROC_NULL, 0, ec_comm, &r[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(b, 1, t, MPI_PROC_NULL, 0, ec_comm, &r[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_int_equal(MPI_Sendrecv(b, 1, t, MPI_PROC_NULL, 0, b, 1, t, MPI_PROC_NULL, 0, ec_comm, &st), MPI_SUCCESS);
    assert_int_equal(st.MPI_SOURCE, MPI_PROC_NULL);
    ec->read(b, N * sizeof(int), got);
    for (int i = 0; i < N; i++) assert_int_equal(got[i], -1);
    assert_int_equal(ec_world.calls + ec_self.calls + ec_dup.calls, 0);
    free(got);
    ec->release(b);
    MPI_Type_free(&t);
}

static const struct CMUnitTest ec_item5[] = {
    cmocka_unit_test_setup_teardown(proc_null_tagged, ec_before, ec_after),
};

/* Runs the group named by --item (after MPI_Init and the device set-up). */
static int ec_run(int argc, char **argv, const ec_dev_t *dev)
{
    int item = 0, failed;
    char name[64];
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--item")) item = atoi(argv[i + 1]);
    ec = dev;
    MPI_Comm_rank(MPI_COMM_WORLD, &ec_rank);
    ec_setup_comms();
    snprintf(name, sizeof name, "errors_%s_item%d", dev->name, item);
    switch (item) {
    case 1: failed = MPIACC_TEST_RUN(name, ec_item1, NULL, NULL); break;
    case 2: failed = MPIACC_TEST_RUN(name, ec_item2, NULL, NULL); break;
    case 3: failed = MPIACC_TEST_RUN(name, ec_item3, NULL, NULL); break;
    case 5: failed = MPIACC_TEST_RUN(name, ec_item5, NULL, NULL); break;
    default: fprintf(stderr, "usage: %s --item 1|2|3|5\n", argv[0]); failed = 1;
    }
    ec_free_comms();
    return failed;
}

#endif
