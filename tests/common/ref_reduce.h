/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ref_reduce.h: the host reference of the on-device reductions (the IPC
 * table's import_reduce, src/core/backend_ipc.h), for tests and for test
 * stand-ins of that table (tests/coll).  Header only, tests only: not part
 * of libmpiacc.
 *
 * ref_reduce(type, op, src, n, count, dst) computes, for k in [0, count):
 *     dst[k] = ((src[0][k] op src[1][k]) op src[2][k]) ... op src[n-1][k]
 * element by element (each element read from every source before it is
 * written, so dst may alias a source; pointers need no alignment).  The
 * element operations are MPICH's with acc = the running result and x =
 * the next source, i.e. what MPI_Reduce_local(x, acc) computes (test
 * test_ref_reduce checks it): MIN acc < x ? acc : x, MAX acc > x ? acc : x,
 * integer SUM/PROD wrapping, logical operations 0 or 1.
 *
 * ref_reduce_supported(type, op) is the set of pairs the CUDA backend's
 * reduce_supported accepts (written independently of it, from the MPI
 * standard's type classes; test_cuda_reduce compares the two): C integers
 * (MPI_SIGNED_CHAR / MPI_UNSIGNED_CHAR included) every predefined
 * arithmetic, logical and bitwise operation; MPI_FLOAT, MPI_DOUBLE SUM,
 * PROD, MIN, MAX; MPI_BYTE, MPI_CHAR BAND, BOR, BXOR; MPI_C_BOOL LAND,
 * LOR, LXOR; MPI_AINT, MPI_OFFSET, MPI_COUNT all but the logical ones.
 */
#ifndef MPIACC_TEST_REF_REDUCE_H_INCLUDED
#define MPIACC_TEST_REF_REDUCE_H_INCLUDED

#include <stdint.h>
#include <string.h>

#include <mpi.h>

#ifdef __cplusplus
#define REF_RD_BOOL bool /* also included by CUDA host code (C++) */
#else
#define REF_RD_BOOL _Bool
#endif

/* Element kinds of the reference. */
enum { REF_RD_S, REF_RD_U, REF_RD_F }; /* signed, unsigned integer, floating point */
enum { REF_RD_C_INT, REF_RD_C_FLOAT, REF_RD_C_BITS, REF_RD_C_BOOL, REF_RD_C_MULTI };

typedef struct ref_rd_type {
    MPI_Datatype t;
    int num, size, cls; /* REF_RD_S/U/F, bytes, class */
    const char *name;
} ref_rd_type_t;

#define REF_RD_T(t_, num_, ctype_, cls_) {t_, num_, (int)sizeof(ctype_), cls_, #t_}

/* The predefined types the reference knows (every one import_reduce may get). */
static inline int ref_reduce_types(ref_rd_type_t *out, int cap)
{
    const ref_rd_type_t tab[] = {
        REF_RD_T(MPI_SIGNED_CHAR, REF_RD_S, signed char, REF_RD_C_INT),
        REF_RD_T(MPI_UNSIGNED_CHAR, REF_RD_U, unsigned char, REF_RD_C_INT),
        REF_RD_T(MPI_SHORT, REF_RD_S, short, REF_RD_C_INT),
        REF_RD_T(MPI_UNSIGNED_SHORT, REF_RD_U, unsigned short, REF_RD_C_INT),
        REF_RD_T(MPI_INT, REF_RD_S, int, REF_RD_C_INT),
        REF_RD_T(MPI_UNSIGNED, REF_RD_U, unsigned, REF_RD_C_INT),
        REF_RD_T(MPI_LONG, REF_RD_S, long, REF_RD_C_INT),
        REF_RD_T(MPI_UNSIGNED_LONG, REF_RD_U, unsigned long, REF_RD_C_INT),
        REF_RD_T(MPI_LONG_LONG_INT, REF_RD_S, long long, REF_RD_C_INT),
        REF_RD_T(MPI_LONG_LONG, REF_RD_S, long long, REF_RD_C_INT),
        REF_RD_T(MPI_UNSIGNED_LONG_LONG, REF_RD_U, unsigned long long, REF_RD_C_INT),
        REF_RD_T(MPI_INT8_T, REF_RD_S, int8_t, REF_RD_C_INT),
        REF_RD_T(MPI_INT16_T, REF_RD_S, int16_t, REF_RD_C_INT),
        REF_RD_T(MPI_INT32_T, REF_RD_S, int32_t, REF_RD_C_INT),
        REF_RD_T(MPI_INT64_T, REF_RD_S, int64_t, REF_RD_C_INT),
        REF_RD_T(MPI_UINT8_T, REF_RD_U, uint8_t, REF_RD_C_INT),
        REF_RD_T(MPI_UINT16_T, REF_RD_U, uint16_t, REF_RD_C_INT),
        REF_RD_T(MPI_UINT32_T, REF_RD_U, uint32_t, REF_RD_C_INT),
        REF_RD_T(MPI_UINT64_T, REF_RD_U, uint64_t, REF_RD_C_INT),
        REF_RD_T(MPI_FLOAT, REF_RD_F, float, REF_RD_C_FLOAT),
        REF_RD_T(MPI_DOUBLE, REF_RD_F, double, REF_RD_C_FLOAT),
        REF_RD_T(MPI_BYTE, REF_RD_U, unsigned char, REF_RD_C_BITS),
        REF_RD_T(MPI_CHAR, REF_RD_U, unsigned char, REF_RD_C_BITS),
        REF_RD_T(MPI_C_BOOL, REF_RD_U, REF_RD_BOOL, REF_RD_C_BOOL),
        REF_RD_T(MPI_AINT, REF_RD_S, MPI_Aint, REF_RD_C_MULTI),
        REF_RD_T(MPI_OFFSET, REF_RD_S, MPI_Offset, REF_RD_C_MULTI),
        REF_RD_T(MPI_COUNT, REF_RD_S, MPI_Count, REF_RD_C_MULTI),
    };
    int n = (int)(sizeof tab / sizeof tab[0]);
    for (int i = 0; i < n && i < cap; i++) out[i] = tab[i];
    return n;
}
#define REF_RD_MAXTYPES 32

static inline int ref_reduce_type(MPI_Datatype t, ref_rd_type_t *out)
{
    ref_rd_type_t tab[REF_RD_MAXTYPES];
    int n = ref_reduce_types(tab, REF_RD_MAXTYPES);
    if (t == MPI_DATATYPE_NULL) return 0;
    for (int i = 0; i < n; i++)
        if (tab[i].t == t) {
            *out = tab[i];
            return 1;
        }
    return 0;
}

/* The ten operations, in the order of the checks below. */
static inline MPI_Op ref_reduce_op(int i)
{
    const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    return i >= 0 && i < 10 ? ops[i] : MPI_OP_NULL;
}
static inline const char *ref_reduce_op_name(int i)
{
    static const char *names[] = {"SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR"};
    return i >= 0 && i < 10 ? names[i] : "?";
}
#define REF_RD_NOPS 10

/* Index of op among ref_reduce_op (-1: not one of them). */
static inline int ref_reduce_op_index(MPI_Op op)
{
    for (int i = 0; i < REF_RD_NOPS; i++)
        if (ref_reduce_op(i) == op) return i;
    return -1;
}

static inline int ref_reduce_supported(MPI_Datatype type, MPI_Op op)
{
    ref_rd_type_t t;
    int o = ref_reduce_op_index(op);
    if (o < 0 || !ref_reduce_type(type, &t)) return 0;
    if (t.num == REF_RD_F && t.size != 4 && t.size != 8) return 0;
    switch (t.cls) {
    case REF_RD_C_INT: return 1;
    case REF_RD_C_FLOAT: return o <= 3;            /* SUM PROD MIN MAX */
    case REF_RD_C_BITS: return o >= 7;             /* BAND BOR BXOR */
    case REF_RD_C_BOOL: return o >= 4 && o <= 6;   /* LAND LOR LXOR */
    default: return o <= 3 || o >= 7;              /* multi-language: not the logical ones */
    }
}

/* count elements of t at p (any alignment) from seed, deterministic per
 * (seed, element): values every supported operation takes (0/1 for
 * MPI_C_BOOL; finite floating-point values in [-4, 4) with some exact +0
 * and -0; integers with some zeros for the logical operations). */
static inline void ref_reduce_fill(const ref_rd_type_t *t, void *p, long long count, uint64_t seed)
{
    for (long long k = 0; k < count; k++) {
        uint64_t r = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(k + 1); /* splitmix64 */
        unsigned char *e = (unsigned char *)p + k * t->size;
        r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ull;
        r = (r ^ (r >> 27)) * 0x94D049BB133111EBull;
        r ^= r >> 31;
        if (t->cls == REF_RD_C_BOOL) {
            REF_RD_BOOL b = (r & 3) != 0;
            memcpy(e, &b, 1);
        } else if (t->num == REF_RD_F) {
            double d = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 8.0;
            if ((r & 15) == 0) d = 0.0;
            if ((r & 15) == 1) d = -0.0;
            if (t->size == 4) {
                float f = (float)d;
                memcpy(e, &f, 4);
            } else {
                memcpy(e, &d, 8);
            }
        } else {
            if ((r & 7) == 0) r = 0;
            memcpy(e, &r, (size_t)t->size);
        }
    }
}

/* One element operation on a C type (A: the unsigned type the arithmetic uses). */
#define REF_RD_APPLY(T_, A_, o_, acc_, x_)                                              \
    do {                                                                                \
        T_ a_ = (acc_), b_ = (x_);                                                      \
        switch (o_) {                                                                   \
        case 0: (acc_) = (T_)((A_)a_ + (A_)b_); break;                                  \
        case 1: (acc_) = (T_)((A_)a_ * (A_)b_); break;                                  \
        case 2: (acc_) = a_ < b_ ? a_ : b_; break;                                      \
        case 3: (acc_) = a_ > b_ ? a_ : b_; break;                                      \
        case 4: (acc_) = (T_)(a_ != 0 && b_ != 0); break;                               \
        case 5: (acc_) = (T_)(a_ != 0 || b_ != 0); break;                               \
        case 6: (acc_) = (T_)((a_ != 0) != (b_ != 0)); break;                           \
        case 7: (acc_) = (T_)((A_)a_ & (A_)b_); break;                                  \
        case 8: (acc_) = (T_)((A_)a_ | (A_)b_); break;                                  \
        default: (acc_) = (T_)((A_)a_ ^ (A_)b_); break;                                 \
        }                                                                               \
    } while (0)

#define REF_RD_FAPPLY(T_, o_, acc_, x_)                   \
    do {                                                  \
        T_ a_ = (acc_), b_ = (x_);                        \
        switch (o_) {                                     \
        case 0: (acc_) = a_ + b_; break;                  \
        case 1: (acc_) = a_ * b_; break;                  \
        case 2: (acc_) = a_ < b_ ? a_ : b_; break;        \
        default: (acc_) = a_ > b_ ? a_ : b_; break;       \
        }                                                 \
    } while (0)

#define REF_RD_FOLD(T_, APPLY_)                                                         \
    do {                                                                                \
        for (long long k_ = 0; k_ < count; k_++) {                                      \
            T_ acc_, x_;                                                                \
            memcpy(&acc_, (const char *)src[0] + k_ * (long long)sizeof(T_), sizeof(T_)); \
            for (int i_ = 1; i_ < n; i_++) {                                            \
                memcpy(&x_, (const char *)src[i_] + k_ * (long long)sizeof(T_), sizeof(T_)); \
                APPLY_;                                                                 \
            }                                                                           \
            memcpy((char *)dst + k_ * (long long)sizeof(T_), &acc_, sizeof(T_));        \
        }                                                                               \
    } while (0)

/* Returns 1 after computing dst; 0 (nothing written) when (type, op) is not
 * supported or n < 1. */
static inline int ref_reduce(MPI_Datatype type, MPI_Op op, const void *const *src, int n, long long count, void *dst)
{
    ref_rd_type_t t;
    int o = ref_reduce_op_index(op);
    if (n < 1 || !ref_reduce_supported(type, op) || !ref_reduce_type(type, &t)) return 0;
    if (t.num == REF_RD_F) {
        if (t.size == 4) REF_RD_FOLD(float, REF_RD_FAPPLY(float, o, acc_, x_));
        else REF_RD_FOLD(double, REF_RD_FAPPLY(double, o, acc_, x_));
        return 1;
    }
    /* integers: signedness matters only for MIN / MAX */
    switch (t.size * (t.num == REF_RD_S ? -1 : 1)) {
    case -1: REF_RD_FOLD(int8_t, REF_RD_APPLY(int8_t, unsigned, o, acc_, x_)); break;
    case 1: REF_RD_FOLD(uint8_t, REF_RD_APPLY(uint8_t, unsigned, o, acc_, x_)); break;
    case -2: REF_RD_FOLD(int16_t, REF_RD_APPLY(int16_t, unsigned, o, acc_, x_)); break;
    case 2: REF_RD_FOLD(uint16_t, REF_RD_APPLY(uint16_t, unsigned, o, acc_, x_)); break;
    case -4: REF_RD_FOLD(int32_t, REF_RD_APPLY(int32_t, uint32_t, o, acc_, x_)); break;
    case 4: REF_RD_FOLD(uint32_t, REF_RD_APPLY(uint32_t, uint32_t, o, acc_, x_)); break;
    case -8: REF_RD_FOLD(int64_t, REF_RD_APPLY(int64_t, uint64_t, o, acc_, x_)); break;
    case 8: REF_RD_FOLD(uint64_t, REF_RD_APPLY(uint64_t, uint64_t, o, acc_, x_)); break;
    default: return 0;
    }
    return 1;
}

#endif
