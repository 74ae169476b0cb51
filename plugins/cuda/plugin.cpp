// The cuda plugin's implementation: NVIDIA GPUs through the CUDA runtime and
// cuBLAS (type "GPU", platform "cuda"), implementing the plugin ABI v1
// (xdev/plugin.h).
//
// The core never loads this library itself: the plugin file it finds is the
// thin xdev_plugin_cuda.so (shim.cpp), which loads this one
// (cuda_impl/xdev_cuda_impl.so) only once the driver reports a device, and
// forwards every slot here. So this library links the shared CUDA runtime
// (libcudart.so) freely; it loads cuBLAS itself at the first stream
// (blas.hpp) and never links the driver library. Its entry point is
// xdev_cuda_impl_query, so it is not mistaken for a plugin file.
//
// Every function reached through the table is noexcept: failures become
// status objects made with the host's status_create, never exceptions.
#include <xdev/env_value.hpp>
#include <xdev/plugin.h>

#include <cuda_runtime_api.h>

#include "cuda_plugin_config.hpp"
#if XDEV_CUDA_NCCL
#include <nccl.h>
#endif

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "blas.hpp"
#include "common.hpp"
#include "cuda_plugin_config.hpp"
#include "gpu_type.hpp"

static_assert(XDEV_ABI_VERSION_MAJOR == 1, "the cuda plugin implements ABI major version 1");

namespace xdev::cuda {
namespace {

// cudaMalloc returns addresses aligned to at least this.
constexpr uint64_t kNativeAlignment = 256;

std::string version_text(int version) {
  // CUDA encodes 13.0 as 13000.
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string format_gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1ULL << 30));
  return text;
}

// The NUMA node of a PCI device, from sysfs; -1 when unknown.
int32_t sysfs_numa_node(const std::string& bus_id) {
  std::ifstream file("/sys/bus/pci/devices/" + bus_id + "/numa_node");
  int node = -1;
  if (file >> node) return node < 0 ? -1 : node;
  return -1;
}

const xdev_host_api_t* host_of(const xdev_device_t* device) {
  return device != nullptr ? device->plugin->host : g_host.fallback();
}

// ---------------------------------------------------------------------------
// Discovery (in initialize): device count, properties, peers

// Why CUDA reports no devices, in the words xdev-smi prints.
std::string no_device_reason(cudaError_t error, int driver_version, int runtime_version) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string note;
  if (visible != nullptr) note = std::string(" (CUDA_VISIBLE_DEVICES=\"") + visible + "\")";
  switch (error) {
    case cudaErrorInsufficientDriver:
      if (driver_version == 0) return "CUDA driver not found";
      return "CUDA driver too old: it supports CUDA " + version_text(driver_version) +
             ", the plugin needs CUDA " + version_text(runtime_version);
    case cudaErrorNoDevice:
      return "no CUDA-capable device" + note;
    case cudaSuccess:
      return "no CUDA-capable device" + note;
    default: {
      const char* name = cudaGetErrorName(error);
      const char* text = cudaGetErrorString(error);
      return std::string("CUDA unavailable: ") + (text ? text : "unknown error") + " (" +
             (name ? name : "?") + ")" + note;
    }
  }
}

DeviceInfo describe_device(int ordinal, const cudaDeviceProp& prop, int runtime_version,
                           int driver_version) {
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.memory_total = prop.totalGlobalMem;
  char bus[32];
  std::snprintf(bus, sizeof(bus), "%04x:%02x:%02x.0", static_cast<unsigned>(prop.pciDomainID),
                static_cast<unsigned>(prop.pciBusID), static_cast<unsigned>(prop.pciDeviceID));
  info.bus_id = bus;
  int numa = -1;
  if (cudaDeviceGetAttribute(&numa, cudaDevAttrHostNumaId, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();  // an older driver does not know the attribute
    numa = -1;
  }
  info.numa_node = numa >= 0 ? numa : sysfs_numa_node(info.bus_id);
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.multiprocessor_count = prop.multiProcessorCount;
  const std::string cc = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  info.description = "device: " + std::to_string(ordinal) + ", name: " + info.name +
                     ", pci bus id: " + info.bus_id + ", compute capability: " + cc;

  int clock_khz = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    clock_khz = 0;
  }
  char uuid[64];
  const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  std::snprintf(uuid, sizeof(uuid),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  info.property_text = {
      {"compute_capability", cc},
      {"multiprocessor_count", std::to_string(prop.multiProcessorCount)},
      {"memory_bus_width", std::to_string(prop.memoryBusWidth)},
      {"l2_cache_size", std::to_string(prop.l2CacheSize)},
      {"max_threads_per_multiprocessor", std::to_string(prop.maxThreadsPerMultiProcessor)},
      {"shared_memory_per_multiprocessor", std::to_string(prop.sharedMemPerMultiprocessor)},
      {"clock_rate_khz", std::to_string(clock_khz)},
      {"ecc_enabled", prop.ECCEnabled ? "true" : "false"},
      {"integrated", prop.integrated ? "true" : "false"},
      {"uuid", uuid},
      {"cuda_ordinal", std::to_string(ordinal)},
      {"cuda_runtime_version", version_text(runtime_version)},
      {"cuda_driver_version", version_text(driver_version)},
  };
  return info;
}

// Whether float32 MatMul may use TF32 tensor cores (XDEV_CUDA_ALLOW_TF32).
void add_tf32_property(DeviceInfo& info, bool allow_tf32) {
  info.property_text.emplace_back("tf32", allow_tf32 ? "allowed (XDEV_CUDA_ALLOW_TF32)" : "off");
}

void finish_properties(DeviceInfo& info) {
  std::string peers;
  for (size_t other = 0; other < info.can_access_peer.size(); ++other) {
    if (!info.can_access_peer[other]) continue;
    if (!peers.empty()) peers += ",";
    peers += std::to_string(other);
  }
  info.property_text.emplace_back("peer_access", peers.empty() ? "none" : peers);
  info.properties.clear();
  for (const auto& [key, value] : info.property_text) {
    info.properties.push_back({key.c_str(), value.c_str()});
  }
}

void discover(xdev_plugin_t& plugin) {
  const xdev_host_api_t* host = plugin.host;
  if (cudaRuntimeGetVersion(&plugin.runtime_version) != cudaSuccess) {
    (void)cudaGetLastError();
    plugin.runtime_version = CUDART_VERSION;
  }
  if (cudaDriverGetVersion(&plugin.driver_version) != cudaSuccess) {
    (void)cudaGetLastError();
    plugin.driver_version = 0;
  }
  // The count stays untouched when the call fails (no driver): start at 0.
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count <= 0) {
    (void)cudaGetLastError();
    plugin.status_line =
        no_device_reason(error, plugin.driver_version, plugin.runtime_version);
    g_host.log(host, XDEV_LOG_DEBUG, "no devices: %s", plugin.status_line.c_str());
    return;
  }
  std::vector<DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    cudaDeviceProp prop{};
    const cudaError_t e = cudaGetDeviceProperties(&prop, ordinal);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      // A device we cannot describe is left out; its ordinal would shift the
      // others, so stop here and keep the ones before it.
      g_host.log(
          host, XDEV_LOG_WARNING,
          "cannot read the properties of CUDA device %d: %s; it and later devices are left out",
          ordinal, cudaGetErrorString(e));
      break;
    }
    devices.push_back(describe_device(ordinal, prop, plugin.runtime_version,
                                      plugin.driver_version));
  }
  for (DeviceInfo& info : devices) {
    add_tf32_property(info, plugin.allow_tf32);
    info.can_access_peer.assign(devices.size(), false);
    for (const DeviceInfo& other : devices) {
      if (other.ordinal == info.ordinal) continue;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, info.ordinal, other.ordinal) != cudaSuccess) {
        (void)cudaGetLastError();
        can = 0;
      }
      info.can_access_peer[other.ordinal] = can != 0;
    }
    finish_properties(info);
  }
  plugin.devices = std::move(devices);
  plugin.open.assign(plugin.devices.size(), false);

  std::string line = std::to_string(plugin.devices.size()) +
                     (plugin.devices.size() == 1 ? " device (" : " devices (");
  // Name the models, "2x NVIDIA H100 80GB HBM3" when they are all alike.
  bool alike = std::all_of(plugin.devices.begin(), plugin.devices.end(),
                           [&](const DeviceInfo& d) { return d.name == plugin.devices[0].name; });
  if (alike) {
    line += (plugin.devices.size() > 1 ? std::to_string(plugin.devices.size()) + "x " : "") +
            plugin.devices[0].name;
  } else {
    for (size_t i = 0; i < plugin.devices.size(); ++i) {
      line += (i ? ", " : "") + plugin.devices[i].name;
    }
  }
  line += "; CUDA driver " + version_text(plugin.driver_version) + ", runtime " +
          version_text(plugin.runtime_version);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    line += std::string("; CUDA_VISIBLE_DEVICES=\"") + visible + "\"";
  }
  line += ")";
  plugin.status_line = std::move(line);
}

// ---------------------------------------------------------------------------
// Life cycle

xdev_status_t* plugin_initialize(const xdev_plugin_init_args_t* args,
                                 xdev_plugin_t** out_plugin) noexcept {
  constexpr const char* kSlot = "initialize";
  const xdev_host_api_t* host = g_host.fallback();
  if (out_plugin == nullptr) return g_host.null_argument(host, kSlot, "out_plugin");
  *out_plugin = nullptr;
  if (args == nullptr) return g_host.null_argument(host, kSlot, "args");
  if (!XDEV_HAS_FIELD(args, xdev_plugin_init_args_t, host)) {
    return g_host.fail(host, XDEV_STATUS_ABI_MISMATCH,
                       "%s: args->struct_size is %zu bytes; ABI v1.0 init arguments need %zu",
                       kSlot, args->struct_size,
                       static_cast<size_t>(XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE));
  }
  if (!xdev_plugin_can_create_status(args->host)) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: args->host is NULL or has no status_create", kSlot);
  }
  host = args->host;
  if (!XDEV_HAS_FIELD(host, xdev_host_api_t, log)) {
    return g_host.fail(host, XDEV_STATUS_ABI_MISMATCH,
                       "%s: the host table is %zu bytes; ABI v1.0 needs %zu", kSlot,
                       host->struct_size, static_cast<size_t>(XDEV_HOST_API_STRUCT_SIZE));
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    auto plugin = std::make_unique<xdev_plugin_t>();
    plugin->host = host;
    // TF32 only when the user asks for it: float32 MatMul stays
    // float32-accurate, as on the CPU.
    const auto tf32 = xdev::env_value::parse_bool(
        "XDEV_CUDA_ALLOW_TF32", std::getenv("XDEV_CUDA_ALLOW_TF32"), false);
    if (!tf32.ok()) g_host.log(host, XDEV_LOG_WARNING, "%s", tf32.warning.c_str());
    plugin->allow_tf32 = tf32.value;
    discover(*plugin);
    g_host.add_instance(host);
    g_host.log(host, XDEV_LOG_DEBUG, "initialized: %s", plugin->status_line.c_str());
    *out_plugin = plugin.release();
    return nullptr;
  });
}

void plugin_shutdown(xdev_plugin_t* plugin) noexcept {
  if (plugin == nullptr) return;
  std::unique_ptr<xdev_plugin_t> owned(plugin);
  // The primary contexts stay: the host program may use CUDA itself, and the
  // driver releases them at process exit.
  g_host.remove_instance(owned->host);
}

const char* plugin_describe_status(xdev_plugin_t* plugin) noexcept {
  if (plugin == nullptr) return "invalid plugin handle (NULL)";
  return plugin->status_line.c_str();
}

// ---------------------------------------------------------------------------
// Device types and physical devices

using cuda_common::kDeviceTypes;  // gpu_type.hpp

xdev_status_t* plugin_device_types(xdev_plugin_t* plugin,
                                   const xdev_device_type_info_t* const** out_types,
                                   uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_types";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (plugin == nullptr) return g_host.null_argument(host, kSlot, "plugin");
  return g_host.hand_out(host, kSlot, "out_types", kDeviceTypes,
                         static_cast<uint32_t>(std::size(kDeviceTypes)), out_types, out_count);
}

xdev_status_t* plugin_device_count(xdev_plugin_t* plugin, uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_count";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"plugin", plugin}, {"out_count", out_count}})) {
    return s;
  }
  *out_count = static_cast<uint32_t>(plugin->devices.size());
  return nullptr;
}

xdev_status_t* no_such_device(const xdev_plugin_t* plugin, const char* slot, uint32_t ordinal) {
  return g_host.fail(plugin->host, XDEV_STATUS_NOT_FOUND,
                     "%s: no CUDA device with ordinal %" PRIu32 " (the cuda plugin has %zu: %s)",
                     slot, ordinal, plugin->devices.size(), plugin->status_line.c_str());
}

xdev_status_t* plugin_device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                            xdev_device_properties_t* out_props) noexcept {
  constexpr const char* kSlot = "device_get_properties";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"plugin", plugin}, {"out_props", out_props}})) {
    return s;
  }
  if (ordinal >= plugin->devices.size()) return no_such_device(plugin, kSlot, ordinal);
  const DeviceInfo& info = plugin->devices[ordinal];
  // Fill only what the core's struct_size covers.
#define XDEV_CUDA_SET(field, value)                                  \
  if (XDEV_HAS_FIELD(out_props, xdev_device_properties_t, field)) {  \
    out_props->field = (value);                                      \
  }
  XDEV_CUDA_SET(type_index, 0U)
  XDEV_CUDA_SET(name, info.name.c_str())
  XDEV_CUDA_SET(memory_total, info.memory_total)
  XDEV_CUDA_SET(bus_id, info.bus_id.c_str())
  XDEV_CUDA_SET(numa_node, info.numa_node)
  XDEV_CUDA_SET(description, info.description.c_str())
  XDEV_CUDA_SET(properties, info.properties.data())
  XDEV_CUDA_SET(property_count, static_cast<uint32_t>(info.properties.size()))
#undef XDEV_CUDA_SET
  return nullptr;
}

// ---------------------------------------------------------------------------
// Device handles

xdev_status_t* plugin_device_open(xdev_plugin_t* plugin, uint32_t ordinal,
                                  xdev_device_t** out_device) noexcept {
  constexpr const char* kSlot = "device_open";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"plugin", plugin}, {"out_device", out_device}})) {
    return s;
  }
  *out_device = nullptr;
  if (ordinal >= plugin->devices.size()) return no_such_device(plugin, kSlot, ordinal);
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::lock_guard lock(plugin->mutex);
    if (plugin->open[ordinal]) {
      return g_host.fail(host, XDEV_STATUS_FAILED_PRECONDITION,
                         "%s: CUDA device %" PRIu32 " is already open", kSlot, ordinal);
    }
    const int cuda_ordinal = static_cast<int>(ordinal);
    if (xdev_status_t* s = check_usable(host, kSlot, cuda_ordinal)) return s;
    {
      // Creates the device's primary context now, so that a device that
      // cannot be used (exclusive mode, lost, out of memory) fails here with
      // a clear message rather than at the first allocation.
      DeviceGuard guard(cuda_ordinal);
      if (guard.error() != cudaSuccess) {
        return cuda_failure(host, kSlot, "making the device current", cuda_ordinal,
                            guard_error(guard));
      }
      if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
        return cuda_failure(host, kSlot, "creating the primary context", cuda_ordinal, e);
      }
    }
    auto device = std::make_unique<xdev_device_t>();
    device->plugin = plugin;
    device->ordinal = cuda_ordinal;
    device->info = &plugin->devices[ordinal];
    device->peer_enabled.assign(plugin->devices.size(), false);
    plugin->open[ordinal] = true;
    *out_device = device.release();
    return nullptr;
  });
}

void plugin_device_close(xdev_device_t* device) noexcept {
  if (device == nullptr) return;
  std::unique_ptr<xdev_device_t> owned(device);
  xdev_plugin_t* plugin = device->plugin;
  const int64_t allocations = device->live_allocations.load();
  const int64_t host_allocations = device->live_host_allocations.load();
  const int64_t streams = device->live_streams.load();
  const int64_t events = device->live_events.load();
  if (allocations != 0 || host_allocations != 0 || streams != 0 || events != 0) {
    g_host.log(plugin->host, XDEV_LOG_WARNING,
               "device_close: cuda device %d still has %" PRId64 " allocations, %" PRId64
               " pinned host allocations, %" PRId64 " streams and %" PRId64 " events; they leak",
               device->ordinal, allocations, host_allocations, streams, events);
  }
  std::lock_guard lock(plugin->mutex);  // std::mutex::lock only throws on misuse
  if (static_cast<size_t>(device->ordinal) < plugin->open.size()) {
    plugin->open[device->ordinal] = false;
  }
}

// ---------------------------------------------------------------------------
// Raw memory

xdev_status_t* plugin_memory_allocate(xdev_device_t* device, uint64_t size, uint64_t alignment,
                                      void** out_ptr) noexcept {
  constexpr const char* kSlot = "memory_allocate";
  const xdev_host_api_t* host = host_of(device);
  if (xdev_status_t* s = g_host.require(host, kSlot, {{"device", device}, {"out_ptr", out_ptr}})) {
    return s;
  }
  *out_ptr = nullptr;
  if (xdev_status_t* s = g_host.check_allocation(host, kSlot, size, alignment)) return s;
  const bool over_aligned = alignment > kNativeAlignment;
  const uint64_t request = over_aligned ? size + alignment - 1 : size;
  const uint64_t total = device->info->memory_total;
  if (request < size || request > total) {
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY,
                       "%s: cannot allocate %" PRIu64 " bytes (alignment %" PRIu64
                       ") on cuda device %d (%s): more than its %" PRIu64 " bytes of memory",
                       kSlot, size, alignment, device->ordinal, device->info->name.c_str(), total);
  }
  if (xdev_status_t* s = check_usable(host, kSlot, device->ordinal)) return s;
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    DeviceGuard guard(device->ordinal);
    if (guard.error() != cudaSuccess) {
      return cuda_failure(host, kSlot, "making the device current", device->ordinal,
                          guard_error(guard));
    }
    void* base = nullptr;
    const cudaError_t e = cudaMalloc(&base, static_cast<size_t>(request));
    if (e != cudaSuccess && is_sticky(e)) {
      return cuda_failure(host, kSlot, "cudaMalloc", device->ordinal, e);
    }
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      size_t free_bytes = 0, total_bytes = 0;
      if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) (void)cudaGetLastError();
      const char* name = cudaGetErrorName(e);
      return g_host.fail(
          host, e == cudaErrorMemoryAllocation ? XDEV_STATUS_OUT_OF_MEMORY : status_code(e),
          "%s: cannot allocate %" PRIu64 " bytes (alignment %" PRIu64
          ") on cuda device %d (%s): %s (%s); %zu of %zu bytes free",
          kSlot, size, alignment, device->ordinal, device->info->name.c_str(),
          cudaGetErrorString(e), name ? name : "?", free_bytes, total_bytes);
    }
    void* ptr = base;
    if (over_aligned) {
      const auto address = reinterpret_cast<uintptr_t>(base);
      ptr = reinterpret_cast<void*>((address + alignment - 1) & ~(uintptr_t{alignment} - 1));
      try {
        std::lock_guard lock(device->over_aligned_mutex);
        device->over_aligned.emplace(ptr, base);
      } catch (...) {
        (void)cudaFree(base);
        throw;
      }
    }
    device->live_allocations.fetch_add(1, std::memory_order_relaxed);
    *out_ptr = ptr;
    return nullptr;
  });
}

void plugin_memory_free(xdev_device_t* device, void* ptr) noexcept {
  if (ptr == nullptr || device == nullptr) return;
  void* base = ptr;
  try {
    std::lock_guard lock(device->over_aligned_mutex);
    if (!device->over_aligned.empty()) {
      if (auto it = device->over_aligned.find(ptr); it != device->over_aligned.end()) {
        base = it->second;
        device->over_aligned.erase(it);
      }
    }
  } catch (...) {
    // std::mutex::lock only throws on misuse; free what we were given.
  }
  DeviceGuard guard(device->ordinal);
  if (const cudaError_t e = cudaFree(base); e != cudaSuccess) {
    (void)cudaGetLastError();
    // After a sticky fault every cudaFree fails; that was reported already.
    g_host.log(device->plugin->host,
               is_unusable(device->ordinal) ? XDEV_LOG_DEBUG : XDEV_LOG_WARNING,
               "memory_free: cudaFree(%p) on cuda device %d: %s", base, device->ordinal,
               cudaGetErrorString(e));
  }
  device->live_allocations.fetch_sub(1, std::memory_order_relaxed);
}

xdev_status_t* plugin_memory_query(xdev_device_t* device, uint64_t* out_free,
                                   uint64_t* out_total) noexcept {
  constexpr const char* kSlot = "memory_query";
  const xdev_host_api_t* host = host_of(device);
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"device", device}, {"out_free", out_free}, {"out_total", out_total}})) {
    return s;
  }
  if (xdev_status_t* s = check_usable(host, kSlot, device->ordinal)) return s;
  DeviceGuard guard(device->ordinal);
  if (guard.error() != cudaSuccess) {
    return cuda_failure(host, kSlot, "making the device current", device->ordinal,
                        guard_error(guard));
  }
  size_t free_bytes = 0, total_bytes = 0;
  if (const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes); e != cudaSuccess) {
    return cuda_failure(host, kSlot, "cudaMemGetInfo", device->ordinal, e);
  }
  *out_free = free_bytes;
  *out_total = total_bytes;
  return nullptr;
}

xdev_status_t* plugin_host_memory_allocate(xdev_device_t* device, uint64_t size,
                                           void** out_ptr) noexcept {
  constexpr const char* kSlot = "host_memory_allocate";
  const xdev_host_api_t* host = host_of(device);
  if (xdev_status_t* s = g_host.require(host, kSlot, {{"device", device}, {"out_ptr", out_ptr}})) {
    return s;
  }
  *out_ptr = nullptr;
  if (size == 0) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: size is 0 bytes; it must be > 0",
                       kSlot);
  }
  if (size > SIZE_MAX) {
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY,
                       "%s: cannot pin %" PRIu64 " bytes: larger than the address space", kSlot,
                       size);
  }
  if (xdev_status_t* s = check_usable(host, kSlot, device->ordinal)) return s;
  DeviceGuard guard(device->ordinal);
  if (guard.error() != cudaSuccess) {
    return cuda_failure(host, kSlot, "making the device current", device->ordinal,
                        guard_error(guard));
  }
  void* ptr = nullptr;
  // Portable: pinned for every device of the process, not just this one.
  const cudaError_t e = cudaHostAlloc(&ptr, static_cast<size_t>(size), cudaHostAllocPortable);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY,
                       "%s: cannot allocate %" PRIu64
                       " bytes of pinned host memory for cuda device %d: "
                       "%s (%s)",
                       kSlot, size, device->ordinal, cudaGetErrorString(e), cudaGetErrorName(e));
  }
  device->live_host_allocations.fetch_add(1, std::memory_order_relaxed);
  *out_ptr = ptr;
  return nullptr;
}

void plugin_host_memory_free(xdev_device_t* device, void* ptr) noexcept {
  if (ptr == nullptr) return;
  // Any runtime call without a current context would create device 0's.
  DeviceGuard guard(device != nullptr ? device->ordinal : 0);
  if (const cudaError_t e = cudaFreeHost(ptr); e != cudaSuccess) {
    (void)cudaGetLastError();
    g_host.log(host_of(device), XDEV_LOG_WARNING, "host_memory_free: cudaFreeHost(%p): %s", ptr,
               cudaGetErrorString(e));
  }
  if (device != nullptr) device->live_host_allocations.fetch_sub(1, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// Streams and events

// The cuBLAS handle of a new stream (created with the stream, at device
// open, never behind the pool's back later). cuBLAS itself is loaded at the
// first stream of the process (blas.hpp); when it cannot be, the stream
// works and float MatMul reports why.
xdev_status_t* create_blas_handle(xdev_stream_t* stream) noexcept {
  constexpr const char* kSlot = "stream_create";
  xdev_device_t* device = stream->device;
  const xdev_host_api_t* host = device->plugin->host;
  std::string error;
  const Blas* blas = load_blas(&error);
  if (blas == nullptr) {
    try {
      stream->blas_error = error;
    } catch (...) {
    }
    g_host.log(host, XDEV_LOG_WARNING, "cuda device %d: %s; float MatMul will fail",
               device->ordinal, error.c_str());
    return nullptr;
  }
  cublasHandle_t handle = nullptr;
  if (const cublasStatus_t s = blas->create(&handle); s != CUBLAS_STATUS_SUCCESS) {
    (void)cudaGetLastError();
    return g_host.fail(
        host, s == CUBLAS_STATUS_ALLOC_FAILED ? XDEV_STATUS_OUT_OF_MEMORY : XDEV_STATUS_UNAVAILABLE,
        "%s: cublasCreate on cuda device %d failed: %s", kSlot, device->ordinal,
        cublas_status_name(s));
  }
  // Bound to the stream for life. Math mode: default (no TF32) unless the
  // user allowed TF32 with XDEV_CUDA_ALLOW_TF32.
  const cublasMath_t math =
      device->plugin->allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  cublasStatus_t s = blas->set_stream(handle, stream->stream);
  if (s == CUBLAS_STATUS_SUCCESS) s = blas->set_math_mode(handle, math);
  if (s != CUBLAS_STATUS_SUCCESS) {
    blas->destroy(handle);
    return g_host.fail(host, XDEV_STATUS_INTERNAL,
                       "%s: setting up the cuBLAS handle on cuda device %d: %s", kSlot,
                       device->ordinal, cublas_status_name(s));
  }
  stream->blas = handle;
  return nullptr;
}

xdev_status_t* plugin_stream_create(xdev_device_t* device, xdev_stream_t** out_stream) noexcept {
  constexpr const char* kSlot = "stream_create";
  const xdev_host_api_t* host = host_of(device);
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"device", device}, {"out_stream", out_stream}})) {
    return s;
  }
  *out_stream = nullptr;
  if (xdev_status_t* s = check_usable(host, kSlot, device->ordinal)) return s;
  auto stream = std::unique_ptr<xdev_stream_t>(new (std::nothrow) xdev_stream_t);
  if (stream == nullptr) {
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY, "%s: out of host memory", kSlot);
  }
  DeviceGuard guard(device->ordinal);
  if (guard.error() != cudaSuccess) {
    return cuda_failure(host, kSlot, "making the device current", device->ordinal,
                        guard_error(guard));
  }
  // Non-blocking: no implicit ordering with the legacy default stream that
  // the host program (or a library) may use.
  if (const cudaError_t e = cudaStreamCreateWithFlags(&stream->stream, cudaStreamNonBlocking);
      e != cudaSuccess) {
    return cuda_failure(host, kSlot, "cudaStreamCreateWithFlags", device->ordinal, e);
  }
  stream->device = device;
  if (xdev_status_t* s = create_blas_handle(stream.get())) {
    if (cudaStreamDestroy(stream->stream) != cudaSuccess) (void)cudaGetLastError();
    return s;
  }
  device->live_streams.fetch_add(1, std::memory_order_relaxed);
  *out_stream = stream.release();
  return nullptr;
}

void plugin_stream_destroy(xdev_stream_t* stream) noexcept {
  if (stream == nullptr) return;
  std::unique_ptr<xdev_stream_t> owned(stream);
  xdev_device_t* device = stream->device;
  DeviceGuard guard(device->ordinal);
  if (stream->blas != nullptr) {
    std::string unused;
    if (const Blas* blas = load_blas(&unused)) {
      if (const cublasStatus_t s = blas->destroy(stream->blas); s != CUBLAS_STATUS_SUCCESS) {
        g_host.log(device->plugin->host, XDEV_LOG_WARNING, "stream_destroy: cublasDestroy: %s",
                   cublas_status_name(s));
      }
    }
  }
  if (const cudaError_t e = cudaStreamDestroy(stream->stream); e != cudaSuccess) {
    (void)cudaGetLastError();
    g_host.log(device->plugin->host,
               is_unusable(device->ordinal) ? XDEV_LOG_DEBUG : XDEV_LOG_WARNING,
               "stream_destroy on cuda device %d: %s", device->ordinal, cudaGetErrorString(e));
  }
  device->live_streams.fetch_sub(1, std::memory_order_relaxed);
}

xdev_status_t* plugin_stream_synchronize(xdev_stream_t* stream) noexcept {
  constexpr const char* kSlot = "stream_synchronize";
  if (stream == nullptr) return g_host.null_argument(g_host.fallback(), kSlot, "stream");
  xdev_device_t* device = stream->device;
  const xdev_host_api_t* host = device->plugin->host;
  // A sticky fault cannot be cleared (plugin.h): the device stays unusable.
  if (xdev_status_t* s = check_usable(host, kSlot, device->ordinal)) return s;
  // The guard keeps the runtime from binding device 0's context to a thread
  // that has none (it would create it).
  DeviceGuard guard(device->ordinal);
  // Returns the first asynchronous error of the stream's work; a sticky one
  // marks the device (cuda_failure).
  if (const cudaError_t e = cudaStreamSynchronize(stream->stream); e != cudaSuccess) {
    return cuda_failure(host, kSlot, "waiting for the stream's work", device->ordinal, e);
  }
  return nullptr;
}

// ABI 1.3: the cudaStream_t that DLPack's __dlpack__(stream=...) expects; the
// legacy default stream (a null cudaStream_t) is 1 in that protocol, never 0.
xdev_status_t* plugin_stream_native_handle(xdev_stream_t* stream, int64_t* out_handle) noexcept {
  constexpr const char* kSlot = "stream_native_handle";
  if (stream == nullptr) return g_host.null_argument(g_host.fallback(), kSlot, "stream");
  if (out_handle == nullptr) {
    return g_host.null_argument(stream->device->plugin->host, kSlot, "out_handle");
  }
  *out_handle = stream->stream == nullptr ? 1 : static_cast<int64_t>(reinterpret_cast<intptr_t>(stream->stream));
  return nullptr;
}
// ABI 1.4 (XDEV_CAP_EVENT_TIMING): events keep CUDA's timing, so that
// event_elapsed_ms can ask cudaEventElapsedTime.
constexpr unsigned kEventFlags = cudaEventDefault;

xdev_status_t* plugin_event_create(xdev_device_t* device, xdev_event_t** out_event) noexcept {
  constexpr const char* kSlot = "event_create";
  const xdev_host_api_t* host = host_of(device);
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"device", device}, {"out_event", out_event}})) {
    return s;
  }
  *out_event = nullptr;
  if (xdev_status_t* s = check_usable(host, kSlot, device->ordinal)) return s;
  auto event = std::unique_ptr<xdev_event_t>(new (std::nothrow) xdev_event_t);
  if (event == nullptr) {
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY, "%s: out of host memory", kSlot);
  }
  DeviceGuard guard(device->ordinal);
  if (guard.error() != cudaSuccess) {
    return cuda_failure(host, kSlot, "making the device current", device->ordinal,
                        guard_error(guard));
  }
  if (const cudaError_t e = cudaEventCreateWithFlags(&event->event, kEventFlags);
      e != cudaSuccess) {
    return cuda_failure(host, kSlot, "cudaEventCreateWithFlags", device->ordinal, e);
  }
  event->device = device;
  event->ordinal = device->ordinal;
  device->live_events.fetch_add(1, std::memory_order_relaxed);
  *out_event = event.release();
  return nullptr;
}

void plugin_event_destroy(xdev_event_t* event) noexcept {
  if (event == nullptr) return;
  std::unique_ptr<xdev_event_t> owned(event);
  {
    DeviceGuard guard(event->ordinal);
    if (cudaEventDestroy(event->event) != cudaSuccess) (void)cudaGetLastError();
  }
  event->device->live_events.fetch_sub(1, std::memory_order_relaxed);
}

xdev_status_t* check_event_and_stream(const char* slot, xdev_event_t* event,
                                      xdev_stream_t* stream) noexcept {
  const xdev_host_api_t* host = event != nullptr    ? event->device->plugin->host
                                : stream != nullptr ? stream->device->plugin->host
                                                    : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, slot, {{"event", event}, {"stream", stream}})) {
    return s;
  }
  if (event->device->plugin != stream->device->plugin) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the event and the stream belong to different plugin instances", slot);
  }
  return check_usable(host, slot, stream->device->ordinal);
}

xdev_status_t* plugin_event_record(xdev_event_t* event, xdev_stream_t* stream) noexcept {
  constexpr const char* kSlot = "event_record";
  if (xdev_status_t* s = check_event_and_stream(kSlot, event, stream)) return s;
  const xdev_host_api_t* host = event->device->plugin->host;
  const int ordinal = stream->device->ordinal;
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::lock_guard lock(event->mutex);
    DeviceGuard guard(ordinal);
    if (guard.error() != cudaSuccess) {
      return cuda_failure(host, kSlot, "making the device current", ordinal, guard_error(guard));
    }
    if (event->ordinal != ordinal) {
      // CUDA records an event only on a stream of its own device.
      cudaEvent_t replacement = nullptr;
      if (const cudaError_t e = cudaEventCreateWithFlags(&replacement, kEventFlags);
          e != cudaSuccess) {
        return cuda_failure(host, kSlot, "re-creating the event for another device", ordinal, e);
      }
      if (cudaEventDestroy(event->event) != cudaSuccess) (void)cudaGetLastError();
      event->event = replacement;
      event->ordinal = ordinal;
    }
    if (const cudaError_t e = cudaEventRecord(event->event, stream->stream); e != cudaSuccess) {
      return cuda_failure(host, kSlot, "cudaEventRecord", ordinal, e);
    }
    event->recorded = true;
    return nullptr;
  });
}

// ABI 1.4: cudaEventElapsedTime (about 0.5 us resolution).
xdev_status_t* plugin_event_elapsed_ms(xdev_event_t* start, xdev_event_t* end,
                                       double* out_ms) noexcept {
  constexpr const char* kSlot = "event_elapsed_ms";
  const xdev_host_api_t* host = start != nullptr ? start->device->plugin->host : g_host.fallback();
  if (start == nullptr) return g_host.null_argument(host, kSlot, "start");
  if (end == nullptr) return g_host.null_argument(host, kSlot, "end");
  if (out_ms == nullptr) return g_host.null_argument(host, kSlot, "out_ms");
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::unique_lock lock_start(start->mutex, std::defer_lock);
    std::unique_lock lock_end(end->mutex, std::defer_lock);
    if (start == end) {
      lock_start.lock();
    } else {
      std::lock(lock_start, lock_end);
    }
    if (!start->recorded || !end->recorded) {
      return g_host.fail(host, XDEV_STATUS_FAILED_PRECONDITION,
                         "%s: the %s event was not recorded", kSlot,
                         !start->recorded ? "start" : "end");
    }
    if (start->ordinal != end->ordinal) {
      return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the events were recorded on GPUs %d and %d", kSlot, start->ordinal,
                         end->ordinal);
    }
    DeviceGuard guard(start->ordinal);
    float ms = 0;
    const cudaError_t e = cudaEventElapsedTime(&ms, start->event, end->event);
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return g_host.fail(host, XDEV_STATUS_FAILED_PRECONDITION,
                         "%s: an event has not completed", kSlot);
    }
    if (e != cudaSuccess) {
      return cuda_failure(host, kSlot, "cudaEventElapsedTime", start->ordinal, e);
    }
    *out_ms = ms;
    return nullptr;
  });
}

xdev_status_t* plugin_stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) noexcept {
  constexpr const char* kSlot = "stream_wait_event";
  if (xdev_status_t* s = check_event_and_stream(kSlot, event, stream)) return s;
  const xdev_host_api_t* host = stream->device->plugin->host;
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::lock_guard lock(event->mutex);
    DeviceGuard guard(stream->device->ordinal);
    // Works across devices: the event may belong to another GPU.
    if (const cudaError_t e = cudaStreamWaitEvent(stream->stream, event->event, 0);
        e != cudaSuccess) {
      return cuda_failure(host, kSlot, "cudaStreamWaitEvent", stream->device->ordinal, e);
    }
    return nullptr;
  });
}

xdev_status_t* plugin_event_synchronize(xdev_event_t* event) noexcept {
  constexpr const char* kSlot = "event_synchronize";
  if (event == nullptr) return g_host.null_argument(g_host.fallback(), kSlot, "event");
  const xdev_host_api_t* host = event->device->plugin->host;
  cudaEvent_t handle;
  int ordinal;
  try {
    std::lock_guard lock(event->mutex);
    handle = event->event;
    ordinal = event->ordinal;
  } catch (...) {
    return g_host.unexpected(host, kSlot);
  }
  if (xdev_status_t* s = check_usable(host, kSlot, ordinal)) return s;
  DeviceGuard guard(ordinal);
  // A never-recorded event counts as completed (CUDA agrees).
  if (const cudaError_t e = cudaEventSynchronize(handle); e != cudaSuccess) {
    return cuda_failure(host, kSlot, "cudaEventSynchronize", ordinal, e);
  }
  return nullptr;
}

xdev_status_t* plugin_event_query(xdev_event_t* event, int32_t* out_done) noexcept {
  constexpr const char* kSlot = "event_query";
  const xdev_host_api_t* host = event != nullptr ? event->device->plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, kSlot, {{"event", event}, {"out_done", out_done}})) {
    return s;
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::lock_guard lock(event->mutex);
    if (xdev_status_t* s = check_usable(host, kSlot, event->ordinal)) return s;
    DeviceGuard guard(event->ordinal);
    const cudaError_t e = cudaEventQuery(event->event);
    if (e == cudaSuccess) {
      *out_done = 1;
    } else if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();
      *out_done = 0;
    } else {
      return cuda_failure(host, kSlot, "cudaEventQuery", event->ordinal, e);
    }
    return nullptr;
  });
}

// ---------------------------------------------------------------------------
// Copies: asynchronous on the stream (cudaMemcpyAsync). From pageable host
// memory CUDA stages through its own pinned buffers; the core keeps the host
// buffer alive until the stream passed the copy.

xdev_status_t* check_copy(const char* slot, xdev_stream_t* stream, void* dst, const void* src,
                          uint64_t size, bool check_overlap) noexcept {
  const xdev_host_api_t* host =
      stream != nullptr ? stream->device->plugin->host : g_host.fallback();
  if (stream == nullptr) return g_host.null_argument(host, slot, "stream");
  if (dst == nullptr || src == nullptr) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: %s is NULL for a copy of %" PRIu64 " bytes", slot,
                       dst == nullptr ? "dst" : "src", size);
  }
  if (size > SIZE_MAX) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: size %" PRIu64 " bytes is larger than the address space", slot, size);
  }
  if (check_overlap) {
    const auto to = reinterpret_cast<uintptr_t>(dst);
    const auto from = reinterpret_cast<uintptr_t>(src);
    const uintptr_t distance = to > from ? to - from : from - to;
    if (distance < size) {
      return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the %" PRIu64 "-byte ranges at dst %p and src %p overlap", slot, size,
                         dst, src);
    }
  }
  return nullptr;
}

xdev_status_t* copy(const char* slot, xdev_stream_t* stream, void* dst, const void* src,
                    uint64_t size, cudaMemcpyKind kind) noexcept {
  if (stream != nullptr && size == 0) return nullptr;
  if (xdev_status_t* s =
          check_copy(slot, stream, dst, src, size, kind == cudaMemcpyDeviceToDevice)) {
    return s;
  }
  xdev_device_t* device = stream->device;
  if (xdev_status_t* s = check_usable(device->plugin->host, slot, device->ordinal)) return s;
  DeviceGuard guard(device->ordinal);
  if (const cudaError_t e =
          cudaMemcpyAsync(dst, src, static_cast<size_t>(size), kind, stream->stream);
      e != cudaSuccess) {
    char what[96];
    std::snprintf(what, sizeof(what), "cudaMemcpyAsync of %" PRIu64 " bytes", size);
    return cuda_failure(device->plugin->host, slot, what, device->ordinal, e);
  }
  return nullptr;
}

xdev_status_t* plugin_copy_host_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                          uint64_t size) noexcept {
  return copy("copy_host_to_device", stream, dst, src, size, cudaMemcpyHostToDevice);
}

xdev_status_t* plugin_copy_device_to_host(xdev_stream_t* stream, void* dst, const void* src,
                                          uint64_t size) noexcept {
  return copy("copy_device_to_host", stream, dst, src, size, cudaMemcpyDeviceToHost);
}

xdev_status_t* plugin_copy_device_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                            uint64_t size) noexcept {
  return copy("copy_device_to_device", stream, dst, src, size, cudaMemcpyDeviceToDevice);
}

xdev_status_t* plugin_copy_peer(xdev_stream_t* stream, void* dst, xdev_device_t* src_device,
                                const void* src, uint64_t size) noexcept {
  constexpr const char* kSlot = "copy_peer";
  const xdev_host_api_t* host =
      stream != nullptr ? stream->device->plugin->host : g_host.fallback();
  if (src_device == nullptr) return g_host.null_argument(host, kSlot, "src_device");
  if (stream != nullptr && size == 0) return nullptr;
  if (xdev_status_t* s = check_copy(kSlot, stream, dst, src, size, false)) return s;
  xdev_device_t* device = stream->device;
  if (src_device->plugin != device->plugin) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the source device belongs to another plugin instance", kSlot);
  }
  const int dst_ordinal = device->ordinal;
  const int src_ordinal = src_device->ordinal;
  if (xdev_status_t* s = check_usable(host, kSlot, dst_ordinal)) return s;
  if (xdev_status_t* s = check_usable(host, kSlot, src_ordinal)) return s;
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    DeviceGuard guard(dst_ordinal);
    if (guard.error() != cudaSuccess) {
      return cuda_failure(host, kSlot, "making the device current", dst_ordinal,
                          guard_error(guard));
    }
    if (src_ordinal == dst_ordinal) {
      if (xdev_status_t* s = check_copy(kSlot, stream, dst, src, size, true)) return s;
      if (const cudaError_t e = cudaMemcpyAsync(dst, src, static_cast<size_t>(size),
                                                cudaMemcpyDeviceToDevice, stream->stream);
          e != cudaSuccess) {
        return cuda_failure(host, kSlot, "cudaMemcpyAsync (same device)", dst_ordinal, e);
      }
      return nullptr;
    }
    // With peer access the copy goes over NVLink/PCIe directly; without, the
    // driver stages it through host memory itself (pinned, pipelined), which
    // beats the core's pageable staging buffer. So this never answers
    // UNIMPLEMENTED.
    if (device->info->can_access_peer[static_cast<size_t>(src_ordinal)]) {
      std::lock_guard lock(device->peer_mutex);
      if (!device->peer_enabled[static_cast<size_t>(src_ordinal)]) {
        // Maps the source device's memory into the destination's context.
        const cudaError_t e = cudaDeviceEnablePeerAccess(src_ordinal, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) {
          // Still correct without it: cudaMemcpyPeerAsync stages instead.
          g_host.log(
              host, XDEV_LOG_INFO,
              "%s: enabling peer access from cuda device %d to %d failed (%s); copies between "
              "them are staged by the driver",
              kSlot, dst_ordinal, src_ordinal, cudaGetErrorString(e));
        }
        (void)cudaGetLastError();
        device->peer_enabled[static_cast<size_t>(src_ordinal)] = true;
      }
    }
    if (const cudaError_t e = cudaMemcpyPeerAsync(dst, dst_ordinal, src, src_ordinal,
                                                  static_cast<size_t>(size), stream->stream);
        e != cudaSuccess) {
      char what[96];
      std::snprintf(what, sizeof(what), "cudaMemcpyPeerAsync of %" PRIu64 " bytes from device %d",
                    size, src_ordinal);
      return cuda_failure(host, kSlot, what, dst_ordinal, e);
    }
    return nullptr;
  });
}

// ---------------------------------------------------------------------------
// Kernels (ops.cpp)

xdev_status_t* plugin_kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out_kernels,
                              uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "kernels";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (plugin == nullptr) return g_host.null_argument(host, kSlot, "plugin");
  uint32_t count = 0;
  const xdev_kernel_info_t* const* kernels = kernel_list(&count);
  return g_host.hand_out(host, kSlot, "out_kernels", kernels, count, out_kernels, out_count);
}

#if XDEV_CUDA_NCCL
// ---------------------------------------------------------------------------
// ABI 1.7: device collectives with NCCL (built when meson found NCCL:
// plugins/cuda/README.md). Communicators are non-blocking (config.blocking
// = 0), so that joining can time out and a lost peer can be aborted.

ncclComm_t nccl_of(const xdev_communicator_t* comm) { return static_cast<ncclComm_t>(comm->nccl); }

xdev_status_t* nccl_fail(const xdev_host_api_t* host, const char* slot, ncclResult_t r,
                         ncclComm_t comm) {
  const char* last = comm != nullptr ? ncclGetLastError(comm) : nullptr;
  return g_host.fail(host, r == ncclInvalidArgument || r == ncclInvalidUsage
                               ? XDEV_STATUS_INVALID_ARGUMENT
                               : XDEV_STATUS_UNAVAILABLE,
                     "%s: NCCL: %s%s%s", slot, ncclGetErrorString(r),
                     last != nullptr && *last != '\0' ? ": " : "", last != nullptr ? last : "");
}

// Waits while a non-blocking communicator is busy with the last call
// (ncclInProgress); its final state.
ncclResult_t nccl_settle(ncclComm_t comm, std::chrono::steady_clock::time_point until) {
  ncclResult_t state = ncclInProgress;
  while (ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress) {
    if (std::chrono::steady_clock::now() > until) return ncclInProgress;
    std::this_thread::yield();
  }
  return state;
}

xdev_status_t* plugin_collective_id(xdev_plugin_t* plugin, uint8_t* id, size_t capacity,
                                    size_t* out_size) noexcept {
  constexpr const char* kSlot = "collective_id";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"plugin", plugin}, {"id", id}, {"out_size", out_size}})) {
    return s;
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    if (capacity < sizeof(ncclUniqueId)) {
      return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: %zu bytes of room, %zu needed",
                         kSlot, capacity, sizeof(ncclUniqueId));
    }
    ncclUniqueId unique;
    if (ncclResult_t r = ncclGetUniqueId(&unique); r != ncclSuccess) {
      return nccl_fail(host, kSlot, r, nullptr);
    }
    std::memcpy(id, &unique, sizeof unique);
    *out_size = sizeof unique;
    return nullptr;
  });
}

xdev_status_t* plugin_communicator_create(xdev_plugin_t* plugin, const xdev_collective_init_t* init,
                                          xdev_device_t* const* devices, const int32_t* ranks,
                                          int32_t count, xdev_communicator_t** out_comms) noexcept {
  constexpr const char* kSlot = "communicator_create";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, kSlot,
                                        {{"plugin", plugin},
                                         {"init", init},
                                         {"devices", devices},
                                         {"ranks", ranks},
                                         {"out_comms", out_comms}})) {
    return s;
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    if (!XDEV_HAS_FIELD(init, xdev_collective_init_t, timeout_ms) ||
        init->id_size != sizeof(ncclUniqueId) || init->id == nullptr || count < 1) {
      return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: an id of %zu bytes (NCCL's has %zu), %d devices", kSlot,
                         init->id_size, sizeof(ncclUniqueId), static_cast<int>(count));
    }
    ncclUniqueId unique;
    std::memcpy(&unique, init->id, sizeof unique);
    std::vector<ncclComm_t> comms(static_cast<size_t>(count), nullptr);
    int previous = 0;
    (void)cudaGetDevice(&previous);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t r = ncclGroupStart();
    for (int32_t i = 0; i < count && r == ncclSuccess; ++i) {
      if (devices[i] == nullptr || devices[i]->plugin != plugin) {
        r = ncclInvalidArgument;
        break;
      }
      (void)cudaSetDevice(devices[i]->ordinal);
      r = ncclCommInitRankConfig(&comms[i], init->nranks, unique, ranks[i], &config);
      if (r == ncclInProgress) r = ncclSuccess;
    }
    ncclResult_t end = ncclGroupEnd();
    (void)cudaSetDevice(previous);
    if (r == ncclSuccess && end != ncclSuccess && end != ncclInProgress) r = end;
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(init->timeout_ms == 0 ? 60000 : init->timeout_ms);
    for (int32_t i = 0; i < count && r == ncclSuccess; ++i) {
      r = comms[i] != nullptr ? nccl_settle(comms[i], until) : ncclInternalError;
    }
    if (r != ncclSuccess) {
      xdev_status_t* status =
          r == ncclInProgress
              ? g_host.fail(host, XDEV_STATUS_UNAVAILABLE,
                            "%s: not every one of %d ranks joined within %llu ms", kSlot,
                            static_cast<int>(init->nranks),
                            static_cast<unsigned long long>(init->timeout_ms))
              : nccl_fail(host, kSlot, r, nullptr);
      for (ncclComm_t c : comms) {
        if (c != nullptr) (void)ncclCommAbort(c);
      }
      return status;
    }
    for (int32_t i = 0; i < count; ++i) {
      out_comms[i] = new xdev_communicator_t{devices[i], comms[i], ranks[i]};
    }
    return nullptr;
  });
}

void plugin_communicator_destroy(xdev_communicator_t* comm) noexcept {
  if (comm == nullptr) return;
  (void)ncclCommDestroy(nccl_of(comm));
  delete comm;
}

void plugin_communicator_abort(xdev_communicator_t* comm) noexcept {
  if (comm == nullptr) return;
  (void)ncclCommAbort(nccl_of(comm));
  delete comm;
}

xdev_status_t* plugin_communicator_poll(xdev_communicator_t* comm) noexcept {
  constexpr const char* kSlot = "communicator_poll";
  const xdev_host_api_t* host = comm != nullptr ? host_of(comm->device) : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, kSlot, {{"comm", comm}})) return s;
  ncclResult_t state = ncclSuccess;
  ncclResult_t r = ncclCommGetAsyncError(nccl_of(comm), &state);
  if (r != ncclSuccess) return nccl_fail(host, kSlot, r, nccl_of(comm));
  if (state != ncclSuccess && state != ncclInProgress) {
    return nccl_fail(host, kSlot, state, nccl_of(comm));
  }
  return nullptr;
}

// The NCCL type of an xdev dtype; reductions refuse bool.
bool nccl_type(xdev_dtype_t dtype, bool reduces, ncclDataType_t* out) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: *out = ncclFloat32; return true;
    case XDEV_DTYPE_FLOAT64: *out = ncclFloat64; return true;
    case XDEV_DTYPE_INT32: *out = ncclInt32; return true;
    case XDEV_DTYPE_INT64: *out = ncclInt64; return true;
    case XDEV_DTYPE_FLOAT16: *out = ncclFloat16; return true;
    case XDEV_DTYPE_BFLOAT16: *out = ncclBfloat16; return true;
    case XDEV_DTYPE_UINT8: *out = ncclUint8; return true;
    case XDEV_DTYPE_INT8: *out = ncclInt8; return true;
    case XDEV_DTYPE_BOOL: *out = ncclUint8; return !reduces;
    default: return false;
  }
}

xdev_status_t* plugin_collective(xdev_communicator_t* const* comms, xdev_stream_t* const* streams,
                                 const xdev_collective_call_t* calls, int32_t count) noexcept {
  constexpr const char* kSlot = "collective";
  const xdev_host_api_t* host = comms != nullptr && count > 0 && comms[0] != nullptr
                                    ? host_of(comms[0]->device)
                                    : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, kSlot,
                                        {{"comms", comms}, {"streams", streams}, {"calls", calls}})) {
    return s;
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    // Everything is checked before NCCL sees any of it.
    std::vector<ncclDataType_t> types(static_cast<size_t>(count));
    for (int32_t i = 0; i < count; ++i) {
      const xdev_collective_call_t& c = calls[i];
      const bool reduces =
          c.kind == XDEV_COLLECTIVE_ALL_REDUCE || c.kind == XDEV_COLLECTIVE_REDUCE_SCATTER;
      if (comms[i] == nullptr || streams[i] == nullptr || streams[i]->device != comms[i]->device ||
          !XDEV_HAS_FIELD(&c, xdev_collective_call_t, count) ||
          c.kind < XDEV_COLLECTIVE_ALL_REDUCE || c.kind > XDEV_COLLECTIVE_REDUCE_SCATTER ||
          (reduces && (c.op < XDEV_REDUCE_SUM || c.op > XDEV_REDUCE_MIN)) ||
          !nccl_type(c.dtype, reduces, &types[i])) {
        return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: call %d (kind %d, op %d, dtype %d) is not one NCCL runs here",
                           kSlot, static_cast<int>(i), static_cast<int>(c.kind),
                           static_cast<int>(c.op), static_cast<int>(c.dtype));
      }
    }
    ncclResult_t r = ncclGroupStart();
    for (int32_t i = 0; i < count && (r == ncclSuccess || r == ncclInProgress); ++i) {
      const xdev_collective_call_t& c = calls[i];
      const void* send = static_cast<const char*>(c.send_allocation) + c.send_offset;
      void* recv = static_cast<char*>(c.recv_allocation) + c.recv_offset;
      const ncclRedOp_t op = c.op == XDEV_REDUCE_MAX   ? ncclMax
                             : c.op == XDEV_REDUCE_MIN ? ncclMin
                                                       : ncclSum;
      ncclComm_t comm = nccl_of(comms[i]);
      cudaStream_t stream = streams[i]->stream;
      switch (c.kind) {
        case XDEV_COLLECTIVE_ALL_REDUCE:
          r = ncclAllReduce(send, recv, c.count, types[i], op, comm, stream);
          break;
        case XDEV_COLLECTIVE_ALL_GATHER:
          r = ncclAllGather(send, recv, c.count, types[i], comm, stream);
          break;
        case XDEV_COLLECTIVE_BROADCAST:
          r = ncclBroadcast(send, recv, c.count, types[i], c.root, comm, stream);
          break;
        default:
          r = ncclReduceScatter(send, recv, c.count, types[i], op, comm, stream);
          break;
      }
    }
    const ncclResult_t end = ncclGroupEnd();
    if (r == ncclSuccess || r == ncclInProgress) r = end;
    // Non-blocking communicators: the enqueue finishes in the background;
    // settle it here (it does not wait for the other ranks' data).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int32_t i = 0; i < count && r == ncclInProgress; ++i) {
      r = nccl_settle(nccl_of(comms[i]), until);
      if (r == ncclSuccess && i + 1 < count) r = ncclInProgress;
    }
    if (r != ncclSuccess) return nccl_fail(host, kSlot, r, nccl_of(comms[0]));
    return nullptr;
  });
}
#endif  // XDEV_CUDA_NCCL

// ---------------------------------------------------------------------------
// The table

constexpr xdev_plugin_api_t kPluginApi = {
    .struct_size = XDEV_PLUGIN_API_STRUCT_SIZE,
    .ext = nullptr,
    .abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
    .name = "cuda",
    .plugin_version = XDEV_CUDA_PLUGIN_VERSION,
    .capabilities = XDEV_CAP_HOST_MEMORY | XDEV_CAP_PEER_COPY | XDEV_CAP_EVENTS |
                    XDEV_CAP_EVENT_TIMING | (XDEV_CUDA_NCCL ? XDEV_CAP_COLLECTIVES : 0),
    .initialize = &plugin_initialize,
    .shutdown = &plugin_shutdown,
    .describe_status = &plugin_describe_status,
    .device_types = &plugin_device_types,
    .device_count = &plugin_device_count,
    .device_get_properties = &plugin_device_get_properties,
    .device_open = &plugin_device_open,
    .device_close = &plugin_device_close,
    .memory_allocate = &plugin_memory_allocate,
    .memory_free = &plugin_memory_free,
    .memory_query = &plugin_memory_query,
    .host_memory_allocate = &plugin_host_memory_allocate,
    .host_memory_free = &plugin_host_memory_free,
    .stream_create = &plugin_stream_create,
    .stream_destroy = &plugin_stream_destroy,
    .stream_synchronize = &plugin_stream_synchronize,
    .event_create = &plugin_event_create,
    .event_destroy = &plugin_event_destroy,
    .event_record = &plugin_event_record,
    .stream_wait_event = &plugin_stream_wait_event,
    .event_synchronize = &plugin_event_synchronize,
    .event_query = &plugin_event_query,
    .copy_host_to_device = &plugin_copy_host_to_device,
    .copy_device_to_host = &plugin_copy_device_to_host,
    .copy_device_to_device = &plugin_copy_device_to_device,
    .copy_peer = &plugin_copy_peer,
    .kernels = &plugin_kernels,
    .stream_native_handle = &plugin_stream_native_handle,
    .event_elapsed_ms = &plugin_event_elapsed_ms,  // ABI 1.4
#if XDEV_CUDA_NCCL
    .device_kernels = nullptr,
    .collective_id = &plugin_collective_id,  // ABI 1.7
    .communicator_create = &plugin_communicator_create,
    .communicator_destroy = &plugin_communicator_destroy,
    .communicator_abort = &plugin_communicator_abort,
    .communicator_poll = &plugin_communicator_poll,
    .collective = &plugin_collective,
#endif
};

}  // namespace
}  // namespace xdev::cuda

// The implementation's entry point, called by the shim (shim.cpp) with the
// arguments of xdev_plugin_query. Cheap: reads and writes the arguments,
// makes no CUDA call. Named differently from XDEV_PLUGIN_ENTRY_SYMBOL so
// that the core never loads this library as a plugin of its own.
extern "C" XDEV_PLUGIN_EXPORT xdev_status_t* xdev_cuda_impl_query(xdev_plugin_query_args_t* args) {
  return xdev::cuda::g_host.answer_query(args, xdev::cuda::kPluginApi);
}
