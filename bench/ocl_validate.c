/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/ocl_validate: what checking the application's cl_mem costs (the
 * check that turns a host pointer or a released cl_mem into MPI_ERR_BUFFER
 * instead of a crash in the OpenCL ICD loader, src/opencl/ocl_valid.c).
 * One process; white-box (links libmpiacc_internal.a for the switch that
 * turns the check off, which the library itself never does).  Each case
 * runs with the check on and off in alternating rounds of the same run:
 *   check     mpiacc_ocl_mem_context on a cl_mem already seen (the check's
 *             steady state: one lock and a hash probe) -- per call
 *   first     a new cl_mem each time: create, check, release (a handle
 *             seen for the first time: two copies of a word through a
 *             system call and a destructor callback registration)
 *   pack      MPI_Pack of --size bytes from a cl_mem into another one
 *             (one public call, blocking; both cl_mem are checked)
 *   sendrecv  MPI_Sendrecv of --size bytes cl_mem -> cl_mem on
 *             MPI_COMM_SELF (staged: pack, message, unpack)
 * Prints the median ns per call with the check on and off, the difference
 * and the ratio on/off.
 *
 *   bench/ocl_validate [--iters N] [--rounds R] [--size BYTES] [--help]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_common.h"
#include "opencl/ocl_testhooks.h"

enum { C_CHECK, C_FIRST, C_PACK, C_SENDRECV, NCASES };
static const char *const names[NCASES] = {"check", "first", "pack", "sendrecv"};

typedef struct st {
    bocl_t b;
    cl_command_queue q;
    cl_mem m, m2;
    MPI_Datatype t;
    char *host;
    int size;
} st_t;

static volatile int sink;

/* ns per call of case c over iters calls */
static double run(st_t *s, int c, int iters)
{
    cl_context ctx;
    size_t sz;
    int acc = 0, pos;
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        switch (c) {
        case C_CHECK: acc += mpiacc_ocl_mem_context(s->m, NULL, &ctx, &sz); break;
        case C_FIRST: {
            cl_mem n = bocl_buf(&s->b, 64);
            acc += mpiacc_ocl_mem_context(n, NULL, &ctx, &sz);
            clReleaseMemObject(n);
            break;
        }
        case C_PACK:
            pos = 0;
            BENCH_MPI_CHECK(MPI_Pack(s->m, 1, s->t, s->m2, s->size, &pos, MPI_COMM_SELF));
            break;
        default:
            BENCH_MPI_CHECK(MPI_Sendrecv(s->m, 1, s->t, 0, 1, s->m2, 1, s->t, 0, 1, MPI_COMM_SELF,
                                         MPI_STATUS_IGNORE));
            break;
        }
    }
    sink = acc;
    if (acc) bench_fail(__FILE__, __LINE__, "mpiacc_ocl_mem_context", "the check refused a live cl_mem");
    return (bench_now() - t0) / iters * 1e9;
}

int main(int argc, char **argv)
{
    int iters = 20000, rounds = 11, size;
    long long bytes = 1024;
    st_t s;
    cli_opt_t opts[] = {
        {"iters", CLI_INT, &iters, "calls per round of the check case (the others: iters/20)", NULL, 100, 1e9},
        {"rounds", CLI_INT, &rounds, "rounds with the check on and off, alternating", NULL, 1, 1e6},
        {"size", CLI_SIZE, &bytes, "message bytes of the pack and sendrecv cases", NULL, 1, 1 << 26},
    };
    CLI_PARSE(argc, argv, "ocl_validate", "ocl_validate [options]",
              "Cost of checking the application's cl_mem (a host pointer or a released cl_mem\n"
              "becomes MPI_ERR_BUFFER instead of a crash): each case with the check on and off,\n"
              "same run. One process, on the OpenCL platform that MPIACC_TEST_OPENCL_PLATFORM\n"
              "names (part of its name or vendor; default: the first platform with a device).", opts);
    size = (int)bytes;
    MPI_Init(&argc, &argv);
    memset(&s, 0, sizeof s);
    if (!mpiacc_backend_get(MPIACC_KIND_OPENCL) || !bocl_init(&s.b)) {
        printf("SKIPPED: no OpenCL device\n");
        MPI_Finalize();
        return 77;
    }
    s.size = size;
    s.q = bocl_queue(&s.b, 0);
    s.m = bocl_buf(&s.b, (size_t)size);
    s.m2 = bocl_buf(&s.b, (size_t)size);
    s.host = calloc(1, (size_t)size);
    OCL_OK(clEnqueueWriteBuffer(s.q, s.m, CL_TRUE, 0, (size_t)size, s.host, 0, NULL, NULL));
    s.t = bocl_type((size_t)size, s.q);
    bench_header("ocl_validate", "cost of the cl_mem check, on vs off in the same run", "OpenCL", s.b.name);
    printf("# --size %d B, %d rounds, median ns per call\n", size, rounds);
    printf("%-9s %12s %12s %12s %8s\n", "case", "on_ns", "off_ns", "diff_ns", "on/off");
    for (int c = 0; c < NCASES; c++) {
        int n = c == C_CHECK ? iters : (iters / 20 > 10 ? iters / 20 : 10);
        double *on = malloc(sizeof(double) * rounds), *off = malloc(sizeof(double) * rounds), mon, moff;
        run(&s, c, n / 4 + 1); /* warm-up (check on: the handles are remembered) */
        for (int r = 0; r < rounds; r++) { /* on first in even rounds, off first in odd ones */
            for (int k = 0; k < 2; k++) {
                int check = (r + k + 1) & 1;
                mpiacc_ocl_set_mem_check(check);
                (check ? on : off)[r] = run(&s, c, n);
            }
        }
        mpiacc_ocl_set_mem_check(1);
        mon = bench_median(on, (size_t)rounds);
        moff = bench_median(off, (size_t)rounds);
        printf("%-9s %12.1f %12.1f %12.1f %8.3f\n", names[c], mon, moff, mon - moff, mon / moff);
        free(on);
        free(off);
    }
    MPI_Type_free(&s.t);
    clReleaseMemObject(s.m);
    clReleaseMemObject(s.m2);
    clReleaseCommandQueue(s.q);
    free(s.host);
    bocl_fini(&s.b);
    MPI_Finalize();
    return 0;
}
