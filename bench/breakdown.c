/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/breakdown.c: see breakdown.h. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "breakdown.h"
#include "core/core_testhooks.h"
#include "reqpool/reqpool.h"

static long cap;

int breakdown_start(long capacity)
{
    cap = capacity;
    return mpiacc_core_trace_start(capacity);
}

/* Median (us) of field f over the records of (op, is_send); -1 if none. */
static double median_us(const mpiacc_core_trace_rec_t *r, long n, int op, int is_send, int f, long *count)
{
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1)), m = -1;
    size_t k = 0;
    if (!v) bench_fail(__FILE__, __LINE__, "malloc", "out of memory");
    for (long i = 0; i < n; i++)
        if (r[i].op == op && r[i].is_send == is_send) v[k++] = 1e-3 * (double)r[i].ns[f];
    if (k) m = bench_percentile(v, k, 50);
    *count = (long)k;
    free(v);
    return m;
}

/* CALL columns, then OP columns (states of src/reqpool, launches). */
static const struct { int op, f; const char *name; } cols[] = {
    {0, MPIACC_CORE_TR_ATTR, "attr"},          {0, MPIACC_CORE_TR_CHECK, "check"},
    {0, MPIACC_CORE_TR_DEP, "dep"},            {0, MPIACC_CORE_TR_POST, "post"},
    {0, MPIACC_CORE_TR_WAIT, "wait"},          {0, MPIACC_CORE_TR_CALL, "call"},
    {1, MPIACC_RP_DEP_PENDING, "dep_pending"}, {1, MPIACC_CORE_TR_OP_LAUNCH, "launch"},
    {1, MPIACC_RP_PACKING, "packing"},         {1, MPIACC_RP_READY, "ready"},
    {1, MPIACC_RP_IN_FLIGHT, "in_flight"},     {1, MPIACC_RP_UNPACKING, "unpacking"},
};
#define NCOLS (int)(sizeof cols / sizeof cols[0])

const char *breakdown_csv_header(void)
{
    return "label,side,calls,pooled_calls,ops,attr_us,check_us,dep_us,post_us,wait_us,call_us,dep_pending_us,"
           "launch_us,packing_us,ready_us,in_flight_us,unpacking_us";
}

void breakdown_report(const char *label, FILE *csv, int print)
{
    mpiacc_core_trace_rec_t *r = calloc((size_t)(cap ? cap : 1), sizeof *r);
    long n, dropped = 0;
    if (!r) bench_fail(__FILE__, __LINE__, "calloc", "out of memory");
    n = mpiacc_core_trace_take(r, cap, &dropped);
    mpiacc_core_trace_start(0);
    for (int side = 1; print && side >= 0; side--) {
        long calls = 0, ops = 0, pooled = 0, c;
        double m[NCOLS];
        for (long i = 0; i < n; i++)
            if (!r[i].op && r[i].is_send == side) pooled += r[i].pooled;
        for (int k = 0; k < NCOLS; k++) {
            m[k] = median_us(r, n, cols[k].op, side, cols[k].f, &c);
            if (cols[k].op) ops = c;
            else calls = c;
        }
        printf("#   %-22s %-4s calls %5ld (pooled %5ld) ops %5ld |", label, side ? "send" : "recv", calls, pooled, ops);
        for (int k = 0; k < NCOLS; k++) {
            if (m[k] < 0) printf(" %s -", cols[k].name);
            else printf(" %s %.2f", cols[k].name, m[k]);
        }
        printf("%s\n", dropped ? " (records dropped)" : "");
        if (csv) {
            fprintf(csv, "%s,%s,%ld,%ld,%ld", label, side ? "send" : "recv", calls, pooled, ops);
            for (int k = 0; k < NCOLS; k++) {
                if (m[k] < 0) fprintf(csv, ",");
                else fprintf(csv, ",%.3f", m[k]);
            }
            fprintf(csv, "\n");
        }
    }
    free(r);
}
