// cuemu.h - a cpu emulator of the part of cuda that dpprof_kernels.cu uses (header only, c++17, g++).
//
// the same .cu file compiles with g++ against this header instead of cuda_runtime.h/cublas_v2.h:
//     g++ -std=c++17 -O1 -g -ffp-contract=off -x c++ -DDPPROF_CUEMU -I. -Itests -c dpprof_kernels.cu
// and its kernels then run on the cpu, so their indexing, synchronisation and the host code around
// them are tested on machines without a gpu. include it in exactly one translation unit (it defines
// inline globals, a signal handler and a context switch).
//
// what is emulated, part by part (each section below says how it differs from hardware):
//   1. keywords         __global__ & co. are empty; __shared__ is `static`
//   2. types            dim3, uint3, vector types, cudaError_t, cudaDeviceProp, cuBLAS enums
//   3. built-ins        threadIdx (per emulated thread), blockIdx, blockDim, gridDim, warpSize
//   4. launches         cuemu_launch(): blocks one after another, the threads of a block as
//                       cooperative fibers; barriers, warp shuffles/votes, deadlock detection
//   5. atomics          trivially atomic (one fiber runs at a time); they return the old value
//   6. math             the device math functions and intrinsics as host functions
//   7. runtime api      memory, copies, streams, events, errors, device properties
//                       cuemu::bytes_read and bytes_written count the bytes copies, memsets and cuBLAS calls
//                       read and write (not the kernels'): a stand-in for dram counters in tests
//   8. protection       device memory is PROT_NONE while host code runs; guard pages after every
//                       allocation, every fiber stack and the dynamic shared memory (with the
//                       memory functions of 7 and the fault handler)
//   9. cuBLAS           cublasSgemm, cublasSgemmStridedBatched, cublasGemmEx, cublasGemmStridedBatchedEx (fp32 and bf16
//                       operands, fp32 compute) and the handle functions
//  10. tensor cores     mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (cuemu_mma_m16n8k16_bf16, for
//                       the kernels' inline ptx) as a warp collective with the ptx isa's fragment layout;
//                       ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 (cuemu_ldmatrix_x4), also a warp
//                       collective; cp.async.cg 16-byte copies into shared memory with commit_group and
//                       wait_group (cuemu_cp_async_16, _commit, _wait): the bytes land only at the wait that
//                       covers them, and a thread that exits with copies in flight stops the program;
//                       wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 from shared-memory descriptors
//                       of the interleaved (unswizzled) K-major layout, with wgmma.fence, commit_group and
//                       wait_group (cuemu_wgmma_*, cuemu_smem_u32 for the addresses, cuemu_fence_proxy_async):
//                       each warp computes its 16 rows; the operands are read at the wgmma, the accumulators
//                       written at the wait_group that covers it, an operand that changes in between or a warp
//                       that exits with one in flight stops the program
//  11. NCCL             (with CUEMU_NCCL, over MPI) the communicator of an MPI job's ranks, its all-reduce,
//                       reduce-scatter, all-gather, reduce and broadcast, groups; NCCL's in-place rules checked
//
// environment (read when first needed unless said otherwise):
//   CUEMU_PROTECT=0        leave device memory accessible to host code (default 1: protected)
//   CUEMU_POISON=0         do not fill new device memory with 0xff bytes (default 1: filled, so
//                          floats read before being written are NaN, as long as the filled live
//                          allocations stay within 256 MiB of host memory; an allocation beyond
//                          that budget stays as mmap gives it: zero). CUEMU_POISON=<bytes>: budget
//   CUEMU_STRICT=1         abort when a __syncthreads completes while some threads of the block
//                          have already exited (hardware tolerates it; cuda calls it undefined)
//   CUEMU_STACK_KB=n       fiber stack size in KiB (default 256)
//   CUEMU_SCHEDULE=s       the order of the warps of a block, of the lanes of a warp, and of the
//                          blocks (section 4): forward (default: linear id order), reverse, or
//                          random[:seed] (a new permutation every round and every launch; seed
//                          default 1). a kernel whose threads race (a shared value read in the same
//                          barrier interval another thread writes it, a global value another block
//                          writes) computes other values in another order: run its test in more than
//                          one (make test does forward, reverse and random)
//   CUEMU_SMEM_POISON=0    shared memory is not filled at the start of every block (section 1)
//   CUEMU_QUIET=1          no stderr notes on api misuse that returns an error code (the notes say why)
//   CUEMU_MEMORY_BYTES=n   device memory size (default 24 GiB; suffixes K, M, G); read on every
//                          cudaMalloc/cudaMemGetInfo/cudaGetDeviceProperties
//   CUEMU_SMEM_OPTIN=n     the opt-in limit of dynamic shared memory per block (default and most: an H100's
//                          227 KiB; 99K plays an sm_86 gpu, 163K an A100; suffixes K, M)
//   CUEMU_NO_DEVICE=1      behave like a machine without a gpu (cudaErrorNoDevice);
//   CUEMU_NO_DEVICE=driver like one with a too old driver (cudaErrorInsufficientDriver); both read
//                          on every call that checks for a device
//
// limits: one host thread (nothing is locked); no preemption (a thread spinning on memory that
// another thread of its block writes hangs); no dynamic parallelism, cooperative groups, textures,
// __constant__/__device__ symbols copies, graphs, unified memory. ASan does not understand the
// fiber stacks (use UBSan, or valgrind, not ASan).
#ifndef CUEMU_H
#define CUEMU_H

#if defined(__CUDACC__) || defined(__CUDA_ARCH__)
#error "cuemu.h emulates cuda on the cpu: compile with g++ -x c++, not with nvcc"
#endif
#if !defined(__cplusplus) || __cplusplus < 201703L
#error "cuemu.h needs c++17 (g++ -std=c++17)"
#endif

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>

// the fibers switch with a few lines of x86-64 assembly; elsewhere (or with -DCUEMU_UCONTEXT) with
// ucontext's swapcontext, which is correct but makes a system call per switch
#if !defined(__x86_64__) && !defined(CUEMU_UCONTEXT)
#define CUEMU_UCONTEXT 1
#endif
#ifdef CUEMU_UCONTEXT
#include <ucontext.h>
#endif

// =================================================================================================
// 1. keywords. execution-space qualifiers are empty: every function is a host function.
//    __shared__ is `static` in a section of its own (cuemu_smem): blocks run one after another, so a
//    function-static array is the running block's shared memory. hardware leaves shared memory
//    undefined at the start of a block; here every block starts with all of it (every kernel's
//    static arrays and the dynamic bytes) filled with 0xff bytes (NaN as float or double, -1 as an
//    int), so a kernel that reads shared memory before writing it, or relies on the previous
//    block's values, computes NaN or garbage and its test fails (CUEMU_SMEM_POISON=0: all zero at
//    the first block, then the previous block's values, as before). `extern __shared__` does not
//    work: dynamic shared memory comes from cuemu_dynamic_smem().
//    __CUDACC__ and __CUDA_ARCH__ stay undefined, so code written for both sides takes the host path.
// =================================================================================================
#define __global__
#define __device__
#define __host__
#define __constant__
#define __grid_constant__
#define __forceinline__ __inline__
#define __launch_bounds__(...)
#define __shared__ static __attribute__((section("cuemu_smem")))
#define __align__(n) __attribute__((aligned(n)))

// =================================================================================================
// 2. types
// =================================================================================================
struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

// vector types: plain structs with cuda's alignment; make_<type>() builds them
#define CUEMU_VEC2(T, N, A)                   \
    struct __attribute__((aligned(A))) N##2 { \
        T x, y;                               \
    };                                        \
    inline N##2 make_##N##2(T x, T y) { return N##2 {x, y}; }
#define CUEMU_VEC3(T, N) \
    struct N##3 {        \
        T x, y, z;       \
    };                   \
    inline N##3 make_##N##3(T x, T y, T z) { return N##3 {x, y, z}; }
#define CUEMU_VEC4(T, N, A)                   \
    struct __attribute__((aligned(A))) N##4 { \
        T x, y, z, w;                         \
    };                                        \
    inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4 {x, y, z, w}; }
CUEMU_VEC2(float, float, 8)
CUEMU_VEC3(float, float)
CUEMU_VEC4(float, float, 16)
CUEMU_VEC2(double, double, 16)
CUEMU_VEC3(double, double)
CUEMU_VEC4(double, double, 16)
CUEMU_VEC2(int, int, 8)
CUEMU_VEC3(int, int)
CUEMU_VEC4(int, int, 16)
CUEMU_VEC2(unsigned int, uint, 8)
CUEMU_VEC4(unsigned int, uint, 16)
CUEMU_VEC2(long long, longlong, 16)
CUEMU_VEC2(unsigned long long, ulonglong, 16)
#undef CUEMU_VEC2
#undef CUEMU_VEC3
#undef CUEMU_VEC4
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
// cuda 13 deprecates double4 in favour of these two (16- and 32-byte aligned)
struct __attribute__((aligned(16))) double4_16a {
    double x, y, z, w;
};
struct __attribute__((aligned(32))) double4_32a {
    double x, y, z, w;
};

// runtime error codes (the numbers are cuda's)
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotPermitted = 800,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02

struct CUstream_st;
struct CUevent_st;
typedef CUstream_st *cudaStream_t;
typedef CUevent_st *cudaEvent_t;

// the fields code commonly reads (cuda's struct has many more; the order here is not cuda's)
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
    size_t reservedSharedMemPerBlock;
    int clusterLaunch;
    int reserved[64];
};

// cuBLAS
struct cublasContext;
typedef cublasContext *cublasHandle_t;
typedef enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;
typedef enum {
    CUBLAS_OP_N = 0,
    CUBLAS_OP_T = 1,
    CUBLAS_OP_C = 2
} cublasOperation_t;
typedef enum {
    CUBLAS_DEFAULT_MATH = 0,
    CUBLAS_TENSOR_OP_MATH = 1,
    CUBLAS_PEDANTIC_MATH = 2,
    CUBLAS_TF32_TENSOR_OP_MATH = 3,
    CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16
} cublasMath_t;
typedef enum {
    CUBLAS_POINTER_MODE_HOST = 0,
    CUBLAS_POINTER_MODE_DEVICE = 1
} cublasPointerMode_t;
// cublasGemmEx's types (library_types.h / cublas_api.h values); only some are emulated (section 9)
typedef enum cudaDataType_t {
    CUDA_R_32F = 0,
    CUDA_R_64F = 1,
    CUDA_R_16F = 2,
    CUDA_R_8I = 3,
    CUDA_C_32F = 4,
    CUDA_C_64F = 5,
    CUDA_C_16F = 6,
    CUDA_R_32I = 10,
    CUDA_R_16BF = 14,
    CUDA_C_16BF = 15
} cudaDataType_t;
typedef cudaDataType_t cudaDataType;
typedef enum {
    CUBLAS_COMPUTE_16F = 64,
    CUBLAS_COMPUTE_16F_PEDANTIC = 65,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_32F_PEDANTIC = 69,
    CUBLAS_COMPUTE_64F = 70,
    CUBLAS_COMPUTE_64F_PEDANTIC = 71,
    CUBLAS_COMPUTE_32I = 72,
    CUBLAS_COMPUTE_32I_PEDANTIC = 73,
    CUBLAS_COMPUTE_32F_FAST_16F = 74,
    CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77
} cublasComputeType_t;
typedef enum {
    CUBLAS_GEMM_DFALT = -1,
    CUBLAS_GEMM_DEFAULT = -1,
    CUBLAS_GEMM_ALGO0 = 0,
    CUBLAS_GEMM_ALGO23 = 23,
    CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
    CUBLAS_GEMM_DFALT_TENSOR_OP = 99,
    CUBLAS_GEMM_ALGO0_TENSOR_OP = 100,
    CUBLAS_GEMM_ALGO15_TENSOR_OP = 115
} cublasGemmAlgo_t;

// =================================================================================================
// internal state (namespace cuemu). everything is plain data with static storage, so calls made
// from atexit handlers or destructors of other statics still find it intact.
// =================================================================================================
// the bounds of the kernels' static shared memory (section 1), which the linker defines when some
// __shared__ array exists (weak: null when none does)
extern "C" char __start_cuemu_smem[] __attribute__((weak));
extern "C" char __stop_cuemu_smem[] __attribute__((weak));

namespace cuemu {
inline char *smem_static_lo() { return __start_cuemu_smem; }
inline char *smem_static_hi() { return __stop_cuemu_smem; }

constexpr unsigned kMaxThreads = 1024;                     // threads per block
constexpr size_t kSmemDefault = 48 * 1024;                 // dynamic smem without opt-in
constexpr size_t kSmemOptin = 227 * 1024;                  // an H100's opt-in limit per block
constexpr size_t kGranule = 2u << 20;                      // cudaMemGetInfo's accounting unit
constexpr size_t kAllocAlign = 256;                        // cudaMalloc's alignment
constexpr size_t kPoisonBudget = 256u << 20;               // live bytes CUEMU_POISON fills by default
constexpr unsigned long long kDefaultMemory = 24ull << 30; // device memory without CUEMU_MEMORY_BYTES

enum FiberState : unsigned char {
    RUNNABLE,
    WAIT_BLOCK,
    WAIT_WARP,
    DONE
};
enum Op : unsigned char {
    // block barriers
    OP_SYNCTHREADS,
    OP_SYNC_AND,
    OP_SYNC_OR,
    OP_SYNC_COUNT,
    // warp collectives
    OP_SYNCWARP,
    OP_SHFL_IDX,
    OP_SHFL_UP,
    OP_SHFL_DOWN,
    OP_SHFL_XOR,
    OP_BALLOT,
    OP_ANY,
    OP_ALL,
    OP_REDUCE_ADD,
    OP_REDUCE_MIN,
    OP_REDUCE_MAX,
    OP_REDUCE_AND,
    OP_REDUCE_OR,
    OP_REDUCE_XOR,
    OP_MMA_BF16,     // mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (section 10)
    OP_LDMATRIX,     // ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 (section 10)
    OP_WGMMA,        // wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 (section 10), per warp
    OP_WGMMA_COMMIT, // wgmma.commit_group.sync.aligned
    OP_WGMMA_WAIT    // wgmma.wait_group.sync.aligned
};
inline const char *op_name(unsigned op) {
    static const char *const names[] = {"__syncthreads", "__syncthreads_and", "__syncthreads_or", "__syncthreads_count",
                                        "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                        "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync",
                                        "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
                                        "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
                                        "mma.sync.m16n8k16.bf16", "ldmatrix.sync.m8n8.x4.b16",
                                        "wgmma.mma_async.m64n128k16.bf16", "wgmma.commit_group", "wgmma.wait_group"};
    return op < sizeof names / sizeof names[0] ? names[op] : "?";
}

// one cp.async copy in flight (section 10): its 16 bytes were read from global memory when it was issued
// and land in shared memory when a cp.async.wait_group of the issuing thread covers its group
constexpr unsigned kMaxCpAsync = 64; // copies one thread may have in flight
struct CpAsync {
    char *dst;
    unsigned group;
    unsigned char data[16];
};

// one emulated thread
struct Fiber {
    void *sp;              // saved stack pointer (x86-64 switch)
    uint3 tid;             // threadIdx
    unsigned lin;          // linear id x + y*bx + z*bx*by; warp = lin/32, lane = lin%32
    unsigned char state;   // FiberState
    unsigned char op;      // Op it waits at
    unsigned char signed_; // reduce: operands are signed
    unsigned char started; // has a stack and a context
    unsigned stack;        // index of its stack in State::stacks
    int pred;              // predicate of votes and barrier reductions
    unsigned mask;         // warp collectives: member mask
    int width;             // shuffles: segment width
    long long arg;         // shuffles: src lane, delta or lane mask
    uint64_t in, out;      // value deposited, value received (raw bytes)
    const char *file;      // where it waits
    int line;
    unsigned n_cp, cp_group; // cp.async: copies in flight, the group the next copy joins (commits so far)
    CpAsync cp[kMaxCpAsync];
#ifdef CUEMU_UCONTEXT
    ucontext_t uc;
#endif
};

struct Stack {
    char *map; // the mapping: guard below, stack above
    size_t map_bytes;
    char *lo, *hi; // usable stack
};

struct Alloc {
    char *region;      // mmap'd: data pages, then one guard page
    size_t data_bytes; // page-rounded data part
    char *base;        // what cudaMalloc returned: the end of the block abuts the guard page
    size_t size;       // bytes requested
    size_t accounted;  // cudaMalloc: size rounded up to kGranule; cudaMallocAsync: to kAllocAlign
    bool pooled;       // from cudaMallocAsync
    bool poisoned;     // filled with 0xff when allocated (counts against the poison budget)
    bool open;         // accessible right now (during a device operation that uses it)
};

struct Freed {
    char *lo, *hi;
    size_t size;
};

struct Optin {
    const void *fn;
    int bytes;
};

struct State {
    int inited;
    int protect, strict;
    int sched, smem_poison;                       // CUEMU_SCHEDULE (0 forward, 1 reverse, 2 random), CUEMU_SMEM_POISON
    uint64_t rng;                                 // the random schedule's xorshift state
    unsigned order[32], worder[kMaxThreads / 32]; // this round's lane and warp orders
    size_t poison_budget, poisoned_live;          // CUEMU_POISON: live bytes that may be filled, bytes filled
    size_t page, stack_bytes, guard_bytes;
    // device memory: live allocations sorted by base
    Alloc *allocs;
    size_t n_allocs, cap_allocs, accounted; // accounted: cudaMalloc allocations, rounded up
    // the stream-ordered pool (cudaMallocAsync)
    size_t pool_used, pool_reserved, pool_used_high, pool_reserved_high;
    uint64_t pool_threshold;
    Freed freed[64];
    unsigned n_freed;
    int access_depth; // >0 during a device operation (launch, copy, memset, cuBLAS)
    char **open_list; // regions of the allocations opened by it (capacity cap_allocs)
    size_t n_open;
    cudaError_t last_error;
    // launches
    unsigned long long launches;
    int in_launch;
    unsigned long long launch_no;
    const void *kernel;
    const char *kernel_name, *next_name;
    dim3 grid_dim, block_dim;
    uint3 block_idx;
    unsigned nthreads, live;
    Fiber *fib;
    unsigned fib_cap;
    Stack stacks[kMaxThreads];
    unsigned free_stacks[kMaxThreads]; // stacks not in use, most recently freed last
    unsigned n_free_stacks, n_stacks_made;
    void (*body)(void *);
    void *body_ctx;
    void *sched_sp;
#ifdef CUEMU_UCONTEXT
    ucontext_t sched_uc;
#endif
    // dynamic shared memory: a mapping whose end abuts a guard page; the block's bytes end there
    char *smem_map;
    size_t smem_map_bytes;
    char *smem_base;
    size_t smem_bytes;
    Optin *optin;
    size_t n_optin, cap_optin;
    // signals
    int handler;
    struct sigaction old_segv, old_bus;
    void *altstack;
};

inline State g; // the emulator's state

// one wgmma.mma_async of a warp in flight (section 10): this warp's 16 rows of A and B's 128 rows, read
// from shared memory when it was issued, with the 16-byte rows they came from and those bytes, so that the
// wait_group that completes it can check that nobody overwrote them meanwhile; the lanes' accumulators
// are written only then
struct WgmmaOp {
    float *d[32];   // each lane's 64 accumulators
    int scale_d;    // 0: d = A B; 1: d += A B
    unsigned group; // the warp's commit count when it was issued
    float A[16][16], B[128][16];
    const unsigned char *row[16 * 2 + 128 * 2]; // the 16-byte core-matrix rows it read: A's, then B's
    unsigned char bytes[16 * 2 + 128 * 2][16];
    const char *file;
    int line;
};
constexpr unsigned kMaxWgmma = 16; // wgmma ops one warp may have in flight
struct WgmmaWarp {
    unsigned n, groups; // ops in flight, commits so far
    WgmmaOp op[kMaxWgmma];
};
inline WgmmaWarp *g_wgmma = nullptr; // kMaxThreads / 32 warps, allocated at the first wgmma
inline Fiber *g_cur = nullptr;       // the running fiber, nullptr in host code

// ---- diagnostics -------------------------------------------------------------------------------
// where the program is: host code, or launch/block/thread
inline int where(char *buf, size_t n) {
    int k;
    if (!g.in_launch) return std::snprintf(buf, n, "host code");
    k = std::snprintf(buf, n, "kernel launch #%llu%s%s%s (kernel %p, grid (%u,%u,%u), block (%u,%u,%u)), block (%u,%u,%u)",
                      g.launch_no, g.kernel_name ? " \"" : "", g.kernel_name ? g.kernel_name : "", g.kernel_name ? "\"" : "",
                      g.kernel, g.grid_dim.x, g.grid_dim.y, g.grid_dim.z, g.block_dim.x, g.block_dim.y, g.block_dim.z,
                      g.block_idx.x, g.block_idx.y, g.block_idx.z);
    if (g_cur && k > 0 && (size_t)k < n)
        k += std::snprintf(buf + k, n - (size_t)k, ", thread (%u,%u,%u) [linear %u, warp %u, lane %u]", g_cur->tid.x,
                           g_cur->tid.y, g_cur->tid.z, g_cur->lin, g_cur->lin / 32, g_cur->lin % 32);
    return k;
}

inline void write_err(const char *s) {
    size_t n = std::strlen(s);
    while (n) {
        ssize_t w = ::write(2, s, n);
        if (w <= 0) break;
        s += w;
        n -= (size_t)w;
    }
}

// a bug in the emulated program: say where and what, then abort (a debugger stops here)
[[noreturn]] inline void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fatal(const char *fmt, ...) {
    char buf[4096];
    int k = std::snprintf(buf, sizeof buf, "cuemu: error in ");
    k += where(buf + k, sizeof buf - (size_t)k);
    if ((size_t)k < sizeof buf - 2) {
        buf[k++] = ':';
        buf[k++] = ' ';
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(buf + k, sizeof buf - (size_t)k, fmt, ap);
        va_end(ap);
    }
    std::fflush(stdout);
    write_err(buf);
    write_err("\n");
    std::abort();
}

// misuse of the api that cuda reports with an error code: say why on stderr, return the code
inline void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void warn(const char *fmt, ...) {
    static const char *quiet = std::getenv("CUEMU_QUIET");
    if (quiet && *quiet && std::strcmp(quiet, "0")) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::fflush(stdout);
    write_err("cuemu: ");
    write_err(buf);
    write_err("\n");
}

// ---- environment -------------------------------------------------------------------------------
inline long long env_ll(const char *name, long long dflt) {
    const char *v = std::getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    double x = std::strtod(v, &end);
    switch (*end) {
    case 'k':
    case 'K': x *= 1024.0; break;
    case 'm':
    case 'M': x *= 1024.0 * 1024.0; break;
    case 'g':
    case 'G': x *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return x < 0 ? 0 : (long long)x;
}
inline size_t total_memory() { return (size_t)env_ll("CUEMU_MEMORY_BYTES", (long long)kDefaultMemory); }
// the opt-in shared memory limit per block: CUEMU_SMEM_OPTIN, within [kSmemDefault, kSmemOptin]
inline size_t smem_optin() {
    const long long v = env_ll("CUEMU_SMEM_OPTIN", (long long)kSmemOptin);
    return v < (long long)kSmemDefault ? kSmemDefault : (v > (long long)kSmemOptin ? kSmemOptin : (size_t)v);
}
// cudaSuccess, or the error a machine without a usable gpu gives
inline cudaError_t no_device() {
    const char *v = std::getenv("CUEMU_NO_DEVICE");
    if (!v || !*v || !std::strcmp(v, "0")) return cudaSuccess;
    return std::strcmp(v, "driver") ? cudaErrorNoDevice : cudaErrorInsufficientDriver;
}
inline cudaError_t set_error(cudaError_t e) {
    if (e != cudaSuccess) g.last_error = e;
    return e;
}

inline size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// ---- device memory lookup and protection -------------------------------------------------------
// index of the allocation whose mapping (data pages and guard page) holds p, or -1
inline long find_region(const void *p) {
    const char *c = (const char *)p;
    size_t lo = 0, hi = g.n_allocs;
    while (lo < hi) { // first allocation with region > c
        size_t mid = (lo + hi) / 2;
        if (g.allocs[mid].region <= c) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    const Alloc &a = g.allocs[lo - 1];
    return c < a.region + a.data_bytes + g.page ? (long)(lo - 1) : -1;
}
// is [p, p+bytes) inside one live allocation's requested bytes?
inline bool is_device_range(const void *p, size_t bytes) {
    long i = find_region(p);
    if (i < 0) return false;
    const Alloc &a = g.allocs[i];
    const char *c = (const char *)p;
    return c >= a.base && bytes <= a.size && (size_t)(c - a.base) <= a.size - bytes;
}
inline bool is_device_pointer(const void *p) {
    long i = find_region(p);
    return i >= 0 && (const char *)p >= g.allocs[i].base && (const char *)p < g.allocs[i].base + g.allocs[i].size;
}

inline void protect_alloc(const Alloc &a, bool accessible) {
    if (mprotect(a.region, a.data_bytes, accessible ? PROT_READ | PROT_WRITE : PROT_NONE) != 0)
        fatal("mprotect of device allocation %p failed", (void *)a.base);
}
// device operations (a launch, a copy, a memset, a cuBLAS call) run inside a DeviceAccess. they
// open the allocations they use: copies and cuBLAS the ones their pointers lie in, a launch those
// its arguments point into (pointer arguments, and pointer-sized words of struct arguments). when
// the outermost DeviceAccess ends, what was opened is protected again. an allocation a kernel
// reaches another way (a pointer stored in device memory) faults on first access: the fault
// handler opens it and the access is retried (under gdb: `handle SIGSEGV nostop noprint pass`
// skips such stops, but also real faults' first stop).
inline void open_alloc(Alloc &a) {
    if (!g.protect || a.open) return;
    protect_alloc(a, true);
    a.open = true;
    g.open_list[g.n_open++] = a.region;
}
inline void open_pointer(const void *p) {
    long i = find_region(p);
    if (i >= 0) open_alloc(g.allocs[i]);
}
inline void begin_device() { g.access_depth++; }
inline void end_device() {
    if (--g.access_depth) return;
    for (size_t k = 0; k < g.n_open; k++) {
        long i = find_region(g.open_list[k]);
        if (i >= 0 && g.allocs[i].open) {
            protect_alloc(g.allocs[i], false);
            g.allocs[i].open = false;
        }
    }
    g.n_open = 0;
}
// the stream-ordered pool gives back what it holds beyond max(used, keep), in whole 2 MiB steps
inline void pool_trim(size_t keep) {
    size_t floor = round_up(g.pool_used, kGranule);
    size_t target = keep > floor ? keep / kGranule * kGranule : floor;
    if (target < floor) target = floor;
    if (target < g.pool_reserved) g.pool_reserved = target;
}
inline void pool_trim_at_sync() {
    if (g.pool_reserved > g.pool_threshold) pool_trim(g.pool_threshold > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)g.pool_threshold);
}
// the device bytes the copies, memsets and cuBLAS calls read and wrote so far (kernels are not counted: the
// emulator does not see their loads and stores): a stand-in for a gpu's dram counters, for tests of what
// carries counter values, never a measurement
inline unsigned long long bytes_read, bytes_written;
struct DeviceAccess {
    DeviceAccess() { begin_device(); }
    ~DeviceAccess() { end_device(); }
    DeviceAccess(const DeviceAccess &) = delete;
    DeviceAccess &operator=(const DeviceAccess &) = delete;
};

// ---- the fault handler -------------------------------------------------------------------------
// SIGSEGV/SIGBUS: name the cause when the address is one the emulator knows (a fiber's stack
// guard, a device allocation or its guard page, freed device memory, the dynamic shared memory's
// guard), then let the fault kill the process as usual; other faults go to the previous handler.
inline void fault_handler(int sig, siginfo_t *si, void *uctx) {
    char msg[2048], ctx[1024];
    char *a = (char *)si->si_addr;
    if (g.protect && g.access_depth > 0) { // a device operation reached an allocation it did not open: open it, retry
        long k = find_region(a);
        if (k >= 0) {
            Alloc &m = g.allocs[k];
            if (!m.open && a < m.region + m.data_bytes && mprotect(m.region, m.data_bytes, PROT_READ | PROT_WRITE) == 0) {
                m.open = true;
                g.open_list[g.n_open++] = m.region;
                return;
            }
        }
    }
    msg[0] = 0;
    where(ctx, sizeof ctx);
    for (unsigned i = 0; i < kMaxThreads; i++) {
        const Stack &s = g.stacks[i];
        if (s.map && a >= s.map && a < s.lo) {
            std::snprintf(msg, sizeof msg,
                          "cuemu: fiber stack overflow in %s (the stack of a thread is %zu KiB: set CUEMU_STACK_KB "
                          "higher, or the kernel recurses without end)\n",
                          ctx, g.stack_bytes >> 10);
            write_err(msg);
            signal(SIGABRT, SIG_DFL);
            std::abort();
        }
    }
    long i = find_region(a);
    if (i >= 0) {
        const Alloc &m = g.allocs[i];
        if (a >= m.region + m.data_bytes)
            std::snprintf(msg, sizeof msg,
                          "cuemu: %s: access to %p, %zu bytes past the end of device allocation %p of %zu bytes\n",
                          ctx, (void *)a, (size_t)(a - (m.base + m.size)), (void *)m.base, m.size);
        else if (g.access_depth == 0 && a < m.base)
            std::snprintf(msg, sizeof msg,
                          "cuemu: %s dereferenced device memory: %p is %zu bytes before device allocation %p of %zu bytes\n",
                          ctx, (void *)a, (size_t)(m.base - a), (void *)m.base, m.size);
        else if (g.access_depth == 0)
            std::snprintf(msg, sizeof msg,
                          "cuemu: %s dereferenced device memory: %p is byte %zu of device allocation %p of %zu bytes "
                          "(copy it to the host with cudaMemcpy first)\n",
                          ctx, (void *)a, (size_t)(a - m.base), (void *)m.base, m.size);
    } else if (g.smem_map && a >= g.smem_map + g.smem_map_bytes - g.page && a < g.smem_map + g.smem_map_bytes) {
        std::snprintf(msg, sizeof msg, "cuemu: %s: access to %p, past the end of the %zu bytes of dynamic shared memory\n",
                      ctx, (void *)a, g.smem_bytes);
    } else {
        for (unsigned k = 0; k < g.n_freed && k < 64; k++)
            if (a >= g.freed[k].lo && a < g.freed[k].hi) {
                std::snprintf(msg, sizeof msg, "cuemu: %s: access to %p in device memory already freed (an allocation of %zu bytes)\n",
                              ctx, (void *)a, g.freed[k].size);
                break;
            }
    }
    if (!msg[0] && g.in_launch) {
        std::snprintf(msg, sizeof msg, "cuemu: %s: memory fault at %p (not device memory the emulator knows)\n", ctx, (void *)a);
    }
    if (msg[0]) {
        write_err(msg);
        signal(sig, SIG_DFL); // returning re-runs the access, which now kills the process
        return;
    }
    const struct sigaction &old = sig == SIGSEGV ? g.old_segv : g.old_bus;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
        old.sa_sigaction(sig, si, uctx);
    } else if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
        old.sa_handler(sig);
    } else {
        signal(sig, SIG_DFL);
    }
}

// the fault handler needs an alternate stack to report a fiber's stack overflow
inline void ensure_altstack() {
    stack_t cur;
    if (sigaltstack(nullptr, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)) return;
    if (!g.altstack) {
        void *p = mmap(nullptr, 256 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        g.altstack = p;
    }
    stack_t ss;
    ss.ss_sp = g.altstack;
    ss.ss_size = 256 * 1024;
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
}

// CUEMU_SCHEDULE (or cuemu_set_schedule): forward | reverse | random[:seed]; anything else is a fatal
// error (a typo must not quietly test the default order)
inline void set_schedule(const char *v) {
    g.rng = 1;
    if (!v || !*v || !std::strcmp(v, "forward")) g.sched = 0;
    else if (!std::strcmp(v, "reverse")) g.sched = 1;
    else if (!std::strncmp(v, "random", 6) && (!v[6] || v[6] == ':')) {
        g.sched = 2;
        if (v[6] == ':') {
            char *end;
            unsigned long long s = std::strtoull(v + 7, &end, 10);
            if (end == v + 7 || *end) fatal("CUEMU_SCHEDULE=%s: the seed after random: is not a decimal number", v);
            g.rng = s;
        }
        g.rng = g.rng * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull; // never zero for xorshift
        if (!g.rng) g.rng = 1;
    } else fatal("CUEMU_SCHEDULE=%s: not forward, reverse or random[:seed]", v);
}
inline uint64_t next_rand() { // xorshift64*
    g.rng ^= g.rng >> 12;
    g.rng ^= g.rng << 25;
    g.rng ^= g.rng >> 27;
    return g.rng * 0x2545f4914f6cdd1dull;
}
// a[0..n) = the order of n items in this schedule: forward, reverse or a fresh random permutation
inline void schedule_order(unsigned *a, unsigned n) {
    for (unsigned i = 0; i < n; i++) a[i] = g.sched == 1 ? n - 1 - i : i;
    if (g.sched == 2)
        for (unsigned i = n; i > 1; i--) {
            unsigned j = (unsigned)(next_rand() % i);
            unsigned t = a[i - 1];
            a[i - 1] = a[j];
            a[j] = t;
        }
}

inline void init() {
    if (g.inited) return;
    g.inited = 1;
    g.page = (size_t)sysconf(_SC_PAGESIZE);
    g.protect = (int)env_ll("CUEMU_PROTECT", 1) != 0;
    long long pz = env_ll("CUEMU_POISON", 1); // 0: off, 1: the default budget, else a budget in bytes
    g.poison_budget = pz == 1 ? kPoisonBudget : (size_t)pz;
    g.strict = (int)env_ll("CUEMU_STRICT", 0) != 0;
    g.smem_poison = (int)env_ll("CUEMU_SMEM_POISON", 1) != 0;
    set_schedule(std::getenv("CUEMU_SCHEDULE"));
    long long kb = env_ll("CUEMU_STACK_KB", 256);
    g.stack_bytes = round_up((size_t)(kb < 64 ? 64 : kb) * 1024, g.page);
    g.guard_bytes = round_up(256 * 1024, g.page);
    g.last_error = cudaSuccess;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g.old_segv);
    sigaction(SIGBUS, &sa, &g.old_bus);
    g.handler = 1;
}

// =================================================================================================
// 4. fibers and the block scheduler.
//    the threads of a block are fibers with their own stacks (CUEMU_STACK_KB, a guard region below
//    each), allocated once and reused. the scheduler takes the warps one at a time (in the order of
//    CUEMU_SCHEDULE): it runs each runnable lane of the warp in turn until it returns or waits, and
//    releases the warp's complete warp collectives (every not-yet-exited lane of the mask waits at
//    one with the same mask), until the whole warp waits at a block barrier or has exited; only
//    then does the next warp start. when every warp is stuck it releases a block barrier that every
//    not-yet-exited thread waits at; when none is complete, that is a deadlock: it aborts naming the
//    launch, block and threads. threads that exited count as arrived, as on hardware (lanes beyond
//    the block's last thread count as exited). differences from hardware: no thread runs between
//    two barriers while another runs (so races between threads of a block show up only as wrong
//    orders, never as torn values: run a test in more than one schedule), a warp runs as far
//    ahead of the others as the block barriers let it (the extreme order: a race between warps
//    across warp collectives shows), and warps do not run in lockstep (code relying on implicit
//    warp-synchronous execution without __syncwarp breaks here, as it may on volta and later).
// =================================================================================================
#ifndef CUEMU_UCONTEXT
// cuemu_ctx_swap(save, load): push the callee-saved registers, the sse control/status word and the
// x87 control word, store the stack pointer in *save, switch to load, pop the same, return there
__asm__(".pushsection .text\n"
        ".weak cuemu_ctx_swap\n"
        ".hidden cuemu_ctx_swap\n"
        ".type cuemu_ctx_swap, @function\n"
        "cuemu_ctx_swap:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $16, %rsp\n"
        "    stmxcsr 8(%rsp)\n"
        "    fnstcw (%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr 8(%rsp)\n"
        "    fldcw (%rsp)\n"
        "    addq $16, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size cuemu_ctx_swap, .-cuemu_ctx_swap\n"
        ".popsection\n");
} // namespace cuemu
extern "C" void cuemu_ctx_swap(void **save_sp, void *load_sp);
namespace cuemu {
#endif

inline void switch_out(Fiber *f) { // fiber -> scheduler
#ifdef CUEMU_UCONTEXT
    swapcontext(&f->uc, &g.sched_uc);
#else
    cuemu_ctx_swap(&f->sp, g.sched_sp);
#endif
}
inline void switch_in(Fiber *f) { // scheduler -> fiber, until it waits or returns
    g_cur = f;
#ifdef CUEMU_UCONTEXT
    swapcontext(&g.sched_uc, &f->uc);
#else
    cuemu_ctx_swap(&g.sched_sp, f->sp);
#endif
    g_cur = nullptr;
}

// first code of every fiber: run the kernel body, then hand back for good
[[noreturn]] inline void fiber_entry() {
    Fiber *f = g_cur;
    g.body(g.body_ctx);
    if (f->n_cp)
        fatal("thread %u of block (%u,%u,%u) exited with %u cp.async copies into shared memory not waited for (cp.async.wait_group)",
              f->lin, g.block_idx.x, g.block_idx.y, g.block_idx.z, f->n_cp);
    f->state = DONE;
    g.live--;
    switch_out(f);
    fatal("an exited thread was resumed (emulator bug)");
}

inline Stack &stack_for(unsigned i) {
    Stack &s = g.stacks[i];
    if (!s.map) {
        size_t bytes = g.guard_bytes + g.stack_bytes;
        void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) fatal("cannot map a fiber stack of %zu bytes", bytes);
        if (mprotect(p, g.guard_bytes, PROT_NONE) != 0) fatal("cannot protect a fiber stack guard");
        s.map = (char *)p;
        s.map_bytes = bytes;
        s.lo = s.map + g.guard_bytes;
        s.hi = s.map + bytes;
    }
    return s;
}

inline void fiber_start(Fiber *f, unsigned i) {
    Stack &s = stack_for(i);
#ifdef CUEMU_UCONTEXT
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = s.lo;
    f->uc.uc_stack.ss_size = (size_t)(s.hi - s.lo);
    f->uc.uc_link = nullptr;
    makecontext(&f->uc, (void (*)())fiber_entry, 0);
#else
    // the frame cuemu_ctx_swap pops: x87 cw, mxcsr, r15..r12, rbx, rbp, return address (fiber_entry)
    // above a zero "return address" of fiber_entry itself, so that it starts with rsp % 16 == 8
    uint64_t *top = (uint64_t *)((uintptr_t)s.hi & ~(uintptr_t)15);
    uint32_t mxcsr = __builtin_ia32_stmxcsr();
    uint16_t fcw;
    __asm__ volatile("fnstcw %0"
                     : "=m"(fcw));
    top[-1] = 0;
    top[-2] = (uint64_t)(uintptr_t)&fiber_entry;
    for (int r = 3; r <= 8; r++) top[-r] = 0; // rbp rbx r12 r13 r14 r15
    top[-9] = mxcsr;
    top[-10] = fcw;
    f->sp = top - 10;
#endif
}

// ---- barriers seen from a fiber ------------------------------------------------------------------
inline Fiber *in_kernel(const char *what, const char *file, int line) {
    Fiber *f = g_cur;
    if (!f) fatal("%s called outside a kernel (%s:%d)", what, file, line);
    return f;
}
inline void wait_block(Fiber *f, unsigned op, int pred, const char *file, int line) {
    f->state = WAIT_BLOCK;
    f->op = (unsigned char)op;
    f->pred = pred;
    f->file = file;
    f->line = line;
    switch_out(f);
}
inline uint64_t wait_warp(Fiber *f, unsigned op, unsigned mask, uint64_t in, long long arg, int width, int pred,
                          const char *file, int line) {
    if (!((mask >> (f->lin % 32)) & 1u))
        fatal("%s(mask 0x%08x) at %s:%d: the calling lane %u is not in the mask", op_name(op), mask, file, line, f->lin % 32);
    if (width < 1 || width > 32 || (width & (width - 1)))
        fatal("%s at %s:%d: width %d is not a power of two in [1, 32]", op_name(op), file, line, width);
    f->state = WAIT_WARP;
    f->op = (unsigned char)op;
    f->mask = mask;
    f->in = in;
    f->arg = arg;
    f->width = width;
    f->pred = pred;
    f->file = file;
    f->line = line;
    switch_out(f);
    return f->out;
}

// ---- releasing barriers (scheduler side) ---------------------------------------------------------
inline void release_block() {
    Fiber *F = g.fib;
    unsigned n = g.nthreads, op = 255, live = 0, count = 0;
    const Fiber *first = nullptr;
    for (unsigned i = 0; i < n; i++) {
        if (F[i].state == DONE) continue;
        live++;
        count += F[i].pred != 0;
        if (!first) {
            first = &F[i];
            op = F[i].op;
        } else if (F[i].op != op) {
            fatal("threads of the block wait at different block barriers: thread %u at %s (%s:%d), thread %u at %s (%s:%d)",
                  first->lin, op_name(first->op), first->file, first->line, F[i].lin, op_name(F[i].op), F[i].file, F[i].line);
        }
    }
    if (g.strict && live < n)
        fatal("%s (%s:%d) completed with %u of the block's %u threads already exited (CUEMU_STRICT=1)", op_name(op),
              first->file, first->line, n - live, n);
    uint64_t out = op == OP_SYNC_COUNT ? count : (op == OP_SYNC_AND ? count == live : (op == OP_SYNC_OR ? count != 0 : 0));
    for (unsigned i = 0; i < n; i++)
        if (F[i].state == WAIT_BLOCK) {
            F[i].out = out;
            F[i].state = RUNNABLE;
        }
}

// ---- tensor cores (section 10) ---------------------------------------------------------------------
// one lane's registers of mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: four .b32 of A (two
// bf16 each, the lower index in the low half), two of B, four floats of C in and D out
struct MmaLane {
    uint32_t a[4], b[2];
    float d[4];
};
inline float bf16_bits_to_float(uint32_t h) {
    uint32_t u = (h & 0xffffu) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
// D = A B + C over the whole warp, in the fragment layout of the ptx isa ("matrix fragments for
// mma.m16n8k16 with floating point type"), g = lane >> 2, t = lane % 4:
//   A (16x16, row major)  a_i: row g (+8 for i in {2,3,6,7}), column 2t + (i & 1) (+8 for i >= 4)
//   B (16x8, column major) b_i: row 2t + (i & 1) (+8 for i >= 2), column g
//   C, D (16x8)            c_i: row g (+8 for i >= 2), column 2t + (i & 1)
// the products are exact in fp32 (bf16 x bf16); each dot product is summed in double and rounded once
// (a tensor core's fp32 accumulation order and rounding are unspecified: the kernels' tests allow for it)
inline void mma_bf16(Fiber *W) {
    float A[16][16], B[16][8], C[16][8];
    for (unsigned l = 0; l < 32; l++) {
        const MmaLane *io = (const MmaLane *)(uintptr_t)W[l].in;
        const unsigned g = l >> 2, t = l & 3;
        for (unsigned i = 0; i < 8; i++)
            A[g + ((i & 2) ? 8 : 0)][2 * t + (i & 1) + (i >= 4 ? 8 : 0)] = bf16_bits_to_float(io->a[i / 2] >> (16 * (i & 1)));
        for (unsigned i = 0; i < 4; i++) B[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = bf16_bits_to_float(io->b[i / 2] >> (16 * (i & 1)));
        for (unsigned i = 0; i < 4; i++) C[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)] = io->d[i];
    }
    for (unsigned l = 0; l < 32; l++) {
        MmaLane *io = (MmaLane *)(uintptr_t)W[l].in;
        const unsigned g = l >> 2, t = l & 3;
        for (unsigned i = 0; i < 4; i++) {
            const unsigned r = g + (i >= 2 ? 8 : 0), c = 2 * t + (i & 1);
            double s = C[r][c];
            for (unsigned k = 0; k < 16; k++) s += (double)A[r][k] * (double)B[k][c];
            io->d[i] = (float)s;
        }
    }
}

// shared memory of the running block (dynamic or static) holds [p, p + n)
inline bool in_smem(const void *p, size_t n) {
    const char *c = (const char *)p, *ss = smem_static_lo(), *se = smem_static_hi();
    return (c >= g.smem_base && c + n <= g.smem_base + g.smem_bytes) || (ss && c >= ss && c + n <= se);
}

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 over the whole warp: lanes 8j .. 8j + 7 give the
// addresses of rows 0 .. 7 of matrix j (8 b16 each, 16 bytes, 16-byte aligned, in shared memory); lane l
// receives in register j matrix j's elements (row l / 4, columns 2 (l % 4), 2 (l % 4) + 1), or with
// .trans (rows 2 (l % 4), 2 (l % 4) + 1, column l / 4), the lower index in the low half (ptx isa,
// "warp-level matrix load instruction: ldmatrix")
struct LdsmLane {
    const void *row;
    uint32_t r[4];
};
inline void ldmatrix_x4(Fiber *W, unsigned base) {
    uint16_t M[4][8][8];
    const long long trans = W[0].arg;
    for (unsigned l = 0; l < 32; l++) {
        const LdsmLane *io = (const LdsmLane *)(uintptr_t)W[l].in;
        if (W[l].arg != trans)
            fatal("%s at %s:%d: lanes 0 and %u of warp %u disagree on .trans", op_name(OP_LDMATRIX), W[l].file, W[l].line, l, base / 32);
        if (((uintptr_t)io->row & 15) || !in_smem(io->row, 16))
            fatal("%s at %s:%d: lane %u of warp %u gives row address %p, not 16 bytes of shared memory at a 16-byte boundary",
                  op_name(OP_LDMATRIX), W[l].file, W[l].line, l, base / 32, io->row);
        std::memcpy(M[l / 8][l % 8], io->row, 16);
    }
    for (unsigned l = 0; l < 32; l++) {
        LdsmLane *io = (LdsmLane *)(uintptr_t)W[l].in;
        const unsigned g8 = l >> 2, t = l & 3;
        for (unsigned j = 0; j < 4; j++) {
            const uint16_t lo = trans ? M[j][2 * t][g8] : M[j][g8][2 * t], hi = trans ? M[j][2 * t + 1][g8] : M[j][g8][2 * t + 1];
            io->r[j] = (uint32_t)lo | ((uint32_t)hi << 16);
        }
    }
}

// wgmma (sm_90a) per warp: a warpgroup's m64nNk16 product gives warp w % 4 of the group rows 16 (w % 4) ..
// 16 (w % 4) + 15 of D, and those rows need only the same rows of A, so each warp's part runs as its own
// warp collective. what one lane hands in: its accumulators (64 floats for n128) and the two descriptors
struct WgmmaLane {
    float *d;
    uint64_t da, db;
    int scale_d;
};
// the 16 bytes of a K-major operand held in shared memory under descriptor desc (ptx isa, "matrix
// descriptor format": bits 0-13 the start address >> 4, 16-29 the leading dimension byte offset (LBO) >> 4,
// 32-45 the stride dimension byte offset (SBO) >> 4, 49-51 the base offset, 62-63 the swizzle mode) that
// hold row m, columns 8 kh .. 8 kh + 7 of its 16-column slice: the interleaved layout of 8 x 16-byte core
// matrices (swizzle mode 0, base offset 0, the only one emulated) puts them at start + (m / 8) SBO + kh LBO
// + (m % 8) 16. shared addresses are offsets into the block's dynamic shared memory (cuemu_smem_u32)
inline const unsigned char *wgmma_row(uint64_t desc, unsigned m, unsigned kh, const char *file, int line) {
    const size_t start = (size_t)(desc & 0x3fff) << 4, lbo = (size_t)((desc >> 16) & 0x3fff) << 4, sbo = (size_t)((desc >> 32) & 0x3fff) << 4;
    if ((desc >> 62) != 0 || ((desc >> 49) & 7) != 0)
        fatal("%s at %s:%d: descriptor 0x%016llx has swizzle mode %u and base offset %u; only the interleaved layout (0, 0) is emulated",
              op_name(OP_WGMMA), file, line, (unsigned long long)desc, (unsigned)(desc >> 62), (unsigned)((desc >> 49) & 7));
    const size_t off = start + (m / 8) * sbo + kh * lbo + (m % 8) * 16;
    if (off + 16 > g.smem_bytes)
        fatal("%s at %s:%d: descriptor 0x%016llx puts row %u (columns %u..) at shared byte %zu, past the block's %zu bytes of dynamic shared memory",
              op_name(OP_WGMMA), file, line, (unsigned long long)desc, m, 8 * kh, off, g.smem_bytes);
    return (const unsigned char *)g.smem_base + off;
}
inline WgmmaWarp &wgmma_warp(unsigned base) {
    if (!g_wgmma) {
        g_wgmma = (WgmmaWarp *)std::calloc(kMaxThreads / 32, sizeof(WgmmaWarp));
        if (!g_wgmma) fatal("out of host memory for wgmma state");
    }
    return g_wgmma[base / 32];
}
// wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 d, da, db, scale_d, 1, 1, 0, 0 (both operands K-major
// in shared memory): the operands are read now, the accumulators written at the wait_group that covers it
inline void wgmma_issue(Fiber *W, unsigned base) {
    const WgmmaLane *l0 = (const WgmmaLane *)(uintptr_t)W[0].in;
    for (unsigned l = 1; l < 32; l++) {
        const WgmmaLane *io = (const WgmmaLane *)(uintptr_t)W[l].in;
        if (io->da != l0->da || io->db != l0->db || io->scale_d != l0->scale_d)
            fatal("%s at %s:%d: lanes 0 and %u of warp %u give different descriptors or scale-d", op_name(OP_WGMMA), W[l].file, W[l].line, l, base / 32);
    }
    WgmmaWarp &ww = wgmma_warp(base);
    if (ww.n == kMaxWgmma) fatal("%s at %s:%d: more than %u in flight in warp %u", op_name(OP_WGMMA), W[0].file, W[0].line, kMaxWgmma, base / 32);
    WgmmaOp &op = ww.op[ww.n++];
    const unsigned rank = base / 32 % 4; // the warp's rows of A: 16 rank ..
    op.scale_d = l0->scale_d;
    op.group = ww.groups;
    op.file = W[0].file;
    op.line = W[0].line;
    for (unsigned l = 0; l < 32; l++) op.d[l] = ((const WgmmaLane *)(uintptr_t)W[l].in)->d;
    unsigned q = 0;
    for (unsigned r = 0; r < 16 + 128; r++)
        for (unsigned kh = 0; kh < 2; kh++, q++) {
            const unsigned char *p = r < 16 ? wgmma_row(l0->da, 16 * rank + r, kh, W[0].file, W[0].line) : wgmma_row(l0->db, r - 16, kh, W[0].file, W[0].line);
            op.row[q] = p;
            std::memcpy(op.bytes[q], p, 16);
            for (unsigned e = 0; e < 8; e++) {
                const float v = bf16_bits_to_float((uint32_t)p[2 * e] | ((uint32_t)p[2 * e + 1] << 8));
                if (r < 16) op.A[r][8 * kh + e] = v;
                else op.B[r - 16][8 * kh + e] = v;
            }
        }
}
// wgmma.wait_group.sync.aligned n: every committed group of the warp's but the newest n completes, in issue
// order: D (16 x 128, this warp's rows) = A B (+ D with scale-d), each dot product summed in double and rounded
// once, as the mma.sync emulation; lane l holds d[i] = D(l / 4 + 8 ((i / 2) % 2), 8 (i / 4) + 2 (l % 4) + i % 2)
// (ptx isa, "register fragments: matrix fragments for wgmma.mma_async.m64nNk16"). an operand row that changed
// in shared memory since the issue stops the program: the hardware reads it at some time in between
inline void wgmma_wait(Fiber *W, unsigned base) {
    const long long n = W[0].arg;
    for (unsigned l = 1; l < 32; l++)
        if (W[l].arg != n) fatal("%s at %s:%d: lanes 0 and %u of warp %u wait for different counts", op_name(OP_WGMMA_WAIT), W[l].file, W[l].line, l, base / 32);
    WgmmaWarp &ww = wgmma_warp(base);
    unsigned k = 0;
    for (unsigned j = 0; j < ww.n; j++) {
        WgmmaOp &op = ww.op[j];
        if ((long long)op.group >= (long long)ww.groups - n) { // not covered: stays in flight
            if (k != j) ww.op[k] = op;
            k++;
            continue;
        }
        // a cp.async into a row it reads, issued before it completes, may land first on hardware (the emulator
        // lands copies at their wait_group, the latest they can): the same race
        const unsigned char *lo = op.row[0], *hi = op.row[0];
        for (unsigned q = 1; q < 16 * 2 + 128 * 2; q++) lo = op.row[q] < lo ? op.row[q] : lo, hi = op.row[q] > hi ? op.row[q] : hi;
        for (unsigned t = 0; t < g.nthreads; t++)
            for (unsigned c = 0; c < g.fib[t].n_cp; c++) {
                const unsigned char *dst = (const unsigned char *)g.fib[t].cp[c].dst;
                if (dst + 16 <= lo || dst >= hi + 16) continue;
                for (unsigned q = 0; q < 16 * 2 + 128 * 2; q++)
                    if (dst < op.row[q] + 16 && op.row[q] < dst + 16)
                        fatal("%s at %s:%d (warp %u): thread %u has a cp.async in flight into shared memory it reads (byte %td of the dynamic shared memory) "
                              "at the %s at %s:%d that completes it: on hardware the copy may land first",
                              op_name(OP_WGMMA), op.file, op.line, base / 32, t, (const char *)dst - g.smem_base, op_name(OP_WGMMA_WAIT), W[0].file, W[0].line);
            }
        for (unsigned q = 0; q < 16 * 2 + 128 * 2; q++)
            if (std::memcmp(op.row[q], op.bytes[q], 16) != 0)
                fatal("%s at %s:%d (warp %u): shared memory it reads (byte %td of the dynamic shared memory) changed before the %s at %s:%d that "
                      "completes it",
                      op_name(OP_WGMMA), op.file, op.line, base / 32, (const char *)op.row[q] - g.smem_base, op_name(OP_WGMMA_WAIT), W[0].file,
                      W[0].line);
        for (unsigned l = 0; l < 32; l++)
            for (unsigned i = 0; i < 64; i++) {
                const unsigned r = l / 4 + 8 * ((i / 2) % 2), c = 8 * (i / 4) + 2 * (l % 4) + i % 2;
                double s = op.scale_d ? (double)op.d[l][i] : 0.0;
                for (unsigned kk = 0; kk < 16; kk++) s += (double)op.A[r][kk] * (double)op.B[c][kk];
                op.d[l][i] = (float)s;
            }
    }
    ww.n = k;
}
// the end of a block: no warp may leave a wgmma in flight
inline void wgmma_block_end() {
    if (!g_wgmma) return;
    for (unsigned w = 0; w < (g.nthreads + 31) / 32; w++)
        if (g_wgmma[w].n)
            fatal("warp %u of block (%u,%u,%u) exited with %u wgmma.mma_async in flight (the first at %s:%d) not completed by a wgmma.wait_group", w,
                  g.block_idx.x, g.block_idx.y, g.block_idx.z, g_wgmma[w].n, g_wgmma[w].op[0].file, g_wgmma[w].op[0].line);
}

// the lanes in grp (bits) of the warp starting at linear id base all wait with the same mask
inline void release_warp(unsigned base, unsigned grp) {
    Fiber *W = g.fib + base;
    unsigned l0 = (unsigned)__builtin_ctz(grp);
    const Fiber &a = W[l0];
    for (unsigned m = grp; m; m &= m - 1) {
        const Fiber &b = W[__builtin_ctz(m)];
        if (b.op != a.op || b.width != a.width || b.signed_ != a.signed_)
            fatal("lanes of warp %u wait at different warp collectives with mask 0x%08x: lane %u at %s (width %d, %s:%d), "
                  "lane %u at %s (width %d, %s:%d)",
                  base / 32, a.mask, l0, op_name(a.op), a.width, a.file, a.line, (unsigned)__builtin_ctz(m), op_name(b.op),
                  b.width, b.file, b.line);
    }
    if (a.op == OP_LDMATRIX) {
        if (grp != 0xffffffffu)
            fatal("%s at %s:%d: every lane of warp %u must execute it (.aligned), but only lanes 0x%08x did (the rest exited "
                  "or are beyond the block)",
                  op_name(a.op), a.file, a.line, base / 32, grp);
        ldmatrix_x4(W, base);
        for (unsigned l = 0; l < 32; l++) W[l].state = RUNNABLE;
        return;
    }
    if (a.op == OP_WGMMA || a.op == OP_WGMMA_COMMIT || a.op == OP_WGMMA_WAIT) {
        if (grp != 0xffffffffu)
            fatal("%s at %s:%d: every lane of warp %u must execute it (.aligned), but only lanes 0x%08x did (the rest exited "
                  "or are beyond the block)",
                  op_name(a.op), a.file, a.line, base / 32, grp);
        if (a.op == OP_WGMMA) wgmma_issue(W, base);
        else if (a.op == OP_WGMMA_COMMIT) wgmma_warp(base).groups++;
        else wgmma_wait(W, base);
        for (unsigned l = 0; l < 32; l++) W[l].state = RUNNABLE;
        return;
    }
    if (a.op == OP_MMA_BF16) {
        if (grp != 0xffffffffu)
            fatal("%s at %s:%d: every lane of warp %u must execute it (.aligned), but only lanes 0x%08x did (the rest exited "
                  "or are beyond the block)",
                  op_name(a.op), a.file, a.line, base / 32, grp);
        mma_bf16(W);
        for (unsigned l = 0; l < 32; l++) W[l].state = RUNNABLE;
        return;
    }
    // votes and reductions over the participating lanes
    unsigned ballot = 0;
    uint64_t red = 0;
    bool firstv = true;
    for (unsigned m = grp; m; m &= m - 1) {
        const Fiber &b = W[__builtin_ctz(m)];
        if (b.pred) ballot |= 1u << __builtin_ctz(m);
        uint32_t v = (uint32_t)b.in;
        switch (a.op) {
        case OP_REDUCE_ADD: red = (uint32_t)(red + v); break;
        case OP_REDUCE_MIN: red = firstv ? v : (a.signed_ ? (uint32_t)((int32_t)v < (int32_t)red ? v : red) : (v < red ? v : red)); break;
        case OP_REDUCE_MAX: red = firstv ? v : (a.signed_ ? (uint32_t)((int32_t)v > (int32_t)red ? v : red) : (v > red ? v : red)); break;
        case OP_REDUCE_AND: red = firstv ? v : (red & v); break;
        case OP_REDUCE_OR: red |= v; break;
        case OP_REDUCE_XOR: red ^= v; break;
        default: break;
        }
        firstv = false;
    }
    for (unsigned m = grp; m; m &= m - 1) {
        unsigned lane = (unsigned)__builtin_ctz(m);
        Fiber &f = W[lane];
        switch (a.op) {
        case OP_SHFL_IDX:
        case OP_SHFL_UP:
        case OP_SHFL_DOWN:
        case OP_SHFL_XOR: {
            // ptx shfl.sync: the segment of `width` lanes holding this lane is [minLane, maxLane]
            unsigned segmask = (32u - (unsigned)f.width) & 31u;
            long long minLane = lane & segmask, maxLane = minLane | (31u & ~segmask), j;
            bool ok;
            if (f.op == OP_SHFL_UP) {
                j = (long long)lane - (long long)(uint32_t)f.arg;
                ok = j >= minLane;
            } else if (f.op == OP_SHFL_DOWN) {
                j = (long long)lane + (long long)(uint32_t)f.arg;
                ok = j <= maxLane;
            } else if (f.op == OP_SHFL_XOR) {
                j = (long long)(lane ^ (uint32_t)f.arg);
                ok = j <= maxLane;
            } else {
                j = minLane | ((uint32_t)f.arg & 31u & ~segmask);
                ok = true;
            }
            if (!ok) j = lane; // outside the segment: the lane's own value, as cuda documents
            // a source lane that does not take part (exited, not in the mask, beyond the block) gives
            // an undefined value on hardware: here all one bits (NaN for float/double, -1 for ints)
            f.out = (grp >> j) & 1u ? W[j].in : ~(uint64_t)0;
            break;
        }
        case OP_BALLOT: f.out = ballot; break;
        case OP_ANY: f.out = ballot != 0; break;
        case OP_ALL: f.out = ballot == grp; break;
        case OP_REDUCE_ADD:
        case OP_REDUCE_MIN:
        case OP_REDUCE_MAX:
        case OP_REDUCE_AND:
        case OP_REDUCE_OR:
        case OP_REDUCE_XOR: f.out = red; break;
        default: f.out = 0; break;
        }
    }
    for (unsigned m = grp; m; m &= m - 1) W[__builtin_ctz(m)].state = RUNNABLE;
}

// the warp collectives of the warp starting at linear id base that every live lane of their mask
// has reached: released; false when none is
inline bool resolve_warp(unsigned base) {
    Fiber *F = g.fib;
    unsigned n = g.nthreads, cnt = n - base < 32 ? n - base : 32, livem = 0, waiting = 0;
    bool any = false;
    for (unsigned l = 0; l < cnt; l++) {
        if (F[base + l].state != DONE) livem |= 1u << l;
        if (F[base + l].state == WAIT_WARP) waiting |= 1u << l;
    }
    for (unsigned unseen = waiting; unseen;) { // lanes whose mask group is not yet looked at
        unsigned mask = F[base + __builtin_ctz(unseen)].mask, grp = 0;
        for (unsigned m = waiting; m; m &= m - 1)
            if (F[base + __builtin_ctz(m)].mask == mask) grp |= 1u << __builtin_ctz(m);
        unseen &= ~grp;
        if ((mask & livem) == grp) {
            release_warp(base, grp);
            any = true;
        }
    }
    return any;
}

// all fibers wait: release what is complete; false when nothing is (a deadlock)
inline bool resolve() {
    Fiber *F = g.fib;
    unsigned n = g.nthreads, live = 0, at_block = 0;
    for (unsigned i = 0; i < n; i++) {
        live += F[i].state != DONE;
        at_block += F[i].state == WAIT_BLOCK;
    }
    if (at_block && at_block == live) {
        release_block();
        return true;
    }
    bool any = false;
    for (unsigned base = 0; base < n; base += 32) any = resolve_warp(base) || any;
    return any;
}

[[noreturn]] inline void deadlock() {
    char buf[8192], ctx[1024];
    Fiber *F = g.fib;
    where(ctx, sizeof ctx);
    int k = std::snprintf(buf, sizeof buf,
                          "cuemu: deadlock in %s: every thread still running waits at a barrier that cannot complete:\n", ctx);
    // runs of consecutive threads in the same state at the same place
    unsigned runs = 0;
    for (unsigned i = 0; i < g.nthreads && (size_t)k < sizeof buf - 256;) {
        unsigned j = i + 1;
        auto same = [&](const Fiber &a, const Fiber &b) {
            if (a.state != b.state) return false;
            if (a.state == DONE || a.state == RUNNABLE) return true;
            return a.op == b.op && a.line == b.line && a.file == b.file && (a.state != WAIT_WARP || a.mask == b.mask);
        };
        while (j < g.nthreads && same(F[i], F[j])) j++;
        if (++runs > 40) {
            k += std::snprintf(buf + k, sizeof buf - (size_t)k, "  ...\n");
            break;
        }
        const Fiber &a = F[i], &b = F[j - 1];
        if (j - 1 == i)
            k += std::snprintf(buf + k, sizeof buf - (size_t)k, "  thread (%u,%u,%u) [%u]: ", a.tid.x, a.tid.y, a.tid.z, a.lin);
        else
            k += std::snprintf(buf + k, sizeof buf - (size_t)k, "  threads (%u,%u,%u)..(%u,%u,%u) [%u-%u]: ", a.tid.x, a.tid.y,
                               a.tid.z, b.tid.x, b.tid.y, b.tid.z, a.lin, b.lin);
        if (a.state == DONE) k += std::snprintf(buf + k, sizeof buf - (size_t)k, "exited\n");
        else if (a.state == WAIT_BLOCK)
            k += std::snprintf(buf + k, sizeof buf - (size_t)k, "wait at %s (%s:%d)\n", op_name(a.op), a.file, a.line);
        else if (a.state == WAIT_WARP)
            k += std::snprintf(buf + k, sizeof buf - (size_t)k, "wait at %s(mask 0x%08x) (%s:%d)\n", op_name(a.op), a.mask,
                               a.file, a.line);
        else k += std::snprintf(buf + k, sizeof buf - (size_t)k, "runnable\n");
        i = j;
    }
    std::fflush(stdout);
    write_err(buf);
    std::abort();
}

// a thread gets a stack when it starts and gives it back when it exits; the most recently freed
// one is reused first, so threads that never wait all run on the same (cache-warm) stack
inline unsigned take_stack() {
    if (g.n_free_stacks) return g.free_stacks[--g.n_free_stacks];
    if (g.n_stacks_made >= kMaxThreads) fatal("more than %u fiber stacks (emulator bug)", kMaxThreads);
    return g.n_stacks_made++;
}
inline void give_stack(unsigned s) { g.free_stacks[g.n_free_stacks++] = s; }

inline void run_block() {
    Fiber *F = g.fib;
    unsigned n = g.nthreads, bx = g.block_dim.x, by = g.block_dim.y;
    for (unsigned i = 0; i < n; i++) {
        Fiber &f = F[i];
        f.tid = uint3{i % bx, (i / bx) % by, i / (bx * by)};
        f.lin = i;
        f.state = RUNNABLE;
        f.started = 0;
        f.op = 0;
        f.file = "";
        f.line = 0;
        f.n_cp = f.cp_group = 0;
    }
    if (g_wgmma)
        for (unsigned w = 0; w < (n + 31) / 32; w++) g_wgmma[w].n = g_wgmma[w].groups = 0;
    g.live = n;
    const unsigned nw = (n + 31) / 32;
    for (;;) {
        // each warp alone runs as far as it can (through its own warp collectives, up to a block
        // barrier or its end) before the next one starts: what the others then read in shared memory
        // is what they would read if that warp had run far ahead of them
        schedule_order(g.worder, nw);
        for (unsigned w = 0; w < nw; w++) {
            const unsigned base = g.worder[w] * 32, cnt = n - base < 32 ? n - base : 32;
            do {
                schedule_order(g.order, cnt);
                for (unsigned k = 0; k < cnt; k++) {
                    Fiber &f = F[base + g.order[k]];
                    if (f.state != RUNNABLE) continue;
                    if (!f.started) {
                        f.stack = take_stack();
                        fiber_start(&f, f.stack);
                        f.started = 1;
                    }
                    switch_in(&f);
                    if (f.state == DONE) give_stack(f.stack);
                }
            } while (resolve_warp(base));
        }
        if (!g.live) {
            wgmma_block_end();
            return;
        }
        if (!resolve()) deadlock();
    }
}

// ---- the launch ----------------------------------------------------------------------------------
inline cudaError_t check_launch(const void *kernel, dim3 grid, dim3 block, size_t smem) {
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!kernel) {
        warn("kernel launch #%llu: null kernel", g.launches);
        return cudaErrorInvalidDeviceFunction;
    }
    if (!grid.x || !grid.y || !grid.z || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535 || !block.x ||
        !block.y || !block.z || block.x > 1024 || block.y > 1024 || block.z > 64 || threads > kMaxThreads) {
        warn("kernel launch #%llu: invalid configuration grid (%u,%u,%u) block (%u,%u,%u): at most 1024 threads a block, "
             "block (1024,1024,64), grid (2^31-1,65535,65535), none zero",
             g.launches, grid.x, grid.y, grid.z, block.x, block.y, block.z);
        return cudaErrorInvalidConfiguration;
    }
    size_t limit = kSmemDefault;
    for (size_t i = 0; i < g.n_optin; i++)
        if (g.optin[i].fn == kernel) limit = (size_t)g.optin[i].bytes > limit ? (size_t)g.optin[i].bytes : limit;
    if (smem > limit) {
        warn("kernel launch #%llu: %zu bytes of dynamic shared memory, more than the kernel's limit of %zu (above %zu "
             "needs cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize), at most %zu)",
             g.launches, smem, limit, kSmemDefault, smem_optin());
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

inline void ensure_smem(size_t bytes) {
    size_t need = round_up(bytes ? bytes : 1, g.page) + g.page;
    if (g.smem_map_bytes < need) {
        if (g.smem_map) munmap(g.smem_map, g.smem_map_bytes);
        need = need < round_up(kSmemOptin, g.page) + g.page ? round_up(kSmemOptin, g.page) + g.page : need;
        void *p = mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) fatal("cannot map %zu bytes of dynamic shared memory", need);
        g.smem_map = (char *)p;
        g.smem_map_bytes = need;
        mprotect(g.smem_map + need - g.page, g.page, PROT_NONE);
    }
    g.smem_bytes = bytes;
    g.smem_base = g.smem_map + g.smem_map_bytes - g.page - round_up(bytes, 16);
}

inline void launch(const void *kernel, dim3 grid, dim3 block, size_t smem, void (*body)(void *), void (*open_args)(void *),
                   void *ctx) {
    init();
    unsigned long long no = ++g.launches;
    const char *name = g.next_name;
    g.next_name = nullptr;
    if (g.in_launch) fatal("kernel launch #%llu from inside a kernel (dynamic parallelism is not emulated)", no);
    cudaError_t e = check_launch(kernel, grid, block, smem);
    if (e != cudaSuccess) {
        set_error(e); // the launch does not run; cudaGetLastError() returns why
        return;
    }
    unsigned n = block.x * block.y * block.z;
    if (g.fib_cap < n) {
        Fiber *f = (Fiber *)std::realloc(g.fib, sizeof(Fiber) * kMaxThreads);
        if (!f) fatal("out of host memory for fibers");
        g.fib = f;
        g.fib_cap = kMaxThreads;
    }
    ensure_altstack();
    ensure_smem(smem);
    g.launch_no = no;
    g.kernel = kernel;
    g.kernel_name = name;
    g.grid_dim = grid;
    g.block_dim = block;
    g.nthreads = n;
    g.body = body;
    g.body_ctx = ctx;
    g.in_launch = 1;
    {
        DeviceAccess acc;
        open_args(ctx); // the allocations the arguments point into
        // blocks in linear order b = x + grid.x*(y + grid.y*z), reversed, or permuted by b -> (a*b + c) mod
        // total with a random a prime to total (a permutation without a table, new every launch)
        const uint64_t total = (uint64_t)grid.x * grid.y * grid.z;
        uint64_t pa = 1, pc = 0;
        if (g.sched == 2 && total > 1) {
            do pa = 1 + next_rand() % (total - 1);
            while (std::gcd(pa, total) != 1);
            pc = next_rand() % total;
        }
        char *ss = smem_static_lo(), *se = smem_static_hi();
        for (uint64_t k = 0; k < total; k++) {
            uint64_t b = g.sched == 1 ? total - 1 - k : (g.sched == 2 ? (uint64_t)(((unsigned __int128)pa * k + pc) % total) : k);
            g.block_idx = uint3{(unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y), (unsigned)(b / grid.x / grid.y)};
            if (g.smem_poison) {
                if (smem) std::memset(g.smem_base, 0xff, smem);
                if (se > ss) std::memset(ss, 0xff, (size_t)(se - ss));
            } else if (smem) std::memset(g.smem_base, 0, smem);
            run_block();
        }
    }
    g.in_launch = 0;
    g.block_idx = uint3{0, 0, 0};
}

// an argument that is a pointer into device memory, or a struct holding such pointers, opens that
// allocation for the launch (see DeviceAccess)
template <typename T>
inline void open_arg(const T &v) {
    if constexpr (std::is_pointer<T>::value) {
        if constexpr (!std::is_function<typename std::remove_pointer<T>::type>::value) open_pointer((const void *)v);
    } else if constexpr (std::is_class<T>::value && std::is_trivially_copyable<T>::value && sizeof(T) >= sizeof(void *)) {
        unsigned char raw[sizeof(T)];
        std::memcpy(raw, (const void *)&v, sizeof(T));
        for (size_t o = 0; o + sizeof(void *) <= sizeof(T); o += alignof(void *)) {
            const void *p;
            std::memcpy(&p, raw + o, sizeof p);
            open_pointer(p);
        }
    }
}

template <typename... P>
struct LaunchBody {
    void (*kernel)(P...);
    std::tuple<P...> args;
    static void open(void *self) {
        std::apply([](const auto &...a) { (open_arg(a), ...); }, static_cast<LaunchBody *>(self)->args);
    }
    static void run(void *self) { // every thread gets its own copy of the arguments
        LaunchBody *b = static_cast<LaunchBody *>(self);
        std::apply(b->kernel, b->args);
    }
};

// ---- built-in variables ----------------------------------------------------------------------------
inline const uint3 &thread_idx() {
    if (__builtin_expect(!g_cur, 0)) fatal("threadIdx used outside a kernel");
    return g_cur->tid;
}
inline const uint3 &block_idx() {
    if (__builtin_expect(!g.in_launch, 0)) fatal("blockIdx used outside a kernel");
    return g.block_idx;
}
inline const dim3 &block_dim() {
    if (__builtin_expect(!g.in_launch, 0)) fatal("blockDim used outside a kernel");
    return g.block_dim;
}
inline const dim3 &grid_dim() {
    if (__builtin_expect(!g.in_launch, 0)) fatal("gridDim used outside a kernel");
    return g.grid_dim;
}

// ---- the intrinsics as members of a call-site object: `__shfl_xor_sync(m, v, 1)` expands to
//      `::cuemu::At{__FILE__, __LINE__}.shfl_xor_sync(m, v, 1)`, so messages name the caller's line
template <typename T>
inline uint64_t to_bits(T v) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "warp shuffles move values of at most 8 bytes");
    uint64_t u = 0;
    std::memcpy(&u, &v, sizeof(T));
    return u;
}
template <typename T>
inline T from_bits(uint64_t u) {
    T v;
    std::memcpy(&v, &u, sizeof(T));
    return v;
}

struct At {
    const char *file;
    int line;

    void syncthreads() const { wait_block(in_kernel("__syncthreads", file, line), OP_SYNCTHREADS, 1, file, line); }
    int syncthreads_count(int p) const { return (int)sync_red(OP_SYNC_COUNT, p); }
    int syncthreads_and(int p) const { return (int)sync_red(OP_SYNC_AND, p); }
    int syncthreads_or(int p) const { return (int)sync_red(OP_SYNC_OR, p); }
    void syncwarp(unsigned mask = 0xffffffffu) const { warp(OP_SYNCWARP, mask, 0, 0, 32, 0); }

    template <typename T> T shfl_sync(unsigned mask, T var, int srcLane, int width = 32) const {
        return from_bits<T>(warp(OP_SHFL_IDX, mask, to_bits(var), srcLane, width, 0));
    }
    template <typename T> T shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) const {
        return from_bits<T>(warp(OP_SHFL_UP, mask, to_bits(var), delta, width, 0));
    }
    template <typename T> T shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) const {
        return from_bits<T>(warp(OP_SHFL_DOWN, mask, to_bits(var), delta, width, 0));
    }
    template <typename T> T shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32) const {
        return from_bits<T>(warp(OP_SHFL_XOR, mask, to_bits(var), laneMask, width, 0));
    }
    unsigned ballot_sync(unsigned mask, int p) const { return (unsigned)warp(OP_BALLOT, mask, 0, 0, 32, p != 0); }
    int any_sync(unsigned mask, int p) const { return (int)warp(OP_ANY, mask, 0, 0, 32, p != 0); }
    int all_sync(unsigned mask, int p) const { return (int)warp(OP_ALL, mask, 0, 0, 32, p != 0); }
    unsigned reduce_add_sync(unsigned mask, unsigned v) const { return (unsigned)red(OP_REDUCE_ADD, mask, v, 0); }
    int reduce_add_sync(unsigned mask, int v) const { return (int)(uint32_t)red(OP_REDUCE_ADD, mask, (uint32_t)v, 1); }
    unsigned reduce_min_sync(unsigned mask, unsigned v) const { return (unsigned)red(OP_REDUCE_MIN, mask, v, 0); }
    int reduce_min_sync(unsigned mask, int v) const { return (int)(uint32_t)red(OP_REDUCE_MIN, mask, (uint32_t)v, 1); }
    unsigned reduce_max_sync(unsigned mask, unsigned v) const { return (unsigned)red(OP_REDUCE_MAX, mask, v, 0); }
    int reduce_max_sync(unsigned mask, int v) const { return (int)(uint32_t)red(OP_REDUCE_MAX, mask, (uint32_t)v, 1); }
    unsigned reduce_and_sync(unsigned mask, unsigned v) const { return (unsigned)red(OP_REDUCE_AND, mask, v, 0); }
    unsigned reduce_or_sync(unsigned mask, unsigned v) const { return (unsigned)red(OP_REDUCE_OR, mask, v, 0); }
    unsigned reduce_xor_sync(unsigned mask, unsigned v) const { return (unsigned)red(OP_REDUCE_XOR, mask, v, 0); }
    // d += a b: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (section 10); every lane of the warp calls it
    void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) const {
        Fiber *f = in_kernel(op_name(OP_MMA_BF16), file, line);
        MmaLane io = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}, {d[0], d[1], d[2], d[3]}};
        f->signed_ = 0;
        wait_warp(f, OP_MMA_BF16, 0xffffffffu, (uint64_t)(uintptr_t)&io, 0, 32, 0, file, line);
        for (int i = 0; i < 4; i++) d[i] = io.d[i];
    }

    // wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 (section 10): every lane of each warp of the
    // warpgroup calls it; d is written at the wgmma_wait that covers it
    void wgmma_m64n128k16_bf16(float (&d)[64], uint64_t da, uint64_t db, int scale_d) const {
        Fiber *f = in_kernel(op_name(OP_WGMMA), file, line);
        WgmmaLane io = {d, da, db, scale_d != 0};
        f->signed_ = 0;
        wait_warp(f, OP_WGMMA, 0xffffffffu, (uint64_t)(uintptr_t)&io, 0, 32, 0, file, line);
    }
    // wgmma.fence.sync.aligned and fence.proxy.async.shared::cta: the emulator's shared memory and registers
    // are one proxy, so they only check that a kernel runs them
    void wgmma_fence() const { in_kernel("wgmma.fence", file, line); }
    void fence_proxy_async() const { in_kernel("fence.proxy.async", file, line); }
    void wgmma_commit() const {
        Fiber *f = in_kernel(op_name(OP_WGMMA_COMMIT), file, line);
        f->signed_ = 0;
        wait_warp(f, OP_WGMMA_COMMIT, 0xffffffffu, 0, 0, 32, 0, file, line);
    }
    void wgmma_wait(int n) const {
        Fiber *f = in_kernel(op_name(OP_WGMMA_WAIT), file, line);
        f->signed_ = 0;
        wait_warp(f, OP_WGMMA_WAIT, 0xffffffffu, 0, n, 32, 0, file, line);
    }
    // the shared-memory address of p (__cvta_generic_to_shared) for a descriptor: its offset into the block's
    // dynamic shared memory
    unsigned smem_u32(const void *p) const {
        in_kernel("__cvta_generic_to_shared", file, line);
        const char *c = (const char *)p;
        if (c < g.smem_base || c >= g.smem_base + g.smem_bytes)
            fatal("__cvta_generic_to_shared at %s:%d: %p is not in the block's dynamic shared memory (the only kind wgmma descriptors are emulated for)", file,
                  line, p);
        return (unsigned)(c - g.smem_base);
    }

    // r = four 8x8 b16 matrices (transposed when trans), row addresses from the lanes: ldmatrix.sync.aligned.
    // m8n8.x4[.trans].shared.b16 (section 10); every lane of the warp calls it
    void ldmatrix_x4(uint32_t (&r)[4], const void *row, int trans) const {
        Fiber *f = in_kernel(op_name(OP_LDMATRIX), file, line);
        LdsmLane io = {row, {0, 0, 0, 0}};
        f->signed_ = 0;
        wait_warp(f, OP_LDMATRIX, 0xffffffffu, (uint64_t)(uintptr_t)&io, trans != 0, 32, 0, file, line);
        for (int i = 0; i < 4; i++) r[i] = io.r[i];
    }
    // cp.async.cg.shared.global [dst], [src], 16, src_bytes: 16 bytes into shared memory, the first src_bytes
    // (0 or 16) from global memory, the rest zeros. the source is read now; the bytes land in shared memory
    // only when a cp_async_wait of this thread covers the copy's group, so a tile read before its wait
    // reads what was there before (the poison: section 1)
    void cp_async_16(void *dst, const void *src, int src_bytes) const {
        Fiber *f = in_kernel("cp.async", file, line);
        if (((uintptr_t)dst & 15) || !in_smem(dst, 16))
            fatal("cp.async at %s:%d: destination %p is not 16 bytes of shared memory at a 16-byte boundary", file, line, dst);
        if (src_bytes != 0 && src_bytes != 16) fatal("cp.async at %s:%d: src_bytes %d, the kernels use 0 or 16", file, line, src_bytes);
        if (src_bytes && (((uintptr_t)src & 15) || !is_device_pointer(src)))
            fatal("cp.async at %s:%d: source %p is not device memory at a 16-byte boundary", file, line, src);
        if (f->n_cp == kMaxCpAsync) fatal("cp.async at %s:%d: more than %u copies in flight in one thread", file, line, kMaxCpAsync);
        CpAsync &c = f->cp[f->n_cp++];
        c.dst = (char *)dst;
        c.group = f->cp_group;
        std::memset(c.data, 0, 16);
        if (src_bytes) std::memcpy(c.data, src, 16);
    }
    // cp.async.commit_group: the copies issued since the last commit form a group
    void cp_async_commit() const { in_kernel("cp.async.commit_group", file, line)->cp_group++; }
    // cp.async.wait_group n: every committed group but the newest n has landed (copies not yet committed
    // are not waited for, as in ptx)
    void cp_async_wait(int n) const {
        Fiber *f = in_kernel("cp.async.wait_group", file, line);
        unsigned k = 0;
        for (unsigned i = 0; i < f->n_cp; i++) {
            CpAsync &c = f->cp[i];
            if ((long long)c.group < (long long)f->cp_group - n) std::memcpy(c.dst, c.data, 16);
            else f->cp[k++] = c;
        }
        f->n_cp = k;
    }

  private:
    uint64_t sync_red(unsigned op, int p) const {
        Fiber *f = in_kernel(op_name(op), file, line);
        wait_block(f, op, p != 0, file, line);
        return f->out;
    }
    uint64_t warp(unsigned op, unsigned mask, uint64_t in, long long arg, int width, int pred) const {
        Fiber *f = in_kernel(op_name(op), file, line);
        f->signed_ = 0;
        return wait_warp(f, op, mask, in, arg, width, pred, file, line);
    }
    uint64_t red(unsigned op, unsigned mask, uint32_t v, int is_signed) const {
        Fiber *f = in_kernel(op_name(op), file, line);
        f->signed_ = (unsigned char)is_signed;
        return wait_warp(f, op, mask, v, 0, 32, 0, file, line);
    }
};

} // namespace cuemu

// =================================================================================================
// 3. built-in variables (read-only), and 4. the launch and the intrinsics
// =================================================================================================
#define threadIdx (::cuemu::thread_idx())
#define blockIdx (::cuemu::block_idx())
#define blockDim (::cuemu::block_dim())
#define gridDim (::cuemu::grid_dim())
static constexpr int warpSize = 32;

#define CUEMU_AT \
    ::cuemu::At { __FILE__, __LINE__ }
#define __syncthreads CUEMU_AT.syncthreads
#define __syncthreads_count CUEMU_AT.syncthreads_count
#define __syncthreads_and CUEMU_AT.syncthreads_and
#define __syncthreads_or CUEMU_AT.syncthreads_or
#define __syncwarp CUEMU_AT.syncwarp
#define __shfl_sync CUEMU_AT.shfl_sync
#define __shfl_up_sync CUEMU_AT.shfl_up_sync
#define __shfl_down_sync CUEMU_AT.shfl_down_sync
#define __shfl_xor_sync CUEMU_AT.shfl_xor_sync
#define __ballot_sync CUEMU_AT.ballot_sync
#define __any_sync CUEMU_AT.any_sync
#define __all_sync CUEMU_AT.all_sync
#define __reduce_add_sync CUEMU_AT.reduce_add_sync
#define __reduce_min_sync CUEMU_AT.reduce_min_sync
#define __reduce_max_sync CUEMU_AT.reduce_max_sync
#define __reduce_and_sync CUEMU_AT.reduce_and_sync
#define __reduce_or_sync CUEMU_AT.reduce_or_sync
#define __reduce_xor_sync CUEMU_AT.reduce_xor_sync
// the tensor-core mma the kernels write as inline ptx on a gpu (section 10)
#define cuemu_mma_m16n8k16_bf16 CUEMU_AT.mma_m16n8k16_bf16
#define cuemu_ldmatrix_x4 CUEMU_AT.ldmatrix_x4
#define cuemu_cp_async_16 CUEMU_AT.cp_async_16
#define cuemu_cp_async_commit CUEMU_AT.cp_async_commit
#define cuemu_cp_async_wait CUEMU_AT.cp_async_wait
#define cuemu_wgmma_m64n128k16_bf16 CUEMU_AT.wgmma_m64n128k16_bf16
#define cuemu_wgmma_fence CUEMU_AT.wgmma_fence
#define cuemu_wgmma_commit CUEMU_AT.wgmma_commit
#define cuemu_wgmma_wait CUEMU_AT.wgmma_wait
#define cuemu_fence_proxy_async CUEMU_AT.fence_proxy_async
#define cuemu_smem_u32 CUEMU_AT.smem_u32

// memory fences order nothing here: one thread runs at a time
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
[[noreturn]] inline void __trap() { ::cuemu::fatal("__trap()"); }
inline long long clock64() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// kernel<<<grid, block, smem>>>(args...) becomes cuemu_launch(kernel, grid, block, smem, args...):
// the arguments convert to the kernel's parameter types as in a call. the launch runs to the end
// before this returns (as if the stream were synchronised); a bad configuration runs nothing and
// is returned by the next cudaGetLastError(), like a real launch.
template <typename... P, typename... A>
inline void cuemu_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, A &&...args) {
    static_assert(sizeof...(P) == sizeof...(A), "cuemu_launch: the number of arguments differs from the kernel's");
    ::cuemu::LaunchBody<P...> body{kernel, std::tuple<P...>(std::forward<A>(args)...)};
    ::cuemu::launch(reinterpret_cast<const void *>(kernel), grid, block, smem, &::cuemu::LaunchBody<P...>::run,
                    &::cuemu::LaunchBody<P...>::open, &body);
}
// the next launch's name in messages (optional)
inline void cuemu_name_next_launch(const char *name) { ::cuemu::g.next_name = name; }
// the running launch's dynamic shared memory: smem bytes, 16-byte aligned, zero at the start of
// every block (hardware leaves it undefined), shared by the block's threads; its end abuts a guard
// page, so an access past it faults
inline void *cuemu_dynamic_smem() {
    if (!::cuemu::g.in_launch) ::cuemu::fatal("cuemu_dynamic_smem() called outside a kernel");
    return ::cuemu::g.smem_base;
}
// test helpers: live device allocations and their requested bytes; device pointer check
inline size_t cuemu_live_allocations() { return ::cuemu::g.n_allocs; }
inline size_t cuemu_live_bytes() {
    size_t b = 0;
    for (size_t i = 0; i < ::cuemu::g.n_allocs; i++) b += ::cuemu::g.allocs[i].size;
    return b;
}
inline bool cuemu_is_device_pointer(const void *p) { return ::cuemu::is_device_pointer(p); }
inline unsigned long long cuemu_launch_count() { return ::cuemu::g.launches; }
// the emulator's own tests switch the schedule and the shared-memory poison between launches (the
// environment variables CUEMU_SCHEDULE and CUEMU_SMEM_POISON set them for a whole program)
inline void cuemu_set_schedule(const char *schedule) {
    ::cuemu::init();
    ::cuemu::set_schedule(schedule);
}
inline void cuemu_set_smem_poison(int on) {
    ::cuemu::init();
    ::cuemu::g.smem_poison = on != 0;
}

// =================================================================================================
// 5. atomics. one fiber runs at a time and none is interrupted inside these, so they are atomic.
//    the overload set is cuda's: other types do not compile, as with nvcc.
// =================================================================================================
#define CUEMU_ATOMIC(name, T, expr)    \
    inline T name(T *address, T val) { \
        T old = *address;              \
        *address = (expr);             \
        return old;                    \
    }
CUEMU_ATOMIC(atomicAdd, int, old + val)
CUEMU_ATOMIC(atomicAdd, unsigned int, old + val)
CUEMU_ATOMIC(atomicAdd, unsigned long long, old + val)
CUEMU_ATOMIC(atomicAdd, float, old + val)
CUEMU_ATOMIC(atomicAdd, double, old + val)
CUEMU_ATOMIC(atomicSub, int, old - val)
CUEMU_ATOMIC(atomicSub, unsigned int, old - val)
CUEMU_ATOMIC(atomicExch, int, val)
CUEMU_ATOMIC(atomicExch, unsigned int, val)
CUEMU_ATOMIC(atomicExch, unsigned long long, val)
CUEMU_ATOMIC(atomicExch, float, val)
CUEMU_ATOMIC(atomicMin, int, val < old ? val : old)
CUEMU_ATOMIC(atomicMin, unsigned int, val < old ? val : old)
CUEMU_ATOMIC(atomicMin, long long, val < old ? val : old)
CUEMU_ATOMIC(atomicMin, unsigned long long, val < old ? val : old)
CUEMU_ATOMIC(atomicMax, int, val > old ? val : old)
CUEMU_ATOMIC(atomicMax, unsigned int, val > old ? val : old)
CUEMU_ATOMIC(atomicMax, long long, val > old ? val : old)
CUEMU_ATOMIC(atomicMax, unsigned long long, val > old ? val : old)
CUEMU_ATOMIC(atomicAnd, int, old &val)
CUEMU_ATOMIC(atomicAnd, unsigned int, old &val)
CUEMU_ATOMIC(atomicAnd, unsigned long long, old &val)
CUEMU_ATOMIC(atomicOr, int, old | val)
CUEMU_ATOMIC(atomicOr, unsigned int, old | val)
CUEMU_ATOMIC(atomicOr, unsigned long long, old | val)
CUEMU_ATOMIC(atomicXor, int, old ^ val)
CUEMU_ATOMIC(atomicXor, unsigned int, old ^ val)
CUEMU_ATOMIC(atomicXor, unsigned long long, old ^ val)
CUEMU_ATOMIC(atomicInc, unsigned int, old >= val ? 0u : old + 1u)
CUEMU_ATOMIC(atomicDec, unsigned int, (old == 0u || old > val) ? val : old - 1u)
#undef CUEMU_ATOMIC
#define CUEMU_ATOMIC_CAS(T)                            \
    inline T atomicCAS(T *address, T compare, T val) { \
        T old = *address;                              \
        if (old == compare) *address = val;            \
        return old;                                    \
    }
CUEMU_ATOMIC_CAS(int)
CUEMU_ATOMIC_CAS(unsigned int)
CUEMU_ATOMIC_CAS(unsigned long long)
CUEMU_ATOMIC_CAS(unsigned short)
#undef CUEMU_ATOMIC_CAS

// =================================================================================================
// 6. math. the standard functions (expf, logf, sqrtf, fmaxf, exp, log, sqrt, sin, cos, pow,
//    sincos, sincosf, isfinite, isnan, fma, ...) are the host's <math.h>/<cmath> ones: results may
//    differ from the gpu's in the last ulp (cuda documents its own error bounds). intrinsics follow.
//    nvcc fuses a*b+c into fma by default (--fmad=true); compile emulated code with
//    -ffp-contract=off and remember that plain expressions may differ there in the last bit.
//    the _rn operations below are never fused on either side: their operands and results pass
//    through an empty asm statement, which the compiler cannot see through.
// =================================================================================================
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
#define CUEMU_OPAQUE(v) __asm__("" \
                                : "+x"(v))
#elif defined(__aarch64__)
#define CUEMU_OPAQUE(v) __asm__("" \
                                : "+w"(v))
#else
#define CUEMU_OPAQUE(v) __asm__("" \
                                : "+m"(v))
#endif
#define CUEMU_RN2(name, T, op) \
    inline T name(T a, T b) {  \
        CUEMU_OPAQUE(a);       \
        CUEMU_OPAQUE(b);       \
        T r = a op b;          \
        CUEMU_OPAQUE(r);       \
        return r;              \
    }
CUEMU_RN2(__fadd_rn, float, +)
CUEMU_RN2(__fsub_rn, float, -)
CUEMU_RN2(__fmul_rn, float, *)
CUEMU_RN2(__fdiv_rn, float, /)
CUEMU_RN2(__dadd_rn, double, +)
CUEMU_RN2(__dsub_rn, double, -)
CUEMU_RN2(__dmul_rn, double, *)
CUEMU_RN2(__ddiv_rn, double, /)
#undef CUEMU_RN2
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline float __frcp_rn(float a) { return __fdiv_rn(1.0f, a); }
inline double __drcp_rn(double a) { return __ddiv_rn(1.0, a); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
// fast intrinsics: the accurate host functions (the gpu's are less accurate). glibc declares
// internal __expf & co. that it does not export, hence macros rather than functions
#define __expf(x) expf(x)
#define __exp10f(x) exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __powf(x, y) powf(x, y)
#define __sincosf(x, s, c) sincosf(x, s, c)
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x > 1.0f ? 1.0f : (x >= 0.0f ? x : 0.0f); } // NaN -> 0
// conversions: round to nearest even (_rn), toward zero (_rz), down (_rd), up (_ru); out of range
// saturates and NaN gives 0, as the gpu's cvt instructions do
namespace cuemu {
template <typename I, typename F>
inline I cvt_sat(F r) {
    if (r != r) return 0;
    if (r <= (F)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
    if (r >= (F)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
    return (I)r;
}
inline double rn(double x) { return std::nearbyint(x); } // the default rounding mode: to nearest even
} // namespace cuemu
inline int __float2int_rn(float x) { return ::cuemu::cvt_sat<int>(::cuemu::rn(x)); }
inline int __float2int_rz(float x) { return ::cuemu::cvt_sat<int>(std::trunc((double)x)); }
inline int __float2int_rd(float x) { return ::cuemu::cvt_sat<int>(std::floor((double)x)); }
inline int __float2int_ru(float x) { return ::cuemu::cvt_sat<int>(std::ceil((double)x)); }
inline unsigned __float2uint_rn(float x) { return ::cuemu::cvt_sat<unsigned>(::cuemu::rn(x)); }
inline unsigned __float2uint_rz(float x) { return ::cuemu::cvt_sat<unsigned>(std::trunc((double)x)); }
inline long long __float2ll_rn(float x) { return ::cuemu::cvt_sat<long long>(::cuemu::rn(x)); }
inline int __double2int_rn(double x) { return ::cuemu::cvt_sat<int>(::cuemu::rn(x)); }
inline int __double2int_rz(double x) { return ::cuemu::cvt_sat<int>(std::trunc(x)); }
inline long long __double2ll_rn(double x) { return ::cuemu::cvt_sat<long long>(::cuemu::rn(x)); }
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline double __int2double_rn(int x) { return (double)x; }
inline float __double2float_rn(double x) { return (float)x; }
// bit casts
inline float __int_as_float(int x) { return ::cuemu::from_bits<float>((uint32_t)x); }
inline int __float_as_int(float x) { return (int)(uint32_t)::cuemu::to_bits(x); }
inline float __uint_as_float(unsigned x) { return ::cuemu::from_bits<float>(x); }
inline unsigned __float_as_uint(float x) { return (uint32_t)::cuemu::to_bits(x); }
inline long long __double_as_longlong(double x) { return (long long)::cuemu::to_bits(x); }
inline double __longlong_as_double(long long x) { return ::cuemu::from_bits<double>((uint64_t)x); }
inline int __double2hiint(double x) { return (int)(uint32_t)(::cuemu::to_bits(x) >> 32); }
inline int __double2loint(double x) { return (int)(uint32_t)::cuemu::to_bits(x); }
inline double __hiloint2double(int hi, int lo) {
    return ::cuemu::from_bits<double>(((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo);
}
// integer intrinsics
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    __extension__ typedef unsigned __int128 u128;
    return (unsigned long long)(((u128)a * b) >> 64);
}
// read-only / cache-hinted loads and stores: plain accesses
template <typename T> inline T __ldg(const T *p) { return *p; }
template <typename T> inline T __ldcg(const T *p) { return *p; }
template <typename T> inline T __ldca(const T *p) { return *p; }
template <typename T> inline T __ldcs(const T *p) { return *p; }
template <typename T> inline T __ldlu(const T *p) { return *p; }
template <typename T> inline T __ldcv(const T *p) { return *p; }
template <typename T> inline void __stcg(T *p, T v) { *p = v; }
template <typename T> inline void __stcs(T *p, T v) { *p = v; }
template <typename T> inline void __stwb(T *p, T v) { *p = v; }
template <typename T> inline void __stwt(T *p, T v) { *p = v; }

// min/max: cuda's overload set in the global namespace (std::min/std::max are untouched and a
// non-template exact match wins over them under `using namespace std`). mixed signed/unsigned
// compare as unsigned and mixed float/double as double, as in cuda; other mixes are ambiguous
// there and here. float/double follow fminf/fmaxf (a NaN operand gives the other).
#define CUEMU_MINMAX(R, A, B)                                    \
    inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; } \
    inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
CUEMU_MINMAX(int, int, int)
CUEMU_MINMAX(unsigned int, unsigned int, unsigned int)
CUEMU_MINMAX(unsigned int, int, unsigned int)
CUEMU_MINMAX(unsigned int, unsigned int, int)
CUEMU_MINMAX(long, long, long)
CUEMU_MINMAX(unsigned long, unsigned long, unsigned long)
CUEMU_MINMAX(unsigned long, long, unsigned long)
CUEMU_MINMAX(unsigned long, unsigned long, long)
CUEMU_MINMAX(long long, long long, long long)
CUEMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
CUEMU_MINMAX(unsigned long long, long long, unsigned long long)
CUEMU_MINMAX(unsigned long long, unsigned long long, long long)
#undef CUEMU_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin((double)a, b); }
inline double max(float a, double b) { return fmax((double)a, b); }
inline double min(double a, float b) { return fmin(a, (double)b); }
inline double max(double a, float b) { return fmax(a, (double)b); }

// =================================================================================================
// 7. runtime api. everything is synchronous: an async copy or launch has finished when the call
//    returns, stream and event synchronisation have nothing to wait for, and events store the
//    host's monotonic clock. errors are the codes real cuda gives for the same misuse (pointer
//    checks are stricter: a "device" pointer must lie inside a live cudaMalloc allocation), and a
//    failing call also sets the error cudaGetLastError() returns, as cuda does. kernel faults are
//    not errors here: they stop the process at once with a message.
// =================================================================================================
struct CUstream_st {
    unsigned magic;
    unsigned flags;
};
struct CUevent_st {
    unsigned magic;
    unsigned flags;
    int recorded;
    double ms; // host monotonic clock when recorded
};
namespace cuemu {
constexpr unsigned kStreamMagic = 0x5354524du, kEventMagic = 0x4556454eu, kBlasMagic = 0x424c4153u, kDead = 0xdeadu;
inline double now_ms() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
inline bool stream_ok(cudaStream_t s) { return !s || s->magic == kStreamMagic; }
inline const char *kind_name(cudaMemcpyKind k) {
    switch (k) {
    case cudaMemcpyHostToHost: return "HostToHost";
    case cudaMemcpyHostToDevice: return "HostToDevice";
    case cudaMemcpyDeviceToHost: return "DeviceToHost";
    case cudaMemcpyDeviceToDevice: return "DeviceToDevice";
    default: return "Default";
    }
}
} // namespace cuemu

inline const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotPermitted: return "cudaErrorNotPermitted";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorUnknown: return "cudaErrorUnknown";
    }
    return "cudaErrorUnknown";
}
inline const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotPermitted: return "operation not permitted";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorUnknown: return "unknown error";
    }
    return "unrecognized error code";
}
inline cudaError_t cudaGetLastError() {
    cudaError_t e = ::cuemu::g.last_error;
    ::cuemu::g.last_error = cudaSuccess;
    return e;
}
inline cudaError_t cudaPeekAtLastError() { return ::cuemu::g.last_error; }

// ---- device ----------------------------------------------------------------------------------------
inline cudaError_t cudaGetDeviceCount(int *count) {
    ::cuemu::init();
    if (!count) return ::cuemu::set_error(cudaErrorInvalidValue);
    cudaError_t e = ::cuemu::no_device();
    *count = e == cudaSuccess ? 1 : 0;
    return ::cuemu::set_error(e);
}
inline cudaError_t cudaSetDevice(int device) {
    ::cuemu::init();
    cudaError_t e = ::cuemu::no_device();
    if (e != cudaSuccess) return ::cuemu::set_error(e);
    return ::cuemu::set_error(device == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}
inline cudaError_t cudaGetDevice(int *device) {
    ::cuemu::init();
    if (!device) return ::cuemu::set_error(cudaErrorInvalidValue);
    cudaError_t e = ::cuemu::no_device();
    if (e == cudaSuccess) *device = 0;
    return ::cuemu::set_error(e);
}
// an H100-like device with two multiprocessors (the emulator's figures, not a real card's)
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
    ::cuemu::init();
    if (!prop) return ::cuemu::set_error(cudaErrorInvalidValue);
    cudaError_t e = ::cuemu::no_device();
    if (e != cudaSuccess) return ::cuemu::set_error(e);
    if (device != 0) return ::cuemu::set_error(cudaErrorInvalidDevice);
    std::memset(prop, 0, sizeof *prop);
    std::snprintf(prop->name, sizeof prop->name, "%s", "cuemu (cpu emulation of cuda)");
    prop->totalGlobalMem = ::cuemu::total_memory();
    prop->sharedMemPerBlock = ::cuemu::kSmemDefault;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->memPitch = 2147483647;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->totalConstMem = 65536;
    prop->major = 9;
    prop->minor = 0;
    prop->textureAlignment = 512;
    prop->multiProcessorCount = 2;
    prop->concurrentKernels = 1;
    prop->asyncEngineCount = 1;
    prop->unifiedAddressing = 1;
    prop->memoryBusWidth = 5120;
    prop->l2CacheSize = 50 << 20;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->sharedMemPerMultiprocessor = 228 * 1024;
    prop->regsPerMultiprocessor = 65536;
    prop->sharedMemPerBlockOptin = ::cuemu::smem_optin();
    prop->maxBlocksPerMultiProcessor = 32;
    prop->reservedSharedMemPerBlock = 1024;
    return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int *v) {
    if (!v) return ::cuemu::set_error(cudaErrorInvalidValue);
    *v = ::cuemu::no_device() == cudaErrorInsufficientDriver ? 0 : 13000;
    return cudaSuccess;
}
inline cudaError_t cudaRuntimeGetVersion(int *v) {
    if (!v) return ::cuemu::set_error(cudaErrorInvalidValue);
    *v = 13000;
    return cudaSuccess;
}
// synchronisation has nothing to wait for; it is where the stream-ordered pool trims (below)
inline cudaError_t cudaDeviceSynchronize() {
    ::cuemu::pool_trim_at_sync();
    return cudaSuccess;
}

// attributes of the emulated device (an H100 SXM's clocks and bus; two multiprocessors)
enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrIntegrated = 18,
    cudaDevAttrConcurrentKernels = 31,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrUnifiedAddressing = 41,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMemoryPoolsSupported = 115
};
inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) {
    ::cuemu::init();
    if (!value) return ::cuemu::set_error(cudaErrorInvalidValue);
    cudaError_t e = ::cuemu::no_device();
    if (e != cudaSuccess) return ::cuemu::set_error(e);
    if (device != 0) return ::cuemu::set_error(cudaErrorInvalidDevice);
    int v;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: v = 1024; break;
    case cudaDevAttrMaxBlockDimX: v = 1024; break;
    case cudaDevAttrMaxBlockDimY: v = 1024; break;
    case cudaDevAttrMaxBlockDimZ: v = 64; break;
    case cudaDevAttrMaxGridDimX: v = 2147483647; break;
    case cudaDevAttrMaxGridDimY: v = 65535; break;
    case cudaDevAttrMaxGridDimZ: v = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: v = (int)::cuemu::kSmemDefault; break;
    case cudaDevAttrTotalConstantMemory: v = 65536; break;
    case cudaDevAttrWarpSize: v = 32; break;
    case cudaDevAttrMaxRegistersPerBlock: v = 65536; break;
    case cudaDevAttrClockRate: v = 1980000; break; // kHz
    case cudaDevAttrMultiProcessorCount: v = 2; break;
    case cudaDevAttrIntegrated: v = 0; break;
    case cudaDevAttrConcurrentKernels: v = 1; break;
    case cudaDevAttrMemoryClockRate: v = 2619000; break; // kHz
    case cudaDevAttrGlobalMemoryBusWidth: v = 5120; break;
    case cudaDevAttrL2CacheSize: v = 50 << 20; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: v = 2048; break;
    case cudaDevAttrUnifiedAddressing: v = 1; break;
    case cudaDevAttrComputeCapabilityMajor: v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: v = 0; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = 228 * 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = (int)::cuemu::smem_optin(); break;
    case cudaDevAttrMemoryPoolsSupported: v = 1; break;
    default: return ::cuemu::set_error(cudaErrorInvalidValue);
    }
    *value = v;
    return cudaSuccess;
}

// ---- memory ------------------------------------------------------------------------------------------
// every allocation is its own mapping: the page-rounded data, then a PROT_NONE guard page. the block
// returned ends (rounded up to 256 bytes) right at the guard page, so the first access past the
// rounded end faults; the start is 256-byte aligned like cudaMalloc's. new memory holds 0xff bytes
// (CUEMU_POISON), not zeros; freed memory is unmapped at once, so a later access faults.
// the driver's figure (cudaMemGetInfo: free = total - used) counts every cudaMalloc allocation
// rounded up to 2 MiB, plus what the stream-ordered pool holds (see cudaMallocAsync).
namespace cuemu {
inline size_t used_memory() { return g.accounted + g.pool_reserved; }
inline cudaError_t alloc_impl(const char *fn, void **devPtr, size_t size, bool pooled) {
    init();
    if (!devPtr) return set_error(cudaErrorInvalidValue);
    cudaError_t e = no_device();
    if (e != cudaSuccess) return set_error(e);
    *devPtr = nullptr;
    if (size == 0) return cudaSuccess; // cuda returns a null pointer for zero bytes
    size_t total = total_memory(), used = used_memory(), avail = used < total ? total - used : 0;
    size_t acc, grow = 0;
    if (size > total) return set_error(cudaErrorMemoryAllocation);
    if (pooled) {
        acc = round_up(size, kAllocAlign);
        if (g.pool_used + acc > g.pool_reserved) grow = round_up(g.pool_used + acc, kGranule) - g.pool_reserved;
        if (grow > avail) return set_error(cudaErrorMemoryAllocation);
    } else {
        acc = round_up(size, kGranule);
        if (acc > avail) return set_error(cudaErrorMemoryAllocation);
    }
    size_t blk = round_up(size, kAllocAlign), data = round_up(blk, g.page);
    void *p = mmap(nullptr, data + g.page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        warn("%s: mmap of %zu bytes failed", fn, data + g.page);
        return set_error(cudaErrorMemoryAllocation);
    }
    if (g.n_allocs == g.cap_allocs) {
        size_t cap = g.cap_allocs ? 2 * g.cap_allocs : 256;
        Alloc *na = (Alloc *)std::realloc(g.allocs, cap * sizeof(Alloc));
        if (na) g.allocs = na;
        char **nl = na ? (char **)std::realloc(g.open_list, cap * sizeof(char *)) : nullptr;
        if (nl) g.open_list = nl;
        if (!na || !nl) {
            munmap(p, data + g.page);
            return set_error(cudaErrorMemoryAllocation);
        }
        g.cap_allocs = cap;
    }
    Alloc a;
    a.region = (char *)p;
    a.data_bytes = data;
    a.base = a.region + data - blk;
    a.size = size;
    a.accounted = acc;
    a.pooled = pooled;
    a.open = false;
    mprotect(a.region + data, g.page, PROT_NONE);
    // filling commits host memory: only while the live filled bytes stay within the budget (tests
    // that allocate gigabytes to provoke out-of-memory get untouched, zero, memory beyond it)
    a.poisoned = size <= g.poison_budget - (g.poisoned_live < g.poison_budget ? g.poisoned_live : g.poison_budget);
    if (a.poisoned) {
        std::memset(a.base, 0xff, size);
        g.poisoned_live += size;
    }
    size_t lo = 0, hi = g.n_allocs; // keep the array sorted by address
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g.allocs[mid].region < a.region) lo = mid + 1;
        else hi = mid;
    }
    std::memmove(g.allocs + lo + 1, g.allocs + lo, (g.n_allocs - lo) * sizeof(Alloc));
    g.allocs[lo] = a;
    g.n_allocs++;
    if (pooled) {
        g.pool_used += acc;
        g.pool_reserved += grow;
        if (g.pool_used > g.pool_used_high) g.pool_used_high = g.pool_used;
        if (g.pool_reserved > g.pool_reserved_high) g.pool_reserved_high = g.pool_reserved;
    } else {
        g.accounted += acc;
    }
    // inaccessible to host code (an allocation made during a device operation stays open to its end)
    if (g.protect && !g.access_depth) protect_alloc(a, false);
    else if (g.protect) {
        g.allocs[lo].open = true;
        g.open_list[g.n_open++] = a.region;
    }
    *devPtr = a.base;
    return cudaSuccess;
}
inline cudaError_t free_impl(const char *fn, void *devPtr) {
    init();
    if (!devPtr) return cudaSuccess;
    long i = find_region(devPtr);
    if (i < 0 || g.allocs[i].base != (char *)devPtr) {
        warn("%s(%p): not the start of a live device allocation%s", fn, devPtr,
             i >= 0 ? " (it points inside one)" : " (freed before, or never allocated)");
        return set_error(cudaErrorInvalidValue);
    }
    Alloc a = g.allocs[i];
    std::memmove(g.allocs + i, g.allocs + i + 1, (g.n_allocs - (size_t)i - 1) * sizeof(Alloc));
    g.n_allocs--;
    if (a.pooled) g.pool_used -= a.accounted;
    else g.accounted -= a.accounted;
    if (a.poisoned) g.poisoned_live -= a.size;
    munmap(a.region, a.data_bytes + g.page);
    Freed &f = g.freed[g.n_freed++ % 64];
    f.lo = a.region;
    f.hi = a.region + a.data_bytes + g.page;
    f.size = a.size;
    return cudaSuccess;
}
} // namespace cuemu
inline cudaError_t cudaMalloc(void **devPtr, size_t size) { return ::cuemu::alloc_impl("cudaMalloc", devPtr, size, false); }
// cudaFree also frees cudaMallocAsync memory (and synchronises, as cuda's does)
inline cudaError_t cudaFree(void *devPtr) {
    cudaError_t e = ::cuemu::free_impl("cudaFree", devPtr);
    if (e == cudaSuccess && devPtr) ::cuemu::pool_trim_at_sync();
    return e;
}
inline cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
    using namespace ::cuemu;
    init();
    if (!free_bytes || !total_bytes) return set_error(cudaErrorInvalidValue);
    cudaError_t e = no_device();
    if (e != cudaSuccess) return set_error(e);
    size_t total = total_memory(), used = used_memory();
    *total_bytes = total;
    *free_bytes = used < total ? total - used : 0;
    return cudaSuccess;
}

// ---- the stream-ordered allocator: one pool (the device's default), modelled by two figures:
//      used (live cudaMallocAsync allocations, each rounded up to 256 bytes) and reserved (what
//      the pool holds from the "driver": grows in 2 MiB steps when used exceeds it, so freed
//      memory is reused first; counted as used by cudaMemGetInfo). at every synchronisation
//      (stream, event, device; cudaFree) a pool holding more than its release threshold (default
//      0) gives back down to max(used, threshold), as cuda's does; cudaMemPoolTrimTo likewise.
//      each allocation is still its own mapping (guard page, unmapped on free): no packing, no
//      fragmentation, and the 2 MiB steps are the emulator's choice, not the driver's.
struct CUmemPoolHandle_st {
    unsigned magic;
};
typedef CUmemPoolHandle_st *cudaMemPool_t;
enum cudaMemPoolAttr {
    cudaMemPoolReuseFollowEventDependencies = 0x1,
    cudaMemPoolReuseAllowOpportunistic = 0x2,
    cudaMemPoolReuseAllowInternalDependencies = 0x3,
    cudaMemPoolAttrReleaseThreshold = 0x4,
    cudaMemPoolAttrReservedMemCurrent = 0x5,
    cudaMemPoolAttrReservedMemHigh = 0x6,
    cudaMemPoolAttrUsedMemCurrent = 0x7,
    cudaMemPoolAttrUsedMemHigh = 0x8
};
namespace cuemu {
constexpr unsigned kPoolMagic = 0x504f4f4cu;
inline CUmemPoolHandle_st g_default_pool{kPoolMagic};
inline bool pool_ok(cudaMemPool_t p) { return p == &g_default_pool; }
} // namespace cuemu
inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device) {
    ::cuemu::init();
    if (!pool) return ::cuemu::set_error(cudaErrorInvalidValue);
    cudaError_t e = ::cuemu::no_device();
    if (e != cudaSuccess) return ::cuemu::set_error(e);
    if (device != 0) return ::cuemu::set_error(cudaErrorInvalidDevice);
    *pool = &::cuemu::g_default_pool;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device) { return cudaDeviceGetDefaultMemPool(pool, device); }
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void *value) {
    using namespace ::cuemu;
    if (!pool_ok(pool) || !value) return set_error(cudaErrorInvalidValue);
    switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies: return cudaSuccess; // one stream: nothing to reorder
    case cudaMemPoolAttrReleaseThreshold: g.pool_threshold = *(const uint64_t *)value; return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
        if (*(const uint64_t *)value != 0) return set_error(cudaErrorInvalidValue); // only a reset to 0
        if (attr == cudaMemPoolAttrReservedMemHigh) g.pool_reserved_high = g.pool_reserved;
        else g.pool_used_high = g.pool_used;
        return cudaSuccess;
    default: return set_error(cudaErrorInvalidValue);
    }
}
inline cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void *value) {
    using namespace ::cuemu;
    if (!pool_ok(pool) || !value) return set_error(cudaErrorInvalidValue);
    switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies: *(int *)value = 1; return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold: *(uint64_t *)value = g.pool_threshold; return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent: *(uint64_t *)value = g.pool_reserved; return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh: *(uint64_t *)value = g.pool_reserved_high; return cudaSuccess;
    case cudaMemPoolAttrUsedMemCurrent: *(uint64_t *)value = g.pool_used; return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh: *(uint64_t *)value = g.pool_used_high; return cudaSuccess;
    default: return set_error(cudaErrorInvalidValue);
    }
}
inline cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t minBytesToKeep) {
    if (!::cuemu::pool_ok(pool)) return ::cuemu::set_error(cudaErrorInvalidValue);
    ::cuemu::pool_trim(minBytesToKeep);
    return cudaSuccess;
}
inline cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream) {
    if (!::cuemu::stream_ok(stream)) return ::cuemu::set_error(cudaErrorInvalidResourceHandle);
    return ::cuemu::alloc_impl("cudaMallocAsync", devPtr, size, true);
}
// frees cudaMalloc memory too; the memory is unmapped at once (cuda's may stay mapped in the pool,
// but any later use is undefined there)
inline cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream) {
    if (!::cuemu::stream_ok(stream)) return ::cuemu::set_error(cudaErrorInvalidResourceHandle);
    return ::cuemu::free_impl("cudaFreeAsync", devPtr);
}
inline cudaError_t cudaMallocHost(void **ptr, size_t size) {
    if (!ptr) return ::cuemu::set_error(cudaErrorInvalidValue);
    *ptr = size ? std::malloc(size) : nullptr;
    return size && !*ptr ? ::cuemu::set_error(cudaErrorMemoryAllocation) : cudaSuccess;
}
inline cudaError_t cudaFreeHost(void *ptr) {
    std::free(ptr);
    return cudaSuccess;
}

namespace cuemu {
// a copy's pointers must match its kind: device ones inside one live allocation, host ones outside
inline cudaError_t check_side(const char *fn, const char *which, const void *p, size_t n, bool device) {
    if (device && !is_device_range(p, n)) {
        warn("%s: %s %p (+%zu bytes) is not inside a live device allocation", fn, which, p, n);
        return cudaErrorInvalidValue;
    }
    if (!device && find_region(p) >= 0) {
        warn("%s: %s %p is device memory, but the copy's kind says host", fn, which, p);
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}
inline cudaError_t memcpy_impl(const char *fn, void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t s) {
    init();
    if (!stream_ok(s)) return set_error(cudaErrorInvalidResourceHandle);
    if (!count) return cudaSuccess;
    if (!dst || !src) return set_error(cudaErrorInvalidValue);
    bool dd, sd;
    switch (kind) {
    case cudaMemcpyHostToHost: dd = sd = false; break;
    case cudaMemcpyHostToDevice:
        dd = true;
        sd = false;
        break;
    case cudaMemcpyDeviceToHost:
        dd = false;
        sd = true;
        break;
    case cudaMemcpyDeviceToDevice: dd = sd = true; break;
    case cudaMemcpyDefault:
        dd = find_region(dst) >= 0;
        sd = find_region(src) >= 0;
        break;
    default: return set_error(cudaErrorInvalidMemcpyDirection);
    }
    cudaError_t e = check_side(fn, "dst", dst, count, dd);
    if (e == cudaSuccess) e = check_side(fn, "src", src, count, sd);
    if (e != cudaSuccess) {
        warn("%s(%p, %p, %zu, cudaMemcpy%s) failed", fn, dst, src, count, kind_name(kind));
        return set_error(e);
    }
    DeviceAccess acc;
    if (dd) open_pointer(dst);
    if (sd) open_pointer(src);
    std::memmove(dst, src, count);
    if (sd) bytes_read += count;
    if (dd) bytes_written += count;
    return cudaSuccess;
}
inline cudaError_t memset_impl(const char *fn, void *dst, int value, size_t count, cudaStream_t s) {
    init();
    if (!stream_ok(s)) return set_error(cudaErrorInvalidResourceHandle);
    if (!count) return cudaSuccess;
    if (!is_device_range(dst, count)) {
        warn("%s: %p (+%zu bytes) is not inside a live device allocation", fn, dst, count);
        return set_error(cudaErrorInvalidValue);
    }
    DeviceAccess acc;
    open_pointer(dst);
    std::memset(dst, value & 0xff, count);
    bytes_written += count;
    return cudaSuccess;
}
} // namespace cuemu
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind) {
    return ::cuemu::memcpy_impl("cudaMemcpy", dst, src, count, kind, nullptr);
}
inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream = nullptr) {
    return ::cuemu::memcpy_impl("cudaMemcpyAsync", dst, src, count, kind, stream);
}
inline cudaError_t cudaMemset(void *dst, int value, size_t count) {
    return ::cuemu::memset_impl("cudaMemset", dst, value, count, nullptr);
}
inline cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream = nullptr) {
    return ::cuemu::memset_impl("cudaMemsetAsync", dst, value, count, stream);
}

// ---- streams and events -----------------------------------------------------------------------------
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) {
    ::cuemu::init();
    if (!s || flags > cudaStreamNonBlocking) return ::cuemu::set_error(cudaErrorInvalidValue);
    cudaError_t e = ::cuemu::no_device();
    if (e != cudaSuccess) return ::cuemu::set_error(e);
    *s = new CUstream_st{::cuemu::kStreamMagic, flags};
    return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
    if (!s || s->magic != ::cuemu::kStreamMagic) return ::cuemu::set_error(cudaErrorInvalidResourceHandle);
    s->magic = ::cuemu::kDead;
    delete s;
    return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    if (!::cuemu::stream_ok(s)) return ::cuemu::set_error(cudaErrorInvalidResourceHandle);
    ::cuemu::pool_trim_at_sync();
    return cudaSuccess;
}
inline cudaError_t cudaStreamQuery(cudaStream_t s) {
    return ::cuemu::stream_ok(s) ? cudaSuccess : ::cuemu::set_error(cudaErrorInvalidResourceHandle);
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned int flags) {
    ::cuemu::init();
    if (!ev || flags > 0x0f) return ::cuemu::set_error(cudaErrorInvalidValue);
    *ev = new CUevent_st{::cuemu::kEventMagic, flags, 0, 0.0};
    return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t *ev) { return cudaEventCreateWithFlags(ev, cudaEventDefault); }
inline cudaError_t cudaEventDestroy(cudaEvent_t ev) {
    if (!ev || ev->magic != ::cuemu::kEventMagic) return ::cuemu::set_error(cudaErrorInvalidResourceHandle);
    ev->magic = ::cuemu::kDead;
    delete ev;
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s = nullptr) {
    if (!ev || ev->magic != ::cuemu::kEventMagic || !::cuemu::stream_ok(s))
        return ::cuemu::set_error(cudaErrorInvalidResourceHandle);
    ev->ms = ::cuemu::now_ms();
    ev->recorded = 1;
    return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t ev) {
    if (!ev || ev->magic != ::cuemu::kEventMagic) return ::cuemu::set_error(cudaErrorInvalidResourceHandle);
    ::cuemu::pool_trim_at_sync();
    return cudaSuccess;
}
inline cudaError_t cudaEventQuery(cudaEvent_t ev) {
    return ev && ev->magic == ::cuemu::kEventMagic ? cudaSuccess : ::cuemu::set_error(cudaErrorInvalidResourceHandle);
}
// milliseconds from start to end (host time; the work between them ran on the cpu)
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
    if (!ms) return ::cuemu::set_error(cudaErrorInvalidValue);
    if (!start || !end || start->magic != ::cuemu::kEventMagic || end->magic != ::cuemu::kEventMagic || !start->recorded ||
        !end->recorded || ((start->flags | end->flags) & cudaEventDisableTiming))
        return ::cuemu::set_error(cudaErrorInvalidResourceHandle);
    *ms = (float)(end->ms - start->ms);
    return cudaSuccess;
}

// ---- kernel attributes --------------------------------------------------------------------------
// only the dynamic shared memory limit is recorded (per kernel); the carveout is accepted
inline cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value) {
    using namespace ::cuemu;
    init();
    if (!func) return set_error(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
        return value >= -1 && value <= 100 ? cudaSuccess : set_error(cudaErrorInvalidValue);
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return set_error(cudaErrorInvalidValue);
    if (value < 0 || (size_t)value > smem_optin()) {
        warn("cudaFuncSetAttribute(MaxDynamicSharedMemorySize, %d): at most %zu bytes", value, smem_optin());
        return set_error(cudaErrorInvalidValue);
    }
    for (size_t i = 0; i < g.n_optin; i++)
        if (g.optin[i].fn == func) {
            g.optin[i].bytes = value;
            return cudaSuccess;
        }
    if (g.n_optin == g.cap_optin) {
        size_t cap = g.cap_optin ? 2 * g.cap_optin : 32;
        Optin *o = (Optin *)std::realloc(g.optin, cap * sizeof(Optin));
        if (!o) return set_error(cudaErrorMemoryAllocation);
        g.optin = o;
        g.cap_optin = cap;
    }
    g.optin[g.n_optin++] = Optin{func, value};
    return cudaSuccess;
}
template <typename T>
inline cudaError_t cudaFuncSetAttribute(T *entry, cudaFuncAttribute attr, int value) {
    return cudaFuncSetAttribute(reinterpret_cast<const void *>(entry), attr, value);
}

// =================================================================================================
// 9. cuBLAS: the handle functions and single-precision gemm, column-major, with cuBLAS's argument
//    checks. products are summed in double and rounded once (cuBLAS sums in float, in an order of
//    its own: results agree to rounding). alpha == 0 does not read A and B, beta == 0 does not read C
//    (so NaN there does not propagate), as the reference BLAS and cuBLAS documentation say. in
//    CUBLAS_TF32_TENSOR_OP_MATH, A and B are first rounded to tf32 (10-bit mantissa), which models
//    the tensor cores' loss of precision. the workspace is recorded, never used.
//    cublasGemmEx: CUBLAS_COMPUTE_32F(_PEDANTIC) with A, B, C of types (CUDA_R_32F x3),
//    (CUDA_R_16BF x3) or (CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F), three of the combinations cuBLAS
//    documents; bf16 operands are widened exactly, a bf16 C is widened for beta and the result is
//    rounded to float then to bf16 (nearest even, nan quiet). any other type or compute type answers
//    CUBLAS_STATUS_NOT_SUPPORTED (with a note), as cuBLAS does for a combination it lacks.
// =================================================================================================
struct cublasContext {
    unsigned magic;
    cudaStream_t stream;
    void *workspace;
    size_t workspace_bytes;
    int math;
    cublasPointerMode_t pointer_mode;
};
namespace cuemu {
inline bool blas_ok(cublasHandle_t h) { return h && h->magic == kBlasMagic; }
}
inline cublasStatus_t cublasCreate(cublasHandle_t *handle) {
    ::cuemu::init();
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    if (::cuemu::no_device() != cudaSuccess) return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = new cublasContext{::cuemu::kBlasMagic, nullptr, nullptr, 0, CUBLAS_DEFAULT_MATH, CUBLAS_POINTER_MODE_HOST};
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t handle) {
    if (!::cuemu::blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->magic = ::cuemu::kDead;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}
// like cuBLAS, setting the stream drops a workspace set before
inline cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
    if (!::cuemu::blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!::cuemu::stream_ok(stream)) return CUBLAS_STATUS_INVALID_VALUE;
    handle->stream = stream;
    handle->workspace = nullptr;
    handle->workspace_bytes = 0;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t *stream) {
    if (!::cuemu::blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!stream) return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}
// the workspace must be 256-byte aligned (cuBLAS's rule); cuda 13 spells this cublasSetWorkspace_v2
inline cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace, size_t bytes) {
    if (!::cuemu::blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (bytes && (!workspace || ((uintptr_t)workspace & 255))) return CUBLAS_STATUS_INVALID_VALUE;
    handle->workspace = workspace;
    handle->workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes) {
    return cublasSetWorkspace(handle, workspace, bytes);
}
inline cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
    if (!::cuemu::blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    int m = (int)mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    if (m < 0 || m > 15) return CUBLAS_STATUS_INVALID_VALUE;
    handle->math = (int)mode;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode) {
    if (!::cuemu::blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = (cublasMath_t)handle->math;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
    if (!::cuemu::blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t *mode) {
    if (!::cuemu::blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}
inline const char *cublasGetStatusName(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}
inline const char *cublasGetStatusString(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "an error was detected when checking the current licensing";
    }
    return "unknown cuBLAS status";
}

namespace cuemu {
inline float tf32(float x) { // round to nearest even at 10 mantissa bits
    uint32_t u = (uint32_t)to_bits(x);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u += 0xfffu + ((u >> 13) & 1u);
    return from_bits<float>(u & 0xffffe000u);
}
inline size_t mat_bytes(long long rows, long long cols, long long ld, size_t es = sizeof(float)) {
    return rows && cols ? (size_t)((cols - 1) * ld + rows) * es : 0;
}
// operands: float (tf32-rounded in tf32 math) or bf16 (uint16_t, widened exactly)
inline double blas_in(float v, bool use_tf32) { return use_tf32 ? tf32(v) : v; }
inline double blas_in(uint16_t h, bool) { return from_bits<float>((uint32_t)h << 16); }
inline double blas_c(float c) { return c; }
inline double blas_c(uint16_t h) { return from_bits<float>((uint32_t)h << 16); }
inline void blas_put(float *c, double v) { *c = (float)v; }
inline void blas_put(uint16_t *c, double v) { // to float, then to the nearest bf16 (ties to even); nan stays a quiet nan
    uint32_t u = (uint32_t)to_bits((float)v);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) *c = (uint16_t)((u >> 16) | 0x0040u);
    else *c = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline bool blas_range(const char *fn, const char *which, const void *p, size_t bytes, long long batch) {
    if (!bytes || is_device_range(p, bytes)) return true;
    warn("%s: %s%s%lld %p (+%zu bytes) is not inside a live device allocation", fn, which, batch >= 0 ? " of batch " : "",
         batch >= 0 ? batch : 0LL, p, bytes);
    return false;
}
// C = alpha op(A) op(B) + beta C for one matrix triple (device memory is open)
template <typename TA, typename TC>
inline void gemm1(bool ta, bool tb, int m, int n, int k, float alpha, const TA *A, int lda, const TA *B, int ldb,
                  float beta, TC *C, int ldc, bool use_tf32, double *acc) {
    auto a = [&](int i, int l) -> double { return blas_in(ta ? A[l + (size_t)i * lda] : A[i + (size_t)l * lda], use_tf32); };
    auto b = [&](int l, int j) -> double { return blas_in(tb ? B[j + (size_t)l * ldb] : B[l + (size_t)j * ldb], use_tf32); };
    bool prod = alpha != 0.0f && k > 0;
    for (int j = 0; j < n; j++) {
        TC *c = C + (size_t)j * ldc;
        if (prod) {
            if (!ta) { // columns of A scaled by B(l, j): unit stride through A
                for (int i = 0; i < m; i++) acc[i] = 0.0;
                for (int l = 0; l < k; l++) {
                    double bl = b(l, j);
                    for (int i = 0; i < m; i++) acc[i] += a(i, l) * bl;
                }
            } else { // dot products of A's columns with B's column
                for (int i = 0; i < m; i++) {
                    double s = 0.0;
                    for (int l = 0; l < k; l++) s += a(i, l) * b(l, j);
                    acc[i] = s;
                }
            }
        }
        for (int i = 0; i < m; i++) {
            double v = prod ? (double)alpha * acc[i] : 0.0;
            if (beta != 0.0f) v += (double)beta * blas_c(c[i]);
            blas_put(&c[i], v);
        }
    }
}
template <typename TA, typename TC>
inline cublasStatus_t gemm(const char *fn, cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const float *alpha, const TA *A, int lda, long long sA, const TA *B, int ldb,
                           long long sB, const float *beta, TC *C, int ldc, long long sC, int batch, bool allow_tf32 = true) {
    init();
    if (!blas_ok(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if ((unsigned)transa > 2u || (unsigned)transb > 2u || m < 0 || n < 0 || k < 0 || batch < 0 || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N; // real matrices: C is T
    long long ra = ta ? k : m, ca = ta ? m : k, rb = tb ? n : k, cb = tb ? k : n;
    if (lda < (ra > 1 ? ra : 1) || ldb < (rb > 1 ? rb : 1) || ldc < (m > 1 ? m : 1)) return CUBLAS_STATUS_INVALID_VALUE;
    if (!m || !n || !batch) return CUBLAS_STATUS_SUCCESS;
    float al, be;
    if (h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
        if (!blas_range(fn, "alpha", alpha, sizeof(float), -1) || !blas_range(fn, "beta", beta, sizeof(float), -1))
            return CUBLAS_STATUS_EXECUTION_FAILED;
        DeviceAccess acc;
        open_pointer(alpha);
        open_pointer(beta);
        al = *alpha;
        be = *beta;
    } else { // host pointer mode: a device pointer here faults, as it would with cuBLAS
        al = *alpha;
        be = *beta;
    }
    bool needab = al != 0.0f && k > 0;
    for (long long i = 0; i < batch; i++) {
        long long q = batch > 1 ? i : -1;
        if ((needab && (!blas_range(fn, "A", A + i * sA, mat_bytes(ra, ca, lda, sizeof(TA)), q) ||
                        !blas_range(fn, "B", B + i * sB, mat_bytes(rb, cb, ldb, sizeof(TA)), q))) ||
            !blas_range(fn, "C", C + i * sC, mat_bytes(m, n, ldc, sizeof(TC)), q))
            return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    double *acc = (double *)std::malloc(sizeof(double) * (size_t)m);
    if (!acc) return CUBLAS_STATUS_ALLOC_FAILED;
    bytes_read += (unsigned long long)batch * ((needab ? (unsigned long long)(m + n) * (unsigned long long)k * sizeof(TA) : 0) + (be != 0.0f ? (unsigned long long)m * n * sizeof(TC) : 0));
    bytes_written += (unsigned long long)batch * (unsigned long long)m * n * sizeof(TC);
    bool t32 = allow_tf32 && (h->math & 15) == CUBLAS_TF32_TENSOR_OP_MATH;
    {
        DeviceAccess open;
        for (long long i = 0; i < batch; i++) {
            if (needab) open_pointer(A + i * sA), open_pointer(B + i * sB);
            open_pointer(C + i * sC);
        }
        for (long long i = 0; i < batch; i++)
            gemm1(ta, tb, m, n, k, al, A + i * sA, lda, B + i * sB, ldb, be, C + i * sC, ldc, t32, acc);
    }
    std::free(acc);
    return CUBLAS_STATUS_SUCCESS;
}
} // namespace cuemu

inline cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                                  int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                                  const float *beta, float *C, int ldc) {
    return ::cuemu::gemm("cublasSgemm", handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                                int m, int n, int k, const float *alpha, const float *A, int lda,
                                                long long strideA, const float *B, int ldb, long long strideB,
                                                const float *beta, float *C, int ldc, long long strideC, int batchCount) {
    return ::cuemu::gemm("cublasSgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
                         strideB, beta, C, ldc, strideC, batchCount);
}

// alpha and beta are floats (compute type 32F); the emulated combinations are listed in the header of 9
namespace cuemu {
// cublasGemmEx and cublasGemmStridedBatchedEx: the emulated type combinations on the shared gemm
inline cublasStatus_t gemm_ex(const char *fn, cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                              const void *alpha, const void *A, cudaDataType_t Atype, int lda, long long strideA, const void *B,
                              cudaDataType_t Btype, int ldb, long long strideB, const void *beta, void *C, cudaDataType_t Ctype, int ldc,
                              long long strideC, int batch, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    const float *al = (const float *)alpha, *be = (const float *)beta;
    init();
    if (!blas_ok(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    int ag = (int)algo;
    if (!(ag == -1 || (ag >= 0 && ag <= 23) || (ag >= 99 && ag <= 115))) return CUBLAS_STATUS_INVALID_VALUE;
    if (computeType != CUBLAS_COMPUTE_32F && computeType != CUBLAS_COMPUTE_32F_PEDANTIC) {
        warn("%s: compute type %d is not emulated (CUBLAS_COMPUTE_32F and _PEDANTIC are)", fn, (int)computeType);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    bool pedantic = computeType == CUBLAS_COMPUTE_32F_PEDANTIC;
    if (Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F)
        return gemm(fn, handle, transa, transb, m, n, k, al, (const float *)A, lda, strideA, (const float *)B, ldb, strideB, be, (float *)C, ldc,
                    strideC, batch, !pedantic);
    if (Atype == CUDA_R_16BF && Btype == CUDA_R_16BF && Ctype == CUDA_R_16BF)
        return gemm(fn, handle, transa, transb, m, n, k, al, (const uint16_t *)A, lda, strideA, (const uint16_t *)B, ldb, strideB, be, (uint16_t *)C,
                    ldc, strideC, batch, false);
    if (Atype == CUDA_R_16BF && Btype == CUDA_R_16BF && Ctype == CUDA_R_32F)
        return gemm(fn, handle, transa, transb, m, n, k, al, (const uint16_t *)A, lda, strideA, (const uint16_t *)B, ldb, strideB, be, (float *)C, ldc,
                    strideC, batch, false);
    warn("%s: types A %d, B %d, C %d with CUBLAS_COMPUTE_32F are not a supported combination here (emulated: 32F x3, 16BF x3, 16BF 16BF 32F)", fn,
         (int)Atype, (int)Btype, (int)Ctype);
    return CUBLAS_STATUS_NOT_SUPPORTED;
}
} // namespace cuemu

inline cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                   const void *alpha, const void *A, cudaDataType_t Atype, int lda, const void *B, cudaDataType_t Btype,
                                   int ldb, const void *beta, void *C, cudaDataType_t Ctype, int ldc, cublasComputeType_t computeType,
                                   cublasGemmAlgo_t algo) {
    return ::cuemu::gemm_ex("cublasGemmEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C, Ctype, ldc, 0, 1,
                            computeType, algo);
}
inline cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                                 const void *alpha, const void *A, cudaDataType_t Atype, int lda, long long strideA, const void *B,
                                                 cudaDataType_t Btype, int ldb, long long strideB, const void *beta, void *C, cudaDataType_t Ctype,
                                                 int ldc, long long strideC, int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    return ::cuemu::gemm_ex("cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta,
                            C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

// ---- 11. NCCL (CUEMU_NCCL, with MPI) ----------------------------------------------------------------------
// the collectives of a communicator whose ranks are the processes of an MPI job (mpirun -np N), in MPI_COMM_WORLD's
// rank order: ncclGetUniqueId, ncclCommInitRank, ncclCommDestroy, ncclAllReduce, ncclReduceScatter, ncclAllGather,
// ncclReduce, ncclBroadcast (fp32 and fp64, sum), ncclGroupStart/End, ncclGetErrorString. each runs at once (the
// emulated device is synchronous; a group's calls run as they are made, in the same order on every rank, as NCCL
// requires) over the MPI call that does the same; a communicator of one rank needs no MPI. NCCL's rules are
// checked: buffers inside live device allocations, in place only where NCCL allows it (reduce-scatter's recvbuff
// = sendbuff + rank x recvcount, all-gather's sendbuff = recvbuff + rank x sendcount, reduce and broadcast with
// sendbuff = recvbuff), a root that is a rank; a call that breaks one returns ncclInvalidArgument with a note
#ifdef CUEMU_NCCL
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1 // MPI's C interface only (no C++ bindings to link)
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;
typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5
} ncclResult_t;
typedef enum {
    ncclFloat32 = 7,
    ncclFloat = 7,
    ncclFloat64 = 8,
    ncclDouble = 8,
    ncclBfloat16 = 9
} ncclDataType_t;
typedef enum {
    ncclSum = 0,
    ncclProd = 1,
    ncclMax = 2,
    ncclMin = 3,
    ncclAvg = 4
} ncclRedOp_t;
struct ncclComm {
    uint32_t magic;
    int nranks, rank;
    MPI_Comm comm; // nranks > 1: a duplicate of MPI_COMM_WORLD
    void *buffers; // the stand-in for its connections' buffers (device memory), once connected
};
typedef struct ncclComm *ncclComm_t;

namespace cuemu {
constexpr uint32_t kCommMagic = 0x4e43434cu;
inline const char kIdTag[] = "cuemu nccl id";
inline int nccl_group_depth;
// NCCL's connections hold device buffers of their own (per channel and peer, per protocol), outside any
// allocator the caller sees. the emulation holds a stand-in of this size (not NCCL's: its size depends on the
// channels and topology NCCL finds), as NCCL does: made with the communicator where NCCL_RUNTIME_CONNECT=0,
// else at its first collective; freed with it. cudaMemGetInfo counts it as it counts cudaMalloc
constexpr size_t kNcclBuffers = 9u << 20;
inline bool comm_ok(const char *fn, ncclComm_t c) {
    if (c && c->magic == kCommMagic) return true;
    warn("%s: not a live communicator", fn);
    return false;
}
inline bool nccl_connect(const char *fn, ncclComm_t c) {
    if (c->buffers || c->nranks < 2) return true;
    if (alloc_impl(fn, &c->buffers, kNcclBuffers, false) != cudaSuccess) {
        c->buffers = nullptr;
        warn("%s: the communicator's buffers (%zu bytes) do not fit the device", fn, kNcclBuffers);
        return false;
    }
    return true;
}
// the element size of an emulated type, 0 (with a note) for the rest
inline size_t nccl_size(const char *fn, ncclDataType_t t, ncclRedOp_t op, bool reduces) {
    if (reduces && op != ncclSum) {
        warn("%s: reduction op %d is not emulated (ncclSum is)", fn, (int)op);
        return 0;
    }
    if (t == ncclFloat32) return 4;
    if (t == ncclFloat64) return 8;
    if (t == ncclBfloat16 && !reduces) return 2; // moved, not summed: its bits as 16-bit integers
    warn("%s: data type %d is not emulated (ncclFloat32 and ncclFloat64 are; ncclBfloat16 where nothing is summed)", fn, (int)t);
    return 0;
}
inline MPI_Datatype nccl_mpi(ncclDataType_t t) { return t == ncclFloat64 ? MPI_DOUBLE : (t == ncclBfloat16 ? MPI_UINT16_T : MPI_FLOAT); }
// [p, p + bytes) lies in one live device allocation (count 0: any pointer); opened for the call
inline bool nccl_buf(const char *fn, const char *which, const void *p, size_t bytes) {
    if (!bytes) return true;
    if (!is_device_range(p, bytes)) {
        warn("%s: %s %p (+%zu bytes) is not inside a live device allocation", fn, which, p, bytes);
        return false;
    }
    open_pointer(p);
    return true;
}
inline bool nccl_overlap(const void *a, size_t an, const void *b, size_t bn) {
    const char *x = (const char *)a, *y = (const char *)b;
    return an && bn && x < y + bn && y < x + an;
}
inline bool nccl_common(const char *fn, ncclComm_t c, cudaStream_t s, size_t count) {
    init();
    if (!comm_ok(fn, c) || !nccl_connect(fn, c)) return false;
    if (!stream_ok(s)) {
        warn("%s: not a live stream", fn);
        return false;
    }
    if (count > (size_t)INT_MAX) {
        warn("%s: %zu elements: the emulation's MPI counts take at most %d", fn, count, INT_MAX);
        return false;
    }
    return true;
}
} // namespace cuemu

inline const char *ncclGetErrorString(ncclResult_t r) {
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    }
    return "unknown result code";
}
inline ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    if (!id) return ncclInvalidArgument;
    std::memset(id, 0, sizeof *id);
    std::memcpy(id->internal, ::cuemu::kIdTag, sizeof ::cuemu::kIdTag);
    return ncclSuccess;
}
inline ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    ::cuemu::init();
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks || std::memcmp(id.internal, ::cuemu::kIdTag, sizeof ::cuemu::kIdTag)) {
        ::cuemu::warn("ncclCommInitRank(%d ranks, rank %d): bad arguments or an id not from ncclGetUniqueId", nranks, rank);
        return ncclInvalidArgument;
    }
    MPI_Comm dup = MPI_COMM_NULL;
    if (nranks > 1) {
        int init = 0, world = 0, me = -1;
        MPI_Initialized(&init);
        if (init) {
            MPI_Comm_size(MPI_COMM_WORLD, &world);
            MPI_Comm_rank(MPI_COMM_WORLD, &me);
        }
        if (!init || world != nranks || me != rank) {
            ::cuemu::warn("ncclCommInitRank(%d ranks, rank %d): the emulation's communicator is the MPI job's (%s)", nranks, rank,
                          init ? "another size or rank" : "MPI is not initialised");
            return ncclInvalidUsage;
        }
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    }
    *comm = new ncclComm{::cuemu::kCommMagic, nranks, rank, dup, nullptr};
    const char *rc = std::getenv("NCCL_RUNTIME_CONNECT");
    if (rc && !std::strcmp(rc, "0") && !::cuemu::nccl_connect("ncclCommInitRank", *comm)) {
        if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
        delete *comm;
        *comm = nullptr;
        return ncclUnhandledCudaError;
    }
    return ncclSuccess;
}
inline ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    if (!::cuemu::comm_ok("ncclCommDestroy", comm)) return ncclInvalidArgument;
    if (comm->buffers) ::cuemu::free_impl("ncclCommDestroy", comm->buffers);
    if (comm->comm != MPI_COMM_NULL) MPI_Comm_free(&comm->comm);
    comm->magic = ::cuemu::kDead;
    delete comm;
    return ncclSuccess;
}
inline ncclResult_t ncclGroupStart() {
    ::cuemu::nccl_group_depth++;
    return ncclSuccess;
}
inline ncclResult_t ncclGroupEnd() {
    if (::cuemu::nccl_group_depth <= 0) {
        ::cuemu::warn("ncclGroupEnd without ncclGroupStart");
        return ncclInvalidUsage;
    }
    ::cuemu::nccl_group_depth--;
    return ncclSuccess;
}
inline ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    const char *fn = "ncclAllReduce";
    if (!::cuemu::nccl_common(fn, comm, stream, count)) return ncclInvalidArgument;
    size_t e = ::cuemu::nccl_size(fn, type, op, true), b = e * count;
    if (!e) return ncclInvalidArgument;
    ::cuemu::DeviceAccess acc;
    if (!::cuemu::nccl_buf(fn, "sendbuff", sendbuff, b) || !::cuemu::nccl_buf(fn, "recvbuff", recvbuff, b)) return ncclInvalidArgument;
    if (sendbuff != recvbuff && ::cuemu::nccl_overlap(sendbuff, b, recvbuff, b)) {
        ::cuemu::warn("%s: sendbuff and recvbuff overlap without being the same", fn);
        return ncclInvalidArgument;
    }
    if (!count) return ncclSuccess;
    if (sendbuff != recvbuff) std::memcpy(recvbuff, sendbuff, b);
    if (comm->nranks > 1) MPI_Allreduce(MPI_IN_PLACE, recvbuff, (int)count, ::cuemu::nccl_mpi(type), MPI_SUM, comm->comm);
    return ncclSuccess;
}
namespace cuemu {
// ncclReduceScatter (reduce: the whole sendbuff summed, this rank's part of it to recvbuff) and ncclAllGather (this
// rank's sendbuff to its part of the whole recvbuff, every rank's to every rank); in place where the part is the
// whole buffer + rank x count
inline ncclResult_t nccl_parted(const char *fn, bool reduce, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                ncclComm_t comm, cudaStream_t stream) {
    if (!nccl_common(fn, comm, stream, count * (size_t)(comm && comm->magic == kCommMagic ? comm->nranks : 1))) return ncclInvalidArgument;
    size_t e = nccl_size(fn, type, op, reduce), b = e * count, wb = b * (size_t)comm->nranks;
    if (!e) return ncclInvalidArgument;
    const char *whole = (const char *)(reduce ? sendbuff : recvbuff), *part = (const char *)(reduce ? recvbuff : sendbuff);
    const char *wn = reduce ? "sendbuff" : "recvbuff", *pn = reduce ? "recvbuff" : "sendbuff";
    DeviceAccess acc;
    if (!nccl_buf(fn, wn, whole, wb) || !nccl_buf(fn, pn, part, b)) return ncclInvalidArgument;
    if (part != whole + (size_t)comm->rank * b && nccl_overlap(whole, wb, part, b)) {
        warn("%s: %s overlaps %s but is not %s + rank x count (in place)", fn, pn, wn, wn);
        return ncclInvalidArgument;
    }
    if (!count) return ncclSuccess;
    void *tmp = std::malloc(b);
    if (!tmp) return ncclSystemError;
    if (reduce) {
        if (comm->nranks > 1) MPI_Reduce_scatter_block(sendbuff, tmp, (int)count, nccl_mpi(type), MPI_SUM, comm->comm);
        else std::memcpy(tmp, sendbuff, b);
        std::memcpy(recvbuff, tmp, b);
    } else {
        std::memcpy(tmp, sendbuff, b);
        if (comm->nranks > 1) MPI_Allgather(tmp, (int)count, nccl_mpi(type), recvbuff, (int)count, nccl_mpi(type), comm->comm);
        else std::memcpy(recvbuff, tmp, b);
    }
    std::free(tmp);
    return ncclSuccess;
}
} // namespace cuemu
inline ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream) {
    return ::cuemu::nccl_parted("ncclReduceScatter", true, sendbuff, recvbuff, recvcount, type, op, comm, stream);
}
inline ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t type, ncclComm_t comm, cudaStream_t stream) {
    return ::cuemu::nccl_parted("ncclAllGather", false, sendbuff, recvbuff, sendcount, type, ncclSum, comm, stream);
}
namespace cuemu {
// ncclReduce (reduce) and ncclBroadcast: one rank's buffer, root's, in place where sendbuff = recvbuff
inline ncclResult_t nccl_rooted(const char *fn, bool reduce, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                int root, ncclComm_t comm, cudaStream_t stream) {
    if (!nccl_common(fn, comm, stream, count)) return ncclInvalidArgument;
    size_t e = nccl_size(fn, type, op, reduce), b = e * count;
    if (!e) return ncclInvalidArgument;
    if (root < 0 || root >= comm->nranks) {
        warn("%s: root %d is not a rank of %d", fn, root, comm->nranks);
        return ncclInvalidArgument;
    }
    const bool me = comm->rank == root;
    DeviceAccess acc;
    // a reduce reads every rank's sendbuff and writes root's recvbuff; a broadcast reads root's and writes every one's
    if (((reduce || me) && !nccl_buf(fn, "sendbuff", sendbuff, b)) || ((!reduce || me) && !nccl_buf(fn, "recvbuff", recvbuff, b))) return ncclInvalidArgument;
    if (me && sendbuff != recvbuff && nccl_overlap(sendbuff, b, recvbuff, b)) {
        warn("%s: sendbuff and recvbuff overlap without being the same", fn);
        return ncclInvalidArgument;
    }
    if (!count) return ncclSuccess;
    if (me && sendbuff != recvbuff) std::memcpy(recvbuff, sendbuff, b);
    if (comm->nranks == 1) return ncclSuccess;
    if (reduce) MPI_Reduce(me ? MPI_IN_PLACE : sendbuff, me ? recvbuff : nullptr, (int)count, nccl_mpi(type), MPI_SUM, root, comm->comm);
    else MPI_Bcast(recvbuff, (int)count, nccl_mpi(type), root, comm->comm);
    return ncclSuccess;
}
} // namespace cuemu
inline ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm,
                               cudaStream_t stream) {
    return ::cuemu::nccl_rooted("ncclReduce", true, sendbuff, recvbuff, count, type, op, root, comm, stream);
}
inline ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t type, int root, ncclComm_t comm, cudaStream_t stream) {
    return ::cuemu::nccl_rooted("ncclBroadcast", false, sendbuff, recvbuff, count, type, ncclSum, root, comm, stream);
}
#endif // CUEMU_NCCL

#endif // CUEMU_H
