/* SPDX-License-Identifier: BSD-3-Clause */
/* Captures what the program writes to stderr between begin and end (the
 * library logs there), for tests that check log lines.  The captured text
 * is also copied to the real stderr so that it stays in the test's output. */
#ifndef MPIACC_STDERR_CAPTURE_H_INCLUDED
#define MPIACC_STDERR_CAPTURE_H_INCLUDED

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    int saved; /* the real stderr */
    FILE *tmp;
} stderr_capture_t;

static inline void stderr_capture_begin(stderr_capture_t *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    c->saved = dup(2);
    if (c->tmp) dup2(fileno(c->tmp), 2);
}

/* The captured text (malloc'd, NUL-terminated; "" when nothing could be
 * captured). */
static inline char *stderr_capture_end(stderr_capture_t *c)
{
    long n = 0;
    char *s;
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    if (c->tmp) {
        fseek(c->tmp, 0, SEEK_END);
        n = ftell(c->tmp);
        rewind(c->tmp);
    }
    s = calloc((size_t)n + 1, 1);
    if (s && c->tmp && n > 0 && fread(s, 1, (size_t)n, c->tmp) != (size_t)n) s[0] = 0;
    if (c->tmp) fclose(c->tmp);
    if (s) fputs(s, stderr);
    return s;
}

#endif
