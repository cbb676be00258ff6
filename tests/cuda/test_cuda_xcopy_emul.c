/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_xcopy_emul: the layout-to-layout copy of the IPC path
 * (src/cuda/cuda_xcopy.cu) through its host emulation — same kernel body,
 * thread by thread on host memory, needs no GPU.  Plan (word size, dense
 * sides) and index arithmetic are checked against MPI_Pack / MPI_Unpack
 * (cu_xcopy_oracle.h) on directed layouts and seeded random pairs of
 * layouts, whole and partial packed ranges, element counts > 1, buffers
 * at every alignment; each copy also runs with the traversal forced on
 * dense sides, and, where mpiacc_cuda_xcopy_rows says the layouts are
 * rows (issue 23's cudaMemcpy2DAsync variant), as its row-by-row host
 * emulation.  Also the names of those variants (bench/pingpong --variant,
 * test_cuda_direct --variant).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "cuda/cuda_testhooks.h"
#include "cuda/cuda_xcopy.h"
#include "pack/pack.h"
#include "cu_pattern.h"
#include "cu_randtype.h"
#include "cu_xcopy_oracle.h"

static uint64_t rng;
static int rows_taken; /* copies that were also run as rows */

static void hfill(unsigned char *p, long long n, unsigned seed)
{
    for (long long i = 0; i < n; i++) p[i] = cu_pattern(i, seed);
}

/* One copy of [first, last) from cs x S (buffer at offset soff of its
 * allocation) into cd x D (doff); returns the number of failures and the
 * plan's word size / dense sides through *plan (may be NULL). */
static int one(const char *name, MPI_Datatype S, int cs, MPI_Datatype D, int cd, long long first, long long last,
               long long soff, long long doff, mpiacc_cuda_xcopy_t *plan)
{
    mpiacc_pack_type_t *TS = NULL, *TD = NULL;
    long long slo, shi, dlo, dhi, sbytes, dbytes;
    unsigned char *src, *dst, *img, *exp;
    mpiacc_cuda_xcopy_t k;
    int bad = 0;
    assert_int_equal(mpiacc_pack_type_analyze(S, &TS), MPI_SUCCESS);
    assert_int_equal(mpiacc_pack_type_analyze(D, &TD), MPI_SUCCESS);
    cu_xc_span(S, cs, &slo, &shi);
    cu_xc_span(D, cd, &dlo, &dhi);
    soff -= slo < 0 ? slo : 0, doff -= dlo < 0 ? dlo : 0;
    sbytes = (soff + shi + 255) / 256 * 256, dbytes = (doff + dhi + 255) / 256 * 256;
    src = aligned_alloc(256, (size_t)sbytes), dst = aligned_alloc(256, (size_t)dbytes);
    img = malloc((size_t)dbytes), exp = malloc((size_t)dbytes);
    assert_non_null(src), assert_non_null(dst), assert_non_null(img), assert_non_null(exp);
    hfill(src, sbytes, 11u + (unsigned)first), hfill(img, dbytes, 977u + (unsigned)last);
    assert_int_equal(cu_xc_expect(src + soff, S, cs, D, cd, first, last, img, exp, dbytes, doff), MPI_SUCCESS);
    memset(&k, 0, sizeof k);
    k.src.blob = TS->blob, k.src.base = (char *)src + soff;
    k.dst.blob = TD->blob, k.dst.base = (char *)dst + doff;
    k.first = first, k.last = last;
    assert_int_equal(mpiacc_cuda_xcopy_plan(&k, cs, cd), 0);
    if (first % k.ws || last % k.ws || (!k.src.dense && TS->unit % k.ws) || (!k.dst.dense && TD->unit % k.ws)) {
        fprintf(stderr, "%s: word %d does not divide the range [%lld,%lld) or the units %lld / %lld\n", name, k.ws,
                first, last, (long long)TS->unit, (long long)TD->unit);
        bad++;
    }
    if ((TS->contiguous && TS->size > 0 && !k.src.dense) || (TD->contiguous && TD->size > 0 && !k.dst.dense)) {
        fprintf(stderr, "%s: a contiguous side is not planned dense (%d/%d)\n", name, k.src.dense, k.dst.dense);
        bad++;
    }
    for (int variant = 0; variant < 2; variant++) {
        memcpy(dst, img, (size_t)dbytes);
        assert_int_equal(mpiacc_cuda_emulate_xcopy(&k, variant), 0);
        for (long long i = 0; i < dbytes; i++)
            if (dst[i] != exp[i]) {
                fprintf(stderr, "%s (variant %d, ws %d, dense %d/%d, range [%lld,%lld)): byte %lld is 0x%02x, "
                        "expected 0x%02x\n", name, variant, k.ws, k.src.dense, k.dst.dense, first, last, i - doff,
                        dst[i], exp[i]);
                bad++;
                break;
            }
    }
    {
        mpiacc_cuda_xrows_t g;
        if (mpiacc_cuda_xcopy_rows(&k, cs, cd, &g)) {
            rows_taken++;
            memcpy(dst, img, (size_t)dbytes);
            mpiacc_cuda_emulate_xrows(&g);
            for (long long i = 0; i < dbytes; i++)
                if (dst[i] != exp[i]) {
                    fprintf(stderr, "%s (rows: %lld x %lld B, pitches %lld / %lld): byte %lld is 0x%02x, expected "
                            "0x%02x\n", name, g.rows, g.width, g.spitch, g.dpitch, i - doff, dst[i], exp[i]);
                    bad++;
                    break;
                }
        }
    }
    if (plan) *plan = k;
    free(src), free(dst), free(img), free(exp);
    mpiacc_pack_type_release(TS);
    mpiacc_pack_type_release(TD);
    return bad;
}

static void directed(void **state)
{
    MPI_Datatype c256, v64, c64, v8, v24, st, ix;
    mpiacc_cuda_xcopy_t k;
    int bad = 0;
    (void)state;
    MPI_Type_contiguous(256, MPI_INT, &c256), MPI_Type_commit(&c256);
    MPI_Type_vector(64, 1, 2, MPI_INT, &v64), MPI_Type_commit(&v64);
    MPI_Type_contiguous(64, MPI_INT, &c64), MPI_Type_commit(&c64);
    MPI_Type_vector(8, 3, 5, MPI_DOUBLE, &v8), MPI_Type_commit(&v8);
    MPI_Type_vector(24, 1, 3, MPI_DOUBLE, &v24), MPI_Type_commit(&v24);
    {
        int bl[3] = {1, 3, 2};
        MPI_Aint dp[3] = {0, 8, 40};
        MPI_Datatype ts[3] = {MPI_CHAR, MPI_INT, MPI_SHORT};
        MPI_Type_create_struct(3, bl, dp, ts, &st), MPI_Type_commit(&st);
    }
    {
        int bl[3] = {5, 1, 11}, dp[3] = {3, 20, 40};
        MPI_Type_indexed(3, bl, dp, MPI_CHAR, &ix), MPI_Type_commit(&ix);
    }
    bad += one("contig->contig", c256, 1, c256, 1, 0, 1024, 64, 128, &k);
    if (!k.src.dense || !k.dst.dense || k.ws != 16) {
        fprintf(stderr, "contig->contig: plan dense %d/%d ws %d, expected dense both, ws 16\n", k.src.dense,
                k.dst.dense, k.ws);
        bad++;
    }
    bad += one("contig->contig partial", c256, 1, c256, 1, 36, 1000, 64, 67, &k);
    bad += one("vector->contig", v64, 1, c64, 1, 0, 256, 64, 64, &k);
    if (k.ws != 4 || k.src.dense || !k.dst.dense) {
        fprintf(stderr, "vector->contig: ws %d dense %d/%d, expected ws 4, dense dst only\n", k.ws, k.src.dense,
                k.dst.dense);
        bad++;
    }
    bad += one("contig->vector", c64, 2, v64, 2, 0, 512, 80, 64, NULL);
    bad += one("contig->vector middle", c64, 2, v64, 2, 100, 300, 80, 64, NULL);
    bad += one("vector x3 -> vector", v8, 3, v24, 3, 0, 576, 64, 64, NULL);
    bad += one("vector x3 -> vector partial", v8, 3, v24, 3, 8, 568, 64, 72, NULL);
    bad += one("struct x4 -> indexed", st, 4, ix, 4, 0, 4 * 11, 64, 65, NULL);
    bad += one("indexed x4 -> struct, odd range", ix, 4, st, 4, 3, 41, 66, 64, NULL);
    bad += one("struct -> bytes", st, 9, c256, 1, 0, 9 * 11, 64, 64, NULL);
    /* more threads than the emulated grid: the grid-stride loop */
    bad += one("vector x40 -> contig x10 (grid stride)", v64, 40, c256, 10, 0, 40 * 256, 64, 64, NULL);
    bad += one("contig x10 -> vector x40 (grid stride, cut)", c256, 10, v64, 40, 4, 40 * 256 - 12, 72, 64, NULL);
    MPI_Type_free(&c256), MPI_Type_free(&v64), MPI_Type_free(&c64), MPI_Type_free(&v8);
    MPI_Type_free(&v24), MPI_Type_free(&st), MPI_Type_free(&ix);
    if (bad) fail_msg("%d directed layout copies wrong", bad);
}

/* The rows geometry: vectors of byte blocks against vectors and
 * contiguous bytes (whole and partial ranges on row boundaries) are rows;
 * counts > 1, unequal blocks, ranges off a row boundary are not. */
static void rows(void **state)
{
    MPI_Datatype v8, v64, v8b, c1k, v64x;
    int bad = 0, r0;
    (void)state;
    MPI_Type_vector(128, 8, 512, MPI_BYTE, &v8), MPI_Type_commit(&v8);
    MPI_Type_vector(16, 64, 512, MPI_BYTE, &v64), MPI_Type_commit(&v64);
    MPI_Type_vector(128, 8, 24, MPI_BYTE, &v8b), MPI_Type_commit(&v8b);
    MPI_Type_contiguous(1024, MPI_BYTE, &c1k), MPI_Type_commit(&c1k);
    MPI_Type_vector(16, 16, 40, MPI_INT, &v64x), MPI_Type_commit(&v64x);
    r0 = rows_taken;
    bad += one("rows v8 -> v8", v8, 1, v8, 1, 0, 1024, 64, 64, NULL);
    bad += one("rows v8 -> v8 pitch 24", v8, 1, v8b, 1, 0, 1024, 64, 72, NULL);
    bad += one("rows v8 -> contig", v8, 1, c1k, 1, 0, 1024, 64, 64, NULL);
    bad += one("rows contig -> v64", c1k, 1, v64, 1, 0, 1024, 64, 64, NULL);
    bad += one("rows v64 -> contig partial", v64, 1, c1k, 1, 128, 640, 64, 80, NULL);
    bad += one("rows v64 ints -> contig", v64x, 1, c1k, 1, 0, 1024, 64, 64, NULL);
    if (rows_taken - r0 != 6) {
        fprintf(stderr, "rows: %d of 6 row layouts taken as rows\n", rows_taken - r0);
        bad++;
    }
    r0 = rows_taken;
    bad += one("not rows: v8 -> v64 (blocks differ)", v8, 1, v64, 1, 0, 1024, 64, 64, NULL);
    bad += one("not rows: v8 -> contig off a row", v8, 1, c1k, 1, 4, 1024, 64, 64, NULL);
    bad += one("not rows: v8 x2 -> contig x2", v8, 2, c1k, 2, 0, 2048, 64, 64, NULL);
    bad += one("not rows: contig -> contig", c1k, 1, c1k, 1, 0, 1024, 64, 64, NULL);
    if (rows_taken != r0) {
        fprintf(stderr, "rows: %d layouts that are not rows taken as rows\n", rows_taken - r0);
        bad++;
    }
    MPI_Type_free(&v8), MPI_Type_free(&v64), MPI_Type_free(&v8b), MPI_Type_free(&c1k), MPI_Type_free(&v64x);
    if (bad) fail_msg("%d rows checks wrong", bad);
}

static void variant_names(void **state)
{
    char name[64];
    int old;
    (void)state;
    assert_int_equal(mpiacc_cuda_ipc_variant_parse("base"), MPIACC_CUDA_IPCV_DEFAULT);
    assert_int_equal(mpiacc_cuda_ipc_variant_parse("none"), 0);
    assert_int_equal(mpiacc_cuda_ipc_variant_parse("flag+capq"), MPIACC_CUDA_IPCV_FLAG | MPIACC_CUDA_IPCV_CAPQ);
    assert_int_equal(mpiacc_cuda_ipc_variant_parse("kernel,rows,xflag"),
                     MPIACC_CUDA_IPCV_KERNEL | MPIACC_CUDA_IPCV_ROWS | MPIACC_CUDA_IPCV_XFLAG);
    assert_int_equal(mpiacc_cuda_ipc_variant_parse("noquery"), MPIACC_CUDA_IPCV_NOQUERY);
    assert_int_equal(mpiacc_cuda_ipc_variant_parse("flag+bogus"), -1);
    assert_int_equal(mpiacc_cuda_ipc_variant_parse("fla"), -1);
    mpiacc_cuda_ipc_variant_name(MPIACC_CUDA_IPCV_FLAG | MPIACC_CUDA_IPCV_ROWS, name, sizeof name);
    assert_string_equal(name, "flag+rows");
    mpiacc_cuda_ipc_variant_name(0, name, sizeof name);
    assert_string_equal(name, "none");
    old = mpiacc_cuda_set_ipc_variant(MPIACC_CUDA_IPCV_ALL | 0x4000);
    assert_int_equal(old, MPIACC_CUDA_IPCV_DEFAULT);
    assert_int_equal(mpiacc_cuda_set_ipc_variant(old), MPIACC_CUDA_IPCV_ALL);
}

static void random_pairs(void **state)
{
    int bad = 0, n = 0;
    (void)state;
    for (int i = 0; i < 300 && bad < 5; i++) {
        MPI_Datatype S = cu_rand_type(&rng, 3), D = cu_rand_type(&rng, 3);
        int ss = 0, ds = 0, cs = 1 + cu_r(&rng, 3), cd = 0;
        long long total = 0, first = 0, last;
        char name[64];
        if (!cu_is_named(S)) MPI_Type_commit(&S);
        if (!cu_is_named(D)) MPI_Type_commit(&D);
        MPI_Type_size(S, &ss), MPI_Type_size(D, &ds);
        if (ss > 0 && ds > 0) {
            total = (long long)cs * ss;
            cd = (int)((total + ds - 1) / ds);
        }
        if (ss > 0 && ds > 0 && !cu_xc_overlaps(D, cd)) { /* a receive layout writes each byte once */
            last = total;
            if (i % 3 == 1) { /* a piece of the message */
                first = cu_r(&rng, (int)total);
                last = first + 1 + cu_r(&rng, (int)(total - first));
            }
            snprintf(name, sizeof name, "random pair %d", i);
            bad += one(name, S, cs, D, cd, first, last, 64 + cu_r(&rng, 16), 64 + cu_r(&rng, 16), NULL);
            n++;
        }
        if (!cu_is_named(S)) MPI_Type_free(&S);
        if (!cu_is_named(D)) MPI_Type_free(&D);
    }
    if (bad) fail_msg("%d of %d random layout copies wrong", bad, n);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(directed), cmocka_unit_test(rows), cmocka_unit_test(variant_names),
        cmocka_unit_test(random_pairs),
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rng = mpiacc_test_seed();
    return mpiacc_test_end(MPIACC_TEST_RUN("cuda_xcopy_emul", tests, NULL, NULL));
}
