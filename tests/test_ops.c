/* tests/test_ops.c - the cpu reference ops (forward, backward, optimizers, costs): every backward
   against central finite differences, attention against a naive T x T version, accumulation
   semantics, rope inverse, adam by hand. make test builds it twice: float (test_ops) and double
   (test_ops_double, -DDPPROF_REF_DOUBLE: h = 1e-6, tolerance 1e-6; float: h = 1e-2*max(1,|x|),
   tolerance 2e-2). one PASS/FAIL line per check; exits 1 on any failure. */
/* the implementation: build/impl-san.o or impl-san-double.o (tests/impl.c; Makefile) */
#include "dpprof.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef DPPROF_REF_DOUBLE
#define IS_DOUBLE 1
#define FD_H 1e-6
#define FD_REL_STEP 0
#define FD_TOL 1e-6
#define EXACT_TOL 1e-12 /* two double computations of the same value in a different order */
#define ACC_TOL 1e-15   /* a += b done twice vs 2*b */
#define STORE_TOL 1e-14 /* a value computed in double and stored */
#else
#define IS_DOUBLE 0
#define FD_H 1e-2
#define FD_REL_STEP 1
#define FD_TOL 2e-2
#define EXACT_TOL 1e-6
#define ACC_TOL 1e-6
#define STORE_TOL 1e-6
#endif

static int g_pass, g_fail;

/* err <= tol is false for nan, so a nan always fails */
static void check(const char *name, double err, double tol, const char *what) {
    int ok = err <= tol;
    printf("%s %s: %s %.3e (tol %.1e)\n", ok ? "PASS" : "FAIL", name, what, err, tol);
    if (ok)
        g_pass++;
    else
        g_fail++;
}

/* ---- helpers ---------------------------------------------------------------------------------- */

/* 64-bit lcg (knuth's mmix constants); top 53 bits as a uniform double */
static uint64_t g_rng = 0x243F6A8885A308D3ull;
static double rnd(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(g_rng >> 11) * (1.0 / 9007199254740992.0);
}
static double rnd_sym(void) { return 2.0 * rnd() - 1.0; }
static int rnd_int(int n) { return (int)(rnd() * n) % n; }

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}
static dpprof_real *alloc_real(size_t n) { return (dpprof_real *)xmalloc(n * sizeof(dpprof_real)); }
static double *alloc_dbl(size_t n) { return (double *)xmalloc(n * sizeof(double)); }
static dpprof_real *zeros(size_t n) {
    dpprof_real *p = alloc_real(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = 0;
    return p;
}
static dpprof_real *rand_real(size_t n, double scale) {
    dpprof_real *p = alloc_real(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = (dpprof_real)(scale * rnd_sym());
    return p;
}
static dpprof_real *copy_real(const dpprof_real *src, size_t n) {
    dpprof_real *p = alloc_real(n);
    memcpy(p, src, n * sizeof(dpprof_real));
    return p;
}
static double dot_rr(const dpprof_real *a, const dpprof_real *b, size_t n) {
    double s = 0.0;
    size_t i;
    for (i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* normwise relative error max|got - ref| / max|ref| (max|got| if ref is all zero); nan if any nan */
static double err_vs(const dpprof_real *got, const double *ref, size_t n) {
    double md = 0.0, mr = 0.0, mg = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        if (d != d) return NAN;
        if (d > md) md = d;
        if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
        if (fabs((double)got[i]) > mg) mg = fabs((double)got[i]);
    }
    if (mr == 0.0) mr = mg;
    return mr > 0.0 ? md / mr : 0.0;
}
/* max |a - b|, nan-propagating; for the checks that must agree to the bit */
static double maxdiff(const dpprof_real *a, const dpprof_real *b, size_t n) {
    double md = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d != d) return NAN;
        if (d > md) md = d;
    }
    return md;
}
/* relative error of a twice-called accumulating op against twice the once-called result */
static double err_doubled(const dpprof_real *twice, const dpprof_real *once, size_t n) {
    double *r = alloc_dbl(n), e;
    size_t i;
    for (i = 0; i < n; i++) r[i] = 2.0 * (double)once[i];
    e = err_vs(twice, r, n);
    free(r);
    return e;
}

/* ---- finite differences ----------------------------------------------------------------------- */

typedef double (*loss_fn)(void *ctx);

/* central differences of f with respect to every element of x, against the analytic gradient.
   the step actually taken is measured after rounding to dpprof_real, so float builds stay honest. */
static double fd_check(loss_fn f, void *ctx, dpprof_real *x, size_t n, const dpprof_real *analytic) {
    double *fd = alloc_dbl(n), e;
    size_t i;
    for (i = 0; i < n; i++) {
        dpprof_real save = x[i];
        double step = FD_REL_STEP ? FD_H * fmax(1.0, fabs((double)save)) : FD_H;
        double xp, xm, lp, lm;
        x[i] = (dpprof_real)(save + step);
        xp = x[i];
        lp = f(ctx);
        x[i] = (dpprof_real)(save - step);
        xm = x[i];
        lm = f(ctx);
        x[i] = save;
        fd[i] = (lp - lm) / (xp - xm);
    }
    e = err_vs(analytic, fd, n);
    free(fd);
    return e;
}

static void fd_report(const char *name, loss_fn f, void *ctx, dpprof_real *x, size_t n, const dpprof_real *analytic) {
    check(name, fd_check(f, ctx, x, n, analytic), FD_TOL, "max|analytic-fd|/max|fd|");
}

/* ---- 0. forwards against naive test-side versions ---------------------------------------------- */

static void test_forwards(void) {
    {
        int N = 5, IC = 70, OC = 7, n, o, i;
        dpprof_real *x = rand_real((size_t)N * IC, 1.0), *w = rand_real((size_t)OC * IC, 1.0);
        dpprof_real *y = alloc_real((size_t)N * OC);
        double *r = alloc_dbl((size_t)N * OC);
        dpprof_matmul_fwd_ref(y, x, w, N, IC, OC);
        for (n = 0; n < N; n++)
            for (o = 0; o < OC; o++) {
                double s = 0.0;
                for (i = 0; i < IC; i++) s += (double)x[n * IC + i] * w[o * IC + i];
                r[n * OC + o] = s;
            }
        check("fwd matmul vs naive", err_vs(y, r, (size_t)N * OC), STORE_TOL, "rel err");
        free(x);
        free(w);
        free(y);
        free(r);
    }
    {
        int N = 6, V = 4, C = 9, n;
        int tok[6] = {3, 0, 3, 2, 1, 3};
        dpprof_real *wte = rand_real((size_t)V * C, 1.0), *y = alloc_real((size_t)N * C);
        double worst = 0.0;
        dpprof_embedding_fwd_ref(y, tok, wte, N, C);
        for (n = 0; n < N; n++) {
            double d = maxdiff(y + n * C, wte + tok[n] * C, (size_t)C);
            if (!(d <= worst) && worst == worst) worst = d; /* a nan stays */
        }
        check("fwd embedding rows", worst, 0.0, "max abs diff");
        free(wte);
        free(y);
    }
    {
        int N = 4, C = 70, n, c;
        float eps = 1e-5f;
        dpprof_real *x = rand_real((size_t)N * C, 2.0), *w = rand_real((size_t)C, 1.0);
        dpprof_real *y = alloc_real((size_t)N * C), *rs = alloc_real((size_t)N);
        double *r = alloc_dbl((size_t)N * C), *rr = alloc_dbl((size_t)N);
        dpprof_rmsnorm_fwd_ref(y, rs, x, w, N, C, eps);
        for (n = 0; n < N; n++) {
            double ms = 0.0;
            for (c = 0; c < C; c++) ms += (double)x[n * C + c] * x[n * C + c] / C;
            rr[n] = 1.0 / sqrt(ms + eps);
            for (c = 0; c < C; c++) r[n * C + c] = x[n * C + c] * rr[n] * w[c];
        }
        check("fwd rmsnorm out vs naive", err_vs(y, r, (size_t)N * C), STORE_TOL, "rel err");
        check("fwd rmsnorm rstd vs naive", err_vs(rs, rr, (size_t)N), STORE_TOL, "rel err");
        free(x);
        free(w);
        free(y);
        free(rs);
        free(r);
        free(rr);
    }
    {
        size_t n = 41, i;
        dpprof_real *g = rand_real(n, 8.0), *u = rand_real(n, 1.0), *h = alloc_real(n);
        double *r = alloc_dbl(n);
        g[0] = -800; /* exp(800) overflows: silu must still give 0 */
        g[1] = 800;
        dpprof_swiglu_fwd_ref(h, g, u, n);
        for (i = 0; i < n; i++) r[i] = (double)g[i] * u[i] / (1.0 + exp(-(double)g[i]));
        check("fwd swiglu vs naive (incl. gate +-800)", err_vs(h, r, n), STORE_TOL, "rel err");
        free(g);
        free(u);
        free(h);
        free(r);
    }
    {
        int B = 3, T = 4, C = 5, b;
        dpprof_real *x = rand_real((size_t)B * T * C, 1.0), *y = alloc_real((size_t)B * C);
        double worst = 0.0;
        dpprof_last_token_fwd_ref(y, x, B, T, C);
        for (b = 0; b < B; b++) {
            double d = maxdiff(y + b * C, x + (b * T + T - 1) * C, (size_t)C);
            if (!(d <= worst) && worst == worst) worst = d; /* a nan stays */
        }
        check("fwd last_token rows", worst, 0.0, "max abs diff");
        free(x);
        free(y);
    }
    {
        int B = 2, T = 3, V = 13, b, t, i;
        int tg[6];
        dpprof_real *x = rand_real((size_t)B * T * V, 3.0), *l = alloc_real((size_t)B);
        double r[2];
        for (i = 0; i < B * T; i++) tg[i] = rnd_int(V);
        dpprof_crossentropy_fwd_ref(l, x, tg, B, T, V);
        for (b = 0; b < B; b++) {
            r[b] = 0.0;
            for (t = 0; t < T; t++) {
                double se = 0.0;
                const dpprof_real *row = x + (b * T + t) * V;
                for (i = 0; i < V; i++) se += exp((double)row[i]);
                r[b] += (log(se) - row[tg[b * T + t]]) / T;
            }
        }
        check("fwd crossentropy vs naive", err_vs(l, r, (size_t)B), STORE_TOL, "rel err");
        /* huge logits: all equal gives log V; a dominant target gives ~0, both without overflow */
        for (i = 0; i < B * T * V; i++) x[i] = 1000;
        dpprof_crossentropy_fwd_ref(l, x, tg, B, T, V);
        r[0] = r[1] = log((double)V);
        check("fwd crossentropy logits=1000 (= log V)", err_vs(l, r, (size_t)B), STORE_TOL, "rel err");
        for (i = 0; i < B * T * V; i++) x[i] = 0;
        for (i = 0; i < B * T; i++) x[i * V + tg[i]] = 1000;
        dpprof_crossentropy_fwd_ref(l, x, tg, B, T, V);
        check("fwd crossentropy dominant target (= 0)", fabs((double)l[0]) + fabs((double)l[1]), 1e-300, "abs loss");
        free(x);
        free(l);
    }
    {
        /* rope against the hf formula written out per element */
        int B = 2, T = 9, NH = 3, HS = 10, b, t, h, i, half = 5;
        double theta = 500000.0;
        size_t n = (size_t)B * T * NH * HS;
        dpprof_real *x = rand_real(n, 1.0), *y = copy_real(x, n);
        double *r = alloc_dbl(n);
        dpprof_rope_fwd_ref(y, B, T, NH, HS, theta);
        for (b = 0; b < B; b++)
            for (t = 0; t < T; t++)
                for (h = 0; h < NH; h++)
                    for (i = 0; i < HS; i++) {
                        size_t base = (((size_t)b * T + t) * NH + h) * HS;
                        int f = i % half;
                        double a = t / pow(theta, (2.0 * f) / HS);
                        /* rotate_half(x) = (-x2, x1) */
                        double rot = i < half ? -(double)x[base + i + half] : (double)x[base + i - half];
                        r[base + i] = x[base + i] * cos(a) + rot * sin(a);
                    }
        check("fwd rope vs hf rotate_half formula", err_vs(y, r, n), STORE_TOL, "rel err");
        free(x);
        free(y);
        free(r);
    }
}

/* ---- 1. backward ops against finite differences ------------------------------------------------ */

struct mm_ctx {
    dpprof_real *inp, *w, *out, *R;
    int N, IC, OC;
};
static double mm_loss(void *p) {
    struct mm_ctx *c = (struct mm_ctx *)p;
    dpprof_matmul_fwd_ref(c->out, c->inp, c->w, c->N, c->IC, c->OC);
    return dot_rr(c->out, c->R, (size_t)c->N * c->OC);
}

struct emb_ctx {
    dpprof_real *wte, *out, *R;
    const int *tok;
    int N, C;
};
static double emb_loss(void *p) {
    struct emb_ctx *c = (struct emb_ctx *)p;
    dpprof_embedding_fwd_ref(c->out, c->tok, c->wte, c->N, c->C);
    return dot_rr(c->out, c->R, (size_t)c->N * c->C);
}

struct rms_ctx {
    dpprof_real *inp, *w, *out, *rstd, *R;
    int N, C;
    float eps;
};
static double rms_loss(void *p) {
    struct rms_ctx *c = (struct rms_ctx *)p;
    dpprof_rmsnorm_fwd_ref(c->out, c->rstd, c->inp, c->w, c->N, c->C, c->eps);
    return dot_rr(c->out, c->R, (size_t)c->N * c->C);
}

struct rope_ctx {
    dpprof_real *x, *y, *R;
    int B, T, NH, HS;
    double theta;
};
static double rope_loss(void *p) {
    struct rope_ctx *c = (struct rope_ctx *)p;
    size_t n = (size_t)c->B * c->T * c->NH * c->HS;
    memcpy(c->y, c->x, n * sizeof(dpprof_real));
    dpprof_rope_fwd_ref(c->y, c->B, c->T, c->NH, c->HS, c->theta);
    return dot_rr(c->y, c->R, n);
}

struct attn_ctx {
    dpprof_real *q, *k, *v, *out, *lse, *R;
    int B, T, NH, NKV, HS;
};
static double attn_loss(void *p) {
    struct attn_ctx *c = (struct attn_ctx *)p;
    dpprof_attention_fwd_ref(c->out, c->lse, c->q, c->k, c->v, c->B, c->T, c->NH, c->NKV, c->HS);
    return dot_rr(c->out, c->R, (size_t)c->B * c->T * c->NH * c->HS);
}

struct swi_ctx {
    dpprof_real *g, *u, *h, *R;
    size_t n;
};
static double swi_loss(void *p) {
    struct swi_ctx *c = (struct swi_ctx *)p;
    dpprof_swiglu_fwd_ref(c->h, c->g, c->u, c->n);
    return dot_rr(c->h, c->R, c->n);
}

struct ce_ctx {
    dpprof_real *logits, *losses, *dl;
    const int *tg;
    int B, T, V;
};
static double ce_loss(void *p) {
    struct ce_ctx *c = (struct ce_ctx *)p;
    dpprof_crossentropy_fwd_ref(c->losses, c->logits, c->tg, c->B, c->T, c->V);
    return dot_rr(c->losses, c->dl, (size_t)c->B);
}

struct last_ctx {
    dpprof_real *inp, *out, *R;
    int B, T, C;
};
static double last_loss(void *p) {
    struct last_ctx *c = (struct last_ctx *)p;
    dpprof_last_token_fwd_ref(c->out, c->inp, c->B, c->T, c->C);
    return dot_rr(c->out, c->R, (size_t)c->B * c->C);
}

static void test_fd(void) {
    {
        /* IC = 70 crosses the 64-column accumulator block, N and OC are not multiples of 4 */
        struct mm_ctx c;
        dpprof_real *dinp, *dw;
        c.N = 5;
        c.IC = 70;
        c.OC = 7;
        c.inp = rand_real((size_t)c.N * c.IC, 1.0);
        c.w = rand_real((size_t)c.OC * c.IC, 1.0);
        c.out = alloc_real((size_t)c.N * c.OC);
        c.R = rand_real((size_t)c.N * c.OC, 1.0);
        dinp = zeros((size_t)c.N * c.IC);
        dw = zeros((size_t)c.OC * c.IC);
        dpprof_matmul_bwd_ref(dinp, dw, c.R, c.inp, c.w, c.N, c.IC, c.OC);
        fd_report("fd matmul dinp", mm_loss, &c, c.inp, (size_t)c.N * c.IC, dinp);
        fd_report("fd matmul dweight", mm_loss, &c, c.w, (size_t)c.OC * c.IC, dw);
        free(c.inp);
        free(c.w);
        free(c.out);
        free(c.R);
        free(dinp);
        free(dw);
    }
    {
        /* tokens 3 and 1 repeat (double-accumulated path), 0, 4, 2 occur once */
        static const int tok[9] = {3, 1, 3, 0, 3, 1, 4, 2, 3};
        struct emb_ctx c;
        dpprof_real *dwte;
        int V = 6; /* token 5 never occurs: its gradient must stay 0 */
        c.N = 9;
        c.C = 70;
        c.tok = tok;
        c.wte = rand_real((size_t)V * c.C, 1.0);
        c.out = alloc_real((size_t)c.N * c.C);
        c.R = rand_real((size_t)c.N * c.C, 1.0);
        dwte = zeros((size_t)V * c.C);
        dpprof_embedding_bwd_ref(dwte, c.R, tok, c.N, c.C);
        fd_report("fd embedding dwte (repeated tokens)", emb_loss, &c, c.wte, (size_t)V * c.C, dwte);
        free(c.wte);
        free(c.out);
        free(c.R);
        free(dwte);
    }
    {
        struct rms_ctx c;
        dpprof_real *dinp, *dw;
        size_t i;
        c.N = 4;
        c.C = 70;
        c.eps = 1e-5f;
        c.inp = rand_real((size_t)c.N * c.C, 1.0);
        c.w = rand_real((size_t)c.C, 0.5);
        for (i = 0; i < (size_t)c.C; i++) c.w[i] += 1; /* weights near 1, as initialised */
        c.out = alloc_real((size_t)c.N * c.C);
        c.rstd = alloc_real((size_t)c.N);
        c.R = rand_real((size_t)c.N * c.C, 1.0);
        dinp = zeros((size_t)c.N * c.C);
        dw = zeros((size_t)c.C);
        rms_loss(&c); /* rstd at the unperturbed point */
        dpprof_rmsnorm_bwd_ref(dinp, dw, c.R, c.inp, c.w, c.rstd, c.N, c.C);
        fd_report("fd rmsnorm dinp", rms_loss, &c, c.inp, (size_t)c.N * c.C, dinp);
        fd_report("fd rmsnorm dweight", rms_loss, &c, c.w, (size_t)c.C, dw);
        free(c.inp);
        free(c.w);
        free(c.out);
        free(c.rstd);
        free(c.R);
        free(dinp);
        free(dw);
    }
    {
        struct rope_ctx c;
        dpprof_real *dx;
        size_t n;
        c.B = 2;
        c.T = 5;
        c.NH = 3;
        c.HS = 8;
        c.theta = 10000.0;
        n = (size_t)c.B * c.T * c.NH * c.HS;
        c.x = rand_real(n, 1.0);
        c.y = alloc_real(n);
        c.R = rand_real(n, 1.0);
        dx = copy_real(c.R, n);
        dpprof_rope_bwd_ref(dx, c.B, c.T, c.NH, c.HS, c.theta);
        fd_report("fd rope dx", rope_loss, &c, c.x, n, dx);
        free(c.x);
        free(c.y);
        free(c.R);
        free(dx);
    }
    {
        struct attn_ctx c;
        dpprof_real *dq, *dk, *dv;
        size_t nq, nk;
        c.B = 2;
        c.T = 7;
        c.NH = 4;
        c.NKV = 2;
        c.HS = 8;
        nq = (size_t)c.B * c.T * c.NH * c.HS;
        nk = (size_t)c.B * c.T * c.NKV * c.HS;
        c.q = rand_real(nq, 1.5);
        c.k = rand_real(nk, 1.5);
        c.v = rand_real(nk, 1.0);
        c.out = alloc_real(nq);
        c.lse = alloc_real((size_t)c.B * c.NH * c.T);
        c.R = rand_real(nq, 1.0);
        dq = alloc_real(nq);
        dk = alloc_real(nk);
        dv = alloc_real(nk);
        attn_loss(&c);
        dpprof_attention_bwd_ref(dq, dk, dv, c.R, c.q, c.k, c.v, c.out, c.lse, c.B, c.T, c.NH, c.NKV, c.HS);
        fd_report("fd attention dq (NH=4 NKV=2 T=7 HS=8 B=2)", attn_loss, &c, c.q, nq, dq);
        fd_report("fd attention dk", attn_loss, &c, c.k, nk, dk);
        fd_report("fd attention dv", attn_loss, &c, c.v, nk, dv);
        free(c.q);
        free(c.k);
        free(c.v);
        free(c.out);
        free(c.lse);
        free(c.R);
        free(dq);
        free(dk);
        free(dv);
    }
    {
        struct swi_ctx c;
        dpprof_real *dg, *du;
        c.n = 50;
        c.g = rand_real(c.n, 4.0);
        c.u = rand_real(c.n, 1.0);
        c.h = alloc_real(c.n);
        c.R = rand_real(c.n, 1.0);
        dg = alloc_real(c.n);
        du = alloc_real(c.n);
        dpprof_swiglu_bwd_ref(dg, du, c.R, c.g, c.u, c.n);
        fd_report("fd swiglu dgate", swi_loss, &c, c.g, c.n, dg);
        fd_report("fd swiglu dup", swi_loss, &c, c.u, c.n, du);
        free(c.g);
        free(c.u);
        free(c.h);
        free(c.R);
        free(dg);
        free(du);
    }
    {
        struct ce_ctx c;
        dpprof_real *dlog;
        int tg[12], i;
        size_t n;
        c.B = 3;
        c.T = 4;
        c.V = 11;
        c.tg = tg;
        n = (size_t)c.B * c.T * c.V;
        for (i = 0; i < c.B * c.T; i++) tg[i] = rnd_int(c.V);
        c.logits = rand_real(n, 2.0);
        c.losses = alloc_real((size_t)c.B);
        c.dl = alloc_real((size_t)c.B);
        c.dl[0] = (dpprof_real)0.5;
        c.dl[1] = (dpprof_real)-1.25;
        c.dl[2] = (dpprof_real)2.0;
        dlog = alloc_real(n);
        dpprof_crossentropy_bwd_ref(dlog, c.logits, tg, c.dl, c.B, c.T, c.V);
        fd_report("fd crossentropy dlogits (unequal dlosses)", ce_loss, &c, c.logits, n, dlog);
        free(c.logits);
        free(c.losses);
        free(c.dl);
        free(dlog);
    }
    {
        struct last_ctx c;
        dpprof_real *dinp;
        c.B = 3;
        c.T = 4;
        c.C = 6;
        c.inp = rand_real((size_t)c.B * c.T * c.C, 1.0);
        c.out = alloc_real((size_t)c.B * c.C);
        c.R = rand_real((size_t)c.B * c.C, 1.0);
        dinp = zeros((size_t)c.B * c.T * c.C);
        dpprof_last_token_bwd_ref(dinp, c.R, c.B, c.T, c.C);
        fd_report("fd last_token dinp", last_loss, &c, c.inp, (size_t)c.B * c.T * c.C, dinp);
        free(c.inp);
        free(c.out);
        free(c.R);
        free(dinp);
    }
}

/* ---- 2. attention forward against a naive version that materialises T x T ----------------------- */

static void naive_attention(double *out, double *lse, const dpprof_real *q, const dpprof_real *k, const dpprof_real *v, int B, int T, int NH, int NKV, int HS) {
    double *S = alloc_dbl((size_t)T * T);
    int b, h, t, j, i;
    for (b = 0; b < B; b++)
        for (h = 0; h < NH; h++) {
            int kvh = h / (NH / NKV);
            for (t = 0; t < T; t++)
                for (j = 0; j <= t; j++) {
                    double s = 0.0;
                    for (i = 0; i < HS; i++)
                        s += (double)q[(((size_t)b * T + t) * NH + h) * HS + i] * k[(((size_t)b * T + j) * NKV + kvh) * HS + i];
                    S[(size_t)t * T + j] = s / sqrt((double)HS);
                }
            for (t = 0; t < T; t++) {
                double mx = S[(size_t)t * T], sum = 0.0;
                double *o = out + (((size_t)b * T + t) * NH + h) * HS;
                for (j = 1; j <= t; j++)
                    if (S[(size_t)t * T + j] > mx) mx = S[(size_t)t * T + j];
                for (j = 0; j <= t; j++) sum += exp(S[(size_t)t * T + j] - mx);
                lse[((size_t)b * NH + h) * T + t] = mx + log(sum);
                for (i = 0; i < HS; i++) o[i] = 0.0;
                for (j = 0; j <= t; j++) {
                    double p = exp(S[(size_t)t * T + j] - mx) / sum;
                    for (i = 0; i < HS; i++) o[i] += p * v[(((size_t)b * T + j) * NKV + kvh) * HS + i];
                }
            }
        }
    free(S);
}

static void attn_vs_naive(int B, int T, int NH, int NKV, int HS, double qscale) {
    size_t nq = (size_t)B * T * NH * HS, nk = (size_t)B * T * NKV * HS, nl = (size_t)B * NH * T;
    dpprof_real *q = rand_real(nq, qscale), *k = rand_real(nk, 1.0), *v = rand_real(nk, 1.0);
    dpprof_real *out = alloc_real(nq), *lse = alloc_real(nl);
    double *ro = alloc_dbl(nq), *rl = alloc_dbl(nl);
    char name[128];
    dpprof_attention_fwd_ref(out, lse, q, k, v, B, T, NH, NKV, HS);
    naive_attention(ro, rl, q, k, v, B, T, NH, NKV, HS);
    snprintf(name, sizeof name, "attention fwd out vs naive T=%d B=%d NH=%d NKV=%d HS=%d", T, B, NH, NKV, HS);
    check(name, err_vs(out, ro, nq), EXACT_TOL, "rel err");
    snprintf(name, sizeof name, "attention fwd lse vs naive T=%d B=%d NH=%d NKV=%d HS=%d", T, B, NH, NKV, HS);
    check(name, err_vs(lse, rl, nl), EXACT_TOL, "rel err");
    free(q);
    free(k);
    free(v);
    free(out);
    free(lse);
    free(ro);
    free(rl);
}

static void test_attention_naive(void) {
    /* q scaled up so scores spread over several units and the running max is overtaken often */
    attn_vs_naive(2, 1, 4, 2, 8, 4.0);
    attn_vs_naive(2, 5, 4, 2, 8, 4.0);
    attn_vs_naive(2, 33, 4, 2, 8, 4.0);
    attn_vs_naive(1, 33, 6, 1, 64, 1.0);                  /* multi-query, wider heads */
    attn_vs_naive(1, 9, 2, 2, DPPROF_MAX_HEAD_SIZE, 0.3); /* largest head size the stack arrays allow */
}

/* ---- 3. accumulate vs overwrite semantics ------------------------------------------------------ */

static void test_accumulation(void) {
    {
        int N = 6, IC = 67, OC = 5;
        size_t ni = (size_t)N * IC, nw = (size_t)OC * IC;
        dpprof_real *x = rand_real(ni, 1.0), *w = rand_real(nw, 1.0), *g = rand_real((size_t)N * OC, 1.0);
        dpprof_real *dx = zeros(ni), *dw = zeros(nw), *dx1, *dw1, *only;
        dpprof_matmul_bwd_ref(dx, dw, g, x, w, N, IC, OC);
        dx1 = copy_real(dx, ni);
        dw1 = copy_real(dw, nw);
        dpprof_matmul_bwd_ref(dx, dw, g, x, w, N, IC, OC);
        check("accumulate matmul dinp (twice = 2x)", err_doubled(dx, dx1, ni), ACC_TOL, "rel err");
        check("accumulate matmul dweight (twice = 2x)", err_doubled(dw, dw1, nw), ACC_TOL, "rel err");
        only = zeros(nw);
        dpprof_matmul_bwd_ref(NULL, only, g, x, w, N, IC, OC);
        check("matmul dinp=NULL gives the same dweight", maxdiff(only, dw1, nw), 0.0, "max abs diff");
        free(only);
        only = zeros(ni);
        dpprof_matmul_bwd_ref(only, NULL, g, x, w, N, IC, OC);
        check("matmul dweight=NULL gives the same dinp", maxdiff(only, dx1, ni), 0.0, "max abs diff");
        free(only);
        free(x);
        free(w);
        free(g);
        free(dx);
        free(dw);
        free(dx1);
        free(dw1);
    }
    {
        static const int tok[7] = {2, 2, 0, 1, 2, 0, 3};
        int N = 7, C = 70, V = 5;
        dpprof_real *g = rand_real((size_t)N * C, 1.0), *d = zeros((size_t)V * C), *d1;
        dpprof_embedding_bwd_ref(d, g, tok, N, C);
        d1 = copy_real(d, (size_t)V * C);
        dpprof_embedding_bwd_ref(d, g, tok, N, C);
        check("accumulate embedding dwte (twice = 2x)", err_doubled(d, d1, (size_t)V * C), ACC_TOL, "rel err");
        free(g);
        free(d);
        free(d1);
    }
    {
        int N = 3, C = 70;
        size_t n = (size_t)N * C;
        dpprof_real *x = rand_real(n, 1.0), *w = rand_real((size_t)C, 1.0), *g = rand_real(n, 1.0);
        dpprof_real *y = alloc_real(n), *rs = alloc_real((size_t)N);
        dpprof_real *dx = zeros(n), *dw = zeros((size_t)C), *dx1, *dw1, *only;
        dpprof_rmsnorm_fwd_ref(y, rs, x, w, N, C, 1e-5f);
        dpprof_rmsnorm_bwd_ref(dx, dw, g, x, w, rs, N, C);
        dx1 = copy_real(dx, n);
        dw1 = copy_real(dw, (size_t)C);
        dpprof_rmsnorm_bwd_ref(dx, dw, g, x, w, rs, N, C);
        check("accumulate rmsnorm dinp (twice = 2x)", err_doubled(dx, dx1, n), ACC_TOL, "rel err");
        check("accumulate rmsnorm dweight (twice = 2x)", err_doubled(dw, dw1, (size_t)C), ACC_TOL, "rel err");
        only = zeros(n);
        dpprof_rmsnorm_bwd_ref(only, NULL, g, x, w, rs, N, C);
        check("rmsnorm dweight=NULL gives the same dinp", maxdiff(only, dx1, n), 0.0, "max abs diff");
        free(only);
        free(x);
        free(w);
        free(g);
        free(y);
        free(rs);
        free(dx);
        free(dw);
        free(dx1);
        free(dw1);
    }
    {
        int B = 2, T = 3, C = 4;
        size_t n = (size_t)B * T * C;
        dpprof_real *g = rand_real((size_t)B * C, 1.0), *d = zeros(n), *d1;
        dpprof_last_token_bwd_ref(d, g, B, T, C);
        d1 = copy_real(d, n);
        dpprof_last_token_bwd_ref(d, g, B, T, C);
        check("accumulate last_token dinp (twice = 2x)", err_doubled(d, d1, n), ACC_TOL, "rel err");
        free(g);
        free(d);
        free(d1);
    }
    {
        /* overwrite: a result from zero-filled outputs, one from garbage, and the garbage one called again */
        int B = 2, T = 6, NH = 4, NKV = 2, HS = 8, r;
        size_t nq = (size_t)B * T * NH * HS, nk = (size_t)B * T * NKV * HS;
        dpprof_real *q = rand_real(nq, 1.0), *k = rand_real(nk, 1.0), *v = rand_real(nk, 1.0);
        dpprof_real *g = rand_real(nq, 1.0), *o = alloc_real(nq), *l = alloc_real((size_t)B * NH * T);
        dpprof_real *z[3], *x[3];
        double worst = 0.0;
        size_t sz[3];
        sz[0] = nq;
        sz[1] = nk;
        sz[2] = nk;
        for (r = 0; r < 3; r++) {
            z[r] = zeros(sz[r]);
            x[r] = rand_real(sz[r], 1e6);
        }
        dpprof_attention_fwd_ref(o, l, q, k, v, B, T, NH, NKV, HS);
        dpprof_attention_bwd_ref(z[0], z[1], z[2], g, q, k, v, o, l, B, T, NH, NKV, HS);
        dpprof_attention_bwd_ref(x[0], x[1], x[2], g, q, k, v, o, l, B, T, NH, NKV, HS);
        for (r = 0; r < 3; r++) {
            double d = maxdiff(x[r], z[r], sz[r]);
            if (!(d <= worst) && worst == worst) worst = d; /* a nan stays */
        }
        dpprof_attention_bwd_ref(x[0], x[1], x[2], g, q, k, v, o, l, B, T, NH, NKV, HS);
        for (r = 0; r < 3; r++) {
            double d = maxdiff(x[r], z[r], sz[r]);
            if (!(d <= worst) && worst == worst) worst = d; /* a nan stays */
        }
        check("overwrite attention dq dk dv (garbage in, twice)", worst, 0.0, "max abs diff");
        for (r = 0; r < 3; r++) {
            free(z[r]);
            free(x[r]);
        }
        free(q);
        free(k);
        free(v);
        free(g);
        free(o);
        free(l);
    }
    {
        size_t n = 33;
        dpprof_real *gt = rand_real(n, 3.0), *u = rand_real(n, 1.0), *dh = rand_real(n, 1.0);
        dpprof_real *zg = zeros(n), *zu = zeros(n), *xg = rand_real(n, 1e6), *xu = rand_real(n, 1e6);
        double worst;
        dpprof_swiglu_bwd_ref(zg, zu, dh, gt, u, n);
        dpprof_swiglu_bwd_ref(xg, xu, dh, gt, u, n);
        dpprof_swiglu_bwd_ref(xg, xu, dh, gt, u, n);
        worst = fmax(maxdiff(xg, zg, n), maxdiff(xu, zu, n));
        check("overwrite swiglu dgate dup (garbage in, twice)", worst, 0.0, "max abs diff");
        free(gt);
        free(u);
        free(dh);
        free(zg);
        free(zu);
        free(xg);
        free(xu);
    }
    {
        int B = 2, T = 3, V = 9, tg[6], i;
        size_t n = (size_t)B * T * V;
        dpprof_real *x = rand_real(n, 2.0), *dl = rand_real((size_t)B, 1.0), *z = zeros(n), *y = rand_real(n, 1e6);
        for (i = 0; i < B * T; i++) tg[i] = rnd_int(V);
        dpprof_crossentropy_bwd_ref(z, x, tg, dl, B, T, V);
        dpprof_crossentropy_bwd_ref(y, x, tg, dl, B, T, V);
        dpprof_crossentropy_bwd_ref(y, x, tg, dl, B, T, V);
        check("overwrite crossentropy dlogits (garbage in, twice)", maxdiff(y, z, n), 0.0, "max abs diff");
        free(x);
        free(dl);
        free(z);
        free(y);
    }
}

/* ---- 4. rope round trip ------------------------------------------------------------------------ */

static void test_rope_roundtrip(void) {
    int B = 2, T = 64, NH = 3, HS;
    for (HS = 16; HS <= DPPROF_MAX_HEAD_SIZE; HS *= 16) {
        size_t n = (size_t)B * T * NH * HS;
        dpprof_real *x = rand_real(n, 1.0), *y = copy_real(x, n);
        char name[96];
        dpprof_rope_fwd_ref(y, B, T, NH, HS, 10000.0);
        dpprof_rope_bwd_ref(y, B, T, NH, HS, 10000.0);
        snprintf(name, sizeof name, "rope_bwd(rope_fwd(x)) == x (T=%d HS=%d)", T, HS);
        check(name, maxdiff(y, x, n), IS_DOUBLE ? 1e-12 : 1e-5, "max abs diff");
        free(x);
        free(y);
    }
}

/* ---- 5. optimizers, scale, add ----------------------------------------------------------------- */

static void test_optim(void) {
    {
        /* step 1 from zero state by hand (bc, 30 digits): mhat = g, vhat = g^2, so the step is
           lr*(g/(|g| + eps) + wd*p). p=1,g=0.1 -> 0.9989000000999999900; p=-2,g=-0.3 ->
           -1.9988000000333333322; p=0.5,g=0 -> 0.49995 (decay only).
           float builds hold 0.1 and 0.3 inexactly (v ~ g^2 doubles that), hence 3e-7 there */
        dpprof_real p[3], m[3], v[3], g[3];
        double ep[3], em[3], ev[3];
        p[0] = 1;
        p[1] = -2;
        p[2] = (dpprof_real)0.5;
        g[0] = (dpprof_real)0.1;
        g[1] = (dpprof_real)-0.3;
        g[2] = 0;
        m[0] = m[1] = m[2] = 0;
        v[0] = v[1] = v[2] = 0;
        ep[0] = 0.99890000009999999;
        ep[1] = -1.9988000000333333322;
        ep[2] = 0.49995;
        em[0] = 0.01;
        em[1] = -0.03;
        em[2] = 0.0;
        ev[0] = 1e-5;
        ev[1] = 9e-5;
        ev[2] = 0.0;
        dpprof_adam_ref(p, m, v, g, 3, 1e-3, 0.9, 0.999, 1e-8, 0.1, 1);
        check("adam step 1 param vs hand", err_vs(p, ep, 3), IS_DOUBLE ? 1e-14 : 3e-7, "rel err");
        check("adam step 1 m vs hand", err_vs(m, em, 3), IS_DOUBLE ? 1e-14 : 3e-7, "rel err");
        check("adam step 1 v vs hand", err_vs(v, ev, 3), IS_DOUBLE ? 1e-14 : 3e-7, "rel err");
    }
    {
        /* step t=3 from a nonzero state, against pytorch's order: p *= 1 - lr*wd, then the adam step */
        size_t n = 20, i;
        double lr = 3e-4, b1 = 0.85, b2 = 0.99, eps = 1e-6, wd = 0.05;
        int t = 3;
        dpprof_real *p = rand_real(n, 1.0), *m = rand_real(n, 0.1), *v = rand_real(n, 0.01), *g = rand_real(n, 1.0);
        double *ep = alloc_dbl(n);
        for (i = 0; i < n; i++) v[i] = (dpprof_real)fabs((double)v[i]);
        for (i = 0; i < n; i++) {
            double mi = b1 * m[i] + (1 - b1) * g[i], vi = b2 * v[i] + (1 - b2) * (double)g[i] * g[i];
            double pp = p[i] * (1 - lr * wd);
            ep[i] = pp - lr * (mi / (1 - pow(b1, t))) / (sqrt(vi / (1 - pow(b2, t))) + eps);
        }
        dpprof_adam_ref(p, m, v, g, n, lr, b1, b2, eps, wd, t);
        check("adam step 3 vs pytorch order", err_vs(p, ep, n), IS_DOUBLE ? 1e-14 : 1e-7, "rel err");
        free(p);
        free(m);
        free(v);
        free(g);
        free(ep);
    }
    {
        dpprof_real p[3], g[3];
        double e[3];
        p[0] = 1;
        p[1] = -2;
        p[2] = (dpprof_real)0.5;
        g[0] = (dpprof_real)0.5;
        g[1] = (dpprof_real)0.25;
        g[2] = -1;
        e[0] = 0.95;
        e[1] = -2.025;
        e[2] = 0.6;
        dpprof_sgd_ref(p, g, 3, 0.1);
        check("sgd step vs hand", err_vs(p, e, 3), IS_DOUBLE ? 1e-15 : 1e-7, "rel err");
    }
    {
        dpprof_real x[4], y[4];
        double e[4], e2[4];
        int i;
        x[0] = 1;
        x[1] = -2;
        x[2] = (dpprof_real)0.5;
        x[3] = 0;
        for (i = 0; i < 4; i++) {
            e[i] = 3.0 * x[i];
            e2[i] = -0.5 * e[i];
        }
        dpprof_scale_ref(y, x, 4, 3.0);
        check("scale out of place", err_vs(y, e, 4), 0.0, "rel err");
        dpprof_scale_ref(y, y, 4, -0.5);
        check("scale in place", err_vs(y, e2, 4), 0.0, "rel err");
    }
    {
        size_t n = 17, i;
        dpprof_real *a = rand_real(n, 1.0), *b = rand_real(n, 1.0), *o = alloc_real(n);
        double *e = alloc_dbl(n), worst;
        for (i = 0; i < n; i++) e[i] = (dpprof_real)(a[i] + b[i]);
        dpprof_add_ref(o, a, b, n);
        worst = err_vs(o, e, n);
        dpprof_add_ref(a, a, b, n); /* out aliases a */
        worst = fmax(worst, err_vs(a, e, n));
        check("add (out of place and out == a)", worst, 0.0, "rel err");
        free(a);
        free(b);
        free(o);
        free(e);
    }
}

/* ---- 6. cross-entropy in place ----------------------------------------------------------------- */

static void test_ce_inplace(void) {
    int B = 3, T = 4, V = 37, tg[12], i;
    size_t n = (size_t)B * T * V;
    dpprof_real *x = rand_real(n, 3.0), *d = alloc_real(n), *y, dl[3];
    for (i = 0; i < B * T; i++) tg[i] = rnd_int(V);
    dl[0] = 1;
    dl[1] = (dpprof_real)0.25;
    dl[2] = -3;
    dpprof_crossentropy_bwd_ref(d, x, tg, dl, B, T, V);
    y = copy_real(x, n);
    dpprof_crossentropy_bwd_ref(y, y, tg, dl, B, T, V);
    check("crossentropy in place == out of place", maxdiff(y, d, n), 0.0, "max abs diff");
    free(x);
    free(d);
    free(y);
}

/* ---- costs ------------------------------------------------------------------------------------- */

static void test_costs(void) {
    dpprof_cost c = dpprof_matmul_fwd_cost(2, 3, 4, 4);
    double pairs, e;
    /* 2*2*3*4 = 48 flops; 4*(2*3 + 4*3 + 2*4) = 104 bytes */
    check("cost matmul fwd (2,3,4) fp32", fabs(c.flops - 48) + fabs(c.bytes - 104), 0.0, "abs diff");
    /* llama-3.1-8b attention at T=16384 in bf16: the matmul part must be 2*B*NH*HS*T*(T+1) with no int overflow */
    c = dpprof_attention_fwd_cost(1, 16384, 32, 8, 128, 2);
    pairs = 32.0 * 16384.0 * 16385.0 / 2.0;
    e = 2.0 * 32 * 128 * 16384.0 * 16385.0 + 5.0 * pairs + 16384.0 * 32 * 128;
    check("cost attention fwd llama-8b T=16384", fabs(c.flops - e) / e, 1e-15, "rel diff");
    e = 2.0 * (2.0 * 16384 * 32 * 128 + 2.0 * 16384 * 8 * 128 + 32.0 * 16384);
    check("cost attention fwd bytes llama-8b T=16384", fabs(c.bytes - e) / e, 1e-15, "rel diff");
    c = dpprof_matmul_bwd_cost(16384, 4096, 14336, 4);
    e = 4.0 * 16384 * 4096 * 14336 + 16384.0 * 4096 + 14336.0 * 4096;
    check("cost matmul bwd llama-8b mlp (no overflow)", fabs(c.flops - e) / e, 1e-15, "rel diff");
    /* the residual add and the norm: the two ops' flops, 2*3 + 2*(4*3 + 4) = 38, and their bytes less one pass
       over the sum, 4*3*6 + 4*(12 + 3 + 2) - 4*6 = 116 */
    c = dpprof_add_rmsnorm_fwd_cost(2, 3, 4);
    check("cost add_rmsnorm fwd (2,3) fp32", fabs(c.flops - 38) + fabs(c.bytes - 116), 0.0, "abs diff");
}

/* the residual add and the norm of its sum: the same bits as dpprof_add_ref, then dpprof_rmsnorm_fwd_ref */
static void test_add_rmsnorm(void) {
    enum {
        N = 5,
        C = 7
    };
    dpprof_real res[N * C], res2[N * C], oth[N * C], w[C], out[N * C], out2[N * C], rs[N], rs2[N];
    double d = 0;
    int i;
    for (i = 0; i < N * C; i++) res[i] = res2[i] = (dpprof_real)sin(1.0 + i), oth[i] = (dpprof_real)cos(0.5 * i);
    for (i = 0; i < C; i++) w[i] = (dpprof_real)(1.0 + 0.1 * i);
    dpprof_add_rmsnorm_fwd_ref(out, rs, res, oth, w, N, C, 1e-5f);
    dpprof_add_ref(res2, res2, oth, N * C);
    dpprof_rmsnorm_fwd_ref(out2, rs2, res2, w, N, C, 1e-5f);
    d += memcmp(res, res2, sizeof res) != 0;
    d += memcmp(out, out2, sizeof out) != 0;
    d += memcmp(rs, rs2, sizeof rs) != 0;
    d += fabs((double)res[3] - (sin(4.0) + cos(1.5))) > 1e-6; /* the sum was stored */
    check("add_rmsnorm fwd: res += other, then the norm of res (bitwise the two ops)", d, 0.0, "mismatches");
}

int main(void) {
    if (IS_DOUBLE)
        printf("# double build: finite differences with h=%g (absolute), tol %g\n", FD_H, FD_TOL);
    else
        printf("# float build: finite differences with h=%g*max(1,|x|), tol %g; other tolerances for float storage\n", FD_H, FD_TOL);
    test_forwards();
    test_fd();
    test_attention_naive();
    test_accumulation();
    test_rope_roundtrip();
    test_optim();
    test_ce_inplace();
    test_costs();
    test_add_rmsnorm();
    printf("# ops: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
