/* tests/test_prof.c - the profiler layer used alone, the way a user who drops dpprof.h into their
   own program would: their own allocation pattern, phases, and the report. run by make test. */
#define DPPROF_IMPLEMENTATION
#include "dpprof.h"
#include "test.h"

#include <string.h>

int main(void) {
    dpprof_prof p;
    void *w, *a1, *a2, *tmp;
    char pool[16];
    int64_t sum;
    int c, m, rc;
    size_t i;

    CHECK(dpprof_prof_init(&p, 0) == DPPROF_OK, "init");
    /* a user's pattern: weights, then two activations, a temporary, frees in the backward */
    dpprof_phase_begin(&p, DPPROF_PHASE_MODEL_LOADED, -1);
    w = dpprof_malloc(&p, 1000, DPPROF_CAT_MODEL_PARAMETERS, DPPROF_MOD_MLP);
    dpprof_phase_end(&p);
    dpprof_phase_begin(&p, DPPROF_PHASE_FORWARD, 0);
    a1 = dpprof_malloc(&p, 300, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_ATTENTION);
    a2 = dpprof_malloc(&p, 500, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP);
    dpprof_phase_begin(&p, DPPROF_PHASE_BACKWARD, 0); /* begin closes forward */
    /* memory the user manages elsewhere (a pool, device memory): tracked by key */
    CHECK(dpprof_track_alloc(&p, pool, 4096, DPPROF_CAT_WORKSPACE, DPPROF_MOD_OTHER) == DPPROF_OK, "track a foreign allocation");
    tmp = dpprof_malloc(&p, 200, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_ATTENTION);
    /* the peak is here: 1000 + 300 + 500 + 4096 + 200 = 6096 */
    dpprof_free(&p, tmp);
    CHECK(dpprof_track_free(&p, pool) == DPPROF_OK, "free a foreign allocation");
    dpprof_free(&p, a2);
    dpprof_free(&p, a1);
    dpprof_phase_end(&p);

    CHECK(p.peak_bytes == 6096, "peak = 6096 bytes (got %lld)", (long long)p.peak_bytes);
    CHECK(p.peak_by_cat[DPPROF_CAT_MODEL_PARAMETERS] == 1000 && p.peak_by_cat[DPPROF_CAT_ACTIVATIONS] == 800 &&
              p.peak_by_cat[DPPROF_CAT_WORKSPACE] == 4096 && p.peak_by_cat[DPPROF_CAT_TEMP_MATRICES] == 200,
          "breakdown by category at the moment of the peak");
    CHECK(p.peak_by_mod[DPPROF_MOD_MLP] == 1500 && p.peak_by_mod[DPPROF_MOD_ATTENTION] == 500 && p.peak_by_mod[DPPROF_MOD_OTHER] == 4096,
          "breakdown by module at the moment of the peak");
    sum = 0;
    for (c = 0; c < DPPROF_CAT_COUNT; c++) sum += p.peak_by_cat[c];
    CHECK(sum == p.peak_bytes, "categories at the peak sum to the peak (%lld)", (long long)sum);
    sum = 0;
    for (c = 0; c < DPPROF_CAT_COUNT; c++)
        for (m = 0; m < DPPROF_MOD_COUNT; m++) sum += p.peak_by[c][m];
    CHECK(sum == p.peak_bytes, "the category x module split at the peak sums to the peak");
    CHECK(p.peak_phase == DPPROF_PHASE_BACKWARD && p.peak_step == 0, "the peak is attributed to backward of step 0");
    CHECK(p.live_bytes == 1000 && dpprof_live(&p, DPPROF_CAT_MODEL_PARAMETERS, -1) == 1000, "after the frees only the weights are live");

    /* the timeline: replaying the events gives the live bytes recorded with each one */
    sum = 0;
    rc = 1;
    for (i = 0; i < p.n_events; i++) {
        sum += p.events[i].bytes;
        if (sum != p.events[i].live) rc = 0;
    }
    CHECK(rc && p.n_events == 9 && sum == 1000, "event log: %zu events, running sum equals the recorded live bytes", p.n_events);
    CHECK(p.events[0].phase == DPPROF_PHASE_MODEL_LOADED && p.events[1].phase == DPPROF_PHASE_FORWARD && p.events[3].phase == DPPROF_PHASE_BACKWARD,
          "each event carries the phase it happened in");
    for (i = 1, rc = 1; i < p.n_events; i++) rc &= p.events[i].t_ms >= p.events[i - 1].t_ms;
    CHECK(rc, "timestamps do not decrease (monotonic clock)");

    /* phase records: bytes at start, end and the max inside (the seed's snapshots) */
    CHECK(p.n_phases == 3, "three phase records (got %zu)", p.n_phases);
    CHECK(p.phases[0].bytes_start == 0 && p.phases[0].bytes_end == 1000, "model_loaded: 0 -> 1000 bytes");
    CHECK(p.phases[1].bytes_start == 1000 && p.phases[1].bytes_end == 1800 && p.phases[1].bytes_peak == 1800, "forward: 1000 -> 1800, peak 1800");
    CHECK(p.phases[2].bytes_start == 1800 && p.phases[2].bytes_peak == 6096 && p.phases[2].bytes_end == 1000, "backward: peak 6096, ends at 1000");

    /* error paths, by exact code */
    CHECK(dpprof_track_free(&p, pool) == DPPROF_ERR_INVALID, "freeing an unknown key is DPPROF_ERR_INVALID");
    CHECK(strstr(dpprof_last_error(), "not a live allocation") != NULL, "and says so: %s", dpprof_last_error());
    CHECK(dpprof_track_alloc(&p, w, 8, DPPROF_CAT_DATA, DPPROF_MOD_OTHER) == DPPROF_ERR_INVALID, "tracking a live key twice is DPPROF_ERR_INVALID");
    CHECK(dpprof_track_alloc(&p, pool, 8, DPPROF_CAT_COUNT, DPPROF_MOD_OTHER) == DPPROF_ERR_INVALID, "a category out of range is DPPROF_ERR_INVALID");
    CHECK(dpprof_track_alloc(&p, pool, 8, DPPROF_CAT_DATA, -1) == DPPROF_ERR_INVALID, "a module out of range is DPPROF_ERR_INVALID");
    CHECK(dpprof_track_alloc(&p, pool, (size_t)INT64_MAX, DPPROF_CAT_DATA, DPPROF_MOD_OTHER) == DPPROF_ERR_OVERFLOW, "bytes that overflow the live total are DPPROF_ERR_OVERFLOW");
    CHECK(dpprof_phase_begin(&p, DPPROF_PHASE_COUNT, 0) == DPPROF_ERR_INVALID, "an unknown phase is DPPROF_ERR_INVALID");
    CHECK(p.live_bytes == 1000 && p.peak_bytes == 6096, "failed calls change nothing");
    CHECK(!strcmp(dpprof_category_name(DPPROF_CAT_ACTIVATION_HOOKS), "activation_hooks") && !strcmp(dpprof_module_name(DPPROF_MOD_HEAD), "head") &&
              !strcmp(dpprof_phase_name(DPPROF_PHASE_CLIP_ACCUMULATE), "clip_accumulate") && !strcmp(dpprof_result_str(DPPROF_ERR_OOM), "out of memory"),
          "names of categories, modules, phases and results");

    /* the first moment of the max is the peak: a later equal level does not move it */
    dpprof_phase_begin(&p, DPPROF_PHASE_FORWARD, 1);
    a1 = dpprof_malloc(&p, 5096, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP);
    CHECK(p.peak_bytes == 6096 && p.peak_step == 0, "an equal later level keeps the first peak");
    dpprof_free(&p, a1);
    dpprof_free(&p, w);
    dpprof_phase_end(&p);
    CHECK(p.live_bytes == 0 && p.n_allocs == p.n_frees, "everything freed: %lld allocations, %lld frees", (long long)p.n_allocs, (long long)p.n_frees);
    dpprof_prof_free(&p);

    /* comparing two memory histories */
    {
        dpprof_prof a, b;
        const char *why;
        char k1, k2;
        dpprof_prof_init(&a, 0);
        dpprof_prof_init(&b, DPPROF_PROF_NO_CLOCK);
        dpprof_track_alloc(&a, &k1, 100, DPPROF_CAT_DATA, DPPROF_MOD_OTHER);
        dpprof_track_alloc(&b, &k2, 100, DPPROF_CAT_DATA, DPPROF_MOD_OTHER);
        CHECK(dpprof_prof_same_memory(&a, &b, &why), "same memory history (keys and clocks differ): equal");
        dpprof_track_alloc(&a, &k2, 8, DPPROF_CAT_DATA, DPPROF_MOD_OTHER);
        dpprof_track_alloc(&b, &k1, 8, DPPROF_CAT_WORKSPACE, DPPROF_MOD_OTHER);
        CHECK(!dpprof_prof_same_memory(&a, &b, &why) && !strcmp(why, "an event"), "a different category: not equal, and why says '%s'", why);
        dpprof_prof_free(&a);
        dpprof_prof_free(&b);
    }

    /* phases: a noise phase that moves no memory may be in one profile only (the noise in the optimizer's
       pass); any other extra phase, or a noise phase that allocates, is a difference */
    {
        dpprof_prof a, b;
        const char *why;
        char k1, k2, k3;
        int extra;
        for (extra = 0; extra < 3; extra++) {
            dpprof_prof_init(&a, 0);
            dpprof_prof_init(&b, DPPROF_PROF_NO_CLOCK);
            dpprof_phase_begin(&a, DPPROF_PHASE_BACKWARD, 0);
            dpprof_phase_begin(&b, DPPROF_PHASE_BACKWARD, 0);
            dpprof_track_alloc(&a, &k1, 64, DPPROF_CAT_GRADIENTS, DPPROF_MOD_OTHER);
            dpprof_track_alloc(&b, &k2, 64, DPPROF_CAT_GRADIENTS, DPPROF_MOD_OTHER);
            dpprof_phase_begin(&a, extra == 1 ? DPPROF_PHASE_NORMS : DPPROF_PHASE_NOISE, 0); /* in a only */
            if (extra == 2) {
                dpprof_track_alloc(&a, &k3, 8, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER);
                dpprof_track_alloc(&b, &k3, 8, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER); /* b: in the optimizer's phase below */
            }
            dpprof_phase_begin(&a, DPPROF_PHASE_OPTIMIZER_STEP, 0);
            dpprof_phase_begin(&b, DPPROF_PHASE_OPTIMIZER_STEP, 0);
            dpprof_phase_end(&a);
            dpprof_phase_end(&b);
            if (extra == 0) {
                CHECK(dpprof_prof_same_memory(&a, &b, &why) && dpprof_prof_same_memory(&b, &a, &why), "a noise phase that moves no memory, in one profile only: equal (both ways)");
            } else {
                CHECK(!dpprof_prof_same_memory(&a, &b, &why) && !dpprof_prof_same_memory(&b, &a, &why), "%s in one profile only: not equal (why: %s)",
                      extra == 1 ? "a norms phase" : "a noise phase that allocates", why);
            }
            dpprof_prof_free(&a);
            dpprof_prof_free(&b);
        }
    }

    /* many live allocations, freed in a scrambled order, some moved or re-tagged on the way:
       the index behind the live table must find every key, and nothing else */
    {
        enum {
            NK = 200000
        };
        static char keys[2 * NK];
        dpprof_prof q;
        size_t k, bad = 0;
        int64_t expect = 0;
        dpprof_prof_init(&q, DPPROF_PROF_NO_CLOCK);
        for (k = 0; k < NK; k++) {
            bad += dpprof_track_alloc(&q, &keys[k], k % 7 + 1, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP) != DPPROF_OK;
            expect += (int64_t)(k % 7 + 1);
        }
        bad += dpprof_track_alloc(&q, &keys[NK / 2], 1, DPPROF_CAT_DATA, DPPROF_MOD_OTHER) != DPPROF_ERR_INVALID; /* still live */
        for (k = 0; k < NK; k += 3) bad += dpprof_track_move(&q, &keys[k], &keys[NK + k]) != DPPROF_OK;
        for (k = 1; k < NK; k += 5) /* by its current key: the ones moved above answer to the new one */
            bad += dpprof_track_retag(&q, k % 3 == 0 ? (const void *)&keys[NK + k] : (const void *)&keys[k], DPPROF_CAT_ACTIVATION_HOOKS, DPPROF_MOD_MLP) != DPPROF_OK;
        for (k = 0; k < NK; k++) {
            size_t j = (k * 7919) % NK; /* a permutation: 7919 is prime and does not divide NK */
            const void *key = j % 3 == 0 ? (const void *)&keys[NK + j] : (const void *)&keys[j];
            bad += dpprof_track_free(&q, key) != DPPROF_OK;
        }
        bad += dpprof_track_free(&q, &keys[5]) != DPPROF_ERR_INVALID; /* already freed */
        CHECK(!bad && q.live_bytes == 0 && q.n_live == 0 && q.peak_bytes == expect,
              "200000 allocations moved, re-tagged and freed in scrambled order: every key found (%zu failures), peak %lld", bad, (long long)q.peak_bytes);
        dpprof_prof_free(&q);
    }

    /* no-clock mode (the dry backend) keeps every timestamp at 0 */
    dpprof_prof_init(&p, DPPROF_PROF_NO_CLOCK);
    dpprof_track_alloc(&p, pool, 64, DPPROF_CAT_DATA, DPPROF_MOD_OTHER);
    CHECK(p.n_events == 1 && p.events[0].t_ms == 0.0, "no-clock profiles record time 0");
    dpprof_prof_free(&p);
    return test_finish();
}
