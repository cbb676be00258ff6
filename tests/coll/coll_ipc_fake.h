/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_ipc_fake.h: the stand-in IPC table of the IPC engine's collective
 * tests on host buffers (installed with mpiacc_coll_test_tables) (test_coll_ipc.c, test_coll_ipc_nb.c): the CPU
 * backend's buffers (MPIACC_BUF_HOST + MPIACC_EVENT) get export_buf (the
 * exported span copied into a POSIX shared-memory segment), import_copy
 * (read through the exporter's datatype blob, written through the
 * receiver's), import_reduce (on the host); `mode` on `mode_rank` makes
 * that process refuse its exports or fail its imports. */
#ifndef COLL_IPC_FAKE_H_INCLUDED
#define COLL_IPC_FAKE_H_INCLUDED

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"
#include "coll_harness.h"
#include "coll/coll.h"
#include "core/backend_ipc.h"
#include "pack/pack.h"
#include "pack/traverse.h"
#include "coll/coll_testhooks.h"

static int rank, size;
static MPI_Comm cart;

/* ---- the stand-in IPC table ------------------------------------------------- */

enum { FAKE_OK, FAKE_NO_EXPORT, FAKE_IMPORT_FAILS };
static int mode, mode_rank = -1;
static long next_seg, exports, releases;

static int my_mode(void) { return rank == mode_rank ? mode : FAKE_OK; }

static void seg_name(char *out, size_t len, uint64_t owner, uint64_t id)
{
    snprintf(out, len, "/mpiacc_test_cipc_%llu_%llu", (unsigned long long)owner, (unsigned long long)id);
}

static int fake_export(const mpiacc_attrs_t *a, void *dep, void *buf, MPI_Aint lo, MPI_Aint hi,
                       mpiacc_ipc_export_t *x, void **token, int *ok)
{
    char name[96];
    int fd;
    void *p;
    *ok = 0;
    if (my_mode() == FAKE_NO_EXPORT) return MPI_SUCCESS;
    memset(x, 0, sizeof *x);
    x->owner = (uint64_t)getpid();
    x->buffer_id = (uint64_t)next_seg++;
    x->lo = lo;
    x->hi = hi;
    x->alloc_bytes = (uint64_t)(hi - lo);
    seg_name(name, sizeof name, x->owner, x->buffer_id);
    fd = shm_open(name, O_CREAT | O_RDWR | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, hi - lo) != 0) return MPI_ERR_OTHER;
    p = mmap(NULL, (size_t)(hi - lo), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return MPI_ERR_OTHER;
    memcpy(p, (char *)buf + lo, (size_t)(hi - lo)); /* the host data is ready (its event is set) */
    munmap(p, (size_t)(hi - lo));
    *token = (void *)(intptr_t)(x->buffer_id + 1);
    exports++;
    *ok = 1;
    return MPI_SUCCESS;
}

static void fake_release(void *token)
{
    char name[96];
    seg_name(name, sizeof name, (uint64_t)getpid(), (uint64_t)(intptr_t)token - 1);
    shm_unlink(name);
    releases++;
}

static const unsigned char *map_export(const mpiacc_ipc_export_t *x)
{
    char name[96];
    int fd;
    void *p;
    seg_name(name, sizeof name, x->owner, x->buffer_id);
    if ((fd = shm_open(name, O_RDONLY, 0)) < 0) return NULL;
    p = mmap(NULL, (size_t)x->alloc_bytes, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

static int fake_import(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *x, const void *blob,
                       size_t blob_bytes, MPI_Count src_count, const mpiacc_xfer_desc_t *d, void **xfer)
{
    const unsigned char *src;
    const mpiacc_pack_type_t *t = d->type;
    int err = MPI_SUCCESS;
    *xfer = NULL;
    if (my_mode() == FAKE_IMPORT_FAILS) return MPI_ERR_OTHER;
    if (!(src = map_export(x))) return MPI_ERR_OTHER;
    if (d->last - d->first > src_count * mpiacc_tv_size(blob)) err = MPI_ERR_INTERN;
    for (MPI_Count p = d->first; p < d->last && err == MPI_SUCCESS; p++) {
        int64_t at = mpiacc_tv_offset(blob, p) - x->lo;
        if (at < 0 || at >= (int64_t)x->alloc_bytes) err = MPI_ERR_BUFFER; /* outside the export */
        else ((unsigned char *)d->buf)[mpiacc_tv_offset(t->blob, p)] = src[at];
    }
    munmap((void *)src, (size_t)x->alloc_bytes);
    return err;
}

/* import_copy_n: each piece's bytes from its export's segment (inside its
 * [lo, hi) or MPI_ERR_BUFFER), a host memcpy. */
static long copy_calls, copyn_calls, copyn_pieces;

static int fake_import_counted(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *x, const void *blob,
                               size_t blob_bytes, MPI_Count src_count, const mpiacc_xfer_desc_t *d, void **xfer)
{
    copy_calls++;
    return fake_import(a, dep, x, blob, blob_bytes, src_count, d, xfer);
}

static int fake_copy_n(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int nx,
                       const mpiacc_ipc_piece_t *pieces, int n, void **xfer)
{
    int err = MPI_SUCCESS;
    *xfer = NULL;
    copyn_calls++;
    if (my_mode() == FAKE_IMPORT_FAILS) return MPI_ERR_OTHER;
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        const mpiacc_ipc_piece_t *p = &pieces[i];
        const unsigned char *src;
        if (p->bytes == 0) continue;
        if (p->src < 0 || p->src >= nx || p->bytes < 0) return MPI_ERR_INTERN;
        if (p->disp < xs[p->src].lo || p->disp + p->bytes > xs[p->src].hi) return MPI_ERR_BUFFER;
        if (!(src = map_export(&xs[p->src]))) return MPI_ERR_OTHER;
        memcpy(p->dst, src + (p->disp - xs[p->src].lo), (size_t)p->bytes);
        munmap((void *)src, (size_t)xs[p->src].alloc_bytes);
        copyn_pieces++;
    }
    return err;
}

static int fake_supported(MPI_Datatype type, MPI_Op op)
{
    return (type == MPI_INT || type == MPI_DOUBLE) && (op == MPI_SUM || op == MPI_MAX || op == MPI_MIN);
}

#define COMBINE(T, acc, v, op)                                                                                      \
    do {                                                                                                             \
        T a_ = *(T *)(acc), v_ = *(const T *)(v);                                                                    \
        *(T *)(acc) = op == MPI_SUM ? a_ + v_ : op == MPI_MAX ? (a_ > v_ ? a_ : v_) : (a_ < v_ ? a_ : v_);           \
    } while (0)

static int fake_reduce(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int n, MPI_Aint disp,
                       MPI_Datatype type, MPI_Op op, MPI_Count count, void *dst, void **xfer)
{
    const unsigned char *src[16];
    size_t esz = type == MPI_INT ? sizeof(int) : sizeof(double);
    unsigned char *out = malloc((size_t)count * esz + 1);
    int err = MPI_SUCCESS;
    *xfer = NULL;
    if (my_mode() == FAKE_IMPORT_FAILS || n > 16 || !fake_supported(type, op)) err = MPI_ERR_OTHER;
    for (int i = 0; i < n; i++) src[i] = err == MPI_SUCCESS ? map_export(&xs[i]) : NULL;
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        if (!src[i]) err = MPI_ERR_OTHER;
        else if (disp - xs[i].lo < 0 || disp - xs[i].lo + count * (MPI_Count)esz > (MPI_Count)xs[i].alloc_bytes)
            err = MPI_ERR_BUFFER;
    }
    for (MPI_Count k = 0; k < count && err == MPI_SUCCESS; k++) {
        unsigned char *acc = out + k * esz;
        memcpy(acc, src[0] + disp - xs[0].lo + k * esz, esz);
        for (int i = 1; i < n; i++) {
            const unsigned char *v = src[i] + disp - xs[i].lo + k * esz;
            if (type == MPI_INT) COMBINE(int, acc, v, op);
            else COMBINE(double, acc, v, op);
        }
    }
    if (err == MPI_SUCCESS) memcpy(dst, out, (size_t)count * esz); /* dst may be a source: written last */
    for (int i = 0; i < n; i++)
        if (src[i]) munmap((void *)src[i], (size_t)xs[i].alloc_bytes);
    free(out);
    return err;
}

static void fake_stats(mpiacc_ipc_stats_t *s) { memset(s, 0, sizeof *s); }

static const struct mpiacc_backend_ipc fake = {.export_buf = fake_export,
                                               .export_release = fake_release,
                                               .import_copy = fake_import_counted,
                                               .stats = fake_stats,
                                               .reduce_supported = fake_supported,
                                               .import_reduce = fake_reduce,
                                               .import_copy_n = fake_copy_n};
/* the same without import_copy_n: one import_copy per block */
static const struct mpiacc_backend_ipc fake_no_n = {.export_buf = fake_export,
                                                    .export_release = fake_release,
                                                    .import_copy = fake_import_counted,
                                                    .stats = fake_stats,
                                                    .reduce_supported = fake_supported,
                                                    .import_reduce = fake_reduce};

/* ---- helpers ----------------------------------------------------------------- */

/* 1 (and a message) when an export was not released. */
static int fake_unbalanced(void)
{
    if (exports == releases) return 0;
    fprintf(stderr, "rank %d: %ld exports, %ld released\n", rank, exports, releases);
    return 1;
}

static long runs(void) { return atomic_load(&mpiacc_coll_device_runs); }
static long fallbacks(void) { return atomic_load(&mpiacc_coll_staged_runs); }

#endif
