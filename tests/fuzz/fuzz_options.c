/* tests/fuzz/fuzz_options.c - libFuzzer harness for `dpprof run`'s option parser and the configuration
 * resolution (make fuzz; alone: build/fuzz/fuzz_options -dict=tests/fuzz/options.dict
 * tests/fuzz/corpus_options). the input is split into argv words at NUL and newline bytes (at most
 * 64 words; --help and -h, which print and exit, are dropped) and goes through dpprof_cli.h's parse_run(),
 * then dpprof_config_resolve() (with --target-epsilon's noise search, one input in 32).
 * oracle: no crash and no sanitizer report; a refusal prints one message starting "dpprof: "; an
 * accepted configuration satisfies every invariant that dpprof_config_resolve documents (checked
 * here independently, abort() when one fails); it then runs one step on the dry backend (sizes
 * capped so that one input stays fast): no crash, and the profile is consistent (peak >= live at
 * the end, live = the sum of the live table, every event's live = the running sum of the bytes).
 * small configurations also run the same step on the cpu backend, which must see the same memory,
 * event for event (dpprof_prof_same_memory). --data is validated but not read (a fuzzed path could
 * name a fifo or a device); aborting is fine here: this is the test harness, not library code. */
#define _XOPEN_SOURCE 700
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "../../dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "../../dpprof_tools.h"
#include "../../dpprof_cli.h"

static FILE *fuzz_real_stderr; /* the real stderr while dpprof's is captured, else NULL */

#define FUZZ_ASSERT(c)                                                          \
    do {                                                                        \
        if (!(c)) {                                                             \
            fprintf(fuzz_real_stderr ? fuzz_real_stderr : stderr,               \
                    "fuzz_options.c:%d: invariant failed: %s\n", __LINE__, #c); \
            abort();                                                            \
        }                                                                       \
    } while (0)

#define FUZZ_MAX_WORDS 64

/* FUZZ_STATS=1 in the environment: how far the inputs got, printed at exit (is the oracle reached?) */
static long long fuzz_n[6];
static const char *const fuzz_stage[6] = {"inputs", "parsed", "resolved", "dry sessions", "dry steps ok", "cpu compared"};
static void fuzz_stats(void) {
    int k;
    for (k = 0; k < 6; k++) fprintf(stderr, "fuzz_options: %-13s %lld\n", fuzz_stage[k], fuzz_n[k]);
}

/* stderr into memory while dpprof runs, so that its messages can be checked (and the run stays quiet);
   sanitizer reports are written to fd 2 directly and still show */
static char *fuzz_msg;
static size_t fuzz_msg_len;

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

static int finite_pos(double x) { return x == x && x > 0 && x <= DBL_MAX; }

/* the documented result of dpprof_config_resolve, re-checked from the outside */
static void check_resolved(const dpprof_config *in, const dpprof_config *c, const dpprof_shape *s) {
    dpprof_shape p;
    FUZZ_ASSERT(c->preset != NULL && dpprof_preset_shape(c->preset, &p) == DPPROF_OK);
    /* a preset given by an alias (its Hugging Face name) resolves to the preset's own name */
    FUZZ_ASSERT(in->preset == NULL || (dpprof_preset_canonical(in->preset) && !strcmp(c->preset, dpprof_preset_canonical(in->preset))));
    /* sizes: the given one, else the preset's, all in range */
    FUZZ_ASSERT(s->V == (in->vocab ? in->vocab : p.V) && s->V >= 2 && s->V <= DPPROF__DIM_MAX);
    FUZZ_ASSERT(s->C == (in->hidden ? in->hidden : p.C) && s->C >= 2 && s->C <= DPPROF__DIM_MAX);
    FUZZ_ASSERT(s->L == (in->layers ? in->layers : p.L) && s->L >= 1 && s->L <= 4096);
    FUZZ_ASSERT(s->NH == (in->heads ? in->heads : p.NH) && s->NH >= 1);
    FUZZ_ASSERT(s->NKV == (in->kv_heads ? in->kv_heads : (in->heads ? in->heads : p.NKV)) && s->NKV >= 1);
    FUZZ_ASSERT(s->F == (in->ffn ? in->ffn : p.F) && s->F >= 1 && s->F <= DPPROF__DIM_MAX);
    /* heads divide hidden, kv heads divide heads, an even head size of at most 256 */
    FUZZ_ASSERT(s->C % s->NH == 0 && s->NH % s->NKV == 0 && s->NKV <= s->NH);
    FUZZ_ASSERT(s->HS == s->C / s->NH && s->HS >= 2 && s->HS % 2 == 0 && s->HS <= 256);
    FUZZ_ASSERT(s->NH * s->HS == s->C);
    FUZZ_ASSERT(finite_pos(s->rope_theta) && (in->rope_theta == 0 || s->rope_theta == in->rope_theta));
    FUZZ_ASSERT(s->norm_eps > 0 && s->norm_eps < 1 && (in->norm_eps == 0 || s->norm_eps == in->norm_eps));
    /* task */
    FUZZ_ASSERT(c->seq >= 1 && c->seq <= DPPROF__DIM_MAX && (in->seq == 0 || c->seq == in->seq));
    FUZZ_ASSERT(c->task == DPPROF_TASK_LM || c->task == DPPROF_TASK_CLS);
    if (c->task == DPPROF_TASK_CLS) FUZZ_ASSERT(c->classes >= 2 && s->K == c->classes && c->classes <= DPPROF__DIM_MAX);
    else FUZZ_ASSERT(c->classes == 0 && s->K == 0);
    if (c->data_path) FUZZ_ASSERT(s->V >= 256);
    /* training */
    FUZZ_ASSERT(c->algo >= DPPROF_ALGO_VANILLA && c->algo < DPPROF_ALGO_COUNT);
    FUZZ_ASSERT(c->batch >= 1 && c->batch <= DPPROF__DIM_MAX && (in->batch == 0 || c->batch == in->batch));
    FUZZ_ASSERT(c->physical_batch >= 1 && c->physical_batch <= c->batch);
    FUZZ_ASSERT((long long)c->physical_batch * c->seq <= INT32_MAX);
    FUZZ_ASSERT(c->steps >= 1 && c->steps <= 100000000 && c->warmup >= 0 && c->warmup <= 100000000);
    FUZZ_ASSERT(c->optimizer == DPPROF_OPT_ADAM || c->optimizer == DPPROF_OPT_SGD);
    FUZZ_ASSERT(finite_pos(c->lr) && c->lr <= 1e6);
    FUZZ_ASSERT(c->weight_decay >= 0 && c->weight_decay <= DBL_MAX);
    FUZZ_ASSERT(c->dtype == DPPROF_DTYPE_FP32 || c->dtype == DPPROF_DTYPE_BF16);
    FUZZ_ASSERT((int)c->backend >= DPPROF_BACKEND_AUTO && c->backend <= DPPROF_BACKEND_DRY);
    FUZZ_ASSERT(finite_pos(c->init_std));
    FUZZ_ASSERT(c->memory_limit >= 0);
    /* dp-sgd */
    FUZZ_ASSERT(c->sigma >= 0 && c->sigma <= DBL_MAX);
    if (c->algo == DPPROF_ALGO_VANILLA) {
        FUZZ_ASSERT(c->sigma == 0 && c->max_grad_norm == 0 && !c->per_layer_clipping && c->delta == 0);
    } else {
        FUZZ_ASSERT(finite_pos(c->max_grad_norm));
        FUZZ_ASSERT(c->delta > 0 && c->delta < 1);
    }
    FUZZ_ASSERT(c->dataset_size >= 0 && c->dataset_size <= INT32_MAX);
    if (c->poisson) FUZZ_ASSERT(c->dataset_size > 0);
    if (c->dataset_size) FUZZ_ASSERT(c->dataset_size >= c->batch);
    /* lora */
    FUZZ_ASSERT(c->lora_rank >= 0);
    if (c->lora_rank) {
        FUZZ_ASSERT(c->lora_targets != NULL && finite_pos(c->lora_alpha));
        FUZZ_ASSERT(c->lora_rank < s->C); /* every projection has hidden on one side */
    } else {
        FUZZ_ASSERT(c->lora_alpha == 0 && c->lora_targets == NULL);
    }
}

/* the profile's own bookkeeping agrees with itself */
static void check_prof(const dpprof_prof *p) {
    size_t i;
    int64_t sum = 0, run = 0;
    FUZZ_ASSERT(p->live_bytes >= 0 && p->peak_bytes >= p->live_bytes);
    for (i = 0; i < p->n_live; i++) sum += p->live[i].bytes;
    FUZZ_ASSERT(sum == p->live_bytes);
    for (i = 0; i < p->n_events; i++) {
        run += p->events[i].bytes;
        FUZZ_ASSERT(p->events[i].live == run && run >= 0 && run <= p->peak_bytes);
    }
    if (p->flags & DPPROF_PROF_NO_EVENTS) /* --timeline none: no log kept, every event counted */
        FUZZ_ASSERT(p->n_events == 0 && p->n_events_seen == (size_t)(p->n_allocs + p->n_frees) && (p->n_events_seen == 0 || p->peak_event < p->n_events_seen));
    else {
        if (!p->failed) FUZZ_ASSERT(run == p->live_bytes);
        if (p->n_events && !p->failed) FUZZ_ASSERT(p->events[p->peak_event].live == p->peak_bytes);
    }
    for (i = 0; i < p->n_phases; i++) FUZZ_ASSERT(p->phases[i].bytes_peak <= p->peak_bytes);
}

/* one step of cfg on the given backend; 1 if the session existed (its profile checked), 0 if refused */
static int one_step(const dpprof_config *cfg, int backend, dpprof_session **out, int *step_rc) {
    dpprof_config c = *cfg;
    dpprof_session *s = NULL;
    int rc;
    c.backend = (dpprof_backend)backend;
    c.steps = 1;
    c.warmup = 0;
    c.data_path = NULL;
    rc = dpprof_session_create(&c, &s);
    *out = s;
    *step_rc = rc;
    if (rc != DPPROF_OK) {
        /* refused, or a model that does not fit: an oom session comes back for its report */
        FUZZ_ASSERT(rc < 0 && dpprof_last_error()[0] != '\0');
        if (s) check_prof(dpprof_session_prof(s));
        return s != NULL;
    }
    FUZZ_ASSERT(s != NULL);
    rc = dpprof_session_step(s);
    *step_rc = rc;
    if (rc != DPPROF_OK) FUZZ_ASSERT(rc < 0 && dpprof_last_error()[0] != '\0');
    else FUZZ_ASSERT(dpprof_session_steps_done(s) == 1);
    check_prof(dpprof_session_prof(s));
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf, *argv[FUZZ_MAX_WORDS + 1];
    int argc = 0, rc;
    size_t i, start;
    run_opts o;
    dpprof_config resolved;
    dpprof_shape shape;
    static int stats_init;

    if (!stats_init) {
        stats_init = 1;
        if (getenv("FUZZ_STATS")) atexit(fuzz_stats);
    }
    fuzz_n[0]++;

    /* words at NUL and newline bytes: a trailing separator makes no empty last word, but an
       empty word inside is kept (it is an argument like any other) */
    buf = (char *)malloc(size + 1);
    FUZZ_ASSERT(buf != NULL);
    memcpy(buf, data, size);
    buf[size] = 0;
    for (i = 0, start = 0; i <= size && argc < FUZZ_MAX_WORDS; i++) {
        if (i < size && buf[i] != '\n' && buf[i] != 0) continue;
        buf[i] = 0;
        if (i == size && start == size) break;
        if (strcmp(buf + start, "--help") && strcmp(buf + start, "-h")) argv[argc++] = buf + start;
        start = i + 1;
    }
    argv[argc] = NULL;

    fuzz_capture();
    rc = parse_run(argc, argv, &o);
    fflush(stderr);
    if (rc != EXIT_OK) {
        /* refused with a message; then the options that parse after those kept so far, in order, so
           that most inputs still reach the resolution and a step (parse_run checks each option alone,
           except the pairs that force opposite kernels, which contradict each other: a later one of a
           pair is dropped); what the kept prefix accepts, it accepts whole */
        char *kept[FUZZ_MAX_WORDS + 1];
        int k = 0, j;
        FUZZ_ASSERT(rc == EXIT_USAGE);
        FUZZ_ASSERT(fuzz_msg_len > 8 && !strncmp(fuzz_msg, "dpprof: ", 8));
        for (j = 0; j < argc;) {
            int w = j + 1 < argc ? 2 : 1;
            kept[k] = argv[j];
            if (w == 2) kept[k + 1] = argv[j + 1];
            rewind(stderr);
            if (parse_run(k + 1, kept, &o) == EXIT_OK) w = 1; /* a flag: --quiet, --poisson */
            else if (w == 1 || (rewind(stderr), parse_run(k + 2, kept, &o)) != EXIT_OK) {
                j++;
                continue;
            }
            while (w--) kept[k++] = argv[j++];
        }
        kept[k] = NULL;
        fflush(stderr);
        rewind(stderr);
        rc = parse_run(k, kept, &o);
        fflush(stderr);
        FUZZ_ASSERT(rc == EXIT_OK);
    }
    fuzz_n[1]++;
    FUZZ_ASSERT(fuzz_msg_len == 0);
    FUZZ_ASSERT(o.experiment != NULL && o.cfg.target_epsilon >= 0);
    /* --target-epsilon: dpprof_config_resolve searches the noise (a fraction of a second under rdp, seconds under
       pld): one input in 32 searches, under rdp and over at most 1e5 steps; the rest run without the target */
    if (o.cfg.target_epsilon > 0 && (o.cfg.accountant != DPPROF_ACCOUNTANT_RDP || (long long)o.cfg.warmup + (o.cfg.steps ? o.cfg.steps : 3) > 100000 || size % 32))
        o.cfg.target_epsilon = 0;
    rc = dpprof_config_resolve(&o.cfg, &resolved, &shape);
    if (rc != DPPROF_OK) {
        FUZZ_ASSERT(rc < 0 && dpprof_last_error()[0] != '\0');
        fuzz_release();
        free(buf);
        return 0;
    }
    fuzz_n[2]++;
    check_resolved(&o.cfg, &resolved, &shape);
    /* resolving is idempotent: the resolved configuration resolves to itself */
    {
        dpprof_config again;
        dpprof_shape sh2;
        FUZZ_ASSERT(dpprof_config_resolve(&resolved, &again, &sh2) == DPPROF_OK);
        FUZZ_ASSERT(memcmp(&sh2, &shape, sizeof sh2) == 0);
        FUZZ_ASSERT(again.preset == resolved.preset && again.seq == resolved.seq && again.task == resolved.task && again.classes == resolved.classes);
        FUZZ_ASSERT(again.algo == resolved.algo && again.batch == resolved.batch && again.physical_batch == resolved.physical_batch);
        FUZZ_ASSERT(again.steps == resolved.steps && again.lr == resolved.lr && again.optimizer == resolved.optimizer && again.init_std == resolved.init_std);
        FUZZ_ASSERT(again.max_grad_norm == resolved.max_grad_norm && again.delta == resolved.delta && again.sigma == resolved.sigma);
        FUZZ_ASSERT(again.lora_rank == resolved.lora_rank && again.lora_alpha == resolved.lora_alpha && again.lora_targets == resolved.lora_targets);
    }
    if (o.cfg.target_epsilon > 0) { /* as cmd_run applies it: the noise found, the target spent */
        FUZZ_ASSERT(resolved.sigma == resolved.sigma && resolved.sigma > 0 && resolved.sigma <= DBL_MAX && resolved.target_epsilon == 0);
        o.cfg.sigma = resolved.sigma;
        o.cfg.target_epsilon = 0;
    }
    /* one dry step, when it stays fast: its cost is layers x physical batches, plus the batch (the
       dataset for poisson) to draw the sample ids */
    {
        long long chunks = ((long long)resolved.batch + resolved.physical_batch - 1) / resolved.physical_batch;
        if (resolved.poisson) chunks = (4LL * resolved.batch + 64 + resolved.physical_batch - 1) / resolved.physical_batch;
        if (shape.L <= 64 && chunks <= 64 && chunks * shape.L <= 512 && resolved.batch <= 65536 && (!resolved.poisson || resolved.dataset_size <= 100000)) {
            dpprof_session *dry = NULL, *cpu = NULL;
            int dry_rc, cpu_rc, have_dry;
            double params = (double)shape.V * shape.C + (double)shape.L * (2.0 * shape.C * shape.C + 3.0 * shape.C * shape.F) + (double)shape.C * (shape.K ? shape.K : shape.V);
            have_dry = one_step(&o.cfg, DPPROF_BACKEND_DRY, &dry, &dry_rc);
            fuzz_n[3] += have_dry;
            fuzz_n[4] += have_dry && dry_rc == DPPROF_OK;
            /* small enough to compute: the cpu backend allocates the same bytes, event for event */
            if (have_dry && dry_rc == DPPROF_OK && o.cfg.dtype != DPPROF_DTYPE_BF16 && params <= 300000 && (double)resolved.seq * resolved.batch <= 64 &&
                params * resolved.seq * resolved.batch <= 1.5e6 && (double)resolved.seq * resolved.seq * resolved.batch <= 16384) {
                const char *why = NULL;
                one_step(&o.cfg, DPPROF_BACKEND_CPU, &cpu, &cpu_rc);
                fuzz_n[5]++;
                FUZZ_ASSERT(cpu != NULL);
                /* the cpu step may stop at a non-finite loss, after the same memory history */
                FUZZ_ASSERT(cpu_rc == DPPROF_OK || cpu_rc == DPPROF_ERR_NUMERIC);
                if (!dpprof_prof_same_memory(dpprof_session_prof(dry), dpprof_session_prof(cpu), &why)) {
                    fprintf(fuzz_real_stderr, "cpu and dry differ: %s\n", why);
                    FUZZ_ASSERT(0);
                }
            }
            dpprof_session_destroy(cpu);
            dpprof_session_destroy(dry);
        }
    }
    fuzz_release();
    free(buf);
    return 0;
}
