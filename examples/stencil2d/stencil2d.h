/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stencil2d: SHOC's Stencil2D (9-point Jacobi stencil on a 2D Cartesian
 * decomposition) on mpiacc, beside the same exchange written for a
 * CUDA-aware MPI.  The driver (options, decomposition, CPU reference,
 * validation, timing, report) is backend-neutral C; a device backend (CUDA
 * or OpenCL) implements the small table st_backend_t.
 *
 * Two executables are built from these sources: stencil2d (linked with
 * mpiacc: manual, mpiacc and, with CUDA, cuda-aware variants) and
 * stencil2d-cuda-aware (CUDA and MPI only, ST_WITH_MPIACC = 0: the
 * cuda-aware variant alone, runnable on any MPICH-ABI CUDA-aware MPI).
 *
 * Matrix layout (every rank, both host and device): R = rows + 2h rows of
 * P elements (row-major), P = (cols + 2h) rounded up to a multiple of 16;
 * h = iterations per exchange = halo width.  The stencil updates every
 * point but the outermost 1-wide ring of the R x C block (C = cols + 2h);
 * columns C..P-1 are padding.
 *
 * Overlap (--overlap): the step before an exchange is split into the
 * boundary band (rows and columns 1..2h-1 from each edge: the halo the
 * stencil recomputes and the blocks the exchange sends), computed first on
 * the high-priority stream / queue that the exchange is ordered on, and the
 * interior (rows and columns 2h..R-2h-1 / C-2h-1), computed on a
 * low-priority stream / second queue while the exchange is in flight.  The
 * interior neither reads the halo nor writes anything the exchange moves.
 */
#ifndef STENCIL2D_H_INCLUDED
#define STENCIL2D_H_INCLUDED

#include <stddef.h>

#include <mpi.h>

#include "ex_common.h"

/* Phases and sides of the halo exchange: phase 0 exchanges rows with the
 * north (side 0) and south (side 1) neighbours, phase 1 exchanges columns
 * (spanning all R rows, so corners travel in two hops) with west (side 0)
 * and east (side 1). */
enum { ST_ROWS = 0, ST_COLS = 1 };

typedef struct st_grid {
    int rows, cols;            /* local interior size                          */
    int h;                     /* halo width = iterations per exchange         */
    int R, C, P;               /* rows+2h, cols+2h, padded row length          */
    int dp;                    /* 0: float, 1: double                          */
    size_t es;                 /* element size in bytes                        */
    MPI_Datatype base;         /* MPI_FLOAT or MPI_DOUBLE                      */
    double wc, wk, wd;         /* centre, cardinal and diagonal weights        */
    MPI_Comm cart;             /* 2D non-periodic Cartesian communicator       */
    int rank, nranks;          /* in cart                                      */
    int local_rank;            /* on the node (MPI_COMM_TYPE_SHARED): the device
                                * is local_rank % device count                 */
    int nbr[2][2];             /* [phase][side] neighbour or MPI_PROC_NULL     */
    long send_off[2][2];       /* element offset of the block sent to nbr      */
    long recv_off[2][2];       /* element offset of the halo received from nbr */
    int send_tag[2][2], recv_tag[2][2];
    MPI_Datatype host_type[2]; /* untagged: rows contiguous(h*P), cols vector(R,h,P) */
} st_grid_t;

/* Copy and synchronisation calls made by exchange routines (counted by the
 * backends' wrappers), to report calls per exchange. */
typedef struct st_calls {
    long copies, syncs;
} st_calls_t;
extern st_calls_t st_calls;

/* ---- device backends ---------------------------------------------------- */

typedef struct st_dev st_dev_t;

/* How step() enqueues one iteration. */
enum {
    ST_STEP_PLAIN = 0, /* the whole step on the main stream / queue (no overlap)       */
    ST_STEP_SPLIT = 1, /* boundary band on the main (high-priority) stream after the
                        * low stream's last work; interior on the low-priority stream
                        * after the previous split's boundary                          */
    ST_STEP_LOW = 2    /* the whole step on the low-priority stream after everything
                        * enqueued on the main stream so far (overlap, h > 1)          */
};

typedef struct st_backend {
    const char *name;
    /* Non-zero when a device buffer handle cannot be offset (cl_mem): the
     * mpiacc datatypes then carry the byte offsets. */
    int offsets_in_type;
    /* 1 when a device is present, 0 otherwise: *ndev devices visible to
     * the rank, the one of node-local rank local_rank (local_rank % *ndev
     * for GPUs) described in desc. */
    int (*probe)(int local_rank, char *desc, size_t len, int *ndev);
    /* Two device matrices (0 and 1) and a device copy of init (R x P, of
     * g's precision), the main stream / in-order queue (CUDA: the greatest
     * priority) and a low-priority one, a host staging matrix, kernels. */
    int (*create)(const st_grid_t *g, const void *init, st_dev_t **d);
    void (*destroy)(st_dev_t *d);
    /* Both matrices = init (device-to-device copies); blocking. */
    int (*reset)(st_dev_t *d);
    /* Blocking download of matrix buf. */
    int (*download)(st_dev_t *d, int buf, void *dst);
    /* Enqueues one stencil iteration buf -> !buf (ST_STEP_*). */
    int (*step)(st_dev_t *d, int buf, int how);
    /* Enqueues the refresh of the 1-wide ring of !buf from buf (main stream). */
    int (*ring)(st_dev_t *d, int buf);
    /* Waits for all enqueued work on both streams / queues. */
    int (*finish)(st_dev_t *d);
    /* The manual variant's exchange of matrix buf (staging through the
     * host, blocking), followed by ring(buf). */
    int (*exchange_manual)(st_dev_t *d, int buf);
    /* For the mpiacc and cuda-aware variants: the buffer argument of MPI
     * calls for matrix buf (device pointer or cl_mem), the main stream
     * (MPIACC_STREAM) or in-order queue (MPIACC_CL_QUEUE), the MPIACC_BUF_*
     * value (NULL in stencil2d-cuda-aware). */
    void *(*mpi_buf)(st_dev_t *d, int buf);
    void *(*queue)(st_dev_t *d);
    void *buf_type;
    /* cuda-aware (NULL where the backend has none, OpenCL): the exchange a
     * CUDA-aware MPI needs, in st_cuda_aware.c.  sync: blocks until the
     * main stream's work is done (counted); col_buf: contiguous device
     * buffer of R x h elements for the columns sent (dir 0) to / received
     * (dir 1) from side s; pack_cols / unpack_cols: enqueue the kernel
     * packing columns of matrix buf into the send buffers of the sides in
     * mask (bit s) / unpacking the receive buffers into its halo. */
    int (*sync)(st_dev_t *d);
    void *(*col_buf)(st_dev_t *d, int dir, int s);
    int (*pack_cols)(st_dev_t *d, int buf, int mask);
    int (*unpack_cols)(st_dev_t *d, int buf, int mask);
} st_backend_t;

const st_backend_t *st_cuda_backend(void);   /* NULL when not compiled */
const st_backend_t *st_opencl_backend(void); /* NULL when not compiled */

/* The boundary band and the interior of a split step, as rectangles
 * [i0, i0 + nr) x [j0, j0 + nc) of the R x C block (the band: up to 4,
 * top and bottom over the full width, left and right between them; the
 * interior: at most 1).  Returns the number of rectangles. */
typedef struct st_rect {
    int i0, j0, nr, nc;
} st_rect_t;
int st_band_rects(const st_grid_t *g, st_rect_t r[4]);
int st_interior_rect(const st_grid_t *g, st_rect_t *r);

/* ---- host side (st_host.c) ----------------------------------------------- */

/* Initial matrix: i*j at interior (i, j) (0-based local interior indices),
 * 0 in the halo and padding. */
void st_init_matrix(const st_grid_t *g, void *m);
/* One CPU stencil iteration src -> dst (ring and padding untouched). */
void st_cpu_step(const st_grid_t *g, const void *src, void *dst);
/* Copies the 1-wide ring of src into dst. */
void st_cpu_ring(const st_grid_t *g, const void *src, void *dst);
/* The CPU reference run: initial matrix, host exchange, iters iterations
 * with SHOC's exchange schedule; result in out (R x P). */
int st_cpu_reference(const st_grid_t *g, int iters, void *out);
/* Counts elements of the R x C block with |a-e|/|e| > thr (0 when e == 0)
 * and prints up to max_print of them; st_max_absdiff: max |a-b| over it. */
long st_compare(const st_grid_t *g, const void *a, const void *e, double thr, int max_print,
                const char *what);
double st_max_absdiff(const st_grid_t *g, const void *a, const void *b);

/* ---- exchanges ------------------------------------------------------------ */

/* Host exchange of matrix m with untagged datatypes: the MPI part of the
 * manual variant and of the CPU reference (st_exchange.c). */
int st_host_exchange(const st_grid_t *g, void *m);

/* The cuda-aware variant's exchange of matrix buf (st_cuda_aware.c): device
 * pointers and contiguous types only, the application's own column
 * pack/unpack kernels and synchronisations; followed by ring(buf). */
int st_exchange_cuda_aware(const st_grid_t *g, const st_backend_t *be, st_dev_t *d, int buf);

/* The mpiacc variant's datatypes and buffer arguments, set up once per
 * precision: [matrix][phase][side] buffers, [phase][side] datatypes
 * (st_exchange.c; stencil2d only). */
typedef struct st_mpx {
    void *sbuf[2][2][2], *rbuf[2][2][2];
    MPI_Datatype stype[2][2], rtype[2][2];
    MPI_Datatype owned[10];
    int nowned;
    int persistent;          /* --persistent: preq, started per phase */
    MPI_Request preq[2][2][4]; /* [matrix][phase]: 2 receives, then 2 sends */
} st_mpx_t;
/* so_mask: MPIACC_ORDER_STREAM on the send (bit 0) and receive (bit 1)
 * halo datatypes; persistent: the exchange's requests made once
 * (MPI_Recv_init / MPI_Send_init), each phase started with MPI_Startall. */
int st_mpx_setup(const st_grid_t *g, const st_backend_t *be, st_dev_t *d, int so_mask, int persistent,
                 st_mpx_t *x);
void st_mpx_free(st_mpx_t *x);
/* The mpiacc variant's exchange of matrix buf, followed by ring(buf). */
int st_exchange_mpiacc(const st_grid_t *g, const st_backend_t *be, st_dev_t *d, const st_mpx_t *x,
                       int buf);

#define ST_MPI(call_)                                                        \
    do {                                                                     \
        int st_rc_ = (call_);                                                \
        if (st_rc_ != MPI_SUCCESS) return ex_mpi_error(#call_, st_rc_);      \
    } while (0)

#endif
