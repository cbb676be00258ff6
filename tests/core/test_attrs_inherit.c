/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attributes through derived datatypes, on the CPU path (2 ranks).  The
 * constituents are tagged MPIACC_BUF_HOST with an MPIACC_EVENT flag (the
 * CPU backend's dependency), so that an inherited attribute shows: the
 * operation waits for the flag.  Also: attributes put with
 * PMPI_Type_set_attr count from the first call on (the first tests, before
 * any MPI_Type_set_attr in the process), and empty messages accept any
 * buffer.  The oracle for data is MPI_Pack/MPI_Unpack of an untagged copy
 * of the layout.
 */
#include <stdatomic.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "core/core.h"
#include "attrs/attrs.h"

#define N 256
static int rank;

static int error_class(int code)
{
    int cls;
    MPI_Error_class(code, &cls);
    return cls;
}

static void assert_error(int code, int cls, const char *needle, const char *needle2)
{
    mpiacc_test_error(code, cls, needle);
    if (needle2) mpiacc_test_error(code, cls, needle2);
}

/* vector(4, 2, 3) of MPI_INT, committed, tagged host + event `gate` (no
 * attribute when gate is NULL); named `name` when not NULL. */
static MPI_Datatype base(atomic_int *gate, const char *name)
{
    MPI_Datatype t;
    MPI_Type_vector(4, 2, 3, MPI_INT, &t);
    MPI_Type_commit(&t);
    if (name) MPI_Type_set_name(t, name);
    if (gate) {
        MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
        MPI_Type_set_attr(t, MPIACC_EVENT, (void *)gate);
    }
    return t;
}

static void commit(MPI_Datatype *t) { MPI_Type_commit(t); }

/* The wrappers under test around `b` (each committed). */
enum { W_CONTIG, W_VECTOR, W_HVECTOR, W_INDEXED_BLOCK, W_HINDEXED, W_STRUCT, W_RESIZED, W_SUBARRAY, W_DUP,
       W_NESTED, W_COUNT };
static MPI_Datatype wrap(int w, MPI_Datatype b)
{
    MPI_Datatype t, u, v;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(b, &lb, &ext);
    switch (w) {
    case W_CONTIG: MPI_Type_contiguous(2, b, &t); break;
    case W_VECTOR: MPI_Type_vector(2, 1, 2, b, &t); break;
    case W_HVECTOR: MPI_Type_create_hvector(2, 1, 3 * ext, b, &t); break;
    case W_INDEXED_BLOCK: {
        int d[2] = {0, 2};
        MPI_Type_create_indexed_block(2, 1, d, b, &t);
        break;
    }
    case W_HINDEXED: {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 2 * ext};
        MPI_Type_create_hindexed(2, bl, d, b, &t);
        break;
    }
    case W_STRUCT: { /* an untagged predefined member is neutral */
        int bl[2] = {1, 3};
        MPI_Aint d[2] = {0, ext};
        MPI_Datatype ty[2] = {b, MPI_INT};
        MPI_Type_create_struct(2, bl, d, ty, &t);
        break;
    }
    case W_RESIZED: MPI_Type_create_resized(b, 0, ext + 8, &t); break;
    case W_SUBARRAY: {
        int sizes[2] = {3, 2}, sub[2] = {2, 1}, start[2] = {1, 1};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, b, &t);
        break;
    }
    case W_DUP: MPI_Type_dup(b, &t); break; /* copies the attributes themselves */
    default: /* contiguous(resized(struct(vector(b)))) */
        u = wrap(W_VECTOR, b);
        v = wrap(W_STRUCT, u);
        MPI_Type_free(&u);
        u = wrap(W_RESIZED, v);
        MPI_Type_free(&v);
        MPI_Type_contiguous(2, u, &t);
        MPI_Type_free(&u);
        break;
    }
    commit(&t);
    return t;
}

/* Issue 20: a value put with PMPI_Type_set_attr before any
 * MPI_Type_set_attr in the process is read at the call. */
static void pmpi_invalid_first(void **state)
{
    MPI_Datatype t;
    int buf[N] = {0};
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    assert_int_equal(PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, (void *)(intptr_t)77), MPI_SUCCESS);
    assert_int_equal(mpiacc_attrs_kind(t), MPIACC_ATTRS_KIND_INVALID);
    assert_error(MPI_Send(buf, 1, t, 1 - rank, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "MPIACC_BUF_TYPE", NULL);
    assert_error(MPI_Recv(buf, 1, t, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_ARG,
                 "MPIACC_BUF_TYPE", NULL);
    MPI_Type_free(&t);
    /* A predefined datatype is host data without a lookup until
     * MPI_Type_set_attr tags one (the host fast path's budget): a value put
     * on it through PMPI alone is not seen (include/mpiacc.h), one put
     * after MPI_Type_set_attr tagged any predefined datatype is. */
    assert_int_equal(PMPI_Type_set_attr(MPI_SHORT, MPIACC_BUF_TYPE, NULL), MPI_SUCCESS);
    assert_int_equal(mpiacc_attrs_kind(MPI_SHORT), MPIACC_KIND_NONE);
    assert_int_equal(MPI_Type_set_attr(MPI_LONG, MPIACC_BUF_TYPE, MPIACC_BUF_HOST), MPI_SUCCESS);
    assert_int_equal(mpiacc_attrs_kind(MPI_SHORT), MPIACC_ATTRS_KIND_INVALID);
    assert_error(MPI_Send(buf, 1, MPI_SHORT, 1 - rank, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "MPIACC_BUF_TYPE", NULL);
    assert_int_equal(PMPI_Type_delete_attr(MPI_SHORT, MPIACC_BUF_TYPE), MPI_SUCCESS);
    assert_int_equal(MPI_Type_delete_attr(MPI_LONG, MPIACC_BUF_TYPE), MPI_SUCCESS);
}

/* A valid host+event tag put through PMPI: the operation goes through the
 * pool and waits for the flag (an Isend to self that cannot complete
 * before the flag is set). */
static void pmpi_valid_first(void **state)
{
    MPI_Datatype t;
    atomic_int gate = 0;
    int in[4] = {1, 2, 3, 4}, out[4] = {0}, done = 0;
    MPI_Request r[2];
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    assert_int_equal(PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST), MPI_SUCCESS);
    assert_int_equal(PMPI_Type_set_attr(t, MPIACC_EVENT, (void *)&gate), MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(out, 1, t, 0, 3, MPI_COMM_SELF, &r[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Isend(in, 1, t, 0, 3, MPI_COMM_SELF, &r[1]), MPI_SUCCESS);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        assert_false(done);
    }
    atomic_store(&gate, 1);
    assert_int_equal(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_memory_equal(in, out, sizeof in);
    MPI_Type_free(&t);
}

/* Every wrapper of a tagged type inherits its buffer type and event, in
 * the fast check and in the full read alike; wrappers of an untagged type
 * stay untagged. */
static void wrappers_inherit(void **state)
{
    atomic_int gate = 1;
    MPI_Datatype b = base(&gate, NULL), u = base(NULL, NULL);
    for (int w = 0; w < W_COUNT; w++) {
        MPI_Datatype t = wrap(w, b), h = wrap(w, u);
        mpiacc_attrs_t a;
        assert_int_equal(mpiacc_attrs_kind(t), MPIACC_KIND_HOST);
        assert_int_equal(mpiacc_attrs_get(t, &a), MPI_SUCCESS);
        assert_int_equal(a.kind, MPIACC_KIND_HOST);
        assert_true(a.has_event);
        assert_ptr_equal(a.event, &gate);
        assert_int_equal(mpiacc_attrs_kind(t), MPIACC_KIND_HOST); /* now from the cache */
        assert_int_equal(mpiacc_attrs_kind(h), MPIACC_KIND_NONE);
        assert_int_equal(mpiacc_attrs_get(h, &a), MPI_SUCCESS);
        assert_int_equal(a.kind, MPIACC_KIND_NONE);
        MPI_Type_free(&t);
        MPI_Type_free(&h);
    }
    MPI_Type_free(&b);
    MPI_Type_free(&u);
}

/* The inherited event is the dependency: a wrapper's send waits for it. */
static void inherited_event_gates(void **state)
{
    atomic_int gate = 0;
    MPI_Datatype b = base(&gate, NULL);
    for (int w = 0; w < W_COUNT; w++) {
        MPI_Datatype t = wrap(w, b);
        MPI_Aint lb, ext;
        int in[N], out[N], done = 0;
        MPI_Request r[2];
        MPI_Type_get_extent(t, &lb, &ext);
        assert_true(lb + ext <= (MPI_Aint)sizeof in);
        for (int i = 0; i < N; i++) in[i] = 1000 * w + i, out[i] = -1;
        atomic_store(&gate, 0);
        assert_int_equal(MPI_Irecv(out, 1, t, 0, w, MPI_COMM_SELF, &r[0]), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(in, 1, t, 0, w, MPI_COMM_SELF, &r[1]), MPI_SUCCESS);
        for (int i = 0; i < 10; i++) {
            assert_int_equal(MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            assert_false(done);
        }
        atomic_store(&gate, 1);
        assert_int_equal(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        MPI_Type_free(&t);
    }
    MPI_Type_free(&b);
}

/* Between the ranks: rank 0 sends each wrapper, rank 1 receives it into
 * the same wrapper; the received bytes equal MPI_Pack/MPI_Unpack of the
 * same layout without attributes. */
static void wrappers_data(void **state)
{
    atomic_int gate = 1;
    MPI_Datatype b = base(&gate, NULL), u = base(NULL, NULL);
    for (int w = 0; w < W_COUNT; w++) {
        MPI_Datatype t = wrap(w, b), h = wrap(w, u);
        int src[N], got[N], want[N], pos = 0;
        char packed[N * sizeof(int)];
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        assert_true(lb >= 0 && lb + ext <= (MPI_Aint)sizeof src);
        for (int i = 0; i < N; i++) src[i] = 7 * w + 13 * i, got[i] = want[i] = -1;
        if (rank == 0) {
            assert_int_equal(MPI_Send(src, 1, t, 1, w, MPI_COMM_WORLD), MPI_SUCCESS);
        } else {
            assert_int_equal(MPI_Recv(got, 1, t, 0, w, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
            assert_int_equal(MPI_Pack(src, 1, h, packed, sizeof packed, &pos, MPI_COMM_SELF), MPI_SUCCESS);
            pos = 0;
            assert_int_equal(MPI_Unpack(packed, sizeof packed, &pos, want, 1, h, MPI_COMM_SELF), MPI_SUCCESS);
            assert_memory_equal(got, want, sizeof got);
        }
        MPI_Type_free(&t);
        MPI_Type_free(&h);
    }
    MPI_Type_free(&b);
    MPI_Type_free(&u);
}

/* Disagreeing constituents (two events; a host and a device buffer type)
 * are refused with MPI_ERR_TYPE naming both, on every path. */
static void disagreeing_refused(void **state)
{
    atomic_int g1 = 1, g2 = 1;
    MPI_Datatype a = base(&g1, "vecA"), b = base(&g2, "vecB"), d = base(NULL, "vecDev"), s, s2, outer;
    int bl[2] = {1, 1}, buf[4 * N] = {0}, pos = 0;
    MPI_Aint lb, ext, disp[2];
    MPI_Datatype ty[2] = {a, b};
    char packed[4 * N * sizeof(int)];
    MPI_Type_get_extent(a, &lb, &ext);
    disp[0] = 0, disp[1] = ext;
    MPI_Type_create_struct(2, bl, disp, ty, &s);
    MPI_Type_commit(&s);
    assert_int_equal(mpiacc_attrs_kind(s), MPIACC_ATTRS_KIND_INVALID);
    assert_error(MPI_Send(buf, 1, s, 1 - rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "'vecA'", "'vecB'");
    assert_error(MPI_Irecv(buf, 1, s, 1 - rank, 0, MPI_COMM_WORLD, &(MPI_Request){0}), MPI_ERR_TYPE, "vecA", NULL);
    assert_error(MPI_Pack(buf, 1, s, packed, sizeof packed, &pos, MPI_COMM_SELF), MPI_ERR_TYPE, "vecB", NULL);
    /* nested: the outer wrapper is refused too, naming the constituents */
    MPI_Type_contiguous(2, s, &outer);
    MPI_Type_commit(&outer);
    assert_error(MPI_Send(buf, 1, outer, 1 - rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "'vecA'", "'vecB'");
    MPI_Type_free(&outer);
    /* host and device (OpenCL: refused before any backend is needed) */
    MPI_Type_set_attr(d, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    ty[1] = d;
    MPI_Type_create_struct(2, bl, disp, ty, &s2);
    MPI_Type_commit(&s2);
    assert_error(MPI_Send(buf, 1, s2, 1 - rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPIACC_BUF_OPENCL",
                 "MPIACC_BUF_HOST");
    assert_error(MPI_Recv(buf, 1, s2, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE, "vecDev",
                 "vecA");
    /* an explicit MPIACC_BUF_TYPE on the outer type takes precedence */
    MPI_Type_set_attr(s2, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    assert_int_equal(mpiacc_attrs_kind(s2), MPIACC_KIND_HOST);
    assert_int_equal(MPI_Sendrecv(buf, 1, s2, 0, 9, buf + 2 * N, 1, s2, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
    MPI_Type_free(&s);
    MPI_Type_free(&s2);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MPI_Type_free(&d);
}

/* The same attributes on several constituents agree; the derived type's
 * own dependency attributes take precedence over the inherited ones; a
 * change of a constituent's attribute through MPI_Type_set_attr after the
 * first use is seen at the next call. */
static void agreeing_override_and_change(void **state)
{
    atomic_int g1 = 1, g2 = 1;
    MPI_Datatype a = base(&g1, NULL), b = base(&g1, NULL), s;
    int bl[2] = {1, 1};
    MPI_Aint lb, ext, disp[2];
    MPI_Datatype ty[2] = {a, b};
    mpiacc_attrs_t at;
    MPI_Type_get_extent(a, &lb, &ext);
    disp[0] = 0, disp[1] = ext;
    MPI_Type_create_struct(2, bl, disp, ty, &s);
    MPI_Type_commit(&s);
    assert_int_equal(mpiacc_attrs_get(s, &at), MPI_SUCCESS);
    assert_int_equal(at.kind, MPIACC_KIND_HOST);
    assert_ptr_equal(at.event, &g1);
    assert_int_equal(MPI_Type_set_attr(s, MPIACC_EVENT, (void *)&g2), MPI_SUCCESS); /* own: precedence */
    assert_int_equal(mpiacc_attrs_get(s, &at), MPI_SUCCESS);
    assert_ptr_equal(at.event, &g2);
    assert_int_equal(MPI_Type_delete_attr(s, MPIACC_EVENT), MPI_SUCCESS);
    /* changes on datatypes no decision was made from (s itself, an
     * unrelated one) leave the decisions alone */
    {
        unsigned gen = atomic_load(&mpiacc_attrs_gen);
        MPI_Datatype other = base(&g1, NULL);
        assert_int_equal(MPI_Type_set_attr(other, MPIACC_EVENT, (void *)&g2), MPI_SUCCESS);
        assert_int_equal(MPI_Type_set_attr(s, MPIACC_EVENT, (void *)&g1), MPI_SUCCESS);
        assert_int_equal(MPI_Type_delete_attr(s, MPIACC_EVENT), MPI_SUCCESS);
        assert_int_equal(atomic_load(&mpiacc_attrs_gen), gen);
        MPI_Type_free(&other);
    }
    /* b changes: the constituents disagree now */
    assert_int_equal(MPI_Type_set_attr(b, MPIACC_EVENT, (void *)&g2), MPI_SUCCESS);
    assert_int_equal(mpiacc_attrs_kind(s), MPIACC_ATTRS_KIND_INVALID);
    assert_int_equal(error_class(mpiacc_attrs_get(s, &at)), MPI_ERR_TYPE);
    /* both untagged now: the struct is host data again */
    assert_int_equal(MPI_Type_delete_attr(a, MPIACC_BUF_TYPE), MPI_SUCCESS);
    assert_int_equal(MPI_Type_delete_attr(b, MPIACC_BUF_TYPE), MPI_SUCCESS);
    assert_int_equal(mpiacc_attrs_kind(s), MPIACC_KIND_NONE);
    assert_int_equal(mpiacc_attrs_get(s, &at), MPI_SUCCESS);
    assert_int_equal(at.kind, MPIACC_KIND_NONE);
    MPI_Type_free(&s);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
}

/* A constituent freed by the application after the derived type was built
 * still passes its attributes on (MPI keeps it alive). */
static void freed_constituent(void **state)
{
    atomic_int gate = 1;
    MPI_Datatype b = base(&gate, NULL), t = wrap(W_CONTIG, b);
    mpiacc_attrs_t a;
    MPI_Type_free(&b);
    assert_int_equal(mpiacc_attrs_get(t, &a), MPI_SUCCESS);
    assert_int_equal(a.kind, MPIACC_KIND_HOST);
    assert_ptr_equal(a.event, &gate);
    MPI_Type_free(&t);
}

/* Empty messages accept any buffer (MPI's rule), also for device buffer
 * types whose backend is absent here, and a datatype of size 0. */
static void empty_any_buffer(void **state)
{
    MPI_Datatype ocl, cu, zero;
    MPI_Request r[2];
    int pos = 0;
    MPI_Count cpos = 0;
    MPI_Status st;
    int count = -1;
    MPI_Type_contiguous(4, MPI_INT, &ocl);
    MPI_Type_commit(&ocl);
    MPI_Type_dup(ocl, &cu);
    MPI_Type_contiguous(0, MPI_INT, &zero);
    MPI_Type_commit(&zero);
    MPI_Type_set_attr(ocl, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    MPI_Type_set_attr(cu, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA);
    MPI_Type_set_attr(zero, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    MPI_Datatype ts[3] = {ocl, cu, zero};
    for (int i = 0; i < 3; i++) {
        int n = i == 2 ? 5 : 0;
        assert_int_equal(MPI_Irecv(NULL, n, ts[i], 0, 4, MPI_COMM_SELF, &r[0]), MPI_SUCCESS);
        assert_int_equal(MPI_Isend(NULL, n, ts[i], 0, 4, MPI_COMM_SELF, &r[1]), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&r[0], &st), MPI_SUCCESS);
        MPI_Get_count(&st, MPI_BYTE, &count);
        assert_int_equal(count, 0);
        if (rank == 0) assert_int_equal(MPI_Send(NULL, n, ts[i], 1, 5, MPI_COMM_WORLD), MPI_SUCCESS);
        else assert_int_equal(MPI_Recv(NULL, n, ts[i], 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        pos = 0;
        assert_int_equal(MPI_Pack(NULL, n, ts[i], NULL, 0, &pos, MPI_COMM_SELF), MPI_SUCCESS);
        assert_int_equal(pos, 0);
        assert_int_equal(MPI_Unpack(NULL, 0, &pos, NULL, n, ts[i], MPI_COMM_SELF), MPI_SUCCESS);
        assert_int_equal(MPI_Pack_c(NULL, n, ts[i], NULL, 0, &cpos, MPI_COMM_SELF), MPI_SUCCESS);
        assert_int_equal(cpos, 0);
    }
    MPI_Type_free(&ocl);
    MPI_Type_free(&cu);
    MPI_Type_free(&zero);
}

/* The facts kept per datatype (src/dispatch/facts.c) follow changes: an
 * MPIACC_EVENT replaced with MPI_Type_set_attr after the datatype's first
 * call gates the next call (the new flag, not the old one), and an invalid
 * MPIACC_BUF_TYPE put with PMPI_Type_set_attr after it is refused at once. */
static void facts_follow_changes(void **state)
{
    MPI_Datatype t;
    atomic_int a = 1, b = 0;
    int in[4] = {5, 6, 7, 8}, out[4] = {0}, done = 0;
    MPI_Request r[2];
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&a), MPI_SUCCESS);
    assert_int_equal(mpiacc_test_self_bytes(in, 1, t, 4, out, (int)sizeof out), (int)sizeof in);
    assert_memory_equal(in, out, sizeof in);
    assert_int_equal(MPI_Type_set_attr(t, MPIACC_EVENT, (void *)&b), MPI_SUCCESS);
    memset(out, 0, sizeof out);
    assert_int_equal(MPI_Irecv(out, 4, MPI_INT, 0, 4, MPI_COMM_SELF, &r[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Isend(in, 1, t, 0, 4, MPI_COMM_SELF, &r[1]), MPI_SUCCESS);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        assert_false(done); /* gated by b now */
    }
    atomic_store(&b, 1);
    assert_int_equal(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_memory_equal(in, out, sizeof in);
    assert_int_equal(PMPI_Type_set_attr(t, MPIACC_BUF_TYPE, (void *)(intptr_t)77), MPI_SUCCESS);
    assert_error(MPI_Send(in, 1, t, 0, 4, MPI_COMM_SELF), MPI_ERR_ARG, "MPIACC_BUF_TYPE", NULL);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    /* the PMPI tests come first: no MPI_Type_set_attr has happened yet */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pmpi_invalid_first), cmocka_unit_test(pmpi_valid_first),
        cmocka_unit_test(wrappers_inherit), cmocka_unit_test(inherited_event_gates),
        cmocka_unit_test(wrappers_data), cmocka_unit_test(disagreeing_refused),
        cmocka_unit_test(agreeing_override_and_change), cmocka_unit_test(freed_constituent),
        cmocka_unit_test(empty_any_buffer),      cmocka_unit_test(facts_follow_changes),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    return mpiacc_test_end(MPIACC_TEST_RUN("attrs_inherit", tests, NULL, NULL));
}
