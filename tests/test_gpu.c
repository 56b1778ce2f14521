/* tests/test_gpu.c - what needs a GPU: device memory through the accountant against the driver's
   own figure. prints SKIP without a GPU (or without CUDA at build time); with one it must pass.
   run by make test. */
#define DPPROF_IMPLEMENTATION
#include "dpprof.h"
#include "test.h"

#include <string.h>

int main(void) {
    int count = 0, rc = dpprof_cuda_device_count(&count);
    dpprof_device_info before, after;
    dpprof_prof p;
    void *ptr[4];
    int i;
    if (rc == DPPROF_ERR_NO_CUDA) {
        SKIP("gpu: built without CUDA");
        return test_finish();
    }
    CHECK(rc == DPPROF_OK, "gpu: the device count answers (%s)", rc ? dpprof_cuda_last_error() : "ok");
    if (count == 0) {
        SKIP("gpu: no GPU on this machine: device memory checks not run");
        return test_finish();
    }
    CHECK(dpprof_cuda_device_info(0, &before) == DPPROF_OK, "gpu: %s, driver %d, runtime %d, %.1f GiB", before.name, before.driver_version, before.runtime_version, (double)before.total_bytes / 1073741824.0);
    dpprof_prof_init(&p, 0);
    for (i = 0; i < 4; i++) CHECK(dpprof_cuda_malloc(&p, &ptr[i], (size_t)256 << 20, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP) == DPPROF_OK, "gpu: cudaMalloc 256 MiB through the accountant");
    dpprof_cuda_device_info(0, &after);
    CHECK(p.live_bytes == (int64_t)1 << 30, "gpu: the accountant counts 1 GiB");
    /* the driver rounds allocations up (2 MiB pages) and may map more: a stated margin of 64 MiB */
    CHECK(before.free_bytes - after.free_bytes >= ((size_t)1 << 30) && before.free_bytes - after.free_bytes <= ((size_t)1 << 30) + ((size_t)64 << 20),
          "gpu: the driver's free memory dropped by %.1f MiB (1024 MiB requested, margin 64 MiB)", (double)(before.free_bytes - after.free_bytes) / 1048576.0);
    for (i = 0; i < 4; i++) dpprof_cuda_free(&p, ptr[i]);
    CHECK(p.live_bytes == 0, "gpu: all freed");
    CHECK(dpprof_cuda_malloc(&p, &ptr[0], (size_t)1 << 50, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP) == DPPROF_ERR_OOM && p.live_bytes == 0, "gpu: a 1 PiB request is DPPROF_ERR_OOM and tracks nothing");
    dpprof_prof_free(&p);
    return test_finish();
}
