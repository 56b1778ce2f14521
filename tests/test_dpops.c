/* tests/test_dpops.c - checks of the dp reference ops (per-sample gradients, norms, clipped sums, costs).
   one line per check: "PASS name worst <err> tol <tol> (where)" or "FAIL ...", exit 1 on any FAIL.
   references are naive loops with long double sums, or existing ops of the vanilla path. the worst error is
   taken over every shape; errors of arrays are max|got - want| / max|want| (normwise), of scalars
   |got - want| / |want|. run by make test (float and double builds). */
/* the implementation: build/impl-san.o or impl-san-double.o (tests/impl.c; Makefile) */
#include "dpprof.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#ifdef DPPROF_REF_DOUBLE
#define TOL 1e-12
#define BUILD "double"
#else
#define TOL 1e-5
#define BUILD "float"
#endif

#define NS 3     /* samples per physical batch */
#define JUNK 777 /* what "overwritten" outputs hold before the call */

/* ---- check bookkeeping ------------------------------------------------------------------------- */

enum {
    C_PSGRAD,
    C_PSG_SQNORM,
    C_PSG_CLIPSUM,
    C_PSG_SUM_MATMUL,
    C_GRAM,
    C_GRAM_DOT,
    C_SQNORM_GRAM,
    C_SQNORM_PSG,
    C_CLIPGRAD,
    C_CLIPGRAD_C1,
    C_EMB_PSGRAD,
    C_EMB_PSG_SUM,
    C_EMB_SQNORM,
    C_EMB_CLIPGRAD,
    C_TIED_CROSS,
    C_RMS_PSD,
    C_RMS_PSD_SUM,
    C_RMS_BWD_PS,
    C_SAMPLE_SQNORM,
    C_CLIP,
    C_CLIP_BOUND,
    C_COST_PSGRAD,
    C_COST_PSG_SQNORM,
    C_COST_PSG_CLIPSUM,
    C_COST_GRAM,
    C_COST_GRAM_DOT,
    C_COST_SQNORM_GRAM,
    C_COST_SQNORM_PSG,
    C_COST_CLIPGRAD,
    C_COST_EMB_SQNORM,
    C_COST_EMB_PSGRAD,
    C_COST_EMB_CLIPGRAD,
    C_COST_RMS_PSD,
    C_COST_RMS_BWD_PS,
    C_COST_CLIP,
    C_COST_TIED_CROSS,
    C_COST_SAMPLE_SQNORM,
    C_FLASH_CHOICE,
    C_COUNT
};

static const char *check_name[C_COUNT] = {
    "linear_psgrad_vs_naive",
    "psgrad_sqnorm_vs_naive",
    "psgrad_clipsum_vs_naive",
    "psgrad_sum_vs_matmul_bwd_dweight",
    "gram_vs_naive",
    "gram_dot_vs_psgrad_norm",
    "linear_sqnorm_gram_vs_psgrad_norm",
    "linear_sqnorm_psg_vs_psgrad_norm",
    "linear_clipgrad_vs_psgrad_clipsum",
    "linear_clipgrad_c1_vs_matmul_bwd_dweight",
    "embedding_psgrad_vs_naive",
    "embedding_psgrad_sum_vs_embedding_bwd",
    "embedding_sqnorm_vs_psgrad_norm",
    "embedding_clipgrad_vs_psgrad_clipsum",
    "tied_cross_vs_psgrad_dot",
    "rmsnorm_psdweight_vs_naive",
    "rmsnorm_psdweight_sum_vs_rmsnorm_bwd_dweight",
    "rmsnorm_bwd_ps_vs_bwd_and_naive",
    "sample_sqnorm_vs_naive",
    "clip_factors_exact",
    "clip_factors_bound_exact",
    "cost_linear_psgrad",
    "cost_psgrad_sqnorm",
    "cost_psgrad_clipsum",
    "cost_gram",
    "cost_gram_dot",
    "cost_linear_sqnorm_gram",
    "cost_linear_sqnorm_psg",
    "cost_linear_clipgrad",
    "cost_embedding_sqnorm",
    "cost_embedding_psgrad",
    "cost_embedding_clipgrad",
    "cost_rmsnorm_psdweight",
    "cost_rmsnorm_bwd_ps",
    "cost_clip_factors",
    "cost_tied_cross",
    "cost_sample_sqnorm",
    "flash_choice",
};

static double worst[C_COUNT], tol[C_COUNT];
static char where[C_COUNT][96];
static int seen[C_COUNT];

/* a nan error is sticky: it must end as FAIL, and a later finite error must not hide it */
static void note(int id, double err, const char *w) {
    if (!seen[id] || err != err || (worst[id] == worst[id] && err > worst[id])) {
        worst[id] = err;
        snprintf(where[id], sizeof where[id], "%s", w);
    }
    seen[id] = 1;
}

/* ---- data -------------------------------------------------------------------------------------- */

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;

/* 64-bit lcg (knuth's mmix constants), top 53 bits: uniform in [-1, 1) */
static double urand(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static dpprof_real *rvec(size_t n) /* random */
{
    dpprof_real *p = (dpprof_real *)xcalloc(n, sizeof *p);
    size_t k;
    for (k = 0; k < n; k++) p[k] = (dpprof_real)urand();
    return p;
}

static dpprof_real *jvec(size_t n) /* junk, for overwritten outputs */
{
    dpprof_real *p = (dpprof_real *)xcalloc(n, sizeof *p);
    size_t k;
    for (k = 0; k < n; k++) p[k] = (dpprof_real)JUNK;
    return p;
}

static dpprof_real *copyv(const dpprof_real *a, size_t n) {
    dpprof_real *p = (dpprof_real *)xcalloc(n, sizeof *p);
    memcpy(p, a, n * sizeof *p);
    return p;
}

/* normwise error of got against want (long double reference) */
static double err_ld(const dpprof_real *got, const long double *want, size_t n) {
    long double m = 0, d = 0;
    size_t k;
    for (k = 0; k < n; k++) {
        long double a = fabsl(want[k]), e = fabsl((long double)got[k] - want[k]);
        if (a > m) m = a;
        if (e > d || e != e) d = e;
    }
    return (double)(d / (m > 0 ? m : 1));
}

/* normwise error of got against a dpprof_real reference */
static double err_rr(const dpprof_real *got, const dpprof_real *want, size_t n) {
    double m = 0, d = 0;
    size_t k;
    for (k = 0; k < n; k++) {
        double a = fabs((double)want[k]), e = fabs((double)got[k] - (double)want[k]);
        if (a > m) m = a;
        if (e > d || e != e) d = e;
    }
    return d / (m > 0 ? m : 1);
}

static double err_scalar(double got, long double want) {
    long double a = fabsl(want);
    return (double)(fabsl((long double)got - want) / (a > 0 ? a : 1));
}

/* ---- linear layers ----------------------------------------------------------------------------- */

static void test_linear(int T, int IC, int OC) {
    size_t nx = (size_t)NS * T * IC, ndy = (size_t)NS * T * OC, P = (size_t)OC * IC, k;
    dpprof_real *x = rvec(nx), *dy = rvec(ndy);
    dpprof_real *psg = jvec(NS * P), *dwr = rvec(P), *dw = copyv(dwr, P), *dwm = jvec(P);
    dpprof_real *ga = jvec((size_t)NS * T * T), *gg = jvec((size_t)NS * T * T);
    long double *want = (long double *)xcalloc(NS * P, sizeof *want);
    long double *wgram = (long double *)xcalloc((size_t)NS * T * T, sizeof *wgram);
    long double pnorm[NS], sq[NS];
    double c[NS], ones[NS], norm2[NS], base[NS];
    char w[96];
    int i, o, j, t, s;

    snprintf(w, sizeof w, "T=%d IC=%d OC=%d", T, IC, OC);
    for (i = 0; i < NS; i++) {
        c[i] = 0.1 + 0.45 * (urand() + 1.0); /* in [0.1, 1) */
        ones[i] = 1.0;
        base[i] = 1.0 + i; /* nonzero start: an op that overwrote instead of += would be off by this */
    }

    /* psgrad against the triple loop */
    dpprof_linear_psgrad_ref(psg, dy, x, NS, T, IC, OC);
    for (i = 0; i < NS; i++)
        for (o = 0; o < OC; o++)
            for (j = 0; j < IC; j++) {
                long double a = 0;
                for (t = 0; t < T; t++)
                    a += (long double)dy[((size_t)i * T + t) * OC + o] * x[((size_t)i * T + t) * IC + j];
                want[(size_t)i * P + (size_t)o * IC + j] = a;
            }
    note(C_PSGRAD, err_ld(psg, want, NS * P), w);

    /* the norm of the materialised psgrad (what every other norm must equal), and psgrad_sqnorm against it */
    for (i = 0; i < NS; i++) {
        long double a = 0;
        for (k = 0; k < P; k++) a += (long double)psg[(size_t)i * P + k] * psg[(size_t)i * P + k];
        pnorm[i] = a;
        sq[i] = a + base[i];
        norm2[i] = base[i];
    }
    dpprof_psgrad_sqnorm_ref(norm2, psg, NS, P);
    for (i = 0; i < NS; i++) note(C_PSG_SQNORM, err_scalar(norm2[i], sq[i]), w);
    /* a sample's squared norm of any tensor (n, P): the same sums */
    for (i = 0; i < NS; i++) norm2[i] = base[i];
    dpprof_sample_sqnorm_ref(norm2, psg, NS, (size_t)P);
    for (i = 0; i < NS; i++) note(C_SAMPLE_SQNORM, err_scalar(norm2[i], sq[i]), w);

    /* clipsum against naive (+= into random dw) */
    for (k = 0; k < P; k++) {
        long double a = dwr[k];
        for (i = 0; i < NS; i++) a += (long double)c[i] * psg[(size_t)i * P + k];
        want[k] = a;
    }
    dpprof_psgrad_clipsum_ref(dw, psg, c, NS, P);
    note(C_PSG_CLIPSUM, err_ld(dw, want, P), w);

    /* sum over samples of psgrad = the vanilla weight gradient */
    for (k = 0; k < P; k++) {
        long double a = 0;
        for (i = 0; i < NS; i++) a += psg[(size_t)i * P + k];
        want[k] = a;
        dwm[k] = 0;
    }
    dpprof_matmul_bwd_ref(NULL, dwm, dy, x, NULL, NS * T, IC, OC);
    note(C_PSG_SUM_MATMUL, err_ld(dwm, want, P), w);

    /* gram of x against naive; then gram_dot of the two grams against the materialised norm */
    dpprof_gram_ref(ga, x, NS, T, IC);
    dpprof_gram_ref(gg, dy, NS, T, OC);
    for (i = 0; i < NS; i++)
        for (s = 0; s < T; s++)
            for (t = 0; t < T; t++) {
                long double a = 0;
                for (j = 0; j < IC; j++) a += (long double)x[((size_t)i * T + s) * IC + j] * x[((size_t)i * T + t) * IC + j];
                wgram[((size_t)i * T + s) * T + t] = a;
            }
    note(C_GRAM, err_ld(ga, wgram, (size_t)NS * T * T), w);
    for (i = 0; i < NS; i++)
        for (s = 0; s < T; s++)
            for (t = 0; t < T; t++) {
                long double a = 0;
                for (j = 0; j < OC; j++) a += (long double)dy[((size_t)i * T + s) * OC + j] * dy[((size_t)i * T + t) * OC + j];
                wgram[((size_t)i * T + s) * T + t] = a;
            }
    note(C_GRAM, err_ld(gg, wgram, (size_t)NS * T * T), w);
    for (i = 0; i < NS; i++) norm2[i] = base[i];
    dpprof_gram_dot_ref(norm2, ga, gg, NS, T);
    for (i = 0; i < NS; i++) note(C_GRAM_DOT, err_scalar(norm2[i], pnorm[i] + base[i]), w);

    /* the two flash flavours */
    for (i = 0; i < NS; i++) norm2[i] = base[i];
    dpprof_linear_sqnorm_gram_ref(norm2, dy, x, NS, T, IC, OC);
    for (i = 0; i < NS; i++) note(C_SQNORM_GRAM, err_scalar(norm2[i], pnorm[i] + base[i]), w);
    for (i = 0; i < NS; i++) norm2[i] = base[i];
    dpprof_linear_sqnorm_psg_ref(norm2, dy, x, NS, T, IC, OC);
    for (i = 0; i < NS; i++) note(C_SQNORM_PSG, err_scalar(norm2[i], pnorm[i] + base[i]), w);

    /* book-keeping clipped gradient against the materialised clipped sum (both += into the same random dw) */
    memcpy(dw, dwr, P * sizeof *dw);
    dpprof_psgrad_clipsum_ref(dw, psg, c, NS, P);
    memcpy(dwm, dwr, P * sizeof *dwm);
    dpprof_linear_clipgrad_ref(dwm, dy, x, c, NS, T, IC, OC);
    note(C_CLIPGRAD, err_rr(dwm, dw, P), w);
    /* with c = 1 it is the vanilla dweight */
    memcpy(dw, dwr, P * sizeof *dw);
    dpprof_matmul_bwd_ref(NULL, dw, dy, x, NULL, NS * T, IC, OC);
    memcpy(dwm, dwr, P * sizeof *dwm);
    dpprof_linear_clipgrad_ref(dwm, dy, x, ones, NS, T, IC, OC);
    note(C_CLIPGRAD_C1, err_rr(dwm, dw, P), w);

    free(x);
    free(dy);
    free(psg);
    free(dwr);
    free(dw);
    free(dwm);
    free(ga);
    free(gg);
    free(want);
    free(wgram);
}

/* ---- embedding --------------------------------------------------------------------------------- */

static void test_embedding(int T, int V, int C) {
    size_t ndy = (size_t)NS * T * C, P = (size_t)V * C, k;
    dpprof_real *dy = rvec(ndy), *psg = jvec(NS * P), *dwr = rvec(P), *dw = copyv(dwr, P), *dwm = jvec(P);
    int *tok = (int *)xcalloc((size_t)NS * T, sizeof *tok);
    long double *want = (long double *)xcalloc(NS * P, sizeof *want);
    double c[NS], norm2[NS], base[NS];
    char w[96];
    int i, t, j;

    snprintf(w, sizeof w, "T=%d V=%d C=%d", T, V, C);
    for (k = 0; k < (size_t)NS * T; k++) {
        int v = (int)((urand() + 1.0) * 0.5 * V);
        tok[k] = v < V ? v : V - 1;
    }
    for (i = 0; i < NS; i++) {
        c[i] = 0.1 + 0.45 * (urand() + 1.0);
        base[i] = 1.0 + i;
    }

    /* psgrad against a naive scatter */
    dpprof_embedding_psgrad_ref(psg, dy, tok, NS, T, V, C);
    for (i = 0; i < NS; i++)
        for (t = 0; t < T; t++) {
            size_t row = (size_t)i * T + t;
            for (j = 0; j < C; j++) want[(size_t)i * P + (size_t)tok[row] * C + j] += dy[row * C + j];
        }
    note(C_EMB_PSGRAD, err_ld(psg, want, NS * P), w);

    /* summed over samples: the vanilla embedding backward over the whole batch */
    for (k = 0; k < P; k++) {
        long double a = 0;
        for (i = 0; i < NS; i++) a += psg[(size_t)i * P + k];
        want[k] = a;
        dwm[k] = 0;
    }
    dpprof_embedding_bwd_ref(dwm, dy, tok, NS * T, C);
    note(C_EMB_PSG_SUM, err_ld(dwm, want, P), w);

    /* ghost norm against the norm of the materialised psgrad */
    for (i = 0; i < NS; i++) norm2[i] = base[i];
    dpprof_embedding_sqnorm_ref(norm2, dy, tok, NS, T, C);
    for (i = 0; i < NS; i++) {
        long double a = base[i];
        for (k = 0; k < P; k++) a += (long double)psg[(size_t)i * P + k] * psg[(size_t)i * P + k];
        note(C_EMB_SQNORM, err_scalar(norm2[i], a), w);
    }

    /* clipped gradient against the materialised clipped sum */
    dpprof_psgrad_clipsum_ref(dw, psg, c, NS, P);
    memcpy(dwm, dwr, P * sizeof *dwm);
    dpprof_embedding_clipgrad_ref(dwm, dy, tok, c, NS, T, C);
    note(C_EMB_CLIPGRAD, err_rr(dwm, dw, P), w);

    /* tied with an lm head (input x (T,C), logits' gradient dl (T,V)): 2 <e_i, h_i> with h_i = dl_i^T x_i
       materialised naively, e_i the per-sample embedding gradient above */
    {
        dpprof_real *x = rvec(ndy), *dl = rvec((size_t)NS * T * V);
        for (i = 0; i < NS; i++) norm2[i] = base[i];
        dpprof_tied_cross_ref(norm2, dl, x, dy, tok, NS, T, V, C);
        for (i = 0; i < NS; i++) {
            long double a = 0;
            int v;
            for (v = 0; v < V; v++)
                for (j = 0; j < C; j++) {
                    long double h = 0;
                    for (t = 0; t < T; t++) h += (long double)dl[((size_t)i * T + t) * V + v] * x[((size_t)i * T + t) * C + j];
                    a += h * psg[(size_t)i * P + (size_t)v * C + j];
                }
            note(C_TIED_CROSS, err_scalar(norm2[i] - base[i], 2 * a), w);
        }
        free(x);
        free(dl);
    }

    free(dy);
    free(psg);
    free(dwr);
    free(dw);
    free(dwm);
    free(tok);
    free(want);
}

/* ---- rmsnorm ----------------------------------------------------------------------------------- */

static void test_rmsnorm(int T, int C) {
    size_t nx = (size_t)NS * T * C, k;
    dpprof_real *inp = rvec(nx), *dout = rvec(nx), *wgt = rvec((size_t)C), *out = jvec(nx), *rstd = jvec((size_t)NS * T);
    dpprof_real *psg = jvec((size_t)NS * C), *dinp = (dpprof_real *)xcalloc(nx, sizeof(dpprof_real));
    dpprof_real *dwgt = (dpprof_real *)xcalloc((size_t)C, sizeof(dpprof_real));
    long double *want = (long double *)xcalloc((size_t)NS * C, sizeof *want);
    char w[96];
    int i, t, j;

    snprintf(w, sizeof w, "T=%d C=%d", T, C);
    dpprof_rmsnorm_fwd_ref(out, rstd, inp, wgt, NS * T, C, 1e-5f);
    dpprof_rmsnorm_psdweight_ref(psg, dout, inp, rstd, NS, T, C);
    for (i = 0; i < NS; i++)
        for (j = 0; j < C; j++) {
            long double a = 0;
            for (t = 0; t < T; t++) {
                size_t row = (size_t)i * T + t;
                a += (long double)dout[row * C + j] * inp[row * C + j] * rstd[row];
            }
            want[(size_t)i * C + j] = a;
        }
    note(C_RMS_PSD, err_ld(psg, want, (size_t)NS * C), w);
    { /* the dp backward: rmsnorm_bwd's dinp (+= onto a start) and the per-sample weight gradients (want) */
        dpprof_real *d1 = rvec(nx), *d2 = (dpprof_real *)xcalloc(nx, sizeof(dpprof_real)), *p2 = jvec((size_t)NS * C);
        double e = 0;
        memcpy(d2, d1, nx * sizeof *d1);
        dpprof_rmsnorm_bwd_ref(d1, NULL, dout, inp, wgt, rstd, NS * T, C);
        dpprof_rmsnorm_bwd_ps_ref(d2, p2, dout, inp, wgt, rstd, NS, T, C);
        for (k = 0; k < nx; k++)
            if (d1[k] != d2[k]) e = HUGE_VAL;
        e += err_ld(p2, want, (size_t)NS * C);
        note(C_RMS_BWD_PS, e, w);
        free(d1);
        free(d2);
        free(p2);
    }
    dpprof_rmsnorm_bwd_ref(dinp, dwgt, dout, inp, wgt, rstd, NS * T, C);
    for (k = 0; k < (size_t)C; k++) {
        long double a = 0;
        for (i = 0; i < NS; i++) a += psg[(size_t)i * C + k];
        want[k] = a;
    }
    note(C_RMS_PSD_SUM, err_ld(dwgt, want, (size_t)C), w);

    free(inp);
    free(dout);
    free(wgt);
    free(out);
    free(rstd);
    free(psg);
    free(dinp);
    free(dwgt);
    free(want);
}

/* ---- clip factors: exact ----------------------------------------------------------------------- */

static void test_clip(void) {
    /* clip 1.5: zero, below, exactly at (sqrt(2.25) = 1.5 exactly), above, far above, infinite, nan */
    const double clip = 1.5;
    double norm2[7], c[7], want[7];
    int k;
    norm2[0] = 0.0;
    want[0] = 1.0;
    norm2[1] = 0.25;
    want[1] = 1.0;
    norm2[2] = 2.25;
    want[2] = 1.5 / (1.5 + 1e-6); /* at the bound: the 1e-6 makes it just below 1 */
    norm2[3] = 9.0;
    want[3] = 1.5 / (3.0 + 1e-6);
    norm2[4] = 1e300;
    want[4] = 1.5 / (1e150 + 1e-6);
    norm2[5] = HUGE_VAL;
    want[5] = 0.0;
    norm2[6] = sqrt(-1.0 + 0.0 * norm2[0]);
    want[6] = norm2[6]; /* nan: must stay nan, never factor 1 */
    for (k = 0; k < 7; k++) c[k] = -5.0;
    dpprof_clip_factors_ref(c, norm2, 7, clip);
    for (k = 0; k < 7; k++) {
        char w[96];
        double e;
        if (want[k] != want[k]) e = c[k] != c[k] ? 0.0 : HUGE_VAL;
        else e = c[k] == want[k] ? 0.0 : (c[k] != c[k] ? HUGE_VAL : fabs(c[k] - want[k]) + 1e-300);
        snprintf(w, sizeof w, "norm2=%g c=%.17g want=%.17g", norm2[k], c[k], want[k]);
        note(C_CLIP, e, w);
    }
    /* the bound itself must clip (factor < 1) and below it must not (factor == 1) */
    note(C_CLIP, want[2] < 1.0 && want[1] == 1.0 ? 0.0 : HUGE_VAL, "ordering");
    /* with a rounding bound eps: eps NULL is the plain rule bit for bit; else clip / (norm + eps + 1e-6), at most 1
       (a sample below the bound stays unclipped only while norm + eps is), a nan eps a nan factor */
    {
        double cb[7], eps[7] = {0.0, 0.25, 0.5, 3.0, 1.0, 0.0, 0.0};
        eps[5] = norm2[6]; /* nan */
        dpprof_clip_factors_bound_ref(cb, norm2, NULL, 7, clip);
        note(C_CLIP_BOUND, memcmp(cb, c, sizeof cb) == 0 ? 0.0 : HUGE_VAL, "eps NULL: the plain factors, bit for bit");
        norm2[5] = 1.0;
        dpprof_clip_factors_bound_ref(cb, norm2, eps, 7, clip);
        note(C_CLIP_BOUND, cb[0] == 1.0 ? 0.0 : HUGE_VAL, "zero norm, zero eps: 1");
        note(C_CLIP_BOUND, cb[1] == 1.0 ? 0.0 : HUGE_VAL, "norm 0.5 + eps 0.25 below 1.5: 1");
        note(C_CLIP_BOUND, cb[2] == 1.5 / (1.5 + 0.5 + 1e-6) ? 0.0 : HUGE_VAL, "norm at the bound + eps 0.5: 1.5 / 2.000001");
        note(C_CLIP_BOUND, cb[3] == 1.5 / (3.0 + 3.0 + 1e-6) ? 0.0 : HUGE_VAL, "norm 3 + eps 3");
        note(C_CLIP_BOUND, cb[5] != cb[5] ? 0.0 : HUGE_VAL, "a nan eps: a nan factor, never 1");
    }
}

/* ---- costs: hand-computed shape n=2, T=40, IC=4, OC=5, es=4 (P=20, D=4, V=6, C=3) ---------------- */

static void cost_is(int id, dpprof_cost got, double flops, double bytes, const char *w) {
    double e = fabs(got.flops - flops) + fabs(got.bytes - bytes);
    if (!(got.flops > 0) || !(got.bytes > 0)) e = HUGE_VAL;
    note(id, e, w);
}

static void test_costs(void) {
    /* 2*2*40*4*5 = 3200; 4*(2*40*5 + 2*40*4 + 2*5*4) = 4*760 */
    cost_is(C_COST_PSGRAD, dpprof_linear_psgrad_cost(2, 40, 4, 5, 4), 3200, 3040, "n=2 T=40 IC=4 OC=5");
    /* 2*(2*20 + 1) = 82; 4*2*20 + 16*2 = 192 */
    cost_is(C_COST_PSG_SQNORM, dpprof_psgrad_sqnorm_cost(2, 20, 4), 82, 192, "n=2 P=20");
    /* 2*2*20 = 80; 4*2*20 + 16*2 = 192 */
    cost_is(C_COST_SAMPLE_SQNORM, dpprof_sample_sqnorm_cost(2, 20, 4), 80, 192, "n=2 P=20");
    /* 2*2*20 + 20 = 100; 4*(40 + 40) + 8*2 = 336 */
    cost_is(C_COST_PSG_CLIPSUM, dpprof_psgrad_clipsum_cost(2, 20, 4), 100, 336, "n=2 P=20");
    /* 2*40*41*4 = 13120; 4*(2*40*4 + 2*40*40) = 4*3520 */
    cost_is(C_COST_GRAM, dpprof_gram_cost(2, 40, 4, 4), 13120, 14080, "n=2 T=40 D=4");
    /* 2*(2*1600 + 1) = 6402; 4*2*2*1600 + 32 = 25632 */
    cost_is(C_COST_GRAM_DOT, dpprof_gram_dot_cost(2, 40, 4), 6402, 25632, "n=2 T=40");
    /* tiles 32 and 8: pairs 32*32 + 32*8 + 8*8 = 1344 in 3 tile pairs; 2*(1344*(8 + 10 + 2) + 2*3 + 1) = 53774;
       4*2*40*9 + 32 = 2912 */
    cost_is(C_COST_SQNORM_GRAM, dpprof_linear_sqnorm_gram_cost(2, 40, 4, 5, 4), 53774, 2912, "n=2 T=40 IC=4 OC=5");
    /* T=64, two full tiles: 1024 + 1024 + 1024 = 3072 pairs; 3072*6 + 2*3 + 1 = 18439; 4*64*2 + 16 = 528 */
    cost_is(C_COST_SQNORM_GRAM, dpprof_linear_sqnorm_gram_cost(1, 64, 1, 1, 4), 18439, 528, "n=1 T=64 IC=1 OC=1");
    /* T=1: one pair in one tile pair: 1*(2*4 + 2*5 + 2) + 2 + 1 = 23; 4*9 + 16 = 52 */
    cost_is(C_COST_SQNORM_GRAM, dpprof_linear_sqnorm_gram_cost(1, 1, 4, 5, 4), 23, 52, "n=1 T=1 IC=4 OC=5");
    /* 2*(2*40*20 + 2*20 + 1) = 3282; 2912 */
    cost_is(C_COST_SQNORM_PSG, dpprof_linear_sqnorm_psg_cost(2, 40, 4, 5, 4), 3282, 2912, "n=2 T=40 IC=4 OC=5");
    /* 2*40*5 + 3200 + 20 = 3620; 3040 + 16 = 3056 */
    cost_is(C_COST_CLIPGRAD, dpprof_linear_clipgrad_cost(2, 40, 4, 5, 4), 3620, 3056, "n=2 T=40 IC=4 OC=5");
    /* the kernel's work: each row added once (40*3), each of at most 40 token sums square-summed (2*40*3), 40
       partials added: 2*(120 + 240 + 40) = 800; 4*80 + 4*240 + 32 = 1312 */
    cost_is(C_COST_EMB_SQNORM, dpprof_embedding_sqnorm_cost(2, 40, 3, 4), 800, 1312, "n=2 T=40 C=3");
    /* 2*40*3 = 240; 320 + 4*(240 + 36) = 1424 */
    cost_is(C_COST_EMB_PSGRAD, dpprof_embedding_psgrad_cost(2, 40, 6, 3, 4), 240, 1424, "n=2 T=40 V=6 C=3");
    /* 480; 320 + 4*(240 + 480) + 16 = 3216 */
    cost_is(C_COST_EMB_CLIPGRAD, dpprof_embedding_clipgrad_cost(2, 40, 3, 4), 480, 3216, "n=2 T=40 C=3");
    /* 3*240 = 720; 4*(480 + 80 + 6) = 2264 */
    cost_is(C_COST_RMS_PSD, dpprof_rmsnorm_psdweight_cost(2, 40, 3, 4), 720, 2264, "n=2 T=40 C=3");
    /* N = 80: 80*(33 + 3) = 2880; 4*(4*240 + 3 + 80 + 6) = 4196, less than rmsnorm_bwd's and psdweight's together
       (the second pass over dout and inp is gone) */
    cost_is(C_COST_RMS_BWD_PS, dpprof_rmsnorm_bwd_ps_cost(2, 40, 3, 4), 2880, 4196, "n=2 T=40 C=3");
    /* 4*2 = 8; 16*2 = 32 (elem_size does not matter: norm2 and c are double) */
    cost_is(C_COST_CLIP, dpprof_clip_factors_cost(2, 4), 8, 32, "n=2 es=4");
    cost_is(C_COST_CLIP, dpprof_clip_factors_cost(2, 2), 8, 32, "n=2 es=2");
    cost_is(C_COST_TIED_CROSS, dpprof_tied_cross_cost(2, 4, 9, 3, 4), 258, 384, "n=2 T=4 V=9 C=3");

    /* short sequence, wide layer: grams are tiny, g_i is huge -> gram; long sequence, narrow layer -> psg */
    note(C_FLASH_CHOICE, dpprof_flash_choice(16, 4096, 4096) == 0 ? 0.0 : HUGE_VAL, "T=16 IC=OC=4096 -> 0");
    note(C_FLASH_CHOICE, dpprof_flash_choice(4096, 64, 64) == 1 ? 0.0 : HUGE_VAL, "T=4096 IC=OC=64 -> 1");
    /* T=64, IC=OC=64: gram 3072*258 + 7 = 792583 > psg 2*64*4096 + 2*4096 + 1 = 532481 -> psg */
    note(C_FLASH_CHOICE, dpprof_flash_choice(64, 64, 64) == 1 ? 0.0 : HUGE_VAL, "T=64 IC=OC=64 -> 1");
    /* T=8, IC=OC=64: gram 64*258 + 3 = 16515 < psg 2*8*4096 + 8192 + 1 = 73729 -> gram */
    note(C_FLASH_CHOICE, dpprof_flash_choice(8, 64, 64) == 0 ? 0.0 : HUGE_VAL, "T=8 IC=OC=64 -> 0");
}

int main(void) {
    static const int lin[][3] = {{1, 5, 3}, {7, 37, 70}, {33, 70, 13}, {64, 32, 65}, {70, 24, 41}, {70, 130, 66}};
    static const int emb[][3] = {{1, 3, 5}, {7, 2, 37}, {33, 5, 70}, {70, 4, 24}, {70, 1, 13}, {64, 7, 130}};
    static const int rms[][2] = {{1, 5}, {7, 37}, {33, 70}, {70, 130}};
    int k, fails = 0;

    for (k = 0; k < C_COUNT; k++) tol[k] = k >= C_CLIP ? 0.0 : TOL; /* exact values and hand-computed costs */
    for (k = 0; k < (int)(sizeof lin / sizeof lin[0]); k++) test_linear(lin[k][0], lin[k][1], lin[k][2]);
    for (k = 0; k < (int)(sizeof emb / sizeof emb[0]); k++) test_embedding(emb[k][0], emb[k][1], emb[k][2]);
    for (k = 0; k < (int)(sizeof rms / sizeof rms[0]); k++) test_rmsnorm(rms[k][0], rms[k][1]);
    test_clip();
    test_costs();

    for (k = 0; k < C_COUNT; k++) {
        int ok = seen[k] && worst[k] <= tol[k];
        if (!ok) fails++;
        printf("%s %s worst %.3g tol %.3g (%s; %s)\n", ok ? "PASS" : "FAIL", check_name[k], seen[k] ? worst[k] : HUGE_VAL,
               tol[k], seen[k] ? where[k] : "never ran", BUILD);
    }
    printf("%d checks, %d failed (%s storage)\n", C_COUNT, fails, BUILD);
    return fails ? 1 : 0;
}
