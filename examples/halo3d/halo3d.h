/*
 * halo3d: a 3D halo exchange on a Cartesian communicator (MPI_Dims_create
 * over the ranks, periodic by default), the six faces described by
 * subarray datatypes, exchanged through MPI_Neighbor_alltoallw or through
 * persistent point-to-point requests, with manual staging through the host
 * and with mpiacc (tagged subarray types on the device buffer); a 7-point
 * star stencil of radius r per iteration makes the data depend on the
 * stream/queue.  Validated bit-exactly against the same exchange on host
 * arrays.
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

typedef struct h3_backend {
    const char *name;
    /* 1 when a device exists: *ndev devices visible, the one this rank
     * uses described in desc. */
    int (*probe)(int local_rank, char *desc, size_t len, int *ndev);
    /* Two device arrays (0, 1), a stream / in-order queue, the manual
     * variant's staging (device face buffer, pinned host send/recv). */
    int (*create)(const h3_grid_t *g, h3_dev_t **d);
    void (*destroy)(h3_dev_t *d);
    int (*upload)(h3_dev_t *d, int buf, const void *src);   /* blocking */
    int (*download)(h3_dev_t *d, int buf, void *dst);       /* blocking */
    int (*step)(h3_dev_t *d, int buf);                      /* enqueues buf -> !buf */
    int (*finish)(h3_dev_t *d);                             /* waits for the queue  */
    /* Manual staging: pack the six faces of buf on the device, copy them
     * to host_send(), wait (blocking); unpack: copy host_recv() to the
     * device and enqueue the unpack into the halo of buf (faces in
     * recv_mask only), no wait. */
    int (*pack)(h3_dev_t *d, int buf);
    int (*unpack)(h3_dev_t *d, int buf);
    void *(*host_send)(h3_dev_t *d);
    void *(*host_recv)(h3_dev_t *d);
    /* For mpiacc: the MPI buffer argument of array buf (device pointer or
     * cl_mem), the stream / queue, the MPIACC_BUF_* value. */
    void *(*mpi_buf)(h3_dev_t *d, int buf);
    void *(*queue)(h3_dev_t *d);
    void *buf_type;
} h3_backend_t;

const h3_backend_t *h3_cuda_backend(void);   /* NULL when not compiled */
const h3_backend_t *h3_opencl_backend(void); /* NULL when not compiled */

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
    int staged;                              /* manual: contiguous host faces */
    void *buf[2];                            /* MPI buffer arguments        */
    MPI_Datatype stype[H3_FACES], rtype[H3_FACES];
    int counts[H3_FACES];
    MPI_Aint displs[H3_FACES];
    MPI_Request req[2][2 * H3_FACES];
    int nreq;
    MPI_Datatype owned[2 * H3_FACES];
    int nowned;
} h3_xchg_t;

/* Host exchange on host arrays a[0], a[1] with untagged subarrays (the
 * CPU reference). */
int h3_xchg_host(const h3_grid_t *g, int method, void *a0, void *a1, h3_xchg_t *x);
/* mpiacc: tagged subarrays on the device arrays. */
int h3_xchg_mpiacc(const h3_grid_t *g, int method, const h3_backend_t *be, h3_dev_t *d, h3_xchg_t *x);
/* Manual staging: contiguous faces in the backend's host buffers. */
int h3_xchg_staged(const h3_grid_t *g, int method, void *hsend, void *hrecv, h3_xchg_t *x);
/* One exchange of array buf (blocking). */
int h3_xchg_run(const h3_grid_t *g, h3_xchg_t *x, int buf);
void h3_xchg_free(h3_xchg_t *x);

/* The CPU reference: iters x (exchange, step) from the initial array. */
int h3_cpu_reference(const h3_grid_t *g, int method, int iters, void *out);

int h3_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
int h3_mpi_error(const char *what, int rc);

#define H3_MPI(call_)                                                   \
    do {                                                                \
        int h3_rc_ = (call_);                                           \
        if (h3_rc_ != MPI_SUCCESS) return h3_mpi_error(#call_, h3_rc_); \
    } while (0)

#endif
