/* SPDX-License-Identifier: BSD-3-Clause */
/* cu_ipc_msg.h: the message harness of test_cuda_ipc — one exported
 * buffer moved to the other rank through the backend's IPC table, the
 * export record and datatype blob travelling as host MPI messages, the
 * importer checking its whole allocation against MPI_Pack / MPI_Unpack. */
#ifndef CU_IPC_MSG_H_INCLUDED
#define CU_IPC_MSG_H_INCLUDED

#include "cu_p2p.h"
#include "core/backend_ipc.h"
#include "pack/pack.h"
#include "cu_xcopy_oracle.h"

static const mpiacc_backend_t *B;
static const struct mpiacc_backend_ipc *I;
static int peer, mydev;
static cudaStream_t us; /* user stream on mydev */

#define MK(call_) MPI_CK(call_)

static mpiacc_ipc_stats_t stats(void)
{
    mpiacc_ipc_stats_t s;
    I->stats(&s);
    return s;
}

/* Device bytes [0, n) of p = cu_pattern(i, seed); ordered before any stream. */
static void dfill(char *p, long long n, unsigned seed)
{
    unsigned char *h = malloc((size_t)n);
    cu_hfill(h, n, seed);
    cu_put(p, h, n);
    CU_CK(cudaDeviceSynchronize());
    free(h);
}

/* One side of a message: count x t at alloc + off; the allocation holds
 * cu_pattern(i, seed) before the message. */
typedef struct side {
    MPI_Datatype t;
    int count;
    char *alloc;
    long long bytes, off;
    unsigned seed;
} side_t;

enum { M_NOFILL = 1 }; /* the exporter's data is already in place */

/* The flags of the last message's export (both ranks; 0: not exported). */
static unsigned msg_flags;
/* Called on the exporter right after the export (NULL: nothing): a test
 * that holds the producer with a gate opens it there. */
static void (*msg_after_export)(void);

/* One message from rank ex (side s) to the other rank (side d), packed
 * bytes [first, last) (last < 0: all of s).  Collective.  Returns the
 * importer's mismatches (on both ranks); *okp (may be NULL): whether it
 * was exported. */
static int msg(int ex, const side_t *s, const side_t *d, long long first, long long last, int flags, int *okp)
{
    int bad = 0, ok = 0, ss = 0;
    mpiacc_attrs_t a = cu_stream_attrs(us);
    mpiacc_ipc_export_t x;
    long long nb = 0;
    MPI_Type_size(s->t, &ss);
    if (last < 0) last = (long long)s->count * ss;
    if (cu_rank == ex) {
        mpiacc_pack_type_t *T = NULL;
        void *dep = NULL, *tok = NULL;
        long long lo, hi;
        if (!(flags & M_NOFILL)) dfill(s->alloc, s->bytes, s->seed);
        cu_xc_span(s->t, s->count, &lo, &hi);
        MK(mpiacc_pack_type_analyze(s->t, &T));
        MK(B->capture(&a, s->alloc + s->off, &dep));
        MK(I->export_buf(&a, dep, s->alloc + s->off, (MPI_Aint)lo, (MPI_Aint)hi, &x, &tok, &ok));
        if (msg_after_export) msg_after_export();
        MPI_CK(MPI_Send(&ok, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
        msg_flags = ok ? x.flags : 0;
        if (ok) {
            nb = (long long)T->blob_bytes;
            MPI_CK(MPI_Send(&x, (int)sizeof x, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
            MPI_CK(MPI_Send(&nb, 1, MPI_LONG_LONG, peer, 3, MPI_COMM_WORLD));
            MPI_CK(MPI_Send(T->blob, (int)nb, MPI_BYTE, peer, 4, MPI_COMM_WORLD));
        }
        MPI_CK(MPI_Recv(&bad, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        I->export_release(tok);
        B->release(dep);
        mpiacc_pack_type_release(T);
    } else {
        dfill(d->alloc, d->bytes, d->seed);
        MPI_CK(MPI_Recv(&ok, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        msg_flags = 0;
        if (ok) {
            mpiacc_pack_type_t *T = NULL;
            mpiacc_xfer_desc_t dd = {0};
            void *dep = NULL, *xf = NULL, *blob;
            unsigned char *got = malloc((size_t)d->bytes), *img = malloc((size_t)d->bytes);
            unsigned char *exp = malloc((size_t)d->bytes), *simg = malloc((size_t)s->bytes);
            int rc;
            MPI_CK(MPI_Recv(&x, (int)sizeof x, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            msg_flags = x.flags;
            MPI_CK(MPI_Recv(&nb, 1, MPI_LONG_LONG, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            blob = malloc((size_t)nb);
            MPI_CK(MPI_Recv(blob, (int)nb, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MK(mpiacc_pack_type_analyze(d->t, &T));
            dd.buf = d->alloc + d->off, dd.type = T, dd.count = d->count, dd.first = first, dd.last = last;
            MK(B->capture(&a, dd.buf, &dep));
            rc = I->import_copy(&a, dep, &x, blob, (size_t)nb, s->count, &dd, &xf);
            if (rc != MPI_SUCCESS) {
                char str[MPI_MAX_ERROR_STRING];
                int len = 0;
                MPI_Error_string(rc, str, &len);
                CU_BAD(bad, "import_copy failed: %s", str);
            } else if (cu_wait_handle(B, xf, 30)) {
                CU_BAD(bad, "import not complete after 30 s");
            }
            B->release(xf);
            B->release(dep);
            cu_get(got, d->alloc, d->bytes);
            cu_hfill(img, d->bytes, d->seed);
            cu_hfill(simg, s->bytes, s->seed);
            MK(cu_xc_expect(simg + s->off, s->t, s->count, d->t, d->count, first, last, img, exp, d->bytes, d->off));
            if (!bad && cu_differs(got, exp, d->bytes, "received allocation")) bad++;
            mpiacc_pack_type_release(T);
            free(got), free(img), free(exp), free(simg), free(blob);
        }
        MPI_CK(MPI_Send(&bad, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
    }
    if (okp) *okp = ok;
    return bad;
}

/* A side over a fresh allocation of bytes (buffer at off). */
static side_t mkside(MPI_Datatype t, int count, long long off, long long bytes, unsigned seed)
{
    side_t s = {t, count, NULL, bytes, off, seed};
    CU_CK(cudaMalloc((void **)&s.alloc, (size_t)bytes));
    return s;
}

static void freeside(side_t *s)
{
    CU_CK(cudaFree(s->alloc));
    s->alloc = NULL;
}

#endif
