/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opencl/ocl_rect.c: the rect strategy's plan, as pure functions (no
 * OpenCL call): the strided form of a datatype folded into rows, and the
 * list of commands (clEnqueue{Read,Write,Copy}BufferRect or a plain copy of
 * one row) moving a range of packed bytes.
 *
 * Every command obeys, on each side (the cl_mem with the data, and the
 * packed side: host memory or a packed cl_mem), rules stricter than what
 * the OpenCL 3.0 specification spells out, because implementations differ
 * in what they accept beyond the letter (NVIDIA's rejects a region whose
 * last row, counted with its full pitch, passes the end of the buffer;
 * CUDA-style 3D copies need every row and every slice inside its pitch):
 *   region[i] >= 1;  row_pitch >= region[0];  origin[0] + region[0] <= row_pitch;
 *   slice_pitch a multiple of row_pitch, >= region[1] * row_pitch;
 *   origin[1] + region[1] <= slice_pitch / row_pitch;  pitches < 2^31;
 *   on a cl_mem of `size` bytes:
 *     origin[2]*slice_pitch + origin[1]*row_pitch + origin[0] + region[2]*slice_pitch <= size
 *   (whole pitches counted; this implies the specification's exact bound).
 * A range that cannot be moved that way in a few commands is left to the
 * kernel (the plan says so before anything is enqueued).
 */
#include <string.h>

#include "ocl.h"

#define PITCH_MAX ((cl_long)0x7fffffff)

int mpiacc_ocl_rect_plan(const mpiacc_pack_type_t *t, cl_long count, mpiacc_ocl_rect_t *r)
{
    cl_long n[MPIACC_PACK_MAX_DIMS + 1], s[MPIACC_PACK_MAX_DIMS + 1];
    int nd = 0;
    if (!t->strided || t->blk <= 0 || t->ndims > MPIACC_PACK_MAX_DIMS) return 0;
    for (int d = 0; d < t->ndims; d++)
        if (t->counts[d] != 1) {
            n[nd] = t->counts[d];
            s[nd++] = t->strides[d];
        }
    if (count > 1) {
        n[nd] = count;
        s[nd++] = t->extent;
    }
    r->blk = t->blk;
    r->start = t->start;
    for (int changed = 1; changed;) {
        changed = 0;
        if (nd > 0 && s[0] == r->blk) { /* rows touch: longer rows */
            r->blk *= n[0];
            memmove(n, n + 1, (size_t)(nd - 1) * sizeof *n);
            memmove(s, s + 1, (size_t)(nd - 1) * sizeof *s);
            nd--;
            changed = 1;
        }
        for (int d = 0; d + 1 < nd && !changed; d++)
            if (s[d + 1] == n[d] * s[d]) {
                n[d] *= n[d + 1];
                memmove(n + d + 1, n + d + 2, (size_t)(nd - d - 2) * sizeof *n);
                memmove(s + d + 1, s + d + 2, (size_t)(nd - d - 2) * sizeof *s);
                nd--;
                changed = 1;
            }
    }
    if (nd > 2 || r->start < 0) return 0;
    if (nd >= 1 && s[0] < r->blk) return 0;
    if (nd == 2 && (s[1] < n[0] * s[0] || s[1] % s[0] != 0)) return 0;
    r->nd = nd;
    r->n[0] = nd >= 1 ? n[0] : 1;
    r->s[0] = nd >= 1 ? s[0] : r->blk;
    r->n[1] = nd == 2 ? n[1] : 1;
    r->s[1] = nd == 2 ? s[1] : r->n[0] * r->s[0];
    return 1;
}

/* One side of a rect command against the rules above; size < 0: host
 * memory (no bound known). */
static int side_ok(const size_t o[3], const size_t rg[3], size_t row, size_t slice, cl_long size)
{
    if (!rg[0] || !rg[1] || !rg[2] || !row || !slice) return 0;
    if ((cl_long)row > PITCH_MAX || (cl_long)slice > PITCH_MAX) return 0;
    if (row < rg[0] || o[0] + rg[0] > row) return 0;
    if (slice % row != 0 || slice < rg[1] * row || o[1] + rg[1] > slice / row) return 0;
    if (size >= 0 && (cl_long)(o[2] * slice + o[1] * row + o[0] + rg[2] * slice) > size) return 0;
    return 1;
}

int mpiacc_ocl_rcmd_ok(const mpiacc_ocl_rcmd_t *c, cl_long bufsize, cl_long pksize)
{
    if (c->linear)
        return c->bytes > 0 && c->bo[0] + c->bytes <= (size_t)bufsize &&
               (pksize < 0 || c->po[0] + c->bytes <= (size_t)pksize);
    if (pksize < 0 && (c->po[0] || c->po[1] || c->po[2])) return 0; /* host origin is 0 */
    return side_ok(c->bo, c->region, c->brow, c->bslice, bufsize) &&
           side_ok(c->po, c->region, c->prow, c->pslice, pksize);
}

typedef struct planner {
    const mpiacc_ocl_rect_t *r;
    cl_long first, bufsize, pkoff, pksize; /* pksize < 0: host packed side */
    mpiacc_ocl_rcmd_t *out;
    int n, max;
} planner_t;

/* Buffer byte of row k. */
static cl_long row_at(const planner_t *p, cl_long k)
{
    return p->r->start + (k % p->r->n[0]) * p->r->s[0] + (k / p->r->n[0]) * p->r->s[1];
}

static void common(const planner_t *p, cl_long k, mpiacc_ocl_rcmd_t *c)
{
    memset(c, 0, sizeof *c);
    c->poff = k * p->r->blk - p->first;
}

/* Adds c when it obeys the rules; 0 when it does not or the list is full. */
static int add(planner_t *p, const mpiacc_ocl_rcmd_t *c)
{
    if (p->n >= p->max || !mpiacc_ocl_rcmd_ok(c, p->bufsize, p->pksize)) return 0;
    p->out[p->n++] = *c;
    return 1;
}

/* Row k alone: a plain copy. */
static int one_row(planner_t *p, cl_long k)
{
    mpiacc_ocl_rcmd_t c;
    common(p, k, &c);
    c.linear = 1;
    c.bytes = (size_t)p->r->blk;
    c.bo[0] = (size_t)row_at(p, k);
    c.po[0] = (size_t)(p->pksize < 0 ? 0 : p->pkoff + c.poff);
    return add(p, &c);
}

/* Rows k .. k+rows-1 of one slice as the slices of a one-row region
 * {blk, 1, rows}: slice pitch = row pitch = the row stride, which keeps
 * every origin inside its pitch; the packed side is dense. */
static int z_rows(planner_t *p, cl_long k, cl_long rows, mpiacc_ocl_rcmd_t *c)
{
    cl_long base = row_at(p, k), s0 = p->r->s[0], blk = p->r->blk;
    common(p, k, c);
    c->region[0] = (size_t)blk;
    c->region[1] = 1;
    c->region[2] = (size_t)rows;
    c->brow = c->bslice = (size_t)s0;
    c->bo[0] = (size_t)(base % s0);
    c->bo[2] = (size_t)(base / s0);
    c->prow = c->pslice = (size_t)blk;
    if (p->pksize >= 0) {
        cl_long at = p->pkoff + c->poff;
        c->po[0] = (size_t)(at % blk); /* must be 0: checked by the rules */
        c->po[2] = (size_t)(at / blk);
    }
    return mpiacc_ocl_rcmd_ok(c, p->bufsize, p->pksize);
}

/* rows (>= 1) consecutive rows of one slice starting at row k. */
static int rows_cmds(planner_t *p, cl_long k, cl_long rows)
{
    mpiacc_ocl_rcmd_t c;
    if (rows == 1) return one_row(p, k);
    if (z_rows(p, k, rows, &c)) return add(p, &c);
    /* Near the end of the buffer the last row's whole pitch may not fit. */
    if (rows > 2 && z_rows(p, k, rows - 1, &c)) return add(p, &c) && one_row(p, k + rows - 1);
    if (rows == 2) return one_row(p, k) && one_row(p, k + 1);
    return 0;
}

/* `slices` whole slices from row k (first row of a slice). */
static int slab(planner_t *p, cl_long k, cl_long slices, mpiacc_ocl_rcmd_t *c)
{
    const mpiacc_ocl_rect_t *r = p->r;
    cl_long base = row_at(p, k), in = base % r->s[1];
    common(p, k, c);
    c->region[0] = (size_t)r->blk;
    c->region[1] = (size_t)r->n[0];
    c->region[2] = (size_t)slices;
    c->brow = (size_t)r->s[0];
    c->bslice = (size_t)r->s[1];
    c->bo[0] = (size_t)(in % r->s[0]);
    c->bo[1] = (size_t)(in / r->s[0]);
    c->bo[2] = (size_t)(base / r->s[1]);
    c->prow = (size_t)r->blk;
    c->pslice = (size_t)(r->blk * r->n[0]);
    if (p->pksize >= 0) {
        cl_long at = p->pkoff + c->poff, ps = r->blk * r->n[0];
        c->po[0] = (size_t)(at % ps % r->blk);
        c->po[1] = (size_t)(at % ps / r->blk);
        c->po[2] = (size_t)(at / ps);
    }
    return mpiacc_ocl_rcmd_ok(c, p->bufsize, p->pksize);
}

static int slices_cmds(planner_t *p, cl_long k, cl_long slices)
{
    mpiacc_ocl_rcmd_t c;
    cl_long n0 = p->r->n[0];
    if (slices > 1 && slab(p, k, slices, &c)) return add(p, &c);
    if (slices > 2 && slab(p, k, slices - 1, &c))
        return add(p, &c) && rows_cmds(p, k + (slices - 1) * n0, n0);
    for (cl_long i = 0; i < slices; i++) /* slice by slice, while few */
        if (!rows_cmds(p, k + i * n0, n0)) return 0;
    return 1;
}

int mpiacc_ocl_rect_cmds(const mpiacc_ocl_rect_t *r, cl_long first, cl_long last, cl_long bufsize,
                         cl_long pkoff, cl_long pksize, mpiacc_ocl_rcmd_t *out, int max)
{
    planner_t p = {r, first, bufsize, pkoff, pksize, out, 0, max};
    cl_long row, end, n0 = r->n[0];
    if (r->blk <= 0 || first % r->blk || last % r->blk || last <= first) return 0;
    row = first / r->blk;
    end = last / r->blk;
    while (row < end) {
        cl_long i0 = row % n0, rows;
        if (i0 != 0 || end - row < n0) {
            rows = n0 - i0 < end - row ? n0 - i0 : end - row;
            if (!rows_cmds(&p, row, rows)) return 0;
        } else {
            cl_long slices = (end - row) / n0;
            if (!slices_cmds(&p, row, slices)) return 0;
            rows = slices * n0;
        }
        row += rows;
    }
    return p.n;
}
