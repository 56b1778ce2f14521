/* test_privacy.c - tests for the dpprof privacy fragment (noise + rdp
   accountant). builds as c11 and as c++17.

   usage: test_privacy [quick]   ("quick" shrinks the accuracy sweeps)

   published reference values used below, and where they are published:
   [K1-3] philox4x32-10 known answers: random123 distribution, file
          tests/kat_vectors ("philox4x32 10" lines), as reproduced verbatim in
          DEShawResearch/Random123-Boost libs/random/test/test_philox.cpp
          (test_kat_philox4x32); algorithm: salmon et al., sc'11.
   [O1]   pytorch/opacus opacus/tests/accountants_test.py,
          test_rdp_accountant: q = 0.04, sigma = 1.5, steps = int(90/0.04),
          delta = 1e-5, default alphas -> eps = 7.32911117143.
   [O2]   same file, test_get_noise_multiplier_rdp_epochs / _steps:
          1.416 and 1.3562 (places = 4), produced by the bisection in
          opacus/accountants/utils.py get_noise_multiplier (tolerance 0.01).
   [T1-3] tensorflow/privacy tensorflow_privacy/privacy/analysis/
          compute_dp_sgd_privacy_test.py (current, dp_accounting backend,
          improved conversion): (60000,150,1.3,15,1e-5) -> 0.7242234026109595
          @19; (100000,100,1.0,30,1e-7) -> 1.4154988495444842 @13;
          (1e8,1024,0.1,10,1e-7) -> 5907982.3113978775 @1.25.
   [T4-6] the 2019 revision of the same test (classic conversion):
          0.941870567 @19, 1.70928734 @13, 5907984.81339406 @1.25.
   [T7]   tensorflow/privacy tensorflow_privacy/privacy/analysis/
          rdp_accountant_test.py: compute_rdp(0.1, 2, 10, 5) = 0.07737
          (places = 5) and compute_rdp(0.01, 2.5, 50, [1.5, 2.5, 5, 50, 100,
          inf]) = [0.00065, 0.001085, 0.00218075, 0.023846, 167.416307, inf]
          (delta = 1e-5); compute_rdp(0, 10, 1, 20) == 0;
          compute_rdp(1, 10, 1, 20) == 0.1.
   [G1]   google/differential-privacy python/dp_accounting/rdp/
          rdp_privacy_accountant_test.py: test_compute_rdp_poisson_sampled_
          gaussian [6.5007e-04, 1.0854e-03, 2.1808e-03, 2.3846e-02,
          1.6742e+02, inf] (rtol 1e-4); test_compute_epsilon_delta_pure_dp
          (rdp 1.1 at orders 2..32 -> eps 1.32783806176 @32);
          test_compute_epsilon_delta_gaussian (q = 1, sigma = 4.530877117,
          orders 0.001 i -> eps = 1 at delta = 1e-6).
   [T8]   tensorflow/privacy compute_dp_sgd_privacy.py docstring (mnist
          tutorial setting): N=60000, batch 256, noise 1.12, 60 epochs,
          delta 1e-5 -> (2.92, 1e-5)-DP (classic conversion, 3 digits).
   abadi et al. (ccs 2016) state eps ~ 1.26 for q = 0.01, sigma = 4,
   T = 10000, delta = 1e-5 with the moments accountant; that sentence could
   not be retrieved from the stored copies of the paper available while
   writing this, so the value is only printed, not asserted. */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) { return (double)clock() / CLOCKS_PER_SEC; } /* cpu time: the bounds are of work */
static void test_pld_bounds(void);
static void test_pld_corners(void);

static int g_checks = 0;
static int g_fails = 0;
static int g_quick = 0;

static void check(int ok, const char *what) {
    ++g_checks;
    if (!ok) ++g_fails;
    printf("%s %s\n", ok ? "PASS" : "FAIL", what); /* the line tests/run.sh counts */
}

static double rel_err(double got, double want) {
    return fabs(got - want) / fabs(want);
}

/* one published value: prints the comparison and checks the tolerance */
static void check_ref(const char *name, double got, double want, double rel_tol) {
    double re = rel_err(got, want);
    printf("  %-44s got %-22.17g ref %-22.17g rel err %.2e (tol %.0e)\n", name,
           got, want, re, rel_tol);
    check(re <= rel_tol, name);
}

static uint64_t fnv1a64(uint64_t h, uint64_t word) {
    int k;
    for (k = 0; k < 8; ++k) {
        h ^= (word >> (8 * k)) & 0xffu;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t bits_of(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* size of one unit in the last place of the double nearest to x */
static double ulp_of(double x) {
    int e;
    double u;
    if (x == 0.0) {
        return 4.9406564584124654e-324;
    }
    (void)frexp(fabs(x), &e);
    u = ldexp(1.0, e - 53);
    return u > 4.9406564584124654e-324 ? u : 4.9406564584124654e-324;
}

/* ======================================================== (a) philox ==== */

static void test_philox_kat(void) {
    /* [K1-3]: ctr[4] key[2] -> result[4] */
    static const uint32_t kat[3][10] = {
        {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u,
         0x00000000u, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
        {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
         0xffffffffu, 0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
        {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u,
         0x299f31d0u, 0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
    static const char *names[3] = {"philox4x32-10 kat zero", "philox4x32-10 kat ones",
                                   "philox4x32-10 kat pi digits"};
    int t, w;
    printf("[philox known answers: random123 tests/kat_vectors]\n");
    for (t = 0; t < 3; ++t) {
        dpprof_u32x4 c, r;
        int ok = 1;
        for (w = 0; w < 4; ++w) {
            c.v[w] = kat[t][w];
        }
        r = dpprof_philox4x32_10(c, kat[t][4], kat[t][5]);
        for (w = 0; w < 4; ++w) {
            ok &= r.v[w] == kat[t][6 + w];
        }
        printf("  %-30s %08x %08x %08x %08x %s\n", names[t], (unsigned)r.v[0],
               (unsigned)r.v[1], (unsigned)r.v[2], (unsigned)r.v[3],
               ok ? "ok" : "MISMATCH");
        check(ok, names[t]);
    }
}

/* ======================================================= (a) normals ==== */

static void test_counter_layout(void) {
    const double two_pi = 6.283185307179586;
    uint64_t seed = 0x0123456789abcdefULL, stream = 0x7edcba9876543210ULL; /* 63 bits: the top one selects the secure sampler */
    uint64_t block = 0x00000003000000a5ULL;
    dpprof_u32x4 c, x;
    double z[4], ua, ub, r, maxd = 0.0;
    int k, same = 1;
    printf("[counter layout and per-index access]\n");
    /* rebuild the four normals independently with libm (not bitwise, only
       to 1e-12) from the documented counter/key layout */
    c.v[0] = 0x000000a5u;
    c.v[1] = 0x00000003u;
    c.v[2] = 0x76543210u;
    c.v[3] = 0x7edcba98u;
    x = dpprof_philox4x32_10(c, 0x89abcdefu, 0x01234567u);
    dpprof_normal4(dpprof_noise_seed(seed), stream, block, z);
    for (k = 0; k < 4; k += 2) {
        double za, zb;
        ua = ((double)x.v[k] + 0.5) / 4294967296.0;
        ub = ((double)x.v[k + 1] + 0.5) / 4294967296.0;
        r = sqrt(-2.0 * log(ua));
        za = r * cos(two_pi * ub);
        zb = r * sin(two_pi * ub);
        maxd = fmax(maxd, fmax(fabs(za - z[k]), fabs(zb - z[k + 1])));
    }
    printf("  normal4 vs libm box-muller on the same words: max |diff| = %.2e\n", maxd);
    check(maxd < 1e-12, "normal4 follows the documented ctr/key layout");
    for (k = 0; k < 4; ++k) {
        double v = dpprof_normal(dpprof_noise_seed(seed), stream, block * 4u + (uint64_t)k);
        same &= bits_of(v) == bits_of(z[k]);
    }
    check(same, "dpprof_normal(index) == lane index%4 of block index/4, bitwise");
    {
        double a[4], b[4];
        dpprof_normal4(dpprof_noise_seed(seed), stream, 0x000000a5ULL, a); /* hi word 0 */
        dpprof_normal4(dpprof_noise_seed(seed), stream, block, b);
        check(a[0] != b[0], "block hi word feeds ctr[1]");
        dpprof_normal4(dpprof_noise_seed(seed), stream & 0xffffffffULL, block, a); /* stream hi 0 */
        check(a[0] != b[0], "stream hi word feeds ctr[3]");
        dpprof_normal4(dpprof_noise_seed(seed & 0xffffffffULL), stream, block, a); /* seed hi 0 */
        check(a[0] != b[0], "seed hi word feeds key[1]");
    }
}

static void test_determinism_and_noise_ref(void) {
    enum {
        N = 1001
    };
    static float out[N], part[N];
    const uint64_t seed = 77, stream = 5, offset = 3;
    const double stddev = 1.7;
    int i, ok;
    double a[4], b[4];
    printf("[determinism and dpprof_add_noise_ref]\n");
    dpprof_normal4(dpprof_noise_seed(seed), stream, 12345, a);
    dpprof_normal4(dpprof_noise_seed(seed), stream, 12345, b);
    check(memcmp(a, b, sizeof a) == 0, "normal4 is a pure function of its inputs");

    memset(out, 0, sizeof out);
    dpprof_add_noise_ref(out, N, stddev, dpprof_noise_seed(seed), stream, offset);
    ok = 1;
    for (i = 0; i < N; ++i) {
        float want = (float)(stddev * dpprof_normal(dpprof_noise_seed(seed), stream, offset + (uint64_t)i));
        ok &= memcmp(&out[i], &want, sizeof want) == 0;
    }
    check(ok, "add_noise_ref on zeros == (float)(stddev*normal(offset+i)), bitwise");

    for (i = 0; i < N; ++i) {
        out[i] = 1.0f + (float)i;
        part[i] = out[i];
    }
    dpprof_add_noise_ref(out, N, stddev, dpprof_noise_seed(seed), stream, offset);
    /* the same range in two unaligned pieces must give the same bits */
    dpprof_add_noise_ref(part, 333, stddev, dpprof_noise_seed(seed), stream, offset);
    dpprof_add_noise_ref(part + 333, N - 333, stddev, dpprof_noise_seed(seed), stream, offset + 333);
    check(memcmp(out, part, sizeof out) == 0, "add_noise_ref split at an unaligned offset");
    ok = 1;
    for (i = 0; i < N; ++i) {
        float base = 1.0f + (float)i;
        float want = base + (float)(stddev * dpprof_normal(dpprof_noise_seed(seed), stream, offset + (uint64_t)i));
        ok &= memcmp(&out[i], &want, sizeof want) == 0;
    }
    check(ok, "add_noise_ref accumulates: out + (float)(stddev*z)");
    dpprof_add_noise_ref(NULL, 0, stddev, dpprof_noise_seed(seed), stream, 0);
    check(1, "add_noise_ref(null, 0) is a no-op");
}

static void test_streams_differ(void) {
    enum {
        N = 4096
    };
    int i, eq_stream = 0, eq_seed = 0, eq_shift = 0;
    printf("[distinct seeds / streams]\n");
    for (i = 0; i < N; ++i) {
        double base = dpprof_normal(dpprof_noise_seed(1), 0, (uint64_t)i);
        eq_stream += base == dpprof_normal(dpprof_noise_seed(1), 1, (uint64_t)i);
        eq_seed += base == dpprof_normal(dpprof_noise_seed(2), 0, (uint64_t)i);
        eq_shift += base == dpprof_normal(dpprof_noise_seed(1), 0, (uint64_t)i + 4);
    }
    printf("  equal values out of %d: other stream %d, other seed %d, shifted block %d\n",
           N, eq_stream, eq_seed, eq_shift);
    check(eq_stream == 0 && eq_seed == 0 && eq_shift == 0,
          "distinct streams, seeds and blocks give different values");
}

/* chacha20's block function against rfc 8439's vectors: section 2.3.2 (key 00 01 .. 1f, block counter 1, nonce 00 00
   00 09 00 00 00 4a 00 00 00 00: state words 12..15 = 1, 0x09000000, 0x4a000000, 0) and appendix a.1's first (key,
   counter and nonce all zero); the 16 output words as the rfc lists them, read little-endian */
static void test_chacha20_kat(void) {
    static const uint32_t want1[16] = {0xe4e7f110u, 0x15593bd1u, 0x1fdd0f50u, 0xc47120a3u, 0xc7f4d1c7u, 0x0368c033u, 0x9aaa2204u, 0x4e6cd4c3u,
                                       0x466482d2u, 0x09aa9f07u, 0x05d7c214u, 0xa2028bd9u, 0xd19c12b5u, 0xb94e16deu, 0xe883d0cbu, 0x4e3c50a2u};
    static const uint32_t want0[16] = {0xade0b876u, 0x903df1a0u, 0xe56a5d40u, 0x28bd8653u, 0xb819d2bdu, 0x1aed8da0u, 0xccef36a8u, 0xc70d778bu,
                                       0x7c5941dau, 0x8d485751u, 0x3fe02477u, 0x374ad8b8u, 0xf4b8436au, 0x1ca11815u, 0x69b687c3u, 0x8665eeb2u};
    dpprof_noise_key key;
    uint32_t out[16];
    int i, ok1 = 1, ok0 = 1;
    printf("[chacha20 known answers: rfc 8439]\n");
    for (i = 0; i < 8; i++) key.w[i] = (uint32_t)(4 * i) | (uint32_t)(4 * i + 1) << 8 | (uint32_t)(4 * i + 2) << 16 | (uint32_t)(4 * i + 3) << 24;
    dpprof_chacha20_block(&key, 1 | (uint64_t)0x09000000u << 32, 0x4a000000u, out);
    for (i = 0; i < 16; i++) ok1 &= out[i] == want1[i];
    check(ok1, "chacha20 block: rfc 8439 section 2.3.2's vector, all 16 words");
    key = dpprof_noise_seed(0);
    dpprof_chacha20_block(&key, 0, 0, out);
    for (i = 0; i < 16; i++) ok0 &= out[i] == want0[i];
    check(ok0, "chacha20 block: rfc 8439 appendix a.1's first vector (all zero), all 16 words");
}

/* the secure stream's normal: one chacha20 block under the whole 256-bit key (counter = the block, nonce = the stream
   without the bit), its 16 words 8 box-muller pairs, each normal ((z_i + z_4+i) + z_8+i) + z_12+i) / 2 in double,
   bitwise; against libm's box-muller on the same words to 1e-12; every word of the key changes it; none of its values
   is the plain stream's */
static void test_secure_normal(void) {
    const uint64_t stream = 41;
    dpprof_noise_key key;
    int k, i, same = 1, equal = 0, words = 0;
    double maxd = 0.0;
    printf("[secure normals]\n");
    for (i = 0; i < 8; i++) key.w[i] = 0x9e3779b9u * (uint32_t)(i + 1) ^ 0x7f4a7c15u;
    for (k = 0; k < 4096; k++) {
        uint32_t w[16];
        double zb[16], z[4], p[4];
        dpprof_chacha20_block(&key, (uint64_t)k, stream, w);
        for (i = 0; i < 16; i += 2) {
            const double ua = ((double)w[i] + 0.5) / 4294967296.0, ub = ((double)w[i + 1] + 0.5) / 4294967296.0, r = sqrt(-2.0 * log(ua));
            dpprof__box_muller(w[i], w[i + 1], &zb[i], &zb[i + 1]);
            maxd = fmax(maxd, fmax(fabs(zb[i] - r * cos(2.0 * 3.14159265358979323846 * ub)), fabs(zb[i + 1] - r * sin(2.0 * 3.14159265358979323846 * ub))));
        }
        dpprof_normal4(key, stream | DPPROF_NOISE_SECURE, (uint64_t)k, z);
        dpprof_normal4(key, stream, (uint64_t)k, p);
        for (i = 0; i < 4; i++) {
            volatile double sum = zb[i] + zb[4 + i];
            sum = sum + zb[8 + i];
            sum = sum + zb[12 + i];
            same &= z[i] == sum / 2;
            equal += z[i] == p[i];
        }
    }
    for (i = 0; i < 8; i++) { /* each of the 256 bits' words matters */
        dpprof_noise_key k2 = key;
        double a[4], b[4];
        k2.w[i] ^= 1u;
        dpprof_normal4(key, stream | DPPROF_NOISE_SECURE, 7, a);
        dpprof_normal4(k2, stream | DPPROF_NOISE_SECURE, 7, b);
        words += a[0] != b[0] && a[3] != b[3];
    }
    printf("  box-muller on chacha20's words against libm's: max |diff| = %.2e\n", maxd);
    check(same && maxd < 1e-12, "a secure normal is (z_i + z_4+i + z_8+i + z_12+i) / 2 of the box-muller pairs of one chacha20 block, bitwise");
    check(words == 8, "every word of the secure stream's 256-bit key changes its normals");
    check(equal == 0, "no secure normal equals the plain stream's at the same index");
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* kolmogorov's limiting distribution: p = P(sqrt(n) D > x) */
static double kolmogorov_p(double x) {
    double p = 0.0;
    int k;
    if (x < 0.3) {
        return 1.0;
    }
    for (k = 1; k <= 100; ++k) {
        double t = 2.0 * exp(-2.0 * (double)k * (double)k * x * x);
        p += (k & 1) ? t : -t;
    }
    return p < 0.0 ? 0.0 : (p > 1.0 ? 1.0 : p);
}

/* moments and ks test on 10^6 samples. each bound is a clt bound of 6
   standard errors, P(|N(0,1)| > 6) = 1.97e-9; the ks test uses
   significance 1e-6. for a seed chosen at random the union bound puts the
   false-failure probability of this block at ~1.01e-6 (the seed is fixed,
   so the outcome is deterministic). */
static void test_normal_stats(uint64_t stream) {
    const int n = 1000000;
    const int secure = (stream & DPPROF_NOISE_SECURE) != 0;
    double *z = (double *)malloc((size_t)n * sizeof(double));
    double s1 = 0.0, s2 = 0.0, s4 = 0.0, sp = 0.0, d = 0.0, sqn, ks_x, ks_p;
    double mean, m2, m4, corr, zmax = 0.0;
    int i;
    printf("[normal statistics, n = 10^6, seed 0x5eed, stream 7%s]\n", secure ? " | DPPROF_NOISE_SECURE (--secure-noise)" : "");
    if (z == NULL) {
        check(0, "malloc for stats");
        return;
    }
    for (i = 0; i < n; ++i) {
        z[i] = dpprof_normal(dpprof_noise_seed(0x5eed), stream, (uint64_t)i);
        s1 += z[i];
        s2 += z[i] * z[i];
        s4 += z[i] * z[i] * z[i] * z[i];
        if (i & 1) {
            sp += z[i] * z[i - 1];
        }
        zmax = fmax(zmax, fabs(z[i]));
    }
    sqn = sqrt((double)n);
    mean = s1 / n;
    m2 = s2 / n;
    m4 = s4 / n;
    corr = sp / (n / 2);
    printf("  mean %+.3e (bound %.3e)  E[z^2]-1 %+.3e (bound %.3e)\n", mean, 6.0 / sqn,
           m2 - 1.0, 6.0 * sqrt(2.0 / n));
    printf("  E[z^4]-3 %+.3e (bound %.3e)  E[z_2k z_2k+1] %+.3e (bound %.3e)  max|z| %.3f\n",
           m4 - 3.0, 6.0 * sqrt(96.0 / n), corr, 6.0 / sqrt(n / 2.0), zmax);
    check(fabs(mean) < 6.0 / sqn, "mean within 6/sqrt(n)");
    check(fabs(m2 - 1.0) < 6.0 * sqrt(2.0 / n), "second moment within 6 sqrt(2/n)");
    /* var(z^4) = E z^8 - 9 = 105 - 9 = 96 */
    check(fabs(m4 - 3.0) < 6.0 * sqrt(96.0 / n), "fourth moment within 6 sqrt(96/n)");
    /* the two outputs of one box-muller pair are independent: var(z_a z_b) = 1 */
    check(fabs(corr) < 6.0 / sqrt(n / 2.0), "box-muller pair uncorrelated");
    if (secure) check(zmax < 13.53, "|z| <= 4 sqrt(66 ln 2) / 2 = 13.52 (four normals of |z| <= 6.76)");
    else check(zmax < 6.77, "|z| <= sqrt(66 ln 2) = 6.76 (u >= 2^-33)");

    qsort(z, (size_t)n, sizeof(double), cmp_double);
    for (i = 0; i < n; ++i) {
        double f = 0.5 * erfc(-z[i] / sqrt(2.0));
        double dp = (double)(i + 1) / n - f, dm = f - (double)i / n;
        d = fmax(d, fmax(dp, dm));
    }
    ks_x = (sqn + 0.12 + 0.11 / sqn) * d;
    ks_p = kolmogorov_p(ks_x);
    printf("  kolmogorov-smirnov vs N(0,1): D = %.3e, sqrt(n) D = %.3f, p = %.3f (reject if p < 1e-6)\n",
           d, ks_x, ks_p);
    check(ks_p >= 1e-6, "ks test at significance 1e-6");
    free(z);
}

/* ============================================ (a) own log / sincos error == */

/* measured on x86-64, glibc 2.36, against logl/sinl/cosl (64-bit mantissa):
   log: max 1.50e-16 relative (0.84 ulp) over 2^24 philox uniforms in (0,1),
        1.46e-16 (0.79 ulp) over 2^22 doubles from 2^-1074 to 2^1024;
   sincos_2pi: max 2.59e-16 relative (1.83 ulp) over 2^24 uniforms, the same
        as glibc sin/cos on the same rounded argument (the rounding of
        r*pi/2 dominates). the checks below require 1e-15. */

static void test_math_accuracy(void) {
    const long double pio2l = 1.570796326794896619231321691639751442L;
    const double pio2 = 1.5707963267948966;
    long n_uni = g_quick ? (1L << 20) : (1L << 24);
    long n_wide = g_quick ? (1L << 18) : (1L << 22);
    long i;
    double log_rel = 0.0, log_ulp = 0.0, libm_log_ulp = 0.0;
    double wide_rel = 0.0, wide_ulp = 0.0;
    double sin_rel = 0.0, cos_rel = 0.0, sc_ulp = 0.0, libm_sc_ulp = 0.0, pyth = 0.0;
    printf("[own log and sincos vs long-double libm (64-bit mantissa)]\n");

    for (i = 0; i < n_uni / 4; ++i) {
        dpprof_u32x4 c, x;
        int k;
        c.v[0] = (uint32_t)i;
        c.v[1] = 0;
        c.v[2] = 0x10c;
        c.v[3] = 0;
        x = dpprof_philox4x32_10(c, 0xacc, 0);
        for (k = 0; k < 4; ++k) {
            double u = dpprof__u01(x.v[k]);
            double got = dpprof__log(u);
            long double ref = logl((long double)u);
            double err = (double)fabsl((long double)got - ref);
            double t4, r, sn, cs;
            long double sref, cref, th;
            int64_t q4;
            log_rel = fmax(log_rel, err / (double)fabsl(ref));
            log_ulp = fmax(log_ulp, err / ulp_of((double)ref));
            libm_log_ulp = fmax(libm_log_ulp,
                                (double)fabsl((long double)log(u) - ref) / ulp_of((double)ref));

            dpprof__sincos_2pi(u, &sn, &cs);
            /* reference: the same exact quarter-turn reduction, then sinl/cosl
               of r*pi/2 in long double; the quadrant map is spelled out
               independently */
            t4 = u * 4.0;
            q4 = (int64_t)floor(t4);
            r = t4 - (double)q4;
            if (r > 0.5) {
                r -= 1.0;
                q4 += 1;
            }
            th = (long double)r * pio2l;
            switch ((int)(q4 & 3)) {
            case 0:
                sref = sinl(th);
                cref = cosl(th);
                break;
            case 1:
                sref = cosl(th);
                cref = -sinl(th);
                break;
            case 2:
                sref = -sinl(th);
                cref = -cosl(th);
                break;
            default:
                sref = -cosl(th);
                cref = sinl(th);
                break;
            }
            sin_rel = fmax(sin_rel, (double)(fabsl((long double)sn - sref) / fabsl(sref)));
            cos_rel = fmax(cos_rel, (double)(fabsl((long double)cs - cref) / fabsl(cref)));
            sc_ulp = fmax(sc_ulp, (double)fabsl((long double)sn - sref) / ulp_of((double)sref));
            sc_ulp = fmax(sc_ulp, (double)fabsl((long double)cs - cref) / ulp_of((double)cref));
            {
                /* double libm on the same reduced argument, for context */
                double th_d = r * pio2;
                double ls = (q4 & 1) ? cos(th_d) : sin(th_d);
                double lc = (q4 & 1) ? sin(th_d) : cos(th_d);
                libm_sc_ulp = fmax(libm_sc_ulp, (double)fabsl(fabsl((long double)ls) - fabsl(sref)) /
                                                    ulp_of((double)sref));
                libm_sc_ulp = fmax(libm_sc_ulp, (double)fabsl(fabsl((long double)lc) - fabsl(cref)) /
                                                    ulp_of((double)cref));
            }
            pyth = fmax(pyth, fabs(sn * sn + cs * cs - 1.0));
        }
    }
    /* log over the whole positive range, subnormals included: random
       mantissa, exponent field uniform in [0, 2046] */
    for (i = 0; i < n_wide / 2; ++i) {
        dpprof_u32x4 c, x;
        int k;
        c.v[0] = (uint32_t)i;
        c.v[1] = 0;
        c.v[2] = 0x31de;
        c.v[3] = 0;
        x = dpprof_philox4x32_10(c, 0xacc, 1);
        for (k = 0; k < 4; k += 2) {
            uint64_t mant = (((uint64_t)x.v[k] << 32) | x.v[k + 1]) & 0x000fffffffffffffULL;
            uint64_t ex = (uint64_t)((x.v[k] >> 20) % 2047u);
            double v, got, err;
            long double ref;
            if (ex == 0 && mant == 0) {
                mant = 1;
            }
            v = dpprof__f64_from_bits((ex << 52) | mant);
            got = dpprof__log(v);
            ref = logl((long double)v);
            if (ref == 0.0L) {
                check(got == 0.0, "log(1) == 0");
                continue;
            }
            err = (double)fabsl((long double)got - ref);
            wide_rel = fmax(wide_rel, err / (double)fabsl(ref));
            wide_ulp = fmax(wide_ulp, err / ulp_of((double)ref));
        }
    }
    printf("  log on %ld philox uniforms in (0,1): max rel err %.3e = %.3f ulp (glibc log: %.3f ulp)\n",
           n_uni, log_rel, log_ulp, libm_log_ulp);
    printf("  log on %ld doubles over [2^-1074, 2^1024): max rel err %.3e = %.3f ulp\n", n_wide,
           wide_rel, wide_ulp);
    printf("  sincos_2pi on %ld uniforms: max rel err sin %.3e, cos %.3e, max %.3f ulp (glibc sin/cos same reduction: %.3f ulp)\n",
           n_uni, sin_rel, cos_rel, sc_ulp, libm_sc_ulp);
    printf("  max |sin^2 + cos^2 - 1| = %.3e\n", pyth);
    check(log_rel < 1e-15 && wide_rel < 1e-15, "own log within 1e-15 relative");
    check(sin_rel < 1e-15 && cos_rel < 1e-15, "own sincos within 1e-15 relative");
    check(pyth < 1e-15, "sin^2 + cos^2 = 1");

    /* edges */
    {
        double s, c;
        check(dpprof__log(1.0) == 0.0, "log(1) == 0 exactly");
        check(dpprof__log(0.0) == -HUGE_VAL, "log(0) == -inf");
        check(dpprof__log(-1.0) != dpprof__log(-1.0), "log(-1) is nan");
        check(dpprof__log(HUGE_VAL) == HUGE_VAL, "log(+inf) == +inf");
        check(rel_err(dpprof__log(4.9406564584124654e-324), -744.44007192138126) < 1e-15,
              "log(smallest subnormal)");
        check(rel_err(dpprof__log(DBL_MAX), 709.78271289338397) < 1e-15, "log(DBL_MAX)");
        check(rel_err(dpprof__log(0x1p-33), -33.0 * 0.69314718055994531) < 1e-15, "log(2^-33)");
        dpprof__sincos_2pi(0.0, &s, &c);
        check(s == 0.0 && c == 1.0, "sincos(0)");
        dpprof__sincos_2pi(0.25, &s, &c);
        check(s == 1.0 && c == 0.0, "sincos(1/4) exact");
        dpprof__sincos_2pi(0.5, &s, &c);
        check(s == 0.0 && c == -1.0, "sincos(1/2) exact");
        dpprof__sincos_2pi(0.75, &s, &c);
        check(s == -1.0 && c == 0.0, "sincos(3/4) exact");
        dpprof__sincos_2pi(1e-300, &s, &c);
        check(rel_err(s, 6.283185307179586e-300) < 1e-15 && c == 1.0, "sincos(tiny)");
        dpprof__sincos_2pi(0.125, &s, &c);
        check(rel_err(s, 0.70710678118654752) < 1e-15 && rel_err(c, 0.70710678118654752) < 1e-15,
              "sincos(1/8)");
        dpprof__sincos_2pi(-0.125, &s, &c);
        check(rel_err(s, -0.70710678118654752) < 1e-15 && rel_err(c, 0.70710678118654752) < 1e-15,
              "sincos(-1/8)");
        dpprof__sincos_2pi(1e300, &s, &c);
        check(s != s && c != c, "sincos outside its domain is nan");
    }
}

/* ==================================== (a) golden bits (self-generated) ==== */

/* these are regression values produced by this implementation (not
   published): every host build and the cuda kernels must
   reproduce them bit for bit. */
static const uint64_t golden_first8[8] = {
    0x3fe3bff642100596ULL, 0xbff821a305520de1ULL, 0x3fee8cc0b31fe87cULL, 0x4000a83f8ec2e41fULL,
    0x3fd2c23411788bf0ULL, 0xbfcc5f36ec501563ULL, 0x3ff94f6d1cb4ea09ULL, 0xbfd8924494a3b8b3ULL};
static const uint64_t golden_hash_normals = 0x0be49a25e97b3135ULL; /* 2^20 normals, seed 42, stream 0 */
static const uint64_t golden_hash_noise = 0x0ee3e23115d94acaULL;   /* add_noise_ref, 4096 floats */

static void test_golden(void) {
    uint64_t h = 0xcbf29ce484222325ULL, hn = 0xcbf29ce484222325ULL;
    static float buf[4096];
    int i, ok = 1;
    printf("[golden bits for cpu/gpu and cross-compiler comparison]\n");
    printf("  first 8 normals (seed 0x0123456789abcdef, stream 0x7edcba9876543210):\n   ");
    for (i = 0; i < 8; ++i) {
        double v = dpprof_normal(dpprof_noise_seed(0x0123456789abcdefULL), 0x7edcba9876543210ULL, (uint64_t)i);
        printf(" 0x%016llxULL%s", (unsigned long long)bits_of(v), i == 3 ? "\n   " : "");
        ok &= bits_of(v) == golden_first8[i];
    }
    printf("\n");
    for (i = 0; i < (1 << 20); ++i) {
        h = fnv1a64(h, bits_of(dpprof_normal(dpprof_noise_seed(42), 0, (uint64_t)i)));
    }
    for (i = 0; i < 4096; ++i) {
        buf[i] = 0.25f * (float)(i % 7);
    }
    dpprof_add_noise_ref(buf, 4096, 2.5, dpprof_noise_seed(42), 9, 1);
    for (i = 0; i < 4096; ++i) {
        uint32_t w;
        memcpy(&w, &buf[i], sizeof w);
        hn = fnv1a64(hn, w);
    }
    printf("  fnv1a64 of 2^20 normals (seed 42, stream 0): 0x%016llx\n", (unsigned long long)h);
    printf("  fnv1a64 of add_noise_ref (4096 floats, 0.25*(i%%7), stddev 2.5, seed 42, stream 9, offset 1): 0x%016llx\n",
           (unsigned long long)hn);
    check(ok, "first 8 normals match the golden bits");
    check(h == golden_hash_normals, "hash of 2^20 normals matches golden");
    check(hn == golden_hash_noise, "hash of add_noise_ref output matches golden");
}

/* ============================================== (b) rdp accountant ====== */

/* tf-privacy's compute_dp_sgd_privacy order grid */
static int tf_orders(double *o) {
    static const double head[10] = {1.25, 1.5, 1.75, 2., 2.25, 2.5, 3., 3.5, 4., 4.5};
    int n = 0, i;
    for (i = 0; i < 10; ++i) {
        o[n++] = head[i];
    }
    for (i = 5; i < 64; ++i) {
        o[n++] = (double)i;
    }
    o[n++] = 128;
    o[n++] = 256;
    o[n++] = 512;
    return n;
}

/* the brute-force integer-order sum in long double, straight from the
   definition, to cross-check the log-space evaluation */
static double brute_rdp_int(double q, double sigma, int a) {
    long double sum = 0.0L, c = 1.0L;
    int i;
    for (i = 0; i <= a; ++i) {
        if (i > 0) {
            c = c * (long double)(a - i + 1) / (long double)i;
        }
        sum += c * powl((long double)q, (long double)i) *
               powl(1.0L - (long double)q, (long double)(a - i)) *
               expl((long double)(i * i - i) / (2.0L * (long double)sigma * (long double)sigma));
    }
    return (double)(logl(sum) / (long double)(a - 1));
}

/* opacus's get_noise_multiplier search (opacus/accountants/utils.py):
   double sigma_high from 20 until eps < target, then bisect on
   [0, sigma_high] until target - eps_high <= 0.01; returns sigma_high */
static double opacus_style_sigma(double target, double delta, double q, long long steps) {
    double lo = 0.0, hi = 10.0, eps_hi = HUGE_VAL, eps;
    while (eps_hi > target) {
        hi *= 2.0;
        dpprof_rdp_epsilon(q, hi, steps, delta, NULL, 0, &eps_hi, NULL);
    }
    while (target - eps_hi > 0.01) {
        double mid = (lo + hi) / 2.0;
        dpprof_rdp_epsilon(q, mid, steps, delta, NULL, 0, &eps, NULL);
        if (eps < target) {
            hi = mid;
            eps_hi = eps;
        } else {
            lo = mid;
        }
    }
    return hi;
}

static void test_rdp_closed_forms(void) {
    double r;
    int i;
    static const double qs[4] = {1e-4, 0.01, 0.1, 0.5};
    static const double ss[4] = {0.7, 1.0, 1.3, 4.0};
    printf("[rdp closed forms and internal consistency]\n");
    check(dpprof_rdp_sgm(0.0, 10.0, 20.0, &r) == 0 && r == 0.0, "q = 0 -> 0 [T7]");
    check(dpprof_rdp_sgm(1.0, 10.0, 20.0, &r) == 0 && r == 0.1, "q = 1, sigma 10, order 20 -> 0.1 [T7]");
    check(dpprof_rdp_sgm(1.0, 1.3, 7.5, &r) == 0 && r == 7.5 / (2.0 * 1.3 * 1.3), "q = 1 -> alpha/(2 sigma^2)");
    check(dpprof_rdp_sgm(0.3, 0.0, 3.0, &r) == 0 && r == HUGE_VAL, "sigma = 0 -> inf");
    check(dpprof_rdp_sgm(0.3, 1.0, HUGE_VAL, &r) == 0 && r == HUGE_VAL, "order inf -> inf");
    /* order 2: A_2 = 1 + q^2 (e^{1/sigma^2} - 1) (mironov et al. 2019) */
    for (i = 0; i < 4; ++i) {
        double want = log1p(qs[i] * qs[i] * expm1(1.0 / (ss[i] * ss[i])));
        dpprof_rdp_sgm(qs[i], ss[i], 2.0, &r);
        check(rel_err(r, want) < 1e-13, "order 2 closed form");
    }
    /* integer orders against the brute-force sum in long double */
    {
        static const int as[4] = {3, 8, 17, 32};
        double worst = 0.0;
        for (i = 0; i < 4; ++i) {
            int j;
            for (j = 0; j < 4; ++j) {
                double want = brute_rdp_int(qs[j], ss[i], as[i]);
                dpprof_rdp_sgm(qs[j], ss[i], (double)as[i], &r);
                worst = fmax(worst, rel_err(r, want));
            }
        }
        printf("  integer orders vs long-double brute force: max rel err %.2e\n", worst);
        check(worst < 1e-11, "integer orders match the brute-force sum");
    }
    /* the fractional series must agree with the integer expansion as the
       order approaches an integer */
    {
        /* clang-format off */
        static const double set[5][3] = {{0.01, 1.0, 3.0}, {0.04, 1.5, 3.0}, {0.25, 0.8, 3.0},
                                         {0.001, 0.6, 10.0}, {0.1, 2.0, 32.0}};
        /* clang-format on */
        double worst = 0.0;
        for (i = 0; i < 5; ++i) {
            double q = set[i][0], s = set[i][1], a = set[i][2], rp, rm;
            dpprof_rdp_sgm(q, s, a, &r);
            dpprof_rdp_sgm(q, s, a + 1e-9, &rp);
            dpprof_rdp_sgm(q, s, a - 1e-9, &rm);
            worst = fmax(worst, fmax(rel_err(rp, r), rel_err(rm, r)));
            check(rm <= r * (1 + 1e-12) && r <= rp * (1 + 1e-12), "rdp nondecreasing across an integer order");
        }
        printf("  order a +- 1e-9 vs integer a: max rel diff %.2e\n", worst);
        check(worst < 1e-7, "fractional series continuous at integer orders");
    }
    /* the quadrature fallback against the exact integer expansion, over
       regimes that include log(A) ~ 1e-17 (q 1e-5, sigma 100) and huge A */
    {
        static const double qq[5] = {1e-5, 1e-3, 0.04, 0.5, 0.999};
        static const double sq[5] = {0.3, 1.0, 5.0, 100.0, 0.1};
        static const double aq[4] = {2.0, 5.0, 32.0, 256.0};
        double worst = 0.0;
        int j, k, ok = 1;
        for (i = 0; i < 5; ++i) {
            for (j = 0; j < 5; ++j) {
                for (k = 0; k < 4; ++k) {
                    double li, lq;
                    dpprof__log_a_int(qq[i], sq[j], aq[k], &li);
                    ok &= dpprof__log_a_quad(qq[i], sq[j], aq[k], &lq) == 0;
                    worst = fmax(worst, rel_err(lq, li));
                }
            }
        }
        printf("  quadrature vs exact integer expansion (100 cases): max rel err of log A %.2e\n", worst);
        check(ok && worst < 1e-12, "quadrature matches the integer expansion");
    }
    /* quadrature vs the series where the series is accurate (log A >= 1e-4)
       and fast */
    {
        /* clang-format off */
        static const double set[6][3] = {{0.1, 1.5, 5.5}, {0.04, 1.5, 4.5}, {0.1, 2.0, 2.5},
                                         {0.25, 3.0, 10.9}, {0.01, 0.3, 20.5}, {0.5, 0.8, 63.5}};
        /* clang-format on */
        double worst = 0.0;
        int ok = 1;
        for (i = 0; i < 6; ++i) {
            double ls, lq;
            ok &= dpprof__log_a_frac(set[i][0], set[i][1], set[i][2], &ls) == 0;
            ok &= dpprof__log_a_quad(set[i][0], set[i][1], set[i][2], &lq) == 0;
            ok &= ls >= 1e-4;
            worst = fmax(worst, rel_err(lq, ls));
        }
        printf("  quadrature vs mtz series (log A >= 1e-4): max rel diff %.2e\n", worst);
        check(ok && worst < 1e-10, "quadrature matches the series");
    }
    /* cases where the series alone is slow (q = 1/2: polynomial decay) or
       below its rounding floor (tiny log A): still continuous at integers */
    {
        static const double set[3][3] = {{0.5, 1000.0, 2.0}, {0.5, 30.0, 3.0}, {1e-5, 100.0, 3.0}};
        double worst = 0.0;
        int ok = 1;
        for (i = 0; i < 3; ++i) {
            double q = set[i][0], s = set[i][1], a = set[i][2], rp, rm;
            ok &= dpprof_rdp_sgm(q, s, a, &r) == 0;
            ok &= dpprof_rdp_sgm(q, s, a + 1e-9, &rp) == 0;
            ok &= dpprof_rdp_sgm(q, s, a - 1e-9, &rm) == 0;
            worst = fmax(worst, fmax(rel_err(rp, r), rel_err(rm, r)));
        }
        printf("  slow-series / tiny-log-A cases, order a +- 1e-9 vs integer a: max rel diff %.2e\n", worst);
        check(ok && worst < 1e-7, "fallback continuous at integer orders");
    }
    /* rdp is nondecreasing in the order (renyi divergences are) */
    {
        double orders[DPPROF__PRIV_N_DEFAULT_ORDERS], prev = 0.0;
        int n = dpprof_rdp_default_orders(orders), mono = 1;
        for (i = 0; i < n; ++i) {
            dpprof_rdp_sgm(0.02, 1.1, orders[i], &r);
            mono &= r >= prev * (1.0 - 1e-12);
            prev = r;
        }
        check(mono, "rdp nondecreasing in the order over the default grid");
    }
    /* log-erfc: continuity where it switches to the asymptotic series */
    {
        double worst = 0.0, x;
        for (x = 19.5; x < 26.0; x += 0.125) {
            if (x >= 20.0) {
                worst = fmax(worst, rel_err(dpprof__log_erfc(x), log(erfc(x))));
            }
        }
        printf("  log-erfc asymptotic series vs log(erfc) on [20, 26): max rel diff %.2e\n", worst);
        check(worst < 1e-14, "log-erfc asymptotic branch");
        check(dpprof__log_erfc(1e4) < -1e8 && dpprof__log_erfc(1e4) > -1.0000001e8,
              "log-erfc far beyond underflow");
    }
}

static void test_rdp_references(void) {
    double e, a, r, tf[80];
    int ntf = tf_orders(tf), i;
    long long steps90 = (long long)(90 / 0.04); /* python int(90 / 0.04) */
    printf("[rdp accountant vs published values]\n");

    check(steps90 == 2250, "int(90/0.04) == 2250");
    dpprof_rdp_epsilon(0.04, 1.5, steps90, 1e-5, NULL, 0, &e, &a);
    check_ref("[O1] opacus test_rdp_accountant", e, 7.32911117143, 1e-6);
    check(fabs(e - 7.32911117143) < 5e-8, "[O1] within opacus's own assertAlmostEqual (7 places)");

    dpprof_rdp_epsilon(150.0 / 60000.0, 1.3, 6000, 1e-5, tf, ntf, &e, &a);
    check_ref("[T1] tf-privacy dp-sgd (60000,150,1.3,15)", e, 0.7242234026109595, 1e-6);
    check(a == 19.0, "[T1] optimal order 19");
    dpprof_rdp_epsilon(100.0 / 100000.0, 1.0, 30000, 1e-7, tf, ntf, &e, &a);
    check_ref("[T2] tf-privacy dp-sgd (1e5,100,1.0,30)", e, 1.4154988495444842, 1e-6);
    check(a == 13.0, "[T2] optimal order 13");
    /* steps = ceil(10 * 1e8 / 1024) = ceil(976562.5) */
    dpprof_rdp_epsilon(1024.0 / 1e8, 0.1, 976563, 1e-7, tf, ntf, &e, &a);
    check_ref("[T3] tf-privacy dp-sgd (1e8,1024,0.1,10)", e, 5907982.3113978775, 1e-6);
    check(a == 1.25, "[T3] optimal order 1.25");

    dpprof_rdp_epsilon_classic(150.0 / 60000.0, 1.3, 6000, 1e-5, tf, ntf, &e, &a);
    check_ref("[T4] tf-privacy 2019, classic conversion", e, 0.941870567, 1e-6);
    check(a == 19.0, "[T4] optimal order 19");
    dpprof_rdp_epsilon_classic(100.0 / 100000.0, 1.0, 30000, 1e-7, tf, ntf, &e, &a);
    check_ref("[T5] tf-privacy 2019, classic conversion", e, 1.70928734, 1e-6);
    check(a == 13.0, "[T5] optimal order 13");
    dpprof_rdp_epsilon_classic(1024.0 / 1e8, 0.1, 976563, 1e-7, tf, ntf, &e, &a);
    check_ref("[T6] tf-privacy 2019, classic conversion", e, 5907984.81339406, 1e-6);
    check(a == 1.25, "[T6] optimal order 1.25");

    /* [G1] the conversion alone: constant rdp 1.1 at orders 2..32 */
    {
        double best = HUGE_VAL, best_a = 0.0;
        int o;
        for (o = 2; o <= 32; ++o) {
            double v = dpprof__rdp_to_eps_one(1.1, (double)o, 1e-5, 1);
            if (v < best) {
                best = v;
                best_a = (double)o;
            }
        }
        check_ref("[G1] dp_accounting pure-dp conversion", best, 1.32783806176, 1e-6);
        check(best_a == 32.0, "[G1] optimal order 32");
    }
    /* [G1] gaussian tuned to exactly (1, 1e-6): orders 0.001 i; dp_accounting
       starts at i = 1000 (order 1, which it skips); orders must be > 1 here */
    {
        int n = 99999 - 1001 + 1;
        double *ord = (double *)malloc((size_t)n * sizeof(double));
        if (ord != NULL) {
            for (i = 0; i < n; ++i) {
                ord[i] = 0.001 * (double)(1001 + i);
            }
            dpprof_rdp_epsilon(1.0, 4.530877117, 1, 1e-6, ord, n, &e, &a);
            check_ref("[G1] gaussian sigma 4.530877117 -> eps 1", e, 1.0, 1e-6);
            check(fabs(e - 1.0) < 5e-8, "[G1] within dp_accounting's assertAlmostEqual");
            free(ord);
        }
    }

    /* published with only 4-6 significant digits: checked to that precision */
    dpprof_rdp_sgm(0.1, 2.0, 5.0, &r);
    printf("  [T7] compute_rdp(0.1, 2, 10, 5): got %.10g ref 0.07737 (places=5): abs diff %.2e, rel %.2e\n",
           10 * r, fabs(10 * r - 0.07737), rel_err(10 * r, 0.07737));
    check(fabs(10 * r - 0.07737) < 5e-6, "[T7] compute_rdp scalar to the published 5 places");
    {
        static const double ord[6] = {1.5, 2.5, 5, 50, 100, HUGE_VAL};
        static const double tfv[5] = {0.00065, 0.001085, 0.00218075, 0.023846, 167.416307};
        static const double gv[5] = {6.5007e-04, 1.0854e-03, 2.1808e-03, 2.3846e-02, 1.6742e+02};
        double worst_abs = 0.0, worst_rel = 0.0;
        for (i = 0; i < 6; ++i) {
            dpprof_rdp_sgm(0.01, 2.5, ord[i], &r);
            r *= 50;
            if (i == 5) {
                check(r == HUGE_VAL, "[T7][G1] order inf -> inf");
                continue;
            }
            printf("  [T7][G1] q .01 sigma 2.5 x50 order %-5g got %.10g  tf %.10g  dp_acc %.5g\n", ord[i],
                   r, tfv[i], gv[i]);
            worst_abs = fmax(worst_abs, fabs(r - tfv[i]));
            worst_rel = fmax(worst_rel, rel_err(r, gv[i]));
        }
        printf("  [T7] max abs diff %.2e (published delta 1e-5); [G1] max rel diff %.2e (published rtol 1e-4)\n",
               worst_abs, worst_rel);
        check(worst_abs < 1e-5, "[T7] compute_rdp sequence within delta 1e-5");
        check(worst_rel < 1e-4, "[G1] poisson-sampled gaussian within rtol 1e-4");
    }
    /* [O2] opacus's noise-multiplier search, replayed on this accountant */
    {
        double s90 = opacus_style_sigma(8.0, 1e-5, 0.04, steps90);
        double s2k = opacus_style_sigma(8.0, 1e-5, 0.04, 2000);
        printf("  [O2] opacus-style search: epochs 90 -> %.9g (ref 1.416), steps 2000 -> %.9g (ref 1.3562), places=4\n",
               s90, s2k);
        check(fabs(s90 - 1.416) < 5e-5, "[O2] get_noise_multiplier epochs=90");
        check(fabs(s2k - 1.3562) < 5e-5, "[O2] get_noise_multiplier steps=2000");
    }
    /* [T8] mnist tutorial setting, classic conversion, 3 digits published */
    dpprof_rdp_epsilon_classic(256.0 / 60000.0, 1.12, 14063, 1e-5, tf, ntf, &e, &a);
    printf("  [T8] tf-privacy mnist (60000, 256, 1.12, 60 epochs): got %.6f ref 2.92 (3 digits), order %g\n",
           e, a);
    check(fabs(e - 2.92) < 0.005, "[T8] eps rounds to 2.92");

    /* abadi et al. 2016 setting, printed only (see the header comment) */
    {
        double ord[32], ec, ei, ac, ai;
        for (i = 0; i < 32; ++i) {
            ord[i] = (double)(i + 2); /* moments lambda = 1..32 <-> orders 2..33 */
        }
        dpprof_rdp_epsilon_classic(0.01, 4.0, 10000, 1e-5, ord, 32, &ec, &ac);
        dpprof_rdp_epsilon(0.01, 4.0, 10000, 1e-5, ord, 32, &ei, &ai);
        printf("  abadi et al. setting q .01 sigma 4 T 1e4 delta 1e-5, orders 2..33: classic %.4f @%g, improved %.4f @%g (not asserted)\n",
               ec, ac, ei, ai);
    }
}

static void test_rdp_properties(void) {
    double e, prev, a;
    int i, ok;
    static const long long steps[6] = {0, 1, 10, 100, 1000, 100000};
    static const double sig[6] = {0.5, 0.8, 1.0, 2.0, 5.0, 20.0};
    printf("[rdp accountant properties]\n");
    {
        double orders[DPPROF__PRIV_N_DEFAULT_ORDERS];
        int n = dpprof_rdp_default_orders(NULL);
        check(n == 151 && n == DPPROF__PRIV_N_DEFAULT_ORDERS, "default grid has 151 orders");
        check(dpprof_rdp_default_orders(orders) == 151, "default grid fills");
        check(orders[0] == 1.1 && orders[9] == 2.0 && orders[98] == 10.9 && orders[99] == 12.0 &&
                  orders[150] == 63.0,
              "default grid values");
    }
    ok = 1;
    prev = -1.0;
    for (i = 0; i < 6; ++i) {
        dpprof_rdp_epsilon(0.01, 1.1, steps[i], 1e-5, NULL, 0, &e, NULL);
        ok &= e >= prev;
        prev = e;
    }
    check(ok, "epsilon nondecreasing in steps");
    ok = 1;
    prev = HUGE_VAL;
    for (i = 0; i < 6; ++i) {
        double ec;
        dpprof_rdp_epsilon(0.01, sig[i], 1000, 1e-5, NULL, 0, &e, NULL);
        dpprof_rdp_epsilon_classic(0.01, sig[i], 1000, 1e-5, NULL, 0, &ec, NULL);
        ok &= e <= prev && e <= ec;
        prev = e;
    }
    check(ok, "epsilon nonincreasing in sigma, improved <= classic");
    check(dpprof_rdp_epsilon(0.0, 1.0, 1000, 1e-5, NULL, 0, &e, NULL) == 0 && e == 0.0 &&
              dpprof_rdp_epsilon_classic(0.0, 1.0, 1000, 1e-5, NULL, 0, &a, NULL) == 0 && a == 0.0,
          "q = 0: zero privacy loss gives eps 0 in both conversions");
    check(dpprof_rdp_epsilon(0.1, 1.0, 0, 0.5, NULL, 0, &e, NULL) == 0 && e == 0.0,
          "steps = 0 gives eps 0");
    check(dpprof_rdp_epsilon(0.1, 0.0, 10, 1e-5, NULL, 0, &e, &a) == 0 && e == HUGE_VAL && a != a,
          "sigma = 0: eps inf, best order nan");

    /* round trips through sigma_for_epsilon */
    {
        /* clang-format off */
        static const double cases[6][4] = {
            /* q, steps, delta, target eps */
            {0.04, 2250, 1e-5, 8.0}, {0.01, 10000, 1e-5, 1.0}, {0.001, 100000, 1e-6, 0.5},
            {0.25, 100, 1e-5, 3.0}, {1.0, 10, 1e-5, 2.0}, {0.004, 14063, 1e-5, 2.92}};
        /* clang-format on */
        for (i = 0; i < 6; ++i) {
            double q = cases[i][0], d = cases[i][2], t = cases[i][3], s, es, el;
            long long st = (long long)cases[i][1];
            int rc = dpprof_rdp_sigma_for_epsilon(q, st, d, t, &s);
            dpprof_rdp_epsilon(q, s, st, d, NULL, 0, &es, NULL);
            dpprof_rdp_epsilon(q, s * (1.0 - 1e-6), st, d, NULL, 0, &el, NULL);
            printf("  sigma_for_epsilon(q %g, steps %lld, delta %g, eps %g) = %.9f -> eps %.9f; at sigma(1-1e-6): %.9f\n",
                   q, st, d, t, s, es, el);
            check(rc == 0 && es <= t && el > t, "sigma_for_epsilon is the smallest sigma to 1e-6");
        }
    }
    check(dpprof_rdp_sigma_for_epsilon(0.0, 100, 1e-5, 1.0, &e) == 0 && e == 0.0,
          "sigma_for_epsilon: q = 0 needs no noise");
    check(dpprof_rdp_sigma_for_epsilon(0.01, 1000, 1e-5, 1e-4, &e) == DPPROF__PRIV_ERANGE,
          "sigma_for_epsilon: target below the orders' floor (about 1.8e-4 at order 8192, delta 1e-5) -> ERANGE");
    { /* the minimum at the default grid's edge (63): the orders past it are searched, and give less */
        double grid[DPPROF__PRIV_N_DEFAULT_ORDERS], e63, a63, ext, aext;
        const int n = dpprof_rdp_default_orders(grid);
        dpprof_rdp_epsilon(0.001, 3.0, 1, 1e-5, grid, n, &e63, &a63); /* the grid given: opacus's orders only */
        dpprof_rdp_epsilon(0.001, 3.0, 1, 1e-5, NULL, 0, &ext, &aext);
        printf("  q 0.001, sigma 3, 1 step: orders to 63: eps %.6f at %g; past the edge: eps %.6f at %g\n", e63, a63, ext, aext);
        check(a63 == 63.0 && aext > 63.0 && ext < e63 && ext > 0.0, "rdp_epsilon: past order 63 where the minimum sits at the edge");
        dpprof_rdp_epsilon(0.004, 1.1, 14063, 1e-5, NULL, 0, &ext, &aext);
        dpprof_rdp_epsilon(0.004, 1.1, 14063, 1e-5, grid, n, &e63, &a63);
        printf("  q 0.004, sigma 1.1, 14063 steps: eps %.6f at order %g\n", ext, aext);
        check(ext == e63 && aext == a63 && a63 < 63.0, "rdp_epsilon: an interior minimum is opacus's value exactly");
    }
}

static void test_rdp_errors(void) {
    double r, nan_ = (double)NAN, o_bad[3] = {1.5, 1.0, 3.0}, o_ok[2] = {2.0, 3.0};
    printf("[rdp argument errors]\n");
    check(dpprof_rdp_sgm(0.1, 1.0, 2.0, NULL) == DPPROF__PRIV_ENULL, "rdp null out");
    check(dpprof_rdp_sgm(-0.1, 1.0, 2.0, &r) == DPPROF__PRIV_EINVAL, "q < 0");
    check(dpprof_rdp_sgm(1.1, 1.0, 2.0, &r) == DPPROF__PRIV_EINVAL, "q > 1");
    check(dpprof_rdp_sgm(nan_, 1.0, 2.0, &r) == DPPROF__PRIV_EINVAL, "q nan");
    check(dpprof_rdp_sgm(0.1, -1.0, 2.0, &r) == DPPROF__PRIV_EINVAL, "sigma < 0");
    check(dpprof_rdp_sgm(0.1, nan_, 2.0, &r) == DPPROF__PRIV_EINVAL, "sigma nan");
    check(dpprof_rdp_sgm(0.1, 1.0, 1.0, &r) == DPPROF__PRIV_EINVAL, "alpha = 1");
    check(dpprof_rdp_sgm(0.1, 1.0, 0.5, &r) == DPPROF__PRIV_EINVAL, "alpha < 1");
    check(dpprof_rdp_sgm(0.1, 1.0, nan_, &r) == DPPROF__PRIV_EINVAL, "alpha nan");
    check(dpprof_rdp_sgm(0.1, 1.0, 2e6, &r) == DPPROF__PRIV_EINVAL, "alpha finite > 1e6");
    check(dpprof_rdp_epsilon(0.1, 1.0, 10, 0.0, NULL, 0, &r, NULL) == DPPROF__PRIV_EINVAL, "delta = 0");
    check(dpprof_rdp_epsilon(0.1, 1.0, 10, 1.0, NULL, 0, &r, NULL) == DPPROF__PRIV_EINVAL, "delta = 1");
    check(dpprof_rdp_epsilon(0.1, 1.0, 10, nan_, NULL, 0, &r, NULL) == DPPROF__PRIV_EINVAL, "delta nan");
    check(dpprof_rdp_epsilon(0.1, 1.0, -1, 1e-5, NULL, 0, &r, NULL) == DPPROF__PRIV_EINVAL, "steps < 0");
    check(dpprof_rdp_epsilon(0.1, 1.0, 10, 1e-5, NULL, 0, NULL, NULL) == DPPROF__PRIV_ENULL, "eps null");
    check(dpprof_rdp_epsilon(0.1, 1.0, 10, 1e-5, o_bad, 3, &r, NULL) == DPPROF__PRIV_EINVAL, "an order of 1");
    check(dpprof_rdp_epsilon(0.1, 1.0, 10, 1e-5, o_ok, 0, &r, NULL) == DPPROF__PRIV_EINVAL, "n_orders 0");
    check(dpprof_rdp_epsilon_classic(1.5, 1.0, 10, 1e-5, o_ok, 2, &r, NULL) == DPPROF__PRIV_EINVAL,
          "classic: q > 1");
    check(dpprof_rdp_sigma_for_epsilon(0.1, 10, 1e-5, 0.0, &r) == DPPROF__PRIV_EINVAL, "target eps 0");
    check(dpprof_rdp_sigma_for_epsilon(0.1, 10, 1e-5, -1.0, &r) == DPPROF__PRIV_EINVAL, "target eps < 0");
    check(dpprof_rdp_sigma_for_epsilon(0.1, 10, 1e-5, nan_, &r) == DPPROF__PRIV_EINVAL, "target eps nan");
    check(dpprof_rdp_sigma_for_epsilon(0.1, 10, 2.0, 1.0, &r) == DPPROF__PRIV_EINVAL, "sigma_for: delta > 1");
    check(dpprof_rdp_sigma_for_epsilon(0.1, 10, 1e-5, 1.0, NULL) == DPPROF__PRIV_ENULL, "sigma_for: null out");
}

/* the tight accountant against dp_accounting 0.6.0: PLDAccountant(value_discretization_interval=1e-4) of
   SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps), get_epsilon(delta); within
   1e-3 relative (the header's stated agreement), never above rdp's, and the pld sigma meets its target */
static void test_pld(void) {
    /* clang-format off */
    static const double ref[][5] = {
        {0.004, 1.1, 14063, 1e-5, 2.2158763013940224}, {0.01, 1.0, 1000, 1e-5, 1.8282436455855091},
        {0.001, 3.0, 1, 1e-5, 0.0007055652838165397},  {0.1, 2.0, 100, 1e-6, 2.6750357412999692},
        {0.02, 0.8, 500, 1e-5, 4.668013366346702},      {1.0, 5.0, 10, 1e-5, 2.594383440464893},
        /* small sigma at delta 1e-8: a long thin upper tail of real mass, which the trims may not count as delta */
        {0.001, 0.5, 1000, 1e-8, 6.062465339387778},    {0.0001, 0.5, 1000, 1e-8, 2.7638720486820576},
        {0.001, 0.5, 1000, 1e-10, 7.788300711749295},
    };
    /* clang-format on */
    double e, r, s;
    int i;
    for (i = 0; i < 9; i++) {
        char what[160];
        const int rc = dpprof_pld_epsilon(ref[i][0], ref[i][1], (long long)ref[i][2], ref[i][3], 1e-4, &e);
        dpprof_rdp_epsilon(ref[i][0], ref[i][1], (long long)ref[i][2], ref[i][3], NULL, 0, &r, NULL);
        printf("  pld(q %g, sigma %g, %g steps, delta %g) = %.9f, dp_accounting %.9f (%.1e relative), rdp %.6f\n", ref[i][0], ref[i][1], ref[i][2], ref[i][3], e,
               ref[i][4], (e - ref[i][4]) / ref[i][4], r);
        snprintf(what, sizeof what, "pld_epsilon within 1e-3 of dp_accounting's and under rdp's (q %g, sigma %g, %g steps)", ref[i][0], ref[i][1], ref[i][2]);
        check(rc == 0 && fabs(e - ref[i][4]) <= 1e-3 * ref[i][4] && e <= r, what);
    }
    check(dpprof_pld_sigma_for_epsilon(0.01, 1000, 1e-5, 2.0, 1e-4, &s) == 0 && dpprof_pld_epsilon(0.01, s, 1000, 1e-5, 1e-4, &e) == 0 && e <= 2.0 &&
              dpprof_pld_epsilon(0.01, s * (1.0 - 1e-3), 1000, 1e-5, 1e-4, &r) == 0 && r > 2.0 && dpprof_rdp_sigma_for_epsilon(0.01, 1000, 1e-5, 2.0, &r) == 0 && s < r,
          "pld_sigma_for_epsilon: the smallest sigma to 1e-3 that spends at most the target, under rdp's sigma");
    check(dpprof_pld_sigma_for_epsilon(0.001, 10, 1e-8, 1.0, 1e-4, &s) == 0 && dpprof_pld_epsilon(0.001, s, 10, 1e-8, 1e-4, &e) == 0 && e <= 1.0 &&
              dpprof_pld_epsilon(0.001, s * (1.0 - 1e-3), 10, 1e-8, 1e-4, &r) == 0 && r > 1.0,
          "pld_sigma_for_epsilon at delta 1e-8 and a small sigma (q 0.001, 10 steps, target 1): found, and the smallest to 1e-3");
    check(dpprof_pld_epsilon(0.01, 1.0, 0, 1e-5, 1e-4, &e) == 0 && e == 0.0 && dpprof_pld_epsilon(0.0, 1.0, 10, 1e-5, 1e-4, &e) == 0 && e == 0.0,
          "pld_epsilon: no step, or q = 0, spends nothing");
    check(dpprof_pld_epsilon(1.5, 1.0, 10, 1e-5, 1e-4, &e) == DPPROF__PRIV_EINVAL && dpprof_pld_epsilon(0.1, 0.0, 10, 1e-5, 1e-4, &e) == DPPROF__PRIV_EINVAL &&
              dpprof_pld_epsilon(0.1, 1.0, 10, 1.0, 1e-4, &e) == DPPROF__PRIV_EINVAL && dpprof_pld_epsilon(0.1, 1.0, 10, 1e-5, 1e-4, NULL) == DPPROF__PRIV_ENULL,
          "pld_epsilon: q > 1, sigma 0, delta 1, a null result refused");
    /* q = 1 is the Gaussian mechanism composed: steps of sigma are one of sigma / sqrt(steps), whose exact epsilon
       (balle & wang 2018: delta(e) = Phi(1/(2 s) - e s) - exp(e) Phi(-1/(2 s) - e s)) is solved here by bisection.
       small sigmas put the add pair's loss far out: its window must hold it (else its mass counts as delta) */
    for (i = 0; i < 4; i++) {
        static const double sg[][2] = {{0.2, 1}, {0.15, 1}, {1.0, 1}, {2.0, 16}};
        const double se = sg[i][0] / sqrt(sg[i][1]);
        double lo = 0.0, hi = 200.0, x;
        char what[160];
        int k;
        for (k = 0; k < 200; k++) {
            const double mid = 0.5 * (lo + hi);
            x = 0.5 * erfc(-(0.5 / se - mid * se) / sqrt(2.0)) - exp(mid) * 0.5 * erfc(-(-0.5 / se - mid * se) / sqrt(2.0));
            if (x > 1e-5) lo = mid;
            else hi = mid;
        }
        k = dpprof_pld_epsilon(1.0, sg[i][0], (long long)sg[i][1], 1e-5, 0.0, &e); /* the interval the accountant chooses */
        snprintf(what, sizeof what, "pld_epsilon at q = 1 (sigma %g, %g steps): %.6f against the exact Gaussian mechanism's %.6f, above it by at most 1e-3 relative",
                 sg[i][0], sg[i][1], k == 0 ? e : -1.0, hi);
        check(k == 0 && e >= hi * (1.0 - 1e-9) && e <= hi * (1.0 + 1e-3), what);
    }
    { /* a fixed interval whose grid would pass its bound is refused at once, naming the grid (h 0 coarsens instead) */
        const double t0 = now_s();
        const int k = dpprof_pld_epsilon(1.0, 0.15, 1, 1e-5, 1e-4, &e);
        check(k == DPPROF__PRIV_ERANGE && strstr(dpprof_last_error(), "grid") && now_s() - t0 < 5.0, "pld_epsilon at a fixed interval too fine for its grid (q 1, sigma 0.15, h 1e-4): refused, naming the grid");
    }
    test_pld_bounds();
    test_pld_corners();
}

/* bounds a dp accountant must keep: never below the true epsilon, whatever the setting; time and memory bounded */
static void test_pld_bounds(void) {
    dpprof_privacy r;
    double e, t0, lo, hi;
    int k, rc;
    printf("[pld: bounds]\n");
    /* q 1e-20 at delta 1e-22: the loss of one step is enormous with a mass of 1e-20, most of it past the grid. the
       true epsilon of 1000 steps is at least one step's (the first step's output is a post-processing of the
       run's), which is exact: the remove pair's delta(e) = q Q((x - 1) / s) - (e^e - 1 + q) Q(x / s) at
       x = s^2 ln((e^e - 1 + q) / q) + 1/2, and the add pair's is smaller here */
    {
        const double q = 1e-20, sg = 0.1, delta = 1e-22;
        for (lo = 0.0, hi = 1000.0, k = 0; k < 200; k++) {
            const double mid = 0.5 * (lo + hi), c = expm1(mid) + q, x = sg * sg * log(c / q) + 0.5;
            const double d = q * 0.5 * erfc((x - 1.0) / sg / sqrt(2.0)) - c * 0.5 * erfc(x / sg / sqrt(2.0));
            if (d > delta) lo = mid;
            else hi = mid;
        }
        rc = dpprof_privacy_of(1, q, sg, 1000, delta, 1, DPPROF_ACCOUNTANT_PLD, &r);
        printf("  q 1e-20, sigma 0.1, 1000 steps, delta 1e-22: reported %.4f (%s), one step's exact epsilon %.4f\n", r.epsilon,
               r.accountant == DPPROF_ACCOUNTANT_RDP ? "rdp" : "pld", hi);
        check(rc == 0 && r.epsilon >= hi && r.accountant == DPPROF_ACCOUNTANT_RDP && strstr(r.note, "rdp") != NULL,
              "tiny q and delta: the reported epsilon is at least the true one (rdp's, said in the note, where pld cannot bound it)");
        check(dpprof_pld_epsilon(q, sg, 1000, delta, 0.0, &e) == DPPROF__PRIV_ERANGE, "tiny q and delta: pld itself refuses (no zero)");
    }
    /* 1e7 steps: within the bound of 5 s of cpu (here under the sanitizers: 20) and a grid of at most 2^20 points */
    t0 = now_s();
    rc = dpprof_privacy_of(1, 0.01, 1.0, 10000000, 1e-5, 1, DPPROF_ACCOUNTANT_PLD, &r);
    t0 = now_s() - t0;
    printf("  q 0.01, sigma 1, 1e7 steps: epsilon %.4f (%s, interval %.3g) in %.2f s of cpu, rdp %.4f\n", r.epsilon, r.accountant == DPPROF_ACCOUNTANT_PLD ? "pld" : "rdp",
           r.pld_interval, t0, r.epsilon_rdp);
    check(rc == 0 && r.accountant == DPPROF_ACCOUNTANT_PLD && r.epsilon > 0 && r.epsilon <= r.epsilon_rdp && t0 < 20.0, "1e7 steps: pld answers, under rdp, in bounded time");
    /* the smallest sigma for a target, to 0.5%: against the exact gaussian mechanism's (q 1: balle and wang's formula,
       bisection) and dp_accounting 0.6.0's (its pld: pessimistic, connect the dots, interval 1e-4; bisection to 1e-5),
       and against dpprof's own epsilon at sigma / 1.005 */
    {
        /* clang-format off */
        static const double ref[][5] = { /* q, steps, delta, target, dp_accounting's sigma */
            {1.0, 10, 1e-5, 1e-3, 5452.6},
            {0.01, 1000, 1e-5, 2.0, 0.959112},
            {1e-3, 10000, 1e-5, 1.0, 0.740679},
        };
        /* clang-format on */
        int i;
        for (i = 0; i < (int)(sizeof ref / sizeof ref[0]); i++) {
            double sg, e1, e2;
            char what[200];
            t0 = now_s();
            rc = dpprof_pld_sigma_for_epsilon(ref[i][0], (long long)ref[i][1], ref[i][2], ref[i][3], 0.0, &sg);
            t0 = now_s() - t0;
            dpprof_pld_epsilon(ref[i][0], sg, (long long)ref[i][1], ref[i][2], 0.0, &e1);
            dpprof_pld_epsilon(ref[i][0], sg / 1.005, (long long)ref[i][1], ref[i][2], 0.0, &e2);
            printf("  target %g (q %g, %g steps, delta %g): sigma %.6g (epsilon %.6g; at sigma / 1.005: %.6g) in %.2f s, dp_accounting's %.6g (%+.2e)\n", ref[i][3], ref[i][0],
                   ref[i][1], ref[i][2], sg, e1, e2, t0, ref[i][4], sg / ref[i][4] - 1.0);
            snprintf(what, sizeof what, "pld_sigma_for_epsilon (target %g, q %g, %g steps): reaches it, sigma / 1.005 does not, within 0.5%% of dp_accounting's", ref[i][3], ref[i][0],
                     ref[i][1]);
            check(rc == 0 && e1 <= ref[i][3] && e2 > ref[i][3] && fabs(sg / ref[i][4] - 1.0) <= 5e-3, what);
        }
    }
}

/* ---- rigorous lower bounds on the epsilon of t poisson-subsampled gaussian steps, for the corners below. a count
   test: S = {at least k of the t outputs past a threshold}. each output passes it independently, with chance pa on
   one side of a neighbouring pair and pb on the other, so P[S] and Q[S] are binomial tails, and any S gives
   epsilon >= log((P[S] - delta) / Q[S]) (the definition of (epsilon, delta)-dp). at t = 1 the best threshold is
   neyman and pearson's (the likelihood ratio rises with the output): the exact epsilon to the thresholds' spacing.
   P[S] from below by its first term, Q[S] from above by a geometric sum of its terms; the roundoff of lgamma's
   large values taken off at the end */
static double lb_lse(double a, double b) { /* log(e^a + e^b) */
    const double m = a > b ? a : b;
    return m == -INFINITY ? m : m + log(exp(a - m) + exp(b - m));
}
static double lb_lphic(double z) { /* log of the normal's upper tail at z, past where erfc underflows from mills' bounds' mean */
    if (z < 30.0) return log(0.5 * erfc(z / sqrt(2.0)));
    return -0.5 * z * z - log(z * sqrt(2.0 * 3.14159265358979323846)) + log1p(-1.0 / (z * z));
}
/* log P[Bin(t, p) >= k] from below (lo = 1) or above (lo = 0); lp = log p, lq = log(1 - p); err: its roundoff */
static double lb_tail(double t, double k, double lp, double lq, int lo, double *err) {
    const double lc = lgamma(t + 1.0) - lgamma(k + 1.0) - lgamma(t - k + 1.0), a = k * lp, b = (t - k) * lq, l = lc + a + b;
    double r;
    *err = 1e-14 * (lgamma(t + 1.0) + fabs(a) + fabs(b)) + 1e-12;
    if (lo) return l;
    r = exp(log((t - k) / (k + 1.0)) + lp - lq); /* the ratio of a term to the one before, falling from k on */
    return r < 1.0 ? fmin(0.0, l - log1p(-r)) : 0.0;
}
static double lb_epsilon(double q, double sg, double t, double delta) {
    double best = 0.0;
    int side, i;
    for (side = 0; side < 2; side++)
        for (i = 0; i < 160; i++) {
            /* thresholds over [-8 sigma, 1 + 8 sigma] and close about 1/2 and 1 */
            const double tau = i < 80 ? -8.0 * sg + (1.0 + 16.0 * sg) * i / 79.0 : (i < 120 ? 0.5 : 1.0) + sg * (((i - 80) % 40) - 20) * 0.6;
            /* remove: S counts outputs above tau, P = (1 - q) N(0) + q N(1), Q = N(0). add: below tau, P = N(0), Q = the mixture */
            const double l0 = lb_lphic(side ? -tau / sg : tau / sg), l0c = lb_lphic(side ? tau / sg : -tau / sg);
            const double l1 = lb_lphic(side ? (1.0 - tau) / sg : (tau - 1.0) / sg), l1c = lb_lphic(side ? (tau - 1.0) / sg : (1.0 - tau) / sg);
            const double lmix = q < 1.0 ? lb_lse(log1p(-q) + l0, log(q) + l1) : l1, lmixc = q < 1.0 ? lb_lse(log1p(-q) + l0c, log(q) + l1c) : l1c;
            const double lpa = side ? l0 : lmix, lqa = side ? l0c : lmixc, lpb = side ? lmix : l0, lqb = side ? lmixc : l0c;
            double k = 1.0;
            while (k <= t) {
                double e1, e2;
                const double la = lb_tail(t, k, lpa, lqa, 1, &e1), lb = lb_tail(t, k, lpb, lqb, 0, &e2);
                if (la > log(delta)) {
                    const double e = la + log1p(-exp(log(delta) - la)) - lb - e1 - e2;
                    best = e > best ? e : best;
                }
                k = k < 64.0 ? k + 1.0 : floor(k * 1.03);
            }
        }
    return best;
}

/* at the corners of the domain (sigma 1e-300 to 0.035, and 1 and 5; q 1e-20 to 1; 1 to 1e12 steps; delta 1e-5, and
   1e-8 at 1000 steps) the epsilon reported under the pld is never below the count test's lower bound, never 0 where
   that is above 0, never above rdp's, and comes in bounded time */
static void test_pld_corners(void) {
    static const double sgs[] = {1e-300, 1e-10, 1e-3, 0.02, 0.035, 1.0, 5.0}, qs[] = {1e-20, 1e-4, 0.01, 0.5, 1.0}, ts[] = {1, 1000, 1e7, 1e12};
    int a, b, c, d, bad = 0, slow = 0, n = 0, zero = 0;
    double worst_t = 0.0, total_t = 0.0;
    printf("[pld: corners]\n");
    for (a = 0; a < 7; a++)
        for (b = 0; b < 5; b++)
            for (c = 0; c < 4; c++)
                for (d = 0; d < 2; d++) {
                    const double sg = sgs[a], q = qs[b], t = ts[c], delta = d ? 1e-8 : 1e-5;
                    dpprof_privacy r;
                    double t0 = now_s(), lb;
                    int rc;
                    if ((d == 1 && c != 1) || (g_quick && (c == 3 || d == 1))) continue;
                    rc = dpprof_privacy_of(1, q, sg, (long long)t, delta, 1, DPPROF_ACCOUNTANT_BOTH, &r);
                    t0 = now_s() - t0;
                    worst_t = t0 > worst_t ? t0 : worst_t, total_t += t0;
                    lb = lb_epsilon(q, sg, t, delta);
                    n++;
                    if (rc != 0 || !(r.epsilon_pld == r.epsilon_pld ? r.epsilon_pld >= lb && r.epsilon_pld <= r.epsilon_rdp : r.epsilon_rdp >= lb)) {
                        bad++;
                        printf("  sigma %g, q %g, %g steps, delta %g: pld %.10g, rdp %.10g, lower bound %.10g\n", sg, q, t, delta, r.epsilon_pld, r.epsilon_rdp, lb);
                    }
                    if (r.epsilon_pld == 0.0 && lb > 0.0) zero++;
                    if (t0 > 10.0) slow++, printf("  sigma %g, q %g, %g steps, delta %g: %.1f s\n", sg, q, t, delta, t0);
                }
    printf("  %d corners, the slowest %.2f s of cpu, %.1f s in all\n", n, worst_t, total_t);
    check(bad == 0, "pld at the corners: at least the count test's rigorous lower bound, at most rdp's (or rdp's own where the pld cannot bound it)");
    check(zero == 0, "pld at the corners: never 0 where the lower bound is above 0");
    check(slow == 0, "pld at the corners: every call under 10 s of cpu");
}

int main(int argc, char **argv) {
    g_quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    test_philox_kat();
    test_counter_layout();
    test_determinism_and_noise_ref();
    test_streams_differ();
    test_normal_stats(7);
    test_normal_stats(7 | DPPROF_NOISE_SECURE);
    test_chacha20_kat();
    test_secure_normal();
    test_math_accuracy();
    test_golden();
    test_rdp_closed_forms();
    test_rdp_references();
    test_rdp_properties();
    test_rdp_errors();
    test_pld();
    printf("# privacy: %d checks, %d failed\n", g_checks, g_fails);
    return g_fails == 0 ? 0 : 1;
}
