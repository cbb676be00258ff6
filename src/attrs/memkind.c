/*
 * attrs/memkind.c: MPI 4.1 memory allocation kinds (the "Memory Allocation
 * Kinds" side document's kind strings) and the classification of untagged
 * buffers.
 *
 *  - mpi_memory_alloc_kinds, in the info MPI_Comm_get_info returns: the
 *    kinds this process supports, MPI's own ("system", "mpi") plus
 *    "cuda:device", "cuda:host" and "cuda:managed" when mpiacc's CUDA
 *    backend runs here (it is started to find out).  OpenCL has no standard
 *    kind (a cl_mem is no pointer): OpenCL buffers are always described by
 *    tagged datatypes (MPIACC_BUF_OPENCL).
 *  - mpi_assert_memory_alloc_kinds, given to MPI_Comm_set_info,
 *    MPI_Comm_dup_with_info, MPI_Comm_split_type or
 *    MPI_Dist_graph_create[_adjacent] (kept by MPI_Comm_dup): when every
 *    kind listed is a CUDA one ("cuda", "cuda:device", "cuda:host",
 *    "cuda:managed"), every buffer of an untagged datatype on that
 *    communicator is handled as MPIACC_BUF_CUDA with the default-stream
 *    dependency (CUDA's unified addressing lets the device reach pinned and
 *    managed memory by pointer).  Any other list ("system", a mix) changes
 *    nothing; tagged datatypes keep their own attributes.
 *
 * mpiacc_attrs_untagged_kind is the one place that classifies an untagged
 * buffer; a pointer-query mode would be a second source of answers there,
 * and would raise mpiacc_attrs_untagged_classify as the assertions do.
 */
#include <stdlib.h>
#include <string.h>

#include "attrs.h"

atomic_int mpiacc_attrs_untagged_classify;

static int comm_kv = MPI_KEYVAL_INVALID;

#define KEY_ASSERT "mpi_assert_memory_alloc_kinds"
#define KEY_KINDS "mpi_memory_alloc_kinds"

/* The attribute value: the kind forced on untagged buffers, as a pointer. */
static int copy_fn(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)kv, (void)extra;
    *(void **)out = in;
    *flag = 1;
    atomic_fetch_add(&mpiacc_attrs_untagged_classify, 1);
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm, (void)kv, (void)val, (void)extra;
    atomic_fetch_sub(&mpiacc_attrs_untagged_classify, 1);
    return MPI_SUCCESS;
}

int mpiacc_attrs_memkind_init(void)
{
    return PMPI_Comm_create_keyval(copy_fn, delete_fn, &comm_kv, NULL);
}

void mpiacc_attrs_memkind_finalize(void)
{
    if (comm_kv != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&comm_kv);
}

/* The kind a list of kinds forces on untagged buffers (MPIACC_KIND_NONE:
 * none).  Kinds are separated by commas; a kind is "name" or
 * "name:restrictor". */
static int forced_by(const char *list)
{
    int n = 0, all_cuda = 1;
    char *copy = strdup(list), *save = NULL, *tok;
    if (!copy) return MPIACC_KIND_NONE;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t l;
        while (*tok == ' ') tok++;
        l = strlen(tok);
        while (l && tok[l - 1] == ' ') tok[--l] = 0;
        if (!l) continue;
        n++;
        if (strcmp(tok, "cuda") && strncmp(tok, "cuda:", 5)) all_cuda = 0;
    }
    free(copy);
    return n > 0 && all_cuda ? MPIACC_KIND_CUDA : MPIACC_KIND_NONE;
}

int mpiacc_attrs_memkind_set(MPI_Comm comm, MPI_Info info)
{
    int mpi_errno = MPI_SUCCESS, flag = 0, len = 0, kind;
    char *v = NULL;
    void *old = NULL;

    if (comm_kv == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL || info == MPI_INFO_NULL) goto fn_exit;
    MPIACC_CHECK(PMPI_Info_get_string(info, KEY_ASSERT, &len, NULL, &flag));
    if (!flag) goto fn_exit; /* not given: what the communicator had stays */
    if (!(v = malloc((size_t)len + 1))) MPIACC_FAIL(MPIACC_ERRK_NOMEM, "out of memory reading an info value");
    MPIACC_CHECK(PMPI_Info_get_string(info, KEY_ASSERT, &len, v, &flag));
    kind = forced_by(v);
    MPIACC_CHECK(PMPI_Comm_get_attr(comm, comm_kv, &old, &flag));
    if (flag) MPIACC_CHECK(PMPI_Comm_delete_attr(comm, comm_kv));
    if (kind != MPIACC_KIND_NONE) {
        MPIACC_CHECK(PMPI_Comm_set_attr(comm, comm_kv, (void *)(intptr_t)kind));
        atomic_fetch_add(&mpiacc_attrs_untagged_classify, 1);
        MPIACC_LOG(MPIACC_LOG_INFO, "%s=%s on a communicator: its untagged buffers are %s memory", KEY_ASSERT, v,
                   mpiacc_kind_name(kind));
    }
fn_exit:
    free(v);
    return mpi_errno;
fn_fail:
    goto fn_exit;
}

int mpiacc_attrs_untagged_kind(MPI_Comm comm, const void *buf)
{
    void *v = NULL;
    int flag = 0;
    (void)buf; /* a pointer query would look at it */
    if (comm_kv == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        !atomic_load_explicit(&mpiacc_attrs_untagged_classify, memory_order_relaxed))
        return MPIACC_KIND_NONE;
    if (PMPI_Comm_get_attr(comm, comm_kv, &v, &flag) != MPI_SUCCESS || !flag) return MPIACC_KIND_NONE;
    return (int)(intptr_t)v;
}

/* Appends the kinds of `add` that `list` lacks (both comma-separated). */
static void merge(char *list, size_t n, const char *add)
{
    const char *p = add;
    while (*p) {
        size_t len = strcspn(p, ","), ll = strlen(list);
        const char *q = list;
        int found = 0;
        while (*q) {
            size_t l2 = strcspn(q, ",");
            if (l2 == len && !strncmp(q, p, len)) found = 1;
            q += l2 + (q[l2] == ',');
        }
        if (!found && len > 0 && ll + len + 2 < n) {
            if (ll) strcat(list, ",");
            strncat(list, p, len);
        }
        p += len + (p[len] == ',');
    }
}

int mpiacc_attrs_memkind_report(MPI_Comm comm, MPI_Info info)
{
    int mpi_errno = MPI_SUCCESS, flag = 0, len = 0;
    char list[512] = "", mine[128] = "system,mpi";
    (void)comm;

    if (info == MPI_INFO_NULL) goto fn_exit;
    MPIACC_CHECK(PMPI_Info_get_string(info, KEY_KINDS, &len, NULL, &flag));
    if (flag && len < (int)sizeof list) {
        len = (int)sizeof list;
        MPIACC_CHECK(PMPI_Info_get_string(info, KEY_KINDS, &len, list, &flag));
    }
    if (mpiacc_backend_get(MPIACC_KIND_CUDA)) strcat(mine, ",cuda:device,cuda:host,cuda:managed");
    merge(list, sizeof list, mine);
    MPIACC_CHECK(PMPI_Info_set(info, KEY_KINDS, list));
fn_exit:
    return mpi_errno;
fn_fail:
    goto fn_exit;
}
