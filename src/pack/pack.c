/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pack/pack.c: the engine's entry points — analysis of a datatype
 * (decode -> canonicalise -> describe -> serialise), its cache on the
 * datatype (an attribute: dups share the analysis through the copy
 * callback, MPI_Type_free releases it through the delete callback), and the
 * host reference pack/unpack driven by traverse.h, and the data slots other
 * modules keep on an analysis.
 *
 * Predefined datatypes carry no attribute of ours: their analyses are kept
 * in a small table keyed by handle (predefined handles never change while
 * MPI is initialised), read without a lock, so that an untagged device
 * buffer of MPI_BYTE (MPIACC_UVA=1, asserted memory kinds) costs no analysis
 * per call.
 *
 * Thread safety: the reference count is atomic; creating the cache entry of
 * a type is serialised by a mutex (two threads analysing the same new type
 * at once analyse it once).  A table entry is written whole before the
 * count that publishes it (release; readers acquire).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pack_internal.h"

static int cache_keyval = MPI_KEYVAL_INVALID;
static MPI_Comm check_comm = MPI_COMM_NULL; /* MPI_ERRORS_RETURN, for validity checks */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
#define NAMED_MAX 64
static struct {
    MPI_Datatype type;
    mpiacc_pack_type_t *t; /* one reference: the table's */
} named[NAMED_MAX];
static int nnamed; /* entries published (atomic accesses) */
/* Registered free functions of the data slots. */
static void (*slot_free[MPIACC_PACK_NSLOTS])(void *data);

static int cache_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    mpiacc_pack_type_t *t = in;
    __atomic_fetch_add(&t->refcount, 1, __ATOMIC_RELAXED);
    *(void **)out = t;
    *flag = 1;
    return MPI_SUCCESS;
}

static int cache_delete(MPI_Datatype type, int keyval, void *val, void *extra)
{
    mpiacc_pack_type_release(val);
    return MPI_SUCCESS;
}

int mpiacc_pack_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    if (PMPI_Type_create_keyval(cache_copy, cache_delete, &cache_keyval, NULL) != MPI_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "cannot create the datatype cache keyval");
    if (PMPI_Comm_dup(MPI_COMM_SELF, &check_comm) != MPI_SUCCESS ||
        PMPI_Comm_set_errhandler(check_comm, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "cannot create the datatype checking communicator");
fn_exit:
    return mpi_errno;
fn_fail:
    mpiacc_pack_finalize();
    goto fn_exit;
}

void mpiacc_pack_forget_named(void)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0, n = __atomic_load_n(&nnamed, __ATOMIC_ACQUIRE); i < n; i++) mpiacc_pack_type_release(named[i].t);
    __atomic_store_n(&nnamed, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&cache_lock);
}

void mpiacc_pack_finalize(void)
{
    /* Types still alive keep their analysis until MPI frees them (MPI keeps
     * a freed keyval's callbacks for the attributes still set). */
    mpiacc_pack_forget_named();
    if (cache_keyval != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(&cache_keyval);
    if (check_comm != MPI_COMM_NULL) PMPI_Comm_free(&check_comm);
    cache_keyval = MPI_KEYVAL_INVALID;
    check_comm = MPI_COMM_NULL;
}

/* MPI_ERR_TYPE for MPI_DATATYPE_NULL and types MPI cannot use (uncommitted):
 * asked through a communicator whose errors return. */
static int check_type(MPI_Datatype type);

int mpiacc_pack_type_usable(MPI_Datatype type)
{
    return type != MPI_DATATYPE_NULL && check_type(type) == MPI_SUCCESS;
}

static int check_type(MPI_Datatype type)
{
    MPI_Count sz;
    if (type == MPI_DATATYPE_NULL) return mpiacc_err(MPIACC_ERRK_TYPE, "MPI_DATATYPE_NULL has no layout");
    if (check_comm != MPI_COMM_NULL && PMPI_Pack_size_c(1, type, check_comm, &sz) != MPI_SUCCESS)
        return mpiacc_err(MPIACC_ERRK_TYPE, "the datatype is not committed (or not valid)");
    return MPI_SUCCESS;
}

int mpiacc_pack_type_analyze(MPI_Datatype type, mpiacc_pack_type_t **out)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_pack_type_t *t = NULL;
    mpiacc_pack_arena_t *arena = NULL;
    mpiacc_pack_node_t *root;
    MPI_Count text, align;

    *out = NULL;
    MPIACC_CHECK(check_type(type));
    t = calloc(1, sizeof *t);
    arena = malloc(sizeof *arena);
    if (!t || !arena) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory analysing a datatype");
    mpiacc_pack_arena_init(arena);
    if (PMPI_Type_size_c(type, &t->size) != MPI_SUCCESS || t->size == MPI_UNDEFINED || t->size < 0 ||
        PMPI_Type_get_extent_c(type, &t->lb, &t->extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_c(type, &t->true_lb, &text) != MPI_SUCCESS)
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "the datatype's size or extent is not representable");
    if (mpiacc_pack_add(t->true_lb, text, &t->true_ub))
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "the datatype's true extent overflows");
    MPIACC_CHECK(mpiacc_pack_decode(type, arena, &root));
    if (root->size != t->size)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "datatype analysis found %lld bytes, MPI says %lld",
                    (long long)root->size, (long long)t->size);
    MPIACC_CHECK(mpiacc_pack_describe(root, t, &align));
    MPIACC_CHECK(mpiacc_pack_serialize(root, t, align));
    t->refcount = 1;
    *out = t;
fn_exit:
    if (arena) {
        mpiacc_pack_arena_free(arena);
        free(arena);
    }
    return mpi_errno;
fn_fail:
    if (t) free(t->blob);
    free(t);
    goto fn_exit;
}

static int is_named(MPI_Datatype type)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    return PMPI_Type_get_envelope_c(type, &ni, &na, &nc, &nd, &comb) != MPI_SUCCESS ||
           comb == MPI_COMBINER_NAMED;
}

int mpiacc_pack_type_get(MPI_Datatype type, mpiacc_pack_type_t **out)
{
    int mpi_errno = MPI_SUCCESS, flag = 0, locked = 0;
    void *v = NULL;
    mpiacc_pack_type_t *t = NULL;

    *out = NULL;
    if (type == MPI_DATATYPE_NULL) MPIACC_CHECK(check_type(type));
    if (cache_keyval == MPI_KEYVAL_INVALID) {
        MPIACC_CHECK(mpiacc_pack_type_analyze(type, out));
        goto fn_exit;
    }
    for (int i = 0, n = __atomic_load_n(&nnamed, __ATOMIC_ACQUIRE); i < n; i++)
        if (named[i].type == type) { /* a predefined type seen before */
            t = named[i].t;
            __atomic_fetch_add(&t->refcount, 1, __ATOMIC_RELAXED);
            *out = t;
            goto fn_exit;
        }
    if (is_named(type)) { /* predefined: no attribute; kept in the table while it has room */
        MPIACC_CHECK(mpiacc_pack_type_analyze(type, &t));
        pthread_mutex_lock(&cache_lock);
        int n = __atomic_load_n(&nnamed, __ATOMIC_ACQUIRE), dup = 0;
        for (int i = 0; i < n && !dup; i++) dup = named[i].type == type;
        if (!dup && n < NAMED_MAX) {
            named[n].type = type;
            named[n].t = t;
            __atomic_fetch_add(&t->refcount, 1, __ATOMIC_RELAXED); /* the table's */
            __atomic_store_n(&nnamed, n + 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&cache_lock);
        *out = t;
        goto fn_exit;
    }
    if (PMPI_Type_get_attr(type, cache_keyval, &v, &flag) == MPI_SUCCESS && flag) {
        t = v;
        __atomic_fetch_add(&t->refcount, 1, __ATOMIC_RELAXED);
        *out = t;
        goto fn_exit;
    }
    pthread_mutex_lock(&cache_lock);
    locked = 1;
    if (PMPI_Type_get_attr(type, cache_keyval, &v, &flag) == MPI_SUCCESS && flag) {
        t = v;
        __atomic_fetch_add(&t->refcount, 1, __ATOMIC_RELAXED);
    } else {
        MPIACC_CHECK(mpiacc_pack_type_analyze(type, &t));
        t->refcount = 2; /* the caller's and the attribute's */
        if (PMPI_Type_set_attr(type, cache_keyval, t) != MPI_SUCCESS) t->refcount = 1;
    }
    *out = t;
fn_exit:
    if (locked) pthread_mutex_unlock(&cache_lock);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_pack_type_release(mpiacc_pack_type_t *t)
{
    if (!t || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    for (int k = 0; k < MPIACC_PACK_NSLOTS; k++) {
        void *data = __atomic_load_n(&t->slots[k], __ATOMIC_ACQUIRE);
        void (*fn)(void *) = __atomic_load_n(&slot_free[k], __ATOMIC_ACQUIRE);
        if (data && fn) fn(data);
    }
    free(t->blob);
    free(t);
}

/* ---- data slots -------------------------------------------------------- */

void mpiacc_pack_slot_register(int slot, void (*free_fn)(void *data))
{
    if (slot >= 0 && slot < MPIACC_PACK_NSLOTS) __atomic_store_n(&slot_free[slot], free_fn, __ATOMIC_RELEASE);
}

void *mpiacc_pack_slot_get(const mpiacc_pack_type_t *t, int slot)
{
    if (slot < 0 || slot >= MPIACC_PACK_NSLOTS) return NULL;
    return __atomic_load_n(&t->slots[slot], __ATOMIC_ACQUIRE);
}

int mpiacc_pack_slot_set(const mpiacc_pack_type_t *ct, int slot, void *expected, void *data)
{
    /* The slots are the one mutable part of a shared, otherwise read-only
     * analysis. */
    mpiacc_pack_type_t *t = (mpiacc_pack_type_t *)ct;
    if (slot < 0 || slot >= MPIACC_PACK_NSLOTS) return 0;
    return __atomic_compare_exchange_n(&t->slots[slot], &expected, data, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* ---- touched span ----------------------------------------------------- */

int mpiacc_pack_span(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *lo, MPI_Count *hi)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Count rep, width;
    *lo = *hi = 0;
    if (!t) MPIACC_FAIL(MPIACC_ERRK_INTERN, "no datatype analysis");
    if (count < 0) MPIACC_FAIL(MPIACC_ERRK_COUNT, "negative count %lld", (long long)count);
    if (count == 0 || t->size == 0) goto fn_exit;
    /* element e starts e*extent from the buffer: count elements spread
     * over (count-1)*extent (negative extents spread downwards) */
    if (mpiacc_pack_mul(count - 1, t->extent, &rep) || mpiacc_pack_add(t->data_lb, rep < 0 ? rep : 0, lo) ||
        mpiacc_pack_add(t->data_ub, rep > 0 ? rep : 0, hi))
        MPIACC_FAIL(MPIACC_ERRK_COUNT,
                    "%lld elements of a datatype with extent %lld reach offsets past 64 bits from the buffer",
                    (long long)count, (long long)t->extent);
    if (mpiacc_pack_sub(*hi, *lo, &width) || width > MPIACC_PACK_SPAN_MAX)
        MPIACC_FAIL(MPIACC_ERRK_BUFFER,
                    "%lld elements of a datatype with extent %lld touch bytes %llu apart, more than any "
                    "address space holds (2^57)",
                    (long long)count, (long long)t->extent, (unsigned long long)*hi - (unsigned long long)*lo);
fn_exit:
    return mpi_errno;
fn_fail:
    *lo = *hi = 0;
    goto fn_exit;
}

int mpiacc_pack_check_receive(const mpiacc_pack_type_t *t, MPI_Count count, const char *what)
{
    MPI_Count lo, hi, bytes;
    if (!t || count <= 0 || t->size == 0 || mpiacc_pack_mul(count, t->size, &bytes)) return MPI_SUCCESS;
    if (mpiacc_pack_span(t, count, &lo, &hi) != MPI_SUCCESS) return MPI_SUCCESS; /* reported where used */
    if (bytes <= hi - lo) return MPI_SUCCESS;
    return mpiacc_err(MPIACC_ERRK_TYPE,
                      "the receive datatype%s: %lld element(s) of size %lld, extent %lld write %lld bytes within "
                      "%lld, some twice (MPI: the entries of a receive buffer must not overlap)",
                      what ? what : "", (long long)count, (long long)t->size, (long long)t->extent, (long long)bytes,
                      (long long)(hi - lo));
}

/* ---- host reference pack / unpack ------------------------------------ */

static int check_range(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count first, MPI_Count last)
{
    MPI_Count total, lo, hi;
    int mpi_errno;
    if (!t || count < 0 || mpiacc_pack_mul(count, t->size, &total))
        return mpiacc_err(MPIACC_ERRK_COUNT, "bad element count %lld", (long long)count);
    if (first < 0 || last < first || last > total)
        return mpiacc_err(MPIACC_ERRK_COUNT, "packed range [%lld, %lld) outside [0, %lld)", (long long)first,
                          (long long)last, (long long)total);
    mpi_errno = mpiacc_pack_span(t, count, &lo, &hi);
    return mpi_errno;
}

int mpiacc_pack_cpu_pack(const mpiacc_pack_type_t *t, const void *inbuf, MPI_Count count, MPI_Count first,
                         MPI_Count last, void *out)
{
    int mpi_errno = check_range(t, count, first, last);
    const mpiacc_tv_i64 *blob;
    const char *in = inbuf;
    char *o = out;
    if (mpi_errno != MPI_SUCCESS || first == last) return mpi_errno;
    blob = t->blob;
    if (t->contiguous) {
        memcpy(o, in + mpiacc_tv_offset(blob, first), (size_t)(last - first));
        return MPI_SUCCESS;
    }
    for (MPI_Count p = first; p < last;) {
        mpiacc_tv_i64 run, off = mpiacc_tv_locate(blob, p, &run);
        if (run > last - p) run = last - p;
        memcpy(o + (p - first), in + off, (size_t)run);
        p += run;
    }
    return MPI_SUCCESS;
}

int mpiacc_pack_cpu_unpack(const mpiacc_pack_type_t *t, void *outbuf, MPI_Count count, MPI_Count first,
                           MPI_Count last, const void *in)
{
    int mpi_errno = check_range(t, count, first, last);
    const mpiacc_tv_i64 *blob;
    const char *i = in;
    char *o = outbuf;
    if (mpi_errno != MPI_SUCCESS || first == last) return mpi_errno;
    blob = t->blob;
    if (t->contiguous) {
        memcpy(o + mpiacc_tv_offset(blob, first), i, (size_t)(last - first));
        return MPI_SUCCESS;
    }
    for (MPI_Count p = first; p < last;) {
        mpiacc_tv_i64 run, off = mpiacc_tv_locate(blob, p, &run);
        if (run > last - p) run = last - p;
        memcpy(o + off, i + (p - first), (size_t)run);
        p += run;
    }
    return MPI_SUCCESS;
}
