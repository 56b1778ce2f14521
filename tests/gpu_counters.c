/* test_cupti.c - dpprof_cuda_counters_*: measured dram and l2 bytes per named range (CUPTI range
   profiler). pasted into tests/test_gpu.c after dpprof_cuda_init(0); SKIPs where begin answers
   DPPROF_ERR_UNSUPPORTED (no counter permission, unsupported device, the cpu emulator).
   workload: 1 GiB buffers, far beyond any L2 (40-126 MB), so dram traffic ~ what the op moves:
     copy   dpprof_cuda_copy D2D of 1 GiB      reads 1 GiB, writes 1 GiB (copy engine or copy kernel)
     scale  dpprof_scale_gpu y = 0.5 x, 1 GiB  reads 1 GiB, writes 1 GiB (a kernel: l2 tex sectors too)
   tolerance: dram within 15% of 1 GiB: lines still in L2 from earlier work are read without dram,
   dirty lines of a range may reach dram only in a later range (up to the L2 size, 12% of 1 GiB on
   B200); l2 (SM traffic, 32-byte sectors) within [0.95, 1.10] of 1 GiB. an empty range: < 64 MiB. */
static int test_counters_near(double v, double want, double lo, double hi) { return v >= lo * want && v <= hi * want; }

static void test_counters(void) {
    const size_t bytes = (size_t)1 << 30, n = bytes / sizeof(float);
    const double gib = (double)bytes, mib = 1048576.0;
    dpprof_counter_range r[4], r2[2];
    void *a = NULL, *b = NULL;
    int rc, got = -1, got2 = -1, i;
    const char *want[4] = {"empty", "copy", "scale", "last"};

    rc = dpprof_cuda_counters_begin(4);
    if (rc == DPPROF_ERR_UNSUPPORTED) {
        SKIP("gpu counters: not available here (%s)", dpprof_last_error());
        return;
    }
    CHECK(rc == DPPROF_OK, "gpu counters: begin (%s)", rc ? dpprof_last_error() : "ok");
    if (rc != DPPROF_OK) return;
    CHECK(dpprof_cuda_counters_begin(4) == DPPROF_ERR_INVALID, "gpu counters: a second begin is refused (one collection at a time)");
    rc = dpprof_cuda_alloc(&a, bytes);
    if (rc == DPPROF_OK) rc = dpprof_cuda_alloc(&b, bytes);
    if (rc != DPPROF_OK) {
        SKIP("gpu counters: no room for 2 x 1 GiB (%s)", dpprof_last_error());
        dpprof_cuda_release(a);
        dpprof_cuda_counters_end(r, 4, &got);
        return;
    }
    dpprof_fill_gpu((float *)a, n, 1.0f); /* outside any range */
    dpprof_fill_gpu((float *)b, n, 2.0f);
    CHECK(dpprof_cuda_sync() == DPPROF_OK, "gpu counters: buffers filled (%s)", dpprof_last_error());

    CHECK(dpprof_cuda_counters_push("empty") == DPPROF_OK && dpprof_cuda_counters_pop() == DPPROF_OK, "gpu counters: push/pop an empty range (%s)", dpprof_last_error());
    CHECK(dpprof_cuda_counters_push("copy") == DPPROF_OK, "gpu counters: push copy (%s)", dpprof_last_error());
    dpprof_cuda_copy(b, a, bytes, DPPROF_COPY_D2D);
    CHECK(dpprof_cuda_counters_pop() == DPPROF_OK, "gpu counters: pop copy (%s)", dpprof_last_error());
    CHECK(dpprof_cuda_counters_push("scale") == DPPROF_OK, "gpu counters: push scale (%s)", dpprof_last_error());
    dpprof_scale_gpu((float *)b, (const float *)a, n, 0.5);
    CHECK(dpprof_cuda_counters_pop() == DPPROF_OK, "gpu counters: pop scale (%s)", dpprof_last_error());
    CHECK(dpprof_cuda_counters_push("last") == DPPROF_OK, "gpu counters: push last (%s)", dpprof_last_error());
    CHECK(dpprof_cuda_counters_push("nested") == DPPROF_ERR_INVALID, "gpu counters: a nested push is refused");
    CHECK(dpprof_cuda_counters_pop() == DPPROF_OK, "gpu counters: pop last (%s)", dpprof_last_error());
    CHECK(dpprof_cuda_counters_pop() == DPPROF_ERR_INVALID, "gpu counters: a pop without a push is refused");
    CHECK(dpprof_cuda_counters_push("fifth") == DPPROF_ERR_INVALID, "gpu counters: a fifth range with max_ranges 4 is refused");
    rc = dpprof_cuda_counters_end(r, 4, &got);
    CHECK(rc == DPPROF_OK && got == 4, "gpu counters: end decodes 4 ranges (rc %d, n %d, %s)", rc, got, rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK && got == 4) {
        for (i = 0; i < 4; i++)
            printf("# counters %-6s dram read %10.1f MiB write %10.1f MiB   l2 read %10.1f MiB write %10.1f MiB\n", r[i].name, r[i].dram_read / mib, r[i].dram_write / mib,
                   r[i].l2_read / mib, r[i].l2_write / mib);
        for (i = 0; i < 4; i++) CHECK(!strcmp(r[i].name, want[i]), "gpu counters: range %d is '%s' (want '%s')", i, r[i].name, want[i]);
        CHECK(r[0].dram_read < 0 || (r[0].dram_read + r[0].dram_write < 64 * mib), "gpu counters: empty range moves %.1f MiB of dram (< 64; -1: not decoded)",
              (r[0].dram_read + r[0].dram_write) / mib);
        CHECK(test_counters_near(r[1].dram_read, gib, 0.85, 1.15) && test_counters_near(r[1].dram_write, gib, 0.85, 1.15),
              "gpu counters: 1 GiB D2D copy reads %.3f GiB, writes %.3f GiB of dram (want 1 +- 15%%; -1: range not decoded)", r[1].dram_read / gib, r[1].dram_write / gib);
        CHECK(test_counters_near(r[2].dram_read, gib, 0.85, 1.15) && test_counters_near(r[2].dram_write, gib, 0.85, 1.15),
              "gpu counters: scale of 1 GiB reads %.3f GiB, writes %.3f GiB of dram (want 1 +- 15%%)", r[2].dram_read / gib, r[2].dram_write / gib);
        if (r[2].l2_read < 0 || r[2].l2_write < 0) SKIP("gpu counters: l2 metrics unavailable on this device (dram only)");
        else
            CHECK(test_counters_near(r[2].l2_read, gib, 0.95, 1.10) && test_counters_near(r[2].l2_write, gib, 0.95, 1.10),
                  "gpu counters: scale of 1 GiB: l2 (from SMs) read %.3f GiB, write %.3f GiB (want [0.95, 1.10])", r[2].l2_read / gib, r[2].l2_write / gib);
    }
    /* after end everything is torn down: the api refuses range calls, and begin works again */
    CHECK(dpprof_cuda_counters_push("x") == DPPROF_ERR_INVALID && dpprof_cuda_counters_pop() == DPPROF_ERR_INVALID, "gpu counters: push/pop without a collection are refused");
    got2 = 5;
    CHECK(dpprof_cuda_counters_end(r2, 2, &got2) == DPPROF_ERR_INVALID && got2 == 0, "gpu counters: end without a collection is refused (n %d)", got2);
    rc = dpprof_cuda_counters_begin(2);
    CHECK(rc == DPPROF_OK, "gpu counters: begin again after end (%s)", rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        dpprof_cuda_counters_push("scale again");
        dpprof_scale_gpu((float *)b, (const float *)a, n, 0.5);
        dpprof_cuda_counters_pop();
        dpprof_cuda_counters_push("dropped by max 1");
        dpprof_cuda_counters_pop();
        rc = dpprof_cuda_counters_end(r2, 1, &got2);
        CHECK(rc == DPPROF_OK && got2 == 1 && !strcmp(r2[0].name, "scale again"), "gpu counters: second collection, end with max 1 gives 1 range (rc %d, n %d)", rc, got2);
        if (rc == DPPROF_OK && got2 == 1 && got == 4)
            CHECK(fabs(r2[0].dram_read - r[2].dram_read) <= 0.05 * gib && fabs(r2[0].dram_write - r[2].dram_write) <= 0.05 * gib,
                  "gpu counters: the same scale measured twice: dram read %.3f vs %.3f GiB, write %.3f vs %.3f GiB (within 0.05 GiB)", r2[0].dram_read / gib, r[2].dram_read / gib,
                  r2[0].dram_write / gib, r[2].dram_write / gib);
    }
    dpprof_cuda_release(a);
    dpprof_cuda_release(b);
    CHECK(dpprof_cuda_sync() == DPPROF_OK, "gpu counters: no queued error (%s)", dpprof_last_error());
}
