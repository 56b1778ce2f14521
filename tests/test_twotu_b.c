/* tests/test_twotu_b.c - the second translation unit of test_twotu: declarations only. */
#include "dpprof.h"

int other_unit_peak(void) {
    dpprof_prof p;
    char a, b;
    int peak;
    dpprof_prof_init(&p, 0);
    dpprof_track_alloc(&p, &a, 64, DPPROF_CAT_DATA, DPPROF_MOD_OTHER);
    dpprof_track_alloc(&p, &b, 32, DPPROF_CAT_DATA, DPPROF_MOD_OTHER);
    dpprof_track_free(&p, &a);
    peak = (int)p.peak_bytes;
    dpprof_prof_free(&p);
    return peak;
}
