/* SPDX-License-Identifier: BSD-3-Clause */
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
/* Data slots on an analysis (a backend uses the slot numbered by its kind). */
#define MPIACC_PACK_NSLOTS 4

typedef struct mpiacc_pack_type {
    int refcount; /* atomic; shared by dups */

    MPI_Count size;     /* packed bytes of one element (MPI_Type_size_c)   */
    MPI_Count extent;   /* MPI extent of one element (stride between elements) */
    MPI_Count lb;       /* MPI lower bound                                 */
    MPI_Count true_lb;  /* MPI's true lower bound (MPI_Type_get_true_extent) */
    MPI_Count true_ub;  /* MPI's true lb + true extent.  Informational only:
                           MPICH's can be wider than the bytes touched (a
                           darray's true_lb can lie before its data), so no
                           transfer path uses these two; use data_lb/ub. */
    MPI_Count data_lb;  /* lowest byte one element touches, relative to the
                           buffer (min over the canonical form)            */
    MPI_Count data_ub;  /* one past the highest byte it touches (max); both
                           0 for a type of size 0                          */
    int contiguous;     /* count elements starting at buf+start form one
                           dense block of count*size bytes (pack = memcpy):
                           one run per element and size == extent (a type
                           with size 0 counts as contiguous).  Then the
                           strided form below is set with ndims 0 and
                           `start` is the offset of packed byte 0. */

    /* Canonical strided-block form (TEMPI), when `strided` is set:
     * element e (0 <= e < count) consists of, for every index tuple
     * (i0, ..., i{ndims-1}) with 0 <= id < counts[d], the `blk` contiguous
     * bytes at
     *   buf + start + e*extent + sum_d id*strides[d],
     * packed in this order: i0 fastest, then i1, ...; elements in order.
     * ndims may be 0 (one block of blk bytes at start per element).
     * Unused dimensions have counts[d] = 1, strides[d] = 0.  Nested
     * streams keep MPI's packing order (they are not sorted by stride:
     * that would change MPI_Pack's byte order). */
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
    /* Largest unit (bytes) dividing every contiguous leaf chunk, so every
     * packed range [k*unit, (k+1)*unit) is contiguous in the input
     * (== mpiacc_tv_chunk(blob); 1 for an empty type). */
    MPI_Count unit;
    /* Largest power of two <= 16 dividing unit, the extent and every input
     * offset at which a chunk starts (== mpiacc_tv_align(blob)). */
    MPI_Count align;

    /* Per-user data slots (mpiacc_pack_slot_*): read and written only
     * through those functions (atomically). */
    void *slots[MPIACC_PACK_NSLOTS];
} mpiacc_pack_type_t;

/* Called from MPI_Init / MPI_Finalize (create / free the cache keyval). */
int mpiacc_pack_init(void);
/* Drops the table of predefined datatypes' analyses (MPI_Finalize, while
 * the backends' slot free functions are registered; mpiacc_pack_finalize
 * does it too). */
void mpiacc_pack_forget_named(void);
void mpiacc_pack_finalize(void);

/* Returns the (cached) analysis of a committed datatype with a new
 * reference.  Errors: MPI_DATATYPE_NULL / uncommitted type -> MPI_ERR_TYPE;
 * overflow -> MPI_ERR_COUNT. */
int mpiacc_pack_type_get(MPI_Datatype type, mpiacc_pack_type_t **out);
void mpiacc_pack_type_release(mpiacc_pack_type_t *t);
/* One more reference to t (released with mpiacc_pack_type_release). */
static inline void mpiacc_pack_type_ref(mpiacc_pack_type_t *t)
{
    __atomic_fetch_add(&t->refcount, 1, __ATOMIC_RELAXED);
}
/* Whether MPI can use the datatype (not MPI_DATATYPE_NULL, committed), as
 * mpiacc_pack_type_get checks it, without the analysis. */
int mpiacc_pack_type_usable(MPI_Datatype type);
/* Analyses without caching on the datatype (tests, uncached use). */
int mpiacc_pack_type_analyze(MPI_Datatype type, mpiacc_pack_type_t **out);

/*
 * Data slots: a user of the engine (a backend) keeps its own data on an
 * analysis (e.g. a device copy of the blob) in slot `slot`, and registers
 * the function that frees it; the engine calls that function with the data
 * when the analysis is released, and knows nothing else about it.
 */
/* Sets (or, with NULL, clears) the function freeing slot `slot`'s data.
 * Data left in a slot with no function registered is not freed. */
void mpiacc_pack_slot_register(int slot, void (*free_fn)(void *data));
/* The data in slot `slot` (NULL: none). */
void *mpiacc_pack_slot_get(const mpiacc_pack_type_t *t, int slot);
/* Atomically replaces `expected` by `data` in slot `slot`: returns 1 when it
 * did, 0 when the slot did not hold `expected` (then nothing changed).
 * Installing is expected = NULL (two threads cannot both install); clearing
 * is data = NULL. */
int mpiacc_pack_slot_set(const mpiacc_pack_type_t *t, int slot, void *expected, void *data);
/* Every offset the traversal of an analysed type computes within one
 * element lies in [-MPIACC_PACK_OFF_MAX, MPIACC_PACK_OFF_MAX] (analysis
 * fails with MPI_ERR_COUNT otherwise), and mpiacc_pack_span admits no span
 * over MPIACC_PACK_SPAN_MAX bytes, so index arithmetic over count elements
 * never overflows 64 bits. */
#define MPIACC_PACK_OFF_MAX ((MPI_Count)1 << 61)
/* No 64-bit platform maps more than 2^57 bytes of virtual address space
 * (x86-64 with 5-level paging; others fewer): a transfer touching bytes
 * farther apart cannot describe a real buffer. */
#define MPIACC_PACK_SPAN_MAX ((MPI_Count)1 << 57)

/* The bytes [*lo, *hi), relative to the buffer, that count elements of t
 * touch (from the canonical form: data_lb/data_ub and the extent);
 * *lo = *hi = 0 when nothing is touched.  Errors (readable messages):
 * negative count or offsets past 64 bits -> MPI_ERR_COUNT; touched bytes
 * more than MPIACC_PACK_SPAN_MAX apart -> MPI_ERR_BUFFER.  Every transfer
 * path calls it before computing an address. */
int mpiacc_pack_span(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count *lo, MPI_Count *hi);
/* MPI_ERR_TYPE when count x t surely writes some byte twice as a receive
 * (more bytes than the span it touches holds: MPI says a receive's entries
 * must not overlap, and a device unpack writes them in no fixed order;
 * the callers check device buffers only).
 * Overlaps that the count of bytes cannot prove are not looked for.
 * what: NULL or a suffix of the subject (" of block 2"). */
int mpiacc_pack_check_receive(const mpiacc_pack_type_t *t, MPI_Count count, const char *what);

/* Host reference: pack packed bytes [first, last) of `count` elements of
 * the type at `inbuf` into `out` (last-first bytes); unpack is the inverse.
 * Byte-identical to MPI_Pack/MPI_Unpack (homogeneous, "native"). */
int mpiacc_pack_cpu_pack(const mpiacc_pack_type_t *t, const void *inbuf, MPI_Count count,
                         MPI_Count first, MPI_Count last, void *out);
int mpiacc_pack_cpu_unpack(const mpiacc_pack_type_t *t, void *outbuf, MPI_Count count,
                           MPI_Count first, MPI_Count last, const void *in);

#endif /* MPIACC_PACK_H_INCLUDED */
