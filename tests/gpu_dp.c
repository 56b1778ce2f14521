/* ---- dp gpu ops against their cpu references (part dp) ---------------------------------------------
   every dpprof_<op>_gpu of the dp section on random inputs against dpprof_<op>_ref: shapes that are not
   multiples of the 64x64 tiles and one with several tiles in every dimension, tokens with repeats and
   never-used vocabulary rows, clip factors in (0,1], accumulate semantics (norm2, dw, dwte start
   non-zero; overwritten outputs start as garbage), bitwise determinism (a second run on a second buffer
   from the same start), and the norms of one layer computed four ways agreeing.
   tolerance TDP_TOL (1e-5) relative: norms per sample |gpu - ref| / |ref|; tensors max |gpu - ref| over
   max |ref| of the tensor (fp32 gemm sums against the reference's double sums). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define TDP_TOL 1e-5

static uint64_t tdp_state = 0x2545F4914F6CDD1DULL;
static double tdp_unif(void) { /* (0,1] */
    tdp_state ^= tdp_state << 13;
    tdp_state ^= tdp_state >> 7;
    tdp_state ^= tdp_state << 17;
    return ((double)(tdp_state >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}
static dpprof_real *tdp_rand(size_t n, double scale) {
    dpprof_real *a = (dpprof_real *)malloc((n ? n : 1) * sizeof *a);
    size_t i;
    for (i = 0; i < n; i++) a[i] = (dpprof_real)(scale * (2.0 * tdp_unif() - 1.0));
    return a;
}
static void *tdp_dev(const void *host, size_t bytes) {
    void *d = NULL;
    if (dpprof_cuda_alloc(&d, bytes) != DPPROF_OK) return NULL;
    if (host) dpprof_cuda_copy(d, host, bytes, DPPROF_COPY_H2D);
    return d;
}
static void *tdp_get(const void *dev, size_t bytes) {
    void *h = malloc(bytes ? bytes : 1);
    memset(h, 0, bytes ? bytes : 1);
    if (dev) dpprof_cuda_copy(h, dev, bytes, DPPROF_COPY_D2H);
    return h;
}
/* max |got - ref| / max(max |ref|, 1e-30) */
static double tdp_err(const dpprof_real *got, const dpprof_real *ref, size_t n) {
    double d = 0.0, m = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)got[i] - (double)ref[i]);
        if (e != e) return INFINITY; /* a nan is the worst error (a later max must not overwrite it) */
        if (e > d) d = e;
        if (fabs((double)ref[i]) > m) m = fabs((double)ref[i]);
    }
    return d == 0.0 ? 0.0 : d / (m > 1e-30 ? m : 1e-30);
}
/* max_i |got_i - ref_i| / max(|ref_i|, 1e-300) */
static double tdp_nerr(const double *got, const double *ref, int n) {
    double w = 0.0;
    int i;
    for (i = 0; i < n; i++) {
        double a = fabs(ref[i]), e = fabs(got[i] - ref[i]) / (a > 1e-300 ? a : 1e-300);
        if (got[i] == ref[i]) e = 0.0;
        if (e != e) return INFINITY; /* a nan result is the worst error, not one that later maxima overwrite */
        if (!(e <= w)) w = e;
    }
    return w;
}
static double tdp_worst_norm, tdp_worst_grad;
static void tdp_note(double e, int norm) {
    if (norm && e > tdp_worst_norm) tdp_worst_norm = e;
    if (!norm && e > tdp_worst_grad) tdp_worst_grad = e;
}

/* one norm op run twice on two device copies of the same start: err against ref, bitwise equal runs */
typedef void (*tdp_norm_fn)(double *norm2, const void *ctx);
static void tdp_norm_check(const char *name, const char *shape, tdp_norm_fn fn, const void *ctx, const double *start, const double *ref, int n) {
    double *d1 = (double *)tdp_dev(start, (size_t)n * sizeof(double)), *d2 = (double *)tdp_dev(start, (size_t)n * sizeof(double));
    double *h1, *h2, e;
    int rc, same;
    fn(d1, ctx);
    fn(d2, ctx);
    rc = dpprof_cuda_sync();
    h1 = (double *)tdp_get(d1, (size_t)n * sizeof(double));
    h2 = (double *)tdp_get(d2, (size_t)n * sizeof(double));
    e = tdp_nerr(h1, ref, n);
    same = memcmp(h1, h2, (size_t)n * sizeof(double)) == 0;
    tdp_note(e, 1);
    CHECK(rc == DPPROF_OK && e <= TDP_TOL && same, "gpu dp: %s %s: norm2 += (start non-zero), rel err %.2e (tol %.0e), second run bitwise %s%s%s", name,
          shape, e, TDP_TOL, same ? "equal" : "DIFFERENT", rc ? ": " : "", rc ? dpprof_last_error() : "");
    dpprof_cuda_release(d1);
    dpprof_cuda_release(d2);
    free(h1);
    free(h2);
}

/* one overwriting or accumulating float op run twice on two device copies of `start` (garbage for an
   overwritten output): err against ref, bitwise equal runs */
typedef void (*tdp_grad_fn)(float *out, const void *ctx);
static void tdp_grad_check(const char *name, const char *shape, const char *sem, tdp_grad_fn fn, const void *ctx, const dpprof_real *start,
                           const dpprof_real *ref, size_t len, int symmetric_T) {
    size_t bytes = len * sizeof(float);
    float *d1 = (float *)tdp_dev(start, bytes), *d2 = (float *)tdp_dev(start, bytes);
    dpprof_real *h1, *h2;
    double e;
    int rc, same, sym = 1;
    fn(d1, ctx);
    fn(d2, ctx);
    rc = dpprof_cuda_sync();
    h1 = (dpprof_real *)tdp_get(d1, bytes);
    h2 = (dpprof_real *)tdp_get(d2, bytes);
    e = tdp_err(h1, ref, len);
    same = memcmp(h1, h2, bytes) == 0;
    /* (n,T,T) grams in fp32: exactly symmetric (the kernel writes both halves from one tile); bf16 grams
       come from a cuBLAS GEMM, which does not promise it (nothing downstream needs it) */
    if (symmetric_T > 0 && dpprof_cuda_storage() == DPPROF_DTYPE_FP32) {
        size_t TT = (size_t)symmetric_T * symmetric_T, i, s, t;
        for (i = 0; i < len / TT; i++)
            for (s = 0; s < (size_t)symmetric_T; s++)
                for (t = 0; t < s; t++)
                    if (memcmp(&h1[i * TT + s * symmetric_T + t], &h1[i * TT + t * symmetric_T + s], sizeof(dpprof_real))) sym = 0;
    }
    tdp_note(e, 0);
    CHECK(rc == DPPROF_OK && e <= TDP_TOL && same && sym, "gpu dp: %s %s: %s, rel err %.2e (tol %.0e), second run bitwise %s%s%s%s", name, shape, sem, e,
          TDP_TOL, same ? "equal" : "DIFFERENT", symmetric_T > 0 && dpprof_cuda_storage() == DPPROF_DTYPE_FP32 ? (sym ? ", exactly symmetric" : ", NOT SYMMETRIC") : "", rc ? ": " : "",
          rc ? dpprof_last_error() : "");
    dpprof_cuda_release(d1);
    dpprof_cuda_release(d2);
    free(h1);
    free(h2);
}

/* the device inputs of one case */
typedef struct {
    int n, T, IC, OC, V, C, D;
    size_t P;
    const float *dy, *x, *psg, *ga, *gg, *inp, *rstd, *dl;
    const int *tok;
    const double *c;
} tdp_ctx;

static void tdp_f_psgrad(float *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_linear_psgrad_gpu(o, k->dy, k->x, k->n, k->T, k->IC, k->OC);
}
static void tdp_f_clipsum(float *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_psgrad_clipsum_gpu(o, k->psg, k->c, k->n, k->P);
}
static void tdp_f_gram(float *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_gram_gpu(o, k->x, k->n, k->T, k->D);
}
static void tdp_f_clipgrad(float *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_linear_clipgrad_gpu(o, k->dy, k->x, k->c, k->n, k->T, k->IC, k->OC);
}
static void tdp_f_cliprep(float *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_linear_clipgrad_rep_gpu(o, k->dy, k->x, k->c, k->n, k->T, k->IC, k->OC);
}
static void tdp_f_epsgrad(float *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_embedding_psgrad_gpu(o, k->dy, k->tok, k->n, k->T, k->V, k->C);
}
static void tdp_f_eclip(float *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_embedding_clipgrad_gpu(o, k->dy, k->tok, k->c, k->n, k->T, k->C);
}
static void tdp_f_rms(float *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_rmsnorm_psdweight_gpu(o, k->dy, k->inp, k->rstd, k->n, k->T, k->C);
}
static void tdp_n_sqnorm(double *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_psgrad_sqnorm_gpu(o, k->psg, k->n, k->P);
}
static void tdp_n_dysq(double *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_sample_sqnorm_gpu(o, k->dy, k->n, (size_t)k->T * (size_t)k->OC);
}
static void tdp_n_xsq(double *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_sample_sqnorm_gpu(o, k->x, k->n, (size_t)k->T * (size_t)k->IC);
}
static void tdp_n_gdot(double *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_gram_dot_gpu(o, k->ga, k->gg, k->n, k->T);
}
static void tdp_n_fgram(double *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_linear_sqnorm_gram_gpu(o, k->dy, k->x, k->n, k->T, k->IC, k->OC);
}
static void tdp_n_fpsg(double *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_linear_sqnorm_psg_gpu(o, k->dy, k->x, k->n, k->T, k->IC, k->OC);
}
static void tdp_n_emb(double *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_embedding_sqnorm_gpu(o, k->dy, k->tok, k->n, k->T, k->C);
}
static void tdp_n_tied(double *o, const void *v) {
    const tdp_ctx *k = (const tdp_ctx *)v;
    dpprof_tied_cross_gpu(o, k->dl, k->x, k->dy, k->tok, k->n, k->T, k->V, k->C);
}

static double *tdp_start(int n) {
    double *s = (double *)malloc((size_t)n * sizeof(double));
    int i;
    for (i = 0; i < n; i++) s[i] = 0.25 + 0.5 * i;
    return s;
}
static double *tdp_clip(int n) {
    double *c = (double *)malloc((size_t)n * sizeof(double));
    int i;
    for (i = 0; i < n; i++) c[i] = i == 0 ? 1.0 : tdp_unif(); /* (0,1], the first unclipped */
    return c;
}

/* bf16 storage (bf16 = 1): the activation inputs (dy, x, inp) are rounded to bf16 on the host, so the fp32
   references read exactly what the gpu reads, and uploaded packed (model_up16, gpu_model.c: one translation
   unit); every output of these ops is fp32 or double, so the tolerances are the fp32 ones. the fp32-only
   ops (psgrad_sqnorm, psgrad_clipsum, gram_dot) run in bf16 mode too: unaffected by it */
static const float *tdp_act(dpprof_real *h, size_t n, int bf16) {
    if (!bf16) return (const float *)tdp_dev(h, n * sizeof(float));
    dpprof_bf16_round_ref(h, n);
    return (const float *)model_up16(h, n);
}

/* a bf16 flash norm on both paths: the tensor-core kernel where tc (IC and OC multiples of 8: one launch and
   its reduction a call, two calls), else cuBLAS blocks; with dpprof_cuda_tuning.norms_cublas cuBLAS everywhere */
static void tdp_norm_paths(const char *name, const char *shape, tdp_norm_fn fn, const tdp_ctx *k, const double *start, const double *ref, int tc) {
    char alt[96];
    const long long l0 = dpprof_cuda_launch_count();
    long long ran;
    tdp_norm_check(name, shape, fn, k, start, ref, k->n);
    ran = dpprof_cuda_launch_count() - l0;
    if (tc && k->n > 0 && k->T > 0) CHECK(ran == 4, "gpu dp: %s %s: the tensor-core kernel and its reduction ran (%lld launches for two calls, want 4)", name, shape, ran);
    if (dpprof_cuda_storage() != DPPROF_DTYPE_BF16) return;
    snprintf(alt, sizeof alt, "%s (cuBLAS)", name);
    CHECK(TUNE(norms_cublas, 1) == DPPROF_OK, "gpu dp: norms_cublas = 1 taken");
    tdp_norm_check(alt, shape, fn, k, start, ref, k->n);
    TUNE(norms_cublas, 0);
}

static void tdp_linear(int n, int T, int IC, int OC, int bf16) {
    char shape[96];
    size_t P = (size_t)OC * IC, nT = (size_t)n * T;
    dpprof_real *dy = tdp_rand(nT * OC, 1.0), *x = tdp_rand(nT * IC, 1.0), *psg = tdp_rand(n * P, 1.0), *garbage = tdp_rand(n * P + nT * T, 1e3);
    dpprof_real *dw0 = tdp_rand(P, 1.0), *dw = (dpprof_real *)malloc(P * sizeof *dw);
    dpprof_real *ga = (dpprof_real *)malloc(nT * T * sizeof *ga), *gg = (dpprof_real *)malloc(nT * T * sizeof *gg);
    double *c = tdp_clip(n), *start = tdp_start(n), *ref = (double *)malloc((size_t)n * sizeof(double));
    tdp_ctx k;
    memset(&k, 0, sizeof k);
    snprintf(shape, sizeof shape, "%sn=%d T=%d IC=%d OC=%d", bf16 ? "bf16 " : "", n, T, IC, OC);
    k.n = n, k.T = T, k.IC = IC, k.OC = OC, k.P = P;
    k.dy = tdp_act(dy, nT * OC, bf16);
    k.x = tdp_act(x, nT * IC, bf16);
    k.c = (const double *)tdp_dev(c, (size_t)n * sizeof(double));
    if (bf16) dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);

    dpprof_linear_psgrad_ref(psg, dy, x, n, T, IC, OC);
    tdp_grad_check("linear_psgrad", shape, "psg overwritten (start garbage)", tdp_f_psgrad, &k, garbage, psg, n * P, 0);
    /* the materialised-norm and clipsum ops read the reference's psg */
    k.psg = (const float *)tdp_dev(psg, n * P * sizeof(float));
    memcpy(ref, start, (size_t)n * sizeof(double));
    dpprof_psgrad_sqnorm_ref(ref, psg, n, P);
    tdp_norm_check("psgrad_sqnorm", shape, tdp_n_sqnorm, &k, start, ref, n);
    memcpy(dw, dw0, P * sizeof *dw);
    dpprof_psgrad_clipsum_ref(dw, psg, c, n, P);
    tdp_grad_check("psgrad_clipsum", shape, "dw += (start non-zero)", tdp_f_clipsum, &k, dw0, dw, P, 0);

    dpprof_gram_ref(ga, x, n, T, IC);
    dpprof_gram_ref(gg, dy, n, T, OC);
    k.D = IC;
    tdp_grad_check("gram (x, D=IC)", shape, "out overwritten (start garbage)", tdp_f_gram, &k, garbage, ga, nT * T, T);
    {
        tdp_ctx k2 = k;
        k2.x = k.dy, k2.D = OC;
        tdp_grad_check("gram (dy, D=OC)", shape, "out overwritten (start garbage)", tdp_f_gram, &k2, garbage, gg, nT * T, T);
    }
    k.ga = (const float *)tdp_dev(ga, nT * T * sizeof(float));
    k.gg = (const float *)tdp_dev(gg, nT * T * sizeof(float));
    memcpy(ref, start, (size_t)n * sizeof(double));
    dpprof_gram_dot_ref(ref, ga, gg, n, T);
    tdp_norm_check("gram_dot", shape, tdp_n_gdot, &k, start, ref, n);
    /* the per-sample norms of the stored dy and x (the batched clipped gradient's bound): rows of any width, 16-byte
       loads where they line up */
    memcpy(ref, start, (size_t)n * sizeof(double));
    dpprof_sample_sqnorm_ref(ref, dy, n, (size_t)T * OC);
    tdp_norm_check("sample_sqnorm (dy)", shape, tdp_n_dysq, &k, start, ref, n);
    memcpy(ref, start, (size_t)n * sizeof(double));
    dpprof_sample_sqnorm_ref(ref, x, n, (size_t)T * IC);
    tdp_norm_check("sample_sqnorm (x)", shape, tdp_n_xsq, &k, start, ref, n);

    memcpy(ref, start, (size_t)n * sizeof(double));
    dpprof_linear_sqnorm_gram_ref(ref, dy, x, n, T, IC, OC);
    tdp_norm_paths("linear_sqnorm_gram", shape, tdp_n_fgram, &k, start, ref, bf16 && IC % 8 == 0 && OC % 8 == 0);
    if (n > 0) { /* auto's timing call: reps copies of sample 0, norm2[0] += reps ||g_0||^2 */
        double one = 0.0, want, got = 0.25, *d = (double *)tdp_dev(&got, sizeof got);
        int rc;
        dpprof_linear_sqnorm_gram_ref(&one, dy, x, 1, T, IC, OC);
        want = 0.25 + 5.0 * one;
        dpprof_linear_sqnorm_gram_rep_gpu(d, k.dy, k.x, 5, T, IC, OC);
        rc = dpprof_cuda_sync();
        dpprof_cuda_copy(&got, d, sizeof got, DPPROF_COPY_D2H);
        CHECK(rc == DPPROF_OK && fabs(got - want) <= TDP_TOL * fabs(want), "gpu dp: linear_sqnorm_gram_rep %s: 5 copies of sample 0, %.9g (want %.9g)", shape, got, want);
        dpprof_cuda_release(d);
    }
    memcpy(ref, start, (size_t)n * sizeof(double));
    dpprof_linear_sqnorm_psg_ref(ref, dy, x, n, T, IC, OC);
    tdp_norm_paths("linear_sqnorm_psg", shape, tdp_n_fpsg, &k, start, ref, bf16 && IC % 8 == 0 && OC % 8 == 0);
    if (bf16) { /* the same kernel with warps of 64 x 32 (the default where the device's shared memory holds it: 64 x 64) */
        CHECK(TUNE(dp_warp_tile, 32) == DPPROF_OK && TUNE(dp_warp_tile, 128) == DPPROF_ERR_INVALID, "gpu dp: dp_warp_tile 32 taken, 128 refused");
        tdp_norm_check("linear_sqnorm_psg (64 x 32 warps)", shape, tdp_n_fpsg, &k, start, ref, n);
        TUNE(dp_warp_tile, 0);
    }

    memcpy(dw, dw0, P * sizeof *dw);
    dpprof_linear_clipgrad_ref(dw, dy, x, c, n, T, IC, OC);
    tdp_grad_check("linear_clipgrad", shape, "dw += (start non-zero)", tdp_f_clipgrad, &k, dw0, dw, P, 0);
    if (bf16) { /* the fused tensor-core kernel (dpprof_cuda_tuning.fused_clipgrad): with 2 samples or more and IC, OC multiples
                   of 8 it is the only kernel after the factors' (two launches a call, cuBLAS's are not counted), else cuBLAS stays.
                   its default warps (64 x 64 where the device holds the kernel) and warps of 64 x 32 give every element the same
                   arithmetic: the same bits */
        const long long want = n == 0 || T == 0 ? 0 : (n > 1 && IC % 8 == 0 && OC % 8 == 0 ? 4 : 2);
        static const int tile[2] = {0, 32};
        float *out[2];
        int r, same;
        TUNE(fused_clipgrad, 1);
        for (r = 0; r < 2; r++) {
            char name[64];
            long long l0, ran;
            snprintf(name, sizeof name, "linear_clipgrad (fused kernel, %s warps)", r ? "64 x 32" : "default");
            TUNE(dp_warp_tile, tile[r]);
            l0 = dpprof_cuda_launch_count();
            tdp_grad_check(name, shape, "dw += (start non-zero)", tdp_f_clipgrad, &k, dw0, dw, P, 0);
            ran = dpprof_cuda_launch_count() - l0;
            CHECK(ran == want, "gpu dp: linear_clipgrad %s: the fused kernel with %s warps %s (%lld launches for two calls, want %lld)", shape, r ? "64 x 32" : "default",
                  want == 4 ? "ran" : "was not taken", ran, want);
            out[r] = (float *)tdp_dev(dw0, P * sizeof(float));
            tdp_f_clipgrad(out[r], &k);
        }
        TUNE(dp_warp_tile, 0);
        TUNE(fused_clipgrad, 0);
        {
            dpprof_real *h0 = (dpprof_real *)tdp_get(out[0], P * sizeof(float)), *h1 = (dpprof_real *)tdp_get(out[1], P * sizeof(float));
            same = dpprof_cuda_sync() == DPPROF_OK && memcmp(h0, h1, P * sizeof(float)) == 0;
            CHECK(same, "gpu dp: linear_clipgrad %s: the fused kernel's default and 64 x 32 warps give the same bits", shape);
            free(h0);
            free(h1);
        }
        dpprof_cuda_release(out[0]);
        dpprof_cuda_release(out[1]);
    }
    if (n > 0) { /* auto's timing call on either kernel: n copies of sample 0 with the n factors */
        dpprof_real *dyr = (dpprof_real *)malloc((size_t)n * T * OC * sizeof *dyr), *xr = (dpprof_real *)malloc((size_t)n * T * IC * sizeof *xr);
        int i, f;
        for (i = 0; i < n; i++) {
            memcpy(dyr + (size_t)i * T * OC, dy, (size_t)T * OC * sizeof *dyr);
            memcpy(xr + (size_t)i * T * IC, x, (size_t)T * IC * sizeof *xr);
        }
        memcpy(dw, dw0, P * sizeof *dw);
        dpprof_linear_clipgrad_ref(dw, dyr, xr, c, n, T, IC, OC);
        for (f = 0; f < 1 + bf16; f++) {
            TUNE(fused_clipgrad, f);
            tdp_grad_check(f ? "linear_clipgrad_rep (fused kernel)" : "linear_clipgrad_rep", shape, "dw += n copies of sample 0 (start non-zero)", tdp_f_cliprep, &k, dw0, dw, P, 0);
        }
        TUNE(fused_clipgrad, 0);
        free(dyr);
        free(xr);
    }

    { /* one layer's norms four ways on the gpu, from zero: flash psg is the yardstick */
        double *h[4], e = 0.0;
        double *dn = (double *)tdp_dev(NULL, (size_t)n * 4 * sizeof(double));
        float *dpsg = (float *)tdp_dev(NULL, n * P * sizeof(float)), *dga = (float *)tdp_dev(NULL, nT * T * sizeof(float)),
              *dgg = (float *)tdp_dev(NULL, nT * T * sizeof(float));
        int j, rc;
        dpprof_cuda_zero(dn, (size_t)n * 4 * sizeof(double));
        dpprof_linear_sqnorm_psg_gpu(dn, k.dy, k.x, n, T, IC, OC);
        dpprof_linear_sqnorm_gram_gpu(dn + n, k.dy, k.x, n, T, IC, OC);
        dpprof_linear_psgrad_gpu(dpsg, k.dy, k.x, n, T, IC, OC);
        dpprof_psgrad_sqnorm_gpu(dn + 2 * n, dpsg, n, P);
        dpprof_gram_gpu(dga, k.x, n, T, IC);
        dpprof_gram_gpu(dgg, k.dy, n, T, OC);
        dpprof_gram_dot_gpu(dn + 3 * n, dga, dgg, n, T);
        rc = dpprof_cuda_sync();
        for (j = 0; j < 4; j++) h[j] = (double *)tdp_get(dn + (size_t)j * n, (size_t)n * sizeof(double));
        for (j = 1; j < 4; j++) {
            double ej = tdp_nerr(h[j], h[0], n);
            if (ej > e) e = ej;
        }
        tdp_note(e, 1);
        CHECK(rc == DPPROF_OK && e <= TDP_TOL, "gpu dp: sqnorm_psg == sqnorm_gram == psgrad+psgrad_sqnorm == gram+gram_dot %s: rel %.2e (tol %.0e)", shape, e, TDP_TOL);
        { /* book-keeping == materialised clipped sum */
            float *d1 = (float *)tdp_dev(dw0, P * sizeof(float)), *d2 = (float *)tdp_dev(dw0, P * sizeof(float));
            dpprof_real *h1, *h2;
            dpprof_linear_clipgrad_gpu(d1, k.dy, k.x, k.c, n, T, IC, OC);
            dpprof_psgrad_clipsum_gpu(d2, dpsg, k.c, n, P);
            rc = dpprof_cuda_sync();
            h1 = (dpprof_real *)tdp_get(d1, P * sizeof(float));
            h2 = (dpprof_real *)tdp_get(d2, P * sizeof(float));
            e = tdp_err(h1, h2, P);
            tdp_note(e, 0);
            CHECK(rc == DPPROF_OK && e <= TDP_TOL, "gpu dp: linear_clipgrad == psgrad+psgrad_clipsum %s: rel %.2e (tol %.0e)", shape, e, TDP_TOL);
            dpprof_cuda_release(d1);
            dpprof_cuda_release(d2);
            free(h1);
            free(h2);
        }
        for (j = 0; j < 4; j++) free(h[j]);
        dpprof_cuda_release(dn);
        dpprof_cuda_release(dpsg);
        dpprof_cuda_release(dga);
        dpprof_cuda_release(dgg);
    }

    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release((void *)k.dy);
    dpprof_cuda_release((void *)k.x);
    dpprof_cuda_release((void *)k.c);
    dpprof_cuda_release((void *)k.psg);
    dpprof_cuda_release((void *)k.ga);
    dpprof_cuda_release((void *)k.gg);
    free(dy), free(x), free(psg), free(garbage), free(dw0), free(dw), free(ga), free(gg), free(c), free(start), free(ref);
}

/* tokens drawn from [0, used) of a vocabulary of V: rows used..V-1 never appear */
static void tdp_embedding(int n, int T, int V, int used, int C, int bf16) {
    char shape[96];
    size_t nT = (size_t)n * T, VC = (size_t)V * C, i;
    int *tok = (int *)malloc((nT ? nT : 1) * sizeof(int));
    dpprof_real *dy = tdp_rand(nT * C, 1.0), *psg = (dpprof_real *)malloc(n * VC * sizeof *psg), *garbage = tdp_rand(n * VC, 1e3);
    dpprof_real *dw0 = tdp_rand(VC, 1.0), *dw = (dpprof_real *)malloc(VC * sizeof *dw);
    dpprof_real *x = tdp_rand(nT * C, 1.0), *dl = tdp_rand(nT * V, 1.0); /* a tied head's input and logits' gradient */
    double *c = tdp_clip(n), *start = tdp_start(n), *ref = (double *)malloc((size_t)n * sizeof(double));
    tdp_ctx k;
    for (i = 0; i < nT; i++) tok[i] = (int)(tdp_unif() * used) % used;
    memset(&k, 0, sizeof k);
    snprintf(shape, sizeof shape, "%sn=%d T=%d V=%d (tokens < %d) C=%d", bf16 ? "bf16 " : "", n, T, V, used, C);
    k.n = n, k.T = T, k.V = V, k.C = C, k.P = VC;
    k.dy = tdp_act(dy, nT * C, bf16);
    k.x = tdp_act(x, nT * C, bf16);
    k.dl = tdp_act(dl, nT * V, bf16);
    k.tok = (const int *)tdp_dev(tok, nT * sizeof(int));
    k.c = (const double *)tdp_dev(c, (size_t)n * sizeof(double));
    if (bf16) dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);

    memcpy(ref, start, (size_t)n * sizeof(double));
    dpprof_embedding_sqnorm_ref(ref, dy, tok, n, T, C);
    tdp_norm_check("embedding_sqnorm", shape, tdp_n_emb, &k, start, ref, n);
    memcpy(ref, start, (size_t)n * sizeof(double));
    dpprof_tied_cross_ref(ref, dl, x, dy, tok, n, T, V, C);
    tdp_norm_check("tied_cross", shape, tdp_n_tied, &k, start, ref, n);
    dpprof_embedding_psgrad_ref(psg, dy, tok, n, T, V, C);
    tdp_grad_check("embedding_psgrad", shape, "psg overwritten (start garbage)", tdp_f_epsgrad, &k, garbage, psg, n * VC, 0);
    memcpy(dw, dw0, VC * sizeof *dw);
    dpprof_embedding_clipgrad_ref(dw, dy, tok, c, n, T, C);
    tdp_grad_check("embedding_clipgrad", shape, "dwte += (start non-zero)", tdp_f_eclip, &k, dw0, dw, VC, 0);
    { /* masked-gram norm == materialised norm, on the gpu */
        double *dn = (double *)tdp_dev(NULL, (size_t)n * 2 * sizeof(double)), *h1, *h2, e;
        float *dpsg = (float *)tdp_dev(NULL, n * VC * sizeof(float));
        int rc;
        dpprof_cuda_zero(dn, (size_t)n * 2 * sizeof(double));
        dpprof_embedding_sqnorm_gpu(dn, k.dy, k.tok, n, T, C);
        dpprof_embedding_psgrad_gpu(dpsg, k.dy, k.tok, n, T, V, C);
        dpprof_psgrad_sqnorm_gpu(dn + n, dpsg, n, VC);
        rc = dpprof_cuda_sync();
        h1 = (double *)tdp_get(dn, (size_t)n * sizeof(double));
        h2 = (double *)tdp_get(dn + n, (size_t)n * sizeof(double));
        e = tdp_nerr(h2, h1, n);
        tdp_note(e, 1);
        CHECK(rc == DPPROF_OK && e <= TDP_TOL, "gpu dp: embedding_sqnorm == embedding_psgrad+psgrad_sqnorm %s: rel %.2e (tol %.0e)", shape, e, TDP_TOL);
        dpprof_cuda_release(dn);
        dpprof_cuda_release(dpsg);
        free(h1);
        free(h2);
    }
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release((void *)k.dy);
    dpprof_cuda_release((void *)k.x);
    dpprof_cuda_release((void *)k.dl);
    dpprof_cuda_release((void *)k.tok);
    dpprof_cuda_release((void *)k.c);
    free(tok), free(dy), free(psg), free(garbage), free(dw0), free(dw), free(x), free(dl), free(c), free(start), free(ref);
}

static void tdp_rmsnorm(int n, int T, int C, int bf16) {
    char shape[64];
    size_t nT = (size_t)n * T, i;
    dpprof_real *dout = tdp_rand(nT * C, 1.0), *inp = tdp_rand(nT * C, 1.0), *rstd = tdp_rand(nT, 0.5), *psg = (dpprof_real *)malloc(n * (size_t)C * sizeof *psg);
    dpprof_real *garbage = tdp_rand(n * (size_t)C, 1e3);
    tdp_ctx k;
    for (i = 0; i < nT; i++) rstd[i] = (dpprof_real)(1.0 + rstd[i]); /* (0.5, 1.5) */
    memset(&k, 0, sizeof k);
    snprintf(shape, sizeof shape, "%sn=%d T=%d C=%d", bf16 ? "bf16 " : "", n, T, C);
    k.n = n, k.T = T, k.C = C;
    k.dy = tdp_act(dout, nT * C, bf16);
    k.inp = tdp_act(inp, nT * C, bf16);
    k.rstd = (const float *)tdp_dev(rstd, nT * sizeof(float));
    if (bf16) dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_rmsnorm_psdweight_ref(psg, dout, inp, rstd, n, T, C);
    tdp_grad_check("rmsnorm_psdweight", shape, "psg overwritten (start garbage)", tdp_f_rms, &k, garbage, psg, n * (size_t)C, 0);
    { /* the dp algorithms' backward: dinp += (start random) and psg overwritten (start garbage) from one pass,
         twice on two copies of the start: the vector kernel (each sample's rows in blocks of its own) and the
         per-sample sum of their partials, 2 launches, where the rows are 16-byte vectors; else the two ops */
        const size_t nx = nT * C;
        const int V = bf16 ? 8 : 4, vec = T > 0 && C % V == 0 && C <= 512 * V;
        dpprof_real *w = tdp_rand((size_t)C, 1.5), *din0 = tdp_rand(nx, 1.0), *dref, *h1, *h2, *p1, *p2;
        float *d_w = (float *)tdp_dev(w, (size_t)C * sizeof(float)), *d_din1, *d_din2;
        float *d_p1 = (float *)tdp_dev(garbage, n * (size_t)C * sizeof(float)), *d_p2 = (float *)tdp_dev(garbage, n * (size_t)C * sizeof(float));
        long long l0;
        double e1, e2;
        int rc, same;
        d_din1 = (float *)tdp_act(din0, nx, bf16); /* rounds din0 to bf16 in place where bf16 */
        d_din2 = (float *)tdp_act(din0, nx, bf16);
        dref = (dpprof_real *)malloc((nx ? nx : 1) * sizeof *dref);
        memcpy(dref, din0, nx * sizeof *dref);
        dpprof_rmsnorm_bwd_ref(dref, NULL, dout, inp, w, rstd, n * T, C);
        if (bf16) dpprof_bf16_round_ref(dref, nx);
        l0 = dpprof_cuda_launch_count();
        dpprof_rmsnorm_bwd_ps_gpu(d_din1, d_p1, k.dy, k.inp, d_w, k.rstd, n, T, C);
        l0 = dpprof_cuda_launch_count() - l0;
        dpprof_rmsnorm_bwd_ps_gpu(d_din2, d_p2, k.dy, k.inp, d_w, k.rstd, n, T, C);
        rc = dpprof_cuda_sync();
        h1 = bf16 ? model_down16(d_din1, nx) : (dpprof_real *)tdp_get(d_din1, nx * sizeof(float));
        h2 = bf16 ? model_down16(d_din2, nx) : (dpprof_real *)tdp_get(d_din2, nx * sizeof(float));
        p1 = (dpprof_real *)tdp_get(d_p1, n * (size_t)C * sizeof(float));
        p2 = (dpprof_real *)tdp_get(d_p2, n * (size_t)C * sizeof(float));
        e1 = bf16 ? model_ulp(h1, dref, nx, 1e-5 * 1e-2) : tdp_err(h1, dref, nx); /* bf16: 1 ulp + 1e-7 */
        e2 = tdp_err(p1, psg, n * (size_t)C);
        same = !memcmp(h1, h2, nx * sizeof *h1) && !memcmp(p1, p2, n * (size_t)C * sizeof *p1);
        tdp_note(e2, 0);
        CHECK(rc == DPPROF_OK && (bf16 ? e1 <= 1.0 : e1 <= TDP_TOL) && e2 <= TDP_TOL && same && (!vec || l0 == 2),
              "gpu dp: rmsnorm_bwd_ps %s: dinp += (start random) %s %.2e, psg overwritten (start garbage) rel err %.2e (tol %.0e), second run bitwise %s; %lld launches (%s)", shape,
              bf16 ? "bf16 score (1 ulp + 1e-7)" : "rel err", e1, e2, TDP_TOL, same ? "equal" : "DIFFERENT", l0, vec ? "one pass and the per-sample sums: 2" : "the two ops");
        dpprof_cuda_release(d_w), dpprof_cuda_release(d_din1), dpprof_cuda_release(d_din2), dpprof_cuda_release(d_p1), dpprof_cuda_release(d_p2);
        free(w), free(din0), free(dref), free(h1), free(h2), free(p1), free(p2);
    }
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release((void *)k.dy);
    dpprof_cuda_release((void *)k.inp);
    dpprof_cuda_release((void *)k.rstd);
    free(dout), free(inp), free(rstd), free(psg), free(garbage);
}

/* book-keeping's row scaling, x[i,t,:] = (float)(c[i] * (double)x[i,t,:]) in place (no _ref: the
   expression is the reference): bitwise in fp32, and in bf16 (then rounded) */
/* book-keeping's batched bf16 clipped gradient (--batched-clipgrad): one sample's dy scaled by its factor in place in
   bf16, then the dweight GEMM, as the session queues them. the sample is built to cancel: a small signal row and
   triples (a, b, -(a + b)) of bf16 rows over one input row v, so that ||g|| = ||dy^T x|| is far below ||dy|| ||x||. at
   the plain factor C / ||g||, the rounding of c dy carries the contribution past C; at the bounded factor
   (dpprof_clip_factors_bound_ref with eps = 2^-8 ||dy|| ||x||) it stays within C, and within c eps of c g (the fp64
   product), for every bound C tried */
static void tdp_batched_bound(void) {
    enum {
        T = 61,
        IC = 24,
        OC = 40,
        TRIALS = 24
    };
    dpprof_real *dy = (dpprof_real *)malloc(sizeof(dpprof_real) * T * OC), *x = (dpprof_real *)malloc(sizeof(dpprof_real) * T * IC);
    dpprof_real *got = (dpprof_real *)malloc(sizeof(dpprof_real) * OC * IC), *zero = (dpprof_real *)calloc((size_t)OC * IC, sizeof(dpprof_real));
    double *g = (double *)calloc((size_t)OC * IC, sizeof(double)), g2 = 0, dy2 = 0, x2 = 0, eps, worst_plain = 0, worst_bound = 0, worst_dev = 0;
    float *dw = (float *)tdp_dev(NULL, sizeof(float) * OC * IC);
    void *dx, *ddy;
    double *dc = (double *)tdp_dev(NULL, sizeof(double));
    int t, o, i, u, rc = DPPROF_OK;
    for (i = 0; i < IC; i++) x[i] = (dpprof_real)(2.0 * tdp_unif() - 1.0);
    dpprof_bf16_round_ref(x, IC);
    for (t = 1; t < T; t++) memcpy(x + (size_t)t * IC, x, sizeof(dpprof_real) * IC);
    for (o = 0; o < OC; o++) dy[o] = (dpprof_real)(0.0625 * (2.0 * tdp_unif() - 1.0));
    for (t = 1; t + 2 < T + 1; t += 3)
        for (o = 0; o < OC; o++) {
            dy[(size_t)t * OC + o] = (dpprof_real)(0.5 + 0.5 * tdp_unif());
            dy[(size_t)(t + 1) * OC + o] = (dpprof_real)(0.5 + 0.5 * tdp_unif());
        }
    dpprof_bf16_round_ref(dy, (size_t)T * OC);
    for (t = 1; t + 2 < T + 1; t += 3)
        for (o = 0; o < OC; o++) dy[(size_t)(t + 2) * OC + o] = -(dy[(size_t)t * OC + o] + dy[(size_t)(t + 1) * OC + o]);
    dpprof_bf16_round_ref(dy, (size_t)T * OC);
    for (o = 0; o < OC; o++)
        for (i = 0; i < IC; i++) {
            double v = 0;
            for (t = 0; t < T; t++) v += (double)dy[(size_t)t * OC + o] * (double)x[(size_t)t * IC + i];
            g[(size_t)o * IC + i] = v, g2 += v * v;
        }
    dpprof_sample_sqnorm_ref(&dy2, dy, 1, (size_t)T * OC);
    dpprof_sample_sqnorm_ref(&x2, x, 1, (size_t)T * IC);
    eps = ldexp(sqrt(dy2 * x2), -8);
    dx = model_up16(x, (size_t)T * IC);
    for (u = 0; u < TRIALS && rc == DPPROF_OK; u++) {
        const double C = sqrt(g2) * (0.1 + 0.8 * u / (TRIALS - 1.0)); /* clipping active in every trial */
        int bound;
        for (bound = 0; bound < 2 && rc == DPPROF_OK; bound++) {
            double c, n2 = 0, d2 = 0;
            size_t e;
            dpprof_clip_factors_bound_ref(&c, &g2, bound ? &eps : NULL, 1, C);
            ddy = model_up16(dy, (size_t)T * OC);
            dpprof_cuda_copy(dc, &c, sizeof c, DPPROF_COPY_H2D);
            dpprof_cuda_copy(dw, zero, sizeof(float) * OC * IC, DPPROF_COPY_H2D);
            dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
            dpprof_scale_rows_gpu((float *)ddy, dc, 1, T, OC);
            dpprof_matmul_bwd_gpu(NULL, dw, (const float *)ddy, (const float *)dx, NULL, T, IC, OC);
            dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
            rc = dpprof_cuda_sync();
            dpprof_cuda_copy(got, dw, sizeof(float) * OC * IC, DPPROF_COPY_D2H);
            dpprof_cuda_release(ddy);
            for (e = 0; e < (size_t)OC * IC; e++) {
                const double d = (double)got[e] - c * g[e];
                n2 += (double)got[e] * (double)got[e], d2 += d * d;
            }
            if (bound) {
                if (sqrt(n2) / C > worst_bound) worst_bound = sqrt(n2) / C;
                if (sqrt(d2) / (c * eps) > worst_dev) worst_dev = sqrt(d2) / (c * eps);
            } else if (sqrt(n2) / C > worst_plain) worst_plain = sqrt(n2) / C;
        }
    }
    CHECK(rc == DPPROF_OK && worst_plain > 1.0, "gpu dp: batched bf16 clipped gradient, a cancelling sample (||g|| = %.3g of ||dy|| ||x||): at the plain factor its rounding carries the contribution past C (up to %.4f C over %d bounds)",
          sqrt(g2 / (dy2 * x2)), worst_plain, TRIALS);
    CHECK(rc == DPPROF_OK && worst_bound <= 1.0 && worst_dev <= 1.0, "gpu dp: batched bf16 clipped gradient at the bounded factor: within C (up to %.4f C) and within c eps of the fp64 c g (up to %.3f c eps)",
          worst_bound, worst_dev);
    dpprof_cuda_release(dx), dpprof_cuda_release(dw), dpprof_cuda_release(dc);
    free(dy), free(x), free(got), free(zero), free(g);
}

static void tdp_scale_rows(int n, int T, int D) {
    size_t m = (size_t)n * T * D, e;
    dpprof_real *x = tdp_rand(m, 2.0), *ref = (dpprof_real *)malloc(m * sizeof *ref), *ref16 = (dpprof_real *)malloc(m * sizeof *ref);
    double *c = tdp_clip(n), *dc = (double *)tdp_dev(c, (size_t)n * sizeof(double));
    float *dx = (float *)tdp_dev(x, m * sizeof(float)), *h, *h16;
    void *dx16;
    int rc, ok, ok16;
    for (e = 0; e < m; e++) ref[e] = (dpprof_real)(c[e / ((size_t)T * D)] * (double)x[e]);
    dpprof_bf16_round_ref(x, m);
    dx16 = model_up16(x, m);
    for (e = 0; e < m; e++) ref16[e] = (dpprof_real)(c[e / ((size_t)T * D)] * (double)x[e]);
    dpprof_bf16_round_ref(ref16, m);
    dpprof_scale_rows_gpu(dx, dc, n, T, D);
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_scale_rows_gpu((float *)dx16, dc, n, T, D);
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    rc = dpprof_cuda_sync();
    h = (float *)tdp_get(dx, m * sizeof(float));
    h16 = model_down16(dx16, m);
    ok = !memcmp(h, ref, m * sizeof(float));
    ok16 = !memcmp(h16, ref16, m * sizeof(float));
    CHECK(rc == DPPROF_OK && ok && ok16, "gpu dp: scale_rows n=%d T=%d D=%d in place: fp32 bitwise %s, bf16 bitwise %s", n, T, D, ok ? "equal" : "DIFFERENT",
          ok16 ? "equal" : "DIFFERENT");
    dpprof_cuda_release(dc), dpprof_cuda_release(dx), dpprof_cuda_release(dx16);
    free(x), free(ref), free(ref16), free(c), free(h), free(h16);
}

/* flash's gram norms of m layers that read one input (q, k, v; gate, up), ocs their widths: the group call
   against the reference, and bit for bit against one dpprof_linear_sqnorm_gram_gpu call per layer (a layer's
   sums do not depend on its group); on the bf16 tensor-core path one kernel and a reduction per layer for
   each three layers (the input's gram made once for them), elsewhere the single calls. bf16: 0 fp32, 1 bf16,
   2 bf16 with warps of 64 x 32, 3 bf16 on wgmma (the caller sets them), 4 bf16 with the default kernel (wgmma
   exactly where the device is compute capability 9.0) */
static void tdp_gram_group(int n, int T, int IC, int m, const int *ocs, int bf16) {
    char shape[128];
    const size_t nT = (size_t)n * T;
    dpprof_real *x = tdp_rand(nT * IC, 1.0), *dy[5];
    const float *ddy[5];
    double *start = tdp_start(n), *ref = (double *)malloc((size_t)n * m * sizeof(double)), *refp[5], *dn1[5], *dn2[5], *h1, *h2;
    const float *dx = tdp_act(x, nT * IC, bf16);
    int j, tc = bf16 && IC % 8 == 0, rc, same, wg = bf16 == 3,
           len = snprintf(shape, sizeof shape, "%sn=%d T=%d IC=%d OC=", bf16 == 4 ? "bf16 (the default kernel) " : (bf16 == 3 ? "bf16 (wgmma) " : (bf16 == 2 ? "bf16 (64 x 32 warps) " : (bf16 ? "bf16 " : ""))), n, T, IC);
    long long l0, ran, want, w0 = dpprof_cuda_wgmma_count(), wran, wwant = 0;
    double e;
    for (j = 0; j < m; j++) {
        dy[j] = tdp_rand(nT * ocs[j], 1.0);
        ddy[j] = tdp_act(dy[j], nT * ocs[j], bf16);
        tc = tc && ocs[j] % 8 == 0;
        len += snprintf(shape + len, sizeof shape - (size_t)len, "%s%d", j ? "," : "", ocs[j]);
        refp[j] = ref + (size_t)j * n;
        memcpy(refp[j], start, (size_t)n * sizeof(double));
        dn1[j] = (double *)tdp_dev(start, (size_t)n * sizeof(double));
        dn2[j] = (double *)tdp_dev(start, (size_t)n * sizeof(double));
    }
    if (bf16) dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_linear_sqnorm_gram_group_ref(refp, (const dpprof_real *const *)dy, ocs, m, x, n, T, IC);
    l0 = dpprof_cuda_launch_count();
    dpprof_linear_sqnorm_gram_group_gpu(dn1, ddy, ocs, m, dx, n, T, IC);
    ran = dpprof_cuda_launch_count() - l0;
    wran = dpprof_cuda_wgmma_count() - w0;
    for (j = 0; j < m; j++) dpprof_linear_sqnorm_gram_gpu(dn2[j], ddy[j], dx, n, T, IC, ocs[j]);
    rc = dpprof_cuda_sync();
    e = 0.0;
    same = 1;
    for (j = 0; j < m; j++) {
        double ej;
        h1 = (double *)tdp_get(dn1[j], (size_t)n * sizeof(double));
        h2 = (double *)tdp_get(dn2[j], (size_t)n * sizeof(double));
        ej = tdp_nerr(h1, refp[j], n);
        e = ej > e ? ej : e;
        same = same && !memcmp(h1, h2, (size_t)n * sizeof(double));
        free(h1);
        free(h2);
        dpprof_cuda_release(dn1[j]);
        dpprof_cuda_release(dn2[j]);
        dpprof_cuda_release((void *)ddy[j]);
        free(dy[j]);
    }
    tdp_note(e, 1);
    want = !tc || n == 0 || T == 0 ? -1 : m + (m + 2) / 3; /* a kernel each three layers, a reduction each layer */
    if (bf16 == 4) {
        dpprof_device_info d;
        wg = dpprof_cuda_device_info(0, &d) == DPPROF_OK && d.cc_major == 9 && d.cc_minor == 0;
    }
    if (wg && n > 0 && T > 0 && IC % 8 == 0) /* on wgmma: the group's kernels, or the single calls' of the widths that are multiples of 8 */
        for (j = 0, wwant = tc ? (m + 2) / 3 : 0; j < m && !tc; j++) wwant += ocs[j] % 8 == 0;
    CHECK(rc == DPPROF_OK && e <= TDP_TOL && same && (want < 0 || ran == want) && wran == wwant,
          "gpu dp: linear_sqnorm_gram_group %s: norm2[j] += (start non-zero), rel err %.2e (tol %.0e), bitwise %s one call per layer, %lld launches%s, %lld on wgmma", shape, e, TDP_TOL,
          same ? "equal to" : "DIFFERENT FROM", ran, want < 0 ? " (the single calls)" : (want == ran ? " (the tensor-core kernel)" : " (WANT the tensor-core kernel's)"), wran);
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release((void *)dx);
    free(x), free(start), free(ref);
}

static void test_dp(void) {
    static const int lin[][4] = {{1, 1, 24, 40}, {3, 5, 40, 24}, {3, 37, 70, 40}, {1, 37, 24, 70}, {3, 70, 130, 100}, {3, 70, 136, 264}, {2, 300, 48, 40}, {2, 0, 24, 40}, {2, 1100, 8, 12}, {2, 3, 1024, 2100}}; /* n, T, IC, OC; 136 x 264: the fused bf16 clipgrad over 2 x 3 tiles with T past a 32-row step; T=300: the bf16 gram kernel over 6 tile pairs (3 positions blocks); the last two need two blocks of the scratch: bf16 gram norm (T=1100), bf16 psg norm (OC x IC) */
    static const int emb[][5] = {{1, 1, 5, 5, 24}, {3, 5, 7, 3, 40}, {3, 37, 50, 10, 70}, {2, 37, 64, 20, 2100}, {2, 300, 40, 30, 24}, {2, 0, 9, 5, 24}};                                                         /* n T V used C */
    static const int rms[][3] = {{1, 1, 24}, {3, 5, 70}, {3, 37, 300}, {2, 300, 130}, {2, 0, 24}, {2, 300, 136}, {3, 37, 264}, {40, 300, 24}, {600, 3, 16}};                                                      /* n T C; C % 8 == 0: 16-byte vectors in bf16 (C % 4: in fp32), T = 300: split rows; the fused backward: 40 samples of 12 blocks (512 / n), 600 of one */
    size_t j;
    int b;
    if (sizeof(dpprof_real) != sizeof(float)) {
        SKIP("gpu dp: the gpu ops are fp32; this build's reference is double");
        return;
    }
    tdp_worst_norm = tdp_worst_grad = 0.0;
    {
        static const int qkv[] = {48, 16, 16};
        dpprof_device_info d;
        const int cc90 = dpprof_cuda_device_info(0, &d) == DPPROF_OK && d.cc_major == 9 && d.cc_minor == 0;
        const long long w0 = dpprof_cuda_wgmma_count();
        dpprof_cuda_tuning t;
        dpprof_cuda_get_tuning(&t);
        tdp_gram_group(3, 300, 32, 3, qkv, 4); /* the default, bf16 */
        CHECK(t.wgmma == 0 && (dpprof_cuda_wgmma_count() > w0) == cc90, "gpu dp: the gram kernel runs on wgmma by default exactly where the device is compute capability 9.0 (%d)", cc90);
        CHECK(TUNE(wgmma, 1) == (cc90 ? DPPROF_OK : DPPROF_ERR_UNSUPPORTED), "gpu dp: wgmma = 1 %s", cc90 ? "taken" : "refused (not compute capability 9.0)");
        TUNE(wgmma, -1);
    }                         /* the mma.sync kernels first: wgmma off until b == 3 */
    for (b = 0; b < 2; b++) { /* fp32 storage, then bf16 */
        for (j = 0; j < sizeof lin / sizeof lin[0]; j++) tdp_linear(lin[j][0], lin[j][1], lin[j][2], lin[j][3], b);
        for (j = 0; j < sizeof emb / sizeof emb[0]; j++) tdp_embedding(emb[j][0], emb[j][1], emb[j][2], emb[j][3], emb[j][4], b);
        for (j = 0; j < sizeof rms / sizeof rms[0]; j++) tdp_rmsnorm(rms[j][0], rms[j][1], rms[j][2], b);
    }
    for (b = 0; b < 4; b++) { /* fp32, bf16, bf16 with warps of 64 x 32, bf16 on wgmma: q, k, v of a grouped-query layer; gate,
                                 up; one layer; four (a kernel for three, one for one); a width not a multiple of 8; on wgmma
                                 also widths past one step of 64 columns (IC 136, OC 72) and T = 1100 (9 position blocks,
                                 45 pairs) with widths below one step */
        static const int qkv[] = {48, 16, 16}, gu[] = {40, 40}, one[] = {24}, four[] = {16, 24, 8, 32}, odd[] = {16, 20, 8}, wide[] = {72, 8}, narrow[] = {16, 8};
        TUNE(dp_warp_tile, b == 2 ? 32 : 0);
        if (b == 3 && TUNE(wgmma, 1) != DPPROF_OK) {
            SKIP("gpu dp: the gram kernel on wgmma: this device is not compute capability 9.0");
            break;
        }
        tdp_gram_group(3, 300, 32, 3, qkv, b);
        tdp_gram_group(2, 37, 24, 2, gu, b);
        tdp_gram_group(2, 129, 16, 1, one, b);
        tdp_gram_group(2, 40, 16, 4, four, b);
        tdp_gram_group(2, 37, 16, 3, odd, b);
        tdp_gram_group(2, 0, 16, 2, gu, b);
        if (b == 3) {
            tdp_gram_group(2, 200, 136, 2, wide, b);
            tdp_gram_group(2, 1100, 8, 2, narrow, b);
        }
    }
    dpprof_cuda_set_tuning(NULL);
    tdp_scale_rows(3, 5, 7);
    tdp_scale_rows(2, 37, 300);
    tdp_batched_bound();
    printf("# gpu dp: worst relative error: norms %.2e, gradients %.2e (tolerance %.0e)\n", tdp_worst_norm, tdp_worst_grad, TDP_TOL);
}
