/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/comm.c: the per-communicator state of device collectives (see
 * comm.h): made at a communicator's first device collective, kept as an
 * attribute of it, freed with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "core/env.h"

const struct mpiacc_backend_coll *mpiacc_coll_test_coll[MPIACC_KIND_MAX];
const struct mpiacc_backend_ipc *mpiacc_coll_test_ipc[MPIACC_KIND_MAX];

const struct mpiacc_backend_coll *mpiacc_coll_table(int kind, const mpiacc_backend_t *be)
{
    if (kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX && mpiacc_coll_test_coll[kind])
        return mpiacc_coll_test_coll[kind];
    return be ? be->coll : NULL;
}

const struct mpiacc_backend_ipc *mpiacc_coll_ipc_table(int kind, const mpiacc_backend_t *be)
{
    if (kind > MPIACC_KIND_NONE && kind < MPIACC_KIND_MAX && mpiacc_coll_test_ipc[kind])
        return mpiacc_coll_test_ipc[kind];
    return be ? be->ipc : NULL;
}

/* ---- the keyval, the lists ----------------------------------------------------- */

static pthread_mutex_t lists = PTHREAD_MUTEX_INITIALIZER; /* keyval (made), all, zombies */
static atomic_int keyval = MPI_KEYVAL_INVALID;
static mpiacc_coll_comm_t *all, *zombies;
static atomic_int nzombies;

static void destroy(mpiacc_coll_comm_t *cs)
{
    pthread_mutex_lock(&cs->lock);
    if (cs->cc) cs->ct->comm_free(cs->cc);
    cs->cc = NULL;
    pthread_mutex_unlock(&cs->lock);
    if (cs->hidden != MPI_COMM_NULL) PMPI_Comm_free(&cs->hidden);
    pthread_mutex_destroy(&cs->lock);
    free(cs);
}

/* Drops a reference; the last one frees the state now (an application
 * call: the attribute's deletion) or leaves it to the sweep. */
static void drop(mpiacc_coll_comm_t *cs, int now)
{
    if (atomic_fetch_sub(&cs->refs, 1) != 1) return;
    if (now) {
        destroy(cs);
        return;
    }
    pthread_mutex_lock(&lists);
    cs->zombie = 1;
    cs->next = zombies;
    zombies = cs;
    atomic_fetch_add(&nzombies, 1);
    pthread_mutex_unlock(&lists);
}

void mpiacc_coll_comm_ref(mpiacc_coll_comm_t *cs) { atomic_fetch_add(&cs->refs, 1); }
void mpiacc_coll_comm_unref(mpiacc_coll_comm_t *cs) { drop(cs, 0); }

void mpiacc_coll_comm_sweep(void)
{
    mpiacc_coll_comm_t *z;
    if (atomic_load_explicit(&nzombies, memory_order_relaxed) == 0) return;
    pthread_mutex_lock(&lists);
    z = zombies;
    zombies = NULL;
    atomic_store(&nzombies, 0);
    pthread_mutex_unlock(&lists);
    while (z) {
        mpiacc_coll_comm_t *n = z->next;
        destroy(z);
        z = n;
    }
}

static void unlist(mpiacc_coll_comm_t *cs)
{
    pthread_mutex_lock(&lists);
    for (mpiacc_coll_comm_t **p = &all; *p; p = &(*p)->next)
        if (*p == cs) {
            *p = cs->next;
            break;
        }
    cs->listed = 0;
    pthread_mutex_unlock(&lists);
}

/* MPI_Comm_free (& co.) of the application's communicator. */
static int delete_fn(MPI_Comm comm, int kv, void *val, void *extra)
{
    mpiacc_coll_comm_t *cs = val;
    (void)comm, (void)kv, (void)extra;
    unlist(cs);
    drop(cs, 1);
    return MPI_SUCCESS;
}

static int keyval_get(int *kv)
{
    int mpi_errno = MPI_SUCCESS, k;
    if ((*kv = atomic_load_explicit(&keyval, memory_order_acquire)) != MPI_KEYVAL_INVALID) return MPI_SUCCESS;
    pthread_mutex_lock(&lists);
    if ((k = atomic_load(&keyval)) == MPI_KEYVAL_INVALID) {
        mpi_errno = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k, NULL);
        if (mpi_errno == MPI_SUCCESS) atomic_store_explicit(&keyval, k, memory_order_release);
    }
    *kv = k;
    pthread_mutex_unlock(&lists);
    return mpi_errno;
}

void mpiacc_coll_comm_fail_locked(mpiacc_coll_comm_t *cs, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (cs->broken) return;
    cs->broken = mpiacc_err_class(err);
    if (!cs->broken) cs->broken = MPI_ERR_OTHER;
    msg[0] = 0;
    PMPI_Error_string(err, msg, &len);
    MPIACC_LOG(MPIACC_LOG_WARN,
               "%s failed on a communicator (%s): its %s communicator is aborted, and every later device collective "
               "on it fails with this error class",
               cs->ct ? cs->ct->name : "the collective engine", msg, cs->ct ? cs->ct->name : "engine");
    if (cs->cc) cs->ct->comm_abort(cs->cc);
    cs->cc = NULL;
}

/* ---- making the state ------------------------------------------------------------ */

/* This process's facts. */
static void my_facts(mpiacc_coll_comm_t *cs, const mpiacc_attrs_t *a, mpiacc_coll_facts_t *f, int *dev)
{
    const char *why = NULL;
    memset(f, 0, sizeof *f);
    f->want = mpiacc_env_enum("MPIACC_COLL_ENGINE"); /* auto|nccl|ipc|staged: MPIACC_COLL_ENGINE_* */
    f->has_ipc = cs->ipc != NULL && cs->ipc->export_buf && cs->ipc->import_copy;
    f->has_coll = cs->ct && cs->ct->load && cs->ct->load(&why);
    if (!f->has_coll && cs->ct)
        MPIACC_LOG_ONCE(MPIACC_LOG_INFO, "coll engine absent", "collectives on device buffers: %s unavailable (%s)",
                        cs->ct->name, why ? why : "?");
    if (f->has_coll && cs->ct->device(a, dev, f->uuid) == MPI_SUCCESS) f->dev_ok = 1;
}

/* NCCL's communicator, made by every process: 1 when every one has it. */
static int engine_comm(mpiacc_coll_comm_t *cs, int dev, int *all_ok)
{
    int mpi_errno = MPI_SUCCESS, ok = 1, err;
    struct {
        int ok;
        unsigned char id[MPIACC_BCOLL_ID_BYTES];
    } msg;
    memset(&msg, 0, sizeof msg);
    *all_ok = 0;
    if (cs->rank == 0) {
        err = cs->ct->unique_id(msg.id);
        msg.ok = err == MPI_SUCCESS;
        if (err != MPI_SUCCESS) MPIACC_LOG(MPIACC_LOG_WARN, "%s: no unique id: device collectives take another path",
                                           cs->ct->name);
    }
    MPIACC_CHECK(PMPI_Bcast(&msg, (int)sizeof msg, MPI_BYTE, 0, cs->hidden));
    if (!msg.ok) goto fn_exit;
    err = cs->ct->comm_init(dev, cs->size, cs->rank, msg.id, cs->hidden, &cs->cc);
    if (err != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        s[0] = 0;
        PMPI_Error_string(err, s, &len);
        MPIACC_LOG(MPIACC_LOG_WARN, "%s communicator not made (%s): device collectives take another path",
                   cs->ct->name, s);
        ok = 0;
    }
    MPIACC_CHECK(PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, cs->hidden));
    *all_ok = ok;
fn_exit:
    if (!*all_ok && cs->cc) cs->ct->comm_free(cs->cc), cs->cc = NULL;
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

static int make(mpiacc_coll_op_t *c, int kind, mpiacc_coll_comm_t **out)
{
    int mpi_errno = MPI_SUCCESS, dev = -1, leader, all_ok, kv;
    const mpiacc_backend_t *be = mpiacc_backend_get(kind);
    const mpiacc_attrs_t *a = &c->b[c->b[MPIACC_COLL_R].used ? MPIACC_COLL_R : MPIACC_COLL_S].a;
    mpiacc_coll_facts_t *f = NULL, mine;
    mpiacc_coll_comm_t *cs = calloc(1, sizeof *cs);
    MPI_Comm node = MPI_COMM_NULL;
    const char *why = NULL;
    *out = NULL;
    if (!cs) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory for a communicator's collective state");
    atomic_init(&cs->refs, 1);
    pthread_mutex_init(&cs->lock, NULL);
    cs->hidden = MPI_COMM_NULL;
    cs->user = c->a.comm;
    cs->kind = kind;
    cs->ct = mpiacc_coll_table(kind, be);
    cs->ipc = mpiacc_coll_ipc_table(kind, be);
    MPIACC_CHECK(keyval_get(&kv));
    /* MPI matches a communicator's collectives in call order: those queued
     * before this one go first */
    mpiacc_coll_wait_turn(c->a.comm);
    MPIACC_CHECK(PMPI_Comm_dup(c->a.comm, &cs->hidden));
    PMPI_Comm_rank(cs->hidden, &cs->rank);
    PMPI_Comm_size(cs->hidden, &cs->size);
    my_facts(cs, a, &mine, &dev);
    MPIACC_CHECK(mpiacc_core_host_split(cs->hidden, &node)); /* the host, not MPICH's NOLOCAL view */
    MPIACC_CHECK(PMPI_Allreduce(&cs->rank, &leader, 1, MPI_INT, MPI_MIN, node));
    mine.node = leader;
    if (!(f = malloc(sizeof *f * (size_t)cs->size))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory");
    MPIACC_CHECK(PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, f, (int)sizeof mine, MPI_BYTE, cs->hidden));
    cs->one_node = 1;
    for (int i = 0; i < cs->size; i++) cs->one_node &= f[i].node == f[0].node;
    cs->engine = mpiacc_coll_engine_choose(f, cs->size, &why);
    if (cs->engine == MPIACC_COLL_ENGINE_NCCL) {
        MPIACC_CHECK(engine_comm(cs, dev, &all_ok));
        if (!all_ok) { /* the next engine, as if NCCL were absent */
            int want = f[0].want;
            for (int i = 0; i < cs->size; i++) f[i].has_coll = 0;
            cs->engine = want == MPIACC_COLL_ENGINE_NCCL ? MPIACC_COLL_ENGINE_STAGED
                                                          : mpiacc_coll_engine_choose(f, cs->size, &why);
            why = "the NCCL communicator could not be made on every process";
        }
    }
    /* the duplicate carries only the IPC engine's exchanges */
    if (cs->engine != MPIACC_COLL_ENGINE_IPC) PMPI_Comm_free(&cs->hidden);
    if (mpiacc_log_level >= MPIACC_LOG_INFO) {
        char key[64];
        snprintf(key, sizeof key, "coll engine %d %s", cs->engine, why ? why : "");
        MPIACC_LOG_ONCE(MPIACC_LOG_INFO, key,
                        "device collectives on a communicator of %d processes (%s): %s%s%s (reported once per "
                        "engine and cause)",
                        cs->size, cs->one_node ? "one node" : "several nodes", mpiacc_coll_engine_name(cs->engine),
                        why ? ": " : "", why ? why : "");
    }
    MPIACC_CHECK(PMPI_Comm_set_attr(c->a.comm, kv, cs));
    pthread_mutex_lock(&lists);
    cs->next = all;
    all = cs;
    cs->listed = 1;
    pthread_mutex_unlock(&lists);
    *out = cs;
    cs = NULL;
fn_exit:
    if (node != MPI_COMM_NULL) PMPI_Comm_free(&node);
    free(f);
    if (cs) destroy(cs);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_coll_comm_get(mpiacc_coll_op_t *c, int kind, mpiacc_coll_comm_t **out)
{
    int mpi_errno = MPI_SUCCESS, flag = 0, kv;
    void *val = NULL;
    *out = NULL;
    mpiacc_coll_comm_sweep();
    MPIACC_CHECK(keyval_get(&kv));
    MPIACC_CHECK(PMPI_Comm_get_attr(c->a.comm, kv, &val, &flag));
    if (!flag) MPIACC_CHECK(make(c, kind, (mpiacc_coll_comm_t **)&val));
    if (val && ((mpiacc_coll_comm_t *)val)->kind == kind) *out = val;
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

void mpiacc_coll_comm_finalize(void)
{
    int kv = atomic_load(&keyval);
    if (kv == MPI_KEYVAL_INVALID) return;
    for (;;) {
        mpiacc_coll_comm_t *cs;
        MPI_Comm user;
        pthread_mutex_lock(&lists);
        cs = all;
        user = cs ? cs->user : MPI_COMM_NULL;
        pthread_mutex_unlock(&lists);
        if (!cs) break;
        /* the delete callback unlists and drops the communicator's reference */
        if (PMPI_Comm_delete_attr(user, kv) != MPI_SUCCESS) {
            unlist(cs);
            drop(cs, 1);
        }
    }
    mpiacc_coll_comm_sweep();
    pthread_mutex_lock(&lists);
    PMPI_Comm_free_keyval(&kv);
    atomic_store(&keyval, MPI_KEYVAL_INVALID);
    pthread_mutex_unlock(&lists);
}
