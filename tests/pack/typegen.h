/* typegen: seeded random MPI datatypes covering every constructor, for the
 * oracle test and the fuzz target.  Values come either from a splitmix
 * stream (tests) or from fuzzer bytes (then zeros once exhausted). */
#ifndef MPIACC_TYPEGEN_H_INCLUDED
#define MPIACC_TYPEGEN_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

typedef struct tg_src {
    uint64_t state;      /* splitmix state when data == NULL */
    const uint8_t *data; /* fuzzer input, or NULL */
    size_t len, pos;
    int large;           /* nonzero: the *_c constructors may be used */
    size_t max_size;     /* larger types are replaced by a named type */
    size_t max_span;     /* bound on true extent and |true lb| */
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
/* Name of the combiner of t, for messages. */
const char *tg_combiner_name(MPI_Datatype t);

#endif
