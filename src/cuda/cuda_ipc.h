/*
 * cuda_ipc.h: internals shared by cuda_ipc.c (exporter, import_copy, the
 * table) and cuda_ipc_cache.c (the importer's caches: mappings, opened
 * events, device copies of sender blobs).
 */
#ifndef MPIACC_CUDA_IPC_H_INCLUDED
#define MPIACC_CUDA_IPC_H_INCLUDED

#include "cuda_internal.h"
#include "core/backend_ipc.h"

/* Counters of backend_ipc.h, updated with relaxed atomics. */
extern mpiacc_ipc_stats_t mpiacc_cu_ipc_st;
#define MPIACC_CU_IPC_STAT(f_) __atomic_add_fetch(&mpiacc_cu_ipc_st.f_, 1, __ATOMIC_RELAXED)

/* The mapping of x's allocation on device dev (current): *base is the
 * mapped allocation base, *ref a reference released by mpiacc_cu_ipc_unuse. */
int mpiacc_cu_ipcc_map_get(const mpiacc_ipc_export_t *x, int dev, char **base, void **ref);
/* Makes st (device dev, current) wait for x's interprocess event. */
int mpiacc_cu_ipcc_event_wait(const mpiacc_ipc_export_t *x, cudaStream_t st);
/* Device copy on dev (current) of a sender blob, cached by content;
 * *ref is released by mpiacc_cu_ipc_unuse. */
int mpiacc_cu_ipcc_blob_get(int dev, const void *blob, size_t bytes, const void **dblob, void **ref);
/* Closes / frees everything (GPU work already finished). */
void mpiacc_cu_ipcc_finalize(void);

#endif
