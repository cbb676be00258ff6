/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * The rect strategy's plan (ocl_rect.c), without a device: for many random
 * strided datatypes, counts, ranges and packed sides (host staging, or a
 * packed cl_mem at odd MPI_Pack positions), every planned command is checked
 * against the rules written out again here (the OpenCL 3.0 argument rules
 * plus the stricter ones the plan promises: every origin inside its pitch,
 * whole pitches inside the buffer), and the commands, executed on host
 * arrays the way the specification defines a rect copy, must produce
 * exactly MPI_Pack's bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "opencl/ocl.h"
#include "ocl_types.h"
#include "ocl_watchdog.h"

static int rank;

/* The rules for one side, independently of ocl_rect.c; size < 0: host. */
static void check_side(const size_t o[3], const size_t rg[3], size_t row, size_t slice, long long size)
{
    assert_true(rg[0] >= 1 && rg[1] >= 1 && rg[2] >= 1);
    assert_true(row >= rg[0]);
    assert_true(o[0] + rg[0] <= row);
    assert_true(slice % row == 0);
    assert_true(slice >= rg[1] * row);
    assert_true(o[1] + rg[1] <= slice / row);
    assert_true(row <= 0x7fffffffu && slice <= 0x7fffffffu);
    if (size >= 0) {
        size_t lin = o[2] * slice + o[1] * row + o[0];
        /* the specification's bound, and the whole-pitch one */
        assert_true(lin + (rg[2] - 1) * slice + (rg[1] - 1) * row + rg[0] <= (size_t)size);
        assert_true(lin + rg[2] * slice <= (size_t)size);
    }
}

/* Runs the commands on host arrays: buf -> packed side. */
static void execute(const mpiacc_ocl_rcmd_t *c, int n, const unsigned char *buf, unsigned char *pk, int host)
{
    for (int i = 0; i < n; i++, c++) {
        if (c->linear) {
            memcpy(pk + (host ? (size_t)c->poff : c->po[0]), buf + c->bo[0], c->bytes);
            continue;
        }
        for (size_t z = 0; z < c->region[2]; z++)
            for (size_t y = 0; y < c->region[1]; y++) {
                size_t b = (c->bo[2] + z) * c->bslice + (c->bo[1] + y) * c->brow + c->bo[0];
                size_t p = (c->po[2] + z) * c->pslice + (c->po[1] + y) * c->prow + c->po[0];
                memcpy(pk + (host ? (size_t)c->poff : 0) + p, buf + b, c->region[0]);
            }
    }
}

static long long stats_cases, stats_planned, stats_cmds;

/* One datatype: several ranges and packed sides. */
static void one_type(MPI_Datatype dt, int count, uint64_t *st)
{
    mpiacc_pack_type_t *t = NULL;
    mpiacc_ocl_rect_t r;
    mpiacc_ocl_rcmd_t cmds[MPIACC_OCL_RECT_MAXCMD];
    size_t span = span_of(dt, count);
    int psize = 0, pos = 0;
    unsigned char *buf, *want, *got;

    assert_int_equal(mpiacc_pack_type_analyze(dt, &t), MPI_SUCCESS);
    if (t->size == 0 || t->contiguous || !mpiacc_ocl_rect_plan(t, count, &r) || r.nd == 0) {
        mpiacc_pack_type_release(t);
        return;
    }
    buf = malloc(span);
    fill_pattern(buf, span, (unsigned)count);
    MPI_Pack_size(count, dt, MPI_COMM_SELF, &psize);
    want = malloc((size_t)psize + 1);
    MPI_Pack(buf, count, dt, want, psize, &pos, MPI_COMM_SELF);
    got = malloc((size_t)pos + 3 * (size_t)r.blk + 8);
    for (int k = 0; k < 8; k++) {
        long long rows = pos / r.blk, a = (long long)(mpiacc_test_rand(st) % (uint64_t)(rows + 1)),
                  b = (long long)(mpiacc_test_rand(st) % (uint64_t)(rows + 1)), first, last, pkoff, pksize;
        int host = k % 2 == 0, n;
        if (k == 0) a = 0, b = rows; /* the whole message */
        if (a > b) { long long c = a; a = b; b = c; }
        if (a == b) continue;
        first = a * r.blk;
        last = b * r.blk;
        /* MPI_Pack into a cl_mem at any position, odd ones included */
        pkoff = host ? 0 : (long long)(mpiacc_test_rand(st) % (uint64_t)(3 * r.blk + 5));
        pksize = host ? -1 : pkoff + (last - first) + (long long)(mpiacc_test_rand(st) % 3);
        n = mpiacc_ocl_rect_cmds(&r, first, last, (cl_long)span, pkoff, pksize, cmds, MPIACC_OCL_RECT_MAXCMD);
        stats_cases++;
        /* host side, or a packed cl_mem at a row-aligned offset: a 1-D shape
         * always has a plan */
        if (r.nd == 1 && (host || pkoff % r.blk == 0) && (r.start % r.s[0]) + r.blk <= r.s[0])
            assert_true(n > 0);
        if (n == 0) continue;
        stats_planned++;
        stats_cmds += n;
        assert_true(n <= MPIACC_OCL_RECT_MAXCMD);
        for (int i = 0; i < n; i++) {
            const mpiacc_ocl_rcmd_t *c = &cmds[i];
            assert_true(mpiacc_ocl_rcmd_ok(c, (cl_long)span, pksize));
            if (c->linear) {
                assert_true(c->bytes > 0 && c->bo[0] + c->bytes <= span);
                if (!host) assert_true(c->po[0] + c->bytes <= (size_t)pksize);
                continue;
            }
            check_side(c->bo, c->region, c->brow, c->bslice, (long long)span);
            if (host) assert_true(c->po[0] == 0 && c->po[1] == 0 && c->po[2] == 0);
            check_side(c->po, c->region, c->prow, c->pslice, host ? -1 : pksize);
        }
        memset(got, 0xee, (size_t)pos + 3 * (size_t)r.blk + 8);
        execute(cmds, n, buf, got, host);
        if (memcmp(got + (host ? 0 : pkoff), want + first, (size_t)(last - first)) != 0)
            fail_msg("data differ: blk %lld nd %d n %lld,%lld s %lld,%lld start %lld, range [%lld,%lld), pkoff %lld, "
                     "%s", (long long)r.blk, r.nd, (long long)r.n[0], (long long)r.n[1], (long long)r.s[0],
                     (long long)r.s[1], (long long)r.start, first, last, pkoff, host ? "host" : "cl_mem");
    }
    free(buf);
    free(want);
    free(got);
    mpiacc_pack_type_release(t);
}

static MPI_Datatype committed(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

/* Vectors, resized vectors, 2-D and 3-D subarrays with random shapes. */
static void strided_shapes(void **state)
{
    uint64_t st = mpiacc_test_seed() ^ 0x5eed;
    MPI_Datatype base[] = {MPI_BYTE, MPI_SHORT, MPI_INT, MPI_DOUBLE};
    for (int i = 0; i < 3000; i++) {
        MPI_Datatype b = base[mpiacc_test_rand(&st) % 4], t, v;
        int kind = (int)(mpiacc_test_rand(&st) % 4), count = 1 + (int)(mpiacc_test_rand(&st) % 3);
        int nb = 1 + (int)(mpiacc_test_rand(&st) % 40), bl = 1 + (int)(mpiacc_test_rand(&st) % 24);
        int stride = bl + (int)(mpiacc_test_rand(&st) % 40);
        if (kind == 0) {
            MPI_Type_vector(nb, bl, stride, b, &t);
        } else if (kind == 1) {
            MPI_Aint lb, ext;
            MPI_Type_vector(nb, bl, stride, b, &v);
            MPI_Type_get_extent(b, &lb, &ext);
            MPI_Type_create_resized(v, 0, (MPI_Aint)(nb * stride + (int)(mpiacc_test_rand(&st) % 3) * stride) * ext,
                                    &t);
            MPI_Type_free(&v);
        } else {
            int nd = kind == 2 ? 2 : 3, sz[3], sub[3], off[3];
            for (int d = 0; d < nd; d++) {
                sz[d] = 1 + (int)(mpiacc_test_rand(&st) % 12);
                sub[d] = 1 + (int)(mpiacc_test_rand(&st) % (uint64_t)sz[d]);
                off[d] = (int)(mpiacc_test_rand(&st) % (uint64_t)(sz[d] - sub[d] + 1));
            }
            MPI_Type_create_subarray(nd, sz, sub, off, MPI_ORDER_C, b, &t);
        }
        t = committed(t);
        one_type(t, count, &st);
        MPI_Type_free(&t);
    }
    if (rank == 0)
        printf("strided shapes: %lld ranges, %lld planned as rect, %.2f commands each\n", stats_cases, stats_planned,
               stats_planned ? (double)stats_cmds / (double)stats_planned : 0.0);
    assert_true(stats_planned > stats_cases / 2);
}

/* The engine's random generator (every constructor): those that fold to a
 * rect shape. */
static void random_types(void **state)
{
    uint64_t seed = mpiacc_test_seed(), st = seed ^ 0xabc;
    tg_src_t src = {.state = seed, .max_size = 1 << 14, .max_span = 1 << 18};
    for (int i = 0; i < 1500; i++) {
        int count = 1 + (int)(mpiacc_test_rand(&st) % 3);
        MPI_Datatype raw, dt = random_placed(&src, count, &raw);
        one_type(dt, count, &st);
        MPI_Type_free(&dt);
        tg_free(&raw);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(strided_shapes), cmocka_unit_test(random_types)};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wd_arm(argv[0], rank);
    return mpiacc_test_end(MPIACC_TEST_RUN("opencl_rect", tests, NULL, NULL));
}
