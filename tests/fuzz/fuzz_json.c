/* tests/fuzz/fuzz_json.c - libFuzzer harness for the json reader (make fuzz).
 * oracle: every input either fails with a well-formed message and no
 * document, or parses into a tree that (a) only holds valid utf-8 strings,
 * (b) answers every getter consistently, and (c) written back out as json
 * parses again into an equal tree. aborting is fine here: this is the test
 * harness, not library code. */
#define DPPROF_IMPLEMENTATION
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"

#define FUZZ_ASSERT(c)                                                               \
    do {                                                                             \
        if (!(c)) {                                                                  \
            fprintf(stderr, "fuzz_json.c:%d: invariant failed: %s\n", __LINE__, #c); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

typedef struct obuf {
    char *p;
    size_t n, cap;
} obuf;

static void oput(obuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        b->p = (char *)realloc(b->p, cap);
        FUZZ_ASSERT(b->p != NULL);
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

/* independent utf-8 check by decoding: rejects overlong forms, surrogates
   and values above u+10ffff */
static int valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0, k, len;
    unsigned long cp, min;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        if ((s[i] & 0xE0) == 0xC0) {
            len = 2;
            cp = s[i] & 0x1Fu;
            min = 0x80;
        } else if ((s[i] & 0xF0) == 0xE0) {
            len = 3;
            cp = s[i] & 0x0Fu;
            min = 0x800;
        } else if ((s[i] & 0xF8) == 0xF0) {
            len = 4;
            cp = s[i] & 0x07u;
            min = 0x10000;
        } else {
            return 0;
        }
        if (n - i < len)
            return 0;
        for (k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

static void emit_string(obuf *b, const char *s, size_t n) {
    size_t i;
    char e[8];
    oput(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            e[0] = '\\';
            e[1] = (char)c;
            oput(b, e, 2);
        } else if (c < 0x20) {
            snprintf(e, sizeof e, "\\u%04x", (unsigned)c);
            oput(b, e, 6);
        } else {
            oput(b, (const char *)&c, 1);
        }
    }
    oput(b, "\"", 1);
}

/* walk the tree checking invariants and write it back out; recursion is
   bounded by DPPROF_JSON_MAX_DEPTH */
static void walk(obuf *b, const dpprof_json *v, int depth) {
    size_t i, n, kl;
    double x, y;
    long long ll;
    char s[64];
    const char *str, *key;
    FUZZ_ASSERT(v != NULL && depth <= DPPROF_JSON_MAX_DEPTH + 1);
    switch (dpprof_json_kind(v)) {
    case DPPROF_JSON_NULL:
        oput(b, "null", 4);
        break;
    case DPPROF_JSON_TRUE:
        oput(b, "true", 4);
        break;
    case DPPROF_JSON_FALSE:
        oput(b, "false", 5);
        break;
    case DPPROF_JSON_NUMBER:
        FUZZ_ASSERT(dpprof_json_number(v, &x) == 0);
        FUZZ_ASSERT(x == x && x != HUGE_VAL && x != -HUGE_VAL);
        FUZZ_ASSERT(dpprof_json_string(v) == NULL && dpprof_json_len(v) == 0);
        if (dpprof_json_int64(v, &ll) == 0) {
            y = (double)ll;
            FUZZ_ASSERT(y == x);
        }
        if (x == 0.0 && copysign(1.0, x) < 0.0)
            snprintf(s, sizeof s, "-0");
        else if (dpprof_json_int64(v, &ll) == 0)
            snprintf(s, sizeof s, "%lld", ll);
        else {
            /* keep a non-integer literal non-integer: "9007199254740994" would
               read back as an exact int64, "9007199254740994.0" does not */
            snprintf(s, sizeof s, "%.17g", x);
            if (!strpbrk(s, ".e"))
                strcat(s, ".0");
        }
        oput(b, s, strlen(s));
        break;
    case DPPROF_JSON_STRING:
        str = dpprof_json_string(v);
        n = dpprof_json_string_len(v);
        FUZZ_ASSERT(str != NULL && str[n] == '\0' && valid_utf8((const unsigned char *)str, n));
        FUZZ_ASSERT(dpprof_json_number(v, &x) == DPPROF_JSON_ETYPE);
        emit_string(b, str, n);
        break;
    case DPPROF_JSON_ARRAY:
        n = dpprof_json_len(v);
        FUZZ_ASSERT(dpprof_json_at(v, n) == NULL && dpprof_json_key(v, 0) == NULL && dpprof_json_get(v, "") == NULL);
        oput(b, "[", 1);
        for (i = 0; i < n; i++) {
            if (i)
                oput(b, ",", 1);
            walk(b, dpprof_json_at(v, i), depth + 1);
        }
        oput(b, "]", 1);
        break;
    case DPPROF_JSON_OBJECT:
        n = dpprof_json_len(v);
        FUZZ_ASSERT(dpprof_json_key(v, n) == NULL && dpprof_json_member(v, n) == NULL && dpprof_json_at(v, 0) == NULL);
        oput(b, "{", 1);
        for (i = 0; i < n; i++) {
            key = dpprof_json_key(v, i);
            kl = dpprof_json_key_len(v, i);
            FUZZ_ASSERT(key != NULL && key[kl] == '\0' && valid_utf8((const unsigned char *)key, kl));
            /* keys are unique, so lookup by a nul-free key finds this member */
            if (strlen(key) == kl)
                FUZZ_ASSERT(dpprof_json_get(v, key) == dpprof_json_member(v, i));
            if (i)
                oput(b, ",", 1);
            emit_string(b, key, kl);
            oput(b, ":", 1);
            walk(b, dpprof_json_member(v, i), depth + 1);
        }
        oput(b, "}", 1);
        break;
    default:
        FUZZ_ASSERT(0);
    }
}

static int same(const dpprof_json *a, const dpprof_json *b) {
    size_t i, n;
    double x, y;
    long long p, q;
    int ra, rb;
    if (dpprof_json_kind(a) != dpprof_json_kind(b))
        return 0;
    switch (dpprof_json_kind(a)) {
    case DPPROF_JSON_NUMBER:
        dpprof_json_number(a, &x);
        dpprof_json_number(b, &y);
        ra = dpprof_json_int64(a, &p);
        rb = dpprof_json_int64(b, &q);
        return memcmp(&x, &y, sizeof x) == 0 && ra == rb && (ra != 0 || p == q);
    case DPPROF_JSON_STRING:
        n = dpprof_json_string_len(a);
        return n == dpprof_json_string_len(b) && memcmp(dpprof_json_string(a), dpprof_json_string(b), n) == 0;
    case DPPROF_JSON_ARRAY:
        n = dpprof_json_len(a);
        if (n != dpprof_json_len(b))
            return 0;
        for (i = 0; i < n; i++)
            if (!same(dpprof_json_at(a, i), dpprof_json_at(b, i)))
                return 0;
        return 1;
    case DPPROF_JSON_OBJECT:
        n = dpprof_json_len(a);
        if (n != dpprof_json_len(b))
            return 0;
        for (i = 0; i < n; i++) {
            size_t kl = dpprof_json_key_len(a, i);
            if (kl != dpprof_json_key_len(b, i) || memcmp(dpprof_json_key(a, i), dpprof_json_key(b, i), kl) != 0 ||
                !same(dpprof_json_member(a, i), dpprof_json_member(b, i)))
                return 0;
        }
        return 1;
    default:
        return 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    dpprof_json_doc *doc = NULL, *doc2 = NULL;
    char err[256];
    obuf b;
    int rc, rc2;

    rc = dpprof_json_parse((const char *)data, size, &doc);
    if (rc != 0) {
        const char *msg = dpprof_last_error();
        FUZZ_ASSERT(rc == DPPROF_JSON_ESYNTAX && doc == NULL);
        FUZZ_ASSERT(strncmp(msg, "line ", 5) == 0 && strstr(msg, ", column ") != NULL && strlen(msg) < sizeof err);
        /* the same input, the same message */
        snprintf(err, sizeof err, "%s", msg);
        rc2 = dpprof_json_parse((const char *)data, size, &doc2);
        FUZZ_ASSERT(rc2 == rc && doc2 == NULL && !strcmp(dpprof_last_error(), err));
        return 0;
    }
    FUZZ_ASSERT(doc != NULL);
    memset(&b, 0, sizeof b);
    walk(&b, dpprof_json_root(doc), 0);
    /* the writer's output is json, so it must parse into the same tree */
    rc2 = dpprof_json_parse(b.p, b.n, &doc2);
    if (rc2 != 0)
        fprintf(stderr, "re-parse failed: %s\n", dpprof_last_error());
    FUZZ_ASSERT(rc2 == 0);
    FUZZ_ASSERT(same(dpprof_json_root(doc), dpprof_json_root(doc2)));
    FUZZ_ASSERT(dpprof_json_path(dpprof_json_root(doc), "") == dpprof_json_root(doc));
    dpprof_json_path(dpprof_json_root(doc), "a.0.b");
    dpprof_json_path(dpprof_json_root(doc), "0.0");
    dpprof_json_free(doc2);
    dpprof_json_free(doc);
    free(b.p);
    return 0;
}
