/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpiacc.h — accelerator-aware MPI through datatype attributes.
 *
 * mpiacc sits between an application and MPI through the MPI profiling
 * interface.  The application describes where a buffer lives by attaching
 * attributes to the MPI datatype it communicates with, and then calls the
 * ordinary MPI point-to-point functions with a device pointer (CUDA) or a
 * cl_mem handle (OpenCL) as the buffer:
 *
 *     MPI_Datatype t;
 *     MPI_Type_contiguous(n, MPI_FLOAT, &t);
 *     MPI_Type_commit(&t);
 *     MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_CUDA);
 *     MPI_Type_set_attr(t, MPIACC_STREAM, (void *)stream);   // cudaStream_t
 *     MPI_Isend(dev_ptr, 1, t, peer, tag, comm, &req);      // no cudaMemcpy,
 *     MPI_Wait(&req, MPI_STATUS_IGNORE);                     // no sync
 *
 * Semantics
 *  - The keyvals below are valid between MPI_Init/MPI_Init_thread and
 *    MPI_Finalize (they are created by mpiacc's MPI_Init, also under
 *    MPIACC_DISABLE, and equal MPI_KEYVAL_INVALID before it and after
 *    MPI_Finalize).
 *  - A datatype with no MPIACC_BUF_TYPE attribute (or MPIACC_BUF_HOST) is a
 *    host datatype: the call goes straight to the MPI library — except a
 *    derived datatype built from tagged ones, which inherits their
 *    attributes (see "Derived datatypes" under the keyvals below).
 *  - Attributes are read by mpiacc at a datatype's first call and kept with
 *    it (with what the backend checked of them: a CUDA stream's device and
 *    flags), so that later calls do not read them again; any change made
 *    through MPI_Type_set_attr or MPI_Type_delete_attr is seen at the next
 *    call.  MPIACC_BUF_TYPE is read at every call however it was put
 *    (MPI_Type_set_attr or PMPI_Type_set_attr); the other attributes put
 *    with PMPI_Type_set_attr count only until the datatype's first call
 *    (set them with MPI_Type_set_attr).  One more exception keeps host
 *    traffic on predefined datatypes free of lookups: an attribute on a
 *    *predefined* datatype (MPI_FLOAT...) counts only once
 *    MPI_Type_set_attr has tagged some predefined datatype in the process;
 *    tag predefined datatypes through MPI_Type_set_attr (or better, tag a
 *    duplicate).
 *  - Dependency: a send's data is read, and a receive's data is written, only
 *    after the work that was enqueued on MPIACC_STREAM / MPIACC_CL_QUEUE
 *    before the MPI call has finished (for an in-order OpenCL queue; an
 *    out-of-order queue implies no dependency), and after MPIACC_EVENT.
 *    A CUDA buffer without MPIACC_STREAM depends on the default stream (see
 *    MPIACC_STREAM below), so plain code such as cudaMemcpy(d, h, ...) or
 *    cudaMemset(d, ...) followed by MPI_Send / MPI_Recv on d is ordered.
 *    OpenCL has no default queue: an OpenCL datatype names its queue, an
 *    event, or MPIACC_QUEUE_NONE ("the data is complete"), else the call
 *    is refused (MPIACC_CL_QUEUE below) -- mpiacc never guesses that the
 *    data is ready.
 *    Work enqueued after the MPI call is not waited for.
 *  - Completion: the MPI_Request returned is a real MPI request that works
 *    with every completion function (MPI_Wait*, MPI_Test*, MPI_Cancel for
 *    receives, MPI_Request_free, MPI_Request_get_status).  Once a receive has
 *    completed, its data is in the buffer and visible to any later work on
 *    any stream or queue (for CUDA: the request completes only once mpiacc
 *    has seen the event after its unpack complete, so later work on the
 *    legacy default stream or any other stream needs no extra ordering).
 *    Operations complete in the order their GPU work finishes, not in
 *    issue order; MPI's non-overtaking rule still holds for messages
 *    between one pair of processes on one communicator.
 *  - MPI_Request_free on a pending operation lets it finish in the
 *    background, as MPI specifies.  MPI_Finalize never fails or hangs
 *    because of mpiacc operations: those still pending (freed or not) get
 *    up to MPIACC_FINALIZE_TIMEOUT seconds to finish, receives that nothing
 *    matched are then cancelled, and anything still busy (GPU work that
 *    never ends, a send nobody receives) is abandoned; each case is
 *    reported with a warning.
 *  - Buffers: for CUDA the buffer argument is a device pointer; for OpenCL it
 *    is the cl_mem handle itself, and byte offsets inside it come from the
 *    datatype (displacements, lower bound, subarray starts).
 *  - MPI_Pack / MPI_Unpack with a device-tagged datatype: the packed buffer
 *    lives in the same memory space as the data (a device pointer for CUDA, a
 *    cl_mem for OpenCL); `position` counts bytes as usual.  MPI_Pack_size is
 *    unchanged.  The packed format equals MPI_Pack's on the host, so packed
 *    bytes can be sent as MPI_PACKED to any peer.
 *  - Collectives: every collective that takes buffers and datatypes
 *    (MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Reduce_local,
 *    MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan, MPI_Gather(v),
 *    MPI_Scatter(v), MPI_Allgather(v), MPI_Alltoall(v,w),
 *    MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w)), blocking and
 *    nonblocking (I forms), int and MPI_Count (_c) forms, takes device
 *    datatypes on either side, MPI_IN_PLACE where MPI allows it.  When
 *    every buffer a process passes is CUDA device memory, the collective
 *    runs on the GPU: on NCCL (loaded at run time; one NCCL communicator per
 *    communicator, made at its first such collective and freed with it;
 *    non-contiguous data packed on the GPU; the reductions NCCL computes:
 *    sum, prod, min, max on its types), or mpiacc's IPC collectives where
 *    NCCL cannot serve on one node (ranks sharing a GPU).  With MPIACC_STREAM
 *    the work is enqueued on that stream; with MPIACC_ORDER_STREAM
 *    (contiguous buffers) the call returns once it is enqueued and a
 *    nonblocking call's request is complete at once.  Each process decides
 *    alone from its own buffers: A COLLECTIVE'S BUFFERS MUST BE DEVICE
 *    MEMORY ON EVERY PROCESS OR ON NONE (else processes wait in different
 *    engines: MPIACC_COLL_CHECK=1 makes that MPI_ERR_ARG on every process;
 *    MPIACC_COLL_ENGINE=staged allows mixing).  An NCCL error (returned, or
 *    asynchronous while a call waits) is an MPI error class of the call
 *    (MPI_ERR_ARG for ncclInvalidArgument / ncclInvalidUsage, MPI_ERR_INTERN
 *    for ncclInternalError, MPI_ERR_OTHER otherwise) and aborts the
 *    communicator's NCCL communicator: its later device collectives fail
 *    with that class.  Everything else (OpenCL buffers, MPIACC_BUF_HOST
 *    with an event, MPI_Scan, MPI_MINLOC, user operations...) is staged
 *    through host memory around MPI's own collective (packed after its
 *    dependency, unpacked before the request completes), where one process
 *    may use device buffers while another uses host buffers: the staged
 *    bytes are described to MPI with a datatype of the user's type
 *    signature.  Collectives on a communicator reach MPI in the order they
 *    were called on it (a host collective, MPI_Barrier included, waits
 *    behind a device one still waiting for its dependency).  Reductions
 *    reduce host copies: a predefined operation counts a tagged datatype
 *    (a dup) as its predefined type, which MPICH itself refuses on a dup,
 *    and takes derived datatypes made of one predefined type (MPI_ERR_OP
 *    otherwise); a user-defined operation (MPI_Op_create) is called by MPI
 *    on host memory in the datatype's layout, with the datatype handle the
 *    application passed.  A part whose dependency, pack or unpack fails
 *    does not stop the collective (the other processes take part as
 *    usual); the call or request then fails with that error.
 *    Persistent collectives (MPI_Bcast_init ... MPI_Neighbor_alltoallw_init)
 *    refuse device datatypes (and MPIACC_BUF_HOST with MPIACC_EVENT) with
 *    MPI_ERR_TYPE naming the call; with host datatypes they are MPI's,
 *    except a datatype of size 0 on MPICH's UCX netmod, also refused (see
 *    "Device messages and MPI's transport").
 *  - Errors: see the table below.  Every error code mpiacc returns has its
 *    own MPI_Error_string (per call, safe with threads: codes are reused
 *    round-robin from 256 per error class, so a message is only replaced
 *    after 256 later mpiacc errors of the same class in the process).
 *    Errors are raised where MPICH raises the errors of its own requests:
 *      - the call's communicator: argument errors and every failure
 *        detected in a point-to-point call, in MPI_Pack/MPI_Unpack, and an
 *        operation's failure reported by MPI_Wait, MPI_Test or a blocking
 *        call (MPI_Send, MPI_Recv, MPI_Sendrecv...);
 *      - no communicator (MPI_COMM_SELF's handler, or MPI_COMM_WORLD's
 *        while MPI_COMM_SELF has none of its own, as MPICH): MPI_COMM_NULL
 *        passed to a call, MPI_Type_set_attr, and an operation's failure
 *        reported by MPI_Waitany/Testany/Request_get_status (the
 *        operation's code) or MPI_Waitall/Testall/Waitsome/Testsome
 *        (MPI_ERR_IN_STATUS, the operation's code, of its real class, in
 *        the MPI_ERROR field of its status).
 *
 *    class             returned when
 *    MPI_ERR_ARG       MPI_Type_set_attr: MPIACC_BUF_TYPE not one of the
 *                      MPIACC_BUF_* values (NULL included), MPIACC_DEVICE
 *                      negative or above INT32_MAX; at the call: such a value put with
 *                      PMPI_Type_set_attr, a NULL request pointer to a
 *                      nonblocking call, a NULL position to a device
 *                      MPI_Pack/MPI_Unpack, a NULL MPIACC_CL_QUEUE or
 *                      MPIACC_EVENT (host), an OpenCL datatype with neither
 *                      MPIACC_CL_QUEUE nor MPIACC_EVENT, a queue/event of
 *                      another OpenCL context, a stream of another CUDA
 *                      device
 *    MPI_ERR_COMM      MPI_COMM_NULL or an invalid communicator; a device
 *                      collective on an intercommunicator, a neighbourhood
 *                      collective on a communicator without topology
 *    MPI_ERR_RANK      destination / source not in the communicator (nor
 *                      MPI_PROC_NULL, nor MPI_ANY_SOURCE for receives)
 *    MPI_ERR_TAG       tag outside [0, MPI_TAG_UB] (MPI_ANY_TAG allowed
 *                      for receives)
 *    MPI_ERR_COUNT     negative count; count x datatype size overflowing
 *    MPI_ERR_TYPE      MPI_DATATYPE_NULL with a device datatype's call, a
 *                      datatype mpiacc cannot use (uncommitted...), a
 *                      derived datatype without MPIACC_BUF_TYPE whose
 *                      constituents' attributes disagree (the message
 *                      names two of them); a persistent collective on a
 *                      device datatype (on MPICH's UCX netmod also on one
 *                      of size 0); the datatypes of one collective
 *                      buffer (MPI_Alltoallw) of different buffer kinds;
 *                      a receive into a device buffer whose datatype (or
 *                      a collective's receive blocks) surely writes some
 *                      byte twice (erroneous in MPI; docs/semantics.md)
 *    MPI_ERR_ROOT      a device collective's root not in the communicator
 *    MPI_ERR_OP        a predefined reduction on a device datatype that is
 *                      not made of one predefined type
 *    MPI_ERR_BUFFER    NULL, released or invalid cl_mem (any address that
 *                      is no live OpenCL memory object, e.g. a host pointer
 *                      passed with an OpenCL datatype: checked without
 *                      reading through it, never a crash), a cl_mem smaller than
 *                      count x datatype spans (data or packed side); an
 *                      empty message (count 0 or a datatype of size 0)
 *                      accepts any buffer, NULL included, as in MPI
 *    MPI_ERR_TRUNCATE  a receive's message is longer than the receive (the
 *                      part that fits is delivered, as MPI does for host
 *                      buffers); MPI_Pack/MPI_Unpack past the packed buffer
 *    MPI_ERR_NO_MEM    host or device memory for staging could not be had
 *    MPI_ERR_OTHER     backend not compiled in or no device; a CUDA or
 *                      OpenCL call failed (also a failed MPIACC_EVENT, and
 *                      a host MPIACC_EVENT flag set < 0);
 *                      MPI_Finalize with mpiacc operations pending; a
 *                      device datatype (or host with MPIACC_EVENT) while
 *                      MPIACC_DISABLE is set
 *    MPI_ERR_INTERN    an internal inconsistency (a bug)
 *
 *    Argument errors are found in the call itself, never later.
 *    MPI_PROC_NULL and null handles behave as in MPI whatever the datatype
 *    carries (an MPI_PROC_NULL call moves nothing and touches no buffer).
 *
 * Known limits
 *  - CUDA: the first mpiacc operation on a device loads mpiacc's kernels.
 *    With CUDA's default lazy module loading that load waits for kernels
 *    already running on the device; set CUDA_MODULE_LOADING=EAGER, or make
 *    one mpiacc call on the device before launching long-running kernels.
 *  - Several ranks sharing one GPU: without MPS, the GPU switches between
 *    the processes' contexts for every pack/unpack (~70 us each on an H200);
 *    run the CUDA MPS daemon, as usual for shared GPUs.
 *  - A device receive through staging (host memory, or device memory on
 *    the device protocol below) has room for at least one byte more than
 *    the receive: a longer message that fits that room delivers the part
 *    that fits, then MPI_ERR_TRUNCATE.  A message longer than the room is
 *    truncated by MPI itself inside mpiacc's progress, which also calls the
 *    communicator's error handler there (MPI_ERRORS_RETURN: nothing shows;
 *    a handler of the application's sees that extra call); the receive
 *    then completes with MPI_ERR_TRUNCATE and nothing delivered (MPICH's
 *    UCX netmod leaves a truncated receive's buffer undefined).  A device
 *    receive handed to MPI as it is (below) truncates as MPI does.
 *  - Every MPI function taking a buffer and a datatype is interposed (the
 *    list in docs/mpi-calls.md names each one).
 *    One-sided (MPI_Put, MPI_Get, MPI_Accumulate...), file I/O
 *    (MPI_File_read*, MPI_File_write*, MPI_File_set_view), partitioned
 *    (MPI_Psend_init, MPI_Precv_init) and external32 (MPI_Pack_external,
 *    MPI_Unpack_external) calls refuse a device datatype (or MPIACC_BUF_HOST
 *    with MPIACC_EVENT) with MPI_ERR_TYPE naming the call, through the
 *    window's, file's or communicator's error handler.  Not interposed, as
 *    they take no datatype: MPI_Win_create / MPI_Win_attach and
 *    MPI_Buffer_attach on device memory, user reduction functions
 *    (MPI_Op_create: they see host memory) -- never hand them device memory.
 *  - Persistent requests (MPI_Send_init & co.): the attributes are those
 *    the datatype had at the init call (the request keeps a duplicate); the
 *    dependency (stream, queue, event) is captured at each MPI_Start.  With
 *    untagged datatypes they are MPI's own requests; starting one while a
 *    device send to the same peer is still queued may overtake it.
 *  - MPI_Bsend / MPI_Ibsend / MPI_Bsend_init of a device datatype pack the
 *    data into host memory in the call (after its dependency) and hand the
 *    packed bytes to MPI's buffered send (MPI_Pack_size sizing holds).
 *    MPI_Sendrecv_replace / MPI_Isendrecv_replace pack the send data in the
 *    call too (MPICH copies these with the CPU: never device memory).
 *  - MPI_Isendrecv(_replace) of a device datatype returns one request
 *    joining its receive and send, completed from MPI's progress engine;
 *    its error (the receive's, else the send's) is raised by the completion
 *    calls like any mpiacc request's.  MPI_Mrecv / MPI_Imrecv (no
 *    communicator argument) raise mpiacc's errors on MPI_COMM_SELF's
 *    handler (MPI_COMM_WORLD's while it has none).
 *  - Device collectives on intercommunicators are refused (MPI_ERR_COMM);
 *    the persistent collectives' MPI_Start is not ordered behind device
 *    collectives still waiting for their dependency, nor are communicator
 *    constructors (MPI_Comm_dup...), whose agreement MPI runs on the
 *    communicator: complete device collectives before those.  A derived
 *    datatype freed before a deferred host collective (queued behind a
 *    device one) reaches MPI is an error of the application.
 *  - The completion calls recognise mpiacc's requests through the MPI_*
 *    entry points; completing them with PMPI_* directly gets MPICH's own
 *    error reporting (an MPI_ERR_OTHER-class wrapper on MPI_COMM_SELF).
 *
 * Environment
 *  - MPIACC_DISABLE=1: mpiacc starts no backend; untagged and plain
 *    MPIACC_BUF_HOST traffic is forwarded to MPI untouched.  The keyvals
 *    are still created (tagging stays valid) and a call on a device
 *    datatype (or MPIACC_BUF_HOST with MPIACC_EVENT) fails with an
 *    MPI_ERR_OTHER-class error naming MPIACC_DISABLE, instead of handing
 *    the device buffer to MPI as host memory.
 *  - MPIACC_LOG=off|warn|info|debug (default warn): diagnostics on
 *    stderr: off = none; warn = misuse and environment warnings, each
 *    cause once (errors go to the error handler; under a fatal one mpiacc
 *    prints them first); info = + each error once, each path's first use,
 *    the transport chosen at MPI_Init and a summary per rank at
 *    MPI_Finalize; debug = + every error, MPI call and state transition.
 *  - MPIACC_EAGER_INIT=1: start the CUDA/OpenCL backends in MPI_Init
 *    (default: each starts at the first operation on a buffer of its kind,
 *    so programs that never tag a datatype pay nothing for them).
 *  - Every cl_mem is checked before mpiacc hands it to OpenCL: a released
 *    one, or a host pointer passed with an OpenCL datatype, is
 *    MPI_ERR_BUFFER instead of a crash in the OpenCL ICD loader (always
 *    on: it reads nothing through the handle and costs about 6 ns per call
 *    once a cl_mem has been seen; MPIACC_OCL_CHECK_RELEASED, its switch
 *    before 0.2.0, is no longer read).
 *  - An MPIACC_* variable mpiacc does not read (a misspelling such as
 *    MPIACC_LOGG) gives one warning at start-up naming the closest one it
 *    reads; MPIACC_TEST_* and MPIACC_BENCH_* are reserved for the
 *    project's tests and benchmarks and never warned about.
 *  - MPIACC_FINALIZE_TIMEOUT=seconds (default 10): how long MPI_Finalize
 *    lets operations still pending finish (see "Semantics").
 *  - MPIACC_TRANSPORT=auto|staged: see "Device messages and MPI's
 *    transport" below.  The tuning knobs (MPIACC_CUDA_PACK,
 *    MPIACC_CUDA_GENERIC, MPIACC_CUDA_SYNC, MPIACC_OCL_RECT,
 *    MPIACC_OCL_RECT_MIN, MPIACC_IPC_CACHE) are listed,
 *    with every accepted value, in README.md and by mpiacc-info.  A value
 *    that does not parse gives one warning and the default.
 *
 * This header needs neither CUDA nor OpenCL headers: handles are void *.
 */
#ifndef MPIACC_H_INCLUDED
#define MPIACC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MPIACC_API __attribute__((visibility("default")))
#else
#define MPIACC_API
#endif

/* The library's version (also MPIACC_Get_version, mpiacc-info and the
 * pkg-config and CMake packages).  While the major version is 0 the API
 * and the ABI may still change between minor versions (CHANGELOG.md says
 * what changed); patch versions change neither. */
#define MPIACC_VERSION_MAJOR 0
#define MPIACC_VERSION_MINOR 2
#define MPIACC_VERSION_PATCH 0

/*
 * Attribute keyvals for MPI_Type_set_attr / MPI_Type_get_attr.
 *
 * MPIACC_BUF_TYPE  where the buffer lives: one of the MPIACC_BUF_* values.
 * MPIACC_STREAM    a cudaStream_t the data depends on (CUDA buffers): the
 *                  call is ordered after the work enqueued on it before the
 *                  call, and after nothing else (plus MPIACC_EVENT).  Not set,
 *                  or set to NULL: the default-stream dependency, i.e. after
 *                  all work enqueued before the call on the device's legacy
 *                  default stream and on every blocking stream of that
 *                  device in this process; that includes every thread's
 *                  per-thread default stream, so code built with
 *                  --default-stream legacy or per-thread (or passing
 *                  cudaStreamPerThread) is covered, as are streams made by
 *                  cudaStreamCreate.  Work on streams created with
 *                  cudaStreamNonBlocking is not: name such a stream here
 *                  (or record an MPIACC_EVENT).  A cudaMemcpy from
 *                  pageable host memory to the device may return before
 *                  its data land (CUDA's API synchronization behavior); it
 *                  runs on the legacy default stream, so the default-stream
 *                  dependency covers it and a non-blocking MPIACC_STREAM
 *                  does not (synchronise first).  Like any legacy-stream
 *                  operation, the default-stream dependency also makes work
 *                  enqueued later on blocking streams wait for that point.
 *                  Giving a stream replaces the default-stream dependency
 *                  by that stream's, with neither effect.  No host
 *                  synchronisation either way: mpiacc's GPU work waits on
 *                  the GPU.
 * MPIACC_CL_QUEUE  a cl_command_queue the data depends on (OpenCL buffers);
 *                  its context must be the cl_mem's context.  Or
 *                  MPIACC_QUEUE_NONE: the data depends on no queue, it is
 *                  complete when the MPI call is made (written by a blocking
 *                  clEnqueueWriteBuffer, after clFinish or clWaitForEvents;
 *                  for a receive: nothing still uses the buffer).  Required:
 *                  OpenCL has no default queue, so an OpenCL datatype
 *                  without MPIACC_CL_QUEUE (and without MPIACC_EVENT) is
 *                  refused at the call (MPI_ERR_ARG), point-to-point,
 *                  collectives and MPI_Pack/MPI_Unpack alike -- it used to
 *                  mean "no dependency" and sent whatever the buffer held,
 *                  silently old bytes behind a kernel still writing it.
 *                  (An empty message needs nothing.)
 * MPIACC_EVENT     a cudaEvent_t (CUDA) or cl_event (OpenCL) the data also
 *                  depends on.  For MPIACC_BUF_HOST, a pointer to an `int`
 *                  flag (read atomically) that another thread sets > 0 when
 *                  the host data is ready, or < 0 to fail the operation: the
 *                  call then goes through mpiacc's request pool.
 * MPIACC_DEVICE    CUDA device ordinal, as (void *)(intptr_t)ordinal, used
 *                  when no stream is given (default: the current device).
 * MPIACC_ORDER     when the request of a device operation completes:
 *                  MPIACC_ORDER_HOST (the default) or MPIACC_ORDER_STREAM
 *                  ("Stream-ordered completion" below); any other value is
 *                  refused (MPI_ERR_ARG).
 *
 * All attributes are copied by MPI_Type_dup.  They are read when an MPI
 * call is made: changing or freeing the datatype afterwards does not affect
 * operations already started.
 *
 * Derived datatypes.  A datatype without MPIACC_BUF_TYPE of its own that
 * is built, at any depth and with any constructor (contiguous, vector,
 * hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
 * subarray, darray, resized, dup...), from tagged datatypes inherits
 * their attributes: MPI_Type_contiguous(2, vec, &t2) of a vec tagged
 * MPIACC_BUF_OPENCL + MPIACC_CL_QUEUE q is an OpenCL datatype on q.
 *  - Constituents without mpiacc attributes, neither their own nor
 *    inherited (MPI_INT, an untagged vector of MPI_INT...), only describe
 *    layout; all the others must agree: the same MPIACC_BUF_TYPE and the
 *    same MPIACC_STREAM, MPIACC_CL_QUEUE, MPIACC_EVENT, MPIACC_DEVICE and
 *    MPIACC_ORDER (each set to the same value on all, or on none).  Otherwise — two
 *    buffer types, a MPIACC_BUF_HOST constituent beside a device one, two
 *    queues or streams — every call with the datatype fails with
 *    MPI_ERR_TYPE, naming two constituents that disagree (by
 *    MPI_Type_get_name when they have a name).
 *  - Attributes on the datatype itself take precedence: with its own
 *    MPIACC_BUF_TYPE only its own attributes count; without, its own
 *    dependency attributes (e.g. MPIACC_CL_QUEUE) replace the inherited
 *    ones.
 *  - The inheritance is decided at the datatype's first use in an MPI call
 *    (about a microsecond per nesting level, once) and cached on the
 *    datatype (MPIACC_LOG=info logs it once).  MPI_Type_set_attr or
 *    MPI_Type_delete_attr on an mpiacc keyval of a datatype that derived
 *    datatypes were built from makes every such decision be remade at its
 *    datatype's next use, so changed constituents are seen; changing other
 *    datatypes' attributes costs nothing.  A change made with
 *    PMPI_Type_set_attr on a constituent after the derived datatype's first
 *    use is not seen.  Constituents the application has freed still count
 *    (MPI keeps them alive with the derived datatype).
 *  - The stream, queue or device an attribute names is checked when the
 *    datatype is first used and after each change of its attributes, not
 *    at every call: destroying a stream that a datatype in use still names
 *    is the application's error (set the attribute anew, or free the
 *    datatype, before destroying the stream).
 */
extern MPIACC_API int MPIACC_BUF_TYPE;
extern MPIACC_API int MPIACC_STREAM;
extern MPIACC_API int MPIACC_CL_QUEUE;
extern MPIACC_API int MPIACC_EVENT;
extern MPIACC_API int MPIACC_DEVICE;
extern MPIACC_API int MPIACC_ORDER;

/*
 * Stream-ordered completion (MPIACC_ORDER = MPIACC_ORDER_STREAM, opt-in)
 *
 * By default (MPIACC_ORDER_HOST) a device request completes once its data
 * is in place: a receive's data are in the buffer, visible to the host and
 * to any stream or queue; a send's buffer may be overwritten by anyone.
 * With MPIACC_ORDER_STREAM on a CUDA or OpenCL datatype, the request
 * completes as soon as mpiacc has enqueued its last device work on the GPU,
 * and the datatype's stream (MPIACC_STREAM; without one the legacy default
 * stream of MPIACC_DEVICE / the current device) or queue (MPIACC_CL_QUEUE)
 * is made to wait for that work on the device (cudaStreamWaitEvent,
 * clEnqueueBarrierWithWaitList), in the model of stream-triggered MPI:
 *  - receive: MPI_Wait / MPI_Test return once the message has arrived and
 *    its unpack from staging is enqueued (a receive handed to MPI as it is,
 *    its dependency met at the call, completes when MPI has written the
 *    buffer).  Work enqueued on that stream / queue
 *    after the completion call sees the data.  The host, other streams and
 *    other queues see the data only after synchronising with that stream /
 *    queue (cudaStreamSynchronize, an event recorded on it, clFinish, a
 *    marker's event) -- not at the completion call.  The status (source,
 *    tag, count) is final at completion.
 *  - send: MPI_Wait / MPI_Test return once the pack of the data (on the
 *    device protocol, a dense buffer's copy into device staging) is
 *    enqueued behind the dependency: work enqueued on the stream / queue
 *    after the completion call runs only after mpiacc has read the data, so
 *    it may overwrite the buffer (a send handed to MPI as it is completes
 *    when MPI has read it).  The host or another stream must synchronise
 *    with the stream first.  The message itself leaves later: when
 *    mpiacc's progress (any MPI call of this process that drives
 *    progress, MPI_Finalize at the latest) sees the pack done, so a
 *    process that stops calling MPI for a long time delays its peer.
 *    Synchronous-mode sends keep MPIACC_ORDER_HOST's completion (their
 *    completion means "matched").
 *  - The wait is put on the stream / queue as soon as the work is
 *    enqueued, from whichever MPI call drives mpiacc's progress: work the
 *    application enqueued there after the MPI call but before the
 *    completion call may be ordered after it too (never before).
 *  - OpenCL: in-order and out-of-order queues alike (the barrier orders
 *    every later command of either kind of queue).  An out-of-order
 *    queue gives no dependency (see "Dependency" above).
 *  - Refused at the call (MPI_ERR_ARG): MPIACC_ORDER_STREAM on a
 *    MPIACC_BUF_HOST datatype with MPIACC_EVENT (no stream), on an OpenCL
 *    datatype without a queue (MPIACC_CL_QUEUE unset or MPIACC_QUEUE_NONE).
 *    (A plain MPIACC_BUF_HOST call is
 *    MPI's own: the attribute has no effect.)  Collectives, MPI_Pack /
 *    MPI_Unpack and the calls that pack in the call (MPI_Bsend & co.,
 *    MPI_Sendrecv_replace) keep MPIACC_ORDER_HOST's completion.
 *  - After completion mpiacc finishes the operation in the background (the
 *    message, staging).  A failure it detects
 *    then (the dependency or the unpack failed, the peer aborted) cannot be
 *    reported on the completed request: it is logged (warn) and counted in
 *    MPIACC_Stats.failed, and the next device call (point-to-point,
 *    MPI_Pack/MPI_Unpack excluded) on the same communicator fails with it
 *    (its class and message), raised on that communicator's handler, before
 *    doing anything.  The data on the stream are then undefined.
 *  - MPI_Cancel acts as usual until the request completes; MPI_Finalize
 *    waits for such background operations as for pending ones
 *    (MPIACC_FINALIZE_TIMEOUT).
 *  - MPIACC_ORDER is inherited by derived datatypes like the other
 *    attributes (constituents must agree on it too).
 */
/* Value of MPIACC_CL_QUEUE: the data depends on no command queue (see the
 * keyvals above).  Not a cl_command_queue: never passed to OpenCL. */
#define MPIACC_QUEUE_NONE ((void *)(intptr_t)-1)

#define MPIACC_ORDER_HOST   ((void *)(intptr_t)1)
#define MPIACC_ORDER_STREAM ((void *)(intptr_t)2)

/*
 * Device messages and MPI's transport
 *
 * Where MPI's own transport takes CUDA device memory, mpiacc hands CUDA
 * device messages to MPI as device memory, on every communicator, with
 * nothing to set: MPICH on its UCX netmod over a UCX built with CUDA (PyPI's
 * libucx-cu13, HPC-X...), with MPICH's own shared memory, which copies with
 * the CPU, out of the way (MPIR_CVAR_NOLOCAL=1, or one process per node).
 * mpiacc decides at MPI_Init, the same way on every process (any process
 * that cannot tell makes it "staged" everywhere); MPIACC_LOG=info and
 * mpiacc-info say which path is in effect and why; MPIACC_TRANSPORT=staged
 * forces the staged path.  Then:
 *  - a dense layout (count x datatype one byte range) whose data dependency
 *    is met at the call goes to MPI as it is (the user's pointer, MPI_BYTE):
 *    the request is MPI's own (MPIACC_PROTO_MPI in MPIACC_Stats);
 *  - any other layout is packed by mpiacc's kernels into device staging on
 *    the buffer's device, after its dependency, and that staging goes to
 *    MPI; a dense send whose dependency is pending waits for it, then goes
 *    to MPI as it is; receives other than the first kind go through device
 *    staging, posted at the call, and are unpacked on the device
 *    (MPIACC_PROTO_DEVICE).  The bytes are exactly MPI_Pack's, so CUDA,
 *    OpenCL and host peers interoperate.
 *  - never device memory at MPI for a message to or from oneself: MPI
 *    crashes on it (measured, every combination).  A send to one's own rank,
 *    a receive from one's own rank or from MPI_ANY_SOURCE (on an
 *    intracommunicator), and MPI_Mrecv / MPI_Imrecv of a message this
 *    process sent itself are staged through host memory (MPI still
 *    matches).  MPI_Bsend & co. and MPI_Sendrecv_replace pack to host
 *    memory in the call as before (MPICH copies those with the CPU).
 * Matching, wildcards, MPI_Probe / MPI_Iprobe / MPI_Mprobe, MPI_Get_count,
 * truncation, cancel and device <-> host messages are MPI's.  A message
 * of a datatype of size 0 (host or device, tagged or not, point-to-point or
 * a collective's block), like any message of no bytes mpiacc handles
 * itself, goes to MPI as 0 MPI_BYTE (reductions: count 0 of their
 * datatype): MPICH's UCX netmod dies of SIGFPE receiving into a datatype of
 * size 0; the status, MPI_Get_count and MPI_Get_elements are what MPI
 * gives.  A persistent collective cannot be
 * rewritten: with a datatype of size 0 it is refused on that netmod
 * (MPI_ERR_TYPE).  docs/semantics.md, "Defects of the engine that mpiacc
 * works around", has the details and a plain-MPI reproducer.  OpenCL
 * buffers, MPIACC_BUF_HOST with MPIACC_EVENT, and CUDA buffers where MPI
 * does not take them keep the staged protocol (packed into host memory,
 * sent as MPI_PACKED).
 *
 * The former "direct" communicators: the info key MPIACC_DIRECT_INFO
 * ("mpiacc_direct") and MPIACC_DIRECT=1 are accepted and ignored: device
 * messages take the same path on every communicator, with no contract.
 */
#define MPIACC_DIRECT_INFO "mpiacc_direct"

/*
 * Untagged device buffers: pointer-query mode and MPI 4.1 memory kinds
 *
 * mpiacc's model stays: the datatype says where the buffer is, and a tagged
 * datatype (MPIACC_BUF_TYPE) always takes precedence over everything below.
 * For programs written for a "CUDA-aware MPI" (a cudaMalloc pointer with a
 * plain MPI_FLOAT) two opt-in ways exist:
 *
 *  - MPIACC_UVA=1 (pointer-query mode): the buffer of an untagged datatype
 *    is classified with one CUDA driver query (cuPointerGetAttributes):
 *      device memory (cudaMalloc, cudaMallocAsync, VMM)  -> as if tagged
 *          MPIACC_BUF_CUDA with MPIACC_DEVICE = the owning device and no
 *          MPIACC_STREAM: ordered after the legacy default stream's work
 *          (and every blocking stream's), like any CUDA-tagged datatype;
 *      managed memory (cudaMallocManaged)                 -> the same CUDA
 *          path: the pack kernels read it on the GPU, where it usually
 *          lives, instead of the CPU faulting its pages over;
 *      pinned host memory (cudaMallocHost, cudaHostRegister) -> the same
 *          CUDA path: the kernels read it through its device mapping
 *          (MPICH's shared-memory copy, process_vm_readv, was seen failing
 *          on pinned pages of a virtual machine);
 *      any other host memory                               -> MPI, untouched.
 *    Host answers are cached per 4 KiB granule, so host traffic pays a tag
 *    check, one flag and one cache load (bench/host_overhead --uva);
 *    device answers are queried again on every call (a device call costs
 *    microseconds anyway, and a freed and reused address is seen afresh).
 *    The rule the cache relies on: memory seen as host stays host.  A
 *    program that unmaps host memory (free() of a large block, munmap,
 *    cudaFreeHost) and then gets CUDA device memory at the same addresses
 *    must tag those datatypes or assert "cuda:device" instead.  The CUDA
 *    backend starts in MPI_Init in this mode; MPIX_Query_cuda_support()
 *    returns 1 and MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) says yes.
 *    The classified address is the buffer argument itself (a datatype with
 *    a negative lower bound or MPI_BOTTOM with absolute addresses: tag it).
 *    Applied to every call that takes device datatypes: point-to-point
 *    (persistent, buffered, matched-probe receives, Sendrecv(_replace) and
 *    Isendrecv(_replace) included) and MPI_Pack/MPI_Unpack (the classified
 *    buffer is the unpacked one; MPI_Mrecv/MPI_Imrecv have no communicator:
 *    the query applies, no assertion).  Calls that refuse device datatypes
 *    (RMA, MPI-IO, partitioned, external32) and those mpiacc does not
 *    interpose hand untagged buffers to MPI as host memory.
 *
 *  - MPI 4.1 memory allocation kinds (kinds from the MPI Forum's "Memory
 *    Allocation Kinds" side document).  MPI_Comm_get_info on any
 *    communicator, MPI_COMM_WORLD included, reports in
 *    "mpi_memory_alloc_kinds" MPICH's kinds ("mpi", "system") plus
 *    "cuda:device,cuda:host,cuda:managed" when the CUDA backend has a
 *    device.  A request made with `mpiexec -memory-alloc-kinds` is consumed
 *    by MPICH's launcher, which keeps only the kinds MPICH itself supports:
 *    mpiacc cannot see it and lists every kind it supports.
 *    "mpi_assert_memory_alloc_kinds" given to MPI_Comm_set_info,
 *    MPI_Comm_dup_with_info, MPI_Comm_split_type or
 *    MPI_Dist_graph_create[_adjacent] (kept by MPI_Comm_dup, not by other
 *    constructors; a later MPI_Comm_set_info without the key keeps it,
 *    another value replaces it; reported back by MPI_Comm_get_info) is
 *    honoured for the
 *    untagged datatypes of calls on that communicator:
 *      only device kinds ("cuda:device", "cuda:managed", or both)
 *          -> every untagged buffer is CUDA memory of the current device,
 *             with no pointer query (MPIACC_UVA not needed);
 *      no device kind ("system", "mpi[:...]", "cuda:host")
 *          -> every untagged buffer is host memory, no query even with
 *             MPIACC_UVA=1;
 *      a mix ("system,cuda:device", bare "cuda"), or a kind mpiacc does not
 *          handle ("rocm:...", "level_zero:...") -> the pointer query, on
 *          that communicator even without MPIACC_UVA.
 *    Kinds and mpiacc's attributes: cuda:device and cuda:managed =
 *    MPIACC_BUF_CUDA; cuda:host, system and mpi = host memory (untagged or
 *    MPIACC_BUF_HOST).  OpenCL has no standard kind and its buffers
 *    (cl_mem) are handles, not addresses: OpenCL buffers are always named
 *    by MPIACC_BUF_OPENCL on the datatype.
 */

/* Values of MPIACC_BUF_TYPE, usable directly as the attribute value. */
#define MPIACC_BUF_HOST   ((void *)(intptr_t)1)
#define MPIACC_BUF_CUDA   ((void *)(intptr_t)2)
#define MPIACC_BUF_OPENCL ((void *)(intptr_t)3)

/* The library's version (not MPI's).  Can be called at any time. */
MPIACC_API int MPIACC_Get_version(int *major, int *minor);

/*
 * Statistics: what mpiacc did in this process since it started.
 *
 *     MPIACC_Stats st = {.size = sizeof st};
 *     MPIACC_Get_stats(&st);
 *     printf("%llu OpenCL sends staged through the host\n",
 *            st.sends[3][MPIACC_PROTO_STAGED]);          // row 3: MPIACC_BUF_OPENCL
 *
 * Set `size` to sizeof(MPIACC_Stats) as your program knows it: mpiacc fills
 * at most that many bytes (later versions only add fields at the end) and
 * sets `version`.  Callable at any time, from any thread, also after
 * MPI_Finalize (the figures then include what MPI_Finalize did, except
 * the IPC cache figures: those are read from running backends only).  Reading
 * is cheap (a few hundred atomic loads and a lock per memory pool); the
 * counters cost nothing on host traffic that goes straight to MPI: only
 * operations that go through mpiacc's request pool are counted.  Returns
 * MPI_SUCCESS, or MPI_ERR_ARG for a NULL pointer or a size too small for
 * `version`.  With MPIACC_LOG=info, MPI_Finalize prints the same figures.
 *
 * Operations are counted when they complete, by buffer kind (row: the
 * value of MPIACC_BUF_*, 1 host, 2 CUDA, 3 OpenCL; row 0 is untagged host
 * data that had to wait behind earlier device sends to the same peer) and
 * by protocol (column: one of the MPIACC_PROTO_* values below, the same in
 * every run and process; protocol[p] is the column's name: "staged",
 * "ordered", "device", "MPI", "coll", and "" for a spare column not used
 * yet; columns from MPIACC_PROTO_NFIXED on are spare ones, claimed in order
 * of first use by protocols a later mpiacc may add).  The MPIACC_PROTO_MPI
 * column is counted at the call (mpiacc never sees those complete).
 * Bytes are packed bytes.
 */
enum {
    MPIACC_PROTO_STAGED = 0,  /* packed through host memory, sent as MPI_PACKED                */
    MPIACC_PROTO_ORDERED = 1, /* host data queued behind device sends (row 0)                  */
    MPIACC_PROTO_DEVICE = 2,  /* device memory handed to MPI by mpiacc's pool: a dense buffer
                               * once its dependency was met, or packed on the device into
                               * device staging (receives: through device staging)            */
    MPIACC_PROTO_MPI = 3,     /* a dense device buffer handed to MPI as it is at the call
                               * (its dependency met): MPI's own request                     */
    MPIACC_PROTO_COLL = 4,    /* collectives on device buffers                               */
    MPIACC_PROTO_NFIXED = 5   /* first spare column                                          */
};
#define MPIACC_STATS_VERSION 2
#define MPIACC_STATS_KINDS 4
#define MPIACC_STATS_PROTOCOLS 8
typedef struct MPIACC_Stats {
    size_t size; /* in: sizeof(MPIACC_Stats) */
    int version; /* out: MPIACC_STATS_VERSION */
    char protocol[MPIACC_STATS_PROTOCOLS][16];
    unsigned long long sends[MPIACC_STATS_KINDS][MPIACC_STATS_PROTOCOLS];
    unsigned long long receives[MPIACC_STATS_KINDS][MPIACC_STATS_PROTOCOLS];
    unsigned long long bytes_sent[MPIACC_STATS_KINDS][MPIACC_STATS_PROTOCOLS];
    unsigned long long bytes_received[MPIACC_STATS_KINDS][MPIACC_STATS_PROTOCOLS];
    unsigned long long failed;    /* completed with an error                  */
    unsigned long long cancelled; /* receives cancelled (MPI_Cancel, or an
                                   * unmatched receive at MPI_Finalize)      */
    unsigned long long uncounted; /* completed but in no cell (more protocols
                                   * than columns)                           */
    unsigned long long pending;   /* operations not complete right now       */
    /* Time operations spent, summed over operations (overlapping ones add
     * up), from the moment mpiacc enqueued the work to the moment it saw it
     * done.  When the backend chains work on the device, a pack also waits
     * there for the data dependency, so that wait is part of pack_seconds;
     * dep_wait_seconds is the host-side wait of backends that cannot chain
     * (the CPU backend, MPIACC_EVENT flags). */
    double pack_seconds;
    double unpack_seconds;
    double dep_wait_seconds;
    /* Memory pools: the most operations alive at once, and host staging per
     * buffer kind (bytes held at most, blocks allocated, requests served
     * from the pool without allocating). */
    unsigned long long ops_hwm;
    unsigned long long staging_bytes_hwm[MPIACC_STATS_KINDS];
    unsigned long long staging_allocs[MPIACC_STATS_KINDS];
    unsigned long long staging_reuses[MPIACC_STATS_KINDS];
    /* CUDA IPC caches (on-device collectives): memory and event handles opened,
     * found already open, and mappings evicted (0 without CUDA). */
    unsigned long long ipc_opens, ipc_hits, ipc_evictions;
    /* Collectives (blocking or not) whose buffers are CUDA device memory:
     * run on the device (by NCCL, or by mpiacc's IPC collectives where NCCL
     * cannot serve), and staged through host memory around MPI's collective
     * (an operation or call the engine does not take, no engine). */
    unsigned long long coll_device, coll_staged;
    /* Of coll_device, those NCCL ran. */
    unsigned long long coll_engine;
} MPIACC_Stats;

MPIACC_API int MPIACC_Get_stats(MPIACC_Stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* MPIACC_H_INCLUDED */
