// dpprof_kernels.cu - the CUDA backend of dpprof (the only CUDA translation unit).
// build: make (nvcc -std=c++17 -c dpprof_kernels.cu); linked into dpprof with -lcudart -lcublas.
//
// every gpu op dpprof_<op>_gpu() computes what its reference dpprof_<op>_ref() in dpprof.h computes
// (same arguments, same accumulate/overwrite rules), on device pointers, queued on one stream;
// tests/test_gpu.c compares every op with its reference and whole steps with the cpu backend.
//
// the same source also compiles with g++ against tests/cuemu.h (-DDPPROF_CUEMU): a cpu emulator of
// the part of cuda this file uses, so the kernels' indexing and synchronisation and the engine's
// cuda path are tested on machines without a gpu (make test). the part of cuda used here, and so
// the emulator's contract: __global__/__device__/__host__/__forceinline__, __shared__ arrays of fixed
// size, dynamic shared memory only through DPPROF__SMEM_DYN, threadIdx/blockIdx/blockDim/gridDim,
// __syncthreads, __syncwarp, __shfl_xor_sync/__shfl_down_sync/__shfl_sync on full warps, atomicAdd,
// atomicMin (int), math (expf, logf, sqrtf, rsqrtf, fmaxf, exp, log, sqrt, sin, cos, pow, isfinite),
// launches only through dpprof__launch, runtime calls: cudaMalloc/Free, cudaMallocAsync/FreeAsync,
// cudaDeviceGetDefaultMemPool, cudaMemPoolSetAttribute(ReleaseThreshold), cudaMemcpyAsync,
// cudaMemsetAsync, cudaStreamCreateWithFlags/Synchronize, cudaEventCreate/Record/Synchronize/
// ElapsedTime, cudaGetDeviceCount/Properties, cudaDeviceGetAttribute (ClockRate, MemoryClockRate,
// GlobalMemoryBusWidth), cudaSetDevice, cudaMemGetInfo, cudaDriverGetVersion,
// cudaRuntimeGetVersion, cudaFuncSetAttribute(MaxDynamicSharedMemorySize), cudaGetLastError,
// cudaGetErrorString; cuBLAS: cublasCreate, cublasSetStream, cublasSetWorkspace, cublasSetMathMode,
// cublasSgemm, cublasSgemmStridedBatched, cublasGetStatusString.
#include "dpprof.h"

#ifdef DPPROF_CUEMU
#include "cuemu.h"
#else
#include <cuda_runtime.h>
#include <cublas_v2.h>
#endif
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// ---- state: one device, one stream, one cuBLAS handle, the first error --------------------------
struct dpprof__cu_state {
    int ready, device;
    cudaStream_t stream;
    cublasHandle_t blas;
    int err;                     // first error of anything queued (DPPROF_ERR_*), 0 while none
    unsigned char *scratch;      // the kernels' part of the workspace
    size_t scratch_bytes;
    cudaEvent_t *ev;             // recorded events; created ones are reused after a reset
    int n_ev, cap_ev, made_ev;
};
static dpprof__cu_state dpprof__cu;
static char dpprof_cu_err[512] = "";

static int dpprof__cu_code(cudaError_t e) {
    if (e == cudaErrorMemoryAllocation) return DPPROF_ERR_OOM;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) return DPPROF_ERR_NO_DEVICE;
    return DPPROF_ERR_CUDA;
}

// every cuda call goes through here: file:line and the runtime's words for dpprof_cuda_last_error()
static int dpprof_cu_check(cudaError_t e, const char *what, const char *file, int line) {
    if (e == cudaSuccess) return DPPROF_OK;
    std::snprintf(dpprof_cu_err, sizeof dpprof_cu_err, "%s:%d: %s: %s", file, line, what, cudaGetErrorString(e));
    cudaGetLastError(); // clear a non-sticky error so the next call starts clean
    return dpprof__cu_code(e);
}
#define DPPROF_CU(call) dpprof_cu_check((call), #call, __FILE__, __LINE__)

// a queued operation failed: keep the first failure for dpprof_cuda_sync()
static void dpprof__cu_fail(int code, const char *fmt, const char *what, const char *detail) {
    if (dpprof__cu.err) return;
    dpprof__cu.err = code;
    std::snprintf(dpprof_cu_err, sizeof dpprof_cu_err, fmt, what, detail);
}
static void dpprof__cu_post(const char *what, cudaError_t e) {
    if (e == cudaSuccess) return;
    dpprof__cu_fail(dpprof__cu_code(e), "%s: %s", what, cudaGetErrorString(e));
    cudaGetLastError();
}
static void dpprof__blas_post(const char *what, cublasStatus_t st) {
    if (st == CUBLAS_STATUS_SUCCESS) return;
    dpprof__cu_fail(st == CUBLAS_STATUS_ALLOC_FAILED ? DPPROF_ERR_OOM : DPPROF_ERR_CUDA, "%s: cuBLAS: %s", what, cublasGetStatusString(st));
}

// every kernel launch goes through here (the emulator runs it on the cpu). after an error nothing
// more is queued: the step fails at its next dpprof_cuda_sync with the first cause
template <typename... P, typename... A>
static void dpprof__launch(const char *what, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, A... args) {
    if (dpprof__cu.err || !grid.x || !grid.y || !grid.z) return;
    if (!dpprof__cu.ready) {
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", what, "dpprof_cuda_init was not called");
        return;
    }
#ifdef DPPROF_CUEMU
    cuemu_launch(kernel, grid, block, smem, static_cast<P>(args)...);
#else
    kernel<<<grid, block, smem, dpprof__cu.stream>>>(static_cast<P>(args)...);
#endif
    dpprof__cu_post(what, cudaGetLastError());
}

// dynamic shared memory: one declaration the emulator can replace
#ifdef DPPROF_CUEMU
#define DPPROF__SMEM_DYN(T, name) T *name = (T *)cuemu_dynamic_smem()
#else
#define DPPROF__SMEM_DYN(T, name)                 \
    extern __shared__ double4 dpprof__smem_raw[]; \
    T *name = (T *)dpprof__smem_raw
#endif

// the kernels' scratch (part of the tracked workspace): nullptr and a queued error when too small.
// the last DPPROF__FLAG_BYTES are the non-finite flag's and never handed out
#define DPPROF__FLAG_BYTES 256
static void *dpprof__scratch(size_t bytes, const char *what) {
    if (!dpprof__cu.scratch || bytes > dpprof__cu.scratch_bytes - DPPROF__FLAG_BYTES) {
        char need[64];
        std::snprintf(need, sizeof need, "%zu bytes of kernel scratch (not set or too small)", bytes);
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: needs %s", what, need);
        return nullptr;
    }
    return dpprof__cu.scratch;
}

// grid for n independent items at `threads` per block with grid-stride loops: at most 65535*8 blocks
static unsigned dpprof__blocks(size_t n, unsigned threads) {
    size_t b = (n + threads - 1) / threads;
    if (b > (size_t)65535 * 8) b = (size_t)65535 * 8;
    return b ? (unsigned)b : 1u;
}

// opt a kernel in to more than 48 KiB of dynamic shared memory (once per kernel and size)
template <typename... P>
static void dpprof__smem_optin(void (*kernel)(P...), size_t bytes, const char *what) {
    if (bytes <= 48 * 1024) return;
    dpprof__cu_post(what, cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}

// ---- device runtime -------------------------------------------------------------------------------
extern "C" const char *dpprof_cuda_last_error(void) { return dpprof_cu_err; }

extern "C" int dpprof_cuda_device_count(int *count) {
    int n = 0;
    int rc = DPPROF_CU(cudaGetDeviceCount(&n));
    if (count) *count = rc == DPPROF_OK ? n : 0;
    // no driver or no device is an answer (zero GPUs), not a failure of the caller
    return rc == DPPROF_ERR_NO_DEVICE ? DPPROF_OK : rc;
}

extern "C" int dpprof_cuda_device_info(int device, dpprof_device_info *info) {
    cudaDeviceProp prop;
    int rc;
    if (!info) return DPPROF_ERR_INVALID;
    std::memset(info, 0, sizeof *info);
    if ((rc = DPPROF_CU(cudaGetDeviceProperties(&prop, device))) != DPPROF_OK) return rc;
    std::memcpy(info->name, prop.name, sizeof info->name - 1); // device names fit; truncate quietly if not
    info->name[sizeof info->name - 1] = 0;
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    if ((rc = DPPROF_CU(cudaDriverGetVersion(&info->driver_version))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaRuntimeGetVersion(&info->runtime_version))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaDeviceGetAttribute(&info->clock_khz, cudaDevAttrClockRate, device))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaDeviceGetAttribute(&info->mem_clock_khz, cudaDevAttrMemoryClockRate, device))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaDeviceGetAttribute(&info->bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaSetDevice(device))) != DPPROF_OK) return rc;
    return DPPROF_CU(cudaMemGetInfo(&info->free_bytes, &info->total_bytes));
}

extern "C" int dpprof_cuda_init(int device) {
    int rc;
    cublasStatus_t st;
    if (dpprof__cu.ready) return device == dpprof__cu.device ? DPPROF_OK : DPPROF_ERR_INVALID;
    if ((rc = DPPROF_CU(cudaSetDevice(device))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaStreamCreateWithFlags(&dpprof__cu.stream, cudaStreamNonBlocking))) != DPPROF_OK) return rc;
    {
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        if ((rc = DPPROF_CU(cudaDeviceGetDefaultMemPool(&pool, device))) != DPPROF_OK) return rc;
        if ((rc = DPPROF_CU(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep))) != DPPROF_OK) return rc;
    }
    st = cublasCreate(&dpprof__cu.blas);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(dpprof__cu.blas, dpprof__cu.stream);
    // fp32 means fp32: no tf32 tensor cores behind the user's back (the cpu comparison needs it)
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(dpprof__cu.blas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        std::snprintf(dpprof_cu_err, sizeof dpprof_cu_err, "cuBLAS initialisation: %s", cublasGetStatusString(st));
        return st == CUBLAS_STATUS_ALLOC_FAILED ? DPPROF_ERR_OOM : DPPROF_ERR_CUDA;
    }
    dpprof__cu.device = device;
    dpprof__cu.ready = 1;
    dpprof__cu.err = 0;
    return DPPROF_OK;
}

// stream-ordered allocation: a free does not wait for the device (cudaFree would synchronise the
// whole device at every activation the backward releases); the pool keeps what it got from the
// driver (release threshold: everything), like a framework's caching allocator, so the driver's
// figure is the pool's high-water mark
extern "C" int dpprof_cuda_alloc(void **ptr, size_t bytes) {
    int rc;
    if (!ptr) return DPPROF_ERR_INVALID;
    *ptr = nullptr;
    if (!dpprof__cu.ready) {
        std::snprintf(dpprof_cu_err, sizeof dpprof_cu_err, "dpprof_cuda_alloc: dpprof_cuda_init was not called");
        return DPPROF_ERR_INVALID;
    }
    rc = DPPROF_CU(cudaMallocAsync(ptr, bytes ? bytes : 1, dpprof__cu.stream));
    if (rc != DPPROF_OK) *ptr = nullptr;
    return rc;
}

extern "C" void dpprof_cuda_release(void *ptr) {
    if (ptr) dpprof__cu_post("cudaFreeAsync", cudaFreeAsync(ptr, dpprof__cu.stream));
}

extern "C" int dpprof_cuda_copy(void *dst, const void *src, size_t bytes, int dir) {
    cudaMemcpyKind kind = dir == DPPROF_COPY_H2D ? cudaMemcpyHostToDevice : dir == DPPROF_COPY_D2H ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
    if (dir < DPPROF_COPY_H2D || dir > DPPROF_COPY_D2D) return DPPROF_ERR_INVALID;
    if (!bytes) return DPPROF_OK;
    if (dpprof__cu.err) return dpprof__cu.err;
    dpprof__cu_post("cudaMemcpyAsync", cudaMemcpyAsync(dst, src, bytes, kind, dpprof__cu.stream));
    // the host may reuse or read its buffer as soon as this returns
    if (dir != DPPROF_COPY_D2D) return dpprof_cuda_sync();
    return dpprof__cu.err;
}

extern "C" int dpprof_cuda_zero(void *dst, size_t bytes) {
    if (!bytes) return DPPROF_OK;
    if (dpprof__cu.err) return dpprof__cu.err;
    dpprof__cu_post("cudaMemsetAsync", cudaMemsetAsync(dst, 0, bytes, dpprof__cu.stream));
    return dpprof__cu.err;
}

extern "C" int dpprof_cuda_sync(void) {
    if (!dpprof__cu.ready) return DPPROF_OK;
    dpprof__cu_post("the queued gpu work", cudaStreamSynchronize(dpprof__cu.stream));
    return dpprof__cu.err;
}

extern "C" int dpprof_cuda_set_workspace(void *ptr, size_t bytes) {
    cublasStatus_t st;
    if (!dpprof__cu.ready) return DPPROF_ERR_INVALID;
    if (!ptr || bytes < DPPROF_WORKSPACE_BYTES) {
        std::snprintf(dpprof_cu_err, sizeof dpprof_cu_err, "the workspace needs %zu bytes, got %zu", (size_t)DPPROF_WORKSPACE_BYTES, bytes);
        return DPPROF_ERR_INVALID;
    }
    st = cublasSetWorkspace(dpprof__cu.blas, ptr, DPPROF_CUBLAS_WORKSPACE_BYTES);
    if (st != CUBLAS_STATUS_SUCCESS) {
        std::snprintf(dpprof_cu_err, sizeof dpprof_cu_err, "cublasSetWorkspace: %s", cublasGetStatusString(st));
        return DPPROF_ERR_CUDA;
    }
    dpprof__cu.scratch = (unsigned char *)ptr + DPPROF_CUBLAS_WORKSPACE_BYTES;
    dpprof__cu.scratch_bytes = bytes - DPPROF_CUBLAS_WORKSPACE_BYTES;
    return DPPROF_OK;
}

extern "C" int dpprof_cuda_mem_used(size_t *used) {
    size_t fr = 0, tot = 0;
    int rc = DPPROF_CU(cudaMemGetInfo(&fr, &tot));
    if (used) *used = rc == DPPROF_OK ? tot - fr : 0;
    return rc;
}

extern "C" int dpprof_cuda_event(int *id) {
    if (!id || !dpprof__cu.ready) return DPPROF_ERR_INVALID;
    *id = -1;
    if (dpprof__cu.n_ev == dpprof__cu.cap_ev) {
        int cap = dpprof__cu.cap_ev ? 2 * dpprof__cu.cap_ev : 64;
        cudaEvent_t *ev = (cudaEvent_t *)std::realloc(dpprof__cu.ev, sizeof(cudaEvent_t) * (size_t)cap);
        if (!ev) return DPPROF_ERR_OOM;
        dpprof__cu.ev = ev;
        dpprof__cu.cap_ev = cap;
    }
    if (dpprof__cu.n_ev == dpprof__cu.made_ev) {
        int rc = DPPROF_CU(cudaEventCreate(&dpprof__cu.ev[dpprof__cu.n_ev]));
        if (rc != DPPROF_OK) return rc;
        dpprof__cu.made_ev++;
    }
    dpprof__cu_post("cudaEventRecord", cudaEventRecord(dpprof__cu.ev[dpprof__cu.n_ev], dpprof__cu.stream));
    if (dpprof__cu.err) return dpprof__cu.err;
    *id = dpprof__cu.n_ev++;
    return DPPROF_OK;
}

extern "C" int dpprof_cuda_event_ms(int a, int b, double *ms) {
    float f = 0;
    int rc;
    if (!ms || a < 0 || b < 0 || a >= dpprof__cu.n_ev || b >= dpprof__cu.n_ev) return DPPROF_ERR_INVALID;
    if ((rc = DPPROF_CU(cudaEventSynchronize(dpprof__cu.ev[b]))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaEventElapsedTime(&f, dpprof__cu.ev[a], dpprof__cu.ev[b]))) != DPPROF_OK) return rc;
    *ms = f;
    return DPPROF_OK;
}

extern "C" void dpprof_cuda_events_reset(void) { dpprof__cu.n_ev = 0; }

// device memory through the accountant: the bytes requested are what the report counts; the
// driver's own figure (cudaMemGetInfo) is reported beside it so the two can be compared
extern "C" int dpprof_cuda_malloc(dpprof_prof *p, void **ptr, size_t bytes, int category, int module) {
    int rc;
    if (!ptr) return DPPROF_ERR_INVALID;
    *ptr = nullptr;
    rc = DPPROF_CU(cudaMalloc(ptr, bytes ? bytes : 1));
    if (rc != DPPROF_OK) {
        *ptr = nullptr;
        std::snprintf(dpprof_cu_err, sizeof dpprof_cu_err, "cudaMalloc of %zu bytes (%s, %s) failed", bytes,
                      dpprof_category_name(category), dpprof_module_name(module));
        return rc;
    }
    rc = dpprof_track_alloc(p, *ptr, bytes, category, module);
    if (rc != DPPROF_OK) {
        cudaFree(*ptr);
        *ptr = nullptr;
    }
    return rc;
}

extern "C" int dpprof_cuda_free(dpprof_prof *p, void *ptr) {
    if (!ptr) return DPPROF_OK;
    int rc = dpprof_track_free(p, ptr);
    int rc2 = DPPROF_CU(cudaFree(ptr));
    return rc != DPPROF_OK ? rc : rc2;
}

// ==== kernels ======================================================================================
