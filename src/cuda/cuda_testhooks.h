/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_testhooks.h: the CUDA backend's knobs for tests and benchmarks (it
 * also gives them the internals of cuda_internal.h).  cuda_testhooks.c is
 * built into libmpiacc_internal.a only: libmpiacc.so has none of these
 * functions, and the library never calls them.  The host emulations of the kernels
 * (mpiacc_cuda_emulate_strided / _generic in cuda_kernels.h,
 * mpiacc_cuda_emulate_xcopy in cuda_xcopy.h) are compiled with the kernels
 * whose code they run, so they are in libmpiacc.so too, hidden.
 */
#ifndef MPIACC_CUDA_TESTHOOKS_H_INCLUDED
#define MPIACC_CUDA_TESTHOOKS_H_INCLUDED

#include "cuda_internal.h"

/* Pack mode (MPIACC_CUDA_MODE_*, else MPIACC_CUDA_PACK decides) and the
 * generic-kernel forcing (as MPIACC_CUDA_GENERIC=1); returns the previous
 * mode. */
int mpiacc_cuda_set_mode(int mode, int force_generic);

/* Completion method of blocking calls (MPIACC_CUDA_SYNC_*; default flag,
 * or MPIACC_CUDA_SYNC=stream|query|event|flag); set returns the previous
 * one and ignores a mode out of range. */
int mpiacc_cuda_set_sync(int mode);
int mpiacc_cuda_get_sync(void);
const char *mpiacc_cuda_sync_name(int mode);

/* IPC: overrides MPIACC_IPC (on: 1 / 0; -1: back to the variable) and
 * MPIACC_IPC_CACHE (cap > 0; 0: back to the variable). */
void mpiacc_cuda_ipc_set_enabled(int on);
void mpiacc_cuda_ipc_set_cache(int cap);

/* The IPC path's variants (issue 23): MPIACC_CUDA_IPCV_* bits of
 * cuda_internal.h ("kernel" 0x1, "flag" 0x2, "capq" 0x4, "noquery" 0x8,
 * "rows" 0x10, "xflag" 0x20); set returns the previous bits (bits outside
 * MPIACC_CUDA_IPCV_ALL ignored).  Set them between messages, never with one
 * in flight.  parse reads names joined by '+' or ',' ("base" or "default":
 * MPIACC_CUDA_IPCV_DEFAULT; "none": 0) and returns -1 for an unknown name;
 * name writes the bits' names ("none" for 0). */
int mpiacc_cuda_set_ipc_variant(int bits);
/* How often each variant took effect in this process (used[i]: bit 1 << i;
 * "flag": completion flags enqueued, "capq": dependencies found done by
 * the query, "noquery": exports that skipped the query, "kernel" / "rows":
 * imports copied that way, "xflag": flags of staged packs / unpacks). */
void mpiacc_cuda_ipc_variant_used(long used[MPIACC_CUDA_IPCV_NBITS]);
int mpiacc_cuda_ipc_variant_parse(const char *s);
void mpiacc_cuda_ipc_variant_name(int bits, char *out, size_t n);

/* The kernels' unrolled forms for large transfers (several vectors per
 * thread; 1, the default) or one vector per thread only (0); returns the
 * previous setting.  Not thread-safe: set it between transfers. */
int mpiacc_cuda_set_unroll(int on);

/* The method the calling thread's last pack/unpack used: "memcpy",
 * "memcpy2d", "oneshot", "device", "kernel"; "none" before any. */
const char *mpiacc_cuda_last_method(void);

/* Plans the transfer as for real (packed side at the host pointer
 * `packed`) and runs the chosen kernel's host emulation; *ws and *kind
 * ("copy", "strided", "generic") report the plan. */
int mpiacc_cuda_emulate_xfer(const mpiacc_xfer_desc_t *d, void *packed, int dir, int *ws, const char **kind);
/* The fused launch of n transfers (mpiacc_cuda_launch_multi) in the host
 * emulation: d[i]'s packed range to / from packed[i] in direction dir[i]. */
int mpiacc_cuda_emulate_multi_xfer(const mpiacc_xfer_desc_t *d, char *const *packed, const int *dir, int n);

/* Plans as for real and enqueues the kernel (or copy) between d->buf and
 * `packed` (device or mapped pinned) on st, current device; no wait, no
 * memcpy2D.  For kernel-only timings of back-to-back packs. */
int mpiacc_cuda_enqueue_xfer(const mpiacc_xfer_desc_t *d, void *packed, int dir, cudaStream_t st);

#endif
