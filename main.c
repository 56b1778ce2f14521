/* main.c - the dpprof command line: run, plot, epsilon. the only file with stb_image_write's
   implementation. build: make (see Makefile); usage: dpprof --help */
#define _POSIX_C_SOURCE 200809L
#define DPPROF_IMPLEMENTATION
#include "dpprof.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

/* exit codes: scripts and sweeps rely on them */
enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_OOM = 3 };

static const char *prog = "dpprof";

static int usage_error(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n(see '%s --help')\n", prog);
    return EXIT_USAGE;
}

/* ---- top-level help ---------------------------------------------------------------------------- */
static void help_main(void) {
    printf("dpprof %s - exact memory, time and traffic profiles of DP-SGD transformer training\n\n"
           "usage: dpprof COMMAND [options]\n\n"
           "commands:\n"
           "  run       train a Llama-style model for a few steps and profile it (dpprof run --help)\n"
           "  plot      render a figure from result JSON (dpprof plot --help)\n"
           "  epsilon   privacy spent by DP-SGD: the RDP accountant (dpprof epsilon --help)\n"
           "  presets   list the model presets and their shapes\n"
           "  version   print the version\n\n"
           "backends: cpu (reference arithmetic), dry (exact memory of any size, no arithmetic),\n"
           "cuda (GPU; not in this version), auto (cuda when it can run, else cpu).\n"
           "exit codes: 0 ok, 1 runtime error, 2 bad input, 3 out of memory (result JSON says oom).\n",
           DPPROF_VERSION);
}

static void help_run(void) {
    printf("usage: dpprof run [options]\n\n"
           "model (a preset, each size overridable):\n"
           "  --preset NAME          tiny (default), gpt2-small, llama-3.2-1b, llama-3.2-3b, llama-3.1-8b,\n"
           "                         trainer-1b, longctx  (dpprof presets lists their shapes)\n"
           "  --vocab V --hidden C --layers L --heads NH --kv-heads NKV --ffn F\n"
           "  --rope-theta X         rotary base (default: the preset's)\n"
           "  --norm-eps X           rmsnorm epsilon (default 1e-5)\n"
           "  --init-std X           std of the normal weight init (default 0.02)\n"
           "task and data:\n"
           "  --seq T                sequence length (default 64)\n"
           "  --task lm|cls          next-token prediction (default) or classification from the last token\n"
           "  --classes K            number of classes for cls (default 2)\n"
           "  --data FILE            train on a text file: byte-level tokens (lm), or lines\n"
           "                         'label<TAB>text' (cls); default: synthetic sequences\n"
           "training:\n"
           "  --algo ALGO            vanilla (default); persample, ghost, ghost_bk, flash, flash_bk, auto\n"
           "                         are the DP algorithms (not in this version: refused)\n"
           "  --batch B              logical batch size (default 8)\n"
           "  --physical-batch b     samples per forward/backward, accumulated to B (default B)\n"
           "  --steps N              measured steps (default 3)\n"
           "  --warmup W             steps run first and excluded from timing (default 0)\n"
           "  --optimizer adam|sgd   (default adam, betas 0.9/0.999, eps 1e-8)\n"
           "  --lr X                 learning rate (default 1e-3 adam, 1e-2 sgd)\n"
           "  --weight-decay X       decoupled (AdamW) weight decay (default 0)\n"
           "  --seed S               seed of init, data and noise (default 0)\n"
           "  --dtype fp32|bf16      storage type (default fp32; bf16 needs the cuda kernels: refused)\n"
           "  --backend auto|cpu|cuda|dry   (default auto)\n"
           "  --memory-limit SIZE    fail as oom past SIZE bytes (K/M/G/T suffixes); default on cpu: MemAvailable\n"
           "DP-SGD (accepted and validated, refused until the DP algorithms land):\n"
           "  --sigma S --max-grad-norm C --clipping flat|per-layer --poisson --dataset-size N --delta D\n"
           "  --lora-rank r --lora-alpha a --lora-targets q,k,v,o,gate,up,down\n"
           "  --target-epsilon E     choose sigma so that the run spends E at delta (needs --dataset-size)\n"
           "output:\n"
           "  --out FILE.json        result JSON (written atomically; also on oom/error, with its status)\n"
           "  --trace FILE.json      Chrome/Perfetto trace: phases and a live-memory counter per category\n"
           "  --dump DIR             model.safetensors, batch.safetensors, grads.safetensors, step.json\n"
           "                         for the first step's batch (cpu backend; DIR is created)\n"
           "  --experiment NAME      the 'experiment' field of the JSON (default 'run')\n"
           "  --quiet                no progress lines on stderr\n");
}

static void help_plot(void) {
    printf("usage: dpprof plot timeline RESULT.json --out FILE.png [--title TEXT]\n\n"
           "  timeline   live memory over the run, stacked by category, phases marked\n"
           "             (x: time in ms when the run measured time; allocation events for dry runs)\n");
}

/* ---- strict number parsing: the whole string, in range, or an error naming the option -------- */
static int parse_ll(const char *opt, const char *s, long long lo, long long hi, long long *out) {
    char *end;
    long long v;
    char range[96];
    errno = 0;
    v = strtoll(s, &end, 10);
    if (!*s || *end || errno == ERANGE || v < lo || v > hi) {
        snprintf(range, sizeof range, "an integer in [%lld, %lld]", lo, hi);
        fprintf(stderr, "%s: %s '%s': expected %s\n", prog, opt, s, range);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out) {
    long long v;
    if (parse_ll(opt, s, lo, hi, &v)) return -1;
    *out = (int)v;
    return 0;
}

static int parse_dbl(const char *opt, const char *s, double lo, double hi, int open_lo, double *out) {
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (!*s || *end || errno == ERANGE || v != v || v < lo || v > hi || (open_lo && v == lo)) {
        fprintf(stderr, "%s: %s '%s': expected a number in %s%g, %g]\n", prog, opt, s, open_lo ? "(" : "[", lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* sizes: bytes, or with a binary suffix K, M, G, T (KiB, MiB, GiB, TiB) */
static int parse_size(const char *opt, const char *s, long long *out) {
    char *end;
    double v;
    double mul = 1;
    errno = 0;
    v = strtod(s, &end);
    if (end != s && *end && !end[1]) {
        switch (*end) {
        case 'K': mul = 1024.0; end++; break;
        case 'M': mul = 1048576.0; end++; break;
        case 'G': mul = 1073741824.0; end++; break;
        case 'T': mul = 1099511627776.0; end++; break;
        default: break;
        }
    }
    if (!*s || *end || errno == ERANGE || !(v > 0) || v * mul > 9.0e18) {
        fprintf(stderr, "%s: %s '%s': expected a positive size in bytes, optionally with K, M, G or T (binary)\n", prog, opt, s);
        return -1;
    }
    *out = (long long)(v * mul);
    return 0;
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
    const char *out, *trace, *dump, *experiment;
    int quiet;
    double target_epsilon;
    int limit_given;
} run_opts;

static int parse_run(int argc, char **argv, run_opts *o) {
    int i;
    dpprof_config *c = &o->cfg;
    memset(o, 0, sizeof *o);
    o->experiment = "run";
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long ll;
        /* flags without a value */
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help_run(); exit(EXIT_OK); }
        if (!strcmp(a, "--quiet")) { o->quiet = 1; continue; }
        if (!strcmp(a, "--poisson")) { c->poisson = 1; continue; }
        if (strncmp(a, "--", 2) != 0) return usage_error("run: unexpected argument '%s'%s", a, "");
        if (!v) return usage_error("run: %s needs a value%s", a, "");
        i++;
#define INTOPT(name, field, lo, hi) else if (!strcmp(a, name)) { if (parse_int(a, v, lo, hi, &c->field)) return EXIT_USAGE; }
#define DBLOPT(name, field, lo, hi, open) else if (!strcmp(a, name)) { if (parse_dbl(a, v, lo, hi, open, &c->field)) return EXIT_USAGE; }
        if (!strcmp(a, "--preset")) c->preset = v;
        INTOPT("--vocab", vocab, 2, 16777216)
        INTOPT("--hidden", hidden, 2, 16777216)
        INTOPT("--layers", layers, 1, 4096)
        INTOPT("--heads", heads, 1, 65536)
        INTOPT("--kv-heads", kv_heads, 1, 65536)
        INTOPT("--ffn", ffn, 1, 16777216)
        INTOPT("--seq", seq, 1, 16777216)
        INTOPT("--classes", classes, 2, 16777216)
        INTOPT("--batch", batch, 1, 16777216)
        INTOPT("--physical-batch", physical_batch, 1, 16777216)
        INTOPT("--steps", steps, 1, 100000000)
        INTOPT("--warmup", warmup, 0, 100000000)
        INTOPT("--lora-rank", lora_rank, 1, 16777216)
        DBLOPT("--lr", lr, 0, 1e6, 1)
        DBLOPT("--weight-decay", weight_decay, 0, 1e6, 0)
        DBLOPT("--rope-theta", rope_theta, 0, 1e12, 1)
        DBLOPT("--norm-eps", norm_eps, 0, 1, 1)
        DBLOPT("--init-std", init_std, 0, 1e3, 1)
        DBLOPT("--sigma", sigma, 0, 1e6, 0)
        DBLOPT("--max-grad-norm", max_grad_norm, 0, 1e12, 1)
        DBLOPT("--delta", delta, 0, 1, 1)
        DBLOPT("--lora-alpha", lora_alpha, 0, 1e12, 1)
        else if (!strcmp(a, "--target-epsilon")) { if (parse_dbl(a, v, 0, 1e6, 1, &o->target_epsilon)) return EXIT_USAGE; }
        else if (!strcmp(a, "--dataset-size")) { if (parse_ll(a, v, 1, LLONG_MAX, &ll)) return EXIT_USAGE; c->dataset_size = ll; }
        else if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            c->seed = strtoull(v, &end, 10);
            if (!*v || *end || errno == ERANGE || *v == '-') return usage_error("run: --seed '%s': expected an integer in [0, 2^64)%s", v, "");
        }
        else if (!strcmp(a, "--task")) {
            if (!strcmp(v, "lm")) c->task = DPPROF_TASK_LM;
            else if (!strcmp(v, "cls")) c->task = DPPROF_TASK_CLS;
            else return usage_error("run: --task '%s': expected lm or cls%s", v, "");
        }
        else if (!strcmp(a, "--algo")) {
            int al = dpprof_algo_parse(v);
            if (al < 0) return usage_error("run: --algo '%s': expected vanilla, persample, ghost, ghost_bk, flash, flash_bk or auto%s", v, "");
            c->algo = (dpprof_algo)al;
        }
        else if (!strcmp(a, "--optimizer")) {
            if (!strcmp(v, "adam")) c->optimizer = DPPROF_OPT_ADAM;
            else if (!strcmp(v, "sgd")) c->optimizer = DPPROF_OPT_SGD;
            else return usage_error("run: --optimizer '%s': expected adam or sgd%s", v, "");
        }
        else if (!strcmp(a, "--clipping")) {
            if (!strcmp(v, "flat")) c->per_layer_clipping = 0;
            else if (!strcmp(v, "per-layer")) c->per_layer_clipping = 1;
            else return usage_error("run: --clipping '%s': expected flat or per-layer%s", v, "");
        }
        else if (!strcmp(a, "--dtype")) {
            if (!strcmp(v, "fp32")) c->dtype = DPPROF_DTYPE_FP32;
            else if (!strcmp(v, "bf16")) c->dtype = DPPROF_DTYPE_BF16;
            else return usage_error("run: --dtype '%s': expected fp32 or bf16%s", v, "");
        }
        else if (!strcmp(a, "--backend")) {
            if (!strcmp(v, "auto")) c->backend = DPPROF_BACKEND_AUTO;
            else if (!strcmp(v, "cpu")) c->backend = DPPROF_BACKEND_CPU;
            else if (!strcmp(v, "cuda")) c->backend = DPPROF_BACKEND_CUDA;
            else if (!strcmp(v, "dry")) c->backend = DPPROF_BACKEND_DRY;
            else return usage_error("run: --backend '%s': expected auto, cpu, cuda or dry%s", v, "");
        }
        else if (!strcmp(a, "--memory-limit")) { if (parse_size(a, v, &ll)) return EXIT_USAGE; c->memory_limit = ll; o->limit_given = 1; }
        else if (!strcmp(a, "--lora-targets")) c->lora_targets = v;
        else if (!strcmp(a, "--data")) c->data_path = v;
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--trace")) o->trace = v;
        else if (!strcmp(a, "--dump")) o->dump = v;
        else if (!strcmp(a, "--experiment")) o->experiment = v;
        else return usage_error("run: unknown option '%s'%s", a, "");
#undef INTOPT
#undef DBLOPT
    }
    return EXIT_OK;
}

/* an output file is written to PATH.tmp and renamed into place, so a reader never sees half of it
   and a failed run leaves nothing behind */
typedef struct atomic_file {
    char tmp[4096];
    const char *path;
    FILE *f;
} atomic_file;

static int atomic_open(atomic_file *af, const char *path, const char *what) {
    af->path = path;
    af->f = NULL;
    if (snprintf(af->tmp, sizeof af->tmp, "%s.tmp", path) >= (int)sizeof af->tmp) {
        fprintf(stderr, "%s: %s '%s': path too long\n", prog, what, path);
        return -1;
    }
    af->f = fopen(af->tmp, "wb");
    if (!af->f) {
        fprintf(stderr, "%s: %s '%s': cannot write: %s\n", prog, what, path, strerror(errno));
        return -1;
    }
    return 0;
}

static void atomic_abort(atomic_file *af) {
    if (!af->f) return;
    fclose(af->f);
    remove(af->tmp);
    af->f = NULL;
}

static int atomic_commit(atomic_file *af) {
    int bad = ferror(af->f);
    bad |= fflush(af->f) != 0;
    bad |= fsync(fileno(af->f)) != 0 && errno != EINVAL;
    bad |= fclose(af->f) != 0;
    af->f = NULL;
    if (bad || rename(af->tmp, af->path) != 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", prog, af->path, strerror(errno));
        remove(af->tmp);
        return -1;
    }
    return 0;
}

static int cmd_run(int argc, char **argv) {
    run_opts o;
    dpprof_config resolved;
    dpprof_shape shape;
    dpprof_session *s = NULL;
    atomic_file out, trace;
    int rc, code = EXIT_OK, total;
    char err[1024] = "";
    double t0;

    memset(&out, 0, sizeof out);
    memset(&trace, 0, sizeof trace);
    if ((rc = parse_run(argc, argv, &o)) != EXIT_OK) return rc;
    /* resolve first: bad input is reported before any file is touched */
    if (dpprof_config_resolve(&o.cfg, &resolved, &shape) != DPPROF_OK) {
        fprintf(stderr, "%s: run: %s\n", prog, dpprof_last_error());
        return EXIT_USAGE;
    }
    if (o.target_epsilon > 0) {
        /* the noise that spends exactly the target over every step this run takes */
        double sigma;
        long long steps = (long long)resolved.warmup + resolved.steps;
        if (resolved.algo == DPPROF_ALGO_VANILLA || !resolved.dataset_size || o.cfg.sigma > 0) {
            fprintf(stderr, "%s: run: --target-epsilon needs a DP --algo and --dataset-size, and replaces --sigma\n", prog);
            return EXIT_USAGE;
        }
        if (dpprof_rdp_sigma_for_epsilon((double)resolved.batch / (double)resolved.dataset_size, steps, resolved.delta, o.target_epsilon, &sigma) != 0) {
            fprintf(stderr, "%s: run: --target-epsilon %g: no noise multiplier reaches it at delta %g over %lld steps\n", prog, o.target_epsilon, resolved.delta, steps);
            return EXIT_USAGE;
        }
        o.cfg.sigma = resolved.sigma = sigma;
        if (!o.quiet) fprintf(stderr, "dpprof: sigma %.6g gives epsilon %g at delta %g over %lld steps (q = %g)\n", sigma, o.target_epsilon, resolved.delta, steps, (double)resolved.batch / (double)resolved.dataset_size);
    }
    if (!o.limit_given && (resolved.backend == DPPROF_BACKEND_CPU || resolved.backend == DPPROF_BACKEND_AUTO))
        o.cfg.memory_limit = mem_available(); /* a model that cannot fit is an oom result, not the oom killer */
    if (o.dump && mkdir(o.dump, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: --dump '%s': cannot create the directory: %s\n", prog, o.dump, strerror(errno));
        return EXIT_USAGE;
    }
    if (o.out && atomic_open(&out, o.out, "--out")) return EXIT_USAGE;
    if (o.trace && atomic_open(&trace, o.trace, "--trace")) {
        atomic_abort(&out);
        return EXIT_USAGE;
    }

    rc = dpprof_session_create(&o.cfg, &s);
    if (rc != DPPROF_OK && rc != DPPROF_ERR_OOM) {
        fprintf(stderr, "%s: run: %s\n", prog, dpprof_last_error());
        atomic_abort(&out);
        atomic_abort(&trace);
        /* input the engine refuses (unknown data, unsupported option) is bad input: no file at all */
        return rc == DPPROF_ERR_INVALID || rc == DPPROF_ERR_UNSUPPORTED || rc == DPPROF_ERR_IO || rc == DPPROF_ERR_NO_CUDA || rc == DPPROF_ERR_NO_DEVICE ? EXIT_USAGE : EXIT_ERROR;
    }
    total = resolved.warmup + resolved.steps;
    if (rc == DPPROF_OK && !o.quiet)
        fprintf(stderr, "dpprof: %s, %s, %lld parameters, seq %d, batch %d (physical %d), %d steps on %s\n",
                resolved.preset, resolved.task == DPPROF_TASK_LM ? "lm" : "cls", (long long)dpprof_session_param_elems(s, 0),
                resolved.seq, resolved.batch, resolved.physical_batch, total, dpprof_backend_name(dpprof_session_config(s)->backend));
    t0 = (double)clock();
    while (rc == DPPROF_OK && dpprof_session_steps_done(s) < total) {
        int k = dpprof_session_steps_done(s);
        rc = dpprof_session_step(s);
        if (rc == DPPROF_OK && !o.quiet) {
            double loss = dpprof_session_step_loss(s, k);
            fprintf(stderr, "  step %d/%d%s", k + 1, total, k < resolved.warmup ? " (warm-up)" : "");
            if (loss == loss) fprintf(stderr, "  loss %.4f", loss);
            fprintf(stderr, "  peak %.1f MiB  elapsed %.1f s\n", (double)dpprof_session_prof(s)->peak_bytes / 1048576.0, ((double)clock() - t0) / CLOCKS_PER_SEC);
        }
    }
    if (rc != DPPROF_OK) {
        snprintf(err, sizeof err, "%s", dpprof_last_error());
        fprintf(stderr, "%s: run: %s\n", prog, err);
        code = rc == DPPROF_ERR_OOM ? EXIT_OOM : EXIT_ERROR;
    }
    if (o.out) {
        if (dpprof_session_write_json(s, out.f, o.experiment, rc == DPPROF_OK ? "ok" : rc == DPPROF_ERR_OOM ? "oom" : "error", rc == DPPROF_OK ? NULL : err) != DPPROF_OK || atomic_commit(&out)) {
            atomic_abort(&out);
            code = EXIT_ERROR;
        }
    }
    if (o.trace) {
        if (dpprof_session_write_trace(s, trace.f) != DPPROF_OK || atomic_commit(&trace)) {
            atomic_abort(&trace);
            code = EXIT_ERROR;
        }
    }
    if (rc == DPPROF_OK && o.dump) {
        if (dpprof_session_dump(s, o.dump) != DPPROF_OK) {
            fprintf(stderr, "%s: --dump: %s\n", prog, dpprof_last_error());
            code = EXIT_ERROR;
        }
    }
    if (rc == DPPROF_OK && !o.quiet) {
        const dpprof_prof *p = dpprof_session_prof(s);
        int c;
        fprintf(stderr, "peak %.3f MiB (%lld bytes) in %s:", (double)p->peak_bytes / 1048576.0, (long long)p->peak_bytes, dpprof_phase_name(p->peak_phase));
        for (c = 0; c < DPPROF_CAT_COUNT; c++)
            if (p->peak_by_cat[c]) fprintf(stderr, " %s %.3f", dpprof_category_name(c), (double)p->peak_by_cat[c] / 1048576.0);
        fprintf(stderr, "\n");
    }
    dpprof_session_destroy(s);
    return code;
}

/* ---- plot ---------------------------------------------------------------------------------------- */
static int json_fail(const char *file, const char *what) {
    fprintf(stderr, "%s: plot: %s: %s\n", prog, file, what);
    return EXIT_USAGE;
}

/* rebuild the live-bytes timeline by category from the event log of a result file */
static int plot_timeline(const char *in, const char *outpath, const char *title) {
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root, *tl, *jt, *jb, *jc, *jm;
    char err[512], name_buf[DPPROF_PHASE_COUNT][32];
    size_t n, i, nm, k, nmarks = 0;
    int c, used[DPPROF_CAT_COUNT], nser = 0, measured, code = EXIT_USAGE;
    double *x = NULL, *y = NULL, live[DPPROF_CAT_COUNT], *mx = NULL;
    const char **mnames = NULL;
    const char *names[DPPROF_CAT_COUNT];
    unsigned char rgb[DPPROF_CAT_COUNT * 3];
    dpprof_timeline_desc d;
    dpprof_canvas cv;
    atomic_file af;
    char ttl[256];

    memset(&cv, 0, sizeof cv);
    if (dpprof_json_parse_file(in, (size_t)1 << 30, &doc, err, sizeof err) != 0) {
        fprintf(stderr, "%s: plot: %s\n", prog, err);
        return EXIT_USAGE;
    }
    root = dpprof_json_root(doc);
    tl = dpprof_json_get(root, "timeline");
    jt = dpprof_json_get(tl, "t_ms");
    jb = dpprof_json_get(tl, "bytes");
    jc = dpprof_json_get(tl, "category");
    jm = dpprof_json_get(tl, "marks");
    if (!tl || !jb || !jc || !jt || dpprof_json_kind(jb) != DPPROF_JSON_ARRAY || dpprof_json_kind(jc) != DPPROF_JSON_ARRAY || dpprof_json_kind(jt) != DPPROF_JSON_ARRAY) {
        code = json_fail(in, "no timeline (expected timeline.t_ms, timeline.bytes and timeline.category arrays: is this a dpprof result?)");
        goto done;
    }
    n = dpprof_json_len(jb);
    if (n == 0 || dpprof_json_len(jc) != n || dpprof_json_len(jt) != n) {
        code = json_fail(in, "timeline arrays are empty or of different lengths");
        goto done;
    }
    measured = dpprof_json_string(dpprof_json_get(tl, "clock")) && !strcmp(dpprof_json_string(dpprof_json_get(tl, "clock")), "measured");
    x = (double *)malloc(sizeof(double) * (n + 1));
    y = (double *)malloc(sizeof(double) * (n + 1) * DPPROF_CAT_COUNT);
    if (!x || !y) { fprintf(stderr, "%s: plot: out of memory\n", prog); code = EXIT_ERROR; goto done; }
    memset(live, 0, sizeof live);
    memset(used, 0, sizeof used);
    /* point 0 is the empty state before the first event */
    x[0] = 0;
    for (c = 0; c < DPPROF_CAT_COUNT; c++) y[c * (n + 1)] = 0;
    for (i = 0; i < n; i++) {
        long long b, cat;
        double t;
        if (dpprof_json_int64(dpprof_json_at(jb, i), &b) || dpprof_json_int64(dpprof_json_at(jc, i), &cat) || cat < 0 || cat >= DPPROF_CAT_COUNT) {
            snprintf(err, sizeof err, "timeline event %zu: bytes must be an integer and category in [0, %d)", i, DPPROF_CAT_COUNT);
            code = json_fail(in, err);
            goto done;
        }
        if (measured) {
            if (dpprof_json_number(dpprof_json_at(jt, i), &t) || !(t >= x[i])) {
                snprintf(err, sizeof err, "timeline event %zu: t_ms must be a number that does not decrease", i);
                code = json_fail(in, err);
                goto done;
            }
        } else t = (double)(i + 1);
        live[cat] += (double)b;
        if (live[cat] < -0.5) {
            snprintf(err, sizeof err, "timeline event %zu: frees more %s bytes than are live", i, dpprof_category_name((int)cat));
            code = json_fail(in, err);
            goto done;
        }
        if (b > 0) used[cat] = 1;
        x[i + 1] = t;
        for (c = 0; c < DPPROF_CAT_COUNT; c++) y[c * (n + 1) + i + 1] = live[c] / 1048576.0;
    }
    /* series: the categories that ever held memory, in the fixed category order and colours */
    for (c = 0; c < DPPROF_CAT_COUNT; c++) {
        if (!used[c]) continue;
        names[nser] = dpprof_category_name(c);
        memcpy(rgb + 3 * nser, dpprof_plot_palette(c), 3);
        if (nser != c) memmove(y + (size_t)nser * (n + 1), y + (size_t)c * (n + 1), sizeof(double) * (n + 1));
        nser++;
    }
    /* phase marks: one per phase begin */
    nm = jm ? dpprof_json_len(jm) : 0;
    mx = (double *)malloc(sizeof(double) * (nm + 1));
    mnames = (const char **)malloc(sizeof(char *) * (nm + 1));
    if (!mx || !mnames) { code = EXIT_ERROR; goto done; }
    for (k = 0; k < DPPROF_PHASE_COUNT; k++) snprintf(name_buf[k], sizeof name_buf[k], "%s", dpprof_phase_name((int)k));
    for (k = 0; k < nm; k++) {
        const dpprof_json *mk = dpprof_json_at(jm, k);
        long long ph, ev;
        double t;
        if (dpprof_json_int64(dpprof_json_get(mk, "phase"), &ph) || ph < 0 || ph >= DPPROF_PHASE_COUNT || dpprof_json_int64(dpprof_json_get(mk, "event"), &ev) || ev < 0) continue;
        if (measured) {
            if (dpprof_json_number(dpprof_json_get(mk, "t_ms"), &t)) continue;
        } else t = (double)ev + 0.5;
        mx[nmarks] = t;
        mnames[nmarks] = name_buf[ph];
        nmarks++;
    }
    memset(&d, 0, sizeof d);
    {
        const char *exp = dpprof_json_string(dpprof_json_get(root, "experiment"));
        const char *preset = dpprof_json_string(dpprof_json_path(root, "config.preset"));
        const char *algo = dpprof_json_string(dpprof_json_path(root, "config.algo"));
        const char *backend = dpprof_json_string(dpprof_json_path(root, "config.backend"));
        snprintf(ttl, sizeof ttl, "%s", title ? title : "");
        if (!title)
            snprintf(ttl, sizeof ttl, "memory timeline: %s, %s, %s backend (%s)", preset ? preset : "?", algo ? algo : "?", backend ? backend : "?", exp ? exp : "run");
    }
    d.title = ttl;
    d.xlabel = measured ? "time (ms)" : "allocation event (dry run: no time measured)";
    d.ylabel = "live memory (MiB)";
    d.n_points = (int)(n + 1);
    d.x = x;
    d.n_series = nser;
    d.y = y;
    d.series_names = names;
    d.series_rgb = rgb;
    d.n_marks = (int)nmarks;
    d.mark_x = mx;
    d.mark_names = mnames;
    if ((c = dpprof_plot_timeline(&d, &cv)) != 0) {
        fprintf(stderr, "%s: plot: %s: cannot render the timeline (code %d)\n", prog, in, c);
        code = EXIT_ERROR;
        goto done;
    }
    if (atomic_open(&af, outpath, "--out")) { code = EXIT_USAGE; goto done; }
    fclose(af.f); /* stb writes by name */
    af.f = NULL;
    if (!stbi_write_png(af.tmp, cv.w, cv.h, 3, cv.rgb, cv.w * 3) || rename(af.tmp, outpath) != 0) {
        fprintf(stderr, "%s: plot: cannot write '%s'\n", prog, outpath);
        remove(af.tmp);
        code = EXIT_ERROR;
        goto done;
    }
    code = EXIT_OK;
done:
    dpprof_canvas_free(&cv);
    free(x);
    free(y);
    free(mx);
    free(mnames);
    dpprof_json_free(doc);
    return code;
}

static int cmd_plot(int argc, char **argv) {
    const char *kind = NULL, *in = NULL, *out = NULL, *title = NULL;
    int i;
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { help_plot(); return EXIT_OK; }
        if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "--title")) {
            if (i + 1 >= argc) return usage_error("plot: %s needs a value%s", argv[i], "");
            if (!strcmp(argv[i], "--out")) out = argv[++i];
            else title = argv[++i];
        } else if (!strncmp(argv[i], "--", 2)) return usage_error("plot: unknown option '%s'%s", argv[i], "");
        else if (!kind) kind = argv[i];
        else if (!in) in = argv[i];
        else return usage_error("plot: unexpected argument '%s'%s", argv[i], "");
    }
    if (!kind || !in || !out) return usage_error("plot: usage: dpprof plot timeline RESULT.json --out FILE.png%s%s", "", "");
    if (strcmp(kind, "timeline") != 0) return usage_error("plot: unknown figure '%s' (known: timeline)%s", kind, "");
    return plot_timeline(in, out, title);
}

static void help_epsilon(void) {
    printf("usage: dpprof epsilon --sigma S --sample-rate Q --steps N [--delta D]\n"
           "       dpprof epsilon --target-epsilon E --sample-rate Q --steps N [--delta D]\n\n"
           "the RDP accountant of the Poisson-subsampled Gaussian mechanism (Mironov et al. 2019) with\n"
           "the improved RDP-to-(epsilon, delta) conversion (Balle et al. 2020), minimised over the orders\n"
           "1.1, 1.2, ..., 10.9, 12, ..., 63. prints epsilon and the best order, or the smallest sigma that\n"
           "reaches the target epsilon. delta defaults to 1e-5.\n");
}

static int cmd_epsilon(int argc, char **argv) {
    double sigma = -1, q = -1, delta = 1e-5, target = -1, eps, order;
    long long steps = -1;
    int i;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help_epsilon(); return EXIT_OK; }
        if (!v) return usage_error("epsilon: %s needs a value%s", a, "");
        i++;
        if (!strcmp(a, "--sigma")) { if (parse_dbl(a, v, 0, 1e6, 0, &sigma)) return EXIT_USAGE; }
        else if (!strcmp(a, "--sample-rate")) { if (parse_dbl(a, v, 0, 1, 0, &q)) return EXIT_USAGE; }
        else if (!strcmp(a, "--delta")) { if (parse_dbl(a, v, 0, 1, 1, &delta) || delta >= 1) { fprintf(stderr, "%s: --delta must be in (0, 1)\n", prog); return EXIT_USAGE; } }
        else if (!strcmp(a, "--target-epsilon")) { if (parse_dbl(a, v, 0, 1e6, 1, &target)) return EXIT_USAGE; }
        else if (!strcmp(a, "--steps")) { if (parse_ll(a, v, 0, 1000000000000LL, &steps)) return EXIT_USAGE; }
        else return usage_error("epsilon: unknown option '%s'%s", a, "");
    }
    if (q < 0 || steps < 0 || (sigma < 0) == (target < 0))
        return usage_error("epsilon: give --sample-rate, --steps and one of --sigma or --target-epsilon%s%s", "", "");
    if (target > 0) {
        if (dpprof_rdp_sigma_for_epsilon(q, steps, delta, target, &sigma) != 0) {
            fprintf(stderr, "%s: epsilon: no sigma reaches epsilon %g at delta %g (q %g, %lld steps)\n", prog, target, delta, q, steps);
            return EXIT_ERROR;
        }
        printf("sigma %.10g\n", sigma);
    }
    if (dpprof_rdp_epsilon(q, sigma, steps, delta, NULL, 0, &eps, &order) != 0) {
        fprintf(stderr, "%s: epsilon: the accountant could not evaluate sigma %g, q %g\n", prog, sigma, q);
        return EXIT_ERROR;
    }
    printf("epsilon %.10g\ndelta %g\nbest_order %g\n", eps, delta, order);
    return EXIT_OK;
}

static int cmd_presets(void) {
    const char *const *n;
    printf("%-14s %8s %6s %4s %4s %4s %6s %10s\n", "preset", "vocab", "hidden", "L", "NH", "NKV", "ffn", "rope_theta");
    for (n = dpprof_preset_names(); *n; n++) {
        dpprof_shape s;
        dpprof_preset_shape(*n, &s);
        printf("%-14s %8d %6d %4d %4d %4d %6d %10g\n", *n, s.V, s.C, s.L, s.NH, s.NKV, s.F, s.rope_theta);
    }
    return EXIT_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        help_main();
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) { help_main(); return EXIT_OK; }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) { printf("dpprof %s (%s)\n", DPPROF_VERSION, DPPROF_GIT_COMMIT); return EXIT_OK; }
    if (!strcmp(argv[1], "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(argv[1], "plot")) return cmd_plot(argc - 2, argv + 2);
    if (!strcmp(argv[1], "presets")) return cmd_presets();
    if (!strcmp(argv[1], "epsilon")) return cmd_epsilon(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sweep") || !strcmp(argv[1], "tables"))
        return usage_error("'%s' is not in this version of dpprof%s", argv[1], "");
    return usage_error("unknown command '%s'%s", argv[1], "");
}
