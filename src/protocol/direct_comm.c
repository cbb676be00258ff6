/* protocol/direct_comm.c: direct communicators (see direct_comm.h), and
 * the IPC table lookup of direct.h (both for src/coll/ipc*.c). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/env.h"
#include "direct.h"

mpiacc_proto_cfg_t mpiacc_proto_cfg;
atomic_int mpiacc_proto_comm_any;
atomic_int mpiacc_proto_comm_live;

static int keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t zombie_lock = PTHREAD_MUTEX_INITIALIZER;
static mpiacc_proto_comm_t *zombies;
static atomic_int noted[MPIACC_PROTO_NOTE_MAX];

/* ---- settings -------------------------------------------------------------- */

/* Through the environment parser (src/core/env.c: MPIACC_DIRECT, MPIACC_IPC). */
static void read_env(mpiacc_proto_cfg_t *c)
{
    c->world = mpiacc_env_bool("MPIACC_DIRECT");
    c->ipc = mpiacc_env_bool("MPIACC_IPC");
}

/* ---- the IPC table (direct.h) ------------------------------------------------ */

static const struct mpiacc_backend_ipc *test_table[MPIACC_KIND_MAX];

void mpiacc_proto_dx_ipc_test_table(int kind, const struct mpiacc_backend_ipc *t)
{
    if (kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX) test_table[kind] = t;
}

const struct mpiacc_backend_ipc *mpiacc_proto_dx_ipc_for(int kind, const mpiacc_backend_t *be)
{
    if (kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX && test_table[kind]) return test_table[kind];
    return be ? be->ipc : NULL;
}

void mpiacc_proto_note(mpiacc_proto_note_t cause, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    if (mpiacc_log_level < MPIACC_LOG_INFO || atomic_exchange(&noted[cause], 1)) return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    mpiacc_log_write(MPIACC_LOG_INFO, "direct communicators: %s (reported once)", line);
}

/* ---- process-wide state (MPI_Init) ------------------------------------------------ */

static MPI_Group world_group = MPI_GROUP_NULL;
static int world_size;
static unsigned char *world_same_node;     /* [world_size] */
static int initialized;

/* world_same_node[r] for every rank r of MPI_COMM_WORLD (collective over
 * it: MPI_Comm_split_type, once). */
static int world_node_map(void)
{
    int mpi_errno = MPI_SUCCESS, n = 0, *from = NULL, *to = NULL;
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Group gnode = MPI_GROUP_NULL;

    MPIACC_CHECK(PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPIACC_CHECK(PMPI_Comm_size(node, &n));
    if (!(from = malloc(sizeof *from * (size_t)n)) || !(to = malloc(sizeof *to * (size_t)n)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a node map of %d ranks", n);
    for (int i = 0; i < n; i++) from[i] = i;
    MPIACC_CHECK(PMPI_Comm_group(node, &gnode));
    MPIACC_CHECK(PMPI_Group_translate_ranks(gnode, n, from, world_group, to));
    for (int i = 0; i < n; i++)
        if (to[i] >= 0 && to[i] < world_size) world_same_node[to[i]] = 1;
fn_exit:
    if (gnode != MPI_GROUP_NULL) PMPI_Group_free(&gnode);
    if (node != MPI_COMM_NULL) PMPI_Comm_free(&node);
    free(from);
    free(to);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- references -------------------------------------------------------------- */

static void destroy(mpiacc_proto_comm_t *dc)
{
    if (dc->data != MPI_COMM_NULL) {
        atomic_fetch_sub(&mpiacc_proto_comm_live, 1);
        PMPI_Comm_free(&dc->data);
    }
    free(dc->same_node);
    free(dc);
}

void mpiacc_proto_comm_ref(mpiacc_proto_comm_t *dc)
{
    atomic_fetch_add(&dc->refs, 1);
}

/* May run inside MPI's progress engine: the last reference only queues the
 * hidden communicators for mpiacc_proto_comm_sweep. */
void mpiacc_proto_comm_unref(mpiacc_proto_comm_t *dc)
{
    if (atomic_fetch_sub(&dc->refs, 1) != 1) return;
    pthread_mutex_lock(&zombie_lock);
    dc->zombie_next = zombies;
    zombies = dc;
    pthread_mutex_unlock(&zombie_lock);
}

void mpiacc_proto_comm_sweep(void)
{
    mpiacc_proto_comm_t *dc;
    pthread_mutex_lock(&zombie_lock);
    dc = zombies;
    zombies = NULL;
    pthread_mutex_unlock(&zombie_lock);
    while (dc) {
        mpiacc_proto_comm_t *next = dc->zombie_next;
        destroy(dc);
        dc = next;
    }
}

/* The keyval's delete callback: the user's communicator lets go. */
static int delete_fn(MPI_Comm comm, int kv, void *value, void *extra)
{
    mpiacc_proto_comm_unref(value);
    mpiacc_proto_comm_sweep();
    return MPI_SUCCESS;
}

/* ---- lookup, make, drop --------------------------------------------------------- */

mpiacc_proto_comm_t *mpiacc_proto_comm_lookup_slow(MPI_Comm comm)
{
    void *v = NULL;
    int flag = 0;
    if (comm == MPI_COMM_NULL || keyval == MPI_KEYVAL_INVALID) return NULL;
    if (PMPI_Comm_get_attr(comm, keyval, &v, &flag) != MPI_SUCCESS || !flag) return NULL;
    return v;
}

/* A hidden communicator: same group and ranks as comm, but neither its
 * attributes nor its info (MPI_Comm_create does not copy them, unlike
 * MPI_Comm_dup); errors come back to mpiacc. */
static int hidden_comm(MPI_Comm comm, MPI_Group g, const char *name, MPI_Comm *out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIACC_CHECK(PMPI_Comm_create(comm, g, out));
    MPIACC_CHECK(PMPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN));
    PMPI_Comm_set_name(*out, name);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* same_node from MPI_COMM_WORLD's node map (local; a rank outside
 * MPI_COMM_WORLD counts as on another node, this process as on its own). */
static int map_ranks(mpiacc_proto_comm_t *dc, MPI_Group g)
{
    int mpi_errno = MPI_SUCCESS, *from = NULL, *to = NULL;
    if (!(from = malloc(sizeof *from * (size_t)dc->size)) || !(to = malloc(sizeof *to * (size_t)dc->size)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a rank map of %d ranks", dc->size);
    for (int i = 0; i < dc->size; i++) from[i] = i;
    MPIACC_CHECK(PMPI_Group_translate_ranks(g, dc->size, from, world_group, to));
    for (int i = 0; i < dc->size; i++) {
        int w = to[i];
        if (w != MPI_UNDEFINED && w >= 0 && w < world_size) dc->same_node[i] = world_same_node[w];
    }
    dc->same_node[dc->rank] = 1;
fn_exit:
    free(from);
    free(to);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_comm_make(MPI_Comm comm)
{
    int mpi_errno = MPI_SUCCESS, inter = 0;
    mpiacc_proto_comm_t *dc = NULL;
    MPI_Group g = MPI_GROUP_NULL;

    mpiacc_proto_comm_sweep();
    if (comm == MPI_COMM_NULL || mpiacc_proto_comm_lookup_slow(comm)) goto fn_exit;
    if (!initialized) MPIACC_FAIL(MPIACC_ERRK_INTERN, "direct communicators: not initialized");
    MPIACC_CHECK(PMPI_Comm_test_inter(comm, &inter));
    if (inter) {
        mpiacc_proto_note(MPIACC_PROTO_NOTE_INTERCOMM, "intercommunicators are never direct");
        goto fn_exit;
    }
    if (!(dc = calloc(1, sizeof *dc))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a direct communicator");
    dc->data = MPI_COMM_NULL;
    atomic_init(&dc->refs, 1);
    MPIACC_CHECK(PMPI_Comm_rank(comm, &dc->rank));
    MPIACC_CHECK(PMPI_Comm_size(comm, &dc->size));
    if (!(dc->same_node = calloc((size_t)dc->size, 1)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a node map of %d ranks", dc->size);
    MPIACC_CHECK(PMPI_Comm_group(comm, &g));
    MPIACC_CHECK(map_ranks(dc, g));
    MPIACC_CHECK(hidden_comm(comm, g, "mpiacc direct data", &dc->data));
    atomic_fetch_add(&mpiacc_proto_comm_live, 1);
    mpi_errno = PMPI_Comm_set_attr(comm, keyval, dc);
    if (mpi_errno != MPI_SUCCESS) goto fn_fail;
    atomic_store(&mpiacc_proto_comm_any, 1);
    MPIACC_LOG(MPIACC_LOG_DEBUG, "communicator made direct (%d ranks)", dc->size);
fn_exit:
    if (g != MPI_GROUP_NULL) PMPI_Group_free(&g);
    return mpi_errno;
fn_fail:
    if (dc) destroy(dc);
    goto fn_exit;
}

int mpiacc_proto_comm_drop(MPI_Comm comm)
{
    if (!mpiacc_proto_comm_lookup_slow(comm)) return MPI_SUCCESS;
    return PMPI_Comm_delete_attr(comm, keyval); /* delete_fn lets go */
}

int mpiacc_proto_comm_set(MPI_Comm comm, int want)
{
    int mpi_errno = MPI_SUCCESS, inter = 0, mine[2] = {want, -want}, all[2];
    if (comm == MPI_COMM_NULL) goto fn_exit;
    MPIACC_CHECK(PMPI_Comm_test_inter(comm, &inter));
    if (!inter) { /* (an intercommunicator never becomes direct) */
        MPIACC_CHECK(PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm));
        if (all[0] != -all[1])
            MPIACC_FAIL(MPIACC_ERRK_ARG,
                        "info key %s is %s on this process but not on every process of the communicator (its "
                        "value must be the same everywhere; absent counts as false)",
                        MPIACC_DIRECT_INFO, want ? "true" : "false or absent");
    }
    MPIACC_CHECK(want ? mpiacc_proto_comm_make(comm) : mpiacc_proto_comm_drop(comm));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_proto_comm_info(MPI_Info info, int *value)
{
    static const char *const yes[] = {"true", "1", "yes", "on"}, *const no[] = {"false", "0", "no", "off"};
    int mpi_errno = MPI_SUCCESS, flag = 0;
    char v[MPI_MAX_INFO_VAL + 1];
    int len = MPI_MAX_INFO_VAL;

    *value = -1;
    if (info == MPI_INFO_NULL) goto fn_exit;
    MPIACC_CHECK(PMPI_Info_get_string(info, MPIACC_DIRECT_INFO, &len, v, &flag));
    if (!flag) goto fn_exit;
    for (int i = 0; i < 4 && *value < 0; i++) {
        if (!strcasecmp(v, yes[i])) *value = 1;
        else if (!strcasecmp(v, no[i])) *value = 0;
    }
    if (*value < 0)
        MPIACC_FAIL(MPIACC_ERRK_ARG, "info key %s has the value \"%s\" (use true or false)", MPIACC_DIRECT_INFO,
                    v);
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

/* ---- init / finalize ------------------------------------------------------------ */

int mpiacc_proto_comm_init(void)
{
    int mpi_errno = MPI_SUCCESS, mine[2], all[2];
    read_env(&mpiacc_proto_cfg);
    atomic_store(&mpiacc_proto_comm_any, 0);
    for (int i = 0; i < MPIACC_PROTO_NOTE_MAX; i++) atomic_store(&noted[i], 0);
    /* Not copied by MPI_Comm_dup & co. themselves: mpiacc's wrappers decide
     * (MPI_Comm_idup, which mpiacc does not wrap, gives a plain one). */
    MPIACC_CHECK(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL));
    /* Once for the process: the node map and whether MPIACC_DIRECT agrees
     * (collective over MPI_COMM_WORLD). */
    MPIACC_CHECK(PMPI_Comm_group(MPI_COMM_WORLD, &world_group));
    MPIACC_CHECK(PMPI_Comm_size(MPI_COMM_WORLD, &world_size));
    if (!(world_same_node = calloc((size_t)world_size, 1)))
        MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a node map of %d ranks", world_size);
    MPIACC_CHECK(world_node_map());
    initialized = 1;
    mine[0] = mpiacc_proto_cfg.world;
    mine[1] = -mpiacc_proto_cfg.world;
    MPIACC_CHECK(PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (all[0] != -all[1]) {
        MPIACC_LOG(MPIACC_LOG_WARN,
                   "MPIACC_DIRECT is %s on this process but not on every process: MPI_COMM_WORLD is not direct "
                   "(set it the same way everywhere, e.g. mpiexec -genv MPIACC_DIRECT 1)",
                   mpiacc_proto_cfg.world ? "on" : "off");
        mpiacc_proto_cfg.world = 0;
    }
    if (mpiacc_proto_cfg.world) MPIACC_CHECK(mpiacc_proto_comm_make(MPI_COMM_WORLD));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_proto_comm_finalize(void)
{
    if (keyval == MPI_KEYVAL_INVALID) return;
    mpiacc_proto_comm_drop(MPI_COMM_WORLD);
    mpiacc_proto_comm_drop(MPI_COMM_SELF);
    mpiacc_proto_comm_sweep();
    PMPI_Comm_free_keyval(&keyval);
    keyval = MPI_KEYVAL_INVALID;
    atomic_store(&mpiacc_proto_comm_any, 0);
    if (world_group != MPI_GROUP_NULL) PMPI_Group_free(&world_group);
    free(world_same_node);
    world_same_node = NULL;
    initialized = 0;
}
