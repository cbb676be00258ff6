/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L /* setenv */
/*
 * bench/coll: OSU-style latency of collectives with device buffers through
 * mpiacc, against NCCL alone and against the same collective on host
 * buffers, in the same run, on the same buffers.
 *
 *   allreduce           MPI_Allreduce, MPI_SUM of floats; size = bytes per rank
 *   bcast               MPI_Bcast from rank 0; size = bytes
 *   allgather           MPI_Allgather; size = bytes per rank
 *   alltoall            MPI_Alltoall; size = bytes per peer
 *   alltoallv           MPI_Alltoallv, the same uniform counts; size = bytes per peer
 *   neighbor_alltoallw  MPI_Neighbor_alltoallw on a periodic 1-D Cartesian ring
 *                       (two neighbours); size = bytes per neighbour
 *
 * The device datatype is a duplicate of MPI_FLOAT tagged with
 * MPIACC_BUF_TYPE (CUDA or OpenCL) and the stream / in-order queue; the
 * host run uses MPI_FLOAT.  Timing as the OSU micro-benchmarks: `warmup`
 * untimed calls, then `iterations` timed calls with an MPI_Barrier between
 * calls (not timed); each rank averages its call times, the table shows
 * the average over ranks (OSU's "Avg Latency") and the CSV also the
 * slowest rank's average.  NCCL alone (CUDA, when libnccl.so.2 is found:
 * coll_nccl.c): ncclAllReduce / ncclBroadcast / ncclAllGather / grouped
 * ncclSend+ncclRecv on the same device buffers and stream, each followed by
 * cudaStreamSynchronize, as an MPI call returns.  After the timed calls the
 * device result is copied back and compared bytewise with the host result
 * (integer-valued floats: every reduction order gives the same bits): the
 * check column.  The `path` column says what ran the device calls
 * (MPIACC_Get_stats): nccl, ipc (mpiacc's IPC collectives), staged, mixed.
 *
 * --nonblocking times the nonblocking forms instead (MPI_Iallreduce ...
 * then MPI_Wait, both runs; the `form` CSV column says which).
 * --engine nccl|ipc|staged|auto sets MPIACC_COLL_ENGINE for the run (the
 * keep-or-delete measurement of issue 31: the IPC engine against NCCL).
 * --stream-ordered (CUDA): MPI_Allreduce with MPIACC_ORDER_STREAM: the time
 * the call takes to return, and `iterations` back-to-back calls on one
 * stream (no host synchronisation between them) per call, against NCCL
 * alone back to back and mpiacc's host-ordered call.
 *
 * Exit status: 0, 1 when a check failed, 2 on bad options, 77 when the
 * chosen backend finds no device.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#ifdef COLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef COLL_HAVE_OPENCL
#include "ocl_common.h"
#endif
#include "bench.h"
#include "local_rank.h"
#include "mpiacc.h"
#ifdef COLL_HAVE_NCCL
#include "coll_nccl.h"
#endif

enum { OP_ALLREDUCE, OP_BCAST, OP_ALLGATHER, OP_ALLTOALL, OP_ALLTOALLV, OP_NEIGHBOR, OP_COUNT };
static const char *const op_name[OP_COUNT] = {"allreduce", "bcast",     "allgather",
                                              "alltoall",  "alltoallv", "neighbor_alltoallw"};
static const char *const op_what[OP_COUNT] = {
    "MPI_Allreduce (MPI_SUM, float), bytes per rank", "MPI_Bcast (root 0), bytes",
    "MPI_Allgather, bytes per rank",
    "MPI_Alltoall, bytes per peer", "MPI_Alltoallv (uniform counts), bytes per peer",
    "MPI_Neighbor_alltoallw (periodic 1-D ring, 2 neighbours), bytes per neighbour"};

/* ---- the device: CUDA or OpenCL ------------------------------------------ */

typedef struct dev {
    int cuda;     /* 1 CUDA, 0 OpenCL */
    void *queue;  /* cudaStream_t or cl_command_queue */
    void *buf_type;
    char name[256];
#ifdef COLL_HAVE_OPENCL
    bocl_t ocl;
#endif
} coll_dev_t;

#ifdef COLL_HAVE_CUDA
#define CK BENCH_CUDA_CHECK
#endif

/* 1 when the backend finds a device (want: 0 auto, 1 cuda, 2 opencl). */
static int dev_open(coll_dev_t *d, int want, int local_rank, char *why, size_t len)
{
    memset(d, 0, sizeof *d);
    snprintf(why, len, "no backend compiled in");
#ifdef COLL_HAVE_CUDA
    if (want != 2) {
        int n = 0;
        if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
            struct cudaDeviceProp p;
            cudaStream_t s;
            CK(cudaSetDevice(local_rank % n));
            CK(cudaGetDeviceProperties(&p, local_rank % n));
            CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            snprintf(d->name, sizeof d->name, "%s", p.name);
            d->cuda = 1, d->queue = (void *)s, d->buf_type = MPIACC_BUF_CUDA;
            return 1;
        }
        cudaGetLastError();
        snprintf(why, len, "no CUDA device");
    }
#endif
#ifdef COLL_HAVE_OPENCL
    if (want != 1) {
        if (bocl_init(&d->ocl)) {
            snprintf(d->name, sizeof d->name, "%s", d->ocl.name);
            d->queue = (void *)bocl_queue(&d->ocl, 0);
            d->buf_type = MPIACC_BUF_OPENCL;
            return 1;
        }
        snprintf(why, len, "no OpenCL device");
    }
#endif
    (void)want, (void)local_rank;
    return 0;
}

static void *dev_alloc(coll_dev_t *d, size_t bytes)
{
#ifdef COLL_HAVE_CUDA
    if (d->cuda) {
        void *p;
        CK(cudaMalloc(&p, bytes ? bytes : 1));
        return p;
    }
#endif
#ifdef COLL_HAVE_OPENCL
    return (void *)bocl_buf(&d->ocl, bytes);
#else
    (void)bytes;
    return NULL;
#endif
}

static void dev_free(coll_dev_t *d, void *p)
{
#ifdef COLL_HAVE_CUDA
    if (d->cuda) {
        cudaFree(p);
        return;
    }
#endif
#ifdef COLL_HAVE_OPENCL
    clReleaseMemObject((cl_mem)p);
#endif
    (void)d, (void)p;
}

/* Blocking copies on the queue. */
static void dev_copy(coll_dev_t *d, void *dbuf, void *host, size_t bytes, int to_device)
{
    if (!bytes) return;
#ifdef COLL_HAVE_CUDA
    if (d->cuda) {
        cudaStream_t s = (cudaStream_t)d->queue;
        if (to_device) CK(cudaMemcpyAsync(dbuf, host, bytes, cudaMemcpyHostToDevice, s));
        else CK(cudaMemcpyAsync(host, dbuf, bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        return;
    }
#endif
#ifdef COLL_HAVE_OPENCL
    cl_command_queue q = (cl_command_queue)d->queue;
    if (to_device) OCL_OK(clEnqueueWriteBuffer(q, (cl_mem)dbuf, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    else OCL_OK(clEnqueueReadBuffer(q, (cl_mem)dbuf, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
#endif
    (void)d, (void)dbuf, (void)host, (void)to_device;
}

/* ---- one collective -------------------------------------------------------- */

typedef struct setup {
    MPI_Comm comm, ring; /* all ranks; the periodic 1-D ring */
    int nb;              /* the nonblocking forms + MPI_Wait */
    int rank, size;
    int *counts, *displs;      /* alltoallv: per peer, in elements */
    int ncounts[2];            /* neighbour: elements per neighbour */
    MPI_Aint ndispls[2];       /* neighbour: bytes                   */
    MPI_Datatype ntypes[2];
} setup_t;

/* Elements of the send and receive buffers of op for n elements. */
static void buf_elems(const setup_t *s, int op, size_t n, size_t *ns, size_t *nr)
{
    switch (op) {
    case OP_ALLREDUCE: *ns = *nr = n; break;
    case OP_BCAST: *ns = n, *nr = 0; break;
    case OP_ALLGATHER: *ns = n, *nr = n * (size_t)s->size; break;
    case OP_ALLTOALL:
    case OP_ALLTOALLV: *ns = *nr = n * (size_t)s->size; break;
    default: *ns = *nr = 2 * n; break;
    }
}

/* The nonblocking form of op into *r. */
static int icall(setup_t *s, int op, void *sb, void *rb, int n, MPI_Datatype t, MPI_Request *r)
{
    MPI_Comm comm = s->comm, ring = s->ring;
    switch (op) {
    case OP_ALLREDUCE: return MPI_Iallreduce(sb, rb, n, t, MPI_SUM, comm, r);
    case OP_BCAST: return MPI_Ibcast(sb, n, t, 0, comm, r);
    case OP_ALLGATHER: return MPI_Iallgather(sb, n, t, rb, n, t, comm, r);
    case OP_ALLTOALL: return MPI_Ialltoall(sb, n, t, rb, n, t, comm, r);
    case OP_ALLTOALLV:
        for (int k = 0; k < s->size; k++) s->counts[k] = n, s->displs[k] = k * n;
        return MPI_Ialltoallv(sb, s->counts, s->displs, t, rb, s->counts, s->displs, t, comm, r);
    default:
        for (int k = 0; k < 2; k++)
            s->ncounts[k] = n, s->ndispls[k] = (MPI_Aint)k * n * (MPI_Aint)sizeof(float), s->ntypes[k] = t;
        return MPI_Ineighbor_alltoallw(sb, s->ncounts, s->ndispls, s->ntypes, rb, s->ncounts, s->ndispls, s->ntypes,
                                       ring, r);
    }
}

static int call(setup_t *s, int op, void *sb, void *rb, int n, MPI_Datatype t)
{
    MPI_Comm comm = s->comm, ring = s->ring;
    if (s->nb) {
        MPI_Request r = MPI_REQUEST_NULL;
        int rc = icall(s, op, sb, rb, n, t, &r);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    switch (op) {
    case OP_ALLREDUCE: return MPI_Allreduce(sb, rb, n, t, MPI_SUM, comm);
    case OP_BCAST: return MPI_Bcast(sb, n, t, 0, comm);
    case OP_ALLGATHER: return MPI_Allgather(sb, n, t, rb, n, t, comm);
    case OP_ALLTOALL: return MPI_Alltoall(sb, n, t, rb, n, t, comm);
    case OP_ALLTOALLV:
        for (int k = 0; k < s->size; k++) s->counts[k] = n, s->displs[k] = k * n;
        return MPI_Alltoallv(sb, s->counts, s->displs, t, rb, s->counts, s->displs, t, comm);
    default:
        for (int k = 0; k < 2; k++)
            s->ncounts[k] = n, s->ndispls[k] = (MPI_Aint)k * n * (MPI_Aint)sizeof(float), s->ntypes[k] = t;
        return MPI_Neighbor_alltoallw(sb, s->ncounts, s->ndispls, s->ntypes, rb, s->ncounts, s->ndispls, s->ntypes,
                                      ring);
    }
}

/* warmup + iters calls, barrier between calls; this rank's average (us). */
static double timed(setup_t *s, int op, void *sb, void *rb, int n, MPI_Datatype t, int warmup, int iters)
{
    double sum = 0;
    MPI_Comm c = op == OP_NEIGHBOR ? s->ring : s->comm;
    for (int i = -warmup; i < iters; i++) {
        MPI_Barrier(c);
        double t0 = MPI_Wtime();
        BENCH_MPI_CHECK(call(s, op, sb, rb, n, t));
        if (i >= 0) sum += MPI_Wtime() - t0;
    }
    return sum * 1e6 / iters;
}

static void fill(float *v, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++) v[i] = (float)((rank * 7 + (long)i) % 251);
}

/* Which path the device calls took (this process's counters). */
typedef struct path {
    unsigned long long dev0, staged0, eng0, dev, staged, eng;
} path_t;

static void path_read(unsigned long long *dev, unsigned long long *staged, unsigned long long *eng)
{
    MPIACC_Stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    MPIACC_Get_stats(&st);
    *dev = st.coll_device, *staged = st.coll_staged, *eng = st.coll_engine;
}

static void path_mark(path_t *p) { path_read(&p->dev0, &p->staged0, &p->eng0); }

static void path_done(path_t *p)
{
    path_read(&p->dev, &p->staged, &p->eng);
    p->dev -= p->dev0, p->staged -= p->staged0, p->eng -= p->eng0;
}

static const char *path_name(const path_t *p)
{
    if (p->dev && !p->staged) return p->eng == p->dev ? "nccl" : p->eng ? "mixed" : "ipc";
    return p->dev ? "mixed" : "staged";
}

static const char *which_backend[] = {"auto", "cuda", "opencl"};
static const char *engines[] = {"env", "auto", "nccl", "ipc", "staged"};

/* The baseline NCCL alone: 1 when ready (CUDA and libnccl.so.2 found). */
static int nccl_ready(const coll_dev_t *d, MPI_Comm comm, char *why, size_t len)
{
#ifdef COLL_HAVE_NCCL
    if (d->cuda) return cn_open(comm, why, len);
    snprintf(why, len, "not CUDA");
#else
    (void)d, (void)comm;
    snprintf(why, len, "bench built without nccl.h");
#endif
    return 0;
}

/* --stream-ordered: MPI_Allreduce with MPIACC_ORDER_STREAM (CUDA). */
static int stream_ordered(setup_t *s, coll_dev_t *d, int nccl, long long minb, long long maxb, int iters, int warmup)
{
    int bad = 0;
    size_t nmax = (size_t)(maxb / 4);
    float *hs = malloc(nmax * 4 + 4), *hr = malloc(nmax * 4 + 4), *chk = malloc(nmax * 4 + 4);
    void *ds = dev_alloc(d, nmax * 4), *dr = dev_alloc(d, nmax * 4);
    MPI_Datatype dt, dto;
    BENCH_MPI_CHECK(MPI_Type_dup(MPI_FLOAT, &dt));
    MPI_Type_set_attr(dt, MPIACC_BUF_TYPE, d->buf_type);
    MPI_Type_set_attr(dt, MPIACC_STREAM, d->queue);
    BENCH_MPI_CHECK(MPI_Type_dup(dt, &dto));
    MPI_Type_set_attr(dto, MPIACC_ORDER, MPIACC_ORDER_STREAM);
    if (s->rank == 0)
        printf("# MPI_Allreduce (MPI_SUM, float) with MPIACC_ORDER_STREAM on one stream: the call's return time "
               "(average; the stream drained between calls, untimed), %d back-to-back calls then one "
               "cudaStreamSynchronize (us per call), NCCL alone the same way, and mpiacc's host-ordered call\n"
               "%12s %12s %12s %12s %12s %14s %6s %7s\n",
               iters, "Size (B)", "return (us)", "b2b (us)", "nccl b2b", "b2b/nccl", "host-order", "check", "path");
    for (long long b = minb; b <= maxb; b *= 2) {
        int n = (int)(b / 4), ok;
        double t[4] = {0, 0, 0, 0};
        path_t pm;
        fill(hs, (size_t)n, s->rank);
        dev_copy(d, ds, hs, (size_t)n * 4, 1);
        path_mark(&pm);
        for (int i = -warmup; i < iters; i++) {
            MPI_Barrier(s->comm);
            double t0 = MPI_Wtime();
            BENCH_MPI_CHECK(MPI_Allreduce(ds, dr, n, dto, MPI_SUM, s->comm));
            if (i >= 0) t[0] += MPI_Wtime() - t0;
#ifdef COLL_HAVE_CUDA
            BENCH_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)d->queue));
#endif
        }
        t[0] = t[0] * 1e6 / iters;
        MPI_Barrier(s->comm);
        {
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) BENCH_MPI_CHECK(MPI_Allreduce(ds, dr, n, dto, MPI_SUM, s->comm));
#ifdef COLL_HAVE_CUDA
            BENCH_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)d->queue));
#endif
            t[1] = (MPI_Wtime() - t0) * 1e6 / iters;
        }
        path_done(&pm);
        MPI_Barrier(s->comm);
#ifdef COLL_HAVE_NCCL
        if (nccl) t[2] = cn_back_to_back(ds, dr, n, d->queue, iters);
#endif
        t[3] = timed(s, OP_ALLREDUCE, ds, dr, n, dt, warmup, iters);
        BENCH_MPI_CHECK(MPI_Allreduce(hs, hr, n, MPI_FLOAT, MPI_SUM, s->comm));
        dev_copy(d, dr, chk, (size_t)n * 4, 0);
        ok = !memcmp(chk, hr, (size_t)n * 4);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, t, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < 4; k++) t[k] /= s->size;
        if (!ok) bad = 1;
        if (s->rank == 0) {
            printf("%12lld %12.2f %12.2f %12.2f %12.3f %14.2f %6s %7s\n", b, t[0], t[1], nccl ? t[2] : 0.0,
                   nccl ? t[1] / t[2] : 0.0, t[3], ok ? "ok" : "FAIL", path_name(&pm));
            fflush(stdout);
        }
    }
    dev_free(d, ds), dev_free(d, dr);
    free(hs), free(hr), free(chk);
    MPI_Type_free(&dt), MPI_Type_free(&dto);
    return bad;
}

int main(int argc, char **argv)
{
    long long minb = 4, maxb = 64LL << 20;
    int iters = 1000, iters_large = 100, warmup = 200, warmup_large = 10, direct = 0, backend = 0, bad = 0;
    int nonblocking = 0, engine = 0, sord = 0, no_nccl = 0, nccl;
    long long large = 8192;
    const char *ops = "allreduce,bcast,allgather,alltoall,alltoallv,neighbor_alltoallw", *csvpath = NULL;
    int run[OP_COUNT] = {0};
    cli_opt_t opts[] = {
        {"min-size", CLI_SIZE, &minb, "smallest message (bytes, a multiple of 4)", NULL, 4, 1LL << 30},
        {"max-size", CLI_SIZE, &maxb, "largest message (bytes); sizes double from --min-size", NULL, 4, 1LL << 30},
        {"ops", CLI_STRING, &ops, "comma-separated collectives", NULL, CLI_ANY},
        {"iterations", CLI_INT, &iters, "timed calls per size up to --large", NULL, CLI_POSITIVE},
        {"iterations-large", CLI_INT, &iters_large, "timed calls per size above --large", NULL, CLI_POSITIVE},
        {"warmup", CLI_INT, &warmup, "untimed calls before them, up to --large", NULL, 0, 1e9},
        {"warmup-large", CLI_INT, &warmup_large, "untimed calls above --large", NULL, 0, 1e9},
        {"large", CLI_SIZE, &large, "message size from which the -large counts apply (bytes, exclusive)", NULL, 0,
         1LL << 30},
        {"backend", CLI_CHOICE, &backend, "device buffers: auto (CUDA if a device is present, else OpenCL)",
         "auto|cuda|opencl", CLI_ANY},
        {"engine", CLI_CHOICE, &engine,
         "engine of the device collectives: MPIACC_COLL_ENGINE for this run (env: as the environment says)",
         "env|auto|nccl|ipc|staged", CLI_ANY},
        {"no-nccl", CLI_FLAG, &no_nccl, "leave out the NCCL-alone baseline", NULL, CLI_ANY},
        {"stream-ordered", CLI_FLAG, &sord,
         "MPI_Allreduce with MPIACC_ORDER_STREAM: return time and back-to-back calls (CUDA)", NULL, CLI_ANY},
        {"direct", CLI_FLAG, &direct, "accepted and ignored (an option of mpiacc 0.1)", NULL,
         CLI_ANY},
        {"nonblocking", CLI_FLAG, &nonblocking, "time the nonblocking forms (MPI_Iallreduce ... then MPI_Wait)",
         NULL, CLI_ANY},
        CLI_OPT_CSV(&csvpath),
    };
    const cli_prog_t prog = CLI_PROG(
        "coll", "mpiexec -n 4 coll [options]",
        "OSU-style latency of MPI_Allreduce, MPI_Bcast, MPI_Allgather, MPI_Alltoall, MPI_Alltoallv and\n"
        "MPI_Neighbor_alltoallw (periodic 1-D ring) with device buffers through mpiacc, against NCCL\n"
        "alone (CUDA: the same buffers, each call followed by cudaStreamSynchronize) and the same calls\n"
        "on host buffers, in the same run (average us over iterations and ranks; ratios device/NCCL and\n"
        "device/host; device results checked bytewise against the host results; the path the device\n"
        "calls took: nccl, ipc, staged, mixed; --nonblocking: the MPI_I* forms, each followed by\n"
        "MPI_Wait; --engine: MPIACC_COLL_ENGINE for the run; --stream-ordered: MPIACC_ORDER_STREAM).\n"
        "Ops: allreduce, bcast, allgather, alltoall, alltoallv, neighbor_alltoallw.\n"
        "Exit status: 0, 1 a result check failed, 2 bad options, 77 no device.", opts);
    cli_parse(&prog, argc, argv);
    for (const char *p = ops; *p;) {
        size_t l = strcspn(p, ",");
        int k;
        for (k = 0; k < OP_COUNT; k++)
            if (strlen(op_name[k]) == l && !strncmp(p, op_name[k], l)) break;
        if (k == OP_COUNT || l == 0) {
            if (cli_rank0()) fprintf(stderr, "coll: unknown collective '%.*s' in --ops\n", (int)l, p), cli_usage(&prog, stderr);
            return 2;
        }
        run[k] = 1;
        p += l + (p[l] == ',');
    }
    if (minb % 4 || maxb < minb) {
        if (cli_rank0()) fprintf(stderr, "coll: --min-size must be a multiple of 4 and at most --max-size\n");
        return 2;
    }
    if (engine) setenv("MPIACC_COLL_ENGINE", engines[engine], 1); /* read by mpiacc at MPI_Init */

    MPI_Init(&argc, &argv);
    setup_t s;
    coll_dev_t d;
    int local_rank, found, periodic = 1;
    char why[128], nwhy[160];
    FILE *csv = NULL;
    memset(&s, 0, sizeof s);
    s.nb = nonblocking;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.size);
    local_rank_size(MPI_COMM_WORLD, &local_rank, NULL);
    found = dev_open(&d, backend, local_rank, why, sizeof why);
    MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!found || (sord && !d.cuda)) {
        if (s.rank == 0) printf("SKIPPED: %s (--backend %s)\n", found ? "--stream-ordered needs CUDA" : why,
                                which_backend[backend]);
        MPI_Finalize();
        return 77;
    }
    BENCH_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &s.comm));
    BENCH_MPI_CHECK(MPI_Cart_create(s.comm, 1, &s.size, &periodic, 0, &s.ring));
    MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(s.ring, MPI_ERRORS_RETURN);
    nccl = !no_nccl && nccl_ready(&d, s.comm, nwhy, sizeof nwhy);
    if (s.rank == 0) {
        char what[256];
        const char *env = getenv("MPIACC_COLL_ENGINE");
        snprintf(what, sizeof what, "collectives on device buffers vs NCCL alone and host buffers, %d ranks", s.size);
        bench_header("coll", what, d.cuda ? "CUDA" : "OpenCL", d.name);
        printf("# average us per call over iterations and ranks (OSU 'Avg Latency'), MPI_Barrier between calls; %s "
               "forms; MPIACC_COLL_ENGINE=%s; NCCL alone: %s%s%s\n",
               nonblocking ? "nonblocking (MPI_I* + MPI_Wait)" : "blocking", env && *env ? env : "(unset: auto)",
               nccl ? "yes" : "no", nccl || no_nccl ? "" : ", ", nccl || no_nccl ? "" : nwhy);
        if (direct) printf("# --direct is accepted and ignored (an option of mpiacc 0.1)\n");
        if (!sord)
            csv = bench_csv_open(csvpath, "op,bytes,iterations,device_avg_us,device_max_us,nccl_avg_us,host_avg_us,"
                                          "host_max_us,device_over_nccl,device_over_host,check,backend,ranks,engine,"
                                          "path,form");
    }
    s.counts = malloc(sizeof(int) * (size_t)s.size);
    s.displs = malloc(sizeof(int) * (size_t)s.size);
    MPI_Datatype dt;
    BENCH_MPI_CHECK(MPI_Type_dup(MPI_FLOAT, &dt));
    MPI_Type_set_attr(dt, MPIACC_BUF_TYPE, d.buf_type);
    MPI_Type_set_attr(dt, d.cuda ? MPIACC_STREAM : MPIACC_CL_QUEUE, d.queue);
    if (sord) {
        bad = stream_ordered(&s, &d, nccl, minb, maxb, iters, warmup);
        memset(run, 0, sizeof run);
    }
    for (int op = 0; op < OP_COUNT; op++) {
        size_t ns, nr, nmax = (size_t)(maxb / 4);
        if (!run[op]) continue;
        buf_elems(&s, op, nmax, &ns, &nr);
        float *hs = malloc(ns * 4 + 4), *hr = malloc(nr * 4 + 4), *chk = malloc((ns > nr ? ns : nr) * 4 + 4);
        void *ds = dev_alloc(&d, ns * 4), *dr = dev_alloc(&d, nr * 4);
        if (!hs || !hr || !chk) bench_fail(__FILE__, __LINE__, "malloc", "out of host memory");
        if (s.rank == 0) {
            printf("# %s: %s\n%12s %14s %12s %14s %12s %12s %6s %7s\n", op_name[op], op_what[op], "Size (B)",
                   "device (us)", "nccl (us)", "host (us)", "device/nccl", "device/host", "check", "path");
            fflush(stdout);
        }
        for (long long b = minb; b <= maxb; b *= 2) {
            int n = (int)(b / 4), it = b > large ? iters_large : iters, wu = b > large ? warmup_large : warmup;
            size_t es, er;
            double t[5] = {0, 0, 0, 0, 0};
            int ok;
            path_t pm;
            buf_elems(&s, op, (size_t)n, &es, &er);
            fill(hs, es, s.rank);
            memset(hr, 0, er * 4);
            dev_copy(&d, ds, hs, es * 4, 1);
            memset(chk, 0, (es > er ? es : er) * 4);
            dev_copy(&d, dr, chk, er * 4, 1);
#ifdef COLL_HAVE_NCCL
            if (nccl) t[4] = cn_timed(op, ds, dr, n, d.queue, op == OP_NEIGHBOR ? s.ring : s.comm, wu, it);
            dev_copy(&d, ds, hs, es * 4, 1); /* (a broadcast overwrote it) */
#endif
            path_mark(&pm);
            t[0] = timed(&s, op, ds, dr, n, dt, wu, it);
            path_done(&pm);
            t[2] = timed(&s, op, hs, hr, n, MPI_FLOAT, wu, it);
            /* the device result against the host result */
            if (op == OP_BCAST) {
                dev_copy(&d, ds, chk, es * 4, 0);
                ok = !memcmp(chk, hs, es * 4);
            } else {
                dev_copy(&d, dr, chk, er * 4, 0);
                ok = !memcmp(chk, hr, er * 4);
            }
            t[1] = t[0], t[3] = t[2];
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &t[0], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &t[2], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &t[4], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &t[1], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &t[3], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t[0] /= s.size, t[2] /= s.size, t[4] /= s.size;
            if (!ok) bad = 1;
            if (s.rank == 0) {
                printf("%12lld %14.2f %12.2f %14.2f %12.3f %12.3f %6s %7s\n", b, t[0], t[4], t[2],
                       nccl ? t[0] / t[4] : 0.0, t[0] / t[2], ok ? "ok" : "FAIL", path_name(&pm));
                fflush(stdout);
                if (csv)
                    fprintf(csv, "%s,%lld,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%s,%s,%d,%s,%s,%s\n", op_name[op], b,
                            it, t[0], t[1], t[4], t[2], t[3], nccl ? t[0] / t[4] : 0.0, t[0] / t[2], ok ? "ok" : "FAIL",
                            d.cuda ? "cuda" : "opencl", s.size, engines[engine], path_name(&pm),
                            s.nb ? "nonblocking" : "blocking");
            }
        }
        dev_free(&d, ds), dev_free(&d, dr);
        free(hs), free(hr), free(chk);
    }
    if (s.rank == 0 && bad) printf("# a device result differed from the host result (check FAIL)\n");
    if (csv) fclose(csv);
    MPI_Type_free(&dt);
#ifdef COLL_HAVE_NCCL
    if (nccl) cn_close();
#endif
    MPI_Comm_free(&s.ring);
    MPI_Comm_free(&s.comm);
    free(s.counts), free(s.displs);
#ifdef COLL_HAVE_CUDA
    if (d.cuda) cudaStreamDestroy((cudaStream_t)d.queue);
#endif
#ifdef COLL_HAVE_OPENCL
    if (!d.cuda) clReleaseCommandQueue((cl_command_queue)d.queue), bocl_fini(&d.ocl);
#endif
    MPI_Finalize();
    return bad;
}
