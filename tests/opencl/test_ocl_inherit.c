/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * Attributes through derived datatypes on cl_mem buffers (2 ranks, PoCL
 * or any OpenCL device; skipped without one).  The example: an
 * MPI_Type_vector tagged MPIACC_BUF_OPENCL + MPIACC_CL_QUEUE, wrapped in
 * MPI_Type_contiguous(2, vec) and sent from the cl_mem right after a kernel
 * wrote it on that queue: the peer gets the bytes MPI_Pack gives on a host
 * copy.  Also nested/struct/resized/subarray wrappers, MPI_Pack on a
 * wrapper, disagreeing queues refused, an OpenCL tag put with
 * PMPI_Type_set_attr (first test: no MPI_Type_set_attr yet), and empty
 * messages from a NULL cl_mem.
 */
#include "ocl_fixture.h"

#define NI 1024 /* ints in every buffer */
static int rank;

/* vector(8, 3, 5) of MPI_INT, committed, tagged OpenCL on queue q (through
 * PMPI when pmpi is set); no tag when q is NULL. */
static MPI_Datatype vec(cl_command_queue q, int pmpi, const char *name)
{
    MPI_Datatype t;
    MPI_Type_vector(8, 3, 5, MPI_INT, &t);
    MPI_Type_commit(&t);
    if (name) MPI_Type_set_name(t, name);
    if (q && pmpi) {
        assert_int_equal(PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL), MPI_SUCCESS);
        assert_int_equal(PMPI_Type_set_attr(t, MPIACC_CL_QUEUE, (void *)q), MPI_SUCCESS);
    } else if (q) {
        assert_int_equal(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL), MPI_SUCCESS);
        assert_int_equal(MPI_Type_set_attr(t, MPIACC_CL_QUEUE, (void *)q), MPI_SUCCESS);
    }
    return t;
}

enum { W_CONTIG, W_STRUCT_RESIZED, W_SUBARRAY, W_NESTED, W_COUNT };
static MPI_Datatype wrap(int w, MPI_Datatype b)
{
    MPI_Datatype t, u;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(b, &lb, &ext);
    switch (w) {
    case W_CONTIG: MPI_Type_contiguous(2, b, &t); break;
    case W_STRUCT_RESIZED: {
        int bl[2] = {1, 2};
        MPI_Aint d[2] = {16, ext + 16};
        MPI_Datatype ty[2] = {b, MPI_INT};
        MPI_Type_create_struct(2, bl, d, ty, &u);
        MPI_Type_create_resized(u, 0, ext + 40, &t);
        MPI_Type_free(&u);
        break;
    }
    case W_SUBARRAY: {
        int sizes[2] = {3, 3}, sub[2] = {2, 2}, start[2] = {1, 0};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, b, &t);
        break;
    }
    default: /* contiguous(2, hvector(2, 1, 2 ext, contiguous(2, b))) */
        u = wrap(W_CONTIG, b);
        MPI_Type_get_extent(u, &lb, &ext);
        {
            MPI_Datatype v;
            MPI_Type_create_hvector(2, 1, 2 * ext, u, &v);
            MPI_Type_free(&u);
            MPI_Type_contiguous(2, v, &t);
            MPI_Type_free(&v);
        }
        break;
    }
    MPI_Type_commit(&t);
    return t;
}

static void pattern(int *p, int seed)
{
    for (int i = 0; i < NI; i++) p[i] = seed * 7919 + i;
}

/* Rank 0 writes its cl_mem with a kernel on q (a copy from a pattern
 * buffer, slowed down) and sends `t` from it at once; rank 1 receives into
 * `rt` (from a cl_mem when rdev) and checks against MPI_Pack/MPI_Unpack of
 * the same layout `h` (untagged) on host copies. */
static void exchange(MPI_Datatype t, MPI_Datatype rt, MPI_Datatype h, int rdev, int seed)
{
    int src[NI], got[NI], want[NI], pos = 0;
    static char packed[NI * sizeof(int)];
    MPI_Aint lb, ext;
    MPI_Type_get_extent(h, &lb, &ext);
    assert_true(lb >= 0 && lb + ext <= (MPI_Aint)sizeof src);
    pattern(src, seed);
    if (rank == 0) {
        cl_mem pat = fx_buf(sizeof src, src), m = fx_buf(sizeof src, NULL);
        fx_copy(fx.qin, pat, m, NI, 20000, NULL, NULL); /* the send must wait for it */
        assert_int_equal(MPI_Send(m, 1, t, 1, seed, MPI_COMM_WORLD), MPI_SUCCESS);
        clFinish(fx.qin);
        clReleaseMemObject(pat);
        clReleaseMemObject(m);
    } else {
        for (int i = 0; i < NI; i++) got[i] = want[i] = -1;
        if (rdev) {
            cl_mem m = fx_buf(sizeof got, got);
            assert_int_equal(MPI_Recv(m, 1, rt, 0, seed, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
            fx_read(m, sizeof got, got);
            clReleaseMemObject(m);
        } else {
            assert_int_equal(MPI_Recv(got, 1, rt, 0, seed, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        }
        assert_int_equal(PMPI_Pack(src, 1, h, packed, sizeof packed, &pos, MPI_COMM_SELF), MPI_SUCCESS);
        pos = 0;
        assert_int_equal(PMPI_Unpack(packed, sizeof packed, &pos, want, 1, h, MPI_COMM_SELF), MPI_SUCCESS);
        assert_memory_equal(got, want, sizeof got);
    }
}

/* Issue 20: an OpenCL tag put through PMPI before any MPI_Type_set_attr
 * in the process is honoured from the first call (here through a
 * wrapper). */
static void pmpi_tag_first(void **state)
{
    MPI_Datatype v = vec(fx.qin, 1, NULL), u = vec(NULL, 0, NULL), t = wrap(W_CONTIG, v), h = wrap(W_CONTIG, u);
    exchange(v, u, u, 0, 1);
    exchange(t, h, h, 0, 2);
    MPI_Type_free(&t);
    MPI_Type_free(&h);
    MPI_Type_free(&v);
    MPI_Type_free(&u);
}

/* The example, and the other wrappers, into host and cl_mem
 * receives. */
static void wrappers(void **state)
{
    MPI_Datatype v = vec(fx.qin, 0, "vecOCL"), u = vec(NULL, 0, NULL);
    for (int w = 0; w < W_COUNT; w++) {
        MPI_Datatype t = wrap(w, v), h = wrap(w, u);
        exchange(t, h, h, 0, 10 + w); /* cl_mem -> host */
        exchange(t, t, h, 1, 20 + w); /* cl_mem -> cl_mem (the receive inherits too) */
        MPI_Type_free(&t);
        MPI_Type_free(&h);
    }
    MPI_Type_free(&v);
    MPI_Type_free(&u);
}

/* MPI_Pack / MPI_Unpack of a wrapper from a cl_mem into a cl_mem: the
 * packed bytes equal MPI_Pack's on a host copy. */
static void pack_wrapper(void **state)
{
    MPI_Datatype v = vec(fx.qin, 0, NULL), u = vec(NULL, 0, NULL), t = wrap(W_NESTED, v), h = wrap(W_NESTED, u);
    int src[NI], back[NI], want[NI], size, pos = 0, hpos = 0;
    static char packed[NI * sizeof(int)], hpacked[NI * sizeof(int)];
    cl_mem m, p, r;
    pattern(src, 5);
    MPI_Pack_size(1, h, MPI_COMM_SELF, &size);
    m = fx_buf(sizeof src, src);
    p = fx_buf(sizeof packed, NULL);
    assert_int_equal(MPI_Pack(m, 1, t, p, size, &pos, MPI_COMM_SELF), MPI_SUCCESS);
    assert_int_equal(PMPI_Pack(src, 1, h, hpacked, sizeof hpacked, &hpos, MPI_COMM_SELF), MPI_SUCCESS);
    assert_int_equal(pos, hpos);
    fx_read(p, (size_t)pos, packed);
    assert_memory_equal(packed, hpacked, (size_t)pos);
    for (int i = 0; i < NI; i++) back[i] = want[i] = -1;
    r = fx_buf(sizeof back, back);
    pos = 0;
    assert_int_equal(MPI_Unpack(p, size, &pos, r, 1, t, MPI_COMM_SELF), MPI_SUCCESS);
    fx_read(r, sizeof back, back);
    hpos = 0;
    assert_int_equal(PMPI_Unpack(hpacked, size, &hpos, want, 1, h, MPI_COMM_SELF), MPI_SUCCESS);
    assert_memory_equal(back, want, sizeof back);
    clReleaseMemObject(m);
    clReleaseMemObject(p);
    clReleaseMemObject(r);
    MPI_Type_free(&t);
    MPI_Type_free(&h);
    MPI_Type_free(&v);
    MPI_Type_free(&u);
}

/* Constituents on different queues disagree: MPI_ERR_TYPE naming both. */
static void disagreeing_queues(void **state)
{
    MPI_Datatype a, b, s;
    cl_command_queue q2;
    cl_int e;
    int bl[2] = {1, 1}, len;
    MPI_Aint lb, ext, d[2];
    MPI_Datatype ty[2];
    char msg[MPI_MAX_ERROR_STRING];
    cl_mem m = fx_buf(NI * sizeof(int), NULL);
    q2 = clCreateCommandQueue(fx.ctx, fx.dev, 0, &e);
    assert_int_equal(e, CL_SUCCESS);
    a = vec(fx.qin, 0, "vecQ1");
    b = vec(q2, 0, "vecQ2");
    MPI_Type_get_extent(a, &lb, &ext);
    d[0] = 0, d[1] = ext;
    ty[0] = a, ty[1] = b;
    MPI_Type_create_struct(2, bl, d, ty, &s);
    MPI_Type_commit(&s);
    e = MPI_Send(m, 1, s, 1 - rank, 0, MPI_COMM_WORLD);
    assert_int_equal(fx_class(e), MPI_ERR_TYPE);
    MPI_Error_string(e, msg, &len);
    assert_non_null(strstr(msg, "vecQ1"));
    assert_non_null(strstr(msg, "vecQ2"));
    assert_non_null(strstr(msg, "MPIACC_CL_QUEUE"));
    /* the same queue on both: they agree */
    assert_int_equal(MPI_Type_set_attr(b, MPIACC_CL_QUEUE, (void *)fx.qin), MPI_SUCCESS);
    assert_int_equal(MPI_Sendrecv(m, 1, s, 0, 1, m, 1, s, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Type_free(&s);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q2);
}

/* count = 0 with a NULL cl_mem: any buffer will do for an empty message. */
static void empty_null_clmem(void **state)
{
    MPI_Datatype v = vec(fx.qin, 0, NULL), t = wrap(W_CONTIG, v);
    MPI_Status st;
    int count = -1, pos = 0;
    if (rank == 0) {
        assert_int_equal(MPI_Send(NULL, 0, v, 1, 30, MPI_COMM_WORLD), MPI_SUCCESS);
        assert_int_equal(MPI_Send(NULL, 0, t, 1, 31, MPI_COMM_WORLD), MPI_SUCCESS);
    } else {
        assert_int_equal(MPI_Recv(NULL, 0, v, 0, 30, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        MPI_Get_count(&st, MPI_BYTE, &count);
        assert_int_equal(count, 0);
        assert_int_equal(MPI_Recv(NULL, 0, t, 0, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    /* on a direct communicator too (an eager message without data) */
    {
        MPI_Comm dc;
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, MPIACC_DIRECT_INFO, "true");
        assert_int_equal(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dc), MPI_SUCCESS);
        MPI_Info_free(&info);
        MPI_Comm_set_errhandler(dc, MPI_ERRORS_RETURN);
        if (rank == 0) {
            assert_int_equal(MPI_Send(NULL, 0, t, 1, 32, dc), MPI_SUCCESS);
        } else {
            assert_int_equal(MPI_Recv(NULL, 0, t, 0, 32, dc, &st), MPI_SUCCESS);
            MPI_Get_count(&st, MPI_BYTE, &count);
            assert_int_equal(count, 0);
        }
        MPI_Comm_free(&dc);
    }
    assert_int_equal(MPI_Pack(NULL, 0, t, NULL, 0, &pos, MPI_COMM_SELF), MPI_SUCCESS);
    assert_int_equal(MPI_Unpack(NULL, 0, &pos, NULL, 0, t, MPI_COMM_SELF), MPI_SUCCESS);
    assert_int_equal(pos, 0);
    MPI_Type_free(&t);
    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pmpi_tag_first), cmocka_unit_test(wrappers), cmocka_unit_test(pack_wrapper),
        cmocka_unit_test(disagreeing_queues), cmocka_unit_test(empty_null_clmem),
    };
    fx_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    return fx_end(MPIACC_TEST_RUN("ocl_inherit", tests, NULL, NULL));
}
