/* mpiacc-info: versions, backends compiled in, devices found. */
#include <stdio.h>

#include "core/core.h"

int main(int argc, char **argv)
{
    int major, minor, mpimaj, mpimin, len;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    char desc[4096];

    MPI_Init(&argc, &argv);
    MPIACC_Get_version(&major, &minor);
    MPI_Get_version(&mpimaj, &mpimin);
    MPI_Get_library_version(lib, &len);
    for (int i = 0; i < len; i++)
        if (lib[i] == '\n') { lib[i] = 0; break; }
    printf("mpiacc %d.%d\n", major, minor);
    printf("MPI %d.%d: %s\n", mpimaj, mpimin, lib);
    printf("backends compiled in: host%s%s\n", mpiacc_cuda_compiled() ? " CUDA" : "",
           mpiacc_opencl_compiled() ? " OpenCL" : "");
    for (int k = MPIACC_KIND_CUDA; k < MPIACC_KIND_MAX; k++) {
        const mpiacc_backend_t *b = mpiacc_backend_get(k);
        printf("%s: ", mpiacc_kind_name(k));
        if (!b) {
            printf("unavailable (%s)\n", mpiacc_backend_why_absent(k));
            continue;
        }
        desc[0] = 0;
        if (b->describe) b->describe(desc, sizeof desc);
        printf("available\n%s", desc);
    }
    MPI_Finalize();
    return 0;
}
