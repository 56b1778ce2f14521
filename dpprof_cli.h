/* dpprof_cli.h - the command line's parts: exit codes and messages, the option tables and their parser, a
   Hugging Face config.json read as options, and the files dpprof reads and writes (inputs within a stated size;
   outputs written whole or not at all, never over a file the user did not name). every function is static: one
   translation unit includes it, after dpprof.h's and dpprof_tools.h's implementations (main.c, and the tests and
   fuzzers of these parts) */
#ifndef DPPROF_CLI_H
#define DPPROF_CLI_H
#include "dpprof.h"
#include "dpprof_tools.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

/* exit codes: scripts and sweeps rely on them */
enum {
    EXIT_OK = 0,
    EXIT_ERROR = 1,
    EXIT_USAGE = 2,
    EXIT_OOM = 3
};

/* ---- messages: every error the command line prints is one line "dpprof: COMMAND: WHAT: WHY" ------------- */
static const char *const prog_name = "dpprof";
/* what starts every message: the program's name, or a sweep's file and configuration while it checks that
   configuration's options (sweep_check_options) */
static const char *prog = "dpprof";
static const char *cli_cmd = NULL; /* the command being run: dispatch sets it (NULL: none yet) */

/* print "PROG: COMMAND: MESSAGE" and return code */
static int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cli_fail(int code, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s: %s%s", prog, cli_cmd ? cli_cmd : "", cli_cmd ? ": " : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* the accountant's progress in a search for sigma (dpprof_privacy_progress), on stderr once it has taken 2 s: a short
   search says nothing */
static void cli_progress(void *user, double seconds, const char *line) {
    (void)user;
    if (seconds >= 2.0) cli_fail(0, "%s", line);
}

/* bad input: the message, and where the help is */
static int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cli_usage(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s: %s%s", prog, cli_cmd ? cli_cmd : "", cli_cmd ? ": " : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see '%s %s%s--help')\n", prog_name, cli_cmd ? cli_cmd : "", cli_cmd ? " " : "");
    (void)fflush(stderr);
    return EXIT_USAGE;
}

/* ---- options: one table a command drives its parser, its help text and its documentation ------------------
   an option either sets a field of dpprof_config (through dpprof_config_set: the library's description of the
   field is its type, range and values, and the library's check is the only one), or a field of the command's
   own options (files, flags of the command line). the library speaks of a field as "config.NAME"; the command
   line says the option that sets it instead (cli_say) */
typedef enum cli_kind {
    CLI_HEAD,   /* a heading of the help (help is its text) */
    CLI_CONFIG, /* the dpprof_config field key, the value given; values: the command line's names of its values
                   ("flat=0|per-layer=1"), NULL: the field's own */
    CLI_SET,    /* no value: sets the dpprof_config field key to value; pair: the option that contradicts it; an enum
                   field set by options without a pair keeps the higher code (--dram, --dram-ops) */
    CLI_TEXT,   /* the command's const char * at field */
    CLI_TEXTS,  /* repeatable: the command's cli_texts at field collects every value */
    CLI_FLAG,   /* the command's int at field: 1 */
    CLI_INT,    /* the command's int at field, in [lo, hi] */
    CLI_LLONG,  /* the command's long long at field, in [lo, hi] */
    CLI_REAL,   /* the command's double at field, in [lo, hi] (open: 1 open at lo, 2 at hi) */
    CLI_HELP    /* --help: the help text */
} cli_kind;

typedef struct cli_opt {
    const char *name; /* "--seq"; NULL for a heading */
    const char *arg;  /* the value's name in the help ("T"); NULL: takes no value */
    cli_kind kind;
    const char *key;    /* CLI_CONFIG, CLI_SET: the dpprof_config field */
    const char *values; /* CLI_CONFIG: the names the command line gives the field's values; CLI_SET: what it sets */
    const char *pair;   /* CLI_SET: the option it contradicts */
    size_t field;       /* CLI_TEXT to CLI_REAL: offsetof the command's options */
    double lo, hi;
    int open;
    const char *help; /* a '\n' continues on the next line, under the first */
} cli_opt;

typedef struct cli_command {
    const char *name;  /* "run" */
    const char *usage; /* the first lines of its help */
    const char *about; /* what follows them, before the options ("": nothing) */
    const cli_opt *opt;
    size_t nopt;
    int maxpos;        /* arguments that are not options it takes */
    const char *pos;   /* what they are, for a message ("(one experiment file)") */
    const char *after; /* the help's text after the options (NULL: none) */
} cli_command;

#define CLI_N(t) (sizeof(t) / sizeof((t)[0]))
#define CLI_TEXTS_MAX 16
typedef struct cli_texts {
    int n;
    const char *v[CLI_TEXTS_MAX];
} cli_texts;
#define CLI_HELP_SHOWN (-1) /* cli_parse printed the help: the command ends with EXIT_OK */

static const cli_opt *cli_find(const cli_command *c, const char *name) {
    size_t i;
    for (i = 0; i < c->nopt; i++)
        if (c->opt[i].name && !strcmp(c->opt[i].name, name)) return &c->opt[i];
    return NULL;
}

/* the library's description of a config option's field (every CLI_CONFIG and CLI_SET key names one: the
   options test checks) */
static const dpprof_config_field *cli_field(const cli_opt *o) {
    int n, i;
    const dpprof_config_field *f = dpprof_config_fields(&n);
    for (i = 0; o->key && i < n; i++)
        if (!strcmp(f[i].name, o->key)) return &f[i];
    return NULL;
}

/* the option names of a command, '|' between, for dpprof_closest */
static const char *cli_names(const cli_command *c, char *buf, size_t cap) {
    size_t i, len = 0;
    buf[0] = 0;
    for (i = 0; i < c->nopt && len < cap; i++)
        if (c->opt[i].name) len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "|" : "", c->opt[i].name);
    return buf;
}

/* a library message in the command line's words: "config.NAME = VALUE" becomes the option that sets NAME to VALUE
   ("--untied", or "--batch 8"), "config.NAME" the option of NAME; a field no option sets is its name */
static const char *cli_say(const cli_command *c, const char *msg, char *out, size_t cap) {
    size_t len = 0;
    const char *p = msg;
    out[0] = 0;
    while (*p && len + 1 < cap) {
        const char *q = strstr(p, "config."), *name;
        char key[64], val[64] = "";
        size_t nk, i;
        const cli_opt *hit = NULL, *set = NULL;
        int has_val = 0;
        if (!q) {
            len += (size_t)snprintf(out + len, cap - len, "%s", p);
            break;
        }
        len += (size_t)snprintf(out + len, cap - len, "%.*s", (int)(q - p), p);
        name = q + 7;
        nk = strspn(name, "abcdefghijklmnopqrstuvwxyz_0123456789");
        if (nk == 0 || nk >= sizeof key) { /* not a field: as it is */
            len += (size_t)snprintf(out + len, cap - len, "config.");
            p = name;
            continue;
        }
        snprintf(key, sizeof key, "%.*s", (int)nk, name);
        p = name + nk;
        if (!strncmp(p, " = ", 3)) { /* the value: a word */
            size_t nv = strcspn(p + 3, " ,;:)");
            if (nv > 0 && nv < sizeof val) snprintf(val, sizeof val, "%.*s", (int)nv, p + 3), has_val = 1;
        }
        for (i = 0; i < c->nopt; i++) {
            const cli_opt *o = &c->opt[i];
            if (!o->key || strcmp(o->key, key)) continue;
            if (o->kind == CLI_CONFIG && !hit) hit = o;
            if (o->kind == CLI_SET && (!set || (has_val && !strcmp(o->values, val)))) set = o;
        }
        if (has_val && set && !strcmp(set->values, val)) { /* config.tie_embeddings = off: --untied */
            len += (size_t)snprintf(out + len, cap - len, "%s", set->name);
            p += 3 + strlen(val);
        } else if (hit) {
            len += (size_t)snprintf(out + len, cap - len, "%s", hit->name);
            if (has_val) { /* the option and its value, in the command line's names of the values */
                const char *v = val, *w = hit->values;
                char shown[64];
                while (w && *w) {
                    size_t n = strcspn(w, "|"), e = strcspn(w, "=|");
                    if (e < n && strlen(val) == n - e - 1 && !strncmp(w + e + 1, val, n - e - 1)) {
                        snprintf(shown, sizeof shown, "%.*s", (int)e, w);
                        v = shown;
                        break;
                    }
                    w += n + (w[n] == '|');
                }
                len += (size_t)snprintf(out + len, cap - len, " %s", v);
                p += 3 + strlen(val);
            }
        } else if (set) len += (size_t)snprintf(out + len, cap - len, "%s", set->name);
        else len += (size_t)snprintf(out + len, cap - len, "%s", key);
    }
    return out;
}

/* the library's last error, in the command line's words, as the command's message; returns code */
static int cli_fail_lib(const cli_command *c, int code) {
    char msg[2048];
    return cli_fail(code, "%s", cli_say(c, dpprof_last_error(), msg, sizeof msg));
}

/* the help of a command: its usage, what it does, then every option of the table */
static void cli_help(FILE *f, const cli_command *c) {
    size_t i;
    fprintf(f, "%s\n", c->usage);
    if (c->about[0]) fprintf(f, "\n%s", c->about);
    if (c->nopt) fputc('\n', f);
    for (i = 0; i < c->nopt; i++) {
        const cli_opt *o = &c->opt[i];
        char head[64];
        const char *h = o->help, *nl;
        int w;
        if (o->kind == CLI_HEAD) {
            fprintf(f, "%s\n", h);
            continue;
        }
        w = snprintf(head, sizeof head, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        if (w > 22) fprintf(f, "  %s\n%25s", head, "");
        else fprintf(f, "  %-22s ", head);
        while ((nl = strchr(h, '\n')) != NULL) {
            fprintf(f, "%.*s\n%25s", (int)(nl - h), h, "");
            h = nl + 1;
        }
        fprintf(f, "%s\n", h);
    }
    if (c->after) fprintf(f, "\n%s", c->after);
}

/* the options at a glance, a line a heading of the table (what docs/results.md lists) */
static void cli_synopsis(FILE *f, const cli_command *c) __attribute__((unused));
static void cli_synopsis(FILE *f, const cli_command *c) {
    size_t i, col = 0;
    for (i = 0; i < c->nopt; i++) {
        const cli_opt *o = &c->opt[i];
        char item[160];
        int w;
        if (o->kind == CLI_HEAD) {
            if (col) fputc('\n', f);
            col = 0;
            continue;
        }
        if (o->kind == CLI_CONFIG && cli_field(o) && cli_field(o)->type == DPPROF_FIELD_ENUM && !o->values) /* an enum: its names */
            w = snprintf(item, sizeof item, "%s %s", o->name, cli_field(o)->values);
        else w = snprintf(item, sizeof item, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        if (col && col + 2 + (size_t)w > 116) fputc('\n', f), col = 0;
        fprintf(f, "%s%s", col ? "  " : "", item);
        col += (col ? 2 : 0) + (size_t)w;
    }
    if (col) fputc('\n', f);
}

/* a number of the command's own options, whole and in range: 0, or EXIT_USAGE having said why */
static int cli_number(const cli_opt *o, const char *v, void *opts) {
    char *end;
    errno = 0;
    if (o->kind == CLI_REAL) {
        double x = strtod(v, &end);
        if (!*v || isspace((unsigned char)*v) || *v == '+' || *end || errno == ERANGE || x != x || x < o->lo || x > o->hi || ((o->open & 1) && x == o->lo) || ((o->open & 2) && x == o->hi))
            return cli_usage("%s '%s': expected a number in %s%g, %g%s", o->name, v, o->open & 1 ? "(" : "[", o->lo, o->hi, o->open & 2 ? ")" : "]");
        memcpy((char *)opts + o->field, &x, sizeof x);
    } else {
        long long x = strtoll(v, &end, 10);
        if (!*v || isspace((unsigned char)*v) || *v == '+' || *end || errno == ERANGE || x < o->lo || x > o->hi)
            return cli_usage("%s '%s': expected an integer in [%lld, %lld]", o->name, v, (long long)o->lo, (long long)o->hi);
        if (o->kind == CLI_INT) {
            int xi = (int)x;
            memcpy((char *)opts + o->field, &xi, sizeof xi);
        } else memcpy((char *)opts + o->field, &x, sizeof x);
    }
    return EXIT_OK;
}

/* one option's value into opts (or cfg, for the library's fields): EXIT_OK, or EXIT_USAGE having said why */
static int cli_take(const cli_command *c, const cli_opt *o, const char *v, void *opts, dpprof_config *cfg) {
    char msg[2048], list[256], near[64];
    switch (o->kind) {
    case CLI_CONFIG: {
        const char *lib = v, *w = o->values;
        char code[32];
        if (w) { /* the command line's own names of the field's values */
            lib = NULL;
            while (*w) {
                size_t n = strcspn(w, "|"), e = strcspn(w, "=|");
                if (strlen(v) == e && !strncmp(w, v, e)) {
                    snprintf(code, sizeof code, "%.*s", (int)(n - e - 1), w + e + 1);
                    lib = code;
                    break;
                }
                w += n + (w[n] == '|');
            }
            if (!lib) {
                char names[256];
                size_t k = 0;
                for (w = o->values; *w;) { /* the names alone, for dpprof_closest */
                    size_t n = strcspn(w, "|"), e = strcspn(w, "=|");
                    k += (size_t)snprintf(names + k, sizeof names - k, "%s%.*s", k ? "|" : "", (int)e, w);
                    w += n + (w[n] == '|');
                }
                if (dpprof_closest(v, names, near, sizeof near)) return cli_usage("%s '%s': expected %s (did you mean %s?)", o->name, v, dpprof_words(o->values, list, sizeof list), near);
                return cli_usage("%s '%s': expected %s", o->name, v, dpprof_words(o->values, list, sizeof list));
            }
        }
        if (dpprof_config_set(cfg, o->key, lib) != DPPROF_OK) {
            /* "config.batch '-3': ..." is about this option: its name, and the value as given */
            const char *m = dpprof_last_error();
            char head[512];
            int n = snprintf(head, sizeof head, "config.%s '%s'", o->key, lib);
            if (n > 0 && (size_t)n < sizeof head && !strncmp(m, head, (size_t)n)) return cli_usage("%s '%s'%s", o->name, v, cli_say(c, m + n, msg, sizeof msg));
            return cli_usage("%s", cli_say(c, m, msg, sizeof msg));
        }
        return EXIT_OK;
    }
    case CLI_SET: {
        const dpprof_config_field *f = cli_field(o);
        dpprof_config probe;
        int now, want;
        if (!f) return cli_fail(EXIT_ERROR, "%s: no field %s in dpprof_config (a bug)", o->name, o->key);
        memset(&probe, 0, sizeof probe);
        if (dpprof_config_set(&probe, o->key, o->values) != DPPROF_OK) return cli_fail(EXIT_ERROR, "%s: %s (a bug)", o->name, dpprof_last_error());
        memcpy(&now, (const char *)cfg + f->offset, sizeof now);
        memcpy(&want, (const char *)&probe + f->offset, sizeof want);
        if (o->pair) { /* one of two choices: both at once is a contradiction, not a last-one-wins */
            const cli_opt *other = cli_find(c, o->pair);
            if (now != 0 && now != want) return cli_usage("%s and %s contradict each other (%s came second)", other && other < o ? other->name : o->name, other && other < o ? o->name : o->pair, o->name);
        } else if (now > want) return EXIT_OK; /* --dram after --dram-ops */
        memcpy((char *)cfg + f->offset, &want, sizeof want);
        return EXIT_OK;
    }
    case CLI_TEXT: memcpy((char *)opts + o->field, &v, sizeof v); return EXIT_OK;
    case CLI_TEXTS: {
        cli_texts *l = (cli_texts *)(void *)((char *)opts + o->field);
        if (l->n == CLI_TEXTS_MAX) return cli_usage("at most %d %s options", CLI_TEXTS_MAX, o->name);
        l->v[l->n++] = v;
        return EXIT_OK;
    }
    case CLI_FLAG: {
        int one = 1;
        memcpy((char *)opts + o->field, &one, sizeof one);
        return EXIT_OK;
    }
    case CLI_INT:
    case CLI_LLONG:
    case CLI_REAL: return cli_number(o, v, opts);
    default: return EXIT_OK;
    }
}

/* 1 where argv gives the option name (as --name VALUE or --name=VALUE, before a "--") */
static int cli_given(int argc, char **argv, const char *name) {
    const size_t n = strlen(name);
    int i;
    for (i = 0; i < argc && strcmp(argv[i], "--"); i++)
        if (!strncmp(argv[i], name, n) && (!argv[i][n] || argv[i][n] == '=')) return 1;
    return 0;
}

/* the spellings other tools give dpprof's options (transformers', Opacus', the usual long forms), for a "did you mean"
   that edit distance cannot find: the option this command has, or NULL */
static const char *cli_alias(const cli_command *c, const char *name) {
    static const char *const alias[][2] = {
        {"--seq-len", "--seq"},
        {"--seq-length", "--seq"},
        {"--max-seq-len", "--seq"},
        {"--max-seq-length", "--seq"},
        {"--sequence-length", "--seq"},
        {"--max-length", "--seq"},
        {"--context-length", "--seq"},
        {"--batch-size", "--batch"},
        {"--micro-batch", "--physical-batch"},
        {"--micro-batch-size", "--physical-batch"},
        {"--max-physical-batch-size", "--physical-batch"},
        {"--noise-multiplier", "--sigma"},
        {"--epsilon", "--target-epsilon"},
        {"--target-eps", "--target-epsilon"},
        {"--num-layers", "--layers"},
        {"--num-hidden-layers", "--layers"},
        {"--hidden-size", "--hidden"},
        {"--num-heads", "--heads"},
        {"--num-attention-heads", "--heads"},
        {"--intermediate-size", "--ffn"},
        {"--vocab-size", "--vocab"},
        {"--lora-r", "--lora-rank"},
        {"--model-name", "--model"},
        {"--num-gpus", "--gpus"},
        {"--gradient-checkpointing", "--checkpoint"},
        {"--clip", "--max-grad-norm"},
        {"--max-grad", "--max-grad-norm"},
    };
    size_t i;
    for (i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (!strcmp(name, alias[i][0]) && cli_find(c, alias[i][1])) return alias[i][1];
    return NULL;
}

/* argv (the command's arguments) against its table: options into opts and cfg, the other arguments into pos
   (*npos of them, at most c->maxpos). "--opt VALUE" or "--opt=VALUE"; "--" ends the options; a value that starts
   with "--" is written --opt=VALUE (else it is the next option: --out --quiet wrote a file named --quiet).
   EXIT_OK, CLI_HELP_SHOWN (the help printed), or EXIT_USAGE having said why */
static int cli_parse(const cli_command *c, int argc, char **argv, void *opts, dpprof_config *cfg, const char **pos, int *npos) {
    int i, ended = 0, rc;
    char names[4096];
    if (npos) *npos = 0;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *eq, *v = NULL;
        char name[64], near[64];
        const cli_opt *o;
        size_t len;
        if (!ended && !strcmp(a, "--")) {
            ended = 1;
            continue;
        }
        if (!ended && !strcmp(a, "-h")) a = "--help";
        if (ended || strncmp(a, "--", 2) != 0 || !a[2]) {
            if (!npos || *npos >= c->maxpos) return cli_usage("unexpected argument '%s'%s%s", a, c->pos ? " " : "", c->pos ? c->pos : "");
            pos[(*npos)++] = a;
            continue;
        }
        eq = strchr(a, '=');
        len = eq ? (size_t)(eq - a) : strlen(a);
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), a);
        if (len >= sizeof name || !(o = cli_find(c, name))) {
            const char *alias = len < sizeof name ? cli_alias(c, name) : NULL;
            if (alias) return cli_usage("unknown option '%s' (did you mean %s?)", name, alias);
            if (len < sizeof name && dpprof_closest(name, cli_names(c, names, sizeof names), near, sizeof near))
                return cli_usage("unknown option '%s' (did you mean %s?)", len < sizeof name ? name : a, near);
            return cli_usage("unknown option '%s'", len < sizeof name ? name : a);
        }
        if (!o->arg && eq) return cli_usage("%s takes no value (got '%s')", name, eq + 1);
        if (o->kind == CLI_HELP) {
            cli_help(stdout, c);
            return CLI_HELP_SHOWN;
        }
        if (o->arg && eq) v = eq + 1;
        else if (o->arg && i + 1 < argc && !strncmp(argv[i + 1], "--", 2))
            return cli_usage("%s needs a value (%s), got the option '%s' (a value that starts with '--' is written %s=VALUE)", name, o->arg, argv[i + 1], name);
        else if (o->arg && i + 1 < argc) v = argv[++i];
        else if (o->arg) return cli_usage("%s needs a value (%s)", name, o->arg);
        if ((rc = cli_take(c, o, v, opts, cfg)) != EXIT_OK) return rc;
    }
    return EXIT_OK;
}

/* seconds on a monotonic clock */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* terminal units: bytes in powers of 1024 (12.34 GiB), counts in powers of 1000 (8.03 B) */
static const char *human_bytes(double b, char *buf, size_t cap) {
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024.0 && u < 5) b /= 1024.0, u++;
    if (u == 0) snprintf(buf, cap, "%.0f bytes", b);
    else snprintf(buf, cap, "%.*f %s", b < 10 ? 2 : (b < 100 ? 1 : 0), b, unit[u]);
    return buf;
}
static const char *human_count(double n, char *buf, size_t cap) {
    static const char *const unit[] = {"", " thousand", " M", " B", " T"};
    int u = 0;
    while (n >= 1000.0 && u < 4) n /= 1000.0, u++;
    if (u == 0) snprintf(buf, cap, "%.0f", n);
    else snprintf(buf, cap, "%.*f%s", n < 10 ? 2 : (n < 100 ? 1 : 0), n, unit[u]);
    return buf;
}

/* what linux says is available now: the cpu backend's default memory limit */
static long long mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kib = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
    fclose(f);
    return kib * 1024;
}

/* ---- run ----------------------------------------------------------------------------------------- */
typedef struct run_opts {
    dpprof_config cfg;
    const char *out, *trace, *dump, *experiment, *hf_config, *peft_config, *device;
    int hf_max_pos; /* --hf-config's max_position_embeddings, 0 where it gives none */
    int quiet;
    int plan; /* --plan: print the plan and run nothing */
    int limit_given;
    int sigma_given; /* --sigma on the command line: --sigma 0 said, not a default */
} run_opts;

/* dpprof run's options: the only list of them (the help, the parser and docs/results.md's list come from it) */
static const cli_opt run_opt[] = {
    {NULL, NULL, CLI_HEAD, .help = "model (a preset or a Hugging Face config.json, each size overridable):"},
    {"--preset", "NAME", CLI_CONFIG, .key = "preset", .help = "tiny (default), gpt2-small, llama-3.2-1b, llama-3.2-3b, llama-3.1-8b,\ntrainer-1b, longctx, or a published model's Hugging Face name\n(meta-llama/Llama-3.2-1B; dpprof presets lists them)"},
    {"--model", "NAME", CLI_CONFIG, .key = "preset", .help = "the same as --preset"},
    {"--hf-config", "FILE", CLI_TEXT, .field = offsetof(run_opts, hf_config), .help = "the model of a Hugging Face Llama config.json: vocab_size, hidden_size,\nintermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads,\nhead_dim, rope_theta, rms_norm_eps, tie_word_embeddings; what dpprof does not\nmodel is refused (docs/model.md)"},
    {"--tied", NULL, CLI_SET, .key = "tie_embeddings", .values = "on", .pair = "--untied", .help = "the lm head is the embedding matrix (tie_word_embeddings)"},
    {"--untied", NULL, CLI_SET, .key = "tie_embeddings", .values = "off", .pair = "--tied", .help = "the lm head is a matrix of its own"},
    {"--vocab", "V", CLI_CONFIG, .key = "vocab", .help = "vocabulary size"},
    {"--hidden", "C", CLI_CONFIG, .key = "hidden", .help = "model width"},
    {"--layers", "L", CLI_CONFIG, .key = "layers", .help = "decoder layers"},
    {"--heads", "NH", CLI_CONFIG, .key = "heads", .help = "attention heads"},
    {"--kv-heads", "NKV", CLI_CONFIG, .key = "kv_heads", .help = "key/value heads (grouped-query attention; NH a multiple of it)"},
    {"--ffn", "F", CLI_CONFIG, .key = "ffn", .help = "MLP width"},
    {"--rope-theta", "X", CLI_CONFIG, .key = "rope_theta", .help = "rotary base (default: the preset's)"},
    {"--norm-eps", "X", CLI_CONFIG, .key = "norm_eps", .help = "rmsnorm epsilon (default 1e-5)"},
    {"--init-std", "X", CLI_CONFIG, .key = "init_std", .help = "std of the normal weight init (default 0.02)"},
    {NULL, NULL, CLI_HEAD, .help = "task and data:"},
    {"--seq", "T", CLI_CONFIG, .key = "seq", .help = "sequence length (default 64)"},
    {"--task", "lm|cls", CLI_CONFIG, .key = "task", .help = "next-token prediction (default) or classification from the last token"},
    {"--classes", "K", CLI_CONFIG, .key = "classes", .help = "number of classes for cls (default 2)"},
    {"--data", "FILE", CLI_CONFIG, .key = "data_path", .help = "train on a text file: byte-level tokens (lm), or lines\n'label<TAB>text' (cls); default: synthetic sequences"},
    {NULL, NULL, CLI_HEAD, .help = "training:"},
    {"--algo", "ALGO", CLI_CONFIG, .key = "algo", .help = "vanilla (default, non-private); DP-SGD: persample (Opacus-style\nper-sample gradients), ghost, ghost_bk (book-keeping), flash, flash_bk,\nauto (docs/dp.md: what each keeps in memory)"},
    {"--batch", "B", CLI_CONFIG, .key = "batch", .help = "logical batch size (default 8)"},
    {"--physical-batch", "b", CLI_CONFIG, .key = "physical_batch", .help = "samples per forward/backward, accumulated to B (default B)"},
    {"--steps", "N", CLI_CONFIG, .key = "steps", .help = "measured steps (default 3)"},
    {"--warmup", "W", CLI_CONFIG, .key = "warmup", .help = "steps run first and excluded from timing (default 0)"},
    {"--optimizer", "adam|sgd", CLI_CONFIG, .key = "optimizer", .help = "(default adam, betas 0.9/0.999, eps 1e-8)"},
    {"--lr", "X", CLI_CONFIG, .key = "lr", .help = "learning rate (default 1e-3 adam, 1e-2 sgd)"},
    {"--weight-decay", "X", CLI_CONFIG, .key = "weight_decay", .help = "decoupled (AdamW) weight decay (default 0)"},
    {"--seed", "S", CLI_CONFIG, .key = "seed", .help = "seed of init, data and noise (default 0; the noise's not under --secure-noise)"},
    {"--dtype", "fp32|bf16", CLI_CONFIG, .key = "dtype", .help = "storage type (default fp32); bf16: activations and matmul weight copies in bf16,\nfp32 master weights, gradients, optimizer states (--backend cuda, dry; not cpu)"},
    {"--backend", "auto|cpu|cuda|dry", CLI_CONFIG, .key = "backend", .help = "(default auto: cuda when a GPU is visible, else cpu)"},
    {"--ranks", "N", CLI_CONFIG, .key = "ranks", .help = "sharded data parallelism: N ranks, each taking B/N samples (B a multiple of N,\nb at most B/N; default 1, or the MPI job's size). --backend dry: rank 0's\nmemory; --backend cpu or cuda: an MPI job, mpirun -np N dpprof run ... (a build\nwith MPI; cuda: with NCCL, one GPU a rank)"},
    {"--zero", "0|1|2|3", CLI_CONFIG, .key = "zero", .help = "with --ranks: 0 plain data parallel (default), 1 adam moments sharded,\n2 + gradients sharded, 3 + parameters sharded (FSDP's full sharding;\ndocs/model.md)"},
    {"--device", "NAME", CLI_TEXT, .field = offsetof(run_opts, device), .help = "the memory limit dpprof fit's rule leaves on that GPU (H100, H200, A100-80,\nA100-40, L40S, A10, L4, RTX4090): its memory, less the CUDA context, over 1 plus\nthe allocator's share measured for the algorithm (data/bench); config.memory_rule\nsays so"},
    {"--memory-limit", "SIZE", CLI_CONFIG, .key = "memory_limit", .help = "fail as oom past SIZE bytes; K, M, G, T (or KiB, MiB, GiB, TiB) are powers\nof 1024, KB, MB, GB, TB powers of 1000 (80G = 80GiB = 85899345920 bytes,\n80GB = 8e10). default on cpu: MemAvailable"},
    {"--checkpoint", "none|layers", CLI_CONFIG, .key = "checkpoint", .help = "activation checkpointing (default none); layers: the forward keeps each decoder\nlayer's input alone, the backward recomputes the layer just before its backward\n(the recompute phase; docs/model.md: what each --algo keeps and recomputes); under\n--framework pytorch: Hugging Face's gradient checkpointing"},
    {"--attention", "dpprof|cudnn|sdpa|eager", CLI_CONFIG, .key = "attention", .help = "the attention's kernels on cuda (default dpprof, its own); cudnn: cuDNN's fused\nflash attention (bf16; a build with cuDNN: dpprof version), measured beside dpprof's\nby dpprof attnbench. on dry: the memory of a cudnn run. sdpa, eager: Hugging Face's\nattention under --framework pytorch (default sdpa)"},
    {"--framework", "dpprof|pytorch|opacus", CLI_CONFIG, .key = "framework", .help = "whose memory a dry run accounts: dpprof's engine (default), or pytorch: the loop a\nPyTorch user writes for Hugging Face's LlamaForCausalLM (loss = model(x, labels=y).loss;\nloss.backward(); AdamW(foreach).step(); zero_grad(set_to_none=True)), allocation by\nallocation as PyTorch makes them; opacus: Opacus's loop (make_private, DPOptimizer),\nphysical batches as BatchMemoryManager steps them: --algo persample its hooks, ghost\nits ghost clipping (docs/frameworks.md); --backend dry"},
    {"--grad-sample-mode", "hooks|ghost", CLI_CONFIG, .key = "algo", .values = "hooks=persample|ghost=ghost", .help = "Opacus's name for --algo under --framework opacus: hooks (persample), ghost"},
    {"--attention-workspace", "SIZE", CLI_CONFIG, .key = "attention_workspace", .help = "with --attention cudnn: cuDNN's workspace, allocated with the model on every\nbackend (on cuda at least what cuDNN's plans need; a cuda result's config.\nattention_workspace is the figure for a dry run to model it). default 0"},
    {NULL, NULL, CLI_HEAD, .help = "DP-SGD (with a DP --algo):"},
    {"--sigma", "S", CLI_CONFIG, .key = "sigma", .help = "noise multiplier (default 0: clipping without noise)"},
    {"--max-grad-norm", "C", CLI_CONFIG, .key = "max_grad_norm", .help = "clipping bound (default 1)"},
    {"--clipping", "flat|per-layer", CLI_CONFIG, .key = "per_layer_clipping", .values = "flat=0|per-layer=1", .help = "(default flat; per-layer: C/sqrt(tensors) per tensor)"},
    {"--dataset-size", "N", CLI_CONFIG, .key = "dataset_size", .help = "examples in the dataset: the sample rate B/N for the accountant"},
    {"--poisson", NULL, CLI_SET, .key = "poisson", .values = "1", .help = "Poisson sampling with rate B/N (variable batch sizes)"},
    {"--secure-noise", NULL, CLI_SET, .key = "secure_noise", .values = "1", .help = "the noise (and --poisson's draws) from ChaCha20 keyed by 256 bits of the operating\nsystem's entropy, never written, each normal hardened against floating-point attacks:\nfor training a model to release (docs/dp.md). default: Philox from --seed, reproducible"},
    {"--delta", "D", CLI_CONFIG, .key = "delta", .help = "delta of the reported epsilon (default 1e-5)"},
    {"--target-epsilon", "E", CLI_CONFIG, .key = "target_epsilon", .help = "choose sigma so that the run spends E at delta (needs --dataset-size, --poisson)"},
    {"--accountant", "rdp|pld|both", CLI_CONFIG, .key = "accountant", .help = "the result's epsilon (with --poisson): rdp (the default), pld (the privacy loss\ndistribution, tight; under 5 s to 1e7 steps), both (epsilon_pld beside rdp's); --target-epsilon\nuses rdp or pld"},
    {NULL, NULL, CLI_HEAD, .help = "LoRA (base model frozen; adapters and head train):"},
    {"--peft-config", "FILE", CLI_TEXT, .field = offsetof(run_opts, peft_config), .help = "LoRA as a PEFT adapter_config.json gives it: r, lora_alpha (use_rslora),\ntarget_modules (names or all-linear), modules_to_save (lm_head: --train-head),\ntask_type; an option given beside it wins; what dpprof does not model is refused\n(docs/model.md)"},
    {"--lora-rank", "r", CLI_CONFIG, .key = "lora_rank", .help = "adapter rank (default: no LoRA)"},
    {"--lora-alpha", "a", CLI_CONFIG, .key = "lora_alpha", .help = "adapter scale alpha/r (default r)"},
    {"--lora-dropout", "P", CLI_CONFIG, .key = "lora_dropout", .help = "PEFT's lora_dropout (default 0): --framework pytorch and opacus keep each adapter's\ndropped input and mask; dpprof's engine runs without (said as not modelled)"},
    {"--lora-targets", "LIST", CLI_CONFIG, .key = "lora_targets", .help = "of q,k,v,o,gate,up,down (default q,v)"},
    {"--train-head", NULL, CLI_SET, .key = "train_head", .values = "on", .pair = "--frozen-head", .help = "the head trains (PEFT's modules_to_save; a tied head is the embedding matrix).\ndefault: under LoRA an lm head is frozen, as PEFT leaves it; a cls head trains"},
    {"--frozen-head", NULL, CLI_SET, .key = "train_head", .values = "off", .pair = "--train-head", .help = "the lm head is frozen (the default under LoRA; without LoRA the rest trains)"},
    {"--frozen-masters", NULL, CLI_SET, .key = "frozen_masters", .values = "on", .help = "bf16: an fp32 master beside the bf16 copy of every frozen weight, as a trained\none has. default: a frozen weight is stored once, in bf16 (PEFT's base loaded\nwith torch_dtype = bfloat16)"},
    {NULL, NULL, CLI_HEAD, .help = "GPU kernels (cuda; each pair forces one of two kernels, default: see each):"},
    {"--fused-clipgrad", NULL, CLI_SET, .key = "fused_clipgrad", .values = "on", .pair = "--cublas-clipgrad", .help = "bf16: the clipped weight gradients (book-keeping) on one fused tensor-core\nkernel, not one cuBLAS GEMM per sample, where a physical batch has 2 samples or\nmore. default: --algo auto times both at each linear layer's shape at session\nstart and takes the faster (the json's auto_clipgrad_ms, layers[].clipgrad_kernel);\nthe other algorithms use cuBLAS"},
    {"--cublas-clipgrad", NULL, CLI_SET, .key = "fused_clipgrad", .values = "off", .pair = "--fused-clipgrad", .help = "the clipped weight gradients on cuBLAS per sample, --algo auto too (no timing)"},
    {"--batched-clipgrad", NULL, CLI_SET, .key = "batched_clipgrad", .values = "on", .pair = "--no-batched-clipgrad", .help = "bf16, flat clipping: each linear layer's clipped weight gradient as one cuBLAS\nGEMM over the physical batch, its output gradient scaled by c_i in bf16 and every\nfactor lowered so that the rounding stays within the clipping bound (docs/dp.md):\nnot the exact clipped sum, so never by default (--algo auto chooses among exact\nkernels only)"},
    {"--no-batched-clipgrad", NULL, CLI_SET, .key = "batched_clipgrad", .values = "off", .pair = "--batched-clipgrad", .help = "never the batched clipped gradient (the default)"},
    {"--fused-noise", NULL, CLI_SET, .key = "fused_noise", .values = "on", .pair = "--separate-noise", .help = "the noise, the division by the batch and the optimizer step in one pass over\nthe gradients (the same bits); the noise phase is then part of optimizer_step.\ndefault: --algo auto times one pass against two at session start and\ntakes the faster (the json's auto_noise_ms); the other algorithms two passes"},
    {"--separate-noise", NULL, CLI_SET, .key = "fused_noise", .values = "off", .pair = "--fused-noise", .help = "the noise on a pass of its own before the optimizer's, --algo auto too (no timing)"},
    {"--dp-warp-tile", "32|64", CLI_CONFIG, .key = "dp_warp_tile", .help = "bf16: the warp tile of dpprof's dp tensor-core kernels (the fused clipped\ngradient, both flash norms): 64 x 64, the default where the device's shared memory\nper block holds them (sm_90), or 64 x 32: for comparing"},
    {"--wgmma", NULL, CLI_SET, .key = "wgmma", .values = "on", .pair = "--no-wgmma", .help = "bf16: the gram flavour of the flash norm on Hopper's warpgroup mma (compute\ncapability 9.0 only): the default there (measured faster on an H200)"},
    {"--no-wgmma", NULL, CLI_SET, .key = "wgmma", .values = "off", .pair = "--wgmma", .help = "bf16: the gram flavour of the flash norm on mma.sync"},
    {NULL, NULL, CLI_HEAD, .help = "output (FILE '-' is standard output; progress and summary go to standard error):"},
    {"--out", "FILE.json", CLI_TEXT, .field = offsetof(run_opts, out), .help = "result JSON (written atomically; also on oom/error, with its status)"},
    {"--trace", "FILE.json", CLI_TEXT, .field = offsetof(run_opts, trace), .help = "Chrome/Perfetto trace: phases, every op (cuda: timed by events) and a\nlive-memory counter per category, of the last --trace-steps steps"},
    {"--trace-steps", "N", CLI_CONFIG, .key = "trace_steps", .help = "the steps a trace holds: the last N (default 2)"},
    {"--dram", NULL, CLI_SET, .key = "dram", .values = "phases", .help = "cuda: DRAM and L2 bytes per phase from CUPTI counters, measured in warm-up\nstep 0 (needs --warmup 1)"},
    {"--dram-ops", NULL, CLI_SET, .key = "dram", .values = "ops", .help = "cuda: --dram per op as well: each op of warm-up step 0 a counter range, its bytes\nin throughput.ops beside its analytic bytes (that step's ops are not timed)"},
    {"--op-times", NULL, CLI_SET, .key = "op_times", .values = "1", .help = "time every op in the warm-up steps: throughput.ops (rates, shares of the\npeaks) in the json"},
    {"--dump", "DIR", CLI_TEXT, .field = offsetof(run_opts, dump), .help = "config.json, model.safetensors, batch.safetensors, grads.safetensors, step.json\n(per-sample losses, norms, clip factors) for samples 0..B-1: LlamaForCausalLM.\nfrom_pretrained(DIR) loads it (cpu and cuda backends; DIR is created)"},
    {"--experiment", "NAME", CLI_TEXT, .field = offsetof(run_opts, experiment), .help = "the 'experiment' field of the JSON (default 'run')"},
    {"--timeline", "full|none", CLI_CONFIG, .key = "no_timeline", .values = "full=0|none=1", .help = "keep the event log in the JSON (default full; none for big sweeps)"},
    {"--plan", NULL, CLI_FLAG, .field = offsetof(run_opts, plan), .help = "print the run's plan to standard output and run nothing: per tensor whether it\ntrains, how it is stored, its clipped sum, what a step keeps for it, its clipped\ngradient's kernel and its norm method, as the session decided them at its start\n(auto's measurements included)"},
    {"--quiet", NULL, CLI_FLAG, .field = offsetof(run_opts, quiet), .help = "no progress lines on stderr"},
    {"--help", NULL, CLI_HELP, .help = "this text"},
};

static const cli_command run_cmd = {"run", "usage: dpprof run [options]   (--opt VALUE or --opt=VALUE)", "", run_opt, CLI_N(run_opt), 0, "(run takes options only)", NULL};

static int in_check(const char *what, const char *path, long long limit, char *buf, size_t cap);
#define IN_HF_LIMIT ((long long)1 << 20) /* a Hugging Face config.json */

/* --hf-config FILE: the model of a Hugging Face config.json of a Llama model. every size it gives fills the
   configuration where no option set it (an option wins); what dpprof cannot model is refused, naming the key
   and its value. the keys and what is refused: docs/model.md */
static int hf_fail(const char *path, const char *fmt, const char *key, const char *what) {
    char msg[1024];
    snprintf(msg, sizeof msg, fmt, key, what);
    return cli_fail(EXIT_USAGE, "--hf-config %s: %s", path, msg);
}

/* a positive integer under key (required or not): 0 where absent (or null, when optional), -1 after saying why */
static long long hf_int(const char *path, const dpprof_json *root, const char *key, int required, long long hi) {
    const dpprof_json *v = dpprof_json_get(root, key);
    long long x;
    double d;
    char num[64];
    if (!v || (!required && dpprof_json_kind(v) == DPPROF_JSON_NULL)) {
        if (required) hf_fail(path, "the required key \"%s\" is missing%s", key, "");
        return required ? -1 : 0;
    }
    if (dpprof_json_number(v, &d) != DPPROF_OK) return hf_fail(path, "\"%s\" is not a number (%s)", key, dpprof_json_kind(v) == DPPROF_JSON_STRING ? "a string" : "another type"), -1;
    snprintf(num, sizeof num, "%.17g", d);
    if (dpprof_json_int64(v, &x) != DPPROF_OK || x < 1 || x > hi) {
        char range[128];
        snprintf(range, sizeof range, "%s: expected an integer in [1, %lld]", num, hi);
        hf_fail(path, "\"%s\" = %s", key, range);
        return -1;
    }
    return x;
}

/* a value as the file gives it, for a message: "text", a number, true, false, null, an array or an object */
static const char *hf_show(const dpprof_json *v, char *buf, size_t cap) {
    const char *str = dpprof_json_string(v);
    double d;
    if (str) snprintf(buf, cap, "\"%.60s%s\"", str, strlen(str) > 60 ? "..." : "");
    else if (dpprof_json_number(v, &d) == DPPROF_OK) snprintf(buf, cap, "%.17g", d);
    else {
        const dpprof_json_type k = dpprof_json_kind(v);
        snprintf(buf, cap, "%s", k == DPPROF_JSON_TRUE ? "true" : (k == DPPROF_JSON_FALSE ? "false" : (k == DPPROF_JSON_NULL ? "null" : (k == DPPROF_JSON_ARRAY ? "an array" : "an object"))));
    }
    return buf;
}

/* a boolean key that must be false (or absent) for dpprof's model: 0 ok, else the exit code. a string or a
   number is no boolean ("false" and 0 are not false to transformers' json either) */
static int hf_false(const char *path, const dpprof_json *root, const char *key, const char *why) {
    const dpprof_json *v = dpprof_json_get(root, key);
    char shown[96];
    if (!v || dpprof_json_kind(v) == DPPROF_JSON_FALSE || dpprof_json_kind(v) == DPPROF_JSON_NULL) return 0;
    if (dpprof_json_kind(v) == DPPROF_JSON_TRUE) return hf_fail(path, "\"%s\" = true: %s", key, why);
    return hf_fail(path, "\"%s\" is not a boolean (%s): expected true or false", key, hf_show(v, shown, sizeof shown));
}

/* an optional number in (0, hi] (hi_open: (0, hi)) under key: 0 (*out kept where absent or null), else the exit code */
static int hf_real(const char *path, const dpprof_json *root, const char *key, double hi, int hi_open, double *out) {
    const dpprof_json *v = dpprof_json_get(root, key);
    char shown[96], what[160];
    double d;
    if (!v || dpprof_json_kind(v) == DPPROF_JSON_NULL) return 0;
    hf_show(v, shown, sizeof shown);
    if (dpprof_json_number(v, &d) != DPPROF_OK) snprintf(what, sizeof what, "is not a number (%s): expected a number in (0, %g%s", shown, hi, hi_open ? ")" : "]");
    else if (!(d > 0 && (hi_open ? d < hi : d <= hi))) snprintf(what, sizeof what, "is out of range (%s): expected a number in (0, %g%s", shown, hi, hi_open ? ")" : "]");
    else {
        *out = d;
        return 0;
    }
    return hf_fail(path, "\"%s\" %s", key, what);
}

/* the last file read: a sweep checks every configuration's options, and ten thousand of them name one file */
static struct hf_memo {
    char path[PATH_MAX];
    dev_t dev;
    ino_t ino;
    off_t size;
    time_t mtime;
    long long V, C, F, L, NH, NKV, HS, pos, window;
    double theta, eps;
    int tied, llama3;
} hf_memo;

/* what dpprof does not model of a config it takes: the result's config.unmodelled (dpprof fit prints it) */
static const char hf_llama3_note[] = "rope_scaling llama3: the rotary frequencies are rope_theta's alone (memory, time and traffic are the same; the values are not transformers')";

/* every key of a config.json is one dpprof models, or one that changes nothing of the architecture (token ids, the
   dtype, initialisation, transformers' bookkeeping), or it is refused by name: a key that changes the model is never
   ignored (a Qwen2 config relabelled llama keeps its architectures and would be short of its biases) */
static const char hf_keys_modelled[] = "model_type|architectures|hidden_act|attention_bias|mlp_bias|attention_dropout|sliding_window|rope_scaling|rope_parameters|"
                                       "vocab_size|hidden_size|intermediate_size|num_hidden_layers|num_attention_heads|num_key_value_heads|head_dim|"
                                       "max_position_embeddings|rope_theta|rms_norm_eps|tie_word_embeddings";
static const char hf_keys_inert[] = "_name_or_path|bos_token_id|eos_token_id|pad_token_id|initializer_range|pretraining_tp|torch_dtype|dtype|transformers_version|"
                                    "use_cache|id2label|label2id|num_labels|problem_type|tokenizer_class|output_attentions|output_hidden_states|return_dict";
static int hf_word_in(const char *w, size_t n, const char *list) {
    while (*list) {
        const size_t k = strcspn(list, "|");
        if (k == n && !strncmp(list, w, n)) return 1;
        list += k + (list[k] == '|');
    }
    return 0;
}
static int hf_keys_check(const char *path, const dpprof_json *root) {
    const dpprof_json *v = dpprof_json_get(root, "architectures");
    size_t i;
    char shown[96];
    for (i = 0; i < dpprof_json_len(root); i++) {
        const char *k = dpprof_json_key(root, i);
        const size_t n = dpprof_json_key_len(root, i);
        if (!hf_word_in(k, n, hf_keys_modelled) && !hf_word_in(k, n, hf_keys_inert)) {
            char key[208];
            snprintf(key, sizeof key, "%.*s", (int)(n < 200 ? n : 200), k);
            return hf_fail(path, "\"%s\": a key dpprof does not model, which may change the architecture: refused rather than ignored%s (dpprof models the Llama "
                                 "architecture's keys and leaves token ids, dtype and initialisation aside)",
                           key, "");
        }
    }
    if (v && dpprof_json_kind(v) != DPPROF_JSON_NULL) { /* the class transformers would build: Llama's or Mistral's */
        if (dpprof_json_kind(v) != DPPROF_JSON_ARRAY) return hf_fail(path, "\"%s\" is not an array (%s)", "architectures", hf_show(v, shown, sizeof shown));
        for (i = 0; i < dpprof_json_len(v); i++) {
            const char *a = dpprof_json_string(dpprof_json_at(v, i));
            if (!a || (strncmp(a, "Llama", 5) && strncmp(a, "Mistral", 7)))
                return hf_fail(path, "\"architectures\" holds %s%s: dpprof models LlamaFor... and MistralFor... only (a model_type of llama on another architecture is refused)",
                               a ? a : hf_show(dpprof_json_at(v, i), shown, sizeof shown), "");
        }
    }
    if ((v = dpprof_json_get(root, "attention_dropout")) && dpprof_json_kind(v) != DPPROF_JSON_NULL) {
        double d = -1;
        if (dpprof_json_number(v, &d) != DPPROF_OK || d != 0)
            return hf_fail(path, "\"%s\" = %s: dpprof has no dropout (0 only)", "attention_dropout", hf_show(v, shown, sizeof shown));
    }
    return 0;
}

static int hf_config_load(const char *path, run_opts *o) {
    dpprof_config *c = &o->cfg;
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root, *v;
    char err[512];
    const char *str;
    long long V, C, F, L, NH, NKV, HS, pos, window = 0;
    double theta = 10000.0, eps = 1e-6; /* transformers' LlamaConfig defaults */
    int tied = 0, llama3 = 0, rc = EXIT_USAGE, seq;
    struct stat st;
    if (c->preset) return cli_usage("--hf-config defines the model: --preset/--model '%s' cannot come with it", c->preset);
    if (in_check(NULL, path, IN_HF_LIMIT, err, sizeof err)) return hf_fail(path, "%s%s", err, "");
    if (stat(path, &st) == 0 && !strcmp(hf_memo.path, path) && hf_memo.dev == st.st_dev && hf_memo.ino == st.st_ino && hf_memo.size == st.st_size &&
        hf_memo.mtime == st.st_mtime) { /* the same file, unchanged: its model as read before */
        V = hf_memo.V, C = hf_memo.C, F = hf_memo.F, L = hf_memo.L, NH = hf_memo.NH, NKV = hf_memo.NKV, HS = hf_memo.HS, pos = hf_memo.pos;
        theta = hf_memo.theta, eps = hf_memo.eps, tied = hf_memo.tied, window = hf_memo.window, llama3 = hf_memo.llama3;
        goto apply;
    }
    if (dpprof_json_parse_file(path, (size_t)IN_HF_LIMIT, &doc) != 0) return cli_fail(EXIT_USAGE, "--hf-config: %s", dpprof_last_error());
    root = dpprof_json_root(doc);
    if (dpprof_json_kind(root) != DPPROF_JSON_OBJECT) {
        hf_fail(path, "not a JSON object%s%s", "", "");
        goto done;
    }
    v = dpprof_json_get(root, "model_type");
    if (!v) {
        hf_fail(path, "the required key \"%s\" is missing%s", "model_type", "");
        goto done;
    }
    if (!(str = dpprof_json_string(v)) || (strcmp(str, "llama") && strcmp(str, "mistral"))) {
        hf_fail(path, "\"%s\" = %s: dpprof models the Llama architecture (model_type \"llama\", or \"mistral\" where its sliding window covers --seq) only", "model_type", str ? str : "(not a string)");
        goto done;
    }
    if (hf_keys_check(path, root)) goto done;
    v = dpprof_json_get(root, "hidden_act");
    if (v && (!(str = dpprof_json_string(v)) || strcmp(str, "silu"))) {
        hf_fail(path, "\"%s\" = %s: dpprof's MLP is SwiGLU with silu", "hidden_act", str ? str : "(not a string)");
        goto done;
    }
    if (hf_false(path, root, "attention_bias", "dpprof's projections have no biases") || hf_false(path, root, "mlp_bias", "dpprof's projections have no biases")) goto done;
    /* a sliding window that covers the sequence is full causal attention (Mistral's below its window): checked
       against --seq where the model is applied */
    if ((window = hf_int(path, root, "sliding_window", 0, INT32_MAX)) < 0) goto done;
    v = dpprof_json_get(root, "rope_scaling");
    if (!v || dpprof_json_kind(v) == DPPROF_JSON_NULL) v = dpprof_json_get(root, "rope_parameters"); /* transformers 5 */
    if (v && dpprof_json_kind(v) != DPPROF_JSON_NULL) {
        const dpprof_json *t = dpprof_json_get(v, "rope_type");
        str = dpprof_json_string(t ? t : dpprof_json_get(v, "type"));
        if (dpprof_json_kind(v) != DPPROF_JSON_OBJECT || !str) {
            hf_fail(path, "\"%s\" is not an object with a rope_type%s", "rope_scaling", "");
            goto done;
        }
        if (!strcmp(str, "llama3")) llama3 = 1; /* the frequencies alone: the same shapes, flops and bytes */
        else if (strcmp(str, "default")) {
            hf_fail(path, "\"rope_scaling\" of type \"%s\"%s: dpprof implements none but llama3's (whose frequencies it leaves unscaled)", str, "");
            goto done;
        }
    }
    if ((V = hf_int(path, root, "vocab_size", 1, 16777216)) < 0 || (C = hf_int(path, root, "hidden_size", 1, 16777216)) < 0 ||
        (F = hf_int(path, root, "intermediate_size", 1, 16777216)) < 0 || (L = hf_int(path, root, "num_hidden_layers", 1, 4096)) < 0 ||
        (NH = hf_int(path, root, "num_attention_heads", 1, 65536)) < 0 || (NKV = hf_int(path, root, "num_key_value_heads", 0, 65536)) < 0 ||
        (HS = hf_int(path, root, "head_dim", 0, DPPROF_MAX_HEAD_SIZE)) < 0 || (pos = hf_int(path, root, "max_position_embeddings", 0, INT32_MAX)) < 0)
        goto done;
    if (!NKV) NKV = NH; /* transformers' default: multi-head attention */
    if (!HS && C % NH) {
        char what[160];
        snprintf(what, sizeof what, "%lld is not a multiple of num_attention_heads = %lld, and no head_dim is given", C, NH);
        hf_fail(path, "\"%s\" = %s", "hidden_size", what);
        goto done;
    }
    if (NH % NKV) {
        char what[160];
        snprintf(what, sizeof what, "%lld does not divide num_attention_heads = %lld", NKV, NH);
        hf_fail(path, "\"%s\" = %s", "num_key_value_heads", what);
        goto done;
    }
    if (hf_real(path, root, "rope_theta", 1e12, 0, &theta) || hf_real(path, root, "rms_norm_eps", 1, 1, &eps)) goto done;
    if ((v = dpprof_json_get(root, "rope_parameters")) && dpprof_json_kind(v) == DPPROF_JSON_OBJECT && hf_real(path, v, "rope_theta", 1e12, 0, &theta)) goto done;
    if ((v = dpprof_json_get(root, "tie_word_embeddings")) && dpprof_json_kind(v) != DPPROF_JSON_NULL) {
        char shown[96];
        if (dpprof_json_kind(v) != DPPROF_JSON_TRUE && dpprof_json_kind(v) != DPPROF_JSON_FALSE) {
            hf_fail(path, "\"%s\" is not a boolean (%s): expected true or false", "tie_word_embeddings", hf_show(v, shown, sizeof shown));
            goto done;
        }
        tied = dpprof_json_kind(v) == DPPROF_JSON_TRUE;
    }
    if (strlen(path) < sizeof hf_memo.path && stat(path, &st) == 0) {
        snprintf(hf_memo.path, sizeof hf_memo.path, "%s", path);
        hf_memo.dev = st.st_dev, hf_memo.ino = st.st_ino, hf_memo.size = st.st_size, hf_memo.mtime = st.st_mtime;
        hf_memo.V = V, hf_memo.C = C, hf_memo.F = F, hf_memo.L = L, hf_memo.NH = NH, hf_memo.NKV = NKV, hf_memo.HS = HS, hf_memo.pos = pos;
        hf_memo.theta = theta, hf_memo.eps = eps, hf_memo.tied = tied, hf_memo.window = window, hf_memo.llama3 = llama3;
    }
apply:
    seq = c->seq ? c->seq : 64; /* dpprof_config's default */
    if (window && window < seq) {
        char what[160];
        snprintf(what, sizeof what, "%lld, shorter than --seq %d: dpprof's attention is full causal attention, the window's only where it covers the sequence", window, seq);
        hf_fail(path, "\"%s\" = %s", "sliding_window", what);
        goto done;
    }
    if (llama3) {
        c->unmodelled = hf_llama3_note;
        if (!o->quiet) fprintf(stderr, "dpprof: %s: --hf-config %s: not modelled: %s\n", cli_cmd ? cli_cmd : "run", path, hf_llama3_note);
    }
    /* an option given on the command line wins over the file */
    if (!c->vocab) c->vocab = (int)V;
    if (!c->hidden) c->hidden = (int)C;
    if (!c->ffn) c->ffn = (int)F;
    if (!c->layers) c->layers = (int)L;
    if (!c->heads) c->heads = (int)NH;
    if (!c->kv_heads) c->kv_heads = (int)NKV;
    if (!c->head_dim && HS && HS * NH != C) c->head_dim = (int)HS;
    if (!(c->rope_theta > 0)) c->rope_theta = theta;
    if (!(c->norm_eps > 0)) c->norm_eps = eps;
    if (!c->tie_embeddings) c->tie_embeddings = tied ? DPPROF_SWITCH_ON : DPPROF_SWITCH_OFF;
    c->model_name = path;
    o->hf_max_pos = (int)pos;
    rc = EXIT_OK;
done:
    dpprof_json_free(doc);
    return rc;
}

/* --peft-config FILE: LoRA as a PEFT adapter_config.json gives it. r, lora_alpha (scaled for use_rslora), target_modules
   (names of the projections, or "all-linear") and task_type fill the configuration where no option set them (an option
   wins), modules_to_save names what trains beside the adapters (lm_head: the head, as --train-head; a cls head trains
   anyway). a key dpprof does not model is accepted only where its value turns nothing on (null, false, {} or []: the
   variants a newer PEFT lists unused); else it is refused by name. docs/model.md */
#define IN_PEFT_LIMIT ((long long)1 << 20)
static int peft_fail(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int peft_fail(const char *path, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cli_fail(EXIT_USAGE, "--peft-config %s: %s", path, msg);
}
static const char peft_keys_inert[] = "base_model_name_or_path|revision|inference_mode|peft_version|auto_mapping|megatron_config|megatron_core|qalora_group_size|runtime_config";
static const char peft_dropout_note[] = "lora_dropout: dpprof's adapters run without dropout (the dropped input PEFT keeps for each adapter's backward is not counted)";
static const char *const peft_proj[DPPROF__P_PER_LAYER] = {NULL, "q_proj", "k_proj", "v_proj", "o_proj", NULL, "gate_proj", "up_proj", "down_proj"};

/* a value that turns nothing on: null, false, {} or [] (absent: NULL) */
static int peft_off(const dpprof_json *v) {
    const dpprof_json_type t = v ? dpprof_json_kind(v) : DPPROF_JSON_NULL;
    return t == DPPROF_JSON_NULL || t == DPPROF_JSON_FALSE || ((t == DPPROF_JSON_OBJECT || t == DPPROF_JSON_ARRAY) && !dpprof_json_len(v));
}

static int peft_config_load(const char *path, run_opts *o, int task_given, int dropout_given) {
    dpprof_config *c = &o->cfg;
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root, *v;
    char err[512], shown[96], targets[64] = "";
    const char *str;
    long long r;
    double alpha = 0, dropout = 0;
    int rc = EXIT_USAGE, rslora = 0, head = 0, cls = -1, j;
    size_t i;
    if (in_check(NULL, path, IN_PEFT_LIMIT, err, sizeof err)) return peft_fail(path, "%s", err);
    if (dpprof_json_parse_file(path, (size_t)IN_PEFT_LIMIT, &doc) != 0) return cli_fail(EXIT_USAGE, "--peft-config: %s", dpprof_last_error());
    root = dpprof_json_root(doc);
    if (dpprof_json_kind(root) != DPPROF_JSON_OBJECT) {
        peft_fail(path, "not a JSON object");
        goto done;
    }
    if (!(str = dpprof_json_string(dpprof_json_get(root, "peft_type"))) || strcmp(str, "LORA")) {
        peft_fail(path, "\"peft_type\" = %s: dpprof models LoRA (\"LORA\") only", str ? str : (dpprof_json_get(root, "peft_type") ? "not a string" : "missing"));
        goto done;
    }
    for (i = 0; i < dpprof_json_len(root); i++) { /* every other key: modelled below, inert, or off */
        static const char known[] = "peft_type|r|lora_alpha|use_rslora|target_modules|modules_to_save|task_type|bias|lora_dropout|init_lora_weights|fan_in_fan_out|use_dora|"
                                    "layers_to_transform|layers_pattern|rank_pattern|alpha_pattern|exclude_modules|lora_bias";
        const char *k = dpprof_json_key(root, i);
        const size_t n = dpprof_json_key_len(root, i);
        const dpprof_json *x = dpprof_json_member(root, i);
        if (hf_word_in(k, n, known) || hf_word_in(k, n, peft_keys_inert) || peft_off(x)) continue;
        peft_fail(path, "\"%.*s\" = %s: a PEFT feature dpprof does not model: refused rather than ignored", (int)(n < 200 ? n : 200), k, hf_show(x, shown, sizeof shown));
        goto done;
    }
    { /* keys that must hold their default: each turns on what dpprof does not model */
        static const struct {
            const char *key, *why;
        } off[] = {{"fan_in_fan_out", "Conv1D weights (GPT-2's), not Llama's linear layers"}, {"use_dora", "DoRA's magnitude vectors and its decomposition"}, {"lora_bias", "a bias on lora_B"}, {"layers_to_transform", "adapters on some layers only (dpprof adapts every layer)"}, {"layers_pattern", "adapters on some layers only (dpprof adapts every layer)"}, {"rank_pattern", "a rank per module (dpprof has one r)"}, {"alpha_pattern", "an alpha per module (dpprof has one alpha)"}, {"exclude_modules", "modules left out of target_modules"}};
        for (j = 0; j < (int)(sizeof off / sizeof off[0]); j++) {
            if (peft_off(v = dpprof_json_get(root, off[j].key))) continue;
            peft_fail(path, "\"%s\" = %s: %s, which dpprof does not model", off[j].key, hf_show(v, shown, sizeof shown), off[j].why);
            goto done;
        }
    }
    v = dpprof_json_get(root, "r");
    if (!v || dpprof_json_int64(v, &r) != DPPROF_OK || r < 1 || r > DPPROF__DIM_MAX) {
        peft_fail(path, "\"r\" = %s: expected an integer in [1, %d]", v ? hf_show(v, shown, sizeof shown) : "(missing)", DPPROF__DIM_MAX);
        goto done;
    }
    if ((v = dpprof_json_get(root, "lora_alpha")) && dpprof_json_kind(v) != DPPROF_JSON_NULL && (dpprof_json_number(v, &alpha) != DPPROF_OK || !(alpha > 0 && alpha <= 1e12))) {
        peft_fail(path, "\"lora_alpha\" = %s: expected a number in (0, 1e12]", hf_show(v, shown, sizeof shown));
        goto done;
    }
    if ((v = dpprof_json_get(root, "use_rslora")) && dpprof_json_kind(v) != DPPROF_JSON_NULL) {
        if (dpprof_json_kind(v) != DPPROF_JSON_TRUE && dpprof_json_kind(v) != DPPROF_JSON_FALSE) {
            peft_fail(path, "\"use_rslora\" is not a boolean (%s)", hf_show(v, shown, sizeof shown));
            goto done;
        }
        rslora = dpprof_json_kind(v) == DPPROF_JSON_TRUE;
    }
    if ((v = dpprof_json_get(root, "lora_dropout")) && dpprof_json_kind(v) != DPPROF_JSON_NULL && (dpprof_json_number(v, &dropout) != DPPROF_OK || !(dropout >= 0 && dropout < 1))) {
        peft_fail(path, "\"lora_dropout\" = %s: expected a number in [0, 1)", hf_show(v, shown, sizeof shown));
        goto done;
    }
    if ((v = dpprof_json_get(root, "bias")) && dpprof_json_kind(v) != DPPROF_JSON_NULL &&
        (!(str = dpprof_json_string(v)) || (strcmp(str, "none") && strcmp(str, "all") && strcmp(str, "lora_only")))) {
        peft_fail(path, "\"bias\" = %s: expected \"none\", \"all\" or \"lora_only\" (Llama's projections have no biases to train)", hf_show(v, shown, sizeof shown));
        goto done;
    }
    if ((v = dpprof_json_get(root, "init_lora_weights")) && dpprof_json_kind(v) != DPPROF_JSON_TRUE && dpprof_json_kind(v) != DPPROF_JSON_FALSE &&
        (!(str = dpprof_json_string(v)) || strcmp(str, "gaussian"))) {
        peft_fail(path, "\"init_lora_weights\" = %s: an initialisation that changes the base weights (true, false or \"gaussian\" only)", hf_show(v, shown, sizeof shown));
        goto done;
    }
    v = dpprof_json_get(root, "target_modules");
    if (!v || dpprof_json_kind(v) == DPPROF_JSON_NULL) snprintf(targets, sizeof targets, "q,v"); /* PEFT's default for Llama */
    else if ((str = dpprof_json_string(v)) != NULL) {
        if (strcmp(str, "all-linear")) {
            peft_fail(path, "\"target_modules\" = \"%.60s\": a regular expression; dpprof takes a list of projections or \"all-linear\"", str);
            goto done;
        }
        snprintf(targets, sizeof targets, "q,k,v,o,gate,up,down"); /* every linear layer but the output layer */
    } else if (dpprof_json_kind(v) == DPPROF_JSON_ARRAY && dpprof_json_len(v)) {
        int mask = 0;
        for (i = 0; i < dpprof_json_len(v); i++) {
            const char *m = dpprof_json_string(dpprof_json_at(v, i));
            for (j = 0; m && j < DPPROF__P_PER_LAYER; j++)
                if (peft_proj[j] && !strcmp(m, peft_proj[j])) break;
            if (!m || j == DPPROF__P_PER_LAYER) {
                peft_fail(path, "\"target_modules\" holds %s: dpprof adapts q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj and down_proj", m ? m : hf_show(dpprof_json_at(v, i), shown, sizeof shown));
                goto done;
            }
            mask |= 1 << j;
        }
        for (j = 0; j < DPPROF__P_PER_LAYER; j++) /* in dpprof's order, PEFT's names less _proj */
            if (mask >> j & 1) snprintf(targets + strlen(targets), sizeof targets - strlen(targets), "%s%.*s", *targets ? "," : "", (int)(strlen(peft_proj[j]) - 5), peft_proj[j]);
    } else {
        peft_fail(path, "\"target_modules\" = %s: expected a list of module names or \"all-linear\"", hf_show(v, shown, sizeof shown));
        goto done;
    }
    if ((v = dpprof_json_get(root, "task_type")) && dpprof_json_kind(v) != DPPROF_JSON_NULL) {
        if (!(str = dpprof_json_string(v)) || (strcmp(str, "CAUSAL_LM") && strcmp(str, "SEQ_CLS"))) {
            peft_fail(path, "\"task_type\" = %s: dpprof trains CAUSAL_LM (--task lm) and SEQ_CLS (--task cls)", hf_show(v, shown, sizeof shown));
            goto done;
        }
        cls = !strcmp(str, "SEQ_CLS");
        if (task_given && cls != (c->task == DPPROF_TASK_CLS)) {
            peft_fail(path, "\"task_type\" = \"%s\", but --task %s", str, c->task == DPPROF_TASK_CLS ? "cls" : "lm");
            goto done;
        }
    }
    if ((v = dpprof_json_get(root, "modules_to_save")) && dpprof_json_kind(v) != DPPROF_JSON_NULL) {
        if (dpprof_json_kind(v) != DPPROF_JSON_ARRAY) {
            peft_fail(path, "\"modules_to_save\" = %s: expected a list of module names", hf_show(v, shown, sizeof shown));
            goto done;
        }
        for (i = 0; i < dpprof_json_len(v); i++) {
            const char *m = dpprof_json_string(dpprof_json_at(v, i));
            if (m && !strcmp(m, "lm_head") && cls != 1) head = 1;
            else if (!(m && (!strcmp(m, "score") || !strcmp(m, "classifier")) && (cls == 1 || (cls < 0 && c->task == DPPROF_TASK_CLS)))) {
                peft_fail(path, "\"modules_to_save\" holds %s: dpprof trains the lm head (lm_head) or a cls head (score, classifier) beside the adapters, nothing else",
                          m ? m : hf_show(dpprof_json_at(v, i), shown, sizeof shown));
                goto done;
            }
        }
    }
    /* an option given on the command line wins over the file */
    if (cls == 1) c->task = DPPROF_TASK_CLS;
    if (!c->lora_rank) c->lora_rank = (int)r;
    if (!(c->lora_alpha > 0)) c->lora_alpha = (alpha > 0 ? alpha : 8.0) * (rslora ? sqrt((double)c->lora_rank) : 1.0); /* PEFT's default alpha 8; rslora: alpha / sqrt(r) */
    if (!c->lora_targets) {
        static char memo[64];
        snprintf(memo, sizeof memo, "%s", targets);
        c->lora_targets = memo;
    }
    if (head && !c->train_head) c->train_head = DPPROF_SWITCH_ON;
    if (dropout_given) dropout = c->lora_dropout;
    c->lora_dropout = dropout; /* the frameworks' walk keeps what it drops; dpprof's engine has none */
    if (dropout > 0 && c->framework < DPPROF_FRAMEWORK_PYTORCH) {
        static char both[sizeof hf_llama3_note + sizeof peft_dropout_note + 2];
        if (c->unmodelled && c->unmodelled != peft_dropout_note) { /* the config.json's note too: both said */
            snprintf(both, sizeof both, "%s; %s", c->unmodelled, peft_dropout_note);
            c->unmodelled = both;
        } else c->unmodelled = peft_dropout_note;
        if (!o->quiet) fprintf(stderr, "dpprof: %s: --peft-config %s: not modelled: %s\n", cli_cmd ? cli_cmd : "run", path, peft_dropout_note);
    }
    rc = EXIT_OK;
done:
    dpprof_json_free(doc);
    return rc;
}

static int parse_run(int argc, char **argv, run_opts *o) {
    const char *saved = cli_cmd;
    int rc;
    memset(o, 0, sizeof *o);
    o->experiment = "run";
    cli_cmd = "run";
    rc = cli_parse(&run_cmd, argc, argv, o, &o->cfg, NULL, NULL);
    if (rc == EXIT_OK) {
        if (o->trace) o->cfg.trace_ops = 1; /* a trace times every op */
        o->limit_given = o->cfg.memory_limit != 0;
        o->sigma_given = cli_given(argc, argv, "--sigma");
        if (o->hf_config) rc = hf_config_load(o->hf_config, o);
        if (rc == EXIT_OK && o->peft_config) rc = peft_config_load(o->peft_config, o, cli_given(argc, argv, "--task"), cli_given(argc, argv, "--lora-dropout"));
    }
    cli_cmd = saved;
    return rc;
}

/* ---- inputs: read only where they are regular files within a stated size ------------------------------
   a FIFO or a device could block or never end (/dev/zero), a directory is not a file: refused with the reason.
   0, or -1 after saying why (what NULL: silently, why in buf) */
#define IN_CONF_LIMIT ((long long)16 << 20) /* an experiment file */
#define IN_JSON_LIMIT ((long long)1 << 30)  /* a result file */
#define IN_DATA_LIMIT ((long long)1 << 30)  /* --data: read whole into memory */
static int in_check(const char *what, const char *path, long long limit, char *buf, size_t cap) {
    struct stat st;
    char why[256];
    if (stat(path, &st) != 0) snprintf(why, sizeof why, "cannot read: %s", strerror(errno));
    else if (S_ISDIR(st.st_mode)) snprintf(why, sizeof why, "is a directory");
    else if (!S_ISREG(st.st_mode))
        snprintf(why, sizeof why, "not a regular file (%s: not read, it could block or never end)", S_ISFIFO(st.st_mode) ? "a FIFO" : (S_ISSOCK(st.st_mode) ? "a socket" : "a device"));
    else if ((long long)st.st_size > limit) snprintf(why, sizeof why, "%lld bytes, over the limit of %lld for %s", (long long)st.st_size, limit, limit == IN_CONF_LIMIT ? "an experiment file" : (limit == IN_HF_LIMIT ? "a config.json" : (limit == IN_DATA_LIMIT && what && !strcmp(what, "--data") ? "--data" : "a result file")));
    else return 0;
    if (buf) snprintf(buf, cap, "%s", why);
    if (what) cli_fail(0, "%s '%s': %s", what, path, why);
    return -1;
}

/* ---- outputs: every file dpprof writes goes through here ------------------------------------------
   a regular file (or a symlink's target) is written to a unique temporary beside it (.dpprof-tmp.NAME.XXXXXX,
   a pattern of dpprof's own) and renamed into place after every write, flush, fsync and close succeeded, so a
   reader never sees half of it, concurrent writers never share a temporary, and a failure leaves what was
   there; a file replaced keeps its owner and mode. a standard stream by any name ("-", /dev/stdout,
   /dev/stderr, /dev/fd/N, /proc/self/fd/N, or the file standard output or error is redirected to) is written
   in place through its descriptor, never renamed over; a device is written in place (never replaced); a FIFO
   is written in place when a reader has it open, else refused. a directory, an empty path, a missing parent
   directory are refused before any work. the temporaries of a process, files and directories, are removed
   when it is stopped by a signal, and a sweep's resume removes those an earlier one left. */
enum {
    OUT_FILE = 1,
    OUT_STREAM, /* one of the process's open descriptors: standard output, standard error, /dev/fd/N */
    OUT_DEVICE,
    OUT_FIFO
};
typedef struct out_file {
    const char *name;    /* as given: the messages say it */
    char path[PATH_MAX]; /* what is written: the name, or its symlink's target */
    char tmp[PATH_MAX];  /* the temporary beside path; "" when written in place */
    FILE *f;
    int kind;
} out_file;

/* what dpprof's temporaries start with: no file of a user's is removed for looking like one (a backup named
   .r.json.backup is not) */
#define OUT_TMP_PREFIX ".dpprof-tmp."
/* the marker a dump directory carries: a directory is replaced only where dpprof wrote it */
#define OUT_DUMP_MARKER ".dpprof-dump"

#define OUT_MAX_TMPS 16
static char out_tmps[OUT_MAX_TMPS][PATH_MAX]; /* live temporaries, removed on a signal */
static volatile sig_atomic_t out_isdir[OUT_MAX_TMPS];
static volatile sig_atomic_t out_ntmps;

/* the files a dump writes (dpprof_session_dump), and its marker: all a directory may hold for a new dump to
   replace it */
static const char *const outdir_names[] = {"config.json", "model.safetensors", "batch.safetensors", "grads.safetensors", "step.json", OUT_DUMP_MARKER};
#define OUTDIR_NNAMES ((int)(sizeof outdir_names / sizeof outdir_names[0]))

/* in a signal handler: dir/name into buf without stdio (async-signal-safe) */
static void out_join(char *buf, size_t cap, const char *dir, const char *name) {
    size_t n = 0;
    while (*dir && n + 1 < cap) buf[n++] = *dir++;
    if (n + 1 < cap) buf[n++] = '/';
    while (*name && n + 1 < cap) buf[n++] = *name++;
    buf[n] = 0;
}

static void out_on_signal(int sig) {
    int i, k;
    for (i = 0; i < out_ntmps; i++) {
        if (!out_tmps[i][0]) continue;
        if (out_isdir[i]) { /* a dump in the making: its files, then the directory */
            char full[PATH_MAX + 64];
            for (k = 0; k < OUTDIR_NNAMES; k++) {
                out_join(full, sizeof full, out_tmps[i], outdir_names[k]);
                unlink(full);
            }
            rmdir(out_tmps[i]);
        } else unlink(out_tmps[i]);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void out_track_kind(const char *tmp, int on, int isdir) {
    static int installed;
    int i;
    if (!installed) { /* only where nobody else handles them (a sweep stops its children itself) */
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
        size_t k;
        installed = 1;
        for (k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
            struct sigaction old;
            if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler == SIG_DFL) signal(sigs[k], out_on_signal);
        }
    }
    for (i = 0; i < out_ntmps; i++)
        if (on ? !out_tmps[i][0] : !strcmp(out_tmps[i], tmp)) break;
    if (on && i == out_ntmps && out_ntmps < OUT_MAX_TMPS) out_ntmps++;
    if (i < OUT_MAX_TMPS && i < out_ntmps) {
        if (on) snprintf(out_tmps[i], PATH_MAX, "%s", tmp), out_isdir[i] = isdir;
        else out_tmps[i][0] = 0;
    }
}
static void out_track(const char *tmp, int on) { out_track_kind(tmp, on, 0); }

/* the directory part of path (".": none) and the last part */
static void out_split(const char *path, char *dir, char *base) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, PATH_MAX, "."), snprintf(base, PATH_MAX, "%s", path);
    else if (slash == path) snprintf(dir, PATH_MAX, "/"), snprintf(base, PATH_MAX, "%s", slash + 1);
    else snprintf(dir, PATH_MAX, "%.*s", (int)(slash - path), path), snprintf(base, PATH_MAX, "%s", slash + 1);
}

/* the open descriptor of this process that name designates: "-", /dev/stdout (1), /dev/stderr (2), /dev/stdin (0),
   /dev/fd/N or /proc/self/fd/N (N, where it is open), or a name of the file standard output or standard error is
   (the same inode: the file a stream is redirected to); -1 where it designates none */
static int out_stream_fd(const char *name) {
    struct stat a, b;
    int fd = -1, end = 0, k;
    char self[64];
    if (!name || !*name) return -1;
    if (!strcmp(name, "-") || !strcmp(name, "/dev/stdout")) return 1;
    if (!strcmp(name, "/dev/stderr")) return 2;
    if (!strcmp(name, "/dev/stdin")) return 0;
    snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    if (!strncmp(name, "/dev/fd/", 8)) sscanf(name + 8, "%d%n", &fd, &end), end += 8;
    else if (!strncmp(name, "/proc/self/fd/", 14)) sscanf(name + 14, "%d%n", &fd, &end), end += 14;
    else if (!strncmp(name, self, strlen(self))) sscanf(name + strlen(self), "%d%n", &fd, &end), end += (int)strlen(self);
    if (fd >= 0 && !name[end] && fcntl(fd, F_GETFD) != -1) return fd;
    if (stat(name, &a) != 0) return -1;
    for (k = 1; k <= 2; k++)
        if (fstat(k, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return k;
    return -1;
}
static int out_is_stdout(const char *name) { return out_stream_fd(name) == 1; }

/* the temporary of dir/base: dir/.dpprof-tmp.BASE.XXXXXX, or dir/.dpprof-tmp.XXXXXX where that would pass NAME_MAX
   (a name of 248 to 255 characters is written too). 0, or -1 where the path is too long */
static int out_tmpname(char *buf, size_t cap, const char *dir, const char *base) {
    const size_t fixed = strlen(OUT_TMP_PREFIX) + 7; /* the prefix, '.' and XXXXXX */
    int n = strlen(base) + fixed <= NAME_MAX ? snprintf(buf, cap, "%s/" OUT_TMP_PREFIX "%s.XXXXXX", dir, base) : snprintf(buf, cap, "%s/" OUT_TMP_PREFIX "XXXXXX", dir);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* the owner and mode of path, where it exists, onto the replacement (fd, or the directory dirpath); a new one the
   permissions a plain open or mkdir would give (fresh & ~umask). 0, or -1 where the owner cannot be kept */
static int out_keep_owner(int fd, const char *dirpath, const char *path, mode_t fresh) {
    struct stat st;
    if (stat(path, &st) != 0) {
        mode_t um = umask(0);
        umask(um);
        return (fd >= 0 ? fchmod(fd, fresh & ~um) : chmod(dirpath, fresh & ~um)), 0;
    }
    if ((st.st_uid != geteuid() || st.st_gid != getegid()) && (fd >= 0 ? fchown(fd, st.st_uid, st.st_gid) : chown(dirpath, st.st_uid, st.st_gid)) != 0) return -1;
    return (fd >= 0 ? fchmod(fd, st.st_mode & 07777) : chmod(dirpath, st.st_mode & 07777)), 0;
}

/* where name is written and how: 0, or -1 after saying why (what NULL: silently; nothing touched) */
#define OUT_SAY(...) (what ? cli_fail(0, __VA_ARGS__) : 0)
static int out_resolve(const char *what, const char *name, char *path, int *kind) {
    struct stat st;
    char dir[PATH_MAX], base[PATH_MAX];
    int hops;
    if (!name || !*name) {
        OUT_SAY("%s: an empty path (give a file name, or - for standard output)", what);
        return -1;
    }
    {
        const int fd = out_stream_fd(name);
        if (fd == 0) {
            OUT_SAY("%s '%s': is standard input", what, name);
            return -1;
        }
        if (fd > 0) { /* written in place through the descriptor (path: "fd:N") */
            *kind = OUT_STREAM;
            snprintf(path, PATH_MAX, "fd:%d", fd);
            return 0;
        }
    }
    if (strlen(name) >= PATH_MAX - 16) {
        OUT_SAY("%s '%s': path too long", what, name);
        return -1;
    }
    snprintf(path, PATH_MAX, "%s", name);
    for (hops = 0; lstat(path, &st) == 0 && S_ISLNK(st.st_mode); hops++) { /* a symlink: its target is written */
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n < 0 || hops == 40) {
            OUT_SAY("%s '%s': cannot follow the symbolic link: %s", what, name, n < 0 ? strerror(errno) : "too many levels");
            return -1;
        }
        target[n] = 0;
        if (target[0] == '/') snprintf(path, PATH_MAX, "%s", target);
        else {
            char linkdir[PATH_MAX], tmp[2 * PATH_MAX];
            out_split(path, linkdir, base);
            snprintf(tmp, sizeof tmp, "%s/%s", linkdir, target);
            if (strlen(tmp) >= PATH_MAX) {
                OUT_SAY("%s '%s': path too long", what, name);
                return -1;
            }
            memcpy(path, tmp, strlen(tmp) + 1);
        }
    }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            OUT_SAY("%s '%s': is a directory", what, name);
            return -1;
        }
        if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) *kind = OUT_DEVICE;
        else if (S_ISFIFO(st.st_mode)) *kind = OUT_FIFO;
        else if (S_ISREG(st.st_mode)) *kind = OUT_FILE;
        else {
            OUT_SAY("%s '%s': not a regular file, device or FIFO: refused", what, name);
            return -1;
        }
        if (*kind != OUT_FILE) return 0;
    } else if (errno != ENOENT) {
        OUT_SAY("%s '%s': cannot write: %s", what, name, strerror(errno));
        return -1;
    } else *kind = OUT_FILE;
    out_split(path, dir, base);
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
        OUT_SAY("%s '%s': names a directory, not a file", what, name);
        return -1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        OUT_SAY("%s '%s': cannot write: %s", what, name, stat(dir, &st) != 0 ? strerror(errno) : (!S_ISDIR(st.st_mode) ? "Not a directory" : strerror(errno)));
        return -1;
    }
    return 0;
}

/* 1 if a and b are the same file (the same inode where both exist, else the same path once resolved) */
static int out_same(const char *a, const char *b) {
    struct stat sa, sb;
    char ra[PATH_MAX], rb[PATH_MAX];
    int ka, kb;
    if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-")) return a && b && !strcmp(a, b) && strcmp(a, "-") != 0;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (!realpath(a, ra) || !realpath(b, rb)) { /* one does not exist yet: compare what would be written */
        if (out_resolve(NULL, a, ra, &ka) || out_resolve(NULL, b, rb, &kb)) return 0;
        {
            char da[PATH_MAX], fa[PATH_MAX], db[PATH_MAX], fb[PATH_MAX], pa[PATH_MAX], pb[PATH_MAX];
            out_split(ra, da, fa), out_split(rb, db, fb);
            return realpath(da, pa) && realpath(db, pb) && !strcmp(pa, pb) && !strcmp(fa, fb);
        }
    }
    return !strcmp(ra, rb);
}

/* open name for writing (see above): 0, or -1 after saying why (nothing touched) */
static int out_open(out_file *o, const char *name, const char *what) {
    char dir[PATH_MAX], base[PATH_MAX];
    int fd;
    memset(o, 0, sizeof *o);
    o->name = name;
    if (out_resolve(what, name, o->path, &o->kind)) return -1;
    if (o->kind == OUT_STREAM) { /* through a copy of the descriptor: its offset and its append flag are the stream's */
        const int sfd = atoi(o->path + 3), dfd = sfd == 1 ? -1 : dup(sfd);
        if (sfd == 1) o->f = stdout;
        else if (dfd < 0 || !(o->f = fdopen(dfd, "ab"))) {
            cli_fail(0, "%s '%s': cannot write: %s", what, name, strerror(errno));
            if (dfd >= 0) close(dfd);
            return -1;
        }
        return 0;
    }
    if (o->kind == OUT_DEVICE || o->kind == OUT_FIFO) {
        /* a FIFO nobody reads would block: opened without waiting, and refused then */
        fd = open(o->path, O_WRONLY | O_CLOEXEC | (o->kind == OUT_FIFO ? O_NONBLOCK : 0));
        if (fd < 0) {
            cli_fail(0, "%s '%s': cannot write: %s", what, name, o->kind == OUT_FIFO && errno == ENXIO ? "a FIFO that nothing reads" : strerror(errno));
            return -1;
        }
        if (o->kind == OUT_FIFO) (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        if (!(o->f = fdopen(fd, "wb"))) {
            cli_fail(0, "%s '%s': cannot write: %s", what, name, strerror(errno));
            close(fd);
            return -1;
        }
        return 0;
    }
    out_split(o->path, dir, base);
    if (out_tmpname(o->tmp, sizeof o->tmp, dir, base)) {
        cli_fail(0, "%s '%s': path too long", what, name);
        return -1;
    }
    if ((fd = mkstemp(o->tmp)) < 0) {
        cli_fail(0, "%s '%s': cannot write: %s", what, name, strerror(errno));
        o->tmp[0] = 0;
        return -1;
    }
    out_track(o->tmp, 1);
    if (out_keep_owner(fd, NULL, o->path, 0666)) { /* a replaced file keeps its owner and mode; a new one gets a plain open's */
        cli_fail(0, "%s '%s': cannot replace it keeping its owner: %s (nothing was written)", what, name, strerror(errno));
        close(fd);
        unlink(o->tmp);
        out_track(o->tmp, 0);
        return -1;
    }
    if (!(o->f = fdopen(fd, "wb"))) {
        cli_fail(0, "%s '%s': cannot write: %s", what, name, strerror(errno));
        close(fd);
        unlink(o->tmp);
        out_track(o->tmp, 0);
        return -1;
    }
    return 0;
}

/* nothing of it stays (what was written to standard output, a device or a FIFO is out) */
static void out_abort(out_file *o) {
    if (!o->f) return;
    if (o->f == stdout) fflush(stdout);
    else fclose(o->f); /* a stream's copy of its descriptor; the stream stays open */
    if (o->tmp[0]) {
        unlink(o->tmp);
        out_track(o->tmp, 0);
    }
    o->f = NULL;
}

/* every write, flush, fsync and close checked, then renamed into place: 0, or -1 after saying why */
static int out_commit(out_file *o) {
    int err = 0;
    const char *step = "write";
    if (ferror(o->f)) err = errno ? errno : EIO; /* the failed write's reason, where stdio left it */
    if (!err && fflush(o->f) != 0) err = errno, step = "flush";
    if (!err && o->kind == OUT_FILE && fsync(fileno(o->f)) != 0 && errno != EINVAL) err = errno, step = "fsync";
    if (o->f != stdout) {
        if (fclose(o->f) != 0 && !err) err = errno, step = "close";
    }
    o->f = NULL;
    if (!err && o->tmp[0] && rename(o->tmp, o->path) != 0) err = errno, step = "rename";
    if (o->tmp[0]) {
        if (err) unlink(o->tmp);
        out_track(o->tmp, 0);
    }
    if (err) cli_fail(0, "cannot write '%s' (%s failed): %s%s", o->name, step, strerror(err), o->kind == OUT_FILE ? "; nothing was replaced" : "");
    return err ? -1 : 0;
}

/* stb_image_write's callback: into an out_file's stream */
static void out_png_write(void *ctx, void *data, int size) {
    if (size > 0 && fwrite(data, 1, (size_t)size, (FILE *)ctx) != (size_t)size) { /* ferror says so at the commit */
    }
}
static int out_png(out_file *o, const dpprof_canvas *cv) {
    if (!stbi_write_png_to_func(out_png_write, o->f, cv->w, cv->h, 3, cv->rgb, cv->w * 3)) {
        cli_fail(0, "cannot encode the PNG '%s'", o->name);
        return -1;
    }
    return 0;
}

static int outdir_known(const char *name) {
    int k;
    for (k = 0; k < OUTDIR_NNAMES; k++)
        if (!strcmp(name, outdir_names[k])) return 1;
    return 0;
}

/* a directory output (--dump): refused before any work where it is a symbolic link, where it exists and is not a
   directory, or is a directory that holds anything but what dpprof wrote there: an empty directory, or an earlier
   dump (its marker, OUT_DUMP_MARKER, and its files alone). nothing of the user's is ever replaced */
static int outdir_check(const char *what, const char *name) {
    struct stat st;
    char dir[PATH_MAX], base[PATH_MAX];
    if (!name || !*name) {
        cli_fail(0, "%s: an empty path", what);
        return -1;
    }
    if (strlen(name) >= PATH_MAX - 64) {
        cli_fail(0, "%s '%s': path too long", what, name);
        return -1;
    }
    if (lstat(name, &st) == 0 && S_ISLNK(st.st_mode)) { /* a dump replaces the link, not what it points to */
        cli_fail(0, "%s '%s': is a symbolic link%s: give the directory itself", what, name, stat(name, &st) != 0 ? " to nothing" : "");
        return -1;
    }
    if (stat(name, &st) == 0) {
        DIR *d;
        struct dirent *e;
        int n = 0, marked = 0;
        char first[NAME_MAX + 1] = "";
        if (!S_ISDIR(st.st_mode)) {
            cli_fail(0, "%s '%s': exists and is not a directory", what, name);
            return -1;
        }
        if (!(d = opendir(name))) {
            cli_fail(0, "%s '%s': cannot read the directory: %s", what, name, strerror(errno));
            return -1;
        }
        while ((e = readdir(d)) != NULL) {
            char full[2 * PATH_MAX];
            struct stat fs;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(full, sizeof full, "%s/%s", name, e->d_name);
            if (!outdir_known(e->d_name) || lstat(full, &fs) != 0 || !S_ISREG(fs.st_mode)) {
                cli_fail(0, "%s '%s': holds '%s', %s: refused, nothing is replaced (a dump replaces a directory of its own files alone: config.json, "
                            "model.safetensors, batch.safetensors, grads.safetensors, step.json, " OUT_DUMP_MARKER ")",
                         what, name, e->d_name, outdir_known(e->d_name) ? "not a regular file" : "not a file of a dump");
                closedir(d);
                return -1;
            }
            marked |= !strcmp(e->d_name, OUT_DUMP_MARKER);
            if (!n++) snprintf(first, sizeof first, "%s", e->d_name);
        }
        closedir(d);
        if (n && !marked) { /* a dump's names, but not written by dpprof: a Hugging Face model folder */
            cli_fail(0, "%s '%s': holds '%s' and no " OUT_DUMP_MARKER ": not a dump of dpprof's, refused, nothing is replaced (give a new directory, or an empty one)", what, name, first);
            return -1;
        }
    }
    out_split(name, dir, base);
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        cli_fail(0, "%s '%s': cannot create the directory: %s", what, name, !*base || base[0] == '.' ? "not a directory name" : (stat(dir, &st) != 0 ? strerror(errno) : (!S_ISDIR(st.st_mode) ? "Not a directory" : strerror(errno))));
        return -1;
    }
    return 0;
}

/* the files of a dump and its marker (a dump has no subdirectories), then the directory: anything else there
   stays, and so does the directory */
static void outdir_remove(const char *path) {
    int k;
    for (k = 0; k < OUTDIR_NNAMES; k++) {
        char full[2 * PATH_MAX + 32];
        snprintf(full, sizeof full, "%s/%s", path, outdir_names[k]);
        unlink(full);
    }
    rmdir(path);
}

/* path made absolute, its symlinks resolved, where it need not exist yet (its deepest existing directory
   resolved, the rest appended): 0, or -1 */
static int path_abs(const char *path, char *out) {
    char dir[PATH_MAX], base[PATH_MAX];
    if (realpath(path, out)) return 0;
    out_split(path, dir, base);
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || !strcmp(dir, path) || path_abs(dir, out)) return -1;
    if (strlen(out) + strlen(base) + 2 > PATH_MAX) return -1;
    if (strcmp(out, "/")) strcat(out, "/");
    strcat(out, base);
    return 0;
}

/* 1 where path is the directory dir or lies within it */
static int path_within(const char *path, const char *dir) {
    char p[PATH_MAX], d[PATH_MAX];
    size_t n;
    if (path_abs(path, p) || path_abs(dir, d)) return 0;
    n = strlen(d);
    return !strncmp(p, d, n) && (p[n] == 0 || p[n] == '/' || !strcmp(d, "/"));
}

/* a temporary directory beside name (.dpprof-tmp.NAME.XXXXXX) for fill to write into, marked as dpprof's,
   renamed to name when it succeeded; an earlier dump there is replaced only then, its owner and mode kept. 0, or
   -1 (said; the temporary gone) */
static int outdir_write(const char *what, const char *name, int (*fill)(void *ctx, const char *dir), void *ctx) {
    char dir[PATH_MAX], base[PATH_MAX], tmp[PATH_MAX], old[PATH_MAX], marker[PATH_MAX + 32];
    struct stat st;
    FILE *m;
    int wrote;
    out_split(name, dir, base);
    if (out_tmpname(tmp, sizeof tmp, dir, base) || !mkdtemp(tmp)) {
        cli_fail(0, "%s '%s': cannot create a temporary directory beside it: %s", what, name, strerror(errno));
        return -1;
    }
    out_track_kind(tmp, 1, 1);
    if (out_keep_owner(-1, tmp, name, 0777)) { /* an earlier dump's owner and mode (it holds the training batch); a new one mkdir's */
        cli_fail(0, "%s '%s': cannot replace it keeping its owner: %s", what, name, strerror(errno));
        outdir_remove(tmp);
        out_track_kind(tmp, 0, 1);
        return -1;
    }
    snprintf(marker, sizeof marker, "%s/" OUT_DUMP_MARKER, tmp);
    m = fopen(marker, "wb");
    wrote = m && fputs("a dump of dpprof run --dump: dpprof replaces this directory when it dumps here again\n", m) >= 0;
    if (m && fclose(m) != 0) wrote = 0; /* a full disk shows here */
    if (!wrote) cli_fail(0, "%s '%s': cannot write its marker: %s", what, name, strerror(errno));
    if (!wrote || fill(ctx, tmp) != 0) { /* fill says its own */
        outdir_remove(tmp);
        out_track_kind(tmp, 0, 1);
        return -1;
    }
    old[0] = 0;
    if (stat(name, &st) == 0) { /* an earlier dump (outdir_check): moved aside, removed once the new one is in place */
        if (out_tmpname(old, sizeof old, dir, base) || !mkdtemp(old) || rename(name, old) != 0) {
            cli_fail(0, "%s '%s': cannot move the earlier dump aside: %s", what, name, strerror(errno));
            if (old[0]) rmdir(old);
            outdir_remove(tmp);
            out_track_kind(tmp, 0, 1);
            return -1;
        }
    }
    if (rename(tmp, name) != 0) {
        cli_fail(0, "%s '%s': cannot rename the finished dump into place: %s", what, name, strerror(errno));
        if (old[0]) (void)rename(old, name);
        outdir_remove(tmp);
        out_track_kind(tmp, 0, 1);
        return -1;
    }
    out_track_kind(tmp, 0, 1);
    if (old[0]) outdir_remove(old);
    return 0;
}

/* the temporaries a killed writer left for name (.dpprof-tmp.NAME.XXXXXX in its directory, a file or a dump's
   directory): what a resume removes before it writes name again. no other name is touched */
static void out_remove_leftovers(const char *path) {
    char dir[PATH_MAX], base[PATH_MAX], pre[PATH_MAX + 32];
    size_t np;
    DIR *d;
    struct dirent *e;
    out_split(path, dir, base);
    np = (size_t)snprintf(pre, sizeof pre, OUT_TMP_PREFIX "%s.", base);
    if (!(d = opendir(dir))) return;
    while ((e = readdir(d)) != NULL)
        if (!strncmp(e->d_name, pre, np) && strlen(e->d_name + np) == 6) {
            char full[2 * PATH_MAX];
            struct stat st;
            snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
            if (lstat(full, &st) != 0) continue;
            if (S_ISDIR(st.st_mode)) outdir_remove(full);
            else if (S_ISREG(st.st_mode)) unlink(full);
        }
    closedir(d);
}

/* a directory and its missing parents (mkdir -p); with create 0, only whether they could be made (every part
   that exists a directory, the first missing one's parent writable). 0, or -1 after saying why */
static int dir_make(const char *what, const char *path, int create) {
    char p[PATH_MAX];
    size_t k, n = strlen(path), last = 0; /* last: the length of the deepest part that exists */
    struct stat st;
    if (!n || n >= sizeof p) {
        cli_fail(0, "%s: %s '%s'", what, n ? "path too long" : "an empty path", path);
        return -1;
    }
    memcpy(p, path, n + 1);
    for (k = 1; k <= n; k++) {
        const char c = p[k];
        if ((c != '/' && c) || p[k - 1] == '/') continue;
        p[k] = 0;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                if (k == n) cli_fail(0, "%s: cannot create the directory '%s': %s", what, path, strerror(ENOTDIR));
                else cli_fail(0, "%s: cannot create the directory '%s': '%s' is not a directory", what, path, p);
                return -1;
            }
        } else if (errno == ENOENT && !create) { /* the first missing part: its parent must take a directory */
            char parent[PATH_MAX];
            if (last) snprintf(parent, sizeof parent, "%.*s", (int)last, p);
            else snprintf(parent, sizeof parent, "%s", p[0] == '/' ? "/" : ".");
            if (access(parent, W_OK | X_OK) != 0) {
                cli_fail(0, "%s: cannot create the directory '%s': %s", what, path, strerror(errno));
                return -1;
            }
            return 0;
        } else if (errno != ENOENT || (mkdir(p, 0777) != 0 && errno != EEXIST)) {
            cli_fail(0, "%s: cannot create the directory '%s': %s", what, path, strerror(errno));
            return -1;
        }
        last = k;
        p[k] = c;
    }
    return 0;
}

#endif /* DPPROF_CLI_H */
