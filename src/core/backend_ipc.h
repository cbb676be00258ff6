/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_ipc.h: the optional interprocess (IPC) part of a backend, the
 * building block of the direct protocol: a sender exports the allocation
 * holding its buffer plus an interprocess event recorded behind the data's
 * dependency; a receiver on the same node maps the allocation (cached) and
 * copies straight from the sender's layout into its own with one kernel,
 * its GPU waiting on the sender's event (no host round trip).
 *
 * Plain C, no backend types: the protocol layer moves mpiacc_ipc_export_t
 * inside its own messages as opaque bytes (it is POD, fixed size, same
 * layout on both sides of a node).  A backend without IPC has ipc == NULL
 * in its table.
 *
 * Life cycle of one message (protocol side):
 *   sender    export_buf(..., &x, &token, &ok)       at MPI call time
 *             ok == 0: use another path (never an error by itself)
 *             send x (+ the datatype blob) to the receiver
 *   receiver  import_copy(..., &x, blob, ..., &xfer)  then test()/release()
 *             of the backend table on xfer; tell the sender when done
 *   sender    export_release(token)                  after the receiver's done
 *
 * A collective reading many contiguous blocks of several exports uses
 * import_copy_n instead (one launch for all of them) when the table has it.
 */
#ifndef MPIACC_BACKEND_IPC_H_INCLUDED
#define MPIACC_BACKEND_IPC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* mpiacc_ipc_export_t.flags */
#define MPIACC_IPC_F_EVENT 0x1 /* event_handle / event_id are valid: wait on it */

/* What the sender exports; every field is filled by export_buf. */
typedef struct mpiacc_ipc_export {
    uint8_t mem_handle[64];   /* cudaIpcMemHandle_t of the whole allocation holding the buffer */
    uint8_t event_handle[64]; /* cudaIpcEventHandle_t of an interprocess event recorded behind
                                 the data's dependency (valid with MPIACC_IPC_F_EVENT) */
    uint64_t owner;           /* exporting process: pid << 32 | a per-process random nonce;
                                 keys the importer's caches */
    uint64_t buffer_id;       /* CU_POINTER_ATTRIBUTE_BUFFER_ID of the allocation: unique in the
                                 exporting process for its lifetime (never reused after a free) */
    uint64_t event_id;        /* identity of the exporter's interprocess event object (unique in
                                 the exporting process), keys the importer's event cache */
    uint64_t base_addr;       /* allocation base in the exporter's address space: a same-process
                                 import uses it directly; the importer evicts stale mappings of
                                 the owner that overlap [base_addr, base_addr + alloc_bytes) */
    int64_t offset;           /* user buffer pointer - allocation base (may be < 0 when the
                                 datatype's lower bound is > 0: buf + lo is inside)      */
    uint64_t alloc_bytes;     /* allocation size                                           */
    int64_t lo, hi;           /* bytes [buf + lo, buf + hi) that the message touches (the
                                 span of count x type, true lb / ub); inside the allocation
                                 (the exporter checks; the importer checks again)          */
    int32_t device;           /* exporter's device ordinal of the allocation (informational) */
    int32_t flags;            /* MPIACC_IPC_F_*                                            */
} mpiacc_ipc_export_t;

/* One piece of import_copy_n: `bytes` contiguous bytes at `disp` from
 * the buffer of export xs[src] (source bytes [disp, disp + bytes) relative
 * to that buffer, inside its [lo, hi)), into the caller's memory at dst. */
typedef struct mpiacc_ipc_piece {
    int32_t src; /* index into the call's exports */
    int32_t pad;
    int64_t disp, bytes;
    void *dst;
} mpiacc_ipc_piece_t;

/* Pieces of one import_copy_n launch (more: one launch per this many). */
#define MPIACC_IPC_COPYN_PIECES 64

/* Process-wide counters since MPI_Init (for tests and mpiacc-info). */
typedef struct mpiacc_ipc_stats {
    long mem_opens;        /* allocations mapped (cudaIpcOpenMemHandle calls that succeeded) */
    long mem_hits;         /* imports that found their mapping in the cache                 */
    long mem_evictions;    /* mappings dropped by the LRU bound or as stale (address reuse)   */
    long mem_closes;       /* cudaIpcCloseMemHandle calls (evictions + finalize)            */
    long mem_same_process; /* imports of the importer's own export (no mapping needed)     */
    long event_opens;      /* interprocess event handles opened                             */
    long event_hits;       /* imports that found their event in the cache                   */
    long event_creates;    /* interprocess events created by the exporter's pool            */
    long exports;          /* export_buf calls with *ok = 1                                  */
    long export_fallbacks; /* export_buf calls with *ok = 0                                  */
    long blob_uploads;     /* device copies made of a sender's datatype blob (content cache misses) */
} mpiacc_ipc_stats_t;

struct mpiacc_backend_ipc {
    /* Sender, at MPI call time.  `buf` is the user's buffer; [lo, hi) are
     * the bytes relative to buf that count x type touch (hi > lo).  Sets
     * *ok = 0 and returns MPI_SUCCESS when the memory cannot be exported
     * (not device memory, stream-ordered pool memory, VMM memory without a
     * legacy IPC handle, MPIACC_IPC=0, ...): the protocol then uses another
     * path.  With *ok = 1: fills *x and, when dep is not NULL, records an
     * interprocess event behind dep on the GPU (no host synchronisation);
     * *token keeps that event reserved (it is not re-recorded) until
     * export_release(*token), which the sender calls once the receiver has
     * finished reading.  [lo, hi) not inside one allocation (a buffer
     * over several, or too small) also gives *ok = 0.  Errors: CUDA
     * failures (MPIACC_ERRK_CUDA). */
    int (*export_buf)(const mpiacc_attrs_t *a, void *dep, void *buf, MPI_Aint lo, MPI_Aint hi,
                      mpiacc_ipc_export_t *x, void **token, int *ok);
    void (*export_release)(void *token); /* NULL allowed */
    /* Receiver.  Maps x's allocation (cached per (owner, buffer_id,
     * device); one open per key, even with concurrent callers), makes its
     * work wait GPU-side on x's event and on its own captured dep, then
     * enqueues ONE kernel (or one copy when both layouts are dense) moving
     * packed bytes [d->first, d->last) of (src_count x the layout of
     * src_blob) at mapped base + x->offset into d->buf as (d->count x
     * d->type) — no intermediate packed copy.  src_blob is the sender's
     * datatype blob (src/pack/traverse.h), host memory, read during the
     * call only.  *xfer is tested with the backend's test() and released
     * with release() (NULL: nothing to do); the mapping stays referenced
     * (never closed) until the copy is done.  A same-process export (owner
     * is the caller's own) is read through base_addr directly.  Errors
     * (never a hang): a handle that cannot be opened (MPIACC_ERRK_CUDA,
     * naming the owner and the CUDA error), bytes outside the exported
     * allocation (MPIACC_ERRK_BUFFER), a malformed blob or a range beyond
     * either side's data (MPIACC_ERRK_INTERN). */
    int (*import_copy)(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *x, const void *src_blob,
                       size_t src_blob_bytes, MPI_Count src_count, const mpiacc_xfer_desc_t *d, void **xfer);
    /* Copies the counters. */
    void (*stats)(mpiacc_ipc_stats_t *s);

    /* ---- on-device collectives (src/coll/ipc*.c); both NULL: reductions on
     * direct communicators stay staged. ----
     * 1 when import_reduce handles (type, op): a predefined operation
     * (MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, MPI_LXOR,
     * MPI_BAND, MPI_BOR, MPI_BXOR as MPI defines them per type class) on a
     * predefined basic type.  Pure: the same answer on every process for the
     * same arguments (the collective layer relies on it to choose the same
     * algorithm everywhere without a message). */
    int (*reduce_supported)(MPI_Datatype type, MPI_Op op);
    /* Maps each xs[i]'s allocation (the caches of import_copy; xs[i] may be
     * the caller's own export), makes its work wait GPU-side on each xs[i]'s
     * event and on the caller's dep, then enqueues ONE kernel writing, for
     * k in [0, count):
     *     dst[k] = ((src_0[k] op src_1[k]) op src_2[k]) ... op src_{n-1}[k]
     * with src_i = (type *)(mapped base of xs[i] + xs[i].offset + disp):
     * count contiguous elements of `type` (the caller passes the sources in
     * rank order, so every process computes bitwise the same result for the
     * same slice).  dst is the caller's device memory (count elements); it
     * may alias the caller's own source at the same elements (each element
     * is read from every source before it is written).  Every source's bytes
     * must lie in [lo, hi) of its export (MPIACC_ERRK_BUFFER otherwise).
     * *xfer is tested with the backend's test() and released with release();
     * the mappings stay referenced until the kernel is done.  Errors as
     * import_copy; (type, op) not supported: MPIACC_ERRK_INTERN. */
    int (*import_reduce)(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int n, MPI_Aint disp,
                         MPI_Datatype type, MPI_Op op, MPI_Count count, void *dst, void **xfer);

    /* ---- on-device collectives that move data (src/coll/ipc_move.c); NULL:
     * one import_copy per block. ----
     * Maps each xs[j] that a piece reads (the caches of import_copy; xs[j]
     * may be the caller's own export), makes its work wait GPU-side on
     * each of their events and on the caller's dep, then copies, for every
     * piece p of pieces[0..n):
     *     p.bytes bytes at (mapped base of xs[p.src] + xs[p.src].offset + p.disp)
     *     to p.dst (the caller's device memory)
     * with ONE kernel launch for up to MPIACC_IPC_COPYN_PIECES pieces (more:
     * one launch per that many, on the same stream; the launch's parameters
     * do not grow with the bytes, and a long piece is spread over the whole
     * grid).  Pieces of 0 bytes are skipped (their dst may be NULL).  Every
     * piece's source bytes must lie in [lo, hi) of its export
     * (MPIACC_ERRK_BUFFER otherwise); no piece's dst may overlap another
     * piece's dst or any source byte of the call.  *xfer (NULL: nothing to
     * do) is tested with the backend's test() and released with release();
     * the mappings stay referenced until the copy is done.  Errors as
     * import_copy; nx < 1 with a non-empty piece, a piece's src outside
     * [0, nx), n < 0, bytes < 0: MPIACC_ERRK_INTERN (nothing enqueued). */
    int (*import_copy_n)(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int nx,
                         const struct mpiacc_ipc_piece *pieces, int n, void **xfer);
};

#endif /* MPIACC_BACKEND_IPC_H_INCLUDED */
