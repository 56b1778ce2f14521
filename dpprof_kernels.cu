// dpprof_kernels.cu - the CUDA backend of dpprof (the only CUDA translation unit).
// build: make (nvcc -std=c++17 -c dpprof_kernels.cu); linked into dpprof with -lcudart -lcublas.
// this version holds the device plumbing: device query and device memory through the accountant.
// the op kernels (each beside its reference dpprof_<op>_ref() in dpprof.h) come with the cuda backend.
#include "dpprof.h"

#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

static char dpprof_cu_err[512] = "";

// every cuda call goes through here: file:line and the runtime's words for dpprof_cuda_last_error()
static int dpprof_cu_check(cudaError_t e, const char *what, const char *file, int line) {
    if (e == cudaSuccess) return DPPROF_OK;
    std::snprintf(dpprof_cu_err, sizeof dpprof_cu_err, "%s:%d: %s: %s", file, line, what, cudaGetErrorString(e));
    cudaGetLastError(); // clear the sticky-free error so the next call starts clean
    if (e == cudaErrorMemoryAllocation) return DPPROF_ERR_OOM;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) return DPPROF_ERR_NO_DEVICE;
    return DPPROF_ERR_CUDA;
}
#define DPPROF_CU(call) dpprof_cu_check((call), #call, __FILE__, __LINE__)

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
    if ((rc = DPPROF_CU(cudaSetDevice(device))) != DPPROF_OK) return rc;
    return DPPROF_CU(cudaMemGetInfo(&info->free_bytes, &info->total_bytes));
}

// device memory through the accountant: the bytes requested are what the report counts; the
// driver's own figure (cudaMemGetInfo) is reported beside it so the two can be compared
extern "C" int dpprof_cuda_malloc(dpprof_prof *p, void **ptr, size_t bytes, int category, int module) {
    int rc;
    if (!ptr) return DPPROF_ERR_INVALID;
    *ptr = nullptr;
    rc = DPPROF_CU(cudaMalloc(ptr, bytes ? bytes : 1));
    if (rc != DPPROF_OK) {
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
