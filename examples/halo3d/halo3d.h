/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * halo3d: a 3D halo exchange on a Cartesian communicator (MPI_Dims_create
 * over the ranks, periodic by default), the six faces described by
 * subarray datatypes, exchanged through MPI_Neighbor_alltoallw or through
 * persistent point-to-point requests, with manual staging through the host,
 * with mpiacc (tagged subarray types on the device buffer) and, with CUDA,
 * as written for a CUDA-aware MPI (own pack kernel, a synchronisation,
 * contiguous device buffers); a 7-point star stencil of radius r per
 * iteration makes the data depend on the stream/queue.  Validated
 * bit-exactly against the same exchange on host arrays.  halo3d links
 * mpiacc; halo3d-cuda-aware (H3_WITH_MPIACC = 0) is MPI and CUDA only.
 *
 * Array layout (every rank, host and device): Z x Y x X elements, x
 * fastest, X = nx + 2r, Y = ny + 2r, Z = nz + 2r; the interior is
 * [r, r+n) in each dimension.  Cartesian dimension 0 is z, 1 is y, 2 is x.
 * Face f = 2d + s (d: Cartesian dimension, s: 0 the lower side, 1 the
 * upper) is r thick in dimension d and spans the interior in the others;
 * the faces are the neighbours in MPI_Neighbor_alltoallw's order
 * (MPI_Cart_shift(d, 1): source, then destination, per dimension).
 */
#ifndef HALO3D_H_INCLUDED
#define HALO3D_H_INCLUDED

#include <stddef.h>

#include <mpi.h>

#include "ex_common.h"

enum { H3_FACES = 6 };

typedef struct h3_grid {
    int n[3];              /* interior nz, ny, nx (Cartesian dimension order) */
    int r;                 /* halo width = stencil radius                     */
    int Z, Y, X;           /* with halo                                       */
    int dp;                /* 0 float, 1 double                               */
    size_t es;             /* element size                                    */
    size_t elems;          /* Z * Y * X                                       */
    MPI_Datatype base;     /* MPI_FLOAT or MPI_DOUBLE                         */
    MPI_Comm cart;         /* 3D Cartesian communicator                       */
    int rank, nranks, local_rank;
    int coords[3];
    int nbr[H3_FACES];     /* neighbour of face f, or MPI_PROC_NULL           */
    int face_elems[H3_FACES], face_off[H3_FACES]; /* packed layout of the 6 faces */
    int face_total;
    int recv_mask;         /* bit f: face f has a neighbour                   */
    MPI_Datatype host_send[H3_FACES], host_recv[H3_FACES]; /* untagged subarrays */
} h3_grid_t;

/* Subarray geometry of face f: subsizes and starts (Cartesian order) of
 * the block sent to (recv 0) or received from (recv 1) neighbour f. */
void h3_face_box(const h3_grid_t *g, int f, int recv, int sub[3], int start[3]);

/* ---- device backends ----------------------------------------------------- */

typedef struct h3_dev h3_dev_t;

/* How step() enqueues one iteration.  Overlap splits it into the core
 * (cells at least r away from the halo: they do not read it) and the shell
 * (the rest of the interior, whose outer r-thick slabs are the next
 * exchange's faces). */
enum {
    H3_STEP_PLAIN = 0, /* the whole step on the main stream / queue                 */
    H3_STEP_CORE = 1,  /* the core on the low-priority stream / second queue, after
                        * the previous shell                                        */
    H3_STEP_SHELL = 2  /* the shell on the main (high-priority) stream, after the
                        * previous core and whatever the main stream holds (the
                        * exchange)                                                 */
};

typedef struct h3_backend {
    const char *name;
    /* 1 when a device exists: *ndev devices visible, the one this rank
     * uses described in desc. */
    int (*probe)(int local_rank, char *desc, size_t len, int *ndev);
    /* Two device arrays (0, 1) and a copy of init, the main stream / queue
     * (CUDA: the greatest priority) and a low-priority one, device face
     * buffers (send, receive) and the manual variant's pinned host ones. */
    int (*create)(const h3_grid_t *g, const void *init, h3_dev_t **d);
    void (*destroy)(h3_dev_t *d);
    int (*reset)(h3_dev_t *d);                              /* both arrays = init; blocking */
    int (*download)(h3_dev_t *d, int buf, void *dst);       /* blocking */
    int (*step)(h3_dev_t *d, int buf, int how);             /* enqueues buf -> !buf (H3_STEP_*) */
    int (*finish)(h3_dev_t *d);                             /* waits for both streams / queues */
    /* Face kernels on the main stream: pack the six faces of buf into the
     * device send buffer; unpack the device receive buffer into the halo
     * of buf (faces in recv_mask only). */
    int (*pack)(h3_dev_t *d, int buf);
    int (*unpack)(h3_dev_t *d, int buf);
    /* Manual staging: device send buffer -> host_send(), wait; host_recv()
     * -> device receive buffer (no wait: the next wait orders it). */
    int (*to_host)(h3_dev_t *d);
    int (*to_device)(h3_dev_t *d);
    void *(*host_send)(h3_dev_t *d);
    void *(*host_recv)(h3_dev_t *d);
    /* For mpiacc: the MPI buffer argument of array buf (device pointer or
     * cl_mem), the stream / queue, the MPIACC_BUF_* value (NULL without
     * mpiacc). */
    void *(*mpi_buf)(h3_dev_t *d, int buf);
    void *(*queue)(h3_dev_t *d);
    void *buf_type;
    /* cuda-aware (NULL where the backend has none): the device face
     * buffers (0 send, 1 receive), a blocking wait for the main stream
     * (counted), and an enqueued device copy of n elements from the send
     * buffer at element soff to the receive buffer at roff (a face whose
     * neighbour is this process itself: MPI is not asked to move device
     * memory to oneself). */
    void *(*dev_face_buf)(h3_dev_t *d, int dir);
    int (*sync)(h3_dev_t *d);
    int (*self_copy)(h3_dev_t *d, long roff, long soff, long n);
} h3_backend_t;

const h3_backend_t *h3_cuda_backend(void);   /* NULL when not compiled */
const h3_backend_t *h3_opencl_backend(void); /* NULL when not compiled */

/* The core of the interior (z, y, x from / count, array coordinates) and
 * the shell as up to 6 boxes. */
typedef struct h3_box {
    int z0, y0, x0, nz, ny, nx;
} h3_box_t;
int h3_core_box(const h3_grid_t *g, h3_box_t *b);
int h3_shell_boxes(const h3_grid_t *g, h3_box_t b[6]);

/* ---- host side (h3_host.c) ------------------------------------------------ */

/* Stencil weights: centre 1/2, each of the 6r arm points 2^-m (the
 * smallest m with 6r 2^-m <= 1/2), plus 1: exact products, so any
 * contraction into FMA gives the same bits on every device. */
double h3_arm_weight(int r);
void h3_init(const h3_grid_t *g, void *m);
void h3_cpu_step(const h3_grid_t *g, const void *src, void *dst);
/* Number of elements differing bitwise (whole array incl. halos), the
 * first few printed. */
long h3_compare(const h3_grid_t *g, const void *a, const void *ref, int max_print, const char *what);

/* ---- exchanges (h3_exchange.c) -------------------------------------------- */

enum { H3_A2AW = 0, H3_PERSIST = 1, H3_NMETHODS };
extern const char *const h3_method_name[H3_NMETHODS];

/* An exchange of array 0 or 1 ready to run: the datatypes and, for the
 * persistent method, the requests of each array, created once. */
typedef struct h3_xchg {
    int method;
    int staged;                              /* contiguous face buffers     */
    void *buf[2];                            /* MPI buffer arguments        */
    MPI_Datatype stype[H3_FACES], rtype[H3_FACES];
    int counts[H3_FACES];
    MPI_Aint displs[H3_FACES];
    MPI_Request req[2][2 * H3_FACES];
    int nreq;                                /* arrays with requests (1 or 2) */
    int nstart;                              /* requests per array          */
    MPI_Datatype owned[2 * H3_FACES];
    int nowned;
} h3_xchg_t;

/* Host exchange on host arrays a[0], a[1] with untagged subarrays (the
 * CPU reference; h3_exchange.c). */
int h3_xchg_host(const h3_grid_t *g, int method, void *a0, void *a1, h3_xchg_t *x);
/* mpiacc: tagged subarrays on the device arrays, the receive ones in
 * stream order when asked (h3_mpiacc.c). */
int h3_xchg_mpiacc(const h3_grid_t *g, int method, const h3_backend_t *be, h3_dev_t *d, int recv_stream_order,
                   h3_xchg_t *x);
/* Persistent requests of array b for the faces not in skip (receives, then
 * sends; x->nstart of them), buffers sbuf / rbuf + offs[f] bytes. */
int h3_persistent(const h3_grid_t *g, h3_xchg_t *x, int b, char *sbuf, char *rbuf, const MPI_Aint *offs, int skip);
/* Contiguous face buffers (host: manual staging; device: cuda-aware):
 * faces in skip_mask (bit f) are left out of MPI (count 0, no request). */
int h3_xchg_staged(const h3_grid_t *g, int method, void *send, void *recv, int skip_mask, h3_xchg_t *x);
/* One exchange of array buf (blocking). */
int h3_xchg_run(const h3_grid_t *g, h3_xchg_t *x, int buf);
void h3_xchg_free(h3_xchg_t *x);
/* Faces whose neighbour is this process (bit f). */
int h3_self_mask(const h3_grid_t *g);
/* The manual and cuda-aware variants' exchanges of array buf (x from
 * h3_xchg_staged on host / device face buffers). */
int h3_exchange_manual(const h3_grid_t *g, const h3_backend_t *be, h3_dev_t *d, h3_xchg_t *x, int buf);
int h3_exchange_cuda_aware(const h3_grid_t *g, const h3_backend_t *be, h3_dev_t *d, h3_xchg_t *x, int buf);

/* The CPU reference: iters x (exchange, step) from the initial array. */
int h3_cpu_reference(const h3_grid_t *g, int method, int iters, void *out);

#define H3_MPI(call_)                                                   \
    do {                                                                \
        int h3_rc_ = (call_);                                           \
        if (h3_rc_ != MPI_SUCCESS) return ex_mpi_error(#call_, h3_rc_); \
    } while (0)

#endif
