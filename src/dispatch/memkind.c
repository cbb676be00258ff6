/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/memkind.c: classification of untagged buffers (memkind.h) and
 * the MPI 4.1 memory allocation kinds info keys.
 *
 * The cache (mpiacc_dispatch_host_pages) holds only HOST answers, per 4 KiB
 * granule of the address the application passed; device and managed
 * answers are never cached: such a call costs microseconds on the device
 * path anyway, so one query (~0.1-0.3 us) per call is small there, and an
 * address freed with cudaFree and handed out again (to another device, as
 * managed memory, or back to the host heap) is classified afresh.
 *
 * The rule the host cache relies on: a granule seen as host memory (pageable,
 * or page-locked by cudaMallocHost/cudaHostRegister, which are host memory
 * for MPI too) stays host memory.  Host pages never become device pages
 * while they are mapped; the one way to break the rule is to unmap host
 * memory (free() of a large block, munmap, cudaFreeHost) and then have CUDA
 * map device or managed memory at the same addresses and pass that to MPI.
 * mpiacc cannot see unmaps (glibc's free calls munmap internally), so a
 * program that does that must not use MPIACC_UVA=1 with these addresses:
 * it may tag the datatype (tags always win) or assert "cuda:device" on the
 * communicator (no query, no cache).  MPI_Finalize forgets everything.
 *
 * Managed memory takes the device path: the pack kernels read it on the
 * GPU, where it usually lives, instead of the CPU faulting every page over,
 * and its use is ordered after the application's default-stream work like
 * any untagged CUDA buffer.  So does pinned host memory, which the kernels
 * read through its device mapping (MPICH's shared-memory copy failed on
 * pinned pages, see classify below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "memkind.h"
#include "dispatch.h"
#include "core/env.h"

int mpiacc_dispatch_uva;
atomic_int mpiacc_dispatch_any_assert;
mpiacc_util_pcache_t mpiacc_dispatch_host_pages;

/* Kinds a communicator asserted (bits), with the value as given. */
enum {
    K_SYSTEM = 1 << 0,
    K_MPI = 1 << 1,
    K_CUDA_HOST = 1 << 2,
    K_CUDA_DEVICE = 1 << 3,
    K_CUDA_MANAGED = 1 << 4,
    K_OTHER = 1 << 5, /* a kind mpiacc does not handle (rocm, level_zero, a bad restrictor) */
};
#define K_DEV (K_CUDA_DEVICE | K_CUDA_MANAGED)

typedef struct assertion {
    int bits;
    char value[256];
} assertion_t;

static int assert_keyval = MPI_KEYVAL_INVALID;

/* ---- parsing ----------------------------------------------------------- */

/* One kind, "name[:restrictor...]", into bits (K_OTHER when not ours). */
static int parse_kind(char *k)
{
    char *save = NULL, *name = strtok_r(k, ":", &save), *r;
    int bits = 0, any = 0;
    if (!name) return 0;
    if (!strcasecmp(name, "system")) bits = K_SYSTEM;
    else if (!strcasecmp(name, "mpi")) bits = K_MPI; /* alloc_mem, win_allocate...: all host memory */
    else if (strcasecmp(name, "cuda")) return K_OTHER;
    if (bits) return (r = strtok_r(NULL, ":", &save)) && bits == K_SYSTEM ? K_OTHER : bits;
    while ((r = strtok_r(NULL, ":", &save))) {
        any = 1;
        if (!strcasecmp(r, "host")) bits |= K_CUDA_HOST;
        else if (!strcasecmp(r, "device")) bits |= K_CUDA_DEVICE;
        else if (!strcasecmp(r, "managed")) bits |= K_CUDA_MANAGED;
        else return K_OTHER;
    }
    return any ? bits : K_CUDA_HOST | K_CUDA_DEVICE | K_CUDA_MANAGED; /* "cuda": every CUDA kind */
}

static int parse_kinds(const char *value)
{
    char buf[256], *save = NULL, *k;
    int bits = 0;
    snprintf(buf, sizeof buf, "%s", value);
    for (k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        while (*k == ' ') k++;
        for (char *e = k + strlen(k); e > k && e[-1] == ' ';) *--e = 0;
        if (*k) bits |= parse_kind(k);
    }
    return bits;
}

/* ---- the communicator's assertion -------------------------------------- */

static int assert_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    assertion_t *c = malloc(sizeof *c);
    (void)old, (void)keyval, (void)extra;
    *flag = 0;
    if (!c) return MPI_ERR_NO_MEM;
    *c = *(assertion_t *)in;
    *(assertion_t **)out = c;
    *flag = 1;
    return MPI_SUCCESS;
}

static int assert_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

/* The assertion on comm, or 0 (none, or not looked up). */
static int asserted(MPI_Comm comm)
{
    assertion_t *v = NULL;
    int flag = 0;
    if (assert_keyval == MPI_KEYVAL_INVALID ||
        !atomic_load_explicit(&mpiacc_dispatch_any_assert, memory_order_relaxed) || comm == MPI_COMM_NULL)
        return 0;
    if (PMPI_Comm_get_attr(comm, assert_keyval, &v, &flag) != MPI_SUCCESS || !flag || !v) return 0;
    return v->bits;
}

int mpiacc_dispatch_memkind_assert(MPI_Comm comm, MPI_Info info, int replace)
{
    int mpi_errno = MPI_SUCCESS, flag = 0, len = (int)sizeof(((assertion_t *)0)->value) - 1;
    assertion_t *a = NULL;
    char value[256];

    if (assert_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) goto fn_exit;
    if (info != MPI_INFO_NULL) MPIACC_CHECK(PMPI_Info_get(info, MPIACC_DISPATCH_INFO_ASSERT, len, value, &flag));
    if (!flag) {
        void *old = NULL;
        int had = 0;
        if (replace && PMPI_Comm_get_attr(comm, assert_keyval, &old, &had) == MPI_SUCCESS && had)
            MPIACC_CHECK(PMPI_Comm_delete_attr(comm, assert_keyval));
        goto fn_exit;
    }
    if (!(a = calloc(1, sizeof *a))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an info assertion");
    snprintf(a->value, sizeof a->value, "%s", value);
    a->bits = parse_kinds(value);
    if (a->bits & K_OTHER)
        MPIACC_LOG_ONCE(MPIACC_LOG_WARN, "memkind-other",
                        "%s=\"%s\" names kinds mpiacc does not handle: untagged buffers on that communicator "
                        "are classified by pointer query (host memory without a CUDA device)",
                        MPIACC_DISPATCH_INFO_ASSERT, value);
    if (a->bits & (K_DEV | K_OTHER)) {
        /* The device kinds need the backend (and mixed kinds its query). */
        (void)mpiacc_backend_get(MPIACC_KIND_CUDA);
        atomic_fetch_or(&mpiacc_core_classify, MPIACC_CORE_CLASSIFY_QUERY);
    }
    MPIACC_CHECK(PMPI_Comm_set_attr(comm, assert_keyval, a));
    a = NULL;
    atomic_store(&mpiacc_dispatch_any_assert, 1);
fn_exit:
    free(a);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- classification ------------------------------------------------------ */

/* *kind: MPIACC_KIND_CUDA (with *device, -1: the current one) or
 * MPIACC_KIND_NONE (host memory: MPI handles it). */
static int classify(const void *buf, MPI_Comm comm, int *kind, int *device)
{
    int mpi_errno = MPI_SUCCESS, bits = asserted(comm), mem = MPIACC_CORE_MEM_HOST, query;
    const mpiacc_backend_t *be;

    *kind = MPIACC_KIND_NONE;
    *device = -1;
    if (bits) {
        if ((bits & K_DEV) && !(bits & ~K_DEV)) { /* device kinds only: no query */
            *kind = MPIACC_KIND_CUDA;
            goto fn_exit;
        }
        query = (bits & (K_DEV | K_OTHER)) != 0; /* host kinds only: no query */
    } else {
        query = mpiacc_dispatch_uva;
    }
    if (!query || !buf || mpiacc_util_pcache_has(&mpiacc_dispatch_host_pages, buf)) goto fn_exit;
    be = mpiacc_backend_peek(MPIACC_KIND_CUDA);
    if (be && be->classify) MPIACC_CHECK(be->classify(buf, &mem, device));
    if (mem != MPIACC_CORE_MEM_HOST) {
        /* Pinned host memory takes the CUDA path too: the kernels read it
         * through its device mapping, and MPICH's shared-memory copy
         * (process_vm_readv) was seen failing with EFAULT on pinned pages
         * (an H200 virtual machine, 1 MiB messages). */
        static const char *const what[] = {"host", "pinned host", "device", "managed"};
        *kind = MPIACC_KIND_CUDA;
        MPIACC_LOG_ONCE(MPIACC_LOG_INFO,
                        mem == MPIACC_CORE_MEM_DEVICE    ? "uva-device"
                        : mem == MPIACC_CORE_MEM_MANAGED ? "uva-managed"
                                                         : "uva-pinned",
                        "untagged buffer %p is CUDA %s memory (device %d): CUDA path, default-stream ordering",
                        buf, what[mem], *device);
    } else {
        mpiacc_util_pcache_put(&mpiacc_dispatch_host_pages, buf);
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- device handles passed as host memory ------------------------------- */

/* The backend whose live handle buf is (a cl_mem mpiacc has seen), or -1. */
static int handle_kind(const void *buf)
{
    if (!buf || !(atomic_load_explicit(&mpiacc_core_classify, memory_order_relaxed) & MPIACC_CORE_CLASSIFY_HANDLES) ||
        !mpiacc_core_handle_maybe(buf))
        return -1;
    for (int k = MPIACC_KIND_CUDA; k < MPIACC_KIND_MAX; k++) {
        const mpiacc_backend_t *be = mpiacc_backend_peek(k);
        if (be && be->is_live_handle && be->is_live_handle(buf)) return k;
    }
    return -1;
}

/* MPI_ERR_BUFFER when buf, passed with a host datatype (kind: NONE or
 * HOST), is a live device handle: MPI would read or write the handle's
 * own memory. */
static int refuse_handle(const void *buf, int kind)
{
    int k = handle_kind(buf);
    if (k < 0) return MPI_SUCCESS;
    return mpiacc_err(MPIACC_ERRK_BUFFER,
                      "the buffer %p is a live %s memory object (%s), but the datatype is %s: tag the datatype "
                      "with MPIACC_BUF_TYPE = %s (and its %s) to pass that object, or pass host memory; mpiacc "
                      "does not let MPI read or write through the handle",
                      buf, mpiacc_kind_name(k), k == MPIACC_KIND_OPENCL ? "cl_mem" : "handle",
                      kind == MPIACC_KIND_HOST ? "tagged MPIACC_BUF_HOST" : "a host datatype (untagged)",
                      k == MPIACC_KIND_OPENCL ? "MPIACC_BUF_OPENCL" : "MPIACC_BUF_CUDA",
                      k == MPIACC_KIND_OPENCL ? "MPIACC_CL_QUEUE" : "MPIACC_STREAM");
}

int mpiacc_dispatch_classify_host(const void *buf, MPI_Comm comm)
{
    int kind, device;
    if (handle_kind(buf) >= 0) return 0;
    if (!(atomic_load_explicit(&mpiacc_core_classify, memory_order_relaxed) & MPIACC_CORE_CLASSIFY_QUERY)) return 1;
    /* A failed query is not "host": the dispatcher asks again and fails. */
    return classify(buf, comm, &kind, &device) == MPI_SUCCESS && kind == MPIACC_KIND_NONE;
}

int mpiacc_dispatch_attrs(MPI_Datatype dt, const void *buf, MPI_Comm comm, mpiacc_attrs_t *a)
{
    mpiacc_pack_type_t *t;
    return mpiacc_dispatch_attrs_type(dt, buf, comm, a, &t);
}

int mpiacc_dispatch_attrs_type(MPI_Datatype dt, const void *buf, MPI_Comm comm, mpiacc_attrs_t *a,
                               mpiacc_pack_type_t **t)
{
    int mpi_errno = MPI_SUCCESS, kind, device;
    MPIACC_CHECK(mpiacc_dispatch_facts(dt, a, t)); /* facts.c: read once per datatype */
    if (a->kind == MPIACC_KIND_NONE || a->kind == MPIACC_KIND_HOST) MPIACC_CHECK(refuse_handle(buf, a->kind));
    if (a->kind != MPIACC_KIND_NONE ||
        !(atomic_load_explicit(&mpiacc_core_classify, memory_order_relaxed) & MPIACC_CORE_CLASSIFY_QUERY) ||
        !mpiacc_attrs_lookup_ok(dt))
        goto fn_exit;
    MPIACC_CHECK(classify(buf, comm, &kind, &device));
    if (kind != MPIACC_KIND_NONE) {
        a->kind = kind;
        if (device >= 0) {
            a->device = device;
            a->has_device = 1;
        }
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- the supported kinds ---------------------------------------------------- */

static int has_kind(const char *list, const char *kind)
{
    size_t n = strlen(kind);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !strncasecmp(p, kind, n)) return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

void mpiacc_dispatch_memkind_supported(const char *mpich, char *out, size_t len)
{
    static const char *const ours[] = {"mpi", "system", "cuda:device", "cuda:host", "cuda:managed"};
    size_t off = (size_t)snprintf(out, len, "%s", mpich ? mpich : "");
    /* The CUDA kinds need a CUDA device (the backend starts here if not yet). */
    int ncuda = mpiacc_backend_get(MPIACC_KIND_CUDA) ? 3 : 0;
    for (int i = 0; i < 2 + ncuda && off < len; i++)
        if (!has_kind(out, ours[i])) off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "," : "", ours[i]);
}

int mpiacc_dispatch_memkind_info(MPI_Comm comm, MPI_Info info)
{
    int mpi_errno = MPI_SUCCESS, flag = 0;
    char mpich[256] = "", kinds[512];
    assertion_t *v = NULL;

    MPIACC_CHECK(PMPI_Info_get(info, MPIACC_DISPATCH_INFO_KINDS, (int)sizeof mpich - 1, mpich, &flag));
    mpiacc_dispatch_memkind_supported(flag ? mpich : NULL, kinds, sizeof kinds);
    MPIACC_CHECK(PMPI_Info_set(info, MPIACC_DISPATCH_INFO_KINDS, kinds));
    flag = 0;
    if (assert_keyval != MPI_KEYVAL_INVALID)
        MPIACC_CHECK(PMPI_Comm_get_attr(comm, assert_keyval, &v, &flag));
    if (flag && v) MPIACC_CHECK(PMPI_Info_set(info, MPIACC_DISPATCH_INFO_ASSERT, v->value));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- start / stop ------------------------------------------------------------ */

int mpiacc_dispatch_memkind_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    mpiacc_util_pcache_clear(&mpiacc_dispatch_host_pages);
    atomic_store(&mpiacc_dispatch_any_assert, 0);
    MPIACC_CHECK(PMPI_Comm_create_keyval(assert_copy, assert_delete, &assert_keyval, NULL));
    mpiacc_dispatch_uva = mpiacc_env_bool("MPIACC_UVA");
    atomic_store(&mpiacc_core_classify, mpiacc_dispatch_uva ? MPIACC_CORE_CLASSIFY_QUERY : 0);
    if (mpiacc_dispatch_uva) {
        /* The query needs the backend started: now, not at the first call. */
        const mpiacc_backend_t *be = mpiacc_backend_get(MPIACC_KIND_CUDA);
        MPIACC_LOG(MPIACC_LOG_INFO, "MPIACC_UVA=1: untagged buffers are classified by pointer query (%s)",
                   be ? "CUDA backend started" : "no CUDA device: every untagged buffer is host memory");
    }
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_dispatch_memkind_finalize(void)
{
    atomic_fetch_and(&mpiacc_core_classify, ~MPIACC_CORE_CLASSIFY_QUERY);
    mpiacc_dispatch_uva = 0;
    atomic_store(&mpiacc_dispatch_any_assert, 0);
    if (assert_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&assert_keyval);
    mpiacc_util_pcache_clear(&mpiacc_dispatch_host_pages);
}
