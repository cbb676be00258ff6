/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/ooo_model.h: the ideal out-of-order schedule of MPI-ACC's Fig 7,
 * built from parts measured in the same run; shared by bench/ooo (OpenCL,
 * times in ms) and bench/ooo_cuda (CUDA, times in us).  Not part of
 * libmpiacc.
 *
 * Parts of one point (one unit, from the first kernel launch):
 *   K0, K1  when the kernels that produce buffer A (for rank 1) and buffer
 *           B (for rank 2) are done, measured on the device clock
 *   tA, tB  one send of A (resp. B) alone through mpiacc with its
 *           stream/queue attribute, the data already produced (no kernel
 *           running), until the receiver's 0-byte ack is back
 *   tAB     both sends at once in the same way (no kernels): tells how far
 *           the two sends share one link, sharing = (tAB - max(tA, tB)) /
 *           min(tA, tB): 0 = two independent links, 1 = one shared link
 * Models (no schedule can start a send before its kernel is done, nor make
 * it faster than alone):
 *   simple model = max(K0 + tA, K1) + tB    (A then B, in issue order;
 *                                            = K0 + tA + tB when K0 + tA >= K1)
 *   ideal, one link  = min(simple model, max(K1 + tB, K0) + tA)
 *                      (the sends one after the other in the better order;
 *                      K1 first: B's send hides under K0)
 *   ideal, two links = max(K0 + tA, K1 + tB)  (each send starts when its
 *                      kernel is done and runs as fast as alone: a bound no
 *                      schedule can beat)
 *   gain_ideal = 1 - ideal / simple model;  gain_mpiacc = 1 - mpiacc /
 *   simple (both measured);  reach = gain_mpiacc / gain_ideal (printed "-"
 *   when the ideal gains under 0.5 %);  residual = mpiacc - ideal: mpiacc's
 *   own overhead (time the ideal would not spend); negative against the
 *   one-link ideal when the two sends overlapped.  gain_mpiacc is taken
 *   against the measured simple time: a simple slower than its model (both
 *   are printed) lets mpiacc's gain pass the ideal gain.
 * Gap to the paper's 34.2 % at a point, in percentage points:
 *   34.2 - gain_mpiacc = (34.2 - gain_ideal) + (gain_ideal - gain_mpiacc)
 *                        the parameters        mpiacc short of the ideal
 * One link: with equal sizes (tA = tB = t) the ideal gain stays below 1/3
 * at every K0: at most t / (K1 + 3t), at K0 = K1 + t.  For a fixed K0 > K1
 * its maximum over B is (K0 - K1) / (2 K0 - K1 + tA), at tB = K0 - K1: it
 * reaches 34.2 % only when K0 >= 2.08 K1 + 1.08 tA.
 * Two links: the bound also counts what sending both at once saves, not
 * only the order: with equal sizes it is t / (K0 + 2t) for K0 >= K1
 * (largest at K0 = K1).
 * At K0 = K1 + tB (B's send just fits under K0, the paper's "perfect
 * overlap") both ideals are K0 + tA and the gain is tB / (K1 + tA + 2 tB),
 * which grows with B towards 50 %: the programs' "fit" sweep.
 */
#ifndef MPIACC_BENCH_OOO_MODEL_H_INCLUDED
#define MPIACC_BENCH_OOO_MODEL_H_INCLUDED

#include <math.h>
#include <stdio.h>
#include <string.h>

#define OOO_PAPER_GAIN 0.342

typedef struct ooo_parts {
    double k0, k1, ta, tb, tab; /* see above */
    double simple, mpiacc;      /* measured totals (medians) */
} ooo_parts_t;

typedef struct ooo_ideal {
    double simple_model, one, two; /* times */
    double g_one, g_two, g_mpiacc; /* gains (fractions) */
    double reach_one, reach_two;   /* gain_mpiacc / gain_ideal; NAN when the ideal gains nothing */
    double resid_one, resid_two;   /* mpiacc - ideal */
    double sharing;
} ooo_ideal_t;

static inline double ooo_max(double a, double b) { return a > b ? a : b; }
static inline double ooo_min(double a, double b) { return a < b ? a : b; }

static inline ooo_ideal_t ooo_ideal(const ooo_parts_t *p)
{
    ooo_ideal_t m;
    const double lo = ooo_min(p->ta, p->tb);
    m.simple_model = ooo_max(p->k0 + p->ta, p->k1) + p->tb;
    m.one = ooo_min(m.simple_model, ooo_max(p->k1 + p->tb, p->k0) + p->ta);
    m.two = ooo_max(p->k0 + p->ta, p->k1 + p->tb);
    m.g_one = 1 - m.one / m.simple_model;
    m.g_two = 1 - m.two / m.simple_model;
    m.g_mpiacc = 1 - p->mpiacc / p->simple;
    /* below half a percent of ideal gain, a share of it means nothing */
    m.reach_one = m.g_one > 0.005 ? m.g_mpiacc / m.g_one : NAN;
    m.reach_two = m.g_two > 0.005 ? m.g_mpiacc / m.g_two : NAN;
    m.resid_one = p->mpiacc - m.one;
    m.resid_two = p->mpiacc - m.two;
    m.sharing = lo > 0 ? (p->tab - ooo_max(p->ta, p->tb)) / lo : NAN;
    return m;
}

/* "-" when the ideal gains nothing (x is NAN), else x in percent. */
static inline const char *ooo_pct(char *buf, size_t n, double x)
{
    if (isnan(x)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.0f%%", 100 * x);
    return buf;
}

/* The two comment lines under a row; times printed with `dec` decimals. */
static inline void ooo_print_ideal(const ooo_parts_t *p, const ooo_ideal_t *m, const char *unit, int dec)
{
    char r1[32], r2[32];
    printf("#  parts: tA %.*f, tB %.*f, both sends at once %.*f (sharing %.2f); simple model max(K0+tA,K1)+tB "
           "%.*f, measured %.*f %s\n",
           dec, p->ta, dec, p->tb, dec, p->tab, m->sharing, dec, m->simple_model, dec, p->simple, unit);
    printf("#  ideal: one link %.*f (gain %.1f%%), two links %.*f (gain %.1f%%); mpiacc %.*f (gain %.1f%%) reaches "
           "%s / %s of the ideal gain, residual %+.*f / %+.*f %s\n",
           dec, m->one, 100 * m->g_one, dec, m->two, 100 * m->g_two, dec, p->mpiacc, 100 * m->g_mpiacc,
           ooo_pct(r1, sizeof r1, m->reach_one), ooo_pct(r2, sizeof r2, m->reach_two), dec, m->resid_one, dec,
           m->resid_two, unit);
}

/* The CSV columns this header adds at the end of a row (unit "us"/"ms"). */
#define OOO_CSV_COLUMNS(u)                                                                                   \
    "ta_" u ",tb_" u ",tab_" u ",sharing,simple_model_" u ",ideal_one_link_" u ",ideal_two_links_" u        \
    ",gain_ideal_one_link_pct,gain_ideal_two_links_pct,mpiacc_reach_one_link_pct,mpiacc_reach_two_links_pct," \
    "residual_one_link_" u ",residual_two_links_" u

/* The values of OOO_CSV_COLUMNS, each preceded by a comma (no newline);
 * times with `dec` decimals. */
static inline void ooo_csv_ideal(FILE *csv, const ooo_parts_t *p, const ooo_ideal_t *m, int dec)
{
    fprintf(csv, ",%.*f,%.*f,%.*f,%.3f,%.*f,%.*f,%.*f,%.2f,%.2f,%.1f,%.1f,%.*f,%.*f", dec, p->ta, dec, p->tb, dec,
            p->tab, m->sharing, dec, m->simple_model, dec, m->one, dec, m->two, 100 * m->g_one, 100 * m->g_two,
            100 * m->reach_one, 100 * m->reach_two, dec, m->resid_one, dec, m->resid_two);
}

/* The largest ideal gain over all points, per model, and where. */
typedef struct ooo_best {
    double g, g_mpiacc;
    char where[160];
} ooo_best_t;

typedef struct ooo_summary {
    ooo_best_t one, two;
} ooo_summary_t;

static inline void ooo_summary_init(ooo_summary_t *s)
{
    memset(s, 0, sizeof *s);
    s->one.g = s->two.g = -1e9;
}

static inline void ooo_best_take(ooo_best_t *b, double g, double g_mpiacc, const char *where)
{
    if (g <= b->g) return;
    b->g = g, b->g_mpiacc = g_mpiacc;
    snprintf(b->where, sizeof b->where, "%s", where);
}

static inline void ooo_summary_add(ooo_summary_t *s, const ooo_ideal_t *m, const char *where)
{
    ooo_best_take(&s->one, m->g_one, m->g_mpiacc, where);
    ooo_best_take(&s->two, m->g_two, m->g_mpiacc, where);
}

/* The closing lines: the ideal at the overlap point, the gap to 34.2 %
 * split into the parameters' part and mpiacc's part, and the largest ideal
 * gain of the sweeps. */
static inline void ooo_print_summary(const ooo_summary_t *s, const ooo_ideal_t *ov)
{
    const double P = 100 * OOO_PAPER_GAIN;
    char r1[32], r2[32];
    printf("# ideal at the overlap point: one link %.1f%%, two links %.1f%%; mpiacc %.1f%% = %s / %s of it\n",
           100 * ov->g_one, 100 * ov->g_two, 100 * ov->g_mpiacc, ooo_pct(r1, sizeof r1, ov->reach_one),
           ooo_pct(r2, sizeof r2, ov->reach_two));
    printf("# gap to %.1f%% at the overlap point: %.1f points = parameters (%.1f%% - ideal) %.1f / %.1f + mpiacc short "
           "of the ideal %+.1f / %+.1f (one link / two links)\n",
           P, P - 100 * ov->g_mpiacc, P, P - 100 * ov->g_one, P - 100 * ov->g_two, 100 * (ov->g_one - ov->g_mpiacc),
           100 * (ov->g_two - ov->g_mpiacc));
    printf("# largest ideal gain of the sweeps: one link %.1f%% at %s (mpiacc %.1f%% there); two links %.1f%% at %s "
           "(mpiacc %.1f%% there); a point with ideal gain >= %.1f%%: one link %s, two links %s\n",
           100 * s->one.g, s->one.where, 100 * s->one.g_mpiacc, 100 * s->two.g, s->two.where, 100 * s->two.g_mpiacc,
           P, s->one.g >= OOO_PAPER_GAIN ? "yes" : "no", s->two.g >= OOO_PAPER_GAIN ? "yes" : "no");
}

#endif
