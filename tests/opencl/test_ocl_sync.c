/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/* OpenCL backend: dependency semantics (in-order marker, out-of-order queue,
 * MPIACC_EVENT), the error table, device listing and the build of the pack
 * program (traverse.h + kernels.cl) — calls the backend table directly. */
#include "ocl_fixture.h"
#include "opencl/ocl.h"
#include "opencl/ocl_testhooks.h"

#define N 4096 /* ints */

static mpiacc_pack_type_t contig_type(size_t bytes)
{
    mpiacc_pack_type_t t;
    memset(&t, 0, sizeof t);
    t.size = t.extent = t.true_ub = t.data_ub = (MPI_Count)bytes;
    t.contiguous = 1;
    t.unit = (MPI_Count)bytes;
    return t;
}

/* Starts a pack of the N ints of buf into host and returns the handle. */
static void *start_pack(const mpiacc_attrs_t *a, void *dep, cl_mem buf, mpiacc_pack_type_t *t, int *host)
{
    mpiacc_xfer_desc_t d = {.buf = buf, .type = t, .count = 1, .first = 0, .last = N * 4, .host = host};
    void *x = NULL;
    assert_int_equal(fx.be->pack(a, dep, &d, &x), MPI_SUCCESS);
    assert_non_null(x);
    return x;
}

static void check_all(const int *v, int want)
{
    for (int i = 0; i < N; i++)
        if (v[i] != want) fail_msg("element %d is %d, expected %d", i, v[i], want);
}

/* A test's end: the work on q done, then gate, buf, other (NULL: none) and
 * host released. */
static void finish(cl_command_queue q, cl_event gate, cl_mem buf, cl_mem other, int *host)
{
    clFinish(q);
    clReleaseEvent(gate);
    clReleaseMemObject(buf);
    if (other) clReleaseMemObject(other);
    free(host);
}

/* A kernel writing the buffer, enqueued before the call on an in-order
 * queue (held back by a user event): the pack waits for it and sees its
 * values. */
static void inorder_waits_for_prior_work(void **state)
{
    mpiacc_pack_type_t t = contig_type(N * 4);
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    cl_mem buf = fx_buf(N * 4, NULL);
    cl_int e;
    cl_event gate = clCreateUserEvent(fx.ctx, &e);
    int *host = calloc(N, 4);
    void *dep = NULL, *x;

    fx_fill(fx.qin, buf, N, 1, 0, NULL, NULL);
    fx_fill(fx.qin, buf, N, 7, 20000, gate, NULL); /* slow, and gated */
    assert_int_equal(fx.be->capture(&a, buf, &dep), MPI_SUCCESS);
    assert_non_null(dep);
    x = start_pack(&a, dep, buf, &t, host);
    fx_stays_pending(dep, 0.05);
    fx_stays_pending(x, 0.05);
    clSetUserEventStatus(gate, CL_COMPLETE);
    fx_wait(x);
    fx_wait(dep);
    check_all(host, 7);
    finish(fx.qin, gate, buf, NULL, host);
}

/* Work enqueued after the call does not delay the send. */
static void inorder_ignores_later_work(void **state)
{
    mpiacc_pack_type_t t = contig_type(N * 4);
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    cl_mem buf = fx_buf(N * 4, NULL), other = fx_buf(N * 4, NULL);
    cl_int e;
    cl_event gate = clCreateUserEvent(fx.ctx, &e);
    int *host = calloc(N, 4);
    void *dep = NULL, *x;

    fx_fill(fx.qin, buf, N, 3, 0, NULL, NULL);
    assert_int_equal(fx.be->capture(&a, buf, &dep), MPI_SUCCESS);
    fx_fill(fx.qin, other, N, 9, 0, gate, NULL); /* after the call: blocked */
    x = start_pack(&a, dep, buf, &t, host);
    fx_wait(x);
    fx_wait(dep);
    check_all(host, 3);
    clSetUserEventStatus(gate, CL_COMPLETE);
    finish(fx.qin, gate, buf, other, host);
}

/* Out-of-order queue: no implied dependency, the pack runs while earlier
 * (blocked) work on the queue is pending. */
static void outoforder_no_dependency(void **state)
{
    mpiacc_pack_type_t t = contig_type(N * 4);
    mpiacc_attrs_t a = fx_attrs(fx.qooo);
    cl_mem buf, other;
    cl_int e;
    cl_event gate;
    int *host = calloc(N, 4);
    void *dep = (void *)1, *x;

    if (!fx.qooo) skip();
    buf = fx_buf(N * 4, NULL);
    other = fx_buf(N * 4, NULL);
    gate = clCreateUserEvent(fx.ctx, &e);
    fx_fill(fx.qin, buf, N, 5, 0, NULL, NULL);
    clFinish(fx.qin);
    fx_fill(fx.qooo, other, N, 9, 0, gate, NULL);
    assert_int_equal(fx.be->capture(&a, buf, &dep), MPI_SUCCESS);
    assert_null(dep);
    x = start_pack(&a, dep, buf, &t, host);
    fx_wait(x);
    check_all(host, 5);
    clSetUserEventStatus(gate, CL_COMPLETE);
    finish(fx.qooo, gate, buf, other, host);
}

/* MPIACC_EVENT on an out-of-order queue: the pack waits for the event. */
static void event_attribute_dependency(void **state)
{
    mpiacc_pack_type_t t = contig_type(N * 4);
    mpiacc_attrs_t a = fx_attrs(fx.qooo ? fx.qooo : fx.qin);
    cl_mem buf = fx_buf(N * 4, NULL);
    cl_int e;
    cl_event gate = clCreateUserEvent(fx.ctx, &e), filled;
    int *host = calloc(N, 4);
    void *dep = NULL, *x;

    fx_fill(fx.qin, buf, N, 11, 0, gate, &filled);
    a.event = filled;
    a.has_event = 1;
    a.queue = NULL; /* no queue at all: only the event */
    a.has_queue = 0;
    assert_int_equal(fx.be->validate(&a, buf), MPI_SUCCESS);
    assert_int_equal(fx.be->capture(&a, buf, &dep), MPI_SUCCESS);
    assert_non_null(dep);
    x = start_pack(&a, dep, buf, &t, host);
    fx_stays_pending(x, 0.05);
    clSetUserEventStatus(gate, CL_COMPLETE);
    fx_wait(x);
    fx_wait(dep);
    check_all(host, 11);
    clReleaseEvent(filled);
    clReleaseEvent(gate);
    clReleaseMemObject(buf);
    free(host);
}

/* A failed command on which the transfer depends: test() reports an
 * MPI_ERR_OTHER-class error (MPIACC_ERRK_OPENCL). */
static void failed_dependency_is_an_error(void **state)
{
    mpiacc_attrs_t a = fx_attrs(NULL);
    cl_int e;
    cl_event gate = clCreateUserEvent(fx.ctx, &e);
    cl_mem buf = fx_buf(64, NULL);
    void *dep = NULL;
    int done = 0, err;
    a.event = gate;
    a.has_event = 1;
    assert_int_equal(fx.be->capture(&a, buf, &dep), MPI_SUCCESS);
    clSetUserEventStatus(gate, -1234);
    err = fx.be->test(dep, &done);
    assert_int_equal(fx_class(err), MPI_ERR_OTHER);
    fx.be->release(dep);
    clReleaseEvent(gate);
    clReleaseMemObject(buf);
}

static void error_table(void **state)
{
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    cl_mem buf = fx_buf(256, NULL);
    cl_int e;
    cl_context other = clCreateContext(NULL, 1, &fx.dev, NULL, NULL, &e);
    cl_command_queue oq = clCreateCommandQueue(other, fx.dev, 0, &e);
    mpiacc_pack_type_t t = contig_type(512);
    char host[512];
    mpiacc_xfer_desc_t d = {.buf = buf, .type = &t, .count = 1, .first = 0, .last = 512, .host = host};
    void *x = NULL;

    assert_int_equal(fx.be->validate(&a, buf), MPI_SUCCESS);
    assert_int_equal(fx_class(fx.be->validate(&a, NULL)), MPI_ERR_BUFFER);
    a.queue = NULL; /* has_queue set, value NULL */
    assert_int_equal(fx_class(fx.be->validate(&a, buf)), MPI_ERR_ARG);
    a.queue = oq; /* a queue of another context */
    assert_int_equal(fx_class(fx.be->validate(&a, buf)), MPI_ERR_ARG);
    assert_int_equal(fx_class(fx.be->pack(&a, NULL, &d, &x)), MPI_ERR_ARG);
    a = fx_attrs(fx.qin);
    /* the datatype reaches past the end of the cl_mem */
    assert_int_equal(fx_class(fx.be->pack(&a, NULL, &d, &x)), MPI_ERR_BUFFER);
    assert_null(x);
    d.buf = NULL;
    assert_int_equal(fx_class(fx.be->pack(&a, NULL, &d, &x)), MPI_ERR_BUFFER);
    clReleaseCommandQueue(oq);
    clReleaseContext(other);
    clReleaseMemObject(buf);
}

/* A released cl_mem is MPI_ERR_BUFFER, not a crash: ocl-icd jumps through
 * the freed object's dispatch pointer, so the backend first copies that
 * word without faulting and compares it with the platforms' dispatch
 * tables (ocl_valid.c).  Both with a queue attribute and without one.  A
 * validated handle is remembered as live until its destructor callback
 * runs: released, it is checked afresh. */
/* The number of live handles, once it has dropped to want (a runtime may run
 * destructor callbacks a little after clReleaseMemObject: up to 5 s). */
static int live_handles_settle(int want)
{
    double t0 = fx_now();
    int n;
    while ((n = mpiacc_ocl_live_handles()) != want && fx_now() - t0 < 5) continue;
    return n;
}

static void released_buffer(void **state)
{
    mpiacc_attrs_t a = fx_attrs(fx.qin), none = fx_attrs(NULL);
    cl_mem live, buf;
    int n0;
    if (fx_under_valgrind()) {
        printf("released cl_mem: not checked under valgrind (freed blocks keep their bytes there)\n");
        skip();
    }
    live = fx_buf(256, NULL);
    buf = fx_buf(256, NULL);
    n0 = mpiacc_ocl_live_handles();
    assert_int_equal(fx.be->validate(&none, live), MPI_SUCCESS);
    assert_int_equal(fx.be->validate(&a, buf), MPI_SUCCESS);
    assert_int_equal(fx.be->validate(&a, buf), MPI_SUCCESS); /* remembered */
    assert_int_equal(mpiacc_ocl_live_handles(), n0 + 2);
    clReleaseMemObject(buf);
    assert_int_equal(live_handles_settle(n0 + 1), n0 + 1); /* forgotten by the destructor callback */
    if (strstr(fx.name, "NVIDIA")) {
        /* A forgotten handle is asked to the runtime (src/opencl/ocl_valid.c,
         * "Limits"), and NVIDIA's OpenCL reads the freed object to answer: it
         * crashed in 3 of 4 runs with other tests at once (H200, 2026-11-29). */
        printf("released cl_mem passed again: not asked on NVIDIA's OpenCL (its runtime reads the freed object)\n");
    } else {
        assert_int_equal(fx_class(fx.be->validate(&a, buf)), MPI_ERR_BUFFER);
        assert_int_equal(fx_class(fx.be->validate(&none, buf)), MPI_ERR_BUFFER);
    }
    assert_int_equal(fx.be->validate(&none, live), MPI_SUCCESS);
    clReleaseMemObject(live);
    assert_int_equal(live_handles_settle(n0), n0);
}

/* Issue 36: a handle known released is refused without asking the runtime
 * (NVIDIA's OpenCL answers for freed objects, and work on one may never
 * complete).  A stand-in object -- host memory beginning with a live
 * cl_mem's dispatch word, so that the word check passes and any cl* call
 * on it would read garbage -- noted as released is refused as released,
 * every time while its bytes stay; a buffer released after the check
 * vouched for it is refused; a new buffer created at an address once
 * released is live (its bytes changed). */
static void released_unchanged(void **state)
{
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    cl_mem live = fx_buf(256, NULL), b, again = NULL;
    void **fake = calloc(64, sizeof(void *));
    (void)state;
    if (fx_under_valgrind()) {
        printf("released cl_mem: not checked under valgrind (freed blocks keep their bytes there)\n");
        skip();
    }
    fake[0] = *(void **)live; /* the dispatch word, nothing else */
    mpiacc_ocl_note_released(fake);
    for (int i = 0; i < 3; i++) mpiacc_test_error(fx.be->validate(&a, fake), MPI_ERR_BUFFER, "was released");
    clReleaseMemObject(live);
    /* a buffer the check vouched for, then released */
    b = fx_buf(256, NULL);
    assert_int_equal(fx.be->validate(&a, b), MPI_SUCCESS);
    clReleaseMemObject(b);
    (void)live_handles_settle(mpiacc_ocl_live_handles() - 1);
    mpiacc_test_error(fx.be->validate(&a, b), MPI_ERR_BUFFER, "not a valid OpenCL memory object");
    /* a new buffer at that address (allocators hand it out again soon) */
    for (int i = 0; i < 8 && again != b; i++) {
        cl_mem n = fx_buf(256, NULL);
        if (n == b) again = n;
        else clReleaseMemObject(n);
    }
    if (again) {
        assert_int_equal(fx.be->validate(&a, again), MPI_SUCCESS);
        clReleaseMemObject(again);
    } else {
        printf("released_unchanged: no new buffer at the released address in 8 tries (not checked)\n");
    }
    free(fake);
}

/* Addresses that are no OpenCL object at all (a host pointer passed with
 * an OpenCL datatype, heap memory whose first word is a readable pointer,
 * unmapped addresses): MPI_ERR_BUFFER naming the handle, no crash, no cl*
 * call on them.  Also with the check switched off for a moment (what
 * bench/ocl_validate compares): a live cl_mem still validates. */
static void not_a_clmem(void **state)
{
    mpiacc_attrs_t a = fx_attrs(fx.qin);
    float host[64] = {1.5f, 2.5f};
    double doubles[8] = {3.25};
    void *heap = malloc(4096), *ptrs = malloc(64);
    cl_mem live = fx_buf(256, NULL);
    void *bogus[] = {host, doubles, heap, ptrs, (void *)(intptr_t)0x1000, (void *)(intptr_t)-4096};
    memset(heap, 0xab, 4096);
    /* a word that is a readable pointer, but to no dispatch table */
    ((void **)ptrs)[0] = heap;
    for (size_t i = 0; i < sizeof bogus / sizeof *bogus; i++) {
        int err = fx.be->validate(&a, bogus[i]);
        char msg[MPI_MAX_ERROR_STRING] = "", hex[32];
        int len = 0;
        if (fx_class(err) != MPI_ERR_BUFFER) fail_msg("address %zu (%p): class %d", i, bogus[i], fx_class(err));
        MPI_Error_string(err, msg, &len);
        snprintf(hex, sizeof hex, "%p", bogus[i]);
        if (!strstr(msg, "not a valid OpenCL memory object") || !strstr(msg, hex))
            fail_msg("address %zu: message \"%s\"", i, msg);
    }
    assert_int_equal(fx.be->validate(&a, live), MPI_SUCCESS);
    assert_int_equal(mpiacc_ocl_set_mem_check(0), 1);
    assert_int_equal(fx.be->validate(&a, live), MPI_SUCCESS);
    assert_int_equal(mpiacc_ocl_set_mem_check(1), 0);
    clReleaseMemObject(live);
    free(heap);
    free(ptrs);
}

/* No silent stale data: an OpenCL datatype names a queue, an event, or
 * MPIACC_QUEUE_NONE; with none of them the call is refused (MPI_ERR_ARG,
 * the message says what to set).  MPIACC_ORDER_STREAM needs a real queue. */
static void queue_required(void **state)
{
    mpiacc_attrs_t a = fx_attrs(NULL);
    cl_mem buf = fx_buf(256, NULL);
    cl_int e;
    cl_event ev = clCreateUserEvent(fx.ctx, &e);
    int err;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    assert_int_equal(fx.be->validate(&a, buf), MPI_SUCCESS); /* MPIACC_QUEUE_NONE */
    a.has_queue = 0;
    a.queue = NULL;
    err = fx.be->validate(&a, buf);
    assert_int_equal(fx_class(err), MPI_ERR_ARG);
    MPI_Error_string(err, msg, &len);
    if (!strstr(msg, "MPIACC_CL_QUEUE") || !strstr(msg, "MPIACC_QUEUE_NONE")) fail_msg("message \"%s\"", msg);
    a.event = ev; /* an event is a dependency the application names */
    a.has_event = 1;
    assert_int_equal(fx.be->validate(&a, buf), MPI_SUCCESS);
    a.stream_order = a.has_order = 1;
    assert_int_equal(fx_class(fx.be->validate(&a, buf)), MPI_ERR_ARG);
    a = fx_attrs(NULL);
    a.stream_order = a.has_order = 1;
    assert_int_equal(fx_class(fx.be->validate(&a, buf)), MPI_ERR_ARG);
    a = fx_attrs(fx.qin);
    a.stream_order = a.has_order = 1;
    assert_int_equal(fx.be->validate(&a, buf), MPI_SUCCESS);
    clSetUserEventStatus(ev, CL_COMPLETE);
    clReleaseEvent(ev);
    clReleaseMemObject(buf);
}

static void describe_lists_devices(void **state)
{
    char out[4096], name[256];
    assert_int_equal(fx.be->describe(out, sizeof out), MPI_SUCCESS);
    clGetDeviceInfo(fx.dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    if (!strstr(out, name)) fail_msg("describe() lacks the device \"%s\":\n%s", name, out);
}

/* The embedded source (traverse.h + kernels.cl) builds as OpenCL C. */
static void program_builds(void **state)
{
    mpiacc_ocl_ctx_t *cx = NULL;
    int err;
    assert_non_null(strstr(mpiacc_ocl_kernel_source, "MPIACC_OCL_KERNEL_PAIR(8, ulong)"));
    pthread_mutex_lock(&mpiacc_ocl_lock);
    err = mpiacc_ocl_ctx_get(fx.ctx, &cx);
    if (err == MPI_SUCCESS) err = mpiacc_ocl_ctx_program(cx);
    pthread_mutex_unlock(&mpiacc_ocl_lock);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        fail_msg("%s", msg);
    }
    assert_non_null(cx->kpack[0]);
    assert_non_null(cx->kunpack[4]);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(inorder_waits_for_prior_work), cmocka_unit_test(inorder_ignores_later_work),
        cmocka_unit_test(outoforder_no_dependency), cmocka_unit_test(event_attribute_dependency),
        cmocka_unit_test(failed_dependency_is_an_error), cmocka_unit_test(error_table),
        cmocka_unit_test(released_buffer), cmocka_unit_test(released_unchanged), cmocka_unit_test(not_a_clmem), cmocka_unit_test(queue_required),
        cmocka_unit_test(describe_lists_devices), cmocka_unit_test(program_builds),
    };
    fx_init(&argc, &argv);
    return fx_end(MPIACC_TEST_RUN("opencl_sync", tests, NULL, NULL));
}
