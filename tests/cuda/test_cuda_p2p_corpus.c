/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_p2p_corpus: the datatype engine's random corpus (tests/pack/
 * typegen, seeded) through the PUBLIC MPI API on CUDA buffers, 2 ranks.
 *
 * For every type (count 1..3, base pointer shifted 0..7 bytes off 256-byte
 * alignment) one message goes between the two ranks, cycling through
 *   send:  MPI_Send, Isend, Ssend, Issend, Rsend, Irsend, Isend_c, Sendrecv
 *   recv:  MPI_Recv, Irecv (Irecv_c for every third)
 *   way:   CUDA -> CUDA, CUDA -> plain host receive, plain host send -> CUDA
 * Device datatypes are dups tagged MPIACC_BUF_CUDA + MPIACC_STREAM (every
 * fifth without a stream, after a stream synchronisation).  The device data
 * are written with cudaMemcpyAsync on the user stream right before the MPI
 * call (no synchronisation: the library must order after it), and read back
 * after completion with a copy on the legacy stream (visibility to any
 * stream).  Oracle: host MPI_Pack of the sender's data and host MPI_Unpack
 * into the receiver's initial contents; the whole receive buffer is
 * compared, so bytes outside the type map must stay untouched.  Types whose
 * packed bytes overlap in memory are received as plain bytes (unpacking
 * into overlapping bytes has no defined result).
 *
 * Then, on each rank, MPI_Pack / MPI_Unpack with the device-tagged type and
 * a DEVICE packed buffer at an odd position: bytes and position must equal
 * host MPI_Pack's, and nothing outside [position, position+size) is written.
 *
 * MPIACC_TEST_NTYPES (default 400; MPIACC_TEST_LONG=1: 4000) sets the
 * number of types; the seed is printed on failure (MPIACC_TEST_SEED
 * reproduces it).  The fast 20000-type CUDA corpus of the same generator
 * is test_cuda_backend's (the backend table, no MPI messages).
 */
#include "cu_p2p.h"
#include "pack/pack.h"
#include "typegen.h"

enum { S_SEND, S_ISEND, S_SSEND, S_ISSEND, S_RSEND, S_IRSEND, S_ISEND_C, S_SENDRECV, NSEND };
enum { W_DD, W_DH, W_HD, NWAY };
static const char *send_name[NSEND] = {"MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend",
                                       "MPI_Rsend", "MPI_Irsend", "MPI_Isend_c", "MPI_Sendrecv"};
static const char *way_name[NWAY] = {"CUDA->CUDA", "CUDA->host", "host->CUDA"};
static const char *recv_name[3] = {"MPI_Recv", "MPI_Irecv", "MPI_Irecv_c"};

#define MAXBUF (4ll << 20)
#define TAG_HS 32000 /* ready-send handshake */

static unsigned char *dsend, *drecv, *dpk; /* device: send data, receive buffer, packed */
static unsigned char *hin, *hinit, *hexp, *href, *hout, *hpk;
static long stats[NSEND][NWAY], n_overlap, n_nostream, n_pack, n_skipped;

/* Whether two packed bytes of count x type read the same input byte
 * (the engine's analysis; offsets relative to the lowest byte lo). */
static int overlapping(MPI_Datatype dt, MPI_Count count, MPI_Count lo, MPI_Count span)
{
    mpiacc_pack_type_t *t = NULL;
    unsigned char *seen;
    int ov = 0;
    MPI_CK(mpiacc_pack_type_analyze(dt, &t));
    seen = calloc((size_t)span + 1, 1);
    for (MPI_Count p = 0; p < count * t->size && !ov; p++) {
        MPI_Count o = mpiacc_tv_offset(t->blob, p) - lo;
        if (o < 0 || o >= span) {
            fprintf(stderr, "engine offset %lld outside [0,%lld)\n", (long long)o, (long long)span);
            MPI_Abort(MPI_COMM_WORLD, 5);
        }
        ov = seen[o]++;
    }
    free(seen);
    mpiacc_pack_type_release(t);
    return ov;
}

typedef struct tcase {
    long idx;
    MPI_Datatype dt; /* committed host type */
    int count, shift, way, send, recv, nostream, overlap, sender; /* recv: 0 Recv, 1 Irecv, 2 Irecv_c */
    long long lo, span, alloc, total, off; /* off: buffer pointer = base + off */
    unsigned seed;
} tcase_t;

static unsigned data_seed(const tcase_t *c, int from) { return c->seed * 2654435761u + 1000003u * (unsigned)from; }

/* hexp = MPI_Pack of rank `from`'s data; href = MPI_Unpack of it into the
 * receiver's initial contents (hinit). */
static void oracle(const tcase_t *c, int from)
{
    int pos = 0;
    cu_hfill(hin, c->alloc, data_seed(c, from));
    MPI_CK(MPI_Pack(hin + c->off, c->count, c->dt, hexp, (int)c->total, &pos, MPI_COMM_SELF));
    cu_hfill(hinit, c->alloc, data_seed(c, from) ^ 0x5a5a5a5au);
    memcpy(href, hinit, (size_t)c->alloc);
    pos = 0;
    if (!c->overlap) MPI_CK(MPI_Unpack(hexp, (int)c->total, &pos, href + c->off, c->count, c->dt, MPI_COMM_SELF));
}

static int do_send(const tcase_t *c, int peer, int tag, MPI_Datatype st, const void *buf, MPI_Request *r)
{
    switch (c->send) {
    case S_SEND: return MPI_Send(buf, c->count, st, peer, tag, MPI_COMM_WORLD);
    case S_SSEND: return MPI_Ssend(buf, c->count, st, peer, tag, MPI_COMM_WORLD);
    case S_RSEND: return MPI_Rsend(buf, c->count, st, peer, tag, MPI_COMM_WORLD);
    case S_ISEND: return MPI_Isend(buf, c->count, st, peer, tag, MPI_COMM_WORLD, r);
    case S_ISSEND: return MPI_Issend(buf, c->count, st, peer, tag, MPI_COMM_WORLD, r);
    case S_IRSEND: return MPI_Irsend(buf, c->count, st, peer, tag, MPI_COMM_WORLD, r);
    default: return MPI_Isend_c(buf, c->count, st, peer, tag, MPI_COMM_WORLD, r);
    }
}

/* The datatype of one side: a tagged dup (device) or the host type. */
static MPI_Datatype side_type(const tcase_t *c, int device)
{
    if (!device) return c->dt;
    return cu_tag(c->dt, c->nostream ? CU_NO_STREAM : CU_STREAM, cu_us);
}

/* Sender: its data on the device (async, unsynchronised) or the host. */
static const void *stage_send(const tcase_t *c, int device)
{
    cu_hfill(hin, c->alloc, data_seed(c, cu_rank));
    if (!device) return hin + c->off;
    CU_CK(cudaMemcpyAsync(dsend, hin, (size_t)c->alloc, cudaMemcpyHostToDevice, cu_us));
    if (c->nostream) CU_CK(cudaStreamSynchronize(cu_us));
    return dsend + c->off;
}

/* Receiver: initial contents in place; returns the receive pointer. */
static void *stage_recv(const tcase_t *c, int device)
{
    if (!device) {
        memcpy(hout, hinit, (size_t)c->alloc);
        return c->overlap ? (void *)hout : hout + c->off;
    }
    CU_CK(cudaMemcpyAsync(drecv, hinit, (size_t)c->alloc, cudaMemcpyHostToDevice, cu_us));
    if (c->nostream) CU_CK(cudaStreamSynchronize(cu_us));
    return drecv + c->off;
}

static int check_recv(const tcase_t *c, int device, const MPI_Status *st, MPI_Datatype rt, int from)
{
    char what[256];
    int n = -1, bad = 0;
    snprintf(what, sizeof what, "type %ld (%s, count %d, shift %d%s) %s by %s/%s%s from rank %d", c->idx,
             tg_combiner_name(c->dt), c->count, c->shift, c->overlap ? ", overlapping: received as bytes" : "",
             way_name[c->way], send_name[c->send], c->send == S_SENDRECV ? "-" : recv_name[c->recv],
             c->nostream ? " (no stream attribute)" : "", from);
    if (st->MPI_SOURCE != from) CU_BAD(bad, "%s: status source %d", what, st->MPI_SOURCE);
    MPI_CK(MPI_Get_count(st, rt, &n));
    if (n != (c->overlap ? (int)c->total : c->count)) CU_BAD(bad, "%s: MPI_Get_count %d", what, n);
    if (device) cu_get(hout, drecv, c->alloc);
    if (c->overlap) bad += cu_differs(hout, hexp, c->total, what);
    else bad += cu_differs(hout, href, c->alloc, what);
    return bad;
}

/* One message (or one Sendrecv exchange) of case c. */
static int exchange(const tcase_t *c)
{
    const int sdev = c->way != W_HD || c->overlap, rdev = c->way != W_DH && !c->overlap;
    const int peer = 1 - cu_rank, tag = (int)(c->idx % 30000);
    MPI_Status st;
    MPI_Request r = MPI_REQUEST_NULL, rr = MPI_REQUEST_NULL;
    MPI_Datatype stype, rtype;
    int bad = 0;

    if (c->send == S_SENDRECV) { /* both ranks send and receive */
        const void *sb;
        void *rb;
        oracle(c, peer);
        stype = side_type(c, sdev);
        rtype = c->overlap ? MPI_BYTE : side_type(c, rdev);
        sb = stage_send(c, sdev);
        rb = stage_recv(c, rdev);
        MPI_CK(MPI_Sendrecv(sb, c->count, stype, peer, tag, rb, c->overlap ? (int)c->total : c->count, rtype, peer,
                            tag, MPI_COMM_WORLD, &st));
        bad += check_recv(c, rdev, &st, rtype, peer);
    } else if (cu_rank == c->sender) {
        const void *sb;
        stype = side_type(c, sdev);
        sb = stage_send(c, sdev);
        if (c->send == S_RSEND || c->send == S_IRSEND)
            MPI_CK(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_HS, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CK(do_send(c, peer, tag, stype, sb, &r));
        MPI_CK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        rtype = MPI_DATATYPE_NULL;
    } else {
        void *rb;
        int rcount = c->overlap ? (int)c->total : c->count;
        oracle(c, peer);
        rtype = c->overlap ? MPI_BYTE : side_type(c, rdev);
        rb = stage_recv(c, rdev);
        stype = MPI_DATATYPE_NULL;
        if (c->recv > 0) {
            if (c->recv == 2) MPI_CK(MPI_Irecv_c(rb, rcount, rtype, peer, tag, MPI_COMM_WORLD, &rr));
            else MPI_CK(MPI_Irecv(rb, rcount, rtype, peer, tag, MPI_COMM_WORLD, &rr));
            if (c->send == S_RSEND || c->send == S_IRSEND)
                MPI_CK(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_HS, MPI_COMM_WORLD));
            MPI_CK(MPI_Wait(&rr, &st));
        } else {
            MPI_CK(MPI_Recv(rb, rcount, rtype, peer, tag, MPI_COMM_WORLD, &st));
        }
        bad += check_recv(c, rdev, &st, rtype, peer);
    }
    if (stype != MPI_DATATYPE_NULL && stype != c->dt) MPI_CK(MPI_Type_free(&stype));
    if (rtype != MPI_DATATYPE_NULL && rtype != c->dt && rtype != MPI_BYTE) MPI_CK(MPI_Type_free(&rtype));
    return bad;
}

/* MPI_Pack / MPI_Unpack with the device-tagged type and a device packed
 * buffer, against host MPI_Pack / MPI_Unpack (local to each rank). */
static int pack_check(const tcase_t *c)
{
    char what[160];
    const int pos0 = 8 + (int)(c->idx % 5), outsize = pos0 + (int)c->total + 8;
    MPI_Datatype t = cu_tag(c->dt, CU_STREAM, cu_us);
    int pos = pos0, bad = 0, psize = 0;
    snprintf(what, sizeof what, "type %ld (%s, count %d, shift %d) device MPI_Pack", c->idx,
             tg_combiner_name(c->dt), c->count, c->shift);
    oracle(c, cu_rank);
    MPI_CK(MPI_Pack_size(c->count, t, MPI_COMM_WORLD, &psize));
    if (psize < c->total) CU_BAD(bad, "%s: MPI_Pack_size %d < %lld", what, psize, c->total);
    CU_CK(cudaMemsetAsync(dpk, 0xEE, (size_t)outsize, cu_us)); /* ordered by MPIACC_STREAM */
    CU_CK(cudaMemcpyAsync(dsend, hin, (size_t)c->alloc, cudaMemcpyHostToDevice, cu_us)); /* unsynchronised */
    MPI_CK(MPI_Pack(dsend + c->off, c->count, t, dpk, outsize, &pos, MPI_COMM_WORLD));
    if (pos != pos0 + c->total) CU_BAD(bad, "%s: position %d, expected %lld", what, pos, pos0 + c->total);
    cu_get(hpk, dpk, outsize);
    bad += cu_differs(hpk + pos0, hexp, c->total, what);
    for (int i = 0; i < outsize; i++)
        if ((i < pos0 || i >= pos0 + c->total) && hpk[i] != 0xEE) {
            CU_BAD(bad, "%s: wrote packed byte %d outside [%d,%lld)", what, i, pos0, pos0 + c->total);
            break;
        }
    if (!c->overlap) {
        snprintf(what, sizeof what, "type %ld (%s, count %d, shift %d) device MPI_Unpack", c->idx,
                 tg_combiner_name(c->dt), c->count, c->shift);
        CU_CK(cudaMemcpyAsync(drecv, hinit, (size_t)c->alloc, cudaMemcpyHostToDevice, cu_us));
        pos = pos0;
        MPI_CK(MPI_Unpack(dpk, outsize, &pos, drecv + c->off, c->count, t, MPI_COMM_WORLD));
        if (pos != pos0 + c->total) CU_BAD(bad, "%s: position %d, expected %lld", what, pos, pos0 + c->total);
        cu_get(hout, drecv, c->alloc);
        bad += cu_differs(hout, href, c->alloc, what);
    }
    MPI_CK(MPI_Type_free(&t));
    n_pack++;
    return bad;
}

static void corpus(void **state)
{
    const uint64_t seed = mpiacc_test_seed();
    const long ntypes = tg_corpus_size(400, 4000);
    tg_src_t src = {.state = seed ^ 0xC0DAull, .large = 1, .max_size = 1 << 14, .max_span = 1 << 16};
    uint64_t rs = seed ^ 0x9e37ull;
    int bad = 0;
    double t0 = cu_now();
    (void)state;
    cu_watchdog("test_cuda_p2p_corpus", 240);
    for (long i = 0; i < ntypes; i++) {
        tcase_t c = {.idx = i};
        MPI_Count lb, ext, tlb, text, a, b, hi;
        MPI_Datatype raw = tg_make(&src, (int)(1 + i % 5));
        if (tg_combiner(raw) != MPI_COMBINER_NAMED) MPI_CK(MPI_Type_commit(&raw));
        c.dt = raw;
        c.count = 1 + (int)(mpiacc_test_rand(&rs) % 3);
        c.shift = (int)(mpiacc_test_rand(&rs) % 8);
        c.seed = (unsigned)(seed + (uint64_t)i * 7919u);
        c.send = (int)(i % NSEND);
        c.way = (int)((i / NSEND) % NWAY);
        c.sender = (int)((i / (2 * NSEND * NWAY)) % 2);
        c.recv = (i / (NSEND * NWAY)) % 2 == 0 ? 0 : i % 3 == 2 ? 2 : 1;
        if (c.send == S_RSEND || c.send == S_IRSEND) c.recv = c.recv ? c.recv : 1; /* must be posted first */
        c.nostream = i % 5 == 4;
        MPI_CK(MPI_Type_get_extent_c(raw, &lb, &ext));
        MPI_CK(MPI_Type_get_true_extent_c(raw, &tlb, &text));
        a = tlb + (c.count - 1) * ext;
        c.lo = tlb < a ? tlb : a;
        hi = tlb + text > a + text ? tlb + text : a + text;
        c.span = hi - c.lo;
        c.off = c.shift - c.lo;
        c.alloc = c.span + c.shift + 16;
        MPI_CK(MPI_Type_size_c(raw, &b));
        c.total = b * c.count;
        if (c.alloc > MAXBUF || c.total <= 0 || c.total > MAXBUF) {
            n_skipped++;
            tg_free(&raw);
            continue;
        }
        c.overlap = overlapping(raw, c.count, c.lo, c.span);
        n_overlap += c.overlap;
        n_nostream += c.nostream;
        bad += exchange(&c);
        bad += pack_check(&c);
        stats[c.send][c.way]++;
        tg_free(&raw);
        if (i % 32 == 31) { /* stop early (on every rank alike) once the failure is clear */
            int all = 0;
            MPI_CK(MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            if (all > 20) {
                if (cu_rank == 0) fprintf(stderr, "too many mismatches; stopping after type %ld\n", i);
                break;
            }
        }
    }
    if (cu_rank == 0) {
        printf("corpus: %ld types in %.2f s (seed %llu): %ld overlapping (received as bytes), %ld without stream "
               "attribute, %ld too large skipped, %ld device MPI_Pack/Unpack checks\n",
               ntypes, cu_now() - t0, (unsigned long long)seed, n_overlap, n_nostream, n_skipped, n_pack);
        for (int s = 0; s < NSEND; s++)
            printf("  %-12s %4ld CUDA->CUDA %4ld CUDA->host %4ld host->CUDA\n", send_name[s], stats[s][W_DD],
                   stats[s][W_DH], stats[s][W_HD]);
    }
    cu_all_ok(bad, "random corpus through the MPI API");
}

int main(int argc, char **argv)
{
    int fails;
    const struct CMUnitTest tests[] = {cmocka_unit_test(corpus)};
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    if (cu_size != 2) mpiacc_test_skip_all("runs on exactly 2 ranks, got %d", cu_size);
    CU_CK(cudaMalloc((void **)&dsend, MAXBUF));
    CU_CK(cudaMalloc((void **)&drecv, MAXBUF));
    CU_CK(cudaMalloc((void **)&dpk, MAXBUF + 64));
    hin = malloc(MAXBUF), hinit = malloc(MAXBUF), hexp = malloc(MAXBUF), href = malloc(MAXBUF);
    hout = malloc(MAXBUF), hpk = malloc(MAXBUF + 64);
    if (!hin || !hinit || !hexp || !href || !hout || !hpk) MPI_Abort(MPI_COMM_WORLD, 6);
    fails = MPIACC_TEST_RUN("cuda_p2p_corpus", tests, NULL, NULL);
    CU_CK(cudaFree(dsend));
    CU_CK(cudaFree(drecv));
    CU_CK(cudaFree(dpk));
    free(hin), free(hinit), free(hexp), free(href), free(hout), free(hpk);
    return cu_fini(fails);
}
