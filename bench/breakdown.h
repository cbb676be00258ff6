/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/breakdown: bench/pingpong --breakdown, the median time of each phase
 * of mpiacc's device messages (src/core/trace.h) on this rank, send and
 * receive side. */
#ifndef BENCH_BREAKDOWN_H_INCLUDED
#define BENCH_BREAKDOWN_H_INCLUDED

#include <stdio.h>

/* Starts recording (up to `capacity` records); 0 when out of memory. */
int breakdown_start(long capacity);
/* Stops recording and prints the medians of what was recorded since
 * breakdown_start, one line per (side, record kind), each prefixed with
 * `label`, when print is set; also as CSV rows into csv (may be NULL). */
void breakdown_report(const char *label, FILE *csv, int print);
/* The CSV header matching breakdown_report's rows. */
const char *breakdown_csv_header(void);

#endif
