/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: random bytes -> MPI datatype construction (every
 * constructor, nesting, negative displacements, resized bounds, large-count
 * constructors; one input in four in "extreme" mode, where displacements,
 * strides, extents and counts reach 2^62) -> mpiacc decode -> canonicalise
 * -> serialise -> traverse.  Checked, trapping on any failure:
 *
 *  - analysis succeeds, or (only for a type built with huge values) fails
 *    with MPI_ERR_COUNT; size, extent and lb equal MPI's;
 *  - the touched bounds [data_lb, data_ub) are exactly the lowest and one
 *    past the highest byte the traversal visits (small types walked
 *    through), and lie within MPI's true bounds for ordinary types;
 *  - mpiacc_pack_span for the (possibly huge) count agrees with a 128-bit
 *    reference: the same bytes, or MPI_ERR_COUNT when they pass 64 bits,
 *    MPI_ERR_BUFFER when they lie more than MPIACC_PACK_SPAN_MAX apart; the
 *    CPU backend's call-time check agrees, and so does MPI_Pack_c through
 *    the CPU backend (host datatype with an MPIACC_EVENT flag): a failed
 *    span fails the call before any byte is touched;
 *  - only when the touched span and the packed size are small: packed
 *    bytes equal MPI_Pack's (whole and one range), MPI_Pack_c through the
 *    CPU backend too, and the unpacked buffer equals MPI_Unpack's for types
 *    whose bytes do not overlap.
 * No buffer of the type's size is ever allocated for a huge type.  See
 * fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "typegen.h"
#include "mpiacc.h"
#include "pack/pack.h"
#include "blob_overlaps.h"

#define SMALL ((MPI_Count)1 << 20) /* largest span / packed size actually packed */

static const mpiacc_backend_t *cpu; /* NULL when MPI_Init is not mpiacc's */
static int ready_flag = 1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    cpu = mpiacc_backend_get(MPIACC_KIND_HOST);
    return 0;
}

#define CHECK(c_)                      \
    do {                               \
        if (!(c_)) __builtin_trap();   \
    } while (0)

static int err_class(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

/* The bytes one element touches, walked through with the traversal's
 * runs: they must be exactly [data_lb, data_ub). */
static void check_bounds(const mpiacc_pack_type_t *t)
{
    MPI_Count lo = 0, hi = 0;
    if (t->size == 0) {
        CHECK(t->data_lb == 0 && t->data_ub == 0);
        return;
    }
    if (t->size > SMALL) return;
    for (MPI_Count p = 0; p < t->size;) {
        mpiacc_tv_i64 run, off = mpiacc_tv_locate(t->blob, p, &run);
        if (run > t->size - p) run = t->size - p;
        CHECK(run > 0);
        if (p == 0 || off < lo) lo = off;
        if (p == 0 || off + run > hi) hi = off + run;
        p += run;
    }
    CHECK(lo == t->data_lb && hi == t->data_ub);
}

/* mpiacc_pack_span against a 128-bit reference.  Returns 1 when the span
 * is valid (then *lo, *hi are set). */
static int check_span(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *lo, MPI_Count *hi)
{
    __int128 rep = (__int128)(count - 1) * t->extent, rlo = t->data_lb, rhi = t->data_ub;
    int want = MPI_SUCCESS, rc, cls;
    if (count > 0 && t->size > 0) {
        rlo += rep < 0 ? rep : 0;
        rhi += rep > 0 ? rep : 0;
        if (rep > INT64_MAX || rep < INT64_MIN || rlo < INT64_MIN || rhi > INT64_MAX) want = MPI_ERR_COUNT;
        else if (rhi - rlo > MPIACC_PACK_SPAN_MAX) want = MPI_ERR_BUFFER;
    } else {
        rlo = rhi = 0;
    }
    rc = mpiacc_pack_span(t, count, lo, hi);
    cls = err_class(rc);
    CHECK(cls == want);
    if (want == MPI_SUCCESS) CHECK(*lo == (MPI_Count)rlo && *hi == (MPI_Count)rhi);
    if (cpu && cpu->validate_span) { /* the CPU backend's call-time check */
        mpiacc_xfer_desc_t d = {.buf = NULL, .type = (mpiacc_pack_type_t *)t, .count = count};
        CHECK(err_class(cpu->validate_span(NULL, &d)) == want);
    }
    return want == MPI_SUCCESS;
}

/* A dup of ty that goes through the CPU backend (host datatype with an
 * MPIACC_EVENT flag); MPI_DATATYPE_NULL when mpiacc is not initialised. */
static MPI_Datatype host_tagged(MPI_Datatype ty)
{
    MPI_Datatype h = MPI_DATATYPE_NULL;
    if (!cpu || MPI_Type_dup(ty, &h) != MPI_SUCCESS) return MPI_DATATYPE_NULL;
    MPI_Type_set_attr(h, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    MPI_Type_set_attr(h, MPIACC_EVENT, &ready_flag);
    return h;
}

/* Whether p - lo (the buffer pointer for data at offset lo) would wrap
 * around the address space: a type whose small span lies far from its
 * buffer needs its memory at such an address, which this process cannot
 * provide (an application would use MPI_BOTTOM with absolute addresses). */
static int wraps(const void *p, MPI_Count lo)
{
    uintptr_t u = (uintptr_t)p;
    return lo > 0 ? u < (uintptr_t)lo : UINTPTR_MAX - u < (uintptr_t)(-(lo + 1)) + 1;
}

/* Pack / unpack of a small type against MPICH, host reference and the CPU
 * backend through MPI_Pack_c / MPI_Unpack_c. */
static void check_bytes(tg_src_t *src, MPI_Datatype ty, MPI_Datatype h, const mpiacc_pack_type_t *t,
                        MPI_Count count, MPI_Count lo, MPI_Count hi)
{
    MPI_Count total = count * t->size, span, pos = 0, mlo, mhi;
    if (!src->used_extreme) { /* MPI's true bounds hold ours */
        tg_bounds(ty, count, &mlo, &mhi);
        if (total > 0) CHECK(mlo <= lo && hi <= mhi);
    }
    span = hi > lo ? hi - lo : 1;
    unsigned char *in = malloc((size_t)span), *ref = malloc((size_t)total + 1), *mine = malloc((size_t)total + 1);
    unsigned char *d1 = calloc((size_t)span, 1), *d2 = calloc((size_t)span, 1);
    if (wraps(in, lo) || wraps(d1, lo) || wraps(d2, lo)) goto done;
    for (MPI_Count i = 0; i < span; i++) in[i] = (unsigned char)(i * 131 + 7);
    CHECK(MPI_Pack_c(in - lo, count, ty, ref, total + 1, &pos, MPI_COMM_SELF) == MPI_SUCCESS && pos == total);
    CHECK(mpiacc_pack_cpu_pack(t, in - lo, count, 0, total, mine) == MPI_SUCCESS);
    CHECK(memcmp(ref, mine, (size_t)total) == 0);
    if (h != MPI_DATATYPE_NULL) {
        pos = 0;
        memset(mine, 0, (size_t)total + 1);
        CHECK(MPI_Pack_c(in - lo, count, h, mine, total + 1, &pos, MPI_COMM_SELF) == MPI_SUCCESS && pos == total);
        CHECK(memcmp(ref, mine, (size_t)total) == 0);
    }
    if (total > 0) {
        MPI_Count f = (MPI_Count)tg_next(src, (uint64_t)total);
        MPI_Count l = f + (MPI_Count)tg_next(src, (uint64_t)(total - f + 1));
        CHECK(mpiacc_pack_cpu_pack(t, in - lo, count, f, l, mine) == MPI_SUCCESS);
        CHECK(memcmp(ref + f, mine, (size_t)(l - f)) == 0);
        int ov = blob_overlaps(t, count, lo, span);
        CHECK(ov >= 0);
        if (!ov) {
            pos = 0;
            CHECK(MPI_Unpack_c(ref, total, &pos, d1 - lo, count, ty, MPI_COMM_SELF) == MPI_SUCCESS);
            CHECK(mpiacc_pack_cpu_unpack(t, d2 - lo, count, 0, total, ref) == MPI_SUCCESS);
            CHECK(memcmp(d1, d2, (size_t)span) == 0);
            if (h != MPI_DATATYPE_NULL) {
                memset(d2, 0, (size_t)span);
                pos = 0;
                CHECK(MPI_Unpack_c(ref, total, &pos, d2 - lo, count, h, MPI_COMM_SELF) == MPI_SUCCESS);
                CHECK(memcmp(d1, d2, (size_t)span) == 0);
            }
        }
    }
done:
    free(in), free(ref), free(mine), free(d1), free(d2);
}

/* A count: small, or (extreme mode) up to 2^62. */
static MPI_Count pick_count(tg_src_t *src)
{
    if (src->extreme && tg_next(src, 2) == 0) {
        src->used_extreme = 1;
        return ((MPI_Count)1 << tg_next(src, 63)) + (MPI_Count)tg_next(src, 8);
    }
    return 1 + (MPI_Count)tg_next(src, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_src_t src = {.state = 0xcbf29ce484222325ull, .data = data, .len = size, .large = 1, .max_size = 4096,
                    .max_span = 16384};
    int rc, depth;
    MPI_Count count, lo = 0, hi = 0, total, bytes, pos = 0;
    MPI_Datatype ty, h;
    mpiacc_pack_type_t *t = NULL;
    unsigned char scratch[16];

    for (size_t i = 0; i < size; i++) src.state = (src.state ^ data[i]) * 0x100000001b3ull; /* FNV-1a */
    src.extreme = tg_next(&src, 4) == 0;
    depth = (int)tg_next(&src, 6);
    count = pick_count(&src);
    ty = tg_make(&src, depth);
    if (tg_combiner(ty) != MPI_COMBINER_NAMED) MPI_Type_commit(&ty);
    rc = mpiacc_pack_type_analyze(ty, &t);
    if (rc != MPI_SUCCESS) { /* only a type built with huge values may be refused, as too large */
        CHECK(src.used_extreme && err_class(rc) == MPI_ERR_COUNT);
        tg_free(&ty);
        return 0;
    }
    {
        MPI_Count msize, lb, ext;
        CHECK(MPI_Type_size_c(ty, &msize) == MPI_SUCCESS && msize == t->size);
        CHECK(MPI_Type_get_extent_c(ty, &lb, &ext) == MPI_SUCCESS && t->extent == ext && t->lb == lb);
        CHECK(t->size == mpiacc_tv_size(t->blob) && t->extent == mpiacc_tv_extent(t->blob));
    }
    check_bounds(t);
    h = host_tagged(ty);
    if (check_span(t, count, &lo, &hi)) {
        int over = __builtin_mul_overflow(count, t->size, &total) || total > ((MPI_Count)1 << 62);
        if (!over && total <= SMALL && hi - lo <= SMALL) {
            check_bytes(&src, ty, h, t, count, lo, hi);
        } else if (over && h != MPI_DATATYPE_NULL) { /* packed size past 2^62: refused as a count */
            rc = MPI_Pack_c(scratch, count, h, scratch, (MPI_Count)1 << 62, &pos, MPI_COMM_SELF);
            CHECK(err_class(rc) == MPI_ERR_COUNT && pos == 0);
        }
    } else if (h != MPI_DATATYPE_NULL && !__builtin_mul_overflow(count, t->size, &bytes) &&
               bytes <= ((MPI_Count)1 << 62)) {
        /* the call fails before touching a byte: no buffer of that size */
        rc = MPI_Pack_c(scratch, count, h, scratch, bytes, &pos, MPI_COMM_SELF);
        CHECK(err_class(rc) == MPI_ERR_COUNT || err_class(rc) == MPI_ERR_BUFFER);
        CHECK(pos == 0);
    }
    if (h != MPI_DATATYPE_NULL) MPI_Type_free(&h);
    mpiacc_pack_type_release(t);
    tg_free(&ty);
    return 0;
}
