/* SPDX-License-Identifier: BSD-3-Clause */
/* typegen: seeded random MPI datatypes covering every constructor, nested
 * (darray, subarray with non-zero starts, hindexed_block, resized bounds
 * with lb != true_lb, negative displacements, large-count constructors),
 * for every random corpus of the tests (engine oracle, CPU backend, PoCL /
 * OpenCL, CUDA) and the fuzz target.  Values come either from a splitmix
 * stream (tests) or from fuzzer bytes (then from the splitmix stream of
 * `state` once exhausted: the fuzzer seeds it from the input).
 *
 * Quirks of MPICH 5.0.2 the generator stays clear of (the oracle would be
 * wrong, not mpiacc): MPI_LONG_DOUBLE (its 6 padding bytes are undefined in
 * MPI_Pack's output), types of size 0 (MPI_Pack raises SIGFPE on a struct
 * holding a size-0 member with a non-zero extent) and extents <= 0 made by
 * resized (MPI_Pack divides by the extent). */
#ifndef MPIACC_TYPEGEN_H_INCLUDED
#define MPIACC_TYPEGEN_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

typedef struct tg_src {
    uint64_t state;      /* splitmix state (when data is NULL or used up) */
    const uint8_t *data; /* fuzzer input, or NULL */
    size_t len, pos;
    int large;           /* nonzero: the *_c constructors may be used */
    size_t max_size;     /* larger types are replaced by a named type */
    size_t max_span;     /* bound on true extent and |true lb| */
    int extreme;         /* nonzero (fuzzer): displacements, strides,
                            extents and counts may be huge (up to 2^62) and
                            nothing is bounded */
    int used_extreme;    /* set by tg_make when it drew a huge value */
} tg_src_t;

/* Uniform-ish value in [0, n) (n >= 1). */
uint64_t tg_next(tg_src_t *s, uint64_t n);
/* Value in [lo, hi]. */
int64_t tg_range(tg_src_t *s, int64_t lo, int64_t hi);

/* A random datatype of nesting depth <= depth (not committed).  Always
 * succeeds (falls back to a named type when a constructor refuses); free it
 * with tg_free.  MPI_COMM_SELF must have MPI_ERRORS_RETURN. */
MPI_Datatype tg_make(tg_src_t *s, int depth);
void tg_free(MPI_Datatype *t);
/* Combiner of t (MPI_Type_get_envelope_c: works for large-count types),
 * whether t was made by a large-count constructor, and the combiner's
 * name, for messages. */
int tg_combiner(MPI_Datatype t);
int tg_is_large(MPI_Datatype t);
const char *tg_combiner_name(MPI_Datatype t);

/* The constructor tree of t, for failure messages, so that a failing
 * datatype can be rebuilt: "resized(lb=-8 extent=48; contiguous(0; MPI_INT))"
 * (each constructor's name, MPI_Type_get_contents' integers, addresses and
 * counts, then its constituents), cut with "..." at n - 1 characters. */
void tg_describe(MPI_Datatype t, char *buf, size_t n);

/* Bytes [*lo, *hi) that count elements of t cover according to MPI
 * (MPI_Type_get_true_extent, repeated by the extent): where a test's buffer
 * must extend.  MPICH's true bounds can be wider than the data (a darray's
 * true lb may lie before it), never narrower. */
void tg_bounds(MPI_Datatype t, MPI_Count count, MPI_Count *lo, MPI_Count *hi);

/* Whether unpacking count elements of t writes some byte twice (MPI_Unpack
 * then MPI_Pack over t's bounds do not give the bytes back; a receive type
 * must not): 1, or 0.  A type whose bounds span over 1 MiB counts as 1. */
int tg_overlaps(MPI_Datatype t, int count);

/* Number of random types a corpus test runs: MPIACC_TEST_NTYPES=n if set,
 * else `longrun` when MPIACC_TEST_LONG is set (and not "0"), else `ci`. */
long tg_corpus_size(long ci, long longrun);

#endif
