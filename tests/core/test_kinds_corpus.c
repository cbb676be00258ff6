/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_kinds_corpus: a datatype corpus through the engine (issue 36), 2 ranks.
 *
 * Every datatype goes from one rank to the other between every pairing of
 * buffer kinds the machine has:
 *   host        untagged host memory (MPI's own path, or mpiacc's routes)
 *   host-tag    the same, tagged MPIACC_BUF_HOST (no event)
 *   host+event  MPIACC_BUF_HOST + MPIACC_EVENT (the pool's CPU backend)
 *   OpenCL      a cl_mem of the platform chosen by --platform or
 *               MPIACC_TEST_OPENCL_PLATFORM (PoCL on the CPU machine)
 *   CUDA        cudaMalloc memory (where a CUDA device exists)
 * A kind this build or machine lacks is skipped with its reason printed
 * (--require-cuda: the whole program skips without a CUDA device).  The
 * same datatype T is used on both sides (host and CUDA pointers at the
 * offset that puts T's lowest byte in the buffer; a cl_mem cannot be
 * offset, so the OpenCL side uses T shifted by an hindexed).  A datatype
 * whose bytes overlap is received as plain bytes (MPI leaves such a
 * receive undefined).
 *
 * Datatypes: explicit edge shapes (size 0 with a non-zero extent, count
 * 0, 1 and 3 of it, a struct of empty blocks, negative lower bounds and
 * strides, resized with lb != true lb, holes, overlapping, a struct of
 * mixed types with a size-0 member, large extents, a pair type), then
 * random ones from tests/pack/typegen.c (MPIACC_TEST_NTYPES, default 16;
 * MPIACC_TEST_LONG=1: 300).  The calls cycle through MPI_Send, Isend,
 * Ssend, Send_init+Start, Bsend and MPI_Recv, Irecv, Recv_init+Start,
 * Mprobe+Mrecv, Improbe+Imrecv, Recv and Irecv from MPI_ANY_SOURCE.
 *
 * Oracle: MPI_Pack of the sender's bytes and MPI_Unpack into the receive
 * buffer's initial contents, on host copies: the whole receive buffer must
 * equal it (bytes outside the datatype untouched); the status's source and
 * tag, and MPI_Get_count / MPI_Get_elements_x on the receive datatype,
 * must be what MPI gives for the bytes sent.  Seeded: the seed is printed
 * on failure and MPIACC_TEST_SEED replays it; a failure names the pairing,
 * the calls, the count and the datatype's constructor tree (tg_describe).
 *
 * Registered as test_kinds_corpus_np2 (CI, MPICH's default and the UCX
 * netmod pass of scripts/test.sh; label opencl: ctest-opencl-nvidia of
 * scripts/gpu-check.sh runs it on NVIDIA's OpenCL) and, for the GPU
 * machine, test_cuda_kinds_corpus_np2 (--require-cuda --platform pocl: the
 * MPS step).  The kinds' buffers: kinds_mem.h.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds_mem.h"
#include "ocl_watchdog.h"
#include "typegen.h"

enum { S_SEND, S_ISEND, S_SSEND, S_PERSIST, S_BSEND, NSEND };
static const char *send_name[NSEND] = {"MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Send_init+MPI_Start", "MPI_Bsend"};
enum { R_RECV, R_IRECV, R_PERSIST, R_MRECV, R_IMRECV, R_ANY, R_IANY, NRECV };
static const char *recv_name[NRECV] = {"MPI_Recv",         "MPI_Irecv",         "MPI_Recv_init+MPI_Start",
                                       "MPI_Mprobe+MPI_Mrecv", "MPI_Improbe+MPI_Imrecv", "MPI_Recv(MPI_ANY_SOURCE)",
                                       "MPI_Irecv(MPI_ANY_SOURCE)"};

static int rank, peer, require_cuda, verbose;
static unsigned char *hin, *hinit, *hexp, *href, *hout;
static long n_msgs, n_bad, per_pair[NKIND][NKIND];

/* ---- the cases ---------------------------------------------------------- */

typedef struct kcase {
    long idx;
    const char *what; /* the edge shape's name, or "random" */
    MPI_Datatype t;   /* committed */
    int count, overlap, send, recv, sender;
    long long lo, hi, off, alloc, total; /* [lo, hi): bytes count x t covers, from the pointer */
    unsigned seed;
} kcase_t;

static void fill(unsigned char *p, long long n, unsigned seed)
{
    uint64_t s = seed;
    for (long long i = 0; i < n; i++) p[i] = (unsigned char)(mpiacc_test_rand(&s) >> 56);
}

/* The receiver's expectation: href (the whole buffer) and hexp (packed). */
static void oracle(const kcase_t *c)
{
    int pos = 0;
    fill(hin, c->alloc, c->seed);
    fill(hinit, c->alloc, c->seed ^ 0x5a5a5a5au);
    memcpy(href, hinit, (size_t)c->alloc);
    if (c->total == 0) return; /* nothing moves (and MPI_Pack is not asked) */
    MPIACC_TEST_MPI_OK(MPI_Pack(hin + c->off, c->count, c->t, hexp, (int)c->total, &pos, MPI_COMM_SELF));
    pos = 0;
    if (c->overlap) memcpy(href, hexp, (size_t)c->total);
    else MPIACC_TEST_MPI_OK(MPI_Unpack(hexp, (int)c->total, &pos, href + c->off, c->count, c->t, MPI_COMM_SELF));
}

static int do_send(const kcase_t *c, const void *p, MPI_Datatype st, int tag)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc;
    switch (c->send) {
    case S_SEND: return MPI_Send(p, c->count, st, peer, tag, MPI_COMM_WORLD);
    case S_SSEND: return MPI_Ssend(p, c->count, st, peer, tag, MPI_COMM_WORLD);
    case S_BSEND: return MPI_Bsend(p, c->count, st, peer, tag, MPI_COMM_WORLD);
    case S_ISEND: rc = MPI_Isend(p, c->count, st, peer, tag, MPI_COMM_WORLD, &r); break;
    default:
        rc = MPI_Send_init(p, c->count, st, peer, tag, MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS) rc = MPI_Start(&r);
    }
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    return rc;
}

static int do_recv(const kcase_t *c, void *p, int n, MPI_Datatype rt, int tag, MPI_Status *st)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Message m = MPI_MESSAGE_NULL;
    int rc, flag = 0;
    switch (c->recv) {
    case R_RECV: return MPI_Recv(p, n, rt, peer, tag, MPI_COMM_WORLD, st);
    case R_ANY: return MPI_Recv(p, n, rt, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, st);
    case R_MRECV:
        rc = MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, st);
        return rc != MPI_SUCCESS ? rc : MPI_Mrecv(p, n, rt, &m, st);
    case R_IMRECV:
        while ((rc = MPI_Improbe(peer, tag, MPI_COMM_WORLD, &flag, &m, st)) == MPI_SUCCESS && !flag) continue;
        if (rc == MPI_SUCCESS) rc = MPI_Imrecv(p, n, rt, &m, &r);
        break;
    case R_IRECV: rc = MPI_Irecv(p, n, rt, peer, tag, MPI_COMM_WORLD, &r); break;
    case R_IANY: rc = MPI_Irecv(p, n, rt, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r); break;
    default:
        rc = MPI_Recv_init(p, n, rt, peer, tag, MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS) rc = MPI_Start(&r);
    }
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, st);
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    return rc;
}

/* The one predefined datatype t is made of (MPI_DATATYPE_NULL: several,
 * a pair type among them, or none). */
static MPI_Datatype one_element(MPI_Datatype t)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    MPI_Datatype one = MPI_DATATYPE_NULL, *sub;
    MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED)
        return t == MPI_FLOAT_INT || t == MPI_DOUBLE_INT || t == MPI_LONG_INT || t == MPI_SHORT_INT ||
                       t == MPI_2INT || t == MPI_LONG_DOUBLE_INT
                   ? MPI_DATATYPE_NULL
                   : t;
    int *ints = malloc(sizeof *ints * (size_t)(ni + 1));
    MPI_Aint *addrs = malloc(sizeof *addrs * (size_t)(na + 1));
    MPI_Count *counts = malloc(sizeof *counts * (size_t)(nc + 1));
    sub = malloc(sizeof *sub * (size_t)(nd + 1));
    MPI_Type_get_contents_c(t, ni, na, nc, nd, ints, addrs, counts, sub);
    for (MPI_Count i = 0; i < nd; i++) {
        MPI_Datatype o = one_element(sub[i]);
        one = i == 0 || o == one ? o : MPI_DATATYPE_NULL;
        if (tg_combiner(sub[i]) != MPI_COMBINER_NAMED) MPI_Type_free(&sub[i]);
    }
    free(ints), free(addrs), free(counts), free(sub);
    return one;
}

/* One message of case c from kind sk to kind rk; returns the mismatches. */
static int exchange(const kcase_t *c, int sk, int rk)
{
    static char what[1600];
    char tree[1200];
    const int tag = (int)(c->idx % 30000);
    int bad = 0, rc;
    MPI_Datatype xt;
    void *p;
    tg_describe(c->t, tree, sizeof tree);
    snprintf(what, sizeof what, "%s -> %s, %s -> %s, %s type #%ld, count %d%s: %s", kind_name[sk], kind_name[rk],
             send_name[c->send], recv_name[c->recv], c->what, c->idx, c->count,
             c->overlap ? " (overlapping: received as bytes)" : "", tree);
    wd_step(what, verbose);
    if (rank == c->sender) {
        fill(hin, c->alloc, c->seed);
        kcopy(sk, dsend[sk], hin, c->alloc, 1);
        xt = side_type(sk, c->t, c->off, dsend[sk], &p);
        if ((rc = do_send(c, p, xt, tag)) != MPI_SUCCESS) {
            fprintf(stderr, "FAILED rank %d: %s: send: %s\n", rank, what, mpiacc_test_mpi_error(rc));
            bad++;
        }
    } else {
        MPI_Status st, ref;
        MPI_Count n = -1, nref = -1, bytes = -1;
        int cnt = -1, cref = -1;
        oracle(c);
        kcopy(rk, drecv[rk], hinit, c->alloc, 1);
        if (c->overlap) xt = side_type(rk, MPI_BYTE, 0, drecv[rk], &p);
        else xt = side_type(rk, c->t, c->off, drecv[rk], &p);
        st.MPI_SOURCE = st.MPI_TAG = -7;
        rc = do_recv(c, p, c->overlap ? (int)c->total : c->count, xt, tag, &st);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "FAILED rank %d: %s: receive: %s\n", rank, what, mpiacc_test_mpi_error(rc));
            bad++;
        } else {
            kcopy(rk, drecv[rk], hout, c->alloc, 0);
            for (long long i = 0; i < c->alloc; i++)
                if (hout[i] != href[i]) {
                    fprintf(stderr, "FAILED rank %d: %s: byte %lld from the pointer is 0x%02x, expected 0x%02x (the "
                            "datatype covers [%lld, %lld))\n", rank, what, i - c->off, hout[i], href[i], c->lo, c->hi);
                    bad++;
                    break;
                }
            /* what MPI says for the bytes sent, on the same datatype: the
             * status holds c->total bytes, MPI_Get_count and MPI_Get_elements
             * give what they give for a status of that many bytes.  (MPICH
             * 5.0.2's own MPI_Get_elements, with or without mpiacc, dies of
             * SIGFPE or asserts on datatypes of several element types, pair
             * types included, and on darrays: asked of the others only.) */
            PMPI_Status_set_elements_x(&ref, MPI_BYTE, c->total);
            MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
            MPI_Get_count(&st, xt, &cnt);
            MPI_Get_count(&ref, xt, &cref);
            if (one_element(c->t) != MPI_DATATYPE_NULL && !strstr(tree, "darray(")) {
                MPI_Get_elements_x(&st, xt, &n);
                MPI_Get_elements_x(&ref, xt, &nref);
            }
            if (st.MPI_SOURCE != peer || st.MPI_TAG != tag || bytes != c->total || cnt != cref || n != nref) {
                fprintf(stderr, "FAILED rank %d: %s: status source %d tag %d, %lld bytes (sent: %lld), MPI_Get_count "
                        "%d (MPI: %d), MPI_Get_elements_x %lld (MPI: %lld)\n", rank, what, st.MPI_SOURCE, st.MPI_TAG,
                        (long long)bytes, c->total, cnt, cref, (long long)n, (long long)nref);
                bad++;
            }
        }
    }
    if (xt != c->t && xt != MPI_BYTE) MPI_Type_free(&xt);
    return bad;
}

/* The explicit edge shapes (committed): t, count, name. */
typedef struct edge {
    const char *name;
    MPI_Datatype t;
    int count;
} edge_t;

static int edges(edge_t *e)
{
    MPI_Datatype z, s0, mixed, tmp;
    int n = 0;
    /* size 0, extent 48 (the issue's: a host receive of 3 of it died of SIGFPE) */
    MPI_Type_contiguous(0, MPI_INT, &z);
    MPI_Type_create_resized(z, 0, 48, &s0);
    MPI_Type_free(&z);
    MPI_Type_commit(&s0);
    for (int c = 0; c < 3; c++) e[n++] = (edge_t){"size 0 extent 48", s0, c == 2 ? 3 : c};
    MPI_Type_dup(s0, &tmp);
    e[n++] = (edge_t){"dup of size 0 extent 48", tmp, 2};
    MPI_Type_create_struct(2, (int[]){0, 0}, (MPI_Aint[]){0, 40}, (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &z);
    MPI_Type_create_resized(z, -8, 48, &tmp);
    MPI_Type_free(&z);
    e[n++] = (edge_t){"struct of empty blocks, lb -8 extent 48", tmp, 2};
    MPI_Type_vector(3, 0, 4, MPI_INT, &tmp);
    e[n++] = (edge_t){"vector of empty blocks", tmp, 2};
    MPI_Type_contiguous(3, s0, &tmp);
    e[n++] = (edge_t){"contiguous of size 0", tmp, 2};
    e[n++] = (edge_t){"MPI_INT count 0", MPI_INT, 0};
    MPI_Type_vector(2, 1, 3, MPI_INT, &tmp);
    e[n++] = (edge_t){"vector count 0", tmp, 0};
    MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){-24, 8}, MPI_DOUBLE, &tmp);
    e[n++] = (edge_t){"negative displacement", tmp, 2};
    MPI_Type_create_hvector(3, 1, -16, MPI_INT, &tmp);
    e[n++] = (edge_t){"negative stride", tmp, 2};
    MPI_Type_vector(2, 1, 3, MPI_INT, &z);
    MPI_Type_create_resized(z, -4, 40, &tmp);
    MPI_Type_free(&z);
    e[n++] = (edge_t){"resized lb -4 (true lb 0)", tmp, 3};
    MPI_Type_vector(4, 2, 5, MPI_INT, &tmp);
    e[n++] = (edge_t){"holes", tmp, 2};
    MPI_Type_indexed(2, (int[]){2, 2}, (int[]){0, 1}, MPI_INT, &tmp);
    e[n++] = (edge_t){"overlapping blocks", tmp, 2};
    MPI_Type_vector(3, 2, 1, MPI_INT, &tmp);
    e[n++] = (edge_t){"overlapping vector", tmp, 1};
    MPI_Type_create_struct(6, (int[]){1, 1, 1, 1, 1, 2}, (MPI_Aint[]){0, 8, 16, 24, 36, 40},
                           (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_INT64_T, MPI_FLOAT, MPI_INT}, &z);
    MPI_Type_create_resized(z, 0, 56, &mixed);
    MPI_Type_free(&z);
    e[n++] = (edge_t){"struct of mixed types", mixed, 3};
    MPI_Type_create_struct(3, (int[]){1, 2, 1}, (MPI_Aint[]){0, 48, 64}, (MPI_Datatype[]){s0, MPI_INT, MPI_DOUBLE},
                           &tmp);
    e[n++] = (edge_t){"struct with a size-0 member", tmp, 2};
    MPI_Type_contiguous(0, MPI_INT, &z);
    MPI_Type_create_resized(z, 0, (MPI_Aint)1 << 40, &tmp);
    MPI_Type_free(&z);
    e[n++] = (edge_t){"size 0 extent 2^40", tmp, 1};
    MPI_Type_create_resized(MPI_INT, 0, 1 << 18, &tmp);
    e[n++] = (edge_t){"large extent (256 KiB)", tmp, 3};
    MPI_Type_create_hvector(2, 4, 1 << 20, MPI_DOUBLE, &tmp);
    e[n++] = (edge_t){"large stride (1 MiB)", tmp, 1};
    e[n++] = (edge_t){"pair type", MPI_DOUBLE_INT, 3};
    for (int i = 0; i < n; i++)
        if (tg_combiner(e[i].t) != MPI_COMBINER_NAMED && (i == 0 || e[i].t != e[i - 1].t)) MPI_Type_commit(&e[i].t);
    return n;
}

/* Fills the layout of c (t and count set); 0 when too large for the buffers. */
static int place(kcase_t *c, uint64_t *rs)
{
    MPI_Count lo, hi, size;
    tg_bounds(c->t, c->count, &lo, &hi);
    MPI_Type_size_c(c->t, &size);
    c->total = (long long)(size * c->count);
    c->lo = (long long)lo;
    c->hi = (long long)hi;
    c->off = (long long)(mpiacc_test_rand(rs) % 8) - (lo < 0 ? lo : 0);
    c->alloc = c->off + (hi > 0 ? (long long)hi : 0) + 16;
    c->overlap = c->total > 0 && tg_overlaps(c->t, c->count);
    return c->alloc <= MAXBUF && c->total <= MAXBUF;
}

/* Every pairing for case c. */
static void run_case(kcase_t *c, long *msg)
{
    for (int sk = 0; sk < NKIND; sk++)
        for (int rk = 0; rk < NKIND; rk++) {
            if (!usable[sk] || !usable[rk]) continue;
            c->send = (int)(*msg % NSEND);
            c->recv = (int)((*msg / NSEND) % NRECV);
            c->sender = (int)((*msg / 3) % 2);
            c->seed = c->seed * 2654435761u + 12345u;
            n_bad += exchange(c, sk, rk);
            per_pair[sk][rk]++;
            (*msg)++;
            n_msgs++;
        }
}

static void corpus(void **state)
{
    const uint64_t seed = mpiacc_test_seed();
    const long nrand = tg_corpus_size(16, 300);
    tg_src_t src = {.state = seed ^ 0x36ull, .large = 1, .max_size = 1 << 12, .max_span = 1 << 16};
    uint64_t rs = seed ^ 0x9e37ull;
    edge_t e[32];
    int ne = edges(e), bad = 0;
    long msg = 0, idx = 0;
    double t0 = MPI_Wtime();
    (void)state;
    for (int i = 0; i < ne; i++, idx++) {
        kcase_t c = {.idx = idx, .what = e[i].name, .t = e[i].t, .count = e[i].count, .seed = (unsigned)(seed + idx)};
        if (!place(&c, &rs)) fail_msg("edge shape '%s' does not fit the test's buffers", c.what);
        run_case(&c, &msg);
    }
    for (int i = 0; i < ne; i++)
        if (tg_combiner(e[i].t) != MPI_COMBINER_NAMED && (i == ne - 1 || e[i].t != e[i + 1].t)) MPI_Type_free(&e[i].t);
    for (long i = 0; i < nrand; i++, idx++) {
        kcase_t c = {.idx = idx, .what = "random", .count = 1 + (int)(mpiacc_test_rand(&rs) % 3),
                     .seed = (unsigned)(seed + idx)};
        c.t = tg_make(&src, (int)(1 + i % 4));
        if (tg_combiner(c.t) != MPI_COMBINER_NAMED) MPIACC_TEST_MPI_OK(MPI_Type_commit(&c.t));
        if (place(&c, &rs)) run_case(&c, &msg);
        tg_free(&c.t);
    }
    MPI_Allreduce(MPI_IN_PLACE, &n_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("kinds_corpus: %ld datatypes (%d edge shapes, %ld random), %ld messages in %.2f s, seed %llu\n", idx,
               ne, nrand, n_msgs, MPI_Wtime() - t0, (unsigned long long)seed);
        for (int sk = 0; sk < NKIND; sk++)
            for (int rk = 0; rk < NKIND; rk++)
                if (per_pair[sk][rk]) printf("  %-10s -> %-10s %4ld\n", kind_name[sk], kind_name[rk], per_pair[sk][rk]);
    }
    bad = (int)n_bad;
    if (bad) fail_msg("%d mismatches (the FAILED lines above name the pairing, the calls and the datatype)", bad);
}

static void nothing_op(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in, (void)inout, (void)len, (void)t;
}

/* Every other point-to-point call, and collectives, with a datatype of
 * size 0 and extent 48 (count 3), on host memory, untagged and tagged:
 * nothing written, the status empty; a longer message truncated as MPI
 * truncates it; an uncommitted one refused as MPI refuses it.  (MPICH's UCX
 * netmod died of SIGFPE in each receive before issue 36.) */
static void empty_calls(void **state)
{
    MPI_Datatype z, s0, tags[2], u;
    MPI_Request r[2];
    MPI_Status st;
    unsigned char buf[256], keep[256];
    void *ptr;
    int cnt = -1, cls, one = 1;
    MPI_Op nothing;
    (void)state;
    MPI_Op_create(nothing_op, 1, &nothing);
    MPI_Type_contiguous(0, MPI_INT, &z);
    MPI_Type_create_resized(z, 0, 48, &s0);
    MPI_Type_commit(&s0);
    tags[0] = s0;
    tags[1] = side_type(K_HOSTTAG, s0, 0, buf, &ptr);
    fill(keep, sizeof keep, 36);
    for (int i = 0; i < 2; i++) {
        MPI_Datatype t = tags[i];
        memcpy(buf, keep, sizeof buf);
        MPIACC_TEST_MPI_OK(MPI_Sendrecv(buf, 3, t, peer, 1, buf, 3, t, peer, 1, MPI_COMM_WORLD, &st));
        MPIACC_TEST_MPI_OK(MPI_Sendrecv_replace(buf, 3, t, peer, 2, peer, 2, MPI_COMM_WORLD, &st));
        MPIACC_TEST_MPI_OK(MPI_Isendrecv(buf, 3, t, peer, 3, buf, 3, t, peer, 3, MPI_COMM_WORLD, &r[0]));
        MPIACC_TEST_MPI_OK(MPI_Wait(&r[0], &st));
        MPIACC_TEST_MPI_OK(MPI_Isendrecv_replace(buf, 3, t, peer, 4, peer, 4, MPI_COMM_WORLD, &r[0]));
        MPIACC_TEST_MPI_OK(MPI_Wait(&r[0], &st));
        MPIACC_TEST_MPI_OK(MPI_Irecv(buf, 3, t, peer, 5, MPI_COMM_WORLD, &r[0]));
        MPIACC_TEST_MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Rsend(buf, 3, t, peer, 5, MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Wait(&r[0], &st));
        MPIACC_TEST_MPI_OK(MPI_Issend(buf, 3, t, peer, 6, MPI_COMM_WORLD, &r[1]));
        MPIACC_TEST_MPI_OK(MPI_Recv(buf, 3, t, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &st));
        MPIACC_TEST_MPI_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        MPIACC_TEST_MPI_OK(MPI_Get_count(&st, t, &cnt));
        assert_int_equal(cnt, 0);
        assert_int_equal(st.MPI_SOURCE, peer);
        assert_memory_equal(buf, keep, sizeof buf);
        /* a message of one int into 3 x t: MPI's truncation */
        MPIACC_TEST_MPI_OK(MPI_Isend(&one, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &r[1]));
        cls = MPI_Recv(buf, 3, t, peer, 7, MPI_COMM_WORLD, &st);
        MPI_Error_class(cls, &cls);
        assert_int_equal(cls, MPI_ERR_TRUNCATE);
        MPIACC_TEST_MPI_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        /* collectives receive with the datatype too (MPICH's UCX netmod
         * died in each of these); a reduction with an operation of ours */
        MPIACC_TEST_MPI_OK(MPI_Allgather(buf, 3, t, buf, 3, t, MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Gather(buf, 3, t, buf, 3, t, 0, MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Scatter(buf, 3, t, buf, 3, t, 1, MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Alltoall(buf, 3, t, buf, 3, t, MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Gatherv(buf, 3, t, buf, (int[]){3, 3}, (int[]){0, 3}, t, 1, MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Alltoallw(buf, (int[]){3, 3}, (int[]){0, 0}, (MPI_Datatype[]){t, t}, buf,
                                         (int[]){3, 3}, (int[]){0, 0}, (MPI_Datatype[]){t, t}, MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Iallgather(buf, 3, t, buf, 3, t, MPI_COMM_WORLD, &r[0]));
        MPIACC_TEST_MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        MPIACC_TEST_MPI_OK(MPI_Reduce(buf, buf, 3, t, nothing, 0, MPI_COMM_WORLD));
        MPIACC_TEST_MPI_OK(MPI_Scan(buf, buf, 3, t, nothing, MPI_COMM_WORLD));
        assert_memory_equal(buf, keep, sizeof buf);
        /* persistent collectives keep their arguments: refused where the
         * engine would die (MPICH's UCX netmod), MPI's elsewhere */
        cls = MPI_Allgather_init(buf, 3, t, buf, 3, t, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Error_class(cls, &cls);
        assert_int_equal(cls, mpiacc_core_wildcard_probe ? MPI_ERR_TYPE : MPI_SUCCESS);
        if (cls == MPI_SUCCESS) {
            MPIACC_TEST_MPI_OK(MPI_Start(&r[0]));
            MPIACC_TEST_MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
            MPIACC_TEST_MPI_OK(MPI_Request_free(&r[0]));
        }
    }
    /* uncommitted: MPI's error, not a message */
    MPI_Type_create_resized(z, 0, 48, &u);
    cls = MPI_Send(buf, 3, u, peer, 8, MPI_COMM_WORLD);
    MPI_Error_class(cls, &cls);
    assert_int_equal(cls, MPI_ERR_TYPE);
    MPI_Type_free(&u);
    MPI_Op_free(&nothing);
    MPI_Type_free(&tags[1]);
    MPI_Type_free(&s0);
    MPI_Type_free(&z);
}

int main(int argc, char **argv)
{
    const char *usage = "usage: mpiexec -n 2 %s [--platform NAME] [--require-cuda]\n"
                        "  a datatype corpus between every pairing of buffer kinds (see the source's header)\n";
    int size, fails;
    static char bsend_buf[2 * MAXBUF + 4096];
    const struct CMUnitTest tests[] = {cmocka_unit_test(corpus), cmocka_unit_test(empty_calls)};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--platform") && i + 1 < argc) setenv("MPIACC_TEST_OPENCL_PLATFORM", argv[++i], 1);
        else if (!strcmp(argv[i], "--require-cuda")) require_cuda = 1;
    }
    mpiacc_test_init(&argc, &argv, usage, &rank, &size, 2, NULL);
    verbose = getenv("MPIACC_TEST_VERBOSE") && *getenv("MPIACC_TEST_VERBOSE");
    if (size != 2) mpiacc_test_skip_all("runs on exactly 2 ranks, got %d", size);
    peer = 1 - rank;
    wd_arm(argv[0], rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    hin = malloc(MAXBUF), hinit = malloc(MAXBUF), hexp = malloc(MAXBUF), href = malloc(MAXBUF), hout = malloc(MAXBUF);
    kinds_setup(rank, require_cuda);
    MPI_Buffer_attach(bsend_buf, sizeof bsend_buf);
    fails = MPIACC_TEST_RUN("kinds_corpus", tests, NULL, NULL);
    {
        void *b;
        int bs;
        MPI_Buffer_detach(&b, &bs);
    }
    kinds_teardown();
    free(hin), free(hinit), free(hexp), free(href), free(hout);
    return mpiacc_test_end(fails);
}
