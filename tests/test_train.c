/* tests/test_train.c - loss falls over a few hundred adam steps: on synthetic sequences (lm and
   cls) and on a real text file (byte-level lm). built with -O3: it trains for real. run by make test.
   the text is the GPL-3 licence shipped by every Debian system (base-files). */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"
#include "test.h"

#include <string.h>

#define TEXT "/usr/share/common-licenses/GPL-3"

static double mean(const dpprof_session *s, int from, int to) {
    double m = 0;
    int i;
    for (i = from; i < to; i++) m += dpprof_session_step_loss(s, i);
    return m / (to - from);
}

static void train(const char *name, dpprof_task task, const char *data, int steps, double want_ratio) {
    dpprof_config c;
    dpprof_session *s;
    double first, last;
    int rc;
    memset(&c, 0, sizeof c);
    c.preset = "tiny";
    c.seq = 32;
    c.batch = 8;
    c.physical_batch = 4;
    c.steps = steps;
    c.lr = 3e-3;
    c.task = task;
    c.data_path = data;
    c.backend = DPPROF_BACKEND_CPU;
    c.seed = 1;
    rc = dpprof_session_create(&c, &s);
    if (rc == DPPROF_ERR_IO && data) {
        SKIP("%s: %s is not on this machine", name, data);
        return;
    }
    CHECK(rc == DPPROF_OK, "%s: session (%s)", name, rc ? dpprof_last_error() : "ok");
    if (rc) return;
    rc = dpprof_session_run(s);
    CHECK(rc == DPPROF_OK, "%s: %d adam steps", name, steps);
    first = mean(s, 0, 10);
    last = mean(s, steps - 20, steps);
    printf("# %s: mean loss of steps 1-10 %.4f, of the last 20 %.4f (ratio %.3f)\n", name, first, last, last / first);
    CHECK(last < want_ratio * first, "%s: loss falls from %.4f to %.4f (must end below %.2f x the start)", name, first, last, want_ratio);
    dpprof_session_destroy(s);
}

int main(void) {
    train("synthetic lm", DPPROF_TASK_LM, NULL, 300, 0.5);
    train("synthetic cls", DPPROF_TASK_CLS, NULL, 300, 0.5);
    train("text lm (GPL-3)", DPPROF_TASK_LM, TEXT, 300, 0.7);
    return test_finish();
}
