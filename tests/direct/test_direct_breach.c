#define _POSIX_C_SOURCE 200809L
/*
 * Breaches of the direct protocol's contract end with a word, never a hang
 * (2 ranks, OpenCL buffers, PoCL in CI; the communicator made direct by
 * the info key, or MPI_COMM_WORLD with --world under MPIACC_DIRECT=1).
 * CMakeLists.txt sets a small eager limit and small chunks.  The breaches
 * mpiacc mends (a device message met by a host receive, or the reverse)
 * are test_direct_mend's.
 *
 *   unreceived_at_free      device messages never received when their
 *                           communicator is freed: reported and drained,
 *                           the pipelined sender completes with MPI_ERR_TYPE
 *   --leave                 (alone) device messages never received at
 *                           MPI_Finalize: mpiacc reports and drains them, the
 *                           program exits 0 (MPICH aborted before:
 *                           "being freed has 1 unmatched message(s)", or its
 *                           dtp_ != NULL assertion for 256 KiB pipelined)
 */

#include "ocl_fixture.h"
#include "ocl_types.h"
#include "protocol/direct.h"

static int rank, use_world;
static MPI_Comm comm;
static MPI_Datatype dint;

enum { SMALL = 100, LARGE = 5000, HUGE = 65536 };

static cl_mem ints_buf(int n, int v0)
{
    int *h = malloc((size_t)n * sizeof *h);
    cl_mem m;
    for (int i = 0; i < n; i++) h[i] = v0 + i;
    m = fx_buf((size_t)n * sizeof *h, h);
    free(h);
    return m;
}

static int err_class(int err)
{
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
    return cls;
}

static void unreceived_at_free(void **s)
{
    MPI_Comm d;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    if (rank == 0) {
        cl_mem a = ints_buf(SMALL, 0), b = ints_buf(LARGE, 0);
        MPI_Request r[2];
        int errs[2];
        assert_int_equal(MPI_Isend(a, SMALL, dint, 1, 90, d, &r[0]), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(b, LARGE, dint, 1, 91, d, &r[1]), MPI_SUCCESS);
        errs[0] = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        errs[1] = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        MPI_Comm_free(&d);
        assert_int_equal(err_class(errs[0]), MPI_SUCCESS); /* eager: sent */
        assert_int_equal(err_class(errs[1]), MPI_ERR_TYPE);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    } else {
        MPI_Status st;
        /* both arrived (a probe keeps them), then the communicator goes */
        assert_int_equal(MPI_Probe(0, 90, d, &st), MPI_SUCCESS);
        assert_int_equal(MPI_Probe(0, 91, d, &st), MPI_SUCCESS);
        MPI_Comm_free(&d);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --leave: sends nobody receives, then MPI_Finalize. */
static int leave(void)
{
    if (rank == 0) {
        cl_mem a = ints_buf(SMALL, 0), b = ints_buf(HUGE, 0);
        MPI_Request r[2];
        MPI_Isend(a, SMALL, dint, 1, 80, comm, &r[0]);
        MPI_Isend(b, HUGE, dint, 1, 81, comm, &r[1]); /* 256 KiB, pipelined */
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    } else if (rank == 1) {
        /* Both messages are here before this rank finalizes (a probe keeps
         * a device message, unreceived): MPI_Finalize's drain can report
         * only messages that arrived (one still in flight when its
         * receiver finalizes is reported by its sender alone). */
        int seen[2] = {0, 0}, f;
        double t0 = MPI_Wtime();
        while ((!seen[0] || !seen[1]) && MPI_Wtime() - t0 < 60) {
            for (int i = 0; i < 2; i++)
                if (!seen[i] && MPI_Iprobe(0, 80 + i, comm, &f, MPI_STATUS_IGNORE) == MPI_SUCCESS) seen[i] = f;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unreceived_at_free),
    };
    int failed, leave_mode = 0;
    for (int i = 1; i < argc; i++) {
        use_world |= !strcmp(argv[i], "--world");
        leave_mode |= !strcmp(argv[i], "--leave");
    }
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
    MPI_Comm_set_name(comm, "breach_comm");
    dint = cl_type(MPI_INT, fx.qin, NULL);
    failed = leave_mode ? leave() : MPIACC_TEST_RUN("direct_breach", tests, NULL, NULL);
    MPI_Type_free(&dint);
    if (!use_world) MPI_Comm_free(&comm);
    fx_fini();
    return failed ? 1 : 0;
}
