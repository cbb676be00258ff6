/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opencl/ocl_valid.c: is a cl_mem the application passed an OpenCL memory
 * object that is alive?  Asked before any cl* call on it, always (no
 * switch): a host pointer passed with an OpenCL datatype, a released
 * cl_mem or any other address becomes MPI_ERR_BUFFER, never a crash.
 *
 * Why mpiacc must look before it calls OpenCL.  An OpenCL runtime can only
 * say CL_INVALID_MEM_OBJECT if the call reaches it, and with an ICD loader
 * (ocl-icd, Khronos) it does not: the loader requires every cl object to
 * begin with a pointer to its vendor's dispatch table and jumps through that
 * pointer.  For a host buffer of floats, or a released object whose first
 * word the allocator has overwritten, it jumps to whatever that word holds,
 * so clGetMemObjectInfo crashes inside the loader before the runtime is
 * asked.
 *
 * The check reads no memory through the handle itself: it copies the
 * handle's first word with process_vm_readv on its own process (or, where
 * that system call is not allowed, by writing it into a pipe), which fails
 * with EFAULT on an unreadable address instead of faulting, and which
 * sanitizers and valgrind do not count as a read of freed memory.  Then:
 *  - the word is the dispatch table of a platform found at start-up or of
 *    an object the runtime vouched for earlier: plausible;
 *  - otherwise the word is read as a dispatch table (the same careful copy)
 *    and its clGetMemObjectInfo entry (slot 20 of the ICD table, fixed by
 *    the ICD ABI since OpenCL 1.0) must be that of a platform's or a
 *    device's table: plausible (a vendor that used several tables would
 *    still put its own functions in them);
 *  - otherwise the word must be the first word of the call's own queue or
 *    event (objects the runtime accepted from the application);
 *  - anything else, unreadable addresses included, is refused.
 * A plausible handle is then asked to the runtime (its context, its
 * reference count, whether that context is alive), as before.
 *
 * Cost.  That careful copy is a system call (about 0.3-1.5 us), so a handle
 * the runtime has vouched for is remembered in a set of live handles, and a
 * destructor callback (clSetMemObjectDestructorCallback, which OpenCL runs
 * before the object is freed) takes it out again when the application
 * releases it: a remembered handle is alive by construction, and the next
 * calls on it pay one lock and a hash probe (docs/performance.md,
 * bench/ocl_validate).  At most LIVE_MAX handles are remembered at once;
 * beyond, handles are checked afresh at every call.
 *
 * Handles the runtime once called released are not asked to it again
 * (issue 36: NVIDIA's OpenCL answers for a freed object, and work enqueued
 * on one made no progress): they are remembered with the bytes at their
 * address and refused without a cl* call while those bytes stay as they
 * were (see "handles known released" below).  A handle mpiacc vouched for
 * and whose destructor callback then ran is only forgotten: NVIDIA's OpenCL
 * hands its address out again at once for a new buffer, with the same bytes
 * (seen on an H200, 2026-11-29: remembering those refused live buffers), so
 * the next check of that address asks the runtime, whose reference count
 * and context give a released object away.
 *
 * Limits, by nature: a cl_mem released before mpiacc ever saw it, whose
 * block still begins with its vendor's dispatch pointer (an allocator that
 * keeps the first word of freed blocks; valgrind), passes the first step and
 * is then asked to the runtime, which may answer from freed memory; so is a
 * released one whose bytes changed since (the address may hold a new
 * object); a handle freed and handed out again for a new object names that
 * new object (the runtime cannot tell either).  test_ocl_p2p_errors probes
 * for the first and reports it skipped.  A handle mpiacc vouched for and
 * then forgot (its destructor ran) is asked to the runtime too: NVIDIA's
 * OpenCL reads the freed object to answer and may crash there (seen with
 * other processes busy on the GPU); test_ocl_sync does not ask it there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ocl.h"

int mpiacc_ocl_mem_check = 1; /* ocl_testhooks.h: mpiacc_ocl_set_mem_check (benchmarks) */

/* ---- reading a word without faulting ------------------------------------ */

static atomic_int vm_readv_broken; /* process_vm_readv refused (seccomp...): use the pipe */
static pthread_mutex_t pipe_lock = PTHREAD_MUTEX_INITIALIZER;
static int pipe_fd[2] = {-1, -1};

static int read_word_pipe(const void *p, uintptr_t *w)
{
    int ok = 0;
    pthread_mutex_lock(&pipe_lock);
    if (pipe_fd[0] < 0 && pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK) != 0) pipe_fd[0] = pipe_fd[1] = -1;
    if (pipe_fd[0] >= 0 && write(pipe_fd[1], p, sizeof *w) == (ssize_t)sizeof *w)
        ok = read(pipe_fd[0], w, sizeof *w) == (ssize_t)sizeof *w;
    pthread_mutex_unlock(&pipe_lock);
    return ok;
}

/* Copies up to n bytes at p into out (n <= PIPE_BUF); returns how many
 * could be read (0: none; fewer where p + n crosses into an unreadable
 * page). */
static size_t read_bytes(const void *p, void *out, size_t n)
{
    int saved = errno;
    size_t got = 0;
    if (!p) return 0;
    if (!atomic_load_explicit(&vm_readv_broken, memory_order_relaxed)) {
        struct iovec local = {out, n}, remote = {(void *)p, n};
        ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (r > 0) got = (size_t)r;
        else if (r < 0 && (errno == ENOSYS || errno == EPERM)) atomic_store(&vm_readv_broken, 1);
    }
    if (!got && atomic_load_explicit(&vm_readv_broken, memory_order_relaxed)) {
        pthread_mutex_lock(&pipe_lock);
        if (pipe_fd[0] < 0 && pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK) != 0) pipe_fd[0] = pipe_fd[1] = -1;
        if (pipe_fd[0] >= 0) {
            ssize_t w = write(pipe_fd[1], p, n);
            if (w > 0 && read(pipe_fd[0], out, (size_t)w) == w) got = (size_t)w;
        }
        pthread_mutex_unlock(&pipe_lock);
    }
    errno = saved;
    return got;
}

/* Copies the word at p into *w; 0 when p is not readable. */
static int read_word(const void *p, uintptr_t *w)
{
    int saved = errno, ok = 0;
    *w = 0;
    if (!p) return 0;
    if (!atomic_load_explicit(&vm_readv_broken, memory_order_relaxed)) {
        struct iovec local = {w, sizeof *w}, remote = {(void *)p, sizeof *w};
        ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (n == (ssize_t)sizeof *w) ok = 1;
        else if (n < 0 && (errno == ENOSYS || errno == EPERM)) atomic_store(&vm_readv_broken, 1);
    }
    if (!ok && atomic_load_explicit(&vm_readv_broken, memory_order_relaxed)) ok = read_word_pipe(p, w);
    errno = saved;
    return ok;
}

/* ---- what OpenCL objects look like ------------------------------------- */

#define ICD_SLOT_GET_MEM_OBJECT_INFO 20 /* index of clGetMemObjectInfo in the ICD dispatch table */
#define WORDS 16

static _Atomic(uintptr_t) known_word[WORDS]; /* dispatch tables seen on live objects */
static uintptr_t vendor_fn[WORDS];            /* their clGetMemObjectInfo entries (platforms) */
static int nvendor;

static int word_known(uintptr_t w)
{
    for (int i = 0; i < WORDS; i++) {
        uintptr_t k = atomic_load_explicit(&known_word[i], memory_order_acquire);
        if (!k) break;
        if (k == w) return 1;
    }
    return 0;
}

static void word_remember(uintptr_t w)
{
    for (int i = 0; i < WORDS; i++) {
        uintptr_t cur = atomic_load_explicit(&known_word[i], memory_order_acquire), zero = 0;
        if (cur == w) return;
        if (cur == 0 && atomic_compare_exchange_strong(&known_word[i], &zero, w)) return;
        if (atomic_load(&known_word[i]) == w) return; /* another thread stored it */
    }
}

/* 1: obj begins with an OpenCL dispatch table of a platform's vendor (or
 * the same word as the call's queue or event: objects the application
 * uses with it); 0: readable, but not; -1: not readable.  *word: its first
 * word (read already when have_word). */
static int plausible(const void *obj, const mpiacc_attrs_t *a, uintptr_t *word, int have_word)
{
    uintptr_t fn, other;
    if (!have_word && !read_word(obj, word)) return -1;
    if (word_known(*word)) return 1;
    if (!*word) return 0;
    if (read_word((const uintptr_t *)*word + ICD_SLOT_GET_MEM_OBJECT_INFO, &fn) && fn)
        for (int i = 0; i < nvendor; i++)
            if (vendor_fn[i] == fn) return 1;
    if (a && a->has_queue && a->queue && a->queue != MPIACC_QUEUE_NONE && read_word(a->queue, &other) &&
        other == *word)
        return 1;
    if (a && a->has_event && a->event && read_word(a->event, &other) && other == *word) return 1;
    return 0;
}

static void learn(const void *obj)
{
    uintptr_t w, fn;
    if (!obj || !read_word(obj, &w) || !w) return;
    word_remember(w);
    if (!read_word((const uintptr_t *)w + ICD_SLOT_GET_MEM_OBJECT_INFO, &fn) || !fn) return;
    for (int i = 0; i < nvendor; i++)
        if (vendor_fn[i] == fn) return;
    if (nvendor < WORDS) vendor_fn[nvendor++] = fn; /* at start-up, one thread */
}

void mpiacc_ocl_valid_learn_platform(cl_platform_id p)
{
    cl_device_id d = NULL;
    learn(p);
    /* its first device too (a vendor might give devices a table of their own) */
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) == CL_SUCCESS) learn(d);
}

/* ---- handles the runtime vouched for, until released ------------------- */

#define LIVE_SLOTS 4096
#define LIVE_MAX (LIVE_SLOTS / 2)
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER; /* never held across a cl* call */
static cl_mem live[LIVE_SLOTS];
static int nlive;

static unsigned live_slot(cl_mem m)
{
    uint64_t x = (uint64_t)(uintptr_t)m;
    x ^= x >> 29;
    x *= 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 40) & (LIVE_SLOTS - 1);
}

static int live_has(cl_mem m)
{
    int found = 0;
    pthread_mutex_lock(&live_lock);
    for (unsigned i = live_slot(m); live[i]; i = (i + 1) & (LIVE_SLOTS - 1))
        if (live[i] == m) {
            found = 1;
            break;
        }
    pthread_mutex_unlock(&live_lock);
    return found;
}

/* 1 when m was added now (the caller registers the destructor callback),
 * 0 when already there or the set is full. */
static int live_add(cl_mem m)
{
    int added = 0;
    unsigned i;
    pthread_mutex_lock(&live_lock);
    for (i = live_slot(m); live[i] && live[i] != m; i = (i + 1) & (LIVE_SLOTS - 1)) continue;
    if (!live[i] && nlive < LIVE_MAX) {
        live[i] = m;
        nlive++;
        added = 1;
    }
    pthread_mutex_unlock(&live_lock);
    return added;
}

/* 1 when m was there. */
static int live_remove(cl_mem m)
{
    unsigned i, j, home;
    int was;
    pthread_mutex_lock(&live_lock);
    for (i = live_slot(m); live[i] && live[i] != m; i = (i + 1) & (LIVE_SLOTS - 1)) continue;
    was = live[i] != NULL;
    if (live[i]) {
        /* backward-shift deletion: no tombstones */
        live[i] = NULL;
        nlive--;
        for (j = (i + 1) & (LIVE_SLOTS - 1); live[j]; j = (j + 1) & (LIVE_SLOTS - 1)) {
            home = live_slot(live[j]);
            /* live[j] may move to the hole i unless its home lies in (i, j] */
            if (((j - home) & (LIVE_SLOTS - 1)) >= ((j - i) & (LIVE_SLOTS - 1))) {
                live[i] = live[j];
                live[j] = NULL;
                i = j;
            }
        }
    }
    pthread_mutex_unlock(&live_lock);
    return was;
}

/* ---- handles known released, while their memory stays as it was ---------
 *
 * A released cl_mem must be recognised without asking the runtime about
 * it: some runtimes keep answering for a freed object (NVIDIA's OpenCL
 * answered with a context of its own, or a size of 0), and work enqueued
 * on one may never complete.  When the runtime itself said a handle was
 * released (or a test says so: mpiacc_ocl_valid_note_released), it is
 * remembered here
 * with a copy of the first DEAD_SNAP bytes at its address.  A later check
 * of the handle finds the same bytes there: taken as the released object,
 * refused, no cl* call.  A runtime that creates a new object at that
 * address with the same first bytes (NVIDIA's OpenCL does after a
 * destructor callback, see the top of this file) would see that new
 * object refused too, until its bytes change: a false MPI_ERR_BUFFER,
 * never a write through a dead handle; only a handle the application
 * passed after the runtime had released it is remembered.  Different bytes: the address may hold a new object (or the allocator
 * reused it); the entry goes and the handle is checked afresh.  Bounded:
 * the oldest entry makes room. */

#define DEAD_SLOTS 256
#define DEAD_SNAP 256
/* under live_lock; the handles apart, so that a lookup scans 2 KiB */
static cl_mem dead_m[DEAD_SLOTS];
static size_t dead_n[DEAD_SLOTS];
static unsigned char dead_snap[DEAD_SLOTS][DEAD_SNAP];
static unsigned dead_next;

static int dead_find_locked(cl_mem m)
{
    for (int i = 0; i < DEAD_SLOTS; i++)
        if (dead_m[i] == m) return i;
    return -1;
}

static void dead_add(cl_mem m)
{
    unsigned char snap[DEAD_SNAP];
    size_t n = read_bytes(m, snap, sizeof snap);
    int i;
    if (!n) return; /* unreadable: refused by the word check already */
    pthread_mutex_lock(&live_lock);
    if ((i = dead_find_locked(m)) < 0) i = (int)(dead_next++ % DEAD_SLOTS);
    dead_m[i] = m;
    dead_n[i] = n;
    memcpy(dead_snap[i], snap, n);
    pthread_mutex_unlock(&live_lock);
}

/* 1: m is a released handle whose bytes are unchanged; 0: not known dead
 * (an entry whose bytes changed is dropped).  *have: the bytes were read
 * (*word: the first word, for plausible). */
static int dead_unchanged(cl_mem m, uintptr_t *word, int *have)
{
    unsigned char now[DEAD_SNAP];
    int i, same = 0;
    size_t n;
    *have = 0;
    pthread_mutex_lock(&live_lock);
    i = dead_find_locked(m);
    pthread_mutex_unlock(&live_lock);
    if (i < 0) return 0;
    n = read_bytes(m, now, sizeof now); /* (not under the lock: a system call) */
    if (n >= sizeof *word) {
        memcpy(word, now, sizeof *word);
        *have = 1;
    }
    pthread_mutex_lock(&live_lock);
    if (dead_m[i] == m) {
        same = n == dead_n[i] && !memcmp(now, dead_snap[i], n);
        if (!same) dead_m[i] = NULL;
    }
    pthread_mutex_unlock(&live_lock);
    return same;
}

void mpiacc_ocl_valid_note_released(cl_mem m) { dead_add(m); }

static void dead_forget(cl_mem m)
{
    int i;
    pthread_mutex_lock(&live_lock);
    while ((i = dead_find_locked(m)) >= 0) dead_m[i] = NULL;
    pthread_mutex_unlock(&live_lock);
}

/* Run by the OpenCL runtime before it frees the object (any thread).  The
 * address is not remembered as released: runtimes hand it out again at once
 * (NVIDIA's OpenCL, its bytes the same), and a new buffer there must be
 * accepted; the next check of that address asks the runtime, as for any
 * handle not seen before. */
static void CL_CALLBACK live_forget(cl_mem m, void *unused)
{
    (void)unused;
    (void)live_remove(m); /* (after finalize: nothing to do) */
}

void mpiacc_ocl_valid_finalize(void)
{
    /* Callbacks still registered on the application's objects find nothing. */
    pthread_mutex_lock(&live_lock);
    memset(live, 0, sizeof live);
    nlive = 0;
    memset(dead_m, 0, sizeof dead_m);
    pthread_mutex_unlock(&live_lock);
}

int mpiacc_ocl_valid_is_live(const void *p) { return p && live_has((cl_mem)(uintptr_t)p); }

int mpiacc_ocl_valid_live_count(void)
{
    int n;
    pthread_mutex_lock(&live_lock);
    n = nlive;
    pthread_mutex_unlock(&live_lock);
    return n;
}

/* ---- the check ---------------------------------------------------------- */

int mpiacc_ocl_mem_context(cl_mem m, const mpiacc_attrs_t *a, cl_context *ctx, size_t *size)
{
    int mpi_errno = MPI_SUCCESS, fresh = 0, p, have = 0;
    uintptr_t w = 0, cw = 0;
    cl_uint refs = 0;
    cl_int e;
    if (!m) MPIACC_FAIL(MPIACC_ERRK_BUFFER, "OpenCL buffer is a NULL cl_mem");
    if (mpiacc_ocl_mem_check && !live_has(m)) {
        fresh = 1;
        if (dead_unchanged(m, &w, &have)) /* the runtime is not asked about it */
            MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object: it was released (its "
                        "memory is as the release left it)", (void *)m);
        p = plausible(m, a, &w, have);
        if (p < 0)
            MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object: nothing is readable at "
                        "that address (is it a host or device pointer passed with an OpenCL datatype?)",
                        (void *)m);
        if (p == 0)
            MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object (a host pointer passed "
                        "with an OpenCL datatype, or a released cl_mem?): it does not begin with the dispatch "
                        "table of an OpenCL platform", (void *)m);
    }
    e = clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof *ctx, ctx, NULL);
    if (e == CL_INVALID_MEM_OBJECT) {
        dead_add(m); /* asked once: the next calls need not */
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object (released?): "
                                        "clGetMemObjectInfo: CL_INVALID_MEM_OBJECT", (void *)m);
    }
    MPIACC_OCL_CALL("clGetMemObjectInfo(CL_MEM_CONTEXT)", e);
    /* A runtime that keeps a released object's record for a while may
     * still answer: a reference count of 0, or a context that is no longer
     * valid, gives it away. */
    e = clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    if (e == CL_INVALID_MEM_OBJECT || (e == CL_SUCCESS && refs == 0)) {
        dead_add(m);
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object (released?): %s",
                    (void *)m, e == CL_SUCCESS ? "its reference count is 0" : "CL_INVALID_MEM_OBJECT");
    }
    /* (a fresh handle's context is asked only when it begins with the same
     * dispatch word as the cl_mem the runtime just answered for: a live
     * context of the same vendor does) */
    if (!*ctx || (fresh && read_word(*ctx, &cw) && cw == w &&
                  (clGetContextInfo(*ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL) != CL_SUCCESS ||
                   refs == 0))) {
        dead_add(m);
        MPIACC_FAIL(MPIACC_ERRK_BUFFER, "cl_mem %p is not a valid OpenCL memory object (released?): its "
                                        "context %p is not a live OpenCL context", (void *)m, (void *)*ctx);
    }
    if (fresh) {
        /* the runtime vouched for it: remember it until it is released */
        word_remember(w);
        dead_forget(m); /* (a new object at an address once released) */
        if (live_add(m)) {
            if (clSetMemObjectDestructorCallback(m, live_forget, NULL) != CL_SUCCESS) live_remove(m);
            else mpiacc_core_handle_note(m); /* host-typed calls passing it now fail (memkind.c) */
        }
    }
    if (size) MPIACC_OCL_CALL("clGetMemObjectInfo(CL_MEM_SIZE)",
                              clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof *size, size, NULL));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
