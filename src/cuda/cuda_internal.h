/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_internal.h: internals of the CUDA backend shared by its host files
 * (cuda_backend.c: the table; cuda_pool.c: devices, streams, events,
 * handles, buffers; cuda_xfer.c: pack/unpack planning; cuda_model.c: the
 * one-shot/device choice) and cuda_testhooks.c.  Tests and benchmarks use
 * the knobs of cuda_testhooks.h, not the state below.
 */
#ifndef MPIACC_CUDA_INTERNAL_H_INCLUDED
#define MPIACC_CUDA_INTERNAL_H_INCLUDED

#include <pthread.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "core/core.h"
#include "pack/pack.h"
#include "cuda_kernels.h"

#define MPIACC_CUDA_MAXDEV 64     /* device ordinals handled            */
#define MPIACC_CUDA_MAXSTREAMS 32 /* internal streams per device        */
#define MPIACC_CUDA_NCLASS 48     /* device buffer size classes (2^k)   */

/* How a non-contiguous pack/unpack to host memory is done. */
enum {
    MPIACC_CUDA_MODE_AUTO = 0, /* model-based choice (default)                    */
    MPIACC_CUDA_MODE_ONESHOT,  /* kernel reads/writes mapped pinned host memory   */
    MPIACC_CUDA_MODE_DEVICE,   /* kernel into device temp + cudaMemcpyAsync (DMA) */
    MPIACC_CUDA_MODE_MEMCPY2D  /* cudaMemcpy2DAsync where the layout allows       */
};

/* Measured model of one device (cuda_model.c): times in s, bandwidths in B/s. */
typedef struct mpiacc_cuda_model {
    int done;          /* 1 when measured (or fixed after a failed measurement) */
    double lat_k, bw_dev;                /* device-to-device copy kernel         */
    double lat_d2h, bw_d2h;              /* pinned DMA                           */
    double lat_h2d, bw_h2d;
    double bw_zcw1, bw_zcw16, lat_zcw;   /* kernel writing mapped host, ws=1/16  */
    double bw_zcr1, bw_zcr16, lat_zcr;   /* kernel reading mapped host           */
} mpiacc_cuda_model_t;

typedef struct mpiacc_cuda_buf {
    struct mpiacc_cuda_buf *next;
    void *p;
    int cls;
    int dev; /* the device it belongs to */
    int ipc; /* cudaMalloc'd, so that a peer (UCX's cuda_ipc) can map it; kept on ipcbufs */
} mpiacc_cuda_buf_t;

/* Per-device state, set up at first use of the device. */
typedef struct mpiacc_cuda_dev {
    int ready;
    int nsm, mempools;
    int prio;                                   /* the work streams' priority: the device's greatest */
    cudaStream_t service;                       /* uploads, calibration, frees */
    cudaStream_t streams[MPIACC_CUDA_MAXSTREAMS]; /* work streams (non-blocking) */
    int inflight[MPIACC_CUDA_MAXSTREAMS];
    int nstreams;
    cudaEvent_t *events; /* free events (cudaEventDisableTiming) */
    int nevents, capevents;
    mpiacc_cuda_buf_t *bufs[MPIACC_CUDA_NCLASS];    /* free temp buffers by class  */
    mpiacc_cuda_buf_t *ipcbufs[MPIACC_CUDA_NCLASS]; /* free transport staging by class (plain cudaMalloc) */
    mpiacc_cuda_buf_t *spare;                     /* free descriptors            */
    mpiacc_cuda_model_t model;
} mpiacc_cuda_dev_t;

/* A dep or xfer handle (pooled). */
typedef struct mpiacc_cuda_h {
    struct mpiacc_cuda_h *next; /* free list                         */
    struct mpiacc_cuda_h *all;  /* every handle ever made (finalize) */
    int dev;
    int sidx;                 /* stream held, -1 for none          */
    int nev;
    int done;
    int is_xfer;              /* xfer handles are synced if released early */
    int refs;                 /* owners (a fused launch's handle is shared by its transfers) */
    cudaEvent_t ev[2];
    mpiacc_cuda_buf_t *tmp;     /* device temp buffer held           */
    void *ipc_map, *ipc_blob; /* cuda_ipc.c references held by an import (dropped at finish) */
    int fslot;                /* cuda_ipc_sig.c: completion flag slot, -1 none (IPCV_FLAG) */
    unsigned fseq, fpolls;    /* the value the GPU writes there; tests so far */
    void (*fin)(void *);      /* when not NULL: called once with fin_arg at finish (the GPU is done;
                                 cuda_coll.c drops the mapping references of a reduction) */
    void *fin_arg;
} mpiacc_cuda_h_t;

/* Global state (cuda_pool.c).  mpiacc_cuda_lock guards the pools' lists and
 * counters; it is never held across a CUDA call that allocates, waits or
 * synchronises (see cuda_pool.c).  Device setup has its own lock. */
extern pthread_mutex_t mpiacc_cuda_lock;
extern int mpiacc_cuda_ndev;
extern int mpiacc_cuda_mode;          /* MPIACC_CUDA_MODE_*, from MPIACC_CUDA_PACK */
extern int mpiacc_cuda_force_generic; /* MPIACC_CUDA_GENERIC=1: no strided kernels */
extern mpiacc_cuda_dev_t mpiacc_cuda_devs[MPIACC_CUDA_MAXDEV];

/* Error helper: a MPIACC_ERRK_CUDA error naming the call and the error. */
int mpiacc_cuda_err(const char *call, cudaError_t e);
#define MPIACC_CUDA_CHECK(call_)                                     \
    do {                                                             \
        cudaError_t e_ = (call_);                                    \
        if (e_ != cudaSuccess) {                                     \
            mpi_errno = mpiacc_cuda_err(#call_, e_);                 \
            goto fn_fail;                                            \
        }                                                            \
    } while (0)

/* ---- cuda_pool.c ---- */
int mpiacc_cuda_pool_init(void);
void mpiacc_cuda_pool_finalize(void);
/* Device of the call: the stream's, else MPIACC_DEVICE, else current. */
int mpiacc_cuda_resolve_device(const mpiacc_attrs_t *a, int *dev);
/* Makes dev current in this thread (*old receives the previous one);
 * mpiacc_cuda_dev_leave restores it. Sets the device up at first use. */
int mpiacc_cuda_dev_enter(int dev, int *old);
void mpiacc_cuda_dev_leave(int dev, int old);
/* Handles: get (dev current), finish (return resources once GPU work is
 * done), put (back to the free list, after syncing pending events). */
int mpiacc_cuda_handle_get(int dev, mpiacc_cuda_h_t **h);
void mpiacc_cuda_handle_finish(mpiacc_cuda_h_t *h);
void mpiacc_cuda_handle_put(mpiacc_cuda_h_t *h);
/* A transfer handle whose enqueue failed part way (h may be NULL): waits
 * for what was enqueued on st (NULL: nothing), so that no command still
 * uses its buffers, then puts it back without testing its events. */
void mpiacc_cuda_handle_abandon(mpiacc_cuda_h_t *h, cudaStream_t st);
int mpiacc_cuda_event_get(int dev, cudaEvent_t *ev);
/* Records one more pooled event of the handle on st (the handle is done
 * once all its events are). */
int mpiacc_cuda_handle_record(mpiacc_cuda_h_t *h, cudaStream_t st);
/* Makes st wait (GPU-side) for every event of dep; NULL or done: nothing. */
int mpiacc_cuda_handle_wait(cudaStream_t st, const mpiacc_cuda_h_t *dep);
/* A work stream with nothing in flight, if any (inflight is counted). */
int mpiacc_cuda_stream_get(int dev, int *sidx);
/* The stream of a lane (mpiacc_xfer_desc_t.lane): *lane's stream when it
 * has one, else a stream from mpiacc_cuda_stream_get, remembered in *lane
 * (lane NULL: stream_get).  inflight is counted either way. */
int mpiacc_cuda_stream_lane(int dev, int *lane, int *sidx);
void mpiacc_cuda_stream_put(int dev, int sidx);
int mpiacc_cuda_buf_get(int dev, size_t bytes, mpiacc_cuda_buf_t **b);
/* The same for a buffer MPI's transport sends from or receives into: plain
 * cudaMalloc memory (stream-ordered pool memory cannot be exported over
 * CUDA IPC, and UCX then stages it through host memory: 158 us instead of
 * 25 us for 4 MiB between two H200s). */
int mpiacc_cuda_buf_get_ipc(int dev, size_t bytes, mpiacc_cuda_buf_t **b);
/* Back to its device's free list (lock not held); the GPU and MPI must be
 * done with it. */
void mpiacc_cuda_buf_put(mpiacc_cuda_buf_t *b);
/* Raw device memory (stream-ordered when the device has memory pools). */
int mpiacc_cuda_dev_alloc(int dev, size_t bytes, void **p);
void mpiacc_cuda_dev_free(int dev, void *p);
/* Frees p once the work already enqueued on dev's internal streams is done
 * (no device-wide synchronisation; dev current, lock not held). */
void mpiacc_cuda_dev_free_ordered(int dev, void *p);
/* Pinned mapped staging and the registry of it. */
int mpiacc_cuda_host_alloc(size_t bytes, void **p);
void mpiacc_cuda_host_free(void *p, size_t bytes);
int mpiacc_cuda_host_is_pinned(const void *p, size_t bytes);
/* ---- cuda_blob.c ---- */
/* Device copy of a type's blob (cached per type and device). */
int mpiacc_cuda_blob_get(int dev, const mpiacc_pack_type_t *t, const void **dblob);
/* The backend's type_data_free: frees a datatype's device blobs. */
void mpiacc_cuda_blob_free(void *data);
/* For cuda_pool.c's init and finalize (finalize: lock held). */
void mpiacc_cuda_blob_init(void);
void mpiacc_cuda_blob_drop_dev(int dev);
void mpiacc_cuda_blob_drop_all(void);

/* ---- cuda_nccl.c (or cuda_nccl_stub.c): the collective engine, NCCL
 * loaded at run time (src/core/backend_coll.h) ---- */
extern const struct mpiacc_backend_coll mpiacc_cuda_coll;

/* ---- cuda_ipc.c (interprocess export / import, src/core/backend_ipc.h) ---- */
extern const struct mpiacc_backend_ipc mpiacc_cuda_ipc;
/* cuda_uva.c: the table's classify entry (pointer query). */
int mpiacc_cuda_classify(const void *p, int *mem, int *device);
void mpiacc_cuda_ipc_init(void);
/* Before mpiacc_cuda_pool_finalize: waits for the work streams, then closes
 * every mapping and destroys the interprocess events. */
void mpiacc_cuda_ipc_finalize(void);
/* Drops the references an import's handle holds (lock not held). */
void mpiacc_cuda_ipc_unuse(void *map, void *blob);

/* ---- cuda_ipc_sig.c: the IPC path's variants (issue 23; XFLAG reaches
 * the staged transfers too) ---- */
/* Bits of mpiacc_cuda_ipc_variant, set through cuda_testhooks.h
 * (mpiacc_cuda_set_ipc_variant) so that bench/pingpong --variant can sweep
 * them; the library starts with MPIACC_CUDA_IPCV_DEFAULT. */
#define MPIACC_CUDA_IPCV_KERNEL 0x1  /* import: dense-to-dense through the copy kernel, not cudaMemcpyAsync   */
#define MPIACC_CUDA_IPCV_FLAG 0x2    /* import: completion through a host-mapped flag that the stream writes
                                        (cuStreamWriteValue32) after the copy, tested with a plain load,
                                        instead of cudaEventRecord + cudaEventQuery                        */
#define MPIACC_CUDA_IPCV_CAPQ 0x4    /* capture on a non-blocking MPIACC_STREAM: cudaStreamQuery first; idle gives
                                        a dependency that is already done (no event recorded, none queried
                                        later: the sender exports no event, the receiver waits on none) */
#define MPIACC_CUDA_IPCV_NOQUERY 0x8 /* export: no cudaEventQuery of the dependency; an interprocess event
                                        whenever the dependency is not already known done                 */
#define MPIACC_CUDA_IPCV_ROWS 0x10   /* import: vector <-> vector / dense as one cudaMemcpy2DAsync (copy
                                        engine) when the layouts allow (cuda_xcopy.h ROWS), not the kernel */
#define MPIACC_CUDA_IPCV_XFLAG 0x20  /* the same flags for pack / unpack to host staging (default, eager and
                                        pipelined protocols: cuda_xfer.c), not only for IPC imports          */
#define MPIACC_CUDA_IPCV_ALL 0x3f
#define MPIACC_CUDA_IPCV_NBITS 6
/* The default, measured on one H200 shared by two ranks under MPS
 * (2026-11-25, the former scripts/pingpong-sweep.sh, docs/performance.md): flag
 * completion saves ~1 us of completion detection per transfer, rows (up to
 * MPIACC_CUDA_XCOPY_ROWS_MAX) saves the copy kernel's launch for small
 * vectors, xflag takes 1-2 us off the staged 1 KiB path; capq and noquery
 * measured no better than the event query (capq's idle check moved the cost
 * to the receiver), kernel no better than cudaMemcpyAsync. */
#define MPIACC_CUDA_IPCV_DEFAULT (MPIACC_CUDA_IPCV_FLAG | MPIACC_CUDA_IPCV_ROWS | MPIACC_CUDA_IPCV_XFLAG)
extern int mpiacc_cuda_ipc_variant;
/* How often each variant took effect (index: bit number), for tests. */
extern long mpiacc_cuda_ipcv_used[MPIACC_CUDA_IPCV_NBITS];
#define MPIACC_CUDA_IPCV_USED(bitno_) __atomic_add_fetch(&mpiacc_cuda_ipcv_used[bitno_], 1, __ATOMIC_RELAXED)
static inline int mpiacc_cuda_ipcv(int bit)
{
    return (__atomic_load_n(&mpiacc_cuda_ipc_variant, __ATOMIC_RELAXED) & bit) != 0;
}
/* IPCV_FLAG / XFLAG: after the copy enqueued on st (dev current), makes st write
 * a flag of a free slot into h (h->fslot, h->fseq).  *used = 0 (and
 * MPI_SUCCESS) when no slot or no stream memory operations are available:
 * the caller records an event instead.  bitno: the variant counted in
 * mpiacc_cuda_ipcv_used (1 FLAG, 5 XFLAG). */
int mpiacc_cuda_flag_signal(mpiacc_cuda_h_t *h, cudaStream_t st, int bitno, int *used);
/* Test of a handle with a flag slot: the flag, and every 64th test the
 * handle's stream (cudaStreamQuery: an error on it ends the wait). */
int mpiacc_cuda_flag_test(mpiacc_cuda_h_t *h, int *done);
/* Gives the slot back (handle finished or put; lock not held). */
void mpiacc_cuda_flag_put(mpiacc_cuda_h_t *h);
void mpiacc_cuda_flag_finalize(void);

/* ---- cuda_model.c ---- */
/* Measures the device once (dev current, lock not held). */
int mpiacc_cuda_model_ensure(int dev);
/* One-shot (1) or device (0) for n packed bytes in blocks of b bytes,
 * words of ws bytes, direction MPIACC_CUDA_DIR_*. */
int mpiacc_cuda_model_oneshot(int dev, int dir, double n, double b, int ws);
/* Forgets the measurements (finalize). */
void mpiacc_cuda_model_reset(void);

/* ---- cuda_sync.c: how blocking calls wait for their kernel ---- */
enum {
    MPIACC_CUDA_SYNC_STREAM = 0, /* cudaStreamSynchronize                        */
    MPIACC_CUDA_SYNC_QUERY,      /* busy loop on cudaStreamQuery                 */
    MPIACC_CUDA_SYNC_EVENT,      /* cudaEventRecord + busy loop on cudaEventQuery */
    MPIACC_CUDA_SYNC_FLAG,       /* kernel's last block writes a mapped flag     */
    MPIACC_CUDA_SYNC_N
};
typedef struct mpiacc_cuda_wait {
    int dev, slot, mode;
    mpiacc_cuda_signal_t sig; /* for the kernel (count NULL: no signal) */
} mpiacc_cuda_wait_t;
/* Before the launch (dev current): picks the method, takes a slot. */
void mpiacc_cuda_wait_prepare(int dev, mpiacc_cuda_wait_t *w);
/* After the enqueue on st: waits; kernel_signals says whether the work
 * enqueued was a kernel launched with w->sig.  Releases the slot. */
int mpiacc_cuda_wait_finish(mpiacc_cuda_wait_t *w, cudaStream_t st, int kernel_signals);
/* Error path before finish: syncs st (when non-NULL), drops the slot. */
void mpiacc_cuda_wait_abandon(mpiacc_cuda_wait_t *w, cudaStream_t st);
void mpiacc_cuda_sync_finalize(void);
/* The method in use: MPIACC_CUDA_SYNC, read at first use, unless
 * mpiacc_cuda_sync_choice (-1: not chosen yet) was set by cuda_testhooks.c. */
int mpiacc_cuda_sync_mode(void);
extern int mpiacc_cuda_sync_choice;

/* ---- cuda_xfer.c ---- */
int mpiacc_cuda_pack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer);
int mpiacc_cuda_unpack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer);
/* The backend's xfer_many: a batch's transfers in one launch (core.h). */
int mpiacc_cuda_xfer_many(mpiacc_xfer_item_t *items, int n);
int mpiacc_cuda_pack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                         MPI_Aint packed_off);
int mpiacc_cuda_unpack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                           MPI_Aint packed_off);

/* Planning, shared with cuda_testhooks.c.  A plan is the kernel side of a
 * transfer of packed bytes [d->first, d->last) of d->count elements with
 * the packed side at `packed` (byte d->first). */
enum { MPIACC_CUDA_PLAN_COPY, MPIACC_CUDA_PLAN_STRIDED, MPIACC_CUDA_PLAN_GENERIC };
typedef struct mpiacc_cuda_plan {
    int kind;      /* MPIACC_CUDA_PLAN_*                      */
    int ws;        /* word size of the kernel                 */
    char *base;    /* COPY: byte `first` lives at base+first; STRIDED: buf+start; GENERIC: buf */
    long long blk; /* block bytes (STRIDED), chunk (GENERIC)  */
    mpiacc_cuda_strided_t s;
} mpiacc_cuda_plan_t;
int mpiacc_cuda_plan_make(const mpiacc_xfer_desc_t *d, const char *packed, mpiacc_cuda_plan_t *P);
/* The item of the fused launch (mpiacc_cuda_launch_multi) moving d's
 * packed range between d->buf and packed (dblob: the type's blob where the
 * kernel reads it); the span checks of mpiacc_cuda_plan_make. */
int mpiacc_cuda_multi_item(const mpiacc_xfer_desc_t *d, char *packed, const void *dblob, int dir,
                           mpiacc_cuda_multi_item_t *it);
/* Enqueues a COPY plan's cudaMemcpyAsync on st. */
int mpiacc_cuda_plan_copy(const mpiacc_cuda_plan_t *P, const mpiacc_xfer_desc_t *d, int dir, char *packed,
                          cudaStream_t st);
/* Launches a STRIDED or GENERIC plan's kernel on st (dev current; sig:
 * completion signal or NULL). */
int mpiacc_cuda_plan_kernel(int dev, const mpiacc_cuda_plan_t *P, const mpiacc_xfer_desc_t *d, int dir,
                            char *packed, const mpiacc_cuda_signal_t *sig, cudaStream_t st);
/* Device of a call (dep's, else as mpiacc_cuda_resolve_device), made
 * current; *old receives the previous one for mpiacc_cuda_dev_leave. */
int mpiacc_cuda_enter_call_device(const mpiacc_attrs_t *a, void *dep, int *dev, int *old);
/* The method the calling thread's last pack/unpack used: "memcpy",
 * "memcpy2d", "oneshot", "device" (to / from host), "kernel"
 * (device-to-device, blocking) or "staging" (the pack kernel into / out of
 * device staging, host_on_device); read by tests through cuda_testhooks.h. */
extern _Thread_local const char *mpiacc_cuda_xfer_method;

#endif
