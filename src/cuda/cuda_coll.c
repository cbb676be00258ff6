/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_coll.c: the reduction entries of the CUDA IPC table
 * (src/core/backend_ipc.h: reduce_supported, import_reduce) for the
 * on-device collectives.
 *
 * reduce_supported maps a predefined (datatype, operation) pair to an
 * element kind and an operation of the kernel (cuda_coll.h) by comparing
 * handles; integer kinds come from the C type's size, so MPI_LONG is 4 or
 * 8 bytes as the platform says.  A pair is accepted only where the MPI
 * standard's type classes allow it (and MPICH agrees, src/include/
 * mpir_datatype.h MPIR_op_dt_check): C integers (MPI_SIGNED_CHAR and
 * MPI_UNSIGNED_CHAR included) every operation; MPI_FLOAT and MPI_DOUBLE
 * SUM, PROD, MIN, MAX; MPI_BYTE and MPI_CHAR the bitwise operations only
 * (MPI_CHAR has no reduction in the standard; MPICH's wider acceptance
 * stays on the staged path, so the answer never differs from it);
 * MPI_C_BOOL the logical ones; MPI_AINT, MPI_OFFSET, MPI_COUNT
 * (multi-language types) all but the logical ones.  Anything else (long
 * double, complex, pair types, Fortran types, a dup of a predefined type,
 * user operations) is 0: the caller stays on the staged path.
 *
 * import_reduce follows import_copy (cuda_ipc.c): every source mapped
 * through the importer's cache (a same-process export read through its
 * address), its event waited for GPU-side, then the caller's dep, then one
 * kernel on an internal stream; the handle keeps every mapping referenced
 * (through its fin hook) until the kernel is done.  import_copy_n (the
 * data-moving collectives) does the same for contiguous pieces of several
 * exports, with the copy kernel of cuda_copyn.cu (one launch per
 * MPIACC_CUDA_COPYN_MAXP pieces; an export's event waited for once).
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_ipc.h"
#include "cuda_coll.h"

enum { C_INT, C_FLOAT, C_BITS, C_BOOL, C_MULTI }; /* type classes of the table below */

#define SKIND(t_) (sizeof(t_) == 1 ? MPIACC_CUDA_RED_I8 : sizeof(t_) == 2 ? MPIACC_CUDA_RED_I16 \
                   : sizeof(t_) == 4 ? MPIACC_CUDA_RED_I32 : sizeof(t_) == 8 ? MPIACC_CUDA_RED_I64 : -1)
#define UKIND(t_) (sizeof(t_) == 1 ? MPIACC_CUDA_RED_U8 : sizeof(t_) == 2 ? MPIACC_CUDA_RED_U16 \
                   : sizeof(t_) == 4 ? MPIACC_CUDA_RED_U32 : sizeof(t_) == 8 ? MPIACC_CUDA_RED_U64 : -1)

typedef struct red_type {
    MPI_Datatype t;
    int kind, cls;
} red_type_t;

/* Not static const: some MPI ABIs' handles are not constant expressions. */
static int classify_type(MPI_Datatype t, int *kind, int *cls)
{
    const red_type_t tab[] = {
        {MPI_SIGNED_CHAR, SKIND(signed char), C_INT},
        {MPI_UNSIGNED_CHAR, UKIND(unsigned char), C_INT},
        {MPI_SHORT, SKIND(short), C_INT},
        {MPI_UNSIGNED_SHORT, UKIND(unsigned short), C_INT},
        {MPI_INT, SKIND(int), C_INT},
        {MPI_UNSIGNED, UKIND(unsigned), C_INT},
        {MPI_LONG, SKIND(long), C_INT},
        {MPI_UNSIGNED_LONG, UKIND(unsigned long), C_INT},
        {MPI_LONG_LONG_INT, SKIND(long long), C_INT},
        {MPI_LONG_LONG, SKIND(long long), C_INT},
        {MPI_UNSIGNED_LONG_LONG, UKIND(unsigned long long), C_INT},
        {MPI_INT8_T, MPIACC_CUDA_RED_I8, C_INT},
        {MPI_INT16_T, MPIACC_CUDA_RED_I16, C_INT},
        {MPI_INT32_T, MPIACC_CUDA_RED_I32, C_INT},
        {MPI_INT64_T, MPIACC_CUDA_RED_I64, C_INT},
        {MPI_UINT8_T, MPIACC_CUDA_RED_U8, C_INT},
        {MPI_UINT16_T, MPIACC_CUDA_RED_U16, C_INT},
        {MPI_UINT32_T, MPIACC_CUDA_RED_U32, C_INT},
        {MPI_UINT64_T, MPIACC_CUDA_RED_U64, C_INT},
        {MPI_FLOAT, sizeof(float) == 4 ? MPIACC_CUDA_RED_F32 : -1, C_FLOAT},
        {MPI_DOUBLE, sizeof(double) == 8 ? MPIACC_CUDA_RED_F64 : -1, C_FLOAT},
        {MPI_BYTE, MPIACC_CUDA_RED_U8, C_BITS},
        {MPI_CHAR, MPIACC_CUDA_RED_U8, C_BITS},
        {MPI_C_BOOL, sizeof(_Bool) == 1 ? MPIACC_CUDA_RED_U8 : -1, C_BOOL},
        {MPI_AINT, SKIND(MPI_Aint), C_MULTI},
        {MPI_OFFSET, SKIND(MPI_Offset), C_MULTI},
        {MPI_COUNT, SKIND(MPI_Count), C_MULTI},
    };
    if (t == MPI_DATATYPE_NULL) return 0;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].t == t && tab[i].kind >= 0) {
            *kind = tab[i].kind;
            *cls = tab[i].cls;
            return 1;
        }
    return 0;
}

/* (type, op) to the kernel's (kind, op); 0 when not handled. */
static int classify(MPI_Datatype type, MPI_Op op, int *kind, int *rop)
{
    int cls = -1, ok;
    if (!classify_type(type, kind, &cls)) return 0;
    if (op == MPI_SUM) *rop = MPIACC_CUDA_RED_SUM;
    else if (op == MPI_PROD) *rop = MPIACC_CUDA_RED_PROD;
    else if (op == MPI_MIN) *rop = MPIACC_CUDA_RED_MIN;
    else if (op == MPI_MAX) *rop = MPIACC_CUDA_RED_MAX;
    else if (op == MPI_LAND) *rop = MPIACC_CUDA_RED_LAND;
    else if (op == MPI_LOR) *rop = MPIACC_CUDA_RED_LOR;
    else if (op == MPI_LXOR) *rop = MPIACC_CUDA_RED_LXOR;
    else if (op == MPI_BAND) *rop = MPIACC_CUDA_RED_BAND;
    else if (op == MPI_BOR) *rop = MPIACC_CUDA_RED_BOR;
    else if (op == MPI_BXOR) *rop = MPIACC_CUDA_RED_BXOR;
    else return 0;
    switch (cls) {
    case C_INT: ok = 1; break;
    case C_FLOAT: ok = *rop <= MPIACC_CUDA_RED_MAX; break; /* SUM, PROD, MIN, MAX */
    case C_BITS: ok = *rop >= MPIACC_CUDA_RED_BAND; break;
    case C_BOOL: ok = *rop >= MPIACC_CUDA_RED_LAND && *rop <= MPIACC_CUDA_RED_LXOR; break;
    default: ok = *rop <= MPIACC_CUDA_RED_MAX || *rop >= MPIACC_CUDA_RED_BAND; break; /* multi-language */
    }
    return ok;
}

int mpiacc_cuda_reduce_supported(MPI_Datatype type, MPI_Op op)
{
    int kind, rop;
    return classify(type, op, &kind, &rop);
}

/* The mapping references of one reduction or copy, dropped when its kernel
 * is done (import_copy_n allocates room for its nx exports). */
typedef struct red_refs {
    int n;
    void *ref[]; /* room for every source */
} red_refs_t;

static red_refs_t *refs_new(int cap)
{
    return calloc(1, sizeof(red_refs_t) + sizeof(void *) * (size_t)(cap > 0 ? cap : 1));
}

static void refs_drop(void *p)
{
    red_refs_t *r = p;
    if (!r) return;
    for (int i = 0; i < r->n; i++)
        if (r->ref[i]) mpiacc_cuda_ipc_unuse(r->ref[i], NULL);
    free(r);
}

/* Maps the exports xs[j] that are used (used == NULL: all nx) on device dev
 * (current): base[j] is the allocation base in this process (a same-process
 * export is read in place), the mappings' references go into refs. */
static int map_exports(const mpiacc_ipc_export_t *xs, int nx, const unsigned char *used, int dev, char **base,
                       red_refs_t *refs)
{
    int mpi_errno = MPI_SUCCESS;
    for (int j = 0; j < nx; j++) {
        if (used && !used[j]) continue;
        if (mpiacc_cuda_ipc_is_own(&xs[j])) {
            base[j] = (char *)(uintptr_t)xs[j].base_addr;
            MPIACC_CUDA_IPC_STAT(mem_same_process);
            if (xs[j].device != dev) MPIACC_CHECK(mpiacc_cuda_ipc_peer_enable(dev, xs[j].device));
        } else {
            MPIACC_CHECK(mpiacc_cuda_ipcc_map_get(&xs[j], dev, &base[j], &refs->ref[refs->n]));
            refs->n++;
        }
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Whether export j's event is one that an earlier used export already has
 * the stream wait on. */
static int event_seen(const mpiacc_ipc_export_t *xs, const unsigned char *used, int j)
{
    for (int k = 0; k < j; k++)
        if ((!used || used[k]) && (xs[k].flags & MPIACC_IPC_F_EVENT) && xs[k].owner == xs[j].owner &&
            xs[k].event_id == xs[j].event_id)
            return 1;
    return 0;
}

/* The transfer handle of one launch on device dev (current): it owns *refs
 * from here (the mappings are dropped when the GPU is done); *st, its
 * stream, waits for every used export's event (once per event) and for dp. */
static int launch_begin(int dev, red_refs_t **refs, const mpiacc_ipc_export_t *xs, int nx, const unsigned char *used,
                        mpiacc_cuda_h_t *dp, mpiacc_cuda_h_t **out, cudaStream_t *st)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_h_t *h;
    MPIACC_CHECK(mpiacc_cuda_handle_get(dev, &h));
    *out = h;
    h->is_xfer = 1;
    h->fin = refs_drop, h->fin_arg = *refs;
    *refs = NULL;
    MPIACC_CHECK(mpiacc_cuda_stream_get(dev, &h->sidx));
    *st = mpiacc_cuda_devs[dev].streams[h->sidx];
    for (int j = 0; j < nx; j++)
        if ((!used || used[j]) && (xs[j].flags & MPIACC_IPC_F_EVENT) && !event_seen(xs, used, j))
            MPIACC_CHECK(mpiacc_cuda_ipc_is_own(&xs[j]) ? mpiacc_cuda_ipc_own_event_wait(&xs[j], *st)
                                                        : mpiacc_cuda_ipcc_event_wait(&xs[j], *st));
    MPIACC_CHECK(mpiacc_cuda_handle_wait(*st, dp));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Source i's bytes [disp, disp + bytes) relative to its buffer lie in its
 * export's [lo, hi), itself inside the allocation; *off: their offset
 * from the allocation base.  `what` names the operation in messages. */
static int src_check(const char *what, const mpiacc_ipc_export_t *x, int i, MPI_Aint disp, MPI_Count bytes,
                     int64_t *off)
{
    int64_t elo = 0, ehi = 0, end = 0;
    if (x->hi <= x->lo || __builtin_add_overflow(x->offset, x->lo, &elo) ||
        __builtin_add_overflow(x->offset, x->hi, &ehi) || elo < 0 || (uint64_t)ehi > x->alloc_bytes)
        return mpiacc_err(MPIACC_ERRK_BUFFER,
                          "%s: source %d's exported bytes [%lld, %lld) + %lld lie outside its "
                          "allocation of %llu bytes",
                          what, i, (long long)x->lo, (long long)x->hi, (long long)x->offset,
                          (unsigned long long)x->alloc_bytes);
    if (__builtin_add_overflow((int64_t)disp, (int64_t)bytes, &end) || (int64_t)disp < x->lo || end > x->hi)
        return mpiacc_err(MPIACC_ERRK_BUFFER,
                          "%s: source %d's bytes [%lld, %lld) lie outside its exported [%lld, %lld)",
                          what, i, (long long)disp, (long long)disp + (long long)bytes, (long long)x->lo,
                          (long long)x->hi);
    *off = x->offset + (int64_t)disp;
    return MPI_SUCCESS;
}

int mpiacc_cuda_import_reduce(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int n, MPI_Aint disp,
                              MPI_Datatype type, MPI_Op op, MPI_Count count, void *dst, void **xfer)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0, kind = 0, rop = 0, es;
    MPI_Count bytes = 0;
    int64_t off[MPIACC_CUDA_RED_MAXSRC];
    char *base[MPIACC_CUDA_RED_MAXSRC];
    red_refs_t *refs = NULL;
    mpiacc_cuda_h_t *h = NULL, *dp = dep;
    mpiacc_cuda_red_t r;
    cudaStream_t st = NULL;
    cudaError_t ce;
    *xfer = NULL;
    if (!classify(type, op, &kind, &rop))
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA IPC reduction: datatype and operation not supported on the device");
    if (!xs || n < 1 || n > MPIACC_CUDA_RED_MAXSRC || count < 0)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "CUDA IPC reduction: %d sources (1 to %d) of %lld elements", n,
                    MPIACC_CUDA_RED_MAXSRC, (long long)count);
    if (count == 0) goto fn_exit;
    es = mpiacc_cuda_red_elem_size(kind);
    if (__builtin_mul_overflow(count, (MPI_Count)es, &bytes))
        MPIACC_FAIL(MPIACC_ERRK_COUNT, "CUDA IPC reduction: %lld elements overflow", (long long)count);
    if (!dst) MPIACC_FAIL(MPIACC_ERRK_BUFFER, "CUDA IPC reduction: NULL destination for %lld elements", (long long)count);
    for (int i = 0; i < n; i++)
        MPIACC_CHECK(src_check("CUDA IPC reduction", &xs[i], i, disp, bytes, &off[i]));
    if (dp) dev = dp->dev;
    else MPIACC_CHECK(mpiacc_cuda_resolve_device(a, &dev));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    entered = 1;
    if (!(refs = refs_new(n))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    memset(&r, 0, sizeof r);
    MPIACC_CHECK(map_exports(xs, n, NULL, dev, base, refs));
    for (int i = 0; i < n; i++) r.src[i] = base[i] + off[i];
    r.dst = dst, r.count = count, r.n = n, r.kind = kind, r.op = rop;
    MPIACC_CHECK(launch_begin(dev, &refs, xs, n, NULL, dp, &h, &st));
    ce = (cudaError_t)mpiacc_cuda_launch_reduce(&r, mpiacc_cuda_devs[dev].nsm, st);
    if (ce != cudaSuccess)
        MPIACC_FAIL(MPIACC_ERRK_CUDA, "CUDA IPC reduction: kernel (%d sources, %lld elements) failed to start: %s (%s)",
                    n, (long long)count, cudaGetErrorName(ce), cudaGetErrorString(ce));
    MPIACC_CHECK(mpiacc_cuda_handle_record(h, st));
    *xfer = h;
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    return mpi_errno;
fn_fail:
    mpiacc_cuda_handle_abandon(h, st); /* nothing enqueued may still read a mapping (drops them through fin) */
    refs_drop(refs);                   /* references not handed to a handle yet */
    goto fn_exit;
}

/* ---- import_copy_n -------------------------------------------------------------- */

_Static_assert(MPIACC_IPC_COPYN_PIECES == MPIACC_CUDA_COPYN_MAXP, "backend_ipc.h names the kernel's piece count");

#define CN "CUDA IPC copy of pieces"

int mpiacc_cuda_import_copy_n(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int nx,
                              const mpiacc_ipc_piece_t *pieces, int n, void **xfer)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1, entered = 0, np = 0;
    char **base = NULL;
    unsigned char *used = NULL;
    mpiacc_cuda_cpiece_t *cp = NULL;
    red_refs_t *refs = NULL;
    mpiacc_cuda_h_t *h = NULL, *dp = dep;
    cudaStream_t st = NULL;
    cudaError_t ce;
    *xfer = NULL;
    if (n < 0 || (n > 0 && !pieces)) MPIACC_FAIL(MPIACC_ERRK_INTERN, CN ": %d pieces", n);
    /* every piece checked before anything is mapped or enqueued */
    for (int i = 0; i < n; i++) {
        const mpiacc_ipc_piece_t *p = &pieces[i];
        int64_t off;
        if (p->bytes < 0) MPIACC_FAIL(MPIACC_ERRK_INTERN, CN ": piece %d of %lld bytes", i, (long long)p->bytes);
        if (p->bytes == 0) continue;
        if (!xs || p->src < 0 || p->src >= nx)
            MPIACC_FAIL(MPIACC_ERRK_INTERN, CN ": piece %d reads export %d of %d", i, (int)p->src, nx);
        if (!p->dst)
            MPIACC_FAIL(MPIACC_ERRK_BUFFER, CN ": NULL destination for piece %d of %lld bytes", i, (long long)p->bytes);
        MPIACC_CHECK(src_check(CN, &xs[p->src], p->src, (MPI_Aint)p->disp, (MPI_Count)p->bytes, &off));
        np++;
    }
    if (np == 0) goto fn_exit;
    if (!(base = calloc((size_t)nx, sizeof *base)) || !(used = calloc((size_t)nx, 1)) ||
        !(cp = malloc(sizeof *cp * (size_t)np)) || !(refs = refs_new(nx)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        if (pieces[i].bytes > 0) used[pieces[i].src] = 1;
    if (dp) dev = dp->dev;
    else MPIACC_CHECK(mpiacc_cuda_resolve_device(a, &dev));
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    entered = 1;
    MPIACC_CHECK(map_exports(xs, nx, used, dev, base, refs));
    np = 0;
    for (int i = 0; i < n; i++) {
        const mpiacc_ipc_piece_t *p = &pieces[i];
        if (p->bytes == 0) continue;
        cp[np].src = base[p->src] + xs[p->src].offset + p->disp;
        cp[np].dst = p->dst;
        cp[np++].bytes = (long long)p->bytes;
    }
    MPIACC_CHECK(launch_begin(dev, &refs, xs, nx, used, dp, &h, &st));
    ce = (cudaError_t)mpiacc_cuda_launch_copyn(cp, np, mpiacc_cuda_devs[dev].nsm, st);
    if (ce != cudaSuccess)
        MPIACC_FAIL(MPIACC_ERRK_CUDA, CN ": kernel (%d pieces) failed to start: %s (%s)", np, cudaGetErrorName(ce),
                    cudaGetErrorString(ce));
    MPIACC_CHECK(mpiacc_cuda_handle_record(h, st));
    *xfer = h;
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    free(base);
    free(used);
    free(cp);
    return mpi_errno;
fn_fail:
    mpiacc_cuda_handle_abandon(h, st); /* nothing enqueued may still read a mapping (drops them through fin) */
    refs_drop(refs);                   /* references not handed to a handle yet */
    goto fn_exit;
}
