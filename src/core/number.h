/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/number.h: the one parser of integers written by people (environment
 * variables, src/core/env.c; the command lines of bench/, examples/ and
 * tools/, bench/common/cli.c).  Header only: the programs use it without
 * linking the library's internals.
 */
#ifndef MPIACC_CORE_NUMBER_H_INCLUDED
#define MPIACC_CORE_NUMBER_H_INCLUDED

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

/* A decimal integer, with an optional K, M or G suffix (times 2^10, 2^20,
 * 2^30) when `suffixes`, and nothing after it: 1 and *v, or 0 when s is
 * malformed or the value overflows. */
static inline int mpiacc_env_number(const char *s, int suffixes, long long *v)
{
    char *end;
    long long x;
    int shift = 0;
    errno = 0;
    x = strtoll(s, &end, 10);
    if (errno || end == s) return 0;
    if (suffixes && *end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        default: return 0;
        }
        end++;
    }
    if (*end || x > (LLONG_MAX >> shift) || x < -(LLONG_MAX >> shift)) return 0;
    *v = x * (1LL << shift);
    return 1;
}

#endif
