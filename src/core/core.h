/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core: the library's shared internals — error codes, the logger, the
 * backend table and library state.  Every other module includes this.
 *
 * Error convention: every internal function returns an MPI error code
 * (MPI_SUCCESS or a code made by mpiacc_err()).  Functions have a single
 * exit, written as
 *
 *     int mpi_errno = MPI_SUCCESS;
 *     ...
 *     if (bad) { mpi_errno = mpiacc_err(MPIACC_ERRK_ARG, "why %d", x); goto fn_fail; }
 *     MPIACC_CHECK(mpiacc_something());
 *   fn_exit:
 *     return mpi_errno;
 *   fn_fail:
 *     (undo)
 *     goto fn_exit;
 */
#ifndef MPIACC_CORE_H_INCLUDED
#define MPIACC_CORE_H_INCLUDED

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "mpiacc.h"

/* ---- errors --------------------------------------------------------- */

/* Kinds of error mpiacc reports; each maps to an MPI error class (the
 * table of classes in include/mpiacc.h lists when each is returned). */
typedef enum mpiacc_errk {
    MPIACC_ERRK_ARG,       /* bad attribute value or argument: MPI_ERR_ARG  */
    MPIACC_ERRK_TYPE,      /* unusable datatype: MPI_ERR_TYPE               */
    MPIACC_ERRK_BUFFER,    /* bad buffer (NULL/released cl_mem): MPI_ERR_BUFFER */
    MPIACC_ERRK_COUNT,     /* size overflow / bad count: MPI_ERR_COUNT      */
    MPIACC_ERRK_TRUNCATE,  /* message longer than the receive: MPI_ERR_TRUNCATE */
    MPIACC_ERRK_NOMEM,     /* allocation failed: MPI_ERR_NO_MEM             */
    MPIACC_ERRK_BACKEND,   /* backend not compiled in / no device / a host MPIACC_EVENT flag < 0: MPI_ERR_OTHER */
    MPIACC_ERRK_CUDA,      /* a CUDA call failed: MPI_ERR_OTHER             */
    MPIACC_ERRK_OPENCL,    /* an OpenCL call failed: MPI_ERR_OTHER          */
    MPIACC_ERRK_PENDING,   /* operations pending at MPI_Finalize: MPI_ERR_OTHER */
    MPIACC_ERRK_INTERN,    /* internal error: MPI_ERR_INTERN                */
    MPIACC_ERRK_RANK,      /* rank outside the communicator: MPI_ERR_RANK   */
    MPIACC_ERRK_TAG,       /* tag outside [0, MPI_TAG_UB]: MPI_ERR_TAG      */
    MPIACC_ERRK_COMM,      /* MPI_COMM_NULL / invalid communicator: MPI_ERR_COMM */
    MPIACC_ERRK_DISABLED,  /* device datatype with MPIACC_DISABLE=1: MPI_ERR_OTHER */
    MPIACC_ERRK_OP,        /* operation unusable with the datatype: MPI_ERR_OP */
    MPIACC_ERRK_ROOT,      /* root outside the communicator: MPI_ERR_ROOT */
    MPIACC_ERRK_MAX
} mpiacc_errk_t;

/* The user's MPI call, which error messages name with its arguments the
 * way MPICH's do: "MPI_Isend(buf=0x7f.., count=4, datatype=0x4c000405
 * 'halo_col', dest=1, tag=7, comm=MPI_COMM_WORLD, request=0x7ffd..): the
 * datatype is not committed".  The generated entry points
 * (src/interpose/gen) set it on their slow path only: a stack record of the
 * arguments made current for the thread (mpiacc_err_enter) until the call
 * returns (mpiacc_err_leave); the host fast path never touches it.  An
 * operation keeps a copy (mpiacc_err_save) that is current while the pool
 * advances it (src/reqpool/op.c), so that an error found later, in
 * another call's progress, names the call that started the operation. */
typedef union mpiacc_err_arg {
    const void *p;
    long long i;
    MPI_Datatype t;
    MPI_Comm c;
    MPI_Op o;
    MPI_Win w;
    MPI_File f;
    MPI_Info n;
} mpiacc_err_arg_t;
/* A function's name, its parameters' names (separated by one space) and a
 * letter per parameter saying how its value prints: b buffer (MPI_IN_PLACE,
 * NULL), p pointer, s status pointer (MPI_STATUS_IGNORE), i integer,
 * r rank (MPI_ANY_SOURCE, MPI_PROC_NULL, MPI_ROOT), g tag (MPI_ANY_TAG),
 * t datatype (with its name, MPI_Type_get_name), c communicator (with its
 * name), o op, w window, f file, n info. */
typedef struct mpiacc_err_sig {
    const char *name, *params, *kinds;
} mpiacc_err_sig_t;
typedef struct mpiacc_err_call {
    const mpiacc_err_sig_t *sig; /* NULL: no call (a message without one) */
    const mpiacc_err_arg_t *args;
    const struct mpiacc_err_call *prev;
    int saved; /* a copy: the handles may be freed by now, so MPI is not asked their names */
} mpiacc_err_call_t;
extern _Thread_local const mpiacc_err_call_t *mpiacc_err_current;
static inline void mpiacc_err_enter(mpiacc_err_call_t *c)
{
    c->prev = mpiacc_err_current;
    mpiacc_err_current = c;
}
static inline void mpiacc_err_leave(const mpiacc_err_call_t *c) { mpiacc_err_current = c->prev; }
/* Set by the entry layer (src/interpose/init.c): the buffer kind a
 * datatype is tagged with, own or inherited, as a word ("CUDA", "OpenCL",
 * "host"), or NULL when untagged; error texts name it (errcall.c). */
extern const char *(*mpiacc_err_type_tag)(MPI_Datatype t);
/* An operation's copy of the call that started it (see src/reqpool/op.c). */
#define MPIACC_ERR_MAXARGS 13
typedef struct mpiacc_err_saved {
    const mpiacc_err_sig_t *sig;
    mpiacc_err_arg_t args[MPIACC_ERR_MAXARGS];
} mpiacc_err_saved_t;
void mpiacc_err_save(mpiacc_err_saved_t *s);

/* Formats a message, prefixed with the current call and its arguments (or
 * "mpiacc: " outside any), and returns an error code of the kind's class
 * whose MPI_Error_string is that message (the bare class before MPI_Init).
 * Nothing is printed: the error handler the code is raised with decides
 * (MPI_ERRORS_ARE_FATAL prints the message, MPI_ERRORS_RETURN nothing);
 * MPIACC_LOG=info logs each cause once, debug every error.  Thread safe:
 * each call gets its own code, taken round-robin from a ring of
 * MPIACC_ERR_RING codes per class, so a message is only replaced after
 * MPIACC_ERR_RING later errors of the same class. */
int mpiacc_err(mpiacc_errk_t kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#define MPIACC_ERR_RING 256

/* Readies / forgets the error codes; called from MPI_Init / MPI_Finalize. */
int mpiacc_err_init(void);
void mpiacc_err_finalize(void);

/* Raises err (when it is an error) with comm's error handler and returns
 * it.  MPI_COMM_NULL means "no communicator" and raises it where MPICH
 * raises such errors: MPI_COMM_SELF's handler, or MPI_COMM_WORLD's while
 * MPI_COMM_SELF has none of its own. */
int mpiacc_err_return_comm(MPI_Comm comm, int err);
/* Before err is raised with handler eh (any object's): when eh ends the
 * job (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT) and err is mpiacc's, the
 * error is printed as the user's call's ("mpiacc: MPI_Irecv: why", then
 * the call with its arguments and the rank: mpiacc_log_error) and MPI's
 * abort, which follows, gets a short text pointing at it. */
void mpiacc_err_before_raise(MPI_Errhandler eh, int err);

/* The MPI error class of a code (MPI_SUCCESS for MPI_SUCCESS). */
int mpiacc_err_class(int err);

#define MPIACC_CHECK(call_)                        \
    do {                                           \
        mpi_errno = (call_);                       \
        if (mpi_errno != MPI_SUCCESS) goto fn_fail; \
    } while (0)

#define MPIACC_FAIL(kind_, ...)                        \
    do {                                               \
        mpi_errno = mpiacc_err((kind_), __VA_ARGS__); \
        goto fn_fail;                                  \
    } while (0)

/* ---- logging -------------------------------------------------------- */

/*
 * MPIACC_LOG levels (one line per message on stderr, "[mpiacc LEVEL rank R]"):
 *  warn (the default): misuse warnings, each cause once (MPIACC_LOG_ONCE);
 *        an error is printed by the error handler it is raised with, not
 *        here (mpiacc_err);
 *  info: also each error (each cause once), the first use of each path
 *        (buffer kind, protocol, direction),
 *        backends starting, and at MPI_Finalize a per-rank summary of
 *        MPIACC_Get_stats' figures;
 *  debug: also every error, every MPI call that reaches the request pool
 *        and every state transition of every operation (op id, peer, tag,
 *        bytes, backend), and every occurrence of a once-per-cause message.
 */
typedef enum { MPIACC_LOG_OFF = 0, MPIACC_LOG_WARN, MPIACC_LOG_INFO, MPIACC_LOG_DEBUG } mpiacc_loglevel_t;

extern int mpiacc_log_level; /* from the MPIACC_LOG environment variable */
void mpiacc_log_init(void);
/* After PMPI_Init: lines name this process's rank in MPI_COMM_WORLD from
 * now on (before: "rank -1"). */
void mpiacc_log_start(void);
/* An error of mpiacc raised with a fatal error handler (error.c), printed
 * before MPI aborts, unless MPIACC_LOG=off: "mpiacc: <reason>" (the reason
 * starts with the user's call's name: "MPI_Irecv: ...") and the call with
 * its arguments and this process's rank. */
void mpiacc_log_error(const char *reason, const char *call);
void mpiacc_log_write(int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#define MPIACC_LOG(level_, ...)                                   \
    do {                                                          \
        if ((level_) <= mpiacc_log_level) mpiacc_log_write((level_), __VA_ARGS__); \
    } while (0)
/* Logs only the first time `key` (a string naming the cause) is seen in the
 * process; at debug level, every time. */
void mpiacc_log_once(int level, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#define MPIACC_LOG_ONCE(level_, key_, ...)                                      \
    do {                                                                        \
        if ((level_) <= mpiacc_log_level) mpiacc_log_once((level_), (key_), __VA_ARGS__); \
    } while (0)

/* ---- library state -------------------------------------------------- */

/* Set by the entry layer (src/interpose/init.c); read everywhere. */
/* Non-zero when MPIACC_DISABLE=1 was set at MPI_Init: forward everything. */
extern int mpiacc_core_disabled;
/* Non-zero between mpiacc's MPI_Init and MPI_Finalize. */
extern int mpiacc_core_initialized;
/* Thread level MPI granted. */
extern int mpiacc_core_thread_level;
/* Non-zero while an untagged datatype's buffer may have to be looked at:
 * the host fast path's one extra load (relaxed).  Bits:
 *  MPIACC_CORE_CLASSIFY_QUERY: it may be device memory (MPIACC_UVA=1, or a
 *    communicator asserted memory allocation kinds that include a device
 *    kind; set by src/dispatch/memkind.c);
 *  MPIACC_CORE_CLASSIFY_HANDLES: it may be a device handle that is not an
 *    address, a live cl_mem mpiacc has seen, which a host-typed call must
 *    not read or write through (set by mpiacc_core_handle_note at the
 *    first one).
 * A program that never does either pays one load of 0. */
enum { MPIACC_CORE_CLASSIFY_QUERY = 1, MPIACC_CORE_CLASSIFY_HANDLES = 2 };
extern atomic_int mpiacc_core_classify;

/* Device handles that are not addresses (cl_mem): a backend notes each one
 * it has found alive (mpiacc_core_handle_note: a bit of a filter of 4096,
 * never cleared until MPI_Finalize, and MPIACC_CORE_CLASSIFY_HANDLES);
 * mpiacc_core_handle_maybe(p) says whether p may be one (one load; then
 * the backends' is_live_handle knows for sure). */
#define MPIACC_CORE_HANDLE_WORDS 64
extern _Atomic(uint64_t) mpiacc_core_handle_filter[MPIACC_CORE_HANDLE_WORDS];
static inline unsigned mpiacc_core_handle_bit(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p >> 4;
    x *= 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 52); /* 0..4095 */
}
static inline int mpiacc_core_handle_maybe(const void *p)
{
    unsigned b = mpiacc_core_handle_bit(p);
    return (int)(atomic_load_explicit(&mpiacc_core_handle_filter[b / 64], memory_order_relaxed) >> (b % 64) & 1u);
}
void mpiacc_core_handle_note(const void *p);
/* MPI_Finalize: forgets every handle (the bits, and the classify bit). */
void mpiacc_core_handle_forget(void);
/* Non-zero when receives from MPI_ANY_SOURCE go through a matched probe
 * (PMPI_Improbe + PMPI_Imrecv) instead of MPI's wildcard receive: MPICH's
 * ch4 on its UCX netmod, whose wildcard receive never completes when its
 * message is already waiting at UCX (MPICH 5.0.2).  Set by src/engine at
 * MPI_Init; read by the interposer's receive fast path
 * (src/reqpool/reqpool.h, src/protocol/wildcard.c). */
extern int mpiacc_core_wildcard_probe;

/* The processes of comm on this host (host.c: by MPI_Get_processor_name,
 * not MPICH's MPI_COMM_TYPE_SHARED, which MPIR_CVAR_NOLOCAL and
 * MPIR_CVAR_NUM_CLIQUES change), ordered by rank in comm; collective. */
int mpiacc_core_host_split(MPI_Comm comm, MPI_Comm *host);

/* ---- memory classes (pointer queries) --------------------------------- */

/* What a backend's classify() says about an address (MPIACC_UVA=1; the MPI
 * 4.1 memory allocation kinds in parentheses):
 *  HOST    not the backend's memory: pageable host memory ("system", "mpi");
 *  PINNED  page-locked host memory the backend allocated or registered
 *          ("cuda:host"): host memory, MPI reads it directly;
 *  DEVICE  device memory ("cuda:device"): the device path;
 *  MANAGED managed / unified memory ("cuda:managed"): the device path too. */
enum { MPIACC_CORE_MEM_HOST = 0, MPIACC_CORE_MEM_PINNED, MPIACC_CORE_MEM_DEVICE, MPIACC_CORE_MEM_MANAGED };

/* ---- backends ------------------------------------------------------- */

/* Buffer kinds, the integer values of MPIACC_BUF_* (index of the backend). */
enum { MPIACC_KIND_NONE = 0, MPIACC_KIND_HOST = 1, MPIACC_KIND_CUDA = 2, MPIACC_KIND_OPENCL = 3, MPIACC_KIND_MAX };

/* The attributes of a datatype, captured when an MPI call is made. */
typedef struct mpiacc_attrs {
    int kind;          /* MPIACC_KIND_*                                  */
    void *stream;      /* cudaStream_t, when has_stream                  */
    void *queue;       /* cl_command_queue, when has_queue               */
    void *event;       /* cudaEvent_t or cl_event, when has_event        */
    int device;        /* CUDA ordinal, when has_device                  */
    unsigned has_stream : 1, has_queue : 1, has_event : 1, has_device : 1;
    /* MPIACC_ORDER (has_order: set): stream_order 1 for MPIACC_ORDER_STREAM */
    unsigned has_order : 1, stream_order : 1;
    /* What the backend's `facts` entry established once for these
     * attributes (src/dispatch/facts.c keeps them per datatype): checked:
     * validate's checks that do not depend on the buffer passed (validate
     * then skips them); stream_nb: MPIACC_STREAM is a non-blocking stream
     * (CUDA: its dependency test is one stream query); stream_dev: the
     * stream's device. */
    unsigned checked : 1, stream_nb : 1;
    int stream_dev;
} mpiacc_attrs_t;

struct mpiacc_pack_type; /* src/pack: analysed datatype */

/* One pack or unpack between a device buffer and host memory. */
typedef struct mpiacc_xfer_desc {
    void *buf;                           /* device pointer or cl_mem         */
    const struct mpiacc_pack_type *type; /* analysed datatype (one element)  */
    MPI_Count count;                     /* number of elements               */
    MPI_Count first, last;               /* packed byte range [first, last)  */
    void *host;                          /* last-first bytes, from host_alloc */
    /* Optional (NULL: none).  Transfers handed the same lane (the same int,
     * -1 before the first) run on the device in the order of the calls
     * that started them: a pipelined message's chunks, so that chunk 0 is
     * done before chunk 1 takes the copy engines or PCIe.  The backend
     * keeps its queue choice there; a backend may ignore it (OpenCL does
     * for now: the gain was measured with CUDA only).  The caller keeps
     * the int until its transfers are released. */
    int *lane;
    /* Non-zero: `host` is not host memory but device staging of the
     * transfer's device (from dev_staging_get): the pack / unpack stays on
     * the device (the device protocol, src/protocol/device.c).  Only set
     * for a backend with dev_staging_get. */
    int host_on_device;
} mpiacc_xfer_desc_t;

/* One transfer of a batch started together (src/reqpool's batches, the
 * backend's xfer_many): what pack() (dir 0) or unpack() (dir 1) would take,
 * and its handle once started. */
#define MPIACC_CORE_BATCH_MAX 32
typedef struct mpiacc_xfer_item {
    const mpiacc_attrs_t *a;
    void *dep;
    mpiacc_xfer_desc_t d;
    int dir;
    void *xfer; /* out: the transfer's handle (test / release it as pack()'s) */
} mpiacc_xfer_item_t;

/*
 * A backend: a table of function pointers.  A missing backend or one with no
 * device is a NULL table (mpiacc_backend_get returns NULL).  Handles ("dep"
 * and "xfer") are opaque to the core; a backend may return NULL for "nothing
 * to wait for".  All functions return MPI error codes.
 *
 * Thread safety: the core serialises calls per operation but may call a
 * backend from several threads at once (MPI_THREAD_MULTIPLE).
 */
typedef struct mpiacc_backend {
    const char *name;
    int kind;
    /* 0 (the default): pack/unpack accept a dep and chain on the device.
     * 1: the core waits for the dep on the host (test()) and then calls
     * pack/unpack with dep = NULL (the CPU backend). */
    int host_waits;
    /* Called once, when the backend is first needed or at MPI_Init with
     * MPIACC_EAGER_INIT=1 (sets *present to 0 when no device exists: then
     * the backend is treated as absent), and from MPI_Finalize. */
    int (*init)(int *present);
    int (*finalize)(void);
    /* Checks the attributes and buffer of a call (NULL queue/stream where
     * required, released cl_mem, context mismatch...). */
    int (*validate)(const mpiacc_attrs_t *a, void *buf);
    /* Optional (NULL: validate checks everything at each call).  The checks
     * of validate that depend on the attributes alone, made once per
     * datatype and attribute change (src/dispatch/facts.c): on success sets
     * a->checked and the facts later calls use (stream_nb, stream_dev);
     * returns validate's error otherwise (nothing is then cached). */
    int (*facts)(mpiacc_attrs_t *a);
    /* Records, at call time, what the data depends on (marker/event). */
    int (*capture)(const mpiacc_attrs_t *a, void *buf, void **dep);
    /* Starts packing desc->type x count from buf into desc->host, after dep
     * (GPU-side when possible).  *xfer is tested with test(). */
    int (*pack)(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer);
    /* Starts unpacking desc->host into buf, after dep. */
    int (*unpack)(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void **xfer);
    /* Optional (NULL: the core starts transfers one at a time).  Starts n
     * transfers (1 <= n <= MPIACC_CORE_BATCH_MAX) as pack / unpack would,
     * each after its own dependency, with as few launches as the backend
     * can (CUDA: one fused kernel for those on one device); items[i].xfer
     * receives item i's handle (items may share the work behind their
     * handles; each is tested and released on its own).  On failure no
     * item has a handle and nothing is left running. */
    int (*xfer_many)(mpiacc_xfer_item_t *items, int n);
    /* Device-to-device pack / unpack (MPI_Pack, MPI_Unpack): packed side is a
     * device pointer / cl_mem `packed` at byte offset `packed_off`.  Blocking. */
    int (*pack_dev)(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                    MPI_Aint packed_off);
    int (*unpack_dev)(const mpiacc_attrs_t *a, void *dep, const mpiacc_xfer_desc_t *d, void *packed,
                      MPI_Aint packed_off);
    /* Non-blocking completion test of a dep or xfer handle (NULL: done). */
    int (*test)(void *h, int *done);
    /* Releases a dep or xfer handle (NULL allowed). */
    void (*release)(void *h);
    /* Host staging memory (pinned where the backend benefits from it). */
    int (*host_alloc)(size_t bytes, void **p);
    void (*host_free)(void *p, size_t bytes);
    /* Optional (NULL: the backend keeps nothing per datatype).  A backend
     * may keep data on a datatype analysis (device copies of its
     * representation) in the analysis's slot number `kind`
     * (mpiacc_pack_slot_get/_set, src/pack/pack.h); this frees that data
     * when the analysis is released (the entry layer registers it with
     * mpiacc_pack_slot_register while the backend is up). */
    void (*type_data_free)(void *data);
    /* Human-readable description of devices found, for mpiacc-info. */
    int (*describe)(char *out, size_t len);
    /* Optional (NULL: no check).  Called at MPI call time, after validate,
     * with the datatype analysis: checks that d->buf holds every byte that
     * d->count x d->type touches (d->first, d->last, d->host unused), so
     * that a receive into a too small buffer fails in the call instead of
     * when its message arrives.  MPIACC_ERRK_BUFFER when it does not. */
    int (*validate_span)(const mpiacc_attrs_t *a, const mpiacc_xfer_desc_t *d);
    /* Interprocess export / import (src/core/backend_ipc.h); NULL: no IPC. */
    const struct mpiacc_backend_ipc *ipc;
    /* Collective engine (src/core/backend_coll.h: NCCL for CUDA); NULL: none. */
    const struct mpiacc_backend_coll *coll;
    /* Optional (NULL: the backend cannot recognise its memory by address).
     * The pointer query of MPIACC_UVA=1 (src/dispatch/memkind.c): classifies
     * the memory at address p into *mem (MPIACC_CORE_MEM_*) and, for DEVICE
     * and MANAGED, the device ordinal that owns it into *device (-1 when the
     * backend has none to name).  Called only on a started backend, from
     * any thread, without locks: it must be thread safe and must not change
     * the calling thread's current device.  An address the backend does not
     * know is MPIACC_CORE_MEM_HOST with MPI_SUCCESS; an error only when the
     * query itself failed (a sticky device error). */
    int (*classify)(const void *p, int *mem, int *device);
    /* Optional (NULL: the backend has no stream or queue; then
     * MPIACC_ORDER_STREAM is refused at the call).  Stream-ordered
     * completion: makes work enqueued later on a's stream / queue (CUDA:
     * MPIACC_STREAM, else the legacy default stream of the call's device;
     * OpenCL: MPIACC_CL_QUEUE) wait on the device, without blocking the
     * host, until the pack / unpack / copy behind handle h (an xfer handle
     * of this backend, or of its ipc table's import_copy; NULL: nothing)
     * is done.  Called under the pool lock. */
    int (*order_after)(const mpiacc_attrs_t *a, void *h);
    /* Optional, the three together (NULL: MPI never gets this backend's
     * device memory; the CPU and OpenCL backends).  For the device protocol
     * (src/protocol/device.c), used only when MPI's transport takes the
     * kind's device memory (src/engine):
     * dep_ready: whether the data dependency of a call with attributes a
     * on buf is met right now (*ready), recording nothing that has to be
     * released; cheap, as it is asked on every contiguous call before the
     * call goes to MPI as it is (CUDA: cudaStreamQuery of a non-blocking
     * MPIACC_STREAM, else an event recorded and queried).  *ready = 0 when
     * unsure (the call then takes the pool, which captures the dependency
     * and reports any error).
     * dev_staging_get: pooled device memory of at least `bytes` on the
     * device of a call with attributes a (CUDA: MPIACC_STREAM's device,
     * else MPIACC_DEVICE, else the current one), for packed bytes MPI
     * sends or receives; *p its address, *cap the bytes it holds (>=
     * bytes), *tok what dev_staging_put takes back once neither MPI nor a
     * transfer uses it. */
    int (*dep_ready)(const mpiacc_attrs_t *a, void *buf, int *ready);
    int (*dev_staging_get)(const mpiacc_attrs_t *a, size_t bytes, void **p, size_t *cap, void **tok);
    void (*dev_staging_put)(void *tok);
    /* Optional (NULL: the backend's buffers are addresses).  Whether p is a
     * handle of this backend that is alive now and that mpiacc has seen
     * (OpenCL: a cl_mem validated earlier and not released since), so that
     * a host-typed call passing it fails instead of writing through it
     * (src/dispatch/memkind.c).  Thread safe, cheap (a hash probe). */
    int (*is_live_handle)(const void *p);
} mpiacc_backend_t;

/* The table for a kind, or NULL when not compiled in or no device.  Starts
 * the backend on first use (thread-safe; see backend.c). */
const mpiacc_backend_t *mpiacc_backend_get(int kind);
/* The table for a kind if that backend has been started, else NULL; never
 * starts one. */
const mpiacc_backend_t *mpiacc_backend_peek(int kind);
/* Why mpiacc_backend_get(kind) is NULL (a static string). */
const char *mpiacc_backend_why_absent(int kind);
/* Each backend module provides one of these (a stub returns NULL); only the
 * entry layer (src/interpose/init.c) calls them. */
const mpiacc_backend_t *mpiacc_cpu_backend(void);
const mpiacc_backend_t *mpiacc_cuda_backend(void);
const mpiacc_backend_t *mpiacc_opencl_backend(void);
/* Whether the backend was compiled in at all (the stub says no). */
int mpiacc_cuda_compiled(void);
int mpiacc_opencl_compiled(void);
/* MPI_Init: hands over the candidate tables (indexed by kind; NULL: not
 * compiled in); none is started yet.  `started` (may be NULL) is called
 * once for each backend that starts and found a device. */
int mpiacc_backends_setup(const mpiacc_backend_t *const cand[MPIACC_KIND_MAX],
                          void (*started)(const mpiacc_backend_t *be));
/* Tables a test put in place of the candidates (core_testhooks.h); NULL
 * entries: none. */
extern const mpiacc_backend_t *mpiacc_backend_test_tables[MPIACC_KIND_MAX];
/* Starts every candidate now (MPIACC_EAGER_INIT=1, mpiacc-info). */
void mpiacc_backends_start_all(void);
/* Kinds (bit 1 << kind) whose start has been attempted (for tests). */
unsigned mpiacc_backends_started(void);
/* Stops the backends started, except those of busy_kinds (bit 1 << kind):
 * device work abandoned at MPI_Finalize may still run on their
 * queues/streams. */
void mpiacc_backends_finalize(unsigned busy_kinds);

const char *mpiacc_kind_name(int kind);

#endif /* MPIACC_CORE_H_INCLUDED */
