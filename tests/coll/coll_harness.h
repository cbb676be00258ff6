/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_harness.h: runs one collective twice from the same initial buffers —
 * the oracle with the plain datatype on every rank (MPI itself), and the
 * case under test where some ranks use a tagged copy of the datatype (the
 * staged path) — and compares every rank's buffers byte for byte.  Shared
 * by the CPU-backend corpus and the threads test. */
#ifndef COLL_HARNESS_H_INCLUDED
#define COLL_HARNESS_H_INCLUDED

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "typegen.h"
#include "mpiacc.h"

/* A copy of t tagged MPIACC_BUF_HOST with an event that is set (the pool's
 * CPU backend, so the collectives' staged and device paths run on host). */
#define tag_host(t_) mpiacc_test_host_tagged((t_), NULL)

/* The corpus tests' buffers of one case: m[0] and m[1] (send and receive
 * sides, bytes each) with values of iter and rank, m[2] and m[3] their
 * copies (the run under test starts from the oracle's initial bytes). */
static inline void four_buffers(unsigned char *m[4], size_t bytes, long iter, int rank)
{
    for (int i = 0; i < 4; i++) m[i] = malloc(bytes);
    for (size_t i = 0; i < bytes; i++) {
        uint64_t s0 = (uint64_t)iter * 977 + (uint64_t)rank, s1 = (uint64_t)iter * 1013 + (uint64_t)rank * 7;
        m[0][i] = (unsigned char)((s0 >> (i % 7)) + i * 131 + (i >> 5));
        m[1][i] = (unsigned char)((s1 >> (i % 7)) + i * 131 + (i >> 5));
    }
    memcpy(m[2], m[0], bytes);
    memcpy(m[3], m[1], bytes);
}

enum {
    K_BCAST,
    K_GATHER,
    K_GATHERV,
    K_SCATTER,
    K_SCATTERV,
    K_ALLGATHER,
    K_ALLGATHERV,
    K_ALLTOALL,
    K_ALLTOALLV,
    K_ALLTOALLW,
    K_NALLGATHER,
    K_NALLGATHERV,
    K_NALLTOALL,
    K_NALLTOALLV,
    K_NALLTOALLW,
    K_NKINDS
};
static const char *const kind_names[K_NKINDS] = {"Bcast",
                                                 "Gather",
                                                 "Gatherv",
                                                 "Scatter",
                                                 "Scatterv",
                                                 "Allgather",
                                                 "Allgatherv",
                                                 "Alltoall",
                                                 "Alltoallv",
                                                 "Alltoallw",
                                                 "Neighbor_allgather",
                                                 "Neighbor_allgatherv",
                                                 "Neighbor_alltoall",
                                                 "Neighbor_alltoallv",
                                                 "Neighbor_alltoallw"};

/* One call's shape: counts and displacements (in extents) per block. */
typedef struct shape {
    int kind, root, form; /* form: 0 blocking, 1 nonblocking, 2 blocking _c, 3 nonblocking _c */
    int in_place;
    int n;   /* blocks per side */
    int cnt; /* scalar count */
    int counts[8], displs[8];
    MPI_Aint wdispls[8];
    MPI_Count ccounts[8];
    MPI_Aint cdispls[8];
} shape_t;

/* One of the four forms of collective B (nonblocking: I), as an
 * expression: blocking or not (nb), with the int arguments args or the
 * MPI_Count ones cargs (c); the nonblocking forms add the request req. */
#define COLL_WITH_REQ(...) (__VA_ARGS__, req)
#define COLL_FORMS(B, I, args, cargs)                                                                       \
    (c ? (nb ? MPI_##I##_c COLL_WITH_REQ cargs : MPI_##B##_c cargs)                                         \
       : (nb ? MPI_##I COLL_WITH_REQ args : MPI_##B args))

/* Posts one call of shape sh with datatype st (send) / rt (receive). */
static int coll_call(const shape_t *sh, MPI_Comm comm, void *sb, MPI_Datatype st, void *rb, MPI_Datatype rt,
                     MPI_Request *req)
{
    int nb = sh->form & 1, c = sh->form & 2, k = sh->kind, rc = MPI_SUCCESS, me;
    const void *s = sh->in_place ? MPI_IN_PLACE : sb;
    void *r = rb;
    MPI_Datatype sts[8], rts[8];
    int wd[8];
    for (int i = 0; i < 8; i++)
        sts[i] = st, rts[i] = rt, wd[i] = (int)sh->wdispls[i];
    if (sh->in_place && (k == K_SCATTER || k == K_SCATTERV)) s = sb, r = MPI_IN_PLACE;
    *req = MPI_REQUEST_NULL;
    MPI_Comm_rank(comm, &me);
#define FORMS(B, I, args, cargs) rc = COLL_FORMS(B, I, args, cargs)
    switch (k) {
    case K_BCAST:
        FORMS(Bcast, Ibcast, (rb, sh->cnt, rt, sh->root, comm), (rb, sh->cnt, rt, sh->root, comm));
        break;
    case K_GATHER:
        FORMS(Gather, Igather, (s, sh->cnt, st, r, sh->cnt, rt, sh->root, comm),
              (s, sh->cnt, st, r, sh->cnt, rt, sh->root, comm));
        break;
    case K_GATHERV:
        FORMS(Gatherv, Igatherv, (s, sh->counts[me], st, r, sh->counts, sh->displs, rt, sh->root, comm),
              (s, sh->counts[me], st, r, sh->ccounts, sh->cdispls, rt, sh->root, comm));
        break;
    case K_SCATTER:
        FORMS(Scatter, Iscatter, (s, sh->cnt, st, r, sh->cnt, rt, sh->root, comm),
              (s, sh->cnt, st, r, sh->cnt, rt, sh->root, comm));
        break;
    case K_SCATTERV:
        FORMS(Scatterv, Iscatterv, (s, sh->counts, sh->displs, st, r, sh->counts[me], rt, sh->root, comm),
              (s, sh->ccounts, sh->cdispls, st, r, sh->counts[me], rt, sh->root, comm));
        break;
    case K_ALLGATHER:
        FORMS(Allgather, Iallgather, (s, sh->cnt, st, r, sh->cnt, rt, comm), (s, sh->cnt, st, r, sh->cnt, rt, comm));
        break;
    case K_ALLGATHERV:
    case K_NALLGATHERV: {
        int rk = me;
        if (k == K_ALLGATHERV)
            FORMS(Allgatherv, Iallgatherv, (s, sh->counts[rk], st, r, sh->counts, sh->displs, rt, comm),
                  (s, sh->counts[rk], st, r, sh->ccounts, sh->cdispls, rt, comm));
        else
            FORMS(Neighbor_allgatherv, Ineighbor_allgatherv, (s, sh->cnt, st, r, sh->counts, sh->displs, rt, comm),
                  (s, sh->cnt, st, r, sh->ccounts, sh->cdispls, rt, comm));
        break;
    }
    case K_ALLTOALL:
        FORMS(Alltoall, Ialltoall, (s, sh->cnt, st, r, sh->cnt, rt, comm), (s, sh->cnt, st, r, sh->cnt, rt, comm));
        break;
    case K_ALLTOALLV:
        FORMS(Alltoallv, Ialltoallv, (s, sh->counts, sh->displs, st, r, sh->counts, sh->displs, rt, comm),
              (s, sh->ccounts, sh->cdispls, st, r, sh->ccounts, sh->cdispls, rt, comm));
        break;
    case K_ALLTOALLW:
        FORMS(Alltoallw, Ialltoallw, (s, sh->counts, wd, sts, r, sh->counts, wd, rts, comm),
              (s, sh->ccounts, sh->wdispls, sts, r, sh->ccounts, sh->wdispls, rts, comm));
        break;
    case K_NALLGATHER:
        FORMS(Neighbor_allgather, Ineighbor_allgather, (s, sh->cnt, st, r, sh->cnt, rt, comm),
              (s, sh->cnt, st, r, sh->cnt, rt, comm));
        break;
    case K_NALLTOALL:
        FORMS(Neighbor_alltoall, Ineighbor_alltoall, (s, sh->cnt, st, r, sh->cnt, rt, comm),
              (s, sh->cnt, st, r, sh->cnt, rt, comm));
        break;
    case K_NALLTOALLV:
        FORMS(Neighbor_alltoallv, Ineighbor_alltoallv, (s, sh->counts, sh->displs, st, r, sh->counts, sh->displs, rt, comm),
              (s, sh->ccounts, sh->cdispls, st, r, sh->ccounts, sh->cdispls, rt, comm));
        break;
    case K_NALLTOALLW:
        FORMS(Neighbor_alltoallw, Ineighbor_alltoallw, (s, sh->counts, sh->wdispls, sts, r, sh->counts, sh->wdispls, rts, comm),
              (s, sh->ccounts, sh->wdispls, sts, r, sh->ccounts, sh->wdispls, rts, comm));
        break;
    }
#undef FORMS
    return rc;
}

static int is_neighbor(int k)
{
    return k >= K_NALLGATHER;
}
static int rooted(int k)
{
    return k >= K_GATHER && k <= K_SCATTERV;
}

/* The same shape on every rank (rs is in step), made this rank's. */
static void make_shape(shape_t *sh, int kind, uint64_t *rs, MPI_Aint ext, int rank, int size)
{
    int P = is_neighbor(kind) ? 2 : size, base[8], at = 0;
    memset(sh, 0, sizeof *sh);
    sh->kind = kind;
    sh->n = P;
    sh->cnt = (int)(mpiacc_test_rand(rs) % 3);
    sh->root = (int)(mpiacc_test_rand(rs) % (uint64_t)size);
    sh->form = (int)(mpiacc_test_rand(rs) % 4);
    for (int i = 0; i < 8; i++)
        base[i] = is_neighbor(kind) ? sh->cnt : (int)(mpiacc_test_rand(rs) % 3);
    sh->in_place = (int)(mpiacc_test_rand(rs) % 3) == 0 && kind != K_BCAST && !is_neighbor(kind);
    if (rooted(kind) && rank != sh->root) sh->in_place = 0;
    for (int i = 0; i < P; i++) {
        /* (w forms: a gap of at least one extent, since odd blocks move by a byte) */
        int gap = (int)(mpiacc_test_rand(rs) % 2) + (kind == K_ALLTOALLW || kind == K_NALLTOALLW);
        /* alltoall(v,w): i -> j carries base[(i + j) % P], symmetric */
        sh->counts[i] = (kind == K_ALLTOALLV || kind == K_ALLTOALLW) ? base[(rank + i) % P] : base[i];
        sh->displs[i] = at + gap;
        at = sh->displs[i] + sh->counts[i];
        sh->ccounts[i] = sh->counts[i];
        sh->cdispls[i] = sh->displs[i];
        /* Alltoallw: odd blocks one byte further (no whole extent) */
        sh->wdispls[i] = sh->displs[i] * ext + (i % 2);
    }
}

/* Elements a side spans (in extents) for shape sh: the largest displs+counts. */
static int span_elems(const shape_t *sh, int nblocks)
{
    int m = sh->cnt * nblocks;
    for (int i = 0; i < sh->n; i++)
        if (sh->displs[i] + sh->counts[i] > m) m = sh->displs[i] + sh->counts[i];
    return m < 1 ? 1 : m;
}

/* A corpus case: its shape (kind, drawn from rs), *E elements of t from *lo
 * in each buffer, the four buffers (four_buffers) and the oracle's result
 * in m[0] and m[1] (MPI with t on every side); returns the bytes of each
 * buffer. */
static inline size_t coll_oracle(shape_t *sh, int kind, uint64_t *rs, MPI_Datatype t, MPI_Comm comm, long iter,
                                 int rank, int size, int *E, MPI_Count *lo, unsigned char *m[4])
{
    MPI_Aint lb, ext;
    MPI_Count hi;
    MPI_Request req;
    size_t bytes;
    MPI_Type_get_extent(t, &lb, &ext);
    make_shape(sh, kind, rs, ext, rank, size);
    *E = span_elems(sh, sh->n) + 1;
    tg_bounds(t, *E, lo, &hi);
    bytes = (size_t)(hi - *lo) + 8;
    four_buffers(m, bytes, iter, rank);
    assert_int_equal(coll_call(sh, comm, m[0] - *lo, t, m[1] - *lo, t, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    return bytes;
}

#endif
