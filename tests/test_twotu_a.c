/* tests/test_twotu_a.c - with test_twotu_b.c: two translation units include dpprof.h, one with
   the implementation; they must compile and link without clashes. run by make test. */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"
#include "test.h"

int other_unit_peak(void); /* test_twotu_b.c */

int main(void) {
    CHECK(other_unit_peak() == 96, "a second translation unit uses the library (peak %d)", other_unit_peak());
    CHECK(!strcmp(dpprof_category_name(DPPROF_CAT_DATA), "data"), "and this one too");
    return test_finish();
}
