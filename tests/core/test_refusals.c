/* SPDX-License-Identifier: BSD-3-Clause */
/* Every call mpiacc refuses with device buffers (refuse_cases.h, generated
 * with the wrappers from src/interpose/mpi_calls.txt at build time): with a
 * datatype tagged for the pool (MPIACC_BUF_HOST with an MPIACC_EVENT flag,
 * what the CPU backend takes; the CUDA and OpenCL kinds take the same path) each fails
 * with MPI_ERR_TYPE naming the call, through the window's, file's or
 * communicator's error handler (MPI_COMM_SELF's for calls without one),
 * and nothing reaches MPI; host datatypes go straight to MPI.  One rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpiacc.h"
#include "testutil.h"

static int ready = 1;
static int calls_on[4]; /* none (MPI_COMM_SELF), comm, win, file */
static int last_code;

static void on_comm(MPI_Comm *c, int *code, ...)
{
    calls_on[*c == MPI_COMM_SELF ? 0 : 1]++;
    last_code = *code;
}
static void on_win(MPI_Win *w, int *code, ...)
{
    (void)w;
    calls_on[2]++;
    last_code = *code;
}
static void on_file(MPI_File *f, int *code, ...)
{
    (void)f;
    calls_on[3]++;
    last_code = *code;
}

static int where_index(const char *w)
{
    return !strcmp(w, "none") ? 0 : !strcmp(w, "comm") ? 1 : !strcmp(w, "win") ? 2 : 3;
}

static void refusals(void **state)
{
    (void)state;
    static char buf[4096];
    MPI_Datatype T, H = MPI_INT;
    MPI_Win win;
    MPI_File fh;
    MPI_Comm comm;
    MPI_Errhandler ec, ew, ef;
    MPI_Status st;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Aint pos = 0, disp = 0;
    MPI_Offset off = 0;
    int cnt = 1, bad = 0, ncases = 0;
    MPI_Count ccnt = 1, cpos = 0;
    char path[256];
    (void)H;
    (void)off;

    MPI_Type_dup(MPI_INT, &T);
    MPI_Type_set_attr(T, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(T, MPIACC_EVENT, &ready);
    MPI_Comm_dup(MPI_COMM_SELF, &comm);
    MPI_Comm_create_errhandler(on_comm, &ec);
    MPI_Win_create_errhandler(on_win, &ew);
    MPI_File_create_errhandler(on_file, &ef);
    MPI_Comm_set_errhandler(comm, ec);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, ec);
    assert_int_equal(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win), MPI_SUCCESS);
    MPI_Win_set_errhandler(win, ew);
    snprintf(path, sizeof path, "%s/mpiacc_refusals_%d.dat", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    assert_int_equal(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                   MPI_INFO_NULL, &fh),
                     MPI_SUCCESS);
    MPI_File_set_errhandler(fh, ef);

#define CASE(name_, where_, call_)                                                                   \
    do {                                                                                             \
        int before[4], rc, cls = -1, len = 0, w = where_index(#where_);                              \
        char msg[MPI_MAX_ERROR_STRING] = "";                                                         \
        memcpy(before, calls_on, sizeof before);                                                     \
        last_code = MPI_SUCCESS;                                                                     \
        rc = (call_);                                                                                \
        if (rc != MPI_SUCCESS) {                                                                     \
            MPI_Error_class(rc, &cls);                                                               \
            MPI_Error_string(rc, msg, &len);                                                         \
        }                                                                                            \
        ncases++;                                                                                    \
        if (cls != MPI_ERR_TYPE || !strstr(msg, #name_ "(") || calls_on[w] != before[w] + 1 ||       \
            last_code != rc) {                                                                       \
            bad++;                                                                                   \
            fprintf(stderr, "%s: rc %d class %d, handler %s called %d times, message \"%s\"\n", #name_, \
                    rc, cls, #where_, calls_on[w] - before[w], msg);                                 \
        }                                                                                            \
    } while (0);
#include "refuse_cases.h"
#undef CASE
    printf("%d refused calls checked\n", ncases);
    assert_int_equal(bad, 0);
    assert_true(ncases > 70);

    /* Host datatypes go to MPI. */
    {
        int v = 42, out = 0;
        MPI_Win_fence(0, win);
        assert_int_equal(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_SUCCESS);
        MPI_Win_fence(0, win);
        memcpy(&out, buf, sizeof out);
        assert_int_equal(out, 42);
        assert_int_equal(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, &st), MPI_SUCCESS);
        out = 0;
        assert_int_equal(MPI_File_read_at(fh, 0, &out, 1, MPI_INT, &st), MPI_SUCCESS);
        assert_int_equal(out, 42);
        pos = 0;
        assert_int_equal(MPI_Pack_external("external32", &v, 1, MPI_INT, buf, sizeof buf, &pos), MPI_SUCCESS);
        assert_int_equal((int)pos, 4);
    }
    /* A host-tagged type without an event is host memory: passed through. */
    {
        MPI_Datatype h;
        int v = 7, out = 0;
        MPI_Type_dup(MPI_INT, &h);
        MPI_Type_set_attr(h, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
        assert_int_equal(MPI_File_write_at(fh, 0, &v, 1, h, &st), MPI_SUCCESS);
        assert_int_equal(MPI_File_read_at(fh, 0, &out, 1, h, &st), MPI_SUCCESS);
        assert_int_equal(out, 7);
        MPI_Type_free(&h);
    }
    MPI_File_close(&fh);
    MPI_Win_free(&win);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&ec);
    MPI_Errhandler_free(&ew);
    MPI_Errhandler_free(&ef);
    MPI_Comm_free(&comm);
    MPI_Type_free(&T);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(refusals)};
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: %s\nCalls every function mpiacc refuses with device buffers (one rank).\n", argv[0]);
        return 0;
    }
    MPI_Init(&argc, &argv);
    return mpiacc_test_end(MPIACC_TEST_RUN("refusals", tests, NULL, NULL));
}
