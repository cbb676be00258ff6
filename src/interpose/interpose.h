/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose: the MPI_* entry points mpiacc defines (the point-to-point,
 * pack, collective and refusal ones generated from mpi_calls.txt by
 * scripts/gen_mpi_calls.py, calling the inline helpers below; the others
 * written by hand, one file per family).
 * Each one first takes the host fast path — a datatype without an mpiacc
 * attribute, own or inherited (and, for sends, no device send waiting for
 * its turn) goes straight to PMPI: one attribute lookup (MPIACC_BUF_TYPE)
 * and, for a derived datatype, one load of its cached inheritance decision
 * (the first use of a derived datatype makes the decision, see
 * src/attrs/inherit.c), plus one atomic load for sends; no lock, no
 * allocation, no driver call — and otherwise hands the call to the
 * dispatcher (src/dispatch).
 */
#ifndef MPIACC_INTERPOSE_H_INCLUDED
#define MPIACC_INTERPOSE_H_INCLUDED

#include "coll/coll.h"
#include "dispatch/dispatch.h"
#include "dispatch/memkind.h"

/* Marks the MPI_* entry points (the library is built with hidden
 * visibility; MPICH's header does not mark them). */
#define MPIACC_INTERPOSE_EXPORT __attribute__((visibility("default")))

/* The fast-path tests: a send, and any other call (receive, pack).  While
 * untagged buffers may need a look (mpiacc_core_classify: MPIACC_UVA=1 or
 * a memory-kind assertion, src/dispatch/memkind.h, or a cl_mem seen, which
 * a host-typed call must not pass to MPI) every call takes the dispatcher,
 * whose entry points test the buffer first (mpiacc_dispatch_untagged_host)
 * and hand host buffers to MPI at once.  The test is one relaxed load of
 * 0 in a program that does none of these.
 * Always inlined: the host send path is this test and the PMPI call,
 * whatever else shares the generated file. */
static inline __attribute__((always_inline)) int mpiacc_interpose_send_fast(MPI_Datatype dt)
{
    return mpiacc_attrs_route(dt) == MPIACC_KIND_NONE &&
           !atomic_load_explicit(&mpiacc_core_classify, memory_order_relaxed) && mpiacc_dispatch_no_deferred();
}

/* The test of the datatypes of the calls that carry messages (point-to-
 * point, collectives) other than a send's: untagged, not a derived
 * datatype of size 0 (MPIACC_ATTRS_KIND_EMPTY, attrs.h: mpiacc hands MPI 0
 * MPI_BYTE for it: src/dispatch/empty.c, src/coll/empty.c), and host
 * memory for sure (mpiacc_interpose_untagged, below). */
static inline int mpiacc_interpose_msg_untagged(MPI_Datatype dt)
{
    return mpiacc_attrs_route(dt) == MPIACC_KIND_NONE &&
           !atomic_load_explicit(&mpiacc_core_classify, memory_order_relaxed);
}

/* MPI_Mrecv / MPI_Imrecv of an untagged datatype: MPI's (a message noted
 * by mpiacc_dispatch_mprobe_note is forgotten first). */
static inline int mpiacc_interpose_host_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg,
                                              MPI_Status *status, MPI_Request *req)
{
    if (msg && atomic_load_explicit(&mpiacc_dispatch_self_msgs, memory_order_relaxed)) mpiacc_dispatch_mprobe_forget(*msg);
    return req ? PMPI_Imrecv_c(buf, count, dt, msg, req) : PMPI_Mrecv_c(buf, count, dt, msg, status);
}

/* MPI_Pack / MPI_Unpack: the dispatcher reads and writes *position, so a
 * NULL one is refused first (MPI_ERR_ARG on comm, as MPI does). */
static inline int mpiacc_interpose_null_position(MPI_Comm comm)
{
    return mpiacc_err_return_comm(comm, mpiacc_err(MPIACC_ERRK_ARG, "NULL position"));
}

/* stats.c: the per-rank summary MPI_Finalize logs (MPIACC_LOG=info). */
void mpiacc_interpose_stats_summary(void);

/* An untagged datatype whose buffer is host memory for sure: not while the
 * pointer-query mode or a memory-kind assertion may make it device memory
 * (then the dispatcher classifies the buffer). */
static inline int mpiacc_interpose_untagged(MPI_Datatype dt)
{
    return mpiacc_attrs_kind(dt) == MPIACC_KIND_NONE && !atomic_load_explicit(&mpiacc_core_classify, memory_order_relaxed);
}

/* Whether a receive from src goes through a matched probe: one from
 * MPI_ANY_SOURCE where those do (mpiacc_core_wildcard_probe: MPICH's UCX
 * netmod, src/protocol/wildcard.c). */
static inline int mpiacc_interpose_wild(int src)
{
    return src == MPI_ANY_SOURCE && mpiacc_core_wildcard_probe;
}

/* Whether a receive from src can go to MPI as it is: not a wildcard one
 * (above), nor any receive while such a receive looks for its message (a
 * blocking one then keeps looking for it, and a receive naming its source
 * must not take that receive's message: the dispatcher's host_recv). */
static inline int mpiacc_interpose_recv_plain(int src)
{
    return !mpiacc_rp_match_wanted(src);
}

/* A receive's fast path (MPI_Recv, MPI_Irecv, MPI_Sendrecv, MPI_Isendrecv):
 * an untagged datatype and a plain receive. */
static inline int mpiacc_interpose_recv_fast(MPI_Datatype dt, int src)
{
    return mpiacc_interpose_msg_untagged(dt) && mpiacc_interpose_recv_plain(src);
}

/* MPI_Recv_init's: an untagged datatype and not a wildcard receive, which
 * becomes mpiacc's persistent request (src/dispatch/persist.c) so that each
 * MPI_Start is matched by a probe. */
static inline int mpiacc_interpose_recv_init_fast(MPI_Datatype dt, int src)
{
    return mpiacc_interpose_msg_untagged(dt) && !mpiacc_interpose_wild(src);
}

/* MPI_Sendrecv_replace's and MPI_Isendrecv_replace's: a send's fast path
 * and a plain receive. */
static inline int mpiacc_interpose_replace_fast(MPI_Datatype dt, int src)
{
    return mpiacc_interpose_send_fast(dt) && mpiacc_interpose_recv_plain(src);
}

/* ---- refuse.c: calls that do not take device buffers ---------------- */

/* Where a refusal is raised: the window's, file's or communicator's error
 * handler, or none (MPI_COMM_SELF's, as MPICH does for calls without one). */
enum { MPIACC_INTERPOSE_ON_NONE, MPIACC_INTERPOSE_ON_COMM, MPIACC_INTERPOSE_ON_WIN, MPIACC_INTERPOSE_ON_FILE };

/* Non-zero when one of the n datatypes needs mpiacc (a device kind, or
 * host with an event; MPI_DATATYPE_NULL and untagged types do not). */
int mpiacc_interpose_refusable(const MPI_Datatype t[], int n);
static inline int mpiacc_interpose_any_tagged(const MPI_Datatype t[], int n)
{
    for (int i = 0; i < n; i++)
        if (mpiacc_attrs_kind(t[i]) != MPIACC_KIND_NONE) return mpiacc_interpose_refusable(t, n);
    return 0;
}
/* Classification on (mpiacc_core_classify): non-zero when every datatype
 * is untagged and one of the nb buffers is not host memory (CUDA device or
 * managed memory, or a failed query) by mpiacc_dispatch_attrs' rules on
 * comm (MPI_COMM_NULL for windows and files: the query, no assertion). */
int mpiacc_interpose_untagged_device(const MPI_Datatype t[], int n, const void *const b[], int nb, MPI_Comm comm);
/* The refusal (MPI_ERR_TYPE, naming the call and the datatype's kind),
 * raised on *obj (an MPI_Comm, MPI_Win or MPI_File per `on`); returns the
 * code.  Called only when mpiacc_interpose_any_tagged or
 * mpiacc_interpose_untagged_device said so. */
int mpiacc_interpose_refuse(const char *call, const MPI_Datatype t[], int n, int on, void *obj);
/* Collectives: both datatypes untagged (MPI_DATATYPE_NULL counts as
 * untagged) and not of size 0, and no collective waiting to be posted
 * anywhere. */
static inline int mpiacc_interpose_coll_fast(MPI_Datatype st, MPI_Datatype rt)
{
    return mpiacc_interpose_msg_untagged(st) && mpiacc_interpose_msg_untagged(rt) && mpiacc_coll_none_deferred();
}

/* The same for a call (blocking or not) of `kind` on comm: whether a
 * collective runs on the device is decided by each process from its own
 * buffers (src/coll/comm.h), so host buffers take the fast path on every
 * communicator. */
static inline int mpiacc_interpose_coll_fast_on(MPI_Datatype st, MPI_Datatype rt, MPI_Comm comm, int kind)
{
    (void)comm, (void)kind;
    return mpiacc_interpose_coll_fast(st, rt);
}

/* coll_types.c: the same for the datatype arrays of MPI_Alltoallw and
 * MPI_Neighbor_alltoallw (neighbor: the topology's degrees), and the
 * persistent forms' refusal. */
int mpiacc_interpose_coll_untagged_w(MPI_Comm comm, int neighbor, const void *sbuf, const MPI_Datatype st[],
                                     const MPI_Datatype rt[]);
int mpiacc_interpose_coll_fast_w(MPI_Comm comm, int neighbor, const void *sbuf, const MPI_Datatype st[],
                                 const MPI_Datatype rt[]);
int mpiacc_interpose_coll_refuse_w(const char *name, MPI_Comm comm, int neighbor, const void *sbuf,
                                   const MPI_Datatype st[], const MPI_Datatype rt[]);

#endif
