/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/pack_roof: the limits bench/pack compares its figures with, all
 * measured in the same run: latency floors (an empty kernel and each way
 * of waiting for it), pinned and device copy bandwidths, and the roofline.
 *
 * A pack kernel must read every 32-byte sector its blocks touch on the
 * strided side and write every sector of the packed side (a block narrower
 * than a sector still moves the whole sector).  Those bytes over the
 * device's copy bandwidth (cudaMemcpy device to device, bytes read +
 * written per second) give the shortest time the pack can take; below the
 * kernel-only time of an empty kernel the case is latency-bound.
 */
#ifndef BENCH_PACK_ROOF_H
#define BENCH_PACK_ROOF_H

#include <cuda_runtime_api.h>

#include "cuda/cuda_testhooks.h"

#include <stdio.h>

#define PACK_ROOF_SECTOR 32

/* Latency floors, median of 300 calls after 10 warm-up ones (us). */
enum { F_LAUNCH, F_SYNC, F_QUERY, F_EVENT, F_FLAG, F_N };
/* Measures and prints every floor ("  <what> <us> us" lines) into
 * floor_us[F_N]; csv (may be NULL) gets rows floor,<key>,0,0,us,<us>,0. */
void pack_roof_floors(double floor_us[F_N], FILE *csv);

/* Bytes per second of cudaMemcpyAsync device to pinned host, 256 MiB. */
double pack_roof_pinned_bw(cudaEvent_t e0, cudaEvent_t e1);

/* Bytes of the 32 B sectors one pack of (T, count 1) touches: the sectors
 * of the input blocks at buf (each counted once, however many blocks share
 * it) plus those of the packed bytes at packed.  The sectors follow from
 * the addresses, so buf and packed are the real device pointers (never
 * dereferenced).  -1 when T has no point-based representation. */
long long pack_roof_sector_bytes(const mpiacc_pack_type_t *T, const char *buf, const char *packed);

/* Bytes read + written per second by cudaMemcpyAsync device to device of
 * 256 MiB (best of 4 after one warm-up), current device. */
double pack_roof_copy_bw(cudaEvent_t e0, cudaEvent_t e1);

/* Kernel-only timing: n enqueues of the same work behind a gate kernel (a
 * mapped flag the host opens once all are queued, so they run back to back
 * with no host synchronisation in between), timing events e0 and e1
 * around them. */
typedef struct pack_roof_timer {
    volatile int *gate; /* mapped pinned */
    cudaEvent_t e0, e1;
    int n;
} pack_roof_timer_t;
typedef void (*pack_roof_enqueue_fn)(void *arg, cudaStream_t st);
/* GPU time (us) of one enq(arg, st), kernel-only as above: elapsed / n,
 * best of 3. */
double pack_roof_kernel_us(const pack_roof_timer_t *tm, cudaStream_t st, pack_roof_enqueue_fn enq, void *arg);

/* pack_roof_kernel_us of an empty kernel. */
double pack_roof_empty_kernel_us(const pack_roof_timer_t *tm, cudaStream_t st);

#endif
