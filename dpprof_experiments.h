/* dpprof_experiments.h - experiments: the experiment files (.conf), the sweep that runs every configuration of
   one as its own `dpprof run` process (resumable, in parallel), the report that turns a sweep's results into
   figures, LaTeX tables, macros and a summary, and the memory timelines drawn from result files. every function is
   static: one translation unit includes it, after dpprof_cli.h (main.c, and the fuzzer of experiment files) */
#ifndef DPPROF_EXPERIMENTS_H
#define DPPROF_EXPERIMENTS_H
#include "dpprof_cli.h"

#include <strings.h>
#include <sys/select.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* ---- plot ---------------------------------------------------------------------------------------- */
static int json_fail(const char *file, const char *what) {
    cli_fail(0, "%s: %s", file, what);
    return EXIT_USAGE;
}

/* one result's live bytes by category, rebuilt from its event log */
typedef struct tl_data {
    dpprof_json_doc *doc;     /* the phase names point into it */
    size_t n, nmarks;         /* points (the empty start, then one per event); phase marks */
    int nser, measured;       /* categories that ever held memory; a measured clock (else x is the event) */
    double *x, *y, *mx, peak; /* y: nser series of n points; mx: where each phase begins; the largest total */
    const char **mnames;      /* each mark's phase, as the file names it */
    const char *names[DPPROF_CAT_COUNT];
    unsigned char rgb[DPPROF_CAT_COUNT * 3];
    char desc[256];  /* preset, algorithm, backend, experiment */
    size_t desc_run; /* desc's length without the experiment */
} tl_data;

static void tl_free(tl_data *t) {
    free(t->x);
    free(t->y);
    free(t->mx);
    free(t->mnames);
    dpprof_json_free(t->doc);
    memset(t, 0, sizeof *t);
}

/* reads result file in into t: EXIT_OK, or EXIT_USAGE / EXIT_ERROR having said why (t freed) */
static int tl_load(const char *in, tl_data *t) {
    const dpprof_json *root, *tl, *jt, *jb, *jc, *jm, *jp;
    char err[512];
    size_t n, i, nm, k, np;
    int c, used[DPPROF_CAT_COUNT], code = EXIT_USAGE;
    double *y, live[DPPROF_CAT_COUNT];

    memset(t, 0, sizeof *t);
    if (in_check("result", in, IN_JSON_LIMIT, NULL, 0)) return EXIT_USAGE;
    if (dpprof_json_parse_file(in, (size_t)1 << 30, &t->doc) != 0) {
        cli_fail(0, "%s", dpprof_last_error());
        return EXIT_USAGE;
    }
    root = dpprof_json_root(t->doc);
    tl = dpprof_json_get(root, "timeline");
    jt = dpprof_json_get(tl, "t_ms");
    jb = dpprof_json_get(tl, "bytes");
    jc = dpprof_json_get(tl, "category");
    jm = dpprof_json_get(tl, "marks");
    jp = dpprof_json_get(tl, "phases");
    if (tl && dpprof_json_kind(tl) == DPPROF_JSON_NULL) { /* a result without its event log: say what is missing and how to get it */
        const char *exp = dpprof_json_string(dpprof_json_get(root, "experiment"));
        char where[160];
        if (exp && strcmp(exp, "run")) snprintf(where, sizeof where, "experiment %.100s's file", exp);
        else snprintf(where, sizeof where, "an experiment file");
        snprintf(err, sizeof err, "its \"timeline\" is null: the run kept no event log (--timeline none, as the experiment files' sweeps do); "
                                  "rerun that configuration with --timeline full, or draw it with a 'figure NAME = timeline config=LABELS' line of %s, which reruns it so",
                 where);
        code = json_fail(in, err);
        goto fail;
    }
    if (!tl || !jb || !jc || !jt || dpprof_json_kind(jb) != DPPROF_JSON_ARRAY || dpprof_json_kind(jc) != DPPROF_JSON_ARRAY || dpprof_json_kind(jt) != DPPROF_JSON_ARRAY) {
        code = json_fail(in, "no timeline (expected timeline.t_ms, timeline.bytes and timeline.category arrays: is this a dpprof result?)");
        goto fail;
    }
    n = dpprof_json_len(jb);
    if (n == 0 || dpprof_json_len(jc) != n || dpprof_json_len(jt) != n) {
        code = json_fail(in, "timeline arrays are empty or of different lengths");
        goto fail;
    }
    t->measured = dpprof_json_string(dpprof_json_get(tl, "clock")) && !strcmp(dpprof_json_string(dpprof_json_get(tl, "clock")), "measured");
    t->n = n + 1;
    t->x = (double *)malloc(sizeof(double) * (n + 1));
    t->y = y = (double *)malloc(sizeof(double) * (n + 1) * DPPROF_CAT_COUNT);
    if (!t->x || !y) {
        cli_fail(0, "out of memory");
        code = EXIT_ERROR;
        goto fail;
    }
    memset(live, 0, sizeof live);
    memset(used, 0, sizeof used);
    /* point 0 is the empty state before the first event */
    t->x[0] = 0;
    for (c = 0; c < DPPROF_CAT_COUNT; c++) y[c * (n + 1)] = 0;
    for (i = 0; i < n; i++) {
        long long b, cat;
        double tm, tot = 0;
        if (dpprof_json_int64(dpprof_json_at(jb, i), &b) || dpprof_json_int64(dpprof_json_at(jc, i), &cat) || cat < 0 || cat >= DPPROF_CAT_COUNT) {
            snprintf(err, sizeof err, "timeline event %zu: bytes must be an integer and category in [0, %d)", i, DPPROF_CAT_COUNT);
            code = json_fail(in, err);
            goto fail;
        }
        if (t->measured) {
            if (dpprof_json_number(dpprof_json_at(jt, i), &tm) || !(tm >= t->x[i])) {
                snprintf(err, sizeof err, "timeline event %zu: t_ms must be a number that does not decrease", i);
                code = json_fail(in, err);
                goto fail;
            }
        } else tm = (double)(i + 1);
        live[cat] += (double)b;
        if (live[cat] < -0.5) {
            snprintf(err, sizeof err, "timeline event %zu: frees more %s bytes than are live", i, dpprof_category_name((int)cat));
            code = json_fail(in, err);
            goto fail;
        }
        if (b > 0) used[cat] = 1;
        t->x[i + 1] = tm;
        for (c = 0; c < DPPROF_CAT_COUNT; c++) {
            y[c * (n + 1) + i + 1] = live[c] / 1048576.0;
            tot += live[c] / 1048576.0;
        }
        if (tot > t->peak) t->peak = tot;
    }
    /* series: the categories that ever held memory, in the fixed category order and colours */
    for (c = 0; c < DPPROF_CAT_COUNT; c++) {
        if (!used[c]) continue;
        t->names[t->nser] = dpprof_category_name(c);
        memcpy(t->rgb + 3 * t->nser, dpprof_plot_palette(c), 3);
        if (t->nser != c) memmove(y + (size_t)t->nser * (n + 1), y + (size_t)c * (n + 1), sizeof(double) * (n + 1));
        t->nser++;
    }
    /* phase marks: one per phase begin, named as the file's list names its phases (a file of another version
       may number them otherwise); without the list, this build's names */
    nm = jm ? dpprof_json_len(jm) : 0;
    np = jp && dpprof_json_kind(jp) == DPPROF_JSON_ARRAY ? dpprof_json_len(jp) : 0;
    t->mx = (double *)malloc(sizeof(double) * (nm + 1));
    t->mnames = (const char **)malloc(sizeof(char *) * (nm + 1));
    if (!t->mx || !t->mnames) {
        cli_fail(0, "out of memory");
        code = EXIT_ERROR;
        goto fail;
    }
    for (k = 0; k < nm; k++) {
        const dpprof_json *mk = dpprof_json_at(jm, k);
        long long ph, ev;
        double tm;
        const char *name;
        if (dpprof_json_int64(dpprof_json_get(mk, "phase"), &ph) || ph < 0 || dpprof_json_int64(dpprof_json_get(mk, "event"), &ev) || ev < 0) continue;
        name = np ? ((size_t)ph < np ? dpprof_json_string(dpprof_json_at(jp, (size_t)ph)) : NULL) : (ph < DPPROF_PHASE_COUNT ? dpprof_phase_name((int)ph) : NULL);
        if (!name) continue;
        if (t->measured) {
            if (dpprof_json_number(dpprof_json_get(mk, "t_ms"), &tm)) continue;
        } else tm = (double)ev + 0.5;
        t->mx[t->nmarks] = tm;
        t->mnames[t->nmarks] = name;
        t->nmarks++;
    }
    {
        const char *exp = dpprof_json_string(dpprof_json_get(root, "experiment"));
        const char *preset = dpprof_json_string(dpprof_json_path(root, "config.preset"));
        const char *algo = dpprof_json_string(dpprof_json_path(root, "config.algo"));
        const char *backend = dpprof_json_string(dpprof_json_path(root, "config.backend"));
        const char *fw = dpprof_json_string(dpprof_json_path(root, "config.framework"));
        const int other = fw && strcmp(fw, "dpprof") != 0; /* a framework's loop: named */
        int k2 = snprintf(t->desc, sizeof t->desc, "%.60s, %s%s%.40s, %.20s backend", preset ? preset : "?", other ? fw : "", other ? " " : "", algo ? algo : "?", backend ? backend : "?");
        t->desc_run = k2 > 0 ? (size_t)k2 : 0;
        snprintf(t->desc + t->desc_run, sizeof t->desc - t->desc_run, " (%.100s)", exp ? exp : "run");
    }
    return EXIT_OK;
fail:
    tl_free(t);
    return code;
}

/* a memory category as a legend names it */
static const char *rep_cat_title(int k) {
    switch (k) {
    case DPPROF_CAT_MODEL_PARAMETERS: return "weights";
    case DPPROF_CAT_OPTIMIZER_STATES: return "optimizer states";
    case DPPROF_CAT_GRADIENTS: return "gradients";
    case DPPROF_CAT_ACTIVATIONS: return "activations";
    case DPPROF_CAT_ACTIVATION_HOOKS: return "DP cache";
    case DPPROF_CAT_PER_SAMPLE_GRADIENTS: return "per-sample gradients";
    case DPPROF_CAT_NORM_SAMPLES: return "per-sample norms";
    case DPPROF_CAT_TEMP_MATRICES: return "Gram temporaries";
    case DPPROF_CAT_LORA: return "LoRA";
    default: return dpprof_category_name(k);
    }
}

/* a timeline's series name (a category's) as a legend names it */
static const char *tl_series_title(const char *name) {
    int k;
    for (k = 0; k < DPPROF_CAT_COUNT; k++)
        if (!strcmp(dpprof_category_name(k), name)) return rep_cat_title(k);
    return name;
}

/* one panel: t drawn into cv (allocated at w x h, or cv's own size), on the shared axes x_max and y_max where nonzero */
typedef struct tl_axes {
    double x_max, y_max; /* shared axes; 0: the panel's own */
    int label_rows;      /* 0: as many as the labels need; else exactly these */
    int no_legend;       /* the figure draws one legend for all panels */
    int *rows_used;      /* receives the label rows drawn, or NULL */
} tl_axes;

static int tl_render(const tl_data *t, const char *in, const char *title, int w, int h, int text_scale, const tl_axes *ax, dpprof_canvas *cv) {
    dpprof_timeline_desc d;
    const char *names[DPPROF_CAT_COUNT];
    int c;
    memset(&d, 0, sizeof d);
    for (c = 0; c < t->nser; c++) names[c] = tl_series_title(t->names[c]);
    d.title = title;
    d.xlabel = t->measured ? "time (ms)" : "allocation event (dry run: no time measured)";
    d.ylabel = "live memory (MiB)";
    d.n_points = (int)t->n;
    d.x = t->x;
    d.n_series = t->nser;
    d.y = t->y;
    d.series_names = names;
    d.series_rgb = t->rgb;
    d.n_marks = (int)t->nmarks;
    d.mark_x = t->mx;
    d.mark_names = t->mnames;
    d.width = w;
    d.height = h;
    d.text_scale = text_scale;
    if (ax) {
        d.x_max = ax->x_max;
        d.y_max = ax->y_max;
        d.label_rows = ax->label_rows;
        d.no_legend = ax->no_legend;
        d.label_rows_used = ax->rows_used;
    }
    if ((c = dpprof_plot_timeline(&d, cv)) != 0) {
        cli_fail(0, "%s: cannot render the timeline (code %d)", in, c);
        return EXIT_ERROR;
    }
    return EXIT_OK;
}

static int tl_write(const char *outpath, const dpprof_canvas *cv) {
    out_file af;
    if (out_open(&af, outpath, "--out")) return EXIT_USAGE;
    if (out_png(&af, cv) || out_commit(&af)) {
        out_abort(&af);
        return EXIT_ERROR;
    }
    return EXIT_OK;
}

/* the live-bytes timeline of a result file by category, phases marked */
static int plot_timeline(const char *in, const char *outpath, const char *title, int width, int height, int text_scale) {
    tl_data t;
    dpprof_canvas cv;
    char ttl[300];
    int code = tl_load(in, &t);
    if (code != EXIT_OK) return code;
    memset(&cv, 0, sizeof cv);
    if (title) snprintf(ttl, sizeof ttl, "%s", title);
    else snprintf(ttl, sizeof ttl, "memory timeline: %s", t.desc);
    code = tl_render(&t, in, ttl, width, height, text_scale, NULL, &cv);
    if (code == EXIT_OK) code = tl_write(outpath, &cv);
    dpprof_canvas_free(&cv);
    tl_free(&t);
    return code;
}

/* dpprof plot fit-check: peers.py fit-check's records (a JSON list), one group of bars each: the largest physical
   batch dpprof fit gives for dpprof's engine, for the framework's loop (--framework pytorch or opacus), and the
   largest PyTorch's tracker admits running that loop (fit's, where the tracker fits it and not one more; else no
   bar, "differs") */
#define FC_MAX 32
static int plot_fit_check(const char *in, const char *outpath, const char *title) {
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root;
    const char *names[FC_MAX], *miss[3 * FC_MAX];
    static const char *const series[3] = {"fit, dpprof's engine", "fit, the framework's loop", "that loop, on fake tensors"};
    char label[FC_MAX][96];
    double val[3 * FC_MAX];
    dpprof_bars_desc d;
    dpprof_canvas cv;
    size_t n, i;
    int code;
    if (dpprof_json_parse_file(in, (size_t)64 << 20, &doc) != DPPROF_OK) return cli_fail(EXIT_USAGE, "%s: %s", in, dpprof_last_error());
    root = dpprof_json_root(doc);
    n = dpprof_json_kind(root) == DPPROF_JSON_ARRAY ? dpprof_json_len(root) : 0;
    if (!n || n > FC_MAX) {
        dpprof_json_free(doc);
        return cli_fail(EXIT_USAGE, "%s: not a list of 1 to %d fit-check records (peers.py fit-check --out)", in, FC_MAX);
    }
    for (i = 0; i < n; i++) {
        const dpprof_json *r = dpprof_json_at(root, i);
        const char *lb = dpprof_json_string(dpprof_json_get(r, "label"));
        double eng = NAN, fit = NAN, holds = 0;
        const dpprof_json *h = dpprof_json_get(r, "holds");
        if (dpprof_json_number(dpprof_json_get(r, "engine_physical_batch"), &eng) != DPPROF_OK || dpprof_json_number(dpprof_json_get(r, "fit_physical_batch"), &fit) != DPPROF_OK || !lb) {
            dpprof_json_free(doc);
            return cli_fail(EXIT_USAGE, "%s: record %zu lacks label, engine_physical_batch or fit_physical_batch", in, i + 1);
        }
        holds = dpprof_json_kind(h) == DPPROF_JSON_TRUE;
        snprintf(label[i], sizeof label[i], "%s", lb);
        names[i] = label[i];
        val[i] = eng;
        val[n + i] = fit;
        val[2 * n + i] = holds ? fit : NAN;
        miss[i] = miss[n + i] = "none fits";
        miss[2 * n + i] = holds ? "none fits" : "differs";
        if (eng == 0) val[i] = NAN;
        if (fit == 0) val[n + i] = NAN;
        if (holds && fit == 0) val[2 * n + i] = NAN;
    }
    memset(&d, 0, sizeof d);
    d.title = title ? title : "largest physical batch that fits: dpprof fit and the loop on fake tensors";
    d.ylabel = "physical batch (samples)";
    d.horizontal = 1; /* the configurations' names read on the left */
    d.width = 2400;
    d.height = 600 + 160 * (int)n;
    d.text_scale = 4;
    d.n_groups = (int)n;
    d.group_names = names;
    d.n_series = 3;
    d.series_names = series;
    d.values = val;
    d.missing_labels = miss;
    memset(&cv, 0, sizeof cv);
    code = dpprof_plot_bars(&d, &cv) == 0 ? tl_write(outpath, &cv) : cli_fail(EXIT_ERROR, "%s: cannot render the figure", in);
    dpprof_canvas_free(&cv);
    dpprof_json_free(doc);
    return code;
}

/* the smallest 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 x 10^k at or above v (v > 0): a top the axis labels */
static double tl_nice(double v) {
    static const double m[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    double p = pow(10.0, floor(log10(v)));
    size_t i;
    for (i = 0; i < sizeof m / sizeof m[0]; i++)
        if (m[i] * p >= v * (1 - 1e-12)) return m[i] * p;
    return 10 * p;
}

#define TL_MAX_PANELS 8
/* several results' timelines, one panel each, stacked, on one x axis and one y axis (a panel whose run ended
   sooner ends sooner) with as many rows of phase labels each (one data height), titled by its label; the
   figure titled title, one legend of every category any panel holds under it. every result must keep the same
   clock: measured times and dry event counts do not share an axis */
static int plot_timelines(const char *const *in, const char *const *label, int n, const char *outpath, const char *title, int width, int panel_h, int text_scale) {
    static const unsigned char ink[3] = {25, 25, 25};
    tl_data t[TL_MAX_PANELS];
    dpprof_canvas cv, pc;
    tl_axes ax;
    int i, k, code = EXIT_OK, loaded = 0, used[DPPROF_CAT_COUNT], rows, maxrows, ts = text_scale;
    int line_h = (DPPROF_PLOT_FONT_H + 6) * ts, top, lx, ly, sw = 10 * ts, gap = 3 * DPPROF_PLOT_FONT_W * ts;
    char ttl[300];
    memset(&cv, 0, sizeof cv);
    memset(&ax, 0, sizeof ax);
    memset(used, 0, sizeof used);
    if (n < 1 || n > TL_MAX_PANELS) {
        cli_fail(0, "%d timelines: from 1 to %d fit one figure", n, TL_MAX_PANELS);
        return EXIT_USAGE;
    }
    for (i = 0; i < n && code == EXIT_OK; i++) {
        code = tl_load(in[i], &t[i]);
        if (code != EXIT_OK) break;
        loaded++;
        if (t[i].measured != t[0].measured) {
            cli_fail(0, "%s is %s and %s is %s: their timelines cannot share an x axis", in[0], t[0].measured ? "timed" : "a dry run (no clock)", in[i], t[i].measured ? "timed" : "a dry run (no clock)");
            code = EXIT_USAGE;
            break;
        }
        if (t[i].x[t[i].n - 1] > ax.x_max) ax.x_max = t[i].x[t[i].n - 1];
        if (t[i].peak > ax.y_max) ax.y_max = t[i].peak;
        for (k = 0; k < t[i].nser; k++) {
            int c;
            for (c = 0; c < DPPROF_CAT_COUNT; c++)
                if (!strcmp(dpprof_category_name(c), t[i].names[k])) used[c] = 1;
        }
    }
    if (code != EXIT_OK) goto done;
    /* room above the highest peak for its label, and a labelled top */
    ax.y_max = tl_nice(ax.y_max > 0 ? ax.y_max * 1.15 : 1);
    if (!(ax.x_max > 0)) ax.x_max = 1;
    ax.no_legend = 1;
    /* pass 1: the label rows each panel needs; every panel gets the most */
    ax.rows_used = &rows;
    for (i = 0, maxrows = 0; i < n && code == EXIT_OK; i++) {
        memset(&pc, 0, sizeof pc);
        rows = 0;
        snprintf(ttl, sizeof ttl, "%s: %.*s", label[i], (int)t[i].desc_run, t[i].desc); /* as pass 2: a title may take two lines */
        code = tl_render(&t[i], in[i], ttl, width, panel_h, ts, &ax, &pc);
        dpprof_canvas_free(&pc);
        if (rows > maxrows) maxrows = rows;
    }
    ax.rows_used = NULL;
    ax.label_rows = maxrows;
    if (code != EXIT_OK) goto done;
    /* the title, then the legend: swatch and name per category, left to right, wrapping */
    top = line_h + 4 * ts;
    lx = 8 * ts;
    ly = top;
    for (k = 0; k < DPPROF_CAT_COUNT; k++) {
        int w = sw + 2 * ts + dpprof_canvas_text_width(rep_cat_title(k), ts);
        if (!used[k]) continue;
        if (lx + w > width - 8 * ts && lx > 8 * ts) lx = 8 * ts, ly += line_h;
        lx += w + gap;
    }
    top = ly + line_h + 4 * ts;
    if (dpprof_canvas_init(&cv, width, top + n * panel_h) != 0) {
        code = EXIT_ERROR;
        goto done;
    }
    {
        int tw = dpprof_canvas_text_width(title, ts);
        dpprof_canvas_text(&cv, tw < width ? (width - tw) / 2 : 4, 4 * ts, title, ts, ink);
    }
    lx = 8 * ts;
    ly = line_h + 4 * ts;
    for (k = 0; k < DPPROF_CAT_COUNT; k++) {
        const char *nm = rep_cat_title(k);
        int w = sw + 2 * ts + dpprof_canvas_text_width(nm, ts);
        if (!used[k]) continue;
        if (lx + w > width - 8 * ts && lx > 8 * ts) lx = 8 * ts, ly += line_h;
        dpprof_canvas_rect(&cv, lx, ly + 2 * ts, sw, sw, dpprof_plot_palette(k));
        dpprof_canvas_text(&cv, lx + sw + 2 * ts, ly, nm, ts, ink);
        lx += w + gap;
    }
    /* pass 2: the panels, one data height */
    for (i = 0; i < n && code == EXIT_OK; i++) {
        memset(&pc, 0, sizeof pc);
        snprintf(ttl, sizeof ttl, "%s: %.*s", label[i], (int)t[i].desc_run, t[i].desc);
        code = tl_render(&t[i], in[i], ttl, width, panel_h, ts, &ax, &pc);
        if (code != EXIT_OK) break;
        for (k = 0; k < panel_h; k++) memcpy(cv.rgb + ((size_t)(top + i * panel_h + k) * (size_t)width) * 3, pc.rgb + (size_t)k * (size_t)width * 3, (size_t)width * 3);
        dpprof_canvas_free(&pc);
    }
    if (code == EXIT_OK) code = tl_write(outpath, &cv);
done:
    dpprof_canvas_free(&cv);
    for (i = 0; i < loaded; i++) tl_free(&t[i]);
    return code;
}

/* ---- sweep: an experiment file -> one `dpprof run` process per configuration ------------------------
   paste after cmd_plot (it uses prog, usage_error, parse_int, parse_dbl, out_open/out_commit).
   main():  if (!strcmp(argv[1], "sweep")) return cmd_sweep(argc, argv);
   (the whole argv: argv[0] is the fallback path of the binary when /proc/self/exe cannot be run).
   */

#define SWEEP_MAX_CONFIGS 100000LL
#define SWEEP_MAX_ID 240 /* an id names files: ID.json.tmp within NAME_MAX (255) */

typedef struct sweep_opts {
    const char *outdir, *only, *backend;
    int jobs, dry, repeats;
    double timeout;
} sweep_opts;

static const cli_opt sweep_opt[] = {
    {NULL, NULL, CLI_HEAD, .help = "options:"},
    {"--out-dir", "DIR", CLI_TEXT, .field = offsetof(sweep_opts, outdir), .help = "results directory (created, with its parents, if missing)"},
    {"--jobs", "J", CLI_INT, .field = offsetof(sweep_opts, jobs), .lo = 1, .hi = 1024, .help = "run up to J configurations at once (default 1)"},
    {"--dry-run", NULL, CLI_FLAG, .field = offsetof(sweep_opts, dry), .help = "print the command lines and exit; nothing is written"},
    {"--only", "TEXT", CLI_TEXT, .field = offsetof(sweep_opts, only), .help = "only the configurations whose id contains TEXT"},
    {"--timeout", "SECONDS", CLI_REAL, .field = offsetof(sweep_opts, timeout), .lo = 0, .hi = 1e9, .help = "kill a configuration that runs longer (default 0: no limit)"},
    {"--backend", "NAME", CLI_TEXT, .field = offsetof(sweep_opts, backend), .help = "run every configuration on dry, cpu, cuda or auto, whatever the file's\noptions say (it comes after them: the last --backend wins)"},
    {"--repeats", "K", CLI_INT, .field = offsetof(sweep_opts, repeats), .lo = 1, .hi = 32, .help = "run every configuration K times (default 1), interleaved: every configuration\nonce, then again; the k-th run of ID writes DIR/ID.repK.json (the first ID.json).\nthe report takes the median step time of a configuration's runs, and their range"},
    {"--help", NULL, CLI_HELP, .help = "this text"},
};

/* the limit of configurations, SWEEP_MAX_CONFIGS, is written out in the help */
static const cli_command sweep_cmd = {"sweep",
                                      "usage: dpprof sweep EXPERIMENT.conf --out-dir DIR [--jobs J] [--dry-run] [--only TEXT] [--timeout SECONDS]\n"
                                      "                    [--backend NAME] [--repeats K]",
                                      "Runs every configuration of an experiment file, each in its own process:\n"
                                      "  dpprof run <base> <axis options> [--backend NAME] --experiment NAME --out DIR/ID.json --quiet\n"
                                      "with the process's stdout and stderr in DIR/logs/ID.log, then writes DIR/summary.csv.\n",
                                      sweep_opt, CLI_N(sweep_opt), 1, "(one experiment file)",
                                      "experiment file: one 'KEY = VALUE' per line; '#' starts a comment (to the end of the line),\n"
                                      "blank lines are ignored:\n"
                                      "  name = single_gpu                        required; a-z 0-9 _ - ; starts every id\n"
                                      "  description = any text                   optional\n"
                                      "  oom = any text                           optional: what an oom result is in this study (the\n"
                                      "                                           search's expected misses, say), said beside each one\n"
                                      "  base = --preset tiny --backend dry       required (may be empty): options of every run\n"
                                      "  cuda = --dram-ops --op-times --warmup 2  optional: options added when the sweep runs on the\n"
                                      "                                           cuda backend (--backend cuda): counters, op times\n"
                                      "  axis seq = 64 | 128 | 256                an axis: values separated by '|'\n"
                                      "  axis mode = full: | lora16: --lora-rank 16\n"
                                      "  axis phys = --physical-batch 1 | --physical-batch 2\n"
                                      "an axis value is one of\n"
                                      "  LABEL: OPTIONS      OPTIONS (may be empty) labelled LABEL (a-z 0-9 . _ -)\n"
                                      "  --option ...        options; the label is made from them: '--physical-batch 2' -> physical-batch-2\n"
                                      "  v                   '--NAME v' on axis NAME ('_' in NAME becomes '-'); the label is v\n"
                                      "Options are split on whitespace, with no quoting: quotes and backslashes are refused, and so\n"
                                      "are --out, --experiment, --quiet and --help (the sweep sets them). Axis names are a-z 0-9 _ -;\n"
                                      "labels must differ within an axis. The configurations are the cartesian product of the axes in\n"
                                      "file order (the first axis varies slowest), at most 100000; each one's id is\n"
                                      "NAME-LABEL1-LABEL2-... (no axes: one configuration, id NAME).\n\n"
                                      "results: DIR/ID.json is the run's result JSON. When a run leaves none (it crashed, timed out,\n"
                                      "or exited with an error before writing), the sweep writes {\"experiment\", \"id\", \"status\":\n"
                                      "\"error\" | \"oom\" (exit 3) | \"crashed\" (a signal) | \"timeout\", \"error\": the exit status or\n"
                                      "signal and the last line of the log, \"config\": {\"argv\"}, \"log\"}.\n"
                                      "resume: a configuration whose DIR/ID.json parses and has a \"status\" string is skipped; after an\n"
                                      "interruption rerun the same command. Delete DIR/ID.json to run a configuration again.\n"
                                      "DIR/summary.csv: one row per configuration of the file, in order: id, the label of each axis,\n"
                                      "status (not_run: no result yet), peak_memory_mb, avg_time_ms, the breakdown in MiB,\n"
                                      "tokens_per_s (empty when missing or null).\n\n"
                                      "exit codes: 0 every configuration ended, whatever its status; 1 the sweep could not write;\n"
                                      "2 bad experiment file or options (nothing written); 130 interrupted by SIGINT/SIGTERM (running\n"
                                      "configurations killed, finished results kept).\n"};

typedef struct sweep_value {
    char *label;
    char **opt; /* nopt options, NULL-terminated */
    int nopt;
} sweep_value;

typedef struct sweep_axis {
    char *name;
    sweep_value *val;
    int nval, line;
} sweep_axis;

typedef struct sweep_spec {
    const char *file;
    char *name, *description;
    char *oom;           /* what an oom result is in this study (oom = TEXT), said beside each one, or NULL */
    char **base, **cuda; /* cuda: the options added on the cuda backend (its counters, op times) */
    int nbase, name_line, desc_line, base_line, ncuda, cuda_line, oom_line;
    sweep_axis *axis;
    int naxis, capaxis;
    long long nconf;
    const char *backend; /* sweep --backend: appended to every configuration's options (the last one wins), or NULL */
    char **id;           /* nconf ids, in configuration order */
    void **mem;          /* every allocation but axis[], freed by sweep_spec_free */
    size_t nmem, capmem;
} sweep_spec;

static int sweep_oom(void) {
    cli_fail(0, "out of memory");
    return EXIT_OOM;
}

static void *sweep_keep(sweep_spec *sp, void *p) {
    if (!p) return NULL;
    if (sp->nmem == sp->capmem) {
        size_t cap = sp->capmem ? 2 * sp->capmem : 64;
        void **m = (void **)realloc(sp->mem, cap * sizeof *m);
        if (!m) {
            free(p);
            return NULL;
        }
        sp->mem = m;
        sp->capmem = cap;
    }
    sp->mem[sp->nmem++] = p;
    return p;
}

static void *sweep_calloc(sweep_spec *sp, size_t n, size_t size) { return sweep_keep(sp, calloc(n ? n : 1, size)); }
static char *sweep_strdup(sweep_spec *sp, const char *s) { return (char *)sweep_keep(sp, strdup(s)); }

static void sweep_spec_free(sweep_spec *sp) {
    size_t i;
    for (i = 0; i < sp->nmem; i++) free(sp->mem[i]);
    free(sp->mem);
    free(sp->axis);
    memset(sp, 0, sizeof *sp);
}

/* "dpprof: sweep: FILE:LINE: message" */
static int sweep_bad(const sweep_spec *sp, int line, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s: %s: %s:%d: ", prog, cli_cmd ? cli_cmd : "sweep", sp->file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_USAGE;
}

static int sweep_space(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

static char *sweep_trim(char *s) {
    char *e;
    while (sweep_space((unsigned char)*s)) s++;
    e = s + strlen(s);
    while (e > s && sweep_space((unsigned char)e[-1])) e--;
    *e = 0;
    return s;
}

/* non-empty, only a-z 0-9 and the characters of extra */
static int sweep_word(const char *s, const char *extra) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr(extra, *s))) return 0;
    return 1;
}

/* a label from free text: lower case, a-z 0-9 . _ kept, every other run of characters one '-' */
static char *sweep_slug(sweep_spec *sp, const char *v) {
    char *o = (char *)sweep_calloc(sp, strlen(v) + 1, 1);
    size_t k = 0;
    if (!o) return NULL;
    for (; *v; v++) {
        char c = *v;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_') o[k++] = c;
        else if (k && o[k - 1] != '-') o[k++] = '-';
    }
    while (k && o[k - 1] == '-') k--;
    o[k] = 0;
    return o;
}

/* options the sweep sets itself */
static const char *sweep_reserved(const char *tok) {
    if (!strcmp(tok, "--out") || !strcmp(tok, "--experiment") || !strcmp(tok, "--quiet"))
        return "is set by the sweep (--experiment NAME --out DIR/ID.json --quiet): remove it";
    if (!strcmp(tok, "--help") || !strcmp(tok, "-h")) return "would print help instead of running";
    if (!strcmp(tok, "--")) return "would end run's options (the sweep's own after it would be arguments): remove it";
    return NULL;
}

/* split options at whitespace (no quoting) into a NULL-terminated array */
static int sweep_split(sweep_spec *sp, int line, const char *what, const char *text, char ***out, int *n) {
    char *buf, *p, **arr;
    int cnt = 0, k = 0;
    if (strpbrk(text, "\"'`\\"))
        return sweep_bad(sp, line, "%s: quotes and backslashes are not supported (options are split on whitespace, with no quoting): '%.300s'", what, text);
    if (!(buf = sweep_strdup(sp, text))) return sweep_oom();
    for (p = buf; *p;) {
        while (*p && sweep_space((unsigned char)*p)) p++;
        if (!*p) break;
        cnt++;
        while (*p && !sweep_space((unsigned char)*p)) p++;
    }
    if (!(arr = (char **)sweep_calloc(sp, (size_t)cnt + 1, sizeof *arr))) return sweep_oom();
    for (p = buf; *p;) {
        while (*p && sweep_space((unsigned char)*p)) *p++ = 0;
        if (!*p) break;
        arr[k++] = p;
        while (*p && !sweep_space((unsigned char)*p)) p++;
    }
    if (cnt && strncmp(arr[0], "--", 2) != 0)
        return sweep_bad(sp, line, "%s: expected options starting with '--', got '%.300s'", what, text);
    for (k = 0; k < cnt; k++) {
        const char *why = sweep_reserved(arr[k]);
        if (why) return sweep_bad(sp, line, "%s: '%s' %s", what, arr[k], why);
    }
    *out = arr;
    *n = cnt;
    return EXIT_OK;
}

/* the summary's fixed columns: an axis may not take their names */
static const char *const sweep_csv_cols[] = {
    "peak_memory_mb", "avg_time_ms", "model_parameters_mb", "optimizer_states_mb", "gradients_mb", "activations_mb",
    "activation_hooks_mb", "per_sample_gradients_mb", "norm_samples_mb", "temp_matrices_mb", "lora_mb",
    "workspace_mb", "data_mb", "tokens_per_s"};
static const char *const sweep_csv_paths[] = {
    "peak_memory_mb", "avg_time_ms", "breakdown.model_parameters_mb", "breakdown.optimizer_states_mb",
    "breakdown.gradients_mb", "breakdown.activations_mb", "breakdown.activation_hooks_mb",
    "breakdown.per_sample_gradients_mb", "breakdown.norm_samples_mb", "breakdown.temp_matrices_mb",
    "breakdown.lora_mb", "breakdown.workspace_mb", "breakdown.data_mb", "throughput.tokens_per_s"};
#define SWEEP_NCOLS ((int)(sizeof sweep_csv_cols / sizeof sweep_csv_cols[0]))
/* then the measured traffic of the counters step (--dram on a GPU), summed over the phases, in MiB: empty when
   not measured. per-phase only: CUPTI's ranges are the phases, never single kernels */
static const char *const sweep_csv_traffic[] = {"dram_read", "dram_write", "l2_read", "l2_write"};

/* "axis NAME = v1 | v2 | ..." */
typedef struct sweep_label {
    const char *label;
    int idx;
} sweep_label;
static int sweep_cmp_label(const void *a, const void *b) {
    const sweep_label *x = (const sweep_label *)a, *y = (const sweep_label *)b;
    const int c = strcmp(x->label, y->label);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int sweep_parse_axis(sweep_spec *sp, int line, const char *aname, char *text) {
    sweep_axis *ax;
    char *p, *next, what[400];
    int i, j, rc;
    if (!*aname) return sweep_bad(sp, line, "axis without a name: write 'axis NAME = v1 | v2 | ...'");
    if (!sweep_word(aname, "_-")) return sweep_bad(sp, line, "axis name '%.200s': use only a-z 0-9 _ -", aname);
    if (!strcmp(aname, "id") || !strcmp(aname, "status"))
        return sweep_bad(sp, line, "axis name '%s' is taken by a summary.csv column: choose another", aname);
    for (i = 0; i < SWEEP_NCOLS + 4; i++) {
        char col[32];
        snprintf(col, sizeof col, i < SWEEP_NCOLS ? "%s" : "%s_mb", i < SWEEP_NCOLS ? sweep_csv_cols[i] : sweep_csv_traffic[i - SWEEP_NCOLS]);
        if (!strcmp(aname, col)) return sweep_bad(sp, line, "axis name '%s' is taken by a summary.csv column: choose another", aname);
    }
    for (i = 0; i < sp->naxis; i++)
        if (!strcmp(sp->axis[i].name, aname)) return sweep_bad(sp, line, "duplicate axis '%s' (first at line %d)", aname, sp->axis[i].line);
    if (!*text) return sweep_bad(sp, line, "axis '%s' is empty: give its values separated by '|'", aname);
    if (sp->naxis == sp->capaxis) {
        int cap = sp->capaxis ? 2 * sp->capaxis : 8;
        sweep_axis *a = (sweep_axis *)realloc(sp->axis, (size_t)cap * sizeof *a);
        if (!a) return sweep_oom();
        sp->axis = a;
        sp->capaxis = cap;
    }
    ax = &sp->axis[sp->naxis];
    memset(ax, 0, sizeof *ax);
    ax->line = line;
    if (!(ax->name = sweep_strdup(sp, aname))) return sweep_oom();
    for (ax->nval = 1, p = text; *p; p++) ax->nval += *p == '|';
    if (!(ax->val = (sweep_value *)sweep_calloc(sp, (size_t)ax->nval, sizeof *ax->val))) return sweep_oom();
    for (i = 0, p = text; i < ax->nval; i++, p = next) {
        sweep_value *v = &ax->val[i];
        char *colon, *sep = strchr(p, '|'), *s;
        next = sep ? sep + 1 : p + strlen(p);
        if (sep) *sep = 0;
        s = sweep_trim(p);
        snprintf(what, sizeof what, "axis '%s' value %d ('%.200s')", aname, i + 1, s);
        if (!*s) return sweep_bad(sp, line, "axis '%s': value %d is empty (check the '|' separators)", aname, i + 1);
        colon = strchr(s, ':');
        if (strncmp(s, "--", 2) != 0 && colon && colon > s && strcspn(s, " \t") > (size_t)(colon - s)) {
            /* LABEL: OPTIONS */
            *colon = 0;
            if (!sweep_word(s, "._-"))
                return sweep_bad(sp, line, "%s: label '%.200s': use only a-z 0-9 . _ -", what, s);
            if (!(v->label = sweep_strdup(sp, s))) return sweep_oom();
            if ((rc = sweep_split(sp, line, what, sweep_trim(colon + 1), &v->opt, &v->nopt)) != EXIT_OK) return rc;
        } else if (!strncmp(s, "--", 2)) {
            /* options: the label is made from them */
            if ((rc = sweep_split(sp, line, what, s, &v->opt, &v->nopt)) != EXIT_OK) return rc;
            if (!(v->label = sweep_slug(sp, s))) return sweep_oom();
            if (!*v->label) return sweep_bad(sp, line, "%s: cannot make a label from it: write 'LABEL: OPTIONS'", what);
        } else {
            /* a bare value: --NAME v */
            char *o;
            if (strpbrk(s, " \t\r\n\v\f")) /* sweep_space: what sweep_split splits at */
                return sweep_bad(sp, line, "%s: a bare value is one word (it means '--%s VALUE'): write 'LABEL: OPTIONS' for more", what, aname);
            if (strpbrk(s, "\"'`\\"))
                return sweep_bad(sp, line, "%s: quotes and backslashes are not supported (options are split on whitespace, with no quoting)", what);
            if (!(v->opt = (char **)sweep_calloc(sp, 3, sizeof *v->opt))) return sweep_oom();
            if (!(o = (char *)sweep_calloc(sp, strlen(aname) + 3, 1))) return sweep_oom();
            sprintf(o, "--%s", aname);
            for (j = 2; o[j]; j++)
                if (o[j] == '_') o[j] = '-';
            if (sweep_reserved(o)) return sweep_bad(sp, line, "axis '%s': '%s' %s", aname, o, sweep_reserved(o));
            v->opt[0] = o;
            if (!(v->opt[1] = sweep_strdup(sp, s))) return sweep_oom();
            v->nopt = 2;
            if (!(v->label = sweep_slug(sp, s))) return sweep_oom();
            if (!*v->label) return sweep_bad(sp, line, "%s: cannot make a label from it: write 'LABEL: OPTIONS'", what);
        }
    }
    { /* two values with one label: sorted, so that 1e5 values take a moment, not minutes */
        sweep_label *lab = (sweep_label *)malloc((size_t)ax->nval * sizeof *lab);
        if (!lab) return sweep_oom();
        for (i = 0; i < ax->nval; i++) lab[i].label = ax->val[i].label, lab[i].idx = i;
        qsort(lab, (size_t)ax->nval, sizeof *lab, sweep_cmp_label);
        for (i = 1; i < ax->nval; i++)
            if (!strcmp(lab[i - 1].label, lab[i].label)) {
                const int a1 = lab[i - 1].idx + 1, a2 = lab[i].idx + 1;
                char same[256];
                snprintf(same, sizeof same, "%s", lab[i].label);
                free(lab);
                return sweep_bad(sp, line, "axis '%s': values %d and %d both have the label '%s': label them 'LABEL: OPTIONS'", aname, a1, a2, same);
            }
        free(lab);
    }
    if (sp->nconf * ax->nval > SWEEP_MAX_CONFIGS)
        return sweep_bad(sp, line, "axis '%s' makes %lld configurations (%lld x %d), more than the limit of %lld", aname,
                         sp->nconf * ax->nval, sp->nconf, ax->nval, SWEEP_MAX_CONFIGS);
    sp->nconf *= ax->nval;
    sp->naxis++;
    return EXIT_OK;
}

/* the value index of axis a in configuration c (the first axis varies slowest) */
static int sweep_pick(const sweep_spec *sp, long long c, int a) {
    long long stride = 1;
    int b;
    for (b = sp->naxis - 1; b > a; b--) stride *= sp->axis[b].nval;
    return (int)((c / stride) % sp->axis[a].nval);
}

static int sweep_cmp_id(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int sweep_parse(const char *path, sweep_spec *sp) {
    FILE *f;
    char *line = NULL, **sorted;
    size_t cap = 0;
    ssize_t len;
    int ln = 0, rc = EXIT_OK;
    long long c;

    memset(sp, 0, sizeof *sp);
    sp->file = path;
    sp->nconf = 1;
    if (in_check("experiment file", path, IN_CONF_LIMIT, NULL, 0)) return EXIT_USAGE;
    if (!(f = fopen(path, "r"))) {
        cli_fail(0, "%s: cannot open: %s", path, strerror(errno));
        return EXIT_USAGE;
    }
    while (rc == EXIT_OK && (len = getline(&line, &cap, f)) != -1) {
        char *s, *eq, *key, *val, *hash;
        ln++;
        if ((size_t)len != strlen(line)) {
            rc = sweep_bad(sp, ln, "a NUL byte: this is not a text file");
            break;
        }
        if ((hash = strchr(line, '#'))) *hash = 0;
        s = sweep_trim(line);
        if (!*s) continue;
        if (!(eq = strchr(s, '='))) {
            rc = sweep_bad(sp, ln, "expected 'KEY = VALUE', got '%.300s'", s);
            break;
        }
        *eq = 0;
        key = sweep_trim(s);
        val = sweep_trim(eq + 1);
        if (!strcmp(key, "name")) {
            if (sp->name) rc = sweep_bad(sp, ln, "duplicate key 'name' (first at line %d)", sp->name_line);
            else if (!sweep_word(val, "_-")) rc = sweep_bad(sp, ln, "name '%.200s': use only a-z 0-9 _ - (it starts every id and file name)", val);
            else if (!(sp->name = sweep_strdup(sp, val))) rc = sweep_oom();
            sp->name_line = ln;
        } else if (!strcmp(key, "description")) {
            if (sp->description) rc = sweep_bad(sp, ln, "duplicate key 'description' (first at line %d)", sp->desc_line);
            else if (!(sp->description = sweep_strdup(sp, val))) rc = sweep_oom();
            sp->desc_line = ln;
        } else if (!strcmp(key, "oom")) {
            if (sp->oom) rc = sweep_bad(sp, ln, "duplicate key 'oom' (first at line %d)", sp->oom_line);
            else if (!(sp->oom = sweep_strdup(sp, val))) rc = sweep_oom();
            sp->oom_line = ln;
        } else if (!strcmp(key, "base")) {
            if (sp->base) rc = sweep_bad(sp, ln, "duplicate key 'base' (first at line %d)", sp->base_line);
            else rc = sweep_split(sp, ln, "base", val, &sp->base, &sp->nbase);
            sp->base_line = ln;
        } else if (!strcmp(key, "cuda")) {
            if (sp->cuda) rc = sweep_bad(sp, ln, "duplicate key 'cuda' (first at line %d)", sp->cuda_line);
            else rc = sweep_split(sp, ln, "cuda", val, &sp->cuda, &sp->ncuda);
            sp->cuda_line = ln;
        } else if (!strncmp(key, "axis", 4) && (!key[4] || sweep_space((unsigned char)key[4]))) {
            rc = sweep_parse_axis(sp, ln, sweep_trim(key + 4), val);
        } else if (!strcmp(key, "table") || (!strncmp(key, "table", 5) && sweep_space((unsigned char)key[5])) || (!strncmp(key, "figure", 6) && sweep_space((unsigned char)key[6]))) {
            /* dpprof report's lines: it reads them itself */
        } else {
            rc = sweep_bad(sp, ln, "unknown key '%.200s' (known: name, description, base, axis NAME, figure NAME, table [NAME])", key);
        }
    }
    if (rc == EXIT_OK && ferror(f)) {
        cli_fail(0, "%s: cannot read: %s", path, strerror(errno));
        rc = EXIT_USAGE;
    }
    free(line);
    fclose(f);
    if (rc != EXIT_OK) return rc;
    if (ln == 0) ln = 1;
    if (!sp->name) return sweep_bad(sp, ln, "end of file: no 'name = ...' line (required)");
    if (!sp->base) return sweep_bad(sp, ln, "end of file: no 'base = ...' line (required; it may be empty)");
    /* the ids, and no two alike (labels with '-' can collide across axes) */
    if (!(sp->id = (char **)sweep_calloc(sp, (size_t)sp->nconf, sizeof *sp->id))) return sweep_oom();
    if (!(sorted = (char **)malloc((size_t)sp->nconf * sizeof *sorted))) return sweep_oom();
    for (c = 0; c < sp->nconf; c++) {
        size_t n = strlen(sp->name) + 1, k;
        int a;
        for (a = 0; a < sp->naxis; a++) n += 1 + strlen(sp->axis[a].val[sweep_pick(sp, c, a)].label);
        if (!(sp->id[c] = (char *)sweep_calloc(sp, n, 1))) {
            free(sorted);
            return sweep_oom();
        }
        k = (size_t)sprintf(sp->id[c], "%s", sp->name);
        for (a = 0; a < sp->naxis; a++) k += (size_t)sprintf(sp->id[c] + k, "-%s", sp->axis[a].val[sweep_pick(sp, c, a)].label);
        if (k > SWEEP_MAX_ID) {
            free(sorted);
            return sweep_bad(sp, sp->naxis ? sp->axis[sp->naxis - 1].line : sp->name_line, "the id of configuration %lld is %zu characters long, more than %d (ids name files): shorten the name or the labels", c + 1, k, SWEEP_MAX_ID);
        }
        {
            const char *dot = strrchr(sp->id[c], '.');
            if (dot && !strncmp(dot, ".rep", 4) && dot[4] && strspn(dot + 4, "0123456789") == strlen(dot + 4)) {
                free(sorted);
                return sweep_bad(sp, sp->naxis ? sp->axis[sp->naxis - 1].line : sp->name_line,
                                 "the id '%s' ends as a repeated run's file name does (ID.repK.json: --repeats): change the label", sp->id[c]);
            }
        }
        sorted[c] = sp->id[c];
    }
    qsort(sorted, (size_t)sp->nconf, sizeof *sorted, sweep_cmp_id);
    for (c = 1; c < sp->nconf; c++)
        if (!strcmp(sorted[c - 1], sorted[c])) {
            rc = sweep_bad(sp, sp->naxis ? sp->axis[sp->naxis - 1].line : ln, "two configurations have the same id '%s' (labels joined with '-' collide): change a label", sorted[c]);
            break;
        }
    free(sorted);
    return rc;
}

/* ---- running ------------------------------------------------------------------------------------- */
static volatile sig_atomic_t sweep_stop;
static void sweep_on_stop(int sig) { sweep_stop = sig; }
static void sweep_on_child(int sig) { (void)sig; }

static double sweep_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *sweep_signame(int sig) {
    switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
#ifdef SIGBUS
    case SIGBUS: return "SIGBUS";
#endif
#ifdef SIGTRAP
    case SIGTRAP: return "SIGTRAP";
#endif
#ifdef SIGXCPU
    case SIGXCPU: return "SIGXCPU";
#endif
#ifdef SIGXFSZ
    case SIGXFSZ: return "SIGXFSZ";
#endif
#ifdef SIGSYS
    case SIGSYS: return "SIGSYS";
#endif
    default: return "signal";
    }
}

/* DIR/ID + suffix, or DIR/logs/ID.log; malloc'd */
static char *sweep_path(const char *dir, const char *mid, const char *id, const char *suffix) {
    size_t n = strlen(dir) + strlen(mid) + strlen(id) + strlen(suffix) + 2;
    char *p = (char *)malloc(n);
    if (p) snprintf(p, n, "%s/%s%s%s", dir, mid, id, suffix);
    return p;
}

/* bytes of the valid utf-8 sequence at s, 0 if there is none */
static int sweep_utf8(const unsigned char *s) {
    unsigned char c = s[0];
    int n, i;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3;
    else if (c >= 0xF0 && c <= 0xF4) n = 4;
    else return 0;
    if (c == 0xE0 && s[1] < 0xA0) return 0;
    if (c == 0xED && s[1] > 0x9F) return 0;
    if (c == 0xF0 && s[1] < 0x90) return 0;
    if (c == 0xF4 && s[1] > 0x8F) return 0;
    for (i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return n;
}

/* a json string: escapes, invalid utf-8 as U+FFFD */
static void sweep_json_str(FILE *f, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        int n = sweep_utf8(p);
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7F) fprintf(f, "\\u%04x", *p);
        else if (n == 0) fputs("\\ufffd", f);
        else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
            continue;
        }
        p++;
    }
    fputc('"', f);
}

/* a csv field: quoted (quotes doubled) when it holds a comma, a quote or a line break */
static void sweep_csv_str(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* a command line a shell reads back as the same words */
/* a word for the shell: as it is where it is safe, else in single quotes */
static const char *sh_word(const char *s, char *buf, size_t cap) {
    size_t i, len = 0;
    if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == strlen(s)) {
        snprintf(buf, cap, "%s", s);
        return buf;
    }
    if (cap < 3) return "";
    buf[len++] = '\'';
    for (i = 0; s[i] && len + 5 < cap; i++) {
        if (s[i] == '\'') buf[len++] = '\'', buf[len++] = '\\', buf[len++] = '\'', buf[len++] = '\'';
        else buf[len++] = s[i];
    }
    buf[len++] = '\'';
    buf[len] = 0;
    return buf;
}

static void sweep_print_cmd(FILE *f, char *const *args) {
    int i;
    for (i = 0; args[i]; i++) {
        char buf[8192];
        if (i) fputc(' ', f);
        fputs(sh_word(args[i], buf, sizeof buf), f);
    }
    fputc('\n', f);
}

/* exe run <base> <axis options> --experiment NAME --out OUT --quiet; malloc'd, NULL-terminated */
/* a --trace or --dump path of the experiment file, made the configuration's own: t.json -> t-ID.json,
   dumpdir -> dumpdir-ID (so that the configurations of a sweep never write one file) */
static char *sweep_own_path(sweep_spec *sp, const char *opt, const char *path, const char *id, int rep) {
    const char *slash = strrchr(path, '/'), *dot = strrchr(slash ? slash + 1 : path, '.');
    size_t stem = dot && dot != (slash ? slash + 1 : path) ? (size_t)(dot - path) : strlen(path), n = strlen(opt) + strlen(path) + strlen(id) + 20;
    char *v = (char *)sweep_keep(sp, malloc(n)), r[16] = "";
    if (rep > 0) snprintf(r, sizeof r, ".rep%d", rep + 1); /* the k-th run's own, as its result is ID.repK.json */
    if (v) snprintf(v, n, "%s%.*s-%s%s%s", opt, (int)stem, path, id, r, path + stem);
    return v;
}

/* the command of run rep (0: the first) of configuration c */
static char **sweep_argv(const sweep_spec *sp, long long c, int rep, const char *exe, char *out) {
    int n = 10 + sp->nbase + sp->ncuda, a, k = 0, i, own = 0;
    char **v;
    for (a = 0; a < sp->naxis; a++) n += sp->axis[a].val[sweep_pick(sp, c, a)].nopt;
    if (!(v = (char **)malloc((size_t)n * sizeof *v))) return NULL;
    v[k++] = (char *)exe;
    v[k++] = (char *)"run";
    for (i = 0; i < sp->nbase; i++) v[k++] = sp->base[i];
    for (a = 0; a < sp->naxis; a++) {
        const sweep_value *val = &sp->axis[a].val[sweep_pick(sp, c, a)];
        for (i = 0; i < val->nopt; i++) v[k++] = val->opt[i];
    }
    for (i = 2; i < k; i++) { /* --trace F, --dump D (or =): one file or directory a configuration */
        const char *o = v[i];
        if (own) {
            if (!(v[i] = sweep_own_path((sweep_spec *)sp, "", o, sp->id[c], rep))) {
                free(v);
                return NULL;
            }
            own = 0;
        } else if (!strcmp(o, "--trace") || !strcmp(o, "--dump")) own = 1;
        else if (!strncmp(o, "--trace=", 8) || !strncmp(o, "--dump=", 7)) {
            const size_t eq = (size_t)(strchr(o, '=') - o) + 1;
            char opt[16];
            snprintf(opt, sizeof opt, "%.*s", (int)eq, o);
            if (!(v[i] = sweep_own_path((sweep_spec *)sp, opt, o + eq, sp->id[c], rep))) {
                free(v);
                return NULL;
            }
        }
    }
    if (sp->backend) { /* on the cuda backend the file's cuda options too, before it */
        for (i = 0; !strcmp(sp->backend, "cuda") && i < sp->ncuda; i++) v[k++] = sp->cuda[i];
        v[k++] = (char *)"--backend";
        v[k++] = (char *)sp->backend;
    }
    v[k++] = (char *)"--experiment";
    v[k++] = sp->name;
    v[k++] = (char *)"--out";
    v[k++] = out;
    v[k++] = (char *)"--quiet";
    v[k] = NULL;
    return v;
}

/* 1 when PATH is a finished result: json with a "status" string (copied to status) and, when it has
   one, peak_memory_mb (else NaN); 0 otherwise, with the reason in why */
static int sweep_read_result(const char *path, char *status, size_t stlen, double *peak, char *why, size_t whylen) {
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root;
    const char *st;
    int ok = 0;
    *peak = NAN;
    if (in_check(NULL, path, IN_JSON_LIMIT, why, whylen)) return 0;
    if (dpprof_json_parse_file(path, (size_t)1 << 30, &doc) != 0) return snprintf(why, whylen, "%.500s", dpprof_last_error()), 0;
    root = dpprof_json_root(doc);
    if (!(st = dpprof_json_string(dpprof_json_get(root, "status")))) snprintf(why, whylen, "%s: no \"status\" string", path);
    else {
        snprintf(status, stlen, "%s", st);
        dpprof_json_number(dpprof_json_get(root, "peak_memory_mb"), peak);
        ok = 1;
    }
    dpprof_json_free(doc);
    return ok;
}

/* the last non-empty line of a log (at most its last 4 KiB) */
static void sweep_log_tail(const char *path, char *out, size_t outlen) {
    char buf[4096], *s, *nl;
    size_t n, i;
    long size;
    FILE *f = fopen(path, "rb");
    out[0] = 0;
    if (!f) return;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > (long)sizeof buf - 1) fseek(f, size - (long)(sizeof buf - 1), SEEK_SET);
    else fseek(f, 0, SEEK_SET);
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    for (i = 0; i < n; i++)
        if (!buf[i]) buf[i] = ' ';
    s = sweep_trim(buf);
    if ((nl = strrchr(s, '\n'))) s = sweep_trim(nl + 1);
    snprintf(out, outlen, "%s", s);
}

typedef struct sweep_job {
    pid_t pid;
    long long conf;
    int rep; /* its run of the configuration: 0 the first (ID.json), k the k+1-th (ID.repK+1.json) */
    double t0;
    int timed_out;
    char *json, *log, **args;
} sweep_job;

typedef struct sweep_run {
    sweep_spec *sp;
    const char *dir, *exe, *argv0;
    int jobs, devnull, write_failed, repeats;
    pid_t self; /* the sweep: its children die with it */
    double timeout, t_run;
    long long nsel, done, ran, skipped;
    long long n_ok, n_oom, n_error, n_crashed, n_timeout, n_other;
    sigset_t oldmask;
} sweep_run;

static void sweep_job_free(sweep_job *j) {
    free(j->json);
    free(j->log);
    free(j->args);
    memset(j, 0, sizeof *j);
}

static void sweep_count(sweep_run *r, const char *st) {
    if (!strcmp(st, "ok")) r->n_ok++;
    else if (!strcmp(st, "oom")) r->n_oom++;
    else if (!strcmp(st, "error")) r->n_error++;
    else if (!strcmp(st, "crashed")) r->n_crashed++;
    else if (!strcmp(st, "timeout")) r->n_timeout++;
    else r->n_other++;
}

/* [k/N] ID: status (peak X MiB) elapsed Ts, remaining ~Rs */
static void sweep_progress(const sweep_run *r, const char *id, const char *st, double peak, double elapsed, const char *log) {
    fprintf(stderr, "[%lld/%lld] %s: %s", r->done, r->nsel, id, st);
    if (!strcmp(st, "oom") && r->sp->oom) fprintf(stderr, " (%s)", r->sp->oom);
    if (peak == peak) fprintf(stderr, " (peak %.1f MiB)", peak);
    if (!log) {
        fprintf(stderr, " skipped: done before\n");
        return;
    }
    /* mean wall time per configuration run so far (with --jobs J this is about 1/J of one run) */
    fprintf(stderr, " elapsed %.1fs, remaining ~%.0fs", elapsed, r->ran ? (sweep_now() - r->t_run) / (double)r->ran * (double)(r->nsel - r->done) : 0.0);
    if (strcmp(st, "ok") != 0) fprintf(stderr, " (log: %s)", log);
    fputc('\n', stderr);
}

/* the result the sweep writes for a run that left none */
static int sweep_write_error(const sweep_run *r, const sweep_job *j, const char *status, const char *msg) {
    out_file af;
    int i;
    if (out_open(&af, j->json, "result")) return -1;
    fprintf(af.f, "{\n  \"schema_version\": %d,\n  \"experiment\": ", DPPROF_SCHEMA_VERSION);
    sweep_json_str(af.f, r->sp->name);
    fprintf(af.f, ",\n  \"id\": ");
    sweep_json_str(af.f, r->sp->id[j->conf]);
    fprintf(af.f, ",\n  \"status\": ");
    sweep_json_str(af.f, status);
    fprintf(af.f, ",\n  \"error\": ");
    sweep_json_str(af.f, msg);
    fprintf(af.f, ",\n  \"config\": {\"argv\": [");
    for (i = 0; j->args[i]; i++) {
        if (i) fputs(", ", af.f);
        sweep_json_str(af.f, j->args[i]);
    }
    fprintf(af.f, "]},\n  \"log\": ");
    sweep_json_str(af.f, j->log);
    /* the keys every result has (docs/result.schema.json): nothing was measured */
    {
        char date[32] = "unknown";
        time_t now = time(NULL);
        struct tm *tm = gmtime(&now);
        if (tm) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", tm);
        fprintf(af.f, ",\n  \"avg_time_ms\": null,\n  \"peak_memory_mb\": null,\n  \"meta\": {\"dpprof_version\": \"%s\", \"date\": \"%s\", \"written_by\": \"sweep\"}", DPPROF_VERSION, date);
    }
    fprintf(af.f, "\n}\n");
    return out_commit(&af);
}

/* the result (or log) of a configuration's run: DIR/ID.json for the first, DIR/ID.repK.json for the k-th */
static char *sweep_rep_path(const char *dir, const char *mid, const char *id, int rep, const char *ext) {
    char suffix[32];
    if (rep > 0) snprintf(suffix, sizeof suffix, ".rep%d%s", rep + 1, ext);
    else snprintf(suffix, sizeof suffix, "%s", ext);
    return sweep_path(dir, mid, id, suffix);
}

/* the output the option at a[*k] of a run's command names besides its result: --trace's file or --dump's directory
   (*dump), as "--trace F" (k moves past F) or "--trace=F"; NULL for any other option */
static const char *sweep_out_arg(char **a, int *k, int *dump) {
    *dump = !strcmp(a[*k], "--dump") || !strncmp(a[*k], "--dump=", 7);
    if ((!strcmp(a[*k], "--trace") || !strcmp(a[*k], "--dump")) && a[*k + 1]) return a[++*k];
    if (!strncmp(a[*k], "--trace=", 8)) return a[*k] + 8;
    if (!strncmp(a[*k], "--dump=", 7)) return a[*k] + 7;
    return NULL;
}

/* the outputs a run of configuration c asks besides its result all there (--trace's file, and --dump's directory
   where the run ended ok): a run stopped after its result but before them runs again rather than being skipped */
static int sweep_outputs_there(const sweep_spec *sp, long long c, int rep, char *json, const char *status) {
    char **a = sweep_argv(sp, c, rep, "dpprof", json);
    struct stat st;
    int k, ok = 1, dump;
    if (!a) return 0;
    for (k = 2; a[k] && ok; k++) {
        const char *path = sweep_out_arg(a, &k, &dump);
        if (path && (!dump || !strcmp(status, "ok")) && stat(path, &st) != 0) ok = 0;
    }
    free(a);
    return ok;
}

/* pend code: the run rep of configuration c, as c + rep * nconf */
static int sweep_start(sweep_run *r, sweep_job *j, long long code) {
    const long long c = code % r->sp->nconf;
    const char *id = r->sp->id[c];
    int logfd;
    memset(j, 0, sizeof *j);
    j->conf = c;
    j->rep = (int)(code / r->sp->nconf);
    if (!(j->json = sweep_rep_path(r->dir, "", id, j->rep, ".json")) || !(j->log = sweep_rep_path(r->dir, "logs/", id, j->rep, ".log")) ||
        !(j->args = sweep_argv(r->sp, c, j->rep, r->exe, j->json))) {
        sweep_job_free(j);
        return sweep_oom();
    }
    /* an unfinished result (no status) and a killed writer's temporaries go, beside the result, its trace and its
       dump: the run writes anew */
    out_remove_leftovers(j->json);
    remove(j->json);
    {
        int k, dump;
        for (k = 2; j->args[k]; k++) {
            const char *path = sweep_out_arg(j->args, &k, &dump);
            if (path) out_remove_leftovers(path);
        }
    }
    if ((logfd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
        cli_fail(0, "cannot write the log '%s': %s", j->log, strerror(errno));
        sweep_job_free(j);
        return EXIT_ERROR;
    }
    fflush(NULL);
    j->t0 = sweep_now();
    j->pid = fork();
    if (j->pid < 0) {
        cli_fail(0, "cannot start a process: %s", strerror(errno));
        close(logfd);
        sweep_job_free(j);
        return EXIT_ERROR;
    }
    if (j->pid == 0) {
        char jobs[16];
#ifdef __linux__
        /* the child dies with the sweep, even a sweep killed with SIGKILL, so a rerun never races it */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != r->self) _exit(127);
#endif
        snprintf(jobs, sizeof jobs, "%d", r->jobs); /* a cpu run's default memory limit: MemAvailable / jobs */
        setenv("DPPROF_SWEEP_JOBS", jobs, 1);
        sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
        if (dup2(r->devnull, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0) _exit(127);
        execv("/proc/self/exe", j->args);
        if (strchr(r->argv0, '/')) execv(r->argv0, j->args);
        else execvp(r->argv0, j->args);
        dprintf(2, "%s: sweep: cannot execute '%s': %s\n", prog, r->argv0, strerror(errno));
        _exit(127);
    }
    close(logfd);
    return EXIT_OK;
}

/* a child ended: keep its result, or write one for it */
static void sweep_finish(sweep_run *r, sweep_job *j, int wst) {
    double el = sweep_now() - j->t0, peak;
    char st[64], why[512], tail[512], what[256], msg[1400];
    if (!sweep_read_result(j->json, st, sizeof st, &peak, why, sizeof why)) {
        const char *status = "error";
        if (j->timed_out) {
            status = "timeout";
            snprintf(what, sizeof what, "timed out after %g s and was killed", r->timeout);
        } else if (WIFSIGNALED(wst)) {
            status = "crashed";
            snprintf(what, sizeof what, "killed by signal %s (%d)", sweep_signame(WTERMSIG(wst)), WTERMSIG(wst));
        } else if (WIFEXITED(wst) && WEXITSTATUS(wst) == 0) {
            snprintf(what, sizeof what, "exited with status 0 but left no usable result (%.180s)", why);
        } else {
            if (WIFEXITED(wst) && WEXITSTATUS(wst) == EXIT_OOM) status = "oom";
            snprintf(what, sizeof what, "exited with status %d", WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
        }
        sweep_log_tail(j->log, tail, sizeof tail);
        if (*tail) snprintf(msg, sizeof msg, "%s: %s", what, tail);
        else snprintf(msg, sizeof msg, "%s (the log is empty)", what);
        if (sweep_write_error(r, j, status, msg)) r->write_failed = 1;
        snprintf(st, sizeof st, "%s", status);
        peak = NAN;
    }
    r->done++;
    r->ran++;
    sweep_count(r, st);
    {
        char label[600];
        if (j->rep) snprintf(label, sizeof label, "%.560s (run %d)", r->sp->id[j->conf], j->rep + 1);
        else snprintf(label, sizeof label, "%.560s", r->sp->id[j->conf]);
        sweep_progress(r, label, st, peak, el, j->log);
    }
    sweep_job_free(j);
}

/* DIR/summary.csv: every configuration of the file, in order */
static int sweep_write_summary(const sweep_spec *sp, const char *dir) {
    out_file af;
    char *path = sweep_path(dir, "", "summary", ".csv"), *json;
    long long c;
    int a, k;
    if (!path) return sweep_oom();
    if (out_open(&af, path, "summary")) {
        free(path);
        return EXIT_ERROR;
    }
    fputs("id", af.f);
    for (a = 0; a < sp->naxis; a++) fprintf(af.f, ",%s", sp->axis[a].name);
    fputs(",status", af.f);
    for (k = 0; k < SWEEP_NCOLS; k++) fprintf(af.f, ",%s", sweep_csv_cols[k]);
    for (k = 0; k < 4; k++) fprintf(af.f, ",%s_mb", sweep_csv_traffic[k]);
    fputc('\n', af.f);
    for (c = 0; c < sp->nconf; c++) {
        dpprof_json_doc *doc = NULL;
        const dpprof_json *root = NULL;
        const char *st;
        if (!(json = sweep_path(dir, "", sp->id[c], ".json"))) {
            out_abort(&af);
            free(path);
            return sweep_oom();
        }
        /* a regular file within the limit alone: another id's result may be anything (a FIFO would hang the sweep) */
        if (in_check(NULL, json, IN_JSON_LIMIT, NULL, 0) == 0 && dpprof_json_parse_file(json, (size_t)IN_JSON_LIMIT, &doc) == 0) root = dpprof_json_root(doc);
        sweep_csv_str(af.f, sp->id[c]);
        for (a = 0; a < sp->naxis; a++) {
            fputc(',', af.f);
            sweep_csv_str(af.f, sp->axis[a].val[sweep_pick(sp, c, a)].label);
        }
        fputc(',', af.f);
        st = dpprof_json_string(dpprof_json_get(root, "status"));
        sweep_csv_str(af.f, st ? st : (access(json, F_OK) == 0 ? "unreadable" : "not_run"));
        for (k = 0; k < SWEEP_NCOLS; k++) {
            double v;
            fputc(',', af.f);
            if (dpprof_json_number(dpprof_json_path(root, sweep_csv_paths[k]), &v) == 0) fprintf(af.f, "%.6g", v);
        }
        for (k = 0; k < 4; k++) {
            const dpprof_json *ph = dpprof_json_get(root, "phases");
            char key[32];
            double sum = 0, v;
            size_t i;
            int any = 0;
            snprintf(key, sizeof key, "%s_bytes", sweep_csv_traffic[k]);
            for (i = 0; i < dpprof_json_len(ph); i++)
                if (dpprof_json_number(dpprof_json_get(dpprof_json_member(ph, i), key), &v) == 0) sum += v, any = 1;
            fputc(',', af.f);
            if (any) fprintf(af.f, "%.6g", sum / 1048576.0);
        }
        fputc('\n', af.f);
        dpprof_json_free(doc);
        free(json);
    }
    k = out_commit(&af);
    free(path);
    return k ? EXIT_ERROR : EXIT_OK;
}

/* every configuration's options as run parses them, before anything runs or is written (a bad option in base
   or an axis value was an error result of every run it is in): 0, or the exit code after run's message,
   which names the file and the configuration */
static int sweep_check_options(const sweep_spec *sp, const char *dir) {
    const char *saved = prog;
    char ctx[1024];
    long long c;
    int rc = EXIT_OK;
    for (c = 0; c < sp->nconf && rc == EXIT_OK; c++) {
        char *json = sweep_path(dir, "", sp->id[c], ".json");
        char **args = json ? sweep_argv(sp, c, 0, prog_name, json) : NULL;
        run_opts o;
        int n = 0;
        if (!args) {
            free(json);
            return sweep_oom();
        }
        while (args[n]) n++;
        snprintf(ctx, sizeof ctx, "%s: sweep: %s: configuration %s", saved, sp->file, sp->id[c]);
        prog = ctx;
        rc = parse_run(n - 2, args + 2, &o);
        prog = saved;
        free(args);
        free(json);
    }
    return rc;
}

static int cmd_sweep(int argc, char **argv) {
    sweep_spec sp;
    sweep_run r;
    sweep_job *job = NULL;
    sweep_opts so;
    const char *file = NULL, *outdir = NULL, *only = NULL, *backend = NULL;
    char exe[4096], *dir = NULL;
    long long *sel = NULL, *pend = NULL, c, npend = 0, next = 0;
    int i, rc, dry = 0, nrun = 0, npos = 0;
    struct sigaction sa, old_int, old_term, old_chld;
    sigset_t block, waitmask;

    memset(&r, 0, sizeof r);
    r.jobs = 1;
    r.self = getpid();
    r.argv0 = argc > 0 ? argv[0] : "dpprof";
    memset(&so, 0, sizeof so);
    so.jobs = 1;
    rc = cli_parse(&sweep_cmd, argc - 2, argv + 2, &so, NULL, &file, &npos);
    if (rc == CLI_HELP_SHOWN) return EXIT_OK;
    if (rc != EXIT_OK) return rc;
    r.jobs = so.jobs, r.timeout = so.timeout, dry = so.dry, outdir = so.outdir, only = so.only, backend = so.backend;
    r.repeats = so.repeats > 0 ? so.repeats : 1;
    if (backend) { /* one of the library's backends, said as run would say it */
        dpprof_config probe;
        memset(&probe, 0, sizeof probe);
        if (dpprof_config_set(&probe, "backend", backend) != DPPROF_OK) return cli_usage("--backend '%s': expected auto, cpu, cuda or dry", backend);
    }
    if (!file || !outdir || !*outdir)
        return cli_usage("usage: dpprof sweep EXPERIMENT.conf --out-dir DIR [--jobs J] [--dry-run] [--only TEXT] [--timeout SECONDS] [--backend NAME]");
    if ((rc = sweep_parse(file, &sp)) != EXIT_OK) {
        sweep_spec_free(&sp);
        return rc;
    }
    sp.backend = backend;
    r.sp = &sp;
    /* DIR without trailing slashes */
    if (!(dir = strdup(outdir))) {
        rc = sweep_oom();
        goto done;
    }
    for (i = (int)strlen(dir); i > 1 && dir[i - 1] == '/'; i--) dir[i - 1] = 0;
    r.dir = dir;
    {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) exe[n] = 0;
        else snprintf(exe, sizeof exe, "%s", r.argv0);
        r.exe = exe;
    }
    if ((rc = sweep_check_options(&sp, dir)) != EXIT_OK) goto done;
    if (!(sel = (long long *)malloc((size_t)sp.nconf * sizeof *sel)) || !(pend = (long long *)malloc((size_t)sp.nconf * (size_t)r.repeats * sizeof *pend))) {
        rc = sweep_oom();
        goto done;
    }
    for (c = 0; c < sp.nconf; c++)
        if (!only || strstr(sp.id[c], only)) sel[r.nsel++] = c;
    if (r.nsel == 0) {
        cli_fail(0, "--only '%s' matches none of the %lld configurations of %s", only, sp.nconf, file);
        rc = EXIT_USAGE;
        goto done;
    }
    if (dry) { /* what the sweep would do, checked as it would be: the directory too */
        if (dir_make("--out-dir", dir, 0)) {
            rc = EXIT_USAGE;
            goto done;
        }
        for (i = 0; i < r.repeats; i++) /* in the order the runs go: every configuration once, then again */
            for (c = 0; c < r.nsel; c++) {
                char *json = sweep_rep_path(dir, "", sp.id[sel[c]], i, ".json");
                char **args = json ? sweep_argv(&sp, sel[c], i, exe, json) : NULL;
                if (!args) {
                    free(json);
                    rc = sweep_oom();
                    goto done;
                }
                sweep_print_cmd(stdout, args);
                free(args);
                free(json);
            }
        rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
        goto done;
    }
    /* the output directory and its logs/ */
    {
        char *logs = sweep_path(dir, "", "logs", "");
        int bad;
        if (!logs) {
            rc = sweep_oom();
            goto done;
        }
        bad = dir_make("--out-dir", dir, 1) || dir_make("--out-dir", logs, 1);
        free(logs);
        if (bad) {
            rc = EXIT_USAGE;
            goto done;
        }
    }
    /* one sweep a directory: a lock on DIR/.sweep.lock (released when this process ends, however it ends) */
    {
        char *lockp = sweep_path(dir, "", ".sweep", ".lock");
        struct flock fl;
        char pid[32];
        int lfd;
        if (!lockp) {
            rc = sweep_oom();
            goto done;
        }
        lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666); /* never through a link; a FIFO does not block */
        {
            struct stat lst;
            if (lfd >= 0 && (fstat(lfd, &lst) != 0 || !S_ISREG(lst.st_mode))) {
                cli_fail(0, "'%s' is not a regular file: not a sweep's lock (remove it, or give another --out-dir)", lockp);
                close(lfd);
                free(lockp);
                rc = EXIT_USAGE;
                goto done;
            }
            if (lfd < 0 && errno == ELOOP) {
                cli_fail(0, "'%s' is a symbolic link: not a sweep's lock, and never followed (remove it, or give another --out-dir)", lockp);
                free(lockp);
                rc = EXIT_USAGE;
                goto done;
            }
        }
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK, fl.l_whence = SEEK_SET;
        if (lfd < 0 || fcntl(lfd, F_SETLK, &fl) != 0) {
            ssize_t n = lfd >= 0 ? pread(lfd, pid, sizeof pid - 1, 0) : -1;
            pid[n > 0 ? n : 0] = 0;
            if (lfd < 0) cli_fail(0, "cannot lock '%s': %s", lockp, strerror(errno));
            else cli_fail(0, "another sweep (pid %s) is writing '%s': wait for it to end, or give another --out-dir", *pid ? pid : "unknown", dir);
            if (lfd >= 0) close(lfd);
            free(lockp);
            rc = EXIT_USAGE;
            goto done;
        }
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        if (ftruncate(lfd, 0) != 0 || pwrite(lfd, pid, strlen(pid), 0) < 0) { /* the pid is a courtesy: the lock is what counts */
        }
        free(lockp); /* lfd stays open (and locked) until the process ends */
    }
    if ((r.devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        cli_fail(0, "cannot open /dev/null: %s", strerror(errno));
        rc = EXIT_ERROR;
        goto done;
    }
    fprintf(stderr, "%s: sweep %s: %lld configuration%s", prog, sp.name, sp.nconf, sp.nconf == 1 ? "" : "s");
    if (only) fprintf(stderr, ", %lld with '%s' in the id", r.nsel, only);
    if (r.repeats > 1) fprintf(stderr, ", each run %d times (interleaved)", r.repeats);
    fprintf(stderr, ", %d at a time, results in %s%s%s\n", r.jobs, dir, sp.description ? " - " : "", sp.description ? sp.description : "");
    /* finished before: skipped. the runs in passes: every configuration once, then every one again */
    {
        const long long nsel = r.nsel;
        int rep;
        r.nsel = nsel * r.repeats; /* the runs, for the progress lines */
        for (rep = 0; rep < r.repeats; rep++)
            for (c = 0; c < nsel; c++) {
                char *json = sweep_rep_path(dir, "", sp.id[sel[c]], rep, ".json");
                char st[64], why[256], label[600];
                double peak;
                if (!json) {
                    rc = sweep_oom();
                    goto closefd;
                }
                out_remove_leftovers(json); /* a run killed while writing */
                if (sweep_read_result(json, st, sizeof st, &peak, why, sizeof why) && sweep_outputs_there(&sp, sel[c], rep, json, st)) {
                    r.done++;
                    r.skipped++;
                    sweep_count(&r, st);
                    if (rep) snprintf(label, sizeof label, "%.560s (run %d)", sp.id[sel[c]], rep + 1);
                    else snprintf(label, sizeof label, "%.560s", sp.id[sel[c]]);
                    sweep_progress(&r, label, st, peak, 0, NULL);
                } else pend[npend++] = sel[c] + rep * sp.nconf;
                free(json);
            }
    }
    if (!(job = (sweep_job *)calloc((size_t)r.jobs, sizeof *job))) {
        rc = sweep_oom();
        goto closefd;
    }
    /* signals stay blocked but while waiting in pselect: no wake-up is lost */
    sweep_stop = 0;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &r.oldmask);
    waitmask = r.oldmask;
    sigdelset(&waitmask, SIGINT);
    sigdelset(&waitmask, SIGTERM);
    sigdelset(&waitmask, SIGCHLD);
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = sweep_on_stop;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sa.sa_handler = sweep_on_child;
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, &old_chld);
    r.t_run = sweep_now();
    rc = EXIT_OK;
    while (!sweep_stop) {
        pid_t pid;
        int wst, k, reaped = 0;
        struct timespec ts, *tsp = NULL;
        double now, wait = -1;
        while (!r.write_failed && nrun < r.jobs && next < npend) {
            if ((rc = sweep_start(&r, &job[nrun], pend[next])) != EXIT_OK) {
                r.write_failed = 1;
                break;
            }
            nrun++;
            next++;
        }
        if (nrun == 0) break;
        while (!sweep_stop && (pid = waitpid(-1, &wst, WNOHANG)) > 0) {
            for (k = 0; k < nrun && job[k].pid != pid; k++) {}
            if (k == nrun) continue;
            sweep_finish(&r, &job[k], wst);
            job[k] = job[--nrun];
            reaped = 1;
        }
        if (reaped || sweep_stop) continue;
        now = sweep_now();
        for (k = 0; k < nrun; k++) {
            double left;
            if (r.timeout <= 0 || job[k].timed_out) continue;
            left = job[k].t0 + r.timeout - now;
            if (left <= 0) {
                kill(job[k].pid, SIGKILL);
                job[k].timed_out = 1;
            } else if (wait < 0 || left < wait) wait = left;
        }
        if (wait >= 0) {
            ts.tv_sec = (time_t)wait;
            ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9) + 1000000; /* a little past the deadline */
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            tsp = &ts;
        }
        pselect(0, NULL, NULL, NULL, tsp, &waitmask);
    }
    if (sweep_stop) {
        int k, sig = sweep_stop, killed = 0;
        for (k = 0; k < nrun; k++) kill(job[k].pid, SIGKILL);
        for (k = 0; k < nrun; k++) {
            char st[64], why[64];
            double peak;
            int wst = 0;
            while (waitpid(job[k].pid, &wst, 0) < 0 && errno == EINTR) {}
            out_remove_leftovers(job[k].json);
            /* a child that had written its whole result before the signal finished (the file is the
               result, whether or not the child had exited yet): recorded and counted as such */
            if (sweep_read_result(job[k].json, st, sizeof st, &peak, why, sizeof why)) sweep_finish(&r, &job[k], wst);
            else {
                killed++;
                sweep_job_free(&job[k]);
            }
        }
        cli_fail(0, "sweep %s: interrupted by %s: %d running configuration%s killed, %lld of %lld finished; run the same command to resume", sp.name, sweep_signame(sig), killed, killed == 1 ? "" : "s", r.done, r.nsel);
        nrun = 0;
        rc = 130;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
    sigprocmask(SIG_SETMASK, &r.oldmask, NULL);
    if (rc == 130) goto closefd;
    if (r.write_failed) {
        cli_fail(0, "sweep %s: stopped: the sweep could not write its files (see above); %lld of %lld configurations finished", sp.name, r.done, r.nsel);
        if (rc == EXIT_OK) rc = EXIT_ERROR;
        goto closefd;
    }
    if ((rc = sweep_write_summary(&sp, dir)) != EXIT_OK) {
        cli_fail(0, "sweep %s: the summary could not be written (see above)", sp.name);
        goto closefd;
    }
    fprintf(stderr, "%s: sweep %s: %lld of %lld done (%lld skipped): ok %lld, oom %lld, error %lld, crashed %lld, timeout %lld",
            prog, sp.name, r.done, r.nsel, r.skipped, r.n_ok, r.n_oom, r.n_error, r.n_crashed, r.n_timeout);
    if (r.n_other) fprintf(stderr, ", other %lld", r.n_other);
    if (r.n_oom && sp.oom) fprintf(stderr, " (the oom: %s)", sp.oom);
    fprintf(stderr, "; summary %s/summary.csv\n", dir);
closefd:
    close(r.devnull);
done:
    free(job);
    free(sel);
    free(pend);
    free(dir);
    sweep_spec_free(&sp);
    return rc;
}

/* ---- report: figures, tables, macros and summary of one experiment --------------------------------
   dpprof report EXPERIMENT.conf --results DIR [--figures DIR] [--tables DIR]
   reads the sweep's results (DIR/ID.json), and the conf's lines
     figure FIG = KIND key=value ...      -> FIGDIR/NAME-FIG.png
     table = KIND key=value ...           -> TABDIR/NAME-table.tex
   writes TABDIR/NAME-macros.tex (every metric of every configuration), DIR/summary.txt.
   figure kinds: bars, heatmap, stacked, modules, phases, lines, capacity, timeline.
   keys: x= series= rows= cols= group= value=METRIC where=AXIS:LABEL,... ref=LABEL batch=AXIS config=LABELS
   metrics: rep_metrics, and <category>_gib */

#define REP_MAX_LINES 64
/* the paper's figures: 2400 x 1600 pixels, the 8x13 font at 5x, so that at the paper's 5.4-inch figure width
   (about 440 dpi) the text prints at about 10.6 pt, and value labels a step smaller at about 8.4 pt */
#define REP_FIG_W 2400
#define REP_FIG_H 1600
#define REP_FIG_TEXT 5
/* a timeline's text: the scale its phase labels and legend were laid out for (2 at 1200 wide); at 5 the labels
   took half the frame and the legend's names were cut */
#define REP_TL_TEXT 4
#define REP_MAXOPS 64 /* ops of one result an ops table reads (dpprof has fewer op names) */

/* what a result was built from (rep_build_of) */
typedef struct rep_build {
    char commit[16], source[72], recorded[16];
    int stated;
} rep_build;

typedef struct rep_res {
    int have;             /* a result file was read */
    char skipped[300];    /* a file was there and not used: why (said on stderr and in the summary) */
    char incomplete[120]; /* used, but a part of it is missing: what (said on stderr and in the summary) */
    char status[16];
    double peak, cat[DPPROF_CAT_COUNT], mod[DPPROF_MOD_COUNT];
    double dry_peak, drv_peak; /* cuda: the dry plan's peak and the driver's (bytes; nan where the result has none) */
    double peak_full;          /* oom: the dry peak without the memory limit (peak_without_limit.bytes; nan where none) */
    double ph_bytes[DPPROF_PHASE_COUNT], ph_flops[DPPROF_PHASE_COUNT];
    double ph_peak[DPPROF_PHASE_COUNT];       /* live bytes at the phase's peak (largest over its occurrences); nan: not run */
    double ph_ms[DPPROF_PHASE_COUNT];         /* measured ms per training step (setup phases: once); nan: not timed */
    double ph_traffic[DPPROF_PHASE_COUNT][4]; /* measured dram read, dram write, l2 read, l2 write bytes (--dram,
                                                 the counters step); nan: not measured */
    char backend[16], device[80];             /* config.backend, meta.device: what produced the numbers */
    char date[16];                            /* meta.date's day: the day of the run */
    rep_build build;                          /* the commit compiled and its sources */
    double mem_limit;                         /* config.memory_limit (bytes; nan: none) */
    double params, trainable, epsilon, step_ms, tokens_s;
    double moved, flops;          /* analytic bytes and flops of one training step */
    double mfu, model_mfu, dram;  /* cuda: the executed flops' and the model flops' utilisation; measured dram bytes of the counters step */
    double norm_dram, norm_flops; /* cuda --op-times: the norm kernels' share of the dram peak and the dtype's compute peak */
    double norm_roof;             /* their roofline time (each op's bytes at the dram peak or flops at the compute
                                         peak, whichever takes longer) over their measured time */
    char norm_bound[32];          /* which peak bounds most of that roofline time ("" when not measured) */
    int nops;                     /* --op-times: the timed step's ops (throughput.ops.by_op), their names and ms */
    char opname[REP_MAXOPS][40];
    double opms[REP_MAXOPS];
    int ntr; /* --dram-ops: the ops with measured traffic, their analytic and measured dram bytes */
    char trname[REP_MAXOPS][40];
    double tran[REP_MAXOPS], trdram[REP_MAXOPS];
    int nrep;                /* timed ok runs of it (the sweep's --repeats: ID.json, ID.rep2.json, ...): step_ms and
                                      tokens_s are their medians, mfu the first run's at the median step */
    double step_lo, step_hi; /* the fastest and slowest repeat's step time (nan: one run) */
    double step_range;       /* the first run's timed steps: their range over their median, % (nan: under two) */
    double tok_lo, tok_hi;   /* their tokens/s */
    char rep_note[240];      /* a repeat file that was there and not used: which, and why */
} rep_res;

/* the numeric metrics of a result, in the order the macros list them (norm_bound is a string macro) */
static const char *const rep_metrics[] = {"peak_gib", "overhead", "params_b", "trainable_m", "epsilon", "step_ms", "tokens_per_s", "moved_gib", "tflop", "mfu", "model_mfu", "speed", "dram_gib", "norm_dram_pct", "norm_flops_pct", "norm_bound_pct", "flop_ceiling", "gib_s", "dry_peak_gib", "driver_peak_gib", "dram_ratio",
                                          "repeats", "step_ms_min", "step_ms_max", "tokens_per_s_min", "tokens_per_s_max", "speed_min", "speed_max", "mfu_min", "mfu_max", "step_range_pct"};
#define REP_MAXREP 32 /* repeats of a configuration read */

typedef struct rep_line { /* a figure or table line of the conf */
    int line;
    int table; /* a table line: fig is its name, "" for the experiment's unnamed table */
    char fig[64], kind[32];
    char key[16][24], val[16][200];
    int nkv;
} rep_line;

/* a folder's provenance file: what results that record no source hash compiled, stated afterwards. a line is
   "RECORDED COMPILED SHA256": results whose meta.git_commit is RECORDED were built from the files of commit
   COMPILED, whose SHA-256 (make source-hash REV=COMPILED, the rule builds record) is SHA256 */
#define REP_MAXPROV 32
typedef struct rep_prov {
    char recorded[16], compiled[16], sha[72];
} rep_prov;
typedef struct rep_provs {
    rep_prov p[REP_MAXPROV];
    int n;
} rep_provs;

typedef struct rep {
    sweep_spec sp;
    const char *conf, *dir, *figdir, *tabdir;
    rep_provs prov;
    rep_res *res; /* (nconf) */
    rep_line lines[REP_MAX_LINES];
    int nlines;
    FILE *summary, *macros;
} rep;

static int rep_bad(const rep *r, int line, const char *fmt, const char *a) {
    char msg[1024];
    snprintf(msg, sizeof msg, fmt, a);
    return cli_fail(EXIT_USAGE, "%s:%d: %s", r->conf, line, msg);
}

static const char *rep_get(const rep_line *l, const char *key) {
    int i;
    for (i = 0; i < l->nkv; i++)
        if (!strcmp(l->key[i], key)) return l->val[i];
    return NULL;
}

/* the figure and table lines: "figure FIG = KIND k=v ..." and "table = KIND k=v ..." */
static int rep_read_lines(rep *r) {
    FILE *f = fopen(r->conf, "r");
    char *buf = NULL;
    size_t cap = 0;
    int ln = 0, rc = EXIT_OK;
    if (!f) {
        cli_fail(0, "%s: cannot open: %s", r->conf, strerror(errno));
        return EXIT_USAGE;
    }
    /* whole lines and the same white space as sweep_parse, which accepted the file: a figure line
       after a vertical tab, or inside a long description, is what the sweep saw */
    while (rc == EXIT_OK && getline(&buf, &cap, f) != -1) {
        char *s = buf, *eq, *tok, *save = NULL, *hash;
        rep_line *l;
        ln++;
        if ((hash = strchr(s, '#'))) *hash = 0;
        while (sweep_space((unsigned char)*s)) s++;
        if (strncmp(s, "figure", 6) && strncmp(s, "table", 5)) continue;
        if (r->nlines == REP_MAX_LINES) {
            rc = rep_bad(r, ln, "more than %s figure and table lines", "64");
            break;
        }
        l = &r->lines[r->nlines++];
        memset(l, 0, sizeof *l);
        l->line = ln;
        if (!(eq = strchr(s, '='))) {
            rc = rep_bad(r, ln, "expected 'figure NAME = KIND ...' or 'table = KIND ...'%s", "");
            break;
        }
        *eq = 0;
        l->table = !!strncmp(s, "figure", 6);
        { /* figure NAME, table [NAME]: a-z, 0-9, _ and - (the files NAME-FIG.png, NAME-TNAME-table.tex) */
            char *nm = s + (l->table ? 5 : 6), *end, msg[160];
            while (sweep_space((unsigned char)*nm)) nm++;
            end = nm + strlen(nm);
            while (end > nm && sweep_space((unsigned char)end[-1])) *--end = 0;
            if (!l->table && !*nm) {
                rc = rep_bad(r, ln, "figure without a name (figure NAME = KIND ...)%s", "");
                break;
            }
            if (strlen(nm) >= sizeof l->fig || strspn(nm, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(nm)) {
                snprintf(msg, sizeof msg, "%s name '%%s': expected up to 63 of a-z, 0-9, _ and - (%s NAME = KIND ...)", l->table ? "table" : "figure", l->table ? "table" : "figure");
                rc = rep_bad(r, ln, msg, nm);
                break;
            }
            snprintf(l->fig, sizeof l->fig, "%s", nm);
        }
        tok = strtok_r(eq + 1, " \t\r\n\v\f", &save);
        if (!tok) {
            rc = rep_bad(r, ln, "no KIND after '='%s", "");
            break;
        }
        snprintf(l->kind, sizeof l->kind, "%s", tok);
        /* key=value, or key="text with spaces" (a figure's title and axis labels) */
        for (tok = save; rc == EXIT_OK && tok && *tok;) {
            char *e, *end;
            while (sweep_space((unsigned char)*tok)) tok++;
            if (!*tok) break;
            e = tok + strcspn(tok, "= \t\r\n\v\f");
            if (*e != '=' || l->nkv == 16) {
                *(tok + strcspn(tok, " \t\r\n\v\f")) = 0;
                rc = *e == '=' ? rep_bad(r, ln, "more than 16 keys: '%s' is the 17th", tok) : rep_bad(r, ln, "'%s': expected key=value", tok);
                break;
            }
            *e = 0;
            if (e[1] == '"') {
                end = strchr(e + 2, '"');
                if (!end) {
                    rc = rep_bad(r, ln, "%s=\"...: no closing quote", tok);
                    break;
                }
                *end = 0;
                snprintf(l->val[l->nkv], sizeof l->val[0], "%s", e + 2);
            } else {
                end = e + 1 + strcspn(e + 1, " \t\r\n\v\f");
                if (*end) *end = 0;
                else end--; /* the last token: nothing after it */
                snprintf(l->val[l->nkv], sizeof l->val[0], "%s", e + 1);
            }
            snprintf(l->key[l->nkv], sizeof l->key[0], "%s", tok);
            l->nkv++;
            tok = end + 1;
        }
    }
    free(buf);
    fclose(f);
    return rc;
}

/* a finite number (a nan or inf written by something else is no measurement), else nan */
static double rep_num(const dpprof_json *v) {
    double x;
    return dpprof_json_number(v, &x) == 0 && x - x == 0 ? x : NAN;
}

/* the result's configuration is the one the experiment file gives this id: every option of its command line
   whose name is a key of the result's config (--physical-batch: physical_batch) holds the option's value.
   a result of another version of the file is named and skipped, not used as this configuration's */
static void rep_config_matches(const rep *r, long long c, const dpprof_json *cfg, char *why, size_t cap) {
    char **argv = sweep_argv(&r->sp, c, 0, "dpprof", (char *)"-");
    int i;
    if (!argv || !cfg) {
        free(argv);
        return;
    }
    for (i = 2; argv[i] && argv[i + 1]; i++) {
        char key[64];
        const dpprof_json *v;
        size_t k;
        const char *o = argv[i], *val = argv[i + 1];
        int later = 0, j;
        if (strncmp(o, "--", 2) != 0 || !strcmp(o, "--backend") || !strncmp(val, "--", 2)) continue; /* auto resolves */
        for (j = i + 1; argv[j] && !later; j++) later = !strcmp(argv[j], o);                         /* the last one wins, as in run */
        if (later) continue;
        snprintf(key, sizeof key, "%s", o + 2);
        for (k = 0; key[k]; k++)
            if (key[k] == '-') key[k] = '_';
        if (!(v = dpprof_json_get(cfg, key))) continue;
        if (dpprof_json_kind(v) == DPPROF_JSON_STRING) {
            if (strcmp(dpprof_json_string(v), val) != 0) snprintf(why, cap, "its config.%s is '%.60s', the experiment file gives this id %s %.60s", key, dpprof_json_string(v), o, val);
        } else if (dpprof_json_kind(v) == DPPROF_JSON_NUMBER) {
            double have = 0, want;
            char *end;
            dpprof_json_number(v, &have);
            want = strtod(val, &end);
            if (!*end && end != val && fabs(have - want) > 1e-9 * fabs(want))
                snprintf(why, cap, "its config.%s is %.17g, the experiment file gives this id %s %.60s", key, have, o, val);
        }
        if (why[0]) break;
    }
    free(argv);
}

static int rep_dcmp(const void *a, const void *b) { return *(const double *)a < *(const double *)b ? -1 : *(const double *)a > *(const double *)b; }
static double rep_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, rep_dcmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* the spread of one run's timed steps, from its snapshots: a step ends synchronised with the device, and its last
   phase's end is on the host clock, so from one step's end to the next is that step's time plus the host's gap before
   its first launch. the range of those times over their median, in %; nan under two timed steps after a step (warm-up
   0 leaves the first timed step without one before it) or on the dry backend, whose snapshots have no time */
static double rep_step_range(const dpprof_json *root) {
    const dpprof_json *sn = dpprof_json_get(root, "snapshots");
    double w = rep_num(dpprof_json_path(root, "config.warmup")), st = rep_num(dpprof_json_path(root, "config.steps"));
    double *end, *iv, lo, hi, med = NAN;
    int nw, ns, k, n = 0;
    size_t i;
    if (!(w >= 0 && st >= 2 && w + st <= 1e6)) return NAN;
    nw = (int)w, ns = (int)st;
    if (!(end = (double *)malloc(sizeof *end * (size_t)(nw + ns) * 2))) return NAN;
    iv = end + nw + ns;
    for (k = 0; k < nw + ns; k++) end[k] = NAN;
    for (i = 0; i < dpprof_json_len(sn); i++) {
        const dpprof_json *e = dpprof_json_at(sn, i);
        const char *nm = dpprof_json_string(dpprof_json_get(e, "name"));
        double t = rep_num(dpprof_json_get(e, "timestamp"));
        char *dot;
        long st_k;
        if (!nm || strncmp(nm, "step", 4) || t != t) continue;
        st_k = strtol(nm + 4, &dot, 10);
        if (dot == nm + 4 || *dot != '.' || st_k < 0 || st_k >= nw + ns) continue;
        if (!(end[st_k] >= t)) end[st_k] = t; /* the step's last phase: its latest end */
    }
    for (k = nw > 1 ? nw : 1; k < nw + ns; k++)
        if (end[k] == end[k] && end[k - 1] == end[k - 1]) iv[n++] = end[k] - end[k - 1];
    if (n >= 2) {
        med = rep_median(iv, n); /* sorts iv */
        lo = iv[0], hi = iv[n - 1];
        med = med > 0 ? 100.0 * (hi - lo) / med : NAN;
    }
    free(end);
    return med;
}

/* the repeats of a timed configuration (dpprof sweep --repeats: ID.rep2.json, ID.rep3.json, ...): each an ok result
   of this experiment and configuration with a step time, else named in the summary and left out. the first run
   (ID.json) keeps every other number; the step time and tokens/s become the medians over the runs, with their
   range, and mfu follows the median step */
static void rep_load_repeats(rep *r, long long c) {
    rep_res *x = &r->res[c];
    double ms[REP_MAXREP], tok[REP_MAXREP];
    int k, n = 0;
    x->nrep = x->have && !strcmp(x->status, "ok") && x->step_ms == x->step_ms;
    x->step_lo = x->step_hi = x->tok_lo = x->tok_hi = NAN;
    if (!x->nrep) return;
    ms[n] = x->step_ms, tok[n++] = x->tokens_s;
    for (k = 2; k <= REP_MAXREP; k++) {
        char suffix[32], why[300] = "";
        char *path;
        dpprof_json_doc *doc = NULL;
        const dpprof_json *root;
        double m, t;
        snprintf(suffix, sizeof suffix, ".rep%d.json", k);
        if (!(path = sweep_path(r->dir, "", r->sp.id[c], suffix))) return;
        if (access(path, F_OK) != 0) {
            free(path);
            continue;
        }
        if (in_check(NULL, path, IN_JSON_LIMIT, why, sizeof why) || dpprof_json_parse_file(path, (size_t)1 << 30, &doc) != 0) {
            if (!why[0]) snprintf(why, sizeof why, "%.280s", dpprof_last_error());
        } else {
            const char *exp, *st;
            root = dpprof_json_root(doc);
            exp = dpprof_json_string(dpprof_json_get(root, "experiment")), st = dpprof_json_string(dpprof_json_get(root, "status"));
            if (!exp || strcmp(exp, r->sp.name)) snprintf(why, sizeof why, "a result of another experiment");
            else if (!st || strcmp(st, "ok")) snprintf(why, sizeof why, "status %.20s", st ? st : "(none)");
            else rep_config_matches(r, c, dpprof_json_get(root, "config"), why, sizeof why);
            m = rep_num(dpprof_json_get(root, "avg_time_ms")), t = rep_num(dpprof_json_path(root, "throughput.tokens_per_s"));
            if (!why[0] && !(m == m && t == t)) snprintf(why, sizeof why, "no step time");
            if (!why[0]) ms[n] = m, tok[n++] = t;
        }
        if (why[0]) snprintf(x->rep_note, sizeof x->rep_note, "repeat %d left out: %.200s", k, why);
        dpprof_json_free(doc);
        free(path);
    }
    x->nrep = n;
    if (n < 2) return;
    {
        const double first = x->step_ms;
        x->step_ms = rep_median(ms, n), x->step_lo = ms[0], x->step_hi = ms[n - 1];
        x->tokens_s = rep_median(tok, n), x->tok_lo = tok[0], x->tok_hi = tok[n - 1];
        if (x->mfu == x->mfu) x->mfu *= first / x->step_ms; /* the same flops over the median step */
        if (x->model_mfu == x->model_mfu) x->model_mfu *= first / x->step_ms;
    }
}

/* s is n to m hex digits (lower case), nothing else */
static int rep_hex(const char *s, size_t n, size_t m) {
    const size_t len = strlen(s);
    return len >= n && len <= m && strspn(s, "0123456789abcdef") == len;
}

/* the provenance line of a recorded commit: the same commit in the length both have (7 digits at least) */
static const rep_prov *rep_prov_find(const rep_provs *t, const char *commit) {
    int i;
    for (i = 0; i < t->n; i++) {
        const size_t a = strlen(commit), b = strlen(t->p[i].recorded), n = a < b ? a : b;
        if (n >= 7 && !strncmp(commit, t->p[i].recorded, n)) return &t->p[i];
    }
    return NULL;
}

/* DIR/provenance, where there is one; a line that is not "RECORDED COMPILED SHA256" is refused with its number (in err) */
static int rep_prov_load(const char *dir, rep_provs *t, char *err, size_t ecap) {
    char path[4096], *buf = NULL;
    size_t cap = 0;
    FILE *f;
    int ln = 0, rc = EXIT_OK;
    t->n = 0;
    snprintf(path, sizeof path, "%s/provenance", dir);
    if (access(path, F_OK) != 0) return EXIT_OK;
    if (in_check("provenance", path, 1 << 20, err, ecap)) return EXIT_USAGE;
    if (!(f = fopen(path, "r"))) return snprintf(err, ecap, "%s: cannot open: %s", path, strerror(errno)), EXIT_USAGE;
    while (rc == EXIT_OK && getline(&buf, &cap, f) != -1) {
        char *tok[4], *save = NULL, *hash;
        int n = 0, i;
        ln++;
        if ((hash = strchr(buf, '#'))) *hash = 0;
        for (tok[0] = strtok_r(buf, " \t\r\n", &save); tok[n] && n < 3;) tok[++n] = strtok_r(NULL, " \t\r\n", &save);
        if (n == 0) continue;
        if (n != 3 || tok[3] || !rep_hex(tok[0], 7, 40) || !rep_hex(tok[1], 7, 40) || !rep_hex(tok[2], 64, 64))
            rc = EXIT_USAGE, snprintf(err, ecap, "%s:%d: not 'RECORDED-COMMIT COMPILED-COMMIT SHA256' (two commits of 7 to 40 hex digits, a hash of 64)", path, ln);
        else if (t->n == REP_MAXPROV) rc = EXIT_USAGE, snprintf(err, ecap, "%s:%d: more than %d lines", path, ln, REP_MAXPROV);
        else {
            for (i = 0; i < t->n; i++) /* one answer for a recorded commit */
                if (!strncmp(t->p[i].recorded, tok[0], 12) && (strncmp(t->p[i].compiled, tok[1], 12) || strcmp(t->p[i].sha, tok[2]))) break;
            if (i < t->n) rc = EXIT_USAGE, snprintf(err, ecap, "%s:%d: commit %.12s is given another build on an earlier line", path, ln, tok[0]);
            else {
                rep_prov *p = &t->p[t->n++];
                snprintf(p->recorded, sizeof p->recorded, "%.12s", tok[0]);
                snprintf(p->compiled, sizeof p->compiled, "%.12s", tok[1]);
                snprintf(p->sha, sizeof p->sha, "%s", tok[2]);
            }
        }
    }
    free(buf);
    fclose(f);
    return rc;
}

/* what a result was built from: meta.git_commit and meta.source_sha256; where it records no hash, the folder's
   provenance line for its commit gives the commit compiled and the hash (stated; recorded: the commit the result
   names, where the line names another) */
static rep_build rep_build_of(const dpprof_json *root, const rep_provs *t) {
    rep_build b;
    const char *cm = dpprof_json_string(dpprof_json_path(root, "meta.git_commit")), *sha = dpprof_json_string(dpprof_json_path(root, "meta.source_sha256"));
    const rep_prov *p;
    memset(&b, 0, sizeof b);
    snprintf(b.commit, sizeof b.commit, "%.12s", cm ? cm : "");
    if (sha && rep_hex(sha, 64, 64)) snprintf(b.source, sizeof b.source, "%s", sha);
    else if ((p = rep_prov_find(t, b.commit)) != NULL) {
        if (strcmp(p->compiled, b.commit)) snprintf(b.recorded, sizeof b.recorded, "%s", b.commit);
        snprintf(b.commit, sizeof b.commit, "%s", p->compiled);
        snprintf(b.source, sizeof b.source, "%s", p->sha);
        b.stated = 1;
    }
    return b;
}

static void rep_load(rep *r, long long c) {
    rep_res *x = &r->res[c];
    char *path = sweep_path(r->dir, "", r->sp.id[c], ".json");
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root, *ph;
    char err[256];
    int k;
    memset(x, 0, sizeof *x);
    x->peak = x->params = x->trainable = x->epsilon = x->step_ms = x->tokens_s = x->mfu = x->model_mfu = x->dram = x->norm_dram = x->norm_flops = x->norm_roof = x->dry_peak = x->drv_peak = x->peak_full = NAN;
    if (!path) return;
    if (access(path, F_OK) != 0) { /* not run (yet): missing, and the summary counts it */
        free(path);
        return;
    }
    if (in_check(NULL, path, IN_JSON_LIMIT, err, sizeof err) || (dpprof_json_parse_file(path, (size_t)1 << 30, &doc) != 0 && snprintf(err, sizeof err, "%s", dpprof_last_error()) >= 0)) {
        snprintf(x->skipped, sizeof x->skipped, "%.260s", err);
        free(path);
        return;
    }
    free(path);
    root = dpprof_json_root(doc);
    { /* a result of this experiment, or nothing: a foreign or truncated file is named, not used */
        const char *exp = dpprof_json_string(dpprof_json_get(root, "experiment")), *st = dpprof_json_string(dpprof_json_get(root, "status"));
        if (dpprof_json_kind(root) != DPPROF_JSON_OBJECT || !st) snprintf(x->skipped, sizeof x->skipped, "not a dpprof result (no status)");
        else if (!exp || strcmp(exp, r->sp.name) != 0)
            snprintf(x->skipped, sizeof x->skipped, "a result of experiment '%.100s', not of '%.100s'", exp ? exp : "(none)", r->sp.name);
        if (!x->skipped[0]) rep_config_matches(r, c, dpprof_json_get(root, "config"), x->skipped, sizeof x->skipped);
        if (x->skipped[0]) {
            dpprof_json_free(doc);
            return;
        }
    }
    x->have = 1;
    snprintf(x->status, sizeof x->status, "%s", dpprof_json_string(dpprof_json_get(root, "status")) ? dpprof_json_string(dpprof_json_get(root, "status")) : "?");
    {
        const char *be = dpprof_json_string(dpprof_json_path(root, "config.backend")), *dev = dpprof_json_string(dpprof_json_path(root, "meta.device"));
        snprintf(x->backend, sizeof x->backend, "%s", be ? be : "unknown");
        snprintf(x->device, sizeof x->device, "%s", dev ? dev : "unknown");
        dev = dpprof_json_string(dpprof_json_path(root, "meta.date"));
        snprintf(x->date, sizeof x->date, "%.10s", dev ? dev : "");
        x->build = rep_build_of(root, &r->prov);
    }
    x->mem_limit = rep_num(dpprof_json_path(root, "config.memory_limit"));
    x->peak = rep_num(dpprof_json_path(root, "breakdown.bytes.peak"));
    if (!strcmp(x->status, "oom")) x->peak_full = rep_num(dpprof_json_path(root, "peak_without_limit.bytes"));
    /* the three peaks of a cuda run (meta.memory; a result from before it has the driver's figure in MiB alone) */
    x->dry_peak = rep_num(dpprof_json_path(root, "meta.memory.dry_peak_bytes"));
    x->drv_peak = rep_num(dpprof_json_path(root, "meta.memory.driver_peak_bytes"));
    if (!(x->drv_peak == x->drv_peak)) x->drv_peak = rep_num(dpprof_json_path(root, "meta.driver_peak_used_mb")) * 1048576.0;
    for (k = 0; k < DPPROF_CAT_COUNT; k++) {
        char p[96];
        snprintf(p, sizeof p, "breakdown.bytes.%s", dpprof_category_name(k));
        x->cat[k] = rep_num(dpprof_json_path(root, p));
    }
    if (!strcmp(x->status, "ok") && !(x->peak == x->peak)) /* "ok" with no memory: said, so that its empty cells are not taken for zeros */
        snprintf(x->incomplete, sizeof x->incomplete, "status ok but no breakdown.bytes.peak: its memory is not in the result");
    for (k = -1; k < DPPROF_CAT_COUNT; k++) { /* bytes the accountant counted: whole, 0 to 2^63 */
        const double v = k < 0 ? x->peak : x->cat[k];
        if (v == v && (v < 0 || v > 9.2233720368547758e18 || v != floor(v))) {
            snprintf(x->skipped, sizeof x->skipped, "breakdown.bytes.%s = %.6g is not a byte count (0 to 2^63)", k < 0 ? "peak" : dpprof_category_name(k), v);
            x->have = 0;
            dpprof_json_free(doc);
            return;
        }
    }
    for (k = 0; k < DPPROF_MOD_COUNT; k++) {
        char p[96];
        snprintf(p, sizeof p, "modules.bytes.%s", dpprof_module_name(k));
        x->mod[k] = rep_num(dpprof_json_path(root, p));
    }
    ph = dpprof_json_get(root, "phases");
    for (k = 0; k < DPPROF_PHASE_COUNT; k++) {
        const dpprof_json *p = dpprof_json_get(ph, dpprof_phase_name(k));
        double cnt = rep_num(dpprof_json_get(p, "count"));
        x->ph_bytes[k] = p ? rep_num(dpprof_json_get(p, "bytes_analytic")) : 0;
        x->ph_flops[k] = p ? rep_num(dpprof_json_get(p, "flops")) : 0;
        x->ph_peak[k] = p ? rep_num(dpprof_json_get(p, "bytes_peak")) : NAN;
        x->ph_ms[k] = p ? rep_num(dpprof_json_get(p, "time_ms_mean")) * (k > DPPROF_PHASE_PRIVACY_SETUP ? cnt : 1) : NAN; /* per step below */
        {
            static const char *const tk[4] = {"dram_read_bytes", "dram_write_bytes", "l2_read_bytes", "l2_write_bytes"};
            int t;
            for (t = 0; t < 4; t++) x->ph_traffic[k][t] = p ? rep_num(dpprof_json_get(p, tk[t])) : NAN;
        }
        if (p) { /* measured (--dram): numbers; "unavailable" strings read as nan and are skipped */
            double dr = rep_num(dpprof_json_get(p, "dram_read_bytes")), dw = rep_num(dpprof_json_get(p, "dram_write_bytes"));
            if (dr == dr && dw == dw) x->dram = (x->dram == x->dram ? x->dram : 0) + dr + dw;
        }
        /* per step: the per-occurrence mean times the occurrences, over the steps run */
        if (p && k > DPPROF_PHASE_PRIVACY_SETUP && cnt == cnt) {
            x->moved += x->ph_bytes[k] * cnt;
            x->flops += x->ph_flops[k] * cnt;
        }
    }
    {
        double steps = rep_num(dpprof_json_path(root, "config.steps")) + rep_num(dpprof_json_path(root, "config.warmup"));
        x->moved = steps > 0 ? x->moved / steps : NAN;
        x->flops = steps > 0 ? x->flops / steps : NAN;
        for (k = DPPROF_PHASE_PRIVACY_SETUP + 1; k < DPPROF_PHASE_COUNT; k++) x->ph_ms[k] = steps > 0 ? x->ph_ms[k] / steps : NAN;
    }
    x->params = rep_num(dpprof_json_path(root, "config.param_count"));
    x->trainable = rep_num(dpprof_json_path(root, "config.trainable_count"));
    x->epsilon = rep_num(dpprof_json_path(root, "privacy.epsilon"));
    x->step_ms = rep_num(dpprof_json_get(root, "avg_time_ms"));
    x->step_range = rep_step_range(root);
    x->tokens_s = rep_num(dpprof_json_path(root, "throughput.tokens_per_s"));
    /* mfu: the executed flops (every op's cost) over the step time and the flop peak: analytic_flops_share_of_peak
       in every schema version (schema 1's "mfu" was the model flops'); model_mfu: the 3 x forward convention */
    x->mfu = rep_num(dpprof_json_path(root, "throughput.analytic_flops_share_of_peak"));
    x->model_mfu = rep_num(dpprof_json_path(root, rep_num(dpprof_json_get(root, "schema_version")) >= 2 ? "throughput.model_flops_utilization" : "throughput.mfu"));
    { /* the per-sample norm kernels (--op-times): their achieved share of the device's dram peak and of the
         compute peak of the run's dtype (fp32 cores; bf16 tensor cores, where they run in bf16) */
        const dpprof_json *ops = dpprof_json_path(root, "throughput.ops.by_op");
        const char *dt = dpprof_json_string(dpprof_json_path(root, "config.dtype"));
        const char *share = dt && !strcmp(dt, "bf16") ? "share_of_bf16_peak" : "share_of_fp32_peak";
        double ms = 0, by = 0, fl = 0, pb = NAN, pf = NAN, tb = 0, tf = 0;
        size_t i;
        for (i = 0; i < dpprof_json_len(ops); i++) { /* the peaks the run used, from any op's rate and share */
            const dpprof_json *o = dpprof_json_member(ops, i);
            double bs = rep_num(dpprof_json_get(o, "bytes_per_s")), sb = rep_num(dpprof_json_get(o, "share_of_dram_peak"));
            double fs = rep_num(dpprof_json_get(o, "flops_per_s")), sf = rep_num(dpprof_json_get(o, share));
            if (bs > 0 && sb > 0) pb = bs / sb;
            if (fs > 0 && sf > 0) pf = fs / sf;
        }
        for (i = 0; i < dpprof_json_len(ops); i++) {
            const char *nm = dpprof_json_key(ops, i);
            const dpprof_json *o = dpprof_json_member(ops, i);
            double m = rep_num(dpprof_json_get(o, "ms")), b = rep_num(dpprof_json_get(o, "bytes_analytic")), fo = rep_num(dpprof_json_get(o, "flops"));
            if (nm && m == m && x->nops < REP_MAXOPS) { /* every op, for the ops tables */
                snprintf(x->opname[x->nops], sizeof x->opname[0], "%s", nm);
                x->opms[x->nops++] = m;
            }
            { /* --dram-ops: the op's measured dram bytes in the counters step, beside its analytic bytes there */
                const dpprof_json *t = dpprof_json_get(o, "traffic");
                const double ta = rep_num(dpprof_json_get(t, "bytes_analytic")), tr = rep_num(dpprof_json_get(t, "dram_read_bytes")) + rep_num(dpprof_json_get(t, "dram_write_bytes"));
                if (nm && ta == ta && tr == tr && x->ntr < REP_MAXOPS) {
                    snprintf(x->trname[x->ntr], sizeof x->trname[0], "%s", nm);
                    x->tran[x->ntr] = ta;
                    x->trdram[x->ntr++] = tr;
                }
            }
            if (!nm || !(strstr(nm, "sqnorm") || strstr(nm, "gram"))) continue;
            if (m == m && b == b && fo == fo) {
                ms += m;
                by += b;
                fl += fo;
                /* each op's roofline time is bounded by its own intensity: bytes over the dram peak or flops
                   over the compute peak, the longer; summed by which one it was */
                if (b / pb >= fo / pf) tb += b / pb;
                else tf += fo / pf;
            }
        }
        x->norm_dram = ms > 0 ? by / (ms * 1e-3) / pb : NAN;
        x->norm_flops = ms > 0 ? fl / (ms * 1e-3) / pf : NAN;
        x->norm_roof = ms > 0 && pb > 0 && pf > 0 ? (tb + tf) / (ms * 1e-3) : NAN;
        if (x->norm_roof == x->norm_roof)
            snprintf(x->norm_bound, sizeof x->norm_bound, "%s", tb >= tf ? "DRAM bandwidth" : (dt && !strcmp(dt, "bf16") ? "bf16 tensor-core peak" : "fp32 peak"));
    }
    dpprof_json_free(doc);
    rep_load_repeats(r, c);
}

static int rep_axis(const rep *r, const char *name) {
    int a;
    for (a = 0; name && a < r->sp.naxis; a++)
        if (!strcmp(r->sp.axis[a].name, name)) return a;
    return -1;
}

static const char *rep_label(const rep *r, long long c, int a) { return r->sp.axis[a].val[sweep_pick(&r->sp, c, a)].label; }

/* does configuration c satisfy "where=axis:label,..." */
static int rep_where(const rep *r, long long c, const char *where) {
    char buf[512], *tok, *save = NULL;
    if (!where || !*where) return 1;
    snprintf(buf, sizeof buf, "%s", where);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        int a;
        if (!colon) return 0;
        *colon = 0;
        a = rep_axis(r, tok);
        if (a < 0 || strcmp(rep_label(r, c, a), colon + 1) != 0) return 0;
    }
    return 1;
}

/* the configuration that matches `where` and has label la on axis a and lb on axis b (b may be -1) */
static long long rep_find(const rep *r, const char *where, int a, const char *la, int b, const char *lb) {
    long long c;
    for (c = 0; c < r->sp.nconf; c++)
        if (rep_where(r, c, where) && (a < 0 || !strcmp(rep_label(r, c, a), la)) && (b < 0 || !strcmp(rep_label(r, c, b), lb))) return c;
    return -1;
}

/* the sibling of configuration c whose "algo" label is ref (same other labels), or -1 */
static long long rep_sibling(const rep *r, long long c, const char *ref) {
    int a = rep_axis(r, "algo"), b;
    long long d;
    if (a < 0) return -1;
    for (d = 0; d < r->sp.nconf; d++) {
        if (strcmp(rep_label(r, d, a), ref)) continue;
        for (b = 0; b < r->sp.naxis; b++)
            if (b != a && strcmp(rep_label(r, d, b), rep_label(r, c, b))) break;
        if (b == r->sp.naxis) return d;
    }
    return -1;
}

/* configuration c's vanilla sibling where both finished, else -1 */
static long long rep_vanilla_ok(const rep *r, long long c) {
    long long d = rep_sibling(r, c, "vanilla");
    return d < 0 || !r->res[c].have || strcmp(r->res[c].status, "ok") || !r->res[d].have || strcmp(r->res[d].status, "ok") ? -1 : d;
}

/* throughput of configuration c relative to its vanilla sibling (measured: cuda) */
static double rep_speed(const rep *r, long long c) {
    long long d = rep_vanilla_ok(r, c);
    if (d < 0) return NAN;
    return r->res[c].tokens_s / r->res[d].tokens_s;
}

/* vanilla's analytic flops of a step over configuration c's: the speed against vanilla that c would have if
   both ran at the same flop rate (the ceiling of its speed at kernels as efficient as vanilla's) */
static double rep_flop_ceiling(const rep *r, long long c) {
    long long d = rep_vanilla_ok(r, c);
    if (d < 0 || !(r->res[c].flops > 0)) return NAN;
    return r->res[d].flops / r->res[c].flops;
}

/* configuration c's peak: its result's where it fit (ok), its peak without the limit where it did not (oom and the
   result holds it, exact on the dry backend); else nan */
static double rep_full_peak(const rep *r, long long c) {
    const rep_res *x = c >= 0 ? &r->res[c] : NULL;
    if (!x || !x->have) return NAN;
    return !strcmp(x->status, "ok") ? x->peak : (!strcmp(x->status, "oom") ? x->peak_full : NAN);
}

/* peak of configuration c (ok; or oom, where full: its peak without the limit) relative to its sibling whose "algo"
   label is ref (same other labels), whose peak without the limit stands where it did not fit */
static double rep_overhead_of(const rep *r, long long c, const char *ref, int full) {
    long long d;
    if (c < 0 || !r->res[c].have || (strcmp(r->res[c].status, "ok") && !full)) return NAN;
    d = rep_sibling(r, c, ref);
    return d < 0 ? NAN : rep_full_peak(r, c) / rep_full_peak(r, d);
}
static double rep_overhead(const rep *r, long long c, const char *ref) { return rep_overhead_of(r, c, ref, 0); }

#define REP_GIB 1073741824.0
static double rep_metric(const rep *r, long long c, const char *m) {
    const rep_res *x;
    int k;
    if (c < 0) return NAN;
    x = &r->res[c];
    if (!x->have || strcmp(x->status, "ok")) return NAN;
    if (!strcmp(m, "peak_gib")) return x->peak / REP_GIB;
    if (!strcmp(m, "overhead")) return rep_overhead(r, c, "vanilla");
    if (!strcmp(m, "params_b")) return x->params / 1e9;
    if (!strcmp(m, "trainable_m")) return x->trainable / 1e6;
    if (!strcmp(m, "epsilon")) return x->epsilon;
    if (!strcmp(m, "step_ms")) return x->step_ms;
    if (!strcmp(m, "gib_s")) return x->peak / REP_GIB * x->step_ms / 1e3;
    if (!strcmp(m, "tokens_per_s")) return x->tokens_s;
    if (!strcmp(m, "moved_gib")) return x->moved / REP_GIB;
    if (!strcmp(m, "tflop")) return x->flops / 1e12;
    if (!strcmp(m, "mfu")) return 100.0 * x->mfu;
    if (!strcmp(m, "model_mfu")) return 100.0 * x->model_mfu;
    if (!strcmp(m, "speed")) return rep_speed(r, c);
    if (!strcmp(m, "flop_ceiling")) return rep_flop_ceiling(r, c);
    if (!strcmp(m, "dram_gib")) return x->dram / REP_GIB;
    if (!strcmp(m, "norm_dram_pct")) return 100.0 * x->norm_dram;
    if (!strcmp(m, "norm_flops_pct")) return 100.0 * x->norm_flops;
    if (!strcmp(m, "norm_bound_pct")) return 100.0 * x->norm_roof;
    if (!strcmp(m, "dry_peak_gib")) return x->dry_peak / REP_GIB;
    if (!strcmp(m, "driver_peak_gib")) return x->drv_peak / REP_GIB;
    if (!strcmp(m, "dram_ratio")) return x->moved > 0 ? x->dram / x->moved : NAN;
    if (!strcmp(m, "step_range_pct")) return x->step_range;
    if (x->nrep >= 2) { /* the range of the repeats: speed against non-private's median, mfu at each end's step */
        const double sp = rep_speed(r, c);
        if (!strcmp(m, "repeats")) return x->nrep;
        if (!strcmp(m, "step_ms_min")) return x->step_lo;
        if (!strcmp(m, "step_ms_max")) return x->step_hi;
        if (!strcmp(m, "tokens_per_s_min")) return x->tok_lo;
        if (!strcmp(m, "tokens_per_s_max")) return x->tok_hi;
        if (!strcmp(m, "speed_min")) return sp * x->step_ms / x->step_hi;
        if (!strcmp(m, "speed_max")) return sp * x->step_ms / x->step_lo;
        if (!strcmp(m, "mfu_min")) return 100.0 * x->mfu * x->step_ms / x->step_hi;
        if (!strcmp(m, "mfu_max")) return 100.0 * x->mfu * x->step_ms / x->step_lo;
    }
    for (k = 0; k < DPPROF_CAT_COUNT; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s_gib", dpprof_category_name(k));
        if (!strcmp(m, name)) return x->cat[k] / REP_GIB;
    }
    return NAN;
}

/* an oom configuration's metric from its peak without the limit (peak_gib, overhead; nan for the rest, and for
   a configuration that fit or whose result does not hold that peak) */
static double rep_metric_full(const rep *r, long long c, const char *m) {
    if (c < 0 || !r->res[c].have || strcmp(r->res[c].status, "oom") || !(r->res[c].peak_full == r->res[c].peak_full)) return NAN;
    if (!strcmp(m, "peak_gib")) return r->res[c].peak_full / REP_GIB;
    if (!strcmp(m, "overhead")) return rep_overhead_of(r, c, "vanilla", 1);
    return NAN;
}

static int rep_known_metric(const char *m) {
    int k;
    for (k = 0; k < (int)(sizeof rep_metrics / sizeof rep_metrics[0]); k++)
        if (!strcmp(m, rep_metrics[k])) return 1;
    for (k = 0; k < DPPROF_CAT_COUNT; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s_gib", dpprof_category_name(k));
        if (!strcmp(m, name)) return 1;
    }
    return 0;
}

/* a metric that only a timed run (cuda, or cpu for time) has */
static int rep_measured_metric(const char *m) {
    static const char *const t[] = {"step_ms", "tokens_per_s", "mfu", "speed", "dram_gib", "norm_dram_pct", "norm_flops_pct", "norm_bound_pct", "gib_s", "driver_peak_gib", "dram_ratio", "step_range_pct"};
    size_t k;
    for (k = 0; m && k < sizeof t / sizeof t[0]; k++)
        if (!strcmp(m, t[k])) return 1;
    return 0;
}

/* the backends and devices of the ok results that match `where` (all: NULL), "cuda on NVIDIA H200 (3 results)"
   (without the count unless counts) joined by "; "; timed: only those with a measured step time. "none" when there is none */
static int rep_sources_n(const rep *r, const char *where, int timed, int counts, char *out, size_t cap) {
    long long c, d;
    int n = 0;
    size_t len = 0;
    out[0] = 0;
    for (c = 0; c < r->sp.nconf; c++) {
        const rep_res *x = &r->res[c];
        long long count = 0;
        if (!x->have || strcmp(x->status, "ok") || !rep_where(r, c, where) || (timed && x->step_ms != x->step_ms)) continue;
        for (d = 0; d < c; d++) /* the first of its kind names it */
            if (r->res[d].have && !strcmp(r->res[d].status, "ok") && rep_where(r, d, where) && !(timed && r->res[d].step_ms != r->res[d].step_ms) &&
                !strcmp(r->res[d].backend, x->backend) && !strcmp(r->res[d].device, x->device)) break;
        if (d < c) continue;
        for (d = c; d < r->sp.nconf; d++)
            count += r->res[d].have && !strcmp(r->res[d].status, "ok") && rep_where(r, d, where) && !(timed && r->res[d].step_ms != r->res[d].step_ms) &&
                     !strcmp(r->res[d].backend, x->backend) && !strcmp(r->res[d].device, x->device);
        if (len < cap) len += (size_t)snprintf(out + len, cap - len, "%s%s%s%s", n ? "; " : "", x->backend, strcmp(x->backend, x->device) ? " on " : "",
                                               strcmp(x->backend, x->device) ? x->device : "");
        if (counts && len < cap) len += (size_t)snprintf(out + len, cap - len, " (%lld result%s)", count, count == 1 ? "" : "s");
        n++;
    }
    if (!n) snprintf(out, cap, "none");
    return n;
}
static int rep_sources(const rep *r, const char *where, int timed, char *out, size_t cap) { return rep_sources_n(r, where, timed, 1, out, cap); }

/* a figure's or table's title names what measured a measured metric, or says in one sentence that nothing did */
static void rep_title_source(const rep *r, const char *where, const char *metric, char *title, size_t cap) {
    char src[256];
    size_t len = strlen(title);
    if (!rep_measured_metric(metric) || len >= cap) return;
    if (rep_sources_n(r, where, 1, 0, src, sizeof src)) {
        strncat(title, ", measured: ", cap - len - 1);
        strncat(title, src, cap - strlen(title) - 1);
    } else strncat(title, ". Not measured: no result here has a timed run (run it on a GPU: BACKEND=cuda)", cap - len - 1);
}

static const char *rep_metric_unit(const char *m) {
    if (!strcmp(m, "moved_gib")) return "GiB per step, analytic";
    if (!strcmp(m, "dram_gib")) return "GiB per step, measured DRAM read + write";
    if (!strcmp(m, "mfu")) return "% MFU, executed FLOPs";
    if (!strcmp(m, "model_mfu")) return "% MFU, model FLOPs (3 x forward)";
    if (!strcmp(m, "norm_dram_pct")) return "% of DRAM peak, norm kernels";
    if (!strcmp(m, "norm_flops_pct")) return "% of the dtype's compute peak, norm kernels";
    if (!strcmp(m, "norm_bound_pct")) return "% of the roofline bound, norm kernels";
    if (!strcmp(m, "speed")) return "x vanilla tokens/s";
    if (!strcmp(m, "tflop")) return "TFLOP per step, analytic";
    if (strstr(m, "_gib")) return "GiB";
    if (!strcmp(m, "overhead")) return "x vanilla";
    if (!strcmp(m, "step_ms")) return "ms";
    if (!strcmp(m, "gib_s")) return "GiB s, the peak held for one step";
    if (!strcmp(m, "dram_ratio")) return "x analytic bytes";
    if (!strcmp(m, "tokens_per_s")) return "tokens/s";
    if (!strcmp(m, "step_range_pct")) return "% of the median step, range of the timed steps";
    return "";
}

/* ---- words for a reader: axis names, metrics, labels and categories as a figure shows them ---------- */
static const char *rep_axis_title(const char *axis) {
    /* clang-format off */
    static const char *const t[][2] = {{"seq", "sequence length T (tokens)"}, {"phys", "physical batch b"}, {"batch", "logical batch B"},
                                       {"algo", "algorithm"}, {"mode", "fine-tuning"}, {"dtype", "storage"}, {"checkpoint", "activation checkpointing"},
                                       {"ranks", "GPUs"}, {"zero", "ZeRO stage"}, {"shape", "model and shape"}, {"lora", "LoRA rank"},
                                       {"train", "training"}, {"kernel", "clipped-sum kernel"}};
    /* clang-format on */
    size_t k;
    for (k = 0; axis && k < sizeof t / sizeof t[0]; k++)
        if (!strcmp(axis, t[k][0])) return t[k][1];
    return axis ? axis : "";
}

/* "peak memory (GiB)", or the metric and its unit */
static void rep_metric_title(const char *m, char *out, size_t cap) {
    /* clang-format off */
    static const char *const t[][2] = {{"peak_gib", "peak memory (GiB)"}, {"speed", "throughput (x non-private)"},
                                       {"mfu", "MFU (% of the tensor-core peak)"}, {"tokens_per_s", "throughput (tokens/s)"},
                                       {"step_ms", "step time (ms)"}, {"overhead", "peak (x non-private)"},
                                       {"tflop", "TFLOP per step (analytic)"}, {"moved_gib", "GiB moved per step (analytic)"},
                                       {"dram_gib", "DRAM GiB per step (measured)"}, {"step_range_pct", "range of the timed steps (% of their median)"}};
    /* clang-format on */
    size_t k;
    for (k = 0; m && k < sizeof t / sizeof t[0]; k++)
        if (!strcmp(m, t[k][0])) {
            snprintf(out, cap, "%s", t[k][1]);
            return;
        }
    snprintf(out, cap, "%s (%s)", m ? m : "", rep_metric_unit(m ? m : ""));
}

/* the labels of an axis as a figure or table shows them: "p2" -> "2" and "r16" -> "16" where every label of the axis is
   one prefix of letters and a number (the axis title names it), else unchanged; in a legend, which shows no axis title,
   the title goes before the number ("ZeRO stage 2") */
#define REP_DISP 40
static void rep_disp_legend(const rep *r, int a, const char **in, int n, char (*buf)[REP_DISP], const char **out, int legend) {
    int i, strip = a >= 0 && n > 0;
    size_t pre = 0;
    for (i = 0; i < n && strip; i++) {
        size_t p = strspn(in[i], "abcdefghijklmnopqrstuvwxyz");
        if (i == 0) pre = p;
        strip = p > 0 && p == pre && !strncmp(in[i], in[0], p) && in[i][p] && strspn(in[i] + p, "0123456789") == strlen(in[i] + p);
    }
    for (i = 0; i < n; i++) {
        if (strip && legend) snprintf(buf[i], REP_DISP, "%.24s %s", rep_axis_title(r->sp.axis[a].name), in[i] + pre);
        else snprintf(buf[i], REP_DISP, "%s", strip ? in[i] + pre : in[i]);
        out[i] = buf[i];
    }
}
static void rep_disp_labels(const rep *r, int a, const char **in, int n, char (*buf)[REP_DISP], const char **out) {
    rep_disp_legend(r, a, in, n, buf, out, 0);
}

/* title= xlabel= ylabel= of the figure line, where given, replace the generated ones; a given title of a measured metric
   is followed by what measured it */
static void rep_user_labels(const rep *r, const rep_line *l, const char *where, const char *metric, char *title, size_t cap, const char **xlabel,
                            const char **ylabel) {
    const char *t = rep_get(l, "title"), *x = rep_get(l, "xlabel"), *y = rep_get(l, "ylabel");
    if (t) {
        char src[256];
        snprintf(title, cap, "%s", t);
        if (metric && rep_measured_metric(metric) && rep_sources_n(r, where, 1, 0, src, sizeof src)) {
            const char *on = strstr(src, " on ");
            strncat(title, ", ", cap - strlen(title) - 1);
            strncat(title, on ? on + 4 : src, cap - strlen(title) - 1);
        }
    }
    if (x && xlabel) *xlabel = x;
    if (y && ylabel) *ylabel = y;
}

/* the leading integer of a label ("b64" -> 64, "512" -> 512) */
static double rep_label_num(const char *s) {
    while (*s && (*s < '0' || *s > '9')) s++;
    return *s ? strtod(s, NULL) : NAN;
}

/* the value with the decimals a paper table wants; past 1e9 or under 1e-3 in scientific notation */
static void rep_fmt(char *out, size_t n, const char *metric, double v) {
    if (v != v) snprintf(out, n, "--");
    else if (fabs(v) >= 1e9 || (v != 0 && fabs(v) < 1e-3)) snprintf(out, n, "%.3e", v);
    else if (!strcmp(metric, "overhead")) snprintf(out, n, "%.2f", v);
    else if (!strncmp(metric, "step_ms", 7) || !strncmp(metric, "tokens_per_s", 12) || !strcmp(metric, "largest_batch") || !strcmp(metric, "repeats")) snprintf(out, n, "%.0f", v);
    else if (fabs(v) >= 100) snprintf(out, n, "%.1f", v);
    else snprintf(out, n, "%.2f", v);
}

/* ---- outputs ---------------------------------------------------------------------------------------- */
static int rep_png(const rep *r, const char *fig, dpprof_canvas *cv) {
    char path[4096];
    out_file af;
    snprintf(path, sizeof path, "%s/%s-%s.png", r->figdir, r->sp.name, fig);
    if (out_open(&af, path, "figure")) return EXIT_ERROR;
    if (out_png(&af, cv) || out_commit(&af)) {
        out_abort(&af);
        return EXIT_ERROR;
    }
    fprintf(r->summary, "figure %s\n", path);
    return EXIT_OK;
}

/* the labels of axis a that occur among configurations matching `where` */
static int rep_labels(const rep *r, int a, const char **out, int max) {
    int v, n = 0;
    for (v = 0; v < r->sp.axis[a].nval && n < max; v++) out[n++] = r->sp.axis[a].val[v].label;
    return n;
}

static const unsigned char *rep_series_rgb(const rep *r, int axis, const char *label, int index) {
    /* algorithms keep one colour in every figure */
    if (axis >= 0 && !strcmp(r->sp.axis[axis].name, "algo")) {
        int al = dpprof_algo_parse(label);
        if (al > 0) return dpprof_plot_algo_colour(al - 1);
    }
    return dpprof_plot_palette(index);
}

/* render grouped bars at paper size into FIGDIR/NAME-FIG.png; frees val */
static int rep_bars_png(const rep *r, const rep_line *l, dpprof_bars_desc *d, double *val) {
    dpprof_canvas cv;
    int rc;
    d->width = REP_FIG_W;
    d->height = REP_FIG_H;
    d->text_scale = REP_FIG_TEXT;
    d->values = val;
    memset(&cv, 0, sizeof cv);
    rc = dpprof_plot_bars(d, &cv);
    free(val);
    rc = rc == 0 ? rep_png(r, l->fig, &cv) : rep_bad(r, l->line, "cannot render the figure '%s'", l->fig);
    dpprof_canvas_free(&cv);
    return rc;
}

#define REP_MAXL 64
/* grouped bars: x axis labels, one series per label of another axis */
static int rep_fig_bars(rep *r, const rep_line *l, int capacity) {
    const char *xs = rep_get(l, "x"), *ss = rep_get(l, "series"), *metric = rep_get(l, "value"), *where = rep_get(l, "where");
    const char *batch = rep_get(l, "batch");
    int ax = rep_axis(r, xs), as = rep_axis(r, ss), ab = rep_axis(r, batch), nx, ns, i, j;
    const char *xl[REP_MAXL], *sl[REP_MAXL], **miss, *xd[REP_MAXL], *sd[REP_MAXL];
    char xb[REP_MAXL][REP_DISP], sb[REP_MAXL][REP_DISP];
    double *val;
    unsigned char rgb[REP_MAXL * 3];
    dpprof_bars_desc d;
    int rc;
    char title[256], ylabel[128];
    double *lo = NULL, *hi = NULL;
    if (ax < 0) return rep_bad(r, l->line, "x=%s is not an axis of this experiment", xs ? xs : "(missing)");
    if (ss && as < 0) return rep_bad(r, l->line, "series=%s is not an axis of this experiment", ss);
    if (capacity && ab < 0) return rep_bad(r, l->line, "batch=%s is not an axis of this experiment", batch ? batch : "(missing)");
    if (!capacity && (!metric || !rep_known_metric(metric))) return rep_bad(r, l->line, "value=%s is not a metric", metric ? metric : "(missing)");
    nx = rep_labels(r, ax, xl, REP_MAXL);
    ns = as >= 0 ? rep_labels(r, as, sl, REP_MAXL) : 1;
    if (as < 0) sl[0] = metric;
    val = (double *)calloc((size_t)nx * (size_t)ns, sizeof(double));
    miss = (const char **)calloc((size_t)nx * (size_t)ns, sizeof *miss);
    if (!val || !miss) {
        free(val);
        free(miss);
        return EXIT_ERROR;
    }
    for (j = 0; j < ns; j++) {
        memcpy(rgb + 3 * j, rep_series_rgb(r, as, sl[j], j), 3);
        for (i = 0; i < nx; i++) {
            double v = NAN;
            if (capacity) { /* the largest batch among the configurations that fit */
                long long c;
                v = 0;
                for (c = 0; c < r->sp.nconf; c++)
                    if (rep_where(r, c, where) && !strcmp(rep_label(r, c, ax), xl[i]) && !strcmp(rep_label(r, c, as), sl[j]) &&
                        r->res[c].have && !strcmp(r->res[c].status, "ok") && rep_label_num(rep_label(r, c, ab)) > v)
                        v = rep_label_num(rep_label(r, c, ab));
                fprintf(r->macros, "\\dpdef{%s}{%s-%s}{largest_batch}{%.0f}\n", r->sp.name, sl[j], xl[i], v);
            } else {
                long long c = rep_find(r, where, ax, xl[i], as, as >= 0 ? sl[j] : NULL);
                v = rep_metric(r, c, metric);
                if (v != v && c >= 0 && r->res[c].have && strcmp(r->res[c].status, "ok")) miss[j * nx + i] = r->res[c].status; /* "oom" under the bar */
            }
            val[j * nx + i] = v; /* missing or oom (NaN): no bar, labelled with its status or n/a, and the summary says so */
            if (v != v && !capacity)
                fprintf(r->summary, "  %s: %s=%s%s%s%s%s has no %s (%s): no bar, labelled %s\n", l->fig, xs, xl[i], ss ? " " : "", ss ? ss : "", ss ? "=" : "", ss ? sl[j] : "", metric,
                        miss[j * nx + i] ? miss[j * nx + i] : "missing or not measured", miss[j * nx + i] ? miss[j * nx + i] : "n/a");
        }
    }
    if (!capacity) { /* a group none of whose configurations has a result (not run yet) is left out, and named in the summary */
        int keep = 0, k = 0, m;
        for (i = 0; i < nx; i++) {
            for (j = 0; j < ns && val[j * nx + i] != val[j * nx + i] && !miss[j * nx + i]; j++) {}
            if (j < ns) keep |= 1;
        }
        for (i = 0; keep && i < nx; i++) {
            for (j = 0; j < ns && val[j * nx + i] != val[j * nx + i] && !miss[j * nx + i]; j++) {}
            if (j == ns) { /* the summary's, not the figure's: the figure holds what was run, its title names no shape it lacks */
                fprintf(r->summary, "  %s: %s=%s has no result (not run): left out of the figure\n", l->fig, xs, xl[i]);
                continue;
            }
            for (m = 0; m < ns; m++) val[m * nx + k] = val[m * nx + i], miss[m * nx + k] = miss[m * nx + i]; /* k <= i: in place, group by group */
            xl[k++] = xl[i];
        }
        if (keep && k < nx) {
            for (j = 1; j < ns; j++) /* the series' rows from a stride of nx to one of k */
                for (m = 0; m < k; m++) val[j * k + m] = val[j * nx + m], miss[j * k + m] = miss[j * nx + m];
            nx = k;
        }
    }
    memset(&d, 0, sizeof d);
    if (capacity) snprintf(ylabel, sizeof ylabel, "largest physical batch b");
    else rep_metric_title(metric, ylabel, sizeof ylabel);
    snprintf(title, sizeof title, "%s", capacity ? "largest physical batch within the memory limit" : ylabel);
    if (!capacity) rep_title_source(r, where, metric, title, sizeof title);
    d.xlabel = rep_axis_title(xs);
    d.ylabel = ylabel;
    rep_user_labels(r, l, where, capacity ? NULL : metric, title, sizeof title, &d.xlabel, &d.ylabel);
    if (!capacity && (!strcmp(metric, "speed") || !strcmp(metric, "step_ms") || !strcmp(metric, "tokens_per_s") || !strcmp(metric, "mfu"))) {
        /* repeated runs: the bar is their median, a whisker their range */
        char mn[40], mx[40];
        int nrep = 0, most = 0;
        snprintf(mn, sizeof mn, "%s_min", metric), snprintf(mx, sizeof mx, "%s_max", metric);
        lo = (double *)malloc((size_t)nx * (size_t)ns * sizeof *lo), hi = (double *)malloc((size_t)nx * (size_t)ns * sizeof *hi);
        for (j = 0; lo && hi && j < ns; j++)
            for (i = 0; i < nx; i++) {
                long long c = rep_find(r, where, ax, xl[i], as, as >= 0 ? sl[j] : NULL);
                lo[j * nx + i] = rep_metric(r, c, mn), hi[j * nx + i] = rep_metric(r, c, mx);
                if (lo[j * nx + i] == lo[j * nx + i] && (nrep == 0 || r->res[c].nrep < nrep)) nrep = r->res[c].nrep;
                if (lo[j * nx + i] == lo[j * nx + i] && r->res[c].nrep > most) most = r->res[c].nrep;
            }
        if (nrep >= 2) {
            char note[96];
            d.err_lo = lo, d.err_hi = hi;
            if (most > nrep) snprintf(note, sizeof note, "; median of %d to %d runs, whiskers their range", nrep, most);
            else snprintf(note, sizeof note, "; median of %d runs, whiskers their range", nrep);
            if (strlen(title) + strlen(note) < sizeof title) strcat(title, note);
            fprintf(r->summary, "  %s: bars are the median of the repeated runs (%d to %d each), whiskers their fastest and slowest\n", l->fig, nrep, most);
        }
    }
    d.title = title;
    rep_disp_labels(r, ax, xl, nx, xb, xd);
    rep_disp_legend(r, as, sl, ns, sb, sd, 1);
    d.n_groups = nx;
    d.group_names = xd;
    d.n_series = ns;
    d.series_names = sd;
    d.series_rgb = rgb;
    d.missing_labels = miss;
    if (!capacity && metric) /* ratios to two decimals, GiB and percentages to one */
        d.value_decimals = !strcmp(metric, "speed") || !strcmp(metric, "overhead") || !strcmp(metric, "flop_ceiling") ? 2
                         : strstr(metric, "_gib") || !strcmp(metric, "mfu")                                           ? 1
                                                                                                                      : 0;
    rc = rep_bars_png(r, l, &d, val);
    free(miss);
    free(lo);
    free(hi);
    return rc;
}

/* the configuration of ID name-cfgl: its index, or -1 */
static long long rep_config(const rep *r, const char *cfgl, size_t len) {
    char id[512];
    long long c;
    if (!r->sp.id || !r->sp.name) return -1; /* a file the sweep refused names no configuration */
    snprintf(id, sizeof id, "%s-%.*s", r->sp.name, (int)(len < 400 ? len : 400), cfgl);
    for (c = 0; c < r->sp.nconf; c++)
        if (!strcmp(r->sp.id[c], id)) return c;
    return -1;
}

/* a timeline's configurations: config=ID,ID,... (IDs without the experiment's name), each one of this experiment,
   at most TL_MAX_PANELS, none twice; their indexes into c. returns how many, or -1 having said why */
static int rep_timeline_configs(const rep *r, const rep_line *l, long long *c) {
    const char *v = rep_get(l, "config"), *p, *e;
    int n = 0, k;
    if (!v || !*v) return rep_bad(r, l->line, "timeline needs config=LABEL-LABEL-... (several, one panel each: config=ID,ID,...)%s", ""), -1;
    for (p = v;; p = e + 1) {
        e = strchr(p, ',');
        if (!e) e = p + strlen(p);
        if (e == p) return rep_bad(r, l->line, "config=%s: an empty configuration between commas", v), -1;
        if (n == TL_MAX_PANELS) return rep_bad(r, l->line, "config=%s: more than 8 configurations (one panel each) for one figure", v), -1;
        if ((c[n] = rep_config(r, p, (size_t)(e - p))) < 0) {
            char one[512];
            snprintf(one, sizeof one, "%.*s", (int)(e - p < 400 ? e - p : 400), p);
            return rep_bad(r, l->line, "config=%s is not a configuration of this experiment", one), -1;
        }
        for (k = 0; k < n; k++)
            if (c[k] == c[n]) {
                char msg[1024];
                snprintf(msg, sizeof msg, "config=%.400s names %.400s twice", v, r->sp.id[c[n]]);
                return rep_bad(r, l->line, "%s", msg), -1;
            }
        n++;
        if (!*e) break;
    }
    return n;
}

/* DIR/timelines/ID.json, the configuration's run with the event log (sweeps leave it out): run now unless the
   file is there. NULL having said why */
static char *rep_timeline_json(rep *r, long long c) {
    char *json;
    struct stat st;
    { /* DIR/timelines/ID.json: a label cannot make another configuration's file name */
        char *tl = sweep_path(r->dir, "", "timelines", "");
        if (tl) (void)mkdir(tl, 0777);
        free(tl);
    }
    json = sweep_path(r->dir, "timelines/", r->sp.id[c], ".json");
    if (!json) return NULL;
    if (stat(json, &st) != 0) {
        char **argv, **full;
        int n = 0, k, m, wst = 0;
        pid_t pid;
        /* on the backend of the sweep's result of it: a timeline of a measured sweep is measured too */
        r->sp.backend = r->res[c].have && strcmp(r->res[c].backend, "dry") && strcmp(r->res[c].backend, "unknown") ? r->res[c].backend : NULL;
        argv = sweep_argv(&r->sp, c, 0, "/proc/self/exe", json);
        r->sp.backend = NULL;
        if (!argv) {
            free(json);
            return NULL;
        }
        while (argv[n]) n++;
        full = (char **)calloc((size_t)n + 3, sizeof *full);
        if (!full) {
            free(argv);
            free(json);
            return NULL;
        }
        for (k = 0, m = 0; k < n; k++) { /* the sweep's trace and dump are its outputs: the rerun writes neither */
            if ((!strcmp(argv[k], "--trace") || !strcmp(argv[k], "--dump")) && k + 1 < n) k++;
            else if (strncmp(argv[k], "--trace=", 8) && strncmp(argv[k], "--dump=", 7)) full[m++] = argv[k];
        }
        n = m;
        free(argv); /* the strings belong to the spec: full holds them now */
        full[n] = (char *)"--timeline";
        full[n + 1] = (char *)"full"; /* the last --timeline wins */
        pid = fork();
        if (pid == 0) {
            execv("/proc/self/exe", full);
            _exit(127);
        }
        free(full);
        if (pid < 0 || waitpid(pid, &wst, 0) < 0 || !WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
            int st3 = pid > 0 && WIFEXITED(wst) && WEXITSTATUS(wst) == EXIT_OOM;
            cli_fail(0, "the timeline run of %s failed%s", r->sp.id[c], st3 ? " (out of memory: a configuration that does not fit has no timeline to draw)" : "");
            (void)unlink(json); /* never a partial log */
            free(json);
            return NULL;
        }
    }
    return json;
}

/* a timeline needs the event log that sweeps leave out: each configuration it names is rerun with it. one
   configuration: its timeline; several: one panel each, stacked, on shared axes */
static int rep_fig_timeline(rep *r, const rep_line *l) {
    long long c[TL_MAX_PANELS];
    char *json[TL_MAX_PANELS] = {0}, png[4096];
    const char *lab[TL_MAX_PANELS] = {0};
    int n = rep_timeline_configs(r, l, c), k, rc = EXIT_OK;
    size_t skip = strlen(r->sp.name) + 1;
    if (n < 0) return EXIT_USAGE;
    for (k = 0; k < n; k++) {
        json[k] = rc == EXIT_OK ? rep_timeline_json(r, c[k]) : NULL;
        if (!json[k]) rc = EXIT_ERROR;
        lab[k] = r->sp.id[c[k]] + skip;
    }
    snprintf(png, sizeof png, "%s/%s-%s.png", r->figdir, r->sp.name, l->fig);
    if (rc == EXIT_OK && n == 1) rc = plot_timeline(json[0], png, NULL, REP_FIG_W, REP_FIG_H, REP_TL_TEXT);
    else if (rc == EXIT_OK) {
        char title[300];
        snprintf(title, sizeof title, "%s: memory timelines, shared axes", r->sp.name);
        rc = plot_timelines((const char *const *)json, lab, n, png, title, REP_FIG_W, REP_FIG_H, REP_TL_TEXT);
    }
    if (rc == EXIT_OK) {
        fprintf(r->summary, "figure %s (timeline%s of", png, n > 1 ? "s, one panel each," : "");
        for (k = 0; k < n; k++) fprintf(r->summary, "%s %s", k ? "," : "", r->sp.id[c[k]]);
        fputs(")\n", r->summary);
    }
    for (k = 0; k < n; k++) free(json[k]);
    return rc;
}

/* text into a latex table or a macro's value: labels like flash_bk carry characters tex treats specially, and a
   result's strings may carry anything (a brace ends the macro's argument, a newline a comment): every special
   escaped, every control character a space */
static void rep_tex(FILE *f, const char *t) {
    for (; *t; t++) {
        if ((unsigned char)*t < 32 || *t == 127) fputc(' ', f);
        else if (strchr("_&%#${}", *t)) fprintf(f, "\\%c", *t);
        else if (*t == '~' || *t == '^' || *t == '\\') fprintf(f, "\\char%d{}", (unsigned char)*t);
        else fputc(*t, f);
    }
}

/* an ops table (--op-times results): "ops cols=AXIS where=... top=N". a column per label of the axis (the
   configuration where= and the label pick), the top ops by their longest time in any column, longest first
   (ties by name), then the other ops together, all ops, and the step's measured mean (avg_time_ms; the op
   times come from one timed step, with events around every op). ms; "--" where a column has no such op,
   the status where its configuration did not finish */
static int rep_table_ops(rep *r, const rep_line *l, const char *path) {
    enum {
        MAXN = 4 * REP_MAXOPS
    };
    const char *cs = rep_get(l, "cols"), *ts = rep_get(l, "top"), *where = rep_get(l, "where");
    const char *cl[REP_MAXL], *names[MAXN];
    double worst[MAXN];
    long long cc[REP_MAXL];
    int ac = rep_axis(r, cs), nc, top = 10, nn = 0, i, j, k, any = 0;
    out_file af;
    char cell[64];
    if (ac < 0) return rep_bad(r, l->line, "ops needs cols=AXIS of this experiment%s", "");
    if (ts) top = (int)strtol(ts, NULL, 10); /* 1 .. REP_MAXOPS: rep_validate checked it */
    nc = rep_labels(r, ac, cl, REP_MAXL);
    for (j = 0; j < nc; j++) { /* the union of the columns' ops, each with its longest time */
        const rep_res *x;
        cc[j] = rep_find(r, where, ac, cl[j], -1, NULL);
        if (cc[j] < 0 || !r->res[cc[j]].have) continue;
        x = &r->res[cc[j]];
        any |= x->nops > 0;
        for (k = 0; k < x->nops; k++) {
            for (i = 0; i < nn && strcmp(names[i], x->opname[k]); i++) {}
            if (i == nn) {
                if (nn == MAXN) continue;
                names[nn] = x->opname[k];
                worst[nn++] = x->opms[k];
            } else if (x->opms[k] > worst[i]) worst[i] = x->opms[k];
        }
    }
    for (i = 1; i < nn; i++) /* longest first, ties by name: the same table from the same results */
        for (k = i; k > 0 && (worst[k] > worst[k - 1] || (worst[k] == worst[k - 1] && strcmp(names[k], names[k - 1]) < 0)); k--) {
            const char *tn = names[k];
            double tw = worst[k];
            names[k] = names[k - 1], worst[k] = worst[k - 1];
            names[k - 1] = tn, worst[k - 1] = tw;
        }
    if (top > nn) top = nn;
    if (out_open(&af, path, "table")) return EXIT_ERROR;
    fprintf(af.f, "%% generated by dpprof report from %s: ms per op in the timed step (--op-times)%s%s\n\\begin{tabular}{l", r->conf, where ? ", " : "", where ? where : "");
    for (j = 0; j < nc; j++) fputs("r", af.f);
    fputs("}\n\\toprule\nop", af.f);
    for (j = 0; j < nc; j++) {
        fputs(" & ", af.f);
        rep_tex(af.f, cl[j]);
    }
    fputs(" \\\\\n\\midrule\n", af.f);
    if (!any) fprintf(af.f, "\\multicolumn{%d}{l}{no op times in these results (--op-times)} \\\\\n", nc + 1);
    for (i = 0; any && i < top + 3; i++) { /* the top ops, then: other ops, all ops, the step */
        if (i == top) fputs("\\midrule\n", af.f);
        if (i < top) fprintf(af.f, "\\texttt{"), rep_tex(af.f, names[i]), fputs("}", af.f);
        else fputs(i == top ? "other ops" : (i == top + 1 ? "all ops" : "step (mean)"), af.f);
        for (j = 0; j < nc; j++) {
            const rep_res *x = cc[j] >= 0 ? &r->res[cc[j]] : NULL;
            double v = NAN;
            if (x && x->have && strcmp(x->status, "ok")) {
                fprintf(af.f, " & %s", x->status);
                continue;
            }
            if (x && x->have && i == top + 2) v = x->step_ms;
            else if (x && x->have && x->nops) {
                v = i < top ? NAN : 0.0;
                for (k = 0; k < x->nops; k++) {
                    int m, in_top = 0;
                    for (m = 0; m < top; m++) in_top |= !strcmp(names[m], x->opname[k]);
                    if (i < top ? !strcmp(names[i], x->opname[k]) : i == top + 1 || !in_top) v = (v == v ? v : 0.0) + x->opms[k];
                }
            }
            if (v != v) snprintf(cell, sizeof cell, "--");
            else snprintf(cell, sizeof cell, fabs(v) >= 1e9 ? "%.3e" : "%.1f", v);
            fprintf(af.f, " & %s", cell);
        }
        fputs(" \\\\\n", af.f);
    }
    fputs("\\bottomrule\n\\end{tabular}\n", af.f);
    return out_commit(&af) ? EXIT_ERROR : EXIT_OK;
}

/* tables: "pivot rows=AXIS cols=AXIS value=METRIC where=..." or "breakdown group=AXIS where=..." */
static int rep_table(rep *r, const rep_line *l) {
    char path[4096], cell[64];
    const char *where = rep_get(l, "where");
    out_file af;
    int i, j, k;
    if (l->fig[0]) snprintf(path, sizeof path, "%s/%s-%s-table.tex", r->tabdir, r->sp.name, l->fig);
    else snprintf(path, sizeof path, "%s/%s-table.tex", r->tabdir, r->sp.name);
    if (!strcmp(l->kind, "pivot")) {
        const char *rs = rep_get(l, "rows"), *cs = rep_get(l, "cols"), *metric = rep_get(l, "value");
        int ar = rep_axis(r, rs), ac = rep_axis(r, cs), nr, nc;
        const char *rl[REP_MAXL], *cl[REP_MAXL];
        if (ar < 0 || ac < 0) return rep_bad(r, l->line, "pivot needs rows=AXIS and cols=AXIS of this experiment%s", "");
        if (!metric || !rep_known_metric(metric)) return rep_bad(r, l->line, "value=%s is not a metric", metric ? metric : "(missing)");
        nr = rep_labels(r, ar, rl, REP_MAXL);
        nc = rep_labels(r, ac, cl, REP_MAXL);
        { /* a column none of whose configurations has a result (not run yet) is left out, where another has one */
            int kept = 0, any = 0;
            for (j = 0; j < nc; j++) {
                for (i = 0; i < nr; i++) {
                    long long c = rep_find(r, where, ar, rl[i], ac, cl[j]);
                    if (c >= 0 && r->res[c].have) break;
                }
                if (i < nr) any = 1;
            }
            for (j = 0; any && j < nc; j++) {
                for (i = 0; i < nr; i++) {
                    long long c = rep_find(r, where, ar, rl[i], ac, cl[j]);
                    if (c >= 0 && r->res[c].have) break;
                }
                if (i < nr) cl[kept++] = cl[j];
                else fprintf(r->summary, "  table %s: %s=%s has no result: left out\n", l->fig[0] ? l->fig : "(the first)", cs, cl[j]);
            }
            if (any) nc = kept;
        }
        if (out_open(&af, path, "table")) return EXIT_ERROR;
        fprintf(af.f, "%% generated by dpprof report from %s: %s (%s)%s%s\n", r->conf, metric, rep_metric_unit(metric), where ? ", " : "", where ? where : "");
        if (rep_measured_metric(metric)) {
            char src[512];
            rep_sources(r, where, 1, src, sizeof src);
            fprintf(af.f, "%% measured on: %s\n", src);
        }
        fputs("\\begin{tabular}{l", af.f);
        /* the comment line is tex too, but nothing after % is read */
        for (j = 0; j < nc; j++) fputs("r", af.f);
        fputs("}\n\\toprule\n", af.f);
        { /* the columns' axis over their labels, the rows' axis over the row labels */
            const char *cd[REP_MAXL], *rd[REP_MAXL];
            char cb[REP_MAXL][REP_DISP], rb[REP_MAXL][REP_DISP];
            rep_disp_labels(r, ac, cl, nc, cb, cd);
            rep_disp_labels(r, ar, rl, nr, rb, rd);
            fprintf(af.f, " & \\multicolumn{%d}{c}{", nc);
            rep_tex(af.f, rep_axis_title(cs));
            fprintf(af.f, "} \\\\\n\\cmidrule(l){2-%d}\n", nc + 1);
            rep_tex(af.f, rep_axis_title(rs));
            for (j = 0; j < nc; j++) {
                fputs(" & ", af.f);
                rep_tex(af.f, cd[j]);
            }
            fputs(" \\\\\n\\midrule\n", af.f);
            for (i = 0; i < nr; i++) {
                rep_tex(af.f, rd[i]);
                for (j = 0; j < nc; j++) {
                    long long c = rep_find(r, where, ar, rl[i], ac, cl[j]);
                    double v = rep_metric(r, c, metric);
                    if (v != v && c >= 0 && r->res[c].have && strcmp(r->res[c].status, "ok")) snprintf(cell, sizeof cell, "%s", r->res[c].status);
                    else rep_fmt(cell, sizeof cell, metric, v);
                    fprintf(af.f, " & %s", cell);
                }
                fputs(" \\\\\n", af.f);
            }
        }
        fputs("\\bottomrule\n\\end{tabular}\n", af.f);
    } else if (!strcmp(l->kind, "breakdown")) {
        static const int cats[] = {DPPROF_CAT_MODEL_PARAMETERS, DPPROF_CAT_OPTIMIZER_STATES, DPPROF_CAT_GRADIENTS, DPPROF_CAT_ACTIVATIONS, DPPROF_CAT_ACTIVATION_HOOKS, DPPROF_CAT_PER_SAMPLE_GRADIENTS, DPPROF_CAT_TEMP_MATRICES, DPPROF_CAT_NORM_SAMPLES, DPPROF_CAT_LORA};
        static const char *const short_names[] = {"weights", "optim.", "grads", "activ.", "DP cache", "per-sample", "Gram", "norms", "LoRA"};
        int show[9], nshow = 0;
        const char *gs = rep_get(l, "group");
        int ag = rep_axis(r, gs), ng;
        const char *gl[REP_MAXL];
        if (ag < 0) return rep_bad(r, l->line, "breakdown needs group=AXIS of this experiment%s", "");
        ng = rep_labels(r, ag, gl, REP_MAXL);
        for (k = 0; k < 9; k++) { /* a column of zeros says nothing: only the categories some row holds */
            char name[64];
            show[k] = 0;
            snprintf(name, sizeof name, "%s_gib", dpprof_category_name(cats[k]));
            for (i = 0; i < ng; i++) show[k] |= rep_metric(r, rep_find(r, where, ag, gl[i], -1, NULL), name) >= 0.005;
            nshow += show[k];
        }
        if (out_open(&af, path, "table")) return EXIT_ERROR;
        fprintf(af.f, "%% generated by dpprof report from %s: memory at the peak by category (GiB)%s%s\n\\begin{tabular}{lrr", r->conf, where ? ", " : "", where ? where : "");
        for (k = 0; k < nshow; k++) fputs("r", af.f);
        fputs("}\n\\toprule\n", af.f);
        rep_tex(af.f, rep_axis_title(gs));
        fputs(" & peak & $\\times$non-private", af.f);
        for (k = 0; k < 9; k++)
            if (show[k]) fprintf(af.f, " & %s", short_names[k]);
        fputs(" \\\\\n\\midrule\n", af.f);
        for (i = 0; i < ng; i++) {
            long long c = rep_find(r, where, ag, gl[i], -1, NULL);
            char name[64];
            rep_tex(af.f, gl[i]);
            for (k = -2; k < 9; k++) {
                if (k >= 0 && !show[k]) continue;
                if (k == -2) rep_fmt(cell, sizeof cell, "peak_gib", rep_metric(r, c, "peak_gib"));
                else if (k == -1) rep_fmt(cell, sizeof cell, "overhead", rep_metric(r, c, "overhead"));
                else {
                    double v;
                    snprintf(name, sizeof name, "%s_gib", dpprof_category_name(cats[k]));
                    v = rep_metric(r, c, name);
                    if (v > 0 && v < 0.005) snprintf(cell, sizeof cell, "$<$0.01");
                    else rep_fmt(cell, sizeof cell, name, v);
                }
                if (c >= 0 && r->res[c].have && strcmp(r->res[c].status, "ok") && k == -2) snprintf(cell, sizeof cell, "%s", r->res[c].status);
                fprintf(af.f, " & %s", cell);
            }
            fputs(" \\\\\n", af.f);
        }
        fputs("\\bottomrule\n\\end{tabular}\n", af.f);
    } else if (!strcmp(l->kind, "ops")) {
        int rc = rep_table_ops(r, l, path);
        if (rc != EXIT_OK) return rc;
        fprintf(r->summary, "table %s\n", path);
        return EXIT_OK;
    } else return rep_bad(r, l->line, "unknown table kind '%s' (known: pivot, breakdown, ops)", l->kind);
    if (out_commit(&af)) return EXIT_ERROR;
    fprintf(r->summary, "table %s\n", path);
    return EXIT_OK;
}

/* every metric of every configuration, for the paper's \dpnum{experiment}{id}{metric} */
static void rep_macros(rep *r) {
    long long c;
    int k;
    size_t skip = strlen(r->sp.name) + 1;
    for (c = 0; c < r->sp.nconf; c++) {
        const char *id = r->sp.id[c] + skip;
        char v[64];
        if (!r->res[c].have) continue;
        fprintf(r->macros, "\\dpdef{%s}{%s}{status}{", r->sp.name, id); /* a result's strings, escaped: what a results folder holds is not trusted */
        rep_tex(r->macros, r->res[c].status);
        fputs("}\n", r->macros);
        for (k = 0; k < (int)(sizeof rep_metrics / sizeof rep_metrics[0]); k++) {
            double x = rep_metric(r, c, rep_metrics[k]);
            if (x != x) continue;
            rep_fmt(v, sizeof v, rep_metrics[k], x);
            fprintf(r->macros, "\\dpdef{%s}{%s}{%s}{%s}\n", r->sp.name, id, rep_metrics[k], v);
        }
        if (r->res[c].norm_bound[0]) {
            fprintf(r->macros, "\\dpdef{%s}{%s}{norm_bound}{", r->sp.name, id);
            rep_tex(r->macros, r->res[c].norm_bound);
            fputs("}\n", r->macros);
        }
        if (strcmp(r->res[c].backend, "dry") && r->res[c].build.commit[0] && strspn(r->res[c].build.commit, "0123456789abcdef") == strlen(r->res[c].build.commit))
            fprintf(r->macros, "\\dpdef{%s}{%s}{run_commit}{%s}\n", r->sp.name, id, r->res[c].build.commit);
        if (strcmp(r->res[c].backend, "dry") && r->res[c].build.source[0] && strspn(r->res[c].build.source, "0123456789abcdef") == strlen(r->res[c].build.source))
            fprintf(r->macros, "\\dpdef{%s}{%s}{run_source}{%.12s}\n", r->sp.name, id, r->res[c].build.source);
        if (strcmp(r->res[c].backend, "dry") && strlen(r->res[c].date) == 10 && strspn(r->res[c].date, "0123456789-") == 10)
            fprintf(r->macros, "\\dpdef{%s}{%s}{run_date}{%s}\n", r->sp.name, id, r->res[c].date);
        if (strcmp(r->res[c].backend, "dry") && strcmp(r->res[c].device, "unknown") && !strpbrk(r->res[c].device, "\\{}%#$&_^~")) /* tex-safe names only */
            fprintf(r->macros, "\\dpdef{%s}{%s}{run_device}{%s}\n", r->sp.name, id, r->res[c].device);
        for (k = 0; k < DPPROF_CAT_COUNT; k++) {
            char name[64];
            double x;
            snprintf(name, sizeof name, "%s_gib", dpprof_category_name(k));
            x = rep_metric(r, c, name);
            if (x != x) continue;
            rep_fmt(v, sizeof v, name, x);
            fprintf(r->macros, "\\dpdef{%s}{%s}{%s}{%s}\n", r->sp.name, id, name, v);
        }
    }
}

static int rep_fig_note(rep *r, const rep_line *l, const char *title, const char *note);

/* a phase's value for a phases figure: analytic bytes moved or flops per occurrence, measured dram bytes (read +
   write, --dram: the counters step), the live bytes at its peak, or its measured ms per step; nan: none */
static double rep_phase_value(const rep_res *x, int k, const char *value) {
    if (!strcmp(value, "flops")) return x->ph_flops[k] / 1e12;
    if (!strcmp(value, "dram")) return (x->ph_traffic[k][0] + x->ph_traffic[k][1]) / REP_GIB;
    if (!strcmp(value, "peak")) return x->ph_peak[k] / REP_GIB;
    if (!strcmp(value, "time")) return x->ph_ms[k];
    return x->ph_bytes[k] / REP_GIB;
}

/* grouped bars over the phases (value=bytes, flops, dram, peak or time: rep_phase_value) or the modules (bytes at the peak) */
static int rep_fig_parts(rep *r, const rep_line *l, int phases) {
    const char *gs = rep_get(l, "group"), *where = rep_get(l, "where"), *value = rep_get(l, "value");
    int ag = rep_axis(r, gs), ng, np = 0, i, j, idx[DPPROF_PHASE_COUNT + DPPROF_MOD_COUNT];
    const char *gl[REP_MAXL], *pl[DPPROF_PHASE_COUNT + DPPROF_MOD_COUNT];
    double *val;
    unsigned char rgb[REP_MAXL * 3];
    const int peak = value && !strcmp(value, "peak"), measured = value && (!strcmp(value, "dram") || !strcmp(value, "time"));
    const char *gd[REP_MAXL];
    char gb[REP_MAXL][REP_DISP];
    dpprof_bars_desc d;
    char title[512], src[256];
    if (ag < 0) return rep_bad(r, l->line, "group=%s is not an axis of this experiment", gs ? gs : "(missing)");
    if (!value) value = "bytes";
    ng = rep_labels(r, ag, gl, REP_MAXL);
    /* the parts that any group uses */
    for (i = 0; i < (phases ? DPPROF_PHASE_COUNT : DPPROF_MOD_COUNT); i++) {
        int used = 0;
        if (phases && !peak && i <= DPPROF_PHASE_PRIVACY_SETUP) continue; /* setup moves no step bytes; it holds memory */
        for (j = 0; j < ng; j++) {
            long long c = rep_find(r, where, ag, gl[j], -1, NULL);
            if (c >= 0 && r->res[c].have && !strcmp(r->res[c].status, "ok"))
                used |= (phases ? rep_phase_value(&r->res[c], i, value) : r->res[c].mod[i]) > 0;
        }
        if (used) {
            idx[np] = i;
            pl[np++] = phases ? dpprof_phase_name(i) : dpprof_module_name(i);
        }
    }
    if (!np && measured) { /* nothing measured: the figure says so */
        snprintf(title, sizeof title, "%s: %s per phase%s%s%s", r->sp.name, !strcmp(value, "dram") ? "measured DRAM bytes" : "measured ms per step", where ? " (" : "", where ? where : "", where ? ")" : "");
        return rep_fig_note(r, l, title, !strcmp(value, "dram") ? "No configuration of this figure has measured DRAM bytes: they need the cuda backend on a GPU with counters and --dram (make bench); analytic bytes are value=bytes." : "No configuration of this figure has a timed result: phase times need a run on a GPU (BACKEND=cuda).");
    }
    if (!np) return rep_bad(r, l->line, "no configuration matches where=%s", where ? where : "");
    val = (double *)calloc((size_t)np * (size_t)ng, sizeof(double));
    if (!val) return EXIT_ERROR;
    for (j = 0; j < ng; j++) {
        long long c = rep_find(r, where, ag, gl[j], -1, NULL);
        memcpy(rgb + 3 * j, rep_series_rgb(r, ag, gl[j], j), 3);
        for (i = 0; i < np; i++) {
            double v = NAN;
            if (c >= 0 && r->res[c].have && !strcmp(r->res[c].status, "ok")) v = phases ? rep_phase_value(&r->res[c], idx[i], value) : r->res[c].mod[idx[i]] / REP_GIB;
            val[j * np + i] = v == v || measured || peak ? v : 0; /* a measurement, or a phase's memory, that is not there: n/a, never 0 */
        }
    }
    memset(&d, 0, sizeof d);
    snprintf(title, sizeof title, "%s%s%s%s",
             !phases                   ? "memory at the peak by module"
             : !strcmp(value, "flops") ? "analytic FLOPs per phase occurrence"
             : !strcmp(value, "dram")  ? "measured DRAM bytes (read + write) per phase, the counters step"
             : peak                    ? "live memory at each phase's peak"
             : !strcmp(value, "time")  ? "measured ms per step, per phase"
                                       : "analytic bytes moved per phase occurrence",
             "", "", "");
    if (measured && rep_sources_n(r, where, 1, 0, src, sizeof src)) {
        strncat(title, ", measured: ", sizeof title - strlen(title) - 1);
        strncat(title, src, sizeof title - strlen(title) - 1);
    }
    d.title = title;
    d.xlabel = phases ? "phase" : "module";
    d.ylabel = !phases || peak ? "GiB" : (!strcmp(value, "flops") ? "TFLOP" : (!strcmp(value, "dram") ? "GiB, measured (CUPTI)" : (!strcmp(value, "time") ? "ms per step" : "GiB moved (analytic)")));
    d.n_groups = np;
    d.group_names = pl;
    d.n_series = ng;
    rep_disp_legend(r, ag, gl, ng, gb, gd, 1);
    d.series_names = gd;
    d.series_rgb = rgb;
    rep_user_labels(r, l, where, measured ? "dram_gib" : NULL, title, sizeof title, &d.xlabel, &d.ylabel);
    d.title = title;
    return rep_bars_png(r, l, &d, val);
}

/* the summary's lines under a configuration: where the memory is at the peak, and, where the result measured
   time, the step, the tokens, the peak held for a step (GiB x s) and each phase's ms per step, with what measured it */
static void rep_summary_detail(const rep *r, long long c) {
    const rep_res *x = &r->res[c];
    int k, first = 1;
    if (!x->have || strcmp(x->status, "ok")) return;
    fputs("    memory at the peak (GiB):", r->summary);
    for (k = 0; k < DPPROF_CAT_COUNT; k++)
        if (x->cat[k] > 0) fprintf(r->summary, " %s %.3f", dpprof_category_name(k), x->cat[k] / REP_GIB);
    fputc('\n', r->summary);
    /* by stage: the setup phases, then the step's, each at its own peak */
    for (k = 0, first = 1; k < DPPROF_PHASE_COUNT; k++) {
        if (x->ph_peak[k] != x->ph_peak[k]) continue;
        fprintf(r->summary, "%s %s %.3f", first ? "    memory at each phase's peak (GiB):" : ",", dpprof_phase_name(k), x->ph_peak[k] / REP_GIB);
        first = 0;
    }
    if (!first) fputc('\n', r->summary);
    first = 1;
    if (x->step_ms != x->step_ms) return;
    fprintf(r->summary, "    time (%s%s%s): step %.3f ms, %.1f tokens/s, peak x step %.4f GiB s; ms per step:", x->backend, strcmp(x->backend, x->device) ? " on " : "",
            strcmp(x->backend, x->device) ? x->device : "", x->step_ms, x->tokens_s,
            rep_metric(r, c, "gib_s"));
    for (k = DPPROF_PHASE_PRIVACY_SETUP + 1; k < DPPROF_PHASE_COUNT; k++) {
        if (x->ph_ms[k] != x->ph_ms[k]) continue;
        fprintf(r->summary, "%s %s %.3f", first ? "" : ",", dpprof_phase_name(k), x->ph_ms[k]);
        first = 0;
    }
    fputc('\n', r->summary);
    for (k = 0, first = 1; k < DPPROF_PHASE_COUNT; k++) {
        if (x->ph_traffic[k][0] != x->ph_traffic[k][0]) continue;
        if (first) fputs("    measured traffic (GiB, dram read/write, l2 read/write, the counters step):", r->summary);
        fprintf(r->summary, "%s %s %.3f/%.3f/%.3f/%.3f", first ? "" : ",", dpprof_phase_name(k), x->ph_traffic[k][0] / REP_GIB, x->ph_traffic[k][1] / REP_GIB,
                x->ph_traffic[k][2] / REP_GIB, x->ph_traffic[k][3] / REP_GIB);
        first = 0;
    }
    if (!first) fputc('\n', r->summary);
}

typedef struct report_opts {
    const char *results, *figures, *tables;
} report_opts;

static const cli_opt report_opt[] = {
    {NULL, NULL, CLI_HEAD, .help = "options:"},
    {"--results", "DIR", CLI_TEXT, .field = offsetof(report_opts, results), .help = "the sweep's results (DIR/ID.json); DIR/summary.txt is written there"},
    {"--figures", "DIR", CLI_TEXT, .field = offsetof(report_opts, figures), .help = "where the figures go (default figures/)"},
    {"--tables", "DIR", CLI_TEXT, .field = offsetof(report_opts, tables), .help = "where the tables and macros go (default paper/generated/)"},
    {"--help", NULL, CLI_HELP, .help = "this text"},
};

static const cli_command report_cmd = {"report", "usage: dpprof report EXPERIMENT.conf --results DIR [--figures DIR] [--tables DIR]",
                                       ""
                                       "turns a sweep's results (DIR/ID.json) into the experiment's figures (FIGDIR/NAME-FIG.png,\n"
                                       "default figures/), its LaTeX table and macros (TABDIR/NAME-table.tex, NAME-macros.tex,\n"
                                       "default paper/generated/; both made with their parents where missing) and DIR/summary.txt, as the\n"
                                       "conf's lines say:\n"
                                       "  figure FIG = KIND key=value ...    KIND: bars, capacity, heatmap, stacked, lines, modules,\n"
                                       "                                     ops, phases, timeline, tradeoff\n"
                                       "  table [T] = pivot|breakdown|ops key=value ...   (TABDIR/NAME-table.tex; named T: NAME-T-table.tex)\n"
                                       "keys: x= series= rows= cols= group= (axes), value= (a metric), where=AXIS:LABEL,... ref=LABEL\n"
                                       "batch=AXIS (capacity), config=LABEL-LABEL-...[,LABEL-LABEL-...] (timeline: each configuration is rerun\n"
                                       "on its own with the event log, into DIR/timelines/ID.json, unless that file exists; several, up to 8:\n"
                                       "one panel each on shared axes, one legend, every phase named).\n"
                                       "phases group=AXIS value=bytes|flops|dram|peak|time: per phase, analytic bytes or flops per occurrence,\n"
                                       "measured dram bytes (--dram, the counters step), live bytes at the phase's peak (the stages: model_loaded,\n"
                                       "data_setup, optimizer_setup, privacy_setup, then the step's phases), ms per step.\n"
                                       "lines x=AXIS series=AXIS value=...: a line per series; an oom configuration is a hollow marker at its\n"
                                       "peak without the memory limit (the result's peak_without_limit), a curve on another dashed over it.\n"
                                       "tradeoff series=AXIS where=...: peak memory against the measured step time, a point per configuration;\n"
                                       "those without a timed result are named in one sentence (none timed: the figure is that sentence).\n"
                                       "ops where=...: the configuration's ops (--dram-ops on a GPU), the 12 with the most bytes, each op's\n"
                                       "analytic bytes beside its measured dram bytes in the counters step (none measured: a sentence says so).\n"
                                       "ops tables (results of --op-times): cols=AXIS where=AXIS:LABEL,... top=N: one column a label, the N ops\n"
                                       "with the longest time in any column (ms in the timed step), then the other ops, all ops and the step.\n"
                                       "metrics: peak_gib overhead params_b trainable_m epsilon step_ms tokens_per_s moved_gib tflop\n"
                                       "(analytic bytes and flops of one step) mfu (%, cuda: the flops the step executes, every op's cost, over the step\n"
                                       "time and the dtype's flop peak) model_mfu (%, cuda: 3 x the forward's flops, the model-flops convention) speed (tokens/s x vanilla, cuda) dram_gib (measured per step, --dram)\n"
                                       "norm_dram_pct norm_flops_pct (the norm kernels' share of the dram peak and of the compute peak of the\n"
                                       "run's dtype: fp32 cores, bf16 tensor cores; --op-times) norm_bound_pct (their roofline time, each op at\n"
                                       "whichever peak bounds it, over their measured time; the macros also name that bound: norm_bound)\n"
                                       "flop_ceiling (vanilla's analytic flops over the configuration's: its speed at vanilla's flop rate)\n"
                                       "gib_s (peak GiB x measured step seconds: the memory held for a step) step_range_pct (the range of\n"
                                       "one run's timed steps over their median, %: from the end of one step to the next's) <category>_gib\n",
                                       report_opt, CLI_N(report_opt), 1, "(one experiment file)", NULL};

static int rep_figure(rep *r, const rep_line *l);

/* what each kind of line needs: its keys, and what its value= is (m: a metric, p: a phases value, 0: not read) */
/* clang-format off */
static const struct rep_kind {
    int table;
    const char *kind, *keys;
    char value;
} rep_kinds[] = {
    {0, "bars", "x value", 'm'}, {0, "capacity", "x series batch", 0}, {0, "heatmap", "rows cols value", 'm'}, {0, "stacked", "group", 0},
    {0, "lines", "x series value", 'm'}, {0, "modules", "group", 0}, {0, "ops", "", 0}, {0, "phases", "group", 'p'}, {0, "timeline", "config", 0},
    {0, "tradeoff", "series", 0}, {1, "pivot", "rows cols value", 'm'}, {1, "breakdown", "group", 0}, {1, "ops", "cols", 0},
};
/* clang-format on */

static int rep_phase_word(const char *v) { return !strcmp(v, "bytes") || !strcmp(v, "flops") || !strcmp(v, "dram") || !strcmp(v, "peak") || !strcmp(v, "time"); }

/* where=AXIS:LABEL,...: axes of this experiment, each once, with one of its labels */
static int rep_validate_where(const rep *r, const rep_line *l, const char *v) {
    char buf[512], *tok, *save = NULL, msg[1024];
    int used[256], nused = 0, a, k; /* the axes named so far (a token takes 3 characters at least) */
    snprintf(buf, sizeof buf, "%s", v);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (colon) *colon = 0;
        if (!colon || (a = rep_axis(r, tok)) < 0) return rep_bad(r, l->line, "where=%s: expected AXIS:LABEL,... with axes of this experiment", v);
        for (k = 0; k < nused && used[k] != a; k++) {}
        if (k < nused) {
            snprintf(msg, sizeof msg, "where=%.300s names the axis '%.64s' twice: no configuration has two labels on one axis", v, tok);
            return rep_bad(r, l->line, "%s", msg);
        }
        used[nused++] = a;
        for (k = 0; k < r->sp.axis[a].nval && strcmp(r->sp.axis[a].val[k].label, colon + 1); k++) {}
        if (k == r->sp.axis[a].nval) {
            size_t n = (size_t)snprintf(msg, sizeof msg, "where=%.300s: '%.100s' is not a label of the axis '%.64s' (its labels:", v, colon + 1, tok);
            for (k = 0; k < r->sp.axis[a].nval && n < sizeof msg; k++) n += (size_t)snprintf(msg + n, sizeof msg - n, "%s %s", k ? "," : "", r->sp.axis[a].val[k].label);
            if (n < sizeof msg) snprintf(msg + n, sizeof msg - n, ")");
            return rep_bad(r, l->line, "%s", msg);
        }
    }
    return EXIT_OK;
}

/* every figure and table line names known kinds, the keys its kind needs, axes, labels and metrics, and no two
   lines write one file: checked before any work */
static int rep_validate(const rep *r) {
    static const char *const axis_keys[] = {"x", "series", "rows", "cols", "group", "batch"};
    int i, k, j;
    for (i = 0; i < r->nlines; i++) {
        const rep_line *l = &r->lines[i];
        const struct rep_kind *kd = NULL;
        int table = l->table;
        const char *v;
        char msg[300];
        for (k = 0; k < (int)(sizeof rep_kinds / sizeof rep_kinds[0]); k++)
            if (rep_kinds[k].table == table && !strcmp(l->kind, rep_kinds[k].kind)) kd = &rep_kinds[k];
        if (!kd) return rep_bad(r, l->line, table ? "unknown table kind '%s' (known: pivot, breakdown, ops)" : "unknown figure kind '%s' (known: bars, capacity, heatmap, stacked, lines, modules, ops, phases, timeline, tradeoff)", l->kind);
        for (j = 0; j < i; j++) /* the same name: the same file, written twice */
            if (r->lines[j].table == table && !strcmp(r->lines[j].fig, l->fig)) {
                if (table && !l->fig[0]) snprintf(msg, sizeof msg, "a second unnamed table (the first at line %d writes the same file): name one (table NAME = KIND ...)", r->lines[j].line);
                else snprintf(msg, sizeof msg, "%s '%s' again (first at line %d): each writes its own file, give another name", table ? "table" : "figure", l->fig, r->lines[j].line);
                return rep_bad(r, l->line, "%s", msg);
            }
        for (v = kd->keys; *v;) { /* the keys its kind needs */
            size_t n = strcspn(v, " ");
            char key[16];
            snprintf(key, sizeof key, "%.*s", (int)n, v);
            if (!rep_get(l, key)) {
                snprintf(msg, sizeof msg, "%s%s needs %s= (its keys: %s)", kd->kind, table ? " table" : "", key, kd->keys);
                return rep_bad(r, l->line, "%s", msg);
            }
            v += n + (v[n] == ' ');
        }
        if (table && !strcmp(l->kind, "ops") && (v = rep_get(l, "top"))) {
            char *end;
            long t = strtol(v, &end, 10);
            if (!*v || *end || t < 1 || t > REP_MAXOPS) return rep_bad(r, l->line, "top=%s: expected a whole number of ops from 1 to 64", v);
        }
        for (k = 0; k < l->nkv; k++) { /* a key no figure or table reads is a mistake, not a choice ignored */
            static const char known[] = "batch|cols|config|group|ref|rows|series|title|top|value|where|x|xlabel|ylabel";
            char w[64], near[32];
            snprintf(w, sizeof w, "|%s|", l->key[k]);
            if (!strstr("|batch|cols|config|group|ref|rows|series|title|top|value|where|x|xlabel|ylabel|", w)) {
                if (dpprof_closest(l->key[k], known, near, sizeof near)) snprintf(msg, sizeof msg, "unknown key '%s' (did you mean %s?)", l->key[k], near);
                else snprintf(msg, sizeof msg, "unknown key '%s' (known: batch, cols, config, group, ref, rows, series, title, top, value, where, x, xlabel, ylabel)", l->key[k]);
                return rep_bad(r, l->line, "%s", msg);
            }
        }
        for (k = 0; k < l->nkv; k++) {
            int is_axis = 0;
            for (j = 0; j < 6; j++) is_axis |= !strcmp(l->key[k], axis_keys[j]);
            if (is_axis && rep_axis(r, l->val[k]) < 0) {
                snprintf(msg, sizeof msg, "%s=%s is not an axis of this experiment", l->key[k], l->val[k]);
                return rep_bad(r, l->line, "%s", msg);
            }
        }
        if ((v = rep_get(l, "value")) && (kd->value == 'm' ? !rep_known_metric(v) : (kd->value == 'p' ? !rep_phase_word(v) : !rep_known_metric(v) && !rep_phase_word(v)))) {
            if (kd->value == 'p') return rep_bad(r, l->line, "value=%s: phases takes bytes, flops, dram, peak or time", v);
            return rep_bad(r, l->line, "value=%s is not a metric (peak_gib overhead params_b trainable_m epsilon step_ms tokens_per_s moved_gib tflop mfu model_mfu speed dram_gib norm_dram_pct norm_flops_pct norm_bound_pct flop_ceiling gib_s step_range_pct <category>_gib)", v);
        }
        if (!table && !strcmp(l->kind, "lines")) { /* log-scale x: every label a positive number */
            const int ax = rep_axis(r, rep_get(l, "x"));
            for (k = 0; k < r->sp.axis[ax].nval; k++)
                if (!(rep_label_num(r->sp.axis[ax].val[k].label) > 0)) {
                    snprintf(msg, sizeof msg, "x=%s: lines need positive numbers as the axis labels (got '%s')", r->sp.axis[ax].name, r->sp.axis[ax].val[k].label);
                    return rep_bad(r, l->line, "%s", msg);
                }
        }
        if (!table && !strcmp(l->kind, "timeline")) { /* its configurations exist before any is rerun */
            long long tc[TL_MAX_PANELS];
            if (rep_timeline_configs(r, l, tc) < 0) return EXIT_USAGE;
        }
        if ((v = rep_get(l, "where")) && rep_validate_where(r, l, v) != EXIT_OK) return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* the summary's line of what the measured results were built from: each commit and source hash, with its count;
   a hash stated afterwards by the folder's provenance (the results record none) says so */
static int rep_same_build(const rep_res *a, const rep_res *b) {
    return a->have && b->have && strcmp(a->backend, "dry") && strcmp(b->backend, "dry") && !strcmp(a->build.commit, b->build.commit) &&
           !strcmp(a->build.source, b->build.source) && !strcmp(a->build.recorded, b->build.recorded) && a->build.stated == b->build.stated;
}

static void rep_builds(const rep *r) {
    long long c, d;
    int n = 0;
    for (c = 0; c < r->sp.nconf; c++) {
        const rep_res *x = &r->res[c];
        const rep_build *b = &x->build;
        long long count = 0;
        if (!x->have || !strcmp(x->backend, "dry") || (!b->commit[0] && !b->source[0])) continue; /* a timeout's record names no build */
        for (d = 0; d < c && !rep_same_build(&r->res[d], x); d++) {}
        if (d < c) continue;
        for (d = c; d < r->sp.nconf; d++) count += rep_same_build(&r->res[d], x);
        fprintf(r->summary, "%s commit %s, sources sha256 %s (%lld result%s", n++ ? ";" : "built from:", b->commit[0] ? b->commit : "unknown", b->source[0] ? b->source : "not recorded",
                count, count == 1 ? "" : "s");
        if (b->source[0] && !b->stated) fputs(", recorded by the build", r->summary);
        else if (b->stated) fprintf(r->summary, ", stated afterwards in the folder's provenance file%s%s", b->recorded[0] ? ": the results record commit " : "", b->recorded);
        fputc(')', r->summary);
    }
    if (n) fputc('\n', r->summary);
}

static int cmd_report(int argc, char **argv) {
    rep r;
    report_opts ro;
    const char *conf = NULL;
    int i, rc = EXIT_OK, n_ok = 0, n_oom = 0, n_err = 0, n_missing = 0, timed = 0, npos = 0;
    char sum_path[4096], mac_path[4096]; /* out_open keeps the path: one buffer each */
    out_file sum, mac;
    long long c;
    memset(&r, 0, sizeof r);
    r.figdir = "figures";
    r.tabdir = "paper/generated";
    memset(&ro, 0, sizeof ro);
    rc = cli_parse(&report_cmd, argc, argv, &ro, NULL, &conf, &npos);
    if (rc == CLI_HELP_SHOWN) return EXIT_OK;
    if (rc != EXIT_OK) return rc;
    r.dir = ro.results;
    if (ro.figures) r.figdir = ro.figures;
    if (ro.tables) r.tabdir = ro.tables;
    if (!conf || !r.dir) return cli_usage("usage: dpprof report EXPERIMENT.conf --results DIR");
    r.conf = conf;
    {
        char err[4400];
        if (rep_prov_load(r.dir, &r.prov, err, sizeof err) != EXIT_OK) return cli_fail(EXIT_USAGE, "%s", err);
    }
    if ((rc = sweep_parse(conf, &r.sp)) != EXIT_OK) return rc;
    if ((rc = rep_read_lines(&r)) != EXIT_OK || (rc = rep_validate(&r)) != EXIT_OK) {
        sweep_spec_free(&r.sp);
        return rc;
    }
    if (dir_make("--figures", r.figdir, 0) || dir_make("--tables", r.tabdir, 0)) {
        sweep_spec_free(&r.sp);
        return EXIT_USAGE;
    }
    r.res = (rep_res *)calloc((size_t)r.sp.nconf, sizeof *r.res);
    if (!r.res) {
        sweep_spec_free(&r.sp);
        return EXIT_ERROR;
    }
    for (c = 0; c < r.sp.nconf; c++) {
        rep_load(&r, c);
        if (r.res[c].skipped[0]) cli_fail(0, "%s/%s.json skipped: %s", r.dir, r.sp.id[c], r.res[c].skipped);
        if (r.res[c].incomplete[0]) cli_fail(0, "%s/%s.json: %s", r.dir, r.sp.id[c], r.res[c].incomplete);
        if (r.res[c].rep_note[0]) cli_fail(0, "%s/%s: %s", r.dir, r.sp.id[c], r.res[c].rep_note);
        if (!r.res[c].have) n_missing++;
        else if (!strcmp(r.res[c].status, "ok")) n_ok++;
        else if (!strcmp(r.res[c].status, "oom")) n_oom++;
        else n_err++;
        timed |= r.res[c].step_ms == r.res[c].step_ms;
    }
    if (n_missing == r.sp.nconf) {
        cli_fail(0, "no results of '%s' in %s (run: dpprof sweep %s --out-dir %s)", r.sp.name, r.dir, conf, r.dir);
        free(r.res);
        sweep_spec_free(&r.sp);
        return EXIT_USAGE;
    }
    /* the summary first, beside the results: a folder it cannot write (read-only) stops the report before any
       directory is made for figures and tables */
    snprintf(sum_path, sizeof sum_path, "%s/summary.txt", r.dir);
    if (out_open(&sum, sum_path, "summary")) {
        free(r.res);
        sweep_spec_free(&r.sp);
        return EXIT_ERROR;
    }
    if (dir_make("--figures", r.figdir, 1) || dir_make("--tables", r.tabdir, 1)) {
        out_abort(&sum);
        free(r.res);
        sweep_spec_free(&r.sp);
        return EXIT_USAGE;
    }
    snprintf(mac_path, sizeof mac_path, "%s/%s-macros.tex", r.tabdir, r.sp.name);
    if (out_open(&mac, mac_path, "macros")) {
        out_abort(&sum);
        free(r.res);
        sweep_spec_free(&r.sp);
        return EXIT_ERROR;
    }
    r.summary = sum.f;
    r.macros = mac.f;
    fprintf(r.summary, "experiment %s: %s\nconfigurations %lld: %d ok, %d oom, %d error, %d without a result\n", r.sp.name,
            r.sp.description ? r.sp.description : "", r.sp.nconf, n_ok, n_oom, n_err, n_missing);
    if (timed) {
        char src[512];
        rep_sources(&r, NULL, 1, src, sizeof src);
        fprintf(r.summary, "time: measured on %s; memory exact to the byte (the accountant's)\n", src);
        rep_builds(&r);
    } else fprintf(r.summary, "time and DRAM traffic: not measured (no GPU results): memory only, exact to the byte\n");
    { /* the paths as a tex comment holds them: a newline in one would end it */
        const char *pp[2] = {conf, r.dir}, *t;
        int q;
        fputs("% generated by dpprof report from ", r.macros);
        for (q = 0; q < 2; q++) {
            for (t = pp[q]; *t; t++) fputc((unsigned char)*t < 32 || *t == 127 ? ' ' : *t, r.macros);
            fputs(q ? "\n" : " and the results in ", r.macros);
        }
    }
    for (c = 0; c < r.sp.nconf; c++) {
        char pk[32], ov[32], three[96] = "";
        rep_fmt(pk, sizeof pk, "peak_gib", rep_metric(&r, c, "peak_gib"));
        rep_fmt(ov, sizeof ov, "overhead", rep_metric(&r, c, "overhead"));
        if (rep_metric(&r, c, "peak_gib") == rep_metric(&r, c, "peak_gib") && r.res[c].drv_peak == r.res[c].drv_peak) { /* measured on a gpu: the dry plan's and the driver's peaks beside the accountant's */
            char dp[32], vp[32];
            rep_fmt(dp, sizeof dp, "peak_gib", r.res[c].dry_peak / REP_GIB);
            rep_fmt(vp, sizeof vp, "peak_gib", r.res[c].drv_peak / REP_GIB);
            snprintf(three, sizeof three, "  dry %9s GiB  driver %9s GiB", dp, vp);
        }
        fprintf(r.summary, "%-48s %-8s peak %9s GiB  x vanilla %6s%s%s%s\n", r.sp.id[c], r.res[c].have ? r.res[c].status : (r.res[c].skipped[0] ? "skipped" : "missing"), pk, ov,
                three, r.res[c].skipped[0] || r.res[c].incomplete[0] ? "  " : "", r.res[c].skipped[0] ? r.res[c].skipped : r.res[c].incomplete);
        if (rep_metric_full(&r, c, "peak_gib") == rep_metric_full(&r, c, "peak_gib")) { /* oom: what it would need */
            rep_fmt(pk, sizeof pk, "peak_gib", rep_metric_full(&r, c, "peak_gib"));
            rep_fmt(ov, sizeof ov, "overhead", rep_metric_full(&r, c, "overhead"));
            fprintf(r.summary, "    does not fit: %s GiB without the memory limit (x vanilla %s; the dry backend's peak of it, peak_without_limit), drawn hollow there in the line figures\n",
                    pk, ov);
        }
        if (r.res[c].nrep >= 2)
            fprintf(r.summary, "    repeats: %d runs; step %.3f ms (the median; %.3f to %.3f), %.1f tokens/s (%.1f to %.1f)\n", r.res[c].nrep, r.res[c].step_ms, r.res[c].step_lo, r.res[c].step_hi,
                    r.res[c].tokens_s, r.res[c].tok_lo, r.res[c].tok_hi);
        if (r.res[c].rep_note[0]) fprintf(r.summary, "    %s\n", r.res[c].rep_note);
        rep_summary_detail(&r, c);
    }
    rep_macros(&r);
    for (i = 0; i < r.nlines && rc == EXIT_OK; i++) rc = r.lines[i].table ? rep_table(&r, &r.lines[i]) : rep_figure(&r, &r.lines[i]);
    if (rc == EXIT_OK && (out_commit(&sum) || out_commit(&mac))) rc = EXIT_ERROR;
    if (rc != EXIT_OK) {
        out_abort(&sum);
        out_abort(&mac);
    }
    free(r.res);
    sweep_spec_free(&r.sp);
    return rc;
}

/* render a figure into FIGDIR/NAME-FIG.png: rc is the plot call's result */
static int rep_render(const rep *r, const rep_line *l, int rc, dpprof_canvas *cv) {
    rc = rc == 0 ? rep_png(r, l->fig, cv) : rep_bad(r, l->line, "cannot render the figure '%s'", l->fig);
    dpprof_canvas_free(cv);
    return rc;
}

/* memory at the peak by category per group, with each group's ratio to the reference group */
static int rep_fig_stacked(rep *r, const rep_line *l) {
    const char *gs = rep_get(l, "group"), *where = rep_get(l, "where"), *ref = rep_get(l, "ref");
    int ag = rep_axis(r, gs), ng, nc = 0, i, j, cats[DPPROF_CAT_COUNT], refg = -1, rc;
    const char *gl[REP_MAXL], *cl[DPPROF_CAT_COUNT], *gd[REP_MAXL];
    char gb[REP_MAXL][REP_DISP];
    double *val;
    unsigned char rgb[DPPROF_CAT_COUNT * 3];
    dpprof_stacked_desc d;
    dpprof_canvas cv;
    char title[256], olabel[96];
    ng = rep_labels(r, ag, gl, REP_MAXL);
    for (j = 0; ref && j < ng; j++)
        if (!strcmp(gl[j], ref)) refg = j;
    for (i = 0; i < DPPROF_CAT_COUNT; i++) {
        int used = 0;
        for (j = 0; j < ng; j++) {
            long long c = rep_find(r, where, ag, gl[j], -1, NULL);
            used |= c >= 0 && r->res[c].have && !strcmp(r->res[c].status, "ok") && r->res[c].cat[i] > 1048576.0; /* a MiB: a part one can see */
        }
        if (used) {
            cats[nc] = i;
            cl[nc++] = rep_cat_title(i);
        }
    }
    if (!nc) return rep_bad(r, l->line, "no configuration matches where=%s", where ? where : "");
    val = (double *)calloc((size_t)nc * (size_t)ng, sizeof(double));
    if (!val) return EXIT_ERROR;
    for (j = 0; j < ng; j++) {
        long long c = rep_find(r, where, ag, gl[j], -1, NULL);
        int ok = c >= 0 && r->res[c].have && !strcmp(r->res[c].status, "ok");
        for (i = 0; i < nc; i++) val[i * ng + j] = ok ? r->res[c].cat[cats[i]] / REP_GIB : NAN; /* nan: did not fit */
    }
    for (i = 0; i < nc; i++) memcpy(rgb + 3 * i, dpprof_plot_palette(cats[i]), 3);
    memset(&d, 0, sizeof d);
    snprintf(title, sizeof title, "memory at the peak by category");
    snprintf(olabel, sizeof olabel, "peak relative to %s", ref && strcmp(ref, "vanilla") ? ref : "non-private");
    d.xlabel = rep_axis_title(gs);
    d.ylabel = "memory at the peak (GiB)";
    rep_user_labels(r, l, where, NULL, title, sizeof title, &d.xlabel, &d.ylabel);
    d.title = title;
    rep_disp_labels(r, ag, gl, ng, gb, gd);
    d.width = REP_FIG_W;
    d.height = REP_FIG_H;
    d.n_groups = ng;
    d.group_names = gd;
    d.n_cats = nc;
    d.cat_names = cl;
    d.cat_rgb = rgb;
    d.values = val;
    d.no_overhead = refg < 0;
    d.ref_group = refg < 0 ? 0 : refg;
    d.overhead_label = olabel;
    d.text_scale = REP_FIG_TEXT;
    memset(&cv, 0, sizeof cv);
    rc = dpprof_plot_stacked(&d, &cv);
    free(val);
    return rep_render(r, l, rc, &cv);
}

/* rows x cols of one metric, the value in every cell, oom cells marked */
static int rep_fig_heatmap(rep *r, const rep_line *l) {
    const char *rs = rep_get(l, "rows"), *cs = rep_get(l, "cols"), *metric = rep_get(l, "value"), *where = rep_get(l, "where");
    int ar = rep_axis(r, rs), ac = rep_axis(r, cs), nr, nc, i, j, rc;
    const char *rl[REP_MAXL], *cl[REP_MAXL], *rd[REP_MAXL], *cd[REP_MAXL];
    char rb[REP_MAXL][REP_DISP], cb[REP_MAXL][REP_DISP];
    double *val;
    dpprof_heatmap_desc d;
    dpprof_canvas cv;
    char title[256], vlabel[96];
    if (!metric) return rep_bad(r, l->line, "heatmap needs value=METRIC%s", "");
    nr = rep_labels(r, ar, rl, REP_MAXL);
    nc = rep_labels(r, ac, cl, REP_MAXL);
    val = (double *)calloc((size_t)nr * (size_t)nc, sizeof(double));
    if (!val) return EXIT_ERROR;
    for (i = 0; i < nr; i++)
        for (j = 0; j < nc; j++) val[i * nc + j] = rep_metric(r, rep_find(r, where, ar, rl[i], ac, cl[j]), metric);
    memset(&d, 0, sizeof d);
    rep_metric_title(metric, vlabel, sizeof vlabel);
    snprintf(title, sizeof title, "%s", vlabel);
    rep_title_source(r, where, metric, title, sizeof title);
    d.xlabel = rep_axis_title(cs);
    d.ylabel = rep_axis_title(rs);
    rep_user_labels(r, l, where, metric, title, sizeof title, &d.xlabel, &d.ylabel);
    d.title = title;
    d.value_label = vlabel;
    rep_disp_labels(r, ar, rl, nr, rb, rd);
    rep_disp_labels(r, ac, cl, nc, cb, cd);
    d.width = REP_FIG_W;
    d.height = REP_FIG_H;
    d.n_rows = nr;
    d.n_cols = nc;
    d.row_names = rd;
    d.col_names = cd;
    d.values = val;
    d.text_scale = REP_FIG_TEXT;
    memset(&cv, 0, sizeof cv);
    rc = dpprof_plot_heatmap(&d, &cv);
    free(val);
    return rep_render(r, l, rc, &cv);
}

/* one metric against a numeric axis, a line per series, log-log, configurations that did not fit
   marked oom at their x */
static int rep_fig_lines(rep *r, const rep_line *l) {
    const char *xs = rep_get(l, "x"), *ss = rep_get(l, "series"), *metric = rep_get(l, "value"), *where = rep_get(l, "where");
    int ax = rep_axis(r, xs), as = rep_axis(r, ss), nx, ns, i, j, rc, markers[REP_MAXL], lin_y;
    const char *xl[REP_MAXL], *sl[REP_MAXL], *sd[REP_MAXL];
    char sb[REP_MAXL][REP_DISP], xlabel[160], budget[64];
    double xv[REP_MAXL], *yv, limit = NAN, limit_lo = NAN;
    unsigned char *oom, *hollow, rgb[REP_MAXL * 3];
    int nhollow = 0, hollow_dry = 1;
    dpprof_lines_desc d;
    dpprof_canvas cv;
    char title[256], ylabel[112];
    if (!metric || as < 0) return rep_bad(r, l->line, "lines needs series=AXIS and value=METRIC%s", "");
    nx = rep_labels(r, ax, xl, REP_MAXL);
    ns = rep_labels(r, as, sl, REP_MAXL);
    for (i = 0; i < nx; i++) xv[i] = rep_label_num(xl[i]); /* positive: rep_validate */
    yv = (double *)calloc((size_t)nx * (size_t)ns, sizeof(double));
    oom = (unsigned char *)calloc((size_t)nx * (size_t)ns, 1);
    hollow = (unsigned char *)calloc((size_t)nx * (size_t)ns, 1);
    if (!yv || !oom || !hollow) {
        free(yv);
        free(oom);
        free(hollow);
        return EXIT_ERROR;
    }
    for (j = 0; j < ns; j++) {
        memcpy(rgb + 3 * j, rep_series_rgb(r, as, sl[j], j), 3);
        markers[j] = j % DPPROF_PLOT_MARKER_N;
        for (i = 0; i < nx; i++) {
            long long c = rep_find(r, where, ax, xl[i], as, sl[j]);
            yv[j * nx + i] = rep_metric(r, c, metric);
            if (c >= 0 && r->res[c].have && !strcmp(r->res[c].status, "oom")) {
                /* did not fit: hollow at its peak without the limit where the result holds it, else a cross in the band */
                const double v = rep_metric_full(r, c, metric);
                yv[j * nx + i] = v;
                hollow[j * nx + i] = v == v;
                oom[j * nx + i] = !(v == v);
                nhollow += v == v;
                if (v == v && strcmp(r->res[c].backend, "dry")) hollow_dry = 0;
            }
            if (c >= 0 && r->res[c].have && r->res[c].mem_limit > 0) { /* by algorithm under --device: the range */
                if (!(limit >= r->res[c].mem_limit)) limit = r->res[c].mem_limit;
                if (!(limit_lo <= r->res[c].mem_limit)) limit_lo = r->res[c].mem_limit;
            }
        }
    }
    memset(&d, 0, sizeof d);
    /* a ratio to non-private training or to the FLOP ceiling stays near 1: a linear axis shows its differences;
       every other metric spans decades: log10, and the label says so */
    lin_y = !strcmp(metric, "overhead") || !strcmp(metric, "speed") || !strcmp(metric, "flop_ceiling");
    { /* the x axis is log10: its label says so */
        char mt[96], *paren;
        rep_metric_title(metric, mt, sizeof mt);
        snprintf(title, sizeof title, "%s", mt);
        rep_title_source(r, where, metric, title, sizeof title);
        paren = strrchr(mt, ')');
        if (lin_y) snprintf(ylabel, sizeof ylabel, "%s", mt);
        else if (paren && paren == mt + strlen(mt) - 1) {
            *paren = 0;
            snprintf(ylabel, sizeof ylabel, "%s, log)", mt);
        } else snprintf(ylabel, sizeof ylabel, "%s (log)", mt);
    }
    d.xlabel = rep_axis_title(xs);
    d.ylabel = ylabel;
    rep_user_labels(r, l, where, metric, title, sizeof title, &d.xlabel, &d.ylabel);
    snprintf(xlabel, sizeof xlabel, "%s, log scale", d.xlabel);
    d.xlabel = xlabel;
    d.title = title;
    rep_disp_legend(r, as, sl, ns, sb, sd, 1);
    if (!strcmp(metric, "peak_gib") && limit > 0) { /* the memory limit the oom configurations exceeded */
        if (limit_lo < limit - 0.05 * REP_GIB) snprintf(budget, sizeof budget, "memory limit %.1f-%.1f GiB by algorithm", limit_lo / REP_GIB, limit / REP_GIB);
        else snprintf(budget, sizeof budget, "memory limit %.1f GiB", limit / REP_GIB);
        d.budget = limit / REP_GIB;
        d.budget_label = budget;
        d.budget_label_free = 1; /* the curves run on past the line to the hollow points: the label where it crosses the fewest */
    }
    d.oom_label = "out of memory";
    /* the hollow points' values: the dry backend's, exact, where it ran the study; a measured study's are its dry model's */
    if (nhollow)
        d.hollow_label = hollow_dry ? "does not fit (exact peak)" : "does not fit (dry model)";
    d.hollow = hollow;
    d.width = REP_FIG_W;
    d.height = REP_FIG_H;
    d.n_points = nx;
    d.x = xv;
    d.n_series = ns;
    d.y = yv;
    d.oom = oom;
    d.series_names = sd;
    d.series_rgb = rgb;
    d.series_marker = markers;
    d.log_x = 1;
    d.log_y = !lin_y;
    if (lin_y) { /* the ratios' own range, to a twentieth, not from 0: their differences are a few percent */
        double lo = INFINITY, hi = -INFINITY;
        for (i = 0; i < nx * ns; i++)
            if (yv[i] == yv[i]) lo = yv[i] < lo ? yv[i] : lo, hi = yv[i] > hi ? yv[i] : hi;
        if (lo <= hi) {
            d.y_min = floor(lo * 20.0 - 1.0) / 20.0;
            d.y_max = ceil(hi * 20.0 + 1.0) / 20.0;
            if (d.y_min < 0) d.y_min = 0;
        }
    }
    d.x_ticks_at_data = 1;
    d.text_scale = REP_FIG_TEXT;
    memset(&cv, 0, sizeof cv);
    rc = dpprof_plot_lines(&d, &cv);
    free(yv);
    free(oom);
    free(hollow);
    return rep_render(r, l, rc, &cv);
}

/* a figure with nothing measured to draw: its title and a sentence that says so, word-wrapped */
static int rep_fig_note(rep *r, const rep_line *l, const char *title, const char *note) {
    static const unsigned char ink[3] = {0, 0, 0};
    dpprof_canvas cv;
    const int W = REP_FIG_W, H = REP_FIG_H, scale = REP_FIG_TEXT, cw = 8 * scale, per = (W - 120) / cw;
    char line[256];
    const char *t;
    int y = 60, pass;
    memset(&cv, 0, sizeof cv);
    if (dpprof_canvas_init(&cv, W, H) != 0) return EXIT_ERROR;
    for (pass = 0; pass < 2; pass++) { /* the title, then the sentence lower down */
        for (t = pass ? note : title; *t && y < H - 40;) {
            int n = (int)strlen(t), cut = n;
            if (n > per) { /* the last space that fits */
                for (cut = per; cut > 0 && t[cut] != ' '; cut--) {}
                if (cut == 0) cut = per;
            }
            snprintf(line, sizeof line, "%.*s", cut, t);
            dpprof_canvas_text(&cv, 60, y, line, scale, ink);
            y += dpprof_canvas_text_height(scale) + 10;
            t += cut;
            while (*t == ' ') t++;
        }
        y = H / 2 - 40;
    }
    return rep_render(r, l, 0, &cv);
}

/* the trade-off: peak memory against the measured step time, a point per configuration (colour: its label on
   the series axis); the configurations with no timed result are named in one sentence, never drawn */
static int rep_fig_tradeoff(rep *r, const rep_line *l) {
    const char *ss = rep_get(l, "series"), *where = rep_get(l, "where");
    int as = rep_axis(r, ss), n = 0, nmiss = 0, untimed = 0, rc, nl, j;
    long long first = 0;
    double x[REP_MAXL], y[REP_MAXL];
    const char *lab[REP_MAXL], *ll[REP_MAXL];
    unsigned char rgb[REP_MAXL * 3], lrgb[REP_MAXL * 3];
    int mk[REP_MAXL], lmk[REP_MAXL];
    char title[512], miss[1024] = "", src[256];
    size_t ml = 0;
    long long c;
    dpprof_canvas cv;
    if (as < 0) return rep_bad(r, l->line, "tradeoff needs series=AXIS of this experiment%s", "");
    nl = rep_labels(r, as, ll, REP_MAXL);
    for (j = 0; j < nl; j++) {
        memcpy(lrgb + 3 * j, rep_series_rgb(r, as, ll[j], j), 3);
        lmk[j] = j % DPPROF_PLOT_MARKER_N;
    }
    for (c = 0; c < r->sp.nconf; c++) {
        const rep_res *xr = &r->res[c];
        const char *sl = rep_label(r, c, as);
        if (!rep_where(r, c, where)) continue;
        for (j = 0; j < nl && strcmp(ll[j], sl); j++) {}
        if (xr->have && !strcmp(xr->status, "ok") && xr->step_ms == xr->step_ms && xr->peak == xr->peak) {
            if (n == REP_MAXL) continue;
            x[n] = xr->step_ms;
            y[n] = xr->peak / REP_GIB;
            lab[n] = sl;
            memcpy(rgb + 3 * n, lrgb + 3 * j, 3);
            mk[n++] = lmk[j];
            continue;
        }
        if (xr->have && !strcmp(xr->status, "ok")) untimed++, first = c;
        if (ml < sizeof miss)
            ml += (size_t)snprintf(miss + ml, sizeof miss - ml, "%s%s (%s)", nmiss ? ", " : "", sl,
                                   !xr->have ? "not run" : (strcmp(xr->status, "ok") ? xr->status : "not timed: memory only"));
        nmiss++;
    }
    snprintf(title, sizeof title, "%s: peak memory against step time%s%s%s", r->sp.name, where ? " (" : "", where ? where : "", where ? ")" : "");
    if (nmiss) fprintf(r->summary, "  %s: no timed result for %s\n", l->fig, miss);
    if (!n) {
        char note[1400];
        if (untimed == nmiss) /* memory only (dry): one reason for every configuration */
            snprintf(note, sizeof note, "No configuration of this figure has a timed result: these results are memory only (backend %s), and step times need a run on a GPU (make %s BACKEND=cuda); nothing is drawn.",
                     r->res[first].backend, r->sp.name);
        else snprintf(note, sizeof note, "No configuration of this figure has a timed result (%s): step times need a run on a GPU (make %s BACKEND=cuda); nothing is drawn.", miss, r->sp.name);
        return rep_fig_note(r, l, title, note);
    }
    rep_sources_n(r, where, 1, 0, src, sizeof src);
    strncat(title, ", measured: ", sizeof title - strlen(title) - 1);
    strncat(title, src, sizeof title - strlen(title) - 1);
    if (nmiss) {
        strncat(title, ". No timed result for ", sizeof title - strlen(title) - 1);
        strncat(title, miss, sizeof title - strlen(title) - 1);
    }
    rep_user_labels(r, l, where, "step_ms", title, sizeof title, NULL, NULL);
    {
        /* clang-format off */
        const dpprof_scatter_desc d = {.title = title, .xlabel = "step time (ms, measured)", .ylabel = "peak memory (GiB)", .width = REP_FIG_W, .height = REP_FIG_H,
                                       .n_points = n, .x = x, .y = y, .labels = lab, .point_rgb = rgb, .point_marker = mk,
                                       .n_legend = nl, .legend_names = ll, .legend_rgb = lrgb, .legend_marker = lmk, .text_scale = REP_FIG_TEXT};
        /* clang-format on */
        memset(&cv, 0, sizeof cv);
        rc = dpprof_plot_scatter(&d, &cv);
    }
    return rep_render(r, l, rc, &cv);
}

/* ops where=...: one configuration's ops (--dram-ops on a GPU), the most bytes first (up to 12): each op's analytic
   bytes beside its measured dram bytes (read + write) in the counters step */
static int rep_fig_ops(rep *r, const rep_line *l) {
    enum {
        MAXG = 12
    };
    const char *where = rep_get(l, "where"), *gn[MAXG], *sn[2] = {"analytic", "measured DRAM (CUPTI)"};
    static const unsigned char rgb[6] = {150, 150, 150, 31, 119, 180};
    long long c = rep_find(r, where, -1, NULL, -1, NULL);
    const rep_res *x = c >= 0 ? &r->res[c] : NULL;
    double *val;
    int order[REP_MAXOPS], n, i, j, g;
    char title[512], note[256];
    dpprof_bars_desc d;
    if (c < 0) return rep_bad(r, l->line, "no configuration matches where=%s", where ? where : "");
    if (!x->have || strcmp(x->status, "ok") || !x->ntr) {
        snprintf(title, sizeof title, "%s: analytic and measured DRAM bytes per op (%s)", r->sp.name, r->sp.id[c]);
        snprintf(note, sizeof note, "This configuration has no per-op measured DRAM bytes: they need the cuda backend on a GPU with counters and --dram-ops (make %s BACKEND=cuda).",
                 r->sp.name);
        return rep_fig_note(r, l, title, note);
    }
    n = x->ntr;
    for (i = 0; i < n; i++) order[i] = i;
    for (i = 1; i < n; i++) /* the most bytes (measured or analytic) first */
        for (j = i; j > 0; j--) {
            const int a = order[j], b = order[j - 1];
            const double va = x->tran[a] > x->trdram[a] ? x->tran[a] : x->trdram[a], vb = x->tran[b] > x->trdram[b] ? x->tran[b] : x->trdram[b];
            if (va <= vb) break;
            order[j] = b, order[j - 1] = a;
        }
    g = n < MAXG ? n : MAXG;
    if (!(val = (double *)calloc(2 * (size_t)g, sizeof *val))) return EXIT_ERROR;
    fprintf(r->summary, "figure %s: %s, measured DRAM bytes (read + write) over analytic per op, the counters step (%s on %s, commit %s, %s):", l->fig, r->sp.id[c], x->backend,
            x->device, x->build.commit[0] ? x->build.commit : "?", x->date[0] ? x->date : "?");
    for (i = 0; i < n; i++) fprintf(r->summary, "%s %s %.3g", i ? "," : "", x->trname[order[i]], x->tran[order[i]] > 0 ? x->trdram[order[i]] / x->tran[order[i]] : NAN);
    fputc('\n', r->summary);
    for (i = 0; i < g; i++) { /* series-major: the analytic bars, then the measured */
        gn[i] = x->trname[order[i]];
        val[i] = x->tran[order[i]] / REP_GIB;
        val[g + i] = x->trdram[order[i]] / REP_GIB;
    }
    memset(&d, 0, sizeof d);
    /* what measured it: the device, the commit and the day of the run */
    snprintf(title, sizeof title, "%s: DRAM bytes per op, analytic and measured (%s, %s, %s)", r->sp.id[c], x->device, x->build.commit[0] ? x->build.commit : "?", x->date[0] ? x->date : "?");
    d.xlabel = "op";
    d.ylabel = "GiB per counters step";
    d.n_groups = g;
    d.group_names = gn;
    d.n_series = 2;
    d.series_names = sn;
    d.series_rgb = rgb;
    rep_user_labels(r, l, where, "dram_gib", title, sizeof title, &d.xlabel, &d.ylabel);
    d.title = title;
    return rep_bars_png(r, l, &d, val);
}

static int rep_figure(rep *r, const rep_line *l) {
    if (!strcmp(l->kind, "ops")) return rep_fig_ops(r, l);
    if (!strcmp(l->kind, "bars")) return rep_fig_bars(r, l, 0);
    if (!strcmp(l->kind, "tradeoff")) return rep_fig_tradeoff(r, l);
    if (!strcmp(l->kind, "capacity")) return rep_fig_bars(r, l, 1);
    if (!strcmp(l->kind, "modules")) return rep_fig_parts(r, l, 0);
    if (!strcmp(l->kind, "phases")) return rep_fig_parts(r, l, 1);
    if (!strcmp(l->kind, "timeline")) return rep_fig_timeline(r, l);
    if (!strcmp(l->kind, "stacked")) return rep_fig_stacked(r, l);
    if (!strcmp(l->kind, "heatmap")) return rep_fig_heatmap(r, l);
    if (!strcmp(l->kind, "lines")) return rep_fig_lines(r, l);
    return rep_bad(r, l->line, "unknown figure kind '%s' (known: bars, capacity, heatmap, stacked, lines, modules, ops, phases, timeline, tradeoff)", l->kind);
}

/* ---- fit: the fastest private configuration that fits a user's GPUs --------------------------------------
   for each algorithm x checkpointing x ZeRO stage x LoRA rank, the largest physical batch whose exact dry peak
   (rank 0's, the steps' whole: a probe runs the first, a middle and the last physical batch of two steps in
   process, no JSON) plus a margin measured on GPUs fits the device; ranked by the flops of a logical step, or by
   a step time predicted from the per-op rates of committed GPU runs on that device (data/bench), with that
   prediction's error on those runs, each shape left out in turn. docs/fit.md */

/* the GPUs whose memory fit knows: nvidia-smi's memory.total (MiB). H100 and H200: the committed runs' own
   device.txt (data/bench); the others as their nvidia-smi reports it */
typedef struct fit_device {
    const char *name, *also; /* --device NAME, or one of also ('|' between), any case */
    double mib;
} fit_device;
static const fit_device fit_devices[] = {
    {"H100", "H100-80|H100-80GB|H100-SXM|H100-PCIE", 81559},
    {"H200", "H200-141|H200-141GB", 143771},
    {"A100-80", "A100|A100-80GB", 81920},
    {"A100-40", "A100-40GB", 40960},
    {"L40S", "L40S-48", 46068},
    {"A10", "A10G|A10-24", 23028},
    {"L4", "L4-24", 23034},
    {"RTX4090", "4090|RTX-4090", 24564},
};
#define FIT_NDEV ((int)(sizeof fit_devices / sizeof fit_devices[0]))
/* the table's device whose name (or another name) is `name`, any case; NULL */
static const fit_device *fit_device_find(const char *name) {
    int k;
    for (k = 0; k < FIT_NDEV; k++) {
        const char *p = fit_devices[k].also;
        if (!strcasecmp(name, fit_devices[k].name)) return &fit_devices[k];
        while (*p) {
            size_t n = strcspn(p, "|");
            if (strlen(name) == n && !strncasecmp(name, p, n)) return &fit_devices[k];
            p += n + (p[n] == '|');
        }
    }
    return NULL;
}

/* is a run's meta.device (and its memory) this table entry: the name's model number as a word of it, the memory
   within 15% */
static int fit_device_is(const fit_device *d, const char *meta, double mem_bytes) {
    char key[32];
    const char *p;
    size_t n = strcspn(d->name, "-");
    snprintf(key, sizeof key, "%.*s", (int)n, !strncmp(d->name, "RTX", 3) ? d->name + 3 : d->name);
    if (!strncmp(d->name, "RTX", 3)) n = strlen(key);
    for (p = meta; (p = strstr(p, key)) != NULL; p++)
        if ((p == meta || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n])) break;
    return p && !(mem_bytes == mem_bytes && fabs(mem_bytes / (d->mib * 1048576.0) - 1.0) > 0.15);
}

static const char *fit_dtype(int dtype) { return dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32"; }
#define FIT_GIB 1073741824.0
#define FIT_MAXC 512 /* combinations searched */
#define FIT_MAXL 8   /* values of a list option */

typedef struct fit_opts {
    run_opts run; /* first: the entries of run's table write into it (the model, --seq, --batch, --dtype, privacy) */
    const char *algos, *ckpts, *zeros, *loras, *device, *json, *plot, *bench;
    const char *link, *network; /* the links within a node and between nodes (dpprof_link_find) */
    const char *nccl_mem;       /* each GPU's NCCL buffers (a size), added to every row's need */
    int gpus, nodes;
    double epochs;
} fit_opts;

/* an op's cost in a step, by name (a probe's tally) */
typedef struct fit_cost {
    int n;
    dpprof_op_cost op[DPPROF_OP_COST_MAX];
    double flops;                          /* the step's: every op's */
    int64_t coll_bytes[DPPROF_COLL_COUNT]; /* the step's collectives, rank 0's bytes (the ring's) and calls, by kind */
    int64_t coll_calls[DPPROF_COLL_COUNT];
} fit_cost;

/* the committed GPU runs of the device and dtype asked: per-op rates, and the runs to check them on */
typedef struct fit_run {
    char shape[96], algo[16], file[320];
    char build[96];                                                                                         /* the run's day, commit and sources (the result's meta, else its folder's provenance file) */
    double step_ms;                                                                                         /* measured: the median step */
    double op_ms;                                                                                           /* its ops' time a step (the timed warm-up steps') */
    double loo_ms;                                                                                          /* its step time predicted from the other shapes' runs (nan: none) */
    fit_cost tally;                                                                                         /* a step's ops, replayed on dry from its config */
    double ms[DPPROF_OP_COST_MAX], fl[DPPROF_OP_COST_MAX], by[DPPROF_OP_COST_MAX], cnt[DPPROF_OP_COST_MAX]; /* measured, by the tally's op */
} fit_run;

typedef struct fit_bench {
    char dir[PATH_MAX];
    int found;                     /* result files read */
    double gap[DPPROF_ALGO_COUNT]; /* the largest (driver - accountant) / accountant peak measured, per algorithm (-1: none) */
    char gap_from[DPPROF_ALGO_COUNT][160];
    double gap_all; /* over every algorithm */
    double ctx_mib; /* nvidia-smi's total less the free memory of an idle process: the largest measured */
    char ctx_from[96];
    int ngaps;
    fit_run *runs; /* the device's runs of the dtype asked (newest of each shape and algorithm) */
    int nruns, skipped;
    char skipped_why[256];
    double loo_mean, loo_max; /* leave-one-shape-out relative error of the predicted step time */
    int loo_n, nshapes;
    char loo_worst[160];
    char device_name[128]; /* the runs' meta.device */
    char builds[512];      /* what the runs were built from: each day, commit and sources, with its count */
    char prov_err[512];    /* a folder's provenance file that could not be read ("": none) */
} fit_bench;

typedef struct fit_row {
    int algo, ckpt, zero, lora;
    int b, accum;          /* the largest physical batch that fits (0: none), the physical batches of a rank's step */
    int64_t peak, peak1;   /* rank 0's peak at b; at a physical batch of 1 */
    double need, headroom; /* peak plus margin; the budget less that (bytes) */
    double flops, pred_ms; /* a logical step's, every GPU's; the predicted step time (nan: none) */
    dpprof_comm comm;      /* the step's collectives' time on the fabric, modelled (zero on one GPU) */
    double comm_ms;        /* comm.seconds in ms */
    fit_cost cost;         /* rank 0's step at b */
    int probes;
    int rank; /* the table's rank: rows tied with a better one (predicted times within the model's error) share its */
} fit_row;

typedef struct fit_ctx {
    fit_opts o;
    dpprof_config base;  /* the model and training, as given (the file's model filled in) */
    dpprof_config given; /* the command line's alone (what the echoed command repeats) */
    long long params;    /* the model's parameters */
    dpprof_shape shape;
    int brank;            /* a rank's samples a step */
    double total;         /* the device's memory (bytes) */
    const char *dev_name; /* the table's name, or NULL (--gpu-memory) */
    double sigma, eps, q; /* the noise; the epsilon it spends (nan where not known); the sample rate */
    long long steps;
    dpprof_accountant acct;
    char privacy[512]; /* the line that says it */
    fit_bench bench;
    int algos[DPPROF_ALGO_COUNT], nalgo, ckpts[2], nckpt, zeros[4], nzero, loras[FIT_MAXL], nlora;
    fit_row *rows;
    int nrows;
    long long probes;
    dpprof_fabric fabric; /* --gpus over --nodes, --link, --network: the collectives' links */
    char links[512];      /* the fabric in words, and where each default came from */
    double nccl;          /* --nccl-mem: each GPU's NCCL buffers (bytes), outside the accountant; 0: not counted */
} fit_ctx;

/* the budget a configuration needs: its peak, the allocator's and the driver's share of it, the context. the
   allocator's share is dpprof's, measured: PyTorch's caching allocator's (reserved over allocated) is not, and is
   not borrowed for it */
static double fit_frac(const fit_ctx *f, int algo) {
    if (f->base.framework >= DPPROF_FRAMEWORK_PYTORCH) return 0;
    return f->bench.gap[algo] >= 0 ? f->bench.gap[algo] : f->bench.gap_all;
}
static double fit_need(const fit_ctx *f, int algo, int64_t peak) { return (double)peak * (1.0 + fit_frac(f, algo)) + f->bench.ctx_mib * 1048576.0 + f->nccl; }

/* a probe's configuration for algo: vanilla takes none of the DP options given (they are the DP algorithms'; the
   run command refuses them with vanilla, and fit compares vanilla beside them) */
static void fit_probe_algo(dpprof_config *c, int algo, double sigma) {
    c->algo = (dpprof_algo)algo;
    c->sigma = algo == DPPROF_ALGO_VANILLA ? 0 : sigma;
    if (algo == DPPROF_ALGO_VANILLA) c->delta = 0, c->max_grad_norm = 0, c->per_layer_clipping = 0, c->target_epsilon = 0, c->secure_noise = 0;
}

/* one dry probe of rank 0: `steps` steps of `batch` samples a rank in physical batches of b. peak and (cost) the
   ops of a step */
static int fit_probe(fit_ctx *f, const fit_row *r, int b, int batch, int steps, int64_t *peak, fit_cost *cost) {
    dpprof_config c = f->base;
    dpprof_session *s = NULL;
    int rc, i;
    fit_probe_algo(&c, r->algo, f->sigma);
    c.checkpoint = (dpprof_checkpoint)r->ckpt;
    c.zero = r->zero;
    c.lora_rank = r->lora;
    if (!r->lora) c.lora_alpha = 0, c.lora_targets = NULL, c.lora_dropout = 0;
    c.ranks = f->o.gpus;
    c.batch = batch * f->o.gpus;
    c.physical_batch = b;
    c.steps = steps;
    f->probes++;
    rc = dpprof_session_create(&c, &s);
    for (i = 0; rc == DPPROF_OK && i < steps; i++) rc = dpprof_session_step(s);
    if (rc == DPPROF_OK) *peak = dpprof_session_prof(s)->peak_bytes;
    if (rc == DPPROF_OK && cost && c.framework >= DPPROF_FRAMEWORK_PYTORCH) {
        /* the framework's walk charges no ops: the same step's math in dpprof's analytic costs (the same matmuls,
           dpprof's attention in the place of sdpa's or eager's) */
        dpprof_session_destroy(s);
        s = NULL;
        c.framework = DPPROF_FRAMEWORK_DPPROF;
        c.attention = DPPROF_ATTENTION_DPPROF;
        rc = dpprof_session_create(&c, &s);
        for (i = 0; rc == DPPROF_OK && i < steps; i++) rc = dpprof_session_step(s);
    }
    if (rc == DPPROF_OK && cost) {
        dpprof_dist_info d;
        cost->n = dpprof_session_op_costs(s, cost->op, DPPROF_OP_COST_MAX);
        cost->flops = 0;
        for (i = 0; i < cost->n; i++) cost->flops += cost->op[i].flops;
        dpprof_session_dist(s, &d);
        cost->coll_bytes[DPPROF_COLL_ALL_REDUCE] = d.all_reduce_bytes, cost->coll_calls[DPPROF_COLL_ALL_REDUCE] = d.all_reduce_calls;
        cost->coll_bytes[DPPROF_COLL_REDUCE_SCATTER] = d.reduce_scatter_bytes, cost->coll_calls[DPPROF_COLL_REDUCE_SCATTER] = d.reduce_scatter_calls;
        cost->coll_bytes[DPPROF_COLL_ALL_GATHER] = d.all_gather_bytes, cost->coll_calls[DPPROF_COLL_ALL_GATHER] = d.all_gather_calls;
    }
    dpprof_session_destroy(s);
    return rc;
}

/* a rank's step of B samples in physical batches of b: the first, a middle and the last (r <= b samples) are all
   that differ, so [b, b, r] over two steps has the peak of the whole. Opacus's BatchMemoryManager cuts a logical
   batch into near-equal parts of at most b, and under Poisson sampling (make_private's default) a part of any size
   up to b comes: two parts of b (the second's clipped sums added into the first's), one where B <= b, hold the peak
   of every draw */
static int fit_peak(fit_ctx *f, fit_row *r, int b, int64_t *peak) {
    const int B = f->brank, n = (B + b - 1) / b, last = B - (n - 1) * b;
    r->probes++;
    if (f->base.framework == DPPROF_FRAMEWORK_OPACUS) return fit_probe(f, r, b, B > b ? 2 * b : B, 2, peak, NULL);
    return fit_probe(f, r, b, n <= 3 ? B : 2 * b + last, 2, peak, NULL);
}

/* c = a*x + b*y + d*z, op by op (the ops of x first, then any only in y or z) */
static void fit_cost_mix(fit_cost *c, double a, const fit_cost *x, double b, const fit_cost *y, double d, const fit_cost *z) {
    const fit_cost *in[3] = {x, y, z};
    const double w[3] = {a, b, d};
    int k, i, j;
    memset(c, 0, sizeof *c);
    for (k = 0; k < 3; k++) {
        if (!in[k] || w[k] == 0) continue;
        for (i = 0; i < in[k]->n; i++) {
            for (j = 0; j < c->n && strcmp(c->op[j].name, in[k]->op[i].name); j++) {}
            if (j == c->n) {
                if (c->n == DPPROF_OP_COST_MAX) continue;
                c->op[c->n++].name = in[k]->op[i].name;
            }
            c->op[j].count += (long long)llround(w[k] * (double)in[k]->op[i].count);
            c->op[j].flops += w[k] * in[k]->op[i].flops;
            c->op[j].bytes += w[k] * in[k]->op[i].bytes;
        }
        c->flops += w[k] * in[k]->flops;
        for (j = 0; j < DPPROF_COLL_COUNT; j++) { /* (whole weights: the mix's counts stay exact) */
            c->coll_bytes[j] += (int64_t)llround(w[k] * (double)in[k]->coll_bytes[j]);
            c->coll_calls[j] += (int64_t)llround(w[k] * (double)in[k]->coll_calls[j]);
        }
    }
}

/* the ops of rank 0's whole step at b: a step's cost is the physical batches' plus the step's own, each physical
   batch's a function of its samples alone, so three one-step probes give it: P1 (one batch of b), P2 (two), P3 (one
   of r < b, the last batch). with f = P2 - P1 a further batch of b, g = 2 P1 - P2 the step's own and the first
   batch's extra, P3 = f(r) + g: n_full f + P3 (n_full f + g where r = b) */
static int fit_cost_at(fit_ctx *f, fit_row *r, int b, fit_cost *out) {
    const int B = f->brank, n = (B + b - 1) / b, last = B - (n - 1) * b;
    int64_t pk;
    int rc;
    fit_cost *p = (fit_cost *)calloc(3, sizeof *p);
    if (!p) return DPPROF_ERR_OOM;
    if (n <= 3) rc = fit_probe(f, r, b, B, 1, &pk, out);
    else {
        rc = fit_probe(f, r, b, b, 1, &pk, &p[0]);
        if (rc == DPPROF_OK) rc = fit_probe(f, r, b, 2 * b, 1, &pk, &p[1]);
        if (rc == DPPROF_OK && last < b) rc = fit_probe(f, r, last, last, 1, &pk, &p[2]);
        if (rc == DPPROF_OK) {
            const double full = last < b ? n - 1 : n;
            if (last < b) fit_cost_mix(out, -full, &p[0], full, &p[1], 1.0, &p[2]);
            else fit_cost_mix(out, 2.0 - full, &p[0], full - 1.0, &p[1], 0, NULL);
        }
    }
    free(p);
    return rc;
}

/* the largest physical batch of a combination that fits (0: not even one sample), by probes: one and two samples
   give the slope, the guess it makes is checked, then bisection */
static int fit_search(fit_ctx *f, fit_row *r) {
    int64_t p1, p2, pk;
    int lo, hi, rc, guess;
    const double budget = f->total;
    r->b = 0;
    if ((rc = fit_peak(f, r, 1, &p1)) != DPPROF_OK) return rc;
    r->peak1 = p1;
    r->need = fit_need(f, r->algo, p1);
    r->headroom = budget - r->need;
    if (r->need > budget) return DPPROF_OK;
    lo = 1, hi = f->brank + 1; /* lo fits; hi does not (brank + 1: past the batch) */
    r->peak = p1;
    if (hi > 2) {
        if ((rc = fit_peak(f, r, 2, &p2)) != DPPROF_OK) return rc;
        if (fit_need(f, r->algo, p2) <= budget) {
            lo = 2, r->peak = p2;
            if (p2 > p1) { /* the guess of a straight line, and the sample after it */
                const double g = 1.0 + ((budget - f->bench.ctx_mib * 1048576.0 - f->nccl) / (1.0 + fit_frac(f, r->algo)) - (double)p1) / (double)(p2 - p1);
                guess = g >= (double)hi ? hi - 1 : (int)g;
                if (guess > lo && guess < hi) {
                    if ((rc = fit_peak(f, r, guess, &pk)) != DPPROF_OK) return rc;
                    if (fit_need(f, r->algo, pk) <= budget) lo = guess, r->peak = pk;
                    else hi = guess;
                }
                if (lo + 1 < hi && lo == guess) {
                    if ((rc = fit_peak(f, r, lo + 1, &pk)) != DPPROF_OK) return rc;
                    if (fit_need(f, r->algo, pk) <= budget) lo = lo + 1, r->peak = pk;
                    else hi = lo + 1;
                }
            }
        } else hi = 2;
    }
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        if ((rc = fit_peak(f, r, mid, &pk)) != DPPROF_OK) return rc;
        if (fit_need(f, r->algo, pk) <= budget) lo = mid, r->peak = pk;
        else hi = mid;
    }
    r->b = lo;
    r->accum = (f->brank + lo - 1) / lo;
    r->need = fit_need(f, r->algo, r->peak);
    r->headroom = budget - r->need;
    if ((rc = fit_cost_at(f, r, lo, &r->cost)) != DPPROF_OK) return rc;
    r->flops = r->cost.flops * f->o.gpus;
    return DPPROF_OK;
}

/* ---- fit: what the committed GPU runs measured (data/bench/DATE-DEVICE/): the margin, and the per-op rates ---------- */

/* the names in a directory (no dot files), sorted: the run folders are named by date, oldest first. -1: no directory */
static int fit_ls(const char *dir, char ***out) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    int n = 0, cap = 0;
    *out = NULL;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            char **w = (char **)realloc(v, (size_t)(cap = cap ? 2 * cap : 32) * sizeof *v);
            if (!w) break;
            v = w;
        }
        if (!(v[n] = strdup(e->d_name))) break;
        n++;
    }
    closedir(d);
    if (n) qsort(v, (size_t)n, sizeof *v, sweep_cmp_id);
    *out = v;
    return n;
}
static void fit_ls_free(char **v, int n) {
    int i;
    for (i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* a number at a path of a result (the report's reader): nan where there is none */
static double fit_num(const dpprof_json *root, const char *path) { return rep_num(dpprof_json_path(root, path)); }

/* device.txt of a run folder: `dpprof devices` ("139.8 GiB (139.3 GiB free)") and nvidia-smi's memory.total
   ("143771 MiB"): the memory an idle process cannot have, in MiB (nan: not there). numbers no GPU has (a total past
   2^24 MiB, 16 TiB; a free memory past the total) are refused: nan, and why in err (else err is left as it was) */
static double fit_ctx_mib(const char *dir, char *err, size_t cap) {
    char path[PATH_MAX + 16], buf[4096], *p, *q;
    FILE *fp;
    size_t n;
    double total = NAN, free_gib = NAN, x;
    snprintf(path, sizeof path, "%s/device.txt", dir);
    if (in_check(NULL, path, 1 << 16, NULL, 0) || !(fp = fopen(path, "r"))) return NAN;
    n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    if ((p = strstr(buf, " GiB (")) != NULL && sscanf(p + 6, "%lf GiB free", &x) == 1) free_gib = x;
    for (p = buf; (q = strstr(p, " MiB")) != NULL; p = q + 4) { /* the last number before " MiB" on a line */
        char *s = q;
        while (s > buf && (isdigit((unsigned char)s[-1]) || s[-1] == '.')) s--;
        if (s < q && sscanf(s, "%lf", &x) == 1) total = x;
    }
    if (total == total && free_gib == free_gib && !(total > 0 && total <= 16777216.0 && free_gib >= 0 && free_gib * 1024.0 <= total)) {
        snprintf(err, cap, "%.300s: memory.total %g MiB and %g GiB free are no GPU's (a total of 1 MiB to 16 TiB, the free memory within it): fix or remove the file",
                 path, total, free_gib);
        return NAN;
    }
    return total - free_gib * 1024.0;
}

/* a committed run's configuration, replayed on dry: the fields that shape its ops */
static int fit_replay(const dpprof_json *cfg, dpprof_config *c) {
    static const char *const keys[] = {"preset", "vocab", "hidden", "layers", "heads", "kv_heads", "ffn", "seq", "task", "classes", "algo", "batch",
                                       "physical_batch", "optimizer", "dtype", "lora_rank", "lora_alpha", "lora_targets", "checkpoint", "attention", "attention_workspace"};
    size_t k;
    double hs;
    memset(c, 0, sizeof *c);
    for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const dpprof_json *v = dpprof_json_get(cfg, keys[k]);
        const char *str = dpprof_json_string(v);
        char num[64];
        double d;
        if (str && !*str) continue;
        if (!str && dpprof_json_number(v, &d) == DPPROF_OK) {
            if (d == 0) continue; /* 0: the default of every numeric field */
            snprintf(num, sizeof num, "%.17g", d);
            str = num;
        }
        if (str && dpprof_config_set(c, keys[k], str) != DPPROF_OK) return -1;
    }
    hs = fit_num(cfg, "head_size");
    if (hs == hs && c->heads > 0 && c->hidden > 0 && hs * c->heads != c->hidden) c->head_dim = (int)hs;
    c->backend = DPPROF_BACKEND_DRY;
    c->steps = 1;
    c->warmup = 0;
    c->no_timeline = 1;
    c->sigma = c->algo == DPPROF_ALGO_VANILLA ? 0 : 1;
    return 0;
}

static int fit_op_find(const fit_cost *c, const char *name) {
    int i;
    for (i = 0; i < c->n; i++)
        if (!strcmp(c->op[i].name, name)) return i;
    return -1;
}

/* one committed cuda result: its gap into the margin; where it is of the device and dtype asked, a run of the model */
static void fit_bench_file(fit_ctx *f, const char *path, const fit_device *want, int want_dtype, const rep_provs *pt) {
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root, *ops, *cfgj;
    const char *dev, *algo_s, *dtype_s, *status;
    double peak, drv, step;
    int algo, i;
    fit_bench *b = &f->bench;
    fit_run run, *rr;
    if (in_check(NULL, path, IN_JSON_LIMIT, NULL, 0) || dpprof_json_parse_file(path, (size_t)IN_JSON_LIMIT, &doc) != 0) goto done;
    root = dpprof_json_root(doc);
    status = dpprof_json_string(dpprof_json_get(root, "status"));
    dev = dpprof_json_string(dpprof_json_path(root, "meta.device"));
    algo_s = dpprof_json_string(dpprof_json_path(root, "config.algo"));
    dtype_s = dpprof_json_string(dpprof_json_path(root, "config.dtype"));
    if (!status || strcmp(status, "ok") || !dev || !algo_s || !dtype_s || (algo = dpprof_algo_parse(algo_s)) <= 0) goto done;
    b->found++;
    peak = fit_num(root, "breakdown.bytes.peak");
    drv = fit_num(root, "meta.memory.driver_peak_bytes");
    if (!(drv == drv)) drv = fit_num(root, "meta.driver_peak_used_mb") * 1048576.0;
    if (peak > 0 && drv == drv) { /* the allocator's and the driver's share of this run's peak */
        const double g = (drv - peak) / peak;
        if (g > b->gap[algo]) {
            b->gap[algo] = g;
            snprintf(b->gap_from[algo], sizeof b->gap_from[algo], "%.150s", path);
        }
        if (g > b->gap_all) b->gap_all = g;
        b->ngaps++;
    }
    if (!want || !fit_device_is(want, dev, fit_num(root, "meta.device_memory_bytes"))) goto done;
    if (strcmp(dtype_s, fit_dtype(want_dtype))) goto done;
    ops = dpprof_json_path(root, "throughput.ops.by_op");
    step = fit_num(root, "throughput.step_time_ms_median");
    cfgj = dpprof_json_get(root, "config");
    if (!ops || !(step > 0)) goto done;
    memset(&run, 0, sizeof run);
    {
        dpprof_config c;
        dpprof_session *s = NULL;
        int rc, im;
        double timed, jf = 0, tf = 0;
        const char *why = NULL;
        if (fit_replay(cfgj, &c) != 0) why = "its configuration does not replay";
        else {
            rc = dpprof_session_create(&c, &s);
            if (rc == DPPROF_OK) rc = dpprof_session_step(s);
            if (rc == DPPROF_OK) {
                run.tally.n = dpprof_session_op_costs(s, run.tally.op, DPPROF_OP_COST_MAX);
                for (i = 0; i < run.tally.n; i++) run.tally.flops += run.tally.op[i].flops;
            } else why = "its configuration does not replay";
            dpprof_session_destroy(s);
        }
        im = why ? -1 : fit_op_find(&run.tally, "matmul_fwd");
        timed = im >= 0 && run.tally.op[im].count > 0 ? fit_num(ops, "matmul_fwd.count") / (double)run.tally.op[im].count : NAN;
        if (!why && !(timed >= 1 && timed == floor(timed))) why = "its timed ops do not match a step's";
        for (i = 0; !why && i < run.tally.n; i++) {
            const dpprof_json *o = dpprof_json_get(ops, run.tally.op[i].name);
            if (!o) continue;
            run.ms[i] = fit_num(o, "ms") / timed;
            run.fl[i] = fit_num(o, "flops") / timed;
            run.by[i] = fit_num(o, "bytes_analytic") / timed;
            run.cnt[i] = fit_num(o, "count") / timed;
            if (!(run.ms[i] >= 0 && run.fl[i] >= 0 && run.by[i] >= 0 && run.cnt[i] >= 0)) {
                why = "an op's record is incomplete";
                break;
            }
            run.op_ms += run.ms[i];
            jf += run.fl[i];
            tf += run.tally.op[i].flops;
        }
        /* the same program, or it is not used (a few tenths of a percent apart where the cuda run's own timing chose
           another kernel for some layers: the rates are the run's own flops over its own time either way) */
        if (!why && fabs(jf - tf) > 0.02 * tf) why = "its ops' flops differ from the dry replay's by more than 2%";
        if (why) {
            b->skipped++;
            snprintf(b->skipped_why, sizeof b->skipped_why, "%.180s: %s", path, why);
            goto done;
        }
    }
    run.step_ms = step;
    run.loo_ms = NAN;
    {
        const char *pre = dpprof_json_string(dpprof_json_get(cfgj, "preset"));
        const double lr = fit_num(cfgj, "lora_rank");
        const int len = snprintf(run.shape, sizeof run.shape, "%.40s T=%.0f B=%.0f b=%.0f", pre ? pre : "?", fit_num(cfgj, "seq"), fit_num(cfgj, "batch"), fit_num(cfgj, "physical_batch"));
        if (lr > 0 && len > 0 && (size_t)len < sizeof run.shape) snprintf(run.shape + len, sizeof run.shape - (size_t)len, " LoRA r=%.0f", lr);
    }
    snprintf(run.algo, sizeof run.algo, "%s", algo_s);
    snprintf(run.file, sizeof run.file, "%.310s", path);
    { /* its build: the day, the commit compiled and its sources (recorded, or stated by the folder afterwards) */
        const char *day = dpprof_json_string(dpprof_json_path(root, "meta.date"));
        const rep_build bu = rep_build_of(root, pt);
        snprintf(run.build, sizeof run.build, "%.10s, commit %s, sources %.12s", day ? day : "?", bu.commit[0] ? bu.commit : "?", bu.source[0] ? bu.source : "not recorded");
    }
    snprintf(b->device_name, sizeof b->device_name, "%s", dev);
    for (i = 0; i < b->nruns; i++) /* a newer folder's run of the same shape and algorithm replaces it */
        if (!strcmp(b->runs[i].shape, run.shape) && !strcmp(b->runs[i].algo, run.algo)) break;
    if (i == b->nruns) {
        fit_run *w = (fit_run *)realloc(b->runs, (size_t)(b->nruns + 1) * sizeof *w);
        if (!w) goto done;
        b->runs = w;
        b->nruns++;
    }
    rr = &b->runs[i];
    *rr = run;
done:
    dpprof_json_free(doc);
}

/* per-op rates from the runs (all but those of shape `leave`), a point a run: the op's size a call (flops, or bytes
   where it has no flops) and its rate (flops or bytes a ms); and the step's time over its ops'. an op's rate
   depends on its operands' size (a LoRA adapter's per-sample norm runs at a small fraction of the rate of a full
   layer's at a long T): a call is given the rate of the measured calls of its size, interpolated */
#define FIT_PTS 64
typedef struct fit_model {
    int n;
    const char *name[DPPROF_OP_COST_MAX];
    double ms[DPPROF_OP_COST_MAX], fl[DPPROF_OP_COST_MAX], by[DPPROF_OP_COST_MAX], cnt[DPPROF_OP_COST_MAX];
    int np[DPPROF_OP_COST_MAX];
    double px[DPPROF_OP_COST_MAX][FIT_PTS], pr[DPPROF_OP_COST_MAX][FIT_PTS]; /* by size, ascending */
    double step, ops;
} fit_model;

static void fit_model_build(const fit_bench *b, const char *leave, fit_model *m) {
    int r, i, j, k;
    memset(m, 0, sizeof *m);
    for (r = 0; r < b->nruns; r++) {
        const fit_run *u = &b->runs[r];
        if (leave && !strcmp(u->shape, leave)) continue;
        m->step += u->step_ms;
        m->ops += u->op_ms;
        for (i = 0; i < u->tally.n; i++) {
            double x, rate;
            if (!(u->cnt[i] > 0) || !(u->ms[i] > 0)) continue; /* not timed in that run */
            for (j = 0; j < m->n && strcmp(m->name[j], u->tally.op[i].name); j++) {}
            if (j == m->n) {
                if (m->n == DPPROF_OP_COST_MAX) continue;
                m->name[m->n++] = u->tally.op[i].name;
            }
            m->ms[j] += u->ms[i], m->fl[j] += u->fl[i], m->by[j] += u->by[i], m->cnt[j] += u->cnt[i];
            x = (u->fl[i] > 0 ? u->fl[i] : u->by[i]) / u->cnt[i];
            rate = (u->fl[i] > 0 ? u->fl[i] : u->by[i]) / u->ms[i];
            if (!(x > 0) || m->np[j] == FIT_PTS) continue;
            for (k = m->np[j]; k > 0 && m->px[j][k - 1] > x; k--) m->px[j][k] = m->px[j][k - 1], m->pr[j][k] = m->pr[j][k - 1];
            m->px[j][k] = x, m->pr[j][k] = rate;
            m->np[j]++;
        }
    }
}

/* the rate of op j at a call of size x: log-log between the measured sizes around it, the nearest's outside them
   (points of one size: their mean) */
static double fit_rate(const fit_model *m, int j, double x) {
    const int n = m->np[j];
    const double *px = m->px[j], *pr = m->pr[j];
    int lo = 0, hi, k;
    double rl = 0, rh = 0, w;
    int nl = 0, nh = 0;
    if (x <= px[0]) hi = 0;
    else if (x >= px[n - 1]) lo = hi = n - 1;
    else {
        for (hi = 0; hi < n && px[hi] < x; hi++) {}
        lo = hi - 1;
    }
    if (x <= px[0]) lo = 0;
    for (k = 0; k < n; k++) { /* every point of the two sizes */
        if (px[k] == px[lo]) rl += log(pr[k]), nl++;
        if (px[k] == px[hi]) rh += log(pr[k]), nh++;
    }
    rl /= nl, rh /= nh;
    if (px[hi] == px[lo]) return exp(rl);
    w = (log(x) - log(px[lo])) / (log(px[hi]) - log(px[lo]));
    return exp(rl + w * (rh - rl));
}

/* a step's time (ms) from its ops. an op the runs never timed (*missing names the last) takes the rate of all
   their ops together: per flop where it has flops, per byte where bytes alone; its share of the prediction is
   added to *unrated */
static double fit_predict(const fit_model *m, const fit_cost *c, const char **missing, double *unrated) {
    double t = 0, fl = 0, by = 0, ms = 0, u = 0;
    int i, j;
    if (!(m->ops > 0)) return NAN;
    for (j = 0; j < m->n; j++) fl += m->fl[j], by += m->by[j], ms += m->ms[j];
    for (i = 0; i < c->n; i++) {
        const dpprof_op_cost *o = &c->op[i];
        if (o->count <= 0) continue;
        for (j = 0; j < m->n && strcmp(m->name[j], o->name); j++) {}
        if (j == m->n) {
            const double x = o->flops > 0 && fl > 0 ? o->flops * ms / fl : (o->bytes > 0 && by > 0 ? o->bytes * ms / by : 0);
            if (missing) *missing = o->name;
            t += x, u += x;
            continue;
        }
        if (m->fl[j] > 0 && o->flops > 0 && m->np[j]) t += o->flops / fit_rate(m, j, o->flops / (double)o->count);
        else if (m->fl[j] == 0 && m->by[j] > 0 && o->bytes > 0 && m->np[j]) t += o->bytes / fit_rate(m, j, o->bytes / (double)o->count);
        else t += (double)o->count * m->ms[j] / m->cnt[j];
    }
    if (unrated && t > 0 && u / t > *unrated) *unrated = u / t;
    return t * m->step / m->ops;
}

/* the prediction's error on the committed runs, each shape left out in turn */
static void fit_loo(fit_bench *b) {
    int r, s, k;
    const char *shapes[64];
    int ns = 0;
    fit_model *m = (fit_model *)malloc(sizeof *m);
    b->loo_n = 0, b->loo_mean = b->loo_max = 0;
    if (!m) return;
    for (r = 0; r < b->nruns; r++) {
        for (k = 0; k < ns && strcmp(shapes[k], b->runs[r].shape); k++) {}
        if (k == ns && ns < 64) shapes[ns++] = b->runs[r].shape;
    }
    b->nshapes = ns;
    for (s = 0; s < ns && ns > 1; s++) {
        fit_model_build(b, shapes[s], m);
        for (r = 0; r < b->nruns; r++) {
            double p, e;
            if (strcmp(b->runs[r].shape, shapes[s])) continue;
            p = b->runs[r].loo_ms = fit_predict(m, &b->runs[r].tally, NULL, NULL);
            if (!(p == p)) continue;
            e = fabs(p / b->runs[r].step_ms - 1.0);
            b->loo_mean += e;
            b->loo_n++;
            if (e >= b->loo_max) {
                b->loo_max = e;
                snprintf(b->loo_worst, sizeof b->loo_worst, "%s %s: predicted %.0f ms, measured %.0f ms", b->runs[r].shape, b->runs[r].algo, p, b->runs[r].step_ms);
            }
        }
    }
    if (b->loo_n) b->loo_mean /= b->loo_n;
    free(m);
}

/* every run folder under dir: the margin from all of them; the model from those of the device (want; NULL: none)
   and dtype */
static void fit_bench_load(fit_ctx *f, const char *dir, const fit_device *want, int want_dtype) {
    char **sub = NULL, **files = NULL, path[PATH_MAX * 2], err[4400];
    int ns, nf, i, j, a;
    rep_provs pt;
    fit_bench *b = &f->bench;
    snprintf(b->dir, sizeof b->dir, "%s", dir);
    for (a = 0; a < DPPROF_ALGO_COUNT; a++) b->gap[a] = -1, b->gap_from[a][0] = 0;
    b->gap_all = -1;
    b->ctx_mib = NAN;
    ns = fit_ls(dir, &sub);
    for (i = 0; i < ns; i++) {
        char d[PATH_MAX];
        double ctx;
        struct stat st;
        snprintf(d, sizeof d, "%s/%s", dir, sub[i]);
        if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        ctx = fit_ctx_mib(d, b->prov_err, b->prov_err[0] ? 0 : sizeof b->prov_err);
        if (ctx == ctx && !(ctx <= b->ctx_mib)) {
            b->ctx_mib = ctx;
            snprintf(b->ctx_from, sizeof b->ctx_from, "%.90s", sub[i]);
        }
        if (rep_prov_load(d, &pt, err, sizeof err) != EXIT_OK) {
            if (!b->prov_err[0]) snprintf(b->prov_err, sizeof b->prov_err, "%.500s", err);
            pt.n = 0;
        }
        nf = fit_ls(d, &files);
        for (j = 0; j < nf; j++) {
            size_t len = strlen(files[j]);
            if (len < 6 || strcmp(files[j] + len - 5, ".json")) continue;
            snprintf(path, sizeof path, "%s/%s", d, files[j]);
            fit_bench_file(f, path, want, want_dtype, &pt);
        }
        fit_ls_free(files, nf);
    }
    fit_ls_free(sub, ns);
    for (i = 0; i < b->nruns; i++) { /* each build once, with its count, in the order first met */
        int n = 0, first = 1;
        size_t len = strlen(b->builds);
        for (j = 0; j < b->nruns; j++) {
            n += !strcmp(b->runs[j].build, b->runs[i].build);
            if (j < i && !strcmp(b->runs[j].build, b->runs[i].build)) first = 0;
        }
        if (first && len < sizeof b->builds)
            snprintf(b->builds + len, sizeof b->builds - len, "%s%s (%d run%s)", len ? "; " : "", b->runs[i].build, n, n == 1 ? "" : "s");
    }
    if (b->nruns) fit_loo(b);
}

/* fit_bench_load, and none where no run measured them: no context, no share */
static void fit_margin_load(fit_ctx *f, const char *dir, const fit_device *want, int want_dtype) {
    fit_bench_load(f, dir, want, want_dtype);
    if (!(f->bench.ctx_mib == f->bench.ctx_mib)) f->bench.ctx_mib = 0;
    if (f->bench.gap_all < 0) f->bench.gap_all = 0;
}

/* the committed GPU runs: data/bench here, else beside the program */
static void fit_default_bench(char *dir, size_t size) {
    struct stat st;
    char exe[PATH_MAX];
    ssize_t n;
    snprintf(dir, size, "data/bench");
    if ((stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) && (n = readlink("/proc/self/exe", exe, sizeof exe - 1)) > 0) {
        char *slash;
        exe[n] = 0;
        if ((slash = strrchr(exe, '/')) != NULL) *slash = 0;
        snprintf(dir, size, "%.*s/data/bench", (int)(size > 16 ? size - 16 : 0), exe);
    }
}

/* dpprof run --device NAME: the budget fit's rule leaves the accountant on that GPU for this algorithm, so that a run
   fits exactly where dpprof fit says it does: (nvidia-smi's total - the context) / (1 + the allocator's share
   measured for the algorithm), the margins from the committed GPU runs (none there: none added). the rule in words
   into note. 0, or EXIT_USAGE (said) for a name fit does not know */
static int fit_run_budget(const char *name, int algo, int framework, int64_t *limit, char *note, size_t size) {
    const fit_device *dev = fit_device_find(name);
    char dir[PATH_MAX], h1[32], h2[32], h3[32];
    fit_ctx *f;
    double ctx, frac, budget;
    int k;
    if (!dev) {
        char names[256] = "";
        for (k = 0; k < FIT_NDEV; k++) snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "", fit_devices[k].name);
        return cli_usage("--device '%s': not a GPU dpprof knows (%s); --memory-limit SIZE for another", name, names);
    }
    if (!(f = (fit_ctx *)calloc(1, sizeof *f))) return cli_usage("--device: out of memory");
    fit_default_bench(dir, sizeof dir);
    fit_margin_load(f, dir, NULL, 0);
    f->base.framework = (dpprof_framework)framework;
    ctx = f->bench.ctx_mib * 1048576.0;
    frac = fit_frac(f, algo);
    budget = (dev->mib * 1048576.0 - ctx) / (1.0 + frac);
    *limit = (int64_t)floor(budget);
    if (framework >= DPPROF_FRAMEWORK_PYTORCH)
        snprintf(note, size, "fits an %s (%s) by dpprof fit's rule for PyTorch: its allocated peak + %s (the CUDA context of a dpprof process) <= %s; PyTorch's reserved over allocated is not measured, so not added",
                 dev->name, human_bytes(dev->mib * 1048576.0, h1, sizeof h1), human_bytes(ctx, h2, sizeof h2), human_bytes(dev->mib * 1048576.0, h3, sizeof h3));
    else snprintf(note, size, "fits an %s (%s) by dpprof fit's rule: peak x (1 + %.1f%%, the allocator's share measured for %s) + %s (the CUDA context) <= %s; %d GPU runs under %.200s measured the margins",
                  dev->name, human_bytes(dev->mib * 1048576.0, h1, sizeof h1), 100 * frac, dpprof_algo_name(algo), human_bytes(ctx, h2, sizeof h2), human_bytes(dev->mib * 1048576.0, h3, sizeof h3), f->bench.ngaps, dir);
    free(f);
    return 0;
}

/* ---- fit: the command ------------------------------------------------------------------------------------ */
/* fit's options: run's own entries where the name alone is given (help NULL), fit's where it differs */
static const cli_opt fit_spec[] = {
    {NULL, NULL, CLI_HEAD, .help = "model (as dpprof run takes it):"},
    {"--preset", NULL, CLI_HEAD, .help = NULL},
    {"--model", NULL, CLI_HEAD, .help = NULL},
    {"--hf-config", NULL, CLI_HEAD, .help = NULL},
    {"--tied", NULL, CLI_HEAD, .help = NULL},
    {"--untied", NULL, CLI_HEAD, .help = NULL},
    {"--vocab", NULL, CLI_HEAD, .help = NULL},
    {"--hidden", NULL, CLI_HEAD, .help = NULL},
    {"--layers", NULL, CLI_HEAD, .help = NULL},
    {"--heads", NULL, CLI_HEAD, .help = NULL},
    {"--kv-heads", NULL, CLI_HEAD, .help = NULL},
    {"--ffn", NULL, CLI_HEAD, .help = NULL},
    {NULL, NULL, CLI_HEAD, .help = "training:"},
    {"--seq", "T", CLI_CONFIG, .key = "seq", .help = "sequence length (required)"},
    {"--batch", "B", CLI_CONFIG, .key = "batch", .help = "the logical batch: samples a step over every GPU (required)"},
    {"--task", NULL, CLI_HEAD, .help = NULL},
    {"--classes", NULL, CLI_HEAD, .help = NULL},
    {"--dtype", NULL, CLI_HEAD, .help = NULL},
    {"--optimizer", NULL, CLI_HEAD, .help = NULL},
    {"--attention", NULL, CLI_HEAD, .help = NULL},
    {"--attention-workspace", NULL, CLI_HEAD, .help = NULL},
    {"--framework", NULL, CLI_HEAD, .help = NULL},
    {NULL, NULL, CLI_HEAD, .help = "privacy (batches drawn by Poisson sampling at rate B / N):"},
    {"--target-epsilon", "E", CLI_CONFIG, .key = "target_epsilon", .help = "the noise that spends E over the training (with --dataset-size)"},
    {"--sigma", "S", CLI_CONFIG, .key = "sigma", .help = "the noise multiplier, instead of a target (epsilon follows with --dataset-size)"},
    {"--dataset-size", NULL, CLI_HEAD, .help = NULL},
    {"--epochs", "E", CLI_REAL, .field = offsetof(fit_opts, epochs), .lo = 0, .hi = 1e6, .open = 1, .help = "passes over the dataset (default 1): ceil(E N / B) steps"},
    {"--delta", NULL, CLI_HEAD, .help = NULL},
    {"--accountant", "rdp|pld", CLI_CONFIG, .key = "accountant", .help = "the accountant of sigma and epsilon (default rdp; pld: tight)"},
    {NULL, NULL, CLI_HEAD, .help = "hardware (one of --device and --gpu-memory):"},
    {"--device", "NAME", CLI_TEXT, .field = offsetof(fit_opts, device), .help = "a GPU of the table below: its memory, and its committed measurements"},
    {"--gpu-memory", "SIZE", CLI_CONFIG, .key = "memory_limit", .help = "a GPU's memory (as nvidia-smi's total: 80G, 48GiB, 24GB)"},
    {"--gpus", "N", CLI_INT, .field = offsetof(fit_opts, gpus), .lo = 1, .hi = 65536, .help = "GPUs in data parallel, each taking B/N samples (default 1)"},
    {"--nodes", "K", CLI_INT, .field = offsetof(fit_opts, nodes), .lo = 1, .hi = 65536, .help = "machines the GPUs are spread evenly over (default 1; K divides N)"},
    {"--link", "NAME", CLI_TEXT, .field = offsetof(fit_opts, link), .help = "the link between a node's GPUs (below; default: --device's, NVLink of an SXM\npart, else PCIe)"},
    {"--network", "NAME", CLI_TEXT, .field = offsetof(fit_opts, network), .help = "between nodes, each GPU's network card (below; with --nodes 2 or more)"},
    {"--nccl-mem", "SIZE", CLI_TEXT, .field = offsetof(fit_opts, nccl_mem), .help = "each GPU's NCCL buffers, added to every row's need (with --gpus 2 or more;\ndpprof run --backend cuda --ranks N measures them on those GPUs: its result's\nmeta.memory.nccl_device_bytes). default: not counted, and fit says so"},
    {NULL, NULL, CLI_HEAD, .help = "search (comma-separated lists; default: every value):"},
    {"--algo", "LIST", CLI_TEXT, .field = offsetof(fit_opts, algos), .help = "of persample, ghost, ghost_bk, flash, flash_bk, auto (default: all\nsix), vanilla (non-private: for comparing)"},
    {"--checkpoint", "LIST", CLI_TEXT, .field = offsetof(fit_opts, ckpts), .help = "of none, layers"},
    {"--zero", "LIST", CLI_TEXT, .field = offsetof(fit_opts, zeros), .help = "ZeRO stages of 0, 1, 2, 3 (with --gpus 2 or more; default: all four)"},
    {"--lora-rank", "LIST", CLI_TEXT, .field = offsetof(fit_opts, loras), .help = "LoRA ranks; 0 is full fine-tuning (default: 0)"},
    {"--lora-alpha", NULL, CLI_HEAD, .help = NULL},
    {"--lora-targets", NULL, CLI_HEAD, .help = NULL},
    {"--lora-dropout", NULL, CLI_HEAD, .help = NULL},
    {"--peft-config", NULL, CLI_HEAD, .help = NULL},
    {"--train-head", NULL, CLI_HEAD, .help = NULL},
    {"--frozen-head", NULL, CLI_HEAD, .help = NULL},
    {"--frozen-masters", NULL, CLI_HEAD, .help = NULL},
    {NULL, NULL, CLI_HEAD, .help = "output (the table goes to standard output):"},
    {"--json", "FILE.json", CLI_TEXT, .field = offsetof(fit_opts, json), .help = "the table and what it rests on (written atomically; '-': standard output)"},
    {"--plot", "FILE.png", CLI_TEXT, .field = offsetof(fit_opts, plot), .help = "peak plus margin against the physical batch, an algorithm a line, with\nthe device's memory"},
    {"--bench", "DIR", CLI_TEXT, .field = offsetof(fit_opts, bench), .help = "the committed GPU runs (default: data/bench, here or beside the program)"},
    {"--help", NULL, CLI_HELP, .help = "this text"},
};
static cli_opt fit_opt[CLI_N(fit_spec)];

static const char fit_about[] =
    "the fastest private configuration of a model that fits a GPU: every algorithm x activation\n"
    "checkpointing x ZeRO stage (--gpus 2 or more) x LoRA rank, each at the largest physical batch whose\n"
    "exact dry peak, plus a margin measured on GPUs, fits; ranked by the flops of a logical step, or where\n"
    "committed GPU runs of the device exist (data/bench) and predict them within 15%, by a step time predicted\n"
    "from their per-op rates (rows within that error tied). on several GPUs each row's collectives are timed\n"
    "by a model of the links (NCCL's ring relations at the specifications' peaks: a lower bound), shown, and\n"
    "added to the step time where fit ranks by time.\n"
    "the best row is echoed as the dpprof run command that reproduces it. exit 3: nothing fits (fit says\n"
    "what memory or how many GPUs would).\n";
static char fit_after[2048];

static cli_command fit_cmd = {"fit", "usage: dpprof fit MODEL --seq T --batch B (--device NAME | --gpu-memory SIZE)\n"
                                     "                  [--target-epsilon E --dataset-size N [--epochs E] | --sigma S] [options]",
                              fit_about, fit_opt, 0, 0, "(fit takes options only)", fit_after};

static void fit_table(void) {
    size_t i, n = 0, len = 0;
    int k;
    if (fit_cmd.nopt) return;
    for (i = 0; i < CLI_N(fit_spec); i++) {
        const cli_opt *s = &fit_spec[i];
        fit_opt[n] = *s;
        if (s->name && !s->help) { /* run's entry, as it is */
            const cli_opt *r = cli_find(&run_cmd, s->name);
            if (!r) continue; /* (the options test checks that none is missing) */
            fit_opt[n] = *r;
        }
        n++;
    }
    fit_cmd.nopt = n;
    len += (size_t)snprintf(fit_after + len, sizeof fit_after - len, "devices (--device; memory: nvidia-smi's total):\n");
    for (k = 0; k < FIT_NDEV && len < sizeof fit_after; k++)
        len += (size_t)snprintf(fit_after + len, sizeof fit_after - len, "  %-9s %6.0f MiB%s%s%s\n", fit_devices[k].name, fit_devices[k].mib, fit_devices[k].also[0] ? "  (also " : "",
                                fit_devices[k].also, fit_devices[k].also[0] ? ")" : "");
    { /* the links of the collectives' time: peak figures, so the times are lower bounds */
        int nl;
        const dpprof_link *l = dpprof_links(&nl);
        if (len < sizeof fit_after)
            len += (size_t)snprintf(fit_after + len, sizeof fit_after - len, "links (--link within a node, --network between nodes; peak each way a GPU, the specification's):\n");
        for (k = 0; k < nl && len < sizeof fit_after; k++)
            len += (size_t)snprintf(fit_after + len, sizeof fit_after - len, "  %-9s %4.0f GB/s  %s\n", l[k].name, l[k].bytes_per_s / 1e9, l[k].what);
    }
}

/* a comma-separated list of one option into out (duplicates once): the count, or -1 after saying which value is bad */
static int fit_list(const char *opt, const char *text, int (*parse)(const char *), const char *expect, int *out, int max) {
    int n = 0, v, k;
    const char *p = text;
    char item[64];
    while (1) {
        size_t m = strcspn(p, ",");
        if (m == 0 || m >= sizeof item) return cli_usage("%s '%s': an empty or overlong item (expected a comma-separated list of %s)", opt, text, expect), -1;
        snprintf(item, sizeof item, "%.*s", (int)m, p);
        if ((v = parse(item)) < 0) return cli_usage("%s '%s': '%s' is not one of %s", opt, text, item, expect), -1;
        for (k = 0; k < n && out[k] != v; k++) {}
        if (k == n) {
            if (n == max) return cli_usage("%s '%s': more than %d values", opt, text, max), -1;
            out[n++] = v;
        }
        if (!p[m]) break;
        p += m + 1;
    }
    return n;
}
static int fit_parse_algo(const char *s) { return dpprof_algo_parse(s) > 0 ? dpprof_algo_parse(s) : -1; }
static int fit_parse_ckpt(const char *s) { return dpprof_checkpoint_parse(s) > 0 ? dpprof_checkpoint_parse(s) : -1; }
static int fit_parse_int(const char *s, int hi) {
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    return !isdigit((unsigned char)*s) || *end || errno || v > hi ? -1 : (int)v;
}
static int fit_parse_zero(const char *s) { return fit_parse_int(s, 3); }
static int fit_parse_lora(const char *s) { return fit_parse_int(s, 65536); }

/* the dpprof run command of a row (on dry: the memory it prints is the row's) */
static void fit_command(const fit_ctx *f, const dpprof_config *given, const fit_row *r, char *out, size_t cap) {
    size_t len = 0;
    char q[PATH_MAX + 64], code[32];
    const dpprof_config *c = &f->base;
#define FIT_ADD(...) (len += (len < cap ? (size_t)snprintf(out + len, cap - len, __VA_ARGS__) : 0))
    FIT_ADD("dpprof run");
    if (f->o.run.hf_config) FIT_ADD(" --hf-config %s", sh_word(f->o.run.hf_config, q, sizeof q));
    else FIT_ADD(" --preset %s", sh_word(c->preset ? c->preset : "tiny", q, sizeof q));
    if (given->vocab) FIT_ADD(" --vocab %d", given->vocab);
    if (given->hidden) FIT_ADD(" --hidden %d", given->hidden);
    if (given->layers) FIT_ADD(" --layers %d", given->layers);
    if (given->heads) FIT_ADD(" --heads %d", given->heads);
    if (given->kv_heads) FIT_ADD(" --kv-heads %d", given->kv_heads);
    if (given->ffn) FIT_ADD(" --ffn %d", given->ffn);
    if (given->tie_embeddings) FIT_ADD(" %s", given->tie_embeddings == DPPROF_SWITCH_ON ? "--tied" : "--untied");
    if (c->task == DPPROF_TASK_CLS) FIT_ADD(" --task cls%s", "");
    if (c->classes) FIT_ADD(" --classes %d", c->classes);
    FIT_ADD(" --seq %d --batch %d --physical-batch %d --algo %s --checkpoint %s", c->seq, c->batch, r->b, dpprof_algo_name(r->algo), dpprof_checkpoint_name(r->ckpt));
    if (f->o.gpus > 1) FIT_ADD(" --ranks %d --zero %d", f->o.gpus, r->zero);
    if (r->lora) {
        FIT_ADD(" --lora-rank %d", r->lora);
        if (c->lora_alpha > 0) FIT_ADD(" --lora-alpha %g", c->lora_alpha);
        if (c->lora_targets) FIT_ADD(" --lora-targets %s", sh_word(c->lora_targets, q, sizeof q));
        if (c->lora_dropout > 0) FIT_ADD(" --lora-dropout %g", c->lora_dropout);
    }
    if (c->train_head) FIT_ADD(" %s", c->train_head == DPPROF_SWITCH_ON ? "--train-head" : "--frozen-head");
    if (c->frozen_masters == DPPROF_SWITCH_ON) FIT_ADD(" --frozen-masters%s", "");
    if (c->dtype) FIT_ADD(" --dtype %s", fit_dtype(c->dtype));
    if (c->optimizer) FIT_ADD(" --optimizer %s", dpprof_config_enum_name(dpprof_config_field_find("optimizer"), c->optimizer, code, sizeof code));
    if (c->attention) FIT_ADD(" --attention %s", dpprof_attention_name(c->attention));
    if (c->attention_workspace) FIT_ADD(" --attention-workspace %lld", (long long)c->attention_workspace);
    if (c->framework >= DPPROF_FRAMEWORK_PYTORCH) FIT_ADD(" --framework %s", dpprof_framework_name(c->framework));
    if (r->algo != DPPROF_ALGO_VANILLA) {
        FIT_ADD(" --sigma %.4g", f->sigma);
        /* Poisson batches, over GPUs too (each rank its shard of the step's draw); Opacus's walk takes fixed physical
           batches, its loader draws the Poisson batches BatchMemoryManager splits */
        if (c->dataset_size) FIT_ADD(" --dataset-size %lld%s", c->dataset_size, c->framework == DPPROF_FRAMEWORK_OPACUS ? "" : " --poisson");
        if (c->delta > 0 && c->delta != 1e-5) FIT_ADD(" --delta %g", c->delta);
        if (f->acct == DPPROF_ACCOUNTANT_PLD) FIT_ADD(" --accountant pld%s", "");
    }
    FIT_ADD(" --backend dry");
#undef FIT_ADD
}

/* rows that fit first, by predicted time (where every one has one and the time model's error on the device's runs
   is at most FIT_TIME_ERR_MAX) or flops; then fewer physical batches, a lower ZeRO stage, a lower peak. by time, rows
   whose predicted times are within the model's mean error of a better row's are ties (fit_ties). the time is the
   step's compute plus its collectives' (modelled, none on one GPU): no overlap of the two is assumed */
#define FIT_TIME_ERR_MAX 0.15
static int fit_by_time;
static double fit_ms(const fit_row *r) { return r->pred_ms + r->comm_ms; }
static int fit_cmp(const void *a, const void *b) {
    const fit_row *x = (const fit_row *)a, *y = (const fit_row *)b;
    double kx, ky;
    if ((x->b > 0) != (y->b > 0)) return x->b > 0 ? -1 : 1;
    if (x->b == 0) return x->need < y->need ? -1 : (x->need > y->need); /* those that do not fit: the nearest first */
    kx = fit_by_time ? fit_ms(x) : x->flops, ky = fit_by_time ? fit_ms(y) : y->flops;
    if (kx != ky) return kx < ky ? -1 : 1;
    if (x->accum != y->accum) return x->accum < y->accum ? -1 : 1;
    if (x->zero != y->zero) return x->zero < y->zero ? -1 : 1;
    return x->peak < y->peak ? -1 : (x->peak > y->peak);
}

/* by time: the rows that fit, sorted by predicted time, cut into runs of ties (each within err of its run's first
   row's time), a run sorted by flops (then accumulation, ZeRO stage, peak), every row of a run given its first row's
   rank. n: the rows that fit */
static void fit_ties(fit_row *rows, int n, double err) {
    int k = 0, j;
    const int by_time = fit_by_time;
    while (k < n) {
        const int first = k;
        for (j = first + 1; j < n && fit_ms(&rows[j]) <= fit_ms(&rows[first]) * (1.0 + err); j++) {
        }
        fit_by_time = 0;
        qsort(rows + first, (size_t)(j - first), sizeof *rows, fit_cmp);
        fit_by_time = by_time;
        for (; k < j; k++) rows[k].rank = first + 1;
    }
}

/* the privacy of the training: sigma (given, or for the target), its epsilon and the line that says it. 0, or
   the exit code after saying why */
static int fit_privacy(fit_ctx *f, int dp) {
    const dpprof_config *c = &f->o.run.cfg;
    const double delta = c->delta > 0 ? c->delta : 1e-5, target = c->target_epsilon;
    const long long N = c->dataset_size, B = c->batch;
    const char *acct_name;
    dpprof_privacy pv;
    f->acct = c->accountant == DPPROF_ACCOUNTANT_PLD ? DPPROF_ACCOUNTANT_PLD : DPPROF_ACCOUNTANT_RDP;
    acct_name = f->acct == DPPROF_ACCOUNTANT_PLD ? "PLD" : "RDP";
    f->sigma = c->sigma, f->eps = NAN, f->q = NAN, f->steps = 0;
    if (c->accountant == DPPROF_ACCOUNTANT_BOTH) return cli_usage("--accountant both: fit states one epsilon (rdp or pld)");
    if (target > 0 && f->o.run.sigma_given) return cli_usage("--target-epsilon %g and --sigma %g: give one (sigma follows from the target)", target, c->sigma);
    if (!dp) {
        snprintf(f->privacy, sizeof f->privacy, "privacy: none (--algo vanilla alone: non-private training)");
        return 0;
    }
    if (N > 0 && N < B) return cli_usage("--dataset-size %lld is smaller than the logical batch --batch %lld: a step samples B of N", N, B);
    if (N > 0) {
        const double st = ceil(f->o.epochs * (double)N / (double)B);
        if (!(st <= 1e12)) return cli_usage("--epochs %g: %.3g steps, more than the accountants take", f->o.epochs, st);
        f->steps = (long long)st;
        f->q = (double)B / (double)N;
    }
    if (target > 0) {
        int rc;
        double s, scale;
        if (N <= 0) return cli_usage("--target-epsilon %g needs --dataset-size N: the sample rate B/N and the steps follow from it", target);
        dpprof_privacy_progress(cli_progress, NULL);
        rc = f->acct == DPPROF_ACCOUNTANT_PLD ? dpprof_pld_sigma_for_epsilon(f->q, f->steps, delta, target, 0, &s) : dpprof_rdp_sigma_for_epsilon(f->q, f->steps, delta, target, &s);
        if (rc != 0) return cli_fail(EXIT_USAGE, "no sigma reaches epsilon %g at delta %g under the %s accountant (q %g, %lld steps)", target, delta, acct_name, f->q, f->steps);
        scale = s > 0 ? pow(10.0, 3.0 - floor(log10(s))) : 1.0; /* four digits, rounded up: the sigma printed spends at most the target */
        f->sigma = s > 0 ? ceil(s * scale - 1e-9) / scale : 0.0;
    } else if (!f->o.run.sigma_given)
        return cli_usage("give the privacy: --target-epsilon E with --dataset-size N (and --epochs), or --sigma S (--algo vanilla alone needs none)");
    if (N > 0 && (f->sigma > 0 || target > 0)) { /* sigma 0 for a target: none is needed (a record is drawn with a chance under delta) */
        if (dpprof_privacy_of(1, f->q, f->sigma, f->steps, delta, 1, f->acct, &pv) != DPPROF_OK) return cli_fail(EXIT_USAGE, "%s", dpprof_last_error());
        f->eps = pv.epsilon;
        if (f->sigma == 0) acct_name = "no noise: a record is drawn at all with a chance under \u03b4, so every \u03c3 reaches the target; exact";
        else if (pv.accountant != f->acct) acct_name = pv.epsilon_pld == pv.epsilon_pld ? "RDP, below the PLD's bound here" : "RDP (the PLD could not bound it)";
        if (target > 0 && !(f->eps <= target * (1 + 1e-9))) return cli_fail(EXIT_ERROR, "sigma %.6g spends epsilon %.6g, over the target %g (a bug)", f->sigma, f->eps, target);
        snprintf(f->privacy, sizeof f->privacy, "privacy: \u03c3 %.4g spends \u03b5 = %.3g at \u03b4 = %g over %lld steps (%g epochs; Poisson, q = %.3g; %s accountant)", f->sigma, f->eps, delta, f->steps,
                 f->o.epochs, f->q, acct_name);
    } else if (f->sigma > 0)
        snprintf(f->privacy, sizeof f->privacy, "privacy: \u03c3 %.4g; \u03b5 unknown without --dataset-size (the sample rate B/N)", f->sigma);
    else snprintf(f->privacy, sizeof f->privacy, "privacy: none: \u03c3 0 clips without noise, \u03b5 is infinite");
    return 0;
}

/* the figure: peak plus margin against the physical batch, for each algorithm its best row's checkpointing, ZeRO
   stage and LoRA rank, with the device's memory less the context */
static int fit_plot(fit_ctx *f, out_file *of) {
    int a, k, np = 0, ns = 0, rc, maxb = 1, i;
    double x[40], *y;
    unsigned char rgb[DPPROF_ALGO_COUNT * 3], *oom;
    const char *names[DPPROF_ALGO_COUNT];
    char nb[DPPROF_ALGO_COUNT][96], title[256], budget[96];
    int markers[DPPROF_ALGO_COUNT];
    dpprof_lines_desc d;
    dpprof_canvas cv;
    for (a = 0; a < f->nalgo; a++) /* to half again past the largest batch of the rows drawn (each algorithm's best) */
        for (k = 0; k < f->nrows; k++)
            if (f->rows[k].algo == f->algos[a]) {
                if ((int)ceil(1.5 * f->rows[k].b) + 1 > maxb) maxb = (int)ceil(1.5 * f->rows[k].b) + 1;
                break;
            }
    if (maxb > f->brank) maxb = f->brank;
    for (i = 1; i <= maxb && np < 40; i = i < 8 ? i + 1 : (int)ceil(i * 1.25)) x[np++] = i;
    if (x[np - 1] != maxb && np < 40) x[np++] = maxb;
    y = (double *)calloc((size_t)DPPROF_ALGO_COUNT * (size_t)np, sizeof *y);
    oom = (unsigned char *)calloc((size_t)DPPROF_ALGO_COUNT * (size_t)np, 1);
    if (!y || !oom) {
        free(y), free(oom);
        return cli_fail(EXIT_ERROR, "--plot: out of host memory");
    }
    for (a = 0; a < f->nalgo; a++) {
        const fit_row *best = NULL;
        for (k = 0; k < f->nrows && !best; k++) /* the rows are ranked: the first of the algorithm */
            if (f->rows[k].algo == f->algos[a]) best = &f->rows[k];
        if (!best) continue;
        for (i = 0; i < np; i++) {
            fit_row r = *best;
            int64_t pk;
            if (fit_peak(f, &r, (int)x[i], &pk) != DPPROF_OK) {
                free(y), free(oom);
                return cli_fail_lib(&fit_cmd, EXIT_ERROR);
            }
            y[ns * np + i] = fit_need(f, r.algo, pk) / FIT_GIB;
        }
        snprintf(nb[ns], sizeof nb[ns], "%s", dpprof_algo_name(best->algo));
        names[ns] = nb[ns];
        memcpy(rgb + 3 * ns, dpprof_plot_algo_colour(best->algo - 1), 3);
        markers[ns] = ns % 6;
        ns++;
    }
    memset(&d, 0, sizeof d);
    memset(&cv, 0, sizeof cv);
    snprintf(title, sizeof title, "%s, T=%d: each algorithm at its best checkpointing%s%s", f->base.model_name ? f->base.model_name : f->base.preset, f->base.seq,
             f->o.gpus > 1 ? ", ZeRO stage" : "", f->nlora > 1 ? ", LoRA rank" : "");
    snprintf(budget, sizeof budget, "%s: %.1f GiB", f->dev_name ? f->dev_name : "GPU memory", f->total / FIT_GIB);
    d.title = title;
    d.xlabel = "physical batch";
    d.ylabel = "peak + margin (GiB)";
    d.width = REP_FIG_W;
    d.height = REP_FIG_H;
    d.n_points = np;
    d.x = x;
    d.n_series = ns;
    d.y = y;
    d.oom = oom;
    d.series_names = names;
    d.series_rgb = rgb;
    d.series_marker = markers;
    d.text_scale = REP_FIG_TEXT;
    d.budget = f->total / FIT_GIB;
    d.budget_label = budget;
    d.budget_label_free = 1;
    rc = dpprof_plot_lines(&d, &cv);
    free(y), free(oom);
    if (rc != 0) {
        dpprof_canvas_free(&cv);
        return cli_fail(EXIT_ERROR, "--plot: %s", dpprof_last_error());
    }
    rc = EXIT_OK;
    if (out_png(of, &cv) || out_commit(of)) rc = EXIT_ERROR;
    dpprof_canvas_free(&cv);
    return rc;
}

static void fit_jnum(FILE *fp, double x) {
    if (x == x && fabs(x) < 1e300) fprintf(fp, "%.17g", x);
    else fputs("null", fp);
}

/* a link of the fabric in the JSON (null: none) */
static void fit_json_link(FILE *fp, const dpprof_link *l) {
    if (!l) {
        fputs("null", fp);
        return;
    }
    fprintf(fp, "{\"name\": \"%s\", \"what\": ", l->name);
    sweep_json_str(fp, l->what);
    fprintf(fp, ", \"bytes_per_s\": %.17g, \"step_latency_s\": %.17g, \"source\": ", l->bytes_per_s, l->step_latency_s);
    sweep_json_str(fp, l->source);
    fputc('}', fp);
}

static void fit_json(const fit_ctx *f, FILE *fp, const char *best_cmd, const char *margin_note, const char *cost_note, const char *comm_note) {
    int k, a;
    fprintf(fp, "{\n  \"fit\": {\"model\": ");
    sweep_json_str(fp, f->base.model_name ? f->base.model_name : f->base.preset);
    fprintf(fp, ", \"parameters\": %lld, \"seq\": %d, \"batch\": %d, \"gpus\": %d, \"dtype\": \"%s\", \"framework\": \"%s\", \"device\": ", f->params, f->base.seq,
            f->base.batch, f->o.gpus, fit_dtype(f->base.dtype), dpprof_framework_name(f->base.framework));
    if (f->dev_name) sweep_json_str(fp, f->dev_name);
    else fputs("null", fp);
    fprintf(fp, ", \"device_memory_bytes\": %.0f, \"unmodelled\": ", f->total);
    if (f->base.unmodelled) sweep_json_str(fp, f->base.unmodelled);
    else fputs("null", fp);
    fprintf(fp, ",\n    \"margin\": {\"context_bytes\": %.0f, \"nccl_bytes\": ", f->bench.ctx_mib == f->bench.ctx_mib ? f->bench.ctx_mib * 1048576.0 : 0.0);
    if (f->o.gpus > 1 && f->nccl > 0) fprintf(fp, "%.0f", f->nccl);
    else fputs("null", fp);
    fputs(", \"fraction_of_peak\": {", fp);
    for (a = 0, k = 0; a < f->nalgo; a++) {
        fprintf(fp, "%s\"%s\": ", k++ ? ", " : "", dpprof_algo_name(f->algos[a]));
        fit_jnum(fp, fit_frac(f, f->algos[a]));
    }
    fprintf(fp, "}, \"runs\": %d, \"note\": ", f->bench.ngaps);
    sweep_json_str(fp, margin_note);
    fprintf(fp, "},\n    \"privacy\": {\"sigma\": ");
    fit_jnum(fp, f->sigma);
    fprintf(fp, ", \"epsilon\": ");
    fit_jnum(fp, f->eps);
    fprintf(fp, ", \"target_epsilon\": ");
    fit_jnum(fp, f->o.run.cfg.target_epsilon > 0 ? f->o.run.cfg.target_epsilon : NAN);
    fprintf(fp, ", \"delta\": %g, \"sample_rate\": ", f->base.delta > 0 ? f->base.delta : 1e-5);
    fit_jnum(fp, f->q);
    fprintf(fp, ", \"steps\": %lld, \"epochs\": %g, \"accountant\": \"%s\", \"line\": ", f->steps, f->o.epochs, f->acct == DPPROF_ACCOUNTANT_PLD ? "pld" : "rdp");
    sweep_json_str(fp, f->privacy);
    fprintf(fp, "},\n    \"cost_model\": {\"kind\": \"%s\", \"time_error_max\": %g, \"runs\": %d, \"shapes\": %d, \"device\": ", fit_by_time ? "predicted step time" : "flops", FIT_TIME_ERR_MAX,
            f->bench.nruns, f->bench.nshapes);
    if (f->bench.nruns) sweep_json_str(fp, f->bench.device_name);
    else fputs("null", fp);
    fputs(", \"built_from\": ", fp);
    if (f->bench.nruns) sweep_json_str(fp, f->bench.builds);
    else fputs("null", fp);
    fprintf(fp, ", \"leave_one_shape_out\": ");
    if (f->bench.loo_n) {
        fprintf(fp, "{\"runs\": %d, \"mean_abs_error\": %.6g, \"max_abs_error\": %.6g, \"worst\": ", f->bench.loo_n, f->bench.loo_mean, f->bench.loo_max);
        sweep_json_str(fp, f->bench.loo_worst);
        fputs(", \"predictions\": [", fp);
        for (k = 0; k < f->bench.nruns; k++) {
            const fit_run *u = &f->bench.runs[k];
            fprintf(fp, "%s\n      {\"shape\": ", k ? "," : "");
            sweep_json_str(fp, u->shape);
            fprintf(fp, ", \"algo\": \"%s\", \"measured_ms\": %.6g, \"predicted_ms\": ", u->algo, u->step_ms);
            fit_jnum(fp, u->loo_ms);
            fputs(", \"file\": ", fp);
            sweep_json_str(fp, u->file);
            fputc('}', fp);
        }
        fputs("]}", fp);
    } else fputs("null", fp);
    fprintf(fp, ", \"note\": ");
    sweep_json_str(fp, cost_note);
    fputs("},\n    \"communication\": ", fp);
    if (f->o.gpus > 1) {
        const dpprof_fabric *fb = &f->fabric;
        fprintf(fp, "{\"model\": \"ring, NCCL's bus bandwidth relations, the links' peak figures (a lower bound, not measured)\", \"gpus\": %d, \"nodes\": %d, \"gpus_per_node\": %d, \"link\": ",
                fb->ranks, fb->nodes, fb->ranks / fb->nodes);
        fit_json_link(fp, fb->ranks > fb->nodes ? fb->intra : NULL);
        fputs(", \"network\": ", fp);
        fit_json_link(fp, fb->nodes > 1 ? fb->net : NULL);
        fputs(", \"busbw_bytes_per_s\": ", fp);
        fit_jnum(fp, f->nrows && f->rows[0].b > 0 ? f->rows[0].comm.busbw : NAN);
        fprintf(fp, ", \"ranked\": %s, \"links\": ", fit_by_time ? "true" : "false");
        sweep_json_str(fp, f->links);
        fputs(", \"note\": ", fp);
        sweep_json_str(fp, comm_note);
        fputc('}', fp);
    } else fputs("null", fp);
    fprintf(fp, ",\n    \"probes\": %lld,\n    \"rows\": [", f->probes);
    for (k = 0; k < f->nrows; k++) {
        const fit_row *r = &f->rows[k];
        char cmd[4096];
        fprintf(fp, "%s\n      {\"rank\": %d, \"fits\": %s, \"algo\": \"%s\", \"checkpoint\": \"%s\", \"zero\": %d, \"lora_rank\": %d, ", k ? "," : "", r->rank, r->b > 0 ? "true" : "false",
                dpprof_algo_name(r->algo), dpprof_checkpoint_name(r->ckpt), r->zero, r->lora);
        if (r->b > 0) {
            fit_command(f, &f->given, r, cmd, sizeof cmd);
            fprintf(fp, "\"physical_batch\": %d, \"accumulation\": %d, \"peak_bytes\": %lld, \"need_bytes\": %.0f, \"headroom_bytes\": %.0f, \"flops_per_step\": %.17g, \"relative_cost\": ", r->b,
                    r->accum, (long long)r->peak, r->need, r->headroom, r->flops);
            fit_jnum(fp, fit_by_time ? fit_ms(r) / fit_ms(&f->rows[0]) : r->flops / f->rows[0].flops);
            fprintf(fp, ", \"predicted_step_ms\": ");
            fit_jnum(fp, r->pred_ms);
            fprintf(fp, ", \"communication_ms\": %.17g, \"communication_bandwidth_ms\": %.17g, \"communication_latency_ms\": %.17g, \"predicted_total_ms\": ", r->comm_ms,
                    1e3 * r->comm.bandwidth_s, 1e3 * r->comm.latency_s);
            fit_jnum(fp, fit_ms(r));
            fprintf(fp, ", \"collectives\": {\"all_reduce\": {\"bytes_per_rank\": %lld, \"calls\": %lld, \"ms\": %.17g}, \"reduce_scatter\": {\"bytes_per_rank\": %lld, \"calls\": %lld, \"ms\": %.17g}, "
                        "\"all_gather\": {\"bytes_per_rank\": %lld, \"calls\": %lld, \"ms\": %.17g}}",
                    (long long)r->cost.coll_bytes[0], (long long)r->cost.coll_calls[0], 1e3 * r->comm.seconds_by_kind[0], (long long)r->cost.coll_bytes[1], (long long)r->cost.coll_calls[1],
                    1e3 * r->comm.seconds_by_kind[1], (long long)r->cost.coll_bytes[2], (long long)r->cost.coll_calls[2], 1e3 * r->comm.seconds_by_kind[2]);
            fprintf(fp, ", \"command\": ");
            sweep_json_str(fp, cmd);
        } else fprintf(fp, "\"physical_batch\": 0, \"peak_bytes_at_1\": %lld, \"need_bytes_at_1\": %.0f", (long long)r->peak1, r->need);
        fputc('}', fp);
    }
    fprintf(fp, "\n    ],\n    \"best_command\": ");
    if (best_cmd) sweep_json_str(fp, best_cmd);
    else fputs("null", fp);
    fprintf(fp, "\n  }\n}\n");
}

/* nothing fits: the least memory that would, and the fewest GPUs (ZeRO 3, from the count given up to the batch) */
static void fit_too_big(fit_ctx *f) {
    const fit_row *near = &f->rows[0]; /* ranked: the nearest first */
    const int B = f->base.batch, g0 = f->o.gpus;
    char h1[32], h2[32];
    int g, a, c, l;
    char zs[32] = "", ls[32] = "", why[512] = "";
    int zero;
    dpprof_config probe = f->base, resolved;
    dpprof_shape sh;
    if (f->o.gpus > 1) snprintf(zs, sizeof zs, ", ZeRO %d", near->zero);
    if (near->lora) snprintf(ls, sizeof ls, ", LoRA rank %d", near->lora);
    printf("nothing fits %s (%s a GPU): the least memory, %s with checkpointing %s%s%s at a physical batch of 1, needs %s a GPU.\n", f->dev_name ? f->dev_name : "the GPU",
           human_bytes(f->total, h1, sizeof h1), dpprof_algo_name(near->algo), dpprof_checkpoint_name(near->ckpt), zs, ls, human_bytes(near->need, h2, sizeof h2));
    if (f->bench.ctx_mib * 1048576.0 >= f->total) {
        printf("the CUDA context and driver alone take %s (measured, see above): a GPU of at least %s is needed\n", human_bytes(f->bench.ctx_mib * 1048576.0, h1, sizeof h1), human_bytes(near->need, h2, sizeof h2));
        return;
    }
    fit_probe_algo(&probe, near->algo, f->sigma);
    probe.checkpoint = (dpprof_checkpoint)near->ckpt, probe.lora_rank = near->lora;
    if (!near->lora) probe.lora_alpha = 0, probe.lora_targets = NULL, probe.lora_dropout = 0;
    probe.ranks = B > 1 ? 2 : 1, probe.physical_batch = 1;
    for (zero = 3; zero > 0; zero--) { /* the deepest ZeRO stage dpprof models for these options */
        probe.zero = zero;
        if (dpprof_config_resolve(&probe, &resolved, &sh) == DPPROF_OK) break;
        if (zero == 3) cli_say(&fit_cmd, dpprof_last_error(), why, sizeof why);
    }
    if (B == 1) {
        printf("a batch of one sample is not split over GPUs: a GPU of at least %s is needed (or LoRA, or a smaller --seq)\n", human_bytes(near->need, h1, sizeof h1));
        return;
    }
    if (zero == 0) { /* no sharding of these options: more GPUs hold as much each */
        printf("more GPUs would not help: each holds the whole model without ZeRO, and dpprof does not model ZeRO here (%s). a GPU of at least %s is needed (or LoRA, or a smaller --seq)\n", why,
               human_bytes(near->need, h1, sizeof h1));
        return;
    }
    for (g = g0 + 1; g <= B && g <= 65536; g++) {
        if (B % g) continue;
        f->o.gpus = g, f->brank = B / g;
        for (a = 0; a < f->nalgo; a++)
            for (c = 0; c < f->nckpt; c++)
                for (l = 0; l < f->nlora; l++) {
                    fit_row r;
                    int64_t pk;
                    memset(&r, 0, sizeof r);
                    r.algo = f->algos[a], r.ckpt = f->ckpts[c], r.zero = zero, r.lora = f->loras[l];
                    if (fit_peak(f, &r, 1, &pk) != DPPROF_OK || fit_need(f, r.algo, pk) > f->total) continue;
                    if (r.lora) snprintf(ls, sizeof ls, ", LoRA rank %d", r.lora);
                    else ls[0] = 0;
                    printf("with %d GPUs (ZeRO %d, %d sample%s a GPU) it fits: %s, checkpointing %s%s, needs %s a GPU at a physical batch of 1 (dpprof fit ... --gpus %d)\n", g, zero,
                           f->brank, f->brank > 1 ? "s" : "", dpprof_algo_name(r.algo), dpprof_checkpoint_name(r.ckpt), ls, human_bytes(fit_need(f, r.algo, pk), h1, sizeof h1), g);
                    f->o.gpus = g0, f->brank = B / g0;
                    return;
                }
    }
    printf("no number of GPUs up to the batch (%d: one sample a GPU) fits with ZeRO %d%s: a GPU of at least %s is needed (or LoRA, or a smaller --seq)\n", B, zero,
           zero < 3 ? " (the deepest stage dpprof models here)" : "", human_bytes(near->need, h1, sizeof h1));
    f->o.gpus = g0, f->brank = B / g0;
}

/* a note on standard output, wrapped at spaces under 110 columns, its lines after the first indented */
static void fit_wrap(const char *t) {
    const int width = 110;
    int first = 1;
    while (*t) {
        int n = (int)strlen(t), cut = n, room = first ? width : width - 4;
        if (n > room) {
            for (cut = room; cut > 0 && t[cut] != ' '; cut--) {}
            if (cut == 0) cut = (int)strcspn(t, " ");
        }
        printf("%s%.*s\n", first ? "" : "    ", cut, t);
        t += cut;
        while (*t == ' ') t++;
        first = 0;
    }
}

/* --link or --network NAME (network: between nodes): the table's link of that kind, or the exit code after saying why */
static int fit_link_opt(const char *opt, const char *name, int network, const dpprof_link **out) {
    const dpprof_link *l = dpprof_link_find(name), *all;
    char names[256] = "", list[256] = "", near[64];
    int n, k;
    size_t m = 0, ml = 0;
    if (l && l->network == network) {
        *out = l;
        return EXIT_OK;
    }
    all = dpprof_links(&n);
    for (k = 0; k < n; k++)
        if (all[k].network == network) {
            m += (size_t)snprintf(names + m, m < sizeof names ? sizeof names - m : 0, "%s%s", m ? "|" : "", all[k].name);
            ml += (size_t)snprintf(list + ml, ml < sizeof list ? sizeof list - ml : 0, "%s%s", ml ? ", " : "", all[k].name);
        }
    if (l) return cli_usage(network ? "%s %s: a link within a node (--link), not a network between nodes (%s)" : "%s %s: a network between nodes (--network, with --nodes 2 or more), not a link within a node (%s)", opt, name, list);
    if (dpprof_closest(name, names, near, sizeof near)) return cli_usage("%s '%s': not a link dpprof knows (did you mean %s?; %s)", opt, name, near, list);
    return cli_usage("%s '%s': not a link dpprof knows (%s)", opt, name, list);
}

/* the link a node's GPUs have where --link does not say: the device's (an SXM part's NVLink; PCIe for a PCIe card, or
   where no --device names the GPU: the table's slowest), and between nodes the network card its systems carry; why, in
   words */
static void fit_default_links(const char *given, const fit_device *dev, const char **link, const char **net, char *why, size_t cap) {
    size_t k, pcie = 0;
    for (k = 0; given && given[k]; k++) pcie |= !strncasecmp(given + k, "pcie", 4);
    *net = dev && !strncmp(dev->name, "A100", 4) ? "hdr" : "ndr";
    if (!dev) *link = "pcie4", snprintf(why, cap, "no --device names the GPU: the slowest link of the table assumed");
    else if (pcie && !strcmp(dev->name, "H100")) *link = "pcie5", snprintf(why, cap, "--device %s: a PCIe card", given);
    else if (!strcmp(dev->name, "H100") || !strcmp(dev->name, "H200")) *link = "nvlink4", snprintf(why, cap, "--device %s, taken as the SXM part", given);
    else if (!strncmp(dev->name, "A100", 4)) *link = "nvlink3", snprintf(why, cap, "--device %s, taken as the SXM part", given);
    else *link = "pcie4", snprintf(why, cap, "--device %s: a PCIe card without NVLink", given);
}

static int cmd_fit(int argc, char **argv) {
    fit_ctx *f;
    dpprof_config *cfg;
    const fit_device *dev = NULL;
    char bench_dir[PATH_MAX], margin_note[2048], cost_note[2048], comm_note[2048] = "", best_cmd[4096], h1[32];
    int rc, k, a, c, z, l, dp = 0, nfit = 0, code = EXIT_OK, predicted = 0, best = -1;
    double t0 = now_s();
    size_t len;
    fit_model *model = NULL;
    const char *missing = NULL;
    double unrated = 0;
    char skipped[1024] = "", skipped_ghost[1024] = "";
    int skip_zero = 0;  /* the ZeRO stages left out */
    int both_modes = 0; /* Opacus's two modes searched by default: one it refuses here is left out, said */
    out_file jf, pf;
    fit_table();
    if (!(f = (fit_ctx *)calloc(1, sizeof *f))) return cli_fail(EXIT_ERROR, "out of host memory");
    f->o.run.experiment = "fit";
    f->o.gpus = 1;
    f->o.nodes = 1;
    f->o.epochs = 1;
    rc = cli_parse(&fit_cmd, argc, argv, &f->o, &f->o.run.cfg, NULL, NULL);
    if (rc != EXIT_OK) {
        free(f);
        return rc == CLI_HELP_SHOWN ? EXIT_OK : rc;
    }
    f->o.run.sigma_given = cli_given(argc, argv, "--sigma");
    f->o.run.quiet = 1; /* what of a config.json is not modelled: fit prints it with the rest */
    f->given = f->o.run.cfg;
    cfg = &f->o.run.cfg;
    memset(&jf, 0, sizeof jf);
    memset(&pf, 0, sizeof pf);
#define FIT_FAIL(expr) \
    do {               \
        code = (expr); \
        goto done;     \
    } while (0)
    if (f->o.run.hf_config && (rc = hf_config_load(f->o.run.hf_config, &f->o.run)) != EXIT_OK) FIT_FAIL(rc);
    if (f->o.run.peft_config && (rc = peft_config_load(f->o.run.peft_config, &f->o.run, cli_given(argc, argv, "--task"), cli_given(argc, argv, "--lora-dropout"))) != EXIT_OK) FIT_FAIL(rc);
    if (cfg->seq <= 0) FIT_FAIL(cli_usage("--seq T is required: the sequence length to fit"));
    if (cfg->batch <= 0) FIT_FAIL(cli_usage("--batch B is required: the logical batch, samples a step over every GPU"));
    if (cfg->batch % f->o.gpus) FIT_FAIL(cli_usage("--batch %d is not a multiple of --gpus %d: each GPU takes B/N samples", cfg->batch, f->o.gpus));
    f->brank = cfg->batch / f->o.gpus;
    { /* the outputs, before any work: neither the other one nor the model's file, both not standard output */
        const char *outs[2] = {f->o.json, f->o.plot}, *names[2] = {"--json", "--plot"};
        if (f->o.json && f->o.plot && (out_same(f->o.json, f->o.plot) || (out_is_stdout(f->o.json) && out_is_stdout(f->o.plot))))
            FIT_FAIL(cli_usage("--json '%s' and --plot '%s' are the same file: one would be lost", f->o.json, f->o.plot));
        for (k = 0; k < 2; k++)
            if (outs[k] && f->o.run.hf_config && out_same(outs[k], f->o.run.hf_config)) FIT_FAIL(cli_usage("%s '%s' is the --hf-config file: it would be overwritten", names[k], outs[k]));
        for (k = 0; k < 2; k++)
            if (outs[k] && f->o.run.peft_config && out_same(outs[k], f->o.run.peft_config))
                FIT_FAIL(cli_usage("%s '%s' is the --peft-config file: it would be overwritten", names[k], outs[k]));
    }
    if (f->o.device && cfg->memory_limit) FIT_FAIL(cli_usage("--device %s and --gpu-memory: give one", f->o.device));
    if (f->o.device) {
        if (!(dev = fit_device_find(f->o.device))) {
            char names[512], near[64];
            size_t n = 0;
            for (k = 0; k < FIT_NDEV; k++) n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", k ? "|" : "", fit_devices[k].name);
            if (dpprof_closest(f->o.device, names, near, sizeof near)) FIT_FAIL(cli_usage("--device '%s': not in the table (did you mean %s?); --gpu-memory SIZE for another GPU", f->o.device, near));
            FIT_FAIL(cli_usage("--device '%s': not in the table (%s); --gpu-memory SIZE for another GPU", f->o.device, names));
        }
        f->total = dev->mib * 1048576.0;
        f->dev_name = dev->name;
    } else if (cfg->memory_limit > 0) f->total = (double)cfg->memory_limit;
    else FIT_FAIL(cli_usage("give the GPU: --device NAME (dpprof fit --help lists them) or --gpu-memory SIZE"));
    { /* the links between the GPUs: checked before any work, as the rest */
        const char *dl, *dn;
        char why[160];
        const int nodes_given = cli_given(argc, argv, "--nodes");
        dpprof_fabric *fb = &f->fabric;
        if (nodes_given && f->o.gpus == 1) FIT_FAIL(cli_usage("--nodes %d: the nodes hold the GPUs of --gpus N; give --gpus 2 or more", f->o.nodes));
        if (f->o.link && f->o.gpus == 1) FIT_FAIL(cli_usage("--link %s: the link between GPUs; give --gpus 2 or more", f->o.link));
        if (f->o.gpus % f->o.nodes) FIT_FAIL(cli_usage("--nodes %d does not divide --gpus %d: the GPUs are spread evenly over the nodes", f->o.nodes, f->o.gpus));
        if (f->o.network && f->o.nodes == 1) FIT_FAIL(cli_usage("--network %s: the network between nodes; give --nodes 2 or more", f->o.network));
        if (f->o.nccl_mem) {
            int64_t nb = 0;
            if (f->o.gpus == 1) FIT_FAIL(cli_usage("--nccl-mem %s: NCCL's buffers are those of several GPUs; give --gpus 2 or more", f->o.nccl_mem));
            if (dpprof__parse_bytes(f->o.nccl_mem, &nb) || nb < 0 || (double)nb >= f->total)
                FIT_FAIL(cli_usage("--nccl-mem '%s': expected a size under the GPU's memory (512M, 1.5GiB)", f->o.nccl_mem));
            f->nccl = (double)nb;
        }
        fit_default_links(f->o.device, dev, &dl, &dn, why, sizeof why);
        fb->ranks = f->o.gpus, fb->nodes = f->o.nodes;
        if ((rc = fit_link_opt("--link", f->o.link ? f->o.link : dl, 0, &fb->intra)) != EXIT_OK) FIT_FAIL(rc);
        if ((rc = fit_link_opt("--network", f->o.network ? f->o.network : dn, 1, &fb->net)) != EXIT_OK) FIT_FAIL(rc);
        if (f->o.gpus > 1) {
            const int per = f->o.gpus / f->o.nodes;
            size_t n = (size_t)snprintf(f->links, sizeof f->links, "%d GPUs", f->o.gpus);
            if (f->o.nodes > 1) n += (size_t)snprintf(f->links + n, sizeof f->links - n, " over %d nodes of %d", f->o.nodes, per);
            if (per > 1)
                n += (size_t)snprintf(f->links + n, sizeof f->links - n, "%s %s, %.0f GB/s each way a GPU (%s)", f->o.nodes > 1 ? "; within a node" : " on", fb->intra->what,
                                      fb->intra->bytes_per_s / 1e9, f->o.link ? "--link" : why);
            if (f->o.nodes > 1 && n < sizeof f->links)
                n += (size_t)snprintf(f->links + n, sizeof f->links - n, "; between nodes %s, %.0f GB/s each way (%s)", fb->net->what, fb->net->bytes_per_s / 1e9,
                                      f->o.network ? "--network" : "the default; --network NAME for another");
        }
    }
    if (cfg->framework >= DPPROF_FRAMEWORK_PYTORCH) { /* PyTorch's own loop (Opacus's: its hooks or its ghost clipping, no
                                                         checkpointing), one GPU */
        const int op = cfg->framework == DPPROF_FRAMEWORK_OPACUS;
        if (f->o.algos && (op ? strcmp(f->o.algos, "persample") && strcmp(f->o.algos, "ghost") && strcmp(f->o.algos, "persample,ghost") && strcmp(f->o.algos, "ghost,persample")
                              : strcmp(f->o.algos, "vanilla")))
            FIT_FAIL(cli_usage(op ? "--algo %s with --framework opacus: Opacus's grad_sample_mode hooks (persample) or ghost (ghost), or both (persample,ghost: the default)"
                                  : "--algo %s with --framework pytorch: PyTorch's loop is non-private (vanilla); Opacus's DP-SGD is --framework opacus",
                               f->o.algos));
        if (f->o.gpus > 1) FIT_FAIL(cli_usage("--gpus %d with --framework %s: one GPU (more than one rank is not modelled yet)", f->o.gpus, dpprof_framework_name(cfg->framework)));
        if (!f->o.algos) f->o.algos = op ? "persample,ghost" : "vanilla", both_modes = op;
        if (op && f->o.ckpts && strcmp(f->o.ckpts, "none"))
            FIT_FAIL(cli_usage("--checkpoint %s with --framework opacus: Opacus's loop without checkpointing (none)", f->o.ckpts));
        if (!f->o.ckpts) f->o.ckpts = op ? "none" : "none,layers"; /* PyTorch: with and without Hugging Face's gradient checkpointing */
    }
    /* the lists */
    if (f->o.algos) {
        if ((f->nalgo = fit_list("--algo", f->o.algos, fit_parse_algo, "vanilla, persample, ghost, ghost_bk, flash, flash_bk, auto", f->algos, DPPROF_ALGO_COUNT)) < 0) FIT_FAIL(EXIT_USAGE);
    } else
        for (a = DPPROF_ALGO_PERSAMPLE; a < DPPROF_ALGO_COUNT; a++) f->algos[f->nalgo++] = a;
    if (f->o.ckpts) {
        if ((f->nckpt = fit_list("--checkpoint", f->o.ckpts, fit_parse_ckpt, "none, layers", f->ckpts, 2)) < 0) FIT_FAIL(EXIT_USAGE);
    } else f->ckpts[0] = DPPROF_CHECKPOINT_NONE, f->ckpts[1] = DPPROF_CHECKPOINT_LAYERS, f->nckpt = 2;
    if (f->o.zeros) {
        if ((f->nzero = fit_list("--zero", f->o.zeros, fit_parse_zero, "0, 1, 2, 3", f->zeros, 4)) < 0) FIT_FAIL(EXIT_USAGE);
        for (k = 0; k < f->nzero; k++)
            if (f->zeros[k] > 0 && f->o.gpus == 1) FIT_FAIL(cli_usage("--zero %s: ZeRO shards over GPUs; give --gpus 2 or more", f->o.zeros));
    } else
        for (z = 0; z < (f->o.gpus > 1 ? 4 : 1); z++) f->zeros[f->nzero++] = z;
    if (f->o.loras) {
        if ((f->nlora = fit_list("--lora-rank", f->o.loras, fit_parse_lora, "integers 0 (full fine-tuning) to 65536", f->loras, FIT_MAXL)) < 0) FIT_FAIL(EXIT_USAGE);
    } else f->loras[0] = cfg->lora_rank, f->nlora = 1;
    for (a = 0; a < f->nalgo; a++) dp |= f->algos[a] != DPPROF_ALGO_VANILLA;
    if ((rc = fit_privacy(f, dp)) != 0) FIT_FAIL(rc);
    /* the probes' configuration: dry, the rest as given */
    f->base = *cfg;
    f->base.backend = DPPROF_BACKEND_DRY;
    f->base.memory_limit = 0;
    f->base.target_epsilon = 0;
    f->base.poisson = 0;
    f->base.steps = 1;
    f->base.warmup = 0;
    f->base.no_timeline = 1;
    f->base.trace_ops = f->base.op_times = 0;
    f->base.dram = DPPROF_DRAM_OFF;
    f->base.data_path = NULL;
    f->base.accountant = DPPROF_ACCOUNTANT_RDP;
    f->nrows = f->nalgo * f->nckpt * f->nzero * f->nlora;
    if (!(f->rows = (fit_row *)calloc((size_t)f->nrows, sizeof *f->rows))) FIT_FAIL(cli_fail(EXIT_ERROR, "out of host memory"));
    k = 0;
    for (a = 0; a < f->nalgo; a++)
        for (c = 0; c < f->nckpt; c++)
            for (z = 0; z < f->nzero; z++)
                for (l = 0; l < f->nlora; l++) {
                    fit_row *r = &f->rows[k++];
                    dpprof_config probe = f->base, resolved;
                    r->algo = f->algos[a], r->ckpt = f->ckpts[c], r->zero = f->zeros[z], r->lora = f->loras[l];
                    /* every combination's configuration checked before any probe: bad input is said first */
                    fit_probe_algo(&probe, r->algo, f->sigma);
                    probe.checkpoint = (dpprof_checkpoint)r->ckpt, probe.zero = r->zero, probe.lora_rank = r->lora, probe.ranks = f->o.gpus;
                    probe.physical_batch = 1;
                    if (!r->lora) probe.lora_alpha = 0, probe.lora_targets = NULL, probe.lora_dropout = 0;
                    if ((rc = dpprof_config_resolve(&probe, &resolved, &f->shape)) != DPPROF_OK) {
                        if (rc == DPPROF_ERR_UNSUPPORTED && both_modes && r->algo == DPPROF_ALGO_GHOST) { /* a tied head trained */
                            if (!skipped_ghost[0]) cli_say(&fit_cmd, dpprof_last_error(), skipped_ghost, sizeof skipped_ghost);
                            k--;
                            continue;
                        }
                        if (rc != DPPROF_ERR_UNSUPPORTED || f->o.zeros || r->zero == 0) FIT_FAIL(cli_fail_lib(&fit_cmd, EXIT_USAGE));
                        /* a ZeRO stage of the default list that dpprof does not model with these options: left out, said */
                        if (!skipped[0]) cli_say(&fit_cmd, dpprof_last_error(), skipped, sizeof skipped);
                        skip_zero |= 1 << r->zero;
                        k--;
                        continue;
                    }
                    if (k == 1) {
                        dpprof_session *s = NULL;
                        if (dpprof_session_create(&probe, &s) != DPPROF_OK) {
                            dpprof_session_destroy(s);
                            FIT_FAIL(cli_fail_lib(&fit_cmd, EXIT_USAGE));
                        }
                        f->params = (long long)dpprof_session_param_elems(s, 0);
                        dpprof_session_destroy(s);
                        if (!f->base.model_name) f->base.model_name = resolved.preset;
                    }
                }
    f->nrows = k;
    /* the committed GPU runs: the margin, and the device's per-op rates */
    if (f->o.bench) {
        struct stat st;
        if (stat(f->o.bench, &st) != 0 || !S_ISDIR(st.st_mode)) FIT_FAIL(cli_usage("--bench '%s': not a directory", f->o.bench));
        snprintf(bench_dir, sizeof bench_dir, "%s", f->o.bench);
    } else fit_default_bench(bench_dir, sizeof bench_dir);
    if (f->o.json && out_open(&jf, f->o.json, "--json")) FIT_FAIL(EXIT_USAGE);
    if (f->o.json && jf.f == stdout) { /* --json -: the JSON alone on standard output, the table on standard error */
        const int jfd = (fflush(stdout), dup(1));
        FILE *js = jfd >= 0 ? fdopen(jfd, "wb") : NULL;
        if (!js || dup2(2, 1) < 0) {
            if (js) fclose(js);
            else if (jfd >= 0) close(jfd);
            FIT_FAIL(cli_fail(EXIT_ERROR, "--json -: cannot keep the table off standard output: %s", strerror(errno)));
        }
        jf.f = js;
    }
    if (f->o.plot && out_open(&pf, f->o.plot, "--plot")) FIT_FAIL(EXIT_USAGE);
    fit_margin_load(f, bench_dir, dev, (int)f->base.dtype);
    if (f->bench.prov_err[0]) FIT_FAIL(cli_usage("%s", f->bench.prov_err));
    /* the search */
    for (k = 0; k < f->nrows; k++)
        if (fit_search(f, &f->rows[k]) != DPPROF_OK) FIT_FAIL(cli_fail_lib(&fit_cmd, EXIT_ERROR));
    for (k = 0; k < f->nrows && f->o.gpus > 1; k++) { /* the collectives' time of each row's step: its bytes and calls on the links */
        fit_row *r = &f->rows[k];
        dpprof_dist_info d;
        if (r->b <= 0) continue;
        memset(&d, 0, sizeof d);
        d.ranks = f->o.gpus;
        d.all_reduce_bytes = r->cost.coll_bytes[DPPROF_COLL_ALL_REDUCE], d.all_reduce_calls = r->cost.coll_calls[DPPROF_COLL_ALL_REDUCE];
        d.reduce_scatter_bytes = r->cost.coll_bytes[DPPROF_COLL_REDUCE_SCATTER], d.reduce_scatter_calls = r->cost.coll_calls[DPPROF_COLL_REDUCE_SCATTER];
        d.all_gather_bytes = r->cost.coll_bytes[DPPROF_COLL_ALL_GATHER], d.all_gather_calls = r->cost.coll_calls[DPPROF_COLL_ALL_GATHER];
        if (dpprof_comm_time(&d, &f->fabric, &r->comm) != DPPROF_OK) FIT_FAIL(cli_fail_lib(&fit_cmd, EXIT_ERROR));
        r->comm_ms = 1e3 * r->comm.seconds;
    }
    /* the cost model: a step time where the device's runs give every op a rate */
    fit_by_time = 0;
    predicted = 0;
    if (f->bench.nruns && f->base.framework < DPPROF_FRAMEWORK_PYTORCH && (model = (fit_model *)malloc(sizeof *model)) != NULL) {
        fit_model_build(&f->bench, NULL, model);
        predicted = 1;
        for (k = 0; k < f->nrows; k++) {
            f->rows[k].pred_ms = NAN;
            if (f->rows[k].b > 0) f->rows[k].pred_ms = fit_predict(model, &f->rows[k].cost, &missing, &unrated);
            if (f->rows[k].b > 0 && !(f->rows[k].pred_ms == f->rows[k].pred_ms)) predicted = 0;
        }
        free(model);
    } else
        for (k = 0; k < f->nrows; k++) f->rows[k].pred_ms = NAN;
    /* ranked by time only where the time model's error on this device's runs, left out a shape at a time, is small */
    fit_by_time = predicted && f->bench.loo_n > 0 && f->bench.loo_mean <= FIT_TIME_ERR_MAX;
    qsort(f->rows, (size_t)f->nrows, sizeof *f->rows, fit_cmp);
    for (k = 0; k < f->nrows; k++) nfit += f->rows[k].b > 0;
    for (k = 0; k < f->nrows; k++) f->rows[k].rank = k + 1;
    if (fit_by_time) fit_ties(f->rows, nfit, f->bench.loo_mean);
    /* what the table rests on, in words */
    len = (size_t)snprintf(margin_note, sizeof margin_note, "fits: the peak, plus %s for the CUDA context and driver", human_bytes(f->bench.ctx_mib * 1048576.0, h1, sizeof h1));
    if (f->base.framework >= DPPROF_FRAMEWORK_PYTORCH)
        snprintf(margin_note, sizeof margin_note,
                 "fits: PyTorch's allocated peak (what torch.cuda.max_memory_allocated reports), plus %s for the CUDA context and driver as measured for a dpprof process. "
                 "Not measured, so not added: PyTorch's reserved over allocated (its caching allocator's segments) and the larger context of a process that loads PyTorch's kernels; leave room for both",
                 human_bytes(f->bench.ctx_mib * 1048576.0, h1, sizeof h1));
    else if (f->bench.ngaps) {
        len += (size_t)snprintf(margin_note + len, sizeof margin_note - len, " (nvidia-smi's total less an idle process's free memory, the largest measured: %s)", f->bench.ctx_from);
        len += (size_t)snprintf(margin_note + len, sizeof margin_note - len, ", plus the allocator's share of the peak, the largest (driver - accountant) / accountant measured in %d GPU runs under %.300s:", f->bench.ngaps, bench_dir);
        for (a = 0; a < f->nalgo && len < sizeof margin_note; a++)
            len += (size_t)snprintf(margin_note + len, sizeof margin_note - len, " %s %.1f%%%s", dpprof_algo_name(f->algos[a]), 100 * fit_frac(f, f->algos[a]), f->bench.gap[f->algos[a]] < 0 ? " (of all algorithms: none of its own)" : "");
    } else snprintf(margin_note + len, sizeof margin_note - len, ": no GPU runs under %s measured the allocator's share, so none is added (give --bench DIR)", bench_dir);
    if (f->o.gpus > 1 && (len = strlen(margin_note)) < sizeof margin_note) {
        if (f->nccl > 0)
            snprintf(margin_note + len, sizeof margin_note - len, ". Plus %s on every GPU for NCCL's own buffers (--nccl-mem)", human_bytes(f->nccl, h1, sizeof h1));
        else
            snprintf(margin_note + len, sizeof margin_note - len,
                     ". NCCL's own buffers are not counted: nothing has measured them on these GPUs (their size follows NCCL's channels, which its topology search "
                     "picks); dpprof run --backend cuda --ranks %d measures them (meta.memory.nccl_device_bytes), and --nccl-mem SIZE adds them to every row",
                     f->o.gpus);
    }
    if (fit_by_time)
        snprintf(cost_note, sizeof cost_note, "ranked by the predicted step time: per-op rates of %d runs on %s under %.300s (%s; each op's time per flop, byte or call; the step over its ops' time); "
                                              "its leave-one-shape-out error over %d runs of %d shapes: mean %.0f%%, largest %.0f%% (%s). Rows whose predicted times are within that mean error of a "
                                              "better row's are ties, ranked among themselves by flops (the rank repeats)%s",
                 f->bench.nruns, f->bench.device_name, bench_dir, f->bench.builds, f->bench.loo_n, f->bench.nshapes, 100 * f->bench.loo_mean, 100 * f->bench.loo_max, f->bench.loo_n ? f->bench.loo_worst : "one shape only",
                 f->o.gpus > 1 ? ". On several GPUs the time ranked is the predicted compute plus the collectives' (below), the ties by the compute model's error" : "");
    else if (predicted)
        snprintf(cost_note, sizeof cost_note, "ranked by the flops of a logical step (dpprof's analytic costs, every GPU): the step time predicted from per-op rates of %d runs on %s under %.300s (%s) is shown "
                                              "(step ms) but not ranked by: its leave-one-shape-out error over %d runs of %d shapes, mean %.0f%%, largest %.0f%% (%s), is above the %.0f%% a ranking by time needs",
                 f->bench.nruns, f->bench.device_name, bench_dir, f->bench.builds, f->bench.loo_n, f->bench.nshapes, 100 * f->bench.loo_mean, 100 * f->bench.loo_max,
                 f->bench.loo_n ? f->bench.loo_worst : "one shape only: no error measured", 100 * FIT_TIME_ERR_MAX);
    if (f->bench.skipped && (len = strlen(cost_note)) < sizeof cost_note)
        snprintf(cost_note + len, sizeof cost_note - len, ". %d run%s of the device left out of the rates (the last: %s)", f->bench.skipped, f->bench.skipped > 1 ? "s" : "", f->bench.skipped_why);
    if (predicted && missing && (len = strlen(cost_note)) < sizeof cost_note)
        snprintf(cost_note + len, sizeof cost_note - len, ". Ops those runs never timed (%s among them) take their ops' mean rate: at most %.1f%% of a row's predicted time", missing, 100 * unrated);
    else if (f->base.framework >= DPPROF_FRAMEWORK_PYTORCH)
        snprintf(cost_note, sizeof cost_note, "ranked by the flops of a logical step (dpprof's analytic costs of the same math): no step time is predicted, the committed GPU runs time dpprof's kernels, not PyTorch's");
    else if (f->bench.nruns)
        snprintf(cost_note, sizeof cost_note, "ranked by the flops of a logical step (dpprof's analytic costs, every GPU): the runs on %s under %.300s measured no rate of the op %s, so no step time is predicted",
                 f->bench.device_name, bench_dir, missing ? missing : "?");
    else
        snprintf(cost_note, sizeof cost_note, "ranked by the flops of a logical step (dpprof's analytic costs, every GPU): no committed %s runs %s%s under %.300s, so no step time is predicted",
                 fit_dtype(f->base.dtype), dev ? "of " : "of the device (--device names it)", dev ? dev->name : "", bench_dir);
    best_cmd[0] = 0;
    for (k = 0; k < nfit; k++) /* the best private row (vanilla's are there to compare with) */
        if (f->rows[k].algo != DPPROF_ALGO_VANILLA || !dp || k == nfit - 1) {
            fit_command(f, &f->given, &f->rows[k], best_cmd, sizeof best_cmd);
            best = k;
            break;
        }
    if (f->o.gpus > 1) { /* the collectives' time: what it rests on, whether it is ranked, and its weight in the best row */
        len = (size_t)snprintf(comm_note, sizeof comm_note,
                               "communication: %s. Each row's collectives a step (rank 0's, as the dry run counts them) are timed by NCCL's ring relations: a rank's bytes over the ring's "
                               "bus bandwidth, the slowest link it crosses, plus each ring step's latency. The bandwidths are the specifications' peaks, so the times are a model's lower "
                               "bound, not a measurement; no overlap with compute is assumed. ",
                               f->links);
        if (fit_by_time) len += (size_t)snprintf(comm_note + len, sizeof comm_note - len, "Ranked by the predicted compute plus communication (comm ms)");
        else len += (size_t)snprintf(comm_note + len, sizeof comm_note - len, "Shown (comm ms) but not ranked by: the ranking is by flops, which have no time to add it to");
        if (best >= 0 && len < sizeof comm_note) {
            const fit_row *r = &f->rows[best];
            if (r->pred_ms == r->pred_ms)
                snprintf(comm_note + len, sizeof comm_note - len, ". The best row: compute %.0f ms, communication %.1f ms a step: %s dominates (communication %.1f%% of the two)", r->pred_ms,
                         r->comm_ms, r->comm_ms > r->pred_ms ? "communication" : "compute", 100 * r->comm_ms / fit_ms(r));
            else snprintf(comm_note + len, sizeof comm_note - len, ". The best row: communication %.1f ms a step; no compute time is predicted here to weigh it against", r->comm_ms);
        }
    }
    /* the terminal */
    printf("dpprof fit: %s (%s parameters), seq %d, logical batch %d", f->base.model_name, human_count((double)f->params, h1, sizeof h1), f->base.seq, f->base.batch);
    if (f->o.gpus > 1) printf(" over %d GPUs (%d samples each)", f->o.gpus, f->brank);
    printf(", %s, on %s%s%s%s%s\n", fit_dtype(f->base.dtype), f->o.gpus > 1 ? "GPUs of " : "", dev ? dev->name : "a GPU of ",
           dev ? " (" : "", human_bytes(f->total, h1, sizeof h1), dev ? ")" : "");
    if (f->base.unmodelled) printf("not modelled: %s\n", f->base.unmodelled);
    if (skipped[0]) printf("not searched: ZeRO%s%s%s (%s)\n", skip_zero & 2 ? " 1" : "", skip_zero & 4 ? " 2" : "", skip_zero & 8 ? " 3" : "", skipped);
    if (skipped_ghost[0]) printf("not searched: ghost (%s)\n", skipped_ghost);
    printf("%s\n", f->privacy);
    fit_wrap(margin_note);
    fit_wrap(cost_note);
    if (comm_note[0]) fit_wrap(comm_note);
    printf("searched %d combinations with %lld dry probes in %.2f s\n\n", f->nrows, f->probes, now_s() - t0);
    if (nfit) {
        printf("%4s  %-9s %-6s %4s %5s %6s %6s %9s %9s %9s %11s %6s %9s%s %7s %8s\n", "rank", "algo", "ckpt", "zero", "lora", "batch", "accum", "peak GiB", "need GiB", "headroom",
               "TFLOP/step", "cost", predicted ? "step ms" : "", f->o.gpus > 1 ? "   comm ms" : "", "sigma", "steps");
        for (k = 0; k < nfit; k++) {
            const fit_row *r = &f->rows[k];
            char lr[16], pr[32], st[32], cm[32] = "";
            snprintf(lr, sizeof lr, r->lora ? "%d" : "-", r->lora);
            if (predicted) snprintf(pr, sizeof pr, "%.0f", r->pred_ms);
            else pr[0] = 0;
            if (f->steps) snprintf(st, sizeof st, "%lld", f->steps);
            else snprintf(st, sizeof st, "-");
            if (f->o.gpus > 1) snprintf(cm, sizeof cm, " %9.2f", r->comm_ms);
            printf("%4d  %-9s %-6s %4d %5s %6d %6d %9.2f %9.2f %9.2f %11.1f %6.2f %9s%s %7.4g %8s\n", r->rank, dpprof_algo_name(r->algo), dpprof_checkpoint_name(r->ckpt), r->zero, lr, r->b,
                   r->accum, (double)r->peak / FIT_GIB, r->need / FIT_GIB, r->headroom / FIT_GIB, r->flops / 1e12, fit_by_time ? fit_ms(r) / fit_ms(&f->rows[0]) : r->flops / f->rows[0].flops, pr,
                   cm, r->algo == DPPROF_ALGO_VANILLA ? 0.0 : f->sigma, r->algo == DPPROF_ALGO_VANILLA ? "-" : st);
        }
        if (nfit < f->nrows) { /* the nearest three */
            printf("%d more do not fit one sample a GPU; the nearest:", f->nrows - nfit);
            for (k = nfit; k < f->nrows && k < nfit + 3; k++) {
                const fit_row *r = &f->rows[k];
                char zs[16] = "", ls[24] = "";
                if (f->o.gpus > 1) snprintf(zs, sizeof zs, " zero %d", r->zero);
                if (r->lora) snprintf(ls, sizeof ls, " LoRA %d", r->lora);
                printf("%s %s ckpt %s%s%s needs %s", k > nfit ? "," : "", dpprof_algo_name(r->algo), dpprof_checkpoint_name(r->ckpt), zs, ls, human_bytes(r->need, h1, sizeof h1));
            }
            printf(" (--json lists them all)\n");
        }
        printf("\nbest: %s\n", best_cmd);
        for (k = 0; k < nfit && f->base.framework >= DPPROF_FRAMEWORK_PYTORCH; k++)
            if (f->rows[k].rank == 1) { /* the answer in the framework's own terms */
                if (f->base.framework == DPPROF_FRAMEWORK_OPACUS)
                    printf("in Opacus: make_private(..., grad_sample_mode=\"%s\"), then BatchMemoryManager(data_loader=..., optimizer=..., max_physical_batch_size=%d) for the logical batch %d;\n"
                           "max_physical_batch_size=%d\n",
                           f->rows[k].algo == DPPROF_ALGO_GHOST ? "ghost" : "hooks", f->rows[k].b, f->base.batch, f->rows[k].b);
                else
                    printf("in PyTorch: a per-device batch of %d with %d gradient accumulation step%s (the logical batch %d)%s\n", f->rows[k].b, f->rows[k].accum, f->rows[k].accum > 1 ? "s" : "",
                           f->base.batch, f->rows[k].ckpt == DPPROF_CHECKPOINT_LAYERS ? ", after model.gradient_checkpointing_enable()" : "");
                break;
            }
    } else {
        fit_too_big(f);
        code = EXIT_OOM;
    }
    (void)fflush(stdout);
    if (f->o.json) {
        fit_json(f, jf.f, nfit ? best_cmd : NULL, margin_note, cost_note, comm_note);
        if (out_commit(&jf)) FIT_FAIL(EXIT_ERROR);
    }
    if (f->o.plot && (rc = fit_plot(f, &pf)) != EXIT_OK) FIT_FAIL(rc);
done:
#undef FIT_FAIL
    out_abort(&jf); /* (nothing where it was committed) */
    out_abort(&pf);
    free(f->bench.runs);
    free(f->rows);
    free(f);
    return code;
}

#endif /* DPPROF_EXPERIMENTS_H */
