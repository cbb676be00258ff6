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
 *    MPI_Finalize (they are created by mpiacc's MPI_Init and equal
 *    MPI_KEYVAL_INVALID before it and after MPI_Finalize).
 *  - A datatype with no MPIACC_BUF_TYPE attribute (or MPIACC_BUF_HOST) is a
 *    host datatype: the call goes straight to the MPI library.
 *  - Dependency: a send's data is read, and a receive's data is written, only
 *    after the work that was enqueued on MPIACC_STREAM / MPIACC_CL_QUEUE
 *    before the MPI call has finished (for an in-order OpenCL queue; an
 *    out-of-order queue implies no dependency), and after MPIACC_EVENT.
 *    A CUDA buffer without MPIACC_STREAM depends on the default stream (see
 *    MPIACC_STREAM below), so plain code such as cudaMemcpy(d, h, ...) or
 *    cudaMemset(d, ...) followed by MPI_Send / MPI_Recv on d is ordered.
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
 *  - Buffers: for CUDA the buffer argument is a device pointer; for OpenCL it
 *    is the cl_mem handle itself, and byte offsets inside it come from the
 *    datatype (displacements, lower bound, subarray starts).
 *  - MPI_Pack / MPI_Unpack with a device-tagged datatype: the packed buffer
 *    lives in the same memory space as the data (a device pointer for CUDA, a
 *    cl_mem for OpenCL); `position` counts bytes as usual.  MPI_Pack_size is
 *    unchanged.  The packed format equals MPI_Pack's on the host, so packed
 *    bytes can be sent as MPI_PACKED to any peer.
 *  - Errors: invalid attribute values make the MPI call fail with an error of
 *    class MPI_ERR_ARG; an unavailable backend or a CUDA/OpenCL failure with
 *    an error of class MPI_ERR_OTHER.  Errors go through the communicator's
 *    error handler; MPI_Error_string describes what was wrong.
 *
 * Known limits
 *  - CUDA: the first mpiacc operation on a device loads mpiacc's kernels.
 *    With CUDA's default lazy module loading that load waits for kernels
 *    already running on the device; set CUDA_MODULE_LOADING=EAGER, or make
 *    one mpiacc call on the device before launching long-running kernels.
 *  - Several ranks sharing one GPU: without MPS, the GPU switches between
 *    the processes' contexts for every pack/unpack (~70 us each on an H200);
 *    run the CUDA MPS daemon, as usual for shared GPUs.
 *  - MPICH's MPI_Waitall/Testall/Waitsome report the error of a failed
 *    mpiacc request as an MPI_ERR_OTHER-class code wrapping mpiacc's (MPI_Wait,
 *    MPI_Test and the blocking calls return mpiacc's code itself).
 *
 * Environment
 *  - MPIACC_DISABLE=1: every call is forwarded to MPI untouched.
 *  - MPIACC_LOG=warn|info|debug: diagnostics on stderr (default: silent).
 *
 * This header needs neither CUDA nor OpenCL headers: handles are void *.
 */
#ifndef MPIACC_H_INCLUDED
#define MPIACC_H_INCLUDED

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

#define MPIACC_VERSION_MAJOR 0
#define MPIACC_VERSION_MINOR 1

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
 *                  (or record an MPIACC_EVENT).  Like any legacy-stream
 *                  operation, the default-stream dependency also makes work
 *                  enqueued later on blocking streams wait for that point.
 *                  Giving a stream replaces the default-stream dependency
 *                  by that stream's, with neither effect.  No host
 *                  synchronisation either way: mpiacc's GPU work waits on
 *                  the GPU.
 * MPIACC_CL_QUEUE  a cl_command_queue the data depends on (OpenCL buffers);
 *                  its context must be the cl_mem's context.
 * MPIACC_EVENT     a cudaEvent_t (CUDA) or cl_event (OpenCL) the data also
 *                  depends on.  For MPIACC_BUF_HOST, a pointer to an `int`
 *                  flag (read atomically) that another thread sets > 0 when
 *                  the host data is ready, or < 0 to fail the operation: the
 *                  call then goes through mpiacc's request pool.
 * MPIACC_DEVICE    CUDA device ordinal, as (void *)(intptr_t)ordinal, used
 *                  when no stream is given (default: the current device).
 *
 * All attributes are copied by MPI_Type_dup.  They are read when an MPI
 * call is made: changing or freeing the datatype afterwards does not affect
 * operations already started.
 */
extern MPIACC_API int MPIACC_BUF_TYPE;
extern MPIACC_API int MPIACC_STREAM;
extern MPIACC_API int MPIACC_CL_QUEUE;
extern MPIACC_API int MPIACC_EVENT;
extern MPIACC_API int MPIACC_DEVICE;

/*
 * Direct protocol (opt-in per communicator)
 *
 * By default a device message is packed into host memory and sent as
 * MPI_PACKED on the application's communicator.  On a *direct*
 * communicator mpiacc may also move it device to device (CUDA IPC between
 * processes of one node) or pipeline it in chunks through pinned host
 * buffers, choosing per message.  To do so its messages travel on hidden
 * communicators of mpiacc's own, with mpiacc's header; MPI still does all
 * matching.  Making a communicator direct is an assertion by the
 * application, collective over the communicator:
 *
 *   every message sent from a device-tagged datatype (MPIACC_BUF_CUDA or
 *   MPIACC_BUF_OPENCL) on it is received into a device-tagged datatype, and
 *   every device-tagged receive on it receives such a message; and every
 *   process calls MPI through mpiacc.
 *
 * (CUDA and OpenCL may be mixed; host datatypes, MPIACC_BUF_HOST with or
 * without MPIACC_EVENT, are host messages and stay on the communicator as
 * without the assertion.)  How:
 *  - info key MPIACC_DIRECT_INFO ("mpiacc_direct") = "true" (also 1, yes,
 *    on; any case) given to MPI_Comm_set_info or MPI_Comm_dup_with_info
 *    (or MPI_Comm_split_type / MPI_Dist_graph_create[_adjacent]); "false"
 *    turns it off.  The value must be the same on every process.
 *  - MPIACC_DIRECT=1 in the environment of every process: MPI_COMM_WORLD
 *    is direct.
 *  - Every communicator made from a direct one by MPI_Comm_dup, _split,
 *    _split_type, _create, _create_group, MPI_Cart_create, MPI_Cart_sub,
 *    MPI_Graph_create or MPI_Dist_graph_create[_adjacent] is direct unless
 *    its info says "false".  MPI_Comm_idup's communicators and
 *    intercommunicators are never direct.  MPI_Comm_get_info reports the
 *    key ("true" / "false") on every communicator.
 * Without the assertion nothing changes.  On a direct communicator the
 * semantics are MPI's: statuses (source, tag, count), wildcards, the
 * non-overtaking order among device messages, every send mode and
 * completion call, MPI_Cancel of receives (until the message matched),
 * MPI_PROC_NULL (no message), empty messages, MPI_THREAD_MULTIPLE, and
 * MPI_Finalize refusing while operations are pending.  A message longer
 * than the receive completes with MPI_ERR_TRUNCATE; the part that fits is
 * written, except for an eager message longer than both the receive and
 * 4 KiB (then nothing is).  A failure on either side (a failed dependency,
 * a device fault) completes both requests with an error — for an eager
 * message the send completes once MPI has its bytes, so a failure of the
 * receiver is the receive's alone.  Limits: MPI_Probe / MPI_Iprobe /
 * MPI_Mprobe see host messages only; every process must use the same
 * mpiacc.
 * Protocols, per message: eager (packed bytes up to MPIACC_EAGER_MAX,
 * default 64K, the smallest value of the communicator's processes; one
 * message), IPC (CUDA, same node, memory that can be exported; the
 * receiver's GPU copies from the sender's buffer) and pipelined (chunks of
 * MPIACC_PIPELINE_CHUNK bytes, default 1M, mpiacc's 64-byte header
 * included, through a ring of pinned buffers).  MPIACC_IPC=0 turns IPC off.
 * Fallbacks between them are automatic and logged once per cause at
 * MPIACC_LOG=info.
 */
#define MPIACC_DIRECT_INFO "mpiacc_direct"

/* Device messages this process has received on direct communicators since
 * MPI_Init, by the protocol that carried their data (eager, pipelined
 * through host staging, IPC device to device).  Any pointer may be NULL.
 * For diagnostics and benchmarks; can be called at any time. */
MPIACC_API int MPIACC_Direct_counts(long *eager, long *pipelined, long *ipc);

/* Values of MPIACC_BUF_TYPE, usable directly as the attribute value. */
#define MPIACC_BUF_HOST   ((void *)(intptr_t)1)
#define MPIACC_BUF_CUDA   ((void *)(intptr_t)2)
#define MPIACC_BUF_OPENCL ((void *)(intptr_t)3)

/* The library's version (not MPI's).  Can be called at any time. */
MPIACC_API int MPIACC_Get_version(int *major, int *minor);

#ifdef __cplusplus
}
#endif

#endif /* MPIACC_H_INCLUDED */
