/*
 * pack: the datatype engine.  Decodes any committed MPI datatype into an
 * internal tree, canonicalises it (TEMPI), serialises it into one contiguous
 * blob for point-based traversal (Jenkins) and packs/unpacks on the host with
 * the same traversal code the device kernels use (traverse.h).
 *
 * The analysis of a datatype is made once and cached on the datatype (an
 * attribute whose copy callback shares it with dups and whose delete
 * callback releases it).
 */
#ifndef MPIACC_PACK_H_INCLUDED
#define MPIACC_PACK_H_INCLUDED

#include <mpi.h>

#include "../core/core.h"
#include "traverse.h"

#define MPIACC_PACK_MAX_DIMS 4 /* canonical strided form, at most this many dims */

typedef struct mpiacc_pack_type {
    int refcount; /* atomic; shared by dups */

    MPI_Count size;     /* packed bytes of one element (MPI_Type_size_c)   */
    MPI_Count extent;   /* MPI extent of one element (stride between elements) */
    MPI_Count lb;       /* MPI lower bound                                 */
    MPI_Count true_lb;  /* lowest byte touched, relative to the buffer     */
    MPI_Count true_ub;  /* one past the highest byte touched               */
    int contiguous;     /* count elements starting at buf+true_lb form one
                           dense block of count*size bytes (pack = memcpy) */

    /* Canonical strided-block form (TEMPI), when `strided` is set:
     * element e (0 <= e < count) consists of, for all index tuples,
     * the `blk` contiguous bytes at
     *   buf + start + e*extent + sum_d idx[d]*strides[d], idx[d] < counts[d],
     * in packed order with idx[ndims-1] varying slowest.  counts[0] is
     * the number of blk-byte blocks in the innermost dimension... see
     * pack.c for the exact convention. */
    int strided;
    int ndims;
    MPI_Count start;
    MPI_Count blk;
    MPI_Count counts[MPIACC_PACK_MAX_DIMS];
    MPI_Count strides[MPIACC_PACK_MAX_DIMS];

    /* Point-based representation: one blob, copyable to a device verbatim,
     * read by the functions of traverse.h. */
    void *blob;
    size_t blob_bytes;
    /* Largest unit (bytes) that divides every contiguous leaf chunk and its
     * offsets: the traversal never splits a unit. */
    MPI_Count unit;

    /* Backend caches (e.g. device copy of the blob), indexed by kind;
     * released through the backend's type_forget. */
    void *backend_cache[MPIACC_KIND_MAX];
    void *backend_cache_ctx[MPIACC_KIND_MAX];
} mpiacc_pack_type_t;

/* Called from MPI_Init / MPI_Finalize (create / free the cache keyval). */
int mpiacc_pack_init(void);
void mpiacc_pack_finalize(void);

/* Returns the (cached) analysis of a committed datatype with a new
 * reference.  Errors: MPI_DATATYPE_NULL / uncommitted type -> MPI_ERR_TYPE;
 * overflow -> MPI_ERR_COUNT. */
int mpiacc_pack_type_get(MPI_Datatype type, mpiacc_pack_type_t **out);
void mpiacc_pack_type_release(mpiacc_pack_type_t *t);
/* Analyses without caching on the datatype (tests, uncached use). */
int mpiacc_pack_type_analyze(MPI_Datatype type, mpiacc_pack_type_t **out);

/* Host reference: pack packed bytes [first, last) of `count` elements of
 * the type at `inbuf` into `out` (last-first bytes); unpack is the inverse.
 * Byte-identical to MPI_Pack/MPI_Unpack (homogeneous, "native"). */
int mpiacc_pack_cpu_pack(const mpiacc_pack_type_t *t, const void *inbuf, MPI_Count count,
                         MPI_Count first, MPI_Count last, void *out);
int mpiacc_pack_cpu_unpack(const mpiacc_pack_type_t *t, void *outbuf, MPI_Count count,
                           MPI_Count first, MPI_Count last, const void *in);

#endif /* MPIACC_PACK_H_INCLUDED */
