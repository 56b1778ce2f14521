/* tests/test.h - the tiny harness every C test uses: one line per check, PASS/FAIL/SKIP first,
   counted by tests/run.sh. a test program exits 1 if any check failed. */
#ifndef DPPROF_TEST_H
#define DPPROF_TEST_H
#include <stdio.h>

static int test_passed, test_failed, test_skipped;

#define CHECK(cond, ...)                                              \
    do {                                                              \
        int ok_ = (cond) ? 1 : 0;                                     \
        if (ok_) test_passed++;                                       \
        else test_failed++;                                           \
        printf("%s ", ok_ ? "PASS" : "FAIL");                         \
        printf(__VA_ARGS__);                                          \
        if (!ok_) printf("  [%s:%d: %s]", __FILE__, __LINE__, #cond); \
        printf("\n");                                                 \
        fflush(stdout);                                               \
    } while (0)

#define SKIP(...)            \
    do {                     \
        test_skipped++;      \
        printf("SKIP ");     \
        printf(__VA_ARGS__); \
        printf("\n");        \
    } while (0)

static int test_finish(void) {
    printf("# %d passed, %d failed, %d skipped\n", test_passed, test_failed, test_skipped);
    return test_failed ? 1 : 0;
}
#endif
