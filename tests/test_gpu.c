/* tests/test_gpu.c - the cuda backend: every gpu op against its cpu reference (tests/gpu_model.c,
   gpu_attn.c, gpu_dp.c), whole DP steps of every algorithm against the cpu backend, the device memory
   profile against the dry backend and the driver, determinism and out-of-memory (tests/gpu_steps.c).
   make test builds it twice: build/tests/test_gpu links the real dpprof_kernels.cu (prints SKIP
   without a GPU) and build/tests/test_cuemu links the same kernels compiled for tests/cuemu.h, the
   cpu emulator of the cuda subset they use, so every check also runs on machines without a GPU.
   DRAM counters (tests/gpu_counters.c) need a real GPU and permission to read them, else SKIP. NCCL: a
   communicator of one rank (the emulator's without MPI), where the build has NCCL.
   cuDNN's attention (group cudnn) where the build and the device have it, else SKIP with the reason.
   usage: test_gpu [accountant|model|attn|cudnn|dp|counters|nccl|steps ...]  (default: all groups) */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"
#include "test.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef DPPROF_CUDA /* a build without the kernels has no gpu ops to call */
/* one kernel choice changed, the others kept (dpprof_cuda_set_tuning takes them all): DPPROF_OK, or its error */
#define TUNE(field, value) tune_one(offsetof(dpprof_cuda_tuning, field), (value))
static int tune_one(size_t off, int value) {
    dpprof_cuda_tuning t;
    dpprof_cuda_get_tuning(&t);
    memcpy((char *)&t + off, &value, sizeof value);
    return dpprof_cuda_set_tuning(&t);
}

#include "gpu_model.c"
#include "gpu_attn.c"
#include "gpu_dp.c"
#include "gpu_steps.c"
#include "gpu_counters.c"
#else
static void test_counters(void) {}
static void test_model(void) {}
static void test_attn(void) {}
static void test_attn_cudnn(void) {}
static void test_dp(void) {}
static void test_steps(void) {}
#endif

/* the profiler layer alone on device memory: dpprof_cuda_malloc through the accountant */
static void test_accountant(const dpprof_device_info *before) {
    dpprof_device_info after;
    dpprof_prof p;
    void *ptr[4];
    int i;
    dpprof_prof_init(&p, 0);
    for (i = 0; i < 4; i++) CHECK(dpprof_cuda_malloc(&p, &ptr[i], (size_t)256 << 20, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP) == DPPROF_OK, "gpu: cudaMalloc 256 MiB through the accountant");
    dpprof_cuda_device_info(0, &after);
    CHECK(p.live_bytes == (int64_t)1 << 30, "gpu: the accountant counts 1 GiB");
    /* the driver rounds allocations up (2 MiB pages) and may map more: a stated margin of 64 MiB */
    CHECK(before->free_bytes - after.free_bytes >= ((size_t)1 << 30) && before->free_bytes - after.free_bytes <= ((size_t)1 << 30) + ((size_t)64 << 20),
          "gpu: the driver's free memory dropped by %.1f MiB (1024 MiB requested, margin 64 MiB)", (double)(before->free_bytes - after.free_bytes) / 1048576.0);
    for (i = 0; i < 4; i++) dpprof_cuda_free(&p, ptr[i]);
    CHECK(p.live_bytes == 0, "gpu: all freed");
    CHECK(dpprof_cuda_malloc(&p, &ptr[0], (size_t)1 << 50, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP) == DPPROF_ERR_OOM && p.live_bytes == 0, "gpu: a 1 PiB request is DPPROF_ERR_OOM and tracks nothing");
    dpprof_prof_free(&p);
}

#ifdef DPPROF_CUDA
/* NCCL with a communicator of one rank on this GPU: the collectives the engine uses between ranks (their
   every path: the padded buffer's reduce-scatter and all-gather, and the part-by-part reduce and broadcast of
   a buffer without room) leave one rank's values as they are, bit for bit */
static void test_nccl(void) {
    unsigned char id[DPPROF_NCCL_ID_BYTES];
    enum {
        N = 37,
        CAP = 40
    };
    float h[CAP], back[CAP], *x = NULL;
    int i, k, rc, same = 1;
    if (!dpprof_nccl_available()) {
        SKIP("gpu: nccl: this build has no NCCL (nccl.h was not found when the kernels were compiled)");
        return;
    }
    CHECK(dpprof_nccl_id(id, 7) == DPPROF_ERR_INVALID, "gpu: nccl: an id buffer of 7 bytes is refused (%s)", dpprof_last_error());
    rc = dpprof_nccl_id(id, sizeof id);
    if (rc == DPPROF_OK) rc = dpprof_nccl_init(id, 1, 0);
    CHECK(rc == DPPROF_OK, "gpu: nccl: a communicator of one rank on this GPU (%s)", rc ? dpprof_last_error() : "ok");
    if (rc != DPPROF_OK) return;
    CHECK(dpprof_nccl_init(id, 1, 0) == DPPROF_ERR_INVALID, "gpu: nccl: a second communicator in the process is refused (%s)", dpprof_last_error());
    for (i = 0; i < CAP; i++) h[i] = (float)(0.37 * i - 3.1);
    rc = dpprof_cuda_alloc((void **)&x, sizeof h);
    if (rc == DPPROF_OK) rc = dpprof_cuda_copy(x, h, sizeof h, DPPROF_COPY_H2D);
    for (k = 0; rc == DPPROF_OK && k < 5; k++) {
        if (k == 0) dpprof_nccl_allreduce(x, N);
        if (k == 1) dpprof_nccl_reduce_scatter(x, N, CAP); /* padded: NCCL's reduce-scatter in place */
        if (k == 2) dpprof_nccl_allgather(x, N, CAP);      /* padded: NCCL's all-gather in place */
        if (k == 3) dpprof_nccl_reduce_scatter(x, N, 0);   /* no room known: a reduce per part */
        if (k == 4) dpprof_nccl_allgather(x, N, 0);        /* a broadcast per part */
        rc = dpprof_cuda_copy(back, x, sizeof back, DPPROF_COPY_D2H);
        if (rc == DPPROF_OK && memcmp(back, h, sizeof h)) same = 0;
    }
    CHECK(rc == DPPROF_OK && same, "gpu: nccl: one rank's all-reduce, reduce-scatter and all-gather (padded and part by part) leave its values bit for bit (%s)",
          rc ? dpprof_last_error() : "ok");
    dpprof_cuda_release(x);
    dpprof_nccl_finish();
    rc = dpprof_nccl_id(id, sizeof id);
    if (rc == DPPROF_OK) rc = dpprof_nccl_init(id, 1, 0);
    CHECK(rc == DPPROF_OK, "gpu: nccl: after dpprof_nccl_finish a new communicator opens (%s)", rc ? dpprof_last_error() : "ok");
    dpprof_nccl_finish();
}
#else
static void test_nccl(void) {}
#endif

static int wanted(int argc, char **argv, const char *group) {
    int i;
    if (argc < 2) return 1;
    for (i = 1; i < argc; i++)
        if (!strcmp(argv[i], group)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    int count = 0, rc = dpprof_cuda_device_count(&count);
    dpprof_device_info info;
    void *ws = NULL;
    if (rc == DPPROF_ERR_NO_CUDA) {
        SKIP("gpu: built without CUDA");
        return test_finish();
    }
    CHECK(rc == DPPROF_OK, "gpu: the device count answers (%s)", rc ? dpprof_last_error() : "ok");
    if (count == 0) {
        SKIP("gpu: no GPU on this machine: the gpu ops, steps and device memory checks were not run here (build/tests/test_cuemu runs them on the cpu emulator)");
        return test_finish();
    }
    CHECK(dpprof_cuda_device_info(0, &info) == DPPROF_OK, "gpu: %s, sm %d.%d, %d SMs, driver %d, runtime %d, %.1f GiB", info.name, info.cc_major, info.cc_minor, info.sm_count,
          info.driver_version, info.runtime_version, (double)info.total_bytes / 1073741824.0);
    if (wanted(argc, argv, "accountant")) test_accountant(&info);
    rc = dpprof_cuda_init(0);
    if (rc == DPPROF_OK) rc = dpprof_cuda_alloc(&ws, DPPROF_WORKSPACE_BYTES);
    if (rc == DPPROF_OK) rc = dpprof_cuda_set_workspace(ws, DPPROF_WORKSPACE_BYTES);
    CHECK(rc == DPPROF_OK, "gpu: stream, cuBLAS and a %zu-byte workspace (%s)", (size_t)DPPROF_WORKSPACE_BYTES, rc ? dpprof_last_error() : "ok");
    if (rc != DPPROF_OK) return test_finish();
    if (wanted(argc, argv, "model")) test_model();
    if (wanted(argc, argv, "attn")) test_attn();
    if (wanted(argc, argv, "cudnn")) test_attn_cudnn();
    if (wanted(argc, argv, "dp")) test_dp();
    if (wanted(argc, argv, "counters")) test_counters();
    if (wanted(argc, argv, "nccl")) test_nccl();
    /* the sessions set their own workspace: the ops' tests are done with this one, and it is given back
       first. left in the pool, it would keep part of the pool's mapped memory busy, a trim could not
       return the rest, and a session's allocations would land in that slack unseen by the driver's figure
       (seen on an H100: 32 MiB in cudaMemGetInfo against 42 MiB allocated) */
    CHECK(dpprof_cuda_sync() == DPPROF_OK, "gpu: no queued error after the op tests (%s)", dpprof_last_error());
    dpprof_cuda_release(ws);
    if (wanted(argc, argv, "steps")) test_steps();
    return test_finish();
}
