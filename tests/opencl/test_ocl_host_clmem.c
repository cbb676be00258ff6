/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * A cl_mem passed as host memory (issue 38): a live cl_mem that mpiacc has
 * seen (used once with an OpenCL datatype) and that the application then
 * passes with a host datatype -- untagged, or tagged MPIACC_BUF_HOST -- is
 * refused with MPI_ERR_BUFFER naming the call and MPIACC_BUF_OPENCL, by
 * every kind of call (sends, receives, persistent, a collective,
 * MPI_Pack/MPI_Unpack), and nothing is written through the handle (the
 * first bytes of the handle's object are unchanged; before the fix, MPI
 * wrote the message there and the process crashed later).  2 ranks,
 * MPI_ERRORS_RETURN:
 *  - the issue's program: rank 0 sends 256 ints of a cl_mem with an OpenCL
 *    datatype, rank 1 receives them into its (known) cl_mem with MPI_INT:
 *    refused; the same message is then received with the OpenCL datatype;
 *  - every entry point on this rank's own known cl_mem (nothing moves);
 *  - host buffers of the same program still go to MPI (an exchange);
 *  - a released cl_mem is forgotten (the backend no longer calls it live).
 * With --fatal (one rank): MPI_Recv of a known cl_mem with MPI_INT under
 * MPI_ERRORS_ARE_FATAL: the run aborts; clmem_fatal.sh checks the text
 * ("mpiacc: MPI_Recv: ..." first, then MPI's abort).
 */
#include "ocl_fixture.h"
#include "reqpool/reqpool.h"

#define N 256
static int rank, peer;

/* A cl_mem of N ints (value v) that mpiacc has seen: sent to this very
 * process with an OpenCL datatype (MPIACC_QUEUE_NONE) and received back. */
static cl_mem known_clmem(int v)
{
    int host[N];
    MPI_Datatype t;
    cl_mem m, back;
    for (int i = 0; i < N; i++) host[i] = v;
    m = fx_buf(sizeof host, host);
    back = fx_buf(sizeof host, NULL);
    MPI_Type_contiguous(N, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    MPI_Type_set_attr(t, MPIACC_CL_QUEUE, MPIACC_QUEUE_NONE);
    assert_int_equal(MPI_Sendrecv((void *)m, 1, t, rank, 9, (void *)back, 1, t, rank, 9, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
    MPI_Type_free(&t);
    clReleaseMemObject(back);
    if (!fx.be->is_live_handle || !fx.be->is_live_handle(m)) fail_msg("the cl_mem used with MPI is not known live");
    return m;
}

/* The handle's first bytes (the object the runtime allocated): never
 * written by a refused call. */
typedef struct {
    unsigned char b[16];
} head_t;
static head_t head_of(cl_mem m)
{
    head_t h;
    memcpy(h.b, (const void *)m, sizeof h.b);
    return h;
}
static void unchanged(cl_mem m, const head_t *before)
{
    head_t now = head_of(m);
    if (memcmp(before->b, now.b, sizeof now.b)) fail_msg("the cl_mem's object was written");
}

#define REFUSED(call_, name_) refused((call_), (name_), #call_, __LINE__)
static void refused(int err, const char *name, const char *what, int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = fx_class(err);
    if (err != MPI_SUCCESS) MPI_Error_string(err, msg, &len);
    if (cls != MPI_ERR_BUFFER) fail_msg("line %d: %s: error class %d (\"%s\"), expected MPI_ERR_BUFFER", line, what,
                                        cls, msg);
    if (strncmp(msg, name, strlen(name)) || msg[strlen(name)] != '(')
        fail_msg("line %d: %s: the message does not name %s first: \"%s\"", line, what, name, msg);
    if (!strstr(msg, "MPIACC_BUF_OPENCL") || !strstr(msg, "cl_mem"))
        fail_msg("line %d: %s: the message does not say to tag the datatype: \"%s\"", line, what, msg);
    if (mpiacc_rp_pending() != 0) fail_msg("line %d: %s left an operation pending", line, what);
}

static void issue_program(void **state)
{
    int host[N], bad = 0;
    MPI_Datatype t;
    cl_mem m = known_clmem(rank == 0 ? 5 : -1);
    head_t before = head_of(m);
    (void)state;
    MPI_Type_contiguous(N, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    MPI_Type_set_attr(t, MPIACC_CL_QUEUE, (void *)fx.qin);
    if (rank == 0) {
        assert_int_equal(MPI_Send((void *)m, 1, t, peer, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    } else {
        REFUSED(MPI_Recv((void *)m, N, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        unchanged(m, &before);
        /* the message is still there: received the right way */
        assert_int_equal(MPI_Recv((void *)m, 1, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        fx_read(m, sizeof host, host);
        for (int i = 0; i < N; i++) bad += host[i] != 5;
        if (bad) fail_msg("%d of %d ints received wrong", bad, N);
    }
    MPI_Type_free(&t);
    clReleaseMemObject(m);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void every_call(void **state)
{
    int host[N], out[N], pos = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Datatype h;
    cl_mem m = known_clmem(3);
    void *b = (void *)m;
    head_t before = head_of(m);
    (void)state;
    memset(host, 0, sizeof host);
    MPI_Type_contiguous(N, MPI_INT, &h);
    MPI_Type_commit(&h);
    MPI_Type_set_attr(h, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    REFUSED(MPI_Send(b, N, MPI_INT, rank, 2, MPI_COMM_WORLD), "MPI_Send");
    REFUSED(MPI_Isend(b, N, MPI_INT, rank, 2, MPI_COMM_WORLD, &r), "MPI_Isend");
    REFUSED(MPI_Ssend(b, 1, h, rank, 2, MPI_COMM_WORLD), "MPI_Ssend");
    REFUSED(MPI_Irecv(b, N, MPI_INT, rank, 2, MPI_COMM_WORLD, &r), "MPI_Irecv");
    REFUSED(MPI_Recv(b, 1, h, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    REFUSED(MPI_Sendrecv(host, N, MPI_INT, rank, 2, b, N, MPI_INT, rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
    REFUSED(MPI_Recv_init(b, N, MPI_INT, rank, 2, MPI_COMM_WORLD, &r), "MPI_Recv_init");
    REFUSED(MPI_Bcast(b, N, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    REFUSED(MPI_Allreduce(host, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    REFUSED(MPI_Pack(b, N, MPI_INT, out, (int)sizeof out, &pos, MPI_COMM_WORLD), "MPI_Pack");
    pos = 0;
    REFUSED(MPI_Unpack(host, (int)sizeof host, &pos, b, N, MPI_INT, MPI_COMM_WORLD), "MPI_Unpack");
    unchanged(m, &before);
    MPI_Type_free(&h);
    clReleaseMemObject(m);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void host_still_fine(void **state)
{
    int mine[N], got[N];
    cl_mem m = known_clmem(1);
    (void)state;
    for (int i = 0; i < N; i++) mine[i] = rank * 1000 + i;
    assert_int_equal(MPI_Sendrecv(mine, N, MPI_INT, peer, 3, got, N, MPI_INT, peer, 3, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
    for (int i = 0; i < N; i++) assert_int_equal(got[i], peer * 1000 + i);
    assert_int_equal(MPI_Allreduce(mine, got, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(got[0], 1000);
    clReleaseMemObject(m);
}

static void released_forgotten(void **state)
{
    cl_mem m = known_clmem(2);
    (void)state;
    assert_true(fx.be->is_live_handle(m));
    clReleaseMemObject(m); /* the destructor callback forgets it */
    clFinish(fx.qin);
    if (fx.be->is_live_handle(m)) fail_msg("a released cl_mem is still called live");
}

/* --fatal: one refused call under MPI_ERRORS_ARE_FATAL (never returns). */
static int fatal_run(void)
{
    cl_mem m = known_clmem(4);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Recv((void *)m, N, MPI_INT, rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "test_ocl_host_clmem: MPI_Recv returned under MPI_ERRORS_ARE_FATAL\n");
    return 1;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(issue_program),
        cmocka_unit_test(every_call),
        cmocka_unit_test(host_still_fine),
        cmocka_unit_test(released_forgotten),
    };
    fx_init_pair(&argc, &argv, &rank, &peer);
    if (argc > 1 && !strcmp(argv[1], "--fatal")) return fatal_run();
    return fx_end(MPIACC_TEST_RUN("test_ocl_host_clmem", tests, NULL, NULL));
}
