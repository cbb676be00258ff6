/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/errcall.c: the user's MPI call in error messages (core.h,
 * mpiacc_err_call_t): the current call per thread, an operation's copy of
 * it, and its text, "MPI_Isend(buf=0x7f.., count=4, datatype=0x4c000405
 * 'halo_col', dest=1, tag=7, comm=MPI_COMM_WORLD, request=0x7ffd..)", the
 * way MPICH's own error stacks print a call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "errcall.h"

_Thread_local const mpiacc_err_call_t *mpiacc_err_current;

void mpiacc_err_save(mpiacc_err_saved_t *s)
{
    const mpiacc_err_call_t *c = mpiacc_err_current;
    size_t n = c && c->sig ? strlen(c->sig->kinds) : 0;
    s->sig = n <= MPIACC_ERR_MAXARGS ? (c ? c->sig : NULL) : NULL;
    if (s->sig) memcpy(s->args, c->args, n * sizeof *s->args);
}

/* Appends to out[*len, size): never past the end, always terminated. */
static void put(char *out, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (*len + 1 >= size) return;
    va_start(ap, fmt);
    n = vsnprintf(out + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0) *len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

/* A handle's bits (MPICH's are ints, other MPIs' pointers). */
static unsigned long long bits(const void *h, size_t n)
{
    unsigned long long v = 0;
    if (n == sizeof(unsigned)) {
        unsigned u;
        memcpy(&u, h, n);
        return u;
    }
    memcpy(&v, h, n < sizeof v ? n : sizeof v);
    return v;
}

/* A name MPI knows the object by: bare when MPI's own (MPI_INT,
 * MPI_COMM_WORLD), else after the handle ("0x4c000405 'halo_col'"). */
static void put_named(char *out, size_t size, size_t *len, unsigned long long h, const char *name)
{
    if (!strncmp(name, "MPI_", 4)) put(out, size, len, "%s", name);
    else if (name[0]) put(out, size, len, "0x%llx '%s'", h, name);
    else put(out, size, len, "0x%llx", h);
}

/* A predefined datatype (MPICH's handles of kind "builtin", the top two
 * bits 01, as src/attrs/attrs.h reads them): never freed, so its name may
 * be asked even for an operation's saved call. */
static int predefined(MPI_Datatype t)
{
    return sizeof t == 4 && (bits(&t, sizeof t) >> 30) == 1;
}

const char *(*mpiacc_err_type_tag)(MPI_Datatype t);

/* A derived datatype's constructor, as a word. */
static const char *combiner_word(int c)
{
    static const struct {
        int c;
        const char *w;
    } words[] = {{MPI_COMBINER_DUP, "dup"},
                 {MPI_COMBINER_CONTIGUOUS, "contiguous"},
                 {MPI_COMBINER_VECTOR, "vector"},
                 {MPI_COMBINER_HVECTOR, "hvector"},
                 {MPI_COMBINER_INDEXED, "indexed"},
                 {MPI_COMBINER_HINDEXED, "hindexed"},
                 {MPI_COMBINER_INDEXED_BLOCK, "indexed block"},
                 {MPI_COMBINER_HINDEXED_BLOCK, "hindexed block"},
                 {MPI_COMBINER_STRUCT, "struct"},
                 {MPI_COMBINER_SUBARRAY, "subarray"},
                 {MPI_COMBINER_DARRAY, "darray"},
                 {MPI_COMBINER_RESIZED, "resized"}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (words[i].c == c) return words[i].w;
    return NULL;
}

/* MPI's own datatypes by name (MPI_INT); a derived one by what it is,
 * "derived (vector, tagged OpenCL)", after its name when it has one
 * ("'halo_col' (derived: vector, tagged OpenCL)"); the handle only where
 * MPI cannot be asked (an operation's saved call: the datatype may be
 * freed by now). */
static void put_type(char *out, size_t size, size_t *len, MPI_Datatype t, int ask)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    const char *shape = NULL, *tag = NULL;
    int n = 0, ni, na, nd, comb;
    if (t == MPI_DATATYPE_NULL) {
        put(out, size, len, "MPI_DATATYPE_NULL");
        return;
    }
    if ((ask || predefined(t)) && PMPI_Type_get_name(t, name, &n) != MPI_SUCCESS) name[0] = 0;
    if (predefined(t) || !ask) {
        put_named(out, size, len, bits(&t, sizeof t), name);
        if (!predefined(t)) put(out, size, len, " (derived)");
        return;
    }
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        shape = combiner_word(comb);
    if (mpiacc_err_type_tag) tag = mpiacc_err_type_tag(t);
    if (!name[0] && !shape && !tag) { /* nothing better than the handle */
        put(out, size, len, "derived 0x%llx", bits(&t, sizeof t));
        return;
    }
    if (name[0]) put(out, size, len, "'%s' (derived%s", name, shape || tag ? ": " : "");
    else put(out, size, len, "derived (");
    put(out, size, len, "%s%s%s%s)", shape ? shape : "", shape && tag ? ", " : "", tag ? "tagged " : "",
        tag ? tag : "");
}

static void put_comm(char *out, size_t size, size_t *len, MPI_Comm c, int ask)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int n = 0;
    const char *fixed = c == MPI_COMM_NULL    ? "MPI_COMM_NULL"
                        : c == MPI_COMM_WORLD ? "MPI_COMM_WORLD"
                        : c == MPI_COMM_SELF  ? "MPI_COMM_SELF"
                                              : NULL;
    if (fixed) {
        put(out, size, len, "%s", fixed);
        return;
    }
    if (ask && PMPI_Comm_get_name(c, name, &n) != MPI_SUCCESS) name[0] = 0;
    put_named(out, size, len, bits(&c, sizeof c), name);
}

static void put_op(char *out, size_t size, size_t *len, MPI_Op o)
{
    static const struct {
        MPI_Op op;
        const char *name;
    } ops[] = {{MPI_SUM, "MPI_SUM"},   {MPI_PROD, "MPI_PROD"}, {MPI_MAX, "MPI_MAX"},       {MPI_MIN, "MPI_MIN"},
               {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},   {MPI_LXOR, "MPI_LXOR"},     {MPI_BAND, "MPI_BAND"},
               {MPI_BOR, "MPI_BOR"},   {MPI_BXOR, "MPI_BXOR"}, {MPI_MAXLOC, "MPI_MAXLOC"}, {MPI_MINLOC, "MPI_MINLOC"},
               {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"}, {MPI_OP_NULL, "MPI_OP_NULL"}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].op == o) {
            put(out, size, len, "%s", ops[i].name);
            return;
        }
    put(out, size, len, "0x%llx", bits(&o, sizeof o));
}

static void put_int(char *out, size_t size, size_t *len, char kind, long long v)
{
    if (kind == 'r' && v == MPI_ANY_SOURCE) put(out, size, len, "MPI_ANY_SOURCE");
    else if (kind == 'r' && v == MPI_PROC_NULL) put(out, size, len, "MPI_PROC_NULL");
    else if (kind == 'r' && v == MPI_ROOT) put(out, size, len, "MPI_ROOT");
    else if (kind == 'g' && v == MPI_ANY_TAG) put(out, size, len, "MPI_ANY_TAG");
    else put(out, size, len, "%lld", v);
}

static void put_ptr(char *out, size_t size, size_t *len, char kind, const void *p)
{
    if (kind == 'b' && p == MPI_IN_PLACE) put(out, size, len, "MPI_IN_PLACE");
    else if (kind == 's' && p == MPI_STATUS_IGNORE) put(out, size, len, "MPI_STATUS_IGNORE");
    else if (kind == 's' && p == MPI_STATUSES_IGNORE) put(out, size, len, "MPI_STATUSES_IGNORE");
    else if (!p) put(out, size, len, "NULL"); /* MPI_BOTTOM too, in MPICH */
    else put(out, size, len, "%p", p);
}

size_t mpiacc_err_call_text(char *out, size_t size, mpiacc_errk_t kind)
{
    const mpiacc_err_call_t *c = mpiacc_err_current;
    const char *p;
    size_t len = 0;
    /* MPI is asked names only for the arguments of the call in progress,
     * and a communicator's not when it is what is wrong. */
    int ask = c && !c->saved;
    out[0] = 0;
    if (!c || !c->sig) return 0;
    put(out, size, &len, "%s(", c->sig->name);
    p = c->sig->params;
    for (int i = 0; c->sig->kinds[i]; i++) {
        const mpiacc_err_arg_t *a = &c->args[i];
        const char *end = strchr(p, ' ');
        int n = end ? (int)(end - p) : (int)strlen(p);
        put(out, size, &len, "%s%.*s=", i ? ", " : "", n, p);
        p += n + (end != NULL);
        switch (c->sig->kinds[i]) {
        case 't': put_type(out, size, &len, a->t, ask); break;
        case 'c': put_comm(out, size, &len, a->c, ask && kind != MPIACC_ERRK_COMM); break;
        case 'o': put_op(out, size, &len, a->o); break;
        case 'w': put(out, size, &len, "0x%llx", bits(&a->w, sizeof a->w)); break;
        case 'f': put(out, size, &len, "0x%llx", bits(&a->f, sizeof a->f)); break;
        case 'n': put(out, size, &len, "0x%llx", bits(&a->n, sizeof a->n)); break;
        case 'i': case 'r': case 'g': put_int(out, size, &len, c->sig->kinds[i], a->i); break;
        default: put_ptr(out, size, &len, c->sig->kinds[i], a->p); break;
        }
    }
    put(out, size, &len, ")");
    return len;
}
