/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_ipc.h: internals shared by cuda_ipc.c (exporter, import_copy, the
 * table) and cuda_ipc_cache.c (the importer's caches: mappings, opened
 * events, device copies of sender blobs).
 */
#ifndef MPIACC_CUDA_IPC_H_INCLUDED
#define MPIACC_CUDA_IPC_H_INCLUDED

#include "cuda_internal.h"
#include "core/backend_ipc.h"

/* A driver entry point (cudaGetDriverEntryPointByVersion, CUDA 12.0 ABI),
 * or NULL. */
void *mpiacc_cuda_drv_symbol(const char *name);

/* Counters of backend_ipc.h, updated with relaxed atomics. */
extern mpiacc_ipc_stats_t mpiacc_cuda_ipc_st;
#define MPIACC_CUDA_IPC_STAT(f_) __atomic_add_fetch(&mpiacc_cuda_ipc_st.f_, 1, __ATOMIC_RELAXED)

/* Overrides of MPIACC_IPC (-1: the variable; 0 / 1) and MPIACC_IPC_CACHE
 * (0: the variable; a cap > 0), set only by cuda_testhooks.c. */
extern int mpiacc_cuda_ipc_enabled_knob;
extern int mpiacc_cuda_ipc_cache_knob;

/* The mapping of x's allocation on device dev (current): *base is the
 * mapped allocation base, *ref a reference released by mpiacc_cuda_ipc_unuse. */
int mpiacc_cuda_ipcc_map_get(const mpiacc_ipc_export_t *x, int dev, char **base, void **ref);
/* Makes st (device dev, current) wait for x's interprocess event. */
int mpiacc_cuda_ipcc_event_wait(const mpiacc_ipc_export_t *x, cudaStream_t st);
/* Device copy on dev (current) of a sender blob, cached by content;
 * *ref is released by mpiacc_cuda_ipc_unuse. */
int mpiacc_cuda_ipcc_blob_get(int dev, const void *blob, size_t bytes, const void **dblob, void **ref);
/* cuda_ipc.c, for cuda_coll.c: whether x is this process's own export; st
 * (x's device or a peer, current) waiting on its reserved event; peer
 * access from dev (current) to device peer of this process. */
int mpiacc_cuda_ipc_is_own(const mpiacc_ipc_export_t *x);
int mpiacc_cuda_ipc_own_event_wait(const mpiacc_ipc_export_t *x, cudaStream_t st);
int mpiacc_cuda_ipc_peer_enable(int dev, int peer);
/* cuda_coll.c: the table's reduce_supported and import_reduce. */
int mpiacc_cuda_reduce_supported(MPI_Datatype type, MPI_Op op);
int mpiacc_cuda_import_reduce(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int n, MPI_Aint disp,
                              MPI_Datatype type, MPI_Op op, MPI_Count count, void *dst, void **xfer);
/* cuda_coll.c: the table's import_copy_n. */
int mpiacc_cuda_import_copy_n(const mpiacc_attrs_t *a, void *dep, const mpiacc_ipc_export_t *xs, int nx,
                              const mpiacc_ipc_piece_t *pieces, int n, void **xfer);
/* Closes / frees everything (GPU work already finished). */
void mpiacc_cuda_ipcc_finalize(void);

#endif
