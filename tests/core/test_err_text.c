/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * Issue 30: an error names the user's MPI call with its arguments (the
 * datatype readably -- issue 38: MPI's name, else its name and what it is,
 * "'halo_col' (derived: contiguous, tagged host)", or what it is,
 * "derived (vector, tagged host)" -- buffer, counts, peer, tag,
 * communicator), the way MPICH's own errors read, prints once, and follows
 * the error handler.
 * One rank; pooled host datatypes (MPIACC_BUF_HOST + MPIACC_EVENT, the CPU
 * backend), so no device is needed; the OpenCL and CUDA programs check the
 * truncation text on their buffers (err_cases.h, item 1).
 *
 *   (no argument)   MPI_ERRORS_RETURN: each case's code names the call and
 *                   nothing is printed at the default MPIACC_LOG (warn);
 *   --log           the same run under MPIACC_LOG=info: each error logged
 *                   once, as "error: <the code's string>";
 *   --fatal CASE    MPI_ERRORS_ARE_FATAL: the call of CASE (isend, bcast,
 *                   pack) aborts; err_text_fatal.sh checks that mpiacc
 *                   prints the error first, as the user's call's
 *                   ("mpiacc: MPI_Isend: ..."), once, and MPI's abort
 *                   follows.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "stderr_capture.h"
#include "testutil.h"
#include "mpiacc.h"

static atomic_int ready = 1;
static int logging; /* --log: MPIACC_LOG=info */

/* A pooled host datatype of n ints named `name` (committed or not). */
static MPI_Datatype named_ints(int n, const char *name, int commit)
{
    MPI_Datatype t;
    MPI_Type_contiguous(n, MPI_INT, &t);
    if (commit) MPI_Type_commit(&t);
    MPI_Type_set_name(t, name);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&ready);
    return t;
}

static int class_of(int code)
{
    int cls = MPI_SUCCESS;
    if (code != MPI_SUCCESS) MPI_Error_class(code, &cls);
    return cls;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* err is of class cls; its string starts with `call` and holds every
 * string of `has`; what was printed meanwhile (printed) is nothing, or
 * under --log the string once, as an error line. */
static void check(int err, int cls, const char *printed, const char *call, const char *const has[], int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "", want[MPI_MAX_ERROR_STRING + 16];
    int len = 0;
    if (class_of(err) != cls) fail_msg("line %d: class %d, expected %d", line, class_of(err), cls);
    MPI_Error_string(err, msg, &len);
    if (strncmp(msg, call, strlen(call))) fail_msg("line %d: \"%s\" does not start with \"%s\"", line, msg, call);
    for (int i = 0; has[i]; i++)
        if (!strstr(msg, has[i])) fail_msg("line %d: \"%s\" lacks \"%s\"", line, msg, has[i]);
    snprintf(want, sizeof want, "error: %s\n", msg);
    if (logging ? count(printed, want) != 1 || count(printed, call) != 1 : printed[0] != 0)
        fail_msg("line %d: printed %s, expected %s: \"%s\"", line, logging ? "otherwise" : "something",
                 logging ? "the error once" : "nothing", printed);
}
#define CHECK(call_, cls_, name_, ...)                                        \
    do {                                                                      \
        stderr_capture_t cap_;                                                \
        const char *has_[] = {__VA_ARGS__, NULL};                             \
        char *printed_;                                                       \
        int err_;                                                             \
        stderr_capture_begin(&cap_);                                          \
        err_ = (call_);                                                       \
        printed_ = stderr_capture_end(&cap_);                                 \
        check(err_, (cls_), printed_, name_ "(", has_, __LINE__);             \
        free(printed_);                                                       \
    } while (0)

/* 32 ints into a receive of one 8-int block, on this process: MPI_Wait's
 * code (the error is found while MPI progresses, in any of the calls). */
static int truncated(int *buf, MPI_Datatype small, int *big)
{
    MPI_Request r;
    assert_int_equal(MPI_Irecv(buf, 1, small, 0, 9, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    assert_int_equal(MPI_Send(big, 32, MPI_INT, 0, 9, MPI_COMM_WORLD), MPI_SUCCESS);
    return MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* Point-to-point: an uncommitted datatype, and a truncated receive whose
 * error is found later, in MPI_Wait, yet names the MPI_Irecv. */
static void p2p(void **state)
{
    int buf[64] = {0}, big[32] = {0};
    char addr[32];
    MPI_Datatype halo = named_ints(4, "halo_col", 0), small = named_ints(8, "small_row", 1);
    MPI_Request r = MPI_REQUEST_NULL;
    snprintf(addr, sizeof addr, "buf=%p, ", (void *)buf);
    CHECK(MPI_Isend(buf, 4, halo, 0, 7, MPI_COMM_WORLD, &r), MPI_ERR_TYPE, "MPI_Isend", addr, "count=4, ",
          "datatype='halo_col' (derived: contiguous, tagged host), dest=0, tag=7, comm=MPI_COMM_WORLD, request=",
          "not committed");
    assert_int_equal(r, MPI_REQUEST_NULL);
    CHECK(MPI_Send(buf, -1, small, 0, 3, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send", "count=-1, ", "'small_row'",
          "negative count");
    CHECK(MPI_Recv(buf, 1, small, 5, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK, "MPI_Recv",
          "source=5, tag=MPI_ANY_TAG, comm=MPI_COMM_WORLD, status=MPI_STATUS_IGNORE)", "invalid source rank 5");
    CHECK(truncated(buf, small, big), MPI_ERR_TRUNCATE, "MPI_Irecv", addr, "count=1, ", "source=0, tag=9",
          "is 128 bytes, the receive takes 32 bytes");
    MPI_Type_free(&halo);
    MPI_Type_free(&small);
}

/* A collective: the call and its arguments, the reason without the
 * collectives layer's own prefix. */
static void collective(void **state)
{
    int buf[16] = {0};
    MPI_Datatype t = named_ints(2, "pair", 1);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Datatype v;
    CHECK(MPI_Bcast(buf, -2, t, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Bcast", "count=-2, datatype=",
          "'pair' (derived: contiguous, tagged host), root=0", "): negative count -2");
    /* without a name: what it is; MPI's own types by name */
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Type_set_attr(v, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(v, MPIACC_EVENT, (void *)&ready);
    CHECK(MPI_Bcast(buf, 1, v, 7, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast",
          "datatype=derived (vector, tagged host), root=7", "invalid root 7");
    MPI_Type_free(&v);
    CHECK(MPI_Iallreduce(MPI_IN_PLACE, buf, 1, t, MPI_SUM, MPI_COMM_SELF, NULL), MPI_ERR_ARG, "MPI_Iallreduce",
          "sendbuf=MPI_IN_PLACE, ", "op=MPI_SUM, comm=MPI_COMM_SELF, request=NULL)", "request argument is NULL");
    assert_int_equal(r, MPI_REQUEST_NULL);
    MPI_Type_free(&t);
}

/* MPI_Pack into a packed buffer too small, and a NULL position. */
static void pack(void **state)
{
    int in[8] = {0}, pos = 0;
    char out[16];
    MPI_Datatype t = named_ints(8, "block8", 1);
    CHECK(MPI_Pack(in, 1, t, out, (int)sizeof out, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, "MPI_Pack", "incount=1, ",
          "datatype='block8' (derived: contiguous, tagged host), ", "outsize=16, ",
          "packing 32 bytes at position 0 of a 16-byte packed buffer");
    assert_int_equal(pos, 0);
    CHECK(MPI_Unpack(out, (int)sizeof out, NULL, in, 1, t, MPI_COMM_WORLD), MPI_ERR_ARG, "MPI_Unpack",
          "position=NULL", "NULL position");
    MPI_Type_free(&t);
}

/* --fatal CASE: the failing call under MPI_ERRORS_ARE_FATAL (never returns). */
static int fatal(const char *which)
{
    int buf[64] = {0}, pos = 0;
    char out[16];
    MPI_Request r;
    MPI_Datatype halo = named_ints(4, "halo_col", 0), t = named_ints(8, "block8", 1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (!strcmp(which, "isend")) MPI_Isend(buf, 4, halo, 0, 7, MPI_COMM_WORLD, &r);
    else if (!strcmp(which, "bcast")) MPI_Bcast(buf, -2, t, 0, MPI_COMM_WORLD);
    else if (!strcmp(which, "pack")) MPI_Pack(buf, 1, t, out, (int)sizeof out, &pos, MPI_COMM_WORLD);
    printf("FAIL: %s returned under MPI_ERRORS_ARE_FATAL\n", which);
    return 1;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(p2p), cmocka_unit_test(collective), cmocka_unit_test(pack),
    };
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("usage: %s [--log | --fatal isend|bcast|pack]\nError messages name the call and its arguments, "
               "print once, follow the error handler (one rank).\n",
               argv[0]);
        return 0;
    }
    MPI_Init(&argc, &argv);
    if (argc > 2 && !strcmp(argv[1], "--fatal")) return fatal(argv[2]);
    logging = argc > 1 && !strcmp(argv[1], "--log");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    return mpiacc_test_end(MPIACC_TEST_RUN(logging ? "err_text_log" : "err_text", tests, NULL, NULL));
}
