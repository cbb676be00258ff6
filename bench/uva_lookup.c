/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/uva_lookup: what MPIACC_UVA=1's classification costs one call, in
 * isolation (one process; white-box, links libmpiacc_internal.a):
 *   off      the host fast path's test with the mode off (tag check + flag)
 *   hit      the same test in the mode, buffer granule cached as host
 *   hit64    the same cycling over 64 buffers (64 cached granules)
 *   query    a granule not cached: the CUDA pointer query (one driver call
 *            when a CUDA device exists; without one, no query: the backend
 *            is absent and the answer is "host") plus the cache insert
 *   nocache  the query on every call, as a mode without a cache would do
 *            (the seed MPI-ACC paper's per-call UVA query): the same as
 *            query, on one granule, forgetting it after each call
 * Prints ns per call (median of rounds).
 *
 *   bench/uva_lookup [--iters N] [--rounds R] [--help]
 */
#define _POSIX_C_SOURCE 200809L /* setenv, strtok_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "dispatch/memkind.h"

static volatile int sink;

static double run(int which, char *bufs, int iters)
{
    double t0 = MPI_Wtime();
    int acc = 0;
    for (int i = 0; i < iters; i++) {
        char *p = bufs;
        switch (which) {
        case 2: p = bufs + (size_t)(i & 63) * 4096; break;
        case 3: p = bufs + (size_t)(i % 4096) * 4096; break;
        default: break;
        }
        if (which == 3 && i % 4096 == 0) mpiacc_util_pcache_clear(&mpiacc_dispatch_host_pages);
        if (which == 4) mpiacc_util_pcache_forget(&mpiacc_dispatch_host_pages, p, 0);
        acc += mpiacc_dispatch_untagged_host(MPI_BYTE, p, MPI_COMM_WORLD);
    }
    sink = acc;
    return (MPI_Wtime() - t0) / iters * 1e9;
}

int main(int argc, char **argv)
{
    int iters = 200000, rounds = 21, saved;
    const char *names[] = {"off", "hit", "hit64", "query", "nocache"};
    char *bufs;
    cli_opt_t opts[] = {
        {"iters", CLI_INT, &iters, "calls per round", NULL, 4096, 1e9},
        {"rounds", CLI_INT, &rounds, "rounds", NULL, 1, 1e6},
    };
    CLI_PARSE(argc, argv, "uva_lookup", "uva_lookup [options]",
              "Cost of MPIACC_UVA=1's buffer classification per call, in isolation:\n"
              "mode off, cached host granule, uncached (pointer query), no cache at all.", opts);
    setenv("MPIACC_UVA", "1", 1);
    MPI_Init(&argc, &argv);
    bufs = malloc((size_t)4097 * 4096);
    memset(bufs, 1, (size_t)4097 * 4096);
    bench_header("uva_lookup", "MPIACC_UVA=1 classification cost per call", "host",
                 mpiacc_backend_peek(MPIACC_KIND_CUDA) ? "CUDA" : "-");
    printf("# CUDA backend: %s\n", mpiacc_backend_peek(MPIACC_KIND_CUDA)
                                       ? "started (query = cuPointerGetAttributes)"
                                       : "absent (query = backend lookup only, no driver call)");
    printf("%-8s %10s\n", "case", "ns/call");
    saved = mpiacc_core_classify;
    for (int w = 0; w < 5; w++) {
        double *t = malloc(sizeof(double) * rounds);
        mpiacc_core_classify = w == 0 ? 0 : saved;
        mpiacc_util_pcache_clear(&mpiacc_dispatch_host_pages);
        run(w, bufs, iters / 4); /* warm-up */
        for (int r = 0; r < rounds; r++) t[r] = run(w, bufs, iters);
        printf("%-8s %10.2f\n", names[w], bench_percentile(t, rounds, 50));
        free(t);
    }
    mpiacc_core_classify = saved;
    free(bufs);
    MPI_Finalize();
    return 0;
}
