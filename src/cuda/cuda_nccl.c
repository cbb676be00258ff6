/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda_nccl.c: NCCL as the CUDA backend's collective engine
 * (src/core/backend_coll.h) — the loader, the communicators, the types and
 * operations NCCL takes, and NCCL's errors as MPI error classes.
 *
 * Loading: libnccl.so.2 from $NCCL_ROOT/lib when NCCL_ROOT is set (only
 * there: the variable is an explicit choice), else the library CMake found
 * at build time (MPIACC_NCCL_BUILD_LIB: the one scripts/setup.sh installed
 * beside MPICH comes first there, so that a CUDA toolkit's own lib/ copy
 * does not win over it), else the dynamic linker's search.  Once per process, at the first device collective (or
 * mpiacc-info); never linked.  A missing library or entry point, or a
 * version without the ones used here (2.7 and later have them), makes the
 * engine absent: the collectives layer then takes its other paths.
 *
 * Errors: every ncclResult_t becomes an MPI error code whose class is
 *     ncclUnhandledCudaError  MPI_ERR_OTHER  (a CUDA call inside NCCL failed)
 *     ncclSystemError         MPI_ERR_OTHER  (a system call, the network, memory)
 *     ncclInternalError       MPI_ERR_INTERN
 *     ncclInvalidArgument     MPI_ERR_ARG
 *     ncclInvalidUsage        MPI_ERR_ARG
 *     ncclRemoteError         MPI_ERR_OTHER  (another process failed)
 *     anything else           MPI_ERR_INTERN
 * and whose string names the NCCL call, NCCL's text for the result and
 * NCCL's last error message.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_nccl.h"

mpiacc_cuda_nccl_api_t mpiacc_cuda_nccl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static const char *why_not = "not loaded yet";
static char why_buf[PATH_MAX + 256], path[PATH_MAX];
static int version;

/* ---- errors ------------------------------------------------------------- */

static const struct {
    int r;
    mpiacc_errk_t kind;
    const char *name;
} results[] = {
    {ncclUnhandledCudaError, MPIACC_ERRK_CUDA, "ncclUnhandledCudaError"},
    {ncclSystemError, MPIACC_ERRK_BACKEND, "ncclSystemError"},
    {ncclInternalError, MPIACC_ERRK_INTERN, "ncclInternalError"},
    {ncclInvalidArgument, MPIACC_ERRK_ARG, "ncclInvalidArgument"},
    {ncclInvalidUsage, MPIACC_ERRK_ARG, "ncclInvalidUsage"},
    {ncclRemoteError, MPIACC_ERRK_BACKEND, "ncclRemoteError"},
};

static mpiacc_errk_t kind_of(int r, const char **name)
{
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
        if (results[i].r == r) {
            *name = results[i].name;
            return results[i].kind;
        }
    *name = "unexpected ncclResult_t";
    return MPIACC_ERRK_INTERN;
}

int mpiacc_cuda_nccl_err(int r, const char *call, ncclComm_t comm)
{
    const char *name, *text = NULL, *last = NULL;
    mpiacc_errk_t k;
    if (r == ncclSuccess) return MPI_SUCCESS;
    k = kind_of(r, &name);
    if (loaded && mpiacc_cuda_nccl.GetErrorString) text = mpiacc_cuda_nccl.GetErrorString((ncclResult_t)r);
    if (loaded && mpiacc_cuda_nccl.GetLastError) last = mpiacc_cuda_nccl.GetLastError(comm);
    return mpiacc_err(k, "NCCL: %s failed: %s (%d: %s)%s%s", call, name, r, text ? text : "no text",
                      last && *last ? "; NCCL's last error: " : "", last && *last ? last : "");
}

int mpiacc_cuda_nccl_class(int r)
{
    const char *name;
    static const int cls[MPIACC_ERRK_MAX] = {[MPIACC_ERRK_CUDA] = MPI_ERR_OTHER, [MPIACC_ERRK_BACKEND] = MPI_ERR_OTHER,
                                             [MPIACC_ERRK_INTERN] = MPI_ERR_INTERN, [MPIACC_ERRK_ARG] = MPI_ERR_ARG};
    if (r == ncclSuccess) return MPI_SUCCESS;
    return cls[kind_of(r, &name)];
}

/* ---- loading ------------------------------------------------------------ */

#define SYM(field_, name_, required_)                                                 \
    do {                                                                              \
        *(void **)&mpiacc_cuda_nccl.field_ = dlsym(lib, name_);                       \
        if (!mpiacc_cuda_nccl.field_ && (required_)) {                                 \
            snprintf(why_buf, sizeof why_buf, "%s has no %s (NCCL 2.7 or later needed)", path, name_); \
            goto fail;                                                                \
        }                                                                             \
    } while (0)

static void *try_open(const char *file)
{
    void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    const char *e;
    if (lib) return lib;
    e = dlerror();
    snprintf(why_buf, sizeof why_buf, "%s", e ? e : file);
    return NULL;
}

static void load(void)
{
    const char *root = getenv("NCCL_ROOT");
    void *lib = NULL;
    Dl_info info;
    if (root && *root) {
        char file[PATH_MAX];
        snprintf(file, sizeof file, "%s/lib/libnccl.so.2", root);
        lib = try_open(file);
        if (!lib) {
            char tmp[sizeof why_buf];
            memcpy(tmp, why_buf, sizeof tmp);
            snprintf(why_buf, sizeof why_buf, "NCCL_ROOT=%.1024s: %.2048s", root, tmp);
        }
    } else {
#ifdef MPIACC_NCCL_BUILD_LIB
        lib = try_open(MPIACC_NCCL_BUILD_LIB);
#endif
        if (!lib) lib = try_open("libnccl.so.2");
    }
    if (!lib) goto fail;
    snprintf(path, sizeof path, "libnccl.so.2");
    SYM(GetVersion, "ncclGetVersion", 1);
    if (dladdr(*(void **)&mpiacc_cuda_nccl.GetVersion, &info) && info.dli_fname)
        snprintf(path, sizeof path, "%s", info.dli_fname);
    SYM(GetErrorString, "ncclGetErrorString", 1);
    SYM(GetLastError, "ncclGetLastError", 0);
    SYM(GetUniqueId, "ncclGetUniqueId", 1);
    SYM(CommInitRank, "ncclCommInitRank", 1);
    SYM(CommDestroy, "ncclCommDestroy", 1);
    SYM(CommAbort, "ncclCommAbort", 1);
    SYM(CommGetAsyncError, "ncclCommGetAsyncError", 1);
    SYM(AllReduce, "ncclAllReduce", 1);
    SYM(Reduce, "ncclReduce", 1);
    SYM(Broadcast, "ncclBroadcast", 1);
    SYM(AllGather, "ncclAllGather", 1);
    SYM(ReduceScatter, "ncclReduceScatter", 1);
    SYM(Send, "ncclSend", 1);
    SYM(Recv, "ncclRecv", 1);
    SYM(GroupStart, "ncclGroupStart", 1);
    SYM(GroupEnd, "ncclGroupEnd", 1);
    if (mpiacc_cuda_nccl.GetVersion(&version) != ncclSuccess) {
        snprintf(why_buf, sizeof why_buf, "%s: ncclGetVersion failed", path);
        goto fail;
    }
    loaded = 1;
    why_not = NULL;
    MPIACC_LOG(MPIACC_LOG_INFO, "NCCL %d.%d.%d loaded from %s: device collectives can run on it", version / 10000,
               version / 100 % 100, version % 100, path);
    return;
fail:
    memset(&mpiacc_cuda_nccl, 0, sizeof mpiacc_cuda_nccl);
    if (lib) dlclose(lib);
    why_not = why_buf;
    MPIACC_LOG(MPIACC_LOG_INFO, "NCCL not loaded (%s): device collectives take mpiacc's own paths", why_not);
}

static int nccl_load(const char **why)
{
    pthread_once(&load_once, load);
    if (why) *why = why_not;
    return loaded;
}

static int nccl_describe(char *out, size_t len)
{
    if (!out || !len) return MPI_SUCCESS;
    if (nccl_load(NULL))
        snprintf(out, len, "  NCCL %d.%d.%d (%s): the engine of collectives on device buffers\n", version / 10000,
                 version / 100 % 100, version % 100, path);
    else
        snprintf(out, len, "  NCCL not found (%s): collectives on device buffers take mpiacc's own paths\n", why_not);
    return MPI_SUCCESS;
}

/* ---- devices and communicators ---------------------------------------- */

static int nccl_device(const mpiacc_attrs_t *a, int *dev, unsigned char uuid[MPIACC_BCOLL_UUID_BYTES])
{
    int mpi_errno = MPI_SUCCESS;
    struct cudaDeviceProp p;
    MPIACC_CHECK(mpiacc_cuda_resolve_device(a, dev));
    MPIACC_CUDA_CHECK(cudaGetDeviceProperties(&p, *dev));
    memcpy(uuid, p.uuid.bytes, MPIACC_BCOLL_UUID_BYTES);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int nccl_unique_id(unsigned char id[MPIACC_BCOLL_ID_BYTES])
{
    ncclUniqueId u;
    int r;
    if (!nccl_load(NULL)) return mpiacc_err(MPIACC_ERRK_BACKEND, "NCCL is not loaded (%s)", why_not);
    r = mpiacc_cuda_nccl.GetUniqueId(&u);
    if (r != ncclSuccess) return mpiacc_cuda_nccl_err(r, "ncclGetUniqueId", NULL);
    memcpy(id, u.internal, MPIACC_BCOLL_ID_BYTES);
    return MPI_SUCCESS;
}

static int nccl_comm_init(int dev, int nranks, int rank, const unsigned char id[MPIACC_BCOLL_ID_BYTES], MPI_Comm boot,
                          void **ccp)
{
    int mpi_errno = MPI_SUCCESS, old = -1, entered = 0, r;
    mpiacc_cuda_nccl_comm_t *cc = NULL;
    ncclUniqueId u;
    (void)boot;
    *ccp = NULL;
    if (!nccl_load(NULL)) MPIACC_FAIL(MPIACC_ERRK_BACKEND, "NCCL is not loaded (%s)", why_not);
    if (!(cc = calloc(1, sizeof *cc))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for an NCCL communicator");
    MPIACC_CHECK(mpiacc_cuda_dev_enter(dev, &old));
    entered = 1;
    memcpy(u.internal, id, MPIACC_BCOLL_ID_BYTES);
    /* NVLink multicast (NVLS) stays as the environment says: NCCL_NVLS_ENABLE
     * is never set here (the shared GPU machines set it to 0). */
    r = mpiacc_cuda_nccl.CommInitRank(&cc->comm, nranks, u, rank);
    if (r != ncclSuccess) MPIACC_CHECK(mpiacc_cuda_nccl_err(r, "ncclCommInitRank", NULL));
    cc->dev = dev;
    *ccp = cc;
    cc = NULL;
fn_exit:
    if (entered) mpiacc_cuda_dev_leave(dev, old);
    free(cc);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static void comm_end(void *ccv, int abort)
{
    mpiacc_cuda_nccl_comm_t *cc = ccv;
    int old = -1;
    if (!cc) return;
    if (mpiacc_cuda_dev_enter(cc->dev, &old) == MPI_SUCCESS) {
        int r = abort ? mpiacc_cuda_nccl.CommAbort(cc->comm) : mpiacc_cuda_nccl.CommDestroy(cc->comm);
        if (r != ncclSuccess)
            MPIACC_LOG(MPIACC_LOG_WARN, "NCCL: %s failed (%d)", abort ? "ncclCommAbort" : "ncclCommDestroy", r);
        mpiacc_cuda_dev_leave(cc->dev, old);
    }
    free(cc);
}

static void nccl_comm_free(void *cc) { comm_end(cc, 0); }
static void nccl_comm_abort(void *cc) { comm_end(cc, 1); }

/* ---- types and operations ------------------------------------------------ */

int mpiacc_cuda_nccl_type(MPI_Datatype t)
{
    MPI_Count sz = 0;
    if (t == MPI_BYTE || t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T) return ncclUint8;
    if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T) return ncclInt8;
    if (t == MPI_FLOAT) return ncclFloat32;
    if (t == MPI_DOUBLE) return ncclFloat64;
    if (t == MPI_INT || t == MPI_INT32_T || t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_LONG_LONG_INT ||
        t == MPI_INT64_T || t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT) {
        PMPI_Type_size_c(t, &sz);
        return sz == 4 ? ncclInt32 : sz == 8 ? ncclInt64 : -1;
    }
    if (t == MPI_UNSIGNED || t == MPI_UINT32_T || t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG ||
        t == MPI_UINT64_T) {
        PMPI_Type_size_c(t, &sz);
        return sz == 4 ? ncclUint32 : sz == 8 ? ncclUint64 : -1;
    }
    return -1;
}

static int nccl_reduce_supported(MPI_Datatype t, MPI_Op op)
{
    if (t == MPI_BYTE) return 0; /* MPI reduces bytes only bitwise */
    if (op != MPI_SUM && op != MPI_PROD && op != MPI_MIN && op != MPI_MAX) return 0;
    return mpiacc_cuda_nccl_type(t) >= 0;
}

const struct mpiacc_backend_coll mpiacc_cuda_coll = {
    .name = "NCCL",
    .load = nccl_load,
    .describe = nccl_describe,
    .device = nccl_device,
    .unique_id = nccl_unique_id,
    .comm_init = nccl_comm_init,
    .comm_free = nccl_comm_free,
    .comm_abort = nccl_comm_abort,
    .reduce_supported = nccl_reduce_supported,
    .run = mpiacc_cuda_nccl_run,
    .test = mpiacc_cuda_nccl_test,
    .release = mpiacc_cuda_nccl_release,
};
