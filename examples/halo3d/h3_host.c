/* SPDX-License-Identifier: BSD-3-Clause */
/* halo3d host side: initial values, the CPU stencil, the CPU reference
 * run and the bitwise comparison. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo3d.h"

double h3_arm_weight(int r)
{
    double w = 0.5;
    while (6.0 * r * w > 0.5) w *= 0.5;
    return w;
}

/* The kernels of h3_cuda.cu and h3_opencl.c compute exactly this, in this
 * order: s = sum over k = 1..r of ((x-k + x+k) + (y-k + y+k)) + (z-k + z+k),
 * out = (0.5 c + w s) + 1. */
#define H3_DEFINE_HOST(T, sfx)                                                                         \
    static void init_##sfx(const h3_grid_t *g, T *m)                                                  \
    {                                                                                                  \
        memset(m, 0, g->elems * sizeof(T));                                                            \
        for (int z = 0; z < g->n[0]; z++)                                                              \
            for (int y = 0; y < g->n[1]; y++)                                                          \
                for (int x = 0; x < g->n[2]; x++) {                                                    \
                    long gz = (long)g->coords[0] * g->n[0] + z, gy = (long)g->coords[1] * g->n[1] + y; \
                    long gx = (long)g->coords[2] * g->n[2] + x;                                        \
                    size_t i = ((size_t)(z + g->r) * g->Y + (size_t)(y + g->r)) * g->X + (size_t)(x + g->r); \
                    m[i] = (T)((gz * 131 + gy * 71 + gx * 29 + 7) % 1021);                             \
                }                                                                                      \
    }                                                                                                  \
    static void step_##sfx(const h3_grid_t *g, const T *restrict a, T *restrict b)                     \
    {                                                                                                  \
        const T w = (T)h3_arm_weight(g->r), half = (T)0.5, one = (T)1;                                 \
        const size_t X = (size_t)g->X, XY = (size_t)g->X * g->Y;                                       \
        _Pragma("omp parallel for schedule(static) if (g->elems >= ((size_t)1 << 20))")                \
        for (int z = g->r; z < g->r + g->n[0]; z++)                                                    \
            for (int y = g->r; y < g->r + g->n[1]; y++)                                                \
                for (int x = g->r; x < g->r + g->n[2]; x++) {                                          \
                    size_t i = (size_t)z * XY + (size_t)y * X + (size_t)x;                             \
                    T s = 0;                                                                           \
                    for (int k = 1; k <= g->r; k++)                                                    \
                        s = s + (((a[i - k] + a[i + k]) + (a[i - k * X] + a[i + k * X])) +             \
                                 (a[i - k * XY] + a[i + k * XY]));                                     \
                    b[i] = (half * a[i] + w * s) + one;                                                \
                }                                                                                      \
    }

H3_DEFINE_HOST(float, sp)
H3_DEFINE_HOST(double, dp)

void h3_init(const h3_grid_t *g, void *m)
{
    if (g->dp) init_dp(g, m);
    else init_sp(g, m);
}

void h3_cpu_step(const h3_grid_t *g, const void *src, void *dst)
{
    if (g->dp) step_dp(g, src, dst);
    else step_sp(g, src, dst);
}

long h3_compare(const h3_grid_t *g, const void *a, const void *ref, int max_print, const char *what)
{
    const char *pa = a, *pr = ref;
    long bad = 0;
    for (size_t i = 0; i < g->elems; i++) {
        if (!memcmp(pa + i * g->es, pr + i * g->es, g->es)) continue;
        if (bad < max_print) {
            double va = g->dp ? ((const double *)a)[i] : ((const float *)a)[i];
            double vr = g->dp ? ((const double *)ref)[i] : ((const float *)ref)[i];
            size_t x = i % g->X, y = i / g->X % g->Y, z = i / ((size_t)g->X * g->Y);
            fprintf(stderr, "halo3d: rank %d %s (z %zu, y %zu, x %zu): got %.17g expected %.17g\n", g->rank,
                    what, z, y, x, va, vr);
        }
        bad++;
    }
    return bad;
}

int h3_cpu_reference(const h3_grid_t *g, int method, int iters, void *out)
{
    size_t bytes = g->elems * g->es;
    void *m[2] = {malloc(bytes), malloc(bytes)};
    h3_xchg_t x;
    int cur = 0, rc = 0, have_x = 0;
    if (!m[0] || !m[1]) {
        rc = ex_error("out of host memory (%zu bytes)", 2 * bytes);
        goto done;
    }
    h3_init(g, m[0]);
    memcpy(m[1], m[0], bytes);
    if ((rc = h3_xchg_host(g, method, m[0], m[1], &x)) != 0) goto done;
    have_x = 1;
    for (int it = 0; it < iters; it++) {
        if ((rc = h3_xchg_run(g, &x, cur)) != 0) goto done;
        h3_cpu_step(g, m[cur], m[!cur]);
        cur = !cur;
    }
    memcpy(out, m[cur], bytes);
done:
    if (have_x) h3_xchg_free(&x);
    free(m[0]);
    free(m[1]);
    return rc;
}

int h3_core_box(const h3_grid_t *g, h3_box_t *b)
{
    int lo[3], cnt[3];
    for (int k = 0; k < 3; k++) { /* [2r, n) of the interior [r, n + r): cells that do not read the halo */
        lo[k] = 2 * g->r;
        cnt[k] = g->n[k] - 2 * g->r;
        if (cnt[k] < 0) cnt[k] = 0;
    }
    *b = (h3_box_t){lo[0], lo[1], lo[2], cnt[0], cnt[1], cnt[2]};
    return cnt[0] > 0 && cnt[1] > 0 && cnt[2] > 0;
}

/* The interior minus the core: z slabs over the whole yx plane, then y
 * slabs over the core's z range, then x slabs over the core's z and y. */
int h3_shell_boxes(const h3_grid_t *g, h3_box_t b[6])
{
    h3_box_t c, all = {g->r, g->r, g->r, g->n[0], g->n[1], g->n[2]};
    int n = 0;
    if (!h3_core_box(g, &c)) {
        b[0] = all;
        return 1;
    }
    b[n++] = (h3_box_t){all.z0, all.y0, all.x0, c.z0 - all.z0, all.ny, all.nx};
    b[n++] = (h3_box_t){c.z0 + c.nz, all.y0, all.x0, all.z0 + all.nz - c.z0 - c.nz, all.ny, all.nx};
    b[n++] = (h3_box_t){c.z0, all.y0, all.x0, c.nz, c.y0 - all.y0, all.nx};
    b[n++] = (h3_box_t){c.z0, c.y0 + c.ny, all.x0, c.nz, all.y0 + all.ny - c.y0 - c.ny, all.nx};
    b[n++] = (h3_box_t){c.z0, c.y0, all.x0, c.nz, c.ny, c.x0 - all.x0};
    b[n++] = (h3_box_t){c.z0, c.y0, c.x0 + c.nx, c.nz, c.ny, all.x0 + all.nx - c.x0 - c.nx};
    return n;
}

