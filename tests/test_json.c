/* tests for the json fragment. prints one "PASS name" / "FAIL name" line per
 * check and exits 1 if any failed. "--bench" runs the timing checks instead
 * (kept out of the normal run because sanitizer builds are slow). */
/* the implementation: build/impl-san.o (tests/impl.c; Makefile) */
#include "dpprof.h"
#include "dpprof_tools.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_fail, g_pass;

static void check(int ok, const char *name) {
    printf("%s %s\n", ok ? "PASS" : "FAIL", name);
    if (ok)
        g_pass++;
    else
        g_fail = 1;
}

/* deterministic lcg so failures reproduce */
static unsigned long long g_lcg = 0x853c49e6748fea9bULL;
static unsigned long long lcg(void) {
    g_lcg = g_lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return g_lcg;
}

static int g_sentinel;
#define SENTINEL ((dpprof_json_doc *)(void *)&g_sentinel)

/* the reader's message of the last failure ("" after a success), as the tests read it */
static const char *json_msg(int rc) { return rc ? dpprof_last_error() : ""; }

static int err_case(const char *text, size_t n, const char *want) {
    dpprof_json_doc *doc = SENTINEL;
    int rc = dpprof_json_parse(text, n, &doc);
    const char *err = json_msg(rc);
    int ok = rc == DPPROF_JSON_ESYNTAX && doc == NULL && strcmp(err, want) == 0;
    if (!ok) {
        printf("  got rc=%d err=\"%s\"\n  want \"%s\"\n", rc, err, want);
        if (rc == 0)
            dpprof_json_free(doc);
    }
    return ok;
}

static void expect_err(const char *name, const char *text, const char *want) {
    check(err_case(text, strlen(text), want), name);
}

static void expect_errn(const char *name, const char *text, size_t n, const char *want) {
    check(err_case(text, n, want), name);
}

static dpprof_json_doc *parse_ok(const char *text, size_t n) {
    dpprof_json_doc *doc = NULL;
    int rc = dpprof_json_parse(text, n, &doc);
    const char *err = json_msg(rc);
    if (rc != 0 || !doc) {
        printf("  unexpected failure rc=%d: %s\n", rc, err);
        if (rc == 0)
            dpprof_json_free(doc);
        return NULL;
    }
    return doc;
}

static int num_is(const dpprof_json *v, double want) {
    double x;
    return dpprof_json_number(v, &x) == 0 && memcmp(&x, &want, sizeof x) == 0;
}

static int int_is(const dpprof_json *v, long long want) {
    long long x;
    return dpprof_json_int64(v, &x) == 0 && x == want;
}

static int str_is(const dpprof_json *v, const char *want, size_t wlen) {
    const char *s = dpprof_json_string(v);
    return s && dpprof_json_string_len(v) == wlen && memcmp(s, want, wlen) == 0 && s[wlen] == '\0';
}

/* a growable text buffer for generated inputs */
typedef struct tbuf {
    char *p;
    size_t n, cap;
} tbuf;

static void tput(tbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n + 1)
            cap *= 2;
        b->p = (char *)realloc(b->p, cap);
        if (!b->p) {
            printf("FAIL test harness out of memory\n");
            exit(1);
        }
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void tputs(tbuf *b, const char *s) {
    tput(b, s, strlen(s));
}

/* ------------------------------------------------------------------ */

static void test_empty(void) {
    dpprof_json_doc *doc = SENTINEL;
    expect_err("empty input", "", "line 1, column 1: empty input");
    expect_err("only whitespace", " \n\t ", "line 2, column 3: empty input");
    expect_err("only whitespace crlf", "\r\n\r\n", "line 3, column 1: empty input");
    check(dpprof_json_parse(NULL, 0, &doc) == DPPROF_JSON_ESYNTAX && doc == NULL &&
              strcmp(dpprof_last_error(), "line 1, column 1: empty input") == 0,
          "null text with n == 0 is empty input");
    check(dpprof_json_parse(NULL, 3, &doc) == DPPROF_JSON_EINVAL && doc == NULL &&
              strcmp(dpprof_last_error(), "dpprof_json_parse: NULL text of nonzero length") == 0,
          "null text with n > 0 is EINVAL");
    check(dpprof_json_parse("1", 1, NULL) == DPPROF_JSON_EINVAL && strstr(dpprof_last_error(), "NULL document pointer"), "null doc pointer is EINVAL");
}

static void test_scalars(void) {
    dpprof_json_doc *doc;
    const dpprof_json *r;
    const char *t;
    int ok;

    doc = parse_ok(" true ", 6);
    check(doc && dpprof_json_kind(dpprof_json_root(doc)) == DPPROF_JSON_TRUE, "top-level true");
    dpprof_json_free(doc);
    doc = parse_ok("false", 5);
    check(doc && dpprof_json_kind(dpprof_json_root(doc)) == DPPROF_JSON_FALSE, "top-level false");
    dpprof_json_free(doc);
    doc = parse_ok("null", 4);
    check(doc && dpprof_json_kind(dpprof_json_root(doc)) == DPPROF_JSON_NULL && dpprof_json_root(doc) != NULL,
          "top-level null");
    dpprof_json_free(doc);
    doc = parse_ok("\"hi\"", 4);
    check(doc && str_is(dpprof_json_root(doc), "hi", 2), "top-level string");
    dpprof_json_free(doc);
    doc = parse_ok("42", 2);
    r = doc ? dpprof_json_root(doc) : NULL;
    ok = r && dpprof_json_kind(r) == DPPROF_JSON_NUMBER && int_is(r, 42) && num_is(r, 42.0);
    check(ok, "top-level number");
    dpprof_json_free(doc);
    /* the input need not be nul-terminated: n bounds it */
    doc = parse_ok("123456", 3);
    check(doc && int_is(dpprof_json_root(doc), 123), "length bounds the input");
    dpprof_json_free(doc);
    t = " \t\r\n[ 1 ,\n\t2 ]\r\n ";
    doc = parse_ok(t, strlen(t));
    check(doc && dpprof_json_len(dpprof_json_root(doc)) == 2 && int_is(dpprof_json_at(dpprof_json_root(doc), 1), 2),
          "all four whitespace characters");
    dpprof_json_free(doc);
}

static const char *g_result_doc =
    "{\n"
    "  \"tool\": \"dpprof\",\n"
    "  \"version\": 3,\n"
    "  \"config\": {\"eps\": 1.5, \"delta\": 1e-5, \"clip\": -0.25, \"seed\": 12345678901234567,\n"
    "             \"name\": \"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\"\\n\", \"on\": true, \"off\": false, \"none\": null},\n"
    "  \"runs\": [\n"
    "    {\"step\": 0, \"ms\": [0.5, 0.25, 1e2], \"loss\": 2.302585092994046},\n"
    "    {\"step\": 1, \"ms\": [], \"loss\": -1.5E-3, \"tags\": {}}\n"
    "  ],\n"
    "  \"\\u00fcnicode\": \"\xc3\xbc\xe2\x82\xac\xf0\x9f\x98\x80\"\n"
    "}\n";

static void test_result_doc(void) {
    dpprof_json_doc *doc = parse_ok(g_result_doc, strlen(g_result_doc));
    const dpprof_json *r, *cfg, *runs, *v;
    long long i64;
    int ok;
    check(doc != NULL, "result-like document parses");
    if (!doc)
        return;
    r = dpprof_json_root(doc);
    cfg = dpprof_json_get(r, "config");
    runs = dpprof_json_get(r, "runs");
    ok = dpprof_json_kind(r) == DPPROF_JSON_OBJECT && dpprof_json_len(r) == 5 &&
         strcmp(dpprof_json_key(r, 0), "tool") == 0 && strcmp(dpprof_json_key(r, 4), "\xc3\xbcnicode") == 0 &&
         str_is(dpprof_json_member(r, 0), "dpprof", 6) && str_is(dpprof_json_get(r, "tool"), "dpprof", 6) &&
         int_is(dpprof_json_get(r, "version"), 3);
    check(ok, "result doc: top-level members in file order");
    ok = cfg && num_is(dpprof_json_get(cfg, "eps"), 1.5) && num_is(dpprof_json_get(cfg, "delta"), 1e-5) &&
         num_is(dpprof_json_get(cfg, "clip"), -0.25) && int_is(dpprof_json_get(cfg, "seed"), 12345678901234567LL) &&
         dpprof_json_kind(dpprof_json_get(cfg, "on")) == DPPROF_JSON_TRUE &&
         dpprof_json_kind(dpprof_json_get(cfg, "off")) == DPPROF_JSON_FALSE &&
         dpprof_json_get(cfg, "none") != NULL && dpprof_json_kind(dpprof_json_get(cfg, "none")) == DPPROF_JSON_NULL;
    check(ok, "result doc: config values");
    v = dpprof_json_get(cfg, "name");
    check(str_is(v, "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\"\n", 15), "result doc: escaped string decoded");
    ok = runs && dpprof_json_len(runs) == 2 && dpprof_json_kind(runs) == DPPROF_JSON_ARRAY &&
         int_is(dpprof_json_get(dpprof_json_at(runs, 1), "step"), 1) &&
         num_is(dpprof_json_path(r, "runs.0.ms.2"), 100.0) && num_is(dpprof_json_path(r, "runs.1.loss"), -1.5e-3) &&
         dpprof_json_len(dpprof_json_path(r, "runs.1.ms")) == 0 &&
         dpprof_json_kind(dpprof_json_path(r, "runs.1.tags")) == DPPROF_JSON_OBJECT &&
         num_is(dpprof_json_path(r, "runs.0.loss"), 2.302585092994046);
    check(ok, "result doc: nested arrays and path lookup");
    ok = dpprof_json_path(r, "") == r && dpprof_json_path(r, "runs.2") == NULL &&
         dpprof_json_path(r, "runs.x") == NULL && dpprof_json_path(r, "runs.01") == NULL &&
         dpprof_json_path(r, "runs.") == NULL && dpprof_json_path(r, ".runs") == NULL &&
         dpprof_json_path(r, "runs..0") == NULL && dpprof_json_path(r, "version.0") == NULL &&
         dpprof_json_path(r, "runs.99999999999999999999999999") == NULL &&
         dpprof_json_path(r, "nope") == NULL && dpprof_json_path(NULL, "a") == NULL &&
         dpprof_json_path(r, NULL) == NULL;
    check(ok, "path lookup failures return NULL");
    /* wrong-type and absent access */
    ok = dpprof_json_get(runs, "step") == NULL && dpprof_json_at(cfg, 0) == NULL &&
         dpprof_json_at(runs, 2) == NULL && dpprof_json_at(runs, (size_t)-1) == NULL &&
         dpprof_json_len(dpprof_json_get(r, "tool")) == 0 && dpprof_json_key(r, 5) == NULL &&
         dpprof_json_member(r, 5) == NULL && dpprof_json_key(runs, 0) == NULL && dpprof_json_key_len(r, 9) == 0 &&
         dpprof_json_string(dpprof_json_get(r, "version")) == NULL &&
         dpprof_json_string_len(dpprof_json_get(r, "version")) == 0 &&
         dpprof_json_number(dpprof_json_get(r, "tool"), NULL) == DPPROF_JSON_ETYPE &&
         dpprof_json_number(NULL, NULL) == DPPROF_JSON_EMISSING &&
         dpprof_json_int64(dpprof_json_get(r, "missing"), &i64) == DPPROF_JSON_EMISSING &&
         dpprof_json_int64(cfg, &i64) == DPPROF_JSON_ETYPE &&
         dpprof_json_int64(dpprof_json_get(cfg, "eps"), &i64) == DPPROF_JSON_ERANGE &&
         dpprof_json_get(NULL, "a") == NULL && dpprof_json_get(r, NULL) == NULL && dpprof_json_len(NULL) == 0 &&
         dpprof_json_kind(NULL) == DPPROF_JSON_NULL && dpprof_json_root(NULL) == NULL &&
         dpprof_json_string(NULL) == NULL && dpprof_json_at(NULL, 0) == NULL;
    check(ok, "getters reject wrong types and NULL");
    dpprof_json_free(doc);
    dpprof_json_free(NULL);
}

static void test_numbers(void) {
    const char *t = "[0, -0, 1, -1, 1.5, -2.25e-3, 1E2, 1e+2, 1e-2, 0.1, 123456789012345678,"
                    " 9223372036854775807, -9223372036854775808, 9223372036854775808, 18446744073709551616,"
                    " 9007199254740993, 1.0, 1e3, 9007199254740993.0, 1e300, 4.9e-324, 1e-400, -1e-400,"
                    " 1.7976931348623157e308, 2.2250738585072011e-308, 0.000000000000000000000000000001e30,"
                    " 100000000000000000000000000000000000000000000000000000000000e-59]";
    dpprof_json_doc *doc = parse_ok(t, strlen(t));
    const dpprof_json *a;
    double x;
    long long i;
    int ok;
    check(doc != NULL, "number array parses");
    if (!doc)
        return;
    a = dpprof_json_root(doc);
    check(dpprof_json_len(a) == 27, "number array length");
    ok = num_is(dpprof_json_at(a, 0), 0.0) && int_is(dpprof_json_at(a, 0), 0);
    check(ok, "zero");
    ok = dpprof_json_number(dpprof_json_at(a, 1), &x) == 0 && x == 0.0 && copysign(1.0, x) < 0.0 &&
         int_is(dpprof_json_at(a, 1), 0);
    check(ok, "-0 keeps its sign as a double, is 0 as an integer");
    ok = int_is(dpprof_json_at(a, 2), 1) && int_is(dpprof_json_at(a, 3), -1) && num_is(dpprof_json_at(a, 4), 1.5) &&
         num_is(dpprof_json_at(a, 5), -2.25e-3) && num_is(dpprof_json_at(a, 6), 100.0) &&
         num_is(dpprof_json_at(a, 7), 100.0) && num_is(dpprof_json_at(a, 8), 0.01) && num_is(dpprof_json_at(a, 9), 0.1);
    check(ok, "small numbers, fractions and exponents");
    ok = int_is(dpprof_json_at(a, 10), 123456789012345678LL) && int_is(dpprof_json_at(a, 11), 9223372036854775807LL) &&
         int_is(dpprof_json_at(a, 12), -9223372036854775807LL - 1) &&
         num_is(dpprof_json_at(a, 10), 123456789012345678.0);
    check(ok, "int64 limits are exact");
    ok = dpprof_json_int64(dpprof_json_at(a, 13), &i) == DPPROF_JSON_ERANGE &&
         num_is(dpprof_json_at(a, 13), 9223372036854775808.0) &&
         dpprof_json_int64(dpprof_json_at(a, 14), &i) == DPPROF_JSON_ERANGE &&
         num_is(dpprof_json_at(a, 14), 18446744073709551616.0);
    check(ok, "integers beyond int64 are doubles, int64 getter says ERANGE");
    ok = int_is(dpprof_json_at(a, 15), 9007199254740993LL) && int_is(dpprof_json_at(a, 16), 1) &&
         int_is(dpprof_json_at(a, 17), 1000) && dpprof_json_int64(dpprof_json_at(a, 18), &i) == DPPROF_JSON_ERANGE &&
         dpprof_json_int64(dpprof_json_at(a, 19), &i) == DPPROF_JSON_ERANGE;
    check(ok, "int64 getter: 2^53+1 literal exact, 1.0 and 1e3 ok, inexact doubles rejected");
    ok = num_is(dpprof_json_at(a, 19), 1e300) && num_is(dpprof_json_at(a, 20), 4.9406564584124654e-324);
    check(ok, "1e300 and the smallest subnormal");
    /* underflow policy: a literal below the subnormal range becomes zero
       with the literal's sign (nearest double), it is not an error */
    ok = dpprof_json_number(dpprof_json_at(a, 21), &x) == 0 && x == 0.0 && copysign(1.0, x) > 0.0 &&
         dpprof_json_number(dpprof_json_at(a, 22), &x) == 0 && x == 0.0 && copysign(1.0, x) < 0.0;
    check(ok, "1e-400 underflows to +0, -1e-400 to -0");
    ok = num_is(dpprof_json_at(a, 23), 1.7976931348623157e308) &&
         num_is(dpprof_json_at(a, 24), 2.2250738585072011e-308) && num_is(dpprof_json_at(a, 25), 1.0) &&
         num_is(dpprof_json_at(a, 26), 1.0);
    check(ok, "DBL_MAX, the 2.2250738585072011e-308 case, long mantissas");
    dpprof_json_free(doc);

    expect_err("1e999 is out of range", "1e999", "line 1, column 1: number out of range");
    expect_err("-1e400 in array is out of range", "[0, -1e400]", "line 1, column 5: number out of range");
    expect_err("just above DBL_MAX is out of range", "1.7976931348623159e308", "line 1, column 1: number out of range");
    expect_err("leading zero", "01", "line 1, column 1: invalid number: leading zeros are not allowed");
    expect_err("negative leading zero", "[-012]", "line 1, column 3: invalid number: leading zeros are not allowed");
    expect_err("missing fraction digits", "1.", "line 1, column 3: invalid number: expected digit after '.'");
    expect_err("fraction then exponent without digit", "[1.e5]",
               "line 1, column 4: invalid number: expected digit after '.'");
    expect_err("no digit before '.'", ".5", "line 1, column 1: invalid number: expected digit before '.'");
    expect_err("lone minus", "-", "line 1, column 2: invalid number: expected digit after '-'");
    expect_err("minus letter", "[-a]", "line 1, column 3: invalid number: expected digit after '-'");
    expect_err("plus sign", "+1", "line 1, column 1: invalid number: '+' sign is not allowed");
    expect_err("empty exponent", "1e", "line 1, column 3: invalid number: expected digit in exponent");
    expect_err("signed empty exponent", "1E+", "line 1, column 4: invalid number: expected digit in exponent");
    expect_err("NaN", "NaN", "line 1, column 1: NaN and Infinity are not allowed");
    expect_err("Infinity", "[1, Infinity]", "line 1, column 5: NaN and Infinity are not allowed");
    expect_err("-Infinity", "-Infinity", "line 1, column 1: NaN and Infinity are not allowed");
    expect_err("hex number", "0x10", "line 1, column 2: unexpected character 'x' after the JSON value");
    expect_err("two dots", "1.5.3", "line 1, column 4: unexpected character '.' after the JSON value");
}

/* doubles printed with %.17g must come back bit for bit */
static void test_roundtrip(void) {
    tbuf b;
    char s[64];
    double *want;
    unsigned long long bits;
    size_t count = 200000, i, bad = 0;
    dpprof_json_doc *doc;
    const dpprof_json *a;
    static const double special[] = {0.1, 0.2, 0.3, 1.0 / 3.0, 2.0 / 3.0, 1e23, 8.98846567431158e307,
                                     1.7976931348623157e308, 2.2250738585072014e-308, 2.2250738585072009e-308,
                                     4.9406564584124654e-324, 9007199254740993.0, 5e-324, 123456.789e-300};
    size_t nspecial = sizeof special / sizeof special[0];
    memset(&b, 0, sizeof b);
    want = (double *)malloc((count + nspecial) * sizeof(double));
    if (!want) {
        check(0, "roundtrip allocation");
        return;
    }
    tputs(&b, "[");
    for (i = 0; i < count + nspecial; i++) {
        double x;
        if (i < nspecial) {
            x = special[i];
        } else {
            do {
                bits = lcg();
                /* mix raw bit patterns (all exponents) with "typical" values */
                if (i % 3 == 0)
                    bits = (bits & 0x800FFFFFFFFFFFFFULL) | ((unsigned long long)(1023 - 30 + (lcg() >> 58)) << 52);
                memcpy(&x, &bits, sizeof x);
            } while (x != x || x == HUGE_VAL || x == -HUGE_VAL);
        }
        want[i] = x;
        snprintf(s, sizeof s, "%s%.17g", i ? "," : "", x);
        tputs(&b, s);
    }
    tputs(&b, "]");
    doc = parse_ok(b.p, b.n);
    a = doc ? dpprof_json_root(doc) : NULL;
    if (!a || dpprof_json_len(a) != count + nspecial) {
        bad = 1;
    } else {
        for (i = 0; i < count + nspecial; i++)
            if (!num_is(dpprof_json_at(a, i), want[i])) {
                if (bad < 5)
                    printf("  mismatch at %lu: %.17g\n", (unsigned long)i, want[i]);
                bad++;
            }
    }
    check(bad == 0, "200k doubles written with %.17g round-trip exactly");
    dpprof_json_free(doc);
    free(want);
    free(b.p);
}

static void test_strings(void) {
    dpprof_json_doc *doc;
    const char *t;

    t = "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"";
    doc = parse_ok(t, strlen(t));
    check(doc && str_is(dpprof_json_root(doc), "\"\\/\b\f\n\r\t", 8), "simple escapes");
    dpprof_json_free(doc);
    t = "\"\\u0041\\u00e9\\u20AC\\uD83D\\uDE00\\uDBFF\\uDFFF\\u007f\"";
    doc = parse_ok(t, strlen(t));
    check(doc && str_is(dpprof_json_root(doc), "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\x7f", 15),
          "\\u escapes and surrogate pairs decode to utf-8");
    dpprof_json_free(doc);
    t = "\"a\\u0000b\"";
    doc = parse_ok(t, strlen(t));
    check(doc && str_is(dpprof_json_root(doc), "a\0b", 3), "\\u0000 kept, length 3");
    dpprof_json_free(doc);
    t = "\"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbf\xf4\x8f\xbf\xbf\"";
    doc = parse_ok(t, strlen(t));
    check(doc && str_is(dpprof_json_root(doc), t + 1, strlen(t) - 2), "raw utf-8 passes through");
    dpprof_json_free(doc);
    t = "[\"\", \"\"]";
    doc = parse_ok(t, strlen(t));
    check(doc && str_is(dpprof_json_at(dpprof_json_root(doc), 1), "", 0), "empty strings");
    dpprof_json_free(doc);

    expect_err("unterminated string", "\"abc", "line 1, column 5: unexpected end of input in string");
    expect_err("string ends in backslash", "\"a\\", "line 1, column 4: unexpected end of input in string");
    expect_err("invalid escape", "\"\\q\"", "line 1, column 2: invalid escape '\\q' in string");
    expect_errn("invalid escape of a control byte", "\"\\\x01\"", 4,
                "line 1, column 2: invalid escape: byte 0x01 after '\\' in string");
    expect_err("bad hex digit", "\"ab\\u12G4\"", "line 1, column 4: invalid \\u escape, expected 4 hex digits");
    expect_err("short \\u escape", "\"\\u12\"", "line 1, column 2: invalid \\u escape, expected 4 hex digits");
    expect_err("truncated \\u escape", "\"\\u12", "line 1, column 6: unexpected end of input in string");
    expect_err("lone high surrogate", "\"\\uD800\"", "line 1, column 2: lone surrogate \\uD800 in string");
    expect_err("lone low surrogate", "[\"\\udc00\"]", "line 1, column 3: lone surrogate \\uDC00 in string");
    expect_err("high surrogate then non-surrogate", "\"\\uD83D\\u0041\"",
               "line 1, column 2: lone surrogate \\uD83D in string");
    expect_err("high surrogate then text", "\"\\uD83Dx\"", "line 1, column 2: lone surrogate \\uD83D in string");
    expect_err("high surrogate then other escape", "\"\\uD83D\\n\"",
               "line 1, column 2: lone surrogate \\uD83D in string");
    expect_err("two high surrogates", "\"\\uD83D\\uD83D\"", "line 1, column 2: lone surrogate \\uD83D in string");
    expect_err("high surrogate at end of input", "\"x\\uD83D", "line 1, column 9: unexpected end of input in string");
    expect_err("bad hex in low surrogate", "\"\\uD83D\\uDE0\"",
               "line 1, column 8: invalid \\u escape, expected 4 hex digits");
    expect_err("raw newline in string", "[\"a\nb\"]", "line 1, column 4: unescaped control character 0x0A in string");
    expect_err("raw tab in string", "{\"k\":\"\t\"}", "line 1, column 7: unescaped control character 0x09 in string");
    expect_err("invalid utf-8 byte", "\"\xff\"", "line 1, column 2: invalid UTF-8 in string");
    expect_err("overlong utf-8", "\"ab\xc0\x80\"", "line 1, column 4: invalid UTF-8 in string");
    expect_err("overlong 3-byte utf-8", "\"\xe0\x80\xaf\"", "line 1, column 2: invalid UTF-8 in string");
    expect_err("utf-8 encoded surrogate", "\"\xed\xa0\x80\"", "line 1, column 2: invalid UTF-8 in string");
    expect_err("utf-8 above u+10ffff", "\"\xf4\x90\x80\x80\"", "line 1, column 2: invalid UTF-8 in string");
    expect_err("stray continuation byte", "\"a\x80\"", "line 1, column 3: invalid UTF-8 in string");
    expect_err("cut utf-8 sequence", "\"\xe2\x82\"", "line 1, column 2: invalid UTF-8 in string");
    expect_err("utf-8 sequence cut by end of input", "\"\xe2\x82", "line 1, column 3: unexpected end of input in string");
    expect_err("single quotes", "['a']", "line 1, column 2: single-quoted strings are not allowed");
}

static void test_structure(void) {
    dpprof_json_doc *doc;
    const char *t;
    const dpprof_json *r;

    t = "{\"a\":[],\"b\":{},\"c\":[[],{}],\"d\":[{\"e\":[[[1]]]}]}";
    doc = parse_ok(t, strlen(t));
    r = doc ? dpprof_json_root(doc) : NULL;
    check(r && dpprof_json_len(dpprof_json_get(r, "a")) == 0 && dpprof_json_len(dpprof_json_get(r, "b")) == 0 &&
              dpprof_json_kind(dpprof_json_get(r, "b")) == DPPROF_JSON_OBJECT &&
              dpprof_json_len(dpprof_json_get(r, "c")) == 2 && int_is(dpprof_json_path(r, "d.0.e.0.0.0"), 1),
          "empty and nested containers");
    dpprof_json_free(doc);

    expect_err("trailing comma in object", "{\"a\":1,}", "line 1, column 7: trailing comma before '}' is not allowed");
    expect_err("trailing comma in array", "[1,2,]", "line 1, column 5: trailing comma before ']' is not allowed");
    expect_err("trailing comma after newline", "[1,\n]", "line 1, column 3: trailing comma before ']' is not allowed");
    expect_err("leading comma", "[,1]", "line 1, column 2: unexpected character ',', expected a value");
    expect_err("missing comma in array", "[1 2]", "line 1, column 4: expected ',' or ']' after array element");
    expect_err("missing comma in object (line 3, column 17)",
               "{\n  \"name\": \"x\",\n  \"steps\": 1234 \"x\": 1\n}",
               "line 3, column 17: expected ',' or '}' after object member");
    expect_err("missing colon", "{\"a\" 1}", "line 1, column 6: expected ':' after object key");
    expect_err("non-string key", "{1:2}", "line 1, column 2: expected a string key or '}'");
    expect_err("non-string key after comma", "{\"a\":1,2}", "line 1, column 8: expected a string key after ','");
    expect_err("bare word key", "{a:1}", "line 1, column 2: expected a string key or '}'");
    expect_err("missing value", "{\"a\":}", "line 1, column 6: unexpected character '}', expected a value");
    expect_err("mismatched bracket", "[1}", "line 1, column 3: expected ',' or ']' after array element");
    expect_err("mismatched brace", "{\"a\":1]", "line 1, column 7: expected ',' or '}' after object member");
    expect_err("truncated object after brace", "{", "line 1, column 2: unexpected end of input, expected a string key or '}'");
    expect_err("truncated array after bracket", "[", "line 1, column 2: unexpected end of input, expected a value");
    expect_err("truncated array after element", "[1", "line 1, column 3: unexpected end of input, expected ',' or ']'");
    expect_err("truncated after comma", "[1,", "line 1, column 4: unexpected end of input, expected a value");
    expect_err("truncated object after member", "{\"a\":1", "line 1, column 7: unexpected end of input, expected ',' or '}'");
    expect_err("truncated object after comma", "{\"a\":1,", "line 1, column 8: unexpected end of input, expected a string key");
    expect_err("truncated object after key", "{\"a\"", "line 1, column 5: unexpected end of input, expected ':'");
    expect_err("truncated object after colon", "{\"a\": ", "line 1, column 7: unexpected end of input, expected a value");
    expect_err("truncated literal", "tru", "line 1, column 4: unexpected end of input in literal 'true'");
    expect_err("misspelled literal", "trux", "line 1, column 1: invalid literal, expected 'true'");
    expect_err("misspelled null in array", "[nul]", "line 1, column 2: invalid literal, expected 'null'");
    expect_err("capitalised literal", "True", "line 1, column 1: unexpected character 'T', expected a value");
    expect_err("literal with suffix", "[truex]", "line 1, column 6: expected ',' or ']' after array element");
    expect_err("trailing garbage", "{} x", "line 1, column 4: unexpected character 'x' after the JSON value");
    expect_err("two values", "1 2", "line 1, column 3: unexpected character '2' after the JSON value");
    expect_errn("trailing nul byte", "{}\0", 3, "line 1, column 3: unexpected byte 0x00 after the JSON value");
    expect_errn("nul byte as value", "[\0]", 3, "line 1, column 2: unexpected byte 0x00, expected a value");
    expect_err("binary byte as value", "\xff", "line 1, column 1: unexpected byte 0xFF, expected a value");
    expect_err("line comment", "[1, // c\n2]", "line 1, column 5: comments are not allowed");
    expect_err("block comment", "/* x */ {}", "line 1, column 1: comments are not allowed");
    expect_err("trailing comment", "{}\n// end", "line 2, column 1: unexpected character '/' after the JSON value");
    expect_err("utf-8 byte order mark", "\xef\xbb\xbf{}", "line 1, column 1: UTF-8 byte order mark is not allowed");
    expect_err("columns count characters, not bytes", "{\"\xc3\xa9\": x}",
               "line 1, column 7: unexpected character 'x', expected a value");
    expect_err("crlf line counting", "{\r\n\"a\":1,\r\n\"a\":2}", "line 3, column 1: duplicate key 'a'");
}

static void test_duplicates(void) {
    tbuf b;
    char s[64], want[128];
    size_t i, off;
    dpprof_json_doc *doc;
    const dpprof_json *r;
    const char *t;

    expect_err("duplicate key", "{\"a\":1,\"b\":2,\"a\":3}", "line 1, column 14: duplicate key 'a'");
    expect_err("duplicate key reports earliest repeat", "{\"a\":1,\"b\":2,\"b\":3,\"a\":4}",
               "line 1, column 14: duplicate key 'b'");
    expect_err("duplicate key in nested object", "[{\"x\":{\"k\":1,\"k\":2}}]", "line 1, column 14: duplicate key 'k'");
    expect_err("duplicate empty key", "{\"\":1,\"\":2}", "line 1, column 7: duplicate key ''");
    expect_err("duplicate key via escapes", "{\"\\u0041\":1,\"A\":2}", "line 1, column 13: duplicate key 'A'");
    expect_err("duplicate key shown escaped", "{\"\\n\":1,\"\\n\":2}", "line 1, column 9: duplicate key '\\x0A'");
    expect_err("long duplicate key is cut",
               "{\"0123456789012345678901234567890123456789012345\":1,"
               "\"0123456789012345678901234567890123456789012345\":2}",
               "line 1, column 53: duplicate key '0123456789012345678901234567890123456789...'");

    t = "{\"a\":1,\"a\\u0000\":2,\"a\\u0000b\":3}";
    doc = parse_ok(t, strlen(t));
    r = doc ? dpprof_json_root(doc) : NULL;
    check(r && dpprof_json_len(r) == 3 && int_is(dpprof_json_get(r, "a"), 1) && dpprof_json_key_len(r, 1) == 2 &&
              dpprof_json_key_len(r, 2) == 3,
          "keys differing after \\u0000 are distinct");
    dpprof_json_free(doc);

    /* large objects take the sorted path: 10000 distinct keys must pass */
    memset(&b, 0, sizeof b);
    tputs(&b, "{");
    for (i = 0; i < 10000; i++) {
        snprintf(s, sizeof s, "%s\"k%lu\":%lu", i ? "," : "", (unsigned long)((i * 7919) % 10000),
                 (unsigned long)i);
        tputs(&b, s);
    }
    tputs(&b, "}");
    doc = parse_ok(b.p, b.n);
    r = doc ? dpprof_json_root(doc) : NULL;
    check(r && dpprof_json_len(r) == 10000 && int_is(dpprof_json_get(r, "k7919"), 1) &&
              int_is(dpprof_json_get(r, "k0"), 0) && dpprof_json_get(r, "k10000") == NULL,
          "10000 distinct keys accepted");
    dpprof_json_free(doc);

    /* sorted path must still report the earliest repeat in file order:
       "z5" repeats at member 17, "a1" (sorted first) repeats later */
    b.n = 0;
    tputs(&b, "{\"a1\":0");
    for (i = 0; i < 16; i++) {
        snprintf(s, sizeof s, ",\"z%lu\":%lu", (unsigned long)i, (unsigned long)i);
        tputs(&b, s);
    }
    off = b.n + 1;
    tputs(&b, ",\"z5\":1,\"a1\":2,\"z5\":3}");
    snprintf(want, sizeof want, "line 1, column %lu: duplicate key 'z5'", (unsigned long)(off + 1));
    expect_err("large object: earliest repeat reported", b.p, want);

    b.n = 0;
    tputs(&b, "{\n");
    for (i = 0; i < 100; i++) {
        snprintf(s, sizeof s, "\"key%lu\": %lu,\n", (unsigned long)i, (unsigned long)i);
        tputs(&b, s);
    }
    tputs(&b, "\"key50\": 0\n}");
    expect_err("duplicate after 100 members", b.p, "line 102, column 1: duplicate key 'key50'");
    free(b.p);
}

static void test_depth(void) {
    tbuf b;
    size_t i;
    dpprof_json_doc *doc;
    const dpprof_json *v;
    int ok;
    memset(&b, 0, sizeof b);
    for (i = 0; i < 256; i++)
        tputs(&b, "[");
    for (i = 0; i < 256; i++)
        tputs(&b, "]");
    doc = parse_ok(b.p, b.n);
    v = doc ? dpprof_json_root(doc) : NULL;
    for (i = 0; v && i < 255; i++)
        v = dpprof_json_at(v, 0);
    ok = v && dpprof_json_kind(v) == DPPROF_JSON_ARRAY && dpprof_json_len(v) == 0;
    check(ok, "nesting of exactly 256 accepted");
    dpprof_json_free(doc);

    b.n = 0;
    for (i = 0; i < 257; i++)
        tputs(&b, "[");
    for (i = 0; i < 257; i++)
        tputs(&b, "]");
    expect_err("nesting of 257 rejected", b.p, "line 1, column 257: nesting deeper than 256 levels");

    b.n = 0;
    for (i = 0; i < 10000; i++)
        tputs(&b, "[");
    expect_err("10000 '[' rejected without crash", b.p, "line 1, column 257: nesting deeper than 256 levels");

    b.n = 0;
    for (i = 0; i < 10000; i++)
        tputs(&b, "{\"a\":");
    expect_err("10000 nested objects rejected", b.p, "line 1, column 1281: nesting deeper than 256 levels");
    free(b.p);
}

/* line and column of byte offset off, counted independently of the parser */
static void where(const char *s, size_t off, unsigned long *line, unsigned long *col) {
    size_t i;
    *line = 1;
    *col = 1;
    for (i = 0; i < off; i++) {
        if (s[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)s[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static void test_prefixes(void) {
    size_t n = strlen(g_result_doc), k, bad = 0, badpos = 0;
    dpprof_json_doc *doc;
    char err[256], want[64];
    unsigned long line, col;
    int rc;
    /* the document without its final newline is still valid; every shorter
       prefix is cut inside the object and must fail at its very end */
    for (k = 0; k + 1 < n; k++) {
        doc = SENTINEL;
        rc = dpprof_json_parse(g_result_doc, k, &doc);
        snprintf(err, sizeof err, "%s", json_msg(rc));
        if (rc != DPPROF_JSON_ESYNTAX || doc != NULL) {
            if (bad++ < 3)
                printf("  prefix %lu: rc=%d\n", (unsigned long)k, rc);
            if (rc == 0)
                dpprof_json_free(doc);
            continue;
        }
        where(g_result_doc, k, &line, &col);
        snprintf(want, sizeof want, "line %lu, column %lu: ", line, col);
        if (strncmp(err, want, strlen(want)) != 0) {
            if (badpos++ < 3)
                printf("  prefix %lu: \"%s\", want position \"%s\"\n", (unsigned long)k, err, want);
        }
    }
    check(bad == 0, "every proper prefix of a document fails cleanly");
    check(badpos == 0, "every truncation is reported at the end of input");
    doc = parse_ok(g_result_doc, n - 1);
    check(doc != NULL, "document without trailing newline parses");
    dpprof_json_free(doc);
    expect_errn("prefix cut in key", g_result_doc, 6, "line 2, column 5: unexpected end of input in string");
    expect_errn("prefix cut after key", g_result_doc, 10, "line 2, column 9: unexpected end of input, expected ':'");
    expect_errn("prefix cut in \\u escape", g_result_doc, 148, "line 5, column 29: unexpected end of input in string");
    expect_errn("prefix cut between surrogates", g_result_doc, 158, "line 5, column 39: unexpected end of input in string");
    expect_errn("prefix cut in low surrogate", g_result_doc, 160, "line 5, column 41: unexpected end of input in string");
    expect_errn("prefix cut in number", g_result_doc, 60, "line 4, column 23: invalid number: expected digit after '.'");
}

static void test_garbage(void) {
    static const char alpha[] = "{}[],:\"\\ntrufalsenul0123456789-+.eE u\xc3\xa9\xff\x00";
    unsigned char in[300];
    size_t i, k, len, okc = 0, bad = 0;
    dpprof_json_doc *doc;
    char err[256];
    int rc;
    for (i = 0; i < 10000; i++) {
        len = (size_t)(lcg() >> 40) % 300;
        for (k = 0; k < len; k++) {
            unsigned long long r = lcg();
            /* half pure random bytes, half json-ish alphabet to get deeper */
            in[k] = (i & 1) ? (unsigned char)(r >> 56) : (unsigned char)alpha[(r >> 33) % (sizeof alpha - 1)];
        }
        doc = SENTINEL;
        rc = dpprof_json_parse((const char *)in, len, &doc);
        snprintf(err, sizeof err, "%s", json_msg(rc));
        if (rc == 0) {
            okc++;
            if (!doc)
                bad++;
            dpprof_json_free(doc);
        } else if (rc != DPPROF_JSON_ESYNTAX || doc != NULL || strncmp(err, "line ", 5) != 0) {
            bad++;
        }
    }
    printf("  (garbage: %lu of 10000 inputs happened to be valid)\n", (unsigned long)okc);
    check(bad == 0, "10000 random inputs handled without crash");
}

static void test_errbuf(void) {
    dpprof_json_doc *doc = NULL;
    dpprof_fail(DPPROF_ERR_IO, "an earlier failure");
    check(dpprof_json_parse("[1,]", 4, &doc) == DPPROF_JSON_ESYNTAX && doc == NULL &&
              strcmp(dpprof_last_error(), "line 1, column 3: trailing comma before ']' is not allowed") == 0,
          "a syntax error is dpprof_last_error(), as every failure of dpprof");
    check(dpprof_json_parse("[1]", 3, &doc) == 0 && doc, "a success parses");
    dpprof_json_free(doc);
}

static void test_files(void) {
    const char *path = "test_json_tmp.json";
    const char *missing = "no_such_dir_dpprof/none.json";
    FILE *f;
    dpprof_json_doc *doc = NULL;
    char err[512], want[512];
    int rc;

    f = fopen(path, "wb");
    if (!f) {
        check(0, "can write a temporary file");
        return;
    }
    fputs("{\"a\": [1, 2, 3]}\n", f);
    fclose(f);
    rc = dpprof_json_parse_file(path, (size_t)1 << 30, &doc);
    snprintf(err, sizeof err, "%s", json_msg(rc));
    check(rc == 0 && doc && int_is(dpprof_json_path(dpprof_json_root(doc), "a.2"), 3),
          "parse_file reads a file");
    dpprof_json_free(doc);
    rc = dpprof_json_parse_file(path, 17, &doc);
    snprintf(err, sizeof err, "%s", json_msg(rc));
    check(rc == 0 && doc, "parse_file accepts a file of exactly max_bytes");
    dpprof_json_free(doc);
    rc = dpprof_json_parse_file(path, 16, &doc);
    snprintf(err, sizeof err, "%s", json_msg(rc));
    snprintf(want, sizeof want, "%s: file too large (limit 16 bytes)", path);
    check(rc == DPPROF_JSON_ETOOBIG && doc == NULL && strcmp(err, want) == 0, "parse_file enforces max_bytes");
    rc = dpprof_json_parse_file(missing, 100, &doc);
    snprintf(err, sizeof err, "%s", json_msg(rc));
    snprintf(want, sizeof want, "%s: cannot open: %s", missing, strerror(ENOENT));
    check(rc == DPPROF_JSON_EIO && doc == NULL && strcmp(err, want) == 0, "parse_file names a missing file");
    if (rc != DPPROF_JSON_EIO || strcmp(err, want) != 0)
        printf("  got \"%s\"\n", err);

    f = fopen(path, "wb");
    if (f) {
        fputs("{\n  \"a\": [1, 2,]\n}\n", f);
        fclose(f);
    }
    rc = dpprof_json_parse_file(path, 1000, &doc);
    snprintf(err, sizeof err, "%s", json_msg(rc));
    snprintf(want, sizeof want, "%s: line 2, column 13: trailing comma before ']' is not allowed", path);
    check(rc == DPPROF_JSON_ESYNTAX && doc == NULL && strcmp(err, want) == 0, "parse_file error names file and place");
    if (strcmp(err, want) != 0)
        printf("  got \"%s\"\n", err);

    f = fopen(path, "wb");
    if (f)
        fclose(f);
    rc = dpprof_json_parse_file(path, 1000, &doc);
    snprintf(err, sizeof err, "%s", json_msg(rc));
    snprintf(want, sizeof want, "%s: line 1, column 1: empty input", path);
    check(rc == DPPROF_JSON_ESYNTAX && strcmp(err, want) == 0, "parse_file on an empty file");
    rc = dpprof_json_parse_file(".", 1000, &doc);
    snprintf(err, sizeof err, "%s", json_msg(rc));
    check(rc == DPPROF_JSON_EIO && doc == NULL && strncmp(err, ".: ", 3) == 0, "parse_file on a directory fails");
    printf("  (directory: \"%s\")\n", err);
    check(dpprof_json_parse_file(NULL, 10, &doc) == DPPROF_JSON_EINVAL && strstr(dpprof_last_error(), "NULL path"), "parse_file NULL path");
    remove(path);
}

/* arena blocks: nested arrays and strings of every size up to past the
   private-block threshold (a fuzzer-found overflow lived at 4096 < size < 16384) */
static void test_arena_sizes(void) {
    tbuf b;
    size_t k, i, bad = 0;
    dpprof_json_doc *doc;
    const dpprof_json *v;
    memset(&b, 0, sizeof b);
    for (k = 1; k <= 1300; k++) {
        b.n = 0;
        tputs(&b, "[\"x\",[");
        for (i = 0; i < k; i++)
            tputs(&b, i ? ",7" : "7");
        tputs(&b, "],\"");
        for (i = 0; i < k * 16; i++)
            tputs(&b, (i % 7) ? "a" : "\\n");
        tputs(&b, "\"]");
        doc = parse_ok(b.p, b.n);
        v = doc ? dpprof_json_at(dpprof_json_root(doc), 1) : NULL;
        if (!v || dpprof_json_len(v) != k || !int_is(dpprof_json_at(v, k - 1), 7) ||
            dpprof_json_string_len(dpprof_json_at(dpprof_json_root(doc), 2)) != k * 16)
            bad++;
        dpprof_json_free(doc);
    }
    check(bad == 0, "containers and strings of every size across arena block limits");
    free(b.p);
}

static void test_big(void) {
    tbuf b;
    size_t i, n = 1000000;
    char s[48];
    dpprof_json_doc *doc;
    const dpprof_json *r;
    unsigned char *big;
    memset(&b, 0, sizeof b);
    tputs(&b, "{\"samples\":[");
    for (i = 0; i < n; i++) {
        snprintf(s, sizeof s, "%s%lu.5", i ? "," : "", (unsigned long)i);
        tputs(&b, s);
    }
    tputs(&b, "]}");
    doc = parse_ok(b.p, b.n);
    r = doc ? dpprof_json_get(dpprof_json_root(doc), "samples") : NULL;
    check(r && dpprof_json_len(r) == n && num_is(dpprof_json_at(r, n - 1), (double)(n - 1) + 0.5),
          "array of 1M numbers inside an object");
    dpprof_json_free(doc);
    free(b.p);

    /* a 1 MB string made of escapes shrinks while decoding */
    big = (unsigned char *)malloc(6 * 200000 + 3);
    if (big) {
        big[0] = '"';
        for (i = 0; i < 200000; i++)
            memcpy(big + 1 + 6 * i, "\\u00e9", 6);
        big[1 + 6 * 200000] = '"';
        doc = parse_ok((const char *)big, 6 * 200000 + 2);
        r = doc ? dpprof_json_root(doc) : NULL;
        check(r && dpprof_json_string_len(r) == 400000 && memcmp(dpprof_json_string(r) + 399998, "\xc3\xa9", 3) == 0,
              "1.2 MB escaped string decodes");
        dpprof_json_free(doc);
        /* a 20000-digit number goes through the long strtod path */
        memset(big, '1', 20000);
        big[1] = '.';
        doc = parse_ok((const char *)big, 20000);
        check(doc && num_is(dpprof_json_root(doc), 1.1111111111111112), "20000-digit number");
        dpprof_json_free(doc);
        free(big);
    }
}

/* ------------------------------------------------------------------ */

static double now(void) {
    return (double)clock() / CLOCKS_PER_SEC;
}

static void bench_one(const char *name, tbuf *b, double limit_s) {
    dpprof_json_doc *doc = NULL;
    char err[256];
    double t0 = now(), dt;
    int rc = dpprof_json_parse(b->p, b->n, &doc);
    snprintf(err, sizeof err, "%s", json_msg(rc));
    dt = now() - t0;
    printf("  %s: %.1f MB in %.2f s (%.0f MB/s)%s%s\n", name, (double)b->n / 1e6, dt, (double)b->n / 1e6 / dt,
           rc ? " error: " : "", rc ? err : "");
    check(rc == 0 && dt < limit_s, name);
    dpprof_json_free(doc);
}

static int bench(void) {
    tbuf b;
    char s[64];
    size_t i;
    memset(&b, 0, sizeof b);
    tputs(&b, "{\"samples\":[");
    for (i = 0; b.n < 100000000; i++) {
        double x;
        unsigned long long bits = lcg();
        bits = (bits & 0x800FFFFFFFFFFFFFULL) | ((unsigned long long)(1023 - 20 + (lcg() >> 59)) << 52);
        memcpy(&x, &bits, sizeof x);
        snprintf(s, sizeof s, "%s%.17g", i ? "," : "", x);
        tputs(&b, s);
    }
    tputs(&b, "]}");
    bench_one("bench: 100 MB of %.17g doubles", &b, 10.0);
    b.n = 0;
    tputs(&b, "[");
    for (i = 0; b.n < 100000000; i++)
        tputs(&b, i ? ",1" : "1");
    tputs(&b, "]");
    bench_one("bench: 100 MB of single-digit integers (50 M nodes)", &b, 10.0);
    b.n = 0;
    tputs(&b, "[");
    for (i = 0; b.n < 100000000; i++) {
        snprintf(s, sizeof s, "%s{\"step\":%lu,\"loss\":0.%lu,\"name\":\"run\\u00e9\"}", i ? "," : "",
                 (unsigned long)i, (unsigned long)(i * 7919 % 100000));
        tputs(&b, s);
    }
    tputs(&b, "]");
    bench_one("bench: 100 MB of small objects", &b, 10.0);
    b.n = 0;
    tputs(&b, "{");
    for (i = 0; b.n < 50000000; i++) {
        snprintf(s, sizeof s, "%s\"k%lu\":%lu", i ? "," : "", (unsigned long)(i * 2654435761u % 4294967291u),
                 (unsigned long)i);
        tputs(&b, s);
    }
    tputs(&b, "}");
    bench_one("bench: 50 MB object with millions of keys (duplicate check)", &b, 10.0);
    b.n = 0;
    tputs(&b, "\"");
    for (i = 0; b.n < 50000000; i++)
        tputs(&b, "1");
    b.p[0] = '1';
    b.p[1] = '.';
    bench_one("bench: 50 MB number token", &b, 10.0);
    free(b.p);
    printf("%s: %d passed\n", g_fail ? "FAILED" : "ok", g_pass);
    return g_fail;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--bench") == 0)
        return bench();
    test_empty();
    test_scalars();
    test_result_doc();
    test_numbers();
    test_roundtrip();
    test_strings();
    test_structure();
    test_duplicates();
    test_depth();
    test_prefixes();
    test_garbage();
    test_errbuf();
    test_files();
    test_arena_sizes();
    test_big();
    printf("%s: %d passed\n", g_fail ? "FAILED" : "ok", g_pass);
    return g_fail ? 1 : 0;
}
