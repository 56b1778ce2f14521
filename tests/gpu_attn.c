/* ---- attention: dpprof_attention_fwd_gpu / _bwd_gpu against the references ---------------------
   error of an output: max over elements of |gpu - ref| / max(|ref|, floor), floor = 1e-2 * max(max |ref|, 1)
   (an element that nearly cancels is judged against the tensor's scale, and a tensor that cancels
   as a whole, like dq and dk at T = 1, against the unit scale of the inputs). the gpu sums in fp32
   (tiles of 16-64 keys, online softmax), the references in double: tolerances 1e-4 for out and
   lse, 2e-4 for dq, dk, dv (dS = P (dP - D) cancels, and dk, dv sum over up to T * NH/NKV rows);
   the emulator measured at most 3.5e-5 and 5.4e-5 (and 1e-6 as max |gpu - ref| / max |ref|).
   the backward gets the reference's out and lse, so it is judged on its own. outputs start as
   garbage (different in the two runs), so "overwritten" and bitwise determinism are both checked. */

static uint64_t test_attn_seed = 0x9e3779b97f4a7c15ull;

static float test_attn_rand(void) { /* xorshift64*, uniform in [-1, 1) */
    test_attn_seed ^= test_attn_seed >> 12;
    test_attn_seed ^= test_attn_seed << 25;
    test_attn_seed ^= test_attn_seed >> 27;
    return (float)((double)((test_attn_seed * 0x2545f4914f6cdd1dull) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static double test_attn_err(const float *g, const dpprof_real *r, size_t n) {
    double mx = 0.0, e = 0.0, fl;
    size_t i;
    for (i = 0; i < n; i++)
        if (fabs((double)r[i]) > mx) mx = fabs((double)r[i]);
    fl = 1e-2 * (mx > 1.0 ? mx : 1.0);
    for (i = 0; i < n; i++) {
        double d = fabs((double)g[i] - (double)r[i]), a = fabs((double)r[i]);
        d /= a > fl ? a : fl;
        if (d != d) return INFINITY; /* a nan is the worst error (a later max must not overwrite it) */
        if (d > e) e = d;
    }
    return e;
}

static void test_attn_tof(float *dst, const dpprof_real *src, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) dst[i] = (float)src[i];
}

static void test_attn_garbage(float *dev, size_t n, float value) {
    float *h = (float *)malloc(n * sizeof(float));
    size_t i;
    for (i = 0; i < n; i++) h[i] = value * (float)(1 + (i % 7));
    dpprof_cuda_copy(dev, h, n * sizeof(float), DPPROF_COPY_H2D);
    free(h);
}

static void test_attn_case(int B, int T, int NH, int NKV, int HS) {
    size_t nq = (size_t)B * T * NH * HS, nk = (size_t)B * T * NKV * HS, nl = (size_t)B * NH * T, i;
    dpprof_real *q = (dpprof_real *)malloc(nq * sizeof(dpprof_real)), *k = (dpprof_real *)malloc(nk * sizeof(dpprof_real));
    dpprof_real *v = (dpprof_real *)malloc(nk * sizeof(dpprof_real)), *dout = (dpprof_real *)malloc(nq * sizeof(dpprof_real));
    dpprof_real *out = (dpprof_real *)malloc(nq * sizeof(dpprof_real)), *lse = (dpprof_real *)malloc(nl * sizeof(dpprof_real));
    dpprof_real *dq = (dpprof_real *)malloc(nq * sizeof(dpprof_real)), *dk = (dpprof_real *)malloc(nk * sizeof(dpprof_real));
    dpprof_real *dv = (dpprof_real *)malloc(nk * sizeof(dpprof_real));
    float *hq = (float *)malloc(nq * sizeof(float)), *hk = (float *)malloc(nk * sizeof(float)), *hl = (float *)malloc(nl * sizeof(float));
    float *hq2 = (float *)malloc(nq * sizeof(float)), *hk2 = (float *)malloc(nk * sizeof(float)), *hk3 = (float *)malloc(nk * sizeof(float));
    float *hl2 = (float *)malloc(nl * sizeof(float));
    float *d_q = NULL, *d_k = NULL, *d_v = NULL, *d_dout = NULL, *d_out = NULL, *d_lse = NULL, *d_dq = NULL, *d_dk = NULL, *d_dv = NULL;
    double e_out, e_lse, e_dq, e_dk, e_dv;
    int same_f, same_b, rc = 0;

    /* q scaled up so that the softmax is far from uniform */
    for (i = 0; i < nq; i++) q[i] = (dpprof_real)(2.0f * test_attn_rand());
    for (i = 0; i < nk; i++) k[i] = (dpprof_real)(2.0f * test_attn_rand());
    for (i = 0; i < nk; i++) v[i] = (dpprof_real)test_attn_rand();
    for (i = 0; i < nq; i++) dout[i] = (dpprof_real)test_attn_rand();
    dpprof_attention_fwd_ref(out, lse, q, k, v, B, T, NH, NKV, HS);
    dpprof_attention_bwd_ref(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS);

    rc |= dpprof_cuda_alloc((void **)&d_q, nq * sizeof(float));
    rc |= dpprof_cuda_alloc((void **)&d_k, nk * sizeof(float));
    rc |= dpprof_cuda_alloc((void **)&d_v, nk * sizeof(float));
    rc |= dpprof_cuda_alloc((void **)&d_dout, nq * sizeof(float));
    rc |= dpprof_cuda_alloc((void **)&d_out, nq * sizeof(float));
    rc |= dpprof_cuda_alloc((void **)&d_lse, nl * sizeof(float));
    rc |= dpprof_cuda_alloc((void **)&d_dq, nq * sizeof(float));
    rc |= dpprof_cuda_alloc((void **)&d_dk, nk * sizeof(float));
    rc |= dpprof_cuda_alloc((void **)&d_dv, nk * sizeof(float));
    test_attn_tof(hq, q, nq), dpprof_cuda_copy(d_q, hq, nq * sizeof(float), DPPROF_COPY_H2D);
    test_attn_tof(hk, k, nk), dpprof_cuda_copy(d_k, hk, nk * sizeof(float), DPPROF_COPY_H2D);
    test_attn_tof(hk, v, nk), dpprof_cuda_copy(d_v, hk, nk * sizeof(float), DPPROF_COPY_H2D);
    test_attn_tof(hq, dout, nq), dpprof_cuda_copy(d_dout, hq, nq * sizeof(float), DPPROF_COPY_H2D);

    /* forward twice from different garbage */
    test_attn_garbage(d_out, nq, 1e4f), test_attn_garbage(d_lse, nl, -3e3f);
    dpprof_attention_fwd_gpu(d_out, d_lse, d_q, d_k, d_v, B, T, NH, NKV, HS);
    rc |= dpprof_cuda_copy(hq, d_out, nq * sizeof(float), DPPROF_COPY_D2H);
    rc |= dpprof_cuda_copy(hl, d_lse, nl * sizeof(float), DPPROF_COPY_D2H);
    test_attn_garbage(d_out, nq, -7e3f), test_attn_garbage(d_lse, nl, 5e2f);
    dpprof_attention_fwd_gpu(d_out, d_lse, d_q, d_k, d_v, B, T, NH, NKV, HS);
    rc |= dpprof_cuda_copy(hq2, d_out, nq * sizeof(float), DPPROF_COPY_D2H);
    rc |= dpprof_cuda_copy(hl2, d_lse, nl * sizeof(float), DPPROF_COPY_D2H);
    rc |= dpprof_cuda_sync();
    e_out = test_attn_err(hq, out, nq);
    e_lse = test_attn_err(hl, lse, nl);
    same_f = !memcmp(hq, hq2, nq * sizeof(float)) && !memcmp(hl, hl2, nl * sizeof(float));
    CHECK(rc == 0 && e_out <= 1e-4 && e_lse <= 1e-4 && same_f,
          "attention_fwd_gpu B=%d T=%d NH=%d NKV=%d HS=%d: out err %.2e, lse err %.2e (tol 1e-4), two runs bitwise %s%s%s",
          B, T, NH, NKV, HS, e_out, e_lse, same_f ? "equal" : "DIFFERENT", rc ? ": " : "", rc ? dpprof_last_error() : "");

    /* backward on the reference's out and lse, twice from different garbage */
    test_attn_tof(hq, out, nq), dpprof_cuda_copy(d_out, hq, nq * sizeof(float), DPPROF_COPY_H2D);
    test_attn_tof(hl, lse, nl), dpprof_cuda_copy(d_lse, hl, nl * sizeof(float), DPPROF_COPY_H2D);
    test_attn_garbage(d_dq, nq, 3e3f), test_attn_garbage(d_dk, nk, -2e3f), test_attn_garbage(d_dv, nk, 9e2f);
    dpprof_attention_bwd_gpu(d_dq, d_dk, d_dv, d_dout, d_q, d_k, d_v, d_out, d_lse, B, T, NH, NKV, HS);
    rc |= dpprof_cuda_copy(hq, d_dq, nq * sizeof(float), DPPROF_COPY_D2H);
    rc |= dpprof_cuda_copy(hk, d_dk, nk * sizeof(float), DPPROF_COPY_D2H);
    rc |= dpprof_cuda_copy(hk2, d_dv, nk * sizeof(float), DPPROF_COPY_D2H);
    e_dq = test_attn_err(hq, dq, nq);
    e_dk = test_attn_err(hk, dk, nk);
    e_dv = test_attn_err(hk2, dv, nk);
    test_attn_garbage(d_dq, nq, -1e3f), test_attn_garbage(d_dk, nk, 4e3f), test_attn_garbage(d_dv, nk, -6e2f);
    dpprof_attention_bwd_gpu(d_dq, d_dk, d_dv, d_dout, d_q, d_k, d_v, d_out, d_lse, B, T, NH, NKV, HS);
    rc |= dpprof_cuda_copy(hq2, d_dq, nq * sizeof(float), DPPROF_COPY_D2H);
    rc |= dpprof_cuda_copy(hk3, d_dk, nk * sizeof(float), DPPROF_COPY_D2H);
    same_b = !memcmp(hq, hq2, nq * sizeof(float)) && !memcmp(hk, hk3, nk * sizeof(float));
    rc |= dpprof_cuda_copy(hk3, d_dv, nk * sizeof(float), DPPROF_COPY_D2H);
    rc |= dpprof_cuda_sync();
    same_b = same_b && !memcmp(hk2, hk3, nk * sizeof(float));
    CHECK(rc == 0 && e_dq <= 2e-4 && e_dk <= 2e-4 && e_dv <= 2e-4 && same_b,
          "attention_bwd_gpu B=%d T=%d NH=%d NKV=%d HS=%d: dq err %.2e, dk err %.2e, dv err %.2e (tol 2e-4), two runs bitwise %s%s%s",
          B, T, NH, NKV, HS, e_dq, e_dk, e_dv, same_b ? "equal" : "DIFFERENT", rc ? ": " : "", rc ? dpprof_last_error() : "");

    dpprof_cuda_release(d_q), dpprof_cuda_release(d_k), dpprof_cuda_release(d_v), dpprof_cuda_release(d_dout);
    dpprof_cuda_release(d_out), dpprof_cuda_release(d_lse), dpprof_cuda_release(d_dq), dpprof_cuda_release(d_dk);
    dpprof_cuda_release(d_dv);
    free(q), free(k), free(v), free(dout), free(out), free(lse), free(dq), free(dk), free(dv);
    free(hq), free(hk), free(hl), free(hq2), free(hk2), free(hk3), free(hl2);
}

/* what rounding P and dS to bf16 (unit roundoff u = 2^-8) before the tensor cores' products dv = P^T dO,
   dk = scale dS^T Q and dq = scale dS K may move each element by, beyond the fp32 kernels' error: u times
   the sum of its terms' magnitudes, bv = u sum_t p |dO_t|, bk = u scale sum_t |dS| |q_t|, bq = u scale
   sum_j |dS| |k_j| (over the group's heads for bk, bv), in double from the inputs the gpu gets */
static void test_attn_tc_bounds(double *bq, double *bk, double *bv, const float *q, const float *k, const float *v, const float *dout, const float *out,
                                const float *lse, int B, int T, int NH, int NKV, int HS) {
    const size_t qs = (size_t)NH * HS, ks = (size_t)NKV * HS;
    const double scale = 1.0 / sqrt((double)HS), u = ldexp(1.0, -8);
    int b, h, t, j, d;
    memset(bq, 0, (size_t)B * T * qs * sizeof(double));
    memset(bk, 0, (size_t)B * T * ks * sizeof(double));
    memset(bv, 0, (size_t)B * T * ks * sizeof(double));
    for (b = 0; b < B; b++)
        for (h = 0; h < NH; h++)
            for (t = 0; t < T; t++) {
                const size_t qr = ((size_t)b * T + t) * qs + (size_t)h * HS;
                double D = 0.0;
                for (d = 0; d < HS; d++) D += (double)dout[qr + d] * out[qr + d];
                for (j = 0; j <= t; j++) {
                    const size_t kr = ((size_t)b * T + j) * ks + (size_t)(h / (NH / NKV)) * HS;
                    double s = 0.0, dp = 0.0, p, ds;
                    for (d = 0; d < HS; d++) s += (double)q[qr + d] * k[kr + d], dp += (double)dout[qr + d] * v[kr + d];
                    p = exp(scale * s - lse[((size_t)b * NH + h) * T + t]);
                    ds = fabs(p * (dp - D));
                    for (d = 0; d < HS; d++) {
                        bv[kr + d] += u * p * fabs((double)dout[qr + d]);
                        bk[kr + d] += u * scale * ds * fabs((double)q[qr + d]);
                        bq[qr + d] += u * scale * ds * fabs((double)k[kr + d]);
                    }
                }
            }
}

/* bf16 storage: q, k, v, dout, out and dq, dk, dv as bf16 (lse fp32), against the reference on the widened
   inputs with out, dq, dk, dv rounded; the backward gets the rounded reference out and its lse. bf16
   outputs: model_ulp's score (gpu_model.c) with abs = the fp32 tolerance x this file's floor, plus on the
   tensor cores what rounding P (and dS) to bf16 may add: 2^-8 max|v| for out, test_attn_tc_bounds for
   dq, dk, dv; lse as in fp32. rows = 0 runs the simt kernels, 64 or 128 the tensor-core ones in blocks of
   that many rows where they apply (and shows the simt ones taking over where they do not). the helpers
   are gpu_model.c's (one translation unit) */
static void test_attn_case_bf16(int B, int T, int NH, int NKV, int HS, int rows) {
    size_t nq = (size_t)B * T * NH * HS, nk = (size_t)B * T * NKV * HS, nl = (size_t)B * NH * T, i;
    float *q = model_rand(nq, 2.0f), *k = model_rand(nk, 2.0f), *v = model_rand(nk, 1.0f), *dout = model_rand(nq, 1.0f);
    float *out = (float *)malloc(nq * 4), *lse = (float *)malloc(nl * 4), *dq = (float *)malloc(nq * 4), *dk = (float *)malloc(nk * 4), *dv = (float *)malloc(nk * 4);
    float *g[5] = {0}, *g2[5] = {0}, *hl, *hl2;
    double *bq = NULL, *bk = NULL, *bv = NULL;
    void *d_q, *d_k, *d_v, *d_dout, *d_out, *d_dq, *d_dk, *d_dv;
    float *d_lse;
    double e_out, e_lse, e_dq, e_dk, e_dv, fl;
    int same, rc;
    const int tc_used = rows && HS % 2 == 0 && HS <= 128; /* the tensor-core kernels take these head sizes */
    const char *kind = !tc_used ? (rows ? "simt (HS beyond the tensor-core kernels)" : "simt") : (rows == 64 ? "tensor cores, 64-row blocks" : "tensor cores, 128-row blocks");
    dpprof_bf16_round_ref(q, nq), dpprof_bf16_round_ref(k, nk), dpprof_bf16_round_ref(v, nk), dpprof_bf16_round_ref(dout, nq);
    dpprof_attention_fwd_ref(out, lse, q, k, v, B, T, NH, NKV, HS);
    dpprof_bf16_round_ref(out, nq);
    dpprof_attention_bwd_ref(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS);
    dpprof_bf16_round_ref(dq, nq), dpprof_bf16_round_ref(dk, nk), dpprof_bf16_round_ref(dv, nk);
    d_q = model_up16(q, nq), d_k = model_up16(k, nk), d_v = model_up16(v, nk), d_dout = model_up16(dout, nq);
    d_out = model_up16(dout, nq), d_dq = model_up16(q, nq), d_dk = model_up16(v, nk), d_dv = model_up16(k, nk); /* garbage */
    d_lse = (float *)model_up(lse, nl * 4);
    test_attn_garbage(d_lse, nl, -3e3f);
    dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
    TUNE(attention_simt, rows == 0);
    TUNE(attention_block, rows);

    /* forward twice, the second from other garbage */
    dpprof_attention_fwd_gpu((float *)d_out, d_lse, (const float *)d_q, (const float *)d_k, (const float *)d_v, B, T, NH, NKV, HS);
    g[0] = model_down16(d_out, nq), hl = model_down(d_lse, nl);
    model_set16(d_out, v, nk < nq ? nk : nq), test_attn_garbage(d_lse, nl, 5e2f);
    dpprof_attention_fwd_gpu((float *)d_out, d_lse, (const float *)d_q, (const float *)d_k, (const float *)d_v, B, T, NH, NKV, HS);
    g2[0] = model_down16(d_out, nq), hl2 = model_down(d_lse, nl);
    rc = dpprof_cuda_sync();
    fl = 1e-2 * fmax(model_maxabs(out, nq), 1.0);
    /* the tensor cores take P rounded to bf16: |sum (p~ - p) v| / l <= 2^-8 sum p |v| / l <= 2^-8 max|v| beyond
       the simt kernel's error */
    e_out = model_ulp(g[0], out, nq, tc_used ? ldexp(model_maxabs(v, nk), -8) + 1e-4 * fl : 1e-4 * fl);
    e_lse = test_attn_err(hl, lse, nl);
    same = model_same(g[0], g2[0], nq) && model_same(hl, hl2, nl);
    CHECK(rc == 0 && e_out <= 1.0 && e_lse <= 1e-4 && same, "attention_fwd_gpu bf16 (%s) B=%d T=%d NH=%d NKV=%d HS=%d: out (bf16) score %.2e (1 ulp + %s floor), lse err %.2e (tol 1e-4), two runs bitwise %s",
          kind, B, T, NH, NKV, HS, e_out, tc_used ? "2^-8 max|v|" : "1e-4", e_lse, same ? "equal" : "DIFFERENT");

    /* the forward with 16 and with 32 rows a warp (the default above is the device's): every row gets the
       same arithmetic in the same order, so out and lse have the same bits as the default's */
    if (tc_used) {
        static const int wr[] = {16, 32};
        size_t w;
        for (w = 0; w < 2; w++) {
            float *gw, *hw;
            int prev = TUNE(attention_warp_rows, wr[w]);
            model_set16(d_out, v, nk < nq ? nk : nq), test_attn_garbage(d_lse, nl, 7e2f);
            dpprof_attention_fwd_gpu((float *)d_out, d_lse, (const float *)d_q, (const float *)d_k, (const float *)d_v, B, T, NH, NKV, HS);
            gw = model_down16(d_out, nq), hw = model_down(d_lse, nl);
            rc = dpprof_cuda_sync();
            same = model_same(g[0], gw, nq) && model_same(hl, hw, nl);
            CHECK(prev == 0 && rc == 0 && same, "attention_fwd_gpu bf16 (%s) B=%d T=%d NH=%d NKV=%d HS=%d with %d rows a warp%s: out and lse the default's bits: %s", kind, B, T,
                  NH, NKV, HS, wr[w], HS > 64 ? " (16 above head size 64)" : "", same ? "yes" : "NO");
            TUNE(attention_warp_rows, 0);
            free(gw), free(hw);
        }
    }

    /* backward on the reference's (rounded) out and lse, twice */
    {
        double fq = 2e-4 * 1e-2 * fmax(model_maxabs(dq, nq), 1.0), fk = 2e-4 * 1e-2 * fmax(model_maxabs(dk, nk), 1.0);
        double fv = 2e-4 * 1e-2 * fmax(model_maxabs(dv, nk), 1.0);
        if (tc_used) {
            bq = (double *)malloc(nq * sizeof(double)), bk = (double *)malloc(nk * sizeof(double)), bv = (double *)malloc(nk * sizeof(double));
            test_attn_tc_bounds(bq, bk, bv, q, k, v, dout, out, lse, B, T, NH, NKV, HS);
        }
        model_set16(d_out, out, nq), model_set(d_lse, lse, nl);
        dpprof_attention_bwd_gpu((float *)d_dq, (float *)d_dk, (float *)d_dv, (const float *)d_dout, (const float *)d_q, (const float *)d_k, (const float *)d_v,
                                 (const float *)d_out, d_lse, B, T, NH, NKV, HS);
        g[1] = model_down16(d_dq, nq), g[2] = model_down16(d_dk, nk), g[3] = model_down16(d_dv, nk);
        model_set16(d_dq, dout, nq), model_set16(d_dk, q, nk), model_set16(d_dv, dout, nk);
        dpprof_attention_bwd_gpu((float *)d_dq, (float *)d_dk, (float *)d_dv, (const float *)d_dout, (const float *)d_q, (const float *)d_k, (const float *)d_v,
                                 (const float *)d_out, d_lse, B, T, NH, NKV, HS);
        g2[1] = model_down16(d_dq, nq), g2[2] = model_down16(d_dk, nk), g2[3] = model_down16(d_dv, nk);
        rc = dpprof_cuda_sync();
        e_dq = model_ulpv(g[1], dq, nq, bq, fq);
        e_dk = model_ulpv(g[2], dk, nk, bk, fk);
        e_dv = model_ulpv(g[3], dv, nk, bv, fv);
        same = model_same(g[1], g2[1], nq) && model_same(g[2], g2[2], nk) && model_same(g[3], g2[3], nk);
        CHECK(rc == 0 && e_dq <= 1.0 && e_dk <= 1.0 && e_dv <= 1.0 && same,
              "attention_bwd_gpu bf16 (%s) B=%d T=%d NH=%d NKV=%d HS=%d: dq, dk, dv (bf16) scores %.2e %.2e %.2e (1 ulp + 2e-4 floor%s), two runs bitwise %s%s%s", kind, B, T,
              NH, NKV, HS, e_dq, e_dk, e_dv, tc_used ? " + 2^-8 sum|terms|" : "", same ? "equal" : "DIFFERENT", rc ? ": " : "", rc ? dpprof_last_error() : "");

        /* the backward with 16 and with 32 rows a warp in the dq kernel (the dk/dv kernel keeps 16): the same
           arithmetic per row in the same order, so dq, dk, dv have the same bits as the default's */
        if (tc_used) {
            static const int wr[] = {16, 32};
            size_t w;
            for (w = 0; w < 2; w++) {
                float *gw[3];
                int prev = TUNE(attention_warp_rows, wr[w]), sw;
                model_set16(d_dq, dout, nq), model_set16(d_dk, q, nk), model_set16(d_dv, dout, nk);
                dpprof_attention_bwd_gpu((float *)d_dq, (float *)d_dk, (float *)d_dv, (const float *)d_dout, (const float *)d_q, (const float *)d_k, (const float *)d_v,
                                         (const float *)d_out, d_lse, B, T, NH, NKV, HS);
                gw[0] = model_down16(d_dq, nq), gw[1] = model_down16(d_dk, nk), gw[2] = model_down16(d_dv, nk);
                rc = dpprof_cuda_sync();
                sw = model_same(g[1], gw[0], nq) && model_same(g[2], gw[1], nk) && model_same(g[3], gw[2], nk);
                CHECK(prev == 0 && rc == 0 && sw, "attention_bwd_gpu bf16 (%s) B=%d T=%d NH=%d NKV=%d HS=%d with %d rows a warp%s: dq, dk, dv the default's bits: %s", kind, B, T, NH,
                      NKV, HS, wr[w], HS > 64 ? " (16 above head size 64)" : "", sw ? "yes" : "NO");
                TUNE(attention_warp_rows, 0);
                free(gw[0]), free(gw[1]), free(gw[2]);
            }
        }
    }
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    dpprof_cuda_set_tuning(NULL);
    for (i = 0; i < 4; i++) free(g[i]), free(g2[i]);
    free(hl), free(hl2), free(bq), free(bk), free(bv);
    dpprof_cuda_release(d_q), dpprof_cuda_release(d_k), dpprof_cuda_release(d_v), dpprof_cuda_release(d_dout), dpprof_cuda_release(d_out);
    dpprof_cuda_release(d_dq), dpprof_cuda_release(d_dk), dpprof_cuda_release(d_dv), dpprof_cuda_release(d_lse);
    free(q), free(k), free(v), free(dout), free(out), free(lse), free(dq), free(dk), free(dv);
}

static void test_attn(void) {
    /* tiles (rows x keys): HS <= 64: forward 64x64, dk/dv 64 keys x 32 queries, dq 64x64;
       HS <= 128: 64x64, 32x32, 32x32; HS <= 256: 32x32, 32x16, 32x16. so T = 70 (HS 64), 130 (HS 96),
       33 (HS 128), 40 (HS 256) and 65 (HS 8) give several query and key tiles and ragged last tiles;
       HS = 2 and 34 take the float2 path, the rest float4; NKV < NH covers gqa. the tensor-core kernels
       (bf16) take blocks of 64 or 128 rows and tiles of 64 keys (forward), 64 or 32 queries (dk/dv) and
       keys (dq): T = 130 and 200 give several 128-row blocks, the last ragged */
    /* clang-format off */
    static const int cases[][5] = {
        {1, 1, 1, 1, 2}, {2, 37, 4, 2, 16}, {1, 70, 2, 1, 64}, {1, 33, 2, 2, 128}, {1, 40, 1, 1, 256},
        {2, 65, 6, 3, 8}, {1, 130, 2, 1, 96}, {1, 45, 3, 1, 34}, {1, 200, 4, 2, 64},
    };
    /* clang-format on */
    static const int rows[] = {0, 64, 128};
    size_t c, m;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) test_attn_case(cases[c][0], cases[c][1], cases[c][2], cases[c][3], cases[c][4]);
    /* bf16: 8-byte (HS % 4 == 0), 4-byte (HS = 2, 34) and, for HS odd, 2-byte global accesses */
    if (sizeof(dpprof_real) != sizeof(float)) {
        SKIP("attention bf16: this build's reference is double");
        return;
    }
    { /* the tuning struct: every field's set checked, a refused one changes nothing, get returns what set took */
        /* clang-format off */
        static const struct { size_t off; int bad; const char *name; } refused[] = {
            {offsetof(dpprof_cuda_tuning, attention_simt), 2, "attention_simt"},     {offsetof(dpprof_cuda_tuning, attention_block), 96, "attention_block"},
            {offsetof(dpprof_cuda_tuning, attention_block), -1, "attention_block"},  {offsetof(dpprof_cuda_tuning, attention_warp_rows), 24, "attention_warp_rows"},
            {offsetof(dpprof_cuda_tuning, norms_cublas), -1, "norms_cublas"},         {offsetof(dpprof_cuda_tuning, fused_clipgrad), 2, "fused_clipgrad"},
            {offsetof(dpprof_cuda_tuning, dp_warp_tile), 128, "dp_warp_tile"},       {offsetof(dpprof_cuda_tuning, wgmma), 2, "wgmma"},
        };
        /* clang-format on */
        dpprof_cuda_tuning t, got, zero;
        size_t r;
        memset(&zero, 0, sizeof zero);
        dpprof_cuda_get_tuning(&got);
        CHECK(!memcmp(&got, &zero, sizeof got), "dpprof_cuda_get_tuning: all zero (the defaults) before any choice");
        memset(&t, 0, sizeof t);
        t.attention_block = 128, t.attention_warp_rows = 16, t.dp_warp_tile = 32, t.wgmma = -1, t.norms_cublas = 1;
        CHECK(dpprof_cuda_set_tuning(&t) == DPPROF_OK, "dpprof_cuda_set_tuning: 128-row blocks, 16 rows a warp, 64 x 32 warps, no wgmma, cuBLAS norms taken");
        dpprof_cuda_get_tuning(&got);
        CHECK(!memcmp(&got, &t, sizeof t), "dpprof_cuda_get_tuning returns what set took");
        for (r = 0; r < sizeof refused / sizeof refused[0]; r++) {
            dpprof_cuda_tuning b = t;
            memcpy((char *)&b + refused[r].off, &refused[r].bad, sizeof(int));
            CHECK(dpprof_cuda_set_tuning(&b) == DPPROF_ERR_INVALID && strstr(dpprof_last_error(), refused[r].name) && (dpprof_cuda_get_tuning(&got), !memcmp(&got, &t, sizeof t)),
                  "dpprof_cuda_set_tuning: %s = %d refused, naming it (%s), nothing changed", refused[r].name, refused[r].bad, dpprof_last_error());
        }
        CHECK(dpprof_cuda_set_tuning(NULL) == DPPROF_OK && (dpprof_cuda_get_tuning(&got), !memcmp(&got, &zero, sizeof got)), "dpprof_cuda_set_tuning(NULL): the defaults again");
    }
    for (m = 0; m < sizeof rows / sizeof rows[0]; m++) {
        for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            if (rows[m] == 128 && !(cases[c][4] % 2 == 0 && cases[c][4] <= 128)) continue; /* the simt fallback: shown with 64 */
            test_attn_case_bf16(cases[c][0], cases[c][1], cases[c][2], cases[c][3], cases[c][4], rows[m]);
        }
        if (rows[m] != 128) test_attn_case_bf16(1, 21, 2, 1, 7, rows[m]);
    }
}

/* cuDNN's fused flash attention (dpprof_cudnn_attention_*) against the same references and bounds as the tensor-core
   kernels: it too rounds P and dS to bf16 before its products. two runs of each pass must give the same bits where
   the plan says its backward is deterministic. a build or device without it says why and is skipped */
static void test_attn_cudnn_case(int B, int T, int NH, int NKV, int HS) {
    size_t nq = (size_t)B * T * NH * HS, nk = (size_t)B * T * NKV * HS, nl = (size_t)B * NH * T, wsb = 0;
    float *q = model_rand(nq, 2.0f), *k = model_rand(nk, 2.0f), *v = model_rand(nk, 1.0f), *dout = model_rand(nq, 1.0f);
    float *out = (float *)malloc(nq * 4), *lse = (float *)malloc(nl * 4), *dq = (float *)malloc(nq * 4), *dk = (float *)malloc(nk * 4), *dv = (float *)malloc(nk * 4);
    float *g[4] = {0}, *g2[4] = {0}, *hl = NULL, *hl2 = NULL, *d_lse;
    double *bq = (double *)malloc(nq * sizeof(double)), *bk = (double *)malloc(nk * sizeof(double)), *bv = (double *)malloc(nk * sizeof(double));
    void *d_q, *d_k, *d_v, *d_dout, *d_out, *d_dq, *d_dk, *d_dv, *ws = NULL;
    double e_out, e_lse, e_dq, e_dk, e_dv, fl;
    int det = 0, rc = dpprof_cudnn_attention_plan(B, T, NH, NKV, HS, &wsb, &det), same_f, same_b;
    CHECK(rc == DPPROF_OK, "attention on cuDNN B=%d T=%d NH=%d NKV=%d HS=%d: plans built (%s; workspace %zu bytes, backward %s)", B, T, NH, NKV, HS, rc ? dpprof_last_error() : "ok", wsb,
          det ? "deterministic" : "cuDNN's default, not deterministic");
    if (rc == DPPROF_OK && wsb) rc = dpprof_cuda_alloc(&ws, wsb);
    dpprof_bf16_round_ref(q, nq), dpprof_bf16_round_ref(k, nk), dpprof_bf16_round_ref(v, nk), dpprof_bf16_round_ref(dout, nq);
    dpprof_attention_fwd_ref(out, lse, q, k, v, B, T, NH, NKV, HS);
    dpprof_bf16_round_ref(out, nq);
    dpprof_attention_bwd_ref(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS);
    dpprof_bf16_round_ref(dq, nq), dpprof_bf16_round_ref(dk, nk), dpprof_bf16_round_ref(dv, nk);
    test_attn_tc_bounds(bq, bk, bv, q, k, v, dout, out, lse, B, T, NH, NKV, HS);
    d_q = model_up16(q, nq), d_k = model_up16(k, nk), d_v = model_up16(v, nk), d_dout = model_up16(dout, nq);
    d_out = model_up16(dout, nq), d_dq = model_up16(q, nq), d_dk = model_up16(v, nk), d_dv = model_up16(k, nk); /* garbage */
    d_lse = (float *)model_up(lse, nl * 4);
    if (rc == DPPROF_OK) {
        dpprof_cuda_set_storage(DPPROF_DTYPE_BF16);
        test_attn_garbage(d_lse, nl, -3e3f);
        dpprof_cudnn_attention_fwd_gpu((float *)d_out, d_lse, (const float *)d_q, (const float *)d_k, (const float *)d_v, B, T, NH, NKV, HS, ws, wsb);
        g[0] = model_down16(d_out, nq), hl = model_down(d_lse, nl);
        model_set16(d_out, v, nk < nq ? nk : nq), test_attn_garbage(d_lse, nl, 5e2f);
        dpprof_cudnn_attention_fwd_gpu((float *)d_out, d_lse, (const float *)d_q, (const float *)d_k, (const float *)d_v, B, T, NH, NKV, HS, ws, wsb);
        g2[0] = model_down16(d_out, nq), hl2 = model_down(d_lse, nl);
        rc = dpprof_cuda_sync();
        fl = 1e-2 * fmax(model_maxabs(out, nq), 1.0);
        e_out = model_ulp(g[0], out, nq, ldexp(model_maxabs(v, nk), -8) + 1e-4 * fl);
        e_lse = test_attn_err(hl, lse, nl);
        same_f = model_same(g[0], g2[0], nq) && model_same(hl, hl2, nl);
        CHECK(rc == 0 && e_out <= 1.0 && e_lse <= 1e-4 && same_f, "attention_fwd on cuDNN B=%d T=%d NH=%d NKV=%d HS=%d: out (bf16) score %.2e (1 ulp + 2^-8 max|v| floor), lse err %.2e (tol 1e-4), two runs bitwise %s%s%s",
              B, T, NH, NKV, HS, e_out, e_lse, same_f ? "equal" : "DIFFERENT", rc ? ": " : "", rc ? dpprof_last_error() : "");
    }
    if (rc == DPPROF_OK) {
        const double fq = 2e-4 * 1e-2 * fmax(model_maxabs(dq, nq), 1.0), fk = 2e-4 * 1e-2 * fmax(model_maxabs(dk, nk), 1.0), fv = 2e-4 * 1e-2 * fmax(model_maxabs(dv, nk), 1.0);
        model_set16(d_out, out, nq), model_set(d_lse, lse, nl);
        dpprof_cudnn_attention_bwd_gpu((float *)d_dq, (float *)d_dk, (float *)d_dv, (const float *)d_dout, (const float *)d_q, (const float *)d_k, (const float *)d_v, (const float *)d_out,
                                       d_lse, B, T, NH, NKV, HS, ws, wsb);
        g[1] = model_down16(d_dq, nq), g[2] = model_down16(d_dk, nk), g[3] = model_down16(d_dv, nk);
        model_set16(d_dq, dout, nq), model_set16(d_dk, q, nk), model_set16(d_dv, dout, nk);
        dpprof_cudnn_attention_bwd_gpu((float *)d_dq, (float *)d_dk, (float *)d_dv, (const float *)d_dout, (const float *)d_q, (const float *)d_k, (const float *)d_v, (const float *)d_out,
                                       d_lse, B, T, NH, NKV, HS, ws, wsb);
        g2[1] = model_down16(d_dq, nq), g2[2] = model_down16(d_dk, nk), g2[3] = model_down16(d_dv, nk);
        rc = dpprof_cuda_sync();
        e_dq = model_ulpv(g[1], dq, nq, bq, fq);
        e_dk = model_ulpv(g[2], dk, nk, bk, fk);
        e_dv = model_ulpv(g[3], dv, nk, bv, fv);
        same_b = model_same(g[1], g2[1], nq) && model_same(g[2], g2[2], nk) && model_same(g[3], g2[3], nk);
        CHECK(rc == 0 && e_dq <= 1.0 && e_dk <= 1.0 && e_dv <= 1.0 && (same_b || !det),
              "attention_bwd on cuDNN B=%d T=%d NH=%d NKV=%d HS=%d: dq, dk, dv (bf16) scores %.2e %.2e %.2e (1 ulp + 2e-4 floor + 2^-8 sum|terms|), two runs bitwise %s%s%s%s", B, T, NH, NKV, HS,
              e_dq, e_dk, e_dv, same_b ? "equal" : "DIFFERENT", det ? "" : " (not required: cuDNN's default backward)", rc ? ": " : "", rc ? dpprof_last_error() : "");
    }
    dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
    for (size_t i = 0; i < 4; i++) free(g[i]), free(g2[i]);
    free(hl), free(hl2), free(bq), free(bk), free(bv);
    dpprof_cuda_release(ws);
    dpprof_cuda_release(d_q), dpprof_cuda_release(d_k), dpprof_cuda_release(d_v), dpprof_cuda_release(d_dout), dpprof_cuda_release(d_out);
    dpprof_cuda_release(d_dq), dpprof_cuda_release(d_dk), dpprof_cuda_release(d_dv), dpprof_cuda_release(d_lse);
    free(q), free(k), free(v), free(dout), free(out), free(lse), free(dq), free(dk), free(dv);
}

static void test_attn_cudnn(void) {
    /* gqa and not, ragged T against cuDNN's tiles, the head sizes of the presets (64, 128) and a small one */
    static const int cases[][5] = {{2, 37, 4, 2, 64}, {1, 200, 4, 2, 64}, {1, 130, 2, 1, 128}, {2, 64, 4, 4, 32}};
    size_t c, ws = 0;
    int det = 0, rc;
    if (sizeof(dpprof_real) != sizeof(float)) {
        SKIP("attention on cuDNN: this build's reference is double");
        return;
    }
    CHECK(dpprof_cudnn_attention_plan(1, 8, 3, 2, 64, &ws, &det) == DPPROF_ERR_INVALID && ws == 0, "attention on cuDNN: NKV = 2 not dividing NH = 3 is refused (%s)", dpprof_last_error());
    rc = dpprof_cudnn_attention_plan(1, 64, 2, 1, 64, &ws, &det);
    if (!dpprof_cudnn_available() || rc == DPPROF_ERR_UNSUPPORTED) {
        CHECK(rc == DPPROF_ERR_UNSUPPORTED && strstr(dpprof_last_error(), "cuDNN") && ws == 0, "attention on cuDNN: unavailable, said as such (%s)", dpprof_last_error());
        SKIP("attention on cuDNN: %s (dpprof's own kernels are the attention)", dpprof_last_error());
        return;
    }
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) test_attn_cudnn_case(cases[c][0], cases[c][1], cases[c][2], cases[c][3], cases[c][4]);
}
