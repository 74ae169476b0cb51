#include "common.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>

namespace xdev::cuda {
namespace {

std::atomic<const xdev_host_api_t*> g_host{nullptr};
std::mutex g_instances_mutex;
std::vector<const xdev_host_api_t*> g_instance_hosts;  // one per live instance

}  // namespace

const xdev_host_api_t* global_host() noexcept { return g_host.load(std::memory_order_acquire); }

void set_query_host(const xdev_host_api_t* host) noexcept {
  if (can_create_status(host)) g_host.store(host, std::memory_order_release);
}

void register_instance_host(const xdev_host_api_t* host) {
  std::lock_guard lock(g_instances_mutex);
  g_instance_hosts.push_back(host);
  g_host.store(host, std::memory_order_release);
}

void unregister_instance_host(const xdev_host_api_t* host) noexcept {
  std::lock_guard lock(g_instances_mutex);
  const auto it = std::find(g_instance_hosts.begin(), g_instance_hosts.end(), host);
  if (it != g_instance_hosts.end()) g_instance_hosts.erase(it);
  g_host.store(g_instance_hosts.empty() ? nullptr : g_instance_hosts.back(),
               std::memory_order_release);
}

bool can_create_status(const xdev_host_api_t* host) noexcept {
  return host != nullptr && XDEV_HAS_FIELD(host, xdev_host_api_t, status_create) &&
         host->status_create != nullptr;
}

xdev_status_t* fail(const xdev_host_api_t* host, xdev_status_code_t code, const char* format,
                    ...) noexcept {
  if (!can_create_status(host)) host = global_host();
  if (!can_create_status(host)) return nullptr;
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  return host->status_create(host->host_context, code, text);
}

void log(const xdev_host_api_t* host, xdev_log_level_t level, const char* format, ...) noexcept {
  if (host == nullptr || !XDEV_HAS_FIELD(host, xdev_host_api_t, log) || host->log == nullptr) {
    return;
  }
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  host->log(host->host_context, level, text);
}

xdev_status_t* unexpected(const xdev_host_api_t* host, const char* slot) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return fail(host, XDEV_STATUS_OUT_OF_MEMORY, "%s: out of host memory", slot);
  } catch (const std::exception& error) {
    return fail(host, XDEV_STATUS_INTERNAL, "%s: unexpected error: %s", slot, error.what());
  } catch (...) {
    return fail(host, XDEV_STATUS_INTERNAL, "%s: unexpected unknown exception", slot);
  }
}

xdev_status_t* null_argument(const xdev_host_api_t* host, const char* slot,
                             const char* argument) noexcept {
  return fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", slot, argument);
}

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

xdev_status_t* cuda_failure(const xdev_host_api_t* host, const char* slot, const char* what,
                            int ordinal, cudaError_t error) noexcept {
  // Reset the thread's last error: it was handled here.
  (void)cudaGetLastError();
  const char* name = cudaGetErrorName(error);
  const char* text = cudaGetErrorString(error);
  return fail(host, status_code(error), "%s: %s on cuda device %d: %s (%s)", slot, what, ordinal,
              text != nullptr ? text : "unknown error", name != nullptr ? name : "?");
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

DeviceGuard::DeviceGuard(int ordinal) noexcept {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {
    (void)cudaGetLastError();
    current = -1;
  }
  if (current == ordinal) return;
  error_ = cudaSetDevice(ordinal);
  if (error_ != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  previous_ = current;
  switched_ = true;
}

DeviceGuard::~DeviceGuard() {
  if (switched_ && previous_ >= 0) {
    if (cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
  }
}

}  // namespace xdev::cuda
