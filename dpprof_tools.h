/* dpprof_tools.h - v0.1.0 - the command line's tools: a strict JSON reader and raster figures - MIT licence

   What dpprof's command line (main.c) uses beside the library: reading result files back and drawing
   figures. Nothing here knows of models or DP-SGD; it needs dpprof.h (its result codes) and libm.

   USE
     In the one C file that implements dpprof.h (or any one C file):
         #define DPPROF_TOOLS_IMPLEMENTATION
         #include "dpprof_tools.h"
     elsewhere just #include "dpprof_tools.h". link with -lm.
     It allocates through DPPROF_MALLOC / DPPROF_REALLOC / DPPROF_FREE where the file defines them (all or
     none, as dpprof.h), malloc otherwise.

   JSON READER
     dpprof_json_parse, dpprof_json_parse_file, dpprof_json_free       a document (its values live in one arena)
     dpprof_json_root, dpprof_json_kind, dpprof_json_get, dpprof_json_at, dpprof_json_len,
     dpprof_json_key, dpprof_json_key_len, dpprof_json_member, dpprof_json_path   navigation
     dpprof_json_number, dpprof_json_int64, dpprof_json_string, dpprof_json_string_len   values
     Strict RFC 8259; never recurses; the first problem as "line L, column C: what".

   FIGURES (pixels into an RGB buffer; the command line writes the PNG)
     dpprof_canvas_init, dpprof_canvas_free, dpprof_canvas_fill, dpprof_canvas_rect, dpprof_canvas_line,
     dpprof_canvas_dashed_vline, dpprof_canvas_dashed_hline, dpprof_canvas_text, dpprof_canvas_text_up,
     dpprof_canvas_text_width, dpprof_canvas_text_height      the canvas and its primitives
     dpprof_plot_palette, dpprof_plot_algo_colour             colours
     dpprof_plot_timeline, dpprof_plot_bars, dpprof_plot_scatter, dpprof_plot_heatmap,
     dpprof_plot_stacked, dpprof_plot_lines
     Each takes a desc struct (all-zero means defaults) and draws deterministically: the same input
     gives byte-identical pixels.
     dpprof_plot_font, dpprof_plot_font_truetype              text in a TrueType font (DejaVu Sans, say) where
                                                              the file is compiled with DPPROF_PLOT_TRUETYPE and
                                                              stb_truetype (Debian's libstb-dev); else the
                                                              built-in 8x13 bitmap font

   ERRORS
     dpprof_result codes; dpprof_last_error() says why (every failure goes through dpprof_fail).
*/
#ifndef DPPROF_TOOLS_H
#define DPPROF_TOOLS_H
#include "dpprof.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- json reader: declarations ------------------------------------------
 * a strict rfc 8259 json reader (dom) for dpprof's own result files.
 * inputs may be truncated or hostile, so the parser never recurses, bounds
 * nesting at DPPROF_JSON_MAX_DEPTH, runs in time linear in the input (plus
 * n log n for duplicate-key checks of very large objects), and reports the
 * first problem as "line L, column C: what" (lines count '\n', columns count
 * utf-8 characters, both from 1).
 * all nodes and strings of one document live in one arena owned by the
 * dpprof_json_doc; pointers returned by the getters stay valid until
 * dpprof_json_free. a parsed document is read-only, so several threads may
 * read it at once. */

#define DPPROF_JSON_MAX_DEPTH 256

typedef enum dpprof_json_type {
    DPPROF_JSON_NULL,
    DPPROF_JSON_FALSE,
    DPPROF_JSON_TRUE,
    DPPROF_JSON_NUMBER,
    DPPROF_JSON_STRING,
    DPPROF_JSON_ARRAY,
    DPPROF_JSON_OBJECT
} dpprof_json_type;

/* return codes: dpprof_result's, under the reader's names (0 is success, every failure is negative) */
#define DPPROF_JSON_OK DPPROF_OK
#define DPPROF_JSON_ESYNTAX DPPROF_ERR_PARSE    /* input is not valid json (err says where) */
#define DPPROF_JSON_ENOMEM DPPROF_ERR_OOM       /* an allocation failed */
#define DPPROF_JSON_EIO DPPROF_ERR_IO           /* file could not be opened or read */
#define DPPROF_JSON_ETOOBIG DPPROF_ERR_TOO_BIG  /* file larger than max_bytes */
#define DPPROF_JSON_EINVAL DPPROF_ERR_INVALID   /* bad argument (null doc pointer, ...) */
#define DPPROF_JSON_EMISSING DPPROF_ERR_MISSING /* getter given a null node (absent value) */
#define DPPROF_JSON_ETYPE DPPROF_ERR_TYPE       /* getter given a node of another type */
#define DPPROF_JSON_ERANGE DPPROF_ERR_RANGE     /* int getter: not an exact integer in range */

typedef struct dpprof_json dpprof_json;         /* one value (opaque) */
typedef struct dpprof_json_doc dpprof_json_doc; /* owns all values */

/* parse n bytes of text (need not be nul-terminated). on success *doc gets
 * a new document. on failure *doc is NULL, the result is negative and
 * dpprof_last_error() says why, e.g.
 * "line 3, column 17: expected ',' or '}' after object member". */
DPPROF_API int dpprof_json_parse(const char *text, size_t n, dpprof_json_doc **doc);

/* read a whole file (at most max_bytes, e.g. 1 << 30) and parse it. the
 * messages of dpprof_last_error() start with the file name: "FILE: line L, column C: ...",
 * "FILE: cannot open: <strerror>", "FILE: read error: <strerror>",
 * "FILE: file too large (limit N bytes)", "FILE: out of memory". */
DPPROF_API int dpprof_json_parse_file(const char *path, size_t max_bytes, dpprof_json_doc **doc);

/* free a document and every value in it; NULL is fine */
DPPROF_API void dpprof_json_free(dpprof_json_doc *doc);

/* the top-level value; NULL only for a NULL doc */
DPPROF_API const dpprof_json *dpprof_json_root(const dpprof_json_doc *doc);

/* the type of v. a NULL v (absent value) also reports DPPROF_JSON_NULL, so
 * test the pointer to tell "absent" from "null". */
DPPROF_API dpprof_json_type dpprof_json_kind(const dpprof_json *v);

/* object member by key (exact byte compare); NULL if absent, if obj is not
 * an object, or if either argument is NULL. linear in the member count. */
DPPROF_API const dpprof_json *dpprof_json_get(const dpprof_json *obj, const char *key);

/* array element i; NULL if out of range or arr is not an array */
DPPROF_API const dpprof_json *dpprof_json_at(const dpprof_json *arr, size_t i);

/* element count of an array, member count of an object, 0 otherwise */
DPPROF_API size_t dpprof_json_len(const dpprof_json *v);

/* key and value of object member i (file order); NULL if out of range or
 * obj is not an object */
DPPROF_API const char *dpprof_json_key(const dpprof_json *obj, size_t i);
DPPROF_API const dpprof_json *dpprof_json_member(const dpprof_json *obj, size_t i);
/* byte length of key i (keys may hold "\u0000"); 0 if out of range */
DPPROF_API size_t dpprof_json_key_len(const dpprof_json *obj, size_t i);

/* number as a double. returns 0, DPPROF_JSON_EMISSING (v NULL) or
 * DPPROF_JSON_ETYPE (not a number); *out is written only on success and out
 * may be NULL to just test. */
DPPROF_API int dpprof_json_number(const dpprof_json *v, double *out);

/* number as an exact 64-bit integer. integer literals in
 * [-2^63, 2^63 - 1] are kept exactly; other number literals (with '.' or an
 * exponent) are accepted only if their double value is integral and less
 * than 2^53 in magnitude, where a double is exact. otherwise
 * DPPROF_JSON_ERANGE. */
DPPROF_API int dpprof_json_int64(const dpprof_json *v, long long *out);

/* string contents (utf-8, nul-terminated); NULL if v is not a string. a
 * string may hold "\u0000", so use dpprof_json_string_len for its length. */
DPPROF_API const char *dpprof_json_string(const dpprof_json *v);
DPPROF_API size_t dpprof_json_string_len(const dpprof_json *v); /* bytes; 0 if not a string */

/* path lookup: "a.b.3.c". segments are split at '.'; in an object a segment
 * is a key (even if it looks numeric), in an array it must be a decimal index
 * without leading zeros. "" yields root itself. NULL if any step fails
 * (keys containing '.' are not reachable this way: use dpprof_json_get). */
DPPROF_API const dpprof_json *dpprof_json_path(const dpprof_json *root, const char *path);

/* ===================================================================== */
/* plot: raster figures into an rgb byte buffer (declarations)           */
/* ===================================================================== */
/* the library only renders pixels (row-major, 3 bytes per pixel, no
 * padding, top row first) so it needs no image codec; the cli writes png.
 * rendering is deterministic: the same input gives byte-identical pixels. */

/* result codes of the plot functions (0 = ok) */
/* clang-format off */
#define DPPROF_PLOT_OK DPPROF_OK /* dpprof_result's codes, as below */
#define DPPROF_PLOT_EARG DPPROF_ERR_INVALID   /* null descriptor/canvas/array, count < 1, option out of range
                                   (text_scale, marker, ref_group) */
#define DPPROF_PLOT_EVALUE DPPROF_ERR_NUMERIC /* nan/inf where not allowed, negative value, value <= 0 on a
                                   log axis, empty or inverted explicit range */
#define DPPROF_PLOT_EORDER DPPROF_ERR_ORDER /* timeline x not ascending (equal neighbours are allowed) */
#define DPPROF_PLOT_ESIZE DPPROF_ERR_RANGE /* image size out of range, or preallocated canvas of another size */
#define DPPROF_PLOT_ENOMEM DPPROF_ERR_OOM /* DPPROF_MALLOC failed */
/* clang-format on */

#define DPPROF_PLOT_MIN_W 320 /* figures smaller than this cannot hold axes + legend */
#define DPPROF_PLOT_MIN_H 200
#define DPPROF_PLOT_MAX_DIM 16384
#define DPPROF_PLOT_FONT_W 8 /* glyph cell of the built-in font at scale 1 */
#define DPPROF_PLOT_FONT_H 13
#define DPPROF_PLOT_PALETTE_N 12
#define DPPROF_PLOT_MAX_TEXT_SCALE 16 /* largest text_scale a desc accepts */

typedef struct dpprof_canvas {
    int w, h;
    unsigned char *rgb; /* w*h*3 bytes; caller-owned, or from dpprof_canvas_init */
} dpprof_canvas;

/* allocates w*h*3 bytes (white). 0, DPPROF_PLOT_EARG, _ESIZE or _ENOMEM */
DPPROF_API int dpprof_canvas_init(dpprof_canvas *c, int w, int h);
/* frees a buffer from dpprof_canvas_init (or a figure function) and zeroes c */
DPPROF_API void dpprof_canvas_free(dpprof_canvas *c);

/* drawing primitives. colours are 3 bytes r,g,b. everything is clipped to
 * the canvas, so any coordinates are safe. */
DPPROF_API void dpprof_canvas_fill(dpprof_canvas *c, const unsigned char *rgb);
DPPROF_API void dpprof_canvas_rect(dpprof_canvas *c, int x, int y, int w, int h, const unsigned char *rgb);
/* bresenham line with a square pen of width pixels (no anti-aliasing) */
DPPROF_API void dpprof_canvas_line(dpprof_canvas *c, int x0, int y0, int x1, int y1, int width,
                                   const unsigned char *rgb);
/* dashed lines: dash pixels on, gap pixels off, starting at y0 / x0 */
DPPROF_API void dpprof_canvas_dashed_vline(dpprof_canvas *c, int x, int y0, int y1, int width, int dash,
                                           int gap, const unsigned char *rgb);
DPPROF_API void dpprof_canvas_dashed_hline(dpprof_canvas *c, int y, int x0, int x1, int width, int dash,
                                           int gap, const unsigned char *rgb);

/* text in the built-in 8x13 font (printable ascii; other bytes draw as '?'),
 * at integer scale 1..64. a string of n chars is (8n - 1) * scale wide and
 * 13 * scale tall; capitals and digits occupy rows 1..9 of the cell,
 * descenders rows 10..12. */
DPPROF_API int dpprof_canvas_text_width(const char *s, int scale);
DPPROF_API int dpprof_canvas_text_height(int scale);
/* horizontal text, (x, y) = top-left of the cell box. returns the width */
DPPROF_API int dpprof_canvas_text(dpprof_canvas *c, int x, int y, const char *s, int scale,
                                  const unsigned char *rgb);
/* text rotated 90 degrees counter-clockwise (reads bottom to top), (x, y) =
 * top-left of the rotated box, which is text_height wide and text_width
 * tall. returns the box height */
DPPROF_API int dpprof_canvas_text_up(dpprof_canvas *c, int x, int y, const char *s, int scale,
                                     const unsigned char *rgb);
/* the text's font from here on: a TrueType file (ttf_path), or NULL: the built-in bitmap font (the default).
 * every layout keeps the bitmap font's cells (the widths and heights above): a string is drawn anti-aliased
 * in its cell box, its caps as tall as the bitmap's (rows 1..9 of a cell), aligned in the box as placed (left,
 * centred or right; text_width bounds its width: a string that would be wider is narrowed to it), utf-8 decoded.
 * needs the implementation compiled with DPPROF_PLOT_TRUETYPE (and stb_truetype's, STB_TRUETYPE_IMPLEMENTATION
 * in one file). 0; DPPROF_PLOT_EARG where the file cannot be read or is no font, or without DPPROF_PLOT_TRUETYPE
 * (the font stays as it was) */
DPPROF_API int dpprof_plot_font(const char *ttf_path);
/* 1 while a TrueType font draws the text */
DPPROF_API int dpprof_plot_font_truetype(void);

/* fixed palette of DPPROF_PLOT_PALETTE_N colours (okabe-ito first, then
 * paul tol's muted set), so a category keeps its colour in every figure.
 * i wraps around; returns 3 bytes r,g,b */
DPPROF_API const unsigned char *dpprof_plot_palette(int i);

/* ---- memory timeline: stacked step areas ---------------------------- */
typedef struct dpprof_timeline_desc {
    const char *title, *xlabel, *ylabel; /* NULL -> "", "time (ms)", "memory (MiB)" */
    int width, height;                   /* 0 -> the preallocated canvas' size, else 1600, 900 */
    int n_points;
    const double *x; /* (n_points) ascending (ties allowed), e.g. time in ms */
    int n_series;
    /* (n_series * n_points) series-major, values >= 0, stacked in series order
   * (series 0 at the bottom) */
    const double *y;
    const char *const *series_names; /* (n_series), NULL -> "series <i>" */
    const unsigned char *series_rgb; /* (n_series*3), NULL -> dpprof_plot_palette(i) */
    int n_marks;                     /* phase markers: dashed vertical lines, labels above
                                      the data: a phase whose stretch (to the next mark)
                                      holds its name is named there, centred, in the row
                                      nearest the data; the others staggered in rows above,
                                      beside their lines; a line without a label is drawn
                                      light. the legend goes in a band below,
                                      so the x axis keeps the width */
    const double *mark_x;            /* (n_marks) any order; outside the x range: ignored */
    const char *const *mark_names;   /* (n_marks) or NULL; NULL/"" entries draw no label;
                                      a label with no room is dropped */
    double y_max;                    /* 0 -> auto: max stacked total, rounded up to a
                                      nice tick with room for the peak label */
    int text_scale;                  /* 0 -> automatic (2 at 1600x900, 1 below ~1200x675),
                                      else 1..DPPROF_PLOT_MAX_TEXT_SCALE (e.g. 2 or 3 for
                                      paper figures at 1200x800): ticks, axis labels and
                                      legend at this integer scale of the 8x13 font; the
                                      title up to 1.5x, stepping down and then wrapping
                                      into 2 lines to fit; value annotations and category
                                      labels may go a step smaller to fit. margins, legend
                                      width and label rows follow the scale */
    double x_max;                    /* 0 -> auto: the x axis ends at the last x; else it ends
                                      here (>= the last x, > x[0]), e.g. one axis shared by
                                      the panels of a figure */
    int label_rows;                  /* rows of phase labels: 0 -> the fewest that hold as many
                                      labels as 3 rows would, and more, up to
                                      DPPROF_PLOT_MAX_LABEL_ROWS, while a phase name would
                                      otherwise have no label at all; 1..MAX -> exactly that
                                      many (panels of one figure keep one data height) */
    int no_legend;                   /* nonzero -> no legend, the data area takes its room (panels
                                      of one figure sharing one legend drawn by the caller) */
    int *label_rows_used;            /* non-NULL -> receives the rows of phase labels drawn (the
                                      most of a figure's panels: their label_rows) */
} dpprof_timeline_desc;
#define DPPROF_PLOT_MAX_LABEL_ROWS 8

/* renders the timeline into canvas. with canvas->rgb == NULL the canvas is
 * allocated (free with dpprof_canvas_free); otherwise its w, h must equal the
 * figure size. the step value of a series holds from its x to the next x;
 * each pixel column shows the event of largest stacked total inside it, so
 * short peaks are never hidden. the legend (series with any value > 0) is
 * outside the data area (see "legends" below); the peak total gets a marker and "peak <v> <unit>"
 * where unit is the text inside the last (...) of ylabel. returns 0 or
 * DPPROF_PLOT_EARG (NULL d/canvas/x/y, n_points < 1, n_series < 1, n_marks <
 * 0, NULL mark_x with n_marks > 0, text_scale outside
 * 0..DPPROF_PLOT_MAX_TEXT_SCALE, label_rows outside
 * 0..DPPROF_PLOT_MAX_LABEL_ROWS), _EVALUE
 * (nan/inf in x/y/mark_x, y < 0, y_max < 0 or nan, x_max nan or inf, or
 * nonzero and below the last x or not above x[0]), _EORDER (x[i] <
 * x[i-1]), _ESIZE, _ENOMEM. on error the canvas is left untouched (this
 * holds for every figure below). */
DPPROF_API int dpprof_plot_timeline(const dpprof_timeline_desc *d, dpprof_canvas *canvas);

/* legends (every figure) never cover data: right of the data area, top-
 * aligned with it, at most 35% of the width; when names would have to be
 * cut there, or that legend takes over 30% of the width and a band leaves
 * more data area, a band of at most 3 rows under the x label; failing both,
 * names are cut with ".." (up to 45% of the width is tried first). */

/* ---- grouped bars (e.g. peak memory per configuration) ----------------- */
typedef struct dpprof_bars_desc {
    const char *title, *xlabel, *ylabel; /* NULL -> "", "", "peak memory (MiB)"; with horizontal
                                          the value axis is still called ylabel (drawn under
                                          the bars) and xlabel names the groups (left) */
    int width, height;                   /* 0 -> the preallocated canvas' size, else 1600, 900 */
    int n_groups;                        /* categories along x, one cluster of bars each */
    const char *const *group_names;      /* (n_groups), NULL -> "<i>"; long names are
                                          wrapped or rotated to fit */
    int n_series;                        /* bars per group, one colour each */
    const char *const *series_names;     /* (n_series), NULL -> "series <i>"; legend
                                          outside the data area when n_series > 1 */
    const double *values;                /* (n_series * n_groups) series-major:
                                          values[s * n_groups + g], >= 0 (> 0 with log_y); NaN:
                                          no value (not measured, oom): no bar, labelled "n/a"
                                          or as missing_labels says */
    const unsigned char *series_rgb;     /* (n_series*3), NULL -> dpprof_plot_palette(s) */
    double y_max;                        /* 0 -> auto (room is left for the value labels) */
    int log_y;                           /* nonzero -> log10 value axis */
    int hide_values;                     /* nonzero -> no value labels at the bar ends; whole
                                          numbers print with all digits ("16384"), others
                                          with 4 significant digits. labels are drawn at the
                                          text scale only, flat where they fit, else rotated
                                          with a gap between neighbours, else not at all */
    int horizontal;                      /* nonzero -> bars grow rightwards, group 0 at the top,
                                          value labels right of the bar ends (e.g. capacity:
                                          largest batch that fits, per algorithm) */
    const unsigned char *group_rgb;      /* (n_groups*3) or NULL; with n_series == 1, bar g takes
                                          group_rgb + 3*g (e.g. dpprof_plot_algo_colour) */
    int text_scale;                      /* as in dpprof_timeline_desc */
    const char *const *missing_labels;   /* (n_series * n_groups) like values, or NULL: the label of a NaN
                                          value, e.g. "oom" (up to 15 characters); NULL entries "n/a" */
    int value_decimals;                  /* > 0: value labels with this many decimals ("0.76"), up to 6,
                                          the legend under the plot where that makes room for them;
                                          0: as hide_values says */
    const double *err_lo, *err_hi;       /* (n_series * n_groups) like values, or NULL: a whisker from
                                          err_lo to err_hi over each bar (the spread of repeats, say);
                                          NaN: none. vertical bars only; the value label goes above it */
} dpprof_bars_desc;

/* renders grouped bars; canvas rules as for dpprof_plot_timeline. returns 0 or
 * DPPROF_PLOT_EARG (NULL d/canvas/values, n_groups < 1, n_series < 1,
 * n_groups * n_series > 1e6, bad text_scale),
 * _EVALUE (nan/inf/negative value, value <= 0 with log_y, bad y_max), _ESIZE,
 * _ENOMEM. */
DPPROF_API int dpprof_plot_bars(const dpprof_bars_desc *d, dpprof_canvas *canvas);

/* ---- fixed colours per algorithm --------------------------------------- */
#define DPPROF_PLOT_ALGO_N 8
/* colour of algorithm i in 0..7 = vanilla, persample, ghost, ghost_bk, flash,
 * flash_bk, auto, spare (other i wrap around): paul tol's "bright" scheme
 * plus a dark grey for the non-private baseline, so algorithms read apart
 * for the common colour-vision deficiencies and differ from the category
 * palette used for memory categories. pass them in the rgb arrays of any
 * figure to keep an algorithm's colour across figures. 3 bytes r,g,b */
DPPROF_API const unsigned char *dpprof_plot_algo_colour(int algo_index);

/* marker shapes for lines and scatter */
#define DPPROF_PLOT_MARKER_CIRCLE 0
#define DPPROF_PLOT_MARKER_SQUARE 1
#define DPPROF_PLOT_MARKER_DIAMOND 2
#define DPPROF_PLOT_MARKER_TRIANGLE_UP 3
#define DPPROF_PLOT_MARKER_TRIANGLE_DOWN 4
#define DPPROF_PLOT_MARKER_PLUS 5
#define DPPROF_PLOT_MARKER_N 6

/* ---- heatmap (e.g. peak memory over sequence length x batch size) ------- */
typedef struct dpprof_heatmap_desc {
    const char *title, *xlabel, *ylabel; /* NULL -> "" (x names the columns, y the rows) */
    const char *value_label;             /* colour bar caption, e.g. "peak memory (GiB)"; NULL -> "" */
    int width, height;                   /* 0 -> the preallocated canvas' size, else 1600, 900 */
    int n_rows, n_cols;
    const char *const *row_names;   /* (n_rows), NULL -> "<i>"; row 0 at the top */
    const char *const *col_names;   /* (n_cols), NULL -> "<i>" */
    const double *values;           /* (n_rows * n_cols) row-major: values[r * n_cols + c];
                                          NaN = missing (hatched grey cell), else finite
                                          (> 0 with log_scale) */
    const char *const *cell_labels; /* (n_rows * n_cols) or NULL; a non-NULL entry is
                                          written instead of the number ("" writes nothing) */
    const char *missing_label;      /* text of missing cells without a cell label,
                                          NULL -> "oom" */
    double v_min, v_max;            /* colour scale range: both 0 -> the data's min..max;
                                          else v_min < v_max (both > 0 with log_scale); values
                                          outside take the end colours */
    int log_scale;                  /* nonzero -> log10 colour scale */
    int digits;                     /* significant digits of cell numbers, 0 -> 3 (whole
                                          numbers below 1e7 print all their digits) */
    int rows_up;                    /* nonzero -> row 0 at the bottom */
    int text_scale;                 /* as in dpprof_timeline_desc */
} dpprof_heatmap_desc;

/* cells in a sequential colour scale (viridis: perceptually uniform, legible
 * in grey and for colour-vision deficiencies) with a colour bar and its
 * ticks right of the matrix; every cell shows its number (or cell label) in
 * dark or white text, whichever contrasts more with the fill, all cells at
 * the largest common text scale (up to the text scale) that fits every cell
 * with a margin (no text when even scale 1 does not fit); missing cells get
 * their text on a plain patch over the hatching. returns 0 or DPPROF_PLOT_EARG (NULL d/canvas/values, n_rows or
 * n_cols < 1, n_rows * n_cols > 1e6, bad text_scale), _EVALUE (inf, value
 * <= 0 with log_scale, bad v_min/v_max, digits outside 0..15), _ESIZE,
 * _ENOMEM. */
DPPROF_API int dpprof_plot_heatmap(const dpprof_heatmap_desc *d, dpprof_canvas *canvas);

/* ---- stacked bars with an overhead panel --------------------------------- */
typedef struct dpprof_stacked_desc {
    const char *title, *xlabel, *ylabel; /* NULL -> "", "", "peak memory (MiB)" */
    int width, height;                   /* 0 -> the preallocated canvas' size, else 1600, 900 */
    int n_groups;                        /* one bar per group (e.g. per algorithm) */
    const char *const *group_names;      /* (n_groups), NULL -> "<i>" */
    int n_cats;                          /* stacked parts of a bar (e.g. memory categories) */
    const char *const *cat_names;        /* (n_cats), NULL -> "series <i>"; legend outside the
                                          data area, categories with any value > 0 */
    const unsigned char *cat_rgb;        /* (n_cats*3), NULL -> dpprof_plot_palette(k), the
                                          timeline's colours for the same categories */
    const double *values;                /* (n_cats * n_groups) category-major:
                                          values[k * n_groups + g] >= 0, category 0 at the
                                          bottom. a group with any NaN did not run or fit:
                                          no bar, missing_label on the axis instead */
    const char *missing_label;           /* NULL -> "oom" */
    double y_max;                        /* 0 -> auto (room is left for the totals) */
    int hide_totals;                     /* nonzero -> no total above each bar */
    /* overhead panel under the bars, one dot per group on the same x: the
   * group's metric over the reference group's, written "1.00x", "3.41x",
   * with a stem from the 1.00x line */
    int no_overhead;                /* nonzero -> no panel */
    int ref_group;                  /* reference group, 0..n_groups-1 (0 -> group 0) */
    const double *overhead;         /* (n_groups) metric the ratio is taken of (e.g. time
                                          per step), NaN = none for that group; NULL -> the
                                          bar totals */
    const char *overhead_label;     /* panel caption, NULL -> "<ylabel without its
                                          (unit)> relative to <ref name>" for the totals,
                                          "relative to <ref name>" with overhead */
    const unsigned char *group_rgb; /* (n_groups*3) dot colours (e.g. algo colours),
                                          NULL -> dark grey */
    int text_scale;                 /* as in dpprof_timeline_desc */
} dpprof_stacked_desc;

/* returns 0 or DPPROF_PLOT_EARG (NULL d/canvas/values, n_groups or n_cats <
 * 1, n_groups * n_cats > 1e6, ref_group out of range, bad text_scale),
 * _EVALUE (inf or negative value, bad y_max, overhead inf or < 0, with the
 * panel: reference metric NaN or <= 0), _ESIZE, _ENOMEM. */
DPPROF_API int dpprof_plot_stacked(const dpprof_stacked_desc *d, dpprof_canvas *canvas);

/* ---- scatter (e.g. memory-time trade-off) -------------------------------- */
typedef struct dpprof_scatter_desc {
    const char *title, *xlabel, *ylabel; /* NULL -> "", "time (ms)", "peak memory (MiB)" */
    int width, height;                   /* 0 -> the preallocated canvas' size, else 1600, 900 */
    int n_points;
    const double *x, *y;               /* (n_points) finite; > 0 on a log axis */
    const char *const *labels;         /* (n_points) or NULL; NULL/"" entries: no label. each
                                          label is tried at 8 spots around its point (right,
                                          left, above, below, then above/below to either
                                          side) in point order (put the important points
                                          first) and dropped when every spot would overlap
                                          another label or any point, leave the data area, or
                                          lie nearer than 1.25x its own distance to another
                                          point (it would seem to name that one). a point on
                                          top of one before it (within 1.5 marker radii) is
                                          drawn a marker's width to its right, up to three
                                          times, so that ties show */
    const unsigned char *point_rgb;    /* (n_points*3), NULL -> dpprof_plot_palette(0) */
    const int *point_marker;           /* (n_points) DPPROF_PLOT_MARKER_*, NULL -> circles */
    int log_x, log_y;                  /* nonzero -> log10 axis (decades, minor ticks) */
    double x_min, x_max, y_min, y_max; /* axis ranges; x_min = x_max = 0 -> auto (same for y):
                                          linear 8% beyond the data (not below 0 for data
                                          >= 0), log ends snapped outwards to 1-1.2-1.5-2-
                                          2.5-3-4-5-6-7-8 x 10^k; points outside are clipped */
    int n_legend;                      /* optional legend outside the data, e.g. colour =
                                          algorithm; 0 -> none */
    const char *const *legend_names;   /* (n_legend) */
    const unsigned char *legend_rgb;   /* (n_legend*3), NULL -> dpprof_plot_palette(i) */
    const int *legend_marker;          /* (n_legend) or NULL -> square swatches */
    int text_scale;                    /* as in dpprof_timeline_desc */
} dpprof_scatter_desc;

/* returns 0 or DPPROF_PLOT_EARG (NULL d/canvas/x/y, n_points < 1, n_points >
 * 1e6, n_legend < 0, NULL legend_names with n_legend > 0, marker outside
 * 0..DPPROF_PLOT_MARKER_N-1, bad text_scale), _EVALUE (nan/inf, value <= 0
 * on a log axis, bad explicit range), _ESIZE, _ENOMEM. */
DPPROF_API int dpprof_plot_scatter(const dpprof_scatter_desc *d, dpprof_canvas *canvas);

/* ---- lines (e.g. scaling curves) ---------------------------------------- */
typedef struct dpprof_lines_desc {
    const char *title, *xlabel, *ylabel; /* NULL -> "", "", "peak memory (MiB)" */
    int width, height;                   /* 0 -> the preallocated canvas' size, else 1600, 900 */
    int n_points;                        /* points per series */
    const double *x;                     /* (n_points) shared by every series, finite (> 0 with
                                          log_x); lines join the points in index order */
    int n_series;
    const double *y;                   /* (n_series * n_points) series-major:
                                          y[s * n_points + i]; NaN = no point, the line breaks */
    const unsigned char *oom;          /* (n_series * n_points) or NULL; nonzero = did not fit:
                                          a cross in the series colour at that x in a band at
                                          the top of the data area, which the y range grows
                                          to leave free (y is ignored; the line breaks) */
    const unsigned char *hollow;       /* (n_series * n_points) or NULL; nonzero = did not fit and
                                          y is its exact value all the same (e.g. the peak it
                                          would need): a hollow marker of the series' shape and
                                          colour at y, inside the y range, reached by a thinner
                                          line; a point marked oom too is a cross */
    const char *hollow_label;          /* legend entry of the hollow marker, NULL -> "does not fit" */
    const char *const *series_names;   /* (n_series), NULL -> "series <i>" */
    const unsigned char *series_rgb;   /* (n_series*3), NULL -> dpprof_plot_palette(s) */
    const int *series_marker;          /* (n_series) DPPROF_PLOT_MARKER_*, NULL -> s % 6; a
                                          curve with more points than markers fit side by
                                          side is drawn without them */
    int log_x, log_y;                  /* nonzero -> log10 axis: decade ticks (or 2x, 5x on
                                          short ranges) and minor ticks at 2..9 x 10^k */
    int x_ticks_at_data;               /* nonzero -> x ticks at the x values instead (e.g.
                                          512, 1024, ..., 65536), thinned where they crowd */
    double x_min, x_max, y_min, y_max; /* axis ranges; x_min = x_max = 0 -> auto (same for
                                          y): linear y from 0 up to a labelled tick when all
                                          y >= 0, log ends snapped outwards as in scatter;
                                          lines are clipped to the data area */
    const char *oom_label;             /* legend entry of the cross, NULL -> "oom" */
    int text_scale;                    /* as in dpprof_timeline_desc */
    double budget;                     /* > 0: a dashed horizontal line at this y (e.g. the memory
                                          limit), inside the y range, labelled budget_label */
    const char *budget_label;          /* NULL -> "budget" */
    int budget_label_free;             /* 0: the label over the line at the left (where capacity
                                          curves start low); nonzero: at whichever end, over or
                                          under the line, crosses the fewest curves */
} dpprof_lines_desc;

/* legend (series; the hollow marker, the dashes and the cross where any is drawn) outside the data.
 * series that coincide stay apart: where a curve's segment lies on an earlier series' (both ends
 * within a line width), it is dashed over it, the dashes of each such curve at their own offset
 * so that every colour shows (legend: a dashed line, "on another curve"); markers that would cover
 * one another at the same x are spread sideways, a fraction of a marker apart, around that x.
 * returns 0 or DPPROF_PLOT_EARG (NULL d/canvas/x/y, n_points or n_series <
 * 1, n_points * n_series > 1e7, marker outside 0..5, bad text_scale),
 * _EVALUE (nan/inf x, inf y, value <= 0 on a log axis, bad explicit range),
 * _ESIZE, _ENOMEM. */
DPPROF_API int dpprof_plot_lines(const dpprof_lines_desc *d, dpprof_canvas *canvas);

#ifdef __cplusplus
}
#endif
#endif /* DPPROF_TOOLS_H */

/* =============================================================================================
   implementation
   ============================================================================================= */
#ifdef DPPROF_TOOLS_IMPLEMENTATION
#ifndef DPPROF_TOOLS_IMPLEMENTATION_DONE
#define DPPROF_TOOLS_IMPLEMENTATION_DONE

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DPPROF_MALLOC /* dpprof.h's where its implementation is in this file (all or none), else the C library's */
#define DPPROF_MALLOC(sz) malloc(sz)
#define DPPROF_REALLOC(p, sz) realloc(p, sz)
#define DPPROF_FREE(p) free(p)
#endif

#ifdef DPPROF_PLOT_TRUETYPE
#include <stb/stb_truetype.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- json reader: implementation ----------------------------------------
 * design notes:
 * - no recursion: containers are parsed with an explicit frame stack of at
 *   most DPPROF_JSON_MAX_DEPTH entries, so hostile nesting cannot exhaust the
 *   c stack.
 * - finished values are pushed onto one growing value stack; when a
 *   container closes, its children (the top of that stack) are copied once
 *   into the arena as one contiguous array, so the total work is linear and
 *   dpprof_json_at is o(1). an object's children alternate key, value.
 * - a node is two words (a packed type/count and a payload union): a 100 MB
 *   array of small integers is about 50 M nodes, so node size decides the
 *   memory bill. */

#define DPPROF__JINT 7u                     /* internal type: number held as exact integer */
#define DPPROF__JMAXCNT (((size_t)-1) >> 3) /* largest count that fits next to the type bits */
#define DPPROF__JBIG ((size_t)16384)        /* allocations this big get their own block */

struct dpprof_json {
    size_t tl; /* (count << 3) | type: string bytes, array elements or object members */
    union {
        double num;
        long long i;
        const char *str;
        const struct dpprof_json *kids;
    } u;
};

typedef struct dpprof__jblock {
    struct dpprof__jblock *next;
    size_t used;
    size_t cap;
} dpprof__jblock;

struct dpprof_json_doc {
    dpprof_json root;
    dpprof__jblock *head; /* the bump block first, then full or private blocks */
    size_t next_cap;      /* size of the next bump block; grows so block count stays small */
    dpprof_json *owned;   /* the value stack, adopted as the top-level container's children */
};

typedef struct dpprof__jframe {
    size_t vstart; /* first child on the value stack */
    size_t kstart; /* first key offset on the key-offset stack (objects) */
    int obj;
} dpprof__jframe;

typedef struct dpprof__jparser {
    const unsigned char *s;
    size_t n;
    size_t pos;
    dpprof_json_doc *doc;
    dpprof_json *vals; /* finished values whose container is still open */
    size_t nvals, capvals;
    size_t *koffs; /* byte offset of each pending key, only for duplicate-key messages */
    size_t nkoffs, capkoffs;
    char *scratch; /* nul-terminated copy of long number tokens for strtod */
    size_t capscratch;
    int depth;
    dpprof__jframe frames[DPPROF_JSON_MAX_DEPTH];
    int code;      /* error code, once failed */
    int errpos;    /* whether erroff is meaningful */
    size_t erroff; /* byte offset the error is reported at */
    char msg[200];
} dpprof__jparser;

/* block header rounded up to 16 so that data placed after it keeps malloc's alignment */
static size_t dpprof__jhdr(void) {
    return (sizeof(dpprof__jblock) + 15u) & ~(size_t)15u;
}

static void *dpprof__jalloc(dpprof_json_doc *d, size_t size, size_t align) {
    dpprof__jblock *b = d->head, *nb;
    size_t hdr = dpprof__jhdr(), off, cap;
    if (b) {
        off = (b->used + (align - 1)) & ~(align - 1);
        if (off <= b->cap && size <= b->cap - off) {
            b->used = off + size;
            return (char *)b + hdr + off;
        }
    }
    if (size > (size_t)-1 - hdr)
        return NULL;
    if (size >= DPPROF__JBIG) {
        /* a private block, linked behind the bump block so that the bump
           block's free tail is not abandoned */
        nb = (dpprof__jblock *)DPPROF_MALLOC(hdr + size);
        if (!nb)
            return NULL;
        nb->used = size;
        nb->cap = size;
        if (b) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = NULL;
            d->head = nb;
        }
        return (char *)nb + hdr;
    }
    cap = d->next_cap < 4096 ? (size_t)4096 : d->next_cap;
    if (cap < size)
        cap = size;
    nb = (dpprof__jblock *)DPPROF_MALLOC(hdr + cap);
    if (!nb)
        return NULL;
    nb->next = b;
    nb->used = size;
    nb->cap = cap;
    d->head = nb;
    if (cap < ((size_t)1 << 20))
        d->next_cap = cap * 2;
    return (char *)nb + hdr;
}

/* give back the unused tail of the latest bump allocation (string buffers
   are sized for the worst case before decoding) */
static void dpprof__jtrim(dpprof_json_doc *d, const unsigned char *p, size_t oldsize, size_t newsize) {
    dpprof__jblock *b = d->head;
    if (b && b->used >= oldsize && (const unsigned char *)b + dpprof__jhdr() + (b->used - oldsize) == p)
        b->used -= oldsize - newsize;
}

static void dpprof__jseterr(dpprof__jparser *p, const char *msg) {
    size_t l = strlen(msg);
    if (l >= sizeof p->msg)
        l = sizeof p->msg - 1;
    memmove(p->msg, msg, l);
    p->msg[l] = '\0';
}

/* report a syntax error at byte offset off; p->msg must already hold the text */
static int dpprof__jat(dpprof__jparser *p, size_t off) {
    p->code = DPPROF_JSON_ESYNTAX;
    p->errpos = 1;
    p->erroff = off;
    return DPPROF_JSON_ESYNTAX;
}

static int dpprof__jfail(dpprof__jparser *p, size_t off, const char *msg) {
    dpprof__jseterr(p, msg);
    return dpprof__jat(p, off);
}

static int dpprof__jnomem(dpprof__jparser *p) {
    dpprof__jseterr(p, "out of memory");
    p->code = DPPROF_JSON_ENOMEM;
    p->errpos = 0;
    return DPPROF_JSON_ENOMEM;
}

/* how a byte is named in messages: printable ascii quoted, the rest in hex */
static void dpprof__jdesc(char *buf, size_t len, unsigned char c) {
    if (c > 0x20 && c < 0x7f)
        snprintf(buf, len, "character '%c'", (char)c);
    else
        snprintf(buf, len, "byte 0x%02X", (unsigned)c);
}

static void dpprof__jws(dpprof__jparser *p) {
    const unsigned char *s = p->s;
    size_t i = p->pos, n = p->n;
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    p->pos = i;
}

/* a finished value goes to the root at depth 0, else onto the value stack */
static int dpprof__jpush(dpprof__jparser *p, const dpprof_json *v) {
    dpprof_json *nv;
    size_t cap;
    if (p->depth == 0) {
        p->doc->root = *v;
        return 0;
    }
    if (p->nvals == p->capvals) {
        if (p->capvals > ((size_t)-1) / 2 / sizeof(dpprof_json))
            return dpprof__jnomem(p);
        cap = p->capvals ? p->capvals * 2 : 256;
        nv = (dpprof_json *)DPPROF_REALLOC(p->vals, cap * sizeof(dpprof_json));
        if (!nv)
            return dpprof__jnomem(p);
        p->vals = nv;
        p->capvals = cap;
    }
    p->vals[p->nvals++] = *v;
    return 0;
}

static int dpprof__jpushkoff(dpprof__jparser *p, size_t off) {
    size_t *nk;
    size_t cap;
    if (p->nkoffs == p->capkoffs) {
        if (p->capkoffs > ((size_t)-1) / 2 / sizeof(size_t))
            return dpprof__jnomem(p);
        cap = p->capkoffs ? p->capkoffs * 2 : 64;
        nk = (size_t *)DPPROF_REALLOC(p->koffs, cap * sizeof(size_t));
        if (!nk)
            return dpprof__jnomem(p);
        p->koffs = nk;
        p->capkoffs = cap;
    }
    p->koffs[p->nkoffs++] = off;
    return 0;
}

static int dpprof__jkeycmp(const dpprof_json *a, const dpprof_json *b) {
    size_t la = a->tl >> 3, lb = b->tl >> 3;
    int c = memcmp(a->u.str, b->u.str, la < lb ? la : lb);
    if (c)
        return c;
    return la < lb ? -1 : (la > lb ? 1 : 0);
}

/* stable bottom-up merge sort of member indices by key; a sort instead of a
   hash table because its worst case (n log n) cannot be forced by input */
static void dpprof__jsortkeys(const dpprof_json *v, size_t *a, size_t *t, size_t m) {
    size_t w, lo, mid, hi, i, j, k;
    size_t *src = a, *dst = t, *sw;
    for (w = 1; w < m; w *= 2) {
        for (lo = 0; lo < m; lo += 2 * w) {
            mid = (m - lo > w) ? lo + w : m;
            hi = (m - mid > w) ? mid + w : m;
            i = lo;
            j = mid;
            k = lo;
            while (i < mid && j < hi)
                dst[k++] = dpprof__jkeycmp(&v[2 * src[j]], &v[2 * src[i]]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        sw = src;
        src = dst;
        dst = sw;
    }
    if (src != a)
        memcpy(a, src, m * sizeof(size_t));
}

/* append key bytes to a message, escaping what a terminal should not see
   and cutting long keys at a utf-8 character boundary */
static void dpprof__jquote(char *out, size_t outlen, const dpprof_json *key) {
    const unsigned char *k = (const unsigned char *)key->u.str;
    size_t len = key->tl >> 3, lim = len > 40 ? 40 : len, i, o = 0;
    if (lim < len)
        while (lim > 0 && (k[lim] & 0xC0) == 0x80)
            lim--;
    for (i = 0; i < lim && o + 8 < outlen; i++) {
        if (k[i] < 0x20 || k[i] == 0x7f) {
            snprintf(out + o, outlen - o, "\\x%02X", (unsigned)k[i]);
            o += 4;
        } else {
            out[o++] = (char)k[i];
        }
    }
    if (lim < len && o + 4 < outlen) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* rfc 8259 only says names "should" be unique; dpprof rejects duplicates
   because a silently shadowed result field is a bug. reports the earliest
   member (in file order) that repeats an earlier key. */
static int dpprof__jdupcheck(dpprof__jparser *p, const dpprof__jframe *fr) {
    const dpprof_json *v;
    size_t m = (p->nvals - fr->vstart) / 2, i, j, best = m;
    size_t *a, *t;
    char q[96];
    if (m < 2)
        return 0;
    v = p->vals + fr->vstart;
    if (m <= 16) {
        for (j = 1; j < m && best == m; j++)
            for (i = 0; i < j; i++)
                if (dpprof__jkeycmp(&v[2 * i], &v[2 * j]) == 0) {
                    best = j;
                    break;
                }
    } else {
        if (m > ((size_t)-1) / 2 / sizeof(size_t))
            return dpprof__jnomem(p);
        a = (size_t *)DPPROF_MALLOC(2 * m * sizeof(size_t));
        if (!a)
            return dpprof__jnomem(p);
        t = a + m;
        for (i = 0; i < m; i++)
            a[i] = i;
        dpprof__jsortkeys(v, a, t, m);
        /* equal keys are adjacent and, the sort being stable, in file order;
           the smallest index that follows an equal key is the earliest repeat */
        for (i = 1; i < m; i++)
            if (a[i] < best && dpprof__jkeycmp(&v[2 * a[i - 1]], &v[2 * a[i]]) == 0)
                best = a[i];
        DPPROF_FREE(a);
    }
    if (best == m)
        return 0;
    dpprof__jquote(q, sizeof q, &v[2 * best]);
    snprintf(p->msg, sizeof p->msg, "duplicate key '%s'", q);
    return dpprof__jat(p, p->koffs[fr->kstart + best]);
}

/* close the innermost container (p->pos is at its ']' or '}') */
static int dpprof__jclose(dpprof__jparser *p) {
    dpprof__jframe *fr = &p->frames[p->depth - 1];
    size_t k = p->nvals - fr->vstart, cnt;
    dpprof_json node;
    dpprof_json *kids = NULL, *tmp;
    unsigned type;
    int rc;
    if (fr->obj) {
        rc = dpprof__jdupcheck(p, fr);
        if (rc)
            return rc;
        cnt = k / 2;
        type = DPPROF_JSON_OBJECT;
    } else {
        cnt = k;
        type = DPPROF_JSON_ARRAY;
    }
    if (cnt > DPPROF__JMAXCNT)
        return dpprof__jfail(p, p->pos, "array or object too large");
    if (k > 0) {
        if (p->depth == 1 && fr->vstart == 0) {
            /* the top-level container owns the whole value stack: adopt it
               instead of copying, which halves peak memory for one huge array */
            kids = p->vals;
            tmp = (dpprof_json *)DPPROF_REALLOC(p->vals, k * sizeof(dpprof_json));
            if (tmp)
                kids = tmp;
            p->doc->owned = kids;
            p->vals = NULL;
            p->capvals = 0;
        } else {
            if (k > ((size_t)-1) / sizeof(dpprof_json))
                return dpprof__jnomem(p);
            kids = (dpprof_json *)dpprof__jalloc(p->doc, k * sizeof(dpprof_json), 8);
            if (!kids)
                return dpprof__jnomem(p);
            memcpy(kids, p->vals + fr->vstart, k * sizeof(dpprof_json));
        }
    }
    p->nvals = fr->vstart;
    p->nkoffs = fr->kstart;
    p->depth--;
    p->pos++;
    node.tl = (cnt << 3) | type;
    node.u.kids = kids;
    return dpprof__jpush(p, &node);
}

static size_t dpprof__jenc(unsigned long cp, unsigned char *b) {
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (unsigned char)(0xF0 | (cp >> 18));
    b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* four hex digits at offset at (at <= n); esc is the backslash, where a bad
   digit is reported */
static int dpprof__jhex4(dpprof__jparser *p, size_t at, size_t esc, unsigned long *cp) {
    unsigned long v = 0;
    unsigned char c;
    unsigned d;
    size_t k;
    for (k = 0; k < 4; k++) {
        if (p->n - at <= k)
            return dpprof__jfail(p, p->n, "unexpected end of input in string");
        c = p->s[at + k];
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return dpprof__jfail(p, esc, "invalid \\u escape, expected 4 hex digits");
        v = v * 16 + d;
    }
    *cp = v;
    return 0;
}

static int dpprof__jlone(dpprof__jparser *p, size_t esc, unsigned long cp) {
    snprintf(p->msg, sizeof p->msg, "lone surrogate \\u%04lX in string", cp);
    return dpprof__jat(p, esc);
}

/* parse the string whose opening quote is at p->pos */
static int dpprof__jstring(dpprof__jparser *p, dpprof_json *out) {
    const unsigned char *s = p->s;
    size_t n = p->n, i = p->pos + 1, j = p->pos + 1, span, o = 0, len, adv;
    unsigned char *buf, c, enc[4];
    unsigned long cp, lo;
    char d[32];
    int rc;

    /* the first unescaped quote (or the end of input) bounds the string;
       decoding never writes more bytes than it reads, so its length is
       enough room */
    while (j < n && s[j] != '"')
        j += (s[j] == '\\' && n - j >= 2) ? 2 : 1;
    span = j - i;
    buf = (unsigned char *)dpprof__jalloc(p->doc, span + 1, 1);
    if (!buf)
        return dpprof__jnomem(p);
    for (;;) {
        if (i >= n)
            return dpprof__jfail(p, n, "unexpected end of input in string");
        c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '\\' && c != '"') {
            if (o >= span)
                return dpprof__jfail(p, i, "internal error: string buffer overrun");
            buf[o++] = c;
            i++;
            continue;
        }
        if (c == '"')
            break;
        if (c < 0x20) {
            snprintf(p->msg, sizeof p->msg, "unescaped control character 0x%02X in string", (unsigned)c);
            return dpprof__jat(p, i);
        }
        if (c >= 0x80) {
            len = dpprof_utf8_len((const char *)(s + i), n - i);
            if (len == (size_t)-1)
                return dpprof__jfail(p, n, "unexpected end of input in string");
            if (len == 0)
                return dpprof__jfail(p, i, "invalid UTF-8 in string");
            if (len > span - o)
                return dpprof__jfail(p, i, "internal error: string buffer overrun");
            memcpy(buf + o, s + i, len);
            o += len;
            i += len;
            continue;
        }
        /* backslash escape */
        if (n - i < 2)
            return dpprof__jfail(p, n, "unexpected end of input in string");
        c = s[i + 1];
        adv = 2;
        switch (c) {
        case '"':
        case '\\':
        case '/': cp = c; break;
        case 'b': cp = 0x08; break;
        case 'f': cp = 0x0C; break;
        case 'n': cp = 0x0A; break;
        case 'r': cp = 0x0D; break;
        case 't': cp = 0x09; break;
        case 'u':
            rc = dpprof__jhex4(p, i + 2, i, &cp);
            if (rc)
                return rc;
            adv = 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* a high surrogate must be followed by an escaped low one */
                if (n - i <= 6)
                    return dpprof__jfail(p, n, "unexpected end of input in string");
                if (s[i + 6] != '\\')
                    return dpprof__jlone(p, i, cp);
                if (n - i <= 7)
                    return dpprof__jfail(p, n, "unexpected end of input in string");
                if (s[i + 7] != 'u')
                    return dpprof__jlone(p, i, cp);
                rc = dpprof__jhex4(p, i + 8, i + 6, &lo);
                if (rc)
                    return rc;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return dpprof__jlone(p, i, cp);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                adv = 12;
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return dpprof__jlone(p, i, cp);
            }
            break;
        default:
            if (c > 0x20 && c < 0x7f) {
                snprintf(p->msg, sizeof p->msg, "invalid escape '\\%c' in string", (char)c);
            } else {
                dpprof__jdesc(d, sizeof d, c);
                snprintf(p->msg, sizeof p->msg, "invalid escape: %s after '\\' in string", d);
            }
            return dpprof__jat(p, i);
        }
        len = dpprof__jenc(cp, enc);
        if (len > span - o)
            return dpprof__jfail(p, i, "internal error: string buffer overrun");
        memcpy(buf + o, enc, len);
        o += len;
        i += adv;
    }
    if (o > DPPROF__JMAXCNT)
        return dpprof__jfail(p, p->pos, "string too long");
    buf[o] = '\0';
    dpprof__jtrim(p->doc, buf, span + 1, o + 1);
    out->tl = (o << 3) | (size_t)DPPROF_JSON_STRING;
    out->u.str = (const char *)buf;
    p->pos = i + 1;
    return 0;
}

static int dpprof__jdigit(const dpprof__jparser *p, size_t i) {
    return i < p->n && p->s[i] >= '0' && p->s[i] <= '9';
}

static int dpprof__jhas(const dpprof__jparser *p, size_t i, const char *w) {
    size_t l = strlen(w);
    return p->n - i >= l && memcmp(p->s + i, w, l) == 0;
}

/* parse the number starting at p->pos (a '-' or a digit) */
static int dpprof__jnumber(dpprof__jparser *p, dpprof_json *out) {
    const unsigned char *s = p->s;
    size_t start = p->pos, i = p->pos, ndig = 0, len;
    unsigned long long mag = 0;
    int neg = 0, isint = 1;
    char small[64], *b, *end, *nb;
    double x;

    if (s[i] == '-') {
        neg = 1;
        i++;
    }
    if (!dpprof__jdigit(p, i)) {
        if (dpprof__jhas(p, i, "Infinity"))
            return dpprof__jfail(p, start, "NaN and Infinity are not allowed");
        return dpprof__jfail(p, i, "invalid number: expected digit after '-'");
    }
    if (s[i] == '0') {
        i++;
        if (dpprof__jdigit(p, i))
            return dpprof__jfail(p, i - 1, "invalid number: leading zeros are not allowed");
    } else {
        while (dpprof__jdigit(p, i)) {
            if (ndig < 19)
                mag = mag * 10 + (unsigned)(s[i] - '0');
            ndig++;
            i++;
        }
    }
    if (i < p->n && s[i] == '.') {
        isint = 0;
        i++;
        if (!dpprof__jdigit(p, i))
            return dpprof__jfail(p, i, "invalid number: expected digit after '.'");
        while (dpprof__jdigit(p, i))
            i++;
    }
    if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
        isint = 0;
        i++;
        if (i < p->n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (!dpprof__jdigit(p, i))
            return dpprof__jfail(p, i, "invalid number: expected digit in exponent");
        while (dpprof__jdigit(p, i))
            i++;
    }
    p->pos = i;

    /* integer literals that fit in 64 bits are kept exactly (19 digits
       cannot overflow the unsigned accumulator); "-0" stays a double so
       that its sign survives */
    if (isint && ndig <= 19) {
        if (!neg && mag <= 9223372036854775807ULL) {
            out->tl = DPPROF__JINT;
            out->u.i = (long long)mag;
            return 0;
        }
        if (neg && mag != 0 && mag <= 9223372036854775808ULL) {
            out->tl = DPPROF__JINT;
            out->u.i = mag == 9223372036854775808ULL ? (-9223372036854775807LL - 1) : -(long long)mag;
            return 0;
        }
        if (neg && mag == 0) {
            out->tl = (size_t)DPPROF_JSON_NUMBER;
            out->u.num = -0.0;
            return 0;
        }
    }

    /* the token is validated json grammar, which is a subset of what strtod
       accepts, so strtod on a nul-terminated copy gives the correctly rounded
       value (glibc, musl and macos round correctly; check any other libc). strtod
       obeys LC_NUMERIC; dpprof never calls setlocale, so the "C" locale is in
       force. if a host program switches to a locale with a ',' radix, strtod
       stops early and we report an error instead of a wrong value. */
    len = i - start;
    b = small;
    if (len >= sizeof small) {
        if (len + 1 > p->capscratch) {
            nb = (char *)DPPROF_MALLOC(len + 1);
            if (!nb)
                return dpprof__jnomem(p);
            if (p->scratch)
                DPPROF_FREE(p->scratch);
            p->scratch = nb;
            p->capscratch = len + 1;
        }
        b = p->scratch;
    }
    memcpy(b, s + start, len);
    b[len] = '\0';
    x = strtod(b, &end);
    if (end != b + len)
        return dpprof__jfail(p, start, "cannot convert number (is a non-C locale active?)");
    /* overflow is an error; underflow keeps strtod's result (a subnormal,
       or zero with the literal's sign), which is the nearest double */
    if (x == HUGE_VAL || x == -HUGE_VAL)
        return dpprof__jfail(p, start, "number out of range");
    out->tl = (size_t)DPPROF_JSON_NUMBER;
    out->u.num = x;
    return 0;
}

static int dpprof__jliteral(dpprof__jparser *p, const char *w, unsigned type, dpprof_json *out) {
    size_t k, l = strlen(w);
    for (k = 0; k < l; k++) {
        if (p->n - p->pos <= k) {
            snprintf(p->msg, sizeof p->msg, "unexpected end of input in literal '%s'", w);
            return dpprof__jat(p, p->n);
        }
        if (p->s[p->pos + k] != (unsigned char)w[k]) {
            snprintf(p->msg, sizeof p->msg, "invalid literal, expected '%s'", w);
            return dpprof__jat(p, p->pos);
        }
    }
    p->pos += l;
    out->tl = type;
    out->u.num = 0.0;
    return 0;
}

/* the character at p->pos cannot start a value: say why, with hints for
   the usual non-json habits */
static int dpprof__jbadvalue(dpprof__jparser *p) {
    unsigned char c = p->s[p->pos];
    char d[32];
    if (c == '/')
        return dpprof__jfail(p, p->pos, "comments are not allowed");
    if (c == '\'')
        return dpprof__jfail(p, p->pos, "single-quoted strings are not allowed");
    if (dpprof__jhas(p, p->pos, "NaN") || dpprof__jhas(p, p->pos, "Infinity"))
        return dpprof__jfail(p, p->pos, "NaN and Infinity are not allowed");
    if (c == '+')
        return dpprof__jfail(p, p->pos, "invalid number: '+' sign is not allowed");
    if (c == '.')
        return dpprof__jfail(p, p->pos, "invalid number: expected digit before '.'");
    if (p->pos == 0 && dpprof__jhas(p, 0, "\xEF\xBB\xBF"))
        return dpprof__jfail(p, 0, "UTF-8 byte order mark is not allowed");
    dpprof__jdesc(d, sizeof d, c);
    snprintf(p->msg, sizeof p->msg, "unexpected %s, expected a value", d);
    return dpprof__jat(p, p->pos);
}

static int dpprof__jrun(dpprof__jparser *p) {
    const unsigned char *s = p->s;
    size_t n = p->n, comma, koff;
    dpprof__jframe *fr;
    dpprof_json v;
    unsigned char c;
    char d[32];
    int rc, st = 0; /* 0: a value is expected, 1: a value just ended, 2: at an object key's quote */

    dpprof__jws(p);
    if (p->pos >= n)
        return dpprof__jfail(p, n, "empty input");
    for (;;) {
        if (st == 0) {
            dpprof__jws(p);
            if (p->pos >= n)
                return dpprof__jfail(p, n, "unexpected end of input, expected a value");
            c = s[p->pos];
            switch (c) {
            case '{':
            case '[':
                if (p->depth >= DPPROF_JSON_MAX_DEPTH) {
                    snprintf(p->msg, sizeof p->msg, "nesting deeper than %d levels", DPPROF_JSON_MAX_DEPTH);
                    return dpprof__jat(p, p->pos);
                }
                fr = &p->frames[p->depth++];
                fr->vstart = p->nvals;
                fr->kstart = p->nkoffs;
                fr->obj = c == '{';
                p->pos++;
                dpprof__jws(p);
                if (p->pos < n && s[p->pos] == (c == '{' ? '}' : ']')) {
                    rc = dpprof__jclose(p);
                    if (rc)
                        return rc;
                    st = 1;
                } else if (c == '{') {
                    if (p->pos >= n)
                        return dpprof__jfail(p, n, "unexpected end of input, expected a string key or '}'");
                    if (s[p->pos] != '"')
                        return dpprof__jfail(p, p->pos, "expected a string key or '}'");
                    st = 2;
                }
                continue;
            case '"':
                rc = dpprof__jstring(p, &v);
                break;
            case 't':
                rc = dpprof__jliteral(p, "true", DPPROF_JSON_TRUE, &v);
                break;
            case 'f':
                rc = dpprof__jliteral(p, "false", DPPROF_JSON_FALSE, &v);
                break;
            case 'n':
                rc = dpprof__jliteral(p, "null", DPPROF_JSON_NULL, &v);
                break;
            default:
                if (c == '-' || (c >= '0' && c <= '9'))
                    rc = dpprof__jnumber(p, &v);
                else
                    return dpprof__jbadvalue(p);
                break;
            }
            if (rc)
                return rc;
            rc = dpprof__jpush(p, &v);
            if (rc)
                return rc;
            st = 1;
        } else if (st == 2) {
            koff = p->pos;
            rc = dpprof__jstring(p, &v);
            if (rc)
                return rc;
            rc = dpprof__jpush(p, &v);
            if (rc)
                return rc;
            rc = dpprof__jpushkoff(p, koff);
            if (rc)
                return rc;
            dpprof__jws(p);
            if (p->pos >= n)
                return dpprof__jfail(p, n, "unexpected end of input, expected ':'");
            if (s[p->pos] != ':')
                return dpprof__jfail(p, p->pos, "expected ':' after object key");
            p->pos++;
            st = 0;
        } else {
            dpprof__jws(p);
            if (p->depth == 0) {
                if (p->pos < n) {
                    dpprof__jdesc(d, sizeof d, s[p->pos]);
                    snprintf(p->msg, sizeof p->msg, "unexpected %s after the JSON value", d);
                    return dpprof__jat(p, p->pos);
                }
                return 0;
            }
            fr = &p->frames[p->depth - 1];
            if (p->pos >= n)
                return dpprof__jfail(p, n, fr->obj ? "unexpected end of input, expected ',' or '}'" : "unexpected end of input, expected ',' or ']'");
            c = s[p->pos];
            if (c == ',') {
                comma = p->pos++;
                dpprof__jws(p);
                if (fr->obj) {
                    if (p->pos >= n)
                        return dpprof__jfail(p, n, "unexpected end of input, expected a string key");
                    if (s[p->pos] == '}')
                        return dpprof__jfail(p, comma, "trailing comma before '}' is not allowed");
                    if (s[p->pos] != '"')
                        return dpprof__jfail(p, p->pos, "expected a string key after ','");
                    st = 2;
                } else {
                    if (p->pos < n && s[p->pos] == ']')
                        return dpprof__jfail(p, comma, "trailing comma before ']' is not allowed");
                    st = 0;
                }
            } else if (c == (fr->obj ? '}' : ']')) {
                rc = dpprof__jclose(p);
                if (rc)
                    return rc;
            } else {
                return dpprof__jfail(p, p->pos, fr->obj ? "expected ',' or '}' after object member" : "expected ',' or ']' after array element");
            }
        }
    }
}

/* line counts '\n'; column counts utf-8 lead bytes, i.e. characters */
static void dpprof__jlinecol(const unsigned char *s, size_t off, unsigned long long *line,
                             unsigned long long *col) {
    size_t i, ls = 0;
    unsigned long long l = 1, c = 1;
    for (i = 0; i < off; i++)
        if (s[i] == '\n') {
            l++;
            ls = i + 1;
        }
    for (i = ls; i < off; i++)
        if ((s[i] & 0xC0) != 0x80)
            c++;
    *line = l;
    *col = c;
}

DPPROF_API void dpprof_json_free(dpprof_json_doc *doc) {
    dpprof__jblock *b, *nb;
    if (!doc)
        return;
    for (b = doc->head; b; b = nb) {
        nb = b->next;
        DPPROF_FREE(b);
    }
    if (doc->owned)
        DPPROF_FREE(doc->owned);
    DPPROF_FREE(doc);
}

DPPROF_API int dpprof_json_parse(const char *text, size_t n, dpprof_json_doc **doc) {
    dpprof__jparser p;
    dpprof_json_doc *d;
    unsigned long long line, col;
    int rc;
    if (!doc || (!text && n)) {
        if (doc)
            *doc = NULL;
        return dpprof_fail(DPPROF_JSON_EINVAL, "dpprof_json_parse: %s", doc ? "NULL text of nonzero length" : "NULL document pointer");
    }
    *doc = NULL;
    d = (dpprof_json_doc *)DPPROF_MALLOC(sizeof(dpprof_json_doc));
    if (!d)
        return dpprof_fail(DPPROF_JSON_ENOMEM, "out of memory");
    memset(d, 0, sizeof *d);
    memset(&p, 0, sizeof p);
    p.s = (const unsigned char *)(text ? text : "");
    p.n = n;
    p.doc = d;
    rc = dpprof__jrun(&p);
    if (p.vals)
        DPPROF_FREE(p.vals);
    if (p.koffs)
        DPPROF_FREE(p.koffs);
    if (p.scratch)
        DPPROF_FREE(p.scratch);
    if (rc) {
        dpprof_json_free(d);
        if (p.errpos) {
            dpprof__jlinecol(p.s, p.erroff, &line, &col);
            return dpprof_fail(rc, "line %llu, column %llu: %s", line, col, p.msg);
        }
        return dpprof_fail(rc, "%s", p.msg);
    }
    *doc = d;
    return DPPROF_JSON_OK;
}

DPPROF_API int dpprof_json_parse_file(const char *path, size_t max_bytes, dpprof_json_doc **doc) {
    FILE *f;
    char *buf = NULL, *nb;
    size_t len = 0, cap = 0, limit, got, ncap;
    int rc, e;
    if (doc)
        *doc = NULL;
    if (!path || !doc)
        return dpprof_fail(DPPROF_JSON_EINVAL, "dpprof_json_parse_file: NULL %s", path ? "document pointer" : "path");
    f = fopen(path, "rb");
    if (!f) {
        e = errno;
        return dpprof_fail(DPPROF_JSON_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    /* read until eof instead of trusting ftell, so pipes and /proc files
       work; one byte past the limit tells "too large" from "exactly max" */
    limit = max_bytes < (size_t)-1 ? max_bytes + 1 : max_bytes;
    for (;;) {
        if (len == cap) {
            if (cap >= limit)
                break;
            ncap = cap ? (cap <= limit / 2 ? cap * 2 : limit) : (limit < 65536 ? limit : 65536);
            nb = (char *)DPPROF_REALLOC(buf, ncap);
            if (!nb) {
                if (buf)
                    DPPROF_FREE(buf);
                fclose(f);
                return dpprof_fail(DPPROF_JSON_ENOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                e = errno;
                if (buf)
                    DPPROF_FREE(buf);
                fclose(f);
                return dpprof_fail(DPPROF_JSON_EIO, "%s: read error: %s", path, strerror(e));
            }
            break;
        }
    }
    fclose(f);
    if (len > max_bytes) {
        if (buf)
            DPPROF_FREE(buf);
        return dpprof_fail(DPPROF_JSON_ETOOBIG, "%s: file too large (limit %llu bytes)", path, (unsigned long long)max_bytes);
    }
    rc = dpprof_json_parse(buf ? buf : "", len, doc);
    if (buf)
        DPPROF_FREE(buf);
    if (rc)
        dpprof_fail(rc, "%s: %s", path, dpprof_last_error());
    return rc;
}

DPPROF_API const dpprof_json *dpprof_json_root(const dpprof_json_doc *doc) {
    return doc ? &doc->root : NULL;
}

static unsigned dpprof__jtype(const dpprof_json *v) {
    return (unsigned)(v->tl & 7u);
}

DPPROF_API dpprof_json_type dpprof_json_kind(const dpprof_json *v) {
    unsigned t;
    if (!v)
        return DPPROF_JSON_NULL;
    t = dpprof__jtype(v);
    return t == DPPROF__JINT ? DPPROF_JSON_NUMBER : (dpprof_json_type)t;
}

static const dpprof_json *dpprof__jget(const dpprof_json *obj, const char *key, size_t len) {
    const dpprof_json *k;
    size_t i, m;
    if (!obj || !key || dpprof__jtype(obj) != DPPROF_JSON_OBJECT)
        return NULL;
    m = obj->tl >> 3;
    for (i = 0; i < m; i++) {
        k = &obj->u.kids[2 * i];
        if ((k->tl >> 3) == len && memcmp(k->u.str, key, len) == 0)
            return k + 1;
    }
    return NULL;
}

DPPROF_API const dpprof_json *dpprof_json_get(const dpprof_json *obj, const char *key) {
    return key ? dpprof__jget(obj, key, strlen(key)) : NULL;
}

DPPROF_API const dpprof_json *dpprof_json_at(const dpprof_json *arr, size_t i) {
    if (!arr || dpprof__jtype(arr) != DPPROF_JSON_ARRAY || i >= (arr->tl >> 3))
        return NULL;
    return &arr->u.kids[i];
}

DPPROF_API size_t dpprof_json_len(const dpprof_json *v) {
    if (!v || (dpprof__jtype(v) != DPPROF_JSON_ARRAY && dpprof__jtype(v) != DPPROF_JSON_OBJECT))
        return 0;
    return v->tl >> 3;
}

DPPROF_API const char *dpprof_json_key(const dpprof_json *obj, size_t i) {
    if (!obj || dpprof__jtype(obj) != DPPROF_JSON_OBJECT || i >= (obj->tl >> 3))
        return NULL;
    return obj->u.kids[2 * i].u.str;
}

DPPROF_API size_t dpprof_json_key_len(const dpprof_json *obj, size_t i) {
    if (!obj || dpprof__jtype(obj) != DPPROF_JSON_OBJECT || i >= (obj->tl >> 3))
        return 0;
    return obj->u.kids[2 * i].tl >> 3;
}

DPPROF_API const dpprof_json *dpprof_json_member(const dpprof_json *obj, size_t i) {
    if (!obj || dpprof__jtype(obj) != DPPROF_JSON_OBJECT || i >= (obj->tl >> 3))
        return NULL;
    return &obj->u.kids[2 * i + 1];
}

DPPROF_API int dpprof_json_number(const dpprof_json *v, double *out) {
    if (!v)
        return DPPROF_JSON_EMISSING;
    if (dpprof__jtype(v) == DPPROF__JINT) {
        /* int to double conversion rounds to nearest, like strtod would */
        if (out)
            *out = (double)v->u.i;
        return DPPROF_JSON_OK;
    }
    if (dpprof__jtype(v) != DPPROF_JSON_NUMBER)
        return DPPROF_JSON_ETYPE;
    if (out)
        *out = v->u.num;
    return DPPROF_JSON_OK;
}

DPPROF_API int dpprof_json_int64(const dpprof_json *v, long long *out) {
    long long r;
    double x;
    if (!v)
        return DPPROF_JSON_EMISSING;
    if (dpprof__jtype(v) == DPPROF__JINT) {
        if (out)
            *out = v->u.i;
        return DPPROF_JSON_OK;
    }
    if (dpprof__jtype(v) != DPPROF_JSON_NUMBER)
        return DPPROF_JSON_ETYPE;
    /* from 2^53 on a double may be a rounded neighbour of the literal
       (2^53 + 1 reads as 2^53), so only magnitudes below 2^53 are accepted */
    x = v->u.num;
    if (!(x > -9007199254740992.0 && x < 9007199254740992.0))
        return DPPROF_JSON_ERANGE;
    r = (long long)x;
    if ((double)r != x)
        return DPPROF_JSON_ERANGE;
    if (out)
        *out = r;
    return DPPROF_JSON_OK;
}

DPPROF_API const char *dpprof_json_string(const dpprof_json *v) {
    if (!v || dpprof__jtype(v) != DPPROF_JSON_STRING)
        return NULL;
    return v->u.str;
}

DPPROF_API size_t dpprof_json_string_len(const dpprof_json *v) {
    if (!v || dpprof__jtype(v) != DPPROF_JSON_STRING)
        return 0;
    return v->tl >> 3;
}

DPPROF_API const dpprof_json *dpprof_json_path(const dpprof_json *root, const char *path) {
    const dpprof_json *v = root;
    const char *seg = path, *dot;
    size_t len, k, idx;
    unsigned t;
    if (!root || !path)
        return NULL;
    if (!*path)
        return root;
    for (;;) {
        dot = strchr(seg, '.');
        len = dot ? (size_t)(dot - seg) : strlen(seg);
        if (len == 0)
            return NULL;
        t = dpprof__jtype(v);
        if (t == DPPROF_JSON_OBJECT) {
            v = dpprof__jget(v, seg, len);
        } else if (t == DPPROF_JSON_ARRAY) {
            if (len > 1 && seg[0] == '0')
                return NULL;
            idx = 0;
            for (k = 0; k < len; k++) {
                if (seg[k] < '0' || seg[k] > '9')
                    return NULL;
                if (idx > (((size_t)-1) - 9) / 10)
                    return NULL;
                idx = idx * 10 + (size_t)(seg[k] - '0');
            }
            v = dpprof_json_at(v, idx);
        } else {
            return NULL;
        }
        if (!v)
            return NULL;
        if (!dot)
            return v;
        seg = dot + 1;
    }
}

/* ===================================================================== */
/* plot: raster figures into an rgb byte buffer (implementation)          */
/* ===================================================================== */
/* layering, so new figure types stay small:
 *   canvas primitives (rect, line, dashes, text)
 *   -> number formatting + nice ticks (dpprof__pl_fmt_*, dpprof__pl_ax_*)
 *   -> dpprof__pl_frame: margins, axes (linear / log10 / categorical on either
 *      side), grid, tick labels, axis labels, title, with room reserved for
 *      a legend on the right (right_w) and a band above the data (top_h)
 *   -> dpprof__pl_legend: measured and drawn outside the data area
 *   -> figures (timeline, bars, heatmap, stacked, scatter, lines): validate,
 *      fill the frame, draw the data between dpprof__pl_frame_back and
 *      dpprof__pl_frame_axes.
 * a frame lays itself out in a viewport (the canvas unless set), so the
 * stacked figure's two panels are two frames given equal margins. every
 * size in a frame follows its text scale (automatic, or a desc's text_scale):
 * margins, legend, label rows; titles and y labels wrap into a second line
 * and category labels shrink one scale before anything is cut. */

/* glyphs of the built-in 8x13 font for 0x20..0x7e, one byte per row, bit 7 =
 * leftmost column. drawn from tools/font_8x13.txt by tools/gen_font.c. */
static const unsigned char dpprof__pl_font[95][13] = {
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x20 ' ' */
    {0x00, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00}, /* 0x21 '!' */
    {0x00, 0x48, 0x48, 0x48, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x22 '"' */
    {0x00, 0x44, 0x44, 0xFE, 0x44, 0x44, 0x44, 0xFE, 0x44, 0x44, 0x00, 0x00, 0x00}, /* 0x23 '#' */
    {0x10, 0x7C, 0x92, 0x90, 0x90, 0x7C, 0x12, 0x12, 0x92, 0x7C, 0x10, 0x00, 0x00}, /* 0x24 '$' */
    {0x00, 0x62, 0x92, 0x64, 0x08, 0x10, 0x20, 0x4C, 0x52, 0x8C, 0x00, 0x00, 0x00}, /* 0x25 '%' */
    {0x00, 0x60, 0x90, 0x90, 0x60, 0x62, 0x94, 0x88, 0x8C, 0x72, 0x00, 0x00, 0x00}, /* 0x26 '&' */
    {0x00, 0x10, 0x10, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x27 ''' */
    {0x08, 0x10, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x10, 0x08, 0x00, 0x00}, /* 0x28 '(' */
    {0x20, 0x10, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x10, 0x20, 0x00, 0x00}, /* 0x29 ')' */
    {0x00, 0x00, 0x00, 0x54, 0x38, 0xFE, 0x38, 0x54, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x2A '*' */
    {0x00, 0x00, 0x00, 0x00, 0x10, 0x10, 0x7C, 0x10, 0x10, 0x00, 0x00, 0x00, 0x00}, /* 0x2B '+' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x30, 0x10, 0x20, 0x00}, /* 0x2C ',' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x78, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x2D '-' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x30, 0x00, 0x00, 0x00}, /* 0x2E '.' */
    {0x00, 0x04, 0x04, 0x08, 0x08, 0x10, 0x20, 0x20, 0x40, 0x40, 0x00, 0x00, 0x00}, /* 0x2F '/' */
    {0x00, 0x78, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x30 '0' */
    {0x00, 0x10, 0x30, 0x50, 0x10, 0x10, 0x10, 0x10, 0x10, 0x7C, 0x00, 0x00, 0x00}, /* 0x31 '1' */
    {0x00, 0x78, 0x84, 0x04, 0x04, 0x08, 0x10, 0x20, 0x40, 0xFC, 0x00, 0x00, 0x00}, /* 0x32 '2' */
    {0x00, 0x78, 0x84, 0x04, 0x04, 0x38, 0x04, 0x04, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x33 '3' */
    {0x00, 0x08, 0x18, 0x28, 0x48, 0x88, 0xFC, 0x08, 0x08, 0x08, 0x00, 0x00, 0x00}, /* 0x34 '4' */
    {0x00, 0xFC, 0x80, 0x80, 0xF8, 0x04, 0x04, 0x04, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x35 '5' */
    {0x00, 0x38, 0x40, 0x80, 0x80, 0xF8, 0x84, 0x84, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x36 '6' */
    {0x00, 0xFC, 0x04, 0x04, 0x08, 0x08, 0x10, 0x10, 0x20, 0x20, 0x00, 0x00, 0x00}, /* 0x37 '7' */
    {0x00, 0x78, 0x84, 0x84, 0x84, 0x78, 0x84, 0x84, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x38 '8' */
    {0x00, 0x78, 0x84, 0x84, 0x84, 0x7C, 0x04, 0x04, 0x08, 0x70, 0x00, 0x00, 0x00}, /* 0x39 '9' */
    {0x00, 0x00, 0x00, 0x30, 0x30, 0x00, 0x00, 0x00, 0x30, 0x30, 0x00, 0x00, 0x00}, /* 0x3A ':' */
    {0x00, 0x00, 0x00, 0x30, 0x30, 0x00, 0x00, 0x00, 0x30, 0x30, 0x10, 0x20, 0x00}, /* 0x3B ';' */
    {0x00, 0x00, 0x00, 0x04, 0x08, 0x10, 0x20, 0x10, 0x08, 0x04, 0x00, 0x00, 0x00}, /* 0x3C '<' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x7C, 0x00, 0x7C, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x3D '=' */
    {0x00, 0x00, 0x00, 0x40, 0x20, 0x10, 0x08, 0x10, 0x20, 0x40, 0x00, 0x00, 0x00}, /* 0x3E '>' */
    {0x00, 0x78, 0x84, 0x04, 0x08, 0x10, 0x20, 0x20, 0x00, 0x20, 0x00, 0x00, 0x00}, /* 0x3F '?' */
    {0x00, 0x3C, 0x42, 0x9A, 0xAA, 0xAA, 0xAA, 0x9C, 0x40, 0x3C, 0x00, 0x00, 0x00}, /* 0x40 '@' */
    {0x00, 0x30, 0x48, 0x84, 0x84, 0x84, 0xFC, 0x84, 0x84, 0x84, 0x00, 0x00, 0x00}, /* 0x41 'A' */
    {0x00, 0xF8, 0x84, 0x84, 0x84, 0xF8, 0x84, 0x84, 0x84, 0xF8, 0x00, 0x00, 0x00}, /* 0x42 'B' */
    {0x00, 0x78, 0x84, 0x80, 0x80, 0x80, 0x80, 0x80, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x43 'C' */
    {0x00, 0xF0, 0x88, 0x84, 0x84, 0x84, 0x84, 0x84, 0x88, 0xF0, 0x00, 0x00, 0x00}, /* 0x44 'D' */
    {0x00, 0xFC, 0x80, 0x80, 0x80, 0xF8, 0x80, 0x80, 0x80, 0xFC, 0x00, 0x00, 0x00}, /* 0x45 'E' */
    {0x00, 0xFC, 0x80, 0x80, 0x80, 0xF8, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x00}, /* 0x46 'F' */
    {0x00, 0x78, 0x84, 0x80, 0x80, 0x9C, 0x84, 0x84, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x47 'G' */
    {0x00, 0x84, 0x84, 0x84, 0x84, 0xFC, 0x84, 0x84, 0x84, 0x84, 0x00, 0x00, 0x00}, /* 0x48 'H' */
    {0x00, 0x7C, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x7C, 0x00, 0x00, 0x00}, /* 0x49 'I' */
    {0x00, 0x1C, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x88, 0x70, 0x00, 0x00, 0x00}, /* 0x4A 'J' */
    {0x00, 0x84, 0x88, 0x90, 0xA0, 0xC0, 0xA0, 0x90, 0x88, 0x84, 0x00, 0x00, 0x00}, /* 0x4B 'K' */
    {0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xFC, 0x00, 0x00, 0x00}, /* 0x4C 'L' */
    {0x00, 0x82, 0xC6, 0xAA, 0x92, 0x82, 0x82, 0x82, 0x82, 0x82, 0x00, 0x00, 0x00}, /* 0x4D 'M' */
    {0x00, 0x84, 0xC4, 0xC4, 0xA4, 0xB4, 0x94, 0x8C, 0x8C, 0x84, 0x00, 0x00, 0x00}, /* 0x4E 'N' */
    {0x00, 0x7C, 0x82, 0x82, 0x82, 0x82, 0x82, 0x82, 0x82, 0x7C, 0x00, 0x00, 0x00}, /* 0x4F 'O' */
    {0x00, 0xF8, 0x84, 0x84, 0x84, 0xF8, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x00}, /* 0x50 'P' */
    {0x00, 0x7C, 0x82, 0x82, 0x82, 0x82, 0x82, 0x8A, 0x84, 0x7A, 0x00, 0x00, 0x00}, /* 0x51 'Q' */
    {0x00, 0xF8, 0x84, 0x84, 0x84, 0xF8, 0x90, 0x88, 0x84, 0x84, 0x00, 0x00, 0x00}, /* 0x52 'R' */
    {0x00, 0x78, 0x84, 0x80, 0x80, 0x78, 0x04, 0x04, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x53 'S' */
    {0x00, 0xFE, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x00, 0x00, 0x00}, /* 0x54 'T' */
    {0x00, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x55 'U' */
    {0x00, 0x82, 0x82, 0x82, 0x44, 0x44, 0x44, 0x28, 0x28, 0x10, 0x00, 0x00, 0x00}, /* 0x56 'V' */
    {0x00, 0x82, 0x82, 0x82, 0x82, 0x92, 0x92, 0xAA, 0xC6, 0x82, 0x00, 0x00, 0x00}, /* 0x57 'W' */
    {0x00, 0x84, 0x84, 0x48, 0x48, 0x30, 0x48, 0x48, 0x84, 0x84, 0x00, 0x00, 0x00}, /* 0x58 'X' */
    {0x00, 0x82, 0x82, 0x44, 0x28, 0x10, 0x10, 0x10, 0x10, 0x10, 0x00, 0x00, 0x00}, /* 0x59 'Y' */
    {0x00, 0xFC, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x80, 0xFC, 0x00, 0x00, 0x00}, /* 0x5A 'Z' */
    {0x38, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x38, 0x00, 0x00}, /* 0x5B '[' */
    {0x00, 0x40, 0x40, 0x20, 0x20, 0x10, 0x08, 0x08, 0x04, 0x04, 0x00, 0x00, 0x00}, /* 0x5C backslash */
    {0x38, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x38, 0x00, 0x00}, /* 0x5D ']' */
    {0x00, 0x10, 0x28, 0x44, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x5E '^' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFE, 0x00}, /* 0x5F '_' */
    {0x00, 0x20, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x60 '`' */
    {0x00, 0x00, 0x00, 0x00, 0x78, 0x04, 0x7C, 0x84, 0x84, 0x7C, 0x00, 0x00, 0x00}, /* 0x61 'a' */
    {0x00, 0x80, 0x80, 0x80, 0xF8, 0x84, 0x84, 0x84, 0x84, 0xF8, 0x00, 0x00, 0x00}, /* 0x62 'b' */
    {0x00, 0x00, 0x00, 0x00, 0x78, 0x84, 0x80, 0x80, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x63 'c' */
    {0x00, 0x04, 0x04, 0x04, 0x7C, 0x84, 0x84, 0x84, 0x84, 0x7C, 0x00, 0x00, 0x00}, /* 0x64 'd' */
    {0x00, 0x00, 0x00, 0x00, 0x78, 0x84, 0xFC, 0x80, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x65 'e' */
    {0x00, 0x1C, 0x20, 0x20, 0xF8, 0x20, 0x20, 0x20, 0x20, 0x20, 0x00, 0x00, 0x00}, /* 0x66 'f' */
    {0x00, 0x00, 0x00, 0x00, 0x7C, 0x84, 0x84, 0x84, 0x84, 0x7C, 0x04, 0x84, 0x78}, /* 0x67 'g' */
    {0x00, 0x80, 0x80, 0x80, 0xB8, 0xC4, 0x84, 0x84, 0x84, 0x84, 0x00, 0x00, 0x00}, /* 0x68 'h' */
    {0x00, 0x10, 0x00, 0x00, 0x30, 0x10, 0x10, 0x10, 0x10, 0x7C, 0x00, 0x00, 0x00}, /* 0x69 'i' */
    {0x00, 0x08, 0x00, 0x00, 0x18, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x88, 0x70}, /* 0x6A 'j' */
    {0x00, 0x80, 0x80, 0x80, 0x84, 0x88, 0x90, 0xF0, 0x88, 0x84, 0x00, 0x00, 0x00}, /* 0x6B 'k' */
    {0x00, 0x30, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x7C, 0x00, 0x00, 0x00}, /* 0x6C 'l' */
    {0x00, 0x00, 0x00, 0x00, 0xEC, 0x92, 0x92, 0x92, 0x92, 0x92, 0x00, 0x00, 0x00}, /* 0x6D 'm' */
    {0x00, 0x00, 0x00, 0x00, 0xB8, 0xC4, 0x84, 0x84, 0x84, 0x84, 0x00, 0x00, 0x00}, /* 0x6E 'n' */
    {0x00, 0x00, 0x00, 0x00, 0x78, 0x84, 0x84, 0x84, 0x84, 0x78, 0x00, 0x00, 0x00}, /* 0x6F 'o' */
    {0x00, 0x00, 0x00, 0x00, 0xF8, 0x84, 0x84, 0x84, 0x84, 0xF8, 0x80, 0x80, 0x80}, /* 0x70 'p' */
    {0x00, 0x00, 0x00, 0x00, 0x7C, 0x84, 0x84, 0x84, 0x84, 0x7C, 0x04, 0x04, 0x04}, /* 0x71 'q' */
    {0x00, 0x00, 0x00, 0x00, 0xB8, 0xC4, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x00}, /* 0x72 'r' */
    {0x00, 0x00, 0x00, 0x00, 0x7C, 0x80, 0x78, 0x04, 0x04, 0xF8, 0x00, 0x00, 0x00}, /* 0x73 's' */
    {0x00, 0x00, 0x20, 0x20, 0xF8, 0x20, 0x20, 0x20, 0x24, 0x18, 0x00, 0x00, 0x00}, /* 0x74 't' */
    {0x00, 0x00, 0x00, 0x00, 0x84, 0x84, 0x84, 0x84, 0x8C, 0x74, 0x00, 0x00, 0x00}, /* 0x75 'u' */
    {0x00, 0x00, 0x00, 0x00, 0x82, 0x82, 0x44, 0x44, 0x28, 0x10, 0x00, 0x00, 0x00}, /* 0x76 'v' */
    {0x00, 0x00, 0x00, 0x00, 0x82, 0x82, 0x92, 0x92, 0xAA, 0x44, 0x00, 0x00, 0x00}, /* 0x77 'w' */
    {0x00, 0x00, 0x00, 0x00, 0x84, 0x48, 0x30, 0x30, 0x48, 0x84, 0x00, 0x00, 0x00}, /* 0x78 'x' */
    {0x00, 0x00, 0x00, 0x00, 0x84, 0x84, 0x84, 0x84, 0x84, 0x7C, 0x04, 0x84, 0x78}, /* 0x79 'y' */
    {0x00, 0x00, 0x00, 0x00, 0xFC, 0x08, 0x10, 0x20, 0x40, 0xFC, 0x00, 0x00, 0x00}, /* 0x7A 'z' */
    {0x0C, 0x10, 0x10, 0x10, 0x10, 0x60, 0x10, 0x10, 0x10, 0x10, 0x0C, 0x00, 0x00}, /* 0x7B '{' */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x00}, /* 0x7C '|' */
    {0x60, 0x10, 0x10, 0x10, 0x10, 0x0C, 0x10, 0x10, 0x10, 0x10, 0x60, 0x00, 0x00}, /* 0x7D '}' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0x98, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* 0x7E '~' */
};

/* okabe-ito (minus black, which would hide text) then paul tol's muted
 * colours: distinguishable for the common colour-vision deficiencies, and
 * adjacent entries differ in lightness so stacked areas stay separable */
static const unsigned char dpprof__pl_palette[DPPROF_PLOT_PALETTE_N][3] = {
    {0, 114, 178},   /* blue */
    {230, 159, 0},   /* orange */
    {0, 158, 115},   /* bluish green */
    {213, 94, 0},    /* vermillion */
    {86, 180, 233},  /* sky blue */
    {204, 121, 167}, /* reddish purple */
    {240, 228, 66},  /* yellow */
    {51, 34, 136},   /* indigo */
    {153, 153, 51},  /* olive */
    {136, 34, 85},   /* wine */
    {68, 170, 153},  /* teal */
    {160, 160, 160}  /* grey */
};

static const unsigned char dpprof__pl_c_bg[3] = {255, 255, 255};
static const unsigned char dpprof__pl_c_text[3] = {25, 25, 25};
static const unsigned char dpprof__pl_c_axis[3] = {60, 60, 60};
static const unsigned char dpprof__pl_c_grid[3] = {218, 218, 218};
static const unsigned char dpprof__pl_c_grid2[3] = {238, 238, 238};
static const unsigned char dpprof__pl_c_mark[3] = {70, 70, 70};
static const unsigned char dpprof__pl_c_mark2[3] = {150, 150, 150}; /* a mark without a label: it recedes */

DPPROF_API const unsigned char *dpprof_plot_palette(int i) {
    i %= DPPROF_PLOT_PALETTE_N;
    if (i < 0) i += DPPROF_PLOT_PALETTE_N;
    return dpprof__pl_palette[i];
}

/* algorithms: a dark grey for the non-private baseline, then paul tol's
 * "bright" scheme and a dark brown. simulated protanopia, deuteranopia and
 * tritanopia (machado 2009) keep every pair >= 13 cie76 units apart, about
 * as far as okabe-ito's own worst pairs, and none equals a palette colour */
static const unsigned char dpprof__pl_algo[DPPROF_PLOT_ALGO_N][3] = {
    {64, 64, 64},    /* vanilla: dark grey */
    {238, 102, 119}, /* persample: red */
    {68, 119, 170},  /* ghost: blue */
    {102, 204, 238}, /* ghost_bk: cyan */
    {34, 136, 51},   /* flash: green */
    {204, 187, 68},  /* flash_bk: yellow */
    {170, 51, 119},  /* auto: purple */
    {102, 51, 0}     /* spare: brown */
};

DPPROF_API const unsigned char *dpprof_plot_algo_colour(int algo_index) {
    int i = algo_index % DPPROF_PLOT_ALGO_N;
    if (i < 0) i += DPPROF_PLOT_ALGO_N;
    return dpprof__pl_algo[i];
}

/* ---- small helpers --------------------------------------------------- */
static int dpprof__pl_imin(int a, int b) { return a < b ? a : b; }
static int dpprof__pl_imax(int a, int b) { return a > b ? a : b; }
static int dpprof__pl_iclamp(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
/* exponent-bits test rather than isfinite (macro in c, overload in c++) or
 * v == v (folded away under -ffast-math) */
static int dpprof__pl_finite(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return ((b >> 52) & 0x7ffu) != 0x7ffu;
}
/* products that get rounded to pixels or digits pass through a volatile so
 * that a compiler fusing multiply-add (c++ / gnu modes on fma targets) cannot
 * move a rounding tie: pixels must be byte-identical on every machine */
static double dpprof__pl_mul(double a, double b) {
    volatile double r = a * b;
    return r;
}
static int dpprof__pl_round(double v) {
    if (!(v > -1e9)) return -1000000000; /* also catches nan */
    if (v > 1e9) return 1000000000;
    v = floor(v + 0.5);
    return (int)v;
}
static int dpprof__pl_floor_i(double v) {
    if (!(v > -1e9)) return -1000000000;
    if (v > 1e9) return 1000000000;
    v = floor(v);
    return (int)v;
}

/* ---- canvas primitives ----------------------------------------------- */
DPPROF_API int dpprof_canvas_init(dpprof_canvas *c, int w, int h) {
    size_t n;
    if (!c) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_canvas_init: bad argument (!c)");
    if (w < 1 || h < 1 || w > DPPROF_PLOT_MAX_DIM || h > DPPROF_PLOT_MAX_DIM) return dpprof_fail(DPPROF_PLOT_ESIZE, "dpprof_canvas_init: bad size (w < 1 || h < 1 || w > DPPROF_PLOT_MAX_DIM || h > DPPROF_PLOT_MAX_DIM)");
    n = (size_t)w * (size_t)h * 3u;
    c->rgb = (unsigned char *)DPPROF_MALLOC(n);
    if (!c->rgb) {
        c->w = c->h = 0;
        return dpprof_fail(DPPROF_PLOT_ENOMEM, "dpprof_canvas_init: out of memory");
    }
    c->w = w;
    c->h = h;
    memset(c->rgb, 255, n);
    return DPPROF_PLOT_OK;
}

DPPROF_API void dpprof_canvas_free(dpprof_canvas *c) {
    if (!c) return;
    if (c->rgb) DPPROF_FREE(c->rgb);
    c->rgb = NULL;
    c->w = c->h = 0;
}

static int dpprof__pl_canvas_ok(const dpprof_canvas *c) { return c && c->rgb && c->w > 0 && c->h > 0; }

static void dpprof__pl_rect(dpprof_canvas *c, int x, int y, int w, int h, const unsigned char *rgb) {
    long long xa = x, ya = y, xb = (long long)x + w, yb = (long long)y + h;
    int xx, yy;
    if (w <= 0 || h <= 0) return;
    if (xa < 0) xa = 0;
    if (ya < 0) ya = 0;
    if (xb > c->w) xb = c->w;
    if (yb > c->h) yb = c->h;
    for (yy = (int)ya; yy < (int)yb; yy++) {
        unsigned char *p = c->rgb + ((size_t)yy * (size_t)c->w + (size_t)xa) * 3u;
        for (xx = (int)xa; xx < (int)xb; xx++, p += 3) {
            p[0] = rgb[0];
            p[1] = rgb[1];
            p[2] = rgb[2];
        }
    }
}

DPPROF_API void dpprof_canvas_fill(dpprof_canvas *c, const unsigned char *rgb) {
    if (!dpprof__pl_canvas_ok(c) || !rgb) return;
    dpprof__pl_rect(c, 0, 0, c->w, c->h, rgb);
}

DPPROF_API void dpprof_canvas_rect(dpprof_canvas *c, int x, int y, int w, int h, const unsigned char *rgb) {
    if (!dpprof__pl_canvas_ok(c) || !rgb) return;
    dpprof__pl_rect(c, x, y, w, h, rgb);
}

/* clips the segment to the canvas grown by the pen width first, so far-away
 * endpoints cost nothing and int arithmetic cannot overflow */
static int dpprof__pl_clip_seg(double *x0, double *y0, double *x1, double *y1, double xmin, double ymin,
                               double xmax, double ymax) {
    double t0 = 0.0, t1 = 1.0, dx = *x1 - *x0, dy = *y1 - *y0;
    double p[4], q[4];
    int i;
    p[0] = -dx;
    q[0] = *x0 - xmin;
    p[1] = dx;
    q[1] = xmax - *x0;
    p[2] = -dy;
    q[2] = *y0 - ymin;
    p[3] = dy;
    q[3] = ymax - *y0;
    for (i = 0; i < 4; i++) {
        if (p[i] == 0.0) {
            if (q[i] < 0.0) return 0;
        } else {
            double r = q[i] / p[i];
            if (p[i] < 0.0) {
                if (r > t1) return 0;
                if (r > t0) t0 = r;
            } else {
                if (r < t0) return 0;
                if (r < t1) t1 = r;
            }
        }
    }
    {
        double ax = *x0, ay = *y0;
        *x0 = ax + dpprof__pl_mul(t0, dx);
        *y0 = ay + dpprof__pl_mul(t0, dy);
        *x1 = ax + dpprof__pl_mul(t1, dx);
        *y1 = ay + dpprof__pl_mul(t1, dy);
    }
    return 1;
}

DPPROF_API void dpprof_canvas_line(dpprof_canvas *c, int x0, int y0, int x1, int y1, int width,
                                   const unsigned char *rgb) {
    double fx0 = x0, fy0 = y0, fx1 = x1, fy1 = y1;
    int dx, dy, sx, sy, err, off;
    if (!dpprof__pl_canvas_ok(c) || !rgb) return;
    if (width < 1) width = 1;
    if (width > 256) width = 256;
    off = (width - 1) / 2;
    if (!dpprof__pl_clip_seg(&fx0, &fy0, &fx1, &fy1, -width, -width, c->w + width, c->h + width)) return;
    x0 = dpprof__pl_round(fx0);
    y0 = dpprof__pl_round(fy0);
    x1 = dpprof__pl_round(fx1);
    y1 = dpprof__pl_round(fy1);
    dx = x1 > x0 ? x1 - x0 : x0 - x1;
    dy = y1 > y0 ? y0 - y1 : y1 - y0; /* negative */
    sx = x0 < x1 ? 1 : -1;
    sy = y0 < y1 ? 1 : -1;
    err = dx + dy;
    for (;;) {
        dpprof__pl_rect(c, x0 - off, y0 - off, width, width, rgb);
        if (x0 == x1 && y0 == y1) break;
        {
            int e2 = 2 * err;
            if (e2 >= dy) {
                err += dy;
                x0 += sx;
            }
            if (e2 <= dx) {
                err += dx;
                y0 += sy;
            }
        }
    }
}

static void dpprof__pl_dashes(dpprof_canvas *c, int vertical, int at, int a, int b, int width, int dash,
                              int gap, const unsigned char *rgb) {
    int lo = dpprof__pl_imin(a, b), hi = dpprof__pl_imax(a, b), p, off;
    if (width < 1) width = 1;
    if (dash < 1) dash = 1;
    if (gap < 0) gap = 0;
    off = (width - 1) / 2;
    /* start at the first period that can reach the canvas */
    if (lo < 0) lo += ((0 - lo) / (dash + gap)) * (dash + gap);
    if (hi > (vertical ? c->h : c->w)) hi = vertical ? c->h : c->w;
    for (p = lo; p <= hi; p += dash + gap) {
        int len = dpprof__pl_imin(dash, hi - p + 1);
        if (vertical)
            dpprof__pl_rect(c, at - off, p, width, len, rgb);
        else
            dpprof__pl_rect(c, p, at - off, len, width, rgb);
    }
}

DPPROF_API void dpprof_canvas_dashed_vline(dpprof_canvas *c, int x, int y0, int y1, int width, int dash,
                                           int gap, const unsigned char *rgb) {
    if (!dpprof__pl_canvas_ok(c) || !rgb) return;
    dpprof__pl_dashes(c, 1, x, y0, y1, width, dash, gap, rgb);
}

DPPROF_API void dpprof_canvas_dashed_hline(dpprof_canvas *c, int y, int x0, int x1, int width, int dash,
                                           int gap, const unsigned char *rgb) {
    if (!dpprof__pl_canvas_ok(c) || !rgb) return;
    dpprof__pl_dashes(c, 0, y, x0, x1, width, dash, gap, rgb);
}

/* ---- text --------------------------------------------------------------- */
static int dpprof__pl_tscale(int s) { return s < 1 ? 1 : (s > 64 ? 64 : s); }

/* width of n chars: the last glyph's spacing column is not counted */
static int dpprof__pl_tw(int n, int s) {
    long long w;
    if (n <= 0) return 0;
    w = ((long long)n * DPPROF_PLOT_FONT_W - 1) * s;
    return w > 1000000000 ? 1000000000 : (int)w;
}

static int dpprof__pl_slen(const char *s) {
    size_t n = s ? strlen(s) : 0;
    return n > 100000000u ? 100000000 : (int)n;
}

/* test hook: while dpprof__pl_rec_hook points at a recorder, every string
 * drawn is logged with its cell box, and every figure registers its data
 * areas, so a test can check the layout that was actually drawn (no two
 * boxes overlap, nothing leaves the canvas, nothing was cut). the library
 * never sets it; with it NULL (always, outside tests) nothing is logged. */
#define DPPROF__PL_REC_MAX 1024
typedef struct dpprof__pl_rec_box {
    int x, y, w, h; /* cell box: [x, x+w) x [y, y+h) */
    int up, sc, kind;
    char s[48];
} dpprof__pl_rec_box;
typedef struct dpprof__pl_rec {
    int n, dropped, kind; /* kind: tag the next boxes get (figure code sets it) */
    dpprof__pl_rec_box b[DPPROF__PL_REC_MAX];
    int na;
    int area[8][4]; /* data areas x0, y0, x1, y1 */
} dpprof__pl_rec;
static dpprof__pl_rec *dpprof__pl_rec_hook = NULL;
/* text kinds in the recorder */
#define DPPROF__PL_K_AXIS 0   /* tick/category labels, axis labels, title */
#define DPPROF__PL_K_LEGEND 1 /* legend entries (outside the data area) */
#define DPPROF__PL_K_DATA 2   /* annotations inside the data area */

static void dpprof__pl_rec_kind(int kind) {
    if (dpprof__pl_rec_hook) dpprof__pl_rec_hook->kind = kind;
}

static void dpprof__pl_rec_area(int x0, int y0, int x1, int y1) {
    dpprof__pl_rec *r = dpprof__pl_rec_hook;
    if (!r || r->na >= 8) return;
    r->area[r->na][0] = x0;
    r->area[r->na][1] = y0;
    r->area[r->na][2] = x1;
    r->area[r->na][3] = y1;
    r->na++;
}

/* ---- the TrueType font (dpprof_plot_font): stb_truetype's glyphs, blended into the canvas ---- */
#ifdef DPPROF_PLOT_TRUETYPE
static struct {
    int on;
    unsigned char *data; /* the file, which stb_truetype reads in place */
    stbtt_fontinfo info;
    float scale1; /* font units to pixels at text scale 1: caps 9 pixels tall, as the bitmap font's */
} dpprof__pl_ttf;

/* the next code point of s[*i..n) (utf-8; a malformed byte is '?') */
static int dpprof__pl_utf8(const char *s, int n, int *i) {
    const unsigned char *u = (const unsigned char *)s;
    int c = u[*i], k, len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2
                                     : (c >> 4) == 14    ? 3
                                     : (c >> 3) == 30    ? 4
                                                         : 0;
    if (len == 1 || len == 0 || *i + len > n) {
        (*i)++;
        return len == 1 ? c : '?';
    }
    c &= 0x3f >> (len - 1);
    for (k = 1; k < len; k++) {
        if ((u[*i + k] & 0xc0) != 0x80) {
            (*i)++;
            return '?';
        }
        c = (c << 6) | (u[*i + k] & 0x3f);
    }
    *i += len;
    return c;
}

/* one pixel of coverage a (0..255) of colour rgb over the canvas */
static void dpprof__pl_blend(dpprof_canvas *c, int x, int y, const unsigned char *rgb, int a) {
    unsigned char *p;
    int k;
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
    p = c->rgb + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    for (k = 0; k < 3; k++) p[k] = (unsigned char)((p[k] * (255 - a) + rgb[k] * a + 127) / 255);
}

/* the advance of n bytes of s at scale (font units to pixels), kerning included */
static float dpprof__pl_ttf_advance(const char *s, int n, float scale) {
    float aw = 0.0f;
    int i = 0, prev = -1, cp, adv, lsb;
    while (i < n) {
        cp = dpprof__pl_utf8(s, n, &i);
        stbtt_GetCodepointHMetrics(&dpprof__pl_ttf.info, cp, &adv, &lsb);
        aw += (float)adv * scale + (prev >= 0 ? (float)stbtt_GetCodepointKernAdvance(&dpprof__pl_ttf.info, prev, cp) * scale : 0.0f);
        prev = cp;
    }
    return aw;
}

/* n bytes of s in the cell box of wt x 13 sc pixels at (x, y) (up: rotated, wt tall), aligned in it (0 left, 1
   centre, 2 right), the baseline under the caps (row 10 sc), narrowed where wider than the box; ink outside the
   box is not drawn */
static void dpprof__pl_ttf_draw(dpprof_canvas *c, int x, int y, const char *s, int n, int sc, const unsigned char *rgb, int up, int align, int wt) {
    const stbtt_fontinfo *f = &dpprof__pl_ttf.info;
    const float scale = dpprof__pl_ttf.scale1 * (float)sc, base = 10.0f * (float)sc;
    const int ht = DPPROF_PLOT_FONT_H * sc;
    float aw = dpprof__pl_ttf_advance(s, n, scale), sq = 1.0f, pen;
    int i, prev, cp, adv, lsb;
    if (aw > (float)wt) sq = (float)wt / aw, aw = (float)wt;
    /* right-aligned: a column of the scale left free at the end, as the bitmap glyphs' spacing column leaves it */
    pen = align == 1 ? ((float)wt - aw) / 2.0f : align == 2 ? fmaxf(0.0f, (float)(wt - sc) - aw)
                                                            : 0.0f;
    for (i = 0, prev = -1; i < n;) {
        int x0, y0, x1, y1, gw, gh, r, k, ix;
        float fx;
        unsigned char *g;
        cp = dpprof__pl_utf8(s, n, &i);
        if (prev >= 0) pen += (float)stbtt_GetCodepointKernAdvance(f, prev, cp) * scale * sq;
        ix = (int)floorf(pen);
        fx = pen - (float)ix;
        stbtt_GetCodepointBitmapBoxSubpixel(f, cp, scale * sq, scale, fx, 0.0f, &x0, &y0, &x1, &y1);
        gw = x1 - x0, gh = y1 - y0;
        g = gw > 0 && gh > 0 ? (unsigned char *)DPPROF_MALLOC((size_t)gw * (size_t)gh) : NULL;
        if (g) {
            stbtt_MakeCodepointBitmapSubpixel(f, g, gw, gh, gw, scale * sq, scale, fx, 0.0f, cp);
            for (r = 0; r < gh; r++)
                for (k = 0; k < gw; k++) {
                    const int a = g[(size_t)r * (size_t)gw + (size_t)k], u = ix + x0 + k, v = (int)base + y0 + r;
                    if (!a || u < 0 || u >= wt || v < 0 || v >= ht) continue;
                    if (!up) dpprof__pl_blend(c, x + u, y + v, rgb, a);
                    else dpprof__pl_blend(c, x + v, y + wt - 1 - u, rgb, a);
                }
            DPPROF_FREE(g);
        }
        stbtt_GetCodepointHMetrics(f, cp, &adv, &lsb);
        pen += (float)adv * scale * sq;
        prev = cp;
    }
}
#endif

DPPROF_API int dpprof_plot_font(const char *ttf_path) {
#ifdef DPPROF_PLOT_TRUETYPE
    FILE *fp;
    long len;
    unsigned char *data = NULL;
    stbtt_fontinfo info;
    int x0, y0, x1, y1, off;
    if (!ttf_path) {
        DPPROF_FREE(dpprof__pl_ttf.data);
        memset(&dpprof__pl_ttf, 0, sizeof dpprof__pl_ttf);
        return 0;
    }
    fp = fopen(ttf_path, "rb");
    if (!fp) return DPPROF_PLOT_EARG;
    if (fseek(fp, 0, SEEK_END) == 0 && (len = ftell(fp)) > 0 && len < (1L << 28) && fseek(fp, 0, SEEK_SET) == 0 &&
        (data = (unsigned char *)DPPROF_MALLOC((size_t)len)) != NULL && fread(data, 1, (size_t)len, fp) != (size_t)len) {
        DPPROF_FREE(data);
        data = NULL;
    }
    fclose(fp);
    if (!data) return DPPROF_PLOT_EARG;
    off = stbtt_GetFontOffsetForIndex(data, 0);
    if (off < 0 || !stbtt_InitFont(&info, data, off) || !stbtt_GetCodepointBox(&info, 'H', &x0, &y0, &x1, &y1) || y1 <= 0) {
        DPPROF_FREE(data);
        return DPPROF_PLOT_EARG;
    }
    DPPROF_FREE(dpprof__pl_ttf.data);
    dpprof__pl_ttf.data = data;
    dpprof__pl_ttf.info = info;
    dpprof__pl_ttf.scale1 = 9.0f / (float)y1;
    dpprof__pl_ttf.on = 1;
    return 0;
#else
    return ttf_path ? DPPROF_PLOT_EARG : 0;
#endif
}

DPPROF_API int dpprof_plot_font_truetype(void) {
#ifdef DPPROF_PLOT_TRUETYPE
    return dpprof__pl_ttf.on;
#else
    return 0;
#endif
}

/* the width n bytes of s take when drawn left-aligned: the font's advances (rounded up), at most the cell box's
   dpprof__pl_tw; the bitmap font fills its box. for layouts whose text is left-aligned and ends in free space
   (a legend's names) */
static int dpprof__pl_ink_w(const char *s, int n, int sc) {
    const int wt = dpprof__pl_tw(n, sc);
#ifdef DPPROF_PLOT_TRUETYPE
    if (dpprof__pl_ttf.on && n > 0) return dpprof__pl_imin(wt, (int)ceilf(dpprof__pl_ttf_advance(s, n, dpprof__pl_ttf.scale1 * (float)sc)) + sc);
#else
    (void)s;
#endif
    return wt;
}

/* draws n bytes of s; up != 0 rotates 90 degrees counter-clockwise with
 * (x, y) the top-left of the rotated box. align: where a TrueType font's
 * narrower string sits in the cell box (0 left or bottom, 1 centre, 2 right
 * or top); the bitmap font fills its box */
static void dpprof__pl_text_n(dpprof_canvas *c, int x, int y, const char *s, int n, int sc,
                              const unsigned char *rgb, int up, int align) {
    int i, r, k, wt = dpprof__pl_tw(n, sc);
    if (dpprof__pl_rec_hook && n > 0) {
        dpprof__pl_rec *rc = dpprof__pl_rec_hook;
        if (rc->n < DPPROF__PL_REC_MAX) {
            dpprof__pl_rec_box *b = &rc->b[rc->n++];
            int m = n < (int)sizeof b->s - 1 ? n : (int)sizeof b->s - 1;
            b->x = x;
            b->y = y;
            b->w = up ? DPPROF_PLOT_FONT_H * sc : wt;
            b->h = up ? wt : DPPROF_PLOT_FONT_H * sc;
            b->up = up;
            b->sc = sc;
            b->kind = rc->kind;
            memcpy(b->s, s, (size_t)m);
            b->s[m] = 0;
        } else {
            rc->dropped++;
        }
    }
#ifdef DPPROF_PLOT_TRUETYPE
    if (dpprof__pl_ttf.on) {
        dpprof__pl_ttf_draw(c, x, y, s, n, sc, rgb, up, align, wt);
        return;
    }
#else
    (void)align;
#endif
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const unsigned char *g = dpprof__pl_font[(ch >= 32 && ch <= 126) ? ch - 32 : '?' - 32];
        long long u = (long long)i * DPPROF_PLOT_FONT_W * sc;
        if (!up && (long long)x + u > c->w) break; /* the rest is off-canvas */
        for (r = 0; r < DPPROF_PLOT_FONT_H; r++) {
            if (!g[r]) continue;
            for (k = 0; k < DPPROF_PLOT_FONT_W; k++) {
                int uu;
                if (!(g[r] & (0x80u >> k))) continue;
                uu = (int)(u + (long long)k * sc);
                if (!up)
                    dpprof__pl_rect(c, x + uu, y + r * sc, sc, sc, rgb);
                else
                    dpprof__pl_rect(c, x + r * sc, y + wt - uu - sc, sc, sc, rgb);
            }
        }
    }
}

DPPROF_API int dpprof_canvas_text_width(const char *s, int scale) {
    return dpprof__pl_tw(dpprof__pl_slen(s), dpprof__pl_tscale(scale));
}

DPPROF_API int dpprof_canvas_text_height(int scale) { return DPPROF_PLOT_FONT_H * dpprof__pl_tscale(scale); }

DPPROF_API int dpprof_canvas_text(dpprof_canvas *c, int x, int y, const char *s, int scale,
                                  const unsigned char *rgb) {
    int n = dpprof__pl_slen(s), sc = dpprof__pl_tscale(scale);
    if (!dpprof__pl_canvas_ok(c) || !rgb || !s) return 0;
    dpprof__pl_text_n(c, x, y, s, n, sc, rgb, 0, 0);
    return dpprof__pl_tw(n, sc);
}

DPPROF_API int dpprof_canvas_text_up(dpprof_canvas *c, int x, int y, const char *s, int scale,
                                     const unsigned char *rgb) {
    int n = dpprof__pl_slen(s), sc = dpprof__pl_tscale(scale);
    if (!dpprof__pl_canvas_ok(c) || !rgb || !s) return 0;
    dpprof__pl_text_n(c, x, y, s, n, sc, rgb, 1, 0);
    return dpprof__pl_tw(n, sc);
}

/* text placed by anchor: ha 0/1/2 = left/centre/right of x; va 0/1/2 =
 * cell top / cap-height centre / cell bottom at y. centring on the caps
 * (rows 1..9) rather than the cell keeps digits visually on their tick. */
static void dpprof__pl_text_at(dpprof_canvas *c, int x, int y, const char *s, int sc, int ha, int va,
                               const unsigned char *rgb) {
    int n = dpprof__pl_slen(s), w = dpprof__pl_tw(n, sc);
    if (ha == 1)
        x -= w / 2;
    else if (ha == 2)
        x -= w;
    if (va == 1)
        y -= (11 * sc) / 2;
    else if (va == 2)
        y -= DPPROF_PLOT_FONT_H * sc;
    dpprof__pl_text_n(c, x, y, s, n, sc, rgb, 0, ha);
}

/* copies s into buf, cut to at most maxc chars with a ".." tail, so long
 * user names cannot push labels off the figure */
static const char *dpprof__pl_fit(const char *s, int maxc, char *buf, int cap) {
    int n = dpprof__pl_slen(s);
    if (maxc > cap - 1) maxc = cap - 1;
    if (n <= maxc) return s;
    if (maxc < 3) maxc = 3;
    memcpy(buf, s, (size_t)(maxc - 2));
    buf[maxc - 2] = '.';
    buf[maxc - 1] = '.';
    buf[maxc] = 0;
    return buf;
}

/* series/category name or a generated one */
static const char *dpprof__pl_name(const char *const *names, int i, const char *prefix, char *buf, int cap) {
    if (names && names[i]) return names[i];
    snprintf(buf, (size_t)cap, "%s%d", prefix, i);
    return buf;
}

/* ---- numbers ------------------------------------------------------------- */
/* powers of ten as literals: exact where representable and identical on
 * every platform, unlike pow() */
static const double dpprof__pl_p10t[41] = {
    1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7,
    1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
    1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20};

static double dpprof__pl_p10(int e) { return dpprof__pl_p10t[dpprof__pl_iclamp(e, -20, 20) + 20]; }

/* floor(log10(v)) for v > 0, corrected against the table so that exact
 * powers of ten never land one decade off */
static int dpprof__pl_flog10(double v) {
    int e;
    if (!(v > 0.0)) return 0;
    e = dpprof__pl_iclamp(dpprof__pl_floor_i(log10(v)), -20, 20);
    while (e > -20 && dpprof__pl_p10(e) > v) e--;
    while (e < 20 && dpprof__pl_p10(e + 1) <= v) e++;
    return e;
}

/* fixed-point formatting done with integers: libc's %f/%g round ties
 * differently across platforms, and labels end up in hashed pngs */
static void dpprof__pl_fmt_fixed(char *buf, int cap, double v, int dec) {
    char tmp[40];
    double r;
    long long iv;
    int n = 0, i, neg;
    if (dec < 0) dec = 0;
    if (dec > 12) dec = 12;
    r = floor(dpprof__pl_mul(fabs(v), dpprof__pl_p10(dec)) + 0.5);
    if (!(r < 9e15)) r = 9e15; /* callers switch to exponents long before */
    iv = (long long)r;
    neg = v < 0.0 && iv != 0;
    do {
        tmp[n++] = (char)('0' + (int)(iv % 10));
        iv /= 10;
    } while (iv > 0 || n <= dec);
    i = 0;
    if (neg && i < cap - 1) buf[i++] = '-';
    while (n > 0 && i < cap - 1) {
        if (n == dec && i < cap - 1) buf[i++] = '.';
        if (i < cap - 1) buf[i++] = tmp[--n];
    }
    buf[i] = 0;
}

/* drops trailing zeros of a fraction ("12.50" -> "12.5", "3.0" -> "3") */
static void dpprof__pl_trim0(char *buf) {
    char *dot = strchr(buf, '.');
    size_t n;
    if (!dot) return;
    n = strlen(buf);
    while (n > 0 && buf[n - 1] == '0') buf[--n] = 0;
    if (n > 0 && buf[n - 1] == '.') buf[--n] = 0;
}

/* sig significant digits; exponent form "1.5e7" outside 1e-4 .. 1e7 */
static void dpprof__pl_fmt_sig(char *buf, int cap, double v, int sig) {
    double a = fabs(v);
    int e;
    if (!dpprof__pl_finite(v)) {
        snprintf(buf, (size_t)cap, "%s", v != v ? "nan" : (v > 0 ? "inf" : "-inf"));
        return;
    }
    if (a == 0.0) {
        snprintf(buf, (size_t)cap, "0");
        return;
    }
    e = dpprof__pl_flog10(a);
    if (e >= 7 || e < -4) {
        char m[32], out[48];
        double mant = a / dpprof__pl_p10(e);
        int k = 0, j, ae;
        dpprof__pl_fmt_fixed(m, (int)sizeof m, mant, sig - 1);
        if (m[0] == '1' && m[1] == '0') { /* 9.99.. rounded up to 10 */
            e++;
            dpprof__pl_fmt_fixed(m, (int)sizeof m, mant / 10.0, sig - 1);
        }
        dpprof__pl_trim0(m);
        /* assembled by hand: no printf in the digits of hashed output */
        if (v < 0) out[k++] = '-';
        for (j = 0; m[j] && k < 40; j++) out[k++] = m[j];
        out[k++] = 'e';
        if (e < 0) out[k++] = '-';
        ae = e < 0 ? -e : e;
        if (ae >= 10) out[k++] = (char)('0' + ae / 10);
        out[k++] = (char)('0' + ae % 10);
        out[k] = 0;
        for (j = 0; j < cap - 1 && out[j]; j++) buf[j] = out[j];
        buf[j] = 0;
        return;
    }
    dpprof__pl_fmt_fixed(buf, cap, v, dpprof__pl_imax(0, sig - 1 - e));
    dpprof__pl_trim0(buf);
}

/* ---- axes ------------------------------------------------------------------ */
#define DPPROF__PL_AX_LIN 0
#define DPPROF__PL_AX_LOG 1
#define DPPROF__PL_AX_CAT 2 /* categories 0..n-1 centred at i + 0.5 of the range 0..n */
#define DPPROF__PL_MAXT 96

typedef struct dpprof__pl_axis {
    int kind;
    double lo, hi;          /* data range (cat: 0 .. ncat) */
    double p0, p1;          /* pixel coordinates lo and hi map to */
    const char *const *cat; /* cat: labels (NULL -> index) */
    int ncat;
    int nt; /* numeric ticks */
    double t[DPPROF__PL_MAXT];
    unsigned char major[DPPROF__PL_MAXT]; /* 1: labelled + grid, 0: minor grid only */
    char lab[DPPROF__PL_MAXT][24];
    int lab_w;                              /* widest tick/category label drawn, px */
    int cmode, csc, cmaxc, cstride, clines; /* cat labels: 0 flat, 1 wrapped, 2 rotated; scale;
                                        chars per line; every n-th; rotated lines */
    int cext;                               /* extent of the labels away from the axis, px */
    const char *suffix;                     /* appended to numeric tick labels ("x"), or NULL */
    const double *fixed;                    /* numeric: tick candidates at these values (e.g. the
                                             data's x), labelled where they do not crowd */
    int nfixed;
} dpprof__pl_axis;

/* continuous pixel coordinate of v (pixel i covers [i, i+1)) */
static double dpprof__pl_ax_map(const dpprof__pl_axis *a, double v) {
    double t;
    if (a->kind == DPPROF__PL_AX_LOG) {
        double l0 = log10(a->lo), l1 = log10(a->hi);
        if (!(v > 0.0)) return a->p0;
        t = (log10(v) - l0) / (l1 - l0);
    } else {
        t = (v - a->lo) / (a->hi - a->lo);
    }
    return a->p0 + dpprof__pl_mul(t, a->p1 - a->p0);
}

/* pixel (row or column) a tick at v is drawn on */
static int dpprof__pl_ax_pix(const dpprof__pl_axis *a, double v) {
    int p = dpprof__pl_floor_i(dpprof__pl_ax_map(a, v));
    int lo = dpprof__pl_floor_i(a->p0 < a->p1 ? a->p0 : a->p1);
    int hi = dpprof__pl_floor_i(a->p0 < a->p1 ? a->p1 : a->p0) - 1;
    return dpprof__pl_iclamp(p, lo, hi);
}

/* smallest 1-2-5 step >= raw, as mantissa m and exponent e */
static void dpprof__pl_nice_ge(double raw, int *m, int *e) {
    double b;
    if (!(raw > 0.0)) raw = 1.0;
    *e = dpprof__pl_flog10(raw);
    b = dpprof__pl_p10(*e);
    if (raw <= b)
        *m = 1;
    else if (raw <= 2.0 * b)
        *m = 2;
    else if (raw <= 5.0 * b)
        *m = 5;
    else {
        *m = 1;
        *e += 1;
    }
}

static void dpprof__pl_nice_next(int *m, int *e) {
    if (*m == 1)
        *m = 2;
    else if (*m == 2)
        *m = 5;
    else {
        *m = 1;
        *e += 1;
    }
}

/* appends the axis suffix (e.g. "x" for ratios) to tick label i */
static void dpprof__pl_ax_suffix(dpprof__pl_axis *a, int i) {
    size_t n, k;
    if (!a->suffix) return;
    n = strlen(a->lab[i]);
    for (k = 0; a->suffix[k] && n < sizeof a->lab[i] - 1; k++) a->lab[i][n++] = a->suffix[k];
    a->lab[i][n] = 0;
}

static void dpprof__pl_ax_measure(dpprof__pl_axis *a, int sc) {
    int i;
    a->lab_w = 0;
    for (i = 0; i < a->nt; i++)
        if (a->major[i]) a->lab_w = dpprof__pl_imax(a->lab_w, dpprof__pl_tw(dpprof__pl_slen(a->lab[i]), sc));
}

/* linear ticks on 1-2-5 steps: at least min_px apart and, on a horizontal
 * axis, far enough apart that the labels keep a 2-char gap */
static void dpprof__pl_ax_ticks_lin(dpprof__pl_axis *a, int sc, int horizontal, int min_px) {
    double len = fabs(a->p1 - a->p0), range = a->hi - a->lo;
    int m, e, it;
    a->nt = 0;
    if (!(range > 0.0)) return;
    if (len < 1.0) len = 1.0;
    dpprof__pl_nice_ge(range * min_px / len, &m, &e);
    for (it = 0; it < 64; it++, dpprof__pl_nice_next(&m, &e)) {
        double step = m * dpprof__pl_p10(e), k0, k1, k;
        double amax = fabs(a->lo) > fabs(a->hi) ? fabs(a->lo) : fabs(a->hi);
        int expo = amax >= 1e7 || e < -4, i;
        /* enough significant digits that neighbouring labels differ */
        int sig = dpprof__pl_iclamp(dpprof__pl_flog10(amax > 0.0 ? amax : 1.0) - e + 1, 1, 15);
        k0 = ceil(a->lo / step - 1e-9);
        k1 = floor(a->hi / step + 1e-9);
        if (k1 - k0 + 1 > DPPROF__PL_MAXT) continue;
        a->nt = 0;
        for (k = k0; k <= k1; k += 1.0) {
            double v = k * step;
            if (k == 0.0) v = 0.0;
            i = a->nt++;
            a->t[i] = v;
            a->major[i] = 1;
            if (expo)
                dpprof__pl_fmt_sig(a->lab[i], 24, v, sig);
            else
                dpprof__pl_fmt_fixed(a->lab[i], 24, v, e < 0 ? -e : 0);
            dpprof__pl_ax_suffix(a, i);
        }
        dpprof__pl_ax_measure(a, sc);
        if (!horizontal || a->nt < 2) break;
        if (step / range * len >= a->lab_w + 2 * DPPROF_PLOT_FONT_W * sc) break;
    }
}

/* fills log10 ticks: decades on multiples of stride are labelled; extra 1
 * also labels 2x and 5x, extra 2 every 1..9 x 10^k; the remaining 2..9 x 10^k
 * become unlabelled minor grid lines when a decade has room. returns the
 * number of labelled ticks */
static int dpprof__pl_ax_log_fill(dpprof__pl_axis *a, int sc, int stride, int extra) {
    double len = fabs(a->p1 - a->p0);
    double ldec = len / (log10(a->hi) - log10(a->lo)); /* px per decade */
    int e0 = dpprof__pl_flog10(a->lo), e1 = dpprof__pl_flog10(a->hi), e, mm, nmaj = 0;
    int minors = ldec >= 8.0 * sc && stride == 1;
restart:
    a->nt = 0;
    nmaj = 0;
    for (e = e0; e <= e1; e++) {
        for (mm = 1; mm <= 9; mm++) {
            double v = mm * dpprof__pl_p10(e);
            int maj;
            if (v < a->lo * (1 - 1e-12) || v > a->hi * (1 + 1e-12)) continue;
            maj = (mm == 1 && ((e % stride) + stride) % stride == 0) || (extra == 1 && (mm == 2 || mm == 5)) ||
                  extra == 2;
            if (!maj && !minors) continue;
            if (a->nt >= DPPROF__PL_MAXT) {
                /* too many: minor lines go first; labelled ticks past the cap would
         * only be reached with strides the caller tries next */
                if (minors) {
                    minors = 0;
                    goto restart;
                }
                e = e1;
                break;
            }
            a->t[a->nt] = v;
            a->major[a->nt] = (unsigned char)maj;
            dpprof__pl_fmt_sig(a->lab[a->nt], 24, v, 3);
            dpprof__pl_ax_suffix(a, a->nt);
            a->nt++;
            nmaj += maj;
        }
    }
    dpprof__pl_ax_measure(a, sc);
    return nmaj;
}

/* labelled ticks far enough apart? (labels plus a 2-char gap across a
 * horizontal axis, min_px along a vertical one) */
static int dpprof__pl_ax_fits(const dpprof__pl_axis *a, int sc, int horizontal, int min_px) {
    double prev = 0.0, need = horizontal ? (double)(a->lab_w + 2 * DPPROF_PLOT_FONT_W * sc) : (double)min_px;
    int i, have = 0;
    for (i = 0; i < a->nt; i++) {
        double p;
        if (!a->major[i]) continue;
        p = dpprof__pl_ax_map(a, a->t[i]);
        if (have && fabs(p - prev) < need) return 0;
        prev = p;
        have = 1;
    }
    return 1;
}

/* keeps labels on ticks far enough from every labelled one, decades
 * first, then 2x and 5x, then the rest; returns how many are labelled */
static int dpprof__pl_ax_log_thin(dpprof__pl_axis *a, int sc, int horizontal, int min_px) {
    int tier, i, j, n = 0;
    for (i = 0; i < a->nt; i++) a->major[i] = 0;
    for (tier = 0; tier < 3; tier++)
        for (i = 0; i < a->nt; i++) {
            double v = a->t[i], p = dpprof__pl_ax_map(a, v);
            int mm = dpprof__pl_round(v / dpprof__pl_p10(dpprof__pl_flog10(v))), t, ok = 1;
            int wi = dpprof__pl_tw(dpprof__pl_slen(a->lab[i]), sc);
            t = mm == 1 ? 0 : (mm == 2 || mm == 5 ? 1 : 2);
            if (t != tier) continue;
            for (j = 0; j < a->nt && ok; j++) {
                double need;
                if (!a->major[j]) continue;
                need = horizontal ? (wi + dpprof__pl_tw(dpprof__pl_slen(a->lab[j]), sc)) / 2.0 + 2.0 * DPPROF_PLOT_FONT_W * sc
                                  : (double)min_px;
                if (fabs(p - dpprof__pl_ax_map(a, a->t[j])) < need) ok = 0;
            }
            if (ok) {
                a->major[i] = 1;
                n++;
            }
        }
    dpprof__pl_ax_measure(a, sc);
    return n;
}

static void dpprof__pl_ax_ticks_log(dpprof__pl_axis *a, int sc, int horizontal, int min_px) {
    static const int strides[6] = {1, 2, 3, 5, 10, 20};
    int nmaj = dpprof__pl_ax_log_fill(a, sc, 1, 0), i;
    if (nmaj == 2) {
        /* just two decades: 2x and 5x labelled too when they fit */
        dpprof__pl_axis b = *a;
        if (dpprof__pl_ax_log_fill(&b, sc, 1, 1) > 2 && dpprof__pl_ax_fits(&b, sc, horizontal, min_px)) {
            *a = b;
            return;
        }
    }
    if (nmaj >= 2) {
        for (i = 0; i < 6; i++) {
            dpprof__pl_ax_log_fill(a, sc, strides[i], 0);
            if (dpprof__pl_ax_fits(a, sc, horizontal, min_px)) return;
        }
        return;
    }
    /* less than two decades inside the range: every 1..9 x 10^k when they fit,
   * else 2x and 5x, then all */
    {
        dpprof__pl_axis b = *a;
        dpprof__pl_ax_log_fill(&b, sc, 1, 2);
        if (dpprof__pl_ax_log_thin(&b, sc, horizontal, min_px) >= 3) {
            *a = b;
            return;
        }
    }
    for (i = 1; i <= 2; i++) {
        nmaj = dpprof__pl_ax_log_fill(a, sc, 1, i);
        if (nmaj >= 2) {
            if (!dpprof__pl_ax_fits(a, sc, horizontal, min_px)) nmaj = dpprof__pl_ax_log_fill(a, sc, 1, i - 1);
            break;
        }
    }
    if (nmaj < 2) {
        /* nothing usable inside: label the two ends */
        a->nt = 2;
        a->t[0] = a->lo;
        a->t[1] = a->hi;
        a->major[0] = a->major[1] = 1;
        dpprof__pl_fmt_sig(a->lab[0], 24, a->lo, 3);
        dpprof__pl_fmt_sig(a->lab[1], 24, a->hi, 3);
        dpprof__pl_ax_suffix(a, 0);
        dpprof__pl_ax_suffix(a, 1);
        dpprof__pl_ax_measure(a, sc);
    }
}

/* a data value as text: whole numbers below 1e7 with all their digits
 * ("16384", not "1.638e4" or "16380"), anything else with sig significant
 * digits */
static void dpprof__pl_fmt_val(char *buf, int cap, double v, int sig) {
    if (v != v) /* a missing value (bars): said, never drawn as a number */
        snprintf(buf, (size_t)cap, "n/a");
    else if (dpprof__pl_finite(v) && fabs(v) < 1e7 && v == floor(v))
        dpprof__pl_fmt_fixed(buf, cap, v, 0);
    else
        dpprof__pl_fmt_sig(buf, cap, v, sig);
}

/* ticks at caller-given values (a->fixed, e.g. the batch sizes measured):
 * sorted, duplicates dropped; labels keep a 2-char gap (horizontal) or 2
 * lines (vertical) between them, on every k-th value for the smallest k
 * that allows it; the rest become minor grid lines */
static void dpprof__pl_ax_ticks_fixed(dpprof__pl_axis *a, int sc, int horizontal) {
    int i, j, k, n = 0;
    double prev_p = 0.0;
    int prev_w = 0, have = 0;
    double lo = a->lo - fabs(a->lo) * 1e-12, hi = a->hi + fabs(a->hi) * 1e-12;
    a->nt = 0;
    for (i = 0; i < a->nfixed; i++) {
        double v = a->fixed[i];
        if (!dpprof__pl_finite(v) || v < lo || v > hi || (a->kind == DPPROF__PL_AX_LOG && !(v > 0.0))) continue;
        j = 0;
        while (j < n && a->t[j] != v) j++;
        if (j < n) continue;
        if (n >= DPPROF__PL_MAXT) break;
        /* insertion into ascending order */
        for (j = n; j > 0 && a->t[j - 1] > v; j--) a->t[j] = a->t[j - 1];
        a->t[j] = v;
        n++;
    }
    a->nt = n;
    for (i = 0; i < n; i++) {
        dpprof__pl_fmt_val(a->lab[i], 24, a->t[i], 3);
        dpprof__pl_ax_suffix(a, i);
    }
    /* every k-th value labelled, the smallest k that leaves room (a regular
   * pattern such as 512, 2048, 8192, ...); greedy when no stride does */
    for (k = 1; k <= n; k++) {
        int fits = 1;
        have = 0;
        for (i = 0; i < n && fits; i++) {
            double p = dpprof__pl_ax_map(a, a->t[i]);
            int w = dpprof__pl_tw(dpprof__pl_slen(a->lab[i]), sc);
            if (i % k) continue;
            if (have && (horizontal ? fabs(p - prev_p) < (prev_w + w) / 2.0 + 2.0 * DPPROF_PLOT_FONT_W * sc
                                    : fabs(p - prev_p) < 2.0 * DPPROF_PLOT_FONT_H * sc))
                fits = 0;
            prev_p = p;
            prev_w = w;
            have = 1;
        }
        if (fits) break;
    }
    have = 0;
    for (i = 0; i < n; i++) {
        double p = dpprof__pl_ax_map(a, a->t[i]);
        int w = dpprof__pl_tw(dpprof__pl_slen(a->lab[i]), sc);
        if (k <= n)
            a->major[i] = i % k == 0;
        else if (!have)
            a->major[i] = 1;
        else if (horizontal)
            a->major[i] = fabs(p - prev_p) >= (prev_w + w) / 2.0 + 2.0 * DPPROF_PLOT_FONT_W * sc;
        else
            a->major[i] = fabs(p - prev_p) >= 2.0 * DPPROF_PLOT_FONT_H * sc;
        if (a->major[i]) {
            prev_p = p;
            prev_w = w;
            have = 1;
        }
    }
    dpprof__pl_ax_measure(a, sc);
}

/* greedy line breaking for category labels, preferring to break after
 * ' ', '_', '-', '/', '.', so "optimizer_states" becomes "optimizer_" +
 * "states", and not between a number and its unit ("24 GiB") where the line
 * has another break. fills up to maxl (start, length) pairs, returns the line
 * count; *hard (may be NULL) counts breaks that had to cut a word */
static int dpprof__pl_wrap(const char *s, int maxc, int *st, int *ln, int maxl, int *hard) {
    int n = dpprof__pl_slen(s), pos = 0, lines = 0;
    if (hard) *hard = 0;
    if (maxc < 1) maxc = 1;
    while (pos < n && s[pos] == ' ') pos++;
    while (pos < n) {
        int take = n - pos, k, len;
        if (take > maxc) {
            /* pass 0: a space right after a full line is a free break, else the last separator of the line; a
               space after a digit (a number and its unit) only where pass 0 finds no other break, in pass 1 */
            int found = 0, pass;
            take = maxc;
            for (pass = 0; pass < 2 && !found; pass++) {
                found = s[pos + maxc] == ' ' && (pass || !isdigit((unsigned char)s[pos + maxc - 1]));
                for (k = pos + maxc - 1; k > pos && !found; k--)
                    if (strchr(" _-/.,:", s[k]) && (pass || s[k] != ' ' || !isdigit((unsigned char)s[k - 1]))) {
                        take = k - pos + 1;
                        found = 1;
                    }
            }
            if (!found && hard) (*hard)++;
        }
        len = take;
        while (len > 0 && s[pos + len - 1] == ' ') len--;
        if (lines < maxl) {
            st[lines] = pos;
            ln[lines] = len;
        }
        lines++;
        pos += take;
        while (pos < n && s[pos] == ' ') pos++;
    }
    return lines;
}

#define DPPROF__PL_WRAP_MAX 3

/* category labels under a horizontal axis: flat when they fit their slot,
 * else wrapped into up to three lines, else rotated to read upwards
 * (smaller and/or only every n-th one when slots are very narrow), cut at
 * 30% of the figure height */
/* most lines any category label wraps into at maxc chars per line, or 0 if
 * one needs more than maxl lines or (unless allow_cut) cuts a word */
static int dpprof__pl_wrap_all(const dpprof__pl_axis *a, int maxc, int maxl, int allow_cut) {
    int i, most = 0, st[DPPROF__PL_WRAP_MAX], ln[DPPROF__PL_WRAP_MAX];
    char nb[32];
    for (i = 0; i < a->ncat; i++) {
        int hard, k = dpprof__pl_wrap(dpprof__pl_name(a->cat, i, "", nb, (int)sizeof nb), maxc, st, ln,
                                      DPPROF__PL_WRAP_MAX, &hard);
        if (k > maxl || (hard && !allow_cut)) return 0;
        most = dpprof__pl_imax(most, k);
    }
    return most;
}

static void dpprof__pl_ax_cat_x(dpprof__pl_axis *a, int sc, int fig_h) {
    double slot = fabs(a->p1 - a->p0) / (a->ncat > 0 ? a->ncat : 1);
    int cw = DPPROF_PLOT_FONT_W * sc, i, maxn = 0, inkw = 0, lines;
    char nb[32];
    for (i = 0; i < a->ncat; i++) {
        const char *t = dpprof__pl_name(a->cat, i, "", nb, (int)sizeof nb);
        maxn = dpprof__pl_imax(maxn, dpprof__pl_slen(t));
        inkw = dpprof__pl_imax(inkw, dpprof__pl_ink_w(t, dpprof__pl_slen(t), sc));
    }
    a->csc = sc;
    a->clines = 1;
    a->cstride = 1;
    a->cmaxc = maxn;
    /* flat where each label's ink fits its slot (centred there: a proportional font's narrower strings) */
    if (inkw <= slot - cw) {
        a->cmode = 0;
        a->cext = DPPROF_PLOT_FONT_H * sc;
        a->lab_w = dpprof__pl_tw(maxn, sc);
        return;
    }
    {
        /* flat, wrapped at separators only: a word cut across lines reads worse
     * than rotated text */
        int maxc = (int)((slot - cw + sc) / cw);
        if (maxc >= 5 && (lines = dpprof__pl_wrap_all(a, maxc, DPPROF__PL_WRAP_MAX, 0)) > 0) {
            a->cmode = 1;
            a->cmaxc = maxc;
            a->cext = lines * DPPROF_PLOT_FONT_H * sc;
            a->lab_w = dpprof__pl_tw(maxc, sc);
            return;
        }
    }
    a->cmode = 2;
    while (a->csc > 1 && slot < (DPPROF_PLOT_FONT_H + 2) * a->csc) a->csc--;
    while (slot * a->cstride < (DPPROF_PLOT_FONT_H + 2) * a->csc) a->cstride++;
    for (;;) {
        /* rotated lines stand side by side, so a wide slot takes 2-3 of them.
     * the shortest line length that fits every label keeps the band low;
     * breaks at separators are preferred over any saving from cut words.
     * labels that would still be cut try one scale smaller (not below the
     * text scale - 1) before they are */
        int cap = dpprof__pl_imax(4, (fig_h * 3 / 10) / (DPPROF_PLOT_FONT_W * a->csc)), mc = 0, pass, found = 0;
        a->clines = dpprof__pl_iclamp((int)((slot * a->cstride - 2 * a->csc) / (DPPROF_PLOT_FONT_H * a->csc)), 1,
                                      DPPROF__PL_WRAP_MAX);
        for (pass = 0; pass < 2 && !found; pass++)
            for (mc = dpprof__pl_imax(4, (maxn + a->clines - 1) / a->clines); mc <= cap && !found; mc++)
                if (dpprof__pl_wrap_all(a, mc, a->clines, pass)) {
                    found = 1;
                    break;
                }
        a->cmaxc = dpprof__pl_imin(maxn, found ? mc : cap);
        if (found || a->csc <= dpprof__pl_imax(1, sc - 1)) break;
        a->csc--;
        a->cstride = 1;
        while (slot * a->cstride < (DPPROF_PLOT_FONT_H + 2) * a->csc) a->cstride++;
    }
    a->cext = dpprof__pl_tw(a->cmaxc, a->csc);
    a->lab_w = DPPROF_PLOT_FONT_H * a->csc * a->clines;
}

/* category labels left of a vertical axis (heatmap rows): flat, cut to 30%
 * of the figure width, every n-th one when rows are thinner than the text */
static void dpprof__pl_ax_cat_y(dpprof__pl_axis *a, int sc, int fig_w) {
    double slot = fabs(a->p1 - a->p0) / (a->ncat > 0 ? a->ncat : 1);
    int i, maxn = 0;
    char nb[32];
    for (i = 0; i < a->ncat; i++)
        maxn = dpprof__pl_imax(maxn, dpprof__pl_slen(dpprof__pl_name(a->cat, i, "", nb, (int)sizeof nb)));
    a->cmode = 0;
    a->csc = sc;
    a->cstride = 1;
    while (slot * a->cstride < (DPPROF_PLOT_FONT_H - 2) * sc) a->cstride++;
    a->cmaxc = dpprof__pl_imin(maxn, dpprof__pl_imax(4, (fig_w * 3 / 10) / (DPPROF_PLOT_FONT_W * sc)));
    a->clines = 1;
    if (maxn > a->cmaxc && a->cstride == 1) {
        /* too long for one line: rows tall enough for 2-3 lines wrap instead
     * (at separators if possible), in the narrowest width that fits */
        int lines = dpprof__pl_imin(DPPROF__PL_WRAP_MAX, (int)(slot / (DPPROF_PLOT_FONT_H * sc)));
        int mc, pass, found = 0;
        for (pass = 0; pass < 2 && lines >= 2 && !found; pass++)
            for (mc = dpprof__pl_imax(4, (maxn + lines - 1) / lines); mc <= a->cmaxc; mc++)
                if (dpprof__pl_wrap_all(a, mc, lines, pass)) {
                    found = 1;
                    a->cmaxc = mc;
                    a->clines = lines;
                    break;
                }
    }
    a->lab_w = dpprof__pl_tw(a->cmaxc, sc);
    a->cext = a->lab_w;
}

/* ---- frame: data area, axes, labels, title ------------------------------- */
typedef struct dpprof__pl_frame {
    dpprof_canvas *c;
    int ts, tts, tts0; /* text scale (ticks, labels, legend), title scale (and its ideal) */
    const char *title, *xlabel, *ylabel;
    dpprof__pl_axis xa, ya;  /* kinds and ranges set by the figure */
    int ox, oy, vw, vh;      /* viewport the frame lays itself out in (default: the canvas) */
    int right_w;             /* reserved right of the data area (legend + gap) */
    int top_h;               /* reserved band right above the data area */
    int bot_h;               /* reserved band at the bottom, below the x label (legend) */
    int min_left, min_right; /* margins at least this wide (to align stacked panels) */
    int hide_x;              /* no x tick labels, ticks or x label (a panel above another) */
    int minor_ticks;         /* short tick marks at the unlabelled ticks of numeric axes */
    int grid_x, grid_y;      /* grid lines at numeric ticks */
    int leg_below;           /* the legend sits in bot_h (else right of the data area) */
    int leg_band;            /* prefer the band below where it fits (a timeline: the x axis needs the width) */
    int tlines, ylines;      /* lines the title and the y label take (1, or 2 when wrapped) */
    int leg_max_h;           /* a legend right of the data may be this tall (0: the data height) */
    int ylab_y0, ylab_y1;    /* rows the y label may use when longer than the data height
                             (0, 0: the data height only) */
    int x0, y0, x1, y1;      /* data area [x0, x1) x [y0, y1) */
} dpprof__pl_frame;

static void dpprof__pl_frame_init(dpprof__pl_frame *f, dpprof_canvas *c, const char *title,
                                  const char *xlabel, const char *ylabel) {
    memset(f, 0, sizeof *f);
    f->c = c;
    f->vw = c->w;
    f->vh = c->h;
    /* text scales with the figure: 2 at 1600x900 (readable at column width),
   * 1 below ~1200x675, larger for poster sizes */
    f->ts = dpprof__pl_iclamp(dpprof__pl_imin((c->w + 400) / 800, (c->h + 225) / 450), 1, 8);
    f->tts0 = f->tts = dpprof__pl_imax(f->ts + 1, f->ts * 3 / 2);
    f->title = title ? title : "";
    f->xlabel = xlabel ? xlabel : "";
    f->ylabel = ylabel ? ylabel : "";
    f->grid_x = f->grid_y = 1;
}

/* a desc's text_scale: 0 keeps the automatic scale, else it is used as is
 * (validated 0..DPPROF_PLOT_MAX_TEXT_SCALE by the figure) */
static void dpprof__pl_frame_scale(dpprof__pl_frame *f, int text_scale) {
    if (text_scale <= 0) return;
    f->ts = dpprof__pl_iclamp(text_scale, 1, DPPROF_PLOT_MAX_TEXT_SCALE);
    f->tts0 = f->tts = dpprof__pl_imax(f->ts + 1, f->ts * 3 / 2);
}

/* labelled ticks at least 3 lines apart on a vertical axis, 2 on a short
 * one (under 6 lines) so that it still gets two labels */
static int dpprof__pl_vtick_px(double len, int s) {
    int ch = DPPROF_PLOT_FONT_H * s;
    return len >= 6.0 * ch ? 3 * ch : 2 * ch;
}

static void dpprof__pl_frame_ticks(dpprof__pl_frame *f, dpprof__pl_axis *a, int horizontal) {
    int s = f->ts, ch = DPPROF_PLOT_FONT_H * s;
    int min_px = horizontal ? 10 * DPPROF_PLOT_FONT_W * s : dpprof__pl_vtick_px(fabs(a->p1 - a->p0), s);
    if (a->kind == DPPROF__PL_AX_CAT) {
        if (horizontal)
            dpprof__pl_ax_cat_x(a, s, f->c->h); /* 30% of the figure, also in a panel */
        else
            dpprof__pl_ax_cat_y(a, s, f->c->w);
        return;
    }
    if (a->fixed && a->nfixed > 0)
        dpprof__pl_ax_ticks_fixed(a, s, horizontal);
    else if (a->kind == DPPROF__PL_AX_LOG)
        dpprof__pl_ax_ticks_log(a, s, horizontal, min_px);
    else
        dpprof__pl_ax_ticks_lin(a, s, horizontal, min_px);
    if (horizontal && a->kind == DPPROF__PL_AX_LIN && !a->fixed && a->nt < 3) {
        /* a short axis: ticks closer than 10 chars (still 2 chars between
     * labels) rather than fewer than three */
        dpprof__pl_axis b = *a;
        dpprof__pl_ax_ticks_lin(&b, s, 1, 5 * DPPROF_PLOT_FONT_W * s);
        if (b.nt > a->nt) *a = b;
    }
    a->cext = horizontal ? ch : a->lab_w;
}

/* a title wider than w wraps into two lines (at spaces or separators when
 * possible); returns the lines, fills their starts and lengths */
static int dpprof__pl_title_lines(const dpprof__pl_frame *f, int w, int *st, int *ln) {
    int maxc = dpprof__pl_imax(4, (w + f->tts) / (DPPROF_PLOT_FONT_W * f->tts)), s2[DPPROF__PL_WRAP_MAX],
        l2[DPPROF__PL_WRAP_MAX], n;
    if (dpprof__pl_slen(f->title) <= maxc) {
        if (st) st[0] = 0, ln[0] = dpprof__pl_slen(f->title);
        return 1;
    }
    n = dpprof__pl_wrap(f->title, maxc, s2, l2, DPPROF__PL_WRAP_MAX, NULL);
    if (st) {
        st[0] = s2[0];
        ln[0] = l2[0];
        st[1] = s2[1];
        ln[1] = dpprof__pl_slen(f->title + s2[1]); /* the rest; cut to maxc when drawn */
    }
    return n >= 2 ? 2 : 1;
}

/* rows available to the y label */
static int dpprof__pl_ylab_room(const dpprof__pl_frame *f) {
    return dpprof__pl_imax(f->y1 - f->y0, f->ylab_y1 - f->ylab_y0);
}

/* top row of a rotated y label tw px long: centred on the data, shifted to
 * stay inside the allowed rows */
static int dpprof__pl_ylab_top(const dpprof__pl_frame *f, int tw) {
    int y = f->y0 + (f->y1 - f->y0 - tw) / 2;
    if (f->ylab_y1 > f->ylab_y0 && tw > f->y1 - f->y0)
        y = dpprof__pl_iclamp(y, f->ylab_y0, dpprof__pl_imax(f->ylab_y0, f->ylab_y1 - tw));
    return y;
}

/* a y label longer than the data height h wraps into two rotated lines when
 * that fits without cutting a word; returns the lines */
static int dpprof__pl_ylabel_lines(const dpprof__pl_frame *f, int h, int *st, int *ln) {
    int maxc = (h + f->ts) / (DPPROF_PLOT_FONT_W * f->ts), s2[DPPROF__PL_WRAP_MAX], l2[DPPROF__PL_WRAP_MAX], n, hard;
    if (!f->ylabel[0] || dpprof__pl_slen(f->ylabel) <= maxc || maxc < 4) return 1;
    n = dpprof__pl_wrap(f->ylabel, maxc, s2, l2, DPPROF__PL_WRAP_MAX, &hard);
    if (n != 2 || hard) return 1;
    if (st) {
        st[0] = s2[0];
        ln[0] = l2[0];
        st[1] = s2[1];
        ln[1] = l2[1];
    }
    return 2;
}

/* margins follow from what goes into them; the y tick labels depend on the
 * data-area height and the x labels (category wrapping) on its width, so
 * iterate until the extents settle */
static void dpprof__pl_frame_layout(dpprof__pl_frame *f) {
    int s = f->ts, ch = DPPROF_PLOT_FONT_H * s, W = f->vw, H = f->vh;
    int pad = 6 * s, tick = 4 * s, lgap = 3 * s;
    int top, bottom, left, right, it, xext = f->hide_x ? 0 : ch, xhalf = 0;
    /* a title too wide for its ideal scale steps down to the text scale
   * before it would be cut */
    f->tts = f->tts0;
    while (f->tts > f->ts && dpprof__pl_tw(dpprof__pl_slen(f->title), f->tts) > W - 2 * pad) f->tts--;
    f->tlines = dpprof__pl_title_lines(f, W - 2 * pad, NULL, NULL);
    top = pad + (f->title[0] ? DPPROF_PLOT_FONT_H * f->tts * f->tlines + 4 * s : 0) + dpprof__pl_imax(f->top_h, ch / 2 + s);
    for (it = 0; it < 12; it++) {
        int xext_used = xext, right_want;
        if (f->hide_x)
            bottom = pad + lgap + tick + s;
        else
            bottom = pad + (f->xlabel[0] ? ch + 3 * s : 0) + xext + lgap + tick + s;
        bottom += f->bot_h;
        f->y0 = f->oy + top;
        f->y1 = f->oy + dpprof__pl_imax(H - bottom, top + 16);
        if (f->ya.kind == DPPROF__PL_AX_CAT) {
            f->ya.p0 = f->y0;
            f->ya.p1 = f->y1;
        } else {
            f->ya.p0 = f->y1;
            f->ya.p1 = f->y0;
        }
        dpprof__pl_frame_ticks(f, &f->ya, 0);
        f->ylines = dpprof__pl_ylabel_lines(f, dpprof__pl_ylab_room(f), NULL, NULL);
        left = pad + (f->ylabel[0] ? f->ylines * ch + 3 * s : 0) + f->ya.lab_w + lgap + tick + s;
        left = dpprof__pl_imax(left, f->min_left);
        right = dpprof__pl_imax(dpprof__pl_imax(f->right_w + pad, xhalf + pad), f->min_right);
        f->x0 = f->ox + left;
        f->x1 = f->ox + dpprof__pl_imax(W - right, left + 16);
        f->xa.p0 = f->x0;
        f->xa.p1 = f->x1;
        dpprof__pl_frame_ticks(f, &f->xa, 1);
        xext = f->hide_x ? 0 : f->xa.cext;
        xhalf = (f->xa.kind == DPPROF__PL_AX_CAT || f->hide_x) ? 0 : f->xa.lab_w / 2;
        if (it >= 3) { /* only grow from here on, so an oscillation must stop */
            xext = dpprof__pl_imax(xext, xext_used);
            xhalf = dpprof__pl_imax(xhalf, right - pad);
        }
        right_want = dpprof__pl_imax(dpprof__pl_imax(f->right_w + pad, xhalf + pad), f->min_right);
        /* a fixed point: the next pass would start from the same margins */
        if (xext == xext_used && right == right_want) break;
    }
}

/* margins of the last layout, for aligning panels */
static int dpprof__pl_frame_left(const dpprof__pl_frame *f) { return f->x0 - f->ox; }
static int dpprof__pl_frame_right(const dpprof__pl_frame *f) { return f->ox + f->vw - f->x1; }

static void dpprof__pl_frame_back(dpprof__pl_frame *f) {
    int i, gw = dpprof__pl_imax(1, f->ts / 2);
    dpprof_canvas *c = f->c;
    dpprof__pl_rect(c, f->ox, f->oy, f->vw, f->vh, dpprof__pl_c_bg);
    /* minor lines first so major ones win where they meet */
    if (f->grid_y && f->ya.kind != DPPROF__PL_AX_CAT) {
        for (i = 0; i < f->ya.nt; i++)
            if (!f->ya.major[i])
                dpprof__pl_rect(c, f->x0, dpprof__pl_ax_pix(&f->ya, f->ya.t[i]), f->x1 - f->x0, gw,
                                dpprof__pl_c_grid2);
        for (i = 0; i < f->ya.nt; i++)
            if (f->ya.major[i])
                dpprof__pl_rect(c, f->x0, dpprof__pl_ax_pix(&f->ya, f->ya.t[i]), f->x1 - f->x0, gw,
                                dpprof__pl_c_grid);
    }
    if (f->grid_x && f->xa.kind != DPPROF__PL_AX_CAT) {
        for (i = 0; i < f->xa.nt; i++)
            if (!f->xa.major[i])
                dpprof__pl_rect(c, dpprof__pl_ax_pix(&f->xa, f->xa.t[i]), f->y0, gw, f->y1 - f->y0,
                                dpprof__pl_c_grid2);
        for (i = 0; i < f->xa.nt; i++)
            if (f->xa.major[i])
                dpprof__pl_rect(c, dpprof__pl_ax_pix(&f->xa, f->xa.t[i]), f->y0, gw, f->y1 - f->y0,
                                dpprof__pl_c_grid);
    }
}

static void dpprof__pl_frame_axes(dpprof__pl_frame *f) {
    dpprof_canvas *c = f->c;
    int s = f->ts, ch = DPPROF_PLOT_FONT_H * s, cw = DPPROF_PLOT_FONT_W * s;
    int pad = 6 * s, tick = 4 * s, lgap = 3 * s, i, w = f->x1 - f->x0, h = f->y1 - f->y0;
    int ly = f->y1 + s + tick + lgap; /* top of the x tick labels */
    int mt = dpprof__pl_imax(s, tick / 2);
    char nb[32], cut[128];
    dpprof__pl_rec_area(f->x0, f->y0, f->x1, f->y1);
    dpprof__pl_rec_kind(DPPROF__PL_K_AXIS);
    /* box just outside the data area so it never covers data */
    dpprof__pl_rect(c, f->x0 - s, f->y0 - s, w + 2 * s, s, dpprof__pl_c_axis);
    dpprof__pl_rect(c, f->x0 - s, f->y1, w + 2 * s, s, dpprof__pl_c_axis);
    dpprof__pl_rect(c, f->x0 - s, f->y0, s, h, dpprof__pl_c_axis);
    dpprof__pl_rect(c, f->x1, f->y0, s, h, dpprof__pl_c_axis);
    /* x axis */
    if (f->hide_x) {
        /* nothing: the panel below carries the labels */
    } else if (f->xa.kind != DPPROF__PL_AX_CAT) {
        for (i = 0; i < f->xa.nt; i++) {
            int px;
            if (!f->xa.major[i]) {
                if (f->minor_ticks)
                    dpprof__pl_rect(c, dpprof__pl_ax_pix(&f->xa, f->xa.t[i]) - s / 2, f->y1 + s, s, mt, dpprof__pl_c_axis);
                continue;
            }
            px = dpprof__pl_ax_pix(&f->xa, f->xa.t[i]);
            dpprof__pl_rect(c, px - s / 2, f->y1 + s, s, tick, dpprof__pl_c_axis);
            dpprof__pl_text_at(c, px, ly, f->xa.lab[i], s, 1, 0, dpprof__pl_c_text);
        }
    } else {
        for (i = 0; i < f->xa.ncat; i += f->xa.cstride) {
            int cx = dpprof__pl_floor_i(dpprof__pl_ax_map(&f->xa, i + 0.5));
            const char *name = dpprof__pl_name(f->xa.cat, i, "", nb, (int)sizeof nb);
            dpprof__pl_rect(c, cx - s / 2, f->y1 + s, s, tick / 2, dpprof__pl_c_axis);
            if (f->xa.cmode == 0) {
                dpprof__pl_text_at(c, cx, ly, name, s, 1, 0, dpprof__pl_c_text);
            } else if (f->xa.cmode == 1) {
                int st[DPPROF__PL_WRAP_MAX], ln[DPPROF__PL_WRAP_MAX], k;
                int nl = dpprof__pl_imin(DPPROF__PL_WRAP_MAX,
                                         dpprof__pl_wrap(name, f->xa.cmaxc, st, ln, DPPROF__PL_WRAP_MAX, NULL));
                for (k = 0; k < nl; k++)
                    dpprof__pl_text_n(c, cx - dpprof__pl_tw(ln[k], s) / 2, ly + k * ch, name + st[k], ln[k], s,
                                      dpprof__pl_c_text, 0, 1);
            } else {
                /* rotated lines side by side (first on the left), caps centred on
         * the slot; each line ends at the axis. a label longer than its
         * lines gets its last line cut with ".." */
                int sc2 = f->xa.csc, st[DPPROF__PL_WRAP_MAX], ln[DPPROF__PL_WRAP_MAX], k,
                    lh = DPPROF_PLOT_FONT_H * sc2;
                int nl = dpprof__pl_wrap(name, f->xa.cmaxc, st, ln, DPPROF__PL_WRAP_MAX, NULL), x0;
                if (nl > f->xa.clines) {
                    nl = f->xa.clines;
                    ln[nl - 1] = dpprof__pl_slen(name + st[nl - 1]);
                }
                x0 = cx - ((nl - 1) * lh + 11 * sc2) / 2;
                for (k = 0; k < nl; k++) {
                    char part[128];
                    const char *t;
                    int n = dpprof__pl_imin(ln[k], (int)sizeof part - 1);
                    memcpy(part, name + st[k], (size_t)n);
                    part[n] = 0;
                    t = dpprof__pl_fit(part, f->xa.cmaxc, cut, (int)sizeof cut);
                    dpprof__pl_text_n(c, x0 + k * lh, ly, t, dpprof__pl_slen(t), sc2, dpprof__pl_c_text, 1, 2);
                }
            }
        }
    }
    /* y axis */
    if (f->ya.kind != DPPROF__PL_AX_CAT) {
        for (i = 0; i < f->ya.nt; i++) {
            int py;
            if (!f->ya.major[i]) {
                if (f->minor_ticks)
                    dpprof__pl_rect(c, f->x0 - s - mt, dpprof__pl_ax_pix(&f->ya, f->ya.t[i]) - s / 2, mt, s,
                                    dpprof__pl_c_axis);
                continue;
            }
            py = dpprof__pl_ax_pix(&f->ya, f->ya.t[i]);
            dpprof__pl_rect(c, f->x0 - s - tick, py - s / 2, tick, s, dpprof__pl_c_axis);
            dpprof__pl_text_at(c, f->x0 - s - tick - lgap, py, f->ya.lab[i], s, 2, 1, dpprof__pl_c_text);
        }
    } else {
        for (i = 0; i < f->ya.ncat; i += f->ya.cstride) {
            int cy = dpprof__pl_floor_i(dpprof__pl_ax_map(&f->ya, i + 0.5));
            const char *name = dpprof__pl_name(f->ya.cat, i, "", nb, (int)sizeof nb);
            if (f->ya.clines > 1) {
                /* wrapped row label, lines centred on the row as a block */
                int st[DPPROF__PL_WRAP_MAX], ln[DPPROF__PL_WRAP_MAX], k;
                int nl = dpprof__pl_wrap(name, f->ya.cmaxc, st, ln, DPPROF__PL_WRAP_MAX, NULL);
                if (nl > f->ya.clines) nl = f->ya.clines;
                for (k = 0; k < nl; k++) {
                    char part[128];
                    const char *t;
                    int n = k == nl - 1 ? dpprof__pl_slen(name + st[k]) : ln[k];
                    n = dpprof__pl_imin(n, (int)sizeof part - 1);
                    memcpy(part, name + st[k], (size_t)n);
                    part[n] = 0;
                    t = dpprof__pl_fit(part, f->ya.cmaxc, cut, (int)sizeof cut);
                    dpprof__pl_text_at(c, f->x0 - s - tick - lgap, cy - (nl * ch) / 2 + k * ch, t, s, 2, 0,
                                       dpprof__pl_c_text);
                }
            } else {
                name = dpprof__pl_fit(name, f->ya.cmaxc, cut, (int)sizeof cut);
                dpprof__pl_text_at(c, f->x0 - s - tick - lgap, cy, name, s, 2, 1, dpprof__pl_c_text);
            }
        }
    }
    /* axis labels and title, centred on the data area */
    if (f->xlabel[0] && !f->hide_x)
        dpprof__pl_text_at(c, f->x0 + w / 2, ly + f->xa.cext + 3 * s, f->xlabel, s, 1, 0, dpprof__pl_c_text);
    if (f->ylabel[0]) {
        int st[2], ln[2], k;
        int room = dpprof__pl_ylab_room(f);
        if (f->ylines == 2 && dpprof__pl_ylabel_lines(f, room, st, ln) == 2) {
            /* two rotated lines, the first outermost, each centred on the data */
            int bw = dpprof__pl_tw(dpprof__pl_imax(ln[0], ln[1]), s), top = dpprof__pl_ylab_top(f, bw);
            for (k = 0; k < 2; k++)
                dpprof__pl_text_n(c, f->ox + pad + k * ch, top + (bw - dpprof__pl_tw(ln[k], s)) / 2, f->ylabel + st[k], ln[k], s,
                                  dpprof__pl_c_text, 1, 1);
        } else {
            const char *t = dpprof__pl_fit(f->ylabel, dpprof__pl_imax(4, (room + s) / cw), cut, (int)sizeof cut);
            int tw = dpprof__pl_tw(dpprof__pl_slen(t), s);
            dpprof__pl_text_n(c, f->ox + pad, dpprof__pl_ylab_top(f, tw), t, dpprof__pl_slen(t), s, dpprof__pl_c_text, 1, 1);
        }
    }
    if (f->title[0]) {
        int ts = f->tts, st[2], ln[2], k, nl = dpprof__pl_title_lines(f, f->vw - 2 * pad, st, ln);
        int maxc = dpprof__pl_imax(4, (f->vw - 2 * pad + ts) / (DPPROF_PLOT_FONT_W * ts));
        for (k = 0; k < nl; k++) {
            char part[128];
            const char *t;
            int n = dpprof__pl_imin(ln[k], (int)sizeof part - 1), tw, tx;
            memcpy(part, f->title + st[k], (size_t)n);
            part[n] = 0;
            t = dpprof__pl_fit(part, maxc, cut, (int)sizeof cut);
            tw = dpprof__pl_tw(dpprof__pl_slen(t), ts);
            tx = dpprof__pl_iclamp(f->x0 + (w - tw) / 2, f->ox + pad, dpprof__pl_imax(f->ox + pad, f->ox + f->vw - pad - tw));
            dpprof__pl_text_n(c, tx, f->oy + pad + k * DPPROF_PLOT_FONT_H * ts, t, dpprof__pl_slen(t), ts, dpprof__pl_c_text, 0, 1);
        }
    }
}

/* ---- clipped drawing and markers ---------------------------------------- */
/* rect clipped to the rectangle clip = {x0, y0, x1, y1} (half-open) */
static void dpprof__pl_rect_in(dpprof_canvas *c, int x, int y, int w, int h, const unsigned char *rgb,
                               const int *clip) {
    int xa = x, ya = y, xb = x + w, yb = y + h;
    if (clip) {
        xa = dpprof__pl_imax(xa, clip[0]);
        ya = dpprof__pl_imax(ya, clip[1]);
        xb = dpprof__pl_imin(xb, clip[2]);
        yb = dpprof__pl_imin(yb, clip[3]);
    }
    if (xb > xa && yb > ya) dpprof__pl_rect(c, xa, ya, xb - xa, yb - ya, rgb);
}

/* line with a square pen, every pen stamp clipped to clip (NULL: canvas);
 * coordinates are doubles so far-away ends cost nothing and cannot overflow */
static void dpprof__pl_line_in(dpprof_canvas *c, double fx0, double fy0, double fx1, double fy1, int width,
                               const unsigned char *rgb, const int *clip) {
    int x0, y0, x1, y1, dx, dy, sx, sy, err, off;
    double cx0 = clip ? clip[0] : 0, cy0 = clip ? clip[1] : 0, cx1 = clip ? clip[2] : c->w,
           cy1 = clip ? clip[3] : c->h;
    if (width < 1) width = 1;
    off = (width - 1) / 2;
    if (!dpprof__pl_clip_seg(&fx0, &fy0, &fx1, &fy1, cx0 - width, cy0 - width, cx1 + width, cy1 + width)) return;
    x0 = dpprof__pl_round(fx0);
    y0 = dpprof__pl_round(fy0);
    x1 = dpprof__pl_round(fx1);
    y1 = dpprof__pl_round(fy1);
    dx = x1 > x0 ? x1 - x0 : x0 - x1;
    dy = y1 > y0 ? y0 - y1 : y1 - y0;
    sx = x0 < x1 ? 1 : -1;
    sy = y0 < y1 ? 1 : -1;
    err = dx + dy;
    for (;;) {
        dpprof__pl_rect_in(c, x0 - off, y0 - off, width, width, rgb, clip);
        if (x0 == x1 && y0 == y1) break;
        {
            int e2 = 2 * err;
            if (e2 >= dy) {
                err += dy;
                x0 += sx;
            }
            if (e2 <= dx) {
                err += dx;
                y0 += sy;
            }
        }
    }
}

#define DPPROF__PL_MK_NONE (-1)   /* legend: line only */
#define DPPROF__PL_MK_OOM (-2)    /* the "did not fit" cross */
#define DPPROF__PL_MK_HATCH (-3)  /* legend: hatched square (missing cells) */
#define DPPROF__PL_MK_HOLLOW (-4) /* legend: a hollow circle (did not fit, drawn at its value) */
#define DPPROF__PL_MK_DASH (-5)   /* legend: a dashed line (a curve on another) */

/* is (dx, dy) inside marker m of half-size r? integer tests only */
static int dpprof__pl_mk_in(int m, int dx, int dy, int r) {
    int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy, t;
    if (r < 1) return dx == 0 && dy == 0;
    switch (m) {
    case DPPROF_PLOT_MARKER_SQUARE:
        t = (r * 7 + 4) / 8; /* a square looks bigger than a circle of the same size */
        return ax <= t && ay <= t;
    case DPPROF_PLOT_MARKER_DIAMOND:
        return ax + ay <= r + r / 4;
    case DPPROF_PLOT_MARKER_TRIANGLE_UP:
    case DPPROF_PLOT_MARKER_TRIANGLE_DOWN:
        /* apex r + r/4 from the centre, base r - r/8 below it, half-base r + r/8 */
        if (m == DPPROF_PLOT_MARKER_TRIANGLE_DOWN) dy = -dy;
        {
            int top = -(r + r / 4), bot = r - r / 8, hb = r + r / 8;
            if (dy < top || dy > bot) return 0;
            return (long long)ax * (bot - top) <= (long long)(dy - top) * hb;
        }
    case DPPROF_PLOT_MARKER_PLUS:
        t = dpprof__pl_imax(1, (r + 1) / 3);
        return (ax <= t && ay <= r + r / 8) || (ay <= t && ax <= r + r / 8);
    case DPPROF__PL_MK_OOM:
        t = dpprof__pl_imax(1, (r + 1) / 3);
        return ax <= r && ay <= r && (dx - dy <= t && dy - dx <= t ? 1 : (dx + dy <= t && -dx - dy <= t));
    default: /* circle */
        return (long long)dx * dx + (long long)dy * dy <= (long long)r * r + r;
    }
}

/* filled marker centred on (x, y), half-size r, with a dark rim of width
 * max(1, r/5) so pale colours still show on white; clipped to clip */
static void dpprof__pl_marker(dpprof_canvas *c, int x, int y, int m, int r, const unsigned char *rgb,
                              const int *clip) {
    int dx, dy, rim = dpprof__pl_imax(1, r / 5), ext = r + r / 4 + 1;
    for (dy = -ext; dy <= ext; dy++)
        for (dx = -ext; dx <= ext; dx++) {
            if (!dpprof__pl_mk_in(m, dx, dy, r)) continue;
            if (m == DPPROF__PL_MK_OOM)
                dpprof__pl_rect_in(c, x + dx, y + dy, 1, 1, rgb, clip);
            else
                dpprof__pl_rect_in(c, x + dx, y + dy, 1, 1, dpprof__pl_mk_in(m, dx, dy, r - rim) ? rgb : dpprof__pl_c_axis,
                                   clip);
        }
}

/* hollow marker m: a ring of the shape in rgb, w px wide (inward), white inside so that the lines under it
 * do not show through; a plus is drawn as the outline of a thicker plus, so that it stays open */
static int dpprof__pl_hollow_in(int m, int dx, int dy, int r, int w) {
    if (m == DPPROF_PLOT_MARKER_PLUS) {
        int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy, t = w + 2, e = r + r / 8;
        return (ax <= t && ay <= e) || (ay <= t && ax <= e);
    }
    return dpprof__pl_mk_in(m, dx, dy, r);
}

static void dpprof__pl_marker_hollow(dpprof_canvas *c, int x, int y, int m, int r, const unsigned char *rgb, const int *clip) {
    int dx, dy, w = dpprof__pl_imax(2, (r + 2) / 4), ext = r + r / 4 + 1;
    for (dy = -ext; dy <= ext; dy++)
        for (dx = -ext; dx <= ext; dx++) {
            int inner;
            if (!dpprof__pl_hollow_in(m, dx, dy, r, w)) continue;
            /* inside: every point w away (8 directions) is in the shape too */
            inner = dpprof__pl_hollow_in(m, dx - w, dy, r, w) && dpprof__pl_hollow_in(m, dx + w, dy, r, w) && dpprof__pl_hollow_in(m, dx, dy - w, r, w) &&
                    dpprof__pl_hollow_in(m, dx, dy + w, r, w) && dpprof__pl_hollow_in(m, dx - w, dy - w, r, w) && dpprof__pl_hollow_in(m, dx + w, dy - w, r, w) &&
                    dpprof__pl_hollow_in(m, dx - w, dy + w, r, w) && dpprof__pl_hollow_in(m, dx + w, dy + w, r, w);
            dpprof__pl_rect_in(c, x + dx, y + dy, 1, 1, inner ? dpprof__pl_c_bg : rgb, clip);
        }
}

/* a dashed line from (x0, y0) to (x1, y1): dashes of len px from offset px into each period of per px along it
 * (offset + len <= per; the pattern starts at (x0, y0)), clipped as dpprof__pl_line_in */
static void dpprof__pl_line_dash(dpprof_canvas *c, double x0, double y0, double x1, double y1, int width, double per, double offset, double len,
                                 const unsigned char *rgb, const int *clip) {
    double L = sqrt(dpprof__pl_mul(x1 - x0, x1 - x0) + dpprof__pl_mul(y1 - y0, y1 - y0)), t;
    if (!(L > 0.0) || !(per > 0.0) || L > 1e6) {
        if (L > 1e6) dpprof__pl_line_in(c, x0, y0, x1, y1, width, rgb, clip); /* far outside the canvas: solid, clipped */
        return;
    }
    for (t = 0.0; t < L; t += per) {
        double a = t + offset, b = a + len;
        if (a >= L) break;
        if (b > L) b = L;
        dpprof__pl_line_in(c, x0 + dpprof__pl_mul(x1 - x0, a / L), y0 + dpprof__pl_mul(y1 - y0, a / L), x0 + dpprof__pl_mul(x1 - x0, b / L), y0 + dpprof__pl_mul(y1 - y0, b / L), width, rgb,
                           clip);
    }
}

/* diagonal hatching in absolute canvas coordinates (so neighbouring cells
 * line up): base colour with darker stripes */
static const unsigned char dpprof__pl_c_miss[3] = {224, 224, 224};
static const unsigned char dpprof__pl_c_hatch[3] = {165, 165, 165};
static void dpprof__pl_hatch(dpprof_canvas *c, int x, int y, int w, int h, int s) {
    int xx, yy, period = 6 * s, lw = dpprof__pl_imax(1, (s + 1) / 2) + s / 2;
    int xa = dpprof__pl_imax(x, 0), ya = dpprof__pl_imax(y, 0), xb = dpprof__pl_imin(x + w, c->w),
        yb = dpprof__pl_imin(y + h, c->h);
    for (yy = ya; yy < yb; yy++)
        for (xx = xa; xx < xb; xx++) {
            unsigned char *p = c->rgb + ((size_t)yy * (size_t)c->w + (size_t)xx) * 3u;
            const unsigned char *col = ((xx + yy) % period) < lw ? dpprof__pl_c_hatch : dpprof__pl_c_miss;
            p[0] = col[0];
            p[1] = col[1];
            p[2] = col[2];
        }
}

/* ---- legend (always outside the data area) ---------------------------- */
#define DPPROF__PL_LEG_MAXC 28    /* longest name shown; longer ones are cut with ".." */
#define DPPROF__PL_LEG_MINC 10    /* names are cut down to this before entries are dropped */
#define DPPROF__PL_LEG_MAXCOLS 32 /* columns of a band of varw */

typedef struct dpprof__pl_legend {
    int n;
    const char *const *names;  /* (n) or NULL */
    const unsigned char *rgb;  /* (n*3) or NULL -> palette */
    const unsigned char *show; /* (n) flags or NULL -> all */
    const int *markers;        /* (n) marker per entry, or NULL: square swatches */
    int line;                  /* swatch is a short line (through the marker) */
    int sc;
    int count, rows, cols, colw, pitch, w, h, maxc;
    int limit; /* entries drawn before a "+N more" line (0: all) */
    int varw;  /* a band's columns each as wide as its own names (colx), not all as the widest (line plots: a
                  long note beside short series names) */
    int colx[DPPROF__PL_LEG_MAXCOLS + 1];
} dpprof__pl_legend;

static const unsigned char *dpprof__pl_series_rgb(const unsigned char *rgb, int i) {
    return rgb ? rgb + 3 * (size_t)i : dpprof_plot_palette(i);
}

/* swatch width; the name starts 4 px (x scale) right of it */
static int dpprof__pl_leg_sw(const dpprof__pl_legend *L) { return (L->line ? 22 : 9) * L->sc; }

static int dpprof__pl_leg_namew(const dpprof__pl_legend *L, int maxc) {
    int i, namew = 0;
    char nb[32], cut[64];
    for (i = 0; i < L->n; i++) {
        const char *t;
        if (L->show && !L->show[i]) continue;
        t = dpprof__pl_fit(dpprof__pl_name(L->names, i, "series ", nb, (int)sizeof nb), maxc, cut, (int)sizeof cut);
        namew = dpprof__pl_imax(namew, dpprof__pl_ink_w(t, dpprof__pl_slen(t), L->sc));
    }
    return namew;
}

static void dpprof__pl_leg_count(dpprof__pl_legend *L) {
    int i;
    L->pitch = (DPPROF_PLOT_FONT_H + 4) * L->sc;
    L->count = 0;
    L->limit = 0;
    for (i = 0; i < L->n; i++)
        if (!L->show || L->show[i]) L->count++;
}

/* sizes the legend within max_w x max_h: entries flow into more columns
 * when taller than max_h; when that is too wide, names are cut shorter, and
 * as a last resort the tail of the list becomes "+N more" */
static void dpprof__pl_legend_fit(dpprof__pl_legend *L, int max_w, int max_h) {
    int s = L->sc;
    dpprof__pl_leg_count(L);
    if (L->count == 0) {
        L->rows = L->cols = L->w = L->h = 0;
        return;
    }
    for (L->maxc = DPPROF__PL_LEG_MAXC;; L->maxc--) {
        int namew = dpprof__pl_leg_namew(L, L->maxc);
        L->colw = dpprof__pl_leg_sw(L) + 4 * s + namew + 6 * s;
        L->rows = dpprof__pl_iclamp((max_h + 4 * s) / L->pitch, 1, L->count);
        L->cols = (L->count + L->rows - 1) / L->rows;
        L->rows = (L->count + L->cols - 1) / L->cols; /* balance the columns */
        L->w = L->cols * L->colw - 6 * s;
        if (L->w <= max_w || L->maxc <= DPPROF__PL_LEG_MINC) break;
    }
    if (L->w > max_w && L->cols > 1) {
        L->cols = dpprof__pl_imax(1, (max_w + 6 * s) / L->colw);
        L->rows = dpprof__pl_iclamp((max_h + 4 * s) / L->pitch, 1, L->count);
        if (L->rows * L->cols < L->count) L->limit = L->rows * L->cols - 1;
        L->w = L->cols * L->colw - 6 * s;
    }
    L->h = L->rows * L->pitch - 4 * s;
}

/* sizes the legend as a band of full names at most max_w wide (as many
 * columns as fit, balanced); returns its rows */
static int dpprof__pl_legend_fit_band(dpprof__pl_legend *L, int max_w) {
    int s = L->sc;
    dpprof__pl_leg_count(L);
    if (L->count == 0) {
        L->rows = L->cols = L->w = L->h = 0;
        return 0;
    }
    L->maxc = DPPROF__PL_LEG_MAXC;
    L->colw = dpprof__pl_leg_sw(L) + 4 * s + dpprof__pl_leg_namew(L, L->maxc) + 6 * s;
    L->cols = dpprof__pl_iclamp((max_w + 6 * s) / L->colw, 1, L->count);
    L->rows = (L->count + L->cols - 1) / L->cols;
    L->cols = (L->count + L->rows - 1) / L->rows;
    L->w = L->cols * L->colw - 6 * s;
    if (L->varw) { /* the most columns (the fewest rows) whose own widths fit max_w */
        int cols;
        for (cols = dpprof__pl_imin(L->count, DPPROF__PL_LEG_MAXCOLS); cols >= 1; cols--) {
            int rows = (L->count + cols - 1) / cols, i, k = 0, c, namew[DPPROF__PL_LEG_MAXCOLS] = {0};
            char nb[32], cut[64];
            for (i = 0; i < L->n; i++) {
                const char *t;
                if (L->show && !L->show[i]) continue;
                t = dpprof__pl_fit(dpprof__pl_name(L->names, i, "series ", nb, (int)sizeof nb), L->maxc, cut, (int)sizeof cut);
                namew[k / rows] = dpprof__pl_imax(namew[k / rows], dpprof__pl_ink_w(t, dpprof__pl_slen(t), s));
                k++;
            }
            L->cols = (L->count + rows - 1) / rows;
            for (c = 0, L->colx[0] = 0; c < L->cols; c++) L->colx[c + 1] = L->colx[c] + dpprof__pl_leg_sw(L) + 4 * s + namew[c] + 10 * s;
            L->rows = rows;
            L->w = L->colx[L->cols] - 10 * s;
            if (L->w <= max_w) break;
        }
    }
    L->h = L->rows * L->pitch - 4 * s;
    return L->rows;
}

/* did fitting cut a name or drop entries? */
static int dpprof__pl_legend_cut(const dpprof__pl_legend *L) {
    int i, nmax = 0;
    char nb[32];
    if (L->limit > 0) return 1;
    for (i = 0; i < L->n; i++)
        if (!L->show || L->show[i])
            nmax = dpprof__pl_imax(nmax, dpprof__pl_slen(dpprof__pl_name(L->names, i, "series ", nb, (int)sizeof nb)));
    return L->maxc < dpprof__pl_imin(nmax, DPPROF__PL_LEG_MAXC);
}

static void dpprof__pl_legend_draw(dpprof_canvas *c, const dpprof__pl_legend *L, int x, int y) {
    int s = L->sc, i, k = 0, in = dpprof__pl_imax(1, s / 2), sw = dpprof__pl_leg_sw(L);
    char nb[32], cut[64];
    if (L->count <= 0 || L->rows <= 0) return;
    dpprof__pl_rec_kind(DPPROF__PL_K_LEGEND);
    for (i = 0; i < L->n; i++) {
        int ex, ey;
        const char *t;
        if (L->show && !L->show[i]) continue;
        ex = x + (L->varw ? L->colx[k / L->rows] : (k / L->rows) * L->colw);
        ey = y + (k % L->rows) * L->pitch;
        if (L->limit > 0 && k == L->limit) {
            snprintf(nb, sizeof nb, "+%d more", L->count - L->limit);
            dpprof__pl_text_n(c, ex + sw + 4 * s, ey, nb, dpprof__pl_slen(nb), s, dpprof__pl_c_text, 0, 0);
            break;
        }
        k++;
        if (L->markers && L->markers[i] == DPPROF__PL_MK_HATCH) {
            dpprof__pl_rect(c, ex, ey + s, 9 * s, 9 * s, dpprof__pl_c_axis);
            dpprof__pl_hatch(c, ex + in, ey + s + in, 9 * s - 2 * in, 9 * s - 2 * in, s);
        } else if (L->line || L->markers) {
            /* line through the marker over the cap height (centre row 5 of 13) */
            int cy = ey + 5 * s, m = L->markers ? L->markers[i] : DPPROF__PL_MK_NONE;
            if (m == DPPROF__PL_MK_DASH) /* the dashes of a curve on another, over the width of the other swatches */
                dpprof__pl_dashes(c, 0, cy, ex, ex + sw - 1, dpprof__pl_imax(2, s), 5 * s, 3 * s, dpprof__pl_series_rgb(L->rgb, i));
            else if (m == DPPROF__PL_MK_HOLLOW)
                dpprof__pl_marker_hollow(c, ex + sw / 2, cy, DPPROF_PLOT_MARKER_CIRCLE, 3 * s + 1, dpprof__pl_series_rgb(L->rgb, i), NULL);
            else {
                if (L->line && m != DPPROF__PL_MK_OOM)
                    dpprof__pl_rect(c, ex, cy - (dpprof__pl_imax(2, s) - 1) / 2, sw, dpprof__pl_imax(2, s),
                                    dpprof__pl_series_rgb(L->rgb, i));
                if (m != DPPROF__PL_MK_NONE)
                    dpprof__pl_marker(c, ex + sw / 2, cy, m, 3 * s + 1, dpprof__pl_series_rgb(L->rgb, i), NULL);
            }
        } else {
            /* swatch over the cap height, outlined so pale colours still show */
            dpprof__pl_rect(c, ex, ey + s, 9 * s, 9 * s, dpprof__pl_c_axis);
            dpprof__pl_rect(c, ex + in, ey + s + in, 9 * s - 2 * in, 9 * s - 2 * in, dpprof__pl_series_rgb(L->rgb, i));
        }
        t = dpprof__pl_fit(dpprof__pl_name(L->names, i, "series ", nb, (int)sizeof nb), L->maxc, cut,
                           (int)sizeof cut);
        dpprof__pl_text_n(c, ex + sw + 4 * s, ey, t, dpprof__pl_slen(t), s, dpprof__pl_c_text, 0, 0);
    }
    dpprof__pl_rec_kind(DPPROF__PL_K_AXIS);
}

/* ---- figure plumbing ---------------------------------------------------- */
/* the legend goes right of the data area, top-aligned with it, using its
 * height (known after a layout pass) and at most 35% of the width. when the
 * names would have to be cut there, or the legend takes over 30% of the
 * width and a band leaves a larger data area, it becomes a band of at most 3
 * rows under the x label (when that takes at most a quarter of the figure
 * and 40% of the data height); failing that, cut names may still fit when
 * the right side takes 45% of the width; only then are names cut. */
static void dpprof__pl_frame_legend(dpprof__pl_frame *f, dpprof__pl_legend *L) {
    int s = f->ts, h = f->y1 > f->y0 ? f->y1 - f->y0 : f->vh * 7 / 10, cut, cw = DPPROF_PLOT_FONT_W * s;
    L->sc = s;
    f->leg_below = 0;
    f->bot_h = 0;
    dpprof__pl_legend_fit(L, f->vw * 35 / 100, f->leg_max_h > 0 ? f->leg_max_h : h);
    cut = L->count && dpprof__pl_legend_cut(L);
    if (L->count && (cut || f->leg_band || L->w + 4 * cw > f->vw * 30 / 100)) {
        dpprof__pl_legend B = *L;
        int rows = dpprof__pl_legend_fit_band(&B, f->vw - 12 * s), bh = B.h + DPPROF_PLOT_FONT_H * s;
        /* data area either way (left margin: the last layout's, or a guess) */
        double left = f->x1 > f->x0 ? f->x0 - f->ox : 12.0 * cw;
        double a_right = (f->vw - left - (L->w + 4.0 * cw) - 6.0 * s) * h, a_band = (f->vw - left - 6.0 * s) * (h - bh);
        if (rows <= 3 && B.h <= f->vh / 4 && B.w <= f->vw - 12 * s && bh * 10 <= h * 4 && (cut || f->leg_band || a_band > a_right)) {
            *L = B;
            f->leg_below = 1;
            f->bot_h = bh;
            f->right_w = 0;
            return;
        }
        if (cut) {
            B = *L;
            dpprof__pl_legend_fit(&B, f->vw * 45 / 100, f->leg_max_h > 0 ? f->leg_max_h : h);
            if (!dpprof__pl_legend_cut(&B)) *L = B;
        }
    }
    f->right_w = L->count ? L->w + 4 * cw : 0;
}

static void dpprof__pl_frame_legend_draw(const dpprof__pl_frame *f, const dpprof__pl_legend *L) {
    int s = f->ts;
    if (!L->count) return;
    if (f->leg_below) {
        int x = f->x0 + (f->x1 - f->x0 - L->w) / 2;
        x = dpprof__pl_iclamp(x, f->ox + 6 * s, dpprof__pl_imax(f->ox + 6 * s, f->ox + f->vw - 6 * s - L->w));
        dpprof__pl_legend_draw(f->c, L, x, f->oy + f->vh - 6 * s - L->h);
    } else {
        dpprof__pl_legend_draw(f->c, L, f->x1 + 4 * DPPROF_PLOT_FONT_W * s, f->y0);
    }
}

/* size: explicit, else the preallocated canvas', else 1600x900 */
static int dpprof__pl_fig_size(const dpprof_canvas *c, int w, int h, int *W, int *H) {
    if (w < 0 || h < 0) return dpprof_fail(DPPROF_PLOT_ESIZE, "dpprof__pl_fig_size: bad size (w < 0 || h < 0)");
    if (w == 0) w = c->rgb ? c->w : 1600;
    if (h == 0) h = c->rgb ? c->h : 900;
    if (w < DPPROF_PLOT_MIN_W || h < DPPROF_PLOT_MIN_H || w > DPPROF_PLOT_MAX_DIM || h > DPPROF_PLOT_MAX_DIM)
        return dpprof_fail(DPPROF_PLOT_ESIZE, "dpprof__pl_fig_size: bad size (w < DPPROF_PLOT_MIN_W || h < DPPROF_PLOT_MIN_H || w > DPPROF_PLOT_MAX_DIM || h > DPPROF_PLOT_MAX_DIM)");
    if (c->rgb && (c->w != w || c->h != h)) return dpprof_fail(DPPROF_PLOT_ESIZE, "dpprof__pl_fig_size: bad size (c->rgb && (c->w != w || c->h != h))");
    *W = w;
    *H = h;
    return DPPROF_PLOT_OK;
}

/* ticks of [0, need_top] decide the step; the axis top is the next multiple
 * of that step, so the top gridline is labelled and nothing is cut off */
static double dpprof__pl_nice_top(dpprof__pl_frame *f, double need_top) {
    dpprof__pl_axis a = f->ya;
    double step;
    a.kind = DPPROF__PL_AX_LIN;
    a.lo = 0.0;
    a.hi = need_top > 0.0 ? need_top : 1.0;
    dpprof__pl_ax_ticks_lin(&a, f->ts, 0, dpprof__pl_vtick_px(fabs(a.p1 - a.p0), f->ts));
    if (a.nt >= 2) {
        step = a.t[1] - a.t[0];
    } else {
        /* room for one tick only: the top is the next 1-2-5 value, labelled */
        int m, e;
        dpprof__pl_nice_ge(a.hi, &m, &e);
        step = m * dpprof__pl_p10(e);
    }
    if (!(step > 0.0)) step = a.hi;
    return ceil(a.hi / step - 1e-9) * step;
}

/* the unit for value annotations: text inside the last (...) of a label */
static void dpprof__pl_unit_of(const char *label, char *buf, int cap) {
    const char *open = label ? strrchr(label, '(') : NULL;
    const char *close = open ? strchr(open, ')') : NULL;
    int n = 0;
    if (open && close && close > open + 1) {
        n = (int)(close - open - 1);
        if (n > cap - 1) n = cap - 1;
        memcpy(buf, open + 1, (size_t)n);
    }
    buf[n] = 0;
}

/* ---- timeline -------------------------------------------------------------- */
/* phase labels live in a band of label rows above the data area (row 0
 * nearest the data), left-aligned just right of their dashed line
 * (right-aligned left of it near the right edge). a label's line runs up
 * through the rows below its own, so those must keep that x free, and no
 * label may cover another label's line. tries mark i from the top row down,
 * so that, going left to right, labels step downwards and a later line
 * stops below the earlier labels; returns 1 if placed */
static int dpprof__pl_mark_try(const dpprof__pl_frame *f, const dpprof_timeline_desc *d, const int *order,
                               int nv, int i, int *row, int *lx, int *lw, int nrows) {
    int s = f->ts, j, r, gap = DPPROF_PLOT_FONT_W * s, L, R, px = dpprof__pl_ax_pix(&f->xa, d->mark_x[i]);
    int maxc = dpprof__pl_imax(4, (f->x1 - f->x0) / (DPPROF_PLOT_FONT_W * s));
    lw[i] = dpprof__pl_tw(dpprof__pl_imin(dpprof__pl_slen(d->mark_names[i]), maxc), s);
    /* the band is free up to the canvas edge: the legend starts below it */
    L = px + 3 * s;
    if (L + lw[i] > f->c->w - 6 * s) L = px - 2 * s - lw[i];
    if (L < f->x0) L = f->x0;
    R = L + lw[i];
    for (r = nrows - 1; r >= 0; r--) {
        int ok = 1;
        for (j = 0; j < nv && ok; j++) {
            int q = order[j], pq, Lq, Rq;
            if (q == i || row[q] < 0) continue;
            pq = dpprof__pl_ax_pix(&f->xa, d->mark_x[q]);
            Lq = lx[q];
            Rq = lx[q] + lw[q];
            if (row[q] == r && L < Rq + gap && Lq < R + gap) ok = 0;
            if (row[q] < r && px >= Lq - 2 * s && px <= Rq + 2 * s) ok = 0;
            if (row[q] > r && pq >= L - 2 * s && pq <= R + 2 * s) ok = 0;
        }
        if (ok) {
            row[i] = r;
            lx[i] = L;
            return 1;
        }
    }
    return 0;
}

/* one placement with nrows rows. first every phase whose stretch (from its
 * line to the next mark's, or to the end of the data) holds its name: the
 * name centred in it, in the row nearest the data, so each occurrence is
 * named where it runs and no line crosses it. then each distinct name not
 * yet shown (at the first of its marks that fits), so every phase is named
 * once before repeats compete for room; then the remaining marks left to
 * right. returns the number of labels placed */
static int dpprof__pl_marks_fill(const dpprof__pl_frame *f, const dpprof_timeline_desc *d, const int *order,
                                 int nv, int *row, int *lx, int *lw, int nrows) {
    int k, j, placed = 0, s = f->ts, maxc = dpprof__pl_imax(4, (f->x1 - f->x0) / (DPPROF_PLOT_FONT_W * s));
    int end = dpprof__pl_imin(f->x1, dpprof__pl_ax_pix(&f->xa, d->x[d->n_points - 1]));
    for (k = 0; k < nv; k++) row[order[k]] = -1;
    for (k = 0; k < nv && nrows > 0; k++) {
        const int i = order[k], px = dpprof__pl_ax_pix(&f->xa, d->mark_x[i]);
        const int nx = k + 1 < nv ? dpprof__pl_ax_pix(&f->xa, d->mark_x[order[k + 1]]) : end;
        if (!d->mark_names[i] || !d->mark_names[i][0]) continue;
        lw[i] = dpprof__pl_tw(dpprof__pl_imin(dpprof__pl_slen(d->mark_names[i]), maxc), s);
        if (nx - px < lw[i] + 8 * s) continue;
        row[i] = 0;
        lx[i] = px + (nx - px - lw[i]) / 2;
        placed++;
    }
    for (k = 0; k < nv; k++) {
        const char *name = d->mark_names[order[k]];
        int named = 0;
        if (!name || !name[0] || row[order[k]] >= 0) continue;
        for (j = 0; j < nv && !named; j++) {
            const char *o = d->mark_names[order[j]];
            named = row[order[j]] >= 0 && o && !strcmp(o, name);
        }
        if (!named) placed += dpprof__pl_mark_try(f, d, order, nv, order[k], row, lx, lw, nrows);
    }
    for (k = 0; k < nv; k++) {
        const char *name = d->mark_names[order[k]];
        if (!name || !name[0] || row[order[k]] >= 0) continue;
        placed += dpprof__pl_mark_try(f, d, order, nv, order[k], row, lx, lw, nrows);
    }
    return placed;
}

/* how many distinct mark names have no label in the current placement */
static int dpprof__pl_marks_unnamed(const dpprof_timeline_desc *d, const int *order, int nv, const int *row) {
    int k, j, n = 0;
    for (k = 0; k < nv; k++) {
        const char *name = d->mark_names[order[k]];
        int seen = 0, named = 0;
        if (!name || !name[0]) continue;
        for (j = 0; j < nv && !seen; j++) {
            const char *o = d->mark_names[order[j]];
            if (j < k && o && !strcmp(o, name)) seen = 1; /* counted at its first mark */
            if (o && !strcmp(o, name) && row[order[j]] >= 0) named = 1;
        }
        n += !seen && !named;
    }
    return n;
}

/* places the labels in the fewest rows (up to maxrows) that hold as many
 * of them as maxrows would; a label that fits nowhere is dropped, its line
 * is still drawn up to the data area. fixed != 0 uses exactly maxrows rows.
 * returns the rows used */
static int dpprof__pl_marks_place(const dpprof__pl_frame *f, const dpprof_timeline_desc *d, const int *order,
                                  int nv, int *row, int *lx, int *lw, int maxrows, int fixed) {
    int r, best = 0, best_r = 1, k, used = 0;
    for (k = 0; k < nv; k++) row[order[k]] = -1;
    /* placement is quadratic in the marks; past a few hundred the lines are
   * a solid texture anyway and labels could not be told apart */
    if (!d->mark_names || maxrows < 1 || nv > 600) return 0;
    if (!fixed) {
        for (r = 1; r <= maxrows; r++) {
            int n = dpprof__pl_marks_fill(f, d, order, nv, row, lx, lw, r);
            if (n > best) {
                best = n;
                best_r = r;
            }
        }
        maxrows = best_r;
    }
    dpprof__pl_marks_fill(f, d, order, nv, row, lx, lw, maxrows);
    for (k = 0; k < nv; k++) used = dpprof__pl_imax(used, row[order[k]] + 1);
    return used;
}

DPPROF_API int dpprof_plot_timeline(const dpprof_timeline_desc *d, dpprof_canvas *canvas) {
    int n, S, i, k, W = 0, H = 0, rc, peak_i = 0, nv = 0, rows = 0, maxrows = 3;
    double peak = 0.0;
    const double *x, *y;
    unsigned char *show;
    int *order, *row, *lx, *lw;
    dpprof__pl_frame f;
    dpprof__pl_legend L;
    void *mem;
    size_t memsz;

    if (!d || !canvas) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_timeline: bad argument (!d || !canvas)");
    n = d->n_points;
    S = d->n_series;
    x = d->x;
    y = d->y;
    if (n < 1 || S < 1 || !x || !y || d->n_marks < 0 || (d->n_marks > 0 && !d->mark_x)) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_timeline: bad argument (n < 1 || S < 1 || !x || !y || d->n_marks < 0 || (d->n_marks > 0 && !d->mark_x))");
    if (d->text_scale < 0 || d->text_scale > DPPROF_PLOT_MAX_TEXT_SCALE) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_timeline: bad argument (d->text_scale < 0 || d->text_scale > DPPROF_PLOT_MAX_TEXT_SCALE)");
    if (d->label_rows < 0 || d->label_rows > DPPROF_PLOT_MAX_LABEL_ROWS) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_timeline: bad argument (d->label_rows < 0 || d->label_rows > DPPROF_PLOT_MAX_LABEL_ROWS)");
    if (!dpprof__pl_finite(d->y_max) || d->y_max < 0.0) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_timeline: bad value (!dpprof__pl_finite(d->y_max) || d->y_max < 0.0)");
    for (i = 0; i < n; i++) {
        if (!dpprof__pl_finite(x[i])) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_timeline: bad value (!dpprof__pl_finite(x[i]))");
        if (i > 0 && x[i] < x[i - 1]) return dpprof_fail(DPPROF_PLOT_EORDER, "dpprof_plot_timeline: values out of order (i > 0 && x[i] < x[i - 1])");
    }
    for (k = 0; k < S; k++)
        for (i = 0; i < n; i++) {
            double v = y[(size_t)k * (size_t)n + (size_t)i];
            if (!dpprof__pl_finite(v) || v < 0.0) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_timeline: bad value (!dpprof__pl_finite(v) || v < 0.0)");
        }
    for (i = 0; i < n; i++) {
        double t = 0.0;
        for (k = 0; k < S; k++) t += y[(size_t)k * (size_t)n + (size_t)i];
        if (!dpprof__pl_finite(t)) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_timeline: bad value (!dpprof__pl_finite(t))");
        if (t > peak) {
            peak = t;
            peak_i = i;
        }
    }
    for (i = 0; i < d->n_marks; i++)
        if (!dpprof__pl_finite(d->mark_x[i])) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_timeline: bad value (!dpprof__pl_finite(d->mark_x[i]))");
    if (!dpprof__pl_finite(d->x_max) || (d->x_max != 0.0 && (d->x_max < x[n - 1] || !(d->x_max > x[0]))))
        return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_timeline: bad value (!dpprof__pl_finite(d->x_max) || (d->x_max != 0.0 && (d->x_max < x[n - 1] || !(d->x_max > x[0]))))");
    rc = dpprof__pl_fig_size(canvas, d->width, d->height, &W, &H);
    if (rc) return rc;

    /* scratch: legend flags + mark order/rows/label x/label width */
    memsz = (size_t)S + 4u * sizeof(int) * ((size_t)d->n_marks + 1u) + sizeof(int);
    mem = DPPROF_MALLOC(memsz);
    if (!mem) return dpprof_fail(DPPROF_PLOT_ENOMEM, "dpprof_plot_timeline: out of memory (!mem)");
    memset(mem, 0, memsz);
    order = (int *)mem;
    row = order + d->n_marks + 1;
    lx = row + d->n_marks + 1;
    lw = lx + d->n_marks + 1;
    show = (unsigned char *)(lw + d->n_marks + 1);
    if (!canvas->rgb) {
        rc = dpprof_canvas_init(canvas, W, H);
        if (rc) {
            DPPROF_FREE(mem);
            return rc;
        }
    }
    for (k = 0; k < S && !d->no_legend; k++)
        for (i = 0; i < n && !show[k]; i++)
            if (y[(size_t)k * (size_t)n + (size_t)i] > 0.0) show[k] = 1;

    dpprof__pl_frame_init(&f, canvas, d->title, d->xlabel ? d->xlabel : "time (ms)",
                          d->ylabel ? d->ylabel : "memory (MiB)");
    dpprof__pl_frame_scale(&f, d->text_scale);
    f.leg_band = 1;
    f.xa.kind = DPPROF__PL_AX_LIN;
    f.xa.lo = x[0];
    f.xa.hi = d->x_max != 0.0 ? d->x_max : x[n - 1];
    if (!(f.xa.hi > f.xa.lo)) {
        f.xa.lo -= 0.5;
        f.xa.hi += 0.5;
    }
    f.ya.kind = DPPROF__PL_AX_LIN;
    f.ya.lo = 0.0;
    f.ya.hi = d->y_max > 0.0 ? d->y_max : (peak > 0.0 ? peak : 1.0);

    memset(&L, 0, sizeof L);
    L.n = S;
    L.names = d->series_names;
    L.rgb = d->series_rgb;
    L.show = show;
    dpprof__pl_frame_legend(&f, &L);

    /* valid marks in x order (insertion sort: marks normally come sorted) */
    for (i = 0; i < d->n_marks; i++) {
        double mx = d->mark_x[i];
        if (mx < f.xa.lo || mx > f.xa.hi) continue;
        k = nv++;
        while (k > 0 && d->mark_x[order[k - 1]] > mx) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }

    /* pass 1 sizes the data area; then the y top gets room for the peak label
   * and the band above the data gets as many label rows as the marks need */
    dpprof__pl_frame_layout(&f);
    if (d->y_max <= 0.0 && peak > 0.0) {
        double need = (DPPROF_PLOT_FONT_H + 10) * f.ts, hp = f.y1 - f.y0, frac = need / (hp > 1 ? hp : 1);
        if (frac > 0.5) frac = 0.5;
        f.ya.hi = dpprof__pl_nice_top(&f, peak / (1.0 - frac));
    }
    if (nv > 0 && d->label_rows > 0) {
        rows = dpprof__pl_marks_place(&f, d, order, nv, row, lx, lw, d->label_rows, 1);
        rows = d->label_rows;
    } else if (nv > 0) {
        /* every phase named once: more rows while a name has none */
        rows = dpprof__pl_marks_place(&f, d, order, nv, row, lx, lw, maxrows, 0);
        while (maxrows < DPPROF_PLOT_MAX_LABEL_ROWS && d->mark_names && dpprof__pl_marks_unnamed(d, order, nv, row) > 0)
            rows = dpprof__pl_marks_place(&f, d, order, nv, row, lx, lw, ++maxrows, 1);
    }
    if (nv > 0) f.top_h = rows * (DPPROF_PLOT_FONT_H + 2) * f.ts + 2 * f.ts;
    dpprof__pl_frame_layout(&f);
    dpprof__pl_frame_legend(&f, &L); /* now with the real data-area height */
    dpprof__pl_frame_layout(&f);
    if (d->y_max <= 0.0 && peak > 0.0) {
        /* the data height changed with the label band and the legend: the top
     * again on a labelled tick of the final axis */
        double need = (DPPROF_PLOT_FONT_H + 10) * f.ts, hp = f.y1 - f.y0, frac = need / (hp > 1 ? hp : 1), top;
        if (frac > 0.5) frac = 0.5;
        top = dpprof__pl_nice_top(&f, peak / (1.0 - frac));
        if (top != f.ya.hi) {
            f.ya.hi = top;
            dpprof__pl_frame_layout(&f);
        }
    }
    if (nv > 0 && rows > 0) {
        dpprof__pl_marks_place(&f, d, order, nv, row, lx, lw, rows, 1);
        /* the final data area may have cost a name its room: a row more, as above */
        while (!d->label_rows && rows < DPPROF_PLOT_MAX_LABEL_ROWS && dpprof__pl_marks_unnamed(d, order, nv, row) > 0) {
            f.top_h = ++rows * (DPPROF_PLOT_FONT_H + 2) * f.ts + 2 * f.ts;
            dpprof__pl_frame_layout(&f);
            dpprof__pl_marks_place(&f, d, order, nv, row, lx, lw, rows, 1);
        }
    }
    if (d->label_rows_used) *d->label_rows_used = rows;

    dpprof__pl_frame_back(&f);
    {
        /* stacked step areas, one pixel column at a time: the column shows the
     * event with the largest stacked total among the one holding at its left
     * edge and all that start inside it, so no peak can fall between columns */
        int wd = f.x1 - f.x0, col, ev = 0;
        double xlo = f.xa.lo, xr = f.xa.hi - f.xa.lo;
        for (col = 0; col < wd; col++) {
            double xa = xlo + dpprof__pl_mul(xr, (double)col / wd);
            double xb = xlo + dpprof__pl_mul(xr, (double)(col + 1) / wd);
            int best = -1, j, ybot, last = col == wd - 1;
            double bt = -1.0, cum = 0.0;
            if (xa > x[n - 1]) break; /* an axis past the last x (x_max): the run ended there */
            while (ev + 1 < n && x[ev + 1] <= xa) ev++;
            j = ev;
            if (x[j] > xa && !(x[j] < xb || last)) continue; /* before the first event */
            for (; j < n && (x[j] <= xa || x[j] < xb || last); j++) {
                double t = 0.0;
                for (k = 0; k < S; k++) t += y[(size_t)k * (size_t)n + (size_t)j];
                if (t > bt) {
                    bt = t;
                    best = j;
                }
            }
            if (best < 0) continue;
            ybot = f.y1;
            for (k = 0; k < S; k++) {
                double v = y[(size_t)k * (size_t)n + (size_t)best];
                int ytop;
                if (!(v > 0.0)) continue;
                cum += v;
                ytop = dpprof__pl_iclamp(dpprof__pl_round(dpprof__pl_ax_map(&f.ya, cum)), f.y0, f.y1);
                if (ytop < ybot)
                    dpprof__pl_rect(canvas, f.x0 + col, ytop, 1, ybot - ytop, dpprof__pl_series_rgb(d->series_rgb, k));
                ybot = ytop;
            }
        }
    }
    {
        /* phase marks: dashed line through the data, label in the band above */
        int s = f.ts, pitch = (DPPROF_PLOT_FONT_H + 2) * s,
            maxc = dpprof__pl_imax(4, (f.x1 - f.x0) / (DPPROF_PLOT_FONT_W * s));
        for (k = 0; k < nv; k++) {
            int mi = order[k], px = dpprof__pl_ax_pix(&f.xa, d->mark_x[mi]), ytop = f.y0;
            if (row[mi] >= 0 && rows > 0) {
                int cy = f.y0 - s - (row[mi] + 1) * pitch;
                const char *name = d->mark_names[mi];
                ytop = cy + s;
                dpprof__pl_text_n(canvas, lx[mi], cy, name, dpprof__pl_imin(dpprof__pl_slen(name), maxc), s,
                                  dpprof__pl_c_text, 0, 0);
            }
            {
                /* dash phase anchored at the data top so all lines dash in step */
                int period = 7 * s, p = f.y0 - ((f.y0 - ytop + period - 1) / period) * period;
                for (; p < f.y1; p += period) {
                    int a = dpprof__pl_imax(p, ytop), b = dpprof__pl_imin(p + 4 * s, f.y1);
                    if (b > a) dpprof__pl_rect(canvas, px - (s - 1) / 2, a, s, b - a, row[mi] >= 0 && rows > 0 ? dpprof__pl_c_mark : dpprof__pl_c_mark2);
                }
            }
        }
    }
    if (peak > 0.0) {
        /* peak: a downward triangle above the highest column and its value.
     * every column is at most as tall, so the label above it covers no data */
        int s = f.ts, px = dpprof__pl_ax_pix(&f.xa, x[peak_i]), th = 5 * s, j, tw;
        int tip = dpprof__pl_round(dpprof__pl_ax_map(&f.ya, peak)) - s - 1;
        char num[32], unit[24], lab[80];
        tip = dpprof__pl_imax(tip, f.y0 + DPPROF_PLOT_FONT_H * s + th + 3 * s);
        dpprof__pl_fmt_sig(num, (int)sizeof num, peak, 4);
        dpprof__pl_unit_of(f.ylabel, unit, (int)sizeof unit);
        snprintf(lab, sizeof lab, "peak %s%s%s", num, unit[0] ? " " : "", unit);
        tw = dpprof__pl_tw(dpprof__pl_slen(lab), s);
        {
            int lo = f.x0 + 2 * s, hi = dpprof__pl_imax(lo, f.x1 - 2 * s - tw), lx0 = lo, best = -1, off;
            /* slide the label along the marker (which stays under its middle
       * half) to the spot crossed by the fewest phase lines, nearest the
       * centre first: a dashed line through the box reads as a cut */
            for (off = 0; off <= tw / 4 + 4 * s; off += s) {
                int sgn;
                for (sgn = -1; sgn <= 1; sgn += 2) {
                    int c = dpprof__pl_iclamp(px - tw / 2 + sgn * off, lo, hi), hits = 0, q;
                    for (q = 0; q < nv; q++) {
                        int mx = dpprof__pl_ax_pix(&f.xa, d->mark_x[order[q]]);
                        hits += mx >= c - 4 * s && mx <= c + tw + 4 * s;
                    }
                    if (best < 0 || hits < best) {
                        best = hits;
                        lx0 = c;
                    }
                }
                if (best == 0) break;
            }
            int ly0 = dpprof__pl_imax(f.y0 + s, tip - th - DPPROF_PLOT_FONT_H * s);
            dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
            /* white box: dashed phase lines must not run through the digits */
            dpprof__pl_rect(canvas, lx0 - 2 * s, ly0, tw + 4 * s, DPPROF_PLOT_FONT_H * s, dpprof__pl_c_bg);
            dpprof__pl_text_n(canvas, lx0, ly0, lab, dpprof__pl_slen(lab), s, dpprof__pl_c_text, 0, 0);
        }
        for (j = 0; j < th; j++) /* widens from the tip upwards */
            dpprof__pl_rect(canvas, px - j, tip - j, 2 * j + 1, 1, dpprof__pl_c_text);
    }
    dpprof__pl_frame_axes(&f);
    if (L.count) dpprof__pl_frame_legend_draw(&f, &L);
    DPPROF_FREE(mem);
    return DPPROF_PLOT_OK;
}

/* ---- grouped bars ------------------------------------------------------- */
/* value labels above the bars: flat when they fit the room of a bar (its
 * pitch, or the whole slot when a group holds one bar), else
 * rotated, smaller if needed, else none. returns the px they need above a bar */
/* bar i's value label: its value, or for a missing value what missing_labels says ("n/a" without) */
static void dpprof__pl_bar_text(const dpprof_bars_desc *d, size_t i, char *buf, int cap) {
    const double v = d->values[i];
    if (v != v && d->missing_labels && d->missing_labels[i])
        snprintf(buf, (size_t)cap, "%.15s", d->missing_labels[i]);
    else if (v == v && d->value_decimals > 0 && fabs(v) < 1e7)
        dpprof__pl_fmt_fixed(buf, cap, v, d->value_decimals);
    else
        dpprof__pl_fmt_val(buf, cap, v, 4);
}

static int dpprof__pl_bar_labels(const dpprof_bars_desc *d, double room, int ts, int *mode, int *sc) {
    int i, maxn = 0, N = d->n_groups * d->n_series;
    char buf[32];
    *mode = -1;
    *sc = ts;
    if (d->hide_values) return 0;
    for (i = 0; i < N; i++) {
        dpprof__pl_bar_text(d, (size_t)i, buf, (int)sizeof buf);
        maxn = dpprof__pl_imax(maxn, dpprof__pl_slen(buf));
    }
    /* at the text scale only (a smaller label would be under the figures' least type size): flat, else rotated with
       its glyphs' 11 rows and a gap of 2 between neighbours, else none (the axis reads the values) */
    *sc = ts;
    if (dpprof__pl_tw(maxn, *sc) <= room - 2 * *sc) {
        *mode = 0;
        return (DPPROF_PLOT_FONT_H - 2) * *sc + 2 * ts;
    }
    if (DPPROF_PLOT_FONT_H * *sc <= room) {
        *mode = 1;
        return dpprof__pl_tw(maxn, *sc) + 3 * ts;
    }
    return 0;
}

/* colour of bar (series k, group g): group_rgb for single-series bars */
static const unsigned char *dpprof__pl_bar_rgb(const dpprof_bars_desc *d, int k, int g) {
    if (d->n_series == 1 && d->group_rgb) return d->group_rgb + 3 * (size_t)g;
    return dpprof__pl_series_rgb(d->series_rgb, k);
}

/* log axis top with room for labels: the smallest 1, 2 or 5 x 10^k at or
 * above the value that leaves fraction frac of the axis free above vmax
 * (whole decades would waste up to 90% of a decade) */
static double dpprof__pl_log_top(double lo, double vmax, double frac) {
    double l0 = log10(lo), l1 = log10(vmax > lo ? vmax : lo * 10.0);
    double lt = l0 + (l1 - l0) / (1.0 - frac), fr, hi;
    int e = dpprof__pl_floor_i(lt), m = 10;
    fr = lt - e;
    if (fr <= 1e-9)
        m = 1;
    else if (fr <= 0.30102999566398120 + 1e-9)
        m = 2;
    else if (fr <= 0.69897000433601886 + 1e-9)
        m = 5;
    hi = m * dpprof__pl_p10(e);
    if (hi < lo * 10.0) hi = lo * 10.0;
    return hi;
}

/* nice top of a linear axis from 0 (as dpprof__pl_nice_top) for the x axis */
static double dpprof__pl_nice_top_x(dpprof__pl_frame *f, double need_top) {
    dpprof__pl_axis a = f->xa;
    double step;
    a.kind = DPPROF__PL_AX_LIN;
    a.lo = 0.0;
    a.hi = need_top > 0.0 ? need_top : 1.0;
    a.fixed = NULL;
    dpprof__pl_ax_ticks_lin(&a, f->ts, 1, 10 * DPPROF_PLOT_FONT_W * f->ts);
    step = a.nt >= 2 ? a.t[1] - a.t[0] : a.hi;
    if (!(step > 0.0)) step = a.hi;
    return ceil(a.hi / step - 1e-9) * step;
}

/* horizontal grouped bars: groups down the left (group 0 at the top), the
 * value axis along the bottom, labels right of the bar ends. validated and
 * canvas allocated by dpprof_plot_bars */
static int dpprof__pl_hbars(const dpprof_bars_desc *d, dpprof_canvas *canvas, double vmin, double vmax) {
    int G = d->n_groups, S = d->n_series, N = G * S, g, k, i, maxn = 0, lsc = -1;
    double slot, gw, pitch;
    dpprof__pl_frame f;
    dpprof__pl_legend L;
    char buf[32];
    /* the frame's x axis carries the values: its label is the desc's ylabel */
    dpprof__pl_frame_init(&f, canvas, d->title, d->ylabel ? d->ylabel : "peak memory (MiB)", d->xlabel);
    dpprof__pl_frame_scale(&f, d->text_scale);
    f.grid_y = 0;
    f.ya.kind = DPPROF__PL_AX_CAT;
    f.ya.lo = 0.0;
    f.ya.hi = G;
    f.ya.ncat = G;
    f.ya.cat = d->group_names;
    if (d->log_y) {
        int e = dpprof__pl_flog10(vmin);
        f.xa.kind = DPPROF__PL_AX_LOG;
        if (dpprof__pl_p10(e) >= vmin) e--;
        f.xa.lo = dpprof__pl_p10(e);
        f.xa.hi = d->y_max > f.xa.lo ? d->y_max : dpprof__pl_p10(dpprof__pl_flog10(vmax) + 1);
    } else {
        f.xa.kind = DPPROF__PL_AX_LIN;
        f.xa.lo = 0.0;
        f.xa.hi = d->y_max > 0.0 ? d->y_max : (vmax > 0.0 ? vmax : 1.0);
    }
    memset(&L, 0, sizeof L);
    if (S > 1) {
        L.n = S;
        L.names = d->series_names;
        L.rgb = d->series_rgb;
        dpprof__pl_frame_legend(&f, &L);
    }
    dpprof__pl_frame_layout(&f);
    if (S > 1) {
        dpprof__pl_frame_legend(&f, &L);
        dpprof__pl_frame_layout(&f);
    }
    if (!d->hide_values)
        for (i = 0; i < N; i++) {
            dpprof__pl_bar_text(d, (size_t)i, buf, (int)sizeof buf);
            maxn = dpprof__pl_imax(maxn, dpprof__pl_slen(buf));
        }
    /* label scale: the largest whose caps fit the bar pitch */
    {
        double p = (double)(f.y1 - f.y0) / G * (S == 1 ? 0.6 : 0.8) / S;
        if (S == 1) p = (double)(f.y1 - f.y0) / G - f.ts;
        if (maxn > 0) {
            lsc = f.ts;
            while (lsc >= 1 && (DPPROF_PLOT_FONT_H - 2) * lsc > p) lsc--;
        }
        if (lsc < 1) lsc = -1;
    }
    if (d->y_max <= 0.0) {
        double wd = f.x1 - f.x0, need = lsc > 0 ? dpprof__pl_tw(maxn, lsc) + 4.0 * f.ts : 2.0 * f.ts;
        double frac = need / (wd > 1 ? wd : 1);
        if (frac > 0.6) frac = 0.6;
        if (d->log_y)
            f.xa.hi = dpprof__pl_log_top(f.xa.lo, vmax, frac);
        else if (vmax > 0.0)
            f.xa.hi = dpprof__pl_nice_top_x(&f, vmax / (1.0 - frac));
        dpprof__pl_frame_layout(&f);
    }
    dpprof__pl_frame_back(&f);
    slot = (double)(f.y1 - f.y0) / G;
    gw = dpprof__pl_mul(slot, S == 1 ? 0.6 : 0.8);
    pitch = gw / S;
    for (g = 0; g < G; g++) {
        for (k = 0; k < S; k++) {
            double v = d->values[(size_t)k * (size_t)G + (size_t)g];
            double bt = f.y0 + dpprof__pl_mul(slot, g) + (slot - gw) / 2.0;
            int top = dpprof__pl_round(bt + dpprof__pl_mul(pitch, k));
            int bot = dpprof__pl_round(bt + dpprof__pl_mul(pitch, k + 1));
            int right = v != v ? f.x0 : dpprof__pl_iclamp(dpprof__pl_round(dpprof__pl_ax_map(&f.xa, v)), f.x0, f.x1);
            if (v > 0.0 && right <= f.x0) right = f.x0 + 1; /* every bar that is not 0 shows */
            int gap = (S > 1 && pitch >= 8 * f.ts) ? f.ts : 0;
            if (bot - gap <= top) bot = top + 1 + gap;
            if (v == v) dpprof__pl_rect(canvas, f.x0, top, right - f.x0, bot - gap - top, dpprof__pl_bar_rgb(d, k, g));
            if (lsc > 0) {
                int s = f.ts, tw;
                dpprof__pl_bar_text(d, (size_t)k * (size_t)G + (size_t)g, buf, (int)sizeof buf);
                tw = dpprof__pl_tw(dpprof__pl_slen(buf), lsc);
                dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
                dpprof__pl_text_at(canvas, dpprof__pl_imin(right + 3 * s, f.x1 - s - tw), (top + bot - gap) / 2, buf, lsc,
                                   0, 1, dpprof__pl_c_text);
            }
        }
    }
    dpprof__pl_frame_axes(&f);
    if (S > 1 && L.count) dpprof__pl_frame_legend_draw(&f, &L);
    return DPPROF_PLOT_OK;
}

DPPROF_API int dpprof_plot_bars(const dpprof_bars_desc *d, dpprof_canvas *canvas) {
    int G, S, i, g, k, W = 0, H = 0, rc, N, n, lmode, lsc, need;
    double vmax = 0.0, vmin = 0.0, slot, gw, pitch;
    dpprof__pl_frame f;
    dpprof__pl_legend L;

    if (!d || !canvas) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_bars: bad argument (!d || !canvas)");
    G = d->n_groups;
    S = d->n_series;
    if (G < 1 || S < 1 || !d->values) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_bars: bad argument (G < 1 || S < 1 || !d->values)");
    if ((long long)G * S > 1000000) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_bars: bad argument ((long long)G * S > 1000000)");
    if (d->text_scale < 0 || d->text_scale > DPPROF_PLOT_MAX_TEXT_SCALE) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_bars: bad argument (d->text_scale < 0 || d->text_scale > DPPROF_PLOT_MAX_TEXT_SCALE)");
    N = G * S;
    if (!dpprof__pl_finite(d->y_max) || d->y_max < 0.0) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_bars: bad value (!dpprof__pl_finite(d->y_max) || d->y_max < 0.0)");
    for (i = 0, n = 0; i < N; i++) {
        double v = d->values[i];
        if (v != v) continue; /* no value: no bar */
        if (!dpprof__pl_finite(v) || v < 0.0 || (d->log_y && !(v > 0.0))) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_bars: bad value (!dpprof__pl_finite(v) || v < 0.0 || (d->log_y && !(v > 0.0)))");
        if (v > vmax) vmax = v;
        if (n++ == 0 || v < vmin) vmin = v;
        if (d->err_lo && d->err_hi && d->err_lo[i] == d->err_lo[i] && d->err_hi[i] == d->err_hi[i]) { /* the whisker's top within the axis */
            if (!dpprof__pl_finite(d->err_lo[i]) || !dpprof__pl_finite(d->err_hi[i]) || d->err_lo[i] > d->err_hi[i] || d->err_lo[i] < 0.0 || (d->log_y && !(d->err_lo[i] > 0.0)))
                return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_bars: bad value (a whisker's ends: not finite, reversed or below the axis)");
            if (d->err_hi[i] > vmax) vmax = d->err_hi[i];
        }
    }
    if (n == 0 && d->log_y) vmin = vmax = 1.0; /* nothing to draw: any log axis */
    rc = dpprof__pl_fig_size(canvas, d->width, d->height, &W, &H);
    if (rc) return rc;
    if (!canvas->rgb) {
        rc = dpprof_canvas_init(canvas, W, H);
        if (rc) return rc;
    }
    if (d->horizontal) return dpprof__pl_hbars(d, canvas, vmin, vmax);
    dpprof__pl_frame_init(&f, canvas, d->title, d->xlabel, d->ylabel ? d->ylabel : "peak memory (MiB)");
    dpprof__pl_frame_scale(&f, d->text_scale);
    f.grid_x = 0;
    f.xa.kind = DPPROF__PL_AX_CAT;
    f.xa.lo = 0.0;
    f.xa.hi = G;
    f.xa.ncat = G;
    f.xa.cat = d->group_names;
    if (d->log_y) {
        int e = dpprof__pl_flog10(vmin);
        f.ya.kind = DPPROF__PL_AX_LOG;
        /* bars grow from a decade strictly below the smallest value, so every
     * bar has visible height */
        if (dpprof__pl_p10(e) >= vmin) e--;
        f.ya.lo = dpprof__pl_p10(e);
        f.ya.hi = d->y_max > f.ya.lo ? d->y_max : dpprof__pl_p10(dpprof__pl_flog10(vmax) + 1);
    } else {
        f.ya.kind = DPPROF__PL_AX_LIN;
        f.ya.lo = 0.0;
        f.ya.hi = d->y_max > 0.0 ? d->y_max : (vmax > 0.0 ? vmax : 1.0);
    }
    memset(&L, 0, sizeof L);
    if (S > 1) {
        L.n = S;
        L.names = d->series_names;
        L.rgb = d->series_rgb;
        dpprof__pl_frame_legend(&f, &L);
    }

    dpprof__pl_frame_layout(&f);
    if (S > 1) {
        dpprof__pl_frame_legend(&f, &L); /* now with the real data-area height */
        dpprof__pl_frame_layout(&f);
    }
    slot = (double)(f.x1 - f.x0) / G;
    gw = slot * (S == 1 ? 0.6 : 0.8);
    pitch = gw / S;
    need = dpprof__pl_bar_labels(d, S == 1 ? slot - f.ts : pitch, f.ts, &lmode, &lsc);
    if (lmode < 0 && d->value_decimals > 0 && S > 1 && L.count && !f.leg_below) {
        /* value labels asked for (value_decimals) that do not fit bars as narrow as a legend at the right leaves
           them: the legend goes under the plot where the wider bars then hold them */
        dpprof__pl_frame f2 = f;
        dpprof__pl_legend L2 = L;
        int m2, s2, need2;
        f2.leg_band = 1;
        L2.varw = 1; /* each column as wide as its names, a wider gap between them */
        dpprof__pl_frame_legend(&f2, &L2);
        dpprof__pl_frame_layout(&f2);
        dpprof__pl_frame_legend(&f2, &L2);
        dpprof__pl_frame_layout(&f2);
        need2 = dpprof__pl_bar_labels(d, (double)(f2.x1 - f2.x0) / G * 0.8 / S, f2.ts, &m2, &s2);
        if (f2.leg_below && m2 >= 0) {
            f = f2, L = L2, need = need2, lmode = m2, lsc = s2;
            slot = (double)(f.x1 - f.x0) / G;
            gw = slot * 0.8;
            pitch = gw / S;
        }
    }
    if (d->y_max <= 0.0) {
        double hp = f.y1 - f.y0, frac = (need + 2.0 * f.ts) / (hp > 1 ? hp : 1);
        if (frac > 0.6) frac = 0.6;
        if (d->log_y) {
            double l0 = log10(f.ya.lo), l1 = log10(vmax > f.ya.lo ? vmax : f.ya.lo * 10.0);
            double lt = l0 + (l1 - l0) / (1.0 - frac);
            /* smallest 1, 2 or 5 x 10^k at or above 10^lt: whole decades would
       * waste up to 90% of a decade of height */
            int e = dpprof__pl_floor_i(lt), m = 10;
            double fr = lt - e;
            if (fr <= 1e-9)
                m = 1;
            else if (fr <= 0.30102999566398120 + 1e-9)
                m = 2;
            else if (fr <= 0.69897000433601886 + 1e-9)
                m = 5;
            f.ya.hi = m * dpprof__pl_p10(e);
            if (f.ya.hi < f.ya.lo * 10.0) f.ya.hi = f.ya.lo * 10.0;
        } else if (vmax > 0.0) {
            f.ya.hi = dpprof__pl_nice_top(&f, vmax / (1.0 - frac));
        }
        dpprof__pl_frame_layout(&f);
    }

    dpprof__pl_frame_back(&f);
    slot = (double)(f.x1 - f.x0) / G;
    gw = slot * (S == 1 ? 0.6 : 0.8);
    pitch = gw / S;
    dpprof__pl_bar_labels(d, S == 1 ? slot - f.ts : pitch, f.ts, &lmode, &lsc);
    for (g = 0; g < G; g++) {
        for (k = 0; k < S; k++) {
            double v = d->values[(size_t)k * (size_t)G + (size_t)g];
            double bl = f.x0 + dpprof__pl_mul(slot, g) + (slot - gw) / 2.0;
            int left = dpprof__pl_round(bl + dpprof__pl_mul(pitch, k));
            int right = dpprof__pl_round(bl + dpprof__pl_mul(pitch, k + 1));
            int top = v != v ? f.y1 : dpprof__pl_iclamp(dpprof__pl_round(dpprof__pl_ax_map(&f.ya, v)), f.y0, f.y1);
            int gap = (S > 1 && pitch >= 8 * f.ts) ? f.ts : 0;
            if (right - gap <= left) right = left + 1 + gap;
            if (v == v) dpprof__pl_rect(canvas, left, top, right - gap - left, f.y1 - top, dpprof__pl_bar_rgb(d, k, g));
            if (v == v && d->err_lo && d->err_hi) { /* the whisker: a line from lo to hi over the bar's centre, capped */
                const size_t e = (size_t)k * (size_t)G + (size_t)g;
                const double lo = d->err_lo[e], hi = d->err_hi[e];
                if (lo == lo && hi == hi) {
                    const int ylo = dpprof__pl_iclamp(dpprof__pl_round(dpprof__pl_ax_map(&f.ya, lo)), f.y0, f.y1);
                    const int yhi = dpprof__pl_iclamp(dpprof__pl_round(dpprof__pl_ax_map(&f.ya, hi)), f.y0, f.y1);
                    const int cx = (left + right - gap) / 2, lw = dpprof__pl_imax(1, f.ts / 2), cap = dpprof__pl_imax(2, (right - gap - left) / 6);
                    dpprof__pl_rect(canvas, cx - lw / 2, yhi, lw, ylo - yhi + lw, dpprof__pl_c_text);
                    dpprof__pl_rect(canvas, cx - cap, yhi, 2 * cap + 1, lw, dpprof__pl_c_text);
                    dpprof__pl_rect(canvas, cx - cap, ylo, 2 * cap + 1, lw, dpprof__pl_c_text);
                    if (yhi < top) top = yhi; /* the label above the whisker */
                }
            }
            if (lmode >= 0) {
                char buf[32];
                int cx = (left + right - gap) / 2, s = f.ts;
                dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
                dpprof__pl_bar_text(d, (size_t)k * (size_t)G + (size_t)g, buf, (int)sizeof buf);
                if (lmode == 0) {
                    int cy = dpprof__pl_imax(f.y0 + s, top - 2 * s - 10 * lsc);
                    dpprof__pl_text_at(canvas, cx, cy, buf, lsc, 1, 0, dpprof__pl_c_text);
                } else {
                    int tw = dpprof__pl_tw(dpprof__pl_slen(buf), lsc);
                    int by = dpprof__pl_imax(f.y0 + s, top - 2 * s - tw);
                    dpprof__pl_text_n(canvas, cx - (11 * lsc) / 2, by, buf, dpprof__pl_slen(buf), lsc,
                                      dpprof__pl_c_text, 1, 0);
                }
            }
        }
    }
    dpprof__pl_frame_axes(&f);
    if (S > 1 && L.count) dpprof__pl_frame_legend_draw(&f, &L);
    return DPPROF_PLOT_OK;
}

/* ---- shared by the figures below ----------------------------------------- */
static int dpprof__pl_bad_ts(int ts) { return ts < 0 || ts > DPPROF_PLOT_MAX_TEXT_SCALE; }

/* explicit axis range: both 0 -> auto (returns 0), else must be finite,
 * lo < hi, lo > 0 on a log axis (returns 1, or -1 when invalid) */
static int dpprof__pl_range_arg(double lo, double hi, int log_axis) {
    if (lo == 0.0 && hi == 0.0) return 0;
    if (!dpprof__pl_finite(lo) || !dpprof__pl_finite(hi) || !(lo < hi) || (log_axis && !(lo > 0.0))) return -1;
    return 1;
}

/* 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8 x 10^k at or below v (down = 1) or
 * at or above it: log-axis ends that read well and cost no pow() */
static double dpprof__pl_snap125(double v, int down) {
    static const double m[12] = {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0};
    int e = dpprof__pl_flog10(v), i;
    double b = dpprof__pl_p10(e);
    if (down) {
        i = 11;
        while (i > 0 && m[i] * b > v) i--;
        return m[i] * b;
    }
    i = 0;
    while (i < 11 && m[i] * b < v) i++;
    return m[i] * b;
}

/* auto range of a numeric axis over [mn, mx]: linear gets 8% of the span on
 * each side (not below 0 when mn >= 0 and zero_floor), log10 ends snapped
 * outwards to 1-1.2-1.5-2-2.5-3-4-5-6-7-8 x 10^k at least 10% beyond the data */
static void dpprof__pl_auto_range(double mn, double mx, int log_axis, int zero_floor, double *lo, double *hi) {
    if (log_axis) {
        *lo = dpprof__pl_snap125(mn / 1.1, 1);
        *hi = dpprof__pl_snap125(mx * 1.1, 0);
        if (!(*hi > *lo)) *hi = *lo * 10.0;
        return;
    }
    {
        double r = mx - mn;
        if (!(r > 0.0)) r = fabs(mx) > 0.0 ? fabs(mx) * 0.25 : 1.0;
        *lo = mn - dpprof__pl_mul(0.08, r);
        *hi = mx + dpprof__pl_mul(0.08, r);
        if (zero_floor && mn >= 0.0 && *lo < 0.0) *lo = 0.0;
    }
}

/* value labels over bars for maxn chars in room px: flat at the text scale
 * or one below, else rotated (smaller if needed), else flat and smaller,
 * else none (mode -1). returns the px the labels need above a bar */
static int dpprof__pl_lab_mode(int maxn, double room, int ts, int *mode, int *sc) {
    *mode = -1;
    for (*sc = ts; *sc >= dpprof__pl_imax(1, ts - 1); (*sc)--)
        if (dpprof__pl_tw(maxn, *sc) <= room - 2 * *sc) {
            *mode = 0;
            return (DPPROF_PLOT_FONT_H - 2) * *sc + 2 * ts;
        }
    for (*sc = ts; *sc >= 1; (*sc)--) {
        if (dpprof__pl_tw(maxn, *sc) <= room - 2 * *sc) {
            *mode = 0;
            return (DPPROF_PLOT_FONT_H - 2) * *sc + 2 * ts;
        }
        if ((DPPROF_PLOT_FONT_H - 2) * *sc <= room) {
            *mode = 1;
            return dpprof__pl_tw(maxn, *sc) + 3 * ts;
        }
    }
    *sc = 1;
    return 0;
}

/* draws a value label above a bar whose top is at y, centred on cx, in the
 * mode from dpprof__pl_lab_mode */
static void dpprof__pl_lab_above(dpprof_canvas *c, const dpprof__pl_frame *f, int cx, int top, const char *buf,
                                 int mode, int lsc) {
    int s = f->ts;
    dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
    if (mode == 0) {
        int cy = dpprof__pl_imax(f->y0 + s, top - 2 * s - 10 * lsc);
        dpprof__pl_text_at(c, cx, cy, buf, lsc, 1, 0, dpprof__pl_c_text);
    } else if (mode == 1) {
        int tw = dpprof__pl_tw(dpprof__pl_slen(buf), lsc);
        int by = dpprof__pl_imax(f->y0 + s, top - 2 * s - tw);
        dpprof__pl_text_n(c, cx - (11 * lsc) / 2, by, buf, dpprof__pl_slen(buf), lsc, dpprof__pl_c_text, 1, 0);
    }
}

/* dark or white text, whichever contrasts more with bg (wcag contrast with
 * a gamma-2 luminance in integers: dark wins above luminance 0.2) */
static const unsigned char *dpprof__pl_text_on(const unsigned char *bg) {
    long long y = 2126LL * bg[0] * bg[0] + 7152LL * bg[1] * bg[1] + 722LL * bg[2] * bg[2];
    return y > 130050000LL ? dpprof__pl_c_text : dpprof__pl_c_bg;
}

/* ---- heatmap ------------------------------------------------------------- */
/* viridis at 0, 0.1, ..., 1 (matplotlib's table), linearly interpolated */
/* clang-format off */
static const unsigned char dpprof__pl_viridis[11][3] = {
    {68, 1, 84},    {72, 36, 117},  {65, 68, 135},  {53, 95, 141},   {42, 120, 142}, {33, 145, 140},
    {34, 168, 132}, {68, 191, 112}, {122, 209, 81}, {189, 223, 38}, {253, 231, 37}};
/* clang-format on */

/* colour at t in [0, 1] (clamped; nan -> 0) */
static void dpprof__pl_seq_colour(double t, unsigned char *out) {
    double p, fr;
    int i, k;
    if (!(t > 0.0)) t = 0.0;
    if (t > 1.0) t = 1.0;
    p = dpprof__pl_mul(t, 10.0);
    i = dpprof__pl_iclamp(dpprof__pl_floor_i(p), 0, 9);
    fr = p - i;
    for (k = 0; k < 3; k++) {
        double a = dpprof__pl_viridis[i][k], b = dpprof__pl_viridis[i + 1][k];
        out[k] = (unsigned char)dpprof__pl_iclamp(dpprof__pl_round(a + dpprof__pl_mul(b - a, fr)), 0, 255);
    }
}

/* position of v on the colour scale [lo, hi] */
static double dpprof__pl_seq_t(double v, double lo, double hi, int log_scale) {
    if (log_scale) {
        if (!(v > 0.0)) return 0.0;
        return (log10(v) - log10(lo)) / (log10(hi) - log10(lo));
    }
    return (v - lo) / (hi - lo);
}

/* text of cell i (number, cell label or missing label) */
static const char *dpprof__pl_cell_text(const dpprof_heatmap_desc *d, int i, char *buf, int cap) {
    double v = d->values[i];
    if (d->cell_labels && d->cell_labels[i]) return d->cell_labels[i];
    if (!dpprof__pl_finite(v)) return d->missing_label ? d->missing_label : "oom";
    dpprof__pl_fmt_val(buf, cap, v, d->digits > 0 ? d->digits : 3);
    return buf;
}

/* the colour bar right of the data area: gap, bar, ticks, labels, caption */
typedef struct dpprof__pl_cbar {
    dpprof__pl_axis a;
    int gap, bw, w; /* gap after the data area, bar width, total reserved width */
} dpprof__pl_cbar;

static void dpprof__pl_cbar_fit(dpprof__pl_cbar *cb, const dpprof__pl_frame *f, const char *caption) {
    int s = f->ts, ch = DPPROF_PLOT_FONT_H * s;
    cb->gap = 3 * DPPROF_PLOT_FONT_W * s;
    cb->bw = 2 * DPPROF_PLOT_FONT_W * s;
    cb->a.p0 = f->y1 > f->y0 ? f->y1 : f->oy + f->vh * 8 / 10;
    cb->a.p1 = f->y1 > f->y0 ? f->y0 : f->oy + f->vh / 10;
    if (cb->a.kind == DPPROF__PL_AX_LOG)
        dpprof__pl_ax_ticks_log(&cb->a, s, 0, dpprof__pl_vtick_px(fabs(cb->a.p1 - cb->a.p0), s));
    else
        dpprof__pl_ax_ticks_lin(&cb->a, s, 0, dpprof__pl_vtick_px(fabs(cb->a.p1 - cb->a.p0), s));
    cb->w = cb->gap + cb->bw + s + 4 * s + 3 * s + cb->a.lab_w + (caption && caption[0] ? 4 * s + ch : 0) + 2 * s;
}

static void dpprof__pl_cbar_draw(dpprof_canvas *c, const dpprof__pl_cbar *cb, const dpprof__pl_frame *f,
                                 const char *caption) {
    int s = f->ts, bx = f->x1 + s + cb->gap, yy, i, h = f->y1 - f->y0, lx;
    char cut[128];
    for (yy = f->y0; yy < f->y1; yy++) {
        unsigned char col[3];
        /* the row's centre, mapped back to a value's position on the scale */
        double t = (f->y1 - yy - 0.5) / (h > 0 ? h : 1);
        dpprof__pl_seq_colour(t, col);
        dpprof__pl_rect(c, bx, yy, cb->bw, 1, col);
    }
    /* outline just outside the bar */
    dpprof__pl_rect(c, bx - s, f->y0 - s, cb->bw + 2 * s, s, dpprof__pl_c_axis);
    dpprof__pl_rect(c, bx - s, f->y1, cb->bw + 2 * s, s, dpprof__pl_c_axis);
    dpprof__pl_rect(c, bx - s, f->y0, s, h, dpprof__pl_c_axis);
    dpprof__pl_rect(c, bx + cb->bw, f->y0, s, h, dpprof__pl_c_axis);
    dpprof__pl_rec_kind(DPPROF__PL_K_AXIS);
    for (i = 0; i < cb->a.nt; i++) {
        int py = dpprof__pl_ax_pix(&cb->a, cb->a.t[i]);
        if (!cb->a.major[i]) {
            dpprof__pl_rect(c, bx + cb->bw + s, py - s / 2, 2 * s, s, dpprof__pl_c_axis);
            continue;
        }
        dpprof__pl_rect(c, bx + cb->bw + s, py - s / 2, 4 * s, s, dpprof__pl_c_axis);
        dpprof__pl_text_at(c, bx + cb->bw + s + 4 * s + 3 * s, py, cb->a.lab[i], s, 0, 1, dpprof__pl_c_text);
    }
    if (caption && caption[0]) {
        const char *t = dpprof__pl_fit(caption, dpprof__pl_imax(4, h / (DPPROF_PLOT_FONT_W * s)), cut, (int)sizeof cut);
        int tw = dpprof__pl_tw(dpprof__pl_slen(t), s);
        lx = bx + cb->bw + s + 4 * s + 3 * s + cb->a.lab_w + 4 * s;
        dpprof__pl_text_n(c, lx, f->y0 + (h - tw) / 2, t, dpprof__pl_slen(t), s, dpprof__pl_c_text, 1, 1);
    }
}

DPPROF_API int dpprof_plot_heatmap(const dpprof_heatmap_desc *d, dpprof_canvas *canvas) {
    int R, C, N, i, r, cc, W = 0, H = 0, rc, any = 0, lsc = 0, it;
    double vmin = 0.0, vmax = 0.0, lo, hi;
    const char **rnames = NULL;
    dpprof__pl_frame f;
    dpprof__pl_cbar cb;
    char buf[40];

    if (!d || !canvas || !d->values) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_heatmap: bad argument (!d || !canvas || !d->values)");
    R = d->n_rows;
    C = d->n_cols;
    if (R < 1 || C < 1 || (long long)R * C > 1000000 || dpprof__pl_bad_ts(d->text_scale)) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_heatmap: bad argument (R < 1 || C < 1 || (long long)R * C > 1000000 || dpprof__pl_bad_ts(d->text_scale))");
    N = R * C;
    if (d->digits < 0 || d->digits > 15) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_heatmap: bad value (d->digits < 0 || d->digits > 15)");
    for (i = 0; i < N; i++) {
        double v = d->values[i];
        if (v != v) continue; /* missing */
        if (!dpprof__pl_finite(v) || (d->log_scale && !(v > 0.0))) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_heatmap: bad value (!dpprof__pl_finite(v) || (d->log_scale && !(v > 0.0)))");
        if (!any || v < vmin) vmin = v;
        if (!any || v > vmax) vmax = v;
        any = 1;
    }
    rc = dpprof__pl_range_arg(d->v_min, d->v_max, d->log_scale);
    if (rc < 0) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_heatmap: bad value (rc < 0)");
    if (rc > 0) {
        lo = d->v_min;
        hi = d->v_max;
    } else if (!any) {
        lo = d->log_scale ? 1.0 : 0.0;
        hi = d->log_scale ? 10.0 : 1.0;
    } else if (vmax > vmin) {
        lo = vmin;
        hi = vmax;
    } else if (d->log_scale) {
        lo = vmin / 2.0;
        hi = vmin * 2.0;
    } else {
        double r0 = fabs(vmin) > 0.0 ? fabs(vmin) * 0.1 : 0.5;
        lo = vmin - r0;
        hi = vmin + r0;
    }
    rc = dpprof__pl_fig_size(canvas, d->width, d->height, &W, &H);
    if (rc) return rc;
    if (d->rows_up) {
        rnames = (const char **)DPPROF_MALLOC(sizeof(const char *) * (size_t)R + 32u * (size_t)R);
        if (!rnames) return dpprof_fail(DPPROF_PLOT_ENOMEM, "dpprof_plot_heatmap: out of memory (!rnames)");
    }
    if (!canvas->rgb) {
        rc = dpprof_canvas_init(canvas, W, H);
        if (rc) {
            if (rnames) DPPROF_FREE((void *)rnames);
            return rc;
        }
    }
    if (rnames) {
        /* rows drawn bottom-up: the frame lists names top-down */
        char *nb = (char *)(rnames + R);
        for (r = 0; r < R; r++) {
            int src = R - 1 - r;
            if (d->row_names && d->row_names[src]) {
                rnames[r] = d->row_names[src];
            } else {
                snprintf(nb + 32 * r, 32, "%d", src);
                rnames[r] = nb + 32 * r;
            }
        }
    }

    dpprof__pl_frame_init(&f, canvas, d->title, d->xlabel, d->ylabel);
    dpprof__pl_frame_scale(&f, d->text_scale);
    f.grid_x = f.grid_y = 0;
    f.xa.kind = DPPROF__PL_AX_CAT;
    f.xa.lo = 0.0;
    f.xa.hi = C;
    f.xa.ncat = C;
    f.xa.cat = d->col_names;
    f.ya.kind = DPPROF__PL_AX_CAT;
    f.ya.lo = 0.0;
    f.ya.hi = R;
    f.ya.ncat = R;
    f.ya.cat = rnames ? (const char *const *)rnames : d->row_names;
    memset(&cb, 0, sizeof cb);
    cb.a.kind = d->log_scale ? DPPROF__PL_AX_LOG : DPPROF__PL_AX_LIN;
    cb.a.lo = lo;
    cb.a.hi = hi;
    /* the bar's ticks depend on the data height, which depends on nothing
   * the bar changes; its width only grows between passes */
    dpprof__pl_cbar_fit(&cb, &f, d->value_label);
    f.right_w = cb.w;
    for (it = 0; it < 4; it++) {
        int w0 = f.right_w;
        dpprof__pl_frame_layout(&f);
        dpprof__pl_cbar_fit(&cb, &f, d->value_label);
        f.right_w = dpprof__pl_imax(f.right_w, cb.w);
        if (f.right_w == w0) break;
    }
    dpprof__pl_frame_layout(&f);
    dpprof__pl_cbar_fit(&cb, &f, d->value_label);

    dpprof__pl_frame_back(&f);
    {
        int s = f.ts, g = dpprof__pl_imax(1, (2 * s + 1) / 3), gh = g / 2, minw = 1 << 30, minh = 1 << 30, maxn = 0;
        /* the common text scale: every cell's text fits its cell */
        for (cc = 0; cc < C; cc++)
            minw = dpprof__pl_imin(minw, dpprof__pl_round(dpprof__pl_ax_map(&f.xa, cc + 1)) -
                                             dpprof__pl_round(dpprof__pl_ax_map(&f.xa, cc)) - g);
        for (r = 0; r < R; r++)
            minh = dpprof__pl_imin(minh, dpprof__pl_round(dpprof__pl_ax_map(&f.ya, r + 1)) -
                                             dpprof__pl_round(dpprof__pl_ax_map(&f.ya, r)) - g);
        for (i = 0; i < N; i++) maxn = dpprof__pl_imax(maxn, dpprof__pl_slen(dpprof__pl_cell_text(d, i, buf, (int)sizeof buf)));
        for (lsc = s; lsc >= 1; lsc--)
            if (dpprof__pl_tw(maxn, lsc) + 4 * lsc <= minw && 15 * lsc <= minh) break; /* the cell box, descenders too */
        for (r = 0; r < R; r++) {
            int vr = d->rows_up ? R - 1 - r : r; /* visual row from the top */
            int yt = dpprof__pl_round(dpprof__pl_ax_map(&f.ya, vr)), yb = dpprof__pl_round(dpprof__pl_ax_map(&f.ya, vr + 1));
            if (vr > 0) yt += gh;
            if (vr < R - 1) yb -= g - gh;
            for (cc = 0; cc < C; cc++) {
                int xl = dpprof__pl_round(dpprof__pl_ax_map(&f.xa, cc)), xr = dpprof__pl_round(dpprof__pl_ax_map(&f.xa, cc + 1));
                double v = d->values[(size_t)r * (size_t)C + (size_t)cc];
                const char *t;
                const unsigned char *tc;
                unsigned char col[3];
                if (cc > 0) xl += gh;
                if (cc < C - 1) xr -= g - gh;
                if (xr <= xl || yb <= yt) continue;
                if (dpprof__pl_finite(v)) {
                    dpprof__pl_seq_colour(dpprof__pl_seq_t(v, lo, hi, d->log_scale), col);
                    dpprof__pl_rect(canvas, xl, yt, xr - xl, yb - yt, col);
                    tc = dpprof__pl_text_on(col);
                } else {
                    dpprof__pl_hatch(canvas, xl, yt, xr - xl, yb - yt, s);
                    tc = dpprof__pl_c_text;
                }
                if (lsc < 1) continue;
                t = dpprof__pl_cell_text(d, r * C + cc, buf, (int)sizeof buf);
                if (!t[0]) continue;
                {
                    int tw = dpprof__pl_tw(dpprof__pl_slen(t), lsc), cx = (xl + xr) / 2, cy = (yt + yb) / 2;
                    if (!dpprof__pl_finite(v)) /* a plain patch so stripes do not cut the letters */
                        dpprof__pl_rect(canvas, cx - tw / 2 - lsc, cy - (11 * lsc) / 2 - lsc, tw + 2 * lsc, 11 * lsc + 2 * lsc,
                                        dpprof__pl_c_miss);
                    dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
                    dpprof__pl_text_at(canvas, cx, cy, t, lsc, 1, 1, tc);
                }
            }
        }
    }
    dpprof__pl_frame_axes(&f);
    dpprof__pl_cbar_draw(canvas, &cb, &f, d->value_label);
    if (rnames) DPPROF_FREE((void *)rnames);
    return DPPROF_PLOT_OK;
}

/* ---- stacked bars with an overhead panel ---------------------------------- */
/* ratio text: "1.00x" below 10, "12.3x" below 100, then whole numbers;
 * short (for narrow slots) drops one decimal: "1.0x", "12x" */
static void dpprof__pl_fmt_ratio(char *buf, int cap, double r, int short_form) {
    size_t n;
    if (r < (short_form ? 9.95 : 9.995))
        dpprof__pl_fmt_fixed(buf, cap, r, short_form ? 1 : 2);
    else if (r < 99.95)
        dpprof__pl_fmt_fixed(buf, cap, r, short_form ? 0 : 1);
    else if (r < 1e7)
        dpprof__pl_fmt_fixed(buf, cap, r, 0);
    else
        dpprof__pl_fmt_sig(buf, cap, r, 3);
    n = strlen(buf);
    if ((int)n < cap - 1) {
        buf[n] = 'x';
        buf[n + 1] = 0;
    }
}

/* group g's total, or nan when any of its values is nan (did not run) */
static double dpprof__pl_stack_total(const dpprof_stacked_desc *d, int g) {
    double t = 0.0;
    int k;
    for (k = 0; k < d->n_cats; k++) {
        double v = d->values[(size_t)k * (size_t)d->n_groups + (size_t)g];
        if (v != v) return v;
        t += v;
    }
    return t;
}

/* the metric the ratio is taken of */
static double dpprof__pl_stack_metric(const dpprof_stacked_desc *d, int g) {
    return d->overhead ? d->overhead[g] : dpprof__pl_stack_total(d, g);
}

static const unsigned char dpprof__pl_c_dot[3] = {80, 80, 80};

/* lays out the bars panel ft and the overhead panel fb: margins measured on
 * the whole canvas, the data heights split 70:30 (the ratios get at least
 * room for a label over a dot while that is at most half), each panel in its
 * band, then both given the wider left and right margins so the group slots
 * line up */
static void dpprof__pl_stack_split(dpprof__pl_frame *ft, dpprof__pl_frame *fb, int H) {
    int mt, mb, nt, nb, D, Db, Htop, s = fb->ts;
    ft->oy = fb->oy = 0;
    ft->vh = fb->vh = H;
    ft->min_left = ft->min_right = fb->min_left = fb->min_right = 0;
    dpprof__pl_frame_layout(ft);
    dpprof__pl_frame_layout(fb);
    mt = ft->y0;
    mb = H - ft->y1;
    nt = fb->y0;
    nb = H - fb->y1;
    D = H - mt - mb - nt - nb;
    /* 30% for the ratios, but room for a label over a dot when the figure is
   * short (up to half of the data height) */
    Db = dpprof__pl_imax(D * 3 / 10, dpprof__pl_imin(D / 2, 2 * (3 * s + 1) + 6 * s + 2 * DPPROF_PLOT_FONT_H * s));
    Htop = dpprof__pl_iclamp(mt + D - Db + mb, H / 4, H * 9 / 10);
    ft->vh = Htop;
    fb->oy = Htop;
    fb->vh = H - Htop;
    dpprof__pl_frame_layout(ft);
    dpprof__pl_frame_layout(fb);
    ft->min_left = fb->min_left = dpprof__pl_imax(dpprof__pl_frame_left(ft), dpprof__pl_frame_left(fb));
    ft->min_right = fb->min_right = dpprof__pl_imax(dpprof__pl_frame_right(ft), dpprof__pl_frame_right(fb));
    dpprof__pl_frame_layout(ft);
    dpprof__pl_frame_layout(fb);
}

DPPROF_API int dpprof_plot_stacked(const dpprof_stacked_desc *d, dpprof_canvas *canvas) {
    int G, K, g, k, i, W = 0, H = 0, rc, panel, lmode = -1, lsc = 1, maxn = 0, rmode = -1, rsc = 1, rmaxn = 0;
    int rmaxn1 = 0, rshort = 0, caplines = 1;
    const char *capt = "";
    double tmax = 0.0, rmax = 0.0, ref = 0.0;
    unsigned char *show;
    const char *miss;
    dpprof__pl_frame ft, fb;
    dpprof__pl_legend L;
    char buf[48], cap[160], nb[32];

    if (!d || !canvas || !d->values) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_stacked: bad argument (!d || !canvas || !d->values)");
    G = d->n_groups;
    K = d->n_cats;
    if (G < 1 || K < 1 || (long long)G * K > 1000000 || dpprof__pl_bad_ts(d->text_scale)) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_stacked: bad argument (G < 1 || K < 1 || (long long)G * K > 1000000 || dpprof__pl_bad_ts(d->text_scale))");
    if (d->ref_group < 0 || d->ref_group >= G) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_stacked: bad argument (d->ref_group < 0 || d->ref_group >= G)");
    if (!dpprof__pl_finite(d->y_max) || d->y_max < 0.0) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_stacked: bad value (!dpprof__pl_finite(d->y_max) || d->y_max < 0.0)");
    for (i = 0; i < G * K; i++) {
        double v = d->values[i];
        if (v != v) continue;
        if (!dpprof__pl_finite(v) || v < 0.0) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_stacked: bad value (!dpprof__pl_finite(v) || v < 0.0)");
    }
    for (g = 0; g < G; g++) {
        double t = dpprof__pl_stack_total(d, g);
        if (t == t && !dpprof__pl_finite(t)) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_stacked: bad value (t == t && !dpprof__pl_finite(t))"); /* sum overflowed */
        if (t > tmax) tmax = t;
        if (d->overhead && d->overhead[g] == d->overhead[g] &&
            (!dpprof__pl_finite(d->overhead[g]) || d->overhead[g] < 0.0))
            return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_stacked: bad value");
    }
    panel = !d->no_overhead;
    if (panel) {
        ref = dpprof__pl_stack_metric(d, d->ref_group);
        if (!(ref > 0.0) || !dpprof__pl_finite(ref)) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_stacked: bad value (!(ref > 0.0) || !dpprof__pl_finite(ref))");
        for (g = 0; g < G; g++) {
            double m = dpprof__pl_stack_metric(d, g), r;
            if (m != m) continue;
            r = m / ref;
            if (!dpprof__pl_finite(r)) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_stacked: bad value (!dpprof__pl_finite(r))");
            if (r > rmax) rmax = r;
            dpprof__pl_fmt_ratio(buf, (int)sizeof buf, r, 0);
            rmaxn = dpprof__pl_imax(rmaxn, dpprof__pl_slen(buf));
            dpprof__pl_fmt_ratio(buf, (int)sizeof buf, r, 1);
            rmaxn1 = dpprof__pl_imax(rmaxn1, dpprof__pl_slen(buf));
        }
    }
    rc = dpprof__pl_fig_size(canvas, d->width, d->height, &W, &H);
    if (rc) return rc;
    show = (unsigned char *)DPPROF_MALLOC((size_t)K);
    if (!show) return dpprof_fail(DPPROF_PLOT_ENOMEM, "dpprof_plot_stacked: out of memory (!show)");
    if (!canvas->rgb) {
        rc = dpprof_canvas_init(canvas, W, H);
        if (rc) {
            DPPROF_FREE(show);
            return rc;
        }
    }
    miss = d->missing_label ? d->missing_label : "oom";
    for (k = 0; k < K; k++) {
        show[k] = 0;
        for (g = 0; g < G && !show[k]; g++) {
            double v = d->values[(size_t)k * (size_t)G + (size_t)g];
            if (v > 0.0 && dpprof__pl_stack_total(d, g) == dpprof__pl_stack_total(d, g)) show[k] = 1;
        }
    }
    if (!d->hide_totals)
        for (g = 0; g < G; g++) {
            double t = dpprof__pl_stack_total(d, g);
            if (t == t) dpprof__pl_fmt_val(buf, (int)sizeof buf, t, 4);
            else snprintf(buf, sizeof buf, "%s", "");
            maxn = dpprof__pl_imax(maxn, dpprof__pl_slen(buf));
        }

    /* top panel: the bars; bottom panel: the ratios, same x slots */
    dpprof__pl_frame_init(&ft, canvas, d->title, panel ? "" : d->xlabel, d->ylabel ? d->ylabel : "peak memory (MiB)");
    dpprof__pl_frame_scale(&ft, d->text_scale);
    ft.grid_x = 0;
    ft.hide_x = panel;
    ft.xa.kind = DPPROF__PL_AX_CAT;
    ft.xa.lo = 0.0;
    ft.xa.hi = G;
    ft.xa.ncat = G;
    ft.xa.cat = d->group_names;
    ft.ya.kind = DPPROF__PL_AX_LIN;
    ft.ya.lo = 0.0;
    ft.ya.hi = d->y_max > 0.0 ? d->y_max : (tmax > 0.0 ? tmax : 1.0);
    fb = ft;
    fb.title = "";
    fb.xlabel = d->xlabel ? d->xlabel : "";
    fb.ylabel = "";
    fb.hide_x = 0;
    fb.grid_x = 0;
    fb.ya.kind = DPPROF__PL_AX_LIN;
    fb.ya.lo = 0.0;
    fb.ya.hi = rmax > 1.0 ? rmax : 1.0;
    fb.ya.suffix = "x";
    fb.top_h = DPPROF_PLOT_FONT_H * ft.ts + 4 * ft.ts; /* caption band */
    memset(&L, 0, sizeof L);
    L.n = K;
    L.names = d->cat_names;
    L.rgb = d->cat_rgb;
    L.show = show;
    if (!panel) {
        int pass;
        dpprof__pl_frame_legend(&ft, &L);
        dpprof__pl_frame_layout(&ft);
        /* the real data-area height; a legend cut to the height of the first layout's (its category labels
           rotated in a narrower area) gets the next layout's, once */
        for (pass = 0; pass < 2; pass++) {
            dpprof__pl_frame_legend(&ft, &L);
            dpprof__pl_frame_layout(&ft);
            if (!dpprof__pl_legend_cut(&L)) break;
        }
    } else {
        /* the legend is placed once for the whole figure, from a layout without
     * it: right of both panels (from the top of the bars down to the bottom
     * margin) or in a band under the overhead panel */
        dpprof__pl_frame tmp;
        dpprof__pl_stack_split(&ft, &fb, H);
        tmp = ft;
        tmp.vh = H;
        tmp.y1 = ft.y0 + (ft.y1 - ft.y0) + (fb.y1 - fb.y0);
        tmp.leg_max_h = H - ft.y0 - 6 * ft.ts;
        dpprof__pl_frame_legend(&tmp, &L);
        ft.right_w = fb.right_w = tmp.right_w;
        fb.bot_h = tmp.bot_h;
        fb.leg_below = tmp.leg_below;
        dpprof__pl_stack_split(&ft, &fb, H);
        /* the caption wraps into a second line rather than be cut; the bars'
     * y label may run down beside the overhead panel (that column is free) */
        if (d->overhead_label) {
            capt = d->overhead_label;
        } else {
            /* "<y label without its unit> relative to <ref>" for the totals */
            const char *yl = d->overhead ? "" : ft.ylabel, *open = strrchr(yl, '(');
            int n = open ? (int)(open - yl) : dpprof__pl_slen(yl);
            while (n > 0 && yl[n - 1] == ' ') n--;
            if (n > 60) n = 60;
            snprintf(cap, sizeof cap, "%.*s%srelative to %s", n, yl, n ? " " : "",
                     dpprof__pl_name(d->group_names, d->ref_group, "", nb, (int)sizeof nb));
            capt = cap;
        }
        if (dpprof__pl_tw(dpprof__pl_slen(capt), fb.ts) > fb.x1 - fb.x0) {
            caplines = 2;
            fb.top_h = 2 * DPPROF_PLOT_FONT_H * fb.ts + 4 * fb.ts;
        }
        ft.ylab_y0 = ft.y0;
        ft.ylab_y1 = fb.y1;
        dpprof__pl_stack_split(&ft, &fb, H);
        ft.ylab_y0 = ft.y0;
        ft.ylab_y1 = fb.y1;
    }
    {
        /* room above the bars for the totals, above the dots for the ratios */
        double slot = (double)(ft.x1 - ft.x0) / G, hp;
        int need = 0, rneed = 0;
        if (maxn > 0) need = dpprof__pl_lab_mode(maxn, slot - ft.ts, ft.ts, &lmode, &lsc);
        if (d->y_max <= 0.0 && tmax > 0.0) {
            double frac;
            hp = ft.y1 - ft.y0;
            frac = (need + 2.0 * ft.ts) / (hp > 1 ? hp : 1);
            if (frac > 0.6) frac = 0.6;
            ft.ya.hi = dpprof__pl_nice_top(&ft, tmax / (1.0 - frac));
        }
        if (panel) {
            double frac, r = 3 * fb.ts + 1;
            /* ratio labels flat over their slot: "1.00x" at the text scale or one
       * below, else "1.0x" there, else smaller, else none */
            int tier, fl = dpprof__pl_imax(1, fb.ts - 1);
            for (tier = 0; tier < 4 && rmode < 0 && rmaxn > 0; tier++) {
                int hi = tier < 2 ? fb.ts : fl - 1, lo = tier < 2 ? fl : 1, nn = tier % 2 ? rmaxn1 : rmaxn;
                for (rsc = hi; rsc >= lo; rsc--)
                    if (dpprof__pl_tw(nn, rsc) <= slot - 2 * rsc) {
                        rmode = 0;
                        rshort = tier % 2;
                        break;
                    }
            }
            rneed = rmode == 0 ? (DPPROF_PLOT_FONT_H - 2) * rsc + 2 * fb.ts : 0;
            hp = fb.y1 - fb.y0;
            frac = (rneed + r + 3.0 * fb.ts) / (hp > 1 ? hp : 1);
            if (frac > 0.7) frac = 0.7;
            fb.ya.hi = dpprof__pl_nice_top(&fb, (rmax > 1.0 ? rmax : 1.0) / (1.0 - frac));
            dpprof__pl_frame_layout(&fb);
        }
        dpprof__pl_frame_layout(&ft);
    }

    /* both backgrounds first: the bars' y label may run down into the
   * overhead panel's band */
    dpprof__pl_frame_back(&ft);
    if (panel) dpprof__pl_frame_back(&fb);
    /* top panel */
    {
        double slot = (double)(ft.x1 - ft.x0) / G, bw = dpprof__pl_mul(slot, 0.6);
        for (g = 0; g < G; g++) {
            double bl = ft.x0 + dpprof__pl_mul(slot, g) + (slot - bw) / 2.0, cum = 0.0;
            int left = dpprof__pl_round(bl), right = dpprof__pl_round(bl + bw), ybot = ft.y1, cx;
            double t = dpprof__pl_stack_total(d, g);
            if (right <= left) right = left + 1;
            cx = (left + right) / 2;
            if (t != t) {
                /* did not run or fit: its label where the bar would start */
                int tw, sc2 = ft.ts;
                while (sc2 > 1 && dpprof__pl_tw(dpprof__pl_slen(miss), sc2) > slot - 2 * sc2) sc2--;
                tw = dpprof__pl_tw(dpprof__pl_slen(miss), sc2);
                dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
                if (tw <= slot - 2 * sc2)
                    dpprof__pl_text_at(canvas, cx, ft.y1 - 2 * ft.ts, miss, sc2, 1, 2, dpprof__pl_c_text);
                continue;
            }
            for (k = 0; k < K; k++) {
                double v = d->values[(size_t)k * (size_t)G + (size_t)g];
                int ytop;
                if (!(v > 0.0)) continue;
                cum += v;
                ytop = dpprof__pl_iclamp(dpprof__pl_round(dpprof__pl_ax_map(&ft.ya, cum)), ft.y0, ft.y1);
                if (ytop < ybot) dpprof__pl_rect(canvas, left, ytop, right - left, ybot - ytop, dpprof__pl_series_rgb(d->cat_rgb, k));
                ybot = ytop;
            }
            if (lmode >= 0) {
                dpprof__pl_fmt_val(buf, (int)sizeof buf, t, 4);
                dpprof__pl_lab_above(canvas, &ft, cx, ybot, buf, lmode, lsc);
            }
        }
    }
    dpprof__pl_frame_axes(&ft);

    /* overhead panel */
    if (panel) {
        int s = fb.ts, r = 3 * s + 1, y1x = dpprof__pl_ax_pix(&fb.ya, 1.0);
        const int clip[4] = {fb.x0, fb.y0, fb.x1, fb.y1};
        dpprof__pl_dashes(canvas, 0, y1x, fb.x0, fb.x1 - 1, s, 4 * s, 3 * s, dpprof__pl_c_mark);
        for (g = 0; g < G; g++) {
            double m = dpprof__pl_stack_metric(d, g), ratio;
            int cx, cy, stw = dpprof__pl_imax(1, (s + 1) / 2) + s / 2;
            const unsigned char *col = d->group_rgb ? d->group_rgb + 3 * (size_t)g : dpprof__pl_c_dot;
            cx = dpprof__pl_floor_i(dpprof__pl_ax_map(&fb.xa, g + 0.5));
            if (m != m) {
                /* a group that did not run says so here too */
                double t = dpprof__pl_stack_total(d, g);
                int sc2 = s;
                if (t == t) continue;
                while (sc2 > 1 && dpprof__pl_tw(dpprof__pl_slen(miss), sc2) > (fb.x1 - fb.x0) / G - 2 * sc2) sc2--;
                if (dpprof__pl_tw(dpprof__pl_slen(miss), sc2) <= (fb.x1 - fb.x0) / G - 2 * sc2 &&
                    DPPROF_PLOT_FONT_H * sc2 + 3 * s <= fb.y1 - fb.y0) {
                    dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
                    dpprof__pl_text_at(canvas, cx, fb.y1 - 2 * s, miss, sc2, 1, 2, dpprof__pl_c_text);
                }
                continue;
            }
            ratio = m / ref;
            cy = dpprof__pl_iclamp(dpprof__pl_round(dpprof__pl_ax_map(&fb.ya, ratio)), fb.y0, fb.y1 - 1);
            /* stem from the 1.00x line to the dot */
            if (cy != y1x)
                dpprof__pl_rect_in(canvas, cx - (stw - 1) / 2, dpprof__pl_imin(cy, y1x), stw, (cy > y1x ? cy - y1x : y1x - cy) + 1,
                                   col, clip);
            dpprof__pl_marker(canvas, cx, cy, DPPROF_PLOT_MARKER_CIRCLE, r, col, clip);
            if (rmode == 0) {
                int th = (DPPROF_PLOT_FONT_H - 2) * rsc, ty;
                dpprof__pl_fmt_ratio(buf, (int)sizeof buf, ratio, rshort);
                /* above the dot; for ratios below 1 below it (the stem is above),
         * or above the 1.00x line when there is no room under the dot */
                if (cy <= y1x)
                    ty = cy - r - 2 * s - th;
                else if (cy + r + 2 * s + DPPROF_PLOT_FONT_H * rsc <= fb.y1 - s)
                    ty = cy + r + 2 * s - rsc;
                else
                    ty = y1x - 2 * s - th;
                /* a label that would leave the panel is left out */
                if (ty - rsc >= fb.y0 + s && ty - rsc + DPPROF_PLOT_FONT_H * rsc <= fb.y1) {
                    dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
                    dpprof__pl_text_at(canvas, cx, ty - rsc, buf, rsc, 1, 0, dpprof__pl_c_text);
                }
            }
        }
        dpprof__pl_frame_axes(&fb);
        {
            /* caption in the band above the panel, left-aligned on the data */
            int maxc = dpprof__pl_imax(4, (fb.x1 - fb.x0 + s) / (DPPROF_PLOT_FONT_W * s)), st[DPPROF__PL_WRAP_MAX],
                ln[DPPROF__PL_WRAP_MAX], nl = 1, q;
            st[0] = 0;
            ln[0] = dpprof__pl_slen(capt);
            if (caplines == 2) nl = dpprof__pl_imin(2, dpprof__pl_wrap(capt, maxc, st, ln, DPPROF__PL_WRAP_MAX, NULL));
            if (nl == 2) ln[1] = dpprof__pl_slen(capt + st[1]);
            dpprof__pl_rec_kind(DPPROF__PL_K_AXIS);
            for (q = 0; q < nl; q++) {
                char part[160];
                const char *t;
                int m = dpprof__pl_imin(ln[q], (int)sizeof part - 1);
                memcpy(part, capt + st[q], (size_t)m);
                part[m] = 0;
                t = dpprof__pl_fit(part, maxc, buf, (int)sizeof buf);
                dpprof__pl_text_n(canvas, fb.x0, fb.y0 - 3 * s - (nl - q) * DPPROF_PLOT_FONT_H * s, t, dpprof__pl_slen(t), s,
                                  dpprof__pl_c_text, 0, 0);
            }
        }
        if (L.count) dpprof__pl_frame_legend_draw(fb.leg_below ? &fb : &ft, &L);
    } else if (L.count) {
        dpprof__pl_frame_legend_draw(&ft, &L);
    }
    DPPROF_FREE(show);
    return DPPROF_PLOT_OK;
}

/* ---- scatter ---------------------------------------------------------------- */
/* occupancy of the data area, one bit per pixel: markers and placed labels */
typedef struct dpprof__pl_occ {
    int x0, y0, w, h;
    unsigned char *bits;
} dpprof__pl_occ;

static void dpprof__pl_occ_set(dpprof__pl_occ *o, int x, int y, int w, int h) {
    int xa = dpprof__pl_imax(x - o->x0, 0), ya = dpprof__pl_imax(y - o->y0, 0);
    int xb = dpprof__pl_imin(x + w - o->x0, o->w), yb = dpprof__pl_imin(y + h - o->y0, o->h), xx, yy;
    for (yy = ya; yy < yb; yy++)
        for (xx = xa; xx < xb; xx++) {
            size_t b = (size_t)yy * (size_t)o->w + (size_t)xx;
            o->bits[b >> 3] = (unsigned char)(o->bits[b >> 3] | (1u << (b & 7u)));
        }
}

/* 1 when the box lies inside the area and touches nothing set */
static int dpprof__pl_occ_free(const dpprof__pl_occ *o, int x, int y, int w, int h) {
    int xx, yy;
    if (x < o->x0 || y < o->y0 || x + w > o->x0 + o->w || y + h > o->y0 + o->h) return 0;
    for (yy = y - o->y0; yy < y - o->y0 + h; yy++)
        for (xx = x - o->x0; xx < x - o->x0 + w; xx++) {
            size_t b = (size_t)yy * (size_t)o->w + (size_t)xx;
            if (o->bits[b >> 3] & (1u << (b & 7u))) return 0;
        }
    return 1;
}

/* squared distance from (x, y) to the box [bx, bx+bw) x [by, by+bh) */
static long long dpprof__pl_dist2(int x, int y, int bx, int by, int bw, int bh) {
    long long dx = x < bx ? bx - x : (x >= bx + bw ? x - (bx + bw - 1) : 0);
    long long dy = y < by ? by - y : (y >= by + bh ? y - (by + bh - 1) : 0);
    return dx * dx + dy * dy;
}

/* points bucketed on a grid of cs px over the data area, for "is another
 * point nearer to this label than its own?" */
typedef struct dpprof__pl_grid {
    int x0, y0, cs, gw, gh;
    int *head, *next;
} dpprof__pl_grid;

/* 1 when every other point is at least 1.25 times as far from the box as
 * self (so the label cannot be read as naming a neighbour) */
static int dpprof__pl_label_owned(const dpprof__pl_grid *g, const int *px, int self, int bx, int by, int bw, int bh) {
    long long own = dpprof__pl_dist2(px[2 * self], px[2 * self + 1], bx, by, bw, bh);
    int reach = (int)(1.25 * sqrt((double)own)) + 2, cx0, cx1, cy0, cy1, cx, cy;
    cx0 = dpprof__pl_iclamp((bx - reach - g->x0) / g->cs - 1, 0, g->gw - 1);
    cx1 = dpprof__pl_iclamp((bx + bw + reach - g->x0) / g->cs + 1, 0, g->gw - 1);
    cy0 = dpprof__pl_iclamp((by - reach - g->y0) / g->cs - 1, 0, g->gh - 1);
    cy1 = dpprof__pl_iclamp((by + bh + reach - g->y0) / g->cs + 1, 0, g->gh - 1);
    for (cy = cy0; cy <= cy1; cy++)
        for (cx = cx0; cx <= cx1; cx++) {
            int q;
            for (q = g->head[cy * g->gw + cx]; q >= 0; q = g->next[q])
                if (q != self && 16 * dpprof__pl_dist2(px[2 * q], px[2 * q + 1], bx, by, bw, bh) < 25 * own) return 0;
        }
    return 1;
}

static int dpprof__pl_bad_marker(const int *m, int n) {
    int i;
    if (!m) return 0;
    for (i = 0; i < n; i++)
        if (m[i] < 0 || m[i] >= DPPROF_PLOT_MARKER_N) return 1;
    return 0;
}

DPPROF_API int dpprof_plot_scatter(const dpprof_scatter_desc *d, dpprof_canvas *canvas) {
    int n, i, W = 0, H = 0, rc, rx, ry, s, r;
    size_t gmax;
    dpprof__pl_grid grid;
    double xmn = 0.0, xmx = 0.0, ymn = 0.0, ymx = 0.0;
    dpprof__pl_frame f;
    dpprof__pl_legend L;
    dpprof__pl_occ occ;
    int *px;

    if (!d || !canvas || !d->x || !d->y) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_scatter: bad argument (!d || !canvas || !d->x || !d->y)");
    n = d->n_points;
    if (n < 1 || n > 1000000 || d->n_legend < 0 || (d->n_legend > 0 && !d->legend_names) ||
        dpprof__pl_bad_ts(d->text_scale) || dpprof__pl_bad_marker(d->point_marker, n) ||
        dpprof__pl_bad_marker(d->legend_marker, d->n_legend))
        return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_scatter: bad argument");
    for (i = 0; i < n; i++) {
        double x = d->x[i], y = d->y[i];
        if (!dpprof__pl_finite(x) || !dpprof__pl_finite(y) || (d->log_x && !(x > 0.0)) || (d->log_y && !(y > 0.0)))
            return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_scatter: bad value (!dpprof__pl_finite(x) || !dpprof__pl_finite(y) || (d->log_x && !(x > 0.0)) || (d->log_y && !(y > 0.0)))");
        if (i == 0 || x < xmn) xmn = x;
        if (i == 0 || x > xmx) xmx = x;
        if (i == 0 || y < ymn) ymn = y;
        if (i == 0 || y > ymx) ymx = y;
    }
    rx = dpprof__pl_range_arg(d->x_min, d->x_max, d->log_x);
    ry = dpprof__pl_range_arg(d->y_min, d->y_max, d->log_y);
    if (rx < 0 || ry < 0) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_scatter: bad value (rx < 0 || ry < 0)");
    rc = dpprof__pl_fig_size(canvas, d->width, d->height, &W, &H);
    if (rc) return rc;
    /* point pixels, grid links and heads (cells of at least 16 px), then the
   * occupancy bits (all sized for the whole canvas) */
    gmax = ((size_t)W / 16u + 2u) * ((size_t)H / 16u + 2u);
    px = (int *)DPPROF_MALLOC(sizeof(int) * (3u * (size_t)n + gmax) + ((size_t)W * (size_t)H + 7u) / 8u);
    if (!px) return dpprof_fail(DPPROF_PLOT_ENOMEM, "dpprof_plot_scatter: out of memory (!px)");
    if (!canvas->rgb) {
        rc = dpprof_canvas_init(canvas, W, H);
        if (rc) {
            DPPROF_FREE(px);
            return rc;
        }
    }
    dpprof__pl_frame_init(&f, canvas, d->title, d->xlabel ? d->xlabel : "time (ms)",
                          d->ylabel ? d->ylabel : "peak memory (MiB)");
    dpprof__pl_frame_scale(&f, d->text_scale);
    f.minor_ticks = 1;
    f.xa.kind = d->log_x ? DPPROF__PL_AX_LOG : DPPROF__PL_AX_LIN;
    f.ya.kind = d->log_y ? DPPROF__PL_AX_LOG : DPPROF__PL_AX_LIN;
    if (rx > 0) {
        f.xa.lo = d->x_min;
        f.xa.hi = d->x_max;
    } else {
        dpprof__pl_auto_range(xmn, xmx, d->log_x, 1, &f.xa.lo, &f.xa.hi);
    }
    if (ry > 0) {
        f.ya.lo = d->y_min;
        f.ya.hi = d->y_max;
    } else {
        dpprof__pl_auto_range(ymn, ymx, d->log_y, 1, &f.ya.lo, &f.ya.hi);
    }
    memset(&L, 0, sizeof L);
    if (d->n_legend > 0) {
        L.n = d->n_legend;
        L.names = d->legend_names;
        L.rgb = d->legend_rgb;
        L.markers = d->legend_marker;
        dpprof__pl_frame_legend(&f, &L);
    }
    dpprof__pl_frame_layout(&f);
    if (d->n_legend > 0) {
        dpprof__pl_frame_legend(&f, &L);
        dpprof__pl_frame_layout(&f);
    }
    s = f.ts;
    r = 4 * s + 1;
    dpprof__pl_frame_back(&f);
    occ.x0 = f.x0;
    occ.y0 = f.y0;
    occ.w = f.x1 - f.x0;
    occ.h = f.y1 - f.y0;
    grid.next = px + 2 * (size_t)n;
    grid.head = grid.next + n;
    grid.x0 = f.x0;
    grid.y0 = f.y0;
    grid.cs = dpprof__pl_imax(16, 4 * DPPROF_PLOT_FONT_H * s);
    grid.gw = (occ.w + grid.cs - 1) / grid.cs;
    grid.gh = (occ.h + grid.cs - 1) / grid.cs;
    for (i = 0; i < grid.gw * grid.gh; i++) grid.head[i] = -1;
    occ.bits = (unsigned char *)(grid.head + gmax);
    memset(occ.bits, 0, ((size_t)occ.w * (size_t)occ.h + 7u) / 8u);
    {
        const int clip[4] = {f.x0, f.y0, f.x1, f.y1};
        for (i = 0; i < n; i++) {
            double mx = dpprof__pl_ax_map(&f.xa, d->x[i]), my = dpprof__pl_ax_map(&f.ya, d->y[i]);
            /* far outside an explicit range: not drawn, no label */
            if (mx < f.x0 - 4.0 * r || mx > f.x1 + 4.0 * r || my < f.y0 - 4.0 * r || my > f.y1 + 4.0 * r) {
                px[2 * i] = px[2 * i + 1] = -1000000;
                continue;
            }
            px[2 * i] = dpprof__pl_floor_i(mx);
            px[2 * i + 1] = dpprof__pl_floor_i(my);
            { /* a point on top of one drawn before (a tie): moved right by a marker's width, up to three times, so
                 that both show (matplotlib's dodge); it still reads as the same place */
                int k, moved, tries;
                for (tries = 0, moved = 1; moved && tries < 3; tries++) {
                    moved = 0;
                    for (k = 0; k < i; k++)
                        if (abs(px[2 * k] - px[2 * i]) < r + r / 2 && abs(px[2 * k + 1] - px[2 * i + 1]) < r + r / 2) {
                            px[2 * i] += 2 * r + r / 4;
                            moved = 1;
                            break;
                        }
                }
            }
            dpprof__pl_marker(canvas, px[2 * i], px[2 * i + 1], d->point_marker ? d->point_marker[i] : DPPROF_PLOT_MARKER_CIRCLE, r,
                              d->point_rgb ? d->point_rgb + 3 * (size_t)i : dpprof_plot_palette(0), clip);
            dpprof__pl_occ_set(&occ, px[2 * i] - r - 1, px[2 * i + 1] - r - r / 4 - 1, 2 * r + 3, 2 * r + r / 2 + 3);
            if (px[2 * i] >= f.x0 && px[2 * i] < f.x1 && px[2 * i + 1] >= f.y0 && px[2 * i + 1] < f.y1) {
                int cell = ((px[2 * i + 1] - f.y0) / grid.cs) * grid.gw + (px[2 * i] - f.x0) / grid.cs;
                grid.next[i] = grid.head[cell];
                grid.head[cell] = i;
            }
        }
    }
    if (d->labels) {
        /* labels in point order, each at the first free spot around its point:
     * right, left, above, below, then the diagonals. a spot must keep a gap
     * of s px to every marker and label, stay in the data area, and have no
     * other point nearer to it than its own */
        int gap = s, ch = DPPROF_PLOT_FONT_H * s, maxc = dpprof__pl_imax(4, occ.w / (2 * DPPROF_PLOT_FONT_W * s));
        char cut[96];
        dpprof__pl_rec_kind(DPPROF__PL_K_DATA);
        for (i = 0; i < n; i++) {
            const char *t = d->labels[i];
            int tw, k, cx = px[2 * i], cy = px[2 * i + 1];
            /* the marker's box in the occupancy map, as extents from its centre */
            int mt = r + r / 4 + 1, mb = r + r / 4 + 2, ml = r + 1, mr = r + 2;
            int cand[8][2];
            if (!t || !t[0] || cx < f.x0 || cx >= f.x1 || cy < f.y0 || cy >= f.y1) continue;
            t = dpprof__pl_fit(t, maxc, cut, (int)sizeof cut);
            tw = dpprof__pl_tw(dpprof__pl_slen(t), s);
            cand[0][0] = cx + mr + gap + s; /* right, caps centred on the point */
            cand[0][1] = cy - (11 * s) / 2;
            cand[1][0] = cx - ml - gap - s - tw; /* left */
            cand[1][1] = cand[0][1];
            cand[2][0] = cx - tw / 2; /* above */
            cand[2][1] = cy - mt - gap - ch;
            cand[3][0] = cx - tw / 2; /* below */
            cand[3][1] = cy + mb + gap;
            cand[4][0] = cx + r / 2; /* above, to the right */
            cand[4][1] = cand[2][1];
            cand[5][0] = cx - r / 2 - tw; /* above, to the left */
            cand[5][1] = cand[2][1];
            cand[6][0] = cx + r / 2; /* below, to the right */
            cand[6][1] = cand[3][1];
            cand[7][0] = cx - r / 2 - tw; /* below, to the left */
            cand[7][1] = cand[3][1];
            for (k = 0; k < 8; k++) {
                int bx = cand[k][0], by = cand[k][1];
                if (!dpprof__pl_occ_free(&occ, bx - gap, by - gap, tw + 2 * gap, ch + 2 * gap)) continue;
                /* a label nearer to another point would name the wrong one */
                if (!dpprof__pl_label_owned(&grid, px, i, bx, by + s, tw, ch - 3 * s)) continue;
                /* a char of room each side, so neighbouring labels never read as one */
                dpprof__pl_occ_set(&occ, bx - DPPROF_PLOT_FONT_W * s, by, tw + 2 * DPPROF_PLOT_FONT_W * s, ch);
                /* a proportional font's narrower string sits against the point: right-aligned to its left */
                dpprof__pl_text_n(canvas, bx, by, t, dpprof__pl_slen(t), s, dpprof__pl_c_text, 0, k == 1 || k == 5 || k == 7 ? 2 : k == 2 || k == 3 ? 1
                                                                                                                                                    : 0);
                break;
            }
        }
    }
    dpprof__pl_frame_axes(&f);
    if (L.count) dpprof__pl_frame_legend_draw(&f, &L);
    DPPROF_FREE(px);
    return DPPROF_PLOT_OK;
}

/* ---- lines ---------------------------------------------------------------- */
#define DPPROF__PL_OOM_ROWS 6 /* rows of "did not fit" crosses above the data */

/* rows for the crosses: each in the lowest row (row 0 nearest the data)
 * where it keeps its width plus a gap from the crosses already there; past
 * maxrows rows the last row takes it. fills row[] (per oom point, in order)
 * and returns the rows used */
static int dpprof__pl_oom_rows(const dpprof__pl_frame *f, const dpprof_lines_desc *d, int r, int maxrows, int *row,
                               int *cx) {
    int S = d->n_series, n = d->n_points, k, i, m = 0, used = 0, j;
    for (k = 0; k < S; k++)
        for (i = 0; i < n; i++) {
            int q, p;
            if (!d->oom || !d->oom[(size_t)k * (size_t)n + (size_t)i]) continue;
            p = dpprof__pl_floor_i(dpprof__pl_ax_map(&f->xa, d->x[i]));
            for (q = 0; q < maxrows; q++) {
                int ok = 1;
                for (j = 0; j < m && ok; j++)
                    if (row[j] == q && cx[j] > p - 2 * r - 3 * f->ts && cx[j] < p + 2 * r + 3 * f->ts) ok = 0;
                if (ok) break;
            }
            if (q >= maxrows) q = maxrows - 1;
            row[m] = q;
            cx[m] = p;
            m++;
            used = dpprof__pl_imax(used, q + 1);
        }
    return used;
}

/* what point j of a line plot is: 0 nothing (a gap, or a cross in the oom band), 1 a point, 2 a hollow point */
static int dpprof__pl_lines_kind(const dpprof_lines_desc *d, size_t j) {
    if ((d->oom && d->oom[j]) || d->y[j] != d->y[j]) return 0;
    return d->hollow && d->hollow[j] ? 2 : 1;
}

/* how many other series lie on series k at x index i (point: |dy| < tol) or on its segment from i - 1 to i (seg: both
   ends within tol), and how many of them come before k */
static void dpprof__pl_lines_near(const dpprof_lines_desc *d, const double *py, int k, int i, int seg, double tol, int *before, int *all) {
    int j, n = d->n_points;
    *before = *all = 0;
    for (j = 0; j < d->n_series; j++) {
        size_t a = (size_t)j * (size_t)n + (size_t)i, b = (size_t)k * (size_t)n + (size_t)i;
        if (j == k || !dpprof__pl_lines_kind(d, a) || fabs(py[a] - py[b]) >= tol) continue;
        if (seg && (!dpprof__pl_lines_kind(d, a - 1) || fabs(py[a - 1] - py[b - 1]) >= tol)) continue;
        *all += 1;
        *before += j < k;
    }
}

DPPROF_API int dpprof_plot_lines(const dpprof_lines_desc *d, dpprof_canvas *canvas) {
    int n, S, i, k, W = 0, H = 0, rc, rx, ry, nvalid = 0, noom = 0, nhollow = 0, ndash = 0, rows = 0, s, r, lw, nleg, e_hollow, e_dash, e_oom, attempt;
    double xmn = 0.0, xmx = 0.0, ymn = 0.0, ymx = 0.0, ylo0, yhi0, *px, *py;
    dpprof__pl_frame f;
    dpprof__pl_legend L;
    const char **names;
    unsigned char *rgb, *show;
    int *mk, *orow, *ocx;
    void *mem;
    char *nbuf;

    if (!d || !canvas || !d->x || !d->y) return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_lines: bad argument (!d || !canvas || !d->x || !d->y)");
    n = d->n_points;
    S = d->n_series;
    if (n < 1 || S < 1 || (long long)n * S > 10000000 || dpprof__pl_bad_ts(d->text_scale) ||
        dpprof__pl_bad_marker(d->series_marker, S))
        return dpprof_fail(DPPROF_PLOT_EARG, "dpprof_plot_lines: bad argument");
    for (i = 0; i < n; i++) {
        double x = d->x[i];
        if (!dpprof__pl_finite(x) || (d->log_x && !(x > 0.0))) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_lines: bad value (!dpprof__pl_finite(x) || (d->log_x && !(x > 0.0)))");
        if (i == 0 || x < xmn) xmn = x;
        if (i == 0 || x > xmx) xmx = x;
    }
    for (k = 0; k < S; k++)
        for (i = 0; i < n; i++) {
            size_t j = (size_t)k * (size_t)n + (size_t)i;
            double y = d->y[j];
            if (d->oom && d->oom[j]) {
                noom++;
                continue;
            }
            if (y != y) continue;
            if (!dpprof__pl_finite(y) || (d->log_y && !(y > 0.0))) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_lines: bad value (!dpprof__pl_finite(y) || (d->log_y && !(y > 0.0)))");
            nhollow += d->hollow && d->hollow[j];
            if (!nvalid || y < ymn) ymn = y;
            if (!nvalid || y > ymx) ymx = y;
            nvalid++;
        }
    if (!(d->budget == d->budget) || d->budget < 0.0 || !dpprof__pl_finite(d->budget)) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_lines: bad value (!(d->budget == d->budget) || d->budget < 0.0 || !dpprof__pl_finite(d->budget))");
    if (d->budget > 0.0) { /* the budget line lies inside the y range */
        if (!nvalid || d->budget < ymn) ymn = d->budget;
        if (!nvalid || d->budget > ymx) ymx = d->budget;
        nvalid++;
    }
    rx = dpprof__pl_range_arg(d->x_min, d->x_max, d->log_x);
    ry = dpprof__pl_range_arg(d->y_min, d->y_max, d->log_y);
    if (rx < 0 || ry < 0) return dpprof_fail(DPPROF_PLOT_EVALUE, "dpprof_plot_lines: bad value (rx < 0 || ry < 0)");
    rc = dpprof__pl_fig_size(canvas, d->width, d->height, &W, &H);
    if (rc) return rc;
    /* scratch: every point's pixel position; legend names/colours/markers/shown flags (series, the hollow marker,
   * the dashes, the cross), per-cross row and x, generated names */
    nleg = S + 3;
    mem = DPPROF_MALLOC(2u * sizeof(double) * (size_t)S * (size_t)n + (sizeof(const char *) + 4u + sizeof(int)) * (size_t)nleg +
                        2u * sizeof(int) * ((size_t)noom + 1u) + 32u * ((size_t)S + 1u));
    if (!mem) return dpprof_fail(DPPROF_PLOT_ENOMEM, "dpprof_plot_lines: out of memory (!mem)");
    px = (double *)mem;
    py = px + (size_t)S * (size_t)n;
    names = (const char **)(py + (size_t)S * (size_t)n);
    mk = (int *)(names + nleg);
    orow = mk + nleg;
    ocx = orow + noom + 1;
    rgb = (unsigned char *)(ocx + noom + 1);
    show = rgb + 3 * (size_t)nleg;
    nbuf = (char *)(show + nleg);
    if (!canvas->rgb) {
        rc = dpprof_canvas_init(canvas, W, H);
        if (rc) {
            DPPROF_FREE(mem);
            return rc;
        }
    }
    for (k = 0; k < S; k++) {
        names[k] = dpprof__pl_name(d->series_names, k, "series ", nbuf + 32 * k, 32);
        memcpy(rgb + 3 * k, dpprof__pl_series_rgb(d->series_rgb, k), 3);
        mk[k] = d->series_marker ? d->series_marker[k] : k % DPPROF_PLOT_MARKER_N;
        show[k] = 1;
    }
    e_hollow = S, e_dash = S + 1, e_oom = S + 2;
    names[e_hollow] = d->hollow_label ? d->hollow_label : "does not fit";
    names[e_dash] = "on another curve";
    names[e_oom] = d->oom_label ? d->oom_label : "oom";
    mk[e_hollow] = DPPROF__PL_MK_HOLLOW;
    mk[e_dash] = DPPROF__PL_MK_DASH;
    mk[e_oom] = DPPROF__PL_MK_OOM;
    for (k = S; k < nleg; k++) memcpy(rgb + 3 * k, dpprof__pl_c_text, 3);
    show[e_hollow] = nhollow > 0;
    show[e_dash] = 0; /* known once the pixels are: below */
    show[e_oom] = noom > 0;

    dpprof__pl_frame_init(&f, canvas, d->title, d->xlabel, d->ylabel ? d->ylabel : "peak memory (MiB)");
    dpprof__pl_frame_scale(&f, d->text_scale);
    s = f.ts;
    r = 3 * s + 1;
    lw = dpprof__pl_imax(2, s + s / 2);
    f.minor_ticks = 1;
    f.xa.kind = d->log_x ? DPPROF__PL_AX_LOG : DPPROF__PL_AX_LIN;
    f.ya.kind = d->log_y ? DPPROF__PL_AX_LOG : DPPROF__PL_AX_LIN;
    if (d->x_ticks_at_data) {
        f.xa.fixed = d->x;
        f.xa.nfixed = n;
    }
    if (rx > 0) {
        f.xa.lo = d->x_min;
        f.xa.hi = d->x_max;
    } else if (d->log_x) {
        dpprof__pl_auto_range(xmn, xmx, 1, 1, &f.xa.lo, &f.xa.hi);
    } else {
        /* 4% each side so the end markers stay whole */
        double rr = xmx - xmn;
        if (!(rr > 0.0)) rr = fabs(xmx) > 0.0 ? fabs(xmx) * 0.25 : 1.0;
        f.xa.lo = xmn - dpprof__pl_mul(0.04, rr);
        f.xa.hi = xmx + dpprof__pl_mul(0.04, rr);
        if (xmn >= 0.0 && f.xa.lo < 0.0) f.xa.lo = 0.0;
    }
    if (ry > 0) {
        f.ya.lo = d->y_min;
        f.ya.hi = d->y_max;
    } else if (!nvalid) {
        f.ya.lo = d->log_y ? 1.0 : 0.0;
        f.ya.hi = d->log_y ? 10.0 : 1.0;
    } else if (d->log_y) {
        dpprof__pl_auto_range(ymn, ymx, 1, 1, &f.ya.lo, &f.ya.hi);
    } else {
        f.ya.lo = ymn >= 0.0 ? 0.0 : ymn - dpprof__pl_mul(0.08, ymx - ymn > 0.0 ? ymx - ymn : 1.0);
        f.ya.hi = ymx > f.ya.lo ? ymx : f.ya.lo + 1.0;
    }
    /* the layout, then whether any curve lies on another (which needs the pixels); where one does, the legend
       gains the dashes' entry and the layout is made again */
    ylo0 = f.ya.lo, yhi0 = f.ya.hi;
    for (attempt = 0; attempt < 2; attempt++) {
        f.ya.lo = ylo0, f.ya.hi = yhi0;
        memset(&L, 0, sizeof L);
        L.n = nleg;
        L.names = names;
        L.rgb = rgb;
        L.markers = mk;
        L.show = show;
        L.line = 1;
        L.varw = 1;
        dpprof__pl_frame_legend(&f, &L);
        dpprof__pl_frame_layout(&f);
        dpprof__pl_frame_legend(&f, &L);
        dpprof__pl_frame_layout(&f);
        if (ry == 0 && nvalid && !d->log_y) {
            /* linear y from 0: a labelled grid line at the top, 5% headroom */
            f.ya.hi = ymn >= 0.0 ? dpprof__pl_nice_top(&f, ymx * 1.05) : ymx + dpprof__pl_mul(0.08, ymx - ymn > 0.0 ? ymx - ymn : 1.0);
            dpprof__pl_frame_layout(&f);
        }
        if (noom) {
            /* band of crosses at the top of the data area: rows as the x positions need; the y range grows so
     * that the data stays under the band */
            int band, hd;
            rows = dpprof__pl_oom_rows(&f, d, r, DPPROF__PL_OOM_ROWS, orow, ocx);
            band = rows * (2 * r + 3 * s) + 3 * s;
            hd = f.y1 - f.y0;
            if (ry == 0 && hd > 2 * band) {
                double g = (double)hd / (double)(hd - band), top = f.ya.hi;
                if (d->log_y) /* in steps of 1.25x (exact in binary, so the same on every platform) */
                    while (dpprof__pl_mul(log10(f.ya.hi / f.ya.lo), (double)(hd - band)) < dpprof__pl_mul(log10(top / f.ya.lo), (double)hd))
                        f.ya.hi *= 1.25;
                else
                    f.ya.hi = f.ya.lo + dpprof__pl_mul(f.ya.hi - f.ya.lo, g);
                dpprof__pl_frame_layout(&f);
            }
            dpprof__pl_oom_rows(&f, d, r, rows, orow, ocx);
        }
        for (k = 0; k < S; k++) /* the points' pixels */
            for (i = 0; i < n; i++) {
                size_t j = (size_t)k * (size_t)n + (size_t)i;
                px[j] = dpprof__pl_ax_map(&f.xa, d->x[i]);
                py[j] = dpprof__pl_lines_kind(d, j) ? dpprof__pl_ax_map(&f.ya, d->y[j]) : 0.0;
            }
        if (attempt || show[e_dash]) break;
        for (k = 1; k < S && !show[e_dash]; k++)
            for (i = 1; i < n && !show[e_dash]; i++) {
                int before, all;
                size_t j = (size_t)k * (size_t)n + (size_t)i;
                if (!dpprof__pl_lines_kind(d, j) || !dpprof__pl_lines_kind(d, j - 1)) continue;
                dpprof__pl_lines_near(d, py, k, i, 1, (double)lw, &before, &all);
                show[e_dash] = before > 0;
            }
        if (!show[e_dash]) break;
    }

    dpprof__pl_frame_back(&f);
    {
        const int clip[4] = {f.x0, f.y0, f.x1, f.y1};
        const int thin = dpprof__pl_imax(2, lw / 2), step = r + r / 2;
        const double unit = 4.0 * s + 2.0; /* a dash: every curve of a coincident group shows in its own unit of the period */
        int pass, passes = 2;
        /* lines first, then the markers over them; a curve with more points than
     * markers fit side by side (dense data) gets none, hollow ones excepted */
        if ((double)n * (2 * r + 1) > 2.0 * (f.x1 - f.x0)) passes = 1;
        for (pass = 0; pass < 2; pass++)
            for (k = 0; k < S; k++) {
                const unsigned char *col = rgb + 3 * k;
                for (i = 0; i < n; i++) {
                    size_t j = (size_t)k * (size_t)n + (size_t)i;
                    int kind = dpprof__pl_lines_kind(d, j), before, all;
                    double mx = px[j], my = py[j];
                    if (!kind) continue;
                    if (pass == 0 && i > 0 && dpprof__pl_lines_kind(d, j - 1)) {
                        /* to or from a point that does not fit: thinner. on a segment of an earlier series: dashed */
                        const int w = kind == 2 || dpprof__pl_lines_kind(d, j - 1) == 2 ? thin : lw;
                        dpprof__pl_lines_near(d, py, k, i, 1, (double)lw, &before, &all);
                        if (before > 0) {
                            const double per = unit * (all + 1);
                            dpprof__pl_line_dash(canvas, px[j - 1], py[j - 1], mx, my, w, per, unit * before, unit * (all + 1 - before), col, clip);
                            ndash++;
                        } else dpprof__pl_line_in(canvas, px[j - 1], py[j - 1], mx, my, w, col, clip);
                    }
                    if (pass == 1 && (passes == 2 || kind == 2) && mx > -1e6 && mx < 1e6 && my > -1e6 && my < 1e6) {
                        /* a marker on another's at this x: spread around the x, in series order, a fraction of a marker apart */
                        int cx;
                        dpprof__pl_lines_near(d, py, k, i, 0, (double)r, &before, &all);
                        cx = dpprof__pl_floor_i(mx) + (2 * before - all) * step / 2;
                        if (kind == 2) dpprof__pl_marker_hollow(canvas, cx, dpprof__pl_floor_i(my), mk[k], r, col, clip);
                        else dpprof__pl_marker(canvas, cx, dpprof__pl_floor_i(my), mk[k], r, col, clip);
                    }
                }
            }
    }
    show[e_dash] = ndash > 0; /* as drawn */
    if (d->budget > 0.0) {
        double by = dpprof__pl_ax_map(&f.ya, d->budget);
        if (by >= f.y0 && by <= f.y1) {
            const char *bl = d->budget_label ? d->budget_label : "budget";
            int yb = dpprof__pl_floor_i(by);
            dpprof__pl_dashes(canvas, 0, yb, f.x0, f.x1, lw, 6 * s, 3 * s, dpprof__pl_c_mark);
            /* the label over the line at the left, where the curves start low; or (budget_label_free) where it
               crosses the fewest curves: each curve sampled along its segments against the label's box */
            int place = 0;
            if (d->budget_label_free) {
                const int tw = dpprof__pl_tw(dpprof__pl_slen(bl), s), th = DPPROF_PLOT_FONT_H * s;
                int best = -1, cand;
                for (cand = 0; cand < 4; cand++) {
                    const int bx0 = cand & 1 ? f.x1 - 2 * s - tw : f.x0 + 2 * s, by0 = cand & 2 ? yb + 2 * s : yb - 2 * s - th;
                    int hits = 0, q;
                    for (k = 0; k < S; k++)
                        for (i = 1; i < n; i++) {
                            const double ya = d->y[(size_t)k * n + i - 1], yc = d->y[(size_t)k * n + i];
                            if (!(ya == ya) || !(yc == yc) || (d->oom && (d->oom[(size_t)k * n + i - 1] || d->oom[(size_t)k * n + i]))) continue;
                            for (q = 0; q <= 16; q++) {
                                const double px = dpprof__pl_ax_map(&f.xa, d->x[i - 1]) + (dpprof__pl_ax_map(&f.xa, d->x[i]) - dpprof__pl_ax_map(&f.xa, d->x[i - 1])) * q / 16.0;
                                const double py = dpprof__pl_ax_map(&f.ya, ya) + (dpprof__pl_ax_map(&f.ya, yc) - dpprof__pl_ax_map(&f.ya, ya)) * q / 16.0;
                                hits += px >= bx0 - r && px <= bx0 + tw + r && py >= by0 - r && py <= by0 + th + r;
                            }
                        }
                    if (best < 0 || hits < best) best = hits, place = cand;
                }
            }
            if (place & 1) dpprof__pl_text_at(canvas, f.x1 - 2 * s, place & 2 ? yb + 2 * s : yb - 2 * s, bl, s, 2, place & 2 ? 0 : 2, dpprof__pl_c_mark);
            else dpprof__pl_text_at(canvas, f.x0 + 2 * s, place & 2 ? yb + 2 * s : yb - 2 * s, bl, s, 0, place & 2 ? 0 : 2, dpprof__pl_c_mark);
        }
    }
    if (noom) {
        int m = 0, pitch = 2 * r + 3 * s, band = rows * pitch + 3 * s;
        const int clip[4] = {f.x0, f.y0, f.x1, f.y1};
        for (k = 0; k < S; k++)
            for (i = 0; i < n; i++) {
                if (!d->oom[(size_t)k * (size_t)n + (size_t)i]) continue;
                if (ocx[m] >= f.x0 - 1 && ocx[m] <= f.x1)
                    dpprof__pl_marker(canvas, ocx[m], f.y0 + band - 2 * s - r - orow[m] * pitch, DPPROF__PL_MK_OOM, r, rgb + 3 * k,
                                      clip);
                m++;
            }
    }
    dpprof__pl_frame_axes(&f);
    dpprof__pl_frame_legend_draw(&f, &L);
    DPPROF_FREE(mem);
    return DPPROF_PLOT_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* DPPROF_TOOLS_IMPLEMENTATION_DONE */
#endif /* DPPROF_TOOLS_IMPLEMENTATION */
