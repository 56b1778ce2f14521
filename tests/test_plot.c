/* tests/test_plot.c - the plotting module: every figure type renders deterministically, known
 * pixels have their colours, no text overlaps or leaves the canvas at any text scale, bad input
 * gives the documented codes. one PASS/FAIL line per check; demo pngs go to build/tests/plot-*.png.
 * run by make test (from the repository root). */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#define DPPROF_PLOT_TRUETYPE /* the TrueType font path too (dpprof_plot_font); the bitmap font is the default */
#define STB_TRUETYPE_IMPLEMENTATION
#define STBTT_STATIC
#include "dpprof_tools.h"

#include <time.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

static int g_fail = 0;

static void check(int ok, const char *name) {
    printf("%s %s\n", ok ? "PASS" : "FAIL", name);
    if (!ok) g_fail = 1;
}

static int px_is(const dpprof_canvas *c, int x, int y, const unsigned char *rgb) {
    const unsigned char *p = c->rgb + ((size_t)y * c->w + x) * 3;
    return p[0] == rgb[0] && p[1] == rgb[1] && p[2] == rgb[2];
}

static int px_white(const dpprof_canvas *c, int x, int y) {
    static const unsigned char w[3] = {255, 255, 255};
    return px_is(c, x, y, w);
}

/* ink bounding box (non-white pixels); returns 0 when there is none */
static int ink_box(const dpprof_canvas *c, int *x0, int *y0, int *x1, int *y1) {
    int x, y, any = 0;
    *x0 = c->w;
    *y0 = c->h;
    *x1 = -1;
    *y1 = -1;
    for (y = 0; y < c->h; y++)
        for (x = 0; x < c->w; x++)
            if (!px_white(c, x, y)) {
                any = 1;
                if (x < *x0) *x0 = x;
                if (y < *y0) *y0 = y;
                if (x > *x1) *x1 = x;
                if (y > *y1) *y1 = y;
            }
    return any;
}

static void save(const char *path, const dpprof_canvas *c) {
    if (!stbi_write_png(path, c->w, c->h, 3, c->rgb, c->w * 3)) {
        printf("FAIL write %s\n", path);
        g_fail = 1;
    }
}

static unsigned long fnv1a(const unsigned char *p, size_t n) {
    unsigned long h = 2166136261ul;
    size_t i;
    for (i = 0; i < n; i++) h = ((h ^ p[i]) * 16777619ul) & 0xfffffffful;
    return h;
}

/* ---- font checks -------------------------------------------------------- */
static void test_font(void) {
    static unsigned char bm[95][DPPROF_PLOT_FONT_H][DPPROF_PLOT_FONT_W];
    static const unsigned char black[3] = {0, 0, 0};
    dpprof_canvas c;
    int ch, r, k, empty_ok = 1, distinct = 1, in_cell = 1;
    char s[2];
    memset(&c, 0, sizeof c);
    dpprof_canvas_init(&c, 40, 40);
    s[1] = 0;
    for (ch = 32; ch <= 126; ch++) {
        int ink = 0, x, y;
        dpprof_canvas_fill(&c, dpprof__pl_c_bg);
        s[0] = (char)ch;
        dpprof_canvas_text(&c, 10, 10, s, 1, black);
        for (y = 0; y < c.h; y++)
            for (x = 0; x < c.w; x++) {
                int on = !px_white(&c, x, y);
                int inside = x >= 10 && x < 10 + DPPROF_PLOT_FONT_W && y >= 10 && y < 10 + DPPROF_PLOT_FONT_H;
                if (on && (!inside || x == 10 + DPPROF_PLOT_FONT_W - 1)) in_cell = 0;
                if (inside) bm[ch - 32][y - 10][x - 10] = (unsigned char)on;
                ink += on;
            }
        if (ch == 32 ? ink != 0 : ink == 0) {
            printf("  glyph 0x%02X %s\n", ch, ch == 32 ? "space has ink" : "is empty");
            empty_ok = 0;
        }
    }
    for (ch = 33; ch <= 126; ch++)
        for (k = ch + 1; k <= 126; k++)
            if (!memcmp(bm[ch - 32], bm[k - 32], sizeof bm[0])) {
                printf("  glyphs '%c' and '%c' are identical\n", ch, k);
                distinct = 0;
            }
    check(empty_ok, "font: glyphs 33..126 have ink, space has none");
    check(distinct, "font: no two glyphs are identical");
    check(in_cell, "font: ink stays in columns 0..6 of the 8x13 cell");
    (void)r;
    dpprof_canvas_free(&c);
}

/* the measured width equals the drawn extent for text that starts and ends
 * with full-width glyphs, and bounds it for any text; same for rotated text */
static void test_text_metrics(void) {
    static const unsigned char black[3] = {0, 0, 0};
    static const char *exact[] = {"MW", "Memory TW", "W", "0123456789 MiB (peak) ABCDEFGHIJKLMNOPQRSTUVW"};
    static const char *loose[] = {"time (ms)", "optimizer_step", "gjpqy|", "!", "peak 1234.5 MiB"};
    dpprof_canvas c;
    int sc, i, ok_exact = 1, ok_bound = 1, ok_up = 1, bx0, by0, bx1, by1;
    memset(&c, 0, sizeof c);
    dpprof_canvas_init(&c, 1400, 240);
    for (sc = 1; sc <= 3; sc++) {
        for (i = 0; i < 4; i++) {
            int w;
            dpprof_canvas_fill(&c, dpprof__pl_c_bg);
            w = dpprof_canvas_text(&c, 7, 5, exact[i], sc, black);
            if (w != dpprof_canvas_text_width(exact[i], sc) || !ink_box(&c, &bx0, &by0, &bx1, &by1) || bx0 != 7 ||
                bx1 != 7 + w - 1 || by0 < 5 || by1 >= 5 + dpprof_canvas_text_height(sc)) {
                printf("  '%s' scale %d: width %d, ink x %d..%d\n", exact[i], sc, w, bx0, bx1);
                ok_exact = 0;
            }
        }
        for (i = 0; i < 5; i++) {
            int w = dpprof_canvas_text_width(loose[i], sc);
            dpprof_canvas_fill(&c, dpprof__pl_c_bg);
            dpprof_canvas_text(&c, 3, 9, loose[i], sc, black);
            if (!ink_box(&c, &bx0, &by0, &bx1, &by1) || bx0 < 3 || bx1 > 3 + w - 1 || by0 < 9 ||
                by1 >= 9 + dpprof_canvas_text_height(sc)) {
                printf("  '%s' scale %d: width %d, ink x %d..%d\n", loose[i], sc, w, bx0, bx1);
                ok_bound = 0;
            }
        }
    }
    dpprof_canvas_free(&c);
    /* rotated: box is text_height wide, text_width tall */
    dpprof_canvas_init(&c, 120, 1400);
    for (sc = 1; sc <= 3; sc++) {
        int h;
        dpprof_canvas_fill(&c, dpprof__pl_c_bg);
        h = dpprof_canvas_text_up(&c, 4, 6, "Memory TW", sc, black);
        if (h != dpprof_canvas_text_width("Memory TW", sc) || !ink_box(&c, &bx0, &by0, &bx1, &by1) || by0 != 6 ||
            by1 != 6 + h - 1 || bx0 < 4 || bx1 >= 4 + dpprof_canvas_text_height(sc))
            ok_up = 0;
    }
    dpprof_canvas_free(&c);
    check(ok_exact, "text: width function matches the drawn extent (scales 1-3)");
    check(ok_bound, "text: drawn extent stays inside the measured box");
    check(ok_up, "text: rotated text extent matches the measured box");
    check(dpprof_canvas_text_width("", 2) == 0 && dpprof_canvas_text_width(NULL, 2) == 0 &&
              dpprof_canvas_text_width("ab", 2) == 30 && dpprof_canvas_text_height(2) == 26,
          "text: width/height of trivial strings");
}

/* ---- number formatting and ticks (internal helpers) ------------------- */
static void test_numbers(void) {
    char b[32];
    int ok = 1;
    struct {
        double v;
        int sig;
        const char *want;
    } cases[] = {
        /* clang-format off */
        {123.4, 4, "123.4"}, {1234.56, 4, "1235"},  {0.5, 4, "0.5"},        {120.0, 4, "120"},
        {0.0, 4, "0"},       {-2.25, 3, "-2.25"},   {99999.6, 4, "100000"}, {2.5e7, 3, "2.5e7"},
        {1e-5, 3, "1e-5"},   {9.9996e9, 4, "1e10"}, {1000.0, 3, "1000"}};
    /* clang-format on */
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpprof__pl_fmt_sig(b, (int)sizeof b, cases[i].v, cases[i].sig);
        if (strcmp(b, cases[i].want)) {
            printf("  fmt_sig(%.17g, %d) = '%s', want '%s'\n", cases[i].v, cases[i].sig, b, cases[i].want);
            ok = 0;
        }
    }
    dpprof__pl_fmt_fixed(b, (int)sizeof b, 0.1 * 3, 1);
    if (strcmp(b, "0.3")) ok = 0;
    dpprof__pl_fmt_fixed(b, (int)sizeof b, -0.04, 1);
    if (strcmp(b, "0.0")) ok = 0; /* no "-0.0" */
    check(ok, "numbers: own formatting (significant digits, exponents, no -0)");
    {
        dpprof__pl_axis a;
        int j, ok2 = 1;
        memset(&a, 0, sizeof a);
        a.kind = DPPROF__PL_AX_LIN;
        a.lo = 0;
        a.hi = 1234;
        a.p0 = 800;
        a.p1 = 100;
        dpprof__pl_ax_ticks_lin(&a, 2, 0, 78);
        /* 700 px / 78 px -> at most 8 intervals: step 200 */
        if (a.nt != 7 || a.t[1] != 200.0 || strcmp(a.lab[6], "1200")) ok2 = 0;
        a.lo = 0;
        a.hi = 0.7;
        dpprof__pl_ax_ticks_lin(&a, 2, 0, 78);
        for (j = 0; j < a.nt; j++)
            if (strlen(a.lab[j]) != 3) ok2 = 0; /* 0.0 0.1 ... 0.7 */
        a.kind = DPPROF__PL_AX_LOG;
        a.lo = 1;
        a.hi = 1e6;
        dpprof__pl_ax_ticks_log(&a, 2, 0, 78);
        if (a.nt < 7 || strcmp(a.lab[0], "1")) ok2 = 0;
        check(ok2, "ticks: 1-2-5 linear steps and log decades");
    }
}

/* ---- timeline data ------------------------------------------------------ */
enum {
    NS = 9
};
static const char *const k_series[NS] = {"model_parameters", "optimizer_states", "gradients",
                                         "per_sample_grads", "activations", "data",
                                         "workspace", "dp_noise", "unknown"};

typedef struct demo {
    int n, nm;
    double *x, *y;
    double mx[16];
    const char *mn[16];
} demo;

static unsigned lcg(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* a plausible dp-sgd step: forward builds activations, backward frees them
 * while per-sample gradients pile up (the peak), the optimizer step clips,
 * adds noise and updates adam states (allocated lazily at the first step) */
static void demo_make(demo *d, int per_ms) {
    const double step_ms = 400.0, t_bwd = 140.0, t_opt = 330.0;
    int i, n = (int)(3 * step_ms * per_ms) + 1;
    unsigned seed = 12345u;
    d->n = n;
    d->x = (double *)malloc(sizeof(double) * n);
    d->y = (double *)calloc((size_t)n * NS, sizeof(double));
    for (i = 0; i < n; i++) {
        double t = (double)i / per_ms, u;
        int st = (int)(t / step_ms);
        double *col[NS];
        int k;
        if (st > 2) st = 2;
        u = t - st * step_ms;
        for (k = 0; k < NS; k++) col[k] = d->y + (size_t)k * n + i;
        d->x[i] = t;
        *col[0] = 420.0;
        *col[1] = (st > 0 || u >= t_opt + 10.0) ? 840.0 : 0.0;
        *col[5] = u < 385.0 ? 24.0 : 0.0;
        *col[6] = ((lcg(&seed) % 100) < 60 && u < t_opt) ? 32.0 : 0.0;
        if (u < t_bwd) {
            *col[4] = 1150.0 * (u / t_bwd) + 8.0 * (lcg(&seed) % 5);
        } else if (u < t_opt) {
            double b = (u - t_bwd) / (t_opt - t_bwd);
            *col[4] = 1150.0 * (1.0 - b);
            *col[3] = 1800.0 * (b < 0.8 ? b / 0.8 : 1.0);
            *col[2] = 420.0 * b;
        } else {
            double o = (u - t_opt) / (step_ms - t_opt);
            *col[2] = o < 0.5 ? 420.0 : 0.0;
            *col[3] = o < 0.15 ? 1800.0 * (1.0 - o / 0.15) : 0.0;
            *col[7] = (o > 0.1 && o < 0.5) ? 420.0 : 0.0;
            *col[6] = o < 0.6 ? 64.0 : 0.0;
        }
    }
    d->nm = 0;
    for (i = 0; i < 3; i++) {
        d->mx[d->nm] = i * step_ms;
        d->mn[d->nm++] = "forward";
        d->mx[d->nm] = i * step_ms + t_bwd;
        d->mn[d->nm++] = "backward";
        d->mx[d->nm] = i * step_ms + t_opt;
        d->mn[d->nm++] = "optimizer_step";
    }
}

static void demo_free(demo *d) {
    free(d->x);
    free(d->y);
}

static void demo_desc(const demo *d, dpprof_timeline_desc *t) {
    memset(t, 0, sizeof *t);
    t->title = "DP-SGD memory timeline (3 steps, batch 64)";
    t->n_points = d->n;
    t->x = d->x;
    t->n_series = NS;
    t->y = d->y;
    t->series_names = k_series;
    t->n_marks = d->nm;
    t->mark_x = d->mx;
    t->mark_names = d->mn;
}

static void test_timeline(void) {
    demo dm;
    dpprof_timeline_desc t;
    dpprof_canvas a, b, c;
    int rc1, rc2, rc3;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    demo_make(&dm, 10);
    demo_desc(&dm, &t);
    rc1 = dpprof_plot_timeline(&t, &a);
    rc2 = dpprof_plot_timeline(&t, &b);
    /* a preallocated canvas full of garbage must come out identical too */
    dpprof_canvas_init(&c, 1600, 900);
    memset(c.rgb, 0x5a, (size_t)1600 * 900 * 3);
    rc3 = dpprof_plot_timeline(&t, &c);
    check(rc1 == 0 && rc2 == 0 && rc3 == 0 && a.w == 1600 && a.h == 900,
          "timeline: renders (1600x900 default)");
    check(a.rgb && b.rgb && !memcmp(a.rgb, b.rgb, (size_t)a.w * a.h * 3) &&
              !memcmp(a.rgb, c.rgb, (size_t)a.w * a.h * 3),
          "timeline: deterministic (twice, and over a dirty canvas)");
    printf("  timeline pixel hash fnv1a %08lx\n", a.rgb ? fnv1a(a.rgb, (size_t)a.w * a.h * 3) : 0ul);
    if (a.rgb) save("build/tests/plot-timeline.png", &a);
    dpprof_canvas_free(&a);
    dpprof_canvas_free(&b);
    dpprof_canvas_free(&c);
    /* the same data on a small canvas, for eyeballing the layout at scale 1 */
    t.width = 800;
    t.height = 450;
    if (dpprof_plot_timeline(&t, &a) == 0) save("build/tests/plot-timeline_800.png", &a);
    dpprof_canvas_free(&a);
    demo_free(&dm);
}

/* two series: s0 = 10 everywhere, s1 = 10 from x = 50 on, y_max = 20. so the
 * lower half is s0 everywhere, the upper half s1 right of x = 50 and empty
 * left of it */
static void test_known_pixels(void) {
    enum {
        N = 101
    };
    double x[N], y[2 * N];
    static const unsigned char rgb[6] = {200, 30, 30, 30, 30, 200};
    static const char *const names[2] = {"bottom", "top"};
    dpprof_timeline_desc t;
    dpprof_canvas c;
    int i, ok_s0 = 1, ok_s1 = 1, ok_bg = 1, white = 0, xx, yy;
    for (i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 10.0;
        y[N + i] = i >= 50 ? 10.0 : 0.0;
    }
    memset(&t, 0, sizeof t);
    memset(&c, 0, sizeof c);
    t.n_points = N;
    t.x = x;
    t.n_series = 2;
    t.y = y;
    t.series_names = names;
    t.series_rgb = rgb;
    t.y_max = 20.0;
    if (dpprof_plot_timeline(&t, &c) != 0) {
        check(0, "timeline: known pixels (render failed)");
        return;
    }
    /* data area spans roughly x 100..1350, y 60..820 at 1600x900: sample well
   * inside each region */
    for (xx = 280; xx <= 320; xx += 10)
        if (!px_is(&c, xx, 650, rgb)) ok_s0 = 0;
    for (xx = 1000; xx <= 1100; xx += 25) {
        if (!px_is(&c, xx, 650, rgb)) ok_s0 = 0;
        if (!px_is(&c, xx, 250, rgb + 3)) ok_s1 = 0;
    }
    /* above the bottom series left of x = 50: only background and grid */
    for (yy = 230; yy < 270; yy++)
        for (xx = 280; xx < 320; xx++) {
            if (px_is(&c, xx, yy, rgb) || px_is(&c, xx, yy, rgb + 3)) ok_bg = 0;
            white += px_white(&c, xx, yy);
        }
    check(ok_s0, "timeline: pixel inside the bottom stacked area has series 0 colour");
    check(ok_s1, "timeline: pixel inside the upper stacked area has series 1 colour");
    check(ok_bg && white > 1200, "timeline: background colour above the stack");
    save("build/tests/plot-test_known.png", &c);
    dpprof_canvas_free(&c);
}

/* a timeline's legend sits in a band below the data, which keeps the
 * width: s0 fills the whole data area, s1 is clipped away above y_max, so
 * s1's colour can only come from its swatch */
static void test_legend_outside(void) {
    enum {
        N = 50
    };
    double x[N], y[2 * N];
    static const unsigned char rgb[6] = {10, 120, 200, 220, 40, 160};
    static const char *const names[2] = {"fills_everything", "only_in_legend"};
    dpprof_timeline_desc t;
    dpprof_canvas c;
    int i, xx, yy, data_right = -1, data_bottom = -1, sw_top = 1 << 30, sw_n = 0;
    for (i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 10.0;
        y[N + i] = 1.0;
    }
    memset(&t, 0, sizeof t);
    memset(&c, 0, sizeof c);
    t.n_points = N;
    t.x = x;
    t.n_series = 2;
    t.y = y;
    t.series_names = names;
    t.series_rgb = rgb;
    t.y_max = 10.0;
    if (dpprof_plot_timeline(&t, &c) != 0) {
        check(0, "legend: outside the data area (render failed)");
        return;
    }
    for (xx = 0; xx < c.w; xx++)
        if (px_is(&c, xx, c.h / 2, rgb)) data_right = xx;
    for (yy = 0; yy < c.h; yy++)
        if (px_is(&c, c.w / 2, yy, rgb)) data_bottom = yy;
    for (yy = 0; yy < c.h; yy++)
        for (xx = 0; xx < c.w; xx++)
            if (px_is(&c, xx, yy, rgb + 3)) {
                sw_n++;
                if (yy < sw_top) sw_top = yy;
            }
    check(data_right > c.w * 85 / 100 && data_bottom > 0 && sw_n > 50 && sw_top > data_bottom + 10,
          "legend: in a band entirely below the data area, which keeps the width; series clipped above y_max not drawn");
    dpprof_canvas_free(&c);
}

/* phase-label placement on the demo marks: no two labels of a row overlap,
 * no label covers another mark's line, every distinct name is shown */
static void test_mark_layout(void) {
    demo dm;
    dpprof_timeline_desc t;
    dpprof_canvas c;
    dpprof__pl_frame f;
    int order[16], row[16], lx[16], lw[16], nv, i, j, rows, ok = 1, named[3] = {0, 0, 0}, placed = 0, spans = 0;
    memset(&c, 0, sizeof c);
    dpprof_canvas_init(&c, 1600, 900);
    demo_make(&dm, 1);
    demo_desc(&dm, &t);
    dpprof__pl_frame_init(&f, &c, t.title, "time (ms)", "memory (MiB)");
    f.xa.kind = DPPROF__PL_AX_LIN;
    f.xa.lo = dm.x[0];
    f.xa.hi = dm.x[dm.n - 1];
    f.ya.kind = DPPROF__PL_AX_LIN;
    f.ya.lo = 0;
    f.ya.hi = 4000;
    f.right_w = 300;
    dpprof__pl_frame_layout(&f);
    memset(order, 0, sizeof order);
    memset(row, 0, sizeof row);
    memset(lx, 0, sizeof lx);
    memset(lw, 0, sizeof lw);
    nv = dm.nm;
    for (i = 0; i < nv; i++) order[i] = i;
    rows = dpprof__pl_marks_place(&f, &t, order, nv, row, lx, lw, 3, 0);
    for (i = 0; i < nv; i++) {
        int px = dpprof__pl_ax_pix(&f.xa, dm.mx[i]);
        if (row[i] < 0) continue;
        placed++;
        named[i % 3] = 1;
        {
            /* the label hugs its line, or (nearest the data) sits in its phase's stretch, up to the next mark */
            int k2 = i + 1 < nv ? dpprof__pl_ax_pix(&f.xa, dm.mx[i + 1]) : f.x1;
            int hugs = px >= lx[i] - 3 * f.ts - 1 && px <= lx[i] + lw[i] + 3 * f.ts;
            int inside = row[i] == 0 && lx[i] > px && lx[i] + lw[i] < k2;
            if (!hugs && !inside) ok = 0;
            spans += inside && !hugs;
        }
        for (j = 0; j < nv; j++) {
            int pj = dpprof__pl_ax_pix(&f.xa, dm.mx[j]);
            if (j == i) continue;
            if (row[j] == row[i] && lx[i] < lx[j] + lw[j] && lx[j] < lx[i] + lw[i]) ok = 0;
            /* j's line runs through rows 0..row[j] (or none when unlabelled) */
            if (row[j] >= row[i] && pj >= lx[i] && pj < lx[i] + lw[i]) ok = 0;
        }
    }
    printf("  %d of %d phase labels placed in %d rows (%d in their stretch)\n", placed, nv, rows, spans);
    check(ok && named[0] && named[1] && named[2] && rows >= 1 && rows <= 3,
          "marks: labels never overlap each other or cross another mark's line");
    demo_free(&dm);
    dpprof_canvas_free(&c);
}

/* 100k events (8+1 series) in well under a second, and a single-event spike
 * (one sample among 100k) must still show at full height */
static void test_big(void) {
    enum {
        N = 100000
    };
    static const unsigned char spike_rgb[3] = {0, 114, 178};
    demo dm;
    dpprof_timeline_desc t;
    dpprof_canvas c;
    clock_t t0, t1;
    double secs;
    int rc, xx, cols = 0, spike = 54321, k;
    memset(&c, 0, sizeof c);
    demo_make(&dm, 84); /* 3*400*84 + 1 = 100801 events */
    demo_desc(&dm, &t);
    t0 = clock();
    rc = dpprof_plot_timeline(&t, &c);
    t1 = clock();
    secs = (double)(t1 - t0) / CLOCKS_PER_SEC;
    printf("  %d events x %d series rendered in %.3f s\n", dm.n, NS, secs);
    check(rc == 0 && secs < 1.0, "timeline: 100k+ events x 9 series render in < 1 s");
    dpprof_canvas_free(&c);
    demo_free(&dm);

    /* spike: everything 10 except one event at 100 */
    {
        double *x = (double *)malloc(sizeof(double) * N), *y = (double *)malloc(sizeof(double) * N);
        for (k = 0; k < N; k++) {
            x[k] = k * 0.01;
            y[k] = k == spike ? 100.0 : 10.0;
        }
        memset(&t, 0, sizeof t);
        t.n_points = N;
        t.x = x;
        t.n_series = 1;
        t.y = y;
        rc = dpprof_plot_timeline(&t, &c);
        /* at 60% height only the spike column(s) can carry the series colour */
        if (rc == 0)
            for (xx = 0; xx < c.w; xx++)
                if (px_is(&c, xx, 900 * 45 / 100, spike_rgb)) cols++;
        check(rc == 0 && cols >= 1 && cols <= 2, "timeline: one-event peak among 100k stays visible");
        if (rc == 0) save("build/tests/plot-test_spike.png", &c);
        dpprof_canvas_free(&c);
        free(x);
        free(y);
    }
}

static void test_bad_inputs(void) {
    double x[3] = {0, 1, 2}, y[3] = {1, 2, 3}, xb[3] = {0, 2, 1}, yn[3] = {1, -1, 3};
    double nanv = strtod("nan", NULL), infv = strtod("inf", NULL);
    double xn[3], yq[3];
    dpprof_timeline_desc t, u;
    dpprof_bars_desc b, v;
    dpprof_canvas c;
    int ok = 1;
    memset(&t, 0, sizeof t);
    memset(&c, 0, sizeof c);
    t.n_points = 3;
    t.x = x;
    t.n_series = 1;
    t.y = y;
#define EXPECT(call, code, what)                               \
    do {                                                       \
        int r_ = (call);                                       \
        if (r_ != (code)) {                                    \
            printf("  %s: got %d, want %d\n", what, r_, code); \
            ok = 0;                                            \
        }                                                      \
        if (c.rgb) {                                           \
            printf("  %s: canvas allocated on error\n", what); \
            ok = 0;                                            \
            dpprof_canvas_free(&c);                            \
        }                                                      \
    } while (0)
    EXPECT(dpprof_plot_timeline(NULL, &c), DPPROF_PLOT_EARG, "NULL desc");
    EXPECT(dpprof_plot_timeline(&t, NULL), DPPROF_PLOT_EARG, "NULL canvas");
    u = t;
    u.n_points = 0;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EARG, "n_points 0");
    u = t;
    u.x = NULL;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EARG, "NULL x");
    u = t;
    u.y = NULL;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EARG, "NULL y");
    u = t;
    u.n_series = 0;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EARG, "n_series 0");
    u = t;
    u.n_marks = 2;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EARG, "NULL mark_x");
    u = t;
    u.x = xb;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EORDER, "non-ascending x");
    u = t;
    u.y = yn;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EVALUE, "negative y");
    memcpy(xn, x, sizeof xn);
    xn[1] = nanv;
    u = t;
    u.x = xn;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EVALUE, "NaN x");
    memcpy(yq, y, sizeof yq);
    yq[2] = nanv;
    u = t;
    u.y = yq;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EVALUE, "NaN y");
    yq[2] = infv;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EVALUE, "inf y");
    u = t;
    u.y_max = -1;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_EVALUE, "negative y_max");
    u = t;
    u.width = 100;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_ESIZE, "too small");
    u = t;
    u.width = -5;
    EXPECT(dpprof_plot_timeline(&u, &c), DPPROF_PLOT_ESIZE, "negative width");
    {
        /* preallocated canvas of another size is refused and left alone */
        dpprof_canvas p;
        memset(&p, 0, sizeof p);
        dpprof_canvas_init(&p, 640, 480);
        u = t;
        u.width = 800;
        u.height = 600;
        if (dpprof_plot_timeline(&u, &p) != DPPROF_PLOT_ESIZE || p.rgb[0] != 255) ok = 0;
        u.width = u.height = 0; /* 0 -> canvas size */
        if (dpprof_plot_timeline(&u, &p) != 0) ok = 0;
        dpprof_canvas_free(&p);
    }
    check(ok, "bad inputs: timeline returns the documented codes, canvas untouched");

    ok = 1;
    memset(&b, 0, sizeof b);
    b.n_groups = 3;
    b.n_series = 1;
    b.values = y;
    v = b;
    v.values = NULL;
    EXPECT(dpprof_plot_bars(&v, &c), DPPROF_PLOT_EARG, "bars NULL values");
    v = b;
    v.n_groups = 0;
    EXPECT(dpprof_plot_bars(&v, &c), DPPROF_PLOT_EARG, "bars no groups");
    v = b;
    v.values = yn;
    EXPECT(dpprof_plot_bars(&v, &c), DPPROF_PLOT_EVALUE, "bars negative");
    v = b;
    v.values = yq;
    EXPECT(dpprof_plot_bars(&v, &c), DPPROF_PLOT_EVALUE, "bars inf");
    {
        double z[3] = {0, 1, 2};
        v = b;
        v.values = z;
        v.log_y = 1;
        EXPECT(dpprof_plot_bars(&v, &c), DPPROF_PLOT_EVALUE, "bars zero on log axis");
    }
    EXPECT(dpprof_plot_bars(NULL, &c), DPPROF_PLOT_EARG, "bars NULL desc");
    {
        double lo[3] = {1, 2, 3}, hi[3] = {0.5, 2, 3}; /* the first reversed */
        v = b;
        v.err_lo = lo, v.err_hi = hi;
        EXPECT(dpprof_plot_bars(&v, &c), DPPROF_PLOT_EVALUE, "bars whisker reversed");
        hi[0] = INFINITY;
        EXPECT(dpprof_plot_bars(&v, &c), DPPROF_PLOT_EVALUE, "bars whisker infinite");
    }
    check(ok, "bad inputs: bars returns the documented codes");
    { /* NaN is a missing value (a configuration not measured, or oom): no bar and the label n/a, never a
       bar of 0; on a log axis too, and horizontal */
        double m[3] = {1, NAN, 2}, z[3] = {1, 0, 2}, lone[3] = {NAN, NAN, NAN};
        dpprof_canvas cm, cz;
        int h, okm = 1;
        for (h = 0; h < 2; h++) {
            memset(&cm, 0, sizeof cm);
            memset(&cz, 0, sizeof cz);
            v = b;
            v.width = 400;
            v.height = 300;
            v.horizontal = h;
            v.values = m;
            okm &= dpprof_plot_bars(&v, &cm) == DPPROF_PLOT_OK;
            v.values = z;
            okm &= dpprof_plot_bars(&v, &cz) == DPPROF_PLOT_OK;
            /* the same axes (the maximum is 2 either way): only the label differs, "n/a" against "0" */
            okm &= cm.rgb && cz.rgb && memcmp(cm.rgb, cz.rgb, (size_t)cm.w * (size_t)cm.h * 3) != 0;
            dpprof_canvas_free(&cm);
            dpprof_canvas_free(&cz);
        }
        v = b;
        v.values = m;
        v.log_y = 1;
        memset(&cm, 0, sizeof cm);
        okm &= dpprof_plot_bars(&v, &cm) == DPPROF_PLOT_OK;
        dpprof_canvas_free(&cm);
        v.values = lone;
        memset(&cm, 0, sizeof cm);
        okm &= dpprof_plot_bars(&v, &cm) == DPPROF_PLOT_OK;
        dpprof_canvas_free(&cm);
        check(okm, "bars: a NaN value is drawn as no bar labelled n/a (vertical, horizontal, log axis, all missing)");
    }
    check(dpprof_canvas_init(&c, 0, 10) == DPPROF_PLOT_ESIZE && !c.rgb &&
              dpprof_canvas_init(NULL, 5, 5) == DPPROF_PLOT_EARG,
          "bad inputs: canvas_init");
#undef EXPECT
}

static void test_bars(void) {
    static const char *const groups[5] = {"non-private SGD", "DP-SGD (per-sample, Opacus)",
                                          "DP-SGD ghost clipping", "DP-SGD book-keeping", "DP-SGD mixed ghost"};
    static const char *const series[3] = {"batch 32", "batch 64", "batch 128"};
    static const double vals[15] = {1612.5, 1788.0, 1694.3, 1650.9, 1660.2,  /* batch 32 */
                                    2105.0, 3420.8, 2250.6, 2190.1, 2201.7,  /* batch 64 */
                                    3050.2, 6230.4, 3390.0, 3262.8, 3301.5}; /* batch 128 */
    dpprof_bars_desc b;
    dpprof_canvas c, c2;
    int rc, rc2;
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    memset(&c2, 0, sizeof c2);
    b.title = "Peak GPU memory by clipping method (ResNet-18, CIFAR-10)";
    b.xlabel = "method";
    b.n_groups = 5;
    b.group_names = groups;
    b.n_series = 3;
    b.series_names = series;
    b.values = vals;
    rc = dpprof_plot_bars(&b, &c);
    rc2 = dpprof_plot_bars(&b, &c2);
    check(rc == 0 && rc2 == 0 && !memcmp(c.rgb, c2.rgb, (size_t)c.w * c.h * 3), "bars: renders, deterministic");
    if (rc == 0) {
        /* a bar's middle has its series colour: the tallest bar (batch 128,
     * Opacus) sits in the second group; check its lower part */
        int xx, found = 0;
        for (xx = 0; xx < c.w; xx++)
            if (px_is(&c, xx, 700, dpprof_plot_palette(2))) found++;
        check(found > 100, "bars: bar pixels carry their series colour");
        save("build/tests/plot-bars.png", &c);
    }
    dpprof_canvas_free(&c);
    dpprof_canvas_free(&c2);

    { /* whiskers (the range of repeated runs): dark pixels over each bar's centre up to its top, the axis grown to
         hold the highest, NaN: none */
        static const double v3[3] = {0.6, 0.8, 1.0}, lo3[3] = {0.55, NAN, 0.9}, hi3[3] = {0.7, NAN, 1.3};
        dpprof_bars_desc w;
        dpprof_canvas cw, cn;
        int cx, y, dark_over = 0, rcw, rcn;
        memset(&w, 0, sizeof w);
        memset(&cw, 0, sizeof cw);
        memset(&cn, 0, sizeof cn);
        w.n_groups = 3, w.n_series = 1, w.values = v3, w.width = 1200, w.height = 800, w.hide_values = 1;
        rcn = dpprof_plot_bars(&w, &cn);
        w.err_lo = lo3, w.err_hi = hi3;
        rcw = dpprof_plot_bars(&w, &cw);
        check(rcw == 0 && rcn == 0 && cw.w == cn.w && memcmp(cw.rgb, cn.rgb, (size_t)cw.w * cw.h * 3) != 0, "bars: whiskers drawn");
        if (rcw == 0) {
            for (cx = 0; cx < cw.w; cx++) /* the third group's whisker rises above every bar's top (1.3 > 1.0): dark pixels there */
                for (y = 0; y < cw.h / 2; y++)
                    if (cw.rgb[((size_t)y * cw.w + cx) * 3] < 60 && cw.rgb[((size_t)y * cw.w + cx) * 3 + 1] < 60 && cx > cw.w / 2 && cx < cw.w * 9 / 10) dark_over++;
            printf("# whisker: %d dark pixels in the upper half, right\n", dark_over);
            check(dark_over > 10, "bars: a whisker above its bar (dark pixels in the upper half, right)");
            save("build/tests/plot-bars_whiskers.png", &cw);
        }
        dpprof_canvas_free(&cw);
        dpprof_canvas_free(&cn);
    }

    {
        /* stress layout: many groups with long names, log axis, single series */
        static const char *const g2[12] = {"resnet18_cifar10_bs256", "resnet50_imagenet_bs64",
                                           "vit_b16_bs32", "bert_base_sst2",
                                           "gpt2_small_wikitext", "lstm_imdb",
                                           "wide_resnet_28_10", "mlp_mnist",
                                           "t5_small_xsum", "roberta_large_mnli",
                                           "efficientnet_b0", "llama_7b_lora"};
        static const double v2[12] = {2210, 9800, 7400, 5100, 12900, 640, 15800, 95, 8800, 21500, 3300, 61000};
        memset(&b, 0, sizeof b);
        b.title = "Peak memory per workload (log scale)";
        b.n_groups = 12;
        b.group_names = g2;
        b.n_series = 1;
        b.values = v2;
        b.log_y = 1;
        if (dpprof_plot_bars(&b, &c) == 0)
            save("build/tests/plot-bars_log.png", &c);
        else
            check(0, "bars: log variant renders");
        dpprof_canvas_free(&c);
        b.log_y = 0;
        b.width = 800;
        b.height = 450;
        b.title = "Peak memory per workload";
        if (dpprof_plot_bars(&b, &c) == 0)
            save("build/tests/plot-bars_800.png", &c);
        else
            check(0, "bars: small variant renders");
        dpprof_canvas_free(&c);
    }
}

/* font sheet for eyeballing the glyphs */
static void font_sheet(void) {
    static const unsigned char black[3] = {0, 0, 0};
    dpprof_canvas c;
    char line[40];
    int row, i, y = 10;
    memset(&c, 0, sizeof c);
    dpprof_canvas_init(&c, 1100, 560);
    for (row = 0; row < 3; row++) {
        int n = 0;
        for (i = 32 + row * 32; i < 32 + row * 32 + 32 && i <= 126; i++) line[n++] = (char)i;
        line[n] = 0;
        dpprof_canvas_text(&c, 10, y, line, 1, black);
        dpprof_canvas_text(&c, 300, y, line, 2, black);
        y += 30;
    }
    y += 10;
    dpprof_canvas_text(&c, 10, y, "The quick brown fox jumps over the lazy dog: 0.125 MiB, 1e-5 (peak)", 2,
                       black);
    y += 34;
    dpprof_canvas_text(&c, 10, y, "model_parameters optimizer_states per_sample_grads {x|y} [a/b]", 2, black);
    y += 34;
    dpprof_canvas_text(&c, 10, y, "DP-SGD memory timeline 0123456789", 3, black);
    y += 50;
    dpprof_canvas_text(&c, 10, y, "0O 1lI| 5S 2Z 8B g9q #%&@$ *+-=<>?!", 3, black);
    dpprof_canvas_text_up(&c, 1040, 40, "memory (MiB)", 2, black);
    dpprof_canvas_line(&c, 700, 300, 1000, 500, 3, black);
    dpprof_canvas_dashed_hline(&c, 520, 10, 600, 2, 8, 6, black);
    save("build/tests/plot-font.png", &c);
    dpprof_canvas_free(&c);
}

/* stress images: many marks, many series, clipped y_max */
static void stress_images(void) {
    enum {
        N = 5000,
        S = 20,
        STEPS = 12
    };
    static const char *const phase[4] = {"data_loading", "forward", "backward", "clip+noise+step"};
    static char names[S][48];
    static const char *np[S];
    double *x = (double *)malloc(sizeof(double) * N), *y = (double *)calloc((size_t)N * S, sizeof(double));
    double mx[STEPS * 4];
    const char *mn[STEPS * 4];
    dpprof_timeline_desc t;
    dpprof_canvas c;
    int i, k;
    unsigned seed = 7;
    for (k = 0; k < S; k++) {
        snprintf(names[k], sizeof names[k], "layer_%02d_activation_buffers", k);
        np[k] = names[k];
    }
    for (i = 0; i < N; i++) {
        x[i] = i * 0.37;
        for (k = 0; k < S; k++) y[(size_t)k * N + i] = (double)(lcg(&seed) % 100) * (k % 3 == 0 ? 2.0 : 0.5);
    }
    for (i = 0; i < STEPS; i++) {
        double t0 = i * (N * 0.37 / STEPS);
        for (k = 0; k < 4; k++) {
            mx[i * 4 + k] = t0 + k * (N * 0.37 / STEPS) * (k == 0 ? 0.0 : (k == 1 ? 0.1 : (k == 2 ? 0.45 : 0.85)));
            mn[i * 4 + k] = phase[k];
        }
    }
    memset(&t, 0, sizeof t);
    memset(&c, 0, sizeof c);
    t.title = "stress: 20 series, 48 marks, y_max clipped below the peak";
    t.n_points = N;
    t.x = x;
    t.n_series = S;
    t.y = y;
    t.series_names = np;
    t.n_marks = STEPS * 4;
    t.mark_x = mx;
    t.mark_names = mn;
    t.y_max = 1500;
    if (dpprof_plot_timeline(&t, &c) == 0)
        save("build/tests/plot-timeline_stress.png", &c);
    else
        check(0, "timeline: stress variant renders");
    dpprof_canvas_free(&c);
    free(x);
    free(y);
}

/* odd but valid inputs at several sizes: all must render (asan/ubsan run
 * checks memory safety) */
static void test_odd_inputs(void) {
    static const int sizes[4][2] = {{320, 200}, {640, 360}, {1600, 900}, {2400, 1350}};
    static const char *const long_names[3] = {"an_extremely_long_series_name_that_goes_on_and_on", NULL, "x"};
    double x[5] = {-50, -50, 0, 1e-3, 7}, y[15], mx[4] = {-60, -50, 3, 8};
    const char *mn[4] = {"before", NULL, "", "after the end"};
    double big[6] = {1e12, 3e12, 0, 2e-9, 5e-9, 1e-9};
    double bv[240];
    dpprof_timeline_desc t;
    dpprof_bars_desc b;
    dpprof_canvas c;
    int si, cs, ok = 1, i;
    for (i = 0; i < 15; i++) y[i] = (i % 4) * 1.5;
    for (i = 0; i < 240; i++) bv[i] = 1.0 + (i * 37 % 101);
    memset(&c, 0, sizeof c);
    for (si = 0; si < 4; si++) {
        for (cs = 0; cs < 7; cs++) {
            int rc;
            memset(&t, 0, sizeof t);
            t.width = sizes[si][0];
            t.height = sizes[si][1];
            t.n_points = 5;
            t.x = x;
            t.n_series = 3;
            t.y = y;
            t.series_names = long_names;
            t.n_marks = 4;
            t.mark_x = mx;
            t.mark_names = mn;
            if (cs == 1) t.n_points = 1;
            if (cs == 2) t.y = y + 12, t.n_series = 1, t.n_points = 3; /* values 0, 1.5, 3 */
            if (cs == 3) t.x = big + 2, t.y = big, t.n_points = 3, t.n_series = 2;
            if (cs == 4) {
                static const double zeros[5] = {0, 0, 0, 0, 0};
                t.y = zeros;
                t.n_series = 1;
            }
            if (cs == 5)
                t.y_max = 2.0,
                t.title = "a title far too long to fit on a small figure without being cut off somewhere";
            rc = cs == 6 ? 0 : dpprof_plot_timeline(&t, &c);
            if (rc == 0 && si == 0 && cs == 0) save("build/tests/plot-test_timeline_tiny.png", &c);
            if (rc != 0) {
                printf("  timeline case %d at %dx%d: %d\n", cs, sizes[si][0], sizes[si][1], rc);
                ok = 0;
            }
            dpprof_canvas_free(&c);
            memset(&b, 0, sizeof b);
            b.width = sizes[si][0];
            b.height = sizes[si][1];
            b.n_groups = cs == 0 ? 1 : (cs == 1 ? 60 : (cs == 2 ? 7 : 3));
            b.n_series = cs == 1 ? 4 : (cs == 3 ? 2 : 1); /* case 3: 3 x 2 = 6 values of big */
            b.values = cs == 3 ? big : bv;
            b.group_names = cs == 2 ? long_names : NULL;
            if (cs == 2) b.n_groups = 3;
            b.log_y = cs == 1 || cs == 5;
            if (cs == 4) {
                static const double zeros[3] = {0, 0, 0};
                b.values = zeros;
            }
            if (cs == 6) b.y_max = 0.5, b.title = "clipped bars";
            rc = dpprof_plot_bars(&b, &c);
            if (rc != 0) {
                printf("  bars case %d at %dx%d: %d\n", cs, sizes[si][0], sizes[si][1], rc);
                ok = 0;
            }
            if (si == 0 && cs == 1) save("build/tests/plot-test_bars_tiny.png", &c);
            dpprof_canvas_free(&c);
        }
    }
    check(ok, "odd inputs: single point, zeros, 1e12/1e-9 values, long names, tiny/huge figures render");
}

/* ======================================================================== */
/* new figures: heatmap, stacked bars + overhead, scatter, lines, capacity   */
/* ======================================================================== */
static dpprof__pl_rec g_rec;

static void rec_begin(void) {
    memset(&g_rec, 0, sizeof g_rec);
    dpprof__pl_rec_hook = &g_rec;
}

static void rec_end(void) { dpprof__pl_rec_hook = NULL; }

static void check2(int ok, const char *label, const char *what) {
    char buf[200];
    snprintf(buf, sizeof buf, "%s: %s", label, what);
    check(ok, buf);
}

/* the ink of a recorded string: the box its glyphs' set pixels span (the
 * cell box also holds the blank top row and descender rows) */
static dpprof__pl_rec_box ink_of(const dpprof__pl_rec_box *b) {
    dpprof__pl_rec_box k = *b;
    int n = (int)strlen(b->s), i, r, col, r0 = 99, r1 = -1, u0 = 1 << 30, u1 = -1, s = b->sc;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)b->s[i];
        const unsigned char *g = dpprof__pl_font[(ch >= 32 && ch <= 126) ? ch - 32 : '?' - 32];
        for (r = 0; r < DPPROF_PLOT_FONT_H; r++)
            for (col = 0; col < DPPROF_PLOT_FONT_W; col++)
                if (g[r] & (0x80u >> col)) {
                    int u = i * DPPROF_PLOT_FONT_W + col;
                    if (r < r0) r0 = r;
                    if (r > r1) r1 = r;
                    if (u < u0) u0 = u;
                    if (u > u1) u1 = u;
                }
    }
    if (r1 < 0) {
        k.w = k.h = 0;
        return k;
    }
    if (!b->up) {
        k.x = b->x + u0 * s;
        k.w = (u1 - u0 + 1) * s;
        k.y = b->y + r0 * s;
        k.h = (r1 - r0 + 1) * s;
    } else {
        /* rotated: rows run along x, text along -y from the box bottom */
        k.x = b->x + r0 * s;
        k.w = (r1 - r0 + 1) * s;
        k.y = b->y + b->h - (u1 + 1) * s;
        k.h = (u1 - u0 + 1) * s;
    }
    return k;
}

/* the inks' boxes share a pixel (lines of one wrapped label may touch:
 * a descender of one line above a capital of the next, 13 rows apart) */
static int box_hit(const dpprof__pl_rec_box *a0, const dpprof__pl_rec_box *b0) {
    dpprof__pl_rec_box a = ink_of(a0), b = ink_of(b0);
    if (a.w <= 0 || b.w <= 0) return 0;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static int box_in_area(const dpprof__pl_rec_box *a, const int *ar) {
    return a->x < ar[2] && ar[0] < a->x + a->w && a->y < ar[3] && ar[1] < a->y + a->h;
}

/* the layout that was drawn: every string's cell inside the canvas, no two
 * strings' inks overlapping, legend text outside every data area,
 * nothing cut with ".." (unless allow_cut), data annotations inside a data
 * area. prints what is wrong */
static int layout_ok(const dpprof__pl_rec *r, const dpprof_canvas *c, const char *what, int allow_cut) {
    int i, j, k, ok = 1, bad = 0;
    if (r->dropped) {
        printf("  %s: %d text boxes not recorded\n", what, r->dropped);
        ok = 0;
    }
    for (i = 0; i < r->n; i++) {
        const dpprof__pl_rec_box *a = &r->b[i];
        size_t n = strlen(a->s);
        if (a->x < 0 || a->y < 0 || a->x + a->w > c->w || a->y + a->h > c->h) {
            if (bad++ < 5) printf("  %s: '%s' leaves the canvas (%d,%d %dx%d)\n", what, a->s, a->x, a->y, a->w, a->h);
            ok = 0;
        }
        if (!allow_cut && n >= 2 && a->s[n - 1] == '.' && a->s[n - 2] == '.') {
            if (bad++ < 5) printf("  %s: '%s' was cut\n", what, a->s);
            ok = 0;
        }
        for (k = 0; k < r->na; k++) {
            if (a->kind == DPPROF__PL_K_LEGEND && box_in_area(a, r->area[k])) {
                if (bad++ < 5) printf("  %s: legend '%s' inside data area %d\n", what, a->s, k);
                ok = 0;
            }
        }
        if (a->kind == DPPROF__PL_K_DATA) {
            int inside = 0;
            for (k = 0; k < r->na; k++)
                if (a->x >= r->area[k][0] && a->y >= r->area[k][1] && a->x + a->w <= r->area[k][2] &&
                    a->y + a->h <= r->area[k][3])
                    inside = 1;
            if (!inside) {
                if (bad++ < 5) printf("  %s: annotation '%s' not inside a data area\n", what, a->s);
                ok = 0;
            }
        }
        for (j = i + 1; j < r->n; j++)
            if (box_hit(a, &r->b[j])) {
                if (bad++ < 5)
                    printf("  %s: '%s' (%d,%d %dx%d) overlaps '%s' (%d,%d %dx%d)\n", what, a->s, a->x, a->y, a->w, a->h,
                           r->b[j].s, r->b[j].x, r->b[j].y, r->b[j].w, r->b[j].h);
                ok = 0;
            }
    }
    return ok;
}

/* was string s drawn (whole, in one box)? */
static int rec_has(const dpprof__pl_rec *r, const char *s) {
    int i;
    for (i = 0; i < r->n; i++)
        if (!strcmp(r->b[i].s, s)) return 1;
    return 0;
}

static int count_colour(const dpprof_canvas *c, int x0, int y0, int x1, int y1, const unsigned char *rgb) {
    int x, y, n = 0;
    for (y = dpprof__pl_imax(y0, 0); y < dpprof__pl_imin(y1, c->h); y++)
        for (x = dpprof__pl_imax(x0, 0); x < dpprof__pl_imin(x1, c->w); x++) n += px_is(c, x, y, rgb);
    return n;
}

#define NAN_V (strtod("nan", NULL))

static const char *const k_algos[7] = {"vanilla", "persample", "ghost", "ghost_bk", "flash", "flash_bk", "auto"};

/* checks a figure function over one desc: the same pixels twice and over a
 * dirty preallocated canvas, the drawn layout at text scale ts and size w x
 * h; saves the image. the desc's width/height/text_scale are set by the
 * caller's setter */
#define RENDER_CHECKS(fn, desc, label, png)                                                                   \
    do {                                                                                                      \
        dpprof_canvas a_, b_, d_;                                                                             \
        int r1_, r2_, r3_;                                                                                    \
        memset(&a_, 0, sizeof a_);                                                                            \
        memset(&b_, 0, sizeof b_);                                                                            \
        memset(&d_, 0, sizeof d_);                                                                            \
        rec_begin();                                                                                          \
        r1_ = fn(&(desc), &a_);                                                                               \
        rec_end();                                                                                            \
        r2_ = fn(&(desc), &b_);                                                                               \
        if (r1_ == 0) {                                                                                       \
            dpprof_canvas_init(&d_, a_.w, a_.h);                                                              \
            memset(d_.rgb, 0xa5, (size_t)a_.w *a_.h * 3);                                                     \
        }                                                                                                     \
        r3_ = r1_ == 0 ? fn(&(desc), &d_) : -99;                                                              \
        check2(r1_ == 0 && r2_ == 0 && r3_ == 0 && !memcmp(a_.rgb, b_.rgb, (size_t)a_.w * a_.h * 3) &&        \
                   !memcmp(a_.rgb, d_.rgb, (size_t)a_.w * a_.h * 3),                                          \
               label, "renders deterministically (twice, and over a dirty canvas)");                          \
        if (r1_ == 0) {                                                                                       \
            char what_[96];                                                                                   \
            snprintf(what_, sizeof what_, "%s %dx%d", label, a_.w, a_.h);                                     \
            check2(layout_ok(&g_rec, &a_, what_, 0), label, "no text overlaps, leaves the figure or is cut"); \
            save(png, &a_);                                                                                   \
        }                                                                                                     \
        dpprof_canvas_free(&a_);                                                                              \
        dpprof_canvas_free(&b_);                                                                              \
        dpprof_canvas_free(&d_);                                                                              \
    } while (0)

/* one series of n points in w x h at text scale 2, with nm phase marks: the marks tests' timeline */
static void marks_desc(dpprof_timeline_desc *t, int w, int h, int n, const double *x, const double *y, const char *const *sname, const unsigned char *rgb, int nm,
                       const double *mx, const char *const *mn) {
    memset(t, 0, sizeof *t);
    t->width = w;
    t->height = h;
    t->text_scale = 2;
    t->n_points = n;
    t->x = x;
    t->n_series = 1;
    t->y = y;
    t->series_names = sname;
    t->series_rgb = rgb;
    t->n_marks = nm;
    t->mark_x = mx;
    t->mark_names = mn;
}

/* two steps of forward and backward, each phase's stretch wide enough for its name: every occurrence is named
 * where it runs, in the row nearest the data, centred between its line and the next mark's (or the data's end) */
static void test_span_labels(void) {
    static const char *const mn[5] = {"model_loaded", "forward", "backward", "forward", "backward"};
    static const double mx[5] = {0.5, 100.5, 500.5, 1000.5, 1400.5};
    static const unsigned char red[3] = {200, 30, 30};
    enum {
        N = 2000
    };
    double *x = (double *)malloc(sizeof(double) * N), *y = (double *)malloc(sizeof(double) * N);
    const char *const sname[1] = {"activations"};
    dpprof_timeline_desc t;
    dpprof_canvas c;
    int i, k, ok, n_fwd = 0, n_bwd = 0, centred = 1, x0 = 0, x1 = 0, bottom = -1;
    for (i = 0; i < N; i++) x[i] = i, y[i] = 100.0 + (i % 97);
    memset(&c, 0, sizeof c);
    marks_desc(&t, 1600, 800, N, x, y, sname, red, 5, mx, mn);
    rec_begin();
    ok = dpprof_plot_timeline(&t, &c) == 0 && g_rec.na > 0;
    rec_end();
    if (ok) x0 = g_rec.area[0][0], x1 = g_rec.area[0][2];
    for (i = 0; ok && i < g_rec.n; i++) {
        const dpprof__pl_rec_box *b = &g_rec.b[i];
        for (k = 1; k < 5; k++) {
            /* the mark whose stretch holds the label's middle */
            double lo = x0 + (x1 - x0) * mx[k] / (N - 1), hi = k + 1 < 5 ? x0 + (x1 - x0) * mx[k + 1] / (N - 1) : x1, mid = b->x + b->w / 2.0;
            if (strcmp(b->s, mn[k]) || mid < lo || mid > hi) continue;
            n_fwd += k % 2 == 1, n_bwd += k % 2 == 0;
            if (fabs(mid - (lo + hi) / 2) > 4 * 2) centred = 0;
            if (b->y + b->h > bottom) bottom = b->y + b->h;
        }
    }
    printf("  stretch labels: %d forward, %d backward\n", n_fwd, n_bwd);
    check(ok && n_fwd == 2 && n_bwd == 2 && centred && bottom <= g_rec.area[0][1],
          "timeline: each step's forward and backward named where they run, centred in their stretch, above the data");
    if (c.rgb) save("build/tests/plot-timeline_span_labels.png", &c);
    dpprof_canvas_free(&c);
    free(x);
    free(y);
}

/* ---- algorithm colours ---------------------------------------------------- */
/* a dry run's marks: the setup phases within a few pixels of each other at the start, then two steps of
 * dp phases, noise and optimizer_step where the next forward begins. every distinct phase is labelled
 * (rows grow past 3 where they must), a fixed label_rows is kept, no_legend draws no legend, and x_max
 * extends the axis past the last x with nothing drawn there */
static void test_panel_marks(void) {
    static const char *const setup[4] = {"model_loaded", "data_setup", "optimizer_setup", "privacy_setup"};
    static const char *const step[6] = {"forward", "backward", "norms", "clip_accumulate", "noise", "optimizer_step"};
    static const unsigned char red[3] = {200, 30, 30};
    enum {
        N = 3000,
        M = 4 + 2 * 8 * 4 + 2 * 2
    };
    double *x = (double *)malloc(sizeof(double) * N), *y = (double *)malloc(sizeof(double) * N), mx[M];
    const char *mn[M];
    const char *const sname[1] = {"activations"};
    dpprof_timeline_desc t;
    dpprof_canvas c;
    int i, k, m = 0, rows = -1, ok, legend = 0, drawn_right = 0;
    for (i = 0; i < N; i++) x[i] = i, y[i] = 100.0 + (i % 97);
    for (k = 0; k < 4; k++) mx[m] = k < 1 ? 0.5 : (k < 3 ? 40.5 : 80.5), mn[m++] = setup[k];
    for (i = 0; i < 2; i++) {     /* two steps */
        for (k = 0; k < 8; k++) { /* eight physical batches */
            double b0 = 80.5 + i * 1450 + k * 180;
            mx[m] = b0, mn[m++] = step[0];
            mx[m] = b0 + 70, mn[m++] = step[1];
            mx[m] = b0 + 160, mn[m++] = step[2];
            mx[m] = b0 + 161, mn[m++] = step[3];
        }
        mx[m] = 80.5 + (i + 1) * 1450, mn[m++] = step[4];
        mx[m] = 80.5 + (i + 1) * 1450, mn[m++] = step[5];
    }
    memset(&c, 0, sizeof c);
    marks_desc(&t, 1200, 600, N, x, y, sname, red, m, mx, mn);
    t.label_rows_used = &rows;
    rec_begin();
    ok = dpprof_plot_timeline(&t, &c) == 0;
    rec_end();
    for (k = 0; k < 10 && ok; k++) {
        const char *want = k < 4 ? setup[k] : step[k - 4];
        int seen = 0;
        for (i = 0; i < g_rec.n; i++) seen |= !strcmp(g_rec.b[i].s, want);
        if (!seen) printf("  phase %s has no label\n", want);
        ok &= seen;
    }
    printf("  crowded marks: %d rows of labels\n", rows);
    check(ok && rows > 3 && rows <= DPPROF_PLOT_MAX_LABEL_ROWS, "timeline: every phase labelled where the setup phases crowd the start (rows past 3)");
    if (c.rgb) { /* the labelled marks' lines dark, the others light: a row of the data area holds both */
        int dark = 0, light = 0, xx, yy, y0 = g_rec.na > 0 ? (g_rec.area[0][1] + g_rec.area[0][3]) / 2 : c.h / 2;
        for (yy = y0; yy < y0 + 16; yy++) /* a dash period and more */
            for (xx = 0; xx < c.w; xx++) dark += px_is(&c, xx, yy, dpprof__pl_c_mark), light += px_is(&c, xx, yy, dpprof__pl_c_mark2);
        printf("  mark pixels: %d dark, %d light\n", dark, light);
        check(dark > 0 && light > 0, "timeline: labelled phase lines dark, unlabelled ones light");
        save("build/tests/plot-timeline_panel_marks.png", &c);
    }
    dpprof_canvas_free(&c);
    /* fixed rows, no legend, an axis to twice the last x */
    t.label_rows = 6;
    t.no_legend = 1;
    t.x_max = 2.0 * (N - 1);
    rows = -1;
    rec_begin();
    ok = dpprof_plot_timeline(&t, &c) == 0;
    rec_end();
    for (i = 0; i < g_rec.n; i++) legend |= g_rec.b[i].kind == DPPROF__PL_K_LEGEND;
    if (ok && g_rec.na > 0) { /* the data area's right third: past the last x, no series colour */
        int y0 = g_rec.area[0][1], y1 = g_rec.area[0][3], x0 = g_rec.area[0][0], x1 = g_rec.area[0][2], xx, yy;
        for (xx = x0 + (x1 - x0) * 2 / 3; xx < x1; xx++)
            for (yy = y0; yy < y1; yy++) drawn_right |= px_is(&c, xx, yy, red);
        ok &= x1 - x0 > 900; /* without a legend the data area takes its room */
    } else ok = 0;
    check(ok && rows == 6 && !legend && !drawn_right, "timeline: label_rows kept, no_legend draws none, nothing drawn past the last x on a longer x_max");
    dpprof_canvas_free(&c);
    /* bad values */
    t.x_max = (N - 1) / 2.0;
    check(dpprof_plot_timeline(&t, &c) == DPPROF_PLOT_EVALUE, "timeline: x_max below the last x is refused");
    t.x_max = 0;
    t.label_rows = DPPROF_PLOT_MAX_LABEL_ROWS + 1;
    check(dpprof_plot_timeline(&t, &c) == DPPROF_PLOT_EARG && !c.rgb, "timeline: label_rows past the maximum is refused");
    free(x);
    free(y);
}

static void test_algo_colours(void) {
    int i, j, ok = 1;
    for (i = 0; i < DPPROF_PLOT_ALGO_N; i++) {
        const unsigned char *a = dpprof_plot_algo_colour(i);
        for (j = i + 1; j < DPPROF_PLOT_ALGO_N; j++) {
            const unsigned char *b = dpprof_plot_algo_colour(j);
            if (abs(a[0] - b[0]) + abs(a[1] - b[1]) + abs(a[2] - b[2]) < 80) ok = 0;
        }
        for (j = 0; j < 6; j++) {
            const unsigned char *p = dpprof_plot_palette(j);
            if (abs(a[0] - p[0]) + abs(a[1] - p[1]) + abs(a[2] - p[2]) < 40) {
                printf("  algo %d is close to palette %d\n", i, j);
                ok = 0;
            }
        }
    }
    check(ok && dpprof_plot_algo_colour(8) == dpprof_plot_algo_colour(0) &&
              dpprof_plot_algo_colour(-1) == dpprof_plot_algo_colour(7),
          "algo colours: 8 distinct, apart from the first category colours, index wraps");
}

/* ---- heatmap --------------------------------------------------------------- */
static const char *const k_seq[6] = {"256", "512", "1024", "2048", "4096", "8192"};
static const char *const k_batch[7] = {"1", "2", "4", "8", "16", "32", "64"};

/* peak memory (GiB) of per-sample clipping over seq x batch; >80 did not fit */
static void heat_data(double *v, const char **labels) {
    int r, c;
    for (r = 0; r < 6; r++)
        for (c = 0; c < 7; c++) {
            double x = 6.2 + 0.0011 * (256 << r) * (1 << c) * 0.9 + 0.35 * (1 << c);
            v[r * 7 + c] = x > 80.0 ? NAN_V : x;
            labels[r * 7 + c] = NULL;
        }
    labels[0 * 7 + 6] = "n/a"; /* a configuration that was not run */
}

static void heat_desc(dpprof_heatmap_desc *d, const double *v, const char *const *labels) {
    memset(d, 0, sizeof *d);
    d->title = "Peak memory, per-sample clipping (Llama-3.2-1B)";
    d->xlabel = "batch size";
    d->ylabel = "sequence length";
    d->value_label = "peak memory (GiB)";
    d->n_rows = 6;
    d->n_cols = 7;
    d->row_names = k_seq;
    d->col_names = k_batch;
    d->values = v;
    d->cell_labels = labels;
}

static void test_heatmap(void) {
    double v[42], vb[42];
    const char *labels[42];
    dpprof_heatmap_desc d, u;
    dpprof_canvas c;
    int ok, i;
    heat_data(v, labels);
    heat_desc(&d, v, labels);
    RENDER_CHECKS(dpprof_plot_heatmap, d, "heatmap", "build/tests/plot-heatmap.png");
    u = d;
    u.width = 1200;
    u.height = 800;
    u.text_scale = 3;
    u.title = "Peak memory, per-sample";
    RENDER_CHECKS(dpprof_plot_heatmap, u, "heatmap 1200x800 ts3", "build/tests/plot-heatmap_ts3.png");
    u.text_scale = 2;
    RENDER_CHECKS(dpprof_plot_heatmap, u, "heatmap 1200x800 ts2", "build/tests/plot-heatmap_ts2.png");

    /* known pixels: explicit scale 0..10 on a 2x2 grid with one missing cell */
    {
        static const char *const rn[2] = {"a", "b"}, *const cn[2] = {"x", "y"};
        double kv[4];
        unsigned char mid[3];
        int x0, y0, x1, y1, cx[2], cy[2], hatch = 0, white_txt = 0, dark_txt = 0, xx, yy;
        kv[0] = 0.0;  /* darkest: white text */
        kv[1] = 10.0; /* yellow: dark text */
        kv[2] = 5.0;
        kv[3] = NAN_V;
        memset(&u, 0, sizeof u);
        memset(&c, 0, sizeof c);
        u.n_rows = 2;
        u.n_cols = 2;
        u.row_names = rn;
        u.col_names = cn;
        u.values = kv;
        u.v_min = 0.0;
        u.v_max = 10.0;
        rec_begin();
        ok = dpprof_plot_heatmap(&u, &c) == 0;
        rec_end();
        if (ok && g_rec.na == 1) {
            x0 = g_rec.area[0][0];
            y0 = g_rec.area[0][1];
            x1 = g_rec.area[0][2];
            y1 = g_rec.area[0][3];
            for (i = 0; i < 2; i++) {
                cx[i] = x0 + (x1 - x0) * (2 * i + 1) / 4;
                cy[i] = y0 + (y1 - y0) * (2 * i + 1) / 4;
            }
            dpprof__pl_seq_colour(0.5, mid);
            /* sample off the text: a quarter of the way into each cell */
            check(px_is(&c, cx[0] - (x1 - x0) / 8, cy[0] - (y1 - y0) / 8, dpprof__pl_viridis[0]) &&
                      px_is(&c, cx[1] - (x1 - x0) / 8, cy[0] - (y1 - y0) / 8, dpprof__pl_viridis[10]) &&
                      px_is(&c, cx[0] - (x1 - x0) / 8, cy[1] - (y1 - y0) / 8, mid),
                  "heatmap: cell fills are the scale's colours (min, max, middle)");
            for (yy = y0 + (y1 - y0) / 2 + 4; yy < y1 - 2; yy++)
                for (xx = x0 + (x1 - x0) / 2 + 4; xx < x1 - 2; xx++) hatch += px_is(&c, xx, yy, dpprof__pl_c_hatch);
            white_txt = count_colour(&c, cx[0] - 40, cy[0] - 20, cx[0] + 40, cy[0] + 20, dpprof__pl_c_bg);
            dark_txt = count_colour(&c, cx[1] - 40, cy[0] - 20, cx[1] + 40, cy[0] + 20, dpprof__pl_c_text);
            check(hatch > 200 && rec_has(&g_rec, "oom"), "heatmap: missing cell hatched, with \"oom\"");
            check(white_txt > 20 && dark_txt > 20 && rec_has(&g_rec, "0") && rec_has(&g_rec, "10") && rec_has(&g_rec, "5"),
                  "heatmap: cell text white on dark fills, dark on light fills");
            /* every cell text sits inside its cell */
            {
                int inside = 1;
                for (i = 0; i < g_rec.n; i++) {
                    const dpprof__pl_rec_box *b = &g_rec.b[i];
                    int col = (b->x + b->w / 2 - x0) * 2 / (x1 - x0), row = (b->y + b->h / 2 - y0) * 2 / (y1 - y0);
                    if (b->kind != DPPROF__PL_K_DATA) continue;
                    if (b->x < x0 + col * (x1 - x0) / 2 || b->x + b->w > x0 + (col + 1) * (x1 - x0) / 2 ||
                        b->y < y0 + row * (y1 - y0) / 2 || b->y + b->h > y0 + (row + 1) * (y1 - y0) / 2)
                        inside = 0;
                }
                check(inside, "heatmap: every cell's text inside its cell");
            }
            save("build/tests/plot-test_heatmap_known.png", &c);
        } else {
            check(0, "heatmap: known pixels (render failed)");
        }
        dpprof_canvas_free(&c);
    }
    /* 40 x 40 cells: too small for text, must still render */
    {
        double *big = (double *)malloc(sizeof(double) * 1600);
        for (i = 0; i < 1600; i++) big[i] = (i * 37) % 101;
        memset(&u, 0, sizeof u);
        memset(&c, 0, sizeof c);
        u.n_rows = 40;
        u.n_cols = 40;
        u.values = big;
        u.log_scale = 0;
        u.width = 640;
        u.height = 400;
        rec_begin();
        ok = dpprof_plot_heatmap(&u, &c) == 0;
        rec_end();
        for (i = 0; i < g_rec.n; i++)
            if (g_rec.b[i].kind == DPPROF__PL_K_DATA) ok = 0;
        check(ok && layout_ok(&g_rec, &c, "heatmap 40x40", 0), "heatmap: cells too small for text get none");
        dpprof_canvas_free(&c);
        free(big);
    }
    /* bad inputs */
    {
        double neg[42];
        memcpy(neg, v, sizeof neg);
        memset(&c, 0, sizeof c);
        ok = dpprof_plot_heatmap(NULL, &c) == DPPROF_PLOT_EARG && dpprof_plot_heatmap(&d, NULL) == DPPROF_PLOT_EARG;
        u = d;
        u.values = NULL;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_EARG;
        u = d;
        u.n_rows = 0;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_EARG;
        u = d;
        u.text_scale = -1;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_EARG;
        u.text_scale = DPPROF_PLOT_MAX_TEXT_SCALE + 1;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_EARG;
        neg[3] = strtod("inf", NULL);
        u = d;
        u.values = neg;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_EVALUE;
        neg[3] = -1.0;
        u.log_scale = 1;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_EVALUE;
        u = d;
        u.v_min = 5;
        u.v_max = 1;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_EVALUE;
        u = d;
        u.digits = 16;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_EVALUE;
        u = d;
        u.width = 100;
        ok &= dpprof_plot_heatmap(&u, &c) == DPPROF_PLOT_ESIZE;
        ok &= c.rgb == NULL;
        /* all missing, one cell, log scale, rows_up: valid */
        for (i = 0; i < 42; i++) vb[i] = NAN_V;
        u = d;
        u.values = vb;
        ok &= dpprof_plot_heatmap(&u, &c) == 0;
        dpprof_canvas_free(&c);
        u = d;
        u.log_scale = 1;
        u.rows_up = 1;
        u.cell_labels = NULL;
        ok &= dpprof_plot_heatmap(&u, &c) == 0;
        if (c.rgb) save("build/tests/plot-heatmap_log_rows_up.png", &c);
        dpprof_canvas_free(&c);
        check(ok, "heatmap: bad inputs give the documented codes; all-missing, log, rows_up render");
    }
}

/* ---- stacked bars + overhead panel ---------------------------------------- */
static const char *const k_cats[7] = {"model_parameters", "optimizer_states", "gradients", "per_sample_grads",
                                      "activations", "workspace", "dp_noise"};

/* GiB per category (rows) and algorithm (columns); auto did not fit */
static void stack_data(double *v, double *t) {
    static const double base[7][7] = {
        {2.4, 2.4, 2.4, 2.4, 2.4, 2.4, 2.4},                       /* parameters */
        {4.8, 4.8, 4.8, 4.8, 4.8, 4.8, 4.8},                       /* optimizer */
        {2.4, 2.4, 2.4, 2.4, 2.4, 2.4, 2.4},                       /* gradients */
        {0.0, 14.2, 0.0, 0.0, 0.0, 0.0, 0.0},                      /* per-sample grads */
        {6.1, 6.1, 12.2, 6.3, 6.1, 6.2, 6.2},                      /* activations */
        {0.3, 0.6, 1.1, 0.9, 0.4, 0.4, 0.5},                       /* workspace */
        {0.0, 2.4, 2.4, 2.4, 2.4, 2.4, 2.4}};                      /* noise */
    static const double tm[7] = {210, 620, 455, 300, 262, 241, 0}; /* ms per step; auto: none */
    int k, g;
    for (k = 0; k < 7; k++)
        for (g = 0; g < 7; g++) v[k * 7 + g] = base[k][g];
    v[5 * 7 + 6] = NAN_V; /* auto: oom */
    for (g = 0; g < 7; g++) t[g] = tm[g] > 0.0 ? tm[g] : NAN_V;
}

static void stack_desc(dpprof_stacked_desc *d, const double *v, const double *t, const unsigned char *argb) {
    memset(d, 0, sizeof *d);
    d->title = "Peak memory by algorithm (Llama-3.2-1B, seq 1024, batch 8)";
    d->xlabel = "algorithm";
    d->ylabel = "peak memory (GiB)";
    d->n_groups = 7;
    d->group_names = k_algos;
    d->n_cats = 7;
    d->cat_names = k_cats;
    d->values = v;
    d->overhead = t;
    d->overhead_label = "time per step relative to vanilla";
    d->group_rgb = argb;
}

static void test_stacked(void) {
    double v[49], t[7];
    unsigned char argb[21];
    dpprof_stacked_desc d, u;
    dpprof_canvas c;
    int i, ok;
    for (i = 0; i < 7; i++) memcpy(argb + 3 * i, dpprof_plot_algo_colour(i), 3);
    stack_data(v, t);
    stack_desc(&d, v, t, argb);
    RENDER_CHECKS(dpprof_plot_stacked, d, "stacked", "build/tests/plot-stacked.png");
    u = d;
    u.title = "Peak memory by algorithm";
    u.width = 1200;
    u.height = 800;
    u.text_scale = 3;
    RENDER_CHECKS(dpprof_plot_stacked, u, "stacked 1200x800 ts3", "build/tests/plot-stacked_ts3.png");
    u.text_scale = 2;
    RENDER_CHECKS(dpprof_plot_stacked, u, "stacked 1200x800 ts2", "build/tests/plot-stacked_ts2.png");
    u = d;
    u.overhead = NULL; /* ratios of the totals (memory overhead) */
    u.overhead_label = NULL;
    u.no_overhead = 0;
    u.ref_group = 0;
    RENDER_CHECKS(dpprof_plot_stacked, u, "stacked, memory ratios", "build/tests/plot-stacked_mem_ratio.png");
    u.no_overhead = 1;
    RENDER_CHECKS(dpprof_plot_stacked, u, "stacked without panel", "build/tests/plot-stacked_no_panel.png");

    /* known pixels: y_max 40 makes the segments' rows exact; each segment's
   * middle has its category colour; the dots carry the group colours */
    {
        int x0, y0, x1, y1, g, k, seg_ok = 1, dots_ok = 1;
        u = d;
        u.y_max = 40.0;
        memset(&c, 0, sizeof c);
        rec_begin();
        ok = dpprof_plot_stacked(&u, &c) == 0;
        rec_end();
        if (ok && g_rec.na == 2) {
            x0 = g_rec.area[0][0];
            y0 = g_rec.area[0][1];
            x1 = g_rec.area[0][2];
            y1 = g_rec.area[0][3];
            for (g = 0; g < 6; g++) {
                double cum = 0.0;
                int cx = x0 + (int)((x1 - x0) * (g + 0.5) / 7);
                for (k = 0; k < 7; k++) {
                    double val = v[k * 7 + g];
                    int py = y1 - (int)((cum + val / 2) / 40.0 * (y1 - y0));
                    cum += val;
                    if (val < 1.0) continue; /* thin: too few rows to sample safely */
                    if (!px_is(&c, cx, py, dpprof_plot_palette(k))) {
                        printf("  group %d category %d at (%d,%d) wrong colour\n", g, k, cx, py);
                        seg_ok = 0;
                    }
                }
            }
            /* the missing group: no bar colour in its slot, "oom" written */
            for (k = 0; k < 7; k++)
                if (count_colour(&c, x0 + (x1 - x0) * 6 / 7 + 2, y0, x1 - 2, y1, dpprof_plot_palette(k)) > 0) seg_ok = 0;
            for (g = 0; g < 6; g++) {
                int gx0 = g_rec.area[1][0] + (g_rec.area[1][2] - g_rec.area[1][0]) * g / 7;
                int gx1 = g_rec.area[1][0] + (g_rec.area[1][2] - g_rec.area[1][0]) * (g + 1) / 7;
                if (count_colour(&c, gx0, g_rec.area[1][1], gx1, g_rec.area[1][3], argb + 3 * g) < 20) dots_ok = 0;
            }
            check(seg_ok && rec_has(&g_rec, "oom"), "stacked: segment pixels carry their category colour, oom group empty");
            check(dots_ok && rec_has(&g_rec, "1.00x") && rec_has(&g_rec, "2.95x"),
                  "stacked: overhead dots in group colours, ratios written (1.00x, 2.95x)");
            check(rec_has(&g_rec, "32.9") && rec_has(&g_rec, "16"), "stacked: totals above the bars (32.9, 16)");
            save("build/tests/plot-test_stacked_known.png", &c);
        } else {
            check(0, "stacked: known pixels (render failed)");
        }
        dpprof_canvas_free(&c);
    }
    /* bad inputs */
    {
        double w[49];
        memcpy(w, v, sizeof w);
        memset(&c, 0, sizeof c);
        ok = dpprof_plot_stacked(NULL, &c) == DPPROF_PLOT_EARG && dpprof_plot_stacked(&d, NULL) == DPPROF_PLOT_EARG;
        u = d;
        u.values = NULL;
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EARG;
        u = d;
        u.n_cats = 0;
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EARG;
        u = d;
        u.ref_group = 7;
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EARG;
        u.ref_group = -1;
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EARG;
        u = d;
        u.text_scale = 17;
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EARG;
        u = d;
        u.values = w;
        w[3] = -1.0;
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EVALUE;
        w[3] = strtod("inf", NULL);
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EVALUE;
        u = d;
        u.ref_group = 6; /* auto: missing -> no reference */
        u.overhead = NULL;
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EVALUE;
        u.no_overhead = 1; /* fine without the panel */
        ok &= c.rgb == NULL;
        ok &= dpprof_plot_stacked(&u, &c) == 0;
        dpprof_canvas_free(&c);
        {
            double tb[7];
            memcpy(tb, t, sizeof tb);
            tb[0] = 0.0;
            u = d;
            u.overhead = tb;
            ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EVALUE;
            tb[0] = 100.0;
            tb[3] = -5.0;
            ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EVALUE;
            tb[3] = NAN_V; /* no ratio for that group: fine */
            ok &= dpprof_plot_stacked(&u, &c) == 0;
            dpprof_canvas_free(&c);
        }
        u = d;
        u.y_max = -1;
        ok &= dpprof_plot_stacked(&u, &c) == DPPROF_PLOT_EVALUE;
        ok &= c.rgb == NULL;
        check(ok, "stacked: bad inputs give the documented codes");
    }
}

/* ---- scatter ------------------------------------------------------------------ */
/* memory-time trade-off: 7 algorithms x 3 batch sizes */
static void scatter_data(double *x, double *y, const char **lab, char names[21][32], unsigned char *rgb, int *mk) {
    static const double t32[7] = {210, 620, 455, 300, 262, 241, 249}, m32[7] = {15.9, 32.9, 28.1, 18.6, 16.2, 16.4, 16.3};
    static const int bs[3] = {8, 16, 32};
    int a, b;
    for (b = 0; b < 3; b++)
        for (a = 0; a < 7; a++) {
            int i = b * 7 + a;
            double f = (double)bs[b] / 32.0;
            x[i] = t32[a] * (0.3 + 0.7 * f);
            y[i] = 5.0 + (m32[a] - 5.0) * (0.25 + 0.75 * f);
            snprintf(names[i], 32, "%s b%d", k_algos[a], bs[b]);
            lab[i] = names[i];
            memcpy(rgb + 3 * i, dpprof_plot_algo_colour(a), 3);
            mk[i] = b == 0 ? DPPROF_PLOT_MARKER_TRIANGLE_DOWN : (b == 1 ? DPPROF_PLOT_MARKER_SQUARE : DPPROF_PLOT_MARKER_CIRCLE);
        }
}

/* scatter labels: each inside the data area, over no marker (no point or
 * rim colour inside its box), and (layout_ok) over no other label */
static int scatter_labels_ok(const dpprof_canvas *c, const unsigned char *rgb, int n, int *placed) {
    int i, k, ok = 1;
    *placed = 0;
    for (i = 0; i < g_rec.n; i++) {
        const dpprof__pl_rec_box *b = &g_rec.b[i];
        if (b->kind != DPPROF__PL_K_DATA) continue;
        (*placed)++;
        for (k = 0; k < n; k++)
            if (count_colour(c, b->x, b->y, b->x + b->w, b->y + b->h, rgb + 3 * k)) {
                printf("  label '%s' covers point colour %d\n", b->s, k);
                ok = 0;
            }
        if (count_colour(c, b->x, b->y, b->x + b->w, b->y + b->h, dpprof__pl_c_axis)) {
            printf("  label '%s' covers a marker rim\n", b->s);
            ok = 0;
        }
    }
    return ok;
}

static void test_scatter(void) {
    double x[21], y[21];
    const char *lab[21];
    static char names[21][32];
    unsigned char rgb[63], lrgb[21];
    int mk[21], lmk[7], i, ok, placed = 0;
    static const char *const lnames[7] = {"vanilla", "persample", "ghost", "ghost_bk", "flash", "flash_bk", "auto"};
    dpprof_scatter_desc d, u;
    dpprof_canvas c;
    scatter_data(x, y, lab, names, rgb, mk);
    for (i = 0; i < 7; i++) {
        memcpy(lrgb + 3 * i, dpprof_plot_algo_colour(i), 3);
        lmk[i] = DPPROF_PLOT_MARKER_CIRCLE;
    }
    memset(&d, 0, sizeof d);
    d.title = "Memory-time trade-off (batch 8, 16, 32)";
    d.xlabel = "time per step (ms)";
    d.ylabel = "peak memory (GiB)";
    d.n_points = 21;
    d.x = x;
    d.y = y;
    d.labels = lab;
    d.point_rgb = rgb;
    d.point_marker = mk;
    d.n_legend = 7;
    d.legend_names = lnames;
    d.legend_rgb = lrgb;
    d.legend_marker = lmk;
    RENDER_CHECKS(dpprof_plot_scatter, d, "scatter", "build/tests/plot-scatter.png");
    u = d;
    u.width = 1200;
    u.height = 800;
    u.text_scale = 3;
    u.title = "Memory-time trade-off";
    RENDER_CHECKS(dpprof_plot_scatter, u, "scatter 1200x800 ts3", "build/tests/plot-scatter_ts3.png");
    u.text_scale = 2;
    RENDER_CHECKS(dpprof_plot_scatter, u, "scatter 1200x800 ts2", "build/tests/plot-scatter_ts2.png");
    u = d;
    u.log_x = u.log_y = 1;
    u.title = "Memory-time trade-off (log-log)";
    RENDER_CHECKS(dpprof_plot_scatter, u, "scatter log-log", "build/tests/plot-scatter_log.png");

    /* labels never overlap a point or each other; crowded: 60 points in a
   * cluster, most labels dropped, none overlapping */
    {
        const char *what[3] = {"scatter default", "scatter ts3", "scatter crowded"};
        int pass;
        double cx[60], cy[60];
        const char *cl[60];
        unsigned char crgb[180];
        for (i = 0; i < 60; i++) {
            unsigned s = 1234u + (unsigned)i * 7u;
            cx[i] = 100 + (lcg(&s) % 1000) / 10.0;
            cy[i] = 50 + (lcg(&s) % 1000) / 25.0;
            cl[i] = names[i % 21];
            memcpy(crgb + 3 * i, dpprof_plot_algo_colour(i % 7), 3);
        }
        for (pass = 0; pass < 3; pass++) {
            u = d;
            if (pass == 1) u.width = 1200, u.height = 800, u.text_scale = 3, u.title = "t";
            if (pass == 2) {
                u.title = "scatter label stress: 60 points";
                u.n_points = 60;
                u.x = cx;
                u.y = cy;
                u.labels = cl;
                u.point_rgb = crgb;
                u.point_marker = NULL;
            }
            memset(&c, 0, sizeof c);
            rec_begin();
            ok = dpprof_plot_scatter(&u, &c) == 0;
            rec_end();
            ok = ok && layout_ok(&g_rec, &c, what[pass], 0) &&
                 scatter_labels_ok(&c, u.point_rgb, pass == 2 ? 7 : 21, &placed);
            printf("  %s: %d of %d labels placed\n", what[pass], placed, u.n_points);
            check(ok && placed >= (pass == 0 ? 12 : 5), "scatter: labels placed without covering points or labels");
            if (pass == 2) save("build/tests/plot-test_scatter_crowded.png", &c);
            dpprof_canvas_free(&c);
        }
    }
    /* known pixels: explicit ranges make the marker centres exact */
    {
        double kx[2] = {25.0, 75.0}, ky[2] = {25.0, 75.0};
        static const unsigned char kr[6] = {200, 20, 20, 20, 20, 200};
        memset(&u, 0, sizeof u);
        memset(&c, 0, sizeof c);
        u.n_points = 2;
        u.x = kx;
        u.y = ky;
        u.point_rgb = kr;
        u.x_min = 0;
        u.x_max = 100;
        u.y_min = 0;
        u.y_max = 100;
        rec_begin();
        ok = dpprof_plot_scatter(&u, &c) == 0;
        rec_end();
        if (ok && g_rec.na == 1) {
            int x0 = g_rec.area[0][0], y0 = g_rec.area[0][1], x1 = g_rec.area[0][2], y1 = g_rec.area[0][3];
            int ax = x0 + (x1 - x0) / 4, ay = y1 - (y1 - y0) / 4, bx = x0 + (x1 - x0) * 3 / 4, by = y1 - (y1 - y0) * 3 / 4;
            check(px_is(&c, ax, ay, kr) && px_is(&c, bx, by, kr + 3) && px_is(&c, ax + 3, ay + 3, kr),
                  "scatter: marker centres have their point colour");
        } else {
            check(0, "scatter: known pixels (render failed)");
        }
        dpprof_canvas_free(&c);
    }
    /* bad inputs */
    {
        double bx[3] = {1, 2, 3}, by[3] = {1, 0, 3};
        int bm[3] = {0, 9, 0};
        memset(&c, 0, sizeof c);
        memset(&u, 0, sizeof u);
        u.n_points = 3;
        u.x = bx;
        u.y = by;
        ok = dpprof_plot_scatter(NULL, &c) == DPPROF_PLOT_EARG;
        d = u;
        d.y = NULL;
        ok &= dpprof_plot_scatter(&d, &c) == DPPROF_PLOT_EARG;
        d = u;
        d.n_points = 0;
        ok &= dpprof_plot_scatter(&d, &c) == DPPROF_PLOT_EARG;
        d = u;
        d.point_marker = bm;
        ok &= dpprof_plot_scatter(&d, &c) == DPPROF_PLOT_EARG;
        d = u;
        d.n_legend = 2;
        ok &= dpprof_plot_scatter(&d, &c) == DPPROF_PLOT_EARG;
        d = u;
        d.log_y = 1; /* y has a 0 */
        ok &= dpprof_plot_scatter(&d, &c) == DPPROF_PLOT_EVALUE;
        d = u;
        d.x_min = 3;
        d.x_max = 3;
        ok &= dpprof_plot_scatter(&d, &c) == DPPROF_PLOT_EVALUE;
        bx[1] = NAN_V;
        ok &= dpprof_plot_scatter(&u, &c) == DPPROF_PLOT_EVALUE;
        bx[1] = 2;
        d = u;
        d.text_scale = -2;
        ok &= dpprof_plot_scatter(&d, &c) == DPPROF_PLOT_EARG;
        ok &= c.rgb == NULL;
        /* one point, all equal: renders */
        d = u;
        d.n_points = 1;
        ok &= dpprof_plot_scatter(&d, &c) == 0;
        dpprof_canvas_free(&c);
        check(ok, "scatter: bad inputs give the documented codes; a single point renders");
    }
}

/* ---- lines ----------------------------------------------------------------------- */
/* peak memory over sequence length per algorithm; > 80 GiB did not fit */
static void lines_data(double *x, double *y, unsigned char *oom) {
    static const double per_tok[6] = {0.0009, 0.0031, 0.0016, 0.0012, 0.00125, 0.00097};
    static const double quad[6] = {0.0, 0.0, 9e-8, 2e-8, 0.0, 0.0};
    int k, i;
    for (i = 0; i < 8; i++) x[i] = 512 << i;
    for (k = 0; k < 6; k++)
        for (i = 0; i < 8; i++) {
            double v = 16.0 + (k == 1 ? 2.5 : 0.0) + per_tok[k] * x[i] + quad[k] * x[i] * x[i];
            y[k * 8 + i] = v;
            oom[k * 8 + i] = v > 80.0;
        }
    y[4 * 8 + 3] = NAN_V; /* flash at 4096: not measured, the line breaks */
}

static void test_lines(void) {
    double x[8], y[48];
    unsigned char oom[48], rgb[18];
    dpprof_lines_desc d, u;
    dpprof_canvas c;
    int i, ok;
    lines_data(x, y, oom);
    for (i = 0; i < 6; i++) memcpy(rgb + 3 * i, dpprof_plot_algo_colour(i), 3);
    memset(&d, 0, sizeof d);
    d.title = "Peak memory vs sequence length (Llama-3.2-1B, batch 1)";
    d.xlabel = "sequence length (tokens)";
    d.ylabel = "peak memory (GiB)";
    d.n_points = 8;
    d.x = x;
    d.n_series = 6;
    d.y = y;
    d.oom = oom;
    d.series_names = k_algos;
    d.series_rgb = rgb;
    d.log_x = d.log_y = 1;
    d.x_ticks_at_data = 1;
    RENDER_CHECKS(dpprof_plot_lines, d, "lines", "build/tests/plot-lines.png");
    u = d;
    u.width = 1200;
    u.height = 800;
    u.text_scale = 3;
    u.title = "Memory scaling";
    RENDER_CHECKS(dpprof_plot_lines, u, "lines 1200x800 ts3", "build/tests/plot-lines_ts3.png");
    u.text_scale = 2;
    RENDER_CHECKS(dpprof_plot_lines, u, "lines 1200x800 ts2", "build/tests/plot-lines_ts2.png");
    u = d;
    u.x_ticks_at_data = 0;
    u.title = "Peak memory vs sequence length (decade ticks)";
    rec_begin();
    memset(&c, 0, sizeof c);
    ok = dpprof_plot_lines(&u, &c) == 0;
    rec_end();
    check(ok && rec_has(&g_rec, "1000") && rec_has(&g_rec, "10000") && rec_has(&g_rec, "100"),
          "lines: log-log axes labelled at decades (1000, 10000 on x, 100 on y)");
    if (ok) save("build/tests/plot-lines_decades.png", &c);
    dpprof_canvas_free(&c);
    u = d;
    u.log_x = u.log_y = 0;
    u.x_ticks_at_data = 0;
    u.oom = NULL;
    u.title = "Peak memory vs sequence length (linear)";
    RENDER_CHECKS(dpprof_plot_lines, u, "lines linear", "build/tests/plot-lines_linear.png");

    /* known pixels on linear axes with explicit ranges: marker centres, a
   * NaN gap without line, the oom cross at the top of the frame */
    {
        double kx[4] = {10, 20, 30, 40}, ky[8] = {10, 20, 30, 40, 50, NAN_V, 50, 0};
        unsigned char ko[8] = {0, 0, 0, 0, 0, 0, 0, 1};
        static const unsigned char kr[6] = {200, 30, 30, 30, 30, 200};
        static const char *const kn[2] = {"rising", "gap"};
        memset(&u, 0, sizeof u);
        memset(&c, 0, sizeof c);
        u.n_points = 4;
        u.x = kx;
        u.n_series = 2;
        u.y = ky;
        u.oom = ko;
        u.series_rgb = kr;
        u.series_names = kn;
        u.x_min = 0;
        u.x_max = 50;
        u.y_min = 0;
        u.y_max = 100;
        rec_begin();
        ok = dpprof_plot_lines(&u, &c) == 0;
        rec_end();
        if (ok && g_rec.na == 1) {
            int x0 = g_rec.area[0][0], y0 = g_rec.area[0][1], x1 = g_rec.area[0][2], y1 = g_rec.area[0][3];
            int px10 = x0 + (x1 - x0) / 5, px20 = x0 + (x1 - x0) * 2 / 5, px25 = x0 + (x1 - x0) / 2, py50 = y0 + (y1 - y0) / 2;
            int py20 = y1 - (y1 - y0) / 5, px40 = x0 + (x1 - x0) * 4 / 5;
            int gap_col = 0, cross = 0, yy;
            check(px_is(&c, px10, y1 - (y1 - y0) / 10, kr) && px_is(&c, px20, py20, kr) && px_is(&c, px10, py50, kr + 3),
                  "lines: marker centres have their series colour");
            /* series 1 has no point at x = 20, so nothing of its colour between
       * its markers at 10 and 30 (apart from the marker edges) */
            for (yy = y0; yy < y1; yy++) gap_col += px_is(&c, px20, yy, kr + 3) + px_is(&c, px25, yy, kr + 3);
            cross = count_colour(&c, px40 - 20, y0, px40 + 20, y0 + (y1 - y0) / 4, kr + 3); /* inside the frame, at its top */
            check(gap_col == 0 && count_colour(&c, px10 + 20, py50 - 3, px10 + 30, py50 + 3, kr + 3) == 0,
                  "lines: a NaN point breaks the line");
            check(cross > 10 && rec_has(&g_rec, "oom") && count_colour(&c, px40 - 20, 0, px40 + 20, y0 - 1, kr + 3) == 0,
                  "lines: oom point drawn as a cross inside the frame at its top, in the legend");
            save("build/tests/plot-test_lines_known.png", &c);
        } else {
            check(0, "lines: known pixels (render failed)");
        }
        dpprof_canvas_free(&c);
        /* a budget: a dashed line inside the frame at its value */
        u.budget = 75;
        u.budget_label = "memory limit";
        memset(&c, 0, sizeof c);
        rec_begin();
        ok = dpprof_plot_lines(&u, &c) == 0;
        rec_end();
        if (ok && g_rec.na == 1) {
            static const unsigned char mark[3] = {70, 70, 70};
            int x0 = g_rec.area[0][0], y0 = g_rec.area[0][1], x1 = g_rec.area[0][2], y1 = g_rec.area[0][3];
            int yb = y1 - (y1 - y0) * 3 / 4;
            check(count_colour(&c, x0, yb - 3, x1, yb + 3, mark) > (x1 - x0) / 3 && rec_has(&g_rec, "memory limit"),
                  "lines: the budget is a dashed line inside the frame at its value, labelled");
        } else {
            check(0, "lines: budget (render failed)");
        }
        dpprof_canvas_free(&c);
    }
    /* bad inputs */
    {
        double bx[3] = {1, 2, 3}, by[3] = {1, NAN_V, 3};
        int bm[1] = {6};
        memset(&c, 0, sizeof c);
        memset(&u, 0, sizeof u);
        u.n_points = 3;
        u.x = bx;
        u.n_series = 1;
        u.y = by;
        ok = dpprof_plot_lines(NULL, &c) == DPPROF_PLOT_EARG && dpprof_plot_lines(&u, NULL) == DPPROF_PLOT_EARG;
        d = u;
        d.x = NULL;
        ok &= dpprof_plot_lines(&d, &c) == DPPROF_PLOT_EARG;
        d = u;
        d.n_series = 0;
        ok &= dpprof_plot_lines(&d, &c) == DPPROF_PLOT_EARG;
        d = u;
        d.series_marker = bm;
        ok &= dpprof_plot_lines(&d, &c) == DPPROF_PLOT_EARG;
        d = u;
        d.text_scale = 99;
        ok &= dpprof_plot_lines(&d, &c) == DPPROF_PLOT_EARG;
        bx[0] = NAN_V;
        ok &= dpprof_plot_lines(&u, &c) == DPPROF_PLOT_EVALUE;
        bx[0] = 0.0;
        d = u;
        d.log_x = 1;
        ok &= dpprof_plot_lines(&d, &c) == DPPROF_PLOT_EVALUE;
        bx[0] = 1.0;
        by[0] = strtod("inf", NULL);
        ok &= dpprof_plot_lines(&u, &c) == DPPROF_PLOT_EVALUE;
        by[0] = -1.0;
        d = u;
        d.log_y = 1;
        ok &= dpprof_plot_lines(&d, &c) == DPPROF_PLOT_EVALUE;
        d = u;
        d.y_min = 5;
        d.y_max = 1;
        ok &= dpprof_plot_lines(&d, &c) == DPPROF_PLOT_EVALUE;
        ok &= c.rgb == NULL;
        /* every y missing: renders an empty frame */
        by[0] = by[2] = NAN_V;
        ok &= dpprof_plot_lines(&u, &c) == 0;
        dpprof_canvas_free(&c);
        check(ok, "lines: bad inputs give the documented codes; all-missing renders");
    }
}

/* ---- lines: configurations that do not fit, drawn hollow at their exact value; curves that coincide ---- */
/* renders u into a fresh canvas c with the text recorded (g_rec); 1 if it rendered */
static int lines_rec(const dpprof_lines_desc *u, dpprof_canvas *c) {
    int ok;
    memset(c, 0, sizeof *c);
    rec_begin();
    ok = dpprof_plot_lines(u, c) == 0;
    rec_end();
    return ok;
}

static void test_lines_hollow(void) {
    static const double kx[4] = {10, 20, 30, 40};
    static const unsigned char kr[6] = {200, 30, 30, 30, 30, 200}, white[3] = {255, 255, 255};
    static const char *const kn[2] = {"first", "second"};
    double ky[8] = {10, 20, 30, 90, 60, 65, 70, 75};
    unsigned char kh[8] = {0, 0, 0, 1, 0, 0, 0, 0};
    dpprof_lines_desc u;
    dpprof_canvas c;
    int ok;
    memset(&u, 0, sizeof u);
    u.n_points = 4;
    u.x = kx;
    u.n_series = 2;
    u.y = ky;
    u.hollow = kh;
    u.hollow_label = "does not fit (exact peak)";
    u.series_rgb = kr;
    u.series_names = kn;
    u.x_min = 0, u.x_max = 50, u.y_min = 0, u.y_max = 100;
    u.budget = 75;
    u.budget_label = "memory limit";
    ok = lines_rec(&u, &c);
    if (ok && g_rec.na == 1) {
        /* the point at x = 40, y = 90 did not fit: a ring of its series' colour there, white inside, over the budget
           line; nothing of that colour in the band at the top where a cross would have gone */
        int x0 = g_rec.area[0][0], y0 = g_rec.area[0][1], x1 = g_rec.area[0][2], y1 = g_rec.area[0][3];
        int px40 = x0 + (x1 - x0) * 4 / 5, py90 = y1 - (y1 - y0) * 9 / 10, py75 = y1 - (y1 - y0) * 3 / 4;
        int ring = count_colour(&c, px40 - 12, py90 - 12, px40 + 13, py90 + 13, kr);
        check(ring > 20 && px_is(&c, px40, py90, white) && py90 < py75, "lines hollow: a ring of the series colour at its exact y (over the budget line), white inside");
        check(count_colour(&c, px40 - 20, y0, px40 + 20, py90 - 14, kr) == 0, "lines hollow: not in a band of crosses at the top");
        check(rec_has(&g_rec, "does not fit (exact peak)") && !rec_has(&g_rec, "oom"), "lines hollow: the legend says what hollow means (and names no cross)");
        check(layout_ok(&g_rec, &c, "lines hollow", 0), "lines hollow: no text overlaps, leaves the figure or is cut");
        save("build/tests/plot-lines_hollow.png", &c);
    } else {
        check(0, "lines hollow: known pixels (render failed)");
    }
    dpprof_canvas_free(&c);

    /* an automatic range takes the hollow points in: a point at 300 over others under 100 (linear: a tick at 300;
       log: one at 1000 for a point at 3000) */
    ky[3] = 300;
    u.y_min = u.y_max = 0;
    u.budget = 0;
    ok = lines_rec(&u, &c);
    check(ok && rec_has(&g_rec, "300"), "lines hollow: the linear y range reaches the hollow point (a tick at 300)");
    dpprof_canvas_free(&c);
    ky[3] = 3000;
    u.log_y = 1;
    ok = lines_rec(&u, &c);
    check(ok && rec_has(&g_rec, "1000"), "lines hollow: the log y range reaches the hollow point (a decade at 1000)");
    dpprof_canvas_free(&c);
    ky[3] = NAN_V; /* a hollow point without a value: nothing drawn, no legend entry */
    ok = lines_rec(&u, &c);
    check(ok && !rec_has(&g_rec, "does not fit (exact peak)"), "lines hollow: a hollow point without a value: no marker, no legend entry");
    dpprof_canvas_free(&c);

    { /* two series with the same values: the second dashed over the first, so both colours show along the line; their
         markers spread around the x; the legend says what the dashes mean. apart: no dashes, no entry */
        double cy[8] = {20, 40, 60, 80, 20, 40, 60, 80};
        int px15, py30, a, b, x0, y0, x1, y1, px20, py40;
        memset(&u, 0, sizeof u);
        u.n_points = 4;
        u.x = kx;
        u.n_series = 2;
        u.y = cy;
        u.series_rgb = kr;
        u.series_names = kn;
        u.x_min = 0, u.x_max = 50, u.y_min = 0, u.y_max = 100;
        ok = lines_rec(&u, &c);
        if (ok && g_rec.na == 1) {
            x0 = g_rec.area[0][0], y0 = g_rec.area[0][1], x1 = g_rec.area[0][2], y1 = g_rec.area[0][3];
            px15 = x0 + (x1 - x0) * 3 / 10, py30 = y1 - (y1 - y0) * 3 / 10;
            px20 = x0 + (x1 - x0) * 2 / 5, py40 = y1 - (y1 - y0) * 2 / 5;
            a = count_colour(&c, px15 - 40, py30 - 40, px15 + 40, py30 + 40, kr);
            b = count_colour(&c, px15 - 40, py30 - 40, px15 + 40, py30 + 40, kr + 3);
            printf("# coincident curves: %d px of the first's colour, %d of the second's along the segment\n", a, b);
            check(a > 20 && b > 20, "lines coincide: both colours show along the shared segment (the later dashed)");
            /* the markers at x = 20: the first's left of the x, the second's right of it */
            check(count_colour(&c, px20 - 30, py40 - 10, px20, py40 + 10, kr) > count_colour(&c, px20, py40 - 10, px20 + 30, py40 + 10, kr) &&
                      count_colour(&c, px20, py40 - 10, px20 + 30, py40 + 10, kr + 3) > count_colour(&c, px20 - 30, py40 - 10, px20, py40 + 10, kr + 3),
                  "lines coincide: the markers spread around the x, in series order");
            check(rec_has(&g_rec, "on another curve") && layout_ok(&g_rec, &c, "lines coincide", 0), "lines coincide: the legend says what the dashes mean");
            save("build/tests/plot-lines_coincide.png", &c);
        } else {
            check(0, "lines coincide: known pixels (render failed)");
        }
        dpprof_canvas_free(&c);
        cy[4] = 70, cy[5] = 80, cy[6] = 90, cy[7] = 95;
        ok = lines_rec(&u, &c);
        check(ok && !rec_has(&g_rec, "on another curve"), "lines apart: no dashes' entry in the legend");
        dpprof_canvas_free(&c);
    }
}

/* ---- bars: value labels asked for (value_decimals) on many narrow bars ------------------------------------ */
static void test_bars_value_labels(void) {
    /* the benchmark's shape: 7 algorithms over 3 shapes at paper size, throughput relative to non-private */
    static const double v[21] = {1.00, 1.00, 1.00, 0.76, 0.96, 0.92, 0.53, 0.36, 0.60, 0.67, 0.46, 0.84, 0.44, 0.51, 0.57, 0.52, 0.74, 0.79, 0.67, 0.97, NAN};
    static const char *const shapes[3] = {"trainer", "longctx", "lora"};
    unsigned char argb[21];
    dpprof_bars_desc b;
    int i, all = 1;
    for (i = 0; i < 7; i++) memcpy(argb + 3 * i, dpprof_plot_algo_colour(i), 3);
    memset(&b, 0, sizeof b);
    b.title = "Throughput relative to non-private, bf16";
    b.xlabel = "model and shape";
    b.ylabel = "relative throughput";
    b.n_groups = 3;
    b.group_names = shapes;
    b.n_series = 7;
    b.series_names = k_algos;
    b.series_rgb = argb;
    b.values = v;
    b.value_decimals = 2;
    b.width = 2400, b.height = 1600, b.text_scale = 5;
    RENDER_CHECKS(dpprof_plot_bars, b, "bars value labels 2400x1600 ts5", "build/tests/plot-bars_values.png");
    for (i = 0; i < 20; i++) { /* g_rec: the first render's text */
        char want[16];
        snprintf(want, sizeof want, "%.2f", v[i]);
        if (!rec_has(&g_rec, want)) {
            printf("  bars value labels: '%s' not drawn\n", want);
            all = 0;
        }
    }
    check(all && rec_has(&g_rec, "n/a"), "bars value labels: every bar carries its value with two decimals (a missing one n/a)");
}

/* ---- capacity: horizontal bars, whole numbers, algorithm colours -------------- */
static void test_capacity(void) {
    static const double cap[7] = {64, 8, 48, 56, 16384, 112, 120};
    unsigned char argb[21];
    dpprof_bars_desc b, u;
    dpprof_canvas c;
    int i, ok;
    for (i = 0; i < 7; i++) memcpy(argb + 3 * i, dpprof_plot_algo_colour(i), 3);
    memset(&b, 0, sizeof b);
    b.title = "Capacity: largest batch that fits in 80 GiB";
    b.xlabel = "algorithm";
    b.ylabel = "largest batch size";
    b.n_groups = 7;
    b.group_names = k_algos;
    b.n_series = 1;
    b.values = cap;
    b.group_rgb = argb;
    b.horizontal = 1;
    b.log_y = 1;
    RENDER_CHECKS(dpprof_plot_bars, b, "capacity (horizontal, log)", "build/tests/plot-capacity.png");
    u = b;
    u.width = 1200;
    u.height = 800;
    u.text_scale = 3;
    u.title = "Capacity (80 GiB)";
    RENDER_CHECKS(dpprof_plot_bars, u, "capacity 1200x800 ts3", "build/tests/plot-capacity_ts3.png");
    u = b;
    u.log_y = 0;
    u.values = cap; /* linear: 16384 dwarfs the rest but must print whole */
    rec_begin();
    memset(&c, 0, sizeof c);
    ok = dpprof_plot_bars(&u, &c) == 0;
    rec_end();
    check(ok && rec_has(&g_rec, "16384") && rec_has(&g_rec, "8") && rec_has(&g_rec, "112"),
          "bars: whole numbers print with all digits and no decimals (16384, 8, 112)");
    if (ok && g_rec.na == 1) {
        /* bar g is centred on row g: its colour at a quarter of the axis */
        int x0 = g_rec.area[0][0], y0 = g_rec.area[0][1], y1 = g_rec.area[0][3], g, col_ok = 1;
        for (g = 0; g < 7; g++)
            if (!px_is(&c, x0, y0 + (int)((y1 - y0) * (g + 0.5) / 7), argb + 3 * g)) col_ok = 0;
        check(col_ok, "bars: horizontal bars start at the axis in their group colour");
    }
    dpprof_canvas_free(&c);
    /* the vertical bars with group colours, and both bars at ts3 */
    u = b;
    u.horizontal = 0;
    u.log_y = 0;
    u.values = cap;
    {
        static const double cap2[7] = {64, 8, 48, 56, 128, 112, 120};
        u.values = cap2;
        u.title = "Capacity (vertical)";
        RENDER_CHECKS(dpprof_plot_bars, u, "capacity vertical", "build/tests/plot-capacity_vertical.png");
    }
    u = b;
    u.text_scale = -1;
    memset(&c, 0, sizeof c);
    check(dpprof_plot_bars(&u, &c) == DPPROF_PLOT_EARG && c.rgb == NULL, "bars: text_scale out of range is EARG");
}

/* the two existing figures at the paper setting: 1200x800, text scale 2/3 */
static void test_paper_scale(void) {
    static const char *const groups[5] = {"non-private SGD", "DP-SGD (per-sample, Opacus)", "DP-SGD ghost clipping",
                                          "DP-SGD book-keeping", "DP-SGD mixed ghost"};
    static const char *const series[3] = {"batch 32", "batch 64", "batch 128"};
    static const double vals[15] = {1612.5, 1788.0, 1694.3, 1650.9, 1660.2, 2105.0, 3420.8, 2250.6,
                                    2190.1, 2201.7, 3050.2, 6230.4, 3390.0, 3262.8, 3301.5};
    demo dm;
    dpprof_timeline_desc t;
    dpprof_bars_desc b;
    int ts;
    for (ts = 2; ts <= 3; ts++) {
        char png[64], lab[64];
        demo_make(&dm, 10);
        demo_desc(&dm, &t);
        t.title = "DP-SGD memory timeline";
        t.width = 1200;
        t.height = 800;
        t.text_scale = ts;
        snprintf(png, sizeof png, "build/tests/plot-timeline_ts%d.png", ts);
        snprintf(lab, sizeof lab, "timeline 1200x800 ts%d", ts);
        RENDER_CHECKS(dpprof_plot_timeline, t, lab, png);
        demo_free(&dm);
        memset(&b, 0, sizeof b);
        b.title = "Peak GPU memory by clipping method";
        b.xlabel = "method";
        b.n_groups = 5;
        b.group_names = groups;
        b.n_series = 3;
        b.series_names = series;
        b.values = vals;
        b.width = 1200;
        b.height = 800;
        b.text_scale = ts;
        snprintf(png, sizeof png, "build/tests/plot-bars_ts%d.png", ts);
        snprintf(lab, sizeof lab, "bars 1200x800 ts%d", ts);
        RENDER_CHECKS(dpprof_plot_bars, b, lab, png);
    }
    /* the default renders keep their layout: no text overlaps there either */
    demo_make(&dm, 10);
    demo_desc(&dm, &t);
    RENDER_CHECKS(dpprof_plot_timeline, t, "timeline default", "build/tests/plot-timeline.png");
    demo_free(&dm);
}

/* every new figure over odd sizes and scales: renders (asan/ubsan watch) */
static void test_new_odd(void) {
    static const int sizes[4][2] = {{320, 200}, {640, 360}, {1200, 800}, {2400, 1350}};
    double hv[42], sv[49], st[7], x[8], y[48], sx[21], sy[21];
    const char *hl[42], *sl[21];
    static char names[21][32];
    unsigned char oom[48], srgb[63];
    int smk[21], si, ts, ok = 1, rc;
    dpprof_canvas c;
    heat_data(hv, hl);
    stack_data(sv, st);
    lines_data(x, y, oom);
    scatter_data(sx, sy, sl, names, srgb, smk);
    memset(&c, 0, sizeof c);
    for (si = 0; si < 4; si++)
        for (ts = 0; ts <= 8; ts += (ts < 4 ? 1 : 4)) {
            dpprof_heatmap_desc h;
            dpprof_stacked_desc s;
            dpprof_lines_desc l;
            dpprof_scatter_desc p;
            dpprof_bars_desc b;
            heat_desc(&h, hv, hl);
            h.width = sizes[si][0], h.height = sizes[si][1], h.text_scale = ts;
            rc = dpprof_plot_heatmap(&h, &c);
            ok &= rc == 0;
            dpprof_canvas_free(&c);
            stack_desc(&s, sv, st, NULL);
            s.width = sizes[si][0], s.height = sizes[si][1], s.text_scale = ts;
            rc = dpprof_plot_stacked(&s, &c);
            ok &= rc == 0;
            dpprof_canvas_free(&c);
            memset(&l, 0, sizeof l);
            l.n_points = 8, l.x = x, l.n_series = 6, l.y = y, l.oom = oom, l.series_names = k_algos;
            l.log_x = l.log_y = si & 1, l.x_ticks_at_data = si >> 1;
            l.width = sizes[si][0], l.height = sizes[si][1], l.text_scale = ts;
            rc = dpprof_plot_lines(&l, &c);
            ok &= rc == 0;
            dpprof_canvas_free(&c);
            memset(&p, 0, sizeof p);
            p.n_points = 21, p.x = sx, p.y = sy, p.labels = sl, p.point_rgb = srgb, p.point_marker = smk;
            p.log_x = si & 1;
            p.width = sizes[si][0], p.height = sizes[si][1], p.text_scale = ts;
            rc = dpprof_plot_scatter(&p, &c);
            ok &= rc == 0;
            dpprof_canvas_free(&c);
            memset(&b, 0, sizeof b);
            b.n_groups = 7, b.group_names = k_algos, b.n_series = 2, b.values = y, b.horizontal = 1;
            b.width = sizes[si][0], b.height = sizes[si][1], b.text_scale = ts;
            rc = dpprof_plot_bars(&b, &c);
            ok &= rc == 0;
            dpprof_canvas_free(&c);
        }
    check(ok, "new figures: every size 320x200..2400x1350 at text scales 0..8 renders");
}

/* ---- the TrueType font (dpprof_plot_font, DejaVu Sans from fonts-dejavu-core) ----------------------------
 * every string's ink stays in its bitmap cell box (horizontal and rotated, left, centred and right placements,
 * a string of wide glyphs narrowed into it), anti-aliased (grey levels), centred and right-aligned where placed
 * so; a file that is no font is refused and the font stays; NULL restores the bitmap font bit for bit */
#define TEST_TTF "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
static void test_truetype(void) {
    static const unsigned char black[3] = {0, 0, 0};
    static const char *const strs[] = {"peak memory (GiB)", "gjpqy|()", "WWWWMMMM", "1.0", "x", "sigma \xcf\x83 = 1.2"};
    dpprof_canvas c, ref;
    unsigned long h_bitmap;
    int i, sc, ha, in_box = 1, aligned = 1, grey = 0, up_in = 1;
    FILE *fp = fopen(TEST_TTF, "rb");
    if (!fp) {
        printf("SKIP truetype: no %s (Debian's fonts-dejavu-core): the figures fall back to the bitmap font\n", TEST_TTF);
        return;
    }
    fclose(fp);
    dpprof_canvas_init(&ref, 400, 120);
    dpprof_canvas_text(&ref, 10, 10, "bitmap 123", 2, black);
    h_bitmap = fnv1a(ref.rgb, (size_t)ref.w * ref.h * 3);
    check(dpprof_plot_font("tests/test_plot.c") == DPPROF_PLOT_EARG && dpprof_plot_font("/nonexistent/font.ttf") == DPPROF_PLOT_EARG && !dpprof_plot_font_truetype(),
          "truetype: a file that is no font, or none, is refused and the bitmap font stays");
    check(dpprof_plot_font(TEST_TTF) == 0 && dpprof_plot_font_truetype(), "truetype: DejaVu Sans loads");
    dpprof_canvas_init(&c, 900, 200);
    for (i = 0; i < (int)(sizeof strs / sizeof strs[0]); i++)
        for (sc = 1; sc <= 3; sc++)
            for (ha = 0; ha < 3; ha++) {
                const unsigned char white[3] = {255, 255, 255};
                int x0, y0, x1, y1, w = dpprof_canvas_text_width(strs[i], sc), hh = dpprof_canvas_text_height(sc), ax = 450, bx;
                size_t e;
                dpprof_canvas_fill(&c, white);
                dpprof__pl_text_at(&c, ax, 40, strs[i], sc, ha, 0, black);
                bx = ha == 1 ? ax - w / 2 : ha == 2 ? ax - w
                                                    : ax;
                if (!ink_box(&c, &x0, &y0, &x1, &y1) || x0 < bx || x1 >= bx + w || y0 < 40 || y1 >= 40 + hh) in_box = 0;
                else if ((ha == 0 && x0 > bx + 2 * sc) || (ha == 2 && x1 < bx + w - 1 - 3 * sc) || (ha == 1 && abs((x0 + x1) / 2 - ax) > 2 * sc)) aligned = 0;
                for (e = 0; e < (size_t)c.w * c.h * 3; e += 3) grey |= c.rgb[e] > 0 && c.rgb[e] < 255;
                dpprof_canvas_fill(&c, white);
                dpprof_canvas_text_up(&c, 100, 10, strs[i], sc, black);
                if (ink_box(&c, &x0, &y0, &x1, &y1) && (x0 < 100 || x1 >= 100 + hh || y0 < 10 || y1 >= 10 + w)) up_in = 0;
            }
    check(in_box, "truetype: every string's ink stays in its cell box, wide glyphs narrowed into it (3 scales, left, centre, right)");
    check(aligned, "truetype: left, centred and right placements put the ink there (within 2 px a scale)");
    check(grey, "truetype: anti-aliased (grey levels at the edges)");
    check(up_in, "truetype: rotated text stays in its rotated box");
    save("build/tests/plot-truetype.png", &c);
    check(dpprof_plot_font(NULL) == 0 && !dpprof_plot_font_truetype(), "truetype: NULL restores the bitmap font");
    dpprof_canvas_fill(&ref, (const unsigned char[3]){255, 255, 255});
    dpprof_canvas_text(&ref, 10, 10, "bitmap 123", 2, black);
    check(fnv1a(ref.rgb, (size_t)ref.w * ref.h * 3) == h_bitmap, "truetype: after NULL the bitmap font draws bit for bit as before");
    dpprof_canvas_free(&c);
    dpprof_canvas_free(&ref);
}

int main(void) {
    test_font();
    test_text_metrics();
    test_numbers();
    test_timeline();
    test_known_pixels();
    test_legend_outside();
    test_mark_layout();
    test_panel_marks();
    test_span_labels();
    test_big();
    test_bad_inputs();
    test_odd_inputs();
    test_bars();
    font_sheet();
    stress_images();
    test_algo_colours();
    test_heatmap();
    test_stacked();
    test_scatter();
    test_lines();
    test_lines_hollow();
    test_bars_value_labels();
    test_capacity();
    test_paper_scale();
    test_new_odd();
    test_truetype();
    return g_fail ? 1 : 0;
}
