/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opencl: the OpenCL backend (MPIACC_KIND_OPENCL).  Buffers are cl_mem
 * handles; byte offsets inside come from the datatype.  Internal header
 * shared by the files of this module.
 *
 * Objects (all protected by mpiacc_ocl_lock unless said otherwise):
 *  - mpiacc_ocl_ctx_t: one per cl_context seen (retained): the program and
 *    kernels built for it (lazily, once), a few internal in-order queues per
 *    device on which packs run, and a pool of device temporary buffers.
 *  - mpiacc_ocl_handle_t: a dep or xfer handle (pooled): up to two events
 *    to wait for, plus the temporary buffer the transfer uses.
 *  - a datatype's blob is copied to a device buffer once per context and kept
 *    in the analysis's data slot MPIACC_KIND_OPENCL (a list, one per context).
 */
#ifndef MPIACC_OCL_H_INCLUDED
#define MPIACC_OCL_H_INCLUDED

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>

#include "core/core.h"
#include "pack/pack.h"

/* Word sizes the generic kernels are built for: 1, 2, 4, 8, 16 bytes. */
#define MPIACC_OCL_NWS 5
/* Internal in-order queues per device of a context (packs that do not wait
 * for each other run on different queues, so they finish out of order). */
#define MPIACC_OCL_MAXQ 8

/* Calls an OpenCL API; on failure fails with MPIACC_ERRK_OPENCL naming the
 * API and the error (needs mpi_errno and fn_fail in scope). */
#define MPIACC_OCL_CALL(api_, call_)                                                         \
    do {                                                                                     \
        cl_int ocl_e_ = (call_);                                                             \
        if (ocl_e_ != CL_SUCCESS)                                                            \
            MPIACC_FAIL(MPIACC_ERRK_OPENCL, "%s failed: %s (%d)", (api_),                 \
                        mpiacc_ocl_errname(ocl_e_), (int)ocl_e_);                                  \
    } while (0)

typedef struct mpiacc_ocl_tmp {
    struct mpiacc_ocl_tmp *next;
    cl_mem mem;
    size_t bytes;
} mpiacc_ocl_tmp_t;

typedef struct mpiacc_ocl_queue {
    cl_device_id dev;
    cl_command_queue q;
    cl_event last; /* last command enqueued by us (retained), or NULL */
} mpiacc_ocl_queue_t;

typedef struct mpiacc_ocl_ctx {
    struct mpiacc_ocl_ctx *next;
    cl_context ctx;         /* retained */
    cl_device_id dev0;      /* first device of the context */
    int dev0_is_cpu;
    cl_program prog;        /* NULL until the first noncontiguous pack */
    cl_kernel kpack[MPIACC_OCL_NWS], kunpack[MPIACC_OCL_NWS];
    size_t wg;              /* work-group size used for the kernels */
    mpiacc_ocl_queue_t queues[MPIACC_OCL_MAXQ];
    int nqueues;
    mpiacc_ocl_tmp_t *tmp_free; /* pooled device temporaries */
} mpiacc_ocl_ctx_t;

typedef struct mpiacc_ocl_handle {
    struct mpiacc_ocl_handle *next; /* free list */
    cl_event ev[2];                 /* retained; NULL slots unused */
    cl_event dep[2];                /* xfer: the events it waits for (retained), watched for failure */
    mpiacc_ocl_ctx_t *cx;           /* owner of tmp */
    mpiacc_ocl_tmp_t *tmp;          /* device temporary in use, or NULL */
    int done;
    double flushed;                 /* when test() last flushed the queues (CLOCK_MONOTONIC s) */
} mpiacc_ocl_handle_t;

extern pthread_mutex_t mpiacc_ocl_lock;
extern const char mpiacc_ocl_kernel_source[]; /* generated: traverse.h + kernels.cl */

const char *mpiacc_ocl_errname(cl_int e);

/* ---- ocl_ctx.c (callers hold mpiacc_ocl_lock unless said otherwise) ---- */
/* The state of ctx, created on first use. */
int mpiacc_ocl_ctx_get(cl_context ctx, mpiacc_ocl_ctx_t **out);
/* Builds the program and kernels for cx if not yet done. */
int mpiacc_ocl_ctx_program(mpiacc_ocl_ctx_t *cx);
/* An internal queue of cx on device dev (NULL: first device), preferring an
 * idle one. */
int mpiacc_ocl_queue_pick(mpiacc_ocl_ctx_t *cx, cl_device_id dev, mpiacc_ocl_queue_t **out);
/* Records ev (retained) as the last command of qs and flushes the queue. */
int mpiacc_ocl_queue_enqueued(mpiacc_ocl_queue_t *qs, cl_event ev);
/* A device temporary of at least bytes (pooled). */
int mpiacc_ocl_tmp_get(mpiacc_ocl_ctx_t *cx, size_t bytes, mpiacc_ocl_tmp_t **out);
void mpiacc_ocl_tmp_put(mpiacc_ocl_ctx_t *cx, mpiacc_ocl_tmp_t *t);
/* The device copy of t's blob in cx (uploaded once, cached on the type). */
int mpiacc_ocl_blob_get(mpiacc_ocl_ctx_t *cx, const mpiacc_pack_type_t *t, cl_mem *out);
/* Releases everything held for every context (finalize). */
void mpiacc_ocl_ctx_release_all(void);

/* Handles: take one from the pool (zeroed); give back (releases events,
 * returns tmp, waiting for the events first if not complete). */
mpiacc_ocl_handle_t *mpiacc_ocl_handle_new(void);
void mpiacc_ocl_handle_free(mpiacc_ocl_handle_t *h);
void mpiacc_ocl_handle_pool_release(void);
/* The backend's type_data_free: releases a datatype's blob list (the data
 * of its slot MPIACC_KIND_OPENCL); lock taken inside. */
void mpiacc_ocl_blob_free(void *data);

/* ---- ocl_xfer.c ---- */
/* The backend's validate_span: the cl_mem holds count x type. */
int mpiacc_ocl_validate_span(const mpiacc_attrs_t *a, const mpiacc_xfer_desc_t *d);
int mpiacc_ocl_pack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer);
int mpiacc_ocl_unpack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer);
int mpiacc_ocl_pack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                        MPI_Aint packed_off);
int mpiacc_ocl_unpack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d,
                          void *packed, MPI_Aint packed_off);

/* ---- ocl_rect.c (pure functions; the rules are in ocl_rect.c) ---- */
/* A strided form folded into rows of blk bytes at
 * start + i0*s[0] + i1*s[1], i0 < n[0], i1 < n[1]. */
typedef struct mpiacc_ocl_rect {
    cl_long blk, start;
    int nd;
    cl_long n[2], s[2];
} mpiacc_ocl_rect_t;
/* One command of a rect transfer.  linear: a plain copy of `bytes` from
 * buffer byte bo[0] (packed cl_mem byte po[0]); otherwise a *BufferRect
 * with the buffer side (bo, brow, bslice) and the packed side (po, prow,
 * pslice; host side: origin 0 at host + poff).  poff: the command's first
 * packed byte, relative to the range's first. */
typedef struct mpiacc_ocl_rcmd {
    int linear;
    size_t bo[3], po[3], region[3];
    size_t brow, bslice, prow, pslice, bytes;
    cl_long poff;
} mpiacc_ocl_rcmd_t;
#define MPIACC_OCL_RECT_MAXCMD 8
/* Folds t's strided form (with count elements); 0 when not a rect shape. */
int mpiacc_ocl_rect_plan(const mpiacc_pack_type_t *t, cl_long count, mpiacc_ocl_rect_t *r);
/* The commands moving packed bytes [first, last) (multiples of blk) for a
 * data cl_mem of bufsize bytes; packed side: host (pksize < 0) or a cl_mem
 * of pksize bytes holding the range at byte pkoff.  Returns how many (at
 * most max), or 0 when the range cannot be moved by rules-abiding rect
 * commands (then the kernel does it). */
int mpiacc_ocl_rect_cmds(const mpiacc_ocl_rect_t *r, cl_long first, cl_long last, cl_long bufsize,
                         cl_long pkoff, cl_long pksize, mpiacc_ocl_rcmd_t *out, int max);
/* 1 when c obeys the rules (sizes as for mpiacc_ocl_rect_cmds). */
int mpiacc_ocl_rcmd_ok(const mpiacc_ocl_rcmd_t *c, cl_long bufsize, cl_long pksize);

/* ---- ocl_valid.c ---- */
/* Context (and size, when size != NULL) of a cl_mem; MPIACC_ERRK_BUFFER
 * when NULL, released or not an OpenCL memory object at all (a host
 * pointer): checked without reading through the handle, never a crash
 * (ocl_valid.c says how).  `a` (may be NULL): the call's attributes, whose
 * queue and event serve as references for a handle seen the first time. */
int mpiacc_ocl_mem_context(cl_mem m, const mpiacc_attrs_t *a, cl_context *ctx, size_t *size);
/* At start-up, for every platform: what its objects (and its first
 * device's) begin with. */
void mpiacc_ocl_valid_learn_platform(cl_platform_id p);
/* At finalize: forgets the handles remembered as live. */
void mpiacc_ocl_valid_finalize(void);
/* Whether p is a handle remembered as live (the backend's is_live_handle:
 * a host-typed call passing it is refused). */
int mpiacc_ocl_valid_is_live(const void *p);
/* Handles remembered as live now (tests). */
int mpiacc_ocl_valid_live_count(void);
/* m is remembered as released with the bytes it holds now, as a
 * destructor callback does (tests: ocl_testhooks.h). */
void mpiacc_ocl_valid_note_released(cl_mem m);
/* 1 (the default): mpiacc_ocl_mem_context checks handles as above; 0: it
 * calls the runtime directly (benchmarks measure the difference through
 * ocl_testhooks.h; the library never sets it). */
extern int mpiacc_ocl_mem_check;

/* ---- ocl_backend.c ---- */
/* Device of an attribute queue (must belong to ctx), or NULL without a
 * queue or with MPIACC_QUEUE_NONE. */
int mpiacc_ocl_attr_device(const mpiacc_attrs_t *a, cl_context ctx, cl_device_id *dev);

/* Rect policy, from MPIACC_OCL_RECT at init: 0 auto (CPU devices, or rows
 * of at least MPIACC_OCL_RECT_MIN bytes, default 64), 1 never, 2 always
 * when the shape allows.  Tests set it through ocl_testhooks.h. */
extern int mpiacc_ocl_rect_policy;
extern long long mpiacc_ocl_rect_min;

/* ---- ocl_xfer.c ---- */
/* The strategy the calling thread's last pack/unpack used: "copy", "rect"
 * or "kernel"; read by tests through ocl_testhooks.h. */
extern _Thread_local const char *mpiacc_ocl_xfer_method;

/* ---- ocl_backend.c ---- */
/* Transfers test() reports failed once complete (ocl_testhooks.h); 0. */
extern atomic_int mpiacc_ocl_inject_xfer_failures;

#endif /* MPIACC_OCL_H_INCLUDED */
