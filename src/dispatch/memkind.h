/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dispatch/memkind: which memory an UNTAGGED datatype's buffer is in.
 * mpiacc's model is that the datatype says where the buffer lives; two
 * opt-in ways let programs written for a "CUDA-aware MPI" pass a device
 * pointer with a plain datatype:
 *  - MPIACC_UVA=1: one CUDA pointer query per buffer (the backend table's
 *    classify entry), host answers cached per 4 KiB granule;
 *  - the MPI 4.1 info key mpi_assert_memory_alloc_kinds on a communicator:
 *    "cuda:device" (and/or "cuda:managed") alone makes every untagged buffer
 *    on it CUDA memory without a query; kinds without a device kind make
 *    them host memory without a query; a mix asks the pointer query.
 * Tagged datatypes (MPIACC_BUF_TYPE) always take precedence.
 * The kinds and their mapping are documented in include/mpiacc.h.
 */
#ifndef MPIACC_DISPATCH_MEMKIND_H_INCLUDED
#define MPIACC_DISPATCH_MEMKIND_H_INCLUDED

#include "attrs/attrs.h"
#include "pack/pack.h"
#include "util/pcache.h"

/* MPIACC_UVA at MPI_Init (1: pointer-query mode). */
extern int mpiacc_dispatch_uva;
/* Set (for good) once a communicator asserted memory allocation kinds. */
extern atomic_int mpiacc_dispatch_any_assert;
/* Granules classified as host memory (see memkind.c for the rule). */
extern mpiacc_util_pcache_t mpiacc_dispatch_host_pages;

/* MPI_Init, after the backends were handed over: reads MPIACC_UVA, starts
 * the CUDA backend when it is on, creates the communicator keyval. */
int mpiacc_dispatch_memkind_init(void);
void mpiacc_dispatch_memkind_finalize(void);

/*
 * THE function every data-moving call uses to learn what its buffer is:
 * the datatype's attributes (explicit tag first: mpiacc_attrs_get), and
 * for an untagged datatype, when classification is on, the communicator's
 * asserted kinds, else the pointer query: a CUDA device or managed buffer
 * gives kind MPIACC_KIND_CUDA with the owning device (has_device) and no
 * stream (the legacy default stream orders it, as for a CUDA-tagged
 * datatype without MPIACC_STREAM); host and pinned host memory give
 * MPIACC_KIND_NONE (the caller hands the call to MPI).  `buf` is the
 * address the application passed (MPI_BOTTOM/NULL: host).  Errors: the
 * attribute errors of mpiacc_attrs_get, a failed pointer query, or
 * (MPI_ERR_BUFFER) a host-typed buffer (untagged or MPIACC_BUF_HOST) that
 * is a live device handle mpiacc has seen (a cl_mem passed without
 * MPIACC_BUF_OPENCL: MPI would write through the handle).  The datatype's
 * attributes come from its facts (facts.c: read once per datatype and
 * attribute change).
 */
int mpiacc_dispatch_attrs(MPI_Datatype dt, const void *buf, MPI_Comm comm, mpiacc_attrs_t *a);
/* The same, and the datatype's analysis when its facts hold it (*t
 * borrowed: valid while dt is; NULL for a predefined datatype: the caller
 * analyses it). */
int mpiacc_dispatch_attrs_type(MPI_Datatype dt, const void *buf, MPI_Comm comm, mpiacc_attrs_t *a,
                               mpiacc_pack_type_t **t);

/* The slow half of mpiacc_dispatch_untagged_host (an untagged datatype,
 * classification on, granule not cached): 0 for device memory, a live
 * device handle (cl_mem) or a failed query. */
int mpiacc_dispatch_classify_host(const void *buf, MPI_Comm comm);

/* The host fast path's test: 1 when the call may go straight to MPI as a
 * host call (untagged datatype, and buf host memory or no classification
 * on), 0 when it must take mpiacc_dispatch_attrs.  With classification
 * off: the tag check plus one load; once a cl_mem was seen: plus a load of
 * the handle filter (a buf that may be a live cl_mem takes
 * mpiacc_dispatch_attrs, which refuses it); with MPIACC_UVA=1 on a cached
 * host granule: plus one atomic load and a compare. */
static inline int mpiacc_dispatch_untagged_host(MPI_Datatype dt, const void *buf, MPI_Comm comm)
{
    int c;
    if (mpiacc_attrs_kind(dt) != MPIACC_KIND_NONE) return 0;
    if (!(c = atomic_load_explicit(&mpiacc_core_classify, memory_order_relaxed))) return 1;
    if ((c & MPIACC_CORE_CLASSIFY_HANDLES) && mpiacc_core_handle_maybe(buf)) return 0;
    if (!(c & MPIACC_CORE_CLASSIFY_QUERY)) return 1;
    if (!atomic_load_explicit(&mpiacc_dispatch_any_assert, memory_order_relaxed) &&
        mpiacc_util_pcache_has(&mpiacc_dispatch_host_pages, buf))
        return 1;
    return mpiacc_dispatch_classify_host(buf, comm);
}

/* ---- MPI 4.1 memory allocation kinds (info keys) ---------------------- */

#define MPIACC_DISPATCH_INFO_KINDS "mpi_memory_alloc_kinds"
#define MPIACC_DISPATCH_INFO_ASSERT "mpi_assert_memory_alloc_kinds"

/* MPI_Comm_set_info (replace = 0: a missing key keeps the communicator's
 * assertion) / MPI_Comm_dup_with_info (replace = 1: a missing key clears
 * what the dup copied): records the info's mpi_assert_memory_alloc_kinds
 * on comm.  Errors not yet raised. */
int mpiacc_dispatch_memkind_assert(MPI_Comm comm, MPI_Info info, int replace);
/* MPI_Comm_get_info: adds mpiacc's supported kinds to the info's
 * mpi_memory_alloc_kinds and, when comm has one, its assertion. */
int mpiacc_dispatch_memkind_info(MPI_Comm comm, MPI_Info info);
/* The kinds mpiacc supports here, comma-separated, appended to `mpich`
 * (MPICH's own list, may be NULL) without duplicates, into out. */
void mpiacc_dispatch_memkind_supported(const char *mpich, char *out, size_t len);

#endif
