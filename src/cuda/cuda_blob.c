/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_blob.c: the CUDA backend's device copies of datatype blobs (the
 * traverse.h representation the generic and IPC copy kernels read), one
 * per datatype analysis and device, kept in the analysis's CUDA slot and
 * freed with it (mpiacc_cuda_blob_free) or at finalize.  The list is
 * guarded by mpiacc_cuda_lock; uploads happen outside it (see cuda_pool.c
 * for the locking rules).
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

typedef struct blobcache {
    const mpiacc_pack_type_t *t;
    void *d[MPIACC_CUDA_MAXDEV];
    struct blobcache *prev, *next;
} blobcache_t;
static blobcache_t *blobs;

#define LOCK() pthread_mutex_lock(&mpiacc_cuda_lock)
#define UNLOCK() pthread_mutex_unlock(&mpiacc_cuda_lock)

/* Upload of a blob to dev (dev current, no lock held). */
static int blob_upload(int dev, const mpiacc_pack_type_t *t, void **out)
{
    int mpi_errno = MPI_SUCCESS;
    cudaStream_t st = mpiacc_cuda_devs[dev].service;
    MPIACC_CHECK(mpiacc_cuda_dev_alloc(dev, t->blob_bytes, out));
    MPIACC_CUDA_CHECK(cudaMemcpyAsync(*out, t->blob, t->blob_bytes, cudaMemcpyHostToDevice, st));
    MPIACC_CUDA_CHECK(cudaStreamSynchronize(st));
fn_exit:
    return mpi_errno;
fn_fail:
    mpiacc_cuda_dev_free(dev, *out); /* NULL when the allocation failed */
    *out = NULL;
    goto fn_exit;
}

/* The blob's device copy: looked up under the lock; on a miss uploaded
 * with the lock released (allocation and a synchronisation of the service
 * stream), then published, unless another thread published one meanwhile,
 * in which case ours is freed and theirs used. */
int mpiacc_cuda_blob_get(int dev, const mpiacc_pack_type_t *ct, const void **dblob)
{
    int mpi_errno = MPI_SUCCESS;
    const mpiacc_pack_type_t *t = ct;
    blobcache_t *c;
    void *d = NULL, *spare = NULL;
    if (!t->blob || !t->blob_bytes)
        MPIACC_FAIL(MPIACC_ERRK_TYPE, "datatype has no point-based representation for the CUDA kernels");
    LOCK();
    c = mpiacc_pack_slot_get(t, MPIACC_KIND_CUDA);
    d = c ? c->d[dev] : NULL;
    UNLOCK();
    if (d) {
        *dblob = d;
        goto fn_exit;
    }
    MPIACC_CHECK(blob_upload(dev, t, &d));
    LOCK();
    c = mpiacc_pack_slot_get(t, MPIACC_KIND_CUDA);
    if (!c && (c = calloc(1, sizeof *c)) != NULL) {
        /* Slot writes happen under LOCK, so installing cannot race. */
        if (!mpiacc_pack_slot_set(t, MPIACC_KIND_CUDA, NULL, c)) {
            free(c);
            c = NULL;
        } else {
            c->t = t;
            c->next = blobs;
            if (blobs) blobs->prev = c;
            blobs = c;
        }
    }
    spare = d; /* ours, unless published now */
    if (c && !c->d[dev]) c->d[dev] = d, spare = NULL;
    d = c ? c->d[dev] : NULL;
    UNLOCK();
    if (spare) mpiacc_cuda_dev_free(dev, spare); /* never used by a kernel */
    if (!d) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    *dblob = d;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void blob_unlink_locked(blobcache_t *c)
{
    if (c->prev) c->prev->next = c->next;
    else blobs = c->next;
    if (c->next) c->next->prev = c->prev;
    mpiacc_pack_slot_set(c->t, MPIACC_KIND_CUDA, c, NULL);
    free(c);
}

/* The type's last reference is gone (no blob_get can race): unlink the
 * cache entry under the lock, free the device copies outside it. */
void mpiacc_cuda_blob_free(void *data)
{
    blobcache_t *c = data;
    void *d[MPIACC_CUDA_MAXDEV];
    int old = -1, n = 0;
    LOCK();
    if (c) {
        for (int dev = 0; dev < MPIACC_CUDA_MAXDEV; dev++) n += (d[dev] = c->d[dev]) != NULL;
        blob_unlink_locked(c);
    }
    UNLOCK();
    if (!n) return;
    cudaGetDevice(&old);
    for (int dev = 0; dev < mpiacc_cuda_ndev && dev < MPIACC_CUDA_MAXDEV; dev++)
        if (d[dev] && cudaSetDevice(dev) == cudaSuccess) mpiacc_cuda_dev_free_ordered(dev, d[dev]);
    if (old >= 0) cudaSetDevice(old);
}

void mpiacc_cuda_blob_init(void) { blobs = NULL; }

/* Finalize, lock held, device dev current: its copies go. */
void mpiacc_cuda_blob_drop_dev(int dev)
{
    for (blobcache_t *c = blobs; c; c = c->next)
        if (c->d[dev]) mpiacc_cuda_dev_free(dev, c->d[dev]), c->d[dev] = NULL;
}

/* Finalize, lock held, after every device's copies went: the entries. */
void mpiacc_cuda_blob_drop_all(void)
{
    while (blobs) blob_unlink_locked(blobs);
}
