/* tests/test_profonly.c - the profiler as a user's program embeds it: DPPROF_IMPLEMENTATION and nothing else,
   linked with no library at all (make builds it without -lm), with a vocabulary of the program's own (a
   category, a module and a phase added through DPPROF_USER_*), and its own JSON and trace writers. run by
   make test. */
#define DPPROF_USER_CATEGORIES(X) X(KV_CACHE, "kv_cache")
#define DPPROF_USER_MODULES(X) X(SAMPLER, "sampler")
#define DPPROF_USER_PHASES(X) X(PREFILL, "prefill") X(DECODE, "decode")
#define DPPROF_IMPLEMENTATION
#include "dpprof.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* what a writer wrote to a temporary file, nul-terminated (freed by the caller) */
static char *written(int (*write)(const dpprof_prof *, FILE *), const dpprof_prof *p, int *rc) {
    FILE *f = tmpfile();
    char *buf;
    long n;
    if (!f) return NULL;
    *rc = write(p, f);
    n = ftell(f);
    rewind(f);
    buf = (char *)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

int main(void) {
    dpprof_prof p;
    void *kv, *w, *tmp;
    char *json, *trace;
    int rc = -1;
    FILE *full;

    CHECK(DPPROF_CAT_KV_CACHE == DPPROF_CAT_DATA + 1 && DPPROF_CAT_COUNT == DPPROF_CAT_KV_CACHE + 1, "a user category comes after the built-in ones (%d of %d)", DPPROF_CAT_KV_CACHE, DPPROF_CAT_COUNT);
    CHECK(DPPROF_MOD_SAMPLER == DPPROF_MOD_COUNT - 1 && DPPROF_PHASE_DECODE == DPPROF_PHASE_COUNT - 1, "a user module and two user phases after the built-in ones");
    CHECK(!strcmp(dpprof_category_name(DPPROF_CAT_KV_CACHE), "kv_cache") && !strcmp(dpprof_module_name(DPPROF_MOD_SAMPLER), "sampler") &&
              !strcmp(dpprof_phase_name(DPPROF_PHASE_DECODE), "decode") && !strcmp(dpprof_category_name(DPPROF_CAT_COUNT), "?"),
          "the names of the user's vocabulary, and '?' past it");

    dpprof_prof_init(&p, 0);
    dpprof_phase_begin(&p, DPPROF_PHASE_MODEL_LOADED, 0);
    w = dpprof_malloc(&p, 1000, DPPROF_CAT_MODEL_PARAMETERS, DPPROF_MOD_ATTENTION);
    dpprof_phase_begin(&p, DPPROF_PHASE_PREFILL, 0);
    kv = dpprof_malloc(&p, 4096, DPPROF_CAT_KV_CACHE, DPPROF_MOD_ATTENTION);
    tmp = dpprof_malloc(&p, 300, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_SAMPLER);
    dpprof_free(&p, tmp);
    dpprof_phase_begin(&p, DPPROF_PHASE_DECODE, 1);
    dpprof_free(&p, kv);
    dpprof_phase_end(&p);
    CHECK(p.peak_bytes == 5396 && p.peak_by_cat[DPPROF_CAT_KV_CACHE] == 4096 && p.peak_by_mod[DPPROF_MOD_SAMPLER] == 300 && p.peak_phase == DPPROF_PHASE_PREFILL,
          "the peak (%lld) holds the user's category and module, in the user's phase", (long long)p.peak_bytes);
    CHECK(dpprof_live(&p, DPPROF_CAT_KV_CACHE, -1) == 0 && p.max_by_cat[DPPROF_CAT_KV_CACHE] == 4096, "the user's category: freed, its high-water mark kept");

    json = written(dpprof_prof_write_json, &p, &rc);
    CHECK(rc == DPPROF_OK && json && !strncmp(json, "{\"schema_version\": 1, \"peak_bytes\": 5396, \"peak_phase\": \"prefill\", \"peak_step\": 0,", 82),
          "write_json: the peak first (%.90s)", json ? json : "");
    CHECK(json && strstr(json, "\"kv_cache\": 4096") && strstr(json, "\"sampler\": 300") && strstr(json, "\"temp_matrices\": 300"), "write_json: the peak by category and module, the user's among them");
    CHECK(json && strstr(json, "{\"name\": \"prefill\", \"step\": 0, \"bytes_start\": 1000, \"bytes_end\": 5096, \"bytes_peak\": 5396,") &&
              strstr(json, "{\"name\": \"decode\", \"step\": 1, \"bytes_start\": 5096, \"bytes_end\": 1000,"),
          "write_json: each phase with its byte levels");
    CHECK(json && strstr(json, "\"prefill\", \"decode\"], \"clock\": \"measured\"") && strstr(json, "\"data\", \"kv_cache\"]") &&
              strstr(json, "\"bytes\": [1000,4096,300,-300,-4096]") && strstr(json, "\"category\": [0,11,7,7,11]"),
          "write_json: the event log with the name lists, the user's names in them");
    CHECK(json && strstr(json, "\"incomplete\": false") && strstr(json, "\"allocs\": 3, \"frees\": 2") && json[strlen(json) - 2] == '}', "write_json: counts, complete, closed");
    trace = written(dpprof_prof_write_trace, &p, &rc);
    CHECK(rc == DPPROF_OK && trace && strstr(trace, "\"traceEvents\": [") && strstr(trace, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"phases\"}}"),
          "write_trace: a trace with a named phase track");
    CHECK(trace && strstr(trace, "{\"name\": \"decode\", \"cat\": \"phase\", \"ph\": \"X\"") && strstr(trace, "\"kv_cache\": 4096") && strstr(trace, "\"kv_cache\": 0") &&
              !strcmp(trace + strlen(trace) - 4, "\n]}\n"),
          "write_trace: the user's phase, the user's category's live bytes up and down, closed");
    full = fopen("/dev/full", "w");
    if (full) {
        CHECK(dpprof_prof_write_json(&p, full) == DPPROF_ERR_IO && strstr(dpprof_last_error(), "write error"), "write_json on a full device: DPPROF_ERR_IO (%s)", dpprof_last_error());
        CHECK(dpprof_prof_write_trace(&p, full) == DPPROF_ERR_IO, "write_trace on a full device: DPPROF_ERR_IO");
        fclose(full);
    } else SKIP("no /dev/full here: the write-error checks did not run");
    CHECK(dpprof_prof_write_json(NULL, stdout) == DPPROF_ERR_INVALID && dpprof_prof_write_trace(&p, NULL) == DPPROF_ERR_INVALID, "NULL profile or file: DPPROF_ERR_INVALID");
    free(json);
    free(trace);
    dpprof_free(&p, w);
    dpprof_prof_free(&p);
    return test_finish();
}
