// State and helpers shared by the cuda plugin's host code (plugin.cpp, the
// ABI table; ops.cpp, the kernels). Compiled by the host C++ compiler only.
//
// The opaque ABI objects are defined here. Each is created and destroyed by
// this plugin only; the core never looks inside.
#pragma once

#include <xdev/plugin.h>
#include <xdev/plugin_helpers.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "device_guard.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace xdev::cuda {

// What initialize learned about one CUDA device. Strings handed out through
// the ABI point into these members; they are never modified after
// initialize, so the pointers stay valid until shutdown.
struct DeviceInfo {
  int ordinal = 0;  // CUDA runtime ordinal (after CUDA_VISIBLE_DEVICES)
  std::string name;
  uint64_t memory_total = 0;
  std::string bus_id;  // "0000:05:00.0"
  int32_t numa_node = -1;
  int cc_major = 0;
  int cc_minor = 0;
  int multiprocessor_count = 0;
  std::string description;
  std::vector<std::pair<std::string, std::string>> property_text;
  std::vector<xdev_property_t> properties;  // points into property_text
  std::vector<bool> can_access_peer;        // indexed by the other ordinal
};

}  // namespace xdev::cuda

// One initialized plugin instance.
struct xdev_plugin_t {
  const xdev_host_api_t* host = nullptr;  // owned by the core, outlives us
  std::vector<xdev::cuda::DeviceInfo> devices;
  std::string status_line;  // describe_status
  int runtime_version = 0;  // cudaRuntimeGetVersion
  int driver_version = 0;   // cudaDriverGetVersion, 0 when no driver
  std::mutex mutex;         // guards `open`
  std::vector<bool> open;   // per ordinal: device_open'ed and not closed
  // XDEV_CUDA_ALLOW_TF32=1 at initialize: cuBLAS may round float32 inputs
  // of MatMul to TF32 (10-bit mantissa). Off unless the user asks.
  bool allow_tf32 = false;
};

// An opened CUDA device.
struct xdev_device_t {
  xdev_plugin_t* plugin = nullptr;
  int ordinal = 0;
  const xdev::cuda::DeviceInfo* info = nullptr;
  std::atomic<int64_t> live_allocations{0};
  std::atomic<int64_t> live_host_allocations{0};
  std::atomic<int64_t> live_streams{0};
  std::atomic<int64_t> live_events{0};
  // Allocations with an alignment above cudaMalloc's 256 bytes: aligned
  // pointer -> the pointer cudaMalloc returned. Rare.
  std::mutex over_aligned_mutex;
  std::unordered_map<void*, void*> over_aligned;
  // Peer access enabled from this device to each other ordinal (lazily, at
  // the first copy_peer that needs it).
  std::mutex peer_mutex;
  std::vector<bool> peer_enabled;
};

// A CUDA stream (non-blocking with respect to the legacy default stream),
// with the per-stream resources kernels need. A stream is used by one
// thread at a time (plugin.h), so these need no lock.
struct xdev_stream_t {
  xdev_device_t* device = nullptr;
  cudaStream_t stream = nullptr;
  // Created with the stream (cuBLAS loaded then, on the first stream of the
  // process), bound to it for life, so MatMul never creates one while the
  // core's pool holds most of the device. Its workspace is kernel scratch
  // from the pool, set per call (ops.cpp). NULL when cuBLAS could not be
  // loaded (`blas_error` says why; float MatMul then fails with it).
  cublasHandle_t blas = nullptr;
  std::string blas_error;
};

// ABI 1.7: one device's rank of an NCCL communicator (plugin.cpp, built
// with NCCL only: XDEV_CUDA_NCCL).
struct xdev_communicator_t {
  xdev_device_t* device = nullptr;
  void* nccl = nullptr;  // the ncclComm_t
  int rank = 0;
};

// A CUDA event created with cudaEventDisableTiming. CUDA requires an event
// to be recorded on a stream of the device it was created on: recording on
// another device's stream re-creates it there.
struct xdev_event_t {
  xdev_device_t* device = nullptr;
  std::mutex mutex;  // guards event/ordinal while re-creating
  cudaEvent_t event = nullptr;
  int ordinal = 0;  // the device `event` belongs to
  bool recorded = false;  // ABI 1.4: event_elapsed_ms needs a recorded event
};

namespace xdev::cuda {

namespace ph = xdev::plugin_helpers;

// The plugin-wide host tables (the fallback for calls with a NULL handle:
// the most recently initialized live instance's, or the query's), statuses,
// log lines and the exception guard (common.cpp).
extern ph::PluginHost g_host;

// The xdev status code for a CUDA error.
xdev_status_code_t status_code(cudaError_t error) noexcept;
// "slot: what on cuda device N: <description> (cudaErrorName)". Clears the
// thread's last-error state, so a handled error does not resurface at the
// next kernel launch check. A sticky error (below) also marks the device
// unusable and says so.
xdev_status_t* cuda_failure(const xdev_host_api_t* host, const char* slot, const char* what,
                            int ordinal, cudaError_t error) noexcept;
const char* cublas_status_name(cublasStatus_t status) noexcept;

// Sticky errors. After a device fault (an illegal address, a trap, an
// uncorrectable ECC error) CUDA refuses every later call on that device's
// context for the rest of the process; no synchronize clears it. The plugin
// remembers the first such error per CUDA ordinal (process-wide: plugin
// instances share the primary context) and from then on answers every call
// on that device with XDEV_STATUS_UNAVAILABLE naming it, without calling
// CUDA; other devices are not affected.
bool is_sticky(cudaError_t error) noexcept;
// NULL while device `ordinal` is usable, else the UNAVAILABLE status.
xdev_status_t* check_usable(const xdev_host_api_t* host, const char* slot, int ordinal) noexcept;
bool is_unusable(int ordinal) noexcept;
// The guard's error as a CUDA error code.
inline cudaError_t guard_error(const DeviceGuard& guard) noexcept {
  return static_cast<cudaError_t>(guard.error());
}

// The kernels this plugin registers (ops.cpp).
const xdev_kernel_info_t* const* kernel_list(uint32_t* out_count) noexcept;

}  // namespace xdev::cuda
