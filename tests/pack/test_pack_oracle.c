/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * Oracle test of the datatype engine and the CPU backend: seeded random
 * datatypes of tests/pack/typegen (every constructor, nesting depth <= 5,
 * counts 1-4, negative displacements, resized bounds), packed and unpacked
 * with the host reference (traverse.h) and through the CPU backend's table,
 * compared byte for byte with MPICH's MPI_Pack / MPI_Unpack, whole and in
 * random packed-byte ranges; the touched bounds of the analysis lie within
 * MPI's true bounds.
 *
 * MPIACC_TEST_NTYPES=n sets the number of types (default 20000);
 * MPIACC_TEST_LONG=1 runs 200000.  MPIACC_TEST_SEED=s replays a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "typegen.h"
#include "pack/pack.h"
#include "blob_overlaps.h"

static long ntypes(void) { return tg_corpus_size(20000, 200000); }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* blob_overlaps, every offset within the type's bounds. */
static int overlaps(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count lo, MPI_Count span)
{
    int ov = blob_overlaps(t, count, lo, span);
    assert_true(ov >= 0);
    return ov;
}

static void fill(uint64_t *st, unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)mpiacc_test_rand(st);
}

static void prtype(MPI_Datatype t, int ind)
{
    int ni, na, nd, comb = tg_combiner(t);
    MPI_Count lb, ext, sz;
    MPI_Type_get_extent_c(t, &lb, &ext);
    MPI_Type_size_c(t, &sz);
    fprintf(stderr, "%*s%s size %lld lb %lld ext %lld", ind, "", tg_combiner_name(t), (long long)sz, (long long)lb, (long long)ext);
    if (comb == MPI_COMBINER_NAMED) { fprintf(stderr, "\n"); return; }
    if (tg_is_large(t)) { fprintf(stderr, " (large)\n"); return; }
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    int ints[64]; MPI_Aint addrs[64]; MPI_Datatype types[8];
    MPI_Count xi, xa, xc, xd; int c2;
    MPI_Type_get_envelope_c(t, &xi, &xa, &xc, &xd, &c2);
    if (xc > 0) { fprintf(stderr, " (large)\n"); return; }
    MPI_Type_get_contents(t, 64, 64, 8, ints, addrs, types);
    fprintf(stderr, " ints"); for (int i = 0; i < ni; i++) fprintf(stderr, " %d", ints[i]);
    fprintf(stderr, " addrs"); for (int i = 0; i < na; i++) fprintf(stderr, " %ld", (long)addrs[i]);
    fprintf(stderr, "\n");
    for (int i = 0; i < nd; i++) { prtype(types[i], ind + 2); tg_free(&types[i]); }
}

/* Prints the blob and the first difference (to diagnose a failure). */
static void dump(const mpiacc_pack_type_t *t, const unsigned char *a, const unsigned char *b, MPI_Count n)
{
    const long long *w = t->blob;
    fprintf(stderr, "blob: size %lld extent %lld chunk %lld align %lld strided %lld nd %lld start %lld blk %lld\n",
            w[1], w[2], w[3], w[4], w[6], w[7], w[8], w[9]);
    for (long long i = 0; i < w[MPIACC_TV_H_NNODES]; i++) {
        const long long *x = w + MPIACC_TV_HDR_WORDS + i * MPIACC_TV_NODE_WORDS;
        fprintf(stderr, "  node kind %lld count %lld off %lld size %lld ext %lld csize %lld stride %lld look %lld\n",
                x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]);
    }
    for (long long i = MPIACC_TV_HDR_WORDS + w[MPIACC_TV_H_NNODES] * MPIACC_TV_NODE_WORDS; i < w[MPIACC_TV_H_WORDS]; i++)
        fprintf(stderr, "  look[%lld] = %lld\n", i, w[i]);
    for (MPI_Count i = 0; i < n; i++)
        if (a[i] != b[i]) {
            fprintf(stderr, "first difference at packed byte %lld (offset %lld)\n", (long long)i,
                    (long long)mpiacc_tv_offset(t->blob, i));
            break;
        }
}

static long by_comb[32], bytes_packed, large_count;
static long checked, ranges_checked, unpack_checked, overlapping, backend_checked;
static const mpiacc_backend_t *cpu;

static void check_type(MPI_Datatype type, uint64_t *st, long idx, uint64_t seed)
{
    mpiacc_pack_type_t *t = NULL;
    MPI_Count count = 1 + (MPI_Count)(mpiacc_test_rand(st) % 4), size, lb, extent, tlb, text, lo, hi, total;
    int pos = 0, rc;

    rc = mpiacc_pack_type_get(type, &t);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fail_msg("type %ld (%s): analysis failed: %s", idx, tg_combiner_name(type), msg);
    }
    MPI_Type_size_c(type, &size);
    MPI_Type_get_extent_c(type, &lb, &extent);
    MPI_Type_get_true_extent_c(type, &tlb, &text);
    assert_int_equal(t->size, size);
    assert_int_equal(t->extent, extent);
    assert_int_equal(t->lb, lb);
    assert_int_equal(mpiacc_tv_size(t->blob), size);
    assert_int_equal(mpiacc_tv_extent(t->blob), extent);
    assert_true(mpiacc_tv_chunk(t->blob) >= 1);
    if (size) assert_int_equal(size % mpiacc_tv_chunk(t->blob), 0);
    total = count * size;
    bytes_packed += total;
    {
        int comb = tg_combiner(type);
        if (comb >= 0 && comb < 32) by_comb[comb]++;
        large_count += tg_is_large(type);
    }
    tg_bounds(type, count, &lo, &hi);
    if (size > 0) { /* the bytes of the canonical form lie within MPI's true bounds */
        MPI_Count dlo, dhi;
        assert_int_equal(mpiacc_pack_span(t, count, &dlo, &dhi), MPI_SUCCESS);
        if (dlo < lo || dhi > hi)
            fail_msg("type %ld (%s): touches [%lld, %lld), outside MPI's true bounds [%lld, %lld) (seed %llu)", idx,
                     tg_combiner_name(type), (long long)dlo, (long long)dhi, (long long)lo, (long long)hi,
                     (unsigned long long)seed);
    }
    {
        MPI_Count span = hi - lo + 1;
        unsigned char *in = malloc((size_t)span), *ref = malloc((size_t)total + 1),
                      *mine = malloc((size_t)total + 1), *d1 = malloc((size_t)span), *d2 = malloc((size_t)span),
                      *p0 = malloc((size_t)total + 1);
        unsigned char *base = in - lo, *b1 = d1 - lo, *b2 = d2 - lo;
        fill(st, in, (size_t)span);
        if (getenv("MPIACC_TEST_VERBOSE")) {
            fprintf(stderr, "type %ld %s count %lld size %lld lb %lld extent %lld tlb %lld text %lld\n", idx,
                    tg_combiner_name(type), (long long)count, (long long)size, (long long)lb, (long long)extent,
                    (long long)tlb, (long long)text);
            dump(t, NULL, NULL, 0);
            prtype(type, 2);
        }
        MPI_Pack(base, (int)count, type, ref, (int)total + 1, &pos, MPI_COMM_SELF);
        assert_int_equal(pos, total);
        memset(mine, 0xee, (size_t)total + 1);
        assert_int_equal(mpiacc_pack_cpu_pack(t, base, count, 0, total, mine), MPI_SUCCESS);
        if (memcmp(ref, mine, (size_t)total) != 0) {
            dump(t, ref, mine, total);
            fail_msg("type %ld (%s, count %lld, size %lld): pack differs from MPI_Pack (seed %llu)", idx,
                     tg_combiner_name(type), (long long)count, (long long)size, (unsigned long long)seed);
        }
        /* the CPU backend's table: call-time check, pack, unpack */
        {
            mpiacc_xfer_desc_t d = {.buf = base, .type = t, .count = count, .first = 0, .last = total, .host = mine};
            void *x = (void *)1;
            memset(mine, 0xee, (size_t)total + 1);
            assert_int_equal(cpu->validate_span(NULL, &d), MPI_SUCCESS);
            assert_int_equal(cpu->pack(NULL, NULL, &d, &x), MPI_SUCCESS);
            assert_null(x);
            if (memcmp(ref, mine, (size_t)total) != 0)
                fail_msg("type %ld (%s, count %lld): CPU backend pack differs from MPI_Pack (seed %llu)", idx,
                         tg_combiner_name(type), (long long)count, (unsigned long long)seed);
            if (total > 0 && !overlaps(t, count, lo, span)) {
                fill(st, d1, (size_t)span);
                memcpy(d2, d1, (size_t)span);
                pos = 0;
                MPI_Unpack(ref, (int)total, &pos, b1, (int)count, type, MPI_COMM_SELF);
                d.buf = b2;
                d.host = ref;
                assert_int_equal(cpu->unpack(NULL, NULL, &d, &x), MPI_SUCCESS);
                if (memcmp(d1, d2, (size_t)span) != 0)
                    fail_msg("type %ld (%s): CPU backend unpack differs from MPI_Unpack (seed %llu)", idx,
                             tg_combiner_name(type), (unsigned long long)seed);
                backend_checked++;
            }
        }
        /* chunk: every [k*C, (k+1)*C) contiguous in the input */
        for (MPI_Count p = 0; p + 1 < total; p++)
            if ((p + 1) % t->unit) assert_int_equal(mpiacc_tv_offset(t->blob, p) + 1, mpiacc_tv_offset(t->blob, p + 1));
        for (int r = 0; r < 3 && total > 0; r++) {
            MPI_Count f = (MPI_Count)(mpiacc_test_rand(st) % (uint64_t)total);
            MPI_Count l = f + (MPI_Count)(mpiacc_test_rand(st) % (uint64_t)(total - f + 1));
            assert_int_equal(mpiacc_pack_cpu_pack(t, base, count, f, l, mine), MPI_SUCCESS);
            if (memcmp(ref + f, mine, (size_t)(l - f)) != 0)
                fail_msg("type %ld (%s): pack of range [%lld,%lld) differs (seed %llu)", idx, tg_combiner_name(type),
                         (long long)f, (long long)l, (unsigned long long)seed);
            ranges_checked++;
        }
        if (total > 0 && overlaps(t, count, lo, span)) {
            overlapping++; /* unpacking into overlapping bytes is order-dependent: not compared */
        } else if (total > 0) {
            /* whole unpack */
            fill(st, d1, (size_t)span);
            memcpy(d2, d1, (size_t)span);
            pos = 0;
            MPI_Unpack(ref, (int)total, &pos, b1, (int)count, type, MPI_COMM_SELF);
            assert_int_equal(mpiacc_pack_cpu_unpack(t, b2, count, 0, total, ref), MPI_SUCCESS);
            if (memcmp(d1, d2, (size_t)span) != 0)
                fail_msg("type %ld (%s): unpack differs from MPI_Unpack (seed %llu)", idx, tg_combiner_name(type),
                         (unsigned long long)seed);
            /* range unpack: MPI_Unpack of the original packed bytes with the
             * range replaced must equal unpacking only the range */
            MPI_Count f = (MPI_Count)(mpiacc_test_rand(st) % (uint64_t)total);
            MPI_Count l = f + (MPI_Count)(mpiacc_test_rand(st) % (uint64_t)(total - f + 1));
            fill(st, d1, (size_t)span);
            memcpy(d2, d1, (size_t)span);
            pos = 0;
            MPI_Pack(b1, (int)count, type, p0, (int)total + 1, &pos, MPI_COMM_SELF);
            memcpy(p0 + f, ref + f, (size_t)(l - f));
            pos = 0;
            MPI_Unpack(p0, (int)total, &pos, b1, (int)count, type, MPI_COMM_SELF);
            assert_int_equal(mpiacc_pack_cpu_unpack(t, b2, count, f, l, ref + f), MPI_SUCCESS);
            if (memcmp(d1, d2, (size_t)span) != 0)
                fail_msg("type %ld (%s): unpack of range [%lld,%lld) differs (seed %llu)", idx,
                         tg_combiner_name(type), (long long)f, (long long)l, (unsigned long long)seed);
            unpack_checked++;
        }
        free(in);
        free(ref);
        free(mine);
        free(d1);
        free(d2);
        free(p0);
    }
    /* a dup shares the cached analysis */
    {
        MPI_Datatype dup;
        mpiacc_pack_type_t *t2 = NULL;
        if (tg_combiner(type) != MPI_COMBINER_NAMED && (idx % 16) == 0) {
            MPI_Type_dup(type, &dup);
            assert_int_equal(mpiacc_pack_type_get(dup, &t2), MPI_SUCCESS);
            assert_ptr_equal(t, t2);
            mpiacc_pack_type_release(t2);
            MPI_Type_free(&dup);
        }
    }
    mpiacc_pack_type_release(t);
    checked++;
}

static void test_random_types(void **state)
{
    uint64_t seed = mpiacc_test_seed(), st = seed;
    long n = ntypes();
    double t0 = now();
    tg_src_t src = {.state = seed ^ 0x5bd1e995u, .large = 1, .max_size = 4096, .max_span = 16384};
    /* n derived types (named ones, which the generator also returns, are
     * checked too but not counted) */
    for (long i = 0, derived = 0; derived < n; i++) {
        MPI_Datatype t = tg_make(&src, (int)(1 + i % 5));
        if (tg_combiner(t) != MPI_COMBINER_NAMED) {
            MPI_Type_commit(&t);
            derived++;
        }
        check_type(t, &st, i, seed);
        tg_free(&t);
    }
    printf("random types: %ld derived types, %ld checked in all (%ld pack ranges, %ld unpacks, %ld CPU backend "
           "pack+unpack, %ld overlapping types pack-only) in %.2f s, seed %llu\n",
           n, checked, ranges_checked, unpack_checked, backend_checked, overlapping, now() - t0,
           (unsigned long long)seed);
    printf("top-level combiners:");
    for (int c = 0; c < 32; c++)
        if (by_comb[c]) printf(" %d:%ld", c, by_comb[c]);
    printf("; %ld built by large-count constructors; %ld bytes packed\n", large_count, bytes_packed);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_types)};
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    cpu = mpiacc_backend_get(MPIACC_KIND_HOST);
    if (!cpu) {
        fprintf(stderr, "the CPU backend is missing (MPI_Init is not mpiacc's?)\n");
        return 1;
    }
    return mpiacc_test_end(MPIACC_TEST_RUN("pack_oracle", tests, NULL, NULL));
}
