/* tests/test_dp.c - every DP algorithm against an explicit loop that backpropagates each sample
   alone: per-sample norms and the summed clipped gradient, flat and per-layer clipping, both heads,
   grouped-query attention, repeated tokens, an uneven physical split. built twice by make test:
   test_dp_double (-DDPPROF_REF_DOUBLE) checks in double and, run as `test_dp_double --ref CASE`,
   prints its double-precision reference; test_dp (float storage, double accumulation) reads that
   reference and must agree to 1e-5 relative. --checkpoint layers gives the same bits as none, every algorithm
   (check_checkpoint). also: physical splits give the same noisy update,
   the noise's mean and variance, and the memory each algorithm needs on the dry backend. */
#define _POSIX_C_SOURCE 200809L /* popen: the float build reads the double build's reference */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define B 5
#define T 6
#define ES ((int64_t)sizeof(dpprof_real)) /* bytes per stored element */
#ifdef DPPROF_REF_DOUBLE
#define TOL 1e-10
#else
#define TOL 1e-5
#endif

static const int algos[] = {DPPROF_ALGO_PERSAMPLE, DPPROF_ALGO_GHOST, DPPROF_ALGO_GHOST_BK, DPPROF_ALGO_FLASH, DPPROF_ALGO_FLASH_BK, DPPROF_ALGO_AUTO};

static int use_lora;   /* the case in flight adapts q, v and down with rank-3 lora */
static int use_head;   /* lora: the head trains (--train-head; a cls head always does) */
static int use_tied;   /* the case in flight ties the lm head to the embedding: one matrix, whose per-sample
                        gradient is the sum of both uses' (the cross term in its norm) */
static int use_narrow; /* the case in flight is 4 wide (2 heads of 2): auto materialises the per-sample
                          gradients of every layer whose input is at most T = 6 wide, not down's (12) */

/* lora_B starts at zero (so A's gradient would be zero): move it, identically in every session */
static void perturb_lora(dpprof_session *s) {
    int i;
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        dpprof_param *p = dpprof_session_param(s, i);
        int64_t e;
        if (!strstr(p->name, "lora_B")) continue;
        for (e = 0; e < p->w.n; e++) ((dpprof_real *)p->w.data)[e] = (dpprof_real)(0.2 * sin(0.37 * (double)e + i));
    }
}

static dpprof_config small(int cls, int algo) {
    dpprof_config c;
    memset(&c, 0, sizeof c);
    c.preset = "tiny";
    c.vocab = 11;
    c.hidden = 16;
    c.heads = 4;
    c.kv_heads = 2;
    c.ffn = 12;
    c.layers = 2;
    /* auto mixes methods: narrow, by the input-width rule alone (level 1 unmeasured: 4 <= T materialised, the
       ffn's 12 not); 16 wide, by the dry-run rule (k and v, 8 x 16: their per-sample gradients no larger
       than their input and output gradient) */
    if (use_narrow) c.hidden = 4, c.heads = 2, c.kv_heads = 1, c.auto_materialise = 2;
    c.seq = T;
    c.task = cls ? DPPROF_TASK_CLS : DPPROF_TASK_LM;
    c.classes = cls ? 3 : 0;
    c.batch = B;
    c.physical_batch = 2; /* 2 + 2 + 1 */
    c.init_std = 0.3;
    c.algo = (dpprof_algo)algo;
    c.backend = DPPROF_BACKEND_CPU;
    c.seed = 11;
    c.optimizer = DPPROF_OPT_SGD;
    c.tie_embeddings = use_tied ? 1 : 0;
    if (use_lora) {
        c.lora_rank = 3;
        c.lora_alpha = 6;
        c.lora_targets = "q,v,down";
        c.train_head = use_head ? DPPROF_SWITCH_ON : DPPROF_SWITCH_AUTO;
        c.auto_ghost = 1; /* auto takes ghost's grams for every layer it does not materialise */
    }
    return c;
}

static void batch(int *tok, int *tgt, int cls) {
    int i;
    for (i = 0; i < B * T; i++) tok[i] = (i * 7 + i / 4) % 5; /* repeated tokens inside each sequence */
    for (i = 0; i < B * (cls ? 1 : T); i++) tgt[i] = cls ? i % 3 : (i * 5 + 2) % 11;
}

/* flatten the trainable gradients */
static size_t grads(dpprof_session *s, double *out) {
    size_t k = 0;
    int i;
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        dpprof_param *p = dpprof_session_param(s, i);
        int64_t e;
        if (!p->trainable) continue;
        for (e = 0; e < p->g.n; e++) out[k++] = (double)((dpprof_real *)p->g.data)[e];
    }
    return k;
}

/* the reference: each sample alone through the plain backward, then norms, clip, sum.
   clip_bound <= 0: take the median norm, so some samples are clipped and some are not */
typedef struct ref {
    double norms[B], clip, *sum;
    size_t P;
} ref;
static void reference(int cls, int per_layer, ref *r) {
    dpprof_config c = small(cls, DPPROF_ALGO_VANILLA);
    dpprof_session *s;
    int tok[B * T], tgt[B * T], i, p, k;
    double *g[B], sorted[B];
    size_t P = 0;
    batch(tok, tgt, cls);
    dpprof_session_create(&c, &s);
    perturb_lora(s);
    for (i = 0; i < dpprof_session_param_count(s); i++) P += (size_t)dpprof_session_param(s, i)->w.n;
    for (i = 0; i < B; i++) {
        g[i] = (double *)calloc(P, sizeof(double));
        dpprof_session_grad(s, tok + i * T, tgt + i * (cls ? 1 : T), 1, NULL);
        r->P = grads(s, g[i]);
        r->norms[i] = 0;
        for (k = 0; k < (int)r->P; k++) r->norms[i] += g[i][k] * g[i][k];
        r->norms[i] = sqrt(r->norms[i]);
        sorted[i] = r->norms[i];
    }
    qsort(sorted, B, sizeof(double), dpprof__cmp_double);
    r->clip = sorted[B / 2];
    r->sum = (double *)calloc(r->P, sizeof(double));
    if (!per_layer) {
        for (i = 0; i < B; i++) {
            double ci = r->clip / (r->norms[i] + 1e-6);
            if (ci > 1) ci = 1;
            for (k = 0; k < (int)r->P; k++) r->sum[k] += ci * g[i][k];
        }
    } else {
        /* every tensor clipped alone to C / sqrt(number of tensors) */
        size_t off = 0;
        int nt = 0;
        for (p = 0; p < dpprof_session_param_count(s); p++) nt += dpprof_session_param(s, p)->trainable;
        for (p = 0; p < dpprof_session_param_count(s); p++) {
            dpprof_param *pp = dpprof_session_param(s, p);
            if (!pp->trainable) continue;
            for (i = 0; i < B; i++) {
                double nrm = 0, ci;
                int64_t e;
                for (e = 0; e < pp->g.n; e++) nrm += g[i][off + e] * g[i][off + e];
                ci = r->clip / sqrt((double)nt) / (sqrt(nrm) + 1e-6);
                if (ci > 1) ci = 1;
                for (e = 0; e < pp->g.n; e++) r->sum[off + e] += ci * g[i][off + e];
            }
            off += (size_t)pp->g.n;
        }
    }
    for (i = 0; i < B; i++) free(g[i]);
    dpprof_session_destroy(s);
}

#ifdef DPPROF_REF_DOUBLE
static int print_reference(const char *cs) {
    int cls = cs[0] == 'c', per_layer = cs[1] == 'p';
    use_lora = cs[2] == 'r';
    use_narrow = cs[3] == 'n';
    use_tied = cs[4] == 't';
    use_head = cs[5] == 'h';
    ref r;
    size_t k;
    int i;
    reference(cls, per_layer, &r);
    printf("%.17g %zu\n", r.clip, r.P);
    for (i = 0; i < B; i++) printf("%.17g\n", r.norms[i]);
    for (k = 0; k < r.P; k++) printf("%.17g\n", r.sum[k]);
    free(r.sum);
    return 0;
}
#endif

/* the double build beside this program (its folder: build/tests, or make check's build/check) */
static char g_double_bin[200] = "build/tests/test_dp_double";

/* the double-precision reference: computed here, or read from the double build */
static int get_reference(int cls, int per_layer, ref *r) {
#ifdef DPPROF_REF_DOUBLE
    reference(cls, per_layer, r);
    return 0;
#else
    char cmd[256];
    FILE *f;
    size_t k;
    int i, ok = 1;
    snprintf(cmd, sizeof cmd, "'%s' --ref %c%c%c%c%c%c", g_double_bin, cls ? 'c' : 'l', per_layer ? 'p' : 'f', use_lora ? 'r' : '-', use_narrow ? 'n' : '-', use_tied ? 't' : '-', use_head ? 'h' : '-');
    f = popen(cmd, "r");
    if (!f) return -1;
    ok &= fscanf(f, "%lf %zu", &r->clip, &r->P) == 2;
    for (i = 0; ok && i < B; i++) ok &= fscanf(f, "%lf", &r->norms[i]) == 1;
    r->sum = ok ? (double *)calloc(r->P, sizeof(double)) : NULL;
    for (k = 0; ok && k < r->P; k++) ok &= fscanf(f, "%lf", &r->sum[k]) == 1;
    pclose(f);
    return ok ? 0 : -1;
#endif
}

static void check_algorithms(int cls, int per_layer) {
    ref r;
    int a, tok[B * T], tgt[B * T], i;
    const char *name = use_tied ? (use_narrow ? "lm tied narrow" : (use_lora ? (use_head ? "lm tied+lora, head trains" : "lm tied+lora, head frozen") : "lm tied"))
                                : (use_narrow ? (cls ? "cls narrow" : "lm narrow") : (use_lora ? (cls ? "cls+lora" : (use_head ? "lm+lora, head trains" : "lm+lora, head frozen")) : (cls ? "cls" : "lm")));
    const char *clipping = per_layer ? "per-layer" : "flat";
    if (get_reference(cls, per_layer, &r) != 0) {
        CHECK(0, "%s %s: the double-precision reference (%s --ref) could not be read", name, clipping, g_double_bin);
        return;
    }
    batch(tok, tgt, cls);
#ifndef DPPROF_REF_DOUBLE
    { /* the same loop in float storage, for scale: how far plain fp32 is from the double reference */
        ref fr;
        double e = 0, m = 0;
        size_t k;
        reference(cls, per_layer, &fr);
        for (k = 0; k < r.P; k++) {
            e = fmax(e, fabs(fr.sum[k] - r.sum[k]));
            m = fmax(m, fabs(r.sum[k]));
        }
        CHECK(e <= TOL * m, "%s %s: the per-sample loop in float storage is %.2e from the double loop (tolerance %.0e)", name, clipping, e / m, TOL);
        free(fr.sum);
    }
#endif
    for (a = 0; a < (int)(sizeof algos / sizeof algos[0]); a++) {
        dpprof_config c = small(cls, algos[a]);
        dpprof_session *s;
        double norms[B], clip[B], *g = (double *)calloc(r.P, sizeof(double)), en = 0, es = 0, smax = 0;
        size_t k;
        int rc;
        c.max_grad_norm = r.clip;
        c.per_layer_clipping = per_layer;
        rc = dpprof_session_create(&c, &s);
        if (rc == DPPROF_OK) perturb_lora(s);
        if (rc == DPPROF_OK) rc = dpprof_session_clipped_grad(s, tok, tgt, B, norms, clip);
        CHECK(rc == DPPROF_OK, "%s %s %s: runs (%s)", name, clipping, dpprof_algo_name(algos[a]), rc ? dpprof_last_error() : "ok");
        if (rc != DPPROF_OK) {
            free(g);
            continue;
        }
        grads(s, g);
        for (i = 0; i < B; i++) en = fmax(en, fabs(norms[i] - r.norms[i]) / r.norms[i]);
        for (k = 0; k < r.P; k++) {
            es = fmax(es, fabs(g[k] - r.sum[k]));
            smax = fmax(smax, fabs(r.sum[k]));
        }
        CHECK(en <= TOL, "%s %s %-9s: per-sample norms vs the per-sample loop in double: max relative error %.2e (tolerance %.0e)", name, clipping, dpprof_algo_name(algos[a]), en, TOL);
        CHECK(es <= TOL * smax, "%s %s %-9s: clipped sum vs the per-sample loop in double: max error %.2e relative to max |sum| %.2e (tolerance %.0e)", name, clipping, dpprof_algo_name(algos[a]), es / smax, smax, TOL);
        if (!per_layer) {
            double ec = 0;
            for (i = 0; i < B; i++) ec = fmax(ec, fabs(clip[i] - fmin(1.0, r.clip / (r.norms[i] + 1e-6))));
            CHECK(ec <= TOL, "%s %s %-9s: clip factors, max error %.2e", name, clipping, dpprof_algo_name(algos[a]), ec);
        }
        dpprof_session_destroy(s);
        free(g);
    }
    {
        int clipped = 0;
        for (i = 0; i < B; i++) clipped += r.norms[i] > r.clip;
        CHECK(clipped > 0 && clipped < B, "%s %s: the bound clips %d of %d samples (both branches of min(1, C/norm) are exercised)", name, clipping, clipped, B);
    }
    free(r.sum);
}

/* the first tensor ('w' weights or 'g' gradients) whose bits differ between two sessions, or -1 */
static int differing_tensor(dpprof_session *a, dpprof_session *b, char which) {
    int i;
    for (i = 0; i < dpprof_session_param_count(a); i++) {
        const dpprof_param *p = dpprof_session_param(a, i), *q = dpprof_session_param(b, i);
        const dpprof_tensor *x = which == 'w' ? &p->w : &p->g, *y = which == 'w' ? &q->w : &q->g;
        if (x->n != y->n || (x->n && memcmp(x->data, y->data, (size_t)x->n * (size_t)x->elem_size) != 0)) return i;
    }
    return -1;
}

/* --checkpoint layers against none, every algorithm (vanilla too), physical batches of phys: the recomputation
   runs the forward's ops on the same inputs in the same order, on one thread, so the per-sample losses, norms
   and clip factors, the clipped sum (vanilla: the gradient) and two noisy updates must be the same bits, in
   float storage and in the double build: no tolerance */
static void check_checkpoint(int cls, int per_layer, int phys) {
    int a, tok[B * T], tgt[B * T];
    char name[128];
    batch(tok, tgt, cls);
    for (a = -1; a < (int)(sizeof algos / sizeof algos[0]); a++) {
        const int algo = a < 0 ? DPPROF_ALGO_VANILLA : algos[a], dp = a >= 0;
        dpprof_session *s[2] = {NULL, NULL};
        double loss[2][B], norms[2][B], clip[2][B];
        int k, rc = DPPROF_OK, d;
        snprintf(name, sizeof name, "checkpoint %s%s%s%s, physical %d: %s", cls ? "cls" : "lm", use_lora ? (use_head ? "+lora, head trains" : "+lora") : "", use_narrow ? " narrow" : "", per_layer ? " per-layer" : "", phys,
                 dpprof_algo_name(algo));
        for (k = 0; k < 2 && rc == DPPROF_OK; k++) {
            dpprof_config c = small(cls, algo);
            c.checkpoint = k ? DPPROF_CHECKPOINT_LAYERS : DPPROF_CHECKPOINT_NONE;
            c.physical_batch = phys;
            c.steps = 2;
            if (dp) c.max_grad_norm = 0.5, c.sigma = 0.7, c.per_layer_clipping = per_layer;
            rc = dpprof_session_create(&c, &s[k]);
            if (rc == DPPROF_OK) perturb_lora(s[k]);
            if (rc == DPPROF_OK) rc = dpprof_session_loss(s[k], tok, tgt, B, loss[k]);
            if (rc == DPPROF_OK) rc = dp ? dpprof_session_clipped_grad(s[k], tok, tgt, B, norms[k], clip[k]) : dpprof_session_grad(s[k], tok, tgt, B, NULL);
        }
        CHECK(rc == DPPROF_OK, "%s: with and without checkpointing (%s)", name, rc ? dpprof_last_error() : "ok");
        if (rc == DPPROF_OK) {
            CHECK(!memcmp(loss[0], loss[1], sizeof loss[0]), "%s: per-sample losses, bit for bit", name);
            if (dp) CHECK(!memcmp(norms[0], norms[1], sizeof norms[0]) && (per_layer || !memcmp(clip[0], clip[1], sizeof clip[0])),
                          "%s: per-sample norms%s, bit for bit (%.6g .. %.6g)", name, per_layer ? "" : " and clip factors", norms[0][0], norms[0][B - 1]);
            d = differing_tensor(s[0], s[1], 'g');
            CHECK(d < 0, "%s: the %s, bit for bit (first differing: %s)", name, dp ? "clipped sum" : "gradient", d < 0 ? "none" : dpprof_session_param(s[0], d)->name);
            /* two whole steps: sampling, forward, backward(s), clipping, noise, the update */
            for (k = 0; k < 2 && rc == DPPROF_OK; k++) rc = dpprof_session_run(s[k]);
            d = rc == DPPROF_OK ? differing_tensor(s[0], s[1], 'w') : -1;
            CHECK(rc == DPPROF_OK && d < 0 && dpprof_session_step_loss(s[0], 0) == dpprof_session_step_loss(s[1], 0) && dpprof_session_step_loss(s[0], 1) == dpprof_session_step_loss(s[1], 1),
                  "%s: two noisy steps: losses and updated weights, bit for bit (%s; first differing: %s)", name, rc ? dpprof_last_error() : "ok", d < 0 ? "none" : dpprof_session_param(s[0], d)->name);
        }
        dpprof_session_destroy(s[0]);
        dpprof_session_destroy(s[1]);
    }
}

/* what auto chose, tensor by tensor, with auto_materialise = 1: with book-keeping, a linear layer whose
   input is at most T wide (fp32: its per-sample gradients take no more bytes than its cached output
   gradient), or whose per-sample gradients take no more than its input and output gradient together
   (OC IC <= T (OC + IC)), materialised, the others flash; the two-pass fallback (a memory limit too small
   for the cache) materialises nothing, nor does auto_materialise = -1 */
static void check_auto_methods(void) {
    int lim, i;
    int64_t bk_peak = 0;
    { /* what auto's probe measures: flash_bk's peak on the dry backend, one step */
        dpprof_config c = small(0, DPPROF_ALGO_FLASH_BK);
        dpprof_session *d;
        c.backend = DPPROF_BACKEND_DRY;
        c.steps = 1;
        if (dpprof_session_create(&c, &d) == DPPROF_OK && dpprof_session_step(d) == DPPROF_OK) bk_peak = dpprof_session_prof(d)->peak_bytes;
        dpprof_session_destroy(d);
        CHECK(bk_peak > 0, "auto: flash_bk's dry peak for the memory limit (%lld bytes)", (long long)bk_peak);
    }
    for (lim = 0; lim < 4; lim++) { /* 0: no limit, both rules unmeasured; 3: no limit, the width rule alone */
        dpprof_config c = small(0, DPPROF_ALGO_AUTO);
        dpprof_session *s;
        int mat = 0, flash = 0, wrong = 0, ghost = 0;
        c.auto_materialise = lim == 2 ? -1 : (lim == 3 ? 2 : 1);
        if (lim == 1) c.memory_limit = bk_peak - 1; /* the cache does not fit: auto takes the second backward */
        if (dpprof_session_create(&c, &s) != DPPROF_OK) {
            CHECK(0, "auto (%s): session (%s)", use_narrow ? "narrow" : "16 wide", dpprof_last_error());
            continue;
        }
        for (i = 0; i < dpprof_session_param_count(s); i++) {
            const dpprof_param *p = dpprof_session_param(s, i);
            const char *m = dpprof_session_param_method(s, i);
            int is_mat = !strcmp(m, "per-sample gradient materialised");
            if (p->rows == 1 || !p->trainable || strstr(p->name, "embed")) continue;
            mat += is_mat;
            flash += !strncmp(m, "flash:", 6);
            ghost += !strcmp(m, "gram T x T materialised");
            wrong += is_mat != ((!lim || lim == 3) && (p->cols <= T || (lim == 0 && (double)p->cols * p->rows <= (double)T * (p->cols + p->rows))));
        }
        /* auto_ghost 0 off the gpu: ghost is never taken (flash needs no more flops) */
        CHECK(ghost == 0, "auto, %s, auto_ghost 0 on the cpu: %d linear tensors on ghost's grams", use_narrow ? "4 wide" : "16 wide", ghost);
        /* narrow: the width rule takes q, k, v, o, gate, up and the head (4 <= T), both rules every layer; 16 wide:
           the width rule none, both rules k and v */
        CHECK(wrong == 0 && (lim == 1 || lim == 2 ? mat == 0 : (lim == 3 && !use_narrow ? mat == 0 : (lim == 0 && use_narrow ? mat > 0 && flash == 0 : mat > 0 && flash > 0))),
              "auto, %s, %s: %d linear tensors materialised, %d flash, %d against the rule (book-keeping only; input width <= T = %d%s)", use_narrow ? "4 wide" : "16 wide",
              lim == 2 ? "auto_materialise -1" : (lim == 1 ? "memory limit below flash_bk's peak (two passes)" : (lim == 3 ? "no limit, the width rule alone" : "no limit, both rules")),
              mat, flash, wrong, T, lim == 0 ? ", or OC IC <= T (OC + IC)" : "");
        dpprof_session_destroy(s);
    }
    { /* auto_ghost 1: every linear tensor not materialised takes ghost's grams (with book-keeping) */
        dpprof_config c = small(0, DPPROF_ALGO_AUTO);
        dpprof_session *s;
        int ghost = 0, other = 0;
        c.auto_ghost = 1;
        if (dpprof_session_create(&c, &s) == DPPROF_OK) {
            for (i = 0; i < dpprof_session_param_count(s); i++) {
                const dpprof_param *p = dpprof_session_param(s, i);
                const char *m = dpprof_session_param_method(s, i);
                if (p->rows == 1 || !p->trainable || strstr(p->name, "embed") || !strcmp(m, "per-sample gradient materialised")) continue;
                if (!strcmp(m, "gram T x T materialised")) ghost++;
                else other++;
            }
            dpprof_session_destroy(s);
        }
        CHECK(ghost > 0 && other == 0, "auto, %s, auto_ghost 1: %d linear tensors on ghost's grams, %d on anything else but materialised", use_narrow ? "4 wide" : "16 wide", ghost, other);
        c.auto_ghost = 2;
        CHECK(dpprof_session_create(&c, &s) == DPPROF_ERR_INVALID && strstr(dpprof_last_error(), "auto_ghost = 2"), "auto_ghost = 2 is refused: %s", dpprof_last_error());
    }
}

/* a logical batch of 8 as 1x8, 2x4, 4x2, 8x1 physical batches: the same noisy update */
static void check_splits(void) {
    static const int phys[] = {8, 4, 2, 1};
    double *w0 = NULL;
    size_t P = 0;
    int k, a;
    for (a = 0; a < 2; a++) {
        int algo = a ? DPPROF_ALGO_FLASH : DPPROF_ALGO_GHOST_BK;
        for (k = 0; k < 4; k++) {
            dpprof_config c = small(0, algo);
            dpprof_session *s;
            double *w, d = 0, wmax = 0;
            size_t j = 0;
            int i;
            c.batch = 8;
            c.physical_batch = phys[k];
            c.sigma = 0.7;
            c.max_grad_norm = 0.5;
            c.steps = 1;
            c.lr = 1.0;
            dpprof_session_create(&c, &s);
            dpprof_session_run(s);
            if (!P)
                for (i = 0; i < dpprof_session_param_count(s); i++) P += (size_t)dpprof_session_param(s, i)->w.n;
            w = (double *)malloc(P * sizeof(double));
            for (i = 0; i < dpprof_session_param_count(s); i++) {
                dpprof_param *p = dpprof_session_param(s, i);
                int64_t e;
                for (e = 0; e < p->w.n; e++) w[j++] = (double)((dpprof_real *)p->w.data)[e];
            }
            if (k == 0) w0 = w;
            else {
                for (j = 0; j < P; j++) {
                    d = fmax(d, fabs(w[j] - w0[j]));
                    wmax = fmax(wmax, fabs(w0[j]));
                }
                CHECK(d <= 1e-6 * wmax, "%s, sigma 0.7: 8 samples as %d x %d gives the 1 x 8 update (max difference %.2e, max |w| %.2e)", dpprof_algo_name(algo), 8 / phys[k], phys[k], d, wmax);
                free(w);
            }
            dpprof_session_destroy(s);
        }
        free(w0);
        w0 = NULL;
        P = 0;
    }
}

/* the noise of one step, recovered from an sgd update with lr 1:
   w1 = w0 - (clipped sum + sigma C z) / B, so z = (B (w0 - w1) - clipped sum) / (sigma C) */
static void check_noise(void) {
    dpprof_config c;
    dpprof_session *s0, *s1;
    int tok[8 * 32], tgt[8 * 32], i;
    double m = 0, v = 0, nn = 0, sigma = 1.3, C = 0.25;
    memset(&c, 0, sizeof c);
    c.preset = "tiny";
    c.seq = 32;
    c.batch = 8;
    c.physical_batch = 4;
    c.algo = DPPROF_ALGO_FLASH_BK;
    c.optimizer = DPPROF_OPT_SGD;
    c.lr = 1.0;
    c.sigma = sigma;
    c.max_grad_norm = C;
    c.steps = 1;
    c.seed = 5;
    c.backend = DPPROF_BACKEND_CPU;
    dpprof_session_create(&c, &s0);
    dpprof_session_create(&c, &s1);
    dpprof_session_batch(s0, 0, 0, 8, tok, tgt);
    dpprof_session_clipped_grad(s0, tok, tgt, 8, NULL, NULL);
    dpprof_session_run(s1);
    for (i = 0; i < dpprof_session_param_count(s0); i++) {
        dpprof_param *p0 = dpprof_session_param(s0, i), *p1 = dpprof_session_param(s1, i);
        int64_t e;
        for (e = 0; e < p0->w.n; e++) {
            double w0 = (double)((dpprof_real *)p0->w.data)[e], w1 = (double)((dpprof_real *)p1->w.data)[e];
            double z = (8.0 * (w0 - w1) - (double)((dpprof_real *)p0->g.data)[e]) / (sigma * C);
            m += z;
            v += z * z;
            nn++;
        }
    }
    m /= nn;
    v = v / nn - m * m;
    /* 6 standard errors: a correct generator fails each with probability ~2e-9 */
    CHECK(fabs(m) < 6.0 / sqrt(nn), "noise: mean of %.0f recovered N(0,1) draws is %.5f (|mean| < 6/sqrt(n) = %.5f; false-failure probability ~2e-9)", nn, m, 6.0 / sqrt(nn));
    CHECK(fabs(v - 1.0) < 6.0 * sqrt(2.0 / nn) + 1e-3, "noise: variance %.5f (|var - 1| < 6 sqrt(2/n) + 1e-3 float rounding = %.5f)", v, 6.0 * sqrt(2.0 / nn) + 1e-3);
    dpprof_session_destroy(s0);
    dpprof_session_destroy(s1);
    /* same seed: the same noise; another seed: other noise */
    {
        dpprof_session *a, *b2;
        int same = 1, diff = 0;
        dpprof_session_create(&c, &a);
        dpprof_session_run(a);
        c.seed = 6;
        dpprof_session_create(&c, &b2);
        dpprof_session_run(b2);
        dpprof_session_destroy(s1 = NULL);
        dpprof_session_create((c.seed = 5, &c), &s1);
        dpprof_session_run(s1);
        for (i = 0; i < dpprof_session_param_count(a); i++) {
            same &= !memcmp(dpprof_session_param(a, i)->w.data, dpprof_session_param(s1, i)->w.data, (size_t)dpprof_session_param(a, i)->w.n * sizeof(dpprof_real));
            diff |= memcmp(dpprof_session_param(a, i)->w.data, dpprof_session_param(b2, i)->w.data, (size_t)dpprof_session_param(a, i)->w.n * sizeof(dpprof_real)) != 0;
        }
        CHECK(same, "noise: deterministic per seed (bitwise-identical noisy update)");
        CHECK(diff, "noise: another seed gives another update");
        dpprof_session_destroy(a);
        dpprof_session_destroy(b2);
        dpprof_session_destroy(s1);
    }
}

/* memory on the dry backend follows the theory of each algorithm */
/* measure: with --op-times and a warm-up step, which only time (the dry backend has nothing to time) */
static dpprof_config dry_config(const char *preset, int algo, int b, int seq) {
    dpprof_config c;
    memset(&c, 0, sizeof c);
    c.preset = preset;
    c.seq = seq;
    c.batch = b;
    c.algo = (dpprof_algo)algo;
    c.steps = 1;
    c.backend = DPPROF_BACKEND_DRY;
    return c;
}
static const dpprof_prof *dry_preset(dpprof_session **s, const char *preset, int algo, int b, int seq, int measure) {
    dpprof_config c = dry_config(preset, algo, b, seq);
    c.op_times = c.warmup = measure;
    if (dpprof_session_create(&c, s) != DPPROF_OK || dpprof_session_run(*s) != DPPROF_OK) return NULL;
    return dpprof_session_prof(*s);
}
static const dpprof_prof *dry(dpprof_session **s, int algo, int b, int seq) { return dry_preset(s, "llama-3.2-1b", algo, b, seq, 0); }

/* lora as PEFT runs it, on dry: what each category holds, by the byte, from the tensors' sizes. a frozen tensor has no
   gradient and no moments; in bf16 a frozen matmul weight or embedding table is 2 bytes an element (no fp32 master),
   a trained one 4 + 2, a norm vector 4; --frozen-masters keeps the master */
static void check_frozen_memory(void) {
    static const struct {
        const char *preset;
        int dtype, head, masters, algo;
    } cs[] = {
        {"llama-3.1-8b", DPPROF_DTYPE_BF16, DPPROF_SWITCH_AUTO, DPPROF_SWITCH_AUTO, DPPROF_ALGO_FLASH_BK},
        {"llama-3.1-8b", DPPROF_DTYPE_BF16, DPPROF_SWITCH_ON, DPPROF_SWITCH_AUTO, DPPROF_ALGO_GHOST_BK},
        {"llama-3.1-8b", DPPROF_DTYPE_BF16, DPPROF_SWITCH_AUTO, DPPROF_SWITCH_ON, DPPROF_ALGO_VANILLA},
        {"llama-3.1-8b", DPPROF_DTYPE_FP32, DPPROF_SWITCH_AUTO, DPPROF_SWITCH_AUTO, DPPROF_ALGO_PERSAMPLE},
        {"llama-3.2-1b", DPPROF_DTYPE_BF16, DPPROF_SWITCH_AUTO, DPPROF_SWITCH_AUTO, DPPROF_ALGO_AUTO},
        {"llama-3.2-1b", DPPROF_DTYPE_BF16, DPPROF_SWITCH_ON, DPPROF_SWITCH_AUTO, DPPROF_ALGO_FLASH},
    };
    size_t k;
    for (k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        dpprof_config c = dry_config(cs[k].preset, cs[k].algo, 2, 128);
        dpprof_session *s = NULL;
        int64_t want_mp = 0, want_lora = 0, want_g = 0, trained = 0;
        int i, rc;
        const int bf16 = cs[k].dtype == DPPROF_DTYPE_BF16;
        char name[160];
        c.dtype = (dpprof_dtype)cs[k].dtype;
        c.lora_rank = 16;
        c.train_head = (dpprof_switch)cs[k].head;
        c.frozen_masters = (dpprof_switch)cs[k].masters;
        snprintf(name, sizeof name, "lora on dry, %s %s %s%s%s", cs[k].preset, bf16 ? "bf16" : "fp32", dpprof_algo_name(c.algo), cs[k].head == DPPROF_SWITCH_ON ? ", --train-head" : "",
                 cs[k].masters == DPPROF_SWITCH_ON ? ", --frozen-masters" : "");
        rc = dpprof_session_create(&c, &s);
        if (rc == DPPROF_OK) rc = dpprof_session_run(s);
        CHECK(rc == DPPROF_OK, "%s: runs (%s)", name, rc ? dpprof_last_error() : "ok");
        if (rc != DPPROF_OK) {
            dpprof_session_destroy(s);
            continue;
        }
        for (i = 0; i < dpprof_session_param_count(s); i++) {
            dpprof_param *p = dpprof_session_param(s, i);
            const int64_t n = p->w.n, norm = p->rows == 1, head = !strcmp(p->name, "lm_head.weight") || (i == 0 && strstr(cs[k].preset, "3.2-1b"));
            const int64_t matmul = !norm && (strcmp(p->name, "model.embed_tokens.weight") || strstr(cs[k].preset, "3.2-1b")); /* the tied table is the head */
            int64_t bytes;
            if (p->trainable) trained += n;
            if (p->trainable != (strstr(p->name, "lora_") || (head && cs[k].head == DPPROF_SWITCH_ON)))
                CHECK(0, "%s: %s %s, as PEFT would have it", name, p->name, p->trainable ? "trains" : "is frozen");
            if (norm || !bf16) bytes = ES * n;
            else if (p->trainable || cs[k].masters == DPPROF_SWITCH_ON) bytes = matmul ? (ES + 2) * n : ES * n;
            else bytes = 2 * n;
            if (strstr(p->name, "lora_")) want_lora += bytes;
            else want_mp += bytes;
        }
        want_g = ES * trained;
        {
            const dpprof_prof *pr = dpprof_session_prof(s);
            CHECK(pr->max_by_cat[DPPROF_CAT_MODEL_PARAMETERS] == want_mp && pr->max_by_cat[DPPROF_CAT_LORA] == want_lora,
                  "%s: model_parameters %lld bytes (%.2f GiB; from the sizes %lld), lora %lld (%lld)", name, (long long)pr->max_by_cat[DPPROF_CAT_MODEL_PARAMETERS],
                  (double)pr->max_by_cat[DPPROF_CAT_MODEL_PARAMETERS] / 1073741824.0, (long long)want_mp, (long long)pr->max_by_cat[DPPROF_CAT_LORA], (long long)want_lora);
            CHECK(pr->max_by_cat[DPPROF_CAT_GRADIENTS] == want_g && pr->max_by_cat[DPPROF_CAT_OPTIMIZER_STATES] == 2 * want_g && trained == dpprof_session_param_elems(s, 1),
                  "%s: gradients %lld bytes, optimizer states %lld: 4 and 8 bytes a trained element (%lld), nothing for a frozen one", name,
                  (long long)pr->max_by_cat[DPPROF_CAT_GRADIENTS], (long long)pr->max_by_cat[DPPROF_CAT_OPTIMIZER_STATES], (long long)trained);
        }
        dpprof_session_destroy(s);
    }
}

/* auto's plan is a function of its rates: on dry, with rates given, each candidate is chosen where its rate is best
   (the flash flavours, ghost's grams, where the flash norms run, the bf16 clipped gradient's kernel, the noise's pass) */
static void check_auto_plan_rates(void) {
    static const struct {
        const char *what;
        double gram, psg, gram_cb, psg_cb, ghost, cg[3], noise[2];
        int ghost_sw;
    } cs[] = {
        {"the gram flavour fastest", 1e15, 1e12, 0, 0, 0, {1e12, 0, 0}, {2, 1}, DPPROF_SWITCH_OFF},
        {"the psg flavour fastest", 1e12, 1e15, 0, 0, 0, {0, 1e12, 0}, {1, 2}, DPPROF_SWITCH_OFF},
        {"ghost's grams fastest", 1e12, 1e12, 0, 0, 1e18, {1e12, 1e12, 1e15}, {1, 1}, DPPROF_SWITCH_AUTO},
        {"the gram flavour on cuBLAS blocks, psg on the kernels", 1e13, 1e12, 1e15, 1e11, 0, {1e12, 1e15, 1e13}, {2, 1}, DPPROF_SWITCH_OFF},
    };
    size_t k;
    for (k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        dpprof_config c = dry_config("llama-3.2-1b", DPPROF_ALGO_AUTO, 8, 1024);
        dpprof_rates r;
        dpprof_session *s = NULL;
        const dpprof_plan *pl;
        int i, rc, lin = 0, want = 0, cg_ok = 0, cg_n = 0, f, best_cg = 0;
        memset(&r, 0, sizeof r);
        r.gram = cs[k].gram, r.psg = cs[k].psg, r.gram_cublas = cs[k].gram_cb, r.psg_cublas = cs[k].psg_cb, r.ghost = cs[k].ghost;
        for (f = 0; f < 3; f++) {
            r.clipgrad[f] = cs[k].cg[f];
            if (f < 2 && cs[k].cg[f] > cs[k].cg[best_cg]) best_cg = f; /* the batched GEMM is no candidate of auto's: not exact */
        }
        r.noise_ms[0] = cs[k].noise[0], r.noise_ms[1] = cs[k].noise[1];
        c.physical_batch = 2;
        c.dtype = DPPROF_DTYPE_BF16;
        c.sigma = 1;
        c.auto_materialise = DPPROF_MATERIALISE_NEVER;
        c.auto_ghost = (dpprof_switch)cs[k].ghost_sw;
        c.rates = &r;
        rc = dpprof_session_create(&c, &s);
        CHECK(rc == DPPROF_OK, "auto on dry, given rates (%s): a session (%s)", cs[k].what, rc ? dpprof_last_error() : "ok");
        if (rc != DPPROF_OK) continue;
        pl = dpprof_session_plan(s);
        for (i = 0; i < dpprof_session_param_count(s); i++) {
            const dpprof_param *p = dpprof_session_param(s, i);
            const char *m = dpprof_session_param_method(s, i);
            if (p->rows == 1 || i == 0) continue; /* the norm vectors, the embedding (token pairs; its head use: head_method) */
            lin++;
            want += k == 0 ? !strcmp(m, "flash: tiled gram") : (k == 1 ? !strcmp(m, "flash: tiled per-sample gradient") : (k == 2 ? !strcmp(m, "gram T x T materialised") : !strncmp(m, "flash", 5)));
            cg_n++;
            cg_ok += pl->tensor[i].clipgrad == (dpprof_clipgrad)best_cg;
        }
        CHECK(lin > 0 && want == lin, "auto on dry, given rates (%s): %d of %d linear layers take it", cs[k].what, want, lin);
        if (k == 2) CHECK(pl->ghost, "auto on dry, given rates (%s): the dry probe let ghost's grams in", cs[k].what);
        if (k == 3)
            CHECK(pl->gram_on == DPPROF_NORMS_CUBLAS && pl->psg_on == DPPROF_NORMS_KERNELS, "auto on dry, given rates (%s): gram_on cublas, psg_on kernels", cs[k].what);
        else CHECK(pl->gram_on == DPPROF_NORMS_KERNELS && pl->psg_on == DPPROF_NORMS_KERNELS, "auto on dry, given rates (%s): both flavours on dpprof's kernels", cs[k].what);
        CHECK(cg_n > 0 && cg_ok == cg_n && !pl->batched, "auto on dry, given rates (%s): every linear layer's clipped gradient on the fastest exact kernel, %s (%d of %d)%s", cs[k].what,
              best_cg ? "the fused kernel" : "cuBLAS per sample", cg_ok, cg_n, cs[k].cg[2] > cs[k].cg[best_cg] ? "; not the batched GEMM, though its rate is the best" : "");
        CHECK(pl->fused_noise == (cs[k].noise[1] < cs[k].noise[0]), "auto on dry, given rates (%s): the noise %s", cs[k].what,
              pl->fused_noise ? "in the optimizer's pass (one pass faster)" : "on a pass of its own (two passes no slower)");
        CHECK(pl->rates_given && pl->rates.gram == r.gram, "auto on dry, given rates (%s): the plan says its rates were given", cs[k].what);
        dpprof_session_destroy(s);
    }
    { /* rates with another algorithm, or not rates, are refused */
        dpprof_config c = dry_config("tiny", DPPROF_ALGO_FLASH_BK, 2, 16);
        dpprof_rates r;
        dpprof_session *s = NULL;
        memset(&r, 0, sizeof r);
        c.rates = &r;
        CHECK(dpprof_session_create(&c, &s) == DPPROF_ERR_INVALID && strstr(dpprof_last_error(), "config.rates"), "given rates with algo flash_bk: refused (%s)", dpprof_last_error());
        c.algo = DPPROF_ALGO_AUTO;
        r.psg = -1;
        CHECK(dpprof_session_create(&c, &s) == DPPROF_ERR_INVALID && strstr(dpprof_last_error(), "-1 is not a rate"), "a negative rate: refused (%s)", dpprof_last_error());
    }
}

static void check_memory_theory(void) {
    dpprof_session *s1, *s2;
    const dpprof_prof *p1, *p2;
    int64_t params;
    dpprof_shape sh;
    int64_t widths;
    dpprof_preset_shape("llama-3.2-1b", &sh);
    /* persample: every trainable tensor's per-sample gradient at once: 4 b |theta| bytes */
    p1 = dry(&s1, DPPROF_ALGO_PERSAMPLE, 2, 128);
    p2 = dry(&s2, DPPROF_ALGO_PERSAMPLE, 4, 128);
    params = dpprof_session_param_elems(s1, 1);
    CHECK(p1 && p1->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] == ES * 2 * params, "persample: per-sample gradients peak at %d x b x |theta| = %.2f GiB (b = 2)", (int)ES, (double)ES * 2 * (double)params / 1073741824.0);
    CHECK(p2 && p2->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] == 2 * p1->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS], "persample: and grow linearly with b (b = 4: %.2f GiB)", (double)p2->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] / 1073741824.0);
    dpprof_session_destroy(s1);
    dpprof_session_destroy(s2);
    /* ghost: two (b, T, T) gram matrices for one layer at a time */
    p1 = dry(&s1, DPPROF_ALGO_GHOST, 2, 512);
    p2 = dry(&s2, DPPROF_ALGO_GHOST, 2, 1024);
    CHECK(p1 && p1->max_by_cat[DPPROF_CAT_TEMP_MATRICES] == (int64_t)2 * 2 * 512 * 512 * ES, "ghost: gram temporaries peak at 2 x b x T^2 x element bytes (T = 512)");
    CHECK(p2 && p2->max_by_cat[DPPROF_CAT_TEMP_MATRICES] == 4 * p1->max_by_cat[DPPROF_CAT_TEMP_MATRICES], "ghost: and grow with T^2 (T = 1024: x4)");
    dpprof_session_destroy(s1);
    dpprof_session_destroy(s2);
    /* flash: the dp-only memory does not depend on T */
    {
        int64_t e1, e2;
        p1 = dry(&s1, DPPROF_ALGO_FLASH, 2, 256);
        p2 = dry(&s2, DPPROF_ALGO_FLASH, 2, 2048);
        e1 = p1->max_by_cat[DPPROF_CAT_TEMP_MATRICES] + p1->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] + p1->max_by_cat[DPPROF_CAT_ACTIVATION_HOOKS] + p1->max_by_cat[DPPROF_CAT_NORM_SAMPLES];
        e2 = p2->max_by_cat[DPPROF_CAT_TEMP_MATRICES] + p2->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] + p2->max_by_cat[DPPROF_CAT_ACTIVATION_HOOKS] + p2->max_by_cat[DPPROF_CAT_NORM_SAMPLES];
        CHECK(e1 == e2 && p1->max_by_cat[DPPROF_CAT_TEMP_MATRICES] == 0, "flash: dp-only memory is %lld bytes at T = 256 and %lld at T = 2048 (no T x T, no (p, d) per sample)", (long long)e1, (long long)e2);
        dpprof_session_destroy(s1);
        dpprof_session_destroy(s2);
    }
    /* book-keeping: the cache holds every trainable layer's output gradient: 4 b T (sum of widths) */
    widths = (int64_t)sh.L * (sh.NH * sh.HS + 2 * sh.NKV * sh.HS + sh.C + 2 * sh.F + sh.C) + sh.V + sh.C; /* layers, head, embedding */
    p1 = dry(&s1, DPPROF_ALGO_GHOST_BK, 2, 128);
    p2 = dry(&s2, DPPROF_ALGO_FLASH_BK, 4, 256);
    CHECK(p1 && p1->max_by_cat[DPPROF_CAT_ACTIVATION_HOOKS] == ES * 2 * 128 * widths, "book-keeping: the cache peaks at element bytes x b x T x (sum of output widths %lld) = %.1f MiB", (long long)widths, (double)ES * 2 * 128 * (double)widths / 1048576.0);
    CHECK(p2 && p2->max_by_cat[DPPROF_CAT_ACTIVATION_HOOKS] == ES * 4 * 256 * widths, "book-keeping: and grows with b x T (b = 4, T = 256)");
    dpprof_session_destroy(s1);
    dpprof_session_destroy(s2);
    /* auto at b = 1 and long T (every linear layer of llama-3.2-1b but down, 8192 wide, has its input at
       most T wide at T = 4096; every one of longctx's at T = 16384): materialised per-sample gradients
       replace the cached output gradients and the clipped sum's GEMM where the exact dry run shows the
       peak does not grow. never above flash_bk's peak; at T = 16384 it is taken, with fewer FLOPs */
    {
        static const char *const presets[2] = {"llama-3.2-1b", "longctx"};
        static const int seqs[2] = {4096, 16384};
        int k;
        for (k = 0; k < 2; k++) {
            double f[3] = {0, 0, 0};
            const dpprof_prof *pp[3];
            dpprof_session *ss[3];
            int a;
            size_t ph;
            for (a = 0; a < 3; a++) {
                pp[a] = dry_preset(&ss[a], presets[k], a ? DPPROF_ALGO_AUTO : DPPROF_ALGO_FLASH_BK, 1, seqs[k], a == 2);
                for (ph = 0; pp[a] && ph < pp[a]->n_phases; ph++) f[a] += pp[a]->phases[ph].flops;
            }
            /* auto's dry probe asks for bytes alone: a run that also times (--op-times, as make bench does)
               chooses the same methods, so the same peak */
            CHECK(pp[1] && pp[2] && pp[2]->peak_bytes == pp[1]->peak_bytes, "auto, %s, b = 1, T = %d, with --op-times and a warm-up step: the same peak (%.3f GiB) as without",
                  presets[k], seqs[k], pp[2] ? (double)pp[2]->peak_bytes / 1073741824.0 : 0.0);
            dpprof_session_destroy(ss[2]);
            CHECK(pp[0] && pp[1] && pp[1]->peak_bytes <= pp[0]->peak_bytes && (k == 0 || (f[1] < 0.9 * f[0] && pp[1]->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] > 0)),
                  "auto, %s, b = 1, T = %d: peak %.3f GiB (flash_bk %.3f), %.1f TFLOP (flash_bk %.1f), %.3f GiB of per-sample gradients at most", presets[k], seqs[k],
                  pp[1] ? (double)pp[1]->peak_bytes / 1073741824.0 : 0.0, pp[0] ? (double)pp[0]->peak_bytes / 1073741824.0 : 0.0, f[1] / 1e12, f[0] / 1e12,
                  pp[1] ? (double)pp[1]->max_by_cat[DPPROF_CAT_PER_SAMPLE_GRADIENTS] / 1073741824.0 : 0.0);
            dpprof_session_destroy(ss[0]);
            dpprof_session_destroy(ss[1]);
        }
    }
    /* auto with LoRA at short T: every adapter's per-sample gradients (r x IC or OC x r) are far smaller than
       its kept input and output gradient, so the dry run takes them all (A's by the second rule alone):
       no norm pass and no clipped GEMM for any adapter, never above flash_bk's peak, fewer FLOPs */
    {
        dpprof_session *ss[2] = {NULL, NULL};
        const dpprof_prof *pp[2];
        double f[2] = {0, 0};
        int a, i, lora = 0, mat = 0;
        size_t ph;
        for (a = 0; a < 2; a++) {
            dpprof_config c = dry_config("llama-3.2-1b", a ? DPPROF_ALGO_AUTO : DPPROF_ALGO_FLASH_BK, 2, 1024);
            c.lora_rank = 16;
            c.dtype = DPPROF_DTYPE_BF16;
            pp[a] = dpprof_session_create(&c, &ss[a]) == DPPROF_OK && dpprof_session_run(ss[a]) == DPPROF_OK ? dpprof_session_prof(ss[a]) : NULL;
            for (ph = 0; pp[a] && ph < pp[a]->n_phases; ph++) f[a] += pp[a]->phases[ph].flops;
        }
        for (i = 0; pp[1] && i < dpprof_session_param_count(ss[1]); i++) {
            const dpprof_param *p = dpprof_session_param(ss[1], i);
            if (!p->trainable || p->rows == 1 || !strstr(p->name, "lora")) continue;
            lora++;
            mat += !strcmp(dpprof_session_param_method(ss[1], i), "per-sample gradient materialised");
        }
        CHECK(pp[0] && pp[1] && lora > 0 && mat == lora && pp[1]->peak_bytes <= pp[0]->peak_bytes && f[1] < f[0],
              "auto, llama-3.2-1b LoRA r = 16, bf16, b = 2, T = 1024: %d of %d adapter tensors materialised, peak %.3f GiB (flash_bk %.3f), %.2f TFLOP (flash_bk %.2f)", mat, lora,
              pp[1] ? (double)pp[1]->peak_bytes / 1073741824.0 : 0.0, pp[0] ? (double)pp[0]->peak_bytes / 1073741824.0 : 0.0, f[1] / 1e12, f[0] / 1e12);
        dpprof_session_destroy(ss[0]);
        dpprof_session_destroy(ss[1]);
    }
}

/* poisson sampling: variable batch sizes, the same schedule on cpu and dry, and an empty batch
   whose update is the noise alone: w1 - w0 = -lr sigma C z / B with z the generator's draws */
static void check_poisson(void) {
    dpprof_config c = small(0, DPPROF_ALGO_GHOST), d;
    dpprof_session *s, *sd;
    int step, empty = 0, sizes = 0, ok = 1;
    double worst = 0;
    const char *why;
    c.batch = 2;
    c.physical_batch = 1;
    c.poisson = 1;
    c.dataset_size = 40;
    c.sigma = 0.5;
    c.max_grad_norm = 1.0;
    c.lr = 1.0;
    c.steps = 40;
    d = c;
    d.backend = DPPROF_BACKEND_DRY;
    CHECK(dpprof_session_create(&c, &s) == DPPROF_OK && dpprof_session_create(&d, &sd) == DPPROF_OK, "poisson: sessions (q = 2/40)");
    for (step = 0; step < c.steps; step++) {
        int i, np = dpprof_session_param_count(s);
        double **w0 = (double **)calloc((size_t)np, sizeof(double *));
        for (i = 0; i < np; i++) {
            dpprof_param *p = dpprof_session_param(s, i);
            int64_t e;
            w0[i] = (double *)malloc(sizeof(double) * (size_t)p->w.n);
            for (e = 0; e < p->w.n; e++) w0[i][e] = (double)((dpprof_real *)p->w.data)[e];
        }
        ok &= dpprof_session_step(s) == DPPROF_OK && dpprof_session_step(sd) == DPPROF_OK;
        if (dpprof_session_step_loss(s, step) != dpprof_session_step_loss(s, step)) { /* nan: nobody was sampled */
            uint64_t off = 0;
            empty++;
            for (i = 0; i < np; i++) {
                dpprof_param *p = dpprof_session_param(s, i);
                int64_t e;
                for (e = 0; e < p->w.n; e++) {
                    double z = -((double)((dpprof_real *)p->w.data)[e] - w0[i][e]) * c.batch / (c.sigma * c.max_grad_norm);
                    worst = fmax(worst, fabs(z - dpprof_normal(dpprof_noise_seed(c.seed), (uint64_t)step, off + (uint64_t)e)));
                }
                off += (uint64_t)p->w.n;
            }
        } else sizes++;
        for (i = 0; i < np; i++) free(w0[i]);
        free(w0);
    }
    CHECK(ok, "poisson: %d steps run on cpu and dry", c.steps);
    CHECK(empty > 0 && sizes > 0, "poisson: %d of %d steps drew nobody, %d drew someone", empty, c.steps, sizes);
    CHECK(empty > 0 && worst < 1e-4, "poisson: an empty batch's update is exactly the noise / B (max |z - generator| %.2e)", worst);
    CHECK(dpprof_prof_same_memory(dpprof_session_prof(s), dpprof_session_prof(sd), &why), "poisson: cpu and dry draw the same batches: byte-identical profiles%s%s", *why ? ", differs in " : "", why);
    dpprof_session_destroy(s);
    dpprof_session_destroy(sd);
}

int main(int argc, char **argv) {
#ifdef DPPROF_REF_DOUBLE
    if (argc == 3 && !strcmp(argv[1], "--ref")) return print_reference(argv[2]);
#endif
    if (argc > 0 && strrchr(argv[0], '/') && !strchr(argv[0], '\'') && strlen(argv[0]) < sizeof g_double_bin - 20)
        snprintf(g_double_bin, sizeof g_double_bin, "%.*s/test_dp_double", (int)(strrchr(argv[0], '/') - argv[0]), argv[0]);
    (void)argc;
    check_algorithms(0, 0);
    check_algorithms(1, 0);
    check_algorithms(0, 1);
    check_algorithms(1, 1);
    use_lora = 1; /* lora: only the adapters train (an lm head frozen as PEFT freezes it; a cls head trains) */
    check_algorithms(0, 0);
    check_algorithms(1, 1);
    check_checkpoint(0, 0, 2);
    use_head = 1; /* --train-head: the adapters and the lm head */
    check_algorithms(0, 0);
    check_algorithms(0, 1);
    check_checkpoint(0, 0, 2);
    use_head = 0;
    use_lora = 0;
    use_narrow = 1;
    check_algorithms(0, 0);
    check_algorithms(1, 1);
    check_checkpoint(0, 0, 2); /* auto materialises */
    use_narrow = 0;
    check_checkpoint(0, 0, B); /* one physical batch */
    check_checkpoint(0, 0, 2); /* accumulation: 2 + 2 + 1 */
    check_checkpoint(1, 1, 2);
    use_narrow = 1;
    check_auto_methods();
    use_tied = 1; /* the tied lm head: with auto's materialisation (narrow), lora, both clippings */
    check_algorithms(0, 0);
    use_narrow = 0;
    check_algorithms(0, 0);
    check_algorithms(0, 1);
    use_lora = 1; /* the shared matrix frozen (as PEFT leaves it), then trained through both of its uses */
    check_algorithms(0, 0);
    check_algorithms(0, 1);
    use_head = 1;
    check_algorithms(0, 0);
    check_algorithms(0, 1);
    use_lora = use_tied = use_head = 0;
    check_auto_methods();
    check_splits();
    check_noise();
    check_poisson();
    check_memory_theory();
    check_frozen_memory();
    check_auto_plan_rates();
    return test_finish();
}
