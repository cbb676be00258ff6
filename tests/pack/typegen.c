/* SPDX-License-Identifier: BSD-3-Clause */
/* typegen.c: random datatypes for the corpus tests and the fuzz target. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "typegen.h"

uint64_t tg_next(tg_src_t *s, uint64_t n)
{
    uint64_t z;
    if (n <= 1) return 0;
    if (s->data && s->pos < s->len) {
        z = 0;
        for (int i = 0; i < 2; i++) z = (z << 8) | (s->pos < s->len ? s->data[s->pos++] : 0);
        return z % n;
    }
    z = (s->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (z ^ (z >> 31)) % n;
}

int64_t tg_range(tg_src_t *s, int64_t lo, int64_t hi) { return lo + (int64_t)tg_next(s, (uint64_t)(hi - lo + 1)); }

int tg_combiner(MPI_Datatype t)
{
    MPI_Count ni, na, nc, nd;
    int comb = MPI_COMBINER_NAMED;
    MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb);
    return comb;
}

int tg_is_large(MPI_Datatype t)
{
    MPI_Count ni, na, nc = 0, nd;
    int comb;
    MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb);
    return nc > 0;
}

static int is_named(MPI_Datatype t) { return tg_combiner(t) == MPI_COMBINER_NAMED; }

void tg_free(MPI_Datatype *t)
{
    if (*t != MPI_DATATYPE_NULL && !is_named(*t)) MPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

/* Wrapping arithmetic: in extreme mode the values fed to MPI may be
 * anything (a wrapped one is just another value to try). */
static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

void tg_bounds(MPI_Datatype t, MPI_Count count, MPI_Count *lo, MPI_Count *hi)
{
    MPI_Count lb, ext, tlb, text, rep;
    MPI_Type_get_extent_c(t, &lb, &ext);
    MPI_Type_get_true_extent_c(t, &tlb, &text);
    rep = count > 1 ? wmul(count - 1, ext) : 0;
    *lo = wadd(tlb, rep < 0 ? rep : 0);
    *hi = wadd(wadd(tlb, text), rep > 0 ? rep : 0);
    if (*hi < *lo) *hi = *lo;
}

long tg_corpus_size(long ci, long longrun)
{
    const char *n = getenv("MPIACC_TEST_NTYPES"), *l = getenv("MPIACC_TEST_LONG");
    if (n && *n) return atol(n);
    if (l && *l && strcmp(l, "0") != 0) return longrun;
    return ci;
}

const char *tg_combiner_name(MPI_Datatype t)
{
    int comb = tg_combiner(t);
    static const char *names[] = {"?", "named", "dup", "contiguous", "vector", "hvector_integer", "hvector",
                                  "indexed", "hindexed_integer", "hindexed", "indexed_block", "struct_integer",
                                  "struct", "subarray", "darray", "f90_real", "f90_complex", "f90_integer",
                                  "resized", "hindexed_block", "value_index"};
    return comb >= 0 && comb < (int)(sizeof names / sizeof names[0]) ? names[comb] : "?";
}

/* tg_describe's writer: appends to buf[*k, n) (stops at the end). */
static void put(char *buf, size_t n, size_t *k, const char *fmt, ...)
{
    va_list ap;
    int w;
    if (*k + 1 >= n) return;
    va_start(ap, fmt);
    w = vsnprintf(buf + *k, n - *k, fmt, ap);
    va_end(ap);
    *k = w < 0 ? n : *k + (size_t)w >= n ? n - 1 : *k + (size_t)w;
}

static void describe(MPI_Datatype t, char *buf, size_t n, size_t *k, int depth)
{
    MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
    int comb = MPI_COMBINER_NAMED, len = 0;
    char name[MPI_MAX_OBJECT_NAME] = "";
    if (MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb) != MPI_SUCCESS || comb == MPI_COMBINER_NAMED ||
        depth > 8) {
        MPI_Type_get_name(t, name, &len);
        put(buf, n, k, "%s", len > 0 ? name : "?");
        return;
    }
    int *ints = malloc(sizeof *ints * (size_t)(ni + 1));
    MPI_Aint *addrs = malloc(sizeof *addrs * (size_t)(na + 1));
    MPI_Count *counts = malloc(sizeof *counts * (size_t)(nc + 1));
    MPI_Datatype *types = malloc(sizeof *types * (size_t)(nd + 1));
    put(buf, n, k, "%s(", tg_combiner_name(t));
    if (ints && addrs && counts && types &&
        MPI_Type_get_contents_c(t, ni, na, nc, nd, ints, addrs, counts, types) == MPI_SUCCESS) {
        for (MPI_Count i = 0; i < ni; i++) put(buf, n, k, "%s%d", i ? " " : "", ints[i]);
        if (na) put(buf, n, k, "%saddrs", ni ? "; " : "");
        for (MPI_Count i = 0; i < na; i++) put(buf, n, k, " %lld", (long long)addrs[i]);
        if (nc) put(buf, n, k, "%scounts", ni + na ? "; " : "");
        for (MPI_Count i = 0; i < nc; i++) put(buf, n, k, " %lld", (long long)counts[i]);
        for (MPI_Count i = 0; i < nd; i++) {
            put(buf, n, k, "%s", i ? ", " : "; ");
            describe(types[i], buf, n, k, depth + 1);
            if (tg_combiner(types[i]) != MPI_COMBINER_NAMED) MPI_Type_free(&types[i]);
        }
    }
    put(buf, n, k, ")");
    free(ints), free(addrs), free(counts), free(types);
}

void tg_describe(MPI_Datatype t, char *buf, size_t n)
{
    size_t k = 0;
    if (!n) return;
    buf[0] = 0;
    describe(t, buf, n, &k, 0);
    if (k + 1 >= n && n > 4) strcpy(buf + n - 4, "...");
}

/* MPI_LONG_DOUBLE is left out on purpose: MPICH copies it as an x87 value,
 * so the 6 padding bytes of its 16 are not defined in MPI_Pack's output and
 * a byte comparison would be meaningless. */
static MPI_Datatype named(tg_src_t *s)
{
    MPI_Datatype list[] = {MPI_BYTE,      MPI_CHAR,     MPI_SHORT, MPI_INT,     MPI_FLOAT,
                           MPI_DOUBLE,    MPI_INT64_T,  MPI_2INT,  MPI_SHORT_INT, MPI_DOUBLE_INT,
                           MPI_FLOAT_INT, MPI_LONG_INT, MPI_C_DOUBLE_COMPLEX, MPI_UINT8_T};
    return list[tg_next(s, sizeof list / sizeof list[0])];
}

/* small count: mostly 1..4, sometimes 0 */
static int cnt(tg_src_t *s) { return tg_next(s, 16) == 0 ? 0 : (int)tg_range(s, 1, 4); }

/* In extreme mode, now and then a huge value in place of v: +-(2^k + v)
 * with 16 <= k <= maxbits (maxbits <= 62). */
static int64_t huge_or(tg_src_t *s, int64_t v, int maxbits)
{
    int64_t h;
    if (!s->extreme || tg_next(s, 4) != 0) return v;
    s->used_extreme = 1;
    h = wadd((int64_t)1 << tg_range(s, 16, maxbits), v);
    return tg_next(s, 2) ? h : wmul(h, -1);
}

/* In extreme mode, now and then a huge count (2^k + n, k <= maxbits). */
static int64_t huge_count(tg_src_t *s, int64_t n, int maxbits)
{
    if (!s->extreme || tg_next(s, 4) != 0) return n;
    s->used_extreme = 1;
    return wadd((int64_t)1 << tg_range(s, 16, maxbits), n);
}

#define MAXN 4

/* Keeps the test buffers small: a type too large is replaced.  So is a
 * type of size 0 (zero-length blocks stay possible inside a type): MPICH
 * 5.0.2's MPI_Pack raises SIGFPE on a struct holding a size-0 member with a
 * non-zero extent. */
static MPI_Datatype bounded(tg_src_t *s, MPI_Datatype t)
{
    MPI_Count size, tlb, text;
    if (MPI_Type_size_c(t, &size) != MPI_SUCCESS) size = 0;
    MPI_Type_get_true_extent_c(t, &tlb, &text);
    if (s->extreme && size > 0) return t; /* the fuzzer wants the huge ones */
    if (size > 0 && size <= (MPI_Count)s->max_size && text <= (MPI_Count)s->max_span && tlb > -(MPI_Count)s->max_span &&
        tlb < (MPI_Count)s->max_span)
        return t;
    tg_free(&t);
    return named(s);
}

/* Whether `elems` elements of old make a size MPICH can hold: its
 * MPI_Type_size_c asserts (aborts) on a size past 2^63, so the extreme
 * mode keeps sizes below 2^61 (ordinary types are far smaller). */
static int fits(MPI_Datatype old, __int128 elems)
{
    MPI_Count size = 0;
    MPI_Type_size_c(old, &size);
    return size <= 0 || elems <= ((__int128)1 << 61) / size;
}

MPI_Datatype tg_make(tg_src_t *s, int depth)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, old, olds[MAXN] = {0};
    MPI_Aint lb, ext;
    int n, rc = MPI_SUCCESS, bl[MAXN], di[MAXN], large;
    MPI_Aint da[MAXN];
    MPI_Count cbl[MAXN], cda[MAXN];
    int kind;

    if (depth <= 0 || tg_next(s, 5) == 0) return named(s);
    kind = (int)tg_next(s, 13);
    large = s->large && tg_next(s, 3) == 0;
    if (kind == 8) { /* struct: several children */
        n = (int)tg_range(s, 1, MAXN);
        for (int i = 0; i < n; i++) {
            olds[i] = tg_make(s, depth - 1);
            bl[i] = (int)tg_range(s, 0, 3);
            da[i] = (MPI_Aint)huge_or(s, tg_range(s, -32, 64), 62);
            cbl[i] = bl[i];
            cda[i] = da[i];
        }
        __int128 sum = 0;
        for (int i = 0; i < n; i++) {
            MPI_Count sz = 0;
            MPI_Type_size_c(olds[i], &sz);
            sum += (__int128)bl[i] * sz;
        }
        rc = MPI_ERR_OTHER;
        if (sum <= ((__int128)1 << 61))
            rc = large ? MPI_Type_create_struct_c(n, cbl, cda, olds, &t)
                       : MPI_Type_create_struct(n, bl, da, olds, &t);
        for (int i = 0; i < n; i++) tg_free(&olds[i]);
        return rc == MPI_SUCCESS ? bounded(s, t) : named(s);
    }
    old = tg_make(s, depth - 1);
    MPI_Type_get_extent(old, &lb, &ext);
    n = cnt(s);
    for (int i = 0; i < MAXN; i++) {
        bl[i] = (int)tg_range(s, 0, 3);
        di[i] = (int)huge_or(s, tg_range(s, -4, 8), 29);
        da[i] = (MPI_Aint)wadd(wmul(tg_range(s, -4, 8), ext), tg_range(s, -2, 2) * (tg_next(s, 3) == 0));
        if (s->extreme && tg_next(s, 4) == 0) da[i] = (MPI_Aint)huge_or(s, da[i], 62);
        cbl[i] = bl[i];
    }
    rc = MPI_ERR_OTHER; /* unless a constructor is called below */
    switch (kind) {
    case 0: rc = MPI_Type_dup(old, &t); break;
    case 1: {
        MPI_Count c = large ? huge_count(s, n, 40) : n;
        if (fits(old, c)) rc = large ? MPI_Type_contiguous_c(c, old, &t) : MPI_Type_contiguous(n, old, &t);
        break;
    }
    case 2: {
        int b = (int)tg_range(s, 0, 3), st = (int)huge_or(s, tg_range(s, -4, 4), 29);
        MPI_Count c = large ? huge_count(s, n, 40) : n;
        if (fits(old, (__int128)c * b))
            rc = large ? MPI_Type_vector_c(c, b, st, old, &t) : MPI_Type_vector(n, b, st, old, &t);
        break;
    }
    case 3: {
        int b = (int)tg_range(s, 0, 3);
        MPI_Aint st = (MPI_Aint)wadd(wmul(tg_range(s, -4, 4), ext), tg_range(s, -3, 3));
        st = (MPI_Aint)huge_or(s, st, 62);
        if (fits(old, n * b))
            rc = large ? MPI_Type_create_hvector_c(n, b, st, old, &t) : MPI_Type_create_hvector(n, b, st, old, &t);
        break;
    }
    case 4:
        for (int i = 0; i < n; i++) cda[i] = di[i];
        if (fits(old, 3 * MAXN))
            rc = large ? MPI_Type_indexed_c(n, cbl, cda, old, &t) : MPI_Type_indexed(n, bl, di, old, &t);
        break;
    case 5:
        for (int i = 0; i < n; i++) cda[i] = da[i];
        if (fits(old, 3 * MAXN))
            rc = large ? MPI_Type_create_hindexed_c(n, cbl, cda, old, &t)
                       : MPI_Type_create_hindexed(n, bl, da, old, &t);
        break;
    case 6:
        for (int i = 0; i < n; i++) cda[i] = di[i];
        if (fits(old, 3 * MAXN))
            rc = large ? MPI_Type_create_indexed_block_c(n, bl[0], cda, old, &t)
                       : MPI_Type_create_indexed_block(n, bl[0], di, old, &t);
        break;
    case 7:
        for (int i = 0; i < n; i++) cda[i] = da[i];
        if (fits(old, 3 * MAXN))
            rc = large ? MPI_Type_create_hindexed_block_c(n, bl[0], cda, old, &t)
                       : MPI_Type_create_hindexed_block(n, bl[0], da, old, &t);
        break;
    case 9: { /* subarray, C or Fortran order */
        int nd = (int)tg_range(s, 1, 3), sz[3], sub[3], st[3];
        MPI_Count csz[3], csub[3], cst[3];
        int order = tg_next(s, 2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int d = 0; d < nd; d++) {
            sz[d] = (int)tg_range(s, 1, 4);
            sub[d] = (int)tg_range(s, 1, sz[d]);
            st[d] = (int)tg_range(s, 0, sz[d] - sub[d]);
            csz[d] = sz[d];
            csub[d] = sub[d];
            cst[d] = st[d];
            if (large && s->extreme && tg_next(s, 3) == 0) { /* a huge array, a small piece far in */
                csz[d] = huge_count(s, sz[d], 40);
                cst[d] = (MPI_Count)tg_next(s, (uint64_t)(csz[d] - csub[d] + 1));
            }
        }
        if (fits(old, 64))
            rc = large ? MPI_Type_create_subarray_c(nd, csz, csub, cst, order, old, &t)
                       : MPI_Type_create_subarray(nd, sz, sub, st, order, old, &t);
        break;
    }
    case 10: { /* darray */
        int nd = (int)tg_range(s, 1, 3), gs[3], dist[3], darg[3], ps[3], size = 1, rank;
        MPI_Count cgs[3];
        int order = tg_next(s, 2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int d = 0; d < nd; d++) {
            gs[d] = (int)tg_range(s, 1, 6);
            cgs[d] = large ? huge_count(s, gs[d], 40) : gs[d];
            dist[d] = (int)tg_next(s, 3);
            ps[d] = (int)tg_range(s, 1, 4 / size);
            if (dist[d] == 2) ps[d] = 1;
            size *= ps[d];
            if (dist[d] == 0) {
                dist[d] = MPI_DISTRIBUTE_BLOCK;
                darg[d] = tg_next(s, 2) ? MPI_DISTRIBUTE_DFLT_DARG
                                        : (gs[d] + ps[d] - 1) / ps[d] + (int)tg_next(s, 2);
            } else if (dist[d] == 1) {
                dist[d] = MPI_DISTRIBUTE_CYCLIC;
                darg[d] = tg_next(s, 2) ? MPI_DISTRIBUTE_DFLT_DARG : (int)tg_range(s, 1, 3);
            } else {
                dist[d] = MPI_DISTRIBUTE_NONE;
                darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
            }
        }
        rank = (int)tg_next(s, (uint64_t)size);
        __int128 all = 1; /* <= 2^123: no overflow */
        for (int d = 0; d < nd; d++) all *= cgs[d];
        if (fits(old, all))
            rc = large ? MPI_Type_create_darray_c(size, rank, nd, cgs, dist, darg, ps, order, old, &t)
                       : MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order, old, &t);
        break;
    }
    case 11: case 12: { /* resized: lower bound and extent moved */
        MPI_Aint nlb = (MPI_Aint)wadd(lb, tg_range(s, -16, 16)), next = (MPI_Aint)wadd(ext, tg_range(s, -8, 24));
        if (s->extreme && tg_next(s, 2) == 0) {
            nlb = (MPI_Aint)huge_or(s, nlb, 62);
            next = (MPI_Aint)huge_count(s, next, 62);
        }
        if (next < 1) next = 1; /* MPICH 5.0.2 MPI_Pack divides by a zero extent (SIGFPE) */
        rc = large ? MPI_Type_create_resized_c(old, nlb, next, &t) : MPI_Type_create_resized(old, nlb, next, &t);
        break;
    }
    }
    tg_free(&old);
    return rc == MPI_SUCCESS ? bounded(s, t) : named(s);
}

int tg_overlaps(MPI_Datatype t, int count)
{
    MPI_Count lo, hi, sz;
    int pos = 0, ok;
    MPI_Type_size_c(t, &sz);
    sz *= count;
    tg_bounds(t, count, &lo, &hi);
    if (sz == 0 || hi - lo > 1 << 20) return 1;
    unsigned char *buf = calloc((size_t)(hi - lo), 1), *in = malloc((size_t)sz), *out = malloc((size_t)sz);
    for (MPI_Count i = 0; i < sz; i++) in[i] = (unsigned char)(i * 37 + 11 + (i >> 8));
    MPI_Unpack(in, (int)sz, &pos, buf - lo, count, t, MPI_COMM_SELF);
    pos = 0;
    MPI_Pack(buf - lo, count, t, out, (int)sz, &pos, MPI_COMM_SELF);
    ok = memcmp(in, out, (size_t)sz) == 0;
    free(buf), free(in), free(out);
    return !ok;
}
