/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/type_commit: time to create + commit (+ free) TEMPI's 3D object
 * constructions with plain MPICH, and the same with mpiacc's datatype
 * analysis (decode, canonicalise, serialise, cache attribute) added, in one
 * run.  Target: <= 10 us added per type.
 *
 *   type_commit [--iters N] [--csv FILE] [--help]      (default 20000)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "bench.h"
#include "pack/pack.h"

enum { A0 = 256, A1 = 512, A2 = 1024, E0 = 100, E1 = 13, E2 = 47 };

/* TEMPI Figure 2 constructions (and two more) of one 3D object.  MPICH is
 * called through PMPI so that the baseline never includes mpiacc. */
static MPI_Datatype build(int which)
{
    MPI_Datatype row, plane, cub = MPI_DATATYPE_NULL;
    int sz3[3] = {A2, A1, A0}, sub3[3] = {E2, E1, E0}, st3[3] = {0, 0, 0};
    int sz2[2] = {A1, A0}, sub2[2] = {E1, E0}, st2[2] = {0, 0};
    switch (which) {
    case 0: PMPI_Type_create_subarray(3, sz3, sub3, st3, MPI_ORDER_C, MPI_BYTE, &cub); break;
    case 1:
        PMPI_Type_vector(E0, 1, 1, MPI_BYTE, &row);
        PMPI_Type_create_hvector(E1, 1, A0, row, &plane);
        PMPI_Type_create_hvector(E2, 1, A0 * A1, plane, &cub);
        PMPI_Type_free(&row);
        PMPI_Type_free(&plane);
        break;
    case 2:
        PMPI_Type_create_subarray(2, sz2, sub2, st2, MPI_ORDER_C, MPI_BYTE, &plane);
        PMPI_Type_vector(E2, 1, 1, plane, &cub);
        PMPI_Type_free(&plane);
        break;
    case 3: /* rows of floats */
        PMPI_Type_contiguous(E0 / 4, MPI_FLOAT, &row);
        PMPI_Type_create_hvector(E1, 1, A0, row, &plane);
        PMPI_Type_create_hvector(E2, 1, A0 * A1, plane, &cub);
        PMPI_Type_free(&row);
        PMPI_Type_free(&plane);
        break;
    }
    PMPI_Type_commit(&cub);
    return cub;
}

static const char *names[] = {"subarray 3D (bytes)", "hvector(hvector(vector))", "vector(subarray 2D)",
                              "hvector(hvector(contig float))"};

int main(int argc, char **argv)
{
    int iters = 20000;
    const char *csvpath = NULL;
    FILE *csv;
    cli_opt_t opts[] = {
        {"iters", CLI_INT, &iters, "types created per construction and variant (rounded down to 4k)", NULL, 4, 1e9},
        CLI_OPT_CSV(&csvpath),
    };
    CLI_PARSE(argc, argv, "type_commit", "type_commit [options]",
              "Time to create+commit+free TEMPI's 3D object constructions with plain MPICH and\n"
              "with mpiacc's datatype analysis added, same run.", opts);
    MPI_Init(&argc, &argv);
    bench_header("type_commit", "datatype create+commit+free, MPICH alone vs + mpiacc analysis", "host", "-");
    printf("# %d iterations each\n", iters);
    printf("%-32s %14s %16s %12s %8s\n", "construction", "MPICH (us)", "+analysis (us)", "added (us)", "ratio");
    csv = bench_csv_open(csvpath, "construction,mpich_us,analysis_us,added_us,ratio");
    for (int w = 0; w < 4; w++) {
        double base = 0, with = 0;
        /* alternate rounds so both see the same machine state */
        for (int round = 0; round < 4; round++) {
            double t0 = bench_now();
            for (int i = 0; i < iters / 4; i++) {
                MPI_Datatype t = build(w);
                PMPI_Type_free(&t);
            }
            double t1 = bench_now();
            for (int i = 0; i < iters / 4; i++) {
                MPI_Datatype t = build(w);
                mpiacc_pack_type_t *a;
                if (mpiacc_pack_type_get(t, &a) != MPI_SUCCESS) {
                    fprintf(stderr, "analysis failed\n");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                mpiacc_pack_type_release(a);
                PMPI_Type_free(&t);
            }
            double t2 = bench_now();
            base += t1 - t0;
            with += t2 - t1;
        }
        double n = (double)(iters / 4 * 4);
        printf("%-32s %14.2f %16.2f %12.2f %8.2f\n", names[w], 1e6 * base / n, 1e6 * with / n,
               1e6 * (with - base) / n, with / base);
        if (csv)
            fprintf(csv, "\"%s\",%.4f,%.4f,%.4f,%.4f\n", names[w], 1e6 * base / n, 1e6 * with / n,
                    1e6 * (with - base) / n, with / base);
    }
    if (csv) fclose(csv);
    MPI_Finalize();
    return 0;
}
