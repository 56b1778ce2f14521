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
enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_OOM = 3 };

static const char *const prog_name = "dpprof";
/* what starts every message: the program's name, or a sweep's file and configuration while it checks that
   configuration's options (sweep_check_options) */
static const char *prog = "dpprof";

static int usage_error(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n(see '%s --help')\n", prog_name);
    return EXIT_USAGE;
}

/* ---- options: one table a command drives its parser and its help text ---------------------------- */
typedef struct cli_opt {
    const char *name; /* "--seq"; NULL: a heading (help is its text) */
    const char *arg;  /* the value's name ("T"): the option takes one; NULL: a flag */
    const char *help; /* a '\n' continues on the next line, under the first */
} cli_opt;

static const cli_opt *cli_find(const cli_opt *t, size_t n, const char *name) {
    size_t i;
    for (i = 0; i < n; i++)
        if (t[i].name && !strcmp(t[i].name, name)) return &t[i];
    return NULL;
}

static void cli_help(FILE *f, const cli_opt *t, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        char head[64];
        const char *h = t[i].help, *nl;
        int w;
        if (!t[i].name) {
            fprintf(f, "%s\n", h);
            continue;
        }
        w = snprintf(head, sizeof head, "%s%s%s", t[i].name, t[i].arg ? " " : "", t[i].arg ? t[i].arg : "");
        if (w > 22) fprintf(f, "  %s\n%25s", head, "");
        else fprintf(f, "  %-22s ", head);
        while ((nl = strchr(h, '\n')) != NULL) {
            fprintf(f, "%.*s\n%25s", (int)(nl - h), h, "");
            h = nl + 1;
        }
        fprintf(f, "%s\n", h);
    }
}

/* the next option of argv[*i]: its name (without "=value") in name, its value (the part after '=', or the
   next argument for an option that takes one, unless that starts with "--": an option forgot its value) in
   *val. "--" ends the options: what follows is an argument.
   returns 1 for an option, 0 for an argument (*val is it), or EXIT_USAGE after saying why */
static int cli_next(const char *cmd, const cli_opt *t, size_t n, int argc, char **argv, int *i, int *ended, char *name, size_t cap, const char **val) {
    const char *a = argv[*i], *eq;
    const cli_opt *o;
    *val = NULL;
    if (!*ended && !strcmp(a, "--")) {
        *ended = 1;
        if (++*i >= argc) return -1;
        a = argv[*i];
    }
    if (*ended || strncmp(a, "--", 2) != 0 || !a[2]) {
        *val = a;
        return 0;
    }
    eq = strchr(a, '=');
    if ((size_t)(eq ? eq - a : (ptrdiff_t)strlen(a)) >= cap) {
        fprintf(stderr, "%s: %s: unknown option '%s'\n(see '%s %s --help')\n", prog, cmd, a, prog_name, cmd);
        return EXIT_USAGE;
    }
    snprintf(name, cap, "%.*s", (int)(eq ? eq - a : (ptrdiff_t)strlen(a)), a);
    if (!(o = cli_find(t, n, name))) {
        fprintf(stderr, "%s: %s: unknown option '%s'\n(see '%s %s --help')\n", prog, cmd, name, prog_name, cmd);
        return EXIT_USAGE;
    }
    if (!o->arg) {
        if (eq) {
            fprintf(stderr, "%s: %s: %s takes no value (got '%s')\n", prog, cmd, name, eq + 1);
            return EXIT_USAGE;
        }
        return 1;
    }
    if (eq) *val = eq + 1;
    else if (*i + 1 < argc && !strncmp(argv[*i + 1], "--", 2)) { /* the next option, not a value: --out --quiet wrote a file named --quiet */
        fprintf(stderr, "%s: %s: %s needs a value (%s), got the option '%s' (a value that starts with '--' is written %s=VALUE)\n", prog, cmd, name, o->arg, argv[*i + 1], name);
        return EXIT_USAGE;
    } else if (*i + 1 < argc) *val = argv[++*i];
    else {
        fprintf(stderr, "%s: %s: %s needs a value (%s)\n", prog, cmd, name, o->arg);
        return EXIT_USAGE;
    }
    return 1;
}

static const cli_opt run_table[] = {
    {NULL, NULL, "model (a preset or a Hugging Face config.json, each size overridable):"},
    {"--preset", "NAME", "tiny (default), gpt2-small, llama-3.2-1b, llama-3.2-3b, llama-3.1-8b,\ntrainer-1b, longctx, or a published model's Hugging Face name\n(meta-llama/Llama-3.2-1B; dpprof presets lists them)"},
    {"--model", "NAME", "the same as --preset"},
    {"--hf-config", "FILE", "the model of a Hugging Face Llama config.json: vocab_size, hidden_size,\nintermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads,\nhead_dim, rope_theta, rms_norm_eps, tie_word_embeddings; what dpprof does not\nmodel is refused (docs/model.md)"},
    {"--tied", NULL, "the lm head is the embedding matrix (tie_word_embeddings)"},
    {"--untied", NULL, "the lm head is a matrix of its own"},
    {"--vocab", "V", "vocabulary size"},
    {"--hidden", "C", "model width"},
    {"--layers", "L", "decoder layers"},
    {"--heads", "NH", "attention heads"},
    {"--kv-heads", "NKV", "key/value heads (grouped-query attention; NH a multiple of it)"},
    {"--ffn", "F", "MLP width"},
    {"--rope-theta", "X", "rotary base (default: the preset's)"},
    {"--norm-eps", "X", "rmsnorm epsilon (default 1e-5)"},
    {"--init-std", "X", "std of the normal weight init (default 0.02)"},
    {NULL, NULL, "task and data:"},
    {"--seq", "T", "sequence length (default 64)"},
    {"--task", "lm|cls", "next-token prediction (default) or classification from the last token"},
    {"--classes", "K", "number of classes for cls (default 2)"},
    {"--data", "FILE", "train on a text file: byte-level tokens (lm), or lines\n'label<TAB>text' (cls); default: synthetic sequences"},
    {NULL, NULL, "training:"},
    {"--algo", "ALGO", "vanilla (default, non-private); DP-SGD: persample (Opacus-style\nper-sample gradients), ghost, ghost_bk (book-keeping), flash, flash_bk,\nauto (docs/dp.md: what each keeps in memory)"},
    {"--batch", "B", "logical batch size (default 8)"},
    {"--physical-batch", "b", "samples per forward/backward, accumulated to B (default B)"},
    {"--steps", "N", "measured steps (default 3)"},
    {"--warmup", "W", "steps run first and excluded from timing (default 0)"},
    {"--optimizer", "adam|sgd", "(default adam, betas 0.9/0.999, eps 1e-8)"},
    {"--lr", "X", "learning rate (default 1e-3 adam, 1e-2 sgd)"},
    {"--weight-decay", "X", "decoupled (AdamW) weight decay (default 0)"},
    {"--seed", "S", "seed of init, data and noise (default 0)"},
    {"--dtype", "fp32|bf16", "storage type (default fp32); bf16: activations and matmul weight copies in bf16,\nfp32 master weights, gradients, optimizer states (--backend cuda, dry; not cpu)"},
    {"--backend", "auto|cpu|cuda|dry", "(default auto: cuda when a GPU is visible, else cpu)"},
    {"--ranks", "N", "sharded data parallelism: N ranks, each taking B/N samples (B a multiple of N,\nb at most B/N; default 1, or the MPI job's size). --backend dry: rank 0's\nmemory; --backend cpu or cuda: an MPI job, mpirun -np N dpprof run ... (a build\nwith MPI; cuda: with NCCL, one GPU a rank)"},
    {"--zero", "0|1|2|3", "with --ranks: 0 plain data parallel (default), 1 adam moments sharded,\n2 + gradients sharded, 3 + parameters sharded (FSDP's full sharding;\ndocs/model.md)"},
    {"--memory-limit", "SIZE", "fail as oom past SIZE bytes; K, M, G, T (or KiB, MiB, GiB, TiB) are powers\nof 1024, KB, MB, GB, TB powers of 1000 (80G = 80GiB = 85899345920 bytes,\n80GB = 8e10). default on cpu: MemAvailable"},
    {"--checkpoint", "none|layers", "activation checkpointing (default none); layers: the forward keeps each decoder\nlayer's input alone, the backward recomputes the layer just before its backward\n(the recompute phase; docs/model.md: what each --algo keeps and recomputes)"},
    {"--attention", "dpprof|cudnn", "the attention's kernels on cuda (default dpprof, its own); cudnn: cuDNN's fused\nflash attention (bf16; a build with cuDNN: dpprof version), measured beside dpprof's\nby dpprof attnbench. on dry: the memory of a cudnn run"},
    {"--attention-workspace", "SIZE", "with --attention cudnn: cuDNN's workspace, allocated with the model on every\nbackend (on cuda at least what cuDNN's plans need; a cuda result's config.\nattention_workspace is the figure for a dry run to model it). default 0"},
    {NULL, NULL, "DP-SGD (with a DP --algo):"},
    {"--sigma", "S", "noise multiplier (default 0: clipping without noise)"},
    {"--max-grad-norm", "C", "clipping bound (default 1)"},
    {"--clipping", "flat|per-layer", "(default flat; per-layer: C/sqrt(tensors) per tensor)"},
    {"--dataset-size", "N", "examples in the dataset: the sample rate B/N for the accountant"},
    {"--poisson", NULL, "Poisson sampling with rate B/N (variable batch sizes)"},
    {"--delta", "D", "delta of the reported epsilon (default 1e-5)"},
    {"--target-epsilon", "E", "choose sigma so that the run spends E at delta (needs --dataset-size, --poisson)"},
    {"--accountant", "rdp|pld|both", "the result's epsilon (with --poisson): rdp (the default), pld (the privacy loss\ndistribution, tight; a few seconds), both (epsilon_pld beside rdp's); --target-epsilon\nuses rdp or pld"},
    {NULL, NULL, "LoRA (base model frozen; adapters and head train):"},
    {"--lora-rank", "r", "adapter rank (default: no LoRA)"},
    {"--lora-alpha", "a", "adapter scale alpha/r (default r)"},
    {"--lora-targets", "LIST", "of q,k,v,o,gate,up,down (default q,v)"},
    {NULL, NULL, "GPU kernels (cuda; each pair forces one of two kernels, default: see each):"},
    {"--fused-clipgrad", NULL, "bf16: the clipped weight gradients (book-keeping) on one fused tensor-core\nkernel, not one cuBLAS GEMM per sample, where a physical batch has 2 samples or\nmore. default: --algo auto times both at each linear layer's shape at session\nstart and takes the faster (the json's auto_clipgrad_ms, layers[].clipgrad_kernel);\nthe other algorithms use cuBLAS"},
    {"--cublas-clipgrad", NULL, "the clipped weight gradients on cuBLAS per sample, --algo auto too (no timing)"},
    {"--fused-noise", NULL, "the noise, the division by the batch and the optimizer step in one pass over\nthe gradients (the same bits); the noise phase is then part of optimizer_step.\ndefault: --algo auto times one pass against two at session start and\ntakes the faster (the json's auto_noise_ms); the other algorithms two passes"},
    {"--separate-noise", NULL, "the noise on a pass of its own before the optimizer's, --algo auto too (no timing)"},
    {"--dp-warp-tile", "32|64", "bf16: the warp tile of dpprof's dp tensor-core kernels (the fused clipped\ngradient, both flash norms): 64 x 64, the default where the device's shared memory\nper block holds them (sm_90), or 64 x 32: for comparing"},
    {"--wgmma", NULL, "bf16: the gram flavour of the flash norm on Hopper's warpgroup mma (compute\ncapability 9.0 only): the default there (measured faster on an H200)"},
    {"--no-wgmma", NULL, "bf16: the gram flavour of the flash norm on mma.sync"},
    {NULL, NULL, "output (FILE '-' is standard output; progress and summary go to standard error):"},
    {"--out", "FILE.json", "result JSON (written atomically; also on oom/error, with its status)"},
    {"--trace", "FILE.json", "Chrome/Perfetto trace: phases, every op (cuda: timed by events) and a\nlive-memory counter per category, of the last --trace-steps steps"},
    {"--trace-steps", "N", "the steps a trace holds: the last N (default 2)"},
    {"--dram", NULL, "cuda: DRAM and L2 bytes per phase from CUPTI counters, measured in warm-up\nstep 0 (needs --warmup 1)"},
    {"--dram-ops", NULL, "cuda: --dram per op as well: each op of warm-up step 0 a counter range, its bytes\nin throughput.ops beside its analytic bytes (that step's ops are not timed)"},
    {"--op-times", NULL, "time every op in the warm-up steps: throughput.ops (rates, shares of the\npeaks) in the json"},
    {"--dump", "DIR", "config.json, model.safetensors, batch.safetensors, grads.safetensors, step.json\n(per-sample losses, norms, clip factors) for samples 0..B-1: LlamaForCausalLM.\nfrom_pretrained(DIR) loads it (cpu and cuda backends; DIR is created)"},
    {"--experiment", "NAME", "the 'experiment' field of the JSON (default 'run')"},
    {"--timeline", "full|none", "keep the event log in the JSON (default full; none for big sweeps)"},
    {"--quiet", NULL, "no progress lines on stderr"},
    {"--help", NULL, "this text"},
};
#define RUN_NOPT (sizeof run_table / sizeof run_table[0])

static void help_run(void) {
    printf("usage: dpprof run [options]   (--opt VALUE or --opt=VALUE)\n\n");
    cli_help(stdout, run_table, RUN_NOPT);
}

/* ---- strict number parsing: the whole string, in range, or an error naming the option -------- */
static int parse_ll(const char *opt, const char *s, long long lo, long long hi, long long *out) {
    char *end;
    long long v;
    char range[96];
    errno = 0;
    v = strtoll(s, &end, 10);
    /* strtoll skips leading white space and takes a '+': the value is the digits alone (or '-' and digits) */
    if (!*s || isspace((unsigned char)*s) || *s == '+' || *end || errno == ERANGE || v < lo || v > hi) {
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
    if (!*s || isspace((unsigned char)*s) || *end || errno == ERANGE || v != v || v < lo || v > hi || (open_lo && v == lo)) {
        fprintf(stderr, "%s: %s '%s': expected a number in %s%g, %g]\n", prog, opt, s, open_lo ? "(" : "[", lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* sizes: bytes, or a number with a suffix: K, M, G, T or KiB, MiB, GiB, TiB are powers of 1024 (as in GNU
   tools); KB, MB, GB, TB powers of 1000; a trailing B alone means bytes */
static int parse_size(const char *opt, const char *s, long long *out) {
    static const struct { const char *sfx; double mul; } sfx[] = {
        {"", 1}, {"B", 1}, {"K", 1024.0}, {"k", 1024.0}, {"KiB", 1024.0}, {"KB", 1e3}, {"kB", 1e3},
        {"M", 1048576.0}, {"MiB", 1048576.0}, {"MB", 1e6}, {"G", 1073741824.0}, {"GiB", 1073741824.0}, {"GB", 1e9},
        {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"TB", 1e12},
    };
    char *end;
    double v, mul = -1;
    size_t k;
    errno = 0;
    v = strtod(s, &end);
    for (k = 0; end != s && k < sizeof sfx / sizeof sfx[0]; k++)
        if (!strcmp(end, sfx[k].sfx)) mul = sfx[k].mul;
    if (!*s || isspace((unsigned char)*s) || mul < 0 || errno == ERANGE || !(v > 0) || v * mul > 9.0e18 || v * mul < 1) {
        fprintf(stderr, "%s: %s '%s': expected a positive size in bytes, optionally with K, M, G, T or KiB, MiB, GiB, TiB\n"
                        "(powers of 1024) or KB, MB, GB, TB (powers of 1000)\n", prog, opt, s);
        return -1;
    }
    *out = (long long)(v * mul);
    return 0;
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
    else snprintf(buf, cap, "%.*f %s", b < 10 ? 2 : b < 100 ? 1 : 0, b, unit[u]);
    return buf;
}
static const char *human_count(double n, char *buf, size_t cap) {
    static const char *const unit[] = {"", " thousand", " M", " B", " T"};
    int u = 0;
    while (n >= 1000.0 && u < 4) n /= 1000.0, u++;
    if (u == 0) snprintf(buf, cap, "%.0f", n);
    else snprintf(buf, cap, "%.*f%s", n < 10 ? 2 : n < 100 ? 1 : 0, n, unit[u]);
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
    const char *out, *trace, *dump, *experiment, *hf_config;
    int hf_max_pos; /* --hf-config's max_position_embeddings, 0 where it gives none */
    int quiet;
    double target_epsilon;
    int limit_given;
} run_opts;

static int in_check(const char *what, const char *path, long long limit, char *buf, size_t cap);
#define IN_HF_LIMIT ((long long)1 << 20) /* a Hugging Face config.json */

/* --hf-config FILE: the model of a Hugging Face config.json of a Llama model. every size it gives fills the
   configuration where no option set it (an option wins); what dpprof cannot model is refused, naming the key
   and its value. the keys and what is refused: docs/model.md */
static int hf_fail(const char *path, const char *fmt, const char *key, const char *what) {
    fprintf(stderr, "%s: run: --hf-config %s: ", prog, path);
    fprintf(stderr, fmt, key, what);
    fputc('\n', stderr);
    return EXIT_USAGE;
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
        snprintf(buf, cap, "%s", k == DPPROF_JSON_TRUE ? "true" : k == DPPROF_JSON_FALSE ? "false" : k == DPPROF_JSON_NULL ? "null" : k == DPPROF_JSON_ARRAY ? "an array" : "an object");
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

static int hf_config_load(const char *path, run_opts *o) {
    dpprof_config *c = &o->cfg;
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root, *v;
    char err[512];
    const char *str;
    long long V, C, F, L, NH, NKV, HS, pos;
    double theta = 10000.0, eps = 1e-6; /* transformers' LlamaConfig defaults */
    int tied = 0, rc = EXIT_USAGE;
    if (c->preset) return usage_error("run: --hf-config defines the model: --preset/--model '%s' cannot come with it%s", c->preset, "");
    if (in_check(NULL, path, IN_HF_LIMIT, err, sizeof err)) return hf_fail(path, "%s%s", err, "");
    if (dpprof_json_parse_file(path, (size_t)IN_HF_LIMIT, &doc, err, sizeof err) != 0) {
        fprintf(stderr, "%s: run: --hf-config: %s\n", prog, err);
        return EXIT_USAGE;
    }
    root = dpprof_json_root(doc);
    if (dpprof_json_kind(root) != DPPROF_JSON_OBJECT) { hf_fail(path, "not a JSON object%s%s", "", ""); goto done; }
    v = dpprof_json_get(root, "model_type");
    if (!v) { hf_fail(path, "the required key \"%s\" is missing%s", "model_type", ""); goto done; }
    if (!(str = dpprof_json_string(v)) || strcmp(str, "llama")) {
        hf_fail(path, "\"%s\" = %s: dpprof models the Llama architecture (model_type \"llama\") only", "model_type", str ? str : "(not a string)");
        goto done;
    }
    v = dpprof_json_get(root, "hidden_act");
    if (v && (!(str = dpprof_json_string(v)) || strcmp(str, "silu"))) {
        hf_fail(path, "\"%s\" = %s: dpprof's MLP is SwiGLU with silu", "hidden_act", str ? str : "(not a string)");
        goto done;
    }
    if (hf_false(path, root, "attention_bias", "dpprof's projections have no biases") || hf_false(path, root, "mlp_bias", "dpprof's projections have no biases")) goto done;
    v = dpprof_json_get(root, "sliding_window");
    if (v && dpprof_json_kind(v) != DPPROF_JSON_NULL) { hf_fail(path, "\"%s\" is set: dpprof's attention is full causal attention%s", "sliding_window", ""); goto done; }
    v = dpprof_json_get(root, "rope_scaling");
    if (v && dpprof_json_kind(v) != DPPROF_JSON_NULL) {
        const dpprof_json *t = dpprof_json_get(v, "rope_type");
        str = dpprof_json_string(t ? t : dpprof_json_get(v, "type"));
        if (dpprof_json_kind(v) != DPPROF_JSON_OBJECT || !str) { hf_fail(path, "\"%s\" is not an object with a rope_type%s", "rope_scaling", ""); goto done; }
        if (!strcmp(str, "llama3")) { /* the frequencies alone: the same shapes, flops and bytes */
            if (!o->quiet)
                fprintf(stderr, "dpprof: --hf-config %s: rope_scaling llama3 is not applied: the rotary frequencies are rope_theta's alone (memory, time and traffic are "
                                "the same; the values are not transformers')\n", path);
        } else if (strcmp(str, "default")) {
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
    if ((v = dpprof_json_get(root, "tie_word_embeddings")) && dpprof_json_kind(v) != DPPROF_JSON_NULL) {
        char shown[96];
        if (dpprof_json_kind(v) != DPPROF_JSON_TRUE && dpprof_json_kind(v) != DPPROF_JSON_FALSE) {
            hf_fail(path, "\"%s\" is not a boolean (%s): expected true or false", "tie_word_embeddings", hf_show(v, shown, sizeof shown));
            goto done;
        }
        tied = dpprof_json_kind(v) == DPPROF_JSON_TRUE;
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
    if (!c->tie_embeddings) c->tie_embeddings = tied ? 1 : -1;
    c->model_name = path;
    o->hf_max_pos = (int)pos;
    rc = EXIT_OK;
done:
    dpprof_json_free(doc);
    return rc;
}

static int parse_run(int argc, char **argv, run_opts *o) {
    int i, ended = 0;
    dpprof_config *c = &o->cfg;
    memset(o, 0, sizeof *o);
    o->experiment = "run";
    for (i = 0; i < argc; i++) {
        char name[64];
        const char *a = name, *v;
        long long ll;
        int k;
        if (!ended && !strcmp(argv[i], "-h")) { help_run(); exit(EXIT_OK); }
        k = cli_next("run", run_table, RUN_NOPT, argc, argv, &i, &ended, name, sizeof name, &v);
        if (k < 0) break;
        if (k == 0) return usage_error("run: unexpected argument '%s' (run takes options only)%s", v, "");
        if (k != 1) return k;
        /* flags without a value */
        if (!strcmp(a, "--help")) { help_run(); exit(EXIT_OK); }
        if (!strcmp(a, "--quiet")) { o->quiet = 1; continue; }
        if (!strcmp(a, "--poisson")) { c->poisson = 1; continue; }
        if (!strcmp(a, "--dram")) { if (!c->dram) c->dram = 1; continue; }
        if (!strcmp(a, "--dram-ops")) { c->dram = 2; continue; }
        if (!strcmp(a, "--op-times")) { c->op_times = 1; continue; }
        {   /* each pair is one of two choices (the head; a kernel): both at once is a contradiction, not a last-one-wins */
            static const char *const pair[][2] = {{"--tied", "--untied"}, {"--wgmma", "--no-wgmma"}, {"--fused-clipgrad", "--cublas-clipgrad"}, {"--fused-noise", "--separate-noise"}};
            int *const field[] = {&c->tie_embeddings, &c->wgmma, &c->fused_clipgrad, &c->fused_noise};
            int p, want;
            for (p = 0; p < 4 && strcmp(a, pair[p][0]) && strcmp(a, pair[p][1]); p++) {}
            if (p < 4) {
                want = strcmp(a, pair[p][0]) ? -1 : 1;
                if (*field[p] == -want) {
                    fprintf(stderr, "%s: run: %s and %s contradict each other (%s came second)\n(see '%s --help')\n", prog, pair[p][0], pair[p][1], a, prog_name);
                    return EXIT_USAGE;
                }
                *field[p] = want;
                continue;
            }
        }
#define INTOPT(name, field, lo, hi) else if (!strcmp(a, name)) { if (parse_int(a, v, lo, hi, &c->field)) return EXIT_USAGE; }
#define DBLOPT(name, field, lo, hi, open) else if (!strcmp(a, name)) { if (parse_dbl(a, v, lo, hi, open, &c->field)) return EXIT_USAGE; }
        if (!strcmp(a, "--preset") || !strcmp(a, "--model")) c->preset = v;
        else if (!strcmp(a, "--hf-config")) o->hf_config = v;
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
        INTOPT("--ranks", ranks, 1, 65536)
        INTOPT("--zero", zero, 0, 3)
        INTOPT("--steps", steps, 1, 100000000)
        INTOPT("--warmup", warmup, 0, 100000000)
        INTOPT("--lora-rank", lora_rank, 1, 16777216)
        INTOPT("--trace-steps", trace_steps, 1, 100000000)
        DBLOPT("--lr", lr, 0, 1e6, 1)
        DBLOPT("--weight-decay", weight_decay, 0, 1e6, 0)
        DBLOPT("--rope-theta", rope_theta, 0, 1e12, 1)
        DBLOPT("--norm-eps", norm_eps, 0, 1, 1)
        DBLOPT("--init-std", init_std, 0, 1e3, 1)
        DBLOPT("--sigma", sigma, 0, 1e6, 0)
        DBLOPT("--max-grad-norm", max_grad_norm, 0, 1e12, 1)
        else if (!strcmp(a, "--delta")) { /* open at both ends, unlike parse_dbl's ranges */
            char *end;
            errno = 0;
            c->delta = strtod(v, &end);
            if (!*v || isspace((unsigned char)*v) || *end || errno == ERANGE || !(c->delta > 0 && c->delta < 1)) {
                fprintf(stderr, "%s: --delta '%s': expected a number in (0, 1)\n", prog, v);
                return EXIT_USAGE;
            }
        }
        else if (!strcmp(a, "--dp-warp-tile")) {
            if (strcmp(v, "32") && strcmp(v, "64")) {
                fprintf(stderr, "%s: --dp-warp-tile '%s': expected 32 or 64\n", prog, v);
                return EXIT_USAGE;
            }
            c->dp_warp_tile = atoi(v);
        }
        DBLOPT("--lora-alpha", lora_alpha, 0, 1e12, 1)
        else if (!strcmp(a, "--target-epsilon")) { if (parse_dbl(a, v, 0, 1e6, 1, &o->target_epsilon)) return EXIT_USAGE; }
        else if (!strcmp(a, "--accountant")) {
            if (!strcmp(v, "rdp")) c->accountant = 0;
            else if (!strcmp(v, "pld")) c->accountant = 1;
            else if (!strcmp(v, "both")) c->accountant = 2;
            else return usage_error("run: --accountant '%s': expected rdp, pld or both%s", v, "");
        }
        else if (!strcmp(a, "--dataset-size")) { if (parse_ll(a, v, 1, LLONG_MAX, &ll)) return EXIT_USAGE; c->dataset_size = ll; }
        else if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            c->seed = strtoull(v, &end, 10);
            if (*v < '0' || *v > '9' || *end || errno == ERANGE) return usage_error("run: --seed '%s': expected an integer in [0, 2^64)%s", v, ""); /* strtoull takes " -1" as 2^64 - 1 */
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
        else if (!strcmp(a, "--checkpoint")) {
            int ck = dpprof_checkpoint_parse(v);
            if (ck < 0) return usage_error("run: --checkpoint '%s': expected none or layers%s", v, "");
            c->checkpoint = (dpprof_checkpoint)ck;
        }
        else if (!strcmp(a, "--attention")) {
            int at = dpprof_attention_parse(v);
            if (at < 0) return usage_error("run: --attention '%s': expected dpprof or cudnn%s", v, "");
            c->attention = (dpprof_attention)at;
        }
        else if (!strcmp(a, "--attention-workspace")) { if (parse_size(a, v, &ll)) return EXIT_USAGE; c->attention_workspace = ll; }
        else if (!strcmp(a, "--backend")) {
            if (!strcmp(v, "auto")) c->backend = DPPROF_BACKEND_AUTO;
            else if (!strcmp(v, "cpu")) c->backend = DPPROF_BACKEND_CPU;
            else if (!strcmp(v, "cuda")) c->backend = DPPROF_BACKEND_CUDA;
            else if (!strcmp(v, "dry")) c->backend = DPPROF_BACKEND_DRY;
            else return usage_error("run: --backend '%s': expected auto, cpu, cuda or dry%s", v, "");
        }
        else if (!strcmp(a, "--memory-limit")) { if (parse_size(a, v, &ll)) return EXIT_USAGE; c->memory_limit = ll; o->limit_given = 1; }
        else if (!strcmp(a, "--lora-targets")) c->lora_targets = v;
        else if (!strcmp(a, "--timeline")) {
            if (!strcmp(v, "full")) c->no_timeline = 0;
            else if (!strcmp(v, "none")) c->no_timeline = 1;
            else return usage_error("run: --timeline '%s': expected full or none%s", v, "");
        }
        else if (!strcmp(a, "--data")) c->data_path = v;
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--trace")) { o->trace = v; c->trace_ops = 1; }
        else if (!strcmp(a, "--dump")) o->dump = v;
        else if (!strcmp(a, "--experiment")) o->experiment = v;
        else return usage_error("run: %s: in the option table but not parsed (a bug)%s", a, "");
#undef INTOPT
#undef DBLOPT
    }
    if (o->hf_config) return hf_config_load(o->hf_config, o);
    return EXIT_OK;
}

/* ---- inputs: read only where they are regular files within a stated size ------------------------------
   a FIFO or a device could block or never end (/dev/zero), a directory is not a file: refused with the reason.
   0, or -1 after saying why (what NULL: silently, why in buf) */
#define IN_CONF_LIMIT ((long long)16 << 20)   /* an experiment file */
#define IN_JSON_LIMIT ((long long)1 << 30)    /* a result file */
#define IN_DATA_LIMIT ((long long)1 << 30)    /* --data: read whole into memory */
static int in_check(const char *what, const char *path, long long limit, char *buf, size_t cap) {
    struct stat st;
    char why[256];
    if (stat(path, &st) != 0) snprintf(why, sizeof why, "cannot read: %s", strerror(errno));
    else if (S_ISDIR(st.st_mode)) snprintf(why, sizeof why, "is a directory");
    else if (!S_ISREG(st.st_mode))
        snprintf(why, sizeof why, "not a regular file (%s: not read, it could block or never end)", S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
    else if ((long long)st.st_size > limit) snprintf(why, sizeof why, "%lld bytes, over the limit of %lld for %s", (long long)st.st_size, limit, limit == IN_CONF_LIMIT ? "an experiment file" : limit == IN_HF_LIMIT ? "a config.json" : limit == IN_DATA_LIMIT && what && !strcmp(what, "--data") ? "--data" : "a result file");
    else return 0;
    if (buf) snprintf(buf, cap, "%s", why);
    if (what) fprintf(stderr, "%s: %s '%s': %s\n", prog, what, path, why);
    return -1;
}

/* ---- outputs: every file dpprof writes goes through here ------------------------------------------
   a regular file (or a symlink's target) is written to a unique temporary beside it (mkstemp: .NAME.XXXXXX)
   and renamed into place after every write, flush, fsync and close succeeded, so a reader never sees half of
   it, concurrent writers never share a temporary, and a failure leaves what was there. "-" is standard
   output, and so is any name of the file standard output is (/dev/stdout, or the file it is redirected to),
   written there in place; a device is written in place (never replaced); a FIFO is written in place when a reader has it
   open, else refused. a directory, an empty path, a missing parent directory are refused before any work.
   the temporaries of a process are removed when it is stopped by a signal. */
enum { OUT_FILE = 1, OUT_STDOUT, OUT_DEVICE, OUT_FIFO };
typedef struct out_file {
    const char *name;     /* as given: the messages say it */
    char path[PATH_MAX];  /* what is written: the name, or its symlink's target */
    char tmp[PATH_MAX];   /* the temporary beside path; "" when written in place */
    FILE *f;
    int kind;
} out_file;

#define OUT_MAX_TMPS 16
static char out_tmps[OUT_MAX_TMPS][PATH_MAX]; /* live temporaries, removed on a signal */
static volatile sig_atomic_t out_ntmps;

static void out_on_signal(int sig) {
    int i;
    for (i = 0; i < out_ntmps; i++)
        if (out_tmps[i][0]) unlink(out_tmps[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void out_track(const char *tmp, int on) {
    static int installed;
    int i;
    if (!installed) { /* only where nobody else handles them (a sweep stops its children itself) */
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
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
        if (on) snprintf(out_tmps[i], PATH_MAX, "%s", tmp);
        else out_tmps[i][0] = 0;
    }
}

/* the directory part of path (".": none) and the last part */
static void out_split(const char *path, char *dir, char *base) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, PATH_MAX, "."), snprintf(base, PATH_MAX, "%s", path);
    else if (slash == path) snprintf(dir, PATH_MAX, "/"), snprintf(base, PATH_MAX, "%s", slash + 1);
    else snprintf(dir, PATH_MAX, "%.*s", (int)(slash - path), path), snprintf(base, PATH_MAX, "%s", slash + 1);
}

/* 1 where name is this process's standard output: "-", or a name of the file it is (/dev/stdout, /dev/fd/1, a
   pipe's /proc/self/fd/1, the file it is redirected to): written there in place, never renamed over (the
   reader holds that file, not the name) */
static int out_is_stdout(const char *name) {
    struct stat a, b;
    if (!name) return 0;
    if (!strcmp(name, "-")) return 1;
    return *name && stat(name, &a) == 0 && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* where name is written and how: 0, or -1 after saying why (what NULL: silently; nothing touched) */
#define OUT_SAY(...) (what ? fprintf(stderr, __VA_ARGS__) : 0)
static int out_resolve(const char *what, const char *name, char *path, int *kind) {
    struct stat st;
    char dir[PATH_MAX], base[PATH_MAX];
    int hops;
    if (!name || !*name) {
        OUT_SAY("%s: %s: an empty path (give a file name, or - for standard output)\n", prog, what);
        return -1;
    }
    if (out_is_stdout(name)) {
        *kind = OUT_STDOUT;
        snprintf(path, PATH_MAX, "-");
        return 0;
    }
    if (strlen(name) >= PATH_MAX - 16) {
        OUT_SAY("%s: %s '%s': path too long\n", prog, what, name);
        return -1;
    }
    snprintf(path, PATH_MAX, "%s", name);
    for (hops = 0; lstat(path, &st) == 0 && S_ISLNK(st.st_mode); hops++) { /* a symlink: its target is written */
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n < 0 || hops == 40) {
            OUT_SAY("%s: %s '%s': cannot follow the symbolic link: %s\n", prog, what, name, n < 0 ? strerror(errno) : "too many levels");
            return -1;
        }
        target[n] = 0;
        if (target[0] == '/') snprintf(path, PATH_MAX, "%s", target);
        else {
            char linkdir[PATH_MAX], tmp[2 * PATH_MAX];
            out_split(path, linkdir, base);
            snprintf(tmp, sizeof tmp, "%s/%s", linkdir, target);
            if (strlen(tmp) >= PATH_MAX) {
                OUT_SAY("%s: %s '%s': path too long\n", prog, what, name);
                return -1;
            }
            memcpy(path, tmp, strlen(tmp) + 1);
        }
    }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            OUT_SAY("%s: %s '%s': is a directory\n", prog, what, name);
            return -1;
        }
        if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) *kind = OUT_DEVICE;
        else if (S_ISFIFO(st.st_mode)) *kind = OUT_FIFO;
        else if (S_ISREG(st.st_mode)) *kind = OUT_FILE;
        else {
            OUT_SAY("%s: %s '%s': not a regular file, device or FIFO: refused\n", prog, what, name);
            return -1;
        }
        if (*kind != OUT_FILE) return 0;
    } else if (errno != ENOENT) {
        OUT_SAY("%s: %s '%s': cannot write: %s\n", prog, what, name, strerror(errno));
        return -1;
    } else *kind = OUT_FILE;
    out_split(path, dir, base);
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
        OUT_SAY("%s: %s '%s': names a directory, not a file\n", prog, what, name);
        return -1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        OUT_SAY("%s: %s '%s': cannot write: %s\n", prog, what, name, stat(dir, &st) != 0 ? strerror(errno) : !S_ISDIR(st.st_mode) ? "Not a directory" : strerror(errno));
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
    if (o->kind == OUT_STDOUT) {
        o->f = stdout;
        return 0;
    }
    if (o->kind == OUT_DEVICE || o->kind == OUT_FIFO) {
        /* a FIFO nobody reads would block: opened without waiting, and refused then */
        fd = open(o->path, O_WRONLY | O_CLOEXEC | (o->kind == OUT_FIFO ? O_NONBLOCK : 0));
        if (fd < 0) {
            fprintf(stderr, "%s: %s '%s': cannot write: %s\n", prog, what, name, o->kind == OUT_FIFO && errno == ENXIO ? "a FIFO that nothing reads" : strerror(errno));
            return -1;
        }
        if (o->kind == OUT_FIFO) (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        if (!(o->f = fdopen(fd, "wb"))) {
            fprintf(stderr, "%s: %s '%s': cannot write: %s\n", prog, what, name, strerror(errno));
            close(fd);
            return -1;
        }
        return 0;
    }
    out_split(o->path, dir, base);
    if (snprintf(o->tmp, sizeof o->tmp, "%s/.%s.XXXXXX", dir, base) >= (int)sizeof o->tmp) {
        fprintf(stderr, "%s: %s '%s': path too long\n", prog, what, name);
        return -1;
    }
    if ((fd = mkstemp(o->tmp)) < 0) {
        fprintf(stderr, "%s: %s '%s': cannot write: %s\n", prog, what, name, strerror(errno));
        o->tmp[0] = 0;
        return -1;
    }
    out_track(o->tmp, 1);
    {   /* a result is an ordinary file: the permissions a plain open would give, not mkstemp's 0600 */
        mode_t um = umask(0);
        umask(um);
        (void)fchmod(fd, 0666 & ~um);
    }
    if (!(o->f = fdopen(fd, "wb"))) {
        fprintf(stderr, "%s: %s '%s': cannot write: %s\n", prog, what, name, strerror(errno));
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
    else fclose(o->f);
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
    if (err) fprintf(stderr, "%s: cannot write '%s' (%s failed): %s%s\n", prog, o->name, step, strerror(err), o->kind == OUT_FILE ? "; nothing was replaced" : "");
    return err ? -1 : 0;
}

/* stb_image_write's callback: into an out_file's stream */
static void out_png_write(void *ctx, void *data, int size) {
    if (size > 0 && fwrite(data, 1, (size_t)size, (FILE *)ctx) != (size_t)size) { /* ferror says so at the commit */ }
}
static int out_png(out_file *o, const dpprof_canvas *cv) {
    if (!stbi_write_png_to_func(out_png_write, o->f, cv->w, cv->h, 3, cv->rgb, cv->w * 3)) {
        fprintf(stderr, "%s: cannot encode the PNG '%s'\n", prog, o->name);
        return -1;
    }
    return 0;
}

/* the files a dump writes (dpprof_session_dump): all a directory may hold for a new dump to replace it */
static const char *const outdir_names[] = {"config.json", "model.safetensors", "batch.safetensors", "grads.safetensors", "step.json"};

static int outdir_known(const char *name) {
    size_t k;
    for (k = 0; k < sizeof outdir_names / sizeof outdir_names[0]; k++)
        if (!strcmp(name, outdir_names[k])) return 1;
    return 0;
}

/* a directory output (--dump): refused before any work where it exists and is not a directory, or is a
   directory that holds anything but the files of an earlier dump (nothing of the user's is ever replaced) */
static int outdir_check(const char *what, const char *name) {
    struct stat st;
    char dir[PATH_MAX], base[PATH_MAX];
    if (!name || !*name) {
        fprintf(stderr, "%s: %s: an empty path\n", prog, what);
        return -1;
    }
    if (strlen(name) >= PATH_MAX - 16) {
        fprintf(stderr, "%s: %s '%s': path too long\n", prog, what, name);
        return -1;
    }
    if (stat(name, &st) == 0) {
        DIR *d;
        struct dirent *e;
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "%s: %s '%s': exists and is not a directory\n", prog, what, name);
            return -1;
        }
        if (!(d = opendir(name))) {
            fprintf(stderr, "%s: %s '%s': cannot read the directory: %s\n", prog, what, name, strerror(errno));
            return -1;
        }
        while ((e = readdir(d)) != NULL) {
            char full[2 * PATH_MAX];
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(full, sizeof full, "%s/%s", name, e->d_name);
            if (!outdir_known(e->d_name) || lstat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
                fprintf(stderr, "%s: %s '%s': holds '%s', %s: refused, nothing is replaced (a dump replaces a directory of its own files alone: config.json, "
                                "model.safetensors, batch.safetensors, grads.safetensors, step.json)\n", prog, what, name, e->d_name, outdir_known(e->d_name) ? "not a regular file" : "not a file of a dump");
                closedir(d);
                return -1;
            }
        }
        closedir(d);
    }
    out_split(name, dir, base);
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "%s: %s '%s': cannot create the directory: %s\n", prog, what, name, !*base || base[0] == '.' ? "not a directory name" : stat(dir, &st) != 0 ? strerror(errno) : !S_ISDIR(st.st_mode) ? "Not a directory" : strerror(errno));
        return -1;
    }
    return 0;
}

/* the files of a dump (a dump has no subdirectories), then the directory: anything else there stays, and so
   does the directory */
static void outdir_remove(const char *path) {
    size_t k;
    for (k = 0; k < sizeof outdir_names / sizeof outdir_names[0]; k++) {
        char full[2 * PATH_MAX];
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

/* a temporary directory beside name (.NAME.XXXXXX) for fill to write into, renamed to name when it succeeded;
   an earlier dump there is replaced only then. 0, or -1 (said; the temporary gone) */
static int outdir_write(const char *what, const char *name, int (*fill)(void *ctx, const char *dir), void *ctx) {
    char dir[PATH_MAX], base[PATH_MAX], tmp[2 * PATH_MAX + 16], old[2 * PATH_MAX + 16];
    struct stat st;
    out_split(name, dir, base);
    snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, base);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "%s: %s '%s': cannot create a temporary directory beside it: %s\n", prog, what, name, strerror(errno));
        return -1;
    }
    out_track(tmp, 1);
    {   /* an ordinary directory: the permissions mkdir would give, not mkdtemp's 0700 */
        mode_t um = umask(0);
        umask(um);
        (void)chmod(tmp, 0777 & ~um);
    }
    if (fill(ctx, tmp) != 0) {
        outdir_remove(tmp);
        out_track(tmp, 0);
        return -1;
    }
    old[0] = 0;
    if (stat(name, &st) == 0) { /* an earlier dump (outdir_check): moved aside, removed once the new one is in place */
        snprintf(old, sizeof old, "%s/.%s.XXXXXX", dir, base);
        if (!mkdtemp(old) || rename(name, old) != 0) {
            fprintf(stderr, "%s: %s '%s': cannot move the earlier dump aside: %s\n", prog, what, name, strerror(errno));
            if (old[0]) rmdir(old);
            outdir_remove(tmp);
            out_track(tmp, 0);
            return -1;
        }
    }
    if (rename(tmp, name) != 0) {
        fprintf(stderr, "%s: %s '%s': cannot rename the finished dump into place: %s\n", prog, what, name, strerror(errno));
        if (old[0]) (void)rename(old, name);
        outdir_remove(tmp);
        out_track(tmp, 0);
        return -1;
    }
    out_track(tmp, 0);
    if (old[0]) outdir_remove(old);
    return 0;
}

/* the temporaries a killed writer left for name (.NAME.XXXXXX in its directory) */
static void out_remove_leftovers(const char *path) {
    char dir[PATH_MAX], base[PATH_MAX];
    size_t nb;
    DIR *d;
    struct dirent *e;
    out_split(path, dir, base);
    nb = strlen(base);
    if (!(d = opendir(dir))) return;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] == '.' && !strncmp(e->d_name + 1, base, nb) && e->d_name[nb + 1] == '.' && strlen(e->d_name + nb + 2) == 6) {
            char full[2 * PATH_MAX];
            snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
            unlink(full);
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
        fprintf(stderr, "%s: %s: %s '%s'\n", prog, what, n ? "path too long" : "an empty path", path);
        return -1;
    }
    memcpy(p, path, n + 1);
    for (k = 1; k <= n; k++) {
        const char c = p[k];
        if ((c != '/' && c) || p[k - 1] == '/') continue;
        p[k] = 0;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                if (k == n) fprintf(stderr, "%s: %s: cannot create the directory '%s': %s\n", prog, what, path, strerror(ENOTDIR));
                else fprintf(stderr, "%s: %s: cannot create the directory '%s': '%s' is not a directory\n", prog, what, path, p);
                return -1;
            }
        } else if (errno == ENOENT && !create) { /* the first missing part: its parent must take a directory */
            char parent[PATH_MAX];
            if (last) snprintf(parent, sizeof parent, "%.*s", (int)last, p);
            else snprintf(parent, sizeof parent, "%s", p[0] == '/' ? "/" : ".");
            if (access(parent, W_OK | X_OK) != 0) {
                fprintf(stderr, "%s: %s: cannot create the directory '%s': %s\n", prog, what, path, strerror(errno));
                return -1;
            }
            return 0;
        } else if (errno != ENOENT || (mkdir(p, 0777) != 0 && errno != EEXIST)) {
            fprintf(stderr, "%s: %s: cannot create the directory '%s': %s\n", prog, what, path, strerror(errno));
            return -1;
        }
        last = k;
        p[k] = c;
    }
    return 0;
}


#endif /* DPPROF_CLI_H */
