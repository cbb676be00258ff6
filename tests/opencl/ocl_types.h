/* SPDX-License-Identifier: BSD-3-Clause */
/* Datatype helpers shared by the OpenCL tests: byte patterns, the span of
 * count x datatype in a buffer, whether a datatype's packed bytes overlap,
 * random datatypes from the engine's generator placed at offset >= 0, and
 * datatypes tagged as OpenCL buffers through the public attributes. */
#ifndef MPIACC_OCL_TYPES_H_INCLUDED
#define MPIACC_OCL_TYPES_H_INCLUDED

#include <stdlib.h>

#include <mpi.h>

#include "mpiacc.h"
#include "pack/pack.h"
#include "typegen.h"

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 131u + seed * 17u + (i >> 8));
}

/* Bytes of buffer needed by count x dt (from 0; true_lb >= 0 here). */
static size_t span_of(MPI_Datatype dt, int count)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(dt, &lb, &ext);
    MPI_Type_get_true_extent(dt, &tlb, &text);
    MPI_Aint hi = tlb + text + (ext > 0 ? (count - 1) * ext : 0);
    return hi > 0 ? (size_t)hi : 1;
}

/* Whether two packed bytes of count x t come from the same buffer byte
 * (then an unpack's result depends on the order of the writes). */
static int overlapping(const mpiacc_pack_type_t *t, MPI_Count count, size_t span)
{
    unsigned char *seen = calloc(span + 1, 1);
    int ov = 0;
    for (MPI_Count p = 0; p < count * t->size && !ov; p++) ov = seen[mpiacc_tv_offset(t->blob, p)]++;
    free(seen);
    return ov;
}

/* Same, from an MPI datatype (through the engine's analysis). */
static int overlapping_dt(MPI_Datatype dt, int count)
{
    mpiacc_pack_type_t *t = NULL;
    int ov;
    if (mpiacc_pack_type_get(dt, &t) != MPI_SUCCESS) return 1;
    ov = t->size > 0 && overlapping(t, count, span_of(dt, count));
    mpiacc_pack_type_release(t);
    return ov;
}

/* A random datatype of the generator (every constructor) of nesting depth
 * <= depth, shifted by an hindexed so that count of it touch only bytes
 * >= 0; committed.  *raw receives the generator's type (free both with
 * tg_free / MPI_Type_free). */
static MPI_Datatype random_placed_depth(tg_src_t *src, int count, int depth, MPI_Datatype *raw)
{
    MPI_Datatype dt;
    MPI_Count lo, hi;
    MPI_Aint shift;
    *raw = tg_make(src, depth);
    tg_bounds(*raw, count, &lo, &hi);
    shift = lo < 0 ? (MPI_Aint)-lo : 0;
    MPI_Type_create_hindexed(1, (int[]){1}, (MPI_Aint[]){shift}, *raw, &dt);
    MPI_Type_commit(&dt);
    return dt;
}

static MPI_Datatype random_placed(tg_src_t *src, int count, MPI_Datatype *raw)
{
    return random_placed_depth(src, count, 3, raw);
}

/* A duplicate of `base` tagged as an OpenCL buffer, with the queue and the
 * event as attributes when not NULL; with neither, MPIACC_CL_QUEUE is
 * MPIACC_QUEUE_NONE (the data is complete: the tests write it with blocking
 * calls).  cl_type_noqueue: tagged with nothing else, which mpiacc refuses. */
static MPI_Datatype cl_type(MPI_Datatype base, void *queue, void *event)
{
    MPI_Datatype t;
    MPI_Type_dup(base, &t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    if (queue || !event) MPI_Type_set_attr(t, MPIACC_CL_QUEUE, queue ? queue : MPIACC_QUEUE_NONE);
    if (event) MPI_Type_set_attr(t, MPIACC_EVENT, event);
    return t;
}

static MPI_Datatype cl_type_noqueue(MPI_Datatype base)
{
    MPI_Datatype t;
    MPI_Type_dup(base, &t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL);
    return t;
}

/* n ints, tagged (cl_type) */
static MPI_Datatype cl_ints(int n, void *queue, void *event)
{
    MPI_Datatype c, t;
    MPI_Type_contiguous(n, MPI_INT, &c);
    MPI_Type_commit(&c);
    t = cl_type(c, queue, event);
    MPI_Type_free(&c);
    return t;
}

#endif
