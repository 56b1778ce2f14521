/* ---- model ops on the gpu against their cpu references (test_model) ------------------------------
   every op of the model part: random inputs, the _ref on host arrays, the _gpu on device copies.
   tolerances: err = max_i |gpu_i - ref_i| / max(|ref_i|, floor). elementwise double ops (swiglu, rope,
   adam, sgd, cross-entropy) 1e-5 with a small floor; fp32 cuBLAS against the double reference: floor =
   max |ref| (error relative to the largest output), 1e-5. ops whose arithmetic is the reference's
   exactly (fill, init, noise, add, scale, embedding fwd, last token) are compared bit for bit; the
   reductions are also run twice and must give the same bits. */
#include <stdlib.h>
#include <string.h>
#include <math.h>

static uint64_t model_rng = 0x9E3779B97F4A7C15ull;

static uint64_t model_next(void) {
    model_rng ^= model_rng << 13;
    model_rng ^= model_rng >> 7;
    model_rng ^= model_rng << 17;
    return model_rng;
}

/* uniform in [-scale, scale) */
static float *model_rand(size_t n, float scale) {
    float *h = (float *)malloc((n ? n : 1) * sizeof(float));
    size_t i;
    for (i = 0; i < n; i++) h[i] = scale * (float)((double)(model_next() >> 11) / 4503599627370496.0 - 1.0);
    return h;
}

static float *model_copyh(const float *h, size_t n) {
    float *c = (float *)malloc((n ? n : 1) * sizeof(float));
    memcpy(c, h, n * sizeof(float));
    return c;
}

static void *model_up16(const float *h, size_t n);
static float *model_down16(const void *d, size_t n);

static void *model_up(const void *h, size_t bytes) {
    void *d = NULL;
    if (dpprof_cuda_alloc(&d, bytes) != DPPROF_OK) return NULL;
    if (bytes && dpprof_cuda_copy(d, h, bytes, DPPROF_COPY_H2D) != DPPROF_OK) {
        dpprof_cuda_release(d);
        return NULL;
    }
    return d;
}

/* device -> new host array of n floats */
static float *model_down(const float *d, size_t n) {
    float *h = (float *)calloc(n ? n : 1, sizeof(float));
    if (n) dpprof_cuda_copy(h, d, n * sizeof(float), DPPROF_COPY_D2H);
    return h;
}

static void model_set(float *d, const float *h, size_t n) {
    if (n) dpprof_cuda_copy(d, h, n * sizeof(float), DPPROF_COPY_H2D);
}

static double model_maxabs(const float *r, size_t n) {
    double m = 0.0;
    size_t i;
    for (i = 0; i < n; i++)
        if (fabs((double)r[i]) > m) m = fabs((double)r[i]);
    return m;
}

/* max relative error with a floor; nan anywhere is an infinite error */
static double model_err(const float *g, const float *r, size_t n, double floor) {
    double e = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)g[i] - (double)r[i]), s = fabs((double)r[i]);
        if (d != d) return INFINITY;
        if (s < floor) s = floor;
        if (d / s > e) e = d / s;
    }
    return e;
}

static int model_same(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof(float)) == 0; }

static int model_ok(void) { return dpprof_cuda_sync() == DPPROF_OK; }

/* ---- fill, init, noise: bit for bit ---- */
static void test_model_rng_ops(void) {
    const uint64_t seed = 0x1234567890ABCDEFull, stream = ((uint64_t)1 << 40) + 3;
    size_t n = 5001, i, k;
    float *h = (float *)calloc(n, sizeof(float)), *g, *d;
    d = (float *)model_up(h, n * sizeof(float));
    if (!d) {
        CHECK(0, "model: device allocation");
        free(h);
        return;
    }
    dpprof_fill_gpu(d, n, 1.5f);
    g = model_down(d, n);
    for (i = 0; i < n; i++) h[i] = 1.5f;
    CHECK(model_ok() && model_same(g, h, n), "model fill_gpu n=%zu: bitwise", n);
    free(g);

    /* init: as dpprof__init_param: (dpprof_real)(init_std * dpprof_normal(seed's key, stream, e)) */
    {
        const double sd = 0.02;
        dpprof_init_normal_gpu(d, n, sd, seed, stream);
        g = model_down(d, n);
        for (i = 0; i < n; i++) h[i] = (float)(sd * dpprof_normal(dpprof_noise_seed(seed), stream, (uint64_t)i));
        CHECK(model_ok() && model_same(g, h, n), "model init_normal_gpu n=%zu (2 blocks of 4-element groups, tail of 1): bitwise", n);
        free(g);
        { /* in bf16 alone: those values rounded (dpprof_cast_bf16_gpu's bits) */
            void *d16 = model_up16(h, n);
            dpprof_init_normal_bf16_gpu((dpprof_bf16 *)d16, n, sd, seed, stream);
            g = model_down16(d16, n);
            dpprof_bf16_round_ref(h, n);
            CHECK(model_ok() && model_same(g, h, n), "model init_normal_bf16_gpu n=%zu: bitwise init_normal_gpu's values rounded", n);
            free(g);
            dpprof_cuda_release(d16);
        }
    }

    /* noise + division by the batch, as dpprof__noise: dpprof_add_noise_ref then (float)(g * inv_b); the secure
       stream (--secure-noise) the same bits as the reference's */
    {
        struct {
            size_t n;
            uint64_t offset;
            double sd;
            uint64_t stream;
        } cs[] = {{5001, 5, 0.7, 17}, {1000, 8, 1.3, 17}, {3, 2, 0.5, 17}, {1, 7, 2.0, 17}, {777, 3, 0.0, 17}, {4099, 6, 0.9, 17 | DPPROF_NOISE_SECURE}};
        const double inv_b = 1.0 / 7.0;
        dpprof_noise_key full; /* the secure stream's: all 256 bits of the key in use */
        for (i = 0; i < 8; i++) full.w[i] = 0x85ebca6bu * (uint32_t)(i + 3) ^ 0xc2b2ae35u;
        for (k = 0; k < sizeof cs / sizeof cs[0]; k++) {
            size_t m = cs[k].n;
            float *x = model_rand(m, 1.0f), *ref = model_copyh(x, m);
            const dpprof_noise_key key = cs[k].stream & DPPROF_NOISE_SECURE ? full : dpprof_noise_seed(seed);
            model_set(d, x, m);
            dpprof_noise_scale_gpu(d, m, cs[k].sd, key, cs[k].stream, cs[k].offset, inv_b);
            g = model_down(d, m);
            if (cs[k].sd > 0) dpprof_add_noise_ref(ref, m, cs[k].sd, key, cs[k].stream, cs[k].offset);
            for (i = 0; i < m; i++) ref[i] = (float)(ref[i] * inv_b);
            CHECK(model_ok() && model_same(g, ref, m), "model noise_scale_gpu n=%zu offset=%llu stddev=%g%s: bitwise (worst %.3g)", m, (unsigned long long)cs[k].offset, cs[k].sd,
                  cs[k].stream & DPPROF_NOISE_SECURE ? ", secure stream" : "", model_err(g, ref, m, 1e-30));
            free(x);
            free(ref);
            free(g);
        }
    }
    dpprof_cuda_release(d);
    free(h);
}

/* ---- non-finite flag ---- */
static void test_model_nonfinite(void) {
    size_t na = 100, nb = 1000, nc = 50;
    float *a = model_rand(na, 1.0f), *b = model_rand(nb, 1.0f), *c = model_rand(nc, 1.0f);
    float *da = (float *)model_up(a, na * 4), *db = (float *)model_up(b, nb * 4), *dc = (float *)model_up(c, nc * 4);
    int tag = 123, rc;
    float nanv = NAN, infv = INFINITY;
    dpprof_nonfinite_reset_gpu();
    dpprof_nonfinite_gpu(da, na, 2);
    dpprof_nonfinite_gpu(db, nb, 5);
    dpprof_nonfinite_gpu(dc, nc, 9);
    rc = dpprof_nonfinite_result_gpu(&tag);
    CHECK(rc == DPPROF_OK && tag == -1, "model nonfinite: all finite gives -1 (got %d, rc %d)", tag, rc);

    dpprof_cuda_copy(db + 777, &nanv, sizeof nanv, DPPROF_COPY_H2D);
    dpprof_nonfinite_reset_gpu();
    dpprof_nonfinite_gpu(da, na, 2);
    dpprof_nonfinite_gpu(db, nb, 5);
    dpprof_nonfinite_gpu(dc, nc, 9);
    rc = dpprof_nonfinite_result_gpu(&tag);
    CHECK(rc == DPPROF_OK && tag == 5, "model nonfinite: nan at element 777 of the second tensor (tag 5) gives 5 (got %d)", tag);

    dpprof_cuda_copy(dc + 3, &infv, sizeof infv, DPPROF_COPY_H2D);
    dpprof_nonfinite_reset_gpu();
    dpprof_nonfinite_gpu(dc, nc, 9);
    dpprof_nonfinite_gpu(da, na, 2);
    dpprof_nonfinite_gpu(db, nb, 5);
    rc = dpprof_nonfinite_result_gpu(&tag);
    CHECK(rc == DPPROF_OK && tag == 5, "model nonfinite: inf (tag 9) checked first, nan (tag 5) later: the smallest, 5 (got %d)", tag);

    dpprof_nonfinite_reset_gpu();
    dpprof_nonfinite_gpu(da, na, 2);
    rc = dpprof_nonfinite_result_gpu(&tag);
    CHECK(rc == DPPROF_OK && tag == -1, "model nonfinite: reset clears the flag (got %d)", tag);

    { /* 16-byte vectors with the inf in the tail past the last one; views not 16-byte aligned: one by one */
        size_t ne = 1003;
        float *e = model_rand(ne, 1.0f), *de = (float *)model_up(e, ne * 4);
        dpprof_cuda_copy(de + 1002, &infv, sizeof infv, DPPROF_COPY_H2D);
        dpprof_nonfinite_reset_gpu();
        dpprof_nonfinite_gpu(de, ne - 1, 3); /* 250 vectors and a tail of 2, all finite */
        dpprof_nonfinite_gpu(de, ne, 4);     /* the inf is the tail's last element */
        rc = dpprof_nonfinite_result_gpu(&tag);
        CHECK(rc == DPPROF_OK && tag == 4, "model nonfinite: inf in the tail after 250 vectors gives its tag 4, the finite prefix none (got %d)", tag);
        dpprof_nonfinite_reset_gpu();
        dpprof_nonfinite_gpu(de + 1, ne - 2, 3); /* misaligned, without the inf */
        dpprof_nonfinite_gpu(db + 1, nb - 1, 7); /* misaligned, with the nan at 777 */
        rc = dpprof_nonfinite_result_gpu(&tag);
        CHECK(rc == DPPROF_OK && tag == 7, "model nonfinite: views off 16-byte alignment: the one holding the nan gives 7 (got %d)", tag);
        dpprof_cuda_release(de);
        free(e);
    }
    dpprof_cuda_release(da);
    dpprof_cuda_release(db);
    dpprof_cuda_release(dc);
    free(a);
    free(b);
    free(c);
}

/* ---- matmul (cuBLAS) ---- */
static void test_model_matmul_shape(int N, int IC, int OC) {
    size_t ni = (size_t)N * IC, nw = (size_t)OC * IC, no = (size_t)N * OC;
    float *inp = model_rand(ni, 1.0f), *w = model_rand(nw, 1.0f), *dout = model_rand(no, 1.0f);
    float *dinp0 = model_rand(ni, 1.0f), *dw0 = model_rand(nw, 1.0f);
    float *out = (float *)malloc(no * 4), *dinp = model_copyh(dinp0, ni), *dw = model_copyh(dw0, nw);
    float *d_inp = (float *)model_up(inp, ni * 4), *d_w = (float *)model_up(w, nw * 4), *d_dout = (float *)model_up(dout, no * 4);
    float *d_out = (float *)model_up(dout, no * 4); /* garbage start: the forward overwrites */
    float *d_dinp = (float *)model_up(dinp0, ni * 4), *d_dw = (float *)model_up(dw0, nw * 4);
    float *g, *g2, *g3;
    int ok;

    dpprof_matmul_fwd_ref(out, inp, w, N, IC, OC);
    dpprof_matmul_fwd_gpu(d_out, d_inp, d_w, N, IC, OC);
    g = model_down(d_out, no);
    CHECK(model_ok() && model_err(g, out, no, model_maxabs(out, no)) < 1e-5, "model matmul_fwd N=%d IC=%d OC=%d: err %.3g (of max |out|) < 1e-5", N, IC, OC,
          model_err(g, out, no, model_maxabs(out, no)));
    free(g);

    dpprof_matmul_bwd_ref(dinp, dw, dout, inp, w, N, IC, OC);
    dpprof_matmul_bwd_gpu(d_dinp, d_dw, d_dout, d_inp, d_w, N, IC, OC);
    g = model_down(d_dinp, ni);
    g2 = model_down(d_dw, nw);
    CHECK(model_ok() && model_err(g, dinp, ni, model_maxabs(dinp, ni)) < 1e-5 && model_err(g2, dw, nw, model_maxabs(dw, nw)) < 1e-5,
          "model matmul_bwd N=%d IC=%d OC=%d (+= onto random): dinp err %.3g, dweight err %.3g < 1e-5", N, IC, OC,
          model_err(g, dinp, ni, model_maxabs(dinp, ni)), model_err(g2, dw, nw, model_maxabs(dw, nw)));

    /* one output at a time (the other NULL), from the same start: the same bits as both at once */
    model_set(d_dinp, dinp0, ni);
    model_set(d_dw, dw0, nw);
    dpprof_matmul_bwd_gpu(d_dinp, NULL, d_dout, d_inp, d_w, N, IC, OC);
    g3 = model_down(d_dw, nw);
    ok = model_same(g3, dw0, nw);
    free(g3);
    g3 = model_down(d_dinp, ni);
    ok = ok && model_same(g3, g, ni);
    free(g3);
    dpprof_matmul_bwd_gpu(NULL, d_dw, d_dout, d_inp, d_w, N, IC, OC);
    g3 = model_down(d_dw, nw);
    ok = ok && model_same(g3, g2, nw);
    free(g3);
    g3 = model_down(d_dinp, ni);
    ok = ok && model_same(g3, g, ni);
    free(g3);
    CHECK(model_ok() && ok, "model matmul_bwd N=%d IC=%d OC=%d: a NULL output is skipped, the other is the same bits (determinism)", N, IC, OC);
    free(g);
    free(g2);
    dpprof_cuda_release(d_inp);
    dpprof_cuda_release(d_w);
    dpprof_cuda_release(d_dout);
    dpprof_cuda_release(d_out);
    dpprof_cuda_release(d_dinp);
    dpprof_cuda_release(d_dw);
    free(inp);
    free(w);
    free(dout);
    free(dinp0);
    free(dw0);
    free(out);
    free(dinp);
    free(dw);
}

/* ---- embedding ---- */
static void test_model_embedding_shape(int N, int C, int V, int distinct) {
    size_t nw = (size_t)V * C, no = (size_t)N * C;
    int *tok = (int *)malloc((size_t)N * sizeof(int)), n;
    float *wte = model_rand(nw, 1.0f), *dout = model_rand(no, 1.0f), *dw0 = model_rand(nw, 1.0f), *out = (float *)malloc(no * 4);
    float *dw = model_copyh(dw0, nw), *g, *g2;
    int *d_tok;
    float *d_wte, *d_out, *d_dout, *d_dw;
    for (n = 0; n < N; n++) tok[n] = (int)(model_next() % (uint64_t)distinct); /* repeats */
    tok[N - 1] = V - 1;                                                        /* the last row of wte */
    d_tok = (int *)model_up(tok, (size_t)N * sizeof(int));
    d_wte = (float *)model_up(wte, nw * 4);
    d_out = (float *)model_up(dout, no * 4);
    d_dout = (float *)model_up(dout, no * 4);
    d_dw = (float *)model_up(dw0, nw * 4);

    dpprof_embedding_fwd_ref(out, tok, wte, N, C);
    dpprof_embedding_fwd_gpu(d_out, d_tok, d_wte, N, C);
    g = model_down(d_out, no);
    CHECK(model_ok() && model_same(g, out, no), "model embedding_fwd N=%d C=%d V=%d: bitwise", N, C, V);
    free(g);

    dpprof_embedding_bwd_ref(dw, dout, tok, N, C);
    dpprof_embedding_bwd_gpu(d_dw, d_dout, d_tok, N, C);
    g = model_down(d_dw, nw);
    model_set(d_dw, dw0, nw);
    dpprof_embedding_bwd_gpu(d_dw, d_dout, d_tok, N, C);
    g2 = model_down(d_dw, nw);
    CHECK(model_ok() && model_err(g, dw, nw, 1e-3) < 1e-5 && model_same(g, g2, nw),
          "model embedding_bwd N=%d C=%d V=%d, %d distinct tokens, += onto random: err %.3g < 1e-5 (%s), two runs the same bits", N, C, V, distinct,
          model_err(g, dw, nw, 1e-3), model_same(g, dw, nw) ? "bitwise equal to the reference" : "not bitwise");
    free(g);
    free(g2);
    dpprof_cuda_release(d_tok);
    dpprof_cuda_release(d_wte);
    dpprof_cuda_release(d_out);
    dpprof_cuda_release(d_dout);
    dpprof_cuda_release(d_dw);
    free(tok);
    free(wte);
    free(dout);
    free(dw0);
    free(out);
    free(dw);
}

/* ---- rmsnorm ---- */
/* vec: the 16-byte vector kernels take it (the backward in one pass and the dweight sum: 2 launches), else
   the row kernels (the backward's dinp pass, the dweight partials and their sum: 3) */
static void test_model_rmsnorm_shape(int N, int C, float eps, int vec) {
    size_t nx = (size_t)N * C;
    long long l0;
    float *inp = model_rand(nx, 2.0f), *w = model_rand((size_t)C, 1.5f), *dout = model_rand(nx, 1.0f), *dinp0 = model_rand(nx, 1.0f), *dw0 = model_rand((size_t)C, 1.0f);
    float *out = (float *)malloc(nx * 4), *rstd = (float *)malloc((size_t)N * 4), *dinp = model_copyh(dinp0, nx), *dw = model_copyh(dw0, (size_t)C);
    float *d_inp = (float *)model_up(inp, nx * 4), *d_w = (float *)model_up(w, (size_t)C * 4), *d_dout = (float *)model_up(dout, nx * 4);
    float *d_out = (float *)model_up(dout, nx * 4), *d_rstd = (float *)model_up(inp, (size_t)N * 4);
    float *d_dinp = (float *)model_up(dinp0, nx * 4), *d_dw = (float *)model_up(dw0, (size_t)C * 4);
    float *g, *g2, *g3, *g4;
    double e1, e2;

    dpprof_rmsnorm_fwd_ref(out, rstd, inp, w, N, C, eps);
    dpprof_rmsnorm_fwd_gpu(d_out, d_rstd, d_inp, d_w, N, C, eps);
    g = model_down(d_out, nx);
    g2 = model_down(d_rstd, (size_t)N);
    e1 = model_err(g, out, nx, 1e-3);
    e2 = model_err(g2, rstd, (size_t)N, 1e-3);
    CHECK(model_ok() && e1 < 1e-5 && e2 < 1e-5, "model rmsnorm_fwd N=%d C=%d eps=%g: out err %.3g, rstd err %.3g < 1e-5", N, C, (double)eps, e1, e2);
    free(g);
    free(g2);

    { /* the residual add and the norm of its sum: one launch (vector kernel), else the add and the norm's */
        float *res = model_copyh(dinp0, nx), *o2 = (float *)malloc(nx * 4), *r2 = (float *)malloc((size_t)N * 4);
        float *d_res = (float *)model_up(dinp0, nx * 4), *gr;
        dpprof_add_rmsnorm_fwd_ref(o2, r2, res, inp, w, N, C, eps);
        l0 = dpprof_cuda_launch_count();
        dpprof_add_rmsnorm_fwd_gpu(d_out, d_rstd, d_res, d_inp, d_w, N, C, eps);
        l0 = dpprof_cuda_launch_count() - l0;
        g = model_down(d_out, nx);
        g2 = model_down(d_rstd, (size_t)N);
        gr = model_down(d_res, nx);
        e1 = model_err(g, o2, nx, 1e-3);
        e2 = model_err(g2, r2, (size_t)N, 1e-3);
        CHECK(model_ok() && model_same(gr, res, nx) && e1 < 1e-5 && e2 < 1e-5 && l0 == (vec ? 1 : 2),
              "model add_rmsnorm_fwd N=%d C=%d: res += other bitwise, out err %.3g, rstd err %.3g < 1e-5; %lld launches (%s)", N, C, e1, e2, l0, vec ? "one pass: 1" : "the add, then the norm: 2");
        free(g), free(g2), free(gr), free(res), free(o2), free(r2);
        dpprof_cuda_release(d_res);
    }

    /* the backward from the reference's rstd, so only the backward is measured */
    model_set(d_rstd, rstd, (size_t)N);
    dpprof_rmsnorm_bwd_ref(dinp, dw, dout, inp, w, rstd, N, C);
    l0 = dpprof_cuda_launch_count();
    dpprof_rmsnorm_bwd_gpu(d_dinp, d_dw, d_dout, d_inp, d_w, d_rstd, N, C);
    l0 = dpprof_cuda_launch_count() - l0;
    g = model_down(d_dinp, nx);
    g2 = model_down(d_dw, (size_t)C);
    e1 = model_err(g, dinp, nx, 1e-2);
    e2 = model_err(g2, dw, (size_t)C, model_maxabs(dw, (size_t)C));
    CHECK(model_ok() && e1 < 1e-5 && e2 < 1e-5 && l0 == (vec ? 2 : 3), "model rmsnorm_bwd N=%d C=%d (+= onto random): dinp err %.3g, dweight err %.3g < 1e-5; %lld launches (%s)", N,
          C, e1, e2, l0, vec ? "the vector kernel and the sum: 2" : "the row kernels: 3");

    /* again from the same start: the same bits; dweight NULL leaves dinp's bits alone */
    model_set(d_dinp, dinp0, nx);
    model_set(d_dw, dw0, (size_t)C);
    dpprof_rmsnorm_bwd_gpu(d_dinp, d_dw, d_dout, d_inp, d_w, d_rstd, N, C);
    g3 = model_down(d_dinp, nx);
    g4 = model_down(d_dw, (size_t)C);
    CHECK(model_ok() && model_same(g, g3, nx) && model_same(g2, g4, (size_t)C), "model rmsnorm_bwd N=%d C=%d: two runs the same bits", N, C);
    free(g3);
    free(g4);
    model_set(d_dinp, dinp0, nx);
    model_set(d_dw, dw0, (size_t)C);
    dpprof_rmsnorm_bwd_gpu(d_dinp, NULL, d_dout, d_inp, d_w, d_rstd, N, C);
    g3 = model_down(d_dinp, nx);
    g4 = model_down(d_dw, (size_t)C);
    CHECK(model_ok() && model_same(g, g3, nx) && model_same(g4, dw0, (size_t)C), "model rmsnorm_bwd N=%d C=%d: dweight NULL, dinp the same bits", N, C);
    free(g3);
    free(g4);
    free(g);
    free(g2);
    dpprof_cuda_release(d_inp);
    dpprof_cuda_release(d_w);
    dpprof_cuda_release(d_dout);
    dpprof_cuda_release(d_out);
    dpprof_cuda_release(d_rstd);
    dpprof_cuda_release(d_dinp);
    dpprof_cuda_release(d_dw);
    free(inp);
    free(w);
    free(dout);
    free(dinp0);
    free(dw0);
    free(out);
    free(rstd);
    free(dinp);
    free(dw);
}

/* ---- rope ---- */
static void test_model_rope_shape(int B, int T, int NH, int HS, double theta) {
    size_t n = (size_t)B * T * NH * HS;
    float *x = model_rand(n, 1.0f), *ref = model_copyh(x, n), *d_x = (float *)model_up(x, n * 4), *g;
    double e1, e2;
    dpprof_rope_fwd_ref(ref, B, T, NH, HS, theta);
    dpprof_rope_fwd_gpu(d_x, B, T, NH, HS, theta);
    g = model_down(d_x, n);
    e1 = model_err(g, ref, n, 1e-2);
    free(g);
    dpprof_rope_bwd_ref(ref, B, T, NH, HS, theta);
    dpprof_rope_bwd_gpu(d_x, B, T, NH, HS, theta);
    g = model_down(d_x, n);
    e2 = model_err(g, ref, n, 1e-2);
    CHECK(model_ok() && e1 < 1e-5 && e2 < 1e-5, "model rope B=%d T=%d NH=%d HS=%d theta=%g: fwd err %.3g, then bwd err %.3g < 1e-5 (floor 1e-2)", B, T, NH, HS, theta, e1, e2);
    free(g);
    free(x);
    free(ref);
    dpprof_cuda_release(d_x);
}

/* ---- swiglu, add, scale, last token ---- */
/* off: element offset of every device pointer (1: 4-byte aligned, one by one; 2: 8-byte, pairs; 0: 16-byte
   vectors); n not a multiple of 4: a tail past the last vector */
static void test_model_elementwise(size_t n, size_t off) {
    float *gate = model_rand(n, 6.0f), *up = model_rand(n, 2.0f), *dh = model_rand(n, 1.0f);
    float *h = (float *)malloc(n * 4), *dg = (float *)malloc(n * 4), *du = (float *)malloc(n * 4), *g, *g2, *pad = model_rand(n + off, 1.0f);
    float *b_gate = (float *)model_up(pad, (n + off) * 4), *b_up = (float *)model_up(pad, (n + off) * 4), *b_dh = (float *)model_up(pad, (n + off) * 4);
    float *b_h = (float *)model_up(pad, (n + off) * 4), *b_dg = (float *)model_up(pad, (n + off) * 4), *b_du = (float *)model_up(pad, (n + off) * 4);
    float *d_gate = b_gate + off, *d_up = b_up + off, *d_dh = b_dh + off, *d_h = b_h + off, *d_dg = b_dg + off, *d_du = b_du + off;
    double e1, e2;
    model_set(d_gate, gate, n), model_set(d_up, up, n), model_set(d_dh, dh, n);

    dpprof_swiglu_fwd_ref(h, gate, up, n);
    dpprof_swiglu_fwd_gpu(d_h, d_gate, d_up, n);
    g = model_down(d_h, n);
    e1 = model_err(g, h, n, 1e-6);
    CHECK(model_ok() && e1 < 1e-5, "model swiglu_fwd n=%zu offset %zu: err %.3g < 1e-5", n, off, e1);
    free(g);
    dpprof_swiglu_bwd_ref(dg, du, dh, gate, up, n);
    dpprof_swiglu_bwd_gpu(d_dg, d_du, d_dh, d_gate, d_up, n);
    g = model_down(d_dg, n);
    g2 = model_down(d_du, n);
    e1 = model_err(g, dg, n, 1e-6);
    e2 = model_err(g2, du, n, 1e-6);
    CHECK(model_ok() && e1 < 1e-5 && e2 < 1e-5, "model swiglu_bwd n=%zu offset %zu: dgate err %.3g, dup err %.3g < 1e-5", n, off, e1, e2);
    free(g);
    free(g2);

    /* add: separate output, out == a, out == b; bit for bit (one float add) */
    {
        int ok;
        dpprof_add_ref(h, gate, up, n);
        dpprof_add_gpu(d_h, d_gate, d_up, n);
        g = model_down(d_h, n);
        ok = model_same(g, h, n);
        free(g);
        dpprof_add_gpu(d_dg, d_gate, d_up, n); /* d_dg = gate + up, then d_dg += dh in place (out == a) */
        dpprof_add_gpu(d_dg, d_dg, d_dh, n);
        dpprof_add_ref(h, h, dh, n);
        g = model_down(d_dg, n);
        ok = ok && model_same(g, h, n);
        free(g);
        dpprof_add_gpu(d_dg, d_up, d_dg, n); /* out == b */
        dpprof_add_ref(h, up, h, n);
        g = model_down(d_dg, n);
        ok = ok && model_same(g, h, n);
        free(g);
        CHECK(model_ok() && ok, "model add n=%zu offset %zu: separate, out == a, out == b: bitwise", n, off);
    }
    /* scale: separate and in place, bit for bit */
    {
        int ok;
        dpprof_scale_ref(h, gate, n, 0.3);
        dpprof_scale_gpu(d_h, d_gate, n, 0.3);
        g = model_down(d_h, n);
        ok = model_same(g, h, n);
        free(g);
        dpprof_scale_ref(h, h, n, -1.0 / 3.0);
        dpprof_scale_gpu(d_h, d_h, n, -1.0 / 3.0);
        g = model_down(d_h, n);
        ok = ok && model_same(g, h, n);
        CHECK(model_ok() && ok, "model scale n=%zu offset %zu: separate and in place: bitwise (worst %.3g)", n, off, model_err(g, h, n, 1e-30));
        free(g);
    }
    if (off) { /* nothing before the offset was written */
        g = model_down(b_h, off);
        CHECK(model_ok() && !memcmp(g, pad, off * 4), "model elementwise n=%zu offset %zu: the elements before are untouched", n, off);
        free(g);
    }
    dpprof_cuda_release(b_gate);
    dpprof_cuda_release(b_up);
    dpprof_cuda_release(b_dh);
    dpprof_cuda_release(b_h);
    dpprof_cuda_release(b_dg);
    dpprof_cuda_release(b_du);
    free(pad);
    free(gate);
    free(up);
    free(dh);
    free(h);
    free(dg);
    free(du);
}

static void test_model_last_token(int B, int T, int C) {
    size_t ni = (size_t)B * T * C, no = (size_t)B * C;
    float *inp = model_rand(ni, 1.0f), *dout = model_rand(no, 1.0f), *out = (float *)malloc(no * 4), *dinp = model_copyh(inp, ni);
    float *d_inp = (float *)model_up(inp, ni * 4), *d_dout = (float *)model_up(dout, no * 4), *d_out = (float *)model_up(dout, no * 4), *g;
    int ok;
    dpprof_last_token_fwd_ref(out, inp, B, T, C);
    dpprof_last_token_fwd_gpu(d_out, d_inp, B, T, C);
    g = model_down(d_out, no);
    ok = model_same(g, out, no);
    free(g);
    dpprof_last_token_bwd_ref(dinp, dout, B, T, C); /* += onto inp's values: the other rows untouched */
    dpprof_last_token_bwd_gpu(d_inp, d_dout, B, T, C);
    g = model_down(d_inp, ni);
    CHECK(model_ok() && ok && model_same(g, dinp, ni), "model last_token fwd and bwd (+=) B=%d T=%d C=%d: bitwise", B, T, C);
    free(g);
    dpprof_cuda_release(d_inp);
    dpprof_cuda_release(d_dout);
    dpprof_cuda_release(d_out);
    free(inp);
    free(dout);
    free(out);
    free(dinp);
}

/* ---- cross-entropy ---- */
static void test_model_crossentropy_shape(int B, int T, int V, float scale, float shift) {
    size_t N = (size_t)B * T, nl = N * (size_t)V, i;
    int *tgt = (int *)malloc(N * sizeof(int)), *d_tgt;
    float *logits = model_rand(nl, scale), *dl = model_rand((size_t)B, 1.0f), *losses = (float *)malloc((size_t)B * 4), *dlog = (float *)malloc(nl * 4);
    float *d_logits, *d_dl, *d_losses, *d_dlog, *g, *g2;
    double e1, e2;
    for (i = 0; i < nl; i++) logits[i] += shift;
    for (i = 0; i < N; i++) tgt[i] = (int)(model_next() % (uint64_t)V);
    tgt[0] = V - 1;
    logits[V + 2] = -INFINITY; /* a logit that adds nothing, inside a vector of row 1 */
    if (tgt[1] == 2) tgt[1] = 3;
    d_tgt = (int *)model_up(tgt, N * sizeof(int));
    d_logits = (float *)model_up(logits, nl * 4);
    d_dl = (float *)model_up(dl, (size_t)B * 4);
    d_losses = (float *)model_up(dl, (size_t)B * 4);
    d_dlog = (float *)model_up(logits, nl * 4);

    dpprof_crossentropy_fwd_ref(losses, logits, tgt, B, T, V);
    dpprof_crossentropy_fwd_gpu(d_losses, d_logits, d_tgt, B, T, V);
    g = model_down(d_losses, (size_t)B);
    dpprof_crossentropy_fwd_gpu(d_losses, d_logits, d_tgt, B, T, V);
    g2 = model_down(d_losses, (size_t)B);
    e1 = model_err(g, losses, (size_t)B, 1e-3);
    CHECK(model_ok() && e1 < 1e-5 && model_same(g, g2, (size_t)B), "model crossentropy_fwd B=%d T=%d V=%d logits %g+-%g: err %.3g < 1e-5, two runs the same bits", B, T, V,
          shift, scale, e1);
    free(g);
    free(g2);

    dpprof_crossentropy_bwd_ref(dlog, logits, tgt, dl, B, T, V);
    dpprof_crossentropy_bwd_gpu(d_dlog, d_logits, d_tgt, d_dl, B, T, V); /* separate output (started as garbage) */
    g = model_down(d_dlog, nl);
    dpprof_crossentropy_bwd_gpu(d_logits, d_logits, d_tgt, d_dl, B, T, V); /* in place */
    g2 = model_down(d_logits, nl);
    e1 = model_err(g, dlog, nl, 1e-6);
    e2 = model_err(g2, dlog, nl, 1e-6);
    CHECK(model_ok() && e1 < 1e-5 && e2 < 1e-5 && model_same(g, g2, nl), "model crossentropy_bwd B=%d T=%d V=%d: err %.3g, in place err %.3g < 1e-5, the same bits", B, T, V,
          e1, e2);
    free(g);
    free(g2);
    dpprof_cuda_release(d_tgt);
    dpprof_cuda_release(d_logits);
    dpprof_cuda_release(d_dl);
    dpprof_cuda_release(d_losses);
    dpprof_cuda_release(d_dlog);
    free(tgt);
    free(logits);
    free(dl);
    free(losses);
    free(dlog);
}

/* ---- optimizers ---- */
/* off: element offset of the device arrays (0: 4 weights a thread, with a tail where n % 4 != 0; 1: one) */
static void test_model_optim(size_t n, size_t off) {
    float *p = model_rand(n, 1.0f), *m = model_rand(n, 0.1f), *v = model_rand(n, 0.01f), *gr = model_rand(n, 1.0f), *pad = model_rand(n + off, 1.0f);
    float *b_p = (float *)model_up(pad, (n + off) * 4), *b_m = (float *)model_up(pad, (n + off) * 4), *b_v = (float *)model_up(pad, (n + off) * 4);
    float *b_g = (float *)model_up(pad, (n + off) * 4), *d_p = b_p + off, *d_m = b_m + off, *d_v = b_v + off, *d_g = b_g + off, *g1, *g2, *g3;
    size_t i;
    double e1, e2, e3;
    for (i = 0; i < n; i++) v[i] = v[i] * v[i];
    model_set(d_p, p, n), model_set(d_m, m, n), model_set(d_v, v, n), model_set(d_g, gr, n);
    dpprof_adam_ref(p, m, v, gr, n, 1e-3, 0.9, 0.999, 1e-8, 0.1, 3);
    dpprof_adam_gpu(d_p, d_m, d_v, d_g, n, 1e-3, 0.9, 0.999, 1e-8, 0.1, 3, NULL);
    g1 = model_down(d_p, n);
    g2 = model_down(d_m, n);
    g3 = model_down(d_v, n);
    e1 = model_err(g1, p, n, 1e-6);
    e2 = model_err(g2, m, n, 1e-6);
    e3 = model_err(g3, v, n, 1e-12);
    CHECK(model_ok() && e1 < 1e-6 && e2 < 1e-6 && e3 < 1e-6, "model adam n=%zu offset %zu t=3 wd=0.1: param err %.3g, m err %.3g, v err %.3g < 1e-6 (%s)", n, off, e1, e2, e3,
          model_same(g1, p, n) && model_same(g2, m, n) && model_same(g3, v, n) ? "bitwise" : "not bitwise");
    free(g1);
    free(g2);
    free(g3);
    dpprof_sgd_ref(p, gr, n, 0.05);
    dpprof_sgd_gpu(d_p, d_g, n, 0.05, NULL);
    g1 = model_down(d_p, n);
    e1 = model_err(g1, p, n, 1e-6);
    CHECK(model_ok() && e1 < 1e-6, "model sgd n=%zu offset %zu: err %.3g < 1e-6 (%s)", n, off, e1, model_same(g1, p, n) ? "bitwise" : "not bitwise");
    free(g1);
    dpprof_cuda_release(b_p);
    dpprof_cuda_release(b_m);
    dpprof_cuda_release(b_v);
    dpprof_cuda_release(b_g);
    free(pad);
    free(p);
    free(m);
    free(v);
    free(gr);
}

/* the optimizers' fused passes (what the engine runs): with the bf16 working copy written in the same pass,
   the weights and moments are bit for bit those without it and the copy is bit for bit dpprof_bf16_pack_ref of
   the new weights (what dpprof_cast_bf16_gpu would write after it), nothing past n written; with the noise
   in the same pass too (dpprof_noise_adam_gpu, --fused-noise), the same bits as dpprof_noise_scale_gpu then
   the optimizer, at an offset inside a philox block, and the gradient left as it was */
static void test_model_optim_fused(size_t n) {
    float *h[4], *g[2];
    dpprof_bf16 *want = (dpprof_bf16 *)malloc(n * sizeof(dpprof_bf16));
    int k, j, ok[2][2] = {{1, 1}, {1, 1}};
    const double sd = 0.7, inv_b = 0.125;
    const uint64_t seed = 99, step = 4, off = 5;
    h[0] = model_rand(n, 1.0f), h[1] = model_rand(n, 0.1f), h[2] = model_rand(n, 0.01f), h[3] = model_rand(n, 1.0f);
    for (size_t i = 0; i < n; i++) h[2][i] *= h[2][i];
    for (k = 0; k < 2; k++) {     /* adam, sgd */
        for (j = 0; j < 2; j++) { /* the copy alone, then the noise as well */
            float *d[2][3], *a[2][3], *gb;
            dpprof_bf16 *d_c[2], *c[2];
            int u, t;
            g[0] = (float *)model_up(h[3], n * 4), g[1] = (float *)model_up(h[3], n * 4);
            for (u = 0; u < 2; u++) {
                for (t = 0; t < 3; t++) d[u][t] = (float *)model_up(h[t], n * 4);
                d_c[u] = (dpprof_bf16 *)model_up(h[3], (n + 1) * sizeof(dpprof_bf16)); /* garbage, and one element past n */
            }
            /* set 0: the unfused ops (no copy; the noise on its own); set 1: the fused pass */
            if (j) dpprof_noise_scale_gpu(g[0], n, sd, dpprof_noise_seed(seed), step, off, inv_b);
            if (k == 0) dpprof_adam_gpu(d[0][0], d[0][1], d[0][2], g[0], n, 1e-3, 0.9, 0.999, 1e-8, 0.1, 3, j ? d_c[0] : NULL);
            else dpprof_sgd_gpu(d[0][0], g[0], n, 0.05, j ? d_c[0] : NULL);
            if (k == 0 && j) dpprof_noise_adam_gpu(d[1][0], d[1][1], d[1][2], g[1], n, 1e-3, 0.9, 0.999, 1e-8, 0.1, 3, d_c[1], sd, dpprof_noise_seed(seed), step, off, inv_b);
            else if (k == 0) dpprof_adam_gpu(d[1][0], d[1][1], d[1][2], g[1], n, 1e-3, 0.9, 0.999, 1e-8, 0.1, 3, d_c[1]);
            else if (j) dpprof_noise_sgd_gpu(d[1][0], g[1], n, 0.05, d_c[1], sd, dpprof_noise_seed(seed), step, off, inv_b);
            else dpprof_sgd_gpu(d[1][0], g[1], n, 0.05, d_c[1]);
            for (u = 0; u < 2; u++) {
                c[u] = (dpprof_bf16 *)malloc((n + 1) * sizeof(dpprof_bf16));
                dpprof_cuda_copy(c[u], d_c[u], (n + 1) * sizeof(dpprof_bf16), DPPROF_COPY_D2H);
                for (t = 0; t < 3; t++) a[u][t] = model_down(d[u][t], n);
            }
            gb = model_down(g[1], n);
            dpprof_bf16_pack_ref(want, a[1][0], n);
            ok[k][j] = model_ok() && model_same(a[0][0], a[1][0], n) && model_same(a[0][1], a[1][1], n) && model_same(a[0][2], a[1][2], n) &&
                       !memcmp(c[1], want, n * sizeof(dpprof_bf16)) && !memcmp(c[1] + n, (const dpprof_bf16 *)h[3] + n, sizeof(dpprof_bf16)) &&
                       (!j || !memcmp(c[0], c[1], n * sizeof(dpprof_bf16))) && model_same(gb, h[3], n);
            for (u = 0; u < 2; u++) {
                for (t = 0; t < 3; t++) free(a[u][t]), dpprof_cuda_release(d[u][t]);
                dpprof_cuda_release(d_c[u]), dpprof_cuda_release(g[u]), free(c[u]);
            }
            free(gb);
        }
    }
    CHECK(ok[0][0], "model adam n=%zu with the bf16 copy: weights and moments bitwise those without it, the copy bitwise pack_ref of the new weights", n);
    CHECK(ok[1][0], "model sgd n=%zu with the bf16 copy: weights bitwise those without it, the copy bitwise pack_ref of the new weights", n);
    CHECK(ok[0][1], "model noise_adam n=%zu offset=%llu stddev=%g: bitwise noise_scale then adam (weights, moments, copy), the gradient unchanged", n, (unsigned long long)off, sd);
    CHECK(ok[1][1], "model noise_sgd n=%zu offset=%llu stddev=%g: bitwise noise_scale then sgd (weights, copy), the gradient unchanged", n, (unsigned long long)off, sd);
    for (j = 0; j < 4; j++) free(h[j]);
    free(want);
}

/* empty sizes queue nothing and write nothing; matmul with IC = 0 writes zeros (empty dot products) */
static void test_model_zero_sizes(void) {
    float h[8] = {1, 2, 3, 4, 5, 6, 7, 8}, *g;
    int tok[2] = {0, 1};
    float *d = (float *)model_up(h, sizeof h), *d2 = (float *)model_up(h, sizeof h);
    int *dt = (int *)model_up(tok, sizeof tok), ok;
    dpprof_fill_gpu(d, 0, 0.0f);
    dpprof_init_normal_gpu(d, 0, 1.0, 1, 2);
    dpprof_noise_scale_gpu(d, 0, 1.0, dpprof_noise_seed(1), 2, 3, 0.5);
    dpprof_nonfinite_gpu(d, 0, 0);
    dpprof_matmul_fwd_gpu(d, d2, d2, 0, 2, 2);
    dpprof_matmul_bwd_gpu(d, d, d2, d2, d2, 0, 2, 2);
    dpprof_matmul_bwd_gpu(d, d, d2, d2, d2, 2, 2, 0);
    dpprof_embedding_fwd_gpu(d, dt, d2, 0, 4);
    dpprof_embedding_bwd_gpu(d, d2, dt, 0, 4);
    dpprof_embedding_bwd_gpu(d, d2, dt, 2, 0);
    dpprof_rmsnorm_fwd_gpu(d, d, d2, d2, 0, 4, 1e-5f);
    dpprof_rmsnorm_bwd_gpu(d, d, d2, d2, d2, d2, 0, 4);
    dpprof_rope_fwd_gpu(d, 0, 2, 1, 4, 1e4);
    dpprof_rope_bwd_gpu(d, 1, 0, 1, 4, 1e4);
    dpprof_swiglu_fwd_gpu(d, d2, d2, 0);
    dpprof_swiglu_bwd_gpu(d, d, d2, d2, d2, 0);
    dpprof_add_gpu(d, d2, d2, 0);
    dpprof_scale_gpu(d, d2, 0, 2.0);
    dpprof_crossentropy_fwd_gpu(d, d2, dt, 0, 2, 4);
    dpprof_crossentropy_bwd_gpu(d, d2, dt, d2, 1, 0, 4);
    dpprof_last_token_fwd_gpu(d, d2, 0, 2, 4);
    dpprof_last_token_bwd_gpu(d, d2, 2, 2, 0);
    dpprof_adam_gpu(d, d, d, d2, 0, 1e-3, 0.9, 0.999, 1e-8, 0.0, 1, (dpprof_bf16 *)d);
    dpprof_sgd_gpu(d, d2, 0, 0.1, (dpprof_bf16 *)d);
    dpprof_noise_adam_gpu(d, d, d, d2, 0, 1e-3, 0.9, 0.999, 1e-8, 0.0, 1, (dpprof_bf16 *)d, 1.0, dpprof_noise_seed(1), 2, 3, 0.5);
    dpprof_noise_sgd_gpu(d, d2, 0, 0.1, (dpprof_bf16 *)d, 1.0, dpprof_noise_seed(1), 2, 3, 0.5);
    g = model_down(d, 8);
    ok = model_ok() && model_same(g, h, 8);
    free(g);
    dpprof_matmul_fwd_gpu(d, d2, d2, 2, 0, 3); /* out (2,3) = zeros */
    g = model_down(d, 8);
    ok = ok && g[0] == 0 && g[5] == 0 && g[6] == 7;
    CHECK(model_ok() && ok, "model: zero sizes queue no error and write nothing; matmul with IC=0 writes zeros");
    free(g);
    dpprof_cuda_release(d);
    dpprof_cuda_release(d2);
    dpprof_cuda_release(dt);
}

/* ---- bf16 storage (dpprof_cuda_set_storage(DPPROF_DTYPE_BF16)) -------------------------------------
   each op again with its activations stored as bf16: random inputs rounded to bf16, activations uploaded
   packed, the rest fp32. reference: the fp32 _ref on the widened inputs, its activation outputs rounded
   (dpprof_bf16_round_ref). fp32 outputs (dweight, dwte, rstd, losses) keep the fp32 checks' tolerances.
   a bf16 output b against its reference r passes when |b - r| <= 2^-7 max(|b|, |r|) + tol * floor, with
   tol and floor those of the fp32 check: one bf16 ulp (gpu and reference round fp32 values that differ
   by at most the fp32 check's allowance, so they land on the same or adjacent bf16) plus that
   allowance near zero, and at most 5% of the elements off by more than that allowance (model_ulp's score).
   ops the fp32 checks compare bitwise are compared bitwise here too. */

/* host floats rounded to bf16 (a new array) */
static float *model_b16(const float *x, size_t n) {
    float *r = model_copyh(x, n);
    dpprof_bf16_round_ref(r, n);
    return r;
}

/* host floats (already bf16 values, or any: they are rounded) packed and uploaded */
static void *model_up16(const float *h, size_t n) {
    dpprof_bf16 *p = (dpprof_bf16 *)malloc((n ? n : 1) * sizeof(dpprof_bf16));
    void *d;
    dpprof_bf16_pack_ref(p, h, n);
    d = model_up(p, n * sizeof(dpprof_bf16));
    free(p);
    return d;
}

static void model_set16(void *d, const float *h, size_t n) {
    dpprof_bf16 *p = (dpprof_bf16 *)malloc((n ? n : 1) * sizeof(dpprof_bf16));
    dpprof_bf16_pack_ref(p, h, n);
    if (n) dpprof_cuda_copy(d, p, n * sizeof(dpprof_bf16), DPPROF_COPY_H2D);
    free(p);
}

/* n bf16 on the device -> new host array of their float values */
static float *model_down16(const void *d, size_t n) {
    dpprof_bf16 *p = (dpprof_bf16 *)calloc(n ? n : 1, sizeof(dpprof_bf16));
    float *h = (float *)calloc(n ? n : 1, sizeof(float));
    if (n) dpprof_cuda_copy(p, d, n * sizeof(dpprof_bf16), DPPROF_COPY_D2H);
    dpprof_bf16_unpack_ref(h, p, n);
    free(p);
    return h;
}

/* score of a bf16 output, <= 1 passes, the worst of three:
   - the worst |b - r| / (2^-7 max(|b|,|r|) + abs);
   - the elements that differ by more than abs (a bf16 ulp apart: gpu and reference round nearly the same
     value, so a few land on the two sides of a rounding boundary) over 5% of the elements plus
     sum min(1, a_i / 2^-7 max(|b_i|,|r_i|)): an element whose two values may lie a_i apart lands so with a
     probability of about a_i / ulp at most (attention's dk on the tensor cores at small T, where the last
     keys' few terms each carry dS's bf16 rounding, is an eighth of an ulp or more on many elements);
   - the imbalance of those elements, |#(|b| > |r|) - #(|b| < |r|)|, over 2% of the elements plus three
     standard deviations of a fair split: a rounding that is not to nearest (truncation) moves about half
     the elements, all toward zero, where rounding noise moves as many up as down.
   nan fails. model_ulpv adds absv[i] (when not NULL) to element i's abs */
static double model_ulpv(const float *b, const float *r, size_t n, const double *absv, double abs) {
    double w = 0.0, allow = 0.05 * (double)n, f, g;
    size_t i, off = 0;
    long long bias = 0;
    for (i = 0; i < n; i++) {
        double d = fabs((double)b[i] - (double)r[i]), m = fmax(fabs((double)b[i]), fabs((double)r[i]));
        double a = abs + (absv ? absv[i] : 0.0), q = d == 0.0 ? 0.0 : d / (m / 128.0 + a);
        if (!(q <= w) && w == w) w = q; /* a nan stays */
        if (!(d <= a)) off++, bias += fabs((double)b[i]) > fabs((double)r[i]) ? 1 : -1;
        if (m > 0.0) allow += fmin(1.0, a / (m / 128.0));
    }
    if (!n) return w;
    f = (double)off / allow;
    g = fabs((double)bias) / (0.02 * (double)n + 3.0 * sqrt((double)off));
    return fmax(w, fmax(f, g));
}
static double model_ulp(const float *b, const float *r, size_t n, double abs) { return model_ulpv(b, r, n, NULL, abs); }

/* the header's conversions on the cpu: ties to even, nan quiet with its sign, overflow to inf, denormals */
static void test_model_bf16_convert(void) {
    /* clang-format off */
    static const struct { uint32_t f; uint16_t h; } cs[] = {
        {0x3f800000u, 0x3f80}, {0x3f808000u, 0x3f80}, {0x3f818000u, 0x3f82}, {0x3f808001u, 0x3f81}, {0x3f80ffffu, 0x3f81},
        {0xbf808000u, 0xbf80}, {0xbf818000u, 0xbf82}, {0x00000000u, 0x0000}, {0x80000000u, 0x8000}, {0x7f800000u, 0x7f80},
        {0xff800000u, 0xff80}, {0x7fc00000u, 0x7fc0}, {0x7f800001u, 0x7fc0}, {0xffa00000u, 0xffe0}, {0x7f7fffffu, 0x7f80},
        {0xff7fffffu, 0xff80}, {0x7f7f7fffu, 0x7f7f}, {0x7f7f8000u, 0x7f80}, {0x00008000u, 0x0000}, {0x00018000u, 0x0002},
        {0x00000001u, 0x0000}, {0x0000c000u, 0x0001}, {0x007fffffu, 0x0080}, {0x80018000u, 0x8002},
    };
    /* clang-format on */
    size_t i, bad = 0;
    for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        float f, back, r;
        uint32_t u;
        dpprof_bf16 h;
        memcpy(&f, &cs[i].f, 4);
        h = dpprof_bf16_from_float(f);
        back = dpprof_bf16_to_float(h);
        memcpy(&u, &back, 4);
        r = f;
        dpprof_bf16_round_ref(&r, 1);
        if (h != cs[i].h || u != (uint32_t)cs[i].h << 16 || memcmp(&r, &back, 4)) {
            bad++;
            printf("# bf16 %08x -> %04x (want %04x), back %08x\n", (unsigned)cs[i].f, (unsigned)h, (unsigned)cs[i].h, (unsigned)u);
        }
    }
    CHECK(bad == 0, "model bf16 conversions (cpu): %zu values (ties to even, nan quiet with sign, overflow to inf, denormals, -0): %zu wrong",
          sizeof cs / sizeof cs[0], bad);
}

/* the cast kernel: bitwise dpprof_bf16_pack_ref, on special values, in pairs and one by one (odd n, offsets) */
static void test_model_bf16_cast(void) {
    static const uint32_t sp[] = {0x3f808000u, 0x3f818000u, 0x7f800001u, 0xffa00000u, 0x7fc00000u, 0x7f800000u, 0xff800000u,
                                  0x7f7fffffu, 0xff7f8000u, 0x00008000u, 0x00018000u, 0x00000001u, 0x80000000u, 0x007fffffu, 0x3f80ffffu};
    size_t n = 1001, i, k;
    float *src = model_rand(n + 2, 3.0f);
    dpprof_bf16 *want = (dpprof_bf16 *)malloc((n + 2) * sizeof(dpprof_bf16)), *got = (dpprof_bf16 *)malloc((n + 2) * sizeof(dpprof_bf16));
    float *d_src;
    dpprof_bf16 *d_dst;
    int ok = 1;
    for (i = 0; i < sizeof sp / sizeof sp[0]; i++) memcpy(&src[3 * i + 1], &sp[i], 4); /* at even and odd indices */
    memcpy(&src[n - 1], &sp[2], 4);                                                    /* the odd tail */
    d_src = (float *)model_up(src, (n + 2) * sizeof(float));
    d_dst = (dpprof_bf16 *)model_up(src, (n + 2) * sizeof(dpprof_bf16));
    /* (dst offset, src offset): aligned pairs, dst 2-byte aligned, src 4-byte (not 8) aligned */
    for (k = 0; k < 3; k++) {
        size_t od = k == 1, os = k == 2, m = n - k;
        dpprof_cuda_zero(d_dst, (n + 2) * sizeof(dpprof_bf16));
        dpprof_cast_bf16_gpu(d_dst + od, d_src + os, m);
        dpprof_cuda_copy(got, d_dst, (n + 2) * sizeof(dpprof_bf16), DPPROF_COPY_D2H);
        dpprof_bf16_pack_ref(want, src + os, m);
        if (memcmp(got + od, want, m * sizeof(dpprof_bf16)) || got[od + m] != 0 || (od && got[0] != 0)) ok = 0;
    }
    CHECK(model_ok() && ok, "model cast_bf16_gpu n=%zu (pairs; dst and src misaligned for pairs; ties, nan, inf, overflow, denormals): bitwise pack_ref, nothing else written", n);
    dpprof_cuda_release(d_src);
    dpprof_cuda_release(d_dst);
    free(src);
    free(want);
    free(got);
}

static void test_model_bf16_matmul(int N, int IC, int OC) {
    size_t ni = (size_t)N * IC, nw = (size_t)OC * IC, no = (size_t)N * OC;
    float *r0 = model_rand(ni, 1.0f), *r1 = model_rand(nw, 1.0f), *r2 = model_rand(no, 1.0f), *r3 = model_rand(ni, 1.0f);
    float *inp = model_b16(r0, ni), *w = model_b16(r1, nw), *dout = model_b16(r2, no), *dinp0 = model_b16(r3, ni), *dw0 = model_rand(nw, 1.0f);
    float *out = (float *)malloc(no * 4), *dinp = model_copyh(dinp0, ni), *dw = model_copyh(dw0, nw), *g, *g2;
    void *d_inp = model_up16(inp, ni), *d_w = model_up16(w, nw), *d_dout = model_up16(dout, no), *d_out = model_up16(dout, no), *d_dinp = model_up16(dinp0, ni);
    float *d_dw = (float *)model_up(dw0, nw * 4);
    double e1, e2;
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_matmul_fwd_ref(out, inp, w, N, IC, OC);
    dpprof_bf16_round_ref(out, no);
    dpprof_matmul_fwd_gpu((float *)d_out, (const float *)d_inp, (const float *)d_w, N, IC, OC);
    g = model_down16(d_out, no);
    e1 = model_ulp(g, out, no, 1e-5 * model_maxabs(out, no));
    CHECK(model_ok() && e1 <= 1.0, "model bf16 matmul_fwd N=%d IC=%d OC=%d: out (bf16) score %.3g <= 1 (1 ulp + 1e-5 max|out|)", N, IC, OC, e1);
    free(g);
    dpprof_matmul_bwd_ref(dinp, dw, dout, inp, w, N, IC, OC);
    dpprof_bf16_round_ref(dinp, ni);
    dpprof_matmul_bwd_gpu((float *)d_dinp, d_dw, (const float *)d_dout, (const float *)d_inp, (const float *)d_w, N, IC, OC);
    g = model_down16(d_dinp, ni);
    g2 = model_down(d_dw, nw);
    e1 = model_ulp(g, dinp, ni, 1e-5 * model_maxabs(dinp, ni));
    e2 = model_err(g2, dw, nw, model_maxabs(dw, nw));
    CHECK(model_ok() && e1 <= 1.0 && e2 < 1e-5, "model bf16 matmul_bwd N=%d IC=%d OC=%d (+= onto random): dinp (bf16) score %.3g (1 ulp + 1e-5 max), dweight (fp32) err %.3g < 1e-5",
          N, IC, OC, e1, e2);
    free(g);
    free(g2);
    g2 = model_down16(d_out, 8);
    dpprof_matmul_fwd_gpu((float *)d_out, (const float *)d_inp, (const float *)d_w, 2, 0, 3); /* IC = 0: out (2,3) = bf16 zeros */
    g = model_down16(d_out, 8);
    CHECK(model_ok() && g[0] == 0 && g[5] == 0 && !signbit(g[3]) && g[6] == g2[6] && g[7] == g2[7],
          "model bf16 matmul_fwd N=2 IC=0 OC=3: 6 bf16 zeros written, the 7th and 8th values untouched");
    free(g);
    free(g2);
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release(d_inp), dpprof_cuda_release(d_w), dpprof_cuda_release(d_dout), dpprof_cuda_release(d_out), dpprof_cuda_release(d_dinp), dpprof_cuda_release(d_dw);
    free(r0), free(r1), free(r2), free(r3), free(inp), free(w), free(dout), free(dinp0), free(dw0), free(out), free(dinp), free(dw);
}

static void test_model_bf16_embedding(int N, int C, int V, int distinct) {
    size_t nw = (size_t)V * C, no = (size_t)N * C;
    int *tok = (int *)malloc((size_t)N * sizeof(int)), n, *d_tok;
    float *wte = model_rand(nw, 1.0f), *r = model_rand(no, 1.0f), *dout = model_b16(r, no), *dw0 = model_rand(nw, 1.0f);
    float *out = (float *)malloc(no * 4), *dw = model_copyh(dw0, nw), *g;
    float *d_wte, *d_dw;
    void *d_out, *d_dout;
    double e;
    for (n = 0; n < N; n++) tok[n] = (int)(model_next() % (uint64_t)distinct);
    tok[N - 1] = V - 1;
    d_tok = (int *)model_up(tok, (size_t)N * sizeof(int));
    d_wte = (float *)model_up(wte, nw * 4);
    d_out = model_up16(dout, no);
    d_dout = model_up16(dout, no);
    d_dw = (float *)model_up(dw0, nw * 4);
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_embedding_fwd_ref(out, tok, wte, N, C);
    dpprof_bf16_round_ref(out, no);
    dpprof_embedding_fwd_gpu((float *)d_out, d_tok, d_wte, N, C);
    g = model_down16(d_out, no);
    CHECK(model_ok() && model_same(g, out, no), "model bf16 embedding_fwd N=%d C=%d V=%d: out (bf16) bitwise the rounded reference", N, C, V);
    free(g);
    { /* a frozen table stored in bf16 alone: the reference on the unpacked table, in either storage */
        float *wb = model_b16(wte, nw), *ob = (float *)malloc(no * 4);
        void *d_wb = model_up16(wb, nw), *d_of = model_up(ob, no * 4);
        dpprof_embedding_fwd_ref(out, tok, wb, N, C);
        dpprof_embedding_fwd_bf16_gpu((float *)d_out, d_tok, (const dpprof_bf16 *)d_wb, N, C);
        g = model_down16(d_out, no);
        CHECK(model_ok() && model_same(g, out, no), "model bf16 embedding_fwd_bf16 N=%d C=%d V=%d (the table in bf16): out (bf16) bitwise the reference", N, C, V);
        free(g);
        dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
        dpprof_embedding_fwd_bf16_gpu((float *)d_of, d_tok, (const dpprof_bf16 *)d_wb, N, C);
        g = model_down(d_of, no);
        CHECK(model_ok() && model_same(g, out, no), "model fp32 embedding_fwd_bf16 N=%d C=%d V=%d (the table in bf16): out (fp32) bitwise the reference", N, C, V);
        free(g);
        dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
        dpprof_cuda_release(d_wb), dpprof_cuda_release(d_of);
        free(wb), free(ob);
    }
    dpprof_embedding_bwd_ref(dw, dout, tok, N, C);
    dpprof_embedding_bwd_gpu(d_dw, (const float *)d_dout, d_tok, N, C);
    g = model_down(d_dw, nw);
    e = model_err(g, dw, nw, 1e-3);
    CHECK(model_ok() && e < 1e-5, "model bf16 embedding_bwd N=%d C=%d V=%d, += onto random: dwte (fp32) err %.3g < 1e-5", N, C, V, e);
    free(g);
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release(d_tok), dpprof_cuda_release(d_wte), dpprof_cuda_release(d_out), dpprof_cuda_release(d_dout), dpprof_cuda_release(d_dw);
    free(tok), free(wte), free(r), free(dout), free(dw0), free(out), free(dw);
}

static void test_model_bf16_rmsnorm(int N, int C, float eps, int vec) {
    size_t nx = (size_t)N * C;
    long long l0;
    float *r0 = model_rand(nx, 2.0f), *r1 = model_rand(nx, 1.0f), *r2 = model_rand(nx, 1.0f);
    float *inp = model_b16(r0, nx), *dout = model_b16(r1, nx), *dinp0 = model_b16(r2, nx), *w = model_rand((size_t)C, 1.5f), *dw0 = model_rand((size_t)C, 1.0f);
    float *out = (float *)malloc(nx * 4), *rstd = (float *)malloc((size_t)N * 4), *dinp = model_copyh(dinp0, nx), *dw = model_copyh(dw0, (size_t)C), *g, *g2;
    void *d_inp = model_up16(inp, nx), *d_dout = model_up16(dout, nx), *d_out = model_up16(dout, nx), *d_dinp = model_up16(dinp0, nx);
    float *d_w = (float *)model_up(w, (size_t)C * 4), *d_rstd = (float *)model_up(w, (size_t)N * 4), *d_dw = (float *)model_up(dw0, (size_t)C * 4);
    double e1, e2;
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_rmsnorm_fwd_ref(out, rstd, inp, w, N, C, eps);
    dpprof_bf16_round_ref(out, nx);
    dpprof_rmsnorm_fwd_gpu((float *)d_out, d_rstd, (const float *)d_inp, d_w, N, C, eps);
    g = model_down16(d_out, nx);
    g2 = model_down(d_rstd, (size_t)N);
    e1 = model_ulp(g, out, nx, 1e-5 * 1e-3);
    e2 = model_err(g2, rstd, (size_t)N, 1e-3);
    CHECK(model_ok() && e1 <= 1.0 && e2 < 1e-5, "model bf16 rmsnorm_fwd N=%d C=%d: out (bf16) score %.3g (1 ulp + 1e-8), rstd (fp32) err %.3g < 1e-5", N, C, e1, e2);
    free(g);
    free(g2);
    { /* the residual add and the norm: the norm reads the sum as stored (rounded to bf16), as the two ops do */
        float *res = model_copyh(dinp0, nx), *o2 = (float *)malloc(nx * 4), *r2 = (float *)malloc((size_t)N * 4), *gr;
        void *d_res = model_up16(dinp0, nx);
        dpprof_add_ref(res, res, inp, nx);
        dpprof_bf16_round_ref(res, nx);
        dpprof_rmsnorm_fwd_ref(o2, r2, res, w, N, C, eps);
        dpprof_bf16_round_ref(o2, nx);
        l0 = dpprof_cuda_launch_count();
        dpprof_add_rmsnorm_fwd_gpu((float *)d_out, d_rstd, (float *)d_res, (const float *)d_inp, d_w, N, C, eps);
        l0 = dpprof_cuda_launch_count() - l0;
        g = model_down16(d_out, nx);
        g2 = model_down(d_rstd, (size_t)N);
        gr = model_down16(d_res, nx);
        e1 = model_ulp(g, o2, nx, 1e-5 * 1e-3);
        e2 = model_err(g2, r2, (size_t)N, 1e-3);
        CHECK(model_ok() && model_same(gr, res, nx) && e1 <= 1.0 && e2 < 1e-5 && l0 == (vec ? 1 : 2),
              "model bf16 add_rmsnorm_fwd N=%d C=%d: res += other bitwise (bf16), out score %.3g (1 ulp + 1e-8), rstd err %.3g < 1e-5; %lld launches (%s)", N, C, e1, e2, l0,
              vec ? "one pass: 1" : "the add, then the norm: 2");
        free(g), free(g2), free(gr), free(res), free(o2), free(r2);
        dpprof_cuda_release(d_res);
    }
    model_set(d_rstd, rstd, (size_t)N);
    dpprof_rmsnorm_bwd_ref(dinp, dw, dout, inp, w, rstd, N, C);
    dpprof_bf16_round_ref(dinp, nx);
    l0 = dpprof_cuda_launch_count();
    dpprof_rmsnorm_bwd_gpu((float *)d_dinp, d_dw, (const float *)d_dout, (const float *)d_inp, d_w, d_rstd, N, C);
    l0 = dpprof_cuda_launch_count() - l0;
    g = model_down16(d_dinp, nx);
    g2 = model_down(d_dw, (size_t)C);
    e1 = model_ulp(g, dinp, nx, 1e-5 * 1e-2);
    e2 = model_err(g2, dw, (size_t)C, model_maxabs(dw, (size_t)C));
    CHECK(model_ok() && e1 <= 1.0 && e2 < 1e-5 && l0 == (vec ? 2 : 3),
          "model bf16 rmsnorm_bwd N=%d C=%d (+= onto random): dinp (bf16) score %.3g (1 ulp + 1e-7), dweight (fp32) err %.3g < 1e-5; %lld launches (%s)", N, C, e1, e2, l0,
          vec ? "the vector kernel and the sum: 2" : "the row kernels: 3");
    free(g);
    free(g2);
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release(d_inp), dpprof_cuda_release(d_dout), dpprof_cuda_release(d_out), dpprof_cuda_release(d_dinp);
    dpprof_cuda_release(d_w), dpprof_cuda_release(d_rstd), dpprof_cuda_release(d_dw);
    free(r0), free(r1), free(r2), free(inp), free(dout), free(dinp0), free(w), free(dw0), free(out), free(rstd), free(dinp), free(dw);
}

static void test_model_bf16_rope(int B, int T, int NH, int HS, double theta) {
    size_t n = (size_t)B * T * NH * HS;
    float *r = model_rand(n, 1.0f), *x = model_b16(r, n), *ref = model_copyh(x, n), *ref2 = model_copyh(x, n), *g, *g2;
    void *d_x = model_up16(x, n), *d_x2 = model_up16(x, n);
    double e1, e2;
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_rope_fwd_ref(ref, B, T, NH, HS, theta);
    dpprof_bf16_round_ref(ref, n);
    dpprof_rope_bwd_ref(ref2, B, T, NH, HS, theta);
    dpprof_bf16_round_ref(ref2, n);
    dpprof_rope_fwd_gpu((float *)d_x, B, T, NH, HS, theta);
    dpprof_rope_bwd_gpu((float *)d_x2, B, T, NH, HS, theta);
    g = model_down16(d_x, n);
    g2 = model_down16(d_x2, n);
    e1 = model_ulp(g, ref, n, 1e-5 * 1e-2);
    e2 = model_ulp(g2, ref2, n, 1e-5 * 1e-2);
    CHECK(model_ok() && e1 <= 1.0 && e2 <= 1.0, "model bf16 rope B=%d T=%d NH=%d HS=%d: fwd score %.3g, bwd score %.3g (1 ulp + 1e-7)", B, T, NH, HS, e1, e2);
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    free(g), free(g2), free(r), free(x), free(ref), free(ref2);
    dpprof_cuda_release(d_x), dpprof_cuda_release(d_x2);
}

/* off: element offset of every device pointer (0: 16-byte vectors; 1: not 4-byte aligned, one by one; 2, 4:
   pairs); n not a multiple of 8: a tail past the last vector */
static void test_model_bf16_elementwise(size_t n, size_t off) {
    float *r0 = model_rand(n, 6.0f), *r1 = model_rand(n, 2.0f), *r2 = model_rand(n, 1.0f);
    float *gate = model_b16(r0, n), *up = model_b16(r1, n), *dh = model_b16(r2, n);
    float *h = (float *)malloc(n * 4), *dg = (float *)malloc(n * 4), *du = (float *)malloc(n * 4), *g, *g2;
    dpprof_bf16 *b_gate = (dpprof_bf16 *)model_up16(gate, n + off), *b_up = (dpprof_bf16 *)model_up16(up, n + off), *b_dh = (dpprof_bf16 *)model_up16(dh, n + off);
    dpprof_bf16 *b_h = (dpprof_bf16 *)model_up16(dh, n + off), *b_dg = (dpprof_bf16 *)model_up16(dh, n + off), *b_du = (dpprof_bf16 *)model_up16(dh, n + off);
    float *d_gate = (float *)(b_gate + off), *d_up = (float *)(b_up + off), *d_dh = (float *)(b_dh + off), *d_h = (float *)(b_h + off), *d_dg = (float *)(b_dg + off),
          *d_du = (float *)(b_du + off);
    double e1, e2;
    int ok;
    model_set16(d_gate, gate, n), model_set16(d_up, up, n), model_set16(d_dh, dh, n);
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_swiglu_fwd_ref(h, gate, up, n);
    dpprof_bf16_round_ref(h, n);
    dpprof_swiglu_fwd_gpu(d_h, d_gate, d_up, n);
    g = model_down16(d_h, n);
    e1 = model_ulp(g, h, n, 1e-5 * 1e-6);
    CHECK(model_ok() && e1 <= 1.0, "model bf16 swiglu_fwd n=%zu offset %zu: score %.3g (1 ulp + 1e-11)", n, off, e1);
    free(g);
    dpprof_swiglu_bwd_ref(dg, du, dh, gate, up, n);
    dpprof_bf16_round_ref(dg, n);
    dpprof_bf16_round_ref(du, n);
    dpprof_swiglu_bwd_gpu(d_dg, d_du, d_dh, d_gate, d_up, n);
    g = model_down16(d_dg, n);
    g2 = model_down16(d_du, n);
    e1 = model_ulp(g, dg, n, 1e-5 * 1e-6);
    e2 = model_ulp(g2, du, n, 1e-5 * 1e-6);
    CHECK(model_ok() && e1 <= 1.0 && e2 <= 1.0, "model bf16 swiglu_bwd n=%zu offset %zu: dgate score %.3g, dup score %.3g (1 ulp + 1e-11)", n, off, e1, e2);
    free(g);
    free(g2);
    /* add: separate, out == a, out == b; bitwise */
    dpprof_add_ref(h, gate, up, n);
    dpprof_bf16_round_ref(h, n);
    dpprof_add_gpu(d_h, d_gate, d_up, n);
    g = model_down16(d_h, n);
    ok = model_same(g, h, n);
    free(g);
    dpprof_add_gpu(d_dg, d_gate, d_up, n);
    dpprof_add_gpu(d_dg, d_dg, d_dh, n);
    dpprof_add_ref(h, h, dh, n);
    dpprof_bf16_round_ref(h, n);
    g = model_down16(d_dg, n);
    ok = ok && model_same(g, h, n);
    free(g);
    dpprof_add_gpu(d_dg, d_up, d_dg, n);
    dpprof_add_ref(h, up, h, n);
    dpprof_bf16_round_ref(h, n);
    g = model_down16(d_dg, n);
    ok = ok && model_same(g, h, n);
    free(g);
    CHECK(model_ok() && ok, "model bf16 add n=%zu offset %zu: separate, out == a, out == b: bitwise", n, off);
    /* scale: separate and in place, bitwise */
    dpprof_scale_ref(h, gate, n, 0.3);
    dpprof_bf16_round_ref(h, n);
    dpprof_scale_gpu(d_h, d_gate, n, 0.3);
    g = model_down16(d_h, n);
    ok = model_same(g, h, n);
    free(g);
    dpprof_scale_ref(h, h, n, -1.0 / 3.0);
    dpprof_bf16_round_ref(h, n);
    dpprof_scale_gpu(d_h, d_h, n, -1.0 / 3.0);
    g = model_down16(d_h, n);
    ok = ok && model_same(g, h, n);
    CHECK(model_ok() && ok, "model bf16 scale n=%zu offset %zu: separate and in place: bitwise (worst %.3g)", n, off, model_err(g, h, n, 1e-30));
    free(g);
    /* nothing before the offset or past n was written */
    if (off) {
        g = model_down16(b_h, 1);
        CHECK(model_ok() && g[0] == dh[0], "model bf16 elementwise offset %zu: the element before is untouched", off);
        free(g);
    }
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release(b_gate), dpprof_cuda_release(b_up), dpprof_cuda_release(b_dh), dpprof_cuda_release(b_h), dpprof_cuda_release(b_dg), dpprof_cuda_release(b_du);
    free(r0), free(r1), free(r2), free(gate), free(up), free(dh), free(h), free(dg), free(du);
}

static void test_model_bf16_last_token(int B, int T, int C) {
    size_t ni = (size_t)B * T * C, no = (size_t)B * C;
    float *r0 = model_rand(ni, 1.0f), *r1 = model_rand(no, 1.0f), *inp = model_b16(r0, ni), *dout = model_b16(r1, no);
    float *out = (float *)malloc(no * 4), *dinp = model_copyh(inp, ni), *g;
    void *d_inp = model_up16(inp, ni), *d_dout = model_up16(dout, no), *d_out = model_up16(dout, no);
    int ok;
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_last_token_fwd_ref(out, inp, B, T, C);
    dpprof_last_token_fwd_gpu((float *)d_out, (const float *)d_inp, B, T, C);
    g = model_down16(d_out, no);
    ok = model_same(g, out, no);
    free(g);
    dpprof_last_token_bwd_ref(dinp, dout, B, T, C);
    dpprof_bf16_round_ref(dinp, ni);
    dpprof_last_token_bwd_gpu((float *)d_inp, (const float *)d_dout, B, T, C);
    g = model_down16(d_inp, ni);
    CHECK(model_ok() && ok && model_same(g, dinp, ni), "model bf16 last_token fwd and bwd (+=) B=%d T=%d C=%d: bitwise", B, T, C);
    free(g);
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release(d_inp), dpprof_cuda_release(d_dout), dpprof_cuda_release(d_out);
    free(r0), free(r1), free(inp), free(dout), free(out), free(dinp);
}

static void test_model_bf16_crossentropy(int B, int T, int V, float scale, float shift) {
    size_t N = (size_t)B * T, nl = N * (size_t)V, i;
    int *tgt = (int *)malloc(N * sizeof(int)), *d_tgt;
    float *r = model_rand(nl, scale), *logits, *dl = model_rand((size_t)B, 1.0f), *losses = (float *)malloc((size_t)B * 4), *dlog = (float *)malloc(nl * 4), *g, *g2;
    float *d_dl, *d_losses;
    void *d_logits, *d_dlog;
    double e1, e2;
    for (i = 0; i < nl; i++) r[i] += shift;
    logits = model_b16(r, nl);
    for (i = 0; i < N; i++) tgt[i] = (int)(model_next() % (uint64_t)V);
    tgt[0] = V - 1;
    d_tgt = (int *)model_up(tgt, N * sizeof(int));
    d_logits = model_up16(logits, nl);
    d_dlog = model_up16(logits, nl);
    d_dl = (float *)model_up(dl, (size_t)B * 4);
    d_losses = (float *)model_up(dl, (size_t)B * 4);
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    dpprof_crossentropy_fwd_ref(losses, logits, tgt, B, T, V);
    dpprof_crossentropy_fwd_gpu(d_losses, (const float *)d_logits, d_tgt, B, T, V);
    g = model_down(d_losses, (size_t)B);
    e1 = model_err(g, losses, (size_t)B, 1e-3);
    CHECK(model_ok() && e1 < 1e-5, "model bf16 crossentropy_fwd B=%d T=%d V=%d logits %g+-%g: losses (fp32) err %.3g < 1e-5", B, T, V, shift, scale, e1);
    free(g);
    dpprof_crossentropy_bwd_ref(dlog, logits, tgt, dl, B, T, V);
    dpprof_bf16_round_ref(dlog, nl);
    dpprof_crossentropy_bwd_gpu((float *)d_dlog, (const float *)d_logits, d_tgt, d_dl, B, T, V);
    g = model_down16(d_dlog, nl);
    dpprof_crossentropy_bwd_gpu((float *)d_logits, (const float *)d_logits, d_tgt, d_dl, B, T, V); /* in place */
    g2 = model_down16(d_logits, nl);
    e1 = model_ulp(g, dlog, nl, 1e-5 * 1e-6);
    e2 = model_ulp(g2, dlog, nl, 1e-5 * 1e-6);
    CHECK(model_ok() && e1 <= 1.0 && e2 <= 1.0 && model_same(g, g2, nl), "model bf16 crossentropy_bwd B=%d T=%d V=%d: dlogits score %.3g, in place %.3g (1 ulp + 1e-11), the same bits",
          B, T, V, e1, e2);
    free(g);
    free(g2);
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_release(d_tgt), dpprof_cuda_release(d_logits), dpprof_cuda_release(d_dlog), dpprof_cuda_release(d_dl), dpprof_cuda_release(d_losses);
    free(tgt), free(r), free(logits), free(dl), free(losses), free(dlog);
}

/* the mode itself: fp32 by default, bf16 and back, anything else refused (and the mode kept) */
static void test_model_bf16_mode(void) {
    int ok = dpprof_cuda_storage() == DPPROF_DTYPE_FP32;
    ok = ok && dpprof_cuda_set_storage(DPPROF_DTYPE_BF16) == DPPROF_OK && dpprof_cuda_storage() == DPPROF_DTYPE_BF16;
    ok = ok && dpprof_cuda_set_storage(DPPROF_DTYPE_DEFAULT) == DPPROF_ERR_INVALID && dpprof_cuda_storage() == DPPROF_DTYPE_BF16;
    ok = ok && dpprof_cuda_set_storage((dpprof_dtype)7) == DPPROF_ERR_INVALID;
    ok = ok && dpprof_cuda_set_storage(DPPROF_DTYPE_FP32) == DPPROF_OK && dpprof_cuda_storage() == DPPROF_DTYPE_FP32;
    CHECK(ok, "model bf16: storage fp32 by default; bf16 and back; DEFAULT and 7 refused (DPPROF_ERR_INVALID), the mode kept");
}

static void test_model_bf16(void) {
    test_model_bf16_mode();
    test_model_bf16_convert();
    test_model_bf16_cast();
    test_model_bf16_matmul(37, 48, 53);
    test_model_bf16_matmul(130, 300, 70);
    test_model_bf16_embedding(37, 48, 53, 10);
    test_model_bf16_embedding(2500, 40, 53, 53);
    test_model_bf16_rmsnorm(37, 48, 1e-3f, 1);
    test_model_bf16_rmsnorm(300, 200, 1e-5f, 1); /* 19 row blocks, the last of 12 rows */
    test_model_bf16_rmsnorm(5, 2000, 1e-5f, 1);  /* 256 threads */
    test_model_bf16_rmsnorm(3, 4000, 1e-5f, 1);  /* 512 */
    test_model_bf16_rmsnorm(3, 4104, 1e-5f, 0);  /* wider than 512 vectors */
    test_model_bf16_rmsnorm(37, 52, 1e-3f, 0);   /* rows not 16-byte aligned */
    test_model_bf16_rope(2, 5, 3, 16, 10000.0);
    test_model_bf16_rope(3, 37, 4, 128, 500000.0);
    test_model_bf16_rope(2, 5, 3, 12, 10000.0); /* half 6: pairs */
    test_model_bf16_rope(2, 5, 3, 10, 10000.0); /* half 5: one by one */
    test_model_bf16_elementwise(1000, 0);
    test_model_bf16_elementwise(1007, 0); /* 16-byte vectors and a tail of 7 */
    test_model_bf16_elementwise(1001, 2); /* 4-byte aligned: pairs and a lone tail */
    test_model_bf16_elementwise(777, 1);  /* 2-byte aligned: one by one */
    test_model_bf16_elementwise(1001, 4); /* 8-byte aligned: pairs */
    test_model_bf16_last_token(3, 5, 48);
    test_model_bf16_last_token(4, 3, 300);
    test_model_bf16_crossentropy(3, 5, 53, 3.0f, 0.0f);
    test_model_bf16_crossentropy(2, 3, 1000, 8.0f, 1000.0f);
    test_model_bf16_crossentropy(2, 3, 5000, 8.0f, 0.0f); /* vectors of 8, 512 threads, 2 vectors each for most */
}

static void test_model(void) {
    test_model_rng_ops();
    test_model_nonfinite();
    test_model_matmul_shape(37, 48, 53);
    test_model_matmul_shape(130, 300, 70);
    test_model_embedding_shape(37, 48, 53, 10);
    test_model_embedding_shape(2500, 40, 53, 53); /* 4096 sorted keys: two tiles and the global merge steps */
    test_model_rmsnorm_shape(37, 48, 1e-3f, 1);
    test_model_rmsnorm_shape(300, 200, 1e-5f, 1); /* 19 row blocks, the last of 12 rows */
    test_model_rmsnorm_shape(8300, 8, 1e-5f, 1);  /* 489 row blocks of 17 rows */
    test_model_rmsnorm_shape(5, 1000, 1e-5f, 1);  /* 256 threads */
    test_model_rmsnorm_shape(3, 2000, 1e-5f, 1);  /* 512 */
    test_model_rmsnorm_shape(3, 2052, 1e-5f, 0);  /* wider than 512 vectors */
    test_model_rmsnorm_shape(300, 202, 1e-5f, 0); /* rows not 16-byte aligned: 38 blocks of 8 rows; dweight in 5 row chunks, 2 column blocks */
    test_model_rope_shape(2, 5, 3, 16, 10000.0);
    test_model_rope_shape(2, 5, 3, 64, 10000.0);
    test_model_rope_shape(3, 37, 4, 128, 500000.0);
    test_model_rope_shape(2, 5, 3, 12, 10000.0); /* half 6: pairs */
    test_model_rope_shape(2, 5, 3, 6, 10000.0);  /* half 3: one by one */
    test_model_rope_shape(1, 2100, 64, 32, 1e4); /* one position a block (TB 1): 2048 blocks, some take two */
    test_model_elementwise(1000, 0);
    test_model_elementwise(1003, 0); /* vectors and a tail of 3 */
    test_model_elementwise(1001, 1); /* one by one */
    test_model_elementwise(1001, 2); /* pairs and a lone tail */
    test_model_last_token(3, 5, 48);
    test_model_last_token(4, 3, 300); /* 5 blocks */
    test_model_zero_sizes();
    test_model_crossentropy_shape(3, 5, 53, 3.0f, 0.0f);
    test_model_crossentropy_shape(2, 3, 1000, 8.0f, 1000.0f); /* vectors of 4, 256 threads per row, large logits */
    test_model_crossentropy_shape(2, 3, 4100, 8.0f, 0.0f);    /* 512 threads, 2 vectors each for most */
    test_model_crossentropy_shape(2, 3, 1002, 8.0f, 0.0f);    /* one by one, 512 threads */
    test_model_optim(1000, 0);
    test_model_optim(1003, 0);
    test_model_optim(1003, 1);
    test_model_optim_fused(1001);
    test_model_bf16();
}
