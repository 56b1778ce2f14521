/* tests/schema_check.c - checks JSON files against a JSON Schema, with the keywords docs/result.schema.json
   uses (draft 2020-12): type, const, enum, required, properties, additionalProperties, items, minItems,
   minLength, minimum, allOf, if/then/else. a keyword it does not know is an error, so a schema cannot lean on
   one unchecked. prints one line per file (PASS or FAIL with every violation's path); exit 1 if any failed.
   usage: schema_check SCHEMA.json FILE.json... (tests/test_schema.sh) */
/* the implementation: build/impl-san.o (tests/impl.c; Makefile) */
#include "dpprof.h"
#include "dpprof_tools.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include <string.h>

#define MAX_SIZE (1u << 30)

static int errors, quiet;
static char first[1100];

static void bad(const char *path, const char *fmt, const char *a) {
    char msg[512];
    errors++;
    if (quiet) return;
    snprintf(msg, sizeof msg, fmt, a);
    if (errors == 1) snprintf(first, sizeof first, "%s: %s", *path ? path : "(root)", msg);
    fprintf(stderr, "  %s: %s\n", *path ? path : "(root)", msg);
}

static const char *kind_name(const dpprof_json *v) {
    double d;
    switch (dpprof_json_kind(v)) {
    case DPPROF_JSON_NULL: return "null";
    case DPPROF_JSON_FALSE:
    case DPPROF_JSON_TRUE: return "boolean";
    case DPPROF_JSON_NUMBER: return dpprof_json_number(v, &d) == 0 && d == (double)(long long)d ? "integer" : "number";
    case DPPROF_JSON_STRING: return "string";
    case DPPROF_JSON_ARRAY: return "array";
    default: return "object";
    }
}

static int has_type(const dpprof_json *v, const char *t) {
    const char *k = kind_name(v);
    return !strcmp(k, t) || (!strcmp(t, "number") && !strcmp(k, "integer"));
}

/* equal json values (scalars; arrays and objects are never compared here) */
static int same(const dpprof_json *a, const dpprof_json *b) {
    double x, y;
    if (dpprof_json_kind(a) != dpprof_json_kind(b)) return 0;
    switch (dpprof_json_kind(a)) {
    case DPPROF_JSON_NUMBER: return dpprof_json_number(a, &x) == 0 && dpprof_json_number(b, &y) == 0 && x == y;
    case DPPROF_JSON_STRING: return dpprof_json_string_len(a) == dpprof_json_string_len(b) && !memcmp(dpprof_json_string(a), dpprof_json_string(b), dpprof_json_string_len(a));
    case DPPROF_JSON_ARRAY:
    case DPPROF_JSON_OBJECT: return 0;
    default: return 1;
    }
}

static void check(const dpprof_json *s, const dpprof_json *v, const char *path);

/* does v satisfy s? (the if of if/then/else: its violations are not reported) */
static int satisfies(const dpprof_json *s, const dpprof_json *v) {
    int before = errors, was = quiet, ok;
    quiet = 1;
    check(s, v, "");
    quiet = was;
    ok = errors == before;
    errors = before;
    return ok;
}

static void check(const dpprof_json *s, const dpprof_json *v, const char *path) {
    size_t i, j, n = dpprof_json_len(s);
    char sub[512];
    if (dpprof_json_kind(s) == DPPROF_JSON_TRUE) return;
    if (dpprof_json_kind(s) != DPPROF_JSON_OBJECT) {
        bad(path, "the schema here is not an object%s", "");
        return;
    }
    for (i = 0; i < n; i++) {
        const char *k = dpprof_json_key(s, i);
        const dpprof_json *a = dpprof_json_member(s, i);
        if (!strcmp(k, "$schema") || !strcmp(k, "$id") || !strcmp(k, "title") || !strcmp(k, "description") || !strcmp(k, "then") || !strcmp(k, "else")) continue;
        if (!strcmp(k, "type")) {
            int ok = 0;
            if (dpprof_json_kind(a) == DPPROF_JSON_STRING) ok = has_type(v, dpprof_json_string(a));
            else
                for (j = 0; j < dpprof_json_len(a); j++) ok |= has_type(v, dpprof_json_string(dpprof_json_at(a, j)));
            if (!ok) bad(path, "a value of type %s where the schema wants another", kind_name(v));
        } else if (!strcmp(k, "const")) {
            if (!same(a, v)) bad(path, "not the constant the schema names%s", "");
        } else if (!strcmp(k, "enum")) {
            int ok = 0;
            for (j = 0; j < dpprof_json_len(a); j++) ok |= same(dpprof_json_at(a, j), v);
            if (!ok) bad(path, "'%s' is none of the values the schema allows", dpprof_json_kind(v) == DPPROF_JSON_STRING ? dpprof_json_string(v) : kind_name(v));
        } else if (!strcmp(k, "required")) {
            if (dpprof_json_kind(v) != DPPROF_JSON_OBJECT) continue;
            for (j = 0; j < dpprof_json_len(a); j++)
                if (!dpprof_json_get(v, dpprof_json_string(dpprof_json_at(a, j)))) bad(path, "the key '%s' is missing", dpprof_json_string(dpprof_json_at(a, j)));
        } else if (!strcmp(k, "properties")) {
            for (j = 0; j < dpprof_json_len(a) && dpprof_json_kind(v) == DPPROF_JSON_OBJECT; j++) {
                const dpprof_json *m = dpprof_json_get(v, dpprof_json_key(a, j));
                if (!m) continue;
                snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", dpprof_json_key(a, j));
                check(dpprof_json_member(a, j), m, sub);
            }
        } else if (!strcmp(k, "additionalProperties")) {
            const dpprof_json *props = dpprof_json_get(s, "properties");
            for (j = 0; j < dpprof_json_len(v) && dpprof_json_kind(v) == DPPROF_JSON_OBJECT; j++) {
                const char *key = dpprof_json_key(v, j);
                if (dpprof_json_get(props, key)) continue;
                snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
                if (dpprof_json_kind(a) == DPPROF_JSON_FALSE) bad(sub, "a key the schema does not allow%s", "");
                else check(a, dpprof_json_member(v, j), sub);
            }
        } else if (!strcmp(k, "items")) {
            for (j = 0; j < dpprof_json_len(v) && dpprof_json_kind(v) == DPPROF_JSON_ARRAY; j++) {
                snprintf(sub, sizeof sub, "%s[%zu]", path, j);
                check(a, dpprof_json_at(v, j), sub);
            }
        } else if (!strcmp(k, "minItems") || !strcmp(k, "minLength") || !strcmp(k, "minimum")) {
            double lim = 0, x = 0;
            dpprof_json_number(a, &lim);
            if (!strcmp(k, "minItems") && dpprof_json_kind(v) == DPPROF_JSON_ARRAY && (double)dpprof_json_len(v) < lim) bad(path, "fewer items than minItems%s", "");
            if (!strcmp(k, "minLength") && dpprof_json_kind(v) == DPPROF_JSON_STRING && (double)dpprof_json_string_len(v) < lim) bad(path, "a string shorter than minLength%s", "");
            if (!strcmp(k, "minimum") && dpprof_json_number(v, &x) == 0 && x < lim) bad(path, "a number below the minimum%s", "");
        } else if (!strcmp(k, "allOf")) {
            for (j = 0; j < dpprof_json_len(a); j++) check(dpprof_json_at(a, j), v, path);
        } else if (!strcmp(k, "if")) {
            const dpprof_json *t = dpprof_json_get(s, satisfies(a, v) ? "then" : "else");
            if (t) check(t, v, path);
        } else bad(path, "the schema uses '%s', a keyword this checker does not know", k);
    }
}

int main(int argc, char **argv) {
    dpprof_json_doc *sd = NULL, *d = NULL;
    int i, failed = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: schema_check SCHEMA.json FILE.json...\n");
        return 2;
    }
    if (dpprof_json_parse_file(argv[1], MAX_SIZE, &sd) != 0) {
        fprintf(stderr, "schema_check: %s\n", dpprof_last_error());
        return 2;
    }
    for (i = 2; i < argc; i++) {
        errors = 0;
        first[0] = 0;
        if (dpprof_json_parse_file(argv[i], MAX_SIZE, &d) != 0) {
            printf("FAIL %s: %s\n", argv[i], dpprof_last_error());
            failed = 1;
            continue;
        }
        check(dpprof_json_root(sd), dpprof_json_root(d), "");
        if (errors) printf("FAIL %s: %d violations, the first: %s\n", argv[i], errors, first), failed = 1;
        else printf("PASS %s\n", argv[i]);
        dpprof_json_free(d);
    }
    dpprof_json_free(sd);
    return failed;
}
