/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * test_env: the MPIACC_* environment parser (src/core/env.c), before
 * MPI_Init.  The environment is read once per process, so the program runs
 * in one of two modes:
 *   test_env defaults   every MPIACC_* variable unset: the table's defaults
 *   test_env values     a set of good and bad spellings; each bad value
 *                       gives exactly one warning naming the variable and
 *                       the default is used; each MPIACC_* name mpiacc
 *                       does not read gives one warning naming the closest
 *                       one it reads (a retired one: why), except the
 *                       reserved MPIACC_TEST_* / MPIACC_BENCH_* names and
 *                       the scripts' own
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/env.h"
#include "testutil.h"

static char warnings[8192];

static void test_defaults(void **state)
{
    mpiacc_env_desc_t d;
    assert_int_equal(mpiacc_env_bool("MPIACC_DISABLE"), 0);
    assert_int_equal(mpiacc_env_enum("MPIACC_LOG"), MPIACC_LOG_WARN);
    assert_int_equal(mpiacc_env_bool("MPIACC_EAGER_INIT"), 0);
    assert_int_equal(mpiacc_env_bool("MPIACC_DIRECT"), 0);
    assert_int_equal(mpiacc_env_bool("MPIACC_IPC"), 1);
    assert_int_equal(mpiacc_env_enum("MPIACC_TRANSPORT"), 0); /* auto */
    assert_int_equal(mpiacc_env_size("MPIACC_COLL_ONE_SHOT_MAX"), 8 << 20);
    assert_int_equal(mpiacc_env_int("MPIACC_IPC_CACHE"), 64);
    assert_int_equal(mpiacc_env_enum("MPIACC_CUDA_PACK"), 0);
    assert_int_equal(mpiacc_env_bool("MPIACC_CUDA_GENERIC"), 0);
    assert_int_equal(mpiacc_env_enum("MPIACC_CUDA_SYNC"), 3); /* flag */
    assert_int_equal(mpiacc_env_enum("MPIACC_OCL_RECT"), 0);
    assert_int_equal(mpiacc_env_size("MPIACC_OCL_RECT_MIN"), 64);
    /* every entry is complete and unset */
    assert_true(mpiacc_env_count() >= 13);
    for (int i = 0; i < mpiacc_env_count(); i++) {
        assert_int_equal(mpiacc_env_info(i, &d), 0);
        assert_non_null(d.name);
        assert_true(!strncmp(d.name, "MPIACC_", 7));
        assert_non_null(d.def);
        assert_non_null(d.meaning);
        assert_true(d.accepted && *d.accepted);
        assert_null(d.raw);
        assert_int_equal(d.valid, 1);
    }
    assert_int_equal(mpiacc_env_info(mpiacc_env_count(), &d), -1);
    assert_int_equal(mpiacc_env_info(-1, &d), -1);
    assert_string_equal(warnings, "");
}

static int warned(const char *name)
{
    int n = 0;
    for (const char *p = warnings; (p = strstr(p, name)) != NULL; p += strlen(name))
        if (p[strlen(name)] == '=') n++;
    return n;
}

/* How many warnings name `name` as a variable mpiacc does not read. */
static int unknown(const char *name)
{
    char key[128];
    int n = 0;
    snprintf(key, sizeof key, "%s is ", name);
    for (const char *p = warnings; (p = strstr(p, key)) != NULL; p += strlen(key)) n++;
    return n;
}

static void test_unknown(void)
{
    assert_int_equal(unknown("MPIACC_LOGG"), 1);
    assert_non_null(strstr(warnings, "MPIACC_LOGG is not an mpiacc variable and is ignored: did you mean MPIACC_LOG?"));
    assert_int_equal(unknown("MPIACC_log"), 1);
    assert_non_null(strstr(warnings, "MPIACC_log is not an mpiacc variable and is ignored: did you mean MPIACC_LOG? "
                                     "(names are upper case)"));
    assert_int_equal(unknown("mpiacc_eager_init"), 1);
    assert_non_null(strstr(warnings, "did you mean MPIACC_EAGER_INIT?"));
    assert_int_equal(unknown("MPIACC_EAGER_MAX"), 1);
    assert_non_null(strstr(warnings, "MPIACC_EAGER_MAX is set but no longer read: the direct protocol is gone"));
    assert_int_equal(unknown("MPIACC_ZZZZZZZZZZZZZZZZZZ"), 1);
    assert_non_null(strstr(warnings, "MPIACC_ZZZZZZZZZZZZZZZZZZ is not an mpiacc variable and is ignored (the closest is"));
    assert_int_equal(unknown("MPIACC_OCL_CHECK_RELEASED"), 1);
    assert_non_null(strstr(warnings, "MPIACC_OCL_CHECK_RELEASED is set but no longer read"));
    assert_null(strstr(warnings, "MPIACC_TEST_ANYTHING"));
    assert_null(strstr(warnings, "MPIACC_BENCH_ITERS"));
    assert_null(strstr(warnings, "MPIACC_BUILD_DIR"));
    /* known names, good or bad values, are never "unknown" */
    for (int i = 0; i < mpiacc_env_count(); i++) {
        mpiacc_env_desc_t d;
        mpiacc_env_info(i, &d);
        assert_int_equal(unknown(d.name), 0);
    }
}

static void test_values(void **state)
{
    test_unknown();
    /* good spellings, any case */
    assert_int_equal(mpiacc_env_bool("MPIACC_DISABLE"), 0);     /* "no" */
    assert_int_equal(mpiacc_env_bool("MPIACC_EAGER_INIT"), 1);  /* "YES" */
    assert_int_equal(mpiacc_env_bool("MPIACC_DIRECT"), 1);      /* "On" */
    assert_int_equal(mpiacc_env_bool("MPIACC_IPC"), 0);         /* "False" */
    assert_int_equal(mpiacc_env_enum("MPIACC_LOG"), MPIACC_LOG_WARN); /* "Warn" */
    assert_int_equal(mpiacc_env_enum("MPIACC_CUDA_PACK"), 3);   /* "memcpy2d" */
    assert_int_equal(mpiacc_env_size("MPIACC_COLL_ONE_SHOT_MAX"), 4096); /* "4K" */
    assert_int_equal(mpiacc_env_enum("MPIACC_TRANSPORT"), 1);            /* "Staged" */
    assert_int_equal(mpiacc_env_enum("MPIACC_OCL_RECT"), 2);    /* "ALWAYS" */
    /* bad values: the default, one warning each naming the accepted values */
    assert_int_equal(mpiacc_env_bool("MPIACC_CUDA_GENERIC"), 0); /* "maybe" */
    assert_int_equal(mpiacc_env_enum("MPIACC_CUDA_SYNC"), 3);    /* "fast" */
    assert_int_equal(mpiacc_env_size("MPIACC_OCL_RECT_MIN"), 64); /* "12x" */
    assert_int_equal(mpiacc_env_int("MPIACC_IPC_CACHE"), 64);     /* "-3" */
    /* asking twice warns no more */
    assert_int_equal(mpiacc_env_enum("MPIACC_CUDA_SYNC"), 3);
    assert_int_equal(warned("MPIACC_CUDA_GENERIC"), 1);
    assert_int_equal(warned("MPIACC_CUDA_SYNC"), 1);
    assert_int_equal(warned("MPIACC_OCL_RECT_MIN"), 1);
    assert_int_equal(warned("MPIACC_IPC_CACHE"), 1);
    assert_non_null(strstr(warnings, "stream|query|event|flag"));
    assert_non_null(strstr(warnings, "1/0, true/false, yes/no, on/off"));
    assert_int_equal(warned("MPIACC_DISABLE") + warned("MPIACC_COLL_ONE_SHOT_MAX") + warned("MPIACC_LOG"), 0);
    for (int i = 0; i < mpiacc_env_count(); i++) {
        mpiacc_env_desc_t d;
        mpiacc_env_info(i, &d);
        if (!strcmp(d.name, "MPIACC_OCL_RECT_MIN")) {
            assert_string_equal(d.raw, "12x");
            assert_int_equal(d.valid, 0);
            assert_int_equal(d.value, 64);
        }
    }
}

/* Reads the whole environment once with stderr going to a file, so that
 * the warnings can be checked. */
static void capture_warnings(void)
{
    char path[] = "/tmp/test_env_XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    FILE *f;
    size_t n;
    fflush(stderr);
    dup2(fd, 2);
    (void)mpiacc_env_count();
    (void)mpiacc_env_bool("MPIACC_DISABLE"); /* the first call reads everything */
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    f = fdopen(fd, "r");
    rewind(f);
    n = fread(warnings, 1, sizeof warnings - 1, f);
    warnings[n] = 0;
    fclose(f);
    unlink(path);
    fputs(warnings, stderr);
}

int main(int argc, char **argv)
{
    static const char *const set[][2] = {
        {"MPIACC_DISABLE", "no"},         {"MPIACC_EAGER_INIT", "YES"},    {"MPIACC_DIRECT", "On"},
        {"MPIACC_IPC", "False"},          {"MPIACC_LOG", "Warn"},          {"MPIACC_CUDA_PACK", "memcpy2d"},
        {"MPIACC_COLL_ONE_SHOT_MAX", "4K"}, {"MPIACC_TRANSPORT", "Staged"}, {"MPIACC_OCL_RECT", "ALWAYS"},
        {"MPIACC_CUDA_GENERIC", "maybe"}, {"MPIACC_CUDA_SYNC", "fast"},    {"MPIACC_OCL_RECT_MIN", "12x"},
        {"MPIACC_IPC_CACHE", "-3"},
        /* names mpiacc does not read: one warning each naming the closest
         * variable, except the tests', benchmarks' and scripts' own */
        {"MPIACC_LOGG", "info"},          {"MPIACC_log", "debug"},         {"mpiacc_eager_init", "1"},
        {"MPIACC_EAGER_MAX", "4K"},
        {"MPIACC_ZZZZZZZZZZZZZZZZZZ", "1"}, {"MPIACC_OCL_CHECK_RELEASED", "1"}, {"MPIACC_TEST_ANYTHING", "1"},
        {"MPIACC_BENCH_ITERS", "5"},      {"MPIACC_BUILD_DIR", "b"}};
    const struct CMUnitTest defaults[] = {cmocka_unit_test(test_defaults)};
    const struct CMUnitTest values[] = {cmocka_unit_test(test_values)};
    int values_mode = argc > 1 && !strcmp(argv[1], "values");
    extern char **environ;
    /* start from an environment without MPIACC_* library variables */
    for (char **e = environ; *e;) {
        char name[128];
        size_t len = strcspn(*e, "=");
        if (!strncmp(*e, "MPIACC_", 7) && strncmp(*e, "MPIACC_TEST_", 12) && len < sizeof name) {
            memcpy(name, *e, len);
            name[len] = 0;
            unsetenv(name);
            e = environ; /* unsetenv may have moved the entries */
        } else {
            e++;
        }
    }
    if (values_mode)
        for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) setenv(set[i][0], set[i][1], 1);
    capture_warnings();
    return values_mode ? MPIACC_TEST_RUN("env_values", values, NULL, NULL)
                       : MPIACC_TEST_RUN("env_defaults", defaults, NULL, NULL);
}
