/* SPDX-License-Identifier: BSD-3-Clause */
/* engine/engine.c: whether MPI's own transport takes CUDA device memory
 * (the decision and its rule: engine.h), and the engine's table. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "engine.h"

unsigned mpiacc_engine_test_kinds;

static unsigned kinds;         /* bit 1 << kind: MPI takes that kind's device memory */
static char reason_text[512] = "not decided yet (MPI is not initialised)";

/* ---- the rule ------------------------------------------------------------------- */

int mpiacc_engine_rule(const mpiacc_engine_facts_t *f, char *why, size_t len)
{
    const char *from = f->netmod_from[0] ? f->netmod_from : "unknown source";
    if (f->staged) {
        snprintf(why, len, "MPIACC_TRANSPORT=staged");
        return 0;
    }
    if (!f->mpich_ch4) {
        snprintf(why, len, "cannot tell whether this MPI takes device memory (not MPICH's ch4 device)");
        return 0;
    }
    if (strcmp(f->netmod, "ucx") != 0) {
        snprintf(why, len, "MPICH's netmod is %s%s%s (%s), not ucx", f->netmod[0] ? "\"" : "",
                 f->netmod[0] ? f->netmod : "unknown", f->netmod[0] ? "\"" : "", from);
        return 0;
    }
    if (f->nolocal != 1 && !f->alone) {
        snprintf(why, len,
                 "MPICH's shared memory, which copies device memory with the CPU, carries messages between the "
                 "processes of this node (set MPIR_CVAR_NOLOCAL=1)");
        return 0;
    }
    if (f->ucx != MPIACC_ENGINE_UCX_CUDA) {
        snprintf(why, len, "MPICH's netmod is ucx (%s) but %s", from, f->ucx_why[0] ? f->ucx_why : "UCX cannot tell");
        return 0;
    }
    snprintf(why, len, "MPICH's UCX netmod (%s), %s, %s", from, f->ucx_why,
             f->nolocal == 1 ? "MPIR_CVAR_NOLOCAL=1" : "every process alone on its node");
    return 1;
}

int mpiacc_engine_agree(int mine, MPI_Comm comm)
{
    int all = 0;
    if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return 0;
    return all == 1;
}

/* ---- the facts ------------------------------------------------------------------ */

/* A control variable's index and datatype; 0 when MPI_T does not have it. */
static int cvar_find(const char *name, int *idx, MPI_Datatype *dt)
{
    char n[128], d[8];
    int nl = sizeof n, dl = sizeof d, verb, bind, scope;
    MPI_T_enum en;
    if (PMPI_T_cvar_get_index(name, idx) != MPI_SUCCESS) return 0;
    return PMPI_T_cvar_get_info(*idx, n, &nl, &verb, dt, &en, d, &dl, &bind, &scope) == MPI_SUCCESS;
}

/* An MPI_CHAR control variable into out[len] ("" when absent or unread). */
static void cvar_string(const char *name, char *out, size_t len)
{
    int idx, count = 0;
    MPI_Datatype dt;
    MPI_T_cvar_handle h;
    char *buf;
    out[0] = 0;
    if (!cvar_find(name, &idx, &dt) || dt != MPI_CHAR) return;
    if (PMPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS) return;
    if (count > 0 && (buf = calloc((size_t)count + 1, 1))) {
        if (PMPI_T_cvar_read(h, buf) == MPI_SUCCESS) snprintf(out, len, "%s", buf);
        free(buf);
    }
    PMPI_T_cvar_handle_free(&h);
}

/* An MPI_INT control variable, or -1. */
static int cvar_int(const char *name)
{
    int idx, count = 0, v = -1;
    MPI_Datatype dt;
    MPI_T_cvar_handle h;
    if (!cvar_find(name, &idx, &dt) || dt != MPI_INT) return -1;
    if (PMPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS) return -1;
    if (count != 1 || PMPI_T_cvar_read(h, &v) != MPI_SUCCESS) v = -1;
    PMPI_T_cvar_handle_free(&h);
    return v;
}

/* The first word of s (letters, digits, '_'), lower case, into out[len]. */
static void first_word(const char *s, char *out, size_t len)
{
    size_t n = 0;
    while (*s && isspace((unsigned char)*s)) s++;
    while (*s && (isalnum((unsigned char)*s) || *s == '_') && n + 1 < len) out[n++] = (char)tolower((unsigned char)*s++);
    out[n] = 0;
}

/* MPICH with ch4, and the build's first netmod ("MPICH Device: ch4:ucx ofi"). */
static void read_library(mpiacc_engine_facts_t *f, char *first, size_t len)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    const char *dev;
    first[0] = 0;
    if (PMPI_Get_library_version(lib, &n) != MPI_SUCCESS) return;
    lib[n < (int)sizeof lib ? n : (int)sizeof lib - 1] = 0;
    if (!strstr(lib, "MPICH Version:") || !(dev = strstr(lib, "MPICH Device:"))) return;
    dev += strlen("MPICH Device:");
    while (*dev == ' ' || *dev == '\t') dev++;
    if (strncmp(dev, "ch4:", 4) != 0) return;
    f->mpich_ch4 = 1;
    first_word(dev + 4, first, len);
}

/* The netmod MPICH uses: the control variable when it reads back (MPICH
 * 5.0.2's reads back "" whatever the environment says), else the variable
 * in the environment under MPICH's names, else the build's first. */
static void read_netmod(mpiacc_engine_facts_t *f)
{
    static const char *const env[] = {"MPIR_CVAR_CH4_NETMOD", "MPIR_PARAM_CH4_NETMOD", "MPICH_CH4_NETMOD"};
    char v[64], first[16];
    read_library(f, first, sizeof first);
    if (!f->mpich_ch4) return;
    cvar_string("MPIR_CVAR_CH4_NETMOD", v, sizeof v);
    if (v[0]) {
        first_word(v, f->netmod, sizeof f->netmod);
        snprintf(f->netmod_from, sizeof f->netmod_from, "MPI_T MPIR_CVAR_CH4_NETMOD");
        return;
    }
    for (int i = 0; i < 3; i++) {
        const char *s = getenv(env[i]);
        if (s && *s) {
            first_word(s, f->netmod, sizeof f->netmod);
            snprintf(f->netmod_from, sizeof f->netmod_from, "%s", env[i]);
            return;
        }
    }
    snprintf(f->netmod, sizeof f->netmod, "%s", first);
    snprintf(f->netmod_from, sizeof f->netmod_from, "the build's first netmod");
}

static int read_nolocal(void)
{
    static const char *const env[] = {"MPIR_CVAR_NOLOCAL", "MPIR_PARAM_NOLOCAL", "MPICH_NOLOCAL"};
    int v = cvar_int("MPIR_CVAR_NOLOCAL");
    if (v >= 0) return v != 0;
    for (int i = 0; i < 3; i++) {
        const char *s = getenv(env[i]);
        if (s && *s) return atoi(s) != 0;
    }
    return -1;
}

/* Collective over MPI_COMM_WORLD. */
static int alone_on_node(void)
{
    MPI_Comm node = MPI_COMM_NULL;
    int n = 0;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 0;
    PMPI_Comm_size(node, &n);
    PMPI_Comm_free(&node);
    return n == 1;
}

static void gather_facts(mpiacc_engine_facts_t *f)
{
    int prov = 0, t_up;
    memset(f, 0, sizeof *f);
    f->ucx = MPIACC_ENGINE_UCX_UNKNOWN;
    f->staged = mpiacc_env_enum("MPIACC_TRANSPORT") == 1; /* auto|staged */
    t_up = PMPI_T_init_thread(MPI_THREAD_SINGLE, &prov) == MPI_SUCCESS;
    if (t_up) {
        read_netmod(f);
        f->nolocal = read_nolocal();
        PMPI_T_finalize();
    } else {
        f->nolocal = -1;
    }
    f->alone = alone_on_node(); /* collective: every process, whatever its answer */
    /* the probe (about a millisecond) only where its answer can matter */
    if (!f->staged && f->mpich_ch4 && !strcmp(f->netmod, "ucx") && (f->nolocal == 1 || f->alone))
        f->ucx = mpiacc_engine_ucx_probe(f->ucx_why, sizeof f->ucx_why);
    else snprintf(f->ucx_why, sizeof f->ucx_why, "UCX was not asked");
}

/* ---- UCX's false alarms ------------------------------------------------------------- */

int mpiacc_engine_ucx_harmless(const char *file, int is_error, const char *text)
{
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    return is_error && base && text && !strcmp(base, "cuda_ipc_cache.c") &&
           !strncmp(text, "cuIpcOpenMemHandle() failed: ", 29) && strstr(text, "already mapped");
}

/* ---- the table -------------------------------------------------------------------- */

static int probe(void)
{
    mpiacc_engine_facts_t f;
    char why[384];
    int mine, all, rank = 0;
    mpiacc_engine_ucx_quiet(); /* before any device message: UCX's false alarms hidden */
    gather_facts(&f);
    /* MPI_ANY_SOURCE receives through a matched probe on MPICH's UCX
     * netmod, whatever the device path (core.h; src/protocol/wildcard.c) */
    mpiacc_core_wildcard_probe = f.mpich_ch4 && !strcmp(f.netmod, "ucx");
    if (mpiacc_core_wildcard_probe)
        MPIACC_LOG_ONCE(MPIACC_LOG_INFO, "wildcard probe",
                        "MPI_ANY_SOURCE receives are matched with MPI_Improbe and MPI_Imrecv (MPICH's UCX netmod "
                        "loses a wildcard receive whose message is already waiting at UCX)");
    mine = mpiacc_engine_rule(&f, why, sizeof why);
    all = mpiacc_engine_agree(mine, MPI_COMM_WORLD);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    kinds = all ? 1u << MPIACC_KIND_CUDA : 0;
    if (all) snprintf(reason_text, sizeof reason_text, "CUDA device messages go to MPI as device memory: %s", why);
    else if (mine)
        snprintf(reason_text, sizeof reason_text,
                 "staged through host memory: another process cannot hand device memory to MPI (MPIACC_LOG=info "
                 "shows its reason)");
    else snprintf(reason_text, sizeof reason_text, "staged through host memory: %s", why);
    if (mpiacc_engine_test_kinds) {
        kinds = mpiacc_engine_test_kinds;
        snprintf(reason_text, sizeof reason_text, "forced by a test hook (kinds 0x%x)", kinds);
    }
    if (rank == 0 || (!mine && !mpiacc_engine_test_kinds)) MPIACC_LOG(MPIACC_LOG_INFO, "transport: %s", reason_text);
    return MPI_SUCCESS;
}

static int takes(int kind)
{
    return kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX && (kinds >> kind & 1u);
}

static const char *reason(void) { return reason_text; }

static void finalize(void)
{
    kinds = 0;
    mpiacc_core_wildcard_probe = 0;
    snprintf(reason_text, sizeof reason_text, "not decided (MPI is finalized)");
}

const mpiacc_engine_mpi_t mpiacc_engine_mpi = {
    .name = "MPI transport",
    .probe = probe,
    .takes = takes,
    .reason = reason,
    .finalize = finalize,
};
