/* tests/test_engine.c - the engine's memory report and schedule: the report adds up, cpu and dry
   profiles are byte-identical, physical batches sum to the logical batch, runs are deterministic,
   dry answers for Llama-3.1-8B at T=16384 in under 2 s, errors come back as exact codes; under --checkpoint
   layers: cpu = dry for every algorithm, the bytes the forward keeps, lower peaks, the recompute phase's
   records, json and cost.
   a custom allocator (the DPPROF_MALLOC override) lets it provoke out-of-memory. run by make test. */
#include <stdlib.h>
#include <string.h>
static size_t test_alloc_budget = (size_t)-1; /* bytes the next mallocs may still take */
static void *test_malloc(size_t n) {
    if (n > test_alloc_budget) return NULL;
    test_alloc_budget -= test_alloc_budget == (size_t)-1 ? 0 : n;
    return malloc(n);
}
#define DPPROF_MALLOC(n) test_malloc(n)
#define DPPROF_REALLOC(p, n) realloc(p, n)
#define DPPROF_FREE(p) free(p)
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"
#include "test.h"

#include <time.h>

static int tie; /* the cases in flight tie the lm head to the embedding (tie_embeddings = 1) */

static dpprof_config tiny(dpprof_backend be, dpprof_task task) {
    dpprof_config c;
    memset(&c, 0, sizeof c);
    c.preset = "tiny";
    c.tie_embeddings = tie;
    c.seq = 16;
    c.batch = 5;
    c.physical_batch = 2; /* 2 + 2 + 1: an uneven split */
    c.steps = 2;
    c.task = task;
    c.backend = be;
    c.seed = 7;
    return c;
}

/* the split of the peak by category and by module each sums to it */
static void peak_adds_up(const dpprof_prof *p, const char *name) {
    int64_t sum = 0;
    int k;
    for (k = 0; k < DPPROF_CAT_COUNT; k++) sum += p->peak_by_cat[k];
    CHECK(sum == p->peak_bytes, "%s: categories at the peak sum to the peak (%lld bytes)", name, (long long)p->peak_bytes);
    sum = 0;
    for (k = 0; k < DPPROF_MOD_COUNT; k++) sum += p->peak_by_mod[k];
    CHECK(sum == p->peak_bytes, "%s: modules at the peak sum to the peak", name);
}

static void check_report_adds_up(dpprof_task task, const char *name) {
    dpprof_config c = tiny(DPPROF_BACKEND_CPU, task);
    dpprof_session *s;
    const dpprof_prof *p;
    int64_t params, trainable;
    c.optimizer = DPPROF_OPT_ADAM;
    CHECK(dpprof_session_create(&c, &s) == DPPROF_OK && dpprof_session_run(s) == DPPROF_OK, "%s: tiny cpu run", name);
    p = dpprof_session_prof(s);
    peak_adds_up(p, name);
    params = dpprof_session_param_elems(s, 0);
    trainable = dpprof_session_param_elems(s, 1);
    CHECK(p->peak_by_cat[DPPROF_CAT_MODEL_PARAMETERS] == 4 * params, "%s: parameter bytes = 4 x %lld parameters", name, (long long)params);
    CHECK(p->peak_by_cat[DPPROF_CAT_OPTIMIZER_STATES] == 8 * trainable, "%s: adam states = 8 x %lld trainable", name, (long long)trainable);
    CHECK(p->peak_by_cat[DPPROF_CAT_GRADIENTS] == 4 * trainable, "%s: gradients = 4 x trainable", name);
    CHECK(p->live_bytes == 16 * params + (int64_t)DPPROF_WORKSPACE_BYTES, "%s: after the run only parameters, gradients, adam states and the workspace are live", name);
    CHECK(p->peak_by_cat[DPPROF_CAT_WORKSPACE] == (int64_t)DPPROF_WORKSPACE_BYTES, "%s: the workspace (cuBLAS + kernel scratch) is %lld bytes on every backend", name, (long long)DPPROF_WORKSPACE_BYTES);
    /* the tiny preset's count, by hand: embedding + 2 layers + final norm + head */
    {
        int64_t V = 256, C = 64, F = 176, layer = 2 * C + C * C + 2 * 32 * C + C * C + 3 * C * F;
        int64_t head = task == DPPROF_TASK_LM ? (tie ? 0 : V * C) : 2 * C;
        CHECK(params == V * C + 2 * layer + C + head, "%s: parameter count %lld matches the architecture", name, (long long)params);
    }
    dpprof_session_destroy(s);
}

/* c on the cpu and on the dry backend: byte-identical memory histories and the same analytic cost per phase
   record; returns the cpu run's recompute records (--checkpoint layers), or -1 when a run failed */
static int cpu_equals_dry(dpprof_config c1, const char *name) {
    dpprof_config c2 = c1;
    dpprof_session *a = NULL, *b = NULL;
    const char *why = "";
    int rec = -1, rc;
    c1.backend = DPPROF_BACKEND_CPU;
    c2.backend = DPPROF_BACKEND_DRY;
    rc = dpprof_session_create(&c1, &a);
    if (rc == DPPROF_OK) rc = dpprof_session_run(a);
    CHECK(rc == DPPROF_OK, "%s: cpu run (%s)", name, rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) rc = dpprof_session_create(&c2, &b);
    if (rc == DPPROF_OK) rc = dpprof_session_run(b);
    CHECK(rc == DPPROF_OK, "%s: dry run (%s)", name, rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        const dpprof_prof *pa = dpprof_session_prof(a), *pb = dpprof_session_prof(b);
        size_t i;
        int same = pa->n_phases == pb->n_phases;
        CHECK(dpprof_prof_same_memory(pa, pb, &why), "%s: cpu and dry profiles are byte-identical (%zu events; differs in: %s)", name, pa->n_events, why);
        for (i = 0, rec = 0; same && i < pa->n_phases; i++) {
            same = pa->phases[i].flops == pb->phases[i].flops && pa->phases[i].bytes_analytic == pb->phases[i].bytes_analytic;
            rec += pa->phases[i].phase == DPPROF_PHASE_RECOMPUTE;
        }
        CHECK(same, "%s: cpu and dry charge the same analytic flops and bytes to every phase", name);
    }
    dpprof_session_destroy(a);
    dpprof_session_destroy(b);
    return rec;
}

static void check_cpu_equals_dry(dpprof_task task, const char *name, int algo) {
    dpprof_config c = tiny(DPPROF_BACKEND_CPU, task);
    c.algo = (dpprof_algo)algo;
    (void)cpu_equals_dry(c, name);
}

/* one sgd step with lr 1 moves the weights by exactly the gradient of the mean loss */
static int step_params(int b, dpprof_real **out, size_t *n) {
    dpprof_config c = tiny(DPPROF_BACKEND_CPU, DPPROF_TASK_LM);
    dpprof_session *s;
    int i;
    size_t off = 0;
    c.batch = 8;
    c.physical_batch = b;
    c.steps = 1;
    c.optimizer = DPPROF_OPT_SGD;
    c.lr = 1.0;
    if (dpprof_session_create(&c, &s) != DPPROF_OK || dpprof_session_run(s) != DPPROF_OK) return -1;
    *n = (size_t)dpprof_session_param_elems(s, 0);
    *out = (dpprof_real *)malloc(sizeof(dpprof_real) * *n);
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        dpprof_param *p = dpprof_session_param(s, i);
        memcpy(*out + off, p->w.data, sizeof(dpprof_real) * (size_t)p->w.n);
        off += (size_t)p->w.n;
    }
    dpprof_session_destroy(s);
    return 0;
}

static void check_physical_split(void) {
    dpprof_real *ref, *x;
    size_t n, m, i;
    int splits[] = {4, 2, 1}, k;
    dpprof_config c = tiny(DPPROF_BACKEND_CPU, DPPROF_TASK_LM);
    dpprof_session *s;
    double maxd = 0, maxg = 0;
    CHECK(step_params(8, &ref, &n) == 0, "split: 1 x 8 step");
    /* the init, to turn moved weights back into the gradient */
    c.steps = 1;
    dpprof_session_create(&c, &s);
    for (k = 0; k < 3; k++) {
        size_t off = 0;
        int j;
        maxd = maxg = 0;
        CHECK(step_params(splits[k], &x, &m) == 0 && m == n, "split: %d x %d step", 8 / splits[k], splits[k]);
        for (j = 0; j < dpprof_session_param_count(s); j++) {
            dpprof_param *p = dpprof_session_param(s, j);
            for (i = 0; i < (size_t)p->w.n; i++, off++) {
                double g = (double)((dpprof_real *)p->w.data)[i] - ref[off];
                double d = fabs((double)x[off] - ref[off]);
                if (fabs(g) > maxg) maxg = fabs(g);
                if (d > maxd) maxd = d;
            }
        }
        CHECK(maxd <= 1e-6 * maxg, "the %d x %d update equals the 1 x 8 update: max difference %.3g, max |gradient| %.3g (tolerance 1e-6 relative)", 8 / splits[k], splits[k], maxd, maxg);
        free(x);
    }
    dpprof_session_destroy(s);
    free(ref);
}

/* dpprof_session_op_costs: every op of the steps once, by name, on the cpu and on dry alike; the flops add up to
   the step phases' (an op inside another is part of it: no flop counted twice) */
static void check_op_costs(void) {
    int a;
    for (a = DPPROF_ALGO_VANILLA; a <= DPPROF_ALGO_AUTO; a++) {
        dpprof_op_cost oc[2][DPPROF_OP_COST_MAX];
        int n[2] = {0, 0}, b, i, same = 1;
        double fl[2] = {0, 0}, ph[2] = {0, 0};
        for (b = 0; b < 2; b++) {
            dpprof_config c = tiny(b ? DPPROF_BACKEND_DRY : DPPROF_BACKEND_CPU, DPPROF_TASK_LM);
            dpprof_session *s = NULL;
            size_t e;
            c.algo = (dpprof_algo)a;
            c.sigma = a == DPPROF_ALGO_VANILLA ? 0 : 1;
            c.batch = 6, c.physical_batch = 4, c.steps = 2;
            if (dpprof_session_create(&c, &s) != DPPROF_OK || dpprof_session_run(s) != DPPROF_OK) {
                CHECK(0, "op costs %s: the run (%s)", dpprof_algo_name(a), dpprof_last_error());
                dpprof_session_destroy(s);
                return;
            }
            n[b] = dpprof_session_op_costs(s, oc[b], DPPROF_OP_COST_MAX);
            for (i = 0; i < n[b]; i++) fl[b] += oc[b][i].flops;
            for (e = 0; e < dpprof_session_prof(s)->n_phases; e++)
                if (dpprof_session_prof(s)->phases[e].phase >= DPPROF_PHASE_FORWARD) ph[b] += dpprof_session_prof(s)->phases[e].flops;
            dpprof_session_destroy(s);
        }
        for (i = 0; i < n[0] && n[0] == n[1]; i++)
            same &= !strcmp(oc[0][i].name, oc[1][i].name) && oc[0][i].count == oc[1][i].count && oc[0][i].flops == oc[1][i].flops && oc[0][i].bytes == oc[1][i].bytes;
        CHECK(n[0] > 5 && n[0] == n[1] && same, "op costs %s: the cpu's and dry's ops the same, by name, count, flops and bytes (%d names)", dpprof_algo_name(a), n[0]);
        CHECK(fl[0] > 0 && fl[0] == ph[0] && fl[1] == ph[1], "op costs %s: the ops' flops are the step phases' (%.17g, %.17g)", dpprof_algo_name(a), fl[0], ph[0]);
    }
}

static void check_determinism(void) {
    dpprof_config c = tiny(DPPROF_BACKEND_CPU, DPPROF_TASK_CLS);
    dpprof_session *a, *b;
    int i, same = 1;
    dpprof_session_create(&c, &a);
    dpprof_session_create(&c, &b);
    dpprof_session_run(a);
    dpprof_session_run(b);
    for (i = 0; i < 2; i++) same &= memcmp(&(double){dpprof_session_step_loss(a, i)}, &(double){dpprof_session_step_loss(b, i)}, sizeof(double)) == 0;
    for (i = 0; i < dpprof_session_param_count(a); i++)
        same &= memcmp(dpprof_session_param(a, i)->w.data, dpprof_session_param(b, i)->w.data, (size_t)dpprof_session_param(a, i)->w.n * sizeof(dpprof_real)) == 0;
    CHECK(same, "same configuration and seed: bitwise-identical losses and weights");
    dpprof_session_destroy(b);
    c.seed = 8;
    dpprof_session_create(&c, &b);
    dpprof_session_run(b);
    CHECK(dpprof_session_step_loss(a, 0) != dpprof_session_step_loss(b, 0), "another seed gives another run");
    dpprof_session_destroy(a);
    dpprof_session_destroy(b);
}

static void check_dry_large(void) {
    dpprof_config c;
    dpprof_session *s;
    clock_t t0 = clock();
    double sec;
    const dpprof_prof *p;
    memset(&c, 0, sizeof c);
    c.preset = "llama-3.1-8b";
    c.seq = 16384;
    c.batch = 1;
    c.steps = 2;
    c.backend = DPPROF_BACKEND_DRY;
    CHECK(dpprof_session_create(&c, &s) == DPPROF_OK && dpprof_session_run(s) == DPPROF_OK, "dry: llama-3.1-8b, T=16384, B=1");
    sec = (double)(clock() - t0) / CLOCKS_PER_SEC;
    p = dpprof_session_prof(s);
    CHECK(sec < 2.0, "dry: answered in %.3f s (< 2 s)", sec);
    CHECK(p->peak_by_cat[DPPROF_CAT_MODEL_PARAMETERS] == 4 * dpprof_session_param_elems(s, 0) && dpprof_session_param_elems(s, 0) == INT64_C(8030261248),
          "dry: llama-3.1-8b has 8030261248 parameters with an untied head (%lld)", (long long)dpprof_session_param_elems(s, 0));
    /* the head's logits dominate at this length: (T, V) floats */
    CHECK(p->peak_bytes > (int64_t)16384 * 128256 * 4, "dry: the peak (%.1f GiB) holds the (T, V) logits", (double)p->peak_bytes / 1073741824.0);
    dpprof_session_destroy(s);
}

/* vanilla activations are linear in the batch: exactly twice the bytes at twice the batch */
static void check_activation_scaling(void) {
    int64_t act[2];
    int k;
    for (k = 0; k < 2; k++) {
        dpprof_config c;
        dpprof_session *s;
        memset(&c, 0, sizeof c);
        c.preset = "llama-3.2-1b";
        c.seq = 512;
        c.batch = 4 << k;
        c.steps = 1;
        c.backend = DPPROF_BACKEND_DRY;
        dpprof_session_create(&c, &s);
        dpprof_session_run(s);
        act[k] = dpprof_session_prof(s)->peak_by_cat[DPPROF_CAT_ACTIVATIONS] + dpprof_session_prof(s)->peak_by_cat[DPPROF_CAT_DATA];
        dpprof_session_destroy(s);
    }
    CHECK(act[1] == 2 * act[0], "dry: activations at the peak double with the batch (%lld -> %lld bytes)", (long long)act[0], (long long)act[1]);
}

/* ---- --checkpoint layers ---------------------------------------------------------------------------- */
static const int ckpt_algos[] = {DPPROF_ALGO_VANILLA, DPPROF_ALGO_PERSAMPLE, DPPROF_ALGO_GHOST, DPPROF_ALGO_GHOST_BK, DPPROF_ALGO_FLASH, DPPROF_ALGO_FLASH_BK, DPPROF_ALGO_AUTO};
#define N_CKPT_ALGOS ((int)(sizeof ckpt_algos / sizeof ckpt_algos[0]))

/* tiny, algo (dp with noise), lora on q, v and down or not, checkpointing or not */
static dpprof_config tiny_ckpt(dpprof_backend be, dpprof_task task, int algo, int lora, int ckpt) {
    dpprof_config c = tiny(be, task);
    c.algo = (dpprof_algo)algo;
    if (algo != DPPROF_ALGO_VANILLA) c.sigma = 0.5;
    if (lora) c.lora_rank = 4, c.lora_targets = "q,v,down";
    c.checkpoint = ckpt ? DPPROF_CHECKPOINT_LAYERS : DPPROF_CHECKPOINT_NONE;
    return c;
}

/* the dry plan equals the cpu's measured memory under checkpointing, every algorithm, lm, cls and lora (with
   accumulation: tiny's 2 + 2 + 1), and every backward pass has its recomputations */
static void check_ckpt_dry(void) {
    int a, k;
    for (k = 0; k < 3; k++)
        for (a = 0; a < N_CKPT_ALGOS; a++) {
            const int algo = ckpt_algos[a], passes = 2 * 3 * (algo == DPPROF_ALGO_GHOST || algo == DPPROF_ALGO_FLASH ? 2 : 1); /* steps x batches x passes */
            char name[96];
            int rec;
            snprintf(name, sizeof name, "checkpoint %s %s", k == 1 ? "cls" : (k == 2 ? "lm+lora" : "lm"), dpprof_algo_name(algo));
            rec = cpu_equals_dry(tiny_ckpt(DPPROF_BACKEND_CPU, k == 1 ? DPPROF_TASK_CLS : DPPROF_TASK_LM, algo, k == 2, 1), name);
            CHECK(rec == 2 * passes, "%s: a recompute record for each of the 2 layers in each of the %d backward passes (%d)", name, passes, rec);
        }
}

/* what the forward keeps under checkpointing: each layer's input (the embedding's output, then every layer's
   output) and the head's activations, nothing of a layer's inside; the forward's record holds its data too */
static void check_ckpt_kept(void) {
    dpprof_config c = tiny_ckpt(DPPROF_BACKEND_DRY, DPPROF_TASK_LM, DPPROF_ALGO_FLASH_BK, 0, 1);
    dpprof_session *s = NULL;
    int rc = dpprof_session_create(&c, &s);
    if (rc == DPPROF_OK) rc = dpprof_session_run(s);
    CHECK(rc == DPPROF_OK, "checkpoint kept bytes: dry run (%s)", rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        const dpprof_prof *p = dpprof_session_prof(s);
        const dpprof_shape *h = dpprof_session_shape(s);
        const int64_t n = c.physical_batch, N = n * c.seq, E = 4;
        /* tokens and targets; x0 and the L outputs, lnf (N, C) and its rstd (N); logits (N, V); losses (n) */
        const int64_t want = 2 * 4 * N + E * (N * h->C * (h->L + 2) + N + N * h->V + n);
        size_t i;
        for (i = 0; i < p->n_phases && p->phases[i].phase != DPPROF_PHASE_FORWARD; i++) {}
        CHECK(i < p->n_phases && p->phases[i].bytes_end - p->phases[i].bytes_start == want,
              "checkpoint kept bytes: the forward keeps the data, every layer's input and the head's activations alone: %lld bytes (expected %lld)",
              i < p->n_phases ? (long long)(p->phases[i].bytes_end - p->phases[i].bytes_start) : -1LL, (long long)want);
    }
    dpprof_session_destroy(s);
}

/* the peak of one dry step of the long-context model at T = 4096, B = 1 */
static int64_t longctx_peak(int algo, int ckpt) {
    dpprof_config c;
    dpprof_session *s = NULL;
    int64_t peak = -1;
    memset(&c, 0, sizeof c);
    c.preset = "longctx";
    c.seq = 4096;
    c.batch = 1;
    c.steps = 1;
    c.algo = (dpprof_algo)algo;
    c.backend = DPPROF_BACKEND_DRY;
    c.no_timeline = 1;
    c.checkpoint = ckpt ? DPPROF_CHECKPOINT_LAYERS : DPPROF_CHECKPOINT_NONE;
    if (dpprof_session_create(&c, &s) == DPPROF_OK && dpprof_session_run(s) == DPPROF_OK) peak = dpprof_session_prof(s)->peak_bytes;
    dpprof_session_destroy(s);
    return peak;
}

/* checkpointing lowers every algorithm's peak where activations dominate; book-keeping keeps the linear
   layers' inputs from each recomputation until the clip phase, so its peak moves least */
static void check_ckpt_peaks(void) {
    int a;
    for (a = 0; a < N_CKPT_ALGOS; a++) {
        const int64_t p0 = longctx_peak(ckpt_algos[a], 0), p1 = longctx_peak(ckpt_algos[a], 1);
        CHECK(p0 > 0 && p1 > 0 && p1 < p0, "checkpoint longctx T=4096 %s: the peak with checkpointing %.3f GiB, below %.3f GiB without", dpprof_algo_name(ckpt_algos[a]),
              p1 / 1073741824.0, p0 / 1073741824.0);
    }
}

/* the result json: config.checkpoint, and the recompute phase counted once a backward pass (as the pass itself
   is); without checkpointing no recompute phase */
static void check_ckpt_json(int algo, int ckpt) {
    dpprof_config c = tiny_ckpt(DPPROF_BACKEND_DRY, DPPROF_TASK_LM, algo, 0, ckpt);
    dpprof_session *s = NULL;
    dpprof_json_doc *doc = NULL;
    FILE *f = tmpfile();
    char *text = NULL;
    long len = 0;
    int rc = f ? dpprof_session_create(&c, &s) : DPPROF_ERR_IO;
    if (rc == DPPROF_OK) rc = dpprof_session_run(s);
    if (rc == DPPROF_OK) rc = dpprof_session_write_json(s, f, "ckpt", "ok", NULL);
    if (rc == DPPROF_OK && (fflush(f) || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) || !(text = (char *)malloc((size_t)len)) || fread(text, 1, (size_t)len, f) != (size_t)len))
        rc = DPPROF_ERR_IO;
    if (rc == DPPROF_OK && dpprof_json_parse(text, (size_t)len, &doc) != 0) rc = DPPROF_ERR_PARSE;
    CHECK(rc == DPPROF_OK, "checkpoint json %s %s: written and read back (%s)", dpprof_algo_name(algo), ckpt ? "layers" : "none", rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        const dpprof_json *root = dpprof_json_root(doc);
        const char *ck = dpprof_json_string(dpprof_json_path(root, "config.checkpoint"));
        double bw = 0, bw2 = 0, rec = 0;
        const int passes = 2 * 3 * (algo == DPPROF_ALGO_GHOST || algo == DPPROF_ALGO_FLASH ? 2 : 1);
        dpprof_json_number(dpprof_json_path(root, "phases.backward.count"), &bw);
        dpprof_json_number(dpprof_json_path(root, "phases.backward_2.count"), &bw2);
        dpprof_json_number(dpprof_json_path(root, "phases.recompute.count"), &rec);
        CHECK(ck && !strcmp(ck, ckpt ? "layers" : "none"), "checkpoint json %s: config.checkpoint is \"%s\"", dpprof_algo_name(algo), ck ? ck : "(missing)");
        CHECK(bw + bw2 == passes && rec == (ckpt ? passes : 0), "checkpoint json %s %s: %g backward + %g backward_2 occurrences and %g recompute (expected %d and %d)",
              dpprof_algo_name(algo), ckpt ? "layers" : "none", bw, bw2, rec, passes, ckpt ? passes : 0);
    }
    dpprof_json_free(doc);
    free(text);
    if (f) fclose(f);
    dpprof_session_destroy(s);
}

/* the recomputation's analytic cost: the forward's again, less the embedding, the head, the down projections
   (their output, the next layer's input, is kept) and the norm that ends each layer (the recomputation makes
   ln1 with rmsnorm_fwd), once a backward pass; every other phase costs what it costs without checkpointing */
static void check_ckpt_cost(void) {
    dpprof_config c0 = tiny_ckpt(DPPROF_BACKEND_DRY, DPPROF_TASK_LM, DPPROF_ALGO_GHOST, 0, 0), c1 = tiny_ckpt(DPPROF_BACKEND_DRY, DPPROF_TASK_LM, DPPROF_ALGO_GHOST, 0, 1);
    dpprof_session *a = NULL, *b = NULL;
    int rc;
    c0.steps = c1.steps = 1;
    c0.physical_batch = c1.physical_batch = c0.batch;
    rc = dpprof_session_create(&c0, &a);
    if (rc == DPPROF_OK) rc = dpprof_session_run(a);
    if (rc == DPPROF_OK) rc = dpprof_session_create(&c1, &b);
    if (rc == DPPROF_OK) rc = dpprof_session_run(b);
    CHECK(rc == DPPROF_OK, "checkpoint cost: ghost with and without checkpointing (%s)", rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        const dpprof_prof *pa = dpprof_session_prof(a), *pb = dpprof_session_prof(b);
        const dpprof_shape *h = dpprof_session_shape(a);
        const int n = c0.batch, T = c0.seq, N = n * T;
        double fwd = 0, rec = 0, all_a = 0, other_b = 0, skip;
        size_t i;
        for (i = 0; i < pa->n_phases; i++) {
            if (pa->phases[i].phase == DPPROF_PHASE_FORWARD) fwd += pa->phases[i].flops;
            all_a += pa->phases[i].flops;
        }
        for (i = 0; i < pb->n_phases; i++) {
            if (pb->phases[i].phase == DPPROF_PHASE_RECOMPUTE) rec += pb->phases[i].flops;
            else other_b += pb->phases[i].flops;
        }
        skip = dpprof_embedding_fwd_cost(N, h->C, 4).flops + dpprof_matmul_fwd_cost(N, h->C, h->V, 4).flops + dpprof_crossentropy_fwd_cost(n, T, h->V, 4).flops +
               h->L * (dpprof_matmul_fwd_cost(N, h->F, h->C, 4).flops + dpprof_add_rmsnorm_fwd_cost(N, h->C, 4).flops) - (h->L - 1) * dpprof_rmsnorm_fwd_cost(N, h->C, 4).flops;
        CHECK(fabs(rec - 2 * (fwd - skip)) <= 1e-9 * fwd && all_a == other_b,
              "checkpoint cost: ghost's two passes recompute %.6g flops = 2 x (the forward's %.6g less %.6g not recomputed); every other phase the same", rec, fwd, skip);
    }
    dpprof_session_destroy(a);
    dpprof_session_destroy(b);
}

/* --dtype bf16 on dry: the same schedule as fp32, every token-indexed activation at half the bytes,
   the row statistics (rstd, lse, losses) and everything parameter-shaped at fp32's, plus a bf16
   working copy of each matmul weight beside its master. event for event against the fp32 dry run */
static void check_bf16_dry(int algo, dpprof_task task, int lora) {
    dpprof_config c = tiny(DPPROF_BACKEND_DRY, task);
    dpprof_session *a = NULL, *b = NULL;
    const dpprof_prof *pa, *pb;
    char name[96];
    size_t i, j, bad = 0, halved = 0, kept = 0, extra = 0;
    const int two_pass_flat = algo == DPPROF_ALGO_GHOST || algo == DPPROF_ALGO_FLASH;
    int64_t copies = 0, copies_lora = 0, sum = 0;
    int k, NH, T, ok;
    snprintf(name, sizeof name, "bf16 dry %s %s%s", dpprof_algo_name(algo), task == DPPROF_TASK_LM ? "lm" : "cls", lora ? " lora" : "");
    c.algo = (dpprof_algo)algo;
    if (task == DPPROF_TASK_CLS) {
        c.classes = 3;
        c.seq = 8; /* keeps the cls head's sizes apart from the row statistics' (see fp32_row below) */
    }
    if (lora) {
        c.lora_rank = 4;
        c.lora_targets = "q,v,down";
    }
    ok = dpprof_session_create(&c, &a) == DPPROF_OK && dpprof_session_run(a) == DPPROF_OK;
    c.dtype = DPPROF_DTYPE_BF16;
    if (lora) c.frozen_masters = DPPROF_SWITCH_ON; /* the frozen weights as the trained ones (their bf16 copies alone: tests/test_dp) */
    ok = ok && dpprof_session_create(&c, &b) == DPPROF_OK && dpprof_session_run(b) == DPPROF_OK;
    CHECK(ok, "%s: fp32 and bf16 dry runs (%s)", name, ok ? "ok" : dpprof_last_error());
    if (!ok) goto done;
    pa = dpprof_session_prof(a);
    pb = dpprof_session_prof(b);
    NH = dpprof_session_shape(a)->NH;
    T = c.seq;
    /* the copies: every parameter but the embedding table (unless it is the tied lm head) and the norm
       vectors (the matmuls' weights), counted from the shapes */
    for (k = 0; k < dpprof_session_param_count(b); k++) {
        dpprof_param *p = dpprof_session_param(b, k);
        int64_t want = (k != 0 || dpprof_session_shape(b)->tied) && p->module != DPPROF_MOD_NORM ? (int64_t)p->rows * p->cols : 0;
        if (p->wl.n != want || (want && (p->wl.elem_size != 2 || p->wl.category != p->w.category || p->wl.module != p->w.module)) || p->w.elem_size != 4 ||
            (p->trainable && (p->g.elem_size != 4 || p->m.elem_size != 4 || p->v.elem_size != 4))) {
            if (!bad++) printf("# %s: %s: copy of %lld elements (%d bytes each), master %d bytes\n", name, p->name, (long long)p->wl.n, p->wl.elem_size, p->w.elem_size);
        }
        if (p->w.category == DPPROF_CAT_LORA) copies_lora += 2 * want;
        else copies += 2 * want;
    }
    CHECK(!bad, "%s: every parameter has an fp32 master, gradient and moments; the %s's weights a bf16 copy of the same shape, category and module, the others none", name,
          lora ? "projections', adapters' and head" : "projections' and head");
    bad = 0;
    /* the event logs: in the model_loaded phase each master is followed by its copy, if it has one;
       then one to one */
    for (i = j = 0, k = -1; i < pa->n_events && j < pb->n_events; i++, j++) {
        const dpprof_event *x = &pa->events[i], *y = &pb->events[j];
        if (two_pass_flat && y->phase == DPPROF_PHASE_BACKWARD_2 && y->category == DPPROF_CAT_PER_SAMPLE_GRADIENTS && x->category != y->category && j + 2 < pb->n_events) {
            /* bf16 ghost/flash clip layer by layer in the second backward: a trainable norm vector's
               (n, C) per-sample gradients live for one op there, an alloc and its free (2L + 1 per
               physical batch) */
            extra += pb->events[j + 1].bytes == -y->bytes && y->bytes <= 8 * dpprof_session_shape(a)->C ? 1 : 1000000;
            j += 2;
            y = &pb->events[j];
        }
        /* fp32 in both: an n x T rstd (norm), an n x NH x T lse (attention), an n loss (head), n = 1, 2 */
        int64_t m = x->bytes < 0 ? -x->bytes : x->bytes;
        int fp32_row = (x->module == DPPROF_MOD_NORM && (m == 4 * T || m == 8 * T)) || (x->module == DPPROF_MOD_ATTENTION && (m == 4 * NH * T || m == 8 * NH * T)) ||
                       (x->module == DPPROF_MOD_HEAD && (m == 4 || m == 8));
        int act = (x->category == DPPROF_CAT_ACTIVATIONS || x->category == DPPROF_CAT_ACTIVATION_HOOKS) && !fp32_row;
        int diff = x->category != y->category || x->module != y->module || x->phase != y->phase || x->step != y->step || (act ? 2 * y->bytes != x->bytes : y->bytes != x->bytes);
        if (x->phase == DPPROF_PHASE_MODEL_LOADED && x->category != DPPROF_CAT_WORKSPACE && ++k < dpprof_session_param_count(b) && dpprof_session_param(b, k)->wl.n) {
            const dpprof_event *z = j + 1 < pb->n_events ? &pb->events[++j] : y;
            diff |= z == y || z->bytes != 2 * dpprof_session_param(b, k)->wl.n || z->category != x->category || z->module != x->module || z->phase != x->phase;
        }
        if (diff && !bad++)
            printf("# %s: first difference at fp32 event %zu: %lld bytes (%s, %s) vs bf16 event %zu: %lld bytes (%s, %s)\n", name, i, (long long)x->bytes,
                   dpprof_category_name(x->category), dpprof_module_name(x->module), j, (long long)y->bytes, dpprof_category_name(y->category), dpprof_module_name(y->module));
        if (act) halved++;
        else kept++;
    }
    CHECK(!bad && i == pa->n_events && j == pb->n_events && extra == (two_pass_flat && !lora ? (size_t)(2 * dpprof_session_shape(a)->L + 1) * (size_t)((c.batch + c.physical_batch - 1) / c.physical_batch * c.steps) : 0),
          "%s: event for event, activations at half the bytes, everything else the same (%zu halved, %zu the same, %zu differences; %zu per-sample vector pairs in backward_2)", name,
          halved, kept, bad, extra);
    CHECK(pb->peak_by_cat[DPPROF_CAT_MODEL_PARAMETERS] == pa->peak_by_cat[DPPROF_CAT_MODEL_PARAMETERS] + copies && pb->peak_by_cat[DPPROF_CAT_LORA] == pa->peak_by_cat[DPPROF_CAT_LORA] + copies_lora,
          "%s: weights = fp32 masters + bf16 copies (%lld + %lld bytes; lora %lld + %lld)", name, (long long)pa->peak_by_cat[DPPROF_CAT_MODEL_PARAMETERS], (long long)copies,
          (long long)pa->peak_by_cat[DPPROF_CAT_LORA], (long long)copies_lora);
    CHECK(pb->peak_by_cat[DPPROF_CAT_GRADIENTS] == pa->peak_by_cat[DPPROF_CAT_GRADIENTS] && pb->peak_by_cat[DPPROF_CAT_OPTIMIZER_STATES] == pa->peak_by_cat[DPPROF_CAT_OPTIMIZER_STATES] &&
              pb->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] == pa->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] && pb->max_by_cat[DPPROF_CAT_TEMP_MATRICES] == pa->max_by_cat[DPPROF_CAT_TEMP_MATRICES],
          "%s: gradients, optimizer states, per-sample gradients and gram matrices as in fp32 (%lld, %lld bytes)", name, (long long)pb->peak_by_cat[DPPROF_CAT_GRADIENTS],
          (long long)pb->peak_by_cat[DPPROF_CAT_OPTIMIZER_STATES]);
    CHECK(pb->max_by_cat[DPPROF_CAT_ACTIVATIONS] < pa->max_by_cat[DPPROF_CAT_ACTIVATIONS] && 2 * pb->max_by_cat[DPPROF_CAT_ACTIVATIONS] > pa->max_by_cat[DPPROF_CAT_ACTIVATIONS],
          "%s: activations' high-water mark %lld bytes, a little over half of fp32's %lld (the row statistics stay fp32)", name, (long long)pb->max_by_cat[DPPROF_CAT_ACTIVATIONS],
          (long long)pa->max_by_cat[DPPROF_CAT_ACTIVATIONS]);
    for (k = 0; k < DPPROF_CAT_COUNT; k++) sum += pb->peak_by_cat[k];
    CHECK(sum == pb->peak_bytes, "%s: categories at the peak sum to the peak (%lld bytes)", name, (long long)pb->peak_bytes);
    sum = 0;
    for (k = 0; k < DPPROF_MOD_COUNT; k++) sum += pb->peak_by_mod[k];
    CHECK(sum == pb->peak_bytes, "%s: modules at the peak sum to the peak", name);
    CHECK(pb->live_bytes == pa->live_bytes + copies + copies_lora, "%s: after the run, fp32's live bytes plus the copies are live (%lld)", name, (long long)pb->live_bytes);
    {
        FILE *f = tmpfile();
        char buf[1 << 16];
        size_t n = 0;
        if (f && dpprof_session_write_json(b, f, "bf16", "ok", NULL) == DPPROF_OK) {
            rewind(f);
            n = fread(buf, 1, sizeof buf - 1, f);
        }
        buf[n] = 0;
        if (f) fclose(f);
        CHECK(strstr(buf, "\"dtype\": \"bf16\"") && strstr(buf, "\"bytes_per_element\": 2") && strstr(buf, "\"storage\": \"bf16: activations"),
              "%s: the result json says dtype bf16, 2 bytes per activation element and what is stored how", name);
    }
done:
    dpprof_session_destroy(a);
    dpprof_session_destroy(b);
}

static void check_errors(void) {
    dpprof_config c;
    dpprof_session *s = NULL;
    int rc;
#define ERRCASE(setup, code, text)                                                        \
    do {                                                                                  \
        c = tiny(DPPROF_BACKEND_DRY, DPPROF_TASK_LM);                                     \
        setup;                                                                            \
        rc = dpprof_session_create(&c, &s);                                               \
        CHECK(rc == code && strstr(dpprof_last_error(), text) != NULL && s == NULL,       \
              "error: %s -> %s: %s", #setup, dpprof_result_str(rc), dpprof_last_error()); \
        dpprof_session_destroy(s);                                                        \
        s = NULL;                                                                         \
    } while (0)
    ERRCASE(c.preset = "llama-9", DPPROF_ERR_INVALID, "unknown preset 'llama-9'");
    ERRCASE(c.heads = 5, DPPROF_ERR_INVALID, "heads = 5 does not divide hidden = 64");
    ERRCASE((c.heads = 4, c.kv_heads = 3), DPPROF_ERR_INVALID, "kv-heads = 3 does not divide heads = 4");
    ERRCASE(c.batch = -3, DPPROF_ERR_INVALID, "config.batch = -3: expected an integer in [1, 16777216]");
    ERRCASE(c.hidden = -64, DPPROF_ERR_INVALID, "config.hidden = -64: expected an integer in [2, 16777216]");
    ERRCASE(c.seq = -1, DPPROF_ERR_INVALID, "config.seq = -1: expected an integer in [1, 16777216]");
    ERRCASE((c.batch = 4, c.physical_batch = 8), DPPROF_ERR_INVALID, "config.physical_batch = 8 is larger than config.batch = 4");
    ERRCASE(c.classes = 3, DPPROF_ERR_INVALID, "config.classes = 3 only applies to config.task = cls");
    ERRCASE((c.task = DPPROF_TASK_CLS, c.classes = 1), DPPROF_ERR_INVALID, "config.classes = 1: expected an integer in [2, 16777216]");
    ERRCASE((c.hidden = 1024, c.heads = 2, c.kv_heads = 2), DPPROF_ERR_INVALID, "head size hidden/heads = 512 exceeds 256");
    ERRCASE((c.hidden = 66, c.heads = 6, c.kv_heads = 6), DPPROF_ERR_INVALID, "head size hidden/heads = 11 must be even");
    ERRCASE(c.data_path = "/nonexistent/dpprof-data.txt", DPPROF_ERR_IO, "config.data_path /nonexistent/dpprof-data.txt: cannot open");
    ERRCASE((c.vocab = 100, c.data_path = "x"), DPPROF_ERR_INVALID, "needs vocab >= 256, got vocab = 100");
    ERRCASE(c.sigma = 1.0, DPPROF_ERR_INVALID, "apply to the DP algorithms, not to config.algo = vanilla");
    ERRCASE(c.per_layer_clipping = 1, DPPROF_ERR_INVALID, "apply to the DP algorithms, not to config.algo = vanilla");
    ERRCASE(c.poisson = 1, DPPROF_ERR_INVALID, "config.poisson samples from a dataset: give config.dataset_size");
    ERRCASE((c.algo = DPPROF_ALGO_GHOST, c.dataset_size = 3), DPPROF_ERR_INVALID, "config.dataset_size = 3 is smaller than config.batch = 5");
    ERRCASE((c.algo = DPPROF_ALGO_FLASH, c.sigma = -1), DPPROF_ERR_INVALID, "config.sigma = -1: expected a number in [0, 1e+06]");
    ERRCASE(c.lora_rank = 32, DPPROF_ERR_INVALID, "config.lora_rank = 32 must be smaller than the narrowest adapted width (32)");
    ERRCASE((c.backend = DPPROF_BACKEND_CPU, c.dtype = DPPROF_DTYPE_BF16), DPPROF_ERR_UNSUPPORTED,
            "config.dtype = bf16 runs on config.backend = cuda (and config.backend = dry reports its memory); the cpu backend computes in fp32 only");
    ERRCASE(c.delta = 1.0, DPPROF_ERR_INVALID, "config.delta = 1: expected a number in (0, 1)");
    ERRCASE(c.backend = DPPROF_BACKEND_CUDA, DPPROF_ERR_NO_CUDA, "built without CUDA");
    ERRCASE(c.memory_limit = -1, DPPROF_ERR_INVALID, "config.memory_limit = -1: expected bytes");
    ERRCASE(c.fused_clipgrad = 2, DPPROF_ERR_INVALID, "config.fused_clipgrad = 2: expected one of off, auto or on");
    ERRCASE(c.fused_clipgrad = -2, DPPROF_ERR_INVALID, "config.fused_clipgrad = -2: expected one of off, auto or on");
    ERRCASE(c.batched_clipgrad = 2, DPPROF_ERR_INVALID, "config.batched_clipgrad = 2: expected one of off, auto or on");
    ERRCASE(c.fused_noise = -2, DPPROF_ERR_INVALID, "config.fused_noise = -2: expected one of off, auto or on");
    ERRCASE(c.fused_noise = 2, DPPROF_ERR_INVALID, "config.fused_noise = 2: expected one of off, auto or on");
#undef ERRCASE
}

static void check_oom(void) {
    dpprof_config c = tiny(DPPROF_BACKEND_CPU, DPPROF_TASK_LM);
    dpprof_session *s = NULL;
    int rc;
    /* a memory limit: the report stops exactly at the allocation that would cross it */
    c.memory_limit = 1000000;
    rc = dpprof_session_create(&c, &s);
    if (rc == DPPROF_OK) rc = dpprof_session_run(s);
    CHECK(rc == DPPROF_ERR_OOM && strstr(dpprof_last_error(), "over the limit of 1000000 bytes"), "memory limit: %s", dpprof_last_error());
    CHECK(s && dpprof_session_prof(s)->peak_bytes <= 1000000, "memory limit: the session survives to report, peak %lld <= limit", s ? (long long)dpprof_session_prof(s)->peak_bytes : -1LL);
    dpprof_session_destroy(s);
    /* a malloc that fails during the step: oom with the bytes requested, nothing leaks (asan) */
    c = tiny(DPPROF_BACKEND_CPU, DPPROF_TASK_LM);
    s = NULL;
    rc = dpprof_session_create(&c, &s);
    test_alloc_budget = 200000;
    if (rc == DPPROF_OK) rc = dpprof_session_run(s);
    test_alloc_budget = (size_t)-1;
    CHECK(rc == DPPROF_ERR_OOM && strstr(dpprof_last_error(), "cannot allocate"), "failing malloc: %s", dpprof_last_error());
    CHECK(s && dpprof_session_prof(s)->live_bytes > 0, "failing malloc: the session still reports (%lld bytes live)", (long long)dpprof_session_prof(s)->live_bytes);
    dpprof_session_destroy(s);
}

/* a nan in the weights: the step stops at the loss and names the sample */
static void check_numeric_faults(void) {
    dpprof_config c = tiny(DPPROF_BACKEND_CPU, DPPROF_TASK_LM);
    dpprof_session *s;
    int rc, algo;
    for (algo = DPPROF_ALGO_VANILLA; algo <= DPPROF_ALGO_FLASH_BK; algo += DPPROF_ALGO_FLASH_BK - DPPROF_ALGO_VANILLA) {
        c.algo = (dpprof_algo)algo;
        c.sigma = algo == DPPROF_ALGO_VANILLA ? 0 : 1.0;
        c.dataset_size = 100;
        dpprof_session_create(&c, &s);
        ((dpprof_real *)dpprof_session_param(s, s->model.p_head)->w.data)[3] = (dpprof_real)NAN;
        rc = dpprof_session_run(s);
        CHECK(rc == DPPROF_ERR_NUMERIC && strstr(dpprof_last_error(), "the loss of sample 0 of step 0 is"), "%s: a nan weight stops the step: %s", dpprof_algo_name(algo), dpprof_last_error());
        CHECK(dpprof_session_steps_done(s) == 0, "%s: and no step is counted as done", dpprof_algo_name(algo));
        dpprof_session_destroy(s);
    }
}

/* auto's ghost cost for a layer whose input gram is shared (dpprof__proj_bwd keeps it for q, k, v and for
   gate, up): which tensors share it, and a layer that loses to flash alone but wins with its third of the
   input gram (the measured rates set between the two costs) */
static void check_ghost_share(void) {
    dpprof_config c;
    dpprof_session *s = NULL, fake;
    int i, bad = 0, lora;
    for (lora = 0; lora < 2; lora++) {
        memset(&c, 0, sizeof c);
        c.preset = "tiny";
        c.seq = 8;
        c.batch = 2;
        c.algo = DPPROF_ALGO_GHOST_BK;
        c.backend = DPPROF_BACKEND_DRY;
        c.lora_rank = lora ? 4 : 0;
        if (dpprof_session_create(&c, &s) != DPPROF_OK) {
            CHECK(0, "ghost share: session (%s)", dpprof_last_error());
            return;
        }
        for (i = 0; i < s->model.n_params; i++) {
            const char *n = s->model.params[i].name;
            const int want = lora ? 1 : (strstr(n, "q_proj") || strstr(n, "k_proj") || strstr(n, "v_proj") ? 3 : (strstr(n, "gate_proj") || strstr(n, "up_proj") ? 2 : 1));
            bad += dpprof__input_share(s, i) != want;
        }
        CHECK(bad == 0, "ghost share: %s (%d wrong of %d)",
              lora ? "with lora no tensor shares its input gram (an adapter's B, reading its own input, comes between)" : "q, k, v share their input gram 3 ways, gate and up 2 ways, every other tensor none",
              bad, s->model.n_params);
        dpprof_session_destroy(s);
    }
    {
        const int T = 1024, D = 2048;
        double full, shared;
        memset(&fake, 0, sizeof fake);
        fake.backend = DPPROF_BACKEND_CUDA;
        fake.elem = 2;
        full = 2 * dpprof_gram_cost(1, T, D, 2).flops + dpprof_gram_dot_cost(1, T, 2).flops;
        shared = full - dpprof_gram_cost(1, T, D, 2).flops * 2.0 / 3.0;
        fake.plan.rates.ghost = 1.0;
        fake.plan.rates.psg = 1e-30;
        /* flash a hair slower than ghost where both make a third of the input gram, and a hair faster: ghost is
           charged its third, and flash its own (dpprof__gram_flops), not the whole gram */
        fake.plan.rates.gram = dpprof__gram_flops(T, D, D, 3) / (1.001 * shared);
        i = dpprof__ghost_pick(&fake, T, D, D, 3);
        fake.plan.rates.gram = dpprof__gram_flops(T, D, D, 3) / (0.999 * shared);
        CHECK(i && !dpprof__ghost_pick(&fake, T, D, D, 3) && shared < full, "ghost pick: against flash, each with a third of the input gram");
    }
    { /* flash's gram flavour makes the input gram once for its group too (dpprof__flash_group): by flops
         (dry, cpu), a 64 x 64 layer at T = 40 takes the psg flavour alone (gram about T^2 4D/2 against 2 T D^2) and
         the gram flavour as one of q, k, v (about T^2 (2D/3 + 2D)/2) */
        const int T = 40, D = 64;
        const double g1 = dpprof__gram_flops(T, D, D, 1), g3 = dpprof__gram_flops(T, D, D, 3), p = dpprof_linear_sqnorm_psg_cost(1, T, D, D, 4).flops;
        memset(&fake, 0, sizeof fake);
        fake.backend = DPPROF_BACKEND_DRY;
        fake.cfg.algo = DPPROF_ALGO_FLASH_BK;
        CHECK(g1 == dpprof_linear_sqnorm_gram_cost(1, T, D, D, 4).flops && g3 < p && p < g1 && dpprof__flash_pick(&fake, T, D, D, 1) == 1 && dpprof__flash_pick(&fake, T, D, D, 3) == 0,
              "flash pick: gram flops %.0f alone, %.0f with a third of the input gram, psg %.0f: psg alone, gram in the group", g1, g3, p);
        CHECK(dpprof_linear_sqnorm_gram_group_cost(2, T, D, 3 * D, 3, 2).flops == 2 * (3 * g3) && dpprof_linear_sqnorm_gram_group_cost(2, T, D, D, 1, 2).flops == 2 * g1,
              "flash group cost: three layers cost three shares, one layer the single cost");
    }
}

/* one result-code vocabulary: every code a part returns (the json reader's, the figures', the accountant's) is
   a dpprof_result with a name, and each name means one thing */
static void test_result_codes(void) {
    static const int codes[] = {DPPROF_JSON_ESYNTAX, DPPROF_JSON_ENOMEM, DPPROF_JSON_EIO, DPPROF_JSON_ETOOBIG, DPPROF_JSON_EINVAL, DPPROF_JSON_EMISSING,
                                DPPROF_JSON_ETYPE, DPPROF_JSON_ERANGE, DPPROF_PLOT_EARG, DPPROF_PLOT_EVALUE, DPPROF_PLOT_EORDER, DPPROF_PLOT_ESIZE,
                                DPPROF_PLOT_ENOMEM, DPPROF__PRIV_ENULL, DPPROF__PRIV_EINVAL, DPPROF__PRIV_ENOCONV, DPPROF__PRIV_ERANGE};
    size_t i;
    int named = 1;
    for (i = 0; i < sizeof codes / sizeof codes[0]; i++) named &= codes[i] < 0 && codes[i] > DPPROF__RESULT_END && strcmp(dpprof_result_str(codes[i]), "unknown result code") != 0;
    CHECK(named && DPPROF_JSON_OK == DPPROF_OK && DPPROF_PLOT_OK == DPPROF_OK && DPPROF__PRIV_OK == DPPROF_OK,
          "every part's codes are dpprof_result codes with a name (json, figures, accountant)");
    CHECK(DPPROF_JSON_ESYNTAX == DPPROF_ERR_PARSE && DPPROF_JSON_ENOMEM == DPPROF_PLOT_ENOMEM && DPPROF_PLOT_EARG == DPPROF__PRIV_EINVAL &&
              DPPROF_JSON_ERANGE == DPPROF__PRIV_ERANGE && !strcmp(dpprof_result_str(DPPROF_ERR_RANGE), "value out of range"),
          "one meaning a code: a parse error, out of memory, an invalid argument, out of range are each one code");
    {
        dpprof_json_doc *d = NULL;
        double e;
        CHECK(dpprof_json_parse("{", 1, &d) == DPPROF_ERR_PARSE && dpprof_rdp_epsilon(2.0, 1.0, 1, 1e-5, NULL, 0, &e, NULL) == DPPROF_ERR_INVALID,
              "a json syntax error is DPPROF_ERR_PARSE, an accountant's bad argument DPPROF_ERR_INVALID");
    }
}

/* --attention cudnn on dry: cuDNN's workspace (attention_workspace bytes) allocated with the model, category workspace,
   module attention, live at every peak: the peak exactly that much above dpprof's attention, the rest the same event
   for event; refused in fp32, and a workspace without cudnn */
static void check_attention_cudnn(void) {
    dpprof_config c = tiny(DPPROF_BACKEND_DRY, DPPROF_TASK_LM), k;
    dpprof_session *a = NULL, *b = NULL;
    const int64_t ws = (int64_t)3 << 20;
    int rc;
    c.dtype = DPPROF_DTYPE_BF16;
    c.algo = DPPROF_ALGO_FLASH_BK;
    k = c;
    k.attention = DPPROF_ATTENTION_CUDNN;
    k.attention_workspace = ws;
    rc = dpprof_session_create(&c, &a);
    if (rc == DPPROF_OK) rc = dpprof_session_run(a);
    if (rc == DPPROF_OK) rc = dpprof_session_create(&k, &b);
    if (rc == DPPROF_OK) rc = dpprof_session_run(b);
    CHECK(rc == DPPROF_OK, "attention cudnn on dry: both runs (%s)", rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        const dpprof_prof *pa = dpprof_session_prof(a), *pb = dpprof_session_prof(b);
        CHECK(pb->peak_bytes == pa->peak_bytes + ws && pb->peak_by_cat[DPPROF_CAT_WORKSPACE] == pa->peak_by_cat[DPPROF_CAT_WORKSPACE] + ws &&
                  pb->peak_by_mod[DPPROF_MOD_ATTENTION] == pa->peak_by_mod[DPPROF_MOD_ATTENTION] + ws && pb->n_events == pa->n_events + 1,
              "attention cudnn on dry: peak %lld = dpprof's %lld + the %lld-byte workspace (category workspace, module attention), one allocation more in the run",
              (long long)pb->peak_bytes, (long long)pa->peak_bytes, (long long)ws);
    }
    dpprof_session_destroy(a);
    dpprof_session_destroy(b);
    a = NULL;
    k.dtype = DPPROF_DTYPE_FP32;
    CHECK(dpprof_session_create(&k, &a) == DPPROF_ERR_INVALID && strstr(dpprof_last_error(), "bf16"), "attention cudnn in fp32 is refused (%s)", dpprof_last_error());
    dpprof_session_destroy(a);
    a = NULL;
    c.attention_workspace = ws;
    CHECK(dpprof_session_create(&c, &a) == DPPROF_ERR_INVALID && strstr(dpprof_last_error(), "config.attention_workspace"), "a workspace without attention cudnn is refused (%s)", dpprof_last_error());
    dpprof_session_destroy(a);
    CHECK(!strcmp(dpprof_attention_name(DPPROF_ATTENTION_CUDNN), "cudnn") && dpprof_attention_parse("dpprof") == DPPROF_ATTENTION_DPPROF && dpprof_attention_parse("flash") < 0,
          "attention names: dpprof, cudnn; others unknown");
}

/* config.framework pytorch: the walk of PyTorch's loop on dry. its report adds up; after the run only what PyTorch
   keeps between steps is live (the parameters, the rotary buffers, AdamW's moments, the loop's last ids and labels:
   each rounded to the caching allocator's 512 bytes); the eager attention's T x T probabilities cost more than sdpa's; what it does not model is
   refused by name. Its peaks against PyTorch's own tracker: tests/test_frameworks.sh */
static int64_t r512(int64_t b) { return (b + 511) / 512 * 512; }
static void check_framework_pytorch(void) {
    int variant;
    int64_t peak[2] = {0, 0};
    for (variant = 0; variant < 16; variant++) {
        dpprof_config c = tiny(DPPROF_BACKEND_DRY, DPPROF_TASK_LM);
        dpprof_session *s = NULL;
        const dpprof_prof *p;
        int64_t keep = 2 * r512(4 * 32 / 2); /* the rotary buffers: head_dim / 2 floats each */
        int i, rc;
        char name[96];
        c.framework = DPPROF_FRAMEWORK_PYTORCH;
        c.seq = 128; /* the peak in the backward, where the attention's saved tensors count */
        c.attention = variant & 1 ? DPPROF_ATTENTION_EAGER : DPPROF_ATTENTION_SDPA;
        c.tie_embeddings = variant & 2 ? DPPROF_SWITCH_ON : DPPROF_SWITCH_OFF;
        if (variant == 4 || variant == 5) c.physical_batch = c.batch; /* one physical batch (else 2 + 2 + 1, accumulated) */
        if (variant >= 6 && variant <= 8) {                           /* bf16 autocast: full fine-tuning; LoRA over a base in bf16; LoRA over one in fp32 */
            c.attention = DPPROF_ATTENTION_SDPA;
            c.dtype = DPPROF_DTYPE_BF16;
            c.lora_rank = variant >= 7 ? 4 : 0;
            c.frozen_masters = variant == 8 ? DPPROF_SWITCH_ON : DPPROF_SWITCH_AUTO;
        }
        if (variant >= 9 && variant <= 12) { /* Opacus, hooks (9, 10) and ghost clipping (11, 12): accumulated over physical batches, and not */
            c.framework = DPPROF_FRAMEWORK_OPACUS;
            c.algo = variant >= 11 ? DPPROF_ALGO_GHOST : DPPROF_ALGO_PERSAMPLE;
            c.tie_embeddings = DPPROF_SWITCH_OFF;
            c.physical_batch = variant == 9 || variant == 11 ? 2 : c.batch;
        }
        if (variant == 15) { /* Opacus's hooks with a tied head: the two uses share one grad_sample */
            c.framework = DPPROF_FRAMEWORK_OPACUS;
            c.algo = DPPROF_ALGO_PERSAMPLE;
            c.tie_embeddings = DPPROF_SWITCH_ON;
        }
        if (variant == 13 || variant == 14) { /* Hugging Face's gradient checkpointing: full fine-tuning (sdpa), LoRA (eager) */
            c.framework = DPPROF_FRAMEWORK_PYTORCH;
            c.algo = DPPROF_ALGO_VANILLA;
            c.checkpoint = DPPROF_CHECKPOINT_LAYERS;
            c.attention = variant == 13 ? DPPROF_ATTENTION_SDPA : DPPROF_ATTENTION_EAGER;
            c.lora_rank = variant == 14 ? 4 : 0;
        }
        snprintf(name, sizeof name, "%s %s %s%s%s", variant == 15 ? "opacus" : (variant >= 13 ? (variant == 14 ? "pytorch LoRA, checkpointed," : "pytorch checkpointed") : (variant >= 11 ? "opacus ghost" : (variant >= 9 ? "opacus" : "pytorch"))),
                 c.attention == DPPROF_ATTENTION_EAGER ? "eager" : "sdpa",
                 c.tie_embeddings == DPPROF_SWITCH_ON ? "tied" : "untied", variant == 4 || variant == 5 || variant == 10 || variant == 12 ? " unsplit" : "",
                 variant == 6 ? " bf16" : (variant == 7 ? " bf16 LoRA, bf16 base" : (variant == 8 ? " bf16 LoRA, fp32 base" : "")));
        rc = dpprof_session_create(&c, &s);
        if (rc == DPPROF_OK) rc = dpprof_session_run(s);
        CHECK(rc == DPPROF_OK, "%s: dry run (%s)", name, rc ? dpprof_last_error() : "ok");
        if (rc != DPPROF_OK) {
            dpprof_session_destroy(s);
            continue;
        }
        p = dpprof_session_prof(s);
        peak_adds_up(p, name);
        for (i = 0; i < dpprof_session_param_count(s); i++) {
            const dpprof_param *pp = dpprof_session_param(s, i);
            keep += pp->trainable ? 3 * r512(4LL * pp->rows * pp->cols) : r512((dpprof__fw_w16(s, i) ? 2LL : 4LL) * pp->rows * pp->cols);
        }
        {
            const int64_t n = c.batch % c.physical_batch ? c.batch % c.physical_batch : c.physical_batch;
            int trainable = 0, vocab = 0;
            for (i = 0; i < dpprof_session_param_count(s); i++) {
                trainable += dpprof_session_param(s, i)->trainable;
                if (dpprof_session_param(s, i)->module == DPPROF_MOD_EMBEDDING) vocab = dpprof_session_param(s, i)->rows;
            }
            const int ghost = variant == 11 || variant == 12;
            keep += 2 * r512(8LL * c.seq * n) + (ghost ? r512(4 * n) : r512(4));                     /* the last batch's ids, labels and loss (ghost: per sample) */
            if (ghost) keep += r512(4LL * n * c.seq * vocab) + (1 + trainable) * r512(4 * n);        /* the logits the caller holds, the
                                                                                                module's norms per sample, each tensor's */
            if (variant == 14) keep += 2 * r512(4LL * n * c.seq * dpprof_session_param(s, 0)->cols); /* checkpointing over a frozen
                                    embedding: its output a leaf that requires a gradient, held with its .grad by the last loss's graph */
        }
        CHECK(p->live_bytes == keep, "%s: after the run the parameters, buffers, moments and the last batch's ids, labels and loss alone are live%s (%lld bytes, expected %lld)", name,
              variant == 11 || variant == 12 ? ", and the logits the caller holds and the norms per sample" : (variant == 14 ? ", and the embedding's output and its gradient" : ""), (long long)p->live_bytes,
              (long long)keep);
        CHECK(p->peak_by_cat[DPPROF_CAT_WORKSPACE] == 0 && (variant == 9 || variant == 10 || variant == 15) == (p->peak_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] > 0), "%s: no workspace; per-sample gradients at the peak where Opacus's hooks run", name);
        if (variant == 11 || variant == 12) { /* ghost: the T x T Grams and the norms made, in a second backward */
            size_t e;
            int gram = 0, norms = 0, second = 0;
            for (e = 0; e < p->n_events; e++) {
                gram |= p->events[e].category == DPPROF_CAT_TEMP_MATRICES && p->events[e].bytes >= 4LL * c.seq * c.seq;
                norms |= p->events[e].category == DPPROF_CAT_NORM_SAMPLES && p->events[e].bytes > 0;
            }
            for (e = 0; e < p->n_phases; e++) second |= p->phases[e].phase == DPPROF_PHASE_BACKWARD_2;
            CHECK(gram && norms && second, "%s: the T x T Grams (%d), the norms per sample (%d) and a second backward (%d)", name, gram, norms, second);
        }
        for (i = 0; i < dpprof_session_param_count(s); i++) {
            const dpprof_param *pp = dpprof_session_param(s, i);
            const char *want = !pp->trainable ? "frozen" : (variant < 9 || variant == 13 || variant == 14 ? "summed (non-private)" : variant == 15 ? "per-sample gradient materialised"
                                                                                                                                                   : (variant < 11 || pp->module == DPPROF_MOD_NORM ? "per-sample gradient materialised" : (pp->module == DPPROF_MOD_EMBEDDING ? "per-token gradients summed per sample" : "gram T x T materialised")));
            if (strcmp(dpprof_session_param_method(s, i), want)) break;
        }
        CHECK(i == dpprof_session_param_count(s), "%s: every tensor's method is %s, or frozen", name,
              variant < 9 || variant == 13 || variant == 14 ? "the summed gradient" : variant == 15 ? "the per-sample gradient"
                                                                                                    : (variant < 11 ? "the per-sample gradient" : "the T x T Gram (the norms: per-sample gradients; the embedding: per-token gradients summed)"));
        if (variant < 2) peak[variant] = p->peak_bytes;
        dpprof_session_destroy(s);
    }
    CHECK(peak[1] > peak[0], "pytorch: eager attention's peak (%lld) is above sdpa's (%lld)", (long long)peak[1], (long long)peak[0]);
    {
        static const struct {
            int backend, attention, framework, algo, dtype;
            const char *says;
        } bad[] = {
            {DPPROF_BACKEND_CPU, 0, DPPROF_FRAMEWORK_PYTORCH, 0, 0, "config.backend = dry"},
            {0, DPPROF_ATTENTION_SDPA, 0, 0, 0, "takes config.framework = pytorch"},
            {0, DPPROF_ATTENTION_DPPROF, DPPROF_FRAMEWORK_PYTORCH, 0, 0, "takes sdpa or eager"},
            {0, 0, DPPROF_FRAMEWORK_PYTORCH, DPPROF_ALGO_FLASH_BK, 0, "non-private loop"},
            {0, DPPROF_ATTENTION_EAGER, DPPROF_FRAMEWORK_PYTORCH, 0, DPPROF_DTYPE_BF16, "config.attention = eager is not modelled yet"},
        };
        size_t j;
        for (j = 0; j < sizeof bad / sizeof bad[0]; j++) {
            dpprof_config c = tiny((dpprof_backend)bad[j].backend, DPPROF_TASK_LM);
            dpprof_session *s = NULL;
            int rc;
            c.attention = (dpprof_attention)bad[j].attention;
            c.framework = (dpprof_framework)bad[j].framework;
            c.algo = (dpprof_algo)bad[j].algo;
            c.dtype = (dpprof_dtype)bad[j].dtype;
            rc = dpprof_session_create(&c, &s);
            CHECK(rc != DPPROF_OK && strstr(dpprof_last_error(), bad[j].says), "pytorch: refused, saying '%s' (%s)", bad[j].says, rc ? dpprof_last_error() : "accepted");
            dpprof_session_destroy(s);
        }
    }
}

int main(void) {
    test_result_codes();
    check_framework_pytorch();
    check_attention_cudnn();
    check_ghost_share();
    check_report_adds_up(DPPROF_TASK_LM, "lm");
    check_report_adds_up(DPPROF_TASK_CLS, "cls");
    check_cpu_equals_dry(DPPROF_TASK_LM, "lm", 0);
    check_cpu_equals_dry(DPPROF_TASK_CLS, "cls", 0);
    { /* tied: one matrix for the embedding and the lm head; every algorithm's plan is the cpu's live bytes */
        static const char *const names[] = {"lm tied vanilla", "lm tied persample", "lm tied ghost", "lm tied ghost_bk", "lm tied flash", "lm tied flash_bk", "lm tied auto"};
        int a;
        tie = 1;
        check_report_adds_up(DPPROF_TASK_LM, "lm tied");
        for (a = DPPROF_ALGO_VANILLA; a <= DPPROF_ALGO_AUTO; a++) check_cpu_equals_dry(DPPROF_TASK_LM, names[a - DPPROF_ALGO_VANILLA], a);
        check_bf16_dry(DPPROF_ALGO_FLASH_BK, DPPROF_TASK_LM, 0);
        check_bf16_dry(DPPROF_ALGO_PERSAMPLE, DPPROF_TASK_LM, 1);
        tie = 0;
    }
    check_physical_split();
    check_op_costs();
    check_determinism();
    check_dry_large();
    check_activation_scaling();
    check_bf16_dry(DPPROF_ALGO_VANILLA, DPPROF_TASK_LM, 0);
    check_bf16_dry(DPPROF_ALGO_PERSAMPLE, DPPROF_TASK_LM, 0);
    check_bf16_dry(DPPROF_ALGO_GHOST, DPPROF_TASK_CLS, 0);
    check_bf16_dry(DPPROF_ALGO_FLASH_BK, DPPROF_TASK_LM, 0);
    check_bf16_dry(DPPROF_ALGO_GHOST_BK, DPPROF_TASK_LM, 1);
    check_bf16_dry(DPPROF_ALGO_FLASH, DPPROF_TASK_CLS, 1);
    check_ckpt_dry();
    check_ckpt_kept();
    check_ckpt_peaks();
    check_ckpt_json(DPPROF_ALGO_FLASH, 1);
    check_ckpt_json(DPPROF_ALGO_FLASH_BK, 1);
    check_ckpt_json(DPPROF_ALGO_GHOST, 0);
    check_ckpt_cost();
    check_errors();
    check_oom();
    check_numeric_faults();
    return test_finish();
}
