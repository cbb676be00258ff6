/* SPDX-License-Identifier: BSD-3-Clause */
/* stencil2d host side: initial values, CPU stencil, CPU reference run and
 * validation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil2d.h"

#define ST_DEFINE_HOST(T, sfx)                                                                     \
    static void init_##sfx(const st_grid_t *g, T *m)                                              \
    {                                                                                              \
        memset(m, 0, (size_t)g->R * g->P * sizeof(T));                                             \
        _Pragma("omp parallel for schedule(static) if (g->rows >= 1024)")                          \
        for (int i = 0; i < g->rows; i++)                                                          \
            for (int j = 0; j < g->cols; j++)                                                      \
                m[(size_t)(i + g->h) * g->P + j + g->h] = (T)i * (T)j;                             \
    }                                                                                              \
    static void step_##sfx(const st_grid_t *g, const T *restrict a, T *restrict b)                 \
    {                                                                                              \
        const T wc = (T)g->wc, wk = (T)g->wk, wd = (T)g->wd;                                       \
        const size_t P = (size_t)g->P;                                                             \
        const int big = (size_t)g->R * g->C >= ((size_t)1 << 20); /* threads only where they pay */ \
        _Pragma("omp parallel for schedule(static) if (big)")                                      \
        for (int i = 1; i < g->R - 1; i++) {                                                       \
            const T *n = a + (i - 1) * P, *c = a + i * P, *s = a + (i + 1) * P;                    \
            T *o = b + i * P;                                                                      \
            for (int j = 1; j < g->C - 1; j++)                                                     \
                o[j] = wc * c[j] + wk * (n[j] + s[j] + c[j - 1] + c[j + 1]) +                      \
                       wd * (n[j - 1] + n[j + 1] + s[j - 1] + s[j + 1]);                           \
        }                                                                                          \
    }                                                                                              \
    static void ring_##sfx(const st_grid_t *g, const T *a, T *b)                                   \
    {                                                                                              \
        const size_t P = (size_t)g->P, last = (size_t)(g->R - 1) * P;                             \
        memcpy(b, a, (size_t)g->C * sizeof(T));                                                    \
        memcpy(b + last, a + last, (size_t)g->C * sizeof(T));                                      \
        for (int i = 1; i < g->R - 1; i++) {                                                       \
            b[i * P] = a[i * P];                                                                   \
            b[i * P + g->C - 1] = a[i * P + g->C - 1];                                             \
        }                                                                                          \
    }                                                                                              \
    static long compare_##sfx(const st_grid_t *g, const T *a, const T *e, double thr,            \
                              int max_print, const char *what)                                     \
    {                                                                                              \
        long bad = 0;                                                                              \
        _Pragma("omp parallel for schedule(static) reduction(+ : bad) if (g->R >= 1024)")          \
        for (int i = 0; i < g->R; i++)                                                             \
            for (int j = 0; j < g->C; j++) {                                                       \
                double av = a[(size_t)i * g->P + j], ev = e[(size_t)i * g->P + j];                 \
                double rel = ev == 0.0 ? 0.0 : fabs(av - ev) / fabs(ev);                           \
                if (!(rel <= thr)) {                                                               \
                    if (bad < max_print) {                                                         \
                        _Pragma("omp critical")                                                    \
                        fprintf(stderr, "stencil2d: rank %d %s (%d,%d): got %.9g expected %.9g\n", \
                                g->rank, what, i, j, av, ev);                                      \
                    }                                                                              \
                    bad++;                                                                         \
                }                                                                                  \
            }                                                                                      \
        return bad;                                                                                \
    }                                                                                              \
    static double absdiff_##sfx(const st_grid_t *g, const T *a, const T *b)                       \
    {                                                                                              \
        double mx = 0.0;                                                                           \
        int nan = 0;                                                                               \
        _Pragma("omp parallel for schedule(static) reduction(max : mx) reduction(| : nan) if (g->R >= 1024)") \
        for (int i = 0; i < g->R; i++)                                                             \
            for (int j = 0; j < g->C; j++) {                                                       \
                double d = fabs((double)a[(size_t)i * g->P + j] - (double)b[(size_t)i * g->P + j]); \
                if (d != d) nan = 1;                                                               \
                else if (d > mx) mx = d;                                                           \
            }                                                                                      \
        return nan ? (double)NAN : mx;                                                             \
    }

ST_DEFINE_HOST(float, sp)
ST_DEFINE_HOST(double, dp)

void st_init_matrix(const st_grid_t *g, void *m)
{
    if (g->dp) init_dp(g, m);
    else init_sp(g, m);
}

void st_cpu_step(const st_grid_t *g, const void *src, void *dst)
{
    if (g->dp) step_dp(g, src, dst);
    else step_sp(g, src, dst);
}

void st_cpu_ring(const st_grid_t *g, const void *src, void *dst)
{
    if (g->dp) ring_dp(g, src, dst);
    else ring_sp(g, src, dst);
}

long st_compare(const st_grid_t *g, const void *a, const void *e, double thr, int max_print,
                const char *what)
{
    return g->dp ? compare_dp(g, a, e, thr, max_print, what) : compare_sp(g, a, e, thr, max_print, what);
}

double st_max_absdiff(const st_grid_t *g, const void *a, const void *b)
{
    return g->dp ? absdiff_dp(g, a, b) : absdiff_sp(g, a, b);
}

int st_band_rects(const st_grid_t *g, st_rect_t r[4])
{
    int t1 = g->R - 1 < 2 * g->h ? g->R - 1 : 2 * g->h, b0 = g->R - 2 * g->h > t1 ? g->R - 2 * g->h : t1;
    int l1 = g->C - 1 < 2 * g->h ? g->C - 1 : 2 * g->h, r0 = g->C - 2 * g->h > l1 ? g->C - 2 * g->h : l1;
    st_rect_t all[4] = {{1, 1, t1 - 1, g->C - 2}, {b0, 1, g->R - 1 - b0, g->C - 2},
                        {t1, 1, b0 - t1, l1 - 1}, {t1, r0, b0 - t1, g->C - 1 - r0}};
    int n = 0;
    for (int k = 0; k < 4; k++)
        if (all[k].nr > 0 && all[k].nc > 0) r[n++] = all[k];
    return n;
}

int st_interior_rect(const st_grid_t *g, st_rect_t *r)
{
    int t1 = g->R - 1 < 2 * g->h ? g->R - 1 : 2 * g->h, b0 = g->R - 2 * g->h > t1 ? g->R - 2 * g->h : t1;
    int l1 = g->C - 1 < 2 * g->h ? g->C - 1 : 2 * g->h, r0 = g->C - 2 * g->h > l1 ? g->C - 2 * g->h : l1;
    r->i0 = t1, r->j0 = l1, r->nr = b0 - t1, r->nc = r0 - l1;
    return r->nr > 0 && r->nc > 0;
}

/* SHOC's schedule: one exchange before the first iteration, then one before
 * iteration it whenever it > 0 and it % h == 0, each followed by the ring
 * refresh of the other matrix. */
int st_cpu_reference(const st_grid_t *g, int iters, void *out)
{
    size_t bytes = (size_t)g->R * g->P * g->es;
    void *m[2] = {malloc(bytes), malloc(bytes)};
    int cur = 0, rc = 0;
    if (!m[0] || !m[1]) {
        rc = ex_error("out of host memory (%zu bytes)", 2 * bytes);
        goto done;
    }
    st_init_matrix(g, m[0]);
    if ((rc = st_host_exchange(g, m[0])) != 0) goto done;
    memcpy(m[1], m[0], bytes);
    for (int it = 0; it < iters; it++) {
        if (it > 0 && it % g->h == 0) {
            if ((rc = st_host_exchange(g, m[cur])) != 0) goto done;
            st_cpu_ring(g, m[cur], m[!cur]);
        }
        st_cpu_step(g, m[cur], m[!cur]);
        cur = !cur;
    }
    memcpy(out, m[cur], bytes);
done:
    free(m[0]);
    free(m[1]);
    return rc;
}
