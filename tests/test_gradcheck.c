/* tests/test_gradcheck.c - every parameter tensor's gradient against central finite differences,
   the whole model computed in double (built with -DDPPROF_REF_DOUBLE), on tiny GQA configs of
   both heads, with repeated tokens. prints the worst error per tensor. run by make test. */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"
#include "test.h"

#include <math.h>
#include <string.h>

#define TOL 1e-7  /* max |analytic - fd| over a tensor, relative to the tensor's max |gradient| */
#define STEP 3e-6 /* central difference step; truncation ~ STEP^2 (the tied lora case at 1e-5: 6e-8), roundoff ~ 1e-16/STEP */

static double mean_loss(dpprof_session *s, const int *tok, const int *tgt, int n) {
    double l[8], m = 0;
    int i;
    if (dpprof_session_loss(s, tok, tgt, n, l) != DPPROF_OK) return NAN;
    for (i = 0; i < n; i++) m += l[i];
    return m / n;
}

/* tied: the lm head is the embedding's matrix (its gradient the sum of both uses'); head_dim: heads of
   another width than hidden / heads (as a Hugging Face config's head_dim may say) */
static void gradcheck(dpprof_task task, const char *name, int lora, int tied, int head_dim) {
    dpprof_config c;
    dpprof_session *s;
    int tok[3 * 6], tgt[3 * 6], i, n = 3, T = 6, all_ok = 1;
    double worst = 0;
    char worst_name[64] = "";
    memset(&c, 0, sizeof c);
    c.preset = "tiny";
    c.vocab = 11;
    c.hidden = 16;
    c.heads = 4;
    c.kv_heads = 2; /* grouped-query attention */
    c.ffn = 12;
    c.layers = 2;
    c.tie_embeddings = tied ? 1 : -1;
    c.head_dim = head_dim;
    c.seq = T;
    c.task = task;
    if (task == DPPROF_TASK_CLS) c.classes = 3;
    c.batch = n;
    c.init_std = 0.4; /* large weights: every path through the model carries signal */
    c.backend = DPPROF_BACKEND_CPU;
    c.seed = 3;
    if (lora) { /* adapters on every projection; only they train, with the head where it does (cls; lm with lora 2:
                   --train-head) */
        c.lora_rank = 2;
        c.train_head = lora == 2 ? DPPROF_SWITCH_ON : DPPROF_SWITCH_AUTO;
        c.lora_alpha = 3;
        c.lora_targets = "q,k,v,o,gate,up,down";
    }
    CHECK(sizeof(dpprof_real) == 8, "%s: the cpu reference runs in double", name);
    CHECK(dpprof_session_create(&c, &s) == DPPROF_OK, "%s: session", name);
    /* tokens with repeats inside each sequence (the embedding sums them) */
    for (i = 0; i < n * T; i++) {
        tok[i] = (i * 7 + i / 3) % 5;
        tgt[i] = task == DPPROF_TASK_LM ? (i * 5 + 1) % 11 : i % 3;
    }
    /* rmsnorm weights start at 1: perturb them so their gradients are generic */
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        dpprof_param *p = dpprof_session_param(s, i);
        int64_t e;
        if (p->rows == 1)
            for (e = 0; e < p->w.n; e++) ((double *)p->w.data)[e] = 1.0 + 0.3 * sin(1.0 + (double)e * 0.7 + i);
        if (strstr(p->name, "lora_B")) /* b starts at zero: move it so a's gradient is generic */
            for (e = 0; e < p->w.n; e++) ((double *)p->w.data)[e] = 0.3 * sin(0.9 + (double)e * 0.3 + i);
    }
    CHECK(dpprof_session_grad(s, tok, tgt, n, NULL) == DPPROF_OK, "%s: analytic gradient", name);
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        dpprof_param *p = dpprof_session_param(s, i);
        double *w = (double *)p->w.data, *g = (double *)p->g.data, maxg = 0, maxe = 0;
        int64_t e;
        if (!p->trainable) continue;
        for (e = 0; e < p->w.n; e++)
            if (fabs(g[e]) > maxg) maxg = fabs(g[e]);
        for (e = 0; e < p->w.n; e++) {
            double w0 = w[e], lp, lm, fd;
            w[e] = w0 + STEP;
            lp = mean_loss(s, tok, tgt, n);
            w[e] = w0 - STEP;
            lm = mean_loss(s, tok, tgt, n);
            w[e] = w0;
            fd = (lp - lm) / (2 * STEP);
            if (fabs(fd - g[e]) > maxe) maxe = fabs(fd - g[e]);
        }
        if (!(maxe <= TOL * maxg) || maxg == 0) all_ok = 0;
        if (maxg > 0 && maxe / maxg > worst) {
            worst = maxe / maxg;
            snprintf(worst_name, sizeof worst_name, "%s", p->name);
        }
        CHECK(maxe <= TOL * maxg && maxg > 0, "%s: %-44s max |g| %.3e, max |g - fd| %.3e (relative %.2e, tolerance %.0e)", name, p->name, maxg, maxe, maxg > 0 ? maxe / maxg : 0.0, TOL);
    }
    printf("# %s: worst relative error %.3e in %s (tolerance %.0e, central differences, step %.0e, double)\n", name, worst, worst_name, TOL, STEP);
    {
        int nt = 0;
        for (i = 0; i < dpprof_session_param_count(s); i++) nt += dpprof_session_param(s, i)->trainable;
        CHECK(all_ok && nt == (lora ? (lora == 2 || task == DPPROF_TASK_CLS) + 2 * 7 * 2 : dpprof_session_param_count(s)) &&
                  dpprof_session_param_count(s) == (lora ? 2 * 7 * 2 : 0) + 3 + 9 * 2 - tied,
              "%s: all %d trainable parameter tensors match finite differences", name, nt);
    }
    dpprof_session_destroy(s);
}

int main(void) {
    gradcheck(DPPROF_TASK_LM, "lm", 0, 0, 0);
    gradcheck(DPPROF_TASK_CLS, "cls", 0, 0, 0);
    gradcheck(DPPROF_TASK_LM, "lm+lora", 1, 0, 0);
    gradcheck(DPPROF_TASK_LM, "lm+lora, head trains", 2, 0, 0);
    gradcheck(DPPROF_TASK_CLS, "cls+lora", 1, 0, 0);
    gradcheck(DPPROF_TASK_LM, "lm tied", 0, 1, 0);
    gradcheck(DPPROF_TASK_LM, "lm tied+lora", 1, 1, 0);
    gradcheck(DPPROF_TASK_LM, "lm tied+lora, head trains", 2, 1, 0);
    gradcheck(DPPROF_TASK_LM, "lm head_dim 6", 0, 0, 6);
    return test_finish();
}
