/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpiacc-info: what this mpiacc is (ompi_info / mpichversion for mpiacc):
 * version, build configuration, the devices and OpenCL platforms found at
 * run time, and every MPIACC_* environment variable with its default,
 * current value and meaning.  Runs with or without mpiexec, and with
 * MPIACC_DISABLE=1 (then mpiacc probes no device, and says so).
 *
 * What a program gets depends on how it is started: mpiacc-run gives its
 * ranks the UCX netmod on the CUDA-enabled UCX (mpiacc-run --print-env),
 * a bare process has MPICH's defaults.  mpiacc-info says what mpiacc-run
 * gives (its UCX, found by starting itself in that environment; at run
 * time its transport, by starting itself under mpiacc-run -n 1) and,
 * separately, what this process has, when the two differ.  Paths the
 * install does not carry (compilers, headers: where they were when mpiacc
 * was built) are marked "build time".
 */
#define _GNU_SOURCE /* realpath, dladdr, dlinfo */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* ---- mpiacc-run's environment ------------------------------------------- */

static char self_dir[PATH_MAX]; /* this program's directory: mpiacc-run lies beside it */

/* Runs argv (with the NAME=value lines of env_lines put in its environment
 * first; NULL: none) and collects its standard output into out[len]
 * (stderr discarded).  Returns its exit status, -1 when it could not run. */
static int capture(char *const argv[], const char *env_lines, char *out, size_t len)
{
    int fd[2], st = 0;
    size_t n = 0;
    ssize_t r;
    pid_t pid;
    out[0] = 0;
    if (pipe(fd) != 0) return -1;
    fflush(stdout);
    if ((pid = fork()) < 0) return -1;
    if (pid == 0) {
        char line[PATH_MAX * 4];
        const char *p = env_lines;
        FILE *devnull = fopen("/dev/null", "w");
        dup2(fd[1], 1);
        if (devnull) dup2(fileno(devnull), 2);
        close(fd[0]);
        while (p && *p) {
            size_t l = strcspn(p, "\n");
            char *eq;
            snprintf(line, sizeof line, "%.*s", (int)l, p);
            if ((eq = strchr(line, '='))) {
                *eq = 0;
                setenv(line, eq + 1, 1);
            }
            p += l + (p[l] == '\n');
        }
        unsetenv("UCX_ROOT"); /* as mpiacc-run does */
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    while (n + 1 < len && (r = read(fd[0], out + n, len - 1 - n)) > 0) n += (size_t)r;
    out[n] = 0;
    close(fd[0]);
    if (waitpid(pid, &st, 0) < 0) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* mpiacc-run beside this program (build tree and install alike), or NULL. */
static const char *mpiacc_run(char *out, size_t len)
{
    snprintf(out, len, "%s/mpiacc-run", self_dir);
    return access(out, X_OK) == 0 ? out : NULL;
}

/* The variables mpiacc-run sets for a rank started from this environment
 * (mpiacc-run --print-env) into out: "" when this process has them all
 * already (it runs as mpiacc-run starts a rank), NULL when there is no
 * mpiacc-run. */
static const char *run_env(char *out, size_t len)
{
    char run[PATH_MAX + 16];
    char *argv[] = {run, "--print-env", NULL};
    if (!mpiacc_run(run, sizeof run) || capture(argv, NULL, out, len) != 0) return NULL;
    return out;
}

/* A value of a child's report ("key value" lines), into out; NULL when absent. */
static const char *field(const char *report, const char *key, char *out, size_t len)
{
    size_t k = strlen(key);
    for (const char *p = report; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, key, k) && p[k] == ' ') {
            snprintf(out, len, "%.*s", (int)strcspn(p + k + 1, "\n"), p + k + 1);
            return out;
        }
    return NULL;
}

/* ---- the build and the installation -------------------------------------- */

static int installed;
static char prefix_dir[PATH_MAX];

/* What to say after a path recorded at build time: nothing in a build
 * tree, or where the install carries it; else that it is the build's. */
static const char *mark(const char *path)
{
    size_t n = strlen(prefix_dir);
    if (!installed || !*path || (n && !strncmp(path, prefix_dir, n) && (path[n] == '/' || !path[n]))) return "";
    return access(path, F_OK) ? " (build time; gone)" : " (build time)";
}

static void put_path(const char *label, const char *path, const char *more)
{
    printf("  %-21s %s%s%s\n", label, path, more ? more : "", mark(path));
}

/* This process's libucp, as "version (path)". */
static const char *ucx_here(char *out, size_t len)
{
    char path[PATH_MAX], ver[64];
    if (!loaded_ucx(path, sizeof path, ver, sizeof ver)) return NULL;
    snprintf(out, len, "%s, version %s", path, *ver ? ver : "unknown");
    return out;
}

static void print_config(void)
{
    char libdir[PATH_MAX], mpi[PATH_MAX], copy[PATH_MAX + 64], env[8192], rep[PATH_MAX * 2], self[PATH_MAX + 16];
    char here[PATH_MAX + 96], ranks[PATH_MAX + 96];
    int (*init)(int *, char ***) = PMPI_Init;
    void *init_addr;
    int have_libdir = !find_libdir(libdir, sizeof libdir);
    const char *ucx_dir, *renv;
    installed = find_prefix(prefix_dir, sizeof prefix_dir);
    memcpy(&init_addr, &init, sizeof init_addr);
    printf("mpiacc %s\n", MPIACC_CONFIG_VERSION);
    printf("build:\n");
    printf("  build type            %s\n", MPIACC_CONFIG_BUILD_TYPE);
    printf("  C compiler            %s\n", MPIACC_CONFIG_C_COMPILER);
    printf("  installed in          %s%s\n", installed ? prefix_dir : "(not installed: a build tree) ",
           installed ? "" : self_dir);
    printf("  library directory     %s\n", have_libdir ? libdir : "(not found)");
    printf("  backends compiled in  host%s%s\n", MPIACC_CONFIG_CUDA ? " CUDA" : "", MPIACC_CONFIG_OPENCL ? " OpenCL" : "");
    if (MPIACC_CONFIG_CUDA)
        printf("  CUDA                  toolkit %s, architectures %s\n", MPIACC_CONFIG_CUDA_VERSION,
               MPIACC_CONFIG_CUDA_ARCHS);
    if (MPIACC_CONFIG_OPENCL)
        printf("  OpenCL                headers %s, %s%s\n", MPIACC_CONFIG_OPENCL_VERSION, MPIACC_CONFIG_OPENCL_LIBRARY,
               mark(MPIACC_CONFIG_OPENCL_LIBRARY));
    printf("  MPI built against     MPI %s: %s\n", MPIACC_CONFIG_MPI_VERSION, MPIACC_CONFIG_MPI_LIBRARY_VERSION);
    put_path("MPI compiler", MPIACC_CONFIG_MPI_COMPILER, NULL);
    if (*MPIACC_CONFIG_MPI_HOME) put_path("MPI_HOME", MPIACC_CONFIG_MPI_HOME, NULL);
    else printf("  MPI_HOME              (not set)\n");
    printf("  MPICH netmods         %s\n", *MPIACC_CONFIG_MPI_NETMODS ? MPIACC_CONFIG_MPI_NETMODS : "(unknown)");
    printf("  MPI library loaded    %s\n", loaded_from(init_addr, mpi, sizeof mpi) ? mpi : "(unknown)");
    if (have_libdir && installed_copy(libdir, "mpiacc/mpich/bin", "mpiexec", copy, sizeof copy))
        printf("  mpiexec               %s/mpiexec (the install's copy of MPICH)\n", copy);
    else put_path("mpiexec", MPIACC_CONFIG_MPIEXEC, NULL);
    if (*MPIACC_CONFIG_UCX_INCLUDE) {
        snprintf(copy, sizeof copy, ", API %s", MPIACC_CONFIG_UCX_VERSION);
        put_path("UCX headers", MPIACC_CONFIG_UCX_INCLUDE, *MPIACC_CONFIG_UCX_VERSION ? copy : NULL);
    } else {
        printf("  UCX headers           (none)\n");
    }
    /* the UCX mpiacc-run gives its ranks, and its version: this program
     * started again in that environment says which libucp it loads */
    ucx_dir = have_libdir ? installed_copy(libdir, "mpiacc/ucx/lib", "libucp.so.0", copy, sizeof copy) : NULL;
    renv = run_env(env, sizeof env);
    snprintf(self, sizeof self, "%s/mpiacc-info", self_dir);
    {
        char *argv[] = {self, "--loaded-ucx", NULL};
        if (renv && !*renv) { /* started as mpiacc-run starts a rank: its UCX is this process's */
            if (!ucx_here(ranks, sizeof ranks)) ranks[0] = 0;
        } else if (!renv || capture(argv, renv, rep, sizeof rep) != 0 || !field(rep, "ucx", ranks, sizeof ranks)) {
            ranks[0] = 0;
        }
    }
    ucx_dir = ucx_dir ? ucx_dir : *MPIACC_CONFIG_UCX_LIBDIR ? MPIACC_CONFIG_UCX_LIBDIR : NULL;
    {
        const char *v = strstr(ranks, ", version "), *copy_of = "";
        if (ucx_dir && have_libdir && !strncmp(ucx_dir, libdir, strlen(libdir))) copy_of = "the install's copy";
        printf("  UCX for mpiacc-run    %s%s%s%s%s%s%s\n", ucx_dir ? ucx_dir : "(none: MPICH's own)",
               v || *copy_of ? " (" : "", v ? v + 2 : "", v && *copy_of ? "; " : "", copy_of, v || *copy_of ? ")" : "",
               ucx_dir ? mark(ucx_dir) : "");
    }
    if (!ucx_here(here, sizeof here)) printf("  UCX loaded            (none: this MPI does not link UCX)\n");
    else if (!renv || !*renv || !*ranks || !strcmp(here, ranks))
        printf("  UCX loaded            %s\n", here);
    else printf("  UCX loaded            %s (this process, not started by mpiacc-run: MPICH's own UCX)\n", here);
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

/* The transport of this process (MPI initialised), and, when this process
 * is not started as mpiacc-run starts a rank, the one mpiacc-run gives
 * (this program under mpiacc-run -n 1, --ranks-transport). */
static void print_transport(void)
{
    char env[8192], run[PATH_MAX + 16], self[PATH_MAX + 16], rep[8192], t[1024], u[PATH_MAX + 96], here[PATH_MAX + 96];
    const char *renv = run_env(env, sizeof env), *mine = mpiacc_engine_mpi.reason();
    char *argv[] = {run, "-n", "1", self, "--ranks-transport", NULL};
    snprintf(self, sizeof self, "%s/mpiacc-info", self_dir);
    if (!renv || !*renv || !mpiacc_run(run, sizeof run) || capture(argv, NULL, rep, sizeof rep) != 0 ||
        !field(rep, "transport", t, sizeof t)) {
        printf("  transport             %s%s\n", mine,
               renv && !*renv ? "" : renv ? " (mpiacc-run's could not be asked)" : "");
        return;
    }
    printf("  transport             %s (as mpiacc-run starts a rank)\n", t);
    if (field(rep, "ucx", u, sizeof u)) printf("  UCX                   %s (as mpiacc-run starts a rank)\n", u);
    if (strcmp(t, mine) || (ucx_here(here, sizeof here) && strcmp(here, u)))
        printf("  this process          not started by mpiacc-run: transport %s; UCX %s\n", mine,
               ucx_here(here, sizeof here) ? here : "none");
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
    print_transport(); /* src/engine: decided in MPI_Init */
    for (int k = MPIACC_KIND_CUDA; k < MPIACC_KIND_MAX; k++) {
        const mpiacc_backend_t *b = mpiacc_backend_get(k);
        printf("  %-21s ", mpiacc_kind_name(k));
        if (!b) {
            const mpiacc_backend_t *cand = k == MPIACC_KIND_CUDA ? mpiacc_cuda_backend() : NULL;
            printf("unavailable (%s)\n", mpiacc_backend_why_absent(k));
            if (cand && cand->coll && cand->coll->describe) { /* the NCCL found, unused without a device */
                desc[0] = 0;
                cand->coll->describe(desc, sizeof desc);
                char *tail = strstr(desc, "): the engine");
                if (tail) snprintf(tail + 1, sizeof desc - (size_t)(tail + 1 - desc), ": found, unused without a device\n");
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
    int version = 0, libdir = 0, config = 0, env = 0, loaded_ucx_only = 0, ranks_transport = 0;
    char dir[PATH_MAX], exe[PATH_MAX], *slash;
    ssize_t n;
    cli_opt_t opts[] = {
        {"version", CLI_FLAG, &version, "print the version and exit", NULL, CLI_ANY},
        {"libdir", CLI_FLAG, &libdir, "print the directory of libmpiacc.so (for LD_PRELOAD) and exit", NULL, CLI_ANY},
        {"config", CLI_FLAG, &config, "print the build configuration only (no MPI, no device)", NULL, CLI_ANY},
        {"env", CLI_FLAG, &env, "print the MPIACC_* environment variables only", NULL, CLI_ANY},
        {"loaded-ucx", CLI_FLAG, &loaded_ucx_only, "(internal) print the UCX this process loaded", NULL, CLI_ANY},
        {"ranks-transport", CLI_FLAG, &ranks_transport, "(internal) MPI_Init, print the transport and the UCX",
         NULL, CLI_ANY},
    };
    CLI_PARSE(argc, argv, 
              "mpiacc-info", "mpiacc-info [options]",
              "Version, build configuration, devices and OpenCL platforms found at run time, and\n"
              "every MPIACC_* environment variable with its default, current value and meaning.",
              opts);
    if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) > 0) {
        exe[n] = 0;
        if ((slash = strrchr(exe, '/'))) *slash = 0;
        snprintf(self_dir, sizeof self_dir, "%s", exe);
    }
    if (version) {
        printf("mpiacc-info (mpiacc) %s\n", MPIACC_CONFIG_VERSION);
        return 0;
    }
    if (loaded_ucx_only) {
        printf("ucx %s\n", ucx_here(dir, sizeof dir) ? dir : "none");
        return 0;
    }
    if (ranks_transport) {
        MPI_Init(&argc, &argv);
        printf("transport %s\nucx %s\n", mpiacc_core_initialized ? mpiacc_engine_mpi.reason() : "mpiacc inactive",
               ucx_here(dir, sizeof dir) ? dir : "none");
        MPI_Finalize();
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
        mpiacc_env_release(1); /* no MPI_Init: the environment's warnings, if any, now */
        return 0;
    }
    print_config();
    MPI_Init(&argc, &argv);
    print_runtime();
    print_env();
    MPI_Finalize();
    return 0;
}
