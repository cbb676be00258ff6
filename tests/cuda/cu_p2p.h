/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cu_p2p.h: shared set-up of the public-API CUDA tests (MPI point-to-point
 * and MPI_Pack/MPI_Unpack on device-tagged datatypes).
 *
 * Failure policy for multi-rank tests: an unexpected MPI or CUDA error
 * prints where and why and calls MPI_Abort (the other ranks would otherwise
 * wait forever); a data mismatch is printed and counted, and every rank
 * checks the global count at the end of each test (cu_all_ok), so all ranks
 * fail together and stay in step.  A watchdog (SIGALRM) turns a hang into a
 * named failure well before the CTest timeout.
 *
 * Environment: MPIACC_TEST_SANITIZER=1 (set by scripts/gpu-check.sh under
 * compute-sanitizer, which may serialise kernel launches) skips the tests
 * that hold a dependency open with a gate kernel.
 */
#ifndef CU_P2P_H_INCLUDED
#define CU_P2P_H_INCLUDED

/* include this header first: clock_gettime, alarm */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "local_rank.h"
#include "testutil.h"
#include "cu_nodev.h"
#include "mpiacc.h"
#include "core/core.h"
#include "cu_attrs.h"
#include "cu_pattern.h"
#include "p2p_kernels.h"

static int cu_rank, cu_size, cu_ndev, cu_sanitizer;
/* This process's device: node-local rank % device count (one rank per GPU
 * where there are enough; ranks share one under MPS otherwise). */
static int cu_dev;
static cudaStream_t cu_us, cu_us2; /* user streams (non-blocking) */

#define CU_CK(call_)                                                                                        \
    do {                                                                                                    \
        cudaError_t e_ = (cudaError_t)(call_);                                                              \
        if (e_ != cudaSuccess) {                                                                            \
            fprintf(stderr, "[rank %d] %s:%d: %s failed: %s (%s)\n", cu_rank, __FILE__, __LINE__, #call_,   \
                    cudaGetErrorName(e_), cudaGetErrorString(e_));                                          \
            fflush(stderr);                                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                                   \
        }                                                                                                   \
    } while (0)

#define MPI_CK(call_)                                                                                       \
    do {                                                                                                    \
        int m_ = (call_);                                                                                   \
        if (m_ != MPI_SUCCESS) {                                                                            \
            fprintf(stderr, "[rank %d] %s:%d: %s failed: %s\n", cu_rank, __FILE__, __LINE__, #call_,       \
                    mpiacc_test_mpi_error(m_));                                                             \
            fflush(stderr);                                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 3);                                                                   \
        }                                                                                                   \
    } while (0)

/* Prints a mismatch (rank-tagged) and counts it in `bad`. */
#define CU_BAD(bad_, ...)                                                    \
    do {                                                                     \
        fprintf(stderr, "[rank %d] %s:%d: ", cu_rank, __FILE__, __LINE__);  \
        fprintf(stderr, __VA_ARGS__);                                        \
        fprintf(stderr, "\n");                                               \
        (bad_)++;                                                            \
    } while (0)

static inline double cu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- watchdog ---------------------------------------------------------- */

static char cu_wd_name[128];

static void cu_wd_fire(int sig)
{
    static const char a[] = "\nWATCHDOG: test still running after its time limit (hung?): ";
    ssize_t r;
    (void)sig;
    r = write(2, a, sizeof a - 1);
    r = write(2, cu_wd_name, strlen(cu_wd_name));
    r = write(2, "\n", 1);
    (void)r;
    _exit(4);
}

/* Arms (secs > 0) or disarms (0) the watchdog for the named step. */
static inline void cu_watchdog(const char *name, unsigned secs)
{
    snprintf(cu_wd_name, sizeof cu_wd_name, "%s", name);
    signal(SIGALRM, cu_wd_fire);
    alarm(secs);
}

/* ---- start / stop ---------------------------------------------------- */

/* MPI_Init_thread (required), errors returned on MPI_COMM_WORLD and
 * MPI_COMM_SELF, cu_rank and cu_size: the thread level provided. */
static inline int cu_mpi_start(int *argc, char ***argv, int required)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(argc, argv, required, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &cu_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cu_size);
    return provided;
}

/* The CUDA devices (cu_ndev; every rank SKIPPED without one, `why` added to
 * the reason), mpiacc's CUDA backend (a device without it is a failure,
 * not a skip), and this process's device (cu_dev, current). */
static inline const mpiacc_backend_t *cu_device_start(const char *why)
{
    cudaError_t e = cudaGetDeviceCount(&cu_ndev);
    const mpiacc_backend_t *b;
    int lrank = 0;
    if (e != cudaSuccess || cu_ndev <= 0)
        mpiacc_test_skip_all("%s%s", cu_nodev_why(e, cu_ndev, (char[160]){0}, 160), why);
    if (!(b = mpiacc_backend_get(MPIACC_KIND_CUDA))) {
        /* A device but no backend: a real failure, not a skip. */
        fprintf(stderr, "[rank %d] %d CUDA device(s) but mpiacc's CUDA backend is absent: %s\n", cu_rank, cu_ndev,
                mpiacc_backend_why_absent(MPIACC_KIND_CUDA));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    local_rank_size(MPI_COMM_WORLD, &lrank, NULL); /* bench/common/local_rank.h */
    cu_dev = lrank % cu_ndev;
    CU_CK(cudaSetDevice(cu_dev));
    return b;
}

/* The IPC tests' start: every rank SKIPPED unless every device supports
 * CUDA IPC events. */
static inline void cu_need_ipc_events(void)
{
    int ipcev = 0;
    CU_CK(cudaDeviceGetAttribute(&ipcev, cudaDevAttrIpcEventSupport, cu_dev));
    MPI_CK(MPI_Allreduce(MPI_IN_PLACE, &ipcev, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!ipcev) mpiacc_test_skip_all("the device does not support CUDA IPC events");
}

/* The common start: cu_mpi_start, cu_device_start, at least min_ranks
 * (SKIPPED otherwise), the user streams cu_us and cu_us2. */
static inline int cu_init(int *argc, char ***argv, int required, int min_ranks)
{
    const char *s = getenv("MPIACC_TEST_SANITIZER");
    int provided = cu_mpi_start(argc, argv, required);
    cu_sanitizer = s && *s && strcmp(s, "0") != 0;
    cu_device_start("");
    if (cu_size < min_ranks) mpiacc_test_skip_all("needs %d MPI processes, got %d", min_ranks, cu_size);
    CU_CK(cudaStreamCreateWithFlags(&cu_us, cudaStreamNonBlocking));
    CU_CK(cudaStreamCreateWithFlags(&cu_us2, cudaStreamNonBlocking));
    return provided;
}

/* Polls handle h of backend b until it is done: 0, or 1 after secs. */
static inline int cu_wait_handle(const mpiacc_backend_t *b, void *h, double secs)
{
    int done = 0;
    double t0 = cu_now();
    while (!done) {
        MPI_CK(b->test(h, &done));
        if (!done && cu_now() - t0 > secs) return 1;
    }
    return 0;
}

/* The end: MPI_Finalize, and main's status for `fails` failures. */
static inline int cu_end(int fails)
{
    alarm(0);
    if (MPI_Finalize() != MPI_SUCCESS) {
        fprintf(stderr, "[rank %d] MPI_Finalize failed (operations still pending?)\n", cu_rank);
        return 1;
    }
    return fails ? 1 : 0;
}

/* cu_init's end: the device idle, the user streams destroyed, cu_end. */
static inline int cu_fini(int fails)
{
    CU_CK(cudaDeviceSynchronize());
    CU_CK(cudaStreamDestroy(cu_us));
    CU_CK(cudaStreamDestroy(cu_us2));
    return cu_end(fails);
}

/* Every rank: sums `bad` over the ranks and fails the test if nonzero. */
static inline void cu_all_ok(int bad, const char *what)
{
    int total = 0;
    MPI_CK(MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    alarm(0);
    if (total) fail_msg("%s: %d problem(s) over all ranks (details above, tagged by rank)", what, total);
}

/* ---- datatypes ------------------------------------------------------------ */

enum { CU_NO_STREAM = 0, CU_STREAM = 1 };

/* A dup of `base` tagged MPIACC_BUF_CUDA, with MPIACC_STREAM = s when
 * with_stream (s may be NULL: the legacy default stream). */
static inline MPI_Datatype cu_tag(MPI_Datatype base, int with_stream, cudaStream_t s)
{
    MPI_Datatype t;
    MPI_CK(MPI_Type_dup(base, &t));
    MPI_CK(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA));
    if (with_stream) MPI_CK(MPI_Type_set_attr(t, MPIACC_STREAM, (void *)s));
    return t;
}

static inline MPI_Datatype cu_vector_int(int n, int stride)
{
    MPI_Datatype t;
    MPI_CK(MPI_Type_vector(n, 1, stride, MPI_INT, &t));
    MPI_CK(MPI_Type_commit(&t));
    return t;
}

/* ---- gates ------------------------------------------------------------------ */

/* h[0]: the gate (0 closed, 1 open); h[1]: set by the kernel on timeout. */
typedef struct cu_gate {
    volatile int *h;
    int *d;
} cu_gate_t;

static inline void cu_gate_init(cu_gate_t *g)
{
    CU_CK(cudaHostAlloc((void **)&g->h, 64, cudaHostAllocMapped | cudaHostAllocPortable));
    CU_CK(cudaHostGetDevicePointer((void **)&g->d, (void *)g->h, 0));
    g->h[0] = 0;
    g->h[1] = 0;
}

static inline void cu_gate_close(cu_gate_t *g)
{
    g->h[1] = 0;
    __atomic_store_n((int *)&g->h[0], 0, __ATOMIC_SEQ_CST);
}

static inline void cu_gate_open(cu_gate_t *g) { __atomic_store_n((int *)&g->h[0], 1, __ATOMIC_SEQ_CST); }

static inline int cu_gate_timed_out(cu_gate_t *g) { return __atomic_load_n((int *)&g->h[1], __ATOMIC_SEQ_CST); }

static inline void cu_gate_free(cu_gate_t *g)
{
    cu_gate_open(g);
    CU_CK(cudaDeviceSynchronize());
    CU_CK(cudaFreeHost((void *)g->h));
    g->h = NULL;
}

/* Gated tests cannot run where kernel launches may be serialised. */
#define CU_SKIP_UNDER_SANITIZER()                                                                      \
    do {                                                                                               \
        if (cu_sanitizer) {                                                                            \
            if (cu_rank == 0) printf("SKIPPED (this test): gated kernels under compute-sanitizer\n"); \
            skip();                                                                                    \
        }                                                                                              \
    } while (0)

/* Polls r with MPI_Test for `secs`; returns 1 (and prints) if it completed. */
static inline int cu_completes_early(MPI_Request *r, double secs, const char *what)
{
    int flag = 0;
    double t0 = cu_now();
    while (cu_now() - t0 < secs) {
        MPI_CK(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
        if (flag) {
            fprintf(stderr, "[rank %d] %s: completed after %.3f s although its GPU dependency is still pending\n",
                    cu_rank, what, cu_now() - t0);
            return 1;
        }
    }
    return 0;
}

/* ---- data ------------------------------------------------------------------- */

static inline void cu_hfill(void *p, long long n, unsigned seed)
{
    unsigned char *c = p;
    for (long long i = 0; i < n; i++) c[i] = cu_pattern(i, seed);
}

/* Compares n bytes; prints the first difference and returns 1 if any. */
static inline int cu_differs(const void *got, const void *want, long long n, const char *what)
{
    const unsigned char *g = got, *w = want;
    for (long long i = 0; i < n; i++)
        if (g[i] != w[i]) {
            fprintf(stderr, "[rank %d] %s: byte %lld is 0x%02x, expected 0x%02x\n", cu_rank, what, i, g[i], w[i]);
            return 1;
        }
    return 0;
}

/* Device buffer contents (synchronous copy on the legacy stream). */
/* Receives one message of `size` plain bytes from `from` into got and
 * compares it with want.  Returns the number of problems. */
static inline int cu_recv_bytes_check(int from, int tag, void *got, const void *want, int size, const char *what)
{
    int n = -1;
    MPI_Status st;
    memset(got, 0, (size_t)size);
    MPI_CK(MPI_Recv(got, size, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st));
    MPI_CK(MPI_Get_count(&st, MPI_BYTE, &n));
    if (n != size) {
        fprintf(stderr, "[rank %d] %s: received %d bytes, expected %d\n", cu_rank, what, n, size);
        return 1;
    }
    return cu_differs(got, want, size, what);
}

static inline void cu_get(void *host, const void *dev, long long n)
{
    CU_CK(cudaMemcpy(host, dev, (size_t)n, cudaMemcpyDeviceToHost));
}

/* Host bytes to the device, landed when it returns.  cudaMemcpy from
 * pageable memory may return before its DMA lands (CUDA's "API
 * synchronization behavior"), and the legacy stream it runs on is not
 * ordered with the non-blocking streams (cu_us, mpiacc's) that the tests
 * name in MPIACC_STREAM: without the synchronisation a send may read, and
 * a receive's unpack be overwritten by, a copy still in flight (seen on an
 * H200 without MPS, where the contexts are time-sliced). */
static inline void cu_put(void *dev, const void *host, long long n)
{
    CU_CK(cudaMemcpy(dev, host, (size_t)n, cudaMemcpyHostToDevice));
    CU_CK(cudaStreamSynchronize(cudaStreamLegacy));
}

static inline int cu_class(int err)
{
    int c = MPI_SUCCESS;
    if (err != MPI_SUCCESS) MPI_Error_class(err, &c);
    return c;
}

#endif
