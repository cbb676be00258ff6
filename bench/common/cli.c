/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/common/cli.c: see cli.h. */
#define _GNU_SOURCE /* getopt_long */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/number.h"

int cli_rank0(void)
{
    static const char *const vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"};
    for (int i = 0; i < 3; i++) {
        const char *r = getenv(vars[i]);
        if (r && *r) return atoi(r) == 0;
    }
    return 1;
}

static const char *metavar(const cli_opt_t *o)
{
    switch (o->kind) {
    case CLI_FLAG: return "";
    case CLI_INT: return " N";
    case CLI_SIZE: return " BYTES";
    case CLI_DOUBLE: return " X";
    case CLI_STRING: return " TEXT";
    case CLI_FILE: return " FILE";
    case CLI_CHOICE: return o->choices;
    case CLI_SIZES: return " LIST";
    default: return " A,B";
    }
}

static void print_default(const cli_opt_t *o, FILE *f)
{
    switch (o->kind) {
    case CLI_INT: fprintf(f, " (default %d)", *(int *)o->dest); break;
    case CLI_SIZE: fprintf(f, " (default %lld)", *(long long *)o->dest); break;
    case CLI_DOUBLE: fprintf(f, " (default %g)", *(double *)o->dest); break;
    case CLI_STRING:
    case CLI_FILE:
        if (*(const char **)o->dest) fprintf(f, " (default %s)", *(const char **)o->dest);
        break;
    case CLI_CHOICE: {
        const char *c = o->choices;
        for (int i = *(int *)o->dest; i > 0 && c; i--)
            if ((c = strchr(c, '|'))) c++;
        if (c) fprintf(f, " (default %.*s)", (int)strcspn(c, "|"), c);
        break;
    }
    case CLI_PAIR: {
        const int *v = o->dest;
        if (v[0] || v[1]) fprintf(f, " (default %d,%d)", v[0], v[1]);
        break;
    }
    case CLI_SIZES: {
        const cli_sizes_t *l = o->dest;
        for (int i = 0; i < l->n; i++) {
            long long x = l->v[i];
            int k = x && !(x % (1LL << 30)) ? 3 : x && !(x % (1LL << 20)) ? 2 : x && !(x % 1024) ? 1 : 0;
            fprintf(f, "%s%lld%s", i ? "," : " (default ", x >> (10 * k), (const char *[]){"", "K", "M", "G"}[k]);
        }
        if (l->n) fputc(')', f);
        break;
    }
    default: break;
    }
}

void cli_usage(const cli_prog_t *p, FILE *f)
{
    fprintf(f, "usage: %s\n%s\n\noptions:\n", p->synopsis, p->about);
    for (int i = 0; i < p->nopts; i++) {
        const cli_opt_t *o = &p->opts[i];
        char left[96];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->kind == CLI_CHOICE ? " " : "", metavar(o));
        fprintf(f, "  %-28s %s", left, o->help);
        print_default(o, f);
        fputc('\n', f);
    }
    fprintf(f, "  %-28s %s\n", "--help, -h", "print this help and exit");
}

static int in_range(const cli_opt_t *o, double x) { return o->lo > o->hi || (x >= o->lo && x <= o->hi); }

static int parse_ll(const char *s, long long *v, int suffix)
{
    return *s && !isspace((unsigned char)*s) && mpiacc_env_number(s, suffix, v);
}

/* Stores the value of o from s; returns 0 when it is malformed. */
static int store(cli_opt_t *o, const char *s)
{
    long long ll;
    switch (o->kind) {
    case CLI_FLAG: *(int *)o->dest = 1; return 1;
    case CLI_INT:
        if (!parse_ll(s, &ll, 0) || !in_range(o, (double)ll) || ll < -2147483647LL || ll > 2147483647LL) return 0;
        *(int *)o->dest = (int)ll;
        return 1;
    case CLI_SIZE:
        if (!parse_ll(s, &ll, 1) || !in_range(o, (double)ll)) return 0;
        *(long long *)o->dest = ll;
        return 1;
    case CLI_DOUBLE: {
        char *end;
        double x;
        errno = 0;
        x = strtod(s, &end);
        if (errno || end == s || *end || !in_range(o, x)) return 0;
        *(double *)o->dest = x;
        return 1;
    }
    case CLI_STRING:
    case CLI_FILE: *(const char **)o->dest = s; return 1;
    case CLI_SIZES: {
        cli_sizes_t l = {0};
        char item[64];
        for (const char *c = s;; c++) {
            size_t len = strcspn(c, ",");
            if (!len || len >= sizeof item || l.n == CLI_SIZES_MAX) return 0;
            memcpy(item, c, len);
            item[len] = 0;
            if (!parse_ll(item, &ll, 1) || !in_range(o, (double)ll)) return 0;
            l.v[l.n++] = ll;
            c += len;
            if (!*c) break;
        }
        *(cli_sizes_t *)o->dest = l;
        return 1;
    }
    case CLI_CHOICE: {
        const char *c = o->choices;
        size_t n = strlen(s);
        for (int i = 0; c; i++) {
            size_t len = strcspn(c, "|");
            if (len == n && !strncmp(c, s, n)) return *(int *)o->dest = i, 1;
            c = c[len] ? c + len + 1 : NULL;
        }
        return 0;
    }
    default: {
        int a, b, n = 0;
        if (sscanf(s, "%d,%d%n", &a, &b, &n) != 2 || s[n] || !in_range(o, a) || !in_range(o, b)) return 0;
        ((int *)o->dest)[0] = a, ((int *)o->dest)[1] = b;
        return 1;
    }
    }
}

static void fail(const cli_prog_t *p, const char *fmt, const char *a, const char *b)
{
    if (cli_rank0()) {
        fprintf(stderr, "%s: ", p->name);
        fprintf(stderr, fmt, a, b);
        fputs("\n", stderr);
        cli_usage(p, stderr);
    }
    exit(2);
}

void cli_parse(const cli_prog_t *p, int argc, char **argv)
{
    struct option *lo = calloc((size_t)p->nopts + 2, sizeof *lo);
    int c, idx;
    if (!lo) {
        fprintf(stderr, "%s: out of memory\n", p->name);
        exit(2);
    }
    for (int i = 0; i < p->nopts; i++) {
        lo[i].name = p->opts[i].name;
        lo[i].has_arg = p->opts[i].kind == CLI_FLAG ? no_argument : required_argument;
        lo[i].val = 256 + i;
    }
    lo[p->nopts].name = "help";
    lo[p->nopts].val = 'h';
    opterr = 0; /* our own messages */
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", lo, &idx)) != -1) {
        if (c == 'h') {
            if (cli_rank0()) cli_usage(p, stdout);
            exit(0);
        }
        if (c == '?') {
            if (optopt) fail(p, "unknown option '-%c'%s", (char[]){(char)optopt, 0}, "");
            fail(p, "unknown option '%s'%s", argv[optind - 1], "");
        }
        if (c == ':') fail(p, "option '%s' needs a value%s", argv[optind - 1], "");
        cli_opt_t *o = &p->opts[c - 256];
        if (!store(o, optarg)) fail(p, "bad value '%s' for --%s", optarg ? optarg : "", o->name);
    }
    if (optind < argc) fail(p, "unexpected argument '%s'%s", argv[optind], "");
    free(lo);
}
