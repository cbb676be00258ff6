/*
 * cuda_internal.h: internals of the CUDA backend shared by its host files
 * (cuda_backend.c: the table; cuda_pool.c: devices, streams, events,
 * handles, buffers; cuda_xfer.c: pack/unpack planning; cuda_model.c: the
 * one-shot/device choice).  Tests and benchmarks may use the knobs below.
 */
#ifndef MPIACC_CUDA_INTERNAL_H_INCLUDED
#define MPIACC_CUDA_INTERNAL_H_INCLUDED

#include <pthread.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "core/core.h"
#include "pack/pack.h"
#include "cuda_kernels.h"

#define MPIACC_CU_MAXDEV 64     /* device ordinals handled            */
#define MPIACC_CU_MAXSTREAMS 32 /* internal streams per device        */
#define MPIACC_CU_NCLASS 48     /* device buffer size classes (2^k)   */

/* How a non-contiguous pack/unpack to host memory is done. */
enum {
    MPIACC_CU_MODE_AUTO = 0, /* model-based choice (default)                    */
    MPIACC_CU_MODE_ONESHOT,  /* kernel reads/writes mapped pinned host memory   */
    MPIACC_CU_MODE_DEVICE,   /* kernel into device temp + cudaMemcpyAsync (DMA) */
    MPIACC_CU_MODE_MEMCPY2D  /* cudaMemcpy2DAsync where the layout allows       */
};

/* Measured model of one device (cuda_model.c): times in s, bandwidths in B/s. */
typedef struct mpiacc_cu_model {
    int done;          /* 1 when measured (or fixed after a failed measurement) */
    double lat_k, bw_dev;                /* device-to-device copy kernel         */
    double lat_d2h, bw_d2h;              /* pinned DMA                           */
    double lat_h2d, bw_h2d;
    double bw_zcw1, bw_zcw16, lat_zcw;   /* kernel writing mapped host, ws=1/16  */
    double bw_zcr1, bw_zcr16, lat_zcr;   /* kernel reading mapped host           */
} mpiacc_cu_model_t;

typedef struct mpiacc_cu_buf {
    struct mpiacc_cu_buf *next;
    void *p;
    int cls;
} mpiacc_cu_buf_t;

/* Per-device state, set up at first use of the device. */
typedef struct mpiacc_cu_dev {
    int ready;
    int nsm, mempools;
    cudaStream_t service;                       /* uploads, calibration, frees */
    cudaStream_t streams[MPIACC_CU_MAXSTREAMS]; /* work streams (non-blocking) */
    int inflight[MPIACC_CU_MAXSTREAMS];
    int nstreams;
    cudaEvent_t *events; /* free events (cudaEventDisableTiming) */
    int nevents, capevents;
    mpiacc_cu_buf_t *bufs[MPIACC_CU_NCLASS];    /* free temp buffers by class  */
    mpiacc_cu_buf_t *spare;                     /* free descriptors            */
    mpiacc_cu_model_t model;
} mpiacc_cu_dev_t;

/* A dep or xfer handle (pooled). */
typedef struct mpiacc_cu_h {
    struct mpiacc_cu_h *next; /* free list                         */
    struct mpiacc_cu_h *all;  /* every handle ever made (finalize) */
    int dev;
    int sidx;                 /* stream held, -1 for none          */
    int nev;
    int done;
    int is_xfer;              /* xfer handles are synced if released early */
    cudaEvent_t ev[2];
    mpiacc_cu_buf_t *tmp;     /* device temp buffer held           */
    void *ipc_map, *ipc_blob; /* cuda_ipc.c references held by an import (dropped at finish) */
} mpiacc_cu_h_t;

/* Global state (cuda_pool.c).  mpiacc_cu_lock guards the pools' lists and
 * counters; it is never held across a CUDA call that allocates, waits or
 * synchronises (see cuda_pool.c).  Device setup has its own lock. */
extern pthread_mutex_t mpiacc_cu_lock;
extern int mpiacc_cu_ndev;
extern int mpiacc_cu_mode;          /* MPIACC_CU_MODE_*, from MPIACC_CUDA_PACK */
extern int mpiacc_cu_force_generic; /* MPIACC_CUDA_GENERIC=1: no strided kernels */
extern mpiacc_cu_dev_t mpiacc_cu_devs[MPIACC_CU_MAXDEV];

/* Error helper: a MPIACC_ERRK_CUDA error naming the call and the error. */
int mpiacc_cu_err(const char *call, cudaError_t e);
#define MPIACC_CU_CHECK(call_)                                       \
    do {                                                             \
        cudaError_t e_ = (call_);                                    \
        if (e_ != cudaSuccess) {                                     \
            mpi_errno = mpiacc_cu_err(#call_, e_);                   \
            goto fn_fail;                                            \
        }                                                            \
    } while (0)

/* ---- cuda_pool.c ---- */
int mpiacc_cu_pool_init(void);
void mpiacc_cu_pool_finalize(void);
/* Device of the call: the stream's, else MPIACC_DEVICE, else current. */
int mpiacc_cu_resolve_device(const mpiacc_attrs_t *a, int *dev);
/* Makes dev current in this thread (*old receives the previous one);
 * mpiacc_cu_dev_leave restores it. Sets the device up at first use. */
int mpiacc_cu_dev_enter(int dev, int *old);
void mpiacc_cu_dev_leave(int dev, int old);
/* Handles: get (dev current), finish (return resources once GPU work is
 * done), put (back to the free list, after syncing pending events). */
int mpiacc_cu_handle_get(int dev, mpiacc_cu_h_t **h);
void mpiacc_cu_handle_finish(mpiacc_cu_h_t *h);
void mpiacc_cu_handle_put(mpiacc_cu_h_t *h);
int mpiacc_cu_event_get(int dev, cudaEvent_t *ev);
/* A work stream with nothing in flight, if any (inflight is counted). */
int mpiacc_cu_stream_get(int dev, int *sidx);
void mpiacc_cu_stream_put(int dev, int sidx);
int mpiacc_cu_buf_get(int dev, size_t bytes, mpiacc_cu_buf_t **b);
void mpiacc_cu_buf_put(int dev, mpiacc_cu_buf_t *b);
/* Raw device memory (stream-ordered when the device has memory pools). */
int mpiacc_cu_dev_alloc(int dev, size_t bytes, void **p);
void mpiacc_cu_dev_free(int dev, void *p);
/* Pinned mapped staging and the registry of it. */
int mpiacc_cu_host_alloc(size_t bytes, void **p);
void mpiacc_cu_host_free(void *p, size_t bytes);
int mpiacc_cu_host_is_pinned(const void *p, size_t bytes);
/* Device copy of a type's blob (cached per type and device). */
int mpiacc_cu_blob_get(int dev, const mpiacc_pack_type_t *t, const void **dblob);
/* The backend's type_data_free: frees a datatype's device blobs. */
void mpiacc_cu_blob_free(void *data);

/* ---- cuda_ipc.c (interprocess export / import, src/core/backend_ipc.h) ---- */
extern const struct mpiacc_backend_ipc mpiacc_cu_ipc;
void mpiacc_cu_ipc_init(void);
/* Before mpiacc_cu_pool_finalize: waits for the work streams, then closes
 * every mapping and destroys the interprocess events. */
void mpiacc_cu_ipc_finalize(void);
/* Drops the references an import's handle holds (lock not held). */
void mpiacc_cu_ipc_unuse(void *map, void *blob);

/* ---- cuda_model.c ---- */
/* Measures the device once (dev current, lock not held). */
int mpiacc_cu_model_ensure(int dev);
/* One-shot (1) or device (0) for n packed bytes in blocks of b bytes,
 * words of ws bytes, direction MPIACC_CU_DIR_*. */
int mpiacc_cu_model_oneshot(int dev, int dir, double n, double b, int ws);
/* Forgets the measurements (finalize). */
void mpiacc_cu_model_reset(void);

/* ---- cuda_sync.c: how blocking calls wait for their kernel ---- */
enum {
    MPIACC_CU_SYNC_STREAM = 0, /* cudaStreamSynchronize                        */
    MPIACC_CU_SYNC_QUERY,      /* busy loop on cudaStreamQuery                 */
    MPIACC_CU_SYNC_EVENT,      /* cudaEventRecord + busy loop on cudaEventQuery */
    MPIACC_CU_SYNC_FLAG,       /* kernel's last block writes a mapped flag     */
    MPIACC_CU_SYNC_N
};
typedef struct mpiacc_cu_wait {
    int dev, slot, mode;
    mpiacc_cu_signal_t sig; /* for the kernel (count NULL: no signal) */
} mpiacc_cu_wait_t;
/* Before the launch (dev current): picks the method, takes a slot. */
void mpiacc_cu_wait_prepare(int dev, mpiacc_cu_wait_t *w);
/* After the enqueue on st: waits; kernel_signals says whether the work
 * enqueued was a kernel launched with w->sig.  Releases the slot. */
int mpiacc_cu_wait_finish(mpiacc_cu_wait_t *w, cudaStream_t st, int kernel_signals);
/* Error path before finish: syncs st (when non-NULL), drops the slot. */
void mpiacc_cu_wait_abandon(mpiacc_cu_wait_t *w, cudaStream_t st);
void mpiacc_cu_sync_finalize(void);

/* ---- cuda_xfer.c ---- */
int mpiacc_cu_pack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer);
int mpiacc_cu_unpack(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer);
int mpiacc_cu_pack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                       MPI_Aint packed_off);
int mpiacc_cu_unpack_dev(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                         MPI_Aint packed_off);

/* Test hook: plans the transfer as for real (packed side at the host
 * pointer `packed`) and runs the chosen kernel's host emulation; *ws and
 * *kind ("copy", "strided", "generic") report the plan. */
int mpiacc_cu_emulate_xfer(const mpiacc_xfer_desc_t *d, void *packed, int dir, int *ws, const char **kind);

/* Bench hook: plans as for real and enqueues the kernel (or copy) between
 * d->buf and `packed` (device or mapped pinned) on st, current device; no
 * wait, no memcpy2D.  For kernel-only timings of back-to-back packs. */
int mpiacc_cu_enqueue_xfer(const mpiacc_xfer_desc_t *d, void *packed, int dir, cudaStream_t st);

/* ---- knobs for tests and benchmarks ---- */
/* Completion method of blocking calls (MPIACC_CU_SYNC_*; default flag, or
 * MPIACC_CUDA_SYNC=stream|query|event|flag); set returns the previous one. */
int mpiacc_cuda_set_sync(int mode);
int mpiacc_cuda_get_sync(void);
const char *mpiacc_cuda_sync_name(int mode);
/* Sets the pack mode (MPIACC_CU_MODE_*) and the generic-kernel forcing;
 * returns the previous mode. */
int mpiacc_cuda_set_mode(int mode, int force_generic);
/* IPC (cuda_ipc.c): overrides MPIACC_IPC (on: 1 / 0; -1: back to the
 * variable) and MPIACC_IPC_CACHE (cap > 0; 0: back to the variable). */
void mpiacc_cuda_ipc_set_enabled(int on);
void mpiacc_cuda_ipc_set_cache(int cap);
/* The method the last pack/unpack used, for tests: "memcpy", "oneshot",
 * "device", "memcpy2d" (per thread). */
const char *mpiacc_cuda_last_method(void);

#endif
