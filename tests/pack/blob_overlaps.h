/* SPDX-License-Identifier: BSD-3-Clause */
/* blob_overlaps.h: whether two packed bytes of count elements of an
 * analysed type share an input byte (unpacking them would depend on their
 * order), from the traversal's offsets: test_pack_oracle and the fuzzer. */
#ifndef MPIACC_TEST_BLOB_OVERLAPS_H_INCLUDED
#define MPIACC_TEST_BLOB_OVERLAPS_H_INCLUDED

#include <stdlib.h>

#include "pack/pack.h"

/* 1 overlapping, 0 not, -1 an offset outside [lo, lo + span) (a bug of
 * the analysis: the caller fails). */
static inline int blob_overlaps(const mpiacc_pack_type_t *t, MPI_Count count, MPI_Count lo, MPI_Count span)
{
    unsigned char *seen = calloc((size_t)span, 1);
    int ov = 0;
    for (MPI_Count p = 0; p < count * t->size && !ov; p++) {
        MPI_Count o = mpiacc_tv_offset(t->blob, p) - lo;
        if (o < 0 || o >= span) {
            ov = -1;
            break;
        }
        ov = seen[o]++;
    }
    free(seen);
    return ov;
}

#endif
