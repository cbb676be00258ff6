#define _POSIX_C_SOURCE 200809L
/*
 * Breaches of the direct protocol's contract that mpiacc mends: both
 * operations complete, with the right bytes or an MPI error class (2
 * ranks, OpenCL buffers, PoCL in CI; the communicator made direct by the
 * info key, or MPI_COMM_WORLD with --world under MPIACC_DIRECT=1).
 * CMakeLists.txt sets MPIACC_DIRECT_WARN=1, a 2 KiB eager limit and small
 * chunks: 100 ints travel eagerly, 5000 pipelined.  Before, each case hung.
 *
 *   host_recv_takes_device  a device send met by a blocking host MPI_Recv:
 *                           after MPIACC_DIRECT_WARN the host buffer gets
 *                           the device message (eager and pipelined), one
 *                           warning naming peer, tag, communicator
 *   host_recv_takes_late_device  ... also when it arrives after the first
 *                           MPIACC_DIRECT_WARN seconds of the wait
 *   host_recv_truncated     the same, longer than the host buffer: the
 *                           part that fits, MPI_ERR_TRUNCATE on the
 *                           receiver and on the pipelined sender; a
 *                           payload that is not whole elements: MPI_ERR_TYPE
 *   device_recv_takes_host  a host send met by a blocking device MPI_Recv:
 *                           received through host staging (small, large,
 *                           truncated), a warning; the IN_FLIGHT -->
 *                           IN_FLIGHT arrow counted (mpiacc_rp_transitions)
 *   device_wait_takes_host  the same through MPI_Irecv + MPI_Wait and
 *                           MPI_Waitall
 *   device_waitany_takes_host  ... and MPI_Waitsome, MPI_Waitany
 *   host_irecv_warns        a host MPI_Irecv that a device message cannot
 *                           match: MPI_Wait warns once after
 *                           MPIACC_DIRECT_WARN, then gets the host message
 */
#include <unistd.h>

#include "ocl_fixture.h"
#include "stderr_capture.h"
#include "ocl_types.h"
#include "protocol/direct.h"

static int rank, use_world;
static MPI_Comm comm;
static MPI_Datatype dint;

enum { SMALL = 100, LARGE = 5000 };

static cl_mem ints_buf(int n, int v0)
{
    int *h = malloc((size_t)n * sizeof *h);
    cl_mem m;
    for (int i = 0; i < n; i++) h[i] = v0 + i;
    m = fx_buf((size_t)n * sizeof *h, h);
    free(h);
    return m;
}

static int *ints_host(int n, int v0)
{
    int *h = malloc((size_t)n * sizeof *h);
    for (int i = 0; i < n; i++) h[i] = v0 + i;
    return h;
}

static void check(const int *h, int n, int v0, const char *what)
{
    for (int i = 0; i < n; i++)
        if (h[i] != v0 + i) fail_msg("%s: int %d is %d, expected %d", what, i, h[i], v0 + i);
}

static void check_dev(cl_mem b, int n, int v0, const char *what)
{
    int *h = calloc((size_t)n, sizeof *h);
    fx_read(b, (size_t)n * sizeof *h, h);
    check(h, n, v0, what);
    free(h);
}

static int err_class(int err)
{
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
    return cls;
}

static void expect_text(const char *text, const char *a, const char *b)
{
    if (!strstr(text, a) || !strstr(text, b) || !strstr(text, "breach_comm") || !strstr(text, "Direct protocol"))
        fail_msg("no warning with \"%s\", \"%s\", the communicator and the contract in: %s", a, b, text);
}

static long tr(int from, int to) { return atomic_load(&mpiacc_rp_transitions[from][to]); }

static void host_recv_takes_device(void **s)
{
    if (rank == 0) {
        cl_mem a = ints_buf(SMALL, 7), b = ints_buf(LARGE, 1000);
        assert_int_equal(MPI_Send(a, SMALL, dint, 1, 60, comm), MPI_SUCCESS);
        assert_int_equal(MPI_Send(b, LARGE, dint, 1, 61, comm), MPI_SUCCESS); /* pipelined: waits for FIN */
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    } else {
        stderr_capture_t cap;
        char *text;
        int *h = calloc(LARGE, sizeof *h), n = 0;
        MPI_Status st;
        stderr_capture_begin(&cap);
        assert_int_equal(MPI_Recv(h, SMALL, MPI_INT, 0, 60, comm, &st), MPI_SUCCESS);
        text = stderr_capture_end(&cap);
        check(h, SMALL, 7, "eager into host");
        assert_int_equal(st.MPI_SOURCE, 0);
        assert_int_equal(st.MPI_TAG, 60);
        MPI_Get_count(&st, MPI_INT, &n);
        assert_int_equal(n, SMALL);
        expect_text(text, "host MPI_Recv (source 0, tag 60)", "device message from rank 0 tag 60");
        if (!strstr(text, "into the host buffer")) fail_msg("the warning does not say what mpiacc did: %s", text);
        free(text);
        assert_int_equal(MPI_Recv(h, LARGE, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st), MPI_SUCCESS);
        check(h, LARGE, 1000, "pipelined into host");
        assert_int_equal(st.MPI_TAG, 61);
        MPI_Get_count(&st, MPI_INT, &n);
        assert_int_equal(n, LARGE);
        free(h);
    }
    MPI_Barrier(comm);
}

/* The device message comes late (after the first MPIACC_DIRECT_WARN
 * period of the host receive's wait): taken all the same. */
static void host_recv_takes_late_device(void **s)
{
    if (rank == 0) {
        cl_mem a = ints_buf(SMALL, 50);
        sleep(3);
        assert_int_equal(MPI_Send(a, SMALL, dint, 1, 65, comm), MPI_SUCCESS);
        clReleaseMemObject(a);
    } else {
        int *h = calloc(SMALL, sizeof *h), n = 0;
        MPI_Status st;
        assert_int_equal(MPI_Recv(h, SMALL, MPI_INT, 0, 65, comm, &st), MPI_SUCCESS);
        check(h, SMALL, 50, "late eager into host");
        MPI_Get_count(&st, MPI_INT, &n);
        assert_int_equal(n, SMALL);
        free(h);
    }
    MPI_Barrier(comm);
}

static void host_recv_truncated(void **s)
{
    if (rank == 0) {
        cl_mem a = ints_buf(SMALL, 3), b = ints_buf(LARGE, 5), c = ints_buf(SMALL, 0);
        assert_int_equal(MPI_Send(a, SMALL, dint, 1, 62, comm), MPI_SUCCESS); /* eager: MPI has it */
        assert_int_equal(err_class(MPI_Send(b, LARGE, dint, 1, 63, comm)), MPI_ERR_TRUNCATE);
        assert_int_equal(MPI_Send(c, 5, dint, 1, 64, comm), MPI_SUCCESS); /* 20 bytes */
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseMemObject(c);
    } else {
        int *h = calloc(LARGE, sizeof *h);
        double d[3] = {0, 0, 0};
        MPI_Status st;
        assert_int_equal(err_class(MPI_Recv(h, 10, MPI_INT, 0, 62, comm, &st)), MPI_ERR_TRUNCATE);
        check(h, 10, 3, "eager, truncated");
        assert_int_equal(err_class(MPI_Recv(h, 20, MPI_INT, 0, 63, comm, &st)), MPI_ERR_TRUNCATE);
        check(h, 20, 5, "pipelined, truncated");
        /* 20 bytes into doubles: not whole elements */
        assert_int_equal(err_class(MPI_Recv(d, 3, MPI_DOUBLE, 0, 64, comm, &st)), MPI_ERR_TYPE);
        free(h);
    }
    MPI_Barrier(comm);
}

/* Rank 0 sends host messages (SMALL ints from 11, LARGE from 2000, LARGE
 * from 0 with tag+2); rank 1 receives them into device buffers with
 * recv(): SMALL and LARGE in full, the third truncated to SMALL. */
typedef void (*recv_fn)(cl_mem b[3], int tag, int *errs);

/* What a recv_fn found wrong (checked once stderr is no longer captured). */
static char problem[256];
#define EXPECT(cond_, ...)                                                                 \
    do {                                                                                   \
        if (!(cond_) && !problem[0]) snprintf(problem, sizeof problem, __VA_ARGS__);       \
    } while (0)

static void host_to_device(int tag, recv_fn recv, const char *call)
{
    if (rank == 0) {
        int *a = ints_host(SMALL, 11), *b = ints_host(LARGE, 2000), *c = ints_host(LARGE, 0);
        /* host sends complete as MPI's own: the large ones once received */
        assert_int_equal(MPI_Send(a, SMALL, MPI_INT, 1, tag, comm), MPI_SUCCESS);
        assert_int_equal(MPI_Send(b, LARGE, MPI_INT, 1, tag + 1, comm), MPI_SUCCESS);
        assert_int_equal(MPI_Send(c, LARGE, MPI_INT, 1, tag + 2, comm), MPI_SUCCESS);
        free(a);
        free(b);
        free(c);
    } else {
        stderr_capture_t cap;
        char *text, want[96];
        cl_mem b[3] = {ints_buf(SMALL, -1), ints_buf(LARGE, -1), ints_buf(SMALL, -1)};
        int errs[3] = {-1, -1, -1};
        long arrow = tr(MPIACC_RP_IN_FLIGHT, MPIACC_RP_IN_FLIGHT);
        problem[0] = '\0';
        stderr_capture_begin(&cap);
        recv(b, tag, errs);
        text = stderr_capture_end(&cap);
        if (problem[0]) fail_msg("%s: %s", call, problem);
        assert_int_equal(err_class(errs[0]), MPI_SUCCESS);
        assert_int_equal(err_class(errs[1]), MPI_SUCCESS);
        assert_int_equal(err_class(errs[2]), MPI_ERR_TRUNCATE);
        check_dev(b[0], SMALL, 11, call);
        check_dev(b[1], LARGE, 2000, call);
        check_dev(b[2], SMALL, 0, call); /* the part that fits */
        snprintf(want, sizeof want, "device receive (source 0, tag %d)", tag);
        expect_text(text, want, "host message from rank 0 tag");
        if (!strstr(text, "into the device buffer")) fail_msg("the warning does not say what mpiacc did: %s", text);
        free(text);
        /* each receive moved from the direct receive to the staged one */
        assert_true(tr(MPIACC_RP_IN_FLIGHT, MPIACC_RP_IN_FLIGHT) >= arrow + 3);
        for (int i = 0; i < 3; i++) clReleaseMemObject(b[i]);
    }
    MPI_Barrier(comm);
}

static void by_recv(cl_mem b[3], int tag, int *errs)
{
    MPI_Status st;
    int n = 0;
    errs[0] = MPI_Recv(b[0], SMALL, dint, 0, tag, comm, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(n == SMALL && st.MPI_TAG == tag, "count %d tag %d", n, st.MPI_TAG);
    errs[1] = MPI_Recv(b[1], LARGE, dint, MPI_ANY_SOURCE, tag + 1, comm, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(n == LARGE && st.MPI_SOURCE == 0, "count %d source %d", n, st.MPI_SOURCE);
    errs[2] = MPI_Recv(b[2], SMALL, dint, 0, tag + 2, comm, &st);
}

static void device_recv_takes_host(void **s)
{
    host_to_device(70, by_recv, "MPI_Recv");
}

static void by_wait(cl_mem b[3], int tag, int *errs)
{
    MPI_Request r[3];
    MPI_Status st[3];
    int rc;
    EXPECT(MPI_Irecv(b[0], SMALL, dint, 0, tag, comm, &r[0]) == MPI_SUCCESS, "MPI_Irecv failed");
    errs[0] = MPI_Wait(&r[0], &st[0]);
    EXPECT(MPI_Irecv(b[1], LARGE, dint, 0, tag + 1, comm, &r[1]) == MPI_SUCCESS, "MPI_Irecv failed");
    EXPECT(MPI_Irecv(b[2], SMALL, dint, 0, tag + 2, comm, &r[2]) == MPI_SUCCESS, "MPI_Irecv failed");
    rc = MPI_Waitall(2, &r[1], &st[1]);
    if (rc == MPI_SUCCESS) {
        errs[1] = errs[2] = MPI_SUCCESS;
    } else {
        EXPECT(err_class(rc) == MPI_ERR_IN_STATUS, "MPI_Waitall returned class %d", err_class(rc));
        errs[1] = st[1].MPI_ERROR;
        errs[2] = st[2].MPI_ERROR;
    }
    EXPECT(r[1] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL, "MPI_Waitall left a request");
}

static void device_wait_takes_host(void **s)
{
    host_to_device(75, by_wait, "MPI_Wait / MPI_Waitall");
}

static void by_any_some(cl_mem b[3], int tag, int *errs)
{
    MPI_Request r[3];
    MPI_Status st[3];
    int nout = 0, idx[3] = {-1, -1, -1}, rc;
    EXPECT(MPI_Irecv(b[0], SMALL, dint, 0, tag, comm, &r[0]) == MPI_SUCCESS, "MPI_Irecv failed");
    rc = MPI_Waitsome(1, &r[0], &nout, idx, st);
    EXPECT(nout == 1 && idx[0] == 0, "MPI_Waitsome: %d completed", nout);
    errs[0] = rc == MPI_SUCCESS ? MPI_SUCCESS : st[0].MPI_ERROR;
    EXPECT(MPI_Irecv(b[1], LARGE, dint, 0, tag + 1, comm, &r[1]) == MPI_SUCCESS, "MPI_Irecv failed");
    EXPECT(MPI_Irecv(b[2], SMALL, dint, 0, tag + 2, comm, &r[2]) == MPI_SUCCESS, "MPI_Irecv failed");
    for (int k = 0; k < 2; k++) {
        int i = -1;
        rc = MPI_Waitany(2, &r[1], &i, &st[0]);
        EXPECT(i == 0 || i == 1, "MPI_Waitany: index %d", i);
        if (i == 0 || i == 1) errs[1 + i] = rc;
    }
}

static void device_waitany_takes_host(void **s)
{
    host_to_device(85, by_any_some, "MPI_Waitsome / MPI_Waitany");
}

static void host_irecv_warns(void **s)
{
    if (rank == 0) {
        cl_mem b = ints_buf(SMALL, 7);
        int v = 42;
        assert_int_equal(MPI_Send(b, SMALL, dint, 1, 80, comm), MPI_SUCCESS); /* eager: done at once */
        sleep(3);
        assert_int_equal(MPI_Send(&v, 1, MPI_INT, 1, 80, comm), MPI_SUCCESS);
        assert_int_equal(MPI_Send(&v, 1, MPI_INT, 1, 81, comm), MPI_SUCCESS);
        clReleaseMemObject(b);
    } else {
        stderr_capture_t cap;
        char *text;
        int v = 0, w = 0;
        cl_mem b = ints_buf(SMALL, -1);
        MPI_Request r;
        MPI_Status st;
        stderr_capture_begin(&cap);
        assert_int_equal(MPI_Irecv(&v, 1, MPI_INT, 0, 80, comm, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
        text = stderr_capture_end(&cap);
        assert_int_equal(v, 42);
        expect_text(text, "host MPI_Irecv (source 0, tag 80)", "device message from rank 0 tag 80");
        free(text);
        /* the device message is still there for a device receive */
        assert_int_equal(MPI_Recv(b, SMALL, dint, 0, 80, comm, &st), MPI_SUCCESS);
        check_dev(b, SMALL, 7, "device message after the warning");
        /* nothing suspicious: a plain host Irecv, no warning */
        stderr_capture_begin(&cap);
        assert_int_equal(MPI_Irecv(&w, 1, MPI_INT, 0, 81, comm, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(1, &r, &st), MPI_SUCCESS);
        text = stderr_capture_end(&cap);
        assert_int_equal(w, 42);
        if (strstr(text, "direct protocol")) fail_msg("a warning without a breach: %s", text);
        free(text);
        clReleaseMemObject(b);
    }
    MPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_recv_takes_device), cmocka_unit_test(host_recv_takes_late_device),
        cmocka_unit_test(host_recv_truncated),
        cmocka_unit_test(device_recv_takes_host), cmocka_unit_test(device_wait_takes_host),
        cmocka_unit_test(device_waitany_takes_host), cmocka_unit_test(host_irecv_warns),
    };
    int failed;
    for (int i = 1; i < argc; i++) use_world |= !strcmp(argv[i], "--world");
    fx_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (use_world) {
        comm = MPI_COMM_WORLD;
    } else {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
        MPI_Info_free(&info);
    }
    if (!mpiacc_proto_comm_lookup(comm)) {
        fprintf(stderr, "the test communicator is not direct\n");
        return 1;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* MPI_Waitall's MPI_ERR_IN_STATUS is raised there (MPICH: no communicator) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_name(comm, "breach_comm");
    dint = cl_type(MPI_INT, fx.qin, NULL);
    failed = MPIACC_TEST_RUN("direct_mend", tests, NULL, NULL);
    MPI_Type_free(&dint);
    if (!use_world) MPI_Comm_free(&comm);
    fx_fini();
    return failed ? 1 : 0;
}
