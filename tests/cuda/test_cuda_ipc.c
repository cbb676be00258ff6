/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_ipc: the CUDA backend's IPC building blocks (backend_ipc.h)
 * called white-box on 2 ranks, each on device (local rank % devices).  The
 * exporting rank sends the export record and its datatype blob as plain
 * host MPI messages; the other imports into a different layout and checks
 * every byte of its allocation against MPI_Pack / MPI_Unpack
 * (cu_xcopy_oracle.h).  Covers: contiguous and vector layouts, seeded
 * random layouts in both directions (whole and partial ranges), a buffer in
 * the middle of an allocation, free + re-allocation between messages (new
 * buffer ID: new mapping, new data), memory that must not be exported
 * (stream-ordered pool, host, MPIACC_IPC=0), a producer kernel still
 * running when the importer copies (GPU-side event wait; a finished one
 * exports no event), the LRU bound (MPIACC_IPC_CACHE), the steady state
 * (no open per message, events from the cache), a rank
 * importing its own export, threads importing one export at once (one
 * open), and the error paths.  Needs a GPU (skipped without one).
 */
#include "cu_p2p.h"

#include <pthread.h>

#include "cuda/cuda_testhooks.h"
#include "cu_ipc_msg.h"
#include "cu_randtype.h"
#include "p2p_kernels.h"
#include "test_kernels.h"

static uint64_t rng;

static MPI_Datatype vec_int(int n, int stride)
{
    MPI_Datatype t;
    MPI_CK(MPI_Type_vector(n, 1, stride, MPI_INT, &t));
    MPI_CK(MPI_Type_commit(&t));
    return t;
}

static MPI_Datatype contig_int(int n)
{
    MPI_Datatype t;
    MPI_CK(MPI_Type_contiguous(n, MPI_INT, &t));
    MPI_CK(MPI_Type_commit(&t));
    return t;
}

static void layouts(void **state)
{
    MPI_Datatype c = contig_int(65536), v = vec_int(65536, 3);
    side_t sc = mkside(c, 1, 0, 1 << 20, 11), sv = mkside(v, 1, 0, 1 << 20, 12);
    side_t dc = mkside(c, 1, 0, 1 << 20, 13), dv = mkside(v, 1, 0, 1 << 20, 14);
    side_t mid = mkside(v, 1, (1 << 20) + 4096 + 24, 4 << 20, 15); /* a buffer in the middle */
    side_t dmid = mkside(c, 1, 100, 1 << 20, 16);
    int bad = 0, ok = 1, oks = 1;
    (void)state;
    cu_watchdog("layouts", 120);
    bad += msg(0, &sc, &dc, 0, -1, 0, &ok), oks &= ok;
    bad += msg(0, &sv, &dc, 0, -1, 0, &ok), oks &= ok;
    bad += msg(1, &sc, &dv, 0, -1, 0, &ok), oks &= ok;
    bad += msg(1, &sv, &dv, 4, 65536 * 4 - 8, 0, &ok), oks &= ok;
    bad += msg(0, &mid, &dmid, 0, -1, 0, &ok), oks &= ok;
    bad += msg(1, &mid, &dv, 1000, 200004, 0, &ok), oks &= ok;
    if (!oks) CU_BAD(bad, "a cudaMalloc buffer was not exported");
    freeside(&sc), freeside(&sv), freeside(&dc), freeside(&dv), freeside(&mid), freeside(&dmid);
    MPI_Type_free(&c), MPI_Type_free(&v);
    cu_all_ok(bad, "contiguous / vector layouts over IPC");
}

static void random_layouts(void **state)
{
    int bad = 0, n = 0;
    (void)state;
    cu_watchdog("random_layouts", 240);
    for (int i = 0; i < 40 && bad < 3; i++) {
        MPI_Datatype S = cu_rand_type(&rng, 3), D = cu_rand_type(&rng, 3);
        int ss = 0, ds = 0, cs = 1 + cu_r(&rng, 3), cd = 0, ok = 1;
        long long total = 0, first = 0, last = -1, slo, shi, dlo, dhi, soff = cu_r(&rng, 64), doff = cu_r(&rng, 64);
        if (!cu_is_named(S)) MPI_CK(MPI_Type_commit(&S));
        if (!cu_is_named(D)) MPI_CK(MPI_Type_commit(&D));
        MPI_Type_size(S, &ss), MPI_Type_size(D, &ds);
        if (ss > 0 && ds > 0) total = (long long)cs * ss, cd = (int)((total + ds - 1) / ds);
        if (total > 0 && !cu_xc_overlaps(D, cd)) {
            side_t s, d;
            if (i % 3 == 1) {
                first = cu_r(&rng, (int)total);
                last = first + 1 + cu_r(&rng, (int)(total - first));
            }
            cu_xc_span(S, cs, &slo, &shi), cu_xc_span(D, cd, &dlo, &dhi);
            soff -= slo < 0 ? slo : 0, doff -= dlo < 0 ? dlo : 0;
            s = mkside(S, cs, soff, soff + shi + 64, 100u + (unsigned)i);
            d = mkside(D, cd, doff, doff + dhi + 64, 200u + (unsigned)i);
            bad += msg(i % 2, &s, &d, first, last, 0, &ok);
            if (!ok) CU_BAD(bad, "random pair %d: not exported", i);
            freeside(&s), freeside(&d);
            n++;
        }
        if (!cu_is_named(S)) MPI_Type_free(&S);
        if (!cu_is_named(D)) MPI_Type_free(&D);
    }
    if (cu_rank == 0) printf("random_layouts: %d pairs\n", n);
    cu_all_ok(bad, "random layouts over IPC, both directions");
}

static void realloc_same_address(void **state)
{
    MPI_Datatype c = contig_int(1 << 18);
    side_t s = mkside(c, 1, 0, 1 << 20, 21), d = mkside(c, 1, 0, 1 << 20, 22);
    mpiacc_ipc_stats_t a0, a1, a2;
    char *old = s.alloc;
    int bad = 0, same = 0;
    (void)state;
    cu_watchdog("realloc_same_address", 120);
    a0 = stats();
    bad += msg(0, &s, &d, 0, -1, 0, NULL);
    a1 = stats();
    if (cu_rank == 0) {
        CU_CK(cudaFree(s.alloc));
        CU_CK(cudaMalloc((void **)&s.alloc, (size_t)s.bytes));
        same = s.alloc == old;
    }
    MPI_CK(MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD));
    s.seed = 23; /* new data */
    bad += msg(0, &s, &d, 0, -1, 0, NULL);
    a2 = stats();
    if (cu_rank == 1) {
        if (a1.mem_opens - a0.mem_opens != 1 || a2.mem_opens - a1.mem_opens != 1)
            CU_BAD(bad, "mappings opened: %ld then %ld, expected 1 and 1 (new buffer ID)", a1.mem_opens - a0.mem_opens,
                   a2.mem_opens - a1.mem_opens);
        if (same && a2.mem_evictions - a1.mem_evictions < 1)
            CU_BAD(bad, "the stale mapping of the re-allocated address was not evicted");
    }
    if (cu_rank == 0) printf("realloc_same_address: address %s\n", same ? "reused" : "not reused");
    freeside(&s), freeside(&d);
    MPI_Type_free(&c);
    cu_all_ok(bad, "free + re-allocation between messages");
}

static void not_exportable(void **state)
{
    mpiacc_attrs_t a = cu_stream_attrs(us);
    mpiacc_ipc_export_t x;
    mpiacc_ipc_stats_t s0, s1;
    void *tok = NULL, *p = NULL;
    int ok = 1, bad = 0, pools = 0;
    char host[256];
    (void)state;
    cu_watchdog("not_exportable", 60);
    s0 = stats();
    CU_CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, mydev));
    if (pools) {
        CU_CK(cudaMallocAsync(&p, 1 << 20, us));
        CU_CK(cudaStreamSynchronize(us));
        MK(I->export_buf(&a, NULL, p, 0, 1 << 20, &x, &tok, &ok));
        if (ok) CU_BAD(bad, "cudaMallocAsync memory was exported");
        I->export_release(tok);
        CU_CK(cudaFreeAsync(p, us));
        CU_CK(cudaStreamSynchronize(us));
    }
    MK(I->export_buf(&a, NULL, host, 0, sizeof host, &x, &tok, &ok));
    if (ok) CU_BAD(bad, "pageable host memory was exported");
    CU_CK(cudaHostAlloc(&p, 4096, cudaHostAllocDefault));
    MK(I->export_buf(&a, NULL, p, 0, 4096, &x, &tok, &ok));
    if (ok) CU_BAD(bad, "pinned host memory was exported");
    CU_CK(cudaFreeHost(p));
    CU_CK(cudaMalloc(&p, 4096));
    mpiacc_cuda_ipc_set_enabled(0); /* as MPIACC_IPC=0 */
    MK(I->export_buf(&a, NULL, p, 0, 4096, &x, &tok, &ok));
    if (ok) CU_BAD(bad, "exported with MPIACC_IPC=0");
    mpiacc_cuda_ipc_set_enabled(-1);
    MK(I->export_buf(&a, NULL, p, 0, 4096, &x, &tok, &ok));
    if (!ok) CU_BAD(bad, "a cudaMalloc buffer was not exported");
    if (ok && (x.flags & MPIACC_IPC_F_EVENT)) CU_BAD(bad, "an event was exported without a dependency");
    I->export_release(tok);
    MK(I->export_buf(&a, NULL, (char *)p + 4000, 0, 200, &x, &tok, &ok)); /* beyond the allocation */
    if (ok) CU_BAD(bad, "bytes beyond the allocation were exported");
    CU_CK(cudaFree(p));
    s1 = stats();
    if (s1.export_fallbacks - s0.export_fallbacks != 4 + (pools ? 1 : 0))
        CU_BAD(bad, "export_fallbacks grew by %ld, expected %d", s1.export_fallbacks - s0.export_fallbacks,
               4 + (pools ? 1 : 0));
    cu_all_ok(bad, "memory that must not be exported");
}

static void producer_still_running(void **state)
{
    MPI_Datatype v = vec_int(1 << 18, 2), c = contig_int(1 << 18);
    side_t s = mkside(v, 1, 0, 2 << 20, 31), d = mkside(c, 1, 0, 1 << 20, 32);
    int bad = 0;
    (void)state;
    cu_watchdog("producer_still_running", 120);
    for (int ex = 0; ex < 2; ex++) {
        s.seed = 33u + (unsigned)ex;
        if (cu_rank == ex) { /* old data, then a ~50 ms kernel writing the final data on the user stream */
            dfill(s.alloc, s.bytes, 999u);
            CU_CK(cu_test_spin_fill(us, s.alloc, s.bytes, s.seed, 50.0));
        }
        bad += msg(ex, &s, &d, 0, -1, M_NOFILL, NULL);
        if (!(msg_flags & MPIACC_IPC_F_EVENT)) CU_BAD(bad, "no event exported behind a running producer");
        CU_CK(cudaStreamSynchronize(us));
    }
    freeside(&s), freeside(&d);
    MPI_Type_free(&v), MPI_Type_free(&c);
    cu_all_ok(bad, "importer waits GPU-side for the exporter's producer kernel");
}

static void lru_bound(void **state)
{
    enum { NB = 10, CAP = 4 };
    MPI_Datatype c = contig_int(1 << 16);
    side_t s[NB], d = mkside(c, 1, 0, 1 << 18, 41);
    mpiacc_ipc_stats_t a0, a1, a2;
    int bad = 0;
    (void)state;
    cu_watchdog("lru_bound", 120);
    if (cu_rank == 1) mpiacc_cuda_ipc_set_cache(CAP); /* as MPIACC_IPC_CACHE=4 */
    for (int i = 0; i < NB; i++) s[i] = mkside(c, 1, 0, 1 << 20, 50u + (unsigned)i);
    a0 = stats();
    for (int i = 0; i < NB; i++) bad += msg(0, &s[i], &d, 0, -1, 0, NULL);
    a1 = stats();
    for (int i = 0; i < NB; i++) s[i].seed += 100, bad += msg(0, &s[i], &d, 0, -1, 0, NULL);
    a2 = stats();
    if (cu_rank == 1) {
        mpiacc_cuda_ipc_set_cache(0);
        /* the first pass also evicts what earlier tests left of this owner */
        if (a1.mem_opens - a0.mem_opens != NB || a1.mem_evictions - a0.mem_evictions < NB - CAP)
            CU_BAD(bad, "first pass: %ld opens, %ld evictions; expected %d and >= %d", a1.mem_opens - a0.mem_opens,
                   a1.mem_evictions - a0.mem_evictions, NB, NB - CAP);
        if (a2.mem_opens - a1.mem_opens != NB || a2.mem_evictions - a1.mem_evictions != NB)
            CU_BAD(bad, "second pass (LRU order): %ld opens, %ld evictions; expected %d and %d",
                   a2.mem_opens - a1.mem_opens, a2.mem_evictions - a1.mem_evictions, NB, NB);
    }
    for (int i = 0; i < NB; i++) freeside(&s[i]);
    freeside(&d);
    MPI_Type_free(&c);
    cu_all_ok(bad, "LRU bound of the mapping cache");
}

/* steady_state's producer: a gate kernel held closed until the message is
 * exported (a spin of a few ms lost the race when the host was descheduled
 * under a loaded machine: the producer ended first, rightly without an
 * event); under compute-sanitizer, which may serialise launches, a 5 ms
 * spin as before. */
static cu_gate_t ss_gate;

static void ss_open(void)
{
    cu_gate_open(&ss_gate);
}

static int ss_produce(const side_t *s)
{
    if (cu_sanitizer) return cu_test_spin_fill(us, s->alloc, s->bytes, s->seed, 5.0) != cudaSuccess;
    cu_gate_close(&ss_gate);
    return cu_k_gate_fill(us, ss_gate.d, s->alloc, s->bytes, s->seed, 30.0) != 0;
}

static void steady_state(void **state)
{
    enum { N = 100 };
    MPI_Datatype v = vec_int(4096, 2), c = contig_int(4096);
    side_t s = mkside(v, 1, 64, 64 << 10, 61), d = mkside(c, 1, 32, 32 << 10, 62);
    mpiacc_ipc_stats_t a0, a1;
    int bad = 0;
    (void)state;
    cu_watchdog("steady_state", 120);
    bad += msg(0, &s, &d, 0, -1, 0, NULL); /* warm-up: opens once */
    if (msg_flags & MPIACC_IPC_F_EVENT) CU_BAD(bad, "an event was exported behind a finished dependency");
    if (!cu_sanitizer) cu_gate_init(&ss_gate), msg_after_export = ss_open;
    if (cu_rank == 0 && ss_produce(&s)) CU_BAD(bad, "producer launch");
    bad += msg(0, &s, &d, 0, -1, M_NOFILL, NULL); /* warm-up of the event cache */
    a0 = stats();
    for (int i = 0; i < N && !bad; i++) { /* each behind a running producer: an event each */
        s.seed = 70u + (unsigned)i;
        if (cu_rank == 0 && ss_produce(&s)) CU_BAD(bad, "producer launch");
        bad += msg(0, &s, &d, 0, -1, M_NOFILL, NULL);
        if (!(msg_flags & MPIACC_IPC_F_EVENT)) CU_BAD(bad, "message %d: no event behind a running producer", i);
    }
    CU_CK(cudaStreamSynchronize(us));
    if (!cu_sanitizer) {
        if (cu_gate_timed_out(&ss_gate)) CU_BAD(bad, "the producer's gate timed out");
        msg_after_export = NULL;
        cu_gate_free(&ss_gate);
    }
    a1 = stats();
    if (cu_rank == 1 && (a1.mem_opens != a0.mem_opens || a1.event_opens != a0.event_opens ||
                         a1.blob_uploads != a0.blob_uploads || a1.mem_hits - a0.mem_hits != N ||
                         a1.event_hits - a0.event_hits != N))
        CU_BAD(bad, "importer, %d messages: %ld mapping opens, %ld event opens, %ld blob uploads, %ld / %ld hits; "
               "expected 0, 0, 0, %d / %d", N, a1.mem_opens - a0.mem_opens, a1.event_opens - a0.event_opens,
               a1.blob_uploads - a0.blob_uploads, a1.mem_hits - a0.mem_hits, a1.event_hits - a0.event_hits, N, N);
    if (cu_rank == 0 && (a1.event_creates != a0.event_creates || a1.exports - a0.exports != N))
        CU_BAD(bad, "exporter, %d messages: %ld events created, %ld exports; expected 0 and %d", N,
               a1.event_creates - a0.event_creates, a1.exports - a0.exports, N);
    freeside(&s), freeside(&d);
    MPI_Type_free(&v), MPI_Type_free(&c);
    cu_all_ok(bad, "steady state opens nothing per message");
}

/* Each rank imports its own export (no mapping; its own event). */
static void same_process(void **state)
{
    MPI_Datatype v = vec_int(8192, 3), c = contig_int(8192);
    side_t s = mkside(v, 1, 256, 128 << 10, 81), d = mkside(c, 1, 8, 64 << 10, 82);
    mpiacc_attrs_t a = cu_stream_attrs(us);
    mpiacc_ipc_export_t x;
    mpiacc_ipc_stats_t a0, a1;
    mpiacc_pack_type_t *TS = NULL, *TD = NULL;
    mpiacc_xfer_desc_t dd = {0};
    unsigned char *got = malloc((size_t)d.bytes), *img = malloc((size_t)d.bytes), *exp = malloc((size_t)d.bytes);
    unsigned char *simg = malloc((size_t)s.bytes);
    void *dep = NULL, *tok = NULL, *xf = NULL;
    long long lo, hi;
    int ok = 0, bad = 0, rc;
    (void)state;
    cu_watchdog("same_process", 60);
    dfill(s.alloc, s.bytes, 999u), dfill(d.alloc, d.bytes, d.seed);
    CU_CK(cu_test_spin_fill(us, s.alloc, s.bytes, s.seed, 20.0)); /* the dependency */
    a0 = stats();
    MK(mpiacc_pack_type_analyze(v, &TS));
    MK(mpiacc_pack_type_analyze(c, &TD));
    cu_xc_span(v, 1, &lo, &hi);
    MK(B->capture(&a, s.alloc + s.off, &dep));
    MK(I->export_buf(&a, dep, s.alloc + s.off, (MPI_Aint)lo, (MPI_Aint)hi, &x, &tok, &ok));
    if (!ok) CU_BAD(bad, "not exported");
    dd.buf = d.alloc + d.off, dd.type = TD, dd.count = 1, dd.first = 0, dd.last = TD->size;
    if (ok) { /* no dependency of its own: only the exported event orders the copy */
        rc = I->import_copy(&a, NULL, &x, TS->blob, TS->blob_bytes, 1, &dd, &xf);
        if (rc != MPI_SUCCESS) CU_BAD(bad, "import of the own export failed (class %d)", cu_class(rc));
        else if (cu_wait_handle(B, xf, 30)) CU_BAD(bad, "import not complete after 30 s");
    }
    B->release(xf);
    I->export_release(tok), B->release(dep);
    a1 = stats();
    cu_get(got, d.alloc, d.bytes);
    cu_hfill(img, d.bytes, d.seed), cu_hfill(simg, s.bytes, s.seed);
    MK(cu_xc_expect(simg + s.off, v, 1, c, 1, 0, TD->size, img, exp, d.bytes, d.off));
    if (cu_differs(got, exp, d.bytes, "own import")) bad++;
    if (ok && (a1.mem_same_process - a0.mem_same_process != 1 || a1.mem_opens != a0.mem_opens))
        CU_BAD(bad, "own import: %ld same-process imports, %ld opens; expected 1 and 0",
               a1.mem_same_process - a0.mem_same_process, a1.mem_opens - a0.mem_opens);
    mpiacc_pack_type_release(TS), mpiacc_pack_type_release(TD);
    free(got), free(img), free(exp), free(simg);
    freeside(&s), freeside(&d);
    MPI_Type_free(&v), MPI_Type_free(&c);
    cu_all_ok(bad, "same-process import");
}

/* Threads of the importer import the same export at once: one open. */
typedef struct targ {
    const mpiacc_ipc_export_t *x;
    const void *blob;
    long long nb;
    char *dst;
    const mpiacc_pack_type_t *T;
    int rc;
} targ_t;

static void *import_thread(void *p)
{
    targ_t *t = p;
    mpiacc_attrs_t a = cu_stream_attrs(us);
    mpiacc_xfer_desc_t dd = {0};
    void *xf = NULL;
    dd.buf = t->dst, dd.type = t->T, dd.count = 1, dd.first = 0, dd.last = t->T->size;
    t->rc = I->import_copy(&a, NULL, t->x, t->blob, (size_t)t->nb, 1, &dd, &xf);
    if (t->rc == MPI_SUCCESS && cu_wait_handle(B, xf, 30)) t->rc = -1;
    B->release(xf);
    return NULL;
}

static void concurrent_imports(void **state)
{
    enum { NT = 4 };
    MPI_Datatype v = vec_int(3000, 7), c = contig_int(3000);
    side_t s = mkside(v, 1, 0, 128 << 10, 101), d[NT];
    mpiacc_ipc_export_t x;
    mpiacc_ipc_stats_t a0, a1;
    mpiacc_attrs_t a = cu_stream_attrs(us);
    long long nb = 0, lo, hi;
    int bad = 0, ok = 0;
    (void)state;
    cu_watchdog("concurrent_imports", 120);
    for (int i = 0; i < NT; i++) d[i] = mkside(c, 1, 0, 16 << 10, 110u + (unsigned)i);
    if (cu_rank == 0) {
        mpiacc_pack_type_t *T = NULL;
        void *dep = NULL, *tok = NULL;
        dfill(s.alloc, s.bytes, s.seed);
        cu_xc_span(v, 1, &lo, &hi);
        MK(mpiacc_pack_type_analyze(v, &T));
        MK(B->capture(&a, s.alloc, &dep));
        MK(I->export_buf(&a, dep, s.alloc, (MPI_Aint)lo, (MPI_Aint)hi, &x, &tok, &ok));
        nb = (long long)T->blob_bytes;
        MPI_CK(MPI_Send(&ok, 1, MPI_INT, 1, 1, MPI_COMM_WORLD));
        MPI_CK(MPI_Send(&x, (int)sizeof x, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
        MPI_CK(MPI_Send(&nb, 1, MPI_LONG_LONG, 1, 3, MPI_COMM_WORLD));
        MPI_CK(MPI_Send(T->blob, (int)nb, MPI_BYTE, 1, 4, MPI_COMM_WORLD));
        MPI_CK(MPI_Recv(&bad, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        I->export_release(tok);
        B->release(dep);
        mpiacc_pack_type_release(T);
        bad = 0;
    } else {
        mpiacc_pack_type_t *T = NULL;
        pthread_t th[NT];
        targ_t ta[NT];
        void *blob;
        unsigned char *got = malloc(16 << 10), *img = malloc(16 << 10), *exp = malloc(16 << 10);
        unsigned char *simg = malloc((size_t)s.bytes);
        for (int i = 0; i < NT; i++) dfill(d[i].alloc, d[i].bytes, d[i].seed);
        MPI_CK(MPI_Recv(&ok, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CK(MPI_Recv(&x, (int)sizeof x, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CK(MPI_Recv(&nb, 1, MPI_LONG_LONG, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        blob = malloc((size_t)nb);
        MPI_CK(MPI_Recv(blob, (int)nb, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MK(mpiacc_pack_type_analyze(c, &T));
        a0 = stats();
        for (int i = 0; i < NT; i++) {
            ta[i] = (targ_t){&x, blob, nb, d[i].alloc, T, 0};
            if (ok && pthread_create(&th[i], NULL, import_thread, &ta[i])) MPI_Abort(MPI_COMM_WORLD, 7);
        }
        for (int i = 0; i < NT && ok; i++) {
            pthread_join(th[i], NULL);
            if (ta[i].rc) CU_BAD(bad, "thread %d: import failed (%d)", i, ta[i].rc);
        }
        a1 = stats();
        if (!ok) CU_BAD(bad, "not exported");
        if (ok && (a1.mem_opens - a0.mem_opens != 1 || a1.mem_hits - a0.mem_hits != NT - 1))
            CU_BAD(bad, "%d concurrent imports: %ld opens, %ld hits; expected 1 and %d", NT, a1.mem_opens - a0.mem_opens,
                   a1.mem_hits - a0.mem_hits, NT - 1);
        cu_hfill(simg, s.bytes, s.seed);
        for (int i = 0; i < NT && ok; i++) {
            cu_get(got, d[i].alloc, d[i].bytes);
            cu_hfill(img, d[i].bytes, d[i].seed);
            MK(cu_xc_expect(simg, v, 1, c, 1, 0, T->size, img, exp, d[i].bytes, 0));
            if (cu_differs(got, exp, d[i].bytes, "concurrent import")) bad++;
        }
        MPI_CK(MPI_Send(&bad, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        mpiacc_pack_type_release(T);
        free(got), free(img), free(exp), free(simg), free(blob);
    }
    for (int i = 0; i < NT; i++) freeside(&d[i]);
    freeside(&s);
    MPI_Type_free(&v), MPI_Type_free(&c);
    cu_all_ok(bad, "concurrent imports of one export");
}

/* Bad exports fail with MPI errors, never hang or fault. */
static void errors(void **state)
{
    MPI_Datatype c = contig_int(1024);
    side_t s = mkside(c, 1, 0, 8192, 91), d = mkside(c, 1, 0, 8192, 92);
    mpiacc_attrs_t a = cu_stream_attrs(us);
    mpiacc_ipc_export_t x, y;
    mpiacc_pack_type_t *T = NULL;
    mpiacc_xfer_desc_t dd = {0};
    void *tok = NULL, *xf = NULL;
    int ok = 0, bad = 0, rc, len = 0;
    char str[MPI_MAX_ERROR_STRING];
    (void)state;
    cu_watchdog("errors", 60);
    MK(mpiacc_pack_type_analyze(c, &T));
    MK(I->export_buf(&a, NULL, s.alloc, 0, 4096, &x, &tok, &ok));
    if (!ok) CU_BAD(bad, "not exported");
    dd.buf = d.alloc, dd.type = T, dd.count = 1, dd.first = 0, dd.last = 4096;
    y = x, y.hi = (int64_t)x.alloc_bytes - x.offset + 1; /* beyond the allocation */
    rc = I->import_copy(&a, NULL, &y, T->blob, T->blob_bytes, 1, &dd, &xf);
    if (cu_class(rc) != MPI_ERR_BUFFER || xf) CU_BAD(bad, "bounds: class %d, expected MPI_ERR_BUFFER", cu_class(rc));
    rc = I->import_copy(&a, NULL, &x, T->blob, 8, 1, &dd, &xf); /* truncated blob */
    if (cu_class(rc) != MPI_ERR_INTERN || xf) CU_BAD(bad, "short blob: class %d, expected MPI_ERR_INTERN", cu_class(rc));
    y = x, y.owner ^= 1, y.buffer_id ^= (uint64_t)1 << 62; /* someone else's, with an unusable handle */
    memset(y.mem_handle, 0, sizeof y.mem_handle);
    rc = I->import_copy(&a, NULL, &y, T->blob, T->blob_bytes, 1, &dd, &xf);
    MPI_Error_string(rc, str, &len);
    if (cu_class(rc) != MPI_ERR_OTHER || xf || !strstr(str, "cudaIpcOpenMemHandle"))
        CU_BAD(bad, "unusable handle: class %d (%s), expected MPI_ERR_OTHER naming cudaIpcOpenMemHandle", cu_class(rc),
               rc ? str : "success");
    I->export_release(tok);
    mpiacc_pack_type_release(T);
    freeside(&s), freeside(&d);
    MPI_Type_free(&c);
    cu_all_ok(bad, "error paths");
}

int main(int argc, char **argv)
{
    int fails;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layouts), cmocka_unit_test(random_layouts), cmocka_unit_test(realloc_same_address),
        cmocka_unit_test(not_exportable), cmocka_unit_test(producer_still_running), cmocka_unit_test(lru_bound),
        cmocka_unit_test(steady_state), cmocka_unit_test(same_process), cmocka_unit_test(concurrent_imports),
        cmocka_unit_test(errors),
    };
    cu_mpi_start(&argc, &argv, MPI_THREAD_SINGLE);
    if (cu_size != 2) mpiacc_test_skip_all("runs on exactly 2 ranks, got %d", cu_size);
    B = cu_device_start("");
    if (!(I = B->ipc)) {
        fprintf(stderr, "[rank %d] the CUDA backend has no IPC table\n", cu_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    mydev = cu_dev;
    peer = 1 - cu_rank;
    cu_need_ipc_events();
    CU_CK(cudaStreamCreateWithFlags(&us, cudaStreamNonBlocking));
    rng = mpiacc_test_seed();
    {
        int devs[2] = {0, 0};
        MPI_CK(MPI_Allgather(&mydev, 1, MPI_INT, devs, 1, MPI_INT, MPI_COMM_WORLD));
        if (cu_rank == 0) printf("test_cuda_ipc: ranks on devices %d and %d of %d\n", devs[0], devs[1], cu_ndev);
    }
    fails = MPIACC_TEST_RUN("cuda_ipc", tests, NULL, NULL);
    alarm(0);
    CU_CK(cudaDeviceSynchronize());
    CU_CK(cudaStreamDestroy(us));
    return cu_end(fails);
}
