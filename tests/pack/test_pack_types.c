/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Named datatype tests of the engine: the papers' types (Jenkins'
 * vector-of-vectors, 4D subarray, HACC-like struct, indexed with varied
 * blocklengths, struct {double; int; int; char}), TEMPI's equivalent
 * constructions reducing to one canonical form, packed sizes beyond 2^31,
 * error classes, dups sharing the cache, concurrent analysis.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "pack/pack.h"

/* Packs/unpacks count x type with the engine and with MPI, whole and in
 * ranges, and compares. */
static void oracle(MPI_Datatype type, int count)
{
    mpiacc_pack_type_t *t;
    MPI_Count tlb, text, lb, ext, lo, hi, span, total;
    int pos = 0;
    uint64_t st = 42;
    assert_int_equal(mpiacc_pack_type_get(type, &t), MPI_SUCCESS);
    MPI_Type_get_true_extent_c(type, &tlb, &text);
    MPI_Type_get_extent_c(type, &lb, &ext);
    lo = tlb + (ext < 0 ? (count - 1) * ext : 0);
    hi = tlb + text + (ext > 0 ? (count - 1) * ext : 0);
    span = hi - lo;
    total = count * t->size;
    unsigned char *in = malloc(span), *ref = malloc(total + 1), *mine = malloc(total + 1), *d1 = calloc(span, 1),
                  *d2 = calloc(span, 1);
    for (MPI_Count i = 0; i < span; i++) in[i] = (unsigned char)mpiacc_test_rand(&st);
    MPI_Pack(in - lo, count, type, ref, (int)total + 1, &pos, MPI_COMM_SELF);
    assert_int_equal(pos, total);
    assert_int_equal(mpiacc_pack_cpu_pack(t, in - lo, count, 0, total, mine), MPI_SUCCESS);
    assert_memory_equal(ref, mine, total);
    for (MPI_Count f = 0; f < total; f += 1 + total / 7) {
        MPI_Count l = f + (total - f) / 2 + 1;
        assert_int_equal(mpiacc_pack_cpu_pack(t, in - lo, count, f, l, mine), MPI_SUCCESS);
        assert_memory_equal(ref + f, mine, l - f);
    }
    pos = 0;
    MPI_Unpack(ref, (int)total, &pos, d1 - lo, count, type, MPI_COMM_SELF);
    assert_int_equal(mpiacc_pack_cpu_unpack(t, d2 - lo, count, 0, total, ref), MPI_SUCCESS);
    assert_memory_equal(d1, d2, span);
    free(in), free(ref), free(mine), free(d1), free(d2);
    mpiacc_pack_type_release(t);
}

static void test_jenkins_vector_of_vectors(void **state)
{
    MPI_Datatype csvec, cs;
    mpiacc_pack_type_t *t;
    MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &csvec); /* CSvec */
    MPI_Type_vector(3, 2, 5, csvec, &cs);         /* CS: vector of CSvec */
    MPI_Type_commit(&cs);
    oracle(cs, 1);
    oracle(cs, 3);
    assert_int_equal(mpiacc_pack_type_get(cs, &t), MPI_SUCCESS);
    assert_int_equal(t->unit, 8); /* leaf: one double, never a byte */
    assert_int_equal(t->align, 8);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&csvec);
    MPI_Type_free(&cs);
}

static void test_subarray_4d(void **state)
{
    int sizes[4] = {8, 7, 6, 5}, sub[4] = {3, 4, 2, 3}, starts[4] = {1, 2, 3, 1};
    MPI_Datatype c, f;
    mpiacc_pack_type_t *t;
    MPI_Type_create_subarray(4, sizes, sub, starts, MPI_ORDER_C, MPI_FLOAT, &c);
    MPI_Type_create_subarray(4, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, &f);
    MPI_Type_commit(&c);
    MPI_Type_commit(&f);
    oracle(c, 1);
    oracle(c, 2);
    oracle(f, 2);
    assert_int_equal(mpiacc_pack_type_get(c, &t), MPI_SUCCESS);
    assert_true(t->strided);
    assert_int_equal(t->ndims, 3); /* 4 dims, innermost folded into the block */
    assert_int_equal(t->blk, 3 * 4);
    assert_int_equal(t->start, 4 * (1 * 7 * 6 * 5 + 2 * 6 * 5 + 3 * 5 + 1));
    mpiacc_pack_type_release(t);
    MPI_Type_free(&c);
    MPI_Type_free(&f);
}

typedef struct hacc { /* HACC-like particle */
    float pos[3], vel[3], phi;
    int64_t id;
    uint16_t mask;
} hacc_t;

static void test_hacc_struct(void **state)
{
    int bl[5] = {3, 3, 1, 1, 1};
    MPI_Aint d[5] = {offsetof(hacc_t, pos), offsetof(hacc_t, vel), offsetof(hacc_t, phi), offsetof(hacc_t, id),
                     offsetof(hacc_t, mask)};
    MPI_Datatype ty[5] = {MPI_FLOAT, MPI_FLOAT, MPI_FLOAT, MPI_INT64_T, MPI_UINT16_T}, s, r;
    mpiacc_pack_type_t *t;
    MPI_Type_create_struct(5, bl, d, ty, &s);
    MPI_Type_create_resized(s, 0, sizeof(hacc_t), &r);
    MPI_Type_commit(&r);
    oracle(r, 1);
    oracle(r, 17);
    assert_int_equal(mpiacc_pack_type_get(r, &t), MPI_SUCCESS);
    assert_int_equal(t->extent, sizeof(hacc_t));
    mpiacc_pack_type_release(t);
    MPI_Type_free(&s);
    MPI_Type_free(&r);
}

static void test_indexed_varied(void **state)
{
    int bl[6] = {1, 3, 0, 2, 5, 1}, di[6] = {0, 4, 9, 11, 20, 40};
    MPI_Datatype x;
    mpiacc_pack_type_t *t;
    MPI_Type_indexed(6, bl, di, MPI_DOUBLE, &x);
    MPI_Type_commit(&x);
    oracle(x, 1);
    oracle(x, 4);
    assert_int_equal(mpiacc_pack_type_get(x, &t), MPI_SUCCESS);
    assert_int_equal(t->unit, 8); /* gcd of block lengths 8, 24, 16, 40 */
    assert_false(t->strided);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&x);
}

struct dii { double d; int a, b; char c; };

static void test_struct_double_int_int_char(void **state)
{
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint d[4] = {offsetof(struct dii, d), offsetof(struct dii, a), offsetof(struct dii, b),
                     offsetof(struct dii, c)};
    MPI_Datatype ty[4] = {MPI_DOUBLE, MPI_INT, MPI_INT, MPI_CHAR}, s, r;
    mpiacc_pack_type_t *t;
    MPI_Type_create_struct(4, bl, d, ty, &s);
    MPI_Type_create_resized(s, 0, sizeof(struct dii), &r);
    MPI_Type_commit(&r);
    oracle(r, 1);
    oracle(r, 9);
    assert_int_equal(mpiacc_pack_type_get(r, &t), MPI_SUCCESS);
    /* the members are adjacent: one 17-byte leaf, a vector in the strided form */
    assert_int_equal(t->unit, 17);
    assert_true(t->strided);
    assert_int_equal(t->ndims, 0);
    assert_int_equal(t->blk, 17);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&s);
    MPI_Type_free(&r);
}

static void test_named_pairs(void **state)
{
    MPI_Datatype l[] = {MPI_SHORT_INT, MPI_DOUBLE_INT, MPI_FLOAT_INT, MPI_LONG_INT, MPI_2INT, MPI_BYTE, MPI_DOUBLE};
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) oracle(l[i], 5);
}

/* ---- canonical form -------------------------------------------------- */

static void strided_form(MPI_Datatype ty, mpiacc_pack_type_t *out)
{
    mpiacc_pack_type_t *t;
    MPI_Type_commit(&ty);
    assert_int_equal(mpiacc_pack_type_get(ty, &t), MPI_SUCCESS);
    assert_true(t->strided);
    *out = *t;
    out->blob = NULL;
    mpiacc_pack_type_release(t);
    MPI_Type_free(&ty);
}

static void assert_same_form(const mpiacc_pack_type_t *a, const mpiacc_pack_type_t *b)
{
    assert_int_equal(a->start, b->start);
    assert_int_equal(a->blk, b->blk);
    assert_int_equal(a->ndims, b->ndims);
    for (int d = 0; d < MPIACC_PACK_MAX_DIMS; d++) {
        assert_int_equal(a->counts[d], b->counts[d]);
        assert_int_equal(a->strides[d], b->strides[d]);
    }
}

/* TEMPI's Figure 2: one 3D object (A = 256 x 512 x 1024 bytes, E = 100 x 13 x
 * 47) built three ways, plus variants, must reduce to one form. */
static void test_canonical_equivalence(void **state)
{
    enum { A0 = 256, A1 = 512, A2 = 1024, E0 = 100, E1 = 13, E2 = 47 };
    mpiacc_pack_type_t f[6];
    MPI_Datatype row, plane, cub;
    { /* 3D subarray of bytes */
        int sz[3] = {A2, A1, A0}, sub[3] = {E2, E1, E0}, st[3] = {0, 0, 0};
        MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_BYTE, &cub);
        strided_form(cub, &f[0]);
    }
    { /* hvector of hvector of vector */
        MPI_Type_vector(E0, 1, 1, MPI_BYTE, &row);
        MPI_Type_create_hvector(E1, 1, A0, row, &plane);
        MPI_Type_create_hvector(E2, 1, A0 * A1, plane, &cub);
        MPI_Type_free(&row);
        MPI_Type_free(&plane);
        strided_form(cub, &f[1]);
    }
    { /* vector of a 2D subarray (plane extent A0*A1) */
        int sz[2] = {A1, A0}, sub[2] = {E1, E0}, st[2] = {0, 0};
        MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_BYTE, &plane);
        MPI_Type_vector(E2, 1, 1, plane, &cub);
        MPI_Type_free(&plane);
        strided_form(cub, &f[2]);
    }
    { /* Fortran-order subarray with the dimensions listed the other way */
        int sz[3] = {A0, A1, A2}, sub[3] = {E0, E1, E2}, st[3] = {0, 0, 0};
        MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_BYTE, &cub);
        strided_form(cub, &f[3]);
    }
    { /* rows of floats (E0 = 25 floats), plane as vector of rows of bytes */
        MPI_Type_contiguous(E0 / 4, MPI_FLOAT, &row);
        MPI_Type_create_hvector(E1, 1, A0, row, &plane);
        MPI_Type_create_hvector(E2, 1, A0 * A1, plane, &cub);
        MPI_Type_free(&row);
        MPI_Type_free(&plane);
        strided_form(cub, &f[4]);
    }
    { /* a 1D subarray of rows (subarray-of-vector), then an hvector */
        int sz1 = A1, sub1 = E1, st1 = 0;
        MPI_Datatype r2;
        MPI_Type_vector(E0 / 4, 4, 4, MPI_BYTE, &row); /* E0 bytes in blocks of 4 */
        MPI_Type_create_resized(row, 0, A0, &r2);  /* row with extent A0 */
        MPI_Type_create_subarray(1, &sz1, &sub1, &st1, MPI_ORDER_C, r2, &plane);
        MPI_Type_create_hvector(E2, 1, A0 * A1, plane, &cub);
        MPI_Type_free(&row);
        MPI_Type_free(&r2);
        MPI_Type_free(&plane);
        strided_form(cub, &f[5]);
    }
    assert_int_equal(f[0].blk, E0);
    assert_int_equal(f[0].ndims, 2);
    assert_int_equal(f[0].counts[0], E1);
    assert_int_equal(f[0].strides[0], A0);
    assert_int_equal(f[0].counts[1], E2);
    assert_int_equal(f[0].strides[1], A0 * A1);
    for (int i = 1; i < 6; i++) assert_same_form(&f[0], &f[i]);
}

/* ---- beyond 2^31 --------------------------------------------------------- */

#define G (1LL << 30)

/* Independent offset of packed byte p for blocks (len[i] bytes at disp[i]),
 * elements of `size` bytes at `extent`. */
static MPI_Count ref_offset(int n, const MPI_Count *len, const MPI_Count *disp, MPI_Count size, MPI_Count extent,
                            MPI_Count p)
{
    MPI_Count e = p / size, r = p % size;
    for (int i = 0; i < n; i++) {
        if (r < len[i]) return e * extent + disp[i] + r;
        r -= len[i];
    }
    return -1;
}

static void check_positions(MPI_Datatype ty, int n, const MPI_Count *len, const MPI_Count *disp, MPI_Count count)
{
    mpiacc_pack_type_t *t;
    MPI_Count size = 0, total;
    for (int i = 0; i < n; i++) size += len[i];
    MPI_Type_commit(&ty);
    assert_int_equal(mpiacc_pack_type_get(ty, &t), MPI_SUCCESS);
    assert_int_equal(t->size, size);
    assert_true(t->size > (1LL << 31));
    total = count * size;
    uint64_t st = 7;
    MPI_Count probes[64];
    int np = 0;
    for (int i = 0; i <= n && np < 40; i++) { /* block boundaries */
        MPI_Count at = 0;
        for (int k = 0; k < i; k++) at += len[k];
        for (int e = 0; e < count && np < 40; e++) {
            MPI_Count q = e * size + at;
            if (q > 0 && q - 1 < total) probes[np++] = q - 1;
            if (q < total) probes[np++] = q;
        }
    }
    while (np < 64) probes[np++] = (MPI_Count)(mpiacc_test_rand(&st) % (uint64_t)total);
    for (int i = 0; i < np; i++)
        assert_int_equal(mpiacc_tv_offset(t->blob, probes[i]),
                         ref_offset(n, len, disp, size, t->extent, probes[i]));
    mpiacc_pack_type_release(t);
    MPI_Type_free(&ty);
}

static void test_beyond_2g(void **state)
{
    MPI_Datatype c, ty;
    /* hvector of a 2 GiB + 7 contiguous run, negative stride: strided path */
    {
        MPI_Count len[3] = {2 * G + 7, 2 * G + 7, 2 * G + 7}, disp[3] = {0, -8 * G, -16 * G};
        MPI_Type_contiguous_c(2 * G + 7, MPI_BYTE, &c);
        MPI_Type_create_hvector_c(3, 1, -8 * G, c, &ty);
        MPI_Type_free(&c);
        check_positions(ty, 3, len, disp, 2);
    }
    /* hindexed with varied lengths: tree path with binary search */
    {
        MPI_Count bl[4] = {2 * G + 1, 5, 0, 4 * G}, d[4] = {16 * G, -8 * G, 3, 0};
        MPI_Count len[3] = {2 * G + 1, 5, 4 * G}, disp[3] = {16 * G, -8 * G, 0};
        MPI_Type_create_hindexed_c(4, bl, d, MPI_BYTE, &ty);
        check_positions(ty, 3, len, disp, 3);
    }
    /* struct of a double and a 3 GiB vector of ints */
    {
        MPI_Datatype v, types[2];
        MPI_Count bl[2] = {1, 1}, d[2] = {-64, 1024};
        MPI_Type_vector_c(3 * G / 4, 1, 2, MPI_INT, &v); /* 3G/4 ints, every other one */
        types[0] = MPI_DOUBLE;
        types[1] = v;
        MPI_Type_create_struct_c(2, bl, d, types, &ty);
        MPI_Type_free(&v);
        MPI_Type_commit(&ty);
        mpiacc_pack_type_t *t;
        assert_int_equal(mpiacc_pack_type_get(ty, &t), MPI_SUCCESS);
        assert_int_equal(t->size, 8 + 3 * G);
        MPI_Count ps[5] = {0, 7, 8, 8 + 3 * G - 1, 8 + 1000 * 4 + 2};
        MPI_Count want[5] = {-64, -57, 1024, 1024 + (3 * G / 4 - 1) * 8 + 3, 1024 + 1000 * 8 + 2};
        for (int i = 0; i < 5; i++) assert_int_equal(mpiacc_tv_offset(t->blob, ps[i]), want[i]);
        mpiacc_pack_type_release(t);
        MPI_Type_free(&ty);
    }
}

/* ---- errors ---------------------------------------------------------------- */

static int errclass(int code)
{
    int c;
    MPI_Error_class(code, &c);
    return c;
}

static void test_errors(void **state)
{
    mpiacc_pack_type_t *t = (void *)1;
    MPI_Datatype v, big, huge;
    char buf[64];
    assert_int_equal(errclass(mpiacc_pack_type_get(MPI_DATATYPE_NULL, &t)), MPI_ERR_TYPE);
    assert_null(t);
    assert_int_equal(errclass(mpiacc_pack_type_analyze(MPI_DATATYPE_NULL, &t)), MPI_ERR_TYPE);
    MPI_Type_vector(2, 1, 2, MPI_INT, &v); /* not committed */
    assert_int_equal(errclass(mpiacc_pack_type_get(v, &t)), MPI_ERR_TYPE);
    assert_null(t);
    MPI_Type_commit(&v);
    assert_int_equal(mpiacc_pack_type_get(v, &t), MPI_SUCCESS);
    /* ranges outside the packed data, negative counts */
    assert_int_equal(errclass(mpiacc_pack_cpu_pack(t, buf, 1, 0, 9, buf + 32)), MPI_ERR_COUNT);
    assert_int_equal(errclass(mpiacc_pack_cpu_pack(t, buf, 1, 5, 4, buf + 32)), MPI_ERR_COUNT);
    assert_int_equal(errclass(mpiacc_pack_cpu_unpack(t, buf, -1, 0, 0, buf + 32)), MPI_ERR_COUNT);
    assert_int_equal(errclass(mpiacc_pack_cpu_pack(t, buf, (MPI_Count)1 << 62, 0, 8, buf + 32)), MPI_ERR_COUNT);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&v);
    /* a type whose size overflows MPI_Count */
    if (MPI_Type_contiguous_c((MPI_Count)1 << 40, MPI_DOUBLE, &big) == MPI_SUCCESS) {
        if (MPI_Type_contiguous_c((MPI_Count)1 << 30, big, &huge) == MPI_SUCCESS) {
            int rc;
            if (MPI_Type_commit(&huge) == MPI_SUCCESS) {
                rc = mpiacc_pack_type_get(huge, &t);
                assert_int_not_equal(rc, MPI_SUCCESS);
                assert_true(errclass(rc) == MPI_ERR_COUNT || errclass(rc) == MPI_ERR_TYPE);
            }
            MPI_Type_free(&huge);
        }
        MPI_Type_free(&big);
    }
}

/* ---- cache: dups, threads ---------------------------------------------------- */

static void test_cache_dup(void **state)
{
    MPI_Datatype v, d1, d2;
    mpiacc_pack_type_t *a, *b, *c;
    MPI_Type_vector(3, 2, 4, MPI_INT, &v);
    MPI_Type_commit(&v);
    assert_int_equal(mpiacc_pack_type_get(v, &a), MPI_SUCCESS);
    MPI_Type_dup(v, &d1);
    MPI_Type_dup(d1, &d2);
    assert_int_equal(mpiacc_pack_type_get(d2, &b), MPI_SUCCESS);
    assert_ptr_equal(a, b);
    MPI_Type_free(&v); /* the analysis lives on with the dups */
    MPI_Type_free(&d1);
    assert_int_equal(mpiacc_pack_type_get(d2, &c), MPI_SUCCESS);
    assert_ptr_equal(a, c);
    mpiacc_pack_type_release(a);
    mpiacc_pack_type_release(b);
    mpiacc_pack_type_release(c);
    MPI_Type_free(&d2);
}

/* Predefined datatypes: one analysis each, kept (a table by handle). */
static void test_cache_named(void **state)
{
    mpiacc_pack_type_t *a, *b, *c;
    assert_int_equal(mpiacc_pack_type_get(MPI_INT, &a), MPI_SUCCESS);
    assert_int_equal(mpiacc_pack_type_get(MPI_INT, &b), MPI_SUCCESS);
    assert_int_equal(mpiacc_pack_type_get(MPI_BYTE, &c), MPI_SUCCESS);
    assert_ptr_equal(a, b);
    assert_ptr_not_equal(a, c);
    assert_int_equal(a->size, (MPI_Count)sizeof(int));
    assert_int_equal(c->size, 1);
    mpiacc_pack_type_release(a);
    mpiacc_pack_type_release(b);
    mpiacc_pack_type_release(c);
    assert_int_equal(mpiacc_pack_type_get(MPI_INT, &a), MPI_SUCCESS); /* still kept */
    assert_ptr_equal(a, b);
    mpiacc_pack_type_release(a);
}

/* mpiacc_pack_check_receive: count x type that surely writes a byte twice
 * is MPI_ERR_TYPE; elements that interleave without overlapping are not. */
static void test_check_receive(void **state)
{
    MPI_Datatype two, ov, gap, inter;
    mpiacc_pack_type_t *t;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_create_resized(two, 0, sizeof(int), &ov); /* two ints every int */
    MPI_Type_commit(&ov);
    assert_int_equal(mpiacc_pack_type_get(ov, &t), MPI_SUCCESS);
    assert_int_equal(mpiacc_pack_check_receive(t, 1, NULL), MPI_SUCCESS);
    assert_int_equal(errclass(mpiacc_pack_check_receive(t, 2, NULL)), MPI_ERR_TYPE);
    assert_int_equal(errclass(mpiacc_pack_check_receive(t, 3, " of block 1")), MPI_ERR_TYPE);
    mpiacc_pack_type_release(t);
    MPI_Type_vector(2, 1, 2, MPI_INT, &gap); /* ints at 0 and 8 */
    MPI_Type_create_resized(gap, 0, sizeof(int), &inter); /* element i: 4i and 4i + 8 */
    MPI_Type_commit(&inter);
    assert_int_equal(mpiacc_pack_type_get(inter, &t), MPI_SUCCESS);
    assert_int_equal(mpiacc_pack_check_receive(t, 2, NULL), MPI_SUCCESS); /* 0, 8 and 4, 12: interleaved */
    assert_int_equal(errclass(mpiacc_pack_check_receive(t, 3, NULL)), MPI_ERR_TYPE); /* 8 twice */
    mpiacc_pack_type_release(t);
    assert_int_equal(mpiacc_pack_type_get(MPI_INT, &t), MPI_SUCCESS);
    assert_int_equal(mpiacc_pack_check_receive(t, 1000, NULL), MPI_SUCCESS);
    assert_int_equal(mpiacc_pack_check_receive(t, 0, NULL), MPI_SUCCESS);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&ov), MPI_Type_free(&two), MPI_Type_free(&inter), MPI_Type_free(&gap);
}

enum { NTHREADS = 4, NSHARED = 64 };
static MPI_Datatype shared_types[NSHARED];
static mpiacc_pack_type_t *seen[NTHREADS][NSHARED];

static void *analyse_all(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int rep = 0; rep < 20; rep++)
        for (int i = 0; i < NSHARED; i++) {
            int k = (i * 7 + me * 13) % NSHARED;
            mpiacc_pack_type_t *t;
            if (mpiacc_pack_type_get(shared_types[k], &t) != MPI_SUCCESS) return (void *)1;
            if (rep == 0)
                seen[me][k] = t;
            else
                mpiacc_pack_type_release(t);
        }
    return NULL;
}

static void test_threads(void **state)
{
    pthread_t th[NTHREADS];
    int provided;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) skip();
    for (int i = 0; i < NSHARED; i++) {
        MPI_Type_vector(1 + i % 5, 1 + i % 3, 3 + i, MPI_INT, &shared_types[i]);
        MPI_Type_commit(&shared_types[i]);
    }
    for (int i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, analyse_all, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_null(r);
    }
    for (int k = 0; k < NSHARED; k++) {
        for (int i = 0; i < NTHREADS; i++) {
            assert_ptr_equal(seen[i][k], seen[0][k]); /* analysed once, shared */
            mpiacc_pack_type_release(seen[i][k]);
        }
        MPI_Type_free(&shared_types[k]);
    }
}

static void test_empty_type(void **state)
{
    MPI_Datatype z;
    mpiacc_pack_type_t *t;
    int bl = 0, d = 4;
    MPI_Type_indexed(1, &bl, &d, MPI_INT, &z);
    MPI_Type_commit(&z);
    assert_int_equal(mpiacc_pack_type_get(z, &t), MPI_SUCCESS);
    assert_int_equal(t->size, 0);
    assert_int_equal(mpiacc_tv_chunk(t->blob), 1);
    assert_int_equal(mpiacc_pack_cpu_pack(t, NULL, 5, 0, 0, NULL), MPI_SUCCESS);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&z);
    MPI_Type_create_struct(0, NULL, NULL, NULL, &z); /* an empty struct */
    MPI_Type_commit(&z);
    assert_int_equal(mpiacc_pack_type_get(z, &t), MPI_SUCCESS);
    assert_int_equal(t->size, 0);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&z);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jenkins_vector_of_vectors), cmocka_unit_test(test_subarray_4d),
        cmocka_unit_test(test_hacc_struct), cmocka_unit_test(test_indexed_varied),
        cmocka_unit_test(test_struct_double_int_int_char), cmocka_unit_test(test_named_pairs),
        cmocka_unit_test(test_canonical_equivalence), cmocka_unit_test(test_beyond_2g),
        cmocka_unit_test(test_errors), cmocka_unit_test(test_cache_dup), cmocka_unit_test(test_cache_named),
        cmocka_unit_test(test_check_receive), cmocka_unit_test(test_threads),
        cmocka_unit_test(test_empty_type),
    };
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return mpiacc_test_end(MPIACC_TEST_RUN("pack_types", tests, NULL, NULL));
}
