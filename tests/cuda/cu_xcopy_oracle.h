/* SPDX-License-Identifier: BSD-3-Clause */
/* cu_xcopy_oracle.h: the MPI_Pack / MPI_Unpack oracle of a layout-to-layout
 * copy (tests of cuda_xcopy.cu and of the IPC import). */
#ifndef CU_XCOPY_ORACLE_H_INCLUDED
#define CU_XCOPY_ORACLE_H_INCLUDED

#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* The receive buffer after packed bytes [first, last) of cs x S at `src`
 * have been copied into cd x D at dst_img + doff: exp (dbytes bytes)
 * receives dst_img with exactly those bytes replaced.  Built from two
 * MPI_Unpack calls: the data, and a mask marking the range's packed bytes.
 * Returns an MPI error code. */
static inline int cu_xc_expect(const void *src, MPI_Datatype S, int cs, MPI_Datatype D, int cd, long long first,
                               long long last, const unsigned char *dst_img, unsigned char *exp, long long dbytes,
                               long long doff)
{
    int ss = 0, ds = 0, pos = 0, err;
    long long n;
    unsigned char *pk = NULL, *mk = NULL, *full = NULL, *mask = NULL;
    MPI_Type_size(S, &ss);
    MPI_Type_size(D, &ds);
    n = (long long)cs * ss > (long long)cd * ds ? (long long)cs * ss : (long long)cd * ds;
    pk = calloc((size_t)n + 1, 1), mk = calloc((size_t)n + 1, 1);
    full = malloc((size_t)dbytes + 1), mask = calloc((size_t)dbytes + 1, 1);
    if (!pk || !mk || !full || !mask) {
        err = MPI_ERR_NO_MEM;
        goto out;
    }
    if ((err = MPI_Pack(src, cs, S, pk, (int)n + 1, &pos, MPI_COMM_SELF)) != MPI_SUCCESS) goto out;
    memcpy(full, dst_img, (size_t)dbytes);
    pos = 0;
    if ((err = MPI_Unpack(pk, (int)n + 1, &pos, full + doff, cd, D, MPI_COMM_SELF)) != MPI_SUCCESS) goto out;
    for (long long p = first; p < last; p++) mk[p] = 1;
    pos = 0;
    if ((err = MPI_Unpack(mk, (int)n + 1, &pos, mask + doff, cd, D, MPI_COMM_SELF)) != MPI_SUCCESS) goto out;
    for (long long i = 0; i < dbytes; i++) exp[i] = mask[i] ? full[i] : dst_img[i];
out:
    free(pk), free(mk), free(full), free(mask);
    return err;
}

/* Bytes [*lo, *hi) relative to the buffer that count x t touch. */
static inline void cu_xc_span(MPI_Datatype t, int count, long long *lo, long long *hi)
{
    MPI_Aint tlb, text, lb, ext;
    long long c;
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_get_extent(t, &lb, &ext);
    c = (long long)(count - 1) * ext;
    *lo = tlb + (c < 0 ? c : 0);
    *hi = tlb + text + (c > 0 ? c : 0);
}

/* Whether count x t writes some byte twice (erroneous as a receive layout:
 * the result would depend on the order of the writes). */
static inline int cu_xc_overlaps(MPI_Datatype t, int count)
{
    long long lo, hi, n = 0;
    int size = 0, pos = 0, r = 1;
    unsigned char *ones, *buf;
    MPI_Type_size(t, &size);
    cu_xc_span(t, count, &lo, &hi);
    ones = malloc((size_t)size * (size_t)count + 1), buf = calloc((size_t)(hi - lo) + 1, 1);
    if (ones && buf) {
        memset(ones, 1, (size_t)size * (size_t)count + 1);
        if (MPI_Unpack(ones, size * count + 1, &pos, buf - lo, count, t, MPI_COMM_SELF) == MPI_SUCCESS) {
            for (long long i = 0; i < hi - lo; i++) n += buf[i];
            r = n != (long long)size * count;
        }
    }
    free(ones), free(buf);
    return r;
}

#endif
