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
// __uint_as_float, __float_as_uint, launches only through dpprof__launch, runtime calls:
// cudaMalloc/Free, cudaMallocAsync/FreeAsync, cudaDeviceGetDefaultMemPool,
// cudaMemPoolSetAttribute(ReleaseThreshold), cudaMemPoolGetAttribute(Used/ReservedMemCurrent), cudaMemPoolTrimTo, cudaMemcpyAsync,
// cudaMemsetAsync, cudaStreamCreateWithFlags/Synchronize, cudaEventCreate/Record/Synchronize/
// ElapsedTime, cudaGetDeviceCount/Properties, cudaDeviceGetAttribute (ClockRate, MemoryClockRate,
// GlobalMemoryBusWidth, MaxSharedMemoryPerBlockOptin), cudaSetDevice, cudaMemGetInfo, cudaDriverGetVersion,
// cudaRuntimeGetVersion, cudaFuncSetAttribute(MaxDynamicSharedMemorySize), cudaGetLastError,
// cudaGetErrorString; cuBLAS: cublasCreate, cublasSetStream, cublasSetWorkspace, cublasSetMathMode, cublasSetPointerMode,
// cublasSgemm, cublasSgemmStridedBatched, cublasGemmEx, cublasGemmStridedBatchedEx (CUDA_R_32F and CUDA_R_16BF operands,
// CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), cublasGetStatusString; NCCL (DPPROF_NCCL): ncclGetUniqueId, ncclCommInitRank,
// ncclCommDestroy, ncclAllReduce, ncclReduceScatter, ncclAllGather, ncclReduce, ncclBroadcast (ncclFloat, ncclSum),
// ncclGroupStart/End, ncclGetErrorString. tensor cores: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 as
// inline ptx (dpprof__mma_bf16; the emulator's cuemu_mma_m16n8k16_bf16). bf16 storage needs no cuda_bf16.h:
// the kernels' bf16 is a 16-bit struct of their own.
#include "dpprof.h"

#ifdef DPPROF_CUEMU
#if defined(DPPROF_NCCL) && !defined(CUEMU_NCCL)
#define CUEMU_NCCL // the emulator's NCCL, over MPI
#endif
#include "cuemu.h"
#else
#include <cuda_runtime.h>
#include <cublas_v2.h>
// clang-format off
#if defined(DPPROF_CUDNN) && !defined(__CUDA_ARCH__) // cuDNN's fused attention through its frontend (header-only C++; host
                                                     // code, not parsed again for each device architecture), before dpprof's macros
// clang-format on
#define CUDNN_FRONTEND_SKIP_JSON_LIB
#include <cstring> // the frontend uses std::strlen without it
#include <cudnn.h>
#include <cudnn_frontend.h>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>
#endif
#endif
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

// ---- state: one device, one stream, one cuBLAS handle, the first error --------------------------
struct dpprof__cu_state {
    int ready, device;
    cudaStream_t stream;
    cublasHandle_t blas;
    int err;                // first error of anything queued (DPPROF_ERR_*), 0 while none
    void *ws;               // the workspace buffer cuBLAS and the scratch point into (dpprof_cuda_set_workspace)
    unsigned char *scratch; // the kernels' part of the workspace
    size_t scratch_bytes;
    cudaEvent_t *ev; // recorded events; created ones are reused after a reset
    int n_ev, cap_ev, made_ev;
    int bf16;                   // activations stored as bf16 (dpprof_cuda_set_storage), else fp32
    dpprof_cuda_tuning tune;    // the kernel choices (dpprof_cuda_set_tuning); all zero: the defaults
    int attn_rows_default;      // the forward's: 128 on sm_90 and newer (measured faster on an H100 and an H200), 64 before
                                // (unmeasured); set by dpprof_cuda_init. the backward's is 64 (dpprof__attn_bwd_rows)
    int attn_warp_rows_default; // the forward's: 32 on sm_90 and newer (measured faster on an H200), 16 before; set by dpprof_cuda_init.
                                // the dq kernel's is 16 (dpprof__attn_bwd_warp_rows)
    int smem_optin;             // the device's most dynamic shared memory per block (opt-in), 0 if unknown
    long long launches;         // kernels queued by dpprof__launch since dpprof_cuda_init (dpprof_cuda_launch_count)
    int cc90;                   // the device is compute capability 9.0, the only one the build's sm_90a code runs on
    long long wgmma_launches;   // kernels on wgmma queued since dpprof_cuda_init (dpprof_cuda_wgmma_count)
    long long work;             // device work queued since the process started (dpprof_cuda_work_count): kernels,
                                // cuBLAS calls (each dpprof__blas_post: a per-sample loop of GEMMs is one), memsets, copies
};
static dpprof__cu_state dpprof__cu;

static int dpprof__cu_code(cudaError_t e) {
    if (e == cudaErrorMemoryAllocation) return DPPROF_ERR_OOM;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) return DPPROF_ERR_NO_DEVICE;
    return DPPROF_ERR_CUDA;
}

// every cuda call goes through here: file:line and the runtime's words for dpprof_last_error()
static int dpprof_cu_check(cudaError_t e, const char *what, const char *file, int line) {
    if (e == cudaSuccess) return DPPROF_OK;
    dpprof_fail(0, "%s:%d: %s: %s", file, line, what, cudaGetErrorString(e));
    cudaGetLastError(); // clear a non-sticky error so the next call starts clean
    return dpprof__cu_code(e);
}
#define DPPROF_CU(call) dpprof_cu_check((call), #call, __FILE__, __LINE__)

// a queued operation failed: keep the first failure for dpprof_cuda_sync()
#if defined(__GNUC__)
static void dpprof__cu_fail(int code, const char *fmt, const char *what, const char *detail) __attribute__((format(printf, 2, 0)));
#endif
static void dpprof__cu_fail(int code, const char *fmt, const char *what, const char *detail) {
    if (dpprof__cu.err) return;
    dpprof__cu.err = code;
    dpprof_fail(code, fmt, what, detail);
}
static void dpprof__cu_post(const char *what, cudaError_t e) {
    if (e == cudaSuccess) return;
    dpprof__cu_fail(dpprof__cu_code(e), "%s: %s", what, cudaGetErrorString(e));
    cudaGetLastError();
}
static void dpprof__blas_post(const char *what, cublasStatus_t st) {
    dpprof__cu.work++;
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
    cuemu_name_next_launch(what); // the emulator's deadlock and fault messages name the op
    cuemu_launch(kernel, grid, block, smem, static_cast<P>(args)...);
#else
    kernel<<<grid, block, smem, dpprof__cu.stream>>>(static_cast<P>(args)...);
#endif
    dpprof__cu.launches++;
    dpprof__cu.work++;
    dpprof__cu_post(what, cudaGetLastError());
}

// dynamic shared memory: one declaration the emulator can replace
#ifdef DPPROF_CUEMU
#define DPPROF__SMEM_DYN(T, name) T *name = (T *)cuemu_dynamic_smem()
#else
#define DPPROF__SMEM_DYN(T, name)                                     \
    extern __shared__ __align__(16) unsigned char dpprof__smem_raw[]; \
    T *name = (T *)dpprof__smem_raw
#endif

// the kernels' scratch (part of the tracked workspace): nullptr and a queued error when too small.
// the last DPPROF__FLAG_BYTES are the non-finite flag's and never handed out
#define DPPROF__FLAG_BYTES 256
static void *dpprof__scratch(size_t bytes, const char *what) {
    if (!dpprof__cu.scratch || bytes > dpprof__cu.scratch_bytes - DPPROF__FLAG_BYTES) {
        char need[96];
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

// opt a kernel in to more than 48 KiB of dynamic shared memory (once per kernel and size); a device that
// allows less gets an error that says so (the runtime would only say "invalid argument")
template <typename... P>
static void dpprof__smem_optin(void (*kernel)(P...), size_t bytes, const char *what) {
    if (bytes <= 48 * 1024 || dpprof__cu.err) return;
    if (dpprof__cu.smem_optin > 0 && bytes > (size_t)dpprof__cu.smem_optin) {
        char d[160];
        std::snprintf(d, sizeof d, "needs %zu bytes of shared memory per block, this device allows %d", bytes, dpprof__cu.smem_optin);
        dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", what, d);
        return;
    }
    dpprof__cu_post(what, cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}

// ---- activation storage: fp32 or bf16 ------------------------------------------------------------
// every kernel that reads or writes activations is a template on their storage type A (float or
// dpprof__bf16); the entry points pick the instantiation by the mode (DPPROF__BY_STORAGE). loads widen
// to float exactly, stores round to nearest even (dpprof_bf16_from_float's bits), so the arithmetic
// between them is the fp32 kernel's and the float instantiation is the fp32 kernel unchanged
struct dpprof__bf16 {
    unsigned short bits;
};
struct alignas(4) dpprof__bf16x2 {
    unsigned short lo, hi;
}; // two bf16 in one 32-bit access
struct alignas(8) dpprof__bf16x4 {
    unsigned short x, y, z, w;
}; // four in one 64-bit access

__device__ __forceinline__ float dpprof__ld(float v) { return v; }
__device__ __forceinline__ float dpprof__ld(dpprof__bf16 v) { return __uint_as_float((unsigned)v.bits << 16); }
__device__ __forceinline__ float dpprof__bf16_widen(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
// dpprof_bf16_from_float: nan stays a quiet nan with its sign, else round to nearest even (a carry
// into the exponent is right, up to inf)
__device__ __forceinline__ unsigned short dpprof__bf16_round(float f) {
    unsigned u = __float_as_uint(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return (unsigned short)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
__device__ __forceinline__ void dpprof__st(float *p, float v) { *p = v; }
__device__ __forceinline__ void dpprof__st(dpprof__bf16 *p, float v) { p->bits = dpprof__bf16_round(v); }
// v as the storage type A holds it (bf16: rounded), widened back: what a later load of the stored v reads
template <typename A> __device__ __forceinline__ float dpprof__as_stored(float v) { return v; }
template <> __device__ __forceinline__ float dpprof__as_stored<dpprof__bf16>(float v) { return dpprof__bf16_widen(dpprof__bf16_round(v)); }

// the arithmetic of the elementwise kernels on storage A (dpprof__ew<A>::T): fp32 storage keeps the
// reference's double arithmetic; bf16 storage computes in float (sums across a row still in double). its
// error, a few fp32 ulps where no cancellation amplifies it, is far under the half bf16 ulp the result is
// rounded to, so a stored value differs from the rounded double reference only near a tie, by one ulp (the
// tests' bound for every bf16 op). the reason is speed: an H100 SM converts 16 floats to double a clock and
// does 64 double multiply-adds, against 128 float ones, and the double arithmetic of swiglu, the
// cross-entropy and rmsnorm kept those pipes busier than their bytes kept the DRAM (swiglu's forward took
// 167 us at T=1024, B=8 on the H100 where its 277 MB need 83 us at the data-sheet bandwidth)
template <typename A> struct dpprof__ew {
    typedef double T;
    static constexpr bool flt = false;
};
template <> struct dpprof__ew<dpprof__bf16> {
    typedef float T;
    static constexpr bool flt = true;
};
__device__ __forceinline__ float dpprof__ew_exp(float x) { return expf(x); }
__device__ __forceinline__ double dpprof__ew_exp(double x) { return exp(x); }

// a vector access the emulator checks (a gpu faults on a misaligned one; a cpu does not)
#ifdef DPPROF_CUEMU
static void dpprof__k_misaligned(const void *p, unsigned a) {
    if ((uintptr_t)p & (a - 1)) {
        std::fprintf(stderr, "%u-byte access at misaligned %p\n", a, p);
        std::abort();
    }
}
#endif

// the activation pointers of an op in the storage type (the api keeps float * for both)
template <typename A> static A *dpprof__act(float *p) { return reinterpret_cast<A *>(p); }
template <typename A> static const A *dpprof__act(const float *p) { return reinterpret_cast<const A *>(p); }

// fn<float>(...) or fn<dpprof__bf16>(...) by the storage mode
#define DPPROF__BY_STORAGE(fn, ...) (dpprof__cu.bf16 ? fn<dpprof__bf16>(__VA_ARGS__) : fn<float>(__VA_ARGS__))

extern "C" int dpprof_cuda_set_storage(dpprof_dtype dtype) {
    if (dtype != DPPROF_DTYPE_FP32 && dtype != DPPROF_DTYPE_BF16) {
        dpprof_fail(0, "dpprof_cuda_set_storage: dtype %d is neither fp32 nor bf16", (int)dtype);
        return DPPROF_ERR_INVALID;
    }
    dpprof__cu.bf16 = dtype == DPPROF_DTYPE_BF16;
    return DPPROF_OK;
}

extern "C" dpprof_dtype dpprof_cuda_storage(void) { return dpprof__cu.bf16 ? DPPROF_DTYPE_BF16 : DPPROF_DTYPE_FP32; }

extern "C" long long dpprof_cuda_launch_count(void) { return dpprof__cu.launches; }
extern "C" long long dpprof_cuda_work_count(void) { return dpprof__cu.work; }

extern "C" int dpprof_cuda_set_tuning(const dpprof_cuda_tuning *t) {
    static const dpprof_cuda_tuning defaults = dpprof_cuda_tuning();
    const char *bad;
    if (!t) t = &defaults;
    if ((bad = DPPROF_CUDA_TUNING_BAD(t)) != nullptr) {
        dpprof_fail(0, "dpprof_cuda_set_tuning: %s is out of its set", bad);
        return DPPROF_ERR_INVALID;
    }
    if (t->wgmma > 0 && !dpprof__cu.cc90) {
        dpprof_fail(0, "dpprof_cuda_set_tuning: wgmma runs on compute capability 9.0 only (H100, H200)%s",
                    dpprof__cu.ready ? "" : "; dpprof_cuda_init has not run");
        return DPPROF_ERR_UNSUPPORTED;
    }
    dpprof__cu.tune = *t;
    return DPPROF_OK;
}

extern "C" void dpprof_cuda_get_tuning(dpprof_cuda_tuning *t) {
    if (t) *t = dpprof__cu.tune;
}

extern "C" long long dpprof_cuda_wgmma_count(void) { return dpprof__cu.wgmma_launches; }

// ---- device runtime -------------------------------------------------------------------------------
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
    rc = DPPROF_CU(cudaMemGetInfo(&info->free_bytes, &info->total_bytes));
    // after dpprof_cuda_init the stream, pool and cuBLAS belong to its device: make that current again
    if (dpprof__cu.ready && device != dpprof__cu.device) dpprof__cu_post("cudaSetDevice", cudaSetDevice(dpprof__cu.device));
    return rc;
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
        if ((rc = DPPROF_CU(cudaDeviceGetDefaultMemPool(&pool, device))) != DPPROF_OK ||
            (rc = DPPROF_CU(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep))) != DPPROF_OK) {
            cudaStreamDestroy(dpprof__cu.stream); // a later init starts clean
            return rc;
        }
    }
    st = cublasCreate(&dpprof__cu.blas);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(dpprof__cu.blas, dpprof__cu.stream);
    // fp32 means fp32: no tf32 tensor cores behind the user's back (the cpu comparison needs it)
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(dpprof__cu.blas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        dpprof_fail(0, "cuBLAS initialisation: %s", cublasGetStatusString(st));
        if (dpprof__cu.blas) cublasDestroy(dpprof__cu.blas);
        dpprof__cu.blas = nullptr;
        cudaStreamDestroy(dpprof__cu.stream);
        return st == CUBLAS_STATUS_ALLOC_FAILED ? DPPROF_ERR_OOM : DPPROF_ERR_CUDA;
    }
    dpprof__cu.device = device;
    {
        // the forward's default attention block: on an H100 (dpprof attnbench, data/bench/2026-11-24-2135-*/attn)
        // 128 rows made forward + backward 9% faster at T = 1024 and 23% at T = 16384; on an H200 with today's kernels
        // (data/bench/2026-11-27-1100-*/attn) the forward is fastest in 128-row blocks, the backward in 64 (below)
        int major = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
            major = 0;
            cudaGetLastError();
        }
        dpprof__cu.attn_rows_default = major >= 9 ? 128 : 64;
        // 32 rows a warp at head sizes up to 64 on sm_90: each K and V fragment read once for two row blocks
        // halves the forward's shared-memory bytes a multiply-add (dpprof__attn_tc_cfg). measured on an H200
        // (attnbench at the trainer shape): the forward 0.197 ms in 128-row blocks with 32 rows a warp against
        // 0.263 with 16; the dq kernel slower with 32 (322 us against 271), so it keeps 16 by default
        dpprof__cu.attn_warp_rows_default = major >= 9 ? 32 : 16;
        int minor = 0;
        if (cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
            minor = -1;
            cudaGetLastError();
        }
        dpprof__cu.cc90 = major == 9 && minor == 0;
        // the gram norm on wgmma where its code runs: on an H200 (ncu, one flash_bk step at the trainer shape,
        // data/gpu-check/2026-11-27-1100-*) each of the first five launches took 22% less than on mma.sync
        // tune.wgmma = 0 means on where cc90 holds (dpprof__wgmma_on)
        dpprof__cu.wgmma_launches = 0;
    }
    if (cudaDeviceGetAttribute(&dpprof__cu.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
        dpprof__cu.smem_optin = 0; // unknown: cudaFuncSetAttribute will say
        cudaGetLastError();
    }
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
        dpprof_fail(0, "dpprof_cuda_alloc: dpprof_cuda_init was not called");
        return DPPROF_ERR_INVALID;
    }
    rc = DPPROF_CU(cudaMallocAsync(ptr, bytes ? bytes : 1, dpprof__cu.stream));
    if (rc != DPPROF_OK) *ptr = nullptr;
    return rc;
}

// freeing the workspace detaches it: cuBLAS (back to its own pool: cublasSetStream drops a user workspace)
// and the kernels must not write into memory the pool hands out again (the next session sets its own)
static void dpprof__cu_drop_ws(void *ptr) {
    if (!ptr || ptr != dpprof__cu.ws) return;
    dpprof__blas_post("cublasSetStream", cublasSetStream(dpprof__cu.blas, dpprof__cu.stream));
    dpprof__cu.ws = nullptr;
    dpprof__cu.scratch = nullptr;
    dpprof__cu.scratch_bytes = 0;
}

extern "C" void dpprof_cuda_release(void *ptr) {
    dpprof__cu_drop_ws(ptr);
    if (ptr) dpprof__cu_post("cudaFreeAsync", cudaFreeAsync(ptr, dpprof__cu.stream));
}

extern "C" int dpprof_cuda_copy(void *dst, const void *src, size_t bytes, int dir) {
    cudaMemcpyKind kind = dir == DPPROF_COPY_H2D ? cudaMemcpyHostToDevice : (dir == DPPROF_COPY_D2H ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
    if (dir < DPPROF_COPY_H2D || dir > DPPROF_COPY_D2D) return DPPROF_ERR_INVALID;
    if (!bytes) return DPPROF_OK;
    if (dpprof__cu.err) return dpprof__cu.err;
    dpprof__cu.work++;
    dpprof__cu_post("cudaMemcpyAsync", cudaMemcpyAsync(dst, src, bytes, kind, dpprof__cu.stream));
    // the host may reuse or read its buffer as soon as this returns
    if (dir != DPPROF_COPY_D2D) return dpprof_cuda_sync();
    return dpprof__cu.err;
}

extern "C" int dpprof_cuda_zero(void *dst, size_t bytes) {
    if (!bytes) return DPPROF_OK;
    if (dpprof__cu.err) return dpprof__cu.err;
    dpprof__cu.work++;
    dpprof__cu_post("cudaMemsetAsync", cudaMemsetAsync(dst, 0, bytes, dpprof__cu.stream));
    return dpprof__cu.err;
}

extern "C" int dpprof_cuda_sync(void) {
    if (!dpprof__cu.ready) return DPPROF_OK;
    dpprof__cu_post("the queued gpu work", cudaStreamSynchronize(dpprof__cu.stream));
    return dpprof__cu.err;
}

extern "C" int dpprof_cuda_trim(void) {
    cudaMemPool_t pool;
    int rc;
    if (!dpprof__cu.ready) return DPPROF_OK;
    if ((rc = dpprof_cuda_sync()) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaDeviceGetDefaultMemPool(&pool, dpprof__cu.device))) != DPPROF_OK) return rc;
    return DPPROF_CU(cudaMemPoolTrimTo(pool, 0));
}

extern "C" int dpprof_cuda_set_workspace(void *ptr, size_t bytes) {
    cublasStatus_t st;
    if (!dpprof__cu.ready) return DPPROF_ERR_INVALID;
    if (!ptr || bytes < DPPROF_WORKSPACE_BYTES) {
        dpprof_fail(0, "the workspace needs %zu bytes, got %zu", (size_t)DPPROF_WORKSPACE_BYTES, bytes);
        return DPPROF_ERR_INVALID;
    }
    st = cublasSetWorkspace(dpprof__cu.blas, ptr, DPPROF_CUBLAS_WORKSPACE_BYTES);
    if (st != CUBLAS_STATUS_SUCCESS) {
        dpprof_fail(0, "cublasSetWorkspace: %s", cublasGetStatusString(st));
        return DPPROF_ERR_CUDA;
    }
    dpprof__cu.ws = ptr;
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

extern "C" int dpprof_cuda_pool_usage(size_t *used, size_t *reserved) {
    cudaMemPool_t pool;
    uint64_t u = 0, r = 0;
    int rc;
    if (used) *used = 0;
    if (reserved) *reserved = 0;
    if (!dpprof__cu.ready) return DPPROF_ERR_INVALID;
    if ((rc = DPPROF_CU(cudaDeviceGetDefaultMemPool(&pool, dpprof__cu.device))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &u))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &r))) != DPPROF_OK) return rc;
    if (used) *used = (size_t)u;
    if (reserved) *reserved = (size_t)r;
    return DPPROF_OK;
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
        dpprof_fail(0, "cudaMalloc of %zu bytes (%s, %s) failed", bytes,
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
    dpprof__cu_drop_ws(ptr);
    int rc = dpprof_track_free(p, ptr);
    int rc2 = DPPROF_CU(cudaFree(ptr));
    return rc != DPPROF_OK ? rc : rc2;
}

// ==== kernels ======================================================================================

// ---- model ops: fill/init/noise, non-finite flag, matmul, embedding, rmsnorm, rope, swiglu, add,
// cross-entropy, last token, optimizers, scale. kernels are dpprof__k_model_*; every launch goes
// through dpprof__launch; nothing uses float atomics, so every output is the same bits on every run.
// element counts are size_t (grid-stride loops); rows are grid-strided too, so no grid limit is hit.

#define DPPROF__MODEL_THREADS 256
#define DPPROF__MODEL_FLAG_NONE 0x7fffffff // INT_MAX: no tensor held a nan or inf
#define DPPROF__MODEL_TILE 2048            // keys per shared-memory tile of the embedding sort

#define DPPROF__MODEL_GS(i, n) \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)(n); i += (size_t)gridDim.x * blockDim.x)

// launch over n independent items, DPPROF__MODEL_THREADS per block, grid-stride beyond the cap
#define DPPROF__MODEL_FLAT(what, kernel, n, ...) \
    dpprof__launch(what, kernel, dim3(dpprof__blocks((size_t)(n), DPPROF__MODEL_THREADS)), dim3(DPPROF__MODEL_THREADS), 0, __VA_ARGS__)

// scratch bytes usable by one op (the flag's last bytes excluded); 0 when no workspace is set
static size_t dpprof__model_avail(void) {
    if (!dpprof__cu.scratch || dpprof__cu.scratch_bytes <= DPPROF__FLAG_BYTES) return 0;
    return dpprof__cu.scratch_bytes - DPPROF__FLAG_BYTES;
}

// ---- reductions: fixed trees, so the same bits every run ----------------------------------------
// xor butterflies: every lane ends with the same bits (a+b == b+a in ieee arithmetic)
__device__ __forceinline__ double dpprof__k_model_warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float dpprof__k_model_warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// sum over the block (blockDim.x a multiple of 32); every thread gets the same bits. buf: 32 shared doubles
__device__ double dpprof__k_model_block_sum(double v, double *buf) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = dpprof__k_model_warp_sum(v);
    __syncthreads(); // buf may still be read from a previous call
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    return dpprof__k_model_warp_sum(lane < nw ? buf[lane] : 0.0);
}
__device__ float dpprof__k_model_block_max(float v, float *buf) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = dpprof__k_model_warp_max(v);
    __syncthreads();
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    return dpprof__k_model_warp_max(lane < nw ? buf[lane] : -INFINITY);
}

// ---- fill, initialisation, noise: bit for bit the cpu's ------------------------------------------
// out (n) = value. grid-stride, one write per element
__global__ void dpprof__k_model_fill(float *out, size_t n, float value) {
    DPPROF__MODEL_GS(i, n) out[i] = value;
}

// out[e] = (float)(stddev * dpprof_normal(seed, stream, e)). one thread per philox block of four
// elements (one philox call gives all four); DPPROF__MUL is __dmul_rn on the device, never fused
// O = dpprof__bf16: the same float rounded (dpprof_init_normal_bf16_gpu)
template <typename O>
__global__ void dpprof__k_model_init_normal(O *out, size_t n, double stddev, uint64_t seed, uint64_t stream) {
    DPPROF__MODEL_GS(q, (n + 3) / 4) {
        double z[4];
        dpprof_normal4(dpprof_noise_seed(seed), stream, (uint64_t)q, z);
        for (int l = 0; l < 4; l++) {
            size_t e = 4 * q + (size_t)l;
            if (e < n) dpprof__st(&out[e], (float)DPPROF__MUL(stddev, z[l]));
        }
    }
}

extern "C" void dpprof_fill_gpu(float *out, size_t n, float value) {
    if (!n) return;
    DPPROF__MODEL_FLAT("dpprof_fill_gpu", dpprof__k_model_fill, n, out, n, value);
}

extern "C" void dpprof_init_normal_gpu(float *out, size_t n, double stddev, uint64_t seed, uint64_t stream) {
    if (!n) return;
    DPPROF__MODEL_FLAT("dpprof_init_normal_gpu", dpprof__k_model_init_normal<float>, (n + 3) / 4, out, n, stddev, seed, stream);
}

extern "C" void dpprof_init_normal_bf16_gpu(dpprof_bf16 *out, size_t n, double stddev, uint64_t seed, uint64_t stream) {
    if (!n) return;
    DPPROF__MODEL_FLAT("dpprof_init_normal_bf16_gpu", dpprof__k_model_init_normal<dpprof__bf16>, (n + 3) / 4, reinterpret_cast<dpprof__bf16 *>(out), n, stddev, seed, stream);
}

// ---- non-finite flag: an int in the last DPPROF__FLAG_BYTES of the scratch -----------------------
static int *dpprof__model_flag(const char *what) {
    if (!dpprof__cu.scratch || dpprof__cu.scratch_bytes < DPPROF__FLAG_BYTES) {
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", what, "no workspace set (dpprof_cuda_set_workspace)");
        return nullptr;
    }
    return (int *)(dpprof__cu.scratch + dpprof__cu.scratch_bytes - DPPROF__FLAG_BYTES);
}

// *flag = INT_MAX (a memset cannot write it). one thread
__global__ void dpprof__k_model_flag_reset(int *flag) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *flag = DPPROF__MODEL_FLAG_NONE;
}

// ---- matmul: cuBLAS sgemm. row-major (R,C) is column-major (C,R), so out^T = W inp^T etc. ------
// fp32 accumulation inside cuBLAS (default math, no tf32); the reference sums in double. bf16 storage:
// cublasGemmEx on bf16 operands (tensor cores) with fp32 compute, out and dinp stored as bf16 (dinp
// widened, accumulated in fp32, rounded), dweight fp32
static cublasStatus_t dpprof__gemm_bf16(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const void *A, int lda, const void *B,
                                        int ldb, float beta, void *C, cudaDataType ctype, int ldc) {
    return cublasGemmEx(dpprof__cu.blas, ta, tb, m, n, k, &alpha, A, CUDA_R_16BF, lda, B, CUDA_R_16BF, ldb, &beta, C, ctype, ldc, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
}

extern "C" void dpprof_matmul_fwd_gpu(float *out, const float *inp, const float *weight, int N, int IC, int OC) {
    const float one = 1.0f, zero = 0.0f;
    if (N <= 0 || OC <= 0 || dpprof__cu.err) return;
    if (IC <= 0) { // empty dot products: zeros (+0 is all zero bits in both storages)
        if (dpprof__cu.bf16) dpprof__cu.work++, dpprof__cu_post("dpprof_matmul_fwd_gpu", cudaMemsetAsync(out, 0, (size_t)N * OC * sizeof(dpprof__bf16), dpprof__cu.stream));
        else dpprof_fill_gpu(out, (size_t)N * OC, 0.0f);
        return;
    }
    // out_cm (OC,N) = W_cm^T (OC,IC) @ inp_cm (IC,N)
    if (dpprof__cu.bf16) dpprof__blas_post("dpprof_matmul_fwd_gpu", dpprof__gemm_bf16(CUBLAS_OP_T, CUBLAS_OP_N, OC, N, IC, 1.0f, weight, IC, inp, IC, 0.0f, out, CUDA_R_16BF, OC));
    else dpprof__blas_post("dpprof_matmul_fwd_gpu", cublasSgemm(dpprof__cu.blas, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, IC, &one, weight, IC, inp, IC, &zero, out, OC));
}

extern "C" void dpprof_matmul_bwd_gpu(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight, int N, int IC, int OC) {
    const float one = 1.0f;
    if (N <= 0 || IC <= 0 || OC <= 0 || dpprof__cu.err) return; // nothing to add
    if (dpprof__cu.bf16) {
        if (dinp) dpprof__blas_post("dpprof_matmul_bwd_gpu (dinp)", dpprof__gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_N, IC, N, OC, 1.0f, weight, IC, dout, OC, 1.0f, dinp, CUDA_R_16BF, IC));
        if (dweight) dpprof__blas_post("dpprof_matmul_bwd_gpu (dweight)", dpprof__gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, N, 1.0f, inp, IC, dout, OC, 1.0f, dweight, CUDA_R_32F, IC));
        return;
    }
    // dinp_cm (IC,N) += W_cm (IC,OC) @ dout_cm (OC,N)
    if (dinp) dpprof__blas_post("dpprof_matmul_bwd_gpu (dinp)", cublasSgemm(dpprof__cu.blas, CUBLAS_OP_N, CUBLAS_OP_N, IC, N, OC, &one, weight, IC, dout, OC, &one, dinp, IC));
    // dW_cm (IC,OC) += inp_cm (IC,N) @ dout_cm^T (N,OC)
    if (dweight) dpprof__blas_post("dpprof_matmul_bwd_gpu (dweight)", cublasSgemm(dpprof__cu.blas, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, N, &one, inp, IC, dout, OC, &one, dweight, IC));
}

// ---- embedding ------------------------------------------------------------------------------------
// out (N,C) = wte rows tokens[n]. grid-stride over N*C, coalesced reads of each row
// W: the table's type (float, or dpprof__bf16 for a frozen table stored in bf16 alone)
template <typename A, typename W>
__global__ void dpprof__k_model_emb_fwd(A *out, const int *tokens, const W *wte, size_t N, size_t C) {
    DPPROF__MODEL_GS(i, N * C) {
        size_t n = i / C, c = i - n * C;
        dpprof__st(&out[i], dpprof__ld(wte[(size_t)tokens[n] * C + c]));
    }
}

template <typename A>
static void dpprof__model_emb_fwd(float *out, const int *tokens, const float *wte, int N, int C) {
    DPPROF__MODEL_FLAT("dpprof_embedding_fwd_gpu", (dpprof__k_model_emb_fwd<A, float>), (size_t)N * C, dpprof__act<A>(out), tokens, wte, (size_t)N, (size_t)C);
}

template <typename A>
static void dpprof__model_emb_fwd_bf16(float *out, const int *tokens, const dpprof__bf16 *wte, int N, int C) {
    DPPROF__MODEL_FLAT("dpprof_embedding_fwd_bf16_gpu", (dpprof__k_model_emb_fwd<A, dpprof__bf16>), (size_t)N * C, dpprof__act<A>(out), tokens, wte, (size_t)N, (size_t)C);
}

extern "C" void dpprof_embedding_fwd_gpu(float *out, const int *tokens, const float *wte, int N, int C) {
    if (N <= 0 || C <= 0) return;
    DPPROF__BY_STORAGE(dpprof__model_emb_fwd, out, tokens, wte, N, C);
}

extern "C" void dpprof_embedding_fwd_bf16_gpu(float *out, const int *tokens, const dpprof_bf16 *wte, int N, int C) {
    if (N <= 0 || C <= 0) return;
    DPPROF__BY_STORAGE(dpprof__model_emb_fwd_bf16, out, tokens, reinterpret_cast<const dpprof__bf16 *>(wte), N, C);
}

// the backward sorts the keys (token << 32 | position) of a chunk of positions (bitonic sort, keys are
// unique so the order is canonical), then sums each token's rows in position order in double, like
// the reference: deterministic, no atomics, O(N log^2 N) sort + one read of dout.

// key[i] = token(n0+i) << 32 | i for i < P, all ones up to Npad (a power of two). grid-stride
__global__ void dpprof__k_model_emb_keys(unsigned long long *key, const int *tokens, size_t P, size_t Npad) {
    DPPROF__MODEL_GS(i, Npad) key[i] = i < P ? ((unsigned long long)(unsigned)tokens[i] << 32) | (unsigned long long)i : ~0ull;
}

__device__ __forceinline__ void dpprof__k_model_cmpx(unsigned long long *a, size_t i, size_t l, bool up) {
    unsigned long long x = a[i], y = a[l];
    if (up ? x > y : x < y) {
        a[i] = y;
        a[l] = x;
    }
}

// bitonic stages inside one tile of `tile` keys (<= DPPROF__MODEL_TILE, a power of two) in shared
// memory: for k = kfirst..klast (doubling), the steps j < tile. kfirst 2, klast tile: sorts the tile
// (direction by the global index, ready for the merges). grid: Npad/tile blocks of tile/2 threads;
// traffic: one read and one write of the keys
__global__ void dpprof__k_model_emb_sort_tile(unsigned long long *key, unsigned tile, size_t kfirst, size_t klast) {
    __shared__ unsigned long long s[DPPROF__MODEL_TILE];
    size_t base = (size_t)blockIdx.x * tile;
    for (unsigned i = threadIdx.x; i < tile; i += blockDim.x) s[i] = key[base + i];
    __syncthreads();
    for (size_t k = kfirst; k <= klast; k <<= 1) {
        for (unsigned j = (unsigned)((k < tile ? k : tile) / 2); j > 0; j >>= 1) {
            for (unsigned t = threadIdx.x; t < tile / 2; t += blockDim.x) {
                unsigned i = ((t & ~(j - 1)) << 1) | (t & (j - 1));
                dpprof__k_model_cmpx(s, i, i + j, ((base + i) & k) == 0);
            }
            __syncthreads();
        }
    }
    for (unsigned i = threadIdx.x; i < tile; i += blockDim.x) key[base + i] = s[i];
}

// one bitonic step (k, j >= tile) over all Npad keys in global memory: one thread per compared pair
__global__ void dpprof__k_model_emb_sort_step(unsigned long long *key, size_t Npad, size_t j, size_t k) {
    DPPROF__MODEL_GS(t, Npad / 2) {
        size_t i = ((t & ~(j - 1)) << 1) | (t & (j - 1));
        dpprof__k_model_cmpx(key, i, i + j, (i & k) == 0);
    }
}

// dwte[tok, c] = (float)(dwte[tok, c] + sum in double of dout rows of tok in position order), as the
// reference. grid (ceil(C/blockDim), min(P, 65535)): blockIdx.y strides over sorted keys and acts on
// the first key of each token; threads over columns, so each dout row read is coalesced
template <typename A>
__global__ void dpprof__k_model_emb_acc(float *dwte, const A *dout, const unsigned long long *key, size_t P, size_t C) {
    size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    for (size_t s = blockIdx.y; s < P; s += gridDim.y) {
        unsigned long long tok = key[s] >> 32;
        if (s > 0 && (key[s - 1] >> 32) == tok) continue; // not the token's first position
        double acc = 0.0;
        for (size_t m = s; m < P && (key[m] >> 32) == tok; m++) acc += (double)dpprof__ld(dout[(size_t)(key[m] & 0xffffffffull) * C + c]);
        float *dw = dwte + (size_t)tok * C + c;
        *dw = (float)(*dw + acc);
    }
}

template <typename A>
static void dpprof__model_emb_bwd(float *dwte, const float *dout_, const int *tokens, int N, int C) {
    const char *what = "dpprof_embedding_bwd_gpu";
    const A *dout = dpprof__act<A>(dout_);
    size_t avail = dpprof__model_avail(), cap = 1, n0;
    if (N <= 0 || C <= 0) return;
    // positions per chunk: the largest power of two whose keys fit the scratch (2^19 with 8 MiB).
    // a token spanning chunks is added once per chunk (the reference adds one double sum)
    while (cap * 2 * sizeof(unsigned long long) <= avail) cap *= 2;
    for (n0 = 0; n0 < (size_t)N; n0 += cap) {
        size_t P = (size_t)N - n0 < cap ? (size_t)N - n0 : cap, Npad = 2, k, j;
        unsigned tile;
        while (Npad < P) Npad *= 2;
        unsigned long long *key = (unsigned long long *)dpprof__scratch(Npad * sizeof(unsigned long long), what);
        if (!key) return;
        DPPROF__MODEL_FLAT(what, dpprof__k_model_emb_keys, Npad, key, tokens + n0, P, Npad);
        tile = (unsigned)(Npad < DPPROF__MODEL_TILE ? Npad : DPPROF__MODEL_TILE);
        dpprof__launch(what, dpprof__k_model_emb_sort_tile, dim3((unsigned)(Npad / tile)), dim3(tile / 2), 0, key, tile, (size_t)2, (size_t)tile);
        for (k = 2 * (size_t)tile; k <= Npad; k *= 2) {
            for (j = k / 2; j >= tile; j /= 2)
                DPPROF__MODEL_FLAT(what, dpprof__k_model_emb_sort_step, Npad / 2, key, Npad, j, k);
            dpprof__launch(what, dpprof__k_model_emb_sort_tile, dim3((unsigned)(Npad / tile)), dim3(tile / 2), 0, key, tile, k, k);
        }
        dim3 grid((unsigned)(((size_t)C + 127) / 128), (unsigned)(P < 65535 ? P : 65535));
        dpprof__launch(what, dpprof__k_model_emb_acc<A>, grid, dim3(128), 0, dwte, dout + n0 * (size_t)C, (const unsigned long long *)key, P, (size_t)C);
    }
}

extern "C" void dpprof_embedding_bwd_gpu(float *dwte, const float *dout, const int *tokens, int N, int C) {
    DPPROF__BY_STORAGE(dpprof__model_emb_bwd, dwte, dout, tokens, N, C);
}

// ---- rmsnorm: one warp per row, sums in double (per-lane strided partials, then a xor butterfly) ----
// the row kernels, for rows the 16-byte vector kernels further down do not take. a lane takes the
// columns lane, lane + 32, ... of its row, DPPROF__RMS_U of them per batch: the batch's
// loads are all issued before any is used, so a warp keeps U requests per array in flight instead of
// one (the row loops were latency-bound: 7% of DRAM bandwidth in the backward on an H100, ncu). the
// per-lane order of the sums is the column order, as one column at a time
#define DPPROF__RMS_U 8
#ifdef DPPROF_CUEMU // the emulator's host compiler unrolls as it likes
#define DPPROF__UNROLL
#else
#define DPPROF__UNROLL _Pragma("unroll")
#endif

// ---- vectors of activations: V consecutive elements in one global access ------------------------
// V = 16 / sizeof(A) (8 bf16 or 4 floats: one 16-byte access), 2 or 1, by what the pointers' alignment
// allows (dpprof__vw). a pack is V elements as they lie in memory; it moves through a word of its size
// (uint4 for 16 bytes), so a warp's accesses are whole sectors
template <int BYTES> struct dpprof__word;
template <> struct dpprof__word<2> { typedef unsigned short T; };
template <> struct dpprof__word<4> { typedef unsigned T; };
template <> struct dpprof__word<8> { typedef unsigned long long T; };
#ifdef DPPROF_CUEMU
struct alignas(16) dpprof__w128 {
    unsigned long long a, b;
};
template <> struct dpprof__word<16> { typedef dpprof__w128 T; };
#else
template <> struct dpprof__word<16> { typedef uint4 T; };
#endif
template <typename A, int V>
struct alignas(V * sizeof(A)) dpprof__pack { A e[V]; };

// v = elements i .. i + V - 1 of p widened to float, 0 at and past n; one access when all are below n
// (p + i then V * sizeof(A)-aligned), else one by one
template <typename A, int V>
__device__ __forceinline__ void dpprof__ldn(float (&v)[V], const A *p, size_t i, size_t n) {
    if (i + V <= n) {
        dpprof__pack<A, V> w;
#ifdef DPPROF_CUEMU
        dpprof__k_misaligned(p + i, (unsigned)sizeof w);
        std::memcpy(&w, p + i, sizeof w);
#else
        typedef typename dpprof__word<V * sizeof(A)>::T W;
        *reinterpret_cast<W *>(&w) = *reinterpret_cast<const W *>(p + i);
#endif
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) v[l] = dpprof__ld(w.e[l]);
    } else {
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) v[l] = i + l < n ? dpprof__ld(p[i + l]) : 0.0f;
    }
}
// elements i .. i + V - 1 (those below n) of p = v, rounded to the storage type; one access as dpprof__ldn
template <typename A, int V>
__device__ __forceinline__ void dpprof__stn(A *p, size_t i, size_t n, const float (&v)[V]) {
    if (i + V <= n) {
        dpprof__pack<A, V> w;
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) dpprof__st(&w.e[l], v[l]);
#ifdef DPPROF_CUEMU
        dpprof__k_misaligned(p + i, (unsigned)sizeof w);
        std::memcpy(p + i, &w, sizeof w);
#else
        typedef typename dpprof__word<V * sizeof(A)>::T W;
        *reinterpret_cast<W *>(p + i) = *reinterpret_cast<const W *>(&w);
#endif
    } else {
        DPPROF__UNROLL
        for (int l = 0; l < V; l++)
            if (i + l < n) dpprof__st(&p[i + l], v[l]);
    }
}

// the widest vector these activation pointers (null ones ignored) allow: 16 / sizeof(A) elements
// when all are 16-byte aligned, 2 when all are 2 sizeof(A)-aligned, else 1
template <typename A, typename... P>
static int dpprof__vw(const P *...p) {
    const uintptr_t u = (0 | ... | (uintptr_t)p);
    return !(u & 15u) ? 16 / (int)sizeof(A) : (!(u & (2 * sizeof(A) - 1)) ? 2 : 1);
}

// ---- the gradients' non-finite check -------------------------------------------------------------
// atomicMin(flag, tag) when any of x (n) is nan or inf. grid-stride read of x, V floats a thread (4: one
// 16-byte access where x is 16-byte aligned; it reads every gradient of the step, 5.2 GB at the trainer
// shape), stops early when a smaller or equal tag is already set or this thread found one; one integer
// atomic per finding thread
template <int V>
__global__ void dpprof__k_model_nonfinite(const float *x, size_t n, int tag, int *flag) {
    if (*(volatile int *)flag <= tag) return;
    int bad = 0;
    DPPROF__MODEL_GS(j, (n + V - 1) / V) {
        float v[V];
        dpprof__ldn<float, V>(v, x, V * j, n); // 0 past n
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) bad |= !isfinite(v[l]);
        if (bad) break;
    }
    if (bad) atomicMin(flag, tag);
}

extern "C" void dpprof_nonfinite_reset_gpu(void) {
    int *flag = dpprof__model_flag("dpprof_nonfinite_reset_gpu");
    if (!flag) return;
    dpprof__launch("dpprof_nonfinite_reset_gpu", dpprof__k_model_flag_reset, dim3(1), dim3(32), 0, flag);
}

extern "C" void dpprof_nonfinite_gpu(const float *x, size_t n, int tag) {
    int *flag = dpprof__model_flag("dpprof_nonfinite_gpu");
    if (!flag || !n) return;
    if (dpprof__vw<float>(x) == 4) DPPROF__MODEL_FLAT("dpprof_nonfinite_gpu", dpprof__k_model_nonfinite<4>, (n + 3) / 4, x, n, tag, flag);
    else DPPROF__MODEL_FLAT("dpprof_nonfinite_gpu", dpprof__k_model_nonfinite<1>, n, x, n, tag, flag);
}

extern "C" int dpprof_nonfinite_result_gpu(int *tag) {
    int h = DPPROF__MODEL_FLAG_NONE, rc;
    int *flag = dpprof__model_flag("dpprof_nonfinite_result_gpu");
    if (tag) *tag = -1;
    if (!flag) return dpprof__cu.err;
    rc = dpprof_cuda_copy(&h, flag, sizeof h, DPPROF_COPY_D2H); // waits for the stream
    if (rc != DPPROF_OK) return rc;
    if (tag) *tag = h == DPPROF__MODEL_FLAG_NONE ? -1 : h;
    return DPPROF_OK;
}

// the vector width for rows of len elements at these pointers: 16 / sizeof(A) where every row is 16-byte
// aligned (len a multiple of it, every pointer 16-byte aligned), else 1
template <typename A, typename... P>
static int dpprof__rows_vw(size_t len, const P *...p) {
    constexpr int VE = 16 / (int)sizeof(A);
    return len % VE == 0 && dpprof__vw<A>(p...) == VE ? VE : 1;
}

// kernel<A, V> over n elements, a thread per V of them, V = vw (a dpprof__vw value)
#define DPPROF__MODEL_VEC(what, kernel, A, vw, n, ...)                                                   \
    do {                                                                                                 \
        constexpr int VE_ = 16 / (int)sizeof(A);                                                         \
        if ((vw) == VE_) DPPROF__MODEL_FLAT(what, (kernel<A, VE_>), ((n) + VE_ - 1) / VE_, __VA_ARGS__); \
        else if ((vw) == 2) DPPROF__MODEL_FLAT(what, (kernel<A, 2>), ((n) + 1) / 2, __VA_ARGS__);        \
        else DPPROF__MODEL_FLAT(what, (kernel<A, 1>), (n), __VA_ARGS__);                                 \
    } while (0)

// out (N,C) = inp * rstd * weight, rstd (N) = 1/sqrt(mean(inp^2) + eps). blocks of 8 warps, rows
// grid-strided; reads inp twice (the second from cache for C up to a few thousand), writes out once
template <typename A>
__global__ void dpprof__k_model_rms_fwd(A *out, float *rstd, const A *inp, const float *weight, int N, int C, float eps) {
    constexpr int U = DPPROF__RMS_U;
    int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    for (long long row = (long long)blockIdx.x * warps + (threadIdx.x >> 5); row < N; row += (long long)gridDim.x * warps) {
        const A *x = inp + (size_t)row * C;
        A *y = out + (size_t)row * C;
        double ss = 0.0, r;
        for (int c0 = lane; c0 < C; c0 += 32 * U) {
            float xv[U];
            DPPROF__UNROLL
            for (int u = 0; u < U; u++) xv[u] = c0 + 32 * u < C ? dpprof__ld(x[c0 + 32 * u]) : 0.0f;
            DPPROF__UNROLL
            for (int u = 0; u < U; u++)
                if (c0 + 32 * u < C) ss += (double)xv[u] * xv[u];
        }
        ss = dpprof__k_model_warp_sum(ss);
        r = 1.0 / sqrt(ss / C + (double)eps);
        if (lane == 0) rstd[row] = (float)r;
        for (int c0 = lane; c0 < C; c0 += 32 * U) {
            float xv[U], wv[U];
            DPPROF__UNROLL
            for (int u = 0; u < U; u++) {
                const bool in = c0 + 32 * u < C;
                xv[u] = in ? dpprof__ld(x[c0 + 32 * u]) : 0.0f;
                wv[u] = in ? weight[c0 + 32 * u] : 0.0f;
            }
            DPPROF__UNROLL
            for (int u = 0; u < U; u++)
                if (c0 + 32 * u < C) dpprof__st(&y[c0 + 32 * u], (float)(xv[u] * r * wv[u]));
        }
    }
}

// one lane's batch of the backward: g, x and w at columns c0, c0 + 32, ... (0 past C)
template <typename A, int U>
__device__ __forceinline__ void dpprof__rms_batch(float *gv, float *xv, float *wv, const A *g, const A *x, const float *w, int c0, int C) {
    DPPROF__UNROLL
    for (int u = 0; u < U; u++) {
        const bool in = c0 + 32 * u < C;
        gv[u] = in ? dpprof__ld(g[c0 + 32 * u]) : 0.0f;
        xv[u] = in ? dpprof__ld(x[c0 + 32 * u]) : 0.0f;
        wv[u] = in ? w[c0 + 32 * u] : 0.0f;
    }
}

// dinp (N,C) += r g w - x r^3/C sum_c g w x: one warp per row as the forward
template <typename A>
__global__ void dpprof__k_model_rms_bwd_dx(A *dinp, const A *dout, const A *inp, const float *weight, const float *rstd, int N, int C) {
    constexpr int U = DPPROF__RMS_U;
    int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    for (long long row = (long long)blockIdx.x * warps + (threadIdx.x >> 5); row < N; row += (long long)gridDim.x * warps) {
        const A *x = inp + (size_t)row * C, *g = dout + (size_t)row * C;
        A *dx = dinp + (size_t)row * C;
        double r = rstd[row], dot = 0.0, k;
        for (int c0 = lane; c0 < C; c0 += 32 * U) {
            float gv[U], xv[U], wv[U];
            dpprof__rms_batch<A, U>(gv, xv, wv, g, x, weight, c0, C);
            DPPROF__UNROLL
            for (int u = 0; u < U; u++)
                if (c0 + 32 * u < C) dot += (double)gv[u] * wv[u] * xv[u];
        }
        dot = dpprof__k_model_warp_sum(dot);
        k = r * r * r * dot / C;
        for (int c0 = lane; c0 < C; c0 += 32 * U) {
            float gv[U], xv[U], wv[U], dv[U];
            dpprof__rms_batch<A, U>(gv, xv, wv, g, x, weight, c0, C);
            DPPROF__UNROLL
            for (int u = 0; u < U; u++) dv[u] = c0 + 32 * u < C ? dpprof__ld(dx[c0 + 32 * u]) : 0.0f;
            DPPROF__UNROLL
            for (int u = 0; u < U; u++)
                if (c0 + 32 * u < C) dpprof__st(&dx[c0 + 32 * u], (float)(dv[u] + (r * gv[u] * wv[u] - k * xv[u])));
        }
    }
}

// dweight stage 1: part[y, c - c0] = sum over rows [y*rpc, (y+1)*rpc) of g x r, in double.
// grid (ceil(cn/128), R), threads over columns (coalesced row reads); reads dout and inp once
template <typename A>
__global__ void dpprof__k_model_rms_dw_part(double *part, const A *dout, const A *inp, const float *rstd, int N, int C, int c0, int cn, int rpc) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cn) return;
    long long r0 = (long long)blockIdx.y * rpc, r1 = r0 + rpc < N ? r0 + rpc : N;
    double acc = 0.0;
    for (long long n = r0; n < r1; n++) {
        size_t o = (size_t)n * C + c0 + c;
        acc += (double)dpprof__ld(dout[o]) * dpprof__ld(inp[o]) * (double)rstd[n];
    }
    part[(size_t)blockIdx.y * cn + c] = acc;
}

// dweight stage 2: dweight[c0 + c] += sum over y = 0..R-1 of part[y, c]: a block of 256 threads takes 32
// columns, warp w sums rows w, w + 8, ... in order (a warp reads 32 consecutive doubles of a row), then
// the 8 warp sums are added in warp order. grid (ceil(cn / 32), S): segment z sums its own R partial rows
// (part + z R cn) into dweight + z cn (the per-sample weight gradients: S samples, c0 = 0, cn = C); add 0
// overwrites instead of adding
__global__ void dpprof__k_model_rms_dw_final(float *dweight, const double *part, int c0, int cn, int R, int add) {
    __shared__ double s[8][32];
    const int cx = threadIdx.x & 31, ry = threadIdx.x >> 5, c = blockIdx.x * 32 + cx;
    double acc = 0.0;
    part += (size_t)blockIdx.y * R * cn;
    dweight += (size_t)blockIdx.y * cn;
    if (c < cn)
        for (int y = ry; y < R; y += 8) acc += part[(size_t)y * cn + c];
    s[ry][cx] = acc;
    __syncthreads();
    if (ry == 0 && c < cn) {
        double t = 0.0;
        for (int i = 0; i < 8; i++) t += s[i][cx];
        dweight[c0 + c] = (float)(add ? dweight[c0 + c] + t : t);
    }
}

// ---- rmsnorm on 16-byte vectors: a block takes one row at a time, a thread one vector of it -----------
// thread i takes the V = 16 / sizeof(A) columns from c = V i (NT threads, NT V >= C; the launcher takes
// these kernels where C % V == 0, every row is 16-byte aligned and C <= 512 V): the row stays in registers
// from its sum to its use, so every input is read from DRAM once. NT is 128, 256 or 512, the fewest
// that cover the row (512: at most 128 registers a thread). the row sum: per-thread partials in double, a
// xor butterfly per warp, then every thread adds the NT / 32 warp sums in warp order
#define DPPROF__RMS_NTMAX 512
// the sum over the block of every thread's v, the same bits in every thread. slot: two rows' warp sums
// in shared memory, used in turn (it: the block's row count so far), so one barrier a row suffices: a
// warp writes slot it & 1 again only after the next row's barrier, which every reader of it has passed
template <int NT>
__device__ __forceinline__ double dpprof__rms_block_sum(double v, double (*slot)[NT / 32], int it) {
    double *s = slot[it & 1];
    v = dpprof__k_model_warp_sum(v);
    if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0.0;
    for (int i = 0; i < NT / 32; i++) v += s[i];
    return v;
}

// this thread's weights (0 past C), once a block
template <int V>
__device__ __forceinline__ void dpprof__rms_w(float (&wv)[V], const float *weight, int C) {
    const int c = V * (int)threadIdx.x;
    DPPROF__UNROLL
    for (int l = 0; l < V; l++) wv[l] = c < C ? weight[c + l] : 0.0f;
}

// the forward of dpprof__k_model_rms_fwd on vectors: rows grid-strided; reads inp once, writes out once.
// other not null: the residual add first, sum = inp + other (as dpprof__k_model_add; sum may be inp), and the
// norm of the sum as stored (bf16: rounded), so the sum is never read back from DRAM
template <typename A, int NT>
__global__ void __launch_bounds__(NT) dpprof__k_model_rms_fwd_v(A *out, float *rstd, const A *inp, const A *other, A *sum, const float *weight, int N, int C, float eps) {
    constexpr int V = 16 / (int)sizeof(A);
    constexpr bool F = dpprof__ew<A>::flt; // bf16: float arithmetic
    __shared__ double slot[2][NT / 32];
    const int c = V * (int)threadIdx.x;
    float wv[V];
    int it = 0;
    dpprof__rms_w<V>(wv, weight, C);
    for (long long row = blockIdx.x; row < N; row += gridDim.x, it++) {
        float xv[V], yv[V];
        double ss = 0.0, r;
        dpprof__ldn<A, V>(xv, inp + (size_t)row * C, (size_t)c, (size_t)C); // zeros at and past C
        if (other) {
            dpprof__ldn<A, V>(yv, other + (size_t)row * C, (size_t)c, (size_t)C);
            DPPROF__UNROLL
            for (int l = 0; l < V; l++) xv[l] = dpprof__as_stored<A>(xv[l] + yv[l]);
            if (c < C) dpprof__stn<A, V>(sum + (size_t)row * C, (size_t)c, (size_t)C, xv);
        }
        if (F) { // the thread's V squares summed in float (each exact: 16 significant bits), then in double
            float sf = 0.0f;
            DPPROF__UNROLL
            for (int l = 0; l < V; l++) sf += xv[l] * xv[l];
            ss = sf;
        } else {
            DPPROF__UNROLL
            for (int l = 0; l < V; l++) ss += (double)xv[l] * xv[l];
        }
        ss = dpprof__rms_block_sum<NT>(ss, slot, it);
        r = 1.0 / sqrt(ss / C + (double)eps);
        if (threadIdx.x == 0) rstd[row] = (float)r;
        if (c >= C) continue;
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) yv[l] = F ? xv[l] * (float)r * wv[l] : (float)(xv[l] * r * wv[l]);
        dpprof__stn<A, V>(out + (size_t)row * C, (size_t)c, (size_t)C, yv);
    }
}

// the backward on vectors, dinp and the dweight partials in one pass: the rows are segments of T (the
// samples, or one segment of all N rows), each cut into K blocks of rpb rows; block y = z K + k takes rows
// [z T + k rpb, min(z T + (k + 1) rpb, (z + 1) T)) in order; dinp += r g w - x r^3/C sum_c g w x as
// dpprof__k_model_rms_bwd_dx, and (part not null) part[y, c] = sum over its rows of g x r in double, as
// dpprof__k_model_rms_dw_part. reads dout, inp and dinp once, writes dinp once
template <typename A, int NT>
__global__ void __launch_bounds__(NT) dpprof__k_model_rms_bwd_v(A *dinp, double *part, const A *dout, const A *inp, const float *weight, const float *rstd, int C, int rpb, int T, int K) {
    constexpr int V = 16 / (int)sizeof(A);
    constexpr bool F = dpprof__ew<A>::flt; // bf16: float arithmetic
    __shared__ double slot[2][NT / 32];
    const long long z = blockIdx.x / K, s0 = z * T, r0 = s0 + (long long)(blockIdx.x % K) * rpb, r1 = r0 + rpb < s0 + T ? r0 + rpb : s0 + T;
    const int c = V * (int)threadIdx.x;
    float wv[V];
    double dw[V];
    int it = 0;
    dpprof__rms_w<V>(wv, weight, C);
    DPPROF__UNROLL
    for (int l = 0; l < V; l++) dw[l] = 0.0;
    for (long long row = r0; row < r1; row++, it++) {
        const size_t o = (size_t)row * C;
        float gv[V], xv[V], dv[V];
        double dot = 0.0, k;
        const double r = rstd[row];
        dpprof__ldn<A, V>(gv, dout + o, (size_t)c, (size_t)C); // zeros at and past C
        dpprof__ldn<A, V>(xv, inp + o, (size_t)c, (size_t)C);
        dpprof__ldn<A, V>(dv, dinp + o, (size_t)c, (size_t)C);
        if (F) { // the thread's V terms summed in float, then in double
            float df = 0.0f;
            DPPROF__UNROLL
            for (int l = 0; l < V; l++) df += gv[l] * wv[l] * xv[l];
            dot = df;
        } else {
            DPPROF__UNROLL
            for (int l = 0; l < V; l++) dot += (double)gv[l] * wv[l] * xv[l];
        }
        dot = dpprof__rms_block_sum<NT>(dot, slot, it);
        k = r * r * r * dot / C;
        if (c >= C) continue;
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) {
            // bf16: g x is exact in float (16 significant bits, while it is a normal float), so dw gets
            // the double path's terms with one conversion instead of two
            dv[l] = F ? dv[l] + ((float)r * gv[l] * wv[l] - (float)k * xv[l]) : (float)(dv[l] + (r * gv[l] * wv[l] - k * xv[l]));
            dw[l] += F ? (double)(gv[l] * xv[l]) * r : (double)gv[l] * xv[l] * r;
        }
        dpprof__stn<A, V>(dinp + o, (size_t)c, (size_t)C, dv);
    }
    if (!part || c >= C) return;
    DPPROF__UNROLL
    for (int l = 0; l < V; l++) part[(size_t)blockIdx.x * C + c + l] = dw[l];
}

// the block size of the vector kernels for rows of C elements at these pointers (128, 256 or 512), or 0
// where they do not apply: C % V != 0, a row not 16-byte aligned, C > 512 V
template <typename A, typename... P>
static int dpprof__rms_nt(int C, const P *...p) {
    constexpr int V = 16 / (int)sizeof(A);
    int nt = 128;
    if (dpprof__rows_vw<A>((size_t)C, p...) != V) return 0;
    while (nt < DPPROF__RMS_NTMAX && C > nt * V) nt *= 2;
    return C <= nt * V ? nt : 0;
}

// kernel<A, nt> for nt = 128, 256 or 512
#define DPPROF__RMS_LAUNCH(what, kernel, A, nt, grid, ...)                                                        \
    do {                                                                                                          \
        if ((nt) == 128) dpprof__launch(what, (kernel<A, 128>), grid, dim3(128), 0, __VA_ARGS__);                 \
        else if ((nt) == 256) dpprof__launch(what, (kernel<A, 256>), grid, dim3(256), 0, __VA_ARGS__);            \
        else dpprof__launch(what, (kernel<A, DPPROF__RMS_NTMAX>), grid, dim3(DPPROF__RMS_NTMAX), 0, __VA_ARGS__); \
    } while (0)

template <typename A>
static void dpprof__model_rms_fwd(float *out, float *rstd, const float *inp, const float *weight, int N, int C, float eps) {
    const char *what = "dpprof_rmsnorm_fwd_gpu";
    const int nt = dpprof__rms_nt<A>(C, out, inp);
    if (nt) { // four rows a block: the weights are read once for them
        DPPROF__RMS_LAUNCH(what, dpprof__k_model_rms_fwd_v, A, nt, dim3(dpprof__blocks((size_t)N, 4)), dpprof__act<A>(out), rstd, dpprof__act<A>(inp), (const A *)nullptr, (A *)nullptr, weight, N, C, eps);
        return;
    }
    dpprof__launch(what, dpprof__k_model_rms_fwd<A>, dim3(dpprof__blocks((size_t)N, 8)), dim3(256), 0, dpprof__act<A>(out), rstd, dpprof__act<A>(inp), weight, N, C, eps);
}

extern "C" void dpprof_rmsnorm_fwd_gpu(float *out, float *rstd, const float *inp, const float *weight, int N, int C, float eps) {
    if (N <= 0) return;
    // C == 0: the mean of nothing is nan in the reference (0/0); the kernel does the same division
    DPPROF__BY_STORAGE(dpprof__model_rms_fwd, out, rstd, inp, weight, N, C, eps);
}

// the residual add and the norm that follows it (dpprof_add_rmsnorm_fwd_ref) in one pass where the vector
// kernel applies; else the two ops. returns whether it ran
template <typename A>
static int dpprof__model_add_rms_fwd(float *out, float *rstd, float *res, const float *other, const float *weight, int N, int C, float eps) {
    const int nt = dpprof__rms_nt<A>(C, out, res, other);
    if (!nt) return 0;
    DPPROF__RMS_LAUNCH("dpprof_add_rmsnorm_fwd_gpu", dpprof__k_model_rms_fwd_v, A, nt, dim3(dpprof__blocks((size_t)N, 4)), dpprof__act<A>(out), rstd, dpprof__act<A>((const float *)res),
                       dpprof__act<A>(other), dpprof__act<A>(res), weight, N, C, eps);
    return 1;
}

extern "C" void dpprof_add_rmsnorm_fwd_gpu(float *out, float *rstd, float *res, const float *other, const float *weight, int N, int C, float eps) {
    if (N <= 0) return;
    if (C > 0 && DPPROF__BY_STORAGE(dpprof__model_add_rms_fwd, out, rstd, res, other, weight, N, C, eps)) return;
    if (C > 0) dpprof_add_gpu(res, res, other, (size_t)N * C);
    dpprof_rmsnorm_fwd_gpu(out, rstd, res, weight, N, C, eps);
}

// the row blocks of the fused backward: at least 16 rows a block, at most 512 blocks, as many partial rows
// of C doubles as the scratch holds; 0 when it holds none. it depends only on (N, C, scratch size), so the
// sums are the same bits every run
static int dpprof__rms_rpb(int N, int C) {
    const size_t rmax = dpprof__model_avail() / ((size_t)C * sizeof(double));
    const long long R = (long long)(rmax < 512 ? rmax : 512);
    long long rpb;
    if (R < 1) return 0;
    rpb = ((long long)N + R - 1) / R;
    return (int)(rpb < 16 ? 16 : rpb);
}

template <typename A>
static void dpprof__model_rms_bwd(float *dinp_, float *dweight, const float *dout_, const float *inp_, const float *weight, const float *rstd, int N, int C) {
    const char *what = "dpprof_rmsnorm_bwd_gpu";
    A *dinp = dpprof__act<A>(dinp_);
    const A *dout = dpprof__act<A>(dout_), *inp = dpprof__act<A>(inp_);
    const int nt = dpprof__rms_nt<A>(C, dinp, dout, inp), rpb = nt ? (dweight ? dpprof__rms_rpb(N, C) : 16) : 0;
    if (rpb) { // one pass: dinp, and each row block's dweight partial in the scratch
        const int R = (int)(((long long)N + rpb - 1) / rpb);
        double *part = dweight ? (double *)dpprof__scratch((size_t)R * C * sizeof(double), what) : nullptr;
        if (dweight && !part) return;
        DPPROF__RMS_LAUNCH(what, dpprof__k_model_rms_bwd_v, A, nt, dim3((unsigned)R), dinp, part, dout, inp, weight, rstd, C, rpb, N, R);
        if (dweight) dpprof__launch(what, dpprof__k_model_rms_dw_final, dim3((unsigned)((C + 31) / 32)), dim3(256), 0, dweight, (const double *)part, 0, C, R, 1);
        return;
    }
    dpprof__launch(what, dpprof__k_model_rms_bwd_dx<A>, dim3(dpprof__blocks((size_t)N, 8)), dim3(256), 0, dinp, dout, inp, weight, rstd, N, C);
    if (!dweight) return;
    // row chunks of at least 64 rows, at most 1024 chunks, as many as the scratch holds for cn columns;
    // the partition depends only on (N, C, scratch size), so the sums are the same bits every run
    size_t avail = dpprof__model_avail() / sizeof(double);
    int cmax = (int)(avail < (size_t)C ? avail : (size_t)C);
    if (cmax < 1) cmax = 1; // dpprof__scratch reports the missing workspace
    for (int c0 = 0; c0 < C; c0 += cmax) {
        int cn = C - c0 < cmax ? C - c0 : cmax;
        long long R = ((long long)N + 63) / 64;
        if (R > 1024) R = 1024;
        if ((size_t)R * cn > avail) R = (long long)(avail / cn);
        if (R < 1) R = 1;
        int rpc = (int)(((long long)N + R - 1) / R);
        R = ((long long)N + rpc - 1) / rpc;
        double *part = (double *)dpprof__scratch((size_t)R * cn * sizeof(double), what);
        if (!part) return;
        dpprof__launch(what, dpprof__k_model_rms_dw_part<A>, dim3((unsigned)((cn + 127) / 128), (unsigned)R), dim3(128), 0, part, dout, inp, rstd, N, C, c0, cn, rpc);
        dpprof__launch(what, dpprof__k_model_rms_dw_final, dim3((unsigned)((cn + 31) / 32)), dim3(256), 0, dweight, (const double *)part, c0, cn, (int)R, 1);
    }
}

extern "C" void dpprof_rmsnorm_bwd_gpu(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight, const float *rstd, int N, int C) {
    if (N <= 0 || C <= 0) return;
    DPPROF__BY_STORAGE(dpprof__model_rms_bwd, dinp, dweight, dout, inp, weight, rstd, N, C);
}

// the dp algorithms' backward (dpprof_rmsnorm_bwd_ps_ref): dinp, and the per-sample weight gradients from the
// same pass. each sample's T rows are cut into K blocks of at least 16 rows (at most 512 blocks in all, when
// the samples are fewer; as many n K C partials as the scratch holds), so that a block's dweight partial
// belongs to one sample; dpprof__k_model_rms_dw_final sums each sample's K partials into its row of psg.
// the partition depends only on (n, T, C, scratch size): the same bits every run. returns 0 (nothing done)
// where it does not apply: rows not on 16-byte vectors or wider than 512 of them, too little scratch for one
// partial a sample, more than 65535 samples (the grid's y)
template <typename A>
static int dpprof__model_rms_bwd_ps(float *dinp_, float *psg, const float *dout_, const float *inp_, const float *weight, const float *rstd, int n, int T, int C) {
    const char *what = "dpprof_rmsnorm_bwd_ps_gpu";
    A *dinp = dpprof__act<A>(dinp_);
    const A *dout = dpprof__act<A>(dout_), *inp = dpprof__act<A>(inp_);
    const int nt = dpprof__rms_nt<A>(C, dinp, dout, inp);
    const long long kmax = (long long)(dpprof__model_avail() / ((size_t)n * C * sizeof(double)));
    long long K = ((long long)T + 15) / 16, rpb;
    if (!nt || kmax < 1 || n > 65535) return 0;
    if (K > 512 / n) K = 512 / n;
    if (K > kmax) K = kmax;
    if (K < 1) K = 1;
    rpb = ((long long)T + K - 1) / K;
    K = ((long long)T + rpb - 1) / rpb; // no empty block
    double *part = (double *)dpprof__scratch((size_t)n * (size_t)K * C * sizeof(double), what);
    if (!part) return 1; // the error is recorded
    DPPROF__RMS_LAUNCH(what, dpprof__k_model_rms_bwd_v, A, nt, dim3((unsigned)(n * K)), dinp, part, dout, inp, weight, rstd, C, (int)rpb, T, (int)K);
    dpprof__launch(what, dpprof__k_model_rms_dw_final, dim3((unsigned)((C + 31) / 32), (unsigned)n), dim3(256), 0, psg, (const double *)part, 0, C, (int)K, 0);
    return 1;
}

extern "C" void dpprof_rmsnorm_bwd_ps_gpu(float *dinp, float *psg, const float *dout, const float *inp, const float *weight, const float *rstd, int n, int T, int C) {
    if (n <= 0 || C <= 0) return;
    if (T > 0 && DPPROF__BY_STORAGE(dpprof__model_rms_bwd_ps, dinp, psg, dout, inp, weight, rstd, n, T, C)) return;
    // else the two ops in turn (dinp alone, then the per-sample pass over dout and inp)
    if (T > 0) dpprof_rmsnorm_bwd_gpu(dinp, nullptr, dout, inp, weight, rstd, n * T, C);
    dpprof_rmsnorm_psdweight_gpu(psg, dout, inp, rstd, n, T, C);
}

// ---- rope: in place, the reference's angles in double ----------------------------------------------
// pair (x[i], x[i + HS/2]) of every head of row (b, t) rotated by sign * t * theta^(-2i/HS), the reference's
// double arithmetic (a = t * inv_freq[i], its cos and sin; the rotation in double). a block takes TB
// consecutive positions at a time (grid-strided): the inverse frequencies once a block, the TB positions'
// cos/sin tables in shared memory, then the B x NH x TB head rows; a thread takes V consecutive pairs (V
// divides HS/2), each half as one vector access where V > 1, and two such items at a time, both loaded
// before either is stored (the stores could alias the next loads for all the compiler knows, so one item
// at a time would leave one load of each thread in flight). TB (dpprof__rope_tb) gives every thread of the
// block two items where a position has fewer than that. blocks of 128 threads: 66 registers a thread
// (bf16, sm_90) let 7 blocks share an SM, 56 KiB of loads in flight (the kernel before: 10 blocks of 128
// threads with one 16-byte pair each, 40 KiB, 42% of the DRAM bandwidth). reads and writes x once
#define DPPROF__ROPE_NT 128
#define DPPROF__ROPE_TAB 1024 // table entries (TB x HS/2) a block holds
// item j of the positions from t0 (position t0 + j / per): its two halves loaded into x1 and x2, p set to
// its first element and e to its angles' index in the tables
template <typename A, int V>
__device__ __forceinline__ void dpprof__rope_item(A *x, long long j, long long per, int nv, int NH, int T, int HS, int t0, float (&x1)[V], float (&x2)[V], A *&p, int &e) {
    const int half = HS / 2, u = (int)(j / per);
    const long long r = j - (long long)u * per, bh = r / nv;
    const int i = V * (int)(r - bh * nv), b = (int)(bh / NH), h = (int)(bh - (long long)b * NH);
    p = x + (((size_t)b * T + t0 + u) * NH + h) * HS;
    e = u * half + i;
    dpprof__ldn<A, V>(x1, p, (size_t)i, (size_t)half);
    dpprof__ldn<A, V>(x2, p + half, (size_t)i, (size_t)half);
    p += i;
}
// the rotation of a loaded item, stored at p (first half) and p + half
template <typename A, int V>
__device__ __forceinline__ void dpprof__rope_rot(A *p, int e, int half, const double *cs, const double *sn, const float (&x1)[V], const float (&x2)[V]) {
    float y1[V], y2[V];
    DPPROF__UNROLL
    for (int l = 0; l < V; l++) {
        const double u1 = x1[l], u2 = x2[l];
        y1[l] = (float)(u1 * cs[e + l] - u2 * sn[e + l]);
        y2[l] = (float)(u2 * cs[e + l] + u1 * sn[e + l]);
    }
    dpprof__stn<A, V>(p, 0, (size_t)V, y1);
    dpprof__stn<A, V>(p + half, 0, (size_t)V, y2);
}
template <typename A, int V>
__global__ void __launch_bounds__(DPPROF__ROPE_NT) dpprof__k_model_rope(A *x, int B, int T, int NH, int HS, double theta, double sign, int TB) {
    __shared__ double fr[DPPROF_MAX_HEAD_SIZE / 2], cs[DPPROF__ROPE_TAB], sn[DPPROF__ROPE_TAB];
    const int half = HS / 2, nv = half / V;
    const long long per = (long long)B * NH * nv;
    for (int i = threadIdx.x; i < half; i += blockDim.x) fr[i] = pow(theta, -2.0 * i / HS);
    for (long long t0 = (long long)blockIdx.x * TB; t0 < T; t0 += (long long)gridDim.x * TB) {
        const int tn = T - t0 < TB ? (int)(T - t0) : TB;
        const long long items = per * tn;
        __syncthreads(); // fr is written; the previous positions' tables are no longer read
        for (int e = threadIdx.x; e < tn * half; e += blockDim.x) {
            const int u = e / half, i = e - u * half;
            const double a = (double)(t0 + u) * fr[i];
            cs[e] = cos(a);
            sn[e] = sign * sin(a);
        }
        __syncthreads();
        for (long long j = threadIdx.x; j < items; j += 2 * (long long)blockDim.x) {
            float a1[V], a2[V], b1[V], b2[V];
            A *pa, *pb = nullptr;
            int ea, eb = 0;
            const bool two = j + blockDim.x < items;
            dpprof__rope_item<A, V>(x, j, per, nv, NH, T, HS, (int)t0, a1, a2, pa, ea);
            if (two) dpprof__rope_item<A, V>(x, j + blockDim.x, per, nv, NH, T, HS, (int)t0, b1, b2, pb, eb);
            dpprof__rope_rot<A, V>(pa, ea, half, cs, sn, a1, a2);
            if (two) dpprof__rope_rot<A, V>(pb, eb, half, cs, sn, b1, b2);
        }
    }
}

// positions a block of dpprof__k_model_rope takes at a time: enough that its items (B x NH x HS/2/v a
// position) give every thread two, as many as its tables hold
static int dpprof__rope_tb(int B, int NH, int HS, int v) {
    const long long per = (long long)B * NH * (HS / 2 / v), want = (2 * DPPROF__ROPE_NT + per - 1) / per, most = DPPROF__ROPE_TAB / (HS / 2);
    return (int)(want < most ? want : most);
}

template <typename A>
static void dpprof__model_rope_as(const char *what, float *x_, int B, int T, int NH, int HS, double theta, double sign) {
    constexpr int VE = 16 / (int)sizeof(A);
    A *x = dpprof__act<A>(x_);
    const int half = HS / 2, vw = dpprof__vw<A>(x), v = half % VE == 0 && vw == VE ? VE : (half % 2 == 0 && vw >= 2 ? 2 : 1), tb = dpprof__rope_tb(B, NH, HS, v);
    const long long chunks = ((long long)T + tb - 1) / tb;
    const dim3 grid((unsigned)(chunks < 2048 ? chunks : 2048)), block(DPPROF__ROPE_NT);
    if (v == VE) dpprof__launch(what, dpprof__k_model_rope<A, VE>, grid, block, 0, x, B, T, NH, HS, theta, sign, tb);
    else if (v == 2) dpprof__launch(what, dpprof__k_model_rope<A, 2>, grid, block, 0, x, B, T, NH, HS, theta, sign, tb);
    else dpprof__launch(what, dpprof__k_model_rope<A, 1>, grid, block, 0, x, B, T, NH, HS, theta, sign, tb);
}

static void dpprof__model_rope(const char *what, float *x, int B, int T, int NH, int HS, double theta, double sign) {
    if (B <= 0 || T <= 0 || NH <= 0) return;
    if (HS % 2 != 0 || HS <= 0 || HS > DPPROF_MAX_HEAD_SIZE) return; // the reference does nothing either
    if (dpprof__cu.bf16) dpprof__model_rope_as<dpprof__bf16>(what, x, B, T, NH, HS, theta, sign);
    else dpprof__model_rope_as<float>(what, x, B, T, NH, HS, theta, sign);
}

extern "C" void dpprof_rope_fwd_gpu(float *x, int B, int T, int NH, int HS, double theta) {
    dpprof__model_rope("dpprof_rope_fwd_gpu", x, B, T, NH, HS, theta, 1.0);
}

extern "C" void dpprof_rope_bwd_gpu(float *dx, int B, int T, int NH, int HS, double theta) {
    dpprof__model_rope("dpprof_rope_bwd_gpu", dx, B, T, NH, HS, theta, -1.0);
}

// ---- elementwise: swiglu, add, last token -------------------------------------------------------------

// h = silu(gate) * up = gate up / (1 + exp(-gate)). grid-stride, V elements a thread; reads 2 and writes
// 1 element per element
template <typename A, int V>
__global__ void dpprof__k_model_swiglu_fwd(A *h, const A *gate, const A *up, size_t n) {
    typedef typename dpprof__ew<A>::T M;
    DPPROF__MODEL_GS(j, (n + V - 1) / V) {
        float gv[V], uv[V], hv[V];
        dpprof__ldn<A, V>(gv, gate, V * j, n);
        dpprof__ldn<A, V>(uv, up, V * j, n);
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) {
            const M g = gv[l], s = (M)1 / ((M)1 + dpprof__ew_exp(-g));
            hv[l] = (float)(g * s * (M)uv[l]);
        }
        dpprof__stn<A, V>(h, V * j, n, hv);
    }
}

// dup = dh silu(gate), dgate = dh up silu'(gate), overwritten; all inputs read before the writes. M the
// arithmetic (dpprof__ew)
template <typename M>
__device__ __forceinline__ void dpprof__model_swiglu_bwd1(float *dg, float *du, M d, M g, M u) {
    const M s = (M)1 / ((M)1 + dpprof__ew_exp(-g)), dsilu = s * ((M)1 + g * ((M)1 - s));
    *du = (float)(d * g * s);
    *dg = (float)(d * u * dsilu);
}
template <typename A, int V>
__global__ void dpprof__k_model_swiglu_bwd(A *dgate, A *dup, const A *dh, const A *gate, const A *up, size_t n) {
    typedef typename dpprof__ew<A>::T M;
    DPPROF__MODEL_GS(j, (n + V - 1) / V) {
        float dv[V], gv[V], uv[V], dgv[V], duv[V];
        dpprof__ldn<A, V>(dv, dh, V * j, n);
        dpprof__ldn<A, V>(gv, gate, V * j, n);
        dpprof__ldn<A, V>(uv, up, V * j, n);
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) dpprof__model_swiglu_bwd1<M>(&dgv[l], &duv[l], dv[l], gv[l], uv[l]);
        dpprof__stn<A, V>(dup, V * j, n, duv);
        dpprof__stn<A, V>(dgate, V * j, n, dgv);
    }
}

// out = a + b in float (out may alias a or b)
template <typename A, int V>
__global__ void dpprof__k_model_add(A *out, const A *a, const A *b, size_t n) {
    DPPROF__MODEL_GS(j, (n + V - 1) / V) {
        float av[V], bv[V], ov[V];
        dpprof__ldn<A, V>(av, a, V * j, n);
        dpprof__ldn<A, V>(bv, b, V * j, n);
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) ov[l] = av[l] + bv[l];
        dpprof__stn<A, V>(out, V * j, n, ov);
    }
}

template <typename A>
static void dpprof__model_swiglu_fwd(float *h, const float *gate, const float *up, size_t n) {
    DPPROF__MODEL_VEC("dpprof_swiglu_fwd_gpu", dpprof__k_model_swiglu_fwd, A, dpprof__vw<A>(h, gate, up), n, dpprof__act<A>(h), dpprof__act<A>(gate),
                      dpprof__act<A>(up), n);
}

template <typename A>
static void dpprof__model_swiglu_bwd(float *dgate, float *dup, const float *dh, const float *gate, const float *up, size_t n) {
    DPPROF__MODEL_VEC("dpprof_swiglu_bwd_gpu", dpprof__k_model_swiglu_bwd, A, dpprof__vw<A>(dgate, dup, dh, gate, up), n, dpprof__act<A>(dgate),
                      dpprof__act<A>(dup), dpprof__act<A>(dh), dpprof__act<A>(gate), dpprof__act<A>(up), n);
}

template <typename A>
static void dpprof__model_add(float *out, const float *a, const float *b, size_t n) {
    DPPROF__MODEL_VEC("dpprof_add_gpu", dpprof__k_model_add, A, dpprof__vw<A>(out, a, b), n, dpprof__act<A>(out), dpprof__act<A>(a), dpprof__act<A>(b), n);
}

extern "C" void dpprof_swiglu_fwd_gpu(float *h, const float *gate, const float *up, size_t n) {
    if (!n) return;
    DPPROF__BY_STORAGE(dpprof__model_swiglu_fwd, h, gate, up, n);
}

extern "C" void dpprof_swiglu_bwd_gpu(float *dgate, float *dup, const float *dh, const float *gate, const float *up, size_t n) {
    if (!n) return;
    DPPROF__BY_STORAGE(dpprof__model_swiglu_bwd, dgate, dup, dh, gate, up, n);
}

extern "C" void dpprof_add_gpu(float *out, const float *a, const float *b, size_t n) {
    if (!n) return;
    DPPROF__BY_STORAGE(dpprof__model_add, out, a, b, n);
}

// out (B,C) = inp (B,T,C) row T-1; grid-stride over B*C
template <typename A>
__global__ void dpprof__k_model_last_fwd(A *out, const A *inp, size_t B, size_t T, size_t C) {
    DPPROF__MODEL_GS(i, B * C) {
        size_t b = i / C, c = i - b * C;
        dpprof__st(&out[i], dpprof__ld(inp[(b * T + T - 1) * C + c]));
    }
}

// dinp (B,T,C) row T-1 += dout (B,C), in float as the reference
template <typename A>
__global__ void dpprof__k_model_last_bwd(A *dinp, const A *dout, size_t B, size_t T, size_t C) {
    DPPROF__MODEL_GS(i, B * C) {
        size_t b = i / C, c = i - b * C;
        A *d = dinp + (b * T + T - 1) * C + c;
        dpprof__st(d, dpprof__ld(*d) + dpprof__ld(dout[i]));
    }
}

template <typename A>
static void dpprof__model_last_fwd(float *out, const float *inp, int B, int T, int C) {
    DPPROF__MODEL_FLAT("dpprof_last_token_fwd_gpu", dpprof__k_model_last_fwd<A>, (size_t)B * C, dpprof__act<A>(out), dpprof__act<A>(inp), (size_t)B, (size_t)T,
                       (size_t)C);
}

template <typename A>
static void dpprof__model_last_bwd(float *dinp, const float *dout, int B, int T, int C) {
    DPPROF__MODEL_FLAT("dpprof_last_token_bwd_gpu", dpprof__k_model_last_bwd<A>, (size_t)B * C, dpprof__act<A>(dinp), dpprof__act<A>(dout), (size_t)B,
                       (size_t)T, (size_t)C);
}

extern "C" void dpprof_last_token_fwd_gpu(float *out, const float *inp, int B, int T, int C) {
    if (B <= 0 || T <= 0 || C <= 0) return;
    DPPROF__BY_STORAGE(dpprof__model_last_fwd, out, inp, B, T, C);
}

extern "C" void dpprof_last_token_bwd_gpu(float *dinp, const float *dout, int B, int T, int C) {
    if (B <= 0 || T <= 0 || C <= 0) return;
    DPPROF__BY_STORAGE(dpprof__model_last_bwd, dinp, dout, B, T, C);
}

// ---- cross-entropy: one block per row of logits --------------------------------------------------
// the row's max M and S = sum exp(x - M). one pass: each thread keeps an online (max, sum) over its
// strided vectors of W logits (W = 16 / sizeof(A) where the rows are 16-byte aligned, else 1; terms expf
// in fp32, sums and rescales in double; bf16 storage (dpprof__ew) sums a vector's W terms in float first,
// one conversion to double a vector instead of one a term), then block trees combine them. every thread
// returns the same M and S. bufs: 32 floats and 32 doubles of shared memory
template <typename A, int W>
__device__ void dpprof__k_model_softmax_stats(const A *x, int V, float *fbuf, double *dbuf, float *M, double *S) {
    float m = -FLT_MAX; // not -inf: a thread with only -inf logits must add expf(-inf) = 0, not nan
    double s = 0.0;
    for (int i = W * (int)threadIdx.x; i < V; i += W * (int)blockDim.x) {
        float v[W], vm = -FLT_MAX, part = 0.0f;
        dpprof__ldn<A, W>(v, x, (size_t)i, (size_t)V);
        DPPROF__UNROLL
        for (int l = 0; l < W; l++)
            if (i + l < V) vm = fmaxf(vm, v[l]);
        if (vm > m) {
            s *= exp((double)m - (double)vm);
            m = vm;
        }
        DPPROF__UNROLL
        for (int l = 0; l < W; l++)
            if (i + l < V) {
                if (!dpprof__ew<A>::flt) s += (double)expf(v[l] - m);
                else part += expf(v[l] - m);
            }
        if (dpprof__ew<A>::flt) s += (double)part;
    }
    float bm = dpprof__k_model_block_max(m, fbuf);
    *S = dpprof__k_model_block_sum(s * exp((double)m - (double)bm), dbuf);
    *M = bm;
}

// rowloss[r] = log S + (M - x[target]) for rows [row0, row0 + nrows) (double, in the scratch).
// grid: rows grid-strided; reads each logit once
template <typename A, int W>
__global__ void dpprof__k_model_ce_rows(double *rowloss, const A *logits, const int *targets, size_t row0, size_t nrows, int V) {
    __shared__ float fbuf[32];
    __shared__ double dbuf[32];
    for (size_t r = blockIdx.x; r < nrows; r += gridDim.x) {
        const A *x = logits + (row0 + r) * (size_t)V;
        float M;
        double S;
        dpprof__k_model_softmax_stats<A, W>(x, V, fbuf, dbuf, &M, &S);
        if (threadIdx.x == 0) rowloss[r] = log(S) + ((double)M - (double)dpprof__ld(x[targets[row0 + r]]));
    }
}

// losses[b0 + b] = (float)(sum over t in order of rowloss[b*T + t] / T). one thread per sample
__global__ void dpprof__k_model_ce_mean(float *losses, const double *rowloss, size_t b0, size_t nb, int T) {
    DPPROF__MODEL_GS(b, nb) {
        double total = 0.0;
        for (int t = 0; t < T; t++) total += rowloss[b * T + t];
        losses[b0 + b] = (float)(total / T);
    }
}

// dlogits = dlosses[b]/T (softmax - onehot), overwritten (bf16 storage: in float, dpprof__ew); may alias logits: the statistics of a row are
// complete (block reductions synchronise) before its first write, and each thread reads a vector just
// before writing it. reads logits twice (second time mostly from cache), writes once
template <typename A, int W>
__global__ void dpprof__k_model_ce_bwd(A *dlogits, const A *logits, const int *targets, const float *dlosses, size_t N, int T, int V) {
    __shared__ float fbuf[32];
    __shared__ double dbuf[32];
    for (size_t r = blockIdx.x; r < N; r += gridDim.x) {
        const A *x = logits + r * (size_t)V;
        A *dx = dlogits + r * (size_t)V;
        float M;
        double S;
        int y = targets[r];
        double sc = (double)dlosses[r / T] / T;
        dpprof__k_model_softmax_stats<A, W>(x, V, fbuf, dbuf, &M, &S);
        const float scf = (float)sc, rs = (float)(1.0 / S);
        for (int i = W * (int)threadIdx.x; i < V; i += W * (int)blockDim.x) {
            float v[W];
            dpprof__ldn<A, W>(v, x, (size_t)i, (size_t)V);
            DPPROF__UNROLL
            for (int l = 0; l < W; l++) {
                if (!dpprof__ew<A>::flt) {
                    const double p = (double)expf(v[l] - M) / S;
                    v[l] = (float)(sc * (i + l == y ? p - 1.0 : p));
                } else { // bf16 (dpprof__ew): a float multiply by 1/S instead of a double division
                    const float p = expf(v[l] - M) * rs;
                    v[l] = scf * (i + l == y ? p - 1.0f : p);
                }
            }
            dpprof__stn<A, W>(dx, (size_t)i, (size_t)V, v);
        }
    }
}

// threads per row of V logits read W at a time: a multiple of 32, up to 512, no more than the row needs
static unsigned dpprof__model_row_threads(int V, int W) {
    unsigned t = ((unsigned)((V + W - 1) / W) + 31) / 32 * 32;
    return t > 512 ? 512 : (t < 32 ? 32 : t);
}

template <typename A>
static void dpprof__model_ce_fwd(float *losses, const float *logits_, const int *targets, int B, int T, int V) {
    constexpr int VE = 16 / (int)sizeof(A);
    const char *what = "dpprof_crossentropy_fwd_gpu";
    const A *logits = dpprof__act<A>(logits_);
    const int w = dpprof__rows_vw<A>((size_t)V, logits);
    // whole samples per pass, as many as the scratch holds per-row losses for
    size_t per = dpprof__model_avail() / (sizeof(double) * (size_t)T), b0;
    if (per < 1) per = 1; // dpprof__scratch reports that it does not fit
    for (b0 = 0; b0 < (size_t)B; b0 += per) {
        size_t nb = (size_t)B - b0 < per ? (size_t)B - b0 : per, nrows = nb * (size_t)T;
        double *rowloss = (double *)dpprof__scratch(nrows * sizeof(double), what);
        if (!rowloss) return;
        const dim3 grid(dpprof__blocks(nrows, 1)), block(dpprof__model_row_threads(V, w));
        if (w == VE) dpprof__launch(what, dpprof__k_model_ce_rows<A, VE>, grid, block, 0, rowloss, logits, targets, b0 * (size_t)T, nrows, V);
        else dpprof__launch(what, dpprof__k_model_ce_rows<A, 1>, grid, block, 0, rowloss, logits, targets, b0 * (size_t)T, nrows, V);
        DPPROF__MODEL_FLAT(what, dpprof__k_model_ce_mean, nb, losses, (const double *)rowloss, b0, nb, T);
    }
}

extern "C" void dpprof_crossentropy_fwd_gpu(float *losses, const float *logits, const int *targets, int B, int T, int V) {
    if (B <= 0 || T <= 0 || V <= 0) return;
    DPPROF__BY_STORAGE(dpprof__model_ce_fwd, losses, logits, targets, B, T, V);
}

template <typename A>
static void dpprof__model_ce_bwd(float *dlogits_, const float *logits_, const int *targets, const float *dlosses, int B, int T, int V) {
    constexpr int VE = 16 / (int)sizeof(A);
    const char *what = "dpprof_crossentropy_bwd_gpu";
    A *dlogits = dpprof__act<A>(dlogits_);
    const A *logits = dpprof__act<A>(logits_);
    const size_t N = (size_t)B * (size_t)T;
    const int w = dpprof__rows_vw<A>((size_t)V, dlogits, logits);
    const dim3 grid(dpprof__blocks(N, 1)), block(dpprof__model_row_threads(V, w));
    if (w == VE) dpprof__launch(what, dpprof__k_model_ce_bwd<A, VE>, grid, block, 0, dlogits, logits, targets, dlosses, N, T, V);
    else dpprof__launch(what, dpprof__k_model_ce_bwd<A, 1>, grid, block, 0, dlogits, logits, targets, dlosses, N, T, V);
}

extern "C" void dpprof_crossentropy_bwd_gpu(float *dlogits, const float *logits, const int *targets, const float *dlosses, int B, int T, int V) {
    if (B <= 0 || T <= 0 || V <= 0) return;
    DPPROF__BY_STORAGE(dpprof__model_ce_bwd, dlogits, logits, targets, dlosses, B, T, V);
}

// ---- optimizers and scaling: the reference's double arithmetic, unfused (DPPROF__MUL etc. are
// __dmul_rn and friends on the device), so the results are the cpu's bits --------------------------
// an optimizer's constants: adamw (decoupled decay on the pre-update p; bc1, bc2, 1-b1, 1-b2 from the
// host as the reference's) or sgd (adam 0: lr only)
struct dpprof__opt_k {
    int adam;
    double lr, b1, b2, omb1, omb2, eps, wd, bc1, bc2;
};

// one weight's update from its gradient g, the reference's double arithmetic: p (and m, v for adam)
__device__ __forceinline__ void dpprof__opt_val(const dpprof__opt_k &k, float &p_, float &m, float &v, double g) {
    double p = p_;
    if (k.adam) {
        double mi = DPPROF__ADD(DPPROF__MUL(k.b1, (double)m), DPPROF__MUL(k.omb1, g));
        double vi = DPPROF__ADD(DPPROF__MUL(k.b2, (double)v), DPPROF__MUL(DPPROF__MUL(k.omb2, g), g));
        double mhat = DPPROF__DIV(mi, k.bc1), vhat = DPPROF__DIV(vi, k.bc2);
        p = DPPROF__SUB(p, DPPROF__MUL(k.lr, DPPROF__ADD(DPPROF__DIV(mhat, DPPROF__ADD(DPPROF__SQRT(vhat), k.eps)), DPPROF__MUL(k.wd, p))));
        m = (float)mi;
        v = (float)vi;
    } else p = DPPROF__SUB(p, DPPROF__MUL(k.lr, g));
    p_ = (float)p;
}

// element i's update in memory: param[i] (and m[i], v[i]); copy, unless null, gets the new weight's bf16
// working copy in the same pass (dpprof_cast_bf16_gpu's rounding of the stored float), so that no kernel
// reads the fp32 weight back to cast it
__device__ __forceinline__ void dpprof__opt_elem(const dpprof__opt_k &k, float *param, float *m, float *v, dpprof__bf16 *copy, size_t i, double g) {
    float p = param[i], mi = k.adam ? m[i] : 0.0f, vi = k.adam ? v[i] : 0.0f;
    dpprof__opt_val(k, p, mi, vi, g);
    param[i] = p;
    if (k.adam) m[i] = mi, v[i] = vi;
    if (copy) dpprof__st(&copy[i], p);
}

// the update of n weights from their gradients, V consecutive weights a thread (4: 16-byte accesses to
// the fp32 arrays and 8-byte ones to the copy, where dpprof__opt finds them aligned)
template <int V>
__global__ void dpprof__k_model_opt(dpprof__opt_k k, float *param, float *m, float *v, const float *grad, dpprof__bf16 *copy, size_t n) {
    DPPROF__MODEL_GS(j, (n + V - 1) / V) {
        const size_t i = V * j;
        float pv[V], mv[V], vv[V], gv[V];
        dpprof__ldn<float, V>(pv, param, i, n);
        dpprof__ldn<float, V>(gv, grad, i, n);
        if (k.adam) {
            dpprof__ldn<float, V>(mv, m, i, n);
            dpprof__ldn<float, V>(vv, v, i, n);
        } else {
            DPPROF__UNROLL
            for (int l = 0; l < V; l++) mv[l] = vv[l] = 0.0f;
        }
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) dpprof__opt_val(k, pv[l], mv[l], vv[l], (double)gv[l]);
        dpprof__stn<float, V>(param, i, n, pv);
        if (k.adam) {
            dpprof__stn<float, V>(m, i, n, mv);
            dpprof__stn<float, V>(v, i, n, vv);
        }
        if (copy) dpprof__stn<dpprof__bf16, V>(copy, i, n, pv);
    }
}

// the privatised gradient: (float)((double)acc * scale), acc = g[e] + (float)(stddev * z_{offset+e})
// (dpprof__noise_accum) when stddev > 0, else g[e]: the engine's dpprof_add_noise_ref then the division by
// the batch. UPDATE false: written to out (g itself in the engine); true: not stored, the optimizer step k taken with it at once
// (the noise and the step in one pass over the gradient). one thread per philox block q covering indices
// [4q, 4q+4) of the stream, clipped to [offset, offset+n)
template <bool UPDATE>
__global__ void dpprof__k_model_noise_scale(float *out, const float *g, size_t n, double stddev, dpprof_noise_key key, uint64_t stream, uint64_t offset, double scale, dpprof__opt_k k,
                                            float *param, float *m, float *v, dpprof__bf16 *copy) {
    uint64_t q0 = offset >> 2, nq = ((offset + (uint64_t)n - 1) >> 2) - q0 + 1;
    int noise = stddev > 0;
    DPPROF__MODEL_GS(j, nq) {
        uint64_t q = q0 + (uint64_t)j;
        double z[4] = {0.0, 0.0, 0.0, 0.0};
        if (noise) dpprof_normal4(key, stream, q, z);
        for (int l = 0; l < 4; l++) {
            uint64_t idx = 4 * q + (uint64_t)l;
            if (idx < offset || idx - offset >= (uint64_t)n) continue;
            size_t e = (size_t)(idx - offset);
            float acc = g[e];
            if (noise) acc = dpprof__noise_accum(acc, stddev, z[l]);
            const float ge = (float)DPPROF__MUL((double)acc, scale);
            if (UPDATE) dpprof__opt_elem(k, param, m, v, copy, e, (double)ge);
            else out[e] = ge;
        }
    }
}

// y = alpha * x in double (y may alias x); V elements per thread as the elementwise kernels
template <typename A, int V>
__global__ void dpprof__k_model_scale(A *y, const A *x, size_t n, double alpha) {
    DPPROF__MODEL_GS(j, (n + V - 1) / V) {
        float xv[V], yv[V];
        dpprof__ldn<A, V>(xv, x, V * j, n);
        DPPROF__UNROLL
        for (int l = 0; l < V; l++) yv[l] = (float)DPPROF__MUL(alpha, (double)xv[l]);
        dpprof__stn<A, V>(y, V * j, n, yv);
    }
}

template <typename A>
static void dpprof__model_scale(float *y, const float *x, size_t n, double alpha) {
    DPPROF__MODEL_VEC("dpprof_scale_gpu", dpprof__k_model_scale, A, dpprof__vw<A>(y, x), n, dpprof__act<A>(y), dpprof__act<A>(x), n, alpha);
}

static dpprof__opt_k dpprof__adam_k(double lr, double b1, double b2, double eps, double wd, int t) {
    return dpprof__opt_k{1, lr, b1, b2, 1.0 - b1, 1.0 - b2, eps, wd, 1.0 - pow(b1, (double)t), 1.0 - pow(b2, (double)t)};
}
static dpprof__opt_k dpprof__sgd_k(double lr) { return dpprof__opt_k{0, lr, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0}; }

// the philox blocks the stream's elements [offset, offset + n) touch (n >= 1)
static uint64_t dpprof__noise_blocks(size_t n, uint64_t offset) { return ((offset + (uint64_t)n - 1) >> 2) - (offset >> 2) + 1; }

static void dpprof__noise_opt(const char *what, const float *g, size_t n, double stddev, dpprof_noise_key key, uint64_t stream, uint64_t offset, double scale,
                              const dpprof__opt_k &k, float *param, float *m, float *v, dpprof_bf16 *copy) {
    if (!n) return;
    DPPROF__MODEL_FLAT(what, dpprof__k_model_noise_scale<true>, dpprof__noise_blocks(n, offset), (float *)nullptr, g, n, stddev, key, stream, offset, scale, k, param, m, v,
                       reinterpret_cast<dpprof__bf16 *>(copy));
}

extern "C" void dpprof_noise_scale_gpu(float *g, size_t n, double stddev, dpprof_noise_key key, uint64_t stream, uint64_t offset, double scale) {
    if (!n) return;
    DPPROF__MODEL_FLAT("dpprof_noise_scale_gpu", dpprof__k_model_noise_scale<false>, dpprof__noise_blocks(n, offset), g, (const float *)g, n, stddev, key, stream, offset, scale,
                       dpprof__sgd_k(0.0), (float *)nullptr, (float *)nullptr, (float *)nullptr, (dpprof__bf16 *)nullptr);
}

// the optimizer's step on 4 weights a thread where every array allows it (the fp32 ones 16-byte aligned,
// the copy 8-byte aligned), else one
static void dpprof__opt(const char *what, const dpprof__opt_k &k, float *param, float *m, float *v, const float *grad, dpprof_bf16 *copy_, size_t n) {
    dpprof__bf16 *copy = reinterpret_cast<dpprof__bf16 *>(copy_);
    if (!n) return;
    if (dpprof__vw<float>(param, m, v, grad) == 4 && !((uintptr_t)copy & 7u)) DPPROF__MODEL_FLAT(what, dpprof__k_model_opt<4>, (n + 3) / 4, k, param, m, v, grad, copy, n);
    else DPPROF__MODEL_FLAT(what, dpprof__k_model_opt<1>, n, k, param, m, v, grad, copy, n);
}

extern "C" void dpprof_adam_gpu(float *param, float *m, float *v, const float *grad, size_t n, double lr, double b1, double b2, double eps, double wd, int t,
                                dpprof_bf16 *copy) {
    dpprof__opt("dpprof_adam_gpu", dpprof__adam_k(lr, b1, b2, eps, wd, t), param, m, v, grad, copy, n);
}

extern "C" void dpprof_sgd_gpu(float *param, const float *grad, size_t n, double lr, dpprof_bf16 *copy) {
    dpprof__opt("dpprof_sgd_gpu", dpprof__sgd_k(lr), param, nullptr, nullptr, grad, copy, n);
}

extern "C" void dpprof_noise_adam_gpu(float *param, float *m, float *v, const float *grad, size_t n, double lr, double b1, double b2, double eps, double wd, int t,
                                      dpprof_bf16 *copy, double stddev, dpprof_noise_key key, uint64_t stream, uint64_t offset, double scale) {
    dpprof__noise_opt("dpprof_noise_adam_gpu", grad, n, stddev, key, stream, offset, scale, dpprof__adam_k(lr, b1, b2, eps, wd, t), param, m, v, copy);
}

extern "C" void dpprof_noise_sgd_gpu(float *param, const float *grad, size_t n, double lr, dpprof_bf16 *copy, double stddev, dpprof_noise_key key, uint64_t stream,
                                     uint64_t offset, double scale) {
    dpprof__noise_opt("dpprof_noise_sgd_gpu", grad, n, stddev, key, stream, offset, scale, dpprof__sgd_k(lr), param, nullptr, nullptr, copy);
}

extern "C" void dpprof_scale_gpu(float *y, const float *x, size_t n, double alpha) {
    if (!n) return;
    DPPROF__BY_STORAGE(dpprof__model_scale, y, x, n, alpha);
}

// the bf16 working copy of a weight: dst (n) = src (n) rounded, whatever the storage mode. V = 2: a
// float2 read and a bf16 pair written per thread (src 8-byte, dst 4-byte aligned)
template <int V>
__global__ void dpprof__k_model_cast_bf16(dpprof__bf16 *dst, const float *src, size_t n) {
    DPPROF__MODEL_GS(j, (n + V - 1) / V) {
        if (V == 1 || V * j + 1 >= n) {
            dpprof__st(&dst[V * j], src[V * j]);
        } else {
#ifdef DPPROF_CUEMU
            dpprof__k_misaligned(src + V * j, 8);
            dpprof__k_misaligned(dst + V * j, 4);
#endif
            const float2 f = *reinterpret_cast<const float2 *>(src + V * j);
            const dpprof__bf16x2 w = {dpprof__bf16_round(f.x), dpprof__bf16_round(f.y)};
            *reinterpret_cast<dpprof__bf16x2 *>(dst + V * j) = w;
        }
    }
}

extern "C" void dpprof_cast_bf16_gpu(dpprof_bf16 *dst, const float *src, size_t n) {
    if (!n) return;
    dpprof__bf16 *d = reinterpret_cast<dpprof__bf16 *>(dst);
    if (((uintptr_t)dst & 3u) || ((uintptr_t)src & 7u)) DPPROF__MODEL_FLAT("dpprof_cast_bf16_gpu", dpprof__k_model_cast_bf16<1>, n, d, src, n);
    else DPPROF__MODEL_FLAT("dpprof_cast_bf16_gpu", dpprof__k_model_cast_bf16<2>, (n + 1) / 2, d, src, n);
}

// ---- attention: causal gqa flash attention in fp32 (simt) ------------------------------------------
// no T x T (or (B,NH,T,T)) tensor and no scratch: the forward keeps an online softmax per query row,
// the backward recomputes P = exp(scale q.k - lse) from the forward's lse, tile by tile. every sum is
// fp32 in a fixed order (no atomics): the same bits on every run. the references sum in double.
// tiles sit in dynamic shared memory. in a score tile a thread owns 4 rows of the "row side"
// (ty*4 + 0..3, ty = tid/16) and the columns tx + 16 j of the "column side" (tx = tid%16), so a
// row's 16 owners are 16 lanes of one warp (row max / row sum by xor shuffles); in an output tile it
// owns the same 4 rows and columns 4 tx + 64 m + 0..3 (m < HSP/64). HSP is HS rounded up to 64, 128
// or 256 (register arrays need it at compile time); loops stop at HS (rounded up to 4, zero-filled),
// so a small HS pays only for its padding to 4. global rows are read as float4 when HS % 4 == 0
// (float2 when only even, else scalar), one row after another by consecutive threads (coalesced); in
// bf16 storage as 4, 2 or 1 bf16 (8, 4, 2 bytes) widened into the same float tiles, the outputs
// rounded on their store.
// shared strides: tiles read down a column (rows tx + 16 j) are padded by 4 floats (a quarter warp's
// float4 reads hit distinct banks), tiles read along rows by all 16 lanes (broadcast) are not.

#ifdef DPPROF_CUEMU
#define DPPROF__ATTN_LB(n)
#else
#define DPPROF__ATTN_LB(n) __launch_bounds__(n, 1) // (n, 1): up to 255 registers, no spills (the default capped some at 128 and spilled)
#endif
#define DPPROF__ATTN_UNROLL DPPROF__UNROLL
#define DPPROF__ATTN_NINF (-INFINITY)

struct alignas(16) dpprof__attn_f4 {
    float x, y, z, w;
};
struct alignas(8) dpprof__attn_f2 {
    float x, y;
};

__device__ __forceinline__ int dpprof__k_attn_imin(int a, int b) { return a < b ? a : b; }

// 16-byte (shared or global) load/store; 8-byte global load. the emulator checks the alignment
__device__ __forceinline__ dpprof__attn_f4 dpprof__k_attn_ld4(const float *p) {
#ifdef DPPROF_CUEMU
    dpprof__k_misaligned(p, 16);
    dpprof__attn_f4 v = {p[0], p[1], p[2], p[3]};
    return v;
#else
    return *reinterpret_cast<const dpprof__attn_f4 *>(p);
#endif
}
__device__ __forceinline__ void dpprof__k_attn_st4(float *p, dpprof__attn_f4 v) {
#ifdef DPPROF_CUEMU
    dpprof__k_misaligned(p, 16);
    p[0] = v.x, p[1] = v.y, p[2] = v.z, p[3] = v.w;
#else
    *reinterpret_cast<dpprof__attn_f4 *>(p) = v;
#endif
}
__device__ __forceinline__ dpprof__attn_f2 dpprof__k_attn_ld2(const float *p) {
#ifdef DPPROF_CUEMU
    dpprof__k_misaligned(p, 8);
    dpprof__attn_f2 v = {p[0], p[1]};
    return v;
#else
    return *reinterpret_cast<const dpprof__attn_f2 *>(p);
#endif
}

// bf16 storage: 8-byte (four) and 4-byte (two) global loads and the 8-byte store, checked as above
__device__ __forceinline__ dpprof__bf16x4 dpprof__k_attn_ld4h(const dpprof__bf16 *p) {
#ifdef DPPROF_CUEMU
    dpprof__k_misaligned(p, 8);
#endif
    return *reinterpret_cast<const dpprof__bf16x4 *>(p);
}
__device__ __forceinline__ dpprof__bf16x2 dpprof__k_attn_ld2h(const dpprof__bf16 *p) {
#ifdef DPPROF_CUEMU
    dpprof__k_misaligned(p, 4);
#endif
    return *reinterpret_cast<const dpprof__bf16x2 *>(p);
}
__device__ __forceinline__ void dpprof__k_attn_st4h(dpprof__bf16 *p, dpprof__bf16x4 v) {
#ifdef DPPROF_CUEMU
    dpprof__k_misaligned(p, 8);
#endif
    *reinterpret_cast<dpprof__bf16x4 *>(p) = v;
}

// columns c .. c+3 (those below HS) of a global row at p = row + c, widened to float; 0 elsewhere.
// vw elements per global access (4, 2 or 1)
__device__ __forceinline__ dpprof__attn_f4 dpprof__k_attn_ldrow(const float *p, int c, int HS, int vw) {
    dpprof__attn_f4 v = {0.f, 0.f, 0.f, 0.f};
    if (vw == 4) {
        v = dpprof__k_attn_ld4(p);
    } else if (vw == 2) { // HS even: c, c+1 < HS
        dpprof__attn_f2 a = dpprof__k_attn_ld2(p);
        v.x = a.x, v.y = a.y;
        if (c + 2 < HS) a = dpprof__k_attn_ld2(p + 2), v.z = a.x, v.w = a.y;
    } else {
        v.x = p[0];
        if (c + 1 < HS) v.y = p[1];
        if (c + 2 < HS) v.z = p[2];
        if (c + 3 < HS) v.w = p[3];
    }
    return v;
}
__device__ __forceinline__ dpprof__attn_f4 dpprof__k_attn_ldrow(const dpprof__bf16 *p, int c, int HS, int vw) {
    dpprof__attn_f4 v = {0.f, 0.f, 0.f, 0.f};
    if (vw == 4) {
        const dpprof__bf16x4 a = dpprof__k_attn_ld4h(p);
        v.x = dpprof__bf16_widen(a.x), v.y = dpprof__bf16_widen(a.y), v.z = dpprof__bf16_widen(a.z), v.w = dpprof__bf16_widen(a.w);
    } else if (vw == 2) {
        dpprof__bf16x2 a = dpprof__k_attn_ld2h(p);
        v.x = dpprof__bf16_widen(a.lo), v.y = dpprof__bf16_widen(a.hi);
        if (c + 2 < HS) a = dpprof__k_attn_ld2h(p + 2), v.z = dpprof__bf16_widen(a.lo), v.w = dpprof__bf16_widen(a.hi);
    } else {
        v.x = dpprof__ld(p[0]);
        if (c + 1 < HS) v.y = dpprof__ld(p[1]);
        if (c + 2 < HS) v.z = dpprof__ld(p[2]);
        if (c + 3 < HS) v.w = dpprof__ld(p[3]);
    }
    return v;
}

// rows [0, ROWS) x columns [0, hs4) of a tile into shared dst (row stride LDS, float): row r from
// src + r*rs, zero for r >= nvalid or a column >= HS. vw elements per global access (4, 2 or 1)
template <int ROWS, int LDS, int NT, typename A>
__device__ __forceinline__ void dpprof__k_attn_load(float *dst, const A *src, size_t rs, int nvalid, int HS, int hs4, int vw) {
    const int cpr = hs4 >> 2; // float4 chunks per row
    for (int e = threadIdx.x; e < ROWS * cpr; e += NT) {
        const int r = e / cpr, c = (e - r * cpr) * 4;
        dpprof__attn_f4 v = {0.f, 0.f, 0.f, 0.f};
        if (r < nvalid) v = dpprof__k_attn_ldrow(src + (size_t)r * rs + c, c, HS, vw);
        dpprof__k_attn_st4(dst + r * LDS + c, v);
    }
}

// s[i][j] = sum_{d < hs4} X[(ty*4+i)*LDX + d] * Y[(tx+16j)*LDY + d]   (both in shared memory)
template <int CJ, int LDX, int LDY>
__device__ __forceinline__ void dpprof__k_attn_dots(float (&s)[4][CJ], const float *X, const float *Y, int ty, int tx, int hs4) {
    const float *x0 = X + ty * 4 * LDX, *y0 = Y + tx * LDY;
    DPPROF__ATTN_UNROLL
    for (int i = 0; i < 4; i++) {
        DPPROF__ATTN_UNROLL
        for (int j = 0; j < CJ; j++) s[i][j] = 0.f;
    }
    for (int d = 0; d < hs4; d += 4) {
        dpprof__attn_f4 a[4];
        DPPROF__ATTN_UNROLL
        for (int i = 0; i < 4; i++) a[i] = dpprof__k_attn_ld4(x0 + i * LDX + d);
        DPPROF__ATTN_UNROLL
        for (int j = 0; j < CJ; j++) {
            const dpprof__attn_f4 y = dpprof__k_attn_ld4(y0 + j * 16 * LDY + d);
            DPPROF__ATTN_UNROLL
            for (int i = 0; i < 4; i++) {
                s[i][j] += a[i].x * y.x;
                s[i][j] += a[i].y * y.y;
                s[i][j] += a[i].z * y.z;
                s[i][j] += a[i].w * y.w;
            }
        }
    }
}

// acc[i][4m+u] += sum_{c < cnt} W[c*LDW + ty*4+i] * Z[c*LDZ + 4tx + 64m + u], for column chunks below hs
// (FULL: hs == 64 NM, no test in the loop)
template <int NM, int LDW, int LDZ, bool FULL>
__device__ __forceinline__ void dpprof__k_attn_accum_(float (&acc)[4][4 * NM], const float *W, const float *Z, int cnt, int ty, int tx, int hs) {
    for (int c = 0; c < cnt; c++) {
        const dpprof__attn_f4 w4 = dpprof__k_attn_ld4(W + c * LDW + ty * 4);
        const float w[4] = {w4.x, w4.y, w4.z, w4.w};
        DPPROF__ATTN_UNROLL
        for (int m = 0; m < NM; m++) {
            if (FULL || 4 * tx + 64 * m < hs) {
                const dpprof__attn_f4 z = dpprof__k_attn_ld4(Z + c * LDZ + 4 * tx + 64 * m);
                DPPROF__ATTN_UNROLL
                for (int i = 0; i < 4; i++) {
                    acc[i][4 * m + 0] += w[i] * z.x;
                    acc[i][4 * m + 1] += w[i] * z.y;
                    acc[i][4 * m + 2] += w[i] * z.z;
                    acc[i][4 * m + 3] += w[i] * z.w;
                }
            }
        }
    }
}
template <int NM, int LDW, int LDZ>
__device__ __forceinline__ void dpprof__k_attn_accum(float (&acc)[4][4 * NM], const float *W, const float *Z, int cnt, int ty, int tx, int hs) {
    if (hs == 64 * NM) dpprof__k_attn_accum_<NM, LDW, LDZ, true>(acc, W, Z, cnt, ty, tx, hs);
    else dpprof__k_attn_accum_<NM, LDW, LDZ, false>(acc, W, Z, cnt, ty, tx, hs);
}

// Ds[r] = sum_{d < hs} dOs[r*LDS + d] * o[r*rs + d] (0 for r >= nvalid): a warp per row, lanes
// stride the row (coalesced o), fixed xor tree. the same routine in both backward kernels, so D is
// the same bits in both
template <int ROWS, int LDS, int NT, typename A>
__device__ __forceinline__ void dpprof__k_attn_rowdot(float *Ds, const float *dOs, const A *o, size_t rs, int nvalid, int hs) {
    const int lane = threadIdx.x & 31;
    for (int r = threadIdx.x >> 5; r < ROWS; r += NT / 32) {
        float a = 0.f;
        if (r < nvalid)
            for (int d = lane; d < hs; d += 32) a += dOs[r * LDS + d] * dpprof__ld(o[(size_t)r * rs + d]);
        for (int off = 16; off > 0; off >>= 1) a += __shfl_xor_sync(0xffffffffu, a, off);
        if (lane == 0) Ds[r] = a;
    }
}

// four values to a global row at p (vw == 4: one 16-byte float4 or 8-byte bf16x4 store), else
// those below HS one by one
__device__ __forceinline__ void dpprof__k_attn_strow(float *p, const float (&o)[4], int c, int HS, int vw) {
    if (vw == 4) {
        const dpprof__attn_f4 v = {o[0], o[1], o[2], o[3]};
        dpprof__k_attn_st4(p, v);
    } else {
        DPPROF__ATTN_UNROLL
        for (int u = 0; u < 4; u++)
            if (c + u < HS) p[u] = o[u];
    }
}
__device__ __forceinline__ void dpprof__k_attn_strow(dpprof__bf16 *p, const float (&o)[4], int c, int HS, int vw) {
    if (vw == 4) {
        const dpprof__bf16x4 v = {dpprof__bf16_round(o[0]), dpprof__bf16_round(o[1]), dpprof__bf16_round(o[2]), dpprof__bf16_round(o[3])};
        dpprof__k_attn_st4h(p, v);
    } else {
        DPPROF__ATTN_UNROLL
        for (int u = 0; u < 4; u++)
            if (c + u < HS) dpprof__st(&p[u], o[u]);
    }
}

// acc (4 rows x 4 NM columns of this thread, times mul) to the global rows row0 + ty*4 + i < T
// (row stride rs); columns below HS
template <int NM, typename A>
__device__ __forceinline__ void dpprof__k_attn_store(A *dst, const float (&acc)[4][4 * NM], const float (&mul)[4], size_t rs, int rows_left, int ty, int tx, int HS, int vw) {
    DPPROF__ATTN_UNROLL
    for (int i = 0; i < 4; i++) {
        if (ty * 4 + i >= rows_left) continue;
        A *row = dst + (size_t)(ty * 4 + i) * rs;
        DPPROF__ATTN_UNROLL
        for (int m = 0; m < NM; m++) {
            const int c = 4 * tx + 64 * m;
            if (c >= HS) continue;
            const float o[4] = {acc[i][4 * m] * mul[i], acc[i][4 * m + 1] * mul[i], acc[i][4 * m + 2] * mul[i], acc[i][4 * m + 3] * mul[i]};
            dpprof__k_attn_strow(row + c, o, c, HS, vw);
        }
    }
}

// P (or dS) of this thread, 4 rows x CJ columns, transposed into shared: dst[(tx+16j)*LDP + ty*4 + i]
template <int CJ, int LDP>
__device__ __forceinline__ void dpprof__k_attn_put(float *dst, const float (&p)[4][CJ], int ty, int tx) {
    DPPROF__ATTN_UNROLL
    for (int j = 0; j < CJ; j++) {
        const dpprof__attn_f4 v = {p[0][j], p[1][j], p[2][j], p[3][j]};
        dpprof__k_attn_st4(dst + (tx + 16 * j) * LDP + ty * 4, v);
    }
}

// ---- forward ----
// shared: Q tile (BR x HSP), one K-then-V tile (BC x HSP+4), P^T (BC x BR+4)
template <int HSP, int BR, int BC>
struct dpprof__attn_fwd_cfg {
    static constexpr int NT = BR * 4, LDQ = HSP, LDK = HSP + 4, LDP = BR + 4;
    static constexpr int OFF_KV = BR * LDQ, OFF_P = OFF_KV + BC * LDK, FLOATS = OFF_P + BC * LDP;
};

// out, lse of BR query rows of head h, batch b: online softmax over the key tiles up to the diagonal
// (K tile -> scores -> rescale; V tile -> out += P V). grid (ceil(T/BR), NH, B), BR*4 threads, the
// longest rows first. traffic: q, out once; k, v once per query tile at or below the diagonal
template <typename A, int HSP, int BR, int BC>
__global__ void DPPROF__ATTN_LB(BR * 4) dpprof__k_attn_fwd(A *out, float *lse, const A *q, const A *k, const A *v, int T, int NH, int NKV, int HS, int vw, float scale) {
    typedef dpprof__attn_fwd_cfg<HSP, BR, BC> C;
    constexpr int CJ = BC / 16, NM = HSP / 64;
    DPPROF__SMEM_DYN(float, sm);
    float *Qs = sm, *KVs = sm + C::OFF_KV, *Ps = sm + C::OFF_P;
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const int h = blockIdx.y, b = blockIdx.z, g = h / (NH / NKV);
    const int q0 = (int)(gridDim.x - 1 - blockIdx.x) * BR;
    const int hs4 = (HS + 3) & ~3, kend = dpprof__k_attn_imin(q0 + BR, T);
    const size_t qs = (size_t)NH * HS, ks = (size_t)NKV * HS;
    const A *kb = k + (size_t)b * T * ks + (size_t)g * HS, *vb = v + (size_t)b * T * ks + (size_t)g * HS;
    float m[4], l[4], o[4][4 * NM];
    DPPROF__ATTN_UNROLL
    for (int i = 0; i < 4; i++) {
        m[i] = DPPROF__ATTN_NINF, l[i] = 0.f;
        DPPROF__ATTN_UNROLL
        for (int n = 0; n < 4 * NM; n++) o[i][n] = 0.f;
    }
    dpprof__k_attn_load<BR, C::LDQ, C::NT>(Qs, q + ((size_t)b * T + q0) * qs + (size_t)h * HS, qs, T - q0, HS, hs4, vw);
    for (int k0 = 0; k0 < kend; k0 += BC) {
        const int cnt = dpprof__k_attn_imin(BC, kend - k0);
        __syncthreads(); // the previous tile's readers of KVs and Ps are done
        dpprof__k_attn_load<BC, C::LDK, C::NT>(KVs, kb + (size_t)k0 * ks, ks, cnt, HS, hs4, vw);
        __syncthreads();
        float s[4][CJ];
        dpprof__k_attn_dots<CJ, C::LDQ, C::LDK>(s, Qs, KVs, ty, tx, hs4);
        DPPROF__ATTN_UNROLL
        for (int i = 0; i < 4; i++) {
            const int r = q0 + ty * 4 + i;
            float mx = DPPROF__ATTN_NINF, ps = 0.f;
            DPPROF__ATTN_UNROLL
            for (int j = 0; j < CJ; j++) {
                const int c = k0 + tx + 16 * j;
                s[i][j] = (c <= r && c < kend) ? s[i][j] * scale : DPPROF__ATTN_NINF;
                mx = fmaxf(mx, s[i][j]);
            }
            for (int off = 8; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
            const float mn = fmaxf(m[i], mx);
            const float mref = mn == DPPROF__ATTN_NINF ? 0.f : mn; // a row with no key yet: all p = 0
            const float corr = expf(m[i] - mref);
            m[i] = mn;
            DPPROF__ATTN_UNROLL
            for (int j = 0; j < CJ; j++) {
                s[i][j] = expf(s[i][j] - mref);
                ps += s[i][j];
            }
            l[i] = l[i] * corr + ps; // this lane's columns only; summed over the 16 owners at the end
            DPPROF__ATTN_UNROLL
            for (int n = 0; n < 4 * NM; n++) o[i][n] *= corr;
        }
        __syncthreads(); // K no longer read
        dpprof__k_attn_put<CJ, C::LDP>(Ps, s, ty, tx);
        dpprof__k_attn_load<BC, C::LDK, C::NT>(KVs, vb + (size_t)k0 * ks, ks, cnt, HS, hs4, vw);
        __syncthreads();
        dpprof__k_attn_accum<NM, C::LDP, C::LDK>(o, Ps, KVs, cnt, ty, tx, HS);
    }
    float inv[4];
    DPPROF__ATTN_UNROLL
    for (int i = 0; i < 4; i++) {
        for (int off = 8; off > 0; off >>= 1) l[i] += __shfl_xor_sync(0xffffffffu, l[i], off);
        inv[i] = 1.f / l[i]; // l >= 1 for a real row (its max term is exp(0))
        const int r = q0 + ty * 4 + i;
        if (tx == 0 && r < T) lse[((size_t)b * NH + h) * T + r] = m[i] + logf(l[i]);
    }
    dpprof__k_attn_store<NM>(out + ((size_t)b * T + q0) * qs + (size_t)h * HS, o, inv, qs, T - q0, ty, tx, HS, vw);
}

// ---- forward on the tensor cores (bf16 storage, HS even, HS <= 128) ----
// d += a b over the warp: mma.sync m16n8k16 with bf16 operands and fp32 accumulators, in the ptx
// isa's fragment layout (g = lane / 4, t = lane % 4; tests/cuemu.h section 10 spells it out):
//   a[j] holds A's row g (+8 if j odd), columns 2t, 2t+1 (+8 if j >= 2); b[j] B's rows 2t, 2t+1
//   (+8 if j == 1) of column g; d[i] D's row g (+8 if i >= 2), column 2t + (i & 1)
__device__ __forceinline__ void dpprof__mma_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#ifdef DPPROF_CUEMU
    cuemu_mma_m16n8k16_bf16(d, a, b);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d, (void)a, (void)b; // not compiled for a device: the build targets sm_80 and sm_90 only
#endif
}
// r = four 8x8 bf16 matrices of shared memory: lanes 8j .. 8j + 7 give the 16-byte-aligned addresses of
// rows 0 .. 7 of matrix j; lane l gets in r[j] matrix j's (l / 4, 2 (l % 4)), (l / 4, 2 (l % 4) + 1), or with TR
// (transposed) its (2 (l % 4), l / 4), (2 (l % 4) + 1, l / 4) (ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16:
// mma fragments of a tile stored either way round, four registers an instruction)
template <bool TR>
__device__ __forceinline__ void dpprof__ldsm4(uint32_t (&r)[4], const dpprof__bf16 *row) {
#ifdef DPPROF_CUEMU
    cuemu_ldmatrix_x4(r, row, TR);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    if (TR) asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                         : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                         : "r"(a)
                         : "memory");
    else asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                      : "r"(a)
                      : "memory");
#else
    (void)row, r[0] = r[1] = r[2] = r[3] = 0u;
#endif
}
// 16 bytes global -> shared without the registers (cp.async.cg): the first `bytes` (0 or 16) from src, the
// rest zeros; they land when a dpprof__cp_wait covers the group dpprof__cp_commit closed after them
__device__ __forceinline__ void dpprof__cp16(void *dst, const void *src, int bytes) {
#ifdef DPPROF_CUEMU
    cuemu_cp_async_16(dst, src, bytes);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned a = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(src), "r"(bytes)
                 : "memory");
#else
    (void)dst, (void)src, (void)bytes;
#endif
}
__device__ __forceinline__ void dpprof__cp_commit() {
#ifdef DPPROF_CUEMU
    cuemu_cp_async_commit();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::
                     : "memory");
#endif
}
// every committed group but the newest N has landed (for this thread: a barrier shares them)
template <int N>
__device__ __forceinline__ void dpprof__cp_wait() {
#ifdef DPPROF_CUEMU
    cuemu_cp_async_wait(N);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N)
                 : "memory");
#endif
}

// a ROWS x COLS bf16 tile (COLS % 8 == 0) of row-major src (row stride rs, 16-byte aligned rows) into X (row
// stride LD) by cp.async, 16-byte chunks spread over the NT threads: rows >= vrows and chunks starting at
// columns >= vcols (vcols % 8 == 0: a chunk is all inside or all past) are zero-filled. it lands at the
// dpprof__cp_wait that covers the group committed after it
template <int ROWS, int COLS, int LD, int NT>
__device__ __forceinline__ void dpprof__cp_tile(dpprof__bf16 *X, const dpprof__bf16 *src, size_t rs, int vrows, int vcols) {
    constexpr int CPR = COLS / 8; // chunks a row
    for (int c = threadIdx.x; c < ROWS * CPR; c += NT) {
        const int r = c / CPR, d = 8 * (c % CPR);
        const bool ok = r < vrows && d < vcols;
        dpprof__cp16(X + r * LD + d, ok ? src + (size_t)r * rs + d : src, ok ? 16 : 0);
    }
}

// ---- Hopper's warpgroup mma (wgmma.mma_async, sm_90a only): the device code exists where nvcc compiles for
// sm_90a (the build's -gencode arch=compute_90a,code=sm_90a); the emulator runs it as tests/cuemu.h section 10
// says. a warpgroup is 4 consecutive warps starting at a multiple of 4; every wgmma helper below is called by
// all of its threads
#if !defined(DPPROF_CUEMU) && defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define DPPROF__HAS_WGMMA 1
#else
#define DPPROF__HAS_WGMMA 0
#endif
// the shared-memory address of p, as a wgmma descriptor counts it
__device__ __forceinline__ unsigned dpprof__smem_u32(const void *p) {
#ifdef DPPROF_CUEMU
    return cuemu_smem_u32(p);
#elif defined(__CUDA_ARCH__)
    return (unsigned)__cvta_generic_to_shared(p);
#else
    return (unsigned)(uintptr_t)p;
#endif
}
// the descriptor of a K-major operand at p in the interleaved layout (swizzle mode 0): 8 x 16-byte core
// matrices, lbo bytes apart along K and sbo bytes apart along M or N (ptx isa, "matrix descriptor format":
// start address >> 4 in bits 0-13, lbo >> 4 in 16-29, sbo >> 4 in 32-45, base offset 0, swizzle 0). cutlass's
// make_gmma_desc reads K-major interleave the same way, ((8, n), 2) : ((1, sbo), lbo) in 16-byte units with the
// same bit fields: an independent reading, not a hardware check
__device__ __forceinline__ uint64_t dpprof__wg_desc(const void *p, unsigned lbo, unsigned sbo) {
    return (uint64_t)((dpprof__smem_u32(p) >> 4) & 0x3fffu) | ((uint64_t)((lbo >> 4) & 0x3fffu) << 16) | ((uint64_t)((sbo >> 4) & 0x3fffu) << 32);
}
// d (64 x 128 over the warpgroup, fp32; this thread's 64: row 16 (warp % 4) + lane / 4 + 8 ((i / 2) % 2),
// column 8 (i / 4) + 2 (lane % 4) + i % 2) = A (64 x 16, descriptor da) B^T (B 128 x 16, db) + (scale_d ? d : 0).
// asynchronous: d may be read or written by other instructions only after a dpprof__wg_wait that covers it
__device__ __forceinline__ void dpprof__wgmma_128(float (&d)[64], uint64_t da, uint64_t db, int scale_d) {
#ifdef DPPROF_CUEMU
    cuemu_wgmma_m64n128k16_bf16(d, da, db, scale_d);
#elif DPPROF__HAS_WGMMA
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(scale_d));
#else
    (void)d, (void)da, (void)db, (void)scale_d;
#endif
}
// wgmma.fence: before the first wgmma after other instructions touched its accumulators (every step here)
__device__ __forceinline__ void dpprof__wg_fence() {
#ifdef DPPROF_CUEMU
    cuemu_wgmma_fence();
#elif DPPROF__HAS_WGMMA
    asm volatile("wgmma.fence.sync.aligned;\n" ::
                     : "memory");
#endif
}
__device__ __forceinline__ void dpprof__wg_commit() {
#ifdef DPPROF_CUEMU
    cuemu_wgmma_commit();
#elif DPPROF__HAS_WGMMA
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::
                     : "memory");
#endif
}
// every committed wgmma group of this warp's but the newest N has completed
template <int N>
__device__ __forceinline__ void dpprof__wg_wait() {
#ifdef DPPROF_CUEMU
    cuemu_wgmma_wait(N);
#elif DPPROF__HAS_WGMMA
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N)
                 : "memory");
#endif
}
// what the generic proxy wrote to shared memory (cp.async, stores) becomes visible to wgmma's async proxy
// (then a barrier shares it across the block)
__device__ __forceinline__ void dpprof__fence_proxy_async() {
#ifdef DPPROF_CUEMU
    cuemu_fence_proxy_async();
#elif DPPROF__HAS_WGMMA
    asm volatile("fence.proxy.async.shared::cta;\n" ::
                     : "memory");
#endif
}
// keeps the compiler from moving reads or writes of accumulators across the asm statements around them
// (after a wait, before a wgmma): an empty asm that reads and writes each of them
__device__ __forceinline__ void dpprof__wg_pin(float (&d)[64]) {
#if DPPROF__HAS_WGMMA
    DPPROF__UNROLL
    for (int i = 0; i < 64; i++) asm volatile(""
                                              : "+f"(d[i])::"memory");
#else
    (void)d;
#endif
}

// two bf16 in one 32-bit register, the first in the low half: rounded from floats, or loaded (4-byte aligned)
__device__ __forceinline__ uint32_t dpprof__pack_bf16(float lo, float hi) {
    return (uint32_t)dpprof__bf16_round(lo) | ((uint32_t)dpprof__bf16_round(hi) << 16);
}
// the same pair as an mma operand, in one instruction (cvt.rn.bf16x2.f32 packs its first source in the high
// half): round to nearest even as dpprof__bf16_round, the same bits for every non-NaN float (a NaN stays a
// NaN, its payload may not). the software rounding took about 7 instructions a value, and the softmax's
// P and dS are rounded every tile
__device__ __forceinline__ uint32_t dpprof__pack_bf16_op(float lo, float hi) {
#if !defined(DPPROF_CUEMU) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n"
        : "=r"(r)
        : "f"(hi), "f"(lo));
    return r;
#else
    return dpprof__pack_bf16(lo, hi);
#endif
}
// 2^x on the special function unit, one instruction (ex2.approx.ftz.f32: relative error below 2^-22,
// results below 2^-126 flushed to zero, 2^-inf = 0). the tensor-core softmax works in base 2 with the
// scale folded in (p = 2^(s scale log2(e) - m scale log2(e)), one fma and one ex2 a score, as flash
// attention 2 does): expf is a range reduction of several instructions around the same ex2
__device__ __forceinline__ float dpprof__ex2(float x) {
#if !defined(DPPROF_CUEMU) && defined(__CUDA_ARCH__)
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n"
        : "=f"(y)
        : "f"(x));
    return y;
#else
    const float y = exp2f(x);
    return y < 1.17549435e-38f ? 0.f : y; // ftz
#endif
}
#define DPPROF__LOG2E 1.44269504088896340736f
__device__ __forceinline__ uint32_t dpprof__ld_pair(const dpprof__bf16 *p) {
    const dpprof__bf16x2 v = dpprof__k_attn_ld2h(p);
    return (uint32_t)v.lo | ((uint32_t)v.hi << 16);
}
__device__ __forceinline__ void dpprof__st_pair(dpprof__bf16 *p, uint32_t v) {
#ifdef DPPROF_CUEMU
    dpprof__k_misaligned(p, 4);
#endif
    const dpprof__bf16x2 w = {(unsigned short)(v & 0xffffu), (unsigned short)(v >> 16)};
    *reinterpret_cast<dpprof__bf16x2 *>(p) = w;
}

// n rows (n % 8 == 0) of HSP columns (HSP % 16 == 0) from src (row stride rs), zeros at rows >= valid and
// columns >= HS, into X (row stride LD), synchronously: the tile loader where cp.async cannot be used (HS not
// a multiple of 8). a thread moves a 2x2 block, rows r, r+1 and columns d, d+1 (two 4-byte loads, two 4-byte
// stores); a warp takes 4 row pairs x 8 column pairs, so its loads are whole 32-byte sectors and its stores
// hit 32 banks when LD / 2 = 4 (mod 16) (LD = HSP + 8)
template <int LD, int HSP, int NT>
__device__ __forceinline__ void dpprof__tc_tile(dpprof__bf16 *X, const dpprof__bf16 *src, size_t rs, int n, int valid, int HS) {
    const int rp4 = n / 8;
    for (int i = threadIdx.x; i < n * (HSP / 4); i += NT) {
        const int q = i >> 5, r = 2 * (4 * (q % rp4) + ((i >> 3) & 3)), d = 2 * (8 * (q / rp4) + (i & 7));
        const uint32_t x0 = r < valid && d < HS ? dpprof__ld_pair(src + (size_t)r * rs + d) : 0u;
        const uint32_t x1 = r + 1 < valid && d < HS ? dpprof__ld_pair(src + (size_t)(r + 1) * rs + d) : 0u;
        dpprof__st_pair(&X[r * LD + d], x0), dpprof__st_pair(&X[(r + 1) * LD + d], x1);
    }
}

// this lane's ldmatrix x4 row offset in a row-major tile of row stride LD. ldsm_a: the A fragment of 16
// rows x 16 columns (matrix j = lane / 8 at rows + 8 (j % 2), columns + 8 (j / 2)); taken transposed, the
// same offsets give the B fragments of the tile itself for two n blocks (rows: the k pairs, columns 8 n ..
// 8 n + 15). ldsm_bt: the B fragments of the tile's transpose, taken as is: 8 rows (the n of B), columns
// 16 kk .. 16 kk + 31 (two k blocks)
template <int LD>
__device__ __forceinline__ int dpprof__ldsm_a(int lane) { return ((lane & 7) + 8 * ((lane >> 3) & 1)) * LD + 8 * (lane >> 4); }
template <int LD>
__device__ __forceinline__ int dpprof__ldsm_bt(int lane) { return (lane & 7) * LD + 8 * (lane >> 3); }

// c += a0 x[0..1] + a1 x[2..3]: the A fragments of two k blocks against their B fragments (one ldmatrix x4)
__device__ __forceinline__ void dpprof__mma_pair(float (&c)[4], const uint32_t (&a0)[4], const uint32_t (&a1)[4], const uint32_t (&x)[4]) {
    const uint32_t b0[2] = {x[0], x[1]}, b1[2] = {x[2], x[3]};
    dpprof__mma_bf16(c, a0, b0);
    dpprof__mma_bf16(c, a1, b1);
}
// c0 += a x[0..1] and c1 += a x[2..3]: one A fragment against the B fragments of two n blocks
__device__ __forceinline__ void dpprof__mma_cols(float (&c0)[4], float (&c1)[4], const uint32_t (&a)[4], const uint32_t (&x)[4]) {
    const uint32_t b0[2] = {x[0], x[1]}, b1[2] = {x[2], x[3]};
    dpprof__mma_bf16(c0, a, b0);
    dpprof__mma_bf16(c1, a, b1);
}

// NW warps of 16 MW query rows a block (MW = 1: 16 rows a warp, 64 or 128 rows a block; MW = 2: 32 rows a
// warp, as flash attention 2 takes them at head sizes up to 64), 64 keys a tile; shared rows padded by 8
// bf16 (LDK = HSP + 8: rows 16 (HSP / 8 + 1) bytes apart, so the 8 row addresses of an ldmatrix fall in 8
// different 16-byte bank groups). a warp reads each K and V fragment once for its MW row blocks: the
// forward's ldmatrix reads are 1/(8 MW) byte a multiply-add (and the cp.async stores 1/(8 MW NW)), so the
// H100's 128 bytes of shared memory a clock against 2048 multiply-adds cap it near 45% of the tensor-core
// peak with MW = 1 (NW = 8) and near 80% with MW = 2 (NW = 4): a bound, not a measurement
template <int HSP, int NW, int MW = 1>
struct dpprof__attn_tc_cfg {
    static constexpr int BR = 16 * NW * MW, BC = 64, NT = 32 * NW, LDK = HSP + 8;
    static constexpr int TILE = BC * LDK;                     // bf16 of one K or V tile
    static constexpr size_t FWD_BYTES = (size_t)4 * TILE * 2; // the forward's K and V tiles, two stages each
};

// a K or V tile of the forward (BC rows of HSP, row stride LDK, as they lie: key-major) into shared memory:
// with cp.async in 16-byte chunks when `async` (HS % 8 == 0, 16-byte aligned rows: a chunk is all inside HS
// or all past it, past HS and past `valid` rows zero-filled; they land at the next dpprof__cp_wait), else
// by the synchronous 2x2 loader (any even HS)
template <int LDK, int HSP, int BC, int NT>
__device__ __forceinline__ void dpprof__tc_tile_async(dpprof__bf16 *X, const dpprof__bf16 *src, size_t rs, int valid, int HS, bool async) {
    if (async) dpprof__cp_tile<BC, HSP, LDK, NT>(X, src, rs, valid, HS);
    else dpprof__tc_tile<LDK, HSP, NT>(X, src, rs, BC, valid, HS);
}

// the A fragments of a warp's MW blocks of 16 rows (from row w0) of a row-major bf16 matrix (row stride rs),
// columns 0 .. 16 KS - 1: zeros at rows >= T and columns >= HS (g = lane / 4, t = lane % 4)
template <int MW, int KS>
__device__ __forceinline__ void dpprof__frag_rows(uint32_t (&f)[MW][KS][4], const dpprof__bf16 *src, size_t rs, int w0, int T, int HS, int g, int t) {
    DPPROF__ATTN_UNROLL
    for (int mi = 0; mi < MW; mi++) {
        DPPROF__ATTN_UNROLL
        for (int kk = 0; kk < KS; kk++) {
            DPPROF__ATTN_UNROLL
            for (int j = 0; j < 4; j++) {
                const int row = w0 + 16 * mi + g + ((j & 1) ? 8 : 0), col = 16 * kk + 2 * t + ((j & 2) ? 8 : 0);
                f[mi][kk][j] = row < T && col < HS ? dpprof__ld_pair(src + (size_t)row * rs + col) : 0u;
            }
        }
    }
}

// -inf (p = 0) into the scores of a warp's MW row blocks (rows a0 + 16 mi ..: an A operand's rows) x the
// columns c0 + 8 nb .. (the B operand's) of an accumulator tile where keep(row, column) is false
template <int MW, int NB, typename F>
__device__ __forceinline__ void dpprof__attn_mask(float (&s)[MW][NB][4], int a0, int c0, int g, int t, F keep) {
    DPPROF__ATTN_UNROLL
    for (int mi = 0; mi < MW; mi++) {
        DPPROF__ATTN_UNROLL
        for (int nb = 0; nb < NB; nb++) {
            DPPROF__ATTN_UNROLL
            for (int jj = 0; jj < 4; jj++)
                if (!keep(a0 + 16 * mi + g + ((jj & 2) ? 8 : 0), c0 + 8 * nb + 2 * t + (jj & 1))) s[mi][nb][jj] = DPPROF__ATTN_NINF;
        }
    }
}

// out, lse of 16 NW MW query rows of head h, batch b: each warp keeps its 16 MW rows of Q as mma fragments
// in registers (MW blocks of 16); per key tile S = Q K^T, the online softmax on the accumulators (in each
// row block a lane holds two rows, r0 and r1 = r0 + 8, a quad of lanes shares a row), then O += P V with
// P rounded to bf16 in registers as the A operand. P is rounded where the fp32 kernel keeps it in fp32 (as
// flash attention 2 does); l sums the unrounded p. zeros pad HS to HSP and the rows beyond T. K and V tiles
// lie in shared memory as in global (key-major), two stages: tile j + 1 is on its way (cp.async, when
// `async`) while tile j is used; the B fragments come by ldmatrix (K as is, V transposed), each serving the
// warp's MW row blocks. every row gets the same arithmetic in the same order whatever NW and MW are, so
// the outputs have the same bits (the tiles past a block's rows add p = 0 and scale by 2^0 = 1). dynamic
// shared memory FWD_BYTES. grid (ceil(T/BR), NH, B), 32 NW threads, the longest rows first
template <int HSP, int NW, int MW>
__global__ void DPPROF__ATTN_LB(32 * NW) dpprof__k_attn_fwd_tc(dpprof__bf16 *out, float *lse, const dpprof__bf16 *q, const dpprof__bf16 *k, const dpprof__bf16 *v, int T, int NH,
                                                               int NKV, int HS, float scale, int async) {
    typedef dpprof__attn_tc_cfg<HSP, NW, MW> C;
    constexpr int KS = HSP / 16, NB = C::BC / 8, ND = HSP / 8;
    static_assert(KS % 2 == 0 && ND % 2 == 0, "ldmatrix x4 takes the B fragments of two k (K) or two n (V) blocks");
    DPPROF__SMEM_DYN(dpprof__bf16, sm); // K stage 0, K stage 1, V stage 0, V stage 1
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int h = blockIdx.y, b = blockIdx.z, kvh = h / (NH / NKV);
    const int q0 = (int)(gridDim.x - 1 - blockIdx.x) * C::BR, kend = dpprof__k_attn_imin(q0 + C::BR, T), ntile = (kend + C::BC - 1) / C::BC;
    const int w0 = q0 + 16 * MW * w; // this warp's first row
    const size_t qs = (size_t)NH * HS, ks = (size_t)NKV * HS;
    const dpprof__bf16 *qb = q + (size_t)b * T * qs + (size_t)h * HS;
    const dpprof__bf16 *kb = k + (size_t)b * T * ks + (size_t)kvh * HS, *vb = v + (size_t)b * T * ks + (size_t)kvh * HS;
    // this lane's ldmatrix rows: K as is (B of K^T, two kk a call), V transposed (B of V, two n a call)
    const int koffs = dpprof__ldsm_bt<C::LDK>(lane), voffs = dpprof__ldsm_a<C::LDK>(lane);
    const bool as = async != 0;
    const float sl2 = scale * DPPROF__LOG2E;
    uint32_t qf[MW][KS][4];
    float m[MW][2], l[MW][2], o[MW][ND][4];
    dpprof__frag_rows<MW, KS>(qf, qb, qs, w0, T, HS, g, t);
    DPPROF__ATTN_UNROLL
    for (int mi = 0; mi < MW; mi++) {
        m[mi][0] = m[mi][1] = DPPROF__ATTN_NINF, l[mi][0] = l[mi][1] = 0.f;
        DPPROF__ATTN_UNROLL
        for (int n = 0; n < ND; n++) o[mi][n][0] = o[mi][n][1] = o[mi][n][2] = o[mi][n][3] = 0.f;
    }
    if (ntile > 0) {
        dpprof__tc_tile_async<C::LDK, HSP, C::BC, C::NT>(sm, kb, ks, kend, HS, as);
        dpprof__tc_tile_async<C::LDK, HSP, C::BC, C::NT>(sm + 2 * C::TILE, vb, ks, kend, HS, as);
    }
    dpprof__cp_commit();
    for (int j = 0; j < ntile; j++) {
        const int k0 = j * C::BC;
        dpprof__cp_wait<0>(); // this thread's part of tile j has landed
        __syncthreads();      // everyone's has, and tile j - 1 (the other stage) is no longer read
        if (j + 1 < ntile) {
            const int k1 = k0 + C::BC, st = (j + 1) & 1;
            dpprof__tc_tile_async<C::LDK, HSP, C::BC, C::NT>(sm + st * C::TILE, kb + (size_t)k1 * ks, ks, kend - k1, HS, as);
            dpprof__tc_tile_async<C::LDK, HSP, C::BC, C::NT>(sm + (2 + st) * C::TILE, vb + (size_t)k1 * ks, ks, kend - k1, HS, as);
        }
        dpprof__cp_commit();
        const dpprof__bf16 *Ks = sm + (j & 1) * C::TILE, *Vs = sm + (2 + (j & 1)) * C::TILE;
        float s[MW][NB][4];
        DPPROF__ATTN_UNROLL
        for (int nb = 0; nb < NB; nb++) {
            DPPROF__ATTN_UNROLL
            for (int mi = 0; mi < MW; mi++) s[mi][nb][0] = s[mi][nb][1] = s[mi][nb][2] = s[mi][nb][3] = 0.f;
            DPPROF__ATTN_UNROLL
            for (int kk = 0; kk < KS; kk += 2) {
                uint32_t bb[4];
                dpprof__ldsm4<false>(bb, Ks + 8 * nb * C::LDK + 16 * kk + koffs);
                DPPROF__ATTN_UNROLL
                for (int mi = 0; mi < MW; mi++) dpprof__mma_pair(s[mi][nb], qf[mi][kk], qf[mi][kk + 1], bb);
            }
        }
        // the causal mask and the end of the keys only where the tile crosses them for this warp's rows
        // (w0 .. w0 + 16 MW - 1): the tile on the diagonal, the last one; the others are used as they are
        if (k0 + C::BC - 1 > w0 || k0 + C::BC > kend) dpprof__attn_mask(s, w0, k0, g, t, [&](int row, int c) { return c <= row && c < kend; });
        DPPROF__ATTN_UNROLL
        for (int mi = 0; mi < MW; mi++) {
            // m is the running max of the unscaled scores (scale > 0: the same argmax); p = 2^(s sl2 - m sl2)
            float mx[2] = {DPPROF__ATTN_NINF, DPPROF__ATTN_NINF}, ps[2] = {0.f, 0.f}, msc[2];
            DPPROF__ATTN_UNROLL
            for (int nb = 0; nb < NB; nb++) {
                DPPROF__ATTN_UNROLL
                for (int jj = 0; jj < 4; jj++) mx[jj >> 1] = fmaxf(mx[jj >> 1], s[mi][nb][jj]);
            }
            DPPROF__ATTN_UNROLL
            for (int i = 0; i < 2; i++) {
                mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
                mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
                const float mn = fmaxf(m[mi][i], mx[i]);
                const float mref = mn == DPPROF__ATTN_NINF ? 0.f : mn; // a row with no key yet (beyond T): all p = 0
                const float corr = dpprof__ex2((m[mi][i] - mref) * sl2);
                msc[i] = mref * sl2;
                m[mi][i] = mn;
                l[mi][i] *= corr;
                DPPROF__ATTN_UNROLL
                for (int n = 0; n < ND; n++) o[mi][n][2 * i] *= corr, o[mi][n][2 * i + 1] *= corr;
            }
            DPPROF__ATTN_UNROLL
            for (int nb = 0; nb < NB; nb++) {
                DPPROF__ATTN_UNROLL
                for (int jj = 0; jj < 4; jj++) {
                    s[mi][nb][jj] = dpprof__ex2(fmaf(s[mi][nb][jj], sl2, -msc[jj >> 1]));
                    ps[jj >> 1] += s[mi][nb][jj];
                }
            }
            l[mi][0] += ps[0], l[mi][1] += ps[1]; // this lane's columns only; summed over the quad at the end
        }
        DPPROF__ATTN_UNROLL
        for (int kk = 0; kk < C::BC / 16; kk++) {
            uint32_t a[MW][4];
            DPPROF__ATTN_UNROLL
            for (int mi = 0; mi < MW; mi++) {
                a[mi][0] = dpprof__pack_bf16_op(s[mi][2 * kk][0], s[mi][2 * kk][1]), a[mi][1] = dpprof__pack_bf16_op(s[mi][2 * kk][2], s[mi][2 * kk][3]);
                a[mi][2] = dpprof__pack_bf16_op(s[mi][2 * kk + 1][0], s[mi][2 * kk + 1][1]), a[mi][3] = dpprof__pack_bf16_op(s[mi][2 * kk + 1][2], s[mi][2 * kk + 1][3]);
            }
            DPPROF__ATTN_UNROLL
            for (int n = 0; n < ND; n += 2) {
                uint32_t bb[4];
                dpprof__ldsm4<true>(bb, Vs + 16 * kk * C::LDK + 8 * n + voffs);
                DPPROF__ATTN_UNROLL
                for (int mi = 0; mi < MW; mi++) dpprof__mma_cols(o[mi][n], o[mi][n + 1], a[mi], bb);
            }
        }
    }
    dpprof__cp_wait<0>(); // only an empty group remains; nothing in flight at the exit
    DPPROF__ATTN_UNROLL
    for (int mi = 0; mi < MW; mi++) {
        DPPROF__ATTN_UNROLL
        for (int i = 0; i < 2; i++) {
            const int row = w0 + 16 * mi + g + 8 * i;
            float li = l[mi][i];
            li += __shfl_xor_sync(0xffffffffu, li, 1);
            li += __shfl_xor_sync(0xffffffffu, li, 2);
            if (t == 0 && row < T) lse[((size_t)b * NH + h) * T + row] = m[mi][i] * scale + logf(li);
            const float inv = 1.f / li; // l >= 1 for a real row (its max term is exp(0))
            if (row >= T) continue;
            dpprof__bf16 *orow = out + ((size_t)b * T + row) * qs + (size_t)h * HS;
            DPPROF__ATTN_UNROLL
            for (int n = 0; n < ND; n++) {
                const int c = n * 8 + 2 * t;
                if (c < HS) dpprof__st_pair(orow + c, dpprof__pack_bf16(o[mi][n][2 * i] * inv, o[mi][n][2 * i + 1] * inv));
            }
        }
    }
}

// ---- backward, kernel A: dk, dv ----
// shared: K, V tiles (BK x HSP), Q, dO tiles (BQ x HSP+4), P^T or dS^T as [q][k] (BQ x BK+4), lse, D
template <int HSP, int BK, int BQ>
struct dpprof__attn_bkv_cfg {
    static constexpr int NT = BK * 4, LDK = HSP, LDQ = HSP + 4, LDP = BK + 4;
    static constexpr int OFF_V = BK * LDK, OFF_Q = 2 * BK * LDK, OFF_DO = OFF_Q + BQ * LDQ, OFF_P = OFF_DO + BQ * LDQ;
    static constexpr int OFF_L = OFF_P + BQ * LDP, OFF_D = OFF_L + BQ, FLOATS = OFF_D + BQ;
};

// dk, dv of BK keys of kv head g, batch b: over the group's query heads and the query tiles at or
// below the diagonal, P^T = exp(scale K Q^T - lse), dS^T = P^T (V dO^T - D), dv += P^T dO,
// dk += scale dS^T Q, in registers; D = rowsum(dO * out) per query tile. grid (ceil(T/BK), NKV, B),
// BK*4 threads, the longest first. traffic: k, v, dk, dv once; q, dout, out once per key tile at or above
template <typename A, int HSP, int BK, int BQ>
__global__ void DPPROF__ATTN_LB(BK * 4) dpprof__k_attn_bkv(A *dk, A *dv, const A *dout, const A *q, const A *k, const A *v, const A *out, const float *lse, int T, int NH, int NKV, int HS, int vw, float scale) {
    typedef dpprof__attn_bkv_cfg<HSP, BK, BQ> C;
    constexpr int CJ = BQ / 16, NM = HSP / 64;
    DPPROF__SMEM_DYN(float, sm);
    float *Ks = sm, *Vs = sm + C::OFF_V, *Qs = sm + C::OFF_Q, *dOs = sm + C::OFF_DO, *Ps = sm + C::OFF_P, *Ls = sm + C::OFF_L, *Ds = sm + C::OFF_D;
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const int g = blockIdx.y, b = blockIdx.z, group = NH / NKV;
    const int k0 = (int)blockIdx.x * BK;
    const int hs4 = (HS + 3) & ~3;
    const size_t qs = (size_t)NH * HS, ks = (size_t)NKV * HS;
    const size_t koff = ((size_t)b * T + k0) * ks + (size_t)g * HS;
    float dka[4][4 * NM], dva[4][4 * NM];
    DPPROF__ATTN_UNROLL
    for (int i = 0; i < 4; i++) {
        DPPROF__ATTN_UNROLL
        for (int n = 0; n < 4 * NM; n++) dka[i][n] = 0.f, dva[i][n] = 0.f;
    }
    dpprof__k_attn_load<BK, C::LDK, C::NT>(Ks, k + koff, ks, T - k0, HS, hs4, vw);
    dpprof__k_attn_load<BK, C::LDK, C::NT>(Vs, v + koff, ks, T - k0, HS, hs4, vw);
    for (int hh = 0; hh < group; hh++) {
        const int h = g * group + hh;
        const size_t qoff = (size_t)b * T * qs + (size_t)h * HS;
        const float *lh = lse + ((size_t)b * NH + h) * T;
        for (int q0 = (k0 / BQ) * BQ; q0 < T; q0 += BQ) {
            const int qn = dpprof__k_attn_imin(BQ, T - q0);
            __syncthreads(); // the previous tile's readers of Qs, dOs, Ps, Ls, Ds are done
            dpprof__k_attn_load<BQ, C::LDQ, C::NT>(Qs, q + qoff + (size_t)q0 * qs, qs, qn, HS, hs4, vw);
            dpprof__k_attn_load<BQ, C::LDQ, C::NT>(dOs, dout + qoff + (size_t)q0 * qs, qs, qn, HS, hs4, vw);
            for (int j = threadIdx.x; j < BQ; j += C::NT) Ls[j] = j < qn ? lh[q0 + j] : 0.f;
            __syncthreads();
            dpprof__k_attn_rowdot<BQ, C::LDQ, C::NT>(Ds, dOs, out + qoff + (size_t)q0 * qs, qs, qn, HS);
            __syncthreads();
            float p[4][CJ], ds[4][CJ];
            dpprof__k_attn_dots<CJ, C::LDK, C::LDQ>(p, Ks, Qs, ty, tx, hs4);
            dpprof__k_attn_dots<CJ, C::LDK, C::LDQ>(ds, Vs, dOs, ty, tx, hs4);
            DPPROF__ATTN_UNROLL
            for (int i = 0; i < 4; i++) {
                const int key = k0 + ty * 4 + i;
                DPPROF__ATTN_UNROLL
                for (int j = 0; j < CJ; j++) {
                    const int jj = tx + 16 * j, qi = q0 + jj; // qi >= key also masks key >= T
                    p[i][j] = (qi >= key && qi < T) ? expf(p[i][j] * scale - Ls[jj]) : 0.f;
                    ds[i][j] = p[i][j] * (ds[i][j] - Ds[jj]);
                }
            }
            dpprof__k_attn_put<CJ, C::LDP>(Ps, p, ty, tx);
            __syncthreads();
            dpprof__k_attn_accum<NM, C::LDP, C::LDQ>(dva, Ps, dOs, qn, ty, tx, HS);
            __syncthreads();
            dpprof__k_attn_put<CJ, C::LDP>(Ps, ds, ty, tx);
            __syncthreads();
            dpprof__k_attn_accum<NM, C::LDP, C::LDQ>(dka, Ps, Qs, qn, ty, tx, HS);
        }
    }
    const float one[4] = {1.f, 1.f, 1.f, 1.f}, sc[4] = {scale, scale, scale, scale};
    dpprof__k_attn_store<NM>(dk + koff, dka, sc, ks, T - k0, ty, tx, HS, vw);
    dpprof__k_attn_store<NM>(dv + koff, dva, one, ks, T - k0, ty, tx, HS, vw);
}

// ---- backward, kernel B: dq ----
// shared: Q, dO tiles (BR x HSP), one V-then-K tile (BC x HSP+4), dS^T as [k][q] (BC x BR+4), D
template <int HSP, int BR, int BC>
struct dpprof__attn_bq_cfg {
    static constexpr int NT = BR * 4, LDQ = HSP, LDK = HSP + 4, LDP = BR + 4;
    static constexpr int OFF_DO = BR * LDQ, OFF_KV = 2 * BR * LDQ, OFF_P = OFF_KV + BC * LDK, OFF_D = OFF_P + BC * LDP, FLOATS = OFF_D + BR;
};

// dq of BR query rows of head h, batch b: over the key tiles up to the diagonal, dP = dO V^T (V tile),
// P = exp(scale Q K^T - lse), dS = P (dP - D) (K tile), dq += scale dS K, in registers.
// grid (ceil(T/BR), NH, B), BR*4 threads, the longest rows first. traffic: q, dout, out, dq once;
// k, v once per query tile at or below the diagonal
template <typename A, int HSP, int BR, int BC>
__global__ void DPPROF__ATTN_LB(BR * 4) dpprof__k_attn_bq(A *dq, const A *dout, const A *q, const A *k, const A *v, const A *out, const float *lse, int T, int NH, int NKV, int HS, int vw, float scale) {
    typedef dpprof__attn_bq_cfg<HSP, BR, BC> C;
    constexpr int CJ = BC / 16, NM = HSP / 64;
    DPPROF__SMEM_DYN(float, sm);
    float *Qs = sm, *dOs = sm + C::OFF_DO, *KVs = sm + C::OFF_KV, *Ps = sm + C::OFF_P, *Ds = sm + C::OFF_D;
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const int h = blockIdx.y, b = blockIdx.z, g = h / (NH / NKV);
    const int q0 = (int)(gridDim.x - 1 - blockIdx.x) * BR;
    const int hs4 = (HS + 3) & ~3, kend = dpprof__k_attn_imin(q0 + BR, T), qn = T - q0;
    const size_t qs = (size_t)NH * HS, ks = (size_t)NKV * HS;
    const size_t qoff = ((size_t)b * T + q0) * qs + (size_t)h * HS;
    const A *kb = k + (size_t)b * T * ks + (size_t)g * HS, *vb = v + (size_t)b * T * ks + (size_t)g * HS;
    dpprof__k_attn_load<BR, C::LDQ, C::NT>(Qs, q + qoff, qs, qn, HS, hs4, vw);
    dpprof__k_attn_load<BR, C::LDQ, C::NT>(dOs, dout + qoff, qs, qn, HS, hs4, vw);
    __syncthreads();
    dpprof__k_attn_rowdot<BR, C::LDQ, C::NT>(Ds, dOs, out + qoff, qs, qn, HS);
    __syncthreads();
    float L[4], D[4], dqa[4][4 * NM];
    DPPROF__ATTN_UNROLL
    for (int i = 0; i < 4; i++) {
        const int r = q0 + ty * 4 + i;
        L[i] = r < T ? lse[((size_t)b * NH + h) * T + r] : 0.f;
        D[i] = Ds[ty * 4 + i];
        DPPROF__ATTN_UNROLL
        for (int n = 0; n < 4 * NM; n++) dqa[i][n] = 0.f;
    }
    for (int k0 = 0; k0 < kend; k0 += BC) {
        const int cnt = dpprof__k_attn_imin(BC, kend - k0);
        float p[4][CJ], dp[4][CJ];
        __syncthreads(); // the previous tile's readers of KVs and Ps are done
        dpprof__k_attn_load<BC, C::LDK, C::NT>(KVs, vb + (size_t)k0 * ks, ks, cnt, HS, hs4, vw);
        __syncthreads();
        dpprof__k_attn_dots<CJ, C::LDQ, C::LDK>(dp, dOs, KVs, ty, tx, hs4);
        __syncthreads(); // V no longer read
        dpprof__k_attn_load<BC, C::LDK, C::NT>(KVs, kb + (size_t)k0 * ks, ks, cnt, HS, hs4, vw);
        __syncthreads();
        dpprof__k_attn_dots<CJ, C::LDQ, C::LDK>(p, Qs, KVs, ty, tx, hs4);
        DPPROF__ATTN_UNROLL
        for (int i = 0; i < 4; i++) {
            const int r = q0 + ty * 4 + i;
            DPPROF__ATTN_UNROLL
            for (int j = 0; j < CJ; j++) {
                const int c = k0 + tx + 16 * j;
                const float pp = (c <= r && c < kend) ? expf(p[i][j] * scale - L[i]) : 0.f;
                p[i][j] = pp * (dp[i][j] - D[i]);
            }
        }
        dpprof__k_attn_put<CJ, C::LDP>(Ps, p, ty, tx);
        __syncthreads();
        dpprof__k_attn_accum<NM, C::LDP, C::LDK>(dqa, Ps, KVs, cnt, ty, tx, HS);
    }
    const float sc[4] = {scale, scale, scale, scale};
    dpprof__k_attn_store<NM>(dq + qoff, dqa, sc, qs, qn, ty, tx, HS, vw);
}

// ---- backward on the tensor cores (bf16 storage, HS even, HS <= 128) ----
// the simt backward's two kernels with every product on mma.sync m16n8k16 (the forward's fragments):
// kernel A walks 16 NW keys a block (16 a warp) over the query tiles at or below them, kernel B 16 NW query
// rows a block (16 a warp) over the key tiles up to the diagonal. P and dS are rounded to bf16 in
// registers as the A operand of dV += P^T dO, dK += dS^T Q and dQ += dS K (as flash attention 2 does),
// so each of dq, dk, dv may differ from the fp32 computation on the same inputs by up to 2^-8 times the
// sum of its terms' magnitudes (u = 2^-8, bf16's unit roundoff) beyond its own rounding; lse and D are
// unaffected. every tile lies in shared memory as in global memory (row-major, rows padded to LDK) and
// the fragments come by ldmatrix: as is for the products over the head dimension, transposed for the
// three above (their B operands pair elements along the query or key axis). the tiles a block walks
// (Q and dO in kernel A, K and V in kernel B) come in two stages, the next by cp.async while the current
// is used (as the forward). every sum is an fp32 accumulator in a fixed order: no atomics, the same bits
// every run

// the A fragment of columns 16 kk .. of a 16-row accumulator tile (blocks 2 kk and 2 kk + 1), rounded to bf16
__device__ __forceinline__ void dpprof__frag_acc(uint32_t (&a)[4], const float (&lo)[4], const float (&hi)[4]) {
    a[0] = dpprof__pack_bf16_op(lo[0], lo[1]), a[1] = dpprof__pack_bf16_op(lo[2], lo[3]);
    a[2] = dpprof__pack_bf16_op(hi[0], hi[1]), a[3] = dpprof__pack_bf16_op(hi[2], hi[3]);
}
// the two halves of a bf16 pair, widened
__device__ __forceinline__ float dpprof__pair_lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float dpprof__pair_hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }

// NW warps of 16 MW rows: kernel A takes BK = 16 NW MW keys a block, kernel B BR = 16 NW MW query rows. BQ,
// kernel A's query tile, is also kernel B's key tile; NS stages of the tiles a kernel walks are in flight (2,
// or 4 for tiles of 16, whose compute is too short to hide a load one tile ahead). kernel A's dynamic shared
// memory: K, V (BK x LDK), Q stages and dO stages (NS each, BQ x LDK) as bf16, then lse stages and D stages
// (NS each, BQ floats), BYTES; kernel B's: K stages and V stages (NS each, BQ x LDK), BQ_BYTES
template <int HSP, int BQ, int NW, int MW = 1>
struct dpprof__attn_tc_bwd_cfg {
    static constexpr int BK = 16 * NW * MW, BR = 16 * NW * MW, NT = 32 * NW, LDK = HSP + 8, TILE = BQ * LDK, NS = BQ >= 32 ? 2 : 4;
    static constexpr int OFF_V = BK * LDK, OFF_Q = 2 * BK * LDK, HALVES = OFF_Q + 2 * NS * TILE;
    static constexpr size_t BYTES = (size_t)HALVES * 2 + 2 * NS * BQ * sizeof(float);
    static constexpr size_t BQ_BYTES = (size_t)2 * NS * TILE * 2;
};

// D = rowsum(dO * out) of a query row, computed once before the two backward kernels and kept in the row's
// own dq storage: a float over its first two bf16 (4-byte aligned: dq is, and HS is even). the dK/dV
// kernel reads it for every query tile; the dQ kernel reads its rows' D before it overwrites those rows
// (and only those), so no extra buffer exists and the model's memory stays what the dry report says
__device__ __forceinline__ float *dpprof__attn_dslot(dpprof__bf16 *dq, size_t e) { return reinterpret_cast<float *>(dq + e); }
__device__ __forceinline__ float dpprof__attn_dget(const dpprof__bf16 *dq, size_t e) { return *reinterpret_cast<const float *>(dq + e); }

// D of rows (B T NH rows of HS, row-major as q): 8 lanes a row, pairs 2 sub + 16 m in order, then a
// butterfly over the 8 (a fixed order). a warp takes 4 consecutive rows; grid-stride over warps
__global__ void dpprof__k_attn_dsum_tc(dpprof__bf16 *dq, const dpprof__bf16 *dout, const dpprof__bf16 *out, long long rows, int HS) {
    const int lane = threadIdx.x & 31, sub = lane & 7;
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    for (long long base = 4 * ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)); base < rows; base += 4 * warps) {
        const long long row = base + (lane >> 3);
        float dd = 0.f;
        if (row < rows)
            for (int d = 2 * sub; d < HS; d += 16) {
                const size_t e = (size_t)row * (size_t)HS + (size_t)d;
                const uint32_t gv = dpprof__ld_pair(dout + e), ov = dpprof__ld_pair(out + e);
                dd += dpprof__pair_lo(gv) * dpprof__pair_lo(ov);
                dd += dpprof__pair_hi(gv) * dpprof__pair_hi(ov);
            }
        for (int o = 1; o < 8; o <<= 1) dd += __shfl_xor_sync(0xffffffffu, dd, o);
        if (row < rows && sub == 0) *dpprof__attn_dslot(dq, (size_t)row * (size_t)HS) = dd;
    }
}

// dk, dv of BK keys of kv head kvh, batch b: over the group's query heads and the query tiles at or
// below the keys (tile j: head j / nq, rows k0 + BQ (j % nq) ..), S^T = K Q^T and dP^T = V dO^T,
// P^T = exp(scale S^T - lse), dS^T = P^T (dP^T - D), dv += P^T dO, dk += dS^T Q; D from dq's storage
// (dpprof__attn_dslot). tile j + 1's Q and dO come by cp.async (when `async`) and its lse and D into
// registers while tile j is used; they go to shared memory at the end of the iteration.
// grid (ceil(T/BK), NKV, B), 32 NW threads, the longest (key block 0) first
template <int HSP, int BQ, int NW>
__global__ void DPPROF__ATTN_LB(32 * NW) dpprof__k_attn_bkv_tc(dpprof__bf16 *dk, dpprof__bf16 *dv, const dpprof__bf16 *dout, const dpprof__bf16 *q, const dpprof__bf16 *k,
                                                               const dpprof__bf16 *v, const dpprof__bf16 *dsum, const float *lse, int T, int NH, int NKV, int HS, float scale,
                                                               int async) {
    typedef dpprof__attn_tc_bwd_cfg<HSP, BQ, NW> C;
    constexpr int KS = HSP / 16, ND = HSP / 8, NB = BQ / 8;
    static_assert(BQ <= C::NT, "D and lse: a thread a row of the query tile");
    static_assert(KS % 2 == 0 && ND % 2 == 0, "ldmatrix x4 takes two k or two n blocks");
    DPPROF__SMEM_DYN(dpprof__bf16, sm);
    const dpprof__bf16 *Ks = sm, *Vs = sm + C::OFF_V;
    float *LD = reinterpret_cast<float *>(sm + C::HALVES); // lse stage s at LD + s BQ, D stage s at LD + (2 + s) BQ
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int kvh = blockIdx.y, b = blockIdx.z, group = NH / NKV, k0 = (int)blockIdx.x * C::BK;
    const int nq = (T - k0 + BQ - 1) / BQ, ntile = group * nq; // k0 < T: at least one tile
    const size_t qs = (size_t)NH * HS, ks = (size_t)NKV * HS, koff = ((size_t)b * T + k0) * ks + (size_t)kvh * HS;
    const int key[2] = {k0 + 16 * w + g, k0 + 16 * w + g + 8};
    const int aoff = 16 * w * C::LDK + dpprof__ldsm_a<C::LDK>(lane), btoff = dpprof__ldsm_bt<C::LDK>(lane), boff = dpprof__ldsm_a<C::LDK>(lane);
    const bool as = async != 0;
    const float sl2 = scale * DPPROF__LOG2E;
    // tile j's head and first row; its Q and dO into stage st, its lse and D (thread < BQ: row q0 + thread) into *l, *d
    auto tile = [&](int j, int st, float *l, float *d) {
        const int h = kvh * group + j / nq, q0 = k0 + (j % nq) * BQ;
        const size_t qoff = (size_t)b * T * qs + (size_t)h * HS + (size_t)q0 * qs;
        dpprof__tc_tile_async<C::LDK, HSP, BQ, C::NT>(sm + C::OFF_Q + st * C::TILE, q + qoff, qs, T - q0, HS, as);
        dpprof__tc_tile_async<C::LDK, HSP, BQ, C::NT>(sm + C::OFF_Q + (2 + st) * C::TILE, dout + qoff, qs, T - q0, HS, as);
        if (threadIdx.x < BQ) {
            const int qi = q0 + (int)threadIdx.x;
            *l = qi < T ? lse[((size_t)b * NH + h) * T + qi] * DPPROF__LOG2E : 0.f; // base 2
            *d = qi < T ? dpprof__attn_dget(dsum, qoff + threadIdx.x * qs) : 0.f;
        }
    };
    dpprof__tc_tile_async<C::LDK, HSP, C::BK, C::NT>(sm, k + koff, ks, T - k0, HS, as);
    dpprof__tc_tile_async<C::LDK, HSP, C::BK, C::NT>(sm + C::OFF_V, v + koff, ks, T - k0, HS, as);
    {
        float l0 = 0.f, d0 = 0.f;
        tile(0, 0, &l0, &d0);
        if (threadIdx.x < BQ) LD[threadIdx.x] = l0, LD[2 * BQ + threadIdx.x] = d0;
    }
    dpprof__cp_commit();
    float dka[ND][4], dva[ND][4];
    DPPROF__ATTN_UNROLL
    for (int n = 0; n < ND; n++) {
        DPPROF__ATTN_UNROLL
        for (int j = 0; j < 4; j++) dka[n][j] = dva[n][j] = 0.f;
    }
    for (int j = 0; j < ntile; j++) {
        const int st = j & 1, q0 = k0 + (j % nq) * BQ;
        dpprof__cp_wait<0>(); // this thread's part of tile j (and of K, V) has landed
        __syncthreads();      // everyone's has, lse and D of tile j are stored, tile j - 1 is no longer read
        float nl = 0.f, nd = 0.f;
        if (j + 1 < ntile) tile(j + 1, st ^ 1, &nl, &nd);
        dpprof__cp_commit();
        const dpprof__bf16 *Qs = sm + C::OFF_Q + st * C::TILE, *dOs = sm + C::OFF_Q + (2 + st) * C::TILE;
        const float *Ls = LD + st * BQ, *Ds = LD + (2 + st) * BQ;
        float s[NB][4], dp[NB][4];
        DPPROF__ATTN_UNROLL
        for (int nb = 0; nb < NB; nb++) {
            DPPROF__ATTN_UNROLL
            for (int jj = 0; jj < 4; jj++) s[nb][jj] = dp[nb][jj] = 0.f;
        }
        DPPROF__ATTN_UNROLL
        for (int kk = 0; kk < KS; kk += 2) {
            uint32_t ka0[4], ka1[4], va0[4], va1[4];
            dpprof__ldsm4<false>(ka0, Ks + aoff + 16 * kk);
            dpprof__ldsm4<false>(ka1, Ks + aoff + 16 * kk + 16);
            dpprof__ldsm4<false>(va0, Vs + aoff + 16 * kk);
            dpprof__ldsm4<false>(va1, Vs + aoff + 16 * kk + 16);
            DPPROF__ATTN_UNROLL
            for (int nb = 0; nb < NB; nb++) {
                uint32_t bq[4], bg[4];
                dpprof__ldsm4<false>(bq, Qs + 8 * nb * C::LDK + 16 * kk + btoff);
                dpprof__ldsm4<false>(bg, dOs + 8 * nb * C::LDK + 16 * kk + btoff);
                dpprof__mma_pair(s[nb], ka0, ka1, bq);
                dpprof__mma_pair(dp[nb], va0, va1, bg);
            }
        }
        // the mask only where the tile crosses it for this warp's keys (k0 + 16 w .. + 15): queries before
        // the last key, or past T (qi >= key also masks keys >= T, which only such tiles have)
        if (q0 < k0 + 16 * w + 15 || q0 + BQ > T) {
            DPPROF__ATTN_UNROLL
            for (int nb = 0; nb < NB; nb++) {
                DPPROF__ATTN_UNROLL
                for (int jj = 0; jj < 4; jj++) {
                    const int qi = q0 + 8 * nb + 2 * t + (jj & 1);
                    if (!(qi >= key[jj >> 1] && qi < T)) s[nb][jj] = DPPROF__ATTN_NINF; // p = 2^-inf = 0
                }
            }
        }
        DPPROF__ATTN_UNROLL
        for (int nb = 0; nb < NB; nb++) {
            DPPROF__ATTN_UNROLL
            for (int jj = 0; jj < 4; jj++) {
                const int c = 8 * nb + 2 * t + (jj & 1);
                const float p = dpprof__ex2(fmaf(s[nb][jj], sl2, -Ls[c])); // exp(scale s - lse), Ls in base 2
                s[nb][jj] = p;
                dp[nb][jj] = p * (dp[nb][jj] - Ds[c]);
            }
        }
        DPPROF__ATTN_UNROLL
        for (int kk = 0; kk < BQ / 16; kk++) {
            uint32_t pa[4], da[4];
            dpprof__frag_acc(pa, s[2 * kk], s[2 * kk + 1]);
            dpprof__frag_acc(da, dp[2 * kk], dp[2 * kk + 1]);
            DPPROF__ATTN_UNROLL
            for (int n = 0; n < ND; n += 2) {
                uint32_t bo[4], bq[4];
                dpprof__ldsm4<true>(bo, dOs + 16 * kk * C::LDK + 8 * n + boff);
                dpprof__ldsm4<true>(bq, Qs + 16 * kk * C::LDK + 8 * n + boff);
                dpprof__mma_cols(dva[n], dva[n + 1], pa, bo);
                dpprof__mma_cols(dka[n], dka[n + 1], da, bq);
            }
        }
        if (j + 1 < ntile && threadIdx.x < BQ) LD[(st ^ 1) * BQ + threadIdx.x] = nl, LD[(2 + (st ^ 1)) * BQ + threadIdx.x] = nd;
    }
    dpprof__cp_wait<0>(); // only an empty group remains
    DPPROF__ATTN_UNROLL
    for (int i = 0; i < 2; i++) {
        if (key[i] >= T) continue;
        const size_t row = koff + (size_t)(key[i] - k0) * ks;
        DPPROF__ATTN_UNROLL
        for (int n = 0; n < ND; n++) {
            const int c = n * 8 + 2 * t;
            if (c >= HS) continue;
            dpprof__st_pair(dk + row + c, dpprof__pack_bf16(dka[n][2 * i] * scale, dka[n][2 * i + 1] * scale));
            dpprof__st_pair(dv + row + c, dpprof__pack_bf16(dva[n][2 * i], dva[n][2 * i + 1]));
        }
    }
}

// dq of BR = 16 NW MW query rows of head h, batch b: Q and dO of the warp's 16 MW rows (MW blocks of 16) as
// fragments in registers, D of each row from dq's storage (read before the rows are overwritten); over the
// key tiles of BC up to the diagonal, S = Q K^T, dP = dO V^T, dS = P (dP - D), dq += dS K (K transposed by
// ldmatrix). each K and V fragment a warp reads serves its MW row blocks (MW = 2: half the shared-memory
// bytes a multiply-add, as in the forward). K and V in two stages, the next by cp.async (when `async`) while
// the current is used; dynamic shared memory BQ_BYTES. every row gets the same arithmetic in the same order
// whatever BC, NW and MW are (the keys in blocks of 16, in order), so the same bits. grid (ceil(T/BR), NH, B),
// 32 NW threads, the longest rows first
template <int HSP, int BC, int NW, int MW>
__global__ void DPPROF__ATTN_LB(32 * NW) dpprof__k_attn_bq_tc(dpprof__bf16 *dq, const dpprof__bf16 *dout, const dpprof__bf16 *q, const dpprof__bf16 *k, const dpprof__bf16 *v,
                                                              const float *lse, int T, int NH, int NKV, int HS, float scale, int async) {
    typedef dpprof__attn_tc_bwd_cfg<HSP, BC, NW, MW> C;
    constexpr int KS = HSP / 16, ND = HSP / 8, NB = BC / 8, BR = C::BR;
    static_assert(KS % 2 == 0 && ND % 2 == 0, "ldmatrix x4 takes two k or two n blocks");
    DPPROF__SMEM_DYN(dpprof__bf16, sm); // K stages 0, 1, V stages 0, 1
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int h = blockIdx.y, b = blockIdx.z, kvh = h / (NH / NKV);
    const int q0 = (int)(gridDim.x - 1 - blockIdx.x) * BR, kend = dpprof__k_attn_imin(q0 + BR, T), ntile = (kend + BC - 1) / BC;
    const int w0 = q0 + 16 * MW * w; // this warp's first row
    const size_t qs = (size_t)NH * HS, ks = (size_t)NKV * HS, qoff = (size_t)b * T * qs + (size_t)h * HS;
    const dpprof__bf16 *kb = k + (size_t)b * T * ks + (size_t)kvh * HS, *vb = v + (size_t)b * T * ks + (size_t)kvh * HS;
    const int btoff = dpprof__ldsm_bt<C::LDK>(lane), boff = dpprof__ldsm_a<C::LDK>(lane);
    const bool as = async != 0;
    const float sl2 = scale * DPPROF__LOG2E;
    uint32_t qf[MW][KS][4], gf[MW][KS][4];
    float D[MW][2], L[MW][2], dqa[MW][ND][4];
    dpprof__frag_rows<MW, KS>(qf, q + qoff, qs, w0, T, HS, g, t);
    dpprof__frag_rows<MW, KS>(gf, dout + qoff, qs, w0, T, HS, g, t);
    DPPROF__ATTN_UNROLL
    for (int mi = 0; mi < MW; mi++) {
        DPPROF__ATTN_UNROLL
        for (int i = 0; i < 2; i++) {
            const int row = w0 + 16 * mi + g + 8 * i;
            D[mi][i] = row < T ? dpprof__attn_dget(dq, qoff + (size_t)row * qs) : 0.f;
            L[mi][i] = row < T ? lse[((size_t)b * NH + h) * T + row] * DPPROF__LOG2E : 0.f; // base 2
        }
        DPPROF__ATTN_UNROLL
        for (int n = 0; n < ND; n++) dqa[mi][n][0] = dqa[mi][n][1] = dqa[mi][n][2] = dqa[mi][n][3] = 0.f;
    }
    // K tile j in stage j % NS at sm + stage TILE, V tile j at sm + (NS + stage) TILE; tiles 0 .. NS - 2 on
    // their way first, one commit group each
    constexpr int NS = C::NS;
    auto tile = [&](int j) {
        const int k1 = j * BC, st = j % NS;
        dpprof__tc_tile_async<C::LDK, HSP, BC, C::NT>(sm + st * C::TILE, kb + (size_t)k1 * ks, ks, kend - k1, HS, as);
        dpprof__tc_tile_async<C::LDK, HSP, BC, C::NT>(sm + (NS + st) * C::TILE, vb + (size_t)k1 * ks, ks, kend - k1, HS, as);
    };
    DPPROF__ATTN_UNROLL
    for (int j = 0; j < NS - 1; j++) {
        if (j < ntile) tile(j);
        dpprof__cp_commit();
    }
    for (int j = 0; j < ntile; j++) {
        const int k0 = j * BC;
        dpprof__cp_wait<NS - 2>(); // this thread's part of tile j has landed (only the newer groups may not have)
        __syncthreads();           // everyone's has, and tile j - 1 (the stage tile j + NS - 1 takes) is no longer read
        if (j + NS - 1 < ntile) tile(j + NS - 1);
        dpprof__cp_commit();
        const dpprof__bf16 *Ks = sm + (j % NS) * C::TILE, *Vs = sm + (NS + j % NS) * C::TILE;
        float s[MW][NB][4], dp[MW][NB][4];
        DPPROF__ATTN_UNROLL
        for (int nb = 0; nb < NB; nb++) {
            DPPROF__ATTN_UNROLL
            for (int mi = 0; mi < MW; mi++) {
                DPPROF__ATTN_UNROLL
                for (int jj = 0; jj < 4; jj++) s[mi][nb][jj] = dp[mi][nb][jj] = 0.f;
            }
            DPPROF__ATTN_UNROLL
            for (int kk = 0; kk < KS; kk += 2) {
                uint32_t bk[4], bv[4];
                dpprof__ldsm4<false>(bk, Ks + 8 * nb * C::LDK + 16 * kk + btoff);
                dpprof__ldsm4<false>(bv, Vs + 8 * nb * C::LDK + 16 * kk + btoff);
                DPPROF__ATTN_UNROLL
                for (int mi = 0; mi < MW; mi++) {
                    dpprof__mma_pair(s[mi][nb], qf[mi][kk], qf[mi][kk + 1], bk);
                    dpprof__mma_pair(dp[mi][nb], gf[mi][kk], gf[mi][kk + 1], bv);
                }
            }
        }
        // the mask only where the tile crosses it for this warp's rows (w0 .. w0 + 16 MW - 1): the diagonal,
        // the end of the keys, rows past T
        if (k0 + BC - 1 > w0 || k0 + BC > kend || w0 + 16 * MW - 1 >= T) dpprof__attn_mask(s, w0, k0, g, t, [&](int row, int c) { return c <= row && c < kend && row < T; });
        DPPROF__ATTN_UNROLL
        for (int mi = 0; mi < MW; mi++) {
            DPPROF__ATTN_UNROLL
            for (int nb = 0; nb < NB; nb++) {
                DPPROF__ATTN_UNROLL
                for (int jj = 0; jj < 4; jj++) {
                    const int i = jj >> 1;
                    const float p = dpprof__ex2(fmaf(s[mi][nb][jj], sl2, -L[mi][i])); // exp(scale s - lse), L in base 2
                    dp[mi][nb][jj] = p * (dp[mi][nb][jj] - D[mi][i]);
                }
            }
        }
        DPPROF__ATTN_UNROLL
        for (int kk = 0; kk < BC / 16; kk++) {
            uint32_t da[MW][4];
            DPPROF__ATTN_UNROLL
            for (int mi = 0; mi < MW; mi++) dpprof__frag_acc(da[mi], dp[mi][2 * kk], dp[mi][2 * kk + 1]);
            DPPROF__ATTN_UNROLL
            for (int n = 0; n < ND; n += 2) {
                uint32_t bk[4];
                dpprof__ldsm4<true>(bk, Ks + 16 * kk * C::LDK + 8 * n + boff);
                DPPROF__ATTN_UNROLL
                for (int mi = 0; mi < MW; mi++) dpprof__mma_cols(dqa[mi][n], dqa[mi][n + 1], da[mi], bk);
            }
        }
    }
    dpprof__cp_wait<0>(); // only an empty group remains
    __syncwarp();         // every lane of the row's quad has read its D before lane 0 overwrites it
    DPPROF__ATTN_UNROLL
    for (int mi = 0; mi < MW; mi++) {
        DPPROF__ATTN_UNROLL
        for (int i = 0; i < 2; i++) {
            const int row = w0 + 16 * mi + g + 8 * i;
            if (row >= T) continue;
            dpprof__bf16 *qrow = dq + qoff + (size_t)row * qs;
            DPPROF__ATTN_UNROLL
            for (int n = 0; n < ND; n++) {
                const int c = n * 8 + 2 * t;
                if (c < HS) dpprof__st_pair(qrow + c, dpprof__pack_bf16(dqa[mi][n][2 * i] * scale, dqa[mi][n][2 * i + 1] * scale));
            }
        }
    }
}

// ---- host side ----
// 0: nothing to do; -1: a queued error; 1: go
static int dpprof__attn_shape(const char *what, int B, int T, int NH, int NKV, int HS) {
    if (B == 0 || T == 0 || NH == 0 || HS == 0) return 0;
    if (B < 0 || T < 0 || NH < 0 || HS < 0 || HS > DPPROF_MAX_HEAD_SIZE || NKV <= 0 || NH % NKV || B > 65535 || NH > 65535) {
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", what, "bad shape (HS in 1..256, NKV dividing NH, B and NH <= 65535)");
        return -1;
    }
    return 1;
}

// elements per global access: 4 when HS % 4 == 0 and every pointer is aligned to 4 elements (16 bytes
// in fp32, 8 in bf16), 2 when even and aligned to 2
static int dpprof__attn_vw(int HS, const void *const *p, int n, size_t es) {
    uintptr_t a = 0;
    for (int i = 0; i < n; i++) a |= (uintptr_t)p[i];
    if (HS % 4 == 0 && !(a & (4 * es - 1))) return 4;
    if (HS % 2 == 0 && !(a & (2 * es - 1))) return 2;
    return 1;
}

template <typename A, int HSP, int BR, int BC>
static void dpprof__attn_fwd_run(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS, float scale) {
    const char *what = "dpprof_attention_fwd_gpu";
    const size_t smem = sizeof(float) * dpprof__attn_fwd_cfg<HSP, BR, BC>::FLOATS;
    const void *p[] = {out, q, k, v};
    const int vw = dpprof__attn_vw(HS, p, 4, sizeof(A));
    dpprof__smem_optin(dpprof__k_attn_fwd<A, HSP, BR, BC>, smem, what);
    dpprof__launch(what, dpprof__k_attn_fwd<A, HSP, BR, BC>, dim3((unsigned)((T + BR - 1) / BR), (unsigned)NH, (unsigned)B), dim3(BR * 4), smem,
                   dpprof__act<A>(out), lse, dpprof__act<A>(q), dpprof__act<A>(k), dpprof__act<A>(v), T, NH, NKV, HS, vw, scale);
}

template <int HSP, int NW, int MW>
static void dpprof__attn_fwd_tc_run(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS, float scale) {
    typedef dpprof__attn_tc_cfg<HSP, NW, MW> C;
    const char *what = "dpprof_attention_fwd_gpu";
    // cp.async takes whole 16-byte chunks: HS a multiple of 8 and k, v 16-byte aligned (rows are then too)
    const int async = HS % 8 == 0 && !(((uintptr_t)k | (uintptr_t)v) & 15);
    dpprof__smem_optin(dpprof__k_attn_fwd_tc<HSP, NW, MW>, C::FWD_BYTES, what);
    dpprof__launch(what, dpprof__k_attn_fwd_tc<HSP, NW, MW>, dim3((unsigned)((T + C::BR - 1) / C::BR), (unsigned)NH, (unsigned)B), dim3(C::NT), C::FWD_BYTES,
                   dpprof__act<dpprof__bf16>(out), lse, dpprof__act<dpprof__bf16>(q), dpprof__act<dpprof__bf16>(k), dpprof__act<dpprof__bf16>(v), T, NH, NKV, HS,
                   scale, async);
}

// D of every query row into dq's storage (dpprof__attn_dslot), kernel A (dk, dv) in blocks of 16 NW keys
// with query tiles of BQ, then kernel B (dq) in blocks of 16 NW query rows with key tiles of BQ; with MW = 2
// (32 rows a warp, HSP up to 64) kernel B takes NW / 2 warps of 32 rows and key tiles of 16 in 4 stages.
// kernel A keeps 16 keys a warp: with two key blocks a warp its registers allow query tiles of 16 only, and a
// warp then reads its keys' K and V fragments again every tile, so its ldmatrix bytes a multiply-add hardly
// fall (1/8 against 0.137 with MW = 1, 11%) while its barriers double. kernel A's shared memory for (HSP, BQ)
// = (32, 64), (64, 64), (128, 32): 31 / 55 / 68.5 KiB with NW = 4, 41 / 73 / 102.5 KiB with NW = 8 (beyond
// sm_86's 99 KiB opt-in: there the 128-row HSP 128 backward is an error naming the bytes, dpprof__smem_optin);
// kernel B's: 20 / 36 / 34 KiB, 10 / 18 KiB with MW = 2 (the forward's: 20 / 36 / 68)
template <int HSP, int BQ, int NW, int MW>
static void dpprof__attn_bwd_tc_run(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS, float scale) {
    const char *what = "dpprof_attention_bwd_gpu";
    typedef dpprof__attn_tc_bwd_cfg<HSP, BQ, NW> C;
    constexpr int BCQ = MW == 2 ? 16 : BQ; // kernel B's key tile: 16 with two row blocks a warp (their registers)
    typedef dpprof__attn_tc_bwd_cfg<HSP, BCQ, NW / MW, MW> CQ;
    const dim3 grid_kv((unsigned)((T + C::BK - 1) / C::BK), (unsigned)NKV, (unsigned)B), grid_q((unsigned)((T + C::BR - 1) / C::BR), (unsigned)NH, (unsigned)B);
    typedef dpprof__bf16 H;
    const long long rows = (long long)B * T * NH, dblocks = (rows + 31) / 32;
    // cp.async takes whole 16-byte chunks: HS a multiple of 8 and every tile's source 16-byte aligned
    const int async = HS % 8 == 0 && !(((uintptr_t)q | (uintptr_t)k | (uintptr_t)v | (uintptr_t)dout) & 15);
    dpprof__smem_optin(dpprof__k_attn_bkv_tc<HSP, BQ, NW>, C::BYTES, what);
    dpprof__smem_optin(dpprof__k_attn_bq_tc<HSP, BCQ, NW / MW, MW>, CQ::BQ_BYTES, what);
    dpprof__launch(what, dpprof__k_attn_dsum_tc, dim3((unsigned)(dblocks < (1 << 20) ? dblocks : (1 << 20))), dim3(256), 0, dpprof__act<H>(dq), dpprof__act<H>(dout),
                   dpprof__act<H>(out), rows, HS);
    dpprof__launch(what, dpprof__k_attn_bkv_tc<HSP, BQ, NW>, grid_kv, dim3(C::NT), C::BYTES, dpprof__act<H>(dk), dpprof__act<H>(dv), dpprof__act<H>(dout), dpprof__act<H>(q),
                   dpprof__act<H>(k), dpprof__act<H>(v), dpprof__act<H>(dq), lse, T, NH, NKV, HS, scale, async);
    dpprof__launch(what, dpprof__k_attn_bq_tc<HSP, BCQ, NW / MW, MW>, grid_q, dim3(CQ::NT), CQ::BQ_BYTES, dpprof__act<H>(dq), dpprof__act<H>(dout), dpprof__act<H>(q),
                   dpprof__act<H>(k), dpprof__act<H>(v), lse, T, NH, NKV, HS, scale, async);
}

// the tensor-core block rows of the forward in effect: the caller's choice, else the device's default (128 on
// sm_90+), unless the device's shared-memory opt-in cannot hold the 128-row backward's largest tile set
static int dpprof__attn_rows() {
    if (dpprof__cu.tune.attention_block) return dpprof__cu.tune.attention_block;
    if (dpprof__cu.smem_optin > 0 && (size_t)dpprof__cu.smem_optin < dpprof__attn_tc_bwd_cfg<128, 32, 8>::BYTES) return 64;
    return dpprof__cu.attn_rows_default;
}
// the backward's: the caller's choice, else 64 (on an H200 at the trainer shape the dk/dv kernel took 372 us in
// 64-row blocks against 404 in 128, the dq kernel 271 against 301; the same at T = 16384)
static int dpprof__attn_bwd_rows() {
    return dpprof__cu.tune.attention_block ? dpprof__cu.tune.attention_block : 64;
}

// attention on the tensor cores: bf16 storage, not switched off (dpprof_cuda_tuning.attention_simt),
// an even head size up to 128 and every pointer 4-byte aligned (the kernels move bf16 pairs)
template <typename A>
static bool dpprof__attn_tc(int HS, const void *const *p, int n) {
    return std::is_same<A, dpprof__bf16>::value && !dpprof__cu.tune.attention_simt && HS % 2 == 0 && HS <= 128 && dpprof__attn_vw(HS, p, n, sizeof(A)) >= 2;
}

// the query rows a warp of the tensor-core forward in effect: the caller's choice, else the device's default
// (32 on sm_90+). 32 applies to head sizes up to 64; larger ones keep 16 (their accumulators fill the registers)
static int dpprof__attn_warp_rows() {
    if (dpprof__cu.tune.attention_warp_rows) return dpprof__cu.tune.attention_warp_rows;
    return dpprof__cu.attn_warp_rows_default == 32 ? 32 : 16;
}
// the dq kernel's: the caller's choice, else 16 (measured faster than 32 on an H200: dpprof_cuda_init)
static int dpprof__attn_bwd_warp_rows() {
    return dpprof__cu.tune.attention_warp_rows ? dpprof__cu.tune.attention_warp_rows : 16;
}

// the tensor-core kernels by head size (HSP 32, 64, 128; the backward's query tile 64, 64, 32) and
// block rows (dpprof_cuda_tuning.attention_block: 64 or 128, NW = 4 or 8 warps; by default the forward 128 on sm_90+,
// else 64, the backward 64).
// the forward takes NW warps of 16 MW rows (dpprof_cuda_tuning.attention_warp_rows); at HSP 128, MW = 1
template <int NW, int MW>
static void dpprof__attn_fwd_tc_hs(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS, float scale) {
    if (HS <= 32) dpprof__attn_fwd_tc_run<32, NW, MW>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
    else if (HS <= 64) dpprof__attn_fwd_tc_run<64, NW, MW>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
    else dpprof__attn_fwd_tc_run<128, NW * MW, 1>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
}
template <int NW, int MW>
static void dpprof__attn_bwd_tc_hs(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS, float scale) {
    if (HS <= 32) dpprof__attn_bwd_tc_run<32, 64, NW, MW>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
    else if (HS <= 64) dpprof__attn_bwd_tc_run<64, 64, NW, MW>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
    else dpprof__attn_bwd_tc_run<128, 32, NW, 1>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
}

template <typename A, int HSP, int BK, int BQ, int BR, int BC>
static void dpprof__attn_bwd_run(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS, float scale) {
    const char *what = "dpprof_attention_bwd_gpu";
    const size_t smem_a = sizeof(float) * dpprof__attn_bkv_cfg<HSP, BK, BQ>::FLOATS;
    const size_t smem_b = sizeof(float) * dpprof__attn_bq_cfg<HSP, BR, BC>::FLOATS;
    const void *p[] = {dq, dk, dv, dout, q, k, v, out};
    const int vw = dpprof__attn_vw(HS, p, 8, sizeof(A));
    dpprof__smem_optin(dpprof__k_attn_bkv<A, HSP, BK, BQ>, smem_a, what);
    dpprof__smem_optin(dpprof__k_attn_bq<A, HSP, BR, BC>, smem_b, what);
    dpprof__launch(what, dpprof__k_attn_bkv<A, HSP, BK, BQ>, dim3((unsigned)((T + BK - 1) / BK), (unsigned)NKV, (unsigned)B), dim3(BK * 4), smem_a,
                   dpprof__act<A>(dk), dpprof__act<A>(dv), dpprof__act<A>(dout), dpprof__act<A>(q), dpprof__act<A>(k), dpprof__act<A>(v), dpprof__act<A>(out), lse,
                   T, NH, NKV, HS, vw, scale);
    dpprof__launch(what, dpprof__k_attn_bq<A, HSP, BR, BC>, dim3((unsigned)((T + BR - 1) / BR), (unsigned)NH, (unsigned)B), dim3(BR * 4), smem_b,
                   dpprof__act<A>(dq), dpprof__act<A>(dout), dpprof__act<A>(q), dpprof__act<A>(k), dpprof__act<A>(v), dpprof__act<A>(out), lse, T, NH, NKV, HS, vw,
                   scale);
}

// tiles by head size (shared memory: forward 50 / 82 / 69 KiB, dk-dv 58 / 70 / 99 KiB, dq 66 / 53 / 83 KiB
// for HSP 64 / 128 / 256: all within the 99 KiB opt-in of sm_86, the 163 KiB of sm_80, the 227 KiB of sm_90).
// bf16 storage: the same tiles, in shared memory as float (widened on load, rounded on the final store)
template <typename A>
static void dpprof__attn_fwd(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS) {
    const float scale = (float)(1.0 / std::sqrt((double)HS));
    const void *p[] = {out, q, k, v};
    if (dpprof__attn_tc<A>(HS, p, 4)) {
        const int rows = dpprof__attn_rows(), wide = dpprof__attn_warp_rows() == 32;
        if (rows == 128 && wide) dpprof__attn_fwd_tc_hs<4, 2>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
        else if (rows == 128) dpprof__attn_fwd_tc_hs<8, 1>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
        else if (wide) dpprof__attn_fwd_tc_hs<2, 2>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
        else dpprof__attn_fwd_tc_hs<4, 1>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
        return;
    }
    if (HS <= 64) dpprof__attn_fwd_run<A, 64, 64, 64>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
    else if (HS <= 128) dpprof__attn_fwd_run<A, 128, 64, 64>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
    else dpprof__attn_fwd_run<A, 256, 32, 32>(out, lse, q, k, v, B, T, NH, NKV, HS, scale);
}

template <typename A>
static void dpprof__attn_bwd(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS) {
    const float scale = (float)(1.0 / std::sqrt((double)HS));
    const void *p[] = {dq, dk, dv, dout, q, k, v, out};
    if (dpprof__attn_tc<A>(HS, p, 8)) {
        const int rows = dpprof__attn_bwd_rows(), wide = dpprof__attn_bwd_warp_rows() == 32;
        if (rows == 128) {
            if (wide) dpprof__attn_bwd_tc_hs<8, 2>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
            else dpprof__attn_bwd_tc_hs<8, 1>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
        } else if (wide) dpprof__attn_bwd_tc_hs<4, 2>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
        else dpprof__attn_bwd_tc_hs<4, 1>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
        return;
    }
    if (HS <= 64) dpprof__attn_bwd_run<A, 64, 64, 32, 64, 64>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
    else if (HS <= 128) dpprof__attn_bwd_run<A, 128, 32, 32, 32, 32>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
    else dpprof__attn_bwd_run<A, 256, 32, 16, 32, 16>(dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS, scale);
}

extern "C" void dpprof_attention_fwd_gpu(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS) {
    if (dpprof__attn_shape("dpprof_attention_fwd_gpu", B, T, NH, NKV, HS) <= 0) return;
    DPPROF__BY_STORAGE(dpprof__attn_fwd, out, lse, q, k, v, B, T, NH, NKV, HS);
}

extern "C" void dpprof_attention_bwd_gpu(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS) {
    if (dpprof__attn_shape("dpprof_attention_bwd_gpu", B, T, NH, NKV, HS) <= 0) return;
    DPPROF__BY_STORAGE(dpprof__attn_bwd, dq, dk, dv, dout, q, k, v, out, lse, B, T, NH, NKV, HS);
}

// ---- dp ops: per-sample gradients, norms and clipped sums (dpprof_<op>_ref in dpprof.h) ---------
// bf16 storage: dy, x, inp are activations, read as bf16 and widened on load (dpprof__ld); every
// output here is fp32 or double, so after the loads the kernels are the fp32 ones.
// determinism: no float atomics anywhere. every norm is reduced in double: a thread's terms in a fixed
// order, a block's threads by a fixed shared-memory tree into one partial per block in the scratch,
// then one block per sample adds its partials in index order (dpprof__k_dp_reduce) into norm2[i].
// the slot counts (partials per sample) depend only on the shapes, never on the scratch size, so
// a shape gives the same bits on every run and every workspace. every block uses 256 threads.
// precision: the gemm-shaped sums (psgrad, clipgrad, the g_i tiles of the psg flash norm, the gram
// tiles) are fp32 fma chains in row/feature order where the reference sums in double (the tests'
// 1e-5 relative holds with ~100x margin at their sizes); squares, products of gram tiles, norms, and
// the sums of clipsum, rmsnorm_psdweight and the embedding ops are in double as the reference.
#define DPPROF__DP_NT 256    // threads per block, all dp kernels
#define DPPROF__DP_TM 64     // gemm output tile: rows (OC, or s positions)
#define DPPROF__DP_TN 64     // gemm output tile: columns (IC, or t positions)
#define DPPROF__DP_TK 16     // rows of dy/x per shared-memory stage (dy^T x core)
#define DPPROF__DP_TF 32     // features per shared-memory stage (x x^T core)
#define DPPROF__DP_CPT 8     // channels per thread in the embedding kernels
#ifndef DPPROF__DP_CAP_BYTES // scratch the dp ops plan for (tests may shrink it to force chunking)
#define DPPROF__DP_CAP_BYTES (DPPROF_SCRATCH_BYTES - DPPROF__FLAG_BYTES)
#endif
#define DPPROF__DP_CAP ((long long)(DPPROF__DP_CAP_BYTES / sizeof(double))) // partials that fit
#define DPPROF__DP_MAXZ 65535LL                                             // gridDim.y/z limit

static long long dpprof__dp_min(long long a, long long b) { return a < b ? a : b; }
static long long dpprof__dp_cdiv(long long a, long long b) { return (a + b - 1) / b; }
// samples per launch: as many as have `per` units each in `cap` units, at least 1, at most the grid's z
static long long dpprof__dp_chunk(long long n, long long cap, long long per) {
    long long k = dpprof__dp_min(dpprof__dp_min(n, cap / per), DPPROF__DP_MAXZ);
    return k < 1 ? 1 : k;
}

// sum of v over a block's NT threads in a fixed tree (red: NT shared doubles); all threads get it
template <int NT>
__device__ __forceinline__ double dpprof__block_sum_n(double v, double *red) {
    const int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    double r = red[0];
    __syncthreads(); // red may be reused at once
    return r;
}
// the dp kernels' 256 threads
__device__ __forceinline__ double dpprof__k_dp_block_sum(double v, double *red) { return dpprof__block_sum_n<DPPROF__DP_NT>(v, red); }

// norm2[b] += sum_{j<G} part[b*G + j]: one block per sample, threads strided over j, then the tree.
// grid (samples), reads G doubles per sample
__global__ void dpprof__k_dp_reduce(double *norm2, const double *part, long long G) {
    __shared__ double red[DPPROF__DP_NT];
    const double *p = part + (size_t)blockIdx.x * (size_t)G;
    double s = 0.0;
    for (long long j = threadIdx.x; j < G; j += DPPROF__DP_NT) s += p[j];
    s = dpprof__k_dp_block_sum(s, red);
    if (threadIdx.x == 0) norm2[blockIdx.x] += s;
}

// ---- the gemm core "dy^T x over a range of rows" --------------------------------------------------
// one stage: rows rs .. rs+15 of dy (columns o0..o0+63) and x (columns k0..k0+63) into registers, 4
// elements of each per thread: row rs + (tid>>6) + 4l, column tid&63 (a warp reads 32 consecutive floats
// of one row). zero outside [.., r1) x OC/IC. with c, dy is loaded as (float)(c[r/T] * (double)dy)
template <typename A>
__device__ __forceinline__ void dpprof__k_dp_load_tn(float ra[4], float rb[4], const A *dy, const A *x, long long rs, long long r1,
                                                     int o0, int k0, int OC, int IC, const double *c, int T) {
    const int cc = threadIdx.x & 63, rr0 = threadIdx.x >> 6;
    const bool oa = o0 + cc < OC, ob = k0 + cc < IC;
    const long long q = c ? rs / T : 0; // sample of row rs (one division per stage)
    for (int l = 0; l < 4; l++) {
        long long r = rs + rr0 + 4 * l;
        float va = 0.0f, vb = 0.0f;
        if (r < r1) {
            if (oa) {
                va = dpprof__ld(dy[(size_t)r * (size_t)OC + (size_t)(o0 + cc)]);
                if (c) {
                    long long i = q, rem = r - q * T;
                    while (rem >= T) {
                        rem -= T;
                        i++;
                    }
                    va = (float)(c[i] * (double)va);
                }
            }
            if (ob) vb = dpprof__ld(x[(size_t)r * (size_t)IC + (size_t)(k0 + cc)]);
        }
        ra[l] = va;
        rb[l] = vb;
    }
}

// acc[a][b] = sum_{r0 <= r < r1} w_r dy[r, o0+4ty+a] * x[r, k0+4tx+b] (tx = tid%16, ty = tid/16): fp32 fma
// in row order, 4 contiguous columns per thread (16-byte shared loads from the alignas(16) tiles).
// dy (rows,OC), x (rows,IC) row-major; outside OC/IC the operands load as 0, so those acc are exactly 0.
// w_r = 1 when c is null, else c[r/T] applied to dy on load: the clip factor times dy in double,
// rounded to float once (the reference's w*g before its double sum). stages of 16 rows; the next
// stage's global loads are issued before the current stage is computed (register prefetch)
template <typename A>
__device__ __forceinline__ void dpprof__k_dp_gemm_tn(float acc[4][4], float (*sA)[DPPROF__DP_TM], float (*sB)[DPPROF__DP_TN],
                                                     const A *dy, const A *x, long long r0, long long r1, int o0, int k0,
                                                     int OC, int IC, const double *c, int T) {
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int cc = tid & 63, rr0 = tid >> 6;
    float ra[4], rb[4];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) acc[a][b] = 0.0f;
    if (r1 <= r0) return;
    dpprof__k_dp_load_tn(ra, rb, dy, x, r0, r1, o0, k0, OC, IC, c, T);
    for (long long rs = r0; rs < r1; rs += DPPROF__DP_TK) {
        for (int l = 0; l < 4; l++) {
            sA[rr0 + 4 * l][cc] = ra[l];
            sB[rr0 + 4 * l][cc] = rb[l];
        }
        __syncthreads();
        if (rs + DPPROF__DP_TK < r1) dpprof__k_dp_load_tn(ra, rb, dy, x, rs + DPPROF__DP_TK, r1, o0, k0, OC, IC, c, T);
        int nk = r1 - rs < DPPROF__DP_TK ? (int)(r1 - rs) : DPPROF__DP_TK;
        for (int kk = 0; kk < nk; kk++) {
            float av[4], bv[4];
            for (int a = 0; a < 4; a++) av[a] = sA[kk][4 * ty + a];
            for (int b = 0; b < 4; b++) bv[b] = sB[kk][4 * tx + b];
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++) acc[a][b] += av[a] * bv[b]; // an fma under nvcc
        }
        __syncthreads();
    }
}

// ---- the gemm core "x x^T over features" (gram tiles) -----------------------------------------------
#define DPPROF__DP_LDT (DPPROF__DP_TM + 4) // row stride of the transposed tiles: 16-byte rows, see below

// one stage: features f0 .. f0+31 of rows [0,na) of A and [0,nb) of B into registers, 8 of each per
// thread: feature (lane&7) + 8(l&3), row (lane>>3) + 4 warp + 32(l>>2); a warp reads 4 rows x 8
// consecutive floats (4 full 32-byte sectors); zero outside the rows and F
template <typename S>
__device__ __forceinline__ void dpprof__k_dp_load_nt(float ra[8], float rb[8], const S *A, const S *B, int na, int nb, int F, int f0) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int l = 0; l < 8; l++) {
        int f = f0 + (lane & 7) + 8 * (l & 3), rw = (lane >> 3) + 4 * w + 32 * (l >> 2);
        ra[l] = f < F && rw < na ? dpprof__ld(A[(size_t)rw * (size_t)F + (size_t)f]) : 0.0f;
        rb[l] = f < F && rw < nb ? dpprof__ld(B[(size_t)rw * (size_t)F + (size_t)f]) : 0.0f;
    }
}

// acc[a][b] = sum_{f<F} A[s][f] B[t][f] with s = 4ty+a, t = 4tx+b: A = rows [0,na) of A (row stride F),
// B = rows [0,nb) of B; rows past na/nb load as 0, so their acc are exactly 0. stages of 32 features,
// register prefetch as the other core; the tiles are stored transposed (feature-major) with row stride
// 68: the stores are bank-conflict free (bank 4*feature + row covers all 32 in a warp) and the reads
// are 16-byte loads
template <typename S>
__device__ __forceinline__ void dpprof__k_dp_gemm_nt(float acc[4][4], float (*sA)[DPPROF__DP_LDT], float (*sB)[DPPROF__DP_LDT],
                                                     const S *A, const S *B, int na, int nb, int F) {
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int lane = tid & 31, w = tid >> 5;
    float ra[8], rb[8];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) acc[a][b] = 0.0f;
    if (F <= 0) return;
    dpprof__k_dp_load_nt(ra, rb, A, B, na, nb, F, 0);
    for (int f0 = 0; f0 < F; f0 += DPPROF__DP_TF) {
        for (int l = 0; l < 8; l++) {
            int f = (lane & 7) + 8 * (l & 3), rw = (lane >> 3) + 4 * w + 32 * (l >> 2);
            sA[f][rw] = ra[l];
            sB[f][rw] = rb[l];
        }
        __syncthreads();
        if (f0 + DPPROF__DP_TF < F) dpprof__k_dp_load_nt(ra, rb, A, B, na, nb, F, f0 + DPPROF__DP_TF);
        int nf = F - f0 < DPPROF__DP_TF ? F - f0 : DPPROF__DP_TF;
        for (int kk = 0; kk < nf; kk++) {
            float av[4], bv[4];
            for (int a = 0; a < 4; a++) av[a] = sA[kk][4 * ty + a];
            for (int b = 0; b < 4; b++) bv[b] = sB[kk][4 * tx + b];
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++) acc[a][b] += av[a] * bv[b]; // an fma under nvcc
        }
        __syncthreads();
    }
}

// upper-triangle tile pair p (p = tb(tb+1)/2 + sa, sa <= tb) of an m x m tile grid
__device__ __forceinline__ void dpprof__k_dp_pair(long long p, long long *sa, long long *tb) {
    long long t = (long long)((sqrt(8.0 * (double)p + 1.0) - 1.0) * 0.5);
    while (t > 0 && t * (t + 1) / 2 > p) t--;
    while ((t + 1) * (t + 2) / 2 <= p) t++;
    *tb = t;
    *sa = p - t * (t + 1) / 2;
}

// ---- linear layers ---------------------------------------------------------------------------------

// psg[i] (OC,IC) = dy_i^T x_i, overwritten (zeros when T = 0). grid (OC/64, IC/64, samples strided);
// each block reads a 64-column strip of dy_i and of x_i once and writes its 64x64 tile
template <typename A>
__global__ void dpprof__k_dp_psgrad(float *psg, const A *dy, const A *x, int n, int T, int IC, int OC) {
    alignas(16) __shared__ float sA[DPPROF__DP_TK][DPPROF__DP_TM], sB[DPPROF__DP_TK][DPPROF__DP_TN];
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const int o0 = blockIdx.x * DPPROF__DP_TM, k0 = blockIdx.y * DPPROF__DP_TN;
    for (int i = blockIdx.z; i < n; i += gridDim.z) {
        float acc[4][4];
        dpprof__k_dp_gemm_tn(acc, sA, sB, dy, x, (long long)i * T, (long long)i * T + T, o0, k0, OC, IC, nullptr, T);
        float *out = psg + (size_t)i * (size_t)OC * (size_t)IC;
        for (int a = 0; a < 4; a++) {
            int o = o0 + 4 * ty + a;
            if (o >= OC) continue;
            for (int b = 0; b < 4; b++) {
                int k = k0 + 4 * tx + b;
                if (k < IC) out[(size_t)o * (size_t)IC + (size_t)k] = acc[a][b];
            }
        }
    }
}

extern "C" void dpprof_linear_psgrad_gpu(float *psg, const float *dy, const float *x, int n, int T, int IC, int OC) {
    if (n <= 0 || IC <= 0 || OC <= 0) return;
    if (T < 0) T = 0;
    long long ty = dpprof__dp_cdiv(IC, DPPROF__DP_TN);
    if (ty > DPPROF__DP_MAXZ) {
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", "dpprof_linear_psgrad_gpu", "IC too large for the grid");
        return;
    }
    dim3 grid((unsigned)dpprof__dp_cdiv(OC, DPPROF__DP_TM), (unsigned)ty, (unsigned)dpprof__dp_min(n, DPPROF__DP_MAXZ));
    if (dpprof__cu.bf16 && T > 0) {
        // bf16: the tensor cores, one strided-batched cuBLAS GEMM, fp32 out. psg_i row-major (OC,IC) is
        // column-major (IC,OC) = X_i (IC,T) DY_i^T (T,OC), x_i and dy_i row-major (T,IC), (T,OC). the simt
        // kernel ran at 2% of the bf16 peak on an H100 (1.6 s of a 3.4 s step at longctx, T = 16384)
        const float one = 1.0f, zero = 0.0f;
        if (dpprof__cu.err) return;
        dpprof__blas_post("dpprof_linear_psgrad_gpu",
                          cublasGemmStridedBatchedEx(dpprof__cu.blas, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, T, &one, dpprof__act<dpprof__bf16>(x), CUDA_R_16BF, IC,
                                                     (long long)T * IC, dpprof__act<dpprof__bf16>(dy), CUDA_R_16BF, OC, (long long)T * OC, &zero, psg, CUDA_R_32F,
                                                     IC, (long long)OC * IC, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if (dpprof__cu.bf16) // T = 0: zeros, the inputs not read
        dpprof__launch("dpprof_linear_psgrad_gpu", dpprof__k_dp_psgrad<dpprof__bf16>, grid, dim3(DPPROF__DP_NT), 0, psg, dpprof__act<dpprof__bf16>(dy),
                       dpprof__act<dpprof__bf16>(x), n, T, IC, OC);
    else dpprof__launch("dpprof_linear_psgrad_gpu", dpprof__k_dp_psgrad<float>, grid, dim3(DPPROF__DP_NT), 0, psg, dy, x, n, T, IC, OC);
}

// flash norm, psg flavour: the fused epilogue. block (slot j, sample i0+z) builds the 64x64 tiles
// p = j, j+G, ... of g_i = dy_i^T x_i (fp32 fma over the T rows), squares them in double and writes one
// partial part[z*G + j]; no (OC,IC) tile ever leaves the chip. grid (G, 1, samples of the chunk);
// reads dy_i, x_i strips once per tile
__global__ void dpprof__k_dp_sqnorm_psg(double *part, const float *dy, const float *x, int i0, int T, int IC, int OC, long long tiles_k,
                                        long long tiles, long long G) {
    alignas(16) __shared__ float sA[DPPROF__DP_TK][DPPROF__DP_TM], sB[DPPROF__DP_TK][DPPROF__DP_TN];
    __shared__ double red[DPPROF__DP_NT];
    const long long i = (long long)i0 + blockIdx.z;
    double s = 0.0;
    for (long long p = blockIdx.x; p < tiles; p += G) {
        float acc[4][4];
        int o0 = (int)(p / tiles_k) * DPPROF__DP_TM, k0 = (int)(p % tiles_k) * DPPROF__DP_TN;
        dpprof__k_dp_gemm_tn(acc, sA, sB, dy, x, i * T, i * T + T, o0, k0, OC, IC, nullptr, T);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) s += (double)acc[a][b] * (double)acc[a][b];
    }
    s = dpprof__k_dp_block_sum(s, red);
    if (threadIdx.x == 0) part[(size_t)blockIdx.z * (size_t)G + blockIdx.x] = s;
}

static void dpprof__dp_rowdots(const char *what, double *norm2, const float *a, const float *b, int n, size_t P);

// the rows per block when at most `most` fit: as many blocks as needed, of equal size (no thin last one)
static long long dpprof__even_blocks(long long total, long long most) {
    if (most >= total || most < 1) return most < 1 ? most : total;
    long long nb = (total + most - 1) / most;
    return (total + nb - 1) / nb;
}

// the blocked bf16 norms' scratch: the row dots' partials first (one sample's: at most 4096 doubles),
// then `mats` fp32 matrices of rows x width, rows (*rows, at most total, equal blocks) as many as fit.
// nullptr (with the error queued) when not even one row fits
static float *dpprof__norm_blocks(const char *what, long long total, size_t width, int mats, long long *rows) {
    const size_t part_bytes = 4096 * sizeof(double), avail = dpprof__model_avail(), per_row = (size_t)mats * sizeof(float) * width;
    *rows = dpprof__even_blocks(total, avail > part_bytes ? (long long)((avail - part_bytes) / per_row) : 0);
    unsigned char *base = (unsigned char *)dpprof__scratch(part_bytes + per_row * (size_t)(*rows > 0 ? *rows : 1), what);
    return base && *rows >= 1 ? (float *)(base + part_bytes) : nullptr;
}

// bf16 flash norm, per-sample-gradient flavour, on the tensor cores: g_i is built OCb output rows at a
// time in the scratch (fp32, a block of at most the scratch, never OC x IC) by a cuBLAS GEMM over T, and
// square-summed in double by the fixed-order row dots before the next block overwrites it
static void dpprof__sqnorm_psg_bf16(double *norm2, const dpprof__bf16 *dy, const dpprof__bf16 *x, int n, int T, int IC, int OC) {
    const char *what = "dpprof_linear_sqnorm_psg_gpu";
    long long OCb;
    float *g = dpprof__norm_blocks(what, OC, (size_t)IC, 1, &OCb);
    if (!g) return; // IC too wide for the scratch: the error is queued
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < n && st == CUBLAS_STATUS_SUCCESS && !dpprof__cu.err; i++) {
        const dpprof__bf16 *xi = x + (size_t)i * T * IC, *gi = dy + (size_t)i * T * OC;
        for (int o0 = 0; o0 < OC && st == CUBLAS_STATUS_SUCCESS; o0 += (int)OCb) {
            const int ob = o0 + (int)OCb < OC ? (int)OCb : OC - o0;
            // column-major: g (IC, ob) = X_i (IC, T) DY_i[o0:o0+ob, :]^T, i.e. rows o0.. of dy_i^T x_i
            st = dpprof__gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_T, IC, ob, T, 1.0f, xi, IC, gi + o0, OC, 0.0f, g, CUDA_R_32F, IC);
            if (st == CUBLAS_STATUS_SUCCESS) dpprof__dp_rowdots(what, norm2 + i, g, g, 1, (size_t)ob * (size_t)IC);
        }
    }
    dpprof__blas_post(what, st);
}

// book-keeping clipped gradient (fp32 storage; bf16 goes to cuBLAS above): dw (OC,IC) += sum_r w_r dy_r^T x_r over all n*T rows, w_r = c[r/T]
// (dy scaled on load, the product in double rounded to float once); the tile is summed in fp32 and
// added to dw with one float add. each dw element is owned by one thread: deterministic.
// grid (OC/64, IC/64); reads dy and x once per output tile column/row strip
__global__ void dpprof__k_dp_clipgrad(float *dw, const float *dy, const float *x, const double *c, int n, int T, int IC, int OC) {
    alignas(16) __shared__ float sA[DPPROF__DP_TK][DPPROF__DP_TM], sB[DPPROF__DP_TK][DPPROF__DP_TN];
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const int o0 = blockIdx.x * DPPROF__DP_TM, k0 = blockIdx.y * DPPROF__DP_TN;
    float acc[4][4];
    dpprof__k_dp_gemm_tn(acc, sA, sB, dy, x, 0, (long long)n * T, o0, k0, OC, IC, c, T);
    for (int a = 0; a < 4; a++) {
        int o = o0 + 4 * ty + a;
        if (o >= OC) continue;
        for (int b = 0; b < 4; b++) {
            int k = k0 + 4 * tx + b;
            if (k < IC) {
                float *d = dw + (size_t)o * (size_t)IC + (size_t)k;
                *d = *d + acc[a][b];
            }
        }
    }
}

// bf16 clipgrad on the tensor cores: the factors as floats rounded toward zero (|c_f| <= |c_i|, so the
// clipping bound is never loosened by the conversion), then a 1.0 for beta, for device pointer mode
__global__ void dpprof__k_dp_clip_alpha(float *cf, const double *c, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i > n) return;
    if (i == n) {
        cf[n] = 1.0f;
        return;
    }
    float f = (float)c[i];
    if (f != 0.0f && fabs((double)f) > fabs(c[i])) f = __uint_as_float(__float_as_uint(f) - 1u); // one step toward zero
    cf[i] = f;
}

// a = b = 0: accumulator sets of a warp's mma tiles (M x N tiles of 16 x 8: the clipgrad, psg-norm and gram kernels)
template <int M, int N>
__device__ __forceinline__ void dpprof__zero_tiles(float (&a)[M][N][4], float (&b)[M][N][4]) {
    DPPROF__UNROLL
    for (int mi = 0; mi < M; mi++) {
        DPPROF__UNROLL
        for (int ni = 0; ni < N; ni++) {
            DPPROF__UNROLL
            for (int e = 0; e < 4; e++) a[mi][ni][e] = b[mi][ni][e] = 0.f;
        }
    }
}

// the bf16 flash norms (psg and gram flavours) go to dpprof's tensor-core kernels unless
// dpprof_cuda_tuning.norms_cublas: they take whole 16-byte chunks of rows (IC, OC multiples of 8, x and dy
// 16-byte aligned)
static bool dpprof__norm_tc(const float *dy, const float *x, int IC, int OC) {
    return dpprof__cu.bf16 && !dpprof__cu.tune.norms_cublas && IC % 8 == 0 && OC % 8 == 0 && !(((uintptr_t)dy | (uintptr_t)x) & 15);
}

// sum over a thread's elements of its two accumulator sets' product a * b, in double, in a fixed order
// (the epilogues of the norm kernels)
template <int M, int N>
__device__ __forceinline__ double dpprof__tiles_dot(const float (&a)[M][N][4], const float (&b)[M][N][4]) {
    double s = 0.0;
    DPPROF__UNROLL
    for (int mi = 0; mi < M; mi++) {
        DPPROF__UNROLL
        for (int ni = 0; ni < N; ni++) {
            DPPROF__UNROLL
            for (int e = 0; e < 4; e++) s += (double)a[mi][ni][e] * (double)b[mi][ni][e];
        }
    }
    return s;
}

// the bf16 weight-gradient tiles on the tensor cores, two uses of one main loop (dpprof__k_wgrad_tc<NORM, WN>):
// - clipgrad (NORM false, dpprof_cuda_tuning.fused_clipgrad): dw (OC, IC) fp32 += sum_i cf_i dy_i^T x_i in one
//   pass over dy and x, dw read and written once. a block owns a BM x 128 tile of dw and walks every
//   sample's T rows; at a sample's last step each thread adds cf_i times its accumulators to a running total
//   (fp32 fma, in sample order) and clears them. cf is the cuBLAS path's (rounded toward zero), every dw
//   element is one thread's: deterministic.
// - psg norm (NORM true, the flash norm's per-sample-gradient flavour): block (tile, sample i0 + z) builds
//   its BM x 128 tile of g_i = dy_i^T x_i over sample i's T rows and squares it in double in the epilogue:
//   one partial part[z * tiles + tile] (the fixed-order tree), no tile of g_i ever leaves the chip, and dy_i,
//   x_i are read once per tile row / column, as the weight-gradient GEMM itself reads them.
// the main loop: T rows 32 at a time through a cp.async pipeline (rows past T and columns past OC or IC
// zero-filled); 8 warps of 64 x WN, fp32 mma accumulators. the operands are used as they lie (dy rows [t][o],
// x rows [t][k]): ldmatrix.trans makes the A fragments of dy^T and the B fragments of x. rows padded by 8
// bf16, so an ldmatrix's 8 row addresses fall in 8 different 16-byte bank groups. IC, OC multiples of 8 and
// 16-byte aligned dy, x (whole 16-byte chunks); the callers check.
// the warp tile is what shared memory's bandwidth allows: an mma.sync m16n8k16 is 2048 multiply-adds, and an
// H100 SM does 2048 a clock but reads 128 bytes of shared memory a clock. a warp of 64 x WN reads (64 + WN)
// x 16 bf16 of fragments per 64 WN 16 multiply-adds by ldmatrix, and the cp.async stores of a BM x 128 block
// add (BM + 128) x 2 bytes per BM x 128: per multiply-add, 3/32 + 1/32 byte at WN = 32 (BM = 128), which
// bounds the kernel at half the tensor-core peak; 1/16 + 3/128 at WN = 64 (BM = 256): 73%. WN = 64 is the
// default where the device's shared memory per block holds it (sm_90); its accumulators are 128 floats a
// thread, so the clipgrad's running totals (128 more) live in shared memory, each thread's own (laid out by
// thread, so a warp's 32 accesses are 32 consecutive words), read and written once per sample.
template <bool NORM, int WN>
struct dpprof__wg_cfg {
    static_assert(WN == 32 || WN == 64, "warp tiles of 64 x 32 or 64 x 64");
    static constexpr int NI = WN / 8;                      // mma tiles of a warp along k
    static constexpr int WNC = 128 / WN, WMC = 8 / WNC;    // warps along k and along o
    static constexpr int BM = 64 * WMC, BN = 128, BK = 32; // block tile (o x k), rows a stage
    static constexpr int ST = 3;                           // stages
    static constexpr int LDA = BM + 8, LDB = BN + 8;       // bf16 per shared row: dy, x
    static constexpr int STAGE = BK * (LDA + LDB);         // bf16 a stage: the dy tile, then the x tile
    static constexpr bool TOT_SMEM = !NORM && WN == 64;    // the clipgrad's totals in shared memory
    static constexpr int TOT = 4 * NI * 4;                 // accumulators a thread
    static constexpr size_t BYTES = (size_t)ST * STAGE * 2 + (TOT_SMEM ? (size_t)TOT * 256 * sizeof(float) : 0);
};

// step it of a walk (sample it / KT, rows BK (it % KT) ..) into stage buffer S: the dy tile (columns o0 ..)
// and the x tile (columns k0 ..), BK x BM and BK x 128. rep: every sample of the walk reads sample 0's rows
// (dpprof_linear_clipgrad_rep_gpu)
template <class C>
__device__ __forceinline__ void dpprof__cg_load(dpprof__bf16 *S, const dpprof__bf16 *dy, const dpprof__bf16 *x, long long it, int KT, int T, int IC, int OC, int o0, int k0,
                                                int rep) {
    const int t0 = (int)(it % KT) * C::BK;
    const size_t g = (size_t)(rep ? 0 : it / KT) * T + t0; // the first row
    dpprof__cp_tile<C::BK, C::BM, C::LDA, 256>(S, dy + g * OC + o0, OC, T - t0, OC - o0);
    dpprof__cp_tile<C::BK, C::BN, C::LDB, 256>(S + C::BK * C::LDA, x + g * IC + k0, IC, T - t0, IC - k0);
}

template <bool NORM, int WN>
__global__ void DPPROF__ATTN_LB(256) dpprof__k_wgrad_tc(float *dw, double *part, const dpprof__bf16 *dy, const dpprof__bf16 *x, const float *cf, int i0, int n, int T,
                                                        int IC, int OC, int rep) {
    using C = dpprof__wg_cfg<NORM, WN>;
    constexpr int NI = C::NI, ST = C::ST, BK = C::BK, LDA = C::LDA, LDB = C::LDB;
    DPPROF__SMEM_DYN(dpprof__bf16, sm);
    __shared__ double red[DPPROF__DP_NT];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, wm = w / C::WNC, wn = w % C::WNC, g = lane >> 2, t4 = lane & 3;
    const int o0 = (int)blockIdx.y * C::BM, k0 = (int)blockIdx.x * C::BN, KT = (T + BK - 1) / BK;
    // the walk: steps it0 .. it0 + NIT - 1 (NORM: sample i0 + z's; else every sample's)
    const long long it0 = NORM ? ((long long)i0 + blockIdx.z) * KT : 0, NIT = NORM ? KT : (long long)n * KT;
    // this lane's ldmatrix rows: A (dy^T) matrices j = lane / 8 at t + 8 (j / 2), o + 8 (j % 2); B (x) at t + 8 (j % 2), k + 8 (j / 2)
    const int arow = (lane & 7) + 8 * (lane >> 4), acol = 64 * wm + 8 * ((lane >> 3) & 1);
    const int brow = (lane & 7) + 8 * ((lane >> 3) & 1), bcol = WN * wn + 8 * (lane >> 4);
    // this thread's running totals in shared memory (TOT_SMEM): element q at totm[256 q]
    float *const totm = C::TOT_SMEM ? (float *)(sm + ST * C::STAGE) + threadIdx.x : nullptr;
    float acc[4][NI][4], tot[4][NI][4];
    dpprof__zero_tiles(acc, tot);
    if constexpr (C::TOT_SMEM)
        for (int q = 0; q < C::TOT; q++) totm[256 * q] = 0.f;
    for (int s = 0; s < ST - 1; s++) {
        if (s < NIT) dpprof__cg_load<C>(sm + s * C::STAGE, dy, x, it0 + s, KT, T, IC, OC, o0, k0, rep);
        dpprof__cp_commit();
    }
    for (long long j = 0; j < NIT; j++) {
        dpprof__cp_wait<ST - 2>(); // this thread's copies of step j have landed
        __syncthreads();           // everyone's have, and step j - 1's stage is no longer read
        const long long nx = j + ST - 1;
        if (nx < NIT) dpprof__cg_load<C>(sm + (int)(nx % ST) * C::STAGE, dy, x, it0 + nx, KT, T, IC, OC, o0, k0, rep);
        dpprof__cp_commit(); // empty past the end: the wait above counts groups
        const dpprof__bf16 *As = sm + (int)(j % ST) * C::STAGE, *Bs = As + BK * LDA;
        DPPROF__UNROLL
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t a[4][4], b[NI][2];
            DPPROF__UNROLL
            for (int mi = 0; mi < 4; mi++) dpprof__ldsm4<true>(a[mi], As + (16 * kk + arow) * LDA + acol + 16 * mi);
            DPPROF__UNROLL
            for (int nj = 0; nj < NI / 2; nj++) {
                uint32_t r[4];
                dpprof__ldsm4<true>(r, Bs + (16 * kk + brow) * LDB + bcol + 16 * nj);
                b[2 * nj][0] = r[0], b[2 * nj][1] = r[1], b[2 * nj + 1][0] = r[2], b[2 * nj + 1][1] = r[3];
            }
            DPPROF__UNROLL
            for (int mi = 0; mi < 4; mi++) {
                DPPROF__UNROLL
                for (int ni = 0; ni < NI; ni++) dpprof__mma_bf16(acc[mi][ni], a[mi], b[ni]);
            }
        }
        if (!NORM && (j + 1) % KT == 0) { // the sample's last rows: total += cf_i (its dy_i^T x_i tile)
            const float c = cf[j / KT];
            DPPROF__UNROLL
            for (int mi = 0; mi < 4; mi++) {
                DPPROF__UNROLL
                for (int ni = 0; ni < NI; ni++) {
                    DPPROF__UNROLL
                    for (int e = 0; e < 4; e++) {
                        if constexpr (C::TOT_SMEM) {
                            float *t = totm + 256 * ((mi * NI + ni) * 4 + e);
                            *t = fmaf(c, acc[mi][ni][e], *t);
                        } else tot[mi][ni][e] = fmaf(c, acc[mi][ni][e], tot[mi][ni][e]);
                        acc[mi][ni][e] = 0.f;
                    }
                }
            }
        }
    }
    dpprof__cp_wait<0>(); // only empty groups remain; nothing in flight at the exit
    if constexpr (NORM) { // ||tile of g_i||^2: elements past OC or IC are zeros (zero-filled operands)
        double s = 0.0;
        if constexpr (WN == 64) {
            // the squares in tiles_dot's order, each half of the accumulators first stored to the (spent) stages and
            // read back (volatile: through shared memory, not forwarded), so they die as they are stored: squared
            // in registers, ptxas widens all 128 at once and spills
            static_assert((size_t)ST * C::STAGE * 2 >= (size_t)2 * NI * 4 * 256 * sizeof(float), "half the accumulators fit in the stages");
            volatile float *st = (float *)sm + threadIdx.x;
            __syncthreads(); // every warp is done with the last stage
            DPPROF__UNROLL
            for (int h = 0; h < 2; h++) {
                DPPROF__UNROLL
                for (int mi = 2 * h; mi < 2 * h + 2; mi++) {
                    DPPROF__UNROLL
                    for (int ni = 0; ni < NI; ni++) {
                        DPPROF__UNROLL
                        for (int e = 0; e < 4; e++) st[256 * (((mi - 2 * h) * NI + ni) * 4 + e)] = acc[mi][ni][e];
                    }
                }
                DPPROF__UNROLL
                for (int q = 0; q < 2 * NI * 4; q++) {
                    const double v = (double)st[256 * q];
                    s += v * v;
                }
            }
        } else s = dpprof__tiles_dot(acc, acc);
        s = dpprof__k_dp_block_sum(s, red);
        if (threadIdx.x == 0) part[(size_t)blockIdx.z * gridDim.x * gridDim.y + (size_t)blockIdx.y * gridDim.x + blockIdx.x] = s;
    } else {
        DPPROF__UNROLL
        for (int mi = 0; mi < 4; mi++) {
            DPPROF__UNROLL
            for (int ni = 0; ni < NI; ni++) {
                DPPROF__UNROLL
                for (int hf = 0; hf < 2; hf++) {
                    const int o = o0 + 64 * wm + 16 * mi + g + 8 * hf, k = k0 + WN * wn + 8 * ni + 2 * t4; // k even, IC even: k + 1 < IC with k
                    if (o >= OC || k >= IC) continue;
                    float *d = dw + (size_t)o * IC + k;
                    if constexpr (C::TOT_SMEM) {
                        const float *t = totm + 256 * ((mi * NI + ni) * 4 + 2 * hf);
                        d[0] += t[0], d[1] += t[256];
                    } else d[0] += tot[mi][ni][2 * hf], d[1] += tot[mi][ni][2 * hf + 1];
                }
            }
        }
    }
}

// the warp tile of dpprof's dp tensor-core kernels (the weight-gradient kernel, the gram-norm kernel) for a
// kernel of `bytes` of dynamic and nt doubles of static shared memory at 64 x 64: 64 where the device's
// shared memory per block holds it, else 32; dpprof_cuda_tuning.dp_warp_tile (32 or 64) forces one
static bool dpprof__warp64(size_t bytes, int nt) {
    if (dpprof__cu.tune.dp_warp_tile) return dpprof__cu.tune.dp_warp_tile == 64;
    return dpprof__cu.smem_optin > 0 && bytes + (size_t)nt * sizeof(double) <= (size_t)dpprof__cu.smem_optin;
}
// a kernel on wgmma (bytes of shared memory in all) is taken: dpprof_cuda_tuning.wgmma not -1 (on is the default there) on a
// device of compute capability 9.0 whose shared memory per block holds it
static bool dpprof__wgmma_on(size_t bytes) {
    return dpprof__cu.tune.wgmma >= 0 && dpprof__cu.cc90 && dpprof__cu.smem_optin > 0 && bytes <= (size_t)dpprof__cu.smem_optin;
}
template <bool NORM>
static bool dpprof__wg_wide() {
    return dpprof__warp64(dpprof__wg_cfg<NORM, 64>::BYTES, DPPROF__DP_NT);
}

// one launch of dpprof__k_wgrad_tc<NORM, WN>: grid (IC / 128, OC / BM, z) blocks
template <bool NORM, int WN>
static void dpprof__wg_launch(const char *what, unsigned z, float *dw, double *part, const dpprof__bf16 *dy, const dpprof__bf16 *x, const float *cf, int i0, int n,
                              int T, int IC, int OC, int rep) {
    using C = dpprof__wg_cfg<NORM, WN>;
    dpprof__smem_optin(dpprof__k_wgrad_tc<NORM, WN>, C::BYTES, what);
    dpprof__launch(what, dpprof__k_wgrad_tc<NORM, WN>, dim3((unsigned)((IC + C::BN - 1) / C::BN), (unsigned)((OC + C::BM - 1) / C::BM), z), dim3(DPPROF__DP_NT),
                   C::BYTES, dw, part, dy, x, cf, i0, n, T, IC, OC, rep);
}

// dw (OC,IC) fp32 += sum_i c_i dy_i^T x_i with dy_i, x_i bf16: by default one cuBLAS GEMM per sample (K = T)
// with alpha = c_i read from the device, accumulated into fp32 in sample order (deterministic); with
// dpprof_cuda_tuning.fused_clipgrad, where there are 2 samples or more, IC and OC are multiples of 8 and dy, x
// 16-byte aligned, the fused kernel above (the same factors, one pass). rep: every sample is sample 0
// (dpprof_linear_clipgrad_rep_gpu, auto's timing call), with c's n factors
static void dpprof__clipgrad_bf16(float *dw, const dpprof__bf16 *dy, const dpprof__bf16 *x, const double *c, int n, int T, int IC, int OC, int rep) {
    const char *what = "dpprof_linear_clipgrad_gpu";
    float *cf = (float *)dpprof__scratch((size_t)(n + 1) * sizeof(float), what);
    if (!cf) return;
    dpprof__launch(what, dpprof__k_dp_clip_alpha, dim3((unsigned)((n + 256) / 256)), dim3(256), 0, cf, c, n);
    if (dpprof__cu.err) return;
    // one sample: cuBLAS's single GEMM already writes dw once, and is the faster GEMM
    if (dpprof__cu.tune.fused_clipgrad && n > 1 && IC % 8 == 0 && OC % 8 == 0 && !((uintptr_t)dy & 15) && !((uintptr_t)x & 15)) {
        if (dpprof__wg_wide<false>()) dpprof__wg_launch<false, 64>(what, 1, dw, nullptr, dy, x, cf, 0, n, T, IC, OC, rep);
        else dpprof__wg_launch<false, 32>(what, 1, dw, nullptr, dy, x, cf, 0, n, T, IC, OC, rep);
        return;
    }
    const size_t sx = rep ? 0 : (size_t)T * IC, sy = rep ? 0 : (size_t)T * OC;
    cublasStatus_t st = cublasSetPointerMode(dpprof__cu.blas, CUBLAS_POINTER_MODE_DEVICE);
    for (int i = 0; i < n && st == CUBLAS_STATUS_SUCCESS; i++) // dw_cm (IC,OC) += c_i x_i_cm (IC,T) dy_i_cm^T (T,OC)
        st = cublasGemmEx(dpprof__cu.blas, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, T, cf + i, x + (size_t)i * sx, CUDA_R_16BF, IC, dy + (size_t)i * sy, CUDA_R_16BF, OC,
                          cf + n, dw, CUDA_R_32F, IC, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cublasStatus_t back = cublasSetPointerMode(dpprof__cu.blas, CUBLAS_POINTER_MODE_HOST);
    dpprof__blas_post(what, st != CUBLAS_STATUS_SUCCESS ? st : back);
}

extern "C" void dpprof_linear_clipgrad_gpu(float *dw, const float *dy, const float *x, const double *c, int n, int T, int IC, int OC) {
    if (n <= 0 || T <= 0 || IC <= 0 || OC <= 0 || dpprof__cu.err) return; // dw += 0
    if (dpprof__cu.bf16) {
        dpprof__clipgrad_bf16(dw, dpprof__act<dpprof__bf16>(dy), dpprof__act<dpprof__bf16>(x), c, n, T, IC, OC, 0);
        return;
    }
    long long ty = dpprof__dp_cdiv(IC, DPPROF__DP_TN);
    if (ty > DPPROF__DP_MAXZ) {
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", "dpprof_linear_clipgrad_gpu", "IC too large for the grid");
        return;
    }
    dim3 grid((unsigned)dpprof__dp_cdiv(OC, DPPROF__DP_TM), (unsigned)ty, 1);
    dpprof__launch("dpprof_linear_clipgrad_gpu", dpprof__k_dp_clipgrad, grid, dim3(DPPROF__DP_NT), 0, dw, dy, x, c, n, T, IC, OC);
}

extern "C" void dpprof_linear_clipgrad_rep_gpu(float *dw, const float *dy, const float *x, const double *c, int reps, int T, int IC, int OC) {
    if (reps <= 0 || T <= 0 || IC <= 0 || OC <= 0 || dpprof__cu.err) return; // dw += 0
    if (dpprof__cu.bf16) dpprof__clipgrad_bf16(dw, dpprof__act<dpprof__bf16>(dy), dpprof__act<dpprof__bf16>(x), c, reps, T, IC, OC, 1);
    else
        for (int i = 0; i < reps && !dpprof__cu.err; i++) dpprof_linear_clipgrad_gpu(dw, dy, x, c + i, 1, T, IC, OC);
}

// the flash norm, per-sample-gradient flavour: fp32 on the simt kernel, bf16 on the tensor-core kernel
// (dpprof__k_wgrad_tc<true, WN>, one partial per tile of 256 x 128 or 128 x 128 and sample, every sample of
// a chunk in one launch) or, for other shapes and with dpprof_cuda_tuning.norms_cublas, on cuBLAS blocks of g_i in the scratch
extern "C" void dpprof_linear_sqnorm_psg_gpu(double *norm2, const float *dy, const float *x, int n, int T, int IC, int OC) {
    const char *what = "dpprof_linear_sqnorm_psg_gpu";
    if (n <= 0 || T <= 0 || IC <= 0 || OC <= 0) return; // norm2 += 0
    const bool wide = dpprof__wg_wide<true>();
    const long long cx = dpprof__dp_cdiv(IC, 128), cy = dpprof__dp_cdiv(OC, wide ? 256 : 128), ct = cx * cy; // the tensor-core kernel's tiles
    if (dpprof__norm_tc(dy, x, IC, OC) && ct <= DPPROF__DP_CAP && cy <= DPPROF__DP_MAXZ) {
        const long long chunk = dpprof__dp_chunk(n, DPPROF__DP_CAP, ct); // samples per launch
        double *part = (double *)dpprof__scratch((size_t)(ct * chunk) * sizeof(double), what);
        if (!part) return;
        for (int i0 = 0; i0 < n; i0 += (int)chunk) {
            const long long k = dpprof__dp_min(chunk, n - i0);
            const dpprof__bf16 *dyb = dpprof__act<dpprof__bf16>(dy), *xb = dpprof__act<dpprof__bf16>(x);
            if (wide) dpprof__wg_launch<true, 64>(what, (unsigned)k, nullptr, part, dyb, xb, nullptr, i0, n, T, IC, OC, 0);
            else dpprof__wg_launch<true, 32>(what, (unsigned)k, nullptr, part, dyb, xb, nullptr, i0, n, T, IC, OC, 0);
            dpprof__launch(what, dpprof__k_dp_reduce, dim3((unsigned)k), dim3(DPPROF__DP_NT), 0, norm2 + i0, (const double *)part, ct);
        }
        return;
    }
    if (dpprof__cu.bf16) {
        dpprof__sqnorm_psg_bf16(norm2, dpprof__act<dpprof__bf16>(dy), dpprof__act<dpprof__bf16>(x), n, T, IC, OC);
        return;
    }
    long long tk = dpprof__dp_cdiv(IC, DPPROF__DP_TN), tiles = dpprof__dp_cdiv(OC, DPPROF__DP_TM) * tk;
    long long G = dpprof__dp_min(tiles, DPPROF__DP_CAP);      // partials per sample
    long long chunk = dpprof__dp_chunk(n, DPPROF__DP_CAP, G); // samples per launch
    double *part = (double *)dpprof__scratch((size_t)(G * chunk) * sizeof(double), what);
    if (!part) return;
    for (int i0 = 0; i0 < n; i0 += (int)chunk) {
        long long m = dpprof__dp_min(chunk, n - i0);
        dpprof__launch(what, dpprof__k_dp_sqnorm_psg, dim3((unsigned)G, 1, (unsigned)m), dim3(DPPROF__DP_NT), 0, part, dy, x, i0, T, IC, OC, tk, tiles, G);
        dpprof__launch(what, dpprof__k_dp_reduce, dim3((unsigned)m), dim3(DPPROF__DP_NT), 0, norm2 + i0, (const double *)part, G);
    }
}

// flash norm, gram flavour: block (slot j, sample i0+z) takes the position-tile pairs p = j, j+G, ... of
// the upper triangle (64x64 tiles, sa <= tb), builds the tile of x_i x_i^T (over IC) and of dy_i dy_i^T
// (over OC) in fp32, multiplies them elementwise in double and sums, off-diagonal tiles twice; one
// partial per block. no T x T matrix is stored. grid (G, 1, samples of the chunk); reads 2x64 rows of
// x_i and dy_i per tile pair
__global__ void dpprof__k_dp_sqnorm_gram(double *part, const float *dy, const float *x, int i0, int T, int IC, int OC, long long pairs,
                                         long long G) {
    alignas(16) __shared__ float sA[DPPROF__DP_TF][DPPROF__DP_LDT], sB[DPPROF__DP_TF][DPPROF__DP_LDT];
    __shared__ double red[DPPROF__DP_NT];
    const size_t i = (size_t)i0 + blockIdx.z;
    const float *xi = x + i * (size_t)T * (size_t)IC, *gi = dy + i * (size_t)T * (size_t)OC;
    double s = 0.0;
    for (long long p = blockIdx.x; p < pairs; p += G) {
        long long sa, tb;
        float gx[4][4], gy[4][4];
        dpprof__k_dp_pair(p, &sa, &tb);
        int s0 = (int)sa * DPPROF__DP_TM, t0 = (int)tb * DPPROF__DP_TN;
        int ns = T - s0 < DPPROF__DP_TM ? T - s0 : DPPROF__DP_TM, nt = T - t0 < DPPROF__DP_TN ? T - t0 : DPPROF__DP_TN;
        dpprof__k_dp_gemm_nt(gx, sA, sB, xi + (size_t)s0 * IC, xi + (size_t)t0 * IC, ns, nt, IC);
        dpprof__k_dp_gemm_nt(gy, sA, sB, gi + (size_t)s0 * OC, gi + (size_t)t0 * OC, ns, nt, OC);
        double tile = 0.0; // rows/columns past T are 0 in both grams
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) tile += (double)gx[a][b] * (double)gy[a][b];
        s += (sa == tb ? 1.0 : 2.0) * tile;
    }
    s = dpprof__k_dp_block_sum(s, red);
    if (threadIdx.x == 0) part[(size_t)blockIdx.z * (size_t)G + blockIdx.x] = s;
}

// bf16 flash norm, gram flavour, in one tensor-core kernel (the default where IC and OC are multiples of 8;
// dpprof_cuda_tuning.norms_cublas): block (slot j, sample i0 + z) takes the tile pairs p = j, j + G, ... of the
// upper triangle of 128 x 128 position tiles (sa <= tb) and builds the gram tiles in fp32 mma accumulators,
// gx = x_i[s0 ..] x_i[t0 ..]^T over IC, then for each of up to three layers that read the same input x
// (q, k, v; gate, up: dpprof_linear_sqnorm_gram_group_gpu) gy the same for its dy_i over its OC, 32 columns
// a step through a 3-stage cp.async pipeline that runs on across the layers and the pairs (rows past T and
// columns past IC or OC zero-filled: zero in both grams). at a layer's last step of the pair each thread adds
// its elements' gx gy in double to the layer's sum, twice off the diagonal, and clears gy, so the input's
// gram tile is made once for the whole group. one partial per block and layer (a block sum), reduced in
// index order by dpprof__k_dp_reduce: no T x T matrix, no atomics, the same bits every run, and a layer's
// bits are the same in any group. both operands are row blocks of the same row-major matrix, so A comes by
// ldmatrix as is and B (the transpose's) by ldmatrix as is too. rows padded to 40 bf16 (80 bytes: an
// ldmatrix's 8 rows hit 8 different 16-byte bank groups).
// warp tiles (dpprof__gn_cfg<WN>), for the same reason as the weight-gradient kernel's: WN = 32, 8 warps of
// 64 x 32 with both grams in registers, needs 1/8 byte of shared memory per multiply-add (the ldmatrix reads
// and the cp.async stores of a 128 x 128 pair), which bounds it at half an H100's tensor-core peak; WN = 64,
// 4 warps of 64 x 64, needs 3/32 (67%) but has room in registers for one gram only: gx goes to shared memory
// (each thread's own 128 floats, laid out by thread) at the end of x's steps and is read back at each layer's
// end. WN = 64 is the default where the device's shared memory per block holds it (124 KiB)
#define DPPROF__GN_BK 32                           // columns (of IC or OC) a step
#define DPPROF__GN_ST 3                            // stages
#define DPPROF__GN_LD (DPPROF__GN_BK + 8)          // bf16 per shared row
#define DPPROF__GN_STAGE (2 * 128 * DPPROF__GN_LD) // bf16 a stage: rows s0 .., then rows t0 ..
#define DPPROF__GN_MAXSRC 3                        // layers a launch takes (q, k, v)
template <int WN>
struct dpprof__gn_cfg {
    static_assert(WN == 32 || WN == 64, "warp tiles of 64 x 32 or 64 x 64");
    static constexpr int NI = WN / 8, NW = WN == 64 ? 4 : 8, NT = 32 * NW; // mma tiles of a warp along t, warps, threads
    static constexpr int TOT = 4 * NI * 4;                                 // accumulators a thread
    static constexpr size_t BYTES = (size_t)DPPROF__GN_ST * DPPROF__GN_STAGE * 2 + (WN == 64 ? (size_t)TOT * NT * sizeof(float) : 0);
};

// the layers of one launch: their output gradients (n, T, OC[j]) and their steps a pair, 32 columns each
// (KY[j], 0 past m); E[j] is the step after layer j's last in a pair's walk (x's KX steps come first)
struct dpprof__gn_srcs {
    const dpprof__bf16 *dy[DPPROF__GN_MAXSRC];
    int OC[DPPROF__GN_MAXSRC], E[DPPROF__GN_MAXSRC];
    int m, KX, K; // layers, x's steps a pair, steps a pair
};

// step it of the block's walk into stage buffer S: pair it / K of the block's, then 32 columns of x
// (step < KX) or of layer j's dy: rows s0 .. and rows t0 .., 128 each, over NT threads
// the matrix step r of a pair reads, steps of BK columns: sample i's x (r < KX: xi) or a layer's dy, its width D
// and first column d0
template <int BK>
__device__ __forceinline__ const dpprof__bf16 *dpprof__gn_src(const dpprof__bf16 *xi, const dpprof__gn_srcs &Q, size_t i, int r, int T, int IC, int *D, int *d0) {
    const dpprof__bf16 *M;
    if (r < Q.KX) M = xi, *D = IC, *d0 = BK * r;
    else if (r < Q.E[0]) M = Q.dy[0], *D = Q.OC[0], *d0 = BK * (r - Q.KX);
    else if (r < Q.E[1]) M = Q.dy[1], *D = Q.OC[1], *d0 = BK * (r - Q.E[0]);
    else M = Q.dy[2], *D = Q.OC[2], *d0 = BK * (r - Q.E[1]);
    return r >= Q.KX ? M + i * (size_t)T * (size_t)*D : M;
}
template <int NT>
__device__ __forceinline__ void dpprof__gn_load(dpprof__bf16 *S, const dpprof__bf16 *xi, const dpprof__gn_srcs &Q, size_t i, long long it, long long p0, long long G,
                                                int T, int IC) {
    int D, d0;
    const dpprof__bf16 *M = dpprof__gn_src<DPPROF__GN_BK>(xi, Q, i, (int)(it % Q.K), T, IC, &D, &d0) + d0;
    long long sa, tb;
    dpprof__k_dp_pair(p0 + it / Q.K * G, &sa, &tb);
    const int s0 = (int)sa * 128, t0 = (int)tb * 128;
    dpprof__cp_tile<128, DPPROF__GN_BK, DPPROF__GN_LD, NT>(S, M + (size_t)s0 * D, D, T - s0, D - d0);
    dpprof__cp_tile<128, DPPROF__GN_BK, DPPROF__GN_LD, NT>(S + 128 * DPPROF__GN_LD, M + (size_t)t0 * D, D, T - t0, D - d0);
}
// acc += (rows s of the stage) (rows t of the stage)^T over its 32 columns, this warp's 64 x 8 NI: the B
// fragments of both k blocks first (one ldmatrix an n block), then the A fragments a k block at a time
template <int NI>
__device__ __forceinline__ void dpprof__gn_mma(float (&acc)[4][NI][4], const dpprof__bf16 *S, int aoff, int boff) {
    uint32_t b[NI][4];
    DPPROF__UNROLL
    for (int ni = 0; ni < NI; ni++) dpprof__ldsm4<false>(b[ni], S + 128 * DPPROF__GN_LD + boff + 8 * ni * DPPROF__GN_LD);
    DPPROF__UNROLL
    for (int kk = 0; kk < DPPROF__GN_BK / 16; kk++) {
        uint32_t a[4][4];
        DPPROF__UNROLL
        for (int mi = 0; mi < 4; mi++) dpprof__ldsm4<false>(a[mi], S + aoff + 16 * mi * DPPROF__GN_LD + 16 * kk);
        DPPROF__UNROLL
        for (int ni = 0; ni < NI; ni++) {
            const uint32_t bk[2] = {b[ni][2 * kk], b[ni][2 * kk + 1]};
            DPPROF__UNROLL
            for (int mi = 0; mi < 4; mi++) dpprof__mma_bf16(acc[mi][ni], a[mi], bk);
        }
    }
}

template <int WN>
__global__ void DPPROF__ATTN_LB(dpprof__gn_cfg<WN>::NT) dpprof__k_dp_sqnorm_gram_tc(double *part, const dpprof__gn_srcs Q, const dpprof__bf16 *x, int i0, int T, int IC,
                                                                                    long long pairs, long long G, int rep) {
    using C = dpprof__gn_cfg<WN>;
    constexpr int NI = C::NI, NT = C::NT, LD = DPPROF__GN_LD;
    DPPROF__SMEM_DYN(dpprof__bf16, sm);
    __shared__ double red[NT];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, wm = w / (128 / WN), wn = w % (128 / WN);
    const size_t i = rep ? 0 : (size_t)i0 + blockIdx.z; // rep: every z reads sample 0 (dpprof_linear_sqnorm_gram_rep_gpu)
    const dpprof__bf16 *xi = x + i * (size_t)T * (size_t)IC;
    const long long np = blockIdx.x < pairs ? (pairs - 1 - blockIdx.x) / G + 1 : 0, NIT = np * Q.K;
    // A: rows 64 wm + 16 mi of the s block; B: rows WN wn + 8 ni of the t block, columns 0 .. 31 (both k blocks)
    const int aoff = 64 * wm * LD + dpprof__ldsm_a<LD>(lane), boff = WN * wn * LD + dpprof__ldsm_bt<LD>(lane);
    // WN = 64: x's gram in shared memory, element q of this thread's at gxs[NT q]; gy accumulates both grams
    float *const gxs = WN == 64 ? (float *)(sm + DPPROF__GN_ST * DPPROF__GN_STAGE) + threadIdx.x : nullptr;
    float gx[4][NI][4], gy[4][NI][4];
    dpprof__zero_tiles(gx, gy);
    double s[DPPROF__GN_MAXSRC] = {0.0, 0.0, 0.0};
    for (int st = 0; st < DPPROF__GN_ST - 1; st++) {
        if (st < NIT) dpprof__gn_load<NT>(sm + st * DPPROF__GN_STAGE, xi, Q, i, st, blockIdx.x, G, T, IC);
        dpprof__cp_commit();
    }
    for (long long it = 0; it < NIT; it++) {
        dpprof__cp_wait<DPPROF__GN_ST - 2>(); // this thread's copies of step it have landed
        __syncthreads();                      // everyone's have, and step it - 1's stage is no longer read
        const long long nx = it + DPPROF__GN_ST - 1;
        if (nx < NIT) dpprof__gn_load<NT>(sm + (int)(nx % DPPROF__GN_ST) * DPPROF__GN_STAGE, xi, Q, i, nx, blockIdx.x, G, T, IC);
        dpprof__cp_commit(); // empty past the end: the wait above counts groups
        const dpprof__bf16 *S = sm + (int)(it % DPPROF__GN_ST) * DPPROF__GN_STAGE;
        const int r = (int)(it % Q.K);
        if constexpr (WN == 64) {
            dpprof__gn_mma(gy, S, aoff, boff);
            if (r == Q.KX - 1) { // x's gram of the pair is complete: to shared memory
                DPPROF__UNROLL
                for (int mi = 0; mi < 4; mi++) {
                    DPPROF__UNROLL
                    for (int ni = 0; ni < NI; ni++) {
                        DPPROF__UNROLL
                        for (int e = 0; e < 4; e++) gxs[NT * ((mi * NI + ni) * 4 + e)] = gy[mi][ni][e], gy[mi][ni][e] = 0.f;
                    }
                }
            }
        } else if (r < Q.KX) dpprof__gn_mma(gx, S, aoff, boff);
        else dpprof__gn_mma(gy, S, aoff, boff);
        // a layer's last step of the pair: <gx, gy> over this thread's elements into the layer's sum
        const int j = r == Q.E[0] - 1 ? 0 : (Q.m > 1 && r == Q.E[1] - 1 ? 1 : (Q.m > 2 && r == Q.E[2] - 1 ? 2 : -1));
        if (j >= 0) {
            long long sa, tb;
            dpprof__k_dp_pair(blockIdx.x + (it / Q.K) * G, &sa, &tb);
            double d = 0.0;
            if constexpr (WN == 64) { // tiles_dot's order, gx from shared memory
                DPPROF__UNROLL
                for (int mi = 0; mi < 4; mi++) {
                    DPPROF__UNROLL
                    for (int ni = 0; ni < NI; ni++) {
                        DPPROF__UNROLL
                        for (int e = 0; e < 4; e++) d += (double)gxs[NT * ((mi * NI + ni) * 4 + e)] * (double)gy[mi][ni][e];
                    }
                }
            } else d = dpprof__tiles_dot(gx, gy);
            d *= sa == tb ? 1.0 : 2.0;
            DPPROF__UNROLL
            for (int q = 0; q < DPPROF__GN_MAXSRC; q++)
                if (q == j) s[q] += d;
            if (WN == 32 && j == Q.m - 1) dpprof__zero_tiles(gx, gy); // the pair's end: gx too
            else dpprof__zero_tiles(gy, gy);
        }
    }
    dpprof__cp_wait<0>(); // only empty groups remain
    DPPROF__UNROLL
    for (int q = 0; q < DPPROF__GN_MAXSRC; q++) {
        if (q >= Q.m) break;
        const double b = dpprof__block_sum_n<NT>(s[q], red);
        if (threadIdx.x == 0) part[((size_t)q * gridDim.z + blockIdx.z) * (size_t)G + blockIdx.x] = b;
    }
}

// the gram kernel on Hopper's warpgroup mma (dpprof_cuda_tuning.wgmma; sm_90a): the same walk, pairs and
// partials as dpprof__k_dp_sqnorm_gram_tc, and each pair's gram tiles from wgmma.mma_async, which reads both
// operands from shared memory once for a warpgroup instead of once a warp by ldmatrix: the two warpgroups read
// (64 + 128) x 2 x 16 bytes each per 128 x 128 x 16, 3/64 byte a multiply-add, against the 64 x 64 warps' 1/16 (with
// the cp.async stores' 1/32, the 3/32 behind the mma.sync kernel's bound of 67% of the peak; 5/64 here, 80% if
// wgmma's reads share shared memory's 128 bytes a clock as ldmatrix's do). 2 warpgroups: the s
// block's rows 64 q .. 64 q + 63 for warpgroup q, all 128 rows of the t block, so each thread holds 64 floats
// of each gram (gx, gy) in registers. 64 columns a step, 4 stages of 2 x 128 x 64 bf16 (128 KiB) in the
// interleaved K-major layout (row r, columns 8c .. 8c + 7 at (r / 8) 1024 + 128 c + 16 (r % 8) bytes: LBO 128,
// SBO 1024), loaded by cp.async two steps ahead: a stage is reloaded only after both warpgroups waited for the
// wgmma of the step that read it (wait_group 1 after each step's, then the next step's barrier). x's steps
// accumulate into gx, a layer's into gy, the first step of each with scale-d 0 (no clearing); at a layer's last
// step the warpgroup waits for all its wgmma and adds its <gx, gy> (in double, twice off the diagonal) to the
// layer's sum. the partials are the mma.sync kernel's; the sums come in another grouping
#define DPPROF__GW_BK 64                          // columns a step
#define DPPROF__GW_ST 4                           // stages
#define DPPROF__GW_TILE (128 * DPPROF__GW_BK * 2) // bytes of a 128-row tile of a step
#define DPPROF__GW_BYTES ((size_t)DPPROF__GW_ST * 2 * DPPROF__GW_TILE)
#define DPPROF__GW_NT 256

// step it of the block's walk into stage S (bytes): pair it / Q.K, then 64 columns of x (step < Q.KX) or
// of a layer's dy, rows s0 .. and t0 .. (128 each) in the interleaved layout; 16-byte chunk q of the stage:
// tile q / 1024, row 8 (q / 64 % 16) + q % 8, chunk q / 8 % 8 (8 consecutive threads fill one 128-byte core
// matrix; rows past T and chunks past the width zero-filled)
__device__ __forceinline__ void dpprof__gw_load(unsigned char *S, const dpprof__bf16 *xi, const dpprof__gn_srcs &Q, size_t i, long long it, long long p0, long long G,
                                                int T, int IC) {
    int D, d0;
    const dpprof__bf16 *M = dpprof__gn_src<DPPROF__GW_BK>(xi, Q, i, (int)(it % Q.K), T, IC, &D, &d0);
    long long sa, tb;
    dpprof__k_dp_pair(p0 + it / Q.K * G, &sa, &tb);
    for (int q = (int)threadIdx.x; q < 2 * 1024; q += DPPROF__GW_NT) {
        const int tile = q / 1024, row = 8 * (q / 64 % 16) + q % 8, c = q / 8 % 8, r0 = (tile ? (int)tb : (int)sa) * 128;
        const bool ok = r0 + row < T && d0 + 8 * c < D;
        dpprof__cp16(S + tile * DPPROF__GW_TILE + (row / 8) * 1024 + 128 * c + 16 * (row % 8), ok ? M + (size_t)(r0 + row) * D + d0 + 8 * c : M, ok ? 16 : 0);
    }
}
// this step's 4 wgmma of 16 columns into acc (scale-d 0 on the first when first)
__device__ __forceinline__ void dpprof__gw_mma(float (&acc)[64], const unsigned char *S, int wq, bool first) {
    DPPROF__UNROLL
    for (int kk = 0; kk < DPPROF__GW_BK / 16; kk++)
        dpprof__wgmma_128(acc, dpprof__wg_desc(S + wq * 8 * 1024 + 256 * kk, 128, 1024), dpprof__wg_desc(S + DPPROF__GW_TILE + 256 * kk, 128, 1024), first && kk == 0 ? 0 : 1);
}

__global__ void DPPROF__ATTN_LB(DPPROF__GW_NT) dpprof__k_dp_sqnorm_gram_wg(double *part, const dpprof__gn_srcs Q, const dpprof__bf16 *x, int i0, int T, int IC,
                                                                           long long pairs, long long G, int rep) {
    __shared__ double red[DPPROF__GW_NT];
    double s[DPPROF__GN_MAXSRC] = {0.0, 0.0, 0.0};
#if DPPROF__HAS_WGMMA || defined(DPPROF_CUEMU)
    DPPROF__SMEM_DYN(unsigned char, sm);
    const int wq = (int)threadIdx.x / 128;
    const size_t i = rep ? 0 : (size_t)i0 + blockIdx.z; // rep: every z reads sample 0 (dpprof_linear_sqnorm_gram_rep_gpu)
    const dpprof__bf16 *xi = x + i * (size_t)T * (size_t)IC;
    const long long np = blockIdx.x < pairs ? (pairs - 1 - blockIdx.x) / G + 1 : 0, NIT = np * Q.K;
    float gx[64], gy[64];
    for (int st = 0; st < DPPROF__GW_ST - 2; st++) {
        if (st < NIT) dpprof__gw_load(sm + st * 2 * DPPROF__GW_TILE, xi, Q, i, st, blockIdx.x, G, T, IC);
        dpprof__cp_commit();
    }
    for (long long it = 0; it < NIT; it++) {
        dpprof__cp_wait<DPPROF__GW_ST - 3>(); // this thread's copies of step it have landed
        dpprof__fence_proxy_async();          // visible to the wgmma
        __syncthreads();                      // everyone's; and both warpgroups' wgmma of step it - 2 are done
        const long long nx = it + DPPROF__GW_ST - 2;
        if (nx < NIT) dpprof__gw_load(sm + (int)(nx % DPPROF__GW_ST) * 2 * DPPROF__GW_TILE, xi, Q, i, nx, blockIdx.x, G, T, IC);
        dpprof__cp_commit(); // empty past the end: the wait above counts groups
        const unsigned char *S = sm + (int)(it % DPPROF__GW_ST) * 2 * DPPROF__GW_TILE;
        const int r = (int)(it % Q.K);
        const int j = r == Q.E[0] - 1 ? 0 : (Q.m > 1 && r == Q.E[1] - 1 ? 1 : (Q.m > 2 && r == Q.E[2] - 1 ? 2 : -1));
        dpprof__wg_fence(); // the epilogue below read the accumulators
        if (r < Q.KX) dpprof__gw_mma(gx, S, wq, r == 0);
        else dpprof__gw_mma(gy, S, wq, r == Q.KX || r == Q.E[0] || (Q.m > 2 && r == Q.E[1]));
        dpprof__wg_commit();
        if (j >= 0) { // a layer's last step of the pair: <gx, gy> over this thread's elements into its sum (gx and gy
                      // share one fragment layout, so the sum does not depend on which (s, t) each element is)
            dpprof__wg_wait<0>();
            dpprof__wg_pin(gx);
            dpprof__wg_pin(gy);
            long long sa, tb;
            dpprof__k_dp_pair(blockIdx.x + (it / Q.K) * G, &sa, &tb);
            double d = 0.0;
            DPPROF__UNROLL
            for (int e = 0; e < 64; e++) d += (double)gx[e] * (double)gy[e];
            d *= sa == tb ? 1.0 : 2.0;
            DPPROF__UNROLL
            for (int q = 0; q < DPPROF__GN_MAXSRC; q++)
                if (q == j) s[q] += d;
        } else dpprof__wg_wait<1>(); // step it - 1's are done: its stage may be reloaded after the next barrier
    }
    dpprof__wg_wait<0>();
    dpprof__cp_wait<0>(); // only empty groups remain
#else                     // no wgmma in this build of the kernel (a device other than sm_90a): partials that no norm can pass for
    (void)x, (void)i0, (void)T, (void)IC, (void)pairs, (void)rep;
    s[0] = s[1] = s[2] = NAN;
#endif
    DPPROF__UNROLL
    for (int q = 0; q < DPPROF__GN_MAXSRC; q++) {
        if (q >= Q.m) break;
        const double b = dpprof__block_sum_n<DPPROF__GW_NT>(s[q], red);
        if (threadIdx.x == 0) part[((size_t)q * gridDim.z + blockIdx.z) * (size_t)G + blockIdx.x] = b;
    }
}

// bf16 flash norm, gram flavour, on cuBLAS (IC or OC not a multiple of 8, or dpprof_cuda_tuning.norms_cublas): row blocks [s0, s1) of Tb positions, whose two gram
// blocks fit the scratch (after the rowdot partials), so no T x T matrix exists. for sample i and block b:
// gx (s1 x Tb) = x_i[0:s1] x_i[s0:s1]^T with alpha 2 on the rows t < s0 (each pair below the diagonal
// block stands for itself and its mirror) and 1 on the diagonal block, gy the same for dy with alpha 1
// everywhere, norm2[i] += <gx, gy> (fp32 grams, double sums, as the fp32 kernel). rows t >= s1 are
// left to later blocks, so every (s, t) pair of the T x T sum counts exactly once with its mirror
static void dpprof__sqnorm_gram_bf16(double *norm2, const dpprof__bf16 *dy, const dpprof__bf16 *x, int n, int T, int IC, int OC) {
    const char *what = "dpprof_linear_sqnorm_gram_gpu";
    long long Tb;
    float *gx = dpprof__norm_blocks(what, T, (size_t)T, 2, &Tb);
    if (!gx) return; // T too long for the scratch: the error is queued
    float *gy = gx + (size_t)Tb * T;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < n && st == CUBLAS_STATUS_SUCCESS && !dpprof__cu.err; i++) {
        const dpprof__bf16 *xi = x + (size_t)i * T * IC, *gi = dy + (size_t)i * T * OC;
        for (int s0 = 0; s0 < T && st == CUBLAS_STATUS_SUCCESS; s0 += (int)Tb) {
            const int s1 = s0 + (int)Tb < T ? s0 + (int)Tb : T, tb = s1 - s0;
            // column-major: gx (s1, tb), ld s1; entry (t, s) = x_t . x_{s0+s}
            if (s0 > 0) st = dpprof__gemm_bf16(CUBLAS_OP_T, CUBLAS_OP_N, s0, tb, IC, 2.0f, xi, IC, xi + (size_t)s0 * IC, IC, 0.0f, gx, CUDA_R_32F, s1);
            if (st == CUBLAS_STATUS_SUCCESS)
                st = dpprof__gemm_bf16(CUBLAS_OP_T, CUBLAS_OP_N, tb, tb, IC, 1.0f, xi + (size_t)s0 * IC, IC, xi + (size_t)s0 * IC, IC, 0.0f, gx + s0, CUDA_R_32F, s1);
            if (st == CUBLAS_STATUS_SUCCESS)
                st = dpprof__gemm_bf16(CUBLAS_OP_T, CUBLAS_OP_N, s1, tb, OC, 1.0f, gi, OC, gi + (size_t)s0 * OC, OC, 0.0f, gy, CUDA_R_32F, s1);
            if (st == CUBLAS_STATUS_SUCCESS) dpprof__dp_rowdots(what, norm2 + i, gx, gy, 1, (size_t)s1 * (size_t)tb);
        }
    }
    dpprof__blas_post(what, st);
}

// the tensor-core gram kernel over layers [0, m) (m <= DPPROF__GN_MAXSRC) that read x: norm2[j][i] += sample
// i's squared norm of layer j, or with rep, norm2[j][0] += n times sample 0's. as many samples a launch as
// their partials (m G each) fit the scratch; then each layer's partials are reduced in index order
static void dpprof__gram_tc(const char *what, double *const *norm2, const float *const *dy, const int *OC, int m, const float *x, int n, int T, int IC, int rep) {
    const long long t = dpprof__dp_cdiv(T, 128), pairs = t * (t + 1) / 2, G = dpprof__dp_min(pairs, DPPROF__DP_CAP / m);
    const long long chunk = dpprof__dp_chunk(n, DPPROF__DP_CAP, m * G);
    double *part = (double *)dpprof__scratch((size_t)(m * G * chunk) * sizeof(double), what);
    if (!part) return;
    // steps of 64 columns on the wgmma kernel (dpprof_cuda_tuning.wgmma, compute capability 9.0), else 32
    const bool wg = dpprof__wgmma_on(DPPROF__GW_BYTES + DPPROF__GW_NT * sizeof(double));
    const int bk = wg ? DPPROF__GW_BK : DPPROF__GN_BK;
    dpprof__gn_srcs Q;
    Q.m = m;
    Q.K = Q.KX = (int)dpprof__dp_cdiv(IC, bk);
    for (int j = 0; j < DPPROF__GN_MAXSRC; j++) {
        Q.dy[j] = j < m ? dpprof__act<dpprof__bf16>(dy[j]) : nullptr;
        Q.OC[j] = j < m ? OC[j] : 0;
        Q.K += j < m ? (int)dpprof__dp_cdiv(OC[j], bk) : 0;
        Q.E[j] = Q.K;
    }
    const bool wide = dpprof__warp64(dpprof__gn_cfg<64>::BYTES, dpprof__gn_cfg<64>::NT);
    if (wg) dpprof__smem_optin(dpprof__k_dp_sqnorm_gram_wg, DPPROF__GW_BYTES, what);
    else if (wide) dpprof__smem_optin(dpprof__k_dp_sqnorm_gram_tc<64>, dpprof__gn_cfg<64>::BYTES, what);
    else dpprof__smem_optin(dpprof__k_dp_sqnorm_gram_tc<32>, dpprof__gn_cfg<32>::BYTES, what);
    for (int i0 = 0; i0 < n && !dpprof__cu.err; i0 += (int)chunk) {
        const long long k = dpprof__dp_min(chunk, n - i0);
        const dim3 grid((unsigned)G, 1, (unsigned)k);
        const dpprof__bf16 *xb = dpprof__act<dpprof__bf16>(x);
        if (wg) {
            dpprof__launch(what, dpprof__k_dp_sqnorm_gram_wg, grid, dim3(DPPROF__GW_NT), DPPROF__GW_BYTES, part, Q, xb, rep ? 0 : i0, T, IC, pairs, G, rep);
            dpprof__cu.wgmma_launches++;
        } else if (wide) dpprof__launch(what, dpprof__k_dp_sqnorm_gram_tc<64>, grid, dim3(dpprof__gn_cfg<64>::NT), dpprof__gn_cfg<64>::BYTES, part, Q, xb, rep ? 0 : i0, T, IC, pairs, G, rep);
        else dpprof__launch(what, dpprof__k_dp_sqnorm_gram_tc<32>, grid, dim3(dpprof__gn_cfg<32>::NT), dpprof__gn_cfg<32>::BYTES, part, Q, xb, rep ? 0 : i0, T, IC, pairs, G, rep);
        for (int j = 0; j < m; j++) {
            const double *pj = part + (size_t)(j * k * G);
            if (rep) dpprof__launch(what, dpprof__k_dp_reduce, dim3(1), dim3(DPPROF__DP_NT), 0, norm2[j], pj, G * k);
            else dpprof__launch(what, dpprof__k_dp_reduce, dim3((unsigned)k), dim3(DPPROF__DP_NT), 0, norm2[j] + i0, pj, G);
        }
    }
}

extern "C" void dpprof_linear_sqnorm_gram_rep_gpu(double *norm2, const float *dy, const float *x, int reps, int T, int IC, int OC) {
    const char *what = "dpprof_linear_sqnorm_gram_rep_gpu";
    if (reps <= 0 || T <= 0 || IC <= 0 || OC <= 0) return;
    if (!dpprof__norm_tc(dy, x, IC, OC)) { // the other paths take a batch one sample at a time (or per sample, in its grid)
        for (int r = 0; r < reps && !dpprof__cu.err; r++) dpprof_linear_sqnorm_gram_gpu(norm2, dy, x, 1, T, IC, OC);
        return;
    }
    dpprof__gram_tc(what, &norm2, &dy, &OC, 1, x, reps, T, IC, 1);
}

extern "C" void dpprof_linear_sqnorm_gram_gpu(double *norm2, const float *dy, const float *x, int n, int T, int IC, int OC) {
    const char *what = "dpprof_linear_sqnorm_gram_gpu";
    if (n <= 0 || T <= 0 || IC <= 0 || OC <= 0) return; // norm2 += 0
    const bool tc = dpprof__norm_tc(dy, x, IC, OC);
    if (tc) {
        dpprof__gram_tc(what, &norm2, &dy, &OC, 1, x, n, T, IC, 0);
        return;
    }
    if (dpprof__cu.bf16) {
        dpprof__sqnorm_gram_bf16(norm2, dpprof__act<dpprof__bf16>(dy), dpprof__act<dpprof__bf16>(x), n, T, IC, OC);
        return;
    }
    const long long m = dpprof__dp_cdiv(T, DPPROF__DP_TM), pairs = m * (m + 1) / 2;
    long long G = dpprof__dp_min(pairs, DPPROF__DP_CAP);
    long long chunk = dpprof__dp_chunk(n, DPPROF__DP_CAP, G);
    double *part = (double *)dpprof__scratch((size_t)(G * chunk) * sizeof(double), what);
    if (!part) return;
    for (int i0 = 0; i0 < n; i0 += (int)chunk) {
        long long k = dpprof__dp_min(chunk, n - i0);
        dpprof__launch(what, dpprof__k_dp_sqnorm_gram, dim3((unsigned)G, 1, (unsigned)k), dim3(DPPROF__DP_NT), 0, part, dy, x, i0, T, IC, OC, pairs, G);
        dpprof__launch(what, dpprof__k_dp_reduce, dim3((unsigned)k), dim3(DPPROF__DP_NT), 0, norm2 + i0, (const double *)part, G);
    }
}

extern "C" void dpprof_linear_sqnorm_gram_group_gpu(double *const *norm2, const float *const *dy, const int *OC, int m, const float *x, int n, int T, int IC) {
    const char *what = "dpprof_linear_sqnorm_gram_group_gpu";
    if (m <= 0 || n <= 0 || T <= 0 || IC <= 0) return;
    bool tc = true;
    for (int j = 0; j < m; j++) tc = tc && OC[j] > 0 && dpprof__norm_tc(dy[j], x, IC, OC[j]);
    if (!tc) { // the other paths make the input's gram per layer
        for (int j = 0; j < m && !dpprof__cu.err; j++) dpprof_linear_sqnorm_gram_gpu(norm2[j], dy[j], x, n, T, IC, OC[j]);
        return;
    }
    for (int j0 = 0; j0 < m && !dpprof__cu.err; j0 += DPPROF__GN_MAXSRC) {
        const int mm = m - j0 < DPPROF__GN_MAXSRC ? m - j0 : DPPROF__GN_MAXSRC;
        dpprof__gram_tc(what, norm2 + j0, dy + j0, OC + j0, mm, x, n, T, IC, 0);
    }
}

// gram matrices out[i] (T,T) = x_i x_i^T, overwritten: block (tile pair p of the upper triangle, samples
// strided) computes the 64x64 tile once and writes it and its mirror from the same floats (the mirror
// transposed through shared memory, so both stores are coalesced): exactly symmetric. grid (pairs, 1, n)
__global__ void dpprof__k_dp_gram(float *out, const float *x, int n, int T, int D) {
    alignas(16) __shared__ float sA[DPPROF__DP_TF][DPPROF__DP_LDT], sB[DPPROF__DP_TF][DPPROF__DP_LDT];
    __shared__ float sC[DPPROF__DP_TM][DPPROF__DP_TN + 1];
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    long long sa, tb;
    dpprof__k_dp_pair(blockIdx.x, &sa, &tb);
    const int s0 = (int)sa * DPPROF__DP_TM, t0 = (int)tb * DPPROF__DP_TN;
    const int ns = T - s0 < DPPROF__DP_TM ? T - s0 : DPPROF__DP_TM, nt = T - t0 < DPPROF__DP_TN ? T - t0 : DPPROF__DP_TN;
    const bool diag = sa == tb;
    for (int i = blockIdx.z; i < n; i += gridDim.z) {
        const float *xi = x + (size_t)i * (size_t)T * (size_t)D;
        float *o = out + (size_t)i * (size_t)T * (size_t)T;
        float acc[4][4];
        dpprof__k_dp_gemm_nt(acc, sA, sB, xi + (size_t)s0 * D, xi + (size_t)t0 * D, ns, nt, D);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) sC[4 * ty + a][4 * tx + b] = acc[a][b];
        __syncthreads();
        // the tile, then its mirror out[t0+t][s0+s] = tile[s][t]; consecutive threads write consecutive
        // columns both times (bank (s + t) % 32: no conflicts). a diagonal tile writes its upper triangle
        // directly and mirrors it, so both halves come from the same floats
        for (int e = tid; e < DPPROF__DP_TM * DPPROF__DP_TN; e += DPPROF__DP_NT) {
            int s = e / DPPROF__DP_TN, t = e % DPPROF__DP_TN;
            if (s < ns && t < nt && (!diag || s <= t)) o[(size_t)(s0 + s) * T + (size_t)(t0 + t)] = sC[s][t];
        }
        for (int e = tid; e < DPPROF__DP_TM * DPPROF__DP_TN; e += DPPROF__DP_NT) {
            int t = e / DPPROF__DP_TM, s = e % DPPROF__DP_TM;
            if (s < ns && t < nt && (!diag || s < t)) o[(size_t)(t0 + t) * T + (size_t)(s0 + s)] = sC[s][t];
        }
        __syncthreads();
    }
}

extern "C" void dpprof_gram_gpu(float *out, const float *x, int n, int T, int D) {
    if (n <= 0 || T <= 0) return;
    if (D < 0) D = 0;
    long long m = dpprof__dp_cdiv(T, DPPROF__DP_TM), pairs = m * (m + 1) / 2;
    dim3 grid((unsigned)pairs, 1, (unsigned)dpprof__dp_min(n, DPPROF__DP_MAXZ));
    if (dpprof__cu.bf16 && D > 0) { // bf16: the tensor cores, fp32 out. out_i (T,T) = x_i x_i^T: x_i row-major (T,D) is X (D,T), out = X^T X
        const float one = 1.0f, zero = 0.0f;
        if (dpprof__cu.err) return;
        dpprof__blas_post("dpprof_gram_gpu", cublasGemmStridedBatchedEx(dpprof__cu.blas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, D, &one, x, CUDA_R_16BF, D, (long long)T * D,
                                                                        x, CUDA_R_16BF, D, (long long)T * D, &zero, out, CUDA_R_32F, T, (long long)T * T, n,
                                                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else dpprof__launch("dpprof_gram_gpu", dpprof__k_dp_gram, grid, dim3(DPPROF__DP_NT), 0, out, x, n, T, D); // fp32, or D = 0 (zeros: x is not read)
}

// ---- long per-sample dots --------------------------------------------------------------------------

// part[z*G + j] = sum over the vectors of W elements at e = W (j*256 + tid + k*G*256) of row i0+z of a.b
// (a, b (n,P)), in double, the block's threads by the tree. W = 4 (16-byte loads) where the rows are
// 16-byte aligned, else 1. grid (G, 1, samples of the chunk); reads a and b once
template <typename A, int W>
__global__ void dpprof__k_dp_rowdot(double *part, const A *a, const A *b, int i0, size_t P, long long G) {
    __shared__ double red[DPPROF__DP_NT];
    const size_t row = ((size_t)i0 + blockIdx.z) * P;
    const A *ar = a + row, *br = b + row;
    const size_t stride = W * (size_t)G * DPPROF__DP_NT;
    double s = 0.0;
    for (size_t e = W * ((size_t)blockIdx.x * DPPROF__DP_NT + threadIdx.x); e < P; e += stride) {
        float av[W], bv[W];
        dpprof__ldn<A, W>(av, ar, e, P);
        dpprof__ldn<A, W>(bv, br, e, P);
        DPPROF__UNROLL
        for (int l = 0; l < W; l++) s += (double)av[l] * (double)bv[l];
    }
    s = dpprof__k_dp_block_sum(s, red);
    if (threadIdx.x == 0) part[(size_t)blockIdx.z * (size_t)G + blockIdx.x] = s;
}

// norm2[i] += sum_e a[i,e] b[i,e] for i < n, e < P; A the type of a and b (float, or the bf16 storage of
// activations: W = 8, 16-byte loads of 8 elements, where the rows allow)
template <typename A>
static void dpprof__dp_rowdots_t(const char *what, double *norm2, const A *a, const A *b, int n, size_t P) {
    if (n <= 0 || P == 0) return;
    constexpr int VE = 16 / (int)sizeof(A);
    const int w = dpprof__rows_vw<A>(P, a, b);
    // ~16 elements per thread, at most 4096 partials per sample
    long long G = dpprof__dp_min(dpprof__dp_min((long long)((P + 16 * DPPROF__DP_NT - 1) / (16 * DPPROF__DP_NT)), 4096), DPPROF__DP_CAP);
    long long chunk = dpprof__dp_chunk(n, DPPROF__DP_CAP, G);
    double *part = (double *)dpprof__scratch((size_t)(G * chunk) * sizeof(double), what);
    if (!part) return;
    for (int i0 = 0; i0 < n; i0 += (int)chunk) {
        long long k = dpprof__dp_min(chunk, n - i0);
        const dim3 grid((unsigned)G, 1, (unsigned)k);
        if (w == VE) dpprof__launch(what, dpprof__k_dp_rowdot<A, VE>, grid, dim3(DPPROF__DP_NT), 0, part, a, b, i0, P, G);
        else dpprof__launch(what, dpprof__k_dp_rowdot<A, 1>, grid, dim3(DPPROF__DP_NT), 0, part, a, b, i0, P, G);
        dpprof__launch(what, dpprof__k_dp_reduce, dim3((unsigned)k), dim3(DPPROF__DP_NT), 0, norm2 + i0, (const double *)part, G);
    }
}

static void dpprof__dp_rowdots(const char *what, double *norm2, const float *a, const float *b, int n, size_t P) { dpprof__dp_rowdots_t<float>(what, norm2, a, b, n, P); }

template <typename A>
static void dpprof__sample_sqnorm(double *norm2, const float *x, int n, size_t P) {
    dpprof__dp_rowdots_t<A>("dpprof_sample_sqnorm_gpu", norm2, dpprof__act<A>(x), dpprof__act<A>(x), n, P);
}

// norm2[i] += the squared norm of sample i of an activation in the storage type (book-keeping's batched clipped
// gradient bounds its bf16 rounding with the norms of dy and x)
extern "C" void dpprof_sample_sqnorm_gpu(double *norm2, const float *x, int n, size_t P) { DPPROF__BY_STORAGE(dpprof__sample_sqnorm, norm2, x, n, P); }

extern "C" void dpprof_psgrad_sqnorm_gpu(double *norm2, const float *psg, int n, size_t P) {
    dpprof__dp_rowdots("dpprof_psgrad_sqnorm_gpu", norm2, psg, psg, n, P);
}

extern "C" void dpprof_gram_dot_gpu(double *norm2, const float *ga, const float *gg, int n, int T) {
    if (T <= 0) return;
    dpprof__dp_rowdots("dpprof_gram_dot_gpu", norm2, ga, gg, n, (size_t)T * (size_t)T);
}

// dw[e] = (float)(dw[e] + sum_i c[i] * psg[i,e]): the sum over i in double in sample order, one rounding
// (the reference's arithmetic). grid-stride over e (coalesced); reads psg once
__global__ void dpprof__k_dp_clipsum(float *dw, const float *psg, const double *c, int n, size_t P) {
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < P; e += (size_t)gridDim.x * blockDim.x) {
        double acc = 0.0;
        for (int i = 0; i < n; i++) acc += c[i] * (double)psg[(size_t)i * P + e];
        dw[e] = (float)((double)dw[e] + acc);
    }
}

extern "C" void dpprof_psgrad_clipsum_gpu(float *dw, const float *psg, const double *c, int n, size_t P) {
    if (n <= 0 || P == 0) return; // dw += 0
    dpprof__launch("dpprof_psgrad_clipsum_gpu", dpprof__k_dp_clipsum, dim3(dpprof__blocks(P, DPPROF__DP_NT)), dim3(DPPROF__DP_NT), 0, dw, psg, c, n, P);
}

// ---- rmsnorm weight --------------------------------------------------------------------------------

// the sum over t of dout*inp*rstd (product ((double)dout*inp)*rstd as the reference) for channel c of
// sample i, over the rows of split s of S (rows s*L .. s*L+L). S == 1: psg[i,c] = (float)sum directly,
// else part[(i*S + s)*C + c] = sum. a thread takes W consecutive channels (one 16-byte access a row
// where the rows are 16-byte aligned, W = 16 / sizeof(A); else W = 1). grid (C/(W*256), S, samples
// strided); coalesced over c
template <typename A, int W>
__global__ void dpprof__k_dp_rms_psdw(float *psg, double *part, const A *dout, const A *inp, const float *rstd, int n, int T, int C,
                                      int S, int L) {
    const int c = W * (blockIdx.x * DPPROF__DP_NT + threadIdx.x), s = blockIdx.y;
    if (c >= C) return;
    const int t0 = s * L, t1 = t0 + L < T ? t0 + L : T;
    for (int i = blockIdx.z; i < n; i += gridDim.z) {
        double acc[W];
        DPPROF__UNROLL
        for (int l = 0; l < W; l++) acc[l] = 0.0;
        for (int t = t0; t < t1; t++) {
            const size_t row = (size_t)i * T + t;
            const double r = rstd[row];
            float g[W], x[W];
            dpprof__ldn<A, W>(g, dout + row * C, (size_t)c, (size_t)C);
            dpprof__ldn<A, W>(x, inp + row * C, (size_t)c, (size_t)C);
            DPPROF__UNROLL
            for (int l = 0; l < W; l++) acc[l] += (double)g[l] * x[l] * r;
        }
        DPPROF__UNROLL
        for (int l = 0; l < W && c + l < C; l++) {
            if (S == 1) psg[(size_t)i * C + c + l] = (float)acc[l];
            else part[((size_t)i * S + s) * C + c + l] = acc[l];
        }
    }
}

// psg[i,c] = (float)(sum_s part[(i*S + s)*C + c]) in split order. grid-stride over n*C
__global__ void dpprof__k_dp_rms_psdw_sum(float *psg, const double *part, int n, int C, int S) {
    size_t total = (size_t)n * C;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (size_t)gridDim.x * blockDim.x) {
        size_t i = e / (size_t)C, c = e % (size_t)C;
        double acc = 0.0;
        for (int s = 0; s < S; s++) acc += part[(i * S + s) * C + c];
        psg[e] = (float)acc;
    }
}

template <typename A>
static void dpprof__rms_psdw_as(const char *what, float *psg, double *part, const float *dout, const float *inp, const float *rstd, int n, int T, int C, int S, int L) {
    constexpr int VE = 16 / (int)sizeof(A);
    const int w = dpprof__rows_vw<A>((size_t)C, dout, inp);
    const dim3 grid((unsigned)dpprof__dp_cdiv(dpprof__dp_cdiv(C, w), DPPROF__DP_NT), (unsigned)S, (unsigned)dpprof__dp_min(n, DPPROF__DP_MAXZ));
    if (w == VE) dpprof__launch(what, dpprof__k_dp_rms_psdw<A, VE>, grid, dim3(DPPROF__DP_NT), 0, psg, part, dpprof__act<A>(dout), dpprof__act<A>(inp), rstd, n, T, C, S, L);
    else dpprof__launch(what, dpprof__k_dp_rms_psdw<A, 1>, grid, dim3(DPPROF__DP_NT), 0, psg, part, dpprof__act<A>(dout), dpprof__act<A>(inp), rstd, n, T, C, S, L);
}

extern "C" void dpprof_rmsnorm_psdweight_gpu(float *psg, const float *dout, const float *inp, const float *rstd, int n, int T, int C) {
    const char *what = "dpprof_rmsnorm_psdweight_gpu";
    if (n <= 0 || C <= 0) return;
    if (T < 0) T = 0;
    // split T into S pieces of >= 64 rows (at most 64 pieces) when the n*S*C partials fit the scratch
    long long S = dpprof__dp_min(dpprof__dp_min(dpprof__dp_cdiv(T, 64), 64), DPPROF__DP_CAP / ((long long)n * C));
    if (S < 1) S = 1;
    int L = (int)dpprof__dp_cdiv(T, S);
    double *part = nullptr;
    if (S > 1 && !(part = (double *)dpprof__scratch((size_t)n * (size_t)S * (size_t)C * sizeof(double), what))) return;
    if (dpprof__cu.bf16) dpprof__rms_psdw_as<dpprof__bf16>(what, psg, part, dout, inp, rstd, n, T, C, (int)S, L);
    else dpprof__rms_psdw_as<float>(what, psg, part, dout, inp, rstd, n, T, C, (int)S, L);
    if (S > 1)
        dpprof__launch(what, dpprof__k_dp_rms_psdw_sum, dim3(dpprof__blocks((size_t)n * C, DPPROF__DP_NT)), dim3(DPPROF__DP_NT), 0, psg,
                       (const double *)part, n, C, (int)S);
}

// ---- embedding -------------------------------------------------------------------------------------
// occurrences of a token are chained: head[r] = 1 when r is the first row of its segment holding its
// token, next[r] = the next row of the segment holding it (or -1). a head's block walks its chain in row
// order, so every sum over occurrences has a fixed order (the reference's order: increasing rows).

// links of segments of L rows (tokens + seg*L); grid (L/256, segments); every block scans the whole
// segment's tokens through shared memory: O(L^2) int compares per segment, tokens read L/256 times
__global__ void dpprof__k_dp_links(int *head, int *next, const int *tokens, int L) {
    __shared__ int st[DPPROF__DP_NT];
    const size_t base = (size_t)blockIdx.y * (size_t)L;
    const int r = blockIdx.x * DPPROF__DP_NT + threadIdx.x;
    const bool valid = r < L;
    const int tok = valid ? tokens[base + r] : 0;
    int seen = 0, nx = -1;
    for (int m0 = 0; m0 < L; m0 += DPPROF__DP_NT) {
        int cnt = L - m0 < DPPROF__DP_NT ? L - m0 : DPPROF__DP_NT;
        if ((int)threadIdx.x < cnt) st[threadIdx.x] = tokens[base + m0 + threadIdx.x];
        __syncthreads();
        // only tiles that can still change something: rows before r while unseen, after r while no next
        if (valid && ((!seen && m0 < r) || (nx < 0 && m0 + cnt - 1 > r)))
            for (int j = 0; j < cnt; j++) {
                int m = m0 + j;
                if (st[j] != tok) continue;
                if (m < r) seen = 1;
                else if (m > r && nx < 0) nx = m;
            }
        __syncthreads();
    }
    if (valid) {
        head[base + r] = !seen;
        next[base + r] = nx;
    }
}

// per-sample ||g_i||^2 = sum over distinct tokens v of ||sum_{t: tok_t = v} dy_t||^2: block (t, sample z of
// the chunk); if t heads its token, each thread sums its channels c = tid + 256j over the chain in double
// and square-sums them; part[z*T + t] (0 for non-heads). grid (T, samples); reads each dy row once
template <typename A>
__global__ void dpprof__k_dp_emb_sqnorm(double *part, const int *head, const int *next, const A *dy, int T, int C) {
    __shared__ double red[DPPROF__DP_NT];
    const size_t z = blockIdx.y, base = z * (size_t)T;
    const int t = blockIdx.x;
    if (!head[base + t]) {
        if (threadIdx.x == 0) part[base + t] = 0.0;
        return;
    }
    const A *g = dy + base * (size_t)C;
    double tot = 0.0;
    for (int c0 = 0; c0 < C; c0 += DPPROF__DP_NT * DPPROF__DP_CPT) {
        double acc[DPPROF__DP_CPT];
        for (int j = 0; j < DPPROF__DP_CPT; j++) acc[j] = 0.0;
        for (int m = t; m >= 0; m = next[base + m]) {
            const A *row = g + (size_t)m * C;
            for (int j = 0; j < DPPROF__DP_CPT; j++) {
                int c = c0 + threadIdx.x + DPPROF__DP_NT * j;
                if (c < C) acc[j] += (double)dpprof__ld(row[c]);
            }
        }
        for (int j = 0; j < DPPROF__DP_CPT; j++) tot += acc[j] * acc[j];
    }
    tot = dpprof__k_dp_block_sum(tot, red);
    if (threadIdx.x == 0) part[base + t] = tot;
}

extern "C" void dpprof_embedding_sqnorm_gpu(double *norm2, const float *dy, const int *tokens, int n, int T, int C) {
    const char *what = "dpprof_embedding_sqnorm_gpu";
    if (n <= 0 || T <= 0 || C <= 0) return; // norm2 += 0
    // scratch per row: a double partial, head, next
    long long per = (long long)T * (long long)(sizeof(double) + 2 * sizeof(int));
    long long chunk = dpprof__dp_chunk(n, (long long)DPPROF__DP_CAP_BYTES, per); // T too long: dpprof__scratch reports it
    size_t rows = (size_t)chunk * (size_t)T;
    unsigned char *sc = (unsigned char *)dpprof__scratch(rows * (sizeof(double) + 2 * sizeof(int)), what);
    if (!sc) return;
    double *part = (double *)sc;
    int *head = (int *)(sc + rows * sizeof(double)), *next = head + rows;
    for (int i0 = 0; i0 < n; i0 += (int)chunk) {
        long long k = dpprof__dp_min(chunk, n - i0);
        const size_t off = (size_t)i0 * (size_t)T;
        dpprof__launch(what, dpprof__k_dp_links, dim3((unsigned)dpprof__dp_cdiv(T, DPPROF__DP_NT), (unsigned)k), dim3(DPPROF__DP_NT), 0, head, next,
                       tokens + off, T);
        if (dpprof__cu.bf16)
            dpprof__launch(what, dpprof__k_dp_emb_sqnorm<dpprof__bf16>, dim3((unsigned)T, (unsigned)k), dim3(DPPROF__DP_NT), 0, part, (const int *)head,
                           (const int *)next, dpprof__act<dpprof__bf16>(dy) + off * (size_t)C, T, C);
        else dpprof__launch(what, dpprof__k_dp_emb_sqnorm<float>, dim3((unsigned)T, (unsigned)k), dim3(DPPROF__DP_NT), 0, part, (const int *)head,
                            (const int *)next, dy + off * (size_t)C, T, C);
        dpprof__launch(what, dpprof__k_dp_reduce, dim3((unsigned)k), dim3(DPPROF__DP_NT), 0, norm2 + i0, (const double *)part, (long long)T);
    }
}

// psg[i, tok] (C) = (float)(sum over the chain of dy rows, in double) for each head t with 0 <= tok < V
// (the rest of psg was zeroed before). block (t, sample z of the chunk); grid (T, samples)
template <typename A>
__global__ void dpprof__k_dp_emb_psgrad(float *psg, const int *head, const int *next, const A *dy, const int *tokens, int T, int V,
                                        int C) {
    const size_t z = blockIdx.y, base = z * (size_t)T;
    const int t = blockIdx.x;
    const int tok = tokens[base + t];
    if (!head[base + t] || tok < 0 || tok >= V) return;
    const A *g = dy + base * (size_t)C;
    float *dst = psg + (z * (size_t)V + (size_t)tok) * (size_t)C;
    for (int c0 = 0; c0 < C; c0 += DPPROF__DP_NT * DPPROF__DP_CPT) {
        double acc[DPPROF__DP_CPT];
        for (int j = 0; j < DPPROF__DP_CPT; j++) acc[j] = 0.0;
        for (int m = t; m >= 0; m = next[base + m]) {
            const A *row = g + (size_t)m * C;
            for (int j = 0; j < DPPROF__DP_CPT; j++) {
                int c = c0 + threadIdx.x + DPPROF__DP_NT * j;
                if (c < C) acc[j] += (double)dpprof__ld(row[c]);
            }
        }
        for (int j = 0; j < DPPROF__DP_CPT; j++) {
            int c = c0 + threadIdx.x + DPPROF__DP_NT * j;
            if (c < C) dst[c] = (float)acc[j];
        }
    }
}

extern "C" void dpprof_embedding_psgrad_gpu(float *psg, const float *dy, const int *tokens, int n, int T, int V, int C) {
    const char *what = "dpprof_embedding_psgrad_gpu";
    if (n <= 0 || V <= 0 || C <= 0) return;
    if (dpprof__cu.err) return;
    // overwritten: rows of tokens a sample does not use are zeros
    dpprof__cu.work++;
    dpprof__cu_post(what, cudaMemsetAsync(psg, 0, (size_t)n * (size_t)V * (size_t)C * sizeof(float), dpprof__cu.stream));
    if (T <= 0) return;
    long long per = (long long)T * (long long)(2 * sizeof(int));
    long long chunk = dpprof__dp_chunk(n, (long long)DPPROF__DP_CAP_BYTES, per);
    size_t rows = (size_t)chunk * (size_t)T;
    int *head = (int *)dpprof__scratch(rows * 2 * sizeof(int), what), *next = head ? head + rows : nullptr;
    if (!head) return;
    for (int i0 = 0; i0 < n; i0 += (int)chunk) {
        long long k = dpprof__dp_min(chunk, n - i0);
        const size_t off = (size_t)i0 * (size_t)T;
        dpprof__launch(what, dpprof__k_dp_links, dim3((unsigned)dpprof__dp_cdiv(T, DPPROF__DP_NT), (unsigned)k), dim3(DPPROF__DP_NT), 0, head, next,
                       tokens + off, T);
        if (dpprof__cu.bf16)
            dpprof__launch(what, dpprof__k_dp_emb_psgrad<dpprof__bf16>, dim3((unsigned)T, (unsigned)k), dim3(DPPROF__DP_NT), 0,
                           psg + (size_t)i0 * (size_t)V * (size_t)C, (const int *)head, (const int *)next, dpprof__act<dpprof__bf16>(dy) + off * (size_t)C,
                           tokens + off, T, V, C);
        else dpprof__launch(what, dpprof__k_dp_emb_psgrad<float>, dim3((unsigned)T, (unsigned)k), dim3(DPPROF__DP_NT), 0, psg + (size_t)i0 * (size_t)V * (size_t)C,
                            (const int *)head, (const int *)next, dy + off * (size_t)C, tokens + off, T, V, C);
    }
}

// dwte[tok] (C) = (float)(dwte[tok] + sum over the batch-wide chain of c[m/T] * dy_m, in double) for each
// head row r of the whole batch (tok >= 0): every occurrence summed before one rounding, each dwte row
// written by one block. grid (n*T); reads each dy row once
template <typename A>
__global__ void dpprof__k_dp_emb_clipgrad(float *dwte, const int *head, const int *next, const A *dy, const int *tokens, const double *c,
                                          int T, int C) {
    const int r = blockIdx.x;
    const int tok = tokens[r];
    if (!head[r] || tok < 0) return;
    float *dst = dwte + (size_t)tok * (size_t)C;
    for (int c0 = 0; c0 < C; c0 += DPPROF__DP_NT * DPPROF__DP_CPT) {
        double acc[DPPROF__DP_CPT];
        for (int j = 0; j < DPPROF__DP_CPT; j++) acc[j] = 0.0;
        for (int m = r; m >= 0; m = next[m]) {
            const A *row = dy + (size_t)m * C;
            const double w = c[m / T];
            for (int j = 0; j < DPPROF__DP_CPT; j++) {
                int ch = c0 + threadIdx.x + DPPROF__DP_NT * j;
                if (ch < C) acc[j] += w * (double)dpprof__ld(row[ch]);
            }
        }
        for (int j = 0; j < DPPROF__DP_CPT; j++) {
            int ch = c0 + threadIdx.x + DPPROF__DP_NT * j;
            if (ch < C) dst[ch] = (float)((double)dst[ch] + acc[j]);
        }
    }
}

extern "C" void dpprof_embedding_clipgrad_gpu(float *dwte, const float *dy, const int *tokens, const double *c, int n, int T, int C) {
    const char *what = "dpprof_embedding_clipgrad_gpu";
    if (n <= 0 || T <= 0 || C <= 0) return; // dwte += 0
    long long N = (long long)n * T;
    if (N > 0x7fffffffLL) {
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", what, "n*T rows exceed int");
        return;
    }
    // the chains span the whole batch (a token shared by samples is summed across them): one segment
    int *head = (int *)dpprof__scratch((size_t)N * 2 * sizeof(int), what), *next = head ? head + N : nullptr;
    if (!head) return;
    dpprof__launch(what, dpprof__k_dp_links, dim3((unsigned)dpprof__dp_cdiv(N, DPPROF__DP_NT), 1), dim3(DPPROF__DP_NT), 0, head, next, tokens, (int)N);
    if (dpprof__cu.bf16)
        dpprof__launch(what, dpprof__k_dp_emb_clipgrad<dpprof__bf16>, dim3((unsigned)N), dim3(DPPROF__DP_NT), 0, dwte, (const int *)head, (const int *)next,
                       dpprof__act<dpprof__bf16>(dy), tokens, c, T, C);
    else dpprof__launch(what, dpprof__k_dp_emb_clipgrad<float>, dim3((unsigned)N), dim3(DPPROF__DP_NT), 0, dwte, (const int *)head, (const int *)next, dy,
                        tokens, c, T, C);
}

// tied embedding and head: part[z*T + s] = 2 sum_t dl[z, t, tok_s] <x_t, dy_s> (dpprof_tied_cross_ref's summands of
// row s, in double). block (s, sample z of the chunk); thread j takes t = j, j + 256, ... in order, each dot
// over C in order, then the fixed block sum. grid (T, samples)
template <typename A>
__global__ void dpprof__k_dp_tied_cross(double *part, const A *dl, const A *x, const A *dy, const int *tokens, int T, int V, int C) {
    __shared__ double red[DPPROF__DP_NT];
    const size_t z = blockIdx.y, base = z * (size_t)T;
    const int s = blockIdx.x, tok = tokens[base + s];
    const A *g = dy + (base + (size_t)s) * (size_t)C;
    double tot = 0.0;
    if (tok >= 0 && tok < V)
        for (int t = threadIdx.x; t < T; t += DPPROF__DP_NT) {
            const A *xr = x + (base + (size_t)t) * (size_t)C;
            double d = 0.0;
            for (int c = 0; c < C; c++) d += (double)dpprof__ld(xr[c]) * (double)dpprof__ld(g[c]);
            tot += (double)dpprof__ld(dl[(base + (size_t)t) * (size_t)V + (size_t)tok]) * d;
        }
    tot = dpprof__k_dp_block_sum(tot, red);
    if (threadIdx.x == 0) part[base + s] = 2.0 * tot;
}

extern "C" void dpprof_tied_cross_gpu(double *norm2, const float *dl, const float *x, const float *dy, const int *tokens, int n, int T, int V, int C) {
    const char *what = "dpprof_tied_cross_gpu";
    if (n <= 0 || T <= 0 || C <= 0 || V <= 0) return; // norm2 += 0
    long long chunk = dpprof__dp_chunk(n, (long long)DPPROF__DP_CAP, (long long)T);
    double *part = (double *)dpprof__scratch((size_t)chunk * (size_t)T * sizeof(double), what);
    if (!part) return;
    for (int i0 = 0; i0 < n; i0 += (int)chunk) {
        long long k = dpprof__dp_min(chunk, n - i0);
        const size_t off = (size_t)i0 * (size_t)T;
        if (dpprof__cu.bf16)
            dpprof__launch(what, dpprof__k_dp_tied_cross<dpprof__bf16>, dim3((unsigned)T, (unsigned)k), dim3(DPPROF__DP_NT), 0, part,
                           dpprof__act<dpprof__bf16>(dl) + off * (size_t)V, dpprof__act<dpprof__bf16>(x) + off * (size_t)C,
                           dpprof__act<dpprof__bf16>(dy) + off * (size_t)C, tokens + off, T, V, C);
        else dpprof__launch(what, dpprof__k_dp_tied_cross<float>, dim3((unsigned)T, (unsigned)k), dim3(DPPROF__DP_NT), 0, part, dl + off * (size_t)V,
                            x + off * (size_t)C, dy + off * (size_t)C, tokens + off, T, V, C);
        dpprof__launch(what, dpprof__k_dp_reduce, dim3((unsigned)k), dim3(DPPROF__DP_NT), 0, norm2 + i0, (const double *)part, (long long)T);
    }
}

// ==== cupti: measured dram and l2 bytes per named range (CUPTI range profiler) ====================
// one collection at a time, on the runtime's primary context of the dpprof_cuda_init device:
//   begin   cuptiProfilerInitialize, device check, chip name, counter availability, a config image
//           for the metrics below (host object), cuptiRangeProfilerEnable, a counter data image for
//           max_ranges ranges, SetConfig(user ranges, user replay, one nesting level), Start
//   push    drain the device, PushRange("<index>:<name>"), drain again (the range holds exactly the
//           work queued between push and pop, whatever channel CUPTI marks the boundary on)
//   pop     drain the device, PopRange
//   end     Stop (must report every pass submitted: the config is single-pass), DecodeData, then per
//           decoded range its "<index>:" prefix says which push it was, EvaluateToGpuValues; teardown
// the config must collect in ONE pass: the engine's stream work runs once and cannot be replayed.
// dram__bytes_{read,write}.sum and lts__t_sectors_srcunit_tex_op_{read,write}.sum (x32 bytes: l2
// traffic from the SMs, not from copy engines) are one pass together on sm 7.5-10.x (checked with
// cuptiProfilerHostGetNumOfPasses for TU102, GA100, GA102, AD102, GH100, GB100); where they are not,
// the l2 pair is dropped (values -1) and the dram pair alone must be one pass, else UNSUPPORTED.
// link: -lcupti (libcupti dlopens libcuda.so.1 and libnvperf_host.so itself; -ldl for dlopen on
// glibc < 2.34); no -lcuda: the context comes from cuCtxGetCurrent reached through
// cudaGetDriverEntryPointByVersion, so nothing needs the driver at load time.
#ifndef DPPROF_CUEMU
#include <cuda.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_profiler_target.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <dlfcn.h>
#include <link.h>

#define DPPROF__CUPTI_NAME 64 // == sizeof dpprof_counter_range.name
static const char *dpprof__cupti_metric[4] = {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
                                              "lts__t_sectors_srcunit_tex_op_write.sum"};

struct dpprof__cupti_state {
    int active, open, n, max;     // collecting; a range is pushed; ranges pushed; capacity (max_ranges)
    int initialized, started, l2; // cuptiProfilerInitialize done; Start done; the l2 pair is in the config
    size_t n_metrics;             // 4, or 2 (dram only)
    CUcontext ctx;
    CUpti_RangeProfiler_Object *obj;
    CUpti_Profiler_Host_Object *host;
    uint8_t *avail, *config, *counter; // counter availability, config and counter data images (host memory)
    size_t avail_bytes, config_bytes, counter_bytes;
    char chip[64];
    char (*names)[DPPROF__CUPTI_NAME]; // the pushed names, in push order
};
static dpprof__cupti_state dpprof__cupti;

// zeroed params with their structSize (aggregate {size} would trip -Wmissing-field-initializers)
#define DPPROF__CUPTI_PARAMS(T, v) \
    T v;                           \
    std::memset(&v, 0, sizeof v);  \
    v.structSize = T##_STRUCT_SIZE

// a failed CUPTI call: its name and message for dpprof_last_error(); returns code (OOM for OOM)
static int dpprof__cupti_fail(CUptiResult r, const char *what, int code) {
    const char *name = nullptr, *msg = nullptr, *hint = "";
    char text[384];
    size_t len;
    if (cuptiGetResultString(r, &name) != CUPTI_SUCCESS || !name) name = "unknown CUPTI error";
    if (cuptiGetErrorMessage(r, &msg) != CUPTI_SUCCESS || !msg || !std::strcmp(msg, name)) msg = "";
    len = strnlen(msg, sizeof text - 1); // CUPTI's message, without its trailing blanks and newline
    std::memcpy(text, msg, len);
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == '\t')) len--;
    text[len] = 0;
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) { // CUPTI's own words overflow the buffer
        hint = ": gpu performance counters are restricted to admin users: run as root, or load the nvidia module with "
               "NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
        text[0] = 0;
    }
    if (r == CUPTI_ERROR_OUT_OF_MEMORY) code = DPPROF_ERR_OOM;
    dpprof_fail(0, "counters: %s: %s%s%s%s", what, name, hint, *text ? ": " : "", text);
    return code;
}
static int dpprof__cupti_say(int code, const char *what) {
    dpprof_fail(0, "counters: %s", what);
    return code;
}
static const char *dpprof__cupti_level(CUpti_Profiler_Support_Level l) {
    return l == CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "supported" : l == CUPTI_PROFILER_CONFIGURATION_DISABLED ? "disabled"
                                                                 : l == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED  ? "unsupported"
                                                                                                                  : "unknown";
}

// libcupti dlopens "libnvperf_host.so" by bare name, which the executable's RUNPATH does not reach
// (only LD_LIBRARY_PATH or ld.so.cache do): load it first from libcupti's own directory (the same
// toolkit), so CUPTI's dlopen finds it loaded. kept loaded for the process (CUPTI holds it too);
// if this fails CUPTI searches as usual and begin reports what it finds
static void *dpprof__cupti_nvperf;
static int dpprof__cupti_find(struct dl_phdr_info *info, size_t, void *path) {
    const char *name = info->dlpi_name, *slash = name ? std::strrchr(name, '/') : nullptr;
    if (!slash || std::strncmp(slash + 1, "libcupti.so", 11)) return 0;
    std::snprintf((char *)path, 512, "%.*s/libnvperf_host.so", (int)(slash - name), name);
    return 1;
}
static void dpprof__cupti_preload(void) {
    char path[512] = "";
    if (dpprof__cupti_nvperf) return;
    dl_iterate_phdr(dpprof__cupti_find, path);
    if (*path) dpprof__cupti_nvperf = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
}

// undo whatever begin got to; rc is the error so far (a teardown failure is reported only when
// nothing failed before). the state is all zero afterwards, so begin can run again
static int dpprof__cupti_teardown(int rc) {
    dpprof__cupti_state &s = dpprof__cupti;
    CUptiResult r;
    if (s.obj && s.open) {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params, p);
        p.pRangeProfilerObject = s.obj;
        r = cuptiRangeProfilerPopRange(&p);
        if (r != CUPTI_SUCCESS && rc == DPPROF_OK) rc = dpprof__cupti_fail(r, "cuptiRangeProfilerPopRange", DPPROF_ERR_CUDA);
    }
    if (s.obj && s.started) {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params, p);
        p.pRangeProfilerObject = s.obj;
        r = cuptiRangeProfilerStop(&p);
        if (r != CUPTI_SUCCESS && rc == DPPROF_OK) rc = dpprof__cupti_fail(r, "cuptiRangeProfilerStop", DPPROF_ERR_CUDA);
    }
    if (s.obj) {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params, p);
        p.pRangeProfilerObject = s.obj;
        r = cuptiRangeProfilerDisable(&p);
        if (r != CUPTI_SUCCESS && rc == DPPROF_OK) rc = dpprof__cupti_fail(r, "cuptiRangeProfilerDisable", DPPROF_ERR_CUDA);
    }
    if (s.host) {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params, p);
        p.pHostObject = s.host;
        r = cuptiProfilerHostDeinitialize(&p);
        if (r != CUPTI_SUCCESS && rc == DPPROF_OK) rc = dpprof__cupti_fail(r, "cuptiProfilerHostDeinitialize", DPPROF_ERR_CUDA);
    }
    if (s.initialized) {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params, p);
        r = cuptiProfilerDeInitialize(&p);
        if (r != CUPTI_SUCCESS && rc == DPPROF_OK) rc = dpprof__cupti_fail(r, "cuptiProfilerDeInitialize", DPPROF_ERR_CUDA);
    }
    std::free(s.avail);
    std::free(s.config);
    std::free(s.counter);
    std::free(s.names);
    std::memset(&s, 0, sizeof s);
    return rc;
}

// a fresh host object and a config image for the first n metrics; *passes: how many it needs
static int dpprof__cupti_config(size_t n, size_t *passes) {
    dpprof__cupti_state &s = dpprof__cupti;
    CUptiResult r;
    *passes = 0;
    if (s.host) { // ConfigAddMetrics accumulates: every attempt starts from a new host object
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params, p);
        p.pHostObject = s.host;
        s.host = nullptr;
        if ((r = cuptiProfilerHostDeinitialize(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerHostDeinitialize", DPPROF_ERR_CUDA);
    }
    std::free(s.config);
    s.config = nullptr;
    s.config_bytes = 0;
    {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params, p);
        p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        p.pChipName = s.chip;
        p.pCounterAvailabilityImage = s.avail;
        if ((r = cuptiProfilerHostInitialize(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerHostInitialize", DPPROF_ERR_UNSUPPORTED);
        s.host = p.pHostObject;
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, p);
        p.pHostObject = s.host;
        p.ppMetricNames = dpprof__cupti_metric;
        p.numMetrics = n;
        if ((r = cuptiProfilerHostConfigAddMetrics(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerHostConfigAddMetrics", DPPROF_ERR_UNSUPPORTED);
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, p);
        p.pHostObject = s.host;
        if ((r = cuptiProfilerHostGetConfigImageSize(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerHostGetConfigImageSize", DPPROF_ERR_UNSUPPORTED);
        if (!p.configImageSize) return dpprof__cupti_say(DPPROF_ERR_UNSUPPORTED, "cuptiProfilerHostGetConfigImageSize: an empty config image");
        if (!(s.config = (uint8_t *)std::calloc(1, p.configImageSize))) return dpprof__cupti_say(DPPROF_ERR_OOM, "no host memory for the config image");
        s.config_bytes = p.configImageSize;
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, p);
        p.pHostObject = s.host;
        p.configImageSize = s.config_bytes;
        p.pConfigImage = s.config;
        if ((r = cuptiProfilerHostGetConfigImage(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerHostGetConfigImage", DPPROF_ERR_UNSUPPORTED);
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params, p);
        p.configImageSize = s.config_bytes;
        p.pConfigImage = s.config;
        if ((r = cuptiProfilerHostGetNumOfPasses(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerHostGetNumOfPasses", DPPROF_ERR_UNSUPPORTED);
        *passes = p.numOfPasses;
    }
    s.n_metrics = n;
    return DPPROF_OK;
}

// everything begin does up to Start; on failure the caller tears down what was made
static int dpprof__cupti_setup(int max_ranges) {
    dpprof__cupti_state &s = dpprof__cupti;
    const int dev = dpprof__cu.device;
    CUptiResult r;
    int rc;
    // the runtime's primary context, current on this thread; nothing of the engine still running
    if ((rc = DPPROF_CU(cudaSetDevice(dev))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaFree(0))) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaDeviceSynchronize())) != DPPROF_OK) return rc;
    {
        typedef CUresult(CUDAAPI * ctx_get_fn)(CUcontext *);
        void *fn = nullptr;
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        if ((rc = DPPROF_CU(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q))) != DPPROF_OK) return rc;
        if (q != cudaDriverEntryPointSuccess || !fn) return dpprof__cupti_say(DPPROF_ERR_UNSUPPORTED, "the driver has no cuCtxGetCurrent entry point");
        CUresult cr = reinterpret_cast<ctx_get_fn>(fn)(&s.ctx);
        if (cr != CUDA_SUCCESS || !s.ctx) return dpprof__cupti_say(DPPROF_ERR_CUDA, "cuCtxGetCurrent: no current CUDA context after cudaSetDevice");
    }
    dpprof__cupti_preload();
    {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_Initialize_Params, p);
        if ((r = cuptiProfilerInitialize(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerInitialize", DPPROF_ERR_UNSUPPORTED);
        s.initialized = 1;
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params, p);
        p.cuDevice = (CUdevice)dev;
        p.api = CUPTI_PROFILER_RANGE_PROFILING;
        if ((r = cuptiProfilerDeviceSupported(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerDeviceSupported", DPPROF_ERR_UNSUPPORTED);
        if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
            dpprof_fail(0,
                        "counters: range profiling is %s on device %d (architecture %s, sli %s, vgpu %s, confidential compute %s, cmp %s, wsl %s)",
                        dpprof__cupti_level(p.isSupported), dev, dpprof__cupti_level(p.architecture), dpprof__cupti_level(p.sli), dpprof__cupti_level(p.vGpu),
                        dpprof__cupti_level(p.confidentialCompute), dpprof__cupti_level(p.cmp), dpprof__cupti_level(p.wsl));
            return DPPROF_ERR_UNSUPPORTED;
        }
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_Device_GetChipName_Params, p);
        p.deviceIndex = (size_t)dev;
        if ((r = cuptiDeviceGetChipName(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiDeviceGetChipName", DPPROF_ERR_UNSUPPORTED);
        if (!p.pChipName || std::strlen(p.pChipName) >= sizeof s.chip) return dpprof__cupti_say(DPPROF_ERR_UNSUPPORTED, "cuptiDeviceGetChipName: no usable chip name");
        std::memcpy(s.chip, p.pChipName, std::strlen(p.pChipName) + 1);
    }
    { // which counters this context may read (filters out what MIG, vGPU, ... hide); before Enable
        DPPROF__CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params, p);
        p.ctx = s.ctx;
        if ((r = cuptiProfilerGetCounterAvailability(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerGetCounterAvailability (size)", DPPROF_ERR_UNSUPPORTED);
        if (!p.counterAvailabilityImageSize) return dpprof__cupti_say(DPPROF_ERR_UNSUPPORTED, "cuptiProfilerGetCounterAvailability: an empty image");
        if (!(s.avail = (uint8_t *)std::calloc(1, p.counterAvailabilityImageSize))) return dpprof__cupti_say(DPPROF_ERR_OOM, "no host memory for the counter availability image");
        s.avail_bytes = p.counterAvailabilityImageSize;
        p.pCounterAvailabilityImage = s.avail;
        if ((r = cuptiProfilerGetCounterAvailability(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerGetCounterAvailability", DPPROF_ERR_UNSUPPORTED);
    }
    { // dram + l2 in one pass, else dram alone in one pass, else nothing
        size_t passes = 0;
        rc = dpprof__cupti_config(4, &passes);
        s.l2 = rc == DPPROF_OK && passes == 1;
        if (!s.l2) {
            if (rc == DPPROF_ERR_OOM) return rc;
            if ((rc = dpprof__cupti_config(2, &passes)) != DPPROF_OK) return rc;
            if (passes != 1) {
                dpprof_fail(0,
                            "counters: dram__bytes_read.sum and dram__bytes_write.sum need %zu passes on %s; the engine's work runs once (one pass only)", passes, s.chip);
                return DPPROF_ERR_UNSUPPORTED;
            }
        }
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params, p);
        p.ctx = s.ctx;
        if ((r = cuptiRangeProfilerEnable(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerEnable", DPPROF_ERR_UNSUPPORTED);
        s.obj = p.pRangeProfilerObject;
        if (!s.obj) return dpprof__cupti_say(DPPROF_ERR_UNSUPPORTED, "cuptiRangeProfilerEnable returned no profiler object");
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params, p);
        p.pRangeProfilerObject = s.obj;
        p.pMetricNames = dpprof__cupti_metric;
        p.numMetrics = s.n_metrics;
        p.maxNumOfRanges = (size_t)max_ranges;
        p.maxNumRangeTreeNodes = (uint32_t)max_ranges; // every range name is unique: one tree node each
        if ((r = cuptiRangeProfilerGetCounterDataSize(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerGetCounterDataSize", DPPROF_ERR_UNSUPPORTED);
        if (!p.counterDataSize) return dpprof__cupti_say(DPPROF_ERR_UNSUPPORTED, "cuptiRangeProfilerGetCounterDataSize: an empty image");
        if (!(s.counter = (uint8_t *)std::calloc(1, p.counterDataSize))) return dpprof__cupti_say(DPPROF_ERR_OOM, "no host memory for the counter data image");
        s.counter_bytes = p.counterDataSize;
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params, p);
        p.pRangeProfilerObject = s.obj;
        p.counterDataSize = s.counter_bytes;
        p.pCounterData = s.counter;
        if ((r = cuptiRangeProfilerCounterDataImageInitialize(&p)) != CUPTI_SUCCESS)
            return dpprof__cupti_fail(r, "cuptiRangeProfilerCounterDataImageInitialize", DPPROF_ERR_UNSUPPORTED);
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params, p);
        p.pRangeProfilerObject = s.obj;
        p.configSize = s.config_bytes;
        p.pConfig = s.config;
        p.counterDataImageSize = s.counter_bytes;
        p.pCounterDataImage = s.counter;
        p.range = CUPTI_UserRange;       // ranges are what push/pop bracket, any number of launches each
        p.replayMode = CUPTI_UserReplay; // we never replay: the config is single-pass (checked above)
        p.maxRangesPerPass = (size_t)max_ranges;
        p.numNestingLevels = 1;
        p.minNestingLevel = 1;
        p.passIndex = 0;
        p.targetNestingLevel = 1;
        if ((r = cuptiRangeProfilerSetConfig(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerSetConfig", DPPROF_ERR_UNSUPPORTED);
    }
    if (!(s.names = (char(*)[DPPROF__CUPTI_NAME])std::calloc((size_t)max_ranges, DPPROF__CUPTI_NAME)))
        return dpprof__cupti_say(DPPROF_ERR_OOM, "no host memory for the range names");
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params, p);
        p.pRangeProfilerObject = s.obj;
        if ((r = cuptiRangeProfilerStart(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerStart", DPPROF_ERR_UNSUPPORTED);
        s.started = 1;
    }
    s.max = max_ranges;
    s.active = 1;
    return DPPROF_OK;
}

extern "C" int dpprof_cuda_counters_begin(int max_ranges) {
    int rc;
    if (dpprof__cupti.active) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_begin: a collection is already running (one at a time)");
    if (max_ranges <= 0 || max_ranges > (1 << 20)) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_begin: max_ranges must be 1..2^20");
    if (!dpprof__cu.ready) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_begin: dpprof_cuda_init was not called");
    if ((rc = dpprof__cupti_setup(max_ranges)) != DPPROF_OK) return dpprof__cupti_teardown(rc);
    return DPPROF_OK;
}

extern "C" int dpprof_cuda_counters_push(const char *name) {
    dpprof__cupti_state &s = dpprof__cupti;
    char tag[DPPROF__CUPTI_NAME + 16];
    size_t len;
    CUptiResult r;
    int rc;
    if (!s.active) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_push: no collection running (dpprof_cuda_counters_begin)");
    if (!name) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_push: NULL name");
    if (s.open) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_push: a range is open (ranges do not nest: pop it first)");
    if (s.n >= s.max) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_push: more ranges than max_ranges");
    // the previous work ends before the range starts
    if ((rc = DPPROF_CU(cudaDeviceSynchronize())) != DPPROF_OK) return rc;
    len = strnlen(name, DPPROF__CUPTI_NAME - 1);
    std::memcpy(s.names[s.n], name, len);
    s.names[s.n][len] = 0;
    // the index makes every range name unique (CUPTI keys counter data by range name) and maps the
    // decoded ranges back to push order
    std::snprintf(tag, sizeof tag, "%d:%s", s.n, s.names[s.n]);
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params, p);
        p.pRangeProfilerObject = s.obj;
        p.pRangeName = tag;
        if ((r = cuptiRangeProfilerPushRange(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerPushRange", DPPROF_ERR_CUDA);
    }
    s.open = 1;
    s.n++;
    // the range's start is in place before its work is queued
    return DPPROF_CU(cudaDeviceSynchronize());
}

extern "C" int dpprof_cuda_counters_pop(void) {
    dpprof__cupti_state &s = dpprof__cupti;
    CUptiResult r;
    int rc;
    if (!s.active) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_pop: no collection running (dpprof_cuda_counters_begin)");
    if (!s.open) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_pop: no range is open");
    // the range's work ends before the range does
    if ((rc = DPPROF_CU(cudaDeviceSynchronize())) != DPPROF_OK) return rc;
    s.open = 0;
    DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params, p);
    p.pRangeProfilerObject = s.obj;
    if ((r = cuptiRangeProfilerPopRange(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerPopRange", DPPROF_ERR_CUDA);
    return DPPROF_OK;
}

// stop, decode and evaluate into out[0 .. min(pushed, max)); ranges not decoded stay at -1
static int dpprof__cupti_collect(dpprof_counter_range *out, int max, int *n) {
    dpprof__cupti_state &s = dpprof__cupti;
    const int count = s.n < max ? s.n : max;
    size_t total = 0, i;
    CUptiResult r;
    int rc, k;
    if (s.open && (rc = dpprof_cuda_counters_pop()) != DPPROF_OK) return rc;
    if ((rc = DPPROF_CU(cudaDeviceSynchronize())) != DPPROF_OK) return rc;
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params, p);
        p.pRangeProfilerObject = s.obj;
        r = cuptiRangeProfilerStop(&p);
        s.started = 0;
        if (r != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerStop", DPPROF_ERR_CUDA);
        if (!p.isAllPassSubmitted)
            return dpprof__cupti_say(DPPROF_ERR_UNSUPPORTED, "cuptiRangeProfilerStop: the config needs another pass (user replay), which the engine cannot run");
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params, p);
        p.pRangeProfilerObject = s.obj;
        if ((r = cuptiRangeProfilerDecodeData(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerDecodeData", DPPROF_ERR_CUDA);
    }
    {
        DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params, p);
        p.pCounterDataImage = s.counter;
        p.counterDataImageSize = s.counter_bytes;
        if ((r = cuptiRangeProfilerGetCounterDataInfo(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiRangeProfilerGetCounterDataInfo", DPPROF_ERR_CUDA);
        total = p.numTotalRanges;
    }
    for (k = 0; k < count; k++) {
        std::memcpy(out[k].name, s.names[k], DPPROF__CUPTI_NAME);
        out[k].dram_read = out[k].dram_write = out[k].l2_read = out[k].l2_write = -1.0;
    }
    *n = count;
    for (i = 0; i < total; i++) {
        const char *tag = nullptr;
        char *end = nullptr;
        double v[4] = {-1.0, -1.0, -1.0, -1.0};
        long idx;
        {
            DPPROF__CUPTI_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params, p);
            p.pCounterDataImage = s.counter;
            p.counterDataImageSize = s.counter_bytes;
            p.rangeIndex = i;
            p.rangeDelimiter = "/";
            if ((r = cuptiRangeProfilerCounterDataGetRangeInfo(&p)) != CUPTI_SUCCESS)
                return dpprof__cupti_fail(r, "cuptiRangeProfilerCounterDataGetRangeInfo", DPPROF_ERR_CUDA);
            tag = p.rangeName; // CUPTI's string (not documented as ours to free)
        }
        if (!tag) continue;
        if (std::strrchr(tag, '/')) tag = std::strrchr(tag, '/') + 1; // one level only, but tolerate a "parent/" prefix
        idx = std::strtol(tag, &end, 10);
        if (end == tag || *end != ':' || idx < 0 || idx >= count) continue; // not one of ours, or beyond max
        {
            DPPROF__CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, p);
            p.pHostObject = s.host;
            p.pCounterDataImage = s.counter;
            p.counterDataImageSize = s.counter_bytes;
            p.rangeIndex = i;
            p.ppMetricNames = dpprof__cupti_metric;
            p.numMetrics = s.n_metrics;
            p.pMetricValues = v;
            if ((r = cuptiProfilerHostEvaluateToGpuValues(&p)) != CUPTI_SUCCESS) return dpprof__cupti_fail(r, "cuptiProfilerHostEvaluateToGpuValues", DPPROF_ERR_CUDA);
        }
        out[idx].dram_read = v[0];
        out[idx].dram_write = v[1];
        if (s.l2) { // l2 sectors are 32 bytes
            out[idx].l2_read = 32.0 * v[2];
            out[idx].l2_write = 32.0 * v[3];
        }
    }
    return DPPROF_OK;
}

extern "C" int dpprof_cuda_counters_end(dpprof_counter_range *out, int max, int *n) {
    int rc, got = 0;
    if (n) *n = 0;
    if (!dpprof__cupti.active) return dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_end: no collection running (dpprof_cuda_counters_begin)");
    if (max < 0 || (max > 0 && !out)) rc = dpprof__cupti_say(DPPROF_ERR_INVALID, "dpprof_cuda_counters_end: NULL out or negative max");
    else rc = dpprof__cupti_collect(out, max, &got);
    rc = dpprof__cupti_teardown(rc);
    if (n) *n = rc == DPPROF_OK ? got : 0;
    return rc;
}

#else // DPPROF_CUEMU: no counters on the cpu emulator, unless CUEMU_COUNTERS=1 asks for its stand-in
// the stand-in (tests of what carries counter values, never a measurement): a range's "dram" and "l2" bytes are
// the bytes the emulator's copies, memsets and cuBLAS calls read and wrote inside it (cuemu::bytes_read and
// bytes_written; kernels are not counted), with the real profiler's rules: begin with a capacity, ranges not
// nested, one push a pop, no more ranges than the capacity, end returns them in order
static struct {
    int active, open, n, max;
    unsigned long long r0, w0;
    dpprof_counter_range *out;
} dpprof__emu_ctr;
static int dpprof__cupti_emu(void) {
    dpprof_fail(0, "counters need a real GPU (cpu emulation; CUEMU_COUNTERS=1 gives a stand-in that counts the bytes of copies, memsets and cuBLAS calls)");
    return DPPROF_ERR_UNSUPPORTED;
}
static int dpprof__emu_ctr_fail(const char *why) {
    dpprof_fail(0, "emulated counters: %s", why);
    return DPPROF_ERR_INVALID;
}
extern "C" int dpprof_cuda_counters_begin(int max_ranges) {
    const char *on = std::getenv("CUEMU_COUNTERS");
    if (!on || std::strcmp(on, "1")) return dpprof__cupti_emu();
    if (dpprof__emu_ctr.active || max_ranges < 1) return dpprof__emu_ctr_fail(dpprof__emu_ctr.active ? "a collection is active" : "max_ranges < 1");
    dpprof__emu_ctr.out = (dpprof_counter_range *)std::calloc((size_t)max_ranges, sizeof *dpprof__emu_ctr.out);
    if (!dpprof__emu_ctr.out) return DPPROF_ERR_OOM;
    dpprof__emu_ctr.active = 1;
    dpprof__emu_ctr.open = dpprof__emu_ctr.n = 0;
    dpprof__emu_ctr.max = max_ranges;
    return DPPROF_OK;
}
extern "C" int dpprof_cuda_counters_push(const char *name) {
    if (!dpprof__emu_ctr.active || dpprof__emu_ctr.open || dpprof__emu_ctr.n == dpprof__emu_ctr.max)
        return dpprof__emu_ctr_fail(!dpprof__emu_ctr.active ? "push without begin" : (dpprof__emu_ctr.open ? "ranges are not nested" : "more ranges than max_ranges"));
    dpprof_counter_range *r = &dpprof__emu_ctr.out[dpprof__emu_ctr.n];
    std::snprintf(r->name, sizeof r->name, "%s", name ? name : "");
    dpprof__emu_ctr.r0 = cuemu::bytes_read;
    dpprof__emu_ctr.w0 = cuemu::bytes_written;
    dpprof__emu_ctr.open = 1;
    return DPPROF_OK;
}
extern "C" int dpprof_cuda_counters_pop(void) {
    if (!dpprof__emu_ctr.open) return dpprof__emu_ctr_fail("pop without push");
    dpprof_counter_range *r = &dpprof__emu_ctr.out[dpprof__emu_ctr.n++];
    r->dram_read = r->l2_read = (double)(cuemu::bytes_read - dpprof__emu_ctr.r0);
    r->dram_write = r->l2_write = (double)(cuemu::bytes_written - dpprof__emu_ctr.w0);
    dpprof__emu_ctr.open = 0;
    return DPPROF_OK;
}
extern "C" int dpprof_cuda_counters_end(dpprof_counter_range *out, int max, int *n) {
    int got = 0, rc = DPPROF_OK;
    if (!dpprof__emu_ctr.active) rc = dpprof__cupti_emu();
    else if (dpprof__emu_ctr.open) rc = dpprof__emu_ctr_fail("a range is open at the end");
    else
        for (; got < dpprof__emu_ctr.n && got < max; got++) out[got] = dpprof__emu_ctr.out[got];
    std::free(dpprof__emu_ctr.out);
    dpprof__emu_ctr.out = nullptr;
    dpprof__emu_ctr.active = dpprof__emu_ctr.open = dpprof__emu_ctr.n = 0;
    if (n) *n = rc == DPPROF_OK ? got : 0;
    return rc;
}
#endif

// ==== collectives between ranks: NCCL (one process a rank, one GPU a process) =========================
// built with -DDPPROF_NCCL (the Makefile adds it where nccl.h is); the engine bootstraps the communicator over
// MPI (rank 0's id broadcast) and queues every collective on the stream of the kernels, so each follows the ops
// that wrote its tensor and precedes those that read it. a tensor of n elements is cut as the engine cuts it:
// rank r's part is [r c, r c + len), c = ceil(n / ranks) (dpprof__dist_part_of). where the buffer holds ranks
// x c elements (padded: the zero 2 and 3 gradients, the zero 3 gathered weights) the part collectives are
// ncclReduceScatter and ncclAllGather in place; elsewhere (a tensor of exactly n elements) one ncclReduce or
// ncclBroadcast per part, in a group. the emulator (tests/cuemu.h) runs the same calls over MPI
#ifdef DPPROF_NCCL
#ifndef DPPROF_CUEMU
#include <nccl.h>
#endif
static_assert(sizeof(ncclUniqueId) == DPPROF_NCCL_ID_BYTES, "DPPROF_NCCL_ID_BYTES is NCCL's id size");
static struct {
    ncclComm_t comm;
    int ranks, rank;
    long long dev_bytes; // the device memory the communicator's creation took (-1: not measured)
} dpprof__nccl;

static int dpprof__nccl_fail(const char *what, ncclResult_t r) {
    dpprof__cu_fail(DPPROF_ERR_CUDA, "%s: NCCL: %s", what, ncclGetErrorString(r));
    return DPPROF_ERR_CUDA;
}
extern "C" int dpprof_nccl_available(void) { return 1; }
extern "C" int dpprof_nccl_id(void *id, size_t bytes) {
    ncclUniqueId u;
    ncclResult_t r;
    if (!id || bytes != sizeof u) {
        dpprof_fail(0, "dpprof_nccl_id: the id takes %zu bytes (DPPROF_NCCL_ID_BYTES), not %zu", sizeof u, bytes);
        return DPPROF_ERR_INVALID;
    }
    if ((r = ncclGetUniqueId(&u)) != ncclSuccess) {
        dpprof_fail(0, "ncclGetUniqueId: %s", ncclGetErrorString(r));
        return DPPROF_ERR_CUDA;
    }
    std::memcpy(id, &u, sizeof u);
    return DPPROF_OK;
}
extern "C" int dpprof_nccl_init(const void *id, int ranks, int rank) {
    ncclUniqueId u;
    ncclResult_t r;
    if (!dpprof__cu.ready || !id || ranks < 1 || rank < 0 || rank >= ranks || dpprof__nccl.comm) {
        dpprof_fail(0, "dpprof_nccl_init(ranks %d, rank %d): %s", ranks, rank,
                    !dpprof__cu.ready ? "dpprof_cuda_init was not called" : (dpprof__nccl.comm ? "a communicator is open (dpprof_nccl_finish first)" : "bad arguments"));
        return DPPROF_ERR_INVALID;
    }
    std::memcpy(&u, id, sizeof u);
    // NCCL's own buffers (each channel's connections to its peers, per protocol) are device memory outside the
    // accountant. NCCL makes a connection where a collective first needs it unless NCCL_RUNTIME_CONNECT=0, which
    // makes every one at creation: set here unless the user set it, so the free memory before and after creation
    // measures them all (to the driver's granularity; the GPU is this rank's alone). a user's setting other than 0
    // is kept, and then nothing is measured
    if (!std::getenv("NCCL_RUNTIME_CONNECT")) setenv("NCCL_RUNTIME_CONNECT", "0", 0);
    const char *connect = std::getenv("NCCL_RUNTIME_CONNECT");
    size_t fr0 = 0, fr1 = 0, tot = 0;
    const int measured = connect && !std::strcmp(connect, "0") && cudaDeviceSynchronize() == cudaSuccess && cudaMemGetInfo(&fr0, &tot) == cudaSuccess;
    if ((r = ncclCommInitRank(&dpprof__nccl.comm, ranks, u, rank)) != ncclSuccess) {
        dpprof__nccl.comm = nullptr;
        dpprof_fail(0, "ncclCommInitRank(%d ranks, rank %d): %s", ranks, rank, ncclGetErrorString(r));
        return DPPROF_ERR_CUDA;
    }
    dpprof__nccl.dev_bytes = measured && cudaDeviceSynchronize() == cudaSuccess && cudaMemGetInfo(&fr1, &tot) == cudaSuccess ? (fr0 > fr1 ? (long long)(fr0 - fr1) : 0) : -1;
    dpprof__nccl.ranks = ranks;
    dpprof__nccl.rank = rank;
    return DPPROF_OK;
}
extern "C" int dpprof_nccl_device_bytes(int64_t *bytes) {
    if (bytes) *bytes = dpprof__nccl.comm ? (int64_t)dpprof__nccl.dev_bytes : -1;
    return dpprof__nccl.comm && dpprof__nccl.dev_bytes >= 0 ? DPPROF_OK : DPPROF_ERR_INVALID;
}
extern "C" void dpprof_nccl_finish(void) {
    if (!dpprof__nccl.comm) return;
    if (dpprof__cu.ready) cudaStreamSynchronize(dpprof__cu.stream); // nothing of the communicator's still queued
    ncclCommDestroy(dpprof__nccl.comm);
    dpprof__nccl.comm = nullptr;
    dpprof__nccl.ranks = dpprof__nccl.rank = 0;
}
// a collective may be queued: the communicator is open and nothing failed before
static int dpprof__nccl_ready(const char *what) {
    if (dpprof__cu.err) return 0;
    if (!dpprof__nccl.comm) {
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", what, "no communicator (dpprof_nccl_init)");
        return 0;
    }
    dpprof__cu.work++;
    return 1;
}
extern "C" void dpprof_nccl_allreduce(float *x, size_t n) {
    ncclResult_t r;
    if (!n || !dpprof__nccl_ready("dpprof_nccl_allreduce")) return;
    if ((r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, dpprof__nccl.comm, dpprof__cu.stream)) != ncclSuccess) dpprof__nccl_fail("ncclAllReduce", r);
}
// one reduce (to its rank) or broadcast (from its rank) per rank's part of x, in a group: the collectives of a
// tensor whose buffer has no room for ranks equal parts
static void dpprof__nccl_parts(float *x, size_t n, size_t c, int reduce) {
    ncclResult_t r = ncclGroupStart();
    for (size_t q = 0; q < (size_t)dpprof__nccl.ranks && r == ncclSuccess; q++) {
        const size_t lo = q * c < n ? q * c : n, len = n - lo < c ? n - lo : c;
        if (!len) continue;
        r = reduce ? ncclReduce(x + lo, x + lo, len, ncclFloat, ncclSum, (int)q, dpprof__nccl.comm, dpprof__cu.stream)
                   : ncclBroadcast(x + lo, x + lo, len, ncclFloat, (int)q, dpprof__nccl.comm, dpprof__cu.stream);
    }
    if (r != ncclSuccess) dpprof__nccl_fail(reduce ? "ncclReduce" : "ncclBroadcast", r);
    if ((r = ncclGroupEnd()) != ncclSuccess) dpprof__nccl_fail("ncclGroupEnd", r);
}
extern "C" void dpprof_nccl_reduce_scatter(float *x, size_t n, size_t cap) {
    const size_t N = (size_t)dpprof__nccl.ranks, c = N ? (n + N - 1) / N : 0;
    ncclResult_t r;
    if (!n || !dpprof__nccl_ready("dpprof_nccl_reduce_scatter")) return;
    if (cap < N * c) dpprof__nccl_parts(x, n, c, 1);
    else if ((r = ncclReduceScatter(x, x + (size_t)dpprof__nccl.rank * c, c, ncclFloat, ncclSum, dpprof__nccl.comm, dpprof__cu.stream)) != ncclSuccess)
        dpprof__nccl_fail("ncclReduceScatter", r);
}
extern "C" void dpprof_nccl_allgather(float *x, size_t n, size_t cap) {
    const size_t N = (size_t)dpprof__nccl.ranks, c = N ? (n + N - 1) / N : 0;
    ncclResult_t r;
    if (!n || !dpprof__nccl_ready("dpprof_nccl_allgather")) return;
    if (cap < N * c) dpprof__nccl_parts(x, n, c, 0);
    else if ((r = ncclAllGather(x + (size_t)dpprof__nccl.rank * c, x, c, ncclFloat, dpprof__nccl.comm, dpprof__cu.stream)) != ncclSuccess)
        dpprof__nccl_fail("ncclAllGather", r);
}
// a bf16 working copy (zero 3 under --dtype bf16), always into a padded buffer: ncclAllGather in place
extern "C" void dpprof_nccl_allgather_bf16(dpprof_bf16 *x, size_t n, size_t cap) {
    const size_t N = (size_t)dpprof__nccl.ranks, c = N ? (n + N - 1) / N : 0;
    ncclResult_t r;
    if (!n || !dpprof__nccl_ready("dpprof_nccl_allgather_bf16")) return;
    if (cap < N * c) dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", "dpprof_nccl_allgather_bf16", "the buffer is not padded to ranks equal parts");
    else if ((r = ncclAllGather(x + (size_t)dpprof__nccl.rank * c, x, c, ncclBfloat16, dpprof__nccl.comm, dpprof__cu.stream)) != ncclSuccess)
        dpprof__nccl_fail("ncclAllGather", r);
}
#else // built without NCCL: the entry points say so
static int dpprof__nccl_none(void) {
    dpprof_fail(0, "this build has no NCCL (nccl.h was not found when dpprof_kernels.cu was compiled)");
    return DPPROF_ERR_UNSUPPORTED;
}
extern "C" int dpprof_nccl_available(void) { return 0; }
extern "C" int dpprof_nccl_id(void *id, size_t bytes) {
    (void)id;
    (void)bytes;
    return dpprof__nccl_none();
}
extern "C" int dpprof_nccl_init(const void *id, int ranks, int rank) {
    (void)id;
    (void)ranks;
    (void)rank;
    return dpprof__nccl_none();
}
extern "C" void dpprof_nccl_finish(void) {}
extern "C" int dpprof_nccl_device_bytes(int64_t *bytes) {
    if (bytes) *bytes = -1;
    return dpprof__nccl_none();
}
extern "C" void dpprof_nccl_allreduce(float *x, size_t n) {
    (void)x;
    if (n) dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", "dpprof_nccl_allreduce", "this build has no NCCL");
}
extern "C" void dpprof_nccl_reduce_scatter(float *x, size_t n, size_t cap) {
    (void)x;
    (void)cap;
    if (n) dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", "dpprof_nccl_reduce_scatter", "this build has no NCCL");
}
extern "C" void dpprof_nccl_allgather(float *x, size_t n, size_t cap) {
    (void)x;
    (void)cap;
    if (n) dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", "dpprof_nccl_allgather", "this build has no NCCL");
}
extern "C" void dpprof_nccl_allgather_bf16(dpprof_bf16 *x, size_t n, size_t cap) {
    (void)x;
    (void)cap;
    if (n) dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", "dpprof_nccl_allgather_bf16", "this build has no NCCL");
}
#endif

// ==== cuDNN's fused flash attention (DPPROF_CUDNN) ================================================
// the causal GQA attention of dpprof_attention_{fwd,bwd}_gpu on cuDNN's fused flash attention, through its C++
// frontend's graph API (the frontend is header-only: nvidia-cudnn-frontend on PyPI; cuDNN 9 itself beside CUDA or
// in the nvidia-cudnn Python package). bf16 q, k, v, out, dout, dq, dk, dv in dpprof's (B, T, heads, HS) layout
// (cuDNN's BSHD strides), the fp32 log-sum-exp (B, NH, T) as cuDNN's softmax stats. plans are built once a
// shape, on the kernels' stream; cuDNN's workspace is the caller's (the engine charges it to the accountant).
#ifndef __CUDA_ARCH__ // host code: the device passes skip it
// a shape dpprof's attention takes, else DPPROF_ERR_INVALID naming the rule (before anything else, with or without cuDNN)
static int dpprof__cudnn_shape(const char *what, int B, int T, int NH, int NKV, int HS) {
    if (B > 0 && T > 0 && NH > 0 && HS > 0 && NKV > 0 && NH % NKV == 0 && HS <= DPPROF_MAX_HEAD_SIZE) return DPPROF_OK;
    dpprof_fail(0, "%s: bad shape (B, T, NH, HS >= 1, NKV dividing NH, HS <= %d)", what, DPPROF_MAX_HEAD_SIZE);
    return DPPROF_ERR_INVALID;
}
#if defined(DPPROF_CUDNN) && !defined(DPPROF_CUEMU)
namespace dpprof__dnn {
namespace fe = cudnn_frontend;
enum : int64_t {
    Q = 1,
    K,
    V,
    O,
    STATS,
    DO,
    DQ,
    DK,
    DV
};
struct plan {
    int B, T, NH, NKV, HS;
    std::shared_ptr<fe::graph::Graph> fwd, bwd;
    int64_t ws_fwd, ws_bwd;
    bool deterministic; // the backward gives the same bits every run (dpprof's own kernels do)
    std::string why;    // empty: both plans built
};
static cudnnHandle_t handle;
static std::vector<plan> *plans; // never freed: graphs outlive no handle (the process ends with them)

static std::shared_ptr<fe::graph::Graph> graph() {
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::BFLOAT16).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
    return g;
}
// (B, heads, T, HS) over dpprof's (B, T, heads, HS) storage
static std::shared_ptr<fe::graph::Tensor_attributes> bshd(const std::shared_ptr<fe::graph::Graph> &g, const char *name, int64_t uid, int64_t B, int64_t H, int64_t T, int64_t HS) {
    return g->tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim({B, H, T, HS}).set_stride({T * H * HS, HS, H * HS, 1}));
}
static void out_bshd(const std::shared_ptr<fe::graph::Tensor_attributes> &t, int64_t uid, int64_t B, int64_t H, int64_t T, int64_t HS) {
    t->set_output(true).set_uid(uid).set_dim({B, H, T, HS}).set_stride({T * H * HS, HS, H * HS, 1}).set_data_type(fe::DataType_t::BFLOAT16);
}
// det: the backward's deterministic algorithm (no atomics in dq's sums: the same bits every run), else cuDNN's default
static std::string build(plan &p, bool det) {
    const int64_t B = p.B, T = p.T, NH = p.NH, NKV = p.NKV, HS = p.HS;
    const float scale = (float)(1.0 / std::sqrt((double)HS));
    const std::vector<int64_t> sdim = {B, NH, T, 1}, sstride = {NH * T, T, 1, 1};
    auto f = graph();
    auto q = bshd(f, "q", Q, B, NH, T, HS), k = bshd(f, "k", K, B, NKV, T, HS), v = bshd(f, "v", V, B, NKV, T, HS);
    auto fo = f->sdpa(q, k, v, fe::graph::SDPA_attributes().set_name("attention").set_generate_stats(true).set_causal_mask(true).set_attn_scale(scale));
    out_bshd(fo[0], O, B, NH, T, HS);
    fo[1]->set_output(true).set_uid(STATS).set_data_type(fe::DataType_t::FLOAT).set_dim(sdim).set_stride(sstride);
    if (fe::error_t e = f->build(handle, {fe::HeurMode_t::A}); e.is_bad()) return "the forward: " + e.get_message();
    if (fe::error_t e = f->get_workspace_size(p.ws_fwd); e.is_bad()) return "the forward's workspace: " + e.get_message();
    auto b = graph();
    auto bq = bshd(b, "q", Q, B, NH, T, HS), bk = bshd(b, "k", K, B, NKV, T, HS), bv = bshd(b, "v", V, B, NKV, T, HS);
    auto bo = bshd(b, "out", O, B, NH, T, HS), bdo = bshd(b, "dout", DO, B, NH, T, HS);
    auto st = b->tensor(fe::graph::Tensor_attributes().set_name("lse").set_uid(STATS).set_dim(sdim).set_stride(sstride).set_data_type(fe::DataType_t::FLOAT));
    auto g = b->sdpa_backward(bq, bk, bv, bo, bdo, st,
                              fe::graph::SDPA_backward_attributes().set_name("attention_backward").set_causal_mask(true).set_attn_scale(scale).set_deterministic_algorithm(det));
    out_bshd(g[0], DQ, B, NH, T, HS);
    out_bshd(g[1], DK, B, NKV, T, HS);
    out_bshd(g[2], DV, B, NKV, T, HS);
    if (fe::error_t e = b->build(handle, {fe::HeurMode_t::A}); e.is_bad()) return "the backward: " + e.get_message();
    if (fe::error_t e = b->get_workspace_size(p.ws_bwd); e.is_bad()) return "the backward's workspace: " + e.get_message();
    p.fwd = f;
    p.bwd = b;
    p.deterministic = det;
    return "";
}
// the plan of a shape, built at its first use (a failure is kept too, and said again); nullptr: no handle
static plan *find(int B, int T, int NH, int NKV, int HS) {
    if (!plans) plans = new std::vector<plan>();
    for (plan &p : *plans)
        if (p.B == B && p.T == T && p.NH == NH && p.NKV == NKV && p.HS == HS) return &p;
    plan p{B, T, NH, NKV, HS, nullptr, nullptr, 0, 0, false, ""};
    try { // the deterministic backward where cuDNN has one for the shape, else its default (said by the plan)
        p.why = build(p, true);
        if (!p.why.empty()) {
            const std::string det = p.why;
            p.why = build(p, false);
            if (!p.why.empty()) p.why = det;
        }
    } catch (const std::exception &x) {
        p.why = std::string("cuDNN's frontend: ") + x.what();
    }
    plans->push_back(p);
    return &plans->back();
}
static int open_handle(const char *what) {
    cudnnStatus_t st;
    if (handle) return DPPROF_OK;
    if (!dpprof__cu.ready) {
        dpprof_fail(0, "%s: dpprof_cuda_init was not called", what);
        return DPPROF_ERR_INVALID;
    }
    if ((st = cudnnCreate(&handle)) != CUDNN_STATUS_SUCCESS || (st = cudnnSetStream(handle, dpprof__cu.stream)) != CUDNN_STATUS_SUCCESS) {
        dpprof_fail(0, "%s: cuDNN: %s", what, cudnnGetErrorString(st));
        if (handle) cudnnDestroy(handle);
        handle = nullptr;
        return DPPROF_ERR_UNSUPPORTED;
    }
    return DPPROF_OK;
}
static void run(const char *what, const std::shared_ptr<fe::graph::Graph> &g, std::unordered_map<int64_t, void *> &pack, void *ws) {
    dpprof__cu.work++;
    try {
        fe::error_t e = g->execute(handle, pack, ws);
        if (e.is_bad()) dpprof__cu_fail(DPPROF_ERR_CUDA, "%s: cuDNN: %s", what, e.get_message().c_str());
    } catch (const std::exception &x) {
        dpprof__cu_fail(DPPROF_ERR_CUDA, "%s: cuDNN's frontend: %s", what, x.what());
    }
}
// the plan for a call, or nullptr with the queue's error set
static plan *ready(const char *what, int B, int T, int NH, int NKV, int HS, size_t ws_bytes, int bwd) {
    char detail[480];
    if (dpprof__cu.err) return nullptr;
    if (!dpprof__cu.bf16) {
        dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", what, "cuDNN's attention takes bf16 storage (dpprof_cuda_set_storage)");
        return nullptr;
    }
    if (open_handle(what) != DPPROF_OK) {
        dpprof__cu.err = DPPROF_ERR_UNSUPPORTED;
        return nullptr;
    }
    plan *p = find(B, T, NH, NKV, HS);
    if (!p->why.empty()) {
        dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", what, p->why.c_str());
        return nullptr;
    }
    const int64_t need = bwd ? p->ws_bwd : p->ws_fwd;
    if ((int64_t)ws_bytes < need) {
        std::snprintf(detail, sizeof detail, "cuDNN's plan needs a workspace of %lld bytes, got %zu", (long long)need, ws_bytes);
        dpprof__cu_fail(DPPROF_ERR_INVALID, "%s: %s", what, detail);
        return nullptr;
    }
    return p;
}
} // namespace dpprof__dnn

extern "C" int dpprof_cudnn_available(void) { return (int)cudnnGetVersion(); }

extern "C" int dpprof_cudnn_attention_plan(int B, int T, int NH, int NKV, int HS, size_t *ws, int *deterministic) {
    const char *what = "dpprof_cudnn_attention_plan";
    int rc;
    if (ws) *ws = 0;
    if (deterministic) *deterministic = 0;
    if ((rc = dpprof__cudnn_shape(what, B, T, NH, NKV, HS)) != DPPROF_OK) return rc;
    if ((rc = dpprof__dnn::open_handle(what)) != DPPROF_OK) return rc;
    dpprof__dnn::plan *p = dpprof__dnn::find(B, T, NH, NKV, HS);
    if (!p->why.empty()) {
        dpprof_fail(0, "%s: %s", what, p->why.c_str());
        return DPPROF_ERR_UNSUPPORTED;
    }
    if (ws) *ws = (size_t)(p->ws_fwd > p->ws_bwd ? p->ws_fwd : p->ws_bwd);
    if (deterministic) *deterministic = p->deterministic;
    return DPPROF_OK;
}

extern "C" void dpprof_cudnn_attention_fwd_gpu(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS, void *ws, size_t ws_bytes) {
    const char *what = "dpprof_cudnn_attention_fwd_gpu";
    if (dpprof__attn_shape(what, B, T, NH, NKV, HS) <= 0) return;
    dpprof__dnn::plan *p = dpprof__dnn::ready(what, B, T, NH, NKV, HS, ws_bytes, 0);
    if (!p) return;
    std::unordered_map<int64_t, void *> pack = {{dpprof__dnn::Q, (void *)q}, {dpprof__dnn::K, (void *)k}, {dpprof__dnn::V, (void *)v}, {dpprof__dnn::O, (void *)out}, {dpprof__dnn::STATS, (void *)lse}};
    dpprof__dnn::run(what, p->fwd, pack, ws);
}

extern "C" void dpprof_cudnn_attention_bwd_gpu(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS, void *ws, size_t ws_bytes) {
    const char *what = "dpprof_cudnn_attention_bwd_gpu";
    if (dpprof__attn_shape(what, B, T, NH, NKV, HS) <= 0) return;
    dpprof__dnn::plan *p = dpprof__dnn::ready(what, B, T, NH, NKV, HS, ws_bytes, 1);
    if (!p) return;
    // clang-format off
    std::unordered_map<int64_t, void *> pack = {{dpprof__dnn::Q, (void *)q},     {dpprof__dnn::K, (void *)k},         {dpprof__dnn::V, (void *)v},
                                                {dpprof__dnn::O, (void *)out},   {dpprof__dnn::STATS, (void *)lse},   {dpprof__dnn::DO, (void *)dout},
                                                {dpprof__dnn::DQ, (void *)dq},   {dpprof__dnn::DK, (void *)dk},       {dpprof__dnn::DV, (void *)dv}};
    // clang-format on
    dpprof__dnn::run(what, p->bwd, pack, ws);
}
#else // built without cuDNN (or on the emulator): the entry points say so
static int dpprof__cudnn_none(void) {
#ifdef DPPROF_CUEMU
    dpprof_fail(0, "this build has no cuDNN attention (the kernels' cpu emulator has no cuDNN)");
#else
    dpprof_fail(0, "this build has no cuDNN attention (cudnn.h and the cuDNN frontend's headers were not both found when dpprof_kernels.cu was compiled)");
#endif
    return DPPROF_ERR_UNSUPPORTED;
}
extern "C" int dpprof_cudnn_available(void) { return 0; }
extern "C" int dpprof_cudnn_attention_plan(int B, int T, int NH, int NKV, int HS, size_t *ws, int *deterministic) {
    if (ws) *ws = 0;
    if (deterministic) *deterministic = 0;
    if (dpprof__cudnn_shape("dpprof_cudnn_attention_plan", B, T, NH, NKV, HS) != DPPROF_OK) return DPPROF_ERR_INVALID;
    return dpprof__cudnn_none();
}
extern "C" void dpprof_cudnn_attention_fwd_gpu(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS, void *ws, size_t ws_bytes) {
    (void)out, (void)lse, (void)q, (void)k, (void)v, (void)ws, (void)ws_bytes;
    if (dpprof__attn_shape("dpprof_cudnn_attention_fwd_gpu", B, T, NH, NKV, HS) > 0) dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", "dpprof_cudnn_attention_fwd_gpu", "this build has no cuDNN attention");
}
extern "C" void dpprof_cudnn_attention_bwd_gpu(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS, void *ws, size_t ws_bytes) {
    (void)dq, (void)dk, (void)dv, (void)dout, (void)q, (void)k, (void)v, (void)out, (void)lse, (void)ws, (void)ws_bytes;
    if (dpprof__attn_shape("dpprof_cudnn_attention_bwd_gpu", B, T, NH, NKV, HS) > 0) dpprof__cu_fail(DPPROF_ERR_UNSUPPORTED, "%s: %s", "dpprof_cudnn_attention_bwd_gpu", "this build has no cuDNN attention");
}
#endif
#endif // __CUDA_ARCH__

// ==== book-keeping's row scaling ====================================================================
// x (n,T,D) in place: row i*T+t times c[i], the product in double rounded once (as linear_clipgrad
// scales dy). grid-stride over the n*T*D elements; one read and one write of x
template <typename A>
__global__ void dpprof__k_scale_rows(A *x, const double *c, long long rows_per_sample, long long D, long long total) {
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x)
        dpprof__st(&x[e], (float)(c[e / D / rows_per_sample] * (double)dpprof__ld(x[e])));
}

template <typename A>
static void dpprof__scale_rows(float *x, const double *c, int T, int D, long long total) {
    dpprof__launch("dpprof_scale_rows_gpu", dpprof__k_scale_rows<A>, dim3(dpprof__blocks((size_t)total, 256)), dim3(256), 0, dpprof__act<A>(x), c, (long long)T,
                   (long long)D, total);
}

extern "C" void dpprof_scale_rows_gpu(float *x, const double *c, int n, int T, int D) {
    long long total = (long long)n * T * D;
    if (total <= 0) return;
    DPPROF__BY_STORAGE(dpprof__scale_rows, x, c, T, D, total);
}
