/*
 * protocol/wire.h: mpiacc's header, at the front of every message of the
 * direct protocol.
 *
 * Messages (D = the hidden `data` communicator, C = the hidden `ctl` one;
 * id = the sender's operation id, M = direct_comm's tag_mod):
 *
 *   kind      comm, tag               after the header
 *   EAGER     D, user's tag           the packed bytes (total of them)
 *   RTS_PIPE  D, user's tag           nothing; chunks follow on C
 *   RTS_IPC   D, user's tag           export_bytes of the IPC export, then
 *                                     the sender's datatype blob when it fits
 *                                     (flag INLINE_BLOB), else a BLOB follows
 *   ABORT     D, user's tag           nothing: the sender failed before its
 *             or C, 2*(id mod M)      first message / in place of a chunk
 *   CHUNK     C, 2*(id mod M)         bytes [first, first + len) of the packed
 *                                     message (chunk index in `index`)
 *   BLOB      C, 2*(id mod M)         the sender's datatype blob
 *   CTS_PIPE  C, 2*(id mod M)+1       nothing: the receiver declines IPC, the
 *                                     sender streams chunks as for RTS_PIPE
 *   FIN       C, 2*(id mod M)+1       optional text: why the receiver failed
 *
 * The first message of every device send goes on D with the user's tag, so
 * MPI matches it against device receives exactly as it would match the
 * user's message (sources, tags, wildcards, non-overtaking).  Follow-ups of
 * one operation are told apart by (source, tag) on C: the tag carries the
 * sender's id, even from sender to receiver, odd back.
 *
 * Error classes travel as MPI error classes (codes are per process); the
 * side that reads one makes its own error of that class.  The byte order is
 * the machine's: mpiacc's peers are homogeneous, as MPI_PACKED "native"
 * data between them is.
 */
#ifndef MPIACC_WIRE_H_INCLUDED
#define MPIACC_WIRE_H_INCLUDED

#include <stdint.h>
#include <string.h>

#include "../core/core.h"

#define MPIACC_WIRE_MAGIC 0x6363616du /* "macc" in memory on little-endian machines */
#define MPIACC_WIRE_VERSION 1
#define MPIACC_WIRE_HDR 64
/* Most bytes after the header in an RTS (export + inline blob); every
 * device receive can take a first message of HDR + this. */
#define MPIACC_WIRE_RTS_INLINE_MAX 4032
/* Most bytes after the header in one message (extra_bytes is 32 bits):
 * the eager limit and a chunk's data are kept below it. */
#define MPIACC_WIRE_EXTRA_MAX ((MPI_Count)UINT32_MAX)
/* Most bytes of text in a FIN. */
#define MPIACC_WIRE_FIN_TEXT 256

typedef enum {
    MPIACC_WIRE_EAGER = 1,
    MPIACC_WIRE_RTS_PIPE,
    MPIACC_WIRE_RTS_IPC,
    MPIACC_WIRE_ABORT,
    MPIACC_WIRE_CHUNK,
    MPIACC_WIRE_BLOB,
    MPIACC_WIRE_CTS_PIPE,
    MPIACC_WIRE_FIN,
    MPIACC_WIRE_KIND_MAX
} mpiacc_wire_kind_t;

/* flags */
#define MPIACC_WIRE_INLINE_BLOB 0x1u /* RTS_IPC: the blob follows the export */

typedef struct mpiacc_wire_hdr {
    uint32_t magic;
    uint8_t version;
    uint8_t kind;          /* mpiacc_wire_kind_t                               */
    uint16_t flags;
    uint32_t op_id;        /* the sender's operation id                        */
    int32_t err_class;     /* ABORT / FIN: MPI error class, MPI_SUCCESS if none */
    int64_t total;         /* packed bytes of the whole message                */
    int64_t chunk;         /* RTS_PIPE: chunk bytes; CHUNK: first byte          */
    int64_t index;         /* RTS_PIPE: number of chunks; CHUNK: its index      */
    int64_t count;         /* RTS_IPC: the sender's count of its datatype      */
    uint32_t blob_bytes;   /* RTS_IPC: bytes of the sender's datatype blob     */
    uint32_t export_bytes; /* RTS_IPC: bytes of the IPC export                 */
    uint32_t extra_bytes;  /* bytes after the header in this message           */
    uint32_t buf_kind;     /* RTS: the sender's buffer kind (MPIACC_KIND_*)    */
} mpiacc_wire_hdr_t;

_Static_assert(sizeof(mpiacc_wire_hdr_t) == MPIACC_WIRE_HDR, "the wire header is 64 bytes");

static inline void mpiacc_wire_init(mpiacc_wire_hdr_t *h, mpiacc_wire_kind_t kind, uint32_t op_id)
{
    memset(h, 0, sizeof *h);
    h->magic = MPIACC_WIRE_MAGIC;
    h->version = MPIACC_WIRE_VERSION;
    h->kind = (uint8_t)kind;
    h->op_id = op_id;
}

/* Reads the header of a message of n bytes received into buf; a message
 * that is not one of mpiacc's (wrong size, magic, version or kind) is an
 * MPI_ERR_INTERN-class error naming what was found. */
static inline int mpiacc_wire_read(const void *buf, MPI_Count n, mpiacc_wire_hdr_t *h)
{
    if (n < MPIACC_WIRE_HDR)
        return mpiacc_err(MPIACC_ERRK_INTERN, "direct protocol: a message of %lld bytes has no mpiacc header",
                          (long long)n);
    memcpy(h, buf, sizeof *h);
    if (h->magic != MPIACC_WIRE_MAGIC || h->version != MPIACC_WIRE_VERSION || h->kind < MPIACC_WIRE_EAGER ||
        h->kind >= MPIACC_WIRE_KIND_MAX || h->total < 0 || (MPI_Count)h->extra_bytes > n - MPIACC_WIRE_HDR)
        return mpiacc_err(MPIACC_ERRK_INTERN,
                          "direct protocol: malformed header (magic %#x version %u kind %u; was every process "
                          "built with the same mpiacc, and does every process call MPI through mpiacc?)",
                          (unsigned)h->magic, (unsigned)h->version, (unsigned)h->kind);
    return MPI_SUCCESS;
}

/* ctl tags of operation id */
static inline int mpiacc_wire_tag_fwd(uint32_t id, int tag_mod)
{
    return (int)(2 * (id % (uint32_t)tag_mod));
}
static inline int mpiacc_wire_tag_back(uint32_t id, int tag_mod)
{
    return (int)(2 * (id % (uint32_t)tag_mod) + 1);
}

#endif
