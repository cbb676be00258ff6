/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/pack_floor: the pattern floor of bench/pack (column kmin).
 *
 * For a row whose type is a 1-D strided form (nb blocks of blk bytes at a
 * constant byte stride, count 1), the floor is the kernel-only time of the
 * fastest hand-specialised pack of that access pattern (pack_kernels.h:
 * BENCH_FLOOR_WORD, _WORD4, _SPAN16, whichever apply), so kdev/kmin says
 * how far the generic kernels are from the best simple kernel for the same
 * pattern, where the 32-byte-sector roofline says little (scattered small
 * blocks).  Every variant is checked once per row against mpiacc's pack of
 * the same input before it is timed: a variant whose bytes differ makes
 * the row print BAD instead of a time.
 */
#ifndef BENCH_PACK_FLOOR_H
#define BENCH_PACK_FLOOR_H

#include <stdio.h>

#include <cuda_runtime_api.h>

#include "cuda/cuda_testhooks.h"
#include "pack_kernels.h"
#include "pack_roof.h"

typedef struct pack_floor {
    bench_floor_t job; /* in: the row's input + T->start; out: a buffer of its own */
    int on;            /* the row has a floor: 1-D strided form, size = nb*blk */
    long long bad_at;  /* after a failed check: first differing packed byte */
    unsigned bad_floor, bad_ref; /* and its value from the floor kernel / from mpiacc */
} pack_floor_t;

/* Sets f up for T (count 1) read from dbuf (dbuf_bytes readable); f->on
 * tells whether the row has a floor (then f owns a device output buffer). */
void pack_floor_open(pack_floor_t *f, const mpiacc_pack_type_t *T, const char *dbuf, long long dbuf_bytes);
void pack_floor_close(pack_floor_t *f);

/* Kernel-only timing (the same as kdev's) and the CSV file (may be NULL)
 * of the rows to come. */
void pack_floor_init(const pack_roof_timer_t *tm, FILE *csv);

/* The columns' header, " | kmin via kdev/kmin" and a newline. */
void pack_floor_header(void);

/* The row's floor: on a row with one, every variant that applies runs on
 * st and its bytes are compared with ref (device: mpiacc's pack of the
 * row's input, which the caller filled with bench_launch_fill so that a
 * misplaced byte shows), twice, the output preset to 0x00 and then to 0xff
 * (so a byte the variant does not write shows); then the variant is timed
 * kernel-only.  Prints the columns and a
 * newline: kmin, the fastest variant's time, its name (w<W>, w<W>x4, s16)
 * and kdev/kmin; "-" on a row without a floor; BAD and a note line naming
 * the first differing byte when a variant's bytes differ.  CSV rows: kmin
 * (the fastest) and kmin_<variant> (each); kdev/kmin goes to the summary. */
void pack_floor_row(pack_floor_t *f, const void *ref, cudaStream_t st, const char *group, const char *name,
                    long long blk, double kdev);

/* The closing line(s): median and worst kdev/kmin over the rows with a
 * floor, and the number of BAD rows; nothing when no row had one. */
void pack_floor_summary(void);

#endif
