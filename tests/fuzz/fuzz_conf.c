/* tests/fuzz/fuzz_conf.c - libFuzzer harness for the experiment-file parsers (make fuzz; alone:
 * build/fuzz/fuzz_conf -dict=tests/fuzz/conf.dict tests/fuzz/corpus_conf): dpprof_experiments.h's sweep_parse()
 * (dpprof sweep and dpprof report) and the report's rep_read_lines() + rep_validate(), as
 * cmd_report calls them. the input is written to a file of this process (/tmp/fuzz_conf.PID.conf):
 * the parsers read a path.
 * oracle: no crash, no sanitizer report, no leak (ASan's leak check: sweep_spec_free must free all);
 * a refusal prints one message "dpprof: sweep: FILE:LINE: ..." (or "dpprof: report: ...");
 * an accepted file has a valid name, labels and options (no reserved option, no quote), nconf is
 * the product of the axes' sizes and at most SWEEP_MAX_CONFIGS, every id is NAME-LABEL-... within
 * SWEEP_MAX_ID characters and no two ids are alike; and the report reads exactly the figure and
 * table lines that the sweep accepted. aborting is fine here: this is the test harness. */
#define _XOPEN_SOURCE 700
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "../../dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "../../dpprof_tools.h"
#include "../../dpprof_cli.h"
#include "../../dpprof_experiments.h"

static FILE *fuzz_real_stderr; /* the real stderr while dpprof's is captured, else NULL */

#define FUZZ_ASSERT(c)                                                       \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(fuzz_real_stderr ? fuzz_real_stderr : stderr,            \
                    "fuzz_conf.c:%d: invariant failed: %s\n", __LINE__, #c); \
            abort();                                                         \
        }                                                                    \
    } while (0)

static char *fuzz_msg;
static size_t fuzz_msg_len;
static char fuzz_path[64];

static void fuzz_capture(void) {
    fuzz_real_stderr = stderr;
    stderr = open_memstream(&fuzz_msg, &fuzz_msg_len);
    FUZZ_ASSERT(stderr != NULL);
}

static void fuzz_release(void) {
    fclose(stderr);
    stderr = fuzz_real_stderr;
    fuzz_real_stderr = NULL;
    free(fuzz_msg);
    fuzz_msg = NULL;
    fuzz_msg_len = 0;
}

/* the captured messages so far, then forget them */
static int fuzz_msg_starts(const char *prefix) {
    int ok;
    fflush(stderr);
    if (!*prefix) ok = fuzz_msg_len == 0; /* "": nothing was printed */
    else ok = fuzz_msg_len > strlen(prefix) && !strncmp(fuzz_msg, prefix, strlen(prefix)) && fuzz_msg[fuzz_msg_len - 1] == '\n';
    rewind(stderr); /* open_memstream: the next message starts over */
    return ok;
}

static int is_word(const char *s, const char *extra) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr(extra, *s))) return 0;
    return 1;
}

/* options as the child gets them: no whitespace (they were split at it), no quote, no option that the
   sweep sets itself; bare_value: opt[1] is the value of --AXIS, where "-h" is a value, not the flag */
static void check_opts(char **opt, int n, int bare_value) {
    int k;
    FUZZ_ASSERT(n >= 0 && opt != NULL && opt[n] == NULL);
    if (bare_value) FUZZ_ASSERT(n == 2 && !strncmp(opt[0], "--", 2));
    for (k = 0; k < n; k++) {
        FUZZ_ASSERT(opt[k] != NULL && opt[k][0] != 0 && !strpbrk(opt[k], "\"'`\\ \t\r\n\v\f"));
        if (!(bare_value && k == 1)) FUZZ_ASSERT(sweep_reserved(opt[k]) == NULL);
    }
}

/* a bare value v of axis NAME became "--NAME v" (with _ as -) */
static int is_bare(const sweep_axis *ax, const sweep_value *v) {
    const char *o, *a = ax->name;
    if (v->nopt != 2 || strncmp(v->opt[0], "--", 2) != 0) return 0;
    for (o = v->opt[0] + 2; *o && *a; o++, a++)
        if (*o != (*a == '_' ? '-' : *a)) return 0;
    return !*o && !*a;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void check_spec(const sweep_spec *sp) {
    long long n = 1, c;
    int a, i, j;
    char **sorted;
    FUZZ_ASSERT(sp->name && is_word(sp->name, "_-"));
    FUZZ_ASSERT(sp->base != NULL);
    if (sp->nbase) FUZZ_ASSERT(!strncmp(sp->base[0], "--", 2));
    check_opts(sp->base, sp->nbase, 0);
    for (a = 0; a < sp->naxis; a++) {
        const sweep_axis *ax = &sp->axis[a];
        FUZZ_ASSERT(ax->name && is_word(ax->name, "_-") && ax->nval >= 1);
        for (j = 0; j < a; j++) FUZZ_ASSERT(strcmp(sp->axis[j].name, ax->name) != 0);
        for (i = 0; i < ax->nval; i++) {
            FUZZ_ASSERT(ax->val[i].label && is_word(ax->val[i].label, "._-"));
            for (j = 0; j < i; j++) FUZZ_ASSERT(strcmp(ax->val[i].label, ax->val[j].label) != 0);
            check_opts(ax->val[i].opt, ax->val[i].nopt, is_bare(ax, &ax->val[i]));
        }
        n *= ax->nval;
        FUZZ_ASSERT(n <= SWEEP_MAX_CONFIGS);
    }
    FUZZ_ASSERT(sp->nconf == n && sp->id != NULL);
    sorted = (char **)malloc((size_t)n * sizeof *sorted);
    FUZZ_ASSERT(sorted != NULL);
    for (c = 0; c < n; c++) {
        /* NAME-LABEL1-LABEL2-..., the labels of sweep_pick */
        const char *id = sp->id[c];
        size_t k = strlen(sp->name);
        FUZZ_ASSERT(id && strlen(id) <= SWEEP_MAX_ID && !strncmp(id, sp->name, k));
        for (a = 0; a < sp->naxis; a++) {
            int v = sweep_pick(sp, c, a);
            const char *lab;
            FUZZ_ASSERT(v >= 0 && v < sp->axis[a].nval);
            lab = sp->axis[a].val[v].label;
            FUZZ_ASSERT(id[k] == '-' && !strncmp(id + k + 1, lab, strlen(lab)));
            k += 1 + strlen(lab);
        }
        FUZZ_ASSERT(id[k] == 0);
        sorted[c] = sp->id[c];
    }
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_str);
    for (c = 1; c < n; c++) FUZZ_ASSERT(strcmp(sorted[c - 1], sorted[c]) != 0);
    free(sorted);
}

/* the figure and table lines of an accepted file, counted the way sweep_parse reads keys */
static int count_report_lines(const uint8_t *data, size_t size) {
    size_t i = 0;
    int n = 0;
    while (i < size) {
        size_t e = i, k;
        char *line, *s, *eq, *key, *hash;
        while (e < size && data[e] != '\n') e++;
        line = (char *)malloc(e - i + 1);
        FUZZ_ASSERT(line != NULL);
        memcpy(line, data + i, e - i);
        line[e - i] = 0;
        if ((hash = strchr(line, '#'))) *hash = 0;
        s = sweep_trim(line);
        if (*s && (eq = strchr(s, '='))) {
            *eq = 0;
            key = sweep_trim(s);
            k = strlen(key);
            if (!strcmp(key, "table") || (k > 5 && !strncmp(key, "table", 5) && sweep_space((unsigned char)key[5])) || (k > 6 && !strncmp(key, "figure", 6) && sweep_space((unsigned char)key[6]))) n++;
        }
        free(line);
        i = e + 1;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FILE *f;
    rep r;
    int rc, rc_lines, i;

    if (!fuzz_path[0]) snprintf(fuzz_path, sizeof fuzz_path, "/tmp/fuzz_conf.%ld.conf", (long)getpid());
    f = fopen(fuzz_path, "wb");
    FUZZ_ASSERT(f != NULL);
    FUZZ_ASSERT(fwrite(data, 1, size, f) == size);
    FUZZ_ASSERT(fclose(f) == 0);

    fuzz_capture();
    memset(&r, 0, sizeof r);
    r.conf = fuzz_path;
    cli_cmd = "sweep";
    rc = sweep_parse(fuzz_path, &r.sp);
    if (rc != EXIT_OK) {
        FUZZ_ASSERT(rc == EXIT_USAGE);
        FUZZ_ASSERT(fuzz_msg_starts("dpprof: sweep: "));
    } else {
        FUZZ_ASSERT(fuzz_msg_starts(""));
        check_spec(&r.sp);
    }
    /* the report's own reading of the figure and table lines (cmd_report stops at a bad file first;
       reading anyway is allowed: it only needs the path) */
    cli_cmd = "report";
    rc_lines = rep_read_lines(&r);
    FUZZ_ASSERT(r.nlines >= 0 && r.nlines <= REP_MAX_LINES);
    for (i = 0; i < r.nlines; i++) {
        const rep_line *l = &r.lines[i];
        FUZZ_ASSERT(l->nkv >= 0 && l->nkv <= 16 && l->line >= 1);
        FUZZ_ASSERT(strlen(l->fig) < sizeof l->fig && strlen(l->kind) < sizeof l->kind);
    }
    if (rc_lines != EXIT_OK) {
        FUZZ_ASSERT(rc_lines == EXIT_USAGE && fuzz_msg_starts("dpprof: report: "));
    } else {
        FUZZ_ASSERT(fuzz_msg_starts(""));
        /* what dpprof sweep accepted as figure and table lines is what dpprof report draws */
        if (rc == EXIT_OK) {
            int want = count_report_lines(data, size);
            if (r.nlines != want) {
                fprintf(fuzz_real_stderr, "report read %d figure/table lines, the sweep accepted %d\n", r.nlines, want);
                FUZZ_ASSERT(0);
            }
        }
        rc_lines = rep_validate(&r);
        if (rc_lines != EXIT_OK) FUZZ_ASSERT(rc_lines == EXIT_USAGE && fuzz_msg_starts("dpprof: report: "));
        else FUZZ_ASSERT(fuzz_msg_starts(""));
    }
    sweep_spec_free(&r.sp);
    fuzz_release();
    return 0;
}
