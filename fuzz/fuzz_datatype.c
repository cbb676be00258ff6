/*
 * libFuzzer target: random bytes -> MPI datatype construction (every
 * constructor, nesting, negative displacements, resized bounds, large-count
 * constructors) -> mpiacc decode -> canonicalise -> serialise -> traverse,
 * checked against MPI_Pack byte for byte (whole and one random range) and
 * against MPI_Unpack for non-overlapping types.  Any analysis failure or
 * difference traps.  See fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "typegen.h"
#include "pack/pack.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return 0;
}

static int overlapping(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count lo, MPI_Count span)
{
    unsigned char *seen = calloc((size_t)span, 1);
    int ov = 0;
    for (MPI_Count p = 0; p < count * t->size && !ov; p++) ov = seen[mpiacc_tv_offset(t->blob, p) - lo]++;
    free(seen);
    return ov;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_src_t src = {.data = data, .len = size, .large = 1, .max_size = 4096, .max_span = 16384};
    int depth = (int)tg_next(&src, 6), comb, ni, na, nd, pos = 0;
    MPI_Count count = 1 + (MPI_Count)tg_next(&src, 4), tlb, text, lb, ext, lo, hi, span, total;
    MPI_Datatype ty = tg_make(&src, depth);
    mpiacc_pack_type_t *t;

    MPI_Type_get_envelope(ty, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_NAMED) MPI_Type_commit(&ty);
    if (mpiacc_pack_type_analyze(ty, &t) != MPI_SUCCESS) __builtin_trap();
    MPI_Type_get_true_extent_c(ty, &tlb, &text);
    MPI_Type_get_extent_c(ty, &lb, &ext);
    if (t->size != mpiacc_tv_size(t->blob) || t->extent != ext || t->lb != lb) __builtin_trap();
    lo = tlb + (ext < 0 ? (count - 1) * ext : 0);
    hi = tlb + text + (ext > 0 ? (count - 1) * ext : 0);
    span = hi > lo ? hi - lo : 1;
    total = count * t->size;
    unsigned char *in = malloc((size_t)span), *ref = malloc((size_t)total + 1), *mine = malloc((size_t)total + 1);
    unsigned char *d1 = calloc((size_t)span, 1), *d2 = calloc((size_t)span, 1);
    for (MPI_Count i = 0; i < span; i++) in[i] = (unsigned char)(i * 131 + 7);
    MPI_Pack(in - lo, (int)count, ty, ref, (int)total + 1, &pos, MPI_COMM_SELF);
    if (mpiacc_pack_cpu_pack(t, in - lo, count, 0, total, mine) != MPI_SUCCESS || memcmp(ref, mine, (size_t)total))
        __builtin_trap();
    if (total > 0) {
        MPI_Count f = (MPI_Count)tg_next(&src, (uint64_t)total);
        MPI_Count l = f + (MPI_Count)tg_next(&src, (uint64_t)(total - f + 1));
        if (mpiacc_pack_cpu_pack(t, in - lo, count, f, l, mine) != MPI_SUCCESS ||
            memcmp(ref + f, mine, (size_t)(l - f)))
            __builtin_trap();
        if (!overlapping(t, count, lo, span)) {
            pos = 0;
            MPI_Unpack(ref, (int)total, &pos, d1 - lo, (int)count, ty, MPI_COMM_SELF);
            if (mpiacc_pack_cpu_unpack(t, d2 - lo, count, 0, total, ref) != MPI_SUCCESS ||
                memcmp(d1, d2, (size_t)span))
                __builtin_trap();
        }
    }
    free(in), free(ref), free(mine), free(d1), free(d2);
    mpiacc_pack_type_release(t);
    tg_free(&ty);
    return 0;
}
