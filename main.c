/* main.c - the dpprof command line: run, plot, epsilon. the only file with stb_image_write's
   implementation. build: make (see Makefile); usage: dpprof --help */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with realpath */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/select.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#ifdef DPPROF_MPI
#include <mpi.h>
#endif
#ifdef __linux__
#include <sys/prctl.h>
#endif

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

/* ---- top-level help ---------------------------------------------------------------------------- */
static void help_main(void) {
    printf("dpprof %s - exact memory, time and traffic profiles of DP-SGD transformer training\n\n"
           "usage: dpprof COMMAND [options]\n\n"
           "commands:\n"
           "  run       train a Llama-style model for a few steps and profile it (dpprof run --help)\n"
           "  plot      render a figure from result JSON (dpprof plot --help)\n"
           "  sweep     run every configuration of an experiment file, one process each, resumable\n"
           "            (dpprof sweep --help)\n"
           "  report    figures, LaTeX tables, macros and a summary of a sweep (dpprof report --help;\n"
           "            'dpprof tables' is the same command)\n"
           "  epsilon   privacy spent by DP-SGD: the RDP or the tight PLD accountant (dpprof epsilon --help)\n"
           "  presets   list the model presets and their shapes\n"
           "  devices   list the GPUs the cuda backend sees, with their peaks (exit 1 when none)\n"
           "  attnbench time the attention kernels alone on the GPU, every variant (dpprof attnbench --help)\n"
           "  version   print the version\n\n"
           "backends: cpu (reference arithmetic), dry (exact memory of any size, no arithmetic),\n"
           "cuda (GPU kernels, fp32 or bf16), auto (cuda when a GPU is visible, else cpu).\n"
           "exit codes: 0 ok, 1 runtime error, 2 bad input, 3 out of memory (result JSON says oom).\n",
           DPPROF_VERSION);
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

static void help_plot(void) {
    printf("usage: dpprof plot timeline RESULT.json [RESULT.json ...] --out FILE.png [--title TEXT]\n\n"
           "  timeline   live memory over the run, stacked by category, phases marked\n"
           "             (x: time in ms when the run measured time; allocation events for dry runs).\n"
           "             several results (up to 8): one panel each, named by its file, on shared axes\n");
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

static int run_dump(void *ctx, const char *dir) {
    if (dpprof_session_dump((dpprof_session *)ctx, dir) == DPPROF_OK) return 0;
    fprintf(stderr, "%s: --dump: %s\n", prog, dpprof_last_error());
    return -1;
}

/* an MPI job (mpirun -np N dpprof run ...): this process's rank and the job's size; 0 and 1 otherwise */
static int mpi_rank, mpi_world = 1, mpi_agreed;

/* the ranks agree that every one of them is ready to run (ok: this one is); a rank that stops before it (bad
   input that only it sees, as rank 0's --out) agrees with 0 on its way out (main), so that no rank waits for it */
static int mpi_agree(int ok) {
#ifdef DPPROF_MPI
    if (mpi_world > 1) MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#endif
    mpi_agreed = 1;
    return ok;
}

/* byte counts are 64-bit: a dry run without a memory limit whose live bytes pass 2^63 stops mid-run (in the
   accountant). a step of one physical batch on the dry backend with a limit of 2^62 bytes says before the
   run: one that stops there needs more than 2^62 bytes at once, and one that does not is 2^62 bytes from the
   overflow (what the probe leaves out, --data's bytes, the other physical batches' inputs, a later step's,
   is far less). 1 after saying so, else 0 */
#define RUN_MAX_BYTES ((int64_t)1 << 62)
static int run_too_big(const dpprof_config *cfg, const dpprof_config *resolved) {
    dpprof_config probe = *cfg;
    dpprof_session *d = NULL;
    long long more, live;
    char cat[64], mod[64];
    int rc;
    probe.backend = DPPROF_BACKEND_DRY;
    probe.memory_limit = RUN_MAX_BYTES;
    probe.steps = 1;
    probe.warmup = 0;
    probe.physical_batch = resolved->physical_batch; /* the peak of a step is one physical batch's */
    probe.batch = resolved->physical_batch * resolved->ranks;
    probe.no_timeline = 1;
    probe.trace_ops = probe.op_times = probe.dram = 0;
    probe.data_path = NULL;
    rc = dpprof_session_create(&probe, &d);
    if (rc == DPPROF_OK) rc = dpprof_session_step(d);
    /* out of the probe's budget, not of host memory for the profiler's tables; any other error is the run's to say */
    rc = rc == DPPROF_ERR_OOM && !(d && dpprof_session_prof(d)->failed);
    if (rc && sscanf(dpprof_last_error(), "out of memory: %lld more bytes (%63[^,], %63[^)]) would bring live memory to %lld", &more, cat, mod, &live) == 4)
        fprintf(stderr, "%s: run: this configuration needs more than 2^62 bytes (%lld) at once: in its dry model %lld more bytes (%s, %s) would bring live memory to %lld bytes. "
                        "dpprof counts bytes in 64 bits: give a smaller model, batch or sequence\n", prog, (long long)RUN_MAX_BYTES, more, cat, mod, live);
    else if (rc) fprintf(stderr, "%s: run: this configuration needs more than 2^62 bytes (%lld) at once (its dry model: %s). dpprof counts bytes in 64 bits: give a smaller model, batch or sequence\n",
                         prog, (long long)RUN_MAX_BYTES, dpprof_last_error());
    dpprof_session_destroy(d);
    return rc;
}

static int cmd_run(int argc, char **argv) {
    run_opts o;
    dpprof_config resolved;
    dpprof_shape shape;
    dpprof_session *s = NULL;
    out_file out, trace;
    int rc, code = EXIT_OK, total;
    char err[1024] = "", hb[32], hb2[32];
    double last_print;
    double t0;

    memset(&out, 0, sizeof out);
    memset(&trace, 0, sizeof trace);
    if ((rc = parse_run(argc, argv, &o)) != EXIT_OK) return rc;
    if (mpi_world > 1) { /* the ranks of an MPI job: --ranks is the job's size; rank 0 alone speaks and writes */
        if (!o.cfg.ranks) o.cfg.ranks = mpi_world;
        if (mpi_rank) {
            o.quiet = 1;
            o.out = o.trace = NULL;
        }
    }
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
        if (!o.cfg.poisson) { /* the accountant describes poisson sampling: a fixed order would spend more */
            fprintf(stderr, "%s: run: --target-epsilon chooses sigma for poisson-subsampled batches: add --poisson (batches in a fixed order have no such guarantee)\n", prog);
            return EXIT_USAGE;
        }
        if ((o.cfg.accountant == 1 ? dpprof_pld_sigma_for_epsilon((double)resolved.batch / (double)resolved.dataset_size, steps, resolved.delta, o.target_epsilon, 0, &sigma)
                                   : dpprof_rdp_sigma_for_epsilon((double)resolved.batch / (double)resolved.dataset_size, steps, resolved.delta, o.target_epsilon, &sigma)) != 0) {
            fprintf(stderr, "%s: run: --target-epsilon %g: no noise multiplier reaches it at delta %g over %lld steps\n", prog, o.target_epsilon, resolved.delta, steps);
            return EXIT_USAGE;
        }
        o.cfg.sigma = resolved.sigma = sigma;
        if (!o.quiet) fprintf(stderr, "dpprof: sigma %.6g gives epsilon %g at delta %g over %lld steps (q = %g)\n", sigma, o.target_epsilon, resolved.delta, steps, (double)resolved.batch / (double)resolved.dataset_size);
    }
    {
        int gpus = 0; /* auto runs on a gpu when there is one: then the gpu's own memory is the limit */
        if (resolved.backend == DPPROF_BACKEND_AUTO && dpprof_cuda_device_count(&gpus) != DPPROF_OK) gpus = 0;
        if (!o.limit_given && (resolved.backend == DPPROF_BACKEND_CPU || (resolved.backend == DPPROF_BACKEND_AUTO && gpus == 0))) {
            /* a model that cannot fit is an oom result, not the oom killer; a sweep's jobs share the memory */
            const char *jobs = getenv("DPPROF_SWEEP_JOBS");
            long long nj = jobs ? atoll(jobs) : mpi_world; /* an MPI job's ranks share the machine too */
            o.cfg.memory_limit = mem_available() / (nj >= 1 && nj <= 1024 ? nj : 1);
        }
    }
    if (o.cfg.data_path && in_check("--data", o.cfg.data_path, IN_DATA_LIMIT, NULL, 0)) return EXIT_USAGE;
    if (o.dump && o.cfg.backend == DPPROF_BACKEND_DRY) {
        fprintf(stderr, "%s: run: --dump needs computed values: use --backend cpu or cuda (this run is dry)\n", prog);
        return EXIT_USAGE;
    }
    if (o.dump && mpi_world > 1) {
        fprintf(stderr, "%s: run: --dump with %d ranks: a dump is one process's model, batch and gradients; run it without mpirun\n", prog, mpi_world);
        return EXIT_USAGE;
    }
    if (o.dump && outdir_check("--dump", o.dump)) return EXIT_USAGE;
    if (o.dump) { /* the dump replaces its directory whole: no output or input of this run may lie in it */
        const char *paths[4] = {o.out, o.trace, o.cfg.data_path, o.hf_config}, *names[4] = {"--out", "--trace", "--data", "--hf-config"};
        int k, kind;
        for (k = 0; k < 4; k++) {
            char rp[PATH_MAX];
            const char *p = paths[k];
            if (!p) continue;
            if (k < 2 && out_resolve(NULL, p, rp, &kind) == 0) { /* an output: where it is written (standard output, a device: nowhere) */
                if (kind != OUT_FILE) continue;
                p = rp;
            }
            if (path_within(p, o.dump)) {
                fprintf(stderr, "%s: run: %s '%s' is in the --dump directory '%s': the dump replaces that directory whole\n", prog, names[k], paths[k], o.dump);
                return EXIT_USAGE;
            }
        }
    }
    if (o.out && o.trace && out_is_stdout(o.out) && out_is_stdout(o.trace)) {
        fprintf(stderr, "%s: run: --out %s and --trace %s would both write to standard output: give one a file\n", prog, o.out, o.trace);
        return EXIT_USAGE;
    }
    if (o.out && o.trace && out_same(o.out, o.trace)) {
        fprintf(stderr, "%s: run: --out '%s' and --trace '%s' are the same file: one would be lost\n", prog, o.out, o.trace);
        return EXIT_USAGE;
    }
    {   /* an output must not be an input (the same file: its device and inode where both exist) */
        const char *outs[2] = {o.out, o.trace}, *names[2] = {"--out", "--trace"}, *ins[2] = {o.cfg.data_path, o.hf_config}, *in_names[2] = {"--data", "--hf-config"};
        int k, m;
        for (k = 0; k < 2; k++)
            for (m = 0; m < 2; m++)
                if (outs[k] && ins[m] && out_same(outs[k], ins[m])) {
                    fprintf(stderr, "%s: run: %s '%s' is the %s file: it would be overwritten\n", prog, names[k], outs[k], in_names[m]);
                    return EXIT_USAGE;
                }
    }
    if (resolved.backend == DPPROF_BACKEND_DRY && !o.cfg.memory_limit && run_too_big(&o.cfg, &resolved)) return EXIT_USAGE;
    if (o.out && out_open(&out, o.out, "--out")) return EXIT_USAGE;
    if (o.trace && out_open(&trace, o.trace, "--trace")) {
        out_abort(&out);
        return EXIT_USAGE;
    }

    if (!mpi_agree(1)) { /* another rank stopped on its input (it said why) */
        out_abort(&out);
        out_abort(&trace);
        return EXIT_USAGE;
    }
    rc = dpprof_session_create(&o.cfg, &s);
    /* an oom before the model was built (the session itself, --data) comes back without a session */
    if (rc != DPPROF_OK && (rc != DPPROF_ERR_OOM || !s)) {
        fprintf(stderr, "%s: run: %s\n", prog, dpprof_last_error());
        out_abort(&out);
        out_abort(&trace);
        /* input the engine refuses (unknown data, unsupported option) is bad input: no file at all */
        return rc == DPPROF_ERR_INVALID || rc == DPPROF_ERR_UNSUPPORTED || rc == DPPROF_ERR_IO || rc == DPPROF_ERR_NO_CUDA || rc == DPPROF_ERR_NO_DEVICE || rc == DPPROF_ERR_OVERFLOW ? EXIT_USAGE : rc == DPPROF_ERR_OOM ? EXIT_OOM : EXIT_ERROR;
    }
    total = resolved.warmup + resolved.steps;
    if (rc == DPPROF_OK && !o.quiet)
        fprintf(stderr, "dpprof: %s, %s, %s parameters, seq %d, batch %d (physical %d), %d steps on %s\n",
                resolved.preset, resolved.task == DPPROF_TASK_LM ? "lm" : "cls", human_count((double)dpprof_session_param_elems(s, 0), hb, sizeof hb),
                resolved.seq, resolved.batch, resolved.physical_batch, total, dpprof_backend_name(dpprof_session_config(s)->backend));
    {   /* a step's phase records and losses stay for the report: refused now if all of them would not fit */
        const double need = (double)total * (16.0 * (double)sizeof(dpprof_phase_rec) + 64.0), avail = (double)mem_available();
        if (rc == DPPROF_OK && avail > 0 && need > avail / 2) {
            fprintf(stderr, "%s: run: %d steps would keep about %s of records in host memory, more than half of what is available (%s): give fewer --steps\n", prog, total,
                    human_bytes(need, hb, sizeof hb), human_bytes(avail, hb2, sizeof hb2));
            out_abort(&out);
            out_abort(&trace);
            dpprof_session_destroy(s);
            return EXIT_USAGE;
        }
    }
    t0 = now_s();
    last_print = -1e9;
    while (rc == DPPROF_OK && dpprof_session_steps_done(s) < total) {
        int k = dpprof_session_steps_done(s);
        rc = dpprof_session_step(s);
        if (rc == DPPROF_OK && k == 0 && total > 1 && !o.cfg.no_timeline) {
            /* the event log grows by a step's events each step: refused now if all of them would not fit */
            const dpprof_prof *p = dpprof_session_prof(s);
            const double need = (double)p->n_events * (double)total * (double)(sizeof(dpprof_event) + 40), avail = (double)mem_available();
            if (avail > 0 && need > avail / 2) {
                fprintf(stderr, "%s: run: the event log of %d steps would take about %s of host memory (%zu events a step), more than half of what is available (%s): "
                                "--timeline none keeps the peak, its split and the phases without it\n",
                        prog, total, human_bytes(need, hb, sizeof hb), p->n_events, human_bytes(avail, hb2, sizeof hb2));
                out_abort(&out);
                out_abort(&trace);
                dpprof_session_destroy(s);
                return EXIT_USAGE;
            }
        }
        if (rc == DPPROF_OK && !o.quiet && (total <= 20 || k + 1 == total || now_s() - last_print >= 1.0)) { /* at most a line a second */
            double loss = dpprof_session_step_loss(s, k);
            last_print = now_s();
            fprintf(stderr, "  step %d/%d%s", k + 1, total, k < resolved.warmup ? " (warm-up)" : "");
            if (loss == loss) fprintf(stderr, "  loss %.4f", loss);
            fprintf(stderr, "  peak %s  elapsed %.1f s\n", human_bytes((double)dpprof_session_prof(s)->peak_bytes, hb, sizeof hb), last_print - t0);
        }
    }
    if (rc != DPPROF_OK) {
        snprintf(err, sizeof err, "%s", dpprof_last_error());
        fprintf(stderr, "%s: run: %s\n", prog, err);
        /* the profiler's own tables could not grow: the host is out of memory, not the model's budget */
        if (rc == DPPROF_ERR_OOM && dpprof_session_prof(s)->failed) {
            snprintf(err, sizeof err, "out of host memory for the profiler's records after %d steps (not the model's memory): %.600s", dpprof_session_steps_done(s), dpprof_last_error());
            fprintf(stderr, "%s: run: %s\n", prog, err);
            rc = DPPROF_ERR_IO;
        }
        code = rc == DPPROF_ERR_OOM ? EXIT_OOM : EXIT_ERROR;
    }
    if (o.out) {
        int w = dpprof_session_write_json(s, out.f, o.experiment, rc == DPPROF_OK ? "ok" : rc == DPPROF_ERR_OOM ? "oom" : "error", rc == DPPROF_OK ? NULL : err);
        if (w != DPPROF_OK && !ferror(out.f)) { /* the writer's own reason; a stream error is the commit's to say */
            fprintf(stderr, "%s: --out '%s': %s\n", prog, o.out, dpprof_last_error());
            out_abort(&out);
            code = EXIT_ERROR;
        } else if (out_commit(&out)) code = EXIT_ERROR;
    }
    if (o.trace) {
        int w = dpprof_session_write_trace(s, trace.f);
        if (w != DPPROF_OK && !ferror(trace.f)) {
            fprintf(stderr, "%s: --trace '%s': %s\n", prog, o.trace, dpprof_last_error());
            out_abort(&trace);
            code = EXIT_ERROR;
        } else if (out_commit(&trace)) code = EXIT_ERROR;
    }
    if (rc == DPPROF_OK && o.dump) {
        if (outdir_write("--dump", o.dump, run_dump, s) != 0) code = EXIT_ERROR;
    }
    if (rc == DPPROF_OK && !o.quiet) {
        const dpprof_prof *p = dpprof_session_prof(s);
        int c, first;
        fprintf(stderr, "peak %s (%lld bytes) in %s:", human_bytes((double)p->peak_bytes, hb, sizeof hb), (long long)p->peak_bytes, dpprof_phase_name(p->peak_phase));
        for (c = 0, first = 1; c < DPPROF_CAT_COUNT; c++)
            if (p->peak_by_cat[c]) fprintf(stderr, "%s %s %s", first ? "" : ",", dpprof_category_name(c), human_bytes((double)p->peak_by_cat[c], hb, sizeof hb)), first = 0;
        fprintf(stderr, "\n");
        dpprof_memory_truth m;
        dpprof_session_memory_truth(s, &m);
        if (m.driver_peak >= 0) { /* cuda: the three peaks side by side (meta.memory) */
            char hd[32], hv[32];
            fprintf(stderr, "peaks: accountant %lld bytes, dry plan %s%s, driver %lld bytes (%s; of the gap: pool rounding %lld, pool unused %lld, unexplained %lld)\n",
                    (long long)m.accountant_peak, m.dry_peak >= 0 ? human_bytes((double)m.dry_peak, hd, sizeof hd) : "unknown",
                    m.dry_peak >= 0 ? (m.dry_peak == m.accountant_peak ? " (= accountant)" : " (differs)") : "", (long long)m.driver_peak,
                    human_bytes((double)m.driver_peak, hv, sizeof hv), (long long)m.pool_rounding, (long long)m.pool_unused, (long long)m.remainder);
        }
        if (resolved.ranks > 1 || resolved.zero) {
            dpprof_dist_info d;
            char h1[32], h2[32], h3[32];
            dpprof_session_dist(s, &d);
            fprintf(stderr, "rank 0 of %d (zero %d, %d samples a step): shards of %lld elements (%lld padding); per step all-reduce %s, reduce-scatter %s, all-gather %s\n",
                    d.ranks, d.zero, resolved.batch / resolved.ranks, (long long)d.shard_elements, (long long)d.padding_elements, human_bytes((double)d.all_reduce_bytes, h1, sizeof h1),
                    human_bytes((double)d.reduce_scatter_bytes, h2, sizeof h2), human_bytes((double)d.all_gather_bytes, h3, sizeof h3));
        }
    }
    dpprof_session_destroy(s);
    return code;
}

/* ---- plot ---------------------------------------------------------------------------------------- */
static int json_fail(const char *file, const char *what) {
    fprintf(stderr, "%s: plot: %s: %s\n", prog, file, what);
    return EXIT_USAGE;
}

/* one result's live bytes by category, rebuilt from its event log */
typedef struct tl_data {
    dpprof_json_doc *doc;            /* the phase names point into it */
    size_t n, nmarks;                /* points (the empty start, then one per event); phase marks */
    int nser, measured;              /* categories that ever held memory; a measured clock (else x is the event) */
    double *x, *y, *mx, peak;        /* y: nser series of n points; mx: where each phase begins; the largest total */
    const char **mnames;             /* each mark's phase, as the file names it */
    const char *names[DPPROF_CAT_COUNT];
    unsigned char rgb[DPPROF_CAT_COUNT * 3];
    char desc[256];                  /* preset, algorithm, backend, experiment */
    size_t desc_run;                 /* desc's length without the experiment */
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
    if (in_check("plot", in, IN_JSON_LIMIT, NULL, 0)) return EXIT_USAGE;
    if (dpprof_json_parse_file(in, (size_t)1 << 30, &t->doc, err, sizeof err) != 0) {
        fprintf(stderr, "%s: plot: %s\n", prog, err);
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
                                  "rerun that configuration with --timeline full, or draw it with a 'figure NAME = timeline config=LABELS' line of %s, which reruns it so", where);
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
    if (!t->x || !y) { fprintf(stderr, "%s: plot: out of memory\n", prog); code = EXIT_ERROR; goto fail; }
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
    if (!t->mx || !t->mnames) { fprintf(stderr, "%s: plot: out of memory\n", prog); code = EXIT_ERROR; goto fail; }
    for (k = 0; k < nm; k++) {
        const dpprof_json *mk = dpprof_json_at(jm, k);
        long long ph, ev;
        double tm;
        const char *name;
        if (dpprof_json_int64(dpprof_json_get(mk, "phase"), &ph) || ph < 0 || dpprof_json_int64(dpprof_json_get(mk, "event"), &ev) || ev < 0) continue;
        name = np ? ((size_t)ph < np ? dpprof_json_string(dpprof_json_at(jp, (size_t)ph)) : NULL) : ph < DPPROF_PHASE_COUNT ? dpprof_phase_name((int)ph) : NULL;
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
        int k2 = snprintf(t->desc, sizeof t->desc, "%.60s, %.40s, %.20s backend", preset ? preset : "?", algo ? algo : "?", backend ? backend : "?");
        t->desc_run = k2 > 0 ? (size_t)k2 : 0;
        snprintf(t->desc + t->desc_run, sizeof t->desc - t->desc_run, " (%.100s)", exp ? exp : "run");
    }
    return EXIT_OK;
fail:
    tl_free(t);
    return code;
}

/* one panel: t drawn into cv (allocated at w x h, or cv's own size), on the shared axes x_max and y_max where nonzero */
typedef struct tl_axes {
    double x_max, y_max;  /* shared axes; 0: the panel's own */
    int label_rows;       /* 0: as many as the labels need; else exactly these */
    int no_legend;        /* the figure draws one legend for all panels */
    int *rows_used;       /* receives the label rows drawn, or NULL */
} tl_axes;

static int tl_render(const tl_data *t, const char *in, const char *title, int w, int h, int text_scale, const tl_axes *ax, dpprof_canvas *cv) {
    dpprof_timeline_desc d;
    int c;
    memset(&d, 0, sizeof d);
    d.title = title;
    d.xlabel = t->measured ? "time (ms)" : "allocation event (dry run: no time measured)";
    d.ylabel = "live memory (MiB)";
    d.n_points = (int)t->n;
    d.x = t->x;
    d.n_series = t->nser;
    d.y = t->y;
    d.series_names = t->names;
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
        fprintf(stderr, "%s: plot: %s: cannot render the timeline (code %d)\n", prog, in, c);
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
        fprintf(stderr, "%s: plot: %d timelines: from 1 to %d fit one figure\n", prog, n, TL_MAX_PANELS);
        return EXIT_USAGE;
    }
    for (i = 0; i < n && code == EXIT_OK; i++) {
        code = tl_load(in[i], &t[i]);
        if (code != EXIT_OK) break;
        loaded++;
        if (t[i].measured != t[0].measured) {
            fprintf(stderr, "%s: plot: %s is %s and %s is %s: their timelines cannot share an x axis\n", prog, in[0],
                    t[0].measured ? "timed" : "a dry run (no clock)", in[i], t[i].measured ? "timed" : "a dry run (no clock)");
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
        int w = sw + 2 * ts + dpprof_canvas_text_width(dpprof_category_name(k), ts);
        if (!used[k]) continue;
        if (lx + w > width - 8 * ts && lx > 8 * ts) lx = 8 * ts, ly += line_h;
        lx += w + gap;
    }
    top = ly + line_h + 4 * ts;
    if (dpprof_canvas_init(&cv, width, top + n * panel_h) != 0) { code = EXIT_ERROR; goto done; }
    {
        int tw = dpprof_canvas_text_width(title, ts);
        dpprof_canvas_text(&cv, tw < width ? (width - tw) / 2 : 4, 4 * ts, title, ts, ink);
    }
    lx = 8 * ts;
    ly = line_h + 4 * ts;
    for (k = 0; k < DPPROF_CAT_COUNT; k++) {
        const char *nm = dpprof_category_name(k);
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

static int cmd_plot(int argc, char **argv) {
    static const cli_opt t[] = {{"--out", "FILE.png", ""}, {"--title", "TEXT", ""}, {"--help", NULL, ""}};
    const char *kind = NULL, *in[TL_MAX_PANELS], *out = NULL, *title = NULL, *v;
    char name[64], labels[TL_MAX_PANELS][128], ttl[300];
    const char *lp[TL_MAX_PANELS];
    int i, k, ended = 0, nin = 0;
    for (i = 0; i < argc; i++) {
        if (!ended && !strcmp(argv[i], "-h")) { help_plot(); return EXIT_OK; }
        if ((k = cli_next("plot", t, 3, argc, argv, &i, &ended, name, sizeof name, &v)) < 0) break;
        if (k == 1 && !strcmp(name, "--help")) { help_plot(); return EXIT_OK; }
        if (k == 1 && !strcmp(name, "--out")) out = v;
        else if (k == 1) title = v;
        else if (k != 0) return k;
        else if (!kind) kind = v;
        else if (nin < TL_MAX_PANELS) in[nin++] = v;
        else return usage_error("plot: '%s': at most 8 results make one figure%s", v, "");
    }
    if (!kind || !nin || !out) return usage_error("plot: usage: dpprof plot timeline RESULT.json [RESULT.json ...] --out FILE.png%s%s", "", "");
    if (strcmp(kind, "timeline") != 0) return usage_error("plot: unknown figure '%s' (known: timeline)%s", kind, "");
    for (k = 0; k < nin; k++)
        if (out_same(in[k], out)) return usage_error("plot: --out '%s' is the input '%s': it would be overwritten", out, in[k]);
    {   /* the output is checked before any work */
        char path[PATH_MAX];
        int okind;
        if (out_resolve("plot --out", out, path, &okind)) return EXIT_USAGE;
    }
    if (nin == 1) return plot_timeline(in[0], out, title, 0, 0, 0);
    for (k = 0; k < nin; k++) { /* a panel is named by its file: DIR/ID.json is ID */
        const char *b = strrchr(in[k], '/');
        size_t len;
        b = b ? b + 1 : in[k];
        len = strlen(b);
        if (len > 5 && !strcmp(b + len - 5, ".json")) len -= 5;
        snprintf(labels[k], sizeof labels[k], "%.*s", (int)(len < 127 ? len : 127), b);
        lp[k] = labels[k];
    }
    snprintf(ttl, sizeof ttl, "%s", title ? title : "memory timelines, one panel each, shared axes");
    return plot_timelines(in, lp, nin, out, ttl, 1600, 600, 2);
}

static void help_epsilon(void) {
    printf("usage: dpprof epsilon --sigma S --sample-rate Q --steps N [--delta D] [--accountant rdp|pld|both]\n"
           "       dpprof epsilon --target-epsilon E --sample-rate Q --steps N [--delta D] [--accountant rdp|pld]\n\n"
           "privacy spent by DP-SGD with Poisson sampling (rate Q) and noise multiplier S over N steps:\n"
           "  rdp   the RDP accountant of the Poisson-subsampled Gaussian mechanism (Mironov et al. 2019),\n"
           "        improved conversion (Balle et al. 2020), minimised over the orders 1.1 ... 10.9, 12 ... 63\n"
           "        and past 63 where the minimum is at 63 (the default; prints the best order)\n"
           "  pld   the privacy loss distribution, the tight accountant: pessimistic connect-the-dots\n"
           "        discretization at interval 1e-4, composed by FFT (an upper bound; above\n"
           "        dp_accounting's PLD accountant by at most 1e-4 relative at delta >= 1e-8, 3e-3 at\n"
           "        1e-10; a few seconds)\n"
           "  both  prints epsilon_rdp and epsilon_pld\n"
           "with --target-epsilon, the smallest sigma that reaches it under the accountant named. delta\n"
           "defaults to 1e-5.\n");
}

static int cmd_epsilon(int argc, char **argv) {
    double sigma = -1, q = -1, delta = 1e-5, target = -1, eps, order, eps_pld = 0;
    long long steps = -1;
    int acct = 0; /* 0 rdp, 1 pld, 2 both */
    static const cli_opt t[] = {{"--sigma", "S", ""}, {"--sample-rate", "Q", ""}, {"--delta", "D", ""}, {"--target-epsilon", "E", ""}, {"--steps", "N", ""}, {"--accountant", "A", ""}, {"--help", NULL, ""}};
    char name[64];
    int i, k, ended = 0;
    for (i = 0; i < argc; i++) {
        const char *a = name, *v;
        if (!ended && !strcmp(argv[i], "-h")) { help_epsilon(); return EXIT_OK; }
        if ((k = cli_next("epsilon", t, 7, argc, argv, &i, &ended, name, sizeof name, &v)) < 0) break;
        if (k == 0) return usage_error("epsilon: unexpected argument '%s'%s", v, "");
        if (k != 1) return k;
        if (!strcmp(a, "--help")) { help_epsilon(); return EXIT_OK; }
        if (!strcmp(a, "--sigma")) { if (parse_dbl(a, v, 0, 1e6, 0, &sigma)) return EXIT_USAGE; }
        else if (!strcmp(a, "--sample-rate")) { if (parse_dbl(a, v, 0, 1, 0, &q)) return EXIT_USAGE; }
        else if (!strcmp(a, "--delta")) { if (parse_dbl(a, v, 0, 1, 1, &delta) || delta >= 1) { fprintf(stderr, "%s: --delta must be in (0, 1)\n", prog); return EXIT_USAGE; } }
        else if (!strcmp(a, "--target-epsilon")) { if (parse_dbl(a, v, 0, 1e6, 1, &target)) return EXIT_USAGE; }
        else if (!strcmp(a, "--steps")) { if (parse_ll(a, v, 0, 1000000000000LL, &steps)) return EXIT_USAGE; }
        else if (!strcmp(v, "rdp")) acct = 0;
        else if (!strcmp(v, "pld")) acct = 1;
        else if (!strcmp(v, "both")) acct = 2;
        else return usage_error("epsilon: --accountant '%s': expected rdp, pld or both%s", v, "");
    }
    if (q < 0 || steps < 0 || (sigma < 0) == (target < 0))
        return usage_error("epsilon: give --sample-rate, --steps and one of --sigma or --target-epsilon%s%s", "", "");
    if (target > 0 && acct == 2) return usage_error("epsilon: --target-epsilon takes one accountant: rdp or pld%s%s", "", "");
    if (acct >= 1 && target > 0) {
        if (dpprof_pld_sigma_for_epsilon(q, steps, delta, target, 0, &sigma) != 0) {
            fprintf(stderr, "%s: epsilon: no sigma reaches epsilon %g at delta %g under the PLD accountant (q %g, %lld steps)\n", prog, target, delta, q, steps);
            return EXIT_ERROR;
        }
        printf("sigma %.10g\n", sigma);
        target = -1;
    }
    if (acct >= 1 && (sigma == 0 ? (eps_pld = q > 0 && steps > 0 ? INFINITY : 0, 0) : dpprof_pld_epsilon(q, sigma, steps, delta, 0, &eps_pld)) != 0) {
        fprintf(stderr, "%s: epsilon: the PLD accountant could not evaluate sigma %g, q %g (no epsilon under 1e4 reaches delta %g)\n", prog, sigma, q, delta);
        return EXIT_ERROR;
    }
    if (acct == 1) {
        printf("epsilon %.10g\ndelta %g\naccountant pld\n", eps_pld, delta);
        return EXIT_OK;
    }
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
    if (acct == 2) printf("epsilon_rdp %.10g\nepsilon_pld %.10g\ndelta %g\nbest_order %g\n", eps, eps_pld, delta, order);
    else printf("epsilon %.10g\ndelta %g\nbest_order %g\n", eps, delta, order);
    return EXIT_OK;
}

/* ---- sweep: an experiment file -> one `dpprof run` process per configuration ------------------------
   paste after cmd_plot (it uses prog, usage_error, parse_int, parse_dbl, out_open/out_commit).
   main():  if (!strcmp(argv[1], "sweep")) return cmd_sweep(argc, argv);
   (the whole argv: argv[0] is the fallback path of the binary when /proc/self/exe cannot be run).
   */

#define SWEEP_MAX_CONFIGS 100000LL
#define SWEEP_MAX_ID 240 /* an id names files: ID.json.tmp within NAME_MAX (255) */

static void help_sweep(void) {
    printf("usage: dpprof sweep EXPERIMENT.conf --out-dir DIR [--jobs J] [--dry-run] [--only TEXT] [--timeout SECONDS]\n"
           "                    [--backend NAME]\n\n"
           "Runs every configuration of an experiment file, each in its own process:\n"
           "  dpprof run <base> <axis options> [--backend NAME] --experiment NAME --out DIR/ID.json --quiet\n"
           "with the process's stdout and stderr in DIR/logs/ID.log, then writes DIR/summary.csv.\n\n"
           "options:\n"
           "  --out-dir DIR       results directory (created, with its parents, if missing)\n"
           "  --jobs J            run up to J configurations at once (default 1)\n"
           "  --dry-run           print the command lines and exit; nothing is written\n"
           "  --only TEXT         only the configurations whose id contains TEXT\n"
           "  --timeout SECONDS   kill a configuration that runs longer (default 0: no limit)\n"
           "  --backend NAME      run every configuration on dry, cpu, cuda or auto, whatever the file's\n"
           "                      options say (it comes after them: the last --backend wins)\n\n"
           "experiment file: one 'KEY = VALUE' per line; '#' starts a comment (to the end of the line),\n"
           "blank lines are ignored:\n"
           "  name = single_gpu                        required; a-z 0-9 _ - ; starts every id\n"
           "  description = any text                   optional\n"
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
           "file order (the first axis varies slowest), at most %lld; each one's id is\n"
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
           "configurations killed, finished results kept).\n",
           SWEEP_MAX_CONFIGS);
}

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
    char **base, **cuda;   /* cuda: the options added on the cuda backend (its counters, op times) */
    int nbase, name_line, desc_line, base_line, ncuda, cuda_line;
    sweep_axis *axis;
    int naxis, capaxis;
    long long nconf;
    const char *backend; /* sweep --backend: appended to every configuration's options (the last one wins), or NULL */
    char **id;  /* nconf ids, in configuration order */
    void **mem; /* every allocation but axis[], freed by sweep_spec_free */
    size_t nmem, capmem;
} sweep_spec;

static int sweep_oom(void) {
    fprintf(stderr, "%s: sweep: out of memory\n", prog);
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
    fprintf(stderr, "%s: sweep: %s:%d: ", prog, sp->file, line);
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
    {   /* two values with one label: sorted, so that 1e5 values take a moment, not minutes */
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
        fprintf(stderr, "%s: sweep: %s: cannot open: %s\n", prog, path, strerror(errno));
        return EXIT_USAGE;
    }
    while (rc == EXIT_OK && (len = getline(&line, &cap, f)) != -1) {
        char *s, *eq, *key, *val, *hash;
        ln++;
        if ((size_t)len != strlen(line)) { rc = sweep_bad(sp, ln, "a NUL byte: this is not a text file"); break; }
        if ((hash = strchr(line, '#'))) *hash = 0;
        s = sweep_trim(line);
        if (!*s) continue;
        if (!(eq = strchr(s, '='))) { rc = sweep_bad(sp, ln, "expected 'KEY = VALUE', got '%.300s'", s); break; }
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
        fprintf(stderr, "%s: sweep: %s: cannot read: %s\n", prog, path, strerror(errno));
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
        if (!(sp->id[c] = (char *)sweep_calloc(sp, n, 1))) { free(sorted); return sweep_oom(); }
        k = (size_t)sprintf(sp->id[c], "%s", sp->name);
        for (a = 0; a < sp->naxis; a++) k += (size_t)sprintf(sp->id[c] + k, "-%s", sp->axis[a].val[sweep_pick(sp, c, a)].label);
        if (k > SWEEP_MAX_ID) {
            free(sorted);
            return sweep_bad(sp, sp->naxis ? sp->axis[sp->naxis - 1].line : sp->name_line, "the id of configuration %lld is %zu characters long, more than %d (ids name files): shorten the name or the labels", c + 1, k, SWEEP_MAX_ID);
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
static void sweep_print_cmd(FILE *f, char *const *args) {
    int i;
    for (i = 0; args[i]; i++) {
        const char *a = args[i];
        if (i) fputc(' ', f);
        if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == strlen(a)) fputs(a, f);
        else {
            fputc('\'', f);
            for (; *a; a++) {
                if (*a == '\'') fputs("'\\''", f);
                else fputc(*a, f);
            }
            fputc('\'', f);
        }
    }
    fputc('\n', f);
}

/* exe run <base> <axis options> --experiment NAME --out OUT --quiet; malloc'd, NULL-terminated */
/* a --trace or --dump path of the experiment file, made the configuration's own: t.json -> t-ID.json,
   dumpdir -> dumpdir-ID (so that the configurations of a sweep never write one file) */
static char *sweep_own_path(sweep_spec *sp, const char *opt, const char *path, const char *id) {
    const char *slash = strrchr(path, '/'), *dot = strrchr(slash ? slash + 1 : path, '.');
    size_t stem = dot && dot != (slash ? slash + 1 : path) ? (size_t)(dot - path) : strlen(path), n = strlen(opt) + strlen(path) + strlen(id) + 4;
    char *v = (char *)sweep_keep(sp, malloc(n));
    if (v) snprintf(v, n, "%s%.*s-%s%s", opt, (int)stem, path, id, path + stem);
    return v;
}

static char **sweep_argv(const sweep_spec *sp, long long c, const char *exe, char *out) {
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
            if (!(v[i] = sweep_own_path((sweep_spec *)sp, "", o, sp->id[c]))) { free(v); return NULL; }
            own = 0;
        } else if (!strcmp(o, "--trace") || !strcmp(o, "--dump")) own = 1;
        else if (!strncmp(o, "--trace=", 8) || !strncmp(o, "--dump=", 7)) {
            const size_t eq = (size_t)(strchr(o, '=') - o) + 1;
            char opt[16];
            snprintf(opt, sizeof opt, "%.*s", (int)eq, o);
            if (!(v[i] = sweep_own_path((sweep_spec *)sp, opt, o + eq, sp->id[c]))) { free(v); return NULL; }
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
    if (in_check(NULL, path, IN_JSON_LIMIT, why, whylen) || dpprof_json_parse_file(path, (size_t)1 << 30, &doc, why, whylen) != 0) return 0;
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
    double t0;
    int timed_out;
    char *json, *log, **args;
} sweep_job;

typedef struct sweep_run {
    sweep_spec *sp;
    const char *dir, *exe, *argv0;
    int jobs, devnull, write_failed;
    pid_t self;                    /* the sweep: its children die with it */
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

static int sweep_start(sweep_run *r, sweep_job *j, long long c) {
    const char *id = r->sp->id[c];
    int logfd;
    memset(j, 0, sizeof *j);
    j->conf = c;
    if (!(j->json = sweep_path(r->dir, "", id, ".json")) || !(j->log = sweep_path(r->dir, "logs/", id, ".log")) ||
        !(j->args = sweep_argv(r->sp, c, r->exe, j->json))) {
        sweep_job_free(j);
        return sweep_oom();
    }
    /* an unfinished result (no status) and a killed writer's temporaries go: the run writes anew */
    out_remove_leftovers(j->json);
    remove(j->json);
    if ((logfd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
        fprintf(stderr, "%s: sweep: cannot write the log '%s': %s\n", prog, j->log, strerror(errno));
        sweep_job_free(j);
        return EXIT_ERROR;
    }
    fflush(NULL);
    j->t0 = sweep_now();
    j->pid = fork();
    if (j->pid < 0) {
        fprintf(stderr, "%s: sweep: cannot start a process: %s\n", prog, strerror(errno));
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
    sweep_progress(r, r->sp->id[j->conf], st, peak, el, j->log);
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
        char err[256];
        if (!(json = sweep_path(dir, "", sp->id[c], ".json"))) {
            out_abort(&af);
            free(path);
            return sweep_oom();
        }
        if (dpprof_json_parse_file(json, (size_t)1 << 30, &doc, err, sizeof err) == 0) root = dpprof_json_root(doc);
        sweep_csv_str(af.f, sp->id[c]);
        for (a = 0; a < sp->naxis; a++) {
            fputc(',', af.f);
            sweep_csv_str(af.f, sp->axis[a].val[sweep_pick(sp, c, a)].label);
        }
        fputc(',', af.f);
        st = dpprof_json_string(dpprof_json_get(root, "status"));
        sweep_csv_str(af.f, st ? st : access(json, F_OK) == 0 ? "unreadable" : "not_run");
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
        char **args = json ? sweep_argv(sp, c, prog_name, json) : NULL;
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
    const char *file = NULL, *outdir = NULL, *only = NULL, *backend = NULL;
    char exe[4096], *dir = NULL;
    long long *sel = NULL, *pend = NULL, c, npend = 0, next = 0;
    int i, rc, dry = 0, nrun = 0, ended = 0;
    struct sigaction sa, old_int, old_term, old_chld;
    sigset_t block, waitmask;

    memset(&r, 0, sizeof r);
    r.jobs = 1;
    r.self = getpid();
    r.argv0 = argc > 0 ? argv[0] : "dpprof";
    for (i = 2; i < argc; i++) {
        static const cli_opt t[] = {{"--out-dir", "DIR", ""}, {"--jobs", "J", ""}, {"--only", "TEXT", ""}, {"--timeout", "SECONDS", ""}, {"--backend", "NAME", ""}, {"--dry-run", NULL, ""}, {"--help", NULL, ""}};
        char a[64];
        const char *v;
        int k;
        if (!ended && !strcmp(argv[i], "-h")) { help_sweep(); return EXIT_OK; }
        if ((k = cli_next("sweep", t, 7, argc, argv, &i, &ended, a, sizeof a, &v)) < 0) break;
        if (k == 0) {
            if (file) return usage_error("sweep: unexpected argument '%s' (one experiment file)%s", v, "");
            file = v;
            continue;
        }
        if (k != 1) return k;
        if (!strcmp(a, "--help")) { help_sweep(); return EXIT_OK; }
        if (!strcmp(a, "--dry-run")) dry = 1;
        else if (!strcmp(a, "--out-dir")) outdir = v;
        else if (!strcmp(a, "--only")) only = v;
        else if (!strcmp(a, "--backend")) {
            if (strcmp(v, "dry") && strcmp(v, "cpu") && strcmp(v, "cuda") && strcmp(v, "auto"))
                return usage_error("sweep: --backend '%s': expected dry, cpu, cuda or auto%s", v, "");
            backend = v;
        } else if (!strcmp(a, "--jobs")) { if (parse_int(a, v, 1, 1024, &r.jobs)) return EXIT_USAGE; }
        else if (parse_dbl(a, v, 0, 1e9, 0, &r.timeout)) return EXIT_USAGE;
    }
    if (!file || !outdir || !*outdir)
        return usage_error("sweep: usage: dpprof sweep EXPERIMENT.conf --out-dir DIR [--jobs J] [--dry-run] [--only TEXT] [--timeout SECONDS] [--backend NAME]%s%s", "", "");
    if ((rc = sweep_parse(file, &sp)) != EXIT_OK) {
        sweep_spec_free(&sp);
        return rc;
    }
    sp.backend = backend;
    r.sp = &sp;
    /* DIR without trailing slashes */
    if (!(dir = strdup(outdir))) { rc = sweep_oom(); goto done; }
    for (i = (int)strlen(dir); i > 1 && dir[i - 1] == '/'; i--) dir[i - 1] = 0;
    r.dir = dir;
    {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) exe[n] = 0;
        else snprintf(exe, sizeof exe, "%s", r.argv0);
        r.exe = exe;
    }
    if ((rc = sweep_check_options(&sp, dir)) != EXIT_OK) goto done;
    if (!(sel = (long long *)malloc((size_t)sp.nconf * sizeof *sel)) || !(pend = (long long *)malloc((size_t)sp.nconf * sizeof *pend))) { rc = sweep_oom(); goto done; }
    for (c = 0; c < sp.nconf; c++)
        if (!only || strstr(sp.id[c], only)) sel[r.nsel++] = c;
    if (r.nsel == 0) {
        fprintf(stderr, "%s: sweep: --only '%s' matches none of the %lld configurations of %s\n", prog, only, sp.nconf, file);
        rc = EXIT_USAGE;
        goto done;
    }
    if (dry) { /* what the sweep would do, checked as it would be: the directory too */
        if (dir_make("sweep: --out-dir", dir, 0)) {
            rc = EXIT_USAGE;
            goto done;
        }
        for (c = 0; c < r.nsel; c++) {
            char *json = sweep_path(dir, "", sp.id[sel[c]], ".json");
            char **args = json ? sweep_argv(&sp, sel[c], exe, json) : NULL;
            if (!args) { free(json); rc = sweep_oom(); goto done; }
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
        if (!logs) { rc = sweep_oom(); goto done; }
        bad = dir_make("sweep: --out-dir", dir, 1) || dir_make("sweep: --out-dir", logs, 1);
        free(logs);
        if (bad) { rc = EXIT_USAGE; goto done; }
    }
    /* one sweep a directory: a lock on DIR/.sweep.lock (released when this process ends, however it ends) */
    {
        char *lockp = sweep_path(dir, "", ".sweep", ".lock");
        struct flock fl;
        char pid[32];
        int lfd;
        if (!lockp) { rc = sweep_oom(); goto done; }
        lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK, fl.l_whence = SEEK_SET;
        if (lfd < 0 || fcntl(lfd, F_SETLK, &fl) != 0) {
            ssize_t n = lfd >= 0 ? pread(lfd, pid, sizeof pid - 1, 0) : -1;
            pid[n > 0 ? n : 0] = 0;
            if (lfd < 0) fprintf(stderr, "%s: sweep: cannot lock '%s': %s\n", prog, lockp, strerror(errno));
            else fprintf(stderr, "%s: sweep: another sweep (pid %s) is writing '%s': wait for it to end, or give another --out-dir\n", prog, *pid ? pid : "unknown", dir);
            if (lfd >= 0) close(lfd);
            free(lockp);
            rc = EXIT_USAGE;
            goto done;
        }
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        if (ftruncate(lfd, 0) != 0 || pwrite(lfd, pid, strlen(pid), 0) < 0) { /* the pid is a courtesy: the lock is what counts */ }
        free(lockp); /* lfd stays open (and locked) until the process ends */
    }
    if ((r.devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "%s: sweep: cannot open /dev/null: %s\n", prog, strerror(errno));
        rc = EXIT_ERROR;
        goto done;
    }
    fprintf(stderr, "%s: sweep %s: %lld configuration%s", prog, sp.name, sp.nconf, sp.nconf == 1 ? "" : "s");
    if (only) fprintf(stderr, ", %lld with '%s' in the id", r.nsel, only);
    fprintf(stderr, ", %d at a time, results in %s%s%s\n", r.jobs, dir, sp.description ? " - " : "", sp.description ? sp.description : "");
    /* finished before: skipped */
    for (c = 0; c < r.nsel; c++) {
        char *json = sweep_path(dir, "", sp.id[sel[c]], ".json");
        char st[64], why[256];
        double peak;
        if (!json) { rc = sweep_oom(); goto closefd; }
        out_remove_leftovers(json); /* a run killed while writing */
        if (sweep_read_result(json, st, sizeof st, &peak, why, sizeof why)) {
            r.done++;
            r.skipped++;
            sweep_count(&r, st);
            sweep_progress(&r, sp.id[sel[c]], st, peak, 0, NULL);
        } else pend[npend++] = sel[c];
        free(json);
    }
    if (!(job = (sweep_job *)calloc((size_t)r.jobs, sizeof *job))) { rc = sweep_oom(); goto closefd; }
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
            if ((rc = sweep_start(&r, &job[nrun], pend[next])) != EXIT_OK) { r.write_failed = 1; break; }
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
            if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
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
        fprintf(stderr, "%s: sweep %s: interrupted by %s: %d running configuration%s killed, %lld of %lld finished; run the same command to resume\n",
                prog, sp.name, sweep_signame(sig), killed, killed == 1 ? "" : "s", r.done, r.nsel);
        nrun = 0;
        rc = 130;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
    sigprocmask(SIG_SETMASK, &r.oldmask, NULL);
    if (rc == 130) goto closefd;
    if (r.write_failed) {
        fprintf(stderr, "%s: sweep %s: stopped: the sweep could not write its files (see above); %lld of %lld configurations finished\n", prog, sp.name, r.done, r.nsel);
        if (rc == EXIT_OK) rc = EXIT_ERROR;
        goto closefd;
    }
    if ((rc = sweep_write_summary(&sp, dir)) != EXIT_OK) {
        fprintf(stderr, "%s: sweep %s: the summary could not be written (see above)\n", prog, sp.name);
        goto closefd;
    }
    fprintf(stderr, "%s: sweep %s: %lld of %lld done (%lld skipped): ok %lld, oom %lld, error %lld, crashed %lld, timeout %lld",
            prog, sp.name, r.done, r.nsel, r.skipped, r.n_ok, r.n_oom, r.n_error, r.n_crashed, r.n_timeout);
    if (r.n_other) fprintf(stderr, ", other %lld", r.n_other);
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

typedef struct rep_res {
    int have;                         /* a result file was read */
    char skipped[300];                /* a file was there and not used: why (said on stderr and in the summary) */
    char status[16];
    double peak, cat[DPPROF_CAT_COUNT], mod[DPPROF_MOD_COUNT];
    double dry_peak, drv_peak;        /* cuda: the dry plan's peak and the driver's (bytes; nan where the result has none) */
    double ph_bytes[DPPROF_PHASE_COUNT], ph_flops[DPPROF_PHASE_COUNT];
    double ph_peak[DPPROF_PHASE_COUNT];  /* live bytes at the phase's peak (largest over its occurrences); nan: not run */
    double ph_ms[DPPROF_PHASE_COUNT];    /* measured ms per training step (setup phases: once); nan: not timed */
    double ph_traffic[DPPROF_PHASE_COUNT][4]; /* measured dram read, dram write, l2 read, l2 write bytes (--dram,
                                                 the counters step); nan: not measured */
    char backend[16], device[80];     /* config.backend, meta.device: what produced the numbers */
    char commit[48], date[16];        /* meta.git_commit, and meta.date's day: the build and the day of the run */
    double mem_limit;                 /* config.memory_limit (bytes; nan: none) */
    double params, trainable, epsilon, step_ms, tokens_s;
    double moved, flops;              /* analytic bytes and flops of one training step */
    double mfu, model_mfu, dram;      /* cuda: the executed flops' and the model flops' utilisation; measured dram bytes of the counters step */
    double norm_dram, norm_flops;     /* cuda --op-times: the norm kernels' share of the dram peak and the dtype's compute peak */
    double norm_roof;                 /* their roofline time (each op's bytes at the dram peak or flops at the compute
                                         peak, whichever takes longer) over their measured time */
    char norm_bound[32];              /* which peak bounds most of that roofline time ("" when not measured) */
    int nops;                         /* --op-times: the timed step's ops (throughput.ops.by_op), their names and ms */
    char opname[REP_MAXOPS][40];
    double opms[REP_MAXOPS];
    int ntr;                          /* --dram-ops: the ops with measured traffic, their analytic and measured dram bytes */
    char trname[REP_MAXOPS][40];
    double tran[REP_MAXOPS], trdram[REP_MAXOPS];
} rep_res;

/* the numeric metrics of a result, in the order the macros list them (norm_bound is a string macro) */
static const char *const rep_metrics[] = {"peak_gib", "overhead", "params_b", "trainable_m", "epsilon", "step_ms", "tokens_per_s", "moved_gib", "tflop", "mfu", "model_mfu", "speed", "dram_gib", "norm_dram_pct", "norm_flops_pct", "norm_bound_pct", "flop_ceiling", "gib_s", "dry_peak_gib", "driver_peak_gib", "dram_ratio"};

typedef struct rep_line {             /* a figure or table line of the conf */
    int line;
    int table;                        /* a table line: fig is its name, "" for the experiment's unnamed table */
    char fig[64], kind[32];
    char key[16][24], val[16][200];
    int nkv;
} rep_line;

typedef struct rep {
    sweep_spec sp;
    const char *conf, *dir, *figdir, *tabdir;
    rep_res *res;                     /* (nconf) */
    rep_line lines[REP_MAX_LINES];
    int nlines;
    FILE *summary, *macros;
} rep;

static int rep_bad(const rep *r, int line, const char *fmt, const char *a) {
    fprintf(stderr, "%s: report: %s:%d: ", prog, r->conf, line);
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return EXIT_USAGE;
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
        fprintf(stderr, "%s: report: %s: cannot open: %s\n", prog, r->conf, strerror(errno));
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
        if (r->nlines == REP_MAX_LINES) { rc = rep_bad(r, ln, "more than %s figure and table lines", "64"); break; }
        l = &r->lines[r->nlines++];
        memset(l, 0, sizeof *l);
        l->line = ln;
        if (!(eq = strchr(s, '='))) { rc = rep_bad(r, ln, "expected 'figure NAME = KIND ...' or 'table = KIND ...'%s", ""); break; }
        *eq = 0;
        l->table = !!strncmp(s, "figure", 6);
        { /* figure NAME, table [NAME]: a-z, 0-9, _ and - (the files NAME-FIG.png, NAME-TNAME-table.tex) */
            char *nm = s + (l->table ? 5 : 6), *end, msg[160];
            while (sweep_space((unsigned char)*nm)) nm++;
            end = nm + strlen(nm);
            while (end > nm && sweep_space((unsigned char)end[-1])) *--end = 0;
            if (!l->table && !*nm) { rc = rep_bad(r, ln, "figure without a name (figure NAME = KIND ...)%s", ""); break; }
            if (strlen(nm) >= sizeof l->fig || strspn(nm, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(nm)) {
                snprintf(msg, sizeof msg, "%s name '%%s': expected up to 63 of a-z, 0-9, _ and - (%s NAME = KIND ...)", l->table ? "table" : "figure", l->table ? "table" : "figure");
                rc = rep_bad(r, ln, msg, nm);
                break;
            }
            snprintf(l->fig, sizeof l->fig, "%s", nm);
        }
        tok = strtok_r(eq + 1, " \t\r\n\v\f", &save);
        if (!tok) { rc = rep_bad(r, ln, "no KIND after '='%s", ""); break; }
        snprintf(l->kind, sizeof l->kind, "%s", tok);
        /* key=value, or key="text with spaces" (a figure's title and axis labels) */
        for (tok = save; rc == EXIT_OK && tok && *tok;) {
            char *e, *end;
            while (sweep_space((unsigned char)*tok)) tok++;
            if (!*tok) break;
            e = tok + strcspn(tok, "= \t\r\n\v\f");
            if (*e != '=' || l->nkv == 16) {
                *(tok + strcspn(tok, " \t\r\n\v\f")) = 0;
                rc = rep_bad(r, ln, "'%s': expected key=value", tok);
                break;
            }
            *e = 0;
            if (e[1] == '"') {
                end = strchr(e + 2, '"');
                if (!end) { rc = rep_bad(r, ln, "%s=\"...: no closing quote", tok); break; }
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
    char **argv = sweep_argv(&r->sp, c, "dpprof", (char *)"-");
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
        for (j = i + 1; argv[j] && !later; j++) later = !strcmp(argv[j], o); /* the last one wins, as in run */
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

static void rep_load(rep *r, long long c) {
    rep_res *x = &r->res[c];
    char *path = sweep_path(r->dir, "", r->sp.id[c], ".json");
    dpprof_json_doc *doc = NULL;
    const dpprof_json *root, *ph;
    char err[256];
    int k;
    memset(x, 0, sizeof *x);
    x->peak = x->params = x->trainable = x->epsilon = x->step_ms = x->tokens_s = x->mfu = x->model_mfu = x->dram = x->norm_dram = x->norm_flops = x->norm_roof = x->dry_peak = x->drv_peak = NAN;
    if (!path) return;
    if (access(path, F_OK) != 0) { /* not run (yet): missing, and the summary counts it */
        free(path);
        return;
    }
    if (in_check(NULL, path, IN_JSON_LIMIT, err, sizeof err) || dpprof_json_parse_file(path, (size_t)1 << 30, &doc, err, sizeof err) != 0) {
        snprintf(x->skipped, sizeof x->skipped, "%.260s", err);
        free(path);
        return;
    }
    free(path);
    root = dpprof_json_root(doc);
    {   /* a result of this experiment, or nothing: a foreign or truncated file is named, not used */
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
        dev = dpprof_json_string(dpprof_json_path(root, "meta.git_commit"));
        snprintf(x->commit, sizeof x->commit, "%.12s", dev ? dev : "");
        dev = dpprof_json_string(dpprof_json_path(root, "meta.date"));
        snprintf(x->date, sizeof x->date, "%.10s", dev ? dev : "");
    }
    x->mem_limit = rep_num(dpprof_json_path(root, "config.memory_limit"));
    x->peak = rep_num(dpprof_json_path(root, "breakdown.bytes.peak"));
    /* the three peaks of a cuda run (meta.memory; a result from before it has the driver's figure in MiB alone) */
    x->dry_peak = rep_num(dpprof_json_path(root, "meta.memory.dry_peak_bytes"));
    x->drv_peak = rep_num(dpprof_json_path(root, "meta.memory.driver_peak_bytes"));
    if (!(x->drv_peak == x->drv_peak)) x->drv_peak = rep_num(dpprof_json_path(root, "meta.driver_peak_used_mb")) * 1048576.0;
    for (k = 0; k < DPPROF_CAT_COUNT; k++) {
        char p[96];
        snprintf(p, sizeof p, "breakdown.bytes.%s", dpprof_category_name(k));
        x->cat[k] = rep_num(dpprof_json_path(root, p));
    }
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
            snprintf(x->norm_bound, sizeof x->norm_bound, "%s", tb >= tf ? "DRAM bandwidth" : dt && !strcmp(dt, "bf16") ? "bf16 tensor-core peak" : "fp32 peak");
    }
    dpprof_json_free(doc);
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

/* peak of configuration c relative to its sibling whose "algo" label is ref (same other labels) */
static double rep_overhead(const rep *r, long long c, const char *ref) {
    int a = rep_axis(r, "algo"), b;
    long long d;
    if (a < 0 || !r->res[c].have || strcmp(r->res[c].status, "ok")) return NAN;
    for (d = 0; d < r->sp.nconf; d++) {
        if (strcmp(rep_label(r, d, a), ref)) continue;
        for (b = 0; b < r->sp.naxis; b++)
            if (b != a && strcmp(rep_label(r, d, b), rep_label(r, c, b))) break;
        if (b == r->sp.naxis) return r->res[d].have && !strcmp(r->res[d].status, "ok") ? r->res[c].peak / r->res[d].peak : NAN;
    }
    return NAN;
}

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
    for (k = 0; k < DPPROF_CAT_COUNT; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s_gib", dpprof_category_name(k));
        if (!strcmp(m, name)) return x->cat[k] / REP_GIB;
    }
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
    static const char *const t[] = {"step_ms", "tokens_per_s", "mfu", "speed", "dram_gib", "norm_dram_pct", "norm_flops_pct", "norm_bound_pct", "gib_s", "driver_peak_gib", "dram_ratio"};
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
    return "";
}

/* ---- words for a reader: axis names, metrics, labels and categories as a figure shows them ---------- */
static const char *rep_axis_title(const char *axis) {
    static const char *const t[][2] = {{"seq", "sequence length T (tokens)"}, {"phys", "physical batch b"}, {"batch", "logical batch B"},
                                       {"algo", "algorithm"}, {"mode", "fine-tuning"}, {"dtype", "storage"}, {"checkpoint", "activation checkpointing"},
                                       {"ranks", "GPUs"}, {"zero", "ZeRO stage"}, {"shape", "model and shape"}, {"lora", "LoRA rank"},
                                       {"train", "training"}, {"kernel", "clipped-sum kernel"}};
    size_t k;
    for (k = 0; axis && k < sizeof t / sizeof t[0]; k++)
        if (!strcmp(axis, t[k][0])) return t[k][1];
    return axis ? axis : "";
}

/* "peak memory (GiB)", or the metric and its unit */
static void rep_metric_title(const char *m, char *out, size_t cap) {
    static const char *const t[][2] = {{"peak_gib", "peak memory (GiB)"}, {"speed", "throughput (x non-private)"},
                                       {"mfu", "MFU (% of the tensor-core peak)"}, {"tokens_per_s", "throughput (tokens/s)"},
                                       {"step_ms", "step time (ms)"}, {"overhead", "peak (x non-private)"},
                                       {"tflop", "TFLOP per step (analytic)"}, {"moved_gib", "GiB moved per step (analytic)"},
                                       {"dram_gib", "DRAM GiB per step (measured)"}};
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

/* a memory category as a legend names it */
static const char *rep_cat_title(int k) {
    switch (k) {
    case DPPROF_CAT_MODEL_PARAMETERS: return "weights";
    case DPPROF_CAT_OPTIMIZER_STATES: return "optimizer states";
    case DPPROF_CAT_GRADIENTS: return "gradients";
    case DPPROF_CAT_ACTIVATIONS: return "activations";
    case DPPROF_CAT_ACTIVATION_HOOKS: return "DP cache (book-keeping)";
    case DPPROF_CAT_PER_SAMPLE_GRADIENTS: return "per-sample gradients";
    case DPPROF_CAT_NORM_SAMPLES: return "per-sample norms";
    case DPPROF_CAT_TEMP_MATRICES: return "Gram temporaries";
    case DPPROF_CAT_LORA: return "LoRA";
    default: return dpprof_category_name(k);
    }
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
    else if (!strcmp(metric, "step_ms") || !strcmp(metric, "tokens_per_s") || !strcmp(metric, "largest_batch")) snprintf(out, n, "%.0f", v);
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
    if (ax < 0) return rep_bad(r, l->line, "x=%s is not an axis of this experiment", xs ? xs : "(missing)");
    if (ss && as < 0) return rep_bad(r, l->line, "series=%s is not an axis of this experiment", ss);
    if (capacity && ab < 0) return rep_bad(r, l->line, "batch=%s is not an axis of this experiment", batch ? batch : "(missing)");
    if (!capacity && (!metric || !rep_known_metric(metric))) return rep_bad(r, l->line, "value=%s is not a metric", metric ? metric : "(missing)");
    nx = rep_labels(r, ax, xl, REP_MAXL);
    ns = as >= 0 ? rep_labels(r, as, sl, REP_MAXL) : 1;
    if (as < 0) sl[0] = metric;
    val = (double *)calloc((size_t)nx * (size_t)ns, sizeof(double));
    miss = (const char **)calloc((size_t)nx * (size_t)ns, sizeof *miss);
    if (!val || !miss) { free(val); free(miss); return EXIT_ERROR; }
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
    memset(&d, 0, sizeof d);
    if (capacity) snprintf(ylabel, sizeof ylabel, "largest physical batch b");
    else rep_metric_title(metric, ylabel, sizeof ylabel);
    snprintf(title, sizeof title, "%s", capacity ? "largest physical batch within the memory limit" : ylabel);
    if (!capacity) rep_title_source(r, where, metric, title, sizeof title);
    d.xlabel = rep_axis_title(xs);
    d.ylabel = ylabel;
    rep_user_labels(r, l, where, capacity ? NULL : metric, title, sizeof title, &d.xlabel, &d.ylabel);
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
                           : strstr(metric, "_gib") || !strcmp(metric, "mfu") ? 1 : 0;
    rc = rep_bars_png(r, l, &d, val);
    free(miss);
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
        int n = 0, k, wst = 0;
        pid_t pid;
        /* on the backend of the sweep's result of it: a timeline of a measured sweep is measured too */
        r->sp.backend = r->res[c].have && strcmp(r->res[c].backend, "dry") && strcmp(r->res[c].backend, "unknown") ? r->res[c].backend : NULL;
        argv = sweep_argv(&r->sp, c, "/proc/self/exe", json);
        r->sp.backend = NULL;
        if (!argv) { free(json); return NULL; }
        while (argv[n]) n++;
        full = (char **)calloc((size_t)n + 3, sizeof *full);
        if (!full) { free(argv); free(json); return NULL; }
        for (k = 0; k < n; k++) full[k] = argv[k];
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
            fprintf(stderr, "%s: report: the timeline run of %s failed%s\n", prog, r->sp.id[c], st3 ? " (out of memory: a configuration that does not fit has no timeline to draw)" : "");
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

/* text into a latex table: labels like flash_bk carry characters tex treats specially */
static void rep_tex(FILE *f, const char *t) {
    for (; *t; t++) {
        if (strchr("_&%#${}", *t)) fprintf(f, "\\%c", *t);
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
    enum { MAXN = 4 * REP_MAXOPS };
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
        else fputs(i == top ? "other ops" : i == top + 1 ? "all ops" : "step (mean)", af.f);
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
        fprintf(r->macros, "\\dpdef{%s}{%s}{status}{%s}\n", r->sp.name, id, r->res[c].status);
        for (k = 0; k < (int)(sizeof rep_metrics / sizeof rep_metrics[0]); k++) {
            double x = rep_metric(r, c, rep_metrics[k]);
            if (x != x) continue;
            rep_fmt(v, sizeof v, rep_metrics[k], x);
            fprintf(r->macros, "\\dpdef{%s}{%s}{%s}{%s}\n", r->sp.name, id, rep_metrics[k], v);
        }
        if (r->res[c].norm_bound[0]) fprintf(r->macros, "\\dpdef{%s}{%s}{norm_bound}{%s}\n", r->sp.name, id, r->res[c].norm_bound);
        if (strcmp(r->res[c].backend, "dry") && r->res[c].commit[0] && strspn(r->res[c].commit, "0123456789abcdef") == strlen(r->res[c].commit))
            fprintf(r->macros, "\\dpdef{%s}{%s}{run_commit}{%s}\n", r->sp.name, id, r->res[c].commit);
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
        return rep_fig_note(r, l, title, !strcmp(value, "dram") ? "No configuration of this figure has measured DRAM bytes: they need the cuda backend on a GPU with counters and --dram (make bench); analytic bytes are value=bytes."
                                                                  : "No configuration of this figure has a timed result: phase times need a run on a GPU (BACKEND=cuda).");
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
             !phases ? "memory at the peak by module"
             : !strcmp(value, "flops") ? "analytic FLOPs per phase occurrence"
             : !strcmp(value, "dram") ? "measured DRAM bytes (read + write) per phase, the counters step"
             : peak ? "live memory at each phase's peak"
             : !strcmp(value, "time") ? "measured ms per step, per phase" : "analytic bytes moved per phase occurrence", "", "", "");
    if (measured && rep_sources_n(r, where, 1, 0, src, sizeof src)) {
        strncat(title, ", measured: ", sizeof title - strlen(title) - 1);
        strncat(title, src, sizeof title - strlen(title) - 1);
    }
    d.title = title;
    d.xlabel = phases ? "phase" : "module";
    d.ylabel = !phases || peak ? "GiB" : !strcmp(value, "flops") ? "TFLOP" : !strcmp(value, "dram") ? "GiB, measured (CUPTI)" : !strcmp(value, "time") ? "ms per step" : "GiB moved (analytic)";
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

static void help_report(void) {
    printf("usage: dpprof report EXPERIMENT.conf --results DIR [--figures DIR] [--tables DIR]\n\n"
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
           "tradeoff series=AXIS where=...: peak memory against the measured step time, a point per configuration;\n"
           "those without a timed result are named in one sentence (none timed: the figure is that sentence).\n"
           "ops where=...: the configuration's ops (--dram-ops on a GPU), the 12 with the most bytes, each op's\n"
           "analytic bytes beside its measured dram bytes in the counters step (none measured: a sentence says so).\n"
           "ops tables (results of --op-times): cols=AXIS where=AXIS:LABEL,... top=N: one column a label, the N ops\n"
           "with the longest time in any column (ms in the timed step), then the other ops, all ops and the step.\n"
           "metrics: peak_gib overhead params_b trainable_m epsilon step_ms tokens_per_s moved_gib tflop\n"
           "(analytic bytes and flops of one step) mfu (%%, cuda: the flops the step executes, every op's cost, over the step\n"
           "time and the dtype's flop peak) model_mfu (%%, cuda: 3 x the forward's flops, the model-flops convention) speed (tokens/s x vanilla, cuda) dram_gib (measured per step, --dram)\n"
           "norm_dram_pct norm_flops_pct (the norm kernels' share of the dram peak and of the compute peak of the\n"
           "run's dtype: fp32 cores, bf16 tensor cores; --op-times) norm_bound_pct (their roofline time, each op at\n"
           "whichever peak bounds it, over their measured time; the macros also name that bound: norm_bound)\n"
           "flop_ceiling (vanilla's analytic flops over the configuration's: its speed at vanilla's flop rate)\n"
           "gib_s (peak GiB x measured step seconds: the memory held for a step) <category>_gib\n");
}

static int rep_figure(rep *r, const rep_line *l);

/* what each kind of line needs: its keys, and what its value= is (m: a metric, p: a phases value, 0: not read) */
static const struct rep_kind {
    int table;
    const char *kind, *keys;
    char value;
} rep_kinds[] = {
    {0, "bars", "x value", 'm'}, {0, "capacity", "x series batch", 0}, {0, "heatmap", "rows cols value", 'm'}, {0, "stacked", "group", 0},
    {0, "lines", "x series value", 'm'}, {0, "modules", "group", 0}, {0, "ops", "", 0}, {0, "phases", "group", 'p'}, {0, "timeline", "config", 0},
    {0, "tradeoff", "series", 0}, {1, "pivot", "rows cols value", 'm'}, {1, "breakdown", "group", 0}, {1, "ops", "cols", 0},
};

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
        for (k = 0; k < l->nkv; k++) {
            int is_axis = 0;
            for (j = 0; j < 6; j++) is_axis |= !strcmp(l->key[k], axis_keys[j]);
            if (is_axis && rep_axis(r, l->val[k]) < 0) {
                snprintf(msg, sizeof msg, "%s=%s is not an axis of this experiment", l->key[k], l->val[k]);
                return rep_bad(r, l->line, "%s", msg);
            }
        }
        if ((v = rep_get(l, "value")) && (kd->value == 'm' ? !rep_known_metric(v) : kd->value == 'p' ? !rep_phase_word(v) : !rep_known_metric(v) && !rep_phase_word(v))) {
            if (kd->value == 'p') return rep_bad(r, l->line, "value=%s: phases takes bytes, flops, dram, peak or time", v);
            return rep_bad(r, l->line, "value=%s is not a metric (peak_gib overhead params_b trainable_m epsilon step_ms tokens_per_s moved_gib tflop mfu model_mfu speed dram_gib norm_dram_pct norm_flops_pct norm_bound_pct flop_ceiling gib_s <category>_gib)", v);
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

static int cmd_report(int argc, char **argv) {
    rep r;
    const char *conf = NULL;
    int i, rc = EXIT_OK, n_ok = 0, n_oom = 0, n_err = 0, n_missing = 0, timed = 0, ended = 0;
    char sum_path[4096], mac_path[4096]; /* out_open keeps the path: one buffer each */
    out_file sum, mac;
    long long c;
    memset(&r, 0, sizeof r);
    r.figdir = "figures";
    r.tabdir = "paper/generated";
    for (i = 0; i < argc; i++) {
        static const cli_opt t[] = {{"--results", "DIR", ""}, {"--figures", "DIR", ""}, {"--tables", "DIR", ""}, {"--help", NULL, ""}};
        char a[64];
        const char *v;
        int k;
        if (!ended && !strcmp(argv[i], "-h")) { help_report(); return EXIT_OK; }
        if ((k = cli_next("report", t, 4, argc, argv, &i, &ended, a, sizeof a, &v)) < 0) break;
        if (k == 0) {
            if (conf) return usage_error("report: unexpected argument '%s'%s", v, "");
            conf = v;
            continue;
        }
        if (k != 1) return k;
        if (!strcmp(a, "--help")) { help_report(); return EXIT_OK; }
        if (!strcmp(a, "--results")) r.dir = v;
        else if (!strcmp(a, "--figures")) r.figdir = v;
        else r.tabdir = v;
    }
    if (!conf || !r.dir) return usage_error("report: usage: dpprof report EXPERIMENT.conf --results DIR%s%s", "", "");
    r.conf = conf;
    if ((rc = sweep_parse(conf, &r.sp)) != EXIT_OK) return rc;
    if ((rc = rep_read_lines(&r)) != EXIT_OK || (rc = rep_validate(&r)) != EXIT_OK) { sweep_spec_free(&r.sp); return rc; }
    if (dir_make("report: --figures", r.figdir, 0) || dir_make("report: --tables", r.tabdir, 0)) { sweep_spec_free(&r.sp); return EXIT_USAGE; }
    r.res = (rep_res *)calloc((size_t)r.sp.nconf, sizeof *r.res);
    if (!r.res) { sweep_spec_free(&r.sp); return EXIT_ERROR; }
    for (c = 0; c < r.sp.nconf; c++) {
        rep_load(&r, c);
        if (r.res[c].skipped[0]) fprintf(stderr, "%s: report: %s/%s.json skipped: %s\n", prog, r.dir, r.sp.id[c], r.res[c].skipped);
        if (!r.res[c].have) n_missing++;
        else if (!strcmp(r.res[c].status, "ok")) n_ok++;
        else if (!strcmp(r.res[c].status, "oom")) n_oom++;
        else n_err++;
        timed |= r.res[c].step_ms == r.res[c].step_ms;
    }
    if (n_missing == r.sp.nconf) {
        fprintf(stderr, "%s: report: no results of '%s' in %s (run: dpprof sweep %s --out-dir %s)\n", prog, r.sp.name, r.dir, conf, r.dir);
        free(r.res);
        sweep_spec_free(&r.sp);
        return EXIT_USAGE;
    }
    if (dir_make("report: --figures", r.figdir, 1) || dir_make("report: --tables", r.tabdir, 1)) {
        free(r.res);
        sweep_spec_free(&r.sp);
        return EXIT_USAGE;
    }
    snprintf(sum_path, sizeof sum_path, "%s/summary.txt", r.dir);
    if (out_open(&sum, sum_path, "summary")) { free(r.res); sweep_spec_free(&r.sp); return EXIT_ERROR; }
    snprintf(mac_path, sizeof mac_path, "%s/%s-macros.tex", r.tabdir, r.sp.name);
    if (out_open(&mac, mac_path, "macros")) { out_abort(&sum); free(r.res); sweep_spec_free(&r.sp); return EXIT_ERROR; }
    r.summary = sum.f;
    r.macros = mac.f;
    fprintf(r.summary, "experiment %s: %s\nconfigurations %lld: %d ok, %d oom, %d error, %d without a result\n", r.sp.name,
            r.sp.description ? r.sp.description : "", r.sp.nconf, n_ok, n_oom, n_err, n_missing);
    if (timed) {
        char src[512];
        rep_sources(&r, NULL, 1, src, sizeof src);
        fprintf(r.summary, "time: measured on %s; memory exact to the byte (the accountant's)\n", src);
    } else fprintf(r.summary, "time and DRAM traffic: not measured (no GPU results): memory only, exact to the byte\n");
    fprintf(r.macros, "%% generated by dpprof report from %s and the results in %s\n", conf, r.dir);
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
        fprintf(r.summary, "%-48s %-8s peak %9s GiB  x vanilla %6s%s%s%s\n", r.sp.id[c], r.res[c].have ? r.res[c].status : r.res[c].skipped[0] ? "skipped" : "missing", pk, ov,
                three, r.res[c].skipped[0] ? "  " : "", r.res[c].skipped);
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
        if (used) { cats[nc] = i; cl[nc++] = rep_cat_title(i); }
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
    int ax = rep_axis(r, xs), as = rep_axis(r, ss), nx, ns, i, j, rc, markers[REP_MAXL];
    const char *xl[REP_MAXL], *sl[REP_MAXL], *sd[REP_MAXL];
    char sb[REP_MAXL][REP_DISP], xlabel[160], budget[64];
    double xv[REP_MAXL], *yv, limit = NAN;
    unsigned char *oom, rgb[REP_MAXL * 3];
    dpprof_lines_desc d;
    dpprof_canvas cv;
    char title[256], ylabel[112];
    if (!metric || as < 0) return rep_bad(r, l->line, "lines needs series=AXIS and value=METRIC%s", "");
    nx = rep_labels(r, ax, xl, REP_MAXL);
    ns = rep_labels(r, as, sl, REP_MAXL);
    for (i = 0; i < nx; i++) xv[i] = rep_label_num(xl[i]); /* positive: rep_validate */
    yv = (double *)calloc((size_t)nx * (size_t)ns, sizeof(double));
    oom = (unsigned char *)calloc((size_t)nx * (size_t)ns, 1);
    if (!yv || !oom) { free(yv); free(oom); return EXIT_ERROR; }
    for (j = 0; j < ns; j++) {
        memcpy(rgb + 3 * j, rep_series_rgb(r, as, sl[j], j), 3);
        markers[j] = j % DPPROF_PLOT_MARKER_N;
        for (i = 0; i < nx; i++) {
            long long c = rep_find(r, where, ax, xl[i], as, sl[j]);
            yv[j * nx + i] = rep_metric(r, c, metric);
            oom[j * nx + i] = c >= 0 && r->res[c].have && !strcmp(r->res[c].status, "oom");
            if (c >= 0 && r->res[c].have && r->res[c].mem_limit > 0 && !(limit == limit)) limit = r->res[c].mem_limit;
        }
    }
    memset(&d, 0, sizeof d);
    { /* both axes are log10: their labels say so */
        char mt[96], *paren;
        rep_metric_title(metric, mt, sizeof mt);
        snprintf(title, sizeof title, "%s", mt);
        rep_title_source(r, where, metric, title, sizeof title);
        paren = strrchr(mt, ')');
        if (paren && paren == mt + strlen(mt) - 1) {
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
        snprintf(budget, sizeof budget, "memory limit %.1f GiB", limit / REP_GIB);
        d.budget = limit / REP_GIB;
        d.budget_label = budget;
    }
    d.oom_label = "out of memory";
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
    d.log_y = 1;
    d.x_ticks_at_data = 1;
    d.text_scale = REP_FIG_TEXT;
    memset(&cv, 0, sizeof cv);
    rc = dpprof_plot_lines(&d, &cv);
    free(yv);
    free(oom);
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
                                   !xr->have ? "not run" : strcmp(xr->status, "ok") ? xr->status : "not timed: memory only");
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
        const dpprof_scatter_desc d = {.title = title, .xlabel = "step time (ms, measured)", .ylabel = "peak memory (GiB)", .width = REP_FIG_W, .height = REP_FIG_H,
                                       .n_points = n, .x = x, .y = y, .labels = lab, .point_rgb = rgb, .point_marker = mk,
                                       .n_legend = nl, .legend_names = ll, .legend_rgb = lrgb, .legend_marker = lmk, .text_scale = REP_FIG_TEXT};
        memset(&cv, 0, sizeof cv);
        rc = dpprof_plot_scatter(&d, &cv);
    }
    return rep_render(r, l, rc, &cv);
}

/* ops where=...: one configuration's ops (--dram-ops on a GPU), the most bytes first (up to 12): each op's analytic
   bytes beside its measured dram bytes (read + write) in the counters step */
static int rep_fig_ops(rep *r, const rep_line *l) {
    enum { MAXG = 12 };
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
            x->device, x->commit[0] ? x->commit : "?", x->date[0] ? x->date : "?");
    for (i = 0; i < n; i++) fprintf(r->summary, "%s %s %.3g", i ? "," : "", x->trname[order[i]], x->tran[order[i]] > 0 ? x->trdram[order[i]] / x->tran[order[i]] : NAN);
    fputc('\n', r->summary);
    for (i = 0; i < g; i++) { /* series-major: the analytic bars, then the measured */
        gn[i] = x->trname[order[i]];
        val[i] = x->tran[order[i]] / REP_GIB;
        val[g + i] = x->trdram[order[i]] / REP_GIB;
    }
    memset(&d, 0, sizeof d);
    /* what measured it: the device, the commit and the day of the run */
    snprintf(title, sizeof title, "%s: DRAM bytes per op, analytic and measured (%s, %s, %s)", r->sp.id[c], x->device, x->commit[0] ? x->commit : "?", x->date[0] ? x->date : "?");
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

static int cmd_presets(void) {
    const char *const *n;
    printf("%-14s %8s %6s %4s %4s %4s %6s %10s %5s  %s\n", "preset", "vocab", "hidden", "L", "NH", "NKV", "ffn", "rope_theta", "tied", "also named");
    for (n = dpprof_preset_names(); *n; n++) {
        dpprof_shape s;
        dpprof_preset_shape(*n, &s);
        printf("%-14s %8d %6d %4d %4d %4d %6d %10g %5s  %s\n", *n, s.V, s.C, s.L, s.NH, s.NKV, s.F, s.rope_theta, s.tied ? "yes" : "no", dpprof_preset_hf_name(*n));
    }
    return EXIT_OK;
}

/* what the cuda backend would run on: make bench and make gpu-check ask this first */
/* ---- attnbench: the attention kernels alone, timed on the GPU ------------------------------------------
   every kernel variant (fp32 simt; bf16 simt; bf16 tensor cores in blocks of 64 and of 128 rows, with 16 or 32
   query rows a warp; cuDNN's fused flash attention where the build has it) forward and backward at a few shapes, so the block size and the warp
   rows can be chosen from a measurement: median,
   min and max of --repeats timed calls after one warm-up, each call between two CUDA events; rates from
   the analytic flops and bytes of dpprof_attention_{fwd,bwd}_cost. a failed launch stops the measuring
   (the device queue keeps its first error); what was measured is written, with the error */
#define AB_MAX_SHAPES 16
#define AB_MAX_REPEATS 1000
typedef struct ab_shape { char name[48]; int B, T, NH, NKV, HS; } ab_shape;
typedef struct ab_variant { const char *storage, *kernel; int rows, wrows; } ab_variant; /* wrows: the forward's rows a warp */
static const ab_variant ab_variants[] = {{"fp32", "simt", 0, 0}, {"bf16", "simt", 0, 0}, {"bf16", "tc", 64, 16}, {"bf16", "tc", 128, 16},
                                         {"bf16", "tc", 64, 32},  {"bf16", "tc", 128, 32}, {"bf16", "cudnn", 0, 0}};
#define AB_NV ((int)(sizeof ab_variants / sizeof ab_variants[0]))
typedef struct ab_row { const char *status; char note[160]; double ms_med, ms_min, ms_max, flops, bytes; } ab_row;

static void help_attnbench(void) {
    printf("usage: dpprof attnbench [--shape B,T,NH,NKV,HS]... [--repeats N] [--out FILE.json]\n\n"
           "Times the attention kernels alone on the GPU, forward and backward, for every variant: fp32 on\n"
           "the simt kernels; bf16 storage on the simt kernels, and on the tensor cores in blocks of 64 and of\n"
           "128 rows (dpprof_cuda_tuning.attention_block; the tensor cores take even head sizes up to 128), each\n"
           "with 16 query rows a warp (tc-64, tc-128) and, at head sizes up to 64, with 32 (tc-64w32,\n"
           "tc-128w32; dpprof_cuda_tuning.attention_warp_rows); and cuDNN's fused flash attention (cudnn, bf16),\n"
           "where the build has it (dpprof version says so) and cuDNN has an engine for the shape, else the row\n"
           "says why. its workspace is allocated beside the tensors; the deterministic backward is asked for.\n"
           "Each timing is the median (with min and max) of N calls after one warm-up call, each between two\n"
           "CUDA events; TFLOP/s and the shares of the device's fp32, bf16 and DRAM peaks come from the\n"
           "analytic flops and bytes of the op (the same as in a run's throughput.ops).\n\n"
           "options:\n"
           "  --shape B,T,NH,NKV,HS  a shape (repeatable; default: the bench shapes, trainer-1b at B=8 T=1024,\n"
           "                         longctx at B=1 T=16384, llama-3.2-1b at B=8 T=1024, from the presets)\n"
           "  --repeats N            timed calls per variant and pass (default 10, at most %d)\n"
           "  --out FILE.json        the results (written atomically)\n\n"
           "needs a GPU: without one it says so and exits 2, writing nothing. a shape that does not fit in\n"
           "device memory is recorded as oom and the others are measured. a launch that fails stops the\n"
           "measuring (the device keeps its first error): what was measured is written, the rest marked\n"
           "not_run, status error, exit 1.\n",
           AB_MAX_REPEATS);
}

/* "B,T,NH,NKV,HS" -> a shape named after its numbers; 0 or a message on stderr */
static int ab_parse_shape(const char *v, ab_shape *sh) {
    long long x[5];
    const char *p = v;
    int i;
    for (i = 0; i < 5; i++) {
        char *end;
        errno = 0;
        x[i] = strtoll(p, &end, 10);
        if (end == p || errno == ERANGE || *end != (i < 4 ? ',' : '\0') || x[i] < 1 || x[i] > 1000000) {
            fprintf(stderr, "%s: attnbench: --shape '%s': expected B,T,NH,NKV,HS, five integers in [1, 1000000]\n", prog, v);
            return -1;
        }
        p = end + 1;
    }
    if (x[2] % x[3] || x[4] > DPPROF_MAX_HEAD_SIZE || x[0] > 65535 || x[2] > 65535) {
        fprintf(stderr, "%s: attnbench: --shape '%s': NKV must divide NH, HS be at most %d, B and NH at most 65535\n", prog, v, DPPROF_MAX_HEAD_SIZE);
        return -1;
    }
    if ((double)x[0] * (double)x[1] * (double)x[2] * (double)x[4] * 4.0 > 1e12) {
        fprintf(stderr, "%s: attnbench: --shape '%s': B*T*NH*HS*4 bytes exceeds 1e12\n", prog, v);
        return -1;
    }
    sh->B = (int)x[0], sh->T = (int)x[1], sh->NH = (int)x[2], sh->NKV = (int)x[3], sh->HS = (int)x[4];
    snprintf(sh->name, sizeof sh->name, "B%d-T%d-NH%d-NKV%d-HS%d", sh->B, sh->T, sh->NH, sh->NKV, sh->HS);
    return 0;
}

static int ab_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* one variant and pass of a shape: one warm-up call, then `repeats` timed ones; the row says how it went.
   returns DPPROF_OK or the device queue's error */
static int ab_time(ab_row *row, int bwd, int repeats, float **t16, float **t32, const ab_shape *sh, int bf16, int cudnn, void *ws, size_t wsb) {
    float **t = bf16 ? t16 : t32; /* q k v dout out lse dq dk dv */
    double ms[AB_MAX_REPEATS];
    int r, rc = DPPROF_OK;
    dpprof_cuda_events_reset();
    for (r = 0; r <= repeats && rc == DPPROF_OK; r++) {
        int e0 = -1, e1 = -1;
        if (r > 0) rc = dpprof_cuda_event(&e0);
        if (cudnn && !bwd) dpprof_cudnn_attention_fwd_gpu(t[4], t32[5], t[0], t[1], t[2], sh->B, sh->T, sh->NH, sh->NKV, sh->HS, ws, wsb);
        else if (cudnn) dpprof_cudnn_attention_bwd_gpu(t[6], t[7], t[8], t[3], t[0], t[1], t[2], t[4], t32[5], sh->B, sh->T, sh->NH, sh->NKV, sh->HS, ws, wsb);
        else if (!bwd) dpprof_attention_fwd_gpu(t[4], t32[5], t[0], t[1], t[2], sh->B, sh->T, sh->NH, sh->NKV, sh->HS);
        else dpprof_attention_bwd_gpu(t[6], t[7], t[8], t[3], t[0], t[1], t[2], t[4], t32[5], sh->B, sh->T, sh->NH, sh->NKV, sh->HS);
        if (r > 0 && rc == DPPROF_OK) rc = dpprof_cuda_event(&e1);
        if (r > 0 && rc == DPPROF_OK) rc = dpprof_cuda_event_ms(e0, e1, &ms[r - 1]);
        if (rc == DPPROF_OK) rc = dpprof_cuda_sync();
    }
    dpprof_cuda_events_reset();
    if (rc != DPPROF_OK) {
        row->status = "error";
        snprintf(row->note, sizeof row->note, "%s", dpprof_cuda_last_error());
        return rc;
    }
    qsort(ms, (size_t)repeats, sizeof ms[0], ab_cmp);
    row->status = "ok";
    row->ms_min = ms[0], row->ms_max = ms[repeats - 1];
    row->ms_med = repeats % 2 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
    return DPPROF_OK;
}

static void ab_json_num(FILE *f, double v) {
    if (v == v && v - v == 0) fprintf(f, "%.17g", v);
    else fputs("null", f);
}

static int cmd_attnbench(int argc, char **argv) {
    ab_shape shapes[AB_MAX_SHAPES];
    static const struct { const char *preset; int B, T; } defaults[] = {{"trainer-1b", 8, 1024}, {"longctx", 1, 16384}, {"llama-3.2-1b", 8, 1024}};
    ab_row *rows;
    dpprof_device_info dev;
    double peak32 = 0, peak16 = 0, peakdram = 0;
    int nshape = 0, repeats = 10, count = 0, i, s, v, pass, stop = 0, rc, ended = 0;
    const char *out_path = NULL;
    out_file af;
    char date[32];
    time_t now = time(NULL);
    for (i = 0; i < argc; i++) {
        static const cli_opt t[] = {{"--shape", "B,T,NH,NKV,HS", ""}, {"--repeats", "N", ""}, {"--out", "FILE.json", ""}, {"--help", NULL, ""}};
        char a[64];
        const char *val;
        int k;
        if (!ended && !strcmp(argv[i], "-h")) { help_attnbench(); return EXIT_OK; }
        if ((k = cli_next("attnbench", t, 4, argc, argv, &i, &ended, a, sizeof a, &val)) < 0) break;
        if (k == 0) return usage_error("attnbench: unexpected argument '%s'%s", val, "");
        if (k != 1) return k;
        if (!strcmp(a, "--help")) { help_attnbench(); return EXIT_OK; }
        if (!strcmp(a, "--shape")) {
            if (nshape == AB_MAX_SHAPES) return usage_error("attnbench: at most 16 --shape options%s%s", "", "");
            if (ab_parse_shape(val, &shapes[nshape])) return EXIT_USAGE;
            nshape++;
        } else if (!strcmp(a, "--repeats")) { if (parse_int(a, val, 1, AB_MAX_REPEATS, &repeats)) return EXIT_USAGE; }
        else out_path = val;
    }
    for (i = 0; nshape == 0 && i < (int)(sizeof defaults / sizeof defaults[0]); i++) {
        dpprof_shape p;
        if (dpprof_preset_shape(defaults[i].preset, &p) != DPPROF_OK) return usage_error("attnbench: preset %s is missing%s", defaults[i].preset, "");
        snprintf(shapes[i].name, sizeof shapes[i].name, "%s", defaults[i].preset);
        shapes[i].B = defaults[i].B, shapes[i].T = defaults[i].T, shapes[i].NH = p.NH, shapes[i].NKV = p.NKV, shapes[i].HS = p.HS;
        if (i + 1 == (int)(sizeof defaults / sizeof defaults[0])) nshape = i + 1;
    }
    rc = dpprof_cuda_device_count(&count);
    if (rc != DPPROF_OK || count == 0) {
        fprintf(stderr, "%s: attnbench: no GPU is visible on this machine (%s): nothing measured\n", prog,
                rc == DPPROF_ERR_NO_CUDA ? "this dpprof was built without CUDA" : rc != DPPROF_OK ? dpprof_cuda_last_error() : "the CUDA runtime sees no device");
        return EXIT_USAGE;
    }
    if (out_path && out_open(&af, out_path, "--out")) return EXIT_USAGE;
    if (dpprof_cuda_device_info(0, &dev) != DPPROF_OK || dpprof_cuda_init(0) != DPPROF_OK) {
        fprintf(stderr, "%s: attnbench: %s\n", prog, dpprof_cuda_last_error());
        if (out_path) out_abort(&af);
        return EXIT_ERROR;
    }
    dpprof_device_peaks(&dev, &peak32, &peak16, &peakdram);
    rows = (ab_row *)calloc((size_t)nshape * AB_NV * 2, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "%s: attnbench: out of host memory\n", prog);
        if (out_path) out_abort(&af);
        return EXIT_ERROR;
    }
    printf("attnbench on %s (sm %d.%d, %d SMs; peaks fp32 %.1f, bf16 %.1f TFLOP/s, dram %.2f TB/s), %d timed calls each\n", dev.name, dev.cc_major, dev.cc_minor,
           dev.sm_count, peak32 / 1e12, peak16 / 1e12, peakdram / 1e12, repeats);
    printf("%-24s %-5s %-9s %-4s %10s %10s %9s %7s %7s\n", "shape", "dtype", "kernel", "pass", "ms median", "ms min", "TFLOP/s", "%fp32", "%bf16");
    for (s = 0; s < nshape; s++) {
        const ab_shape *sh = &shapes[s];
        const size_t nq = (size_t)sh->B * sh->T * sh->NH * sh->HS, nk = (size_t)sh->B * sh->T * sh->NKV * sh->HS, nl = (size_t)sh->B * sh->NH * sh->T;
        const size_t n[9] = {nq, nk, nk, nq, nq, nl, nq, nk, nk};
        float *t32[9] = {0}, *t16[9] = {0};
        int arc = DPPROF_OK;
        for (i = 0; i < 9 && arc == DPPROF_OK; i++) {
            arc = dpprof_cuda_alloc((void **)&t32[i], n[i] * sizeof(float));
            if (arc == DPPROF_OK && i != 5) arc = dpprof_cuda_alloc((void **)&t16[i], n[i] * sizeof(dpprof_bf16));
        }
        /* cuDNN's plans for the shape and their workspace (a row says why where there are none) */
        void *cudnn_ws = NULL;
        size_t cudnn_wsb = 0;
        int cudnn_det = 0, cudnn_ok = 0;
        char cudnn_why[160] = "";
        if (arc == DPPROF_OK) {
            cudnn_ok = dpprof_cudnn_attention_plan(sh->B, sh->T, sh->NH, sh->NKV, sh->HS, &cudnn_wsb, &cudnn_det) == DPPROF_OK;
            if (cudnn_ok && cudnn_wsb) cudnn_ok = dpprof_cuda_alloc(&cudnn_ws, cudnn_wsb) == DPPROF_OK;
            snprintf(cudnn_why, sizeof cudnn_why, "%s", cudnn_ok ? "" : dpprof_cuda_last_error());
            if (cudnn_ok) printf("%-24s cuDNN's plans: workspace %.1f MiB, backward %s\n", sh->name, (double)cudnn_wsb / 1048576.0, cudnn_det ? "deterministic" : "not deterministic");
        }
        if (arc == DPPROF_OK) { /* inputs: standard normals (q, k, v, dout), and their bf16 roundings */
            for (i = 0; i < 4; i++) {
                dpprof_init_normal_gpu(t32[i], n[i], 1.0, 1234, (uint64_t)i);
                dpprof_cast_bf16_gpu((dpprof_bf16 *)t16[i], t32[i], n[i]);
            }
            arc = dpprof_cuda_sync();
        }
        for (v = 0; v < AB_NV; v++)
            for (pass = 0; pass < 2; pass++) {
                ab_row *row = &rows[((size_t)s * AB_NV + v) * 2 + pass];
                const ab_variant *va = &ab_variants[v];
                const int bf16 = !strcmp(va->storage, "bf16");
                char label[16];
                const dpprof_cost c = pass ? dpprof_attention_bwd_cost(sh->B, sh->T, sh->NH, sh->NKV, sh->HS, bf16 ? 2 : 4)
                                           : dpprof_attention_fwd_cost(sh->B, sh->T, sh->NH, sh->NKV, sh->HS, bf16 ? 2 : 4);
                row->flops = c.flops, row->bytes = c.bytes;
                snprintf(label, sizeof label, "%s%s%s", va->kernel, va->rows == 128 ? "-128" : va->rows ? "-64" : "", va->wrows == 32 ? "w32" : "");
                if (stop) {
                    row->status = "not_run";
                    snprintf(row->note, sizeof row->note, "an earlier launch failed: the device queue keeps its first error");
                } else if (arc != DPPROF_OK) {
                    row->status = arc == DPPROF_ERR_OOM ? "oom" : "error";
                    snprintf(row->note, sizeof row->note, "%s", dpprof_cuda_last_error());
                } else if (va->rows && !(sh->HS % 2 == 0 && sh->HS <= 128)) {
                    row->status = "skipped";
                    snprintf(row->note, sizeof row->note, "HS %d: the tensor-core kernels take even head sizes up to 128", sh->HS);
                } else if (!strcmp(va->kernel, "cudnn") && !cudnn_ok) {
                    row->status = "skipped";
                    snprintf(row->note, sizeof row->note, "%s", cudnn_why);
                } else if (va->wrows == 32 && sh->HS > 64) {
                    row->status = "skipped";
                    snprintf(row->note, sizeof row->note, "HS %d: 32 rows a warp apply up to head size 64, above it tc-%d's kernels run", sh->HS, va->rows);
                } else {
                    dpprof_cuda_tuning tune;
                    memset(&tune, 0, sizeof tune);
                    tune.attention_simt = va->rows == 0, tune.attention_block = va->rows, tune.attention_warp_rows = va->wrows;
                    dpprof_cuda_set_storage(bf16 ? DPPROF_DTYPE_BF16 : DPPROF_DTYPE_FP32);
                    (void)dpprof_cuda_set_tuning(&tune);
                    if (ab_time(row, pass, repeats, t16, t32, sh, bf16, !strcmp(va->kernel, "cudnn"), cudnn_ws, cudnn_wsb) != DPPROF_OK) stop = 1;
                }
                if (!strcmp(row->status, "ok"))
                    printf("%-24s %-5s %-9s %-4s %10.3f %10.3f %9.1f %6.1f%% %6.1f%%\n", sh->name, va->storage, label, pass ? "bwd" : "fwd", row->ms_med, row->ms_min, row->flops / (row->ms_med * 1e-3) / 1e12,
                           peak32 > 0 ? 100.0 * row->flops / (row->ms_med * 1e-3) / peak32 : 0.0, peak16 > 0 ? 100.0 * row->flops / (row->ms_med * 1e-3) / peak16 : 0.0);
                else printf("%-24s %-5s %-9s %-4s %s: %s\n", sh->name, va->storage, label, pass ? "bwd" : "fwd", row->status, row->note);
                fflush(stdout);
            }
        dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
        (void)dpprof_cuda_set_tuning(NULL);
        for (i = 0; i < 9; i++) dpprof_cuda_release(t32[i]), dpprof_cuda_release(t16[i]);
        dpprof_cuda_release(cudnn_ws);
    }
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    if (out_path) {
        FILE *f = af.f;
        fputs("{\n  \"experiment\": \"attnbench\",\n  \"status\": ", f);
        sweep_json_str(f, stop ? "error" : "ok");
        fprintf(f, ",\n  \"repeats\": %d,\n  \"results\": [", repeats);
        for (s = 0; s < nshape; s++)
            for (v = 0; v < AB_NV; v++)
                for (pass = 0; pass < 2; pass++) {
                    const ab_row *row = &rows[((size_t)s * AB_NV + v) * 2 + pass];
                    const int ok = !strcmp(row->status, "ok");
                    const double rate = ok ? row->flops / (row->ms_med * 1e-3) : NAN, bw = ok ? row->bytes / (row->ms_med * 1e-3) : NAN;
                    fputs(s || v || pass ? ",\n    {\"shape\": " : "\n    {\"shape\": ", f);
                    sweep_json_str(f, shapes[s].name);
                    fprintf(f, ", \"B\": %d, \"T\": %d, \"NH\": %d, \"NKV\": %d, \"HS\": %d, \"storage\": \"%s\", \"kernel\": \"%s\", \"block_rows\": ", shapes[s].B, shapes[s].T,
                            shapes[s].NH, shapes[s].NKV, shapes[s].HS, ab_variants[v].storage, ab_variants[v].kernel);
                    if (ab_variants[v].rows) fprintf(f, "%d", ab_variants[v].rows);
                    else fputs("null", f);
                    fputs(", \"warp_rows\": ", f);
                    if (ab_variants[v].wrows) fprintf(f, "%d", ab_variants[v].wrows);
                    else fputs("null", f);
                    fprintf(f, ", \"pass\": \"%s\", \"status\": ", pass ? "bwd" : "fwd");
                    sweep_json_str(f, row->status);
                    fputs(", \"note\": ", f);
                    if (row->note[0]) sweep_json_str(f, row->note);
                    else fputs("null", f);
                    fputs(", \"ms_median\": ", f), ab_json_num(f, ok ? row->ms_med : NAN);
                    fputs(", \"ms_min\": ", f), ab_json_num(f, ok ? row->ms_min : NAN);
                    fputs(", \"ms_max\": ", f), ab_json_num(f, ok ? row->ms_max : NAN);
                    fputs(", \"flops\": ", f), ab_json_num(f, row->flops);
                    fputs(", \"bytes_analytic\": ", f), ab_json_num(f, row->bytes);
                    fputs(", \"tflops\": ", f), ab_json_num(f, rate / 1e12);
                    fputs(", \"share_of_fp32_peak\": ", f), ab_json_num(f, peak32 > 0 ? rate / peak32 : NAN);
                    fputs(", \"share_of_bf16_peak\": ", f), ab_json_num(f, peak16 > 0 ? rate / peak16 : NAN);
                    fputs(", \"share_of_dram_peak\": ", f), ab_json_num(f, peakdram > 0 ? bw / peakdram : NAN);
                    fputs("}", f);
                }
        fputs("\n  ],\n  \"meta\": {\"dpprof_version\": ", f);
        sweep_json_str(f, DPPROF_VERSION);
        fputs(", \"git_commit\": ", f);
        sweep_json_str(f, DPPROF_GIT_COMMIT);
        fputs(", \"device\": ", f);
        sweep_json_str(f, dev.name);
        fprintf(f, ", \"driver\": %d, \"cuda_runtime\": %d, \"compute_capability\": \"%d.%d\", \"sm_count\": %d, \"peak_fp32_flops\": ", dev.driver_version,
                dev.runtime_version, dev.cc_major, dev.cc_minor, dev.sm_count);
        ab_json_num(f, peak32 > 0 ? peak32 : NAN);
        fputs(", \"peak_bf16_flops\": ", f), ab_json_num(f, peak16 > 0 ? peak16 : NAN);
        fputs(", \"peak_dram_bytes_per_s\": ", f), ab_json_num(f, peakdram > 0 ? peakdram : NAN);
        fprintf(f, ", \"date\": \"%s\", \"note\": \"flops and bytes_analytic are dpprof_attention_fwd_cost / _bwd_cost (causal pairs: 4 HS flops each forward, "
                   "10 HS backward, as flash attention counts; the backward kernels also recompute q.k and dout.v for dq: 14 HS executed); "
                   "peaks from dpprof_device_peaks\"}\n}\n",
                date);
        if (out_commit(&af)) {
            free(rows);
            return EXIT_ERROR;
        }
    }
    free(rows);
    return stop ? EXIT_ERROR : EXIT_OK;
}

static int cmd_devices(void) {
    int count = 0, i, rc = dpprof_cuda_device_count(&count);
    if (rc != DPPROF_OK || count == 0) {
        printf("no GPU visible: %s\n", rc == DPPROF_ERR_NO_CUDA ? "this dpprof was built without CUDA" : rc != DPPROF_OK ? dpprof_cuda_last_error() : "the CUDA runtime sees no device");
        return EXIT_ERROR;
    }
    for (i = 0; i < count; i++) {
        dpprof_device_info d;
        double f32, b16, dram;
        if (dpprof_cuda_device_info(i, &d) != DPPROF_OK) {
            printf("%d: %s\n", i, dpprof_cuda_last_error());
            continue;
        }
        dpprof_device_peaks(&d, &f32, &b16, &dram);
        printf("%d: %s, sm %d.%d, %d SMs, %.1f GiB (%.1f GiB free), driver %d, runtime %d; peaks: fp32 %.1f TFLOP/s, bf16 %.1f TFLOP/s, dram %.2f TB/s\n", i, d.name,
               d.cc_major, d.cc_minor, d.sm_count, (double)d.total_bytes / 1073741824.0, (double)d.free_bytes / 1073741824.0, d.driver_version, d.runtime_version,
               f32 / 1e12, b16 / 1e12, dram / 1e12);
    }
    return EXIT_OK;
}

/* a command that takes no arguments (presets, devices, version): 1 where argv has none past it, else -1 after
   printing its usage (--help, -h: exit 0) or saying what is extra (exit 2); *rc is the exit code */
static int no_args(int argc, char **argv, const char *what, int *rc) {
    if (argc < 3) return 1;
    if (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
        printf("usage: %s %s (no options)\n\n%s\n", prog_name, argv[1], what);
        *rc = EXIT_OK;
    } else *rc = usage_error(strncmp(argv[2], "--", 2) ? "%s: unexpected argument '%s' (it takes none)" : "%s: unknown option '%s' (it takes none)", argv[1], argv[2]);
    return -1;
}

static int dispatch(int argc, char **argv) {
    int rc = EXIT_OK;
    if (argc < 2) {
        help_main();
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) { help_main(); return EXIT_OK; }
    if ((!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) && no_args(argc, argv, "prints the version, its commit and what the build has: CUDA, NCCL, MPI", &rc) < 0) return rc;
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
#ifdef DPPROF_MPI
        const char *mpi = "MPI";
#else
        const char *mpi = "no MPI: ranks > 1 on the dry backend only";
#endif
        const int dnn = dpprof_cudnn_available();
        char cudnn[48] = "";
        if (DPPROF__CUDA) snprintf(cudnn, sizeof cudnn, dnn ? ", cuDNN %d.%d.%d" : ", no cuDNN attention", dnn / 10000, dnn / 100 % 100, dnn % 100);
        printf("dpprof %s (%s; %s%s, %s)\n", DPPROF_VERSION, DPPROF_GIT_COMMIT, !DPPROF__CUDA ? "no CUDA" : dpprof_nccl_available() ? "CUDA, NCCL" : "CUDA without NCCL", cudnn, mpi);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(argv[1], "plot")) return cmd_plot(argc - 2, argv + 2);
    if (!strcmp(argv[1], "presets")) return no_args(argc, argv, "lists the model presets and their shapes", &rc) < 0 ? rc : cmd_presets();
    if (!strcmp(argv[1], "devices")) return no_args(argc, argv, "lists the GPUs the cuda backend sees, with their peaks (exit 1 when none)", &rc) < 0 ? rc : cmd_devices();
    if (!strcmp(argv[1], "attnbench")) return cmd_attnbench(argc - 2, argv + 2);
    if (!strcmp(argv[1], "epsilon")) return cmd_epsilon(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sweep")) return cmd_sweep(argc, argv); /* the whole argv: argv[0] is the fallback binary */
    /* tables: another name for report, which writes figures and tables together */
    if (!strcmp(argv[1], "report") || !strcmp(argv[1], "tables")) return cmd_report(argc - 2, argv + 2);
    return usage_error("unknown command '%s'%s", argv[1], "");
}

/* launched by mpirun (Open MPI's or a PMI launcher's variables), a build with MPI joins the job; otherwise it
   never touches MPI, so the single-process program needs no launcher */
int main(int argc, char **argv) {
#ifdef DPPROF_MPI
    int code, joined = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
    if (joined) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &mpi_world);
    }
    if (mpi_world > 1 && (argc < 2 || strcmp(argv[1], "run") != 0)) {
        if (!mpi_rank) fprintf(stderr, "%s: only 'dpprof run' runs as an MPI job of %d processes (give mpirun -np 1 or no mpirun for '%s')\n", prog, mpi_world, argc > 1 ? argv[1] : "");
        code = EXIT_USAGE;
    } else code = dispatch(argc, argv);
    if (mpi_world > 1 && !mpi_agreed) mpi_agree(0); /* stopped before the run: the other ranks must not wait */
    if (joined) MPI_Finalize();
    return code;
#else
    return dispatch(argc, argv);
#endif
}
