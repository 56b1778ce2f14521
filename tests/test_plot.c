/* test + demo for the plot fragment. prints "PASS name" / "FAIL name" per
 * check, exits 1 on any failure, writes demo pngs into out/ (relative to the
 * working directory; build.sh runs it from the fragment directory). */
#define DPPROF_IMPLEMENTATION
#include "dpprof.h"

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
  } cases[] = {{123.4, 4, "123.4"}, {1234.56, 4, "1235"},  {0.5, 4, "0.5"},        {120.0, 4, "120"},
               {0.0, 4, "0"},       {-2.25, 3, "-2.25"},   {99999.6, 4, "100000"}, {2.5e7, 3, "2.5e7"},
               {1e-5, 3, "1e-5"},   {9.9996e9, 4, "1e10"}, {1000.0, 3, "1000"}};
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
enum { NS = 9 };
static const char *const k_series[NS] = {"model_parameters", "optimizer_states", "gradients",
                                         "per_sample_grads", "activations",      "data",
                                         "workspace",        "dp_noise",         "unknown"};

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
  enum { N = 101 };
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

/* the legend sits right of the data: s0 fills the whole data area, s1 is
 * clipped away above y_max, so s1's colour can only come from its swatch */
static void test_legend_outside(void) {
  enum { N = 50 };
  double x[N], y[2 * N];
  static const unsigned char rgb[6] = {10, 120, 200, 220, 40, 160};
  static const char *const names[2] = {"fills_everything", "only_in_legend"};
  dpprof_timeline_desc t;
  dpprof_canvas c;
  int i, xx, yy, data_right = -1, sw_left = 1 << 30, sw_n = 0;
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
    if (px_is(&c, xx, c.h * 7 / 10, rgb)) data_right = xx;
  for (yy = 0; yy < c.h; yy++)
    for (xx = 0; xx < c.w; xx++)
      if (px_is(&c, xx, yy, rgb + 3)) {
        sw_n++;
        if (xx < sw_left) sw_left = xx;
      }
  check(data_right > c.w / 2 && sw_n > 50 && sw_left > data_right + 10,
        "legend: entirely right of the data area, series clipped above y_max not drawn");
  dpprof_canvas_free(&c);
}

/* phase-label placement on the demo marks: no two labels of a row overlap,
 * no label covers another mark's line, every distinct name is shown */
static void test_mark_layout(void) {
  demo dm;
  dpprof_timeline_desc t;
  dpprof_canvas c;
  dpprof__pl_frame f;
  int order[16], row[16], lx[16], lw[16], nv, i, j, rows, ok = 1, named[3] = {0, 0, 0}, placed = 0;
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
    if (px < lx[i] - 3 * f.ts - 1 || px > lx[i] + lw[i] + 3 * f.ts) ok = 0; /* label hugs its line */
    for (j = 0; j < nv; j++) {
      int pj = dpprof__pl_ax_pix(&f.xa, dm.mx[j]);
      if (j == i) continue;
      if (row[j] == row[i] && lx[i] < lx[j] + lw[j] && lx[j] < lx[i] + lw[i]) ok = 0;
      /* j's line runs through rows 0..row[j] (or none when unlabelled) */
      if (row[j] >= row[i] && pj >= lx[i] && pj < lx[i] + lw[i]) ok = 0;
    }
  }
  printf("  %d of %d phase labels placed in %d rows\n", placed, nv, rows);
  check(ok && named[0] && named[1] && named[2] && rows >= 1 && rows <= 3,
        "marks: labels never overlap each other or cross another mark's line");
  demo_free(&dm);
  dpprof_canvas_free(&c);
}

/* 100k events (8+1 series) in well under a second, and a single-event spike
 * (one sample among 100k) must still show at full height */
static void test_big(void) {
  enum { N = 100000 };
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
#define EXPECT(call, code, what)                                                                             \
  do {                                                                                                       \
    int r_ = (call);                                                                                         \
    if (r_ != (code)) {                                                                                      \
      printf("  %s: got %d, want %d\n", what, r_, code);                                                     \
      ok = 0;                                                                                                \
    }                                                                                                        \
    if (c.rgb) {                                                                                             \
      printf("  %s: canvas allocated on error\n", what);                                                     \
      ok = 0;                                                                                                \
      dpprof_canvas_free(&c);                                                                                \
    }                                                                                                        \
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
  check(ok, "bad inputs: bars returns the documented codes");
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

  {
    /* stress layout: many groups with long names, log axis, single series */
    static const char *const g2[12] = {"resnet18_cifar10_bs256", "resnet50_imagenet_bs64",
                                       "vit_b16_bs32",           "bert_base_sst2",
                                       "gpt2_small_wikitext",    "lstm_imdb",
                                       "wide_resnet_28_10",      "mlp_mnist",
                                       "t5_small_xsum",          "roberta_large_mnli",
                                       "efficientnet_b0",        "llama_7b_lora"};
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
  enum { N = 5000, S = 20, STEPS = 12 };
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

int main(void) {
  test_font();
  test_text_metrics();
  test_numbers();
  test_timeline();
  test_known_pixels();
  test_legend_outside();
  test_mark_layout();
  test_big();
  test_bad_inputs();
  test_odd_inputs();
  test_bars();
  font_sheet();
  stress_images();
  return g_fail ? 1 : 0;
}
