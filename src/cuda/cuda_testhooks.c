/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_testhooks.c: the knobs of cuda_testhooks.h (tests and benchmarks
 * only; built into libmpiacc_internal.a, not into libmpiacc.so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_testhooks.h"
#include "cuda_ipc.h"

int mpiacc_cuda_set_mode(int mode, int force_generic)
{
    int old = mpiacc_cuda_mode;
    mpiacc_cuda_mode = mode;
    mpiacc_cuda_force_generic = force_generic;
    return old;
}

static const char *const sync_names[] = {"stream", "query", "event", "flag"};

const char *mpiacc_cuda_sync_name(int mode)
{
    return mode >= 0 && mode < MPIACC_CUDA_SYNC_N ? sync_names[mode] : "?";
}

int mpiacc_cuda_set_sync(int mode)
{
    int old = mpiacc_cuda_sync_mode();
    if (mode >= 0 && mode < MPIACC_CUDA_SYNC_N) __atomic_store_n(&mpiacc_cuda_sync_choice, mode, __ATOMIC_RELAXED);
    return old;
}

int mpiacc_cuda_get_sync(void) { return mpiacc_cuda_sync_mode(); }

void mpiacc_cuda_ipc_set_enabled(int on)
{
    __atomic_store_n(&mpiacc_cuda_ipc_enabled_knob, on < 0 ? -1 : !!on, __ATOMIC_RELAXED);
}

void mpiacc_cuda_ipc_set_cache(int cap)
{
    __atomic_store_n(&mpiacc_cuda_ipc_cache_knob, cap > 0 ? cap : 0, __ATOMIC_RELAXED);
}

static const char *const ipcv_names[MPIACC_CUDA_IPCV_NBITS] = {"kernel", "flag", "capq", "noquery", "rows", "xflag"};
#define NIPCV ((int)(sizeof ipcv_names / sizeof ipcv_names[0]))

int mpiacc_cuda_set_ipc_variant(int bits)
{
    return __atomic_exchange_n(&mpiacc_cuda_ipc_variant, bits & MPIACC_CUDA_IPCV_ALL, __ATOMIC_RELAXED);
}

void mpiacc_cuda_ipc_variant_used(long used[MPIACC_CUDA_IPCV_NBITS])
{
    for (int i = 0; i < MPIACC_CUDA_IPCV_NBITS; i++) used[i] = __atomic_load_n(&mpiacc_cuda_ipcv_used[i], __ATOMIC_RELAXED);
}

int mpiacc_cuda_ipc_variant_parse(const char *s)
{
    int bits = 0;
    while (s && *s) {
        size_t n = strcspn(s, "+,");
        int found = 0;
        if ((n == 4 && !strncmp(s, "base", 4)) || (n == 7 && !strncmp(s, "default", 7)))
            bits |= MPIACC_CUDA_IPCV_DEFAULT, found = 1;
        else if (n == 4 && !strncmp(s, "none", 4))
            found = 1;
        for (int i = 0; i < NIPCV && !found; i++)
            if (strlen(ipcv_names[i]) == n && !strncmp(s, ipcv_names[i], n)) bits |= 1 << i, found = 1;
        if (!found) return -1;
        s += n;
        if (*s) s++;
    }
    return bits;
}

void mpiacc_cuda_ipc_variant_name(int bits, char *out, size_t n)
{
    size_t at = 0;
    if (!n) return;
    out[0] = 0;
    for (int i = 0; i < NIPCV; i++)
        if (bits & 1 << i) {
            int w = snprintf(out + at, n - at, "%s%s", at ? "+" : "", ipcv_names[i]);
            if (w < 0 || (size_t)w >= n - at) return;
            at += (size_t)w;
        }
    if (!at) snprintf(out, n, "none");
}

const char *mpiacc_cuda_last_method(void) { return mpiacc_cuda_xfer_method; }

int mpiacc_cuda_set_unroll(int on)
{
    const int old = mpiacc_cuda_unroll;
    mpiacc_cuda_unroll = on != 0;
    return old;
}

int mpiacc_cuda_enqueue_xfer(const mpiacc_xfer_desc_t *d, void *packed, int dir, cudaStream_t st)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, old = -1;
    mpiacc_cuda_plan_t P;
    if (d->last <= d->first) goto fn_exit;
    MPIACC_CHECK(mpiacc_cuda_enter_call_device(NULL, NULL, &dev, &old));
    mpi_errno = mpiacc_cuda_plan_make(d, packed, &P);
    if (mpi_errno == MPI_SUCCESS) {
        if (P.kind == MPIACC_CUDA_PLAN_COPY) mpi_errno = mpiacc_cuda_plan_copy(&P, d, dir, packed, st);
        else mpi_errno = mpiacc_cuda_plan_kernel(dev, &P, d, dir, packed, NULL, st);
    }
    mpiacc_cuda_dev_leave(dev, old);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* Emulation: kernels run twice: as planned, and with the packed side
 * moved to a copy that is misaligned by one word against 16 bytes (cut
 * first and last vectors), in the unrolled variant; the two results must
 * agree (for unpack: over every byte the type can touch). */
static int emulate_run(const mpiacc_cuda_plan_t *P, const mpiacc_xfer_desc_t *d, char *packed, int dir, int variant)
{
    const long long n = d->last - d->first;
    if (P->kind == MPIACC_CUDA_PLAN_STRIDED)
        return mpiacc_cuda_emulate_strided(P->ws, dir, P->base, packed, &P->s, variant);
    return mpiacc_cuda_emulate_generic(P->ws, dir, d->type->blob, P->base, packed, d->first, n / P->ws, variant);
}

int mpiacc_cuda_emulate_xfer(const mpiacc_xfer_desc_t *d, void *packed, int dir, int *ws, const char **kind)
{
    int mpi_errno = MPI_SUCCESS;
    cudaError_t e = cudaSuccess;
    const size_t n = (size_t)(d->last - d->first);
    char *scratch = NULL, *snap = NULL, *res = NULL, *lo = NULL, *pk2;
    size_t span = 0;
    MPI_Count blo, bhi;
    mpiacc_cuda_plan_t P;
    MPIACC_CHECK(mpiacc_cuda_plan_make(d, packed, &P));
    MPIACC_CHECK(mpiacc_pack_span(d->type, d->count, &blo, &bhi)); /* the bytes unpack may write */
    *ws = P.kind == MPIACC_CUDA_PLAN_COPY ? 0 : P.ws;
    *kind = P.kind == MPIACC_CUDA_PLAN_COPY ? "copy" : P.kind == MPIACC_CUDA_PLAN_STRIDED ? "strided" : "generic";
    if (P.kind == MPIACC_CUDA_PLAN_COPY) {
        if (dir == MPIACC_CUDA_DIR_PACK) memcpy(packed, P.base + d->first, n);
        else memcpy(P.base + d->first, packed, n);
        goto fn_exit;
    }
    if (!(scratch = aligned_alloc(16, (n + 47) / 16 * 16))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    pk2 = scratch + (P.ws < 16 ? P.ws : 16);
    if (dir == MPIACC_CUDA_DIR_UNPACK) {
        lo = (char *)d->buf + blo;
        span = (size_t)(bhi - blo);
        if (!(snap = malloc(span + 1)) || !(res = malloc(span + 1))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
        memcpy(snap, lo, span);
        memcpy(pk2, packed, n);
    }
    if ((e = (cudaError_t)emulate_run(&P, d, packed, dir, 0)) != cudaSuccess) goto emu_fail;
    if (dir == MPIACC_CUDA_DIR_UNPACK) memcpy(res, lo, span), memcpy(lo, snap, span);
    if ((e = (cudaError_t)emulate_run(&P, d, pk2, dir, 1)) != cudaSuccess) goto emu_fail;
    if (dir == MPIACC_CUDA_DIR_PACK ? memcmp(packed, pk2, n) != 0 : memcmp(res, lo, span) != 0)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "emulation: %s kernel variants disagree (ws %d)", *kind, P.ws);
    if (P.kind == MPIACC_CUDA_PLAN_STRIDED) { /* the general strided kernel must agree too */
        if (dir == MPIACC_CUDA_DIR_UNPACK) memcpy(lo, snap, span);
        if ((e = (cudaError_t)emulate_run(&P, d, pk2, dir, 2)) != cudaSuccess) goto emu_fail;
        if (dir == MPIACC_CUDA_DIR_PACK ? memcmp(packed, pk2, n) != 0 : memcmp(res, lo, span) != 0)
            MPIACC_FAIL(MPIACC_ERRK_INTERN, "emulation: general and launched strided kernels disagree (ws %d)", P.ws);
    }
fn_exit:
    free(scratch), free(snap), free(res);
    return mpi_errno;
emu_fail:
    MPIACC_FAIL(MPIACC_ERRK_INTERN, "emulation failed: %s", cudaGetErrorName(e));
fn_fail:
    goto fn_exit;
}

int mpiacc_cuda_emulate_multi_xfer(const mpiacc_xfer_desc_t *d, char *const *packed, const int *dir, int n)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_cuda_multi_item_t it[MPIACC_CUDA_MULTI_MAX];
    if (n < 1 || n > MPIACC_CUDA_MULTI_MAX) MPIACC_FAIL(MPIACC_ERRK_INTERN, "emulation: %d items", n);
    for (int i = 0; i < n; i++) MPIACC_CHECK(mpiacc_cuda_multi_item(&d[i], packed[i], d[i].type->blob, dir[i], &it[i]));
    if (mpiacc_cuda_emulate_multi(it, n) != (int)cudaSuccess)
        MPIACC_FAIL(MPIACC_ERRK_INTERN, "emulation: the fused launch refused its items");
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
