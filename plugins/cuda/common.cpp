#include "common.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>

namespace xdev::cuda {
constinit ph::PluginHost g_host{"cuda"};

xdev_status_code_t status_code(cudaError_t error) noexcept {
  switch (error) {
    case cudaSuccess:
      return XDEV_STATUS_OK;
    case cudaErrorMemoryAllocation:
      return XDEV_STATUS_OUT_OF_MEMORY;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidConfiguration:
      return XDEV_STATUS_INVALID_ARGUMENT;
    case cudaErrorNotSupported:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInvalidPtx:
      return XDEV_STATUS_UNIMPLEMENTED;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInitializationError:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorSystemNotReady:
    case cudaErrorECCUncorrectable:
    case cudaErrorHardwareStackError:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
    case cudaErrorCudartUnloading:
      return XDEV_STATUS_UNAVAILABLE;
    default:
      return XDEV_STATUS_INTERNAL;
  }
}

namespace {

// The first sticky error of each CUDA ordinal (0: none), and where it came
// from. Written once per ordinal (the compare-exchange winner fills `where`
// before it publishes `ready`).
struct StickyFault {
  std::atomic<int> error{0};
  std::atomic<bool> ready{false};
  char where[160] = {};
};
constexpr int kTrackedOrdinals = 256;
std::array<StickyFault, kTrackedOrdinals> g_sticky;

void mark_sticky(int ordinal, cudaError_t error, const char* slot, const char* what) noexcept {
  if (ordinal < 0 || ordinal >= kTrackedOrdinals) return;
  StickyFault& fault = g_sticky[static_cast<size_t>(ordinal)];
  int expected = 0;
  if (!fault.error.compare_exchange_strong(expected, static_cast<int>(error))) return;
  std::snprintf(fault.where, sizeof(fault.where), "%s (%s)", slot, what);
  fault.ready.store(true, std::memory_order_release);
}

}  // namespace

bool is_sticky(cudaError_t error) noexcept {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
      return true;
    default:
      return false;
  }
}

bool is_unusable(int ordinal) noexcept {
  return ordinal >= 0 && ordinal < kTrackedOrdinals &&
         g_sticky[static_cast<size_t>(ordinal)].error.load(std::memory_order_acquire) != 0;
}

xdev_status_t* check_usable(const xdev_host_api_t* host, const char* slot, int ordinal) noexcept {
  if (!is_unusable(ordinal)) return nullptr;
  const StickyFault& fault = g_sticky[static_cast<size_t>(ordinal)];
  const auto error = static_cast<cudaError_t>(fault.error.load(std::memory_order_acquire));
  const char* where = fault.ready.load(std::memory_order_acquire) ? fault.where : "a call";
  const char* name = cudaGetErrorName(error);
  return g_host.fail(
      host, XDEV_STATUS_UNAVAILABLE,
      "%s: cuda device %d is unusable: %s failed with %s (%s), a sticky CUDA error that "
      "no synchronize clears; restart the process to use this device again (the "
      "plugin's other devices keep working)",
      slot, ordinal, where, cudaGetErrorString(error), name != nullptr ? name : "?");
}

xdev_status_t* cuda_failure(const xdev_host_api_t* host, const char* slot, const char* what,
                            int ordinal, cudaError_t error) noexcept {
  // Reset the thread's last error: it was handled here.
  (void)cudaGetLastError();
  const char* name = cudaGetErrorName(error);
  const char* text = cudaGetErrorString(error);
  if (is_sticky(error)) {
    mark_sticky(ordinal, error, slot, what);
    return g_host.fail(
        host, XDEV_STATUS_UNAVAILABLE,
        "%s: %s on cuda device %d: %s (%s); the device is unusable for the rest of this "
        "process (a sticky CUDA error; the plugin's other devices keep working)",
        slot, what, ordinal, text != nullptr ? text : "unknown error",
        name != nullptr ? name : "?");
  }
  return g_host.fail(host, status_code(error), "%s: %s on cuda device %d: %s (%s)", slot, what,
                     ordinal, text != nullptr ? text : "unknown error",
                     name != nullptr ? name : "?");
}

const char* cublas_status_name(cublasStatus_t status) noexcept {
  switch (status) {
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
  return "unknown cuBLAS status";
}

// ---------------------------------------------------------------------------
// The context operations of DeviceGuard (device_guard.hpp): the runtime's
// cudaSetDevice to make a device current, the driver's cuCtxGetCurrent /
// cuCtxSetCurrent to see and restore exactly what the thread had. The driver
// library is already loaded (the runtime loaded it); it is looked up, never
// linked, so the plugin still loads where there is no driver.
namespace {

using CuCtxGetCurrent = int (*)(void** context);
using CuCtxSetCurrent = int (*)(void* context);

struct DriverContextApi {
  CuCtxGetCurrent get = nullptr;
  CuCtxSetCurrent set = nullptr;
};

const DriverContextApi& driver_context_api() {
  static const DriverContextApi api = [] {
    DriverContextApi a;
    if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
      a.get = reinterpret_cast<CuCtxGetCurrent>(dlsym(driver, "cuCtxGetCurrent"));
      a.set = reinterpret_cast<CuCtxSetCurrent>(dlsym(driver, "cuCtxSetCurrent"));
      if (a.get == nullptr || a.set == nullptr) a = DriverContextApi{};
    }
    return a;
  }();
  return api;
}

std::array<std::atomic<void*>, 256> g_primary{};  // by ordinal, once made current

void* ops_current() {
  const DriverContextApi& api = driver_context_api();
  void* context = nullptr;
  if (api.get == nullptr || api.get(&context) != 0) return nullptr;
  return context;
}

bool ops_bind(void* context) {
  const DriverContextApi& api = driver_context_api();
  return api.set != nullptr && api.set(context) == 0;
}

int ops_make_current(int ordinal, void** out_context) {
  const cudaError_t error = cudaSetDevice(ordinal);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    *out_context = nullptr;
    return static_cast<int>(error);
  }
  *out_context = ops_current();
  if (ordinal >= 0 && static_cast<size_t>(ordinal) < g_primary.size() && *out_context != nullptr) {
    g_primary[static_cast<size_t>(ordinal)].store(*out_context, std::memory_order_relaxed);
  }
  return 0;
}

void* ops_known_primary(int ordinal) {
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= g_primary.size()) return nullptr;
  return g_primary[static_cast<size_t>(ordinal)].load(std::memory_order_relaxed);
}

constexpr ContextOps kCudaContextOps = {&ops_current, &ops_bind, &ops_make_current,
                                        &ops_known_primary};

}  // namespace

const ContextOps& cuda_context_ops() noexcept { return kCudaContextOps; }

}  // namespace xdev::cuda
