/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpiacc-info: what this mpiacc is (ompi_info / mpichversion for mpiacc):
 * version, build configuration, the devices and OpenCL platforms found at
 * run time, and every MPIACC_* environment variable with its default,
 * current value and meaning.  Runs with or without mpiexec, and with
 * MPIACC_DISABLE=1 (then mpiacc probes no device, and says so).
 */
#define _GNU_SOURCE /* realpath, dladdr, dlinfo */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/backend_coll.h"
#include "core/core.h"
#include "core/env.h"
#include "engine/engine.h"
#include "mpiacc_config.h"

/* The directory holding libmpiacc.so, found from this executable's place:
 * <prefix>/bin/../<libdir> when installed, <build>/tools/.. in a build
 * tree.  Returns 0 when found. */
static int find_libdir(char *out, size_t len)
{
    char exe[PATH_MAX], cand[PATH_MAX + 64], lib[PATH_MAX + 96], *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const char *rel[] = {"/../" MPIACC_CONFIG_LIBDIR, "/.."};
    if (n <= 0) return -1;
    exe[n] = 0;
    if (!(slash = strrchr(exe, '/'))) return -1;
    *slash = 0;
    for (int i = 0; i < 2; i++) {
        snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
        snprintf(lib, sizeof lib, "%s/libmpiacc.so", cand);
        if (access(lib, F_OK) == 0 && realpath(cand, lib)) {
            snprintf(out, len, "%s", lib);
            return 0;
        }
    }
    return -1;
}

/* Where this program is: OUT gets its prefix (<prefix>/bin/mpiacc-info with
 * libmpiacc.so in <prefix>/<libdir>) and returns 1, or gets its directory
 * and returns 0 (a build tree). */
static int find_prefix(char *out, size_t len)
{
    char exe[PATH_MAX], lib[PATH_MAX + 96], *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = 0;
    if (n <= 0) return 0;
    exe[n] = 0;
    if (!(slash = strrchr(exe, '/'))) return 0;
    *slash = 0;
    snprintf(out, len, "%s", exe);
    snprintf(lib, sizeof lib, "%s/../%s/libmpiacc.so", exe, MPIACC_CONFIG_LIBDIR);
    if ((slash = strrchr(exe, '/')) && !strcmp(slash + 1, MPIACC_CONFIG_BINDIR) && access(lib, F_OK) == 0) {
        *slash = 0;
        snprintf(out, len, "%s", exe[0] ? exe : "/");
        return 1;
    }
    return 0;
}

/* The file the loader loaded for the object holding ADDR, or NULL. */
static const char *loaded_from(void *addr, char *out, size_t len)
{
    Dl_info di;
    if (!dladdr(addr, &di) || !di.dli_fname) return NULL;
    if (!realpath(di.dli_fname, out)) snprintf(out, len, "%s", di.dli_fname);
    return out;
}

/* The libucp.so.0 this process loaded (MPICH's UCX netmod links it), its
 * version into VER; NULL when none is loaded. */
static const char *loaded_ucx(char *out, size_t len, char *ver, size_t vlen)
{
    struct link_map *lm = NULL;
    const char *(*version)(void);
    void *h = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD), *sym;
    ver[0] = 0;
    if (!h) return NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name) {
        dlclose(h);
        return NULL;
    }
    if (!realpath(lm->l_name, out)) snprintf(out, len, "%s", lm->l_name);
    if ((sym = dlsym(h, "ucp_get_version_string"))) {
        memcpy(&version, &sym, sizeof version);
        snprintf(ver, vlen, "%s", version());
    }
    dlclose(h);
    return out;
}

/* DIR/REL when it exists (an install's copy of MPICH or UCX), else NULL */
static const char *installed_copy(const char *dir, const char *rel, const char *file, char *out, size_t len)
{
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s/%s", dir, rel, file);
    if (access(path, F_OK) != 0) return NULL;
    snprintf(out, len, "%s/%s", dir, rel);
    return out;
}

static void print_config(void)
{
    char libdir[PATH_MAX], where[PATH_MAX], mpi[PATH_MAX], ucx[PATH_MAX], ver[64], copy[PATH_MAX + 64];
    int (*init)(int *, char ***) = PMPI_Init;
    void *init_addr;
    int installed = find_prefix(where, sizeof where), have_libdir = !find_libdir(libdir, sizeof libdir);
    const char *ucx_dir;
    memcpy(&init_addr, &init, sizeof init_addr);
    printf("mpiacc %s\n", MPIACC_CONFIG_VERSION);
    printf("build:\n");
    printf("  build type            %s\n", MPIACC_CONFIG_BUILD_TYPE);
    printf("  C compiler            %s\n", MPIACC_CONFIG_C_COMPILER);
    printf("  installed in          %s%s\n", installed ? where : "(not installed: a build tree) ", installed ? "" : where);
    printf("  library directory     %s\n", have_libdir ? libdir : "(not found)");
    printf("  backends compiled in  host%s%s\n", MPIACC_CONFIG_CUDA ? " CUDA" : "", MPIACC_CONFIG_OPENCL ? " OpenCL" : "");
    if (MPIACC_CONFIG_CUDA)
        printf("  CUDA                  toolkit %s, architectures %s\n", MPIACC_CONFIG_CUDA_VERSION,
               MPIACC_CONFIG_CUDA_ARCHS);
    if (MPIACC_CONFIG_OPENCL)
        printf("  OpenCL                headers %s, %s\n", MPIACC_CONFIG_OPENCL_VERSION, MPIACC_CONFIG_OPENCL_LIBRARY);
    printf("  MPI built against     MPI %s: %s\n", MPIACC_CONFIG_MPI_VERSION, MPIACC_CONFIG_MPI_LIBRARY_VERSION);
    printf("  MPI compiler          %s\n", MPIACC_CONFIG_MPI_COMPILER);
    printf("  MPI_HOME              %s\n", *MPIACC_CONFIG_MPI_HOME ? MPIACC_CONFIG_MPI_HOME : "(not set)");
    printf("  MPICH netmods         %s\n", *MPIACC_CONFIG_MPI_NETMODS ? MPIACC_CONFIG_MPI_NETMODS : "(unknown)");
    printf("  MPI library loaded    %s\n", loaded_from(init_addr, mpi, sizeof mpi) ? mpi : "(unknown)");
    if (have_libdir && installed_copy(libdir, "mpiacc/mpich/bin", "mpiexec", copy, sizeof copy))
        printf("  mpiexec               %s/mpiexec (the install's copy of MPICH)\n", copy);
    else printf("  mpiexec               %s\n", MPIACC_CONFIG_MPIEXEC);
    printf("  UCX headers           %s%s%s\n", *MPIACC_CONFIG_UCX_INCLUDE ? MPIACC_CONFIG_UCX_INCLUDE : "(none)",
           *MPIACC_CONFIG_UCX_VERSION ? ", API " : "", MPIACC_CONFIG_UCX_VERSION);
    ucx_dir = have_libdir ? installed_copy(libdir, "mpiacc/ucx/lib", "libucp.so.0", copy, sizeof copy) : NULL;
    printf("  UCX for mpiacc-run    %s%s\n",
           ucx_dir ? ucx_dir : *MPIACC_CONFIG_UCX_LIBDIR ? MPIACC_CONFIG_UCX_LIBDIR : "(none: MPICH's own)",
           ucx_dir ? " (the install's copy)" : "");
    if (loaded_ucx(ucx, sizeof ucx, ver, sizeof ver))
        printf("  UCX loaded            %s%s%s\n", ucx, *ver ? ", version " : "", ver);
    else printf("  UCX loaded            (none: this MPI does not link UCX)\n");
}

static void print_env(void)
{
    printf("environment (MPIACC_*; read once, at the first use):\n");
    for (int i = 0; i < mpiacc_env_count(); i++) {
        mpiacc_env_desc_t d;
        char cur[160];
        mpiacc_env_info(i, &d);
        if (!d.raw) snprintf(cur, sizeof cur, "(unset)");
        else if (!d.valid) snprintf(cur, sizeof cur, "%s (not understood: default used)", d.raw);
        else snprintf(cur, sizeof cur, "%s", d.raw);
        printf("  %-25s default %-6s current %s\n", d.name, d.def, cur);
        printf("  %-25s %s; %s: %s\n", "", d.meaning, d.kind_name, d.accepted);
    }
}

static void print_runtime(void)
{
    int major, minor, mpimaj, mpimin, len;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], desc[4096];

    MPIACC_Get_version(&major, &minor);
    MPI_Get_version(&mpimaj, &mpimin);
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = 0;
    printf("run time:\n");
    printf("  mpiacc library        %d.%d\n", major, minor);
    printf("  MPI                   %d.%d: %s\n", mpimaj, mpimin, lib);
    if (mpiacc_core_disabled) {
        printf("  mpiacc                disabled by MPIACC_DISABLE: MPI calls go to MPI untouched; no device probed\n");
        return;
    }
    if (!mpiacc_core_initialized) {
        printf("  mpiacc                failed to initialise (MPIACC_LOG=debug tells why)\n");
        return;
    }
    printf("  mpiacc                active\n");
    printf("  transport             %s\n", mpiacc_engine_mpi.reason()); /* src/engine: decided in MPI_Init */
    for (int k = MPIACC_KIND_CUDA; k < MPIACC_KIND_MAX; k++) {
        const mpiacc_backend_t *b = mpiacc_backend_get(k);
        printf("  %-21s ", mpiacc_kind_name(k));
        if (!b) {
            const mpiacc_backend_t *cand = k == MPIACC_KIND_CUDA ? mpiacc_cuda_backend() : NULL;
            printf("unavailable (%s)\n", mpiacc_backend_why_absent(k));
            if (cand && cand->coll && cand->coll->describe) { /* the NCCL found, even without a device */
                desc[0] = 0;
                cand->coll->describe(desc, sizeof desc);
                printf("%s", desc);
            }
            continue;
        }
        desc[0] = 0;
        if (b->describe) b->describe(desc, sizeof desc);
        printf("available\n%s", desc);
    }
}

int main(int argc, char **argv)
{
    int version = 0, libdir = 0, config = 0, env = 0;
    char dir[PATH_MAX];
    cli_opt_t opts[] = {
        {"version", CLI_FLAG, &version, "print the version and exit", NULL, CLI_ANY},
        {"libdir", CLI_FLAG, &libdir, "print the directory of libmpiacc.so (for LD_PRELOAD) and exit", NULL, CLI_ANY},
        {"config", CLI_FLAG, &config, "print the build configuration only (no MPI, no device)", NULL, CLI_ANY},
        {"env", CLI_FLAG, &env, "print the MPIACC_* environment variables only", NULL, CLI_ANY},
    };
    CLI_PARSE(argc, argv, 
              "mpiacc-info", "mpiacc-info [options]",
              "Version, build configuration, devices and OpenCL platforms found at run time, and\n"
              "every MPIACC_* environment variable with its default, current value and meaning.",
              opts);
    if (version) {
        printf("mpiacc-info (mpiacc) %s\n", MPIACC_CONFIG_VERSION);
        return 0;
    }
    if (libdir) {
        if (find_libdir(dir, sizeof dir)) {
            fprintf(stderr, "mpiacc-info: libmpiacc.so not found next to this program\n");
            return 1;
        }
        printf("%s\n", dir);
        return 0;
    }
    if (config || env) {
        if (config) print_config();
        if (env) print_env();
        return 0;
    }
    print_config();
    MPI_Init(&argc, &argv);
    print_runtime();
    print_env();
    MPI_Finalize();
    return 0;
}
