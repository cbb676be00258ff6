#define _POSIX_C_SOURCE 200809L
/*
 * Probes on a direct communicator see device messages (2 ranks, OpenCL
 * buffers, PoCL in CI; the communicator made direct by the info key, or
 * MPI_COMM_WORLD with --world under MPIACC_DIRECT=1).  CMakeLists.txt sets
 * a small eager limit and small chunks, so messages of 100 ints are eager
 * and of 5000 ints pipelined (many chunks).  Checked: MPI_Probe /
 * MPI_Iprobe report the source, the tag and the payload's count
 * (MPI_Get_count with the element type), with wildcards, without taking
 * the message (probing twice sees the same one; the receive gets it, in
 * order); host and device messages on the same communicator are each
 * seen; MPI_Mprobe + MPI_Mrecv and MPI_Improbe + MPI_Imrecv receive device
 * messages into device buffers, and into host buffers (mpiacc unpacks
 * them there), eager and pipelined.  Before, the blocking probes hung:
 * MPIACC_TEST_WATCHDOG and the CTest timeout bound every run.
 */
#include "ocl_fixture.h"
#include "ocl_types.h"
#include "protocol/direct.h"

static int rank, use_world;
static MPI_Comm comm;
static MPI_Datatype dint; /* MPI_INT tagged as an OpenCL buffer */

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

static void check_host(const int *h, int n, int v0)
{
    for (int i = 0; i < n; i++)
        if (h[i] != v0 + i) fail_msg("rank %d: int %d is %d, expected %d", rank, i, h[i], v0 + i);
}

static void check_dev(cl_mem m, int n, int v0)
{
    int *h = malloc((size_t)n * sizeof *h);
    fx_read(m, (size_t)n * sizeof *h, h);
    check_host(h, n, v0);
    free(h);
}

/* rank 0 sends device messages of n[i] ints (values v0[i] + k) with tags[i] */
static void send_all(int k, const int *n, const int *v0, const int *tags)
{
    MPI_Request r[8];
    cl_mem b[8];
    for (int i = 0; i < k; i++) {
        b[i] = ints_buf(n[i], v0[i]);
        assert_int_equal(MPI_Isend(b[i], n[i], dint, 1, tags[i], comm, &r[i]), MPI_SUCCESS);
    }
    assert_int_equal(MPI_Waitall(k, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < k; i++) clReleaseMemObject(b[i]);
}

static void expect_status(const MPI_Status *st, int source, int tag, int count)
{
    int c = -1;
    assert_int_equal(st->MPI_SOURCE, source);
    assert_int_equal(st->MPI_TAG, tag);
    assert_int_equal(MPI_Get_count(st, dint, &c), MPI_SUCCESS);
    assert_int_equal(c, count);
    assert_int_equal(MPI_Get_count(st, MPI_INT, &c), MPI_SUCCESS);
    assert_int_equal(c, count);
}

/* Probe (wildcards), probe again, receive into a buffer sized by the count. */
static void probe_then_receive(void **s)
{
    const int n[4] = {SMALL, LARGE, SMALL + 1, LARGE + 3}, v0[4] = {1000, 2000, 3000, 4000}, tags[4] = {5, 5, 6, 5};
    if (rank == 0) {
        send_all(4, n, v0, tags);
    } else {
        for (int i = 0; i < 4; i++) {
            MPI_Status st, st2;
            int count = -1, flag = 0;
            cl_mem b;
            if (i % 2) {
                assert_int_equal(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st), MPI_SUCCESS);
            } else {
                while (!flag) assert_int_equal(MPI_Iprobe(0, MPI_ANY_TAG, comm, &flag, &st), MPI_SUCCESS);
            }
            expect_status(&st, 0, tags[i], n[i]);
            /* not taken: seen again */
            assert_int_equal(MPI_Probe(0, tags[i], comm, &st2), MPI_SUCCESS);
            expect_status(&st2, 0, tags[i], n[i]);
            MPI_Get_count(&st, dint, &count);
            b = ints_buf(count, -1);
            assert_int_equal(MPI_Recv(b, count, dint, st.MPI_SOURCE, st.MPI_TAG, comm, &st2), MPI_SUCCESS);
            expect_status(&st2, 0, tags[i], n[i]);
            check_dev(b, n[i], v0[i]);
            clReleaseMemObject(b);
        }
    }
    MPI_Barrier(comm);
}

/* Host and device messages of the same pair: each class seen and received. */
static void host_and_device(void **s)
{
    int hv[4] = {7, 8, 9, 10}, hg[4];
    if (rank == 0) {
        const int n[1] = {SMALL}, v0[1] = {50}, tags[1] = {21};
        assert_int_equal(MPI_Send(hv, 4, MPI_INT, 1, 20, comm), MPI_SUCCESS);
        send_all(1, n, v0, tags);
    } else {
        MPI_Status st;
        cl_mem b = ints_buf(SMALL, -1);
        int seen_host = 0, seen_dev = 0;
        while (!seen_host || !seen_dev) {
            assert_int_equal(MPI_Probe(0, MPI_ANY_TAG, comm, &st), MPI_SUCCESS);
            if (st.MPI_TAG == 20) {
                expect_status(&st, 0, 20, 4);
                assert_int_equal(MPI_Recv(hg, 4, MPI_INT, 0, 20, comm, &st), MPI_SUCCESS);
                assert_memory_equal(hg, hv, sizeof hv);
                seen_host++;
            } else {
                expect_status(&st, 0, 21, SMALL);
                assert_int_equal(MPI_Recv(b, SMALL, dint, 0, 21, comm, &st), MPI_SUCCESS);
                check_dev(b, SMALL, 50);
                seen_dev++;
            }
        }
        assert_int_equal(seen_host, 1);
        assert_int_equal(seen_dev, 1);
        clReleaseMemObject(b);
    }
    MPI_Barrier(comm);
}

/* Matched probes: MPI_Mrecv / MPI_Imrecv into device and host buffers. */
static void matched_probes(void **s)
{
    const int n[4] = {SMALL, LARGE, SMALL + 2, LARGE + 1}, v0[4] = {10, 20, 30, 40}, tags[4] = {31, 32, 33, 34};
    if (rank == 0) {
        send_all(4, n, v0, tags);
    } else {
        for (int i = 0; i < 4; i++) {
            MPI_Message m = MPI_MESSAGE_NULL;
            MPI_Status st;
            MPI_Request r;
            int flag = 0, count = -1, into_host = i >= 2;
            if (i % 2) {
                assert_int_equal(MPI_Mprobe(0, tags[i], comm, &m, &st), MPI_SUCCESS);
            } else {
                while (!flag) assert_int_equal(MPI_Improbe(MPI_ANY_SOURCE, tags[i], comm, &flag, &m, &st), MPI_SUCCESS);
            }
            expect_status(&st, 0, tags[i], n[i]);
            assert_true(m != MPI_MESSAGE_NULL);
            /* the message belongs to the handle: a probe no longer sees it */
            flag = 1;
            assert_int_equal(MPI_Iprobe(0, tags[i], comm, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            assert_false(flag);
            MPI_Get_count(&st, dint, &count);
            if (into_host) {
                int *h = malloc((size_t)count * sizeof *h);
                if (i % 2) assert_int_equal(MPI_Mrecv(h, count, MPI_INT, &m, &st), MPI_SUCCESS);
                else {
                    assert_int_equal(MPI_Imrecv(h, count, MPI_INT, &m, &r), MPI_SUCCESS);
                    assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
                }
                expect_status(&st, 0, tags[i], n[i]);
                check_host(h, n[i], v0[i]);
                free(h);
            } else {
                cl_mem b = ints_buf(count, -1);
                if (i % 2) assert_int_equal(MPI_Mrecv(b, count, dint, &m, &st), MPI_SUCCESS);
                else {
                    assert_int_equal(MPI_Imrecv(b, count, dint, &m, &r), MPI_SUCCESS);
                    assert_int_equal(MPI_Wait(&r, &st), MPI_SUCCESS);
                }
                expect_status(&st, 0, tags[i], n[i]);
                check_dev(b, n[i], v0[i]);
                clReleaseMemObject(b);
            }
            assert_true(m == MPI_MESSAGE_NULL);
        }
    }
    MPI_Barrier(comm);
}

/* Host messages and MPI_PROC_NULL keep MPI's own behaviour. */
static void host_matched_and_proc_null(void **s)
{
    MPI_Status st;
    MPI_Message m;
    int flag = 0, v = 5, g = 0;
    assert_int_equal(MPI_Probe(MPI_PROC_NULL, 0, comm, &st), MPI_SUCCESS);
    assert_int_equal(st.MPI_SOURCE, MPI_PROC_NULL);
    assert_int_equal(MPI_Improbe(MPI_PROC_NULL, 0, comm, &flag, &m, &st), MPI_SUCCESS);
    assert_true(flag && m == MPI_MESSAGE_NO_PROC);
    if (rank == 0) {
        assert_int_equal(MPI_Send(&v, 1, MPI_INT, 1, 40, comm), MPI_SUCCESS);
    } else {
        assert_int_equal(MPI_Mprobe(0, 40, comm, &m, &st), MPI_SUCCESS);
        assert_int_equal(MPI_Mrecv(&g, 1, MPI_INT, &m, &st), MPI_SUCCESS);
        assert_int_equal(g, 5);
    }
    MPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(probe_then_receive),
        cmocka_unit_test(host_and_device),
        cmocka_unit_test(matched_probes),
        cmocka_unit_test(host_matched_and_proc_null),
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
    dint = cl_type(MPI_INT, fx.qin, NULL);
    failed = MPIACC_TEST_RUN("direct_probe", tests, NULL, NULL);
    MPI_Type_free(&dint);
    if (!use_world) MPI_Comm_free(&comm);
    fx_fini();
    return failed ? 1 : 0;
}
